/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to src/api: the decoding context (field errors collected with
 * their paths, as the apiserver's field.ErrorList), typed JSON getters,
 * name validators and the quantity type.  Not for other modules.
 */
#ifndef CK_API_INTERNAL_H
#define CK_API_INTERNAL_H

#include "api/pod.h"
#include "util/error.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Both strings set and equal. */
static inline bool str_eq(const char *a, const char *b)
{
        return a && b && strcmp(a, b) == 0;
}

/* ---- Quantities (quantity.c) ---- */

enum quantity_format { QUANTITY_DECIMAL_SI = 0, QUANTITY_BINARY_SI, QUANTITY_DECIMAL_EXPONENT };

struct quantity {
        bool negative;
        unsigned __int128 milli; /* magnitude in 1/1000, rounded up (away from zero) */
        enum quantity_format format;
};

/* The error message is upstream's, without the value. */
int quantity_parse(const char *s, struct quantity *q, ck_error_t *err);
/* Value() or MilliValue(); false if it does not fit int64. */
bool quantity_value(const struct quantity *q, bool milli, int64_t *out);
int quantity_cmp(const struct quantity *a, const struct quantity *b);
/* Canonical text, as the apiserver stores it. New string. */
char *quantity_string(const struct quantity *q);

/* ---- Decoding context (decode_util.c) ---- */

struct str_vec {
        char **items;
        size_t n, cap;
};

struct dctx {
        struct str_vec type_errors; /* wrong JSON types: reported alone, like a decode error */
        struct str_vec errors;      /* validation errors, in upstream's order */
        /* for validations that depend on the pod */
        bool has_grace;
        int64_t grace;
        const char *os_name;
};

void dctx_release(struct dctx *d);

/* Paths: "a.b", "a[1]", "a[key]".  New strings. */
char *path_child(const char *parent, const char *name);
char *path_index(const char *parent, size_t i);
char *path_key(const char *parent, const char *key);

/* Go's %q of a string.  New string. */
char *go_quote(const char *s);
/* A bad value as field.Error prints it: strings quoted, numbers bare,
 * anything else as JSON.  New string. */
char *json_bad_value(const json_t *v);

/* Field errors (field.Error bodies). */
void ferr(struct dctx *d, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void ferr_required(struct dctx *d, const char *path, const char *detail);
void ferr_invalid(struct dctx *d, const char *path, const char *value, const char *detail);
void ferr_invalid_int(struct dctx *d, const char *path, int64_t value, const char *detail);
void ferr_duplicate(struct dctx *d, const char *path, const char *value);
void ferr_not_found(struct dctx *d, const char *path, const char *value);
void ferr_forbidden(struct dctx *d, const char *path, const char *detail);
/* supported: NULL-terminated, printed in the given order. */
void ferr_not_supported(struct dctx *d, const char *path, const char *value,
                        const char *const *supported);
/* A value the JSON decoding would refuse: "must be <want>" / detail. */
void ferr_type(struct dctx *d, const char *path, const json_t *value, const char *want);
void ferr_decode(struct dctx *d, const char *path, const json_t *value, const char *detail);

/* Typed getters on object o at path p.  Absent or null: nothing is set and
 * false is returned.  A wrong type records a type error and returns false. */
json_t *jget(json_t *o, const char *key); /* NULL for absent or null */
/* v as an integer of 32 or 64 bits (integral reals accepted); a type error at path if not. */
bool json_to_int(struct dctx *d, json_t *v, const char *path, int bits, int64_t *out);
bool get_string(struct dctx *d, json_t *o, const char *p, const char *key, char **out);
bool get_bool(struct dctx *d, json_t *o, const char *p, const char *key, bool *out);
bool get_int(struct dctx *d, json_t *o, const char *p, const char *key, int bits, int64_t *out);
bool get_int32(struct dctx *d, json_t *o, const char *p, const char *key, int32_t *out);
json_t *get_object(struct dctx *d, json_t *o, const char *p, const char *key);
json_t *get_array(struct dctx *d, json_t *o, const char *p, const char *key);
void get_str_list(struct dctx *d, json_t *o, const char *p, const char *key, struct str_list *out);
/* A map of strings (labels, annotations). */
void get_str_map(struct dctx *d, json_t *o, const char *p, const char *key, struct kv_list *out);
/* Writes a default into the raw object when the key is absent or null. */
void set_default_string(json_t *o, const char *key, const char *value);
void set_default_int(json_t *o, const char *key, int64_t value);

/* ---- Name validation (validate_names.c) ---- */

/* Each appends apimachinery's messages for value to d at path. */
void validate_dns1123_label(struct dctx *d, const char *path, const char *value);
void validate_dns1123_subdomain(struct dctx *d, const char *path, const char *value);
void validate_qualified_name(struct dctx *d, const char *path, const char *value);
void validate_label_value(struct dctx *d, const char *path, const char *value);
void validate_port_name(struct dctx *d, const char *path, const char *value);
void validate_env_var_name(struct dctx *d, const char *path, const char *value);
void validate_config_map_key(struct dctx *d, const char *path, const char *value);
void validate_ip(struct dctx *d, const char *path, const char *value);
bool is_dns1123_label(const char *s);
bool is_dns1123_subdomain(const char *s);
bool is_sysctl_name(const char *s);
bool is_http_header_name(const char *s);

/* The same, with the value shown in the message different from the one
 * checked (annotation keys are checked lower-cased). */
void validate_qualified_name_shown(struct dctx *d, const char *path, const char *value,
                                   const char *shown);
/* DNS-1123 subdomain allowing '_' (RelaxedDNSSearchValidation). */
void validate_dns1123_subdomain_underscore(struct dctx *d, const char *path, const char *value);

/* ---- Pieces of the pod decoder ---- */

void str_vec_add(struct str_vec *v, const char *s);
void str_vec_release(struct str_vec *v);

struct container_ctx {
        bool init;
        bool ephemeral; /* spec.ephemeralContainers: EphemeralContainerCommon's limits */
        bool host_network;
        const char *list_path;          /* "spec.containers", "spec.initContainers", ... */
        struct str_vec *names;          /* container names so far (unique across the lists) */
        const struct str_vec *volumes;  /* names of the valid volumes */
        const char *pod_restart_policy; /* spec.restartPolicy as given (NULL: unset) */
};

/* Decodes c (part of pod->raw: defaults are written into it) into out,
 * validating it as validateContainerCommon and the list specific checks do. */
void decode_container(struct dctx *d, json_t *c, const char *path, const struct container_ctx *cc,
                      struct container *out);
/* env and envFrom of container c (decode_env.c). */
void decode_env(struct dctx *d, json_t *c, const char *path, struct container *out);
void decode_env_from(struct dctx *d, json_t *c, const char *path, struct container *out);
void decode_resources(struct dctx *d, json_t *c, const char *path, struct resource_requirements *r);
/* spec.overhead, validated as upstream's validateOverhead */
void decode_overhead(struct dctx *d, json_t *spec, const char *path, struct resource_list *out,
                     bool *has);
/* resizePolicy (validateResizePolicy) into out->resize_cpu / resize_memory. */
void decode_resize_policy(struct dctx *d, json_t *c, const char *path,
                          const char *pod_restart_policy, struct container *out);
void check_host_port_conflicts(struct dctx *d, const struct container *cs, size_t n,
                               const char *list_path);

enum probe_type { PROBE_LIVENESS, PROBE_READINESS, PROBE_STARTUP };
struct probe *decode_probe(struct dctx *d, json_t *o, const char *path, enum probe_type type);
void decode_lifecycle(struct dctx *d, json_t *o, const char *path, struct container *c);

/* Decodes v; validates the source (not the name: the caller does that). */
void decode_volume(struct dctx *d, json_t *v, const char *path, struct volume *out);

void container_release(struct container *c);
void volume_release(struct volume *v);

#endif
