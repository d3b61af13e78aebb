/* SPDX-License-Identifier: Apache-2.0 */
/* The read-only HTTP port over real loopback sockets, and its request parser. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "server/http_request.h"
#include "server/readonly.h"
#include "util/error.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static atomic_int pods_calls;

static json_t *fake_pods(void *ctx)
{
        (void)ctx;
        atomic_fetch_add(&pods_calls, 1);
        return json_pack("{s:s, s:s, s:{s:s}, s:[{s:{s:s, s:s}}]}", "kind", "PodList", "apiVersion",
                         "v1", "metadata", "resourceVersion", "", "items", "metadata", "name",
                         "web-node1", "namespace", "default");
}

static int connect_to(int family, int port)
{
        int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(fd >= 0);
        struct timeval tv = {.tv_sec = 3};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        int rc;
        if (family == AF_INET6) {
                struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
                inet_pton(AF_INET6, "::1", &a.sin6_addr);
                rc = connect(fd, (struct sockaddr *)&a, sizeof(a));
        } else {
                struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
                a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                rc = connect(fd, (struct sockaddr *)&a, sizeof(a));
        }
        assert_int_equal(rc, 0);
        return fd;
}

static void send_all(int fd, const char *data, size_t len)
{
        while (len > 0) {
                ssize_t w = send(fd, data, len, MSG_NOSIGNAL);
                if (w < 0 && errno == EINTR)
                        continue;
                assert_true(w > 0);
                data += w;
                len -= (size_t)w;
        }
}

struct response {
        int code;
        char *raw;  /* whole response */
        char *body; /* points into raw */
        long content_length;
};

static void response_free(struct response *r)
{
        free(r->raw);
        memset(r, 0, sizeof(*r));
}

/* Reads to EOF (the server closes after one response). */
static void read_response(int fd, struct response *r)
{
        size_t cap = 4096, len = 0;
        char *buf = malloc(cap);
        for (;;) {
                if (len + 1 >= cap)
                        buf = realloc(buf, cap *= 2);
                ssize_t n = recv(fd, buf + len, cap - len - 1, 0);
                if (n < 0 && errno == EINTR)
                        continue;
                assert_true(n >= 0); /* not a timeout */
                if (n == 0)
                        break;
                len += (size_t)n;
        }
        buf[len] = '\0';
        memset(r, 0, sizeof(*r));
        r->raw = buf;
        r->content_length = -1;
        assert_int_equal(sscanf(buf, "HTTP/1.1 %d", &r->code), 1);
        char *end = strstr(buf, "\r\n\r\n");
        assert_non_null(end);
        r->body = end + 4;
        const char *cl = strcasestr(buf, "\r\nContent-Length: ");
        if (cl != NULL && cl < end)
                r->content_length = strtol(cl + 18, NULL, 10);
        assert_non_null(strcasestr(buf, "\r\nConnection: close\r\n"));
}

static void request(int port, const char *req, struct response *r)
{
        int fd = connect_to(AF_INET, port);
        send_all(fd, req, strlen(req));
        read_response(fd, r);
        close(fd);
}

struct fixture {
        struct readonly_server *s;
        int port;
};

static int setup(void **state)
{
        struct fixture *f = calloc(1, sizeof(*f));
        ck_error_t err = NULL;
        int rc = readonly_server_start("127.0.0.1", 0, fake_pods, NULL, &f->s, &err);
        if (rc < 0)
                fail_msg("start: %s", ck_error_msg(err));
        f->port = readonly_server_port(f->s);
        assert_true(f->port > 0);
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        struct fixture *f = *state;
        readonly_server_stop(f->s);
        free(f);
        return 0;
}

static void test_healthz_ok(void **state)
{
        struct fixture *f = *state;
        struct response r;
        request(f->port, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n", &r);
        assert_int_equal(r.code, 200);
        assert_string_equal(r.body, "ok");
        assert_int_equal(r.content_length, 2);
        response_free(&r);
}

static void test_pods_returns_callback_json(void **state)
{
        struct fixture *f = *state;
        struct response r;
        request(f->port, "GET /pods HTTP/1.1\r\nHost: localhost\r\nAccept: */*\r\n\r\n", &r);
        assert_int_equal(r.code, 200);
        assert_non_null(strcasestr(r.raw, "\r\nContent-Type: application/json\r\n"));
        assert_int_equal(r.content_length, (long)strlen(r.body));
        json_error_t jerr;
        json_t *got = json_loads(r.body, 0, &jerr);
        assert_non_null(got);
        json_t *want = fake_pods(NULL);
        assert_true(json_equal(got, want));
        json_decref(got);
        json_decref(want);
        response_free(&r);
}

static void test_query_string_is_ignored_for_routing(void **state)
{
        struct fixture *f = *state;
        struct response r;
        request(f->port, "GET /healthz?verbose HTTP/1.0\r\n\r\n", &r);
        assert_int_equal(r.code, 200);
        assert_string_equal(r.body, "ok");
        response_free(&r);
}

static void test_head_has_length_but_no_body(void **state)
{
        struct fixture *f = *state;
        struct response r;
        request(f->port, "HEAD /healthz HTTP/1.1\r\n\r\n", &r);
        assert_int_equal(r.code, 200);
        assert_int_equal(r.content_length, 2);
        assert_string_equal(r.body, "");
        response_free(&r);
}

static void test_unknown_path_404(void **state)
{
        struct fixture *f = *state;
        struct response r;
        request(f->port, "GET /x HTTP/1.1\r\n\r\n", &r);
        assert_int_equal(r.code, 404);
        response_free(&r);
        request(f->port, "GET /podsx HTTP/1.1\r\n\r\n", &r);
        assert_int_equal(r.code, 404);
        response_free(&r);
}

static void test_post_405(void **state)
{
        struct fixture *f = *state;
        struct response r;
        int before = atomic_load(&pods_calls);
        request(f->port, "POST /pods HTTP/1.1\r\nContent-Length: 4\r\n\r\nabcd", &r);
        assert_int_equal(r.code, 405);
        assert_non_null(strcasestr(r.raw, "\r\nAllow: GET, HEAD\r\n"));
        assert_int_equal(atomic_load(&pods_calls), before); /* nothing was served */
        response_free(&r);
}

static void test_malformed_400(void **state)
{
        struct fixture *f = *state;
        const char *bad[] = {
            "GET\r\n\r\n",
            "GET /healthz\r\n\r\n",
            "GET /healthz HTTP/2.0\r\n\r\n",
            "GET healthz HTTP/1.1\r\n\r\n",
            "G(T /healthz HTTP/1.1\r\n\r\n",
            "GET /healthz HTTP/1.1\r\nNo colon here\r\n\r\n",
            "GET /healthz HTTP/1.1\r\nX: a\r\n folded\r\n\r\n",
            "GET /healthz HTTP/1.1\r\nContent-Length: 1x\r\n\r\n",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                struct response r;
                request(f->port, bad[i], &r);
                if (r.code != 400)
                        fail_msg("request %zu: got %d, want 400", i, r.code);
                response_free(&r);
        }
}

static void test_oversized_request_431(void **state)
{
        struct fixture *f = *state;
        size_t n = 10000;
        char *req = malloc(n + 64);
        strcpy(req, "GET /healthz HTTP/1.1\r\nX-Big: ");
        size_t off = strlen(req);
        memset(req + off, 'a', n);
        req[off + n] = '\0';
        int fd = connect_to(AF_INET, f->port);
        /* the server answers once 8 KiB arrived and stops reading: the
         * send may fail part way, the answer is what matters */
        send(fd, req, strlen(req), MSG_NOSIGNAL);
        struct response r;
        read_response(fd, &r);
        assert_int_equal(r.code, 431);
        response_free(&r);
        close(fd);
        free(req);
}

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_slow_client_does_not_block_others(void **state)
{
        struct fixture *f = *state;
        int slow = connect_to(AF_INET, f->port);
        send_all(slow, "GET /heal", 9);
        /* a second connection that sends nothing at all */
        int idle = connect_to(AF_INET, f->port);

        struct response r;
        request(f->port, "GET /healthz HTTP/1.1\r\n\r\n", &r);
        assert_int_equal(r.code, 200);
        response_free(&r);

        /* the slow client can still finish its request: it was not dropped
         * at its 5 s deadline for this one to be served (as a server that
         * serves one connection at a time would have to) */
        send_all(slow, "thz HTTP/1.1\r\n\r\n", 16);
        read_response(slow, &r);
        assert_int_equal(r.code, 200);
        assert_string_equal(r.body, "ok");
        response_free(&r);
        close(slow);
        close(idle);
}

static void test_idle_client_is_dropped(void **state)
{
        struct fixture *f = *state;
        double t0 = now_s(); /* before the connection: the deadline counts from the accept */
        int fd = connect_to(AF_INET, f->port);
        struct timeval tv = {.tv_sec = 30}; /* far beyond the deadline */
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        send_all(fd, "GET /hea", 8);
        char buf[64];
        ssize_t n = recv(fd, buf, sizeof(buf), 0);
        double waited = now_s() - t0;
        /* closed by the server (not our receive timeout, EAGAIN) without an
         * answer, at the 5 s request deadline and not before */
        assert_true(n == 0 || (n < 0 && errno == ECONNRESET));
        assert_true(waited >= 4.9);
        close(fd);
}

static void test_many_sequential_requests(void **state)
{
        struct fixture *f = *state;
        for (int i = 0; i < 200; i++) {
                struct response r;
                request(f->port, "GET /healthz HTTP/1.1\r\n\r\n", &r);
                assert_int_equal(r.code, 200);
                response_free(&r);
        }
}

static void test_ipv6_any_serves_loopback(void **state)
{
        (void)state;
        struct readonly_server *s = NULL;
        ck_error_t err = NULL;
        if (readonly_server_start("::", 0, fake_pods, NULL, &s, &err) < 0) {
                /* a kernel without IPv6 */
                ck_error_release(&err);
                skip();
        }
        int port = readonly_server_port(s);
        struct response r;
        request(port, "GET /healthz HTTP/1.1\r\n\r\n", &r); /* IPv4 via the dual-stack socket */
        assert_int_equal(r.code, 200);
        response_free(&r);
        int fd = connect_to(AF_INET6, port);
        send_all(fd, "GET /healthz HTTP/1.1\r\n\r\n", 25);
        read_response(fd, &r);
        assert_int_equal(r.code, 200);
        response_free(&r);
        close(fd);
        readonly_server_stop(s);
}

static void test_bad_address_is_an_error(void **state)
{
        (void)state;
        struct readonly_server *s = NULL;
        ck_error_t err = NULL;
        assert_int_equal(readonly_server_start("localhost:1", 0, fake_pods, NULL, &s, &err), -1);
        assert_non_null(strstr(ck_error_msg(err), "invalid address"));
        ck_error_release(&err);
        assert_int_equal(readonly_server_start("127.0.0.1", 70000, fake_pods, NULL, &s, &err), -1);
        ck_error_release(&err);
}

static void test_port_in_use_is_an_error(void **state)
{
        struct fixture *f = *state;
        struct readonly_server *s = NULL;
        ck_error_t err = NULL;
        assert_int_equal(readonly_server_start("127.0.0.1", f->port, fake_pods, NULL, &s, &err),
                         -1);
        assert_non_null(strstr(ck_error_msg(err), "Address already in use"));
        ck_error_release(&err);
}

/* The pure parser. */
static void test_parse_request_fields(void **state)
{
        (void)state;
        const char *in = "\r\nGET /pods/?a=b HTTP/1.1\r\nHost: x\r\n"
                         "content-length:  0 \r\nTransfer-Encoding: gzip, Chunked\r\n\r\nrest";
        struct http_request req;
        assert_int_equal(http_parse_request(in, strlen(in), &req), HTTP_PARSE_OK);
        assert_true(http_request_method_is(&req, "GET"));
        assert_true(http_request_path_is(&req, "/pods/"));
        assert_int_equal(req.query_len, 3);
        assert_memory_equal(req.query, "a=b", 3);
        assert_int_equal(req.version_minor, 1);
        assert_int_equal(req.n_headers, 3);
        assert_true(req.has_content_length);
        assert_int_equal(req.content_length, 0);
        assert_true(req.chunked);
        assert_int_equal(req.head_len, strlen(in) - 4);
}

static void test_parse_request_incomplete_and_lf(void **state)
{
        (void)state;
        struct http_request req;
        const char *full = "GET /healthz HTTP/1.0\nA: b\n\n";
        for (size_t i = 0; i < strlen(full); i++)
                assert_int_equal(http_parse_request(full, i, &req), HTTP_PARSE_INCOMPLETE);
        assert_int_equal(http_parse_request(full, strlen(full), &req), HTTP_PARSE_OK);
        assert_int_equal(req.version_minor, 0);
        assert_true(http_request_path_is(&req, "/healthz"));
}

static void test_parse_request_absolute_form(void **state)
{
        (void)state;
        struct http_request req;
        const char *a = "GET http://node:10255/pods HTTP/1.1\r\n\r\n";
        assert_int_equal(http_parse_request(a, strlen(a), &req), HTTP_PARSE_OK);
        assert_true(http_request_path_is(&req, "/pods"));
        const char *b = "GET http://node:10255 HTTP/1.1\r\n\r\n";
        assert_int_equal(http_parse_request(b, strlen(b), &req), HTTP_PARSE_OK);
        assert_true(http_request_path_is(&req, "/"));
}

static void test_parse_request_rejects(void **state)
{
        (void)state;
        const char *bad[] = {
            "GET /a HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            "GET /a HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n",
            "GET /a HTTP/1.1\r\nBad Name: x\r\n\r\n",
            "GET /a HTTP/1.1\r\nX : x\r\n\r\n",
            "GET /a HTTP/1.1\r\nX: a\001b\r\n\r\n",
            "GET /a\x7f HTTP/1.1\r\n\r\n",
            "GET  /a HTTP/1.1\r\n\r\n",
            "GET /a#frag HTTP/1.1\r\n\r\n",
            "GET /a HTTP/1.1\rX: y\r\n\r\n",
            "GET /a HTTP/1.1 \r\n\r\n",
            "\x16\x03\x01\x02", /* a TLS hello: bad early, not incomplete */
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                struct http_request req;
                if (http_parse_request(bad[i], strlen(bad[i]), &req) != HTTP_PARSE_BAD)
                        fail_msg("case %zu accepted", i);
        }
}

/* Header lookup: case-insensitive names, OWS trimmed, first match, repeats
 * through the cursor, nothing from the request line or the body. */
static void test_parse_request_header_lookup(void **state)
{
        (void)state;
        const char *in = "\r\nGET /x HTTP/1.1\r\nhost: node\r\nAuthorization: \t Bearer a b \t\r\n"
                         "Connection: keep-alive\r\nX-Empty:\r\nCONNECTION:  Upgrade\r\n"
                         "\r\nBody: no";
        struct http_request req;
        assert_int_equal(http_parse_request(in, strlen(in), &req), HTTP_PARSE_OK);
        const char *v;
        size_t n;
        assert_true(http_request_header(in, &req, "Host", &v, &n));
        assert_int_equal(n, 4);
        assert_memory_equal(v, "node", 4);
        assert_true(http_request_header(in, &req, "authorization", &v, &n));
        assert_int_equal(n, 10);
        assert_memory_equal(v, "Bearer a b", 10);
        assert_true(http_request_header(in, &req, "x-empty", &v, &n));
        assert_int_equal(n, 0);
        assert_false(http_request_header(in, &req, "Body", &v, &n));
        assert_false(http_request_header(in, &req, "GET /x HTTP/1.1", &v, &n));
        assert_false(http_request_header(in, &req, "Hos", &v, &n));

        size_t pos = 0;
        assert_true(http_request_header_next(in, &req, "connection", &pos, &v, &n));
        assert_memory_equal(v, "keep-alive", n);
        assert_true(http_request_header_next(in, &req, "connection", &pos, &v, &n));
        assert_int_equal(n, 7);
        assert_memory_equal(v, "Upgrade", 7);
        assert_false(http_request_header_next(in, &req, "connection", &pos, &v, &n));

        const char *lf = "GET / HTTP/1.0\nA: 1\n\n";
        assert_int_equal(http_parse_request(lf, strlen(lf), &req), HTTP_PARSE_OK);
        assert_true(http_request_header(lf, &req, "a", &v, &n));
        assert_int_equal(n, 1);
        assert_memory_equal(v, "1", 1);
        const char *none = "GET / HTTP/1.0\r\n\r\n";
        assert_int_equal(http_parse_request(none, strlen(none), &req), HTTP_PARSE_OK);
        assert_false(http_request_header(none, &req, "a", &v, &n));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_healthz_ok, setup, teardown),
            cmocka_unit_test_setup_teardown(test_pods_returns_callback_json, setup, teardown),
            cmocka_unit_test_setup_teardown(test_query_string_is_ignored_for_routing, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_head_has_length_but_no_body, setup, teardown),
            cmocka_unit_test_setup_teardown(test_unknown_path_404, setup, teardown),
            cmocka_unit_test_setup_teardown(test_post_405, setup, teardown),
            cmocka_unit_test_setup_teardown(test_malformed_400, setup, teardown),
            cmocka_unit_test_setup_teardown(test_oversized_request_431, setup, teardown),
            cmocka_unit_test_setup_teardown(test_slow_client_does_not_block_others, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_idle_client_is_dropped, setup, teardown),
            cmocka_unit_test_setup_teardown(test_many_sequential_requests, setup, teardown),
            cmocka_unit_test_setup_teardown(test_port_in_use_is_an_error, setup, teardown),
            cmocka_unit_test(test_ipv6_any_serves_loopback),
            cmocka_unit_test(test_bad_address_is_an_error),
            cmocka_unit_test(test_parse_request_fields),
            cmocka_unit_test(test_parse_request_incomplete_and_lf),
            cmocka_unit_test(test_parse_request_absolute_form),
            cmocka_unit_test(test_parse_request_rejects),
            cmocka_unit_test(test_parse_request_header_lookup),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
