/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pod status patch: what the new status no longer has is removed in the
 * apiserver (a condition's reason once the pod is Ready, a container's
 * waiting state once it runs, a condition that is gone), and the rest is
 * the new status.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "kubelet/status_patch.h"
#include "util/cleanup.h"

static json_t *parse(const char *text)
{
        json_error_t e;
        json_t *j = json_loads(text, 0, &e);
        if (j == NULL)
                fail_msg("bad JSON in test: %s: %s", e.text, text);
        return j;
}

static void assert_patch(const char *old, const char *new_status, const char *want)
{
        cleanup_json json_t *o = old ? parse(old) : NULL;
        cleanup_json json_t *n = parse(new_status);
        cleanup_json json_t *w = parse(want);
        cleanup_json json_t *got = status_patch_build(o, n);
        if (!json_equal(got, w)) {
                char *g = json_dumps(got, JSON_SORT_KEYS);
                fail_msg("patch %s, want %s", g, want);
        }
}

static void test_no_old_status_sends_the_new_one(void **state)
{
        (void)state;
        assert_patch(NULL, "{\"phase\":\"Pending\"}", "{\"phase\":\"Pending\"}");
}

static void test_a_condition_loses_its_reason_when_ready(void **state)
{
        (void)state;
        assert_patch("{\"phase\":\"Running\",\"conditions\":["
                     "{\"type\":\"PodScheduled\",\"status\":\"True\"},"
                     "{\"type\":\"Ready\",\"status\":\"False\",\"reason\":\"ContainersNotReady\","
                     "\"message\":\"containers with unready status: [main]\"}]}",
                     "{\"phase\":\"Running\",\"conditions\":["
                     "{\"type\":\"Ready\",\"status\":\"True\"}]}",
                     "{\"phase\":\"Running\",\"conditions\":["
                     "{\"type\":\"Ready\",\"status\":\"True\",\"reason\":null,\"message\":null},"
                     "{\"$patch\":\"delete\",\"type\":\"PodScheduled\"}]}");
}

/* A readiness gate's condition belongs to its controller: our copy of it is
 * not sent (it may be stale), and its absence from ours deletes nothing. */
static void test_conditions_of_other_writers_are_left_alone(void **state)
{
        (void)state;
        assert_patch("{\"conditions\":[{\"type\":\"example.com/gate\",\"status\":\"False\"},"
                     "{\"type\":\"DisruptionTarget\",\"status\":\"True\"}]}",
                     "{\"conditions\":[{\"type\":\"example.com/gate\",\"status\":\"True\"},"
                     "{\"type\":\"Ready\",\"status\":\"True\"}]}",
                     "{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}");
}

/* An eviction's DisruptionTarget (upstream: a condition shared by the
 * kubelet) is sent, replacing the apiserver's; the same one again is not. */
static void test_the_kubelets_disruption_target_is_sent(void **state)
{
        (void)state;
        assert_patch("{\"phase\":\"Running\",\"conditions\":["
                     "{\"type\":\"Ready\",\"status\":\"True\"}]}",
                     "{\"phase\":\"Failed\",\"conditions\":["
                     "{\"type\":\"Ready\",\"status\":\"True\"},"
                     "{\"type\":\"DisruptionTarget\",\"status\":\"True\","
                     "\"reason\":\"TerminationByKubelet\"}]}",
                     "{\"phase\":\"Failed\",\"conditions\":[{\"type\":\"Ready\",\"status\":"
                     "\"True\"},{\"type\":\"DisruptionTarget\",\"status\":\"True\","
                     "\"reason\":\"TerminationByKubelet\"}]}");
        assert_patch("{\"conditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\","
                     "\"reason\":\"TerminationByKubelet\"}]}",
                     "{\"conditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\","
                     "\"reason\":\"TerminationByKubelet\"}]}",
                     "{\"conditions\":[]}");
}

/* The container status lists have no patch strategy: replaced whole, so a
 * container that runs no longer shows its old waiting state. */
static void test_container_statuses_are_replaced_whole(void **state)
{
        (void)state;
        assert_patch("{\"containerStatuses\":[{\"name\":\"main\",\"ready\":false,"
                     "\"state\":{\"waiting\":{\"reason\":\"ContainerCreating\"}}},"
                     "{\"name\":\"old\",\"ready\":false}]}",
                     "{\"containerStatuses\":[{\"name\":\"main\",\"ready\":true,"
                     "\"state\":{\"running\":{\"startedAt\":\"2026-11-30T03:00:00Z\"}}}]}",
                     "{\"containerStatuses\":[{\"name\":\"main\",\"ready\":true,"
                     "\"state\":{\"running\":{\"startedAt\":\"2026-11-30T03:00:00Z\"}}}]}");
}

/* podIPs merge by ip; the kubelet's scalars are replaced or removed; fields
 * of other writers (the scheduler's nominatedNodeName, DRA's claim
 * statuses) are neither. */
static void test_ips_and_fields_of_other_writers(void **state)
{
        (void)state;
        assert_patch(
            "{\"podIPs\":[{\"ip\":\"10.0.0.1\"}],\"podIP\":\"10.0.0.1\","
            "\"message\":\"evicted\",\"nominatedNodeName\":\"n\","
            "\"resourceClaimStatuses\":[{\"name\":\"gpu\"}]}",
            "{\"podIPs\":[{\"ip\":\"10.0.0.2\"}],\"podIP\":\"10.0.0.2\"}",
            "{\"podIPs\":[{\"ip\":\"10.0.0.2\"},{\"$patch\":\"delete\",\"ip\":\"10.0.0.1\"}],"
            "\"podIP\":\"10.0.0.2\",\"message\":null}");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_no_old_status_sends_the_new_one),
            cmocka_unit_test(test_a_condition_loses_its_reason_when_ready),
            cmocka_unit_test(test_conditions_of_other_writers_are_left_alone),
            cmocka_unit_test(test_the_kubelets_disruption_target_is_sent),
            cmocka_unit_test(test_container_statuses_are_replaced_whole),
            cmocka_unit_test(test_ips_and_fields_of_other_writers),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
