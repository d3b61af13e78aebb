/* SPDX-License-Identifier: Apache-2.0 */
/* Go's %q, as upstream's messages quote values. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "util/strquote.h"

#include <stdlib.h>
#include <string.h>

static void check(const char *in, size_t n, const char *want)
{
        char *got = str_go_quote(in, n);
        assert_string_equal(got, want);
        free(got);
}

static void test_go_quote(void **state)
{
        (void)state;
        check("", 0, "\"\"");
        check("abc", 3, "\"abc\"");
        check("say \"hi\"\n", 9, "\"say \\\"hi\\\"\\n\"");
        check("a\\b\tc", 5, "\"a\\\\b\\tc\"");
        check("\x01\x7f", 2, "\"\\x01\\x7f\"");
        check("nul\0byte", 8, "\"nul\\x00byte\"");
        check("caf\xc3\xa9", 5, "\"caf\xc3\xa9\""); /* UTF-8 kept */
}

int main(void)
{
        const struct CMUnitTest tests[] = {cmocka_unit_test(test_go_quote)};
        return cmocka_run_group_tests(tests, NULL, NULL);
}
