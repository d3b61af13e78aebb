/* SPDX-License-Identifier: Apache-2.0 */
/* struct kube_objects over the apiserver's REST API. */
#include "client/objects.h"

#include "util/cleanup.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static int rest_objects_get(void *opaque, const char *resource, const char *ns, const char *name,
                            json_t **out, ck_error_t *err)
{
        struct rest_pool *pool = opaque;
        cleanup_free char *path = xasprintf("/api/v1/namespaces/%s/%s/%s", ns, resource, name);
        struct rest_client *c = rest_pool_get(pool);
        int r = rest_get(c, path, NULL, out, err);
        rest_pool_put(pool, c);
        return r < 0 ? -1 : 0;
}

/* "2026-11-30T03:10:00Z" -> seconds since the epoch; 0 if unreadable. */
static int64_t parse_rfc3339_s(const char *t)
{
        struct tm tm = {0};
        if (t == NULL || strptime(t, "%Y-%m-%dT%H:%M:%S", &tm) == NULL)
                return 0;
        return (int64_t)timegm(&tm);
}

static int rest_objects_request_token(void *opaque, const struct kube_token_request *req,
                                      char **token, int64_t *expiration_unix, ck_error_t *err)
{
        struct rest_pool *pool = opaque;
        cleanup_free char *path = xasprintf("/api/v1/namespaces/%s/serviceaccounts/%s/token",
                                            req->namespace, req->service_account);
        cleanup_json json_t *body = json_pack(
            "{s:s, s:s, s:{s:[], s:I, s:{s:s, s:s, s:s, s:s}}}", "apiVersion",
            "authentication.k8s.io/v1", "kind", "TokenRequest", "spec", "audiences",
            "expirationSeconds", (json_int_t)req->expiration_seconds, "boundObjectRef",
            "apiVersion", "v1", "kind", "Pod", "name", req->pod_name, "uid", req->pod_uid);
        if (req->audience != NULL && *req->audience)
                json_array_append_new(json_object_get(json_object_get(body, "spec"), "audiences"),
                                      json_string(req->audience));
        else
                json_object_del(json_object_get(body, "spec"), "audiences");
        cleanup_json json_t *resp = NULL;
        struct rest_client *c = rest_pool_get(pool);
        int r = rest_post(c, path, body, &resp, err);
        rest_pool_put(pool, c);
        if (r < 0)
                return -1;
        json_t *status = json_object_get(resp, "status");
        const char *tok = json_string_value(json_object_get(status, "token"));
        if (tok == NULL)
                return ck_error_make(err, 0, "POST %s: the answer has no status.token", path);
        *token = xstrdup(tok);
        *expiration_unix =
            parse_rfc3339_s(json_string_value(json_object_get(status, "expirationTimestamp")));
        return 0;
}

struct kube_objects *kube_objects_rest_new(struct rest_pool *pool)
{
        struct kube_objects *o = xcalloc(1, sizeof(*o));
        o->get = rest_objects_get;
        o->request_token = rest_objects_request_token;
        o->opaque = pool;
        return o;
}

void kube_objects_rest_free(struct kube_objects *o)
{
        free(o);
}
