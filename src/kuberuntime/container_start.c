/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Starting one container (upstream SyncPod's start() with doBackOff, and
 * kuberuntime_container.go startContainer): crash loop backoff, the image,
 * the restart count, the config, CreateContainer, StartContainer.  Every
 * way it can fail leaves the container waiting with upstream's reason.
 */
#include "allocation/allocation.h"
#include "kuberuntime/builders.h"
#include "kuberuntime/runtime_internal.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* upstream recordContainerEvent: an event about container c of the pod,
 * with the container's ID (when known) replaced by its name in the message
 * so that the repeats of a failure aggregate. */
__attribute__((format(printf, 7, 8))) static void
container_event(const struct kuberuntime *rt, const struct pod *pod, const struct container *c,
                const char *container_id, const char *type, const char *reason, const char *fmt,
                ...)
{
        va_list ap;
        va_start(ap, fmt);
        cleanup_free char *msg = xvasprintf(fmt, ap);
        va_end(ap);
        size_t idl = container_id ? strlen(container_id) : 0;
        if (idl > 0 && strstr(msg, container_id) != NULL) {
                size_t nl = strlen(c->name);
                size_t cap = strlen(msg) * (nl > idl ? nl : idl) / idl + nl + 1;
                char *out = xmalloc(cap), *o = out;
                for (const char *p = msg, *hit; *p; p = hit + idl) {
                        hit = strstr(p, container_id);
                        if (hit == NULL) {
                                o = stpcpy(o, p);
                                break;
                        }
                        o = mempcpy(o, p, (size_t)(hit - p));
                        o = stpcpy(o, c->name);
                }
                *o = '\0';
                free(msg);
                msg = out;
        }
        event_emit_pod(rt->opts.recorder, pod, c->name, type, reason, "%s", msg);
}

/* The reason a container waits for, as set by the step that failed. */
static const char *waiting_reason(const struct kuberuntime_sync_result *r, const char *name)
{
        for (size_t i = 0; i < r->n_waiting; i++)
                if (strcmp(r->waiting[i].container_name, name) == 0)
                        return r->waiting[i].reason;
        return NULL;
}

/* The newest exited instance of a container (upstream doBackOff looks at
 * the first exited one in the newest-first list). */
static const struct runtime_container_status *last_exited(const struct runtime_pod_status *s,
                                                          const char *name)
{
        for (size_t i = 0; s != NULL && i < s->n_containers; i++)
                if (s->containers[i].state == CONTAINER_STATE_EXITED && s->containers[i].name &&
                    strcmp(s->containers[i].name, name) == 0)
                        return &s->containers[i];
        return NULL;
}

/* upstream doBackOff: true (and the container waits) while the container's
 * last exit is within its crash loop backoff; else the backoff advances. */
static bool in_crashloop_backoff(struct kuberuntime *rt, const struct pod *pod,
                                 const struct container *c, const struct runtime_pod_status *status,
                                 const char *who, struct kuberuntime_sync_result *result)
{
        const struct runtime_container_status *st = last_exited(status, c->name);
        if (st == NULL)
                return false;
        cleanup_free char *key = kuberuntime__crashloop_key(pod->uid, c->name, c->hash);
        int64_t now = fs_now_mono_ms();
        /* the finish time on the monotonic clock the backoff uses */
        int64_t finished = st->finished_at > 0
                               ? now - (fs_now_real_ns() - st->finished_at) / 1000000
                               : INT64_MIN / 4;
        if (backoff_is_in_backoff_since(rt->crashloop, key, finished, now)) {
                int64_t delay = backoff_get(rt->crashloop, key);
                char d[32];
                kuberuntime__format_duration(delay, d, sizeof(d));
                kuberuntime__set_waiting(result, c->name, "CrashLoopBackOff",
                                         "back-off %s restarting failed container=%s pod=%s_%s(%s)",
                                         d, c->name, pod->name, pod->namespace, pod->uid);
                kuberuntime__retry_at(result, finished + delay);
                LOG_INFO(3, "Back-off restarting failed container",
                         "pod=\"%s\" container=\"%s\" backoff=\"%s\"", who, c->name, d);
                event_emit_pod(rt->opts.recorder, pod, c->name, EVENT_WARNING, "BackOff",
                               "Back-off restarting failed container %s in pod %s_%s(%s)", c->name,
                               pod->name, pod->namespace, pod->uid);
                return true;
        }
        backoff_next(rt->crashloop, key, now);
        return false;
}

/* upstream calcRestartCountByLogDir: after the runtime lost its state (a
 * reboot), continue from the newest <n>.log so no log is overwritten. */
static int32_t restart_count_from_logs(const struct kuberuntime *rt, const struct pod *pod,
                                       const char *container)
{
        cleanup_free char *dir = kuberuntime__pod_log_dir(rt, pod->namespace, pod->name, pod->uid);
        if (dir == NULL || strchr(container, '/') != NULL)
                return 0;
        cleanup_free char *path = xasprintf("%s/%s", dir, container);
        int fd =
            TEMP_FAILURE_RETRY_INT(open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (fd < 0)
                return 0;
        DIR *d = fdopendir(fd);
        if (d == NULL) {
                close(fd);
                return 0;
        }
        int32_t count = 0;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
                if (e->d_type == DT_DIR)
                        continue;
                char *end;
                errno = 0;
                long n = strtol(e->d_name, &end, 10);
                if (end == e->d_name || e->d_name[0] < '0' || e->d_name[0] > '9' || errno != 0 ||
                    strncmp(end, ".log", 4) != 0 || n >= INT32_MAX)
                        continue;
                if (n + 1 > count)
                        count = (int32_t)n + 1;
        }
        closedir(d);
        return count;
}

/* Runs the image as resolved (upstream passes imageRef), keeping what the
 * user wrote in user_specified_image. */
static void use_image_ref(Runtime__V1__ContainerConfig *cfg, const struct container *c,
                          const char *image_ref)
{
        if (cfg->image == NULL || image_ref == NULL || image_ref[0] == '\0')
                return;
        if (cfg->image->image != NULL && cfg->image->image != protobuf_c_empty_string)
                free(cfg->image->image);
        cfg->image->image = xstrdup(image_ref);
        if (cfg->image->user_specified_image == NULL ||
            cfg->image->user_specified_image == protobuf_c_empty_string ||
            cfg->image->user_specified_image[0] == '\0') {
                if (cfg->image->user_specified_image != NULL &&
                    cfg->image->user_specified_image != protobuf_c_empty_string)
                        free(cfg->image->user_specified_image);
                cfg->image->user_specified_image = xstrdup(c->image);
        }
}

/* runAsNonRoot without a runAsUser: the image's user, from ImageStatus of
 * the spec's image (upstream generateContainerConfig's getImageUser). */
static int verify_image_user(struct cri_client *cri, const struct pod *pod,
                             const struct container *c, ck_error_t *err)
{
        if (!kuberuntime_needs_image_user(pod, c))
                return 0;
        Runtime__V1__ImageStatusResponse *st = NULL;
        if (cri_image_status(cri, c->image ? c->image : "", &st, err) < 0)
                return -1;
        int r = kuberuntime_verify_image_user(pod, c, st->image, err);
        runtime__v1__image_status_response__free_unpacked(st, NULL);
        return r;
}

/* upstream startSpec.getTargetID and generateLinuxContainerConfig: an
 * ephemeral container with a target joins that container's process
 * namespace (when the pod does not share one already). */
static int join_target(Runtime__V1__ContainerConfig *cfg, const struct container *c,
                       const struct runtime_pod_status *status, ck_error_t *err)
{
        if (c->target_container_name == NULL || c->target_container_name[0] == '\0')
                return 0;
        const struct runtime_container_status *t =
            runtime_pod_status_find(status, c->target_container_name);
        if (t == NULL || t->state != CONTAINER_STATE_RUNNING || t->id == NULL)
                return ck_error_make(err, 0, "unable to find target container %s",
                                     c->target_container_name);
        Runtime__V1__NamespaceOption *ns = cfg->linux && cfg->linux->security_context
                                               ? cfg->linux->security_context->namespace_options
                                               : NULL;
        if (ns != NULL && ns->pid == RUNTIME__V1__NAMESPACE_MODE__CONTAINER) {
                /* target_id is still protobuf-c's shared empty default */
                ns->pid = RUNTIME__V1__NAMESPACE_MODE__TARGET;
                ns->target_id = xstrdup(t->id);
        }
        return 0;
}

/* What the new container was given (upstream setActuatedContainerResources
 * after CreateContainer): the baseline of its next in-place resize. */
static void record_actuated(struct kuberuntime *rt, const struct pod *pod,
                            const struct container *c)
{
        if (rt->opts.actuated == NULL || c->target_container_name != NULL ||
            pod_find_ephemeral_container(pod, c->name) != NULL)
                return;
        struct alloc_resources r;
        alloc_resources_from_spec(&c->resources, &r);
        cleanup_json json_t *j = alloc_resources_to_json(&r);
        cleanup_error ck_error_t err = NULL;
        if (alloc_state_set(rt->opts.actuated, pod->uid, c->name, j, &err) < 0)
                LOG_ERROR("Failed to record the container's resources",
                          "pod=\"%s\" container=\"%s\" err=\"%s\"", pod_full_name(pod), c->name,
                          ck_error_msg(err));
}

int kuberuntime__start_container(struct kuberuntime *rt, struct cri_client *cri,
                                 const struct pod *pod, const struct container *c,
                                 const struct runtime_pod_status *status, const char *sandbox_id,
                                 const Runtime__V1__PodSandboxConfig *sandbox_config,
                                 const char *pod_ip, const struct kuberuntime_pod_context *ctx,
                                 struct kuberuntime_sync_result *result)
{
        char who[320];
        kuberuntime__pod_ref(pod, who, sizeof(who));

        if (in_crashloop_backoff(rt, pod, c, status, who, result))
                return -1;

        cleanup_free char *image_ref = NULL;
        if (kuberuntime__ensure_image(rt, cri, pod, c, sandbox_config, ctx, &image_ref, result) <
            0) {
                /* upstream: the error EnsureImageExists returns is named
                 * as the waiting reason (ErrImagePull, ImagePullBackOff...) */
                const char *why = waiting_reason(result, c->name);
                container_event(rt, pod, c, NULL, EVENT_WARNING, "Failed", "Error: %s",
                                why ? why : "ErrImagePull");
                return -1;
        }

        const struct runtime_container_status *last = runtime_pod_status_find(status, c->name);
        int32_t restart_count =
            last != NULL ? last->restart_count + 1 : restart_count_from_logs(rt, pod, c->name);

        cleanup_error ck_error_t err = NULL;
        /* the container's log directory (upstream generateContainerConfig) */
        cleanup_free char *pod_logs =
            kuberuntime__pod_log_dir(rt, pod->namespace, pod->name, pod->uid);
        cleanup_free char *log_dir =
            pod_logs && strchr(c->name, '/') == NULL ? xasprintf("%s/%s", pod_logs, c->name) : NULL;
        if (log_dir == NULL || fs_mkdir_p(log_dir, 0755, &err) < 0) {
                if (log_dir == NULL)
                        ck_error_make(&err, EINVAL, "invalid container log directory");
                LOG_ERROR("Failed to create container log directory",
                          "pod=\"%s\" container=\"%s\" err=\"%s\"", who, c->name,
                          ck_error_msg(err));
                kuberuntime__set_waiting(result, c->name, "CreateContainerConfigError",
                                         "create container log directory: %s", ck_error_msg(err));
                container_event(rt, pod, c, NULL, EVENT_WARNING, "Failed",
                                "Error: create container log directory: %s", ck_error_msg(err));
                return -1;
        }
        Runtime__V1__ContainerConfig *cfg = NULL;
        if (kuberuntime_container_config_with_objects(&rt->opts, pod, c, restart_count, pod_ip,
                                                      ctx ? ctx->volume_paths : NULL,
                                                      ctx ? ctx->kube : NULL, &cfg, &err) < 0 ||
            verify_image_user(cri, pod, c, &err) < 0 || join_target(cfg, c, status, &err) < 0) {
                LOG_ERROR("Failed to generate container config",
                          "pod=\"%s\" container=\"%s\" err=\"%s\"", who, c->name,
                          ck_error_msg(err));
                kuberuntime__set_waiting(result, c->name, "CreateContainerConfigError", "%s",
                                         ck_error_msg(err));
                container_event(rt, pod, c, NULL, EVENT_WARNING, "Failed", "Error: %s",
                                ck_error_msg(err));
                kuberuntime_container_config_free(cfg);
                return -1;
        }
        use_image_ref(cfg, c, image_ref);

        LOG_INFO(4, "Creating container in pod",
                 "pod=\"%s\" container=\"%s\" restartCount=%" PRId32, who, c->name, restart_count);
        cleanup_free char *id = NULL;
        int64_t t0 = fs_now_mono_ms();
        int r = cri_create_container(cri, sandbox_id, cfg, sandbox_config, &id, &err);
        kuberuntime_container_config_free(cfg);
        if (r < 0) {
                LOG_ERROR("Failed to create container", "pod=\"%s\" container=\"%s\" err=\"%s\"",
                          who, c->name, ck_error_msg(err));
                kuberuntime__set_waiting(result, c->name, "CreateContainerError", "%s",
                                         kuberuntime__cri_message(err));
                container_event(rt, pod, c, id, EVENT_WARNING, "Failed", "Error: %s",
                                kuberuntime__cri_message(err));
                return -1;
        }
        int64_t t1 = fs_now_mono_ms();
        LOG_INFO(3, "Created container", "pod=\"%s\" container=\"%s\" containerID=\"%s\"", who,
                 c->name, id);
        record_actuated(rt, pod, c);
        container_event(rt, pod, c, id, EVENT_NORMAL, "Created", "Container created");
        if (cri_start_container(cri, id, &err) < 0) {
                LOG_ERROR("Failed to start container",
                          "pod=\"%s\" container=\"%s\" containerID=\"%s\" err=\"%s\"", who, c->name,
                          id, ck_error_msg(err));
                kuberuntime__set_waiting(result, c->name, "RunContainerError", "%s",
                                         kuberuntime__cri_message(err));
                container_event(rt, pod, c, id, EVENT_WARNING, "Failed", "Error: %s",
                                kuberuntime__cri_message(err));
                return -1;
        }
        int64_t t2 = fs_now_mono_ms();
        LOG_INFO(2, "Started container",
                 "pod=\"%s\" container=\"%s\" containerID=\"%s\" restartCount=%" PRId32
                 " create=\"%" PRId64 "ms\" start=\"%" PRId64 "ms\"",
                 who, c->name, id, restart_count, t1 - t0, t2 - t1);
        container_event(rt, pod, c, id, EVENT_NORMAL, "Started", "Container started");
        /* upstream startContainer step 3: the legacy link, once started
         * (containerd opens the log file in StartContainer) */
        cleanup_free char *log_path =
            xasprintf("%s/%s/%" PRId32 ".log", pod_logs, c->name, restart_count);
        kuberuntime__legacy_log_create(rt, id, c->name, pod->name, pod->namespace, log_path);

        /* upstream startContainer step 4: the postStart hook, synchronously;
         * when it fails the container is killed and waits to be restarted
         * (restartPolicy, crash loop backoff) */
        cleanup_free char *hook_msg = NULL;
        if (kuberuntime__run_post_start(rt, cri, pod, c, id, pod_ip, &hook_msg) < 0) {
                if (kuberuntime__kill_container(rt, cri, pod, id, c->name,
                                                KR_KILL_REASON_POST_START, pod_ip, &err) < 0)
                        LOG_ERROR("Failed to kill container",
                                  "pod=\"%s\" podUID=\"%s\" containerName=\"%s\" "
                                  "containerID=\"%s\" err=\"%s\"",
                                  who, pod->uid, c->name, id, ck_error_msg(err));
                kuberuntime__set_waiting(result, c->name, "PostStartHookError", "%s", hook_msg);
                return -1;
        }
        return 0;
}
