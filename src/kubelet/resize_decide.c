/* SPDX-License-Identifier: Apache-2.0 */
#include "kubelet/resize.h"
#include "allocation/allocation.h"

#include <inttypes.h>
#include <stdio.h>

static void pending(struct resize_decision *out, enum resize_outcome o, const char *reason)
{
        out->outcome = o;
        out->reason = reason;
}

void resize_decide(const struct pod *pod, const json_t *alloc, struct pod *const *others,
                   const json_t *const *actual, size_t n_others, const struct admission_node *node,
                   struct resize_decision *out)
{
        *out = (struct resize_decision){.outcome = RESIZE_NONE};
        if (alloc == NULL || alloc_pod_matches(pod, alloc))
                return;
        if (pod_is_static(pod)) {
                pending(out, RESIZE_INFEASIBLE, RESIZE_REASON_INFEASIBLE);
                snprintf(out->message, sizeof(out->message),
                         "In-place resize of static-pods is not supported");
                return;
        }
        /* more than the whole node: memory first, as upstream */
        int64_t cpu, mem;
        admission_pod_requests(pod, &cpu, &mem);
        bool memory = mem > node->allocatable_memory;
        if (memory || cpu > node->allocatable_cpu_milli) {
                pending(out, RESIZE_INFEASIBLE, RESIZE_REASON_INFEASIBLE);
                snprintf(out->message, sizeof(out->message),
                         "Node didn't have enough capacity: %s, requested: %" PRId64
                         ", capacity: %" PRId64,
                         memory ? "memory" : "cpu", memory ? mem : cpu,
                         memory ? node->allocatable_memory : node->allocatable_cpu_milli);
                return;
        }
        /* the admit handlers, against the others as they hold the node */
        struct admission_result ar;
        admission_check_actual(pod, others, actual, n_others, node, &ar);
        if (!ar.admit) {
                pending(out, RESIZE_DEFERRED, RESIZE_REASON_DEFERRED);
                snprintf(out->message, sizeof(out->message), "%s", ar.message);
                return;
        }
        out->outcome = RESIZE_ALLOCATED;
}

/* Whether the resize raises the pod's cpu or memory requests. */
static bool increases_requests(const struct resize_candidate *c)
{
        int64_t cpu_new, mem_new, cpu_old, mem_old;
        admission_pod_requests(c->desired, &cpu_new, &mem_new);
        admission_pod_requests(c->allocated, &cpu_old, &mem_old);
        return cpu_new > cpu_old || mem_new > mem_old;
}

int resize_compare(const struct resize_candidate *a, const struct resize_candidate *b)
{
        bool ia = increases_requests(a), ib = increases_requests(b);
        if (ia != ib)
                return ia ? 1 : -1;
        if (a->desired->priority != b->desired->priority)
                return a->desired->priority > b->desired->priority ? -1 : 1;
        bool ga = pod_qos_class(a->desired) == QOS_GUARANTEED;
        bool gb = pod_qos_class(b->desired) == QOS_GUARANTEED;
        if (ga != gb)
                return ga ? -1 : 1;
        int64_t ta = a->pending_since_ns, tb = b->pending_since_ns;
        if (ta != tb)
                return ta == 0 ? 1 : tb == 0 ? -1 : ta < tb ? -1 : 1;
        return 0;
}
