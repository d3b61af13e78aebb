/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pod workers (upstream pkg/kubelet/pod_workers.go, simplified): a small pool
 * of threads runs pod work as straight-line blocking code.  Per pod UID:
 *   - at most one piece of work is in flight;
 *   - work submitted while one is in flight waits as "pending", and a newer
 *     submission replaces the pending one;
 *   - a kill is never replaced by a sync (kill wins over everything).
 * Each thread owns its own CRI connection.  A kill queued while every
 * thread is busy gets a thread of its own (up to 256 beside the pool, gone
 * when the queue is empty): kills wait out grace periods, and upstream stops
 * every pod at once; syncs keep to the pool.
 */
#ifndef CK_KUBELET_PODWORKERS_H
#define CK_KUBELET_PODWORKERS_H

#include "api/pod.h"
#include "cri/cri.h"

#include <stdbool.h>
#include <stdint.h>

enum pod_work_kind {
        POD_WORK_SYNC = 0,    /* drive the pod to its spec */
        POD_WORK_KILL,        /* stop and remove everything of the pod (it left the sources) */
        POD_WORK_KILL_ORPHAN, /* housekeeping: runtime objects / dirs / cgroups of an unknown UID */
};

struct pod_work {
        enum pod_work_kind kind;
        char *uid;
        struct pod *pod; /* a reference; NULL for orphans */
        char *name;      /* orphans: from the runtime labels; may be NULL */
        char *namespace;
        int64_t grace_s; /* kill: -1 = the pod's own */
        /* sync: the eviction or node shutdown manager stops the pod (the
         * status's reason, a static string, and message, the grace period
         * of the kill); NULL: none */
        const char *evict_reason;
        char *evict_message;
        int64_t evict_grace_s;
        bool evict_disruption; /* with a DisruptionTarget condition */
        /* what made the sync loop submit it, as upstream's SyncPodType:
         * "create", "update" or "sync" (a static string): the
         * operation_type of kubelet_pod_worker_duration_seconds; NULL
         * records nothing (a pod gone from its source, an orphan: upstream
         * gives those updates no StartTime) */
        const char *update_type;
        /* when the kubelet first saw the pod (CLOCK_MONOTONIC us; 0 for
         * orphans): kubelet_pod_start_duration_seconds */
        int64_t first_seen_us;
        /* set by the pool: when the work was submitted (the first of the
         * pending work it replaced) and when a thread took it
         * (CLOCK_MONOTONIC us); their difference is the time the work
         * waited */
        int64_t submitted_us;
        int64_t started_us;
};

/* Runs one piece of work on a worker thread with that thread's CRI client.
 * The work is borrowed; freed by the pool afterwards. */
typedef void (*pod_work_fn)(void *ctx, struct cri_client *cri, const struct pod_work *w);

struct podworkers;

struct podworkers *podworkers_new(int n_threads, const char *endpoint, int64_t timeout_ms,
                                  pod_work_fn fn, void *ctx);
/* Drops what is pending and waits a little (2 s) for the work in flight;
 * threads still busy then are left running (the process is exiting). */
/* Returns false if threads were left running: then whatever they use (the
 * kubelet's runtime, status store...) must not be freed either. */
bool podworkers_free(struct podworkers *pw);

/* Submits work (takes ownership of *w's contents; w itself is copied).
 * Returns false (and frees the contents) if it was dropped because a kill
 * for the same UID is already pending or in flight and this is not a kill. */
bool podworkers_submit(struct podworkers *pw, struct pod_work *w);

/* True if work for uid is in flight or pending. */
bool podworkers_busy(struct podworkers *pw, const char *uid);

/* A static pod whose kill is in flight came back to its source with the
 * same UID (upstream's restart of a terminating pod): keep tells its kill
 * to stop the containers and leave them, the history (restart count, last
 * state) of the pod that starts again.  No effect once the UID has no
 * work. */
void podworkers_set_keep(struct podworkers *pw, const char *uid, bool keep);
/* For the work of uid, on its worker thread: whether to keep. */
bool podworkers_keep(struct podworkers *pw, const char *uid);

void pod_work_clear(struct pod_work *w);

#endif
