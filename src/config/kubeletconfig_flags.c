/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kubelet command line, parsed as spf13/pflag parses upstream's:
 * --name=value, --name value, -v=4, -v 4, -v4, bools as --flag or
 * --flag=false (never "--flag false"), "--" ends the flags, '_' in a name
 * reads as '-' (WordSepNormalizeFunc), errors in pflag's words.
 *
 * As upstream (cmd/kubelet/app/server.go): parse every flag once (errors,
 * --help, --version, --config); load --config over the defaults; then
 * re-apply the flags over the file, so that flags win.  Flags of the upstream
 * kubelet that ckubelet does not implement are accepted with a warning, so
 * that an upstream unit file still starts.
 */
#include "config/kubeletconfig_internal.h"
#include "util/cleanup.h"
#include "util/goduration.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <arpa/inet.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum flag_kind {
        K_STRING,    /* char * */
        K_BOOL,      /* bool */
        K_INT32,     /* int32_t, strconv.ParseInt(s, 0, 32) */
        K_DURATION,  /* int64_t ms, time.ParseDuration */
        K_IP,        /* char *, an IP address or "" (kept) */
        K_STRINGS,   /* char ** comma list; the first use replaces, later ones append */
        K_MAP,       /* kv_list k=v,...; the first use replaces, later ones add */
        K_LMAP,      /* kv_list k<v,... (pflag's LangleSeparatedMapStringString) */
        K_LABELS,    /* kv_list k=v,... (k alone: empty value); always adds */
        K_GATES,     /* kv_list k=bool,... (cliflag.MapStringBool); adds, a key's last wins */
        K_VERBOSITY, /* int, strconv.ParseUint(s, 10, 31) */
        K_HELP,
        K_VERSION,
};

struct flag_def {
        const char *name;
        char shorthand;
        enum flag_kind kind;
        size_t off;
        /* a KubeletConfiguration flag: upstream marks it deprecated */
        bool config_flag;
        const char *usage;
};

#define OFF(member) offsetof(struct kubelet_config, member)

static const char config_flag_deprecation[] =
    "This parameter should be set via the config file specified by the Kubelet's --config "
    "flag. See https://kubernetes.io/docs/tasks/administer-cluster/kubelet-config-file/ for "
    "more information.";
static const char pod_infra_deprecation[] =
    "will be removed in 1.35. Image garbage collector will get sandbox image information "
    "from CRI.";

static const char container_gc_deprecation[] =
    "Use --eviction-hard or --eviction-soft instead. Will be removed in a future version.";

static const struct flag_def flag_defs[] = {
    {"address", 0, K_IP, OFF(address), true,
     "The IP address for the Kubelet to serve on ('0.0.0.0' or '::' for all interfaces)"},
    {"anonymous-auth", 0, K_BOOL, OFF(anonymous_auth), true,
     "Requests to the secure port that no other method authenticates are served as "
     "system:anonymous"},
    {"authentication-token-webhook", 0, K_BOOL, OFF(authn_webhook), true,
     "Authenticate bearer tokens with the TokenReview API"},
    {"authentication-token-webhook-cache-ttl", 0, K_DURATION, OFF(authn_webhook_cache_ttl_ms), true,
     "How long to cache responses from the webhook token authenticator"},
    {"authorization-mode", 0, K_STRING, OFF(authorization_mode), true,
     "Authorization mode for the secure port: AlwaysAllow or Webhook (SubjectAccessReview)"},
    {"authorization-webhook-cache-authorized-ttl", 0, K_DURATION,
     OFF(authz_cache_authorized_ttl_ms), true,
     "How long to cache 'authorized' responses from the webhook authorizer"},
    {"authorization-webhook-cache-unauthorized-ttl", 0, K_DURATION,
     OFF(authz_cache_unauthorized_ttl_ms), true,
     "How long to cache 'unauthorized' responses from the webhook authorizer"},
    {"cert-dir", 0, K_STRING, OFF(cert_dir), false,
     "Directory of the self-signed serving certificate (ignored with --tls-cert-file)"},
    {"cgroup-driver", 0, K_STRING, OFF(cgroup_driver), true,
     "Driver that the kubelet uses to manipulate cgroups on the host: 'cgroupfs' or "
     "'systemd'"},
    {"cgroup-root", 0, K_STRING, OFF(cgroup_root), true,
     "Optional root cgroup to use for pods ('' means the container runtime default)"},
    {"cgroups-per-qos", 0, K_BOOL, OFF(cgroups_per_qos), true,
     "Create the QoS cgroup hierarchy: top level QoS and pod cgroups"},
    {"client-ca-file", 0, K_STRING, OFF(client_ca_file), true,
     "Client certificates signed by these CAs authenticate requests to the secure port"},
    {"allowed-unsafe-sysctls", 0, K_STRINGS, OFF(allowed_unsafe_sysctls), true,
     "Comma-separated allowlist of unsafe sysctls or unsafe sysctl patterns (ending in *); "
     "use these at your own risk"},
    {"cluster-dns", 0, K_STRINGS, OFF(cluster_dns), true,
     "Comma-separated list of DNS server IP addresses for pods with dnsPolicy=ClusterFirst"},
    {"cluster-domain", 0, K_STRING, OFF(cluster_domain), true,
     "Domain for this cluster; containers search it in addition to the host's domains"},
    {"config", 0, K_STRING, OFF(config_file), false,
     "Load the initial configuration from this KubeletConfiguration file; flags override it"},
    {"container-log-max-files", 0, K_INT32, OFF(container_log_max_files), true,
     "<Warning: Beta feature> Set the maximum number of container log files that can be "
     "present for a container. The number must be >= 2."},
    {"container-log-max-size", 0, K_STRING, OFF(container_log_max_size), true,
     "<Warning: Beta feature> Set the maximum size (e.g. 10Mi) of container log file before it "
     "is rotated."},
    {"container-runtime-endpoint", 0, K_STRING, OFF(container_runtime_endpoint), true,
     "The endpoint of the container runtime service, e.g. 'unix:///path/to/runtime.sock'"},
    {"enable-debugging-handlers", 0, K_BOOL, OFF(enable_debugging_handlers), true,
     "Enables server endpoints for log collection and local running of containers and commands"},
    {"enable-server", 0, K_BOOL, OFF(enable_server), true, "Enable the Kubelet's server"},
    {"eviction-hard", 0, K_LMAP, OFF(eviction_hard), true,
     "A set of eviction thresholds (e.g. memory.available<1Gi) that if met would trigger a pod "
     "eviction"},
    {"eviction-max-pod-grace-period", 0, K_INT32, OFF(eviction_max_pod_grace_period), true,
     "Maximum allowed grace period (in seconds) to use when terminating pods in response to a "
     "soft eviction threshold being met"},
    {"eviction-minimum-reclaim", 0, K_MAP, OFF(eviction_minimum_reclaim), true,
     "A set of minimum reclaims (e.g. imagefs.available=2Gi) that describes the minimum amount "
     "of resource the kubelet will reclaim when performing a pod eviction"},
    {"eviction-pressure-transition-period", 0, K_DURATION, OFF(eviction_pressure_transition_ms),
     true,
     "Duration for which the kubelet has to wait before transitioning out of an eviction "
     "pressure condition"},
    {"eviction-soft", 0, K_LMAP, OFF(eviction_soft), true,
     "A set of eviction thresholds (e.g. memory.available<1.5Gi) that if met over a "
     "corresponding grace period would trigger a pod eviction"},
    {"eviction-soft-grace-period", 0, K_MAP, OFF(eviction_soft_grace), true,
     "A set of eviction grace periods (e.g. memory.available=1m30s) that correspond to how long "
     "a soft eviction threshold must hold before triggering a pod eviction"},
    {"fail-cgroupv1", 0, K_BOOL, OFF(fail_cgroup_v1), false,
     "Prevent the kubelet from starting on the host using cgroup v1."},
    {"fail-swap-on", 0, K_BOOL, OFF(fail_swap_on), true,
     "Makes the Kubelet fail to start if swap is enabled on the node"},
    {"feature-gates", 0, K_GATES, OFF(feature_gates), true,
     "A set of key=value pairs that describe feature gates for alpha/experimental features. "
     "ckubelet acts on PodAndContainerStatsFromCRI and AllAlpha; every other gate keeps its "
     "default"},
    {"file-check-frequency", 0, K_DURATION, OFF(file_check_frequency_ms), true,
     "Duration between checking config files for new data"},
    {"healthz-bind-address", 0, K_IP, OFF(healthz_bind_address), true,
     "The IP address for the healthz server to serve on"},
    {"healthz-port", 0, K_INT32, OFF(healthz_port), true,
     "The port of the localhost healthz endpoint (set to 0 to disable)"},
    {"help", 'h', K_HELP, 0, false, "help for kubelet"},
    {"hostname-override", 0, K_STRING, OFF(hostname_override), false,
     "If non-empty, use this string as identification instead of the actual hostname"},
    {"http-check-frequency", 0, K_DURATION, OFF(http_check_frequency_ms), true,
     "Duration between checking http for new data"},
    {"image-gc-high-threshold", 0, K_INT32, OFF(image_gc_high_threshold_percent), true,
     "The percent of disk usage after which image garbage collection is always run (100: off)"},
    {"image-gc-low-threshold", 0, K_INT32, OFF(image_gc_low_threshold_percent), true,
     "The percent of disk usage before which image garbage collection is never run"},
    {"image-service-endpoint", 0, K_STRING, OFF(image_service_endpoint), true,
     "The endpoint of the container image service (default: the runtime endpoint)"},
    {"kube-api-burst", 0, K_INT32, OFF(kube_api_burst), true,
     "Burst to use while talking with the kubernetes apiserver (>= 0)"},
    {"kube-api-qps", 0, K_INT32, OFF(kube_api_qps), true,
     "QPS to use while talking with the kubernetes apiserver (>= 0)"},
    {"kube-reserved", 0, K_MAP, OFF(kube_reserved), true,
     "Resources reserved for kubernetes system components (e.g. cpu=200m,memory=500Mi)"},
    {"kubeconfig", 0, K_STRING, OFF(kubeconfig), false,
     "Path to a kubeconfig file for the API server; omit it for standalone mode"},
    {"manifest-url", 0, K_STRING, OFF(static_pod_url), true,
     "URL for accessing additional Pod specifications to run"},
    {"max-pods", 0, K_INT32, OFF(max_pods), true, "Number of Pods that can run on this Kubelet"},
    {"maximum-dead-containers", 0, K_INT32, OFF(max_dead_containers), false,
     "Maximum number of old instances of containers to retain globally (-1: no limit)"},
    {"maximum-dead-containers-per-container", 0, K_INT32, OFF(max_dead_per_container), false,
     "Maximum number of old instances to retain per container"},
    {"minimum-image-ttl-duration", 0, K_DURATION, OFF(image_minimum_gc_age_ms), true,
     "Minimum age for an unused image before it is garbage collected"},
    {"minimum-container-ttl-duration", 0, K_DURATION, OFF(minimum_container_ttl_ms), false,
     "Minimum age for a finished container before it is garbage collected"},
    {"node-status-max-images", 0, K_INT32, OFF(node_status_max_images), true,
     "The maximum number of images to report in Node.Status.Images (-1: no cap)"},
    {"node-ip", 0, K_STRING, OFF(node_ip), false,
     "IP address (or comma-separated dual-stack addresses) of the node"},
    {"node-labels", 0, K_LABELS, OFF(node_labels), false,
     "Labels to add when registering the node in the cluster (key=value pairs separated by "
     "',')"},
    {"node-status-update-frequency", 0, K_DURATION, OFF(node_status_update_frequency_ms), true,
     "How often the kubelet posts node status to the API server"},
    {"pod-infra-container-image", 0, K_STRING, OFF(pod_infra_container_image), false,
     "The sandbox (pause) image; informational, the runtime's setting is used"},
    {"pod-manifest-path", 0, K_STRING, OFF(static_pod_path), true,
     "Path to the directory (or file) of static pod manifests to run"},
    {"port", 0, K_INT32, OFF(port), true, "The port for the Kubelet to serve on"},
    {"read-only-port", 0, K_INT32, OFF(read_only_port), true,
     "The read-only port for the Kubelet to serve on, without authentication (0 disables)"},
    {"register-node", 0, K_BOOL, OFF(register_node), true,
     "Register the node with the API server (only with --kubeconfig)"},
    {"resolv-conf", 0, K_STRING, OFF(resolv_conf), true,
     "Resolver configuration file used as the basis for the containers' DNS configuration"},
    {"root-dir", 0, K_STRING, OFF(root_dir), false,
     "Directory path for managing kubelet files (volume mounts, etc.)"},
    {"runtime-request-timeout", 0, K_DURATION, OFF(runtime_request_timeout_ms), true,
     "Timeout of all runtime requests except long running ones (pull, logs, exec, attach)"},
    {"serialize-image-pulls", 0, K_BOOL, OFF(serialize_image_pulls), true,
     "Pull images one at a time"},
    {"sync-frequency", 0, K_DURATION, OFF(sync_frequency_ms), true,
     "Max period between synchronizing running containers and config"},
    {"system-reserved", 0, K_MAP, OFF(system_reserved), true,
     "Resources reserved for non-kubernetes components (e.g. cpu=200m,memory=500Mi)"},
    {"tls-cert-file", 0, K_STRING, OFF(tls_cert_file), true,
     "x509 certificate (chain) served on the secure port; without it a self-signed one in "
     "--cert-dir"},
    {"tls-cipher-suites", 0, K_STRINGS, OFF(tls_cipher_suites), true,
     "Comma-separated list of cipher suites for the server (Go names, e.g. "
     "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256); default: OpenSSL's"},
    {"tls-min-version", 0, K_STRING, OFF(tls_min_version), true,
     "Minimum TLS version supported: VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13 "
     "(default VersionTLS12)"},
    {"tls-private-key-file", 0, K_STRING, OFF(tls_private_key_file), true,
     "x509 private key matching --tls-cert-file"},
    {"v", 'v', K_VERBOSITY, OFF(verbosity), false, "number for the log level verbosity"},
    {"version", 0, K_VERSION, 0, false, "Print version information and quit"},
    {"volume-stats-agg-period", 0, K_DURATION, OFF(volume_stats_agg_period_ms), true,
     "Specifies interval for kubelet to calculate and cache the volume disk usage for all pods "
     "and volumes (negative: no volume calculations)"},
};

#define N_FLAGS (sizeof(flag_defs) / sizeof(flag_defs[0]))

struct parse_state {
        struct kubelet_config *cfg;
        bool warn; /* the first pass warns; the re-application over the file does not */
        bool changed[N_FLAGS];
        bool help, version;
        const char *first_arg; /* first non-flag argument */
};

static const struct flag_def *find_long(const char *name)
{
        for (size_t i = 0; i < N_FLAGS; i++) {
                if (strcmp(flag_defs[i].name, name) == 0)
                        return &flag_defs[i];
        }
        return NULL;
}

static const struct flag_def *find_short(char c)
{
        for (size_t i = 0; i < N_FLAGS; i++) {
                if (flag_defs[i].shorthand == c)
                        return &flag_defs[i];
        }
        return NULL;
}

static bool kind_is_bool(enum flag_kind k)
{
        return k == K_BOOL || k == K_HELP || k == K_VERSION;
}

/* pflag's InvalidValueError around the value parser's error in *err. */
static int invalid_value(const struct flag_def *f, const char *value, ck_error_t *err)
{
        char *q = kcfg_quote(value);
        if (f->shorthand)
                ck_error_wrap(err, "invalid argument %s for \"-%c, --%s\" flag", q, f->shorthand,
                              f->name);
        else
                ck_error_wrap(err, "invalid argument %s for \"--%s\" flag", q, f->name);
        free(q);
        return -1;
}

static char *trim_dup(const char *s, size_t len)
{
        while (len > 0 && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')) {
                s++;
                len--;
        }
        while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\n' ||
                           s[len - 1] == '\r'))
                len--;
        return xstrndup(s, len);
}

/* cliflag.MapStringString (first_use clears) or ConfigurationMap (labels). */
static int set_map(struct kv_list *l, const char *value, bool labels, char sep, bool first_use,
                   ck_error_t *err)
{
        if (!labels && first_use)
                kcfg_kv_clear(l);
        const char *p = value;
        for (;;) {
                const char *comma = strchr(p, ',');
                size_t len = comma ? (size_t)(comma - p) : strlen(p);
                if (len > 0) {
                        const char *eq = memchr(p, sep, len);
                        if (eq == NULL && !labels)
                                return ck_error_make(err, 0,
                                                     "malformed pair, expect string%cstring", sep);
                        char *k = trim_dup(p, eq ? (size_t)(eq - p) : len);
                        char *v = eq ? trim_dup(eq + 1, len - (size_t)(eq - p) - 1) : xstrdup("");
                        kcfg_kv_set(l, k, v);
                        free(k);
                        free(v);
                }
                if (comma == NULL)
                        break;
                p = comma + 1;
        }
        return 0;
}

/* cliflag.MapStringBool: k=v pairs, v as strconv.ParseBool.  Not cleared
 * by the first use: upstream merges the flag's gates over the file's. */
static int set_gates(struct kv_list *l, const char *value, ck_error_t *err)
{
        const char *p = value;
        for (;;) {
                const char *comma = strchr(p, ',');
                size_t len = comma ? (size_t)(comma - p) : strlen(p);
                const char *eq = memchr(p, '=', len);
                if (len > 0 && eq == NULL)
                        return ck_error_make(err, 0, "malformed pair, expect string=bool");
                if (len > 0) {
                        char *k = trim_dup(p, (size_t)(eq - p));
                        char *v = trim_dup(eq + 1, len - (size_t)(eq - p) - 1);
                        bool b = false;
                        cleanup_error ck_error_t why = NULL;
                        int r = kcfg_parse_bool(v, &b, &why);
                        if (r < 0)
                                ck_error_make(err, 0, "invalid value of %s: %s, err: %s", k, v,
                                              ck_error_msg(why));
                        else
                                kcfg_kv_set(l, k, b ? "true" : "false");
                        free(k);
                        free(v);
                        if (r < 0)
                                return -1;
                }
                if (comma == NULL)
                        break;
                p = comma + 1;
        }
        return 0;
}

/* pflag's stringSlice: readAsCSV (no quoting supported), replace then append. */
static void set_strings(char ***list, const char *value, bool first_use)
{
        if (first_use)
                kcfg_strv_free(list);
        if (*value == '\0') {
                if (*list == NULL)
                        *list = xcalloc(1, sizeof(char *)); /* set, and empty */
                return;
        }
        const char *p = value;
        for (;;) {
                const char *comma = strchr(p, ',');
                size_t len = comma ? (size_t)(comma - p) : strlen(p);
                char *item = xstrndup(p, len);
                kcfg_strv_append(list, item);
                free(item);
                if (comma == NULL)
                        break;
                p = comma + 1;
        }
}

static void warn_deprecated(const struct parse_state *st, const struct flag_def *f)
{
        if (!st->warn)
                return;
        const char *why = f->config_flag ? config_flag_deprecation : NULL;
        if (strcmp(f->name, "pod-infra-container-image") == 0)
                why = pod_infra_deprecation;
        if (strcmp(f->name, "minimum-container-ttl-duration") == 0 ||
            strncmp(f->name, "maximum-dead-containers", 23) == 0)
                why = container_gc_deprecation;
        if (why == NULL)
                return;
        char *msg = xasprintf("Flag --%s has been deprecated, %s", f->name, why);
        LOG_WARN(msg);
        free(msg);
}

static int set_flag(struct parse_state *st, const struct flag_def *f, const char *value,
                    ck_error_t *err)
{
        char *base = (char *)st->cfg + f->off;
        size_t idx = (size_t)(f - flag_defs);
        bool first_use = !st->changed[idx];
        switch (f->kind) {
        case K_STRING:
                kcfg_set_str((char **)base, value);
                break;
        case K_BOOL: {
                bool b = false;
                if (kcfg_parse_bool(value, &b, err) < 0)
                        return invalid_value(f, value, err);
                *(bool *)base = b;
                break;
        }
        case K_INT32: {
                int64_t n = 0;
                if (kcfg_parse_int(value, 32, &n, err) < 0)
                        return invalid_value(f, value, err);
                *(int32_t *)base = (int32_t)n;
                break;
        }
        case K_DURATION: {
                int64_t ms = 0;
                if (config_parse_duration(value, &ms, err) < 0)
                        return invalid_value(f, value, err);
                *(int64_t *)base = ms;
                break;
        }
        case K_IP: {
                unsigned char buf[sizeof(struct in6_addr)];
                if (*value == '\0')
                        break;
                if (inet_pton(AF_INET, value, buf) != 1 && inet_pton(AF_INET6, value, buf) != 1) {
                        char *q = kcfg_quote(value);
                        ck_error_make(err, 0, "%s is not a valid IP address", q);
                        free(q);
                        return invalid_value(f, value, err);
                }
                kcfg_set_str((char **)base, value);
                break;
        }
        case K_STRINGS:
                set_strings((char ***)base, value, first_use);
                break;
        case K_MAP:
        case K_LMAP:
        case K_LABELS:
                if (set_map((struct kv_list *)base, value, f->kind == K_LABELS,
                            f->kind == K_LMAP ? '<' : '=', first_use, err) < 0)
                        return invalid_value(f, value, err);
                break;
        case K_GATES:
                if (set_gates((struct kv_list *)base, value, err) < 0)
                        return invalid_value(f, value, err);
                break;
        case K_VERBOSITY: {
                uint64_t v = 0;
                if (kcfg_parse_uint10(value, 31, &v, err) < 0)
                        return invalid_value(f, value, err);
                *(int *)base = (int)v;
                log_set_verbosity((int)v); /* as klog's -v: effective at once */
                break;
        }
        case K_HELP: {
                bool b = false;
                if (kcfg_parse_bool(value, &b, err) < 0)
                        return invalid_value(f, value, err);
                st->help = b;
                break;
        }
        case K_VERSION: {
                bool b = false;
                if (strcmp(value, "raw") == 0)
                        b = true;
                else if (kcfg_parse_bool(value, &b, err) < 0)
                        return invalid_value(f, value, err);
                st->version = b;
                break;
        }
        }
        st->changed[idx] = true;
        warn_deprecated(st, f);
        return 0;
}

/* A flag of the upstream kubelet that ckubelet does not implement: the value
 * is checked as pflag would, then ignored. */
static int set_ignored(struct parse_state *st, const struct kcfg_ignored_flag *f, const char *value,
                       ck_error_t *err)
{
        int ret = 0;
        bool b;
        int64_t n;
        switch (f->kind) {
        case KCFG_IGN_STRING:
                break;
        case KCFG_IGN_BOOL:
                ret = kcfg_parse_bool(value, &b, err);
                break;
        case KCFG_IGN_INT32:
                ret = kcfg_parse_int(value, 32, &n, err);
                break;
        case KCFG_IGN_INT64:
                ret = kcfg_parse_int(value, 64, &n, err);
                break;
        case KCFG_IGN_DURATION:
                ret = kcfg_parse_duration_ns(value, &n, err);
                break;
        }
        if (ret < 0) {
                char *q = kcfg_quote(value);
                ck_error_wrap(err, "invalid argument %s for \"--%s\" flag", q, f->name);
                free(q);
                return -1;
        }
        if (st->warn)
                LOG_WARN("Ignoring a kubelet flag that ckubelet does not implement",
                         "flag=\"--%s\"", f->name);
        return 0;
}

/* pflag parseLongArg; *i indexes the current argument and moves past a
 * consumed value. */
static int parse_long(struct parse_state *st, int argc, char **argv, int *i, ck_error_t *err)
{
        const char *s = argv[*i];
        const char *name = s + 2;
        if (*name == '\0' || *name == '-' || *name == '=')
                return ck_error_make(err, 0, "bad flag syntax: %s", s);
        const char *eq = strchr(name, '=');
        char *typed = eq ? xstrndup(name, (size_t)(eq - name)) : xstrdup(name);
        char *normal = xstrdup(typed);
        for (char *p = normal; *p; p++) {
                if (*p == '_')
                        *p = '-';
        }
        const struct flag_def *f = find_long(normal);
        const struct kcfg_ignored_flag *ign = f ? NULL : kcfg_upstream_ignored_flag(normal);
        int ret = 0;
        if (f == NULL && ign == NULL) {
                ret = ck_error_make(err, 0, "unknown flag: --%s", typed);
                goto out;
        }
        bool is_bool = f ? kind_is_bool(f->kind) : ign->kind == KCFG_IGN_BOOL;
        const char *value;
        if (eq)
                value = eq + 1;
        else if (is_bool)
                value = "true";
        else if (*i + 1 < argc)
                value = argv[++*i];
        else {
                ret = ck_error_make(err, 0, "flag needs an argument: --%s", typed);
                goto out;
        }
        ret = f ? set_flag(st, f, value, err) : set_ignored(st, ign, value, err);
out:
        free(typed);
        free(normal);
        return ret;
}

/* pflag parseShortArg: "-v4", "-v=4", "-v 4", "-h", "-hv4". */
static int parse_short(struct parse_state *st, int argc, char **argv, int *i, ck_error_t *err)
{
        const char *shorthands = argv[*i] + 1;
        while (*shorthands) {
                char c = *shorthands;
                const struct flag_def *f = find_short(c);
                if (f == NULL)
                        return ck_error_make(err, 0, "unknown shorthand flag: '%c' in -%s", c,
                                             shorthands);
                const char *value;
                const char *next = shorthands + 1;
                if (shorthands[1] == '=' && shorthands[2] != '\0') {
                        value = shorthands + 2;
                        next = "";
                } else if (kind_is_bool(f->kind)) {
                        value = "true";
                } else if (shorthands[1] != '\0') {
                        value = shorthands + 1;
                        next = "";
                } else if (*i + 1 < argc) {
                        value = argv[++*i];
                } else {
                        return ck_error_make(err, 0, "flag needs an argument: '%c' in -%s", c,
                                             shorthands);
                }
                if (set_flag(st, f, value, err) < 0)
                        return -1;
                shorthands = next;
        }
        return 0;
}

/* pflag parseArgs, interspersed: non-flag arguments are collected (the
 * kubelet then rejects them). */
static int parse_args(struct parse_state *st, int argc, char **argv, ck_error_t *err)
{
        for (int i = 1; i < argc; i++) {
                const char *s = argv[i];
                if (s[0] != '-' || s[1] == '\0') {
                        if (st->first_arg == NULL)
                                st->first_arg = s;
                        continue;
                }
                int ret;
                if (s[1] == '-') {
                        if (s[2] == '\0') { /* "--" ends the flags */
                                if (i + 1 < argc && st->first_arg == NULL)
                                        st->first_arg = argv[i + 1];
                                break;
                        }
                        ret = parse_long(st, argc, argv, &i, err);
                } else {
                        ret = parse_short(st, argc, argv, &i, err);
                }
                if (ret < 0)
                        return -1;
        }
        return 0;
}

/* The gates ckubelet acts on (kubeletconfig.h); the others are named in a
 * warning, as upstream would act on them. */
static void warn_gates(const struct kubelet_config *cfg)
{
        static const char *const acted_on[] = {"AllAlpha", "PodAndContainerStatsFromCRI"};
        cleanup_free char *names = NULL;
        for (size_t i = 0; i < cfg->feature_gates.n; i++) {
                const char *k = cfg->feature_gates.items[i].key;
                bool known = false;
                for (size_t j = 0; j < sizeof(acted_on) / sizeof(acted_on[0]); j++)
                        known = known || strcmp(k, acted_on[j]) == 0;
                if (known)
                        continue;
                kcfg_join_append(&names, ", ", k);
        }
        if (names)
                LOG_WARN("Feature gates that ckubelet does not act on keep their defaults",
                         "gates=\"%s\"", names);
        if (kubelet_config_feature_enabled(cfg, "AllAlpha", false))
                LOG_WARN("AllAlpha turns on one alpha gate in ckubelet: "
                         "PodAndContainerStatsFromCRI");
}

int kubelet_flags_parse(struct kubelet_config *cfg, int argc, char **argv,
                        enum kubelet_flags_action *action, ck_error_t *err)
{
        struct kubelet_config work;
        struct parse_state first = {.cfg = &work, .warn = true};

        *action = FLAGS_RUN;
        kubelet_config_defaults(&work);
        if (parse_args(&first, argc, argv, err) < 0)
                goto fail;
        if (first.first_arg) {
                ck_error_make(err, 0, "unknown command %s", first.first_arg);
                goto fail;
        }
        if (first.help || first.version) {
                *action = first.help ? FLAGS_HELP : FLAGS_VERSION;
                goto done;
        }

        if (work.config_file && *work.config_file) {
                /* Upstream: the file over the defaults, then the flags again
                 * over the file (kubeletConfigFlagPrecedence). */
                struct kubelet_config from_file;
                struct parse_state again = {.cfg = &from_file, .warn = false};
                kubelet_config_defaults(&from_file);
                if (kubelet_config_load_file(&from_file, work.config_file, err) < 0) {
                        kubelet_config_release(&from_file);
                        ck_error_wrap(err, "failed to load kubelet config file");
                        goto fail;
                }
                if (parse_args(&again, argc, argv, err) < 0) {
                        kubelet_config_release(&from_file);
                        goto fail;
                }
                kubelet_config_release(&work);
                work = from_file;
        }
        if (kcfg_finish(&work, err) < 0 || kubelet_config_validate(&work, err) < 0)
                goto fail;
        log_set_verbosity(work.verbosity);
        warn_gates(&work);
done:
        kubelet_config_release(cfg);
        *cfg = work;
        return 0;
fail:
        kubelet_config_release(&work);
        return -1;
}

/* ---- --help ---- */

static const char *type_name(enum flag_kind k)
{
        switch (k) {
        case K_STRING:
                return "string";
        case K_INT32:
                return "int32";
        case K_DURATION:
                return "duration";
        case K_IP:
                return "ip";
        case K_STRINGS:
                return "strings";
        case K_MAP:
        case K_LABELS:
                return "mapStringString";
        case K_LMAP:
                return "mapStringString";
        case K_GATES:
                return "mapStringBool";
        case K_VERBOSITY:
                return "Level";
        case K_BOOL:
        case K_HELP:
        case K_VERSION:
                break;
        }
        return "";
}

/* The default as pflag prints it: nothing for a zero value, quoted strings. */
static char *default_text(const struct flag_def *f, const struct kubelet_config *d)
{
        const char *base = (const char *)d + f->off;
        char buf[64];
        switch (f->kind) {
        case K_STRING:
        case K_IP: {
                const char *s = *(char *const *)base;
                if (s == NULL || *s == '\0')
                        return NULL;
                if (f->kind == K_IP)
                        return xasprintf(" (default %s)", s);
                char *q = kcfg_quote(s);
                char *out = xasprintf(" (default %s)", q);
                free(q);
                return out;
        }
        case K_BOOL:
                return *(const bool *)base ? xstrdup(" (default true)") : NULL;
        case K_INT32:
                return *(const int32_t *)base ? xasprintf(" (default %d)", *(const int32_t *)base)
                                              : NULL;
        case K_DURATION:
                if (*(const int64_t *)base == 0)
                        return NULL;
                go_duration_format_ms(*(const int64_t *)base, buf, sizeof(buf));
                return xasprintf(" (default %s)", buf);
        case K_STRINGS:
        case K_MAP:
        case K_LMAP:
        case K_LABELS:
        case K_GATES:
        case K_VERBOSITY:
        case K_HELP:
        case K_VERSION:
                break;
        }
        return NULL;
}

void kubelet_flags_usage(FILE *out)
{
        struct kubelet_config d;
        char *heads[N_FLAGS];
        size_t width = 0;

        kubelet_config_defaults(&d);
        for (size_t i = 0; i < N_FLAGS; i++) {
                const struct flag_def *f = &flag_defs[i];
                const char *t = type_name(f->kind);
                if (f->shorthand)
                        heads[i] =
                            xasprintf("  -%c, --%s%s%s", f->shorthand, f->name, *t ? " " : "", t);
                else
                        heads[i] = xasprintf("      --%s%s%s", f->name, *t ? " " : "", t);
                if (strlen(heads[i]) > width)
                        width = strlen(heads[i]);
        }
        fprintf(out, "The kubelet is the primary \"node agent\" that runs on each node "
                     "(ckubelet: a C implementation).\n\n"
                     "Usage:\n  kubelet [flags]\n\nFlags:\n");
        for (size_t i = 0; i < N_FLAGS; i++) {
                char *def = default_text(&flag_defs[i], &d);
                fprintf(out, "%-*s   %s%s\n", (int)width, heads[i], flag_defs[i].usage,
                        def ? def : "");
                free(def);
                free(heads[i]);
        }
        fprintf(out, "\nOther flags of the upstream kubelet are accepted and ignored, with a "
                     "warning.\n");
        kubelet_config_release(&d);
}
