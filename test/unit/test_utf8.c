/* SPDX-License-Identifier: Apache-2.0 */
/* UTF-8 validity as Go's utf8.ValidString judges it (util/utf8.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "util/utf8.h"

#include <string.h>

static bool valid(const char *s)
{
        return utf8_valid(s, strlen(s));
}

static void test_valid(void **state)
{
        (void)state;
        assert_true(valid(""));
        assert_true(valid("plain ascii"));
        assert_true(valid("caf\xc3\xa9"));      /* U+00E9 */
        assert_true(valid("\xe2\x82\xac"));     /* U+20AC */
        assert_true(valid("\xed\x9f\xbf"));     /* U+D7FF, below the surrogates */
        assert_true(valid("\xee\x80\x80"));     /* U+E000, above them */
        assert_true(valid("\xf0\x90\x80\x80")); /* U+10000 */
        assert_true(valid("\xf4\x8f\xbf\xbf")); /* U+10FFFF */
        assert_true(utf8_valid("a\0b", 3));     /* NUL is a character */
}

static void test_invalid(void **state)
{
        (void)state;
        assert_false(valid("\xff"));
        assert_false(valid("\x80"));             /* a lone continuation byte */
        assert_false(valid("caf\xc3"));          /* truncated */
        assert_false(valid("\xc3("));            /* a bad continuation */
        assert_false(valid("\xc0\xaf"));         /* overlong '/' */
        assert_false(valid("\xc1\xbf"));         /* overlong */
        assert_false(valid("\xe0\x80\xaf"));     /* overlong */
        assert_false(valid("\xed\xa0\x80"));     /* U+D800, a surrogate */
        assert_false(valid("\xf0\x80\x80\xaf")); /* overlong */
        assert_false(valid("\xf4\x90\x80\x80")); /* U+110000 */
        assert_false(valid("\xf5\x80\x80\x80"));
        assert_false(valid("\xe2\x82"));             /* truncated */
        assert_false(utf8_valid("\xe2\x82\xac", 2)); /* cut by the length */
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_valid),
            cmocka_unit_test(test_invalid),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
