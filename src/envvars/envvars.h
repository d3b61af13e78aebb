/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Service environment variables (upstream pkg/kubelet/envvars and
 * kubelet_pods.go getServiceEnvVarMap): what a container learns of the
 * cluster's Services through its environment.
 *
 * For each chosen Service with a cluster IP (not "" or "None"):
 *   <NAME>_SERVICE_HOST=<clusterIP>
 *   <NAME>_SERVICE_PORT=<first port>
 *   <NAME>_SERVICE_PORT_<PORTNAME>=<port>                 (each named port)
 *   <NAME>_PORT=<proto>://<clusterIP>:<first port>        (docker links)
 *   <NAME>_PORT_<port>_<PROTO>=<proto>://<clusterIP>:<port>
 *   <NAME>_PORT_<port>_<PROTO>_PROTO=<proto>
 *   <NAME>_PORT_<port>_<PROTO>_PORT=<port>
 *   <NAME>_PORT_<port>_<PROTO>_ADDR=<clusterIP>
 * where NAME is the Service's name upper-cased with '-' as '_', and an IPv6
 * cluster IP is bracketed in the URLs.
 *
 * Chosen: default/kubernetes always (the apiserver: in-cluster clients read
 * KUBERNETES_SERVICE_HOST/PORT); with enableServiceLinks, every Service of
 * the pod's namespace too (one named "kubernetes" there wins over the
 * default one, as upstream's map makes it).
 *
 * Pure functions, any thread.
 */
#ifndef CK_ENVVARS_ENVVARS_H
#define CK_ENVVARS_ENVVARS_H

#include "api/pod.h"

#include <jansson.h>
#include <stdbool.h>

/* Adds to *out the variables of the Services a pod of namespace ns sees.
 * services (borrowed): a JSON array of Service objects, in any order; an
 * item without the fields above is skipped.  Variables come in the order of
 * the Services by name, then as listed above. */
void envvars_for_pod(const json_t *services, const char *ns, bool enable_service_links,
                     struct kv_list *out);

/* What of a Service envvars_for_pod reads (metadata.name, .namespace,
 * spec.clusterIP, spec.ports[].name/port/protocol): a new object, for an
 * informer's transform (it keeps a store of every Service small). */
json_t *envvars_service_fields(json_t *service);

#endif
