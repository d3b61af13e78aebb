/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The decoder's plumbing: field paths, errors worded as the apiserver's
 * field.Error ("spec.containers[0].image: Required value"), and typed JSON
 * getters that record a type error instead of failing.
 */
#include "api/api_internal.h"

#include "util/cleanup.h"
#include "util/xalloc.h"
#include "util/yamljson.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void vec_push(struct str_vec *v, char *s)
{
        if (v->n == v->cap) {
                v->cap = v->cap ? v->cap * 2 : 8;
                v->items = xrealloc(v->items, v->cap * sizeof(*v->items));
        }
        v->items[v->n++] = s;
}

static void vec_release(struct str_vec *v)
{
        for (size_t i = 0; i < v->n; i++)
                free(v->items[i]);
        free(v->items);
        *v = (struct str_vec){0};
}

void dctx_release(struct dctx *d)
{
        vec_release(&d->type_errors);
        vec_release(&d->errors);
}

char *path_child(const char *parent, const char *name)
{
        if (parent == NULL || parent[0] == '\0')
                return xstrdup(name);
        return xasprintf("%s.%s", parent, name);
}

char *path_index(const char *parent, size_t i)
{
        return xasprintf("%s[%zu]", parent, i);
}

char *path_key(const char *parent, const char *key)
{
        return xasprintf("%s[%s]", parent, key);
}

char *go_quote(const char *s)
{
        size_t n = strlen(s);
        char *out = xmalloc(n * 4 + 3);
        size_t o = 0;
        out[o++] = '"';
        for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
                unsigned char c = *p;
                switch (c) {
                case '"':
                case '\\':
                        out[o++] = '\\';
                        out[o++] = (char)c;
                        continue;
                case '\a':
                        memcpy(out + o, "\\a", 2), o += 2;
                        continue;
                case '\b':
                        memcpy(out + o, "\\b", 2), o += 2;
                        continue;
                case '\f':
                        memcpy(out + o, "\\f", 2), o += 2;
                        continue;
                case '\n':
                        memcpy(out + o, "\\n", 2), o += 2;
                        continue;
                case '\r':
                        memcpy(out + o, "\\r", 2), o += 2;
                        continue;
                case '\t':
                        memcpy(out + o, "\\t", 2), o += 2;
                        continue;
                case '\v':
                        memcpy(out + o, "\\v", 2), o += 2;
                        continue;
                default:
                        break;
                }
                if (c < 0x20 || c == 0x7f) {
                        o += (size_t)snprintf(out + o, 5, "\\x%02x", c);
                        continue;
                }
                out[o++] = (char)c;
        }
        out[o++] = '"';
        out[o] = '\0';
        return out;
}

char *json_bad_value(const json_t *v)
{
        switch (json_typeof(v)) {
        case JSON_STRING:
                return go_quote(json_string_value(v));
        case JSON_INTEGER:
        case JSON_REAL:
                return yamljson_number_text(v);
        case JSON_TRUE:
                return xstrdup("true");
        case JSON_FALSE:
                return xstrdup("false");
        case JSON_NULL:
                return xstrdup("null");
        default: {
                char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
                return s ? s : xstrdup("?");
        }
        }
}

static void ferr_v(struct str_vec *v, const char *path, const char *fmt, va_list ap)
{
        cleanup_free char *body = xvasprintf(fmt, ap);
        vec_push(v, xasprintf("%s: %s", path, body));
}

void ferr(struct dctx *d, const char *path, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        ferr_v(&d->errors, path, fmt, ap);
        va_end(ap);
}

void ferr_required(struct dctx *d, const char *path, const char *detail)
{
        if (detail && detail[0])
                ferr(d, path, "Required value: %s", detail);
        else
                ferr(d, path, "Required value");
}

void ferr_invalid(struct dctx *d, const char *path, const char *value, const char *detail)
{
        cleanup_free char *q = go_quote(value);
        ferr(d, path, "Invalid value: %s: %s", q, detail);
}

void ferr_invalid_int(struct dctx *d, const char *path, int64_t value, const char *detail)
{
        ferr(d, path, "Invalid value: %" PRId64 ": %s", value, detail);
}

void ferr_duplicate(struct dctx *d, const char *path, const char *value)
{
        cleanup_free char *q = go_quote(value);
        ferr(d, path, "Duplicate value: %s", q);
}

void ferr_not_found(struct dctx *d, const char *path, const char *value)
{
        cleanup_free char *q = go_quote(value);
        ferr(d, path, "Not found: %s", q);
}

void ferr_forbidden(struct dctx *d, const char *path, const char *detail)
{
        ferr(d, path, "Forbidden: %s", detail);
}

void ferr_not_supported(struct dctx *d, const char *path, const char *value,
                        const char *const *supported)
{
        cleanup_free char *q = go_quote(value);
        size_t len = 1;
        for (const char *const *s = supported; *s; s++)
                len += strlen(*s) * 4 + 4;
        cleanup_free char *list = xmalloc(len);
        list[0] = '\0';
        for (const char *const *s = supported; *s; s++) {
                cleanup_free char *sq = go_quote(*s);
                if (s != supported)
                        strcat(list, ", ");
                strcat(list, sq);
        }
        ferr(d, path, "Unsupported value: %s: supported values: %s", q, list);
}

void ferr_type(struct dctx *d, const char *path, const json_t *value, const char *want)
{
        cleanup_free char *detail = xasprintf("must be %s", want);
        ferr_decode(d, path, value, detail);
}

void ferr_decode(struct dctx *d, const char *path, const json_t *value, const char *detail)
{
        cleanup_free char *bad = json_bad_value(value);
        vec_push(&d->type_errors, xasprintf("%s: Invalid value: %s: %s", path, bad, detail));
}

json_t *jget(json_t *o, const char *key)
{
        json_t *v = json_object_get(o, key);
        return json_is_null(v) ? NULL : v;
}

bool get_string(struct dctx *d, json_t *o, const char *p, const char *key, char **out)
{
        json_t *v = jget(o, key);
        if (v == NULL)
                return false;
        if (!json_is_string(v)) {
                cleanup_free char *path = path_child(p, key);
                ferr_type(d, path, v, "a string");
                return false;
        }
        free(*out);
        *out = xstrdup(json_string_value(v));
        return true;
}

bool get_bool(struct dctx *d, json_t *o, const char *p, const char *key, bool *out)
{
        json_t *v = jget(o, key);
        if (v == NULL)
                return false;
        if (!json_is_boolean(v)) {
                cleanup_free char *path = path_child(p, key);
                ferr_type(d, path, v, "a boolean");
                return false;
        }
        *out = json_is_true(v);
        return true;
}

/* An integer of the given width; integral reals count (YAML 1e3, JSON 80.0). */
bool json_to_int(struct dctx *d, json_t *v, const char *path, int bits, int64_t *out)
{
        int64_t lo = bits == 32 ? INT32_MIN : INT64_MIN;
        int64_t hi = bits == 32 ? INT32_MAX : INT64_MAX;
        if (json_is_integer(v)) {
                int64_t i = json_integer_value(v);
                if (i < lo || i > hi) {
                        ferr_type(d, path, v, bits == 32 ? "a 32-bit integer" : "an integer");
                        return false;
                }
                *out = i;
                return true;
        }
        if (json_is_real(v)) {
                double f = json_real_value(v);
                /* 2^63 is exactly representable; anything at or above it is out */
                if (f == floor(f) && f >= (double)lo && f < -(double)INT64_MIN &&
                    (bits == 64 || f <= (double)hi)) {
                        *out = (int64_t)f;
                        return true;
                }
                ferr_type(d, path, v,
                          f == floor(f) && bits == 32 ? "a 32-bit integer" : "an integer");
                return false;
        }
        ferr_type(d, path, v, "an integer");
        return false;
}

bool get_int(struct dctx *d, json_t *o, const char *p, const char *key, int bits, int64_t *out)
{
        json_t *v = jget(o, key);
        if (v == NULL)
                return false;
        cleanup_free char *path = path_child(p, key);
        if (!json_to_int(d, v, path, bits, out))
                return false;
        if (json_is_real(v)) /* stored as the integer the apiserver would write */
                json_object_set_new(o, key, json_integer(*out));
        return true;
}

bool get_int32(struct dctx *d, json_t *o, const char *p, const char *key, int32_t *out)
{
        int64_t v;
        if (!get_int(d, o, p, key, 32, &v))
                return false;
        *out = (int32_t)v;
        return true;
}

json_t *get_object(struct dctx *d, json_t *o, const char *p, const char *key)
{
        json_t *v = jget(o, key);
        if (v == NULL)
                return NULL;
        if (!json_is_object(v)) {
                cleanup_free char *path = path_child(p, key);
                ferr_type(d, path, v, "an object");
                return NULL;
        }
        return v;
}

json_t *get_array(struct dctx *d, json_t *o, const char *p, const char *key)
{
        json_t *v = jget(o, key);
        if (v == NULL)
                return NULL;
        if (!json_is_array(v)) {
                cleanup_free char *path = path_child(p, key);
                ferr_type(d, path, v, "a list");
                return NULL;
        }
        return v;
}

void get_str_list(struct dctx *d, json_t *o, const char *p, const char *key, struct str_list *out)
{
        json_t *arr = get_array(d, o, p, key);
        if (arr == NULL)
                return;
        cleanup_free char *path = path_child(p, key);
        out->items = xcalloc(json_array_size(arr) + 1, sizeof(char *));
        size_t i;
        json_t *v;
        json_array_foreach(arr, i, v)
        {
                if (json_is_string(v)) {
                        out->items[out->n++] = xstrdup(json_string_value(v));
                } else if (json_is_null(v)) {
                        out->items[out->n++] = xstrdup(""); /* Go: null in []string is "" */
                } else {
                        cleanup_free char *ip = path_index(path, i);
                        ferr_type(d, ip, v, "a string");
                }
        }
}

void get_str_map(struct dctx *d, json_t *o, const char *p, const char *key, struct kv_list *out)
{
        json_t *m = get_object(d, o, p, key);
        if (m == NULL)
                return;
        cleanup_free char *path = path_child(p, key);
        const char *k;
        json_t *v;
        json_object_foreach(m, k, v)
        {
                if (json_is_string(v)) {
                        kv_list_add(out, k, json_string_value(v));
                } else if (json_is_null(v)) {
                        kv_list_add(out, k, "");
                } else {
                        cleanup_free char *kp = path_key(path, k);
                        ferr_type(d, kp, v, "a string");
                }
        }
}

void set_default_string(json_t *o, const char *key, const char *value)
{
        json_t *v = jget(o, key);
        /* Go's defaulting tests for the zero value: "" is unset too */
        if (v == NULL || (json_is_string(v) && json_string_length(v) == 0))
                json_object_set_new(o, key, json_string(value));
}

void set_default_int(json_t *o, const char *key, int64_t value)
{
        if (jget(o, key) == NULL)
                json_object_set_new(o, key, json_integer(value));
}
