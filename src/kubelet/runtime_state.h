/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the container runtime last said of itself (upstream
 * pkg/kubelet/runtime.go runtimeState, fed as updateRuntimeUp feeds it):
 * the RuntimeReady and NetworkReady conditions of CRI Status and its
 * runtime handlers, asked at most once per refresh period, whoever asks.
 * One object, read by the pod workers (may a pod's sandbox be made: the
 * network; user namespaces: the handlers) and by the node status (the Ready
 * condition's message).  Thread-safe.
 */
#ifndef CK_KUBELET_RUNTIME_STATE_H
#define CK_KUBELET_RUNTIME_STATE_H

#include "cri/cri.h"

#include <stdbool.h>
#include <stdint.h>

/* upstream updateRuntimeUp runs every 5 s */
#define RUNTIME_STATE_REFRESH_MS 5000
/* upstream maxWaitForContainerRuntime: no ready runtime for this long is
 * "container runtime is down" */
#define RUNTIME_STATE_DOWN_AFTER_MS 30000

struct runtime_state;

struct runtime_state *runtime_state_new(int64_t refresh_ms);
void runtime_state_free(struct runtime_state *s);

/* Asks the runtime (CRI Status on cri) when the last question is older
 * than the refresh period, and records what it says.  A failed call
 * changes nothing (upstream logs it and keeps the last state). */
void runtime_state_refresh(struct runtime_state *s, struct cri_client *cri);

/* upstream runtimeErrors without its health checks, in its order: first
 * *sync_error, "container runtime status check may not have completed yet"
 * (the runtime was never ready) or "container runtime is down" (not ready
 * for 30 s), else NULL; then the returned runtime error, "container runtime
 * not ready: RuntimeReady=false reason:R message:M" (": <nil>" when the
 * runtime reports no such condition), or NULL.  now_ms: the monotonic
 * clock.  New strings. */
char *runtime_state_runtime_error(struct runtime_state *s, int64_t now_ms, char **sync_error);

/* upstream networkErrors: "network state unknown" before the first answer,
 * then "container runtime network not ready: NetworkReady=false reason:R
 * message:M" (or ": <nil>"), or NULL when the network is ready.  New
 * string. */
char *runtime_state_network_error(struct runtime_state *s);

/* Whether the runtime handler (the default one: "") supports user
 * namespaces, as the last Status of a ready runtime listed it (upstream
 * HandlerSupportsUserNamespaces): false when the runtime lists no handlers
 * (older runtimes), false with *error (new string) when it does not list
 * this one. */
bool runtime_state_handler_supports_userns(struct runtime_state *s, const char *handler,
                                           char **error);

/* Records the answer of a Status call asked at asked_ms (the monotonic
 * clock), as refresh does; an answer to a call older than the last one
 * recorded is dropped.  For tests and for refresh. */
void runtime_state__record(struct runtime_state *s, const Runtime__V1__StatusResponse *st,
                           int64_t asked_ms);

#endif
