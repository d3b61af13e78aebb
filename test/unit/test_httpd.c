/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kubelet's HTTP server core (server/httpd.h) over real loopback
 * sockets, plain and TLS: certificates (self-signed, given, client CA),
 * requests, streams, keep-alive and pipelining, request bodies, paths,
 * hijacked connections, disconnects, stop.  Then the pure parts: the
 * request-head parser, the path functions, the chunked decoder and the
 * route table (server/router.h).  Client certificates and CAs are made by
 * the openssl command in a temporary directory, independent of the code
 * under test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "http/http1.h"
#include "server/httpd.h"
#include "server/router.h"
#include "server/selfsigned.h"
#include "util/error.h"
#include "util/fsutil.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

static char dir[64]; /* fixtures: ca, other-ca, client, rogue, server */

static char *fx(const char *name)
{
        static char buf[8][160];
        static int i;
        char *b = buf[i++ % 8];
        snprintf(b, sizeof(buf[0]), "%s/%s", dir, name);
        return b;
}

static void run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void run(const char *fmt, ...)
{
        char cmd[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(cmd, sizeof(cmd), fmt, ap);
        va_end(ap);
        if (system(cmd) != 0)
                fail_msg("command failed: %s", cmd);
}

#define EC "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"

/* A CA <name>.crt/.key, and a certificate <name>.crt/.key signed by it. */
static void make_ca(const char *name)
{
        run("openssl req -x509 " EC " -days 2 -subj /CN=%s -keyout %s/%s.key -out %s/%s.crt "
            "2>/dev/null",
            name, dir, name, dir, name);
}

static void make_signed(const char *name, const char *ca, const char *subj, const char *eku)
{
        run("printf 'extendedKeyUsage=%s\\n' > %s/%s.ext && "
            "openssl req -new " EC " -subj '%s' -keyout %s/%s.key -out %s/%s.csr 2>/dev/null && "
            "openssl x509 -req -days 2 -set_serial 7 -in %s/%s.csr -CA %s/%s.crt -CAkey "
            "%s/%s.key -extfile %s/%s.ext -out %s/%s.crt 2>/dev/null",
            eku, dir, name, subj, dir, name, dir, name, dir, name, dir, ca, dir, ca, dir, name, dir,
            name);
}

static int group_setup(void **state)
{
        (void)state;
        strcpy(dir, "/tmp/test_httpd.XXXXXX");
        if (mkdtemp(dir) == NULL)
                return -1;
        make_ca("ca");
        make_ca("other-ca");
        const char *subj = "/O=system:masters/O=second/CN=kube-apiserver-kubelet-client";
        make_signed("client", "ca", subj, "clientAuth");
        make_signed("rogue", "other-ca", subj, "clientAuth");
        make_signed("server-only", "ca", subj, "serverAuth");
        run("openssl req -x509 " EC " -days 2 -subj /CN=given-server -keyout %s/server.key "
            "-out %s/server.crt 2>/dev/null",
            dir, dir);
        return 0;
}

static int group_teardown(void **state)
{
        (void)state;
        ck_error_t err = NULL;
        fs_remove_all(dir, &err);
        ck_error_release(&err);
        return 0;
}

/* ---- the handler ---- */

static atomic_int follow_result;  /* 0 running, 1 a write failed, 2 gave up */
static atomic_int wait_result;    /* 0 running, 1 closed seen, 2 gave up */
static atomic_int hijack_result;  /* 0 running, 1 the client's EOF seen, 2 gave up, 3 failed */
static atomic_int hijack_pending; /* *pending_len httpd_hijack gave, -1 before */
static atomic_int handler_calls;

/* The handler side of a hijacked connection: a 101, then every byte the
 * client sends (what came with the head first) back, until its EOF. */
static void hijack_echo(struct httpd_conn *c)
{
        const char *pending;
        size_t pending_len;
        if (httpd_hijack(c, &pending, &pending_len) < 0) {
                atomic_store(&hijack_result, 3);
                return;
        }
        atomic_store(&hijack_pending, (int)pending_len);
        static const char sw[] = "HTTP/1.1 101 Switching Protocols\r\n\r\n";
        if (httpd_raw_write(c, sw, sizeof(sw) - 1) < 0 ||
            (pending_len > 0 && httpd_raw_write(c, pending, pending_len) < 0)) {
                atomic_store(&hijack_result, 3);
                return;
        }
        char buf[4096];
        for (int idle = 0; idle < 30;) {
                if (httpd_raw_pending(c) == 0) {
                        struct pollfd p = {.fd = httpd_raw_fd(c), .events = POLLIN};
                        if (poll(&p, 1, 1000) == 0) {
                                idle++;
                                if (httpd_stopping(c))
                                        break;
                                continue;
                        }
                }
                ssize_t n = httpd_raw_read(c, buf, sizeof(buf));
                if (n == -EAGAIN)
                        continue; /* e.g. a TLS record not whole yet */
                if (n == 0) {
                        httpd_raw_shutdown_write(c);
                        atomic_store(&hijack_result, 1);
                        return;
                }
                if (n < 0 || httpd_raw_write(c, buf, (size_t)n) < 0) {
                        atomic_store(&hijack_result, 3);
                        return;
                }
        }
        atomic_store(&hijack_result, 2);
}

/* The whole body, read with at most max; answers it, or rc=<what
 * httpd_body_all returned> with 413 or 400. */
static void echo_body(struct httpd_conn *c, size_t max)
{
        char *body = NULL;
        size_t len = 0;
        int rc = httpd_body_all(c, max, &body, &len);
        if (rc < 0) {
                char msg[32];
                int n = snprintf(msg, sizeof(msg), "rc=%d", rc);
                httpd_respond(c, rc == -413 ? 413 : 400, NULL, msg, (size_t)n);
                return;
        }
        httpd_respond(c, 200, "application/octet-stream", body, len);
        free(body);
}

static void handler(void *ctx, const struct httpd_request *r, struct httpd_conn *c)
{
        (void)ctx;
        atomic_fetch_add(&handler_calls, 1);
        if (strcmp(r->path, "/stream") == 0) {
                assert_int_equal(httpd_stream_begin(c, 200, "text/plain"), 0);
                assert_int_equal(httpd_stream_write(c, "hello ", 6), 0);
                assert_int_equal(httpd_stream_write(c, "", 0), 0);
                assert_int_equal(httpd_stream_write(c, "world", 5), 0);
                assert_int_equal(httpd_stream_end(c), 0);
                assert_true(httpd_respond(c, 200, NULL, "x", 1) < 0); /* answered already */
        } else if (strcmp(r->path, "/unended") == 0) {
                httpd_stream_begin(c, 200, NULL);
                httpd_stream_write(c, "abc", 3);
        } else if (strcmp(r->path, "/none") == 0) {
                return;
        } else if (strcmp(r->path, "/follow") == 0) {
                httpd_stream_begin(c, 200, NULL);
                for (int i = 0; i < 1000; i++) {
                        if (httpd_stream_write(c, "tick\n", 5) < 0) {
                                atomic_store(&follow_result, 1);
                                return;
                        }
                        usleep(10000);
                }
                atomic_store(&follow_result, 2);
        } else if (strcmp(r->path, "/wait") == 0) {
                for (int i = 0; i < 1000; i++) {
                        if (httpd_conn_closed(c)) {
                                atomic_store(&wait_result, 1);
                                return;
                        }
                        usleep(10000);
                }
                atomic_store(&wait_result, 2);
        } else if (strcmp(r->path, "/big") == 0 || strcmp(r->path, "/huge") == 0) {
                size_t n = strcmp(r->path, "/big") == 0 ? 200000 : 32u << 20;
                char *b = malloc(n);
                for (size_t i = 0; i < n; i++)
                        b[i] = (char)('a' + i % 26);
                httpd_respond(c, 200, "application/octet-stream", b, n);
                free(b);
        } else if (strcmp(r->path, "/echo") == 0) {
                echo_body(c, 1 << 20);
        } else if (strcmp(r->path, "/small") == 0) {
                echo_body(c, 16);
        } else if (strcmp(r->path, "/ignore") == 0) {
                httpd_respond(c, 200, NULL, "ignored", 7);
        } else if (strcmp(r->path, "/hijack") == 0) {
                hijack_echo(c);
        } else {
                char orgs[256] = "";
                for (size_t i = 0; r->peer_orgs[i] != NULL; i++)
                        snprintf(orgs + strlen(orgs), sizeof(orgs) - strlen(orgs), "%s%s",
                                 i ? "," : "", r->peer_orgs[i]);
                char body[2048];
                int n = snprintf(body, sizeof(body),
                                 "method=%s path=%s raw=%s query=%s auth=%s upgrade=%d cn=%s "
                                 "orgs=%s verr=%s ua=%s remote=%s",
                                 r->method, r->path, r->raw_path, r->query ? r->query : "(null)",
                                 r->authorization ? r->authorization : "(null)", r->upgrade,
                                 r->peer_cn ? r->peer_cn : "(null)", orgs,
                                 r->peer_verify_error ? "set" : "(null)",
                                 r->user_agent ? r->user_agent : "(null)", r->remote_addr);
                httpd_respond(c, 200, NULL, body, (size_t)n);
        }
}

/* ---- server and client helpers ---- */

/* Starts a server with SIGPIPE unblocked (the test thread blocks it for
 * its own client writes): the server's threads must cope on their own. */
static struct httpd *start(struct httpd_options *o, ck_error_t *err)
{
        if (o->handler == NULL)
                o->handler = handler;
        if (o->address == NULL)
                o->address = "127.0.0.1";
        sigset_t pipe, old;
        sigemptyset(&pipe);
        sigaddset(&pipe, SIGPIPE);
        /* A SIGPIPE our own client raised (a TLS write, which cannot say
         * MSG_NOSIGNAL, to a socket the server closed) waits blocked: take
         * it, or unblocking would deliver it and kill the test. */
        struct timespec zero = {0};
        while (sigtimedwait(&pipe, NULL, &zero) == SIGPIPE)
                ;
        pthread_sigmask(SIG_UNBLOCK, &pipe, &old);
        struct httpd *s = NULL;
        int rc = httpd_start(o, &s, err);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return rc < 0 ? NULL : s;
}

static struct httpd *start_ok(struct httpd_options *o)
{
        ck_error_t err = NULL;
        struct httpd *s = start(o, &err);
        if (s == NULL)
                fail_msg("start: %s", ck_error_msg(err));
        return s;
}

/* The client's receive timeout: only a guard against a test hanging; a
 * connection the server keeps open is told from one it closes by what a
 * read returns (-EAGAIN: this timeout), the servers' own deadlines being
 * far longer (TEST_REQUEST_TIMEOUT_MS). */
#define CLIENT_TIMEOUT_S 10

static int tcp_connect(int port)
{
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(fd >= 0);
        struct timeval tv = {.tv_sec = CLIENT_TIMEOUT_S};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
        return fd;
}

struct client {
        int fd;
        SSL_CTX *ctx;
        SSL *ssl; /* NULL: plain TCP */
        char *in; /* received, not returned yet; NUL-terminated */
        size_t in_len, in_cap;
        int end; /* the last client_fill that got no bytes: 0 EOF, else -errno */
};

struct client_opts {
        bool plain;             /* no TLS (the rest is for TLS) */
        const char *cert, *key; /* client certificate */
        const char *trust;      /* verify the server against this file */
        const char *host;       /* ... for this DNS name */
};

static const struct client_opts plain_client = {.plain = true};

/* A connection, TLS unless o->plain; false if the handshake fails. */
static bool client_connect(int port, const struct client_opts *o, struct client *cl)
{
        memset(cl, 0, sizeof(*cl));
        cl->fd = tcp_connect(port);
        if (o && o->plain)
                return true;
        cl->ctx = SSL_CTX_new(TLS_client_method());
        assert_non_null(cl->ctx);
        if (o && o->cert) {
                assert_int_equal(SSL_CTX_use_certificate_chain_file(cl->ctx, o->cert), 1);
                assert_int_equal(SSL_CTX_use_PrivateKey_file(cl->ctx, o->key, SSL_FILETYPE_PEM), 1);
        }
        if (o && o->trust) {
                assert_int_equal(SSL_CTX_load_verify_locations(cl->ctx, o->trust, NULL), 1);
                SSL_CTX_set_verify(cl->ctx, SSL_VERIFY_PEER, NULL);
        }
        cl->ssl = SSL_new(cl->ctx);
        SSL_set_fd(cl->ssl, cl->fd);
        if (o && o->host)
                SSL_set1_host(cl->ssl, o->host);
        return SSL_connect(cl->ssl) == 1;
}

static void client_close(struct client *cl)
{
        SSL_free(cl->ssl);
        SSL_CTX_free(cl->ctx);
        if (cl->fd > 0)
                close(cl->fd);
        free(cl->in);
        ERR_clear_error();
        memset(cl, 0, sizeof(*cl));
}

static void client_send_n(struct client *cl, const char *s, size_t n)
{
        if (cl->ssl) {
                assert_int_equal(SSL_write(cl->ssl, s, (int)n), (int)n);
                return;
        }
        while (n > 0) {
                ssize_t w = send(cl->fd, s, n, MSG_NOSIGNAL);
                if (w <= 0)
                        fail_msg("send: %s", strerror(errno));
                s += w;
                n -= (size_t)w;
        }
}

static void client_send(struct client *cl, const char *s)
{
        client_send_n(cl, s, strlen(s));
}

/* Ends our sending side: close_notify with TLS, then a FIN. */
static void client_shutdown_write(struct client *cl)
{
        if (cl->ssl)
                assert_true(SSL_shutdown(cl->ssl) >= 0);
        shutdown(cl->fd, SHUT_WR);
}

/* One read: > 0 bytes, 0 the server closed (FIN or close_notify),
 * -ECONNRESET, -EAGAIN our receive timeout, -EIO another error. */
static int client_recv(struct client *cl, char *buf, size_t n)
{
        if (cl->ssl == NULL) {
                ssize_t r = recv(cl->fd, buf, n, 0);
                if (r >= 0)
                        return (int)r;
                return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN
                       : errno == ECONNRESET                   ? -ECONNRESET
                                                               : -EIO;
        }
        ERR_clear_error();
        int r = SSL_read(cl->ssl, buf, (int)n);
        if (r > 0)
                return r;
        int saved = errno;
        int e = SSL_get_error(cl->ssl, r);
        unsigned long le = ERR_peek_last_error();
        ERR_clear_error();
        if (e == SSL_ERROR_ZERO_RETURN)
                return 0;
        if (e == SSL_ERROR_SSL && ERR_GET_REASON(le) == SSL_R_UNEXPECTED_EOF_WHILE_READING)
                return 0; /* a FIN without close_notify */
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
                return -EAGAIN;
        if (e == SSL_ERROR_SYSCALL && (saved == EAGAIN || saved == EWOULDBLOCK))
                return -EAGAIN;
        if (e == SSL_ERROR_SYSCALL && saved == ECONNRESET)
                return -ECONNRESET;
        return -EIO;
}

/* Reads more into cl->in: as client_recv. */
static int client_fill(struct client *cl)
{
        if (cl->in_cap - cl->in_len < 4097) {
                cl->in_cap = cl->in_cap ? cl->in_cap * 2 : 8192;
                cl->in = realloc(cl->in, cl->in_cap);
                assert_non_null(cl->in);
        }
        int r = client_recv(cl, cl->in + cl->in_len, cl->in_cap - cl->in_len - 1);
        if (r > 0)
                cl->in_len += (size_t)r;
        else
                cl->end = r;
        cl->in[cl->in_len] = '\0';
        return r;
}

/* Until cl->in holds n bytes; fails the test if the connection ends. */
static void client_need(struct client *cl, size_t n)
{
        while (cl->in_len < n)
                if (client_fill(cl) <= 0)
                        fail_msg("connection ended (%d) after %zu bytes, wanted %zu: %.*s", cl->end,
                                 cl->in_len, n, (int)cl->in_len, cl->in ? cl->in : "");
}

/* The first n bytes of cl->in as a new string, removed from cl->in. */
static char *client_take(struct client *cl, size_t n)
{
        char *out = malloc(n + 1);
        memcpy(out, cl->in, n);
        out[n] = '\0';
        memmove(cl->in, cl->in + n, cl->in_len - n + 1);
        cl->in_len -= n;
        return out;
}

/* Everything until the server closes; returns a new string, cl->end says
 * how it ended. */
static char *client_read_all(struct client *cl, size_t *len)
{
        while (client_fill(cl) > 0)
                ;
        size_t n = cl->in_len;
        if (len)
                *len = n;
        return client_take(cl, n);
}

/* One response, by its framing (a 1xx or an answer to HEAD: the head
 * alone; Content-Length; chunked; else up to the close), as a new string;
 * what follows it stays in cl->in. */
static char *client_read_response(struct client *cl, bool head_only)
{
        char *end;
        client_need(cl, 1);
        while ((end = memmem(cl->in, cl->in_len, "\r\n\r\n", 4)) == NULL)
                client_need(cl, cl->in_len + 1);
        size_t head_len = (size_t)(end - cl->in) + 4;
        int status = 0;
        if (sscanf(cl->in, "HTTP/1.%*d %d", &status) != 1)
                fail_msg("not a response: %s", cl->in);
        char *head = client_take(cl, head_len);
        size_t body_len = 0;
        const char *cl_hdr = strstr(head, "\r\nContent-Length: ");
        if ((status >= 100 && status < 200) || head_only) {
                body_len = 0;
        } else if (strstr(head, "\r\nTransfer-Encoding: chunked\r\n") != NULL) {
                size_t pos = 0;
                for (;;) {
                        char *eol;
                        client_need(cl, pos + 1);
                        while ((eol = memmem(cl->in + pos, cl->in_len - pos, "\r\n", 2)) == NULL)
                                client_need(cl, cl->in_len + 1);
                        size_t n = strtoul(cl->in + pos, NULL, 16);
                        pos = (size_t)(eol - cl->in) + 2;
                        client_need(cl, pos + n + 2);
                        pos += n + 2;
                        if (n == 0)
                                break;
                }
                body_len = pos;
        } else if (cl_hdr != NULL) {
                body_len = strtoul(cl_hdr + 18, NULL, 10);
                client_need(cl, body_len);
        } else {
                while (client_fill(cl) > 0)
                        ;
                body_len = cl->in_len;
        }
        char *body = client_take(cl, body_len);
        char *all = malloc(head_len + body_len + 1);
        memcpy(all, head, head_len);
        memcpy(all + head_len, body, body_len);
        all[head_len + body_len] = '\0';
        free(head);
        free(body);
        return all;
}

/* The server closes the connection next: nothing more arrives, then EOF
 * (not our receive timeout). */
static void expect_closed(struct client *cl)
{
        int r = client_fill(cl);
        if (r != 0)
                fail_msg("expected the server's close, got %d, %zu bytes: %s", r, cl->in_len,
                         cl->in);
}

static int status_of(const char *resp)
{
        int code = 0;
        if (sscanf(resp, "HTTP/1.1 %d", &code) != 1)
                return -1;
        return code;
}

static const char *body_of(const char *resp)
{
        const char *b = strstr(resp, "\r\n\r\n");
        assert_non_null(b);
        return b + 4;
}

static bool says_close(const char *resp)
{
        const char *end = strstr(resp, "\r\n\r\n");
        const char *h = strstr(resp, "\r\nConnection: close\r\n");
        return h != NULL && end != NULL && h < end;
}

/* One request on a new connection that the server closes after its answer;
 * returns everything received (new). */
static char *request(int port, const struct client_opts *o, const char *req)
{
        struct client cl;
        assert_true(client_connect(port, o, &cl));
        client_send(&cl, req);
        char *resp = client_read_all(&cl, NULL);
        if (cl.end != 0)
                fail_msg("no close from the server (%d) after: %s", cl.end, resp);
        client_close(&cl);
        return resp;
}

static char *get(int port, const struct client_opts *o, const char *path)
{
        char req[512];
        snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: node\r\nConnection: close\r\n\r\n",
                 path);
        return request(port, o, req);
}

/* Decodes a chunked body in place; returns false on bad framing or a
 * missing last chunk. */
static bool dechunk(const char *in, char *out)
{
        for (;;) {
                char *end;
                unsigned long n = strtoul(in, &end, 16);
                if (end == in || strncmp(end, "\r\n", 2) != 0)
                        return false;
                in = end + 2;
                if (n == 0)
                        return strcmp(in, "\r\n") == 0;
                memcpy(out, in, n);
                out += n;
                *out = '\0';
                in += n;
                if (strncmp(in, "\r\n", 2) != 0)
                        return false;
                in += 2;
        }
}

static int64_t wait_for(atomic_int *flag, int64_t timeout_ms)
{
        int64_t end = fs_now_mono_ms() + timeout_ms;
        while (atomic_load(flag) == 0 && fs_now_mono_ms() < end)
                usleep(5000);
        return atomic_load(flag);
}

static char *read_file(const char *path)
{
        char *buf = NULL;
        ck_error_t err = NULL;
        if (fs_read_file(path, 1 << 20, &buf, NULL, &err) < 0)
                fail_msg("%s", ck_error_msg(err));
        return buf;
}
/* ---- certificates ---- */

static void test_selfsigned_created_then_reused(void **state)
{
        (void)state;
        char certs[128], crt[160], key[160];
        snprintf(certs, sizeof(certs), "%s/pki/sub", dir);
        snprintf(crt, sizeof(crt), "%s/kubelet.crt", certs);
        snprintf(key, sizeof(key), "%s/kubelet.key", certs);
        struct httpd_options o = {.tls = true, .cert_dir = certs, .hostname = " Node-A "};
        struct httpd *s = start_ok(&o);

        struct stat st;
        assert_int_equal(stat(key, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0600);
        assert_int_equal(stat(crt, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0644);
        /* written atomically: no temporary file left beside them */
        DIR *d = opendir(certs);
        int entries = 0;
        for (struct dirent *e; (e = readdir(d)) != NULL;)
                entries += e->d_name[0] != '.';
        closedir(d);
        assert_int_equal(entries, 2);

        /* A client that trusts the file's CA and checks the name connects. */
        struct client_opts verify = {.trust = crt, .host = "node-a"};
        char *resp = get(httpd_port(s), &verify, "/x");
        assert_int_equal(status_of(resp), 200);
        free(resp);
        struct client cl;
        struct client_opts wrong = {.trust = crt, .host = "other-node"};
        assert_false(client_connect(httpd_port(s), &wrong, &cl));
        client_close(&cl);
        httpd_stop(s);

        char *first = read_file(crt);
        char *key_pem = read_file(key);
        assert_non_null(strstr(key_pem, "-----BEGIN RSA PRIVATE KEY-----"));
        free(key_pem);
        s = start_ok(&o);
        char *second = read_file(crt);
        assert_string_equal(first, second); /* reused, not regenerated */
        resp = get(httpd_port(s), &verify, "/x");
        assert_int_equal(status_of(resp), 200);
        free(resp);
        httpd_stop(s);
        free(first);
        free(second);
}

/* The generated pair as upstream's: serving certificate then its CA, CN
 * host@time signed by host-ca@time, serverAuth, SAN of the host (an IP
 * host as an IP SAN), valid an hour back. */
static void test_selfsigned_contents(void **state)
{
        (void)state;
        const char *hosts[] = {"node-b", "10.1.2.3"};
        for (size_t h = 0; h < 2; h++) {
                char *cert = NULL, *key = NULL;
                ck_error_t err = NULL;
                assert_int_equal(secure_selfsigned_generate(hosts[h], &cert, &key, &err), 0);
                BIO *b = BIO_new_mem_buf(cert, -1);
                X509 *leaf = PEM_read_bio_X509(b, NULL, NULL, NULL);
                X509 *ca = PEM_read_bio_X509(b, NULL, NULL, NULL);
                assert_non_null(leaf);
                assert_non_null(ca);
                char cn[128], ca_cn[128], want[128];
                X509_NAME_get_text_by_NID(X509_get_subject_name(leaf), NID_commonName, cn,
                                          sizeof(cn));
                X509_NAME_get_text_by_NID(X509_get_subject_name(ca), NID_commonName, ca_cn,
                                          sizeof(ca_cn));
                snprintf(want, sizeof(want), "%s@", hosts[h]);
                assert_true(strncmp(cn, want, strlen(want)) == 0);
                snprintf(want, sizeof(want), "%s-ca@", hosts[h]);
                assert_true(strncmp(ca_cn, want, strlen(want)) == 0);
                assert_int_equal(X509_check_issued(ca, leaf), X509_V_OK);
                assert_int_equal(X509_check_ca(ca), 1);
                assert_int_equal(X509_check_ca(leaf), 0);
                assert_true(X509_get_extended_key_usage(leaf) & XKU_SSL_SERVER);
                if (h == 0) {
                        assert_int_equal(X509_check_host(leaf, "node-b", 0, 0, NULL), 1);
                } else {
                        assert_int_equal(X509_check_ip_asc(leaf, "10.1.2.3", 0), 1);
                        assert_int_not_equal(X509_check_host(leaf, "10.1.2.3", 0, 0, NULL), 1);
                }
                time_t now = time(NULL), later = now + 364 * 86400, past = now - 1800;
                assert_true(X509_cmp_time(X509_get0_notBefore(leaf), &past) < 0);
                assert_true(X509_cmp_time(X509_get0_notAfter(leaf), &later) > 0);
                EVP_PKEY *pub = X509_get0_pubkey(leaf);
                assert_int_equal(EVP_PKEY_get_bits(pub), 2048);
                X509_free(leaf);
                X509_free(ca);
                BIO_free(b);
                free(cert);
                free(key);
        }
}

static void test_selfsigned_half_pair_is_an_error(void **state)
{
        (void)state;
        char certs[128], crt[160];
        snprintf(certs, sizeof(certs), "%s/half", dir);
        mkdir(certs, 0755);
        snprintf(crt, sizeof(crt), "%s/kubelet.crt", certs);
        ck_error_t err = NULL;
        assert_int_equal(fs_write_file_atomic(crt, "x", 1, 0644, &err), 0);
        struct httpd_options o = {.tls = true, .cert_dir = certs, .hostname = "node"};
        assert_null(start(&o, &err));
        assert_non_null(strstr(ck_error_msg(err), "kubelet.key, certificate and key must be "
                                                  "supplied as a pair"));
        ck_error_release(&err);
}

static void test_given_cert_and_key_are_used(void **state)
{
        (void)state;
        char certs[128];
        snprintf(certs, sizeof(certs), "%s/unused", dir);
        struct httpd_options o = {.tls = true,
                                  .cert_file = fx("server.crt"),
                                  .key_file = fx("server.key"),
                                  .cert_dir = certs};
        struct httpd *s = start_ok(&o);
        struct client cl;
        assert_true(client_connect(httpd_port(s), NULL, &cl));
        X509 *peer = SSL_get1_peer_certificate(cl.ssl);
        char cn[64] = "";
        X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, cn, sizeof(cn));
        assert_string_equal(cn, "given-server");
        X509_free(peer);
        assert_int_equal(SSL_version(cl.ssl) >= TLS1_2_VERSION, 1);
        client_close(&cl);
        struct stat st;
        assert_int_not_equal(stat(certs, &st), 0); /* nothing self-signed made */
        httpd_stop(s);
}

static void expect_start_error(struct httpd_options *o, const char *want)
{
        ck_error_t err = NULL;
        struct httpd *s = start(o, &err);
        if (s != NULL) {
                httpd_stop(s);
                fail_msg("started, wanted error containing %s", want);
        }
        if (strstr(ck_error_msg(err), want) == NULL)
                fail_msg("error `%s` lacks `%s`", ck_error_msg(err), want);
        ck_error_release(&err);
}

static void test_start_errors_name_step_and_file(void **state)
{
        (void)state;
        char missing[160], want[256];
        snprintf(missing, sizeof(missing), "%s/missing.crt", dir);
        struct httpd_options o = {.tls = true, .cert_file = missing, .key_file = fx("server.key")};
        snprintf(want, sizeof(want), "load TLS certificate: open `%s`: No such file", missing);
        expect_start_error(&o, want);

        o = (struct httpd_options){
            .tls = true, .cert_file = fx("server.crt"), .key_file = fx("server.crt")};
        snprintf(want, sizeof(want), "load TLS private key `%s`:", fx("server.crt"));
        expect_start_error(&o, want);

        o = (struct httpd_options){
            .tls = true, .cert_file = fx("server.crt"), .key_file = fx("client.key")};
        expect_start_error(&o, "private key `");

        o = (struct httpd_options){.tls = true, .cert_file = fx("server.crt")};
        expect_start_error(&o, "must be given together");

        o = (struct httpd_options){.tls = true,
                                   .cert_file = fx("server.crt"),
                                   .key_file = fx("server.key"),
                                   .client_ca_file = missing};
        snprintf(want, sizeof(want), "load client CA file: open `%s`", missing);
        expect_start_error(&o, want);

        o.client_ca_file = fx("server.key");
        snprintf(want, sizeof(want), "load client CA file `%s`: no certificate found",
                 fx("server.key"));
        expect_start_error(&o, want);

        o.client_ca_file = NULL;
        o.address = "not-an-ip";
        expect_start_error(&o, "invalid address `not-an-ip`");
}

/* A TLS 1.2 (at most) connection offering only `ciphers` (NULL: the
 * defaults); true if the handshake succeeds.  Close cl after. */
static bool client_connect_tls12(int port, const char *ciphers, struct client *cl)
{
        memset(cl, 0, sizeof(*cl));
        cl->ctx = SSL_CTX_new(TLS_client_method());
        assert_non_null(cl->ctx);
        SSL_CTX_set_max_proto_version(cl->ctx, TLS1_2_VERSION);
        if (ciphers)
                assert_int_equal(SSL_CTX_set_cipher_list(cl->ctx, ciphers), 1);
        cl->fd = tcp_connect(port);
        cl->ssl = SSL_new(cl->ctx);
        SSL_set_fd(cl->ssl, cl->fd);
        return SSL_connect(cl->ssl) == 1;
}

static void test_tls_min_version_and_cipher_suites(void **state)
{
        (void)state;
        struct httpd_options o = {.tls = true,
                                  .cert_file = fx("server.crt"),
                                  .key_file = fx("server.key"),
                                  .tls_min_version = "VersionTLS13"};
        struct httpd *s = start_ok(&o);
        struct client cl;
        assert_true(client_connect(httpd_port(s), NULL, &cl));
        assert_string_equal(SSL_get_version(cl.ssl), "TLSv1.3");
        client_close(&cl);
        assert_false(client_connect_tls12(httpd_port(s), NULL, &cl)); /* refused */
        client_close(&cl);
        httpd_stop(s);

        /* TLS 1.2 with one suite (a TLS 1.3 name is accepted and ignored) */
        static const char *const suites[] = {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
                                             "TLS_AES_128_GCM_SHA256", NULL};
        o = (struct httpd_options){.tls = true,
                                   .cert_file = fx("server.crt"),
                                   .key_file = fx("server.key"),
                                   .tls_cipher_suites = suites};
        s = start_ok(&o);
        assert_false(client_connect_tls12(httpd_port(s), "ECDHE-ECDSA-AES128-GCM-SHA256", &cl));
        client_close(&cl);
        assert_true(client_connect_tls12(httpd_port(s), NULL, &cl));
        assert_string_equal(SSL_get_cipher_name(cl.ssl), "ECDHE-ECDSA-AES256-GCM-SHA384");
        client_close(&cl);
        httpd_stop(s);

        o.tls_min_version = "VersionTLS99";
        expect_start_error(&o, "unknown tls version \"VersionTLS99\"");
        static const char *const bad[] = {"TLS_NOPE", NULL};
        o.tls_min_version = NULL;
        o.tls_cipher_suites = bad;
        expect_start_error(&o, "Cipher suite TLS_NOPE not supported or doesn't exist");
}

static void test_lazy_tls_is_set_up_at_the_first_connection(void **state)
{
        (void)state;
        char certs[200], crt[240];
        snprintf(certs, sizeof(certs), "%s/lazy-certs", dir);
        snprintf(crt, sizeof(crt), "%s/kubelet.crt", certs);
        struct httpd_options o = {
            .tls = true, .cert_dir = certs, .hostname = "node", .lazy_tls = true};
        struct httpd *s = start_ok(&o);
        assert_int_not_equal(access(crt, F_OK), 0); /* nothing made yet */
        char *resp = get(httpd_port(s), NULL, "/x");
        assert_int_equal(status_of(resp), 200);
        free(resp);
        assert_int_equal(access(crt, F_OK), 0);
        httpd_stop(s);

        /* given files are still checked at start */
        char missing[200];
        snprintf(missing, sizeof(missing), "%s/missing.crt", dir);
        o = (struct httpd_options){
            .tls = true, .cert_file = missing, .key_file = fx("server.key"), .lazy_tls = true};
        expect_start_error(&o, "load TLS certificate: open `");
        /* and so are the names upstream checks at start */
        static const char *const bad[] = {"TLS_NOPE", NULL};
        o = (struct httpd_options){
            .tls = true, .cert_dir = certs, .lazy_tls = true, .tls_cipher_suites = bad};
        expect_start_error(&o, "Cipher suite TLS_NOPE not supported or doesn't exist");
        o = (struct httpd_options){
            .tls = true, .cert_dir = certs, .lazy_tls = true, .tls_min_version = "VersionTLS9"};
        expect_start_error(&o, "unknown tls version \"VersionTLS9\"");
        /* a self-signed pair missing its key */
        char key[240];
        snprintf(key, sizeof(key), "%s/kubelet.key", certs);
        assert_int_equal(unlink(key), 0);
        o = (struct httpd_options){.tls = true, .cert_dir = certs, .lazy_tls = true};
        expect_start_error(&o, "certificate and key must be supplied as a pair");
}

/* ---- client certificates ---- */

static struct httpd *start_with_client_ca(void)
{
        struct httpd_options o = {.tls = true,
                                  .cert_file = fx("server.crt"),
                                  .key_file = fx("server.key"),
                                  .client_ca_file = fx("ca.crt")};
        return start_ok(&o);
}

static void test_client_cert_from_client_ca_is_reported(void **state)
{
        (void)state;
        struct httpd *s = start_with_client_ca();
        struct client_opts c = {.cert = fx("client.crt"), .key = fx("client.key")};
        char *resp = get(httpd_port(s), &c, "/x");
        assert_int_equal(status_of(resp), 200);
        assert_non_null(strstr(body_of(resp),
                               " cn=kube-apiserver-kubelet-client orgs=system:masters,second "
                               "verr=(null) "));
        free(resp);
        httpd_stop(s);
}

static void test_client_without_cert_connects(void **state)
{
        (void)state;
        struct httpd *s = start_with_client_ca();
        char *resp = get(httpd_port(s), NULL, "/x");
        assert_int_equal(status_of(resp), 200);
        assert_non_null(strstr(body_of(resp), " cn=(null) orgs= verr=(null) "));
        free(resp);
        httpd_stop(s);
}

/* As Go's tls.RequestClientCert: the handshake succeeds, the certificate
 * gives no identity and the failed verification is reported (upstream's
 * x509 authenticator then fails the request unless a token is valid). */
static void test_client_cert_from_other_ca_gives_no_identity(void **state)
{
        (void)state;
        struct httpd *s = start_with_client_ca();
        struct client_opts rogue = {.cert = fx("rogue.crt"), .key = fx("rogue.key")};
        char *resp = get(httpd_port(s), &rogue, "/x");
        assert_int_equal(status_of(resp), 200);
        assert_non_null(strstr(body_of(resp), " cn=(null) orgs= verr=set "));
        free(resp);
        /* signed by the right CA but not for client auth: no identity either */
        struct client_opts server_only = {.cert = fx("server-only.crt"),
                                          .key = fx("server-only.key")};
        resp = get(httpd_port(s), &server_only, "/x");
        assert_non_null(strstr(body_of(resp), " cn=(null) orgs= verr=set "));
        free(resp);
        httpd_stop(s);
}

static void test_no_client_ca_requests_no_cert(void **state)
{
        (void)state;
        struct httpd_options o = {
            .tls = true, .cert_file = fx("server.crt"), .key_file = fx("server.key")};
        struct httpd *s = start_ok(&o);
        struct client_opts c = {.cert = fx("client.crt"), .key = fx("client.key")};
        char *resp = get(httpd_port(s), &c, "/x");
        assert_non_null(strstr(body_of(resp), " cn=(null) orgs= verr=(null) "));
        free(resp);
        httpd_stop(s);
}

/* ---- HTTP, plain and TLS ---- */

struct fixture {
        struct httpd *s;
        int port;
        bool tls;
        const struct client_opts *co; /* how to connect: NULL (TLS) or &plain_client */
};

#define TEST_MAX_CONNS 32

/* The request deadline of the servers of setup: far beyond what a test
 * waits (CLIENT_TIMEOUT_S), so that a connection the server closes is told
 * from one it keeps by what a read returns, not by a clock; the idle
 * timeout (90 s by default) too.  The short ones are for the tests of the
 * deadlines themselves. */
#define TEST_REQUEST_TIMEOUT_MS 60000
#define TEST_SHORT_DEADLINE_MS 2000
#define TEST_SHORT_IDLE_MS 1500

static int setup_with(void **state, bool tls, int request_timeout_ms, int idle_timeout_ms)
{
        struct fixture *f = calloc(1, sizeof(*f));
        struct httpd_options o = {.name = "test server",
                                  .tls = tls,
                                  .cert_file = tls ? fx("server.crt") : NULL,
                                  .key_file = tls ? fx("server.key") : NULL,
                                  .request_timeout_ms = request_timeout_ms,
                                  .idle_timeout_ms = idle_timeout_ms,
                                  .max_conns = TEST_MAX_CONNS};
        f->s = start_ok(&o);
        f->port = httpd_port(f->s);
        f->tls = tls;
        f->co = tls ? NULL : &plain_client;
        atomic_store(&follow_result, 0);
        atomic_store(&wait_result, 0);
        atomic_store(&hijack_result, 0);
        atomic_store(&hijack_pending, -1);
        *state = f;
        return 0;
}

static int setup_tls(void **state)
{
        return setup_with(state, true, TEST_REQUEST_TIMEOUT_MS, 0);
}

static int setup_plain(void **state)
{
        return setup_with(state, false, TEST_REQUEST_TIMEOUT_MS, 0);
}

static int setup_tls_short_deadline(void **state)
{
        return setup_with(state, true, TEST_SHORT_DEADLINE_MS, 0);
}

static int setup_plain_short_deadline(void **state)
{
        return setup_with(state, false, TEST_SHORT_DEADLINE_MS, 0);
}

static int setup_tls_short_idle(void **state)
{
        return setup_with(state, true, TEST_REQUEST_TIMEOUT_MS, TEST_SHORT_IDLE_MS);
}

static int setup_plain_short_idle(void **state)
{
        return setup_with(state, false, TEST_REQUEST_TIMEOUT_MS, TEST_SHORT_IDLE_MS);
}

/* Waits (up to 10 s) until the handler has been called n times in all. */
static void wait_handler_calls(int n)
{
        for (int waited = 0; atomic_load(&handler_calls) < n; waited += 5) {
                if (waited >= 10000)
                        fail_msg("the handler ran %d times, expected %d",
                                 atomic_load(&handler_calls), n);
                usleep(5000);
        }
}

static int teardown(void **state)
{
        struct fixture *f = *state;
        httpd_stop(f->s);
        free(f);
        return 0;
}

static void connect_ok(struct fixture *f, struct client *cl)
{
        assert_true(client_connect(f->port, f->co, cl));
}

/* A kept-alive request (no "Connection: close"): the answer does not say
 * close either, and the connection stays open for the next one. */
static void test_request_fields_and_response_head(void **state)
{
        struct fixture *f = *state;
        struct client cl;
        connect_ok(f, &cl);
        client_send(&cl, "GET /containerLogs/ns/p%20x/c?follow=true&tailLines=5 HTTP/1.1\r\n"
                         "Host: node\r\nauthorization:  Bearer tok-en \r\n"
                         "Connection: keep-alive\r\nConnection: Upgrade\r\n"
                         "User-Agent: kube-apiserver/v1.35\r\n\r\n");
        char *resp = client_read_response(&cl, false);
        assert_int_equal(status_of(resp), 200);
        const char *body = body_of(resp);
        assert_non_null(strstr(body,
                               "method=GET path=/containerLogs/ns/p x/c "
                               "raw=/containerLogs/ns/p%20x/c "
                               "query=follow=true&tailLines=5 auth=Bearer tok-en upgrade=1 "));
        assert_non_null(strstr(body, " ua=kube-apiserver/v1.35 remote=127.0.0.1:"));
        assert_true(strncmp(resp, "HTTP/1.1 200 OK\r\n", 17) == 0);
        assert_null(strstr(resp, "Connection:"));
        assert_non_null(strstr(resp, "\r\nContent-Type: text/plain; charset=utf-8\r\n"));
        assert_non_null(strstr(resp, "\r\nDate: "));
        char len[64];
        snprintf(len, sizeof(len), "\r\nContent-Length: %zu\r\n", strlen(body));
        assert_non_null(strstr(resp, len));
        free(resp);
        client_close(&cl);

        resp = get(f->port, f->co, "/plain");
        assert_non_null(strstr(body_of(resp), "query=(null) auth=(null) upgrade=0 cn=(null) "));
        assert_true(says_close(resp));
        free(resp);
}

static void test_stream_is_chunked(void **state)
{
        struct fixture *f = *state;
        char *resp = get(f->port, f->co, "/stream");
        assert_int_equal(status_of(resp), 200);
        assert_non_null(strstr(resp, "\r\nTransfer-Encoding: chunked\r\n"));
        assert_null(strstr(resp, "Content-Length"));
        char out[64] = "";
        assert_true(dechunk(body_of(resp), out));
        assert_string_equal(out, "hello world");
        free(resp);
}

static void test_stream_to_http10_is_unframed(void **state)
{
        struct fixture *f = *state;
        char *resp = request(f->port, f->co, "GET /stream HTTP/1.0\r\n\r\n");
        assert_int_equal(status_of(resp), 200);
        assert_null(strstr(resp, "Transfer-Encoding"));
        assert_true(says_close(resp)); /* the end of the body is the close */
        assert_string_equal(body_of(resp), "hello world");
        free(resp);
}

static void test_unended_stream_is_ended(void **state)
{
        struct fixture *f = *state;
        char *resp = get(f->port, f->co, "/unended");
        char out[64] = "";
        assert_true(dechunk(body_of(resp), out));
        assert_string_equal(out, "abc");
        free(resp);
}

static void test_no_answer_is_500(void **state)
{
        struct fixture *f = *state;
        char *resp = get(f->port, f->co, "/none");
        assert_int_equal(status_of(resp), 500);
        free(resp);
}

static void test_head_has_no_body(void **state)
{
        struct fixture *f = *state;
        char *resp =
            request(f->port, f->co, "HEAD /x HTTP/1.1\r\nHost: n\r\nConnection: close\r\n\r\n");
        assert_int_equal(status_of(resp), 200);
        assert_non_null(strstr(resp, "Content-Length: "));
        assert_string_equal(body_of(resp), "");
        free(resp);
}

static void test_big_response_arrives_whole(void **state)
{
        struct fixture *f = *state;
        struct client cl;
        connect_ok(f, &cl);
        client_send(&cl, "GET /big HTTP/1.1\r\nHost: n\r\nConnection: close\r\n\r\n");
        size_t n;
        char *resp = client_read_all(&cl, &n);
        assert_int_equal(cl.end, 0);
        client_close(&cl);
        const char *body = body_of(resp);
        size_t blen = n - (size_t)(body - resp);
        assert_int_equal(blen, 200000);
        for (size_t i = 0; i < blen; i++)
                if (body[i] != (char)('a' + i % 26))
                        fail_msg("byte %zu differs", i);
        assert_non_null(strstr(resp, "Content-Length: 200000\r\n"));
        free(resp);
}

/* A client that leaves while a large answer is written: the write fails
 * (EPIPE/ECONNRESET, never a SIGPIPE that kills the process) and the server
 * keeps serving. */
static void test_client_gone_during_big_write_does_not_kill(void **state)
{
        struct fixture *f = *state;
        for (int i = 0; i < 5; i++) {
                struct client cl;
                connect_ok(f, &cl);
                client_send(&cl, "GET /huge HTTP/1.1\r\nHost: n\r\n\r\n");
                char buf[16];
                assert_true(client_recv(&cl, buf, sizeof(buf)) > 0);
                client_close(&cl);
        }
        usleep(200000);
        char *resp = get(f->port, f->co, "/x");
        assert_int_equal(status_of(resp), 200);
        free(resp);
}

static void test_garbage_is_400(void **state)
{
        struct fixture *f = *state;
        char *resp = request(f->port, f->co, "\x01\x02 garbage\r\n\r\n");
        assert_int_equal(status_of(resp), 400);
        assert_true(says_close(resp));
        free(resp);
        resp = request(f->port, f->co, "GET /x HTTP/1.1\r\n\r\n"); /* no Host */
        assert_int_equal(status_of(resp), 400);
        assert_true(says_close(resp));
        assert_non_null(strstr(body_of(resp), "missing required Host header"));
        free(resp);
        int before = atomic_load(&handler_calls);
        resp = request(f->port, f->co, "GET /x HTTP/2.0\r\nHost: x\r\n\r\n");
        assert_int_equal(status_of(resp), 400);
        free(resp);
        assert_int_equal(atomic_load(&handler_calls), before);
}

static void test_oversized_head_is_431(void **state)
{
        struct fixture *f = *state;
        struct client cl;
        connect_ok(f, &cl);
        client_send(&cl, "GET /x HTTP/1.1\r\nHost: n\r\n");
        char line[1024];
        memset(line, 'a', sizeof(line));
        memcpy(line, "X-Pad: ", 7);
        memcpy(line + sizeof(line) - 3, "\r\n", 3);
        for (int i = 0; i < 17; i++)
                client_send(&cl, line);
        char *resp = client_read_all(&cl, NULL);
        assert_int_equal(status_of(resp), 431);
        assert_true(says_close(resp));
        free(resp);
        client_close(&cl);
}

/* As Go's server: a plain HTTP request on the TLS port gets a plain 400. */
static void test_plain_http_gets_plain_400(void **state)
{
        struct fixture *f = *state;
        int fd = tcp_connect(f->port);
        const char *req = "GET /x HTTP/1.1\r\nHost: n\r\n\r\n";
        assert_int_equal(send(fd, req, strlen(req), MSG_NOSIGNAL), (ssize_t)strlen(req));
        char buf[256];
        size_t total = 0;
        ssize_t r = 0;
        while (total < sizeof(buf) - 1 &&
               (r = recv(fd, buf + total, sizeof(buf) - 1 - total, 0)) > 0)
                total += (size_t)r;
        buf[total] = '\0';
        /* closed by the server (EOF), not our receive timeout (EAGAIN) */
        assert_int_equal(r, 0);
        assert_true(strncmp(buf, "HTTP/1.0 400 Bad Request\r\n", 26) == 0);
        assert_non_null(strstr(buf, "Client sent an HTTP request to an HTTPS server."));
        close(fd);
}

/* A failed handshake (garbage instead of a ClientHello) is just closed. */
static void test_failed_handshake_is_closed(void **state)
{
        struct fixture *f = *state;
        int fd = tcp_connect(f->port);
        static const char junk[] = "\x16\x03\x01\x00\x05hello-not-tls";
        assert_int_equal(send(fd, junk, sizeof(junk) - 1, MSG_NOSIGNAL), (ssize_t)sizeof(junk) - 1);
        char buf[256];
        ssize_t r;
        while ((r = recv(fd, buf, sizeof(buf), 0)) > 0)
                assert_true(memcmp(buf, "HTTP", 4) != 0); /* a TLS alert at most */
        /* closed by the server, not our receive timeout (EAGAIN) */
        assert_true(r == 0 || errno == ECONNRESET);
        close(fd);
}

/* The other way round: a TLS hello on a plain port is a malformed request. */
static void test_tls_hello_on_plain_port_is_400(void **state)
{
        struct fixture *f = *state;
        int before = atomic_load(&handler_calls);
        char *resp = request(f->port, f->co, "\x16\x03\x01\x00\x05hello-not-tls");
        assert_int_equal(status_of(resp), 400);
        assert_true(says_close(resp));
        free(resp);
        assert_int_equal(atomic_load(&handler_calls), before);
}

static void test_silent_client_is_closed_at_the_deadline(void **state)
{
        struct fixture *f = *state; /* request_timeout_ms TEST_SHORT_DEADLINE_MS */
        struct client cl;
        int64_t t0 =
            fs_now_mono_ms(); /* before the connection: the deadline counts from the accept */
        connect_ok(f, &cl);
        struct timeval tv = {.tv_sec = 30}; /* far beyond the deadline */
        setsockopt(cl.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        client_send(&cl, "GET /x HTTP/1.1\r\n"); /* and then nothing */
        int r = client_fill(&cl);
        int64_t took = fs_now_mono_ms() - t0;
        /* the server closed it (EOF) without an answer, at the deadline and
         * not before */
        assert_int_equal(r, 0);
        assert_int_equal(cl.in_len, 0);
        assert_true(took >= TEST_SHORT_DEADLINE_MS);
        client_close(&cl);
}

/* ---- disconnects and stop ---- */

static void test_disconnect_fails_stream_write(void **state)
{
        struct fixture *f = *state;
        struct client cl;
        connect_ok(f, &cl);
        client_send(&cl, "GET /follow HTTP/1.1\r\nHost: n\r\n\r\n");
        char buf[512];
        assert_true(client_recv(&cl, buf, sizeof(buf)) > 0); /* the stream runs */
        client_close(&cl); /* as the apiserver does on ^C: no close_notify, just close */
        /* a write failed (1), before the handler's 1000 writes of 10 ms were
         * through (2: gave up) */
        assert_int_equal(wait_for(&follow_result, 30000), 1);
}

static void test_disconnect_is_seen_by_a_waiting_handler(void **state)
{
        struct fixture *f = *state;
        struct client cl;
        connect_ok(f, &cl);
        int calls = atomic_load(&handler_calls);
        client_send(&cl, "GET /wait HTTP/1.1\r\nHost: n\r\n\r\n");
        wait_handler_calls(calls + 1);
        usleep(100000);
        assert_int_equal(atomic_load(&wait_result), 0); /* not closed while connected */
        client_shutdown_write(&cl); /* a polite close: close_notify (TLS), then FIN */
        client_close(&cl);
        /* seen (1), before the handler's 1000 polls of 10 ms were through
         * (2: gave up) */
        assert_int_equal(wait_for(&wait_result, 30000), 1);
}

/* Stop shuts open connections down: the handlers see it (1) rather than
 * run out their 10 s and more (2), a kept-alive idle connection and one
 * without even a request or handshake are closed. */
static void test_stop_with_open_connections_is_prompt(void **state)
{
        struct fixture *f = *state;
        struct client idle, kept, waiting, following;
        int raw = tcp_connect(f->port); /* not even a handshake */
        connect_ok(f, &idle);
        connect_ok(f, &kept);
        client_send(&kept, "GET /x HTTP/1.1\r\nHost: n\r\n\r\n");
        char *resp = client_read_response(&kept, false);
        assert_int_equal(status_of(resp), 200);
        free(resp);
        int calls = atomic_load(&handler_calls);
        connect_ok(f, &waiting);
        client_send(&waiting, "GET /wait HTTP/1.1\r\nHost: n\r\n\r\n");
        connect_ok(f, &following);
        client_send(&following, "GET /follow HTTP/1.1\r\nHost: n\r\n\r\n");
        char buf[256];
        assert_true(client_recv(&following, buf, sizeof(buf)) > 0);
        wait_handler_calls(calls + 2); /* both handlers run */

        httpd_stop(f->s);
        f->s = NULL;
        assert_int_equal(atomic_load(&wait_result), 1);
        assert_int_equal(atomic_load(&follow_result), 1);
        /* the kept-alive connection is closed, not left to its idle timeout */
        int r = client_fill(&kept);
        assert_true(r == 0 || r == -ECONNRESET);
        /* the listener is gone */
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)f->port)};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        assert_int_not_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
        close(fd);
        close(raw);
        client_close(&idle);
        client_close(&kept);
        client_close(&waiting);
        client_close(&following);
}

static void test_connections_beyond_the_limit_are_closed(void **state)
{
        struct fixture *f = *state;
        int fds[TEST_MAX_CONNS];
        for (int i = 0; i < TEST_MAX_CONNS; i++)
                fds[i] = tcp_connect(f->port);
        usleep(200000);
        /* accepted after the others (the backlog is in order): over the
         * limit, closed by the server (EOF or RST), not our receive timeout
         * (EAGAIN; the request deadline is 60 s) */
        int extra = tcp_connect(f->port);
        char c;
        ssize_t r = recv(extra, &c, 1, 0);
        assert_true(r == 0 || (r < 0 && errno == ECONNRESET));
        close(extra);
        /* one of the first ones gone, a new one gets served (once the server
         * has seen it go) */
        close(fds[0]);
        struct client cl;
        bool served = false;
        for (int waited = 0; !served && waited < 10000; waited += 50) {
                if (client_connect(f->port, f->co, &cl)) {
                        client_send(&cl,
                                    "GET /x HTTP/1.1\r\nHost: node\r\nConnection: close\r\n\r\n");
                        char *resp = client_read_all(&cl, NULL);
                        served = status_of(resp) == 200;
                        free(resp);
                }
                client_close(&cl);
                if (!served)
                        usleep(50000);
        }
        assert_true(served);
        for (int i = 1; i < TEST_MAX_CONNS; i++)
                close(fds[i]);
}

/* ---- keep-alive ---- */

/* The handler's answer to GET <path> on the default route. */
static void expect_default(const char *resp, const char *path, bool close)
{
        assert_int_equal(status_of(resp), 200);
        char want[128];
        snprintf(want, sizeof(want), "method=GET path=%s raw=%s ", path, path);
        if (strncmp(body_of(resp), want, strlen(want)) != 0)
                fail_msg("wanted an answer to %s, got: %s", path, resp);
        if (says_close(resp) != close)
                fail_msg("wanted %s: %s", close ? "Connection: close" : "no close", resp);
}

static void test_keepalive_serves_requests_in_turn(void **state)
{
        struct fixture *f = *state;
        struct client cl;
        connect_ok(f, &cl);
        int calls = atomic_load(&handler_calls);
        for (int i = 0; i < 3; i++) {
                char req[128], path[16];
                snprintf(path, sizeof(path), "/req%d", i);
                snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: n\r\n\r\n", path);
                client_send(&cl, req);
                char *resp = client_read_response(&cl, false);
                expect_default(resp, path, false);
                free(resp);
        }
        /* HEAD on the same connection: the head alone, then the next answer */
        client_send(&cl,
                    "HEAD /h HTTP/1.1\r\nHost: n\r\n\r\nGET /after HTTP/1.1\r\nHost: n\r\n\r\n");
        char *resp = client_read_response(&cl, true);
        assert_int_equal(status_of(resp), 200);
        assert_string_equal(body_of(resp), "");
        free(resp);
        resp = client_read_response(&cl, false);
        expect_default(resp, "/after", false);
        free(resp);
        assert_int_equal(atomic_load(&handler_calls), calls + 5);
        client_close(&cl);
}

static void test_connection_close_request_is_closed(void **state)
{
        struct fixture *f = *state;
        struct client cl;
        connect_ok(f, &cl);
        client_send(&cl, "GET /a HTTP/1.1\r\nHost: n\r\n\r\n");
        char *resp = client_read_response(&cl, false);
        expect_default(resp, "/a", false);
        free(resp);
        client_send(&cl, "GET /b HTTP/1.1\r\nHost: n\r\nConnection: Close\r\n\r\n");
        resp = client_read_response(&cl, false);
        expect_default(resp, "/b", true);
        free(resp);
        expect_closed(&cl);
        client_close(&cl);
}

/* HTTP/1.0: one request, keep-alive asked or not; the second is not read. */
static void test_http10_is_closed_after_one_request(void **state)
{
        struct fixture *f = *state;
        struct client cl;
        connect_ok(f, &cl);
        int calls = atomic_load(&handler_calls);
        client_send(&cl, "GET /one HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
                         "GET /two HTTP/1.0\r\n\r\n");
        char *resp = client_read_response(&cl, false);
        assert_true(strncmp(resp, "HTTP/1.1 200 OK\r\n", 17) == 0);
        expect_default(resp, "/one", true);
        free(resp);
        expect_closed(&cl);
        client_close(&cl);
        assert_int_equal(atomic_load(&handler_calls), calls + 1);
}

/* Requests in one write are answered in order, each in full. */
static void test_pipelined_requests_are_answered_in_order(void **state)
{
        struct fixture *f = *state;
        struct client cl;
        connect_ok(f, &cl);
        client_send(&cl, "GET /p1 HTTP/1.1\r\nHost: n\r\n\r\n"
                         "GET /stream HTTP/1.1\r\nHost: n\r\n\r\n"
                         "POST /echo HTTP/1.1\r\nHost: n\r\nContent-Length: 3\r\n\r\nabc"
                         "GET /p2 HTTP/1.1\r\nHost: n\r\n\r\n"
                         "GET /p3 HTTP/1.1\r\nHost: n\r\nConnection: close\r\n\r\n"
                         "GET /never HTTP/1.1\r\nHost: n\r\n\r\n");
        char *resp = client_read_response(&cl, false);
        expect_default(resp, "/p1", false);
        free(resp);
        resp = client_read_response(&cl, false);
        char out[64] = "";
        assert_true(dechunk(body_of(resp), out));
        assert_string_equal(out, "hello world");
        assert_false(says_close(resp));
        free(resp);
        resp = client_read_response(&cl, false);
        assert_int_equal(status_of(resp), 200);
        assert_string_equal(body_of(resp), "abc");
        free(resp);
        resp = client_read_response(&cl, false);
        expect_default(resp, "/p2", false);
        free(resp);
        resp = client_read_response(&cl, false);
        expect_default(resp, "/p3", true);
        free(resp);
        expect_closed(&cl); /* nothing for /never */
        client_close(&cl);
}

/* A kept-alive connection with no next request is closed at the idle
 * timeout, without an answer. */
static void test_idle_connection_is_closed(void **state)
{
        struct fixture *f = *state; /* idle_timeout_ms TEST_SHORT_IDLE_MS, request 60 s */
        struct client cl;
        int64_t t0 = fs_now_mono_ms();
        connect_ok(f, &cl);
        struct timeval tv = {.tv_sec = 30}; /* far beyond the idle timeout */
        setsockopt(cl.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        client_send(&cl, "GET /x HTTP/1.1\r\nHost: n\r\n\r\n");
        char *resp = client_read_response(&cl, false);
        expect_default(resp, "/x", false);
        free(resp);
        client_send(&cl, "GET /y HTTP/1.1\r\nHost: n\r\n\r\n");
        resp = client_read_response(&cl, false);
        expect_default(resp, "/y", false);
        free(resp);
        expect_closed(&cl);
        /* the idle time counts from the last answer, sent after t0 */
        assert_true(fs_now_mono_ms() - t0 >= TEST_SHORT_IDLE_MS);
        client_close(&cl);
}

/* ---- request bodies ---- */

static void test_body_with_content_length_is_read(void **state)
{
        struct fixture *f = *state;
        struct client cl;
        connect_ok(f, &cl);
        client_send(&cl, "POST /echo HTTP/1.1\r\nHost: n\r\nContent-Length: 11\r\n\r\nhello world");
        char *resp = client_read_response(&cl, false);
        assert_int_equal(status_of(resp), 200);
        assert_string_equal(body_of(resp), "hello world");
        assert_false(says_close(resp));
        free(resp);

        /* larger than the server's buffer, sent after the head */
        size_t n = 100000;
        char *big = malloc(n + 1);
        for (size_t i = 0; i < n; i++)
                big[i] = (char)('A' + i % 23);
        big[n] = '\0';
        client_send(&cl, "PUT /echo HTTP/1.1\r\nHost: n\r\nContent-Length: 100000\r\n\r\n");
        client_send_n(&cl, big, n);
        resp = client_read_response(&cl, false);
        assert_int_equal(status_of(resp), 200);
        assert_string_equal(body_of(resp), big);
        free(resp);
        free(big);

        /* an empty body */
        client_send(&cl, "POST /echo HTTP/1.1\r\nHost: n\r\nContent-Length: 0\r\n\r\n");
        resp = client_read_response(&cl, false);
        assert_int_equal(status_of(resp), 200);
        assert_string_equal(body_of(resp), "");
        free(resp);

        client_send(&cl, "GET /next HTTP/1.1\r\nHost: n\r\n\r\n");
        resp = client_read_response(&cl, false);
        expect_default(resp, "/next", false);
        free(resp);
        client_close(&cl);
}

static void test_chunked_body_is_read(void **state)
{
        struct fixture *f = *state;
        struct client cl;
        connect_ok(f, &cl);
        client_send(&cl, "POST /echo HTTP/1.1\r\nHost: n\r\nTransfer-Encoding: Chunked\r\n\r\n");
        client_send(&cl, "5\r\nhel");
        client_send(&cl, "lo\r\n6;name=value\r\n world\r\n");
        client_send(&cl, "0\r\nX-Trailer: t\r\n\r\nGET /after HTTP/1.1\r\nHost: n\r\n\r\n");
        char *resp = client_read_response(&cl, false);
        assert_int_equal(status_of(resp), 200);
        assert_string_equal(body_of(resp), "hello world");
        assert_false(says_close(resp));
        free(resp);
        resp = client_read_response(&cl, false); /* what followed the trailer */
        expect_default(resp, "/after", false);
        free(resp);
        client_close(&cl);
}

/* What the handler leaves of a body is discarded; the next request on the
 * connection is read after it. */
static void test_unread_body_is_discarded(void **state)
{
        struct fixture *f = *state;
        struct client cl;
        connect_ok(f, &cl);
        client_send(&cl, "POST /ignore HTTP/1.1\r\nHost: n\r\nContent-Length: 5\r\n\r\nabcde"
                         "POST /ignore HTTP/1.1\r\nHost: n\r\nTransfer-Encoding: chunked\r\n\r\n"
                         "3\r\nabc\r\n0\r\n\r\n"
                         "GET /next HTTP/1.1\r\nHost: n\r\n\r\n");
        for (int i = 0; i < 2; i++) {
                char *resp = client_read_response(&cl, false);
                assert_int_equal(status_of(resp), 200);
                assert_string_equal(body_of(resp), "ignored");
                assert_false(says_close(resp));
                free(resp);
        }
        char *resp = client_read_response(&cl, false);
        expect_default(resp, "/next", false);
        free(resp);

        /* 200000 bytes the handler does not read (under HTTPD_DRAIN_BODY) */
        size_t n = 200000;
        char *big = malloc(n);
        memset(big, 'z', n);
        client_send(&cl, "POST /ignore HTTP/1.1\r\nHost: n\r\nContent-Length: 200000\r\n\r\n");
        client_send_n(&cl, big, n);
        free(big);
        client_send(&cl, "GET /next2 HTTP/1.1\r\nHost: n\r\n\r\n");
        resp = client_read_response(&cl, false);
        assert_string_equal(body_of(resp), "ignored");
        assert_false(says_close(resp));
        free(resp);
        resp = client_read_response(&cl, false);
        expect_default(resp, "/next2", false);
        free(resp);
        client_close(&cl);
}

/* More unread body than the server discards: the answer says close (as
 * Go's server, before the head), and the connection closes. */
static void test_large_unread_body_closes_the_connection(void **state)
{
        struct fixture *f = *state;
        struct client cl;
        connect_ok(f, &cl);
        client_send(&cl, "POST /ignore HTTP/1.1\r\nHost: n\r\nContent-Length: 1000000\r\n\r\nab");
        char *resp = client_read_response(&cl, false);
        assert_int_equal(status_of(resp), 200);
        assert_string_equal(body_of(resp), "ignored");
        assert_true(says_close(resp));
        free(resp);
        expect_closed(&cl);
        client_close(&cl);
}

static void test_too_large_body_is_413(void **state)
{
        struct fixture *f = *state; /* /small reads at most 16 bytes */
        struct client cl;
        connect_ok(f, &cl);
        client_send(&cl, "POST /small HTTP/1.1\r\nHost: n\r\nContent-Length: 16\r\n\r\n"
                         "0123456789abcdef");
        char *resp = client_read_response(&cl, false);
        assert_int_equal(status_of(resp), 200);
        assert_string_equal(body_of(resp), "0123456789abcdef"); /* 16 is not too many */
        free(resp);
        char req[1024];
        snprintf(req, sizeof(req),
                 "POST /small HTTP/1.1\r\nHost: n\r\nContent-Length: 300\r\n\r\n%0300d", 7);
        client_send(&cl, req);
        resp = client_read_response(&cl, false);
        assert_int_equal(status_of(resp), 413);
        assert_string_equal(body_of(resp), "rc=-413");
        assert_false(says_close(resp)); /* the rest was discarded */
        free(resp);
        client_send(&cl, "POST /small HTTP/1.1\r\nHost: n\r\nTransfer-Encoding: chunked\r\n\r\n"
                         "9\r\n123456789\r\n9\r\n123456789\r\n0\r\n\r\n"
                         "GET /next HTTP/1.1\r\nHost: n\r\n\r\n");
        resp = client_read_response(&cl, false);
        assert_int_equal(status_of(resp), 413);
        assert_string_equal(body_of(resp), "rc=-413");
        free(resp);
        resp = client_read_response(&cl, false);
        expect_default(resp, "/next", false);
        free(resp);
        client_close(&cl);
}

/* "Expect: 100-continue": the 100 comes when the handler reads the body,
 * and the client sends it only then. */
static void test_expect_continue(void **state)
{
        struct fixture *f = *state;
        struct client cl;
        connect_ok(f, &cl);
        client_send(&cl, "POST /echo HTTP/1.1\r\nHost: n\r\nContent-Length: 5\r\n"
                         "Expect: 100-continue\r\n\r\n");
        char *resp = client_read_response(&cl, false);
        assert_string_equal(resp, "HTTP/1.1 100 Continue\r\n\r\n");
        free(resp);
        client_send(&cl, "hello");
        resp = client_read_response(&cl, false);
        assert_int_equal(status_of(resp), 200);
        assert_string_equal(body_of(resp), "hello");
        assert_false(says_close(resp));
        free(resp);

        /* not read: no 100, and since the client may or may not send the
         * body now, the connection closes and the answer says so */
        client_send(&cl, "POST /ignore HTTP/1.1\r\nHost: n\r\nContent-Length: 5\r\n"
                         "Expect: 100-continue\r\n\r\n");
        resp = client_read_response(&cl, false);
        assert_int_equal(status_of(resp), 200);
        assert_string_equal(body_of(resp), "ignored");
        assert_true(says_close(resp));
        free(resp);
        expect_closed(&cl);
        client_close(&cl);
}

static void test_content_length_with_chunked_is_400(void **state)
{
        struct fixture *f = *state;
        int before = atomic_load(&handler_calls);
        char *resp = request(f->port, f->co,
                             "POST /echo HTTP/1.1\r\nHost: n\r\nContent-Length: 5\r\n"
                             "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
        assert_int_equal(status_of(resp), 400);
        assert_true(says_close(resp));
        assert_null(strstr(body_of(resp), "HTTP/"));
        free(resp);
        assert_int_equal(atomic_load(&handler_calls), before);
}

/* As Go's server: Transfer-Encoding other than one "chunked" is 501, and
 * the body is never taken for a request. */
static void test_unsupported_transfer_encoding_is_501(void **state)
{
        struct fixture *f = *state;
        static const char *const te[] = {
            "Transfer-Encoding: gzip\r\n",
            "Transfer-Encoding: gzip, chunked\r\n",
            "Transfer-Encoding: chunked, gzip\r\n",
            "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
            "Transfer-Encoding: xchunked\r\n",
        };
        int before = atomic_load(&handler_calls);
        for (size_t i = 0; i < sizeof(te) / sizeof(te[0]); i++) {
                char req[512];
                snprintf(req, sizeof(req),
                         "POST /echo HTTP/1.1\r\nHost: n\r\n%s\r\n"
                         "0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: n\r\n\r\n",
                         te[i]);
                char *resp = request(f->port, f->co, req); /* one answer: nothing smuggled */
                if (status_of(resp) != 501)
                        fail_msg("case %zu: %s", i, resp);
                assert_true(says_close(resp));
                assert_string_equal(body_of(resp), "Unsupported transfer encoding");
                free(resp);
        }
        assert_int_equal(atomic_load(&handler_calls), before);
}

/* A malformed chunked body fails the read, and the connection closes. */
static void test_bad_chunked_body_fails_the_read(void **state)
{
        struct fixture *f = *state;
        struct client cl;
        connect_ok(f, &cl);
        client_send(&cl, "POST /echo HTTP/1.1\r\nHost: n\r\nTransfer-Encoding: chunked\r\n\r\n"
                         "3\r\nabcX\r\nGET /x HTTP/1.1\r\nHost: n\r\n\r\n");
        char *resp = client_read_response(&cl, false);
        assert_int_equal(status_of(resp), 400);
        assert_string_equal(body_of(resp), "rc=-1");
        assert_true(says_close(resp));
        free(resp);
        expect_closed(&cl);
        client_close(&cl);
}

/* ---- paths ---- */

static void test_path_is_percent_decoded(void **state)
{
        struct fixture *f = *state;
        char *resp = get(f->port, f->co, "/a%20b/%7e+c?q=%20&r=+");
        assert_int_equal(status_of(resp), 200);
        assert_non_null(
            strstr(body_of(resp), "path=/a b/~+c raw=/a%20b/%7e+c query=q=%20&r=+ auth="));
        free(resp);
}

static void test_bad_escape_is_400(void **state)
{
        struct fixture *f = *state;
        int before = atomic_load(&handler_calls);
        static const char *const paths[] = {"/a%zz", "/a%4", "/a%00b", "/%"};
        for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
                char *resp = get(f->port, f->co, paths[i]);
                if (status_of(resp) != 400)
                        fail_msg("%s: %s", paths[i], resp);
                assert_true(says_close(resp));
                free(resp);
        }
        assert_int_equal(atomic_load(&handler_calls), before);
}

/* As Go's ServeMux: a path that is not clean is redirected to its clean
 * form (query kept), the handler never sees it. */
static void test_unclean_path_is_redirected(void **state)
{
        struct fixture *f = *state;
        static const struct {
                const char *path, *location;
        } cases[] = {
            {"/a//b/../c?x=1", "/a/c?x=1"}, {"/a/./b/", "/a/b/"},  {"//", "/"}, {"/a/..", "/"},
            {"/x%20y//z", "/x%20y/z"},      {"/a%2F..%2Fb", "/b"}, /* decoded first, as Go's
                                                                      URL.Path */
        };
        int before = atomic_load(&handler_calls);
        struct client cl;
        connect_ok(f, &cl);
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char req[256], want[128];
                snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: n\r\n\r\n", cases[i].path);
                client_send(&cl, req);
                char *resp = client_read_response(&cl, false);
                snprintf(want, sizeof(want), "\r\nLocation: %s\r\n", cases[i].location);
                if (status_of(resp) != 301 || strstr(resp, want) == NULL)
                        fail_msg("%s: wanted 301 to %s: %s", cases[i].path, cases[i].location,
                                 resp);
                assert_false(says_close(resp)); /* an answer like any other */
                free(resp);
        }
        client_close(&cl);
        assert_int_equal(atomic_load(&handler_calls), before);
}

/* ---- hijacked connections ---- */

static void test_hijacked_connection_echoes_raw_bytes(void **state)
{
        struct fixture *f = *state;
        struct client cl;
        connect_ok(f, &cl);
        client_send(&cl, "GET /hijack HTTP/1.1\r\nHost: n\r\nConnection: Upgrade\r\n"
                         "Upgrade: echo\r\n\r\nearly bytes");
        static const char sw[] = "HTTP/1.1 101 Switching Protocols\r\n\r\n";
        client_need(&cl, strlen(sw) + 11);
        char *got = client_take(&cl, strlen(sw) + 11);
        assert_string_equal(got, "HTTP/1.1 101 Switching Protocols\r\n\r\nearly bytes");
        free(got);
        /* what came with the head was handed over as pending */
        assert_int_equal(atomic_load(&hijack_pending), 11);

        /* any bytes, both ways, several times */
        char blob[3000];
        for (size_t i = 0; i < sizeof(blob); i++)
                blob[i] = (char)(i * 7);
        for (int round = 0; round < 3; round++) {
                static const char ping[] = "ping\r\n\r\nGET / HTTP/1.1\r\n";
                client_send(&cl, ping);
                client_need(&cl, strlen(ping));
                got = client_take(&cl, strlen(ping));
                assert_string_equal(got, ping);
                free(got);
                client_send_n(&cl, blob, sizeof(blob));
                client_need(&cl, sizeof(blob));
                assert_memory_equal(cl.in, blob, sizeof(blob));
                free(client_take(&cl, sizeof(blob)));
        }
        /* our EOF ends the handler, which ends its side */
        client_shutdown_write(&cl);
        expect_closed(&cl);
        assert_int_equal(wait_for(&hijack_result, 30000), 1);
        client_close(&cl);
}

/* ---- the request-head parser (pure) ---- */

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

/* ---- paths (pure) ---- */

static void expect_clean(const char *in, const char *want)
{
        char *got = http_path_clean(in);
        if (strcmp(got, want) != 0)
                fail_msg("clean(\"%s\") = \"%s\", want \"%s\"", in, got, want);
        free(got);
}

/* Go's path.Clean cases (net/path/path_test.go), through ServeMux's
 * cleanPath: rooted, and a trailing slash kept. */
static void test_path_clean_as_go(void **state)
{
        (void)state;
        static const char *const cases[][2] = {
            {"", "/"},
            {"abc", "/abc"},
            {"abc/def", "/abc/def"},
            {"a/b/c", "/a/b/c"},
            {".", "/"},
            {"..", "/"},
            {"../..", "/"},
            {"../../abc", "/abc"},
            {"/abc", "/abc"},
            {"/", "/"},
            {"abc/", "/abc/"},
            {"abc/def/", "/abc/def/"},
            {"a/b/c/", "/a/b/c/"},
            {"./", "/"},
            {"../", "/"},
            {"../../", "/"},
            {"/abc/", "/abc/"},
            {"abc//def//ghi", "/abc/def/ghi"},
            {"//abc", "/abc"},
            {"///abc", "/abc"},
            {"//abc//", "/abc/"},
            {"abc//", "/abc/"},
            {"abc/./def", "/abc/def"},
            {"/./abc/def", "/abc/def"},
            {"abc/.", "/abc"},
            {"abc/def/ghi/../jkl", "/abc/def/jkl"},
            {"abc/def/../ghi/../jkl", "/abc/jkl"},
            {"abc/def/..", "/abc"},
            {"abc/def/../..", "/"},
            {"/abc/def/../..", "/"},
            {"abc/def/../../..", "/"},
            {"/abc/def/../../..", "/"},
            {"abc/def/../../../ghi/jkl/../../../mno", "/mno"},
            {"abc/./../def", "/def"},
            {"abc//./../def", "/def"},
            {"abc/../../././../def", "/def"},
            /* and the server's own */
            {"/a/./b", "/a/b"},
            {"/../a", "/a"},
            {"/a/b/", "/a/b/"},
            {"//", "/"},
            {"/a/b/../", "/a/"},
            {"/a/../", "/"},
            {"/a/.", "/a"},
            {"/a/./", "/a/"},
            {"/...", "/..."},
            {"/.a/..b/", "/.a/..b/"},
            {"/a b/%2e", "/a b/%2e"},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                expect_clean(cases[i][0], cases[i][1]);
}

static void expect_unescape(const char *in, size_t len, const char *want)
{
        char *got = http_path_unescape(in, len);
        if (want == NULL && got != NULL)
                fail_msg("unescape(\"%.*s\") = \"%s\", want NULL", (int)len, in, got);
        if (want != NULL && (got == NULL || strcmp(got, want) != 0))
                fail_msg("unescape(\"%.*s\") = %s%s%s, want \"%s\"", (int)len, in, got ? "\"" : "",
                         got ? got : "NULL", got ? "\"" : "", want);
        free(got);
}

static void test_path_unescape(void **state)
{
        (void)state;
        static const char *const cases[][2] = {
            {"/a%20b", "/a b"},
            {"/plain/path", "/plain/path"},
            {"/a%2Fb", "/a/b"},
            {"%2f", "/"},
            {"/%41%62%7E", "/Ab~"},
            {"/%e2%82%AC", "/\xe2\x82\xac"},
            {"/a+b", "/a+b"}, /* '+' is not a space in a path */
            {"/%25", "/%"},
            {"/%2525", "/%25"}, /* decoded once */
            {"", ""},
            {"/%00", NULL},
            {"/a%4", NULL},
            {"/a%", NULL},
            {"/%zz", NULL},
            {"/%g0", NULL},
            {"/%0g", NULL},
            {"/%%41", NULL},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                expect_unescape(cases[i][0], strlen(cases[i][0]), cases[i][1]);
        /* only len bytes are looked at */
        expect_unescape("/abc%20", 4, "/abc");
        expect_unescape("/%20", 3, NULL);
}

/* ---- the chunked coding (pure) ---- */

struct decoded {
        int rc;
        size_t used;
        size_t len;
        char out[512];
};

/* Decodes in[0..len) as a body reader would: `piece` more input bytes at
 * a time at most, into `room` bytes of output at a time; stops at the
 * end, an error, or when all input is used and more is needed. */
static struct decoded decode_in_pieces(const char *in, size_t len, size_t piece, size_t room)
{
        struct decoded d = {0};
        struct http_chunked st = {0};
        char buf[512];
        assert_true(room <= sizeof(buf));
        for (;;) {
                size_t avail = len - d.used < piece ? len - d.used : piece;
                size_t used = 99999, made = 99999;
                memset(buf, '#', sizeof(buf));
                d.rc = http_chunked_decode(&st, in + d.used, avail, buf, room, &used, &made);
                assert_true(used <= avail);
                assert_true(made <= room);
                for (size_t i = made; i < sizeof(buf); i++)
                        if (buf[i] != '#')
                                fail_msg("wrote past the %zu bytes made", made);
                assert_true(d.len + made < sizeof(d.out));
                memcpy(d.out + d.len, buf, made);
                d.len += made;
                d.used += used;
                d.out[d.len] = '\0';
                if (d.rc != 0 || d.used == len)
                        return d;
                if (used < avail && made < room)
                        fail_msg("no progress at input %zu: used %zu of %zu, made %zu of %zu",
                                 d.used, used, avail, made, room);
        }
}

/* in, decoded in pieces of every size into room of every size, gives rc,
 * body and (rc 1) used bytes of input (0: all of it). */
static void expect_chunked(const char *in, int rc, const char *body, size_t used)
{
        size_t len = strlen(in);
        if (used == 0)
                used = len;
        static const size_t pieces[] = {1, 2, 3, 7, 1000};
        static const size_t rooms[] = {1, 3, 5, 500};
        for (size_t p = 0; p < sizeof(pieces) / sizeof(pieces[0]); p++)
                for (size_t r = 0; r < sizeof(rooms) / sizeof(rooms[0]); r++) {
                        struct decoded d = decode_in_pieces(in, len, pieces[p], rooms[r]);
                        if (d.rc != rc || (rc >= 0 && strcmp(d.out, body) != 0) ||
                            (rc > 0 && d.used != used))
                                fail_msg("\"%s\" in pieces of %zu, room %zu: rc %d used %zu "
                                         "\"%s\"; want rc %d used %zu \"%s\"",
                                         in, pieces[p], rooms[r], d.rc, d.used, d.out, rc, used,
                                         body);
                }
}

static void test_chunked_decode_whole_and_in_pieces(void **state)
{
        (void)state;
        const char *in = "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\nGET / HTTP/1.1\r\n";
        size_t body_end = strlen(in) - strlen("GET / HTTP/1.1\r\n");
        /* all at once: the body, and nothing after the last chunk touched */
        struct http_chunked st = {0};
        char out[64];
        size_t used, made;
        assert_int_equal(http_chunked_decode(&st, in, strlen(in), out, sizeof(out), &used, &made),
                         1);
        assert_int_equal(used, body_end);
        assert_int_equal(made, 11);
        assert_memory_equal(out, "hello world", 11);
        /* done stays done */
        assert_int_equal(http_chunked_decode(&st, in + used, 4, out, sizeof(out), &used, &made), 1);
        assert_int_equal(used, 0);
        assert_int_equal(made, 0);

        /* one byte at a time: 0 until the very last byte, same result */
        memset(&st, 0, sizeof(st));
        size_t total = 0;
        char body[64];
        for (size_t i = 0; i < body_end; i++) {
                int rc = http_chunked_decode(&st, in + i, 1, body + total, sizeof(body) - total,
                                             &used, &made);
                assert_int_equal(used, 1);
                assert_int_equal(rc, i + 1 == body_end ? 1 : 0);
                total += made;
        }
        assert_int_equal(total, 11);
        assert_memory_equal(body, "hello world", 11);

        /* every piece and room size */
        expect_chunked(in, 1, "hello world", body_end);
        /* incomplete: all used, more needed */
        expect_chunked("5\r\nhel", 0, "hel", 0);
        expect_chunked("5\r\nhello\r\n0\r\n", 0, "hello", 0);
}

/* An output buffer smaller than the chunk: the chunk in parts, the input
 * used only as far as the output goes. */
static void test_chunked_decode_small_output(void **state)
{
        (void)state;
        const char *in = "b\r\nhello world\r\n0\r\n\r\n";
        struct http_chunked st = {0};
        char out[4];
        size_t used, made;
        assert_int_equal(http_chunked_decode(&st, in, strlen(in), out, 4, &used, &made), 0);
        assert_int_equal(used, 3 + 4);
        assert_int_equal(made, 4);
        assert_memory_equal(out, "hell", 4);
        size_t off = used;
        assert_int_equal(http_chunked_decode(&st, in + off, strlen(in) - off, out, 0, &used, &made),
                         0);
        assert_int_equal(used, 0);
        assert_int_equal(made, 0);
        assert_int_equal(http_chunked_decode(&st, in + off, strlen(in) - off, out, 4, &used, &made),
                         0);
        assert_int_equal(made, 4);
        assert_memory_equal(out, "o wo", 4);
        off += used;
        assert_int_equal(http_chunked_decode(&st, in + off, strlen(in) - off, out, 4, &used, &made),
                         1);
        assert_int_equal(made, 3);
        assert_memory_equal(out, "rld", 3);
        assert_int_equal(off + used, strlen(in));
}

static void test_chunked_decode_extensions_and_trailers(void **state)
{
        (void)state;
        expect_chunked("5;name=value\r\nhello\r\n0;last\r\n\r\n", 1, "hello", 0);
        expect_chunked("5;a=\"q;x\";b\r\nhello\r\n0\r\n\r\n", 1, "hello", 0);
        expect_chunked("5 ;a\r\nhello\r\n0\t\r\n\r\n", 1, "hello", 0);
        expect_chunked("5 \r\nhello\r\n0\r\n\r\n", 1, "hello", 0);
        expect_chunked("A\r\n0123456789\r\n0\r\nX-A: 1\r\nX-B: two words\r\n\r\n", 1, "0123456789",
                       0);
        expect_chunked("0\r\nX: y\n\n", 1, "", 0); /* trailers may end in bare LF, as headers */
        expect_chunked("0000000000000000000003\r\nabc\r\n0\r\n\r\n", 1, "abc", 0);
        expect_chunked("0\r\n\r\n", 1, "", 0);
}

static void test_chunked_decode_rejects(void **state)
{
        (void)state;
        static const char *const bad[] = {
            "g\r\n",                         /* not hex */
            "\r\n",                          /* no size */
            ";x\r\n",                        /* no size before the extension */
            "-1\r\n",                        /* no sign */
            "0x5\r\nhello\r\n",              /* no prefix */
            "5 x\r\nhello\r\n",              /* something after the size */
            "10000000000000000\r\n",         /* 2^64: overflows */
            "5\r\nhelloX\r\n",               /* data not followed by CRLF */
            "5\r\nhello\rX",                 /* ... CR then not LF */
            "5\r\nhello\n0\r\n\r\n",         /* ... bare LF */
            "5\nhello\r\n0\r\n\r\n",         /* size line ending in bare LF */
            "5;x\nhello\r\n0\r\n\r\n",       /* ... after an extension too */
            "5;a\rb\r\nhello\r\n0\r\n\r\n",  /* a CR inside the line */
            "5\rx\nhello\r\n",               /* CR not followed by LF */
            "5;a\001\r\nhello\r\n0\r\n\r\n", /* control character in the extension */
            "0\r\nX: a\001b\r\n\r\n",        /* ... in a trailer */
            "0\r\nX: y\rz\r\n\r\n",          /* CR inside a trailer line */
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                for (size_t piece = 1; piece <= 16; piece *= 4) {
                        struct decoded d = decode_in_pieces(bad[i], strlen(bad[i]), piece, 8);
                        if (d.rc != -1)
                                fail_msg("case %zu (\"%s\") in pieces of %zu: rc %d", i, bad[i],
                                         piece, d.rc);
                }
        }
        /* the largest size is not an overflow (it is just never complete) */
        struct decoded d = decode_in_pieces("ffffffffffffffff\r\nab", 20, 1000, 8);
        assert_int_equal(d.rc, 0);
        assert_string_equal(d.out, "ab");
        /* a line over 4096 bytes */
        char *long_ext = malloc(5000 + 1);
        memset(long_ext, 'e', 5000);
        memcpy(long_ext, "1;", 2);
        long_ext[5000] = '\0';
        d = decode_in_pieces(long_ext, 5000, 1000, 8);
        assert_int_equal(d.rc, -1);
        memcpy(long_ext, "0\r\nX: ", 6); /* a trailer line */
        d = decode_in_pieces(long_ext, 5000, 1000, 8);
        assert_int_equal(d.rc, -1);
        free(long_ext);
}

/* ---- the route table (pure) ---- */

static const struct router_route routes[] = {
    {"GET", "/pods", NULL, 1},
    {"GET", "/containerLogs/{podNamespace}/{podID}/{containerName}", NULL, 2},
    {"POST", "/exec/{podNamespace}/{podID}/{containerName}", NULL, 3},
    {"GET", "/exec/{podNamespace}/{podID}/{containerName}", NULL, 4},
    {"GET", "/healthz/...", NULL, 5},
    {NULL, "/any", NULL, 6},
    {"PUT", "/put/{x}", NULL, 7},
    {"GET", "/", NULL, 8},
    {"GET", "/{a}/{b}/{c}/{d}/{e}/{f}/{g}/{h}", NULL, 9},
    {"GET", "/{a}/{b}/{c}/{d}/{e}/{f}/{g}/{h}/{i}", NULL, 10},
};

/* The status of matching method path, and then the route's flags and
 * the params joined with ',' in *got. */
static int match(const char *method, const char *path, char *got, size_t n)
{
        struct router_match m;
        int rc = router_match(routes, sizeof(routes) / sizeof(routes[0]), method, path, &m);
        got[0] = '\0';
        if (rc != 200) {
                assert_null(m.route);
                assert_int_equal(m.n_params, 0);
                return rc;
        }
        snprintf(got, n, "%u", m.route->flags);
        for (size_t i = 0; i < m.n_params; i++)
                snprintf(got + strlen(got), n - strlen(got), "%s%s", i ? "," : ":", m.params[i]);
        router_match_release(&m);
        assert_int_equal(m.n_params, 0);
        return rc;
}

static void test_router_match(void **state)
{
        (void)state;
        static const struct {
                const char *method, *path;
                int status;
                const char *got;
        } cases[] = {
            {"GET", "/pods", 200, "1"},
            {"HEAD", "/pods", 200, "1"}, /* GET takes HEAD */
            {"POST", "/pods", 405, ""},
            {"GET", "/pods/", 404, ""},
            {"GET", "/podsx", 404, ""},
            {"GET", "/containerLogs/ns/web-1/c", 200, "2:ns,web-1,c"},
            {"GET", "/containerLogs/ns/p q/c", 200, "2:ns,p q,c"},
            {"GET", "/containerLogs/ns//c", 404, ""}, /* an empty segment is no param */
            {"GET", "/containerLogs/ns/p/", 404, ""},
            {"GET", "/containerLogs/ns/p", 404, ""},
            {"GET", "/containerLogs/ns/p/c/d", 404, ""},
            {"POST", "/exec/a/b/c", 200, "3:a,b,c"},
            {"GET", "/exec/a/b/c", 200, "4:a,b,c"}, /* the first route that matches both */
            {"HEAD", "/exec/a/b/c", 200, "4:a,b,c"},
            {"PUT", "/exec/a/b/c", 405, ""},
            {"GET", "/healthz", 200, "5"},
            {"GET", "/healthz/", 200, "5"},
            {"GET", "/healthz/ping/deeper", 200, "5"},
            {"GET", "/healthzx", 404, ""},
            {"POST", "/healthz/ping", 405, ""},
            {"DELETE", "/any", 200, "6"}, /* any method */
            {"GET", "/any", 200, "6"},
            {"PUT", "/put/1", 200, "7:1"},
            {"HEAD", "/put/1", 405, ""}, /* only GET takes HEAD */
            {"GET", "/put/1", 405, ""},
            {"GET", "/", 200, "8"},
            {"POST", "/", 405, ""},
            {"GET", "/1/2/3/4/5/6/7/8", 200, "9:1,2,3,4,5,6,7,8"},
            {"GET", "/1/2/3/4/5/6/7/8/9", 404, ""}, /* more than ROUTER_MAX_PARAMS */
            {"GET", "/nope", 404, ""},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char got[256];
                int rc = match(cases[i].method, cases[i].path, got, sizeof(got));
                if (rc != cases[i].status || strcmp(got, cases[i].got) != 0)
                        fail_msg("%s %s: %d \"%s\", want %d \"%s\"", cases[i].method, cases[i].path,
                                 rc, got, cases[i].status, cases[i].got);
        }
        /* no routes at all */
        struct router_match m;
        assert_int_equal(router_match(routes, 0, "GET", "/pods", &m), 404);
        /* a prefix route over everything */
        static const struct router_route all[] = {{"GET", "/...", NULL, 1}};
        assert_int_equal(router_match(all, 1, "GET", "/x/y", &m), 200);
        assert_ptr_equal(m.route, &all[0]);
        router_match_release(&m);
        assert_int_equal(router_match(all, 1, "PUT", "/", &m), 405);
        /* the Allow header of a 405: GET brings HEAD, in go-restful's order */
        char allow[64];
        size_t n = sizeof(routes) / sizeof(routes[0]);
        assert_string_equal(router_allowed(routes, n, "/exec/a/b/c", allow, sizeof(allow)),
                            "GET, HEAD, POST");
        assert_string_equal(router_allowed(routes, n, "/put/x", allow, sizeof(allow)), "PUT");
        assert_string_equal(router_allowed(routes, n, "/nope/x", allow, sizeof(allow)), "");
}

#define BOTH(t, setup_t, setup_p)                                                                  \
        {#t " (TLS)", t, setup_t, teardown, NULL},                                                 \
        {                                                                                          \
#t " (plain)", t, setup_p, teardown, NULL                                          \
        }
#define SERVER(t) BOTH(t, setup_tls, setup_plain)
#define TLS_ONLY(t)                                                                                \
        {                                                                                          \
#t " (TLS)", t, setup_tls, teardown, NULL                                          \
        }
#define PLAIN_ONLY(t)                                                                              \
        {                                                                                          \
#t " (plain)", t, setup_plain, teardown, NULL                                      \
        }

int main(void)
{
        /* The test's own client writes must not die of SIGPIPE; the server's
         * threads are started with it unblocked (see start()). */
        sigset_t pipe;
        sigemptyset(&pipe);
        sigaddset(&pipe, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &pipe, NULL);
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_selfsigned_created_then_reused),
            cmocka_unit_test(test_selfsigned_contents),
            cmocka_unit_test(test_selfsigned_half_pair_is_an_error),
            cmocka_unit_test(test_given_cert_and_key_are_used),
            cmocka_unit_test(test_start_errors_name_step_and_file),
            cmocka_unit_test(test_client_cert_from_client_ca_is_reported),
            cmocka_unit_test(test_client_without_cert_connects),
            cmocka_unit_test(test_client_cert_from_other_ca_gives_no_identity),
            cmocka_unit_test(test_no_client_ca_requests_no_cert),
            SERVER(test_request_fields_and_response_head),
            SERVER(test_stream_is_chunked),
            SERVER(test_stream_to_http10_is_unframed),
            SERVER(test_unended_stream_is_ended),
            SERVER(test_no_answer_is_500),
            SERVER(test_head_has_no_body),
            SERVER(test_big_response_arrives_whole),
            SERVER(test_client_gone_during_big_write_does_not_kill),
            SERVER(test_garbage_is_400),
            SERVER(test_oversized_head_is_431),
            TLS_ONLY(test_plain_http_gets_plain_400),
            TLS_ONLY(test_failed_handshake_is_closed),
            PLAIN_ONLY(test_tls_hello_on_plain_port_is_400),
            BOTH(test_silent_client_is_closed_at_the_deadline, setup_tls_short_deadline,
                 setup_plain_short_deadline),
            SERVER(test_disconnect_fails_stream_write),
            SERVER(test_disconnect_is_seen_by_a_waiting_handler),
            SERVER(test_stop_with_open_connections_is_prompt),
            cmocka_unit_test(test_tls_min_version_and_cipher_suites),
            cmocka_unit_test(test_lazy_tls_is_set_up_at_the_first_connection),
            SERVER(test_connections_beyond_the_limit_are_closed),
            SERVER(test_keepalive_serves_requests_in_turn),
            SERVER(test_connection_close_request_is_closed),
            SERVER(test_http10_is_closed_after_one_request),
            SERVER(test_pipelined_requests_are_answered_in_order),
            BOTH(test_idle_connection_is_closed, setup_tls_short_idle, setup_plain_short_idle),
            SERVER(test_body_with_content_length_is_read),
            SERVER(test_chunked_body_is_read),
            SERVER(test_unread_body_is_discarded),
            SERVER(test_large_unread_body_closes_the_connection),
            SERVER(test_too_large_body_is_413),
            SERVER(test_expect_continue),
            SERVER(test_content_length_with_chunked_is_400),
            SERVER(test_unsupported_transfer_encoding_is_501),
            SERVER(test_bad_chunked_body_fails_the_read),
            SERVER(test_path_is_percent_decoded),
            SERVER(test_bad_escape_is_400),
            SERVER(test_unclean_path_is_redirected),
            SERVER(test_hijacked_connection_echoes_raw_bytes),
            cmocka_unit_test(test_parse_request_fields),
            cmocka_unit_test(test_parse_request_incomplete_and_lf),
            cmocka_unit_test(test_parse_request_absolute_form),
            cmocka_unit_test(test_parse_request_rejects),
            cmocka_unit_test(test_parse_request_header_lookup),
            cmocka_unit_test(test_path_clean_as_go),
            cmocka_unit_test(test_path_unescape),
            cmocka_unit_test(test_chunked_decode_whole_and_in_pieces),
            cmocka_unit_test(test_chunked_decode_small_output),
            cmocka_unit_test(test_chunked_decode_extensions_and_trailers),
            cmocka_unit_test(test_chunked_decode_rejects),
            cmocka_unit_test(test_router_match),
        };
        return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
