/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTTP/1.1 client's connection and exchange (http/http_client.h): a
 * non-blocking socket, TLS through OpenSSL over it, every wait a poll()
 * bounded by the deadline and cut in slices of at most a second to look at
 * the stop flag.
 */
#include "http/http_client.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/netutil.h"
#include "util/xalloc.h"

#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <zlib.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define HTTP_READ_CHUNK (16 * 1024)
/* The largest answer head (Go's transport allows 10 MB; no server the
 * kubelet talks to sends more than a few KB). */
#define HTTP_MAX_HEAD (1 << 20)
#define HTTP_POLL_SLICE_MS 1000
/* client-go's TLSHandshakeTimeout */
#define HTTP_TLS_HANDSHAKE_MS 10000
/* informational answers taken before the real one (Go: 5) */
#define HTTP_MAX_1XX 5

enum body_mode {
        BODY_NONE,    /* no body (HEAD, 1xx, 204, 304) or read to its end */
        BODY_LENGTH,  /* Content-Length bytes */
        BODY_CHUNKED, /* the chunked coding */
        BODY_CLOSE,   /* up to the end of the connection */
};

struct http_client {
        char *host, *port;
        struct http_client_options o;
        char *tls_name;
        char *unix_path;

        int fd; /* -1: no connection */
        SSL *ssl;
        bool reused; /* the current exchange runs on a kept connection */
        int connect_errno;

        /* bytes read and not consumed yet: buf[pos..len) */
        char *buf;
        size_t pos, len, cap;

        /* the body being read */
        enum body_mode mode;
        uint64_t left; /* BODY_LENGTH: bytes still to come */
        struct http_chunked chunked;
        bool body_done;
        bool keep; /* the connection may be kept after this exchange */
        bool gzip;
        z_stream z;
        bool z_live;
        char *zin; /* framed body bytes waiting for inflate */

        /* the names of a server certificate refused for its name */
        char *mismatch_names;
};

/* ---- errors ---------------------------------------------------------- */

static const char *ssl_reason(void)
{
        unsigned long e = ERR_peek_last_error();
        const char *r = e ? ERR_reason_error_string(e) : NULL;
        return r ? r : "TLS failure";
}

static int __attribute__((format(printf, 3, 4)))
fail(ck_error_t *err, int code, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        cleanup_free char *msg = xvasprintf(fmt, ap);
        va_end(ap);
        return ck_error_make_code(err, code, "%s", msg);
}

/* ---- the connection -------------------------------------------------- */

struct http_client *http_client_new(const char *host, const char *port,
                                    const struct http_client_options *o)
{
        struct http_client *c = xcalloc(1, sizeof(*c));
        c->host = xstrdup(host);
        c->port = xstrdup(port);
        c->o = *o;
        c->tls_name = o->tls_name ? xstrdup(o->tls_name) : NULL;
        c->o.tls_name = c->tls_name;
        c->unix_path = o->unix_path ? xstrdup(o->unix_path) : NULL;
        c->o.unix_path = c->unix_path;
        c->fd = -1;
        return c;
}

static void gz_end(struct http_client *c)
{
        if (c->z_live)
                inflateEnd(&c->z);
        c->z_live = false;
        c->gzip = false;
}

static void conn_close(struct http_client *c)
{
        if (c->ssl) {
                SSL_free(c->ssl);
                c->ssl = NULL;
        }
        if (c->fd >= 0)
                close(c->fd);
        c->fd = -1;
        c->pos = c->len = 0;
        c->mode = BODY_NONE;
        c->body_done = true;
        gz_end(c);
}

void http_client_free(struct http_client *c)
{
        if (c == NULL)
                return;
        conn_close(c);
        free(c->buf);
        free(c->zin);
        free(c->host);
        free(c->port);
        free(c->tls_name);
        free(c->unix_path);
        free(c->mismatch_names);
        free(c);
}

void http_client_set_stop(struct http_client *c, const atomic_bool *stop)
{
        c->o.stop = stop;
}

int http_client_connect_errno(const struct http_client *c)
{
        return c->connect_errno;
}

/* Waits until fd is ready for events, the deadline passes, or the stop
 * flag is raised; what: the step, for the message. */
static int wait_fd(struct http_client *c, short events, int64_t deadline, const char *what,
                   ck_error_t *err)
{
        for (;;) {
                if (c->o.stop && atomic_load(c->o.stop))
                        return fail(err, HTTP_ERR_STOPPED, "%s: stopped", what);
                int timeout = HTTP_POLL_SLICE_MS;
                if (deadline > 0) {
                        int64_t left = deadline - fs_now_mono_ms();
                        if (left <= 0)
                                return fail(err, HTTP_ERR_TIMEOUT, "%s: timeout", what);
                        if (left < timeout)
                                timeout = (int)left;
                }
                struct pollfd p = {.fd = c->fd, .events = events};
                int n = poll(&p, 1, timeout);
                if (n > 0)
                        return 0;
                if (n < 0 && errno != EINTR)
                        return ck_error_make(err, errno, "%s: poll", what);
        }
}

/* The names a certificate is valid for: its DNS and IP SANs, ", "-joined. */
static char *cert_names(X509 *x)
{
        GENERAL_NAMES *names = X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);
        char *out = xstrdup("");
        for (int i = 0; names && i < sk_GENERAL_NAME_num(names); i++) {
                const GENERAL_NAME *g = sk_GENERAL_NAME_value(names, i);
                char one[64] = "";
                const char *name = one;
                if (g->type == GEN_DNS) {
                        name = (const char *)ASN1_STRING_get0_data(g->d.dNSName);
                } else if (g->type == GEN_IPADD && g->d.iPAddress->length == 4) {
                        const unsigned char *a = g->d.iPAddress->data;
                        snprintf(one, sizeof(one), "%u.%u.%u.%u", a[0], a[1], a[2], a[3]);
                } else if (g->type == GEN_IPADD && g->d.iPAddress->length == 16) {
                        inet_ntop(AF_INET6, g->d.iPAddress->data, one, sizeof(one));
                } else {
                        continue;
                }
                char *next = xasprintf("%s%s%s", out, out[0] ? ", " : "", name);
                free(out);
                out = next;
        }
        GENERAL_NAMES_free(names);
        return out;
}

/* Why the server's certificate was refused, in the words of Go's x509. */
static char *verify_message(long v)
{
        switch (v) {
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
        case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
        case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
        case X509_V_ERR_CERT_SIGNATURE_FAILURE:
                return xstrdup("x509: certificate signed by unknown authority");
        case X509_V_ERR_CERT_HAS_EXPIRED:
        case X509_V_ERR_CERT_NOT_YET_VALID:
                return xstrdup("x509: certificate has expired or is not yet valid");
        default:
                return xasprintf("x509: %s", X509_verify_cert_error_string(v));
        }
}

/* One TLS step (handshake, read, write): 1 done, 0 wait and retry, -1 err. */
static int tls_step(struct http_client *c, int rc, int64_t deadline, const char *what,
                    ck_error_t *err)
{
        int e = SSL_get_error(c->ssl, rc);
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
                return wait_fd(c, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline, what,
                               err) < 0
                           ? -1
                           : 0;
        if (e == SSL_ERROR_SYSCALL && errno != 0)
                return ck_error_make_code(err, HTTP_ERR_TRANSPORT, "%s: %s", what, strerror(errno));
        if (e == SSL_ERROR_SSL) {
                long v = SSL_get_verify_mode(c->ssl) & SSL_VERIFY_PEER
                             ? SSL_get_verify_result(c->ssl)
                             : X509_V_OK;
                if (v == X509_V_ERR_HOSTNAME_MISMATCH || v == X509_V_ERR_IP_ADDRESS_MISMATCH) {
                        const char *want = c->tls_name ? c->tls_name : c->host;
                        const char *names = c->mismatch_names ? c->mismatch_names : "";
                        if (names[0] == '\0')
                                return fail(err, HTTP_ERR_TRANSPORT,
                                            "%s: tls: failed to verify certificate: x509: "
                                            "certificate is not valid for any names, but wanted "
                                            "to match %s",
                                            what, want);
                        return fail(err, HTTP_ERR_TRANSPORT,
                                    "%s: tls: failed to verify certificate: x509: certificate is "
                                    "valid for %s, not %s",
                                    what, names, want);
                }
                if (v != X509_V_OK) {
                        cleanup_free char *why = verify_message(v);
                        return fail(err, HTTP_ERR_TRANSPORT,
                                    "%s: tls: failed to verify certificate: %s", what, why);
                }
                return fail(err, HTTP_ERR_TRANSPORT, "%s: tls: %s", what, ssl_reason());
        }
        return fail(err, HTTP_ERR_TRANSPORT, "%s: connection closed", what);
}

static bool is_ip_literal(const char *host)
{
        struct in6_addr a;
        return inet_pton(AF_INET, host, &a) == 1 || inet_pton(AF_INET6, host, &a) == 1;
}

/* The handshake's certificate check: OpenSSL's verdict, and for a name
 * mismatch the names the leaf holds, kept for the message. */
static int verify_cb(int ok, X509_STORE_CTX *x)
{
        int e = X509_STORE_CTX_get_error(x);
        if (ok || (e != X509_V_ERR_HOSTNAME_MISMATCH && e != X509_V_ERR_IP_ADDRESS_MISMATCH))
                return ok;
        SSL *ssl = X509_STORE_CTX_get_ex_data(x, SSL_get_ex_data_X509_STORE_CTX_idx());
        struct http_client *c = ssl ? SSL_get_app_data(ssl) : NULL;
        X509 *leaf = X509_STORE_CTX_get_current_cert(x);
        if (c != NULL && leaf != NULL && c->mismatch_names == NULL)
                c->mismatch_names = cert_names(leaf);
        return ok;
}

static int tls_open(struct http_client *c, int64_t deadline, ck_error_t *err)
{
        const char *name = c->tls_name ? c->tls_name : c->host;
        ERR_clear_error();
        c->ssl = SSL_new(c->o.tls);
        if (c->ssl == NULL || SSL_set_fd(c->ssl, c->fd) != 1)
                return fail(err, HTTP_ERR_TRANSPORT, "TLS handshake: %s", ssl_reason());
        SSL_set_app_data(c->ssl, c);
        if (!is_ip_literal(name))
                SSL_set_tlsext_host_name(c->ssl, name);
        if (SSL_get_verify_mode(c->ssl) & SSL_VERIFY_PEER) {
                /* checked in the handshake, before the client certificate
                 * is shown; as Go's x509: the SANs only, no partial wildcards */
                X509_VERIFY_PARAM *vp = SSL_get0_param(c->ssl);
                X509_VERIFY_PARAM_set_hostflags(vp, X509_CHECK_FLAG_NEVER_CHECK_SUBJECT |
                                                        X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
                int ok = is_ip_literal(name) ? X509_VERIFY_PARAM_set1_ip_asc(vp, name)
                                             : X509_VERIFY_PARAM_set1_host(vp, name, 0);
                if (ok != 1)
                        return fail(err, HTTP_ERR_TRANSPORT,
                                    "TLS handshake: a server name OpenSSL refuses: %s", name);
                SSL_set_verify(c->ssl, SSL_VERIFY_PEER, verify_cb);
        }
        free(c->mismatch_names);
        c->mismatch_names = NULL;
        for (;;) {
                ERR_clear_error();
                errno = 0;
                int rc = SSL_connect(c->ssl);
                if (rc == 1)
                        return 0;
                if (tls_step(c, rc, deadline, "TLS handshake", err) < 0)
                        return -1;
        }
}

static int conn_open(struct http_client *c, int64_t deadline, ck_error_t *err)
{
        int64_t dial_deadline = deadline;
        if (c->o.connect_timeout_ms > 0) {
                int64_t d = fs_now_mono_ms() + c->o.connect_timeout_ms;
                if (dial_deadline <= 0 || d < dial_deadline)
                        dial_deadline = d;
        }
        ck_error_t derr = NULL;
        c->connect_errno = 0;
        int fd = c->unix_path ? net_unix_dial(c->unix_path, dial_deadline, &derr)
                              : net_tcp_dial(c->host, c->port, dial_deadline, true, &derr);
        if (fd < 0) {
                c->connect_errno = derr->status;
                int code = derr->status == ETIMEDOUT && deadline > 0 && fs_now_mono_ms() >= deadline
                               ? HTTP_ERR_TIMEOUT
                               : HTTP_ERR_CONNECT;
                ck_error_make_code(err, code, "%s", ck_error_msg(derr));
                ck_error_release(&derr);
                return -1;
        }
        c->fd = fd;
        if (c->o.linger) {
                struct linger lg = {.l_onoff = 1, .l_linger = 1};
                (void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
        }
        if (c->o.tcp_keepalive_s > 0) {
                int one = 1, s = c->o.tcp_keepalive_s;
                (void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
                (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &s, sizeof(s));
                (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &s, sizeof(s));
        }
        int64_t hs_deadline = fs_now_mono_ms() + HTTP_TLS_HANDSHAKE_MS;
        if (deadline > 0 && deadline < hs_deadline)
                hs_deadline = deadline;
        if (c->o.tls && tls_open(c, hs_deadline, err) < 0) {
                conn_close(c);
                return -1;
        }
        return 0;
}

/* A kept connection is alive when nothing is waiting on it: a server that
 * closed it (EOF) or sent something unasked makes it readable. */
static bool conn_idle_alive(struct http_client *c)
{
        struct pollfd p = {.fd = c->fd, .events = POLLIN};
        int n = poll(&p, 1, 0);
        if (n == 0)
                return c->ssl == NULL || SSL_pending(c->ssl) == 0;
        if (n < 0 || c->ssl == NULL)
                return false;
        /* TLS: records that are not data (a TLS 1.3 session ticket) are
         * taken here; alive when no data and no end came with them */
        char b;
        size_t got = 0;
        ERR_clear_error();
        errno = 0;
        int rc = SSL_peek_ex(c->ssl, &b, 1, &got);
        return rc != 1 && SSL_get_error(c->ssl, rc) == SSL_ERROR_WANT_READ;
}

static int conn_write(struct http_client *c, const char *data, size_t len, int64_t deadline,
                      ck_error_t *err)
{
        while (len > 0) {
                if (c->ssl) {
                        size_t n = 0;
                        ERR_clear_error();
                        errno = 0;
                        int rc = SSL_write_ex(c->ssl, data, len, &n);
                        if (rc == 1) {
                                data += n;
                                len -= n;
                        } else if (tls_step(c, rc, deadline, "write request", err) < 0) {
                                return -1;
                        }
                        continue;
                }
                ssize_t n = send(c->fd, data, len, MSG_NOSIGNAL);
                if (n > 0) {
                        data += n;
                        len -= (size_t)n;
                } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                        if (wait_fd(c, POLLOUT, deadline, "write request", err) < 0)
                                return -1;
                } else if (n < 0 && errno != EINTR) {
                        return ck_error_make_code(err, HTTP_ERR_TRANSPORT, "write request: %s",
                                                  strerror(errno));
                }
        }
        return 0;
}

/* Reads what the connection has into buf (room made first): the count, 0
 * at EOF, -1 with err. */
static ssize_t conn_fill(struct http_client *c, size_t limit, int64_t deadline, const char *what,
                         ck_error_t *err)
{
        /* a server that keeps sending does not outlast the deadline */
        if (deadline > 0 && fs_now_mono_ms() >= deadline)
                return fail(err, HTTP_ERR_TIMEOUT, "%s: timeout", what);
        if (c->o.stop && atomic_load(c->o.stop))
                return fail(err, HTTP_ERR_STOPPED, "%s: stopped", what);
        if (c->pos > 0 && c->pos == c->len)
                c->pos = c->len = 0;
        if (c->cap - c->len < HTTP_READ_CHUNK / 2) {
                if (c->pos > 0) {
                        memmove(c->buf, c->buf + c->pos, c->len - c->pos);
                        c->len -= c->pos;
                        c->pos = 0;
                }
                if (c->cap - c->len < HTTP_READ_CHUNK / 2) {
                        if (c->cap >= limit)
                                return fail(err, HTTP_ERR_PROTOCOL,
                                            "%s: answer head larger than %zu bytes", what, limit);
                        c->cap = c->cap ? c->cap * 2 : HTTP_READ_CHUNK;
                        c->buf = xrealloc(c->buf, c->cap + 1);
                }
        }
        char *dst = c->buf + c->len;
        size_t room = c->cap - c->len;
        for (;;) {
                if (c->ssl) {
                        size_t n = 0;
                        ERR_clear_error();
                        errno = 0;
                        int rc = SSL_read_ex(c->ssl, dst, room, &n);
                        if (rc == 1) {
                                c->len += n;
                                return (ssize_t)n;
                        }
                        int e = SSL_get_error(c->ssl, rc);
                        if (e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && errno == 0))
                                return 0;
                        if (tls_step(c, rc, deadline, what, err) < 0)
                                return -1;
                        continue;
                }
                ssize_t n = recv(c->fd, dst, room, 0);
                if (n >= 0) {
                        c->len += (size_t)n;
                        return n;
                }
                if (errno == EAGAIN || errno == EWOULDBLOCK) {
                        if (wait_fd(c, POLLIN, deadline, what, err) < 0)
                                return -1;
                } else if (errno != EINTR) {
                        return ck_error_make_code(err, HTTP_ERR_TRANSPORT, "%s: %s", what,
                                                  strerror(errno));
                }
        }
}

/* ---- the exchange ---------------------------------------------------- */

static bool has_crlf(const char *s)
{
        return s != NULL && strpbrk(s, "\r\n") != NULL;
}

static bool method_has_body(const char *m)
{
        return strcmp(m, "POST") == 0 || strcmp(m, "PUT") == 0 || strcmp(m, "PATCH") == 0;
}

static char *request_head(const struct http_request_spec *r)
{
        size_t cap = 256 + strlen(r->method) + strlen(r->target) + strlen(r->host);
        for (size_t i = 0; i < r->n_headers; i++)
                cap += strlen(r->headers[i].name) + strlen(r->headers[i].value) + 4;
        char *h = xmalloc(cap);
        int n = snprintf(h, cap, "%s %s HTTP/1.1\r\nHost: %s\r\n", r->method, r->target, r->host);
        for (size_t i = 0; i < r->n_headers; i++)
                n += snprintf(h + n, cap - (size_t)n, "%s: %s\r\n", r->headers[i].name,
                              r->headers[i].value);
        if (r->body || method_has_body(r->method))
                n += snprintf(h + n, cap - (size_t)n, "Content-Length: %zu\r\n",
                              r->body ? r->body_len : 0);
        if (r->gzip)
                n += snprintf(h + n, cap - (size_t)n, "Accept-Encoding: gzip\r\n");
        snprintf(h + n, cap - (size_t)n, "\r\n");
        return h;
}

/* Reads a whole answer head into a: 1 done, 0 the connection ended before
 * any byte of it, -1 err. */
static int read_head(struct http_client *c, int64_t deadline, struct http_answer *a,
                     ck_error_t *err)
{
        for (;;) {
                size_t have = c->len - c->pos;
                if (have > 0) {
                        enum http_parse_result r =
                            http_parse_response(c->buf + c->pos, have, &a->parsed);
                        if (r == HTTP_PARSE_BAD)
                                return fail(err, HTTP_ERR_PROTOCOL,
                                            "read answer: malformed HTTP response");
                        if (r == HTTP_PARSE_OK) {
                                a->status = a->parsed.status;
                                a->head = xstrndup(c->buf + c->pos, a->parsed.head_len);
                                /* the parsed pointers into the head's copy */
                                a->parsed.reason = a->head + (a->parsed.reason - (c->buf + c->pos));
                                c->pos += a->parsed.head_len;
                                return 1;
                        }
                }
                ssize_t n = conn_fill(c, HTTP_MAX_HEAD, deadline, "read answer", err);
                if (n < 0)
                        return -1;
                if (n == 0)
                        return have == 0
                                   ? 0
                                   : fail(err, HTTP_ERR_TRANSPORT, "read answer: unexpected EOF");
        }
}

static bool token_in(const char *v, const char *tok)
{
        size_t n = strlen(tok);
        for (const char *p = v; (p = strcasestr(p, tok)) != NULL; p += n) {
                bool start = p == v || p[-1] == ',' || p[-1] == ' ' || p[-1] == '\t';
                char e = p[n];
                if (start && (e == '\0' || e == ',' || e == ' ' || e == '\t'))
                        return true;
        }
        return false;
}

/* Sets up reading the body of the answer to req. */
static int start_body(struct http_client *c, const struct http_request_spec *req,
                      const struct http_answer *a, ck_error_t *err)
{
        const struct http_response *p = &a->parsed;
        cleanup_free char *conn = http_answer_header(a, "Connection");
        /* kept: HTTP/1.1 without "Connection: close", not switched to
         * another protocol, framing that is not ambiguous */
        c->keep = c->o.keep_alive && p->version_minor == 1 && !(conn && token_in(conn, "close")) &&
                  p->status != 101 && !(p->chunked && p->has_content_length);
        c->body_done = false;
        memset(&c->chunked, 0, sizeof(c->chunked));
        if (strcmp(req->method, "HEAD") == 0 || p->status < 200 || p->status == 204 ||
            p->status == 304) {
                c->mode = BODY_NONE;
                c->body_done = true;
        } else if (p->chunked) {
                c->mode = BODY_CHUNKED;
        } else if (p->has_content_length) {
                c->mode = BODY_LENGTH;
                c->left = p->content_length;
                c->body_done = c->left == 0;
        } else {
                c->mode = BODY_CLOSE;
                c->keep = false;
        }
        cleanup_free char *enc = http_answer_header(a, "Content-Encoding");
        if (req->gzip && enc && strcasecmp(enc, "gzip") == 0 && !c->body_done) {
                memset(&c->z, 0, sizeof(c->z));
                if (inflateInit2(&c->z, 16 + MAX_WBITS) != Z_OK)
                        return fail(err, HTTP_ERR_TRANSPORT, "read answer: gzip: cannot start");
                if (c->zin == NULL)
                        c->zin = xmalloc(HTTP_READ_CHUNK);
                c->z_live = true;
                c->gzip = true;
        }
        return 0;
}

int http_client_send(struct http_client *c, const struct http_request_spec *req,
                     int64_t deadline_ms, struct http_answer *a, ck_error_t *err)
{
        memset(a, 0, sizeof(*a));
        if (has_crlf(req->method) || has_crlf(req->target) || has_crlf(req->host) ||
            strpbrk(req->target, " \t") != NULL)
                return fail(err, HTTP_ERR_PROTOCOL, "invalid request line");
        for (size_t i = 0; i < req->n_headers; i++)
                if (has_crlf(req->headers[i].name) || has_crlf(req->headers[i].value))
                        return fail(err, HTTP_ERR_PROTOCOL, "invalid header field for \"%s\"",
                                    req->headers[i].name);
        /* an exchange not ended, or a connection the server dropped */
        if (c->fd >= 0 && (!c->body_done || !c->keep || !conn_idle_alive(c)))
                conn_close(c);
        cleanup_free char *head = request_head(req);
        bool idempotent = strcmp(req->method, "GET") == 0 || strcmp(req->method, "HEAD") == 0;
        for (int attempt = 0;; attempt++) {
                c->reused = c->fd >= 0;
                if (!c->reused && conn_open(c, deadline_ms, err) < 0)
                        return -1;
                c->pos = c->len = 0;
                int rc = conn_write(c, head, strlen(head), deadline_ms, err);
                if (rc == 0 && req->body && req->body_len > 0)
                        rc = conn_write(c, req->body, req->body_len, deadline_ms, err);
                /* 1xx answers (100 Continue, 103 Early Hints) precede the
                 * real one; 101 ends HTTP/1 on the connection */
                for (int informational = 0; rc == 0;) {
                        rc = read_head(c, deadline_ms, a, err);
                        if (rc == 1 && a->status >= 100 && a->status < 200 && a->status != 101) {
                                http_answer_clear(a);
                                if (++informational > HTTP_MAX_1XX) {
                                        rc = fail(err, HTTP_ERR_PROTOCOL,
                                                  "read answer: too many 1xx responses");
                                        break;
                                }
                                rc = 0;
                                continue;
                        }
                        rc = rc == 1 ? 0 : rc == 0 ? 1 : -1;
                        break;
                }
                if (rc == 0)
                        break;
                /* rc 1: EOF before any byte of the answer */
                bool retry = c->reused && attempt == 0 &&
                             (rc == 1 || (err && *err && (*err)->code == HTTP_ERR_TRANSPORT)) &&
                             idempotent;
                conn_close(c);
                if (retry) {
                        if (err)
                                ck_error_release(err);
                        continue;
                }
                if (rc == 1)
                        return fail(err, HTTP_ERR_TRANSPORT, "read answer: EOF");
                return -1;
        }
        if (start_body(c, req, a, err) < 0) {
                http_answer_clear(a);
                conn_close(c);
                return -1;
        }
        return 0;
}

/* Body bytes as framed (de-chunked), before any content coding. */
static ssize_t read_framed(struct http_client *c, char *out, size_t cap, int64_t deadline,
                           ck_error_t *err)
{
        for (;;) {
                if (c->body_done || cap == 0)
                        return 0;
                size_t have = c->len - c->pos;
                if (c->mode == BODY_LENGTH && have > 0) {
                        size_t n = have < cap ? have : cap;
                        if (n > c->left)
                                n = (size_t)c->left;
                        memcpy(out, c->buf + c->pos, n);
                        c->pos += n;
                        c->left -= n;
                        c->body_done = c->left == 0;
                        return (ssize_t)n;
                }
                if (c->mode == BODY_CLOSE && have > 0) {
                        size_t n = have < cap ? have : cap;
                        memcpy(out, c->buf + c->pos, n);
                        c->pos += n;
                        return (ssize_t)n;
                }
                if (c->mode == BODY_CHUNKED && have > 0) {
                        size_t used = 0, made = 0;
                        int r = http_chunked_decode(&c->chunked, c->buf + c->pos, have, out, cap,
                                                    &used, &made);
                        c->pos += used;
                        if (r < 0)
                                return fail(err, HTTP_ERR_PROTOCOL,
                                            "read body: malformed chunked encoding");
                        if (r == 1)
                                c->body_done = true;
                        if (made > 0 || r == 1)
                                return (ssize_t)made;
                }
                ssize_t n = conn_fill(c, SIZE_MAX, deadline, "read body", err);
                if (n < 0)
                        return -1;
                if (n == 0) {
                        if (c->mode == BODY_CLOSE) {
                                c->body_done = true;
                                return 0;
                        }
                        return fail(err, HTTP_ERR_TRANSPORT, "read body: unexpected EOF");
                }
        }
}

ssize_t http_client_read(struct http_client *c, char *buf, size_t cap, int64_t deadline_ms,
                         ck_error_t *err)
{
        if (c->fd < 0)
                return 0;
        if (!c->gzip)
                return read_framed(c, buf, cap, deadline_ms, err);
        for (;;) {
                if (!c->z_live || cap == 0)
                        return 0;
                c->z.next_out = (Bytef *)buf;
                c->z.avail_out = (uInt)(cap > UINT32_MAX ? UINT32_MAX : cap);
                int zr = inflate(&c->z, Z_NO_FLUSH);
                size_t made = (size_t)((char *)c->z.next_out - buf);
                if (zr == Z_STREAM_END) {
                        inflateEnd(&c->z);
                        c->z_live = false;
                        /* the framing's end (a chunked trailer) is read too */
                        char rest[64];
                        ssize_t n;
                        while ((n = read_framed(c, rest, sizeof(rest), deadline_ms, err)) > 0)
                                ;
                        return n < 0 ? -1 : (ssize_t)made;
                }
                if (zr != Z_OK && zr != Z_BUF_ERROR)
                        return fail(err, HTTP_ERR_PROTOCOL, "read body: gzip: %s",
                                    c->z.msg ? c->z.msg : "corrupt data");
                if (made > 0)
                        return (ssize_t)made;
                if (c->z.avail_in > 0)
                        continue; /* a header consumed, no output yet */
                ssize_t n = read_framed(c, c->zin, HTTP_READ_CHUNK, deadline_ms, err);
                if (n < 0)
                        return -1;
                if (n == 0 && c->z.total_in == 0) {
                        /* an empty body: nothing to decode (as Go) */
                        inflateEnd(&c->z);
                        c->z_live = false;
                        return 0;
                }
                if (n == 0)
                        return fail(err, HTTP_ERR_TRANSPORT, "read body: gzip: unexpected EOF");
                c->z.next_in = (Bytef *)c->zin;
                c->z.avail_in = (uInt)n;
        }
}

void http_client_end(struct http_client *c)
{
        if (c->fd < 0)
                return;
        bool done = c->body_done && !c->z_live && c->pos == c->len;
        gz_end(c);
        if (!done || !c->keep)
                conn_close(c);
}

/* ---- answers --------------------------------------------------------- */

char *http_answer_header(const struct http_answer *a, const char *name)
{
        const char *v = NULL;
        size_t n = 0;
        if (a->head == NULL || !http_response_header(a->head, &a->parsed, name, &v, &n))
                return NULL;
        return xstrndup(v, n);
}

void http_answer_clear(struct http_answer *a)
{
        free(a->head);
        memset(a, 0, sizeof(*a));
}

/* ---- TLS contexts ---------------------------------------------------- */

static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
        (void)buf, (void)size, (void)rwflag, (void)u;
        return -1;
}

static int load_ca(SSL_CTX *ctx, const char *pem, size_t len, ck_error_t *err)
{
        BIO *bio = BIO_new_mem_buf(pem, (int)len);
        X509_STORE *store = X509_STORE_new();
        int n = 0, rc = 0;
        X509 *x;
        while (bio && store && (x = PEM_read_bio_X509(bio, NULL, NULL, NULL)) != NULL) {
                if (X509_STORE_add_cert(store, x) != 1)
                        rc = -1;
                X509_free(x);
                n++;
        }
        ERR_clear_error();
        BIO_free(bio);
        if (store == NULL || rc < 0 || n == 0) {
                X509_STORE_free(store);
                return fail(err, 0, "certificate authority: %s",
                            n == 0 ? "no certificate found" : "cannot add a certificate");
        }
        /* any certificate of the bundle is a trust anchor, an intermediate
         * too, as Go's x509 pool */
        X509_STORE_set_flags(store, X509_V_FLAG_PARTIAL_CHAIN);
        SSL_CTX_set_cert_store(ctx, store); /* only this CA, as client-go */
        return 0;
}

static int load_client_cert(SSL_CTX *ctx, const struct http_tls_config *cfg, ck_error_t *err)
{
        BIO *bio = BIO_new_mem_buf(cfg->cert_pem, (int)cfg->cert_len);
        X509 *leaf = bio ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;
        int rc = 0;
        if (leaf == NULL || SSL_CTX_use_certificate(ctx, leaf) != 1) {
                rc = fail(err, 0, "client certificate: %s", ssl_reason());
        } else {
                X509 *x;
                while ((x = PEM_read_bio_X509(bio, NULL, NULL, NULL)) != NULL)
                        if (SSL_CTX_add0_chain_cert(ctx, x) != 1) {
                                X509_free(x);
                                rc = fail(err, 0, "client certificate chain: %s", ssl_reason());
                                break;
                        }
                ERR_clear_error();
        }
        X509_free(leaf);
        BIO_free(bio);
        if (rc < 0)
                return -1;
        if (cfg->key_pem == NULL)
                return fail(err, 0, "client certificate without a key");
        bio = BIO_new_mem_buf(cfg->key_pem, (int)cfg->key_len);
        EVP_PKEY *key = bio ? PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL) : NULL;
        if (key == NULL || SSL_CTX_use_PrivateKey(ctx, key) != 1 ||
            SSL_CTX_check_private_key(ctx) != 1)
                rc = fail(err, 0, "client key: %s", ssl_reason());
        EVP_PKEY_free(key);
        BIO_free(bio);
        return rc;
}

int http_tls_client_ctx(const struct http_tls_config *cfg, SSL_CTX **out, ck_error_t *err)
{
        ERR_clear_error();
        SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
        if (ctx == NULL)
                return fail(err, 0, "TLS context: %s", ssl_reason());
        SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
        /* a connection kept alive between requests (a watch waiting for
         * its next event) holds no 34 kB of record buffers meanwhile */
        SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                                  SSL_MODE_RELEASE_BUFFERS);
        /* an EOF without close_notify ends a read, as Go's crypto/tls */
        SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
        static const unsigned char alpn[] = "\x08http/1.1";
        SSL_CTX_set_alpn_protos(ctx, alpn, sizeof(alpn) - 1);
        int rc = 0;
        if (cfg->insecure) {
                SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
        } else {
                SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
                if (cfg->ca_pem)
                        rc = load_ca(ctx, cfg->ca_pem, cfg->ca_len, err);
                else if (SSL_CTX_set_default_verify_paths(ctx) != 1)
                        rc = fail(err, 0, "system certificate authorities: %s", ssl_reason());
        }
        if (rc == 0 && cfg->cert_pem)
                rc = load_client_cert(ctx, cfg, err);
        if (rc < 0) {
                SSL_CTX_free(ctx);
                return -1;
        }
        *out = ctx;
        return 0;
}
