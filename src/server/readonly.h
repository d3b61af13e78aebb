/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kubelet's read-only HTTP port (--read-only-port, off when 0):
 *   GET /healthz   -> 200 "ok"
 *   GET /pods      -> 200 application/json, a v1 PodList of the pods this
 *                     kubelet runs, each with its current status
 * Anything else: 404; a method other than GET/HEAD: 405.
 * Runs its own thread (poll loop, one request per connection, small
 * request size limit, timeouts so a slow client cannot block it).
 */
#ifndef CK_SERVER_READONLY_H
#define CK_SERVER_READONLY_H

#include "util/error.h"

#include <jansson.h>

/* Returns a new reference: the PodList JSON. Called from the server thread. */
typedef json_t *(*readonly_pods_fn)(void *ctx);

struct readonly_server;

/* address: "0.0.0.0", "127.0.0.1", "::", "[::1]" ("" or NULL: 0.0.0.0);
 * port 0 binds an ephemeral port (see readonly_server_port). */
int readonly_server_start(const char *address, int port, readonly_pods_fn pods, void *ctx,
                          struct readonly_server **out, ck_error_t *err);
void readonly_server_stop(struct readonly_server *s);

/* The port actually bound (useful with port 0). */
int readonly_server_port(struct readonly_server *s);

#endif
