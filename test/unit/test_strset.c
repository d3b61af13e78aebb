/* SPDX-License-Identifier: Apache-2.0 */
/* The string set: add, contains, retain. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "util/strset.h"

#include <stdio.h>

static void test_add_contains_retain(void **state)
{
        (void)state;
        struct strset *s = strset_new();
        assert_false(strset_contains(s, "a"));
        char key[16];
        for (int i = 99; i >= 0; i--) {
                snprintf(key, sizeof(key), "uid-%02d", i);
                assert_true(strset_add(s, key));
        }
        assert_false(strset_add(s, "uid-42"));
        for (int i = 0; i < 100; i++) {
                snprintf(key, sizeof(key), "uid-%02d", i);
                assert_true(strset_contains(s, key));
        }
        assert_false(strset_contains(s, "uid-100"));
        const char *keep[] = {"uid-07", "uid-93", "not-there"};
        strset_retain(s, keep, 3);
        assert_true(strset_contains(s, "uid-07"));
        assert_true(strset_contains(s, "uid-93"));
        assert_false(strset_contains(s, "uid-42"));
        assert_false(strset_contains(s, "not-there"));
        assert_true(strset_add(s, "uid-42"));
        assert_true(strset_contains(s, "uid-42"));
        strset_free(s);
        strset_free(NULL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_add_contains_retain),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
