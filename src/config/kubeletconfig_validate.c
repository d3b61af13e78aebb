/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Validation with upstream's wording: ValidateKubeletFlags (--node-labels,
 * cmd/kubelet/app/options/options.go) and ValidateKubeletConfiguration
 * (pkg/kubelet/apis/config/validation) for the fields ckubelet has.  Several
 * configuration errors are reported together, as upstream's aggregate does:
 * "[a, b]".
 *
 * Stricter than upstream (documented in the header): cgroupDriver must be
 * cgroupfs or systemd (upstream silently treats anything else as cgroupfs),
 * the periods must be positive (upstream leaves a zero flag value to the
 * loops), and reserved resources must be cpu, memory, ephemeral-storage or
 * pid (upstream checks that later, when it builds the container manager).
 */
#include "config/kubeletconfig_internal.h"
#include "logs/container_log_manager.h"
#include "util/cleanup.h"
#include "util/goduration.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A growing list of messages. */
struct msgs {
        char **items;
        size_t n;
};

static void msgs_add(struct msgs *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void msgs_add(struct msgs *m, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        char *s = xvasprintf(fmt, ap);
        va_end(ap);
        m->items = xrealloc(m->items, (m->n + 1) * sizeof(char *));
        m->items[m->n++] = s;
}

static void msgs_free(struct msgs *m)
{
        for (size_t i = 0; i < m->n; i++)
                free(m->items[i]);
        free(m->items);
        m->items = NULL;
        m->n = 0;
}

static char *msgs_join(const struct msgs *m, const char *sep)
{
        size_t len = 1;
        for (size_t i = 0; i < m->n; i++)
                len += strlen(m->items[i]) + strlen(sep);
        char *out = xmalloc(len);
        out[0] = '\0';
        for (size_t i = 0; i < m->n; i++) {
                if (i > 0)
                        strcat(out, sep);
                strcat(out, m->items[i]);
        }
        return out;
}

/* ---- label keys and values (apimachinery util/validation) ---- */

#define LABEL_KEY_FMT "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
#define LABEL_KEY_MSG                                                                              \
        "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "   \
        "an alphanumeric character"
/* RegexError(msg, fmt, "MyName", "my.name", "123-abc"), double spaces included */
#define LABEL_KEY_REGEX_ERROR                                                                      \
        LABEL_KEY_MSG " (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation "  \
                      "is '" LABEL_KEY_FMT "')"
#define LABEL_VALUE_REGEX_ERROR                                                                    \
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "   \
        "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "      \
        "'my_value',  or '12345', regex used for validation is '(" LABEL_KEY_FMT ")?')"
#define DNS1123_SUBDOMAIN_REGEX_ERROR                                                              \
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "  \
        "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "      \
        "regex used for validation is "                                                            \
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"

static bool label_name_ok(const char *s, size_t len)
{
        if (len == 0 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[len - 1]))
                return false;
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char)s[i];
                if (!(isalnum(c) || c == '-' || c == '_' || c == '.'))
                        return false;
        }
        return true;
}

static bool lower_alnum(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool dns1123_subdomain_ok(const char *s, size_t len)
{
        size_t start = 0;
        for (size_t i = 0; i <= len; i++) {
                if (i < len && s[i] != '.')
                        continue;
                /* label s[start, i) */
                if (i == start || !lower_alnum(s[start]) || !lower_alnum(s[i - 1]))
                        return false;
                for (size_t j = start; j < i; j++) {
                        if (!lower_alnum(s[j]) && s[j] != '-')
                                return false;
                }
                start = i + 1;
        }
        return true;
}

/* IsQualifiedName */
static void check_label_key(const char *key, struct msgs *out)
{
        const char *slash = strchr(key, '/');
        const char *name = key;
        if (slash && strchr(slash + 1, '/')) {
                msgs_add(out, "a valid label key " LABEL_KEY_REGEX_ERROR
                              " with an optional DNS subdomain prefix and '/' (e.g. "
                              "'example.com/MyName')");
                return;
        }
        if (slash) {
                size_t plen = (size_t)(slash - key);
                name = slash + 1;
                if (plen == 0) {
                        msgs_add(out, "prefix part must be non-empty");
                } else {
                        if (plen > 253)
                                msgs_add(out, "prefix part must be no more than 253 characters");
                        if (!dns1123_subdomain_ok(key, plen))
                                msgs_add(out, "prefix part " DNS1123_SUBDOMAIN_REGEX_ERROR);
                }
        }
        size_t nlen = strlen(name);
        if (nlen == 0)
                msgs_add(out, "name part must be non-empty");
        else if (nlen > 63)
                msgs_add(out, "name part must be no more than 63 characters");
        if (!label_name_ok(name, nlen))
                msgs_add(out, "name part " LABEL_KEY_REGEX_ERROR);
}

/* IsValidLabelValue */
static void check_label_value(const char *value, struct msgs *out)
{
        size_t len = strlen(value);
        if (len > 63)
                msgs_add(out, "must be no more than 63 characters");
        if (len > 0 && !label_name_ok(value, len))
                msgs_add(out, LABEL_VALUE_REGEX_ERROR);
}

static bool has_suffix(const char *s, size_t len, const char *suffix)
{
        size_t n = strlen(suffix);
        return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

static bool namespace_is(const char *ns, size_t len, const char *domain)
{
        char dotted[64];
        snprintf(dotted, sizeof(dotted), ".%s", domain);
        return (len == strlen(domain) && memcmp(ns, domain, len) == 0) ||
               has_suffix(ns, len, dotted);
}

/* kubeletapis.IsKubeletLabel (k8s.io/kubelet/pkg/apis/well_known_labels.go) */
static const char *const kubelet_labels[] = {
    "beta.kubernetes.io/arch",
    "beta.kubernetes.io/instance-type",
    "beta.kubernetes.io/os",
    "failure-domain.beta.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone",
    "kubernetes.io/arch",
    "kubernetes.io/hostname",
    "kubernetes.io/os",
    "node.kubernetes.io/instance-type",
    "topology.kubernetes.io/region",
    "topology.kubernetes.io/zone",
};
static const char *const kubelet_label_namespaces[] = {"kubelet.kubernetes.io",
                                                       "node.kubernetes.io"};

static bool is_kubelet_label(const char *key)
{
        for (size_t i = 0; i < sizeof(kubelet_labels) / sizeof(kubelet_labels[0]); i++) {
                if (strcmp(kubelet_labels[i], key) == 0)
                        return true;
        }
        const char *slash = strchr(key, '/');
        if (slash == NULL)
                return false;
        for (size_t i = 0; i < 2; i++) {
                if (namespace_is(key, (size_t)(slash - key), kubelet_label_namespaces[i]))
                        return true;
        }
        return false;
}

static bool is_kubernetes_label(const char *key)
{
        const char *slash = strchr(key, '/');
        if (slash == NULL)
                return false;
        size_t len = (size_t)(slash - key);
        return namespace_is(key, len, "kubernetes.io") || namespace_is(key, len, "k8s.io");
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ValidateKubeletFlags: the --node-labels. */
static int validate_node_labels(const struct kv_list *labels, ck_error_t *err)
{
        struct msgs unknown = {0}, invalid = {0};
        for (size_t i = 0; i < labels->n; i++) {
                const char *k = labels->items[i].key, *v = labels->items[i].value;
                if (is_kubernetes_label(k) && !is_kubelet_label(k))
                        msgs_add(&unknown, "%s", k);
                struct msgs kerrs = {0}, verrs = {0};
                check_label_key(k, &kerrs);
                check_label_value(v, &verrs);
                if (kerrs.n > 0) {
                        char *j = msgs_join(&kerrs, ", ");
                        msgs_add(&invalid, "'%s' - %s", k, j);
                        free(j);
                }
                /* upstream files value errors under the value */
                if (verrs.n > 0) {
                        char *j = msgs_join(&verrs, ", ");
                        msgs_add(&invalid, "'%s' - %s", v, j);
                        free(j);
                }
                msgs_free(&kerrs);
                msgs_free(&verrs);
        }
        int ret = 0;
        if (unknown.n > 0) {
                qsort(unknown.items, unknown.n, sizeof(char *), cmp_str);
                char *list = msgs_join(&unknown, " ");
                struct msgs allowed = {0};
                for (size_t i = 0; i < sizeof(kubelet_labels) / sizeof(kubelet_labels[0]); i++)
                        msgs_add(&allowed, "%s", kubelet_labels[i]);
                char *allowed_list = msgs_join(&allowed, ", ");
                msgs_free(&allowed);
                ret = ck_error_make(err, 0,
                                    "failed to validate kubelet flags: unknown 'kubernetes.io' or "
                                    "'k8s.io' labels specified with --node-labels: [%s]\n"
                                    "--node-labels in the 'kubernetes.io' namespace must begin "
                                    "with an allowed prefix (%s, %s) or be in the specifically "
                                    "allowed set (%s)",
                                    list, kubelet_label_namespaces[0], kubelet_label_namespaces[1],
                                    allowed_list);
                free(list);
                free(allowed_list);
        } else if (invalid.n > 0) {
                char *j = msgs_join(&invalid, "; ");
                ret = ck_error_make(err, 0,
                                    "failed to validate kubelet flags: invalid node labels: %s", j);
                free(j);
        }
        msgs_free(&unknown);
        msgs_free(&invalid);
        return ret;
}

static void check_positive_period(struct msgs *m, const char *field, const char *flag, int64_t ms)
{
        if (ms > 0)
                return;
        char d[64];
        go_duration_format_ms(ms, d, sizeof(d));
        if (flag)
                msgs_add(m, "invalid configuration: %s (--%s) %s must be greater than 0", field,
                         flag, d);
        else
                msgs_add(m, "invalid configuration: %s %s must be greater than 0", field, d);
}

/* upstream validation_linux.go: userNamespaces.idsPerPod */
static void check_userns(struct msgs *m, const struct kubelet_config *cfg)
{
        int64_t ids = cfg->userns_ids_per_pod;
        if (!cfg->has_userns_ids_per_pod)
                return;
        if (ids < 65536)
                msgs_add(m, "invalid configuration: userNamespaces.idsPerPod must not be less "
                            "than 65536");
        else if (ids % 65536 != 0)
                msgs_add(m, "invalid configuration: userNamespaces.idsPerPod must be a multiple "
                            "of 65536");
        else if (ids > UINT32_MAX)
                msgs_add(m, "invalid configuration: userNamespaces.idsPerPod must not be more "
                            "than 4294967295");
}

/* upstream's checks of the graceful node shutdown fields (its feature
 * gates GracefulNodeShutdown and ...BasedOnPodPriority on, their default) */
static void check_shutdown(struct msgs *m, const struct kubelet_config *cfg)
{
        int64_t grace = cfg->shutdown_grace_period_ms;
        int64_t critical = cfg->shutdown_grace_period_critical_pods_ms;
        char g[64], c[64];
        go_duration_format_ms(grace, g, sizeof(g));
        go_duration_format_ms(critical, c, sizeof(c));
        if (critical > grace)
                msgs_add(m,
                         "invalid configuration: shutdownGracePeriodCriticalPods %s must be <= "
                         "shutdownGracePeriod %s",
                         c, g);
        if (grace < 0 || (grace > 0 && grace < 1000))
                msgs_add(m,
                         "invalid configuration: shutdownGracePeriod %s must be either zero or "
                         "otherwise >= 1 sec",
                         g);
        if (critical < 0 || (critical > 0 && critical < 1000))
                msgs_add(m,
                         "invalid configuration: shutdownGracePeriodCriticalPods %s must be "
                         "either zero or otherwise >= 1 sec",
                         c);
        if (cfg->n_shutdown_by_priority && (grace > 0 || critical > 0))
                msgs_add(m, "invalid configuration: Cannot specify both "
                            "shutdownGracePeriodByPodPriority and shutdownGracePeriod at the same "
                            "time");
}

static void check_reserved(struct msgs *m, const char *field, const char *flag,
                           const struct kv_list *l)
{
        for (size_t i = 0; i < l->n; i++) {
                const char *k = l->items[i].key;
                if (strcmp(k, "cpu") != 0 && strcmp(k, "memory") != 0 &&
                    strcmp(k, "ephemeral-storage") != 0 && strcmp(k, "pid") != 0) {
                        char *q = kcfg_quote(k);
                        msgs_add(m, "invalid configuration: %s (--%s): cannot reserve %s resource",
                                 field, flag, q);
                        free(q);
                }
        }
}

static bool valid_port(int32_t p)
{
        return p >= 1 && p <= 65535;
}

static void check_pod_logs_dir(struct msgs *m, const char *dir)
{
        if (dir == NULL || *dir == '\0') {
                msgs_add(m, "invalid configuration: podLogsDir was not specified");
                dir = "";
        }
        char *q = kcfg_quote(dir);
        if (dir[0] != '/')
                msgs_add(m, "invalid configuration: pod logs path %s must be absolute path", q);
        char *clean = kcfg_path_clean(dir);
        if (strcmp(clean, dir) != 0)
                msgs_add(m, "invalid configuration: pod logs path %s must be normalized", q);
        free(clean);
        for (const unsigned char *p = (const unsigned char *)dir; *p; p++) {
                if (*p > 0x7f) {
                        /* "mut" is upstream's spelling */
                        msgs_add(m,
                                 "invalid configuration: pod logs path %s mut contains ASCII "
                                 "characters only",
                                 q);
                        break;
                }
        }
        free(q);
}

/* What upstream's BuildAuth refuses at start (cmd/kubelet/app/auth.go), and
 * ValidateKubeletConfiguration's pairing of the serving certificate and key. */
static void check_server_auth(struct msgs *m, const struct kubelet_config *cfg)
{
        const char *mode = cfg->authorization_mode ? cfg->authorization_mode : "";
        bool standalone = cfg->kubeconfig == NULL || *cfg->kubeconfig == '\0';
        if (*mode == '\0')
                msgs_add(m, "no authorization mode specified");
        else if (strcmp(mode, "AlwaysAllow") != 0 && strcmp(mode, "Webhook") != 0)
                msgs_add(m, "unknown authorization mode %s", mode);
        else if (strcmp(mode, "Webhook") == 0 && standalone)
                msgs_add(m, "no client provided, cannot use webhook authorization (authorization "
                            "mode Webhook needs --kubeconfig; use AlwaysAllow in standalone mode)");
        if (cfg->authn_webhook && standalone)
                msgs_add(m, "no client provided, cannot use webhook authentication "
                            "(authentication.webhook.enabled needs --kubeconfig)");
        if (!cfg->authn_webhook && !cfg->anonymous_auth &&
            (cfg->client_ca_file == NULL || *cfg->client_ca_file == '\0'))
                msgs_add(m, "no authentication method configured (enable "
                            "authentication.anonymous, authentication.webhook or set "
                            "authentication.x509.clientCAFile)");
        bool has_cert = cfg->tls_cert_file && *cfg->tls_cert_file;
        bool has_key = cfg->tls_private_key_file && *cfg->tls_private_key_file;
        if (has_cert != has_key)
                msgs_add(m, "invalid configuration: tlsCertFile (--tls-cert-file) and "
                            "tlsPrivateKeyFile (--tls-private-key-file) must be set together");
}

/* Upstream parses containerLogMaxSize when it creates the kubelet
 * (NewContainerLogManager), after the validation: its message is that one. */
static int check_container_log_max_size(const char *size, ck_error_t *err)
{
        int64_t bytes = 0;
        if (clm_parse_max_size(size ? size : "", &bytes, err) == 0)
                return 0;
        cleanup_free char *q = kcfg_quote(size ? size : "");
        return ck_error_wrap(err,
                             "failed to initialize container log manager: failed to parse "
                             "container log max size %s",
                             q);
}

/* upstream's checks of the image garbage collection policy */
static void check_image_gc(struct msgs *m, const struct kubelet_config *cfg)
{
        int32_t high = cfg->image_gc_high_threshold_percent;
        int32_t low = cfg->image_gc_low_threshold_percent;
        if (high < 0 || high > 100)
                msgs_add(m,
                         "invalid configuration: imageGCHighThresholdPercent "
                         "(--image-gc-high-threshold) %d must be between 0 and 100, inclusive",
                         high);
        if (low < 0 || low > 100)
                msgs_add(m,
                         "invalid configuration: imageGCLowThresholdPercent "
                         "(--image-gc-low-threshold) %d must be between 0 and 100, inclusive",
                         low);
        if (low >= high)
                msgs_add(m,
                         "invalid configuration: imageGCLowThresholdPercent "
                         "(--image-gc-low-threshold) %d must be less than "
                         "imageGCHighThresholdPercent (--image-gc-high-threshold) %d",
                         low, high);
        char max_s[64], min_s[64];
        go_duration_format_ms(cfg->image_maximum_gc_age_ms, max_s, sizeof(max_s));
        go_duration_format_ms(cfg->image_minimum_gc_age_ms, min_s, sizeof(min_s));
        if (cfg->image_maximum_gc_age_ms < 0)
                msgs_add(m, "invalid configuration: imageMaximumGCAge %s must not be negative",
                         max_s);
        if (cfg->image_maximum_gc_age_ms > 0 &&
            cfg->image_maximum_gc_age_ms <= cfg->image_minimum_gc_age_ms)
                msgs_add(m,
                         "invalid configuration: imageMaximumGCAge %s must be greater than "
                         "imageMinimumGCAge %s",
                         max_s, min_s);
}

int kubelet_config_validate(const struct kubelet_config *cfg, ck_error_t *err)
{
        if (validate_node_labels(&cfg->node_labels, err) < 0)
                return -1;

        struct msgs m = {0};
        if (cfg->node_lease_duration_seconds <= 0)
                msgs_add(&m, "invalid configuration: nodeLeaseDurationSeconds must be greater "
                             "than 0");
        if (cfg->kube_api_burst < 0)
                msgs_add(&m,
                         "invalid configuration: kubeAPIBurst (--kube-api-burst) %d must not be a "
                         "negative number",
                         cfg->kube_api_burst);
        if (cfg->kube_api_qps < 0)
                msgs_add(&m,
                         "invalid configuration: kubeAPIQPS (--kube-api-qps) %d must not be a "
                         "negative number",
                         cfg->kube_api_qps);
        /* upstream's order: kubeAPIQPS, nodeStatusMaxImages, maxPods */
        if (cfg->node_status_max_images < -1)
                msgs_add(&m,
                         "invalid configuration: nodeStatusMaxImages (--node-status-max-images) "
                         "%d must be -1 or greater",
                         cfg->node_status_max_images);
        if (cfg->max_pods < 0)
                msgs_add(&m,
                         "invalid configuration: maxPods (--max-pods) %d must not be a negative "
                         "number",
                         cfg->max_pods);
        if (!valid_port(cfg->port))
                msgs_add(&m,
                         "invalid configuration: port (--port) %d must be between 1 and 65535, "
                         "inclusive",
                         cfg->port);
        if (cfg->read_only_port != 0 && !valid_port(cfg->read_only_port))
                msgs_add(&m,
                         "invalid configuration: readOnlyPort (--read-only-port) %d must be "
                         "between 0 and 65535, inclusive",
                         cfg->read_only_port);
        if (cfg->healthz_port != 0 && !valid_port(cfg->healthz_port))
                msgs_add(&m,
                         "invalid configuration: healthzPort (--healthz-port) %d must be "
                         "between 1 and 65535, inclusive",
                         cfg->healthz_port);
        if (cfg->container_runtime_endpoint == NULL || *cfg->container_runtime_endpoint == '\0')
                msgs_add(&m, "invalid configuration: the containerRuntimeEndpoint was not "
                             "specified or empty");
        if (cfg->container_log_max_workers < 1)
                msgs_add(&m, "invalid configuration: containerLogMaxWorkers must be greater than "
                             "or equal to 1");
        if (cfg->container_log_monitor_interval_ms < 3000)
                msgs_add(&m, "invalid configuration: containerLogMonitorInterval must be a "
                             "positive time duration greater than or equal to 3s");
        check_image_gc(&m, cfg);
        if (cfg->container_log_max_files <= 1)
                msgs_add(&m, "invalid configuration: containerLogMaxFiles must be greater than 1");
        check_pod_logs_dir(&m, cfg->pod_logs_dir);
        check_server_auth(&m, cfg);

        /* ckubelet's own checks */
        const char *driver = cfg->cgroup_driver ? cfg->cgroup_driver : "";
        if (strcmp(driver, "cgroupfs") != 0 && strcmp(driver, "systemd") != 0) {
                char *q = kcfg_quote(driver);
                msgs_add(&m,
                         "invalid configuration: cgroupDriver (--cgroup-driver) %s must be one "
                         "of: \"cgroupfs\", \"systemd\"",
                         q);
                free(q);
        }
        check_positive_period(&m, "syncFrequency", "sync-frequency", cfg->sync_frequency_ms);
        check_positive_period(&m, "fileCheckFrequency", "file-check-frequency",
                              cfg->file_check_frequency_ms);
        check_positive_period(&m, "httpCheckFrequency", "http-check-frequency",
                              cfg->http_check_frequency_ms);
        check_positive_period(&m, "runtimeRequestTimeout", "runtime-request-timeout",
                              cfg->runtime_request_timeout_ms);
        check_positive_period(&m, "nodeStatusUpdateFrequency", "node-status-update-frequency",
                              cfg->node_status_update_frequency_ms);
        check_positive_period(&m, "nodeStatusReportFrequency", NULL,
                              cfg->node_status_report_frequency_ms);
        check_shutdown(&m, cfg);
        check_userns(&m, cfg);
        check_reserved(&m, "systemReserved", "system-reserved", &cfg->system_reserved);
        check_reserved(&m, "kubeReserved", "kube-reserved", &cfg->kube_reserved);

        int ret = 0;
        if (m.n == 1) {
                ret = ck_error_make(err, 0, "failed to validate kubelet configuration: %s",
                                    m.items[0]);
        } else if (m.n > 1) {
                char *j = msgs_join(&m, ", ");
                ret = ck_error_make(err, 0, "failed to validate kubelet configuration: [%s]", j);
                free(j);
        }
        msgs_free(&m);
        if (ret == 0)
                ret = check_container_log_max_size(cfg->container_log_max_size, err);
        return ret;
}
