/* SPDX-License-Identifier: Apache-2.0 */
/* Private to yamljson.c and yamljson_scalar.c. */
#ifndef CK_UTIL_YAMLJSON_INTERNAL_H
#define CK_UTIL_YAMLJSON_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum scalar_type { S_STRING, S_NULL, S_BOOL, S_INT, S_FLOAT, S_MERGE };

struct scalar {
        enum scalar_type type;
        bool b;
        int64_t i;
        double f;
        bool big; /* an integer above INT64_MAX, kept as a real */
};

/* go-yaml v2 resolve() of an untagged plain scalar. */
void yamljson_resolve_plain(const char *in, struct scalar *r);
/* "!!int", "!!str", ... */
const char *yamljson_short_tag(enum scalar_type t);
/* A new JSON value for a resolved non-string scalar; NULL for NaN/Inf. */
json_t *yamljson_scalar_to_json(const struct scalar *s);
/* !!binary: base64 decoded into a string; NULL if invalid. */
json_t *yamljson_decode_binary(const char *s, size_t len);
/* strconv.FormatFloat(v, 'g', -1, 32): how a float mapping key reads. New string. */
char *yamljson_float32_text(double v);

#endif
