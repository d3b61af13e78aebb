/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The gRPC server (grpc_server.h): a unix socket, an accept thread, one
 * thread and one nghttp2 server session per connection.  A request is
 * dispatched once its stream is half-closed by the client (END_STREAM):
 * its headers gave the method, its DATA the one message.  The answer is
 * HEADERS (:status 200, content-type), DATA (prefix + message), then
 * trailers (grpc-status 0); an error is a Trailers-Only response.
 *
 * A unary method runs on a thread of its own (a call): it sees only a copy
 * of its request, and hands its answer back through the connection's
 * finished list and eventfd; only the connection's thread touches the session
 * and the streams.  A connection ends once no call of it runs.
 */
#include "grpc/grpc_server.h"
#include "grpc/grpc.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <nghttp2/nghttp2.h>

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* Connections at once, each a thread: as many as the kubelet's HTTP servers
 * take.  Go's gRPC server (containerd's, cri-dockerd's) sets no limit, and
 * clients do not always close theirs: critest opens two per spec and keeps
 * them to its end (some 280). */
#define SERVER_MAX_CONNECTIONS 1024
#define SERVER_MAX_STREAMS 100
#define SERVER_WINDOW_SIZE (4 * 1024 * 1024)
/* A call's thread: handlers of the shim and the device plugin registration
 * need little (no recursion, buffers on the heap). */
#define SERVER_CALL_STACK (256 * 1024)

struct srv_stream {
        int32_t id;
        char path[256];
        int64_t timeout_ms;
        bool bad_path;            /* longer than path[] */
        struct grpc_response req; /* the request message, parsed as a response is */
        ck_error_t req_err;       /* an oversized or malformed request */
        bool ready;               /* END_STREAM seen: dispatch */
        struct srv_stream *next_ready;
        /* the answer */
        uint8_t *out;
        size_t out_len, out_off;
        /* a server-streaming method: its messages come while it runs */
        struct srv_conn *conn;
        bool streaming, ended, deferred;
        bool in_handler; /* its method runs: the stream is freed after it */
        bool closed;     /* closed meanwhile (reset by the client) */
        int status;      /* the trailers' grpc-status, once ended */
        char *message;
        /* the connection's list of its streams not yet freed */
        struct srv_stream *conn_next, **conn_pprev;
};

/* A unary call running on its own thread, then its answer. */
struct srv_call {
        struct srv_conn *conn;
        struct srv_stream *st; /* touched by the connection's thread only */
        const struct grpc_method *m;
        uint8_t *req;
        size_t req_len;
        int64_t timeout_ms;
        /* the answer */
        uint8_t *resp;
        size_t resp_len;
        int code; /* 0: resp, else the error's gRPC status */
        char *message;
        struct srv_call *next;
};

struct srv_conn {
        struct grpc_server *server;
        int fd;
        int wake_fd;          /* eventfd: a call finished */
        pthread_mutex_t lock; /* guards finished and inflight */
        pthread_cond_t idle;  /* inflight reached 0 */
        struct srv_call *finished;
        size_t inflight;
        bool broken; /* EOF or an error: the connection is done */
        pthread_t thread;
        atomic_bool done;
        nghttp2_session *session;
        struct srv_stream *ready_head, *ready_tail;
        /* every stream begun and not yet freed: nghttp2_session_del calls
         * no close callback, so those still open at the end are freed from
         * here */
        struct srv_stream *streams;
        struct srv_conn *next;
};

struct grpc_server {
        char *path;
        int listen_fd;
        int stop_fd; /* eventfd: readable once stopping */
        const struct grpc_method *methods;
        size_t n_methods;
        pthread_t accept_thread;
        pthread_mutex_t lock;
        struct srv_conn *conns;
        size_t n_conns;
};

/* ---- nghttp2 callbacks ---- */

static ssize_t srv_send(nghttp2_session *session, const uint8_t *data, size_t length, int flags,
                        void *user_data)
{
        (void)session;
        (void)flags;
        struct srv_conn *c = user_data;
        size_t off = 0;
        while (off < length) {
                ssize_t w = send(c->fd, data + off, length - off, MSG_NOSIGNAL);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                        if (off > 0)
                                return (ssize_t)off;
                        struct pollfd pfd[2] = {{.fd = c->fd, .events = POLLOUT},
                                                {.fd = c->server->stop_fd, .events = POLLIN}};
                        if (poll(pfd, 2, -1) < 0 && errno != EINTR)
                                return NGHTTP2_ERR_CALLBACK_FAILURE;
                        if (pfd[1].revents & POLLIN)
                                return NGHTTP2_ERR_CALLBACK_FAILURE;
                        continue;
                }
                if (w <= 0)
                        return NGHTTP2_ERR_CALLBACK_FAILURE;
                off += (size_t)w;
        }
        return (ssize_t)length;
}

static int srv_begin_headers(nghttp2_session *session, const nghttp2_frame *frame, void *user_data)
{
        struct srv_conn *c = user_data;
        if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST)
                return 0;
        struct srv_stream *st = xcalloc(1, sizeof(*st));
        st->id = frame->hd.stream_id;
        st->conn = c;
        st->conn_next = c->streams;
        if (c->streams != NULL)
                c->streams->conn_pprev = &st->conn_next;
        st->conn_pprev = &c->streams;
        c->streams = st;
        grpc_response_init(&st->req, GRPC_SERVER_MAX_MESSAGE);
        nghttp2_session_set_stream_user_data(session, st->id, st);
        return 0;
}

static bool name_is(const uint8_t *name, size_t len, const char *want)
{
        return len == strlen(want) && memcmp(name, want, len) == 0;
}

static int srv_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name,
                      size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                      void *user_data)
{
        (void)flags;
        (void)user_data;
        struct srv_stream *st = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
        if (st == NULL || frame->hd.type != NGHTTP2_HEADERS)
                return 0;
        if (name_is(name, namelen, ":path")) {
                if (valuelen >= sizeof(st->path)) {
                        st->bad_path = true;
                } else {
                        memcpy(st->path, value, valuelen);
                        st->path[valuelen] = '\0';
                }
        } else if (name_is(name, namelen, "grpc-timeout")) {
                cleanup_error ck_error_t ignored = NULL;
                int64_t ms = 0;
                if (grpc_parse_timeout((const char *)value, valuelen, &ms, &ignored) == 0)
                        st->timeout_ms = ms;
        }
        return 0;
}

static int srv_data_chunk(nghttp2_session *session, uint8_t flags, int32_t stream_id,
                          const uint8_t *data, size_t len, void *user_data)
{
        (void)flags;
        (void)user_data;
        struct srv_stream *st = nghttp2_session_get_stream_user_data(session, stream_id);
        if (st == NULL || st->req_err != NULL)
                return 0;
        grpc_response_on_data(&st->req, data, len, &st->req_err);
        return 0;
}

static int srv_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *user_data)
{
        struct srv_conn *c = user_data;
        if ((frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) ||
            !(frame->hd.flags & NGHTTP2_FLAG_END_STREAM))
                return 0;
        struct srv_stream *st = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
        if (st == NULL || st->ready)
                return 0;
        st->ready = true;
        if (c->ready_tail)
                c->ready_tail->next_ready = st;
        else
                c->ready_head = st;
        c->ready_tail = st;
        return 0;
}

static void stream_free(struct srv_stream *st)
{
        *st->conn_pprev = st->conn_next;
        if (st->conn_next != NULL)
                st->conn_next->conn_pprev = st->conn_pprev;
        grpc_response_free(&st->req);
        ck_error_release(&st->req_err);
        free(st->out);
        free(st->message);
        free(st);
}

static int srv_stream_close(nghttp2_session *session, int32_t stream_id, uint32_t error_code,
                            void *user_data)
{
        (void)error_code;
        struct srv_conn *c = user_data;
        struct srv_stream *st = nghttp2_session_get_stream_user_data(session, stream_id);
        if (st == NULL)
                return 0;
        /* a stream reset before it was dispatched leaves the ready list */
        struct srv_stream **pp = &c->ready_head, *prev = NULL;
        for (; *pp; prev = *pp, pp = &(*pp)->next_ready)
                if (*pp == st) {
                        *pp = st->next_ready;
                        if (c->ready_tail == st)
                                c->ready_tail = prev;
                        break;
                }
        nghttp2_session_set_stream_user_data(session, stream_id, NULL);
        if (st->in_handler)
                st->closed = true; /* its method still has it: freed after */
        else
                stream_free(st);
        return 0;
}

static ssize_t srv_read_body(nghttp2_session *session, int32_t stream_id, uint8_t *buf,
                             size_t length, uint32_t *data_flags, nghttp2_data_source *source,
                             void *user_data)
{
        (void)source;
        (void)user_data;
        struct srv_stream *st = nghttp2_session_get_stream_user_data(session, stream_id);
        if (st == NULL)
                return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
        size_t n = st->out_len - st->out_off;
        if (n == 0 && st->streaming && !st->ended) {
                st->deferred = true; /* resumed by the next message */
                return NGHTTP2_ERR_DEFERRED;
        }
        if (n > length)
                n = length;
        memcpy(buf, st->out + st->out_off, n);
        st->out_off += n;
        if (st->out_off == st->out_len && (!st->streaming || st->ended)) {
                *data_flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
                char status[16];
                snprintf(status, sizeof(status), "%d", st->status);
                cleanup_free char *enc = grpc_percent_encode(st->message ? st->message : "");
                nghttp2_nv trailers[] = {
                    {(uint8_t *)"grpc-status", (uint8_t *)status, 11, strlen(status),
                     NGHTTP2_NV_FLAG_NONE},
                    {(uint8_t *)"grpc-message", (uint8_t *)enc, 12, strlen(enc),
                     NGHTTP2_NV_FLAG_NONE},
                };
                if (nghttp2_submit_trailer(session, stream_id, trailers, st->status != 0 ? 2 : 1) !=
                    0)
                        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
        }
        return (ssize_t)n;
}

/* Appends a framed message to st's answer. */
static void stream_append(struct srv_stream *st, const uint8_t *msg, size_t len)
{
        if (st->out_off > 0 && st->out_off == st->out_len) {
                st->out_off = st->out_len = 0;
        }
        st->out = xrealloc(st->out, st->out_len + GRPC_PREFIX_SIZE + len + 1);
        grpc_write_message_prefix(st->out + st->out_len, (uint32_t)len);
        if (len > 0)
                memcpy(st->out + st->out_len + GRPC_PREFIX_SIZE, msg, len);
        st->out_len += GRPC_PREFIX_SIZE + len;
}

/* Hands what st has to nghttp2 and the socket. */
static void stream_flush(struct srv_stream *st)
{
        struct srv_conn *c = st->conn;
        if (st->deferred && !st->closed) {
                st->deferred = false;
                nghttp2_session_resume_data(c->session, st->id);
        }
        if (!c->broken && nghttp2_session_send(c->session) != 0)
                c->broken = true;
}

int grpc_server_stream_send(struct grpc_server_stream *s, const uint8_t *msg, size_t len)
{
        struct srv_stream *st = (struct srv_stream *)s;
        struct srv_conn *c = st->conn;
        if (st->closed || c->broken)
                return -1;
        stream_append(st, msg, len);
        stream_flush(st);
        return st->closed || c->broken ? -1 : 0;
}

bool grpc_server_stream_alive(struct grpc_server_stream *s, int wait_ms)
{
        struct srv_stream *st = (struct srv_stream *)s;
        struct srv_conn *c = st->conn;
        if (st->closed || c->broken)
                return false;
        struct pollfd pfd[2] = {{.fd = c->fd, .events = POLLIN},
                                {.fd = c->server->stop_fd, .events = POLLIN}};
        int n = poll(pfd, 2, wait_ms);
        if (n > 0 && (pfd[1].revents & POLLIN))
                return false;
        if (n > 0 && (pfd[0].revents & (POLLIN | POLLHUP | POLLERR))) {
                uint8_t buf[16384];
                ssize_t r = recv(c->fd, buf, sizeof(buf), 0);
                if (r <= 0 && !(r < 0 && (errno == EINTR || errno == EAGAIN)))
                        c->broken = true;
                else if (r > 0 && nghttp2_session_mem_recv(c->session, buf, (size_t)r) < 0)
                        c->broken = true;
                if (!c->broken && nghttp2_session_send(c->session) != 0)
                        c->broken = true;
        }
        return !st->closed && !c->broken;
}

/* ---- dispatch ---- */

#define NVS(n, v)                                                                                  \
        {                                                                                          \
                (uint8_t *)(n), (uint8_t *)(v), strlen(n), strlen(v), NGHTTP2_NV_FLAG_NONE         \
        }

/* A Trailers-Only answer: the call failed with code and message. */
static void reply_error(nghttp2_session *session, int32_t id, int code, const char *message)
{
        char status[16];
        snprintf(status, sizeof(status), "%d", code);
        cleanup_free char *enc = grpc_percent_encode(message ? message : "");
        nghttp2_nv hdrs[] = {
            NVS(":status", "200"),
            NVS("content-type", "application/grpc"),
            NVS("grpc-status", status),
            NVS("grpc-message", enc),
        };
        nghttp2_submit_response(session, id, hdrs, ARRAY_SIZE(hdrs), NULL);
}

static const struct grpc_method *find_method(const struct grpc_server *s, const char *path)
{
        for (size_t i = 0; i < s->n_methods; i++)
                if (strcmp(s->methods[i].path, path) == 0)
                        return &s->methods[i];
        return NULL;
}

/* A server-streaming method: the headers at once, then its messages as it
 * sends them, then trailers with its status. */
static void dispatch_stream(struct srv_conn *c, struct srv_stream *st, const struct grpc_method *m,
                            const uint8_t *req, size_t req_len)
{
        st->streaming = true;
        st->in_handler = true;
        nghttp2_nv hdrs[] = {
            NVS(":status", "200"),
            NVS("content-type", "application/grpc"),
        };
        nghttp2_data_provider prd = {.read_callback = srv_read_body};
        nghttp2_submit_response(c->session, st->id, hdrs, ARRAY_SIZE(hdrs), &prd);
        stream_flush(st);
        cleanup_free uint8_t *copy = xmalloc(req_len + 1);
        if (req_len > 0)
                memcpy(copy, req, req_len);
        cleanup_error ck_error_t herr = NULL;
        if (m->stream(m->ctx, copy, req_len, (struct grpc_server_stream *)st, &herr) < 0) {
                st->status = herr && herr->code > 0 && herr->code <= GRPC_UNAUTHENTICATED
                                 ? herr->code
                                 : GRPC_UNKNOWN;
                st->message = xstrdup(herr ? ck_error_msg(herr) : "");
        }
        st->ended = true;
        st->in_handler = false;
        if (st->closed) {
                stream_free(st);
                return;
        }
        stream_flush(st);
}

static void *call_main(void *arg)
{
        struct srv_call *call = arg;
        const struct grpc_method *m = call->m;
        cleanup_error ck_error_t herr = NULL;
        if (m->fn(m->ctx, call->req, call->req_len, call->timeout_ms, &call->resp, &call->resp_len,
                  &herr) < 0) {
                call->code = herr && herr->code > 0 && herr->code <= GRPC_UNAUTHENTICATED
                                 ? herr->code
                                 : GRPC_UNKNOWN;
                call->message = xstrdup(herr ? ck_error_msg(herr) : "");
                free(call->resp);
                call->resp = NULL;
                call->resp_len = 0;
        }
        struct srv_conn *c = call->conn;
        pthread_mutex_lock(&c->lock);
        call->next = c->finished;
        c->finished = call;
        uint64_t one = 1;
        if (write(c->wake_fd, &one, sizeof(one)) < 0)
                LOG_WARN("gRPC server: cannot wake the connection", "err=\"%s\"", strerror(errno));
        /* after this the connection may end: nothing of it is touched */
        if (--c->inflight == 0)
                pthread_cond_signal(&c->idle);
        pthread_mutex_unlock(&c->lock);
        return NULL;
}

static void dispatch(struct srv_conn *c, struct srv_stream *st)
{
        nghttp2_session *session = c->session;
        const struct grpc_method *m = st->bad_path ? NULL : find_method(c->server, st->path);
        if (m == NULL) {
                cleanup_free char *msg = xasprintf("unknown method %s", st->path);
                reply_error(session, st->id, GRPC_UNIMPLEMENTED, msg);
                return;
        }
        if (st->req_err != NULL) {
                reply_error(session, st->id, st->req_err->code, ck_error_msg(st->req_err));
                return;
        }
        if (st->req.prefix_len > 0 || (st->req.body != NULL && !st->req.have_message)) {
                reply_error(session, st->id, GRPC_INTERNAL, "request message truncated");
                return;
        }
        /* no DATA at all: an empty request */
        const uint8_t *req = st->req.have_message ? st->req.body : (const uint8_t *)"";
        size_t req_len = st->req.have_message ? st->req.body_len : 0;
        if (m->stream != NULL) {
                dispatch_stream(c, st, m, req, req_len);
                return;
        }
        struct srv_call *call = xcalloc(1, sizeof(*call));
        call->conn = c;
        call->st = st;
        call->m = m;
        call->req = xmalloc(req_len + 1);
        if (req_len > 0)
                memcpy(call->req, req, req_len);
        call->req_len = req_len;
        call->timeout_ms = st->timeout_ms;
        st->in_handler = true;
        pthread_mutex_lock(&c->lock);
        c->inflight++;
        pthread_mutex_unlock(&c->lock);
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, SERVER_CALL_STACK);
        pthread_t t;
        int rc = pthread_create(&t, &attr, call_main, call);
        pthread_attr_destroy(&attr);
        if (rc != 0) /* no thread: the call runs here, holding the connection */
                call_main(call);
}

/* Submits the answer of a finished call (its stream may be gone). */
static void call_answer(struct srv_conn *c, struct srv_call *call)
{
        struct srv_stream *st = call->st;
        st->in_handler = false;
        if (st->closed) {
                stream_free(st);
        } else if (call->code != 0) {
                reply_error(c->session, st->id, call->code, call->message);
        } else {
                st->out = xmalloc(GRPC_PREFIX_SIZE + call->resp_len);
                grpc_write_message_prefix(st->out, (uint32_t)call->resp_len);
                if (call->resp_len > 0)
                        memcpy(st->out + GRPC_PREFIX_SIZE, call->resp, call->resp_len);
                st->out_len = GRPC_PREFIX_SIZE + call->resp_len;
                nghttp2_nv hdrs[] = {
                    NVS(":status", "200"),
                    NVS("content-type", "application/grpc"),
                };
                nghttp2_data_provider prd = {.read_callback = srv_read_body};
                nghttp2_submit_response(c->session, st->id, hdrs, ARRAY_SIZE(hdrs), &prd);
        }
}

static void call_free(struct srv_call *call)
{
        free(call->req);
        free(call->resp);
        free(call->message);
        free(call);
}

/* Takes the finished calls: answers them (answer false: the connection is
 * ending, only frees them). */
static void drain_done(struct srv_conn *c, bool answer)
{
        uint64_t v;
        if (read(c->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
                LOG_WARN("gRPC server: cannot read the wake counter", "err=\"%s\"",
                         strerror(errno));
        pthread_mutex_lock(&c->lock);
        struct srv_call *list = c->finished;
        c->finished = NULL;
        pthread_mutex_unlock(&c->lock);
        /* the list is newest first: answer in the order they ended */
        struct srv_call *rev = NULL;
        while (list) {
                struct srv_call *next = list->next;
                list->next = rev;
                rev = list;
                list = next;
        }
        while (rev) {
                struct srv_call *next = rev->next;
                if (answer)
                        call_answer(c, rev);
                call_free(rev);
                rev = next;
        }
}

/* ---- a connection ---- */

static void serve(struct srv_conn *c)
{
        nghttp2_session_callbacks *cbs;
        if (nghttp2_session_callbacks_new(&cbs) != 0)
                abort();
        nghttp2_session_callbacks_set_send_callback(cbs, srv_send);
        nghttp2_session_callbacks_set_on_begin_headers_callback(cbs, srv_begin_headers);
        nghttp2_session_callbacks_set_on_header_callback(cbs, srv_header);
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, srv_data_chunk);
        nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, srv_frame_recv);
        nghttp2_session_callbacks_set_on_stream_close_callback(cbs, srv_stream_close);
        int rv = nghttp2_session_server_new(&c->session, cbs, c);
        nghttp2_session_callbacks_del(cbs);
        if (rv != 0)
                abort(); /* only NGHTTP2_ERR_NOMEM */
        const nghttp2_settings_entry settings[] = {
            {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, SERVER_MAX_STREAMS},
            {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, SERVER_WINDOW_SIZE},
        };
        nghttp2_submit_settings(c->session, NGHTTP2_FLAG_NONE, settings, ARRAY_SIZE(settings));
        uint8_t buf[16384];
        for (;;) {
                while (c->ready_head != NULL) {
                        struct srv_stream *st = c->ready_head;
                        c->ready_head = st->next_ready;
                        if (c->ready_head == NULL)
                                c->ready_tail = NULL;
                        st->next_ready = NULL;
                        dispatch(c, st);
                }
                if (c->broken || nghttp2_session_send(c->session) != 0)
                        break;
                if (!nghttp2_session_want_read(c->session) &&
                    !nghttp2_session_want_write(c->session))
                        break;
                struct pollfd pfd[3] = {{.fd = c->fd, .events = POLLIN},
                                        {.fd = c->server->stop_fd, .events = POLLIN},
                                        {.fd = c->wake_fd, .events = POLLIN}};
                if (poll(pfd, 3, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                if (pfd[1].revents & POLLIN)
                        break;
                if (pfd[2].revents & POLLIN) {
                        drain_done(c, true);
                        continue;
                }
                if (!(pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
                        continue;
                ssize_t n = recv(c->fd, buf, sizeof(buf), 0);
                if (n < 0 && (errno == EINTR || errno == EAGAIN))
                        continue;
                if (n <= 0)
                        break;
                if (nghttp2_session_mem_recv(c->session, buf, (size_t)n) < 0)
                        break;
        }
        /* the calls still running finish first (their answers dropped):
         * then the streams still open go with the session */
        pthread_mutex_lock(&c->lock);
        while (c->inflight > 0)
                pthread_cond_wait(&c->idle, &c->lock);
        pthread_mutex_unlock(&c->lock);
        drain_done(c, false);
        nghttp2_session_del(c->session);
        c->session = NULL;
        while (c->streams != NULL)
                stream_free(c->streams);
}

static void *conn_main(void *arg)
{
        struct srv_conn *c = arg;
        serve(c);
        close(c->fd);
        c->fd = -1;
        atomic_store(&c->done, true);
        return NULL;
}

static void conn_free(struct srv_conn *c)
{
        close(c->wake_fd);
        pthread_mutex_destroy(&c->lock);
        pthread_cond_destroy(&c->idle);
        free(c);
}

/* Joins and frees the connections whose threads ended (all of them when
 * all is true, after waiting for each).  Called with the lock held. */
static void reap(struct grpc_server *s, bool all)
{
        for (struct srv_conn **pp = &s->conns; *pp;) {
                struct srv_conn *c = *pp;
                if (!all && !atomic_load(&c->done)) {
                        pp = &c->next;
                        continue;
                }
                pthread_join(c->thread, NULL);
                *pp = c->next;
                s->n_conns--;
                conn_free(c);
        }
}

static void *accept_main(void *arg)
{
        struct grpc_server *s = arg;
        for (;;) {
                struct pollfd pfd[2] = {{.fd = s->listen_fd, .events = POLLIN},
                                        {.fd = s->stop_fd, .events = POLLIN}};
                if (poll(pfd, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        LOG_ERROR("gRPC server: poll failed", "path=\"%s\" err=\"%s\"", s->path,
                                  strerror(errno));
                        return NULL;
                }
                if (pfd[1].revents & POLLIN)
                        return NULL;
                int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
                if (fd < 0) {
                        if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED)
                                LOG_WARN("gRPC server: accept failed", "path=\"%s\" err=\"%s\"",
                                         s->path, strerror(errno));
                        if (errno == EMFILE || errno == ENFILE)
                                poll(NULL, 0, 100);
                        continue;
                }
                pthread_mutex_lock(&s->lock);
                reap(s, false);
                if (s->n_conns >= SERVER_MAX_CONNECTIONS) {
                        pthread_mutex_unlock(&s->lock);
                        LOG_WARN("gRPC server: too many connections, closing a new one",
                                 "path=\"%s\" max=%d", s->path, SERVER_MAX_CONNECTIONS);
                        close(fd);
                        continue;
                }
                int wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
                if (wake < 0) {
                        pthread_mutex_unlock(&s->lock);
                        LOG_WARN("gRPC server: eventfd failed, closing a new connection",
                                 "path=\"%s\" err=\"%s\"", s->path, strerror(errno));
                        close(fd);
                        continue;
                }
                struct srv_conn *c = xcalloc(1, sizeof(*c));
                c->server = s;
                c->fd = fd;
                c->wake_fd = wake;
                pthread_mutex_init(&c->lock, NULL);
                pthread_cond_init(&c->idle, NULL);
                if (pthread_create(&c->thread, NULL, conn_main, c) != 0) {
                        pthread_mutex_unlock(&s->lock);
                        close(fd);
                        conn_free(c);
                        continue;
                }
                c->next = s->conns;
                s->conns = c;
                s->n_conns++;
                pthread_mutex_unlock(&s->lock);
        }
}

int grpc_server_start(const char *unix_path, const struct grpc_method *methods, size_t n,
                      struct grpc_server **out, ck_error_t *err)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        if (strlen(unix_path) >= sizeof(sa.sun_path))
                return ck_error_make(err, ENAMETOOLONG, "listen on `%s`", unix_path);
        memcpy(sa.sun_path, unix_path, strlen(unix_path) + 1);
        cleanup_close int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return ck_error_make(err, errno, "socket");
        if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                return ck_error_make(err, errno, "listen on `%s`", unix_path);
        if (listen(fd, 64) < 0) {
                int e = errno;
                unlink(unix_path);
                return ck_error_make(err, e, "listen on `%s`", unix_path);
        }
        int stop_fd = eventfd(0, EFD_CLOEXEC);
        if (stop_fd < 0) {
                int e = errno;
                unlink(unix_path);
                return ck_error_make(err, e, "eventfd");
        }
        struct grpc_server *s = xcalloc(1, sizeof(*s));
        s->path = xstrdup(unix_path);
        s->listen_fd = fd;
        s->stop_fd = stop_fd;
        s->methods = methods;
        s->n_methods = n;
        pthread_mutex_init(&s->lock, NULL);
        if (pthread_create(&s->accept_thread, NULL, accept_main, s) != 0) {
                int e = errno;
                unlink(unix_path);
                close(stop_fd);
                pthread_mutex_destroy(&s->lock);
                free(s->path);
                free(s);
                return ck_error_make(err, e, "start the gRPC server's thread");
        }
        fd = -1;
        *out = s;
        return 0;
}

void grpc_server_stop(struct grpc_server *s)
{
        if (s == NULL)
                return;
        uint64_t one = 1;
        if (write(s->stop_fd, &one, sizeof(one)) < 0)
                LOG_WARN("gRPC server: cannot signal the stop", "err=\"%s\"", strerror(errno));
        pthread_join(s->accept_thread, NULL);
        pthread_mutex_lock(&s->lock);
        reap(s, true);
        pthread_mutex_unlock(&s->lock);
        close(s->listen_fd);
        close(s->stop_fd);
        unlink(s->path);
        pthread_mutex_destroy(&s->lock);
        free(s->path);
        free(s);
}
