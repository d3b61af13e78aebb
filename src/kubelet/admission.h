/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pod admission (upstream pkg/kubelet/lifecycle/predicate.go, the kubelet's
 * admit handlers in their order): the sysctl allowlist (kubelet/sysctl.h),
 * then the predicateAdmitHandler's checks: the pod's OS (label and spec.os),
 * max pods, cpu and memory requests against node allocatable, host port
 * conflicts.  Pure: unit-tested from tables.
 */
#ifndef CK_KUBELET_ADMISSION_H
#define CK_KUBELET_ADMISSION_H

#include "api/pod.h"

#include <stdbool.h>
#include <stdint.h>

struct sysctl_allowlist;

struct admission_node {
        int64_t allocatable_cpu_milli;
        int64_t allocatable_memory;
        int64_t max_pods;
        const struct sysctl_allowlist *sysctls; /* NULL: no sysctl is checked */
};

struct admission_result {
        bool admit;
        char reason[64];   /* OutOfcpu, OutOfmemory, OutOfpods, NodePorts, PodOS... */
        char message[256]; /* upstream's wording */
};

/* `active` are the pods already admitted and not terminated. */
void admission_check(const struct pod *pod, struct pod *const *active, size_t n_active,
                     const struct admission_node *node, struct admission_result *out);

/* A pod's effective request (upstream resource helpers: the max of the sum of
 * app containers and each init container; sidecars add up). */
void admission_pod_requests(const struct pod *pod, int64_t *cpu_milli, int64_t *memory);

#endif
