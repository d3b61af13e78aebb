/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kubelet's own metrics (upstream pkg/kubelet/metrics, the prober's
 * ProberResults/ProberDuration, client-go's rest_client_requests_total and
 * the process collector), in two process-wide registries as upstream's
 * legacyregistry and the prober's own: kmetrics_registry() is what /metrics
 * renders, kmetrics_probes_registry() what /metrics/probes renders.
 *
 * The record functions may be called from any thread, before or after
 * kmetrics_init (the families are registered on first use).  Label values
 * are copied.
 */
#ifndef CK_METRICS_KUBELET_METRICS_H
#define CK_METRICS_KUBELET_METRICS_H

#include "metrics/metrics.h"

#include <stdbool.h>
#include <stddef.h>

struct metrics_registry *kmetrics_registry(void);
struct metrics_registry *kmetrics_probes_registry(void);

/* kubelet_node_name{node} 1. */
void kmetrics_set_node_name(const char *node);

/* kubelet_runtime_operations_total, _errors_total and _duration_seconds
 * for a CRI call: method is the RPC's name ("ListPodSandbox"), recorded as
 * upstream's operation_type ("list_podsandbox"). */
void kmetrics_runtime_operation(const char *method, double seconds, bool failed);

/* kubelet_pleg_relist_duration_seconds, and _interval_seconds when
 * interval >= 0 (the time since the previous relist began). */
void kmetrics_pleg_relist(double seconds, double interval);

/* kubelet_running_pods and kubelet_running_containers{container_state}
 * ("created", "running", "exited", "unknown") as the last relist saw them. */
void kmetrics_set_running(size_t pods, const size_t containers[4]);

/* kubelet_pod_worker_duration_seconds{operation_type}: "create", "update"
 * or "sync" (upstream's SyncPodType), from the work's submission to its
 * end. */
void kmetrics_pod_worker(const char *operation, double seconds);

/* kubelet_pod_start_duration_seconds: from the kubelet first seeing a pod
 * to the pod running. */
void kmetrics_pod_start(double seconds);

/* rest_client_requests_total{code,method,host}; code 0: "<error>". */
void kmetrics_rest_request(int code, const char *method, const char *host);

/* prober_probe_total{probe_type,result,container,pod,namespace,pod_uid} and
 * prober_probe_duration_seconds: probe_type "Liveness", "Readiness",
 * "Startup"; result "successful", "failed", "unknown". */
void kmetrics_probe(const char *probe_type, const char *result, const char *container,
                    const char *pod, const char *namespace_, const char *pod_uid, double seconds);

/* Forgets a probe worker's series (upstream deletes them when the worker
 * stops). */
void kmetrics_probe_forget(const char *probe_type, const char *container, const char *pod,
                           const char *namespace_, const char *pod_uid);

/* kubelet_device_plugin_registration_total{resource_name}: a Register
 * call, whatever its outcome (counted before it is checked). */
void kmetrics_device_plugin_registration(const char *resource);
/* kubelet_device_plugin_alloc_duration_seconds{resource_name}: an
 * Allocate call to a plugin, failed or not. */
void kmetrics_device_plugin_alloc(const char *resource, double seconds);

/* kubelet_image_garbage_collected_total{reason}: an image removed by the
 * image garbage collector, reason "age" or "space". */
void kmetrics_image_garbage_collected(const char *reason);

/* kubelet_evictions{eviction_signal} counted, and
 * kubelet_eviction_stats_age_seconds{eviction_signal} observed when
 * stats_age_s >= 0 (from the stats' time to the eviction). */
void kmetrics_eviction(const char *signal, double stats_age_s);

/* kubelet_preemptions{preemption_signal}: a pod preempted for a critical
 * one, signal the first resource it lacked. */
void kmetrics_preemption(const char *signal);

/* kubelet_graceful_shutdown_start_time_seconds and
 * kubelet_graceful_shutdown_end_time_seconds set (seconds since the
 * epoch; 0: none). */
void kmetrics_graceful_shutdown(double start_s, double end_s);

/* The operation_type upstream's instrumented CRI services record for a
 * method name into out ("PodSandboxStatus" -> "podsandbox_status"). */
void kmetrics_operation_type(const char *method, char *out, size_t size);

#endif
