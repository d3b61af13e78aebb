/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The status manager's apiserver half (upstream pkg/kubelet/status
 * syncBatch) and the kubelet's other writes to pods: a thread that
 *  - PATCHes pods/<name>/status with every status of the status store the
 *    apiserver has not seen (its version), with the pod's UID as
 *    precondition (metadata.uid in the patch), as soon as it changes and
 *    again every 10 s until it lands: retried, never lost;
 *  - deletes pods for good once the kubelet has stopped them (grace period
 *    0, UID precondition);
 *  - creates and deletes mirror pods (the API face of static pods), with
 *    the owner reference to the node the Node authorizer requires.
 * A pod the apiserver no longer has (404) or that was replaced under the
 * same name (409, the UID precondition) is dropped, not retried.
 */
#ifndef CK_KUBELET_STATUS_MANAGER_H
#define CK_KUBELET_STATUS_MANAGER_H

#include "client/pool.h"
#include "kubelet/status_store.h"

struct status_manager;

/* Starts the thread.  store and pool are borrowed and must outlive it. */
struct status_manager *status_manager_start(struct status_store *store, struct rest_pool *pool,
                                            const char *node_name);
/* Stops the thread (within about a second) and frees.  NULL-safe. */
void status_manager_stop(struct status_manager *sm);

/* A status changed: sync soon.  NULL-safe, any thread. */
void status_manager_notify(struct status_manager *sm);

/* Writes uid's pending status now, on the calling thread (a pod worker,
 * before the pod's DELETE: its terminal status must land first).  True
 * when nothing is left pending for it.  NULL-safe. */
bool status_manager_sync_pod(struct status_manager *sm, const char *uid);

/* Queue a DELETE of the pod (grace period 0, UID precondition).  Any thread. */
void status_manager_delete_pod(struct status_manager *sm, const char *ns, const char *name,
                               const char *uid);

/* Queue the creation of a mirror pod: `mirror` (stolen) is the object to
 * POST, without its owner reference (added here).  When replace_uid is not
 * NULL, that stale mirror pod is deleted first. */
void status_manager_create_mirror(struct status_manager *sm, json_t *mirror,
                                  const char *replace_uid);

#endif
