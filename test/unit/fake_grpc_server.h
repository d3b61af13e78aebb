/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A fake gRPC server for unit tests of the gRPC transport and the CRI client:
 * an nghttp2 server session on a unix socket in a temp dir, served by one
 * thread, one connection at a time.  A test-supplied handler decides the
 * reply to each request (a message, an error status, trailers-only, a bare
 * HTTP status, no answer at all) and whether the server then closes the
 * connection or sends GOAWAY.
 *
 * Header-only (static functions) so each test binary gets its own copy.
 */
#ifndef CK_TEST_FAKE_GRPC_SERVER_H
#define CK_TEST_FAKE_GRPC_SERVER_H

#include <nghttp2/nghttp2.h>

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

enum fake_reply_kind {
        FAKE_REPLY_MESSAGE,       /* headers, DATA, trailers */
        FAKE_REPLY_TRAILERS_ONLY, /* one HEADERS block with grpc-status, END_STREAM */
        FAKE_REPLY_HTTP_STATUS,   /* :status only, no grpc-status */
        FAKE_REPLY_NONE,          /* never answer */
};

struct fake_reply {
        enum fake_reply_kind kind;
        int grpc_status;
        const char *grpc_message; /* sent as is (already percent-encoded); may be NULL */
        int http_status;          /* FAKE_REPLY_HTTP_STATUS */
        uint8_t *body;            /* the message (malloc'ed, the server frees it) */
        size_t body_len;
        bool raw_body;     /* body already holds the framing (prefix) */
        size_t chunk;      /* max bytes per DATA frame, 0: no limit */
        bool close_after;  /* close the connection once the reply is sent */
        bool goaway_after; /* send GOAWAY after the reply */
        /* stop serving the connection without closing it (see
         * fake_server_stop_reading_abandoned) */
        bool abandon_after;
};

struct fake_request {
        const char *path;
        const char *grpc_timeout; /* "" when absent */
        const char *te;
        const char *content_type;
        const uint8_t *msg; /* the message without its prefix */
        size_t msg_len;
};

struct fake_server;
typedef void (*fake_handler)(struct fake_server *s, const struct fake_request *req,
                             struct fake_reply *reply);

struct fake_server {
        char dir[64];
        char path[128];
        int listen_fd;
        int stop_pipe[2];
        pthread_t thread;
        fake_handler handler;
        void *data; /* for the handler */
        atomic_int connections;
        atomic_int requests;
        atomic_int closed;    /* connections closed or abandoned by the server */
        pthread_mutex_t lock; /* guards the last_* copies */
        char last_path[256];
        char last_timeout[32];
        char last_te[32];
        char last_content_type[64];
        int abandoned[16]; /* connections left open by abandon_after */
        int n_abandoned;
};

struct fake_stream {
        char path[256], timeout[32], te[32], content_type[64];
        uint8_t *req;
        size_t req_len;
        struct fake_reply reply;
        uint8_t *out; /* prefix + body */
        size_t out_len, out_off;
        struct fake_stream *next, **pprev; /* the connection's open streams */
};

struct fake_conn {
        struct fake_server *s;
        int fd;
        bool close_now;
        bool abandon;
        struct fake_stream *streams; /* open streams, freed when the session ends */
};

static ssize_t fake_send(nghttp2_session *session, const uint8_t *data, size_t length, int flags,
                         void *user_data)
{
        (void)session;
        (void)flags;
        struct fake_conn *fc = user_data;
        size_t off = 0;
        while (off < length) {
                ssize_t w = send(fc->fd, data + off, length - off, MSG_NOSIGNAL);
                if (w < 0)
                        return NGHTTP2_ERR_CALLBACK_FAILURE;
                off += (size_t)w;
        }
        return (ssize_t)length;
}

static int fake_begin_headers(nghttp2_session *session, const nghttp2_frame *frame, void *user_data)
{
        struct fake_conn *fc = user_data;
        if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
                struct fake_stream *st = calloc(1, sizeof(*st));
                st->next = fc->streams;
                st->pprev = &fc->streams;
                if (fc->streams)
                        fc->streams->pprev = &st->next;
                fc->streams = st;
                nghttp2_session_set_stream_user_data(session, frame->hd.stream_id, st);
        }
        return 0;
}

static void fake_copy(char *dst, size_t size, const uint8_t *v, size_t len)
{
        if (len >= size)
                len = size - 1;
        memcpy(dst, v, len);
        dst[len] = '\0';
}

static int fake_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name,
                       size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                       void *user_data)
{
        (void)flags;
        (void)user_data;
        struct fake_stream *st = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
        if (!st)
                return 0;
        const char *n = (const char *)name;
        if (namelen == 5 && memcmp(n, ":path", 5) == 0)
                fake_copy(st->path, sizeof(st->path), value, valuelen);
        else if (namelen == 12 && memcmp(n, "grpc-timeout", 12) == 0)
                fake_copy(st->timeout, sizeof(st->timeout), value, valuelen);
        else if (namelen == 2 && memcmp(n, "te", 2) == 0)
                fake_copy(st->te, sizeof(st->te), value, valuelen);
        else if (namelen == 12 && memcmp(n, "content-type", 12) == 0)
                fake_copy(st->content_type, sizeof(st->content_type), value, valuelen);
        return 0;
}

static int fake_data_chunk(nghttp2_session *session, uint8_t flags, int32_t stream_id,
                           const uint8_t *data, size_t len, void *user_data)
{
        (void)flags;
        (void)user_data;
        struct fake_stream *st = nghttp2_session_get_stream_user_data(session, stream_id);
        if (!st)
                return 0;
        st->req = realloc(st->req, st->req_len + len);
        memcpy(st->req + st->req_len, data, len);
        st->req_len += len;
        return 0;
}

static void fake_submit_trailers(nghttp2_session *session, int32_t id, struct fake_stream *st)
{
        char status[16];
        snprintf(status, sizeof(status), "%d", st->reply.grpc_status);
        nghttp2_nv nv[2] = {
            {(uint8_t *)"grpc-status", (uint8_t *)status, 11, strlen(status), 0},
        };
        size_t n = 1;
        if (st->reply.grpc_message)
                nv[n++] = (nghttp2_nv){(uint8_t *)"grpc-message", (uint8_t *)st->reply.grpc_message,
                                       12, strlen(st->reply.grpc_message), 0};
        nghttp2_submit_trailer(session, id, nv, n);
}

static ssize_t fake_read_body(nghttp2_session *session, int32_t stream_id, uint8_t *buf,
                              size_t length, uint32_t *data_flags, nghttp2_data_source *source,
                              void *user_data)
{
        (void)user_data;
        struct fake_stream *st = source->ptr;
        size_t n = st->out_len - st->out_off;
        if (n > length)
                n = length;
        if (st->reply.chunk && n > st->reply.chunk)
                n = st->reply.chunk;
        memcpy(buf, st->out + st->out_off, n);
        st->out_off += n;
        if (st->out_off == st->out_len) {
                *data_flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
                fake_submit_trailers(session, stream_id, st);
        }
        return (ssize_t)n;
}

static void fake_reply(nghttp2_session *session, struct fake_conn *fc, int32_t id,
                       struct fake_stream *st)
{
        struct fake_server *s = fc->s;
        pthread_mutex_lock(&s->lock);
        memcpy(s->last_path, st->path, sizeof(s->last_path));
        memcpy(s->last_timeout, st->timeout, sizeof(s->last_timeout));
        memcpy(s->last_te, st->te, sizeof(s->last_te));
        memcpy(s->last_content_type, st->content_type, sizeof(s->last_content_type));
        pthread_mutex_unlock(&s->lock);

        struct fake_request req = {st->path, st->timeout, st->te, st->content_type, NULL, 0};
        if (st->req_len >= 5) {
                req.msg = st->req + 5;
                req.msg_len = st->req_len - 5;
        }
        s->handler(s, &req, &st->reply);
        atomic_fetch_add(&s->requests, 1);

        struct fake_reply *r = &st->reply;
        char status[16];
        switch (r->kind) {
        case FAKE_REPLY_NONE:
                return;
        case FAKE_REPLY_HTTP_STATUS: {
                snprintf(status, sizeof(status), "%d", r->http_status);
                nghttp2_nv nv[] = {{(uint8_t *)":status", (uint8_t *)status, 7, strlen(status), 0}};
                nghttp2_submit_response(session, id, nv, 1, NULL);
                break;
        }
        case FAKE_REPLY_TRAILERS_ONLY: {
                snprintf(status, sizeof(status), "%d", r->grpc_status);
                nghttp2_nv nv[4] = {
                    {(uint8_t *)":status", (uint8_t *)"200", 7, 3, 0},
                    {(uint8_t *)"content-type", (uint8_t *)"application/grpc", 12, 16, 0},
                    {(uint8_t *)"grpc-status", (uint8_t *)status, 11, strlen(status), 0},
                };
                size_t n = 3;
                if (r->grpc_message)
                        nv[n++] =
                            (nghttp2_nv){(uint8_t *)"grpc-message", (uint8_t *)r->grpc_message, 12,
                                         strlen(r->grpc_message), 0};
                nghttp2_submit_response(session, id, nv, n, NULL);
                break;
        }
        case FAKE_REPLY_MESSAGE: {
                size_t pre = r->raw_body ? 0 : 5;
                st->out_len = pre + r->body_len;
                st->out = malloc(st->out_len + 1);
                if (!r->raw_body) {
                        st->out[0] = 0;
                        st->out[1] = (uint8_t)(r->body_len >> 24);
                        st->out[2] = (uint8_t)(r->body_len >> 16);
                        st->out[3] = (uint8_t)(r->body_len >> 8);
                        st->out[4] = (uint8_t)r->body_len;
                }
                if (r->body_len)
                        memcpy(st->out + pre, r->body, r->body_len);
                nghttp2_nv nv[] = {
                    {(uint8_t *)":status", (uint8_t *)"200", 7, 3, 0},
                    {(uint8_t *)"content-type", (uint8_t *)"application/grpc", 12, 16, 0},
                };
                nghttp2_data_provider prd = {.source.ptr = st, .read_callback = fake_read_body};
                nghttp2_submit_response(session, id, nv, 2, &prd);
                break;
        }
        }
        if (r->goaway_after)
                nghttp2_submit_goaway(session, NGHTTP2_FLAG_NONE,
                                      nghttp2_session_get_last_proc_stream_id(session),
                                      NGHTTP2_NO_ERROR, NULL, 0);
        if (r->close_after)
                fc->close_now = true;
        if (r->abandon_after)
                fc->abandon = true;
}

static int fake_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *user_data)
{
        if ((frame->hd.type != NGHTTP2_DATA && frame->hd.type != NGHTTP2_HEADERS) ||
            !(frame->hd.flags & NGHTTP2_FLAG_END_STREAM))
                return 0;
        struct fake_stream *st = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
        if (st)
                fake_reply(session, user_data, frame->hd.stream_id, st);
        return 0;
}

static void fake_stream_free(struct fake_stream *st)
{
        *st->pprev = st->next;
        if (st->next)
                st->next->pprev = st->pprev;
        free(st->req);
        free(st->out);
        free(st->reply.body);
        free(st);
}

static int fake_stream_close(nghttp2_session *session, int32_t stream_id, uint32_t error_code,
                             void *user_data)
{
        (void)error_code;
        (void)user_data;
        struct fake_stream *st = nghttp2_session_get_stream_user_data(session, stream_id);
        if (st) {
                fake_stream_free(st);
                nghttp2_session_set_stream_user_data(session, stream_id, NULL);
        }
        return 0;
}

/* nghttp2_session_del calls no close callback: the streams still open are
 * freed here. */
static void fake_session_end(nghttp2_session *session, struct fake_conn *fc)
{
        nghttp2_session_del(session);
        while (fc->streams)
                fake_stream_free(fc->streams);
}

static void fake_serve_conn(struct fake_server *s, int fd)
{
        struct fake_conn fc = {.s = s, .fd = fd};
        nghttp2_session_callbacks *cbs;
        nghttp2_session_callbacks_new(&cbs);
        nghttp2_session_callbacks_set_send_callback(cbs, fake_send);
        nghttp2_session_callbacks_set_on_begin_headers_callback(cbs, fake_begin_headers);
        nghttp2_session_callbacks_set_on_header_callback(cbs, fake_header);
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, fake_data_chunk);
        nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, fake_frame_recv);
        nghttp2_session_callbacks_set_on_stream_close_callback(cbs, fake_stream_close);
        nghttp2_session *session;
        nghttp2_session_server_new(&session, cbs, &fc);
        nghttp2_session_callbacks_del(cbs);
        nghttp2_submit_settings(session, NGHTTP2_FLAG_NONE, NULL, 0);
        uint8_t buf[16384];
        for (;;) {
                if (nghttp2_session_send(session) != 0 || fc.close_now)
                        break;
                if (fc.abandon && s->n_abandoned < 16) {
                        s->abandoned[s->n_abandoned++] = fd;
                        fake_session_end(session, &fc);
                        atomic_fetch_add(&s->closed, 1);
                        return;
                }
                struct pollfd p[2] = {{.fd = fd, .events = POLLIN},
                                      {.fd = s->stop_pipe[0], .events = POLLIN}};
                if (poll(p, 2, -1) < 0 || p[1].revents)
                        break;
                ssize_t n = read(fd, buf, sizeof(buf));
                if (n <= 0 || nghttp2_session_mem_recv(session, buf, (size_t)n) < 0)
                        break;
        }
        fake_session_end(session, &fc);
        close(fd);
        atomic_fetch_add(&s->closed, 1);
}

static void *fake_server_main(void *arg)
{
        struct fake_server *s = arg;
        for (;;) {
                struct pollfd p[2] = {{.fd = s->listen_fd, .events = POLLIN},
                                      {.fd = s->stop_pipe[0], .events = POLLIN}};
                if (poll(p, 2, -1) < 0 || p[1].revents)
                        break;
                int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
                if (fd < 0)
                        continue;
                atomic_fetch_add(&s->connections, 1);
                fake_serve_conn(s, fd);
        }
        return NULL;
}

static void fake_server_listen(struct fake_server *s)
{
        s->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        if (strlen(s->path) >= sizeof(sa.sun_path))
                abort();
        memcpy(sa.sun_path, s->path, strlen(s->path) + 1);
        if (s->listen_fd < 0 || bind(s->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
            listen(s->listen_fd, 16) < 0)
                abort();
        pthread_create(&s->thread, NULL, fake_server_main, s);
}

/* Stops the thread and closes the listener and the connection in service. */
static void fake_server_halt(struct fake_server *s)
{
        if (write(s->stop_pipe[1], "x", 1) != 1)
                abort();
        pthread_join(s->thread, NULL);
        char c;
        if (read(s->stop_pipe[0], &c, 1) != 1)
                abort();
        close(s->listen_fd);
        unlink(s->path);
        for (int i = 0; i < s->n_abandoned; i++)
                close(s->abandoned[i]);
        s->n_abandoned = 0;
}

/* Starts a server on <tmpdir>/grpc.sock. */
static inline struct fake_server *fake_server_start(fake_handler handler, void *data)
{
        struct fake_server *s = calloc(1, sizeof(*s));
        snprintf(s->dir, sizeof(s->dir), "/tmp/ck-fake-grpc-XXXXXX");
        if (!mkdtemp(s->dir))
                abort();
        snprintf(s->path, sizeof(s->path), "%s/grpc.sock", s->dir);
        s->handler = handler;
        s->data = data;
        pthread_mutex_init(&s->lock, NULL);
        if (pipe2(s->stop_pipe, O_CLOEXEC) < 0)
                abort();
        fake_server_listen(s);
        return s;
}

/* Waits (up to 5 s) until the server closed or abandoned n connections, so
 * that a test does not race the server thread. */
static inline bool fake_server_wait_closed(struct fake_server *s, int n)
{
        for (int i = 0; i < 5000 && atomic_load(&s->closed) < n; i++)
                poll(NULL, 0, 1);
        return atomic_load(&s->closed) >= n;
}

/* shutdown(SHUT_RD) of the abandoned connections: a client notices nothing
 * until it writes, which then fails with EPIPE. */
static inline void fake_server_stop_reading_abandoned(struct fake_server *s)
{
        for (int i = 0; i < s->n_abandoned; i++)
                shutdown(s->abandoned[i], SHUT_RD);
}

/* A server restart: every connection dropped, a new listener on the same path. */
static inline void fake_server_restart(struct fake_server *s)
{
        fake_server_halt(s);
        fake_server_listen(s);
}

/* Stops the thread, closes everything, removes the socket and the dir. */
static inline void fake_server_stop(struct fake_server *s)
{
        if (!s)
                return;
        fake_server_halt(s);
        close(s->stop_pipe[0]);
        close(s->stop_pipe[1]);
        rmdir(s->dir);
        pthread_mutex_destroy(&s->lock);
        free(s);
}

#endif
