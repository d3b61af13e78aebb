/* SPDX-License-Identifier: Apache-2.0 */
#include "allocation/allocation.h"
#include "api/decode.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* The spec's containers JSON of a list ("containers", "initContainers"). */
static json_t *spec_list(const struct pod *pod, const char *key)
{
        return json_object_get(json_object_get(pod->raw, "spec"), key);
}

static json_t *resources_of(json_t *c)
{
        json_t *r = json_object_get(c, "resources");
        return json_is_object(r) ? json_deep_copy(r) : json_object();
}

json_t *alloc_from_pod(const struct pod *pod)
{
        json_t *out = json_object();
        size_t i;
        json_t *c;
        json_array_foreach(spec_list(pod, "containers"), i, c)
        {
                const char *name = json_string_value(json_object_get(c, "name"));
                if (name != NULL)
                        json_object_set_new(out, name, resources_of(c));
        }
        for (i = 0; i < pod->n_init_containers; i++) {
                const struct container *ic = &pod->init_containers[i];
                if (!container_is_sidecar(ic))
                        continue;
                json_t *raw = json_array_get(spec_list(pod, "initContainers"), i);
                json_object_set_new(out, ic->name, resources_of(raw));
        }
        return out;
}

/* Two quantities by value (api_parse_quantity in millis); strings that do
 * not parse compare as text. */
static bool quantity_equal(const json_t *a, const json_t *b)
{
        const char *sa = json_string_value(a), *sb = json_string_value(b);
        if (sa == NULL || sb == NULL)
                return json_equal((json_t *)a, (json_t *)b);
        int64_t va, vb;
        ck_error_t ea = NULL, eb = NULL;
        int ra = api_parse_quantity(sa, true, &va, &ea);
        int rb = api_parse_quantity(sb, true, &vb, &eb);
        ck_error_release(&ea);
        ck_error_release(&eb);
        if (ra < 0 || rb < 0)
                return strcmp(sa, sb) == 0;
        return va == vb;
}

static bool list_equal(const json_t *a, const json_t *b)
{
        if (json_object_size(a) != json_object_size(b))
                return false;
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)a, k, v)
        {
                json_t *o = json_object_get(b, k);
                if (o == NULL || !quantity_equal(v, o))
                        return false;
        }
        return true;
}

bool alloc_resources_equal(const json_t *a, const json_t *b)
{
        if (!list_equal(json_object_get(a, "limits"), json_object_get(b, "limits")) ||
            !list_equal(json_object_get(a, "requests"), json_object_get(b, "requests")))
                return false;
        json_t *ca = json_object_get(a, "claims"), *cb = json_object_get(b, "claims");
        if (json_array_size(ca) == 0 && json_array_size(cb) == 0)
                return true;
        return ca != NULL && cb != NULL && json_equal(ca, cb);
}

bool alloc_container_resizable(const struct pod *pod, const char *name)
{
        for (size_t i = 0; i < pod->n_containers; i++)
                if (strcmp(pod->containers[i].name, name) == 0)
                        return true;
        for (size_t i = 0; i < pod->n_init_containers; i++)
                if (strcmp(pod->init_containers[i].name, name) == 0)
                        return container_is_sidecar(&pod->init_containers[i]);
        return false;
}

/* Calls fn on each resizable container's raw JSON that alloc names with
 * other resources than its own; returns how many there were. */
static size_t each_different(json_t *spec, const struct pod *pod, const json_t *alloc, bool replace)
{
        size_t n = 0;
        static const char *const lists[] = {"containers", "initContainers"};
        for (size_t l = 0; l < 2; l++) {
                size_t i;
                json_t *c;
                json_array_foreach(json_object_get(spec, lists[l]), i, c)
                {
                        const char *name = json_string_value(json_object_get(c, "name"));
                        if (name == NULL ||
                            (l == 1 && (i >= pod->n_init_containers ||
                                        !container_is_sidecar(&pod->init_containers[i]))))
                                continue;
                        json_t *want = json_object_get(alloc, name);
                        if (want == NULL)
                                continue;
                        json_t *have = json_object_get(c, "resources");
                        if (alloc_resources_equal(have, want))
                                continue;
                        n++;
                        if (replace)
                                json_object_set_new(c, "resources", json_deep_copy(want));
                }
        }
        return n;
}

bool alloc_pod_matches(const struct pod *pod, const json_t *alloc)
{
        return each_different(json_object_get(pod->raw, "spec"), pod, alloc, false) == 0;
}

int alloc_update_pod(struct pod *pod, const json_t *alloc, struct pod **out, ck_error_t *err)
{
        if (alloc == NULL || alloc_pod_matches(pod, alloc)) {
                *out = pod_ref(pod);
                return 0;
        }
        cleanup_json json_t *raw = json_deep_copy(pod->raw);
        each_different(json_object_get(raw, "spec"), pod, alloc, true);
        struct pod *p = NULL;
        if (api_pod_decode(raw, &p, err) < 0)
                return ck_error_wrap(err, "pod %s with its allocated resources",
                                     pod_full_name(pod));
        p->source = pod->source;
        p->source_path = xstrdup(pod->source_path);
        p->managed_fields = pod->managed_fields ? xstrdup(pod->managed_fields) : NULL;
        *out = p;
        return 0;
}

static int64_t json_quantity(const json_t *list, const char *key, bool milli)
{
        const char *s = json_string_value(json_object_get(list, key));
        int64_t v = 0;
        ck_error_t e = NULL;
        if (s == NULL || api_parse_quantity(s, milli, &v, &e) < 0)
                v = 0;
        ck_error_release(&e);
        return v;
}

void alloc_resources_from_json(const json_t *res, struct alloc_resources *out)
{
        json_t *lim = json_object_get(res, "limits"), *req = json_object_get(res, "requests");
        *out = (struct alloc_resources){
            .memory_limit = json_quantity(lim, "memory", false),
            .memory_request = json_quantity(req, "memory", false),
            .cpu_limit = json_quantity(lim, "cpu", true),
            .cpu_request = json_quantity(req, "cpu", true),
        };
}

void alloc_resources_from_spec(const struct resource_requirements *r, struct alloc_resources *out)
{
        *out = (struct alloc_resources){
            .memory_limit = r->limits.has_memory ? r->limits.memory : 0,
            .memory_request = r->requests.has_memory ? r->requests.memory : 0,
            .cpu_limit = r->limits.has_cpu ? r->limits.cpu_milli : 0,
            .cpu_request = r->requests.has_cpu ? r->requests.cpu_milli : 0,
        };
}

static void set_quantity(json_t *res, const char *list, const char *key, int64_t v, bool milli)
{
        if (v == 0)
                return;
        json_t *l = json_object_get(res, list);
        if (l == NULL) {
                l = json_object();
                json_object_set_new(res, list, l);
        }
        char *text = api_format_quantity(v, milli);
        json_object_set_new(l, key, json_string(text));
        free(text);
}

json_t *alloc_resources_to_json(const struct alloc_resources *r)
{
        json_t *res = json_object();
        set_quantity(res, "limits", "cpu", r->cpu_limit, true);
        set_quantity(res, "limits", "memory", r->memory_limit, false);
        set_quantity(res, "requests", "cpu", r->cpu_request, true);
        set_quantity(res, "requests", "memory", r->memory_request, false);
        return res;
}

bool alloc_resources_same(const struct alloc_resources *a, const struct alloc_resources *b)
{
        return a->memory_limit == b->memory_limit && a->memory_request == b->memory_request &&
               a->cpu_limit == b->cpu_limit && a->cpu_request == b->cpu_request;
}
