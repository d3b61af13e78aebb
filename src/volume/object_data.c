/* SPDX-License-Identifier: Apache-2.0 */
/* configMaps and secrets read from the apiserver, decoded (see object_data.h). */
#include "volume/object_data.h"

#include "util/base64.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

static int cmp_entry(const void *a, const void *b)
{
        return strcmp(((const struct volume_object_entry *)a)->key,
                      ((const struct volume_object_entry *)b)->key);
}

/* Adds every member of obj[field] (strings; base64 when `base64`). */
static int add_map(struct volume_object_data *d, json_t *obj, const char *field, bool base64,
                   bool binary, ck_error_t *err)
{
        json_t *m = json_object_get(obj, field);
        if (m == NULL || json_is_null(m))
                return 0;
        if (!json_is_object(m))
                return ck_error_make(err, 0, "%s: not an object", field);
        const char *k;
        json_t *v;
        json_object_foreach(m, k, v)
        {
                if (!json_is_string(v))
                        return ck_error_make(err, 0, "%s[%s]: not a string", field, k);
                const char *s = json_string_value(v);
                size_t len = json_string_length(v);
                d->items = xrealloc(d->items, (d->n + 1) * sizeof(*d->items));
                struct volume_object_entry *e = &d->items[d->n];
                if (base64) {
                        if (base64_decode(s, len, 0, &e->value, &e->len, NULL) < 0)
                                return ck_error_make(err, 0, "%s[%s]: invalid base64", field, k);
                } else {
                        e->value = xmalloc(len + 1);
                        memcpy(e->value, s, len + 1);
                        e->len = len;
                }
                e->key = xstrdup(k);
                e->binary = binary;
                d->n++;
        }
        return 0;
}

int volume_object_not_found(enum volume_object_kind kind, const char *name, ck_error_t *err)
{
        return ck_error_make_code(err, 404, "%s \"%s\" not found",
                                  kind == VOLUME_OBJECT_SECRET ? "secret" : "configmap",
                                  name ? name : "");
}

int volume_object_get(const struct kube_objects *kube, enum volume_object_kind kind, const char *ns,
                      const char *name, const char *pod_uid, struct volume_object_data *out,
                      bool *found, ck_error_t *err)
{
        bool secret = kind == VOLUME_OBJECT_SECRET;
        const char *what = secret ? "secret" : "configMap";
        out->items = NULL;
        out->n = 0;
        *found = false;
        if (kube == NULL)
                return ck_error_make(err, 0, "couldn't get %s %s/%s, no kubeClient defined", what,
                                     ns, name ? name : "");
        cleanup_json json_t *obj = NULL;
        ck_error_t e = NULL;
        if (kube->get(kube->opaque, secret ? "secrets" : "configmaps", ns, name, pod_uid, &obj,
                      &e) < 0) {
                if (e != NULL && e->code == 404) {
                        ck_error_release(&e);
                        return 0;
                }
                *err = e;
                return ck_error_wrap(err, "couldn't get %s %s/%s", what, ns, name);
        }
        int r = secret ? add_map(out, obj, "data", true, false, err)
                       : add_map(out, obj, "data", false, false, err);
        if (r == 0 && !secret)
                r = add_map(out, obj, "binaryData", true, true, err);
        if (r < 0) {
                volume_object_data_release(out);
                return ck_error_wrap(err, "%s %s/%s", what, ns, name);
        }
        if (out->n > 1)
                qsort(out->items, out->n, sizeof(*out->items), cmp_entry);
        *found = true;
        return 0;
}

const struct volume_object_entry *volume_object_find(const struct volume_object_data *d,
                                                     const char *key)
{
        for (size_t i = 0; i < d->n; i++)
                if (strcmp(d->items[i].key, key) == 0)
                        return &d->items[i];
        return NULL;
}

void volume_object_data_release(struct volume_object_data *d)
{
        for (size_t i = 0; i < d->n; i++) {
                free(d->items[i].key);
                free(d->items[i].value);
        }
        free(d->items);
        d->items = NULL;
        d->n = 0;
}
