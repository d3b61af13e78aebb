/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kubelet's configuration: command line flags with the upstream names and
 * defaults, and the KubeletConfiguration file (--config,
 * kubelet.config.k8s.io/v1beta1, the same field names).  As upstream, flags
 * given on the command line override the file.
 *
 * Durations are milliseconds.  Strings are owned by the struct.
 */
#ifndef CK_CONFIG_KUBELETCONFIG_H
#define CK_CONFIG_KUBELETCONFIG_H

#include "api/pod.h"
#include "util/error.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* a shutdownGracePeriodByPodPriority entry */
struct kcfg_shutdown_priority {
        int32_t priority;
        int64_t shutdown_grace_period_seconds;
};

struct kubelet_config {
        /* flags only (not in KubeletConfiguration) */
        char *config_file;                /* --config */
        char *container_runtime_endpoint; /* also a config field; default
                                             unix:///run/containerd/containerd.sock */
        char *image_service_endpoint;     /* default: the runtime endpoint */
        char *root_dir;                   /* --root-dir, default /var/lib/kubelet */
        char *hostname_override;          /* --hostname-override */
        char *node_name;                  /* derived: override or hostname, lowercased */
        char *kubeconfig;                 /* --kubeconfig */
        bool register_node;               /* --register-node, default true */
        struct kv_list node_labels;       /* --node-labels k=v,... */
        char *node_ip;                    /* --node-ip */
        /* container garbage collection (deprecated flags upstream, no
         * KubeletConfiguration fields): the pod's dead containers kept */
        int64_t minimum_container_ttl_ms; /* --minimum-container-ttl-duration, 0 */
        int32_t max_dead_per_container;   /* --maximum-dead-containers-per-container, 1 */
        int32_t max_dead_containers;      /* --maximum-dead-containers, -1: no limit */
        char *cert_dir;                   /* --cert-dir, default /var/lib/kubelet/pki */
        int verbosity;                    /* -v / --v */

        /* KubeletConfiguration fields (flag name / field name) */
        char *static_pod_path;              /* --pod-manifest-path / staticPodPath */
        char *static_pod_url;               /* --manifest-url / staticPodURL */
        char *address;                      /* --address / address, default 0.0.0.0 */
        int32_t port;                       /* --port / port, default 10250 */
        int32_t read_only_port;             /* --read-only-port / readOnlyPort, default 0 (off) */
        int32_t healthz_port;               /* --healthz-port / healthzPort, 10248 (0: off) */
        char *healthz_bind_address;         /* --healthz-bind-address, 127.0.0.1 */
        bool enable_debugging_handlers;     /* --enable-debugging-handlers, true: logs, exec... */
        bool enable_debug_flags_handler;    /* enableDebugFlagsHandler, true: /debug/flags/v */
        int64_t file_check_frequency_ms;    /* --file-check-frequency / fileCheckFrequency, 20s */
        int64_t http_check_frequency_ms;    /* httpCheckFrequency, 20s */
        int64_t sync_frequency_ms;          /* --sync-frequency / syncFrequency, 1m */
        int64_t runtime_request_timeout_ms; /* --runtime-request-timeout, 2m */
        int32_t max_pods;                   /* --max-pods / maxPods, 110 */
        /* --node-status-max-images / nodeStatusMaxImages, 50 (-1: all) */
        int32_t node_status_max_images;
        char **cluster_dns;                      /* --cluster-dns / clusterDNS, NULL-terminated */
        char **allowed_unsafe_sysctls;           /* --allowed-unsafe-sysctls, NULL-terminated */
        char *cluster_domain;                    /* --cluster-domain / clusterDomain */
        char *resolv_conf;                       /* --resolv-conf / resolvConf, /etc/resolv.conf */
        char *cgroup_root;                       /* --cgroup-root / cgroupRoot, "" = "/" */
        bool cgroups_per_qos;                    /* --cgroups-per-qos / cgroupsPerQOS, true */
        char *cgroup_driver;                     /* --cgroup-driver / cgroupDriver, cgroupfs */
        char *pod_logs_dir;                      /* podLogsDir, /var/log/pods */
        char *pod_infra_container_image;         /* informational; the runtime's sandbox image */
        bool serialize_image_pulls;              /* serializeImagePulls, true */
        int32_t kube_api_qps;                    /* --kube-api-qps / kubeAPIQPS, 50 */
        int32_t kube_api_burst;                  /* --kube-api-burst / kubeAPIBurst, 100 */
        int64_t node_status_update_frequency_ms; /* nodeStatusUpdateFrequency, 10s */
        int64_t node_status_report_frequency_ms; /* nodeStatusReportFrequency, 5m */
        int64_t node_lease_duration_seconds;     /* nodeLeaseDurationSeconds, 40 */
        struct kv_list system_reserved; /* --system-reserved / systemReserved: cpu=, memory= */
        struct kv_list kube_reserved;   /* --kube-reserved / kubeReserved */
        bool fail_swap_on;              /* --fail-swap-on / failSwapOn, true */
        bool fail_cgroup_v1;            /* --fail-cgroupv1 / failCgroupV1, true */
        /* image garbage collection (src/images/image_gc.h) */
        int32_t image_gc_high_threshold_percent; /* --image-gc-high-threshold, 85 */
        int32_t image_gc_low_threshold_percent;  /* --image-gc-low-threshold, 80 */
        int64_t image_minimum_gc_age_ms;         /* --minimum-image-ttl-duration, 2m */
        int64_t image_maximum_gc_age_ms;         /* imageMaximumGCAge, 0: off */
        /* eviction (src/eviction): evictionHard with a config file and no
         * evictionHard is upstream's DefaultEvictionHard (and with
         * mergeDefaultEvictionSettings, its signals the file leaves out);
         * without a config file, no threshold, as upstream */
        struct kv_list eviction_hard;            /* --eviction-hard sig<val,... */
        struct kv_list eviction_soft;            /* --eviction-soft */
        struct kv_list eviction_soft_grace;      /* --eviction-soft-grace-period sig=dur */
        struct kv_list eviction_minimum_reclaim; /* --eviction-minimum-reclaim sig=val */
        int64_t eviction_pressure_transition_ms; /* --eviction-pressure-transition-period, 5m */
        int32_t eviction_max_pod_grace_period;   /* --eviction-max-pod-grace-period, 0 */
        bool merge_default_eviction_settings;    /* mergeDefaultEvictionSettings */
        /* featureGates / --feature-gates Name=bool,...: "true" or "false"
         * per gate named; the flag's gates win over the file's one by one.
         * Acted on: PodAndContainerStatsFromCRI (src/stats; alpha, so
         * AllAlpha turns it on when it is not named); every other gate
         * keeps upstream's default (a warning names them).  Names are not
         * checked against upstream's list (upstream refuses an unknown
         * one). */
        struct kv_list feature_gates;
        /* graceful node shutdown (src/nodeshutdown): shutdownGracePeriod
         * and shutdownGracePeriodCriticalPods, or the by-priority list */
        int64_t shutdown_grace_period_ms;
        int64_t shutdown_grace_period_critical_pods_ms;
        struct kcfg_shutdown_priority *shutdown_by_priority;
        size_t n_shutdown_by_priority;
        /* userNamespaces.idsPerPod: the host IDs of a hostUsers: false pod's
         * user namespace (src/userns); 0: unset, upstream's 65536 */
        int64_t userns_ids_per_pod;
        bool has_userns_ids_per_pod; /* set in the file (0 is refused) */
        /* --volume-stats-agg-period / volumeStatsAggPeriod, 1m (negative:
         * no volume stats) */
        int64_t volume_stats_agg_period_ms;
        /* container log rotation (src/logs/container_log_manager.h) */
        char *container_log_max_size;              /* --container-log-max-size, "10Mi" */
        int32_t container_log_max_files;           /* --container-log-max-files, 5 */
        int32_t container_log_max_workers;         /* containerLogMaxWorkers, 1 */
        int64_t container_log_monitor_interval_ms; /* containerLogMonitorInterval, 10s */

        /* The secure port.  The authentication/authorization defaults are the
         * command line's (anonymous, no webhook, AlwaysAllow); a --config
         * file starts from v1beta1's (no anonymous, webhook, Webhook), as
         * upstream's applyLegacyDefaults makes it. */
        bool enable_server;         /* --enable-server / enableServer, true */
        char *tls_cert_file;        /* --tls-cert-file / tlsCertFile */
        char *tls_private_key_file; /* --tls-private-key-file / tlsPrivateKeyFile */
        char *tls_min_version;      /* --tls-min-version / tlsMinVersion: VersionTLS12... */
        char **tls_cipher_suites;   /* --tls-cipher-suites / tlsCipherSuites (Go names) */
        char *client_ca_file;       /* --client-ca-file / authentication.x509.clientCAFile */
        bool anonymous_auth;        /* --anonymous-auth / authentication.anonymous.enabled */
        bool authn_webhook;         /* --authentication-token-webhook / ...webhook.enabled */
        int64_t authn_webhook_cache_ttl_ms;      /* authentication.webhook.cacheTTL, 2m */
        char *authorization_mode;                /* --authorization-mode: AlwaysAllow | Webhook */
        int64_t authz_cache_authorized_ttl_ms;   /* ...webhook.cacheAuthorizedTTL, 5m */
        int64_t authz_cache_unauthorized_ttl_ms; /* ...webhook.cacheUnauthorizedTTL, 30s */
};

/* upstream DefaultEvictionHard (Linux), {signal, threshold}: evictionHard
 * of a config file that leaves it out. */
extern const char *const kubelet_config_default_eviction_hard[][2];
extern const size_t kubelet_config_n_default_eviction_hard;

/* Fills cfg with the upstream defaults. */
void kubelet_config_defaults(struct kubelet_config *cfg);
void kubelet_config_release(struct kubelet_config *cfg);

/* Loads a KubeletConfiguration (YAML or JSON) over cfg.  Rejects a wrong
 * apiVersion/kind, unknown fields and values of the wrong type, naming the
 * file and the field. */
int kubelet_config_load_file(struct kubelet_config *cfg, const char *path, ck_error_t *err);

/* Parses argv (upstream flag syntax: --name=value, --name value, -v=4,
 * --bool, --bool=false).  Loads --config first, then applies the flags over
 * it.  --help / --version are handled by the caller through *action.
 * Unknown flags and bad values: < 0 with a message naming the flag.
 * cfg must hold a config (kubelet_config_defaults, or zeroed): on success it
 * is released and replaced by defaults + file + flags, with node_name and
 * image_service_endpoint derived, validated (kubelet_config_validate); on
 * error it is left as it was.  Upstream flags that ckubelet does not
 * implement are accepted with a warning.  -v is applied to the logger
 * (log_set_verbosity) as klog does. */
enum kubelet_flags_action { FLAGS_RUN = 0, FLAGS_HELP, FLAGS_VERSION };
int kubelet_flags_parse(struct kubelet_config *cfg, int argc, char **argv,
                        enum kubelet_flags_action *action, ck_error_t *err);

/* Usage text for --help. */
void kubelet_flags_usage(FILE *out);

/* Like kubelet_config_load_file, from a buffer: `name` is the file name used
 * in messages and to resolve relative paths (staticPodPath, resolvConf,
 * podLogsDir) against its directory.  Loads all or nothing: on error cfg is
 * unchanged. */
int kubelet_config_load_buffer(struct kubelet_config *cfg, const char *name, const char *buf,
                               size_t len, ck_error_t *err);

/* Validates cfg as upstream's ValidateKubeletConfiguration does for the
 * fields ckubelet has (ports, maxPods, kubeAPIQPS/Burst, podLogsDir,
 * nodeLeaseDurationSeconds, containerLogMaxFiles/MaxWorkers/MonitorInterval,
 * ...) plus cgroupDriver, positive periods, reserved resource names and
 * --node-labels (ValidateKubeletFlags).  containerLogMaxSize must parse as
 * upstream's container log manager parses it (upstream finds out when it
 * creates the kubelet, here at validation).  kubelet_flags_parse calls it. */
int kubelet_config_validate(const struct kubelet_config *cfg, ck_error_t *err);

/* Whether the feature gate `name` is on: its featureGates value, else
 * `dflt` (upstream's default for this version). */
bool kubelet_config_feature_enabled(const struct kubelet_config *cfg, const char *name, bool dflt);

/* Parses a Go duration ("20s", "1m30s", "500ms", "1h2m3.5s", "-2h"; units
 * ns us ms s m h) as time.ParseDuration does, truncated to milliseconds.
 * Errors carry Go's wording: time: unknown unit "x" in duration "10x". */
int config_parse_duration(const char *s, int64_t *ms, ck_error_t *err);

#endif
