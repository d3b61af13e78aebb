/* SPDX-License-Identifier: Apache-2.0 */
#include "cm/resource_config.h"
#include "util/intmath.h"
#include "cm/cm.h"

#include <string.h>

/* Kernel bounds of cpu.shares and the conversions' constants
 * (upstream pkg/kubelet/cm/helpers_linux.go). */
#define MIN_SHARES 2
#define MAX_SHARES 262144
#define SHARES_PER_CPU 1024
#define MILLI_CPU_TO_CPU 1000
#define MIN_QUOTA_PERIOD 1000
#define MAX_WEIGHT 10000

uint64_t cm_milli_cpu_to_shares(int64_t milli_cpu)
{
        if (milli_cpu <= 0)
                return MIN_SHARES; /* the kernel's minimum, not its default 1024 */
        int64_t shares = milli_cpu * SHARES_PER_CPU / MILLI_CPU_TO_CPU;
        if (shares < MIN_SHARES)
                return MIN_SHARES;
        if (shares > MAX_SHARES)
                return MAX_SHARES;
        return (uint64_t)shares;
}

int64_t cm_milli_cpu_to_quota(int64_t milli_cpu, int64_t period_us)
{
        if (milli_cpu == 0)
                return 0;
        int64_t quota = milli_cpu * period_us / MILLI_CPU_TO_CPU;
        return quota < MIN_QUOTA_PERIOD ? MIN_QUOTA_PERIOD : quota;
}

uint64_t cm_cpu_shares_to_weight(uint64_t shares)
{
        if (shares >= MAX_SHARES)
                return MAX_WEIGHT;
        if (shares < MIN_SHARES)
                shares = MIN_SHARES;
        return 1 + ((shares - MIN_SHARES) * (MAX_WEIGHT - 1)) / (MAX_SHARES - MIN_SHARES);
}

uint64_t cm_cpu_weight_to_shares(uint64_t weight)
{
        if (weight < 1)
                weight = 1;
        return ((weight - 1) * (MAX_SHARES - MIN_SHARES)) / (MAX_WEIGHT - 1) + MIN_SHARES;
}

struct amounts {
        int64_t cpu, memory;
};

static void add(struct amounts *to, struct amounts a)
{
        to->cpu = ck_add_sat(to->cpu, a.cpu);
        to->memory = ck_add_sat(to->memory, a.memory);
}

static void take_max(struct amounts *to, struct amounts a)
{
        if (a.cpu > to->cpu)
                to->cpu = a.cpu;
        if (a.memory > to->memory)
                to->memory = a.memory;
}

/* A container's requests; an unset request with a limit is the limit (the
 * apiserver's defaulting, harmless when the decoder already applied it). */
static struct amounts requests_of(const struct container *c)
{
        const struct resource_requirements *r = &c->resources;
        struct amounts a = {0, 0};
        if (r->requests.has_cpu)
                a.cpu = r->requests.cpu_milli;
        else if (r->limits.has_cpu)
                a.cpu = r->limits.cpu_milli;
        if (r->requests.has_memory)
                a.memory = r->requests.memory;
        else if (r->limits.has_memory)
                a.memory = r->limits.memory;
        return a;
}

static struct amounts limits_of(const struct container *c)
{
        const struct resource_list *l = &c->resources.limits;
        struct amounts a = {l->has_cpu ? l->cpu_milli : 0, l->has_memory ? l->memory : 0};
        return a;
}

/* One pass of upstream's AggregateContainerRequests / AggregateContainerLimits:
 * sums app containers and sidecars; an init container counts with the
 * sidecars started before it; the pod gets the larger of the two.  `each`
 * sees every container's effective amounts (upstream's ContainerFn). */
static struct amounts aggregate(const struct pod *pod,
                                struct amounts (*of)(const struct container *),
                                struct cm_pod_totals *declared)
{
        struct amounts total = {0, 0}, sidecars = {0, 0}, init_max = {0, 0};
        for (size_t i = 0; i < pod->n_containers; i++) {
                struct amounts a = of(&pod->containers[i]);
                if (declared) {
                        declared->cpu_limits_declared &= a.cpu != 0;
                        declared->memory_limits_declared &= a.memory != 0;
                }
                add(&total, a);
        }
        for (size_t i = 0; i < pod->n_init_containers; i++) {
                const struct container *c = &pod->init_containers[i];
                struct amounts a = of(c);
                struct amounts effective;
                if (c->restart_policy != NULL && strcmp(c->restart_policy, "Always") == 0) {
                        add(&total, a);
                        add(&sidecars, a);
                        effective = sidecars;
                } else {
                        effective = a;
                        add(&effective, sidecars);
                }
                if (declared) {
                        declared->cpu_limits_declared &= effective.cpu != 0;
                        declared->memory_limits_declared &= effective.memory != 0;
                }
                take_max(&init_max, effective);
        }
        take_max(&total, init_max);
        return total;
}

void cm_pod_totals(const struct pod *pod, struct cm_pod_totals *out)
{
        memset(out, 0, sizeof(*out));
        out->cpu_limits_declared = true;
        out->memory_limits_declared = true;
        struct amounts req = aggregate(pod, requests_of, NULL);
        struct amounts lim = aggregate(pod, limits_of, out);
        out->cpu_requests = req.cpu;
        out->memory_requests = req.memory;
        out->cpu_limits = lim.cpu;
        out->memory_limits = lim.memory;
        /* spec.overhead: added to the requests, and to a limit some
         * container sets (upstream PodRequests / PodLimits) */
        const struct resource_list *o = &pod->overhead;
        if (!pod->has_overhead)
                return;
        if (o->has_cpu) {
                out->cpu_requests = ck_add_sat(out->cpu_requests, o->cpu_milli);
                if (out->cpu_limits > 0)
                        out->cpu_limits = ck_add_sat(out->cpu_limits, o->cpu_milli);
        }
        if (o->has_memory) {
                out->memory_requests = ck_add_sat(out->memory_requests, o->memory);
                if (out->memory_limits > 0)
                        out->memory_limits = ck_add_sat(out->memory_limits, o->memory);
        }
}

/* upstream HugePageLimits of the pod's requests (with its overhead): by page
 * size, the names of one size ("hugepages-2Mi", "hugepages-2048Ki") summed;
 * the other sizes get 0. */
static void add_hugepage(struct cgroup_resources *out, const struct pod *pod, const char *name)
{
        const size_t room = sizeof(out->hugetlb_limits) / sizeof(out->hugetlb_limits[0]);
        int64_t size = resource_hugepage_size(name);
        if (size <= 0)
                return;
        int64_t v = ck_add_sat(pod_resource_effective(pod, false, resource_list_hugepages, name),
                               resource_list_hugepages(&pod->overhead, name));
        for (size_t i = 0; i < out->n_hugetlb_limits; i++)
                if (out->hugetlb_limits[i].page_size == size) {
                        out->hugetlb_limits[i].limit = ck_add_sat(out->hugetlb_limits[i].limit, v);
                        return;
                }
        if (out->n_hugetlb_limits < room)
                out->hugetlb_limits[out->n_hugetlb_limits++] =
                    (struct cgroup_hugetlb_limit){.page_size = size, .limit = v};
}

static void hugetlb_limits(const struct pod *pod, struct cgroup_resources *out)
{
        const char *names[32];
        size_t n = pod_hugepage_names(pod, names, sizeof(names) / sizeof(names[0]));
        for (size_t i = 0; i < n; i++)
                add_hugepage(out, pod, names[i]);
}

void cm_pod_resource_config(const struct pod *pod, enum qos_class qos, int64_t pids_limit,
                            struct cgroup_resources *out)
{
        memset(out, 0, sizeof(*out));
        struct cm_pod_totals t;
        cm_pod_totals(pod, &t);
        out->has_cpu_shares = true;
        switch (qos) {
        case QOS_GUARANTEED:
                out->cpu_shares = cm_milli_cpu_to_shares(t.cpu_requests);
                out->has_cpu_quota = true;
                out->cpu_quota = cm_milli_cpu_to_quota(t.cpu_limits, CM_CPU_PERIOD_US);
                out->cpu_period = CM_CPU_PERIOD_US;
                out->has_memory = true;
                out->memory = t.memory_limits;
                break;
        case QOS_BURSTABLE:
                out->cpu_shares = cm_milli_cpu_to_shares(t.cpu_requests);
                if (t.cpu_limits_declared) {
                        out->has_cpu_quota = true;
                        out->cpu_quota = cm_milli_cpu_to_quota(t.cpu_limits, CM_CPU_PERIOD_US);
                        out->cpu_period = CM_CPU_PERIOD_US;
                }
                if (t.memory_limits_declared) {
                        out->has_memory = true;
                        out->memory = t.memory_limits;
                }
                break;
        case QOS_BEST_EFFORT:
                out->cpu_shares = MIN_SHARES;
                break;
        }
        if (pids_limit > 0) {
                out->has_pids_limit = true;
                out->pids_limit = pids_limit;
        }
        out->hugetlb = CGROUP_HUGETLB_NONE;
        hugetlb_limits(pod, out);
}
