/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One connection's TLS I/O (a non-blocking socket, poll(2) with deadlines,
 * so that a slow or silent client cannot hold a thread forever and
 * secure_server_stop() can interrupt anything) and the HTTP/1.1 responses
 * written on it.
 */
#include "server/secure_internal.h"
#include "server/http_request.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

#include <openssl/err.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#define CHUNK_COALESCE 16384 /* a chunk this small goes out as one TLS record */

enum tls_op { TLS_HANDSHAKE, TLS_READ, TLS_WRITE, TLS_SHUTDOWN };

static bool stopping(const struct secure_conn *c)
{
        return atomic_load(&c->server->stopping);
}

/* Waits until the socket is ready for events or deadline_ms passes.
 * Returns 0 when ready (errors and hang-ups count: the next call tells),
 * < 0 on the deadline or when the server stops. */
static int wait_ready(struct secure_conn *c, short events, int64_t deadline_ms)
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

static void set_tls_error(struct secure_conn *c, int ssl_err, int ret)
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

/* One OpenSSL call, repeated while it wants to read or write, until
 * deadline_ms.  Returns its positive result; 0 for a read at the client's
 * close_notify (and a finished shutdown); < 0 on errors (c->broken). */
static int tls_call(struct secure_conn *c, enum tls_op op, void *buf, size_t len,
                    int64_t deadline_ms)
{
        if (c->broken)
                return -1;
        int n = len > INT32_MAX ? INT32_MAX : (int)len;
        for (;;) {
                ERR_clear_error();
                int r = 0;
                switch (op) {
                case TLS_HANDSHAKE:
                        r = SSL_accept(c->ssl);
                        break;
                case TLS_READ:
                        r = SSL_read(c->ssl, buf, n);
                        break;
                case TLS_WRITE:
                        r = SSL_write(c->ssl, buf, n);
                        break;
                case TLS_SHUTDOWN:
                        r = SSL_shutdown(c->ssl);
                        if (r >= 0)
                                return 0; /* ours is sent; the client's is not awaited */
                        break;
                }
                if (r > 0)
                        return r;
                int e = SSL_get_error(c->ssl, r);
                short events;
                if (e == SSL_ERROR_WANT_READ) {
                        events = POLLIN;
                } else if (e == SSL_ERROR_WANT_WRITE) {
                        events = POLLOUT;
                } else if (e == SSL_ERROR_ZERO_RETURN) {
                        return 0;
                } else {
                        set_tls_error(c, e, r);
                        c->broken = true;
                        return -1;
                }
                if (wait_ready(c, events, deadline_ms) < 0) {
                        c->broken = true;
                        return -1;
                }
        }
}

int secure_conn_handshake(struct secure_conn *c, int64_t deadline_ms)
{
        return tls_call(c, TLS_HANDSHAKE, NULL, 0, deadline_ms) > 0 ? 0 : -1;
}

int secure_conn_read(struct secure_conn *c, void *buf, size_t len, int64_t deadline_ms)
{
        return tls_call(c, TLS_READ, buf, len, deadline_ms);
}

/* Writes all of buf; a write that makes no progress for
 * SECURE_WRITE_STALL_MS fails. */
static int write_all(struct secure_conn *c, const char *buf, size_t len)
{
        while (len > 0) {
                size_t n = len > (1u << 30) ? (1u << 30) : len;
                int w = tls_call(c, TLS_WRITE, (void *)buf, n,
                                 fs_now_mono_ms() + SECURE_WRITE_STALL_MS);
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
static char *format_head(int status, const char *content_type, const char *framing)
{
        char date[64];
        time_t t = time(NULL);
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
        return xasprintf("HTTP/1.1 %03d %s\r\n"
                         "Content-Type: %s\r\n"
                         "%s"
                         "Date: %s\r\n"
                         "Connection: close\r\n"
                         "\r\n",
                         status, http_status_text(status),
                         content_type ? content_type : "text/plain; charset=utf-8", framing, date);
}

int secure_respond(struct secure_conn *c, int status, const char *content_type, const char *body,
                   size_t len)
{
        if (c->resp != SECURE_RESP_NONE || c->broken)
                return -1;
        c->resp = SECURE_RESP_DONE;
        char framing[48];
        snprintf(framing, sizeof(framing), "Content-Length: %zu\r\n", len);
        char *head = format_head(status, content_type, framing);
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

int secure_stream_begin(struct secure_conn *c, int status, const char *content_type)
{
        if (c->resp != SECURE_RESP_NONE || c->broken)
                return -1;
        c->resp = SECURE_RESP_STREAM;
        bool chunked = !c->http10 && !c->head_only;
        char *head =
            format_head(status, content_type, chunked ? "Transfer-Encoding: chunked\r\n" : "");
        int rc = write_all(c, head, strlen(head));
        free(head);
        return rc;
}

int secure_stream_write(struct secure_conn *c, const char *buf, size_t len)
{
        if (c->resp != SECURE_RESP_STREAM || secure_conn_closed(c))
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

int secure_stream_end(struct secure_conn *c)
{
        if (c->resp != SECURE_RESP_STREAM)
                return -1;
        c->resp = SECURE_RESP_DONE;
        if (c->http10 || c->head_only)
                return c->broken ? -1 : 0;
        return write_all(c, "0\r\n\r\n", 5);
}

bool secure_conn_closed(struct secure_conn *c)
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

/* Discards what the client still sends until it closes (or the drain
 * time is up), so that closing does not reset the connection under a
 * response the client has not read yet. */
static void drain(struct secure_conn *c)
{
        int64_t deadline = fs_now_mono_ms() + SECURE_DRAIN_MS;
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

void secure_conn_finish(struct secure_conn *c)
{
        if (c->resp == SECURE_RESP_NONE) {
                static const char msg[] = "500 Internal Server Error";
                secure_respond(c, 500, NULL, msg, sizeof(msg) - 1);
        } else if (c->resp == SECURE_RESP_STREAM) {
                secure_stream_end(c);
        }
        if (c->broken)
                return;
        tls_call(c, TLS_SHUTDOWN, NULL, 0, fs_now_mono_ms() + SECURE_DRAIN_MS);
        if (c->broken)
                return;
        shutdown(c->fd, SHUT_WR);
        drain(c);
}
