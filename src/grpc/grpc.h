/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A minimal gRPC client: unary and server-streaming calls over HTTP/2 (h2c,
 * prior knowledge) on a unix socket, the transport of the CRI client and of
 * the device plugins (or over TCP, for the gRPC health probes).
 *
 * Two halves:
 *  - grpc_frame.c: pure functions over bytes and strings (the 5-byte message
 *    prefix, grpc-timeout, grpc-message percent-decoding, the response state
 *    machine that turns headers, DATA and trailers into a message or a gRPC
 *    status).  No I/O; unit tested and fuzzed.
 *  - grpc_conn.c: the connection (socket, nghttp2 client session, deadlines,
 *    reconnects).
 *
 * Errors: "rpc error <code>: <grpc-message>" with the gRPC status code in
 * err->code; transport failures (connect, EOF) carry UNAVAILABLE (14) and the
 * errno in err->status.
 */
#ifndef CK_GRPC_GRPC_H
#define CK_GRPC_GRPC_H

#include "util/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* gRPC status codes (grpc/doc/statuscodes.md). */
enum grpc_code {
        GRPC_OK = 0,
        GRPC_CANCELLED = 1,
        GRPC_UNKNOWN = 2,
        GRPC_INVALID_ARGUMENT = 3,
        GRPC_DEADLINE_EXCEEDED = 4,
        GRPC_NOT_FOUND = 5,
        GRPC_ALREADY_EXISTS = 6,
        GRPC_PERMISSION_DENIED = 7,
        GRPC_RESOURCE_EXHAUSTED = 8,
        GRPC_FAILED_PRECONDITION = 9,
        GRPC_ABORTED = 10,
        GRPC_OUT_OF_RANGE = 11,
        GRPC_UNIMPLEMENTED = 12,
        GRPC_INTERNAL = 13,
        GRPC_UNAVAILABLE = 14,
        GRPC_DATA_LOSS = 15,
        GRPC_UNAUTHENTICATED = 16,
};

/* The largest response message accepted (the upstream kubelet's CRI limit). */
#define GRPC_MAX_MESSAGE_SIZE (16u * 1024 * 1024)
#define GRPC_PREFIX_SIZE 5

/* ---- Pure helpers (grpc_frame.c) ---- */

/* Writes the 5-byte prefix of an uncompressed message of `len` bytes. */
void grpc_write_message_prefix(uint8_t out[GRPC_PREFIX_SIZE], uint32_t len);

/* Parses a message prefix from buf[0..len).  Returns 0 when fewer than 5 bytes
 * are available, 1 with *msg_len set when the prefix is complete, < 0 (err
 * with code INTERNAL / RESOURCE_EXHAUSTED) for a compressed message (we never
 * negotiate compression), an unknown flag or a message larger than max. */
int grpc_parse_message_prefix(const uint8_t *buf, size_t len, uint32_t max, uint32_t *msg_len,
                              ck_error_t *err);

/* Formats a grpc-timeout header value ("120000m"): at most 8 digits, the
 * finest unit that fits (n, u, m, S, M, H), rounded up.  timeout_ms > 0.
 * buf must hold at least 10 bytes. */
void grpc_format_timeout(int64_t timeout_ms, char *buf, size_t size);

/* Parses a grpc-timeout value into milliseconds (rounded up).  < 0 when the
 * value is malformed (err with INTERNAL). */
int grpc_parse_timeout(const char *s, size_t len, int64_t *timeout_ms, ck_error_t *err);

/* Percent-decodes a grpc-message value.  Malformed escapes are kept as they
 * are (the gRPC spec: never drop a status message).  Returns a new string. */
char *grpc_percent_decode(const char *s, size_t len);

/* Percent-encodes a grpc-message value: bytes outside 0x20..0x7e, and '%'.
 * Returns a new string. */
char *grpc_percent_encode(const char *s);

/* Go's name of a code (codes.Code.String(): "Unknown", "Unavailable"...),
 * for messages in grpc-go's words ("rpc error: code = Unknown desc = ..."). */
const char *grpc_code_name(int code);

/* The gRPC code for an HTTP status that is not 200 (grpc/doc/http-grpc-status-mapping.md). */
int grpc_code_from_http_status(int http_status);

/* The gRPC code for a stream reset with this HTTP/2 error code. */
int grpc_code_from_h2_error(uint32_t h2_error);

struct grpc_message {
        uint8_t *data;
        uint32_t len;
};

/* The response of one call, assembled from what the peer sends: one
 * message (unary) or a queue of them (a server-streaming call). */
struct grpc_response {
        uint32_t max_message;
        bool streaming;   /* messages are queued, any number of them */
        int http_status;  /* 0 until :status was seen */
        bool have_status; /* grpc-status was seen */
        int status;       /* grpc-status */
        char *message;    /* grpc-message, decoded; owned */
        bool bad_content_type;
        uint8_t prefix[GRPC_PREFIX_SIZE];
        size_t prefix_len;
        uint8_t *body;              /* the message being reassembled / complete; owned */
        uint32_t body_len;          /* its length from the prefix */
        uint32_t body_got;          /* bytes received so far */
        bool have_message;          /* one complete message received */
        struct grpc_message *queue; /* streaming: complete messages not yet taken */
        size_t q_head, q_len, q_cap;
};

void grpc_response_init(struct grpc_response *r, uint32_t max_message);
/* For a server-streaming call. */
void grpc_response_init_stream(struct grpc_response *r, uint32_t max_message);
void grpc_response_free(struct grpc_response *r);

/* Streaming: the oldest complete message not yet taken (*msg: free()), or
 * false. */
bool grpc_response_take(struct grpc_response *r, uint8_t **msg, size_t *msg_len);

/* Streaming: how the stream ended.  0: the server ended it with status OK
 * (and no message was cut); < 0 with the status as for a unary call. */
int grpc_response_stream_end(const struct grpc_response *r, ck_error_t *err);

/* One header field of the response headers or trailers (both go here: a
 * "trailers-only" response carries grpc-status in its only HEADERS block).
 * Never fails: unknown fields are ignored. */
void grpc_response_on_header(struct grpc_response *r, const char *name, size_t name_len,
                             const char *value, size_t value_len);

/* DATA payload bytes, in order.  A message may span frames and a frame may
 * hold several prefixes.  < 0 on a protocol violation (compressed or
 * oversized message, a second message in a unary response). */
int grpc_response_on_data(struct grpc_response *r, const uint8_t *data, size_t len,
                          ck_error_t *err);

/* The end of the stream: the call's outcome.  On success (grpc-status 0 and
 * exactly one message) returns 0 and hands the message to *msg (new buffer,
 * never NULL, free()) / *msg_len.  Otherwise < 0 with "rpc error <code>: <msg>". */
int grpc_response_finish(struct grpc_response *r, uint8_t **msg, size_t *msg_len, ck_error_t *err);

/* ---- The connection (grpc_conn.c) ---- */

struct grpc_conn;

/* A connection to the gRPC server on the unix socket `unix_path` (copied).
 * Does not connect yet: the first call does. */
struct grpc_conn *grpc_conn_new(const char *unix_path);
/* A connection to a gRPC server over TCP (h2c, prior knowledge): `host` is an
 * IP address or a name (resolved at connect time), `port` 1..65535.  Used by
 * the prober's gRPC health checks.  :authority is "host:port" (IPv6 in
 * brackets).  Does not connect yet: the first call does, within its deadline. */
struct grpc_conn *grpc_conn_new_tcp(const char *host, int port);
/* Replaces the user-agent header sent with each call (copied; default
 * "grpc-c-ckubelet/<version>"). */
void grpc_conn_set_user_agent(struct grpc_conn *c, const char *user_agent);
void grpc_conn_free(struct grpc_conn *c);

/* One unary call: `path` is "/package.Service/Method", req/req_len the
 * serialized request.  timeout_ms > 0 is the call's deadline (sent as
 * grpc-timeout and enforced locally: on expiry the stream is reset and the
 * call fails with DEADLINE_EXCEEDED); <= 0 means no deadline.
 *
 * Reconnects when the connection is gone (GOAWAY, EOF, error), and retries
 * once on a fresh connection when the call failed before the server could
 * have seen it.  On success *resp is a new buffer (free()).
 *
 * Thread: one call at a time per connection (the caller owns it). */
int grpc_unary(struct grpc_conn *c, const char *path, const uint8_t *req, size_t req_len,
               int64_t timeout_ms, uint8_t **resp, size_t *resp_len, ck_error_t *err);

/* Connects now, when not connected, retrying a socket that does not exist
 * yet or refuses (as grpc-go's blocking dial) until timeout_ms passed.
 * Errors: "failed to dial: <cause>" with UNAVAILABLE, or DEADLINE_EXCEEDED. */
int grpc_conn_dial(struct grpc_conn *c, int64_t timeout_ms, ck_error_t *err);

/* A server-streaming call: sends the request and returns; the connection
 * then serves this stream alone until it ends or is cancelled (no unary
 * call meanwhile).  No deadline: the stream lasts as long as the server
 * keeps it. */
int grpc_stream_start(struct grpc_conn *c, const char *path, const uint8_t *req, size_t req_len,
                      ck_error_t *err);

/* The next message of the stream: 1 with *msg (free()), 0 when none came
 * within timeout_ms (< 0: wait as long as it takes), -1 when the stream
 * ended: err says how, code GRPC_OK when the server ended it cleanly.
 * While waiting, flow control windows are replenished and PINGs answered. */
int grpc_stream_recv(struct grpc_conn *c, int64_t timeout_ms, uint8_t **msg, size_t *msg_len,
                     ck_error_t *err);

/* Cancels the stream in flight (RST_STREAM) and closes the connection. */
void grpc_stream_cancel(struct grpc_conn *c);

/* Whether the connection is currently open (for tests and diagnostics). */
bool grpc_conn_is_connected(const struct grpc_conn *c);

/* Tests only: reconnect once the next stream id would exceed `max` (default:
 * near 2^31, the HTTP/2 limit). */
void grpc_conn_set_max_stream_id(struct grpc_conn *c, int32_t max);

#endif
