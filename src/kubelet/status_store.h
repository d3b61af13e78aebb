/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The versioned pod status cache (the local half of upstream's status
 * manager): per pod UID, the pod as last seen and its latest API status.
 * Written by the sync loop (pods) and the workers (statuses); read by the
 * read-only server.  Thread-safe, one lock.
 */
#ifndef CK_KUBELET_STATUS_STORE_H
#define CK_KUBELET_STATUS_STORE_H

#include "api/pod.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

struct status_store;

struct status_store *status_store_new(void);
void status_store_free(struct status_store *st);

/* Adds or replaces the pod of its UID (takes a new reference). */
void status_store_set_pod(struct status_store *st, struct pod *pod);
/* Sets the status of a known UID (steals `status`); ignored for an unknown
 * UID (the pod was removed meanwhile).  Bumps the version when it changed. */
void status_store_set_status(struct status_store *st, const char *uid, json_t *status);
/* New reference to the latest status, or NULL. */
json_t *status_store_get_status(struct status_store *st, const char *uid);
/* The status' version (number of changes), 0 if unknown. */
uint64_t status_store_version(struct status_store *st, const char *uid);
void status_store_remove(struct status_store *st, const char *uid);

/* Cluster mode: the API object a pod's status goes to.  An apiserver pod
 * is its own; a static pod's is its mirror pod (api_uid NULL: none yet).
 * A new target makes the status pending again (returns true). */
bool status_store_set_api_uid(struct status_store *st, const char *uid, const char *api_uid);

/* A status that the apiserver has not seen yet (status_store_pending). */
struct status_pending {
        char *uid, *api_uid, *namespace, *name;
        json_t *status; /* a reference */
        json_t *old;    /* what the apiserver has, as far as we know (a reference or NULL) */
        uint64_t version;
};
/* uid's containers are all stopped (upstream: its pod worker finished
 * terminating): from now on a terminal phase is published (until then the
 * apiserver keeps seeing the phase it had, as upstream's mergePodStatus
 * delays it), and its status is sent again. */
void status_store_set_stopped(struct status_store *st, const char *uid);

/* Every pod whose latest status was not synced and that has an API target
 * (new array of n entries; free with status_pending_free).  A terminal
 * phase of a pod not stopped yet is held back (the apiserver's phase,
 * reason and message). */
size_t status_store_pending(struct status_store *st, struct status_pending **out);
void status_pending_free(struct status_pending *p, size_t n);
/* The apiserver has `version` of uid's status, `sent` (borrowed; NULL: the
 * pod is gone there). */
void status_store_mark_synced(struct status_store *st, const char *uid, uint64_t version,
                              json_t *sent);

/* The apiserver's copy of uid's status changed (someone else wrote it, e.g.
 * the node lifecycle controller setting Ready=False): when the status we
 * last synced says otherwise for the phase or a condition we set, it is
 * pending again (upstream needsReconcile).  Returns true then. */
bool status_store_reconcile(struct status_store *st, const char *uid, const json_t *api_status);

/* The pod namespace/name (a new reference, NULL if unknown) and, in
 * *status, its latest status (a new reference or NULL).  Of two pods of the
 * same name (one being deleted, its successor created), the one not being
 * deleted. */
struct pod *status_store_find_by_name(struct status_store *st, const char *ns, const char *name,
                                      json_t **status);

/* The resize conditions of a pod (upstream status manager's
 * podResizeConditions), set by the sync loop (PodResizePending) and the
 * workers (PodResizeInProgress) and reported by each status generation.
 * Each is True with lastProbeTime = when it was last set and a
 * lastTransitionTime kept while its reason stays.  Unknown UIDs are
 * ignored. */
/* Sets PodResizePending (reason Deferred or Infeasible); true when its
 * reason or generation changed. */
bool status_store_set_resize_pending(struct status_store *st, const char *uid, const char *reason,
                                     const char *message, int64_t generation);
void status_store_clear_resize_pending(struct status_store *st, const char *uid);
/* Sets PodResizeInProgress: an existing one keeps its generation, and its
 * reason and message unless new ones are given (upstream: clear it first
 * to start a new generation); true when its reason or message changed.
 * *generation_out (may be NULL): the condition's generation. */
bool status_store_set_resize_in_progress(struct status_store *st, const char *uid,
                                         const char *reason, const char *message,
                                         int64_t generation, int64_t *generation_out);
/* Clears PodResizeInProgress; true (and its generation) if there was one. */
bool status_store_clear_resize_in_progress(struct status_store *st, const char *uid,
                                           int64_t *generation);
/* The set conditions, Pending before InProgress (a new array). */
json_t *status_store_resize_conditions(struct status_store *st, const char *uid);
/* A restarted kubelet takes the resize conditions back from the pod's API
 * status (upstream BackfillPodResizeConditions); ones already set stay. */
void status_store_backfill_resize_conditions(struct status_store *st, const char *uid,
                                             const json_t *api_status);

/* A v1 PodList of every pod with its status (new reference). */
json_t *status_store_pod_list(struct status_store *st);

#endif
