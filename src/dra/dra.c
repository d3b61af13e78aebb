/* SPDX-License-Identifier: Apache-2.0 */
#include "dra/dra.h"
#include "util/cleanup.h"

#include <string.h>

static const char *str_at(const json_t *o, const char *key)
{
        return json_string_value(json_object_get(o, key));
}

bool dra_pod_has_claims(const struct pod *pod)
{
        return json_array_size(
                   json_object_get(json_object_get(pod->raw, "spec"), "resourceClaims")) > 0;
}

/* upstream resourceclaim.Name: the claim's name (borrowed from the pod),
 * NULL with 0 when there is none to prepare, -1 with err when it cannot be
 * known; *must_check_owner for a claim made from a template. */
static int claim_name(const struct pod *pod, const json_t *pc, const char **name,
                      bool *must_check_owner, ck_error_t *err)
{
        *name = NULL;
        *must_check_owner = false;
        const char *direct = str_at(pc, "resourceClaimName");
        if (direct != NULL) {
                *name = direct;
                return 0;
        }
        const char *pc_name = str_at(pc, "name");
        if (str_at(pc, "resourceClaimTemplateName") == NULL)
                return ck_error_make(err, 0,
                                     "pod \"%s/%s\", spec.resourceClaim \"%s\": none of the "
                                     "supported fields are set",
                                     pod->namespace, pod->name, pc_name ? pc_name : "");
        size_t i;
        const json_t *st;
        json_array_foreach(
            json_object_get(json_object_get(pod->raw, "status"), "resourceClaimStatuses"), i, st)
        {
                const char *n = str_at(st, "name");
                if (n != NULL && pc_name != NULL && strcmp(n, pc_name) == 0) {
                        /* no name: nothing was generated, nothing to do */
                        *name = str_at(st, "resourceClaimName");
                        *must_check_owner = true;
                        return 0;
                }
        }
        return ck_error_make(err, 0, "pod \"%s/%s\": ResourceClaim not created yet", pod->namespace,
                             pod->name);
}

/* upstream resourceclaim.IsForPod: same namespace, the pod its controller */
static bool claim_is_for_pod(const struct pod *pod, const json_t *claim)
{
        const json_t *meta = json_object_get(claim, "metadata");
        const char *ns = str_at(meta, "namespace");
        if (ns == NULL || strcmp(ns, pod->namespace) != 0)
                return false;
        size_t i;
        const json_t *ref;
        json_array_foreach(json_object_get(meta, "ownerReferences"), i, ref)
        {
                const char *uid = str_at(ref, "uid");
                if (json_is_true(json_object_get(ref, "controller")))
                        return uid != NULL && strcmp(uid, pod->uid) == 0;
        }
        return false;
}

/* upstream resourceclaim.IsReservedForPod */
static bool claim_reserved_for_pod(const struct pod *pod, const json_t *claim)
{
        size_t i;
        const json_t *r;
        json_array_foreach(json_object_get(json_object_get(claim, "status"), "reservedFor"), i, r)
        {
                const char *uid = str_at(r, "uid");
                if (uid != NULL && strcmp(uid, pod->uid) == 0)
                        return true;
        }
        return false;
}

/* One claim of the pod: read and checked, then its first driver, which is
 * never registered here. */
static int prepare_claim(const struct kube_objects *kube, const struct pod *pod, const json_t *pc,
                         ck_error_t *err)
{
        const char *name;
        bool must_check_owner;
        if (claim_name(pod, pc, &name, &must_check_owner, err) < 0)
                return -1;
        if (name == NULL)
                return 0;
        if (kube == NULL)
                return ck_error_make(err, 0,
                                     "fetch ResourceClaim %s: no apiserver to read it from "
                                     "(standalone)",
                                     name);
        cleanup_json json_t *claim = NULL;
        if (kube->get(kube->opaque, "resourceclaims", pod->namespace, name, NULL, &claim, err) < 0)
                return ck_error_wrap(err, "fetch ResourceClaim %s", name);
        const char *claim_uid = str_at(json_object_get(claim, "metadata"), "uid");
        if (must_check_owner && !claim_is_for_pod(pod, claim))
                return ck_error_make(err, 0,
                                     "ResourceClaim %s/%s was not created for pod %s/%s (pod is "
                                     "not owner)",
                                     pod->namespace, name, pod->namespace, pod->name);
        if (!claim_reserved_for_pod(pod, claim))
                return ck_error_make(err, 0,
                                     "pod %s (%s) is not allowed to use ResourceClaim %s (%s)",
                                     pod->name, pod->uid, name, claim_uid ? claim_uid : "");
        const json_t *alloc = json_object_get(json_object_get(claim, "status"), "allocation");
        if (!json_is_object(alloc))
                return ck_error_make(err, 0, "ResourceClaim %s: not allocated", name);
        size_t i;
        const json_t *res;
        json_array_foreach(json_object_get(json_object_get(alloc, "devices"), "results"), i, res)
        {
                const char *driver = str_at(res, "driver");
                return ck_error_make(err, 0, "DRA driver %s is not registered",
                                     driver ? driver : "");
        }
        return 0;
}

int dra_prepare_resources(const struct kube_objects *kube, const struct pod *pod, ck_error_t *err)
{
        size_t i;
        const json_t *pc;
        json_array_foreach(json_object_get(json_object_get(pod->raw, "spec"), "resourceClaims"), i,
                           pc)
        {
                if (prepare_claim(kube, pod, pc, err) < 0)
                        return ck_error_wrap(err, "prepare dynamic resources");
        }
        return 0;
}
