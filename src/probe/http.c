/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The httpGet action (upstream pkg/probe/http): a GET of
 * scheme://host:port/path with libcurl.
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

#include "util/fsutil.h"
#include "util/cleanup.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <curl/curl.h>

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#define MAX_REDIRECTS 10

struct body {
        char buf[PROBE_MAX_OUTPUT + 1];
        size_t len;
        bool truncated;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static pthread_key_t curl_key;

static void curl_handle_free(void *h)
{
        curl_easy_cleanup(h);
}

static void curl_init_once(void)
{
        curl_global_init(CURL_GLOBAL_DEFAULT);
        if (pthread_key_create(&curl_key, curl_handle_free) != 0)
                abort();
}

/* This thread's easy handle, reset: reusing it saves curl's per-handle
 * setup (its internal multi handle and wakeup socketpair) on every probe.
 * Connections are never reused (CURLOPT_FORBID_REUSE). */
static CURL *thread_curl(void)
{
        CURL *curl = pthread_getspecific(curl_key);
        if (curl != NULL) {
                curl_easy_reset(curl);
                return curl;
        }
        curl = curl_easy_init();
        if (curl == NULL || pthread_setspecific(curl_key, curl) != 0)
                abort();
        return curl;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *user)
{
        struct body *b = user;
        size_t n = size * nmemb;
        size_t room = PROBE_MAX_OUTPUT - b->len;
        if (n > room) {
                memcpy(b->buf + b->len, data, room);
                b->len += room;
                b->truncated = true;
                return 0; /* enough: ends the transfer (CURLE_WRITE_ERROR) */
        }
        memcpy(b->buf + b->len, data, n);
        b->len += n;
        return n;
}

/* Sockets close-on-exec (the agent starts processes). */
static curl_socket_t open_socket(void *user, curlsocktype purpose, struct curl_sockaddr *addr)
{
        (void)user;
        (void)purpose;
        return socket(addr->family, addr->socktype | SOCK_CLOEXEC, addr->protocol);
}

/* upstream's probe dialer: SO_LINGER {on, 1 s} */
static int set_sockopt(void *user, curl_socket_t fd, curlsocktype purpose)
{
        (void)user;
        (void)purpose;
        struct linger lg = {.l_onoff = 1, .l_linger = 1};
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
        return CURL_SOCKOPT_OK;
}

static bool header_is(const char *name, const char *want)
{
        return strcasecmp(name, want) == 0;
}

static bool has_crlf(const char *s)
{
        return s != NULL && strpbrk(s, "\r\n") != NULL;
}

/* The request headers as curl takes them.  NULL with *message for a header
 * Go's client would refuse. */
static struct curl_slist *build_headers(const struct handler *h, bool hook, char **message)
{
        struct curl_slist *list = NULL;
        bool user_agent = false, accept = false, connection = false;
        bool accept_removed = false;
        for (size_t i = 0; i < h->n_http_headers; i++) {
                const char *name = h->http_headers[i].name ? h->http_headers[i].name : "";
                const char *value = h->http_headers[i].value ? h->http_headers[i].value : "";
                if (name[0] == '\0' || strpbrk(name, ":\r\n \t") != NULL || has_crlf(value)) {
                        *message = xasprintf("net/http: invalid header field for \"%s\"", name);
                        curl_slist_free_all(list);
                        return NULL;
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
                /* an empty Host means the default one */
                if (header_is(name, "Host") && value[0] == '\0')
                        continue;
                /* curl: "Name;" sends an empty value, "Name:" would remove it */
                char *line = value[0] ? xasprintf("%s: %s", name, value) : xasprintf("%s;", name);
                list = curl_slist_append(list, line);
                free(line);
        }
        if (!user_agent)
                list = curl_slist_append(list, hook ? "User-Agent: " PROBE_HOOK_USER_AGENT
                                                    : "User-Agent: " PROBE_USER_AGENT);
        if (!accept)
                list = curl_slist_append(list, "Accept: */*");
        if (accept_removed)
                list = curl_slist_append(list, "Accept:");
        /* upstream's probe transport has keep-alives disabled */
        if (!connection && !hook)
                list = curl_slist_append(list, "Connection: close");
        return list;
}

/* The host part of a URL (without brackets), new string or NULL. */
static char *url_host(const char *url)
{
        CURLU *u = curl_url();
        char *host = NULL, *ret = NULL;
        if (curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) == CURLUE_OK &&
            curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK) {
                size_t n = strlen(host);
                if (n >= 2 && host[0] == '[' && host[n - 1] == ']')
                        ret = xstrndup(host + 1, n - 2);
                else
                        ret = xstrdup(host);
        }
        curl_free(host);
        curl_url_cleanup(u);
        return ret;
}

/* The URL of the probe (upstream formatURL): scheme://host:port/path. */
static char *probe_url(const struct handler *h, const char *host, int port)
{
        const char *scheme =
            h->http_scheme && strcasecmp(h->http_scheme, "HTTPS") == 0 ? "https" : "http";
        const char *path = h->http_path ? h->http_path : "";
        cleanup_free char *hostport = probe__join_host_port(host, port);
        return xasprintf("%s://%s%s%s", scheme, hostport, path[0] == '/' || !path[0] ? "" : "/",
                         path);
}

struct hop {
        long code;
        char *location; /* absolute, NULL if none */
        CURLcode res;
        long os_errno;
        char errbuf[CURL_ERROR_SIZE];
};

/* One GET; the body goes into *body (reset first). */
static void do_get(const char *url, struct curl_slist *headers, int64_t timeout_ms,
                   struct body *body, struct hop *hop)
{
        CURL *curl = thread_curl();
        body->len = 0;
        body->truncated = false;
        hop->errbuf[0] = '\0';
        curl_easy_setopt(curl, CURLOPT_URL, url);
        curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long)(timeout_ms > 0 ? timeout_ms : 1));
        curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
        curl_easy_setopt(curl, CURLOPT_PROXY, "");
        curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
        curl_easy_setopt(curl, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
        curl_easy_setopt(curl, CURLOPT_FORBID_REUSE, 1L);
        curl_easy_setopt(curl, CURLOPT_FRESH_CONNECT, 1L);
        curl_easy_setopt(curl, CURLOPT_PATH_AS_IS, 1L);
        curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
        curl_easy_setopt(curl, CURLOPT_OPENSOCKETFUNCTION, open_socket);
        curl_easy_setopt(curl, CURLOPT_SOCKOPTFUNCTION, set_sockopt);
        curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(curl, CURLOPT_WRITEDATA, body);
        curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, hop->errbuf);
        hop->res = curl_easy_perform(curl);
        if (hop->res == CURLE_WRITE_ERROR && body->truncated)
                hop->res = CURLE_OK; /* upstream: a non-fatal truncation */
        hop->code = 0;
        hop->location = NULL;
        hop->os_errno = 0;
        curl_easy_getinfo(curl, CURLINFO_OS_ERRNO, &hop->os_errno);
        if (hop->res == CURLE_OK) {
                curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &hop->code);
                char *loc = NULL;
                if (curl_easy_getinfo(curl, CURLINFO_REDIRECT_URL, &loc) == CURLE_OK && loc)
                        hop->location = xstrdup(loc);
        }
        body->buf[body->len] = '\0';
}

/* Go's client error text: `Get "<url>": <cause>`. */
static char *transport_message(const char *url, const char *hostport, const struct hop *hop)
{
        if (hop->res == CURLE_OPERATION_TIMEDOUT)
                return xasprintf("Get \"%s\": context deadline exceeded (Client.Timeout exceeded "
                                 "while awaiting headers)",
                                 url);
        if (hop->res == CURLE_COULDNT_CONNECT && hop->os_errno != 0) {
                char *why = xstrdup(strerror((int)hop->os_errno));
                why[0] = (char)tolower((unsigned char)why[0]);
                char *m = xasprintf("Get \"%s\": dial tcp %s: connect: %s", url, hostport, why);
                free(why);
                return m;
        }
        return xasprintf("Get \"%s\": %s", url,
                         hop->errbuf[0] ? hop->errbuf : curl_easy_strerror(hop->res));
}

enum probe_outcome probe__http_get(const struct container *c, const char *pod_ip,
                                   const struct handler *h, int64_t timeout_ms, bool hook,
                                   char **message)
{
        pthread_once(&curl_once, curl_init_once);
        const char *host = NULL;
        int port = probe__target(h, c, pod_ip, &host, message);
        if (port < 0)
                return PROBE_OUTCOME_ERROR;
        struct curl_slist *headers = build_headers(h, hook, message);
        if (headers == NULL)
                return PROBE_OUTCOME_FAILURE;
        if (timeout_ms <= 0)
                timeout_ms = 1000;

        cleanup_free char *hostport = probe__join_host_port(host, port);
        char *url = probe_url(h, host, port);
        cleanup_free char *first_host = url_host(url);
        int64_t deadline = fs_now_mono_ms() + timeout_ms;
        struct body *body = xmalloc(sizeof(*body));
        enum probe_outcome outcome = PROBE_OUTCOME_FAILURE;
        for (int redirects = 0;; redirects++) {
                int64_t left = deadline - fs_now_mono_ms();
                struct hop hop;
                if (left <= 0) {
                        hop = (struct hop){.res = CURLE_OPERATION_TIMEDOUT};
                        *message = transport_message(url, hostport, &hop);
                        break;
                }
                do_get(url, headers, left, body, &hop);
                if (hop.res != CURLE_OK) {
                        *message = transport_message(url, hostport, &hop);
                        break;
                }
                if (hop.code >= 300 && hop.code < 400 && hop.location != NULL) {
                        cleanup_free char *next_host = url_host(hop.location);
                        bool same = next_host && first_host && strcmp(next_host, first_host) == 0;
                        if (same && redirects + 1 >= MAX_REDIRECTS) {
                                *message = xasprintf("Get \"%s\": stopped after %d redirects",
                                                     hop.location, MAX_REDIRECTS);
                                free(hop.location);
                                break;
                        }
                        if (same) {
                                LOG_INFO(5, "HTTP probe follows a redirect", "url=\"%s\"",
                                         hop.location);
                                free(url);
                                url = hop.location;
                                continue;
                        }
                }
                free(hop.location);
                if (hook) {
                        /* upstream's hook runner checks no status code */
                        outcome = PROBE_OUTCOME_SUCCESS;
                } else if (hop.code >= 200 && hop.code < 400) {
                        if (hop.code >= 300) {
                                LOG_INFO(4, "Probe terminated redirects", "url=\"%s\" code=%ld",
                                         url, hop.code);
                                *message = xasprintf(
                                    "Probe terminated redirects, Response body: %s", body->buf);
                                outcome = PROBE_OUTCOME_WARNING;
                        } else {
                                *message = xstrdup(body->buf);
                                outcome = PROBE_OUTCOME_SUCCESS;
                        }
                } else {
                        *message = xasprintf("HTTP probe failed with statuscode: %ld", hop.code);
                }
                break;
        }
        free(body);
        free(url);
        curl_slist_free_all(headers);
        return outcome;
}
