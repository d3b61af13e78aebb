/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The read-only port: one thread, one poll loop over the listening socket,
 * a stop eventfd and at most READONLY_MAX_CONNS connections.  Each
 * connection gets READONLY_TIMEOUT_MS to send its request head (at most
 * READONLY_MAX_REQUEST bytes), then one response with Content-Length and
 * "Connection: close"; after the response the write side is shut down and
 * whatever the client still sends is drained briefly, so that closing does
 * not reset the connection under an unread response.
 */
#include "server/readonly.h"
#include "server/http_request.h"
#include "server/listen.h"
#include "util/fsutil.h"
#include "util/cleanup.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define READONLY_MAX_CONNS 64
#define READONLY_MAX_REQUEST 8192
#define READONLY_TIMEOUT_MS 5000
#define READONLY_DRAIN_MS 1000
#define READONLY_BACKLOG 128

enum conn_phase { CONN_READING = 0, CONN_WRITING, CONN_DRAINING };

struct conn {
        int fd;
        enum conn_phase phase;
        int64_t deadline_ms; /* CLOCK_MONOTONIC */
        char in[READONLY_MAX_REQUEST];
        size_t in_len;
        char *out; /* the whole response */
        size_t out_len, out_off;
};

struct readonly_server {
        int listen_fd;
        int stop_fd;
        int port;
        readonly_pods_fn pods;
        void *ctx;
        pthread_t thread;
        struct conn *conns[READONLY_MAX_CONNS];
        size_t n_conns;
};

/* Builds the full response into c->out.  body may be NULL (empty);
 * head_only: HEAD, the headers announce the body's length but omit it. */
static void set_response(struct conn *c, int code, const char *content_type, const char *extra,
                         const char *body, size_t body_len, bool head_only)
{
        char date[64];
        time_t t = time(NULL);
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);

        char *head = xasprintf("HTTP/1.1 %d %s\r\n"
                               "Content-Type: %s\r\n"
                               "Content-Length: %zu\r\n"
                               "Date: %s\r\n"
                               "%s"
                               "Connection: close\r\n"
                               "\r\n",
                               code, http_status_text(code), content_type, body_len, date,
                               extra ? extra : "");
        size_t head_len = strlen(head);
        size_t send_body = head_only || body == NULL ? 0 : body_len;
        free(c->out);
        c->out = xmalloc(head_len + send_body + 1);
        memcpy(c->out, head, head_len);
        if (send_body > 0)
                memcpy(c->out + head_len, body, send_body);
        c->out_len = head_len + send_body;
        c->out_off = 0;
        free(head);
}

static void set_text(struct conn *c, int code, const char *extra, const char *text, bool head_only)
{
        set_response(c, code, "text/plain; charset=utf-8", extra, text, strlen(text), head_only);
}

/* Answers a complete, well-formed request (upstream: go-restful routes
 * "/pods" and the healthz handler "/healthz"). */
static void route(struct readonly_server *s, struct conn *c, const struct http_request *req)
{
        bool head = http_request_method_is(req, "HEAD");
        bool known = http_request_path_is(req, "/healthz") || http_request_path_is(req, "/pods") ||
                     http_request_path_is(req, "/pods/");
        if (!known) {
                set_text(c, 404, NULL, "404 page not found\n", head);
                return;
        }
        if (!head && !http_request_method_is(req, "GET")) {
                set_text(c, 405, "Allow: GET, HEAD\r\n", "405: Method Not Allowed\n", false);
                return;
        }
        if (http_request_path_is(req, "/healthz")) {
                set_text(c, 200, NULL, "ok", head);
                return;
        }
        json_t *list = s->pods ? s->pods(s->ctx) : NULL;
        if (list == NULL) {
                set_text(c, 500, NULL, "pods unavailable\n", head);
                return;
        }
        cleanup_free char *body = json_dumps(list, JSON_COMPACT);
        json_decref(list);
        if (body == NULL) {
                set_text(c, 500, NULL, "pods unavailable\n", head);
                return;
        }
        set_response(c, 200, "application/json", NULL, body, strlen(body), head);
}

static void conn_start_writing(struct conn *c)
{
        c->phase = CONN_WRITING;
        c->deadline_ms = fs_now_mono_ms() + READONLY_TIMEOUT_MS;
}

static void conn_free(struct conn *c)
{
        if (c->fd >= 0)
                close(c->fd);
        free(c->out);
        free(c);
}

static void server_drop_conn(struct readonly_server *s, size_t i)
{
        conn_free(s->conns[i]);
        s->conns[i] = s->conns[--s->n_conns];
        s->conns[s->n_conns] = NULL;
}

/* Reads what is there and answers once the head is complete.  Returns
 * false when the connection is to be closed now. */
static bool conn_on_readable(struct readonly_server *s, struct conn *c)
{
        for (;;) {
                if (c->in_len == sizeof(c->in)) {
                        set_text(c, 431, NULL, "431 Request Header Fields Too Large\n", false);
                        conn_start_writing(c);
                        return true;
                }
                ssize_t r = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, 0);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                        return true;
                if (r <= 0)
                        return false; /* error or EOF before a complete request */
                c->in_len += (size_t)r;

                struct http_request req;
                enum http_parse_result pr = http_parse_request(c->in, c->in_len, &req);
                if (pr == HTTP_PARSE_INCOMPLETE)
                        continue;
                if (pr == HTTP_PARSE_BAD)
                        set_text(c, 400, NULL, "400 Bad Request\n", false);
                else
                        route(s, c, &req);
                conn_start_writing(c);
                return true;
        }
}

/* Returns false when the connection is to be closed now. */
static bool conn_on_writable(struct conn *c)
{
        while (c->out_off < c->out_len) {
                ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                        return true;
                if (w < 0)
                        return false;
                c->out_off += (size_t)w;
                /* progress: a large /pods answer to a slow reader is fine */
                c->deadline_ms = fs_now_mono_ms() + READONLY_TIMEOUT_MS;
        }
        shutdown(c->fd, SHUT_WR);
        c->phase = CONN_DRAINING;
        c->deadline_ms = fs_now_mono_ms() + READONLY_DRAIN_MS;
        return true;
}

/* Discards what the client still sends; false at EOF (close now). */
static bool conn_on_drain(struct conn *c)
{
        char buf[4096];
        for (;;) {
                ssize_t r = recv(c->fd, buf, sizeof(buf), 0);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                        return true;
                if (r <= 0)
                        return false;
        }
}

/* Accepts what is pending; returns false on a hard error (EMFILE, ...):
 * then accepting pauses briefly instead of spinning. */
static bool server_accept(struct readonly_server *s)
{
        while (s->n_conns < READONLY_MAX_CONNS) {
                int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
                if (fd < 0) {
                        if (errno == EINTR || errno == ECONNABORTED)
                                continue;
                        if (errno == EAGAIN || errno == EWOULDBLOCK)
                                return true;
                        LOG_WARN("Read-only server accept failed", "err=\"%s\"", strerror(errno));
                        return false;
                }
                struct conn *c = xcalloc(1, sizeof(*c));
                c->fd = fd;
                c->phase = CONN_READING;
                c->deadline_ms = fs_now_mono_ms() + READONLY_TIMEOUT_MS;
                s->conns[s->n_conns++] = c;
        }
        return true;
}

static void *server_thread(void *arg)
{
        struct readonly_server *s = arg;
        struct pollfd pfds[READONLY_MAX_CONNS + 2];
        bool accept_paused = false;

        for (;;) {
                size_t n = 0;
                pfds[n++] = (struct pollfd){.fd = s->stop_fd, .events = POLLIN};
                bool listening = s->n_conns < READONLY_MAX_CONNS && !accept_paused;
                pfds[n++] = (struct pollfd){.fd = listening ? s->listen_fd : -1, .events = POLLIN};
                int64_t now = fs_now_mono_ms();
                int64_t next = now + 60000;
                for (size_t i = 0; i < s->n_conns; i++) {
                        struct conn *c = s->conns[i];
                        short ev = c->phase == CONN_WRITING ? POLLOUT : POLLIN;
                        pfds[n++] = (struct pollfd){.fd = c->fd, .events = ev};
                        if (c->deadline_ms < next)
                                next = c->deadline_ms;
                }
                if (accept_paused && now + 100 < next)
                        next = now + 100;
                int timeout = next > now ? (int)(next - now) : 0;

                int r = poll(pfds, n, timeout);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0) {
                        LOG_ERROR("Read-only server poll failed", "err=\"%s\"", strerror(errno));
                        break;
                }
                if (pfds[0].revents)
                        break;
                accept_paused = false;

                /* Connections first (indices match pfds[2..] until one is
                 * dropped: walk backwards so that the swap-remove does not
                 * move an unvisited entry). */
                now = fs_now_mono_ms();
                for (size_t i = s->n_conns; i-- > 0;) {
                        struct conn *c = s->conns[i];
                        short rev = pfds[2 + i].revents;
                        bool keep = true;
                        if (rev & (POLLIN | POLLOUT | POLLERR | POLLHUP)) {
                                switch (c->phase) {
                                case CONN_READING:
                                        keep = conn_on_readable(s, c);
                                        if (keep && c->phase == CONN_WRITING)
                                                keep = conn_on_writable(c);
                                        break;
                                case CONN_WRITING:
                                        keep = conn_on_writable(c);
                                        break;
                                case CONN_DRAINING:
                                        keep = conn_on_drain(c);
                                        break;
                                }
                        }
                        if (keep && now >= c->deadline_ms)
                                keep = false; /* slow client: give up on it */
                        if (!keep)
                                server_drop_conn(s, i);
                }

                if ((pfds[1].revents & POLLIN) && !server_accept(s))
                        accept_paused = true; /* EMFILE and friends: retry soon */
        }
        return NULL;
}

int readonly_server_start(const char *address, int port, readonly_pods_fn pods, void *ctx,
                          struct readonly_server **out, ck_error_t *err)
{
        int lfd = -1, bound_port = 0;
        if (server_listen_tcp(address, port, READONLY_BACKLOG, &lfd, &bound_port, err) < 0)
                return ck_error_wrap(err, "read-only server on %s:%d", address ? address : "",
                                     port);
        int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (efd < 0) {
                int e = errno;
                close(lfd);
                return ck_error_make(err, e, "read-only server: eventfd");
        }
        struct readonly_server *s = xcalloc(1, sizeof(*s));
        s->listen_fd = lfd;
        s->stop_fd = efd;
        s->port = bound_port;
        s->pods = pods;
        s->ctx = ctx;
        int rc = pthread_create(&s->thread, NULL, server_thread, s);
        if (rc != 0) {
                close(lfd);
                close(efd);
                free(s);
                return ck_error_make(err, rc, "read-only server: start thread");
        }
        LOG_INFO(1, "Starting to listen read-only", "address=\"%s\" port=%d",
                 address ? address : "0.0.0.0", bound_port);
        *out = s;
        return 0;
}

int readonly_server_port(struct readonly_server *s)
{
        return s->port;
}

void readonly_server_stop(struct readonly_server *s)
{
        if (s == NULL)
                return;
        uint64_t one = 1;
        ssize_t w;
        do
                w = write(s->stop_fd, &one, sizeof(one));
        while (w < 0 && errno == EINTR);
        pthread_join(s->thread, NULL);
        while (s->n_conns > 0)
                server_drop_conn(s, s->n_conns - 1);
        close(s->listen_fd);
        close(s->stop_fd);
        free(s);
}
