/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kubelet's secure port (--port, 10250): HTTPS (server/secure.h), each
 * request authenticated and authorized (server/auth.h) as upstream's
 * pkg/kubelet/server does, then:
 *
 *   GET /healthz                                      "ok"
 *   GET /pods                                         the v1 PodList of the node
 *   GET /containerLogs/<namespace>/<pod>/<container>  what `kubectl logs` reads
 *       ?follow&previous&timestamps&tailLines&limitBytes&sinceSeconds&sinceTime&stream
 *
 * The apiserver reaches it for `kubectl logs` with its kubelet client
 * certificate.  exec, attach, port-forward, metrics and stats are not served
 * (404).
 */
#ifndef CK_KUBELET_KUBELET_SERVER_H
#define CK_KUBELET_KUBELET_SERVER_H

#include "client/pool.h"
#include "config/kubeletconfig.h"
#include "kubelet/status_store.h"
#include "util/error.h"

#include <jansson.h>
#include <stdbool.h>

struct kubelet_server_options {
        const struct kubelet_config *cfg; /* borrowed: address, TLS and auth settings */
        int port;                         /* -1: cfg->port; 0: any free port (tests) */
        struct status_store *status;      /* borrowed: the pods and their statuses */
        struct rest_pool *pool;           /* borrowed; NULL in standalone mode */
};

struct kubelet_server;

/* Loads or makes the serving certificate (standalone: checks what it can
 * and does that at the first connection), listens and serves on threads of
 * its own.  Errors name the step (certificate, client CA, listen). */
int kubelet_server_start(const struct kubelet_server_options *o, struct kubelet_server **out,
                         ck_error_t *err);
/* The port listened on. */
int kubelet_server_port(const struct kubelet_server *s);
/* Ends followers and open connections, waits for them.  NULL-safe. */
void kubelet_server_stop(struct kubelet_server *s);

/* Upstream's validateContainerLogStatus on a v1 PodStatus: the ID
 * ("containerd://<id>", borrowed from status) of the container instance
 * whose log to read: the running or terminated one, the last terminated
 * one with previous (or when the current one never started).  NULL when
 * there is none, with *why (a new string) in upstream's words, e.g.
 * `container "c" in pod "p" is waiting to start: ContainerCreating`. */
const char *kubelet_server_log_container_id(const json_t *status, const char *pod,
                                            const char *container, bool previous, char **why);

#endif
