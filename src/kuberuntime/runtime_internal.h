/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kuberuntime manager's own state and the helpers its files share
 * (runtime_manager.c, container_start.c, images.c, kill.c,
 * runtime_status.c).  Not part of the module's API.
 */
#ifndef CK_KUBERUNTIME_RUNTIME_INTERNAL_H
#define CK_KUBERUNTIME_RUNTIME_INTERNAL_H

#include "api/pod.h"
#include "cri/cri.h"
#include "kuberuntime/runtime.h"
#include "util/backoff.h"
#include "util/error.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

/* Upstream minimumGracePeriodInSeconds: every stop gets at least this. */
#define KR_MIN_GRACE_S 2

/* Upstream MaxContainerTerminationMessageLength / ...LogLength / ...LogLines.
 */
#define KR_TERMINATION_MESSAGE_MAX 4096
#define KR_TERMINATION_LOG_MAX 2048
#define KR_TERMINATION_LOG_LINES 80

/* Upstream readLastStringFromContainerLogs: the content of the last
 * KR_TERMINATION_LOG_LINES lines of the container's log (CRI or Docker's
 * json-file format, as the log reader takes them), of which the last
 * KR_TERMINATION_LOG_MAX bytes; or "Error on reading termination message
 * from logs: <cause>".  New string. */
char *kr_termination_log_tail(const char *path);

struct kuberuntime {
        /* deep copies of the options' strings */
        struct kuberuntime_options opts;

        struct backoff *crashloop;  /* "<pod uid>/<container name>" */
        struct backoff *image_pull; /* "<pod uid>/<image>" */

        /* image pulls in flight, and the last pull error per backoff key */
        pthread_mutex_t pull_lock;
        pthread_cond_t pull_cond;
        char **pulling;
        size_t n_pulling;
        struct kuberuntime_pull_error {
                char *key;     /* backoff key */
                char *msg;     /* "ErrImagePull: <cause>" */
                int64_t at_ms; /* when the pull failed (CLOCK_MONOTONIC) */
        } * pull_errs;
        size_t n_pull_errs;
};

/* upstream doPodResizeAction (resize.c): the in-place updates a's resizes
 * and the pod cgroup (cm may be NULL: none). */
struct pod_actions;
int kuberuntime__resize_pod(struct kuberuntime *rt, struct cri_client *cri, const struct pod *pod,
                            const char *sandbox_id, struct pod_actions *a, struct cm *cm,
                            ck_error_t *err);

/* "namespace/name" of a pod into buf (for logs and error context). */
const char *kuberuntime__pod_ref(const struct pod *pod, char *buf, size_t len);

/* <pod_logs_dir>/<ns>_<name>_<uid>, or NULL when a component could escape
 * the directory (empty, ".", "..", or containing '/').  New string. */
char *kuberuntime__pod_log_dir(const struct kuberuntime *rt, const char *ns, const char *name,
                               const char *uid);

/* The message of a CRI error without the "CRI <Method>: rpc error N: "
 * prefix, as upstream's grpc status Message(). Borrowed from err. */
const char *kuberuntime__cri_message(ck_error_t err);

/* Records (or replaces) why a container is waiting. */
void kuberuntime__set_waiting(struct kuberuntime_sync_result *r, const char *container,
                              const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Lowers r->next_retry_ms to at (CLOCK_MONOTONIC ms) if earlier or unset. */
void kuberuntime__retry_at(struct kuberuntime_sync_result *r, int64_t at_ms);

/* The crash loop backoff's key of a container (upstream getStableKey): the
 * pod, the container's name and its spec hash, so that a container whose
 * image changed starts with a fresh backoff (new string). */
char *kuberuntime__crashloop_key(const char *pod_uid, const char *name, uint64_t hash);

/* Go's time.Duration.String() of a millisecond count ("10s", "2m40s"). */
void kuberuntime__format_duration(int64_t ms, char *buf, size_t len);

/* ---- images.c ---- */

/* upstream EnsureImageExists: honours the pull policy and the image pull
 * backoff.  0 and *image_ref (new string, may be "") when the image is
 * there; < 0 when the container must wait: the reason (ErrImagePull,
 * ImagePullBackOff, ErrImageNeverPull, ImageInspectError,
 * InvalidImageName) is recorded in result. */
int kuberuntime__ensure_image(struct kuberuntime *rt, struct cri_client *cri, const struct pod *pod,
                              const struct container *c,
                              const Runtime__V1__PodSandboxConfig *sandbox_config,
                              const struct kuberuntime_pod_context *ctx, char **image_ref,
                              struct kuberuntime_sync_result *result);

/* Default tag as upstream applyDefaultImageTag: "busybox" -> "busybox:latest";
 * digests and explicit tags are kept.  New string. */
char *kuberuntime__image_with_default_tag(const char *image);

/* ---- container_start.c ---- */

/* upstream SyncPod's start(): backoff, image, config, create, start.
 * 0 when started; < 0 when the container waits (recorded in result). */
int kuberuntime__start_container(struct kuberuntime *rt, struct cri_client *cri,
                                 const struct pod *pod, const struct container *c,
                                 const struct runtime_pod_status *status, const char *sandbox_id,
                                 const Runtime__V1__PodSandboxConfig *sandbox_config,
                                 const char *pod_ip, const struct kuberuntime_pod_context *ctx,
                                 struct kuberuntime_sync_result *result);

/* ---- kill.c ---- */

/* Kill reason of a container whose postStart hook failed (upstream
 * reasonFailedPostStartHook); the others are compute.h KILL_REASON_*. */
#define KR_KILL_REASON_POST_START "FailedPostStartHook"

/* upstream killContainer: runs the container's preStop hook (if any, with
 * the grace period as its deadline), then StopContainer with what is left
 * of the grace period (at least KR_MIN_GRACE_S).  reason is a compute.h
 * KILL_REASON_* or KR_KILL_REASON_POST_START, may be NULL.  pod_ip (may be
 * NULL) is the target of an httpGet hook that names no host. */
int kuberuntime__kill_container(struct kuberuntime *rt, struct cri_client *cri,
                                const struct pod *pod, const char *container_id,
                                const char *container_name, const char *reason, const char *pod_ip,
                                ck_error_t *err);

/* Removes a container, its log file and its legacy log link (NOT_FOUND is
 * success); pod and ns name the pod it belongs to. */
int kuberuntime__remove_container(struct kuberuntime *rt, struct cri_client *cri,
                                  const struct runtime_container_status *st, const char *pod,
                                  const char *ns, ck_error_t *err);

/* ---- legacy_logs.c: /var/log/containers ---- */

/* The link <legacy_logs_dir>/<pod>_<ns>_<container>-<id>.log (new string),
 * NULL when there is no such directory or a name is not one path component. */
char *kuberuntime__legacy_log_link(const struct kuberuntime *rt, const char *container_id,
                                   const char *container, const char *pod, const char *ns);
/* Makes the link to log_path, when that file exists (upstream: after
 * CreateContainer).  Failures are logged. */
void kuberuntime__legacy_log_create(const struct kuberuntime *rt, const char *container_id,
                                    const char *container, const char *pod, const char *ns,
                                    const char *log_path);
void kuberuntime__legacy_log_remove(const struct kuberuntime *rt, const char *container_id,
                                    const char *container, const char *pod, const char *ns);

/* ---- hooks.c: lifecycle hooks and termination ordering ---- */

/* upstream handlerRunner.Run for a postStart hook, synchronously (exec
 * through CRI ExecSync on cri, httpGet against pod_ip, sleep).  The hook has
 * no deadline of its own: exec and httpGet are bounded by the runtime
 * request timeout.  0 on success; -1 when it failed, with *message (new
 * string) as upstream words it ("Exec lifecycle hook ([cmd]) for Container
 * ... failed - error: ...").  Any thread. */
int kuberuntime__run_post_start(const struct kuberuntime *rt, struct cri_client *cri,
                                const struct pod *pod, const struct container *c,
                                const char *container_id, const char *pod_ip, char **message);

/* A preStop hook still running after its deadline. */
struct kuberuntime_hook;

/* upstream executePreStopHook: runs c's preStop hook and waits for it at
 * most grace_s seconds.  Returns the milliseconds spent waiting.  An exec or
 * httpGet hook runs on its own thread with its own CRI connection; when it
 * outlives the deadline, *pending is set and the caller hands it to
 * kuberuntime__hook_finish once the container is stopped (the hook ends
 * with its container).  pod, c, container_id and pod_ip are borrowed until
 * then.  Failures are logged, never returned (as upstream). */
int64_t kuberuntime__run_pre_stop(const struct kuberuntime *rt, const struct pod *pod,
                                  const struct container *c, const char *container_id,
                                  const char *pod_ip, int64_t grace_s,
                                  struct kuberuntime_hook **pending);

/* Waits for a pending hook to end, logs its outcome, frees it.  NULL is a
 * no-op. */
void kuberuntime__hook_finish(struct kuberuntime_hook *h);

/* upstream restoreSpecsFromContainerLabels, for a container whose pod spec
 * is gone (an orphan): *grace_s from its annotations (the deletion grace
 * period, else the termination grace period, else KR_MIN_GRACE_S) and, when
 * it has a preStop hook, a pod (new reference: pod_unref) whose only
 * container carries that hook and its ports; else NULL. */
struct pod *kuberuntime__orphan_spec(struct cri_client *cri, const char *container_id,
                                     int64_t *grace_s);

/* Grace accounting of upstream killContainer: what is left of grace_s after
 * spent_ms (whole seconds are subtracted, the fraction is not, as upstream
 * truncates); may be <= 0. */
int64_t kuberuntime__grace_left(int64_t grace_s, int64_t spent_ms);

/* Seconds (a grace period, a sleep) as milliseconds, saturated so that a
 * deadline computed from them cannot overflow. */
static inline int64_t kuberuntime__s_to_ms(int64_t s)
{
        const int64_t max_s = (int64_t)1 << 40; /* about 35,000 years */
        return (s > max_s ? max_s : s < -max_s ? -max_s : s) * 1000;
}

/* The grace period StopContainer gets: at least KR_MIN_GRACE_S. */
int64_t kuberuntime__stop_grace(int64_t grace_s);

/* upstream newTerminationOrdering (sidecar containers): given the names of
 * the n running containers of a pod being killed, which must be stopped
 * before which.  Returns a new n*n matrix, waits[i * n + j] true when
 * container i is stopped only after container j (or when its grace period
 * ran out): a sidecar (an init container with restartPolicy Always) waits
 * for every running app container and for the next sidecar declared after
 * it, so sidecars stop after the app containers, in reverse order.  App
 * containers, regular init containers and names not in the spec wait for
 * nothing.  NULL when no ordering applies (pod NULL, or no sidecar in the
 * spec).  Pure. */
bool *kuberuntime__termination_order(const struct pod *pod, const char *const *names, size_t n);

#endif
