/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The eviction manager's thread (upstream pkg/kubelet/eviction
 * managerImpl.Start and synchronize): every 10 s, first the local storage
 * limits of each pod (emptyDir sizeLimit, ephemeral-storage limits: such a
 * pod is evicted at once), then the signals from the
 * stats provider (src/stats: stats_eviction_view) through the decisions of
 * src/eviction; the node conditions they raise (read by the node status
 * and admission); with a threshold met, the EvictionThresholdMet event,
 * disk reclaimed first (dead containers and unused images, gc_loop), then
 * the first pod of the ranking that is not critical evicted through the
 * sync loop (a callback), kubelet_evictions{eviction_signal} counted; after
 * an eviction, up to 30 s waiting for the pod to be gone before the next
 * look (upstream waitForPodsCleanup).
 */
#ifndef CK_KUBELET_EVICTION_LOOP_H
#define CK_KUBELET_EVICTION_LOOP_H

#include "api/pod.h"
#include "eviction/eviction.h"
#include "util/error.h"

#include <stdatomic.h>

struct stats_provider;
struct gc_loop;
struct event_recorder;

struct eviction_loop_options {
        const struct eviction_config *config; /* copied */
        struct stats_provider *stats;         /* borrowed, outlives the loop */
        struct gc_loop *gc;                   /* borrowed; NULL: nothing to reclaim */
        struct event_recorder *recorder;      /* NULL: events logged only */
        const char *node_name;
        int64_t interval_ms; /* <= 0: 10 s (upstream evictionMonitoringPeriod) */
        /* where the conditions are also published (may be NULL; outlives
         * the loop): the node status reads them without the loop */
        atomic_uint *publish;
        /* The pods admitted and not terminal, as references (the caller of
         * it frees them: pod_unref each, free the array). */
        struct pod **(*active_pods)(void *ctx, size_t *n);
        /* Whether an evicted pod is stopped (or gone). */
        bool (*pod_finished)(void *ctx, const char *uid);
        /* Evicts pod: the sync loop stops it with the status Failed,
         * reason (a static string: "Evicted" here), message (and a
         * DisruptionTarget condition with disruption); the kill's grace
         * period grace_s. */
        void (*evict)(void *ctx, const struct pod *pod, const char *reason, const char *message,
                      int64_t grace_s, bool disruption);
        void *ctx;
};

struct eviction_loop;

/* Starts the thread (with no threshold too: the local storage limits are
 * checked, as upstream with LocalStorageCapacityIsolation, on by default). */
int eviction_loop_start(const struct eviction_loop_options *o, struct eviction_loop **out,
                        ck_error_t *err);
void eviction_loop_stop(struct eviction_loop *l);

/* The node conditions now (EVICTION_*_PRESSURE bits).  NULL-safe (0). */
unsigned eviction_loop_conditions(const struct eviction_loop *l);

#endif
