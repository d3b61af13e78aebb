/* SPDX-License-Identifier: Apache-2.0 */
/* The gRPC connection (grpc/grpc_conn.c) against an in-process nghttp2 server
 * on a unix socket: what a caller sees for answers, errors, silence,
 * dropped connections and exhausted stream ids. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "util/fsutil.h"

#include "grpc/grpc.h"
#include "fake_grpc_server.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* What the handler does next; set by the test before a call. */
struct plan {
        atomic_int kind;
        int grpc_status;
        const char *grpc_message;
        int http_status;
        size_t chunk;
        bool close_after, goaway_after, abandon_after;
        bool compressed, oversized;
        size_t big_reply;    /* > 0: answer with this many bytes instead of the echo */
        int stream_messages; /* > 0: answer with this many messages "m0", "m1"... */
};

static void handler(struct fake_server *s, const struct fake_request *req, struct fake_reply *reply)
{
        struct plan *p = s->data;
        reply->kind = (enum fake_reply_kind)atomic_load(&p->kind);
        reply->grpc_status = p->grpc_status;
        reply->grpc_message = p->grpc_message;
        reply->http_status = p->http_status;
        reply->chunk = p->chunk;
        reply->close_after = p->close_after;
        reply->goaway_after = p->goaway_after;
        reply->abandon_after = p->abandon_after;
        if (p->compressed || p->oversized) {
                /* a bare prefix: flag 1, or a length over the limit */
                reply->body = calloc(1, 5);
                reply->body_len = 5;
                reply->raw_body = true;
                if (p->compressed) {
                        reply->body[0] = 1;
                } else {
                        grpc_write_message_prefix(reply->body, GRPC_MAX_MESSAGE_SIZE + 1);
                }
                return;
        }
        if (p->stream_messages > 0) {
                /* a server stream: several framed messages in one response */
                reply->body = calloc((size_t)p->stream_messages, GRPC_PREFIX_SIZE + 2);
                for (int i = 0; i < p->stream_messages; i++) {
                        uint8_t *m = reply->body + (size_t)i * (GRPC_PREFIX_SIZE + 2);
                        grpc_write_message_prefix(m, 2);
                        m[GRPC_PREFIX_SIZE] = 'm';
                        m[GRPC_PREFIX_SIZE + 1] = (uint8_t)('0' + i);
                }
                reply->body_len = (size_t)p->stream_messages * (GRPC_PREFIX_SIZE + 2);
                reply->raw_body = true;
                return;
        }
        if (p->big_reply > 0) {
                reply->body = malloc(p->big_reply);
                for (size_t i = 0; i < p->big_reply; i++)
                        reply->body[i] = (uint8_t)i;
                reply->body_len = p->big_reply;
                return;
        }
        /* Echo the request message back. */
        reply->body = malloc(req->msg_len + 1);
        memcpy(reply->body, req->msg, req->msg_len);
        reply->body_len = req->msg_len;
}

struct fixture {
        struct plan plan;
        struct fake_server *server;
        struct grpc_conn *conn;
};

static int setup(void **state)
{
        struct fixture *f = calloc(1, sizeof(*f));
        atomic_init(&f->plan.kind, FAKE_REPLY_MESSAGE);
        f->server = fake_server_start(handler, &f->plan);
        f->conn = grpc_conn_new(f->server->path);
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        struct fixture *f = *state;
        grpc_conn_free(f->conn);
        fake_server_stop(f->server);
        free(f);
        return 0;
}

/* A call with payload `msg` that must succeed and echo it. */
static void call_ok(struct fixture *f, const char *msg)
{
        uint8_t *resp = NULL;
        size_t len = 0;
        ck_error_t err = NULL;
        int r = grpc_unary(f->conn, "/runtime.v1.RuntimeService/Version", (const uint8_t *)msg,
                           strlen(msg), 5000, &resp, &len, &err);
        if (r < 0)
                fail_msg("call failed: %s", ck_error_msg(err));
        assert_int_equal(len, strlen(msg));
        assert_memory_equal(resp, msg, len);
        free(resp);
}

/* A call that must fail; returns the error. */
static ck_error_t call_fail(struct fixture *f, int64_t timeout_ms)
{
        uint8_t *resp = NULL;
        size_t len = 0;
        ck_error_t err = NULL;
        int r = grpc_unary(f->conn, "/runtime.v1.RuntimeService/Status", (const uint8_t *)"x", 1,
                           timeout_ms, &resp, &len, &err);
        assert_true(r < 0);
        assert_null(resp);
        assert_non_null(err);
        return err;
}

static void test_unary_call_sends_grpc_headers_and_gets_the_message(void **state)
{
        struct fixture *f = *state;
        call_ok(f, "hello");
        pthread_mutex_lock(&f->server->lock);
        assert_string_equal(f->server->last_path, "/runtime.v1.RuntimeService/Version");
        assert_string_equal(f->server->last_te, "trailers");
        assert_string_equal(f->server->last_content_type, "application/grpc");
        int64_t ms = 0;
        ck_error_t err = NULL;
        assert_int_equal(
            grpc_parse_timeout(f->server->last_timeout, strlen(f->server->last_timeout), &ms, &err),
            0);
        pthread_mutex_unlock(&f->server->lock);
        /* the call's 5 s deadline, less the time it took to send (a busy
         * machine may take a while) */
        assert_true(ms > 1000 && ms <= 5000);
        /* the connection is reused */
        call_ok(f, "again");
        assert_int_equal(atomic_load(&f->server->connections), 1);
}

static void test_large_messages_in_many_frames(void **state)
{
        struct fixture *f = *state;
        /* A large response (a ListContainers of a busy node): many DATA frames,
         * far beyond HTTP/2's default 64 KiB window. */
        size_t n = 12 * 1024 * 1024;
        f->plan.big_reply = n;
        uint8_t *resp = NULL;
        size_t len = 0;
        ck_error_t err = NULL;
        int64_t start = fs_now_mono_ms();
        if (grpc_unary(f->conn, "/runtime.v1.RuntimeService/ListContainers", NULL, 0, 20000, &resp,
                       &len, &err) < 0)
                fail_msg("call failed: %s", ck_error_msg(err));
        int64_t took = fs_now_mono_ms() - start;
        assert_int_equal(len, n);
        for (size_t i = 0; i < n; i += 4093)
                assert_int_equal(resp[i], (uint8_t)i);
        free(resp);
        f->plan.big_reply = 0;
        /* our windows are large: no WINDOW_UPDATE round trip per 64 KiB */
        assert_true(took < 10000);

        /* A request larger than the server's 64 KiB window: sent as the
         * server opens its window. */
        size_t m = 256 * 1024;
        char *big = malloc(m + 1);
        for (size_t i = 0; i < m; i++)
                big[i] = (char)('a' + i % 26);
        big[m] = '\0';
        call_ok(f, big);
        free(big);

        f->plan.chunk = 3; /* the prefix split across DATA frames */
        call_ok(f, "tiny frames");
}

static void test_error_status_with_message(void **state)
{
        struct fixture *f = *state;
        f->plan.grpc_status = GRPC_NOT_FOUND;
        f->plan.grpc_message = "container %22web%22 not found";
        ck_error_t err = call_fail(f, 5000);
        assert_int_equal(err->code, GRPC_NOT_FOUND);
        assert_string_equal(err->msg, "rpc error 5: container \"web\" not found");
        ck_error_release(&err);
        /* an error status leaves the connection usable */
        f->plan.grpc_status = 0;
        f->plan.grpc_message = NULL;
        call_ok(f, "next");
        assert_int_equal(atomic_load(&f->server->connections), 1);
}

static void test_trailers_only_response(void **state)
{
        struct fixture *f = *state;
        atomic_store(&f->plan.kind, FAKE_REPLY_TRAILERS_ONLY);
        f->plan.grpc_status = GRPC_UNIMPLEMENTED;
        f->plan.grpc_message = "unknown service runtime.v1.RuntimeService";
        ck_error_t err = call_fail(f, 5000);
        assert_int_equal(err->code, GRPC_UNIMPLEMENTED);
        assert_string_equal(err->msg, "rpc error 12: unknown service runtime.v1.RuntimeService");
        ck_error_release(&err);
}

static void test_non_200_http_status(void **state)
{
        struct fixture *f = *state;
        atomic_store(&f->plan.kind, FAKE_REPLY_HTTP_STATUS);
        f->plan.http_status = 503;
        ck_error_t err = call_fail(f, 5000);
        assert_int_equal(err->code, GRPC_UNAVAILABLE);
        assert_non_null(strstr(err->msg, "503"));
        ck_error_release(&err);
}

static void test_compressed_and_oversized_messages_are_rejected(void **state)
{
        struct fixture *f = *state;
        f->plan.compressed = true;
        int64_t start = fs_now_mono_ms();
        ck_error_t err = call_fail(f, 30000);
        /* rejected as soon as the prefix arrives (INTERNAL), not at the
         * deadline of 30 s (DEADLINE_EXCEEDED) */
        assert_int_equal(err->code, GRPC_INTERNAL);
        assert_true(fs_now_mono_ms() - start < 15000);
        assert_non_null(strstr(err->msg, "compressed"));
        ck_error_release(&err);

        f->plan.compressed = false;
        f->plan.oversized = true;
        err = call_fail(f, 5000);
        assert_int_equal(err->code, GRPC_RESOURCE_EXHAUSTED);
        ck_error_release(&err);

        f->plan.oversized = false;
        call_ok(f, "still fine");
}

static void test_silent_server_hits_the_deadline(void **state)
{
        struct fixture *f = *state;
        atomic_store(&f->plan.kind, FAKE_REPLY_NONE);
        int64_t start = fs_now_mono_ms();
        ck_error_t err = call_fail(f, 300);
        int64_t took = fs_now_mono_ms() - start;
        assert_int_equal(err->code, GRPC_DEADLINE_EXCEEDED);
        assert_non_null(strstr(err->msg, "rpc error 4: "));
        ck_error_release(&err);
        /* at the deadline: not before it, and not left hanging after it */
        assert_true(took >= 300);
        assert_true(took < 300 + 10000);
        /* the stream was reset; the connection serves the next call */
        atomic_store(&f->plan.kind, FAKE_REPLY_MESSAGE);
        call_ok(f, "after timeout");
        assert_int_equal(atomic_load(&f->server->connections), 1);
}

static void test_server_closing_the_connection_means_reconnect(void **state)
{
        struct fixture *f = *state;
        f->plan.close_after = true;
        call_ok(f, "one");
        assert_true(fake_server_wait_closed(f->server, 1));
        call_ok(f, "two");
        assert_true(fake_server_wait_closed(f->server, 2));
        call_ok(f, "three");
        assert_int_equal(atomic_load(&f->server->connections), 3);
        assert_int_equal(atomic_load(&f->server->requests), 3);
}

static void test_call_retried_when_the_old_connection_breaks_on_write(void **state)
{
        struct fixture *f = *state;
        /* The server stops reading (SHUT_RD) without closing: nothing to see while idle,
         * the next call's first write fails (EPIPE) before the server could have
         * seen the request, so it is retried once on a new connection. */
        f->plan.abandon_after = true;
        call_ok(f, "one");
        assert_true(fake_server_wait_closed(f->server, 1));
        fake_server_stop_reading_abandoned(f->server);
        f->plan.abandon_after = false;
        call_ok(f, "two");
        assert_int_equal(atomic_load(&f->server->connections), 2);
        assert_int_equal(atomic_load(&f->server->requests), 2);
}

static void test_goaway_means_reconnect(void **state)
{
        struct fixture *f = *state;
        f->plan.goaway_after = true;
        call_ok(f, "one");
        f->plan.goaway_after = false;
        call_ok(f, "two");
        call_ok(f, "three");
        assert_int_equal(atomic_load(&f->server->connections), 2);
}

static void test_server_restart_between_calls(void **state)
{
        struct fixture *f = *state;
        call_ok(f, "before");
        assert_true(grpc_conn_is_connected(f->conn));
        fake_server_restart(f->server);
        call_ok(f, "after the restart");
        fake_server_restart(f->server);
        call_ok(f, "after another one");
        assert_int_equal(atomic_load(&f->server->connections), 3);
}

static void test_stream_ids_exhausted_means_reconnect(void **state)
{
        struct fixture *f = *state;
        grpc_conn_set_max_stream_id(f->conn, 3); /* streams 1 and 3, then a new connection */
        call_ok(f, "1");
        call_ok(f, "3");
        call_ok(f, "new connection");
        assert_int_equal(atomic_load(&f->server->connections), 2);
}

static void test_connect_failure(void **state)
{
        (void)state;
        struct grpc_conn *c = grpc_conn_new("/nonexistent/ckubelet-test.sock");
        uint8_t *resp = NULL;
        size_t len = 0;
        ck_error_t err = NULL;
        assert_true(grpc_unary(c, "/x/Y", NULL, 0, 1000, &resp, &len, &err) < 0);
        assert_int_equal(err->code, GRPC_UNAVAILABLE);
        assert_int_equal(err->status, ENOENT);
        assert_non_null(strstr(err->msg, "/nonexistent/ckubelet-test.sock"));
        assert_false(grpc_conn_is_connected(c));
        ck_error_release(&err);
        grpc_conn_free(c);
}

/* A server-streaming call: each message as it comes, then how the stream
 * ended: cleanly (code OK) or with the server's status. */
static void test_server_stream(void **state)
{
        struct fixture *f = *state;
        f->plan.stream_messages = 3;
        ck_error_t err = NULL;
        if (grpc_stream_start(f->conn, "/v1beta1.DevicePlugin/ListAndWatch", NULL, 0, &err) < 0)
                fail_msg("start: %s", ck_error_msg(err));
        for (int i = 0; i < 3; i++) {
                uint8_t *msg = NULL;
                size_t len = 0;
                int r = grpc_stream_recv(f->conn, 5000, &msg, &len, &err);
                if (r != 1)
                        fail_msg("message %d: r=%d %s", i, r, err ? ck_error_msg(err) : "");
                assert_int_equal(len, 2);
                assert_int_equal(msg[1], '0' + i);
                free(msg);
        }
        uint8_t *msg = NULL;
        size_t len = 0;
        assert_int_equal(grpc_stream_recv(f->conn, 5000, &msg, &len, &err), -1);
        assert_int_equal(err->code, GRPC_OK);
        ck_error_release(&err);
        pthread_mutex_lock(&f->server->lock);
        assert_string_equal(f->server->last_path, "/v1beta1.DevicePlugin/ListAndWatch");
        assert_string_equal(f->server->last_timeout, ""); /* no deadline */
        assert_string_equal(f->server->last_te, "trailers");
        assert_string_equal(f->server->last_content_type, "application/grpc");
        pthread_mutex_unlock(&f->server->lock);

        /* an error status ends it, after the messages before it */
        f->plan.stream_messages = 1;
        f->plan.grpc_status = GRPC_UNKNOWN;
        f->plan.grpc_message = "ListAndWatch failed";
        assert_int_equal(grpc_stream_start(f->conn, "/x.Y/Z", NULL, 0, &err), 0);
        assert_int_equal(grpc_stream_recv(f->conn, 5000, &msg, &len, &err), 1);
        free(msg);
        assert_int_equal(grpc_stream_recv(f->conn, 5000, &msg, &len, &err), -1);
        assert_int_equal(err->code, GRPC_UNKNOWN);
        assert_string_equal(ck_error_msg(err), "rpc error 2: ListAndWatch failed");
        ck_error_release(&err);

        /* a stream given up: the connection goes with it, the next call
         * opens another */
        f->plan.grpc_status = 0;
        f->plan.grpc_message = NULL;
        assert_int_equal(grpc_stream_start(f->conn, "/x.Y/Z", NULL, 0, &err), 0);
        grpc_stream_cancel(f->conn);
        assert_false(grpc_conn_is_connected(f->conn));
        f->plan.stream_messages = 0;
        call_ok(f, "after the stream");
}

/* Dialing a socket that appears later: retried until it does. */
static void test_dial_waits_for_the_socket(void **state)
{
        (void)state;
        struct grpc_conn *c = grpc_conn_new("/nonexistent-dir/none.sock");
        ck_error_t err = NULL;
        int64_t start = fs_now_mono_ms();
        assert_int_equal(grpc_conn_dial(c, 500, &err), -1);
        assert_int_equal(err->code, GRPC_DEADLINE_EXCEEDED);
        assert_true(fs_now_mono_ms() - start >= 300);
        ck_error_release(&err);
        grpc_conn_free(c);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_unary_call_sends_grpc_headers_and_gets_the_message,
                                            setup, teardown),
            cmocka_unit_test_setup_teardown(test_large_messages_in_many_frames, setup, teardown),
            cmocka_unit_test_setup_teardown(test_error_status_with_message, setup, teardown),
            cmocka_unit_test_setup_teardown(test_trailers_only_response, setup, teardown),
            cmocka_unit_test_setup_teardown(test_non_200_http_status, setup, teardown),
            cmocka_unit_test_setup_teardown(test_compressed_and_oversized_messages_are_rejected,
                                            setup, teardown),
            cmocka_unit_test_setup_teardown(test_silent_server_hits_the_deadline, setup, teardown),
            cmocka_unit_test_setup_teardown(test_server_closing_the_connection_means_reconnect,
                                            setup, teardown),
            cmocka_unit_test_setup_teardown(
                test_call_retried_when_the_old_connection_breaks_on_write, setup, teardown),
            cmocka_unit_test_setup_teardown(test_goaway_means_reconnect, setup, teardown),
            cmocka_unit_test_setup_teardown(test_server_restart_between_calls, setup, teardown),
            cmocka_unit_test_setup_teardown(test_stream_ids_exhausted_means_reconnect, setup,
                                            teardown),
            cmocka_unit_test(test_connect_failure),
            cmocka_unit_test_setup_teardown(test_server_stream, setup, teardown),
            cmocka_unit_test(test_dial_waits_for_the_socket),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
