/* SPDX-License-Identifier: Apache-2.0 */
/* The legacy container log links (kuberuntime/legacy_logs.c): upstream's
 * names under /var/log/containers (here a temporary directory), made only
 * for a log that exists, removed with the container, dangling ones of
 * containers that are gone or exited collected. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "kuberuntime/runtime_internal.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool live_abc(void *ctx, const char *id_prefix)
{
        (void)ctx;
        return strcmp(id_prefix, "abc123") == 0;
}

static void test_links(void **state)
{
        (void)state;
        char root[] = "/tmp/ck-legacy-XXXXXX";
        assert_non_null(mkdtemp(root));
        cleanup_free char *dir = xasprintf("%s/containers", root);
        cleanup_free char *log = xasprintf("%s/0.log", root);
        struct kuberuntime_options o = {.root_dir = root, .legacy_logs_dir = dir};
        struct kuberuntime *rt = kuberuntime_new(&o);

        /* upstream's name: <pod>_<namespace>_<container>-<id>.log */
        cleanup_free char *link = kuberuntime__legacy_log_link(rt, "abc123", "web", "p", "ns");
        cleanup_free char *want = xasprintf("%s/p_ns_web-abc123.log", dir);
        assert_string_equal(link, want);
        /* cut to 255 bytes, the suffix kept */
        char pod[300];
        memset(pod, 'a', 250);
        pod[250] = '\0';
        cleanup_free char *longl = kuberuntime__legacy_log_link(rt, "abc123", "web", pod, "ns");
        const char *base = strrchr(longl, '/') + 1;
        assert_int_equal(strlen(base), 255);
        assert_string_equal(base + 251, ".log");
        /* a name that is not one path component makes no link */
        assert_null(kuberuntime__legacy_log_link(rt, "abc123", "../x", "p", "ns"));
        assert_null(kuberuntime__legacy_log_link(rt, "abc/123", "web", "p", "ns"));

        /* no log file: no link (it would only dangle) */
        kuberuntime__legacy_log_create(rt, "abc123", "web", "p", "ns", log);
        struct stat st;
        assert_int_equal(lstat(link, &st), -1);
        FILE *f = fopen(log, "w");
        assert_non_null(f);
        fclose(f);
        kuberuntime__legacy_log_create(rt, "abc123", "web", "p", "ns", log);
        char target[512];
        ssize_t n = readlink(link, target, sizeof(target) - 1);
        assert_true(n > 0);
        target[n] = '\0';
        assert_string_equal(target, log);

        /* the garbage collection keeps links to a log, and dangling ones
         * of a container that has not exited (its log is being rotated);
         * it removes the other dangling ones */
        ck_error_t err = NULL;
        assert_int_equal(kuberuntime_legacy_logs_gc(rt, NULL, NULL, &err), 0);
        assert_int_equal(lstat(link, &st), 0);
        unlink(log);
        cleanup_free char *other = xasprintf("%s/keep.txt", dir);
        assert_int_equal(symlink("/nonexistent", other), 0); /* not a .log link */
        assert_int_equal(kuberuntime_legacy_logs_gc(rt, live_abc, NULL, &err), 0);
        assert_int_equal(lstat(link, &st), 0);
        cleanup_free char *short_id = xasprintf("%s/p_ns_web-abc.log", dir);
        assert_int_equal(symlink("/nonexistent", short_id), 0); /* no ID to ask: removed */
        assert_int_equal(kuberuntime_legacy_logs_gc(rt, live_abc, NULL, &err), 0);
        assert_int_equal(lstat(short_id, &st), -1);
        assert_int_equal(kuberuntime_legacy_logs_gc(rt, NULL, NULL, &err), 0);
        assert_int_equal(lstat(link, &st), -1);
        assert_int_equal(lstat(other, &st), 0);

        /* removal with the container */
        f = fopen(log, "w");
        assert_non_null(f);
        fclose(f);
        kuberuntime__legacy_log_create(rt, "abc123", "web", "p", "ns", log);
        assert_int_equal(lstat(link, &st), 0);
        kuberuntime__legacy_log_remove(rt, "abc123", "web", "p", "ns");
        assert_int_equal(lstat(link, &st), -1);
        kuberuntime_free(rt);
        assert_int_equal(fs_remove_all(root, &err), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_links),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
