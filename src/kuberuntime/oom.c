/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The oom_score_adj of a container (upstream pkg/kubelet/qos/policy.go,
 * GetContainerOOMScoreAdjust, without pod-level resources):
 *   node-critical pods and Guaranteed pods  -997
 *   BestEffort                              1000
 *   Burstable  1000 - 1000 * memoryRequest / memoryCapacity, clamped to
 *              [3, 999]; a sidecar gets at most the value of the regular
 *              container with the smallest memory request.
 */
#include "kuberuntime/builders.h"

#include <string.h>

#define GUARANTEED_OOM_SCORE_ADJ (-997)
#define BESTEFFORT_OOM_SCORE_ADJ 1000
static bool is_node_critical_pod(const struct pod *pod)
{
        return pod_is_critical(pod) && pod->priority_class_name != NULL &&
               strcmp(pod->priority_class_name, "system-node-critical") == 0;
}

static int64_t memory_request(const struct container *c)
{
        return c->resources.requests.has_memory ? c->resources.requests.memory : 0;
}

/* upstream isSidecarContainer: restartPolicy Always and listed as an init container. */
static bool is_sidecar(const struct pod *pod, const struct container *c)
{
        if (!container_is_sidecar(c))
                return false;
        for (size_t i = 0; i < pod->n_init_containers; i++)
                if (strcmp(pod->init_containers[i].name, c->name) == 0)
                        return true;
        return false;
}

static int64_t min_regular_container_memory(const struct pod *pod)
{
        if (pod->n_containers == 0)
                return 0;
        int64_t min = memory_request(&pod->containers[0]);
        for (size_t i = 1; i < pod->n_containers; i++)
                if (memory_request(&pod->containers[i]) < min)
                        min = memory_request(&pod->containers[i]);
        return min;
}

int64_t kuberuntime_oom_score_adj(const struct pod *pod, const struct container *c,
                                  int64_t node_memory_capacity)
{
        if (is_node_critical_pod(pod))
                return GUARANTEED_OOM_SCORE_ADJ;
        switch (pod_qos_class(pod)) {
        case QOS_GUARANTEED:
                return GUARANTEED_OOM_SCORE_ADJ;
        case QOS_BEST_EFFORT:
                return BESTEFFORT_OOM_SCORE_ADJ;
        case QOS_BURSTABLE:
                break;
        }
        /* An unknown capacity would divide by zero; treat the node as
         * having exactly the request (the clamp below then applies). */
        int64_t capacity = node_memory_capacity > 0 ? node_memory_capacity : 1;

        int64_t adj = 1000 - (1000 * memory_request(c)) / capacity;
        if (is_sidecar(pod, c)) {
                int64_t min_adj = 1000 - (1000 * min_regular_container_memory(pod)) / capacity;
                if (adj > min_adj)
                        adj = min_adj;
        }
        /* A Guaranteed pod using all of memory scores 10; Burstable stays above it. */
        if (adj < 1000 + GUARANTEED_OOM_SCORE_ADJ)
                return 1000 + GUARANTEED_OOM_SCORE_ADJ;
        /* ...and below BestEffort. */
        if (adj == BESTEFFORT_OOM_SCORE_ADJ)
                return adj - 1;
        return adj;
}
