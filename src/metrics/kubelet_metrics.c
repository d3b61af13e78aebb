/* SPDX-License-Identifier: Apache-2.0 */
#include "metrics/kubelet_metrics.h"
#include "util/log.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static struct metrics_registry *legacy, *probes;
static struct metrics_family *node_name, *ops, *op_errors, *op_duration, *relist_duration,
    *relist_interval, *running_pods, *running_containers, *worker_duration, *pod_start,
    *rest_requests, *probe_total, *probe_duration, *dp_registrations, *dp_alloc_duration,
    *image_gc_total, *evictions, *preemptions, *eviction_stats_age, *shutdown_start, *shutdown_end;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static struct metrics_family *reg(struct metrics_registry *r, const struct metrics_opts *o)
{
        struct metrics_family *f = NULL;
        ck_error_t err = NULL;
        if (metrics_register(r, o, &f, &err) < 0) {
                LOG_ERROR("Cannot register a metric", "name=\"%s\" err=\"%s\"", o->name,
                          ck_error_msg(err));
                ck_error_release(&err);
        }
        return f;
}

static void init(void)
{
        legacy = metrics_registry_new();
        probes = metrics_registry_new();
        static const char *const node_l[] = {"node"};
        static const char *const op_l[] = {"operation_type"};
        static const char *const state_l[] = {"container_state"};
        static const char *const rest_l[] = {"code", "method", "host"};
        static const char *const probe_l[] = {"probe_type", "result",    "container",
                                              "pod",        "namespace", "pod_uid"};
        static const char *const probe_d_l[] = {"probe_type", "container", "pod", "namespace"};
        static double op_b[14];
        metrics_exponential_buckets(.005, 2.5, 14, op_b);

        node_name = reg(legacy, &(struct metrics_opts){.name = "kubelet_node_name",
                                                       .help = "The node's name. The count is "
                                                               "always 1.",
                                                       .type = METRICS_GAUGE,
                                                       .label_names = node_l,
                                                       .n_labels = 1});
        ops = reg(legacy, &(struct metrics_opts){.name = "kubelet_runtime_operations_total",
                                                 .help = "Cumulative number of runtime "
                                                         "operations by operation type.",
                                                 .type = METRICS_COUNTER,
                                                 .label_names = op_l,
                                                 .n_labels = 1});
        op_errors =
            reg(legacy, &(struct metrics_opts){.name = "kubelet_runtime_operations_errors_total",
                                               .help = "Cumulative number of runtime operation "
                                                       "errors by operation type.",
                                               .type = METRICS_COUNTER,
                                               .label_names = op_l,
                                               .n_labels = 1});
        op_duration = reg(
            legacy, &(struct metrics_opts){.name = "kubelet_runtime_operations_duration_seconds",
                                           .help = "Duration in seconds of runtime operations. "
                                                   "Broken down by operation type.",
                                           .type = METRICS_HISTOGRAM,
                                           .label_names = op_l,
                                           .n_labels = 1,
                                           .buckets = op_b,
                                           .n_buckets = 14});
        relist_duration =
            reg(legacy, &(struct metrics_opts){.name = "kubelet_pleg_relist_duration_seconds",
                                               .help = "Duration in seconds for relisting pods "
                                                       "in PLEG.",
                                               .type = METRICS_HISTOGRAM});
        relist_interval =
            reg(legacy, &(struct metrics_opts){.name = "kubelet_pleg_relist_interval_seconds",
                                               .help = "Interval in seconds between relisting "
                                                       "in PLEG.",
                                               .type = METRICS_HISTOGRAM});
        running_pods = reg(legacy, &(struct metrics_opts){.name = "kubelet_running_pods",
                                                          .help = "Number of pods that have a "
                                                                  "running pod sandbox",
                                                          .type = METRICS_GAUGE});
        running_containers =
            reg(legacy, &(struct metrics_opts){.name = "kubelet_running_containers",
                                               .help = "Number of containers currently running",
                                               .type = METRICS_GAUGE,
                                               .label_names = state_l,
                                               .n_labels = 1});
        worker_duration =
            reg(legacy, &(struct metrics_opts){.name = "kubelet_pod_worker_duration_seconds",
                                               .help = "Duration in seconds to sync a single "
                                                       "pod. Broken down by operation type: "
                                                       "create, update, or sync",
                                               .type = METRICS_HISTOGRAM,
                                               .label_names = op_l,
                                               .n_labels = 1});
        /* upstream's podStartupDurationBuckets */
        static const double start_b[] = {0.5, 1,   2,   3,    4,    5,    6,   8,   10,
                                         20,  30,  45,  60,   120,  180,  240, 300, 360,
                                         480, 600, 900, 1200, 1800, 2700, 3600};
        pod_start =
            reg(legacy,
                &(struct metrics_opts){.name = "kubelet_pod_start_duration_seconds",
                                       .help = "Duration in seconds from kubelet seeing a pod for "
                                               "the first time to the pod starting to run",
                                       .type = METRICS_HISTOGRAM,
                                       .buckets = start_b,
                                       .n_buckets = sizeof(start_b) / sizeof(start_b[0])});
        rest_requests = reg(legacy, &(struct metrics_opts){.name = "rest_client_requests_total",
                                                           .help = "Number of HTTP requests, "
                                                                   "partitioned by status code, "
                                                                   "method, and host.",
                                                           .type = METRICS_COUNTER,
                                                           .label_names = rest_l,
                                                           .n_labels = 3});
        probe_total = reg(probes, &(struct metrics_opts){.name = "prober_probe_total",
                                                         .help = "Cumulative number of a "
                                                                 "liveness, readiness or startup "
                                                                 "probe for a container by "
                                                                 "result.",
                                                         .type = METRICS_COUNTER,
                                                         .stability = METRICS_BETA,
                                                         .label_names = probe_l,
                                                         .n_labels = 6});
        probe_duration =
            reg(probes, &(struct metrics_opts){.name = "prober_probe_duration_seconds",
                                               .help = "Duration in seconds for a probe "
                                                       "response.",
                                               .type = METRICS_HISTOGRAM,
                                               .label_names = probe_d_l,
                                               .n_labels = 4});
        static const char *const resource_l[] = {"resource_name"};
        dp_registrations = reg(
            legacy, &(struct metrics_opts){.name = "kubelet_device_plugin_registration_total",
                                           .help = "Cumulative number of device plugin "
                                                   "registrations. Broken down by resource name.",
                                           .type = METRICS_COUNTER,
                                           .label_names = resource_l,
                                           .n_labels = 1});
        /* Prometheus' DefBuckets: the histogram's default */
        dp_alloc_duration = reg(
            legacy, &(struct metrics_opts){.name = "kubelet_device_plugin_alloc_duration_seconds",
                                           .help = "Duration in seconds to serve a device plugin "
                                                   "Allocation request. Broken down by resource "
                                                   "name.",
                                           .type = METRICS_HISTOGRAM,
                                           .label_names = resource_l,
                                           .n_labels = 1});
        static const char *const reason_l[] = {"reason"};
        image_gc_total = reg(
            legacy, &(struct metrics_opts){.name = "kubelet_image_garbage_collected_total",
                                           .help = "Total number of images garbage collected by "
                                                   "the kubelet, whether through disk usage or "
                                                   "image age.",
                                           .type = METRICS_COUNTER,
                                           .label_names = reason_l,
                                           .n_labels = 1});
        static const char *const signal_l[] = {"eviction_signal"};
        evictions = reg(legacy, &(struct metrics_opts){.name = "kubelet_evictions",
                                                       .help = "Cumulative number of pod evictions "
                                                               "by eviction signal",
                                                       .type = METRICS_COUNTER,
                                                       .label_names = signal_l,
                                                       .n_labels = 1});
        static const char *const preemption_l[] = {"preemption_signal"};
        preemptions =
            reg(legacy, &(struct metrics_opts){.name = "kubelet_preemptions",
                                               .help = "Cumulative number of pod preemptions by "
                                                       "preemption resource",
                                               .type = METRICS_COUNTER,
                                               .label_names = preemption_l,
                                               .n_labels = 1});
        eviction_stats_age = reg(
            legacy, &(struct metrics_opts){.name = "kubelet_eviction_stats_age_seconds",
                                           .help = "Time between when stats are collected, and "
                                                   "when pod is evicted based on those stats by "
                                                   "eviction signal",
                                           .type = METRICS_HISTOGRAM,
                                           .label_names = signal_l,
                                           .n_labels = 1});
        /* registered as upstream with GracefulNodeShutdownBasedOnPodPriority
         * (on by default): 0 until a shutdown */
        shutdown_start = reg(
            legacy, &(struct metrics_opts){.name = "kubelet_graceful_shutdown_start_time_seconds",
                                           .help = "Last graceful shutdown start time since unix "
                                                   "epoch in seconds",
                                           .type = METRICS_GAUGE});
        shutdown_end =
            reg(legacy, &(struct metrics_opts){.name = "kubelet_graceful_shutdown_end_time_seconds",
                                               .help = "Last graceful shutdown end time since unix "
                                                       "epoch in seconds",
                                               .type = METRICS_GAUGE});
        ck_error_t err = NULL;
        if (metrics_register_process(legacy, &err) < 0) {
                LOG_ERROR("Cannot register the process metrics", "err=\"%s\"", ck_error_msg(err));
                ck_error_release(&err);
        }
        /* upstream's /metrics/probes carries process_start_time_seconds
         * (RegisterProcessStartTime) */
}

struct metrics_registry *kmetrics_registry(void)
{
        pthread_once(&once, init);
        return legacy;
}

struct metrics_registry *kmetrics_probes_registry(void)
{
        pthread_once(&once, init);
        return probes;
}

/* The child of *fp for values, or NULL.  fp, not the family: the families
 * exist only once init has run. */
static struct metrics_child *child(struct metrics_family *const *fp, const char *const *values)
{
        pthread_once(&once, init);
        struct metrics_family *f = *fp;
        if (f == NULL)
                return NULL;
        struct metrics_child *c = NULL;
        ck_error_t err = NULL;
        if (metrics_child_get(f, values, &c, &err) < 0) {
                LOG_INFO(4, "Cannot record a metric", "err=\"%s\"", ck_error_msg(err));
                ck_error_release(&err);
                return NULL;
        }
        return c;
}

static void observe(struct metrics_family *const *f, const char *const *values, double v)
{
        struct metrics_child *c = child(f, values);
        if (c)
                metrics_histogram_observe(c, v);
}

static void inc(struct metrics_family *const *f, const char *const *values)
{
        struct metrics_child *c = child(f, values);
        if (c)
                metrics_counter_inc(c);
}

static void set(struct metrics_family *const *f, const char *const *values, double v)
{
        struct metrics_child *c = child(f, values);
        if (c)
                metrics_gauge_set(c, v);
}

void kmetrics_set_node_name(const char *node)
{
        set(&node_name, (const char *const[]){node}, 1);
}

void kmetrics_operation_type(const char *method, char *out, size_t size)
{
        size_t o = 0;
        for (const char *p = method; *p && o + 2 < size; p++) {
                bool sandbox = strncmp(p, "PodSandbox", 10) == 0;
                if (isupper((unsigned char)*p) && p != method)
                        out[o++] = '_';
                if (sandbox) { /* upstream's "podsandbox": one word */
                        size_t n = strlen("podsandbox");
                        if (o + n + 1 >= size)
                                break;
                        memcpy(out + o, "podsandbox", n);
                        o += n;
                        p += 9;
                        continue;
                }
                out[o++] = (char)tolower((unsigned char)*p);
        }
        out[o] = '\0';
}

void kmetrics_runtime_operation(const char *method, double seconds, bool failed)
{
        char op[64];
        kmetrics_operation_type(method, op, sizeof(op));
        const char *const v[] = {op};
        inc(&ops, v);
        observe(&op_duration, v, seconds);
        if (failed)
                inc(&op_errors, v);
}

void kmetrics_pleg_relist(double seconds, double interval)
{
        observe(&relist_duration, NULL, seconds);
        if (interval >= 0)
                observe(&relist_interval, NULL, interval);
}

void kmetrics_set_running(size_t pods, const size_t containers[4])
{
        static const char *const states[] = {"created", "running", "exited", "unknown"};
        set(&running_pods, NULL, (double)pods);
        for (size_t i = 0; i < 4; i++)
                set(&running_containers, (const char *const[]){states[i]}, (double)containers[i]);
}

void kmetrics_pod_worker(const char *operation, double seconds)
{
        observe(&worker_duration, (const char *const[]){operation}, seconds);
}

void kmetrics_pod_start(double seconds)
{
        observe(&pod_start, NULL, seconds);
}

void kmetrics_rest_request(int code, const char *method, const char *host)
{
        char c[16];
        if (code > 0)
                snprintf(c, sizeof(c), "%d", code);
        else
                snprintf(c, sizeof(c), "<error>");
        inc(&rest_requests, (const char *const[]){c, method, host ? host : ""});
}

/* Probe series are forgotten when their worker stops, while another probe
 * thread may be recording one: both under this lock, so that no child is
 * freed between its lookup and its update. */
static pthread_mutex_t probe_mu = PTHREAD_MUTEX_INITIALIZER;

void kmetrics_probe(const char *probe_type, const char *result, const char *container,
                    const char *pod, const char *namespace_, const char *pod_uid, double seconds)
{
        pthread_mutex_lock(&probe_mu);
        inc(&probe_total,
            (const char *const[]){probe_type, result, container, pod, namespace_, pod_uid});
        observe(&probe_duration, (const char *const[]){probe_type, container, pod, namespace_},
                seconds);
        pthread_mutex_unlock(&probe_mu);
}

void kmetrics_probe_forget(const char *probe_type, const char *container, const char *pod,
                           const char *namespace_, const char *pod_uid)
{
        pthread_once(&once, init);
        pthread_mutex_lock(&probe_mu);
        static const char *const results[] = {"successful", "failed", "unknown"};
        for (size_t i = 0; probe_total && i < 3; i++)
                metrics_child_delete(probe_total,
                                     (const char *const[]){probe_type, results[i], container, pod,
                                                           namespace_, pod_uid});
        if (probe_duration)
                metrics_child_delete(probe_duration,
                                     (const char *const[]){probe_type, container, pod, namespace_});
        pthread_mutex_unlock(&probe_mu);
}

void kmetrics_device_plugin_registration(const char *resource)
{
        inc(&dp_registrations, (const char *const[]){resource});
}

void kmetrics_device_plugin_alloc(const char *resource, double seconds)
{
        observe(&dp_alloc_duration, (const char *const[]){resource}, seconds);
}

void kmetrics_image_garbage_collected(const char *reason)
{
        inc(&image_gc_total, (const char *const[]){reason});
}

void kmetrics_graceful_shutdown(double start_s, double end_s)
{
        set(&shutdown_start, NULL, start_s);
        set(&shutdown_end, NULL, end_s);
}

void kmetrics_preemption(const char *signal)
{
        inc(&preemptions, (const char *const[]){signal});
}

void kmetrics_eviction(const char *signal, double stats_age_s)
{
        inc(&evictions, (const char *const[]){signal});
        if (stats_age_s >= 0)
                observe(&eviction_stats_age, (const char *const[]){signal}, stats_age_s);
}
