/* SPDX-License-Identifier: Apache-2.0 */
/* The byte-level half of the gRPC transport (grpc/grpc_frame.c): message
 * prefixes, grpc-timeout, grpc-message decoding and how what a server sent
 * maps to the outcome of a call (grpc/doc/PROTOCOL-HTTP2.md). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "grpc/grpc.h"

#include <stdlib.h>
#include <string.h>

static void test_prefix_roundtrip_and_partial(void **state)
{
        (void)state;
        uint8_t p[5];
        grpc_write_message_prefix(p, 0x01020304);
        const uint8_t want[5] = {0, 1, 2, 3, 4};
        assert_memory_equal(p, want, 5);

        uint32_t len = 0;
        ck_error_t err = NULL;
        for (size_t n = 0; n < 5; n++)
                assert_int_equal(grpc_parse_message_prefix(p, n, UINT32_MAX, &len, &err), 0);
        assert_int_equal(grpc_parse_message_prefix(p, 5, UINT32_MAX, &len, &err), 1);
        assert_int_equal(len, 0x01020304);
        assert_null(err);
}

static void test_prefix_rejects_compressed_unknown_flags_and_oversized(void **state)
{
        (void)state;
        uint32_t len = 0;
        ck_error_t err = NULL;
        const uint8_t compressed[5] = {1, 0, 0, 0, 3};
        assert_true(grpc_parse_message_prefix(compressed, 5, 100, &len, &err) < 0);
        assert_int_equal(err->code, GRPC_INTERNAL);
        assert_non_null(strstr(err->msg, "compressed"));
        ck_error_release(&err);

        const uint8_t flags[5] = {0x80, 0, 0, 0, 3};
        assert_true(grpc_parse_message_prefix(flags, 5, 100, &len, &err) < 0);
        assert_int_equal(err->code, GRPC_INTERNAL);
        ck_error_release(&err);

        uint8_t big[5];
        grpc_write_message_prefix(big, GRPC_MAX_MESSAGE_SIZE + 1);
        assert_true(grpc_parse_message_prefix(big, 5, GRPC_MAX_MESSAGE_SIZE, &len, &err) < 0);
        assert_int_equal(err->code, GRPC_RESOURCE_EXHAUSTED);
        ck_error_release(&err);

        grpc_write_message_prefix(big, GRPC_MAX_MESSAGE_SIZE);
        assert_int_equal(grpc_parse_message_prefix(big, 5, GRPC_MAX_MESSAGE_SIZE, &len, &err), 1);
}

static void test_timeout_format(void **state)
{
        (void)state;
        char buf[16];
        struct {
                int64_t ms;
                const char *want;
        } cases[] = {
            {120000, "120000m"},
            {1, "1m"},
            {0, "1m"},
            {99999999, "99999999m"},
            {100000000, "100000S"},
            {100000001, "100001S"},   /* rounded up */
            {INT64_MAX, "99999999H"}, /* capped at the largest value */
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                grpc_format_timeout(cases[i].ms, buf, sizeof(buf));
                assert_string_equal(buf, cases[i].want);
        }
}

static void test_timeout_parse(void **state)
{
        (void)state;
        struct {
                const char *s;
                int64_t want;
        } ok[] = {{"120000m", 120000}, {"1S", 1000},    {"2M", 120000},
                  {"1H", 3600000},     {"10u", 1},      {"1000u", 1},
                  {"1001u", 2},        {"1500000n", 2}, {"99999999m", 99999999}};
        for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
                int64_t ms = -1;
                ck_error_t err = NULL;
                assert_int_equal(grpc_parse_timeout(ok[i].s, strlen(ok[i].s), &ms, &err), 0);
                assert_int_equal(ms, ok[i].want);
        }
        const char *bad[] = {"", "m", "12x", "123456789m", "-1m", "1 m", "S1"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                int64_t ms = -1;
                ck_error_t err = NULL;
                assert_true(grpc_parse_timeout(bad[i], strlen(bad[i]), &ms, &err) < 0);
                assert_non_null(err);
                ck_error_release(&err);
        }
}

static void test_format_then_parse_never_shortens_the_deadline(void **state)
{
        (void)state;
        const int64_t values[] = {1, 999, 1000, 123456789, 98765432101LL, 3600LL * 1000 * 200000};
        for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
                char buf[16];
                int64_t ms = 0;
                ck_error_t err = NULL;
                grpc_format_timeout(values[i], buf, sizeof(buf));
                assert_int_equal(grpc_parse_timeout(buf, strlen(buf), &ms, &err), 0);
                assert_true(ms >= values[i]);
        }
}

static void test_percent_decode(void **state)
{
        (void)state;
        struct {
                const char *in, *want;
        } cases[] = {
            {"plain", "plain"},
            {"a%20b", "a b"},
            {"container %22web%22 not found", "container \"web\" not found"},
            {"%E2%9C%93", "\xE2\x9C\x93"},
            {"100%25", "100%"},
            {"%", "%"}, /* malformed escapes stay as sent */
            {"%4", "%4"},
            {"%zz1", "%zz1"},
            {"end%2", "end%2"},
            {"", ""},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char *out = grpc_percent_decode(cases[i].in, strlen(cases[i].in));
                assert_string_equal(out, cases[i].want);
                free(out);
        }
}

/* Feeds headers as (name, value) pairs, NULL-terminated. */
static void feed_headers(struct grpc_response *r, const char *const *hv)
{
        for (size_t i = 0; hv[i]; i += 2)
                grpc_response_on_header(r, hv[i], strlen(hv[i]), hv[i + 1], strlen(hv[i + 1]));
}

static const char *const ok_headers[] = {":status", "200", "content-type", "application/grpc",
                                         NULL};

static void test_response_message_across_frames(void **state)
{
        (void)state;
        struct grpc_response r;
        grpc_response_init(&r, 1024);
        feed_headers(&r, ok_headers);
        uint8_t wire[5 + 11];
        grpc_write_message_prefix(wire, 11);
        memcpy(wire + 5, "hello world", 11);
        ck_error_t err = NULL;
        /* one byte per DATA frame: the prefix itself is split */
        for (size_t i = 0; i < sizeof(wire); i++)
                assert_int_equal(grpc_response_on_data(&r, wire + i, 1, &err), 0);
        const char *const trailers[] = {"grpc-status", "0", NULL};
        feed_headers(&r, trailers);
        uint8_t *msg = NULL;
        size_t len = 0;
        assert_int_equal(grpc_response_finish(&r, &msg, &len, &err), 0);
        assert_int_equal(len, 11);
        assert_memory_equal(msg, "hello world", 11);
        free(msg);
        grpc_response_free(&r);
}

static void test_response_empty_message(void **state)
{
        (void)state;
        struct grpc_response r;
        grpc_response_init(&r, 1024);
        feed_headers(&r, ok_headers);
        uint8_t wire[5];
        grpc_write_message_prefix(wire, 0);
        ck_error_t err = NULL;
        assert_int_equal(grpc_response_on_data(&r, wire, 5, &err), 0);
        grpc_response_on_header(&r, "grpc-status", 11, "0", 1);
        uint8_t *msg = NULL;
        size_t len = 99;
        assert_int_equal(grpc_response_finish(&r, &msg, &len, &err), 0);
        assert_non_null(msg);
        assert_int_equal(len, 0);
        free(msg);
        grpc_response_free(&r);
}

/* Runs one response through the state machine; returns the error (or NULL). */
static ck_error_t outcome(const char *const *headers, const uint8_t *data, size_t data_len,
                          const char *const *trailers)
{
        struct grpc_response r;
        grpc_response_init(&r, 1024);
        ck_error_t err = NULL;
        feed_headers(&r, headers);
        if (data_len && grpc_response_on_data(&r, data, data_len, &err) < 0) {
                grpc_response_free(&r);
                return err;
        }
        if (trailers)
                feed_headers(&r, trailers);
        uint8_t *msg = NULL;
        size_t len = 0;
        if (grpc_response_finish(&r, &msg, &len, &err) == 0)
                free(msg);
        grpc_response_free(&r);
        return err;
}

static void test_response_error_status_and_message(void **state)
{
        (void)state;
        const char *const trailers[] = {"grpc-status", "5", "grpc-message",
                                        "sandbox %22abc%22 not found", NULL};
        ck_error_t err = outcome(ok_headers, NULL, 0, trailers);
        assert_non_null(err);
        assert_int_equal(err->code, GRPC_NOT_FOUND);
        assert_string_equal(err->msg, "rpc error 5: sandbox \"abc\" not found");
        ck_error_release(&err);
}

static void test_response_trailers_only(void **state)
{
        (void)state;
        const char *const only[] = {":status",     "200", "content-type", "application/grpc",
                                    "grpc-status", "12",  "grpc-message", "unknown service",
                                    NULL};
        ck_error_t err = outcome(only, NULL, 0, NULL);
        assert_non_null(err);
        assert_int_equal(err->code, GRPC_UNIMPLEMENTED);
        assert_string_equal(err->msg, "rpc error 12: unknown service");
        ck_error_release(&err);

        /* grpc-status 0 without a message is a broken unary response */
        const char *const ok_only[] = {":status", "200", "grpc-status", "0", NULL};
        err = outcome(ok_only, NULL, 0, NULL);
        assert_non_null(err);
        assert_int_equal(err->code, GRPC_INTERNAL);
        ck_error_release(&err);
}

static void test_response_http_status_mapping(void **state)
{
        (void)state;
        struct {
                const char *status;
                int code;
        } cases[] = {{"400", GRPC_INTERNAL},          {"401", GRPC_UNAUTHENTICATED},
                     {"403", GRPC_PERMISSION_DENIED}, {"404", GRPC_UNIMPLEMENTED},
                     {"429", GRPC_UNAVAILABLE},       {"502", GRPC_UNAVAILABLE},
                     {"503", GRPC_UNAVAILABLE},       {"504", GRPC_UNAVAILABLE},
                     {"500", GRPC_UNKNOWN},           {"xyz", GRPC_UNKNOWN}};
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                const char *const h[] = {":status", cases[i].status, NULL};
                ck_error_t err = outcome(h, NULL, 0, NULL);
                assert_non_null(err);
                assert_int_equal(err->code, cases[i].code);
                ck_error_release(&err);
        }
        /* grpc-status wins over the HTTP status */
        const char *const h[] = {":status", "503", "grpc-status", "9", NULL};
        ck_error_t err = outcome(h, NULL, 0, NULL);
        assert_int_equal(err->code, GRPC_FAILED_PRECONDITION);
        ck_error_release(&err);
}

static void test_response_protocol_violations(void **state)
{
        (void)state;
        const char *const ok_trailers[] = {"grpc-status", "0", NULL};
        uint8_t two[10];
        grpc_write_message_prefix(two, 0);
        grpc_write_message_prefix(two + 5, 0);
        struct {
                const char *what;
                const char *const *headers;
                const uint8_t *data;
                size_t len;
                const char *const *trailers;
        } cases[] = {
            {"no headers at all", (const char *const[]){NULL}, NULL, 0, NULL},
            {"no grpc-status", ok_headers, two, 5, NULL},
            {"malformed grpc-status", ok_headers, two, 5,
             (const char *const[]){"grpc-status", "abc", NULL}},
            {"truncated message", ok_headers, (const uint8_t *)"\0\0\0\0\5ab", 7, ok_trailers},
            {"truncated prefix", ok_headers, (const uint8_t *)"\0\0", 2, ok_trailers},
            {"two messages", ok_headers, two, 10, ok_trailers},
            {"no message", ok_headers, NULL, 0, ok_trailers},
            {"not grpc", (const char *const[]){":status", "200", "content-type", "text/html", NULL},
             two, 5, ok_trailers},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                ck_error_t err =
                    outcome(cases[i].headers, cases[i].data, cases[i].len, cases[i].trailers);
                if (err == NULL)
                        fail_msg("%s: accepted", cases[i].what);
                assert_int_equal(err->code, GRPC_INTERNAL);
                assert_non_null(strstr(err->msg, "rpc error 13: "));
                ck_error_release(&err);
        }
        /* application/grpc+proto is fine */
        const char *const proto_ct[] = {":status", "200", "content-type", "application/grpc+proto",
                                        NULL};
        assert_null(outcome(proto_ct, two, 5, ok_trailers));
}

static void test_h2_error_mapping(void **state)
{
        (void)state;
        assert_int_equal(grpc_code_from_h2_error(0x7), GRPC_UNAVAILABLE); /* REFUSED_STREAM */
        assert_int_equal(grpc_code_from_h2_error(0x8), GRPC_CANCELLED);
        assert_int_equal(grpc_code_from_h2_error(0xb), GRPC_RESOURCE_EXHAUSTED);
        assert_int_equal(grpc_code_from_h2_error(0x2), GRPC_INTERNAL);
        assert_int_equal(grpc_code_from_h2_error(0x0), GRPC_INTERNAL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_prefix_roundtrip_and_partial),
            cmocka_unit_test(test_prefix_rejects_compressed_unknown_flags_and_oversized),
            cmocka_unit_test(test_timeout_format),
            cmocka_unit_test(test_timeout_parse),
            cmocka_unit_test(test_format_then_parse_never_shortens_the_deadline),
            cmocka_unit_test(test_percent_decode),
            cmocka_unit_test(test_response_message_across_frames),
            cmocka_unit_test(test_response_empty_message),
            cmocka_unit_test(test_response_error_status_and_message),
            cmocka_unit_test(test_response_trailers_only),
            cmocka_unit_test(test_response_http_status_mapping),
            cmocka_unit_test(test_response_protocol_violations),
            cmocka_unit_test(test_h2_error_mapping),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
