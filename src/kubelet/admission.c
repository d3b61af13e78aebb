/* SPDX-License-Identifier: Apache-2.0 */
#include "kubelet/admission.h"
#include "kubelet/node_affinity.h"
#include "allocation/allocation.h"
#include "kubelet/sysctl.h"
#include "util/intmath.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* A container's requests; with actual ({"<name>": resources} the runtime
 * was given), the larger of those and its spec's (upstream
 * UseStatusResources: a resize not yet applied holds the old amount). */
static void container_requests(const struct container *c, const json_t *actual, int64_t *cpu,
                               int64_t *mem)
{
        *cpu = c->resources.requests.cpu_milli;
        *mem = c->resources.requests.memory;
        const json_t *a = json_object_get(actual, c->name);
        if (a == NULL)
                return;
        struct alloc_resources r;
        alloc_resources_from_json(a, &r);
        if (r.cpu_request > *cpu)
                *cpu = r.cpu_request;
        if (r.memory_request > *mem)
                *mem = r.memory_request;
}

void admission_pod_requests_actual(const struct pod *pod, const json_t *actual, int64_t *cpu_milli,
                                   int64_t *memory)
{
        /* As component-helpers' PodRequests: the app containers and sidecars
         * add up; each init container needs its own request plus the sidecars
         * started before it; the pod needs the larger of the two.  Sums
         * saturate: absurd requests stay absurd, not negative. */
        int64_t cpu = 0, mem = 0, side_cpu = 0, side_mem = 0, init_cpu = 0, init_mem = 0;
        for (size_t i = 0; i < pod->n_containers; i++) {
                int64_t c, m;
                container_requests(&pod->containers[i], actual, &c, &m);
                cpu = ck_add_sat(cpu, c);
                mem = ck_add_sat(mem, m);
        }
        for (size_t i = 0; i < pod->n_init_containers; i++) {
                int64_t rc, rm, c, m;
                bool sidecar = container_is_sidecar(&pod->init_containers[i]);
                container_requests(&pod->init_containers[i], sidecar ? actual : NULL, &rc, &rm);
                if (sidecar) {
                        cpu = ck_add_sat(cpu, rc);
                        mem = ck_add_sat(mem, rm);
                        side_cpu = ck_add_sat(side_cpu, rc);
                        side_mem = ck_add_sat(side_mem, rm);
                        c = side_cpu;
                        m = side_mem;
                } else {
                        c = ck_add_sat(rc, side_cpu);
                        m = ck_add_sat(rm, side_mem);
                }
                init_cpu = c > init_cpu ? c : init_cpu;
                init_mem = m > init_mem ? m : init_mem;
        }
        *cpu_milli = init_cpu > cpu ? init_cpu : cpu;
        *memory = init_mem > mem ? init_mem : mem;
}

int64_t admission_pod_extended_request(const struct pod *pod, const char *name)
{
        return pod_resource_effective(pod, false, resource_list_extended, name);
}

static int64_t ephemeral_of(const struct resource_list *l, const char *name)
{
        (void)name;
        return l->has_ephemeral_storage ? l->ephemeral_storage : 0;
}

int64_t admission_pod_ephemeral_storage_request(const struct pod *pod)
{
        return pod_resource_effective(pod, false, ephemeral_of, NULL);
}

int64_t admission_pod_ephemeral_storage_limit(const struct pod *pod, bool *has)
{
        *has = false;
        for (size_t i = 0; i < pod->n_containers && !*has; i++)
                *has = pod->containers[i].resources.limits.has_ephemeral_storage;
        for (size_t i = 0; i < pod->n_init_containers && !*has; i++)
                *has = pod->init_containers[i].resources.limits.has_ephemeral_storage;
        return pod_resource_effective(pod, true, ephemeral_of, NULL);
}

/* What the fit counts of a pod (upstream PodRequests without
 * ExcludeOverhead): its effective requests and its spec.overhead. */
static void fit_requests(const struct pod *pod, const json_t *actual, int64_t *cpu, int64_t *mem)
{
        admission_pod_requests_actual(pod, actual, cpu, mem);
        if (!pod->has_overhead)
                return;
        *cpu = ck_add_sat(*cpu, pod->overhead.cpu_milli);
        *mem = ck_add_sat(*mem, pod->overhead.memory);
}

static int64_t fit_request_of(const struct pod *pod, const char *name)
{
        const struct resource_list *o = &pod->overhead;
        if (strcmp(name, "ephemeral-storage") == 0)
                return ck_add_sat(admission_pod_ephemeral_storage_request(pod),
                                  o->has_ephemeral_storage ? o->ephemeral_storage : 0);
        if (resource_hugepage_size(name) > 0)
                return ck_add_sat(pod_resource_effective(pod, false, resource_list_hugepages, name),
                                  resource_list_hugepages(o, name));
        return ck_add_sat(admission_pod_extended_request(pod, name),
                          resource_list_extended(o, name));
}

/* The names of ephemeral-storage and huge pages a pod asks for (with its
 * overhead's), each once, into names (room for n). */
static size_t native_names(const struct pod *pod, const char **names, size_t room)
{
        size_t n = 0;
        if (fit_request_of(pod, "ephemeral-storage") > 0 && room > 0)
                names[n++] = "ephemeral-storage";
        return n + pod_hugepage_names(pod, names + n, room - n);
}

void admission_pod_requests(const struct pod *pod, int64_t *cpu_milli, int64_t *memory)
{
        admission_pod_requests_actual(pod, NULL, cpu_milli, memory);
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

bool admission_apparmor_enabled(void)
{
        /* runc's apparmor.IsEnabled: securityfs shows it, and the module
         * says Y */
        if (access("/sys/kernel/security/apparmor", F_OK) < 0)
                return false;
        char buf[8] = "";
        FILE *f = fopen("/sys/module/apparmor/parameters/enabled", "re");
        if (f == NULL)
                return false;
        bool yes = fgets(buf, sizeof(buf), f) != NULL && buf[0] == 'Y';
        fclose(f);
        return yes;
}

static bool profile_confines(const json_t *sc)
{
        const json_t *p = json_object_get(sc, "appArmorProfile");
        const char *type = json_string_value(json_object_get(p, "type"));
        return p != NULL && !json_is_null(p) && (type == NULL || strcmp(type, "Unconfined") != 0);
}

/* upstream apparmor isRequired: a profile other than Unconfined in the
 * pod's or a container's securityContext, or in the beta annotations. */
static bool apparmor_required(const struct pod *pod)
{
        const json_t *spec = json_object_get(pod->raw, "spec");
        if (profile_confines(json_object_get(spec, "securityContext")))
                return true;
        static const char *const lists[] = {"containers", "initContainers", "ephemeralContainers"};
        for (size_t l = 0; l < 3; l++) {
                size_t i;
                const json_t *c;
                json_array_foreach(json_object_get(spec, lists[l]), i, c)
                {
                        if (profile_confines(json_object_get(c, "securityContext")))
                                return true;
                }
        }
        static const char prefix[] = "container.apparmor.security.beta.kubernetes.io/";
        for (size_t i = 0; i < pod->annotations.n; i++) {
                const struct kv *a = &pod->annotations.items[i];
                if (strncmp(a->key, prefix, sizeof(prefix) - 1) == 0 &&
                    strcmp(a->value ? a->value : "", "unconfined") != 0)
                        return true;
        }
        return false;
}

/* status.phase Pending (or none yet: a pod the kubelet has not written). */
static bool pod_pending(const struct pod *pod)
{
        const char *phase =
            json_string_value(json_object_get(json_object_get(pod->raw, "status"), "phase"));
        return phase == NULL || phase[0] == '\0' || strcmp(phase, "Pending") == 0;
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

/* The resource part of the fit: a first shortfall refuses the pod (its
 * reason and message in out), or with collect every shortfall is noted. */
struct fit {
        bool collect;
        struct admission_result *out;
        struct admission_shortfall short_[ADMISSION_MAX_SHORTFALLS];
        size_t n_short;
};

/* One check: false when the pod does not fit (and the caller stops unless
 * collecting). */
static bool fit_one(struct fit *f, const char *res, int64_t req, int64_t used, int64_t cap)
{
        if (req <= 0 || ck_add_sat(used, req) <= cap)
                return true;
        if (f->out->admit)
                insufficient(f->out, res, req, used, cap);
        /* upstream GetInsufficientAmount: requested - (capacity - used) */
        if (f->n_short < ADMISSION_MAX_SHORTFALLS)
                f->short_[f->n_short++] =
                    (struct admission_shortfall){res, ck_add_sat(req, used) - cap};
        return false;
}

static void fit_resources(const struct pod *pod, struct pod *const *active,
                          const json_t *const *actual, size_t n_active,
                          const struct admission_node *node, struct fit *f)
{
        if (!fit_one(f, "pods", 1, (int64_t)n_active, node->max_pods) && !f->collect)
                return;
        int64_t cpu, mem, used_cpu = 0, used_mem = 0;
        fit_requests(pod, NULL, &cpu, &mem);
        for (size_t i = 0; i < n_active; i++) {
                int64_t c, m;
                fit_requests(active[i], actual ? actual[i] : NULL, &c, &m);
                used_cpu = ck_add_sat(used_cpu, c);
                used_mem = ck_add_sat(used_mem, m);
        }
        if (!fit_one(f, "cpu", cpu, used_cpu, node->allocatable_cpu_milli) && !f->collect)
                return;
        if (!fit_one(f, "memory", mem, used_mem, node->allocatable_memory) && !f->collect)
                return;
        /* ephemeral-storage and huge pages, against 0 when the node has
         * none */
        const char *names[16];
        size_t n_names = native_names(pod, names, sizeof(names) / sizeof(names[0]));
        for (size_t k = 0; k < n_names; k++) {
                int64_t used = 0, cap = 0;
                for (size_t e = 0; e < node->n_native; e++)
                        if (strcmp(node->native[e].name, names[k]) == 0)
                                cap = node->native[e].value;
                for (size_t i = 0; i < n_active; i++)
                        used = ck_add_sat(used, fit_request_of(active[i], names[k]));
                if (!fit_one(f, names[k], fit_request_of(pod, names[k]), used, cap) && !f->collect)
                        return;
        }
        /* extended resources the node has (the others are not the node's
         * to check) */
        for (size_t e = 0; e < node->n_extended; e++) {
                const char *name = node->extended[e].name;
                int64_t used = 0;
                for (size_t i = 0; i < n_active; i++)
                        used = ck_add_sat(used, fit_request_of(active[i], name));
                if (!fit_one(f, name, fit_request_of(pod, name), used, node->extended[e].value) &&
                    !f->collect)
                        return;
        }
}

/* ---- preemption (upstream pkg/kubelet/preemption) ---- */

/* upstream GetResourceRequest: 1 of "pods"; the requests, with the
 * overhead when they are not 0 */
static int64_t preempt_request(const struct pod *pod, const char *name)
{
        if (strcmp(name, "pods") == 0)
                return 1;
        int64_t v, cpu, mem;
        const struct resource_list *o = &pod->overhead;
        int64_t over = 0;
        if (strcmp(name, "cpu") == 0 || strcmp(name, "memory") == 0) {
                admission_pod_requests(pod, &cpu, &mem);
                bool is_cpu = name[0] == 'c';
                v = is_cpu ? cpu : mem;
                over = is_cpu ? (o->has_cpu ? o->cpu_milli : 0) : (o->has_memory ? o->memory : 0);
        } else if (strcmp(name, "ephemeral-storage") == 0) {
                v = admission_pod_ephemeral_storage_request(pod);
                over = o->has_ephemeral_storage ? o->ephemeral_storage : 0;
        } else if (resource_hugepage_size(name) > 0) {
                v = pod_resource_effective(pod, false, resource_list_hugepages, name);
                over = resource_list_hugepages(o, name);
        } else {
                v = admission_pod_extended_request(pod, name);
                over = resource_list_extended(o, name);
        }
        return v != 0 && pod->has_overhead ? ck_add_sat(v, over) : v;
}

struct reqs {
        struct admission_shortfall r[ADMISSION_MAX_SHORTFALLS];
        size_t n;
};

/* upstream admissionRequirementList.subtract: what is left of a once the
 * pods are gone */
static struct reqs reqs_subtract(const struct reqs *a, const struct pod *const *pods, size_t n)
{
        struct reqs out = {.n = 0};
        for (size_t k = 0; k < a->n; k++) {
                int64_t q = a->r[k].amount;
                for (size_t i = 0; i < n && q > 0; i++)
                        q -= preempt_request(pods[i], a->r[k].name);
                if (q > 0)
                        out.r[out.n++] = (struct admission_shortfall){a->r[k].name, q};
        }
        return out;
}

/* upstream distance: the squared fractions of each requirement a pod does
 * not cover */
static double reqs_distance(const struct reqs *a, const struct pod *pod)
{
        double d = 0;
        for (size_t k = 0; k < a->n; k++) {
                double left = (double)(a->r[k].amount - preempt_request(pod, a->r[k].name));
                if (left > 0)
                        d += (left / (double)a->r[k].amount) * (left / (double)a->r[k].amount);
        }
        return d;
}

static void reqs_string(const struct reqs *a, char *buf, size_t len)
{
        size_t o = (size_t)snprintf(buf, len, "[");
        for (size_t k = 0; k < a->n && o < len; k++)
                o += (size_t)snprintf(buf + o, len - o, "(res: %s, q: %lld), ", a->r[k].name,
                                      (long long)a->r[k].amount);
        if (o < len)
                snprintf(buf + o, len - o, "]");
}

/* upstream smallerResourceRequest: memory, then cpu; equal is smaller */
static bool smaller_request(const struct pod *a, const struct pod *b)
{
        static const char *const order[] = {"memory", "cpu"};
        for (size_t i = 0; i < 2; i++) {
                int64_t x = preempt_request(a, order[i]), y = preempt_request(b, order[i]);
                if (x != y)
                        return x < y;
        }
        return true;
}

/* upstream getPodsToPreemptByDistance: from pods (n, reordered), the pod
 * closest to what is still needed, then again, until nothing is; appended
 * to out.  -1 when the pods run out first. */
static int by_distance(const struct pod **pods, size_t n, struct reqs *need, const struct pod **out,
                       size_t *n_out)
{
        while (need->n > 0) {
                if (n == 0)
                        return -1; /* *need: what is still needed */
                double best = (double)need->n + 1;
                size_t bi = 0;
                for (size_t i = 0; i < n; i++) {
                        double d = reqs_distance(need, pods[i]);
                        if (d < best || (d == best && smaller_request(pods[i], pods[bi]))) {
                                best = d;
                                bi = i;
                        }
                }
                *need = reqs_subtract(need, &pods[bi], 1);
                out[(*n_out)++] = pods[bi];
                pods[bi] = pods[--n];
        }
        return 0;
}

/* upstream Preemptable: a critical pod over a non-critical one, else the
 * higher priority when both have one */
static bool preemptable(const struct pod *by, const struct pod *p)
{
        if (pod_is_critical(by) && !pod_is_critical(p))
                return true;
        return by->has_priority && p->has_priority && by->priority > p->priority;
}

void admission_shortfalls_string(const struct admission_shortfall *s, size_t n, char *buf,
                                 size_t len)
{
        struct reqs r = {.n = 0};
        for (size_t k = 0; k < n && k < ADMISSION_MAX_SHORTFALLS; k++)
                r.r[r.n++] = s[k];
        reqs_string(&r, buf, len);
}

int admission_pods_to_preempt(const struct pod *pod, struct pod *const *active, size_t n_active,
                              const struct admission_shortfall *s, size_t n_s,
                              const struct pod **victims, char *why, size_t why_len)
{
        struct reqs need = {.n = 0};
        for (size_t k = 0; k < n_s && k < ADMISSION_MAX_SHORTFALLS; k++)
                if (s[k].amount > 0)
                        need.r[need.n++] = s[k];
        /* sortPodsByQOS: the pods it may preempt, by class */
        size_t n = n_active ? n_active : 1;
        const struct pod **be = xcalloc(n, sizeof(*be)), **bu = xcalloc(n, sizeof(*bu)),
                         **gu = xcalloc(n, sizeof(*gu));
        size_t n_be = 0, n_bu = 0, n_gu = 0;
        for (size_t i = 0; i < n_active; i++) {
                if (!preemptable(pod, active[i]))
                        continue;
                switch (pod_qos_class(active[i])) {
                case QOS_BEST_EFFORT:
                        be[n_be++] = active[i];
                        break;
                case QOS_BURSTABLE:
                        bu[n_bu++] = active[i];
                        break;
                case QOS_GUARANTEED:
                        gu[n_gu++] = active[i];
                        break;
                }
        }
        int ret = -1;
        size_t n_v = 0;
        const struct pod **g_ev = xcalloc(n, sizeof(*g_ev)), **b_ev = xcalloc(n, sizeof(*b_ev)),
                         **e_ev = xcalloc(n, sizeof(*e_ev));
        size_t n_g = 0, n_b = 0, n_e = 0;
        /* requests are never negative: subtracting two sets of pods in
         * turn leaves what subtracting them together would */
        struct reqs be_bu = reqs_subtract(&need, be, n_be);
        be_bu = reqs_subtract(&be_bu, bu, n_bu);
        struct reqs left = reqs_subtract(&be_bu, gu, n_gu);
        if (left.n > 0) {
                char list[400];
                reqs_string(&left, list, sizeof(list));
                snprintf(why, why_len, "no set of running pods found to reclaim resources: %s",
                         list);
                goto out;
        }
        /* the guaranteed pods it takes with every besteffort and burstable
         * one gone; the burstable ones with every besteffort one and those;
         * the besteffort ones with those two */
        struct reqs r = be_bu;
        bool found = by_distance(gu, n_gu, &r, g_ev, &n_g) == 0;
        if (found) {
                r = reqs_subtract(&need, be, n_be);
                r = reqs_subtract(&r, g_ev, n_g);
                found = by_distance(bu, n_bu, &r, b_ev, &n_b) == 0;
        }
        if (found) {
                r = reqs_subtract(&need, b_ev, n_b);
                r = reqs_subtract(&r, g_ev, n_g);
                found = by_distance(be, n_be, &r, e_ev, &n_e) == 0;
        }
        if (!found) {
                /* not when all of them cover the need; said as upstream,
                 * with what was still needed */
                char list[400];
                reqs_string(&r, list, sizeof(list));
                snprintf(why, why_len, "no set of running pods found to reclaim resources: %s",
                         list);
                goto out;
        }
        for (size_t i = 0; i < n_e; i++)
                victims[n_v++] = e_ev[i];
        for (size_t i = 0; i < n_b; i++)
                victims[n_v++] = b_ev[i];
        for (size_t i = 0; i < n_g; i++)
                victims[n_v++] = g_ev[i];
        ret = (int)n_v;
out:
        free(be);
        free(bu);
        free(gu);
        free(g_ev);
        free(b_ev);
        free(e_ev);
        return ret;
}

void admission_check(const struct pod *pod, struct pod *const *active, size_t n_active,
                     const struct admission_node *node, struct admission_result *out)
{
        admission_check_actual(pod, active, NULL, n_active, node, out);
}

void admission_check_actual(const struct pod *pod, struct pod *const *active,
                            const json_t *const *actual, size_t n_active,
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

        /* upstream's topology manager handler: the devices */
        if (node->allocate_devices != NULL) {
                ck_error_t err = NULL;
                if (node->allocate_devices(node->devices_ctx, pod, &err) < 0) {
                        out->admit = false;
                        snprintf(out->reason, sizeof(out->reason), "UnexpectedAdmissionError");
                        snprintf(out->message, sizeof(out->message),
                                 "Allocate failed due to %s, which is unexpected",
                                 ck_error_msg(err));
                        ck_error_release(&err);
                        return;
                }
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

        /* The scheduler's order: pods, then resources, then ports.  A
         * critical pod that lacks only resources may have others preempted
         * for it (upstream's CriticalPodAdmissionHandler): every shortfall
         * is gathered for it, the other checks still come first. */
        struct fit f = {.collect = pod_is_critical(pod) && node->preempt != NULL, .out = out};
        fit_resources(pod, active, actual, n_active, node, &f);
        if (!out->admit && !f.collect)
                return;
        /* the scheduler's NodeAffinity filter: spec.nodeSelector and the
         * required node affinity against the node's labels */
        if (!node_affinity_match(json_object_get(pod->raw, "spec"), node->labels, node->name)) {
                out->admit = false;
                snprintf(out->reason, sizeof(out->reason), "NodeAffinity");
                snprintf(out->message, sizeof(out->message),
                         "Predicate NodeAffinity failed: node(s) didn't match Pod's node "
                         "affinity/selector");
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
        /* the node's NoExecute taints, except for static pods (upstream
         * generalFilter) */
        if (!pod_is_static(pod) &&
            !node_taints_tolerated(json_object_get(pod->raw, "spec"), node->taints)) {
                out->admit = false;
                snprintf(out->reason, sizeof(out->reason), "TaintToleration");
                snprintf(out->message, sizeof(out->message),
                         "Predicate TaintToleration failed: node(s) had taints that the pod "
                         "didn't tolerate");
                return;
        }
        /* the predicates failed only for resources, for a critical pod:
         * others are preempted, then it is admitted */
        if (!out->admit) {
                char why[512];
                if (node->preempt(node->preempt_ctx, pod, f.short_, f.n_short, why, sizeof(why)) <
                    0) {
                        snprintf(out->reason, sizeof(out->reason), "UnexpectedAdmissionError");
                        snprintf(out->message, sizeof(out->message),
                                 "Unexpected error while attempting to recover from admission "
                                 "failure: preemption: error finding a set of pods to preempt: "
                                 "%s",
                                 why);
                        return;
                }
                out->admit = true;
                out->reason[0] = out->message[0] = '\0';
        }
        /* upstream's appArmorAdmitHandler (new pods only: those still
         * Pending; running ones keep running) */
        if (!node->apparmor_enabled && apparmor_required(pod) && pod_pending(pod)) {
                out->admit = false;
                snprintf(out->reason, sizeof(out->reason), "AppArmor");
                snprintf(out->message, sizeof(out->message),
                         "Cannot enforce AppArmor: AppArmor is not enabled on the host");
                return;
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
