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
        size_t taken;       /* the bytes of the frame last returned (borrowed by it) */
        atomic_bool broken; /* a write failed: the peer is gone */
        int64_t idle_ms;    /* a read waits at most this long (0: forever) */
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
 * the connection's idle timeout from now). */
int spdy_conn_read(struct spdy_conn *c, struct spdy_frame *f, int64_t deadline_ms, ck_error_t *err);
/* Each writes one frame (data larger than a frame is split); 0, or -1
 * once the peer is gone. */
int spdy_conn_reply(struct spdy_conn *c, uint32_t stream_id);
int spdy_conn_data(struct spdy_conn *c, uint32_t stream_id, const void *buf, size_t len, bool fin);
int spdy_conn_rst(struct spdy_conn *c, uint32_t stream_id, uint32_t status);
int spdy_conn_ping(struct spdy_conn *c, uint32_t id);
int spdy_conn_goaway(struct spdy_conn *c);

/* What a token stood for. */
enum streaming_kind { STREAMING_EXEC, STREAMING_ATTACH, STREAMING_PORT_FORWARD };

struct streaming_request {
        enum streaming_kind kind;
        char *id; /* the container (exec, attach) or the sandbox (port-forward) */
        char **cmd;
        bool tty, in, out, errs;
};

void streaming_request_free(struct streaming_request *r);

/* Runs an exec or attach session on an upgraded connection, protocol the
 * negotiated one ("" for none). */
void rc_serve(const struct streaming_runtime *rt, const struct streaming_request *r,
              struct spdy_conn *c, const char *protocol, int creation_timeout_ms);
/* Runs a port-forward session. */
void pf_serve(const struct streaming_runtime *rt, const struct streaming_request *r,
              struct spdy_conn *c);

/* The Status JSON a v4 client reads on the error stream: Success (message
 * NULL), NonZeroExitCode (exit_code > 0, its message), or InternalError
 * (message).  A new string. */
char *rc_status_json(int exit_code, const char *message);

#endif
