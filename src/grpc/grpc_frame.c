/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gRPC over HTTP/2, the byte-level half (grpc/doc/PROTOCOL-HTTP2.md): the
 * length-prefixed message framing, grpc-timeout, grpc-message and the mapping
 * of what a response carried to a gRPC status.  No I/O here.
 */
#include "grpc/grpc.h"
#include "util/xalloc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void grpc_write_message_prefix(uint8_t out[GRPC_PREFIX_SIZE], uint32_t len)
{
        out[0] = 0; /* not compressed */
        out[1] = (uint8_t)(len >> 24);
        out[2] = (uint8_t)(len >> 16);
        out[3] = (uint8_t)(len >> 8);
        out[4] = (uint8_t)len;
}

int grpc_parse_message_prefix(const uint8_t *buf, size_t len, uint32_t max, uint32_t *msg_len,
                              ck_error_t *err)
{
        if (len < GRPC_PREFIX_SIZE)
                return 0;
        if (buf[0] == 1)
                return ck_error_make_code(err, GRPC_INTERNAL,
                                          "rpc error %d: compressed response message, but no "
                                          "compression was negotiated",
                                          GRPC_INTERNAL);
        if (buf[0] != 0)
                return ck_error_make_code(err, GRPC_INTERNAL,
                                          "rpc error %d: invalid message flags 0x%02x",
                                          GRPC_INTERNAL, buf[0]);
        uint32_t n = (uint32_t)buf[1] << 24 | (uint32_t)buf[2] << 16 | (uint32_t)buf[3] << 8 |
                     (uint32_t)buf[4];
        if (n > max)
                return ck_error_make_code(err, GRPC_RESOURCE_EXHAUSTED,
                                          "rpc error %d: received message larger than max (%" PRIu32
                                          " vs. %" PRIu32 ")",
                                          GRPC_RESOURCE_EXHAUSTED, n, max);
        *msg_len = n;
        return 1;
}

void grpc_format_timeout(int64_t timeout_ms, char *buf, size_t size)
{
        /* The spec allows at most 8 digits: pick the finest unit that fits. */
        static const struct {
                char unit;
                int64_t ms;
        } units[] = {{'m', 1}, {'S', 1000}, {'M', 60 * 1000}, {'H', 3600 * 1000}};
        const int64_t max_value = 99999999;
        if (timeout_ms < 1)
                timeout_ms = 1;
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
                int64_t v = timeout_ms / units[i].ms + (timeout_ms % units[i].ms != 0);
                if (v <= max_value) {
                        snprintf(buf, size, "%" PRId64 "%c", v, units[i].unit);
                        return;
                }
        }
        snprintf(buf, size, "%" PRId64 "H", max_value);
}

int grpc_parse_timeout(const char *s, size_t len, int64_t *timeout_ms, ck_error_t *err)
{
        if (len < 2 || len > 9)
                return ck_error_make_code(err, GRPC_INTERNAL, "malformed grpc-timeout `%.*s`",
                                          (int)(len > 16 ? 16 : len), s);
        int64_t v = 0;
        for (size_t i = 0; i + 1 < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return ck_error_make_code(err, GRPC_INTERNAL,
                                                  "malformed grpc-timeout `%.*s`", (int)len, s);
                v = v * 10 + (s[i] - '0');
        }
        switch (s[len - 1]) {
        case 'H':
                *timeout_ms = v * 3600 * 1000;
                return 0;
        case 'M':
                *timeout_ms = v * 60 * 1000;
                return 0;
        case 'S':
                *timeout_ms = v * 1000;
                return 0;
        case 'm':
                *timeout_ms = v;
                return 0;
        case 'u':
                *timeout_ms = (v + 999) / 1000;
                return 0;
        case 'n':
                *timeout_ms = (v + 999999) / 1000000;
                return 0;
        default:
                return ck_error_make_code(err, GRPC_INTERNAL, "malformed grpc-timeout `%.*s`",
                                          (int)len, s);
        }
}

static int hex_value(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

char *grpc_percent_decode(const char *s, size_t len)
{
        char *out = xmalloc(len + 1);
        size_t o = 0;
        for (size_t i = 0; i < len; i++) {
                if (s[i] == '%' && i + 2 < len) {
                        int hi = hex_value(s[i + 1]), lo = hex_value(s[i + 2]);
                        if (hi >= 0 && lo >= 0) {
                                out[o++] = (char)(hi << 4 | lo);
                                i += 2;
                                continue;
                        }
                }
                out[o++] = s[i];
        }
        out[o] = '\0';
        return out;
}

char *grpc_percent_encode(const char *s)
{
        static const char hex[] = "0123456789ABCDEF";
        size_t n = strlen(s);
        char *out = xmalloc(n * 3 + 1);
        size_t o = 0;
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)s[i];
                if (c >= 0x20 && c <= 0x7e && c != '%') {
                        out[o++] = (char)c;
                        continue;
                }
                out[o++] = '%';
                out[o++] = hex[c >> 4];
                out[o++] = hex[c & 0xf];
        }
        out[o] = '\0';
        return out;
}

const char *grpc_code_name(int code)
{
        /* Go's codes.Code.String() */
        static const char *const names[] = {
            "OK",
            "Canceled",
            "Unknown",
            "InvalidArgument",
            "DeadlineExceeded",
            "NotFound",
            "AlreadyExists",
            "PermissionDenied",
            "ResourceExhausted",
            "FailedPrecondition",
            "Aborted",
            "OutOfRange",
            "Unimplemented",
            "Internal",
            "Unavailable",
            "DataLoss",
            "Unauthenticated",
        };
        if (code >= 0 && (size_t)code < sizeof(names) / sizeof(names[0]))
                return names[code];
        return "Unknown";
}

int grpc_code_from_http_status(int http_status)
{
        switch (http_status) {
        case 400:
                return GRPC_INTERNAL;
        case 401:
                return GRPC_UNAUTHENTICATED;
        case 403:
                return GRPC_PERMISSION_DENIED;
        case 404:
                return GRPC_UNIMPLEMENTED;
        case 429:
        case 502:
        case 503:
        case 504:
                return GRPC_UNAVAILABLE;
        default:
                return GRPC_UNKNOWN;
        }
}

int grpc_code_from_h2_error(uint32_t h2_error)
{
        switch (h2_error) {
        case 0x7: /* REFUSED_STREAM: the server did not process it */
                return GRPC_UNAVAILABLE;
        case 0x8: /* CANCEL */
                return GRPC_CANCELLED;
        case 0xb: /* ENHANCE_YOUR_CALM */
                return GRPC_RESOURCE_EXHAUSTED;
        case 0xc: /* INADEQUATE_SECURITY */
                return GRPC_PERMISSION_DENIED;
        default:
                return GRPC_INTERNAL;
        }
}

void grpc_response_init(struct grpc_response *r, uint32_t max_message)
{
        memset(r, 0, sizeof(*r));
        r->max_message = max_message;
}

void grpc_response_init_stream(struct grpc_response *r, uint32_t max_message)
{
        grpc_response_init(r, max_message);
        r->streaming = true;
}

void grpc_response_free(struct grpc_response *r)
{
        free(r->message);
        free(r->body);
        for (size_t i = r->q_head; i < r->q_len; i++)
                free(r->queue[i].data);
        free(r->queue);
        memset(r, 0, sizeof(*r));
}

bool grpc_response_take(struct grpc_response *r, uint8_t **msg, size_t *msg_len)
{
        if (r->q_head == r->q_len)
                return false;
        *msg = r->queue[r->q_head].data;
        *msg_len = r->queue[r->q_head].len;
        if (++r->q_head == r->q_len)
                r->q_head = r->q_len = 0;
        return true;
}

/* A streamed message is complete: queue it. */
static void queue_message(struct grpc_response *r)
{
        if (r->q_len == r->q_cap) {
                r->q_cap = r->q_cap ? r->q_cap * 2 : 4;
                r->queue = xrealloc(r->queue, r->q_cap * sizeof(*r->queue));
        }
        r->queue[r->q_len++] = (struct grpc_message){.data = r->body, .len = r->body_len};
        r->body = NULL;
        r->body_len = r->body_got = 0;
}

static bool header_is(const char *name, size_t len, const char *want)
{
        return len == strlen(want) && memcmp(name, want, len) == 0;
}

/* A decimal number of at most 9 digits, else -1. */
static int parse_small_uint(const char *s, size_t len)
{
        if (len == 0 || len > 9)
                return -1;
        int v = 0;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -1;
                v = v * 10 + (s[i] - '0');
        }
        return v;
}

/* "application/grpc", optionally followed by "+proto" or ";params". */
static bool is_grpc_content_type(const char *v, size_t len)
{
        static const char base[] = "application/grpc";
        size_t n = sizeof(base) - 1;
        if (len < n || strncasecmp(v, base, n) != 0)
                return false;
        return len == n || v[n] == '+' || v[n] == ';';
}

void grpc_response_on_header(struct grpc_response *r, const char *name, size_t name_len,
                             const char *value, size_t value_len)
{
        if (header_is(name, name_len, ":status")) {
                int v = parse_small_uint(value, value_len);
                r->http_status = v > 0 ? v : -1;
        } else if (header_is(name, name_len, "grpc-status")) {
                r->have_status = true;
                r->status = parse_small_uint(value, value_len); /* -1: malformed */
        } else if (header_is(name, name_len, "grpc-message")) {
                free(r->message);
                r->message = grpc_percent_decode(value, value_len);
        } else if (header_is(name, name_len, "content-type")) {
                r->bad_content_type = !is_grpc_content_type(value, value_len);
        }
}

int grpc_response_on_data(struct grpc_response *r, const uint8_t *data, size_t len, ck_error_t *err)
{
        while (len > 0) {
                if (r->prefix_len < GRPC_PREFIX_SIZE) {
                        size_t n = GRPC_PREFIX_SIZE - r->prefix_len;
                        if (n > len)
                                n = len;
                        memcpy(r->prefix + r->prefix_len, data, n);
                        r->prefix_len += n;
                        data += n;
                        len -= n;
                        if (r->prefix_len < GRPC_PREFIX_SIZE)
                                break;
                        if (r->have_message && !r->streaming)
                                return ck_error_make_code(
                                    err, GRPC_INTERNAL,
                                    "rpc error %d: more than one message in a unary response",
                                    GRPC_INTERNAL);
                        uint32_t msg_len = 0;
                        if (grpc_parse_message_prefix(r->prefix, r->prefix_len, r->max_message,
                                                      &msg_len, err) < 0)
                                return -1;
                        free(r->body);
                        r->body = xmalloc(msg_len > 0 ? msg_len : 1);
                        r->body_len = msg_len;
                        r->body_got = 0;
                } else {
                        size_t n = r->body_len - r->body_got;
                        if (n > len)
                                n = len;
                        memcpy(r->body + r->body_got, data, n);
                        r->body_got += (uint32_t)n;
                        data += n;
                        len -= n;
                }
                if (r->body_got == r->body_len) {
                        r->have_message = true;
                        r->prefix_len = 0;
                        if (r->streaming)
                                queue_message(r);
                }
        }
        return 0;
}

/* The checks of a stream's end common to unary calls and streams: headers,
 * grpc-status, content-type, a cut message.  0 when the server ended it
 * with status OK. */
static int check_end(const struct grpc_response *r, ck_error_t *err)
{
        const char *m = r->message && r->message[0] ? r->message : "(no message)";
        if (r->http_status == 0)
                return ck_error_make_code(err, GRPC_INTERNAL,
                                          "rpc error %d: stream ended without response headers",
                                          GRPC_INTERNAL);
        if (!r->have_status && r->http_status != 200) {
                int code = grpc_code_from_http_status(r->http_status);
                return ck_error_make_code(err, code, "rpc error %d: unexpected HTTP status code %d",
                                          code, r->http_status);
        }
        if (!r->have_status)
                return ck_error_make_code(err, GRPC_INTERNAL,
                                          "rpc error %d: stream ended without grpc-status",
                                          GRPC_INTERNAL);
        if (r->status < 0)
                return ck_error_make_code(err, GRPC_INTERNAL, "rpc error %d: malformed grpc-status",
                                          GRPC_INTERNAL);
        if (r->status != GRPC_OK)
                return ck_error_make_code(err, r->status, "rpc error %d: %s", r->status, m);
        if (r->bad_content_type)
                return ck_error_make_code(err, GRPC_INTERNAL,
                                          "rpc error %d: unexpected content-type in response",
                                          GRPC_INTERNAL);
        if (r->prefix_len > 0 || (r->streaming && r->body != NULL))
                return ck_error_make_code(
                    err, GRPC_INTERNAL, "rpc error %d: response message truncated", GRPC_INTERNAL);
        return 0;
}

int grpc_response_stream_end(const struct grpc_response *r, ck_error_t *err)
{
        return check_end(r, err);
}

int grpc_response_finish(struct grpc_response *r, uint8_t **msg, size_t *msg_len, ck_error_t *err)
{
        if (check_end(r, err) < 0)
                return -1;
        if (!r->have_message)
                return ck_error_make_code(
                    err, GRPC_INTERNAL, "rpc error %d: response without a message", GRPC_INTERNAL);
        *msg = r->body;
        *msg_len = r->body_len;
        r->body = NULL;
        r->have_message = false;
        return 0;
}
