/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gRPC over HTTP/2, the connection half: a unix socket (or a TCP
 * connection, for gRPC health probes), an nghttp2 client session (h2c with
 * prior knowledge, as gRPC does on unix sockets) and one unary call at a time.
 *
 * I/O is non-blocking with poll() against a CLOCK_MONOTONIC deadline.  The
 * bytes nghttp2 serializes are kept in our own buffer until the socket took
 * them, so frames are never cut even when a call gives up mid-write.
 *
 * Reconnects: a connection that saw GOAWAY, EOF or an I/O error is dropped
 * and the next call opens a new one.  A call is retried once on a fresh
 * connection when the server cannot have seen it: the connect failed, the old
 * connection broke before any byte of this call was written, or the server
 * refused the stream (REFUSED_STREAM, or GOAWAY below our stream id).
 */
#include "grpc/grpc.h"
#include "util/fsutil.h"
#include "util/netutil.h"
#include "util/cleanup.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <nghttp2/nghttp2.h>

#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>

#ifndef CK_VERSION
#define CK_VERSION "dev"
#endif

/* Large windows so that a big ListContainers response never waits for a
 * WINDOW_UPDATE round trip. */
#define GRPC_WINDOW_SIZE (16 * 1024 * 1024)
#define GRPC_DEFAULT_MAX_STREAM_ID (INT32_MAX - 2)

struct grpc_conn {
        char *path;       /* the unix socket, or "host:port" for TCP (in messages) */
        char *tcp_host;   /* NULL: a unix socket */
        char *tcp_port;   /* decimal */
        char *authority;  /* :authority */
        char *user_agent; /* user-agent */
        int fd;
        nghttp2_session *session;
        bool dead; /* GOAWAY, EOF or an I/O error: reconnect before the next call */
        int32_t max_stream_id;

        /* Serialized frames not yet taken by the socket. */
        uint8_t *out;
        size_t out_len, out_off, out_cap;
        size_t call_bytes_written; /* bytes written to the socket by the current call */
        uint8_t *stream_body;      /* a streaming call's request (prefix + message) */

        /* The call in flight. */
        int32_t stream_id;
        bool streaming; /* a server-streaming call: messages queue in resp */
        bool stream_closed;
        uint32_t close_error; /* HTTP/2 error code the stream closed with */
        struct grpc_response resp;
        ck_error_t call_err; /* a protocol violation found in a callback */
        const uint8_t *body; /* the request: prefix + message */
        size_t body_len, body_off;

        /* a frame's payload at HTTP/2's default SETTINGS_MAX_FRAME_SIZE;
         * more takes more reads.  Every connection (one per pod worker)
         * keeps it: at 64 kB, zeroed, the CRI connections held 1.5 MB of
         * heap at 110 pods, 0.64 MB at 16 kB (heaptrack, bench/README.md). */
        uint8_t rbuf[16 * 1024];
};

/* A transport failure: errno text appended, code UNAVAILABLE. */
static int __attribute__((format(printf, 3, 4)))
transport_error(ck_error_t *err, int errnum, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        cleanup_free char *msg = xvasprintf(fmt, ap);
        va_end(ap);
        ck_error_make(err, errnum, "%s", msg);
        if (err && *err)
                (*err)->code = GRPC_UNAVAILABLE;
        return -1;
}

/* ---- nghttp2 callbacks: only for the stream of the current call ---- */

static int on_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name,
                     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                     void *user_data)
{
        (void)session;
        (void)flags;
        struct grpc_conn *c = user_data;
        if (frame->hd.type == NGHTTP2_HEADERS && frame->hd.stream_id == c->stream_id)
                grpc_response_on_header(&c->resp, (const char *)name, namelen, (const char *)value,
                                        valuelen);
        return 0;
}

static int on_data_chunk(nghttp2_session *session, uint8_t flags, int32_t stream_id,
                         const uint8_t *data, size_t len, void *user_data)
{
        (void)flags;
        struct grpc_conn *c = user_data;
        if (stream_id != c->stream_id || c->call_err != NULL)
                return 0;
        if (grpc_response_on_data(&c->resp, data, len, &c->call_err) < 0)
                nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, stream_id, NGHTTP2_CANCEL);
        return 0;
}

static int on_stream_close(nghttp2_session *session, int32_t stream_id, uint32_t error_code,
                           void *user_data)
{
        (void)session;
        struct grpc_conn *c = user_data;
        if (stream_id == c->stream_id) {
                c->stream_closed = true;
                c->close_error = error_code;
        }
        return 0;
}

static int on_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *user_data)
{
        (void)session;
        struct grpc_conn *c = user_data;
        if (frame->hd.type == NGHTTP2_GOAWAY) {
                LOG_INFO(4, "gRPC server sent GOAWAY", "path=\"%s\" lastStreamID=%d errorCode=%u",
                         c->path, frame->goaway.last_stream_id, frame->goaway.error_code);
                c->dead = true;
        }
        return 0;
}

static ssize_t read_body(nghttp2_session *session, int32_t stream_id, uint8_t *buf, size_t length,
                         uint32_t *data_flags, nghttp2_data_source *source, void *user_data)
{
        (void)session;
        (void)source;
        struct grpc_conn *c = user_data;
        if (stream_id != c->stream_id || c->body == NULL)
                return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* a stale stream: reset it */
        size_t n = c->body_len - c->body_off;
        if (n > length)
                n = length;
        memcpy(buf, c->body + c->body_off, n);
        c->body_off += n;
        if (c->body_off == c->body_len)
                *data_flags |= NGHTTP2_DATA_FLAG_EOF;
        return (ssize_t)n;
}

/* ---- the connection ---- */

struct grpc_conn *grpc_conn_new(const char *unix_path)
{
        struct grpc_conn *c = xcalloc(1, sizeof(*c));
        c->path = xstrdup(unix_path);
        c->authority = xstrdup("localhost");
        c->user_agent = xstrdup("grpc-c-ckubelet/" CK_VERSION);
        c->fd = -1;
        c->stream_id = -1;
        c->max_stream_id = GRPC_DEFAULT_MAX_STREAM_ID;
        return c;
}

struct grpc_conn *grpc_conn_new_tcp(const char *host, int port)
{
        bool v6 = strchr(host, ':') != NULL;
        cleanup_free char *hostport = xasprintf(v6 ? "[%s]:%d" : "%s:%d", host, port);
        struct grpc_conn *c = grpc_conn_new(hostport);
        c->tcp_host = xstrdup(host);
        c->tcp_port = xasprintf("%d", port);
        free(c->authority);
        c->authority = xstrdup(hostport);
        return c;
}

void grpc_conn_set_user_agent(struct grpc_conn *c, const char *user_agent)
{
        free(c->user_agent);
        c->user_agent = xstrdup(user_agent);
}

static void conn_close(struct grpc_conn *c)
{
        if (c->session) {
                nghttp2_session_del(c->session);
                c->session = NULL;
        }
        if (c->fd >= 0) {
                close(c->fd);
                c->fd = -1;
        }
        c->out_len = c->out_off = 0;
        c->dead = false;
}

void grpc_conn_free(struct grpc_conn *c)
{
        if (c == NULL)
                return;
        conn_close(c);
        grpc_response_free(&c->resp);
        ck_error_release(&c->call_err);
        free(c->stream_body);
        free(c->out);
        free(c->path);
        free(c->tcp_host);
        free(c->tcp_port);
        free(c->authority);
        free(c->user_agent);
        free(c);
}

bool grpc_conn_is_connected(const struct grpc_conn *c)
{
        return c->session != NULL && !c->dead;
}

void grpc_conn_set_max_stream_id(struct grpc_conn *c, int32_t max)
{
        c->max_stream_id = max;
}

static int socket_connect(const char *path, int64_t deadline, ck_error_t *err)
{
        int fd = net_unix_dial(path, deadline, err);
        if (fd < 0 && err && *err)
                (*err)->code = GRPC_UNAVAILABLE;
        return fd;
}

/* A TCP connection to c->tcp_host:c->tcp_port, trying each address in turn. */
static int tcp_connect(const struct grpc_conn *c, int64_t deadline, ck_error_t *err)
{
        int fd = net_tcp_dial(c->tcp_host, c->tcp_port, deadline, true, err);
        if (fd < 0 && err && *err)
                (*err)->code = GRPC_UNAVAILABLE;
        return fd;
}

static int conn_open(struct grpc_conn *c, int64_t deadline, ck_error_t *err)
{
        int fd = c->tcp_host != NULL ? tcp_connect(c, deadline, err)
                                     : socket_connect(c->path, deadline, err);
        if (fd < 0)
                return -1;

        nghttp2_session_callbacks *cbs;
        if (nghttp2_session_callbacks_new(&cbs) != 0)
                abort();
        nghttp2_session_callbacks_set_on_header_callback(cbs, on_header);
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, on_data_chunk);
        nghttp2_session_callbacks_set_on_stream_close_callback(cbs, on_stream_close);
        nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, on_frame_recv);
        int rv = nghttp2_session_client_new(&c->session, cbs, c);
        nghttp2_session_callbacks_del(cbs);
        if (rv != 0)
                abort(); /* only NGHTTP2_ERR_NOMEM */
        c->fd = fd;
        c->dead = false;

        const nghttp2_settings_entry settings[] = {
            {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
            {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, GRPC_WINDOW_SIZE},
        };
        rv = nghttp2_submit_settings(c->session, NGHTTP2_FLAG_NONE, settings, ARRAY_SIZE(settings));
        if (rv == 0)
                rv = nghttp2_session_set_local_window_size(c->session, NGHTTP2_FLAG_NONE, 0,
                                                           GRPC_WINDOW_SIZE);
        if (rv != 0) {
                conn_close(c);
                return transport_error(err, 0, "start HTTP/2 session: %s", nghttp2_strerror(rv));
        }
        LOG_INFO(4, "Connected to gRPC server", "path=\"%s\"", c->path);
        return 0;
}

/* Serializes pending frames and writes what the socket takes without
 * blocking (the rest stays in c->out).  < 0 when the connection broke. */
static int conn_flush(struct grpc_conn *c, ck_error_t *err)
{
        for (;;) {
                if (c->out_off == c->out_len) {
                        c->out_off = c->out_len = 0;
                        const uint8_t *data;
                        ssize_t n = nghttp2_session_mem_send(c->session, &data);
                        if (n < 0) {
                                c->dead = true;
                                return transport_error(err, 0, "HTTP/2 send: %s",
                                                       nghttp2_strerror((int)n));
                        }
                        if (n == 0)
                                return 0;
                        if ((size_t)n > c->out_cap) {
                                c->out_cap = (size_t)n;
                                c->out = xrealloc(c->out, c->out_cap);
                        }
                        memcpy(c->out, data, (size_t)n);
                        c->out_len = (size_t)n;
                }
                ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                        return 0;
                if (w < 0) {
                        c->dead = true;
                        return transport_error(err, errno, "write to `%s`", c->path);
                }
                c->out_off += (size_t)w;
                c->call_bytes_written += (size_t)w;
        }
}

/* Reads everything available (up to EAGAIN: an EOF that came with the last
 * bytes is seen now, not at the next call's write) and feeds it to the
 * session.  < 0 on EOF or error. */
static int conn_read(struct grpc_conn *c, ck_error_t *err)
{
        for (;;) {
                ssize_t n = recv(c->fd, c->rbuf, sizeof(c->rbuf), 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                        return 0;
                if (n <= 0) {
                        c->dead = true;
                        if (n == 0)
                                return transport_error(err, 0, "connection to `%s` closed",
                                                       c->path);
                        return transport_error(err, errno, "read from `%s`", c->path);
                }
                ssize_t rv = nghttp2_session_mem_recv(c->session, c->rbuf, (size_t)n);
                if (rv < 0) {
                        c->dead = true;
                        return transport_error(err, 0, "HTTP/2 protocol error from `%s`: %s",
                                               c->path, nghttp2_strerror((int)rv));
                }
        }
}

enum { PUMP_DONE = 0, PUMP_TIMEOUT = 1 };

/* Hands *from over to *to (which may be NULL: then it is dropped). */
static int move_error(ck_error_t *to, ck_error_t *from)
{
        if (to) {
                ck_error_release(to);
                *to = *from;
                *from = NULL;
        }
        ck_error_release(from);
        return -1;
}

/* Whether the call in flight needs the pump no longer: its stream closed,
 * or (streaming) a message is there to take. */
static bool call_ready(const struct grpc_conn *c)
{
        return c->stream_closed || (c->streaming && c->resp.q_head < c->resp.q_len);
}

/* Drives the connection until the current stream is closed, or a streamed
 * message arrived (PUMP_DONE), the deadline passed (PUMP_TIMEOUT) or the
 * connection broke (< 0).  The stream may close while we write (our
 * RST_STREAM) or just before the server closes the connection: the call's
 * outcome is then known, and an I/O error after it does not matter. */
static int conn_pump(struct grpc_conn *c, int64_t deadline, ck_error_t *err)
{
        for (;;) {
                cleanup_error ck_error_t io_err = NULL;
                int r = conn_flush(c, &io_err);
                if (call_ready(c))
                        return PUMP_DONE;
                if (r < 0)
                        return move_error(err, &io_err);
                if (!nghttp2_session_want_read(c->session) && c->out_off == c->out_len) {
                        c->dead = true;
                        return transport_error(err, 0, "HTTP/2 session to `%s` ended", c->path);
                }
                int timeout = -1;
                if (deadline > 0) {
                        int64_t left = deadline - fs_now_mono_ms();
                        if (left <= 0)
                                return PUMP_TIMEOUT;
                        timeout = left > INT32_MAX ? INT32_MAX : (int)left;
                }
                struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
                if (c->out_off < c->out_len)
                        pfd.events |= POLLOUT;
                int n = poll(&pfd, 1, timeout);
                if (n < 0 && errno != EINTR)
                        return transport_error(err, errno, "poll");
                if (n > 0 && (pfd.revents & (POLLIN | POLLHUP | POLLERR)) &&
                    conn_read(c, &io_err) < 0 && !call_ready(c))
                        return move_error(err, &io_err);
        }
}

/* Drops a connection that is known to be unusable: dead, out of stream ids,
 * or closed by the server while idle (found by a zero-timeout read). */
static void conn_check_idle(struct grpc_conn *c)
{
        if (c->session == NULL)
                return;
        if (!c->dead && (int64_t)nghttp2_session_get_next_stream_id(c->session) > c->max_stream_id)
                c->dead = true;
        struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
        if (!c->dead && poll(&pfd, 1, 0) > 0) {
                cleanup_error ck_error_t ignored = NULL;
                conn_read(c, &ignored); /* sets dead on EOF; processes a GOAWAY */
        }
        if (c->dead)
                conn_close(c);
}

#define NV(n, v)                                                                                   \
        {                                                                                          \
                (uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v), NGHTTP2_NV_FLAG_NONE     \
        }

#define REQUEST_HEADERS_MAX 8

/* A call's request headers into hdrs (REQUEST_HEADERS_MAX of them), grpc-timeout
 * only when timeout is not empty; returns their number.  The values are
 * borrowed: path, timeout and c must outlive the submit. */
static size_t request_headers(const struct grpc_conn *c, const char *path, const char *timeout,
                              nghttp2_nv *hdrs)
{
        const nghttp2_nv all[REQUEST_HEADERS_MAX] = {
            NV(":method", "POST"),
            NV(":scheme", "http"),
            NV(":path", path),
            NV(":authority", c->authority),
            NV("content-type", "application/grpc"),
            NV("te", "trailers"),
            NV("user-agent", c->user_agent),
            NV("grpc-timeout", timeout),
        };
        memcpy(hdrs, all, sizeof(all));
        return REQUEST_HEADERS_MAX - (timeout[0] != '\0' ? 0 : 1);
}

/* One attempt of a call.  *retryable: the server cannot have seen it. */
static int call_once(struct grpc_conn *c, const char *path, int64_t timeout_ms, int64_t deadline,
                     uint8_t **resp, size_t *resp_len, bool *retryable, ck_error_t *err)
{
        *retryable = false;
        conn_check_idle(c);
        if (c->session == NULL && conn_open(c, deadline, err) < 0) {
                *retryable = true;
                return -1;
        }

        char timeout[16] = "";
        if (deadline > 0)
                grpc_format_timeout(deadline - fs_now_mono_ms(), timeout, sizeof(timeout));
        nghttp2_nv hdrs[REQUEST_HEADERS_MAX];
        size_t nhdrs = request_headers(c, path, timeout, hdrs);
        nghttp2_data_provider prd = {.read_callback = read_body};

        grpc_response_init(&c->resp, GRPC_MAX_MESSAGE_SIZE);
        c->stream_closed = false;
        c->close_error = 0;
        c->body_off = 0;
        c->call_bytes_written = 0;
        int32_t id = nghttp2_submit_request(c->session, NULL, hdrs, nhdrs, &prd, NULL);
        if (id < 0) {
                conn_close(c);
                *retryable = true;
                return transport_error(err, 0, "submit request: %s", nghttp2_strerror(id));
        }
        c->stream_id = id;

        int ret = conn_pump(c, deadline, err);
        if (ret == PUMP_TIMEOUT) {
                nghttp2_submit_rst_stream(c->session, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
                cleanup_error ck_error_t ignored = NULL;
                conn_flush(c, &ignored);
                ret = ck_error_make_code(err, GRPC_DEADLINE_EXCEEDED,
                                         "rpc error %d: context deadline exceeded (timeout %" PRId64
                                         "ms)",
                                         GRPC_DEADLINE_EXCEEDED, timeout_ms);
        } else if (ret < 0) {
                *retryable = c->call_bytes_written == 0;
        } else if (c->call_err != NULL) {
                ck_error_release(err);
                if (err)
                        *err = c->call_err;
                else
                        ck_error_release(&c->call_err);
                c->call_err = NULL;
                ret = -1;
        } else if (c->close_error != NGHTTP2_NO_ERROR && !c->resp.have_status) {
                int code = grpc_code_from_h2_error(c->close_error);
                *retryable = c->close_error == NGHTTP2_REFUSED_STREAM;
                ret = ck_error_make_code(err, code,
                                         "rpc error %d: stream reset by the server (HTTP/2 error "
                                         "code 0x%x)",
                                         code, c->close_error);
        } else {
                ret = grpc_response_finish(&c->resp, resp, resp_len, err);
        }
        c->stream_id = -1;
        grpc_response_free(&c->resp);
        if (c->dead)
                conn_close(c);
        return ret;
}

int grpc_unary(struct grpc_conn *c, const char *path, const uint8_t *req, size_t req_len,
               int64_t timeout_ms, uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        if (req_len > UINT32_MAX - GRPC_PREFIX_SIZE)
                return ck_error_make_code(err, GRPC_RESOURCE_EXHAUSTED,
                                          "rpc error %d: request of %zu bytes too large",
                                          GRPC_RESOURCE_EXHAUSTED, req_len);
        int64_t deadline = timeout_ms > 0 ? fs_now_mono_ms() + timeout_ms : 0;
        cleanup_free uint8_t *body = xmalloc(GRPC_PREFIX_SIZE + req_len);
        grpc_write_message_prefix(body, (uint32_t)req_len);
        if (req_len > 0)
                memcpy(body + GRPC_PREFIX_SIZE, req, req_len);
        c->body = body;
        c->body_len = GRPC_PREFIX_SIZE + req_len;

        int ret;
        for (int attempt = 0;; attempt++) {
                bool retryable;
                ret = call_once(c, path, timeout_ms, deadline, resp, resp_len, &retryable, err);
                if (ret == 0 || !retryable || attempt > 0 ||
                    (deadline > 0 && fs_now_mono_ms() >= deadline))
                        break;
                LOG_INFO(4, "Retrying gRPC call on a new connection", "path=\"%s\" err=\"%s\"",
                         path, err ? ck_error_msg(*err) : "");
                ck_error_release(err);
        }
        c->body = NULL;
        return ret < 0 ? -1 : 0;
}

/* ---- dialing and server-streaming calls ---- */

int grpc_conn_dial(struct grpc_conn *c, int64_t timeout_ms, ck_error_t *err)
{
        conn_check_idle(c);
        if (c->session != NULL)
                return 0;
        int64_t deadline = fs_now_mono_ms() + (timeout_ms > 0 ? timeout_ms : 0);
        for (;;) {
                cleanup_error ck_error_t e = NULL;
                if (conn_open(c, deadline, &e) == 0)
                        return 0;
                /* a server not listening yet: as grpc-go's blocking dial,
                 * try again until the deadline */
                int st = e ? e->status : 0;
                bool again = st == ENOENT || st == ECONNREFUSED || st == EAGAIN;
                if (!again)
                        return ck_error_make_code(err, GRPC_UNAVAILABLE, "failed to dial: %s",
                                                  ck_error_msg(e));
                if (fs_now_mono_ms() + 100 >= deadline)
                        return ck_error_make_code(err, GRPC_DEADLINE_EXCEEDED,
                                                  "failed to dial: context deadline exceeded "
                                                  "(last: %s)",
                                                  ck_error_msg(e));
                poll(NULL, 0, 100);
        }
}

int grpc_stream_start(struct grpc_conn *c, const char *path, const uint8_t *req, size_t req_len,
                      ck_error_t *err)
{
        if (req_len > GRPC_MAX_MESSAGE_SIZE)
                return ck_error_make_code(err, GRPC_RESOURCE_EXHAUSTED,
                                          "rpc error %d: request of %zu bytes too large",
                                          GRPC_RESOURCE_EXHAUSTED, req_len);
        conn_check_idle(c);
        if (c->session == NULL && conn_open(c, 0, err) < 0)
                return -1;
        free(c->stream_body);
        c->stream_body = xmalloc(GRPC_PREFIX_SIZE + req_len);
        grpc_write_message_prefix(c->stream_body, (uint32_t)req_len);
        if (req_len > 0)
                memcpy(c->stream_body + GRPC_PREFIX_SIZE, req, req_len);
        c->body = c->stream_body;
        c->body_len = GRPC_PREFIX_SIZE + req_len;
        c->body_off = 0;

        nghttp2_nv hdrs[REQUEST_HEADERS_MAX];
        size_t nhdrs = request_headers(c, path, "", hdrs);
        nghttp2_data_provider prd = {.read_callback = read_body};
        grpc_response_free(&c->resp);
        grpc_response_init_stream(&c->resp, GRPC_MAX_MESSAGE_SIZE);
        c->stream_closed = false;
        c->close_error = 0;
        c->call_bytes_written = 0;
        c->streaming = true;
        int32_t id = nghttp2_submit_request(c->session, NULL, hdrs, nhdrs, &prd, NULL);
        if (id < 0) {
                c->streaming = false;
                conn_close(c);
                return transport_error(err, 0, "submit request: %s", nghttp2_strerror(id));
        }
        c->stream_id = id;
        cleanup_error ck_error_t io_err = NULL;
        if (conn_flush(c, &io_err) < 0) {
                grpc_stream_cancel(c);
                return move_error(err, &io_err);
        }
        return 0;
}

int grpc_stream_recv(struct grpc_conn *c, int64_t timeout_ms, uint8_t **msg, size_t *msg_len,
                     ck_error_t *err)
{
        if (!c->streaming)
                return ck_error_make_code(err, GRPC_INTERNAL, "rpc error %d: no stream",
                                          GRPC_INTERNAL);
        if (grpc_response_take(&c->resp, msg, msg_len))
                return 1;
        if (!c->stream_closed && c->session != NULL) {
                int64_t deadline = timeout_ms >= 0 ? fs_now_mono_ms() + timeout_ms : 0;
                if (timeout_ms == 0)
                        deadline = fs_now_mono_ms(); /* poll once */
                cleanup_error ck_error_t io_err = NULL;
                int r = conn_pump(c, deadline, &io_err);
                if (grpc_response_take(&c->resp, msg, msg_len))
                        return 1;
                if (r == PUMP_TIMEOUT)
                        return 0;
                if (r < 0) { /* the connection broke under the stream */
                        c->streaming = false;
                        c->stream_id = -1;
                        conn_close(c);
                        return move_error(err, &io_err);
                }
        }
        /* closed: by the server's trailers, or reset */
        if (c->close_error != NGHTTP2_NO_ERROR && !c->resp.have_status) {
                int code = grpc_code_from_h2_error(c->close_error);
                ck_error_make_code(err, code,
                                   "rpc error %d: stream reset by the server (HTTP/2 error code "
                                   "0x%x)",
                                   code, c->close_error);
        } else if (grpc_response_stream_end(&c->resp, err) == 0) {
                ck_error_make_code(err, GRPC_OK, "stream ended by the server");
        }
        c->streaming = false;
        c->stream_id = -1;
        if (c->dead)
                conn_close(c);
        return -1;
}

void grpc_stream_cancel(struct grpc_conn *c)
{
        if (c->session != NULL && c->stream_id > 0 && !c->stream_closed) {
                nghttp2_submit_rst_stream(c->session, NGHTTP2_FLAG_NONE, c->stream_id,
                                          NGHTTP2_CANCEL);
                cleanup_error ck_error_t ignored = NULL;
                conn_flush(c, &ignored);
        }
        c->streaming = false;
        c->stream_id = -1;
        c->body = NULL;
        conn_close(c);
}
