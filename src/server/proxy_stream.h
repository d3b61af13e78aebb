/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Upstream's proxyStream (an UpgradeAwareHandler with upgradeRequired):
 * the connection of an exec, attach or port-forward request is handed to
 * the runtime's streaming server, whatever the protocol the two ends
 * negotiate (SPDY/3.1 or WebSocket: the bytes are not looked at).
 */
#ifndef CK_SERVER_PROXY_STREAM_H
#define CK_SERVER_PROXY_STREAM_H

#include "server/httpd.h"
#include "util/error.h"

/* A request that is not an upgrade is answered 400 "Upgrade request
 * required".  Else connects to url ("http://host:port/path", what the
 * runtime's Exec/Attach/PortForward answered), sends it req's head with
 * the url's path and host (the client's other header fields as they came,
 * but Authorization: the runtime has no use for the node's credentials),
 * relays the runtime's answer and, when it is 101 Switching Protocols,
 * copies bytes both ways until either side ends or the server stops, as
 * upstream does.  Returns 0 once the connection was handed over (or
 * answered); < 0 with err when the runtime could not be reached, before
 * anything was sent to the client (the caller answers). */
int proxy_stream(struct httpd_conn *c, const struct httpd_request *req, const char *url,
                 ck_error_t *err);

#endif
