/* SPDX-License-Identifier: Apache-2.0 */
/* $(VAR) expansion (expansion_expand) against the cases of upstream's
 * third_party/forked/golang/expansion/expand_test.go. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "expansion/expansion.h"

#include <stdlib.h>
#include <string.h>

static struct kv vars_items[] = {
    {"VAR_A", "A"}, {"VAR_B", "B"}, {"VAR_C", "C"}, {"VAR_REF", "$(VAR_A)"}, {"VAR_EMPTY", ""},
};
static const struct kv_list vars = {vars_items, sizeof(vars_items) / sizeof(vars_items[0])};

struct expand_case {
        const char *name, *input, *expected;
};

static const struct expand_case cases[] = {
    {"whole string", "$(VAR_A)", "A"},
    {"repeat", "$(VAR_A)-$(VAR_A)", "A-A"},
    {"beginning", "$(VAR_A)-1", "A-1"},
    {"middle", "___$(VAR_B)___", "___B___"},
    {"end", "___$(VAR_C)", "___C"},
    {"compound", "$(VAR_A)_$(VAR_B)_$(VAR_C)", "A_B_C"},
    {"escape & expand", "$$(VAR_B)_$(VAR_A)", "$(VAR_B)_A"},
    {"compound escape", "$$(VAR_A)_$$(VAR_B)", "$(VAR_A)_$(VAR_B)"},
    {"mixed in escapes", "f000-$$VAR_A", "f000-$VAR_A"},
    {"backslash escape ignored", "foo\\$(VAR_C)bar", "foo\\Cbar"},
    {"backslash escape ignored 2", "foo\\\\$(VAR_C)bar", "foo\\\\Cbar"},
    {"lots of backslashes", "foo\\\\\\\\$(VAR_A)bar", "foo\\\\\\\\Abar"},
    {"nested var references", "$(VAR_A$(VAR_B))", "$(VAR_A$(VAR_B))"},
    {"nested var references second type", "$(VAR_A$(VAR_B)", "$(VAR_A$(VAR_B)"},
    {"value is a reference", "$(VAR_REF)", "$(VAR_A)"},
    {"value is a reference x 2", "%%$(VAR_REF)--$(VAR_REF)%%", "%%$(VAR_A)--$(VAR_A)%%"},
    {"empty var", "foo$(VAR_EMPTY)bar", "foobar"},
    {"unterminated expression", "foo$(VAR_Awhoops!", "foo$(VAR_Awhoops!"},
    {"expression without operator", "f00__(VAR_A)__", "f00__(VAR_A)__"},
    {"shell special vars pass through", "$?_boo_$!", "$?_boo_$!"},
    {"bare operators are ignored", "$VAR_A", "$VAR_A"},
    {"undefined vars are passed through", "$(VAR_DNE)", "$(VAR_DNE)"},
    {"multiple (even) operators, var undefined", "$$$$$$(BIG_MONEY)", "$$$(BIG_MONEY)"},
    {"multiple (even) operators, var defined", "$$$$$$(VAR_A)", "$$$(VAR_A)"},
    {"multiple (odd) operators, var undefined", "$$$$$$$(GOOD_ODDS)", "$$$$(GOOD_ODDS)"},
    {"multiple (odd) operators, var defined", "$$$$$$$(VAR_A)", "$$$A"},
    {"missing open expression", "$VAR_A)", "$VAR_A)"},
    {"shell syntax ignored", "${VAR_A}", "${VAR_A}"},
    {"trailing incomplete expression not consumed", "$(VAR_B)_______$(A", "B_______$(A"},
    {"trailing incomplete expression, no content, is not consumed", "$(VAR_C)_______$(",
     "C_______$("},
    {"operator at end of input string is preserved", "$(VAR_A)foobarzab$", "Afoobarzab$"},
    {"shell escaped incomplete expr", "foo-\\$(VAR_A", "foo-\\$(VAR_A"},
    {"lots of $( in middle", "--$($($($($--", "--$($($($($--"},
    {"lots of $( in beginning", "$($($($($--foo$(", "$($($($($--foo$("},
    {"lots of $( at end", "foo0--$($($($(", "foo0--$($($($("},
    {"escaped operators in variable names are not escaped", "$(foo$$var)", "$(foo$$var)"},
    {"newline not expanded", "\n", "\n"},
    /* beyond upstream's table */
    {"empty input", "", ""},
    {"lone operator", "$", "$"},
    {"empty name is unknown", "$()", "$()"},
    {"incomplete then complete reference", "$(A $(VAR_B)", "$(A $(VAR_B)"},
};

static void test_upstream_expansion_table(void **state)
{
        (void)state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char *got = expansion_expand(cases[i].input, &vars);
                if (strcmp(got, cases[i].expected) != 0)
                        fail_msg("%s: input \"%s\": expected \"%s\", got \"%s\"", cases[i].name,
                                 cases[i].input, cases[i].expected, got);
                free(got);
        }
}

/* upstream TestMapReference: each value may use the ones declared before. */
static void test_values_reference_earlier_values(void **state)
{
        (void)state;
        struct kv_list env = {0};
        const char *names[] = {"FOO", "ZOO", "BLU"};
        const char *values[] = {"bar", "$(FOO)-1", "$(ZOO)-2"};
        for (size_t i = 0; i < 3; i++) {
                char *v = expansion_expand(values[i], &env);
                kv_list_add(&env, names[i], v);
                free(v);
        }
        assert_string_equal(kv_list_get(&env, "FOO"), "bar");
        assert_string_equal(kv_list_get(&env, "ZOO"), "bar-1");
        assert_string_equal(kv_list_get(&env, "BLU"), "bar-1-2");
        kv_list_release(&env);
}

static void test_later_duplicate_wins_and_no_vars(void **state)
{
        (void)state;
        struct kv items[] = {{"X", "first"}, {"X", "second"}};
        struct kv_list l = {items, 2};
        char *got = expansion_expand("$(X)", &l);
        assert_string_equal(got, "second");
        free(got);
        got = expansion_expand("a$(X)b", NULL);
        assert_string_equal(got, "a$(X)b");
        free(got);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_upstream_expansion_table),
            cmocka_unit_test(test_values_reference_earlier_values),
            cmocka_unit_test(test_later_duplicate_wins_and_no_vars),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
