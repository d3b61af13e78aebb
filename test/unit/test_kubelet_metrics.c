/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kubelet's own metric families (src/metrics/kubelet_metrics.c): the
 * CRI operation names as upstream's instrumented services record them, and
 * what each record function puts in the rendered /metrics and
 * /metrics/probes text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "metrics/kubelet_metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *render(struct metrics_registry *r)
{
        struct metrics_buf b = {0};
        metrics_render(r, &b);
        return b.data; /* the caller frees */
}

static void assert_has(const char *text, const char *line)
{
        const char *p = text;
        size_t n = strlen(line);
        while ((p = strstr(p, line)) != NULL) {
                if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0'))
                        return;
                p += n;
        }
        fail_msg("no line \"%s\" in:\n%s", line, text);
}

static void test_operation_types(void **state)
{
        (void)state;
        static const char *const cases[][2] = {
            {"Version", "version"},
            {"RunPodSandbox", "run_podsandbox"},
            {"PodSandboxStatus", "podsandbox_status"},
            {"ListPodSandbox", "list_podsandbox"},
            {"ListPodSandboxStats", "list_podsandbox_stats"},
            {"CreateContainer", "create_container"},
            {"ExecSync", "exec_sync"},
            {"PortForward", "port_forward"},
            {"ImageFsInfo", "image_fs_info"},
            {"ReopenContainerLog", "reopen_container_log"},
            {"PullImage", "pull_image"},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char out[64];
                kmetrics_operation_type(cases[i][0], out, sizeof(out));
                if (strcmp(out, cases[i][1]) != 0)
                        fail_msg("%s: \"%s\", want \"%s\"", cases[i][0], out, cases[i][1]);
        }
        char small[8];
        kmetrics_operation_type("ListPodSandboxStats", small, sizeof(small));
        assert_true(strlen(small) < sizeof(small));
}

static void test_records_render(void **state)
{
        (void)state;
        kmetrics_set_node_name("node-1");
        kmetrics_runtime_operation("ListPodSandbox", 0.002, false);
        kmetrics_runtime_operation("ListPodSandbox", 0.004, true);
        kmetrics_pleg_relist(0.01, -1);
        kmetrics_pleg_relist(0.02, 1.0);
        size_t containers[4] = {1, 3, 2, 0};
        kmetrics_set_running(2, containers);
        kmetrics_pod_worker("sync", 0.3);
        kmetrics_rest_request(200, "GET", "127.0.0.1:6443");
        kmetrics_rest_request(0, "PATCH", "127.0.0.1:6443");
        char *text = render(kmetrics_registry());
        assert_non_null(text);
        assert_has(text, "kubelet_node_name{node=\"node-1\"} 1");
        assert_has(text, "kubelet_runtime_operations_total{operation_type=\"list_podsandbox\"} 2");
        assert_has(text,
                   "kubelet_runtime_operations_errors_total{operation_type=\"list_podsandbox\"} 1");
        assert_has(text, "kubelet_runtime_operations_duration_seconds_bucket{operation_type="
                         "\"list_podsandbox\",le=\"0.005\"} 2");
        assert_has(text, "kubelet_pleg_relist_duration_seconds_count 2");
        assert_has(text, "kubelet_pleg_relist_interval_seconds_count 1");
        assert_has(text, "kubelet_running_pods 2");
        assert_has(text, "kubelet_running_containers{container_state=\"running\"} 3");
        assert_has(text, "kubelet_running_containers{container_state=\"unknown\"} 0");
        assert_has(text, "kubelet_pod_worker_duration_seconds_count{operation_type=\"sync\"} 1");
        assert_has(text, "rest_client_requests_total{code=\"200\",host=\"127.0.0.1:6443\","
                         "method=\"GET\"} 1");
        assert_has(text, "rest_client_requests_total{code=\"<error>\",host=\"127.0.0.1:6443\","
                         "method=\"PATCH\"} 1");
        assert_has(text, "# HELP kubelet_running_pods [ALPHA] Number of pods that have a running "
                         "pod sandbox");
        assert_has(text, "# TYPE process_resident_memory_bytes gauge");
        /* the prober's series are not on /metrics */
        assert_null(strstr(text, "prober_probe_total"));
        free(text);
}

static void test_probes_render_and_forget(void **state)
{
        (void)state;
        kmetrics_probe("Readiness", "successful", "c", "p", "ns", "uid-1", 0.01);
        kmetrics_probe("Readiness", "successful", "c", "p", "ns", "uid-1", 0.01);
        kmetrics_probe("Readiness", "failed", "c", "p", "ns", "uid-1", 0.2);
        char *text = render(kmetrics_probes_registry());
        assert_has(text, "prober_probe_total{container=\"c\",namespace=\"ns\",pod=\"p\","
                         "pod_uid=\"uid-1\",probe_type=\"Readiness\",result=\"successful\"} 2");
        assert_has(text, "prober_probe_total{container=\"c\",namespace=\"ns\",pod=\"p\","
                         "pod_uid=\"uid-1\",probe_type=\"Readiness\",result=\"failed\"} 1");
        assert_has(text, "prober_probe_duration_seconds_count{container=\"c\",namespace=\"ns\","
                         "pod=\"p\",probe_type=\"Readiness\"} 3");
        assert_has(text, "# HELP prober_probe_total [BETA] Cumulative number of a liveness, "
                         "readiness or startup probe for a container by result.");
        free(text);
        kmetrics_probe_forget("Readiness", "c", "p", "ns", "uid-1");
        text = render(kmetrics_probes_registry());
        assert_true(text == NULL || strstr(text, "uid-1") == NULL);
        free(text);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_operation_types),
            cmocka_unit_test(test_records_render),
            cmocka_unit_test(test_probes_render_and_forget),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
