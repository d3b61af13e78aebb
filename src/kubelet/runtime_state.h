/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the container runtime last said of itself (upstream
 * pkg/kubelet/runtime.go runtimeState, fed as updateRuntimeUp feeds it):
 * the RuntimeReady and NetworkReady conditions of CRI Status, asked at most
 * once per refresh period, whoever asks.  One object, read by the pod
 * workers (may a pod's sandbox be made: the network), and by the node
 * status (the Ready condition's message).  Thread-safe.
 */
#ifndef CK_KUBELET_RUNTIME_STATE_H
#define CK_KUBELET_RUNTIME_STATE_H

#include "cri/cri.h"

#include <stdbool.h>
#include <stdint.h>

/* upstream updateRuntimeUp runs every 5 s */
#define RUNTIME_STATE_REFRESH_MS 5000

struct runtime_state;

struct runtime_state *runtime_state_new(int64_t refresh_ms);
void runtime_state_free(struct runtime_state *s);

/* Asks the runtime (CRI Status on cri) when the last answer is older than
 * the refresh period, and records what it says. */
void runtime_state_refresh(struct runtime_state *s, struct cri_client *cri);

/* The runtime's error, as upstream's runtimeErrors words it without the
 * health checks: "container runtime is down" (Status failed), "container
 * runtime not ready: RuntimeReady=false reason:R message:M" (or ": <nil>"
 * when the runtime reports no such condition), or NULL.  *down: whether
 * Status failed.  New string. */
char *runtime_state_runtime_error(struct runtime_state *s, bool *down);

/* The network's: "container runtime network not ready: NetworkReady=false
 * reason:R message:M" (or ": <nil>"), the Status call's error when it
 * failed, or NULL when the network is ready.  New string. */
char *runtime_state_network_error(struct runtime_state *s);

/* Whether the runtime handler (the default one: "") supports user
 * namespaces, as its last Status listed it (upstream
 * HandlerSupportsUserNamespaces): false when the runtime lists no handlers
 * (older runtimes), false with *error (new string) when it does not list
 * this one. */
bool runtime_state_handler_supports_userns(struct runtime_state *s, const char *handler,
                                           char **error);

/* Records an answer as refresh does (st: the response, NULL when the call
 * failed with error), at now_ms on the monotonic clock.  For tests and for
 * refresh. */
void runtime_state__record(struct runtime_state *s, const Runtime__V1__StatusResponse *st,
                           const char *error, int64_t now_ms);

#endif
