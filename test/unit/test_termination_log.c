/* SPDX-License-Identifier: Apache-2.0 */
/* The termination message a FallbackToLogsOnError container gets from its
 * log (kuberuntime/runtime_status.c, upstream's
 * readLastStringFromContainerLogs): the last 80 lines, of which the last
 * 2048 bytes, from a CRI log or from Docker's json-file log behind a
 * dockershim's symlink. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "kuberuntime/runtime_internal.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct dir {
        char path[32];
};

static int setup(void **state)
{
        struct dir *d = xmalloc(sizeof(*d));
        strcpy(d->path, "/tmp/ck-termlog-XXXXXX");
        assert_non_null(mkdtemp(d->path));
        *state = d;
        return 0;
}

static int teardown(void **state)
{
        struct dir *d = *state;
        cleanup_free char *cmd = xasprintf("rm -rf '%s'", d->path);
        assert_int_equal(system(cmd), 0);
        free(d);
        return 0;
}

static char *write_file(struct dir *d, const char *name, const char *text)
{
        char *path = xasprintf("%s/%s", d->path, name);
        FILE *f = fopen(path, "we");
        assert_non_null(f);
        fputs(text, f);
        assert_int_equal(fclose(f), 0);
        return path;
}

/* 100 CRI lines: the content of the last 80, partial records joined. */
static void test_cri_log_last_80_lines(void **state)
{
        struct dir *d = *state;
        cleanup_free char *text = xstrdup("");
        for (int i = 1; i <= 100; i++) {
                char *t = xasprintf("%s2026-12-03T10:00:00.%09dZ stdout F line %d\n", text, i, i);
                free(text);
                text = t;
        }
        char *t = xasprintf("%s2026-12-03T10:00:01.000000000Z stderr P last \n"
                            "2026-12-03T10:00:01.000000001Z stderr F words\n",
                            text);
        free(text);
        text = t;
        cleanup_free char *path = write_file(d, "0.log", text);
        cleanup_free char *msg = kr_termination_log_tail(path);
        /* 102 lines: the last 80 start at "line 23" */
        assert_true(strncmp(msg, "line 23\nline 24\n", 16) == 0);
        size_t n = strlen(msg);
        assert_true(n > 16);
        assert_string_equal(msg + n - strlen("line 100\nlast words\n"), "line 100\nlast words\n");
        assert_null(strstr(msg, "line 22\n"));
}

/* Docker's json-file log behind a symlink, as ckubelet-dockershim makes the
 * CRI log path. */
static void test_docker_json_log_behind_a_link(void **state)
{
        struct dir *d = *state;
        cleanup_free char *json = write_file(
            d, "engine-json.log",
            "{\"log\":\"starting\\n\",\"stream\":\"stdout\",\"time\":\"2026-12-03T10:00:00.1Z\"}\n"
            "{\"log\":\"last words in the log\\n\",\"stream\":\"stderr\","
            "\"time\":\"2026-12-03T10:00:00.2Z\"}\n");
        cleanup_free char *link = xasprintf("%s/0.log", d->path);
        assert_int_equal(symlink(json, link), 0);
        cleanup_free char *msg = kr_termination_log_tail(link);
        assert_string_equal(msg, "starting\nlast words in the log\n");
}

/* More than 2048 bytes in the last 80 lines: the last 2048. */
static void test_last_2048_bytes(void **state)
{
        struct dir *d = *state;
        char big[3001];
        memset(big, 'x', 3000);
        big[2999] = 'y';
        big[3000] = '\0';
        cleanup_free char *text = xasprintf("2026-12-03T10:00:00.000000000Z stdout F %s\n"
                                            "2026-12-03T10:00:00.000000001Z stdout F end\n",
                                            big);
        cleanup_free char *path = write_file(d, "0.log", text);
        cleanup_free char *msg = kr_termination_log_tail(path);
        assert_int_equal(strlen(msg), 2048);
        assert_string_equal(msg + 2048 - 6, "y\nend\n");
}

static void test_missing_log(void **state)
{
        struct dir *d = *state;
        cleanup_free char *path = xasprintf("%s/none.log", d->path);
        cleanup_free char *msg = kr_termination_log_tail(path);
        const char *want = "Error on reading termination message from logs: ";
        assert_true(strncmp(msg, want, strlen(want)) == 0);
        assert_non_null(strstr(msg, "none.log"));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_cri_log_last_80_lines, setup, teardown),
            cmocka_unit_test_setup_teardown(test_docker_json_log_behind_a_link, setup, teardown),
            cmocka_unit_test_setup_teardown(test_last_2048_bytes, setup, teardown),
            cmocka_unit_test_setup_teardown(test_missing_log, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
