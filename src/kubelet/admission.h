/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pod admission (upstream pkg/kubelet/lifecycle/predicate.go, the kubelet's
 * admit handlers in their order): the sysctl allowlist (kubelet/sysctl.h),
 * the device plugins' allocation (a callback), then the
 * predicateAdmitHandler's checks: the pod's OS (label and spec.os), max
 * pods, cpu, memory and extended resource requests against node
 * allocatable, the node selector and required node affinity against the
 * node's labels, host port conflicts, the node's NoExecute taints (not for
 * static pods).  Pure (but for the callback):
 * unit-tested from tables.
 */
#ifndef CK_KUBELET_ADMISSION_H
#define CK_KUBELET_ADMISSION_H

#include "api/pod.h"
#include "util/error.h"

#include <jansson.h>

#include <stdbool.h>
#include <stdint.h>

struct sysctl_allowlist;

/* A resource a pod lacks (upstream InsufficientResourceError): its name
 * (borrowed) and the amount short, requested - (capacity - used). */
struct admission_shortfall {
        const char *name;
        int64_t amount;
};
#define ADMISSION_MAX_SHORTFALLS 16

struct admission_node {
        int64_t allocatable_cpu_milli;
        int64_t allocatable_memory;
        int64_t max_pods;
        const struct sysctl_allowlist *sysctls; /* NULL: no sysctl is checked */
        /* the host enforces AppArmor (upstream apparmor.IsEnabled, read
         * once at start): else a pod that asks for a profile is refused */
        bool apparmor_enabled;
        /* the device plugins' devices for the pod's containers (upstream's
         * topology manager admit handler, after the sysctls, before the
         * predicates): -1 with err when they cannot be had.  NULL: none. */
        int (*allocate_devices)(void *ctx, const struct pod *pod, ck_error_t *err);
        void *devices_ctx;
        /* a critical pod that the predicates refuse only for resources
         * (upstream's CriticalPodAdmissionHandler): preempt others to free
         * what it lacks, 0 and it is admitted; -1 with why (upstream's
         * words: "no set of running pods found to reclaim resources: ...")
         * and it is refused with UnexpectedAdmissionError.  NULL: no
         * preemption. */
        int (*preempt)(void *ctx, const struct pod *pod, const struct admission_shortfall *s,
                       size_t n, char *why, size_t why_len);
        void *preempt_ctx;
        /* the extended resources the node offers (allocatable); a request
         * of another extended resource is not checked (upstream: a cluster
         * level resource) */
        const struct resource_count *extended;
        size_t n_extended;
        /* ephemeral-storage and the hugepages-<size> the node offers
         * (allocatable): a request of one it does not list is checked
         * against 0, as upstream's fit does */
        const struct resource_count *native;
        size_t n_native;
        /* the Node's name, labels (an object) and spec.taints (an array),
         * as the apiserver has them, else as this kubelet would register
         * it (upstream getNodeAnyWay); labels and taints may be NULL */
        const char *name;
        const json_t *labels;
        const json_t *taints;
};

struct admission_result {
        bool admit;
        char reason[320];   /* OutOfcpu, OutOfmemory, OutOf<extended>, NodePorts... */
        char message[1024]; /* upstream's wording */
};

/* `active` are the pods already admitted and not terminated. */
void admission_check(const struct pod *pod, struct pod *const *active, size_t n_active,
                     const struct admission_node *node, struct admission_result *out);
/* The same, with what each active pod's containers were given (actual[i]:
 * {"<container>": resources} of active[i], the actuated state, or NULL):
 * a container counts with the larger of its requests and those (upstream's
 * fit check of a resize counts pods as their status says they run). */
void admission_check_actual(const struct pod *pod, struct pod *const *active,
                            const json_t *const *actual, size_t n_active,
                            const struct admission_node *node, struct admission_result *out);

/* upstream getPodsToPreempt: the fewest pods, among those pod may preempt
 * (a critical pod any non-critical one, else by priority), whose requests
 * cover the shortfalls: besteffort first, then burstable, then guaranteed,
 * each class by the distance of its pods to what is still needed.
 * victims: room for n_active; returns how many, or -1 with why. */
int admission_pods_to_preempt(const struct pod *pod, struct pod *const *active, size_t n_active,
                              const struct admission_shortfall *s, size_t n_s,
                              const struct pod **victims, char *why, size_t why_len);

/* Shortfalls as upstream's admissionRequirementList.toString:
 * "[(res: cpu, q: 500), ]". */
void admission_shortfalls_string(const struct admission_shortfall *s, size_t n, char *buf,
                                 size_t len);

/* Whether the host enforces AppArmor: /sys/module/apparmor/parameters/
 * enabled says "Y" (runc's apparmor.IsEnabled). */
bool admission_apparmor_enabled(void);

/* A pod's effective request of the extended resource name, as
 * admission_pod_requests counts cpu. */
int64_t admission_pod_extended_request(const struct pod *pod, const char *name);
/* The same of ephemeral-storage (the eviction manager's ranking). */
int64_t admission_pod_ephemeral_storage_request(const struct pod *pod);
/* upstream PodLimits of ephemeral-storage: the limits summed as the
 * requests are; *has false when no container has one. */
int64_t admission_pod_ephemeral_storage_limit(const struct pod *pod, bool *has);

/* A pod's effective request (upstream resource helpers: the max of the sum of
 * app containers and each init container; sidecars add up), saturating. */
void admission_pod_requests(const struct pod *pod, int64_t *cpu_milli, int64_t *memory);
/* The same with each app container's and sidecar's request the larger of
 * its spec's and actual's ({"<container>": resources}, may be NULL). */
void admission_pod_requests_actual(const struct pod *pod, const json_t *actual, int64_t *cpu_milli,
                                   int64_t *memory);

#endif
