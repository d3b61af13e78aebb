/* SPDX-License-Identifier: Apache-2.0 */
/*
 * struct kubelet_config: upstream defaults, copy, release and the fields
 * derived once parsing is done.  The file decoder is kubeletconfig_file.c,
 * the flags kubeletconfig_flags.c, the validation kubeletconfig_validate.c.
 */
#include "config/kubeletconfig_internal.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void kcfg_set_str(char **dst, const char *v)
{
        char *copy = xstrdup(v);
        free(*dst);
        *dst = copy;
}

size_t kcfg_strv_len(char *const *v)
{
        size_t n = 0;
        while (v && v[n])
                n++;
        return n;
}

void kcfg_join_append(char **list, const char *sep, const char *item)
{
        char *next = *list ? xasprintf("%s%s%s", *list, sep, item) : xstrdup(item);
        free(*list);
        *list = next;
}

void kcfg_strv_append(char ***v, const char *s)
{
        size_t n = kcfg_strv_len(*v);
        *v = xrealloc(*v, (n + 2) * sizeof(char *));
        (*v)[n] = xstrdup(s);
        (*v)[n + 1] = NULL;
}

void kcfg_strv_free(char ***v)
{
        for (size_t i = 0; *v && (*v)[i]; i++)
                free((*v)[i]);
        free(*v);
        *v = NULL;
}

char **kcfg_strv_dup(char *const *v)
{
        if (v == NULL)
                return NULL;
        size_t n = kcfg_strv_len(v);
        char **out = xcalloc(n + 1, sizeof(char *));
        for (size_t i = 0; i < n; i++)
                out[i] = xstrdup(v[i]);
        return out;
}

void kcfg_kv_set(struct kv_list *l, const char *key, const char *value)
{
        for (size_t i = 0; i < l->n; i++) {
                if (strcmp(l->items[i].key, key) == 0) {
                        kcfg_set_str(&l->items[i].value, value);
                        return;
                }
        }
        l->items = xrealloc(l->items, (l->n + 1) * sizeof(*l->items));
        l->items[l->n].key = xstrdup(key);
        l->items[l->n].value = xstrdup(value);
        l->n++;
}

void kcfg_kv_clear(struct kv_list *l)
{
        for (size_t i = 0; i < l->n; i++) {
                free(l->items[i].key);
                free(l->items[i].value);
        }
        free(l->items);
        l->items = NULL;
        l->n = 0;
}

void kcfg_kv_copy(struct kv_list *dst, const struct kv_list *src)
{
        kcfg_kv_clear(dst);
        for (size_t i = 0; i < src->n; i++)
                kcfg_kv_set(dst, src->items[i].key, src->items[i].value);
}

bool kubelet_config_feature_enabled(const struct kubelet_config *cfg, const char *name, bool dflt)
{
        for (size_t i = 0; i < cfg->feature_gates.n; i++)
                if (strcmp(cfg->feature_gates.items[i].key, name) == 0)
                        return strcmp(cfg->feature_gates.items[i].value, "true") == 0;
        return dflt;
}

char *kcfg_path_clean(const char *p)
{
        if (*p == '\0')
                return xstrdup(".");
        bool rooted = p[0] == '/';
        size_t len = strlen(p);
        char *out = xmalloc(len + 2);
        size_t w = 0, r = 0, dotdot = 0;
        if (rooted) {
                out[w++] = '/';
                r = 1;
                dotdot = 1;
        }
        while (r < len) {
                if (p[r] == '/') {
                        r++;
                } else if (p[r] == '.' && (r + 1 == len || p[r + 1] == '/')) {
                        r++;
                } else if (p[r] == '.' && p[r + 1] == '.' && (r + 2 == len || p[r + 2] == '/')) {
                        r += 2;
                        if (w > dotdot) {
                                /* backtrack one element */
                                w--;
                                while (w > dotdot && out[w] != '/')
                                        w--;
                        } else if (!rooted) {
                                if (w > 0)
                                        out[w++] = '/';
                                out[w++] = '.';
                                out[w++] = '.';
                                dotdot = w;
                        }
                } else {
                        if ((rooted && w != 1) || (!rooted && w != 0))
                                out[w++] = '/';
                        for (; r < len && p[r] != '/'; r++)
                                out[w++] = p[r];
                }
        }
        if (w == 0)
                out[w++] = '.';
        out[w] = '\0';
        return out;
}

char *kcfg_path_resolve(const char *dir, const char *p)
{
        if (p == NULL || *p == '\0' || *p == '/')
                return xstrdup(p);
        char *joined = xasprintf("%s/%s", dir, p);
        char *clean = kcfg_path_clean(joined);
        free(joined);
        return clean;
}

void kubelet_config_defaults(struct kubelet_config *cfg)
{
        memset(cfg, 0, sizeof(*cfg));
        cfg->container_runtime_endpoint = xstrdup(KCFG_DEFAULT_RUNTIME_ENDPOINT);
        cfg->root_dir = xstrdup(KCFG_DEFAULT_ROOT_DIR);
        cfg->register_node = true;
        cfg->address = xstrdup(KCFG_DEFAULT_ADDRESS);
        cfg->port = KCFG_DEFAULT_PORT;
        cfg->read_only_port = 0;
        cfg->healthz_port = KCFG_DEFAULT_HEALTHZ_PORT;
        cfg->healthz_bind_address = xstrdup(KCFG_DEFAULT_HEALTHZ_ADDRESS);
        cfg->enable_debugging_handlers = true;
        cfg->enable_debug_flags_handler = true;
        cfg->file_check_frequency_ms = KCFG_DEFAULT_FILE_CHECK_MS;
        cfg->http_check_frequency_ms = KCFG_DEFAULT_HTTP_CHECK_MS;
        cfg->sync_frequency_ms = KCFG_DEFAULT_SYNC_MS;
        cfg->runtime_request_timeout_ms = KCFG_DEFAULT_RUNTIME_TIMEOUT_MS;
        cfg->max_pods = KCFG_DEFAULT_MAX_PODS;
        cfg->cluster_domain = xstrdup("");
        cfg->resolv_conf = xstrdup(KCFG_DEFAULT_RESOLV_CONF);
        cfg->cgroup_root = xstrdup("");
        cfg->cgroups_per_qos = true;
        cfg->cgroup_driver = xstrdup(KCFG_DEFAULT_CGROUP_DRIVER);
        cfg->pod_logs_dir = xstrdup(KCFG_DEFAULT_POD_LOGS_DIR);
        cfg->serialize_image_pulls = true;
        cfg->kube_api_qps = KCFG_DEFAULT_KUBE_API_QPS;
        cfg->kube_api_burst = KCFG_DEFAULT_KUBE_API_BURST;
        cfg->node_status_update_frequency_ms = KCFG_DEFAULT_NODE_STATUS_UPDATE_MS;
        cfg->node_status_report_frequency_ms = KCFG_DEFAULT_NODE_STATUS_REPORT_MS;
        cfg->node_lease_duration_seconds = KCFG_DEFAULT_NODE_LEASE_SECONDS;
        cfg->fail_swap_on = true;
        cfg->fail_cgroup_v1 = true;
        cfg->max_dead_per_container = 1;
        cfg->eviction_pressure_transition_ms = KCFG_DEFAULT_EVICTION_TRANSITION_MS;
        cfg->volume_stats_agg_period_ms = KCFG_DEFAULT_VOLUME_STATS_AGG_MS;
        cfg->max_dead_containers = -1;
        cfg->image_gc_high_threshold_percent = KCFG_DEFAULT_IMAGE_GC_HIGH;
        cfg->image_gc_low_threshold_percent = KCFG_DEFAULT_IMAGE_GC_LOW;
        cfg->image_minimum_gc_age_ms = KCFG_DEFAULT_IMAGE_MIN_GC_AGE_MS;
        cfg->node_status_max_images = KCFG_DEFAULT_NODE_STATUS_MAX_IMAGES;
        cfg->container_log_max_size = xstrdup(KCFG_DEFAULT_CONTAINER_LOG_MAX_SIZE);
        cfg->container_log_max_files = KCFG_DEFAULT_CONTAINER_LOG_MAX_FILES;
        cfg->container_log_max_workers = KCFG_DEFAULT_CONTAINER_LOG_MAX_WORKERS;
        cfg->container_log_monitor_interval_ms = KCFG_DEFAULT_CONTAINER_LOG_MONITOR_INTERVAL_MS;
        cfg->cert_dir = xstrdup(KCFG_DEFAULT_CERT_DIR);
        cfg->enable_server = true;
        /* the command line's legacy defaults (applyLegacyDefaults) */
        cfg->anonymous_auth = true;
        cfg->authn_webhook = false;
        cfg->authn_webhook_cache_ttl_ms = KCFG_DEFAULT_AUTHN_CACHE_TTL_MS;
        cfg->authorization_mode = xstrdup("AlwaysAllow");
        cfg->authz_cache_authorized_ttl_ms = KCFG_DEFAULT_AUTHZ_ALLOWED_TTL_MS;
        cfg->authz_cache_unauthorized_ttl_ms = KCFG_DEFAULT_AUTHZ_DENIED_TTL_MS;
}

/* The strings struct kubelet_config owns, for release and copy. */
#define STR(member) offsetof(struct kubelet_config, member)
static const size_t owned_strings[] = {
    STR(config_file),
    STR(container_runtime_endpoint),
    STR(image_service_endpoint),
    STR(root_dir),
    STR(hostname_override),
    STR(node_name),
    STR(kubeconfig),
    STR(node_ip),
    STR(static_pod_path),
    STR(static_pod_url),
    STR(address),
    STR(healthz_bind_address),
    STR(cluster_domain),
    STR(resolv_conf),
    STR(cgroup_root),
    STR(cgroup_driver),
    STR(pod_logs_dir),
    STR(pod_infra_container_image),
    STR(cert_dir),
    STR(tls_cert_file),
    STR(tls_private_key_file),
    STR(client_ca_file),
    STR(tls_min_version),
    STR(authorization_mode),
    STR(container_log_max_size),
};
#undef STR

static char **string_at(struct kubelet_config *cfg, size_t off)
{
        return (char **)((char *)cfg + off);
}

void kubelet_config_release(struct kubelet_config *cfg)
{
        if (cfg == NULL)
                return;
        for (size_t i = 0; i < sizeof(owned_strings) / sizeof(owned_strings[0]); i++) {
                char **s = string_at(cfg, owned_strings[i]);
                free(*s);
                *s = NULL;
        }
        kcfg_strv_free(&cfg->cluster_dns);
        kcfg_strv_free(&cfg->allowed_unsafe_sysctls);
        kcfg_strv_free(&cfg->tls_cipher_suites);
        kcfg_kv_clear(&cfg->node_labels);
        kcfg_kv_clear(&cfg->system_reserved);
        kcfg_kv_clear(&cfg->kube_reserved);
        kcfg_kv_clear(&cfg->eviction_hard);
        kcfg_kv_clear(&cfg->eviction_soft);
        kcfg_kv_clear(&cfg->eviction_soft_grace);
        kcfg_kv_clear(&cfg->eviction_minimum_reclaim);
        kcfg_kv_clear(&cfg->feature_gates);
        free(cfg->shutdown_by_priority);
        cfg->shutdown_by_priority = NULL;
        cfg->n_shutdown_by_priority = 0;
}

void kcfg_copy(struct kubelet_config *dst, const struct kubelet_config *src)
{
        *dst = *src;
        for (size_t i = 0; i < sizeof(owned_strings) / sizeof(owned_strings[0]); i++) {
                char **s = string_at(dst, owned_strings[i]);
                *s = xstrdup(*s);
        }
        dst->cluster_dns = kcfg_strv_dup(src->cluster_dns);
        dst->allowed_unsafe_sysctls = kcfg_strv_dup(src->allowed_unsafe_sysctls);
        dst->tls_cipher_suites = kcfg_strv_dup(src->tls_cipher_suites);
        dst->shutdown_by_priority = NULL;
        if (src->n_shutdown_by_priority) {
                size_t size = src->n_shutdown_by_priority * sizeof(*src->shutdown_by_priority);
                dst->shutdown_by_priority = xmalloc(size);
                memcpy(dst->shutdown_by_priority, src->shutdown_by_priority, size);
        }
        memset(&dst->node_labels, 0, sizeof(dst->node_labels));
        memset(&dst->system_reserved, 0, sizeof(dst->system_reserved));
        memset(&dst->kube_reserved, 0, sizeof(dst->kube_reserved));
        memset(&dst->eviction_hard, 0, sizeof(dst->eviction_hard));
        memset(&dst->eviction_soft, 0, sizeof(dst->eviction_soft));
        memset(&dst->eviction_soft_grace, 0, sizeof(dst->eviction_soft_grace));
        memset(&dst->eviction_minimum_reclaim, 0, sizeof(dst->eviction_minimum_reclaim));
        memset(&dst->feature_gates, 0, sizeof(dst->feature_gates));
        kcfg_kv_copy(&dst->node_labels, &src->node_labels);
        kcfg_kv_copy(&dst->system_reserved, &src->system_reserved);
        kcfg_kv_copy(&dst->kube_reserved, &src->kube_reserved);
        kcfg_kv_copy(&dst->eviction_hard, &src->eviction_hard);
        kcfg_kv_copy(&dst->eviction_soft, &src->eviction_soft);
        kcfg_kv_copy(&dst->eviction_soft_grace, &src->eviction_soft_grace);
        kcfg_kv_copy(&dst->eviction_minimum_reclaim, &src->eviction_minimum_reclaim);
        kcfg_kv_copy(&dst->feature_gates, &src->feature_gates);
}

/* nodeutil.GetHostname: the override or the kernel's hostname, trimmed of
 * white space, lower-cased; empty is an error. */
static int node_name_from(const char *override, char **out, ck_error_t *err)
{
        char buf[HOST_NAME_MAX + 1];
        const char *name = override;
        if (name == NULL || *name == '\0') {
                if (gethostname(buf, sizeof(buf)) < 0)
                        return ck_error_make(err, errno, "couldn't determine hostname");
                buf[sizeof(buf) - 1] = '\0';
                name = buf;
        }
        while (*name && isspace((unsigned char)*name))
                name++;
        size_t len = strlen(name);
        while (len > 0 && isspace((unsigned char)name[len - 1]))
                len--;
        if (len == 0)
                return ck_error_make(err, 0, "empty hostname is invalid");
        char *lowered = xstrndup(name, len);
        for (char *p = lowered; *p; p++)
                *p = (char)tolower((unsigned char)*p);
        *out = lowered;
        return 0;
}

int kcfg_finish(struct kubelet_config *cfg, ck_error_t *err)
{
        char *name = NULL;
        if (node_name_from(cfg->hostname_override, &name, err) < 0)
                return -1;
        free(cfg->node_name);
        cfg->node_name = name;
        if (cfg->image_service_endpoint == NULL || *cfg->image_service_endpoint == '\0')
                kcfg_set_str(&cfg->image_service_endpoint, cfg->container_runtime_endpoint);
        /* the root directory's paths reach the runtime as mount sources,
         * which it resolves in its own working directory: a relative
         * --root-dir is taken from ours (upstream passes it on as given,
         * and the runtime then fails to mount /etc/hosts) */
        if (cfg->root_dir != NULL && cfg->root_dir[0] != '/' && cfg->root_dir[0] != '\0') {
                char cwd[4096];
                if (getcwd(cwd, sizeof(cwd)) == NULL)
                        return ck_error_make(err, errno, "--root-dir \"%s\": current directory",
                                             cfg->root_dir);
                char *abs = xasprintf("%s/%s", cwd, cfg->root_dir);
                free(cfg->root_dir);
                cfg->root_dir = abs;
        }
        return 0;
}
