/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pure parts of HTTP/1.x, shared by the kubelet's HTTP server
 * (server/httpd.h) and the HTTP client (http/http_client.h): the request
 * head (RFC 9112 request line and header fields), the response head (status
 * line and header fields), the path (percent-decoding, Go's ServeMux
 * cleaning) and the chunked transfer coding of a body.
 *
 * Pure: no I/O, safe on arbitrary bytes; only the path functions allocate
 * (fuzzed by test/fuzz/fuzz_http_request.c, fuzz_http_body.c and
 * fuzz_http_response.c).
 */
#ifndef CK_HTTP_HTTP1_H
#define CK_HTTP_HTTP1_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum http_parse_result {
        HTTP_PARSE_INCOMPLETE = 0, /* the head is not complete yet: read more */
        HTTP_PARSE_OK = 1,         /* *req is filled */
        HTTP_PARSE_BAD = -1,       /* malformed: answer 400 */
};

/* The parsed head.  Pointers borrow from the parsed buffer. */
struct http_request {
        const char *method; /* token, e.g. "GET" */
        size_t method_len;
        const char *path; /* origin-form path without the query, starts with '/' */
        size_t path_len;
        const char *query; /* after '?', NULL if none */
        size_t query_len;
        int version_minor; /* HTTP/1.<minor>: 0 or 1 */
        size_t n_headers;  /* header fields seen */
        bool has_content_length;
        uint64_t content_length;
        bool chunked;    /* Transfer-Encoding names chunked */
        size_t head_len; /* bytes of the request head, terminating blank line included */
};

/* Parses the request head at the start of buf[0..len).  Accepts CRLF and
 * bare LF line ends.  Rejects: a method that is not a token, a target that
 * is not origin-form, a version other than HTTP/1.0 or HTTP/1.1, header
 * names that are not tokens, obsolete line folding, control characters,
 * duplicate or invalid Content-Length. */
enum http_parse_result http_parse_request(const char *buf, size_t len, struct http_request *req);

/* True if the method of req equals m. */
bool http_request_method_is(const struct http_request *req, const char *m);

/* True if the path of req equals p. */
bool http_request_path_is(const struct http_request *req, const char *p);

/* Finds the first header field named `name` (ASCII case-insensitive) in the
 * head that http_parse_request() parsed from buf into req (HTTP_PARSE_OK).
 * On a match sets *val to its value with optional whitespace trimmed (a
 * pointer into buf, not NUL-terminated) and *len to its length, and
 * returns true.  Pure; safe for any head that parsed OK. */
bool http_request_header(const char *buf, const struct http_request *req, const char *name,
                         const char **val, size_t *len);

/* Like http_request_header, for fields that may repeat (e.g. Connection):
 * *pos is a cursor, 0 to start; each call finds the next field named
 * `name` after *pos and advances *pos past it.  False when there is none. */
bool http_request_header_next(const char *buf, const struct http_request *req, const char *name,
                              size_t *pos, const char **val, size_t *len);

/* A parsed response head.  Pointers borrow from the parsed buffer. */
struct http_response {
        int status;         /* 100..999 */
        int version_minor;  /* HTTP/1.<minor>: 0 or 1 */
        const char *reason; /* the reason phrase (may be empty) */
        size_t reason_len;
        size_t n_headers;
        bool has_content_length;
        uint64_t content_length;
        bool chunked;    /* Transfer-Encoding names chunked */
        size_t head_len; /* bytes of the head, terminating blank line included */
};

/* Parses the response head at the start of buf[0..len), as
 * http_parse_request does a request's: a status line "HTTP/1.x NNN reason"
 * (three digits, 100..999), then header fields.  Rejects what it rejects in
 * header fields (and a Content-Length that is not a number or repeats with
 * another value). */
enum http_parse_result http_parse_response(const char *buf, size_t len, struct http_response *resp);

/* http_request_header_next / http_request_header for a response head that
 * http_parse_response parsed OK from buf. */
bool http_response_header_next(const char *buf, const struct http_response *resp, const char *name,
                               size_t *pos, const char **val, size_t *len);
bool http_response_header(const char *buf, const struct http_response *resp, const char *name,
                          const char **val, size_t *len);

/* The chunked transfer coding (RFC 9112 7.1) of a body, decoded
 * as it arrives.  Start from a zeroed struct. */
struct http_chunked {
        int state;
        uint64_t left;   /* size of the chunk being read, or digits so far */
        size_t line_len; /* bytes of the current size or trailer line */
        unsigned digits;
};

/* Decodes what in[0..in_len) holds into out[0..out_cap): *used is the
 * input consumed, *made the body bytes written.  Returns 1 once the last
 * chunk and the trailer section are consumed (input after them is not
 * touched), 0 when it needs more input or more room, -1 when the coding is
 * malformed (a size that is not hex or overflows 64 bits, a line over 4096
 * bytes, data not followed by CRLF, a control character in a line). */
int http_chunked_decode(struct http_chunked *st, const char *in, size_t in_len, char *out,
                        size_t out_cap, size_t *used, size_t *made);

/* The path raw[0..len) percent-decoded (RFC 3986; '+' stays '+', as Go's
 * URL.Path): a new string, or NULL for a malformed escape ("%zz", "%4")
 * or one that decodes to NUL. */
char *http_path_unescape(const char *raw, size_t len);

/* Go's ServeMux cleanPath: path.Clean of p (duplicate slashes, "." and
 * ".." resolved, never above the root; "" is "/"), a trailing slash kept.
 * A new string. */
char *http_path_clean(const char *p);

/* The reason phrase of an HTTP status code ("Not Found"), "" for a code it
 * does not know.  Static string. */
const char *http_status_text(int code);

#endif
