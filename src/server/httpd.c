/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTTP server's threads and request loop.  An accept thread polls the
 * listener, a stop eventfd and a reap eventfd; each accepted connection
 * gets a thread of its own (joinable) that does the TLS handshake (on a
 * TLS port), then reads request heads and calls the handler for each until
 * the connection is to close.  A finished connection thread moves its
 * connection from the active to the done list and pokes the reap eventfd;
 * the accept thread joins it.  httpd_stop() shuts every active socket
 * down and joins whatever is left.
 */
#include "server/httpd_internal.h"
#include "server/listen.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/netutil.h"
#include "util/xalloc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define HTTPD_BACKLOG 128
#define HTTPD_REQUEST_TIMEOUT_MS 10000
#define HTTPD_THREAD_STACK (512 * 1024)
#define HTTPD_TLS_RETRY_MS 10000
#define HTTPD_IDLE_TIMEOUT_MS 90000 /* upstream's IdleTimeout */

static void list_push(struct httpd_conn **head, struct httpd_conn *c)
{
        c->prev = NULL;
        c->next = *head;
        if (*head)
                (*head)->prev = c;
        *head = c;
}

static void list_unlink(struct httpd_conn **head, struct httpd_conn *c)
{
        if (c->prev)
                c->prev->next = c->next;
        else
                *head = c->next;
        if (c->next)
                c->next->prev = c->prev;
        c->prev = c->next = NULL;
}

static void poke(int efd)
{
        uint64_t one = 1;
        while (write(efd, &one, sizeof(one)) < 0 && errno == EINTR)
                ;
}

static char *header_copy(const char *buf, const struct http_request *hr, const char *name)
{
        const char *v;
        size_t len;
        return http_request_header(buf, hr, name, &v, &len) ? xstrndup(v, len) : NULL;
}

/* A header field that may repeat names token (ASCII case-insensitive, as
 * a substring: Go's "Connection: close" and "Expect" checks). */
static bool header_has(const char *buf, const struct http_request *hr, const char *name,
                       const char *token)
{
        size_t pos = 0, len, n = strlen(token);
        const char *v;
        while (http_request_header_next(buf, hr, name, &pos, &v, &len))
                for (size_t i = 0; i + n <= len; i++)
                        if (strncasecmp(v + i, token, n) == 0)
                                return true;
        return false;
}

/* A path for a Location header: bytes other than unreserved, sub-delims,
 * ':', '@' and '/' percent-encoded.  A new string. */
static char *escape_path(const char *p)
{
        static const char keep[] = "-._~!$&'()*+,;=:@/";
        size_t n = strlen(p);
        char *out = xmalloc(3 * n + 1), *o = out;
        for (; *p; p++) {
                unsigned char ch = (unsigned char)*p;
                if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || strchr(keep, ch) != NULL) {
                        *o++ = (char)ch;
                } else {
                        static const char hex[] = "0123456789ABCDEF";
                        *o++ = '%';
                        *o++ = hex[ch >> 4];
                        *o++ = hex[ch & 15];
                }
        }
        *o = '\0';
        return out;
}

static void respond_close(struct httpd_conn *c, int status, const char *msg)
{
        c->close = true;
        httpd_respond(c, status, NULL, msg, strlen(msg));
}

/* Go's ServeMux answer to a path that is not clean. */
static void redirect_clean(struct httpd_conn *c, const char *clean, const char *query,
                           size_t query_len)
{
        cleanup_free char *loc = escape_path(clean);
        cleanup_free char *extra =
            query ? xasprintf("Location: %s?%.*s\r\n", loc, (int)query_len, query)
                  : xasprintf("Location: %s\r\n", loc);
        cleanup_free char *body = xasprintf("<a href=\"%s\">Moved Permanently</a>.\n\n", loc);
        httpd_respond_with(c, 301, "text/html; charset=utf-8", extra, body, strlen(body));
}

/* Sets the request's framing state (keep-alive, body) from its head;
 * false with a 400 answered when the framing is not acceptable. */
static bool start_request(struct httpd_conn *c, const char *head, const struct http_request *hr)
{
        c->resp = HTTPD_RESP_NONE;
        c->head_only = hr->method_len == 4 && memcmp(hr->method, "HEAD", 4) == 0;
        c->http10 = hr->version_minor == 0;
        c->close = c->http10 || header_has(head, hr, "Connection", "close");
        c->body = HTTPD_BODY_NONE;
        c->body_left = 0;
        memset(&c->chunked, 0, sizeof(c->chunked));
        c->expect_continue = false;
        const char *v;
        size_t vlen;
        if (hr->version_minor == 1 && !http_request_header(head, hr, "Host", &v, &vlen)) {
                respond_close(c, 400, "400 Bad Request: missing required Host header");
                return false;
        }
        /* As Go's server (net/http transfer.go): one Transfer-Encoding,
         * "chunked", or 501 and close.  Any other coding leaves the end of
         * the body to guesswork (http_parse_request's chunked is only that
         * "chunked" appears somewhere), the stuff of request smuggling. */
        size_t pos = 0, n_te = 0;
        bool te_chunked = false;
        while (http_request_header_next(head, hr, "Transfer-Encoding", &pos, &v, &vlen)) {
                n_te++;
                te_chunked = vlen == 7 && strncasecmp(v, "chunked", 7) == 0;
        }
        if (n_te > 1 || (n_te == 1 && !te_chunked)) {
                respond_close(c, 501, "Unsupported transfer encoding");
                return false;
        }
        if (hr->chunked && hr->has_content_length) { /* a smuggling attempt */
                respond_close(c, 400, "400 Bad Request");
                return false;
        }
        if (hr->chunked) {
                c->body = HTTPD_BODY_CHUNKED;
        } else if (hr->has_content_length && hr->content_length > 0) {
                c->body = HTTPD_BODY_LENGTH;
                c->body_left = hr->content_length;
        }
        c->expect_continue =
            c->body != HTTPD_BODY_NONE && header_has(head, hr, "Expect", "100-continue");
        return true;
}

/* Builds the handler's view of a parsed request (its head copied out of
 * c->in: a body read may move the buffer) and calls the handler. */
static void dispatch(struct httpd_conn *c, const struct http_request *parsed)
{
        struct httpd *s = c->server;
        const char *in = c->in + c->in_off;
        cleanup_free char *head = xstrndup(in, parsed->head_len);
        /* the same parse over the copy, so its pointers point there */
        struct http_request hr;
        if (http_parse_request(head, parsed->head_len, &hr) != HTTP_PARSE_OK) {
                respond_close(c, 400, "400 Bad Request");
                return;
        }
        c->in_off += parsed->head_len;
        if (!start_request(c, head, &hr))
                return;
        cleanup_free char *raw_path = xstrndup(hr.path, hr.path_len);
        cleanup_free char *decoded = http_path_unescape(hr.path, hr.path_len);
        if (decoded == NULL) {
                respond_close(c, 400, "400 Bad Request");
                return;
        }
        cleanup_free char *path = http_path_clean(decoded);
        bool connect = hr.method_len == 7 && memcmp(hr.method, "CONNECT", 7) == 0;
        if (!connect && strcmp(path, decoded) != 0) {
                redirect_clean(c, path, hr.query, hr.query_len);
                return;
        }
        cleanup_free char *method = xstrndup(hr.method, hr.method_len);
        cleanup_free char *query = hr.query ? xstrndup(hr.query, hr.query_len) : NULL;
        char *auth = header_copy(head, &hr, "Authorization");
        cleanup_free char *agent = header_copy(head, &hr, "User-Agent");
        struct httpd_peer peer = {0};
        if (c->ssl)
                httpd_tls_peer(c->ssl, &peer);
        static const char *const no_orgs[] = {NULL};
        struct httpd_request req = {
            .method = method,
            .path = path,
            .raw_path = raw_path,
            .query = query,
            .authorization = auth,
            .upgrade = header_has(head, &hr, "Connection", "upgrade"),
            .peer_cn = peer.cn,
            .peer_orgs = peer.orgs ? (const char *const *)peer.orgs : no_orgs,
            .peer_verify_error = peer.verify_error,
            .remote_addr = c->remote,
            .user_agent = agent,
            .head = head,
            .parsed = &hr,
        };
        s->handler(s->ctx, &req, c);
        httpd_tls_peer_free(&peer);
        if (auth)
                explicit_bzero(auth, strlen(auth)); /* a bearer token */
        free(auth);
        explicit_bzero(head, hr.head_len);
}

/* Reads request heads and answers them until the connection is to close:
 * 431 when a head does not fit, 400 when it is malformed, else whatever
 * the handler answers.  A client that closes, or stays silent past the
 * request deadline (the idle deadline between requests), is closed without
 * an answer. */
static void serve(struct httpd_conn *c)
{
        struct httpd *s = c->server;
        int64_t deadline = c->accepted_ms + s->request_timeout_ms;
        bool idle = false; /* between requests, no byte of the next one yet */
        for (;;) {
                enum http_parse_result pr = HTTP_PARSE_INCOMPLETE;
                struct http_request hr;
                size_t have = c->in_len - c->in_off;
                if (have > 0)
                        pr = http_parse_request(c->in + c->in_off, have, &hr);
                if (pr == HTTP_PARSE_BAD) {
                        respond_close(c, 400, "400 Bad Request");
                        return;
                }
                if (pr == HTTP_PARSE_INCOMPLETE) {
                        if (have == sizeof(c->in)) {
                                respond_close(c, 431, "431 Request Header Fields Too Large");
                                return;
                        }
                        int r = httpd_conn_fill(c, deadline);
                        if (r <= 0)
                                return;
                        c->in_len += (size_t)r;
                        if (idle) { /* the next request began: its head has the request time */
                                idle = false;
                                deadline = fs_now_mono_ms() + s->request_timeout_ms;
                        }
                        continue;
                }
                dispatch(c, &hr);
                if (!httpd_conn_end_request(c))
                        return;
                idle = c->in_len == c->in_off;
                deadline = fs_now_mono_ms() + (idle ? s->idle_timeout_ms : s->request_timeout_ms);
        }
}

/* What Go's server answers to plain HTTP on its TLS port, unencrypted. */
static void answer_plain_http(struct httpd_conn *c)
{
        static const char msg[] = "HTTP/1.0 400 Bad Request\r\n\r\n"
                                  "Client sent an HTTP request to an HTTPS server.\n";
        if (send(c->fd, msg, sizeof(msg) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) > 0)
                shutdown(c->fd, SHUT_WR);
}

/* The TLS context, made now if the server is lazy (lazy_tls) and this is
 * the first connection; NULL when it cannot be made (logged; tried again
 * for a connection HTTPD_TLS_RETRY_MS later: the files may be mended). */
static SSL_CTX *server_tls(struct httpd *s)
{
        pthread_mutex_lock(&s->tls_mu);
        if (s->tls == NULL && fs_now_mono_ms() >= s->tls_retry_ms) {
                cleanup_error ck_error_t err = NULL;
                if (httpd_tls_new(&s->opts, &s->tls, &err) < 0) {
                        s->tls_retry_ms = fs_now_mono_ms() + HTTPD_TLS_RETRY_MS;
                        LOG_ERROR("Cannot set up TLS for the kubelet server, closing its "
                                  "connections",
                                  "err=\"%s\"", ck_error_msg(err));
                }
        }
        SSL_CTX *tls = s->tls;
        pthread_mutex_unlock(&s->tls_mu);
        return tls;
}

static void *conn_thread(void *arg)
{
        struct httpd_conn *c = arg;
        struct httpd *s = c->server;
        /* A write to a vanished client must fail with EPIPE, not kill us. */
        sigset_t pipe;
        sigemptyset(&pipe);
        sigaddset(&pipe, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &pipe, NULL);

        if (!s->opts.tls) {
                serve(c);
                httpd_conn_finish(c);
        } else {
                int64_t deadline = c->accepted_ms + s->request_timeout_ms;
                SSL_CTX *tls = server_tls(s);
                c->ssl = tls ? SSL_new(tls) : NULL;
                if (c->ssl == NULL || SSL_set_fd(c->ssl, c->fd) != 1) {
                        LOG_ERROR("Cannot set up TLS for a connection",
                                  "server=\"%s\" remote=\"%s\"", s->name, c->remote);
                } else if (httpd_conn_handshake(c, deadline) < 0) {
                        /* as Go's "http: TLS handshake error from <addr>: <err>" */
                        LOG_INFO(4, "TLS handshake error", "remote=\"%s\" err=\"%s\"", c->remote,
                                 c->io_error);
                        if (c->plain_http)
                                answer_plain_http(c);
                } else {
                        serve(c);
                        httpd_conn_finish(c);
                }
                SSL_free(c->ssl);
                c->ssl = NULL;
        }
        explicit_bzero(c->in, sizeof(c->in)); /* a head may carry a bearer token */

        pthread_mutex_lock(&s->mu);
        list_unlink(&s->active, c);
        s->n_active--;
        close(c->fd); /* under the lock: stop must never shut down a reused fd */
        c->fd = -1;
        list_push(&s->done, c);
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        poke(s->reap_fd);
        return NULL;
}

/* Joins the connection threads that have finished. */
static void reap(struct httpd *s)
{
        pthread_mutex_lock(&s->mu);
        struct httpd_conn *done = s->done;
        s->done = NULL;
        pthread_mutex_unlock(&s->mu);
        while (done != NULL) {
                struct httpd_conn *next = done->next;
                pthread_join(done->thread, NULL);
                free(done);
                done = next;
        }
}

static void format_remote(const struct sockaddr_storage *ss, char *out, size_t n)
{
        char ip[INET6_ADDRSTRLEN] = "?";
        if (ss->ss_family == AF_INET6) {
                const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
                inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof(ip));
                snprintf(out, n, "[%s]:%u", ip, ntohs(a->sin6_port));
        } else {
                const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
                inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
                snprintf(out, n, "%s:%u", ip, ntohs(a->sin_port));
        }
}

/* Starts a thread for fd, or closes fd when max_conns run already. */
static void start_conn(struct httpd *s, int fd, const struct sockaddr_storage *ss)
{
        struct httpd_conn *c = xcalloc(1, sizeof(*c));
        c->server = s;
        c->fd = fd;
        c->accepted_ms = fs_now_mono_ms();
        format_remote(ss, c->remote, sizeof(c->remote));
        pthread_mutex_lock(&s->mu);
        bool full = s->n_active >= (size_t)s->max_conns;
        if (!full) {
                list_push(&s->active, c);
                s->n_active++;
        }
        pthread_mutex_unlock(&s->mu);
        if (full) {
                LOG_INFO(2, "Too many connections, closing a new one", "remote=\"%s\" max=%d",
                         c->remote, s->max_conns);
                close(fd);
                free(c);
                return;
        }
        /* small stacks: up to max_conns of them */
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, HTTPD_THREAD_STACK);
        int rc = pthread_create(&c->thread, &attr, conn_thread, c);
        pthread_attr_destroy(&attr);
        if (rc != 0) {
                LOG_WARN("Cannot start a connection thread", "remote=\"%s\" err=\"%s\"", c->remote,
                         strerror(rc));
                pthread_mutex_lock(&s->mu);
                list_unlink(&s->active, c);
                s->n_active--;
                pthread_mutex_unlock(&s->mu);
                close(fd);
                free(c);
        }
}

/* Accepts what is pending; false on a hard error (EMFILE, ...): accepting
 * then pauses briefly instead of spinning. */
static bool accept_pending(struct httpd *s)
{
        for (;;) {
                struct sockaddr_storage ss;
                socklen_t len = sizeof(ss);
                int fd = accept4(s->listen_fd, (struct sockaddr *)&ss, &len,
                                 SOCK_CLOEXEC | SOCK_NONBLOCK);
                if (fd < 0) {
                        if (errno == EINTR || errno == ECONNABORTED)
                                continue;
                        if (errno == EAGAIN)
                                return true;
                        LOG_WARN("Server accept failed", "server=\"%s\" err=\"%s\"", s->name,
                                 strerror(errno));
                        return false;
                }
                if (ss.ss_family == AF_INET || ss.ss_family == AF_INET6)
                        net_set_nodelay(fd); /* as Go's net/http: no Nagle delay */
                start_conn(s, fd, &ss);
        }
}

static void drain_eventfd(int efd)
{
        uint64_t v;
        while (read(efd, &v, sizeof(v)) < 0 && errno == EINTR)
                ;
}

static void *accept_thread(void *arg)
{
        struct httpd *s = arg;
        bool paused = false;
        for (;;) {
                struct pollfd p[3] = {
                    {.fd = s->stop_fd, .events = POLLIN},
                    {.fd = s->reap_fd, .events = POLLIN},
                    {.fd = paused ? -1 : s->listen_fd, .events = POLLIN},
                };
                int r = poll(p, 3, paused ? 100 : -1);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0) {
                        LOG_ERROR("Server poll failed", "server=\"%s\" err=\"%s\"", s->name,
                                  strerror(errno));
                        break;
                }
                if (p[0].revents)
                        break;
                if (p[1].revents) {
                        drain_eventfd(s->reap_fd);
                        reap(s);
                }
                paused = false;
                if ((p[2].revents & POLLIN) && !accept_pending(s))
                        paused = true;
        }
        return NULL;
}

/* lazy_tls: a file given must open and be a regular file. */
static int check_file(const char *what, const char *path, ck_error_t *err)
{
        if (path == NULL || *path == '\0')
                return 0;
        cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0)
                return ck_error_make(err, errno, "load %s: open `%s`", what, path);
        if (!S_ISREG(st.st_mode))
                return ck_error_make(err, 0, "load %s: `%s` is not a regular file", what, path);
        return 0;
}

/* lazy_tls: what can be checked at start without OpenSSL, so that a
 * configuration upstream refuses at start is refused at start. */
static int check_lazy(const struct httpd_options *o, ck_error_t *err)
{
        return httpd_tls_check_options(o, err) < 0 ||
                       check_file("TLS certificate", o->cert_file, err) < 0 ||
                       check_file("TLS private key", o->key_file, err) < 0 ||
                       check_file("client CA file", o->client_ca_file, err) < 0
                   ? -1
                   : 0;
}

static void server_free(struct httpd *s)
{
        if (s->listen_fd >= 0)
                close(s->listen_fd);
        if (s->stop_fd >= 0)
                close(s->stop_fd);
        if (s->reap_fd >= 0)
                close(s->reap_fd);
        SSL_CTX_free(s->tls);
        pthread_cond_destroy(&s->cv);
        pthread_mutex_destroy(&s->mu);
        pthread_mutex_destroy(&s->tls_mu);
        free(s);
}

int httpd_start(const struct httpd_options *o, struct httpd **out, ck_error_t *err)
{
        struct httpd *s = xcalloc(1, sizeof(*s));
        s->listen_fd = s->stop_fd = s->reap_fd = -1;
        s->handler = o->handler;
        s->ctx = o->ctx;
        s->request_timeout_ms =
            o->request_timeout_ms > 0 ? o->request_timeout_ms : HTTPD_REQUEST_TIMEOUT_MS;
        s->idle_timeout_ms = o->idle_timeout_ms > 0 ? o->idle_timeout_ms : HTTPD_IDLE_TIMEOUT_MS;
        s->max_conns = o->max_conns > 0 ? o->max_conns : HTTPD_MAX_CONNS;
        snprintf(s->name, sizeof(s->name), "%s", o->name && *o->name ? o->name : "server");
        atomic_init(&s->stopping, false);
        pthread_mutex_init(&s->mu, NULL);
        pthread_mutex_init(&s->tls_mu, NULL);
        pthread_cond_init(&s->cv, NULL);
        s->opts = *o;
        s->lazy_tls = o->tls && o->lazy_tls;
        const char *addr = o->address && o->address[0] ? o->address : "0.0.0.0";

        int rc = 0;
        if (s->lazy_tls)
                rc = check_lazy(o, err);
        else if (o->tls)
                rc = httpd_tls_new(o, &s->tls, err);
        if (rc == 0 &&
            server_listen_tcp(addr, o->port, HTTPD_BACKLOG, &s->listen_fd, &s->port, err) < 0)
                rc = ck_error_wrap(err, "%s on %s:%d", s->name, addr, o->port);
        if (rc == 0) {
                s->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
                s->reap_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
                if (s->stop_fd < 0 || s->reap_fd < 0)
                        rc = ck_error_make(err, errno, "%s: eventfd", s->name);
        }
        if (rc == 0) {
                int e = pthread_create(&s->accept_thread, NULL, accept_thread, s);
                if (e != 0)
                        rc = ck_error_make(err, e, "%s: start thread", s->name);
        }
        if (rc < 0) {
                server_free(s);
                return -1;
        }
        *out = s;
        return 0;
}

int httpd_port(struct httpd *s)
{
        return s->port;
}

void httpd_stop(struct httpd *s)
{
        if (s == NULL)
                return;
        atomic_store(&s->stopping, true);
        poke(s->stop_fd);
        pthread_join(s->accept_thread, NULL);
        close(s->listen_fd);
        s->listen_fd = -1;

        pthread_mutex_lock(&s->mu);
        for (struct httpd_conn *c = s->active; c != NULL; c = c->next)
                shutdown(c->fd, SHUT_RDWR);
        while (s->active != NULL || s->done != NULL) {
                if (s->done == NULL) {
                        pthread_cond_wait(&s->cv, &s->mu);
                        continue;
                }
                struct httpd_conn *c = s->done;
                list_unlink(&s->done, c);
                pthread_mutex_unlock(&s->mu);
                pthread_join(c->thread, NULL);
                free(c);
                pthread_mutex_lock(&s->mu);
        }
        pthread_mutex_unlock(&s->mu);
        server_free(s);
}
