/* SPDX-License-Identifier: Apache-2.0 */
/* Base64 decoding (util/base64.h) against what Go's base64.StdEncoding and
 * RawStdEncoding accept and produce. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "util/base64.h"

#include <stdlib.h>
#include <string.h>

/* Decodes s with flags and checks the bytes (and the terminating NUL). */
static void assert_decodes(const char *s, unsigned flags, const char *want, size_t want_len)
{
        char *out = NULL;
        size_t n = 99;
        ck_error_t err = NULL;
        if (base64_decode(s, strlen(s), flags, &out, &n, &err) < 0)
                fail_msg("`%s` (flags %u): %s", s, flags, ck_error_msg(err));
        assert_null(err);
        assert_int_equal(n, want_len);
        assert_memory_equal(out, want, want_len);
        assert_int_equal(out[n], '\0');
        free(out);
}

static void assert_rejects(const char *s, unsigned flags)
{
        char *out = (char *)"untouched";
        size_t n = 99;
        ck_error_t err = NULL;
        if (base64_decode(s, strlen(s), flags, &out, &n, &err) == 0)
                fail_msg("`%s` (flags %u) decoded to %zu bytes", s, flags, n);
        assert_string_equal(ck_error_msg(err), "illegal base64 data");
        assert_string_equal(out, "untouched");
        assert_int_equal(n, 99);
        ck_error_release(&err);
}

static void test_padded(void **state)
{
        (void)state;
        assert_decodes("", 0, "", 0);
        assert_decodes("YQ==", 0, "a", 1);
        assert_decodes("aGk=", 0, "hi", 2);
        assert_decodes("aGVsbG8=", 0, "hello", 5);
        assert_decodes("YWxpY2U6czNjcjpldA==", 0, "alice:s3cr:et", 13);
        /* all 64 characters of the alphabet */
        assert_decodes("+/+/", 0, "\xfb\xff\xbf", 3);
        assert_decodes("AAEC/w==", 0, "\x00\x01\x02\xff", 4);
}

static void test_line_breaks_are_skipped(void **state)
{
        (void)state;
        assert_decodes("aGVs\nbG8=\n", 0, "hello", 5);
        assert_decodes("\r\naG\r\nk=", 0, "hi", 2);
        assert_decodes("YQ=\n=", 0, "a", 1); /* even between the '=' */
        assert_decodes("YQ==\r\n\r\n", 0, "a", 1);
}

static void test_padded_rejects(void **state)
{
        (void)state;
        assert_rejects("YQ", 0);        /* padding missing */
        assert_rejects("aGk", 0);       /* padding missing */
        assert_rejects("YQ=", 0);       /* half the padding */
        assert_rejects("Y===", 0);      /* one character is not a byte */
        assert_rejects("====", 0);      /* nothing but padding */
        assert_rejects("YQ=a", 0);      /* data inside the padding */
        assert_rejects("YQ==YQ==", 0);  /* data after the padding */
        assert_rejects("aGk==", 0);     /* too much padding */
        assert_rejects("aGVsbG8=x", 0); /* data after the padding */
        assert_rejects("aG k=", 0);     /* a space is not skipped */
        assert_rejects("aG\tk=", 0);
        assert_rejects("aG-k", 0); /* URL alphabet */
        assert_rejects("aG_k", 0);
        assert_rejects("a*k=", 0);
}

static void test_unused_bits_are_not_checked(void **state)
{
        (void)state;
        /* Go's encodings are not Strict: "YR==" has non-zero low bits */
        assert_decodes("YR==", 0, "a", 1);
        assert_decodes("aGl=", 0, "hi", 2);
}

static void test_raw(void **state)
{
        (void)state;
        assert_decodes("", BASE64_RAW, "", 0);
        assert_decodes("YQ", BASE64_RAW, "a", 1);
        assert_decodes("aGk", BASE64_RAW, "hi", 2);
        assert_decodes("aGVsbG8", BASE64_RAW, "hello", 5);
        assert_decodes("aGVs\nbG8\r\n", BASE64_RAW, "hello", 5);
        assert_decodes("aGVsbG8h", BASE64_RAW, "hello!", 6);
        assert_rejects("YQ==", BASE64_RAW); /* no padding at all */
        assert_rejects("aGk=", BASE64_RAW);
        assert_rejects("Y", BASE64_RAW); /* a tail of one character */
        assert_rejects("aGVsb", BASE64_RAW);
        assert_rejects("aG k", BASE64_RAW);
}

static void test_skip_space(void **state)
{
        (void)state;
        assert_decodes(" aGVs bG8=\t", BASE64_SKIP_SPACE, "hello", 5);
        assert_decodes("aGVs\v\fbG8=\n", BASE64_SKIP_SPACE, "hello", 5);
        assert_decodes("YQ= =", BASE64_SKIP_SPACE, "a", 1);
        assert_decodes("aG k", BASE64_SKIP_SPACE | BASE64_RAW, "hi", 2);
        assert_rejects("YQ== YQ==", BASE64_SKIP_SPACE);
        assert_rejects("a G", BASE64_SKIP_SPACE);
}

static void test_embedded_nul_is_not_the_end(void **state)
{
        (void)state;
        char *out = NULL;
        size_t n = 0;
        ck_error_t err = NULL;
        /* the length, not a NUL, ends the input */
        assert_int_equal(base64_decode("YQ==\0YQ==", 9, 0, &out, &n, &err), -1);
        ck_error_release(&err);
        assert_int_equal(base64_decode("YQ==\0YQ==", 4, 0, &out, &n, &err), 0);
        assert_int_equal(n, 1);
        assert_string_equal(out, "a");
        free(out);
}

static void test_error_is_optional(void **state)
{
        (void)state;
        char *out = NULL;
        size_t n = 0;
        assert_int_equal(base64_decode("Y", 1, 0, &out, &n, NULL), -1);
        assert_null(out);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_padded),
            cmocka_unit_test(test_line_breaks_are_skipped),
            cmocka_unit_test(test_padded_rejects),
            cmocka_unit_test(test_unused_bits_are_not_checked),
            cmocka_unit_test(test_raw),
            cmocka_unit_test(test_skip_space),
            cmocka_unit_test(test_embedded_nul_is_not_the_end),
            cmocka_unit_test(test_error_is_optional),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
