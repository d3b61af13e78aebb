/* SPDX-License-Identifier: Apache-2.0 */
/* Upstream component-helpers/scheduling/corev1/nodeaffinity (the required
 * part: nodeSelector, NodeSelectorTerms with matchExpressions and
 * matchFields) and helpers.go (ToleratesTaint), as the kubelet's admission
 * uses them. */
#include "kubelet/node_affinity.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *label_of(const json_t *labels, const char *key)
{
        return json_string_value(json_object_get(labels, key));
}

static bool values_contain(const json_t *values, const char *v)
{
        size_t i;
        json_t *x;
        json_array_foreach(values, i, x)
        {
                if (json_is_string(x) && strcmp(json_string_value(x), v) == 0)
                        return true;
        }
        return false;
}

/* Gt / Lt: both sides integers (labels.ParseToRequirements requires one
 * value, parsed as int64). */
static bool parse_int(const char *s, int64_t *out)
{
        if (s == NULL || *s == '\0')
                return false;
        char *end = NULL;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (errno != 0 || *end != '\0')
                return false;
        *out = v;
        return true;
}

/* One requirement against a map of key → value (labels, or the fields). */
static bool requirement_match(const json_t *req, const json_t *labels)
{
        const char *key = json_string_value(json_object_get(req, "key"));
        const char *op = json_string_value(json_object_get(req, "operator"));
        const json_t *values = json_object_get(req, "values");
        if (key == NULL || op == NULL)
                return false;
        const char *v = label_of(labels, key);
        if (strcmp(op, "In") == 0)
                return v != NULL && json_array_size(values) > 0 && values_contain(values, v);
        if (strcmp(op, "NotIn") == 0)
                return json_array_size(values) > 0 && (v == NULL || !values_contain(values, v));
        if (strcmp(op, "Exists") == 0)
                return v != NULL;
        if (strcmp(op, "DoesNotExist") == 0)
                return v == NULL;
        if (strcmp(op, "Gt") == 0 || strcmp(op, "Lt") == 0) {
                int64_t have, want;
                if (json_array_size(values) != 1 || !parse_int(v, &have) ||
                    !parse_int(json_string_value(json_array_get(values, 0)), &want))
                        return false;
                return op[0] == 'G' ? have > want : have < want;
        }
        return false; /* an unknown operator selects nothing */
}

/* A term: its matchExpressions against the labels and its matchFields
 * against metadata.name, all ANDed; an empty term matches nothing. */
static bool term_match(const json_t *term, const json_t *labels, const json_t *fields)
{
        const json_t *exprs = json_object_get(term, "matchExpressions");
        const json_t *fexprs = json_object_get(term, "matchFields");
        if (json_array_size(exprs) == 0 && json_array_size(fexprs) == 0)
                return false;
        size_t i;
        json_t *r;
        json_array_foreach(exprs, i, r)
        {
                if (!requirement_match(r, labels))
                        return false;
        }
        json_array_foreach(fexprs, i, r)
        {
                /* only metadata.name is a node field selector */
                const char *key = json_string_value(json_object_get(r, "key"));
                if (key == NULL || strcmp(key, "metadata.name") != 0 ||
                    !requirement_match(r, fields))
                        return false;
        }
        return true;
}

bool node_affinity_match(const json_t *pod_spec, const json_t *node_labels, const char *node_name)
{
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)json_object_get(pod_spec, "nodeSelector"), k, v)
        {
                const char *have = label_of(node_labels, k);
                if (have == NULL || !json_is_string(v) || strcmp(have, json_string_value(v)) != 0)
                        return false;
        }
        const json_t *required =
            json_object_get(json_object_get(json_object_get(pod_spec, "affinity"), "nodeAffinity"),
                            "requiredDuringSchedulingIgnoredDuringExecution");
        if (required == NULL || json_is_null(required))
                return true;
        json_t *fields = json_pack("{s:s}", "metadata.name", node_name ? node_name : "");
        bool match = false;
        size_t i;
        json_t *term;
        json_array_foreach(json_object_get(required, "nodeSelectorTerms"), i, term)
        {
                if (term_match(term, node_labels, fields)) {
                        match = true;
                        break;
                }
        }
        json_decref(fields);
        return match;
}

/* upstream Toleration.ToleratesTaint (without the comparison operators of
 * the alpha TaintTolerationComparisonOperators gate) */
static bool tolerates(const json_t *tol, const json_t *taint)
{
        const char *t_effect = json_string_value(json_object_get(taint, "effect"));
        const char *t_key = json_string_value(json_object_get(taint, "key"));
        const char *t_value = json_string_value(json_object_get(taint, "value"));
        const char *effect = json_string_value(json_object_get(tol, "effect"));
        const char *key = json_string_value(json_object_get(tol, "key"));
        const char *op = json_string_value(json_object_get(tol, "operator"));
        const char *value = json_string_value(json_object_get(tol, "value"));
        if (effect && *effect && (t_effect == NULL || strcmp(effect, t_effect) != 0))
                return false;
        if (key && *key && (t_key == NULL || strcmp(key, t_key) != 0))
                return false;
        if (op == NULL || *op == '\0' || strcmp(op, "Equal") == 0)
                return strcmp(value ? value : "", t_value ? t_value : "") == 0;
        return strcmp(op, "Exists") == 0;
}

bool node_taints_tolerated(const json_t *pod_spec, const json_t *node_taints)
{
        const json_t *tolerations = json_object_get(pod_spec, "tolerations");
        size_t i;
        json_t *taint;
        json_array_foreach(node_taints, i, taint)
        {
                const char *effect = json_string_value(json_object_get(taint, "effect"));
                if (effect == NULL || strcmp(effect, "NoExecute") != 0)
                        continue;
                bool ok = false;
                size_t j;
                json_t *tol;
                json_array_foreach(tolerations, j, tol)
                {
                        if (tolerates(tol, taint)) {
                                ok = true;
                                break;
                        }
                }
                if (!ok)
                        return false;
        }
        return true;
}
