/* SPDX-License-Identifier: Apache-2.0 */
/*
 * YAML (or JSON, which is YAML) to a jansson tree, so one decoder serves both.
 * Scalars are typed as Kubernetes' sigs.k8s.io/yaml (YAML 1.1 via JSON)
 * would: unquoted true/false -> bool, integers -> integer, floats -> real,
 * null/~/empty -> null, quoted -> string.  Only the first document of a
 * stream is returned; anchors/aliases are resolved.
 */
#ifndef CK_UTIL_YAMLJSON_H
#define CK_UTIL_YAMLJSON_H

#include "util/error.h"

#include <jansson.h>
#include <stddef.h>

/* Returns a new reference in *out.  Errors name the line and column. */
int yamljson_parse(const char *buf, size_t len, json_t **out, ck_error_t *err);

/* Reads a whole file (at most max_bytes) and parses it. */
int yamljson_parse_file(const char *path, size_t max_bytes, json_t **out, ck_error_t *err);

/* The text Go's encoding/json writes for a JSON number (shortest round-trip
 * digits; 1000.0 -> "1000", 1e21 -> "1e+21"): how a bare number reads where
 * the API expects a string, e.g. a resource quantity.  Returns a new string. */
char *yamljson_number_text(const json_t *num);

#endif
