/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Comparing Nodes and patching them: upstream nodeStatusHasChanged (with
 * apiequality.Semantic), PatchNodeStatus's two-way strategic merge patch
 * for the fields the kubelet writes, and the reconcile of an existing Node
 * at registration.
 */
#include "node/node_internal.h"

#include "api/decode.h"
#include "util/cleanup.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

static bool is_empty(const json_t *v)
{
        if (v == NULL || json_is_null(v) || json_is_false(v))
                return true;
        if (json_is_string(v))
                return json_string_length(v) == 0;
        if (json_is_integer(v))
                return json_integer_value(v) == 0;
        if (json_is_real(v))
                return json_real_value(v) == 0;
        if (json_is_array(v))
                return json_array_size(v) == 0;
        if (json_is_object(v)) {
                const char *k;
                json_t *x;
                json_object_foreach((json_t *)v, k, x) if (!is_empty(x)) return false;
                return true;
        }
        return false;
}

bool node_json_equal(const json_t *a, const json_t *b)
{
        if (is_empty(a) || is_empty(b))
                return is_empty(a) && is_empty(b);
        if (json_is_number(a) && json_is_number(b))
                return json_number_value(a) == json_number_value(b);
        if (json_typeof(a) != json_typeof(b))
                return false;
        switch (json_typeof(a)) {
        case JSON_OBJECT: {
                const char *k;
                json_t *x;
                json_object_foreach((json_t *)a, k,
                                    x) if (!node_json_equal(x, json_object_get(b, k))) return false;
                json_object_foreach((json_t *)b, k, x) if (json_object_get(a, k) == NULL &&
                                                           !is_empty(x)) return false;
                return true;
        }
        case JSON_ARRAY:
                if (json_array_size(a) != json_array_size(b))
                        return false;
                for (size_t i = 0; i < json_array_size(a); i++)
                        if (!node_json_equal(json_array_get(a, i), json_array_get(b, i)))
                                return false;
                return true;
        case JSON_STRING:
                return strcmp(json_string_value(a), json_string_value(b)) == 0;
        default:
                return json_equal((json_t *)a, (json_t *)b);
        }
}

/* Two quantities (strings) by value: "1Ki" equals "1024". */
static bool quantity_equal(const json_t *a, const json_t *b)
{
        if (!json_is_string(a) || !json_is_string(b))
                return node_json_equal(a, b);
        const char *sa = json_string_value(a), *sb = json_string_value(b);
        if (strcmp(sa, sb) == 0)
                return true;
        int64_t va, vb;
        cleanup_error ck_error_t err = NULL;
        if (api_parse_quantity(sa, true, &va, &err) < 0 ||
            api_parse_quantity(sb, true, &vb, &err) < 0) {
                ck_error_release(&err);
                /* too large for millis: whole units */
                if (api_parse_quantity(sa, false, &va, &err) < 0 ||
                    api_parse_quantity(sb, false, &vb, &err) < 0)
                        return false;
        }
        return va == vb;
}

static bool resource_list_equal(const json_t *a, const json_t *b)
{
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)a, k, x)
        {
                json_t *y = json_object_get(b, k);
                if (y == NULL || !quantity_equal(x, y))
                        return false;
        }
        json_object_foreach((json_t *)b, k, x) if (json_object_get(a, k) == NULL) return false;
        return true;
}

static bool is_resource_list(const char *key)
{
        return strcmp(key, "capacity") == 0 || strcmp(key, "allocatable") == 0;
}

static int cmp_condition_type(const void *x, const void *y)
{
        const char *a = json_string_value(json_object_get(*(json_t *const *)x, "type"));
        const char *b = json_string_value(json_object_get(*(json_t *const *)y, "type"));
        return strcmp(a ? a : "", b ? b : "");
}

/* Upstream nodeConditionsHaveChanged: by type, heartbeat times ignored. */
static bool conditions_changed(const json_t *a, const json_t *b)
{
        size_t n = json_array_size(a);
        if (n != json_array_size(b))
                return true;
        if (n == 0)
                return false;
        cleanup_free json_t **sa = xcalloc(n, sizeof(*sa));
        cleanup_free json_t **sb = xcalloc(n, sizeof(*sb));
        for (size_t i = 0; i < n; i++) {
                sa[i] = json_array_get(a, i);
                sb[i] = json_array_get(b, i);
        }
        /* insertion sort: stable, as sort.SliceStable; lists are short */
        json_t **lists[2] = {sa, sb};
        for (int l = 0; l < 2; l++)
                for (size_t i = 1; i < n; i++)
                        for (size_t j = i;
                             j > 0 && cmp_condition_type(&lists[l][j - 1], &lists[l][j]) > 0; j--) {
                                json_t *t = lists[l][j];
                                lists[l][j] = lists[l][j - 1];
                                lists[l][j - 1] = t;
                        }
        for (size_t i = 0; i < n; i++) {
                cleanup_json json_t *ca = json_deep_copy(sa[i]);
                cleanup_json json_t *cb = json_deep_copy(sb[i]);
                if (json_is_object(ca))
                        json_object_del(ca, "lastHeartbeatTime");
                if (json_is_object(cb))
                        json_object_del(cb, "lastHeartbeatTime");
                if (!node_json_equal(ca, cb))
                        return true;
        }
        return false;
}

bool node_status_changed(const json_t *old_status, const json_t *new_status)
{
        if (old_status == NULL && new_status == NULL)
                return false;
        if (old_status == NULL || new_status == NULL)
                return true;
        if (conditions_changed(json_object_get(old_status, "conditions"),
                               json_object_get(new_status, "conditions")))
                return true;
        const json_t *both[2] = {old_status, new_status};
        for (int s = 0; s < 2; s++) {
                const char *k;
                json_t *x;
                json_object_foreach((json_t *)both[s], k, x)
                {
                        if (strcmp(k, "conditions") == 0)
                                continue;
                        const json_t *o = json_object_get(old_status, k);
                        const json_t *n = json_object_get(new_status, k);
                        bool eq = is_resource_list(k) && !is_empty(o) && !is_empty(n)
                                      ? resource_list_equal(o, n)
                                      : node_json_equal(o, n);
                        if (!eq)
                                return true;
                }
        }
        return false;
}

/* {key: new value} for every key that differs, {key: null} for removed
 * ones; NULL when equal.  quantities: compare values as quantities. */
static json_t *diff_map(const json_t *old, const json_t *new, bool quantities)
{
        json_t *d = json_object();
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)new, k, x)
        {
                json_t *o = json_object_get(old, k);
                bool eq = o && (quantities ? quantity_equal(o, x) : json_equal(o, x));
                if (!eq)
                        json_object_set(d, k, x);
        }
        json_object_foreach((json_t *)old, k, x) if (json_object_get(new, k) == NULL)
            json_object_set_new(d, k, json_null());
        if (json_object_size(d) == 0) {
                json_decref(d);
                return NULL;
        }
        return d;
}

static json_t *diff_conditions(const json_t *old, const json_t *new)
{
        json_t *changed = json_array();
        json_t *order = json_array();
        size_t i;
        json_t *c;
        json_array_foreach(new, i, c)
        {
                const char *type = json_string_value(json_object_get(c, "type"));
                if (type == NULL)
                        continue;
                json_array_append_new(order, json_pack("{s:s}", "type", type));
                json_t *o = NULL, *x;
                size_t j;
                json_array_foreach(old, j, x)
                {
                        const char *t = json_string_value(json_object_get(x, "type"));
                        if (t && strcmp(t, type) == 0)
                                o = x;
                }
                if (o == NULL || !json_equal(o, c))
                        json_array_append(changed, c);
        }
        json_t *out = NULL;
        if (json_array_size(changed) > 0)
                out = json_pack("{s:o, s:o}", "conditions", changed, "$setElementOrder/conditions",
                                order);
        else {
                json_decref(changed);
                json_decref(order);
        }
        return out;
}

json_t *node_status_patch(const json_t *old_node, const json_t *new_node)
{
        json_t *patch = json_object();
        static const char *const meta_maps[] = {"labels", "annotations"};
        json_t *om = json_object_get(old_node, "metadata");
        json_t *nm = json_object_get(new_node, "metadata");
        for (size_t i = 0; i < ARRAY_SIZE(meta_maps); i++) {
                json_t *d = diff_map(json_object_get(om, meta_maps[i]),
                                     json_object_get(nm, meta_maps[i]), false);
                if (d) {
                        json_t *pm = json_object_get(patch, "metadata");
                        if (pm == NULL) {
                                pm = json_object();
                                json_object_set_new(patch, "metadata", pm);
                        }
                        json_object_set_new(pm, meta_maps[i], d);
                }
        }

        json_t *os = json_object_get(old_node, "status");
        json_t *ns = json_object_get(new_node, "status");
        json_t *ps = json_object();
        const char *k;
        json_t *x;
        json_object_foreach(ns, k, x)
        {
                json_t *o = json_object_get(os, k);
                if (strcmp(k, "conditions") == 0) {
                        json_t *d = diff_conditions(o, x);
                        if (d)
                                json_object_update(ps, d);
                        json_decref(d);
                } else if (is_resource_list(k)) {
                        json_t *d = diff_map(o, x, true);
                        if (d)
                                json_object_set_new(ps, k, d);
                } else if (strcmp(k, "addresses") == 0) {
                        if (json_equal(o, x))
                                continue;
                        json_t *a = json_deep_copy(x);
                        /* addresses are wrongly marked patchStrategy=merge
                         * upstream: a changed list is replaced */
                        if (json_array_size(o) > 0)
                                json_array_append_new(a, json_pack("{s:s}", "$patch", "replace"));
                        json_object_set_new(ps, k, a);
                } else if (!json_equal(o, x)) {
                        json_object_set(ps, k, x);
                }
        }
        json_object_foreach(os, k, x) if (json_object_get(ns, k) == NULL)
            json_object_set_new(ps, k, json_null());
        if (json_object_size(ps) > 0)
                json_object_set_new(patch, "status", ps);
        else
                json_decref(ps);
        return patch;
}

/* ---- registration on an existing Node ---- */

static json_t *ensure_object(json_t *parent, const char *key)
{
        json_t *o = json_object_get(parent, key);
        if (!json_is_object(o)) {
                o = json_object();
                json_object_set_new(parent, key, o);
        }
        return o;
}

static bool reconcile_cmad(json_t *existing, const json_t *initial)
{
        json_t *em = ensure_object(existing, "metadata");
        json_t *ea = json_object_get(em, "annotations");
        json_t *ia = json_object_get(json_object_get(initial, "metadata"), "annotations");
        const char *have = json_string_value(json_object_get(ea, NODE_CMAD_ANNOTATION));
        const char *want = json_string_value(json_object_get(ia, NODE_CMAD_ANNOTATION));
        if (strcmp(have ? have : "", want ? want : "") == 0)
                return false;
        if (want == NULL) {
                LOG_INFO(0, "Controller attach-detach setting changed to false; updating existing "
                            "Node");
                json_object_del(ea, NODE_CMAD_ANNOTATION);
        } else {
                LOG_INFO(0, "Controller attach-detach setting changed to true; updating existing "
                            "Node");
                json_object_set_new(ensure_object(em, "annotations"), NODE_CMAD_ANNOTATION,
                                    json_string(want));
        }
        return true;
}

/* Upstream updateDefaultLabels. */
static bool reconcile_default_labels(json_t *existing, const json_t *initial)
{
        static const char *const defaults[] = {
            "kubernetes.io/hostname",
            "topology.kubernetes.io/zone",
            "topology.kubernetes.io/region",
            "failure-domain.beta.kubernetes.io/zone",
            "failure-domain.beta.kubernetes.io/region",
            "node.kubernetes.io/instance-type",
            "beta.kubernetes.io/instance-type",
            "kubernetes.io/os",
            "kubernetes.io/arch",
            "node.kubernetes.io/windows-build",
            "beta.kubernetes.io/os",
            "beta.kubernetes.io/arch",
        };
        json_t *el = ensure_object(ensure_object(existing, "metadata"), "labels");
        json_t *il = json_object_get(json_object_get(initial, "metadata"), "labels");
        bool changed = false;
        for (size_t i = 0; i < ARRAY_SIZE(defaults); i++) {
                const char *want = json_string_value(json_object_get(il, defaults[i]));
                if (want == NULL)
                        continue;
                const char *have = json_string_value(json_object_get(el, defaults[i]));
                if (have == NULL || strcmp(have, want) != 0) {
                        json_object_set_new(el, defaults[i], json_string(want));
                        changed = true;
                }
                if (*want == '\0')
                        json_object_del(el, defaults[i]);
        }
        return changed;
}

/* Upstream updateDefaultResources + reconcileHugePageResource. */
static bool reconcile_resources(json_t *existing, const json_t *initial)
{
        json_t *es = ensure_object(existing, "status");
        json_t *is = json_object_get(initial, "status");
        bool changed = false;
        static const char *const lists[] = {"capacity", "allocatable"};
        for (size_t i = 0; i < ARRAY_SIZE(lists); i++) {
                json_t *have = json_object_get(es, lists[i]);
                json_t *want = json_object_get(is, lists[i]);
                if (!json_is_object(have)) {
                        if (json_is_object(want)) {
                                json_object_set_new(es, lists[i], json_deep_copy(want));
                                changed = true;
                        } else {
                                json_object_set_new(es, lists[i], json_object());
                        }
                }
        }
        json_t *ecap = json_object_get(es, "capacity");
        json_t *ealloc = json_object_get(es, "allocatable");
        json_t *icap = json_object_get(is, "capacity");
        json_t *ialloc = json_object_get(is, "allocatable");
        const char *k;
        json_t *v, *tmp;
        json_object_foreach(icap, k, v)
        {
                if (strncmp(k, "hugepages-", 10) != 0)
                        continue;
                json_t *have_cap = json_object_get(ecap, k);
                bool supported = have_cap != NULL;
                if (!supported || !quantity_equal(have_cap, v)) {
                        json_object_set(ecap, k, v);
                        changed = true;
                }
                json_t *want_alloc = json_object_get(ialloc, k);
                json_t *have_alloc = json_object_get(ealloc, k);
                if (want_alloc &&
                    (!supported || have_alloc == NULL || !quantity_equal(have_alloc, want_alloc))) {
                        json_object_set(ealloc, k, want_alloc);
                        changed = true;
                }
        }
        json_object_foreach_safe(ecap, tmp, k, v)
        {
                if (strncmp(k, "hugepages-", 10) != 0 || json_object_get(icap, k) != NULL)
                        continue;
                LOG_INFO(0, "Removing huge page resource which is no longer supported",
                         "resourceName=\"%s\"", k);
                json_object_del(ealloc, k);
                json_object_del(ecap, k);
                changed = true;
        }
        return changed;
}

bool node_reconcile_existing(json_t *existing, const json_t *initial)
{
        bool changed = reconcile_cmad(existing, initial);
        changed = reconcile_default_labels(existing, initial) || changed;
        changed = reconcile_resources(existing, initial) || changed;
        return changed;
}
