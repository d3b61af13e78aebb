/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node shutdown manager's thread (upstream pkg/kubelet/nodeshutdown,
 * managerImpl): with a shutdown grace period, it holds a logind "delay"
 * inhibitor lock on shutdown (logind's InhibitDelayMaxSec raised first
 * when smaller, through its drop-in and a reload), and at logind's
 * PrepareForShutdown(true) reports the node shutting down (the Ready
 * condition, admission), stops the pods group by group, lowest priority
 * first, each within its group's period (Failed, reason Terminated, a
 * DisruptionTarget condition), records the start and end (the state file,
 * kubelet_graceful_shutdown_*_time_seconds) and releases the lock, which
 * lets the shutdown go on.  PrepareForShutdown(false) (cancelled): the lock
 * is taken again.  A lost bus connection is made again after a second.
 * The pieces are in src/nodeshutdown.
 */
#ifndef CK_KUBELET_SHUTDOWN_LOOP_H
#define CK_KUBELET_SHUTDOWN_LOOP_H

#include "nodeshutdown/nodeshutdown.h"
#include "util/error.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pod;
struct event_recorder;

struct shutdown_loop_options {
        const struct shutdown_period *periods; /* copied; nodeshutdown_periods */
        size_t n_periods;                      /* > 0 */
        const char *state_path;                /* the state file */
        const char *dropin_dir;                /* NULL: NODESHUTDOWN_LOGIND_DROPIN_DIR */
        const char *bus_address;               /* NULL: the system bus */
        struct event_recorder *recorder;       /* NULL: events logged only */
        const char *node_name;
        /* where the state is also published (may be NULL; outlives the
         * loop): the node status and admission read it without the loop */
        atomic_bool *publish;
        /* The pods admitted and not terminal, as references (the caller
         * frees them: pod_unref each, free the array). */
        struct pod **(*active_pods)(void *ctx, size_t *n);
        /* Whether a pod told to stop is stopped (or gone). */
        bool (*pod_finished)(void *ctx, const char *uid);
        /* Stops pod with grace_s: Failed (unless it Succeeded), reason and
         * message NODESHUTDOWN_*, a DisruptionTarget condition. */
        void (*kill)(void *ctx, const struct pod *pod, int64_t grace_s);
        /* The node status is to be reported now (may be NULL). */
        void (*sync_node_status)(void *ctx);
        void *ctx;
};

struct shutdown_loop;

/* Connects to logind, raises its delay if needed, takes the lock and
 * starts the thread.  Fails (nothing started) when any of it fails: the
 * caller logs it, as upstream's "Failed to start node shutdown manager",
 * and runs without. */
int shutdown_loop_start(const struct shutdown_loop_options *o, struct shutdown_loop **out,
                        ck_error_t *err);
void shutdown_loop_stop(struct shutdown_loop *l);

/* upstream ShutdownStatus: the node is shutting down.  NULL-safe (false). */
bool shutdown_loop_shutting_down(const struct shutdown_loop *l);

#endif
