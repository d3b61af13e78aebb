/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Dynamic resource allocation (upstream pkg/kubelet/cm/dra): a pod's
 * ResourceClaims are prepared by their DRA drivers before its sandbox is
 * made.  ckubelet registers no DRA driver (it serves no plugin
 * registration), so it goes as far as an upstream node without the claim's
 * driver does: the claims are read and checked as upstream checks them,
 * then the preparation fails with upstream's "DRA driver <name> is not
 * registered", and the pod waits, with a FailedPrepareDynamicResources
 * event at each sync.  A pod without claims, or whose claims resolve to
 * none, is not touched.
 */
#ifndef CK_DRA_DRA_H
#define CK_DRA_DRA_H

#include "api/pod.h"
#include "client/objects.h"
#include "util/error.h"

#include <stdbool.h>

/* The pod names ResourceClaims (spec.resourceClaims). */
bool dra_pod_has_claims(const struct pod *pod);

/* upstream Manager.PrepareResources: 0 when there is nothing to prepare;
 * else -1 with err ("prepare dynamic resources: ...").  kube NULL
 * (standalone): a claim cannot be read. */
int dra_prepare_resources(const struct kube_objects *kube, const struct pod *pod, ck_error_t *err);

#endif
