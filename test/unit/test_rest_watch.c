/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The client's pure logic: the watch stream decoder (events however the
 * bytes arrive), ERROR events, the rate limiter's token bucket, the
 * reflector's backoff, query strings and Status errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "client/ratelimit.h"
#include "client/reflector.h"
#include "client/rest.h"
#include "client/watch.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Collects "TYPE name" lines of the events seen. */
struct seen {
        char text[4096];
        int n;
        int fail_at; /* fail on this event (1-based), 0: never */
};

static int collect(void *opaque, enum watch_event_type type, json_t *obj, ck_error_t *err)
{
        struct seen *s = opaque;
        s->n++;
        if (s->fail_at == s->n)
                return ck_error_make(err, 0, "consumer refused event %d", s->n);
        const char *name =
            json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
        size_t len = strlen(s->text);
        snprintf(s->text + len, sizeof(s->text) - len, "%s%s %s", len ? "|" : "",
                 watch_event_type_name(type), name ? name : "-");
        return 0;
}

static const char STREAM[] =
    "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"}}}\n"
    "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"b}{\\\"\\\\\"},"
    "\"spec\":{\"x\":[1,{\"y\":\"]\"}]}}}\n"
    "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"7\"}}}\r\n"
    "  {\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"c\"}}}"
    "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"d\"}}}\n";
static const char STREAM_EVENTS[] = "ADDED a|MODIFIED b}{\"\\|BOOKMARK -|DELETED c|ADDED d";

/* Feeds STREAM in pieces of the given sizes (cycled). */
static void feed_in_pieces(const size_t *sizes, size_t n_sizes)
{
        struct watch_decoder *d = watch_decoder_new(0);
        struct seen s = {0};
        ck_error_t err = NULL;
        size_t len = strlen(STREAM), off = 0;
        for (size_t i = 0; off < len; i++) {
                size_t piece = sizes[i % n_sizes];
                if (piece > len - off)
                        piece = len - off;
                if (watch_decoder_feed(d, STREAM + off, piece, collect, &s, &err) < 0)
                        fail_msg("%s", ck_error_msg(err));
                off += piece;
        }
        assert_int_equal(watch_decoder_finish(d, &err), 0);
        assert_string_equal(s.text, STREAM_EVENTS);
        watch_decoder_free(d);
}

static void test_decoder_any_chunking(void **state)
{
        (void)state;
        size_t whole = strlen(STREAM);
        feed_in_pieces(&whole, 1);
        static const size_t one = 1, mixed[] = {3, 1, 17, 64, 2};
        feed_in_pieces(&one, 1);
        feed_in_pieces(mixed, ARRAY_SIZE(mixed));
        /* every split into two pieces */
        for (size_t cut = 1; cut < whole; cut++) {
                size_t sizes[2] = {cut, whole - cut};
                feed_in_pieces(sizes, 2);
        }
}

static int decode_all(const char *stream, struct seen *s, ck_error_t *err)
{
        struct watch_decoder *d = watch_decoder_new(256);
        int rc = watch_decoder_feed(d, stream, strlen(stream), collect, s, err);
        if (rc == 0)
                rc = watch_decoder_finish(d, err);
        watch_decoder_free(d);
        return rc;
}

static void test_decoder_errors(void **state)
{
        (void)state;
        static const char *const cases[][2] = {
            {"{\"type\":\"ADDED\",\"object\":{}}\nHTTP/1.1 200",
             "watch stream: unexpected byte 0x48 between events"},
            {"[1]", "watch stream: unexpected byte 0x5b between events"},
            {"{\"type\":\"ADDED\",\"object\":{}", "watch stream: ended inside an event (27 bytes)"},
            {"{\"type\":\"ADDED\",\"object\":{]}",
             "watch stream: invalid event: string or '}' expected near ']'"},
            {"{\"type\":\"RENAMED\",\"object\":{}}",
             "watch stream: unknown event type \"RENAMED\""},
            {"{\"object\":{}}", "watch stream: event without a type"},
            {"{\"type\":\"ADDED\",\"object\":[]}", "watch stream: ADDED event without an object"},
            {"{\"type\":\"ADDED\"}", "watch stream: ADDED event without an object"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                struct seen s = {0};
                ck_error_t err = NULL;
                assert_int_equal(decode_all(cases[i][0], &s, &err), -1);
                if (strcmp(ck_error_msg(err), cases[i][1]) != 0)
                        fail_msg("input %s\ngot:  %s\nwant: %s", cases[i][0], ck_error_msg(err),
                                 cases[i][1]);
                ck_error_release(&err);
        }

        /* over the size limit (256 here), even before the event completes */
        cleanup_free char *big = xmalloc(400);
        memset(big, ' ', 399);
        big[399] = '\0';
        memcpy(big, "{\"type\":\"ADDED\",\"object\":{\"x\":\"", 31);
        struct seen s = {0};
        ck_error_t err = NULL;
        assert_int_equal(decode_all(big, &s, &err), -1);
        assert_string_equal(ck_error_msg(err), "watch stream: event larger than 256 bytes");
        ck_error_release(&err);
}

static void test_decoder_stops_on_consumer_error(void **state)
{
        (void)state;
        struct watch_decoder *d = watch_decoder_new(0);
        struct seen s = {.fail_at = 2};
        ck_error_t err = NULL;
        assert_int_equal(watch_decoder_feed(d, STREAM, strlen(STREAM), collect, &s, &err), -1);
        assert_string_equal(ck_error_msg(err), "consumer refused event 2");
        assert_string_equal(s.text, "ADDED a"); /* nothing after the refused one */
        ck_error_release(&err);
        /* and it stays failed */
        assert_int_equal(watch_decoder_feed(d, "\n", 1, collect, &s, &err), -1);
        ck_error_release(&err);
        watch_decoder_free(d);
}

/* The apiserver's answer to a watch from a compacted resource version. */
static const char EXPIRED[] =
    "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
    "\"status\":\"Failure\",\"message\":\"too old resource version: 1 (3870)\","
    "\"reason\":\"Expired\",\"code\":410}}\n";

static int error_to_err(void *opaque, enum watch_event_type type, json_t *obj, ck_error_t *err)
{
        (void)opaque;
        assert_int_equal(type, WATCH_ERROR);
        return watch_error_event(obj, "watch /api/v1/pods", err);
}

static void test_error_event_410(void **state)
{
        (void)state;
        struct watch_decoder *d = watch_decoder_new(0);
        ck_error_t err = NULL;
        assert_int_equal(watch_decoder_feed(d, EXPIRED, strlen(EXPIRED), error_to_err, NULL, &err),
                         -1);
        assert_int_equal(err->code, 410);
        assert_true(watch_is_expired(err));
        assert_string_equal(ck_error_msg(err), "watch /api/v1/pods: 410 Expired: too old resource "
                                               "version: 1 (3870)");
        ck_error_release(&err);
        watch_decoder_free(d);

        /* Another ERROR (e.g. 500) is not "expired". */
        cleanup_json json_t *st =
            json_pack("{s:s, s:s, s:i}", "kind", "Status", "message", "boom", "code", 500);
        watch_error_event(st, "w", &err);
        assert_false(watch_is_expired(err));
        assert_string_equal(ck_error_msg(err), "w: 500 Internal Server Error: boom");
        ck_error_release(&err);
        assert_false(watch_is_expired(NULL));
}

static void test_status_errors(void **state)
{
        (void)state;
        ck_error_t err = NULL;
        cleanup_json json_t *st = json_pack(
            "{s:s, s:s, s:s, s:i}", "kind", "Status", "reason", "Forbidden", "message",
            "pods is forbidden: User \"system:node:x\" cannot list resource \"pods\"", "code", 403);
        assert_int_equal(rest_status_error(&err, "GET /api/v1/pods", 403, st), -1);
        assert_int_equal(err->code, 403);
        assert_string_equal(ck_error_msg(err), "GET /api/v1/pods: 403 Forbidden: pods is "
                                               "forbidden: User \"system:node:x\" cannot list "
                                               "resource \"pods\"");
        ck_error_release(&err);
        /* no Status: the HTTP status says it all */
        rest_status_error(&err, "GET /x", 503, NULL);
        assert_int_equal(err->code, 503);
        assert_string_equal(ck_error_msg(err), "GET /x: 503 Service Unavailable");
        ck_error_release(&err);
}

static void test_query_escaping(void **state)
{
        (void)state;
        cleanup_free char *q = NULL;
        rest_query_add(&q, "fieldSelector", "spec.nodeName=node-1");
        rest_query_add(&q, "labelSelector", "app in (a,b),tier!=x");
        rest_query_add(&q, "resourceVersion", "12_3~");
        assert_string_equal(q, "fieldSelector=spec.nodeName%3Dnode-1&labelSelector=app%20in%20%28a"
                               "%2Cb%29%2Ctier%21%3Dx&resourceVersion=12_3~");
}

#define MS 1000000LL

static void test_rate_limiter_token_bucket(void **state)
{
        (void)state;
        struct rest_ratelimiter *rl = rest_ratelimiter_new(2, 3); /* 2 qps, burst 3 */
        int64_t t0 = 5000 * MS;
        /* the burst goes at once, then one token every 500 ms */
        assert_int_equal(rest_ratelimiter_reserve(rl, t0), 0);
        assert_int_equal(rest_ratelimiter_reserve(rl, t0), 0);
        assert_int_equal(rest_ratelimiter_reserve(rl, t0), 0);
        assert_int_equal(rest_ratelimiter_reserve(rl, t0), 500 * MS);
        assert_int_equal(rest_ratelimiter_reserve(rl, t0), 1000 * MS);
        /* 1 s later the two queued callers have had their tokens: next waits 500 ms */
        assert_int_equal(rest_ratelimiter_reserve(rl, t0 + 1000 * MS), 500 * MS);
        /* a long idle period refills up to the burst only */
        int64_t t1 = t0 + 60000 * MS;
        for (int i = 0; i < 3; i++)
                assert_int_equal(rest_ratelimiter_reserve(rl, t1), 0);
        assert_int_equal(rest_ratelimiter_reserve(rl, t1), 500 * MS);
        rest_ratelimiter_free(rl);

        /* partial refill: 125 ms at 4 qps is half a token */
        rl = rest_ratelimiter_new(4, 1);
        assert_int_equal(rest_ratelimiter_reserve(rl, t0), 0);
        assert_int_equal(rest_ratelimiter_reserve(rl, t0 + 125 * MS), 125 * MS);
        rest_ratelimiter_free(rl);

        /* the kubelet's defaults: 100 at once, then 50 per second */
        rl = rest_ratelimiter_new(50, 100);
        for (int i = 0; i < 100; i++)
                assert_int_equal(rest_ratelimiter_reserve(rl, t0), 0);
        assert_int_equal(rest_ratelimiter_reserve(rl, t0), 20 * MS);
        rest_ratelimiter_free(rl);

        /* qps <= 0: no limit */
        rl = rest_ratelimiter_new(-1, 0);
        for (int i = 0; i < 1000; i++)
                assert_int_equal(rest_ratelimiter_reserve(rl, t0), 0);
        rest_ratelimiter_free(rl);
        assert_int_equal(rest_ratelimiter_reserve(NULL, t0), 0);
}

static void test_reflector_backoff(void **state)
{
        (void)state;
        struct reflector_backoff b = {0};
        static const int64_t want[] = {800, 1600, 3200, 6400, 12800, 25600, 30000, 30000};
        int64_t now = 1000000;
        for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
                assert_int_equal(reflector_backoff_next(&b, now, 0.0), want[i]);
                now += 1000;
        }
        /* jitter adds up to 100% */
        assert_int_equal(reflector_backoff_next(&b, now, 0.5), 45000);
        /* two quiet minutes: back to the start */
        now += 120001;
        assert_int_equal(reflector_backoff_next(&b, now, 0.0), 800);
        assert_int_equal(reflector_backoff_next(&b, now + 10, 0.25), 2000);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_decoder_any_chunking),
            cmocka_unit_test(test_decoder_errors),
            cmocka_unit_test(test_decoder_stops_on_consumer_error),
            cmocka_unit_test(test_error_event_410),
            cmocka_unit_test(test_status_errors),
            cmocka_unit_test(test_query_escaping),
            cmocka_unit_test(test_rate_limiter_token_bucket),
            cmocka_unit_test(test_reflector_backoff),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
