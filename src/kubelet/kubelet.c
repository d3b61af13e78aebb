/* SPDX-License-Identifier: Apache-2.0 */
#include "allocation/state.h"
#include "api/decode.h"
#include "client/kubeconfig.h"
#include "envvars/envvars.h"
#include "grpc/grpc.h"
#include "kubelet/admission.h"
#include "devicemanager/devicemanager.h"
#include "kubelet/kubelet_internal.h"
#include "stats/stats.h"
#include "kubelet/sysctl.h"
#include "metrics/kubelet_metrics.h"
#include "status/generate.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "userns/userns.h"
#include "util/xalloc.h"
#include "volume/volume.h"

#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define HOUSEKEEPING_PERIOD_MS 2000 /* upstream housekeepingPeriod */
#define PLEG_RELIST_PERIOD_MS 1000  /* upstream genericPlegRelistPeriod */
#define SYNC_ERROR_BACKOFF_MS 10000 /* upstream backOffPeriod for a failed sync */
#define STATIC_START_RETRY_MS 1000  /* a static pod waiting for another of its name */
/* Upstream runs a goroutine per pod; containerd starts at most ~10 pods/s
 * whatever the concurrency, peaking at 4-8 calls in flight (bench/README.md),
 * so 8 threads keep it busy without more memory for nothing. */
#define POD_WORKER_THREADS 8
#define MOUNT_RETRY_INITIAL_MS 500
#define LOG_LINK_GC_PERIOD_MS 60000 /* upstream ContainerGCPeriod */
#define KL_LEGACY_LOGS_DIR "/var/log/containers"

/* ---- event queue ------------------------------------------------------ */

struct kl_event *kl_event_new(enum kl_event_type type)
{
        struct kl_event *ev = xcalloc(1, sizeof(*ev));
        ev->type = type;
        return ev;
}

static void runtime_uid_clear(struct kl_runtime_uid *u)
{
        free(u->uid);
        free(u->name);
        free(u->namespace);
        for (size_t i = 0; i < u->n_live; i++)
                free(u->live[i]);
        free(u->live);
}

/* Frees a relist's UID entries and the array. */
static void runtime_uids_free(struct kl_runtime_uid *uids, size_t n)
{
        for (size_t i = 0; i < n; i++)
                runtime_uid_clear(&uids[i]);
        free(uids);
}

void kl_event_free(struct kl_event *ev)
{
        if (ev == NULL)
                return;
        for (size_t i = 0; i < ev->n_pods; i++)
                pod_unref(ev->pods[i]);
        free(ev->pods);
        free(ev->uid);
        free(ev->message);
        runtime_uids_free(ev->runtime_uids, ev->n_runtime_uids);
        free(ev);
}

void kl_queue_post(struct kl_queue *q, struct kl_event *ev)
{
        pthread_mutex_lock(&q->lock);
        if (q->tail)
                q->tail->next = ev;
        else
                q->head = ev;
        q->tail = ev;
        pthread_cond_signal(&q->cond);
        pthread_mutex_unlock(&q->lock);
}

/* Waits until an event arrives or `deadline_ms` (CLOCK_MONOTONIC) passes. */
static struct kl_event *kl_next_event(struct kl_queue *q, int64_t deadline_ms)
{
        struct timespec ts = {.tv_sec = deadline_ms / 1000,
                              .tv_nsec = (deadline_ms % 1000) * 1000000};
        pthread_mutex_lock(&q->lock);
        while (q->head == NULL)
                if (pthread_cond_timedwait(&q->cond, &q->lock, &ts) != 0)
                        break;
        struct kl_event *ev = q->head;
        if (ev) {
                q->head = ev->next;
                if (q->head == NULL)
                        q->tail = NULL;
        }
        pthread_mutex_unlock(&q->lock);
        return ev;
}

/* ---- callbacks from other threads ------------------------------------ */

static void on_source(void *ctx, enum pod_source src, struct pod *const *pods, size_t n)
{
        struct kl_queue *q = ctx;
        struct kl_event *ev = kl_event_new(KL_EV_SOURCE);
        ev->source = src;
        ev->pods = xcalloc(n ? n : 1, sizeof(*ev->pods));
        for (size_t i = 0; i < n; i++)
                ev->pods[i] = pod_ref(pods[i]);
        ev->n_pods = n;
        kl_queue_post(q, ev);
}

static void on_pleg(void *ctx, const struct pleg_event *pe)
{
        struct kl_pleg_deps *pd = ctx;
        struct kl_queue *q = pd->queue;
        if (pe->type == PLEG_RELIST_DONE) {
                if (pe->recovered) /* what changed meanwhile was not seen */
                        pod_cache_invalidate_all(pd->pod_cache);
                pod_cache_relisted(pd->pod_cache, fs_now_mono_ms());
                struct kl_event *ev = kl_event_new(KL_EV_RELIST);
                const struct runtime_pod_list *l = pe->pods;
                ev->runtime_uids = xcalloc(l->n_pods ? l->n_pods : 1, sizeof(*ev->runtime_uids));
                for (size_t i = 0; i < l->n_pods; i++) {
                        const struct runtime_pod_entry *p = &l->pods[i];
                        struct kl_runtime_uid *u = &ev->runtime_uids[i];
                        u->uid = xstrdup(p->uid);
                        u->name = xstrdup(p->name);
                        u->namespace = xstrdup(p->namespace);
                        u->live = xcalloc(p->n_containers + 1, sizeof(*u->live));
                        for (size_t j = 0; j < p->n_containers; j++)
                                if (p->containers[j].state != CONTAINER_STATE_EXITED)
                                        u->live[u->n_live++] = xstrdup(p->containers[j].id);
                }
                ev->n_runtime_uids = l->n_pods;
                ev->runtime_back = pe->recovered;
                kl_queue_post(q, ev);
                return;
        }
        LOG_INFO(4, "PLEG event", "podUID=\"%s\" type=%d containerID=\"%s\"", pe->uid, pe->type,
                 pe->container_id ? pe->container_id : "");
        pod_cache_observe(pd->pod_cache, pe->uid, pe->pod);
        struct kl_event *ev = kl_event_new(KL_EV_POD_EVENT);
        ev->uid = xstrdup(pe->uid);
        kl_queue_post(q, ev);
}

/* A probe result changed: re-sync the pod (its status, or a restart). */
static void on_probe_changed(void *ctx, const char *uid, const char *container_name,
                             enum probe_type type, enum probe_result result)
{
        struct kl_queue *q = ctx;
        LOG_INFO(3, "Probe result changed", "podUID=\"%s\" containerName=\"%s\" probe=%d result=%d",
                 uid, container_name, (int)type, (int)result);
        struct kl_event *ev = kl_event_new(KL_EV_POD_EVENT);
        ev->uid = xstrdup(uid);
        kl_queue_post(q, ev);
}

/* ---- pod records (sync loop thread only) ------------------------------ */

static struct pod_record *record_find(struct kubelet *kl, const char *uid)
{
        for (size_t i = 0; i < kl->loop.n_records; i++)
                if (strcmp(kl->loop.records[i].pod->uid, uid) == 0)
                        return &kl->loop.records[i];
        return NULL;
}

static void record_remove(struct kubelet *kl, struct pod_record *r)
{
        cleanup_free char *uid = xstrdup(r->pod->uid);
        status_store_remove(kl->status, r->pod->uid);
        pod_cache_forget(kl->pod_cache, r->pod->uid);
        pod_unref(r->pod);
        kl_resize_record_free(r);
        free(r->evict_message);
        *r = kl->loop.records[--kl->loop.n_records];
        kl_resize_pod_removed(kl, uid);
}

static const char *source_name(enum pod_source src)
{
        return src == POD_SOURCE_API ? "api" : src == POD_SOURCE_HTTP ? "http" : "file";
}

/* Work for a record's pod (update_type: as pod_work's) or, with r NULL,
 * for an orphan UID.  False when the pool dropped it (a sync behind a kill
 * of the same UID). */
static bool submit_grace(struct kubelet *kl, enum pod_work_kind kind, const struct pod_record *r,
                         const char *update_type, const char *uid, const char *name, const char *ns,
                         int64_t grace_s)
{
        struct pod_work w = {
            .kind = kind,
            .uid = xstrdup(uid),
            .pod = r ? pod_ref(r->alloc ? r->alloc : r->pod) : NULL,
            .name = xstrdup(name),
            .namespace = xstrdup(ns),
            .grace_s = grace_s,
            .update_type = update_type,
            .first_seen_us = r ? r->first_seen_us : 0,
        };
        if (kind == POD_WORK_SYNC && r && r->evict_message) {
                w.evict_reason = r->evict_reason;
                w.evict_message = xstrdup(r->evict_message);
                w.evict_grace_s = r->evict_grace_s;
                w.evict_disruption = r->evict_disruption;
        }
        return podworkers_submit(kl->workers, &w);
}

static void submit_orphan(struct kubelet *kl, const char *uid, const char *name, const char *ns)
{
        submit_grace(kl, POD_WORK_KILL_ORPHAN, NULL, NULL, uid, name, ns, -1);
}

/* Submits the record's work: a sync, or its kill once it is deleting.
 * update_type: upstream's SyncPodType of what asked for it ("create",
 * "update", "sync"; NULL for a pod that left its source: not timed). */
static bool same_full_name(const struct pod *a, const struct pod *b)
{
        return strcmp(a->name, b->name) == 0 && strcmp(a->namespace, b->namespace) == 0;
}

/* upstream allowStaticPodStart: of the static pods of one full name (a
 * manifest changed: a new UID), one runs at a time; the next starts once
 * the one before is stopped and gone, in the order they came. */
static bool static_start_allowed(struct kubelet *kl, struct pod_record *r)
{
        if (r->pod->source == POD_SOURCE_API || r->static_started)
                return true;
        for (size_t i = 0; i < kl->loop.n_records; i++) {
                const struct pod_record *o = &kl->loop.records[i];
                if (o == r || o->pod->source == POD_SOURCE_API || !same_full_name(o->pod, r->pod))
                        continue;
                if (o->static_started || (!o->deleting && o->seq < r->seq)) {
                        LOG_INFO(4, "Static pod waits for another of its name",
                                 "pod=\"%s\" podUID=\"%s\" otherUID=\"%s\"", pod_full_name(r->pod),
                                 r->pod->uid, o->pod->uid);
                        return false;
                }
        }
        r->static_started = true;
        return true;
}

/* A static pod of that full name is gone: the next one may start. */
static void static_start_next(struct kubelet *kl, const struct pod *gone)
{
        for (size_t i = 0; i < kl->loop.n_records; i++) {
                struct pod_record *o = &kl->loop.records[i];
                if (o->pod->source != POD_SOURCE_API && !o->static_started && !o->deleting &&
                    same_full_name(o->pod, gone))
                        kl_sync_record(kl, o, "create");
        }
}

void kl_sync_record(struct kubelet *kl, struct pod_record *r, const char *update_type)
{
        if (r->rejected || r->terminal)
                return;
        r->next_sync_ms = fs_now_mono_ms() + kl->cfg->sync_frequency_ms;
        if (r->deleting) {
                /* one kill at a time: PLEG events and timers of a dying pod
                 * must not queue more kills behind it */
                if (r->kill_in_flight)
                        return;
                r->kill_in_flight = true;
                /* a pod deleted through the apiserver: its deletion grace
                 * period (upstream: the smaller of it and the spec's) */
                int64_t grace = r->pod->has_deletion_grace_period_seconds
                                    ? r->pod->deletion_grace_period_seconds
                                    : -1;
                submit_grace(kl, POD_WORK_KILL, r, update_type, r->pod->uid, r->pod->name,
                             r->pod->namespace, grace);
                if (r->restart_requested) /* a kill tried again keeps them too */
                        podworkers_set_keep(kl->workers, r->pod->uid, true);
        } else if (static_start_allowed(kl, r)) {
                /* dropped behind the kill of a pod of the same UID that is
                 * just ending (a static pod restarting): soon again */
                if (!submit_grace(kl, POD_WORK_SYNC, r, update_type, r->pod->uid, NULL, NULL, -1))
                        r->next_sync_ms = fs_now_mono_ms() + STATIC_START_RETRY_MS / 10;
        } else {
                r->next_sync_ms = fs_now_mono_ms() + STATIC_START_RETRY_MS;
        }
}

/* Sets a rejected pod's status: phase Failed with the admission reason. */
static void reject(struct kubelet *kl, struct pod_record *r, const struct admission_result *res)
{
        LOG_WARN("Pod admission denied", "pod=\"%s\" reason=\"%s\" message=\"%s\"",
                 pod_full_name(r->pod), res->reason, res->message);
        /* upstream rejectPod: the event, then the status */
        event_emit_pod(kl->recorder, r->pod, NULL, EVENT_WARNING, res->reason, "%s", res->message);
        r->rejected = true;
        struct status_input in = {
            .pod = r->pod,
            .runtime_name = kl->runtime_name,
            .host_ip = kl->node_ip,
            .reject_reason = res->reason,
            .reject_message = res->message,
            .terminal_failed = true,
            .now_ns = fs_now_real_ns(),
        };
        status_store_set_status(kl->status, r->pod->uid, status_generate(&in));
        status_store_set_stopped(kl->status, r->pod->uid); /* nothing of it ever ran */
        status_manager_notify(kl->sm);
}

/* Whether the apiserver says the pod already completed (a restarted
 * kubelet meets its finished pods again): upstream neither admits them nor
 * counts them against the node's resources. */
static bool api_phase_terminal(const struct pod *pod)
{
        if (pod->source != POD_SOURCE_API)
                return false;
        const char *phase =
            json_string_value(json_object_get(json_object_get(pod->raw, "status"), "phase"));
        return phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0);
}

static int admit_devices(void *ctx, const struct pod *pod, ck_error_t *err)
{
        return devicemanager_allocate(ctx, pod, err);
}

static bool is_extended_name(const char *name)
{
        return strchr(name, '/') != NULL && strstr(name, "kubernetes.io/") == NULL;
}

static void extended_set(struct resource_count **l, size_t *n, const char *name, int64_t v)
{
        for (size_t i = 0; i < *n; i++)
                if (strcmp((*l)[i].name, name) == 0) {
                        (*l)[i].value = v;
                        return;
                }
        *l = xrealloc(*l, (*n + 1) * sizeof(**l));
        (*l)[(*n)++] = (struct resource_count){.name = xstrdup(name), .value = v};
}

/* The node's allocatable extended resources for the fit check (upstream
 * getNodeAnyWay: api_node, the Node as the apiserver has it, else (NULL)
 * what this kubelet would report), raised to what pods hold of the device
 * plugins' (UpdatePluginResources). */
static struct resource_count *node_extended(struct kubelet *kl, const json_t *api_node, size_t *n)
{
        struct resource_count *l = NULL;
        *n = 0;
        if (api_node != NULL) {
                const char *k;
                json_t *v;
                json_object_foreach(
                    json_object_get(json_object_get(api_node, "status"), "allocatable"), k, v)
                {
                        int64_t q = 0;
                        cleanup_error ck_error_t e = NULL;
                        if (is_extended_name(k) && json_is_string(v) &&
                            api_parse_quantity(json_string_value(v), false, &q, &e) == 0)
                                extended_set(&l, n, k, q);
                }
        } else {
                struct devicemanager_resource *res;
                size_t nr;
                devicemanager_resources(kl->devices, &res, &nr);
                for (size_t i = 0; i < nr; i++)
                        extended_set(&l, n, res[i].name,
                                     res[i].allocatable >= 0 ? res[i].allocatable
                                                             : res[i].capacity);
                devicemanager_capacity_free(res, nr, NULL, 0);
        }
        struct devicemanager_resource *held;
        size_t nh;
        devicemanager_allocated(kl->devices, &held, &nh);
        for (size_t i = 0; i < nh; i++) {
                int64_t have = -1;
                for (size_t k = 0; k < *n; k++)
                        if (strcmp(l[k].name, held[i].name) == 0)
                                have = l[k].value;
                if (have < held[i].capacity)
                        extended_set(&l, n, held[i].name, held[i].capacity);
        }
        devicemanager_capacity_free(held, nh, NULL, 0);
        return l;
}

struct resource_count *kl_node_native(const json_t *node, size_t *n)
{
        struct resource_count *l = NULL;
        *n = 0;
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(json_object_get(node, "status"), "allocatable"), k, v)
        {
                int64_t q = 0;
                cleanup_error ck_error_t e = NULL;
                if ((strcmp(k, "ephemeral-storage") == 0 || resource_hugepage_size(k) > 0) &&
                    json_is_string(v) &&
                    api_parse_quantity(json_string_value(v), false, &q, &e) == 0)
                        extended_set(&l, n, k, q);
        }
        return l;
}

void kl_resource_counts_free(struct resource_count *l, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(l[i].name);
        free(l);
}

/* upstream's eviction admit handler, the first: under pressure, pods the
 * node cannot take are refused (reason Evicted). */
static bool admit_under_pressure(struct kubelet *kl, struct pod_record *r)
{
        unsigned conditions = eviction_loop_conditions(kl->eviction);
        cleanup_free char *message = NULL;
        if (eviction_admit(conditions, r->alloc, &message))
                return true;
        struct admission_result ar = {.admit = false};
        snprintf(ar.reason, sizeof(ar.reason), "Evicted");
        snprintf(ar.message, sizeof(ar.message), "%s", message);
        r->admitted = true;
        reject(kl, r, &ar);
        return false;
}

/* upstream's CriticalPodAdmissionHandler: the pods chosen for the critical
 * one are stopped, Failed with reason Preempting (the eviction path, their
 * own grace period), and it is admitted; upstream waits for them to stop,
 * here they stop beside its start. */
static void handle_evict(struct kubelet *kl, struct kl_event *ev);

struct preempt_ctx {
        struct kubelet *kl;
        struct pod *const *active;
        size_t n_active;
};

static int preempt(void *ctx, const struct pod *pod, const struct admission_shortfall *s, size_t n,
                   char *why, size_t why_len)
{
        struct preempt_ctx *pc = ctx;
        const struct pod **victims = xcalloc(pc->n_active + 1, sizeof(*victims));
        int nv =
            admission_pods_to_preempt(pod, pc->active, pc->n_active, s, n, victims, why, why_len);
        for (int i = 0; i < nv; i++) {
                const struct pod *v = victims[i];
                struct pod_record *r = record_find(pc->kl, v->uid);
                if (r == NULL || r->terminal || r->deleting || r->evict_message)
                        continue; /* on its way out already */
                event_emit_pod(pc->kl->recorder, r->pod, NULL, EVENT_WARNING, KL_PREEMPT_REASON,
                               "%s", KL_PREEMPT_MESSAGE);
                char list[400];
                admission_shortfalls_string(s, n, list, sizeof(list));
                LOG_INFO(2, "Preempting pod to free up resources",
                         "pod=\"%s\" podUID=\"%s\" insufficientResources=\"%s\" "
                         "requestingPod=\"%s\"",
                         pod_full_name(v), v->uid, list, pod_full_name(pod));
                struct kl_event ev = {.uid = (char *)v->uid,
                                      .reason = KL_PREEMPT_REASON,
                                      .message = xstrdup(KL_PREEMPT_MESSAGE),
                                      .grace_s = -1,
                                      .disruption = true};
                handle_evict(pc->kl, &ev);
                free(ev.message);
                kmetrics_preemption(s[0].name);
        }
        free(victims);
        return nv < 0 ? -1 : 0;
}

json_t *kl_admission_node(struct kubelet *kl, bool *from_api)
{
        json_t *node = kl->node_agent ? node_agent_get_node(kl->node_agent) : NULL;
        if (from_api)
                *from_api = node != NULL;
        if (node != NULL)
                return node;
        if (kl->local_node != NULL)
                return json_deep_copy(kl->local_node);
        return json_pack("{s:{s:s, s:o}}", "metadata", "name", kl->cfg->node_name, "labels",
                         node_default_labels(kl->cfg->node_name, &kl->cfg->node_labels));
}

static void admit(struct kubelet *kl, struct pod_record *r)
{
        if (!admit_under_pressure(kl, r))
                return;
        struct cm_node_resources res;
        cm_node_resources(kl->cm, &res);
        size_t n_ext = 0;
        bool from_api = false;
        cleanup_json json_t *node_obj = kl_admission_node(kl, &from_api);
        struct resource_count *ext = node_extended(kl, from_api ? node_obj : NULL, &n_ext);
        size_t n_native = 0;
        struct resource_count *native = kl_node_native(node_obj, &n_native);
        struct admission_node node = {
            .name = kl->cfg->node_name,
            .labels = json_object_get(json_object_get(node_obj, "metadata"), "labels"),
            .taints = json_object_get(json_object_get(node_obj, "spec"), "taints"),
            .allocatable_cpu_milli = res.allocatable_cpu_milli,
            .allocatable_memory = res.allocatable_memory,
            .max_pods = kl->cfg->max_pods,
            .sysctls = kl->sysctls,
            .apparmor_enabled = kl->apparmor_enabled,
            .allocate_devices = kl->devices ? admit_devices : NULL,
            .devices_ctx = kl->devices,
            .extended = ext,
            .n_extended = n_ext,
            .native = native,
            .n_native = n_native,
        };
        struct pod **active = xcalloc(kl->loop.n_records ? kl->loop.n_records : 1, sizeof(*active));
        size_t n = 0;
        for (size_t i = 0; i < kl->loop.n_records; i++) {
                struct pod_record *o = &kl->loop.records[i];
                if (o != r && o->admitted && !o->rejected && !o->terminal && !o->deleting &&
                    !api_phase_terminal(o->pod))
                        active[n++] = o->alloc;
        }
        struct preempt_ctx pc = {.kl = kl, .active = active, .n_active = n};
        node.preempt = preempt;
        node.preempt_ctx = &pc;
        struct admission_result ar;
        admission_check(r->alloc, active, n, &node, &ar);
        free(active);
        kl_resource_counts_free(ext, n_ext);
        kl_resource_counts_free(native, n_native);
        /* upstream's node shutdown manager: the last admit handler (devices
         * allocated meanwhile are freed with the inactive pod) */
        if (ar.admit && atomic_load(&kl->node.shutting_down)) {
                ar.admit = false;
                snprintf(ar.reason, sizeof(ar.reason), "%s", NODESHUTDOWN_NOT_ADMITTED_REASON);
                snprintf(ar.message, sizeof(ar.message), "%s", NODESHUTDOWN_NOT_ADMITTED_MESSAGE);
        }
        r->admitted = true;
        if (!ar.admit)
                reject(kl, r, &ar);
        else
                kl_resize_admitted(kl, r);
}

static int compare_creation(const void *a, const void *b)
{
        const struct pod *pa = *(struct pod *const *)a, *pb = *(struct pod *const *)b;
        const char *ta = pa->creation_timestamp ? pa->creation_timestamp : "";
        const char *tb = pb->creation_timestamp ? pb->creation_timestamp : "";
        int c = strcmp(ta, tb);
        return c ? c : strcmp(pod_full_name(pa), pod_full_name(pb));
}

/* Whether an update of a pod matters to its sync (upstream
 * checkAndUpdatePod): its spec, labels, annotations or deletion.  A new
 * status or resourceVersion alone (our own status writes come back this
 * way) does not. */
static bool pod_spec_changed(const struct pod *a, const struct pod *b)
{
        if (!json_equal(json_object_get(a->raw, "spec"), json_object_get(b->raw, "spec")))
                return true;
        json_t *ma = json_object_get(a->raw, "metadata"), *mb = json_object_get(b->raw, "metadata");
        const char *keys[] = {"labels", "annotations", "deletionTimestamp",
                              "deletionGracePeriodSeconds"};
        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
                json_t *va = json_object_get(ma, keys[i]), *vb = json_object_get(mb, keys[i]);
                if ((va == NULL) != (vb == NULL) || (va && !json_equal(va, vb)))
                        return true;
        }
        return false;
}

/* A pod with readiness gates is synced when another writer changes its
 * conditions, so that Ready follows the gates at once (upstream
 * NeedToReconcilePodReadiness), not at the next periodic sync. */
static bool readiness_gates_moved(const struct pod *a, const struct pod *b)
{
        if (json_array_size(json_object_get(json_object_get(b->raw, "spec"), "readinessGates")) ==
            0)
                return false;
        json_t *ca = json_object_get(json_object_get(a->raw, "status"), "conditions");
        json_t *cb = json_object_get(json_object_get(b->raw, "status"), "conditions");
        size_t i;
        json_t *c;
        json_array_foreach(cb, i, c)
        {
                const char *type = json_string_value(json_object_get(c, "type"));
                if (type == NULL || status_condition_owned_by_kubelet(type))
                        continue;
                size_t j;
                json_t *o;
                bool same = false;
                json_array_foreach(ca, j, o)
                {
                        if (json_equal(json_object_get(o, "type"), json_object_get(c, "type"))) {
                                same = json_equal(json_object_get(o, "status"),
                                                  json_object_get(c, "status"));
                                break;
                        }
                }
                if (!same)
                        return true;
        }
        return false;
}

static bool finished_find(struct kubelet *kl, const char *uid, size_t *at)
{
        for (size_t i = 0; i < kl->loop.n_finished; i++)
                if (strcmp(kl->loop.finished[i].uid, uid) == 0) {
                        *at = i;
                        return true;
                }
        return false;
}

/* Forgets finished pods the apiserver no longer shows. */
static void finished_prune(struct kubelet *kl, const struct kl_event *ev)
{
        for (size_t i = 0; i < kl->loop.n_finished; i++) {
                bool present = false;
                for (size_t j = 0; j < ev->n_pods && !present; j++)
                        present = strcmp(ev->pods[j]->uid, kl->loop.finished[i].uid) == 0;
                if (present)
                        continue;
                free(kl->loop.finished[i].uid);
                kl->loop.finished[i--] = kl->loop.finished[--kl->loop.n_finished];
        }
}

/* upstream activePods for the device manager (on the sync loop thread,
 * during admission): a pod known and not finished holds its devices. */
static bool kl_pod_active(void *ctx, const char *uid)
{
        struct kubelet *kl = ctx;
        struct pod_record *r = record_find(kl, uid);
        return r != NULL && !r->rejected && !r->terminal;
}

/* A new record for p (a source's ADD): admitted, or stopped at once when
 * the apiserver already deleted or finished it, and synced.  status (NULL:
 * none; stolen) is its last status, when the pod starts again. */
static void record_add(struct kubelet *kl, struct pod *p, json_t *status)
{
        if (kl->loop.n_records == kl->loop.cap_records) {
                kl->loop.cap_records = kl->loop.cap_records ? kl->loop.cap_records * 2 : 32;
                kl->loop.records =
                    xrealloc(kl->loop.records, kl->loop.cap_records * sizeof(*kl->loop.records));
        }
        struct pod_record *r = &kl->loop.records[kl->loop.n_records++];
        *r = (struct pod_record){
            .pod = pod_ref(p), .first_seen_us = fs_now_mono_us(), .seq = kl->loop.records_made++};
        status_store_set_pod(kl->status, p);
        if (status != NULL)
                status_store_set_status(kl->status, p->uid, status);
        kl_resize_pod_added(kl, r);
        if (p->deletion_timestamp != NULL) {
                /* deleted before it ever ran here */
                r->admitted = true;
                r->deleting = true;
        } else if (api_phase_terminal(p)) {
                r->admitted = true; /* finished: its sync only stops it */
        } else {
                admit(kl, r);
        }
        kl_sync_record(kl, r, "create");
}

/* A source delivered its whole set: ADD, UPDATE, DELETE as upstream's pod
 * config merge computes them. */
static void handle_source(struct kubelet *kl, struct kl_event *ev)
{
        const char *src = source_name(ev->source);
        if (ev->source == POD_SOURCE_API) {
                kl_mirrors_take(kl, ev);
                finished_prune(kl, ev);
        }
        /* DELETE: records of this source whose UID is no longer there. */
        for (size_t i = 0; i < kl->loop.n_records; i++) {
                struct pod_record *r = &kl->loop.records[i];
                if (r->pod->source != ev->source || (r->deleting && !r->restart_requested))
                        continue;
                bool present = false;
                for (size_t j = 0; j < ev->n_pods && !present; j++)
                        present = strcmp(ev->pods[j]->uid, r->pod->uid) == 0;
                if (present)
                        continue;
                if (r->deleting) { /* came back, and left again before it stopped */
                        r->restart_requested = false;
                        podworkers_set_keep(kl->workers, r->pod->uid, false);
                        continue;
                }
                LOG_INFO(0, "SyncLoop REMOVE", "source=\"%s\" pods=[\"%s\"]", src,
                         pod_full_name(r->pod));
                if (r->rejected) {
                        record_remove(kl, r);
                        i--;
                        continue;
                }
                r->deleting = true;
                r->terminal = false;
                kl_sync_record(kl, r, NULL); /* upstream's deletePod: no StartTime */
        }
        /* ADD in creation order (admission is first come, first served),
         * UPDATE when the object changed. */
        qsort(ev->pods, ev->n_pods, sizeof(*ev->pods), compare_creation);
        bool added = false;
        for (size_t j = 0; j < ev->n_pods; j++) {
                struct pod *p = ev->pods[j];
                struct pod_record *r = record_find(kl, p->uid);
                size_t at;
                if (r == NULL && finished_find(kl, p->uid, &at))
                        continue; /* stopped and deleted; the watch lags */
                if (r == NULL) {
                        LOG_INFO(0, "SyncLoop ADD", "source=\"%s\" pods=[\"%s\"]", src,
                                 pod_full_name(p));
                        record_add(kl, p, NULL);
                        added = true;
                        continue;
                }
                if (r->deleting && p->source != POD_SOURCE_API) {
                        /* upstream: a pod of the same UID while the old one
                         * stops is restarted once it stopped */
                        if (r->restart_requested) { /* it starts as the source has it */
                                pod_unref(r->pod);
                                r->pod = pod_ref(p);
                                continue;
                        }
                        LOG_INFO(0, "SyncLoop ADD", "source=\"%s\" pods=[\"%s\"]", src,
                                 pod_full_name(p));
                        LOG_INFO(2, "Pod is stopping, it starts again once stopped",
                                 "pod=\"%s\" podUID=\"%s\"", pod_full_name(p), p->uid);
                        r->restart_requested = true;
                        pod_unref(r->pod);
                        r->pod = pod_ref(p);
                        podworkers_set_keep(kl->workers, p->uid, true);
                        continue;
                }
                if (r->deleting || json_equal(r->pod->raw, p->raw))
                        continue;
                bool changed = pod_spec_changed(r->pod, p) || readiness_gates_moved(r->pod, p);
                pod_unref(r->pod);
                r->pod = pod_ref(p);
                status_store_set_pod(kl->status, p);
                kl_resize_pod_updated(kl, r, changed && p->deletion_timestamp == NULL);
                if (p->source == POD_SOURCE_API &&
                    status_store_reconcile(kl->status, p->uid, json_object_get(p->raw, "status"))) {
                        LOG_INFO(2, "Pod status in the apiserver differs, writing it again",
                                 "pod=\"%s\"", pod_full_name(p));
                        status_manager_notify(kl->sm);
                }
                if (!changed)
                        continue;
                if (p->deletion_timestamp != NULL) {
                        /* upstream SyncLoop DELETE: graceful deletion asked
                         * through the apiserver */
                        LOG_INFO(0, "SyncLoop DELETE", "source=\"%s\" pods=[\"%s\"]", src,
                                 pod_full_name(p));
                        r->deleting = true;
                        r->terminal = false;
                        r->rejected = false;
                } else {
                        LOG_INFO(0, "SyncLoop UPDATE", "source=\"%s\" pods=[\"%s\"]", src,
                                 pod_full_name(p));
                }
                kl_sync_record(kl, r, "update");
        }
        kl->loop.sources_seen |= 1u << ev->source;
        if ((kl->loop.sources_seen & kl->loop.sources_expected) == kl->loop.sources_expected)
                kl->loop.sources_ready = true;
        /* resizes pending since before a restart, or that a new pod may
         * decide (upstream HandlePodAdditions' RetryPendingResizes) */
        if (added)
                kl_resize_retry(kl, "pods_added");
        kl_mirrors_reconcile(kl);
}

/* Drops uid from the last relist: its pod was just removed, and the relist
 * that still shows it must not make housekeeping clean it up again. */
static void forget_runtime_uid(struct kubelet *kl, const char *uid)
{
        for (size_t i = 0; i < kl->loop.n_runtime_uids; i++) {
                struct kl_runtime_uid *u = &kl->loop.runtime_uids[i];
                if (strcmp(u->uid, uid) != 0)
                        continue;
                runtime_uid_clear(u);
                *u = kl->loop.runtime_uids[--kl->loop.n_runtime_uids];
                return;
        }
}

static void handle_work_done(struct kubelet *kl, struct kl_event *ev)
{
        struct pod_record *r = record_find(kl, ev->uid);
        if (r == NULL)
                return;
        int64_t now = fs_now_mono_ms();
        if (ev->work_kind == POD_WORK_KILL && r->deleting) {
                r->kill_in_flight = false;
                if (ev->ok) {
                        LOG_INFO(2, "Pod removed", "pod=\"%s\"", pod_full_name(r->pod));
                        /* its containers are gone: the apiserver may forget it */
                        if (r->pod->source == POD_SOURCE_API && r->pod->deletion_timestamp &&
                            kl->sm) {
                                status_manager_delete_pod(kl->sm, r->pod->namespace, r->pod->name,
                                                          r->pod->uid);
                                kl->loop.finished =
                                    xrealloc(kl->loop.finished, (kl->loop.n_finished + 1) *
                                                                    sizeof(*kl->loop.finished));
                                kl->loop.finished[kl->loop.n_finished++] =
                                    (struct kl_recent){.uid = xstrdup(r->pod->uid), .at_ms = now};
                        }
                        struct pod *pod = pod_ref(r->pod);
                        bool restart = r->restart_requested;
                        /* upstream keeps the status manager's status of a
                         * pod that starts again (its startTime...) */
                        json_t *status =
                            restart ? status_store_get_status(kl->status, pod->uid) : NULL;
                        if (!restart)
                                forget_runtime_uid(kl, pod->uid);
                        record_remove(kl, r);
                        if (restart) {
                                LOG_INFO(2, "Pod stopped, starting it again",
                                         "pod=\"%s\" podUID=\"%s\"", pod_full_name(pod), pod->uid);
                                record_add(kl, pod, status);
                        } else if (pod->source != POD_SOURCE_API) {
                                static_start_next(kl, pod);
                        }
                        pod_unref(pod);
                } else {
                        r->next_sync_ms = now + SYNC_ERROR_BACKOFF_MS;
                        r->sync_failed = true;
                }
                return;
        }
        if (ev->work_kind != POD_WORK_SYNC || r->deleting)
                return;
        if (ev->terminal) {
                r->terminal = true;
                return;
        }
        r->sync_failed = !ev->ok;
        if (!ev->ok)
                r->next_sync_ms = now + SYNC_ERROR_BACKOFF_MS;
        if (ev->next_retry_ms > 0 && ev->next_retry_ms < r->next_sync_ms)
                r->next_sync_ms = ev->next_retry_ms;
}

/* The eviction (or node shutdown) manager's decision: the record is
 * stopped, Failed with its reason, by its next sync (now). */
static void handle_evict(struct kubelet *kl, struct kl_event *ev)
{
        struct pod_record *r = record_find(kl, ev->uid);
        if (r == NULL || r->terminal || r->deleting || r->rejected || r->evict_message)
                return;
        r->evict_reason = ev->reason;
        r->evict_message = ev->message;
        r->evict_grace_s = ev->grace_s;
        r->evict_disruption = ev->disruption;
        ev->message = NULL;
        kl_sync_record(kl, r, "sync");
}

/* The pods the eviction manager may rank: admitted, not rejected, not
 * terminal, not leaving, not evicted already (upstream's active pods); and
 * those being stopped (deleted, evicted): the node shutdown manager waits
 * for them too, as upstream's active pods keep terminating ones. */
static void free_pods(struct pod **pods, size_t n)
{
        for (size_t i = 0; i < n; i++)
                pod_unref(pods[i]);
        free(pods);
}

static void publish_active(struct kubelet *kl)
{
        struct pod **active = xcalloc(kl->loop.n_records + 1, sizeof(*active));
        struct pod **stopping = xcalloc(kl->loop.n_records + 1, sizeof(*stopping));
        size_t n = 0, n_stopping = 0;
        for (size_t i = 0; i < kl->loop.n_records; i++) {
                const struct pod_record *r = &kl->loop.records[i];
                if (!r->admitted || r->rejected || r->terminal || r->pod == NULL ||
                    api_phase_terminal(r->pod))
                        continue;
                if (r->deleting || r->evict_message)
                        stopping[n_stopping++] = pod_ref(r->alloc ? r->alloc : r->pod);
                else
                        active[n++] = pod_ref(r->alloc ? r->alloc : r->pod);
        }
        pthread_mutex_lock(&kl->active_lock);
        struct pod **old = kl->active, **old_stopping = kl->stopping;
        size_t n_old = kl->n_active, n_old_stopping = kl->n_stopping;
        kl->active = active;
        kl->n_active = n;
        kl->stopping = stopping;
        kl->n_stopping = n_stopping;
        pthread_mutex_unlock(&kl->active_lock);
        free_pods(old, n_old);
        free_pods(old_stopping, n_old_stopping);
}

/* upstream PodIsFinished for the managers' waits: neither active nor
 * being stopped (stopped, or gone) */
static bool pod_finished(void *ctx, const char *uid)
{
        struct kubelet *kl = ctx;
        bool found = false;
        pthread_mutex_lock(&kl->active_lock);
        for (size_t i = 0; i < kl->n_active && !found; i++)
                found = strcmp(kl->active[i]->uid, uid) == 0;
        for (size_t i = 0; i < kl->n_stopping && !found; i++)
                found = strcmp(kl->stopping[i]->uid, uid) == 0;
        pthread_mutex_unlock(&kl->active_lock);
        return !found;
}

/* references to the n pods of list, then the m of more */
static struct pod **copy_pods(struct pod *const *list, size_t n, struct pod *const *more, size_t m)
{
        struct pod **out = xcalloc(n + m + 1, sizeof(*out));
        for (size_t i = 0; i < n; i++)
                out[i] = pod_ref(list[i]);
        for (size_t i = 0; i < m; i++)
                out[n + i] = pod_ref(more[i]);
        return out;
}

/* the node shutdown manager's pods: the active ones and those being
 * stopped (a kill under way is waited for; its grace period is its own) */
static struct pod **shutdown_pods(void *ctx, size_t *n)
{
        struct kubelet *kl = ctx;
        pthread_mutex_lock(&kl->active_lock);
        struct pod **out = copy_pods(kl->active, kl->n_active, kl->stopping, kl->n_stopping);
        *n = kl->n_active + kl->n_stopping;
        pthread_mutex_unlock(&kl->active_lock);
        return out;
}

static struct pod **active_pods(void *ctx, size_t *n)
{
        struct kubelet *kl = ctx;
        pthread_mutex_lock(&kl->active_lock);
        struct pod **out = copy_pods(kl->active, kl->n_active, NULL, 0);
        *n = kl->n_active;
        pthread_mutex_unlock(&kl->active_lock);
        return out;
}

static void evict_pod(void *ctx, const struct pod *pod, const char *reason, const char *message,
                      int64_t grace_s, bool disruption)
{
        struct kubelet *kl = ctx;
        struct kl_event *ev = kl_event_new(KL_EV_EVICT);
        ev->uid = xstrdup(pod->uid);
        ev->reason = reason;
        ev->message = xstrdup(message);
        ev->grace_s = grace_s;
        ev->disruption = disruption;
        kl_queue_post(&kl->queue, ev);
}

/* the node shutdown manager's kill (upstream's status function: Failed,
 * reason Terminated, a DisruptionTarget condition) */
static void shutdown_kill(void *ctx, const struct pod *pod, int64_t grace_s)
{
        evict_pod(ctx, pod, NODESHUTDOWN_REASON, NODESHUTDOWN_MESSAGE, grace_s, true);
}

static void shutdown_sync_node_status(void *ctx)
{
        struct kubelet *kl = ctx;
        node_agent_sync_status(kl->node_agent);
}

/* upstream NewManager + Start: with a shutdown grace period, the node
 * shutdown manager; one that cannot start (no system bus, no logind) is
 * logged and the agent runs without it, as upstream */
static void start_shutdown_manager(struct kubelet *kl)
{
        const struct kubelet_config *cfg = kl->cfg;
        struct shutdown_period *by = xcalloc(cfg->n_shutdown_by_priority + 1, sizeof(*by));
        for (size_t i = 0; i < cfg->n_shutdown_by_priority; i++)
                by[i] = (struct shutdown_period){
                    cfg->shutdown_by_priority[i].priority,
                    cfg->shutdown_by_priority[i].shutdown_grace_period_seconds};
        struct shutdown_period *periods = NULL;
        size_t n = nodeshutdown_periods(cfg->shutdown_grace_period_ms,
                                        cfg->shutdown_grace_period_critical_pods_ms, by,
                                        cfg->n_shutdown_by_priority, &periods);
        free(by);
        if (n == 0)
                return;
        cleanup_free char *state = xasprintf("%s/%s", cfg->root_dir, NODESHUTDOWN_STATE_FILE);
        struct shutdown_loop_options so = {
            .periods = periods,
            .n_periods = n,
            .state_path = state,
            .recorder = kl->recorder,
            .node_name = cfg->node_name,
            .publish = &kl->node.shutting_down,
            .active_pods = shutdown_pods,
            .pod_finished = pod_finished,
            .kill = shutdown_kill,
            .sync_node_status = shutdown_sync_node_status,
            .ctx = kl,
        };
        cleanup_error ck_error_t err = NULL;
        if (shutdown_loop_start(&so, &kl->shutdown, &err) < 0)
                LOG_ERROR("Failed to start node shutdown manager", "err=\"%s\"", ck_error_msg(err));
        free(periods);
}

static void handle_relist(struct kubelet *kl, struct kl_event *ev)
{
        runtime_uids_free(kl->loop.runtime_uids, kl->loop.n_runtime_uids);
        kl->loop.runtime_uids = ev->runtime_uids;
        kl->loop.n_runtime_uids = ev->n_runtime_uids;
        kl->loop.relisted = true;
        ev->runtime_uids = NULL;
        ev->n_runtime_uids = 0;
        if (!ev->runtime_back)
                return;
        /* The runtime answers again (a restart, an outage): the pods whose
         * sync or kill failed meanwhile are retried now rather than at the
         * end of their back-off (upstream waits it out: 10-15 s more). */
        int64_t now = fs_now_mono_ms();
        size_t n = 0;
        for (size_t i = 0; i < kl->loop.n_records; i++) {
                struct pod_record *r = &kl->loop.records[i];
                if (r->sync_failed && r->next_sync_ms > now) {
                        r->next_sync_ms = now;
                        n++;
                }
        }
        LOG_INFO(1, "Container runtime answers again; retrying the pods whose sync failed",
                 "pods=%zu", n);
}

/* As of the last relist, a container of that ID prefix had not exited. */
static bool container_live(void *ctx, const char *id_prefix)
{
        struct kubelet *kl = ctx;
        size_t n = strlen(id_prefix);
        for (size_t i = 0; i < kl->loop.n_runtime_uids; i++)
                for (size_t j = 0; j < kl->loop.runtime_uids[i].n_live; j++)
                        if (strncmp(kl->loop.runtime_uids[i].live[j], id_prefix, n) == 0)
                                return true;
        return false;
}

static bool uid_wanted(struct kubelet *kl, const char *uid)
{
        return record_find(kl, uid) != NULL || podworkers_busy(kl->workers, uid);
}

/* No source wants the pod and the runtime has nothing of it (as of the
 * last relist). */
static bool pod_gone(void *ctx, const char *uid)
{
        struct kubelet *kl = ctx;
        for (size_t j = 0; j < kl->loop.n_runtime_uids; j++)
                if (strcmp(kl->loop.runtime_uids[j].uid, uid) == 0)
                        return false;
        return !uid_wanted(kl, uid);
}

/* Submits the removal of each of uids (a NULL-terminated list, freed) that
 * no source wants and the runtime does not know (those the relist showed
 * are handled on their own); what names what was found, for the log. */
static void clean_orphans_without_runtime(struct kubelet *kl, char **uids, const char *what)
{
        for (size_t i = 0; uids[i]; i++) {
                if (pod_gone(kl, uids[i])) {
                        LOG_INFO(2, "Cleaning up orphaned pod", "podUID=\"%s\" found=\"%s\"",
                                 uids[i], what);
                        submit_orphan(kl, uids[i], NULL, NULL);
                }
                free(uids[i]);
        }
        free(uids);
}

/* Housekeeping (upstream HandlePodCleanups): anything of a pod UID that no
 * source wants — runtime containers and sandboxes, pod directories, pod
 * cgroups — is killed and removed.  Only once every source has delivered
 * its first set, so that a restarted kubelet adopts its pods instead. */
static void housekeeping(struct kubelet *kl)
{
        kl_mirrors_reconcile(kl);
        backoff_gc(kl->mount_backoff, fs_now_mono_ms());
        if (!kl->loop.sources_ready)
                return;
        /* allocations of pods no source has (gone while the kubelet was
         * down): upstream RemoveOrphanedPods */
        const char **uids_known = xcalloc(kl->loop.n_records + 1, sizeof(*uids_known));
        for (size_t i = 0; i < kl->loop.n_records; i++)
                uids_known[i] = kl->loop.records[i].pod->uid;
        alloc_state_retain(kl->allocated, uids_known, kl->loop.n_records);
        alloc_state_retain(kl->actuated, uids_known, kl->loop.n_records);
        /* the user namespaces of pods neither active nor with anything in
         * the runtime (upstream CleanupOrphanedPodUsernsAllocations, and
         * the release of a terminated pod's); only once a relist has said
         * what runs */
        if (kl->loop.relisted) {
                const char **keep =
                    xcalloc(kl->loop.n_records + kl->loop.n_runtime_uids + 1, sizeof(*keep));
                size_t n_keep = 0;
                for (size_t i = 0; i < kl->loop.n_records; i++)
                        if (!kl->loop.records[i].terminal)
                                keep[n_keep++] = kl->loop.records[i].pod->uid;
                for (size_t i = 0; i < kl->loop.n_runtime_uids; i++)
                        keep[n_keep++] = kl->loop.runtime_uids[i].uid;
                userns_retain(kl->userns, keep, n_keep);
                free(keep);
        }
        free(uids_known);
        for (size_t i = 0; i < kl->loop.n_runtime_uids; i++) {
                struct kl_runtime_uid *u = &kl->loop.runtime_uids[i];
                if (uid_wanted(kl, u->uid))
                        continue;
                LOG_INFO(2, "Cleaning up orphaned pod", "podUID=\"%s\" pod=\"%s/%s\"", u->uid,
                         u->namespace ? u->namespace : "", u->name ? u->name : "");
                submit_orphan(kl, u->uid, u->name, u->namespace);
        }
        /* what is left of a pod without runtime objects: its directory
         * (upstream cleanupOrphanedPodDirs) or its cgroup (upstream
         * cleanupOrphanedPodCgroups) */
        char **uids = NULL;
        cleanup_error ck_error_t err = NULL;
        if (volume_list_pod_dirs(kl->cfg->root_dir, &uids, &err) == 0)
                clean_orphans_without_runtime(kl, uids, "directory");
        else
                LOG_ERROR("Failed to list pod directories", "err=\"%s\"", ck_error_msg(err));
        ck_error_release(&err);
        if (cm_list_pod_cgroups(kl->cm, &uids, &err) == 0)
                clean_orphans_without_runtime(kl, uids, "cgroup");
        else
                LOG_ERROR("Failed to list pod cgroups", "err=\"%s\"", ck_error_msg(err));
        ck_error_release(&err);
        /* upstream's container GC, every minute: dangling legacy log links */
        int64_t now = fs_now_mono_ms();
        if (now >= kl->loop.next_log_link_gc_ms) {
                kl->loop.next_log_link_gc_ms = now + LOG_LINK_GC_PERIOD_MS;
                if (kuberuntime_legacy_logs_gc(kl->rt, container_live, kl, &err) < 0)
                        LOG_ERROR("Failed to clean the legacy container log links", "err=\"%s\"",
                                  ck_error_msg(err));
                ck_error_release(&err);
                if (kuberuntime_pod_logs_gc(kl->rt, pod_gone, kl, &err) < 0)
                        LOG_ERROR("Failed to clean the pod log directories", "err=\"%s\"",
                                  ck_error_msg(err));
        }
}

static void sync_loop(struct kubelet *kl)
{
        kl->loop.next_housekeeping_ms = fs_now_mono_ms() + HOUSEKEEPING_PERIOD_MS;
        for (;;) {
                int64_t now = fs_now_mono_ms();
                int64_t deadline = kl->loop.next_housekeeping_ms;
                for (size_t i = 0; i < kl->loop.n_records; i++)
                        if (!kl->loop.records[i].rejected && !kl->loop.records[i].terminal &&
                            kl->loop.records[i].next_sync_ms < deadline)
                                deadline = kl->loop.records[i].next_sync_ms;
                int64_t resize_at = kl_resize_next_retry_ms(kl);
                if (resize_at > 0 && resize_at < deadline)
                        deadline = resize_at;
                if (deadline < now)
                        deadline = now;
                struct kl_event *ev = kl_next_event(&kl->queue, deadline);
                if (ev) {
                        bool stop = ev->type == KL_EV_STOP;
                        switch (ev->type) {
                        case KL_EV_SOURCE:
                                handle_source(kl, ev);
                                break;
                        case KL_EV_POD_EVENT: {
                                struct pod_record *r = record_find(kl, ev->uid);
                                if (r)
                                        kl_sync_record(kl, r, "sync");
                                break;
                        }
                        case KL_EV_RELIST:
                                handle_relist(kl, ev);
                                break;
                        case KL_EV_WORK_DONE:
                                handle_work_done(kl, ev);
                                break;
                        case KL_EV_EVICT:
                                handle_evict(kl, ev);
                                break;
                        case KL_EV_STOP:
                                break;
                        }
                        kl_event_free(ev);
                        if (stop)
                                return;
                }
                publish_active(kl);
                now = fs_now_mono_ms();
                for (size_t i = 0; i < kl->loop.n_records; i++)
                        if (kl->loop.records[i].next_sync_ms <= now)
                                kl_sync_record(kl, &kl->loop.records[i], "sync");
                int64_t resize_due = kl_resize_next_retry_ms(kl);
                if (resize_due > 0 && now >= resize_due)
                        kl_resize_retry(kl, "periodic_retry");
                if (now >= kl->loop.next_housekeeping_ms) {
                        housekeeping(kl);
                        kl->loop.next_housekeeping_ms = now + HOUSEKEEPING_PERIOD_MS;
                }
        }
}

/* What the RuntimeClass store keeps of one: its name and handler. */
static json_t *runtime_class_fields(json_t *obj)
{
        const char *name =
            json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
        const char *handler = json_string_value(json_object_get(obj, "handler"));
        if (name == NULL || handler == NULL)
                return NULL;
        return json_pack("{s:{s:s}, s:s}", "metadata", "name", name, "handler", handler);
}

/* upstream runtimeclass.Manager.LookupRuntimeHandler, from the store */
static int lookup_runtime_handler(void *ctx, const char *name, char **handler, ck_error_t *err)
{
        struct informer *inf = ctx;
        if (!informer_has_synced(inf))
                return ck_error_make(err, 0,
                                     "failed to lookup RuntimeClass %s: the RuntimeClasses are "
                                     "not listed yet",
                                     name);
        cleanup_json json_t *all = informer_list(inf);
        size_t i;
        json_t *rc;
        json_array_foreach(all, i, rc)
        {
                const char *n =
                    json_string_value(json_object_get(json_object_get(rc, "metadata"), "name"));
                if (n != NULL && strcmp(n, name) == 0) {
                        *handler = xstrdup(json_string_value(json_object_get(rc, "handler")));
                        return 0;
                }
        }
        return ck_error_make(err, 0, "runtimeclass.node.k8s.io \"%s\" not found", name);
}

/* ---- lifecycle --------------------------------------------------------- */

/* --kubeconfig: the apiserver's clients (upstream: the kubelet runs in
 * standalone mode without one).  Nothing is contacted yet. */
static int cluster_mode_new(struct kubelet *kl, ck_error_t *err)
{
        const struct kubelet_config *cfg = kl->cfg;
        kl->api_cfg = xcalloc(1, sizeof(*kl->api_cfg));
        if (kubeconfig_load(cfg->kubeconfig, NULL, kl->api_cfg, err) < 0)
                return ck_error_wrap(err, "invalid kubeconfig `%s`", cfg->kubeconfig);
        /* one TLS context for every connection to the apiserver */
        if (rest_config_share_tls(kl->api_cfg, err) < 0)
                return ck_error_wrap(err, "apiserver client for `%s`", kl->api_cfg->server);
        kl->api_rl = rest_ratelimiter_new(cfg->kube_api_qps, cfg->kube_api_burst);
        if (rest_pool_new(kl->api_cfg, kl->api_rl, &kl->api_pool, err) < 0)
                return ck_error_wrap(err, "apiserver client for `%s`", kl->api_cfg->server);
        /* upstream NewMainKubelet's service informer, trimmed to the fields
         * the service environment variables need */
        kl->services = informer_new("services", "/api/v1/services", envvars_service_fields);
        /* upstream's RuntimeClass manager: its informer */
        kl->runtime_classes = informer_new("runtimeclasses", "/apis/node.k8s.io/v1/runtimeclasses",
                                           runtime_class_fields);
        kl->kube = kube_objects_rest_new(kl->api_pool, kl->services);
        if (event_recorder_new(kl->api_cfg, kl->api_rl, cfg->node_name, &kl->recorder, err) < 0)
                return ck_error_wrap(err, "event recorder");
        /* the InternalIP the node reports is every pod's hostIP */
        char *ip = NULL;
        if (node_ip_resolve(cfg->node_ip, &ip, err) < 0)
                return ck_error_wrap(err, "--node-ip");
        free(kl->node_ip);
        kl->node_ip = ip;
        kl->rt_opts.node_ip = kl->node_ip;
        kl->loop.sources_expected |= 1u << POD_SOURCE_API;
        return 0;
}

/* kuberuntime's user namespace ranges (upstream runtimeHelper) */
static int userns_mappings(void *ctx, const struct pod *pod, uint32_t *host_id, uint32_t *length,
                           ck_error_t *err)
{
        return userns_pod_mappings(ctx, pod->uid, host_id, length, err);
}

/* kuberuntime's view of the runtime handlers (upstream runtimeHelper) */
static bool handler_supports_userns(void *ctx, const char *handler, char **error)
{
        return runtime_state_handler_supports_userns(ctx, handler, error);
}

static struct eviction_kv *kv_of(const struct kv_list *l)
{
        struct eviction_kv *out = xcalloc(l->n + 1, sizeof(*out));
        for (size_t i = 0; i < l->n; i++)
                out[i] = (struct eviction_kv){l->items[i].key, l->items[i].value};
        return out;
}

/* upstream ParseThresholdConfig (a bad threshold stops the kubelet);
 * enforceNodeAllocatable is upstream's default ["pods"] when the pods have
 * their cgroups (cgroupsPerQOS) */
static int parse_eviction_config(const struct kubelet_config *cfg, struct eviction_config *out,
                                 ck_error_t *err)
{
        cleanup_free struct eviction_kv *hard = kv_of(&cfg->eviction_hard);
        cleanup_free struct eviction_kv *soft = kv_of(&cfg->eviction_soft);
        cleanup_free struct eviction_kv *grace = kv_of(&cfg->eviction_soft_grace);
        cleanup_free struct eviction_kv *reclaim = kv_of(&cfg->eviction_minimum_reclaim);
        if (eviction_config_parse(hard, cfg->eviction_hard.n, soft, cfg->eviction_soft.n, grace,
                                  cfg->eviction_soft_grace.n, reclaim,
                                  cfg->eviction_minimum_reclaim.n, cfg->cgroups_per_qos, out,
                                  err) < 0)
                return ck_error_wrap(err, "eviction thresholds");
        out->pressure_transition_ms = cfg->eviction_pressure_transition_ms;
        out->max_pod_grace_period_s = cfg->eviction_max_pod_grace_period;
        return 0;
}

int kubelet_new(const struct kubelet_config *cfg, struct kubelet **out, ck_error_t *err)
{
        if (cm_check_cgroup_v1(NULL, cfg->fail_cgroup_v1, err) < 0)
                return ck_error_wrap(err, "invalid configuration");
        if (fs_mkdir_p(cfg->root_dir, 0750, err) < 0)
                return ck_error_wrap(err, "root directory");
        cleanup_free char *pods_dir = xasprintf("%s/pods", cfg->root_dir);
        if (fs_mkdir_p(pods_dir, 0750, err) < 0)
                return ck_error_wrap(err, "root directory");
        if (fs_mkdir_p(cfg->pod_logs_dir, 0755, err) < 0)
                return ck_error_wrap(err, "pod logs directory");

        struct kubelet *kl = xcalloc(1, sizeof(*kl));
        kl->cfg = cfg;
        pthread_mutex_init(&kl->active_lock, NULL);
        pthread_mutex_init(&kl->queue.lock, NULL);
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&kl->queue.cond, &ca);
        pthread_condattr_destroy(&ca);
        kl->runtime_state = runtime_state_new(RUNTIME_STATE_REFRESH_MS);
        kl->status = status_store_new();
        kl->pod_cache = pod_cache_new();
        kl->mount_backoff = backoff_new(MOUNT_RETRY_INITIAL_MS, SYNC_ERROR_BACKOFF_MS);
        kl->runtime_name = xstrdup("containerd");
        kl->node_ip = xstrdup(cfg->node_ip);
        if (parse_eviction_config(cfg, &kl->eviction_cfg, err) < 0) {
                kubelet_free(kl);
                return -1;
        }

        int64_t reserved_cpu = 0, reserved_mem = 0;
        const char *lists[] = {"system", "kube"};
        const struct kv_list *reserved[] = {&cfg->system_reserved, &cfg->kube_reserved};
        for (size_t l = 0; l < 2; l++)
                for (size_t i = 0; i < reserved[l]->n; i++) {
                        const struct kv *kv = &reserved[l]->items[i];
                        int64_t v;
                        bool cpu = strcmp(kv->key, "cpu") == 0;
                        if (!cpu && strcmp(kv->key, "memory") != 0)
                                continue;
                        if (api_parse_quantity(kv->value, cpu, &v, err) < 0) {
                                kubelet_free(kl);
                                return ck_error_wrap(err, "--%s-reserved %s", lists[l], kv->key);
                        }
                        *(cpu ? &reserved_cpu : &reserved_mem) += v;
                }
        kl->reserved_cpu_milli = reserved_cpu;
        kl->reserved_memory = reserved_mem;
        /* upstream's AppArmor validator looks at the host once, at start */
        kl->apparmor_enabled = admission_apparmor_enabled();
        struct utsname uts;
        if (sysctl_allowlist_new((const char *const *)cfg->allowed_unsafe_sysctls,
                                 uname(&uts) == 0 ? uts.release : NULL, &kl->sysctls, err) < 0) {
                kubelet_free(kl);
                return ck_error_wrap(err, "allowedUnsafeSysctls");
        }
        struct cm_options cmo = {
            .cgroupfs_root = "/sys/fs/cgroup",
            .cgroup_root = cfg->cgroup_root,
            .cgroups_per_qos = cfg->cgroups_per_qos,
            .cgroup_driver = cfg->cgroup_driver,
            .reserved_cpu_milli = reserved_cpu,
            .reserved_memory = reserved_mem,
            .fail_swap_on = cfg->fail_swap_on,
            .fail_cgroup_v1 = cfg->fail_cgroup_v1,
        };
        if (cm_new(&cmo, &kl->cm, err) < 0) {
                kubelet_free(kl);
                return ck_error_wrap(err, "container manager");
        }
        /* upstream's container manager starts its device manager: the
         * Registration socket device plugins look for */
        struct devicemanager_options dmo = {
            .dir = DEVICEMANAGER_DIR, .pod_active = kl_pod_active, .ctx = kl};
        if (devicemanager_start(&dmo, &kl->devices, err) < 0) {
                kubelet_free(kl);
                return ck_error_wrap(err, "container manager");
        }
        kl->rt_opts = (struct kuberuntime_options){
            .root_dir = cfg->root_dir,
            .pod_logs_dir = cfg->pod_logs_dir,
            .node_name = cfg->node_name,
            .cluster_domain = cfg->cluster_domain,
            .cluster_dns = (const char *const *)cfg->cluster_dns,
            .resolv_conf = cfg->resolv_conf,
            .pod_infra_image = cfg->pod_infra_container_image,
            .image_backoff_initial_ms = 10000,
            .image_backoff_max_ms = 300000,
            .crashloop_backoff_initial_ms = 10000,
            .crashloop_backoff_max_ms = 300000,
            .runtime_endpoint = cfg->container_runtime_endpoint,
            .runtime_timeout_ms = cfg->runtime_request_timeout_ms,
            /* upstream ContainerLogsDir, not configurable there either */
            .legacy_logs_dir = KL_LEGACY_LOGS_DIR,
            .devices = kl->devices,
            .gc = {.min_age_ms = cfg->minimum_container_ttl_ms,
                   .max_per_pod_container = cfg->max_dead_per_container,
                   .max_containers = cfg->max_dead_containers},
        };
        if (cfg->kubeconfig && *cfg->kubeconfig && cluster_mode_new(kl, err) < 0) {
                kubelet_free(kl);
                return -1;
        }
        /* upstream's allocation and actuation checkpoints */
        if (alloc_state_open(cfg->root_dir, "allocated_pods_state", &kl->allocated, err) < 0 ||
            alloc_state_open(cfg->root_dir, "actuated_pods_state", &kl->actuated, err) < 0) {
                kubelet_free(kl);
                return ck_error_wrap(err, "could not restore state from checkpoint");
        }
        kl->rt_opts.actuated = kl->actuated;
        kl->rt_opts.recorder = kl->recorder;
        kl->rt_opts.handler_supports_userns = handler_supports_userns;
        if (kl->runtime_classes != NULL) {
                kl->rt_opts.lookup_runtime_handler = lookup_runtime_handler;
                kl->rt_opts.runtime_class_ctx = kl->runtime_classes;
        }
        kl->rt_opts.selinux_enabled = kuberuntime_selinux_enabled();
        kl->rt_opts.handler_ctx = kl->runtime_state;
        /* upstream MakeUserNsManager: the pods' ranges read back */
        struct userns_config uc = {.root_dir = cfg->root_dir,
                                   .ids_per_pod = (uint32_t)cfg->userns_ids_per_pod,
                                   .max_pods = cfg->max_pods,
                                   .kubelet_user = -1};
        if (userns_manager_new(&uc, &kl->userns, err) < 0) {
                kubelet_free(kl);
                return ck_error_wrap(err, "create user namespace manager");
        }
        kl->rt_opts.userns_mappings = userns_mappings;
        kl->rt_opts.userns_ctx = kl->userns;
        kl->rt = kuberuntime_new(&kl->rt_opts);
        kl->node.cfg = cfg;
        kl->node.runtime_state = kl->runtime_state;
        kl->node.devices = kl->devices;
        *out = kl;
        return 0;
}

/* ---- node agent callbacks (on the node status thread only) ------------- */

static struct cri_client *node_cri(struct kl_node_deps *nd)
{
        if (nd->cri == NULL)
                nd->cri = cri_client_new(nd->cfg->container_runtime_endpoint, 10000);
        return nd->cri;
}

/* "PLEG is not healthy: ..." (upstream's health check of the runtime
 * state), or NULL.  Before the PLEG starts: not yet successful. */
static char *pleg_health_error(struct kl_node_deps *nd)
{
        struct pleg *p = atomic_load(&nd->pleg);
        cleanup_free char *why = pleg_unhealthy(p ? pleg_last_relist_ms(p) : 0, fs_now_mono_ms());
        return why ? xasprintf("PLEG is not healthy: %s", why) : NULL;
}

/* upstream utilerrors.NewAggregate(...).Error() of the n messages (NULLs
 * skipped): one as it is, several as "[a, b]".  NULL when none.  Frees
 * them. */
static char *aggregate_errors(char **msgs, size_t n)
{
        char *out = NULL;
        size_t count = 0;
        for (size_t i = 0; i < n; i++) {
                if (msgs[i] == NULL)
                        continue;
                char *next = out ? xasprintf("%s, %s", out, msgs[i]) : xstrdup(msgs[i]);
                free(out);
                out = next;
                count++;
                free(msgs[i]);
        }
        if (count > 1) {
                char *wrapped = xasprintf("[%s]", out);
                free(out);
                out = wrapped;
        }
        return out;
}

/* Upstream setNodeReadyCondition: runtimeErrors (the last ready sync, the
 * PLEG's health, the runtime's condition) and networkErrors, aggregated. */
static bool node_runtime_ready(void *opaque, char **message)
{
        struct kl_node_deps *nd = opaque;
        runtime_state_refresh(nd->runtime_state, node_cri(nd));
        char *sync = NULL;
        char *rt = runtime_state_runtime_error(nd->runtime_state, fs_now_mono_ms(), &sync);
        char *msgs[] = {sync, pleg_health_error(nd), rt,
                        runtime_state_network_error(nd->runtime_state)};
        *message = aggregate_errors(msgs, ARRAY_SIZE(msgs));
        return *message == NULL;
}

static char *node_runtime_version(void *opaque)
{
        struct kl_node_deps *nd = opaque;
        Runtime__V1__VersionResponse *v = NULL;
        cleanup_error ck_error_t err = NULL;
        if (cri_version(node_cri(nd), &v, &err) < 0)
                return NULL; /* reported as "Unknown" */
        char *s = xasprintf("%s://%s", v->runtime_name, v->runtime_version);
        runtime__v1__version_response__free_unpacked(v, NULL);
        return s;
}

/* The device plugins' share of the node status (upstream
 * GetDevicePluginResourceCapacity). */
static void node_device_resources(void *opaque, struct node_device_resource **res, size_t *n,
                                  char ***removed, size_t *n_removed)
{
        struct kl_node_deps *deps = opaque;
        struct devicemanager_resource *dr;
        size_t nd;
        devicemanager_capacity(deps->devices, &dr, &nd, removed, n_removed);
        *res = xcalloc(nd + 1, sizeof(**res));
        for (size_t i = 0; i < nd; i++)
                (*res)[i] = (struct node_device_resource){
                    .name = xstrdup(dr[i].name),
                    .capacity = dr[i].capacity,
                    .allocatable = dr[i].allocatable,
                };
        *n = nd;
        devicemanager_capacity_free(dr, nd, NULL, 0);
}

/* upstream's image manager refreshes its image list this often */
#define NODE_IMAGES_REFRESH_MS 30000

/* The runtime's images for status.images: a copy of the list kept in nd,
 * listed again when 30 s old (upstream GetImageList returns its cache, which
 * keeps the last good list when a listing fails).  < 0: never listed. */
static int node_images(void *opaque, struct node_image **out, size_t *n)
{
        struct kl_node_deps *nd = opaque;
        int64_t now = fs_now_mono_ms();
        if (!nd->images_listed || now - nd->images_at_ms >= NODE_IMAGES_REFRESH_MS) {
                Runtime__V1__ListImagesResponse *r = NULL;
                cleanup_error ck_error_t err = NULL;
                if (cri_list_images(node_cri(nd), &r, &err) < 0) {
                        LOG_INFO(2, "Failed to list images for the node status", "err=\"%s\"",
                                 ck_error_msg(err));
                } else {
                        node_images_free(nd->images, nd->n_images);
                        nd->images = xcalloc(r->n_images + 1, sizeof(*nd->images));
                        for (size_t i = 0; i < r->n_images; i++) {
                                const Runtime__V1__Image *ci = r->images[i];
                                struct node_image *im = &nd->images[i];
                                im->id = xstrdup(ci->id);
                                im->size = (int64_t)ci->size;
                                im->names = xcalloc(ci->n_repo_digests + ci->n_repo_tags + 1,
                                                    sizeof(char *));
                                for (size_t j = 0; j < ci->n_repo_digests; j++)
                                        im->names[im->n_names++] = xstrdup(ci->repo_digests[j]);
                                for (size_t j = 0; j < ci->n_repo_tags; j++)
                                        im->names[im->n_names++] = xstrdup(ci->repo_tags[j]);
                        }
                        nd->n_images = r->n_images;
                        nd->images_listed = true;
                        runtime__v1__list_images_response__free_unpacked(r, NULL);
                }
                nd->images_at_ms = now;
        }
        if (!nd->images_listed)
                return -1;
        *out = node_images_copy(nd->images, nd->n_images);
        *n = nd->n_images;
        return 0;
}

/* The eviction manager's conditions (none until it runs). */
static unsigned node_pressure(void *opaque)
{
        struct kl_node_deps *nd = opaque;
        return atomic_load(&nd->pressure);
}

static bool node_shutting_down(void *opaque)
{
        struct kl_node_deps *nd = opaque;
        return atomic_load(&nd->shutting_down);
}

/* The node agent's options (src/node) from the configuration. */
static void node_options(struct kubelet *kl, struct node_agent_options *out)
{
        const struct kubelet_config *cfg = kl->cfg;
        struct node_agent_options no = {
            .api = kl->api_cfg,
            .rl = kl->api_rl,
            .recorder = kl->recorder,
            .node_name = cfg->node_name,
            .node_ip = kl->node_ip,
            .node_labels = &cfg->node_labels,
            .register_node = cfg->register_node,
            .status_update_ms = cfg->node_status_update_frequency_ms,
            .status_report_ms = cfg->node_status_report_frequency_ms,
            .lease_duration_s = cfg->node_lease_duration_seconds,
            .max_pods = cfg->max_pods,
            .port = cfg->port,
            .root_dir = cfg->root_dir,
            .reserved_cpu_milli = kl->reserved_cpu_milli,
            .reserved_memory = kl->reserved_memory,
            .runtime_ready = node_runtime_ready,
            .pressure = node_pressure,
            .shutting_down = node_shutting_down,
            .runtime_version = node_runtime_version,
            .device_resources = node_device_resources,
            .images = node_images,
            .max_images = cfg->node_status_max_images,
            .opaque = &kl->node,
        };
        /* upstream hardEvictionReservation: the hard memory.available and
         * nodefs.available thresholds */
        for (size_t i = 0; i < kl->eviction_cfg.n; i++) {
                const struct eviction_threshold *t = &kl->eviction_cfg.thresholds[i];
                if (t->grace_period_ms != 0)
                        continue;
                if (t->signal == EVICTION_MEMORY_AVAILABLE) {
                        no.eviction_memory_bytes = t->value.quantity;
                        no.eviction_memory_fraction = t->value.percentage;
                } else if (t->signal == EVICTION_NODEFS_AVAILABLE) {
                        no.eviction_nodefs_bytes = t->value.quantity;
                        no.eviction_nodefs_fraction = t->value.percentage;
                }
        }
        *out = no;
}

/* Registers the node and keeps its status and Lease current (src/node).
 * Started before the runtime is up: the node shows NotReady meanwhile.
 * Without an apiserver, or before its Node is read, the admission checks
 * the Node this kubelet would register (upstream initialNode). */
static int start_node_agent(struct kubelet *kl, ck_error_t *err)
{
        struct node_agent_options no;
        node_options(kl, &no);
        kl->local_node = node_local(&no);
        if (kl->api_cfg != NULL && node_agent_start(&no, &kl->node_agent, err) < 0)
                return ck_error_wrap(err, "node status");
        return 0;
}

int kubelet_cgroup_driver_from_cri(struct kubelet_config *cfg, ck_error_t *err)
{
        struct cri_client *cri = cri_client_new(cfg->container_runtime_endpoint, 10000);
        Runtime__V1__RuntimeConfigResponse *rc = NULL;
        cleanup_error ck_error_t e = NULL;
        int ret = 0;
        if (cri_runtime_config(cri, &rc, &e) < 0) {
                if (e->code == GRPC_UNIMPLEMENTED)
                        LOG_INFO(0,
                                 "CRI implementation should be updated to support RuntimeConfig. "
                                 "Falling back to using cgroupDriver from kubelet config.",
                                 "cgroupDriver=\"%s\"", cfg->cgroup_driver);
                else
                        LOG_WARN("Could not ask the container runtime for its cgroup driver; using "
                                 "cgroupDriver from kubelet config",
                                 "cgroupDriver=\"%s\" err=\"%s\"", cfg->cgroup_driver,
                                 ck_error_msg(e));
        } else if (rc->linux != NULL) {
                const char *d = NULL;
                switch (rc->linux->cgroup_driver) {
                case RUNTIME__V1__CGROUP_DRIVER__SYSTEMD:
                        d = "systemd";
                        break;
                case RUNTIME__V1__CGROUP_DRIVER__CGROUPFS:
                        d = "cgroupfs";
                        break;
                default:
                        ret = ck_error_make(err, 0, "runtime returned an unknown cgroup driver %d",
                                            (int)rc->linux->cgroup_driver);
                }
                if (d != NULL) {
                        free(cfg->cgroup_driver);
                        cfg->cgroup_driver = xstrdup(d);
                        LOG_INFO(0, "Using cgroup driver setting received from the CRI runtime",
                                 "cgroupDriver=\"%s\"", d);
                }
        }
        if (rc)
                runtime__v1__runtime_config_response__free_unpacked(rc, NULL);
        cri_client_free(cri);
        return ret;
}

/* Blocks until the runtime answers Version (upstream: the kubelet retries
 * connecting to the runtime before it starts the sync loop). */
static int wait_for_runtime(struct kubelet *kl, ck_error_t *err)
{
        struct cri_client *cri = cri_client_new(kl->cfg->container_runtime_endpoint, 10000);
        int64_t delay = 500;
        for (;;) {
                Runtime__V1__VersionResponse *v = NULL;
                cleanup_error ck_error_t e = NULL;
                if (cri_version(cri, &v, &e) == 0) {
                        LOG_INFO(0, "Container runtime initialized",
                                 "containerRuntime=\"%s\" version=\"%s\" apiVersion=\"%s\"",
                                 v->runtime_name, v->runtime_version, v->runtime_api_version);
                        free(kl->runtime_name);
                        kl->runtime_name = xstrdup(v->runtime_name);
                        runtime__v1__version_response__free_unpacked(v, NULL);
                        break;
                }
                LOG_ERROR("Container runtime not ready, retrying", "endpoint=\"%s\" err=\"%s\"",
                          kl->cfg->container_runtime_endpoint, ck_error_msg(e));
                pthread_mutex_lock(&kl->queue.lock);
                bool stop = kl->queue.head && kl->queue.head->type == KL_EV_STOP;
                pthread_mutex_unlock(&kl->queue.lock);
                if (stop) {
                        cri_client_free(cri);
                        return ck_error_make(err, 0,
                                             "stopped while waiting for the container runtime");
                }
                usleep((useconds_t)delay * 1000);
                delay = delay * 2 > 10000 ? 10000 : delay * 2;
        }
        cri_client_free(cri);
        return 0;
}

int kubelet_run(struct kubelet *kl, ck_error_t *err)
{
        const struct kubelet_config *cfg = kl->cfg;
        LOG_INFO(0, "Starting kubelet", "node=\"%s\" version=\"%s\"", cfg->node_name, CK_VERSION);
        struct kubelet_server_options so = {.cfg = cfg,
                                            .port = -1,
                                            .read_only_port = -1,
                                            .healthz_port = -1,
                                            .status = kl->status,
                                            .pool = kl->api_pool};
        kmetrics_set_node_name(cfg->node_name);
        if (kubelet_stats_provider_new(cfg, &kl->stats, err) < 0)
                return -1;
        so.stats = kl->stats;
        if (kubelet_server_start(&so, &kl->server, err) < 0)
                return ck_error_wrap(err, "kubelet server");
        if (start_node_agent(kl, err) < 0)
                return -1;
        if (wait_for_runtime(kl, err) < 0)
                return -1;
        /* upstream: after the runtime is up, to reopen the logs it rotates */
        kl->log_cri =
            (struct clm_cri){cfg->container_runtime_endpoint, cfg->runtime_request_timeout_ms};
        struct clm_options lo = {cfg->pod_logs_dir,
                                 cfg->container_log_max_size,
                                 cfg->container_log_max_files,
                                 cfg->container_log_max_workers,
                                 cfg->container_log_monitor_interval_ms,
                                 clm_cri_runtime_template};
        lo.runtime.ctx = &kl->log_cri;
        if (clm_start(&lo, &kl->log_manager, err) < 0)
                return ck_error_wrap(err, "failed to initialize container log manager");
        struct gc_loop_options go = {
            .policy = {.high_threshold_percent = cfg->image_gc_high_threshold_percent,
                       .low_threshold_percent = cfg->image_gc_low_threshold_percent,
                       .min_age_ms = cfg->image_minimum_gc_age_ms,
                       .max_age_ms = cfg->image_maximum_gc_age_ms},
            .rt = kl->rt,
            .container_limit = cfg->max_dead_containers >= 0,
            .runtime_endpoint = cfg->container_runtime_endpoint,
            .image_endpoint = cfg->image_service_endpoint,
            .runtime_timeout_ms = cfg->runtime_request_timeout_ms,
            .pod_infra_image = cfg->pod_infra_container_image,
            .node_name = cfg->node_name,
            .recorder = kl->recorder,
        };
        if (gc_loop_start(&go, &kl->gc, err) < 0)
                return ck_error_wrap(err, "garbage collection");
        struct eviction_loop_options eo = {
            .config = &kl->eviction_cfg,
            .stats = kl->stats,
            .gc = kl->gc,
            .recorder = kl->recorder,
            .node_name = cfg->node_name,
            .publish = &kl->node.pressure,
            .active_pods = active_pods,
            .pod_finished = pod_finished,
            .evict = evict_pod,
            .ctx = kl,
        };
        if (eviction_loop_start(&eo, &kl->eviction, err) < 0)
                return ck_error_wrap(err, "eviction manager");
        start_shutdown_manager(kl);

        struct prober_options po = {
            .runtime_endpoint = cfg->container_runtime_endpoint,
            .runtime_timeout_ms = cfg->runtime_request_timeout_ms,
            .n_threads = 4,
            .node_ip = kl->node_ip,
            /* Unhealthy and ProbeWarning events (NULL standalone: logged) */
            .recorder = kl->recorder,
        };
        kl->prober = prober_new(&po, on_probe_changed, &kl->queue);
        struct pleg *pleg = NULL;
        kl->pleg = (struct kl_pleg_deps){.queue = &kl->queue, .pod_cache = kl->pod_cache};
        if (pleg_start(kl->rt, cfg->container_runtime_endpoint, cfg->runtime_request_timeout_ms,
                       PLEG_RELIST_PERIOD_MS, on_pleg, &kl->pleg, &pleg, err) < 0)
                return ck_error_wrap(err, "PLEG");
        atomic_store(&kl->node.pleg, pleg);
        if (kl->api_cfg) {
                /* before the pods: their containers wait for the first list */
                if (informer_start(kl->services, kl->api_cfg, kl->api_rl, err) < 0)
                        return ck_error_wrap(err, "apiserver service informer");
                if (informer_start(kl->runtime_classes, kl->api_cfg, kl->api_rl, err) < 0)
                        return ck_error_wrap(err, "apiserver RuntimeClass informer");
                kl->sm = status_manager_start(kl->status, kl->api_pool, cfg->node_name);
                if (api_source_start(kl->api_cfg, kl->api_rl, cfg->node_name, on_source, &kl->queue,
                                     &kl->api, err) < 0)
                        return ck_error_wrap(err, "apiserver pod source");
                LOG_INFO(0, "Watching apiserver", "server=\"%s\" node=\"%s\"", kl->api_cfg->server,
                         cfg->node_name);
        }
        if (cfg->static_pod_path && *cfg->static_pod_path) {
                kl->loop.sources_expected |= 1u << POD_SOURCE_FILE;
                if (file_source_start(cfg->static_pod_path, cfg->node_name,
                                      cfg->file_check_frequency_ms, on_source, &kl->queue,
                                      &kl->files, err) < 0)
                        return ck_error_wrap(err, "static pod source `%s`", cfg->static_pod_path);
                LOG_INFO(0, "Adding static pod path", "path=\"%s\"", cfg->static_pod_path);
        }
        if (kl->loop.sources_expected == 0)
                kl->loop.sources_ready = true;
        /* the workers last: the sources, the PLEG and the prober only post
         * to the queue, and no work is submitted before the sync loop runs */
        kl->sync = (struct kl_sync_deps){
            .cfg = cfg,
            .cm = kl->cm,
            .rt = kl->rt,
            .status = kl->status,
            .sm = kl->sm,
            .prober = kl->prober,
            .allocated = kl->allocated,
            .kube = kl->kube,
            .recorder = kl->recorder,
            .mount_backoff = kl->mount_backoff,
            .runtime_state = kl->runtime_state,
            .pod_cache = kl->pod_cache,
            .runtime_name = kl->runtime_name,
            .node_ip = kl->node_ip,
            .queue = &kl->queue,
        };
        kl->workers = podworkers_new(POD_WORKER_THREADS, cfg->container_runtime_endpoint,
                                     cfg->runtime_request_timeout_ms, kl_do_work, &kl->sync);
        kl->sync.workers = kl->workers;
        sync_loop(kl);
        LOG_INFO(0, "Kubelet stopping; pods keep running", "pods=%zu", kl->loop.n_records);
        return 0;
}

void kubelet_stop(struct kubelet *kl)
{
        kl_queue_post(&kl->queue, kl_event_new(KL_EV_STOP));
}

bool kubelet_free(struct kubelet *kl)
{
        if (kl == NULL)
                return true;
        /* the eviction manager first: it reads the stats, the garbage
         * collector and the active pods, and posts to the queue */
        eviction_loop_stop(kl->eviction);
        kl->eviction = NULL;
        shutdown_loop_stop(kl->shutdown);
        kl->shutdown = NULL;
        file_source_stop(kl->files);
        api_source_stop(kl->api);
        clm_stop(kl->log_manager);
        gc_loop_stop(kl->gc);
        kl->gc = NULL;
        kl->log_manager = NULL;
        /* The workers first: a sync in flight uses the prober, the runtime
         * manager, the status store... (freeing the prober before them was a
         * use after free when SIGTERM came during a kill). */
        if (!podworkers_free(kl->workers))
                return false; /* busy workers still use the rest: the process is exiting */
        /* the node status thread reads the PLEG's health: stopped first */
        node_agent_stop(kl->node_agent);
        kl->node_agent = NULL;
        json_decref(kl->local_node);
        kl->local_node = NULL;
        pleg_stop(kl->node.pleg);
        prober_free(kl->prober);
        kubelet_server_stop(kl->server);
        kl->server = NULL;
        stats_provider_free(kl->stats); /* after the server, its user */
        kl->stats = NULL;
        eviction_config_release(&kl->eviction_cfg);
        free_pods(kl->active, kl->n_active);
        free_pods(kl->stopping, kl->n_stopping);
        kl->active = kl->stopping = NULL;
        kl->n_active = kl->n_stopping = 0;
        status_manager_stop(kl->sm);
        devicemanager_stop(kl->devices); /* after its users: workers, node status */
        cri_client_free(kl->node.cri);
        node_images_free(kl->node.images, kl->node.n_images);
        event_recorder_free(kl->recorder);
        kube_objects_rest_free(kl->kube);
        informer_free(kl->services);
        informer_free(kl->runtime_classes);
        rest_pool_free(kl->api_pool);
        rest_ratelimiter_free(kl->api_rl);
        rest_config_clear(kl->api_cfg);
        free(kl->api_cfg);
        kl_mirrors_free(kl);
        for (size_t i = 0; i < kl->loop.n_finished; i++)
                free(kl->loop.finished[i].uid);
        free(kl->loop.finished);
        for (struct kl_event *ev = kl->queue.head, *next; ev; ev = next) {
                next = ev->next;
                kl_event_free(ev);
        }
        for (size_t i = 0; i < kl->loop.n_records; i++) {
                pod_unref(kl->loop.records[i].pod);
                kl_resize_record_free(&kl->loop.records[i]);
                free(kl->loop.records[i].evict_message);
        }
        free(kl->loop.records);
        for (size_t i = 0; i < kl->loop.n_pending_resizes; i++)
                free(kl->loop.pending_resizes[i]);
        free(kl->loop.pending_resizes);
        runtime_uids_free(kl->loop.runtime_uids, kl->loop.n_runtime_uids);
        kuberuntime_free(kl->rt);
        alloc_state_free(kl->allocated);
        alloc_state_free(kl->actuated);
        cm_free(kl->cm);
        sysctl_allowlist_free(kl->sysctls);
        status_store_free(kl->status);
        pod_cache_free(kl->pod_cache);
        backoff_free(kl->mount_backoff);
        free(kl->runtime_name);
        free(kl->node_ip);
        runtime_state_free(kl->runtime_state);
        userns_manager_free(kl->userns);
        pthread_mutex_destroy(&kl->queue.lock);
        pthread_mutex_destroy(&kl->active_lock);
        pthread_cond_destroy(&kl->queue.cond);
        free(kl);
        return true;
}
