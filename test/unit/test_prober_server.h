/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A tiny HTTP/1.1 server on 127.0.0.1 for the prober's tests: one thread
 * accepts, each connection gets its own thread (so a slow answer does not
 * hold up other probes).  Routes map a path to a status code, an optional
 * Location, a delay and a body size; each counts its hits.  The raw text of
 * the last request is kept for header assertions.  A connection that sends
 * nothing (a tcpSocket probe) is simply closed.
 *
 * Header-only (static functions) so each test binary gets its own copy.
 */
#ifndef CK_TEST_PROBER_SERVER_H
#define CK_TEST_PROBER_SERVER_H

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define HS_MAX_ROUTES 16

struct hs_route {
        char path[64];
        atomic_int status;
        atomic_int delay_ms;
        char location[128]; /* "" for none */
        size_t body_len;    /* body of 'x's; 0: "ok" */
        atomic_int hits;
        atomic_int in_flight; /* requests received and not yet answered */
};

struct http_server {
        int listen_fd;
        int port;
        int stop_pipe[2];
        pthread_t thread;
        atomic_int active; /* connection threads alive */
        atomic_int connections;
        pthread_mutex_t lock;
        struct hs_route routes[HS_MAX_ROUTES];
        int n_routes;
        char last_request[4096];
};

struct hs_conn {
        struct http_server *s;
        int fd;
};

/* Adds (or replaces) a route; call before requests use it. */
static inline struct hs_route *hs_route(struct http_server *s, const char *path, int status)
{
        for (int i = 0; i < s->n_routes; i++)
                if (strcmp(s->routes[i].path, path) == 0) {
                        atomic_store(&s->routes[i].status, status);
                        return &s->routes[i];
                }
        struct hs_route *r = &s->routes[s->n_routes++];
        snprintf(r->path, sizeof(r->path), "%s", path);
        atomic_store(&r->status, status);
        return r;
}

static inline int hs_hits(struct http_server *s, const char *path)
{
        for (int i = 0; i < s->n_routes; i++)
                if (strcmp(s->routes[i].path, path) == 0)
                        return atomic_load(&s->routes[i].hits);
        return 0;
}

static void hs_write_all(int fd, const char *p, size_t n)
{
        while (n > 0) {
                ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
                if (w <= 0)
                        return;
                p += w;
                n -= (size_t)w;
        }
}

static void *hs_conn_main(void *arg)
{
        struct hs_conn *hc = arg;
        struct http_server *s = hc->s;
        char buf[4096];
        size_t len = 0;
        while (len < sizeof(buf) - 1) {
                struct pollfd p[2] = {{.fd = hc->fd, .events = POLLIN},
                                      {.fd = s->stop_pipe[0], .events = POLLIN}};
                if (poll(p, 2, 5000) <= 0 || p[1].revents)
                        break;
                ssize_t n = read(hc->fd, buf + len, sizeof(buf) - 1 - len);
                if (n <= 0)
                        break;
                len += (size_t)n;
                buf[len] = '\0';
                if (strstr(buf, "\r\n\r\n"))
                        break;
        }
        buf[len] = '\0';
        char path[256] = "";
        if (len > 0 && sscanf(buf, "GET %255s ", path) == 1) {
                pthread_mutex_lock(&s->lock);
                memcpy(s->last_request, buf, len + 1);
                pthread_mutex_unlock(&s->lock);
                struct hs_route *r = NULL;
                for (int i = 0; i < s->n_routes; i++)
                        if (strcmp(s->routes[i].path, path) == 0)
                                r = &s->routes[i];
                int status = 404, delay = 0;
                size_t body_len = 2;
                const char *location = "";
                if (r != NULL) {
                        atomic_fetch_add(&r->in_flight, 1);
                        atomic_fetch_add(&r->hits, 1);
                        status = atomic_load(&r->status);
                        delay = atomic_load(&r->delay_ms);
                        location = r->location;
                        if (r->body_len > 0)
                                body_len = r->body_len;
                }
                if (delay > 0) {
                        struct pollfd p = {.fd = s->stop_pipe[0], .events = POLLIN};
                        poll(&p, 1, delay);
                }
                char head[512];
                int n = snprintf(head, sizeof(head),
                                 "HTTP/1.1 %d X\r\nContent-Length: %zu\r\nConnection: close\r\n"
                                 "%s%s%s\r\n",
                                 status, body_len, location[0] ? "Location: " : "", location,
                                 location[0] ? "\r\n" : "");
                hs_write_all(hc->fd, head, (size_t)n);
                char *body = malloc(body_len);
                memset(body, 'x', body_len);
                if (r == NULL || r->body_len == 0)
                        memcpy(body, "ok", 2);
                hs_write_all(hc->fd, body, body_len);
                free(body);
                if (r != NULL)
                        atomic_fetch_sub(&r->in_flight, 1);
        }
        close(hc->fd);
        free(hc);
        atomic_fetch_sub(&s->active, 1);
        return NULL;
}

static void *hs_main(void *arg)
{
        struct http_server *s = arg;
        for (;;) {
                struct pollfd p[2] = {{.fd = s->listen_fd, .events = POLLIN},
                                      {.fd = s->stop_pipe[0], .events = POLLIN}};
                if (poll(p, 2, -1) < 0 || p[1].revents)
                        break;
                int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
                if (fd < 0)
                        continue;
                atomic_fetch_add(&s->connections, 1);
                struct hs_conn *hc = malloc(sizeof(*hc));
                hc->s = s;
                hc->fd = fd;
                atomic_fetch_add(&s->active, 1);
                pthread_t t;
                pthread_attr_t attr;
                pthread_attr_init(&attr);
                pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
                if (pthread_create(&t, &attr, hs_conn_main, hc) != 0) {
                        close(fd);
                        free(hc);
                        atomic_fetch_sub(&s->active, 1);
                }
                pthread_attr_destroy(&attr);
        }
        return NULL;
}

/* A listening TCP socket on 127.0.0.1 with an ephemeral port. */
static inline int hs_listen_loopback(int *port)
{
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof(sa);
        if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 512) < 0 ||
            getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
                abort();
        *port = ntohs(sa.sin_port);
        return fd;
}

/* A port on 127.0.0.1 where nothing listens (bound once, then closed). */
static inline int hs_closed_port(void)
{
        int port;
        int fd = hs_listen_loopback(&port);
        close(fd);
        return port;
}

static inline struct http_server *hs_start(void)
{
        struct http_server *s = calloc(1, sizeof(*s));
        pthread_mutex_init(&s->lock, NULL);
        if (pipe2(s->stop_pipe, O_CLOEXEC) < 0)
                abort();
        s->listen_fd = hs_listen_loopback(&s->port);
        pthread_create(&s->thread, NULL, hs_main, s);
        return s;
}

static inline void hs_stop(struct http_server *s)
{
        if (write(s->stop_pipe[1], "x", 1) != 1)
                abort();
        pthread_join(s->thread, NULL);
        for (int i = 0; i < 10000 && atomic_load(&s->active) > 0; i++)
                poll(NULL, 0, 1);
        close(s->listen_fd);
        close(s->stop_pipe[0]);
        close(s->stop_pipe[1]);
        pthread_mutex_destroy(&s->lock);
        free(s);
}

/* A copy of the last request's text. */
static inline void hs_last_request(struct http_server *s, char *out, size_t size)
{
        pthread_mutex_lock(&s->lock);
        snprintf(out, size, "%s", s->last_request);
        pthread_mutex_unlock(&s->lock);
}

#endif
