/* SPDX-License-Identifier: Apache-2.0 */
/* Small helpers shared by the status generation steps. */
#include "status/generate_internal.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

void status_runtime_view_init(struct status_runtime_view *v, const struct runtime_pod_status *rt)
{
        v->items = NULL;
        v->n = 0;
        if (rt == NULL || rt->n_containers == 0)
                return;
        v->items = xcalloc(rt->n_containers, sizeof(*v->items));
        /* insertion sort, newest created first; stable, so the runtime's own
         * order breaks ties (upstream sorts by CreatedAt, reversed) */
        for (size_t i = 0; i < rt->n_containers; i++) {
                const struct runtime_container_status *c = &rt->containers[i];
                size_t j = v->n;
                while (j > 0 && v->items[j - 1]->created_at < c->created_at) {
                        v->items[j] = v->items[j - 1];
                        j--;
                }
                v->items[j] = c;
                v->n++;
        }
}

void status_runtime_view_release(struct status_runtime_view *v)
{
        free(v->items);
        v->items = NULL;
        v->n = 0;
}

const struct runtime_container_status *status_runtime_latest(const struct status_runtime_view *v,
                                                             const char *name)
{
        for (size_t i = 0; i < v->n; i++)
                if (v->items[i]->name != NULL && strcmp(v->items[i]->name, name) == 0)
                        return v->items[i];
        return NULL;
}

json_t *status_cs_state(const json_t *cs, const char *which)
{
        return json_object_get(json_object_get(cs, "state"), which);
}

json_t *status_cs_last(const json_t *cs, const char *which)
{
        return json_object_get(json_object_get(cs, "lastState"), which);
}

json_t *status_find_named(const json_t *arr, const char *key, const char *name)
{
        size_t i;
        json_t *el;
        if (!json_is_array(arr) || name == NULL)
                return NULL;
        json_array_foreach(arr, i, el)
        {
                const char *n = json_string_value(json_object_get(el, key));
                if (n != NULL && strcmp(n, name) == 0)
                        return el;
        }
        return NULL;
}

json_int_t status_get_int(const json_t *obj, const char *key)
{
        return json_integer_value(json_object_get(obj, key));
}

const char *status_get_str(const json_t *obj, const char *key)
{
        return json_string_value(json_object_get(obj, key));
}

bool status_get_true(const json_t *obj, const char *key)
{
        return json_is_true(json_object_get(obj, key));
}

const char *status_kv(const struct kv_list *l, const char *key)
{
        if (l == NULL || key == NULL)
                return NULL;
        for (size_t i = 0; i < l->n; i++)
                if (l->items[i].key != NULL && strcmp(l->items[i].key, key) == 0)
                        return l->items[i].value;
        return NULL;
}

json_t *status_time(int64_t ns)
{
        char buf[64];
        return json_string(fs_format_rfc3339(ns, buf));
}
