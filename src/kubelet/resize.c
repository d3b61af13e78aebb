/* SPDX-License-Identifier: Apache-2.0 */
/*
 * In-place pod resize on the sync loop's side (upstream
 * pkg/kubelet/allocation/allocation_manager.go: AddPod,
 * handlePodResourcesResize, the pending resize queue): a pod's spec asks
 * for new resources; the kubelet admits them (they fit the node and the
 * other pods' allocations), defers them (they do not fit now) or finds them
 * infeasible (never on this node), and records the allocation.  Each
 * record's `alloc` is the pod the workers sync: the spec with the
 * allocated resources.  The workers apply it (kuberuntime/resize.c) and
 * report PodResizeInProgress.
 *
 * Sync loop thread only, except kl_resize_message (any thread).
 */
#include "allocation/allocation.h"
#include "allocation/state.h"
#include "kubelet/kubelet_internal.h"
#include "kubelet/resize.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define RESIZE_RETRY_FIRST_MS 30000 /* upstream initialRetryDelay */
#define RESIZE_RETRY_MS 180000      /* upstream retryDelay */

/* Go's json.Marshal of a ResourceList: keys sorted, quantities as text. */
static json_t *sorted_list(const json_t *l)
{
        const char *keys[16];
        size_t n = 0;
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)l, k, v)
        {
                if (n < 16)
                        keys[n++] = k;
        }
        for (size_t i = 1; i < n; i++)
                for (size_t j = i; j > 0 && strcmp(keys[j - 1], keys[j]) > 0; j--) {
                        const char *t = keys[j];
                        keys[j] = keys[j - 1];
                        keys[j - 1] = t;
                }
        json_t *out = json_object();
        for (size_t i = 0; i < n; i++)
                json_object_set(out, keys[i], json_object_get(l, keys[i]));
        return out;
}

/* upstream containerAllocation: {"name", "resources": {"limits", "requests"}} */
static json_t *allocation_of(const json_t *c)
{
        json_t *res = json_object_get(c, "resources");
        json_t *r = json_object();
        static const char *const lists[] = {"limits", "requests", "claims"};
        for (size_t i = 0; i < 3; i++) {
                json_t *l = json_object_get(res, lists[i]);
                if (json_is_object(l) && json_object_size(l) > 0)
                        json_object_set_new(r, lists[i], sorted_list(l));
                else if (json_is_array(l) && json_array_size(l) > 0)
                        json_object_set(r, lists[i], l);
        }
        return json_pack("{s:O, s:o}", "name", json_object_get(c, "name"), "resources", r);
}

char *kl_resize_message(const struct pod *pod, int64_t generation, const char *error,
                        const char *prefix)
{
        json_t *summary = json_object();
        static const char *const lists[] = {"initContainers", "containers"};
        for (size_t l = 0; l < 2; l++) {
                json_t *arr = json_object_get(json_object_get(pod->raw, "spec"), lists[l]);
                if (json_array_size(arr) == 0)
                        continue;
                json_t *out = json_array();
                size_t i;
                json_t *c;
                json_array_foreach(arr, i, c)
                {
                        json_array_append_new(out, allocation_of(c));
                }
                json_object_set_new(summary, lists[l], out);
        }
        json_object_set_new(summary, "generation", json_integer(generation));
        if (error != NULL && error[0] != '\0')
                json_object_set_new(summary, "error", json_string(error));
        char *text = json_dumps(summary, JSON_COMPACT);
        json_decref(summary);
        char *msg = xasprintf("%s: %s", prefix, text ? text : "");
        free(text);
        return msg;
}

/* ---- the pending queue ---------------------------------------------- */

static bool pending_has(const struct kubelet *kl, const char *uid)
{
        for (size_t i = 0; i < kl->loop.n_pending_resizes; i++)
                if (strcmp(kl->loop.pending_resizes[i], uid) == 0)
                        return true;
        return false;
}

static void pending_push(struct kubelet *kl, const char *uid)
{
        if (pending_has(kl, uid))
                return;
        /* the periodic retry runs while anything waits (upstream's ticker) */
        if (kl->loop.n_pending_resizes == 0 && kl->loop.next_resize_retry_ms == 0)
                kl->loop.next_resize_retry_ms = fs_now_mono_ms() + RESIZE_RETRY_FIRST_MS;
        kl->loop.pending_resizes =
            xrealloc(kl->loop.pending_resizes, (kl->loop.n_pending_resizes + 1) * sizeof(char *));
        kl->loop.pending_resizes[kl->loop.n_pending_resizes++] = xstrdup(uid);
}

static void pending_drop(struct kubelet *kl, size_t i)
{
        free(kl->loop.pending_resizes[i]);
        memmove(&kl->loop.pending_resizes[i], &kl->loop.pending_resizes[i + 1],
                (kl->loop.n_pending_resizes - i - 1) * sizeof(char *));
        kl->loop.n_pending_resizes--;
}

static struct pod_record *find_record(struct kubelet *kl, const char *uid)
{
        for (size_t i = 0; i < kl->loop.n_records; i++)
                if (strcmp(kl->loop.records[i].pod->uid, uid) == 0)
                        return &kl->loop.records[i];
        return NULL;
}

static void sort_pending(struct kubelet *kl)
{
        for (size_t i = 1; i < kl->loop.n_pending_resizes; i++)
                for (size_t j = i; j > 0; j--) {
                        struct pod_record *a = find_record(kl, kl->loop.pending_resizes[j - 1]);
                        struct pod_record *b = find_record(kl, kl->loop.pending_resizes[j]);
                        if (a == NULL || b == NULL)
                                break;
                        struct resize_candidate ca = {a->pod, a->alloc, a->resize_pending_since_ns};
                        struct resize_candidate cb = {b->pod, b->alloc, b->resize_pending_since_ns};
                        if (resize_compare(&ca, &cb) <= 0)
                                break;
                        char *t = kl->loop.pending_resizes[j];
                        kl->loop.pending_resizes[j] = kl->loop.pending_resizes[j - 1];
                        kl->loop.pending_resizes[j - 1] = t;
                }
}

/* ---- decisions -------------------------------------------------------- */

/* The pod's allocation in the checkpoint (a new reference) or NULL. */
static json_t *allocation(struct kubelet *kl, const char *uid)
{
        return kl->allocated ? alloc_state_get_pod(kl->allocated, uid) : NULL;
}

/* r->alloc = r->pod with the allocated resources (alloc NULL: the spec's).
 * Should that fail (a pod that decoded decodes again), the previous alloc
 * stays, else the spec: never resources nobody admitted once the pod runs. */
static void set_alloc_pod(struct pod_record *r, const json_t *alloc)
{
        struct pod *p = NULL;
        cleanup_error ck_error_t err = NULL;
        if (alloc_update_pod(r->pod, alloc, &p, &err) < 0) {
                LOG_ERROR("Failed to apply the pod's allocation, keeping the previous one",
                          "pod=\"%s\" err=\"%s\"", pod_full_name(r->pod), ck_error_msg(err));
                if (r->alloc == NULL)
                        r->alloc = pod_ref(r->pod);
                return;
        }
        pod_unref(r->alloc);
        r->alloc = p;
}

/* The other pods that hold resources on the node, as allocated, and what
 * their containers were given (actual[i], new references or NULL). */
static size_t active_allocated(struct kubelet *kl, const struct pod_record *r, struct pod ***out,
                               json_t ***actual)
{
        size_t cap = kl->loop.n_records ? kl->loop.n_records : 1;
        struct pod **active = xcalloc(cap, sizeof(*active));
        json_t **act = xcalloc(cap, sizeof(*act));
        size_t n = 0;
        for (size_t i = 0; i < kl->loop.n_records; i++) {
                struct pod_record *o = &kl->loop.records[i];
                if (o == r || !o->admitted || o->rejected || o->terminal || o->deleting)
                        continue;
                act[n] = kl->actuated ? alloc_state_get_pod(kl->actuated, o->pod->uid) : NULL;
                active[n++] = o->alloc ? o->alloc : o->pod;
        }
        *out = active;
        *actual = act;
        return n;
}

/* Sets PodResizePending; true when the condition the status shows changed
 * (its reason, generation or message: a sync must report it). */
static bool set_pending(struct kubelet *kl, struct pod_record *r, const char *reason,
                        const char *message)
{
        const char *old = r->resize_pending_reason;
        if (old == NULL || strcmp(old, reason) != 0)
                r->resize_pending_since_ns = fs_now_real_ns();
        r->resize_pending_reason = reason;
        bool message_changed =
            r->resize_pending_message == NULL || strcmp(r->resize_pending_message, message) != 0;
        free(r->resize_pending_message);
        r->resize_pending_message = xstrdup(message);
        bool changed = status_store_set_resize_pending(kl->status, r->pod->uid, reason, message,
                                                       r->pod->generation);
        if (!changed)
                return message_changed;
        LOG_INFO(2, "Pod resize pending", "pod=\"%s\" reason=\"%s\" message=\"%s\"",
                 pod_full_name(r->pod), reason, message);
        cleanup_free char *prefix = xasprintf("Pod resize %s", reason);
        cleanup_free char *msg = kl_resize_message(r->pod, r->pod->generation, message, prefix);
        event_emit_pod(kl->recorder, r->pod, NULL, EVENT_WARNING,
                       strcmp(reason, RESIZE_REASON_DEFERRED) == 0 ? "ResizeDeferred"
                                                                   : "ResizeInfeasible",
                       "%s", msg);
        return true;
}

static void clear_pending(struct kubelet *kl, struct pod_record *r)
{
        r->resize_pending_reason = NULL;
        r->resize_pending_since_ns = 0;
        free(r->resize_pending_message);
        r->resize_pending_message = NULL;
        status_store_clear_resize_pending(kl->status, r->pod->uid);
}

/* upstream handlePodResourcesResize for one record; *changed: what the
 * pod's status shows moved (a sync must report it). */
static enum resize_outcome handle_resize(struct kubelet *kl, struct pod_record *r, bool *changed)
{
        *changed = false;
        cleanup_json json_t *alloc = allocation(kl, r->pod->uid);
        struct cm_node_resources node;
        cm_node_resources(kl->cm, &node);
        cleanup_json json_t *node_obj = kl_admission_node(kl, NULL);
        size_t n_native = 0;
        struct resource_count *native = kl_node_native(node_obj, &n_native);
        struct admission_node an = {
            .name = kl->cfg->node_name,
            .labels = json_object_get(json_object_get(node_obj, "metadata"), "labels"),
            .taints = json_object_get(json_object_get(node_obj, "spec"), "taints"),
            .allocatable_cpu_milli = node.allocatable_cpu_milli,
            .allocatable_memory = node.allocatable_memory,
            .max_pods = kl->cfg->max_pods,
            .sysctls = kl->sysctls,
            .apparmor_enabled = kl->apparmor_enabled,
            .native = native,
            .n_native = n_native,
        };
        struct pod **others = NULL;
        json_t **actual = NULL;
        size_t n = active_allocated(kl, r, &others, &actual);
        struct resize_decision d;
        resize_decide(r->pod, alloc, others, (const json_t *const *)actual, n, &an, &d);
        kl_resource_counts_free(native, n_native);
        for (size_t i = 0; i < n; i++)
                json_decref(actual[i]);
        free(actual);
        free(others);
        switch (d.outcome) {
        case RESIZE_NONE:
                *changed = r->resize_pending_reason != NULL;
                clear_pending(kl, r);
                return RESIZE_NONE;
        case RESIZE_DEFERRED:
        case RESIZE_INFEASIBLE:
                *changed = set_pending(kl, r, d.reason, d.message);
                return d.outcome;
        case RESIZE_ALLOCATED:
                break;
        }
        cleanup_json json_t *want = alloc_from_pod(r->pod);
        cleanup_error ck_error_t err = NULL;
        if (alloc_state_set_pod(kl->allocated, r->pod->uid, want, &err) < 0) {
                /* nothing changed (the state rolled back): tried again */
                LOG_ERROR("Failed to record the pod's allocation, resize deferred",
                          "pod=\"%s\" err=\"%s\"", pod_full_name(r->pod), ck_error_msg(err));
                return RESIZE_DEFERRED;
        }
        set_alloc_pod(r, want);
        clear_pending(kl, r);
        /* a new generation of the resize starts: clear, then set */
        status_store_clear_resize_in_progress(kl->status, r->pod->uid, NULL);
        status_store_set_resize_in_progress(kl->status, r->pod->uid, "", "", r->pod->generation,
                                            NULL);
        *changed = true;
        LOG_INFO(2, "Pod resize allocated", "pod=\"%s\" generation=%" PRId64, pod_full_name(r->pod),
                 r->pod->generation);
        cleanup_free char *msg =
            kl_resize_message(r->alloc, r->pod->generation, NULL, "Pod resize started");
        event_emit_pod(kl->recorder, r->pod, NULL, EVENT_NORMAL, "ResizeStarted", "%s", msg);
        return RESIZE_ALLOCATED;
}

void kl_resize_retry(struct kubelet *kl, const char *trigger)
{
        if (kl->loop.n_pending_resizes == 0)
                return;
        /* upstream: nothing is decided before every source has delivered
         * (the other pods are not all known yet) */
        if (!kl->loop.sources_ready) {
                kl->loop.next_resize_retry_ms = fs_now_mono_ms() + RESIZE_RETRY_FIRST_MS;
                return;
        }
        kl->loop.next_resize_retry_ms = fs_now_mono_ms() + RESIZE_RETRY_MS;
        sort_pending(kl);
        for (size_t i = 0; i < kl->loop.n_pending_resizes;) {
                struct pod_record *r = find_record(kl, kl->loop.pending_resizes[i]);
                if (r == NULL || r->deleting || r->terminal || r->rejected) {
                        pending_drop(kl, i);
                        continue;
                }
                bool changed;
                enum resize_outcome o = handle_resize(kl, r, &changed);
                if (o == RESIZE_DEFERRED)
                        i++;
                else
                        pending_drop(kl, i);
                LOG_INFO(4, "Pending resize evaluated", "pod=\"%s\" trigger=\"%s\" outcome=%d",
                         pod_full_name(r->pod), trigger, (int)o);
                if (changed)
                        kl_sync_record(kl, r, "update");
        }
}

void kl_resize_pod_added(struct kubelet *kl, struct pod_record *r)
{
        cleanup_json json_t *alloc = allocation(kl, r->pod->uid);
        /* a restarted kubelet: what it had admitted */
        set_alloc_pod(r, alloc);
        if (r->pod->source == POD_SOURCE_API)
                status_store_backfill_resize_conditions(kl->status, r->pod->uid,
                                                        json_object_get(r->pod->raw, "status"));
}

void kl_resize_admitted(struct kubelet *kl, struct pod_record *r)
{
        if (kl->allocated == NULL || r->rejected)
                return;
        cleanup_json json_t *alloc = allocation(kl, r->pod->uid);
        if (alloc == NULL) {
                cleanup_json json_t *want = alloc_from_pod(r->alloc);
                cleanup_error ck_error_t err = NULL;
                if (alloc_state_set_pod(kl->allocated, r->pod->uid, want, &err) < 0)
                        LOG_ERROR("Failed to record the pod's allocation", "pod=\"%s\" err=\"%s\"",
                                  pod_full_name(r->pod), ck_error_msg(err));
                return;
        }
        if (!alloc_pod_matches(r->pod, alloc))
                pending_push(kl, r->pod->uid);
}

void kl_resize_pod_updated(struct kubelet *kl, struct pod_record *r, bool spec_changed)
{
        cleanup_json json_t *alloc = allocation(kl, r->pod->uid);
        set_alloc_pod(r, alloc);
        if (alloc == NULL || !spec_changed || !r->admitted || r->rejected)
                return;
        if (alloc_pod_matches(r->pod, alloc)) {
                clear_pending(kl, r); /* the resize was taken back */
                return;
        }
        pending_push(kl, r->pod->uid);
        kl_resize_retry(kl, "pod_updated");
}

void kl_resize_pod_removed(struct kubelet *kl, const char *uid)
{
        if (kl->allocated != NULL)
                alloc_state_remove_pod(kl->allocated, uid);
        if (kl->actuated != NULL)
                alloc_state_remove_pod(kl->actuated, uid);
        for (size_t i = 0; i < kl->loop.n_pending_resizes; i++)
                if (strcmp(kl->loop.pending_resizes[i], uid) == 0) {
                        pending_drop(kl, i);
                        break;
                }
        if (kl->loop.n_pending_resizes > 0)
                kl_resize_retry(kl, "pods_removed");
}

int64_t kl_resize_next_retry_ms(const struct kubelet *kl)
{
        return kl->loop.n_pending_resizes > 0 ? kl->loop.next_resize_retry_ms : 0;
}

void kl_resize_record_free(struct pod_record *r)
{
        pod_unref(r->alloc);
        r->alloc = NULL;
        free(r->resize_pending_message);
        r->resize_pending_message = NULL;
}
