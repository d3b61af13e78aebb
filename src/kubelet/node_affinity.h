/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pod's node constraints the kubelet checks at admission (upstream
 * component-helpers/scheduling/corev1: GetRequiredNodeAffinity(pod).Match
 * and FindMatchingUntoleratedTaint), read from the pod's object:
 * spec.nodeSelector and the required node affinity against the node's
 * labels (and metadata.name for matchFields), spec.tolerations against the
 * node's NoExecute taints.  Pure: unit-tested from tables.
 */
#ifndef CK_KUBELET_NODE_AFFINITY_H
#define CK_KUBELET_NODE_AFFINITY_H

#include <jansson.h>

#include <stdbool.h>

/* Whether the pod's nodeSelector and required node affinity
 * (spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution:
 * its terms ORed, each term's expressions ANDed; a term with none matches
 * nothing) match a node with these labels (an object, may be NULL) and
 * name.  pod_spec is the pod's spec object. */
bool node_affinity_match(const json_t *pod_spec, const json_t *node_labels, const char *node_name);

/* Whether every taint of the node (an array, may be NULL) with effect
 * NoExecute is tolerated by the pod's spec.tolerations. */
bool node_taints_tolerated(const json_t *pod_spec, const json_t *node_taints);

#endif
