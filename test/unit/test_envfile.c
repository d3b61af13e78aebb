/* SPDX-License-Identifier: Apache-2.0 */
/* The env files of fileKeyRef (util/envfile.h), as upstream's ParseEnv
 * reads them: what is found, what is not, what is an error and where. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "util/envfile.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct tcase {
        const char *file;
        const char *key;
        const char *want; /* NULL: not set */
        const char *err;  /* a part of the error, NULL: none */
};

static const struct tcase cases[] = {
    {"CONFIG_1='value1'\nCONFIG_2='value2'\n", "CONFIG_2", "value2", NULL},
    {"  \tK='v'", "K", "v", NULL}, /* leading blanks; no final newline */
    {"# c\n\n   \nK='v'\n", "K", "v", NULL},
    {"A='a'\n", "B", NULL, NULL},                  /* not set */
    {"K=''\n", "K", NULL, NULL},                   /* empty reads as not set */
    {"K= 'v'\n", "K", NULL, NULL},                 /* blank after '=': empty */
    {"A= 'v'\nK='k'\n", "K", "k", NULL},           /* ... and another name skipped */
    {"K='a # b'\n", "K", "a # b", NULL},           /* '#' inside the quotes */
    {"K='v' # note\n", "K", "v", NULL},            /* a comment after the quote */
    {"K='  v  '\n", "K", "  v  ", NULL},           /* blanks kept */
    {"K='a=b=c'\n", "K", "a=b=c", NULL},           /* '=' in the value */
    {"K='$HOME ${X}'\n", "K", "$HOME ${X}", NULL}, /* nothing expanded */
    {"K='say \"hi\"'\n", "K", "say \"hi\"", NULL},
    {"K='a\nb\n\nc'\nL='l'\n", "K", "a\nb\n\nc", NULL}, /* across lines */
    {"K='a\nb'\nL='l'\n", "L", "l", NULL},
    {"K='v'\r\nL='w'\r\n", "L", "w", NULL}, /* CRLF line ends */
    {"A='a'\nK = 'v'\n", "K", NULL, "at line 2: whitespace before '=' is not allowed"},
    {"K\n", "K", NULL, "at line 1: missing '='"},
    {"='v'\n", "K", NULL, "at line 1: empty variable name"},
    {"K=v\n", "K", NULL, "at line 1: value must be enclosed in single quotes"},
    {"K=\"v\"\n", "K", NULL, "value must be enclosed in single quotes"},
    {"K='a''b'\n", "K", NULL, "at line 1: unexpected content after closing quote"},
    {"A='a'\nK='v\nmore\n", "K", NULL, "starting at line 2: unclosed single quote"},
    /* the file is read up to the key: a later error is not seen */
    {"K='v'\nbroken\n", "K", "v", NULL},
    {"broken\nK='v'\n", "K", NULL, "at line 1: missing '='"},
};

static void test_table(void **state)
{
        (void)state;
        size_t failed = 0;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                const struct tcase *c = &cases[i];
                char *v = NULL;
                ck_error_t err = NULL;
                int r = envfile_lookup(c->file, strlen(c->file), c->key, &v, &err);
                bool ok;
                if (c->err != NULL)
                        ok = r < 0 && v == NULL && strstr(ck_error_msg(err), c->err) != NULL;
                else if (c->want == NULL)
                        ok = r == 0 && v == NULL;
                else
                        ok = r == 0 && v != NULL && strcmp(v, c->want) == 0;
                if (!ok) {
                        print_error("case %zu (%s in %s): got r=%d value=%s err=%s\n", i, c->key,
                                    c->file, r, v ? v : "(null)", ck_error_msg(err));
                        failed++;
                }
                free(v);
                ck_error_release(&err);
        }
        assert_int_equal(failed, 0);
}

/* a NUL byte cannot go into an environment: an error, not a cut value */
static void test_nul_byte(void **state)
{
        (void)state;
        static const char file[] = "A='a'\nK='x\0y'\n";
        char *v = NULL;
        ck_error_t err = NULL;
        assert_int_equal(envfile_lookup(file, sizeof(file) - 1, "K", &v, &err), -1);
        assert_null(v);
        assert_non_null(strstr(ck_error_msg(err), "at line 2: contains a NUL byte"));
        ck_error_release(&err);
        /* another key's value is not checked */
        assert_int_equal(envfile_lookup(file, sizeof(file) - 1, "A", &v, &err), 0);
        assert_string_equal(v, "a");
        free(v);
}

/* a line of 64 KiB is over bufio.Scanner's limit, one byte less is not */
static void test_long_line(void **state)
{
        (void)state;
        size_t n = 64 * 1024;
        char *file = malloc(n + 16);
        assert_non_null(file);
        memcpy(file, "K='", 3);
        memset(file + 3, 'x', n - 4);
        memcpy(file + n - 1, "'\n", 3); /* the line: n bytes before its newline */
        char *v = NULL;
        ck_error_t err = NULL;
        assert_int_equal(envfile_lookup(file, n + 1, "K", &v, &err), -1);
        assert_non_null(strstr(ck_error_msg(err), "line 1 is too long"));
        ck_error_release(&err);
        memcpy(file + n - 2, "'\n", 3); /* n - 1 bytes */
        assert_int_equal(envfile_lookup(file, n, "K", &v, &err), 0);
        assert_int_equal(strlen(v), n - 5);
        free(v);
        free(file);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_table),
            cmocka_unit_test(test_nul_byte),
            cmocka_unit_test(test_long_line),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
