/* SPDX-License-Identifier: Apache-2.0 */
/* Container garbage collection's decisions (kuberuntime_container_gc_plan,
 * upstream evictContainers with its GCPolicy) and the removal of the log
 * directories of pods that are gone (kuberuntime_pod_logs_gc). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "kuberuntime/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define S 1000000000LL /* a second in ns */

static const char *removed_ids(const struct container_gc_info *c, size_t n, const bool *rm)
{
        static char buf[256];
        buf[0] = '\0';
        for (size_t i = 0; i < n; i++) {
                if (!rm[i])
                        continue;
                if (buf[0])
                        strcat(buf, ",");
                strcat(buf, c[i].id);
        }
        return buf;
}

/* pod a: container x dead 3 times, one running; container y dead once;
 * pod b: container x dead twice */
static const struct container_gc_info node[] = {
    {"a-x-1", "a", "x", 10 * S, false}, {"a-x-3", "a", "x", 30 * S, false},
    {"a-x-2", "a", "x", 20 * S, false}, {"a-x-4", "a", "x", 40 * S, true},
    {"a-y-1", "a", "y", 15 * S, false}, {"b-x-1", "b", "x", 12 * S, false},
    {"b-x-2", "b", "x", 22 * S, false},
};
#define N (sizeof(node) / sizeof(node[0]))

static void per_container_limit_keeps_the_newest(void **state)
{
        (void)state;
        bool rm[N];
        struct container_gc_policy p = {0, 1, -1};
        assert_int_equal(kuberuntime_container_gc_plan(node, N, &p, 100 * S, rm), 3);
        assert_string_equal(removed_ids(node, N, rm), "a-x-1,a-x-2,b-x-1");
        p.max_per_pod_container = 2;
        assert_int_equal(kuberuntime_container_gc_plan(node, N, &p, 100 * S, rm), 1);
        assert_string_equal(removed_ids(node, N, rm), "a-x-1");
        /* -1: all kept; 0: every dead one goes, never a running one */
        p.max_per_pod_container = -1;
        assert_int_equal(kuberuntime_container_gc_plan(node, N, &p, 100 * S, rm), 0);
        p.max_per_pod_container = 0;
        assert_int_equal(kuberuntime_container_gc_plan(node, N, &p, 100 * S, rm), 6);
        assert_false(rm[3]);
}

static void younger_than_the_minimum_age_is_not_evictable(void **state)
{
        (void)state;
        bool rm[N];
        /* at 35 s with a 10 s minimum: created after 25 s is kept (a-x-3);
         * the evictable instances of a/x are a-x-2 and a-x-1: a-x-1 goes */
        struct container_gc_policy p = {10000, 1, -1};
        assert_int_equal(kuberuntime_container_gc_plan(node, N, &p, 35 * S, rm), 2);
        assert_string_equal(removed_ids(node, N, rm), "a-x-1,b-x-1");
}

static void the_node_limit_cuts_units_then_the_oldest(void **state)
{
        (void)state;
        bool rm[N];
        /* 3 units, limit 2: first 2/3 -> 1 per unit (a-x-3, a-y-1, b-x-2
         * left), then the oldest of those (a-y-1) goes */
        struct container_gc_policy p = {0, -1, 2};
        assert_int_equal(kuberuntime_container_gc_plan(node, N, &p, 100 * S, rm), 4);
        assert_string_equal(removed_ids(node, N, rm), "a-x-1,a-x-2,a-y-1,b-x-1");
        /* limit 6: nothing over it after the per-container limit */
        p = (struct container_gc_policy){0, -1, 6};
        assert_int_equal(kuberuntime_container_gc_plan(node, N, &p, 100 * S, rm), 0);
        /* limit 0: every dead container */
        p = (struct container_gc_policy){0, 1, 0};
        assert_int_equal(kuberuntime_container_gc_plan(node, N, &p, 100 * S, rm), 6);
        /* limit 4 over 3 units: 1 per unit, 3 left, within the limit */
        p = (struct container_gc_policy){0, -1, 4};
        assert_int_equal(kuberuntime_container_gc_plan(node, N, &p, 100 * S, rm), 3);
        assert_string_equal(removed_ids(node, N, rm), "a-x-1,a-x-2,b-x-1");
}

/* ---- log directories ---- */

static char tmp[] = "/tmp/test_container_gc.XXXXXX";

static bool gone_unless_kept(void *ctx, const char *uid)
{
        (void)ctx;
        return strcmp(uid, "uid-kept") != 0;
}

static void make_dir_with_log(const char *dir)
{
        char p[512];
        snprintf(p, sizeof(p), "%s/%s", tmp, dir);
        assert_int_equal(mkdir(p, 0755), 0);
        snprintf(p, sizeof(p), "%s/%s/c", tmp, dir);
        assert_int_equal(mkdir(p, 0755), 0);
        snprintf(p, sizeof(p), "%s/%s/c/0.log", tmp, dir);
        FILE *f = fopen(p, "w");
        assert_non_null(f);
        fputs("log\n", f);
        fclose(f);
}

static bool exists(const char *name)
{
        char p[512];
        struct stat st;
        snprintf(p, sizeof(p), "%s/%s", tmp, name);
        return lstat(p, &st) == 0;
}

static void log_directories_of_pods_that_are_gone(void **state)
{
        (void)state;
        assert_non_null(mkdtemp(tmp));
        make_dir_with_log("default_web_uid-gone");
        make_dir_with_log("kube-system_dns_uid-kept");
        make_dir_with_log("not-a-pod-dir");
        /* a symlink named like a pod's directory is not followed */
        char target[512], link[512];
        snprintf(target, sizeof(target), "%s/not-a-pod-dir", tmp);
        snprintf(link, sizeof(link), "%s/ns_link_uid-gone2", tmp);
        assert_int_equal(symlink(target, link), 0);

        struct kuberuntime_options o = {.pod_logs_dir = tmp};
        struct kuberuntime *rt = kuberuntime_new(&o);
        ck_error_t err = NULL;
        assert_int_equal(kuberuntime_pod_logs_gc(rt, gone_unless_kept, NULL, &err), 0);
        assert_false(exists("default_web_uid-gone"));
        assert_true(exists("kube-system_dns_uid-kept/c/0.log"));
        assert_true(exists("not-a-pod-dir/c/0.log"));
        assert_true(exists("ns_link_uid-gone2"));
        kuberuntime_free(rt);

        /* a pod logs directory that does not exist: nothing to do */
        struct kuberuntime_options none = {.pod_logs_dir = "/nonexistent/ckubelet-logs"};
        rt = kuberuntime_new(&none);
        assert_int_equal(kuberuntime_pod_logs_gc(rt, gone_unless_kept, NULL, &err), 0);
        kuberuntime_free(rt);
        char cmd[600];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
        assert_int_equal(system(cmd), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(per_container_limit_keeps_the_newest),
            cmocka_unit_test(younger_than_the_minimum_age_is_not_evictable),
            cmocka_unit_test(the_node_limit_cuts_units_then_the_oldest),
            cmocka_unit_test(log_directories_of_pods_that_are_gone),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
