/* SPDX-License-Identifier: Apache-2.0 */
/*
 * URLs as the HTTP client needs them: an absolute http(s) URL split into
 * scheme, host, port and request target, and a Location resolved against
 * the URL it answered (RFC 3986 5.2).  Pure; fuzzed by
 * test/fuzz/fuzz_http_response.c.
 */
#include "http/http_client.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void http_url_clear(struct http_url *u)
{
        free(u->scheme);
        free(u->host);
        free(u->port);
        free(u->authority);
        free(u->target);
        memset(u, 0, sizeof(*u));
}

char *http_join_host_port(const char *host, const char *port)
{
        return strchr(host, ':') ? xasprintf("[%s]:%s", host, port)
                                 : xasprintf("%s:%s", host, port);
}

/* The length of a URI scheme at s followed by ':' (0 if none). */
static size_t scheme_len(const char *s)
{
        if (!isalpha((unsigned char)s[0]))
                return 0;
        size_t i = 1;
        while (isalnum((unsigned char)s[i]) || s[i] == '+' || s[i] == '-' || s[i] == '.')
                i++;
        return s[i] == ':' ? i : 0;
}

static bool valid_port(const char *p, size_t n)
{
        if (n == 0 || n > 5)
                return false;
        long v = 0;
        for (size_t i = 0; i < n; i++) {
                if (p[i] < '0' || p[i] > '9')
                        return false;
                v = v * 10 + (p[i] - '0');
        }
        return v > 0 && v <= 65535;
}

static bool has_ctl(const char *s)
{
        for (; *s; s++)
                if ((unsigned char)*s <= 0x20 || *s == 0x7f)
                        return true;
        return false;
}

int http_url_parse(const char *url, struct http_url *u, ck_error_t *err)
{
        memset(u, 0, sizeof(*u));
        size_t sn = scheme_len(url);
        if (sn == 0 || strncmp(url + sn, "://", 3) != 0 || has_ctl(url))
                return ck_error_make(err, 0, "URL `%s`: not an absolute http(s) URL", url);
        bool https = sn == 5 && strncasecmp(url, "https", 5) == 0;
        if (!https && !(sn == 4 && strncasecmp(url, "http", 4) == 0))
                return ck_error_make(err, 0, "URL `%s`: unsupported protocol scheme", url);
        const char *auth = url + sn + 3;
        size_t an = strcspn(auth, "/?#");
        if (memchr(auth, '@', an) != NULL)
                return ck_error_make(err, 0, "URL `%s`: user information is not supported", url);
        const char *host = auth, *port = NULL;
        size_t hn = an, pn = 0;
        if (an > 0 && auth[0] == '[') {
                const char *close = memchr(auth, ']', an);
                if (close == NULL)
                        return ck_error_make(err, 0, "URL `%s`: unclosed IPv6 literal", url);
                host = auth + 1;
                hn = (size_t)(close - host);
                const char *rest = close + 1;
                size_t rn = an - (size_t)(rest - auth);
                if (rn > 0 && rest[0] != ':')
                        return ck_error_make(err, 0, "URL `%s`: bad host", url);
                if (rn > 0) {
                        port = rest + 1;
                        pn = rn - 1;
                }
        } else {
                const char *colon = memchr(auth, ':', an);
                if (colon != NULL) {
                        hn = (size_t)(colon - auth);
                        port = colon + 1;
                        pn = an - hn - 1;
                        if (memchr(port, ':', pn) != NULL)
                                return ck_error_make(err, 0, "URL `%s`: bad host", url);
                }
        }
        if (hn == 0)
                return ck_error_make(err, 0, "URL `%s`: no host", url);
        if (pn > 0 && !valid_port(port, pn))
                return ck_error_make(err, 0, "URL `%s`: bad port", url);
        const char *target = auth + an;
        size_t tn = strcspn(target, "#");
        u->scheme = xstrdup(https ? "https" : "http");
        u->host = xstrndup(host, hn);
        u->port = pn > 0 ? xstrndup(port, pn) : xstrdup(https ? "443" : "80");
        u->authority = xstrndup(auth, an);
        u->target = tn == 0            ? xstrdup("/")
                    : target[0] == '?' ? xasprintf("/%.*s", (int)tn, target)
                                       : xstrndup(target, tn);
        return 0;
}

/* RFC 3986 5.2.4 on path[0..n): a new string. */
static char *remove_dot_segments(const char *path, size_t n)
{
        char *out = xmalloc(n + 2);
        size_t o = 0;
        size_t i = 0;
        while (i < n) {
                size_t seg_end = i + 1;
                while (seg_end < n && path[seg_end] != '/')
                        seg_end++;
                /* the segment path[i..seg_end) starts with '/' (but maybe the first) */
                const char *s = path + i + (path[i] == '/');
                size_t sl = (size_t)(path + seg_end - s);
                bool last = seg_end >= n;
                if (sl == 1 && s[0] == '.') {
                        if (last)
                                out[o++] = '/';
                } else if (sl == 2 && s[0] == '.' && s[1] == '.') {
                        while (o > 0 && out[o - 1] != '/')
                                o--;
                        if (o > 0)
                                o--; /* the '/' before the removed segment */
                        if (last)
                                out[o++] = '/';
                } else {
                        if (path[i] == '/' || o > 0)
                                out[o++] = '/';
                        memcpy(out + o, s, sl);
                        o += sl;
                }
                i = seg_end;
        }
        if (o == 0 || out[0] != '/') {
                memmove(out + 1, out, o);
                out[0] = '/';
                o++;
        }
        out[o] = '\0';
        return out;
}

char *http_url_resolve(const char *base, const char *ref)
{
        struct http_url b;
        if (http_url_parse(base, &b, NULL) < 0)
                return NULL;
        size_t rn = strcspn(ref, "#");
        cleanup_free char *r = xstrndup(ref, rn);
        cleanup_free char *authority = http_join_host_port(b.host, b.port);
        char *out;
        if (scheme_len(r) > 0) {
                out = xstrdup(r);
        } else if (r[0] == '/' && r[1] == '/') {
                out = xasprintf("%s:%s", b.scheme, r);
        } else if (r[0] == '\0') {
                out = xasprintf("%s://%s%s", b.scheme, authority, b.target);
        } else if (r[0] == '?') {
                size_t pn = strcspn(b.target, "?");
                out = xasprintf("%s://%s%.*s%s", b.scheme, authority, (int)pn, b.target, r);
        } else {
                size_t pn = strcspn(r, "?");
                cleanup_free char *merged = NULL;
                if (r[0] == '/') {
                        merged = xstrndup(r, pn);
                } else {
                        size_t bp = strcspn(b.target, "?");
                        while (bp > 0 && b.target[bp - 1] != '/')
                                bp--;
                        merged = xasprintf("%.*s%.*s", (int)bp, b.target, (int)pn, r);
                }
                cleanup_free char *path = remove_dot_segments(merged, strlen(merged));
                out = xasprintf("%s://%s%s%s", b.scheme, authority, path, r + pn);
        }
        http_url_clear(&b);
        return out;
}

char *http_escape(const char *s)
{
        static const char hex[] = "0123456789ABCDEF";
        char *out = xmalloc(3 * strlen(s) + 1), *p = out;
        for (; *s; s++) {
                unsigned char c = (unsigned char)*s;
                if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '.' || c == '_' || c == '~') {
                        *p++ = (char)c;
                } else {
                        *p++ = '%';
                        *p++ = hex[c >> 4];
                        *p++ = hex[c & 15];
                }
        }
        *p = '\0';
        return out;
}
