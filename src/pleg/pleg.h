/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pod lifecycle event generator (upstream pkg/kubelet/pleg/generic.go): a
 * thread relists the runtime (ListPodSandbox + ListContainers) every period,
 * compares each container's and sandbox's state with the previous relist and
 * reports what changed, per pod UID.
 *
 * Events go to a callback on the PLEG thread: the kubelet turns them into
 * syncs of the pods concerned.  After each successful relist the callback
 * also receives the set of pod UIDs the runtime knows (for housekeeping),
 * as an event with type PLEG_RELIST_DONE.
 */
#ifndef CK_PLEG_PLEG_H
#define CK_PLEG_PLEG_H

#include "kuberuntime/runtime.h"

#include <stdint.h>

enum pleg_event_type {
        PLEG_CONTAINER_STARTED = 0,
        PLEG_CONTAINER_DIED,
        PLEG_CONTAINER_REMOVED,
        PLEG_CONTAINER_CHANGED, /* created, or an unknown state */
        PLEG_SANDBOX_CHANGED,   /* sandbox created, stopped or removed */
        PLEG_RELIST_DONE,       /* uid NULL; `pods` is the relisted runtime state */
};

struct pleg_event {
        enum pleg_event_type type;
        const char *uid;          /* borrowed */
        const char *container_id; /* borrowed, NULL for pod-level events */
        /* the pod as this relist saw it, NULL when gone from the runtime;
         * borrowed for the call (all but PLEG_RELIST_DONE) */
        const struct runtime_pod_entry *pod;
        /* PLEG_RELIST_DONE only: the runtime's pods, borrowed for the call */
        const struct runtime_pod_list *pods;
        /* PLEG_RELIST_DONE only: the relist before it failed (the runtime
         * answers again) */
        bool recovered;
};

typedef void (*pleg_event_fn)(void *ctx, const struct pleg_event *ev);

struct pleg;

/* Starts the relist thread with its own CRI connection. */
int pleg_start(struct kuberuntime *rt, const char *endpoint, int64_t timeout_ms, int64_t period_ms,
               pleg_event_fn fn, void *ctx, struct pleg **out, ck_error_t *err);
void pleg_stop(struct pleg *p);

/* Milliseconds (CLOCK_MONOTONIC) of the last successful relist, 0 if none. */
int64_t pleg_last_relist_ms(struct pleg *p);

/* upstream GenericPLEG's RelistThreshold */
#define PLEG_RELIST_THRESHOLD_MS (3 * 60 * 1000)

/* upstream GenericPLEG.Healthy: NULL when the last successful relist
 * (last_relist_ms, 0: none yet) is at most PLEG_RELIST_THRESHOLD_MS before
 * now_ms, else why not (a new string), in upstream's words: "pleg has yet to
 * be successful", "pleg was last seen active 3m5s ago; threshold is 3m0s". */
char *pleg_unhealthy(int64_t last_relist_ms, int64_t now_ms);

/* One relist step, exposed for unit tests: diff `old` against `cur` and
 * call fn for every change.  Either list may be NULL (empty). */
void pleg_diff(const struct runtime_pod_list *old, const struct runtime_pod_list *cur,
               pleg_event_fn fn, void *ctx);

#endif
