/* SPDX-License-Identifier: Apache-2.0 */
/*
 * computePodActions (upstream kuberuntime_manager.go): given the pod spec and
 * what the runtime has, decide what to do in this sync.  Pure: no I/O, so it
 * is unit-tested from a table.  Backoff is decided by the caller afterwards.
 */
#ifndef CK_KUBERUNTIME_COMPUTE_H
#define CK_KUBERUNTIME_COMPUTE_H

#include "allocation/allocation.h"
#include "api/pod.h"
#include "kuberuntime/runtime.h"

#include <jansson.h>
#include <stdbool.h>

/* container_to_kill.reason values */
#define KILL_REASON_HASH_CHANGED "Container spec hash changed"
#define KILL_REASON_LIVENESS "Container failed liveness probe"
#define KILL_REASON_STARTUP "Container failed startup probe"
#define KILL_REASON_UNKNOWN_STATE "Container is in unknown state"
#define KILL_REASON_NOT_IN_SPEC "Container is not in the pod spec"
#define KILL_REASON_STALE "Container is an older instance of a running container"
#define KILL_REASON_RESIZE                                                                         \
        "resize requires restart" /* "Container <name> resize requires restart" */

struct container_to_kill {
        const char *container_id; /* borrowed from the status */
        const char *name;
        const char *reason; /* "spec changed", "unhealthy", "not in spec" ... for the log */
};

/* A running container whose cpu or memory changes in place (upstream
 * containerToUpdateInfo). */
struct container_resize {
        const struct container *c; /* borrowed from the pod */
        const char *container_id;  /* borrowed from the status */
        struct alloc_resources desired;
        /* what the runtime has: the actuated state, updated as each
         * UpdateContainerResources call lands */
        struct alloc_resources current;
};

struct pod_actions {
        bool kill_pod;          /* stop every container and the sandbox first */
        bool create_sandbox;    /* a new sandbox (attempt = old attempt + 1) */
        const char *sandbox_id; /* the sandbox to use when not creating; borrowed */
        uint32_t attempt;
        /* init containers: index of the next one to start, -1 if none */
        int next_init_container;
        /* every init container to start in this sync, in spec order
         * (indexes into pod->init_containers): sidecars to (re)start and at
         * most one regular init container; next_init_container is the first */
        int *init_containers_to_start;
        size_t n_init_containers_to_start;
        /* app containers to start, indexes into pod->containers */
        int *containers_to_start;
        size_t n_containers_to_start;
        /* ephemeral containers never started yet, indexes into
         * pod->ephemeral_containers (started before the others; never
         * restarted) */
        int *ephemeral_containers_to_start;
        size_t n_ephemeral_containers_to_start;
        /* containers to kill, for restarts on spec change etc. */
        struct container_to_kill *containers_to_kill;
        size_t n_containers_to_kill;
        /* the pod has completed for its restartPolicy: nothing to do */
        bool pod_done;
        /* in-place resizes (upstream ContainersToUpdate): one entry per
         * container, and the order of the calls per resource as indexes
         * into resizes, decreases before increases */
        struct container_resize *resizes;
        size_t n_resizes;
        size_t *resize_memory, *resize_cpu;
        size_t n_resize_memory, n_resize_cpu;
        /* a container restarts for its resize policy: the pod cgroup is
         * resized all the same (upstream UpdatePodResources) */
        bool update_pod_resources;
};

/* status may describe no sandbox at all; probes may be NULL (no verdict);
 * actuated: {"<container>": resources} the runtime was last given for the
 * pod's containers (the actuated state), NULL when none is known: then a
 * resize is not looked for.  pod is the allocated pod: its containers'
 * resources are what they should have.  Fills *a (release with
 * pod_actions_clear). */
void kuberuntime_compute_pod_actions(const struct pod *pod, const struct runtime_pod_status *status,
                                     const struct probe_verdicts *probes, const json_t *actuated,
                                     struct pod_actions *a);
void pod_actions_clear(struct pod_actions *a);

/* Whether a container with this last status should be restarted under the
 * pod's restartPolicy (upstream ShouldContainerBeRestarted). */
bool kuberuntime_should_restart(const struct pod *pod, const struct container *c,
                                const struct runtime_container_status *last);

#endif
