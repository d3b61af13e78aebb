/* SPDX-License-Identifier: Apache-2.0 */
/* Pod spec -> CRI PodSandboxConfig / ContainerConfig (kuberuntime builders):
 * the labels, annotations, paths, namespaces, resources, environment and
 * mounts a runtime receives, against upstream's kuberuntime behaviour.
 * Pods are written as YAML manifests and decoded as the kubelet does. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_pods.h"

#include "api/decode.h"
#include "cm/cm.h"
#include "kuberuntime/builders.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/yamljson.h"
#include "volume/volume.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[] = "/tmp/ck-test-builders-XXXXXX";
static char resolv[512];

static struct kuberuntime_options opts(void)
{
        struct kuberuntime_options o = {0};
        o.root_dir = root;
        o.pod_logs_dir = "/var/log/pods";
        o.node_name = "node1";
        o.cluster_domain = "cluster.local";
        o.resolv_conf = resolv;
        return o;
}

/* A pod with one container "app" (busybox) and the given extra YAML spliced
 * into the container (cextra) and the spec (sextra), each a block of lines
 * already indented for its place. */
static struct pod *simple_pod(const char *cextra, const char *sextra)
{
        char *yaml;
        int n = asprintf(&yaml,
                         "apiVersion: v1\n"
                         "kind: Pod\n"
                         "metadata:\n"
                         "  name: web\n"
                         "  namespace: shop\n"
                         "  uid: 0b0e7c52-uid\n"
                         "spec:\n"
                         "%s"
                         "  containers:\n"
                         "  - name: app\n"
                         "    image: localhost/busybox:1.35\n"
                         "%s",
                         sextra ? sextra : "", cextra ? cextra : "");
        assert_true(n > 0);
        struct pod *p = test_pod_yaml(yaml);
        free(yaml);
        return p;
}

static const char *sandbox_label(const Runtime__V1__PodSandboxConfig *c, const char *k)
{
        for (size_t i = 0; i < c->n_labels; i++)
                if (strcmp(c->labels[i]->key, k) == 0)
                        return c->labels[i]->value;
        return NULL;
}

static const char *container_label(const Runtime__V1__ContainerConfig *c, const char *k)
{
        for (size_t i = 0; i < c->n_labels; i++)
                if (strcmp(c->labels[i]->key, k) == 0)
                        return c->labels[i]->value;
        return NULL;
}

static const char *container_annotation(const Runtime__V1__ContainerConfig *c, const char *k)
{
        for (size_t i = 0; i < c->n_annotations; i++)
                if (strcmp(c->annotations[i]->key, k) == 0)
                        return c->annotations[i]->value;
        return NULL;
}

static const char *env_value(const Runtime__V1__ContainerConfig *c, const char *k)
{
        for (size_t i = 0; i < c->n_envs; i++)
                if (strcmp(c->envs[i]->key, k) == 0)
                        return c->envs[i]->value;
        return NULL;
}

static const Runtime__V1__Mount *mount_at(const Runtime__V1__ContainerConfig *c, const char *path)
{
        for (size_t i = 0; i < c->n_mounts; i++)
                if (strcmp(c->mounts[i]->container_path, path) == 0)
                        return c->mounts[i];
        return NULL;
}

static Runtime__V1__PodSandboxConfig *sandbox(const struct pod *p)
{
        struct kuberuntime_options o = opts();
        Runtime__V1__PodSandboxConfig *cfg = NULL;
        ck_error_t err = NULL;
        if (kuberuntime_sandbox_config(&o, p, 2, "/kubepods/besteffort/pod0b0e", &cfg, &err) < 0)
                fail_msg("sandbox config: %s", ck_error_msg(err));
        return cfg;
}

static Runtime__V1__ContainerConfig *
container_cfg(const struct pod *p, size_t idx, const char *pod_ip, const struct kv_list *volumes)
{
        struct kuberuntime_options o = opts();
        Runtime__V1__ContainerConfig *cfg = NULL;
        ck_error_t err = NULL;
        /* as sync_pod does before any container starts */
        if (volume_make_pod_dirs(root, p, &err) < 0)
                fail_msg("pod dirs: %s", ck_error_msg(err));
        if (kuberuntime_container_config(&o, p, &p->containers[idx], 3, pod_ip, volumes, &cfg,
                                         &err) < 0)
                fail_msg("container config: %s", ck_error_msg(err));
        return cfg;
}

/* The whole file at path (new string); fails the test when unreadable. */
static char *slurp(const char *path)
{
        char *buf = NULL;
        ck_error_t err = NULL;
        if (fs_read_file(path, 1 << 20, &buf, NULL, &err) < 0)
                fail_msg("read %s: %s", path, ck_error_msg(err));
        return buf;
}

/* The error message of a container config that must fail. New string. */
static char *container_error(const struct pod *p, const struct kv_list *volumes)
{
        struct kuberuntime_options o = opts();
        Runtime__V1__ContainerConfig *cfg = NULL;
        ck_error_t err = NULL;
        assert_int_equal(
            kuberuntime_container_config(&o, p, &p->containers[0], 0, NULL, volumes, &cfg, &err),
            -1);
        assert_null(cfg);
        char *msg = strdup(ck_error_msg(err));
        ck_error_release(&err);
        return msg;
}

/* ---- sandbox ---- */

static void test_sandbox_labels_annotations_metadata(void **state)
{
        (void)state;
        struct pod *p =
            test_pod_yaml("apiVersion: v1\nkind: Pod\n"
                          "metadata:\n"
                          "  name: web\n  namespace: shop\n  uid: 0b0e7c52-uid\n"
                          "  labels: {app: web, io.kubernetes.pod.name: spoofed}\n"
                          "  annotations: {note: hello, kubernetes.io/config.source: file}\n"
                          "spec:\n  containers:\n  - name: app\n    image: busybox\n");
        Runtime__V1__PodSandboxConfig *cfg = sandbox(p);

        assert_string_equal(cfg->metadata->name, "web");
        assert_string_equal(cfg->metadata->namespace_, "shop");
        assert_string_equal(cfg->metadata->uid, "0b0e7c52-uid");
        assert_int_equal(cfg->metadata->attempt, 2);

        /* pod labels plus the three kubelet labels, which win */
        assert_int_equal(cfg->n_labels, 4);
        assert_string_equal(sandbox_label(cfg, "app"), "web");
        assert_string_equal(sandbox_label(cfg, "io.kubernetes.pod.name"), "web");
        assert_string_equal(sandbox_label(cfg, "io.kubernetes.pod.namespace"), "shop");
        assert_string_equal(sandbox_label(cfg, "io.kubernetes.pod.uid"), "0b0e7c52-uid");
        /* annotations are the pod's, unchanged */
        assert_int_equal(cfg->n_annotations, 2);
        for (size_t i = 0; i < cfg->n_annotations; i++) {
                const char *k = cfg->annotations[i]->key, *v = cfg->annotations[i]->value;
                if (strcmp(k, "note") == 0)
                        assert_string_equal(v, "hello");
                else
                        assert_string_equal(v, "file");
        }

        assert_string_equal(cfg->log_directory, "/var/log/pods/shop_web_0b0e7c52-uid");
        assert_string_equal(cfg->hostname, "web");
        assert_string_equal(cfg->linux->cgroup_parent, "/kubepods/besteffort/pod0b0e");
        assert_non_null(cfg->dns_config);
        kuberuntime_sandbox_config_free(cfg);
        pod_unref(p);
}

static void test_sandbox_hostname(void **state)
{
        (void)state;
        struct pod *p = simple_pod(NULL, "  hostname: db-0\n  subdomain: db\n");
        Runtime__V1__PodSandboxConfig *cfg = sandbox(p);
        assert_string_equal(cfg->hostname, "db-0"); /* subdomain does not change it */
        kuberuntime_sandbox_config_free(cfg);
        pod_unref(p);

        p = simple_pod(NULL, "  hostname: db-0\n  subdomain: db\n  setHostnameAsFQDN: true\n");
        cfg = sandbox(p);
        assert_string_equal(cfg->hostname, "db-0.db.shop.svc.cluster.local");
        kuberuntime_sandbox_config_free(cfg);
        pod_unref(p);

        /* 69 characters: cut to 63, then the trailing '.' (and '-') go */
        char long_name[70];
        memset(long_name, 'a', 62);
        strcpy(long_name + 62, ".bbbbbb");
        char yaml[1024];
        snprintf(yaml, sizeof(yaml),
                 "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: shop, uid: u1}\n"
                 "spec:\n  containers:\n  - name: app\n    image: busybox\n",
                 long_name);
        p = test_pod_yaml(yaml);
        cfg = sandbox(p);
        long_name[62] = '\0';
        assert_string_equal(cfg->hostname, long_name);
        kuberuntime_sandbox_config_free(cfg);
        pod_unref(p);

        /* hostnameOverride: the name as given, no domain even with a subdomain */
        p = simple_pod(NULL, "  hostnameOverride: db.internal\n  subdomain: db\n");
        cfg = sandbox(p);
        assert_string_equal(cfg->hostname, "db.internal");
        kuberuntime_sandbox_config_free(cfg);
        pod_unref(p);

        /* hostNetwork: no hostname in the config (the runtime keeps the node's) */
        p = simple_pod(NULL, "  hostNetwork: true\n");
        cfg = sandbox(p);
        assert_string_equal(cfg->hostname, "");
        kuberuntime_sandbox_config_free(cfg);
        pod_unref(p);
}

static bool userns_answer, userns_unknown;

static bool fake_handler_userns(void *ctx, const char *handler, char **error)
{
        const char *want = ctx ? ctx : ""; /* the default handler: no RuntimeClass */
        assert_string_equal(handler, want);
        if (userns_unknown)
                *error = strdup("the handler \"\" is not known");
        return userns_answer;
}

/* The user namespace manager's answer: the second range. */
static int fake_mappings(void *ctx, const struct pod *pod, uint32_t *host_id, uint32_t *length,
                         ck_error_t *err)
{
        (void)ctx;
        (void)pod;
        (void)err;
        *host_id = 131072;
        *length = 65536;
        return 0;
}

/* A RuntimeClass store with one: "sandboxed", handler "kata". */
static int fake_lookup(void *ctx, const char *name, char **handler, ck_error_t *err)
{
        (void)ctx;
        if (strcmp(name, "sandboxed") == 0) {
                *handler = strdup("kata");
                return 0;
        }
        return ck_error_make(err, 0, "runtimeclass.node.k8s.io \"%s\" not found", name);
}

/* spec.runtimeClassName: its handler (through the lookup), "" without a
 * lookup (standalone) or without a name; an unknown one is an error. */
static void test_runtime_handler(void **state)
{
        (void)state;
        struct kuberuntime_options o = opts();
        ck_error_t err = NULL;
        struct pod *p = simple_pod(NULL, "  runtimeClassName: sandboxed\n");
        char *h = kuberuntime_runtime_handler(&o, p, &err);
        assert_string_equal(h, "");
        free(h);
        o.lookup_runtime_handler = fake_lookup;
        h = kuberuntime_runtime_handler(&o, p, &err);
        assert_string_equal(h, "kata");
        free(h);
        pod_unref(p);

        p = simple_pod(NULL, "  runtimeClassName: missing\n  hostUsers: false\n");
        assert_null(kuberuntime_runtime_handler(&o, p, &err));
        assert_string_equal(ck_error_msg(err), "runtimeclass.node.k8s.io \"missing\" not found");
        ck_error_release(&err);
        Runtime__V1__PodSandboxConfig *cfg = NULL;
        assert_int_equal(kuberuntime_sandbox_config(&o, p, 0, "", &cfg, &err), -1);
        assert_string_equal(ck_error_msg(err), "runtimeclass.node.k8s.io \"missing\" not found");
        ck_error_release(&err);
        pod_unref(p);

        /* the user namespace check asks about the pod's handler */
        p = simple_pod(NULL, "  runtimeClassName: sandboxed\n  hostUsers: false\n");
        o.handler_supports_userns = fake_handler_userns;
        o.handler_ctx = (void *)"kata";
        userns_answer = false;
        assert_int_equal(kuberuntime_sandbox_config(&o, p, 0, "", &cfg, &err), -1);
        assert_string_equal(ck_error_msg(err), "can't set `spec.hostUsers: false`, RuntimeClass "
                                               "handler \"kata\" does not support user "
                                               "namespaces");
        ck_error_release(&err);
        pod_unref(p);

        p = simple_pod(NULL, NULL);
        h = kuberuntime_runtime_handler(&o, p, &err);
        assert_string_equal(h, "");
        free(h);
        pod_unref(p);
}

/* spec.hostUsers: true or unset is the node's user namespace; false is
 * refused with upstream's words when the runtime's handler lacks user
 * namespaces, and by ckubelet (no ID mappings yet) when it has them. */
static void test_sandbox_host_users(void **state)
{
        (void)state;
        struct kuberuntime_options o = opts();
        Runtime__V1__PodSandboxConfig *cfg = NULL;
        ck_error_t err = NULL;
        struct pod *p = simple_pod(NULL, "  hostUsers: true\n");
        cfg = sandbox(p);
        kuberuntime_sandbox_config_free(cfg);
        cfg = NULL;
        pod_unref(p);

        p = simple_pod(NULL, "  hostUsers: false\n");
        /* no answer from the runtime (it lists no handlers) */
        assert_int_equal(kuberuntime_sandbox_config(&o, p, 0, "", &cfg, &err), -1);
        assert_string_equal(ck_error_msg(err), "can't set `spec.hostUsers: false`, runtime does "
                                               "not support user namespaces");
        ck_error_release(&err);
        o.handler_supports_userns = fake_handler_userns;
        userns_unknown = true;
        assert_int_equal(kuberuntime_sandbox_config(&o, p, 0, "", &cfg, &err), -1);
        assert_string_equal(ck_error_msg(err),
                            "can't set `spec.hostUsers: false`, runtime does not support user "
                            "namespaces: the handler \"\" is not known");
        ck_error_release(&err);
        userns_unknown = false;
        userns_answer = true;
        /* supported: the pod's range, mode POD, in the sandbox and the
         * containers alike */
        o.userns_mappings = fake_mappings;
        assert_int_equal(kuberuntime_sandbox_config(&o, p, 0, "", &cfg, &err), 0);
        const Runtime__V1__UserNamespace *u =
            cfg->linux->security_context->namespace_options->userns_options;
        assert_non_null(u);
        assert_int_equal(u->mode, RUNTIME__V1__NAMESPACE_MODE__POD);
        assert_int_equal(u->n_uids, 1);
        assert_int_equal(u->n_gids, 1);
        assert_int_equal(u->uids[0]->host_id, 131072);
        assert_int_equal(u->uids[0]->container_id, 0);
        assert_int_equal(u->uids[0]->length, 65536);
        assert_int_equal(u->gids[0]->host_id, 131072);
        kuberuntime_sandbox_config_free(cfg);
        cfg = NULL;
        if (volume_make_pod_dirs(root, p, &err) < 0)
                fail_msg("pod dirs: %s", ck_error_msg(err));
        Runtime__V1__ContainerConfig *cc = NULL;
        assert_int_equal(
            kuberuntime_container_config(&o, p, &p->containers[0], 0, NULL, NULL, &cc, &err), 0);
        u = cc->linux->security_context->namespace_options->userns_options;
        assert_int_equal(u->mode, RUNTIME__V1__NAMESPACE_MODE__POD);
        assert_int_equal(u->uids[0]->host_id, 131072);
        kuberuntime_container_config_free(cc);
        pod_unref(p);

        /* hostUsers unset: the node's user namespace, said */
        p = simple_pod(NULL, NULL);
        cfg = sandbox(p);
        u = cfg->linux->security_context->namespace_options->userns_options;
        assert_non_null(u);
        assert_int_equal(u->mode, RUNTIME__V1__NAMESPACE_MODE__NODE);
        assert_int_equal(u->n_uids, 0);
        kuberuntime_sandbox_config_free(cfg);
        pod_unref(p);
}

static void test_sandbox_port_mappings(void **state)
{
        (void)state;
        struct pod *p = test_pod_yaml(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: shop, uid: u1}\n"
            "spec:\n"
            "  initContainers:\n"
            "  - name: init\n    image: busybox\n"
            "    ports: [{containerPort: 9000, hostPort: 19000}]\n"
            "  containers:\n"
            "  - name: app\n    image: busybox\n    ports:\n"
            "    - {name: http, containerPort: 80}\n"
            "    - {name: dns, containerPort: 53, hostPort: 1053, protocol: UDP, hostIP: "
            "127.0.0.1}\n"
            "    - {containerPort: 8080}\n"
            "    - {containerPort: 8080}\n"
            "  - name: side\n    image: busybox\n    ports:\n"
            "    - {containerPort: 132, hostPort: 1132, protocol: SCTP}\n");
        Runtime__V1__PodSandboxConfig *cfg = sandbox(p);
        /* every app container port, a repeated unnamed one dropped, no init ports */
        assert_int_equal(cfg->n_port_mappings, 4);
        Runtime__V1__PortMapping **m = cfg->port_mappings;
        assert_int_equal(m[0]->container_port, 80);
        assert_int_equal(m[0]->host_port, 0);
        assert_int_equal(m[0]->protocol, RUNTIME__V1__PROTOCOL__TCP);
        assert_int_equal(m[1]->container_port, 53);
        assert_int_equal(m[1]->host_port, 1053);
        assert_int_equal(m[1]->protocol, RUNTIME__V1__PROTOCOL__UDP);
        assert_string_equal(m[1]->host_ip, "127.0.0.1");
        assert_int_equal(m[2]->container_port, 8080);
        assert_int_equal(m[2]->host_port, 0);
        assert_int_equal(m[3]->container_port, 132);
        assert_int_equal(m[3]->host_port, 1132);
        assert_int_equal(m[3]->protocol, RUNTIME__V1__PROTOCOL__SCTP);
        kuberuntime_sandbox_config_free(cfg);
        pod_unref(p);
}

static void assert_namespaces(const char *spec, Runtime__V1__NamespaceMode net,
                              Runtime__V1__NamespaceMode pid, Runtime__V1__NamespaceMode ipc)
{
        struct pod *p = simple_pod(NULL, spec);
        Runtime__V1__PodSandboxConfig *cfg = sandbox(p);
        const Runtime__V1__NamespaceOption *ns = cfg->linux->security_context->namespace_options;
        assert_int_equal(ns->network, net);
        assert_int_equal(ns->pid, pid);
        assert_int_equal(ns->ipc, ipc);
        Runtime__V1__ContainerConfig *cc = container_cfg(p, 0, NULL, NULL);
        ns = cc->linux->security_context->namespace_options;
        assert_int_equal(ns->network, net);
        assert_int_equal(ns->pid, pid);
        assert_int_equal(ns->ipc, ipc);
        kuberuntime_container_config_free(cc);
        kuberuntime_sandbox_config_free(cfg);
        pod_unref(p);
}

static void test_namespace_options(void **state)
{
        (void)state;
        const Runtime__V1__NamespaceMode POD = RUNTIME__V1__NAMESPACE_MODE__POD,
                                         CONTAINER = RUNTIME__V1__NAMESPACE_MODE__CONTAINER,
                                         NODE = RUNTIME__V1__NAMESPACE_MODE__NODE;
        assert_namespaces(NULL, POD, CONTAINER, POD);
        assert_namespaces("  hostNetwork: true\n", NODE, CONTAINER, POD);
        assert_namespaces("  hostPID: true\n", POD, NODE, POD);
        assert_namespaces("  hostIPC: true\n", POD, CONTAINER, NODE);
        assert_namespaces("  shareProcessNamespace: true\n", POD, POD, POD);
}

static void test_sandbox_security_context_and_sysctls(void **state)
{
        (void)state;
        struct pod *p = test_pod_yaml(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: shop, uid: u1}\n"
            "spec:\n"
            "  securityContext:\n"
            "    runAsUser: 1000\n    runAsGroup: 3000\n    fsGroup: 2000\n"
            "    supplementalGroups: [4000, 5000]\n"
            "    sysctls:\n"
            "    - {name: net.ipv4.ip_unprivileged_port_start, value: '0'}\n"
            "    - {name: kernel.shm_rmid_forced, value: '1'}\n"
            "  initContainers:\n"
            "  - name: init\n    image: busybox\n    securityContext: {privileged: true}\n"
            "  containers:\n  - name: app\n    image: busybox\n");
        Runtime__V1__PodSandboxConfig *cfg = sandbox(p);
        const Runtime__V1__LinuxPodSandboxConfig *lc = cfg->linux;
        const Runtime__V1__LinuxSandboxSecurityContext *sc = lc->security_context;
        assert_int_equal(sc->run_as_user->value, 1000);
        assert_int_equal(sc->run_as_group->value, 3000);
        assert_int_equal(sc->n_supplemental_groups, 3);
        assert_int_equal(sc->supplemental_groups[0], 2000); /* fsGroup first */
        assert_int_equal(sc->supplemental_groups[1], 4000);
        assert_int_equal(sc->supplemental_groups[2], 5000);
        assert_true(sc->privileged); /* an init container is privileged */
        assert_int_equal(sc->seccomp->profile_type,
                         RUNTIME__V1__SECURITY_PROFILE__PROFILE_TYPE__RuntimeDefault);
        assert_int_equal(lc->n_sysctls, 2);
        assert_string_equal(lc->sysctls[0]->key, "net.ipv4.ip_unprivileged_port_start");
        assert_string_equal(lc->sysctls[0]->value, "0");
        assert_string_equal(lc->sysctls[1]->key, "kernel.shm_rmid_forced");
        assert_string_equal(lc->sysctls[1]->value, "1");
        kuberuntime_sandbox_config_free(cfg);
        pod_unref(p);

        p = simple_pod(NULL, NULL);
        cfg = sandbox(p);
        sc = cfg->linux->security_context;
        assert_null(sc->run_as_user);
        assert_null(sc->run_as_group);
        assert_false(sc->privileged);
        assert_int_equal(sc->n_supplemental_groups, 0);
        assert_int_equal(cfg->linux->n_sysctls, 0);
        kuberuntime_sandbox_config_free(cfg);
        pod_unref(p);
}

static void test_sandbox_resources(void **state)
{
        (void)state;
        /* two containers and a larger init container: requests are the
         * max(sum of app containers, the init container) */
        struct pod *p = test_pod_yaml(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: shop, uid: u1}\n"
            "spec:\n"
            "  initContainers:\n"
            "  - name: init\n    image: busybox\n"
            "    resources: {requests: {cpu: 800m}, limits: {cpu: '1', memory: 64Mi}}\n"
            "  containers:\n"
            "  - name: a\n    image: busybox\n"
            "    resources: {requests: {cpu: 250m}, limits: {cpu: 500m, memory: 100Mi}}\n"
            "  - name: b\n    image: busybox\n"
            "    resources: {requests: {cpu: 250m}, limits: {cpu: 500m, memory: 100Mi}}\n");
        Runtime__V1__PodSandboxConfig *cfg = sandbox(p);
        const Runtime__V1__LinuxContainerResources *r = cfg->linux->resources;
        assert_int_equal(r->cpu_shares, 819);   /* 800m */
        assert_int_equal(r->cpu_quota, 100000); /* max(1000m, 500m + 500m) */
        assert_int_equal(r->cpu_period, 100000);
        assert_int_equal(r->memory_limit_in_bytes, 200 * 1024 * 1024);
        assert_non_null(cfg->linux->overhead);
        assert_int_equal(cfg->linux->overhead->cpu_shares, 0);
        kuberuntime_sandbox_config_free(cfg);
        pod_unref(p);

        /* spec.overhead: the sandbox's overhead, requests = limits; its
         * resources stay the containers' */
        p = test_pod_yaml("apiVersion: v1\nkind: Pod\nmetadata: {name: o, uid: u}\nspec:\n"
                          "  overhead: {cpu: 250m, memory: 64Mi}\n"
                          "  containers:\n  - name: a\n    image: busybox\n"
                          "    resources: {limits: {cpu: 500m, memory: 100Mi}}\n");
        cfg = sandbox(p);
        assert_int_equal(cfg->linux->resources->cpu_quota, 50000);
        assert_int_equal(cfg->linux->resources->memory_limit_in_bytes, 100 * 1024 * 1024);
        r = cfg->linux->overhead;
        assert_int_equal(r->cpu_shares, 256);
        assert_int_equal(r->cpu_quota, 25000);
        assert_int_equal(r->cpu_period, 100000);
        assert_int_equal(r->memory_limit_in_bytes, 64 * 1024 * 1024);
        kuberuntime_sandbox_config_free(cfg);
        pod_unref(p);
}

/* A container that limits huge pages gets a limit per page size of the
 * machine (upstream GetHugepageLimitsFromResources); one that does not
 * gets none (the pod cgroup bounds it). */
static void test_container_hugepage_limits(void **state)
{
        (void)state;
        struct pod *p =
            simple_pod("    resources: {limits: {hugepages-2Mi: 6Mi, memory: 64Mi}}\n", NULL);
        Runtime__V1__ContainerConfig *cfg = container_cfg(p, 0, NULL, NULL);
        const Runtime__V1__LinuxContainerResources *r = cfg->linux->resources;
        int64_t sizes[16];
        size_t n = cm_hugepage_sizes(sizes, 16);
        if (n == 0)
                fail_msg("this host lists no huge page sizes (/sys/kernel/mm/hugepages)");
        assert_int_equal(r->n_hugepage_limits, n);
        for (size_t i = 0; i < n; i++) {
                char name[16];
                cm_hugepage_name(sizes[i], name, sizeof(name));
                assert_string_equal(r->hugepage_limits[i]->page_size, name);
                assert_int_equal(r->hugepage_limits[i]->limit,
                                 sizes[i] == 2 * 1024 * 1024 ? 6 * 1024 * 1024 : 0);
        }
        kuberuntime_container_config_free(cfg);
        pod_unref(p);

        p = simple_pod(NULL, NULL);
        cfg = container_cfg(p, 0, NULL, NULL);
        assert_int_equal(cfg->linux->resources->n_hugepage_limits, 0);
        kuberuntime_container_config_free(cfg);
        pod_unref(p);
}

/* ---- container ---- */

static char *make_dir(const char *name);

/* seLinuxOptions: the pod's to the sandbox and to each container, a
 * container's own replacing them whole; on an SELinux host the runtime is
 * asked to relabel the kubelet's volumes (not hostPath), /etc/hosts and the
 * termination log. */
static void test_selinux(void **state)
{
        (void)state;
        char *data = make_dir("sedata");
        char *host = make_dir("sehost");
        struct kv_list vols = {0};
        kv_list_add(&vols, "data", data);
        kv_list_add(&vols, "host", host);
        struct pod *p = test_pod_yaml(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: shop, uid: se1}\n"
            "spec:\n"
            "  securityContext: {seLinuxOptions: {type: spc_t, level: 's0:c1,c2'}}\n"
            "  containers:\n"
            "  - name: a\n    image: busybox\n"
            "    volumeMounts: [{name: data, mountPath: /d}, {name: host, mountPath: /h}]\n"
            "  - name: b\n    image: busybox\n"
            "    securityContext: {seLinuxOptions: {user: system_u, role: system_r}}\n"
            "  volumes:\n  - {name: data, emptyDir: {}}\n"
            "  - {name: host, hostPath: {path: /tmp}}\n");
        Runtime__V1__PodSandboxConfig *sb = sandbox(p);
        const Runtime__V1__SELinuxOption *se = sb->linux->security_context->selinux_options;
        assert_non_null(se);
        assert_string_equal(se->type, "spc_t");
        assert_string_equal(se->level, "s0:c1,c2");
        assert_string_equal(se->user, "");
        kuberuntime_sandbox_config_free(sb);

        struct kuberuntime_options o = opts();
        o.selinux_enabled = true;
        Runtime__V1__ContainerConfig *cfg = NULL;
        ck_error_t err = NULL;
        assert_int_equal(volume_make_pod_dirs(root, p, &err), 0);
        if (kuberuntime_container_config(&o, p, &p->containers[0], 0, "10.88.0.9", &vols, &cfg,
                                         &err) < 0)
                fail_msg("container config: %s", ck_error_msg(err));
        se = cfg->linux->security_context->selinux_options;
        assert_non_null(se);
        assert_string_equal(se->type, "spc_t");
        assert_true(mount_at(cfg, "/d")->selinux_relabel);
        assert_false(mount_at(cfg, "/h")->selinux_relabel);
        assert_true(mount_at(cfg, "/etc/hosts")->selinux_relabel);
        assert_true(mount_at(cfg, "/dev/termination-log")->selinux_relabel);
        kuberuntime_container_config_free(cfg);

        /* b's own options, whole; no SELinux on the host: no relabel */
        cfg = container_cfg(p, 1, "10.88.0.9", &vols);
        se = cfg->linux->security_context->selinux_options;
        assert_string_equal(se->user, "system_u");
        assert_string_equal(se->role, "system_r");
        assert_string_equal(se->type, "");
        assert_string_equal(se->level, "");
        assert_false(mount_at(cfg, "/etc/hosts")->selinux_relabel);
        kuberuntime_container_config_free(cfg);
        pod_unref(p);

        /* none set: none sent */
        p = simple_pod(NULL, NULL);
        sb = sandbox(p);
        assert_null(sb->linux->security_context->selinux_options);
        kuberuntime_sandbox_config_free(sb);
        cfg = container_cfg(p, 0, NULL, NULL);
        assert_null(cfg->linux->security_context->selinux_options);
        kuberuntime_container_config_free(cfg);
        pod_unref(p);
        kv_list_release(&vols);
        free(data);
        free(host);
}

static void test_container_labels_and_annotations(void **state)
{
        (void)state;
        struct pod *p = simple_pod(
            "    ports:\n"
            "    - {name: http, containerPort: 80}\n"
            "    - {containerPort: 8080, hostPort: 18080, protocol: UDP, hostIP: 127.0.0.1}\n"
            "    lifecycle:\n"
            "      preStop:\n"
            "        exec: {command: [sh, -c, 'sleep 1 && echo \"<done>\"']}\n",
            "  terminationGracePeriodSeconds: 45\n");
        Runtime__V1__ContainerConfig *cfg = container_cfg(p, 0, NULL, NULL);

        assert_int_equal(cfg->n_labels, 4);
        assert_string_equal(container_label(cfg, "io.kubernetes.pod.name"), "web");
        assert_string_equal(container_label(cfg, "io.kubernetes.pod.namespace"), "shop");
        assert_string_equal(container_label(cfg, "io.kubernetes.pod.uid"), "0b0e7c52-uid");
        assert_string_equal(container_label(cfg, "io.kubernetes.container.name"), "app");

        char hash[32];
        snprintf(hash, sizeof(hash), "%llx", (unsigned long long)p->containers[0].hash);
        assert_string_equal(container_annotation(cfg, ANNOTATION_CONTAINER_HASH), hash);
        assert_int_equal(kuberuntime_label_hash(hash), p->containers[0].hash);
        assert_string_equal(container_annotation(cfg, ANNOTATION_CONTAINER_RESTART_COUNT), "3");
        assert_string_equal(container_annotation(cfg, ANNOTATION_TERMINATION_MESSAGE_PATH),
                            "/dev/termination-log");
        assert_string_equal(container_annotation(cfg, ANNOTATION_TERMINATION_MESSAGE_POLICY),
                            "File");
        assert_string_equal(container_annotation(cfg, ANNOTATION_POD_TERMINATION_GRACE), "45");
        assert_null(container_annotation(cfg, ANNOTATION_POD_DELETION_GRACE));
        /* Go's json.Marshal: compact, struct field order, <>& escaped */
        assert_string_equal(container_annotation(cfg, ANNOTATION_PRESTOP_HANDLER),
                            "{\"exec\":{\"command\":[\"sh\",\"-c\",\"sleep 1 \\u0026\\u0026 echo "
                            "\\\"\\u003cdone\\u003e\\\"\"]}}");
        assert_string_equal(container_annotation(cfg, ANNOTATION_CONTAINER_PORTS),
                            "[{\"name\":\"http\",\"containerPort\":80,\"protocol\":\"TCP\"},"
                            "{\"hostPort\":18080,\"containerPort\":8080,\"protocol\":\"UDP\","
                            "\"hostIP\":\"127.0.0.1\"}]");
        assert_int_equal(cfg->n_annotations, 7);
        kuberuntime_container_config_free(cfg);
        pod_unref(p);

        /* an httpGet preStop, a deletion grace period, no ports */
        p = test_pod_yaml(
            "apiVersion: v1\nkind: Pod\n"
            "metadata: {name: web, namespace: shop, uid: u1, deletionGracePeriodSeconds: 7}\n"
            "spec:\n  containers:\n  - name: app\n    image: busybox\n"
            "    lifecycle: {preStop: {httpGet: {path: /quit, port: 8080}}}\n");
        cfg = container_cfg(p, 0, NULL, NULL);
        assert_string_equal(container_annotation(cfg, ANNOTATION_PRESTOP_HANDLER),
                            "{\"httpGet\":{\"path\":\"/quit\",\"port\":8080,\"scheme\":\"HTTP\"}}");
        assert_string_equal(container_annotation(cfg, ANNOTATION_POD_DELETION_GRACE), "7");
        assert_string_equal(container_annotation(cfg, ANNOTATION_POD_TERMINATION_GRACE), "30");
        assert_null(container_annotation(cfg, ANNOTATION_CONTAINER_PORTS));
        kuberuntime_container_config_free(cfg);
        pod_unref(p);
}

static void test_label_parsers(void **state)
{
        (void)state;
        assert_int_equal(kuberuntime_label_hash("1f"), 31);
        assert_int_equal(kuberuntime_label_hash("ffffffffffffffff"), UINT64_MAX);
        assert_int_equal(kuberuntime_label_hash("10000000000000000"), 0); /* overflow */
        assert_int_equal(kuberuntime_label_hash("0x1f"), 0);
        assert_int_equal(kuberuntime_label_hash("xyz"), 0);
        assert_int_equal(kuberuntime_label_hash(""), 0);
        assert_int_equal(kuberuntime_label_hash(NULL), 0);
        assert_int_equal(kuberuntime_label_restart_count("12"), 12);
        assert_int_equal(kuberuntime_label_restart_count("+3"), 3);
        assert_int_equal(kuberuntime_label_restart_count("-1"), -1);
        assert_int_equal(kuberuntime_label_restart_count("1x"), 0);
        assert_int_equal(kuberuntime_label_restart_count(" 1"), 0);
        assert_int_equal(kuberuntime_label_restart_count(NULL), 0);
}

static void test_container_basics(void **state)
{
        (void)state;
        struct pod *p = simple_pod("    workingDir: /srv\n    stdin: true\n    stdinOnce: true\n"
                                   "    tty: true\n",
                                   NULL);
        Runtime__V1__ContainerConfig *cfg = container_cfg(p, 0, NULL, NULL);
        assert_string_equal(cfg->metadata->name, "app");
        assert_int_equal(cfg->metadata->attempt, 3);
        assert_string_equal(cfg->image->image, "localhost/busybox:1.35");
        assert_string_equal(cfg->image->user_specified_image, "localhost/busybox:1.35");
        assert_string_equal(cfg->log_path, "app/3.log");
        assert_string_equal(cfg->working_dir, "/srv");
        assert_true(cfg->stdin);
        assert_true(cfg->stdin_once);
        assert_true(cfg->tty);
        kuberuntime_container_config_free(cfg);
        pod_unref(p);
}

static void test_env_order_field_refs_and_expansion(void **state)
{
        (void)state;
        struct pod *p = test_pod_yaml(
            "apiVersion: v1\nkind: Pod\n"
            "metadata:\n  name: web\n  namespace: shop\n  uid: u-42\n"
            "  labels: {app: web, tier: front}\n  annotations: {build: '7'}\n"
            "spec:\n  nodeName: node7\n  serviceAccountName: robot\n"
            "  containers:\n  - name: app\n    image: busybox\n"
            "    command: [/bin/sh, -c, 'echo $(GREETING) $(MISSING) $$(GREETING)']\n"
            "    args: ['$(POD_NAME)-$(POD_IP)']\n"
            "    env:\n"
            "    - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}\n"
            "    - {name: POD_NS, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}\n"
            "    - {name: POD_UID, valueFrom: {fieldRef: {fieldPath: metadata.uid}}}\n"
            "    - {name: NODE, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}\n"
            "    - {name: SA, valueFrom: {fieldRef: {fieldPath: spec.serviceAccountName}}}\n"
            "    - {name: POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}\n"
            "    - {name: TIER, valueFrom: {fieldRef: {fieldPath: \"metadata.labels['tier']\"}}}\n"
            "    - {name: BUILD, valueFrom: {fieldRef: {fieldPath: "
            "\"metadata.annotations['build']\"}}}\n"
            "    - {name: GREETING, value: 'hello $(POD_NAME) from $(NODE) $(LATER)'}\n"
            "    - {name: EMPTY}\n"
            "    - {name: LATER, value: late}\n"
            "    - {name: POD_NS, value: overridden}\n");
        Runtime__V1__ContainerConfig *cfg = container_cfg(p, 0, "10.88.0.5", NULL);

        const char *const want[][2] = {
            {"POD_NAME", "web"},
            {"POD_NS", "overridden"},
            {"POD_UID", "u-42"},
            {"NODE", "node7"},
            {"SA", "robot"},
            {"POD_IP", "10.88.0.5"},
            {"TIER", "front"},
            {"BUILD", "7"},
            {"GREETING", "hello web from node7 $(LATER)"},
            {"EMPTY", ""},
            {"LATER", "late"},
        };
        assert_int_equal(cfg->n_envs, sizeof(want) / sizeof(want[0]));
        for (size_t i = 0; i < cfg->n_envs; i++) {
                assert_string_equal(cfg->envs[i]->key, want[i][0]);
                assert_string_equal(cfg->envs[i]->value, want[i][1]);
        }
        assert_int_equal(cfg->n_command, 3);
        assert_string_equal(cfg->command[2],
                            "echo hello web from node7 $(LATER) $(MISSING) $(GREETING)");
        assert_int_equal(cfg->n_args, 1);
        assert_string_equal(cfg->args[0], "web-10.88.0.5");
        kuberuntime_container_config_free(cfg);
        pod_unref(p);
}

static void test_env_resource_field_refs(void **state)
{
        (void)state;
        struct pod *p = simple_pod(
            "    resources: {requests: {cpu: 250m, memory: 64Mi}, limits: {cpu: 1500m, "
            "memory: 128Mi}}\n"
            "    env:\n"
            "    - {name: CPU_LIMIT, valueFrom: {resourceFieldRef: {resource: limits.cpu}}}\n"
            "    - {name: CPU_LIMIT_M, valueFrom: {resourceFieldRef: {resource: limits.cpu, "
            "divisor: 1m}}}\n"
            "    - {name: CPU_REQ, valueFrom: {resourceFieldRef: {resource: requests.cpu}}}\n"
            "    - {name: MEM_LIMIT_MI, valueFrom: {resourceFieldRef: {resource: "
            "limits.memory, divisor: 1Mi}}}\n"
            "    - {name: MEM_REQ, valueFrom: {resourceFieldRef: {resource: requests.memory}}}\n"
            "    - {name: OTHER_MEM, valueFrom: {resourceFieldRef: {containerName: app, "
            "resource: limits.memory, divisor: 1Ki}}}\n",
            NULL);
        Runtime__V1__ContainerConfig *cfg = container_cfg(p, 0, NULL, NULL);
        assert_string_equal(env_value(cfg, "CPU_LIMIT"), "2"); /* ceil(1.5) */
        assert_string_equal(env_value(cfg, "CPU_LIMIT_M"), "1500");
        assert_string_equal(env_value(cfg, "CPU_REQ"), "1"); /* ceil(0.25) */
        assert_string_equal(env_value(cfg, "MEM_LIMIT_MI"), "128");
        assert_string_equal(env_value(cfg, "MEM_REQ"), "67108864");
        assert_string_equal(env_value(cfg, "OTHER_MEM"), "131072");
        kuberuntime_container_config_free(cfg);
        pod_unref(p);

        /* no limit: the node's capacity (here at least one CPU) */
        p = simple_pod("    env:\n"
                       "    - {name: CPU_LIMIT, valueFrom: {resourceFieldRef: {resource: "
                       "limits.cpu, divisor: 1m}}}\n",
                       NULL);
        cfg = container_cfg(p, 0, NULL, NULL);
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        char want[32];
        snprintf(want, sizeof(want), "%ld", ncpu * 1000);
        assert_string_equal(env_value(cfg, "CPU_LIMIT"), want);
        kuberuntime_container_config_free(cfg);
        pod_unref(p);

        /* huge pages: the container's own (upstream
         * convertResourceHugePagesToString), divided up */
        p = simple_pod("    resources: {limits: {hugepages-2Mi: 6Mi, memory: 64Mi}}\n"
                       "    env:\n"
                       "    - {name: HUGE, valueFrom: {resourceFieldRef: {resource: "
                       "limits.hugepages-2Mi}}}\n"
                       "    - {name: HUGE_MI, valueFrom: {resourceFieldRef: {resource: "
                       "requests.hugepages-2Mi, divisor: 4Mi}}}\n",
                       NULL);
        cfg = container_cfg(p, 0, NULL, NULL);
        assert_string_equal(env_value(cfg, "HUGE"), "6291456");
        assert_string_equal(env_value(cfg, "HUGE_MI"), "2");
        kuberuntime_container_config_free(cfg);
        pod_unref(p);
}

static void test_env_config_map_and_secret_without_api_server(void **state)
{
        (void)state;
        struct pod *p =
            simple_pod("    env:\n"
                       "    - {name: A, value: a}\n"
                       "    - {name: OPT, valueFrom: {configMapKeyRef: {name: cm, key: k, "
                       "optional: true}}}\n"
                       "    - {name: B, value: b}\n"
                       "    envFrom:\n"
                       "    - {secretRef: {name: s, optional: true}}\n",
                       NULL);
        Runtime__V1__ContainerConfig *cfg = container_cfg(p, 0, NULL, NULL);
        assert_int_equal(cfg->n_envs, 2);
        assert_string_equal(env_value(cfg, "A"), "a");
        assert_string_equal(env_value(cfg, "B"), "b");
        assert_null(env_value(cfg, "OPT"));
        kuberuntime_container_config_free(cfg);
        pod_unref(p);

        p = simple_pod("    env:\n"
                       "    - {name: PW, valueFrom: {secretKeyRef: {name: db, key: password}}}\n",
                       NULL);
        char *msg = container_error(p, NULL);
        assert_non_null(strstr(msg, "couldn't get secret shop/db, no kubeClient defined"));
        free(msg);
        pod_unref(p);

        p = simple_pod("    envFrom:\n    - {configMapRef: {name: settings}}\n", NULL);
        msg = container_error(p, NULL);
        assert_non_null(strstr(msg, "couldn't get configMap shop/settings, no kubeClient defined"));
        free(msg);
        pod_unref(p);
}

/* ---- mounts ---- */

static char *make_dir(const char *name)
{
        char *d;
        assert_true(asprintf(&d, "%s/%s", root, name) > 0);
        mkdir(d, 0755);
        return d;
}

static void test_mounts(void **state)
{
        (void)state;
        char *data = make_dir("data");
        char *conf = make_dir("conf");
        struct kv_list vols = {0};
        kv_list_add(&vols, "data", data);
        kv_list_add(&vols, "conf", conf);

        struct pod *p = simple_pod("    volumeMounts:\n"
                                   "    - {name: data, mountPath: /var/data}\n"
                                   "    - {name: data, mountPath: /var/sub, subPath: a/b, "
                                   "readOnly: true, mountPropagation: HostToContainer}\n"
                                   "    - {name: conf, mountPath: /etc/app}\n",
                                   "  volumes:\n"
                                   "  - {name: data, emptyDir: {}}\n"
                                   "  - {name: conf, configMap: {name: app}}\n");
        Runtime__V1__ContainerConfig *cfg = container_cfg(p, 0, "10.88.0.5", &vols);

        const Runtime__V1__Mount *m = mount_at(cfg, "/var/data");
        assert_non_null(m);
        assert_string_equal(m->host_path, data);
        assert_false(m->readonly);
        assert_int_equal(m->propagation, RUNTIME__V1__MOUNT_PROPAGATION__PROPAGATION_PRIVATE);

        m = mount_at(cfg, "/var/sub");
        assert_non_null(m);
        char want[1024];
        snprintf(want, sizeof(want), "%s/a/b", data);
        assert_string_equal(m->host_path, want);
        assert_true(m->readonly);
        assert_int_equal(m->propagation,
                         RUNTIME__V1__MOUNT_PROPAGATION__PROPAGATION_HOST_TO_CONTAINER);
        struct stat st;
        assert_int_equal(stat(want, &st), 0); /* the subPath directory was created */
        assert_true(S_ISDIR(st.st_mode));

        m = mount_at(cfg, "/etc/app");
        assert_non_null(m);
        assert_true(m->readonly); /* configMap volumes are always read-only */

        /* /etc/hosts: the kubelet-managed file, written before the start */
        m = mount_at(cfg, "/etc/hosts");
        assert_non_null(m);
        snprintf(want, sizeof(want), "%s/pods/0b0e7c52-uid/etc-hosts", root);
        assert_string_equal(m->host_path, want);
        assert_false(m->readonly);
        assert_int_equal(stat(want, &st), 0);
        assert_true(S_ISREG(st.st_mode));
        char *hosts = slurp(want);
        assert_non_null(strstr(hosts, "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n"));
        assert_non_null(strstr(hosts, "\n10.88.0.5\tweb\n"));
        free(hosts);

        /* the termination log: a new empty 0666 file under the pod's dir */
        m = mount_at(cfg, "/dev/termination-log");
        assert_non_null(m);
        snprintf(want, sizeof(want), "%s/pods/0b0e7c52-uid/containers/app/", root);
        assert_int_equal(strncmp(m->host_path, want, strlen(want)), 0);
        assert_int_equal(strlen(m->host_path + strlen(want)), 8);
        assert_int_equal(stat(m->host_path, &st), 0);
        assert_true(S_ISREG(st.st_mode));
        assert_int_equal(st.st_mode & 0777, 0666);
        assert_int_equal(st.st_size, 0);
        assert_int_equal(cfg->n_mounts, 5);
        assert_string_equal(cfg->mounts[3]->container_path, "/etc/hosts");
        assert_string_equal(cfg->mounts[4]->container_path, "/dev/termination-log");
        kuberuntime_container_config_free(cfg);

        /* no pod IP yet: no /etc/hosts mount (as upstream) */
        cfg = container_cfg(p, 0, NULL, &vols);
        assert_null(mount_at(cfg, "/etc/hosts"));
        kuberuntime_container_config_free(cfg);
        pod_unref(p);

        /* hostNetwork: the node's file under upstream's header, with or
         * without an IP (upstream shouldMountHostsFile) */
        p = simple_pod(NULL, "  hostNetwork: true\n"
                             "  hostAliases: [{ip: 10.1.2.3, hostnames: [db.local]}]\n");
        cfg = container_cfg(p, 0, NULL, &vols);
        m = mount_at(cfg, "/etc/hosts");
        assert_non_null(m);
        hosts = slurp(m->host_path);
        char *node = slurp("/etc/hosts");
        char *want_hosts = NULL;
        assert_true(asprintf(&want_hosts,
                             "# Kubernetes-managed hosts file (host network).\n%s\n"
                             "# Entries added by HostAliases.\n10.1.2.3\tdb.local\n",
                             node) > 0);
        assert_string_equal(hosts, want_hosts);
        free(want_hosts);
        free(node);
        free(hosts);
        kuberuntime_container_config_free(cfg);
        pod_unref(p);

        /* a container mounting /etc/hosts itself: none */
        p = simple_pod("    volumeMounts: [{name: conf, mountPath: /etc/hosts, subPath: hosts}]\n",
                       "  volumes: [{name: conf, emptyDir: {}}]\n");
        cfg = container_cfg(p, 0, "10.88.0.5", &vols);
        assert_int_equal(cfg->n_mounts, 2);
        assert_string_equal(cfg->mounts[0]->container_path, "/etc/hosts");
        kuberuntime_container_config_free(cfg);
        pod_unref(p);

        kv_list_release(&vols);
        free(data);
        free(conf);
}

static void test_subpath_expr(void **state)
{
        (void)state;
        char *data = make_dir("data3");
        struct kv_list vols = {0};
        kv_list_add(&vols, "data", data);
        struct pod *p = simple_pod(
            "    env: [{name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]\n"
            "    volumeMounts: [{name: data, mountPath: /logs, subPathExpr: 'pods/$(POD_NAME)'}]\n",
            "  volumes: [{name: data, emptyDir: {}}]\n");
        Runtime__V1__ContainerConfig *cfg = container_cfg(p, 0, NULL, &vols);
        char want[1024];
        snprintf(want, sizeof(want), "%s/pods/web", data);
        assert_string_equal(mount_at(cfg, "/logs")->host_path, want);
        kuberuntime_container_config_free(cfg);
        pod_unref(p);

        /* every referenced variable needs a value: the missing ones, sorted */
        p = simple_pod("    env: [{name: EMPTY, value: ''}]\n"
                       "    volumeMounts: [{name: data, mountPath: /logs, subPathExpr: "
                       "'$(ZED)/$(EMPTY)/$(ZED)'}]\n",
                       "  volumes: [{name: data, emptyDir: {}}]\n");
        char *msg = container_error(p, &vols);
        assert_non_null(strstr(msg, "missing value for EMPTY, ZED"));
        free(msg);
        pod_unref(p);
        kv_list_release(&vols);
        free(data);
}

static void test_subpath_rejections(void **state)
{
        (void)state;
        char *data = make_dir("data2");
        char *outside = make_dir("outside");
        char link[1024];
        snprintf(link, sizeof(link), "%s/escape", data);
        unlink(link);
        assert_int_equal(symlink(outside, link), 0);
        struct kv_list vols = {0};
        kv_list_add(&vols, "data", data);

        const char *cases[][2] = {
            {"/etc", "error SubPath `/etc` must not be an absolute path"},
            {"a/../../etc", "unable to provision SubPath `a/../../etc`: must not contain '..'"},
            {"escape", "failed to prepare subPath for volumeMount \"data\" of container \"app\""},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct pod *p = simple_pod("    volumeMounts: [{name: data, mountPath: /x, "
                                           "subPath: placeholder}]\n",
                                           "  volumes: [{name: data, emptyDir: {}}]\n");
                /* the decoder refuses the first two already: check the
                 * builder's own guard with a pod that bypassed it */
                free(p->containers[0].volume_mounts[0].sub_path);
                p->containers[0].volume_mounts[0].sub_path = strdup(cases[i][0]);
                char *msg = container_error(p, &vols);
                if (strstr(msg, cases[i][1]) == NULL)
                        fail_msg("subPath %s: got \"%s\"", cases[i][0], msg);
                free(msg);
                pod_unref(p);
        }

        /* a volume the kubelet did not set up */
        struct pod *p = simple_pod("    volumeMounts: [{name: data, mountPath: /x}]\n",
                                   "  volumes: [{name: data, emptyDir: {}}]\n");
        char *msg = container_error(p, NULL);
        assert_non_null(strstr(msg, "cannot find volume \"data\" to mount into container \"app\""));
        free(msg);
        pod_unref(p);

        kv_list_release(&vols);
        free(data);
        free(outside);
}

/* ---- resources ---- */

static const Runtime__V1__LinuxContainerResources *res(const Runtime__V1__ContainerConfig *c)
{
        return c->linux->resources;
}

static void test_resources_by_qos(void **state)
{
        (void)state;
        /* Guaranteed */
        struct pod *p = simple_pod("    resources: {limits: {cpu: 500m, memory: 128Mi}}\n", NULL);
        Runtime__V1__ContainerConfig *cfg = container_cfg(p, 0, NULL, NULL);
        assert_int_equal(res(cfg)->cpu_shares, 512);
        assert_int_equal(res(cfg)->cpu_quota, 50000);
        assert_int_equal(res(cfg)->cpu_period, 100000);
        assert_int_equal(res(cfg)->memory_limit_in_bytes, 128 * 1024 * 1024);
        assert_int_equal(res(cfg)->oom_score_adj, -997);
        kuberuntime_container_config_free(cfg);
        pod_unref(p);

        /* Burstable: request only cpu 100m, memory limit */
        p = simple_pod("    resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {memory: "
                       "256Mi}}\n",
                       NULL);
        cfg = container_cfg(p, 0, NULL, NULL);
        assert_int_equal(res(cfg)->cpu_shares, 102);
        assert_int_equal(res(cfg)->cpu_quota, 0);
        assert_int_equal(res(cfg)->memory_limit_in_bytes, 256 * 1024 * 1024);
        int64_t adj = res(cfg)->oom_score_adj;
        assert_true(adj >= 3 && adj <= 999);
        assert_int_equal(adj, kuberuntime_oom_score_adj(p, &p->containers[0],
                                                        (int64_t)sysconf(_SC_PHYS_PAGES) *
                                                            sysconf(_SC_PAGESIZE)));
        kuberuntime_container_config_free(cfg);
        pod_unref(p);

        /* BestEffort */
        p = simple_pod(NULL, NULL);
        cfg = container_cfg(p, 0, NULL, NULL);
        assert_int_equal(res(cfg)->cpu_shares, 2);
        assert_int_equal(res(cfg)->cpu_quota, 0);
        assert_int_equal(res(cfg)->cpu_period, 100000);
        assert_int_equal(res(cfg)->memory_limit_in_bytes, 0);
        assert_int_equal(res(cfg)->oom_score_adj, 1000);
        kuberuntime_container_config_free(cfg);
        pod_unref(p);

        /* a tiny limit: quota floor of 1 ms, shares floor of 2 */
        p = simple_pod("    resources: {limits: {cpu: 1m}}\n", NULL);
        cfg = container_cfg(p, 0, NULL, NULL);
        assert_int_equal(res(cfg)->cpu_shares, 2);
        assert_int_equal(res(cfg)->cpu_quota, 1000);
        kuberuntime_container_config_free(cfg);
        pod_unref(p);
}

static void test_oom_score_adj_policy(void **state)
{
        (void)state;
        const int64_t GiB = 1024LL * 1024 * 1024;
        struct pod *p = simple_pod("    resources: {requests: {memory: 1Gi}}\n", NULL);
        /* 1000 - 1000 * 1 / 4 */
        assert_int_equal(kuberuntime_oom_score_adj(p, &p->containers[0], 4 * GiB), 750);
        /* using all of the node: clamped to 3, above Guaranteed's 3 */
        assert_int_equal(kuberuntime_oom_score_adj(p, &p->containers[0], GiB), 3);
        /* a tiny request: 1000 would equal BestEffort, so 999 */
        assert_int_equal(kuberuntime_oom_score_adj(p, &p->containers[0], 100000 * GiB), 999);
        pod_unref(p);

        /* node-critical pods (static + system-node-critical) count as Guaranteed */
        p = test_pod_yaml("apiVersion: v1\nkind: Pod\n"
                          "metadata: {name: etcd, namespace: kube-system, uid: u1, annotations: "
                          "{kubernetes.io/config.source: file}}\n"
                          "spec:\n  priorityClassName: system-node-critical\n"
                          "  containers:\n  - name: app\n    image: busybox\n");
        assert_int_equal(kuberuntime_oom_score_adj(p, &p->containers[0], 4 * GiB), -997);
        pod_unref(p);

        /* a sidecar scores no higher than the smallest regular container */
        p = test_pod_yaml(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: shop, uid: u1}\n"
            "spec:\n"
            "  initContainers:\n"
            "  - name: proxy\n    image: busybox\n    restartPolicy: Always\n"
            "    resources: {requests: {memory: 100Mi}}\n"
            "  containers:\n"
            "  - name: a\n    image: busybox\n    resources: {requests: {memory: 1Gi}}\n"
            "  - name: b\n    image: busybox\n    resources: {requests: {memory: 2Gi}}\n");
        assert_int_equal(kuberuntime_oom_score_adj(p, &p->init_containers[0], 4 * GiB), 750);
        assert_int_equal(kuberuntime_oom_score_adj(p, &p->containers[1], 4 * GiB), 500);
        pod_unref(p);
}

/* ---- security context ---- */

static void test_container_security_context(void **state)
{
        (void)state;
        struct pod *p = test_pod_yaml(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: shop, uid: u1}\n"
            "spec:\n"
            "  securityContext: {runAsUser: 1000, runAsGroup: 1000, fsGroup: 2000, "
            "supplementalGroups: [3000], seccompProfile: {type: RuntimeDefault}}\n"
            "  containers:\n  - name: app\n    image: busybox\n"
            "    securityContext:\n"
            "      runAsUser: 1001\n      readOnlyRootFilesystem: true\n"
            "      allowPrivilegeEscalation: false\n"
            "      capabilities: {add: [NET_ADMIN], drop: [ALL]}\n"
            "  - name: other\n    image: busybox\n"
            "    securityContext:\n"
            "      privileged: true\n      procMount: Unmasked\n"
            "      seccompProfile: {type: Localhost, localhostProfile: profiles/audit.json}\n");
        Runtime__V1__ContainerConfig *cfg = container_cfg(p, 0, NULL, NULL);
        const Runtime__V1__LinuxContainerSecurityContext *sc = cfg->linux->security_context;
        assert_int_equal(sc->run_as_user->value, 1001); /* the container's wins */
        assert_int_equal(sc->run_as_group->value, 1000);
        assert_true(sc->readonly_rootfs);
        assert_true(sc->no_new_privs);
        assert_false(sc->privileged);
        assert_int_equal(sc->capabilities->n_add_capabilities, 1);
        assert_string_equal(sc->capabilities->add_capabilities[0], "NET_ADMIN");
        assert_int_equal(sc->capabilities->n_drop_capabilities, 1);
        assert_string_equal(sc->capabilities->drop_capabilities[0], "ALL");
        assert_int_equal(sc->n_supplemental_groups, 2);
        assert_int_equal(sc->supplemental_groups[0], 2000);
        assert_int_equal(sc->supplemental_groups[1], 3000);
        assert_int_equal(sc->seccomp->profile_type,
                         RUNTIME__V1__SECURITY_PROFILE__PROFILE_TYPE__RuntimeDefault);
        assert_null(sc->apparmor);
        assert_true(sc->n_masked_paths >= 12);
        assert_string_equal(sc->masked_paths[0], "/proc/asound");
        assert_int_equal(sc->n_readonly_paths, 5);
        assert_string_equal(sc->readonly_paths[3], "/proc/sys");
        kuberuntime_container_config_free(cfg);

        cfg = container_cfg(p, 1, NULL, NULL);
        sc = cfg->linux->security_context;
        assert_true(sc->privileged);
        assert_false(sc->no_new_privs);
        assert_null(sc->capabilities);
        assert_int_equal(sc->run_as_user->value, 1000); /* the pod's */
        assert_int_equal(sc->seccomp->profile_type,
                         RUNTIME__V1__SECURITY_PROFILE__PROFILE_TYPE__Localhost);
        char want[1024];
        snprintf(want, sizeof(want), "%s/seccomp/profiles/audit.json", root);
        assert_string_equal(sc->seccomp->localhost_ref, want);
        assert_int_equal(sc->n_masked_paths, 0);
        assert_int_equal(sc->n_readonly_paths, 0);
        kuberuntime_container_config_free(cfg);
        pod_unref(p);

        /* nothing set: Unconfined seccomp, no user */
        p = simple_pod(NULL, NULL);
        cfg = container_cfg(p, 0, NULL, NULL);
        sc = cfg->linux->security_context;
        assert_int_equal(sc->seccomp->profile_type,
                         RUNTIME__V1__SECURITY_PROFILE__PROFILE_TYPE__Unconfined);
        assert_null(sc->run_as_user);
        assert_null(sc->run_as_group);
        kuberuntime_container_config_free(cfg);
        pod_unref(p);
}

static void test_apparmor_profiles(void **state)
{
        (void)state;
        struct pod *p =
            test_pod_yaml("apiVersion: v1\nkind: Pod\n"
                          "metadata:\n  name: web\n  namespace: shop\n  uid: u1\n"
                          "  annotations: {container.apparmor.security.beta.kubernetes.io/a: "
                          "localhost/k8s-nginx}\n"
                          "spec:\n  securityContext: {appArmorProfile: {type: RuntimeDefault}}\n"
                          "  containers:\n"
                          "  - {name: a, image: busybox}\n"
                          "  - {name: b, image: busybox}\n"
                          "  - name: c\n    image: busybox\n"
                          "    securityContext: {appArmorProfile: {type: Unconfined}}\n");
        Runtime__V1__ContainerConfig *cfg = container_cfg(p, 0, NULL, NULL);
        const Runtime__V1__SecurityProfile *aa = cfg->linux->security_context->apparmor;
        assert_int_equal(aa->profile_type, RUNTIME__V1__SECURITY_PROFILE__PROFILE_TYPE__Localhost);
        assert_string_equal(aa->localhost_ref, "k8s-nginx");
        kuberuntime_container_config_free(cfg);
        cfg = container_cfg(p, 1, NULL, NULL);
        assert_int_equal(cfg->linux->security_context->apparmor->profile_type,
                         RUNTIME__V1__SECURITY_PROFILE__PROFILE_TYPE__RuntimeDefault);
        kuberuntime_container_config_free(cfg);
        cfg = container_cfg(p, 2, NULL, NULL);
        assert_int_equal(cfg->linux->security_context->apparmor->profile_type,
                         RUNTIME__V1__SECURITY_PROFILE__PROFILE_TYPE__Unconfined);
        kuberuntime_container_config_free(cfg);
        pod_unref(p);
}

static void test_run_as_non_root_with_root_user_is_refused(void **state)
{
        (void)state;
        struct pod *p = simple_pod("    securityContext: {runAsUser: 0}\n",
                                   "  securityContext: {runAsNonRoot: true}\n");
        char *msg = container_error(p, NULL);
        assert_non_null(strstr(msg, "container's runAsUser breaks non-root policy (pod: "
                                    "\"web_shop(0b0e7c52-uid)\", container: app)"));
        free(msg);
        pod_unref(p);
}

/* runAsNonRoot without a runAsUser: the image's user decides (upstream
 * getImageUser + verifyRunAsNonRoot). */
static void test_run_as_non_root_and_the_image_user(void **state)
{
        (void)state;
        struct pod *p = simple_pod(NULL, "  securityContext: {runAsNonRoot: true}\n");
        const struct container *c = &p->containers[0];
        assert_true(kuberuntime_needs_image_user(p, c));
        ck_error_t err = NULL;
        Runtime__V1__Image image = RUNTIME__V1__IMAGE__INIT;
        Runtime__V1__Int64Value uid = RUNTIME__V1__INT64_VALUE__INIT;

        /* no user in the image, or no image status: root */
        assert_int_equal(kuberuntime_verify_image_user(p, c, &image, &err), -1);
        assert_string_equal(ck_error_msg(err), "container has runAsNonRoot and image will run as "
                                               "root (pod: \"web_shop(0b0e7c52-uid)\", "
                                               "container: app)");
        ck_error_release(&err);
        assert_int_equal(kuberuntime_verify_image_user(p, c, NULL, &err), -1);
        ck_error_release(&err);
        /* uid 0, explicitly */
        image.uid = &uid;
        assert_int_equal(kuberuntime_verify_image_user(p, c, &image, &err), -1);
        ck_error_release(&err);
        /* a non-root uid */
        uid.value = 65534;
        assert_int_equal(kuberuntime_verify_image_user(p, c, &image, &err), 0);
        /* out of range */
        uid.value = 1LL << 32;
        assert_int_equal(kuberuntime_verify_image_user(p, c, &image, &err), -1);
        assert_non_null(strstr(ck_error_msg(err), "image has an invalid user id (4294967296). "
                                                  "(Must be 1-(2147483647))"));
        ck_error_release(&err);
        /* a user name: cannot be verified */
        image.uid = NULL;
        image.username = "nobody";
        assert_int_equal(kuberuntime_verify_image_user(p, c, &image, &err), -1);
        assert_string_equal(ck_error_msg(err),
                            "container has runAsNonRoot and image has non-numeric user (nobody), "
                            "cannot verify user is non-root (pod: \"web_shop(0b0e7c52-uid)\", "
                            "container: app)");
        ck_error_release(&err);
        pod_unref(p);

        /* a runAsUser (of the container or the pod): the image is not asked */
        p = simple_pod("    securityContext: {runAsUser: 1000}\n",
                       "  securityContext: {runAsNonRoot: true}\n");
        assert_false(kuberuntime_needs_image_user(p, &p->containers[0]));
        assert_int_equal(kuberuntime_verify_image_user(p, &p->containers[0], NULL, &err), 0);
        pod_unref(p);
        /* no runAsNonRoot, or false on the container over the pod's true */
        p = simple_pod("    securityContext: {runAsNonRoot: false}\n",
                       "  securityContext: {runAsNonRoot: true}\n");
        assert_false(kuberuntime_needs_image_user(p, &p->containers[0]));
        pod_unref(p);
}

/* recursiveReadOnly: no recursive read-only mounts are made (upstream with
 * a runtime that lists none): IfPossible is a plain read-only mount,
 * Enabled is refused with upstream's message. */
static void test_recursive_read_only(void **state)
{
        (void)state;
        char *data = make_dir("rro");
        struct kv_list vols = {0};
        kv_list_add(&vols, "data", data);
        struct pod *p = simple_pod("    volumeMounts:\n"
                                   "    - {name: data, mountPath: /d, readOnly: true, "
                                   "recursiveReadOnly: IfPossible}\n",
                                   "  volumes:\n  - {name: data, emptyDir: {}}\n");
        Runtime__V1__ContainerConfig *cfg = container_cfg(p, 0, NULL, &vols);
        const Runtime__V1__Mount *m = mount_at(cfg, "/d");
        assert_non_null(m);
        assert_true(m->readonly);
        assert_false(m->recursive_read_only);
        kuberuntime_container_config_free(cfg);
        pod_unref(p);

        p = simple_pod("    volumeMounts:\n"
                       "    - {name: data, mountPath: /d, readOnly: true, "
                       "recursiveReadOnly: Enabled}\n",
                       "  volumes:\n  - {name: data, emptyDir: {}}\n");
        char *msg = container_error(p, &vols);
        assert_string_equal(msg, "failed to resolve recursive read-only mode: volume \"data\" "
                                 "requested recursive read-only mode, but it is not supported by "
                                 "the runtime");
        free(msg);
        pod_unref(p);
        kv_list_release(&vols);
        free(data);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st;
        (void)flag;
        (void)ftw;
        return remove(path);
}

static int setup(void **state)
{
        (void)state;
        if (mkdtemp(root) == NULL)
                return -1;
        snprintf(resolv, sizeof(resolv), "%s/resolv.conf", root);
        FILE *f = fopen(resolv, "we");
        if (f == NULL)
                return -1;
        fputs("nameserver 192.168.1.1\nsearch example.com\n", f);
        fclose(f);
        log_set_fd(open("/dev/null", O_WRONLY | O_CLOEXEC));
        return 0;
}

static int teardown(void **state)
{
        (void)state;
        return nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_sandbox_labels_annotations_metadata),
            cmocka_unit_test(test_sandbox_hostname),
            cmocka_unit_test(test_sandbox_host_users),
            cmocka_unit_test(test_sandbox_port_mappings),
            cmocka_unit_test(test_namespace_options),
            cmocka_unit_test(test_sandbox_security_context_and_sysctls),
            cmocka_unit_test(test_sandbox_resources),
            cmocka_unit_test(test_container_labels_and_annotations),
            cmocka_unit_test(test_label_parsers),
            cmocka_unit_test(test_container_basics),
            cmocka_unit_test(test_container_hugepage_limits),
            cmocka_unit_test(test_selinux),
            cmocka_unit_test(test_runtime_handler),
            cmocka_unit_test(test_env_order_field_refs_and_expansion),
            cmocka_unit_test(test_env_resource_field_refs),
            cmocka_unit_test(test_env_config_map_and_secret_without_api_server),
            cmocka_unit_test(test_mounts),
            cmocka_unit_test(test_subpath_expr),
            cmocka_unit_test(test_subpath_rejections),
            cmocka_unit_test(test_resources_by_qos),
            cmocka_unit_test(test_oom_score_adj_policy),
            cmocka_unit_test(test_container_security_context),
            cmocka_unit_test(test_apparmor_profiles),
            cmocka_unit_test(test_run_as_non_root_with_root_user_is_refused),
            cmocka_unit_test(test_run_as_non_root_and_the_image_user),
            cmocka_unit_test(test_recursive_read_only),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
