/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The strategic merge patch that turns the apiserver's copy of a pod status
 * into the kubelet's (upstream mergePodStatus + statusutil.PatchPodStatus,
 * a two-way merge patch).  A patch carrying only the new status would leave
 * behind what the new one no longer has (a condition's reason once the pod
 * is Ready), so a key the old status has and the new one lacks is set to
 * null.  Only what the kubelet owns is written:
 *  - conditions of the kubelet's types (status_condition_owned_by_kubelet),
 *    matched by type; a vanished one gets {"$patch": "delete"}; conditions
 *    of other writers (readiness gates, DisruptionTarget) are left alone,
 *    but for the kubelet's own DisruptionTarget (an eviction: upstream's
 *    condition "shared by kubelet"), which replaces or adds the old one;
 *  - the top-level fields the kubelet sets (phase, message, reason, IPs,
 *    startTime, container statuses, qosClass...); others (nominatedNodeName
 *    of the scheduler, resourceClaimStatuses of DRA) are left alone;
 *  - podIPs and hostIPs are matched by ip; the container status lists have
 *    no patch strategy in the API and are replaced whole.
 */
#ifndef CK_KUBELET_STATUS_PATCH_H
#define CK_KUBELET_STATUS_PATCH_H

#include <jansson.h>

/* The patch from old (may be NULL) to new_status, as a new object; both
 * borrowed. */
json_t *status_patch_build(const json_t *old, const json_t *new_status);

#endif
