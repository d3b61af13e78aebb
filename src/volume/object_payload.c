/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The payload of a configMap or secret volume, or of such a projected source
 * (upstream pkg/volume/configmap and secret MakePayload).
 */
#include "util/cleanup.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "volume/object_data.h"
#include "volume/plugins.h"

#include <stdlib.h>
#include <string.h>

void volume_items_free(struct key_to_path *items, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(items[i].key);
                free(items[i].path);
        }
        free(items);
}

int volume_parse_items(json_t *items, struct key_to_path **out, size_t *n, ck_error_t *err)
{
        *out = NULL;
        *n = 0;
        if (items == NULL || json_is_null(items))
                return 0;
        if (!json_is_array(items))
                return ck_error_make(err, 0, "items: not an array");
        struct key_to_path *list = xcalloc(json_array_size(items) + 1, sizeof(*list));
        size_t i;
        json_t *it;
        json_array_foreach(items, i, it)
        {
                const char *key = json_string_value(json_object_get(it, "key"));
                const char *path = json_string_value(json_object_get(it, "path"));
                if (key == NULL || path == NULL) {
                        volume_items_free(list, i);
                        return ck_error_make(err, 0, "items[%zu]: key and path are required", i);
                }
                list[i].key = xstrdup(key);
                list[i].path = xstrdup(path);
                json_t *mode = json_object_get(it, "mode");
                if (json_is_integer(mode)) {
                        list[i].has_mode = true;
                        list[i].mode = (int32_t)json_integer_value(mode);
                }
        }
        *out = list;
        *n = json_array_size(items);
        return 0;
}

/* Fetches the object: a missing one is empty when optional. */
static int get_object(const struct volume_ctx *vc, enum volume_object_kind kind, const char *name,
                      bool optional, struct volume_object_data *data, ck_error_t *err)
{
        bool found = false;
        if (vc->kube == NULL && optional) {
                /* standalone: an optional object is missing, as for env */
                data->items = NULL;
                data->n = 0;
                return 0;
        }
        if (volume_object_get(vc->kube, kind, vc->pod->namespace, name, vc->pod->uid, data, &found,
                              err) < 0)
                return -1;
        if (!found && !optional)
                return volume_object_not_found(kind, name, err);
        LOG_INFO(3, "Received an object for a volume",
                 "kind=\"%s\" object=\"%s/%s\" found=%s pieces=%zu",
                 kind == VOLUME_OBJECT_SECRET ? "Secret" : "ConfigMap", vc->pod->namespace, name,
                 found ? "true" : "false", data->n);
        return 0;
}

static int make_payload(const struct volume_ctx *vc, enum volume_object_kind kind, const char *name,
                        const struct key_to_path *items, size_t n_items, int32_t default_mode,
                        bool optional, struct volume_payload *out, ck_error_t *err)
{
        struct volume_object_data data = {0};
        name = name ? name : "";
        if (get_object(vc, kind, name, optional, &data, err) < 0)
                return -1;
        int ret = 0;
        if (n_items == 0) {
                for (size_t i = 0; i < data.n; i++)
                        volume_payload_set(out, data.items[i].key, data.items[i].value,
                                           data.items[i].len, (mode_t)default_mode);
        }
        for (size_t i = 0; i < n_items && ret == 0; i++) {
                const struct volume_object_entry *e = volume_object_find(&data, items[i].key);
                if (e == NULL) {
                        if (optional)
                                continue;
                        ret = kind == VOLUME_OBJECT_SECRET
                                  ? ck_error_make(err, 0, "references non-existent secret key: %s",
                                                  items[i].key)
                                  : ck_error_make(err, 0,
                                                  "configmap references non-existent config "
                                                  "key: %s",
                                                  items[i].key);
                        break;
                }
                volume_payload_set(out, items[i].path, e->value, e->len,
                                   (mode_t)(items[i].has_mode ? items[i].mode : default_mode));
        }
        volume_object_data_release(&data);
        return ret;
}

int volume_config_map_payload(const struct volume_ctx *vc, const char *name,
                              const struct key_to_path *items, size_t n_items, int32_t default_mode,
                              bool optional, struct volume_payload *out, ck_error_t *err)
{
        return make_payload(vc, VOLUME_OBJECT_CONFIG_MAP, name, items, n_items, default_mode,
                            optional, out, err);
}

int volume_secret_payload(const struct volume_ctx *vc, const char *name,
                          const struct key_to_path *items, size_t n_items, int32_t default_mode,
                          bool optional, struct volume_payload *out, ck_error_t *err)
{
        return make_payload(vc, VOLUME_OBJECT_SECRET, name, items, n_items, default_mode, optional,
                            out, err);
}
