/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to src/cm: a pod's resources summed as upstream
 * component-helpers/resource PodRequests / PodLimits do (app containers
 * added, sidecars added, init containers taken at their maximum), and the
 * pod cgroup's values from them (upstream ResourceConfigForPod).
 */
#ifndef CK_CM_RESOURCE_CONFIG_H
#define CK_CM_RESOURCE_CONFIG_H

#include "api/pod.h"
#include "cm/cgroup_driver.h"

/* The CFS period the kubelet uses (--cpu-cfs-quota-period default), us. */
#define CM_CPU_PERIOD_US 100000

struct cm_pod_totals {
        int64_t cpu_requests; /* millicores */
        int64_t memory_requests;
        int64_t cpu_limits; /* millicores */
        int64_t memory_limits;
        /* every container (init containers with the sidecars running beside
         * them) has a non-zero limit */
        bool cpu_limits_declared;
        bool memory_limits_declared;
};

/* The requests and limits of the pod's containers, then its spec.overhead
 * added to the requests and to the limits some container declares. */
void cm_pod_totals(const struct pod *pod, struct cm_pod_totals *out);

/* The pod cgroup's values: Guaranteed shares, quota and memory; Burstable
 * shares, and quota / memory only when every container declares that limit;
 * BestEffort shares 2; spec.overhead added as cm_pod_totals does.
 * pids_limit > 0 adds pids.max; hugetlb: the pod's huge pages limits, 0 for
 * the sizes it does not ask for. */
void cm_pod_resource_config(const struct pod *pod, enum qos_class qos, int64_t pids_limit,
                            struct cgroup_resources *out);

#endif
