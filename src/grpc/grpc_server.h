/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A minimal gRPC server: unary and server-streaming methods over HTTP/2
 * (h2c with prior knowledge, as grpc-go clients speak on unix sockets) on a
 * unix socket.  What the kubelet serves itself: the device plugin
 * Registration service (tests also play device plugins with it).
 *
 * One thread accepts, one thread per connection runs its nghttp2 server
 * session.  A unary method's handler runs on a thread of its own, so the
 * calls of one connection run side by side (a client such as the kubelet
 * multiplexes all its CRI calls on one connection: a StopContainer that
 * waits out a grace period holds none of the others); handlers must be
 * thread-safe.  A server-streaming method runs on its connection's thread.
 * Requests over 4 MiB (grpc-go's default limit) are refused with
 * RESOURCE_EXHAUSTED; an unknown method gets UNIMPLEMENTED.
 */
#ifndef CK_GRPC_GRPC_SERVER_H
#define CK_GRPC_GRPC_SERVER_H

#include "util/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest request message a server accepts (grpc-go's default). */
#define GRPC_SERVER_MAX_MESSAGE (4u * 1024 * 1024)

/* A unary method: req is the request message (without its prefix).
 * Returns 0 with *resp (malloc'ed, may be NULL when *resp_len is 0), or -1
 * with err: its code is the gRPC status (0 counts as UNKNOWN, as grpc-go
 * makes of a plain error), its message the grpc-message.  timeout_ms is
 * the client's grpc-timeout (0: none). */
typedef int (*grpc_method_fn)(void *ctx, const uint8_t *req, size_t req_len, int64_t timeout_ms,
                              uint8_t **resp, size_t *resp_len, ck_error_t *err);

/* A server-streaming method: sends its messages with
 * grpc_server_stream_send, on its connection's thread, then returns 0 (the
 * stream ends with status OK) or -1 with err (as for a unary method). */
struct grpc_server_stream;
typedef int (*grpc_stream_method_fn)(void *ctx, const uint8_t *req, size_t req_len,
                                     struct grpc_server_stream *s, ck_error_t *err);

struct grpc_method {
        const char *path;             /* "/package.Service/Method" */
        grpc_method_fn fn;            /* a unary method, or */
        grpc_stream_method_fn stream; /* a server-streaming one */
        void *ctx;
};

/* Sends one message of a server-streaming method.  -1 once the client is
 * gone (it reset the stream or closed the connection) or the server is
 * stopping: the method should return then. */
int grpc_server_stream_send(struct grpc_server_stream *s, const uint8_t *msg, size_t len);

/* Whether the stream is still wanted (the client did not reset it or go
 * away, the server is not stopping): reads what the client sent meanwhile,
 * waiting up to wait_ms for it. */
bool grpc_server_stream_alive(struct grpc_server_stream *s, int wait_ms);

struct grpc_server;

/* Listens on unix_path, which must not exist (the caller removes what a
 * previous run left), and serves methods (an array of n, borrowed for the
 * server's lifetime) from threads of its own. */
int grpc_server_start(const char *unix_path, const struct grpc_method *methods, size_t n,
                      struct grpc_server **out, ck_error_t *err);

/* Stops accepting, closes the connections, waits for their threads (the
 * handlers in progress finish first), removes the socket file. */
void grpc_server_stop(struct grpc_server *s);

#endif
