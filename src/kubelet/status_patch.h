/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The strategic merge patch that turns one pod status into another
 * (upstream statusutil.PatchPodStatus: a two-way merge patch from the old
 * status to the new one).  A patch carrying only the new status would
 * leave behind what the new one no longer has: a condition's reason, a
 * container's previous state (waiting next to running).  So every key the
 * old status has and the new one does not is set to null, recursively;
 * lists with a merge key (conditions by type, container statuses by name,
 * pod and host IPs by ip) are matched element by element, and an element
 * that is gone gets a {"$patch": "delete"}.
 */
#ifndef CK_KUBELET_STATUS_PATCH_H
#define CK_KUBELET_STATUS_PATCH_H

#include <jansson.h>

/* The patch from old (may be NULL: the new status as is) to new_status, as
 * a new object; both borrowed. */
json_t *status_patch_build(const json_t *old, const json_t *new_status);

#endif
