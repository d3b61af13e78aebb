/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The eviction manager's decisions (upstream pkg/kubelet/eviction): the
 * thresholds of evictionHard / evictionSoft, what the node's stats say of
 * each signal, which thresholds are met (minimum reclaim, soft grace
 * periods), the node conditions they raise (held for the pressure
 * transition period), the pods ranked for the starved resource, the
 * evicted pod's message, and admission under pressure.
 *
 * Pure: no thread, no clock, no I/O.  src/kubelet/eviction_loop.c runs it
 * every 10 s over the stats provider and the sync loop.
 */
#ifndef CK_EVICTION_EVICTION_H
#define CK_EVICTION_EVICTION_H

#include "api/pod.h"
#include "util/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum eviction_signal {
        EVICTION_MEMORY_AVAILABLE = 0,
        EVICTION_ALLOCATABLE_MEMORY_AVAILABLE,
        EVICTION_NODEFS_AVAILABLE,
        EVICTION_NODEFS_INODES_FREE,
        EVICTION_IMAGEFS_AVAILABLE,
        EVICTION_IMAGEFS_INODES_FREE,
        EVICTION_CONTAINERFS_AVAILABLE,
        EVICTION_CONTAINERFS_INODES_FREE,
        EVICTION_PID_AVAILABLE,
        EVICTION_N_SIGNALS,
};

/* "memory.available"...; NULL for an invalid one. */
const char *eviction_signal_name(enum eviction_signal s);
/* The resource a signal starves: "memory", "ephemeral-storage", "inodes",
 * "pids". */
const char *eviction_signal_resource(enum eviction_signal s);

/* The node conditions (bits). */
#define EVICTION_MEMORY_PRESSURE 1u
#define EVICTION_DISK_PRESSURE 2u
#define EVICTION_PID_PRESSURE 4u

/* A quantity, or a fraction of the capacity (upstream ThresholdValue; the
 * fraction a float32 as upstream's, so that "10%" rounds as there). */
struct eviction_value {
        int64_t quantity;
        float percentage; /* used when quantity is 0 */
};

struct eviction_threshold {
        enum eviction_signal signal;
        struct eviction_value value;
        int64_t grace_period_ms; /* 0: a hard threshold */
        struct eviction_value min_reclaim;
};

struct eviction_config {
        struct eviction_threshold *thresholds;
        size_t n;
        int64_t pressure_transition_ms; /* evictionPressureTransitionPeriod, 5m */
        int32_t max_pod_grace_period_s; /* evictionMaxPodGracePeriod (soft evictions) */
};

/* A map entry (the configuration's kv_list items). */
struct eviction_kv {
        const char *key, *value;
};

/* upstream ParseThresholdConfig: hard and soft thresholds ("<quantity>" or
 * "<n>%"; "0%" and "100%" disable a signal), grace periods (Go durations;
 * every soft threshold needs one), minimum reclaims; with
 * allocatable_pods (enforceNodeAllocatable has "pods"), a hard
 * memory.available threshold is also one on allocatableMemory.available.
 * Errors as upstream's: "unsupported eviction signal x", "eviction
 * threshold memory.available must be positive: 0", "grace period must be
 * specified for the soft eviction threshold memory.available"... */
int eviction_config_parse(const struct eviction_kv *hard, size_t n_hard,
                          const struct eviction_kv *soft, size_t n_soft,
                          const struct eviction_kv *grace, size_t n_grace,
                          const struct eviction_kv *min_reclaim, size_t n_min_reclaim,
                          bool allocatable_pods, struct eviction_config *out, ck_error_t *err);
void eviction_config_release(struct eviction_config *c);

/* What the stats say of one signal (upstream signalObservation). */
struct eviction_observation {
        bool ok;
        int64_t available, capacity;
        int64_t time_ns;
};

/* upstream GetThresholdQuantity: the quantity, or the fraction of capacity. */
int64_t eviction_value_quantity(const struct eviction_value *v, int64_t capacity);

/* The manager's state across observations. */
struct eviction_state;
struct eviction_state *eviction_state_new(const struct eviction_config *cfg);
void eviction_state_free(struct eviction_state *s);

/* What one observation decides (upstream synchronize, up to the ranking). */
struct eviction_decision {
        unsigned conditions; /* reported: held for the transition period */
        /* the threshold to act on (memory first), or -1: nothing starved */
        int threshold;
        bool hard;
};

/* Observes the signals at now_ms (a monotonic clock): thresholds met
 * (those met before stay met until available reaches the threshold plus
 * the minimum reclaim), their first observation, the conditions, the grace
 * periods; a threshold whose signal has not been observed anew since the
 * last call does not act twice on the same stats. */
void eviction_observe(struct eviction_state *s, const struct eviction_observation *obs,
                      int64_t now_ms, struct eviction_decision *out);

/* Whether any threshold is still met with its minimum reclaim (upstream's
 * re-check after reclaiming node-level resources, grace periods aside). */
bool eviction_still_met(const struct eviction_state *s, const struct eviction_observation *obs);

const struct eviction_threshold *eviction_state_threshold(const struct eviction_state *s, int i);

/* ---- pods ---- */

struct eviction_container_stats {
        const char *name;
        bool has_memory, has_disk;
        int64_t memory_working_set; /* bytes */
        int64_t disk_used;          /* rootfs + logs, bytes */
};

/* A pod's usage as the Summary has it (NULL stats: none), and its
 * effective requests (the caller's: upstream GetResourceRequestQuantity). */
struct eviction_pod_stats {
        int64_t memory_request, disk_request;
        bool has_memory, has_processes;
        int64_t memory_working_set;
        int64_t processes;
        int64_t disk_used;   /* containers' rootfs and logs + local volumes */
        int64_t inodes_used; /* the same, in inodes */
        const struct eviction_container_stats *containers;
        size_t n_containers;
};

/* Orders idx (n indices into pods/stats) as upstream's rank function of
 * the signal: memory (exceeds its request, priority, usage over request),
 * pids (priority, processes), disk (exceeds its ephemeral-storage request,
 * priority, usage over request; disk_used is the caller's measure for the
 * signal).  stats[i] NULL (a pod the Summary lacks) comes first; a figure
 * missing from stats counts 0, as upstream's. */
void eviction_rank(enum eviction_signal signal, struct pod *const *pods,
                   const struct eviction_pod_stats *const *stats, size_t *idx, size_t n);

/* upstream evictionMessage: "The node was low on resource: memory.
 * Threshold quantity: 100Mi, available: 50Mi. Container c was using 60Mi,
 * request is 0, has larger consumption of memory. " (new string). */
char *eviction_message(const struct eviction_threshold *t, const struct eviction_observation *obs,
                       const struct pod *pod, const struct eviction_pod_stats *stats);

/* What upstream's localStorageEviction reads of a pod: its volumes'
 * usage, its ephemeral-storage usage, each container's logs and rootfs,
 * and the pod's ephemeral-storage limit (the caller's: upstream PodLimits,
 * has_pod_limit false when no container has one). */
struct eviction_volume_usage {
        const char *name;
        int64_t used;
};
struct eviction_container_usage {
        const char *name;
        bool has_rootfs, has_logs;
        int64_t rootfs_used, logs_used;
};
struct eviction_local_usage {
        const struct eviction_volume_usage *volumes;
        size_t n_volumes;
        bool has_ephemeral;
        int64_t ephemeral_used;
        const struct eviction_container_usage *containers;
        size_t n_containers;
        bool has_pod_limit;
        int64_t pod_limit;
        bool dedicated_imagefs; /* the containers' rootfs is not on the node's fs */
};

/* upstream localStorageEviction for one pod, its three checks in order:
 * an emptyDir over its sizeLimit ("emptydirfs.limit", `Usage of EmptyDir
 * volume "data" exceeds the limit "10Mi". `), the pod over its
 * containers' ephemeral-storage limits ("ephemeralpodfs.limit", `Pod
 * ephemeral local storage usage exceeds the total limit of containers 20Mi.
 * `), a container over its own ("ephemeralcontainerfs.limit", `Container c
 * exceeded its local ephemeral storage limit "10Mi". `; its logs, and its
 * rootfs without a dedicated image filesystem).  The message (new string)
 * with *signal set, or NULL. */
char *eviction_local_storage(const struct pod *pod, const struct eviction_local_usage *u,
                             const char **signal);

/* Whether eviction_local_storage has a limit to check for the pod (an
 * emptyDir's sizeLimit, the pod's limit (has_pod_limit, as its usage would
 * give it), a container's own): without one, no usage of the pod is needed. */
bool eviction_has_local_limits(const struct pod *pod, bool has_pod_limit);

/* upstream Admit: with conditions, a non-critical pod is refused (reason
 * "Evicted", message "The node had condition: [MemoryPressure]. "), but
 * for a BestEffort one, under memory pressure alone a pod that is not
 * BestEffort or tolerates node.kubernetes.io/memory-pressure:NoSchedule is
 * admitted.  Returns true to admit; else *message is a new string. */
bool eviction_admit(unsigned conditions, const struct pod *pod, char **message);

/* Quantity text as Kubernetes prints it (BinarySI for bytes: "100Mi",
 * "1536Ki"; DecimalSI for counts: "500", "5k"). */
void eviction_format_quantity(int64_t v, bool binary, char *buf, size_t size);

#endif
