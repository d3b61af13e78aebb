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

#include <inttypes.h>
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

/* ImageStatus: 1 and the image id (and size) when present, 0 when absent. */
static int image_present(struct cri_client *cri, const char *image, char **id, uint64_t *size,
                         ck_error_t *err)
{
        Runtime__V1__ImageStatusResponse *st = NULL;
        if (cri_image_status(cri, image, &st, err) < 0)
                return -1;
        int present = st->image != NULL;
        if (present) {
                if (id != NULL)
                        *id = xstrdup(st->image->id ? st->image->id : "");
                if (size != NULL)
                        *size = st->image->size;
        }
        runtime__v1__image_status_response__free_unpacked(st, NULL);
        return present;
}

static const char *const grpc_code_names[] = {
    "OK",       "Canceled",        "Unknown",          "InvalidArgument",   "DeadlineExceeded",
    "NotFound", "AlreadyExists",   "PermissionDenied", "ResourceExhausted", "FailedPrecondition",
    "Aborted",  "OutOfRange",      "Unimplemented",    "Internal",          "Unavailable",
    "DataLoss", "Unauthenticated",
};

/* A failed PullImage as upstream's CRI client words it: the runtime's own
 * message for an Unknown status, else Go's "rpc error: code = NotFound
 * desc = ...".  New string. */
static char *pull_error_text(ck_error_t err)
{
        const char *msg = kuberuntime__cri_message(err);
        int code = err != NULL ? err->code : 0;
        if (msg == ck_error_msg(err) || code <= 0 || code == 2 ||
            code >= (int)ARRAY_SIZE(grpc_code_names))
                return xstrdup(msg);
        return xasprintf("rpc error: code = %s desc = %s", grpc_code_names[code], msg);
}

/* Whether ", "-joined list already holds item. */
static bool has_item(const char *list, const char *item)
{
        size_t l = strlen(item);
        for (const char *p = list; (p = strstr(p, item)) != NULL; p++)
                if ((p == list || (p >= list + 2 && strncmp(p - 2, ", ", 2) == 0)) &&
                    (p[l] == '\0' || strncmp(p + l, ", ", 2) == 0))
                        return true;
        return false;
}

/* upstream kuberuntime PullImage: each matching credential in turn (the
 * first that works wins), or anonymously when none matches.  On failure
 * *why is the error text (new string): with several credentials, all of
 * their errors as upstream's aggregate "[e1, e2]". */
static int pull(struct cri_client *cri, const char *image,
                const Runtime__V1__PodSandboxConfig *sandbox_config,
                Runtime__V1__AuthConfig *const *auths, size_t n_auths, char **image_ref, char **why)
{
        cleanup_error ck_error_t err = NULL;
        if (n_auths == 0) {
                LOG_INFO(3, "Pulling image without credentials", "image=\"%s\"", image);
                if (cri_pull_image(cri, image, NULL, sandbox_config, image_ref, &err) == 0)
                        return 0;
                *why = pull_error_text(err);
                return -1;
        }
        /* upstream's aggregate error: distinct messages, "[e1, e2]" when
         * more than one */
        char *all = NULL;
        size_t distinct = 0;
        for (size_t i = 0; i < n_auths; i++) {
                if (cri_pull_image(cri, image, auths[i], sandbox_config, image_ref, &err) == 0) {
                        free(all);
                        return 0;
                }
                cleanup_free char *text = pull_error_text(err);
                ck_error_release(&err);
                LOG_INFO(4, "Pull with credentials failed", "image=\"%s\" err=\"%s\"", image, text);
                if (all != NULL && has_item(all, text))
                        continue;
                char *next = all == NULL ? xstrdup(text) : xasprintf("%s, %s", all, text);
                free(all);
                all = next;
                distinct++;
        }
        if (distinct == 1) {
                *why = all;
        } else {
                *why = xasprintf("[%s]", all);
                free(all);
        }
        return -1;
}

/* upstream evalCRIPullErr: the waiting reason and message of a failed pull
 * (the runtime's RegistryUnavailable and SignatureValidationFailed errors
 * keep their reason).  *msg is a new string. */
static const char *pull_failure(const char *image, const char *why, char **msg)
{
        static const struct {
                const char *reason, *what;
        } known[] = {
            {"RegistryUnavailable", "the registry is unavailable"},
            {"SignatureValidationFailed", "the signature validation failed"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(known); i++) {
                size_t l = strlen(known[i].reason);
                if (strncmp(why, known[i].reason, l) == 0) {
                        *msg = xasprintf("image pull failed for %s because %s%s", image,
                                         known[i].what, why + l);
                        return known[i].reason;
                }
        }
        *msg = xstrdup(why);
        return "ErrImagePull";
}

/* The container waits: its reason and message in result (the caller,
 * container_start.c, records upstream startContainer's "Error: <reason>"
 * event). */
static void image_wait(const struct container *c, struct kuberuntime_sync_result *result,
                       const char *reason, const char *message)
{
        kuberuntime__set_waiting(result, c->name, reason, "%s", message);
}

int kuberuntime__ensure_image(struct kuberuntime *rt, struct cri_client *cri, const struct pod *pod,
                              const struct container *c,
                              const Runtime__V1__PodSandboxConfig *sandbox_config,
                              const struct kuberuntime_pod_context *ctx, char **image_ref,
                              struct kuberuntime_sync_result *result)
{
        struct event_recorder *rec = rt->opts.recorder;
        char who[320];
        kuberuntime__pod_ref(pod, who, sizeof(who));
        if (c->image == NULL || c->image[0] == '\0') {
                const char *msg = "Failed to apply default image tag \"\": empty image name";
                event_emit_pod(rec, pod, c->name, EVENT_WARNING, "InspectFailed", "%s", msg);
                image_wait(c, result, "InvalidImageName", msg);
                return -1;
        }
        cleanup_free char *image = kuberuntime__image_with_default_tag(c->image);
        cleanup_error ck_error_t err = NULL;

        if (c->image_pull_policy != PULL_ALWAYS) {
                char *id = NULL;
                int present = image_present(cri, image, &id, NULL, &err);
                if (present < 0) {
                        cleanup_free char *msg = xasprintf("Failed to inspect image \"%s\": %s",
                                                           c->image, kuberuntime__cri_message(err));
                        LOG_WARN("Failed to inspect image",
                                 "pod=\"%s\" container=\"%s\" image=\"%s\" err=\"%s\"", who,
                                 c->name, image, ck_error_msg(err));
                        event_emit_pod(rec, pod, c->name, EVENT_WARNING, "InspectFailed", "%s",
                                       msg);
                        image_wait(c, result, "ImageInspectError", msg);
                        return -1;
                }
                if (present) {
                        event_emit_pod(rec, pod, c->name, EVENT_NORMAL, "Pulled",
                                       "Container image \"%s\" already present on machine and "
                                       "can be accessed by the pod",
                                       c->image);
                        *image_ref = id;
                        return 0;
                }
                if (c->image_pull_policy == PULL_NEVER) {
                        cleanup_free char *msg = xasprintf(
                            "Container image \"%s\" is not present with pull policy of Never",
                            c->image);
                        LOG_WARN("Container image is not present with pull policy of Never",
                                 "pod=\"%s\" container=\"%s\" image=\"%s\"", who, c->name,
                                 c->image);
                        event_emit_pod(rec, pod, c->name, EVENT_WARNING, "ErrImageNeverPull", "%s",
                                       msg);
                        image_wait(c, result, "ErrImageNeverPull", msg);
                        return -1;
                }
        }

        /* the credentials for this image (upstream lookupPullCredentials):
         * the pod's pull secrets are read only when a pull is due */
        const struct kuberuntime_keyring *keyring = ctx != NULL ? ctx->keyring : NULL;
        struct kuberuntime_keyring *loaded = NULL;
        if (keyring == NULL && pod->image_pull_secrets.n > 0)
                keyring = loaded =
                    kuberuntime_pull_keyring_load(ctx != NULL ? ctx->kube : NULL, rec, pod);
        Runtime__V1__AuthConfig **auths = NULL;
        size_t n_auths = 0;
        int lr = kuberuntime_keyring_lookup(keyring, image, &auths, &n_auths, &err);
        kuberuntime_keyring_free(loaded);
        if (lr < 0) {
                LOG_WARN("Failed to read pull credentials",
                         "pod=\"%s\" container=\"%s\" image=\"%s\" err=\"%s\"", who, c->name,
                         c->image, ck_error_msg(err));
                image_wait(c, result, "ErrImagePull", ck_error_msg(err));
                return -1;
        }

        cleanup_free char *key = xasprintf("%s/%s", pod->uid, c->image);
        int64_t now = fs_now_mono_ms();
        if (backoff_is_in_backoff_since_update(rt->image_pull, key, now)) {
                kuberuntime_auths_free(auths, n_auths);
                int64_t failed_at = now;
                cleanup_free char *prev = pull_error_get(rt, key, &failed_at);
                LOG_INFO(2, "Back-off pulling image", "pod=\"%s\" container=\"%s\" image=\"%s\"",
                         who, c->name, c->image);
                event_emit_pod(rec, pod, c->name, EVENT_NORMAL, "BackOff",
                               "Back-off pulling image \"%s\"", c->image);
                cleanup_free char *msg = xasprintf("Back-off pulling image \"%s\"%s%s", c->image,
                                                   prev ? ": " : "", prev ? prev : "");
                image_wait(c, result, "ImagePullBackOff", msg);
                kuberuntime__retry_at(result, failed_at + backoff_get(rt->image_pull, key));
                return -1;
        }
        pull_error_set(rt, key, NULL, now);

        LOG_INFO(1, "Pulling image", "pod=\"%s\" container=\"%s\" image=\"%s\" credentials=%zu",
                 who, c->name, c->image, n_auths);
        event_emit_pod(rec, pod, c->name, EVENT_NORMAL, "Pulling", "Pulling image \"%s\"",
                       c->image);
        int64_t t0 = fs_now_mono_ms();
        pull_begin(rt, image);
        int64_t t_started = fs_now_mono_ms();
        char *ref = NULL;
        cleanup_free char *why = NULL;
        int r = pull(cri, image, sandbox_config, auths, n_auths, &ref, &why);
        uint64_t size = 0;
        if (r == 0 && ref != NULL && ref[0] != '\0') {
                cleanup_error ck_error_t serr = NULL;
                (void)image_present(cri, image, NULL, &size, &serr);
        }
        pull_end(rt, image);
        kuberuntime_auths_free(auths, n_auths);
        int64_t t1 = fs_now_mono_ms();
        if (r < 0) {
                backoff_next(rt->image_pull, key, t1);
                LOG_WARN("Failed to pull image",
                         "pod=\"%s\" container=\"%s\" image=\"%s\" err=\"%s\"", who, c->name,
                         c->image, why);
                event_emit_pod(rec, pod, c->name, EVENT_WARNING, "Failed",
                               "Failed to pull image \"%s\": %s", c->image, why);
                cleanup_free char *msg = NULL;
                const char *reason = pull_failure(c->image, why, &msg);
                cleanup_free char *stored = xasprintf("%s: %s", reason, msg);
                pull_error_set(rt, key, stored, t1);
                image_wait(c, result, reason, msg);
                kuberuntime__retry_at(result, t1 + backoff_get(rt->image_pull, key));
                return -1;
        }
        char took[32], total[32];
        kuberuntime__format_duration(t1 - t_started, took, sizeof(took));
        kuberuntime__format_duration(t1 - t0, total, sizeof(total));
        LOG_INFO(1, "Successfully pulled image",
                 "pod=\"%s\" container=\"%s\" image=\"%s\" duration=\"%s\" size=%" PRIu64, who,
                 c->name, c->image, took, size);
        event_emit_pod(rec, pod, c->name, EVENT_NORMAL, "Pulled",
                       "Successfully pulled image \"%s\" in %s (%s including waiting). Image "
                       "size: %" PRIu64 " bytes.",
                       c->image, took, total, size);
        backoff_gc(rt->image_pull, t1);
        *image_ref = ref ? ref : xstrdup("");
        return 0;
}
