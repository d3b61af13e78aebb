/* SPDX-License-Identifier: Apache-2.0 */
/* Admission: the reasons and messages a rejected pod's status shows. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "api/decode.h"
#include "kubelet/admission.h"
#include "kubelet/sysctl.h"
#include "util/yamljson.h"

#include "test_pods.h"

#include <string.h>

static struct pod *pod_with(const char *name, const char *cpu, const char *mem, int host_port)
{
        char buf[1024];
        char ports[128] = "";
        if (host_port)
                snprintf(ports, sizeof(ports), "\n    ports: [{containerPort: 80, hostPort: %d}]",
                         host_port);
        snprintf(buf, sizeof(buf),
                 "apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec:\n  containers:\n"
                 "  - name: c\n    image: busybox:1.35\n    resources: {requests: {cpu: \"%s\", "
                 "memory: \"%s\"}}%s\n",
                 name, cpu, mem, ports);
        return test_pod_yaml(buf);
}

static const struct admission_node node = {
    .allocatable_cpu_milli = 2000,
    .allocatable_memory = 1024 * 1024 * 1024,
    .max_pods = 3,
};

static void test_admits_when_it_fits(void **state)
{
        (void)state;
        struct pod *a = pod_with("a", "500m", "100Mi", 0);
        struct pod *b = pod_with("b", "1", "200Mi", 8080);
        struct admission_result r;
        admission_check(b, &a, 1, &node, &r);
        assert_true(r.admit);
        pod_unref(a);
        pod_unref(b);
}

static void test_out_of_cpu(void **state)
{
        (void)state;
        struct pod *a = pod_with("a", "1500m", "100Mi", 0);
        struct pod *b = pod_with("b", "600m", "100Mi", 0);
        struct admission_result r;
        admission_check(b, &a, 1, &node, &r);
        assert_false(r.admit);
        assert_string_equal(r.reason, "OutOfcpu");
        assert_string_equal(r.message, "Node didn't have enough resource: cpu, requested: 600, "
                                       "used: 1500, capacity: 2000");
        pod_unref(a);
        pod_unref(b);
}

static void test_out_of_memory(void **state)
{
        (void)state;
        struct pod *b = pod_with("b", "100m", "2Gi", 0);
        struct admission_result r;
        admission_check(b, NULL, 0, &node, &r);
        assert_false(r.admit);
        assert_string_equal(r.reason, "OutOfmemory");
        pod_unref(b);
}

static void test_out_of_pods(void **state)
{
        (void)state;
        struct pod *p[3] = {pod_with("a", "0", "0", 0), pod_with("b", "0", "0", 0),
                            pod_with("c", "0", "0", 0)};
        struct pod *d = pod_with("d", "0", "0", 0);
        struct admission_result r;
        admission_check(d, p, 3, &node, &r);
        assert_false(r.admit);
        assert_string_equal(r.reason, "OutOfpods");
        assert_string_equal(r.message, "Node didn't have enough resource: pods, requested: 1, "
                                       "used: 3, capacity: 3");
        for (int i = 0; i < 3; i++)
                pod_unref(p[i]);
        pod_unref(d);
}

static void test_host_port_conflict(void **state)
{
        (void)state;
        struct pod *a = pod_with("a", "100m", "10Mi", 8080);
        struct pod *b = pod_with("b", "100m", "10Mi", 8080);
        struct pod *c = pod_with("c", "100m", "10Mi", 8081);
        struct admission_result r;
        admission_check(b, &a, 1, &node, &r);
        assert_false(r.admit);
        assert_string_equal(r.reason, "NodePorts");
        admission_check(c, &a, 1, &node, &r);
        assert_true(r.admit);
        pod_unref(a);
        pod_unref(b);
        pod_unref(c);
}

/* upstream rejectPodAdmissionBasedOnOSSelector / OSField: before anything
 * else, even on a full node. */
static void test_pod_os(void **state)
{
        (void)state;
        static const struct {
                const char *extra_meta, *os, *reason, *message;
        } cases[] = {
            {"", "windows", "PodOSNotSupported",
             "Failed to admit pod as the OS field doesn't match node OS"},
            {", labels: {kubernetes.io/os: windows}", NULL, "PodOSSelectorNodeLabelDoesNotMatch",
             "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"},
            {"", "linux", NULL, NULL},
            {", labels: {kubernetes.io/os: linux}", NULL, NULL, NULL},
        };
        struct pod *full[3] = {pod_with("a", "0", "0", 0), pod_with("b", "0", "0", 0),
                               pod_with("c", "0", "0", 0)};
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char os[64] = "", buf[512];
                if (cases[i].os)
                        snprintf(os, sizeof(os), "  os: {name: %s}\n", cases[i].os);
                snprintf(buf, sizeof(buf),
                         "apiVersion: v1\nkind: Pod\nmetadata: {name: w%s}\nspec:\n%s"
                         "  containers: [{name: c, image: busybox:1.35}]\n",
                         cases[i].extra_meta, os);
                struct pod *pod = test_pod_yaml(buf);
                struct admission_result r;
                admission_check(pod, full, 0, &node, &r);
                if (cases[i].reason == NULL) {
                        assert_true(r.admit);
                } else {
                        assert_false(r.admit);
                        assert_string_equal(r.reason, cases[i].reason);
                        assert_string_equal(r.message, cases[i].message);
                        /* the OS comes first, even when the node is full */
                        admission_check(pod, full, 3, &node, &r);
                        assert_string_equal(r.reason, cases[i].reason);
                }
                pod_unref(pod);
        }
        for (size_t i = 0; i < 3; i++)
                pod_unref(full[i]);
}

static struct pod *pod_with_sysctl(const char *name)
{
        char buf[512];
        snprintf(buf, sizeof(buf),
                 "apiVersion: v1\nkind: Pod\nmetadata: {name: s}\nspec:\n"
                 "  securityContext: {sysctls: [{name: \"%s\", value: \"1\"}]}\n"
                 "  containers: [{name: c, image: busybox:1.35}]\n",
                 name);
        return test_pod_yaml(buf);
}

/* upstream's sysctl allowlist handler: the safe set for the kernel, the
 * allowedUnsafeSysctls names and patterns, the host namespaces. */
static void test_sysctls(void **state)
{
        (void)state;
        static const char *const unsafe[] = {"kernel.msg*", "net.core.somaxconn", NULL};
        struct sysctl_allowlist *al = NULL;
        ck_error_t err = NULL;
        assert_int_equal(sysctl_allowlist_new(unsafe, "6.1.0-13-amd64", &al, &err), 0);
        struct admission_node n = node;
        n.sysctls = al;
        static const struct {
                const char *sysctl, *message; /* NULL: admitted */
        } cases[] = {
            {"kernel.shm_rmid_forced", NULL},
            {"kernel/shm_rmid_forced", NULL}, /* slashes: normalized */
            {"net.ipv4.tcp_rmem", NULL},      /* safe from 4.15 */
            {"kernel.msgmax", NULL},          /* the kernel.msg* pattern */
            {"net.core.somaxconn", NULL},
            {"kernel.sem", "forbidden sysctl: \"kernel.sem\" not allowlisted"},
            {"net.core.rmem_max", "forbidden sysctl: \"net.core.rmem_max\" not allowlisted"},
            {"net/ipv4/ip_forward", "forbidden sysctl: \"net.ipv4.ip_forward\" not allowlisted"},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct pod *pod = pod_with_sysctl(cases[i].sysctl);
                struct admission_result r;
                admission_check(pod, NULL, 0, &n, &r);
                if (cases[i].message == NULL) {
                        if (!r.admit)
                                fail_msg("%s rejected: %s", cases[i].sysctl, r.message);
                } else {
                        assert_false(r.admit);
                        assert_string_equal(r.reason, "SysctlForbidden");
                        assert_string_equal(r.message, cases[i].message);
                }
                pod_unref(pod);
        }
        /* an IPC sysctl in a pod sharing the host's IPC namespace */
        struct pod *pod = pod_with_sysctl("kernel.shm_rmid_forced");
        pod->host_ipc = true;
        struct admission_result r;
        admission_check(pod, NULL, 0, &n, &r);
        assert_false(r.admit);
        assert_string_equal(r.message, "forbidden sysctl: \"kernel.shm_rmid_forced\" not allowed "
                                       "with host IPC enabled");
        pod_unref(pod);
        sysctl_allowlist_free(al);

        /* an older kernel: the sysctls namespaced later are not safe there */
        assert_int_equal(sysctl_allowlist_new(NULL, "4.4.0", &al, &err), 0);
        n.sysctls = al;
        pod = pod_with_sysctl("net.ipv4.tcp_keepalive_time");
        admission_check(pod, NULL, 0, &n, &r);
        assert_false(r.admit);
        pod_unref(pod);
        sysctl_allowlist_free(al);

        /* what upstream's NewAllowlist refuses */
        static const char *const bad_pattern[] = {"Kernel.X", NULL};
        assert_int_equal(sysctl_allowlist_new(bad_pattern, NULL, &al, &err), -1);
        assert_non_null(strstr(ck_error_msg(err), "sysctl \"Kernel.X\" must have at most 253"));
        ck_error_release(&err);
        static const char *const not_namespaced[] = {"vm.swappiness", NULL};
        assert_int_equal(sysctl_allowlist_new(not_namespaced, NULL, &al, &err), -1);
        assert_string_equal(ck_error_msg(err),
                            "the sysctls \"vm.swappiness\" are not known to be namespaced");
        ck_error_release(&err);
}

/* Pod-level resources (spec.resources) are not implemented: the pod is
 * refused as upstream refuses it with the PodLevelResources gate off, not
 * run without its limits.  Other resource names there do not count. */
static void test_pod_level_resources(void **state)
{
        (void)state;
        struct pod *p = test_pod_yaml("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
                                      "  resources: {limits: {cpu: 500m}}\n"
                                      "  containers: [{name: c, image: busybox:1.35}]\n");
        assert_true(p->pod_level_resources);
        struct admission_result r;
        admission_check(p, NULL, 0, &node, &r);
        assert_false(r.admit);
        assert_string_equal(r.reason, "PodLevelResourcesNotSupported");
        assert_string_equal(r.message, "PodLevelResources feature gate is disabled");
        pod_unref(p);
        p = test_pod_yaml("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
                          "  resources: {requests: {hugepages-2Mi: 2Mi}}\n"
                          "  containers: [{name: c, image: busybox:1.35}]\n");
        assert_true(p->pod_level_resources);
        pod_unref(p);
        p = test_pod_yaml("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
                          "  resources: {requests: {example.com/gpu: 1}}\n"
                          "  containers: [{name: c, image: busybox:1.35}]\n");
        assert_false(p->pod_level_resources);
        admission_check(p, NULL, 0, &node, &r);
        assert_true(r.admit);
        pod_unref(p);
}

static int refuse_devices(void *ctx, const struct pod *pod, ck_error_t *err)
{
        (void)pod;
        int *calls = ctx;
        (*calls)++;
        return ck_error_make(err, 0,
                             "no healthy devices present; cannot allocate unhealthy devices "
                             "example.com/gpu");
}

static int accept_devices(void *ctx, const struct pod *pod, ck_error_t *err)
{
        (void)pod;
        (void)err;
        int *calls = ctx;
        (*calls)++;
        return 0;
}

static struct pod *gpu_pod(const char *name, int app, int init)
{
        char buf[1024];
        snprintf(buf, sizeof(buf),
                 "apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec:\n"
                 "  initContainers:\n  - name: i\n    image: busybox:1.35\n"
                 "    resources: {limits: {example.com/gpu: %d}}\n"
                 "  containers:\n  - name: c\n    image: busybox:1.35\n"
                 "    resources: {limits: {example.com/gpu: %d, other.io/x: 5}}\n",
                 name, init, app);
        return test_pod_yaml(buf);
}

/* Extended resources: the device plugins' allocation comes after the
 * sysctls and before the fit (UnexpectedAdmissionError, upstream's
 * message); the fit counts the resources the node has, as requests (the
 * larger of the app containers' sum and an init container's), and not
 * those it does not know. */
static void test_extended_resources(void **state)
{
        (void)state;
        struct resource_count ext[] = {{.name = "example.com/gpu", .value = 2}};
        int calls = 0;
        struct admission_node n = node;
        n.extended = ext;
        n.n_extended = 1;
        n.allocate_devices = refuse_devices;
        n.devices_ctx = &calls;
        struct pod *a = gpu_pod("a", 1, 0);
        assert_int_equal(admission_pod_extended_request(a, "example.com/gpu"), 1);
        struct admission_result r;
        admission_check(a, NULL, 0, &n, &r);
        assert_false(r.admit);
        assert_int_equal(calls, 1);
        assert_string_equal(r.reason, "UnexpectedAdmissionError");
        assert_string_equal(r.message,
                            "Allocate failed due to no healthy devices present; cannot allocate "
                            "unhealthy devices example.com/gpu, which is unexpected");
        n.allocate_devices = accept_devices;
        admission_check(a, NULL, 0, &n, &r);
        assert_true(r.admit); /* other.io/x: not the node's to check */
        /* init 2 > app 1: the pod needs 2; with a holding 1, 3 > 2 */
        struct pod *b = gpu_pod("b", 1, 2);
        assert_int_equal(admission_pod_extended_request(b, "example.com/gpu"), 2);
        admission_check(b, &a, 1, &n, &r);
        assert_false(r.admit);
        assert_string_equal(r.reason, "OutOfexample.com/gpu");
        assert_string_equal(r.message, "Node didn't have enough resource: example.com/gpu, "
                                       "requested: 2, used: 1, capacity: 2");
        pod_unref(a);
        pod_unref(b);
}

/* upstream's appArmorAdmitHandler: on a host without AppArmor, a new pod
 * that asks for a profile (other than Unconfined) is refused. */
static void test_apparmor(void **state)
{
        (void)state;
        static const char *const confined[] = {
            "spec:\n  securityContext: {appArmorProfile: {type: RuntimeDefault}}\n"
            "  containers: [{name: c, image: x}]\n",
            "spec:\n  containers: [{name: c, image: x, securityContext: {appArmorProfile: "
            "{type: Localhost, localhostProfile: p}}}]\n",
        };
        struct admission_node off = node, on = node;
        on.apparmor_enabled = true;
        struct admission_result r;
        for (size_t i = 0; i < 2; i++) {
                char buf[512];
                snprintf(buf, sizeof(buf), "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n%s",
                         confined[i]);
                struct pod *p = test_pod_yaml(buf);
                admission_check(p, NULL, 0, &off, &r);
                assert_false(r.admit);
                assert_string_equal(r.reason, "AppArmor");
                assert_string_equal(r.message,
                                    "Cannot enforce AppArmor: AppArmor is not enabled on the host");
                admission_check(p, NULL, 0, &on, &r);
                assert_true(r.admit);
                pod_unref(p);
        }
        /* Unconfined asks for nothing; a pod already running is not checked again */
        struct pod *p =
            test_pod_yaml("apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: "
                          "{container.apparmor.security.beta.kubernetes.io/c: unconfined}}\nspec:\n"
                          "  securityContext: {appArmorProfile: {type: Unconfined}}\n"
                          "  containers: [{name: c, image: x}]\n");
        admission_check(p, NULL, 0, &off, &r);
        assert_true(r.admit);
        pod_unref(p);
        p = test_pod_yaml("apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: "
                          "{container.apparmor.security.beta.kubernetes.io/c: runtime/default}}\n"
                          "spec:\n  containers: [{name: c, image: x}]\nstatus: {phase: Running}\n");
        admission_check(p, NULL, 0, &off, &r);
        assert_true(r.admit);
        pod_unref(p);
}

static void test_requests_with_init_and_sidecar(void **state)
{
        (void)state;
        struct pod *p = test_pod_yaml(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
            "  initContainers:\n"
            "  - {name: side, image: b:1, restartPolicy: Always, resources: {requests: {cpu: "
            "200m}}}\n"
            "  - {name: init, image: b:1, resources: {requests: {cpu: \"1\", memory: 1Gi}}}\n"
            "  containers:\n"
            "  - {name: app, image: b:1, resources: {requests: {cpu: 300m, memory: 100Mi}}}\n");
        int64_t cpu, mem;
        admission_pod_requests(p, &cpu, &mem);
        /* init runs with the sidecar: 1000 + 200 > app 300 + sidecar 200 */
        assert_int_equal(cpu, 1200);
        assert_int_equal(mem, 1024LL * 1024 * 1024);
        pod_unref(p);
}

/* upstream's fit counts spec.overhead with the requests (PodRequests),
 * and checks ephemeral-storage and huge pages against the node's
 * allocatable, 0 when the node has none of them. */
static void test_overhead_storage_hugepages(void **state)
{
        (void)state;
        struct resource_count native[] = {{.name = "ephemeral-storage", .value = 1000000000},
                                          {.name = "hugepages-2Mi", .value = 8 << 20}};
        struct admission_node n = node;
        n.native = native;
        n.n_native = 2;
        struct admission_result r;

        /* 1500m + an overhead of 250m, beside a 500m pod: 2250 > 2000 */
        struct pod *a = pod_with("a", "500m", "0", 0);
        struct pod *o = test_pod_yaml(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: o}\nspec:\n"
            "  overhead: {cpu: 250m, memory: 120Mi}\n"
            "  containers:\n  - {name: c, image: b:1, resources: {requests: {cpu: 1500m}}}\n");
        admission_check(o, &a, 1, &n, &r);
        assert_false(r.admit);
        assert_string_equal(r.reason, "OutOfcpu");
        assert_string_equal(r.message, "Node didn't have enough resource: cpu, requested: 1750, "
                                       "used: 500, capacity: 2000");
        /* alone it fits; as the one already there, it counts its overhead */
        admission_check(o, NULL, 0, &n, &r);
        assert_true(r.admit);
        struct pod *m = pod_with("m", "0", "905Mi", 0);
        admission_check(m, &o, 1, &n, &r);
        assert_false(r.admit);
        assert_string_equal(r.reason, "OutOfmemory");

        /* ephemeral-storage: requests (a limit defaults the request) */
        struct pod *s1 = test_pod_yaml(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: s1}\nspec:\n  containers:\n"
            "  - {name: c, image: b:1, resources: {limits: {ephemeral-storage: 600M}}}\n");
        struct pod *s2 = test_pod_yaml(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: s2}\nspec:\n  containers:\n"
            "  - {name: c, image: b:1, resources: {requests: {ephemeral-storage: 500M}}}\n");
        admission_check(s1, NULL, 0, &n, &r);
        assert_true(r.admit);
        admission_check(s2, &s1, 1, &n, &r);
        assert_false(r.admit);
        assert_string_equal(r.reason, "OutOfephemeral-storage");
        assert_string_equal(r.message,
                            "Node didn't have enough resource: ephemeral-storage, requested: "
                            "500000000, used: 600000000, capacity: 1000000000");

        /* huge pages: of a size the node has, and of one it has not */
        struct pod *h1 = test_pod_yaml(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: h1}\nspec:\n  containers:\n"
            "  - {name: c, image: b:1, resources: {limits: {hugepages-2Mi: 6Mi, memory: "
            "10Mi}}}\n");
        struct pod *h2 = test_pod_yaml(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: h2}\nspec:\n  containers:\n"
            "  - {name: c, image: b:1, resources: {limits: {hugepages-2Mi: 4Mi, memory: "
            "10Mi}}}\n");
        struct pod *h3 = test_pod_yaml(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: h3}\nspec:\n  containers:\n"
            "  - {name: c, image: b:1, resources: {limits: {hugepages-1Gi: 1Gi, memory: "
            "10Mi}}}\n");
        admission_check(h1, NULL, 0, &n, &r);
        assert_true(r.admit);
        admission_check(h2, &h1, 1, &n, &r);
        assert_false(r.admit);
        assert_string_equal(r.reason, "OutOfhugepages-2Mi");
        assert_string_equal(r.message, "Node didn't have enough resource: hugepages-2Mi, "
                                       "requested: 4194304, used: 6291456, capacity: 8388608");
        admission_check(h3, NULL, 0, &n, &r);
        assert_false(r.admit);
        assert_string_equal(r.reason, "OutOfhugepages-1Gi");
        /* a node without ephemeral-storage in allocatable: 0 */
        admission_check(s1, NULL, 0, &node, &r);
        assert_false(r.admit);
        assert_string_equal(r.reason, "OutOfephemeral-storage");

        struct pod *all[] = {a, o, m, s1, s2, h1, h2, h3};
        for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
                pod_unref(all[i]);
}

/* A pod from the apiserver (not static: preemptable) of the given QoS
 * resources, priority 0. */
static struct pod *api_pod(const char *name, const char *resources)
{
        char buf[1024];
        snprintf(buf, sizeof(buf),
                 "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, uid: %s-uid, annotations: "
                 "{kubernetes.io/config.source: api}}\nspec:\n  containers:\n"
                 "  - {name: c, image: b:1, resources: %s}\n",
                 name, name, resources);
        return test_pod_yaml(buf);
}

struct preempted {
        const struct pod *victims[8];
        int n;
        int calls;
        struct pod *const *active;
        size_t n_active;
};

static int record_preempt(void *ctx, const struct pod *pod, const struct admission_shortfall *s,
                          size_t n, char *why, size_t why_len)
{
        struct preempted *p = ctx;
        p->calls++;
        p->n =
            admission_pods_to_preempt(pod, p->active, p->n_active, s, n, p->victims, why, why_len);
        return p->n < 0 ? -1 : 0;
}

/* upstream's CriticalPodAdmissionHandler: a critical pod refused only for
 * resources has the fewest, least important pods preempted for it. */
static void test_critical_pod_preemption(void **state)
{
        (void)state;
        struct pod *be = api_pod("be", "{}");
        struct pod *bu = api_pod("bu", "{requests: {cpu: 500m}}");
        struct pod *gu = api_pod("gu", "{limits: {cpu: '1', memory: 100Mi}}");
        struct pod *active[] = {be, bu, gu};
        struct preempted p = {.active = active, .n_active = 3};
        struct admission_node n = node;
        n.max_pods = 10;
        n.preempt = record_preempt;
        n.preempt_ctx = &p;
        struct admission_result r;

        /* a static pod (critical) needing 1 cpu where 1.5 of 2 are taken:
         * the burstable pod covers the 500m short; the guaranteed one stays */
        struct pod *crit = pod_with("crit", "1", "0", 0);
        admission_check(crit, active, 3, &n, &r);
        assert_true(r.admit);
        assert_int_equal(p.calls, 1);
        assert_int_equal(p.n, 1);
        assert_ptr_equal(p.victims[0], bu);

        /* a pod from the apiserver is not critical: refused, nobody preempted */
        struct pod *plain = api_pod("plain", "{requests: {cpu: '1'}}");
        p.calls = 0;
        admission_check(plain, active, 3, &n, &r);
        assert_false(r.admit);
        assert_string_equal(r.reason, "OutOfcpu");
        assert_int_equal(p.calls, 0);

        /* more than every preemptable pod holds */
        struct pod *huge = pod_with("huge", "4", "0", 0);
        admission_check(huge, active, 3, &n, &r);
        assert_false(r.admit);
        assert_string_equal(r.reason, "UnexpectedAdmissionError");
        assert_string_equal(r.message,
                            "Unexpected error while attempting to recover from admission failure: "
                            "preemption: error finding a set of pods to preempt: no set of running "
                            "pods found to reclaim resources: [(res: cpu, q: 2000), ]");

        /* max pods: one pod must go, the besteffort one */
        n.max_pods = 3;
        struct pod *tiny = pod_with("tiny", "0", "0", 0);
        admission_check(tiny, active, 3, &n, &r);
        assert_true(r.admit);
        assert_int_equal(p.n, 1);
        assert_ptr_equal(p.victims[0], be);

        /* cpu and memory short: the guaranteed pod covers both at once */
        n.max_pods = 10;
        struct pod *both = pod_with("both", "1500m", "1000Mi", 0);
        admission_check(both, active, 3, &n, &r);
        assert_true(r.admit);
        assert_int_equal(p.n, 1);
        assert_ptr_equal(p.victims[0], gu);

        /* a reason preemption cannot help comes first */
        struct pod *picky = test_pod_yaml(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: picky}\nspec:\n"
            "  nodeSelector: {disk: ssd}\n"
            "  containers:\n  - {name: c, image: b:1, resources: {requests: {cpu: '1'}}}\n");
        p.calls = 0;
        admission_check(picky, active, 3, &n, &r);
        assert_false(r.admit);
        assert_string_equal(r.reason, "NodeAffinity");
        assert_int_equal(p.calls, 0);

        /* between static pods, priority decides only when both have one
         * (upstream Preemptable) */
        struct pod *noprio = test_pod_yaml("apiVersion: v1\nkind: Pod\nmetadata: {name: np}\n"
                                           "spec:\n  containers: [{name: c, image: b:1}]\n");
        struct pod *prio0 = test_pod_yaml("apiVersion: v1\nkind: Pod\nmetadata: {name: p0}\n"
                                          "spec:\n  priority: 0\n"
                                          "  containers: [{name: c, image: b:1}]\n");
        struct pod *high = test_pod_yaml("apiVersion: v1\nkind: Pod\nmetadata: {name: hi}\n"
                                         "spec:\n  priority: 1000\n"
                                         "  containers: [{name: c, image: b:1}]\n");
        struct pod *statics[] = {noprio};
        p.active = statics;
        p.n_active = 1;
        n.max_pods = 1;
        admission_check(high, statics, 1, &n, &r);
        assert_false(r.admit);
        assert_string_equal(r.reason, "UnexpectedAdmissionError");
        statics[0] = prio0;
        admission_check(high, statics, 1, &n, &r);
        assert_true(r.admit);
        assert_ptr_equal(p.victims[0], prio0);

        struct pod *all[] = {be, bu, gu, crit, plain, huge, tiny, both, picky, noprio, prio0, high};
        for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
                pod_unref(all[i]);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_admits_when_it_fits),
            cmocka_unit_test(test_out_of_cpu),
            cmocka_unit_test(test_out_of_memory),
            cmocka_unit_test(test_out_of_pods),
            cmocka_unit_test(test_pod_os),
            cmocka_unit_test(test_sysctls),
            cmocka_unit_test(test_host_port_conflict),
            cmocka_unit_test(test_requests_with_init_and_sidecar),
            cmocka_unit_test(test_pod_level_resources),
            cmocka_unit_test(test_apparmor),
            cmocka_unit_test(test_extended_resources),
            cmocka_unit_test(test_overhead_storage_hugepages),
            cmocka_unit_test(test_critical_pod_preemption),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
