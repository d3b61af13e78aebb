/* SPDX-License-Identifier: Apache-2.0 */
/* YAML -> JSON typed as sigs.k8s.io/yaml (go-yaml v2, YAML 1.1) types it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "util/cleanup.h"
#include "util/yamljson.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Parses yaml and returns the compact JSON text (sorted keys), or the
 * error message prefixed with "ERR: ". */
static char *convert(const char *yaml)
{
        json_t *j = NULL;
        ck_error_t err = NULL;
        char *out;
        if (yamljson_parse(yaml, strlen(yaml), &j, &err) < 0) {
                if (asprintf(&out, "ERR: %s", ck_error_msg(err)) < 0)
                        abort();
                ck_error_release(&err);
                return out;
        }
        out = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
        json_decref(j);
        return out;
}

static void expect(const char *yaml, const char *want)
{
        cleanup_free char *got = convert(yaml);
        if (strcmp(got, want) != 0)
                fail_msg("input:\n%s\ngot:  %s\nwant: %s", yaml, got, want);
}

static void test_scalar_typing(void **state)
{
        (void)state;
        static const char *const cases[][2] = {
            /* YAML 1.1 booleans */
            {"v: yes", "{\"v\":true}"},
            {"v: No", "{\"v\":false}"},
            {"v: on", "{\"v\":true}"},
            {"v: OFF", "{\"v\":false}"},
            {"v: y", "{\"v\":true}"},
            {"v: True", "{\"v\":true}"},
            {"v: FALSE", "{\"v\":false}"},
            {"v: yEs", "{\"v\":\"yEs\"}"},
            /* quoting and block scalars keep strings */
            {"v: \"1\"", "{\"v\":\"1\"}"},
            {"v: 'true'", "{\"v\":\"true\"}"},
            {"v: \"yes\"", "{\"v\":\"yes\"}"},
            {"v: |\n  line\n", "{\"v\":\"line\\n\"}"},
            {"v: >-\n  folded\n  text\n", "{\"v\":\"folded text\"}"},
            {"v: !!str 42", "{\"v\":\"42\"}"},
            /* integers */
            {"v: 42", "{\"v\":42}"},
            {"v: -7", "{\"v\":-7}"},
            {"v: +1", "{\"v\":1}"},
            {"v: 0x1F", "{\"v\":31}"},
            {"v: -0x10", "{\"v\":-16}"},
            {"v: 0o17", "{\"v\":15}"},
            {"v: 017", "{\"v\":15}"},
            {"v: 0b101", "{\"v\":5}"},
            {"v: 1_000", "{\"v\":1000}"},
            {"v: !!int \"42\"", "{\"v\":42}"},
            /* floats */
            {"v: 1e3", "{\"v\":1000.0}"},
            {"v: 1.5", "{\"v\":1.5}"},
            {"v: .5", "{\"v\":0.5}"},
            {"v: 09", "{\"v\":9.0}"},
            {"v: !!float 3", "{\"v\":3.0}"},
            /* nulls */
            {"v: ~", "{\"v\":null}"},
            {"v: null", "{\"v\":null}"},
            {"v: NULL", "{\"v\":null}"},
            {"v:", "{\"v\":null}"},
            {"v: \"null\"", "{\"v\":\"null\"}"},
            /* everything else is a string */
            {"v: 2001-12-14", "{\"v\":\"2001-12-14\"}"},
            {"v: 1.2.3", "{\"v\":\"1.2.3\"}"},
            {"v: 0x", "{\"v\":\"0x\"}"},
            {"v: 80x", "{\"v\":\"80x\"}"},
            {"v: .inf2", "{\"v\":\".inf2\"}"},
            {"v: !custom 7", "{\"v\":\"7\"}"},
            {"v: !!binary aGVsbG8=", "{\"v\":\"hello\"}"},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                expect(cases[i][0], cases[i][1]);
}

static void test_keys_become_text(void **state)
{
        (void)state;
        /* go-yaml resolves keys too; sigs.k8s.io/yaml writes them as text */
        expect("yes: 1\n", "{\"true\":1}");
        expect("on: push\n", "{\"true\":\"push\"}");
        expect("1: a\n0x10: b\n", "{\"1\":\"a\",\"16\":\"b\"}");
        expect("1.5: a\n1e6: b\n", "{\"1.5\":\"a\",\"1e+06\":\"b\"}");
        expect("\"yes\": 1\n", "{\"yes\":1}");
        /* float keys are written at float32 precision, as Go does */
        expect("1e300: a\n", "{\".inf\":\"a\"}");
        expect("1e-300: a\n", "{\"0\":\"a\"}");
        expect("0.1: a\n", "{\"0.1\":\"a\"}");
        expect("~: 1\n", "ERR: line 1, column 1: unsupported map key: null");
        expect("? [a]\n: 1\n", "ERR: line 1, column 3: unsupported map key: a sequence");
}

static void test_anchors_and_merge(void **state)
{
        (void)state;
        expect("base: &b {a: 1, c: 2}\nx: *b\n",
               "{\"base\":{\"a\":1,\"c\":2},\"x\":{\"a\":1,\"c\":2}}");
        expect("base: &b {a: 1, c: 2}\nx:\n  <<: *b\n  a: 3\n",
               "{\"base\":{\"a\":1,\"c\":2},\"x\":{\"a\":3,\"c\":2}}");
        /* earlier maps of a merge list win */
        expect("a: &a {k: 1}\nb: &b {k: 2, j: 2}\nx:\n  <<: [*a, *b]\n",
               "{\"a\":{\"k\":1},\"b\":{\"j\":2,\"k\":2},\"x\":{\"j\":2,\"k\":1}}");
        expect("s: &s hello\nl: [*s, *s]\n", "{\"l\":[\"hello\",\"hello\"],\"s\":\"hello\"}");
        expect("x: *nope\n", "ERR: line 1, column 4: unknown anchor 'nope' referenced");
        expect("s: &s 1\nx:\n  <<: *s\n",
               "ERR: line 3, column 7: map merge requires map or sequence of maps as the value");
}

static void test_alias_bomb_is_refused(void **state)
{
        (void)state;
        const char *bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
                           "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                           "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
                           "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                           "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
                           "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n";
        cleanup_free char *got = convert(bomb);
        assert_non_null(strstr(got, "document contains excessive aliasing"));
}

static void test_errors_name_the_line(void **state)
{
        (void)state;
        expect("a: 1\nb: 2\na: 3\n",
               "ERR: line 3, column 1: mapping key \"a\" already defined at line 1");
        expect("a:\n  b: 1\n c: 2\n",
               "ERR: line 3, column 2: did not find expected key (while parsing a block mapping "
               "at line 1, column 1)");
        expect("a: b: c\n",
               "ERR: line 1, column 5: mapping values are not allowed in this context");
        expect("v: .inf\n",
               "ERR: line 1, column 4: unsupported value: .inf (not representable in JSON)");
        expect("v: !!int abc\n", "ERR: line 1, column 4: cannot decode !!str `abc` as a !!int");
}

static void test_documents(void **state)
{
        (void)state;
        expect("", "ERR: empty document");
        expect("# only a comment\n", "ERR: empty document");
        expect("---\n", "ERR: empty document");
        expect("a: 1\n---\nb: [\n", "{\"a\":1}"); /* only the first document is read */
        expect("--- \nkind: Pod\n", "{\"kind\":\"Pod\"}");
}

static void test_json_input(void **state)
{
        (void)state;
        expect("{\"a\": 1.0, \"b\": 10, \"c\": \"yes\"}", "{\"a\":1.0,\"b\":10,\"c\":\"yes\"}");
        expect("  {\"a\": 1, \"a\": 2}",
               "ERR: line 1, column 14: duplicate object key near '\"a\"'");
        /* a YAML flow mapping that is not JSON still reads */
        expect("{a: yes}", "{\"a\":true}");
}

static void test_depth_limit(void **state)
{
        (void)state;
        char buf[1024];
        size_t n = 0;
        buf[n++] = 'v';
        buf[n++] = ':';
        buf[n++] = ' ';
        for (int i = 0; i < 300; i++)
                buf[n++] = '[';
        buf[n] = '\0';
        cleanup_free char *got = convert(buf);
        assert_non_null(strstr(got, "maximum nesting depth of 200 exceeded"));
}

static void test_number_text(void **state)
{
        (void)state;
        static const struct {
                double v;
                const char *want;
        } cases[] = {{1000.0, "1000"},
                     {0.5, "0.5"},
                     {0.1, "0.1"},
                     {1e21, "1e+21"},
                     {1e20, "100000000000000000000"},
                     {1e-7, "1e-7"},
                     {-2.5, "-2.5"}};
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                json_t *r = json_real(cases[i].v);
                cleanup_free char *s = yamljson_number_text(r);
                json_decref(r);
                assert_string_equal(s, cases[i].want);
        }
        json_t *i = json_integer(-42);
        cleanup_free char *s = yamljson_number_text(i);
        json_decref(i);
        assert_string_equal(s, "-42");
}

static void test_parse_file(void **state)
{
        (void)state;
        char path[] = "/tmp/test_yamljson.XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        const char *doc = "kind: Pod\nmetadata:\n  name: x\n";
        assert_int_equal(write(fd, doc, strlen(doc)), (ssize_t)strlen(doc));
        close(fd);

        json_t *j = NULL;
        ck_error_t err = NULL;
        assert_int_equal(yamljson_parse_file(path, 1024, &j, &err), 0);
        assert_string_equal(json_string_value(json_object_get(j, "kind")), "Pod");
        json_decref(j);

        assert_int_equal(yamljson_parse_file(path, 10, &j, &err), -1);
        assert_non_null(strstr(ck_error_msg(err), "is larger than 10 bytes"));
        ck_error_release(&err);
        unlink(path);

        assert_int_equal(yamljson_parse_file(path, 1024, &j, &err), -1);
        assert_int_equal(err->status, ENOENT);
        ck_error_release(&err);

        fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "a:\n b: 1\n c\n", 12), 12);
        close(fd);
        assert_int_equal(yamljson_parse_file(path, 1024, &j, &err), -1);
        cleanup_free char *want = NULL;
        assert_true(
            asprintf(&want, "parse `%s`: line 4, column 1: could not find expected ':'", path) > 0);
        assert_non_null(strstr(ck_error_msg(err), want));
        ck_error_release(&err);
        unlink(path);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_scalar_typing),
            cmocka_unit_test(test_keys_become_text),
            cmocka_unit_test(test_anchors_and_merge),
            cmocka_unit_test(test_alias_bomb_is_refused),
            cmocka_unit_test(test_errors_name_the_line),
            cmocka_unit_test(test_documents),
            cmocka_unit_test(test_json_input),
            cmocka_unit_test(test_depth_limit),
            cmocka_unit_test(test_number_text),
            cmocka_unit_test(test_parse_file),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
