/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The runtime status of each pod, kept between its syncs (upstream's pod
 * cache, pkg/kubelet/container/cache.go, which the PLEG fills): a pod whose
 * containers and sandboxes did not change since its last sync is synced
 * again from what that sync saw, without asking the runtime.  A pod's
 * periodic resync then costs no CRI call at all, as upstream's.
 *
 * What the cache holds is exactly what the runtime said at the end of the
 * pod's last successful sync.  It goes stale only when the pod's state
 * changes in the runtime, which the PLEG sees at its next relist (at most
 * a relist period later, as upstream's cache) and reports by
 * pod_cache_observe; or by a call of the kubelet's own, which the sync
 * knows of (cri_client_changes) and answers by reading the status again
 * (the PLEG's event about that change then finds it already kept).
 *
 * Generations close the race between a read of the runtime and an event
 * that arrives while it is in flight: a status is put back only if no
 * invalidation of its pod came after the generation read before the
 * runtime was asked.  Thread-safe, one lock: the PLEG thread invalidates,
 * the pod workers take and put (one worker per pod at a time).
 */
#ifndef CK_KUBELET_POD_CACHE_H
#define CK_KUBELET_POD_CACHE_H

#include "kuberuntime/runtime.h"

#include <stdint.h>

struct pod_cache;

struct pod_cache *pod_cache_new(void);
void pod_cache_free(struct pod_cache *c);

/* The PLEG's events are what keep the cache true: a kept status is used
 * only while the PLEG relists (its last successful relist at most this
 * long ago); a PLEG that stalls or fails makes every sync read the runtime,
 * as before the cache. */
#define POD_CACHE_RELIST_MAX_AGE_MS 5000

/* A status with a container that exited less than this long before it was
 * read is kept only that long: some of what the runtime reports about an
 * exit may settle after it (containerd's OOM event and exit event take
 * separate paths; the reason OOMKilled can come later, with no change of
 * state the PLEG would see). */
#define POD_CACHE_RECENT_EXIT_MS 10000

/* A successful relist ended at now_ms (CLOCK_MONOTONIC); the PLEG thread. */
void pod_cache_relisted(struct pod_cache *c, int64_t now_ms);

/* The status kept for uid, taken out of the cache (the caller owns it and
 * frees it or puts it back), or NULL when there is none, it went stale or
 * expired, or the PLEG has not relisted for POD_CACHE_RELIST_MAX_AGE_MS
 * before now_ms.  *gen: the pod's generation now; with NULL returned, read
 * the runtime after this call and put what it says with *gen. */
struct runtime_pod_status *pod_cache_take(struct pod_cache *c, const char *uid, int64_t now_ms,
                                          uint64_t *gen);

/* Until when (CLOCK_MONOTONIC ms) a status read at now_ms (now_real_ns:
 * the same instant, CLOCK_REALTIME, which the runtime's timestamps use) may
 * be kept: for ever (INT64_MAX), or POD_CACHE_RECENT_EXIT_MS after the
 * read when one of its containers exited less than that before it. */
int64_t pod_cache_expiry(const struct runtime_pod_status *s, int64_t now_ms, int64_t now_real_ns);

/* The pod's generation now: read it before asking the runtime again. */
uint64_t pod_cache_generation(struct pod_cache *c, const char *uid);

/* Keeps s (stolen) as uid's status until expires_ms (pod_cache_expiry),
 * if no invalidation of uid came since gen was read and uid was not
 * forgotten; otherwise frees it. */
void pod_cache_put(struct pod_cache *c, const char *uid, struct runtime_pod_status *s, uint64_t gen,
                   int64_t expires_ms);

/* uid's state in the runtime changed: what is kept of it is stale, and so
 * is any read in flight. */
void pod_cache_invalidate(struct pod_cache *c, const char *uid);

/* The PLEG saw uid change, to `seen` (its relist's entry, NULL: gone).
 * What is kept stays when it shows exactly that (every sandbox and
 * container by ID and state: the change was the last sync's own, read at
 * its end); otherwise as pod_cache_invalidate. */
void pod_cache_observe(struct pod_cache *c, const char *uid, const struct runtime_pod_entry *seen);

/* Every pod's (the runtime answers again after it failed: events may have
 * been missed). */
void pod_cache_invalidate_all(struct pod_cache *c);

/* The pod is gone: drops all of it. */
void pod_cache_forget(struct pod_cache *c, const char *uid);

/* How many pods the cache knows (tests). */
size_t pod_cache_size(struct pod_cache *c);

#endif
