/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kuberuntime manager (upstream kuberuntime_manager.go): its state and
 * SyncPod, which drives a pod's sandbox and containers towards the spec
 * from the actions compute.c decides.
 */
#include "dra/dra.h"
#include "kuberuntime/builders.h"
#include "kuberuntime/compute.h"
#include "kuberuntime/runtime_internal.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- shared helpers ---- */

const char *kuberuntime__pod_ref(const struct pod *pod, char *buf, size_t len)
{
        snprintf(buf, len, "%s/%s", pod && pod->namespace ? pod->namespace : "",
                 pod && pod->name ? pod->name : "");
        return buf;
}

static bool path_component_ok(const char *s)
{
        return s != NULL && s[0] != '\0' && strcmp(s, ".") != 0 && strcmp(s, "..") != 0 &&
               strchr(s, '/') == NULL;
}

char *kuberuntime__pod_log_dir(const struct kuberuntime *rt, const char *ns, const char *name,
                               const char *uid)
{
        if (rt->opts.pod_logs_dir == NULL || !path_component_ok(ns) || !path_component_ok(name) ||
            !path_component_ok(uid))
                return NULL;
        return xasprintf("%s/%s_%s_%s", rt->opts.pod_logs_dir, ns, name, uid);
}

const char *kuberuntime__cri_message(ck_error_t err)
{
        const char *m = ck_error_msg(err);
        const char *p = strstr(m, "rpc error ");
        if (p == NULL)
                return m;
        p += strlen("rpc error ");
        while (*p >= '0' && *p <= '9')
                p++;
        return strncmp(p, ": ", 2) == 0 ? p + 2 : m;
}

void kuberuntime__set_waiting(struct kuberuntime_sync_result *r, const char *container,
                              const char *reason, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        char *msg = xvasprintf(fmt, ap);
        va_end(ap);
        for (size_t i = 0; i < r->n_waiting; i++) {
                if (strcmp(r->waiting[i].container_name, container) == 0) {
                        free(r->waiting[i].reason);
                        free(r->waiting[i].message);
                        r->waiting[i].reason = xstrdup(reason);
                        r->waiting[i].message = msg;
                        return;
                }
        }
        r->waiting = xrealloc(r->waiting, (r->n_waiting + 1) * sizeof(*r->waiting));
        r->waiting[r->n_waiting++] = (struct kuberuntime_waiting){
            .container_name = xstrdup(container), .reason = xstrdup(reason), .message = msg};
}

void kuberuntime__retry_at(struct kuberuntime_sync_result *r, int64_t at_ms)
{
        if (r->next_retry_ms == 0 || at_ms < r->next_retry_ms)
                r->next_retry_ms = at_ms;
}

char *kuberuntime__crashloop_key(const char *pod_uid, const char *name, uint64_t hash)
{
        return xasprintf("%s/%s/%" PRIx64, pod_uid, name, hash);
}

void kuberuntime__format_duration(int64_t ms, char *buf, size_t len)
{
        if (ms == 0) {
                snprintf(buf, len, "0s");
                return;
        }
        if (ms < 1000) {
                snprintf(buf, len, "%" PRId64 "ms", ms);
                return;
        }
        int64_t h = ms / 3600000, m = ms / 60000 % 60, s = ms / 1000 % 60, frac = ms % 1000;
        char sec[32];
        if (frac == 0) {
                snprintf(sec, sizeof(sec), "%" PRId64 "s", s);
        } else {
                snprintf(sec, sizeof(sec), "%" PRId64 ".%03" PRId64, s, frac);
                size_t n = strlen(sec);
                while (sec[n - 1] == '0')
                        sec[--n] = '\0';
                snprintf(sec + n, sizeof(sec) - n, "s");
        }
        if (h > 0)
                snprintf(buf, len, "%" PRId64 "h%" PRId64 "m%s", h, m, sec);
        else if (m > 0)
                snprintf(buf, len, "%" PRId64 "m%s", m, sec);
        else
                snprintf(buf, len, "%s", sec);
}

/* ---- lifecycle ---- */

static char **strv_dup(const char *const *v)
{
        if (v == NULL)
                return NULL;
        size_t n = 0;
        while (v[n] != NULL)
                n++;
        char **out = xcalloc(n + 1, sizeof(char *));
        for (size_t i = 0; i < n; i++)
                out[i] = xstrdup(v[i]);
        return out;
}

struct kuberuntime *kuberuntime_new(const struct kuberuntime_options *opts)
{
        struct kuberuntime *rt = xcalloc(1, sizeof(*rt));
        rt->opts = *opts;
        rt->opts.root_dir = xstrdup(opts->root_dir);
        rt->opts.pod_logs_dir = xstrdup(opts->pod_logs_dir ? opts->pod_logs_dir : "/var/log/pods");
        rt->opts.node_name = xstrdup(opts->node_name);
        rt->opts.cluster_domain = xstrdup(opts->cluster_domain);
        rt->opts.cluster_dns = (const char *const *)strv_dup(opts->cluster_dns);
        rt->opts.resolv_conf = xstrdup(opts->resolv_conf);
        rt->opts.pod_infra_image = xstrdup(opts->pod_infra_image);
        rt->opts.runtime_endpoint = xstrdup(opts->runtime_endpoint);
        rt->opts.legacy_logs_dir = xstrdup(opts->legacy_logs_dir);
        rt->crashloop = backoff_new(
            opts->crashloop_backoff_initial_ms > 0 ? opts->crashloop_backoff_initial_ms : 10000,
            opts->crashloop_backoff_max_ms > 0 ? opts->crashloop_backoff_max_ms : 300000);
        rt->image_pull =
            backoff_new(opts->image_backoff_initial_ms > 0 ? opts->image_backoff_initial_ms : 10000,
                        opts->image_backoff_max_ms > 0 ? opts->image_backoff_max_ms : 300000);
        pthread_mutex_init(&rt->pull_lock, NULL);
        pthread_cond_init(&rt->pull_cond, NULL);
        return rt;
}

void kuberuntime_free(struct kuberuntime *rt)
{
        if (rt == NULL)
                return;
        free((char *)rt->opts.root_dir);
        free((char *)rt->opts.pod_logs_dir);
        free((char *)rt->opts.node_name);
        free((char *)rt->opts.cluster_domain);
        if (rt->opts.cluster_dns != NULL) {
                for (char **p = (char **)rt->opts.cluster_dns; *p != NULL; p++)
                        free(*p);
                free((char **)rt->opts.cluster_dns);
        }
        free((char *)rt->opts.resolv_conf);
        free((char *)rt->opts.pod_infra_image);
        free((char *)rt->opts.runtime_endpoint);
        free((char *)rt->opts.legacy_logs_dir);
        backoff_free(rt->crashloop);
        backoff_free(rt->image_pull);
        for (size_t i = 0; i < rt->n_pulling; i++)
                free(rt->pulling[i]);
        free(rt->pulling);
        for (size_t i = 0; i < rt->n_pull_errs; i++) {
                free(rt->pull_errs[i].key);
                free(rt->pull_errs[i].msg);
        }
        free(rt->pull_errs);
        pthread_cond_destroy(&rt->pull_cond);
        pthread_mutex_destroy(&rt->pull_lock);
        free(rt);
}

/* ---- SyncPod ---- */

static bool is_init_container_name(const struct pod *pod, const char *name)
{
        for (size_t i = 0; i < pod->n_init_containers; i++)
                if (strcmp(pod->init_containers[i].name, name) == 0)
                        return true;
        return false;
}

static bool in_kill_list(const struct pod_actions *a, const char *id)
{
        for (size_t i = 0; i < a->n_containers_to_kill; i++)
                if (strcmp(a->containers_to_kill[i].container_id, id) == 0)
                        return true;
        return false;
}

/* upstream purgeInitContainers: a new sandbox starts initialisation over. */
static void purge_init_containers(struct kuberuntime *rt, struct cri_client *cri,
                                  const struct pod *pod, const struct runtime_pod_status *status,
                                  const char *who)
{
        for (size_t i = 0; i < status->n_containers; i++) {
                const struct runtime_container_status *st = &status->containers[i];
                if (!is_init_container_name(pod, st->name) || st->state == CONTAINER_STATE_RUNNING)
                        continue;
                cleanup_error ck_error_t e = NULL;
                if (kuberuntime__remove_container(rt, cri, st, pod->name, pod->namespace, &e) < 0)
                        LOG_WARN("Failed to remove init container", "pod=\"%s\" err=\"%s\"", who,
                                 ck_error_msg(e));
        }
}

/* The container garbage collection a sync can do at once (upstream
 * pruneInitContainersBeforeStart, and the container GC's per-container limit,
 * --maximum-dead-containers-per-container, default 1): of the dead instances
 * of a name created at least --minimum-container-ttl-duration ago, keep the
 * newest (their restart count and last state are the container's history),
 * remove the older ones; then remove old sandboxes that are stopped and hold
 * nothing anymore. */
static void prune_dead(struct kuberuntime *rt, struct cri_client *cri,
                       const struct runtime_pod_status *status, const struct pod_actions *a,
                       const char *who)
{
        size_t n = status->n_containers;
        bool *removed = xcalloc(n + 1, sizeof(bool));
        struct container_gc_info *info = xcalloc(n + 1, sizeof(*info));
        for (size_t i = 0; i < n; i++) {
                const struct runtime_container_status *st = &status->containers[i];
                info[i] = (struct container_gc_info){
                    .id = st->id,
                    .pod_uid = status->uid ? status->uid : "",
                    .name = st->name,
                    .created_ns = st->created_at,
                    .running = st->state == CONTAINER_STATE_RUNNING ||
                               st->state == CONTAINER_STATE_UNKNOWN || in_kill_list(a, st->id)};
        }
        struct container_gc_policy per_pod = rt->opts.gc;
        per_pod.max_containers = -1; /* the node-wide limit is the GC loop's */
        /* upstream's deleter at a sync keeps one at least */
        if (per_pod.max_per_pod_container == 0)
                per_pod.max_per_pod_container = 1;
        kuberuntime_container_gc_plan(info, n, &per_pod, fs_now_real_ns(), removed);
        free(info);
        for (size_t i = 0; i < n; i++) {
                if (!removed[i])
                        continue;
                const struct runtime_container_status *st = &status->containers[i];
                LOG_INFO(4, "Removing old dead container",
                         "pod=\"%s\" containerName=\"%s\" containerID=\"%s\"", who, st->name,
                         st->id);
                cleanup_error ck_error_t e = NULL;
                if (kuberuntime__remove_container(rt, cri, st, status->name, status->namespace,
                                                  &e) < 0) {
                        LOG_WARN("Failed to remove dead container", "pod=\"%s\" err=\"%s\"", who,
                                 ck_error_msg(e));
                        removed[i] = false;
                }
        }
        /* sandboxes: never the newest; only stopped and empty ones */
        for (size_t s = 1; s < status->n_sandboxes; s++) {
                const struct runtime_sandbox_status *sb = &status->sandboxes[s];
                if (sb->state == SANDBOX_STATE_READY)
                        continue;
                bool used = false;
                for (size_t i = 0; i < n && !used; i++)
                        used = !removed[i] && status->containers[i].sandbox_id != NULL &&
                               strcmp(status->containers[i].sandbox_id, sb->id) == 0;
                if (used)
                        continue;
                LOG_INFO(4, "Removing old pod sandbox", "pod=\"%s\" podSandboxID=\"%s\"", who,
                         sb->id);
                cleanup_error ck_error_t e = NULL;
                if (cri_remove_pod_sandbox(cri, sb->id, &e) < 0 && e->code != CRI_CODE_NOT_FOUND)
                        LOG_WARN("Failed to remove old pod sandbox",
                                 "pod=\"%s\" podSandboxID=\"%s\" err=\"%s\"", who, sb->id,
                                 ck_error_msg(e));
        }
        free(removed);
}

/* upstream createPodSandbox + the PodSandboxStatus that follows: the new
 * sandbox's id and IP (NULL for hostNetwork). */
static int create_sandbox(struct kuberuntime *rt, struct cri_client *cri, const struct pod *pod,
                          const Runtime__V1__PodSandboxConfig *cfg, const char *who,
                          char **sandbox_id, char **pod_ip, ck_error_t *err)
{
        cleanup_free char *log_dir =
            kuberuntime__pod_log_dir(rt, pod->namespace, pod->name, pod->uid);
        if (log_dir == NULL)
                return ck_error_make(err, EINVAL,
                                     "create sandbox: invalid pod name, namespace or uid");
        if (fs_mkdir_p(log_dir, 0755, err) < 0)
                return ck_error_wrap(err, "create sandbox: create log directory");
        cleanup_free char *handler = kuberuntime_runtime_handler(&rt->opts, pod, err);
        if (handler == NULL) {
                LOG_ERROR("Failed to create sandbox for pod", "pod=\"%s\" err=\"%s\"", who,
                          ck_error_msg(*err));
                event_emit_pod(rt->opts.recorder, pod, NULL, EVENT_WARNING,
                               "FailedCreatePodSandBox", "Failed to create pod sandbox: %s",
                               ck_error_msg(*err));
                return ck_error_wrap(err, "create sandbox");
        }
        if (*handler != '\0')
                LOG_INFO(2, "Running pod with runtime handler", "pod=\"%s\" runtimeHandler=\"%s\"",
                         who, handler);
        int64_t t0 = fs_now_mono_ms();
        if (cri_run_pod_sandbox(cri, cfg, handler, sandbox_id, err) < 0) {
                LOG_ERROR("Failed to create sandbox for pod", "pod=\"%s\" err=\"%s\"", who,
                          ck_error_msg(*err));
                event_emit_pod(rt->opts.recorder, pod, NULL, EVENT_WARNING,
                               "FailedCreatePodSandBox", "Failed to create pod sandbox: %s",
                               kuberuntime__cri_message(*err));
                return ck_error_wrap(err, "create sandbox");
        }
        int64_t t1 = fs_now_mono_ms();
        Runtime__V1__PodSandboxStatusResponse *st = NULL;
        if (cri_pod_sandbox_status(cri, *sandbox_id, &st, err) < 0) {
                LOG_ERROR("Failed to get pod sandbox status",
                          "pod=\"%s\" podSandboxID=\"%s\" err=\"%s\"", who, *sandbox_id,
                          ck_error_msg(*err));
                return ck_error_wrap(err, "create sandbox: status of the new sandbox");
        }
        if (!pod->host_network && st->status != NULL && st->status->network != NULL &&
            st->status->network->ip != NULL && st->status->network->ip[0] != '\0')
                *pod_ip = xstrdup(st->status->network->ip);
        runtime__v1__pod_sandbox_status_response__free_unpacked(st, NULL);
        LOG_INFO(2, "Created PodSandbox for pod",
                 "pod=\"%s\" podSandboxID=\"%s\" podIP=\"%s\" attempt=%" PRIu32
                 " duration=\"%" PRId64 "ms\"",
                 who, *sandbox_id, *pod_ip ? *pod_ip : "",
                 cfg->metadata ? cfg->metadata->attempt : 0, t1 - t0);
        return 0;
}

static void log_actions(const struct pod_actions *a, const char *who)
{
        if (!LOG_V(3))
                return;
        char start[256] = "", init[128] = "", eph[128] = "";
        for (size_t i = 0; i < a->n_containers_to_start; i++) {
                size_t l = strlen(start);
                snprintf(start + l, sizeof(start) - l, "%s%d", i ? "," : "",
                         a->containers_to_start[i]);
        }
        for (size_t i = 0; i < a->n_init_containers_to_start; i++) {
                size_t l = strlen(init);
                snprintf(init + l, sizeof(init) - l, "%s%d", i ? "," : "",
                         a->init_containers_to_start[i]);
        }
        for (size_t i = 0; i < a->n_ephemeral_containers_to_start; i++) {
                size_t l = strlen(eph);
                snprintf(eph + l, sizeof(eph) - l, "%s%d", i ? "," : "",
                         a->ephemeral_containers_to_start[i]);
        }
        LOG_INFO(3, "computePodActions got for pod",
                 "pod=\"%s\" killPod=%d createSandbox=%d attempt=%" PRIu32
                 " initContainersToStart=\"[%s]\" containersToStart=\"[%s]\" "
                 "ephemeralContainersToStart=\"[%s]\" containersToKill=%zu podDone=%d",
                 who, a->kill_pod, a->create_sandbox, a->attempt, init, start, eph,
                 a->n_containers_to_kill, a->pod_done);
}

json_t *kuberuntime_actuated_resources(struct kuberuntime *rt, const char *uid)
{
        return rt->opts.actuated ? alloc_state_get_pod(rt->opts.actuated, uid) : NULL;
}

bool kuberuntime_resize_in_progress(struct kuberuntime *rt, const struct pod *pod,
                                    const struct runtime_pod_status *status)
{
        if (rt->opts.actuated == NULL || status == NULL || pod_is_static(pod))
                return false;
        cleanup_json json_t *actuated = alloc_state_get_pod(rt->opts.actuated, pod->uid);
        const struct container *lists[] = {pod->containers, pod->init_containers};
        size_t counts[] = {pod->n_containers, pod->n_init_containers};
        for (size_t l = 0; l < 2; l++)
                for (size_t i = 0; i < counts[l]; i++) {
                        const struct container *c = &lists[l][i];
                        if (l == 1 && !container_is_sidecar(c))
                                continue;
                        const struct runtime_container_status *st =
                            runtime_pod_status_find(status, c->name);
                        if (st == NULL || st->state != CONTAINER_STATE_RUNNING)
                                continue;
                        struct alloc_resources want, have;
                        alloc_resources_from_spec(&c->resources, &want);
                        alloc_resources_from_json(json_object_get(actuated, c->name), &have);
                        if (!alloc_resources_same(&want, &have))
                                return true;
                }
        return false;
}

/* The resize step of a sync: a failure is the sync's result (the status
 * says it, the next sync tries again), not an abort of the other steps. */
static void resize(struct kuberuntime *rt, struct cri_client *cri, const struct pod *pod,
                   const char *sandbox_id, struct pod_actions *a,
                   const struct kuberuntime_pod_context *ctx,
                   struct kuberuntime_sync_result *result, const char *who)
{
        if (a->n_resizes == 0 && !a->update_pod_resources)
                return;
        cleanup_error ck_error_t err = NULL;
        if (kuberuntime__resize_pod(rt, cri, pod, sandbox_id, a, ctx ? ctx->cm : NULL, &err) < 0) {
                LOG_ERROR("Failed to resize pod in place", "pod=\"%s\" err=\"%s\"", who,
                          ck_error_msg(err));
                free(result->resize_error);
                result->resize_error = xstrdup(ck_error_msg(err));
                return;
        }
        LOG_INFO(2, "Pod resized in place", "pod=\"%s\" containers=%zu", who, a->n_resizes);
}

int kuberuntime_sync_pod(struct kuberuntime *rt, struct cri_client *cri, const struct pod *pod,
                         const struct runtime_pod_status *status,
                         const struct kuberuntime_pod_context *ctx,
                         struct kuberuntime_sync_result *result, ck_error_t *err)
{
        char who[320];
        kuberuntime__pod_ref(pod, who, sizeof(who));
        static const struct runtime_pod_status empty = {0};
        if (status == NULL)
                status = &empty;

        cleanup_json json_t *actuated = kuberuntime_actuated_resources(rt, pod->uid);
        if (actuated == NULL && rt->opts.actuated != NULL)
                actuated = json_object(); /* nothing recorded: every value 0, as upstream */
        struct pod_actions a;
        kuberuntime_compute_pod_actions(pod, status, ctx ? &ctx->probes : NULL, actuated, &a);
        log_actions(&a, who);

        Runtime__V1__PodSandboxConfig *sb_cfg = NULL;
        cleanup_free char *new_sandbox_id = NULL;
        cleanup_free char *new_ip = NULL;
        int ret = -1;

        /* 1: kill the pod when its sandbox changed or everything is done */
        if (a.kill_pod) {
                LOG_INFO(a.create_sandbox ? 2 : 4,
                         a.create_sandbox
                             ? "Stopping PodSandbox for pod, will start new one"
                             : "Stopping PodSandbox for pod, because all other containers "
                               "are dead",
                         "pod=\"%s\"", who);
                if (kuberuntime_kill_pod(rt, cri, pod, status, -1, err) < 0) {
                        LOG_ERROR("killPodWithSyncResult failed", "pod=\"%s\" err=\"%s\"", who,
                                  ck_error_msg(*err));
                        goto out;
                }
                if (a.create_sandbox)
                        purge_init_containers(rt, cri, pod, status, who);
        } else {
                /* 2: kill the containers that must go */
                for (size_t i = 0; i < a.n_containers_to_kill; i++) {
                        const struct container_to_kill *k = &a.containers_to_kill[i];
                        LOG_INFO(3, "Killing unwanted container for pod",
                                 "pod=\"%s\" containerName=\"%s\" containerID=\"%s\" reason=\"%s\"",
                                 who, k->name, k->container_id, k->reason);
                        if (kuberuntime__kill_container(rt, cri, pod, k->container_id, k->name,
                                                        k->reason, status->ip, err) < 0) {
                                ck_error_wrap(err, "pod %s", who);
                                goto out;
                        }
                }
        }
        prune_dead(rt, cri, status, &a, who);
        /* upstream's housekeeping GC of the crash loop backoff */
        backoff_gc(rt->crashloop, fs_now_mono_ms());

        if (!a.create_sandbox && a.n_init_containers_to_start == 0 &&
            a.n_containers_to_start == 0 && a.n_ephemeral_containers_to_start == 0) {
                resize(rt, cri, pod, a.sandbox_id, &a, ctx, result, who);
                ret = 0;
                goto out;
        }

        /* upstream: the pod's ResourceClaims prepared before its sandbox
         * is made */
        if (a.create_sandbox && dra_pod_has_claims(pod) &&
            dra_prepare_resources(ctx ? ctx->kube : NULL, pod, err) < 0) {
                LOG_ERROR("Failed to prepare dynamic resources", "pod=\"%s\" err=\"%s\"", who,
                          ck_error_msg(*err));
                event_emit_pod(rt->opts.recorder, pod, NULL, EVENT_WARNING,
                               "FailedPrepareDynamicResources",
                               "Failed to prepare dynamic resources: %s", ck_error_msg(*err));
                ck_error_wrap(err, "pod %s", who);
                goto out;
        }
        /* 3: the sandbox config (needed for pulls and CreateContainer too) */
        if (kuberuntime_sandbox_config(&rt->opts, pod, a.attempt, ctx ? ctx->cgroup_parent : "",
                                       &sb_cfg, err) < 0) {
                LOG_ERROR("GeneratePodSandboxConfig for pod failed", "pod=\"%s\" err=\"%s\"", who,
                          ck_error_msg(*err));
                /* upstream: the sandbox could not be made, whatever the step */
                if (a.create_sandbox)
                        event_emit_pod(rt->opts.recorder, pod, NULL, EVENT_WARNING,
                                       "FailedCreatePodSandBox", "Failed to create pod sandbox: %s",
                                       ck_error_msg(*err));
                ck_error_wrap(err, "pod %s: generate sandbox config", who);
                goto out;
        }
        const char *sandbox_id = a.sandbox_id;
        const char *pod_ip = status->ip;
        if (a.create_sandbox) {
                if (create_sandbox(rt, cri, pod, sb_cfg, who, &new_sandbox_id, &new_ip, err) < 0) {
                        ck_error_wrap(err, "pod %s", who);
                        goto out;
                }
                result->sandbox_created = true;
                sandbox_id = new_sandbox_id;
                pod_ip = new_ip;
        }
        if (sandbox_id == NULL) {
                ck_error_make(err, 0, "pod %s: no sandbox to start containers in", who);
                goto out;
        }

        /* 4: ephemeral containers, before the init containers: a debugging
         * container must start even when initialization is stuck */
        for (size_t i = 0; i < a.n_ephemeral_containers_to_start; i++) {
                const struct container *c =
                    &pod->ephemeral_containers[a.ephemeral_containers_to_start[i]];
                LOG_INFO(4, "Starting ephemeral container", "pod=\"%s\" container=\"%s\"", who,
                         c->name);
                kuberuntime__start_container(rt, cri, pod, c, status, sandbox_id, sb_cfg, pod_ip,
                                             ctx, result);
        }
        /* 5: init containers in order; a regular one that cannot start
         * stops the sync (the next one depends on it), a sidecar does not */
        for (size_t i = 0; i < a.n_init_containers_to_start; i++) {
                const struct container *c = &pod->init_containers[a.init_containers_to_start[i]];
                LOG_INFO(4, "Starting init container", "pod=\"%s\" container=\"%s\"", who, c->name);
                if (kuberuntime__start_container(rt, cri, pod, c, status, sandbox_id, sb_cfg,
                                                 pod_ip, ctx, result) < 0 &&
                    !(c->restart_policy != NULL && strcmp(c->restart_policy, "Always") == 0)) {
                        LOG_INFO(4,
                                 "Failed to initialize the pod, as the init container failed to "
                                 "start, aborting",
                                 "pod=\"%s\" container=\"%s\"", who, c->name);
                        ret = 0;
                        goto out;
                }
        }
        /* 6: in-place resizes, before the app containers start (upstream
         * SyncPod step 7) */
        resize(rt, cri, pod, sandbox_id, &a, ctx, result, who);
        /* 7: app containers */
        for (size_t i = 0; i < a.n_containers_to_start; i++) {
                const struct container *c = &pod->containers[a.containers_to_start[i]];
                kuberuntime__start_container(rt, cri, pod, c, status, sandbox_id, sb_cfg, pod_ip,
                                             ctx, result);
        }
        ret = 0;
out:
        if (sb_cfg != NULL)
                kuberuntime_sandbox_config_free(sb_cfg);
        pod_actions_clear(&a);
        return ret;
}
