/* SPDX-License-Identifier: Apache-2.0 */
/* The gRPC server (grpc/grpc_server.c) on a unix socket, called by the
 * project's own client (grpc/grpc_conn.c): answers, errors in grpc-go's
 * words, unknown methods, oversized requests, the client's deadline, many
 * connections at once, the calls of one connection side by side, and a
 * stop with a client still connected. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "grpc/grpc.h"
#include "grpc/grpc_server.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

#include <nghttp2/nghttp2.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static atomic_llong last_timeout_ms;

/* Echoes the request reversed. */
static int echo(void *ctx, const uint8_t *req, size_t req_len, int64_t timeout_ms, uint8_t **resp,
                size_t *resp_len, ck_error_t *err)
{
        (void)ctx;
        (void)err;
        atomic_store(&last_timeout_ms, timeout_ms);
        *resp = req_len ? xmalloc(req_len) : NULL;
        for (size_t i = 0; i < req_len; i++)
                (*resp)[i] = req[req_len - 1 - i];
        *resp_len = req_len;
        return 0;
}

static int plain_error(void *ctx, const uint8_t *req, size_t req_len, int64_t timeout_ms,
                       uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        (void)ctx;
        (void)req;
        (void)req_len;
        (void)timeout_ms;
        (void)resp;
        (void)resp_len;
        /* a plain error (code 0): UNKNOWN, as grpc-go makes of it */
        return ck_error_make(err, 0, "failed to get device plugin options: 100%% sure\nnewline");
}

static int not_found(void *ctx, const uint8_t *req, size_t req_len, int64_t timeout_ms,
                     uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        (void)ctx;
        (void)req;
        (void)req_len;
        (void)timeout_ms;
        (void)resp;
        (void)resp_len;
        return ck_error_make_code(err, GRPC_NOT_FOUND, "no such thing");
}

static atomic_int watchers_running, watchers_done;

/* Three messages "w0".."w2", then an error. */
static int watch_then_fail(void *ctx, const uint8_t *req, size_t req_len,
                           struct grpc_server_stream *s, ck_error_t *err)
{
        (void)ctx;
        (void)req;
        (void)req_len;
        for (int i = 0; i < 3; i++) {
                uint8_t m[2] = {'w', (uint8_t)('0' + i)};
                if (grpc_server_stream_send(s, m, 2) < 0)
                        return 0;
        }
        return ck_error_make(err, 0, "ListAndWatch failed");
}

/* One message, then as long as the client stays. */
static int watch_forever(void *ctx, const uint8_t *req, size_t req_len,
                         struct grpc_server_stream *s, ck_error_t *err)
{
        (void)ctx;
        (void)req;
        (void)req_len;
        (void)err;
        atomic_fetch_add(&watchers_running, 1);
        grpc_server_stream_send(s, (const uint8_t *)"hi", 2);
        while (grpc_server_stream_alive(s, 50))
                ;
        atomic_fetch_add(&watchers_done, 1);
        return 0;
}

static atomic_bool released;

/* Waits (up to 5 s) until a Release call has run: answers "late" then,
 * "stuck" when it never came. */
static int block(void *ctx, const uint8_t *req, size_t req_len, int64_t timeout_ms, uint8_t **resp,
                 size_t *resp_len, ck_error_t *err)
{
        (void)ctx;
        (void)req;
        (void)req_len;
        (void)timeout_ms;
        (void)err;
        int waited = 0;
        while (!atomic_load(&released) && waited < 5000) {
                usleep(10000);
                waited += 10;
        }
        const char *a = atomic_load(&released) ? "late" : "stuck";
        *resp = (uint8_t *)xstrdup(a);
        *resp_len = strlen(a);
        return 0;
}

static int release(void *ctx, const uint8_t *req, size_t req_len, int64_t timeout_ms,
                   uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        (void)ctx;
        (void)req;
        (void)req_len;
        (void)timeout_ms;
        (void)err;
        atomic_store(&released, true);
        *resp = (uint8_t *)xstrdup("go");
        *resp_len = 2;
        return 0;
}

/* Answers after 300 ms. */
static int slow(void *ctx, const uint8_t *req, size_t req_len, int64_t timeout_ms, uint8_t **resp,
                size_t *resp_len, ck_error_t *err)
{
        (void)ctx;
        (void)req;
        (void)req_len;
        (void)timeout_ms;
        (void)err;
        usleep(300 * 1000);
        *resp = (uint8_t *)xstrdup("done");
        *resp_len = 4;
        return 0;
}

static const struct grpc_method methods[] = {
    {"/test.Svc/Slow", slow, NULL, NULL},
    {"/test.Svc/Echo", echo, NULL, NULL},
    {"/test.Svc/Block", block, NULL, NULL},
    {"/test.Svc/Release", release, NULL, NULL},
    {"/test.Svc/Fail", plain_error, NULL, NULL},
    {"/test.Svc/NotFound", not_found, NULL, NULL},
    {"/test.Svc/Watch", NULL, watch_then_fail, NULL},
    {"/test.Svc/WatchForever", NULL, watch_forever, NULL},
};

struct fixture {
        char dir[64];
        char path[128];
        struct grpc_server *server;
};

static int setup(void **state)
{
        struct fixture *f = calloc(1, sizeof(*f));
        snprintf(f->dir, sizeof(f->dir), "/tmp/ck-grpcsrv-XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        snprintf(f->path, sizeof(f->path), "%s/s.sock", f->dir);
        ck_error_t err = NULL;
        if (grpc_server_start(f->path, methods, ARRAY_SIZE(methods), &f->server, &err) < 0)
                fail_msg("start: %s", ck_error_msg(err));
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        struct fixture *f = *state;
        grpc_server_stop(f->server);
        /* the socket went with the server */
        struct stat st;
        assert_int_equal(stat(f->path, &st), -1);
        rmdir(f->dir);
        free(f);
        return 0;
}

static void test_answers_and_errors(void **state)
{
        struct fixture *f = *state;
        struct grpc_conn *c = grpc_conn_new(f->path);
        uint8_t *resp = NULL;
        size_t len = 0;
        ck_error_t err = NULL;
        if (grpc_unary(c, "/test.Svc/Echo", (const uint8_t *)"abc", 3, 5000, &resp, &len, &err) < 0)
                fail_msg("echo: %s", ck_error_msg(err));
        assert_int_equal(len, 3);
        assert_memory_equal(resp, "cba", 3);
        free(resp);
        /* the client's deadline reaches the handler */
        long long t = atomic_load(&last_timeout_ms);
        assert_true(t > 1000 && t <= 5000);
        /* an empty message both ways */
        assert_int_equal(grpc_unary(c, "/test.Svc/Echo", NULL, 0, 0, &resp, &len, &err), 0);
        assert_int_equal(len, 0);
        free(resp);
        assert_int_equal(atomic_load(&last_timeout_ms), 0);

        /* a plain error: UNKNOWN, the message intact through the
         * percent-encoding */
        assert_int_equal(grpc_unary(c, "/test.Svc/Fail", NULL, 0, 5000, &resp, &len, &err), -1);
        assert_int_equal(err->code, GRPC_UNKNOWN);
        assert_string_equal(ck_error_msg(err),
                            "rpc error 2: failed to get device plugin options: 100% sure\nnewline");
        ck_error_release(&err);
        assert_int_equal(grpc_unary(c, "/test.Svc/NotFound", NULL, 0, 5000, &resp, &len, &err), -1);
        assert_int_equal(err->code, GRPC_NOT_FOUND);
        ck_error_release(&err);
        assert_int_equal(grpc_unary(c, "/test.Svc/Nope", NULL, 0, 5000, &resp, &len, &err), -1);
        assert_int_equal(err->code, GRPC_UNIMPLEMENTED);
        assert_string_equal(ck_error_msg(err), "rpc error 12: unknown method /test.Svc/Nope");
        ck_error_release(&err);

        /* over 4 MiB: refused, the connection still good */
        size_t big = GRPC_SERVER_MAX_MESSAGE + 1;
        uint8_t *req = calloc(1, big);
        assert_int_equal(grpc_unary(c, "/test.Svc/Echo", req, big, 10000, &resp, &len, &err), -1);
        assert_int_equal(err->code, GRPC_RESOURCE_EXHAUSTED);
        ck_error_release(&err);
        free(req);
        assert_int_equal(
            grpc_unary(c, "/test.Svc/Echo", (const uint8_t *)"x", 1, 5000, &resp, &len, &err), 0);
        free(resp);
        grpc_conn_free(c);
}

struct caller {
        const char *path;
        int ok;
};

static void *call_many(void *arg)
{
        struct caller *cl = arg;
        struct grpc_conn *c = grpc_conn_new(cl->path);
        for (int i = 0; i < 20; i++) {
                uint8_t *resp = NULL;
                size_t len = 0;
                ck_error_t err = NULL;
                char msg[16];
                int n = snprintf(msg, sizeof(msg), "m%d", i);
                if (grpc_unary(c, "/test.Svc/Echo", (const uint8_t *)msg, (size_t)n, 5000, &resp,
                               &len, &err) == 0 &&
                    len == (size_t)n && resp[len - 1] == 'm')
                        cl->ok++;
                free(resp);
                ck_error_release(&err);
        }
        grpc_conn_free(c);
        return NULL;
}

static void test_connections_at_once(void **state)
{
        struct fixture *f = *state;
        pthread_t t[8];
        struct caller cl[8];
        for (int i = 0; i < 8; i++) {
                cl[i] = (struct caller){.path = f->path};
                assert_int_equal(pthread_create(&t[i], NULL, call_many, &cl[i]), 0);
        }
        for (int i = 0; i < 8; i++) {
                pthread_join(t[i], NULL);
                assert_int_equal(cl[i].ok, 20);
        }
}

/* A stop with a client connected: the connection is closed, the stop
 * returns. */
static void test_stop_with_a_client(void **state)
{
        struct fixture *f = *state;
        struct grpc_conn *c = grpc_conn_new(f->path);
        uint8_t *resp = NULL;
        size_t len = 0;
        ck_error_t err = NULL;
        assert_int_equal(
            grpc_unary(c, "/test.Svc/Echo", (const uint8_t *)"a", 1, 5000, &resp, &len, &err), 0);
        free(resp);
        grpc_server_stop(f->server);
        f->server = NULL;
        assert_int_equal(
            grpc_unary(c, "/test.Svc/Echo", (const uint8_t *)"a", 1, 2000, &resp, &len, &err), -1);
        assert_int_equal(err->code, GRPC_UNAVAILABLE);
        ck_error_release(&err);
        grpc_conn_free(c);
}

/* Server streams: the messages in order, then the method's status; a
 * method waiting for the client learns when it goes. */
static void test_streams(void **state)
{
        struct fixture *f = *state;
        struct grpc_conn *c = grpc_conn_new(f->path);
        ck_error_t err = NULL;
        assert_int_equal(grpc_stream_start(c, "/test.Svc/Watch", NULL, 0, &err), 0);
        for (int i = 0; i < 3; i++) {
                uint8_t *m = NULL;
                size_t n = 0;
                int r = grpc_stream_recv(c, 5000, &m, &n, &err);
                if (r != 1)
                        fail_msg("message %d: %d %s", i, r, err ? ck_error_msg(err) : "");
                assert_int_equal(n, 2);
                assert_int_equal(m[1], '0' + i);
                free(m);
        }
        uint8_t *m = NULL;
        size_t n = 0;
        assert_int_equal(grpc_stream_recv(c, 5000, &m, &n, &err), -1);
        assert_int_equal(err->code, GRPC_UNKNOWN);
        assert_string_equal(ck_error_msg(err), "rpc error 2: ListAndWatch failed");
        ck_error_release(&err);

        /* a stream that lasts: the client gives it up, the method ends */
        assert_int_equal(grpc_stream_start(c, "/test.Svc/WatchForever", NULL, 0, &err), 0);
        assert_int_equal(grpc_stream_recv(c, 5000, &m, &n, &err), 1);
        free(m);
        assert_int_equal(grpc_stream_recv(c, 200, &m, &n, &err), 0); /* nothing more */
        grpc_stream_cancel(c);
        for (int i = 0; i < 100 && atomic_load(&watchers_done) == 0; i++)
                usleep(50000);
        assert_int_equal(atomic_load(&watchers_done), 1);

        /* and one the server's stop ends */
        assert_int_equal(grpc_stream_start(c, "/test.Svc/WatchForever", NULL, 0, &err), 0);
        assert_int_equal(grpc_stream_recv(c, 5000, &m, &n, &err), 1);
        free(m);
        grpc_server_stop(f->server);
        f->server = NULL;
        assert_int_equal(atomic_load(&watchers_done), 2);
        assert_int_equal(grpc_stream_recv(c, 5000, &m, &n, &err), -1);
        ck_error_release(&err);
        grpc_conn_free(c);
}

static ssize_t raw_send(nghttp2_session *session, const uint8_t *data, size_t len, int flags,
                        void *user_data)
{
        (void)session;
        (void)flags;
        int fd = *(int *)user_data;
        ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
        return n < 0 ? NGHTTP2_ERR_CALLBACK_FAILURE : n;
}

static bool ping_acked;

static int raw_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *user_data)
{
        (void)session;
        (void)user_data;
        if (frame->hd.type == NGHTTP2_PING && (frame->hd.flags & NGHTTP2_FLAG_ACK))
                ping_acked = true;
        return 0;
}

/* The answers of a raw client's streams, and how many ended. */
struct raw_answers {
        char data[4][16];
        int n_closed;
};

static int raw_data(nghttp2_session *session, uint8_t flags, int32_t stream_id, const uint8_t *data,
                    size_t len, void *user_data)
{
        (void)session;
        (void)flags;
        (void)user_data;
        struct raw_answers *a = nghttp2_session_get_stream_user_data(session, stream_id);
        /* the message after its 5-byte prefix; stream ids 1 and 3 */
        if (a && len > 5 && len - 5 < sizeof(a->data[0]))
                memcpy(a->data[stream_id / 2], data + 5, len - 5);
        return 0;
}

static int raw_close(nghttp2_session *session, int32_t stream_id, uint32_t error_code,
                     void *user_data)
{
        (void)error_code;
        (void)user_data;
        struct raw_answers *a = nghttp2_session_get_stream_user_data(session, stream_id);
        (void)stream_id;
        if (a)
                a->n_closed++;
        return 0;
}

static ssize_t raw_empty_body(nghttp2_session *session, int32_t stream_id, uint8_t *buf,
                              size_t length, uint32_t *data_flags, nghttp2_data_source *source,
                              void *user_data)
{
        (void)session;
        (void)stream_id;
        (void)length;
        (void)source;
        (void)user_data;
        /* one empty message: its prefix */
        memset(buf, 0, 5);
        *data_flags |= NGHTTP2_DATA_FLAG_EOF;
        return 5;
}

/* A raw client's session on the fixture's socket: PING acks noted, the
 * answers of streams given a struct raw_answers recorded. */
static nghttp2_session *raw_session(struct fixture *f, int *fd)
{
        *fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(*fd >= 0);
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        memcpy(sa.sun_path, f->path, strlen(f->path) + 1);
        assert_int_equal(connect(*fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        nghttp2_session_callbacks *cbs;
        assert_int_equal(nghttp2_session_callbacks_new(&cbs), 0);
        nghttp2_session_callbacks_set_send_callback(cbs, raw_send);
        nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, raw_frame_recv);
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, raw_data);
        nghttp2_session_callbacks_set_on_stream_close_callback(cbs, raw_close);
        nghttp2_session *session;
        assert_int_equal(nghttp2_session_client_new(&session, cbs, fd), 0);
        nghttp2_session_callbacks_del(cbs);
        assert_int_equal(nghttp2_submit_settings(session, NGHTTP2_FLAG_NONE, NULL, 0), 0);
        return session;
}

/* The request headers of a call of path (the strings must outlive nv). */
static void raw_headers(nghttp2_nv nv[5], const char *path)
{
        static const char *const names[] = {":method", ":scheme", ":path", ":authority",
                                            "content-type"};
        const char *values[] = {"POST", "http", path, "localhost", "application/grpc"};
        for (int i = 0; i < 5; i++)
                nv[i] = (nghttp2_nv){(uint8_t *)names[i], (uint8_t *)values[i], strlen(names[i]),
                                     strlen(values[i]), NGHTTP2_NV_FLAG_NONE};
}

/* A call of path with an empty message, sent; its stream's id.  answers:
 * where its answer goes (NULL: nowhere). */
static int32_t raw_call(nghttp2_session *session, const char *path, struct raw_answers *answers)
{
        nghttp2_nv nv[5];
        raw_headers(nv, path);
        nghttp2_data_provider prd = {.read_callback = raw_empty_body};
        int32_t id = nghttp2_submit_request(session, NULL, nv, 5, &prd, answers);
        assert_true(id > 0);
        assert_int_equal(nghttp2_session_send(session), 0);
        return id;
}

/* A stream the server began and never saw end (a request whose DATA never
 * came), open when the server stops: freed with its connection (ASan's leak
 * check fails this test otherwise: nghttp2_session_del calls no close
 * callback). */
static void test_stop_with_a_stream_half_sent(void **state)
{
        struct fixture *f = *state;
        int fd;
        nghttp2_session *session = raw_session(f, &fd);
        nghttp2_nv nv[5];
        raw_headers(nv, "/test.Svc/Echo");
        /* HEADERS without END_STREAM: the request goes on, as far as the
         * server knows */
        assert_true(nghttp2_submit_headers(session, NGHTTP2_FLAG_NONE, -1, NULL, nv, 5, NULL) > 0);
        assert_int_equal(nghttp2_session_send(session), 0);
        /* frames are read in order: the PING's ACK says the HEADERS are in */
        assert_int_equal(nghttp2_submit_ping(session, NGHTTP2_FLAG_NONE, NULL), 0);
        assert_int_equal(nghttp2_session_send(session), 0);
        uint8_t buf[4096];
        while (!ping_acked) {
                ssize_t n = recv(fd, buf, sizeof(buf), 0);
                assert_true(n > 0);
                assert_true(nghttp2_session_mem_recv(session, buf, (size_t)n) == n);
        }
        grpc_server_stop(f->server);
        f->server = NULL;
        nghttp2_session_del(session);
        close(fd);
}

/* Two calls on one connection, as grpc-go multiplexes them: the first
 * waits until the second has run, so it answers "late" only when they run
 * side by side ("stuck" after 5 s when the calls of a connection run one
 * after the other). */
static void test_calls_of_a_connection_run_side_by_side(void **state)
{
        struct fixture *f = *state;
        atomic_store(&released, false);
        int fd;
        nghttp2_session *session = raw_session(f, &fd);
        struct raw_answers a = {0};
        assert_int_equal(raw_call(session, "/test.Svc/Block", &a), 1);
        assert_int_equal(raw_call(session, "/test.Svc/Release", &a), 3);
        uint8_t buf[4096];
        while (a.n_closed < 2) {
                ssize_t n = recv(fd, buf, sizeof(buf), 0);
                assert_true(n > 0);
                assert_true(nghttp2_session_mem_recv(session, buf, (size_t)n) == n);
                assert_int_equal(nghttp2_session_send(session), 0);
        }
        assert_string_equal(a.data[1], "go");
        assert_string_equal(a.data[0], "late");
        nghttp2_session_del(session);
        close(fd);
}

/* A call whose client resets its stream, then one whose client goes away,
 * then a stop while a call runs: each call finishes on its thread, its
 * answer is dropped, nothing is touched after it is freed (ASan). */
static void test_calls_outlive_their_stream_and_connection(void **state)
{
        struct fixture *f = *state;
        int fd;
        nghttp2_session *session = raw_session(f, &fd);
        int32_t id = raw_call(session, "/test.Svc/Slow", NULL);
        assert_int_equal(nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL),
                         0);
        assert_int_equal(nghttp2_session_send(session), 0);
        usleep(500 * 1000); /* the call ended meanwhile, its stream gone */
        /* the connection still serves: a PING comes back */
        ping_acked = false;
        assert_int_equal(nghttp2_submit_ping(session, NGHTTP2_FLAG_NONE, NULL), 0);
        assert_int_equal(nghttp2_session_send(session), 0);
        uint8_t buf[4096];
        while (!ping_acked) {
                ssize_t n = recv(fd, buf, sizeof(buf), 0);
                assert_true(n > 0);
                assert_true(nghttp2_session_mem_recv(session, buf, (size_t)n) == n);
        }
        /* a client gone while its call runs */
        raw_call(session, "/test.Svc/Slow", NULL);
        nghttp2_session_del(session);
        close(fd);
        usleep(500 * 1000);
        /* a stop while a call runs: it waits for the call */
        session = raw_session(f, &fd);
        raw_call(session, "/test.Svc/Slow", NULL);
        usleep(50 * 1000);
        grpc_server_stop(f->server);
        f->server = NULL;
        nghttp2_session_del(session);
        close(fd);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_answers_and_errors, setup, teardown),
            cmocka_unit_test_setup_teardown(test_connections_at_once, setup, teardown),
            cmocka_unit_test_setup_teardown(test_stop_with_a_client, setup, teardown),
            cmocka_unit_test_setup_teardown(test_streams, setup, teardown),
            cmocka_unit_test_setup_teardown(test_stop_with_a_stream_half_sent, setup, teardown),
            cmocka_unit_test_setup_teardown(test_calls_of_a_connection_run_side_by_side, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_calls_outlive_their_stream_and_connection, setup,
                                            teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
