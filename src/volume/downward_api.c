/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The payload of a downwardAPI volume or projected source (upstream
 * pkg/volume/downwardapi CollectData): one file per item, the pod field
 * (fieldRef) or a container's resource (resourceFieldRef, limits defaulting
 * to the node's capacity where upstream uses its allocatable).
 */
#include "util/cleanup.h"
#include "util/xalloc.h"
#include "util/yamljson.h"
#include "volume/downward.h"
#include "volume/plugins.h"

#include <string.h>

/* The divisor as the text of a quantity (a string, or a JSON number). */
static char *divisor_text(json_t *d)
{
        if (json_is_string(d))
                return xstrdup(json_string_value(d));
        if (json_is_number(d))
                return yamljson_number_text(d);
        return NULL;
}

static int item_value(const struct volume_ctx *vc, json_t *it, char **out, ck_error_t *err)
{
        json_t *fr = json_object_get(it, "fieldRef");
        json_t *rr = json_object_get(it, "resourceFieldRef");
        if (json_is_object(fr)) {
                const char *fp = json_string_value(json_object_get(fr, "fieldPath"));
                return volume_pod_field_value(vc->pod, fp ? fp : "", out, err);
        }
        if (json_is_object(rr)) {
                struct volume_node_resources node;
                volume_node_capacity(vc->root_dir, &node);
                cleanup_free char *divisor = divisor_text(json_object_get(rr, "divisor"));
                const char *cname = json_string_value(json_object_get(rr, "containerName"));
                return volume_container_resource_value(
                    vc->pod, NULL, cname ? cname : "",
                    json_string_value(json_object_get(rr, "resource")), divisor, &node, out, err);
        }
        *out = xstrdup(""); /* upstream: an item with neither is an empty file */
        return 0;
}

int volume_downward_api_payload(const struct volume_ctx *vc, json_t *items, int32_t default_mode,
                                struct volume_payload *out, ck_error_t *err)
{
        if (items == NULL || json_is_null(items))
                return 0;
        if (!json_is_array(items))
                return ck_error_make(err, 0, "items: not an array");
        size_t i;
        json_t *it;
        json_array_foreach(items, i, it)
        {
                const char *path = json_string_value(json_object_get(it, "path"));
                if (path == NULL)
                        return ck_error_make(err, 0, "items[%zu]: path is required", i);
                json_t *mode = json_object_get(it, "mode");
                int32_t m =
                    json_is_integer(mode) ? (int32_t)json_integer_value(mode) : default_mode;
                cleanup_free char *value = NULL;
                if (item_value(vc, it, &value, err) < 0)
                        return ck_error_wrap(err, "downward API item \"%s\"", path);
                cleanup_free char *clean = NULL;
                if (volume_payload_check_path(path, &clean, err) < 0)
                        return -1;
                volume_payload_set(out, clean, value, strlen(value), (mode_t)m);
        }
        return 0;
}
