/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the pod's volumes, environment and image pulls read from the
 * apiserver: configMaps, secrets, service account tokens (the parts of
 * upstream's kubelet configMap/secret/token managers the sync needs), and
 * the cluster's Services (upstream's service lister, for the containers'
 * service environment variables).
 *
 * An interface (function pointers), so that the volume and runtime modules
 * do not depend on the REST client, and their unit tests can fake it.  The
 * real one (kube_objects_rest_new) talks to the apiserver with the node's
 * credentials; with no apiserver (standalone) the kubelet passes NULL and
 * consumers fail as upstream does without a kubeClient.
 *
 * Every function may be called from any thread, concurrently.
 */
#ifndef CK_CLIENT_OBJECTS_H
#define CK_CLIENT_OBJECTS_H

#include "client/informer.h"
#include "client/pool.h"
#include "util/error.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* A TokenRequest (authentication.k8s.io/v1) bound to a pod. */
struct kube_token_request {
        const char *namespace;
        const char *service_account;
        const char *audience;       /* NULL: the apiserver's default audiences */
        int64_t expiration_seconds; /* requested lifetime (>= 600) */
        const char *pod_name;       /* boundObjectRef */
        const char *pod_uid;
};

struct kube_objects {
        /* GET /api/v1/namespaces/<ns>/<resource>/<name>, resource "configmaps"
         * or "secrets", for the pod pod_uid: a new reference in *out; or
         * "resourceclaims", resource.k8s.io/v1, never from a cache.
         * err->code is the HTTP status when the apiserver answered (404: not
         * found, 403: forbidden). */
        int (*get)(void *opaque, const char *resource, const char *ns, const char *name,
                   const char *pod_uid, json_t **out, ck_error_t *err);
        /* POST .../serviceaccounts/<sa>/token: *token (a new string, a
         * secret) and its expiry (*expiration_unix, seconds since the epoch). */
        int (*request_token)(void *opaque, const struct kube_token_request *req, char **token,
                             int64_t *expiration_unix, ck_error_t *err);
        /* Every Service of the cluster from a watch cache: a new JSON array
         * (items shared: read only) with at least metadata.name/namespace,
         * spec.clusterIP and spec.ports of each; false (and an empty array)
         * until the cache has been filled once (upstream serviceHasSynced).
         * NULL: no Service source (no service variables). */
        bool (*list_services)(void *opaque, json_t **out);
        void *opaque;
};

/* The real one, over the clients of pool and the Service informer services
 * (both borrowed, must outlive it; services may be NULL: no list_services).
 * Objects read are reused for 20 s (upstream's Cache strategy): pods that
 * mount the same configMap or secret share one GET; a pod's first read of
 * an object is always fresh (upstream refreshes on a pod's registration),
 * so a pod started right after an edit sees the edit.  Free with
 * kube_objects_rest_free (NULL-safe). */
struct kube_objects *kube_objects_rest_new(struct rest_pool *pool, struct informer *services);
void kube_objects_rest_free(struct kube_objects *o);

#endif
