/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A scripted fake apiserver for unit tests: plain HTTP/1.1 on 127.0.0.1
 * (or a unix socket: the Docker Engine's API), answering each request with the next answer of a
 * script (keep-alive bodies or chunked streams) and recording what it received.  Header-only:
 * include it in one test file (it needs cmocka included before it).
 */
#ifndef CK_TEST_FAKE_APISERVER_H
#define CK_TEST_FAKE_APISERVER_H

#include "client/pool.h"
#include "util/xalloc.h"

#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* One scripted answer, used in order.  A stream is closed after its
 * chunks, and says so (Connection: close): a client must not send its
 * next request on it. */
struct answer {
        int status;
        const char *body;          /* sent with Content-Length; keep-alive */
        const char *const *chunks; /* else: a chunked stream of these, then closed */
        int hold_ms;               /* a stream: kept open this long after the chunks */
        const char *raw;           /* else: raw_len bytes after a head without length,
                                    * then closed (a hijacked Docker stream) */
        size_t raw_len;
};

#define MAX_REQ 32
struct fake {
        int fd, port;
        pthread_t thread;
        atomic_bool stop;
        const struct answer *script;
        size_t n_script;
        pthread_mutex_t lock; /* guards the records below */
        size_t n_req, accepts;
        char req[MAX_REQ][512];   /* "METHOD target" */
        char head[MAX_REQ][1024]; /* the header lines */
        char body[MAX_REQ][8192];
};

static void write_all(int fd, const char *p, size_t n)
{
        while (n > 0) {
                ssize_t w = send(fd, p, n, MSG_NOSIGNAL); /* a client gone: EPIPE, not SIGPIPE */
                if (w <= 0)
                        return;
                p += w;
                n -= (size_t)w;
        }
}

/* Waits for fd to be readable while the fake runs; false on stop/timeout. */
static bool wait_readable(struct fake *f, int fd, int timeout_ms)
{
        for (int waited = 0; waited < timeout_ms && !atomic_load(&f->stop); waited += 50) {
                struct pollfd p = {.fd = fd, .events = POLLIN};
                if (poll(&p, 1, 50) > 0)
                        return true;
        }
        return false;
}

/* Reads one request; false at EOF.  Records it. */
static bool read_request(struct fake *f, int fd)
{
        char buf[16384];
        size_t len = 0;
        char *end = NULL;
        while (end == NULL) {
                if (len == sizeof(buf) - 1 || !wait_readable(f, fd, 5000))
                        return false;
                ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);
                if (n <= 0)
                        return false;
                len += (size_t)n;
                buf[len] = '\0';
                end = strstr(buf, "\r\n\r\n");
        }
        size_t clen = 0;
        const char *cl = strcasestr(buf, "\r\nContent-Length: ");
        if (cl)
                clen = strtoul(cl + 18, NULL, 10);
        size_t have = len - (size_t)(end + 4 - buf);
        while (have < clen && len < sizeof(buf) - 1 && wait_readable(f, fd, 5000)) {
                ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);
                if (n <= 0)
                        return false;
                len += (size_t)n;
                have += (size_t)n;
        }
        buf[len] = '\0';
        pthread_mutex_lock(&f->lock);
        if (f->n_req < MAX_REQ) {
                size_t i = f->n_req;
                char *eol = strstr(buf, "\r\n");
                const char *http = memmem(buf, (size_t)(eol - buf), " HTTP/1.1", 9);
                snprintf(f->req[i], sizeof(f->req[i]), "%.*s", (int)(http - buf), buf);
                snprintf(f->head[i], sizeof(f->head[i]), "%.*s", (int)(end - eol), eol + 2);
                snprintf(f->body[i], sizeof(f->body[i]), "%s", end + 4);
        }
        f->n_req++;
        pthread_mutex_unlock(&f->lock);
        return true;
}

/* Answers; false when the connection must be closed. */
static bool answer(struct fake *f, int fd, const struct answer *a)
{
        char head[256];
        if (a->raw) {
                int n = snprintf(head, sizeof(head),
                                 "HTTP/1.1 %d OK\r\nContent-Type: "
                                 "application/vnd.docker.raw-stream\r\n\r\n",
                                 a->status);
                write_all(fd, head, (size_t)n);
                for (size_t off = 0; off < a->raw_len; off += 5) { /* in small pieces */
                        write_all(fd, a->raw + off, a->raw_len - off < 5 ? a->raw_len - off : 5);
                        usleep(1000);
                }
                return false;
        }
        if (a->chunks == NULL) {
                const char *body = a->body ? a->body : "";
                int n = snprintf(head, sizeof(head),
                                 "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
                                 "Content-Length: %zu\r\n\r\n",
                                 a->status, strlen(body));
                write_all(fd, head, (size_t)n);
                write_all(fd, body, strlen(body));
                return true;
        }
        int n = snprintf(head, sizeof(head),
                         "HTTP/1.1 %d OK\r\nContent-Type: application/json\r\n"
                         "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
                         a->status);
        write_all(fd, head, (size_t)n);
        for (const char *const *c = a->chunks; *c; c++) {
                n = snprintf(head, sizeof(head), "%zx\r\n", strlen(*c));
                write_all(fd, head, (size_t)n);
                write_all(fd, *c, strlen(*c));
                write_all(fd, "\r\n", 2);
                usleep(20000);
        }
        for (int waited = 0; waited < a->hold_ms && !atomic_load(&f->stop); waited += 20)
                usleep(20000);
        write_all(fd, "0\r\n\r\n", 5);
        return false;
}

static void *serve(void *arg)
{
        struct fake *f = arg;
        size_t next = 0;
        while (!atomic_load(&f->stop)) {
                if (!wait_readable(f, f->fd, 100))
                        continue;
                int c = accept4(f->fd, NULL, NULL, SOCK_CLOEXEC);
                if (c < 0)
                        continue;
                pthread_mutex_lock(&f->lock);
                f->accepts++;
                pthread_mutex_unlock(&f->lock);
                static const struct answer none = {.status = 599, .body = "script exhausted"};
                while (read_request(f, c)) {
                        const struct answer *a = next < f->n_script ? &f->script[next] : &none;
                        next++;
                        if (!answer(f, c, a))
                                break;
                }
                close(c);
        }
        return NULL;
}

static int listen_loopback(int *port)
{
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t alen = sizeof(a);
        assert_true(fd >= 0);
        assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
        assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
        *port = ntohs(a.sin_port);
        return fd;
}

__attribute__((unused)) static struct fake *fake_start(const struct answer *script, size_t n)
{
        struct fake *f = xcalloc(1, sizeof(*f));
        f->script = script;
        f->n_script = n;
        pthread_mutex_init(&f->lock, NULL);
        f->fd = listen_loopback(&f->port);
        assert_int_equal(listen(f->fd, 8), 0);
        assert_int_equal(pthread_create(&f->thread, NULL, serve, f), 0);
        return f;
}

/* The same fake on a new unix socket at path. */
__attribute__((unused)) static struct fake *fake_start_unix(const struct answer *script, size_t n,
                                                            const char *path)
{
        struct fake *f = xcalloc(1, sizeof(*f));
        f->script = script;
        f->n_script = n;
        pthread_mutex_init(&f->lock, NULL);
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        assert_true(strlen(path) < sizeof(a.sun_path));
        strcpy(a.sun_path, path);
        unlink(path);
        f->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(f->fd >= 0);
        assert_int_equal(bind(f->fd, (struct sockaddr *)&a, sizeof(a)), 0);
        assert_int_equal(listen(f->fd, 8), 0);
        assert_int_equal(pthread_create(&f->thread, NULL, serve, f), 0);
        return f;
}

/* A pool of REST clients pointed at the fake (plain HTTP, no rate limit);
 * fails the test if it cannot be made.  Free it with rest_pool_free. */
__attribute__((unused)) static struct rest_pool *fake_rest_pool(const struct fake *f)
{
        char server[64];
        snprintf(server, sizeof(server), "http://127.0.0.1:%d", f->port);
        struct rest_config cfg = {.server = server};
        struct rest_pool *pool = NULL;
        ck_error_t err = NULL;
        if (rest_pool_new(&cfg, NULL, &pool, &err) < 0)
                fail_msg("%s", ck_error_msg(err));
        return pool;
}

/* Waits (up to 10 s) until the fake has received n requests; fails the test
 * on timeout.  Returns how many it has received (n or more). */
__attribute__((unused)) static size_t fake_wait_requests(struct fake *f, size_t n)
{
        for (int waited = 0;; waited += 20) {
                pthread_mutex_lock(&f->lock);
                size_t have = f->n_req;
                pthread_mutex_unlock(&f->lock);
                if (have >= n)
                        return have;
                if (waited >= 10000)
                        fail_msg("the fake apiserver got %zu requests, expected %zu", have, n);
                usleep(20000);
        }
}

static void fake_stop(struct fake *f)
{
        atomic_store(&f->stop, true);
        pthread_join(f->thread, NULL);
        close(f->fd);
        pthread_mutex_destroy(&f->lock);
        free(f);
}

#endif
