/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A container's environment (upstream kubelet_pods.go
 * makeEnvironmentVariables, podFieldSelectorRuntimeValue,
 * containerResourceRuntimeValue).
 *
 * Differences, by necessity of a kubelet without an API server here:
 * - configMap / secret sources cannot be read: a required one fails the
 *   container with upstream's standalone message ("couldn't get configMap
 *   ns/name, no kubeClient defined"); an optional one is skipped (upstream
 *   fails even an optional one when it has no kubeClient).
 * - status.hostIP(s) is "" (the node's address is not known to the builder).
 * - resourceFieldRef limits default to the node's capacity (online CPUs,
 *   MemTotal, the size of the root dir's filesystem) where upstream uses the
 *   node's allocatable (capacity minus reservations, unknown here).
 * - upstream returns the variables in Go map order (random); here envFrom
 *   keys come first in their order, then env in declaration order, a
 *   repeated name keeping its first position with the last value.
 * - no service link variables (upstream has none without an API server).
 */
#include "kuberuntime/builders.h"
#include "kuberuntime/builders_internal.h"

#include "api/decode.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

/* Sets name=value: replaces the value of an existing name in place. */
static void env_set(struct kv_list *env, const char *name, const char *value)
{
        for (size_t i = 0; i < env->n; i++) {
                if (strcmp(env->items[i].key, name) == 0) {
                        free(env->items[i].value);
                        env->items[i].value = xstrdup(value);
                        return;
                }
        }
        kv_list_add(env, name, value);
}

/* ---- fieldRef ---- */

struct sbuf {
        char *p;
        size_t len, cap;
};

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
        if (b->len + n + 1 > b->cap) {
                b->cap = (b->len + n + 1) * 2 + 32;
                b->p = xrealloc(b->p, b->cap);
        }
        memcpy(b->p + b->len, s, n);
        b->len += n;
        b->p[b->len] = '\0';
}

/* Go's strconv.Quote for the characters a label or annotation holds. */
static void sb_quote(struct sbuf *b, const char *s)
{
        sb_add(b, "\"", 1);
        for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
                char esc[8];
                const char *e = NULL;
                switch (*p) {
                case '"':
                        e = "\\\"";
                        break;
                case '\\':
                        e = "\\\\";
                        break;
                case '\a':
                        e = "\\a";
                        break;
                case '\b':
                        e = "\\b";
                        break;
                case '\f':
                        e = "\\f";
                        break;
                case '\n':
                        e = "\\n";
                        break;
                case '\r':
                        e = "\\r";
                        break;
                case '\t':
                        e = "\\t";
                        break;
                case '\v':
                        e = "\\v";
                        break;
                default:
                        if (*p < 0x20 || *p == 0x7f) {
                                snprintf(esc, sizeof(esc), "\\x%02x", *p);
                                e = esc;
                        }
                }
                if (e != NULL)
                        sb_add(b, e, strlen(e));
                else
                        sb_add(b, (const char *)p, 1);
        }
        sb_add(b, "\"", 1);
}

static int cmp_kv_key(const void *a, const void *b)
{
        return strcmp((*(const struct kv *const *)a)->key, (*(const struct kv *const *)b)->key);
}

/* upstream fieldpath.FormatMap: key="value" lines in key order. */
static char *format_map(const struct kv_list *l)
{
        struct sbuf b = {0};
        sb_add(&b, "", 0);
        const struct kv **sorted = xcalloc(l->n + 1, sizeof(*sorted));
        for (size_t i = 0; i < l->n; i++)
                sorted[i] = &l->items[i];
        qsort(sorted, l->n, sizeof(*sorted), cmp_kv_key);
        for (size_t i = 0; i < l->n; i++) {
                if (i)
                        sb_add(&b, "\n", 1);
                sb_add(&b, sorted[i]->key, strlen(sorted[i]->key));
                sb_add(&b, "=", 1);
                sb_quote(&b, sorted[i]->value ? sorted[i]->value : "");
        }
        free(sorted);
        return b.p;
}

/* "metadata.labels['key']" -> path "metadata.labels", subscript "key"
 * (upstream SplitMaybeSubscriptedPath).  New strings. */
static bool split_subscript(const char *fp, char **path, char **sub)
{
        size_t n = strlen(fp);
        if (n < 2 || strcmp(fp + n - 2, "']") != 0)
                return false;
        const char *open = strstr(fp, "['");
        if (open == NULL || open == fp || open + 2 > fp + n - 2)
                return false;
        *path = xstrndup(fp, (size_t)(open - fp));
        *sub = xstrndup(open + 2, (size_t)(fp + n - 2 - (open + 2)));
        return true;
}

static int field_ref_value(const struct kuberuntime_options *opts, const struct pod *pod,
                           const char *pod_ip, const char *fp, char **out, ck_error_t *err)
{
        const char *v = NULL;
        cleanup_free char *path = NULL;
        cleanup_free char *sub = NULL;
        if (split_subscript(fp, &path, &sub)) {
                if (strcmp(path, "metadata.annotations") == 0)
                        v = kv_list_get(&pod->annotations, sub);
                else if (strcmp(path, "metadata.labels") == 0)
                        v = kv_list_get(&pod->labels, sub);
                else
                        return ck_error_make(err, 0, "fieldPath \"%s\" does not support subscript",
                                             fp);
                *out = xstrdup(v ? v : "");
                return 0;
        }
        if (strcmp(fp, "metadata.name") == 0)
                v = pod->name;
        else if (strcmp(fp, "metadata.namespace") == 0)
                v = pod->namespace;
        else if (strcmp(fp, "metadata.uid") == 0)
                v = pod->uid;
        else if (strcmp(fp, "spec.nodeName") == 0)
                v = pod->node_name && *pod->node_name ? pod->node_name : opts->node_name;
        else if (strcmp(fp, "spec.serviceAccountName") == 0)
                v = pod->service_account_name;
        else if (strcmp(fp, "status.podIP") == 0 || strcmp(fp, "status.podIPs") == 0)
                v = pod_ip;
        else if (strcmp(fp, "status.hostIP") == 0 || strcmp(fp, "status.hostIPs") == 0)
                v = ""; /* unknown to the builder */
        else if (strcmp(fp, "metadata.labels") == 0) {
                *out = format_map(&pod->labels);
                return 0;
        } else if (strcmp(fp, "metadata.annotations") == 0) {
                *out = format_map(&pod->annotations);
                return 0;
        } else
                return ck_error_make(err, 0, "unsupported fieldPath: %s", fp);
        *out = xstrdup(v ? v : "");
        return 0;
}

/* ---- resourceFieldRef ---- */

static int64_t ephemeral_storage_capacity(const struct kuberuntime_options *opts)
{
        struct statvfs st;
        if (statvfs(opts->root_dir ? opts->root_dir : "/", &st) != 0)
                return 0;
        return (int64_t)st.f_blocks * (int64_t)st.f_frsize;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
        if (b <= 0)
                b = 1;
        if (a <= 0)
                return a / b;
        return a / b + (a % b != 0);
}

static int resource_ref_value(const struct kuberuntime_options *opts, const struct pod *pod,
                              const struct container *self, const struct env_var *e, char **out,
                              ck_error_t *err)
{
        const struct container *c = self;
        if (e->container_name != NULL && *e->container_name != '\0') {
                c = NULL;
                for (size_t i = 0; i < pod->n_containers && !c; i++)
                        if (strcmp(pod->containers[i].name, e->container_name) == 0)
                                c = &pod->containers[i];
                for (size_t i = 0; i < pod->n_init_containers && !c; i++)
                        if (strcmp(pod->init_containers[i].name, e->container_name) == 0)
                                c = &pod->init_containers[i];
                if (c == NULL)
                        return ck_error_make(err, 0, "container %s not found", e->container_name);
        }
        const char *res = e->resource ? e->resource : "";
        bool cpu = false;
        int64_t value;
        const struct resource_list *lim = &c->resources.limits, *req = &c->resources.requests;
        if (strcmp(res, "limits.cpu") == 0) {
                cpu = true;
                value = lim->has_cpu && lim->cpu_milli != 0
                            ? lim->cpu_milli
                            : kuberuntime__node_cpu_capacity_milli();
        } else if (strcmp(res, "limits.memory") == 0) {
                value = lim->has_memory && lim->memory != 0 ? lim->memory
                                                            : kuberuntime__node_memory_capacity();
        } else if (strcmp(res, "limits.ephemeral-storage") == 0) {
                value = lim->has_ephemeral_storage && lim->ephemeral_storage != 0
                            ? lim->ephemeral_storage
                            : ephemeral_storage_capacity(opts);
        } else if (strcmp(res, "requests.cpu") == 0) {
                cpu = true;
                value = req->has_cpu ? req->cpu_milli : 0;
        } else if (strcmp(res, "requests.memory") == 0) {
                value = req->has_memory ? req->memory : 0;
        } else if (strcmp(res, "requests.ephemeral-storage") == 0) {
                value = req->has_ephemeral_storage ? req->ephemeral_storage : 0;
        } else {
                return ck_error_make(err, 0, "unsupported container resource : %s", res);
        }

        /* a zero or absent divisor means 1 */
        int64_t divisor = cpu ? 1000 : 1;
        if (e->divisor != NULL && *e->divisor != '\0') {
                int64_t d;
                if (api_parse_quantity(e->divisor, cpu, &d, err) < 0)
                        return ck_error_wrap(err, "divisor of %s", res);
                if (d != 0)
                        divisor = d;
        }
        *out = xasprintf("%" PRId64, ceil_div(value, divisor));
        return 0;
}

/* ---- the environment ---- */

static int standalone_ref_error(const struct pod *pod, bool secret, const char *name,
                                ck_error_t *err)
{
        return ck_error_make(err, 0, "couldn't get %s %s/%s, no kubeClient defined",
                             secret ? "secret" : "configMap", pod->namespace, name ? name : "");
}

int kuberuntime__container_env(const struct kuberuntime_options *opts, const struct pod *pod,
                               const struct container *c, const char *pod_ip, struct kv_list *env,
                               ck_error_t *err)
{
        struct kv_list out = {0};

        for (size_t i = 0; i < c->n_env_from; i++) {
                const struct env_from_source *f = &c->env_from[i];
                if (f->optional)
                        continue;
                standalone_ref_error(pod, f->is_secret, f->name, err);
                goto fail;
        }

        for (size_t i = 0; i < c->n_env; i++) {
                const struct env_var *e = &c->env[i];
                char *value = NULL;
                switch (e->kind) {
                case ENV_VALUE:
                        value = e->value && *e->value ? kuberuntime_expand(e->value, &out)
                                                      : xstrdup("");
                        break;
                case ENV_FIELD_REF:
                        if (field_ref_value(opts, pod, pod_ip, e->field_path ? e->field_path : "",
                                            &value, err) < 0)
                                goto fail_var;
                        break;
                case ENV_RESOURCE_REF:
                        if (resource_ref_value(opts, pod, c, e, &value, err) < 0)
                                goto fail_var;
                        break;
                case ENV_CONFIG_MAP_KEY:
                case ENV_SECRET_KEY:
                        if (e->optional)
                                continue;
                        standalone_ref_error(pod, e->kind == ENV_SECRET_KEY, e->ref_name, err);
                        goto fail;
                }
                env_set(&out, e->name, value);
                free(value);
                continue;
        fail_var:
                ck_error_wrap(err, "env %s", e->name);
                goto fail;
        }
        *env = out;
        return 0;
fail:
        kv_list_release(&out);
        return -1;
}
