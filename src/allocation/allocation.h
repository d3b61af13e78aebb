/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A pod's allocation (upstream pkg/kubelet/allocation): the resources the
 * kubelet admitted for each of its resizable containers (app containers and
 * sidecars), as {"<container>": v1.ResourceRequirements}.  The sync loop
 * hands the pod workers the pod with these resources in place of the spec's
 * while a resize waits to be admitted, as upstream's pod workers see the
 * allocated pod.
 *
 * Pure functions over pods and JSON; any thread.
 */
#ifndef CK_ALLOCATION_ALLOCATION_H
#define CK_ALLOCATION_ALLOCATION_H

#include "api/pod.h"
#include "util/error.h"

#include <jansson.h>
#include <stdbool.h>

/* upstream allocationFromPod: the spec's resources of every resizable
 * container ({} for one without).  A new reference. */
json_t *alloc_from_pod(const struct pod *pod);

/* Semantic equality of two v1.ResourceRequirements: a missing list equals
 * an empty one, quantities compare by value ("1" == "1000m"). */
bool alloc_resources_equal(const json_t *a, const json_t *b);

/* Whether every resizable container of pod has the resources alloc names
 * for it (containers alloc does not name are equal). */
bool alloc_pod_matches(const struct pod *pod, const json_t *alloc);

/* upstream UpdatePodFromAllocation: *out is pod with each resizable
 * container's resources replaced by alloc's (a new reference: pod itself
 * when they already match).  The new pod keeps pod's source. */
int alloc_update_pod(struct pod *pod, const json_t *alloc, struct pod **out, ck_error_t *err);

/* A container's cpu and memory as a resize compares them (upstream
 * containerResources): millicores and bytes, 0 when unset. */
struct alloc_resources {
        int64_t memory_limit, memory_request, cpu_limit, cpu_request;
};

/* From a v1.ResourceRequirements (NULL: all 0). */
void alloc_resources_from_json(const json_t *res, struct alloc_resources *out);
/* From a decoded container's resources. */
void alloc_resources_from_spec(const struct resource_requirements *r, struct alloc_resources *out);
/* A v1.ResourceRequirements of the non-zero values, quantities in the
 * apiserver's canonical text (a new reference). */
json_t *alloc_resources_to_json(const struct alloc_resources *r);
bool alloc_resources_same(const struct alloc_resources *a, const struct alloc_resources *b);

/* Whether a container of pod is resizable (an app container or a sidecar). */
bool alloc_container_resizable(const struct pod *pod, const char *name);

#endif
