/* SPDX-License-Identifier: Apache-2.0 */
/* configMaps and secrets read from the apiserver, decoded (see object_data.h). */
#include "volume/object_data.h"

#include "util/cleanup.h"
#include "util/xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int b64_value(char c)
{
        if (c >= 'A' && c <= 'Z')
                return c - 'A';
        if (c >= 'a' && c <= 'z')
                return c - 'a' + 26;
        if (c >= '0' && c <= '9')
                return c - '0' + 52;
        if (c == '+')
                return 62;
        if (c == '/')
                return 63;
        return -1;
}

int volume_base64_decode(const char *in, size_t len, char **out, size_t *out_len)
{
        cleanup_free char *clean = xmalloc(len + 1);
        size_t n = 0;
        for (size_t i = 0; i < len; i++)
                if (in[i] != '\r' && in[i] != '\n')
                        clean[n++] = in[i];
        if (n % 4 != 0)
                return -1;
        char *buf = xmalloc(n / 4 * 3 + 1);
        size_t o = 0;
        for (size_t i = 0; i < n; i += 4) {
                bool last = i + 4 == n;
                int pad = 0;
                uint32_t v = 0;
                for (int k = 0; k < 4; k++) {
                        char c = clean[i + (size_t)k];
                        int d = b64_value(c);
                        if (c == '=' && last && k >= 2 && (k == 3 || clean[i + 3] == '=')) {
                                pad++;
                                d = 0;
                        } else if (d < 0 || pad > 0) {
                                free(buf);
                                return -1;
                        }
                        v = v << 6 | (uint32_t)d;
                }
                buf[o++] = (char)(v >> 16);
                if (pad < 2)
                        buf[o++] = (char)(v >> 8 & 0xff);
                if (pad < 1)
                        buf[o++] = (char)(v & 0xff);
        }
        buf[o] = '\0';
        *out = buf;
        *out_len = o;
        return 0;
}

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
                        if (volume_base64_decode(s, len, &e->value, &e->len) < 0)
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
                      const char *name, struct volume_object_data *out, bool *found,
                      ck_error_t *err)
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
        if (kube->get(kube->opaque, secret ? "secrets" : "configmaps", ns, name, &obj, &e) < 0) {
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
