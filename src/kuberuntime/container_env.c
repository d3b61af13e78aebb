/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A container's environment (upstream kubelet_pods.go
 * makeEnvironmentVariables, podFieldSelectorRuntimeValue,
 * containerResourceRuntimeValue).
 *
 * configMaps and secrets (envFrom, valueFrom.configMapKeyRef /
 * secretKeyRef) are read through `struct kube_objects`, each object once per
 * container; without one (standalone) a required reference fails with
 * upstream's "couldn't get configMap ns/name, no kubeClient defined" and an
 * optional one is skipped (upstream fails even an optional one).
 *
 * Differences from upstream:
 * - status.hostIP(s) is the node's InternalIP (opts->node_ip; "" when unknown).
 * - resourceFieldRef limits default to the node's capacity (online CPUs,
 *   MemTotal, the size of the root dir's filesystem) where upstream uses the
 *   node's allocatable (capacity minus reservations, unknown here).
 * - upstream returns the variables in Go map order (random); here the
 *   service variables come first, then envFrom keys in their order, then
 *   env in declaration order, a repeated name keeping its first position
 *   with the last value (so envFrom and env override service variables, and
 *   $(VAR) finds a declared variable before a service one, as upstream's
 *   MappingFuncFor(tmpEnv, serviceEnv)).
 *
 * Service variables (src/envvars) come from kube->list_services: none
 * without it (standalone, as upstream without a service lister); a pod from
 * the apiserver waits, with upstream's error, until the Services have been
 * listed once, so that no container starts without KUBERNETES_SERVICE_HOST.
 */
#include "kuberuntime/builders.h"
#include "kuberuntime/builders_internal.h"

#include "envvars/envvars.h"
#include "expansion/expansion.h"
#include "util/cleanup.h"
#include "util/envfile.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "volume/downward.h"
#include "volume/object_data.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

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

/* ---- fieldRef and resourceFieldRef ---- */

static int field_ref_value(const struct kuberuntime_options *opts, const struct pod *pod,
                           const char *pod_ip, const char *fp, char **out, ck_error_t *err)
{
        const char *v = NULL;
        if (strcmp(fp, "spec.nodeName") == 0)
                v = pod->node_name && *pod->node_name ? pod->node_name : opts->node_name;
        else if (strcmp(fp, "spec.serviceAccountName") == 0)
                v = pod->service_account_name;
        else if (strcmp(fp, "status.podIP") == 0 || strcmp(fp, "status.podIPs") == 0)
                v = pod_ip; /* one IP: podIPs joined with "," is the same */
        else if (strcmp(fp, "status.hostIP") == 0 || strcmp(fp, "status.hostIPs") == 0)
                v = opts->node_ip; /* NULL (standalone): "" */
        else
                return volume_pod_field_value(pod, fp, out, err);
        *out = xstrdup(v ? v : "");
        return 0;
}

static int resource_ref_value(const struct kuberuntime_options *opts, const struct pod *pod,
                              const struct container *self, const struct env_var *e, char **out,
                              ck_error_t *err)
{
        struct volume_node_resources node = {
            .cpu_milli = kuberuntime__node_cpu_capacity_milli(),
            .memory = kuberuntime__node_memory_capacity(),
        };
        struct statvfs st;
        if (statvfs(opts->root_dir ? opts->root_dir : "/", &st) == 0)
                node.ephemeral_storage = (int64_t)st.f_blocks * (int64_t)st.f_frsize;
        return volume_container_resource_value(pod, self, e->container_name, e->resource,
                                               e->divisor, &node, out, err);
}

/* ---- configMaps and secrets ---- */

/* The objects one container's environment read (upstream's configMaps and
 * secrets maps): each fetched once. */
struct env_objects {
        struct env_object {
                bool secret;
                char *name;
                bool found;
                struct volume_object_data data;
        } * items;
        size_t n;
};

static void env_objects_release(struct env_objects *o)
{
        for (size_t i = 0; i < o->n; i++) {
                free(o->items[i].name);
                volume_object_data_release(&o->items[i].data);
        }
        free(o->items);
}

/* The object; NULL (and 0) when it does not exist and optional is true. */
static int env_object(const struct kube_objects *kube, const struct pod *pod,
                      struct env_objects *cache, bool secret, const char *name, bool optional,
                      const struct env_object **out, ck_error_t *err)
{
        name = name ? name : "";
        if (kube == NULL && optional) {
                /* standalone: skipped (upstream fails even an optional one) */
                *out = NULL;
                return 0;
        }
        struct env_object *o = NULL;
        for (size_t i = 0; i < cache->n && o == NULL; i++)
                if (cache->items[i].secret == secret && strcmp(cache->items[i].name, name) == 0)
                        o = &cache->items[i];
        if (o == NULL) {
                struct volume_object_data data;
                bool found = false;
                if (volume_object_get(kube,
                                      secret ? VOLUME_OBJECT_SECRET : VOLUME_OBJECT_CONFIG_MAP,
                                      pod->namespace, name, pod->uid, &data, &found, err) < 0)
                        return -1;
                cache->items = xrealloc(cache->items, (cache->n + 1) * sizeof(*cache->items));
                o = &cache->items[cache->n++];
                *o = (struct env_object){
                    .secret = secret, .name = xstrdup(name), .found = found, .data = data};
        }
        if (!o->found) {
                if (optional) {
                        *out = NULL;
                        return 0;
                }
                return volume_object_not_found(
                    secret ? VOLUME_OBJECT_SECRET : VOLUME_OBJECT_CONFIG_MAP, name, err);
        }
        *out = o;
        return 0;
}

/* upstream: configMap Data only (not binaryData), secret Data. */
static const struct volume_object_entry *env_entry(const struct env_object *o, const char *key)
{
        const struct volume_object_entry *e = volume_object_find(&o->data, key);
        return e != NULL && !e->binary ? e : NULL;
}

static int env_from(const struct kube_objects *kube, const struct pod *pod,
                    const struct env_from_source *f, struct env_objects *cache, struct kv_list *out,
                    ck_error_t *err)
{
        const struct env_object *o = NULL;
        if (env_object(kube, pod, cache, f->is_secret, f->name, f->optional, &o, err) < 0)
                return -1;
        if (o == NULL)
                return 0;
        for (size_t k = 0; k < o->data.n; k++) {
                const struct volume_object_entry *e = &o->data.items[k];
                if (e->binary)
                        continue;
                /* 1.35 (RelaxedEnvironmentVariableValidation): every key, prefixed */
                cleanup_free char *name = xasprintf("%s%s", f->prefix ? f->prefix : "", e->key);
                env_set(out, name, e->value);
        }
        return 0;
}

/* valueFrom.configMapKeyRef / secretKeyRef: *value NULL when skipped. */
static int key_ref_value(const struct kube_objects *kube, const struct pod *pod,
                         const struct env_var *ev, struct env_objects *cache, char **value,
                         ck_error_t *err)
{
        bool secret = ev->kind == ENV_SECRET_KEY;
        const char *name = ev->ref_name ? ev->ref_name : "";
        const char *key = ev->ref_key ? ev->ref_key : "";
        const struct env_object *o = NULL;
        *value = NULL;
        if (env_object(kube, pod, cache, secret, name, ev->optional, &o, err) < 0)
                return -1;
        if (o == NULL)
                return 0;
        const struct volume_object_entry *e = env_entry(o, key);
        if (e == NULL) {
                if (ev->optional)
                        return 0;
                return ck_error_make(err, 0, "couldn't find key %s in %s %s/%s", key,
                                     secret ? "Secret" : "ConfigMap", pod->namespace, name);
        }
        *value = xstrdup(e->value);
        return 0;
}

/* ---- env files (EnvFiles) ---- */

#define ENV_FILE_MAX_BYTES (1u << 20)

/* valueFrom.fileKeyRef (upstream makeEnvironmentVariables, EnvFiles): the
 * key of an env file in an emptyDir of the pod, read as the container
 * starts (an init container may have written it).  *value NULL: skipped
 * (optional, not set). */
static int file_key_value(const struct pod *pod, const struct env_var *ev,
                          const struct kv_list *volume_paths, char **value, ck_error_t *err)
{
        *value = NULL;
        const char *dir =
            volume_paths ? kv_list_get(volume_paths, ev->ref_name ? ev->ref_name : "") : NULL;
        if (dir == NULL)
                return ck_error_make(err, 0,
                                     "cannot find the volume \"%s\" referenced by FileKeyRef",
                                     ev->ref_name ? ev->ref_name : "");
        cleanup_close int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cleanup_error ck_error_t cause = NULL;
        cleanup_free char *buf = NULL;
        size_t len = 0;
        int fd = -1;
        if (dfd < 0) {
                ck_error_make(&cause, errno, "open volume `%s`", dir);
        } else if ((fd = fs_open_in_root(dfd, ev->file_path, O_RDONLY | O_NONBLOCK, &cause)) >= 0) {
                /* a FIFO or a device would block this worker: regular
                 * files only (O_NONBLOCK opened a FIFO without waiting) */
                cleanup_close int f = fd;
                struct stat st;
                if (fstat(f, &st) < 0) {
                        ck_error_make(&cause, errno, "stat `%s/%s`", dir, ev->file_path);
                } else if (!S_ISREG(st.st_mode)) {
                        ck_error_make(&cause, EINVAL, "`%s/%s` is not a regular file", dir,
                                      ev->file_path);
                } else {
                        char chunk[8192];
                        ssize_t n;
                        while ((n = TEMP_FAILURE_RETRY_INT(read(f, chunk, sizeof(chunk)))) > 0 &&
                               len <= ENV_FILE_MAX_BYTES) {
                                buf = xrealloc(buf, len + (size_t)n + 1);
                                memcpy(buf + len, chunk, (size_t)n);
                                len += (size_t)n;
                        }
                        if (n < 0)
                                ck_error_make(&cause, errno, "read `%s/%s`", dir, ev->file_path);
                        else if (len > ENV_FILE_MAX_BYTES)
                                ck_error_make(&cause, EFBIG, "`%s/%s` is larger than %u bytes", dir,
                                              ev->file_path, ENV_FILE_MAX_BYTES);
                }
        }
        if (cause == NULL &&
            envfile_lookup(buf ? buf : "", len, ev->ref_key ? ev->ref_key : "", value, &cause) < 0)
                ck_error_wrap(&cause, "`%s/%s`", dir, ev->file_path);
        if (cause != NULL) {
                LOG_ERROR("Failed to parse env file", "pod=\"%s\" err=\"%s\"", pod_full_name(pod),
                          ck_error_msg(cause));
                return ck_error_make(err, 0, "couldn't parse env file");
        }
        if (*value == NULL && !ev->optional)
                return ck_error_make(err, 0,
                                     "environment variable key \"%s\" not found in file "
                                     "\"%s/%s\"",
                                     ev->ref_key ? ev->ref_key : "", dir, ev->file_path);
        return 0;
}

/* ---- the Services ---- */

static int service_env(const struct kube_objects *kube, const struct pod *pod, struct kv_list *out,
                       ck_error_t *err)
{
        if (kube == NULL || kube->list_services == NULL)
                return 0;
        cleanup_json json_t *services = NULL;
        bool synced = kube->list_services(kube->opaque, &services);
        if (!synced && !pod_is_static(pod))
                return ck_error_make(err, 0,
                                     "services have not yet been read at least once, cannot "
                                     "construct envvars");
        envvars_for_pod(services, pod->namespace, pod->enable_service_links, out);
        return 0;
}

/* ---- the environment ---- */

int kuberuntime__container_env(const struct kuberuntime_options *opts, const struct pod *pod,
                               const struct container *c, const char *pod_ip,
                               const struct kube_objects *kube, const struct kv_list *volume_paths,
                               struct kv_list *env, ck_error_t *err)
{
        struct kv_list out = {0};
        struct env_objects cache = {0};

        if (service_env(kube, pod, &out, err) < 0)
                goto fail;
        /* env overrides envFrom: envFrom first */
        for (size_t i = 0; i < c->n_env_from; i++)
                if (env_from(kube, pod, &c->env_from[i], &cache, &out, err) < 0)
                        goto fail;

        for (size_t i = 0; i < c->n_env; i++) {
                const struct env_var *e = &c->env[i];
                char *value = NULL;
                switch (e->kind) {
                case ENV_VALUE:
                        value =
                            e->value && *e->value ? expansion_expand(e->value, &out) : xstrdup("");
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
                        /* upstream returns these errors unwrapped */
                        if (key_ref_value(kube, pod, e, &cache, &value, err) < 0)
                                goto fail;
                        if (value == NULL)
                                continue;
                        break;
                case ENV_FILE_KEY:
                        if (file_key_value(pod, e, volume_paths, &value, err) < 0)
                                goto fail;
                        if (value == NULL)
                                continue;
                        break;
                }
                env_set(&out, e->name, value);
                free(value);
                continue;
        fail_var:
                ck_error_wrap(err, "env %s", e->name);
                goto fail;
        }
        env_objects_release(&cache);
        *env = out;
        return 0;
fail:
        env_objects_release(&cache);
        kv_list_release(&out);
        return -1;
}
