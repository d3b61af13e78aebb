/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The REST client: one HTTP/1.1 client (http/http_client.h: one connection
 * kept alive between requests) per REST client, with the config's shared
 * TLS context or one of its own made from the config's PEM material; the
 * response read whole or streamed to a callback.
 */
#include "client/rest.h"
#include "client/rest_internal.h"
#include "http/http_client.h"
#include "metrics/kubelet_metrics.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The largest answer read whole (a list of every pod of a big cluster fits). */
#define REST_MAX_BODY (256u << 20)
/* As client-go's dialer: 30 s to connect, TCP keep-alive every 30 s. */
#define REST_CONNECT_TIMEOUT_MS 30000L
#define REST_KEEPALIVE_S 30
#define REST_READ_CHUNK (16 * 1024)

#if defined(__x86_64__)
#define REST_ARCH "amd64"
#elif defined(__aarch64__)
#define REST_ARCH "arm64"
#elif defined(__arm__)
#define REST_ARCH "arm"
#elif defined(__s390x__)
#define REST_ARCH "s390x"
#elif defined(__powerpc64__)
#define REST_ARCH "ppc64le"
#else
#define REST_ARCH "unknown"
#endif

struct rest_client {
        struct http_client *http;
        SSL_CTX *tls;                /* NULL for an http:// server */
        char *host_header;           /* host:port of the server URL */
        char *url_host;              /* the URL's host part as written (the metric's host) */
        char *prefix;                /* the server URL's path, "" or "/prefix" */
        char *auth_value;            /* "Bearer ..." (secret) or NULL */
        struct rest_ratelimiter *rl; /* borrowed */
        const atomic_bool *stop;     /* borrowed */
        long timeout_ms;
};

const char *rest_user_agent(void)
{
        return "kubelet/v1.35.0 (linux/" REST_ARCH ") ckubelet";
}

/* rest_client_requests_total{code,method,host}: host as client-go's URL.Host */
static void record_request(const struct rest_client *c, const char *method, int code)
{
        kmetrics_rest_request(code, method, c->url_host);
}

/* The authority of a URL as written ("host:port"). */
static char *authority_of(const char *url)
{
        const char *h = strstr(url, "://");
        h = h ? h + 3 : url;
        return xstrndup(h, strcspn(h, "/?#"));
}

/* A TLS context from cfg's material. */
static int make_tls(const struct rest_config *cfg, SSL_CTX **out, ck_error_t *err)
{
        struct http_tls_config tc = {
            .ca_pem = cfg->ca_pem,
            .ca_len = cfg->ca_len,
            .cert_pem = cfg->cert_pem,
            .cert_len = cfg->cert_len,
            .key_pem = cfg->key_pem,
            .key_len = cfg->key_len,
            .insecure = cfg->insecure,
        };
        if (http_tls_client_ctx(&tc, out, err) < 0)
                return ck_error_wrap(err, "REST client for %s", cfg->server);
        return 0;
}

int rest_config_share_tls(struct rest_config *cfg, ck_error_t *err)
{
        if (cfg->tls != NULL)
                return 0;
        if (cfg->server == NULL)
                return ck_error_make(err, 0, "REST client: no server");
        struct http_url u;
        if (http_url_parse(cfg->server, &u, err) < 0)
                return ck_error_wrap(err, "REST client for %s", cfg->server);
        int rc = strcmp(u.scheme, "https") == 0 ? make_tls(cfg, &cfg->tls, err) : 0;
        http_url_clear(&u);
        return rc;
}

int rest_client_new(const struct rest_config *cfg, struct rest_ratelimiter *rl,
                    struct rest_client **out, ck_error_t *err)
{
        if (cfg->server == NULL)
                return ck_error_make(err, 0, "REST client: no server");
        struct http_url u;
        if (http_url_parse(cfg->server, &u, err) < 0)
                return ck_error_wrap(err, "REST client for %s", cfg->server);
        struct rest_client *c = xcalloc(1, sizeof(*c));
        c->rl = rl;
        c->timeout_ms = REST_DEFAULT_TIMEOUT_MS;
        if (strcmp(u.scheme, "https") == 0) {
                if (cfg->tls != NULL && SSL_CTX_up_ref(cfg->tls) == 1) {
                        c->tls = cfg->tls;
                } else if (make_tls(cfg, &c->tls, err) < 0) {
                        http_url_clear(&u);
                        rest_client_free(c);
                        return -1;
                }
        }
        struct http_client_options o = {
            .tls = c->tls,
            .tls_name = cfg->tls_server_name,
            .keep_alive = true,
            .tcp_keepalive_s = REST_KEEPALIVE_S,
            .connect_timeout_ms = REST_CONNECT_TIMEOUT_MS,
        };
        c->http = http_client_new(u.host, u.port, &o);
        c->host_header = xstrdup(u.authority);
        c->url_host = authority_of(cfg->server);
        size_t pn = strcspn(u.target, "?");
        while (pn > 0 && u.target[pn - 1] == '/')
                pn--;
        c->prefix = xstrndup(u.target, pn);
        if (cfg->token)
                c->auth_value = xasprintf("Bearer %s", cfg->token);
        http_url_clear(&u);
        *out = c;
        return 0;
}

void rest_client_free(struct rest_client *c)
{
        if (c == NULL)
                return;
        http_client_free(c->http);
        SSL_CTX_free(c->tls);
        if (c->auth_value) {
                explicit_bzero(c->auth_value, strlen(c->auth_value));
                free(c->auth_value);
        }
        free(c->host_header);
        free(c->url_host);
        free(c->prefix);
        free(c);
}

void rest_client_set_timeout(struct rest_client *c, long timeout_ms)
{
        c->timeout_ms = timeout_ms;
}

void rest_client_set_stop(struct rest_client *c, const atomic_bool *stop)
{
        c->stop = stop;
}

/* An HTTP client's failure as this client's error: code by enum
 * rest_error_code, the message prefixed with what. */
static int transport_error(ck_error_t *err, ck_error_t *herr, const char *what)
{
        int code = (*herr)->code == HTTP_ERR_CONNECT   ? REST_ERR_CONNECT
                   : (*herr)->code == HTTP_ERR_STOPPED ? REST_ERR_STOPPED
                                                       : REST_ERR_TRANSPORT;
        ck_error_make_code(err, code, "%s: %s", what, ck_error_msg(*herr));
        ck_error_release(herr);
        return -1;
}

/* Performs one request; on return *status is the HTTP status (or 0).  A
 * 2xx body goes to fn when fn is not NULL, else (and any other body) into
 * *body / *body_len. */
static int perform(struct rest_client *c, const char *method, const char *path, const char *query,
                   const char *content_type, const char *body, size_t body_len, long timeout_ms,
                   rest_stream_fn fn, void *opaque, char **rbody, size_t *rlen, long *status,
                   ck_error_t *err)
{
        *status = 0;
        cleanup_free char *what = xasprintf("%s %s", method, path);
        if (path[0] != '/')
                return ck_error_make(err, 0, "%s: the path must be absolute", what);
        cleanup_free char *target =
            xasprintf("%s%s%s%s", c->prefix, path, query && *query ? "?" : "", query ? query : "");
        struct http_field headers[4];
        size_t nh = 0;
        headers[nh++] = (struct http_field){"Accept", "application/json"};
        headers[nh++] = (struct http_field){"User-Agent", rest_user_agent()};
        if (c->auth_value)
                headers[nh++] = (struct http_field){"Authorization", c->auth_value};
        if (body)
                headers[nh++] = (struct http_field){"Content-Type", content_type};
        struct http_request_spec req = {
            .method = method,
            .target = target,
            .host = c->host_header,
            .headers = headers,
            .n_headers = nh,
            .body = body,
            .body_len = body_len,
            .gzip = true, /* as Go's transport: big lists come compressed */
        };
        int64_t deadline = timeout_ms > 0 ? fs_now_mono_ms() + timeout_ms : 0;
        http_client_set_stop(c->http, c->stop);

        rest_ratelimiter_accept(c->rl);
        ck_error_t herr = NULL;
        struct http_answer a;
        if (http_client_send(c->http, &req, deadline, &a, &herr) < 0) {
                record_request(c, method, 0);
                return transport_error(err, &herr, what);
        }
        *status = a.status;
        record_request(c, method, a.status);
        bool ok = a.status >= 200 && a.status < 300;
        char *buf = NULL;
        size_t len = 0, cap = 0;
        int rc = 0;
        for (;;) {
                if (cap - len < REST_READ_CHUNK + 1) {
                        cap = cap ? cap * 2 : REST_READ_CHUNK * 2;
                        buf = xrealloc(buf, cap);
                }
                ssize_t n = http_client_read(c->http, buf + len, REST_READ_CHUNK, deadline, &herr);
                if (n < 0) {
                        rc = transport_error(err, &herr, what);
                        break;
                }
                if (n == 0)
                        break;
                if (ok && fn) {
                        ck_error_t ferr = NULL;
                        if (fn(opaque, buf, (size_t)n, &ferr) < 0) {
                                rc = -1;
                                if (err == NULL) {
                                        ck_error_release(&ferr);
                                } else {
                                        *err = ferr;
                                        ck_error_wrap(err, "%s", what);
                                }
                                break;
                        }
                        continue; /* the next piece goes to the start again */
                }
                len += (size_t)n;
                if (len > REST_MAX_BODY) {
                        rc = ck_error_make_code(err, REST_ERR_TRANSPORT,
                                                "%s: answer larger than %u bytes", what,
                                                REST_MAX_BODY);
                        break;
                }
        }
        http_client_end(c->http);
        http_answer_clear(&a);
        if (buf)
                buf[len] = '\0';
        if (rc == 0 && !ok)
                rc = rest_answer_error(err, what, *status, buf, len);
        *rbody = buf;
        *rlen = len;
        return rc;
}

int rest_request(struct rest_client *c, const char *method, const char *path, const char *query,
                 const char *content_type, const char *body, size_t body_len, json_t **out,
                 ck_error_t *err)
{
        cleanup_free char *buf = NULL;
        size_t len = 0;
        long status = 0;
        if (out)
                *out = NULL;
        int rc = perform(c, method, path, query, content_type, body, body_len, c->timeout_ms, NULL,
                         NULL, &buf, &len, &status, err);
        if (rc == 0 && out && len > 0) {
                json_error_t jerr;
                *out = json_loadb(buf, len, 0, &jerr);
                if (*out == NULL)
                        rc = ck_error_make_code(err, REST_ERR_DECODE, "%s %s: decode answer: %s",
                                                method, path, jerr.text);
        }
        return rc < 0 ? -1 : (int)status;
}

int rest_stream(struct rest_client *c, const char *path, const char *query, long timeout_ms,
                rest_stream_fn fn, void *opaque, ck_error_t *err)
{
        cleanup_free char *buf = NULL;
        size_t len = 0;
        long status = 0;
        int rc = perform(c, "GET", path, query, NULL, NULL, 0, timeout_ms, fn, opaque, &buf, &len,
                         &status, err);
        return rc < 0 ? -1 : (int)status;
}

static int send_json(struct rest_client *c, const char *method, const char *path, const char *query,
                     const char *content_type, const json_t *obj, json_t **out, ck_error_t *err)
{
        cleanup_free char *body = NULL;
        if (obj) {
                body = json_dumps(obj, JSON_COMPACT | JSON_ENCODE_ANY);
                if (body == NULL)
                        return ck_error_make(err, 0, "%s %s: cannot encode the body", method, path);
        }
        return rest_request(c, method, path, query, content_type, body, body ? strlen(body) : 0,
                            out, err);
}

int rest_get(struct rest_client *c, const char *path, const char *query, json_t **out,
             ck_error_t *err)
{
        return rest_request(c, "GET", path, query, NULL, NULL, 0, out, err);
}

int rest_post(struct rest_client *c, const char *path, const json_t *obj, json_t **out,
              ck_error_t *err)
{
        return send_json(c, "POST", path, NULL, "application/json", obj, out, err);
}

int rest_put(struct rest_client *c, const char *path, const json_t *obj, json_t **out,
             ck_error_t *err)
{
        return send_json(c, "PUT", path, NULL, "application/json", obj, out, err);
}

int rest_patch(struct rest_client *c, const char *path, const char *query,
               enum rest_patch_type type, const json_t *patch, json_t **out, ck_error_t *err)
{
        static const char *const types[] = {
            [REST_PATCH_STRATEGIC] = "application/strategic-merge-patch+json",
            [REST_PATCH_MERGE] = "application/merge-patch+json",
            [REST_PATCH_JSON] = "application/json-patch+json",
            [REST_PATCH_APPLY] = "application/apply-patch+yaml",
        };
        if ((unsigned)type >= ARRAY_SIZE(types))
                return ck_error_make(err, 0, "PATCH %s: unknown patch type %d", path, (int)type);
        return send_json(c, "PATCH", path, query, types[type], patch, out, err);
}

int rest_delete(struct rest_client *c, const char *path, const json_t *options, json_t **out,
                ck_error_t *err)
{
        return send_json(c, "DELETE", path, NULL, "application/json", options, out, err);
}
