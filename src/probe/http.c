/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The httpGet action (upstream pkg/probe/http): a GET of
 * scheme://host:port/path with the project's HTTP client (http/http_client.h).
 *
 *   - host: the handler's host, else the pod IP; a Host header in the
 *     handler's headers is honoured; User-Agent "kube-probe/1.35" and
 *     Accept "* / *" unless the handler sets them (an empty Accept removes it);
 *   - one connection per probe (no keep-alive), never through a proxy, no
 *     cookies, HTTP/1.1, HTTPS without certificate verification;
 *   - the timeout covers the whole probe, redirects included;
 *   - redirects are followed only to the same host, at most 10; a redirect
 *     to another host ends the probe with a warning (a success), as
 *     upstream's followNonLocalRedirects=false;
 *   - 200 <= status < 400 is a success; the body is read up to 10 KiB.
 *
 * A lifecycle hook's httpGet (upstream lifecycle.runHTTPHandler) is the same
 * request with User-Agent kube-lifecycle/1.35, and any HTTP response counts
 * as a success.
 */
#include "probe/probe_internal.h"

#include "http/http_client.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_REDIRECTS 10

/* The request headers of a handler. */
struct headers {
        struct http_field *h;
        size_t n;
        const char *host; /* the handler's Host header, NULL if none */
};

/* One TLS context for every https probe: no verification, as upstream's
 * probe transport (InsecureSkipVerify).  Made at the first https probe. */
static pthread_once_t tls_once = PTHREAD_ONCE_INIT;
static SSL_CTX *insecure_tls;

static void tls_init(void)
{
        struct http_tls_config cfg = {.insecure = true};
        ck_error_t err = NULL;
        if (http_tls_client_ctx(&cfg, &insecure_tls, &err) < 0) {
                LOG_ERROR("Failed to set up TLS for HTTPS probes", "err=\"%s\"", ck_error_msg(err));
                ck_error_release(&err);
        }
}

static bool header_is(const char *name, const char *want)
{
        return strcasecmp(name, want) == 0;
}

static bool has_crlf(const char *s)
{
        return s != NULL && strpbrk(s, "\r\n") != NULL;
}

/* The request headers, borrowing the handler's strings.  -1 with
 * *message for a header Go's client would refuse. */
static int build_headers(const struct handler *h, bool hook, struct headers *out, char **message)
{
        out->h = xcalloc(h->n_http_headers + 3, sizeof(*out->h));
        out->n = 0;
        out->host = NULL;
        bool user_agent = false, accept = false, connection = false;
        bool accept_removed = false;
        for (size_t i = 0; i < h->n_http_headers; i++) {
                const char *name = h->http_headers[i].name ? h->http_headers[i].name : "";
                const char *value = h->http_headers[i].value ? h->http_headers[i].value : "";
                if (name[0] == '\0' || strpbrk(name, ":\r\n \t") != NULL || has_crlf(value)) {
                        *message = xasprintf("net/http: invalid header field for \"%s\"", name);
                        free(out->h);
                        out->h = NULL;
                        return -1;
                }
                if (header_is(name, "User-Agent"))
                        user_agent = true;
                if (header_is(name, "Connection"))
                        connection = true;
                if (header_is(name, "Accept")) {
                        /* upstream: the first Accept value empty removes them all */
                        if (!accept && value[0] == '\0')
                                accept_removed = true;
                        accept = true;
                        if (accept_removed)
                                continue;
                }
                if (header_is(name, "Host")) {
                        /* Go's Request.Host; an empty one means the default */
                        if (value[0] != '\0')
                                out->host = value;
                        continue;
                }
                out->h[out->n++] = (struct http_field){name, value};
        }
        if (!user_agent)
                out->h[out->n++] = (struct http_field){"User-Agent", hook ? PROBE_HOOK_USER_AGENT
                                                                          : PROBE_USER_AGENT};
        if (!accept)
                out->h[out->n++] = (struct http_field){"Accept", "*/*"};
        /* upstream's probe transport has keep-alives disabled */
        if (!connection && !hook)
                out->h[out->n++] = (struct http_field){"Connection", "close"};
        return 0;
}

/* The path as upstream's formatURL makes it (url.Parse, then String()):
 * a fragment dropped, bytes that cannot appear in a request target
 * percent-encoded. */
static char *escape_path(const char *path)
{
        size_t n = strcspn(path, "#");
        char *out = xmalloc(n * 3 + 1);
        size_t o = 0;
        for (size_t i = 0; i < n; i++) {
                unsigned char ch = (unsigned char)path[i];
                if (ch <= 0x20 || ch >= 0x7f) {
                        o += (size_t)sprintf(out + o, "%%%02X", ch);
                } else {
                        out[o++] = (char)ch;
                }
        }
        out[o] = '\0';
        return out;
}

/* The URL of the probe (upstream formatURL): scheme://host:port/path. */
static char *probe_url(const struct handler *h, const char *host, int port)
{
        const char *scheme =
            h->http_scheme && strcasecmp(h->http_scheme, "HTTPS") == 0 ? "https" : "http";
        cleanup_free char *path = escape_path(h->http_path ? h->http_path : "");
        cleanup_free char *hostport = probe__join_host_port(host, port);
        return xasprintf("%s://%s%s%s", scheme, hostport, path[0] == '/' || !path[0] ? "" : "/",
                         path);
}

/* The host part of a URL (without brackets), new string or NULL. */
static char *url_host(const char *url)
{
        struct http_url u;
        if (http_url_parse(url, &u, NULL) < 0)
                return NULL;
        char *host = xstrdup(u.host);
        http_url_clear(&u);
        return host;
}

struct hop {
        int code;       /* the answer's status; 0: no answer */
        char *location; /* absolute, NULL if none */
        char *error;    /* Go's error text for a failed exchange */
        char body[PROBE_MAX_OUTPUT + 1];
        size_t body_len;
};

/* Go's client error text: `Get "<url>": <cause>`. */
static char *transport_message(const char *url, const struct http_client *hc, ck_error_t err,
                               const char *hostport)
{
        if (err->code == HTTP_ERR_TIMEOUT)
                return xasprintf("Get \"%s\": context deadline exceeded (Client.Timeout exceeded "
                                 "while awaiting headers)",
                                 url);
        int e = hc ? http_client_connect_errno(hc) : 0;
        if (err->code == HTTP_ERR_CONNECT && e != 0) {
                char *why = xstrdup(strerror(e));
                why[0] = (char)tolower((unsigned char)why[0]);
                char *m = xasprintf("Get \"%s\": dial tcp %s: connect: %s", url, hostport, why);
                free(why);
                return m;
        }
        return xasprintf("Get \"%s\": %s", url, ck_error_msg(err));
}

/* One GET of url; hop filled. */
static void do_get(const char *url, const struct headers *hd, int64_t deadline, struct hop *hop)
{
        hop->code = 0;
        hop->location = NULL;
        hop->error = NULL;
        hop->body_len = 0;
        ck_error_t err = NULL;
        struct http_url u;
        if (http_url_parse(url, &u, &err) < 0) {
                hop->error = xasprintf("Get \"%s\": %s", url, ck_error_msg(err));
                ck_error_release(&err);
                return;
        }
        bool https = strcmp(u.scheme, "https") == 0;
        if (https)
                pthread_once(&tls_once, tls_init);
        cleanup_free char *hostport = http_join_host_port(u.host, u.port);
        if (https && insecure_tls == NULL) {
                hop->error = xasprintf("Get \"%s\": TLS is not available", url);
                http_url_clear(&u);
                return;
        }
        struct http_client_options o = {
            .tls = https ? insecure_tls : NULL,
            .linger = true, /* upstream's probe dialer: SO_LINGER {on, 1 s} */
        };
        struct http_client *hc = http_client_new(u.host, u.port, &o);
        struct http_request_spec req = {
            .method = "GET",
            .target = u.target,
            .host = hd->host ? hd->host : u.authority,
            .headers = hd->h,
            .n_headers = hd->n,
        };
        struct http_answer a;
        if (http_client_send(hc, &req, deadline, &a, &err) < 0) {
                hop->error = transport_message(url, hc, err, hostport);
        } else {
                hop->code = a.status;
                cleanup_free char *loc = http_answer_header(&a, "Location");
                if (loc && a.status >= 300 && a.status < 400)
                        hop->location = http_url_resolve(url, loc);
                /* upstream reads at most 10 KiB: more is a non-fatal truncation */
                while (hop->body_len < PROBE_MAX_OUTPUT) {
                        ssize_t n =
                            http_client_read(hc, hop->body + hop->body_len,
                                             PROBE_MAX_OUTPUT - hop->body_len, deadline, &err);
                        if (n < 0) {
                                hop->error = transport_message(url, hc, err, hostport);
                                break;
                        }
                        if (n == 0)
                                break;
                        hop->body_len += (size_t)n;
                }
                http_answer_clear(&a);
        }
        hop->body[hop->body_len] = '\0';
        ck_error_release(&err);
        http_client_free(hc);
        http_url_clear(&u);
}

enum probe_outcome probe__http_get(const struct container *c, const char *pod_ip,
                                   const struct handler *h, int64_t timeout_ms, bool hook,
                                   char **message)
{
        const char *host = NULL;
        int port = probe__target(h, c, pod_ip, &host, message);
        if (port < 0)
                return PROBE_OUTCOME_ERROR;
        struct headers hd;
        if (build_headers(h, hook, &hd, message) < 0)
                return PROBE_OUTCOME_FAILURE;
        if (timeout_ms <= 0)
                timeout_ms = 1000;

        char *url = probe_url(h, host, port);
        cleanup_free char *first_host = url_host(url);
        int64_t deadline = fs_now_mono_ms() + timeout_ms;
        struct hop *hop = xmalloc(sizeof(*hop));
        enum probe_outcome outcome = PROBE_OUTCOME_FAILURE;
        for (int redirects = 0;; redirects++) {
                do_get(url, &hd, deadline, hop);
                if (hop->error != NULL) {
                        *message = hop->error;
                        break;
                }
                if (hop->code >= 300 && hop->code < 400 && hop->location != NULL) {
                        cleanup_free char *next_host = url_host(hop->location);
                        bool same = next_host && first_host && strcmp(next_host, first_host) == 0;
                        if (same && redirects + 1 >= MAX_REDIRECTS) {
                                *message = xasprintf("Get \"%s\": stopped after %d redirects",
                                                     hop->location, MAX_REDIRECTS);
                                free(hop->location);
                                break;
                        }
                        if (same) {
                                LOG_INFO(5, "HTTP probe follows a redirect", "url=\"%s\"",
                                         hop->location);
                                free(url);
                                url = hop->location;
                                continue;
                        }
                }
                free(hop->location);
                if (hook) {
                        /* upstream's hook runner checks no status code */
                        outcome = PROBE_OUTCOME_SUCCESS;
                } else if (hop->code >= 200 && hop->code < 400) {
                        if (hop->code >= 300) {
                                LOG_INFO(4, "Probe terminated redirects", "url=\"%s\" code=%d", url,
                                         hop->code);
                                *message = xasprintf(
                                    "Probe terminated redirects, Response body: %s", hop->body);
                                outcome = PROBE_OUTCOME_WARNING;
                        } else {
                                *message = xstrdup(hop->body);
                                outcome = PROBE_OUTCOME_SUCCESS;
                        }
                } else {
                        *message = xasprintf("HTTP probe failed with statuscode: %d", hop->code);
                }
                break;
        }
        free(hop);
        free(url);
        free(hd.h);
        return outcome;
}
