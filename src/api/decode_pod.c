/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api_pod_decode: v1.Pod JSON -> struct pod, with the apiserver's defaulting
 * (pkg/apis/core/v1/defaults.go) written into pod->raw and its validation
 * (ValidatePodCreate) for the fields the kubelet uses.
 *
 * Errors: wrong JSON types are reported alone (the apiserver's decoder
 * fails before validating); otherwise every validation error, in upstream's
 * order, joined with "; ".
 */
#include "api/api_internal.h"
#include "api/decode.h"

#include "util/cleanup.h"
#include "util/xalloc.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static bool str_in(const char *s, const char *const *list)
{
        for (; *list; list++)
                if (strcmp(s, *list) == 0)
                        return true;
        return false;
}

static void decode_metadata(struct dctx *d, json_t *meta, struct pod *pod)
{
        const char *p = "metadata";
        set_default_string(meta, "namespace", "default");
        get_string(d, meta, p, "name", &pod->name);
        get_string(d, meta, p, "namespace", &pod->namespace);
        get_string(d, meta, p, "uid", &pod->uid);
        get_string(d, meta, p, "resourceVersion", &pod->resource_version);
        get_int(d, meta, p, "generation", 64, &pod->generation);
        get_str_map(d, meta, p, "labels", &pod->labels);
        get_str_map(d, meta, p, "annotations", &pod->annotations);
        get_string(d, meta, p, "deletionTimestamp", &pod->deletion_timestamp);
        pod->has_deletion_grace_period_seconds = get_int(d, meta, p, "deletionGracePeriodSeconds",
                                                         64, &pod->deletion_grace_period_seconds);
        get_string(d, meta, p, "creationTimestamp", &pod->creation_timestamp);
        if (pod->name == NULL)
                pod->name = xstrdup("");
        if (pod->namespace == NULL)
                pod->namespace = xstrdup("default");

        /* ValidateObjectMeta */
        if (pod->name[0] == '\0')
                ferr_required(d, "metadata.name", "name or generateName is required");
        else
                validate_dns1123_subdomain(d, "metadata.name", pod->name);
        validate_dns1123_label(d, "metadata.namespace", pod->namespace);
        if (pod->generation < 0)
                ferr_invalid_int(d, "metadata.generation", pod->generation,
                                 "must be greater than or equal to 0");
        for (size_t i = 0; i < pod->labels.n; i++) {
                validate_qualified_name(d, "metadata.labels", pod->labels.items[i].key);
                validate_label_value(d, "metadata.labels", pod->labels.items[i].value);
        }
        size_t total = 0;
        for (size_t i = 0; i < pod->annotations.n; i++) {
                const char *k = pod->annotations.items[i].key;
                cleanup_free char *lower = xstrdup(k);
                for (char *c = lower; *c; c++)
                        if (*c >= 'A' && *c <= 'Z')
                                *c = (char)(*c - 'A' + 'a');
                validate_qualified_name_shown(d, "metadata.annotations", lower, k);
                total += strlen(k) + strlen(pod->annotations.items[i].value);
        }
        if (total > 256 * 1024)
                ferr(d, "metadata.annotations", "Too long: may not be more than 262144 bytes");
}

static void decode_volumes(struct dctx *d, json_t *spec, struct pod *pod, struct str_vec *valid)
{
        json_t *vols = get_array(d, spec, "spec", "volumes");
        if (vols == NULL)
                return;
        pod->volumes = xcalloc(json_array_size(vols) + 1, sizeof(*pod->volumes));
        size_t i;
        json_t *vo;
        json_array_foreach(vols, i, vo)
        {
                cleanup_free char *ip = path_index("spec.volumes", i);
                if (!json_is_object(vo)) {
                        ferr_type(d, ip, vo, "an object");
                        continue;
                }
                struct volume *v = &pod->volumes[pod->n_volumes++];
                size_t before = d->errors.n;
                decode_volume(d, vo, ip, v);
                cleanup_free char *np = path_child(ip, "name");
                if (v->name[0] == '\0')
                        ferr_required(d, np, "");
                else
                        validate_dns1123_label(d, np, v->name);
                bool dup = false;
                for (size_t j = 0; j < valid->n && !dup; j++)
                        dup = strcmp(valid->items[j], v->name) == 0;
                if (dup)
                        ferr_duplicate(d, np, v->name);
                if (d->errors.n == before)
                        str_vec_add(valid, v->name);
        }
}

enum container_list { LIST_APP, LIST_INIT, LIST_EPHEMERAL };

static void decode_container_list(struct dctx *d, json_t *spec, const char *key,
                                  enum container_list kind, bool host_network,
                                  const char *restart_policy, struct str_vec *names,
                                  const struct str_vec *volumes, struct container **out,
                                  size_t *n_out)
{
        bool init = kind == LIST_INIT, required = kind == LIST_APP;
        cleanup_free char *lp = path_child("spec", key);
        json_t *arr = get_array(d, spec, "spec", key);
        if (arr == NULL) {
                if (required)
                        ferr_required(d, lp, "");
                return;
        }
        if (required && json_array_size(arr) == 0)
                ferr_required(d, lp, "");
        *out = xcalloc(json_array_size(arr) + 1, sizeof(**out));
        struct container_ctx cc = {.init = init,
                                   .ephemeral = kind == LIST_EPHEMERAL,
                                   .host_network = host_network,
                                   .list_path = lp,
                                   .names = names,
                                   .volumes = volumes,
                                   .pod_restart_policy = restart_policy};
        size_t i;
        json_t *co;
        json_array_foreach(arr, i, co)
        {
                cleanup_free char *ip = path_index(lp, i);
                if (!json_is_object(co)) {
                        ferr_type(d, ip, co, "an object");
                        continue;
                }
                decode_container(d, co, ip, &cc, &(*out)[(*n_out)++]);
        }
        if (!init)
                check_host_port_conflicts(d, *out, *n_out, lp);
}

/* upstream validateFileKeyRefVolumes: a fileKeyRef names a volume of the
 * pod, an emptyDir. */
static void validate_file_key_ref_volumes(struct dctx *d, const struct pod *pod)
{
        static const char *const keys[] = {"containers", "initContainers", "ephemeralContainers"};
        const struct container *lists[] = {pod->containers, pod->init_containers,
                                           pod->ephemeral_containers};
        size_t counts[] = {pod->n_containers, pod->n_init_containers, pod->n_ephemeral_containers};
        for (size_t l = 0; l < 3; l++)
                for (size_t i = 0; i < counts[l]; i++)
                        for (size_t j = 0; j < lists[l][i].n_env; j++) {
                                const struct env_var *e = &lists[l][i].env[j];
                                if (e->kind != ENV_FILE_KEY || e->ref_name == NULL)
                                        continue;
                                const struct volume *v = NULL;
                                for (size_t k = 0; k < pod->n_volumes && v == NULL; k++)
                                        if (str_eq(pod->volumes[k].name, e->ref_name))
                                                v = &pod->volumes[k];
                                cleanup_free char *p = xasprintf(
                                    "spec.%s[%zu].env[%zu].valueFrom.fileKeyRef.volumeName",
                                    keys[l], i, j);
                                if (v == NULL)
                                        ferr_not_found(d, p, e->ref_name);
                                else if (v->kind != VOLUME_EMPTY_DIR)
                                        ferr_invalid(d, p, e->ref_name,
                                                     "referenced volume must be of type emptyDir");
                        }
}

/* upstream IsPodLevelResourcesSet: spec.resources requests or limits name
 * cpu, memory or a huge page size. */
static bool pod_level_resources_set(json_t *spec)
{
        json_t *res = json_object_get(spec, "resources");
        static const char *const lists[] = {"requests", "limits"};
        for (size_t i = 0; i < 2; i++) {
                const char *k;
                json_t *v;
                json_object_foreach(json_object_get(res, lists[i]), k, v)
                {
                        if (strcmp(k, "cpu") == 0 || strcmp(k, "memory") == 0 ||
                            strncmp(k, "hugepages-", 10) == 0)
                                return true;
                }
        }
        return false;
}

static bool sysctl_in_net_ns(const char *s)
{
        return strncmp(s, "net.", 4) == 0 || strncmp(s, "net/", 4) == 0;
}

static bool sysctl_in_ipc_ns(const char *s)
{
        static const char *const exact[] = {"kernel.shmall", "kernel.shmmax",
                                            "kernel.shmmni", "kernel.shm_rmid_forced",
                                            "kernel.sem",    NULL};
        return str_in(s, exact) || strncmp(s, "kernel.msg", 10) == 0 ||
               strncmp(s, "fs.mqueue.", 10) == 0;
}

static void decode_pod_security_context(struct dctx *d, json_t *spec, struct pod *pod)
{
        static const char UID_RANGE[] = "must be between 0 and 2147483647, inclusive";
        if (jget(spec, "securityContext") == NULL) /* SetDefaults_PodSpec */
                json_object_set_new(spec, "securityContext", json_object());
        json_t *o = get_object(d, spec, "spec", "securityContext");
        if (o == NULL)
                return;
        const char *p = "spec.securityContext";
        struct pod_security_context *sc = &pod->security_context;
        sc->has_run_as_user = get_int(d, o, p, "runAsUser", 64, &sc->run_as_user);
        sc->has_run_as_group = get_int(d, o, p, "runAsGroup", 64, &sc->run_as_group);
        sc->has_run_as_non_root = get_bool(d, o, p, "runAsNonRoot", &sc->run_as_non_root);
        sc->has_fs_group = get_int(d, o, p, "fsGroup", 64, &sc->fs_group);
        /* fsGroupChangePolicy: validated; upstream hands it only to the
         * plugins of persistent volumes, which ckubelet refuses (emptyDir,
         * configMap, secret, downwardAPI and projected get nil) */
        cleanup_free char *fs_policy = NULL;
        if (get_string(d, o, p, "fsGroupChangePolicy", &fs_policy) &&
            !str_eq(fs_policy, "OnRootMismatch") && !str_eq(fs_policy, "Always")) {
                static const char *const policies[] = {"Always", "OnRootMismatch", NULL};
                ferr_not_supported(d, "spec.securityContext.fsGroupChangePolicy", fs_policy,
                                   policies);
        }
        json_t *groups = get_array(d, o, p, "supplementalGroups");
        if (groups) {
                sc->supplemental_groups = xcalloc(json_array_size(groups) + 1, sizeof(int64_t));
                size_t i;
                json_t *g;
                json_array_foreach(groups, i, g)
                {
                        cleanup_free char *ip =
                            path_index("spec.securityContext.supplementalGroups", i);
                        int64_t v;
                        if (json_to_int(d, g, ip, 64, &v)) {
                                sc->supplemental_groups[sc->n_supplemental_groups++] = v;
                                json_array_set_new(groups, i, json_integer(v));
                        }
                }
        }
        json_t *sysctls = get_array(d, o, p, "sysctls");
        if (sysctls) {
                size_t i;
                json_t *s;
                json_array_foreach(sysctls, i, s)
                {
                        cleanup_free char *ip = path_index("spec.securityContext.sysctls", i);
                        if (!json_is_object(s)) {
                                ferr_type(d, ip, s, "an object");
                                continue;
                        }
                        cleanup_free char *name = NULL, *value = NULL;
                        get_string(d, s, ip, "name", &name);
                        get_string(d, s, ip, "value", &value);
                        kv_list_add(&sc->sysctls, name ? name : "", value ? value : "");
                }
        }

        if (sc->has_fs_group && (sc->fs_group < 0 || sc->fs_group > INT32_MAX))
                ferr_invalid_int(d, "spec.securityContext.fsGroup", sc->fs_group, UID_RANGE);
        if (sc->has_run_as_user && (sc->run_as_user < 0 || sc->run_as_user > INT32_MAX))
                ferr_invalid_int(d, "spec.securityContext.runAsUser", sc->run_as_user, UID_RANGE);
        if (sc->has_run_as_group && (sc->run_as_group < 0 || sc->run_as_group > INT32_MAX))
                ferr_invalid_int(d, "spec.securityContext.runAsGroup", sc->run_as_group, UID_RANGE);
        for (size_t i = 0; i < sc->n_supplemental_groups; i++) {
                int64_t g = sc->supplemental_groups[i];
                if (g < 0 || g > INT32_MAX) {
                        cleanup_free char *ip =
                            path_index("spec.securityContext.supplementalGroups", i);
                        ferr_invalid_int(d, ip, g, UID_RANGE);
                }
        }
        if (pod->share_process_namespace && pod->host_pid)
                ferr(d, "spec.securityContext.shareProcessNamespace",
                     "Invalid value: true: ShareProcessNamespace and HostPID cannot both be "
                     "enabled");
        for (size_t i = 0; i < sc->sysctls.n; i++) {
                const char *name = sc->sysctls.items[i].key;
                cleanup_free char *ip = path_index("spec.securityContext.sysctls", i);
                cleanup_free char *np = path_child(ip, "name");
                bool dup = false;
                for (size_t j = 0; j < i; j++)
                        dup |= strcmp(sc->sysctls.items[j].key, name) == 0;
                if (name[0] == '\0')
                        ferr_required(d, np, "");
                else if (!is_sysctl_name(name))
                        ferr_invalid(d, np, name,
                                     "must have at most 253 characters and match regex "
                                     "^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]"
                                     "*[a-z0-9])?$");
                else if (dup)
                        ferr_duplicate(d, np, name);
                if (pod->host_network && sysctl_in_net_ns(name))
                        ferr_invalid(d, np, name,
                                     "may not be specified when 'hostNetwork' is true");
                else if (pod->host_ipc && sysctl_in_ipc_ns(name))
                        ferr_invalid(d, np, name, "may not be specified when 'hostIPC' is true");
        }
}

static void decode_dns_config(struct dctx *d, json_t *spec, struct pod *pod)
{
        json_t *o = get_object(d, spec, "spec", "dnsConfig");
        const char *p = "spec.dnsConfig";
        if (o) {
                struct pod_dns_config *dc = pod->dns_config = xcalloc(1, sizeof(*dc));
                get_str_list(d, o, p, "nameservers", &dc->nameservers);
                get_str_list(d, o, p, "searches", &dc->searches);
                json_t *opts = get_array(d, o, p, "options");
                size_t i;
                json_t *op;
                json_array_foreach(opts, i, op)
                {
                        cleanup_free char *ip = path_index("spec.dnsConfig.options", i);
                        if (!json_is_object(op)) {
                                ferr_type(d, ip, op, "an object");
                                continue;
                        }
                        cleanup_free char *name = NULL, *value = NULL;
                        get_string(d, op, ip, "name", &name);
                        get_string(d, op, ip, "value", &value);
                        dc->options.items =
                            xrealloc(dc->options.items, (dc->options.n + 1) * sizeof(struct kv));
                        dc->options.items[dc->options.n++] =
                            (struct kv){.key = xstrdup(name ? name : ""), .value = value};
                        value = NULL;
                }
        }

        /* validatePodDNSConfig */
        if (pod->dns_policy == DNS_NONE) {
                if (pod->dns_config == NULL) {
                        ferr_required(d, p, "must provide `dnsConfig` when `dnsPolicy` is None");
                        return;
                }
                if (pod->dns_config->nameservers.n == 0) {
                        ferr_required(d, "spec.dnsConfig.nameservers",
                                      "must provide at least one DNS nameserver when `dnsPolicy` "
                                      "is None");
                        return;
                }
        }
        struct pod_dns_config *dc = pod->dns_config;
        if (dc == NULL)
                return;
        json_t *ns = json_object_get(o, "nameservers");
        json_t *se = json_object_get(o, "searches");
        if (dc->nameservers.n > 3) {
                cleanup_free char *bad = json_bad_value(ns);
                ferr(d, "spec.dnsConfig.nameservers",
                     "Invalid value: %s: must not have more than 3 nameservers", bad);
        }
        for (size_t i = 0; i < dc->nameservers.n; i++) {
                cleanup_free char *ip = path_index("spec.dnsConfig.nameservers", i);
                validate_ip(d, ip, dc->nameservers.items[i]);
        }
        size_t chars = 0;
        for (size_t i = 0; i < dc->searches.n; i++)
                chars += strlen(dc->searches.items[i]) + (i > 0);
        if (dc->searches.n > 32) {
                cleanup_free char *bad = json_bad_value(se);
                ferr(d, "spec.dnsConfig.searches",
                     "Invalid value: %s: must not have more than 32 search paths", bad);
        }
        if (chars > 2048) {
                cleanup_free char *bad = json_bad_value(se);
                ferr(d, "spec.dnsConfig.searches",
                     "Invalid value: %s: must not have more than 2048 characters (including "
                     "spaces) in the search list",
                     bad);
        }
        for (size_t i = 0; i < dc->searches.n; i++) {
                const char *s = dc->searches.items[i];
                if (strcmp(s, ".") == 0)
                        continue;
                cleanup_free char *trimmed = xstrdup(s);
                size_t n = strlen(trimmed);
                if (n > 0 && trimmed[n - 1] == '.')
                        trimmed[n - 1] = '\0';
                cleanup_free char *ip = path_index("spec.dnsConfig.searches", i);
                validate_dns1123_subdomain_underscore(d, ip, trimmed);
        }
        for (size_t i = 0; i < dc->options.n; i++) {
                if (dc->options.items[i].key[0] == '\0') {
                        cleanup_free char *ip = path_index("spec.dnsConfig.options", i);
                        ferr_required(d, ip, "must not be empty");
                }
        }
}

static void decode_host_aliases(struct dctx *d, json_t *spec, struct pod *pod)
{
        json_t *arr = get_array(d, spec, "spec", "hostAliases");
        if (arr == NULL)
                return;
        pod->host_aliases = xcalloc(json_array_size(arr) + 1, sizeof(*pod->host_aliases));
        size_t i;
        json_t *ha;
        json_array_foreach(arr, i, ha)
        {
                cleanup_free char *ip = path_index("spec.hostAliases", i);
                if (!json_is_object(ha)) {
                        ferr_type(d, ip, ha, "an object");
                        continue;
                }
                struct host_alias *a = &pod->host_aliases[pod->n_host_aliases++];
                get_string(d, ha, ip, "ip", &a->ip);
                get_str_list(d, ha, ip, "hostnames", &a->hostnames);
                if (a->ip == NULL)
                        a->ip = xstrdup("");
        }
}

static void validate_host_aliases(struct dctx *d, const struct pod *pod)
{
        for (size_t i = 0; i < pod->n_host_aliases; i++) {
                const struct host_alias *a = &pod->host_aliases[i];
                cleanup_free char *ip = path_index("spec.hostAliases", i);
                cleanup_free char *ipp = path_child(ip, "ip");
                validate_ip(d, ipp, a->ip);
                cleanup_free char *hp = path_child(ip, "hostnames");
                for (size_t j = 0; j < a->hostnames.n; j++) {
                        cleanup_free char *jp = path_index(hp, j);
                        validate_dns1123_subdomain(d, jp, a->hostnames.items[j]);
                }
        }
}

static void decode_pull_secrets(struct dctx *d, json_t *spec, struct pod *pod)
{
        json_t *arr = get_array(d, spec, "spec", "imagePullSecrets");
        if (arr == NULL)
                return;
        pod->image_pull_secrets.items = xcalloc(json_array_size(arr) + 1, sizeof(char *));
        size_t i;
        json_t *s;
        json_array_foreach(arr, i, s)
        {
                cleanup_free char *ip = path_index("spec.imagePullSecrets", i);
                if (!json_is_object(s)) {
                        ferr_type(d, ip, s, "an object");
                        continue;
                }
                char *name = NULL;
                get_string(d, s, ip, "name", &name);
                pod->image_pull_secrets.items[pod->image_pull_secrets.n++] =
                    name ? name : xstrdup("");
        }
}

/* Fields that are plain names (NameIsDNSSubdomain / DNS labels). */
static void validate_names(struct dctx *d, const struct pod *pod)
{
        if (pod->service_account_name && pod->service_account_name[0])
                validate_dns1123_subdomain(d, "spec.serviceAccountName", pod->service_account_name);
        if (pod->node_name && pod->node_name[0])
                validate_dns1123_subdomain(d, "spec.nodeName", pod->node_name);
        if (pod->has_active_deadline_seconds &&
            (pod->active_deadline_seconds < 1 || pod->active_deadline_seconds > INT32_MAX))
                ferr_invalid_int(d, "spec.activeDeadlineSeconds", pod->active_deadline_seconds,
                                 "must be between 1 and 2147483647, inclusive");
        if (pod->hostname && pod->hostname[0])
                validate_dns1123_label(d, "spec.hostname", pod->hostname);
        if (pod->subdomain && pod->subdomain[0])
                validate_dns1123_label(d, "spec.subdomain", pod->subdomain);
        validate_host_aliases(d, pod);
        if (pod->priority_class_name && pod->priority_class_name[0])
                validate_dns1123_subdomain(d, "spec.priorityClassName", pod->priority_class_name);
        if (pod->runtime_class_name)
                validate_dns1123_subdomain(d, "spec.runtimeClassName", pod->runtime_class_name);
}

/* validateContainerOnlyForPod: no whitespace around the image. */
static void validate_images(struct dctx *d, const struct container *cs, size_t n, const char *list)
{
        for (size_t i = 0; i < n; i++) {
                const char *img = cs[i].image;
                if (img == NULL || img[0] == '\0')
                        continue;
                size_t len = strlen(img);
                if (strchr(" \t\n\v\f\r", img[0]) || strchr(" \t\n\v\f\r", img[len - 1])) {
                        cleanup_free char *p = xasprintf("%s[%zu].image", list, i);
                        ferr_invalid(d, p, img, "must not have leading or trailing whitespace");
                }
        }
}

static void decode_spec(struct dctx *d, json_t *spec, struct pod *pod)
{
        const char *p = "spec";
        /* SetDefaults_PodSpec (securityContext: see decode_pod_security_context) */
        set_default_string(spec, "dnsPolicy", "ClusterFirst");
        set_default_string(spec, "restartPolicy", "Always");
        set_default_int(spec, "terminationGracePeriodSeconds", 30);
        set_default_string(spec, "schedulerName", "default-scheduler");
        if (jget(spec, "enableServiceLinks") == NULL) /* SetDefaults_Pod */
                json_object_set_new(spec, "enableServiceLinks", json_true());

        get_bool(d, spec, p, "hostNetwork", &pod->host_network);
        get_bool(d, spec, p, "hostPID", &pod->host_pid);
        get_bool(d, spec, p, "hostIPC", &pod->host_ipc);
        get_bool(d, spec, p, "shareProcessNamespace", &pod->share_process_namespace);
        pod->has_host_users = get_bool(d, spec, p, "hostUsers", &pod->host_users);
        get_bool(d, spec, p, "enableServiceLinks", &pod->enable_service_links);
        get_int(d, spec, p, "terminationGracePeriodSeconds", 64,
                &pod->termination_grace_period_seconds);
        pod->has_active_deadline_seconds =
            get_int(d, spec, p, "activeDeadlineSeconds", 64, &pod->active_deadline_seconds);
        cleanup_free char *restart = NULL, *dns = NULL;
        get_string(d, spec, p, "restartPolicy", &restart);
        get_string(d, spec, p, "dnsPolicy", &dns);
        get_string(d, spec, p, "hostname", &pod->hostname);
        get_string(d, spec, p, "hostnameOverride", &pod->hostname_override);
        if (pod->hostname_override != NULL) {
                /* upstream validateHostnameOverride */
                bool fqdn = false;
                get_bool(d, spec, p, "setHostnameAsFQDN", &fqdn);
                if (fqdn)
                        ferr_forbidden(d, "spec.hostnameOverride",
                                       "may not be specified when setHostnameAsFQDN is true");
                if (pod->host_network)
                        ferr_forbidden(d, "spec.hostnameOverride",
                                       "may not be specified when hostNetwork is true");
                if (strlen(pod->hostname_override) > 64)
                        ferr(d, "spec.hostnameOverride", "Too long: may not be more than 64 bytes");
                validate_dns1123_subdomain(d, "spec.hostnameOverride", pod->hostname_override);
        }
        get_string(d, spec, p, "subdomain", &pod->subdomain);
        get_string(d, spec, p, "nodeName", &pod->node_name);
        get_string(d, spec, p, "serviceAccountName", &pod->service_account_name);
        if (pod->service_account_name == NULL || pod->service_account_name[0] == '\0') {
                /* serviceAccount is the deprecated alias (v1 conversion) */
                free(pod->service_account_name);
                pod->service_account_name = NULL;
                get_string(d, spec, p, "serviceAccount", &pod->service_account_name);
        }
        if (pod->service_account_name && pod->service_account_name[0]) {
                json_object_set_new(spec, "serviceAccountName",
                                    json_string(pod->service_account_name));
                json_object_set_new(spec, "serviceAccount", json_string(pod->service_account_name));
        }
        pod->has_automount_service_account_token = get_bool(
            d, spec, p, "automountServiceAccountToken", &pod->automount_service_account_token);
        get_string(d, spec, p, "priorityClassName", &pod->priority_class_name);
        pod->has_priority = get_int32(d, spec, p, "priority", &pod->priority);
        get_string(d, spec, p, "runtimeClassName", &pod->runtime_class_name);
        decode_overhead(d, spec, p, &pod->overhead, &pod->has_overhead);
        json_t *os = get_object(d, spec, p, "os");
        cleanup_free char *os_name = NULL;
        if (os)
                get_string(d, os, "spec.os", "name", &os_name);
        d->os_name = os_name;
        pod->os_name = os_name ? xstrdup(os_name) : NULL;
        pod->pod_level_resources = pod_level_resources_set(spec);
        d->has_grace = true;
        d->grace = pod->termination_grace_period_seconds;

        if (pod->termination_grace_period_seconds < 0)
                ferr_invalid_int(d, "spec.terminationGracePeriodSeconds",
                                 pod->termination_grace_period_seconds,
                                 "must be greater than or equal to 0");

        struct str_vec volumes = {0}, names = {0};
        decode_volumes(d, spec, pod, &volumes);
        decode_container_list(d, spec, "containers", LIST_APP, pod->host_network, restart, &names,
                              &volumes, &pod->containers, &pod->n_containers);
        decode_container_list(d, spec, "initContainers", LIST_INIT, pod->host_network, restart,
                              &names, &volumes, &pod->init_containers, &pod->n_init_containers);
        decode_container_list(d, spec, "ephemeralContainers", LIST_EPHEMERAL, pod->host_network,
                              restart, &names, &volumes, &pod->ephemeral_containers,
                              &pod->n_ephemeral_containers);
        /* validateEphemeralContainers: the target is an app or init container */
        for (size_t i = 0; i < pod->n_ephemeral_containers; i++) {
                const char *target = pod->ephemeral_containers[i].target_container_name;
                if (target == NULL || target[0] == '\0')
                        continue;
                bool found = false;
                for (size_t j = 0; j < pod->n_containers && !found; j++)
                        found = strcmp(pod->containers[j].name, target) == 0;
                for (size_t j = 0; j < pod->n_init_containers && !found; j++)
                        found = strcmp(pod->init_containers[j].name, target) == 0;
                if (!found) {
                        cleanup_free char *tp =
                            xasprintf("spec.ephemeralContainers[%zu].targetContainerName", i);
                        ferr_not_found(d, tp, target);
                }
        }
        str_vec_release(&volumes);
        str_vec_release(&names);

        validate_file_key_ref_volumes(d, pod);

        /* validatePodHostNetworkDeps: app containers only */
        for (size_t i = 0; pod->host_network && i < pod->n_containers; i++) {
                const struct container *c = &pod->containers[i];
                for (size_t j = 0; j < c->n_ports; j++) {
                        if (c->ports[j].host_port == c->ports[j].container_port)
                                continue;
                        cleanup_free char *hp =
                            xasprintf("spec.containers[%zu].ports[%zu].hostPort", i, j);
                        ferr_invalid_int(d, hp, c->ports[j].host_port,
                                         "must match `containerPort` when `hostNetwork` is true");
                }
        }

        static const char *const restarts[] = {"Always", "OnFailure", "Never", NULL};
        if (restart == NULL || restart[0] == '\0')
                ferr_required(d, "spec.restartPolicy", "");
        else if (strcmp(restart, "OnFailure") == 0)
                pod->restart_policy = RESTART_ON_FAILURE;
        else if (strcmp(restart, "Never") == 0)
                pod->restart_policy = RESTART_NEVER;
        else if (strcmp(restart, "Always") != 0)
                ferr_not_supported(d, "spec.restartPolicy", restart, restarts);

        static const char *const dnses[] = {"ClusterFirstWithHostNet", "ClusterFirst", "Default",
                                            "None", NULL};
        if (dns == NULL || dns[0] == '\0')
                ferr_required(d, "spec.dnsPolicy", "");
        else if (strcmp(dns, "ClusterFirstWithHostNet") == 0)
                pod->dns_policy = DNS_CLUSTER_FIRST_WITH_HOST_NET;
        else if (strcmp(dns, "Default") == 0)
                pod->dns_policy = DNS_DEFAULT;
        else if (strcmp(dns, "None") == 0)
                pod->dns_policy = DNS_NONE;
        else if (strcmp(dns, "ClusterFirst") != 0)
                ferr_not_supported(d, "spec.dnsPolicy", dns, dnses);

        decode_pod_security_context(d, spec, pod);
        decode_pull_secrets(d, spec, pod);
        decode_dns_config(d, spec, pod);
        decode_host_aliases(d, spec, pod);
        validate_names(d, pod);
        validate_images(d, pod->containers, pod->n_containers, "spec.containers");
        validate_images(d, pod->init_containers, pod->n_init_containers, "spec.initContainers");
        validate_images(d, pod->ephemeral_containers, pod->n_ephemeral_containers,
                        "spec.ephemeralContainers");
        d->os_name = NULL;
}

static char *join_errors(const struct str_vec *v)
{
        size_t len = 1;
        for (size_t i = 0; i < v->n; i++)
                len += strlen(v->items[i]) + 2;
        char *msg = xmalloc(len);
        msg[0] = '\0';
        for (size_t i = 0; i < v->n; i++) {
                if (i)
                        strcat(msg, "; ");
                strcat(msg, v->items[i]);
        }
        return msg;
}

/* kind and apiVersion, when present, must say v1 Pod (a Deployment
 * manifest in the manifest directory is a common mistake). */
static int check_type_meta(json_t *obj, ck_error_t *err)
{
        static const char *const pod_kind[] = {"Pod", NULL};
        static const char *const v1[] = {"v1", NULL};
        struct dctx d = {0};
        json_t *kind = jget(obj, "kind");
        json_t *version = jget(obj, "apiVersion");
        if (kind && !json_is_string(kind))
                ferr_type(&d, "kind", kind, "a string");
        else if (kind && strcmp(json_string_value(kind), "Pod") != 0)
                ferr_not_supported(&d, "kind", json_string_value(kind), pod_kind);
        if (version && !json_is_string(version))
                ferr_type(&d, "apiVersion", version, "a string");
        else if (version && strcmp(json_string_value(version), "v1") != 0)
                ferr_not_supported(&d, "apiVersion", json_string_value(version), v1);
        int ret = 0;
        struct str_vec *v = d.type_errors.n ? &d.type_errors : &d.errors;
        if (v->n) {
                cleanup_free char *msg = join_errors(v);
                ret = ck_error_make(err, 0, "%s", msg);
        }
        dctx_release(&d);
        return ret;
}

static void hash_containers(struct container *cs, size_t n)
{
        for (size_t i = 0; i < n; i++)
                cs[i].hash = api_container_hash(cs[i].name, cs[i].image);
}

int api_pod_decode(json_t *obj, struct pod **out, ck_error_t *err)
{
        *out = NULL;
        if (!json_is_object(obj))
                return ck_error_make(err, 0, "a pod must be a JSON object, not %s",
                                     obj == NULL           ? "nothing"
                                     : json_is_array(obj)  ? "a list"
                                     : json_is_string(obj) ? "a string"
                                                           : "a scalar");
        if (check_type_meta(obj, err) < 0)
                return -1;

        cleanup_pod struct pod *pod = xcalloc(1, sizeof(*pod));
        atomic_init(&pod->refcount, 1);
        pod->raw = json_deep_copy(obj);
        if (pod->raw == NULL)
                return ck_error_make(err, ENOMEM, "copy pod object");

        /* managedFields: kept as text (struct pod) */
        json_t *mf = json_object_get(json_object_get(pod->raw, "metadata"), "managedFields");
        if (mf && !json_is_null(mf)) {
                pod->managed_fields = json_dumps(mf, JSON_COMPACT | JSON_ENCODE_ANY);
                if (pod->managed_fields == NULL)
                        return ck_error_make(err, ENOMEM, "copy pod managedFields");
                json_object_del(json_object_get(pod->raw, "metadata"), "managedFields");
        }

        struct dctx d = {0};
        json_t *meta = get_object(&d, pod->raw, "", "metadata");
        if (meta == NULL && jget(pod->raw, "metadata") == NULL) {
                meta = json_object();
                json_object_set_new(pod->raw, "metadata", meta);
        }
        json_t *spec = get_object(&d, pod->raw, "", "spec");
        if (spec == NULL && jget(pod->raw, "spec") == NULL) {
                spec = json_object();
                json_object_set_new(pod->raw, "spec", spec);
        }
        if (meta)
                decode_metadata(&d, meta, pod);
        if (spec)
                decode_spec(&d, spec, pod);

        struct str_vec *errs = d.type_errors.n ? &d.type_errors : &d.errors;
        if (errs->n > 0) {
                cleanup_free char *msg = join_errors(errs);
                dctx_release(&d);
                return ck_error_make(err, 0, "%s", msg);
        }
        dctx_release(&d);

        hash_containers(pod->containers, pod->n_containers);
        hash_containers(pod->init_containers, pod->n_init_containers);
        hash_containers(pod->ephemeral_containers, pod->n_ephemeral_containers);
        pod->full_name_ = xasprintf("%s/%s", pod->namespace, pod->name);
        *out = pod;
        pod = NULL;
        return 0;
}
