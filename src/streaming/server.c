/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The streaming server (streaming.h): the request cache behind the tokens,
 * as upstream's request_cache.go, and the HTTP side of server.go: the
 * routes, the protocol handshake and the SPDY upgrade.
 */
#include "grpc/grpc.h"
#include "server/httpd.h"
#include "streaming/streaming_internal.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>

/* upstream's CacheTTL and MaxInFlight */
#define STREAMING_TOKEN_TTL_MS 60000
#define STREAMING_MAX_IN_FLIGHT 1000
#define STREAMING_TOKEN_LEN 8

struct token {
        char token[STREAMING_TOKEN_LEN + 1];
        int64_t expires_ms;
        struct streaming_request *req;
        struct token *next;
};

struct streaming_server {
        struct streaming_runtime rt;
        struct httpd *httpd;
        char *base_url; /* "http://127.0.0.1:34567" */
        int creation_timeout_ms;
        int64_t idle_timeout_ms;
        pthread_mutex_t lock; /* guards tokens */
        struct token *tokens;
        size_t n_tokens;
};

void streaming_request_free(struct streaming_request *r)
{
        if (r == NULL)
                return;
        free(r->id);
        for (char **a = r->cmd; a && *a; a++)
                free(*a);
        free(r->cmd);
        free(r->ports);
        free(r);
}

/* ---- the request cache ---------------------------------------------------- */

/* Drops expired tokens; lock held. */
static void gc_locked(struct streaming_server *s, int64_t now)
{
        for (struct token **pp = &s->tokens; *pp;) {
                struct token *t = *pp;
                if (t->expires_ms > now) {
                        pp = &t->next;
                        continue;
                }
                *pp = t->next;
                streaming_request_free(t->req);
                free(t);
                s->n_tokens--;
        }
}

/* A token of 6 random bytes in URL-safe base64, as upstream's. */
static int new_token(char out[STREAMING_TOKEN_LEN + 1], ck_error_t *err)
{
        static const char alphabet[] =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        unsigned char b[6];
        size_t got = 0;
        while (got < sizeof(b)) {
                ssize_t r = getrandom(b + got, sizeof(b) - got, 0);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return ck_error_make_code(
                            err, GRPC_INTERNAL, "streaming token: getrandom: %s", strerror(errno));
                got += (size_t)r;
        }
        for (int i = 0; i < 2; i++) {
                uint32_t v = (uint32_t)b[3 * i] << 16 | (uint32_t)b[3 * i + 1] << 8 | b[3 * i + 2];
                for (int j = 0; j < 4; j++)
                        out[4 * i + j] = alphabet[v >> (18 - 6 * j) & 63];
        }
        out[STREAMING_TOKEN_LEN] = '\0';
        return 0;
}

/* Registers r (taken) and makes its URL. */
static int insert(struct streaming_server *s, struct streaming_request *r, const char *kind,
                  char **url, ck_error_t *err)
{
        struct token *t = xcalloc(1, sizeof(*t));
        if (new_token(t->token, err) < 0) {
                free(t);
                streaming_request_free(r);
                return -1;
        }
        int64_t now = fs_now_mono_ms();
        t->expires_ms = now + STREAMING_TOKEN_TTL_MS;
        t->req = r;
        pthread_mutex_lock(&s->lock);
        gc_locked(s, now);
        if (s->n_tokens >= STREAMING_MAX_IN_FLIGHT) {
                pthread_mutex_unlock(&s->lock);
                free(t);
                streaming_request_free(r);
                return ck_error_make_code(err, GRPC_RESOURCE_EXHAUSTED,
                                          "maximum number of in-flight requests exceeded");
        }
        t->next = s->tokens;
        s->tokens = t;
        s->n_tokens++;
        pthread_mutex_unlock(&s->lock);
        *url = xasprintf("%s/%s/%s", s->base_url, kind, t->token);
        return 0;
}

/* Takes the request of a token, once; NULL when unknown or expired. */
static struct streaming_request *consume(struct streaming_server *s, const char *token)
{
        struct streaming_request *r = NULL;
        int64_t now = fs_now_mono_ms();
        pthread_mutex_lock(&s->lock);
        for (struct token **pp = &s->tokens; *pp; pp = &(*pp)->next) {
                struct token *t = *pp;
                if (strcmp(t->token, token) != 0)
                        continue;
                *pp = t->next;
                s->n_tokens--;
                if (t->expires_ms > now)
                        r = t->req;
                else
                        streaming_request_free(t->req);
                free(t);
                break;
        }
        pthread_mutex_unlock(&s->lock);
        return r;
}

static int check_streams(bool tty, bool in, bool out, bool errs, ck_error_t *err)
{
        if (!in && !out && !errs)
                return ck_error_make_code(err, GRPC_INVALID_ARGUMENT,
                                          "one of stdin, stdout, or stderr must be set");
        if (tty && errs)
                return ck_error_make_code(err, GRPC_INVALID_ARGUMENT,
                                          "tty and stderr cannot both be true");
        return 0;
}

int streaming_get_exec(struct streaming_server *s, const char *container_id, char *const *cmd,
                       bool tty, bool in, bool out, bool errs, char **url, ck_error_t *err)
{
        *url = NULL;
        if (container_id == NULL || *container_id == '\0')
                return ck_error_make_code(err, GRPC_INVALID_ARGUMENT,
                                          "missing required container_id");
        if (cmd == NULL || cmd[0] == NULL)
                return ck_error_make_code(err, GRPC_INVALID_ARGUMENT, "missing required cmd");
        if (check_streams(tty, in, out, errs, err) < 0)
                return -1;
        struct streaming_request *r = xcalloc(1, sizeof(*r));
        size_t n = 0;
        while (cmd[n])
                n++;
        r->kind = STREAMING_EXEC;
        r->id = xstrdup(container_id);
        r->cmd = xcalloc(n + 1, sizeof(char *));
        for (size_t i = 0; i < n; i++)
                r->cmd[i] = xstrdup(cmd[i]);
        r->tty = tty;
        r->in = in;
        r->out = out;
        r->errs = errs;
        return insert(s, r, "exec", url, err);
}

int streaming_get_attach(struct streaming_server *s, const char *container_id, bool tty, bool in,
                         bool out, bool errs, char **url, ck_error_t *err)
{
        *url = NULL;
        if (container_id == NULL || *container_id == '\0')
                return ck_error_make_code(err, GRPC_INVALID_ARGUMENT,
                                          "missing required container_id");
        if (check_streams(tty, in, out, errs, err) < 0)
                return -1;
        struct streaming_request *r = xcalloc(1, sizeof(*r));
        r->kind = STREAMING_ATTACH;
        r->id = xstrdup(container_id);
        r->tty = tty;
        r->in = in;
        r->out = out;
        r->errs = errs;
        return insert(s, r, "attach", url, err);
}

int streaming_get_port_forward(struct streaming_server *s, const char *sandbox_id,
                               const int32_t *ports, size_t n_ports, char **url, ck_error_t *err)
{
        *url = NULL;
        if (sandbox_id == NULL || *sandbox_id == '\0')
                return ck_error_make_code(err, GRPC_INVALID_ARGUMENT,
                                          "missing required pod_sandbox_id");
        struct streaming_request *r = xcalloc(1, sizeof(*r));
        r->kind = STREAMING_PORT_FORWARD;
        r->id = xstrdup(sandbox_id);
        if (n_ports > 0) {
                r->ports = xcalloc(n_ports, sizeof(*r->ports));
                memcpy(r->ports, ports, n_ports * sizeof(*ports));
                r->n_ports = n_ports;
        }
        return insert(s, r, "portforward", url, err);
}

/* ---- HTTP ----------------------------------------------------------------- */

static void http_error(struct httpd_conn *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* As Go's http.Error: the message and a newline, as text. */
static void http_error(struct httpd_conn *c, int status, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        cleanup_free char *msg = xvasprintf(fmt, ap);
        va_end(ap);
        cleanup_free char *body = xasprintf("%s\n", msg);
        httpd_respond_with(c, status, "text/plain; charset=utf-8",
                           "X-Content-Type-Options: nosniff\r\n", body, strlen(body));
}

/* Does a header field of the request hold token (case-insensitive, as a
 * substring, as upstream's checks)? */
static bool header_has(const struct httpd_request *req, const char *name, const char *token)
{
        size_t pos = 0, len;
        const char *v;
        while (http_request_header_next(req->head, req->parsed, name, &pos, &v, &len)) {
                cleanup_free char *s = xstrndup(v, len);
                if (strcasestr(s, token))
                        return true;
        }
        return false;
}

/* upstream's httpstream.Handshake: the first protocol of the client's
 * that the server speaks; on failure the answer is sent and NULL
 * returned.  A new string. */
static char *handshake(const struct httpd_request *req, struct httpd_conn *c,
                       const char *const *server_protocols)
{
        const char *name = "X-Stream-Protocol-Version";
        size_t pos = 0, len;
        const char *v;
        char *client[32];
        size_t n = 0;
        bool present = false;
        while (http_request_header_next(req->head, req->parsed, name, &pos, &v, &len)) {
                present = true;
                cleanup_free char *s = xstrndup(v, len);
                char *save = NULL;
                for (char *tok = strtok_r(s, ",", &save); tok && n < 32;
                     tok = strtok_r(NULL, ",", &save)) {
                        while (*tok == ' ' || *tok == '\t')
                                tok++;
                        char *end = tok + strlen(tok);
                        while (end > tok && (end[-1] == ' ' || end[-1] == '\t'))
                                *--end = '\0';
                        if (*tok)
                                client[n++] = xstrdup(tok);
                }
        }
        char *chosen = NULL;
        for (size_t i = 0; i < n && chosen == NULL; i++)
                for (const char *const *p = server_protocols; *p; p++)
                        if (strcmp(client[i], *p) == 0) {
                                chosen = xstrdup(*p);
                                break;
                        }
        if (!present) {
                http_error(c, 400, "unable to upgrade: header %s does not exist in request", name);
        } else if (n == 0) {
                http_error(c, 400, "unable to upgrade: header %s contains no valid protocols",
                           name);
        } else if (chosen == NULL) {
                char accepted[512] = "";
                size_t o = 0;
                for (const char *const *p = server_protocols; *p; p++)
                        o += (size_t)snprintf(accepted + o, sizeof(accepted) - o,
                                              "X-Accepted-Stream-Protocol-Versions: %s\r\n", *p);
                cleanup_free char *body = xasprintf(
                    "unable to upgrade: unable to negotiate protocol: client supports [%s%s], "
                    "server accepts [%s]\n",
                    client[0], n > 1 ? " ..." : "", server_protocols[0]);
                httpd_respond_with(c, 403, "text/plain; charset=utf-8", accepted, body,
                                   strlen(body));
        }
        for (size_t i = 0; i < n; i++)
                free(client[i]);
        return chosen;
}

static const char *const rc_protocols[] = {RC_PROTOCOL_V4, RC_PROTOCOL_V3, RC_PROTOCOL_V2,
                                           RC_PROTOCOL_V1, NULL};
static const char *const pf_protocols[] = {PF_PROTOCOL_V1, NULL};

/* The WebSocket protocols of upstream's streaming server (wsstream's
 * channel protocols; v5, with its close signal, as the apiserver speaks
 * it), "" being a client that names none. */
static const char *const rc_ws_protocols[] = {RC_PROTOCOL_V5,
                                              RC_PROTOCOL_V4,
                                              "v4.base64.channel.k8s.io",
                                              RC_PROTOCOL_V1,
                                              "base64.channel.k8s.io",
                                              "",
                                              NULL};
static const char *const pf_ws_protocols[] = {RC_PROTOCOL_V4, "v4.base64.channel.k8s.io", "", NULL};

/* The first protocol of the client's Sec-WebSocket-Protocol list that the
 * server speaks ("" when it names none and "" is allowed), as wsstream's
 * handshake; NULL when none.  A new string. */
static char *ws_protocol(const struct httpd_request *req, const char *const *server)
{
        size_t pos = 0, len;
        const char *v;
        bool named = false;
        char *chosen = NULL;
        while (chosen == NULL &&
               http_request_header_next(req->head, req->parsed, "Sec-WebSocket-Protocol", &pos, &v,
                                        &len)) {
                cleanup_free char *list = xstrndup(v, len);
                char *save = NULL;
                for (char *tok = strtok_r(list, ",", &save); tok && chosen == NULL;
                     tok = strtok_r(NULL, ",", &save)) {
                        tok += strspn(tok, " \t");
                        char *end = tok + strlen(tok);
                        while (end > tok && (end[-1] == ' ' || end[-1] == '\t'))
                                *--end = '\0';
                        if (*tok == '\0')
                                continue;
                        named = true;
                        for (const char *const *p = server; *p; p++)
                                if (**p && strcmp(tok, *p) == 0)
                                        chosen = xstrdup(*p);
                }
        }
        if (!named)
                return xstrdup("");
        return chosen;
}

/* A WebSocket upgrade (RFC 6455 section 4.2) and its session. */
static void serve_ws(struct streaming_server *s, const struct httpd_request *req,
                     struct httpd_conn *c, const struct streaming_request *r)
{
        const char *v;
        size_t len;
        cleanup_free char *key =
            http_request_header(req->head, req->parsed, "Sec-WebSocket-Key", &v, &len)
                ? xstrndup(v, len)
                : NULL;
        cleanup_free char *version =
            http_request_header(req->head, req->parsed, "Sec-WebSocket-Version", &v, &len)
                ? xstrndup(v, len)
                : NULL;
        if (strcmp(req->method, "GET") != 0) {
                http_error(c, 405, "unable to upgrade: a WebSocket upgrade must be a GET");
                return;
        }
        if (version == NULL || strcmp(version, "13") != 0) {
                const char *body = "unable to upgrade: unsupported WebSocket version\n";
                httpd_respond_with(c, 400, "text/plain; charset=utf-8",
                                   "Sec-WebSocket-Version: 13\r\n", body, strlen(body));
                return;
        }
        if (key == NULL || *key == '\0' || !req->upgrade) {
                http_error(c, 400, "unable to upgrade: missing upgrade headers in request");
                return;
        }
        const char *const *server =
            r->kind == STREAMING_PORT_FORWARD ? pf_ws_protocols : rc_ws_protocols;
        cleanup_free char *protocol = ws_protocol(req, server);
        if (protocol == NULL) {
                http_error(c, 403, "unable to upgrade: requested protocol(s) are not supported");
                return;
        }
        cleanup_free char *accept = ws_accept_key(key);
        const char *pending = NULL;
        size_t pending_len = 0;
        if (accept == NULL || httpd_hijack(c, &pending, &pending_len) < 0)
                return;
        int fd = httpd_raw_fd(c);
        cleanup_free char *proto_line =
            *protocol ? xasprintf("Sec-WebSocket-Protocol: %s\r\n", protocol) : xstrdup("");
        cleanup_free char *head = xasprintf("HTTP/1.1 101 Switching Protocols\r\n"
                                            "Upgrade: websocket\r\n"
                                            "Connection: Upgrade\r\n"
                                            "Sec-WebSocket-Accept: %s\r\n%s\r\n",
                                            accept, proto_line);
        if (httpd_raw_write(c, head, strlen(head)) < 0)
                return;
        struct ws_conn conn;
        cleanup_error ck_error_t err = NULL;
        bool base64 = strstr(protocol, "base64.") != NULL;
        if (ws_conn_init(&conn, fd, pending, pending_len, base64, s->idle_timeout_ms, &err) < 0) {
                LOG_ERROR("Streaming session failed", "err=\"%s\"", ck_error_msg(err));
                return;
        }
        if (r->kind == STREAMING_PORT_FORWARD)
                pf_serve_ws(&s->rt, r, &conn);
        else
                rc_serve_ws(&s->rt, r, &conn, protocol);
        ws_conn_clear(&conn);
}

/* The upgrade and the session on the connection. */
static void serve(struct streaming_server *s, const struct httpd_request *req, struct httpd_conn *c,
                  const struct streaming_request *r)
{
        if (header_has(req, "Upgrade", "websocket")) {
                serve_ws(s, req, c, r);
                return;
        }
        cleanup_free char *protocol =
            handshake(req, c, r->kind == STREAMING_PORT_FORWARD ? pf_protocols : rc_protocols);
        if (protocol == NULL)
                return;
        if (!req->upgrade || !header_has(req, "Upgrade", "spdy/3.1")) {
                http_error(c, 400, "unable to upgrade: missing upgrade headers in request");
                return;
        }
        const char *pending = NULL;
        size_t pending_len = 0;
        if (httpd_hijack(c, &pending, &pending_len) < 0)
                return;
        int fd = httpd_raw_fd(c);
        cleanup_free char *head = xasprintf("HTTP/1.1 101 Switching Protocols\r\n"
                                            "Connection: Upgrade\r\n"
                                            "Upgrade: SPDY/3.1\r\n"
                                            "X-Stream-Protocol-Version: %s\r\n\r\n",
                                            protocol);
        if (httpd_raw_write(c, head, strlen(head)) < 0)
                return;
        struct spdy_conn conn;
        cleanup_error ck_error_t err = NULL;
        if (spdy_conn_init(&conn, fd, pending, pending_len, s->idle_timeout_ms, &err) < 0) {
                LOG_ERROR("Streaming session failed", "err=\"%s\"", ck_error_msg(err));
                return;
        }
        if (r->kind == STREAMING_PORT_FORWARD)
                pf_serve(&s->rt, r, &conn);
        else
                rc_serve(&s->rt, r, &conn, protocol, s->creation_timeout_ms);
        spdy_conn_clear(&conn);
}

static void handle(void *ctx, const struct httpd_request *req, struct httpd_conn *c)
{
        struct streaming_server *s = ctx;
        static const struct {
                const char *prefix;
                enum streaming_kind kind;
        } routes[] = {
            {"/exec/", STREAMING_EXEC},
            {"/attach/", STREAMING_ATTACH},
            {"/portforward/", STREAMING_PORT_FORWARD},
        };
        if (strcmp(req->method, "GET") != 0 && strcmp(req->method, "POST") != 0) {
                http_error(c, 405, "Method Not Allowed");
                return;
        }
        for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
                size_t n = strlen(routes[i].prefix);
                if (strncmp(req->path, routes[i].prefix, n) != 0 || strchr(req->path + n, '/'))
                        continue;
                struct streaming_request *r = consume(s, req->path + n);
                if (r == NULL || r->kind != routes[i].kind) {
                        streaming_request_free(r);
                        break;
                }
                serve(s, req, c, r);
                streaming_request_free(r);
                return;
        }
        http_error(c, 404, "404 page not found");
}

int streaming_server_start(const struct streaming_options *o, const struct streaming_runtime *rt,
                           struct streaming_server **out, ck_error_t *err)
{
        *out = NULL;
        struct streaming_server *s = xcalloc(1, sizeof(*s));
        s->rt = *rt;
        s->creation_timeout_ms =
            o->stream_creation_timeout_ms > 0 ? o->stream_creation_timeout_ms : 30000;
        s->idle_timeout_ms =
            o->stream_idle_timeout_ms > 0 ? o->stream_idle_timeout_ms : 4 * 3600 * 1000LL;
        pthread_mutex_init(&s->lock, NULL);
        const char *address = o->address && *o->address ? o->address : "127.0.0.1";
        struct httpd_options ho = {
            .name = "streaming server",
            .address = address,
            .port = o->port,
            .handler = handle,
            .ctx = s,
        };
        if (httpd_start(&ho, &s->httpd, err) < 0) {
                pthread_mutex_destroy(&s->lock);
                free(s);
                return ck_error_wrap(err, "start the streaming server on %s:%d", address, o->port);
        }
        bool v6 = strchr(address, ':') != NULL && address[0] != '[';
        s->base_url = xasprintf("http://%s%s%s:%d", v6 ? "[" : "", address, v6 ? "]" : "",
                                httpd_port(s->httpd));
        *out = s;
        return 0;
}

int streaming_server_port(struct streaming_server *s)
{
        return httpd_port(s->httpd);
}

void streaming_server_stop(struct streaming_server *s)
{
        if (s == NULL)
                return;
        httpd_stop(s->httpd);
        pthread_mutex_lock(&s->lock);
        gc_locked(s, INT64_MAX);
        pthread_mutex_unlock(&s->lock);
        pthread_mutex_destroy(&s->lock);
        free(s->base_url);
        free(s);
}
