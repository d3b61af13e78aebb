/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Probes (upstream pkg/kubelet/prober): liveness, readiness and startup
 * probes of running containers, each with exec (CRI ExecSync), httpGet,
 * tcpSocket or grpc, on their own schedule (initialDelaySeconds,
 * periodSeconds, timeoutSeconds, successThreshold, failureThreshold).
 *
 * Semantics as upstream's prober manager and workers:
 *   - one worker per (container ID, probe type); a new container ID (a
 *     restart) starts from scratch;
 *   - readiness starts as failure (not ready), liveness and startup as
 *     success/unknown; while a startup probe has not succeeded, liveness and
 *     readiness probes do not run;
 *   - a result flips only after successThreshold / failureThreshold
 *     consecutive outcomes;
 *   - a liveness or startup failure asks for the container to be restarted
 *     (prober_liveness_failures), the result stays "failure" until the
 *     container is replaced.
 *
 * Threading: probes run on the prober's own threads (each with its own CRI
 * connection for exec); they never block the sync loop or the pod workers.
 * All functions are thread-safe.
 */
#ifndef CK_PROBER_PROBER_H
#define CK_PROBER_PROBER_H

#include "api/pod.h"
#include "kuberuntime/runtime.h"

#include <stdint.h>

enum probe_type { PROBE_LIVENESS = 0, PROBE_READINESS, PROBE_STARTUP };
enum probe_result { PROBE_RESULT_UNKNOWN = 0, PROBE_RESULT_SUCCESS, PROBE_RESULT_FAILURE };

/* Called (from a prober thread) when a result of the pod changed: the
 * kubelet re-syncs the pod, which refreshes its status or restarts the
 * container.  `type` and `container_name` say what changed. */
typedef void (*prober_changed_fn)(void *ctx, const char *pod_uid, const char *container_name,
                                  enum probe_type type, enum probe_result result);

struct prober_options {
        const char *runtime_endpoint;
        int64_t runtime_timeout_ms;
        int n_threads; /* probe execution threads (default 4) */
        /* The target of the probes of hostNetwork pods (upstream: their pod
         * IP is the node's IP); NULL: 127.0.0.1. */
        const char *node_ip;
        /* Unhealthy events; NULL: logged only (borrowed) */
        struct event_recorder *recorder;
};

struct prober;

struct prober *prober_new(const struct prober_options *opts, prober_changed_fn fn, void *ctx);
void prober_free(struct prober *p);

/* After each sync: starts workers for the running containers of `pod` that
 * have probes, stops those whose container is gone or no longer running,
 * and remembers the pod IP for httpGet/tcpSocket/grpc.  pod is borrowed
 * (a reference is taken). */
void prober_update_pod(struct prober *p, struct pod *pod, const struct runtime_pod_status *rs);

/* The pod left: stop its workers, forget its results. */
void prober_remove_pod(struct prober *p, const char *uid);

/* Current results for status generation: for each container of the pod that
 * has a readiness (startup) probe and a running instance, "true" or "false".
 * Lists are filled with new entries (kv_list_release). */
void prober_results(struct prober *p, const char *uid, struct kv_list *readiness,
                    struct kv_list *startup);

/* Names of containers whose liveness (startup) probe has failed (a restart
 * is due), NULL-terminated new array (free each and the array), or NULL. */
char **prober_liveness_failures(struct prober *p, const char *uid);
char **prober_startup_failures(struct prober *p, const char *uid);
/* Names of containers whose startup probe has succeeded (for the running
 * instance), same form. */
char **prober_started(struct prober *p, const char *uid);

#endif
