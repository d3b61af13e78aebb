/* SPDX-License-Identifier: Apache-2.0 */
/* klog text format: what an operator's log tooling parses. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "util/log.h"

#include <regex.h>
#include <string.h>
#include <unistd.h>

static int fds[2];

static int setup(void **state)
{
        (void)state;
        if (pipe(fds) < 0)
                return -1;
        log_set_fd(fds[1]);
        return 0;
}

static int teardown(void **state)
{
        (void)state;
        log_set_fd(2);
        close(fds[0]);
        close(fds[1]);
        log_set_verbosity(0);
        return 0;
}

static char *read_line(char *buf, size_t n)
{
        ssize_t r = read(fds[0], buf, n - 1);
        assert_true(r > 0);
        buf[r] = '\0';
        return buf;
}

static void test_line_layout(void **state)
{
        (void)state;
        char buf[1024];
        LOG_INFO(0, "SyncLoop ADD", "source=\"file\" pods=[\"%s\"] n=%d size=%zu took=%.1f",
                 "default/web", 42, (size_t)7, 1.25);
        read_line(buf, sizeof(buf));
        regex_t re;
        assert_int_equal(regcomp(&re,
                                 "^I[0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6} +[0-9]+ "
                                 "test_log\\.c:[0-9]+\\] \"SyncLoop ADD\" source=\"file\" "
                                 "pods=\\[\"default/web\"\\] n=42 size=7 took=1\\.2\n$",
                                 REG_EXTENDED),
                         0);
        int m = regexec(&re, buf, 0, NULL, 0);
        regfree(&re);
        if (m != 0)
                fail_msg("line does not match klog's layout: %s", buf);
}

static void test_quoted_values_are_escaped(void **state)
{
        (void)state;
        char buf[1024];
        LOG_ERROR("Error syncing pod", "err=\"%s\" pod=\"%s\"",
                  "rpc error 2: failed to \"create\"\nline two", "ns/p");
        read_line(buf, sizeof(buf));
        const char *tail = strstr(buf, "] ");
        assert_non_null(tail);
        assert_string_equal(tail, "] \"Error syncing pod\" err=\"rpc error 2: failed to "
                                  "\\\"create\\\"\\nline two\" pod=\"ns/p\"\n");
        assert_int_equal(buf[0], 'E');
}

static void test_verbosity_gates_info(void **state)
{
        (void)state;
        char buf[256];
        log_set_verbosity(2);
        LOG_INFO(3, "hidden");
        LOG_INFO(2, "shown");
        read_line(buf, sizeof(buf));
        assert_non_null(strstr(buf, "\"shown\""));
        assert_null(strstr(buf, "hidden"));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_line_layout),
            cmocka_unit_test(test_quoted_values_are_escaped),
            cmocka_unit_test(test_verbosity_gates_info),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
