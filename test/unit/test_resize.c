/* SPDX-License-Identifier: Apache-2.0 */
/* The decisions of an in-place resize (kubelet/resize.h): Infeasible,
 * Deferred or allocated, with upstream's messages, against the other pods
 * as they hold the node; and the order pending resizes are tried in. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "allocation/allocation.h"
#include "kubelet/resize.h"

#include "test_pods.h"

#include <string.h>

/* A pod of one container "main" with cpu and memory requests (quantities
 * as text; "" leaves one out), limits equal when guaranteed. */
static struct pod *pod_req(const char *name, const char *cpu, const char *mem, bool guaranteed,
                           int priority, bool file)
{
        char res[256];
        snprintf(res, sizeof(res), "{%s%s%s%s%s}", cpu[0] ? "cpu: " : "", cpu,
                 cpu[0] && mem[0] ? ", " : "", mem[0] ? "memory: " : "", mem);
        char buf[1024];
        snprintf(buf, sizeof(buf),
                 "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, uid: uid-%s%s}\nspec:\n"
                 "  priority: %d\n  containers:\n  - name: main\n    image: busybox:1.35\n"
                 "    resources: {requests: %s%s%s}\n",
                 name, name, file ? ", annotations: {kubernetes.io/config.source: file}" : "",
                 priority, res, guaranteed ? ", limits: " : "", guaranteed ? res : "");
        struct pod *p = test_pod_yaml(buf);
        p->source = file ? POD_SOURCE_FILE : POD_SOURCE_API;
        return p;
}

static const struct admission_node node = {
    .allocatable_cpu_milli = 2000,
    .allocatable_memory = 4LL << 30,
    .max_pods = 110,
};

/* The spec p with what old was allocated. */
static json_t *allocation_of(const struct pod *old)
{
        return alloc_from_pod(old);
}

static void decide(const struct pod *p, const json_t *alloc, struct pod *const *others,
                   const json_t *const *actual, size_t n, struct resize_decision *d)
{
        resize_decide(p, alloc, others, actual, n, &node, d);
}

static void test_nothing_to_do(void **state)
{
        (void)state;
        struct pod *p = pod_req("a", "100m", "64Mi", false, 0, false);
        json_t *alloc = allocation_of(p);
        struct resize_decision d;
        decide(p, alloc, NULL, NULL, 0, &d);
        assert_int_equal(d.outcome, RESIZE_NONE);
        /* no allocation recorded: nothing to compare with */
        decide(p, NULL, NULL, NULL, 0, &d);
        assert_int_equal(d.outcome, RESIZE_NONE);
        json_decref(alloc);
        pod_unref(p);
}

static void test_infeasible(void **state)
{
        (void)state;
        struct pod *old = pod_req("a", "100m", "64Mi", false, 0, false);
        json_t *alloc = allocation_of(old);
        struct resize_decision d;
        /* more cpu than the node has */
        struct pod *p = pod_req("a", "3", "64Mi", false, 0, false);
        decide(p, alloc, NULL, NULL, 0, &d);
        assert_int_equal(d.outcome, RESIZE_INFEASIBLE);
        assert_string_equal(d.reason, "Infeasible");
        assert_string_equal(
            d.message, "Node didn't have enough capacity: cpu, requested: 3000, capacity: 2000");
        pod_unref(p);
        /* memory is looked at first */
        p = pod_req("a", "3", "5Gi", false, 0, false);
        decide(p, alloc, NULL, NULL, 0, &d);
        assert_string_equal(d.message, "Node didn't have enough capacity: memory, requested: "
                                       "5368709120, capacity: 4294967296");
        pod_unref(p);
        /* absurd requests stay absurd (the sums saturate, never wrap) */
        p = test_pod_yaml("apiVersion: v1\nkind: Pod\nmetadata: {name: a, uid: uid-a}\nspec:\n"
                          "  containers:\n"
                          "  - {name: main, image: x, resources: {requests: {memory: 5Ei}}}\n"
                          "  - {name: two, image: x, resources: {requests: {memory: 5Ei}}}\n");
        p->source = POD_SOURCE_API;
        decide(p, alloc, NULL, NULL, 0, &d);
        assert_int_equal(d.outcome, RESIZE_INFEASIBLE);
        assert_non_null(strstr(d.message, "requested: 9223372036854775807"));
        pod_unref(p);
        /* a static pod is never resized */
        struct pod *sold = pod_req("s", "100m", "", false, 0, true);
        json_t *salloc = allocation_of(sold);
        p = pod_req("s", "200m", "", false, 0, true);
        decide(p, salloc, NULL, NULL, 0, &d);
        assert_int_equal(d.outcome, RESIZE_INFEASIBLE);
        assert_string_equal(d.message, "In-place resize of static-pods is not supported");
        pod_unref(p);
        pod_unref(sold);
        json_decref(salloc);
        json_decref(alloc);
        pod_unref(old);
}

/* The others count as they hold the node: their allocation, or what their
 * containers were given when that is more (a decrease not applied yet). */
static void test_deferred_and_allocated(void **state)
{
        (void)state;
        struct pod *old = pod_req("a", "100m", "", false, 0, false);
        json_t *alloc = allocation_of(old);
        struct pod *other = pod_req("b", "1200m", "", false, 0, false);
        struct resize_decision d;
        struct pod *p = pod_req("a", "900m", "", false, 0, false);
        decide(p, alloc, &other, NULL, 1, &d);
        assert_int_equal(d.outcome, RESIZE_DEFERRED);
        assert_string_equal(d.reason, "Deferred");
        assert_string_equal(d.message, "Node didn't have enough resource: cpu, requested: 900, "
                                       "used: 1200, capacity: 2000");
        pod_unref(p);
        p = pod_req("a", "800m", "", false, 0, false);
        decide(p, alloc, &other, NULL, 1, &d);
        assert_int_equal(d.outcome, RESIZE_ALLOCATED);
        assert_null(d.reason);
        /* b was resized down to 1200m but still runs with 1500m */
        json_t *b_actual = json_pack("{s:{s:{s:s}}}", "main", "requests", "cpu", "1500m");
        const json_t *actual[] = {b_actual};
        decide(p, alloc, &other, actual, 1, &d);
        assert_int_equal(d.outcome, RESIZE_DEFERRED);
        assert_string_equal(d.message, "Node didn't have enough resource: cpu, requested: 800, "
                                       "used: 1500, capacity: 2000");
        json_decref(b_actual);
        pod_unref(p);
        pod_unref(other);
        json_decref(alloc);
        pod_unref(old);
}

static void test_order(void **state)
{
        (void)state;
        struct pod *small = pod_req("a", "100m", "", false, 0, false);
        struct pod *big = pod_req("a", "500m", "", false, 0, false);
        struct pod *hi_small = pod_req("h", "100m", "", false, 10, false);
        struct pod *hi_big = pod_req("h", "500m", "", false, 10, false);
        struct pod *g_small = pod_req("g", "100m", "64Mi", true, 0, false);
        struct pod *g_big = pod_req("g", "500m", "64Mi", true, 0, false);
        /* a decrease before any increase, whatever the priority */
        struct resize_candidate down = {small, big, 0}, up_hi = {hi_big, hi_small, 0};
        assert_true(resize_compare(&down, &up_hi) < 0);
        assert_true(resize_compare(&up_hi, &down) > 0);
        /* among increases: priority, then Guaranteed, then the oldest pending */
        struct resize_candidate up = {big, small, 0}, up_g = {g_big, g_small, 0};
        assert_true(resize_compare(&up_hi, &up) < 0);
        assert_true(resize_compare(&up_g, &up) < 0);
        struct resize_candidate older = {big, small, 100}, newer = {big, small, 200},
                                never = {big, small, 0};
        assert_true(resize_compare(&older, &newer) < 0);
        assert_true(resize_compare(&newer, &never) < 0);
        assert_int_equal(resize_compare(&older, &older), 0);
        pod_unref(small);
        pod_unref(big);
        pod_unref(hi_small);
        pod_unref(hi_big);
        pod_unref(g_small);
        pod_unref(g_big);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_nothing_to_do),
            cmocka_unit_test(test_infeasible),
            cmocka_unit_test(test_deferred_and_allocated),
            cmocka_unit_test(test_order),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
