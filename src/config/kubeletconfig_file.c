/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The KubeletConfiguration file (kubelet.config.k8s.io/v1beta1), YAML or
 * JSON, decoded as upstream's strict decoder does
 * (pkg/kubelet/kubeletconfig/configfiles, then SetDefaults_KubeletConfiguration):
 *
 * - apiVersion and kind must be the v1beta1 KubeletConfiguration;
 * - a field upstream does not know is an error (`unknown field "fooBar"`),
 *   a field upstream knows and ckubelet does not implement is accepted and
 *   ignored (a warning at -v=1 lists them);
 * - a value of the wrong type names the file and the field;
 * - a zero value ("0s", 0, "") means "use the default", as upstream's
 *   defaulting of omitempty fields does; null means "not set";
 * - relative paths (staticPodPath, resolvConf, podLogsDir) are resolved
 *   against the directory of the file.
 *
 * Loads all or nothing: the fields are applied to a copy that replaces cfg
 * only when the whole file decoded.
 */
#include "config/kubeletconfig_internal.h"
#include "util/cleanup.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "util/yamljson.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KUBELETCONFIG_API_VERSION "kubelet.config.k8s.io/v1beta1"
#define KUBELETCONFIG_KIND "KubeletConfiguration"
#define KUBELETCONFIG_MAX_BYTES (4u << 20)

enum field_type {
        FT_STRING,   /* char * */
        FT_PATH,     /* char *, relative to the file's directory */
        FT_BOOL,     /* bool (a *bool upstream: any value counts) */
        FT_INT32,    /* int32_t */
        FT_INT64,    /* int64_t holding an int32 field */
        FT_DURATION, /* int64_t milliseconds */
        FT_STRINGS,  /* char ** NULL-terminated */
        FT_MAP,      /* struct kv_list, string values */
        FT_GATES,    /* struct kv_list, boolean values kept as "true" / "false" */
};

/* A field ckubelet implements.  `zero_str` / `zero_num`: what a zero value
 * ("" / 0 / "0s") becomes (upstream's defaulting); NULL / 0: stays zero. */
struct field_def {
        const char *name;
        enum field_type type;
        size_t off;
        const char *zero_str;
        int64_t zero_num;
};

#define F(name, type, member, zs, zn)                                                              \
        {                                                                                          \
                name, type, offsetof(struct kubelet_config, member), zs, zn                        \
        }

static const struct field_def fields[] = {
    F("staticPodPath", FT_PATH, static_pod_path, NULL, 0),
    F("podLogsDir", FT_PATH, pod_logs_dir, KCFG_DEFAULT_POD_LOGS_DIR, 0),
    F("syncFrequency", FT_DURATION, sync_frequency_ms, NULL, KCFG_DEFAULT_SYNC_MS),
    F("fileCheckFrequency", FT_DURATION, file_check_frequency_ms, NULL, KCFG_DEFAULT_FILE_CHECK_MS),
    F("httpCheckFrequency", FT_DURATION, http_check_frequency_ms, NULL, KCFG_DEFAULT_HTTP_CHECK_MS),
    F("staticPodURL", FT_STRING, static_pod_url, NULL, 0),
    F("address", FT_STRING, address, KCFG_DEFAULT_ADDRESS, 0),
    F("port", FT_INT32, port, NULL, KCFG_DEFAULT_PORT),
    F("readOnlyPort", FT_INT32, read_only_port, NULL, 0),
    F("healthzPort", FT_INT32, healthz_port, NULL, 0),
    F("healthzBindAddress", FT_STRING, healthz_bind_address, KCFG_DEFAULT_HEALTHZ_ADDRESS, 0),
    F("enableDebuggingHandlers", FT_BOOL, enable_debugging_handlers, NULL, 0),
    F("enableDebugFlagsHandler", FT_BOOL, enable_debug_flags_handler, NULL, 0),
    F("clusterDomain", FT_STRING, cluster_domain, NULL, 0),
    F("clusterDNS", FT_STRINGS, cluster_dns, NULL, 0),
    F("allowedUnsafeSysctls", FT_STRINGS, allowed_unsafe_sysctls, NULL, 0),
    F("nodeStatusUpdateFrequency", FT_DURATION, node_status_update_frequency_ms, NULL,
      KCFG_DEFAULT_NODE_STATUS_UPDATE_MS),
    /* zero: see apply_dependent_defaults */
    F("nodeStatusReportFrequency", FT_DURATION, node_status_report_frequency_ms, NULL, 0),
    F("nodeLeaseDurationSeconds", FT_INT64, node_lease_duration_seconds, NULL,
      KCFG_DEFAULT_NODE_LEASE_SECONDS),
    F("cgroupRoot", FT_STRING, cgroup_root, NULL, 0),
    F("cgroupsPerQOS", FT_BOOL, cgroups_per_qos, NULL, 0),
    F("cgroupDriver", FT_STRING, cgroup_driver, KCFG_DEFAULT_CGROUP_DRIVER, 0),
    F("runtimeRequestTimeout", FT_DURATION, runtime_request_timeout_ms, NULL,
      KCFG_DEFAULT_RUNTIME_TIMEOUT_MS),
    F("maxPods", FT_INT32, max_pods, NULL, KCFG_DEFAULT_MAX_PODS),
    /* a pointer upstream: an explicit 0 stays (no images) */
    F("nodeStatusMaxImages", FT_INT32, node_status_max_images, NULL, 0),
    F("resolvConf", FT_PATH, resolv_conf, NULL, 0),
    F("kubeAPIQPS", FT_INT32, kube_api_qps, NULL, 0),
    F("kubeAPIBurst", FT_INT32, kube_api_burst, NULL, KCFG_DEFAULT_KUBE_API_BURST),
    F("serializeImagePulls", FT_BOOL, serialize_image_pulls, NULL, 0),
    F("failSwapOn", FT_BOOL, fail_swap_on, NULL, 0),
    F("failCgroupV1", FT_BOOL, fail_cgroup_v1, NULL, 0),
    /* pointers upstream: an explicit 0 stays */
    F("imageGCHighThresholdPercent", FT_INT32, image_gc_high_threshold_percent, NULL, 0),
    F("imageGCLowThresholdPercent", FT_INT32, image_gc_low_threshold_percent, NULL, 0),
    F("imageMinimumGCAge", FT_DURATION, image_minimum_gc_age_ms, NULL,
      KCFG_DEFAULT_IMAGE_MIN_GC_AGE_MS),
    F("imageMaximumGCAge", FT_DURATION, image_maximum_gc_age_ms, NULL, 0),
    /* containerLogMaxSize is a string ("" is defaulted); the other three are
     * pointers upstream: an explicit zero stays and fails validation */
    F("containerLogMaxSize", FT_STRING, container_log_max_size, KCFG_DEFAULT_CONTAINER_LOG_MAX_SIZE,
      0),
    F("containerLogMaxFiles", FT_INT32, container_log_max_files, NULL, 0),
    F("containerLogMaxWorkers", FT_INT32, container_log_max_workers, NULL, 0),
    F("containerLogMonitorInterval", FT_DURATION, container_log_monitor_interval_ms, NULL, 0),
    F("systemReserved", FT_MAP, system_reserved, NULL, 0),
    F("kubeReserved", FT_MAP, kube_reserved, NULL, 0),
    F("evictionHard", FT_MAP, eviction_hard, NULL, 0),
    F("evictionSoft", FT_MAP, eviction_soft, NULL, 0),
    F("evictionSoftGracePeriod", FT_MAP, eviction_soft_grace, NULL, 0),
    F("evictionMinimumReclaim", FT_MAP, eviction_minimum_reclaim, NULL, 0),
    F("featureGates", FT_GATES, feature_gates, NULL, 0),
    F("evictionPressureTransitionPeriod", FT_DURATION, eviction_pressure_transition_ms, NULL,
      KCFG_DEFAULT_EVICTION_TRANSITION_MS),
    F("evictionMaxPodGracePeriod", FT_INT32, eviction_max_pod_grace_period, NULL, 0),
    F("mergeDefaultEvictionSettings", FT_BOOL, merge_default_eviction_settings, NULL, 0),
    F("shutdownGracePeriod", FT_DURATION, shutdown_grace_period_ms, NULL, 0),
    F("shutdownGracePeriodCriticalPods", FT_DURATION, shutdown_grace_period_critical_pods_ms, NULL,
      0),
    F("volumeStatsAggPeriod", FT_DURATION, volume_stats_agg_period_ms, NULL,
      KCFG_DEFAULT_VOLUME_STATS_AGG_MS),
    F("registerNode", FT_BOOL, register_node, NULL, 0),
    F("containerRuntimeEndpoint", FT_STRING, container_runtime_endpoint,
      KCFG_DEFAULT_RUNTIME_ENDPOINT, 0),
    F("imageServiceEndpoint", FT_STRING, image_service_endpoint, NULL, 0),
    F("enableServer", FT_BOOL, enable_server, NULL, 0),
    F("tlsCertFile", FT_PATH, tls_cert_file, NULL, 0),
    F("tlsPrivateKeyFile", FT_PATH, tls_private_key_file, NULL, 0),
    F("tlsMinVersion", FT_STRING, tls_min_version, NULL, 0),
    F("tlsCipherSuites", FT_STRINGS, tls_cipher_suites, NULL, 0),
    /* authentication and authorization: nested, see decode_nested */
    F("authentication.x509.clientCAFile", FT_PATH, client_ca_file, NULL, 0),
    F("authentication.anonymous.enabled", FT_BOOL, anonymous_auth, NULL, 0),
    F("authentication.webhook.enabled", FT_BOOL, authn_webhook, NULL, 0),
    F("authentication.webhook.cacheTTL", FT_DURATION, authn_webhook_cache_ttl_ms, NULL,
      KCFG_DEFAULT_AUTHN_CACHE_TTL_MS),
    F("authorization.mode", FT_STRING, authorization_mode, "Webhook", 0),
    F("authorization.webhook.cacheAuthorizedTTL", FT_DURATION, authz_cache_authorized_ttl_ms, NULL,
      KCFG_DEFAULT_AUTHZ_ALLOWED_TTL_MS),
    F("authorization.webhook.cacheUnauthorizedTTL", FT_DURATION, authz_cache_unauthorized_ttl_ms,
      NULL, KCFG_DEFAULT_AUTHZ_DENIED_TTL_MS),
};

#undef F

/* State of one decode. */
struct decoder {
        const char *name; /* for messages */
        char *dir;        /* absolute directory of the file */
        struct kubelet_config *cfg;
        bool set_report_frequency, set_update_frequency, set_serialize;
        int64_t max_parallel_image_pulls;
        char *ignored; /* "a, b, c" */
        char *unknown; /* `unknown field "x", unknown field "y"` */
};

static int type_error(struct decoder *d, const char *field, const char *what, ck_error_t *err)
{
        return ck_error_make(err, 0, "%s: %s: expected %s", d->name, field, what);
}

static int decode_int(struct decoder *d, const char *field, json_t *v, int64_t min, int64_t max,
                      int64_t *out, ck_error_t *err)
{
        if (!json_is_integer(v))
                return type_error(d, field, "an integer", err);
        json_int_t n = json_integer_value(v);
        if (n < min || n > max)
                return ck_error_make(err, 0, "%s: %s: %" JSON_INTEGER_FORMAT " is out of range",
                                     d->name, field, n);
        *out = n;
        return 0;
}

static int decode_field(struct decoder *d, const struct field_def *f, json_t *v, ck_error_t *err)
{
        char *base = (char *)d->cfg + f->off;
        switch (f->type) {
        case FT_STRING:
        case FT_PATH: {
                if (!json_is_string(v))
                        return type_error(d, f->name, "a string", err);
                const char *s = json_string_value(v);
                if (*s == '\0' && f->zero_str)
                        s = f->zero_str;
                if (f->type == FT_PATH) {
                        char *resolved = kcfg_path_resolve(d->dir, s);
                        free(*(char **)base);
                        *(char **)base = resolved;
                } else {
                        kcfg_set_str((char **)base, s);
                }
                return 0;
        }
        case FT_BOOL:
                if (!json_is_boolean(v))
                        return type_error(d, f->name, "a boolean", err);
                *(bool *)base = json_is_true(v);
                return 0;
        case FT_INT32:
        case FT_INT64: {
                int64_t n = 0;
                if (decode_int(d, f->name, v, INT32_MIN, INT32_MAX, &n, err) < 0)
                        return -1;
                if (n == 0)
                        n = f->zero_num;
                if (f->type == FT_INT32)
                        *(int32_t *)base = (int32_t)n;
                else
                        *(int64_t *)base = n;
                return 0;
        }
        case FT_DURATION: {
                if (!json_is_string(v))
                        return type_error(d, f->name, "a duration string (e.g. \"20s\")", err);
                int64_t ns = 0;
                if (kcfg_parse_duration_ns(json_string_value(v), &ns, err) < 0)
                        return ck_error_wrap(err, "%s: %s", d->name, f->name);
                *(int64_t *)base = ns == 0 ? f->zero_num : ns / 1000000;
                return 0;
        }
        case FT_STRINGS: {
                size_t i;
                json_t *item;
                if (!json_is_array(v))
                        return type_error(d, f->name, "a list of strings", err);
                json_array_foreach(v, i, item)
                {
                        if (!json_is_string(item))
                                return type_error(d, f->name, "a list of strings", err);
                }
                char ***list = (char ***)base;
                kcfg_strv_free(list);
                json_array_foreach(v, i, item)
                {
                        kcfg_strv_append(list, json_string_value(item));
                }
                return 0;
        }
        case FT_MAP: {
                const char *key;
                json_t *item;
                if (!json_is_object(v))
                        return type_error(d, f->name, "a map of strings", err);
                json_object_foreach(v, key, item)
                {
                        if (!json_is_string(item))
                                return ck_error_make(err, 0, "%s: %s.%s: expected a string",
                                                     d->name, f->name, key);
                }
                struct kv_list *l = (struct kv_list *)base;
                kcfg_kv_clear(l);
                json_object_foreach(v, key, item)
                {
                        kcfg_kv_set(l, key, json_string_value(item));
                }
                return 0;
        }
        case FT_GATES: {
                const char *key;
                json_t *item;
                if (!json_is_object(v))
                        return type_error(d, f->name, "a map of booleans", err);
                json_object_foreach(v, key, item)
                {
                        if (!json_is_boolean(item) && !json_is_null(item))
                                return ck_error_make(err, 0, "%s: %s.%s: expected a boolean",
                                                     d->name, f->name, key);
                }
                struct kv_list *l = (struct kv_list *)base;
                kcfg_kv_clear(l);
                json_object_foreach(v, key, item)
                {
                        /* null: false, as encoding/json leaves a bool */
                        kcfg_kv_set(l, key, json_is_true(item) ? "true" : "false");
                }
                return 0;
        }
        }
        return 0;
}

/* logging (component-base LoggingConfiguration): verbosity is honoured (-v
 * still wins), everything else is ignored. */
static int decode_logging(struct decoder *d, json_t *v, ck_error_t *err)
{
        const char *key;
        json_t *item;
        if (!json_is_object(v))
                return type_error(d, "logging", "an object", err);
        json_object_foreach(v, key, item)
        {
                if (strcmp(key, "verbosity") == 0) {
                        int64_t n = 0;
                        if (json_is_null(item))
                                continue;
                        if (decode_int(d, "logging.verbosity", item, 0, INT32_MAX, &n, err) < 0)
                                return -1;
                        d->cfg->verbosity = (int)n;
                } else {
                        char *name = xasprintf("logging.%s", key);
                        kcfg_join_append(&d->ignored, ", ", name);
                        free(name);
                }
        }
        return 0;
}

/* a strict decoding error for a member the schema does not have */
static void add_unknown(struct decoder *d, const char *key)
{
        char *q = kcfg_quote(key);
        char *msg = xasprintf("unknown field %s", q);
        kcfg_join_append(&d->unknown, ", ", msg);
        free(msg);
        free(q);
}

/* shutdownGracePeriodByPodPriority: [{priority, shutdownGracePeriodSeconds}] */
static int decode_shutdown_by_priority(struct decoder *d, json_t *v, ck_error_t *err)
{
        static const char *const field = "shutdownGracePeriodByPodPriority";
        if (json_is_null(v))
                return 0;
        if (!json_is_array(v))
                return type_error(d, field, "an array", err);
        struct kubelet_config *cfg = d->cfg;
        free(cfg->shutdown_by_priority);
        cfg->n_shutdown_by_priority = json_array_size(v);
        cfg->shutdown_by_priority =
            xcalloc(cfg->n_shutdown_by_priority + 1, sizeof(*cfg->shutdown_by_priority));
        size_t i;
        json_t *item;
        json_array_foreach(v, i, item)
        {
                if (!json_is_object(item))
                        return type_error(d, field, "an array of objects", err);
                const char *key;
                json_t *member;
                json_object_foreach(item, key, member)
                {
                        int64_t n = 0;
                        if (strcmp(key, "priority") == 0) {
                                if (decode_int(d, "shutdownGracePeriodByPodPriority.priority",
                                               member, INT32_MIN, INT32_MAX, &n, err) < 0)
                                        return -1;
                                cfg->shutdown_by_priority[i].priority = (int32_t)n;
                        } else if (strcmp(key, "shutdownGracePeriodSeconds") == 0) {
                                if (decode_int(d,
                                               "shutdownGracePeriodByPodPriority."
                                               "shutdownGracePeriodSeconds",
                                               member, INT64_MIN, INT64_MAX, &n, err) < 0)
                                        return -1;
                                cfg->shutdown_by_priority[i].shutdown_grace_period_seconds = n;
                        } else {
                                /* sigs.k8s.io/json's path: the index, then the member */
                                char *path =
                                    xasprintf("shutdownGracePeriodByPodPriority[%zu].%s", i, key);
                                add_unknown(d, path);
                                free(path);
                        }
                }
        }
        return 0;
}

static const struct field_def *find_field(const char *name)
{
        for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
                if (strcmp(fields[i].name, name) == 0)
                        return &fields[i];
        return NULL;
}

/* authentication / authorization: objects of objects whose leaves are the
 * dotted names in fields[]; an unknown member anywhere is a strict decoding
 * error naming its whole path. */
static int decode_nested(struct decoder *d, const char *path, json_t *v, ck_error_t *err)
{
        if (!json_is_object(v))
                return type_error(d, path, "an object", err);
        const char *key;
        json_t *item;
        json_object_foreach(v, key, item)
        {
                cleanup_free char *sub = xasprintf("%s.%s", path, key);
                const struct field_def *f = find_field(sub);
                int ret = 0;
                if (json_is_null(item))
                        continue;
                if (f != NULL) {
                        ret = decode_field(d, f, item, err);
                } else if (strcmp(sub, "authentication.x509") == 0 ||
                           strcmp(sub, "authentication.webhook") == 0 ||
                           strcmp(sub, "authentication.anonymous") == 0 ||
                           strcmp(sub, "authorization.webhook") == 0) {
                        ret = decode_nested(d, sub, item, err);
                } else {
                        add_unknown(d, sub);
                }
                if (ret < 0)
                        return -1;
        }
        return 0;
}

static bool duration_nonzero(const char *s)
{
        int64_t ns = 0;
        ck_error_t ignored = NULL;
        int ret = kcfg_parse_duration_ns(s, &ns, &ignored);
        ck_error_release(&ignored);
        return ret == 0 && ns != 0;
}

static int decode_member(struct decoder *d, const char *key, json_t *v, ck_error_t *err)
{
        if (strcmp(key, "apiVersion") == 0 || strcmp(key, "kind") == 0)
                return 0; /* checked before */
        if (json_is_null(v))
                return 0; /* Go's decoder leaves the field unset */
        for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
                /* dotted names are nested members (decode_nested), never keys */
                if (strcmp(fields[i].name, key) != 0 || strchr(fields[i].name, '.'))
                        continue;
                if (strcmp(key, "nodeStatusReportFrequency") == 0)
                        d->set_report_frequency = true;
                if (strcmp(key, "serializeImagePulls") == 0)
                        d->set_serialize = true;
                if (decode_field(d, &fields[i], v, err) < 0)
                        return -1;
                /* "explicitly set" means non-zero upstream */
                if (strcmp(key, "nodeStatusUpdateFrequency") == 0)
                        d->set_update_frequency = duration_nonzero(json_string_value(v));
                return 0;
        }
        if (strcmp(key, "logging") == 0)
                return decode_logging(d, v, err);
        if (strcmp(key, "shutdownGracePeriodByPodPriority") == 0)
                return decode_shutdown_by_priority(d, v, err);
        if (strcmp(key, "authentication") == 0 || strcmp(key, "authorization") == 0)
                return decode_nested(d, key, v, err);
        if (strcmp(key, "userNamespaces") == 0) {
                if (!json_is_object(v))
                        return type_error(d, key, "an object", err);
                const char *k;
                json_t *e;
                json_object_foreach(v, k, e)
                {
                        if (strcmp(k, "idsPerPod") != 0) {
                                cleanup_free char *f = xasprintf("userNamespaces.%s", k);
                                add_unknown(d, f);
                        } else if (!json_is_null(e)) {
                                if (decode_int(d, "userNamespaces.idsPerPod", e, INT64_MIN,
                                               INT64_MAX, &d->cfg->userns_ids_per_pod, err) < 0)
                                        return -1;
                                d->cfg->has_userns_ids_per_pod = true;
                        }
                }
                return 0;
        }
        if (kcfg_upstream_field_known(key)) {
                if (strcmp(key, "maxParallelImagePulls") == 0 &&
                    decode_int(d, key, v, INT32_MIN, INT32_MAX, &d->max_parallel_image_pulls, err) <
                        0)
                        return -1;
                kcfg_join_append(&d->ignored, ", ", key);
                return 0;
        }
        add_unknown(d, key);
        return 0;
}

/* Defaults that depend on other fields (SetDefaults_KubeletConfiguration). */
static void apply_dependent_defaults(struct decoder *d, const struct kubelet_config *before)
{
        struct kubelet_config *cfg = d->cfg;
        /* nodeStatusReportFrequency defaults to an explicitly set
         * nodeStatusUpdateFrequency, else to 5m. */
        if (cfg->node_status_report_frequency_ms == 0) {
                if (d->set_update_frequency)
                        cfg->node_status_report_frequency_ms = cfg->node_status_update_frequency_ms;
                else
                        cfg->node_status_report_frequency_ms = KCFG_DEFAULT_NODE_STATUS_REPORT_MS;
        } else if (!d->set_report_frequency && d->set_update_frequency &&
                   before->node_status_report_frequency_ms == KCFG_DEFAULT_NODE_STATUS_REPORT_MS) {
                cfg->node_status_report_frequency_ms = cfg->node_status_update_frequency_ms;
        }
        /* serializeImagePulls defaults to false when maxParallelImagePulls > 1 */
        if (!d->set_serialize && d->max_parallel_image_pulls >= 2)
                cfg->serialize_image_pulls = false;
}

static int check_string_member(struct decoder *d, json_t *root, const char *key, const char *want,
                               ck_error_t *err)
{
        json_t *v = json_object_get(root, key);
        if (v == NULL || json_is_null(v))
                return ck_error_make(err, 0, "%s: missing %s, expected \"%s\"", d->name, key, want);
        if (!json_is_string(v))
                return type_error(d, key, "a string", err);
        if (strcmp(json_string_value(v), want) != 0) {
                char *q = kcfg_quote(json_string_value(v));
                ck_error_make(err, 0, "%s: %s %s is not \"%s\"", d->name, key, q, want);
                free(q);
                return -1;
        }
        return 0;
}

/* filepath.Dir(filepath.Abs(name)) */
static char *config_dir(const char *name)
{
        char *abs;
        if (name[0] == '/') {
                abs = xstrdup(name);
        } else {
                char *cwd = getcwd(NULL, 0);
                abs = xasprintf("%s/%s", cwd ? cwd : ".", name);
                free(cwd);
        }
        char *slash = strrchr(abs, '/');
        if (slash == abs)
                slash[1] = '\0';
        else if (slash)
                *slash = '\0';
        char *dir = kcfg_path_clean(abs);
        free(abs);
        return dir;
}

/* upstream loadConfigFile: evictionHard absent from the file is
 * DefaultEvictionHard; given, with mergeDefaultEvictionSettings, the
 * defaults of the signals it leaves out are added */
const char *const kubelet_config_default_eviction_hard[][2] = {
    {"memory.available", "100Mi"}, {"nodefs.available", "10%"},  {"nodefs.inodesFree", "5%"},
    {"imagefs.available", "15%"},  {"imagefs.inodesFree", "5%"},
};
const size_t kubelet_config_n_default_eviction_hard =
    sizeof(kubelet_config_default_eviction_hard) / sizeof(kubelet_config_default_eviction_hard[0]);

static void default_eviction_hard(struct kubelet_config *cfg, bool given)
{
        const char *const(*defaults)[2] = kubelet_config_default_eviction_hard;
        if (given && !cfg->merge_default_eviction_settings)
                return;
        for (size_t i = 0; i < kubelet_config_n_default_eviction_hard; i++) {
                bool have = false;
                for (size_t j = 0; j < cfg->eviction_hard.n && !have; j++)
                        have = strcmp(cfg->eviction_hard.items[j].key, defaults[i][0]) == 0;
                if (!have)
                        kcfg_kv_set(&cfg->eviction_hard, defaults[i][0], defaults[i][1]);
        }
}

static int decode_tree(struct kubelet_config *cfg, const char *name, json_t *root, ck_error_t *err)
{
        if (!json_is_object(root))
                return ck_error_make(err, 0, "%s: expected a KubeletConfiguration object", name);

        struct decoder d = {.name = name, .max_parallel_image_pulls = 0};
        if (check_string_member(&d, root, "apiVersion", KUBELETCONFIG_API_VERSION, err) < 0 ||
            check_string_member(&d, root, "kind", KUBELETCONFIG_KIND, err) < 0)
                return -1;

        struct kubelet_config work;
        kcfg_copy(&work, cfg);
        d.cfg = &work;
        /* a file starts from v1beta1's secure-port defaults, not the command
         * line's legacy ones (flags given still win: they are applied after) */
        work.anonymous_auth = false;
        work.authn_webhook = true;
        kcfg_set_str(&work.authorization_mode, "Webhook");
        d.dir = config_dir(name);

        int ret = 0;
        const char *key;
        json_t *v;
        json_object_foreach(root, key, v)
        {
                ret = decode_member(&d, key, v, err);
                if (ret < 0)
                        break;
        }
        if (ret == 0 && d.unknown)
                ret = ck_error_make(err, 0, "%s: strict decoding error: %s", name, d.unknown);
        if (ret == 0) {
                apply_dependent_defaults(&d, cfg);
                default_eviction_hard(&work, json_object_get(root, "evictionHard") != NULL);
                if (d.ignored && LOG_V(1)) {
                        char *qpath = kcfg_quote(name), *qfields = kcfg_quote(d.ignored);
                        LOG_WARN("Ignoring KubeletConfiguration fields that ckubelet does not "
                                 "implement",
                                 "path=%s fields=%s", qpath, qfields);
                        free(qpath);
                        free(qfields);
                }
                kubelet_config_release(cfg);
                *cfg = work;
        } else {
                kubelet_config_release(&work);
        }
        free(d.dir);
        free(d.ignored);
        free(d.unknown);
        return ret;
}

int kubelet_config_load_buffer(struct kubelet_config *cfg, const char *name, const char *buf,
                               size_t len, ck_error_t *err)
{
        cleanup_json json_t *root = NULL;
        if (yamljson_parse(buf, len, &root, err) < 0)
                return ck_error_wrap(err, "%s", name);
        return decode_tree(cfg, name, root, err);
}

int kubelet_config_load_file(struct kubelet_config *cfg, const char *path, ck_error_t *err)
{
        cleanup_json json_t *root = NULL;
        if (yamljson_parse_file(path, KUBELETCONFIG_MAX_BYTES, &root, err) < 0)
                return -1; /* the message names the file */
        return decode_tree(cfg, path, root, err);
}
