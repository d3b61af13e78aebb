/* SPDX-License-Identifier: Apache-2.0 */
/*
 * /configz: struct kubelet_config as upstream's encoding/json marshals the
 * v1beta1 KubeletConfiguration (k8s.io/kubelet/config/v1beta1/types.go) that
 * setConfigz converts the internal configuration into.  The members are
 * added in v1beta1's field order, so that a dump without JSON_SORT_KEYS
 * reads as upstream's.
 */
#include "config/configz.h"
#include "util/goduration.h"
#include "util/xalloc.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* component-base/configz.New("kubeletconfig") in cmd/kubelet/app/server.go */
#define CONFIGZ_NAME "kubeletconfig"

static void json_oom(void)
{
        fputs("ckubelet: out of memory\n", stderr);
        abort();
}

static json_t *must(json_t *v)
{
        if (v == NULL)
                json_oom();
        return v;
}

/* Steals v. */
static void put(json_t *obj, const char *key, json_t *v)
{
        if (json_object_set_new(obj, key, must(v)) < 0)
                json_oom();
}

/* The length of the valid UTF-8 sequence at s, or 0 (utf8.DecodeRuneInString
 * returning RuneError, 1: bad lead byte, overlong form, surrogate, above
 * U+10FFFF, truncated). */
static size_t utf8_seq_len(const unsigned char *s)
{
        unsigned char c = s[0], lo = 0x80, hi = 0xbf;
        size_t n;
        if (c < 0x80)
                return 1;
        if (c >= 0xc2 && c <= 0xdf) {
                n = 2;
        } else if (c >= 0xe0 && c <= 0xef) {
                n = 3;
                if (c == 0xe0)
                        lo = 0xa0;
                else if (c == 0xed)
                        hi = 0x9f;
        } else if (c >= 0xf0 && c <= 0xf4) {
                n = 4;
                if (c == 0xf0)
                        lo = 0x90;
                else if (c == 0xf4)
                        hi = 0x8f;
        } else {
                return 0;
        }
        if (s[1] < lo || s[1] > hi)
                return 0;
        for (size_t i = 2; i < n; i++)
                if (s[i] < 0x80 || s[i] > 0xbf)
                        return 0;
        return n;
}

/* A copy of s with each byte that does not start a valid UTF-8 sequence
 * replaced by U+FFFD, as encoding/json's encodeState.string does. */
static char *utf8_sanitize(const char *s)
{
        size_t len = strlen(s), w = 0;
        char *out = xmalloc(len * 3 + 1);
        for (size_t r = 0; r < len;) {
                size_t n = utf8_seq_len((const unsigned char *)s + r);
                if (n == 0) {
                        memcpy(out + w, "\xef\xbf\xbd", 3);
                        w += 3;
                        r++;
                        continue;
                }
                memcpy(out + w, s + r, n);
                w += n;
                r += n;
        }
        out[w] = '\0';
        return out;
}

/* A JSON string of s (NULL reads as ""), made valid UTF-8. */
static json_t *go_string(const char *s)
{
        if (s == NULL)
                s = "";
        json_t *v = json_string(s);
        if (v != NULL)
                return v;
        /* invalid UTF-8 (or out of memory: then must() aborts) */
        char *clean = utf8_sanitize(s);
        v = json_string(clean);
        free(clean);
        return must(v);
}

static bool empty(const char *s)
{
        return s == NULL || *s == '\0';
}

/* a string without omitempty, or a *string (always set by the conversion) */
static void put_string(json_t *obj, const char *key, const char *s)
{
        put(obj, key, go_string(s));
}

/* a string with omitempty */
static void put_string_omitempty(json_t *obj, const char *key, const char *s)
{
        if (!empty(s))
                put_string(obj, key, s);
}

/* an int32 with omitempty */
static void put_int_omitempty(json_t *obj, const char *key, int64_t n)
{
        if (n != 0)
                put(obj, key, json_integer(n));
}

/* metav1.Duration: a struct, so present even with omitempty */
static void put_duration(json_t *obj, const char *key, int64_t ms)
{
        char buf[64];
        go_duration_format_ms(ms, buf, sizeof(buf));
        put(obj, key, json_string(buf));
}

/* a []string with omitempty */
static void put_strings_omitempty(json_t *obj, const char *key, char *const *v)
{
        if (v == NULL || v[0] == NULL)
                return;
        json_t *arr = must(json_array());
        for (size_t i = 0; v[i]; i++)
                if (json_array_append_new(arr, go_string(v[i])) < 0)
                        json_oom();
        put(obj, key, arr);
}

static int kv_cmp(const void *a, const void *b)
{
        const struct kv *x = *(const struct kv *const *)a, *y = *(const struct kv *const *)b;
        return strcmp(x->key, y->key);
}

/* A map with omitempty; encoding/json sorts the keys.  The values are
 * strings (map[string]string), or booleans "true"/"false" (featureGates,
 * map[string]bool). */
static void put_map_omitempty_as(json_t *obj, const char *key, const struct kv_list *l,
                                 bool booleans)
{
        if (l->n == 0)
                return;
        const struct kv **sorted = xcalloc(l->n, sizeof(*sorted));
        for (size_t i = 0; i < l->n; i++)
                sorted[i] = &l->items[i];
        qsort(sorted, l->n, sizeof(*sorted), kv_cmp);
        json_t *map = must(json_object());
        for (size_t i = 0; i < l->n; i++) {
                /* jansson, like encoding/json, wants UTF-8 keys too */
                char *k = utf8_sanitize(sorted[i]->key);
                put(map, k,
                    booleans ? json_boolean(strcmp(sorted[i]->value, "true") == 0)
                             : go_string(sorted[i]->value));
                free(k);
        }
        free(sorted);
        put(obj, key, map);
}

static void put_map_omitempty(json_t *obj, const char *key, const struct kv_list *l)
{
        put_map_omitempty_as(obj, key, l, false);
}

/* filepath.Join(dir, name) for the self-signed pair's paths (dir is not
 * empty). */
static char *cert_path(const char *dir, const char *name)
{
        size_t len = strlen(dir);
        while (len > 1 && dir[len - 1] == '/')
                len--;
        if (len == 1 && dir[0] == '/')
                return xasprintf("/%s", name);
        return xasprintf("%.*s/%s", (int)len, dir, name);
}

/* TLS: InitializeTLS fills in the self-signed pair (ServerTLSBootstrap,
 * which ckubelet lacks, is false) before configz is set. */
static void put_tls_files(json_t *kc, const struct kubelet_config *cfg)
{
        if (empty(cfg->tls_cert_file) && empty(cfg->tls_private_key_file) &&
            !empty(cfg->cert_dir)) {
                char *crt = cert_path(cfg->cert_dir, "kubelet.crt");
                char *key = cert_path(cfg->cert_dir, "kubelet.key");
                put_string(kc, "tlsCertFile", crt);
                put_string(kc, "tlsPrivateKeyFile", key);
                free(crt);
                free(key);
                return;
        }
        put_string_omitempty(kc, "tlsCertFile", cfg->tls_cert_file);
        put_string_omitempty(kc, "tlsPrivateKeyFile", cfg->tls_private_key_file);
}

/* KubeletAuthentication: x509, webhook and anonymous are plain structs
 * (no omitempty), the Enabled members *bool (always set). */
static json_t *authentication_json(const struct kubelet_config *cfg)
{
        json_t *authn = must(json_object());
        json_t *x509 = must(json_object());
        put_string_omitempty(x509, "clientCAFile", cfg->client_ca_file);
        put(authn, "x509", x509);
        json_t *webhook = must(json_object());
        put(webhook, "enabled", json_boolean(cfg->authn_webhook));
        put_duration(webhook, "cacheTTL", cfg->authn_webhook_cache_ttl_ms);
        put(authn, "webhook", webhook);
        json_t *anonymous = must(json_object());
        put(anonymous, "enabled", json_boolean(cfg->anonymous_auth));
        put(authn, "anonymous", anonymous);
        return authn;
}

static json_t *authorization_json(const struct kubelet_config *cfg)
{
        json_t *authz = must(json_object());
        put_string_omitempty(authz, "mode", cfg->authorization_mode);
        json_t *webhook = must(json_object());
        put_duration(webhook, "cacheAuthorizedTTL", cfg->authz_cache_authorized_ttl_ms);
        put_duration(webhook, "cacheUnauthorizedTTL", cfg->authz_cache_unauthorized_ttl_ms);
        put(authz, "webhook", webhook);
        return authz;
}

/* The v1beta1 KubeletConfiguration, members in types.go order. */
static json_t *kubeletconfiguration_json(const struct kubelet_config *cfg)
{
        json_t *kc = must(json_object());
        put(kc, "enableServer", json_boolean(cfg->enable_server));
        put_string_omitempty(kc, "staticPodPath", cfg->static_pod_path);
        put_string_omitempty(kc, "podLogsDir", cfg->pod_logs_dir);
        put_duration(kc, "syncFrequency", cfg->sync_frequency_ms);
        put_duration(kc, "fileCheckFrequency", cfg->file_check_frequency_ms);
        put_duration(kc, "httpCheckFrequency", cfg->http_check_frequency_ms);
        put_string_omitempty(kc, "staticPodURL", cfg->static_pod_url);
        put_string_omitempty(kc, "address", cfg->address);
        put_int_omitempty(kc, "port", cfg->port);
        put_int_omitempty(kc, "readOnlyPort", cfg->read_only_port);
        put_tls_files(kc, cfg);
        put_strings_omitempty(kc, "tlsCipherSuites", cfg->tls_cipher_suites);
        put_string_omitempty(kc, "tlsMinVersion", cfg->tls_min_version);
        put(kc, "authentication", authentication_json(cfg));
        put(kc, "authorization", authorization_json(cfg));
        put(kc, "enableDebuggingHandlers", json_boolean(cfg->enable_debugging_handlers));
        put(kc, "healthzPort", json_integer(cfg->healthz_port));
        put_string_omitempty(kc, "healthzBindAddress", cfg->healthz_bind_address);
        put_string_omitempty(kc, "clusterDomain", cfg->cluster_domain);
        put_strings_omitempty(kc, "clusterDNS", cfg->cluster_dns);
        put_strings_omitempty(kc, "allowedUnsafeSysctls", cfg->allowed_unsafe_sysctls);
        put_duration(kc, "nodeStatusUpdateFrequency", cfg->node_status_update_frequency_ms);
        put_duration(kc, "nodeStatusReportFrequency", cfg->node_status_report_frequency_ms);
        put_int_omitempty(kc, "nodeLeaseDurationSeconds", cfg->node_lease_duration_seconds);
        put_duration(kc, "imageMinimumGCAge", cfg->image_minimum_gc_age_ms);
        put_duration(kc, "imageMaximumGCAge", cfg->image_maximum_gc_age_ms);
        put(kc, "imageGCHighThresholdPercent", json_integer(cfg->image_gc_high_threshold_percent));
        put(kc, "imageGCLowThresholdPercent", json_integer(cfg->image_gc_low_threshold_percent));
        put_duration(kc, "volumeStatsAggPeriod", cfg->volume_stats_agg_period_ms);
        put_string_omitempty(kc, "cgroupRoot", cfg->cgroup_root);
        put(kc, "cgroupsPerQOS", json_boolean(cfg->cgroups_per_qos));
        put_string_omitempty(kc, "cgroupDriver", cfg->cgroup_driver);
        put_duration(kc, "runtimeRequestTimeout", cfg->runtime_request_timeout_ms);
        put_int_omitempty(kc, "maxPods", cfg->max_pods);
        put_string(kc, "resolvConf", cfg->resolv_conf);
        put(kc, "nodeStatusMaxImages", json_integer(cfg->node_status_max_images));
        put(kc, "kubeAPIQPS", json_integer(cfg->kube_api_qps));
        put_int_omitempty(kc, "kubeAPIBurst", cfg->kube_api_burst);
        put(kc, "serializeImagePulls", json_boolean(cfg->serialize_image_pulls));
        put_map_omitempty(kc, "evictionHard", &cfg->eviction_hard);
        put_map_omitempty(kc, "evictionSoft", &cfg->eviction_soft);
        put_map_omitempty(kc, "evictionSoftGracePeriod", &cfg->eviction_soft_grace);
        put_duration(kc, "evictionPressureTransitionPeriod", cfg->eviction_pressure_transition_ms);
        put_int_omitempty(kc, "evictionMaxPodGracePeriod", cfg->eviction_max_pod_grace_period);
        put_map_omitempty(kc, "evictionMinimumReclaim", &cfg->eviction_minimum_reclaim);
        put(kc, "mergeDefaultEvictionSettings", json_boolean(cfg->merge_default_eviction_settings));
        put_map_omitempty_as(kc, "featureGates", &cfg->feature_gates, true);
        put(kc, "failSwapOn", json_boolean(cfg->fail_swap_on));
        /* a string with omitempty, then three pointers (always set) */
        put_string_omitempty(kc, "containerLogMaxSize", cfg->container_log_max_size);
        put(kc, "containerLogMaxFiles", json_integer(cfg->container_log_max_files));
        put(kc, "containerLogMaxWorkers", json_integer(cfg->container_log_max_workers));
        put_duration(kc, "containerLogMonitorInterval", cfg->container_log_monitor_interval_ms);
        put_map_omitempty(kc, "systemReserved", &cfg->system_reserved);
        put_map_omitempty(kc, "kubeReserved", &cfg->kube_reserved);
        /* LoggingConfiguration: verbosity (no omitempty) is the only member
         * ckubelet has; -v sets it, as logsapi.AddFlags binds -v upstream */
        json_t *logging = must(json_object());
        put(logging, "verbosity", json_integer(cfg->verbosity));
        put(kc, "logging", logging);
        put_duration(kc, "shutdownGracePeriod", cfg->shutdown_grace_period_ms);
        put_duration(kc, "shutdownGracePeriodCriticalPods",
                     cfg->shutdown_grace_period_critical_pods_ms);
        if (cfg->n_shutdown_by_priority) {
                json_t *list = json_array();
                for (size_t i = 0; i < cfg->n_shutdown_by_priority; i++)
                        json_array_append_new(list,
                                              json_pack("{s:i, s:I}", "priority",
                                                        (int)cfg->shutdown_by_priority[i].priority,
                                                        "shutdownGracePeriodSeconds",
                                                        (json_int_t)cfg->shutdown_by_priority[i]
                                                            .shutdown_grace_period_seconds));
                put(kc, "shutdownGracePeriodByPodPriority", list);
        }
        put(kc, "enableDebugFlagsHandler", json_boolean(cfg->enable_debug_flags_handler));
        put(kc, "registerNode", json_boolean(cfg->register_node));
        put_string(kc, "containerRuntimeEndpoint", cfg->container_runtime_endpoint);
        if (!empty(cfg->image_service_endpoint) &&
            (empty(cfg->container_runtime_endpoint) ||
             strcmp(cfg->image_service_endpoint, cfg->container_runtime_endpoint) != 0))
                put_string(kc, "imageServiceEndpoint", cfg->image_service_endpoint);
        put(kc, "failCgroupV1", json_boolean(cfg->fail_cgroup_v1));
        return kc;
}

json_t *configz_json(const struct kubelet_config *cfg)
{
        json_t *doc = must(json_object());
        put(doc, CONFIGZ_NAME, kubeletconfiguration_json(cfg));
        return doc;
}
