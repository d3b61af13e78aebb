/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kubelet's HTTP API (upstream pkg/kubelet/server), on the server core
 * of server/httpd.h:
 *
 *   the secure port (--port, 10250, HTTPS; each request authenticated and
 *   authorized as upstream, server/auth.h):
 *     GET  /healthz, /healthz/ping, /healthz/log     "ok"
 *     GET  /pods                                     the v1 PodList of the node
 *     GET  /metrics, /metrics/probes, /metrics/resource, /metrics/cadvisor
 *                                                    Prometheus text (src/metrics, src/stats)
 *     GET/POST /stats/summary[?only_cpu_and_memory=true]  the Summary API
 *     GET  /containerLogs/{namespace}/{pod}/{container}
 *          ?follow&previous&timestamps&tailLines&limitBytes&sinceSeconds&sinceTime&stream
 *     GET  /configz                                  {"kubeletconfig": {...}}
 *     GET  /runningpods/                             the pods the runtime runs
 *     PUT  /debug/flags/v                            the log verbosity (body: a number)
 *     GET/POST /exec/{namespace}/{pod}[/{uid}]/{container}?command&input&output&error&tty
 *     GET/POST /attach/{namespace}/{pod}[/{uid}]/{container}?input&output&error&tty
 *     GET/POST /portForward/{namespace}/{pod}[/{uid}]     (upgrades, proxied to the
 *                                                    runtime's streaming server)
 *     POST /run/{namespace}/{pod}[/{uid}]/{container}?cmd  the command's output
 *   the read-only port (--read-only-port, off by default, plain HTTP, no
 *   authentication): /healthz, /pods, /metrics*, /stats/summary; the
 *   debugging endpoints answer 405 "Debug endpoints are disabled." there
 *   (and on the secure port with --enable-debugging-handlers=false), as
 *   upstream;
 *   the healthz port (--healthz-port, 10248, on --healthz-bind-address,
 *   plain HTTP): /healthz, /healthz/ping.
 *
 * The apiserver reaches the secure port for `kubectl logs`, `exec`, `cp`,
 * `attach` and `port-forward` with its kubelet client certificate.
 */
#ifndef CK_KUBELET_KUBELET_SERVER_H
#define CK_KUBELET_KUBELET_SERVER_H

#include "client/pool.h"
#include "config/kubeletconfig.h"
#include "kubelet/status_store.h"
#include "util/error.h"

#include <jansson.h>
#include <stdbool.h>

struct stats_provider;

struct kubelet_server_options {
        const struct kubelet_config *cfg; /* borrowed: addresses, ports, TLS and auth settings */
        /* -1: from cfg (off where cfg says 0, and the secure port off with
         * enableServer=false); 0: any free port (tests); > 0: that port */
        int port;
        int read_only_port;
        int healthz_port;
        struct status_store *status; /* borrowed: the pods and their statuses */
        struct rest_pool *pool;      /* borrowed; NULL in standalone mode */
        /* borrowed (outlives the server): the Summary and the resource
         * metrics; NULL: the server makes its own */
        struct stats_provider *stats;
};

/* The kubelet's stats provider for cfg (its node name, root and log
 * directories, runtime endpoints, cgroup root).  Errors: "stats provider:
 * ...". */
int kubelet_stats_provider_new(const struct kubelet_config *cfg, struct stats_provider **out,
                               ck_error_t *err);

struct kubelet_server;

/* Loads or makes the serving certificate (standalone: checks what it can
 * and does that at the first connection), listens on each port that is on
 * and serves on threads of its own.  Errors name the port and the step
 * (certificate, client CA, listen). */
int kubelet_server_start(const struct kubelet_server_options *o, struct kubelet_server **out,
                         ck_error_t *err);
/* The ports listened on (0: that one is off). */
int kubelet_server_port(const struct kubelet_server *s);
int kubelet_server_read_only_port(const struct kubelet_server *s);
int kubelet_server_healthz_port(const struct kubelet_server *s);
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
