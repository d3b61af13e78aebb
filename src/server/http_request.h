/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A small, pure HTTP/1.x request-head parser for the kubelet's read-only
 * port (RFC 9112 request line and header fields; no body support: the
 * server answers one request per connection and closes it).
 *
 * Pure: no allocation, no I/O, safe on arbitrary bytes (fuzzed by
 * test/fuzz/fuzz_http_request.c).
 */
#ifndef CK_SERVER_HTTP_REQUEST_H
#define CK_SERVER_HTTP_REQUEST_H

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

/* The reason phrase of an HTTP status code ("Not Found"), "" for a code it
 * does not know.  Static string. */
const char *http_status_text(int code);

#endif
