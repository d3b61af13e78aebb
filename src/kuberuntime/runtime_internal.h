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

/* Go's time.Duration.String() of a millisecond count ("10s", "2m40s"). */
void kuberuntime__format_duration(int64_t ms, char *buf, size_t len);

/* CLOCK_MONOTONIC ms / CLOCK_REALTIME ns. */
int64_t kuberuntime__now_mono_ms(void);
int64_t kuberuntime__now_real_ns(void);

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

/* Stops one container with the grace period upstream would use for it
 * (reason is a compute.h KILL_REASON_*, may be NULL). */
int kuberuntime__kill_container(struct kuberuntime *rt, struct cri_client *cri,
                                const struct pod *pod, const char *container_id,
                                const char *container_name, const char *reason, ck_error_t *err);

/* Removes a container and its log file (NOT_FOUND is success). */
int kuberuntime__remove_container(struct kuberuntime *rt, struct cri_client *cri,
                                  const struct runtime_container_status *st, ck_error_t *err);

#endif
