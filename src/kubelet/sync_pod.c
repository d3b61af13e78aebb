/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The worker side of the kubelet (upstream SyncPod, SyncTerminatingPod,
 * SyncTerminatedPod in pkg/kubelet/kubelet.go): straight-line blocking code
 * on a pod worker thread, with that thread's own CRI client.  The result goes
 * back to the sync loop as a KL_EV_WORK_DONE event.
 */
#include "allocation/allocation.h"
#include "kubelet/kubelet_internal.h"
#include "metrics/kubelet_metrics.h"
#include "status/generate.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "volume/volume.h"

#include <string.h>
#include <time.h>

/* upstream backOffOnTransientErrorPeriod: a sync that failed only because
 * the network is not ready is retried this soon */
#define NETWORK_NOT_READY_RETRY_MS 1000
/* a create refused because the runtime still holds the name for an earlier
 * call of the same create (containerd's "name ... is reserved for ...") */
#define NAME_RESERVED_RETRY_MS 1000

static void post_done(struct kl_sync_deps *d, const struct pod_work *w, bool ok, bool terminal,
                      int64_t next_retry_ms)
{
        struct kl_event *ev = kl_event_new(KL_EV_WORK_DONE);
        ev->uid = xstrdup(w->uid);
        ev->work_kind = w->kind;
        ev->ok = ok;
        ev->terminal = terminal;
        ev->next_retry_ms = next_retry_ms;
        kl_queue_post(d->queue, ev);
}

/* The pod's last status: ours, else (a pod from the apiserver this
 * kubelet has not synced since it started) the apiserver's, so that a
 * restart keeps startTime and the conditions' transition times, as
 * upstream's status manager does.  A new reference, or NULL. */
static json_t *last_status(struct kl_sync_deps *d, const struct pod *pod)
{
        json_t *st = status_store_get_status(d->status, pod->uid);
        if (st == NULL && pod->source == POD_SOURCE_API)
                st = json_incref(json_object_get(pod->raw, "status"));
        return st;
}

/* What a status computation reads besides the pod and the runtime: the
 * actuated resources and the resize conditions (references, released by
 * status_extras_release). */
struct status_extras {
        json_t *actuated, *resize;
};

static void status_extras_release(struct status_extras *x)
{
        json_decref(x->actuated);
        json_decref(x->resize);
}

/* What every status computation of pod starts from; old is its last status
 * (last_status, borrowed); x is filled and borrowed by the result. */
static struct status_input status_input_of(const struct kl_sync_deps *d, const struct pod *pod,
                                           const struct runtime_pod_status *rs, const json_t *old,
                                           bool network_ready, struct status_extras *x)
{
        x->actuated = kuberuntime_actuated_resources(d->rt, pod->uid);
        x->resize = status_store_resize_conditions(d->status, pod->uid);
        return (struct status_input){
            .pod = pod,
            .runtime = rs,
            .old_status = old,
            .runtime_name = d->runtime_name,
            .host_ip = d->node_ip,
            .network_ready = network_ready,
            .actuated = x->actuated,
            .resize_conditions = x->resize,
            .now_ns = fs_now_real_ns(),
        };
}

/* Generates and stores the API status; returns its phase (static string). */
static const char *update_status_failed(struct kl_sync_deps *d, const struct pod *pod,
                                        const struct runtime_pod_status *rs,
                                        const struct kuberuntime_sync_result *sync,
                                        bool network_ready, const char *fail_reason,
                                        const char *fail_message, const char *disruption)
{
        cleanup_json json_t *old = last_status(d, pod);
        struct kv_list readiness = {0}, startup = {0};
        prober_results(d->prober, pod->uid, &readiness, &startup);
        struct status_extras x;
        struct status_input in = status_input_of(d, pod, rs, old, network_ready, &x);
        in.sync = sync;
        in.readiness = &readiness;
        in.startup = &startup;
        in.reject_reason = fail_reason;
        in.reject_message = fail_message;
        in.terminal_failed = fail_reason != NULL;
        in.disruption_message = disruption;
        const char *phase = status_phase(&in);
        status_store_set_status(d->status, pod->uid, status_generate(&in));
        status_manager_notify(d->sm);
        kv_list_release(&readiness);
        kv_list_release(&startup);
        status_extras_release(&x);
        return phase;
}

static const char *update_status(struct kl_sync_deps *d, const struct pod *pod,
                                 const struct runtime_pod_status *rs,
                                 const struct kuberuntime_sync_result *sync, bool network_ready)
{
        return update_status_failed(d, pod, rs, sync, network_ready, NULL, NULL, NULL);
}

/* The phase the pod has now (upstream getPhase), without storing a status. */
static const char *current_phase(struct kl_sync_deps *d, const struct pod *pod,
                                 const struct runtime_pod_status *rs, bool network_ready)
{
        cleanup_json json_t *old = last_status(d, pod);
        struct status_extras x;
        struct status_input in = status_input_of(d, pod, rs, old, network_ready, &x);
        const char *phase = status_phase(&in);
        status_extras_release(&x);
        return phase;
}

/* The pod's status.startTime (realtime ns), 0 if it has none yet. */
static int64_t pod_start_time_ns(struct kl_sync_deps *d, const struct pod *pod)
{
        cleanup_json json_t *st = last_status(d, pod);
        const char *t = json_string_value(json_object_get(st, "startTime"));
        struct tm tm = {0};
        if (t == NULL || strptime(t, "%Y-%m-%dT%H:%M:%SZ", &tm) == NULL)
                return 0;
        return (int64_t)timegm(&tm) * 1000000000LL;
}

/* activeDeadlineSeconds (upstream pkg/kubelet/active_deadline.go): true if
 * the pod has been active longer than its deadline; else, when it has one,
 * *recheck_ms is when to look again (CLOCK_MONOTONIC). */
static bool past_active_deadline(struct kl_sync_deps *d, const struct pod *pod, int64_t *recheck_ms)
{
        if (!pod->has_active_deadline_seconds)
                return false;
        int64_t start = pod_start_time_ns(d, pod);
        if (start == 0)
                return false;
        int64_t left_ms =
            (start + pod->active_deadline_seconds * 1000000000LL - fs_now_real_ns()) / 1000000;
        if (left_ms <= 0)
                return true;
        *recheck_ms = fs_now_mono_ms() + left_ms + 1;
        return false;
}

/* The status of a pod whose containers were just stopped (upstream
 * SyncTerminatingPod's status from the stopped pod, then TerminatePod):
 * containers terminated, phase Succeeded or Failed; fail_reason (NULL:
 * none) keeps a Failed status's reason (DeadlineExceeded).  A pod deleted
 * through the apiserver has it written at once (push), before the kubelet
 * deletes it for good, as upstream's status manager waits for a terminal
 * phase (canBeDeleted).  Best effort: a failure is logged and the pod stops
 * all the same. */
static void write_stopped_status(struct kl_sync_deps *d, struct cri_client *cri,
                                 const struct pod *pod, const char *fail_reason,
                                 const char *fail_message, bool push)
{
        /* stopped: a terminal phase may be published from now on */
        status_store_set_stopped(d->status, pod->uid);
        struct runtime_pod_status *rs = NULL;
        cleanup_error ck_error_t err = NULL;
        if (kuberuntime_get_pod_status(d->rt, cri, pod->uid, pod->name, pod->namespace, &rs, &err) <
            0) {
                LOG_WARN("Failed to read the stopped pod's status", "pod=\"%s\" err=\"%s\"",
                         pod_full_name(pod), ck_error_msg(err));
                return;
        }
        cleanup_json json_t *old = last_status(d, pod);
        struct status_extras x;
        struct status_input in = status_input_of(d, pod, rs, old, true, &x);
        in.pod_terminal = true;
        in.reject_reason = fail_reason;
        in.reject_message = fail_message;
        in.terminal_failed = fail_reason != NULL;
        json_t *st = status_generate(&in);
        status_terminate(pod, st);
        status_store_set_status(d->status, pod->uid, st);
        status_extras_release(&x);
        runtime_pod_status_free(rs);
        if (push)
                status_manager_sync_pod(d->sm, pod->uid);
        else
                status_manager_notify(d->sm);
}

/* Kill everything of a pod and remove it: containers, sandboxes, logs,
 * cgroup, directories (unless the pod is to start again: then only
 * stopped).  pod may be NULL (an orphan). */
static int kill_and_remove(struct kl_sync_deps *d, struct cri_client *cri, const struct pod *pod,
                           const char *uid, const char *name, const char *ns, int64_t grace_s,
                           ck_error_t *err)
{
        struct runtime_pod_status *rs = NULL;
        if (kuberuntime_get_pod_status(d->rt, cri, uid, name, ns, &rs, err) < 0)
                return ck_error_wrap(err, "get pod status");
        int r = kuberuntime_kill_pod(d->rt, cri, pod, rs, grace_s, err);
        if (r == 0 && pod != NULL && pod->source == POD_SOURCE_API && pod->deletion_timestamp)
                write_stopped_status(d, cri, pod, NULL, NULL, true);
        /* a static pod back in its source starts again: what ran is its
         * history, removed later as dead containers are */
        if (r == 0 && pod != NULL && podworkers_keep(d->workers, uid)) {
                LOG_INFO(2, "Pod stopped, kept for its restart", "pod=\"%s\" podUID=\"%s\"",
                         pod_full_name(pod), uid);
                runtime_pod_status_free(rs);
                return 0;
        }
        if (r == 0)
                r = kuberuntime_remove_pod(d->rt, cri, rs, err);
        runtime_pod_status_free(rs);
        if (r < 0)
                return -1;
        if (cm_pod_cgroup_destroy(d->cm, uid, err) < 0)
                return ck_error_wrap(err, "remove pod cgroup");
        if (volume_cleanup_pod(d->cfg->root_dir, uid, err) < 0)
                return ck_error_wrap(err, "remove pod directory");
        return 0;
}

/* The phase of the status this kubelet stored for uid, into out ("" if
 * none). */
static void stored_phase(struct kl_sync_deps *d, const char *uid, char *out, size_t size)
{
        cleanup_json json_t *st = status_store_get_status(d->status, uid);
        const char *phase = json_string_value(json_object_get(st, "phase"));
        snprintf(out, size, "%s", phase ? phase : "");
}

/* kubelet_pod_start_duration_seconds: the time since the kubelet first
 * saw the pod (0: unknown, nothing observed). */
static void observe_pod_start(int64_t first_seen_us)
{
        if (first_seen_us > 0)
                kmetrics_pod_start((double)(fs_now_mono_us() - first_seen_us) / 1e6);
}

/* Frees a NULL-terminated array of names from the prober (NULL: nothing). */
static void free_names(char **names)
{
        for (size_t i = 0; names && names[i]; i++)
                free(names[i]);
        free(names);
}

/* PodResizeInProgress after the runtime's sync (upstream SyncPod's
 * IsPodResizeInProgress check and its ResizePodInPlace result): set while a
 * running container lacks its allocated resources, with reason Error when
 * the resize failed; cleared (ResizeCompleted) once they all have them, as
 * long as pod still has the latest allocation: a resize admitted while this
 * sync ran is the next sync's. */
static void update_resize_condition(struct kl_sync_deps *d, const struct pod *pod,
                                    const struct runtime_pod_status *rs,
                                    const struct kuberuntime_sync_result *result)
{
        int64_t generation;
        if (result->resize_error != NULL) {
                if (status_store_set_resize_in_progress(d->status, pod->uid, "Error",
                                                        result->resize_error, pod->generation,
                                                        &generation)) {
                        cleanup_free char *msg = kl_resize_message(
                            pod, generation, result->resize_error, "Pod resize error");
                        event_emit_pod(d->recorder, pod, NULL, EVENT_WARNING, "ResizeError", "%s",
                                       msg);
                }
                return;
        }
        if (kuberuntime_resize_in_progress(d->rt, pod, rs)) {
                status_store_set_resize_in_progress(d->status, pod->uid, "", "", pod->generation,
                                                    NULL);
                return;
        }
        cleanup_json json_t *latest = alloc_state_get_pod(d->allocated, pod->uid);
        if (latest != NULL && !alloc_pod_matches(pod, latest))
                return;
        if (status_store_clear_resize_in_progress(d->status, pod->uid, &generation)) {
                LOG_INFO(2, "Pod resize completed", "pod=\"%s\" generation=%lld",
                         pod_full_name(pod), (long long)generation);
                cleanup_free char *msg =
                    kl_resize_message(pod, generation, NULL, "Pod resize completed");
                event_emit_pod(d->recorder, pod, NULL, EVENT_NORMAL, "ResizeCompleted", "%s", msg);
        }
}

/* The sync of a pod that should run (steps of upstream SyncPod).
 * first_seen_us: when the kubelet first saw it (CLOCK_MONOTONIC us). */
static int sync_pod(struct kl_sync_deps *d, struct cri_client *cri, struct pod *pod,
                    int64_t first_seen_us, const char *evict_reason, const char *evict,
                    int64_t evict_grace_s, bool evict_disruption, bool *terminal,
                    int64_t *next_retry_ms, ck_error_t *err)
{
        struct runtime_pod_status *rs = NULL;
        struct kuberuntime_sync_result result = {0};
        struct kv_list volume_paths = {0};
        cleanup_free char *cgroup_parent = NULL;
        cleanup_free char *net_msg = NULL;
        char **liveness_failed = NULL, **startup_failed = NULL, **started = NULL;
        int ret = -1;

        /* what the last sync left, unless the pod changed in the runtime
         * since (upstream reads its pod cache) */
        uint64_t gen = 0;
        rs = pod_cache_take(d->pod_cache, pod->uid, fs_now_mono_ms(), &gen);
        if (rs == NULL && kuberuntime_get_pod_status(d->rt, cri, pod->uid, pod->name,
                                                     pod->namespace, &rs, err) < 0) {
                ck_error_wrap(err, "get pod status");
                goto out;
        }
        /* A pod that completed for its restartPolicy is stopped, not synced
         * again (upstream: terminal phase -> SyncTerminatingPod). */
        runtime_state_refresh(d->runtime_state, cri);
        net_msg = runtime_state_network_error(d->runtime_state);
        bool net_ready = net_msg == NULL;
        /* Only the phase here: the stored status keeps the waiting reasons
         * of the last sync (CrashLoopBackOff, PostStartHookError...) until
         * this sync replaces them, as upstream's reason cache does. */
        const char *phase = current_phase(d, pod, rs, net_ready);
        bool first_status = status_store_version(d->status, pod->uid) == 0;
        if (first_status)
                update_status(d, pod, rs, NULL, net_ready); /* a first, Pending status */
        if (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0) {
                /* upstream determinePodResizeStatus: a terminal pod has none */
                status_store_clear_resize_pending(d->status, pod->uid);
                status_store_clear_resize_in_progress(d->status, pod->uid, NULL);
                update_status(d, pod, rs, NULL, net_ready);
                LOG_INFO(2, "Pod is terminal, stopping it", "pod=\"%s\" phase=\"%s\"",
                         pod_full_name(pod), phase);
                prober_remove_pod(d->prober, pod->uid);
                if (kuberuntime_kill_pod(d->rt, cri, pod, rs, -1, err) < 0) {
                        ck_error_wrap(err, "stop terminal pod");
                        goto out;
                }
                /* what was stopped for it (sidecars) shows so */
                write_stopped_status(d, cri, pod, NULL, NULL, false);
                *terminal = true;
                ret = 0;
                goto out;
        }
        /* upstream's SyncPod observes the start duration (past its return
         * for terminal pods) when the status manager has no status of the
         * pod yet, as here, and again at Pending -> Running, below: a pod
         * counts twice, kept as upstream has it */
        if (first_status)
                observe_pod_start(first_seen_us);
        if (evict != NULL) {
                /* upstream's eviction and node shutdown managers
                 * (killPodFunc with their status functions): Failed, reason
                 * Evicted or Terminated, a DisruptionTarget condition; the
                 * status first, then the kill */
                LOG_INFO(0, "Evicting pod",
                         "pod=\"%s\" gracePeriod=%lld reason=\"%s\" message=\"%s\"",
                         pod_full_name(pod), (long long)evict_grace_s, evict_reason, evict);
                const char *disruption = NULL;
                if (evict_disruption)
                        disruption = strcmp(evict_reason, KL_PREEMPT_REASON) == 0
                                         ? KL_PREEMPT_DISRUPTION
                                         : evict;
                update_status_failed(d, pod, rs, NULL, net_ready, evict_reason, evict, disruption);
                prober_remove_pod(d->prober, pod->uid);
                if (kuberuntime_kill_pod(d->rt, cri, pod, rs, evict_grace_s, err) < 0) {
                        ck_error_wrap(err, "stop evicted pod");
                        goto out;
                }
                write_stopped_status(d, cri, pod, evict_reason, evict, false);
                /* its volumes go with it (upstream tears them down once the
                 * pod is terminated): an emptyDir filling the disk is freed */
                if (volume_cleanup_pod(d->cfg->root_dir, pod->uid, err) < 0) {
                        ck_error_wrap(err, "remove the evicted pod's volumes");
                        goto out;
                }
                *terminal = true;
                ret = 0;
                goto out;
        }
        int64_t deadline_check_ms = 0;
        if (past_active_deadline(d, pod, &deadline_check_ms)) {
                LOG_INFO(0, "Pod was active on the node longer than the specified deadline",
                         "pod=\"%s\" activeDeadlineSeconds=%lld", pod_full_name(pod),
                         (long long)pod->active_deadline_seconds);
                /* The status says Failed at once; stopping the containers
                 * may then take their grace period (as upstream). */
                update_status_failed(d, pod, rs, NULL, net_ready, "DeadlineExceeded",
                                     "Pod was active on the node longer than the specified "
                                     "deadline",
                                     NULL);
                prober_remove_pod(d->prober, pod->uid);
                if (kuberuntime_kill_pod(d->rt, cri, pod, rs, -1, err) < 0) {
                        ck_error_wrap(err, "stop pod past its active deadline");
                        goto out;
                }
                write_stopped_status(d, cri, pod, "DeadlineExceeded",
                                     "Pod was active on the node longer than the specified "
                                     "deadline",
                                     false);
                *terminal = true;
                ret = 0;
                goto out;
        }
        /* d: the network must be ready, unless the pod uses the host's. */
        if (!net_ready && !pod->host_network) {
                /* upstream syncPod's NetworkNotReady event */
                event_emit_pod(d->recorder, pod, NULL, EVENT_WARNING, "NetworkNotReady",
                               "network is not ready: %s", net_msg);
                ck_error_make(err, 0, "network is not ready: %s", net_msg);
                /* upstream completeWork: a transient error, retried after
                 * backOffOnTransientErrorPeriod, not the 10 s back-off (the
                 * network state is unknown until the first runtime Status
                 * after a start) */
                *next_retry_ms = fs_now_mono_ms() + NETWORK_NOT_READY_RETRY_MS;
                goto out;
        }
        /* e: the pod cgroup, parent of the sandbox. */
        if (cm_pod_cgroup_ensure(d->cm, pod, &cgroup_parent, err) < 0) {
                ck_error_wrap(err, "create pod cgroup");
                goto out;
        }
        /* f, g: directories and volumes. */
        if (volume_make_pod_dirs(d->cfg->root_dir, pod, err) < 0 ||
            volume_mount_pod_volumes(d->cfg->root_dir, pod, d->kube, &volume_paths, err) < 0) {
                event_emit_pod(d->recorder, pod, NULL, EVENT_WARNING, "FailedMount",
                               "MountVolume.SetUp failed for %s", ck_error_msg(*err));
                ck_error_wrap(err, "mount volumes");
                int64_t now = fs_now_mono_ms();
                backoff_next(d->mount_backoff, pod->uid, now);
                *next_retry_ms = now + backoff_get(d->mount_backoff, pod->uid);
                goto out;
        }
        backoff_reset(d->mount_backoff, pod->uid);
        /* h: pull secrets are read through ctx.kube when a pull is due.
         * i: the runtime, which also restarts the containers whose
         * liveness probe failed. */
        prober_update_pod(d->prober, pod, rs); /* a replaced container's failure is void */
        liveness_failed = prober_liveness_failures(d->prober, pod->uid);
        startup_failed = prober_startup_failures(d->prober, pod->uid);
        started = prober_started(d->prober, pod->uid);
        struct kuberuntime_pod_context ctx = {
            .cgroup_parent = cgroup_parent,
            .volume_paths = &volume_paths,
            .probes = {.liveness_failed = (const char *const *)liveness_failed,
                       .startup_failed = (const char *const *)startup_failed,
                       .started = (const char *const *)started},
            .kube = d->kube,
            .cm = d->cm,
        };
        uint64_t changes = cri_client_changes(cri);
        if (kuberuntime_sync_pod(d->rt, cri, pod, rs, &ctx, &result, err) < 0)
                goto out;
        /* the status to publish: read again only if the sync changed the
         * pod (Running at the end of the sync that started it) */
        if (cri_client_changes(cri) != changes) {
                runtime_pod_status_free(rs);
                rs = NULL;
                gen = pod_cache_generation(d->pod_cache, pod->uid);
                if (kuberuntime_get_pod_status(d->rt, cri, pod->uid, pod->name, pod->namespace, &rs,
                                               err) < 0) {
                        ck_error_wrap(err, "get pod status after sync");
                        goto out;
                }
        }
        prober_update_pod(d->prober, pod, rs);
        update_resize_condition(d, pod, rs, &result);
        /* upstream sees Pending -> Running at the sync after the one that
         * started the containers (its status is generated before they
         * start); here at the end of that sync: about one relist earlier */
        char before[16];
        stored_phase(d, pod->uid, before, sizeof(before));
        const char *after = update_status(d, pod, rs, &result, net_ready);
        if (strcmp(before, "Pending") == 0 && strcmp(after, "Running") == 0)
                observe_pod_start(first_seen_us);
        *next_retry_ms = result.next_retry_ms;
        if (deadline_check_ms > 0 && (*next_retry_ms == 0 || deadline_check_ms < *next_retry_ms))
                *next_retry_ms = deadline_check_ms;
        if (result.resize_error != NULL) {
                /* the sync failed: tried again after the sync backoff */
                ck_error_make(err, 0, "resize pod in place: %s", result.resize_error);
                goto out;
        }
        pod_cache_put(d->pod_cache, pod->uid, rs, gen,
                      pod_cache_expiry(rs, fs_now_mono_ms(), fs_now_real_ns()));
        rs = NULL;
        ret = 0;
out:
        free_names(liveness_failed);
        free_names(startup_failed);
        free_names(started);
        kv_list_release(&volume_paths);
        kuberuntime_sync_result_clear(&result);
        runtime_pod_status_free(rs);
        return ret;
}

static double seconds_since(int64_t us)
{
        return (double)(fs_now_mono_us() - us) / 1e6;
}

void kl_do_work(void *ctx, struct cri_client *cri, const struct pod_work *w)
{
        struct kl_sync_deps *d = ctx;
        cleanup_error ck_error_t err = NULL;
        bool terminal = false;
        int64_t next_retry = 0;
        int r;

        switch (w->kind) {
        case POD_WORK_SYNC: {
                LOG_INFO(3, "Syncing pod", "pod=\"%s\" podUID=\"%s\"", pod_full_name(w->pod),
                         w->uid);
                int64_t cri_before_us = cri_client_busy_us(cri);
                int64_t start_us = fs_now_mono_us();
                r = sync_pod(d, cri, w->pod, w->first_seen_us, w->evict_reason, w->evict_message,
                             w->evict_grace_s, w->evict_disruption, &terminal, &next_retry, &err);
                if (r < 0) {
                        LOG_ERROR("Error syncing pod, skipping",
                                  "err=\"%s\" pod=\"%s\" podUID=\"%s\"", ck_error_msg(err),
                                  pod_full_name(w->pod), w->uid);
                        /* The runtime still works on a create of the same
                         * name, one whose caller went away (an agent killed
                         * mid-call, a timeout): it ends within moments,
                         * failed or done, and the next sync finds out which. */
                        if (strstr(ck_error_msg(err), "is reserved for") != NULL)
                                next_retry = fs_now_mono_ms() + NAME_RESERVED_RETRY_MS;
                }
                /* The agent's own share of a sync is its wall time minus the
                 * CRI calls' time (bench/ reads this line). */
                LOG_INFO(2, "Pod sync finished",
                         "pod=\"%s\" podUID=\"%s\" wait_ms=%.1f sync_ms=%.1f cri_ms=%.1f ok=%s",
                         pod_full_name(w->pod), w->uid,
                         (double)(w->started_us - w->submitted_us) / 1000.0,
                         (double)(fs_now_mono_us() - start_us) / 1000.0,
                         (double)(cri_client_busy_us(cri) - cri_before_us) / 1000.0,
                         r == 0 ? "true" : "false");
                /* upstream measures from the dispatch: the wait included */
                if (w->update_type)
                        kmetrics_pod_worker(w->update_type, seconds_since(w->submitted_us));
                break;
        }
        case POD_WORK_KILL:
                LOG_INFO(2, "Killing pod", "pod=\"%s\" podUID=\"%s\"", pod_full_name(w->pod),
                         w->uid);
                prober_remove_pod(d->prober, w->uid);
                r = kill_and_remove(d, cri, w->pod, w->uid, w->pod->name, w->pod->namespace,
                                    w->grace_s, &err);
                /* a pod kept for its restart syncs again from the runtime */
                pod_cache_invalidate(d->pod_cache, w->uid);
                if (r < 0)
                        LOG_ERROR("Failed to kill pod", "err=\"%s\" pod=\"%s\" podUID=\"%s\"",
                                  ck_error_msg(err), pod_full_name(w->pod), w->uid);
                if (w->update_type) /* a deletion through the apiserver: "update" */
                        kmetrics_pod_worker(w->update_type, seconds_since(w->submitted_us));
                break;
        case POD_WORK_KILL_ORPHAN:
        default:
                prober_remove_pod(d->prober, w->uid);
                r = kill_and_remove(d, cri, NULL, w->uid, w->name, w->namespace, -1, &err);
                pod_cache_forget(d->pod_cache, w->uid);
                if (r < 0)
                        LOG_ERROR("Failed to clean up orphaned pod", "err=\"%s\" podUID=\"%s\"",
                                  ck_error_msg(err), w->uid);
                break;
        }
        post_done(d, w, r == 0, terminal, next_retry);
}
