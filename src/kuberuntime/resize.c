/* SPDX-License-Identifier: Apache-2.0 */
/*
 * In-place resize of a running pod (upstream kuberuntime_manager.go
 * doPodResizeAction, validatePodResizeAction, updatePodContainerResources):
 * memory first, then cpu; for each, the pod cgroup's limit and request
 * grow before the containers' and shrink after them (cgroup v1 refuses a
 * child cfs quota above its parent's), and the containers' decreases go
 * before their increases (compute.c ordered them).  A memory limit is not
 * lowered below what is in use: the resize fails before anything changes,
 * and the next sync tries again.
 */
#include "cm/cm.h"
#include "kuberuntime/builders.h"
#include "kuberuntime/builders_internal.h"
#include "kuberuntime/compute.h"
#include "kuberuntime/runtime_internal.h"
#include "util/cleanup.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <inttypes.h>
#include <string.h>

enum resize_resource { RESIZE_MEMORY, RESIZE_CPU };

/* The memory usage of the pod's containers by container ID (CRI
 * ListContainerStats of the sandbox); *usage -1 when the runtime has none. */
static int container_memory_usage(struct cri_client *cri, const char *sandbox_id, const char *id,
                                  int64_t *usage, ck_error_t *err)
{
        Runtime__V1__ContainerStatsFilter f = RUNTIME__V1__CONTAINER_STATS_FILTER__INIT;
        f.pod_sandbox_id = (char *)sandbox_id;
        Runtime__V1__ListContainerStatsResponse *resp = NULL;
        if (cri_list_container_stats(cri, &f, &resp, err) < 0)
                return -1;
        *usage = -1;
        for (size_t i = 0; i < resp->n_stats; i++) {
                const Runtime__V1__ContainerStats *s = resp->stats[i];
                if (s->attributes == NULL || strcmp(s->attributes->id, id) != 0)
                        continue;
                if (s->memory != NULL && s->memory->usage_bytes != NULL)
                        *usage = (int64_t)s->memory->usage_bytes->value;
        }
        runtime__v1__list_container_stats_response__free_unpacked(resp, NULL);
        return 0;
}

/* Appends one error to the aggregate's text ("a" or "a, b"). */
static void add_error(char **msgs, size_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void add_error(char **msgs, size_t *n, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        char *m = xvasprintf(fmt, ap);
        va_end(ap);
        char *next = *msgs ? xasprintf("%s, %s", *msgs, m) : xstrdup(m);
        free(m);
        free(*msgs);
        *msgs = next;
        (*n)++;
}

/* upstream validateMemoryResizeAction: no memory limit, the pod's or a
 * container's, may go below what it uses now.  cm NULL (no pod cgroup):
 * desired has no memory limit then, so the pod's usage is never read. */
static int validate_memory(struct cri_client *cri, const struct pod *pod, const char *sandbox_id,
                           const struct pod_actions *a, const struct cm_pod_resources *current,
                           const struct cm_pod_resources *desired, struct cm *cm, ck_error_t *err)
{
        bool pod_decreasing = desired->has_memory && desired->memory > 0 &&
                              (current->memory < 0 || desired->memory < current->memory);
        bool any = pod_decreasing;
        for (size_t k = 0; k < a->n_resize_memory && !any; k++) {
                const struct container_resize *r = &a->resizes[a->resize_memory[k]];
                any = r->desired.memory_limit != 0 &&
                      (r->current.memory_limit == 0 ||
                       r->desired.memory_limit < r->current.memory_limit);
        }
        if (!any)
                return 0;
        char *msgs = NULL;
        size_t n = 0;
        if (pod_decreasing) {
                int64_t usage;
                if (cm == NULL || cm_pod_memory_usage(cm, pod, &usage, err) < 0) {
                        LOG_WARN("Failed to read the pod's memory usage", "pod=\"%s\" err=\"%s\"",
                                 pod_full_name(pod), ck_error_msg(*err));
                        ck_error_release(err);
                        add_error(&msgs, &n, "missing pod memory usage");
                } else if (usage >= desired->memory) {
                        add_error(&msgs, &n,
                                  "attempting to set pod memory limit (%" PRId64
                                  ") below current usage (%" PRId64 ")",
                                  desired->memory, usage);
                }
        }
        for (size_t k = 0; k < a->n_resize_memory; k++) {
                const struct container_resize *r = &a->resizes[a->resize_memory[k]];
                int64_t want = r->desired.memory_limit;
                if (want == 0 || (r->current.memory_limit != 0 && want >= r->current.memory_limit))
                        continue;
                int64_t usage = -1;
                cleanup_error ck_error_t e = NULL;
                if (container_memory_usage(cri, sandbox_id, r->container_id, &usage, &e) < 0) {
                        free(msgs);
                        *err = e;
                        e = NULL;
                        return ck_error_wrap(err, "unable to read memory usage for pod \"%s\"",
                                             pod_full_name(pod));
                }
                if (usage < 0)
                        add_error(&msgs, &n, "missing container \"%s\" memory usage", r->c->name);
                else if (usage >= want)
                        add_error(&msgs, &n,
                                  "attempting to set container \"%s\" memory limit (%" PRId64
                                  ") below current usage (%" PRId64 ")",
                                  r->c->name, want, usage);
        }
        if (n == 0)
                return 0;
        int r = ck_error_make(err, 0, "cannot decrease memory limits: %s%s%s", n > 1 ? "[" : "",
                              msgs, n > 1 ? "]" : "");
        free(msgs);
        return r;
}

/* One container's UpdateContainerResources for one resource: that
 * resource's desired values, the other's current ones (upstream
 * updatePodContainerResources); the actuated state follows. */
static int update_container(struct kuberuntime *rt, struct cri_client *cri, const struct pod *pod,
                            struct container_resize *r, enum resize_resource what, ck_error_t *err)
{
        struct alloc_resources v = r->current;
        if (what == RESIZE_MEMORY) {
                v.memory_limit = r->desired.memory_limit;
                v.memory_request = r->desired.memory_request;
        } else {
                v.cpu_limit = r->desired.cpu_limit;
                v.cpu_request = r->desired.cpu_request;
        }
        /* the container as it will be, for the oom_score_adj of its QoS */
        struct container c = *r->c;
        c.resources = (struct resource_requirements){.requests = {.has_cpu = true,
                                                                  .cpu_milli = v.cpu_request,
                                                                  .has_memory = true,
                                                                  .memory = v.memory_request},
                                                     .limits = {.has_cpu = true,
                                                                .cpu_milli = v.cpu_limit,
                                                                .has_memory = true,
                                                                .memory = v.memory_limit}};
        Runtime__V1__LinuxContainerResources *res =
            kuberuntime__linux_resources(true, v.cpu_request, v.cpu_limit, v.memory_limit);
        res->oom_score_adj =
            kuberuntime_oom_score_adj(pod, &c, kuberuntime__node_memory_capacity());
        LOG_INFO(3, "Updating container resources",
                 "pod=\"%s\" container=\"%s\" containerID=\"%s\" resource=\"%s\" cpuShares=%" PRId64
                 " cpuQuota=%" PRId64 " memoryLimit=%" PRId64,
                 pod_full_name(pod), r->c->name, r->container_id,
                 what == RESIZE_MEMORY ? "memory" : "cpu", res->cpu_shares, res->cpu_quota,
                 res->memory_limit_in_bytes);
        int ret = cri_update_container_resources(cri, r->container_id, res, err);
        runtime__v1__linux_container_resources__free_unpacked(res, NULL);
        if (ret < 0)
                return ck_error_wrap(err, "container %s: update resources", r->c->name);
        r->current = v;
        if (rt->opts.actuated != NULL) {
                cleanup_json json_t *j = alloc_resources_to_json(&v);
                if (alloc_state_set(rt->opts.actuated, pod->uid, r->c->name, j, err) < 0)
                        return ck_error_wrap(err, "container %s: record actuated resources",
                                             r->c->name);
        }
        return 0;
}

/* upstream setPodCgroupConfig: the pod cgroup's limit (cpu quota, memory
 * limit) or request (cpu shares; memory has none in a cgroup). */
static int set_pod_cgroup(struct cm *cm, const struct pod *pod, enum resize_resource what,
                          bool limit, const struct cm_pod_resources *desired, ck_error_t *err)
{
        struct cm_pod_resources w = {0};
        if (what == RESIZE_CPU && limit) {
                w.has_cpu_quota = true;
                w.cpu_quota = desired->cpu_quota;
                w.cpu_period = desired->cpu_period;
        } else if (what == RESIZE_CPU) {
                w.has_cpu_shares = true;
                w.cpu_shares = desired->cpu_shares;
        } else if (limit) {
                w.has_memory = true;
                w.memory = desired->memory;
        } else {
                return 0;
        }
        return cm_pod_resources_write(cm, pod, &w, err);
}

/* upstream resizeContainers: the pod cgroup grows first, shrinks last. */
static int resize_resource(struct kuberuntime *rt, struct cri_client *cri, const struct pod *pod,
                           struct pod_actions *a, struct cm *cm, enum resize_resource what,
                           int64_t cur_limit, int64_t new_limit, int64_t cur_request,
                           int64_t new_request, const struct cm_pod_resources *desired,
                           ck_error_t *err)
{
        const char *name = what == RESIZE_MEMORY ? "memory" : "cpu";
        if (cm != NULL && new_limit > cur_limit &&
            set_pod_cgroup(cm, pod, what, true, desired, err) < 0)
                return ck_error_wrap(err, "raise the pod's %s limit", name);
        if (cm != NULL && new_request > cur_request &&
            set_pod_cgroup(cm, pod, what, false, desired, err) < 0)
                return ck_error_wrap(err, "raise the pod's %s request", name);
        const size_t *order = what == RESIZE_MEMORY ? a->resize_memory : a->resize_cpu;
        size_t n = what == RESIZE_MEMORY ? a->n_resize_memory : a->n_resize_cpu;
        for (size_t k = 0; k < n; k++)
                if (update_container(rt, cri, pod, &a->resizes[order[k]], what, err) < 0)
                        return -1;
        if (cm != NULL && new_request < cur_request &&
            set_pod_cgroup(cm, pod, what, false, desired, err) < 0)
                return ck_error_wrap(err, "lower the pod's %s request", name);
        if (cm != NULL && new_limit < cur_limit &&
            set_pod_cgroup(cm, pod, what, true, desired, err) < 0)
                return ck_error_wrap(err, "lower the pod's %s limit", name);
        return 0;
}

int kuberuntime__resize_pod(struct kuberuntime *rt, struct cri_client *cri, const struct pod *pod,
                            const char *sandbox_id, struct pod_actions *a, struct cm *cm,
                            ck_error_t *err)
{
        struct cm_pod_resources desired = {0}, current = {0};
        if (cm != NULL) {
                cm_pod_resources_desired(cm, pod, &desired);
                if (cm_pod_resources_read(cm, pod, &current, err) < 0)
                        return ck_error_wrap(err, "resize");
                if (!current.has_cpu_shares)
                        cm = NULL; /* no pod cgroup (cgroups-per-qos off) */
        }
        bool memory = a->n_resize_memory > 0 || a->update_pod_resources;
        bool cpu = a->n_resize_cpu > 0 || a->update_pod_resources;
        if (memory && validate_memory(cri, pod, sandbox_id, a, &current, &desired, cm, err) < 0)
                return -1;
        if (memory) {
                /* a pod without a memory limit keeps having none */
                if (!desired.has_memory)
                        desired.memory = current.memory;
                if (resize_resource(rt, cri, pod, a, cm, RESIZE_MEMORY, current.memory,
                                    desired.memory, 0, 0, &desired, err) < 0)
                        return -1;
        }
        if (cpu) {
                if (!desired.has_cpu_quota) {
                        desired.cpu_quota = current.cpu_quota;
                        desired.cpu_period = current.cpu_period;
                }
                if (resize_resource(rt, cri, pod, a, cm, RESIZE_CPU, current.cpu_quota,
                                    desired.cpu_quota, (int64_t)current.cpu_shares,
                                    (int64_t)desired.cpu_shares, &desired, err) < 0)
                        return -1;
        }
        return 0;
}
