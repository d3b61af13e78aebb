/* SPDX-License-Identifier: Apache-2.0 */
/* The node constraints of admission (kubelet/node_affinity.c) against
 * upstream's semantics (component-helpers nodeaffinity and
 * Toleration.ToleratesTaint), and the admission's reasons and order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "api/pod.h"
#include "kubelet/admission.h"
#include "kubelet/node_affinity.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *parse(const char *text)
{
        json_error_t e;
        json_t *j = json_loads(text, 0, &e);
        if (j == NULL)
                fail_msg("bad test JSON %s: %s", text, e.text);
        return j;
}

static const char node_labels[] = "{\"kubernetes.io/hostname\": \"n1\", \"disk\": \"ssd\", "
                                  "\"zone\": \"a\", \"cores\": \"8\"}";

static void test_affinity_table(void **state)
{
        (void)state;
        static const struct {
                const char *spec;
                bool match;
        } cases[] = {
            {"{}", true},
            {"{\"nodeSelector\": {\"disk\": \"ssd\"}}", true},
            {"{\"nodeSelector\": {\"disk\": \"hdd\"}}", false},
            {"{\"nodeSelector\": {\"gpu\": \"yes\"}}", false},
            {"{\"nodeSelector\": {\"disk\": \"ssd\", \"zone\": \"b\"}}", false},
#define REQ(terms)                                                                                 \
        "{\"affinity\": {\"nodeAffinity\": {\"requiredDuringSchedulingIgnoredDuringExecution\": "  \
        "{\"nodeSelectorTerms\": " terms "}}}}"
#define EXPR(key, op, values)                                                                      \
        "{\"key\": \"" key "\", \"operator\": \"" op "\", \"values\": " values "}"
            {REQ("[{\"matchExpressions\": [" EXPR("disk", "In", "[\"ssd\", \"nvme\"]") "]}]"),
             true},
            {REQ("[{\"matchExpressions\": [" EXPR("disk", "In", "[\"nvme\"]") "]}]"), false},
            {REQ("[{\"matchExpressions\": [" EXPR("disk", "NotIn", "[\"hdd\"]") "]}]"), true},
            {REQ("[{\"matchExpressions\": [" EXPR("gpu", "NotIn", "[\"x\"]") "]}]"), true},
            {REQ("[{\"matchExpressions\": [" EXPR("disk", "NotIn", "[\"ssd\"]") "]}]"), false},
            {REQ("[{\"matchExpressions\": [" EXPR("zone", "Exists", "[]") "]}]"), true},
            {REQ("[{\"matchExpressions\": [" EXPR("gpu", "Exists", "[]") "]}]"), false},
            {REQ("[{\"matchExpressions\": [" EXPR("gpu", "DoesNotExist", "[]") "]}]"), true},
            {REQ("[{\"matchExpressions\": [" EXPR("cores", "Gt", "[\"4\"]") "]}]"), true},
            {REQ("[{\"matchExpressions\": [" EXPR("cores", "Lt", "[\"4\"]") "]}]"), false},
            {REQ("[{\"matchExpressions\": [" EXPR("zone", "Gt", "[\"4\"]") "]}]"), false},
            /* terms are ORed, expressions ANDed */
            {REQ("[{\"matchExpressions\": [" EXPR(
                 "disk", "In", "[\"hdd\"]") "]}, "
                                            "{\"matchExpressions\": [" EXPR("zone", "In",
                                                                            "[\"a\"]") "]}]"),
             true},
            {REQ("[{\"matchExpressions\": [" EXPR("disk", "In", "[\"ssd\"]") ", " EXPR(
                 "zone", "In", "[\"b\"]") "]}]"),
             false},
            /* an empty term, no term: nothing */
            {REQ("[{}]"), false},
            {REQ("[]"), false},
            /* matchFields: metadata.name only */
            {REQ("[{\"matchFields\": [" EXPR("metadata.name", "In", "[\"n1\"]") "]}]"), true},
            {REQ("[{\"matchFields\": [" EXPR("metadata.name", "NotIn", "[\"n1\"]") "]}]"), false},
            {REQ("[{\"matchFields\": [" EXPR("metadata.uid", "In", "[\"n1\"]") "]}]"), false},
            /* the selector and the affinity both count */
            {"{\"nodeSelector\": {\"disk\": \"hdd\"}, \"affinity\": {\"nodeAffinity\": "
             "{\"requiredDuringSchedulingIgnoredDuringExecution\": {\"nodeSelectorTerms\": "
             "[{\"matchExpressions\": [" EXPR("zone", "In", "[\"a\"]") "]}]}}}}",
             false},
            /* preferred terms do not */
            {"{\"affinity\": {\"nodeAffinity\": "
             "{\"preferredDuringSchedulingIgnoredDuringExecution\": "
             "[{\"weight\": 1, \"preference\": {\"matchExpressions\": [" EXPR("gpu", "Exists",
                                                                              "[]") "]}}]}}}",
             true},
        };
        json_t *labels = parse(node_labels);
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                json_t *spec = parse(cases[i].spec);
                bool got = node_affinity_match(spec, labels, "n1");
                if (got != cases[i].match)
                        fail_msg("case %zu %s: got %d, want %d", i, cases[i].spec, got,
                                 cases[i].match);
                json_decref(spec);
        }
        json_decref(labels);
}

static void test_taints_table(void **state)
{
        (void)state;
        static const struct {
                const char *tolerations, *taints;
                bool tolerated;
        } cases[] = {
            {"[]", "[]", true},
            /* only NoExecute counts at admission */
            {"[]", "[{\"key\": \"k\", \"effect\": \"NoSchedule\"}]", true},
            {"[]", "[{\"key\": \"k\", \"value\": \"v\", \"effect\": \"NoExecute\"}]", false},
            {"[{\"key\": \"k\", \"operator\": \"Equal\", \"value\": \"v\"}]",
             "[{\"key\": \"k\", \"value\": \"v\", \"effect\": \"NoExecute\"}]", true},
            {"[{\"key\": \"k\", \"value\": \"v\"}]",
             "[{\"key\": \"k\", \"value\": \"v\", \"effect\": \"NoExecute\"}]", true},
            {"[{\"key\": \"k\", \"value\": \"w\"}]",
             "[{\"key\": \"k\", \"value\": \"v\", \"effect\": \"NoExecute\"}]", false},
            {"[{\"key\": \"k\", \"operator\": \"Exists\"}]",
             "[{\"key\": \"k\", \"value\": \"v\", \"effect\": \"NoExecute\"}]", true},
            {"[{\"operator\": \"Exists\"}]",
             "[{\"key\": \"k\", \"value\": \"v\", \"effect\": \"NoExecute\"}]", true},
            {"[{\"key\": \"k\", \"operator\": \"Exists\", \"effect\": \"NoSchedule\"}]",
             "[{\"key\": \"k\", \"effect\": \"NoExecute\"}]", false},
            {"[{\"key\": \"k\", \"operator\": \"Exists\", \"effect\": \"NoExecute\"}]",
             "[{\"key\": \"k\", \"effect\": \"NoExecute\"}]", true},
            /* every NoExecute taint must be tolerated */
            {"[{\"key\": \"a\", \"operator\": \"Exists\"}]",
             "[{\"key\": \"a\", \"effect\": \"NoExecute\"}, {\"key\": \"b\", \"effect\": "
             "\"NoExecute\"}]",
             false},
            /* Gt/Lt: the alpha gate is off */
            {"[{\"key\": \"k\", \"operator\": \"Gt\", \"value\": \"1\"}]",
             "[{\"key\": \"k\", \"value\": \"5\", \"effect\": \"NoExecute\"}]", false},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char text[1024];
                snprintf(text, sizeof(text), "{\"tolerations\": %s}", cases[i].tolerations);
                json_t *spec = parse(text);
                json_t *taints = parse(cases[i].taints);
                bool got = node_taints_tolerated(spec, taints);
                if (got != cases[i].tolerated)
                        fail_msg("case %zu: %s / %s: got %d", i, cases[i].tolerations,
                                 cases[i].taints, got);
                json_decref(spec);
                json_decref(taints);
        }
}

/* The admission's reasons and messages, in upstream's order: resources
 * before NodeAffinity, NodeAffinity before NodePorts, taints last and not
 * for static pods. */
static void test_admission_reasons(void **state)
{
        (void)state;
        json_t *labels = parse(node_labels);
        json_t *taints = parse("[{\"key\": \"dedicated\", \"value\": \"x\", \"effect\": "
                               "\"NoExecute\"}]");
        struct admission_node node = {.allocatable_cpu_milli = 1000,
                                      .allocatable_memory = 1 << 30,
                                      .max_pods = 10,
                                      .apparmor_enabled = true,
                                      .name = "n1",
                                      .labels = labels};
        struct container c = {.name = "a"};
        struct pod pod = {.name = "p",
                          .namespace = "default",
                          .uid = "u1",
                          .containers = &c,
                          .n_containers = 1,
                          .source = POD_SOURCE_API};
        pod.raw = parse("{\"spec\": {\"nodeSelector\": {\"disk\": \"hdd\"}}}");
        struct admission_result ar;
        admission_check(&pod, NULL, 0, &node, &ar);
        assert_false(ar.admit);
        assert_string_equal(ar.reason, "NodeAffinity");
        assert_string_equal(ar.message, "Predicate NodeAffinity failed: node(s) didn't match "
                                        "Pod's node affinity/selector");
        /* resources come first */
        c.resources.requests.has_cpu = true;
        c.resources.requests.cpu_milli = 2000;
        admission_check(&pod, NULL, 0, &node, &ar);
        assert_string_equal(ar.reason, "OutOfcpu");
        c.resources.requests.has_cpu = false;
        c.resources.requests.cpu_milli = 0;
        json_decref(pod.raw);

        /* a NoExecute taint: refused, tolerated, or a static pod */
        node.taints = taints;
        pod.raw = parse("{\"spec\": {\"nodeSelector\": {\"disk\": \"ssd\"}}}");
        admission_check(&pod, NULL, 0, &node, &ar);
        assert_false(ar.admit);
        assert_string_equal(ar.reason, "TaintToleration");
        assert_string_equal(ar.message, "Predicate TaintToleration failed: node(s) had taints "
                                        "that the pod didn't tolerate");
        json_decref(pod.raw);
        pod.raw = parse("{\"spec\": {\"tolerations\": [{\"key\": \"dedicated\", \"operator\": "
                        "\"Exists\"}]}}");
        admission_check(&pod, NULL, 0, &node, &ar);
        assert_true(ar.admit);
        json_decref(pod.raw);
        pod.raw = parse("{\"spec\": {}}");
        struct kv a = {.key = "kubernetes.io/config.source", .value = "file"};
        pod.annotations.items = &a;
        pod.annotations.n = 1;
        admission_check(&pod, NULL, 0, &node, &ar);
        assert_true(ar.admit);
        json_decref(pod.raw);
        json_decref(labels);
        json_decref(taints);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_affinity_table),
            cmocka_unit_test(test_taints_table),
            cmocka_unit_test(test_admission_reasons),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
