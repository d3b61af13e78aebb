/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Docker Engine API client's exchange (docker.h): a pool of HTTP/1.1
 * connections on the engine's unix socket, the version prefix, the
 * engine's error answers ({"message": "..."}) made errors.
 */
#include "libdocker/docker.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/netutil.h"
#include "util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* Idle connections kept for the next calls. */
#define DOCKER_IDLE_MAX 8
#define DOCKER_READ_CHUNK (64 * 1024)
/* The Host header of every request: the engine ignores it, Go's client
 * sends the socket's placeholder name. */
#define DOCKER_HOST "docker"

struct docker_client {
        char *path;
        int64_t timeout_ms;
        atomic_bool stop;     /* docker_client_cancel */
        pthread_mutex_t lock; /* guards idle */
        struct http_client *idle[DOCKER_IDLE_MAX];
        size_t n_idle;
};

static struct http_client *conn_get(struct docker_client *d)
{
        struct http_client *c = NULL;
        pthread_mutex_lock(&d->lock);
        if (d->n_idle > 0)
                c = d->idle[--d->n_idle];
        pthread_mutex_unlock(&d->lock);
        if (c)
                return c;
        struct http_client_options o = {.keep_alive = true, .unix_path = d->path, .stop = &d->stop};
        return http_client_new(DOCKER_HOST, "80", &o);
}

static void conn_put(struct docker_client *d, struct http_client *c)
{
        http_client_end(c);
        pthread_mutex_lock(&d->lock);
        if (d->n_idle < DOCKER_IDLE_MAX) {
                d->idle[d->n_idle++] = c;
                c = NULL;
        }
        pthread_mutex_unlock(&d->lock);
        http_client_free(c);
}

static int status_code(int status)
{
        switch (status) {
        case 304:
                return DOCKER_ERR_NOT_MODIFIED;
        case 400:
                return DOCKER_ERR_INVALID;
        case 404:
                return DOCKER_ERR_NOT_FOUND;
        case 409:
                return DOCKER_ERR_CONFLICT;
        default:
                return DOCKER_ERR_SERVER;
        }
}

/* The engine's message of an error answer: its JSON "message", else the
 * body as text, else the status. */
static char *error_message(int status, const char *body, size_t len)
{
        if (len > 0) {
                json_t *j = json_loadb(body, len, 0, NULL);
                const char *m = json_string_value(json_object_get(j, "message"));
                if (m && *m) {
                        char *s = xstrdup(m);
                        json_decref(j);
                        return s;
                }
                json_decref(j);
                size_t n = len;
                while (n > 0 && (body[n - 1] == '\n' || body[n - 1] == '\r'))
                        n--;
                if (n > 0)
                        return xasprintf("%.*s", (int)(n > 512 ? 512 : n), body);
        }
        return xasprintf("status %d", status);
}

static int http_failure(ck_error_t *err, ck_error_t *herr, const char *what)
{
        int code = (*herr)->code == HTTP_ERR_TIMEOUT ? DOCKER_ERR_TIMEOUT : DOCKER_ERR_UNAVAILABLE;
        ck_error_make_code(err, code, "%s: %s", what, ck_error_msg(*herr));
        ck_error_release(herr);
        return -1;
}

int docker_do(struct docker_client *d, const struct docker_request *r, const char *what,
              docker_chunk_fn chunk, void *ctx, char **body, size_t *len, ck_error_t *err)
{
        if (body)
                *body = NULL;
        if (len)
                *len = 0;
        if (atomic_load(&d->stop))
                return ck_error_make_code(err, DOCKER_ERR_UNAVAILABLE, "%s: the client is stopping",
                                          what);
        int64_t timeout = r->timeout_ms > 0 ? r->timeout_ms : r->timeout_ms < 0 ? 0 : d->timeout_ms;
        int64_t deadline = timeout > 0 ? fs_now_mono_ms() + timeout : 0;
        cleanup_free char *target = xasprintf("/v" DOCKER_API_VERSION "%s", r->path);
        struct http_field fields[8];
        size_t nf = 0;
        if (r->body)
                fields[nf++] = (struct http_field){"Content-Type", "application/json"};
        for (size_t i = 0; i < r->n_headers && nf < sizeof(fields) / sizeof(fields[0]); i++)
                fields[nf++] = r->headers[i];
        struct http_request_spec spec = {
            .method = r->method,
            .target = target,
            .host = DOCKER_HOST,
            .headers = fields,
            .n_headers = nf,
            .body = r->body,
            .body_len = r->body_len,
        };
        struct http_client *c = conn_get(d);
        struct http_answer a;
        cleanup_error ck_error_t herr = NULL;
        if (http_client_send(c, &spec, deadline, &a, &herr) < 0) {
                http_client_free(c);
                return http_failure(err, &herr, what);
        }
        bool ok = a.status >= 200 && a.status < 300;
        int status = a.status;
        http_answer_clear(&a);

        cleanup_free char *buf = NULL;
        size_t n = 0, cap = 0;
        cleanup_free char *piece = chunk && ok ? xmalloc(DOCKER_READ_CHUNK) : NULL;
        for (;;) {
                if (piece) {
                        ssize_t got =
                            http_client_read(c, piece, DOCKER_READ_CHUNK, deadline, &herr);
                        if (got < 0) {
                                http_client_free(c);
                                return http_failure(err, &herr, what);
                        }
                        if (got == 0)
                                break;
                        if (chunk(ctx, piece, (size_t)got, err) < 0) {
                                http_client_free(c);
                                return ck_error_wrap(err, "%s", what);
                        }
                        continue;
                }
                if (cap - n < 4096) {
                        cap = cap ? cap * 2 : 16384;
                        buf = xrealloc(buf, cap + 1);
                }
                ssize_t got = http_client_read(c, buf + n, cap - n, deadline, &herr);
                if (got < 0) {
                        http_client_free(c);
                        return http_failure(err, &herr, what);
                }
                if (got == 0)
                        break;
                n += (size_t)got;
                if (n > DOCKER_MAX_ANSWER) {
                        http_client_free(c);
                        return ck_error_make_code(err, DOCKER_ERR_PROTOCOL,
                                                  "%s: the answer exceeds %u bytes", what,
                                                  DOCKER_MAX_ANSWER);
                }
        }
        conn_put(d, c);
        if (buf)
                buf[n] = '\0';
        if (!ok) {
                cleanup_free char *m = error_message(status, buf, n);
                return ck_error_make_code(err, status_code(status), "%s: %s", what, m);
        }
        if (body) {
                *body = buf ? buf : xstrdup("");
                buf = NULL;
        }
        if (len)
                *len = n;
        return 0;
}

/* The answer's head, read a byte at a time so that nothing of the stream
 * after it is taken: a new NUL-terminated string. */
static int read_head(int fd, int64_t deadline, const atomic_bool *stop, char **out, ck_error_t *err)
{
        size_t cap = 1024, n = 0;
        cleanup_free char *buf = xmalloc(cap);
        while (n < 4 || memcmp(buf + n - 4, "\r\n\r\n", 4) != 0) {
                if (n + 1 >= cap) {
                        if (cap >= 16384)
                                return ck_error_make_code(err, DOCKER_ERR_PROTOCOL,
                                                          "answer head over 16 KiB");
                        cap *= 2;
                        buf = xrealloc(buf, cap);
                }
                if (atomic_load(stop))
                        return ck_error_make_code(err, DOCKER_ERR_UNAVAILABLE, "cancelled");
                int64_t left = deadline - fs_now_mono_ms();
                if (left <= 0)
                        return ck_error_make_code(err, DOCKER_ERR_TIMEOUT, "no answer in time");
                struct pollfd p = {.fd = fd, .events = POLLIN};
                int pr = poll(&p, 1, (int)(left > 1000 ? 1000 : left));
                if (pr < 0 && errno != EINTR)
                        return ck_error_make_code(err, DOCKER_ERR_UNAVAILABLE, "poll: %s",
                                                  strerror(errno));
                if (pr <= 0)
                        continue;
                ssize_t r = recv(fd, buf + n, 1, 0);
                if (r < 0 && (errno == EINTR || errno == EAGAIN))
                        continue;
                if (r <= 0)
                        return ck_error_make_code(err, DOCKER_ERR_UNAVAILABLE,
                                                  "connection closed before the answer");
                n++;
        }
        buf[n] = '\0';
        *out = buf;
        buf = NULL;
        return 0;
}

/* The body of an error answer (up to 64 KiB, until its length or EOF). */
static char *read_error_body(int fd, const char *head, const struct http_response *resp,
                             int64_t deadline, const atomic_bool *stop, size_t *len)
{
        const char *v;
        size_t vlen;
        size_t want = 65536;
        if (http_response_header(head, resp, "Content-Length", &v, &vlen)) {
                cleanup_free char *s = xstrndup(v, vlen);
                unsigned long cl = strtoul(s, NULL, 10);
                if (cl < want)
                        want = cl;
        }
        char *buf = xmalloc(want + 1);
        size_t n = 0;
        while (n < want && fs_now_mono_ms() < deadline && !atomic_load(stop)) {
                struct pollfd p = {.fd = fd, .events = POLLIN};
                if (poll(&p, 1, 1000) <= 0)
                        continue;
                ssize_t r = recv(fd, buf + n, want - n, 0);
                if (r < 0 && (errno == EINTR || errno == EAGAIN))
                        continue;
                if (r <= 0)
                        break;
                n += (size_t)r;
        }
        buf[n] = '\0';
        *len = n;
        return buf;
}

int docker_hijack(struct docker_client *d, const char *path, json_t *body, const char *what,
                  int *fd, ck_error_t *err)
{
        *fd = -1;
        int64_t deadline = fs_now_mono_ms() + d->timeout_ms;
        ck_error_t e = NULL;
        cleanup_close int c = net_unix_dial(d->path, deadline, &e);
        if (c < 0) {
                ck_error_make_code(err, DOCKER_ERR_UNAVAILABLE, "%s: %s", what, ck_error_msg(e));
                ck_error_release(&e);
                return -1;
        }
        cleanup_free char *json = body ? json_dumps(body, JSON_COMPACT) : xstrdup("");
        cleanup_free char *req = xasprintf("POST /v" DOCKER_API_VERSION "%s HTTP/1.1\r\n"
                                           "Host: " DOCKER_HOST "\r\n"
                                           "Connection: Upgrade\r\n"
                                           "Upgrade: tcp\r\n"
                                           "Content-Type: application/json\r\n"
                                           "Content-Length: %zu\r\n\r\n%s",
                                           path, strlen(json), json);
        /* the dial left it non-blocking: the stream is used blocking */
        int fl = fcntl(c, F_GETFL);
        if (fl < 0 || fcntl(c, F_SETFL, fl & ~O_NONBLOCK) < 0)
                return ck_error_make_code(err, DOCKER_ERR_UNAVAILABLE, "%s: fcntl: %s", what,
                                          strerror(errno));
        size_t off = 0, len = strlen(req);
        while (off < len) {
                ssize_t w = send(c, req + off, len - off, MSG_NOSIGNAL);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0)
                        return ck_error_make_code(err, DOCKER_ERR_UNAVAILABLE, "%s: send: %s", what,
                                                  strerror(errno));
                off += (size_t)w;
        }
        cleanup_free char *head = NULL;
        if (read_head(c, deadline, &d->stop, &head, err) < 0)
                return ck_error_wrap(err, "%s", what);
        struct http_response resp;
        if (http_parse_response(head, strlen(head), &resp) != HTTP_PARSE_OK)
                return ck_error_make_code(err, DOCKER_ERR_PROTOCOL, "%s: the answer is not HTTP",
                                          what);
        if (resp.status != 101 && resp.status != 200) {
                size_t blen = 0;
                cleanup_free char *b = read_error_body(c, head, &resp, deadline, &d->stop, &blen);
                cleanup_free char *msg = error_message(resp.status, b, blen);
                return ck_error_make_code(err, status_code(resp.status), "%s: %s", what, msg);
        }
        *fd = c;
        c = -1;
        return 0;
}

int docker_do_json(struct docker_client *d, const char *method, const char *path, json_t *body,
                   const char *what, json_t **out, ck_error_t *err)
{
        if (out)
                *out = NULL;
        cleanup_free char *req = body ? json_dumps(body, JSON_COMPACT) : NULL;
        if (body && req == NULL)
                return ck_error_make_code(err, DOCKER_ERR_INVALID, "%s: encode the request", what);
        struct docker_request r = {
            .method = method, .path = path, .body = req, .body_len = req ? strlen(req) : 0};
        cleanup_free char *ans = NULL;
        size_t len = 0;
        if (docker_do(d, &r, what, NULL, NULL, out ? &ans : NULL, &len, err) < 0)
                return -1;
        if (out == NULL)
                return 0;
        json_error_t jerr;
        *out = json_loadb(ans, len, JSON_DECODE_ANY, &jerr);
        if (*out == NULL)
                return ck_error_make_code(err, DOCKER_ERR_PROTOCOL, "%s: decode the answer: %s",
                                          what, jerr.text);
        return 0;
}

/* Whether the API version a ("1.41") is at least b. */
static bool api_at_least(const char *a, const char *b)
{
        unsigned long amaj = 0, amin = 0, bmaj = 0, bmin = 0;
        if (sscanf(a, "%lu.%lu", &amaj, &amin) != 2 || sscanf(b, "%lu.%lu", &bmaj, &bmin) != 2)
                return false;
        return amaj > bmaj || (amaj == bmaj && amin >= bmin);
}

int docker_client_new(const char *endpoint, int64_t timeout_ms, struct docker_client **out,
                      ck_error_t *err)
{
        *out = NULL;
        const char *path = endpoint;
        if (strncmp(endpoint, "unix://", 7) == 0)
                path = endpoint + 7;
        else if (strstr(endpoint, "://") != NULL)
                return ck_error_make_code(err, DOCKER_ERR_INVALID,
                                          "docker endpoint `%s`: only unix:// is supported",
                                          endpoint);
        if (*path != '/')
                return ck_error_make_code(err, DOCKER_ERR_INVALID,
                                          "docker endpoint `%s`: not an absolute socket path",
                                          endpoint);
        struct docker_client *d = xcalloc(1, sizeof(*d));
        d->path = xstrdup(path);
        d->timeout_ms = timeout_ms;
        pthread_mutex_init(&d->lock, NULL);
        *out = d;
        return 0;
}

int docker_client_open(const char *endpoint, int64_t timeout_ms, struct docker_client **out,
                       ck_error_t *err)
{
        *out = NULL;
        struct docker_client *d = NULL;
        if (docker_client_new(endpoint, timeout_ms, &d, err) < 0)
                return -1;
        struct docker_version v = {0};
        if (docker_version(d, &v, err) < 0) {
                docker_client_free(d);
                return ck_error_wrap(err, "docker endpoint `%s`", endpoint);
        }
        if (!api_at_least(v.api_version, DOCKER_API_VERSION)) {
                ck_error_make_code(err, DOCKER_ERR_UNAVAILABLE,
                                   "docker endpoint `%s`: Docker Engine %s speaks API %s, "
                                   "older than the %s this client needs",
                                   endpoint, v.version, v.api_version, DOCKER_API_VERSION);
                docker_version_clear(&v);
                docker_client_free(d);
                return -1;
        }
        docker_version_clear(&v);
        *out = d;
        return 0;
}

void docker_client_cancel(struct docker_client *d)
{
        atomic_store(&d->stop, true);
}

void docker_client_free(struct docker_client *d)
{
        if (d == NULL)
                return;
        for (size_t i = 0; i < d->n_idle; i++)
                http_client_free(d->idle[i]);
        pthread_mutex_destroy(&d->lock);
        free(d->path);
        free(d);
}
