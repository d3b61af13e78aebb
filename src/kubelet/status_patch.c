/* SPDX-License-Identifier: Apache-2.0 */
#include "kubelet/status_patch.h"

#include <string.h>

/* The merge key of the lists of a v1.PodStatus (and of what they hold),
 * from the patchMergeKey tags of k8s.io/api/core/v1; NULL: replaced whole. */
static const char *merge_key(const char *field)
{
        static const struct {
                const char *field, *key;
        } keys[] = {
            {"conditions", "type"},
            {"containerStatuses", "name"},
            {"initContainerStatuses", "name"},
            {"ephemeralContainerStatuses", "name"},
            {"podIPs", "ip"},
            {"hostIPs", "ip"},
            {"resourceClaimStatuses", "name"},
        };
        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
                if (strcmp(keys[i].field, field) == 0)
                        return keys[i].key;
        return NULL;
}

static json_t *diff_value(const char *field, const json_t *old, const json_t *new_value);

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

/* A list with a merge key: the new elements, each diffed against its old
 * self, then a delete directive for each old element that is gone. */
static json_t *diff_keyed_list(const char *key, const json_t *old, const json_t *new_list)
{
        json_t *out = json_array();
        size_t i;
        json_t *e;
        json_array_foreach(new_list, i, e)
        {
                const json_t *o = find_by_key(old, key, json_object_get(e, key));
                json_array_append_new(out, o ? diff_value(NULL, o, e) : json_deep_copy(e));
        }
        json_array_foreach(old, i, e)
        {
                json_t *k = json_object_get(e, key);
                if (k == NULL || find_by_key(new_list, key, k) != NULL)
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
                json_object_set_new(out, k, diff_value(k, json_object_get(old, k), v));
        }
        json_object_foreach((json_t *)old, k, v)
        {
                if (json_object_get(new_obj, k) == NULL)
                        json_object_set_new(out, k, json_null());
        }
        return out;
}

static json_t *diff_value(const char *field, const json_t *old, const json_t *new_value)
{
        if (json_is_object(old) && json_is_object(new_value))
                return diff_object(old, new_value);
        const char *key = field ? merge_key(field) : NULL;
        if (key && json_is_array(old) && json_is_array(new_value))
                return diff_keyed_list(key, old, new_value);
        return json_deep_copy(new_value);
}

json_t *status_patch_build(const json_t *old, const json_t *new_status)
{
        if (!json_is_object(old))
                return json_deep_copy(new_status);
        return diff_object(old, new_status);
}
