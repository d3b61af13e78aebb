/* SPDX-License-Identifier: Apache-2.0 */
/* Admission: the reasons and messages a rejected pod's status shows. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "api/decode.h"
#include "kubelet/admission.h"
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

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_admits_when_it_fits),
            cmocka_unit_test(test_out_of_cpu),
            cmocka_unit_test(test_out_of_memory),
            cmocka_unit_test(test_out_of_pods),
            cmocka_unit_test(test_host_port_conflict),
            cmocka_unit_test(test_requests_with_init_and_sidecar),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
