/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Running one probe action or lifecycle hook (upstream prober.runProbe and
 * the lifecycle handler runner): the dispatch on the handler's kind, the
 * port resolution of pkg/probe/util.go, and the sleep action.
 */
#include "probe/probe_internal.h"

#include "util/xalloc.h"
#include "util/sleep.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

char *probe__join_host_port(const char *host, int port)
{
        if (strchr(host, ':') != NULL)
                return xasprintf("[%s]:%d", host, port);
        return xasprintf("%s:%d", host, port);
}

int probe__resolve_port(const struct int_or_string *port, const struct container *c, char **message)
{
        long n = -1;
        if (!port->is_string) {
                n = port->ival;
        } else {
                const char *name = port->sval ? port->sval : "";
                bool found = false;
                for (size_t i = 0; c != NULL && i < c->n_ports; i++) {
                        if (c->ports[i].name != NULL && strcmp(c->ports[i].name, name) == 0) {
                                n = c->ports[i].container_port;
                                found = true;
                                break;
                        }
                }
                if (!found) {
                        /* upstream falls back to a numeric string */
                        char *end = NULL;
                        errno = 0;
                        n = strtol(name, &end, 10);
                        if (name[0] == '\0' || *end != '\0' || errno != 0) {
                                *message = xasprintf("port %s not found", name);
                                return -1;
                        }
                }
        }
        if (n <= 0 || n >= 65536) {
                *message = xasprintf("invalid port number: %ld", n);
                return -1;
        }
        return (int)n;
}

int probe__target(const struct handler *h, const struct container *c, const char *pod_ip,
                  const char **host, char **message)
{
        int port = probe__resolve_port(&h->port, c, message);
        if (port < 0)
                return -1;
        *host = h->http_host && h->http_host[0] ? h->http_host : pod_ip;
        if (*host == NULL || (*host)[0] == '\0') {
                *message = xstrdup("the pod has no IP address");
                return -1;
        }
        return port;
}

/* The sleep action: sleeps, then succeeds (upstream runSleepHandler). */
static enum probe_outcome run_sleep(int64_t seconds)
{
        sleep_ms(seconds > INT64_MAX / 1000 ? INT64_MAX : seconds * 1000);
        return PROBE_OUTCOME_SUCCESS;
}

enum probe_outcome probe_run(struct cri_client *cri, const struct container *c,
                             const char *container_id, const char *pod_ip, const struct handler *h,
                             int64_t timeout_ms, char **message)
{
        *message = NULL;
        switch (h->kind) {
        case HANDLER_EXEC:
                return probe__exec(cri, c, container_id, h, timeout_ms, message);
        case HANDLER_HTTP_GET: {
                /* the container's own lifecycle handler: hook semantics */
                bool hook = c != NULL && (h == c->post_start || h == c->pre_stop);
                return probe__http_get(c, pod_ip, h, timeout_ms, hook, message);
        }
        case HANDLER_TCP_SOCKET: {
                const char *host = NULL;
                int port = probe__target(h, c, pod_ip, &host, message);
                if (port < 0)
                        return PROBE_OUTCOME_ERROR;
                return probe__tcp(host, port, timeout_ms, message);
        }
        case HANDLER_GRPC:
                if (pod_ip == NULL || pod_ip[0] == '\0') {
                        *message = xstrdup("the pod has no IP address");
                        return PROBE_OUTCOME_ERROR;
                }
                return probe__grpc(pod_ip, h->port.ival, h->grpc_service ? h->grpc_service : "",
                                   timeout_ms, message);
        case HANDLER_SLEEP:
                return run_sleep(h->sleep_seconds);
        case HANDLER_NONE:
                break;
        }
        *message = xasprintf("missing probe handler for container %s", c ? c->name : "");
        return PROBE_OUTCOME_ERROR;
}
