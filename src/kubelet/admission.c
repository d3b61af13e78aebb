/* SPDX-License-Identifier: Apache-2.0 */
#include "kubelet/admission.h"
#include "kubelet/sysctl.h"

#include <stdio.h>
#include <string.h>

void admission_pod_requests(const struct pod *pod, int64_t *cpu_milli, int64_t *memory)
{
        /* As component-helpers' PodRequests: the app containers and sidecars
         * add up; each init container needs its own request plus the sidecars
         * started before it; the pod needs the larger of the two. */
        int64_t cpu = 0, mem = 0, side_cpu = 0, side_mem = 0, init_cpu = 0, init_mem = 0;
        for (size_t i = 0; i < pod->n_containers; i++) {
                cpu += pod->containers[i].resources.requests.cpu_milli;
                mem += pod->containers[i].resources.requests.memory;
        }
        for (size_t i = 0; i < pod->n_init_containers; i++) {
                const struct resource_list *r = &pod->init_containers[i].resources.requests;
                int64_t c, m;
                if (container_is_sidecar(&pod->init_containers[i])) {
                        cpu += r->cpu_milli;
                        mem += r->memory;
                        side_cpu += r->cpu_milli;
                        side_mem += r->memory;
                        c = side_cpu;
                        m = side_mem;
                } else {
                        c = r->cpu_milli + side_cpu;
                        m = r->memory + side_mem;
                }
                init_cpu = c > init_cpu ? c : init_cpu;
                init_mem = m > init_mem ? m : init_mem;
        }
        *cpu_milli = init_cpu > cpu ? init_cpu : cpu;
        *memory = init_mem > mem ? init_mem : mem;
}

static bool ports_conflict(const struct container_port *a, const struct container_port *b)
{
        if (a->host_port == 0 || b->host_port == 0 || a->host_port != b->host_port)
                return false;
        if (strcmp(a->protocol ? a->protocol : "TCP", b->protocol ? b->protocol : "TCP") != 0)
                return false;
        const char *ia = a->host_ip && *a->host_ip ? a->host_ip : "0.0.0.0";
        const char *ib = b->host_ip && *b->host_ip ? b->host_ip : "0.0.0.0";
        return strcmp(ia, "0.0.0.0") == 0 || strcmp(ib, "0.0.0.0") == 0 || strcmp(ia, ib) == 0;
}

static bool pod_ports_conflict(const struct pod *a, const struct pod *b)
{
        for (size_t i = 0; i < a->n_containers; i++)
                for (size_t j = 0; j < a->containers[i].n_ports; j++)
                        for (size_t k = 0; k < b->n_containers; k++)
                                for (size_t l = 0; l < b->containers[k].n_ports; l++)
                                        if (ports_conflict(&a->containers[i].ports[j],
                                                           &b->containers[k].ports[l]))
                                                return true;
        return false;
}

static void insufficient(struct admission_result *out, const char *res, int64_t req, int64_t used,
                         int64_t cap)
{
        out->admit = false;
        snprintf(out->reason, sizeof(out->reason), "OutOf%s", res);
        snprintf(
            out->message, sizeof(out->message),
            "Node didn't have enough resource: %s, requested: %lld, used: %lld, capacity: %lld",
            res, (long long)req, (long long)used, (long long)cap);
}

void admission_check(const struct pod *pod, struct pod *const *active, size_t n_active,
                     const struct admission_node *node, struct admission_result *out)
{
        memset(out, 0, sizeof(*out));
        out->admit = true;

        /* upstream's sysctl allowlist handler comes before the predicates */
        if (node->sysctls != NULL &&
            !sysctl_allowlist_admit(node->sysctls, pod, out->message, sizeof(out->message))) {
                out->admit = false;
                snprintf(out->reason, sizeof(out->reason), "SysctlForbidden");
                return;
        }

        /* What preemption cannot help, first (upstream's predicateAdmitHandler):
         * the pod's kubernetes.io/os label (the node's label is linux), then
         * its spec.os. */
        const char *os_label = kv_list_get(&pod->labels, "kubernetes.io/os");
        if (os_label != NULL && strcmp(os_label, "linux") != 0) {
                out->admit = false;
                snprintf(out->reason, sizeof(out->reason), "PodOSSelectorNodeLabelDoesNotMatch");
                snprintf(out->message, sizeof(out->message),
                         "Failed to admit pod as the `kubernetes.io/os` label doesn't match node "
                         "label");
                return;
        }
        if (pod->os_name != NULL && strcmp(pod->os_name, "linux") != 0) {
                out->admit = false;
                snprintf(out->reason, sizeof(out->reason), "PodOSNotSupported");
                snprintf(out->message, sizeof(out->message),
                         "Failed to admit pod as the OS field doesn't match node OS");
                return;
        }

        /* The scheduler's order: pods, then resources, then ports. */
        if ((int64_t)n_active + 1 > node->max_pods) {
                insufficient(out, "pods", 1, (int64_t)n_active, node->max_pods);
                return;
        }
        int64_t cpu, mem, used_cpu = 0, used_mem = 0;
        admission_pod_requests(pod, &cpu, &mem);
        for (size_t i = 0; i < n_active; i++) {
                int64_t c, m;
                admission_pod_requests(active[i], &c, &m);
                used_cpu += c;
                used_mem += m;
        }
        if (cpu > 0 && used_cpu + cpu > node->allocatable_cpu_milli) {
                insufficient(out, "cpu", cpu, used_cpu, node->allocatable_cpu_milli);
                return;
        }
        if (mem > 0 && used_mem + mem > node->allocatable_memory) {
                insufficient(out, "memory", mem, used_mem, node->allocatable_memory);
                return;
        }
        for (size_t i = 0; i < n_active; i++) {
                if (pod_ports_conflict(pod, active[i])) {
                        out->admit = false;
                        snprintf(out->reason, sizeof(out->reason), "NodePorts");
                        snprintf(out->message, sizeof(out->message),
                                 "Predicate NodePorts failed: node(s) didn't have free ports for "
                                 "the requested pod ports");
                        return;
                }
        }
        /* upstream's podFeaturesAdmitHandler, last: ckubelet does not
         * implement pod-level resources, and answers as upstream does with
         * the PodLevelResources gate off rather than run the pod without
         * its limits */
        if (pod->pod_level_resources) {
                out->admit = false;
                snprintf(out->reason, sizeof(out->reason), "PodLevelResourcesNotSupported");
                snprintf(out->message, sizeof(out->message),
                         "PodLevelResources feature gate is disabled");
        }
}
