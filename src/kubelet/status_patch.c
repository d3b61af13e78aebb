/* SPDX-License-Identifier: Apache-2.0 */
#include "kubelet/status_patch.h"

#include "status/generate.h"

#include <stdbool.h>
#include <string.h>

/* The v1.PodStatus fields the kubelet writes (upstream generateAPIPodStatus). */
static bool field_owned(const char *field)
{
        static const char *const owned[] = {
            "phase",
            "message",
            "reason",
            "conditions",
            "hostIP",
            "hostIPs",
            "podIP",
            "podIPs",
            "startTime",
            "qosClass",
            "resize",
            "observedGeneration",
            "containerStatuses",
            "initContainerStatuses",
            "ephemeralContainerStatuses",
        };
        for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++)
                if (strcmp(owned[i], field) == 0)
                        return true;
        return false;
}

/* The merge key of a list the kubelet writes with patchStrategy merge
 * (k8s.io/api/core/v1 tags); NULL: the list is replaced whole. */
static const char *merge_key(const char *field)
{
        if (strcmp(field, "conditions") == 0)
                return "type";
        if (strcmp(field, "podIPs") == 0 || strcmp(field, "hostIPs") == 0)
                return "ip";
        return NULL;
}

static const char *status_str_or(const json_t *v)
{
        return json_is_string(v) ? json_string_value(v) : "";
}

static bool element_owned(const char *field, const json_t *e)
{
        if (strcmp(field, "conditions") != 0)
                return true;
        return status_condition_owned_by_kubelet(json_string_value(json_object_get(e, "type")));
}

static json_t *diff_object(const json_t *old, const json_t *new_obj);

static json_t *diff_value(const json_t *old, const json_t *new_value)
{
        if (json_is_object(old) && json_is_object(new_value))
                return diff_object(old, new_value);
        return json_deep_copy(new_value);
}

static const json_t *find_by_key(const json_t *list, const char *key, const json_t *value)
{
        size_t i;
        const json_t *e;
        json_array_foreach(list, i, e)
        {
                if (json_equal(json_object_get(e, key), value))
                        return e;
        }
        return NULL;
}

/* A merge list: our elements, each diffed against its old self, then a
 * delete directive for each of our old elements that is gone. */
static json_t *diff_keyed_list(const char *field, const char *key, const json_t *old,
                               const json_t *new_list)
{
        json_t *out = json_array();
        size_t i;
        json_t *e;
        json_array_foreach(new_list, i, e)
        {
                const json_t *o = find_by_key(old, key, json_object_get(e, key));
                /* upstream's conditions shared by the kubelet: its
                 * DisruptionTarget (an eviction) replaces or adds the
                 * apiserver's; never deleted */
                bool shared =
                    strcmp(field, "conditions") == 0 &&
                    strcmp(status_str_or(json_object_get(e, "type")), "DisruptionTarget") == 0;
                if (shared && o != NULL && json_equal(o, e))
                        continue;
                if (!shared && !element_owned(field, e))
                        continue;
                json_array_append_new(out, o ? diff_value(o, e) : json_deep_copy(e));
        }
        json_array_foreach(old, i, e)
        {
                json_t *k = json_object_get(e, key);
                if (k == NULL || !element_owned(field, e) || find_by_key(new_list, key, k))
                        continue;
                json_array_append_new(out, json_pack("{s:s, s:O}", "$patch", "delete", key, k));
        }
        return out;
}

static json_t *diff_object(const json_t *old, const json_t *new_obj)
{
        json_t *out = json_object();
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)new_obj, k, v)
        {
                json_object_set_new(out, k, diff_value(json_object_get(old, k), v));
        }
        json_object_foreach((json_t *)old, k, v)
        {
                if (json_object_get(new_obj, k) == NULL)
                        json_object_set_new(out, k, json_null());
        }
        return out;
}

json_t *status_patch_build(const json_t *old, const json_t *new_status)
{
        json_t *out = json_object();
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)new_status, k, v)
        {
                if (!field_owned(k))
                        continue;
                const json_t *o = json_object_get(old, k);
                const char *key = merge_key(k);
                if (key && json_is_array(v))
                        json_object_set_new(out, k, diff_keyed_list(k, key, o, v));
                else
                        json_object_set_new(out, k, diff_value(o, v));
        }
        json_object_foreach((json_t *)old, k, v)
        {
                if (field_owned(k) && json_object_get(new_status, k) == NULL)
                        json_object_set_new(out, k, json_null());
        }
        return out;
}
