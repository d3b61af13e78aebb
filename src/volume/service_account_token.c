/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Service account tokens for projected volumes (upstream pkg/kubelet/token
 * Manager, without its jitter): requested through the TokenRequest API,
 * bound to the pod, kept until past 80% of their lifetime or 24 h, then
 * requested again on the next sync (at least every syncFrequency).
 *
 * The token is cached beside the volume, not in it:
 *   <pod>/plugins/kubernetes.io~projected/<volume>/token-<source index>
 * (0600 under the 0750 pod directory), so a restarted kubelet reuses it.
 */
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "volume/plugins.h"

#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TOKEN_MAX_TTL_S (24 * 3600)
#define TOKEN_CACHE_MODE 0600
#define TOKEN_CACHE_MAX (1 << 20)
#define TOKEN_DIR_MODE 0750

bool volume_token_requires_refresh(int64_t now, int64_t exp, int64_t expiration_seconds)
{
        if (now >= exp)
                return true;
        if (expiration_seconds <= 0)
                return false;
        int64_t iat = exp - expiration_seconds;
        if (now > iat + TOKEN_MAX_TTL_S)
                return true;
        /* within 20% of the TTL from the expiration */
        return now > exp - expiration_seconds * 20 / 100;
}

struct cached_token {
        char *token;
        int64_t exp;
};

static char *cache_dir(const struct volume_ctx *vc, const char *volume)
{
        return xasprintf("%s/plugins/" VOLUME_PROJECTED_PLUGIN "/%s", vc->pod_dir, volume);
}

/* The cached token for these parameters; false if none or another request. */
static bool read_cache(const char *path, const char *audience, int64_t expiration_seconds,
                       struct cached_token *out)
{
        cleanup_free char *text = NULL;
        cleanup_error ck_error_t e = NULL;
        if (fs_read_file(path, TOKEN_CACHE_MAX, &text, NULL, &e) < 0)
                return false;
        cleanup_json json_t *j = json_loads(text, 0, NULL);
        const char *aud = json_string_value(json_object_get(j, "audience"));
        const char *tok = json_string_value(json_object_get(j, "token"));
        json_t *es = json_object_get(j, "expirationSeconds");
        json_t *exp = json_object_get(j, "expirationTimestamp");
        if (tok == NULL || aud == NULL || !json_is_integer(es) || !json_is_integer(exp) ||
            strcmp(aud, audience ? audience : "") != 0 ||
            json_integer_value(es) != expiration_seconds)
                return false;
        out->token = xstrdup(tok);
        out->exp = json_integer_value(exp);
        return true;
}

static int write_cache(const struct volume_ctx *vc, const char *volume, const char *path,
                       const char *audience, int64_t expiration_seconds,
                       const struct cached_token *t, ck_error_t *err)
{
        cleanup_free char *dir = cache_dir(vc, volume);
        if (fs_mkdir_p(dir, TOKEN_DIR_MODE, err) < 0)
                return -1;
        cleanup_json json_t *j =
            json_pack("{s:s, s:I, s:I, s:s}", "audience", audience ? audience : "",
                      "expirationSeconds", (json_int_t)expiration_seconds, "expirationTimestamp",
                      (json_int_t)t->exp, "token", t->token);
        cleanup_free char *text = json_dumps(j, JSON_COMPACT);
        if (text == NULL)
                return ck_error_make(err, 0, "encode the token cache");
        return fs_write_file_atomic(path, text, strlen(text), TOKEN_CACHE_MODE, err);
}

int volume_service_account_token(const struct volume_ctx *vc, const char *volume, size_t index,
                                 const char *audience, int64_t expiration_seconds, char **token,
                                 ck_error_t *err)
{
        const struct pod *pod = vc->pod;
        cleanup_free char *dir = cache_dir(vc, volume);
        cleanup_free char *path = xasprintf("%s/token-%zu", dir, index);
        struct cached_token cached = {0};
        bool have = read_cache(path, audience, expiration_seconds, &cached);
        int64_t now = (int64_t)time(NULL);
        if (have && !volume_token_requires_refresh(now, cached.exp, expiration_seconds)) {
                *token = cached.token;
                return 0;
        }
        const char *sa = pod->service_account_name && *pod->service_account_name
                             ? pod->service_account_name
                             : "default";
        struct kube_token_request req = {
            .namespace = pod->namespace,
            .service_account = sa,
            .audience = audience && *audience ? audience : NULL,
            .expiration_seconds = expiration_seconds,
            .pod_name = pod->name,
            .pod_uid = pod->uid,
        };
        struct cached_token fresh = {0};
        if (vc->kube->request_token(vc->kube->opaque, &req, &fresh.token, &fresh.exp, err) < 0) {
                ck_error_wrap(err, "request a token for service account %s/%s", pod->namespace, sa);
                if (have && now < cached.exp) {
                        /* upstream: the cached token while it has not expired */
                        LOG_WARN("Failed to refresh a service account token, keeping the old one",
                                 "pod=\"%s\" volume=\"%s\" err=\"%s\"", pod_full_name(pod), volume,
                                 ck_error_msg(*err));
                        ck_error_release(err);
                        *token = cached.token;
                        return 0;
                }
                free(cached.token);
                return -1;
        }
        free(cached.token);
        LOG_INFO(4, "Requested a service account token",
                 "pod=\"%s\" volume=\"%s\" expiration=%" PRId64, pod_full_name(pod), volume,
                 fresh.exp);
        cleanup_error ck_error_t e = NULL;
        if (write_cache(vc, volume, path, audience, expiration_seconds, &fresh, &e) < 0)
                LOG_WARN("Failed to cache a service account token", "path=\"%s\" err=\"%s\"", path,
                         ck_error_msg(e));
        *token = fresh.token;
        return 0;
}
