/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared between the kubeletconfig*.c files only: value parsers with the
 * wording of Go's strconv/time packages (so flag errors read like pflag's),
 * list helpers, the upstream field and flag tables.
 */
#ifndef CK_CONFIG_KUBELETCONFIG_INTERNAL_H
#define CK_CONFIG_KUBELETCONFIG_INTERNAL_H

#include "config/kubeletconfig.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Upstream defaults (pkg/kubelet/apis/config/v1beta1/defaults.go). */
#define KCFG_DEFAULT_RUNTIME_ENDPOINT "unix:///run/containerd/containerd.sock"
#define KCFG_DEFAULT_ROOT_DIR "/var/lib/kubelet"
#define KCFG_DEFAULT_ADDRESS "0.0.0.0"
#define KCFG_DEFAULT_PORT 10250
#define KCFG_DEFAULT_HEALTHZ_PORT 10248
#define KCFG_DEFAULT_HEALTHZ_ADDRESS "127.0.0.1"
#define KCFG_DEFAULT_FILE_CHECK_MS 20000
#define KCFG_DEFAULT_HTTP_CHECK_MS 20000
#define KCFG_DEFAULT_SYNC_MS 60000
#define KCFG_DEFAULT_RUNTIME_TIMEOUT_MS 120000
#define KCFG_DEFAULT_MAX_PODS 110
#define KCFG_DEFAULT_NODE_STATUS_MAX_IMAGES 50
#define KCFG_DEFAULT_IMAGE_GC_HIGH 85
#define KCFG_DEFAULT_IMAGE_GC_LOW 80
#define KCFG_DEFAULT_IMAGE_MIN_GC_AGE_MS 120000
#define KCFG_DEFAULT_EVICTION_TRANSITION_MS 300000
#define KCFG_DEFAULT_VOLUME_STATS_AGG_MS 60000
#define KCFG_DEFAULT_RESOLV_CONF "/etc/resolv.conf"
#define KCFG_DEFAULT_CGROUP_DRIVER "cgroupfs"
#define KCFG_DEFAULT_POD_LOGS_DIR "/var/log/pods"
#define KCFG_DEFAULT_KUBE_API_QPS 50
#define KCFG_DEFAULT_KUBE_API_BURST 100
#define KCFG_DEFAULT_NODE_STATUS_UPDATE_MS 10000
#define KCFG_DEFAULT_NODE_STATUS_REPORT_MS 300000
#define KCFG_DEFAULT_NODE_LEASE_SECONDS 40
#define KCFG_DEFAULT_CERT_DIR "/var/lib/kubelet/pki"
#define KCFG_DEFAULT_AUTHN_CACHE_TTL_MS 120000
#define KCFG_DEFAULT_AUTHZ_ALLOWED_TTL_MS 300000
#define KCFG_DEFAULT_AUTHZ_DENIED_TTL_MS 30000
#define KCFG_DEFAULT_CONTAINER_LOG_MAX_SIZE "10Mi"
#define KCFG_DEFAULT_CONTAINER_LOG_MAX_FILES 5
#define KCFG_DEFAULT_CONTAINER_LOG_MAX_WORKERS 1
#define KCFG_DEFAULT_CONTAINER_LOG_MONITOR_INTERVAL_MS 10000

/* ---- Go-compatible value parsers (kubeletconfig_values.c) ---- */

/* time.ParseDuration, in nanoseconds.  Error: `time: invalid duration "x"`. */
int kcfg_parse_duration_ns(const char *s, int64_t *ns, ck_error_t *err);

/* strconv.ParseInt(s, 0, bits): 0x/0o/0b/0 prefixes and '_' separators.
 * Error: `strconv.ParseInt: parsing "abc": invalid syntax` (or "value out
 * of range"). */
int kcfg_parse_int(const char *s, int bits, int64_t *out, ck_error_t *err);

/* strconv.ParseUint(s, 10, bits). */
int kcfg_parse_uint10(const char *s, int bits, uint64_t *out, ck_error_t *err);

/* strconv.ParseBool: 1 t T TRUE true True 0 f F FALSE false False. */
int kcfg_parse_bool(const char *s, bool *out, ck_error_t *err);

/* Go's strconv.Quote for the bytes of s (ASCII escapes, other bytes
 * verbatim).  Returns a new string. */
char *kcfg_quote(const char *s);

/* ---- lists (kubeletconfig.c) ---- */

/* Replaces *dst with a copy of v (NULL allowed). */
void kcfg_set_str(char **dst, const char *v);
/* Appends item to the text *list (NULL: none yet), sep between items. */
void kcfg_join_append(char **list, const char *sep, const char *item);
/* Appends a copy of v to a NULL-terminated vector (*v may be NULL). */
void kcfg_strv_append(char ***v, const char *s);
size_t kcfg_strv_len(char *const *v);
void kcfg_strv_free(char ***v);
char **kcfg_strv_dup(char *const *v);
/* Sets key to value, replacing an existing key's value (a Go map). */
void kcfg_kv_set(struct kv_list *l, const char *key, const char *value);
void kcfg_kv_clear(struct kv_list *l);
void kcfg_kv_copy(struct kv_list *dst, const struct kv_list *src);

/* Go's filepath.Clean.  Returns a new string. */
char *kcfg_path_clean(const char *p);
/* filepath.Join(dir, p) when p is relative and non-empty, else a copy of p. */
char *kcfg_path_resolve(const char *dir, const char *p);

/* Deep copy (for all-or-nothing updates). */
void kcfg_copy(struct kubelet_config *dst, const struct kubelet_config *src);

/* The derived fields, computed once everything is parsed: node_name
 * (hostname override or gethostname, trimmed, lowercased) and
 * image_service_endpoint (the runtime endpoint when empty). */
int kcfg_finish(struct kubelet_config *cfg, ck_error_t *err);

/* ---- upstream tables (kubeletconfig_upstream.c) ---- */

/* Whether `field` is a top-level v1beta1 KubeletConfiguration field. */
bool kcfg_upstream_field_known(const char *field);

/* The kind of value an upstream kubelet flag that ckubelet accepts but does
 * not implement takes, so that `--flag value` parses as pflag would. */
enum kcfg_ignored_kind {
        KCFG_IGN_STRING = 0, /* any value (strings, maps, lists) */
        KCFG_IGN_BOOL,
        KCFG_IGN_INT32,
        KCFG_IGN_INT64,
        KCFG_IGN_DURATION,
};
struct kcfg_ignored_flag {
        const char *name;
        enum kcfg_ignored_kind kind;
};
/* NULL if `name` (dashes, no leading "--") is not such a flag. */
const struct kcfg_ignored_flag *kcfg_upstream_ignored_flag(const char *name);

#endif
