/* SPDX-License-Identifier: Apache-2.0 */
/* Graceful node shutdown (nodeshutdown/nodeshutdown.h) as upstream's
 * nodeshutdown_manager_test.go has it: the periods made from the
 * configuration, the groups by priority, each pod's grace period, the
 * period asked of logind; logind's drop-in and the state file; the
 * configuration's fields, their checks and /configz.  (The node's Ready
 * condition while it shuts down: test_node.c.) */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "config/configz.h"
#include "config/kubeletconfig.h"
#include "config/kubeletconfig_internal.h"
#include "nodeshutdown/nodeshutdown.h"
#include "util/cleanup.h"
#include "util/fsutil.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/test_nodeshutdown.XXXXXX";

static int setup(void **state)
{
        (void)state;
        return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
        (void)state;
        ck_error_t err = NULL;
        fs_remove_all(tmpdir, &err);
        ck_error_release(&err);
        return 0;
}

static void periods_from_the_two_durations(void **state)
{
        (void)state;
        struct shutdown_period *p = NULL;
        /* 30s and 10s: 20 s for the others, then 10 s for the critical */
        assert_int_equal(nodeshutdown_periods(30000, 10000, NULL, 0, &p), 2);
        assert_int_equal(p[0].priority, 0);
        assert_int_equal(p[0].grace_s, 20);
        assert_int_equal(p[1].priority, 2000000000);
        assert_int_equal(p[1].grace_s, 10);
        assert_int_equal(nodeshutdown_period_requested(p, 2), 30);
        free(p);
        /* no critical period: all of it for the others */
        assert_int_equal(nodeshutdown_periods(5000, 0, NULL, 0, &p), 2);
        assert_int_equal(p[0].grace_s, 5);
        assert_int_equal(p[1].grace_s, 0);
        free(p);
        /* off: no grace period, or a critical one larger (upstream's
         * migrateConfig returns nothing) */
        assert_int_equal(nodeshutdown_periods(0, 0, NULL, 0, &p), 0);
        assert_null(p);
        assert_int_equal(nodeshutdown_periods(10000, 20000, NULL, 0, &p), 0);
        assert_null(p);
        /* fractions of a second are truncated, as Go's duration / time.Second */
        assert_int_equal(nodeshutdown_periods(2900, 1500, NULL, 0, &p), 2);
        assert_int_equal(p[0].grace_s, 1);
        assert_int_equal(p[1].grace_s, 1);
        free(p);
}

static void periods_by_priority_are_sorted(void **state)
{
        (void)state;
        struct shutdown_period by[] = {{100000, 20}, {0, 5}, {2000000000, 10}, {10, 7}};
        struct shutdown_period *p = NULL;
        /* the list wins over the durations (validation refuses both) */
        assert_int_equal(nodeshutdown_periods(0, 0, by, 4, &p), 4);
        int32_t want[] = {0, 10, 100000, 2000000000};
        for (size_t i = 0; i < 4; i++)
                assert_int_equal(p[i].priority, want[i]);
        assert_int_equal(nodeshutdown_period_requested(p, 4), 42);
        free(p);
}

static void groups_by_priority(void **state)
{
        (void)state;
        /* upstream's Test_groupByPriority periods */
        struct shutdown_period p[] = {{1, 10}, {2, 20}, {1000, 30}, {10000, 40}};
        /* below the first: the first; between: the lower; above all: the last */
        assert_int_equal(nodeshutdown_group_of(p, 4, -5), 0);
        assert_int_equal(nodeshutdown_group_of(p, 4, 0), 0);
        assert_int_equal(nodeshutdown_group_of(p, 4, 1), 0);
        assert_int_equal(nodeshutdown_group_of(p, 4, 2), 1);
        assert_int_equal(nodeshutdown_group_of(p, 4, 999), 1);
        assert_int_equal(nodeshutdown_group_of(p, 4, 1000), 2);
        assert_int_equal(nodeshutdown_group_of(p, 4, 2000000000), 3);
        struct shutdown_period two[] = {{0, 20}, {2000000000, 10}};
        assert_int_equal(nodeshutdown_group_of(two, 2, 0), 0);
        assert_int_equal(nodeshutdown_group_of(two, 2, 1999999999), 0);
        assert_int_equal(nodeshutdown_group_of(two, 2, 2000001000), 1);
        assert_int_equal(nodeshutdown_group_of(two, 1, 2000001000), 0);
        /* equal priorities: the first of them, as sort.Search finds it */
        struct shutdown_period dup[] = {{0, 5}, {100, 10}, {100, 20}};
        assert_int_equal(nodeshutdown_group_of(dup, 3, 100), 1);
        assert_int_equal(nodeshutdown_group_of(dup, 3, 99), 0);
        assert_int_equal(nodeshutdown_group_of(dup, 3, 150), 2);
}

static void a_pods_grace_period(void **state)
{
        (void)state;
        /* the group's, or the pod's own when not larger */
        assert_int_equal(nodeshutdown_pod_grace(20, 30), 20);
        assert_int_equal(nodeshutdown_pod_grace(20, 5), 5);
        assert_int_equal(nodeshutdown_pod_grace(20, 20), 20);
        assert_int_equal(nodeshutdown_pod_grace(20, 0), 0);
        assert_int_equal(nodeshutdown_pod_grace(20, -1), 20);
}

static void the_logind_dropin(void **state)
{
        (void)state;
        cleanup_free char *dir = NULL;
        assert_true(asprintf(&dir, "%s/logind.conf.d", tmpdir) > 0);
        ck_error_t err = NULL;
        assert_int_equal(nodeshutdown_write_logind_dropin(dir, 30, &err), 0);
        cleanup_free char *path = NULL, *text = NULL;
        assert_true(asprintf(&path, "%s/99-kubelet.conf", dir) > 0);
        size_t len;
        assert_int_equal(fs_read_file(path, 4096, &text, &len, &err), 0);
        assert_string_equal(text, "# Kubelet logind override\n[Login]\nInhibitDelayMaxSec=30\n");
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0644);
        /* a file where the directory should be: the error names it */
        cleanup_free char *file = NULL;
        assert_true(asprintf(&file, "%s/a-file", tmpdir) > 0);
        assert_int_equal(fs_write_file_atomic(file, "x", 1, 0644, &err), 0);
        assert_int_equal(nodeshutdown_write_logind_dropin(file, 30, &err), -1);
        assert_non_null(strstr(ck_error_msg(err), "failed creating"));
        ck_error_release(&err);
}

static void the_state_file(void **state)
{
        (void)state;
        cleanup_free char *path = NULL;
        assert_true(asprintf(&path, "%s/graceful_node_shutdown_state", tmpdir) > 0);
        ck_error_t err = NULL;
        int64_t start = -1, end = -1;
        /* none yet: both unset */
        assert_int_equal(nodeshutdown_state_load(path, &start, &end, &err), 0);
        assert_true(start == 0 && end == 0);
        /* a shutdown under way: Go's zero time for the end */
        int64_t t0 = 1764874800123456789LL; /* 2025-12-04T19:00:00.123456789Z */
        assert_int_equal(nodeshutdown_state_store(path, t0, 0, &err), 0);
        cleanup_free char *text = NULL;
        size_t len;
        assert_int_equal(fs_read_file(path, 4096, &text, &len, &err), 0);
        assert_string_equal(text, "{\"startTime\":\"2025-12-04T19:00:00.123456789Z\","
                                  "\"endTime\":\"0001-01-01T00:00:00Z\"}");
        assert_int_equal(nodeshutdown_state_load(path, &start, &end, &err), 0);
        assert_true(start == t0 && end == 0);
        /* done: RFC3339Nano drops the fraction's trailing zeros */
        assert_int_equal(nodeshutdown_state_store(path, t0, t0 + 20376543210LL, &err), 0);
        free(text);
        text = NULL;
        assert_int_equal(fs_read_file(path, 4096, &text, &len, &err), 0);
        assert_string_equal(text, "{\"startTime\":\"2025-12-04T19:00:00.123456789Z\","
                                  "\"endTime\":\"2025-12-04T19:00:20.499999999Z\"}");
        int64_t t1 = 1764874820000000000LL;
        assert_int_equal(nodeshutdown_state_store(path, t1, t1 + 500000000, &err), 0);
        free(text);
        text = NULL;
        assert_int_equal(fs_read_file(path, 4096, &text, &len, &err), 0);
        assert_string_equal(text, "{\"startTime\":\"2025-12-04T19:00:20Z\","
                                  "\"endTime\":\"2025-12-04T19:00:20.5Z\"}");
        assert_int_equal(nodeshutdown_state_load(path, &start, &end, &err), 0);
        assert_true(start == t1 && end == t1 + 500000000);
        /* upstream's file, written in another zone */
        const char *go = "{\"startTime\":\"2025-12-04T20:00:20.25+01:00\",\"endTime\":"
                         "\"0001-01-01T00:00:00Z\"}";
        assert_int_equal(fs_write_file_atomic(path, go, strlen(go), 0644, &err), 0);
        assert_int_equal(nodeshutdown_state_load(path, &start, &end, &err), 0);
        assert_true(start == t1 + 250000000 && end == 0);
        /* not a state: an error naming the file */
        assert_int_equal(fs_write_file_atomic(path, "[1]", 3, 0644, &err), 0);
        assert_int_equal(nodeshutdown_state_load(path, &start, &end, &err), -1);
        assert_non_null(strstr(ck_error_msg(err), path));
        ck_error_release(&err);
        assert_int_equal(fs_write_file_atomic(path, "{\"startTime\":3}", 15, 0644, &err), 0);
        assert_int_equal(nodeshutdown_state_load(path, &start, &end, &err), -1);
        ck_error_release(&err);
}

#define HDR                                                                                        \
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"                  \
        "authentication: {webhook: {enabled: false}, anonymous: {enabled: true}}\n"                \
        "authorization: {mode: AlwaysAllow}\n"

static int load(const char *yaml, struct kubelet_config *c, char **msg)
{
        ck_error_t err = NULL;
        kubelet_config_defaults(c);
        int r = kubelet_config_load_buffer(c, "t.yaml", yaml, strlen(yaml), &err);
        if (r == 0)
                r = kubelet_config_validate(c, &err);
        *msg = err ? strdup(ck_error_msg(err)) : NULL;
        ck_error_release(&err);
        return r;
}

static void the_configuration(void **state)
{
        (void)state;
        struct kubelet_config c;
        char *msg = NULL;
        assert_int_equal(load(HDR "shutdownGracePeriod: 30s\n"
                                  "shutdownGracePeriodCriticalPods: 10s\n",
                              &c, &msg),
                         0);
        assert_int_equal(c.shutdown_grace_period_ms, 30000);
        assert_int_equal(c.shutdown_grace_period_critical_pods_ms, 10000);
        json_t *doc = configz_json(&c);
        json_t *kc = json_object_get(doc, "kubeletconfig");
        assert_string_equal(json_string_value(json_object_get(kc, "shutdownGracePeriod")), "30s");
        assert_string_equal(
            json_string_value(json_object_get(kc, "shutdownGracePeriodCriticalPods")), "10s");
        assert_null(json_object_get(kc, "shutdownGracePeriodByPodPriority"));
        json_decref(doc);
        kubelet_config_release(&c);

        assert_int_equal(load(HDR "shutdownGracePeriodByPodPriority:\n"
                                  "- {priority: 100000, shutdownGracePeriodSeconds: 20}\n"
                                  "- {priority: 0, shutdownGracePeriodSeconds: 5}\n",
                              &c, &msg),
                         0);
        assert_int_equal(c.n_shutdown_by_priority, 2);
        assert_int_equal(c.shutdown_by_priority[0].priority, 100000);
        assert_int_equal(c.shutdown_by_priority[0].shutdown_grace_period_seconds, 20);
        assert_int_equal(c.shutdown_by_priority[1].shutdown_grace_period_seconds, 5);
        struct kubelet_config copy;
        kcfg_copy(&copy, &c);
        kubelet_config_release(&c);
        assert_int_equal(copy.shutdown_by_priority[1].priority, 0);
        doc = configz_json(&copy);
        kc = json_object_get(doc, "kubeletconfig");
        cleanup_free char *list =
            json_dumps(json_object_get(kc, "shutdownGracePeriodByPodPriority"), JSON_COMPACT);
        assert_string_equal(list, "[{\"priority\":100000,\"shutdownGracePeriodSeconds\":20},"
                                  "{\"priority\":0,\"shutdownGracePeriodSeconds\":5}]");
        json_decref(doc);
        kubelet_config_release(&copy);

        /* upstream's validation messages */
        struct {
                const char *yaml, *want;
        } bad[] = {
            {HDR "shutdownGracePeriod: 10s\nshutdownGracePeriodCriticalPods: 20s\n",
             "failed to validate kubelet configuration: invalid configuration: "
             "shutdownGracePeriodCriticalPods 20s must be <= shutdownGracePeriod 10s"},
            {HDR "shutdownGracePeriod: 500ms\n",
             "failed to validate kubelet configuration: invalid configuration: "
             "shutdownGracePeriod 500ms must be either zero or otherwise >= 1 sec"},
            {HDR "shutdownGracePeriod: 10s\nshutdownGracePeriodCriticalPods: 100ms\n",
             "failed to validate kubelet configuration: invalid configuration: "
             "shutdownGracePeriodCriticalPods 100ms must be either zero or otherwise >= 1 sec"},
            {HDR "shutdownGracePeriod: 10s\n"
                 "shutdownGracePeriodByPodPriority: [{priority: 1, shutdownGracePeriodSeconds: "
                 "2}]\n",
             "failed to validate kubelet configuration: invalid configuration: Cannot specify "
             "both shutdownGracePeriodByPodPriority and shutdownGracePeriod at the same time"},
            {HDR "shutdownGracePeriodByPodPriority: {priority: 1}\n",
             "t.yaml: shutdownGracePeriodByPodPriority: expected an array"},
            {HDR "shutdownGracePeriodByPodPriority: [{priority: x}]\n",
             "t.yaml: shutdownGracePeriodByPodPriority.priority: expected an integer"},
            {HDR "shutdownGracePeriodByPodPriority: [{prio: 1}]\n",
             "t.yaml: strict decoding error: unknown field "
             "\"shutdownGracePeriodByPodPriority[0].prio\""},
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                assert_int_equal(load(bad[i].yaml, &c, &msg), -1);
                assert_string_equal(msg, bad[i].want);
                free(msg);
                kubelet_config_release(&c);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(periods_from_the_two_durations),
            cmocka_unit_test(periods_by_priority_are_sorted),
            cmocka_unit_test(groups_by_priority),
            cmocka_unit_test(a_pods_grace_period),
            cmocka_unit_test(the_logind_dropin),
            cmocka_unit_test(the_state_file),
            cmocka_unit_test(the_configuration),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
