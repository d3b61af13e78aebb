/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The REST client: one libcurl easy handle (one kept-alive connection) per
 * client, TLS material handed to libcurl from memory (the *_BLOB options,
 * libcurl >= 7.77 with OpenSSL), the response collected whole or streamed
 * to a callback.
 */
#include "client/rest.h"
#include "client/rest_internal.h"
#include "metrics/kubelet_metrics.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The largest answer read whole (a list of every pod of a big cluster fits). */
#define REST_MAX_BODY (256u << 20)
/* As client-go's dialer: 30 s to connect, TCP keep-alive every 30 s. */
#define REST_CONNECT_TIMEOUT_MS 30000L
#define REST_KEEPALIVE_S 30L

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
        CURL *curl;
        char *base_url;    /* scheme://host:port[/prefix] requests go to */
        char *auth_header; /* "Authorization: Bearer ..." (secret) or NULL */
        struct curl_slist *connect_to;
        struct rest_ratelimiter *rl; /* borrowed */
        const atomic_bool *stop;     /* borrowed */
        long timeout_ms;
        char errbuf[CURL_ERROR_SIZE];
};

/* One transfer's state, seen by the callbacks. */
struct xfer {
        struct rest_client *c;
        char *buf; /* the body read whole (all of it, or a failed stream's) */
        size_t len, cap;
        bool too_big;
        rest_stream_fn fn; /* streaming: 2xx bodies go here */
        void *opaque;
        ck_error_t fn_err;
};

const char *rest_user_agent(void)
{
        return "kubelet/v1.35.0 (linux/" REST_ARCH ") ckubelet";
}

/* rest_client_requests_total{code,method,host}: host as client-go's URL.Host */
static void record_request(const struct rest_client *c, const char *method, int code)
{
        const char *h = strstr(c->base_url, "://");
        h = h ? h + 3 : c->base_url;
        size_t n = strcspn(h, "/");
        char host[256];
        snprintf(host, sizeof(host), "%.*s", (int)(n < sizeof(host) ? n : sizeof(host) - 1), h);
        kmetrics_rest_request(code, method, host);
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;
static void curl_init(void)
{
        curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static size_t on_write(char *ptr, size_t size, size_t nmemb, void *ud)
{
        struct xfer *x = ud;
        size_t n = size * nmemb;
        if (x->fn) {
                long status = 0;
                curl_easy_getinfo(x->c->curl, CURLINFO_RESPONSE_CODE, &status);
                if (status >= 200 && status < 300)
                        return x->fn(x->opaque, ptr, n, &x->fn_err) < 0 ? 0 : n;
        }
        if (x->len + n > REST_MAX_BODY) {
                x->too_big = true;
                return 0;
        }
        if (x->len + n + 1 > x->cap) {
                x->cap = (x->len + n + 1) * 2;
                x->buf = xrealloc(x->buf, x->cap);
        }
        memcpy(x->buf + x->len, ptr, n);
        x->len += n;
        x->buf[x->len] = '\0';
        return n;
}

static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
        (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
        struct xfer *x = ud;
        return x->c->stop && atomic_load(x->c->stop) ? 1 : 0;
}

/* Everything about the connection; set once, kept across requests. */
static int setup_handle(struct rest_client *c, const struct rest_config *cfg, ck_error_t *err)
{
        CURL *h = c->curl;
        int bad = 0;
#define SET(opt, val) bad |= curl_easy_setopt(h, opt, val) != CURLE_OK
        SET(CURLOPT_NOSIGNAL, 1L);
        SET(CURLOPT_NOPROXY, "*");
        SET(CURLOPT_PROTOCOLS_STR, "http,https");
        SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
        SET(CURLOPT_USERAGENT, rest_user_agent());
        SET(CURLOPT_ACCEPT_ENCODING, ""); /* gzip for big lists, as Go's transport */
        SET(CURLOPT_CONNECTTIMEOUT_MS, REST_CONNECT_TIMEOUT_MS);
        SET(CURLOPT_TCP_KEEPALIVE, 1L);
        SET(CURLOPT_TCP_KEEPIDLE, REST_KEEPALIVE_S);
        SET(CURLOPT_TCP_KEEPINTVL, REST_KEEPALIVE_S);
        SET(CURLOPT_ERRORBUFFER, c->errbuf);
        SET(CURLOPT_WRITEFUNCTION, on_write);
        SET(CURLOPT_XFERINFOFUNCTION, on_progress);
        SET(CURLOPT_NOPROGRESS, 0L);
        SET(CURLOPT_SSL_VERIFYPEER, cfg->insecure ? 0L : 1L);
        SET(CURLOPT_SSL_VERIFYHOST, cfg->insecure ? 0L : 2L);
        if (cfg->ca_pem) {
                struct curl_blob ca = {cfg->ca_pem, cfg->ca_len, CURL_BLOB_COPY};
                SET(CURLOPT_CAINFO_BLOB, &ca);
                /* only this CA: not the system bundle libcurl loads by default */
                SET(CURLOPT_CAINFO, NULL);
                SET(CURLOPT_CAPATH, NULL);
        }
        if (cfg->cert_pem) {
                struct curl_blob cert = {cfg->cert_pem, cfg->cert_len, CURL_BLOB_COPY};
                struct curl_blob key = {cfg->key_pem, cfg->key_len, CURL_BLOB_COPY};
                SET(CURLOPT_SSLCERT_BLOB, &cert);
                SET(CURLOPT_SSLCERTTYPE, "PEM");
                SET(CURLOPT_SSLKEY_BLOB, &key);
                SET(CURLOPT_SSLKEYTYPE, "PEM");
        }
        if (c->connect_to)
                SET(CURLOPT_CONNECT_TO, c->connect_to);
#undef SET
        if (bad)
                return ck_error_make(err, 0,
                                     "libcurl %s lacks an option this client needs "
                                     "(in-memory TLS material needs >= 7.77 with OpenSSL)",
                                     curl_version_info(CURLVERSION_NOW)->version);
        return 0;
}

/* With tls-server-name, requests name that host (so that TLS sends and
 * verifies it) and libcurl connects to the configured server instead.  The
 * Host header then carries the TLS name too; the apiserver ignores it. */
static int resolve_base_url(struct rest_client *c, const struct rest_config *cfg, ck_error_t *err)
{
        if (cfg->tls_server_name == NULL) {
                c->base_url = xstrdup(cfg->server);
                return 0;
        }
        CURLU *u = curl_url();
        char *scheme = NULL, *host = NULL, *port = NULL, *path = NULL;
        int rc = 0;
        if (u == NULL || curl_url_set(u, CURLUPART_URL, cfg->server, 0) != CURLUE_OK ||
            curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
            curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
            curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK ||
            curl_url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK) {
                rc = ck_error_make(err, 0, "server `%s`: not a URL", cfg->server);
        } else {
                const char *prefix = strcmp(path, "/") == 0 ? "" : path;
                c->base_url = xasprintf("%s://%s:%s%s", scheme, cfg->tls_server_name, port, prefix);
                cleanup_free char *entry =
                    xasprintf("%s:%s:%s:%s", cfg->tls_server_name, port, host, port);
                c->connect_to = curl_slist_append(NULL, entry);
        }
        curl_free(scheme);
        curl_free(host);
        curl_free(port);
        curl_free(path);
        curl_url_cleanup(u);
        return rc;
}

int rest_client_new(const struct rest_config *cfg, struct rest_ratelimiter *rl,
                    struct rest_client **out, ck_error_t *err)
{
        pthread_once(&curl_once, curl_init);
        if (curl_init_rc != CURLE_OK)
                return ck_error_make(err, 0, "libcurl init: %s", curl_easy_strerror(curl_init_rc));
        if (cfg->server == NULL)
                return ck_error_make(err, 0, "REST client: no server");
        struct rest_client *c = xcalloc(1, sizeof(*c));
        c->rl = rl;
        c->timeout_ms = REST_DEFAULT_TIMEOUT_MS;
        c->curl = curl_easy_init();
        if (c->curl == NULL) {
                free(c);
                return ck_error_make(err, 0, "libcurl: cannot create a handle");
        }
        if (cfg->token)
                c->auth_header = xasprintf("Authorization: Bearer %s", cfg->token);
        if (resolve_base_url(c, cfg, err) < 0 || setup_handle(c, cfg, err) < 0) {
                rest_client_free(c);
                return ck_error_wrap(err, "REST client for %s", cfg->server);
        }
        *out = c;
        return 0;
}

void rest_client_free(struct rest_client *c)
{
        if (c == NULL)
                return;
        curl_easy_cleanup(c->curl);
        curl_slist_free_all(c->connect_to);
        if (c->auth_header) {
                explicit_bzero(c->auth_header, strlen(c->auth_header));
                free(c->auth_header);
        }
        free(c->base_url);
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

static int transport_error(ck_error_t *err, struct rest_client *c, CURLcode rc, const char *what)
{
        const char *msg = c->errbuf[0] ? c->errbuf : curl_easy_strerror(rc);
        if (rc == CURLE_ABORTED_BY_CALLBACK)
                return ck_error_make_code(err, REST_ERR_STOPPED, "%s: stopped", what);
        if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST)
                return ck_error_make_code(err, REST_ERR_CONNECT, "%s: %s", what, msg);
        return ck_error_make_code(err, REST_ERR_TRANSPORT, "%s: %s", what, msg);
}

/* Frees request headers, wiping them first: one may hold the token. */
static void free_headers(struct curl_slist *headers)
{
        for (struct curl_slist *h = headers; h; h = h->next)
                explicit_bzero(h->data, strlen(h->data));
        curl_slist_free_all(headers);
}

/* Performs one request; on return *status is the HTTP status (or 0) and
 * x->buf holds the body unless it was streamed. */
static int perform(struct rest_client *c, const char *method, const char *path, const char *query,
                   const char *content_type, const char *body, size_t body_len, long timeout_ms,
                   struct xfer *x, long *status, ck_error_t *err)
{
        cleanup_free char *what = xasprintf("%s %s", method, path);
        if (path[0] != '/')
                return ck_error_make(err, 0, "%s: the path must be absolute", what);
        cleanup_free char *url = xasprintf("%s%s%s%s", c->base_url, path,
                                           query && *query ? "?" : "", query ? query : "");
        struct curl_slist *headers = curl_slist_append(NULL, "Accept: application/json");
        headers = curl_slist_append(headers, "Expect:"); /* no 100-continue round trip */
        if (c->auth_header)
                headers = curl_slist_append(headers, c->auth_header);
        cleanup_free char *ctype = NULL;
        if (body) {
                ctype = xasprintf("Content-Type: %s", content_type);
                headers = curl_slist_append(headers, ctype);
        }
        CURL *h = c->curl;
        curl_easy_setopt(h, CURLOPT_URL, url);
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L); /* resets the previous request's body */
        if (body) {
                curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
                curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        }
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, strcmp(method, "GET") ? method : NULL);
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
        curl_easy_setopt(h, CURLOPT_XFERINFODATA, x);
        c->errbuf[0] = '\0';

        rest_ratelimiter_accept(c->rl);
        CURLcode rc = curl_easy_perform(h);
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
        free_headers(headers);
        *status = 0;
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
        record_request(c, method, rc == CURLE_OK || *status > 0 ? (int)*status : 0);
        if (rc == CURLE_WRITE_ERROR && x->fn_err) {
                if (err == NULL)
                        return -1; /* rest_stream releases fn_err */
                ck_error_release(err);
                *err = x->fn_err;
                x->fn_err = NULL;
                return ck_error_wrap(err, "%s", what);
        }
        if (rc == CURLE_WRITE_ERROR && x->too_big)
                return ck_error_make_code(err, REST_ERR_TRANSPORT,
                                          "%s: answer larger than %u bytes", what, REST_MAX_BODY);
        if (rc != CURLE_OK)
                return transport_error(err, c, rc, what);
        if (*status < 200 || *status >= 300)
                return rest_answer_error(err, what, *status, x->buf, x->len);
        return 0;
}

int rest_request(struct rest_client *c, const char *method, const char *path, const char *query,
                 const char *content_type, const char *body, size_t body_len, json_t **out,
                 ck_error_t *err)
{
        struct xfer x = {.c = c};
        long status = 0;
        if (out)
                *out = NULL;
        int rc = perform(c, method, path, query, content_type, body, body_len, c->timeout_ms, &x,
                         &status, err);
        if (rc == 0 && out && x.len > 0) {
                json_error_t jerr;
                *out = json_loadb(x.buf, x.len, 0, &jerr);
                if (*out == NULL)
                        rc = ck_error_make_code(err, REST_ERR_DECODE, "%s %s: decode answer: %s",
                                                method, path, jerr.text);
        }
        free(x.buf);
        return rc < 0 ? -1 : (int)status;
}

int rest_stream(struct rest_client *c, const char *path, const char *query, long timeout_ms,
                rest_stream_fn fn, void *opaque, ck_error_t *err)
{
        struct xfer x = {.c = c, .fn = fn, .opaque = opaque};
        long status = 0;
        int rc = perform(c, "GET", path, query, NULL, NULL, 0, timeout_ms, &x, &status, err);
        free(x.buf);
        ck_error_release(&x.fn_err);
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
