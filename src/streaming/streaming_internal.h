/* SPDX-License-Identifier: Apache-2.0 */
/* The streaming server's parts (streaming.h): one SPDY connection
 * (spdy_conn.c), the remote command and port-forward sessions on it
 * (remotecommand.c, portforward.c). */
#ifndef CK_STREAMING_INTERNAL_H
#define CK_STREAMING_INTERNAL_H

#include "streaming/spdy.h"
#include "streaming/streaming.h"

#include <pthread.h>
#include <stdatomic.h>

/* The remote command protocols, newest first (upstream's
 * SupportedStreamingProtocols) and port-forward's. */
#define RC_PROTOCOL_V5 "v5.channel.k8s.io"
#define RC_PROTOCOL_V4 "v4.channel.k8s.io"
#define RC_PROTOCOL_V3 "v3.channel.k8s.io"
#define RC_PROTOCOL_V2 "v2.channel.k8s.io"
#define RC_PROTOCOL_V1 "channel.k8s.io"
#define PF_PROTOCOL_V1 "portforward.k8s.io"

/* One SPDY connection on a hijacked socket: frames read by one thread,
 * written by any under the write lock. */
struct spdy_conn {
        int fd;
        struct spdy_codec codec;
        pthread_mutex_t wlock; /* guards codec.out and the socket's writes */
        uint8_t *rbuf;         /* bytes read and not yet parsed */
        size_t rlen, rcap;
        size_t taken;            /* the bytes of the frame last returned (borrowed by it) */
        atomic_bool broken;      /* a write failed: the peer is gone */
        int64_t idle_ms;         /* the session ends after this long with nothing read
                                  * nor written (0: never) */
        _Atomic int64_t last_ms; /* the last frame read or written (fs_now_mono_ms) */
};

/* pending: bytes the client sent after its request head; idle_ms: how
 * long a read waits for the peer's next frame by default (upstream's
 * stream idle timeout).  Makes fd blocking, with TCP keep-alive. */
int spdy_conn_init(struct spdy_conn *c, int fd, const char *pending, size_t pending_len,
                   int64_t idle_ms, ck_error_t *err);
void spdy_conn_clear(struct spdy_conn *c);
/* The next frame: 1 with *f (spdy_frame_clear it; its data borrowed
 * until the next call), 0 at EOF, -1 with err (a read error, a protocol
 * error, a frame over 1 MiB, or deadline_ms (fs_now_mono_ms) passed; 0:
 * the connection's idle timeout, nothing read nor written for that long). */
int spdy_conn_read(struct spdy_conn *c, struct spdy_frame *f, int64_t deadline_ms, ck_error_t *err);
/* Each writes one frame (data larger than a frame is split); 0, or -1
 * once the peer is gone. */
int spdy_conn_reply(struct spdy_conn *c, uint32_t stream_id);
int spdy_conn_data(struct spdy_conn *c, uint32_t stream_id, const void *buf, size_t len, bool fin);
int spdy_conn_rst(struct spdy_conn *c, uint32_t stream_id, uint32_t status);
int spdy_conn_ping(struct spdy_conn *c, uint32_t id);
int spdy_conn_goaway(struct spdy_conn *c);

/* A hijacked connection made ready (spdy_conn.c): blocking, with TCP
 * keep-alive, and a read buffer holding what came after the request head
 * (pending). */
int streaming_conn_setup(int fd, const char *pending, size_t pending_len, uint8_t **rbuf,
                         size_t *rlen, size_t *rcap, const char *what, ck_error_t *err);
/* A connection's idle timeout: idle_ms (0: none) after last_ms, the last
 * frame read or written (fs_now_mono_ms), which other threads move on. */
struct streaming_idle {
        _Atomic int64_t *last_ms;
        int64_t idle_ms;
};

/* Waits until fd has bytes and appends them to buf[*len..cap) (cap >
 * *len): 1 when some came, 0 at EOF, -1 with err (what names the protocol)
 * on a read error, once deadline_ms (fs_now_mono_ms) passed or, when it is
 * 0, the idle timeout (idle, may be NULL: none) has (status ETIMEDOUT), or
 * when wake (-1: none) is readable (ECANCELED). */
int streaming_recv(int fd, int wake, uint8_t *buf, size_t *len, size_t cap, int64_t deadline_ms,
                   const struct streaming_idle *idle, const char *what, ck_error_t *err);

/* One WebSocket connection (websocket.c) on a hijacked socket, with
 * Kubernetes' channel framing: messages read by one thread, written by
 * any under the write lock. */
struct ws_conn {
        int fd;
        bool base64; /* base64.channel.k8s.io: text messages, a digit channel */
        pthread_mutex_t wlock;
        uint8_t *rbuf; /* bytes read and not yet parsed */
        size_t rlen, rcap;
        uint8_t *msg; /* the message being joined (its fragments) */
        size_t msg_len, msg_cap;
        char *decoded;           /* the last base64 message's bytes */
        atomic_bool broken;      /* a write failed: the peer is gone */
        bool close_sent;         /* our close frame went out (under wlock): no more data */
        int64_t idle_ms;         /* the session ends after this long with nothing read
                                  * nor written (0: never) */
        _Atomic int64_t last_ms; /* the last frame read or written (fs_now_mono_ms) */
        int wake_fd;             /* readable: a read ends with ECANCELED (-1: none) */
};

/* One frame as parsed: data points into the buffer, unmasked in place. */
struct ws_frame {
        bool fin;
        uint8_t opcode;
        uint8_t *data;
        size_t len;
};

/* Sec-WebSocket-Accept for a client's Sec-WebSocket-Key: a new string,
 * NULL only if the digest fails. */
char *ws_accept_key(const char *key);
/* Parses one client frame at buf (unmasking its payload in place): the
 * bytes it took, 0 when more are needed (*need: how many in all), -1 with
 * err for a protocol error (unmasked, reserved bits, an unknown opcode, a
 * long or fragmented control frame, a payload over 1 MiB). */
ssize_t ws_parse_frame(uint8_t *buf, size_t len, struct ws_frame *f, size_t *need, ck_error_t *err);
/* As spdy_conn_init, base64 for base64.channel.k8s.io. */
int ws_conn_init(struct ws_conn *c, int fd, const char *pending, size_t pending_len, bool base64,
                 int64_t idle_ms, ck_error_t *err);
void ws_conn_clear(struct ws_conn *c);
/* The next message: 1 with its channel (0xff: a v5 close signal, the
 * channel it closes in data[0]; -1 for an empty message, or a base64 one
 * that does not decode: to be skipped) and data (borrowed until the next call),
 * 0 when the client closed (its close answered) or hung up, -1 with err
 * (a protocol error, deadline_ms passed; 0: the idle timeout, nothing
 * read nor written for that long).  Pings are answered on the way. */
int ws_conn_read(struct ws_conn *c, int *channel, const uint8_t **data, size_t *len,
                 int64_t deadline_ms, ck_error_t *err);
/* One message on channel; 0, or -1 once the peer is gone or our close
 * was sent. */
int ws_conn_write(struct ws_conn *c, uint8_t channel, const void *buf, size_t len);
/* The close frame (once): 0 or -1. */
int ws_conn_close(struct ws_conn *c, uint16_t code);

/* What a token stood for. */
enum streaming_kind { STREAMING_EXEC, STREAMING_ATTACH, STREAMING_PORT_FORWARD };

struct streaming_request {
        enum streaming_kind kind;
        char *id; /* the container (exec, attach) or the sandbox (port-forward) */
        char **cmd;
        bool tty, in, out, errs;
        int32_t *ports; /* port-forward's, for a WebSocket session */
        size_t n_ports;
};

void streaming_request_free(struct streaming_request *r);

/* Runs an exec or attach session on an upgraded connection, protocol the
 * negotiated one ("" for none). */
void rc_serve(const struct streaming_runtime *rt, const struct streaming_request *r,
              struct spdy_conn *c, const char *protocol, int creation_timeout_ms);
/* The same on a WebSocket: protocol the negotiated one ("" for none). */
void rc_serve_ws(const struct streaming_runtime *rt, const struct streaming_request *r,
                 struct ws_conn *c, const char *protocol);
/* Runs a port-forward session. */
void pf_serve(const struct streaming_runtime *rt, const struct streaming_request *r,
              struct spdy_conn *c);
/* The same on a WebSocket: a data and an error channel per port of the
 * request (2i, 2i + 1), each opened with the port (little-endian uint16). */
void pf_serve_ws(const struct streaming_runtime *rt, const struct streaming_request *r,
                 struct ws_conn *c);

/* The Status JSON a v4 client reads on the error stream: Success (message
 * NULL), NonZeroExitCode (exit_code > 0, its message), or InternalError
 * (message).  A new string. */
char *rc_status_json(int exit_code, const char *message);

#endif
