/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PodSandboxConfig for a pod (upstream kuberuntime_sandbox.go
 * generatePodSandboxConfig and kuberuntime_sandbox_linux.go).
 */
#include "kuberuntime/builders.h"
#include "kuberuntime/builders_internal.h"

#include "util/cleanup.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <string.h>

#define HOSTNAME_MAX_LEN 63 /* a kernel nodename is 64 bytes with its NUL */
#define FQDN_MAX_LEN 64

/* The sandbox's log directory (upstream BuildPodLogsDirectory). New string. */
static char *pod_logs_directory(const struct kuberuntime_options *opts, const struct pod *pod)
{
        const char *dir = opts->pod_logs_dir ? opts->pod_logs_dir : "/var/log/pods";
        return xasprintf("%s/%s_%s_%s", dir, pod->namespace, pod->name, pod->uid);
}

/* A lowercase RFC 1123 label (upstream IsDNS1123Label). */
static bool is_dns1123_label(const char *s)
{
        size_t n = strlen(s);
        if (n == 0 || n > 63)
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];
                bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
                if (!alnum && !(c == '-' && i > 0 && i < n - 1))
                        return false;
        }
        return true;
}

#define DNS1123_LABEL_MSG                                                                          \
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "   \
        "and must start and end with an alphanumeric character"

/* upstream truncatePodHostnameIfNeeded. New string in *out. */
static int truncate_hostname(const struct pod *pod, const char *hostname, char **out,
                             ck_error_t *err)
{
        size_t n = strlen(hostname);
        if (n <= HOSTNAME_MAX_LEN) {
                *out = xstrdup(hostname);
                return 0;
        }
        n = HOSTNAME_MAX_LEN;
        while (n > 0 && (hostname[n - 1] == '-' || hostname[n - 1] == '.'))
                n--;
        if (n == 0)
                return ck_error_make(err, 0, "hostname for pod \"%s\" was invalid: \"%s\"",
                                     pod->name, hostname);
        *out = xstrndup(hostname, n);
        LOG_ERROR("Hostname for pod was too long, truncated it",
                  "podName=\"%s\" hostnameMaxLen=%d truncatedHostname=\"%s\"", pod->name,
                  HOSTNAME_MAX_LEN, *out);
        return 0;
}

/* upstream GeneratePodHostNameAndDomain + GetNodenameForKernel. */
static int pod_hostname(const struct kuberuntime_options *opts, const struct pod *pod, char **out,
                        ck_error_t *err)
{
        /* upstream: the override (a valid DNS subdomain, checked at
         * decoding) is the hostname, with no domain */
        if (pod->hostname_override != NULL)
                return truncate_hostname(pod, pod->hostname_override, out, err);
        const char *hostname = pod->name;
        if (pod->hostname != NULL && *pod->hostname != '\0') {
                if (!is_dns1123_label(pod->hostname))
                        return ck_error_make(err, 0,
                                             "pod Hostname \"%s\" is not a valid DNS label: %s",
                                             pod->hostname, DNS1123_LABEL_MSG);
                hostname = pod->hostname;
        }
        cleanup_free char *name = NULL;
        if (truncate_hostname(pod, hostname, &name, err) < 0)
                return -1;

        if (pod->subdomain == NULL || *pod->subdomain == '\0') {
                *out = name;
                name = NULL;
                return 0;
        }
        if (!is_dns1123_label(pod->subdomain))
                return ck_error_make(err, 0, "pod Subdomain \"%s\" is not a valid DNS label: %s",
                                     pod->subdomain, DNS1123_LABEL_MSG);
        if (!json_is_true(kuberuntime__raw_spec(pod, "setHostnameAsFQDN"))) {
                *out = name;
                name = NULL;
                return 0;
        }
        char *fqdn = xasprintf("%s.%s.%s.svc.%s", name, pod->subdomain, pod->namespace,
                               opts->cluster_domain ? opts->cluster_domain : "");
        if (strlen(fqdn) > FQDN_MAX_LEN) {
                ck_error_make(err, 0,
                              "failed to construct FQDN from pod hostname and cluster domain, FQDN "
                              "%s is too long (%d characters is the max, %zu characters requested)",
                              fqdn, FQDN_MAX_LEN, strlen(fqdn));
                free(fqdn);
                return -1;
        }
        *out = fqdn;
        return 0;
}

static Runtime__V1__Protocol runtime_protocol(const char *p)
{
        if (p != NULL && strcmp(p, "UDP") == 0)
                return RUNTIME__V1__PROTOCOL__UDP;
        if (p != NULL && strcmp(p, "SCTP") == 0)
                return RUNTIME__V1__PROTOCOL__SCTP;
        return RUNTIME__V1__PROTOCOL__TCP;
}

/* upstream MakePortMappings over the app containers: every declared port
 * (the runtime maps those with a hostPort), the first of each port name
 * (or of each family/protocol/hostIP/containerPort/hostPort when unnamed). */
static void add_port_mappings(const struct pod *pod, Runtime__V1__PodSandboxConfig *cfg)
{
        for (size_t ci = 0; ci < pod->n_containers; ci++) {
                const struct container *c = &pod->containers[ci];
                char **names = xcalloc(c->n_ports + 1, sizeof(*names));
                size_t n_names = 0;
                for (size_t pi = 0; pi < c->n_ports; pi++) {
                        const struct container_port *p = &c->ports[pi];
                        const char *host_ip = p->host_ip ? p->host_ip : "";
                        char *name;
                        if (p->name != NULL && *p->name != '\0') {
                                name = xstrdup(p->name);
                        } else {
                                const char *family = *host_ip == '\0'       ? "any"
                                                     : strchr(host_ip, ':') ? "v6"
                                                                            : "v4";
                                name = xasprintf("%s-%s-%s:%d:%d", family,
                                                 p->protocol ? p->protocol : "", host_ip,
                                                 p->container_port, p->host_port);
                        }
                        bool dup = false;
                        for (size_t k = 0; k < n_names && !dup; k++)
                                dup = strcmp(names[k], name) == 0;
                        if (dup) {
                                LOG_INFO(0, "Port name conflicted, it is defined more than once",
                                         "portName=\"%s\"", name);
                                free(name);
                                continue;
                        }
                        names[n_names++] = name;

                        Runtime__V1__PortMapping *m = xmalloc(sizeof(*m));
                        runtime__v1__port_mapping__init(m);
                        m->protocol = runtime_protocol(p->protocol);
                        m->container_port = p->container_port;
                        m->host_port = p->host_port;
                        m->host_ip = xstrdup(host_ip);
                        cfg->port_mappings =
                            xrealloc(cfg->port_mappings,
                                     (cfg->n_port_mappings + 1) * sizeof(*cfg->port_mappings));
                        cfg->port_mappings[cfg->n_port_mappings++] = m;
                }
                for (size_t k = 0; k < n_names; k++)
                        free(names[k]);
                free(names);
        }
}

static bool has_privileged_container(const struct pod *pod)
{
        for (size_t i = 0; i < pod->n_init_containers; i++) {
                const struct security_context *sc = pod->init_containers[i].security_context;
                if (sc != NULL && sc->has_privileged && sc->privileged)
                        return true;
        }
        for (size_t i = 0; i < pod->n_containers; i++) {
                const struct security_context *sc = pod->containers[i].security_context;
                if (sc != NULL && sc->has_privileged && sc->privileged)
                        return true;
        }
        return false;
}

/* spec.securityContext.supplementalGroupsPolicy (Merge / Strict) from the
 * raw pod; 0 and *set false when absent. */
static int supplemental_groups_policy(const struct pod *pod, bool *set,
                                      Runtime__V1__SupplementalGroupsPolicy *out, ck_error_t *err)
{
        const char *p = json_string_value(json_object_get(
            kuberuntime__raw_spec(pod, "securityContext"), "supplementalGroupsPolicy"));
        *set = p != NULL;
        if (p == NULL)
                return 0;
        if (strcmp(p, "Merge") == 0)
                *out = RUNTIME__V1__SUPPLEMENTAL_GROUPS_POLICY__Merge;
        else if (strcmp(p, "Strict") == 0)
                *out = RUNTIME__V1__SUPPLEMENTAL_GROUPS_POLICY__Strict;
        else
                return ck_error_make(err, 0, "unsupported supplementalGroupsPolicy: %s", p);
        return 0;
}

static void push_group(size_t *n, int64_t **arr, int64_t g)
{
        *arr = xrealloc(*arr, (*n + 1) * sizeof(**arr));
        (*arr)[(*n)++] = g;
}

static int sandbox_linux_config(const struct pod *pod, const char *cgroup_parent,
                                Runtime__V1__LinuxPodSandboxConfig **out, ck_error_t *err)
{
        const struct pod_security_context *psc = &pod->security_context;
        bool policy_set;
        Runtime__V1__SupplementalGroupsPolicy policy =
            RUNTIME__V1__SUPPLEMENTAL_GROUPS_POLICY__Merge;
        if (supplemental_groups_policy(pod, &policy_set, &policy, err) < 0)
                return -1;

        Runtime__V1__LinuxPodSandboxConfig *lc = xmalloc(sizeof(*lc));
        runtime__v1__linux_pod_sandbox_config__init(lc);
        lc->cgroup_parent = xstrdup(cgroup_parent ? cgroup_parent : "");

        Runtime__V1__LinuxSandboxSecurityContext *sc = xmalloc(sizeof(*sc));
        runtime__v1__linux_sandbox_security_context__init(sc);
        lc->security_context = sc;
        sc->privileged = has_privileged_container(pod);
        /* the sandbox runs RuntimeDefault so that pods may use least-privilege
         * profiles (upstream issue #84623) */
        sc->seccomp = kuberuntime__security_profile(
            RUNTIME__V1__SECURITY_PROFILE__PROFILE_TYPE__RuntimeDefault, NULL);
        if (psc->has_run_as_user)
                sc->run_as_user = kuberuntime__int64_value(psc->run_as_user);
        if (psc->has_run_as_group)
                sc->run_as_group = kuberuntime__int64_value(psc->run_as_group);
        sc->namespace_options = kuberuntime__namespace_options(pod);
        sc->selinux_options = kuberuntime__selinux_option(
            json_object_get(json_object_get(json_object_get(pod->raw, "spec"), "securityContext"),
                            "seLinuxOptions"));
        if (psc->has_fs_group)
                push_group(&sc->n_supplemental_groups, &sc->supplemental_groups, psc->fs_group);
        for (size_t i = 0; i < psc->n_supplemental_groups; i++)
                push_group(&sc->n_supplemental_groups, &sc->supplemental_groups,
                           psc->supplemental_groups[i]);
        if (policy_set)
                sc->supplemental_groups_policy = policy;

        for (size_t i = 0; i < psc->sysctls.n; i++)
                KR_MAP_SET(lc, sysctls,
                           runtime__v1__linux_pod_sandbox_config__sysctls_entry__descriptor,
                           psc->sysctls.items[i].key, psc->sysctls.items[i].value);

        /* upstream applySandboxResources: the pod's aggregate without its
         * overhead, and the overhead as requests = limits (empty when the
         * pod has none) */
        lc->resources = kuberuntime__sandbox_resources(pod);
        if (pod->has_overhead) {
                const struct resource_list *o = &pod->overhead;
                int64_t cpu = o->has_cpu ? o->cpu_milli : 0;
                lc->overhead =
                    kuberuntime__linux_resources(true, cpu, cpu, o->has_memory ? o->memory : 0);
        } else {
                lc->overhead = xmalloc(sizeof(*lc->overhead));
                runtime__v1__linux_container_resources__init(lc->overhead);
        }
        *out = lc;
        return 0;
}

char *kuberuntime_runtime_handler(const struct kuberuntime_options *opts, const struct pod *pod,
                                  ck_error_t *err)
{
        const char *rc = pod->runtime_class_name;
        if (rc == NULL || *rc == '\0' || opts->lookup_runtime_handler == NULL)
                return xstrdup("");
        char *handler = NULL;
        if (opts->lookup_runtime_handler(opts->runtime_class_ctx, rc, &handler, err) < 0)
                return NULL;
        return handler;
}

static Runtime__V1__IDMapping *id_mapping(uint32_t host, uint32_t length)
{
        Runtime__V1__IDMapping *m = xmalloc(sizeof(*m));
        runtime__v1__idmapping__init(m);
        m->host_id = host;
        m->container_id = 0;
        m->length = length;
        return m;
}

int kuberuntime__userns_options(const struct kuberuntime_options *opts, const struct pod *pod,
                                Runtime__V1__UserNamespace **out, ck_error_t *err)
{
        *out = NULL;
        Runtime__V1__UserNamespace *u = xmalloc(sizeof(*u));
        runtime__v1__user_namespace__init(u);
        u->mode = RUNTIME__V1__NAMESPACE_MODE__NODE;
        if (!pod->has_host_users || pod->host_users) {
                *out = u;
                return 0;
        }
        cleanup_free char *handler = kuberuntime_runtime_handler(opts, pod, err);
        cleanup_free char *why = NULL;
        bool supported = handler != NULL && opts->handler_supports_userns != NULL &&
                         opts->handler_supports_userns(opts->handler_ctx, handler, &why);
        uint32_t host = 0, length = 0;
        if (handler == NULL) {
                /* err: the RuntimeClass's */
        } else if (!supported && *handler != '\0') {
                ck_error_make(err, 0,
                              "can't set `spec.hostUsers: false`, RuntimeClass handler \"%s\" "
                              "does not support user namespaces%s%s",
                              handler, why ? ": " : "", why ? why : "");
        } else if (!supported) {
                ck_error_make(err, 0,
                              "can't set `spec.hostUsers: false`, runtime does not support user "
                              "namespaces%s%s",
                              why ? ": " : "", why ? why : "");
        } else if (opts->userns_mappings == NULL) {
                ck_error_make(err, 0,
                              "can't set `spec.hostUsers: false`: no user namespace "
                              "manager");
        } else if (opts->userns_mappings(opts->userns_ctx, pod, &host, &length, err) == 0) {
                u->mode = RUNTIME__V1__NAMESPACE_MODE__POD;
                u->n_uids = u->n_gids = 1;
                u->uids = xmalloc(sizeof(*u->uids));
                u->gids = xmalloc(sizeof(*u->gids));
                u->uids[0] = id_mapping(host, length);
                u->gids[0] = id_mapping(host, length);
                *out = u;
                return 0;
        }
        kuberuntime__message_free((ProtobufCMessage *)u);
        return -1;
}

int kuberuntime_sandbox_config(const struct kuberuntime_options *opts, const struct pod *pod,
                               uint32_t attempt, const char *cgroup_parent,
                               Runtime__V1__PodSandboxConfig **out, ck_error_t *err)
{
        /* upstream GetOrCreateUserNamespaceMappings, first: its errors
         * stop the sandbox */
        Runtime__V1__UserNamespace *userns = NULL;
        if (kuberuntime__userns_options(opts, pod, &userns, err) < 0)
                return -1;
        Runtime__V1__PodSandboxConfig *cfg = xmalloc(sizeof(*cfg));
        runtime__v1__pod_sandbox_config__init(cfg);

        Runtime__V1__PodSandboxMetadata *md = xmalloc(sizeof(*md));
        runtime__v1__pod_sandbox_metadata__init(md);
        md->name = xstrdup(pod->name);
        md->namespace_ = xstrdup(pod->namespace);
        md->uid = xstrdup(pod->uid);
        md->attempt = attempt;
        cfg->metadata = md;

        kuberuntime__sandbox_labels(pod, cfg);

        if (kuberuntime_pod_dns_config(opts, pod, &cfg->dns_config, err) < 0)
                goto fail;

        /* hostNetwork: no hostname; the runtime keeps the node's own */
        if (!pod->host_network) {
                char *hostname = NULL;
                if (pod_hostname(opts, pod, &hostname, err) < 0)
                        goto fail;
                cfg->hostname = hostname;
        }

        cfg->log_directory = pod_logs_directory(opts, pod);
        add_port_mappings(pod, cfg);

        if (sandbox_linux_config(pod, cgroup_parent, &cfg->linux, err) < 0)
                goto fail;
        cfg->linux->security_context->namespace_options->userns_options = userns;
        userns = NULL;

        *out = cfg;
        return 0;
fail:
        kuberuntime__message_free((ProtobufCMessage *)userns);
        /* the cause as it is: the caller names the pod and the step, and
         * the FailedCreatePodSandBox event quotes the cause (as upstream) */
        kuberuntime_sandbox_config_free(cfg);
        return -1;
}

void kuberuntime_sandbox_config_free(Runtime__V1__PodSandboxConfig *cfg)
{
        kuberuntime__message_free((ProtobufCMessage *)cfg);
}
