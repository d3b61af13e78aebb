/* SPDX-License-Identifier: Apache-2.0 */
/* resource.Quantity parsing, rounding and canonical form. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "api/api_internal.h"
#include "api/decode.h"
#include "util/cleanup.h"

#include <stdlib.h>
#include <string.h>

struct qcase {
        const char *in;
        int64_t value; /* Value(), rounded up */
        int64_t milli; /* MilliValue(), rounded up */
};

static void test_quantity_values(void **state)
{
        (void)state;
        static const struct qcase cases[] = {
            {"100m", 1, 100},
            {"0.5", 1, 500},
            {"1", 1, 1000},
            {"1.5Gi", 1610612736, 1610612736000},
            {"64Mi", 67108864, 67108864000},
            {"1e3", 1000, 1000000},
            {"1E3", 1000, 1000000},
            {"1k", 1000, 1000000},
            {"1M", 1000000, 1000000000},
            {"1Ki", 1024, 1024000},
            {"1Ei", 1152921504606846976, -1},
            {"-1", -1, -1000},
            {"-0.5", -1, -500},
            {"+2", 2, 2000},
            {"1n", 1, 1},
            {"1u", 1, 1},
            {"1.0001m", 1, 2},
            {"0", 0, 0},
            {"000", 0, 0},
            {"0.0", 0, 0},
            {"0Gi", 0, 0},
            {"1e-3", 1, 1},
            {"12e-1", 2, 1200},
            {"9223372036854775807", INT64_MAX, -1},
            {".5", 1, 500},
            {"5.", 5, 5000},
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                const struct qcase *c = &cases[i];
                cleanup_error ck_error_t err = NULL;
                int64_t v = 0;
                if (api_parse_quantity(c->in, false, &v, &err) < 0)
                        fail_msg("%s: %s", c->in, ck_error_msg(err));
                if (v != c->value)
                        fail_msg("%s: value %lld, want %lld", c->in, (long long)v,
                                 (long long)c->value);
                int r = api_parse_quantity(c->in, true, &v, &err);
                if (c->milli == -1) {
                        if (r == 0)
                                fail_msg("%s: milli value should overflow", c->in);
                        assert_non_null(strstr(ck_error_msg(err), "too large"));
                } else if (r < 0 || v != c->milli) {
                        fail_msg("%s: milli %lld, want %lld (%s)", c->in, (long long)v,
                                 (long long)c->milli, ck_error_msg(err));
                }
        }
}

struct qerr {
        const char *in;
        const char *msg;
};

static void test_quantity_errors(void **state)
{
        (void)state;
        static const char regex[] = "quantities must match the regular expression "
                                    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
        static const struct qerr cases[] = {
            {"abc", regex},
            {"1.2.3", regex},
            {"", regex},
            {"1 ", regex},
            {"1x", regex},
            {"--1", "unable to parse quantity's suffix"},
            {"1ki", "unable to parse quantity's suffix"},
            {"1e", "unable to parse quantity's suffix"},
            {"12345678901234567890Ki", "quantity is too large"},
            {"8Ei", "quantity is too large"},
            {"1e30", "quantity is too large"},
            {"1e999999999", "quantity is too large"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                cleanup_error ck_error_t err = NULL;
                int64_t v = 0;
                if (api_parse_quantity(cases[i].in, false, &v, &err) == 0)
                        fail_msg("%s: parsed as %lld", cases[i].in, (long long)v);
                cleanup_free char *want = NULL;
                if (asprintf(&want, "invalid quantity \"%s\": %s", cases[i].in, cases[i].msg) < 0)
                        fail();
                assert_string_equal(ck_error_msg(err), want);
        }
}

/* What the apiserver stores after SetDefaults_ResourceList. */
static void test_quantity_canonical(void **state)
{
        (void)state;
        static const char *const cases[][2] = {
            {"0.5", "500m"},  {"1.5Gi", "1536Mi"}, {"1000", "1k"},       {"1500", "1500"},
            {"1e3", "1e3"},   {"1.5e3", "1500"},   {"0.5Ki", "512"},     {"1024Ki", "1Mi"},
            {"0.0001", "1m"}, {"100m", "100m"},    {"0", "0"},           {"0Mi", "0"},
            {"64Mi", "64Mi"}, {"1Gi", "1Gi"},      {"1025Ki", "1025Ki"}, {"2000m", "2"},
            {"1M", "1M"},     {"1000k", "1M"},     {"-1.5", "-1500m"},   {"0.1Ki", "102400m"},
            {"1e-3", "1e-3"}, {"3Ki", "3Ki"},      {"1000Ki", "1000Ki"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                struct quantity q;
                cleanup_error ck_error_t err = NULL;
                if (quantity_parse(cases[i][0], &q, &err) < 0)
                        fail_msg("%s: %s", cases[i][0], ck_error_msg(err));
                cleanup_free char *s = quantity_string(&q);
                if (strcmp(s, cases[i][1]) != 0)
                        fail_msg("%s: canonical %s, want %s", cases[i][0], s, cases[i][1]);
        }
}

static void test_quantity_compare(void **state)
{
        (void)state;
        struct quantity a, b;
        assert_int_equal(quantity_parse("1", &a, NULL), 0);
        assert_int_equal(quantity_parse("1000m", &b, NULL), 0);
        assert_int_equal(quantity_cmp(&a, &b), 0);
        assert_int_equal(quantity_parse("1Ki", &b, NULL), 0);
        assert_true(quantity_cmp(&a, &b) < 0);
        assert_int_equal(quantity_parse("-1", &b, NULL), 0);
        assert_true(quantity_cmp(&a, &b) > 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_quantity_values),
            cmocka_unit_test(test_quantity_errors),
            cmocka_unit_test(test_quantity_canonical),
            cmocka_unit_test(test_quantity_compare),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
