/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A CRI runtime's streaming server, as upstream's
 * k8s.io/kubelet/pkg/cri/streaming: the URLs that the CRI Exec, Attach and
 * PortForward calls answer with, and the server behind them that speaks
 * Kubernetes' stream protocols to whoever follows such a URL (the kubelet
 * proxying kubectl through the apiserver, crictl, critest).
 *
 * A CRI call registers its request and gets a URL with a token
 * (http://<address>:<port>/exec/<token>); the token is good for one use
 * within a minute, and at most 1000 wait at once (ResourceExhausted).
 *
 * The server speaks SPDY/3.1 (HTTP/1.1 Upgrade), what the kubelet and
 * every Go client of client-go's SPDY executor and dialer use:
 *   - exec and attach: the remote command protocols v4.channel.k8s.io
 *     (the exit status as a JSON Status on the error stream), v3 (with
 *     terminal resizing), v2 and channel.k8s.io;
 *   - port-forward: portforward.k8s.io, a data and an error stream per
 *     forwarded connection, paired by their requestID header.
 * and WebSocket (RFC 6455), as upstream's wsstream, one channel per
 * message's first byte:
 *   - exec and attach: channel.k8s.io, base64.channel.k8s.io, their v4
 *     forms (upstream's), and v5.channel.k8s.io (v4 with the client's
 *     close signal, what client-go's WebSocket executor and crictl
 *     --transport=websocket speak); stdin 0, stdout 1, stderr 2, error 3,
 *     resize 4;
 *   - port-forward: channel.k8s.io's v4 forms, a data and an error channel
 *     per port of the CRI request (2i, 2i + 1), each opened with its port.
 *     (SPDY tunnelled in WebSocket, the apiserver's PortForwardWebsockets
 *     protocol, is not served: nor is it by upstream's runtimes.)
 * Plain HTTP only (the server listens on loopback, as containerd's).
 *
 * The runtime does the work behind a vtable (struct streaming_runtime).
 */
#ifndef CK_STREAMING_STREAMING_H
#define CK_STREAMING_STREAMING_H

#include "util/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a runtime's exec or attach works with, for one session. */
struct streaming_io {
        bool tty;
        bool stdout_wanted, stderr_wanted;
        /* The client's stdin: read it until EOF (the client closed it);
         * -1 without stdin. */
        int stdin_fd;
        /* With a TTY (over SPDY from v3 on, over WebSocket on every
         * version): struct streaming_size records, one
         * per resize the client sends (the first soon after the start);
         * -1 otherwise. */
        int resize_fd;
        /* Readable once the client has gone: the runtime stops the session
         * (the command itself may go on, as upstream's). */
        int done_fd;
        /* Sends buf to the client's stdout (stream 1) or stderr (stream 2).
         * 0, or < 0 when the client has gone.  The runtime's thread. */
        int (*write)(struct streaming_io *io, int stream, const void *buf, size_t len);
};

struct streaming_size {
        uint16_t width, height;
};

struct streaming_runtime {
        /* Runs cmd (NULL-terminated) in the container with io and waits for
         * it: 0 with *exit_code when it ran and exited, or -1 with err
         * (it did not run, or the session broke). */
        int (*exec)(void *ctx, const char *container_id, char *const *cmd, struct streaming_io *io,
                    int *exit_code, ck_error_t *err);
        /* Attaches io to the running container's main process until the
         * container or the client ends it. */
        int (*attach)(void *ctx, const char *container_id, struct streaming_io *io,
                      ck_error_t *err);
        /* A connected stream socket (O_CLOEXEC) to port on the loopback of
         * the sandbox's network namespace. */
        int (*port_dial)(void *ctx, const char *sandbox_id, int32_t port, int *fd, ck_error_t *err);
        void *ctx;
};

struct streaming_options {
        const char *address; /* the host the URLs name and the server binds: "127.0.0.1" */
        int port;            /* 0: an ephemeral port */
        /* How long a client may take to open its streams (upstream's
         * StreamCreationTimeout, 30 s); 0: that default. */
        int stream_creation_timeout_ms;
        /* A session ends when nothing is read nor written for this long
         * (Go's clients also ping every 5 s; upstream's StreamIdleTimeout,
         * 4 h); 0: that default. */
        int64_t stream_idle_timeout_ms;
};

struct streaming_server;

/* Binds and serves; rt is copied (its ctx must outlive the server). */
int streaming_server_start(const struct streaming_options *o, const struct streaming_runtime *rt,
                           struct streaming_server **out, ck_error_t *err);
/* Closes every session (the runtime's calls see done_fd) and waits for
 * them, then frees s.  NULL: no-op. */
void streaming_server_stop(struct streaming_server *s);
int streaming_server_port(struct streaming_server *s);

/* The URL for a CRI Exec (cmd NULL-terminated), Attach or PortForward
 * (ports: the request's, what a WebSocket session forwards).
 * Errors carry a gRPC code (err->code): InvalidArgument for a request
 * upstream refuses (no stream at all, tty with stderr, no container or
 * sandbox ID, an empty command), ResourceExhausted with too many waiting.
 * Any thread. */
int streaming_get_exec(struct streaming_server *s, const char *container_id, char *const *cmd,
                       bool tty, bool in, bool out, bool errs, char **url, ck_error_t *err);
int streaming_get_attach(struct streaming_server *s, const char *container_id, bool tty, bool in,
                         bool out, bool errs, char **url, ck_error_t *err);
int streaming_get_port_forward(struct streaming_server *s, const char *sandbox_id,
                               const int32_t *ports, size_t n_ports, char **url, ck_error_t *err);

#endif
