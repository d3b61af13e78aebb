/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzzes what the secure port (10250) makes of a request before it routes
 * it: the request head as secure.c hands it over (method, raw path, query,
 * Authorization), the client certificate's subject, the bearer token
 * (server_auth_bearer_token, upstream's bearertoken authenticator), the
 * authorization attributes (server_auth_verb, server_auth_subresources,
 * upstream's nodeAuthorizerAttributesGetter) and the authentication
 * decision of server_auth_check_request without an apiserver (x509 and
 * anonymous, AlwaysAllow), then the /containerLogs query.  The input is
 *
 *   <flags byte> <peer CN> [TAB <O>]... LF <HTTP request head>
 *
 * flags: bit 0 a client CA is configured (x509), bit 1 anonymous requests
 * are allowed, bit 2 the client presented a certificate, bit 3 it failed
 * verification.  Checks, beyond memory safety: the token and the
 * attributes equal references written from upstream; the decision is the
 * one upstream's union authenticator (x509, then anonymous unless x509
 * failed) takes, a certificate subject that is not UTF-8 failing x509; a
 * refusal is 401 "Unauthorized".
 */
#include "logs/logs.h"
#include "server/auth.h"
#include "server/auth_internal.h"
#include "http/http1.h"
#include "util/cleanup.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define MAX_ORGS 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- references ---- */

static bool is_space(char c)
{
        return c == ' ' || (c >= '\t' && c <= '\r');
}

/* upstream: strings.TrimSpace, strings.SplitN(auth, " ", 3), parts[0]
 * "bearer" in any case, the token parts[1] (ASCII white space only; an
 * empty token is no token here, an error upstream). */
static char *ref_bearer(const char *h)
{
        if (h == NULL)
                return NULL;
        while (is_space(*h))
                h++;
        size_t n = strlen(h);
        while (n > 0 && is_space(h[n - 1]))
                n--;
        if (n < 7 || strncasecmp(h, "bearer ", 7) != 0)
                return NULL;
        const char *tok = h + 7;
        size_t tl = 0;
        while (7 + tl < n && tok[tl] != ' ')
                tl++;
        return tl > 0 ? xstrndup(tok, tl) : NULL;
}

static void check_bearer(const char *h)
{
        char *got = server_auth_bearer_token(h);
        char *want = ref_bearer(h);
        if ((got == NULL) != (want == NULL) || (got != NULL && strcmp(got, want) != 0))
                abort();
        if (got != NULL && (got[0] == '\0' || strchr(got, ' ') != NULL || strstr(h, got) == NULL))
                abort();
        free(got);
        free(want);
}

static bool ref_subpath(const char *path, const char *prefix)
{
        size_t n = strlen(prefix);
        return strncmp(path, prefix, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static void check_attributes(const char *method, const char *path)
{
        static const char *const verbs[][2] = {{"POST", "create"},
                                               {"GET", "get"},
                                               {"PUT", "update"},
                                               {"PATCH", "patch"},
                                               {"DELETE", "delete"}};
        const char *want_verb = "";
        for (size_t i = 0; i < ARRAY_SIZE(verbs); i++)
                if (strcmp(method, verbs[i][0]) == 0)
                        want_verb = verbs[i][1];
        if (strcmp(server_auth_verb(method), want_verb) != 0)
                abort();

        static const char *const fine[][2] = {
            {"/pods", "pods"},
            {"/healthz", "healthz"},
            {"/configz", "configz"},
            {"/runningpods", "pods"},
        };
        static const char *const coarse[][2] = {
            {"/stats", "stats"},           {"/metrics", "metrics"}, {"/logs", "log"},
            {"/checkpoint", "checkpoint"}, {"/statusz", "statusz"}, {"/flagz", "configz"},
        };
        const char *want[2] = {NULL, NULL};
        size_t n = 0;
        for (size_t i = 0; i < ARRAY_SIZE(fine) && n == 0; i++)
                if (ref_subpath(path, fine[i][0]))
                        want[n++] = fine[i][1];
        const char *last = "proxy";
        for (size_t i = 0; i < ARRAY_SIZE(coarse); i++)
                if (ref_subpath(path, coarse[i][0])) {
                        last = coarse[i][1];
                        break;
                }
        want[n++] = last;
        const char *got[2] = {NULL, NULL};
        size_t m = server_auth_subresources(path, got);
        if (m != n)
                abort();
        for (size_t i = 0; i < n; i++)
                if (got[i] == NULL || strcmp(got[i], want[i]) != 0)
                        abort();
}

/* ---- the authentication decision ---- */

static struct server_auth *auths[4]; /* by flags & 3; [0]: none configured */

static void init_auths(void)
{
        for (unsigned f = 0; f < 4; f++) {
                struct server_auth_options o = {
                    .node_name = "node-1",
                    .x509 = f & 1,
                    .anonymous = f & 2,
                    .authz_mode = SERVER_AUTHZ_ALWAYS_ALLOW,
                    .retry_initial_ms = -1,
                };
                ck_error_t err = NULL;
                int r = server_auth_new(&o, &auths[f], &err);
                if ((r < 0) != (f == 0)) /* no method at all: refused, as upstream */
                        abort();
                ck_error_release(&err);
        }
}

/* Well-formed UTF-8 as JSON (jansson) takes it: shortest forms, no
 * surrogates, at most U+10FFFF. */
static bool utf8_valid(const char *s)
{
        const unsigned char *p = (const unsigned char *)s;
        while (*p) {
                unsigned c = *p, n = c < 0x80                 ? 0
                                     : c >= 0xc2 && c <= 0xdf ? 1
                                     : c >= 0xe0 && c <= 0xef ? 2
                                     : c >= 0xf0 && c <= 0xf4 ? 3
                                                              : 9;
                if (n == 9)
                        return false;
                uint32_t cp = n == 0 ? c : c & (0x3f >> n);
                for (unsigned i = 1; i <= n; i++) {
                        if ((p[i] & 0xc0) != 0x80)
                                return false;
                        cp = cp << 6 | (p[i] & 0x3f);
                }
                if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
                    (cp >= 0xd800 && cp <= 0xdfff))
                        return false;
                p += n + 1;
        }
        return true;
}

static void check_decision(unsigned flags, const struct server_auth_request *req)
{
        struct server_auth *a = auths[flags & 3];
        if (a == NULL)
                return;
        bool x509 = flags & 1, anonymous = flags & 2;
        struct server_auth_result res;
        server_auth_check_request(a, req, &res);
        const char *want_user = NULL;
        if (x509 && req->peer_verify_error != NULL)
                want_user = NULL; /* a bad certificate is never anonymous */
        else if (x509 && req->peer_cn != NULL && req->peer_cn[0] != '\0') {
                /* a subject JSON cannot carry fails, as Go refuses the certificate */
                bool readable = utf8_valid(req->peer_cn);
                for (size_t i = 0; req->peer_orgs != NULL && req->peer_orgs[i] != NULL; i++)
                        readable &= utf8_valid(req->peer_orgs[i]);
                want_user = readable ? req->peer_cn : NULL;
        } else if (anonymous)
                want_user = "system:anonymous";
        if (want_user == NULL) {
                if (res.status != 401 || res.message == NULL ||
                    strcmp(res.message, "Unauthorized") != 0 || res.user != NULL)
                        abort();
        } else if (res.status != 0 || res.user == NULL || strcmp(res.user, want_user) != 0) {
                abort();
        }
        server_auth_result_release(&res);
}

/* ---- the request ---- */

static char *header_copy(const char *buf, const struct http_request *hr, const char *name)
{
        const char *v;
        size_t len;
        return http_request_header(buf, hr, name, &v, &len) ? xstrndup(v, len) : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (auths[1] == NULL) {
                log_set_fd(open("/dev/null", O_WRONLY | O_CLOEXEC));
                log_set_verbosity(10); /* every log line, quoting included */
                init_auths();
        }
        if (size == 0)
                return 0;
        unsigned flags = data[0];
        const char *rest = (const char *)data + 1;
        size_t rest_len = size - 1;
        const char *nl = memchr(rest, '\n', rest_len);
        size_t peer_len = nl != NULL ? (size_t)(nl - rest) : 0;
        cleanup_free char *peer = xstrndup(rest, peer_len);
        const char *head = nl != NULL ? nl + 1 : rest;
        size_t head_len = rest_len - (size_t)(head - rest);
        /* an exact-size copy: ASan sees a read past the end */
        cleanup_free char *buf = xmalloc(head_len ? head_len : 1);
        memcpy(buf, head, head_len);

        /* the whole head as one header value, too */
        cleanup_free char *as_value = xstrndup(buf, head_len);
        check_bearer(as_value);

        struct http_request hr;
        if (http_parse_request(buf, head_len, &hr) != HTTP_PARSE_OK)
                return 0;
        cleanup_free char *method = xstrndup(hr.method, hr.method_len);
        cleanup_free char *path = xstrndup(hr.path, hr.path_len);
        cleanup_free char *query = hr.query ? xstrndup(hr.query, hr.query_len) : NULL;
        cleanup_free char *authorization = header_copy(buf, &hr, "Authorization");
        check_bearer(authorization);
        check_attributes(method, path);

        /* the client certificate: CN, then its O values */
        const char *orgs[MAX_ORGS + 1] = {NULL};
        char *cn = peer, *tab = strchr(peer, '\t');
        size_t n_orgs = 0;
        while (tab != NULL && n_orgs < MAX_ORGS) {
                *tab = '\0';
                orgs[n_orgs++] = tab + 1;
                tab = strchr(tab + 1, '\t');
        }
        struct server_auth_request req = {
            .method = method,
            .path = path,
            .authorization = authorization,
            .peer_cn = flags & 4 && !(flags & 8) ? cn : NULL,
            .peer_orgs = flags & 4 && !(flags & 8) ? orgs : NULL,
            .peer_verify_error = flags & 8 ? "x509: certificate signed by unknown authority" : NULL,
        };
        check_decision(flags, &req);

        /* the route's query, as serve_logs reads it */
        if (strncmp(path, "/containerLogs/", 15) == 0) {
                struct logs_options o;
                ck_error_t err = NULL;
                if (logs_options_parse(query, query ? strlen(query) : 0, &o, &err) == 0)
                        logs_options_release(&o);
                ck_error_release(&err);
        }
        return 0;
}
