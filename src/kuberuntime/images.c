/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Making sure a container's image is there (upstream
 * pkg/kubelet/images/image_manager.go EnsureImageExists and
 * kuberuntime_image.go PullImage): pull policy, pull credentials, the image
 * pull backoff (ErrImagePull -> ImagePullBackOff), and at most one pull of
 * an image at a time (all pulls one at a time with serialize_image_pulls).
 */
#include "kuberuntime/runtime_internal.h"
#include "util/fsutil.h"
#include "util/cleanup.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

char *kuberuntime__image_with_default_tag(const char *image)
{
        const char *slash = strrchr(image, '/');
        const char *last = slash ? slash + 1 : image;
        if (strchr(image, '@') != NULL || strchr(last, ':') != NULL)
                return xstrdup(image);
        return xasprintf("%s:latest", image);
}

/* ---- pulls in flight ---- */

static bool pulling_locked(const struct kuberuntime *rt, const char *image)
{
        if (rt->opts.serialize_image_pulls)
                return rt->n_pulling > 0;
        for (size_t i = 0; i < rt->n_pulling; i++)
                if (strcmp(rt->pulling[i], image) == 0)
                        return true;
        return false;
}

static void pull_begin(struct kuberuntime *rt, const char *image)
{
        pthread_mutex_lock(&rt->pull_lock);
        while (pulling_locked(rt, image))
                pthread_cond_wait(&rt->pull_cond, &rt->pull_lock);
        rt->pulling = xrealloc(rt->pulling, (rt->n_pulling + 1) * sizeof(char *));
        rt->pulling[rt->n_pulling++] = xstrdup(image);
        pthread_mutex_unlock(&rt->pull_lock);
}

static void pull_end(struct kuberuntime *rt, const char *image)
{
        pthread_mutex_lock(&rt->pull_lock);
        for (size_t i = 0; i < rt->n_pulling; i++) {
                if (strcmp(rt->pulling[i], image) == 0) {
                        free(rt->pulling[i]);
                        rt->pulling[i] = rt->pulling[--rt->n_pulling];
                        break;
                }
        }
        pthread_cond_broadcast(&rt->pull_cond);
        pthread_mutex_unlock(&rt->pull_lock);
}

/* The last pull error per backoff key (upstream prevPullErrMsg): shown with
 * ImagePullBackOff so that the user sees why, and its time tells when the
 * backoff ends.  msg NULL forgets the key.  Entries older than the longest
 * backoff are dropped on the way (pods that went away). */
static void pull_error_set(struct kuberuntime *rt, const char *key, const char *msg, int64_t now_ms)
{
        int64_t stale =
            2 * (rt->opts.image_backoff_max_ms > 0 ? rt->opts.image_backoff_max_ms : 300000);
        pthread_mutex_lock(&rt->pull_lock);
        for (size_t i = 0; i < rt->n_pull_errs;) {
                struct kuberuntime_pull_error *e = &rt->pull_errs[i];
                if (strcmp(e->key, key) == 0 || now_ms - e->at_ms > stale) {
                        free(e->key);
                        free(e->msg);
                        *e = rt->pull_errs[--rt->n_pull_errs];
                        continue;
                }
                i++;
        }
        if (msg != NULL) {
                rt->pull_errs =
                    xrealloc(rt->pull_errs, (rt->n_pull_errs + 1) * sizeof(*rt->pull_errs));
                rt->pull_errs[rt->n_pull_errs++] = (struct kuberuntime_pull_error){
                    .key = xstrdup(key), .msg = xstrdup(msg), .at_ms = now_ms};
        }
        pthread_mutex_unlock(&rt->pull_lock);
}

/* The stored message (new string) and failure time, or NULL. */
static char *pull_error_get(struct kuberuntime *rt, const char *key, int64_t *at_ms)
{
        char *msg = NULL;
        pthread_mutex_lock(&rt->pull_lock);
        for (size_t i = 0; i < rt->n_pull_errs && msg == NULL; i++) {
                if (strcmp(rt->pull_errs[i].key, key) == 0) {
                        msg = xstrdup(rt->pull_errs[i].msg);
                        *at_ms = rt->pull_errs[i].at_ms;
                }
        }
        pthread_mutex_unlock(&rt->pull_lock);
        return msg;
}

/* ---- the policy ---- */

/* ImageStatus: 1 and the image id when present, 0 when absent. */
static int image_present(struct cri_client *cri, const char *image, char **id, ck_error_t *err)
{
        Runtime__V1__ImageStatusResponse *st = NULL;
        if (cri_image_status(cri, image, &st, err) < 0)
                return -1;
        int present = st->image != NULL;
        if (present)
                *id = xstrdup(st->image->id ? st->image->id : "");
        runtime__v1__image_status_response__free_unpacked(st, NULL);
        return present;
}

/* Pulls with each credential in turn, then anonymously. */
static int pull(struct cri_client *cri, const char *image,
                const Runtime__V1__PodSandboxConfig *sandbox_config,
                const struct kuberuntime_pod_context *ctx, char **image_ref, ck_error_t *err)
{
        size_t n = ctx != NULL ? ctx->n_pull_auths : 0;
        for (size_t i = 0; i < n; i++) {
                if (cri_pull_image(cri, image, ctx->pull_auths[i], sandbox_config, image_ref,
                                   err) == 0)
                        return 0;
                LOG_INFO(4, "Pull with credentials failed, trying the next",
                         "image=\"%s\" err=\"%s\"", image, ck_error_msg(*err));
                ck_error_release(err);
        }
        return cri_pull_image(cri, image, NULL, sandbox_config, image_ref, err);
}

int kuberuntime__ensure_image(struct kuberuntime *rt, struct cri_client *cri, const struct pod *pod,
                              const struct container *c,
                              const Runtime__V1__PodSandboxConfig *sandbox_config,
                              const struct kuberuntime_pod_context *ctx, char **image_ref,
                              struct kuberuntime_sync_result *result)
{
        char who[320];
        kuberuntime__pod_ref(pod, who, sizeof(who));
        if (c->image == NULL || c->image[0] == '\0') {
                kuberuntime__set_waiting(
                    result, c->name, "InvalidImageName",
                    "Failed to apply default image tag \"\": empty image name");
                return -1;
        }
        cleanup_free char *image = kuberuntime__image_with_default_tag(c->image);
        cleanup_error ck_error_t err = NULL;

        if (c->image_pull_policy != PULL_ALWAYS) {
                char *id = NULL;
                int present = image_present(cri, image, &id, &err);
                if (present < 0) {
                        LOG_WARN("Failed to inspect image",
                                 "pod=\"%s\" container=\"%s\" image=\"%s\" err=\"%s\"", who,
                                 c->name, image, ck_error_msg(err));
                        kuberuntime__set_waiting(result, c->name, "ImageInspectError",
                                                 "Failed to inspect image \"%s\": %s", c->image,
                                                 kuberuntime__cri_message(err));
                        return -1;
                }
                if (present) {
                        LOG_INFO(4, "Container image already present on machine",
                                 "pod=\"%s\" container=\"%s\" image=\"%s\"", who, c->name,
                                 c->image);
                        *image_ref = id;
                        return 0;
                }
                if (c->image_pull_policy == PULL_NEVER) {
                        LOG_WARN("Container image is not present with pull policy of Never",
                                 "pod=\"%s\" container=\"%s\" image=\"%s\"", who, c->name,
                                 c->image);
                        kuberuntime__set_waiting(
                            result, c->name, "ErrImageNeverPull",
                            "Container image \"%s\" is not present with pull policy of Never",
                            c->image);
                        return -1;
                }
        }

        cleanup_free char *key = xasprintf("%s/%s", pod->uid, image);
        int64_t now = fs_now_mono_ms();
        if (backoff_is_in_backoff_since_update(rt->image_pull, key, now)) {
                int64_t failed_at = now;
                cleanup_free char *prev = pull_error_get(rt, key, &failed_at);
                LOG_INFO(2, "Back-off pulling image", "pod=\"%s\" container=\"%s\" image=\"%s\"",
                         who, c->name, c->image);
                kuberuntime__set_waiting(result, c->name, "ImagePullBackOff",
                                         "Back-off pulling image \"%s\"%s%s", c->image,
                                         prev ? ": " : "", prev ? prev : "");
                kuberuntime__retry_at(result, failed_at + backoff_get(rt->image_pull, key));
                return -1;
        }
        pull_error_set(rt, key, NULL, now);

        LOG_INFO(1, "Pulling image", "pod=\"%s\" container=\"%s\" image=\"%s\"", who, c->name,
                 c->image);
        int64_t t0 = fs_now_mono_ms();
        pull_begin(rt, image);
        char *ref = NULL;
        int r = pull(cri, image, sandbox_config, ctx, &ref, &err);
        pull_end(rt, image);
        int64_t t1 = fs_now_mono_ms();
        if (r < 0) {
                backoff_next(rt->image_pull, key, t1);
                const char *msg = kuberuntime__cri_message(err);
                cleanup_free char *stored = xasprintf("ErrImagePull: %s", msg);
                pull_error_set(rt, key, stored, t1);
                LOG_WARN("Failed to pull image",
                         "pod=\"%s\" container=\"%s\" image=\"%s\" err=\"%s\"", who, c->name,
                         c->image, ck_error_msg(err));
                kuberuntime__set_waiting(result, c->name, "ErrImagePull", "%s", msg);
                kuberuntime__retry_at(result, t1 + backoff_get(rt->image_pull, key));
                return -1;
        }
        LOG_INFO(1, "Successfully pulled image",
                 "pod=\"%s\" container=\"%s\" image=\"%s\" duration=\"%.3fs\"", who, c->name,
                 c->image, (double)(t1 - t0) / 1000.0);
        backoff_gc(rt->image_pull, t1);
        *image_ref = ref ? ref : xstrdup("");
        return 0;
}
