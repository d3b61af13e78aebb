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
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool is_not_found(ck_error_t err)
{
        return err != NULL && err->code == CRI_CODE_NOT_FOUND;
}

static const struct container *spec_by_name(const struct pod *pod, const char *name)
{
        for (size_t i = 0; i < pod->n_containers; i++)
                if (strcmp(pod->containers[i].name, name) == 0)
                        return &pod->containers[i];
        for (size_t i = 0; i < pod->n_init_containers; i++)
                if (strcmp(pod->init_containers[i].name, name) == 0)
                        return &pod->init_containers[i];
        return NULL;
}

static bool parse_int64(const char *s, int64_t *out)
{
        if (s == NULL || *s == '\0')
                return false;
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (errno != 0 || *end != '\0')
                return false;
        *out = v;
        return true;
}

/* An orphan's grace period from its container's annotations (upstream
 * restoreSpecsFromContainerLabels): deletion grace, else termination grace. */
static int64_t orphan_grace(struct cri_client *cri, const char *container_id)
{
        int64_t grace = KR_MIN_GRACE_S;
        Runtime__V1__ContainerStatusResponse *st = NULL;
        cleanup_error ck_error_t err = NULL;
        if (cri_container_status(cri, container_id, &st, &err) < 0)
                return grace;
        if (st->status != NULL) {
                const char *del = NULL, *term = NULL;
                for (size_t i = 0; i < st->status->n_annotations; i++) {
                        const char *k = st->status->annotations[i]->key;
                        if (strcmp(k, ANNOTATION_POD_DELETION_GRACE) == 0)
                                del = st->status->annotations[i]->value;
                        else if (strcmp(k, ANNOTATION_POD_TERMINATION_GRACE) == 0)
                                term = st->status->annotations[i]->value;
                }
                if (!parse_int64(del, &grace) && !parse_int64(term, &grace))
                        grace = KR_MIN_GRACE_S;
        }
        runtime__v1__container_status_response__free_unpacked(st, NULL);
        return grace;
}

/* upstream setTerminationGracePeriod + the override + the minimum. */
static int64_t grace_period(struct cri_client *cri, const struct pod *pod, const char *container_id,
                            const char *name, const char *reason, int64_t override_s)
{
        int64_t grace;
        if (override_s >= 0) {
                grace = override_s;
        } else if (pod == NULL) {
                grace = orphan_grace(cri, container_id);
        } else if (pod->has_deletion_grace_period_seconds) {
                grace = pod->deletion_grace_period_seconds;
        } else {
                grace = pod->termination_grace_period_seconds;
                const struct container *c = name ? spec_by_name(pod, name) : NULL;
                if (reason != NULL && strcmp(reason, KILL_REASON_LIVENESS) == 0 && c != NULL &&
                    c->liveness_probe != NULL &&
                    c->liveness_probe->has_termination_grace_period_seconds)
                        grace = c->liveness_probe->termination_grace_period_seconds;
        }
        /* always a minimal shutdown window, to avoid needless SIGKILLs */
        return grace < KR_MIN_GRACE_S ? KR_MIN_GRACE_S : grace;
}

static int stop_one(struct cri_client *cri, const char *who, const char *uid, const struct pod *pod,
                    const char *id, const char *name, const char *reason, int64_t override_s,
                    ck_error_t *err)
{
        int64_t grace = grace_period(cri, pod, id, name, reason, override_s);
        LOG_INFO(
            2, "Killing container with a grace period",
            "pod=\"%s\" podUID=\"%s\" containerName=\"%s\" containerID=\"%s\" gracePeriod=%" PRId64
            " reason=\"%s\"",
            who, uid, name, id, grace, reason ? reason : "");
        int64_t t0 = kuberuntime__now_mono_ms();
        if (cri_stop_container(cri, id, grace, err) < 0) {
                if (is_not_found(*err)) {
                        ck_error_release(err);
                        return 0;
                }
                LOG_ERROR("Container termination failed with gracePeriod",
                          "pod=\"%s\" containerName=\"%s\" containerID=\"%s\" gracePeriod=%" PRId64
                          " err=\"%s\"",
                          who, name, id, grace, ck_error_msg(*err));
                return ck_error_wrap(err, "kill container %s", name);
        }
        LOG_INFO(3, "Container exited normally",
                 "pod=\"%s\" containerName=\"%s\" containerID=\"%s\" duration=\"%.3fs\"", who, name,
                 id, (double)(kuberuntime__now_mono_ms() - t0) / 1000.0);
        return 0;
}

int kuberuntime__kill_container(struct kuberuntime *rt, struct cri_client *cri,
                                const struct pod *pod, const char *container_id,
                                const char *container_name, const char *reason, ck_error_t *err)
{
        (void)rt;
        char who[320];
        kuberuntime__pod_ref(pod, who, sizeof(who));
        return stop_one(cri, who, pod->uid, pod, container_id, container_name, reason, -1, err);
}

/* ---- KillPod ---- */

struct stop_job {
        const struct kuberuntime *rt;
        const struct pod *pod;
        const char *who, *uid;
        const char *id, *name;
        int64_t override_s;
        pthread_t thread;
        bool threaded;
        int ret;
        ck_error_t err;
};

static void *stop_job_run(void *p)
{
        struct stop_job *j = p;
        cleanup_cri_client struct cri_client *cri =
            cri_client_new(j->rt->opts.runtime_endpoint, j->rt->opts.runtime_timeout_ms);
        j->ret =
            stop_one(cri, j->who, j->uid, j->pod, j->id, j->name, NULL, j->override_s, &j->err);
        return NULL;
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
        for (size_t i = 0; i < status->n_containers; i++) {
                const struct runtime_container_status *c = &status->containers[i];
                if (c->state != CONTAINER_STATE_RUNNING)
                        continue;
                jobs[n++] = (struct stop_job){.rt = rt,
                                              .pod = pod,
                                              .who = who,
                                              .uid = uid ? uid : "",
                                              .id = c->id,
                                              .name = c->name,
                                              .override_s = grace_s};
        }
        LOG_INFO(2, "Killing pod", "pod=\"%s\" podUID=\"%s\" containers=%zu sandboxes=%zu", who,
                 uid ? uid : "", n, status->n_sandboxes);

        /* in parallel when there are several and we may open connections */
        bool parallel = n > 1 && rt->opts.runtime_endpoint != NULL;
        for (size_t i = 0; parallel && i < n; i++)
                jobs[i].threaded =
                    pthread_create(&jobs[i].thread, NULL, stop_job_run, &jobs[i]) == 0;
        for (size_t i = 0; i < n; i++) {
                if (!jobs[i].threaded)
                        jobs[i].ret = stop_one(cri, who, jobs[i].uid, pod, jobs[i].id, jobs[i].name,
                                               NULL, grace_s, &jobs[i].err);
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
static void remove_log_file(const struct kuberuntime *rt, const char *path)
{
        const char *base = rt->opts.pod_logs_dir;
        size_t bl = base ? strlen(base) : 0;
        if (path == NULL || bl == 0 || strncmp(path, base, bl) != 0 || path[bl] != '/' ||
            strstr(path, "/../") != NULL || strstr(path, "/./") != NULL)
                return;
        if (unlink(path) < 0 && errno != ENOENT)
                LOG_WARN("Failed to remove container log", "path=\"%s\" err=\"%s\"", path,
                         strerror(errno));
}

int kuberuntime__remove_container(struct kuberuntime *rt, struct cri_client *cri,
                                  const struct runtime_container_status *st, ck_error_t *err)
{
        LOG_INFO(4, "Removing container", "containerName=\"%s\" containerID=\"%s\"", st->name,
                 st->id);
        if (cri_remove_container(cri, st->id, err) < 0) {
                if (!is_not_found(*err))
                        return ck_error_wrap(err, "remove container %s", st->name);
                ck_error_release(err);
        }
        remove_log_file(rt, st->log_path);
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
                cleanup_free char *key =
                    xasprintf("%s/%s", status->uid, status->containers[i].name);
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
