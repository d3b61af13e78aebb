/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Per pod UID and container name, a v1.ResourceRequirements (as JSON),
 * kept in a checkpoint file (upstream pkg/kubelet/allocation/state): the
 * resources the kubelet admitted (`allocated_pods_state`, owned by the sync
 * loop) and those it applied to the runtime (`actuated_pods_state`, written
 * by the pod workers).
 *
 * The file is upstream's, byte for byte where it matters, so that either
 * kubelet reads what the other wrote: {"data":"<json>","checksum":N} where
 * data is {"entries":{"<uid>":{"ContainerResources":{"<name>":{...}},
 * "PodLevelResources":null}}} and N is DeepHashObject's FNV-1a 32 of data
 * (util/gohash.h).  A checkpoint whose checksum does not match is refused,
 * as upstream refuses to start on it.
 *
 * Threading: thread-safe (one lock).  Writes go to the file at once
 * (temp file, fsync, rename), skipped when nothing changed.
 */
#ifndef CK_ALLOCATION_STATE_H
#define CK_ALLOCATION_STATE_H

#include "util/error.h"

#include <jansson.h>

struct alloc_state;

/* Reads dir/name when it exists (dir NULL: in memory only, for tests).
 * A malformed or corrupt file is an error that names it. */
int alloc_state_open(const char *dir, const char *name, struct alloc_state **out, ck_error_t *err);
void alloc_state_free(struct alloc_state *s);

/* The resources of one container (a new reference), or NULL if none. */
json_t *alloc_state_get(struct alloc_state *s, const char *uid, const char *container);
/* Every container of a pod as {"<name>": resources} (a new reference), or
 * NULL if the pod has no entry. */
json_t *alloc_state_get_pod(struct alloc_state *s, const char *uid);

/* Sets one container's resources (copied), and writes the checkpoint; when
 * the write fails, nothing changed (in memory as on disk). */
int alloc_state_set(struct alloc_state *s, const char *uid, const char *container,
                    const json_t *resources, ck_error_t *err);
/* Replaces a pod's containers with `containers` ({"<name>": resources},
 * copied), and writes the checkpoint; when the write fails, nothing
 * changed. */
int alloc_state_set_pod(struct alloc_state *s, const char *uid, const json_t *containers,
                        ck_error_t *err);

/* Forgets a pod (the file is rewritten at the next write, as upstream). */
void alloc_state_remove_pod(struct alloc_state *s, const char *uid);
/* Forgets every pod whose UID is not in uids[0..n) (upstream
 * RemoveOrphanedPods). */
void alloc_state_retain(struct alloc_state *s, const char *const *uids, size_t n);

#endif
