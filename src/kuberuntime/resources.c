/* SPDX-License-Identifier: Apache-2.0 */
/*
 * LinuxContainerResources from requests and limits (upstream
 * kuberuntime_container_linux.go calculateLinuxResources,
 * kuberuntime_sandbox_linux.go calculateSandboxResources, and
 * pkg/kubelet/cm/helpers_linux.go for the CFS arithmetic, src/cm here).
 *
 * Hugepage limits go only to a container that asks for huge pages
 * (upstream sends a zero limit per page size to every container, which runc
 * cannot apply on a hybrid cgroup node where hugetlb lives only in the v2
 * hierarchy; the pod cgroup's hugetlb limits bound the others).  Not sent:
 * swap settings (NodeSwap is off by default).
 */
#include "cm/cm.h"
#include "kuberuntime/builders_internal.h"

#include "util/intmath.h"
#include "util/xalloc.h"

Runtime__V1__LinuxContainerResources *kuberuntime__linux_resources(bool has_cpu_request,
                                                                   int64_t cpu_request_milli,
                                                                   int64_t cpu_limit_milli,
                                                                   int64_t memory_limit)
{
        Runtime__V1__LinuxContainerResources *r = xmalloc(sizeof(*r));
        runtime__v1__linux_container_resources__init(r);
        /* no request but a limit: the request defaults to the limit */
        r->cpu_shares =
            (int64_t)cm_milli_cpu_to_shares(has_cpu_request ? cpu_request_milli : cpu_limit_milli);
        if (memory_limit != 0)
                r->memory_limit_in_bytes = memory_limit;
        /* cpuCFSQuota defaults to true upstream */
        r->cpu_period = KR_QUOTA_PERIOD;
        r->cpu_quota = cm_milli_cpu_to_quota(cpu_limit_milli, KR_QUOTA_PERIOD);
        /* cgroup v2: kill the whole container on OOM (singleProcessOOMKill
         * defaults to false there; v1 has no such knob) */
        if (kuberuntime__cgroup2_unified())
                KR_MAP_SET(r, unified,
                           runtime__v1__linux_container_resources__unified_entry__descriptor,
                           "memory.oom.group", "1");
        return r;
}

void kuberuntime__hugepage_limits(Runtime__V1__LinuxContainerResources *r,
                                  const struct resource_list *limits)
{
        if (limits->n_hugepages == 0)
                return;
        int64_t sizes[16];
        size_t n = cm_hugepage_sizes(sizes, sizeof(sizes) / sizeof(sizes[0]));
        r->hugepage_limits = xcalloc(n ? n : 1, sizeof(*r->hugepage_limits));
        for (size_t i = 0; i < n; i++) {
                Runtime__V1__HugepageLimit *h = xmalloc(sizeof(*h));
                runtime__v1__hugepage_limit__init(h);
                char name[16];
                cm_hugepage_name(sizes[i], name, sizeof(name));
                h->page_size = xstrdup(name);
                for (size_t k = 0; k < limits->n_hugepages; k++)
                        if (resource_hugepage_size(limits->hugepages[k].name) == sizes[i])
                                h->limit = (uint64_t)limits->hugepages[k].value;
                r->hugepage_limits[r->n_hugepage_limits++] = h;
        }
}

/* A per-resource sum as upstream's resource lists (a resource is present
 * once any container names it). */
struct agg {
        bool has_cpu, has_mem;
        int64_t cpu, mem;
};

static void agg_add(struct agg *a, const struct resource_list *l)
{
        if (l->has_cpu) {
                a->has_cpu = true;
                a->cpu = ck_add_sat(a->cpu, l->cpu_milli);
        }
        if (l->has_memory) {
                a->has_mem = true;
                a->mem = ck_add_sat(a->mem, l->memory);
        }
}

static void agg_add_agg(struct agg *a, const struct agg *b)
{
        struct resource_list l = {
            .has_cpu = b->has_cpu, .has_memory = b->has_mem, .cpu_milli = b->cpu, .memory = b->mem};
        agg_add(a, &l);
}

static void agg_max(struct agg *a, const struct agg *b)
{
        if (b->has_cpu && (!a->has_cpu || b->cpu > a->cpu)) {
                a->has_cpu = true;
                a->cpu = b->cpu;
        }
        if (b->has_mem && (!a->has_mem || b->mem > a->mem)) {
                a->has_mem = true;
                a->mem = b->mem;
        }
}

/* upstream resourcehelper.PodRequests / PodLimits without overhead: the sum
 * of the app containers and sidecars, or the largest init container (with
 * the sidecars started before it) when that is larger. */
static struct agg pod_aggregate(const struct pod *pod, bool limits)
{
        struct agg sum = {0}, sidecars = {0}, init_max = {0};
        for (size_t i = 0; i < pod->n_containers; i++) {
                const struct resource_requirements *r = &pod->containers[i].resources;
                agg_add(&sum, limits ? &r->limits : &r->requests);
        }
        for (size_t i = 0; i < pod->n_init_containers; i++) {
                const struct container *c = &pod->init_containers[i];
                const struct resource_list *l =
                    limits ? &c->resources.limits : &c->resources.requests;
                struct agg this = {0};
                if (container_is_sidecar(c)) {
                        agg_add(&sum, l);
                        agg_add(&sidecars, l);
                        this = sidecars;
                } else {
                        agg_add(&this, l);
                        agg_add_agg(&this, &sidecars);
                }
                agg_max(&init_max, &this);
        }
        agg_max(&sum, &init_max);
        return sum;
}

Runtime__V1__LinuxContainerResources *kuberuntime__sandbox_resources(const struct pod *pod)
{
        struct agg req = pod_aggregate(pod, false);
        struct agg lim = pod_aggregate(pod, true);
        return kuberuntime__linux_resources(req.has_cpu, req.cpu, lim.has_cpu ? lim.cpu : 0,
                                            lim.has_mem ? lim.mem : 0);
}
