/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unix socket connections, and TCP connections as Go's net.Dialer makes them: each resolved address
 * in turn, a connect bounded by a deadline, TCP_NODELAY set (Go's default: small writes of a stream
 * or an RPC are not held back by Nagle's algorithm waiting for the peer's delayed ACK).
 */
#ifndef CK_UTIL_NETUTIL_H
#define CK_UTIL_NETUTIL_H

#include "util/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Connects to host:port (numeric port) by the first address that answers
 * before deadline_ms (CLOCK_MONOTONIC ms as fs_now_mono_ms; 0: no limit).
 * The descriptor is O_CLOEXEC, non-blocking if nonblock.  A descriptor,
 * or -1 with err set ("connect `host:port`", errno as its status). */
int net_tcp_dial(const char *host, const char *port, int64_t deadline_ms, bool nonblock,
                 ck_error_t *err);

/* Connects to the unix socket at path before deadline_ms (a full listen
 * backlog is retried every 10 ms until then).  The descriptor is
 * O_CLOEXEC and non-blocking.  A descriptor, or -1 with err set
 * ("connect `path`", errno as its status). */
int net_unix_dial(const char *path, int64_t deadline_ms, ck_error_t *err);

/* TCP_NODELAY on a connected TCP socket (a no-op on other sockets). */
void net_set_nodelay(int fd);

/* Sends all of buf on the socket fd, waiting as long as it takes for room,
 * unless the socket watch (may be -1) hangs up or fails first: a relay
 * whose other side is gone, or was shut down to stop it, must not stay
 * blocked on a peer that does not read.  Never raises SIGPIPE.  0, or -1
 * with errno set (ECONNRESET when watch hung up). */
int net_send_all_watch(int fd, const void *buf, size_t len, int watch);

#endif
