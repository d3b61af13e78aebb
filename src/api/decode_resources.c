/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Container resources: quantities parsed and rewritten canonically (the
 * apiserver rounds every ResourceList up to millis and stores the canonical
 * text), requests defaulted from limits (SetDefaults_Pod), and
 * validateResourceRequirements.
 */
#include "api/api_internal.h"

#include "util/cleanup.h"
#include "util/xalloc.h"
#include "util/yamljson.h"

#include <stdlib.h>
#include <string.h>

#define QUANTITY_FORMAT_ERROR                                                                      \
        "quantities must match the regular expression "                                            \
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"

struct named_quantity {
        const char *name; /* borrowed from the JSON key */
        struct quantity q;
};

struct quantity_list {
        struct named_quantity *items;
        size_t n;
};

/* Quantity.UnmarshalJSON: a string or a bare number, spaces trimmed; null
 * is zero. */
static bool json_quantity(struct dctx *d, json_t *v, const char *path, struct quantity *q)
{
        cleanup_free char *text = NULL;
        if (json_is_null(v))
                text = xstrdup("0");
        else if (json_is_string(v))
                text = xstrdup(json_string_value(v));
        else if (json_is_number(v))
                text = yamljson_number_text(v);
        if (text == NULL) {
                ferr_decode(d, path, v, QUANTITY_FORMAT_ERROR);
                return false;
        }
        char *s = text;
        while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\v' || *s == '\f')
                s++;
        size_t n = strlen(s);
        while (n > 0 && strchr(" \t\n\r\v\f", s[n - 1]))
                s[--n] = '\0';
        cleanup_error ck_error_t e = NULL;
        if (quantity_parse(s, q, &e) < 0) {
                ferr_decode(d, path, v, ck_error_msg(e));
                return false;
        }
        return true;
}

/* Decodes a ResourceList object, rewriting each value canonically. */
static bool is_native(const char *name);
static bool is_hugepages(const char *name);

static void decode_list(struct dctx *d, json_t *obj, const char *path, struct quantity_list *out,
                        struct resource_list *rl)
{
        out->items = xcalloc(json_object_size(obj) + 1, sizeof(*out->items));
        const char *k;
        json_t *v;
        json_object_foreach(obj, k, v)
        {
                cleanup_free char *kp = path_key(path, k);
                struct quantity q;
                if (!json_quantity(d, v, kp, &q))
                        continue;
                int64_t value = 0;
                bool is_cpu = strcmp(k, "cpu") == 0;
                bool is_memory = strcmp(k, "memory") == 0;
                bool is_storage = strcmp(k, "ephemeral-storage") == 0;
                if ((is_cpu || is_memory || is_storage) && !quantity_value(&q, is_cpu, &value)) {
                        ferr_decode(d, kp, v, "quantity is too large");
                        continue;
                }
                if (is_cpu) {
                        rl->has_cpu = true;
                        rl->cpu_milli = value;
                } else if (is_memory) {
                        rl->has_memory = true;
                        rl->memory = value;
                } else if (is_storage) {
                        rl->has_ephemeral_storage = true;
                        rl->ephemeral_storage = value;
                } else if (is_hugepages(k) && quantity_value(&q, false, &value)) {
                        rl->hugepages =
                            xrealloc(rl->hugepages, (rl->n_hugepages + 1) * sizeof(*rl->hugepages));
                        rl->hugepages[rl->n_hugepages++] =
                            (struct resource_count){.name = xstrdup(k), .value = value};
                } else if (!is_native(k) && quantity_value(&q, false, &value)) {
                        /* an extended resource: whole units (validated below) */
                        rl->extended =
                            xrealloc(rl->extended, (rl->n_extended + 1) * sizeof(*rl->extended));
                        rl->extended[rl->n_extended++] =
                            (struct resource_count){.name = xstrdup(k), .value = value};
                }
                out->items[out->n++] = (struct named_quantity){.name = k, .q = q};
                cleanup_free char *canon = quantity_string(&q);
                json_object_set_new(obj, k, json_string(canon));
        }
}

static const struct quantity *list_find(const struct quantity_list *l, const char *name)
{
        for (size_t i = 0; i < l->n; i++)
                if (strcmp(l->items[i].name, name) == 0)
                        return &l->items[i].q;
        return NULL;
}

static bool is_hugepages(const char *name)
{
        return strncmp(name, "hugepages-", 10) == 0;
}

/* helper.IsNativeResource: unprefixed or *kubernetes.io/ */
static bool is_native(const char *name)
{
        return strchr(name, '/') == NULL || strstr(name, "kubernetes.io/") != NULL;
}

static bool overcommit_allowed(const char *name)
{
        return is_native(name) && !is_hugepages(name);
}

static bool is_standard_resource(const char *name)
{
        static const char *const std[] = {
            "cpu",
            "memory",
            "ephemeral-storage",
            "requests.cpu",
            "requests.memory",
            "requests.ephemeral-storage",
            "limits.cpu",
            "limits.memory",
            "limits.ephemeral-storage",
            "pods",
            "services",
            "replicationcontrollers",
            "resourcequotas",
            "secrets",
            "configmaps",
            "persistentvolumeclaims",
            "requests.storage",
            "services.nodeports",
            "services.loadbalancers",
            NULL,
        };
        for (const char *const *p = std; *p; p++)
                if (strcmp(name, *p) == 0)
                        return true;
        return is_hugepages(name) || strncmp(name, "requests.hugepages-", 19) == 0;
}

/* validateContainerResourceName */
static bool validate_resource_name(struct dctx *d, const char *path, const char *name)
{
        size_t before = d->errors.n;
        validate_qualified_name(d, path, name);
        if (d->errors.n != before)
                return false;
        if (strchr(name, '/') == NULL) {
                if (!is_standard_resource(name))
                        ferr_invalid(d, path, name,
                                     "must be a standard resource type or fully qualified");
                if (strcmp(name, "cpu") != 0 && strcmp(name, "memory") != 0 &&
                    strcmp(name, "ephemeral-storage") != 0 && !is_hugepages(name))
                        ferr_invalid(d, path, name, "must be a standard resource for containers");
        } else if (!is_native(name)) {
                /* IsExtendedResourceName: "requests." + name must be a qualified name */
                cleanup_free char *quota = xasprintf("requests.%s", name);
                struct dctx scratch = {0};
                validate_qualified_name(&scratch, path, quota);
                bool ok = scratch.errors.n == 0 && strncmp(name, "requests.", 9) != 0;
                dctx_release(&scratch);
                if (!ok)
                        ferr_invalid(d, path, name,
                                     "doesn't follow extended resource name standard");
        }
        return d->errors.n == before;
}

static void validate_quantity_value(struct dctx *d, const char *path, const char *name,
                                    const struct quantity *q)
{
        if (q->negative) {
                cleanup_free char *s = quantity_string(q);
                ferr_invalid(d, path, s, "must be greater than or equal to 0");
        }
        /* IsIntegerResourceName: extended resources */
        if (!is_native(name) && q->milli % 1000 != 0) {
                cleanup_free char *s = quantity_string(q);
                ferr_invalid(d, path, s, "must be an integer");
        }
}

/* Each limit's name and value (their errors under lp); whether one is a
 * huge page size, whether one is cpu or memory. */
static void validate_limits(struct dctx *d, const char *lp, const struct quantity_list *l,
                            bool *huge, bool *cpu_mem)
{
        for (size_t i = 0; i < l->n; i++) {
                const char *name = l->items[i].name;
                cleanup_free char *kp = path_key(lp, name);
                validate_resource_name(d, kp, name);
                validate_quantity_value(d, kp, name, &l->items[i].q);
                *huge |= is_hugepages(name);
                *cpu_mem |= strcmp(name, "cpu") == 0 || strcmp(name, "memory") == 0;
        }
}

void decode_resources(struct dctx *d, json_t *c, const char *path, struct resource_requirements *r)
{
        json_t *res = get_object(d, c, path, "resources");
        if (res == NULL)
                return;
        cleanup_free char *rp = path_child(path, "resources");
        cleanup_free char *lp = path_child(rp, "limits");
        cleanup_free char *qp = path_child(rp, "requests");
        json_t *limits = get_object(d, res, rp, "limits");
        json_t *requests = get_object(d, res, rp, "requests");

        struct quantity_list lim = {0}, req = {0};
        if (limits)
                decode_list(d, limits, lp, &lim, &r->limits);
        /* SetDefaults_Pod: a limit without a request sets the request */
        if (lim.n > 0) {
                if (requests == NULL) {
                        requests = json_object();
                        json_object_set_new(res, "requests", requests);
                }
                for (size_t i = 0; i < lim.n; i++)
                        if (json_object_get(requests, lim.items[i].name) == NULL)
                                json_object_set(requests, lim.items[i].name,
                                                json_object_get(limits, lim.items[i].name));
        }
        if (requests)
                decode_list(d, requests, qp, &req, &r->requests);

        bool lim_cpu_mem = false, req_cpu_mem = false, huge = false;
        validate_limits(d, lp, &lim, &huge, &lim_cpu_mem);
        for (size_t i = 0; i < req.n; i++) {
                const char *name = req.items[i].name;
                const struct quantity *q = &req.items[i].q;
                cleanup_free char *kp = path_key(qp, name);
                validate_resource_name(d, kp, name);
                validate_quantity_value(d, kp, name, q);
                const struct quantity *l = list_find(&lim, name);
                if (l) {
                        cleanup_free char *qs = quantity_string(q);
                        cleanup_free char *ls = quantity_string(l);
                        cleanup_free char *msg = NULL;
                        int cmp = quantity_cmp(q, l);
                        if (cmp != 0 && !overcommit_allowed(name))
                                msg = xasprintf("must be equal to %s limit of %s", name, ls);
                        else if (cmp > 0)
                                msg = xasprintf("must be less than or equal to %s limit of %s",
                                                name, ls);
                        if (msg)
                                ferr_invalid(d, qp, qs, msg);
                } else if (!overcommit_allowed(name)) {
                        ferr_required(d, lp, "Limit must be set for non overcommitable resources");
                }
                huge |= is_hugepages(name);
                req_cpu_mem |= strcmp(name, "cpu") == 0 || strcmp(name, "memory") == 0;
        }
        if (huge && !lim_cpu_mem && !req_cpu_mem)
                ferr_forbidden(d, rp, "HugePages require cpu or memory");
        free(lim.items);
        free(req.items);
}

void decode_overhead(struct dctx *d, json_t *spec, const char *path, struct resource_list *out,
                     bool *has)
{
        /* validateOverhead: the container limits' validation */
        json_t *o = get_object(d, spec, path, "overhead");
        *has = o != NULL;
        if (o == NULL)
                return;
        cleanup_free char *op = path_child(path, "overhead");
        /* upstream validates it as the limits of a container at the path
         * spec.overhead: its errors name spec.overhead.limits[<name>] */
        cleanup_free char *lp = path_child(op, "limits");
        struct quantity_list l = {0};
        decode_list(d, o, op, &l, out);
        bool huge = false, cpu_mem = false;
        validate_limits(d, lp, &l, &huge, &cpu_mem);
        if (huge && !cpu_mem)
                ferr_forbidden(d, op, "HugePages require cpu or memory");
        free(l.items);
}

/* validateResizePolicy: cpu and memory at most once each, NotRequired or
 * RestartContainer, and NotRequired only when the pod never restarts. */
void decode_resize_policy(struct dctx *d, json_t *c, const char *path,
                          const char *pod_restart_policy, struct container *out)
{
        json_t *list = get_array(d, c, path, "resizePolicy");
        if (list == NULL)
                return;
        static const char *const resources[] = {"cpu", "memory", NULL};
        static const char *const policies[] = {"NotRequired", "RestartContainer", NULL};
        cleanup_free char *lp = path_child(path, "resizePolicy");
        bool seen_cpu = false, seen_memory = false;
        size_t i;
        json_t *e;
        json_array_foreach(list, i, e)
        {
                cleanup_free char *ip = path_index(lp, i);
                if (!json_is_object(e)) {
                        ferr_type(d, ip, e, "an object");
                        continue;
                }
                cleanup_free char *name = NULL, *policy = NULL;
                get_string(d, e, ip, "resourceName", &name);
                get_string(d, e, ip, "restartPolicy", &policy);
                bool cpu = str_eq(name, "cpu"), memory = str_eq(name, "memory");
                if ((cpu && seen_cpu) || (memory && seen_memory))
                        ferr_duplicate(d, ip, name);
                seen_cpu |= cpu;
                seen_memory |= memory;
                if (name == NULL || name[0] == '\0')
                        ferr_required(d, lp, "");
                else if (!cpu && !memory)
                        ferr_not_supported(d, lp, name, resources);
                bool restart = str_eq(policy, "RestartContainer");
                if (policy == NULL || policy[0] == '\0')
                        ferr_required(d, lp, "");
                else if (!restart && !str_eq(policy, "NotRequired"))
                        ferr_not_supported(d, lp, policy, policies);
                if (str_eq(pod_restart_policy, "Never") && !str_eq(policy, "NotRequired"))
                        ferr_invalid(d, lp, policy ? policy : "",
                                     "must be 'NotRequired' when `restartPolicy` is 'Never'");
                if (restart && cpu)
                        out->resize_cpu = RESIZE_RESTART_CONTAINER;
                if (restart && memory)
                        out->resize_memory = RESIZE_RESTART_CONTAINER;
        }
}
