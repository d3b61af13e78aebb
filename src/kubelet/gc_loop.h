/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The garbage collectors' thread (upstream StartGarbageCollection), over its
 * own CRI connections:
 *
 * Containers, every ContainerGCPeriod (a minute), when --maximum-dead-
 * containers sets a node-wide limit (kuberuntime_gc_containers; the other
 * limits are each sync's, the pods no source has housekeeping's).
 * ContainerGCFailed events when it fails.
 *
 * Images, src/images/image_gc.h every ImageGCPeriod (5 minutes, the first
 * at once), wired to the runtime:
 *
 *   images     CRI ListImages (ID, size, pinned)
 *   in use     every container's image (CRI ListContainers, all states), and
 *              the sandbox image (the runtime's verbose Status config
 *              "sandboxImage", and --pod-infra-container-image when set,
 *              each resolved to its ID by ImageStatus): containerd 1.6 does
 *              not pin it, and no container lists it
 *   filesystem CRI ImageFsInfo's mountpoint, statfs (stats_image_fs)
 *   removal    CRI RemoveImage by ID
 *
 * Events (Warning, about the node): InvalidDiskCapacity, FreeDiskSpaceFailed,
 * and ImageGCFailed when a collection fails twice in a row (as upstream; the
 * first failure is only logged).  kubelet_image_garbage_collected_total
 * {reason} counts removals.
 *
 * Both periods are ckubelet's CKUBELET_GC_PERIOD environment variable when
 * set (a Go duration; for tests: upstream has no such setting).
 */
#ifndef CK_KUBELET_GC_LOOP_H
#define CK_KUBELET_GC_LOOP_H

#include "images/image_gc.h"
#include "util/error.h"

struct event_recorder;
struct kuberuntime;

struct gc_loop_options {
        struct image_gc_policy policy;
        struct kuberuntime *rt; /* its options' container GC policy */
        bool container_limit;   /* --maximum-dead-containers is set (>= 0) */
        const char *runtime_endpoint;
        const char *image_endpoint; /* NULL or "": the runtime's */
        int64_t runtime_timeout_ms;
        const char *pod_infra_image; /* NULL or "": none */
        const char *node_name;
        struct event_recorder *recorder; /* NULL: events logged only */
};

struct gc_loop;

/* Starts the thread, unless neither collector has anything to do
 * periodically (image GC's reason is logged, as upstream; the object is
 * made anyway, for gc_loop_reclaim).  Errors: a bad period in
 * CKUBELET_GC_PERIOD. */
int gc_loop_start(const struct gc_loop_options *o, struct gc_loop **out, ck_error_t *err);
/* Stops the thread (a collection under way finishes first) and frees.
 * NULL-safe. */
void gc_loop_stop(struct gc_loop *l);

/* The eviction manager's reclaim of disk (upstream DeleteAllUnusedContainers
 * then DeleteUnusedImages): the dead containers the container GC policy
 * does not keep (the newest of each kept at least), then every unused image
 * (the image GC's rules, its minimum age too), whatever the thresholds.
 * Thread-safe against the collections.  Errors: the first that failed (the
 * rest is still tried). */
int gc_loop_reclaim(struct gc_loop *l, ck_error_t *err);

#endif
