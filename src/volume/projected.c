/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The payload of a projected volume (upstream pkg/volume/projected
 * collectData): its configMap, secret, downwardAPI and serviceAccountToken
 * sources merged in order, a later file replacing an earlier one of the same
 * path.  clusterTrustBundle and podCertificate sources are not implemented.
 */
#include "util/cleanup.h"
#include "util/xalloc.h"
#include "volume/plugins.h"

#include <string.h>

#define DEFAULT_MODE 0644
#define DEFAULT_TOKEN_EXPIRATION_S 3600
/* a token with fsUser or fsGroup set: SetVolumeOwnership makes it 0640 */
#define TOKEN_PRIVATE_MODE 0600

/* upstream FsUserFrom: the runAsUser every container runs as, if one. */
static bool pod_fs_user(const struct pod *pod, uid_t *uid)
{
        bool have = false;
        int64_t user = 0;
        size_t n_init = pod->n_init_containers, n_app = pod->n_containers;
        for (size_t i = 0; i < n_init + n_app + pod->n_ephemeral_containers; i++) {
                const struct container *c = i < n_init ? &pod->init_containers[i]
                                            : i < n_init + n_app
                                                ? &pod->containers[i - n_init]
                                                : &pod->ephemeral_containers[i - n_init - n_app];
                int64_t u;
                if (c->security_context && c->security_context->has_run_as_user)
                        u = c->security_context->run_as_user;
                else if (pod->security_context.has_run_as_user)
                        u = pod->security_context.run_as_user;
                else
                        return false;
                if (have && u != user)
                        return false;
                have = true;
                user = u;
        }
        if (have)
                *uid = (uid_t)user;
        return have;
}

static int object_source(const struct volume_ctx *vc, json_t *src, bool secret,
                         int32_t default_mode, struct volume_payload *out, ck_error_t *err)
{
        const char *name = json_string_value(json_object_get(src, "name"));
        bool optional = json_is_true(json_object_get(src, "optional"));
        struct key_to_path *items = NULL;
        size_t n = 0;
        if (volume_parse_items(json_object_get(src, "items"), &items, &n, err) < 0)
                return -1;
        int r = secret ? volume_secret_payload(vc, name ? name : "", items, n, default_mode,
                                               optional, out, err)
                       : volume_config_map_payload(vc, name ? name : "", items, n, default_mode,
                                                   optional, out, err);
        volume_items_free(items, n);
        return r;
}

static int token_source(const struct volume_ctx *vc, const struct volume *v, size_t index,
                        json_t *src, int32_t default_mode, struct volume_payload *out,
                        ck_error_t *err)
{
        const char *path = json_string_value(json_object_get(src, "path"));
        const char *audience = json_string_value(json_object_get(src, "audience"));
        json_t *es = json_object_get(src, "expirationSeconds");
        int64_t expiration =
            json_is_integer(es) ? (int64_t)json_integer_value(es) : DEFAULT_TOKEN_EXPIRATION_S;
        if (path == NULL || *path == '\0')
                return ck_error_make(err, 0, "serviceAccountToken: path is required");
        cleanup_free char *token = NULL;
        if (volume_service_account_token(vc, v->name, index, audience, expiration, &token, err) < 0)
                return -1;
        uid_t owner = 0;
        bool has_owner = pod_fs_user(vc->pod, &owner);
        mode_t mode = (mode_t)default_mode;
        if (has_owner || vc->pod->security_context.has_fs_group)
                mode = TOKEN_PRIVATE_MODE;
        volume_payload_set(out, path, token, strlen(token), mode);
        /* volume_payload_set may have replaced an earlier file: find ours */
        for (size_t i = 0; i < out->n; i++) {
                if (strcmp(out->files[i].path, path) == 0) {
                        out->files[i].has_owner = has_owner;
                        out->files[i].owner = owner;
                }
        }
        return 0;
}

int volume_projected_payload(const struct volume_ctx *vc, const struct volume *v,
                             struct volume_payload *out, ck_error_t *err)
{
        if (vc->kube == NULL)
                return ck_error_make(err, 0,
                                     "cannot setup projected volume %s because kube client is not "
                                     "configured",
                                     v->name);
        int32_t default_mode = v->has_default_mode ? v->default_mode : DEFAULT_MODE;
        json_t *sources = json_object_get(v->source, "sources");
        size_t i;
        json_t *s;
        json_array_foreach(sources, i, s)
        {
                json_t *src;
                int r;
                if ((src = json_object_get(s, "secret")) != NULL)
                        r = object_source(vc, src, true, default_mode, out, err);
                else if ((src = json_object_get(s, "configMap")) != NULL)
                        r = object_source(vc, src, false, default_mode, out, err);
                else if ((src = json_object_get(s, "downwardAPI")) != NULL)
                        r = volume_downward_api_payload(vc, json_object_get(src, "items"),
                                                        default_mode, out, err);
                else if ((src = json_object_get(s, "serviceAccountToken")) != NULL)
                        r = token_source(vc, v, i, src, default_mode, out, err);
                else
                        r = ck_error_make(err, 0, "unsupported projected volume source");
                if (r < 0)
                        return ck_error_wrap(err, "source %zu", i);
        }
        return 0;
}
