/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One connection's I/O, over TLS or plain TCP (a non-blocking socket,
 * poll(2) with deadlines, so that a slow or silent client cannot hold a
 * thread forever and httpd_stop() can interrupt anything), the HTTP/1.1
 * responses written on it, the request body read from it, and the raw
 * I/O of a hijacked connection.
 */
#include "server/httpd_internal.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

#include <errno.h>
#include <openssl/err.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#define CHUNK_COALESCE 16384 /* a chunk this small goes out as one TLS record */

enum io_op { IO_HANDSHAKE, IO_READ, IO_WRITE, IO_SHUTDOWN };

static bool stopping(const struct httpd_conn *c)
{
        return atomic_load(&c->server->stopping);
}

bool httpd_stopping(struct httpd_conn *c)
{
        return stopping(c);
}

/* Waits until the socket is ready for events or deadline_ms passes.
 * Returns 0 when ready (errors and hang-ups count: the next call tells),
 * < 0 on the deadline or when the server stops. */
static int wait_ready(struct httpd_conn *c, short events, int64_t deadline_ms)
{
        for (;;) {
                if (stopping(c)) {
                        snprintf(c->io_error, sizeof(c->io_error), "server stopping");
                        return -1;
                }
                int64_t left = deadline_ms - fs_now_mono_ms();
                if (left <= 0) {
                        snprintf(c->io_error, sizeof(c->io_error), "timeout");
                        return -1;
                }
                struct pollfd p = {.fd = c->fd, .events = events};
                int r = poll(&p, 1, left > 1000 ? 1000 : (int)left);
                if (r > 0)
                        return 0;
                if (r < 0 && errno != EINTR) {
                        snprintf(c->io_error, sizeof(c->io_error), "poll: %s", strerror(errno));
                        return -1;
                }
        }
}

static void set_tls_error(struct httpd_conn *c, int ssl_err, int ret)
{
        unsigned long e = ERR_peek_last_error();
        if (ERR_GET_LIB(e) == ERR_LIB_SSL && ERR_GET_REASON(e) == SSL_R_HTTP_REQUEST)
                c->plain_http = true;
        if (e != 0)
                snprintf(c->io_error, sizeof(c->io_error), "%s",
                         ERR_reason_error_string(e) ? ERR_reason_error_string(e) : "TLS error");
        else if (ssl_err == SSL_ERROR_SYSCALL && ret == 0)
                snprintf(c->io_error, sizeof(c->io_error), "EOF");
        else if (ssl_err == SSL_ERROR_SYSCALL)
                snprintf(c->io_error, sizeof(c->io_error), "%s", strerror(errno));
        else
                snprintf(c->io_error, sizeof(c->io_error), "TLS error %d", ssl_err);
        ERR_clear_error();
}

/* One step of I/O without waiting: > 0 bytes (or a finished handshake or
 * shutdown: 1), 0 at the peer's close (FIN or close_notify), -EAGAIN with
 * *want set to the poll events needed, other < 0 an error (c->broken). */
static int io_try(struct httpd_conn *c, enum io_op op, void *buf, size_t len, short *want)
{
        if (c->broken)
                return -EPIPE;
        int n = len > INT32_MAX ? INT32_MAX : (int)len;
        if (c->ssl == NULL) {
                ssize_t r;
                switch (op) {
                case IO_READ:
                        r = recv(c->fd, buf, (size_t)n, 0);
                        break;
                case IO_WRITE:
                        r = send(c->fd, buf, (size_t)n, MSG_NOSIGNAL);
                        break;
                default:
                        return 1;
                }
                if (r >= 0)
                        return (int)r;
                if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) {
                        *want = op == IO_READ ? POLLIN : POLLOUT;
                        return -EAGAIN;
                }
                snprintf(c->io_error, sizeof(c->io_error), "%s", strerror(errno));
                c->broken = true;
                return -EIO;
        }
        ERR_clear_error();
        int r = 0;
        switch (op) {
        case IO_HANDSHAKE:
                r = SSL_accept(c->ssl);
                break;
        case IO_READ:
                r = SSL_read(c->ssl, buf, n);
                break;
        case IO_WRITE:
                r = SSL_write(c->ssl, buf, n);
                break;
        case IO_SHUTDOWN:
                r = SSL_shutdown(c->ssl);
                if (r >= 0)
                        return 1; /* ours is sent; the client's is not awaited */
                break;
        }
        if (r > 0)
                return r;
        int e = SSL_get_error(c->ssl, r);
        if (e == SSL_ERROR_WANT_READ) {
                *want = POLLIN;
                return -EAGAIN;
        }
        if (e == SSL_ERROR_WANT_WRITE) {
                *want = POLLOUT;
                return -EAGAIN;
        }
        if (e == SSL_ERROR_ZERO_RETURN)
                return 0;
        if (e == SSL_ERROR_SYSCALL && r == 0 && op == IO_READ && ERR_peek_last_error() == 0)
                return 0; /* a FIN without close_notify: Go takes it as EOF too */
        set_tls_error(c, e, r);
        c->broken = true;
        return -EIO;
}

/* io_try repeated until it does something or deadline_ms passes. */
static int io_call(struct httpd_conn *c, enum io_op op, void *buf, size_t len, int64_t deadline_ms)
{
        for (;;) {
                short want = 0;
                int r = io_try(c, op, buf, len, &want);
                if (r != -EAGAIN)
                        return r;
                if (wait_ready(c, want, deadline_ms) < 0) {
                        c->broken = true;
                        return -ETIMEDOUT;
                }
        }
}

int httpd_conn_handshake(struct httpd_conn *c, int64_t deadline_ms)
{
        return io_call(c, IO_HANDSHAKE, NULL, 0, deadline_ms) > 0 ? 0 : -1;
}

int httpd_conn_fill(struct httpd_conn *c, int64_t deadline_ms)
{
        if (c->in_off > 0) { /* keep what is unconsumed at the start */
                memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
                c->in_len -= c->in_off;
                c->in_off = 0;
        }
        if (c->in_len == sizeof(c->in))
                return -ENOBUFS;
        return io_call(c, IO_READ, c->in + c->in_len, sizeof(c->in) - c->in_len, deadline_ms);
}

/* Writes all of buf; a write that makes no progress for
 * HTTPD_WRITE_STALL_MS fails. */
static int write_all(struct httpd_conn *c, const char *buf, size_t len)
{
        while (len > 0) {
                size_t n = len > (1u << 30) ? (1u << 30) : len;
                int w =
                    io_call(c, IO_WRITE, (void *)buf, n, fs_now_mono_ms() + HTTPD_WRITE_STALL_MS);
                if (w <= 0) {
                        c->broken = true;
                        return -1;
                }
                buf += w;
                len -= (size_t)w;
        }
        return 0;
}

/* The response head; framing: the Content-Length or Transfer-Encoding line. */
static char *format_head(struct httpd_conn *c, int status, const char *content_type,
                         const char *extra, const char *framing)
{
        char date[64];
        time_t t = time(NULL);
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
        return xasprintf("HTTP/1.1 %03d %s\r\n"
                         "Content-Type: %s\r\n"
                         "%s%s"
                         "Date: %s\r\n"
                         "%s"
                         "\r\n",
                         status, http_status_text(status),
                         content_type ? content_type : "text/plain; charset=utf-8",
                         extra ? extra : "", framing, date,
                         c->close ? "Connection: close\r\n" : "");
}

static bool discard_body(struct httpd_conn *c);

/* Before a response head, as Go's server in WriteHeader: what the handler
 * left of the request body is discarded now (a client that sends all of
 * its request before it reads the answer would block us on a large answer
 * otherwise, golang/go#15527), and when it cannot be (more than
 * HTTPD_DRAIN_BODY, malformed or cut, or a 100-continue never asked for)
 * the connection is to close and the head says so. */
static void settle_body(struct httpd_conn *c)
{
        if (!c->close && !discard_body(c))
                c->close = true;
}

int httpd_respond_with(struct httpd_conn *c, int status, const char *content_type,
                       const char *extra_headers, const char *body, size_t len)
{
        if (c->resp != HTTPD_RESP_NONE || c->broken)
                return -1;
        settle_body(c);
        c->resp = HTTPD_RESP_DONE;
        char framing[48];
        snprintf(framing, sizeof(framing), "Content-Length: %zu\r\n", len);
        char *head = format_head(c, status, content_type, extra_headers, framing);
        size_t head_len = strlen(head);
        if (c->head_only || body == NULL)
                len = 0;
        int rc;
        if (len <= CHUNK_COALESCE) {
                /* one buffer, one TLS record for a small answer */
                char *all = xrealloc(head, head_len + len + 1);
                head = NULL;
                if (len > 0)
                        memcpy(all + head_len, body, len);
                rc = write_all(c, all, head_len + len);
                free(all);
        } else {
                rc = write_all(c, head, head_len);
                if (rc == 0)
                        rc = write_all(c, body, len);
        }
        free(head);
        return rc;
}

int httpd_respond(struct httpd_conn *c, int status, const char *content_type, const char *body,
                  size_t len)
{
        return httpd_respond_with(c, status, content_type, NULL, body, len);
}

int httpd_stream_begin(struct httpd_conn *c, int status, const char *content_type)
{
        if (c->resp != HTTPD_RESP_NONE || c->broken)
                return -1;
        settle_body(c);
        c->resp = HTTPD_RESP_STREAM;
        if (c->http10)
                c->close = true; /* the end of the body is the close */
        bool chunked = !c->http10 && !c->head_only;
        char *head = format_head(c, status, content_type, NULL,
                                 chunked ? "Transfer-Encoding: chunked\r\n" : "");
        int rc = write_all(c, head, strlen(head));
        free(head);
        return rc;
}

int httpd_stream_write(struct httpd_conn *c, const char *buf, size_t len)
{
        if (c->resp != HTTPD_RESP_STREAM || httpd_conn_closed(c))
                return -1;
        if (len == 0 || c->head_only)
                return 0;
        if (c->http10)
                return write_all(c, buf, len);
        char tmp[CHUNK_COALESCE + 32];
        int hl = snprintf(tmp, sizeof(tmp), "%zx\r\n", len);
        if (len <= CHUNK_COALESCE) {
                memcpy(tmp + hl, buf, len);
                memcpy(tmp + hl + len, "\r\n", 2);
                return write_all(c, tmp, (size_t)hl + len + 2);
        }
        if (write_all(c, tmp, (size_t)hl) < 0 || write_all(c, buf, len) < 0)
                return -1;
        return write_all(c, "\r\n", 2);
}

int httpd_stream_end(struct httpd_conn *c)
{
        if (c->resp != HTTPD_RESP_STREAM)
                return -1;
        c->resp = HTTPD_RESP_DONE;
        if (c->http10 || c->head_only)
                return c->broken ? -1 : 0;
        return write_all(c, "0\r\n\r\n", 5);
}

bool httpd_conn_closed(struct httpd_conn *c)
{
        if (c->broken || stopping(c))
                return true;
        struct pollfd p = {.fd = c->fd, .events = POLLRDHUP};
        int r;
        do
                r = poll(&p, 1, 0);
        while (r < 0 && errno == EINTR);
        if (r > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)))
                c->broken = true;
        return c->broken;
}

/* ---- the request body --------------------------------------------------- */

/* Body bytes into buf from what c->in holds: the decoded count, or -1 when
 * the chunked coding is malformed. */
static ssize_t body_from_buffer(struct httpd_conn *c, char *buf, size_t len)
{
        size_t avail = c->in_len - c->in_off;
        if (c->body == HTTPD_BODY_LENGTH) {
                size_t n = avail < len ? avail : len;
                if (n > c->body_left)
                        n = (size_t)c->body_left;
                memcpy(buf, c->in + c->in_off, n);
                c->in_off += n;
                c->body_left -= n;
                if (c->body_left == 0)
                        c->body = HTTPD_BODY_NONE;
                return (ssize_t)n;
        }
        size_t used = 0, made = 0;
        int r = http_chunked_decode(&c->chunked, c->in + c->in_off, avail, buf, len, &used, &made);
        c->in_off += used;
        if (r < 0) {
                c->body = HTTPD_BODY_BROKEN;
                return -1;
        }
        if (r == 1)
                c->body = HTTPD_BODY_NONE;
        return (ssize_t)made;
}

ssize_t httpd_body_read(struct httpd_conn *c, void *buf, size_t len)
{
        if (c->resp != HTTPD_RESP_NONE)
                return -1;
        for (;;) {
                if (c->body == HTTPD_BODY_NONE || len == 0)
                        return 0;
                if (c->body == HTTPD_BODY_BROKEN)
                        return -1;
                ssize_t n = body_from_buffer(c, buf, len);
                if (n != 0)
                        return n;
                if (c->body == HTTPD_BODY_NONE)
                        return 0;
                /* as Go's server: "100 Continue" when the handler first
                 * reads a body the client waits to send (curl does) */
                if (c->expect_continue) {
                        c->expect_continue = false;
                        static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
                        if (write_all(c, cont, sizeof(cont) - 1) < 0)
                                return -1;
                }
                int r = httpd_conn_fill(c, fs_now_mono_ms() + c->server->request_timeout_ms);
                if (r <= 0) {
                        c->body = HTTPD_BODY_BROKEN;
                        c->close = true;
                        return -1;
                }
                c->in_len += (size_t)r;
        }
}

int httpd_body_all(struct httpd_conn *c, size_t max, char **out, size_t *len)
{
        size_t cap = 256, n = 0;
        char *buf = xmalloc(cap + 1);
        for (;;) {
                if (n == cap) {
                        if (cap > max) {
                                free(buf);
                                return -413;
                        }
                        cap *= 2;
                        buf = xrealloc(buf, cap + 1);
                }
                ssize_t r = httpd_body_read(c, buf + n, cap - n);
                if (r < 0) {
                        free(buf);
                        return -1;
                }
                if (r == 0)
                        break;
                n += (size_t)r;
                if (n > max) {
                        free(buf);
                        return -413;
                }
        }
        buf[n] = '\0';
        *out = buf;
        *len = n;
        return 0;
}

/* Discards what is left of the body, up to HTTPD_DRAIN_BODY bytes; false
 * when the connection cannot go on (more than that, or it broke). */
static bool discard_body(struct httpd_conn *c)
{
        if (c->body == HTTPD_BODY_NONE)
                return true;
        if (c->expect_continue) /* never asked for: the client may not send it */
                return false;
        if (c->body == HTTPD_BODY_LENGTH && c->body_left > HTTPD_DRAIN_BODY)
                return false;
        char sink[4096];
        size_t total = 0;
        enum httpd_resp saved = c->resp;
        c->resp = HTTPD_RESP_NONE; /* httpd_body_read reads before a response only */
        ssize_t r;
        while ((r = httpd_body_read(c, sink, sizeof(sink))) > 0 && total <= HTTPD_DRAIN_BODY)
                total += (size_t)r;
        c->resp = saved;
        return r == 0 && c->body == HTTPD_BODY_NONE;
}

bool httpd_conn_end_request(struct httpd_conn *c)
{
        if (c->resp == HTTPD_RESP_HIJACKED)
                return false;
        if (c->resp == HTTPD_RESP_NONE) {
                static const char msg[] = "500 Internal Server Error";
                httpd_respond(c, 500, NULL, msg, sizeof(msg) - 1);
        } else if (c->resp == HTTPD_RESP_STREAM) {
                httpd_stream_end(c);
        }
        if (c->broken || c->close || stopping(c))
                return false;
        return discard_body(c);
}

/* Discards what the client still sends until it closes (or the drain
 * time is up), so that closing does not reset the connection under a
 * response the client has not read yet. */
static void drain(struct httpd_conn *c)
{
        int64_t deadline = fs_now_mono_ms() + HTTPD_DRAIN_MS;
        char buf[4096];
        for (;;) {
                ssize_t r = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
                if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN))
                        return;
                if (fs_now_mono_ms() >= deadline) /* a client that keeps sending */
                        return;
                if (r < 0 && errno == EAGAIN && wait_ready(c, POLLIN, deadline) < 0)
                        return;
        }
}

void httpd_conn_finish(struct httpd_conn *c)
{
        if (c->broken)
                return;
        if (c->ssl) {
                io_call(c, IO_SHUTDOWN, NULL, 0, fs_now_mono_ms() + HTTPD_DRAIN_MS);
                if (c->broken)
                        return;
        }
        shutdown(c->fd, SHUT_WR);
        drain(c);
}

/* ---- a hijacked connection ---------------------------------------------- */

int httpd_hijack(struct httpd_conn *c, const char **pending, size_t *pending_len)
{
        if (c->resp != HTTPD_RESP_NONE)
                return -1;
        c->resp = HTTPD_RESP_HIJACKED;
        c->close = true;
        *pending = c->in + c->in_off;
        *pending_len = c->in_len - c->in_off;
        c->in_off = c->in_len;
        return 0;
}

int httpd_raw_fd(struct httpd_conn *c)
{
        return c->fd;
}

size_t httpd_raw_pending(struct httpd_conn *c)
{
        return c->ssl && !c->broken ? (size_t)SSL_pending(c->ssl) : 0;
}

ssize_t httpd_raw_read(struct httpd_conn *c, void *buf, size_t len)
{
        short want = 0;
        int r = io_try(c, IO_READ, buf, len, &want);
        return r;
}

int httpd_raw_write(struct httpd_conn *c, const void *buf, size_t len)
{
        return write_all(c, buf, len);
}

void httpd_raw_shutdown_write(struct httpd_conn *c)
{
        if (c->broken)
                return;
        if (c->ssl)
                io_call(c, IO_SHUTDOWN, NULL, 0, fs_now_mono_ms() + HTTPD_DRAIN_MS);
        shutdown(c->fd, SHUT_WR);
}
