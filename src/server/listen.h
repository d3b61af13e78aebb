/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A listening TCP socket for the kubelet's servers, bound the way Go's
 * net.Listen("tcp", "<address>:<port>") binds it: a numeric address only
 * (no name lookup), "::" also serves IPv4.
 */
#ifndef CK_SERVER_LISTEN_H
#define CK_SERVER_LISTEN_H

#include "util/error.h"

/* Binds and listens on address:port.  address: "0.0.0.0", "127.0.0.1",
 * "::", "::1" or "[::1]" ("" or NULL: 0.0.0.0); port 0: an ephemeral port.
 * On success *fd is the listening socket (O_CLOEXEC | O_NONBLOCK, the
 * caller owns it) and *bound_port the port actually bound.  Errors name the
 * step ("bind 127.0.0.1 port 10250: Address already in use"). */
int server_listen_tcp(const char *address, int port, int backlog, int *fd, int *bound_port,
                      ck_error_t *err);

#endif
