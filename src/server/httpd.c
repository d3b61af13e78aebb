/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTTPS server's threads.  An accept thread polls the listener, a stop
 * eventfd and a reap eventfd; each accepted connection gets a thread of
 * its own (joinable) that does the handshake, reads one request head,
 * calls the handler and closes.  A finished connection thread moves its
 * connection from the active to the done list and pokes the reap eventfd;
 * the accept thread joins it.  secure_server_stop() shuts every active
 * socket down and joins whatever is left.
 */
#include "server/secure_internal.h"
#include "server/http_request.h"
#include "server/listen.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
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

#define SECURE_BACKLOG 128
#define SECURE_REQUEST_TIMEOUT_MS 10000
#define SECURE_THREAD_STACK (512 * 1024)
#define SECURE_TLS_RETRY_MS 10000

static void list_push(struct secure_conn **head, struct secure_conn *c)
{
        c->prev = NULL;
        c->next = *head;
        if (*head)
                (*head)->prev = c;
        *head = c;
}

static void list_unlink(struct secure_conn **head, struct secure_conn *c)
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

/* A Connection header naming "upgrade" (upstream httpstream.IsUpgradeRequest:
 * a case-insensitive substring of any Connection header). */
static bool wants_upgrade(const char *buf, const struct http_request *hr)
{
        size_t pos = 0, len;
        const char *v;
        while (http_request_header_next(buf, hr, "Connection", &pos, &v, &len))
                for (size_t i = 0; i + 7 <= len; i++)
                        if (strncasecmp(v + i, "upgrade", 7) == 0)
                                return true;
        return false;
}

static char *header_copy(const char *buf, const struct http_request *hr, const char *name)
{
        const char *v;
        size_t len;
        return http_request_header(buf, hr, name, &v, &len) ? xstrndup(v, len) : NULL;
}

/* Builds the handler's view of a parsed request and calls the handler. */
static void dispatch(struct secure_conn *c, const struct http_request *hr)
{
        struct secure_server *s = c->server;
        char *method = xstrndup(hr->method, hr->method_len);
        char *path = xstrndup(hr->path, hr->path_len);
        char *query = hr->query ? xstrndup(hr->query, hr->query_len) : NULL;
        char *auth = header_copy(c->in, hr, "Authorization");
        char *agent = header_copy(c->in, hr, "User-Agent");
        struct secure_peer peer;
        secure_tls_peer(c->ssl, &peer);
        static const char *const no_orgs[] = {NULL};
        struct secure_request req = {
            .method = method,
            .path = path,
            .query = query,
            .authorization = auth,
            .upgrade = wants_upgrade(c->in, hr),
            .peer_cn = peer.cn,
            .peer_orgs = peer.orgs ? (const char *const *)peer.orgs : no_orgs,
            .peer_verify_error = peer.verify_error,
            .remote_addr = c->remote,
            .user_agent = agent,
        };
        c->head_only = strcmp(method, "HEAD") == 0;
        c->http10 = hr->version_minor == 0;
        s->handler(s->ctx, &req, c);
        secure_tls_peer_free(&peer);
        free(agent);
        if (auth)
                explicit_bzero(auth, strlen(auth)); /* a bearer token */
        free(auth);
        free(query);
        free(path);
        free(method);
}

/* Reads the request head and answers it: 431 when it does not fit, 400
 * when it is malformed (or an HTTP/1.1 request lacks Host, as Go answers),
 * else whatever the handler answers.  A client that closes or stays silent
 * past the deadline is closed without an answer. */
static void serve(struct secure_conn *c, int64_t deadline)
{
        for (;;) {
                if (c->in_len == sizeof(c->in)) {
                        static const char msg[] = "431 Request Header Fields Too Large";
                        secure_respond(c, 431, NULL, msg, sizeof(msg) - 1);
                        return;
                }
                int r = secure_conn_read(c, c->in + c->in_len, sizeof(c->in) - c->in_len, deadline);
                if (r <= 0)
                        return;
                c->in_len += (size_t)r;
                struct http_request hr;
                enum http_parse_result pr = http_parse_request(c->in, c->in_len, &hr);
                if (pr == HTTP_PARSE_INCOMPLETE)
                        continue;
                const char *v;
                size_t vlen;
                if (pr == HTTP_PARSE_OK && hr.version_minor == 1 &&
                    !http_request_header(c->in, &hr, "Host", &v, &vlen)) {
                        static const char msg[] = "400 Bad Request: missing required Host header";
                        secure_respond(c, 400, NULL, msg, sizeof(msg) - 1);
                } else if (pr == HTTP_PARSE_BAD) {
                        static const char msg[] = "400 Bad Request";
                        secure_respond(c, 400, NULL, msg, sizeof(msg) - 1);
                } else {
                        dispatch(c, &hr);
                }
                return;
        }
}

/* What Go's server answers to plain HTTP on its TLS port, unencrypted. */
static void answer_plain_http(struct secure_conn *c)
{
        static const char msg[] = "HTTP/1.0 400 Bad Request\r\n\r\n"
                                  "Client sent an HTTP request to an HTTPS server.\n";
        if (send(c->fd, msg, sizeof(msg) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) > 0)
                shutdown(c->fd, SHUT_WR);
}

/* The TLS context, made now if the server is lazy (lazy_tls) and this is
 * the first connection; NULL when it cannot be made (logged; tried again
 * for a connection SECURE_TLS_RETRY_MS later: the files may be mended). */
static SSL_CTX *server_tls(struct secure_server *s)
{
        pthread_mutex_lock(&s->tls_mu);
        if (s->tls == NULL && fs_now_mono_ms() >= s->tls_retry_ms) {
                cleanup_error ck_error_t err = NULL;
                if (secure_tls_new(&s->opts, &s->tls, &err) < 0) {
                        s->tls_retry_ms = fs_now_mono_ms() + SECURE_TLS_RETRY_MS;
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
        struct secure_conn *c = arg;
        struct secure_server *s = c->server;
        /* A write to a vanished client must fail with EPIPE, not kill us. */
        sigset_t pipe;
        sigemptyset(&pipe);
        sigaddset(&pipe, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &pipe, NULL);

        int64_t deadline = c->accepted_ms + s->request_timeout_ms;
        SSL_CTX *tls = server_tls(s);
        c->ssl = tls ? SSL_new(tls) : NULL;
        if (c->ssl == NULL || SSL_set_fd(c->ssl, c->fd) != 1) {
                LOG_ERROR("Cannot set up TLS for a connection", "remote=\"%s\"", c->remote);
        } else if (secure_conn_handshake(c, deadline) < 0) {
                /* as Go's "http: TLS handshake error from <addr>: <err>" */
                LOG_INFO(4, "TLS handshake error", "remote=\"%s\" err=\"%s\"", c->remote,
                         c->io_error);
                if (c->plain_http)
                        answer_plain_http(c);
        } else {
                serve(c, deadline);
                secure_conn_finish(c);
        }
        SSL_free(c->ssl);
        c->ssl = NULL;
        explicit_bzero(c->in, sizeof(c->in)); /* the head may carry a bearer token */

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
static void reap(struct secure_server *s)
{
        pthread_mutex_lock(&s->mu);
        struct secure_conn *done = s->done;
        s->done = NULL;
        pthread_mutex_unlock(&s->mu);
        while (done != NULL) {
                struct secure_conn *next = done->next;
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
static void start_conn(struct secure_server *s, int fd, const struct sockaddr_storage *ss)
{
        struct secure_conn *c = xcalloc(1, sizeof(*c));
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
        pthread_attr_setstacksize(&attr, SECURE_THREAD_STACK);
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
static bool accept_pending(struct secure_server *s)
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
                        LOG_WARN("Secure server accept failed", "err=\"%s\"", strerror(errno));
                        return false;
                }
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
        struct secure_server *s = arg;
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
                        LOG_ERROR("Secure server poll failed", "err=\"%s\"", strerror(errno));
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
static int check_lazy(const struct secure_server_options *o, ck_error_t *err)
{
        return secure_tls_check_options(o, err) < 0 ||
                       check_file("TLS certificate", o->cert_file, err) < 0 ||
                       check_file("TLS private key", o->key_file, err) < 0 ||
                       check_file("client CA file", o->client_ca_file, err) < 0
                   ? -1
                   : 0;
}

static void server_free(struct secure_server *s)
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

int secure_server_start(const struct secure_server_options *o, struct secure_server **out,
                        ck_error_t *err)
{
        struct secure_server *s = xcalloc(1, sizeof(*s));
        s->listen_fd = s->stop_fd = s->reap_fd = -1;
        s->handler = o->handler;
        s->ctx = o->ctx;
        s->request_timeout_ms =
            o->request_timeout_ms > 0 ? o->request_timeout_ms : SECURE_REQUEST_TIMEOUT_MS;
        s->max_conns = o->max_conns > 0 ? o->max_conns : SECURE_MAX_CONNS;
        atomic_init(&s->stopping, false);
        pthread_mutex_init(&s->mu, NULL);
        pthread_mutex_init(&s->tls_mu, NULL);
        pthread_cond_init(&s->cv, NULL);
        s->opts = *o;
        s->lazy_tls = o->lazy_tls;
        const char *addr = o->address && o->address[0] ? o->address : "0.0.0.0";

        int rc;
        if (o->lazy_tls)
                rc = check_lazy(o, err);
        else
                rc = secure_tls_new(o, &s->tls, err);
        if (rc == 0 &&
            server_listen_tcp(addr, o->port, SECURE_BACKLOG, &s->listen_fd, &s->port, err) < 0)
                rc = ck_error_wrap(err, "secure server on %s:%d", addr, o->port);
        if (rc == 0) {
                s->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
                s->reap_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
                if (s->stop_fd < 0 || s->reap_fd < 0)
                        rc = ck_error_make(err, errno, "secure server: eventfd");
        }
        if (rc == 0) {
                int e = pthread_create(&s->accept_thread, NULL, accept_thread, s);
                if (e != 0)
                        rc = ck_error_make(err, e, "secure server: start thread");
        }
        if (rc < 0) {
                server_free(s);
                return -1;
        }
        LOG_INFO(0, "Starting to listen", "address=\"%s\" port=%d", addr, s->port);
        *out = s;
        return 0;
}

int secure_server_port(struct secure_server *s)
{
        return s->port;
}

void secure_server_stop(struct secure_server *s)
{
        if (s == NULL)
                return;
        atomic_store(&s->stopping, true);
        poke(s->stop_fd);
        pthread_join(s->accept_thread, NULL);
        close(s->listen_fd);
        s->listen_fd = -1;

        pthread_mutex_lock(&s->mu);
        for (struct secure_conn *c = s->active; c != NULL; c = c->next)
                shutdown(c->fd, SHUT_RDWR);
        while (s->active != NULL || s->done != NULL) {
                if (s->done == NULL) {
                        pthread_cond_wait(&s->cv, &s->mu);
                        continue;
                }
                struct secure_conn *c = s->done;
                list_unlink(&s->done, c);
                pthread_mutex_unlock(&s->mu);
                pthread_join(c->thread, NULL);
                free(c);
                pthread_mutex_lock(&s->mu);
        }
        pthread_mutex_unlock(&s->mu);
        server_free(s);
}
