/* SPDX-License-Identifier: Apache-2.0 */
#include "http/http1.h"

#include <string.h>
#include <strings.h>

#define HTTP_MAX_HEADERS 100

/* RFC 9110 tchar */
static bool is_tchar(unsigned char c)
{
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
                return true;
        return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* Visible characters of a request target (no space, no controls, no DEL). */
static bool is_target_char(unsigned char c)
{
        return c > 0x20 && c < 0x7f;
}

/* field-value characters: VCHAR, obs-text, SP, HTAB */
static bool is_value_char(unsigned char c)
{
        return c == '\t' || (c >= 0x20 && c != 0x7f);
}

/* Finds the next line in [p, end): returns its length without the line end
 * (CRLF or LF) in *line_len and the position after the line end, or NULL
 * if no complete line is there.  *bad is set for a CR not followed by LF. */
static const char *next_line(const char *p, const char *end, size_t *line_len, bool *bad)
{
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (nl == NULL) {
                /* A lone CR anywhere but the very end is malformed already. */
                const char *cr = memchr(p, '\r', (size_t)(end - p));
                if (cr != NULL && cr + 1 < end)
                        *bad = true;
                return NULL;
        }
        size_t n = (size_t)(nl - p);
        if (n > 0 && p[n - 1] == '\r')
                n--;
        if (memchr(p, '\r', n) != NULL) {
                *bad = true;
                return NULL;
        }
        *line_len = n;
        return nl + 1;
}

static bool ascii_ieq(const char *a, size_t alen, const char *b)
{
        size_t blen = strlen(b);
        return alen == blen && strncasecmp(a, b, blen) == 0;
}

/* Case-insensitive search for the token "chunked" in a Transfer-Encoding value. */
static bool value_has_chunked(const char *v, size_t n)
{
        static const char tok[] = "chunked";
        const size_t tn = sizeof(tok) - 1;
        for (size_t i = 0; i + tn <= n; i++)
                if (strncasecmp(v + i, tok, tn) == 0)
                        return true;
        return false;
}

static bool parse_content_length(const char *v, size_t n, uint64_t *out)
{
        if (n == 0 || n > 19)
                return false;
        uint64_t x = 0;
        for (size_t i = 0; i < n; i++) {
                if (v[i] < '0' || v[i] > '9')
                        return false;
                x = x * 10 + (uint64_t)(v[i] - '0');
        }
        *out = x;
        return true;
}

static enum http_parse_result parse_target(const char *t, size_t n, struct http_request *req)
{
        for (size_t i = 0; i < n; i++)
                if (!is_target_char((unsigned char)t[i]))
                        return HTTP_PARSE_BAD;
        /* absolute-form (RFC 9112 3.2.2): a server must accept it. */
        size_t skip = 0;
        if (n >= 7 && strncasecmp(t, "http://", 7) == 0)
                skip = 7;
        else if (n >= 8 && strncasecmp(t, "https://", 8) == 0)
                skip = 8;
        if (skip > 0) {
                const char *slash = memchr(t + skip, '/', n - skip);
                const char *q = memchr(t + skip, '?', n - skip);
                if (slash == NULL || (q != NULL && q < slash)) {
                        /* empty path: "/" */
                        req->path = "/";
                        req->path_len = 1;
                        if (q != NULL) {
                                req->query = q + 1;
                                req->query_len = (size_t)(t + n - q - 1);
                        }
                        return HTTP_PARSE_OK;
                }
                n -= (size_t)(slash - t);
                t = slash;
        }
        if (n == 0 || t[0] != '/')
                return HTTP_PARSE_BAD;
        const char *q = memchr(t, '?', n);
        req->path = t;
        req->path_len = q ? (size_t)(q - t) : n;
        if (q != NULL) {
                req->query = q + 1;
                req->query_len = n - req->path_len - 1;
        }
        /* a fragment is never sent by a client */
        if (memchr(t, '#', n) != NULL)
                return HTTP_PARSE_BAD;
        return HTTP_PARSE_OK;
}

static enum http_parse_result parse_request_line(const char *l, size_t n, struct http_request *req)
{
        const char *end = l + n;
        const char *sp1 = memchr(l, ' ', n);
        if (sp1 == NULL || sp1 == l)
                return HTTP_PARSE_BAD;
        for (const char *c = l; c < sp1; c++)
                if (!is_tchar((unsigned char)*c))
                        return HTTP_PARSE_BAD;
        req->method = l;
        req->method_len = (size_t)(sp1 - l);

        const char *t = sp1 + 1;
        const char *sp2 = memchr(t, ' ', (size_t)(end - t));
        if (sp2 == NULL || sp2 == t)
                return HTTP_PARSE_BAD;
        if (parse_target(t, (size_t)(sp2 - t), req) != HTTP_PARSE_OK)
                return HTTP_PARSE_BAD;

        const char *v = sp2 + 1;
        size_t vn = (size_t)(end - v);
        if (vn != 8 || memcmp(v, "HTTP/1.", 7) != 0 || (v[7] != '0' && v[7] != '1'))
                return HTTP_PARSE_BAD;
        req->version_minor = v[7] - '0';
        return HTTP_PARSE_OK;
}

/* What the framing of a message needs from its header fields. */
struct framing {
        bool has_content_length;
        uint64_t content_length;
        bool chunked;
};

static enum http_parse_result parse_header(const char *l, size_t n, struct framing *f)
{
        /* obs-fold (a line starting with whitespace) is rejected (RFC 9112 5.2). */
        if (l[0] == ' ' || l[0] == '\t')
                return HTTP_PARSE_BAD;
        const char *colon = memchr(l, ':', n);
        if (colon == NULL || colon == l)
                return HTTP_PARSE_BAD;
        for (const char *c = l; c < colon; c++)
                if (!is_tchar((unsigned char)*c))
                        return HTTP_PARSE_BAD;
        size_t name_len = (size_t)(colon - l);
        const char *v = colon + 1;
        const char *ve = l + n;
        for (const char *c = v; c < ve; c++)
                if (!is_value_char((unsigned char)*c))
                        return HTTP_PARSE_BAD;
        while (v < ve && (*v == ' ' || *v == '\t'))
                v++;
        while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
                ve--;
        size_t vn = (size_t)(ve - v);

        if (ascii_ieq(l, name_len, "content-length")) {
                uint64_t cl;
                if (!parse_content_length(v, vn, &cl))
                        return HTTP_PARSE_BAD;
                if (f->has_content_length && f->content_length != cl)
                        return HTTP_PARSE_BAD;
                f->has_content_length = true;
                f->content_length = cl;
        } else if (ascii_ieq(l, name_len, "transfer-encoding")) {
                if (value_has_chunked(v, vn))
                        f->chunked = true;
        }
        return HTTP_PARSE_OK;
}

/* The header fields from p (just past the start line) to the blank line
 * ending the head: their count, the framing, and the head's length from buf. */
static enum http_parse_result parse_fields(const char *buf, const char *p, const char *end,
                                           size_t *n_headers, struct framing *f, size_t *head_len)
{
        for (;;) {
                size_t n = 0;
                bool bad = false;
                const char *next = next_line(p, end, &n, &bad);
                if (bad)
                        return HTTP_PARSE_BAD;
                if (next == NULL)
                        return HTTP_PARSE_INCOMPLETE;
                if (n == 0) {
                        *head_len = (size_t)(next - buf);
                        return HTTP_PARSE_OK;
                }
                if (++*n_headers > HTTP_MAX_HEADERS)
                        return HTTP_PARSE_BAD;
                if (parse_header(p, n, f) != HTTP_PARSE_OK)
                        return HTTP_PARSE_BAD;
                p = next;
        }
}

/* "HTTP/1.x NNN reason" */
static enum http_parse_result parse_status_line(const char *l, size_t n, struct http_response *resp)
{
        if (n < 12 || memcmp(l, "HTTP/1.", 7) != 0 || (l[7] != '0' && l[7] != '1') || l[8] != ' ')
                return HTTP_PARSE_BAD;
        resp->version_minor = l[7] - '0';
        int status = 0;
        for (size_t i = 9; i < 12; i++) {
                if (l[i] < '0' || l[i] > '9')
                        return HTTP_PARSE_BAD;
                status = status * 10 + (l[i] - '0');
        }
        if (status < 100)
                return HTTP_PARSE_BAD;
        resp->status = status;
        if (n > 12 && l[12] != ' ')
                return HTTP_PARSE_BAD;
        resp->reason = n > 13 ? l + 13 : l + n;
        resp->reason_len = n > 13 ? n - 13 : 0;
        for (size_t i = 0; i < resp->reason_len; i++)
                if (!is_value_char((unsigned char)resp->reason[i]))
                        return HTTP_PARSE_BAD;
        return HTTP_PARSE_OK;
}

enum http_parse_result http_parse_response(const char *buf, size_t len, struct http_response *resp)
{
        memset(resp, 0, sizeof(*resp));
        const char *end = buf + len;
        size_t n = 0;
        bool bad = false;
        const char *next = next_line(buf, end, &n, &bad);
        if (bad)
                return HTTP_PARSE_BAD;
        if (next == NULL) {
                /* judged early: a server that is not speaking HTTP/1 */
                size_t k = len < 5 ? len : 5;
                return memcmp(buf, "HTTP/", k) == 0 ? HTTP_PARSE_INCOMPLETE : HTTP_PARSE_BAD;
        }
        if (parse_status_line(buf, n, resp) != HTTP_PARSE_OK)
                return HTTP_PARSE_BAD;
        struct framing f = {0};
        enum http_parse_result r =
            parse_fields(buf, next, end, &resp->n_headers, &f, &resp->head_len);
        resp->has_content_length = f.has_content_length;
        resp->content_length = f.content_length;
        resp->chunked = f.chunked;
        return r;
}

enum http_parse_result http_parse_request(const char *buf, size_t len, struct http_request *req)
{
        memset(req, 0, sizeof(*req));
        const char *p = buf;
        const char *end = buf + len;
        size_t n = 0;
        bool bad = false;

        /* RFC 9112 2.2: ignore empty lines received before the request line. */
        const char *next;
        for (;;) {
                next = next_line(p, end, &n, &bad);
                if (bad)
                        return HTTP_PARSE_BAD;
                if (next == NULL) {
                        /* An unterminated request line can still be judged
                         * malformed early on a control character. */
                        for (const char *c = p; c < end; c++)
                                if ((unsigned char)*c < 0x20 && *c != '\r' && *c != '\t')
                                        return HTTP_PARSE_BAD;
                        return HTTP_PARSE_INCOMPLETE;
                }
                if (n > 0)
                        break;
                p = next;
        }
        if (parse_request_line(p, n, req) != HTTP_PARSE_OK)
                return HTTP_PARSE_BAD;
        struct framing f = {0};
        enum http_parse_result r =
            parse_fields(buf, next, end, &req->n_headers, &f, &req->head_len);
        req->has_content_length = f.has_content_length;
        req->content_length = f.content_length;
        req->chunked = f.chunked;
        return r;
}

bool http_request_method_is(const struct http_request *req, const char *m)
{
        size_t n = strlen(m);
        return req->method_len == n && memcmp(req->method, m, n) == 0;
}

bool http_request_path_is(const struct http_request *req, const char *p)
{
        size_t n = strlen(p);
        return req->path_len == n && memcmp(req->path, p, n) == 0;
}

/* The header lines of a head that parsed OK: skips the empty lines before
 * the request line and the request line itself; returns the offset of the
 * first header line. */
static size_t first_header_offset(const char *buf, size_t head_len)
{
        const char *p = buf;
        const char *end = buf + head_len;
        for (;;) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                if (nl == NULL)
                        return head_len;
                bool empty = nl == p || (nl == p + 1 && p[0] == '\r');
                p = nl + 1;
                if (!empty)
                        return (size_t)(p - buf);
        }
}

/* The next field named `name` in the head buf[0..head_len) from *pos (0:
 * the first field line). */
static bool head_field_next(const char *buf, size_t head_len, const char *name, size_t *pos,
                            const char **val, size_t *len)
{
        size_t off = *pos;
        if (off == 0)
                off = first_header_offset(buf, head_len);
        const char *end = buf + head_len;
        const char *p = buf + off;
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                if (nl == NULL)
                        break;
                const char *le = nl > p && nl[-1] == '\r' ? nl - 1 : nl;
                const char *next = nl + 1;
                if (le == p)
                        break; /* the blank line that ends the head */
                const char *colon = memchr(p, ':', (size_t)(le - p));
                if (colon != NULL && ascii_ieq(p, (size_t)(colon - p), name)) {
                        const char *v = colon + 1;
                        const char *ve = le;
                        while (v < ve && (*v == ' ' || *v == '\t'))
                                v++;
                        while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
                                ve--;
                        *val = v;
                        *len = (size_t)(ve - v);
                        *pos = (size_t)(next - buf);
                        return true;
                }
                p = next;
        }
        *pos = head_len;
        return false;
}

bool http_request_header_next(const char *buf, const struct http_request *req, const char *name,
                              size_t *pos, const char **val, size_t *len)
{
        return head_field_next(buf, req->head_len, name, pos, val, len);
}

bool http_response_header_next(const char *buf, const struct http_response *resp, const char *name,
                               size_t *pos, const char **val, size_t *len)
{
        return head_field_next(buf, resp->head_len, name, pos, val, len);
}

bool http_response_header(const char *buf, const struct http_response *resp, const char *name,
                          const char **val, size_t *len)
{
        size_t pos = 0;
        return http_response_header_next(buf, resp, name, &pos, val, len);
}

bool http_request_header(const char *buf, const struct http_request *req, const char *name,
                         const char **val, size_t *len)
{
        size_t pos = 0;
        return http_request_header_next(buf, req, name, &pos, val, len);
}

const char *http_status_text(int code)
{
        switch (code) {
        case 101:
                return "Switching Protocols";
        case 200:
                return "OK";
        case 201:
                return "Created";
        case 204:
                return "No Content";
        case 301:
                return "Moved Permanently";
        case 302:
                return "Found";
        case 304:
                return "Not Modified";
        case 400:
                return "Bad Request";
        case 401:
                return "Unauthorized";
        case 403:
                return "Forbidden";
        case 404:
                return "Not Found";
        case 405:
                return "Method Not Allowed";
        case 406:
                return "Not Acceptable";
        case 409:
                return "Conflict";
        case 413:
                return "Request Entity Too Large";
        case 415:
                return "Unsupported Media Type";
        case 422:
                return "Unprocessable Entity";
        case 429:
                return "Too Many Requests";
        case 431:
                return "Request Header Fields Too Large";
        case 500:
                return "Internal Server Error";
        case 501:
                return "Not Implemented";
        case 502:
                return "Bad Gateway";
        case 503:
                return "Service Unavailable";
        case 504:
                return "Gateway Timeout";
        default:
                return "";
        }
}
