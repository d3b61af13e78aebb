/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Stopping and removing (upstream KillPod / killPodWithSyncResult /
 * killContainersWithSyncResult / killContainer / setTerminationGracePeriod,
 * removeContainer).  The containers of a pod are stopped in parallel, as
 * upstream's goroutines do, each thread on its own CRI connection: the
 * runtime blocks in StopContainer until the container is gone, so one after
 * another would take the sum of the grace periods.
 */
#include "kuberuntime/builders.h"
#include "kuberuntime/compute.h"
#include "kuberuntime/runtime_internal.h"
#include "logs/container_log_manager.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static bool is_not_found(ck_error_t err)
{
        return err != NULL && err->code == CRI_CODE_NOT_FOUND;
}

/* upstream setTerminationGracePeriod and the override (an orphan's grace
 * comes from its annotations); the minimum is applied after the preStop
 * hook and the termination order took their share
 * (kuberuntime__stop_grace). */
static int64_t grace_period(const struct pod *pod, const char *name, const char *reason,
                            int64_t override_s)
{
        if (override_s >= 0)
                return override_s;
        if (pod->has_deletion_grace_period_seconds)
                return pod->deletion_grace_period_seconds;
        const struct container *c = name ? pod_find_container(pod, name) : NULL;
        if (reason != NULL && strcmp(reason, KILL_REASON_LIVENESS) == 0 && c != NULL &&
            c->liveness_probe != NULL && c->liveness_probe->has_termination_grace_period_seconds)
                return c->liveness_probe->termination_grace_period_seconds;
        if (reason != NULL && strcmp(reason, KILL_REASON_STARTUP) == 0 && c != NULL &&
            c->startup_probe != NULL && c->startup_probe->has_termination_grace_period_seconds)
                return c->startup_probe->termination_grace_period_seconds;
        return pod->termination_grace_period_seconds;
}

/* The message of the Killing event, as upstream's callers of killContainer
 * word it (computePodActions' containerToKillInfo.message; empty, from
 * KillPod: "Stopping container <name>").  New string. */
static char *killing_message(const struct pod *pod, const char *name, const char *reason)
{
        bool init = false;
        for (size_t i = 0; i < pod->n_init_containers && !init; i++)
                init = strcmp(pod->init_containers[i].name, name) == 0;
        const char *what = init ? "Init container" : "Container";
        if (reason == NULL)
                return xasprintf("Stopping container %s", name);
        if (strcmp(reason, KR_KILL_REASON_POST_START) == 0)
                return xstrdup("FailedPostStartHook");
        if (strcmp(reason, KILL_REASON_HASH_CHANGED) == 0)
                /* an app container restarts whatever the policy */
                return xasprintf("%s %s definition changed%s", what, name,
                                 init ? "" : ", will be restarted");
        if (strcmp(reason, KILL_REASON_LIVENESS) == 0)
                return xasprintf(
                    "%s %s failed liveness probe%s", what, name,
                    !init && pod->restart_policy != RESTART_NEVER ? ", will be restarted" : "");
        if (strcmp(reason, KILL_REASON_STARTUP) == 0)
                return xasprintf(
                    "%s %s failed startup probe%s", what, name,
                    !init && pod->restart_policy != RESTART_NEVER ? ", will be restarted" : "");
        if (strcmp(reason, KILL_REASON_UNKNOWN_STATE) == 0)
                return xasprintf("%s is in \"unknown\" state, try killing it before restart", what);
        if (strcmp(reason, KILL_REASON_RESIZE) == 0)
                return xasprintf("Container %s resize requires restart", name);
        return xasprintf("Stopping container %s", name);
}

/* The order in which a pod's containers stop (sidecars last), shared by
 * the threads that stop them. */
struct stop_order {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        size_t n;
        const bool *waits; /* n*n, from kuberuntime__termination_order */
        bool *stopped;     /* under lock */
};

/* upstream terminationOrdering.waitForTurn: waits until every container
 * that i waits for has stopped, at most grace_s seconds.  Returns the
 * milliseconds spent. */
static int64_t wait_for_turn(struct stop_order *o, size_t i, int64_t grace_s)
{
        if (grace_s <= 0)
                return 0;
        int64_t start = fs_now_mono_ms();
        int64_t deadline = start + kuberuntime__s_to_ms(grace_s);
        struct timespec ts = {.tv_sec = (time_t)(deadline / 1000),
                              .tv_nsec = (long)(deadline % 1000) * 1000000};
        pthread_mutex_lock(&o->lock);
        for (;;) {
                bool ready = true;
                for (size_t j = 0; j < o->n && ready; j++)
                        ready = !o->waits[i * o->n + j] || o->stopped[j];
                if (ready || pthread_cond_timedwait(&o->cond, &o->lock, &ts) == ETIMEDOUT)
                        break;
        }
        pthread_mutex_unlock(&o->lock);
        return fs_now_mono_ms() - start;
}

static void mark_stopped(struct stop_order *o, size_t i)
{
        pthread_mutex_lock(&o->lock);
        o->stopped[i] = true;
        pthread_cond_broadcast(&o->cond);
        pthread_mutex_unlock(&o->lock);
}

/* One container to stop (upstream killContainer's arguments). */
struct stop_job {
        const struct kuberuntime *rt;
        const struct pod *pod;
        const char *who, *uid, *pod_ip;
        const char *id, *name;
        const char *reason;
        int64_t override_s;
        struct stop_order *order; /* NULL: no ordering */
        size_t index;             /* in order */
        pthread_t thread;
        bool threaded, done;
        int ret;
        ck_error_t err;
};

/* upstream killContainer: preStop hook, wait for its turn, StopContainer. */
static int stop_one(struct cri_client *cri, struct stop_job *j, ck_error_t *err)
{
        const struct pod *pod = j->pod;
        int64_t grace;
        /* an orphan: what its labels say (upstream restoreSpecsFromContainerLabels) */
        cleanup_pod struct pod *restored = NULL;
        if (pod == NULL) {
                restored = kuberuntime__orphan_spec(cri, j->id, &grace);
                if (j->override_s >= 0)
                        grace = j->override_s;
                pod = restored;
        } else {
                grace = grace_period(pod, j->name, j->reason, j->override_s);
        }
        const struct container *spec = pod ? pod_find_container(pod, j->name) : NULL;
        /* upstream killContainer's Killing event (an orphan's restored pod
         * has no container to refer to: none) */
        if (j->pod != NULL && spec != NULL) {
                cleanup_free char *msg = killing_message(j->pod, j->name, j->reason);
                event_emit_pod(j->rt->opts.recorder, j->pod, j->name, EVENT_NORMAL, "Killing", "%s",
                               msg);
        }
        if (j->override_s >= 0)
                LOG_INFO(3, "Killing container with a grace period override",
                         "pod=\"%s\" podUID=\"%s\" containerName=\"%s\" containerID=\"%s\" "
                         "gracePeriod=%" PRId64,
                         j->who, j->uid, j->name, j->id, grace);

        /* the preStop hook, if there is time for it */
        struct kuberuntime_hook *hook = NULL;
        if (spec != NULL && spec->pre_stop != NULL && grace > 0) {
                int64_t spent =
                    kuberuntime__run_pre_stop(j->rt, pod, spec, j->id, j->pod_ip, grace, &hook);
                grace = kuberuntime__grace_left(grace, spent);
        }
        /* sidecars: the containers they serve stop first */
        if (j->order != NULL && grace > 0)
                grace = kuberuntime__grace_left(grace, wait_for_turn(j->order, j->index, grace));
        grace = kuberuntime__stop_grace(grace);

        LOG_INFO(
            2, "Killing container with a grace period",
            "pod=\"%s\" podUID=\"%s\" containerName=\"%s\" containerID=\"%s\" gracePeriod=%" PRId64
            " reason=\"%s\"",
            j->who, j->uid, j->name, j->id, grace, j->reason ? j->reason : "");
        int64_t t0 = fs_now_mono_ms();
        int r = cri_stop_container(cri, j->id, grace, err);
        /* a hook that outlived its deadline ends with its container */
        kuberuntime__hook_finish(hook);
        if (r < 0) {
                if (!is_not_found(*err)) {
                        LOG_ERROR("Container termination failed with gracePeriod",
                                  "pod=\"%s\" containerName=\"%s\" containerID=\"%s\" "
                                  "gracePeriod=%" PRId64 " err=\"%s\"",
                                  j->who, j->name, j->id, grace, ck_error_msg(*err));
                        return ck_error_wrap(err, "kill container %s", j->name);
                }
                ck_error_release(err);
        } else {
                LOG_INFO(3, "Container exited normally",
                         "pod=\"%s\" containerName=\"%s\" containerID=\"%s\" duration=\"%.3fs\"",
                         j->who, j->name, j->id, (double)(fs_now_mono_ms() - t0) / 1000.0);
        }
        if (j->order != NULL)
                mark_stopped(j->order, j->index);
        return 0;
}

int kuberuntime__kill_container(struct kuberuntime *rt, struct cri_client *cri,
                                const struct pod *pod, const char *container_id,
                                const char *container_name, const char *reason, const char *pod_ip,
                                ck_error_t *err)
{
        char who[320];
        kuberuntime__pod_ref(pod, who, sizeof(who));
        struct stop_job j = {.rt = rt,
                             .pod = pod,
                             .who = who,
                             .uid = pod->uid,
                             .pod_ip = pod_ip,
                             .id = container_id,
                             .name = container_name,
                             .reason = reason,
                             .override_s = -1};
        return stop_one(cri, &j, err);
}

/* ---- KillPod ---- */

static void *stop_job_run(void *p)
{
        struct stop_job *j = p;
        cleanup_cri_client struct cri_client *cri =
            cri_client_new(j->rt->opts.runtime_endpoint, j->rt->opts.runtime_timeout_ms);
        j->ret = stop_one(cri, j, &j->err);
        return NULL;
}

/* Without threads: the next job whose predecessors are all done (so that
 * none waits for its turn in vain), else the first not done. */
static struct stop_job *next_inline_job(struct stop_job *jobs, size_t n)
{
        struct stop_job *first = NULL;
        for (size_t i = 0; i < n; i++) {
                if (jobs[i].threaded || jobs[i].done)
                        continue;
                if (first == NULL)
                        first = &jobs[i];
                bool ready = true;
                for (size_t k = 0; jobs[i].order != NULL && k < n && ready; k++)
                        ready = !jobs[i].order->waits[i * n + k] || jobs[k].done;
                if (ready)
                        return &jobs[i];
        }
        return first;
}

int kuberuntime_kill_pod(struct kuberuntime *rt, struct cri_client *cri, const struct pod *pod,
                         const struct runtime_pod_status *status, int64_t grace_s, ck_error_t *err)
{
        const char *ns = pod ? pod->namespace : status->namespace;
        const char *name = pod ? pod->name : status->name;
        const char *uid = pod ? pod->uid : status->uid;
        char who[320];
        snprintf(who, sizeof(who), "%s/%s", ns ? ns : "", name ? name : "");

        size_t n = 0;
        struct stop_job *jobs = xcalloc(status->n_containers + 1, sizeof(*jobs));
        const char **names = xcalloc(status->n_containers + 1, sizeof(*names));
        for (size_t i = 0; i < status->n_containers; i++) {
                const struct runtime_container_status *c = &status->containers[i];
                if (c->state != CONTAINER_STATE_RUNNING)
                        continue;
                names[n] = c->name;
                jobs[n] = (struct stop_job){.rt = rt,
                                            .pod = pod,
                                            .who = who,
                                            .uid = uid ? uid : "",
                                            .pod_ip = status->ip,
                                            .id = c->id,
                                            .name = c->name,
                                            .index = n,
                                            .override_s = grace_s};
                n++;
        }
        LOG_INFO(2, "Killing pod", "pod=\"%s\" podUID=\"%s\" containers=%zu sandboxes=%zu", who,
                 uid ? uid : "", n, status->n_sandboxes);

        /* sidecars stop after the app containers, in reverse order */
        struct stop_order order = {.n = n};
        bool *waits = kuberuntime__termination_order(pod, names, n);
        if (waits != NULL) {
                order.waits = waits;
                order.stopped = xcalloc(n, sizeof(bool));
                pthread_condattr_t ca;
                pthread_condattr_init(&ca);
                pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
                pthread_cond_init(&order.cond, &ca);
                pthread_condattr_destroy(&ca);
                pthread_mutex_init(&order.lock, NULL);
                for (size_t i = 0; i < n; i++)
                        jobs[i].order = &order;
        }

        /* in parallel (the preStop hooks too) when there are several and we
         * may open connections */
        bool parallel = n > 1 && rt->opts.runtime_endpoint != NULL;
        for (size_t i = 0; parallel && i < n; i++)
                jobs[i].threaded =
                    pthread_create(&jobs[i].thread, NULL, stop_job_run, &jobs[i]) == 0;
        for (struct stop_job *j; (j = next_inline_job(jobs, n)) != NULL;) {
                j->ret = stop_one(cri, j, &j->err);
                j->done = true;
        }
        int ret = 0;
        for (size_t i = 0; i < n; i++) {
                if (jobs[i].threaded)
                        pthread_join(jobs[i].thread, NULL);
                if (jobs[i].ret < 0 && ret == 0) {
                        ret = -1;
                        ck_error_release(err);
                        *err = jobs[i].err;
                        jobs[i].err = NULL;
                }
                ck_error_release(&jobs[i].err);
        }
        if (waits != NULL) {
                pthread_cond_destroy(&order.cond);
                pthread_mutex_destroy(&order.lock);
                free(order.stopped);
                free(waits);
        }
        free(names);
        free(jobs);

        /* then every sandbox of the pod (removed later) */
        for (size_t i = 0; i < status->n_sandboxes; i++) {
                const char *id = status->sandboxes[i].id;
                cleanup_error ck_error_t e = NULL;
                LOG_INFO(3, "Stopping pod sandbox", "pod=\"%s\" podSandboxID=\"%s\"", who, id);
                if (cri_stop_pod_sandbox(cri, id, &e) < 0 && !is_not_found(e)) {
                        LOG_ERROR("Failed to stop sandbox",
                                  "pod=\"%s\" podSandboxID=\"%s\" err=\"%s\"", who, id,
                                  ck_error_msg(e));
                        if (ret == 0) {
                                ret = -1;
                                ck_error_release(err);
                                *err = e;
                                e = NULL;
                                ck_error_wrap(err, "stop sandbox %s", id);
                        }
                }
        }
        if (ret < 0)
                return ck_error_wrap(err, "pod %s", who);
        return 0;
}

/* ---- removal ---- */

/* unlinks a container's log file, only under the pod logs directory */
/* upstream's removeContainerLog -> logManager.Clean: the log and every
 * rotated file of it (clm_clean checks the path is under podLogsDir). */
static void remove_log_file(const struct kuberuntime *rt, const char *path)
{
        const char *base = rt->opts.pod_logs_dir;
        if (path == NULL || base == NULL || *base == '\0')
                return;
        cleanup_error ck_error_t err = NULL;
        if (clm_clean(base, path, &err) < 0)
                LOG_WARN("Failed to remove container log", "path=\"%s\" err=\"%s\"", path,
                         ck_error_msg(err));
}

int kuberuntime__remove_container(struct kuberuntime *rt, struct cri_client *cri,
                                  const struct runtime_container_status *st, const char *pod,
                                  const char *ns, ck_error_t *err)
{
        LOG_INFO(4, "Removing container", "containerName=\"%s\" containerID=\"%s\"", st->name,
                 st->id);
        if (cri_remove_container(cri, st->id, err) < 0) {
                if (!is_not_found(*err))
                        return ck_error_wrap(err, "remove container %s", st->name);
                ck_error_release(err);
        }
        remove_log_file(rt, st->log_path);
        kuberuntime__legacy_log_remove(rt, st->id, st->name, pod, ns);
        return 0;
}

int kuberuntime_remove_pod(struct kuberuntime *rt, struct cri_client *cri,
                           const struct runtime_pod_status *status, ck_error_t *err)
{
        char who[320];
        snprintf(who, sizeof(who), "%s/%s", status->namespace ? status->namespace : "",
                 status->name ? status->name : "");
        int ret = 0;
        for (size_t i = 0; i < status->n_containers; i++) {
                const struct runtime_container_status *c = &status->containers[i];
                cleanup_error ck_error_t e = NULL;
                LOG_INFO(4, "Removing container",
                         "pod=\"%s\" containerName=\"%s\" containerID=\"%s\"", who, c->name, c->id);
                if (cri_remove_container(cri, c->id, &e) < 0 && !is_not_found(e) && ret == 0) {
                        ret = -1;
                        ck_error_release(err);
                        *err = e;
                        e = NULL;
                        ck_error_wrap(err, "remove container %s", c->name);
                }
                kuberuntime__legacy_log_remove(rt, c->id, c->name, status->name, status->namespace);
        }
        for (size_t i = 0; i < status->n_sandboxes; i++) {
                const char *id = status->sandboxes[i].id;
                cleanup_error ck_error_t e = NULL;
                LOG_INFO(4, "Removing pod sandbox", "pod=\"%s\" podSandboxID=\"%s\"", who, id);
                if (cri_remove_pod_sandbox(cri, id, &e) < 0 && !is_not_found(e) && ret == 0) {
                        ret = -1;
                        ck_error_release(err);
                        *err = e;
                        e = NULL;
                        ck_error_wrap(err, "remove sandbox %s", id);
                }
        }
        /* the pod is gone: so is its crash loop history */
        for (size_t i = 0; status->uid != NULL && i < status->n_containers; i++) {
                cleanup_free char *key = kuberuntime__crashloop_key(
                    status->uid, status->containers[i].name, status->containers[i].hash);
                backoff_reset(rt->crashloop, key);
        }
        cleanup_free char *dir =
            kuberuntime__pod_log_dir(rt, status->namespace, status->name, status->uid);
        if (dir != NULL) {
                cleanup_error ck_error_t e = NULL;
                if (fs_remove_all(dir, &e) < 0 && ret == 0) {
                        ret = -1;
                        ck_error_release(err);
                        *err = e;
                        e = NULL;
                        ck_error_wrap(err, "remove log directory");
                }
        }
        if (ret < 0)
                return ck_error_wrap(err, "pod %s: remove", who);
        LOG_INFO(2, "Removed pod from the runtime", "pod=\"%s\" podUID=\"%s\"", who,
                 status->uid ? status->uid : "");
        return 0;
}
