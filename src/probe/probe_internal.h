/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to src/probe: one file per action, dispatched by handler.c.
 * *message: a new string or NULL.
 */
#ifndef CK_PROBE_INTERNAL_H
#define CK_PROBE_INTERNAL_H

#include "probe/probe.h"

#include <stdbool.h>
#include <stdint.h>

/* The port of an httpGet/tcpSocket handler: a number, a name of one of the
 * container's ports, or a numeric string (upstream probe.ResolveContainerPort).
 * < 0 with *message when it does not resolve to 1..65535. */
int probe__resolve_port(const struct int_or_string *port, const struct container *c,
                        char **message);

/* The port and host an httpGet/tcpSocket handler targets: its host, else
 * the pod IP.  < 0 with *message when either is missing or invalid. */
int probe__target(const struct handler *h, const struct container *c, const char *pod_ip,
                  const char **host, char **message);

enum probe_outcome probe__exec(struct cri_client *cri, const struct container *c,
                               const char *container_id, const struct handler *h,
                               int64_t timeout_ms, char **message);
/* hook: a lifecycle hook's request (upstream lifecycle.runHTTPHandler): any
 * HTTP response is a success, User-Agent kube-lifecycle/1.35. */
enum probe_outcome probe__http_get(const struct container *c, const char *pod_ip,
                                   const struct handler *h, int64_t timeout_ms, bool hook,
                                   char **message);
enum probe_outcome probe__tcp(const char *host, int port, int64_t timeout_ms, char **message);
enum probe_outcome probe__grpc(const char *host, int port, const char *service, int64_t timeout_ms,
                               char **message);

/* "host:port", IPv6 addresses in brackets (Go's net.JoinHostPort). New string. */
char *probe__join_host_port(const char *host, int port);

#endif
