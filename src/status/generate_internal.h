/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to src/status: the steps of status_generate(), each after its
 * upstream function.  Container statuses are v1.ContainerStatus JSON
 * objects from the start (the old status arrives as JSON and whole parts of
 * it are carried over), so every step reads and writes JSON.
 */
#ifndef CK_STATUS_GENERATE_INTERNAL_H
#define CK_STATUS_GENERATE_INTERNAL_H

#include "status/generate.h"

#include <jansson.h>
#include <stdbool.h>

/* The runtime's containers, newest first (by created_at), borrowed. */
struct status_runtime_view {
        const struct runtime_container_status **items;
        size_t n;
};

void status_runtime_view_init(struct status_runtime_view *v, const struct runtime_pod_status *rt);
void status_runtime_view_release(struct status_runtime_view *v);
/* The newest runtime container of that name, or NULL. */
const struct runtime_container_status *status_runtime_latest(const struct status_runtime_view *v,
                                                             const char *name);

/* ---- JSON accessors (NULL-safe) ---- */

/* cs["state"][which] ("waiting", "running", "terminated"), or NULL. */
json_t *status_cs_state(const json_t *cs, const char *which);
/* cs["lastState"][which], or NULL. */
json_t *status_cs_last(const json_t *cs, const char *which);
/* The element of an array of objects whose "name" (or "type") equals name. */
json_t *status_find_named(const json_t *arr, const char *key, const char *name);
/* obj[key] as an integer (0 if absent). */
json_int_t status_get_int(const json_t *obj, const char *key);
/* obj[key] as a string (NULL if absent). */
const char *status_get_str(const json_t *obj, const char *key);
/* obj[key] is JSON true. */
bool status_get_true(const json_t *obj, const char *key);
/* Borrowed value from a kv list (NULL list or key: NULL). */
const char *status_kv(const struct kv_list *l, const char *key);

/* ---- convertToAPIContainerStatuses (container_statuses.c) ---- */

enum status_list { STATUS_APP, STATUS_INIT, STATUS_EPHEMERAL };

/* The statuses of the app, init or ephemeral containers: init ones in spec
 * order, the others sorted by name (as upstream).  New reference. */
json_t *status_container_statuses(const struct status_input *in,
                                  const struct status_runtime_view *rt, enum status_list list);

/* The probe manager's UpdatePodStatus: sets "started" and "ready". */
void status_apply_probes(const struct status_input *in, json_t *app, json_t *init);

/* ---- getPhase (phase.c) ---- */

/* pod_has_initialized: upstream HasAnyActiveRegularContainerStarted. */
const char *status_compute_phase(const struct pod *pod, const json_t *app, const json_t *init,
                                 bool pod_has_initialized);

/* HasAnyActiveRegularContainerStarted over the runtime status. */
bool status_any_active_regular_started(const struct pod *pod, const struct runtime_pod_status *rt);

/* ---- conditions (conditions.c) ---- */

/* Appends the kubelet-owned conditions (PodReadyToStartContainers,
 * Initialized, Ready, ContainersReady, PodScheduled) to conds, whose other
 * entries (conditions not owned by the kubelet) the readiness gates read. */
void status_append_conditions(const struct status_input *in, json_t *conds, const json_t *app,
                              const json_t *init, const char *phase);

/* Sets lastTransitionTime on every condition: the old one when the status
 * did not change, else now (status manager updateLastTransitionTime). */
void status_set_transition_times(json_t *conds, const json_t *old_status, int64_t now_ns);

/* A new RFC 3339 (seconds) string for a realtime ns value. */
json_t *status_time(int64_t ns);

#endif
