/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTTP/1.1 client (http/http_client.h) against a scripted server on
 * 127.0.0.1, plain and TLS: body framings, gzip, keep-alive and the reuse
 * of a connection the server dropped, deadlines, the stop flag, connect
 * errors, certificate verification and client certificates; the URL and
 * response-head parsing it rests on.  The REST client and the probes over
 * it: test_rest_client.c, test_probe.c; the real apiserver:
 * test/e2e/06-client.bats.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "http/http_client.h"
#include "server/selfsigned.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

#include <netinet/in.h>
#include <openssl/err.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

/* ---- a scripted server ------------------------------------------------ */

/* Each request gets the next reply: raw bytes sent as they are, then the
 * connection kept; prefixes: "!close:" sends the rest, then closes;
 * "!drop" closes without an answer; "!hang" answers nothing until stop;
 * "!binary" sends binary[0..binary_len). */
struct srv {
        int fd, port;
        pthread_t thread;
        atomic_bool stop;
        SSL_CTX *tls;
        const char *const *replies;
        size_t n_replies;
        atomic_int accepts, requests;
        atomic_bool client_cert_seen;
        pthread_mutex_t lock; /* guards last_req */
        char last_req[4096];
        const char *binary;
        size_t binary_len;
};

/* True if the last request the server read holds needle. */
static bool last_req_has(struct srv *s, const char *needle)
{
        pthread_mutex_lock(&s->lock);
        bool has = strstr(s->last_req, needle) != NULL;
        pthread_mutex_unlock(&s->lock);
        return has;
}

static bool srv_wait(struct srv *s, int fd, SSL *ssl)
{
        if (ssl && SSL_pending(ssl) > 0)
                return true;
        while (!atomic_load(&s->stop)) {
                struct pollfd p = {.fd = fd, .events = POLLIN};
                if (poll(&p, 1, 50) > 0)
                        return true;
        }
        return false;
}

static ssize_t srv_read(struct srv *s, int fd, SSL *ssl, char *buf, size_t cap)
{
        for (;;) {
                if (!srv_wait(s, fd, ssl))
                        return -1;
                if (!ssl)
                        return recv(fd, buf, cap, 0);
                int n = SSL_read(ssl, buf, (int)cap);
                if (n > 0)
                        return n;
                int e = SSL_get_error(ssl, n);
                if (e != SSL_ERROR_WANT_READ)
                        return 0;
        }
}

static void srv_write(int fd, SSL *ssl, const char *p, size_t n)
{
        if (ssl) {
                SSL_write(ssl, p, (int)n);
                return;
        }
        while (n > 0) {
                ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
                if (w <= 0)
                        return;
                p += w;
                n -= (size_t)w;
        }
}

/* Serves one connection; false when the script or the server ended. */
static bool srv_conn(struct srv *s, int fd)
{
        SSL *ssl = NULL;
        if (s->tls) {
                ssl = SSL_new(s->tls);
                SSL_set_fd(ssl, fd);
                if (SSL_accept(ssl) != 1) {
                        SSL_free(ssl);
                        return true;
                }
                X509 *peer = SSL_get1_peer_certificate(ssl);
                if (peer) {
                        atomic_store(&s->client_cert_seen, true);
                        X509_free(peer);
                }
        }
        bool go_on = true;
        char buf[8192];
        size_t len = 0;
        for (;;) {
                char *end = NULL;
                while ((end = memmem(buf, len, "\r\n\r\n", 4)) == NULL) {
                        ssize_t n = srv_read(s, fd, ssl, buf + len, sizeof(buf) - len - 1);
                        if (n <= 0)
                                goto out;
                        len += (size_t)n;
                }
                size_t head = (size_t)(end - buf) + 4;
                buf[len] = '\0';
                const char *cl = strcasestr(buf, "Content-Length:");
                size_t body = cl && cl < end ? strtoul(cl + 15, NULL, 10) : 0;
                while (len < head + body) {
                        ssize_t n = srv_read(s, fd, ssl, buf + len, sizeof(buf) - len - 1);
                        if (n <= 0)
                                goto out;
                        len += (size_t)n;
                }
                pthread_mutex_lock(&s->lock);
                snprintf(s->last_req, sizeof(s->last_req), "%.*s", (int)(head + body), buf);
                pthread_mutex_unlock(&s->lock);
                memmove(buf, buf + head + body, len - head - body);
                len -= head + body;
                int i = atomic_fetch_add(&s->requests, 1);
                if ((size_t)i >= s->n_replies) {
                        go_on = false;
                        goto out;
                }
                const char *r = s->replies[i];
                if (strcmp(r, "!drop") == 0)
                        goto out;
                if (strcmp(r, "!binary") == 0) {
                        srv_write(fd, ssl, s->binary, s->binary_len);
                        continue;
                }
                if (strcmp(r, "!hang") == 0) {
                        while (!atomic_load(&s->stop))
                                usleep(10000);
                        goto out;
                }
                bool close_after = strncmp(r, "!close:", 7) == 0;
                if (close_after)
                        r += 7;
                srv_write(fd, ssl, r, strlen(r));
                if (close_after)
                        goto out;
        }
out:
        if (ssl) {
                SSL_shutdown(ssl);
                SSL_free(ssl);
        }
        close(fd);
        return go_on && !atomic_load(&s->stop);
}

static void *srv_main(void *arg)
{
        struct srv *s = arg;
        while (!atomic_load(&s->stop)) {
                struct pollfd p = {.fd = s->fd, .events = POLLIN};
                if (poll(&p, 1, 50) <= 0)
                        continue;
                int fd = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);
                if (fd < 0)
                        continue;
                atomic_fetch_add(&s->accepts, 1);
                if (!srv_conn(s, fd))
                        break;
        }
        return NULL;
}

static void srv_start_binary(struct srv *s, SSL_CTX *tls, const char *const *replies, size_t n,
                             const char *binary, size_t binary_len)
{
        memset(s, 0, sizeof(*s));
        pthread_mutex_init(&s->lock, NULL);
        s->binary = binary;
        s->binary_len = binary_len;
        s->tls = tls;
        s->replies = replies;
        s->n_replies = n;
        s->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        assert_int_equal(bind(s->fd, (struct sockaddr *)&a, sizeof(a)), 0);
        assert_int_equal(listen(s->fd, 8), 0);
        socklen_t l = sizeof(a);
        getsockname(s->fd, (struct sockaddr *)&a, &l);
        s->port = ntohs(a.sin_port);
        pthread_create(&s->thread, NULL, srv_main, s);
}

static void srv_start(struct srv *s, SSL_CTX *tls, const char *const *replies, size_t n)
{
        srv_start_binary(s, tls, replies, n, NULL, 0);
}

static void srv_stop(struct srv *s)
{
        atomic_store(&s->stop, true);
        pthread_join(s->thread, NULL);
        close(s->fd);
        pthread_mutex_destroy(&s->lock);
}

static struct http_client *client_to(struct srv *s, SSL_CTX *tls, const char *tls_name)
{
        char port[16];
        snprintf(port, sizeof(port), "%d", s->port);
        struct http_client_options o = {.tls = tls, .tls_name = tls_name, .keep_alive = true};
        return http_client_new("127.0.0.1", port, &o);
}

/* GET (or method) target; the body read whole into *body.  Returns the
 * status, or -1 with *err. */
static int exchange(struct http_client *c, const char *method, const char *target, bool gzip,
                    char **body, ck_error_t *err)
{
        struct http_request_spec req = {
            .method = method, .target = target, .host = "test", .gzip = gzip};
        if (strcmp(method, "POST") == 0) {
                req.body = "{}";
                req.body_len = 2;
        }
        struct http_answer a;
        int64_t deadline = fs_now_mono_ms() + 5000;
        if (http_client_send(c, &req, deadline, &a, err) < 0)
                return -1;
        char *buf = xmalloc(1);
        size_t len = 0;
        for (;;) {
                buf = xrealloc(buf, len + 4097);
                ssize_t n = http_client_read(c, buf + len, 4096, deadline, err);
                if (n < 0) {
                        free(buf);
                        http_answer_clear(&a);
                        return -1;
                }
                if (n == 0)
                        break;
                len += (size_t)n;
        }
        buf[len] = '\0';
        http_client_end(c);
        int status = a.status;
        http_answer_clear(&a);
        if (body)
                *body = buf;
        else
                free(buf);
        return status;
}

/* ---- framing, keep-alive -------------------------------------------- */

static void test_framings_and_keep_alive(void **state)
{
        (void)state;
        static const char *const replies[] = {
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: "
            "chunked\r\n\r\n3\r\nabc\r\n4;x=y\r\ndefg\r\n0\r\n"
            "Trailer: t\r\n\r\n",
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
            /* HEAD: the length of what a GET would get, no body */
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
            "!close:HTTP/1.1 200 OK\r\n\r\nuntil the end",
            "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok",
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nagain",
            "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx",
        };
        struct srv s;
        srv_start(&s, NULL, replies, ARRAY_SIZE(replies));
        struct http_client *c = client_to(&s, NULL, NULL);
        ck_error_t err = NULL;
        char *body = NULL;
        assert_int_equal(exchange(c, "GET", "/a?x=1", false, &body, &err), 200);
        assert_string_equal(body, "hello");
        free(body);
        assert_true(last_req_has(&s, "GET /a?x=1 HTTP/1.1\r\nHost: test\r\n"));
        assert_int_equal(exchange(c, "GET", "/b", false, &body, &err), 200);
        assert_string_equal(body, "abcdefg");
        free(body);
        assert_int_equal(exchange(c, "POST", "/c", false, &body, &err), 204);
        assert_string_equal(body, "");
        free(body);
        assert_true(last_req_has(&s, "Content-Length: 2\r\n\r\n{}"));
        assert_int_equal(exchange(c, "HEAD", "/d", false, &body, &err), 200);
        assert_string_equal(body, "");
        free(body);
        assert_int_equal(exchange(c, "GET", "/d2", false, &body, &err), 200);
        assert_string_equal(body, "ok");
        free(body);
        /* five exchanges, one connection */
        assert_int_equal(atomic_load(&s.accepts), 1);
        assert_int_equal(exchange(c, "GET", "/e", false, &body, &err), 200);
        assert_string_equal(body, "until the end");
        free(body);
        /* a body up to the close: a new connection next; HTTP/1.0: not kept */
        assert_int_equal(exchange(c, "GET", "/f", false, &body, &err), 200);
        assert_string_equal(body, "ok");
        free(body);
        assert_int_equal(atomic_load(&s.accepts), 2);
        /* the bytes past the body make the connection unusable: closed */
        assert_int_equal(exchange(c, "GET", "/g", false, &body, &err), 200);
        assert_string_equal(body, "ag");
        free(body);
        assert_int_equal(atomic_load(&s.accepts), 3);
        assert_int_equal(exchange(c, "GET", "/h", false, &body, &err), 200);
        assert_string_equal(body, "x");
        free(body);
        assert_int_equal(atomic_load(&s.accepts), 4);
        http_client_free(c);
        srv_stop(&s);
}

/* A kept connection the server closed is not reused; one that breaks
 * under a GET is retried once, under a POST it is an error. */
static void test_dropped_connections(void **state)
{
        (void)state;
        static const char *const replies[] = {
            "!close:HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n1",
            "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n2",
            "!drop",
            "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n3",
            "!drop",
        };
        struct srv s;
        srv_start(&s, NULL, replies, ARRAY_SIZE(replies));
        struct http_client *c = client_to(&s, NULL, NULL);
        ck_error_t err = NULL;
        char *body = NULL;
        assert_int_equal(exchange(c, "GET", "/", false, &body, &err), 200);
        free(body);
        usleep(100 * 1000); /* the server's close arrives */
        /* a POST, never sent again: the close was noticed before reuse */
        assert_int_equal(exchange(c, "POST", "/", false, &body, &err), 200);
        assert_string_equal(body, "2");
        free(body);
        assert_int_equal(atomic_load(&s.accepts), 2);
        /* dropped under the GET: sent again on a third connection */
        assert_int_equal(exchange(c, "GET", "/", false, &body, &err), 200);
        assert_string_equal(body, "3");
        free(body);
        assert_int_equal(atomic_load(&s.accepts), 3);
        /* dropped under a POST: not sent again */
        assert_int_equal(exchange(c, "POST", "/", false, NULL, &err), -1);
        assert_int_equal(err->code, HTTP_ERR_TRANSPORT);
        ck_error_release(&err);
        assert_int_equal(atomic_load(&s.requests), 5);
        http_client_free(c);
        srv_stop(&s);
}

static char *gzip_of(const char *text, size_t *out_len)
{
        z_stream z = {0};
        assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY),
                         Z_OK);
        size_t cap = deflateBound(&z, strlen(text));
        char *out = xmalloc(cap);
        z.next_in = (Bytef *)text;
        z.avail_in = (uInt)strlen(text);
        z.next_out = (Bytef *)out;
        z.avail_out = (uInt)cap;
        assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
        *out_len = cap - z.avail_out;
        deflateEnd(&z);
        return out;
}

static void test_gzip(void **state)
{
        (void)state;
        char text[20000];
        for (size_t i = 0; i < sizeof(text) - 1; i++)
                text[i] = (char)('a' + i % 26);
        text[sizeof(text) - 1] = '\0';
        size_t zlen = 0;
        cleanup_free char *z = gzip_of(text, &zlen);
        /* the gzip stream in two chunks, cut in its middle */
        size_t half = zlen / 2;
        char head[256];
        int hn = snprintf(head, sizeof(head),
                          "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n"
                          "Transfer-Encoding: chunked\r\n\r\n%zx\r\n",
                          half);
        size_t rlen = (size_t)hn + zlen + 64;
        cleanup_free char *reply = xmalloc(rlen + 1);
        size_t o = (size_t)hn;
        memcpy(reply, head, o);
        memcpy(reply + o, z, half);
        o += half;
        o += (size_t)sprintf(reply + o, "\r\n%zx\r\n", zlen - half);
        memcpy(reply + o, z + half, zlen - half);
        o += zlen - half;
        o += (size_t)sprintf(reply + o, "\r\n0\r\n\r\n");
        static const char *const replies[] = {
            "!binary",
            "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"
            "0\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 4\r\n\r\nnope"};
        struct srv s;
        srv_start_binary(&s, NULL, replies, ARRAY_SIZE(replies), reply, o);
        struct http_client *c = client_to(&s, NULL, NULL);
        ck_error_t err = NULL;
        char *body = NULL;
        assert_int_equal(exchange(c, "GET", "/", true, &body, &err), 200);
        assert_true(last_req_has(&s, "Accept-Encoding: gzip\r\n"));
        assert_string_equal(body, text);
        free(body);
        /* an empty body says gzip: empty, as Go */
        assert_int_equal(exchange(c, "GET", "/", true, &body, &err), 200);
        assert_string_equal(body, "");
        free(body);
        /* kept: the whole chunked body was read */
        assert_int_equal(exchange(c, "GET", "/", true, &body, &err), -1);
        assert_int_equal(err->code, HTTP_ERR_PROTOCOL);
        assert_non_null(strstr(ck_error_msg(err), "gzip"));
        ck_error_release(&err);
        assert_int_equal(atomic_load(&s.accepts), 1);
        http_client_free(c);
        srv_stop(&s);
}

/* ---- errors ---------------------------------------------------------- */

static void test_errors(void **state)
{
        (void)state;
        static const char *const replies[] = {
            "!close:SSH-2.0-OpenSSH\r\n",
            "!close:HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
            "!hang",
        };
        struct srv s;
        srv_start(&s, NULL, replies, ARRAY_SIZE(replies));
        struct http_client *c = client_to(&s, NULL, NULL);
        ck_error_t err = NULL;
        struct http_request_spec req = {.method = "GET", .target = "/", .host = "h"};
        struct http_answer a;
        assert_int_equal(exchange(c, "GET", "/", false, NULL, &err), -1);
        assert_int_equal(err->code, HTTP_ERR_PROTOCOL);
        ck_error_release(&err);
        assert_int_equal(exchange(c, "GET", "/", false, NULL, &err), -1);
        assert_int_equal(err->code, HTTP_ERR_TRANSPORT);
        assert_non_null(strstr(ck_error_msg(err), "unexpected EOF"));
        ck_error_release(&err);
        int64_t t0 = fs_now_mono_ms();
        assert_int_equal(http_client_send(c, &req, t0 + 300, &a, &err), -1);
        assert_int_equal(err->code, HTTP_ERR_TIMEOUT);
        assert_true(fs_now_mono_ms() - t0 < 3000);
        ck_error_release(&err);
        /* the stop flag ends a wait that has no deadline */
        atomic_bool stop = true;
        http_client_set_stop(c, &stop);
        assert_int_equal(http_client_send(c, &req, 0, &a, &err), -1);
        assert_int_equal(err->code, HTTP_ERR_STOPPED);
        ck_error_release(&err);
        /* a header field that would split the request */
        http_client_set_stop(c, NULL);
        struct http_field bad = {"X-A", "b\r\nX-Injected: 1"};
        struct http_request_spec breq = {
            .method = "GET", .target = "/", .host = "h", .headers = &bad, .n_headers = 1};
        assert_int_equal(http_client_send(c, &breq, 0, &a, &err), -1);
        assert_int_equal(err->code, HTTP_ERR_PROTOCOL);
        ck_error_release(&err);
        http_client_free(c);
        int port = s.port;
        srv_stop(&s);

        /* nobody listening */
        char ps[16];
        snprintf(ps, sizeof(ps), "%d", port);
        struct http_client_options o = {0};
        c = http_client_new("127.0.0.1", ps, &o);
        assert_int_equal(http_client_send(c, &req, fs_now_mono_ms() + 2000, &a, &err), -1);
        assert_int_equal(err->code, HTTP_ERR_CONNECT);
        assert_int_equal(http_client_connect_errno(c), ECONNREFUSED);
        ck_error_release(&err);
        http_client_free(c);
}

/* ---- TLS ------------------------------------------------------------- */

struct pems {
        char *cert, *key; /* serving certificate + CA, key */
        const char *ca;   /* the CA block inside cert */
};

static void make_pems(struct pems *p, const char *host)
{
        ck_error_t err = NULL;
        if (secure_selfsigned_generate(host, &p->cert, &p->key, &err) < 0)
                fail_msg("%s", ck_error_msg(err));
        const char *second = strstr(p->cert + 1, "-----BEGIN CERTIFICATE-----");
        assert_non_null(second);
        p->ca = second;
}

static void free_pems(struct pems *p)
{
        free(p->cert);
        free(p->key);
}

static SSL_CTX *server_ctx(const struct pems *p, bool want_client_cert)
{
        SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
        BIO *b = BIO_new_mem_buf(p->cert, -1);
        X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);
        SSL_CTX_use_certificate(ctx, x);
        X509_free(x);
        BIO_free(b);
        b = BIO_new_mem_buf(p->key, -1);
        EVP_PKEY *k = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
        SSL_CTX_use_PrivateKey(ctx, k);
        EVP_PKEY_free(k);
        BIO_free(b);
        if (want_client_cert)
                SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
        SSL_CTX_set_cert_verify_callback(ctx, NULL, NULL);
        return ctx;
}

static int any_client_cert(X509_STORE_CTX *x, void *arg)
{
        (void)x, (void)arg;
        return 1;
}

static void test_tls(void **state)
{
        (void)state;
        struct pems srvp, clip, other;
        make_pems(&srvp, "127.0.0.1");
        make_pems(&clip, "node");
        make_pems(&other, "127.0.0.1");
        SSL_CTX *sctx = server_ctx(&srvp, true);
        SSL_CTX_set_cert_verify_callback(sctx, any_client_cert, NULL);
        static const char *const replies[] = {
            "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nyes",
            "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nyes",
            "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nyes",
            "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nyes",
        };
        struct srv s;
        srv_start(&s, sctx, replies, ARRAY_SIZE(replies));
        ck_error_t err = NULL;
        char *body = NULL;

        /* verified against the CA, for the IP address; a client certificate */
        struct http_tls_config tc = {.ca_pem = srvp.ca,
                                     .ca_len = strlen(srvp.ca),
                                     .cert_pem = clip.cert,
                                     .cert_len = strlen(clip.cert),
                                     .key_pem = clip.key,
                                     .key_len = strlen(clip.key)};
        SSL_CTX *cctx = NULL;
        assert_int_equal(http_tls_client_ctx(&tc, &cctx, &err), 0);
        struct http_client *c = client_to(&s, cctx, NULL);
        assert_int_equal(exchange(c, "GET", "/", false, &body, &err), 200);
        assert_string_equal(body, "yes");
        free(body);
        assert_true(atomic_load(&s.client_cert_seen));
        /* kept alive over TLS */
        assert_int_equal(exchange(c, "GET", "/", false, &body, &err), 200);
        free(body);
        assert_int_equal(atomic_load(&s.accepts), 1);
        http_client_free(c);

        /* a name the certificate does not hold: refused, the names it holds said */
        c = client_to(&s, cctx, "apiserver.example");
        assert_int_equal(exchange(c, "GET", "/", false, NULL, &err), -1);
        assert_int_equal(err->code, HTTP_ERR_TRANSPORT);
        assert_non_null(strstr(ck_error_msg(err), "tls: failed to verify certificate: x509: "
                                                  "certificate is valid for 127.0.0.1, not "
                                                  "apiserver.example"));
        ck_error_release(&err);
        http_client_free(c);
        SSL_CTX_free(cctx);

        /* another CA */
        struct http_tls_config wrong = {.ca_pem = other.ca, .ca_len = strlen(other.ca)};
        assert_int_equal(http_tls_client_ctx(&wrong, &cctx, &err), 0);
        c = client_to(&s, cctx, NULL);
        assert_int_equal(exchange(c, "GET", "/", false, NULL, &err), -1);
        assert_non_null(strstr(ck_error_msg(err), "x509: certificate signed by unknown authority"));
        ck_error_release(&err);
        http_client_free(c);
        SSL_CTX_free(cctx);

        /* the serving certificate itself as the trust anchor (not its CA):
         * any certificate of the bundle anchors, as Go's pool */
        size_t leaf_len = (size_t)(srvp.ca - srvp.cert);
        struct http_tls_config leaf = {.ca_pem = srvp.cert, .ca_len = leaf_len};
        assert_int_equal(http_tls_client_ctx(&leaf, &cctx, &err), 0);
        c = client_to(&s, cctx, NULL);
        assert_int_equal(exchange(c, "GET", "/", false, &body, &err), 200);
        free(body);
        http_client_free(c);
        SSL_CTX_free(cctx);

        /* insecure: no verification */
        struct http_tls_config insecure = {.insecure = true};
        assert_int_equal(http_tls_client_ctx(&insecure, &cctx, &err), 0);
        c = client_to(&s, cctx, "anything");
        assert_int_equal(exchange(c, "GET", "/", false, &body, &err), 200);
        free(body);
        http_client_free(c);
        SSL_CTX_free(cctx);
        srv_stop(&s);
        SSL_CTX_free(sctx);

        /* material that does not load names itself */
        struct http_tls_config badca = {.ca_pem = "junk", .ca_len = 4};
        assert_int_equal(http_tls_client_ctx(&badca, &cctx, &err), -1);
        assert_non_null(strstr(ck_error_msg(err), "certificate authority"));
        ck_error_release(&err);
        struct http_tls_config nokey = {.cert_pem = clip.cert,
                                        .cert_len = strlen(clip.cert),
                                        .key_pem = other.key,
                                        .key_len = strlen(other.key),
                                        .insecure = true};
        assert_int_equal(http_tls_client_ctx(&nokey, &cctx, &err), -1);
        assert_non_null(strstr(ck_error_msg(err), "client key"));
        ck_error_release(&err);
        free_pems(&srvp);
        free_pems(&clip);
        free_pems(&other);
}

/* ---- parsing --------------------------------------------------------- */

static void test_urls(void **state)
{
        (void)state;
        struct http_url u;
        ck_error_t err = NULL;
        assert_int_equal(http_url_parse("HTTPS://[::1]:6443/prefix?q=1#frag", &u, &err), 0);
        assert_string_equal(u.scheme, "https");
        assert_string_equal(u.host, "::1");
        assert_string_equal(u.port, "6443");
        assert_string_equal(u.target, "/prefix?q=1");
        http_url_clear(&u);
        assert_int_equal(http_url_parse("http://10.0.0.1", &u, &err), 0);
        assert_string_equal(u.port, "80");
        assert_string_equal(u.target, "/");
        http_url_clear(&u);
        assert_int_equal(http_url_parse("http://h:8080?x", &u, &err), 0);
        assert_string_equal(u.target, "/?x");
        http_url_clear(&u);
        static const char *const bad[] = {"ftp://h/",     "http//h",      "http://",
                                          "http://u@h/",  "http://h:0/",  "http://h:99999/",
                                          "http://[::1/", "http://h/a b", "http://a:b:c/"};
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                assert_int_equal(http_url_parse(bad[i], &u, &err), -1);
                ck_error_release(&err);
        }

        static const char *const cases[][3] = {
            {"http://h:1/a/b/c?q", "/x", "http://h:1/x"},
            {"http://h:1/a/b/c?q", "d", "http://h:1/a/b/d"},
            {"http://h:1/a/b/c?q", "../d?e#f", "http://h:1/a/d?e"},
            {"http://h:1/a/b/c?q", "./", "http://h:1/a/b/"},
            {"http://h:1/a/b/c?q", "?z", "http://h:1/a/b/c?z"},
            {"http://h:1/a/b/c?q", "", "http://h:1/a/b/c?q"},
            {"http://h:1/a", "../../../x", "http://h:1/x"},
            {"http://h:1/a", "//other:2/p", "http://other:2/p"},
            {"http://h:1/a", "https://other/p", "https://other/p"},
            {"http://[::1]:1/a", "b", "http://[::1]:1/b"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                cleanup_free char *r = http_url_resolve(cases[i][0], cases[i][1]);
                assert_non_null(r);
                assert_string_equal(r, cases[i][2]);
        }
        assert_null(http_url_resolve("not a url", "x"));
}

static void test_response_heads(void **state)
{
        (void)state;
        struct http_response r;
        const char *ok = "HTTP/1.1 404 Not Found\r\nContent-Length: 7\r\nX-A:  v1 \r\n"
                         "x-a: v2\r\n\r\nbody...";
        assert_int_equal(http_parse_response(ok, strlen(ok), &r), HTTP_PARSE_OK);
        assert_int_equal(r.status, 404);
        assert_int_equal(r.version_minor, 1);
        assert_int_equal(r.reason_len, 9);
        assert_true(r.has_content_length);
        assert_int_equal(r.content_length, 7);
        assert_int_equal(r.head_len, strlen(ok) - 7);
        const char *v = NULL;
        size_t n = 0, pos = 0;
        assert_true(http_response_header_next(ok, &r, "x-a", &pos, &v, &n));
        assert_int_equal(n, 2);
        assert_memory_equal(v, "v1", 2);
        assert_true(http_response_header_next(ok, &r, "x-a", &pos, &v, &n));
        assert_memory_equal(v, "v2", 2);
        assert_false(http_response_header_next(ok, &r, "x-a", &pos, &v, &n));
        assert_false(http_response_header(ok, &r, "HTTP/1.1 404 Not Found", &v, &n));

        const char *noreason = "HTTP/1.0 200\r\n\r\n";
        assert_int_equal(http_parse_response(noreason, strlen(noreason), &r), HTTP_PARSE_OK);
        assert_int_equal(r.reason_len, 0);
        assert_int_equal(r.version_minor, 0);
        assert_int_equal(http_parse_response("HTTP/1.1 200 OK\r\nA: b\r\n", 23, &r),
                         HTTP_PARSE_INCOMPLETE);
        assert_int_equal(http_parse_response("HTT", 3, &r), HTTP_PARSE_INCOMPLETE);
        static const char *const bad[] = {
            "HTTP/2.0 200 OK\r\n\r\n",
            "HTTP/1.1 20 OK\r\n\r\n",
            "HTTP/1.1 099 OK\r\n\r\n",
            "HTTP/1.1 2000 OK\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
            "HTTP/1.1 200 OK\r\n folded\r\n\r\n",
            "HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n",
            "SSH-2.0-x\r\n",
            "garbage",
        };
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
                assert_int_equal(http_parse_response(bad[i], strlen(bad[i]), &r), HTTP_PARSE_BAD);
        const char *chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n";
        assert_int_equal(http_parse_response(chunked, strlen(chunked), &r), HTTP_PARSE_OK);
        assert_true(r.chunked);
}

int main(void)
{
        signal(SIGPIPE, SIG_IGN); /* as the agent: OpenSSL writes with write(2) */
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_framings_and_keep_alive),
            cmocka_unit_test(test_dropped_connections),
            cmocka_unit_test(test_gzip),
            cmocka_unit_test(test_errors),
            cmocka_unit_test(test_tls),
            cmocka_unit_test(test_urls),
            cmocka_unit_test(test_response_heads),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
