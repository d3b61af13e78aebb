/* SPDX-License-Identifier: Apache-2.0 */
/* struct kube_objects over the apiserver's REST API. */
#include "client/objects.h"

#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How long an object read is reused (upstream's "Cache" change detection
 * strategy): every pod of a namespace mounts kube-root-ca.crt, and each
 * pod's resync reads it again; within the TTL they share one GET.  An
 * update reaches running pods within the TTL plus their resync period. */
#define OBJECT_TTL_MS 20000
/* An object no pod read for this long is forgotten. */
#define OBJECT_IDLE_MS 600000
/* Pods remembered per object (beyond: forgotten, each reads fresh once). */
#define OBJECT_MAX_READERS 4096

struct cached_object {
        char *path;
        json_t *obj; /* NULL until read */
        int64_t fetched_ms, used_ms;
        char **readers; /* pod UIDs that have read it: their next read may be cached */
        size_t n_readers;
};

struct rest_objects {
        struct kube_objects iface; /* first: the public face */
        struct rest_pool *pool;
        struct informer *services;
        pthread_mutex_t lock;
        struct cached_object *cache;
        size_t n_cache;
};

static void readers_clear(struct cached_object *c)
{
        for (size_t i = 0; i < c->n_readers; i++)
                free(c->readers[i]);
        free(c->readers);
        c->readers = NULL;
        c->n_readers = 0;
}

static void cached_clear(struct cached_object *c)
{
        free(c->path);
        json_decref(c->obj);
        readers_clear(c);
}

static bool has_reader(const struct cached_object *c, const char *pod_uid)
{
        for (size_t i = 0; pod_uid && i < c->n_readers; i++)
                if (strcmp(c->readers[i], pod_uid) == 0)
                        return true;
        return false;
}

/* A new reference to the cached copy of path when it is fresh and pod_uid
 * has read it before, else NULL.  Forgets idle objects.  Under the lock. */
static json_t *cache_lookup(struct rest_objects *o, const char *path, const char *pod_uid,
                            int64_t now)
{
        json_t *hit = NULL;
        for (size_t i = 0; i < o->n_cache; i++) {
                struct cached_object *c = &o->cache[i];
                if (strcmp(c->path, path) == 0) {
                        c->used_ms = now;
                        if (c->obj && now - c->fetched_ms < OBJECT_TTL_MS && has_reader(c, pod_uid))
                                hit = json_incref(c->obj);
                } else if (now - c->used_ms >= OBJECT_IDLE_MS) {
                        cached_clear(c);
                        o->cache[i--] = o->cache[--o->n_cache];
                }
        }
        return hit;
}

/* Under the lock. */
static void cache_store(struct rest_objects *o, const char *path, const char *pod_uid, json_t *obj,
                        int64_t now)
{
        size_t i = 0;
        while (i < o->n_cache && strcmp(o->cache[i].path, path) != 0)
                i++;
        if (i == o->n_cache) {
                o->cache = xrealloc(o->cache, (o->n_cache + 1) * sizeof(*o->cache));
                o->cache[o->n_cache++] = (struct cached_object){.path = xstrdup(path)};
        }
        struct cached_object *c = &o->cache[i];
        json_decref(c->obj);
        c->obj = json_incref(obj);
        c->fetched_ms = c->used_ms = now;
        if (pod_uid == NULL || has_reader(c, pod_uid))
                return;
        if (c->n_readers == OBJECT_MAX_READERS)
                readers_clear(c);
        c->readers = xrealloc(c->readers, (c->n_readers + 1) * sizeof(*c->readers));
        c->readers[c->n_readers++] = xstrdup(pod_uid);
}

static int rest_objects_get(void *opaque, const char *resource, const char *ns, const char *name,
                            const char *pod_uid, json_t **out, ck_error_t *err)
{
        struct rest_objects *o = opaque;
        /* a ResourceClaim is read fresh at each use, as upstream's DRA
         * manager does: its allocation and reservations change */
        bool claim = strcmp(resource, "resourceclaims") == 0;
        cleanup_free char *path =
            claim ? xasprintf("/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s", ns, name)
                  : xasprintf("/api/v1/namespaces/%s/%s/%s", ns, resource, name);
        int64_t now = fs_now_mono_ms();
        if (!claim) {
                pthread_mutex_lock(&o->lock);
                *out = cache_lookup(o, path, pod_uid, now);
                pthread_mutex_unlock(&o->lock);
                if (*out != NULL)
                        return 0;
        }
        struct rest_client *c = rest_pool_get(o->pool);
        int r = rest_get(c, path, NULL, out, err);
        rest_pool_put(o->pool, c);
        if (r < 0)
                return -1; /* errors (404: not yet created) are not cached */
        if (claim)
                return 0;
        pthread_mutex_lock(&o->lock);
        cache_store(o, path, pod_uid, *out, now);
        pthread_mutex_unlock(&o->lock);
        return 0;
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
        struct rest_pool *pool = ((struct rest_objects *)opaque)->pool;
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

static bool rest_objects_list_services(void *opaque, json_t **out)
{
        struct informer *services = ((struct rest_objects *)opaque)->services;
        bool synced = informer_has_synced(services);
        *out = informer_list(services);
        return synced;
}

struct kube_objects *kube_objects_rest_new(struct rest_pool *pool, struct informer *services)
{
        struct rest_objects *o = xcalloc(1, sizeof(*o));
        o->iface.get = rest_objects_get;
        o->iface.request_token = rest_objects_request_token;
        if (services != NULL)
                o->iface.list_services = rest_objects_list_services;
        o->iface.opaque = o;
        o->pool = pool;
        o->services = services;
        pthread_mutex_init(&o->lock, NULL);
        return &o->iface;
}

void kube_objects_rest_free(struct kube_objects *iface)
{
        if (iface == NULL)
                return;
        struct rest_objects *o = iface->opaque;
        for (size_t i = 0; i < o->n_cache; i++)
                cached_clear(&o->cache[i]);
        free(o->cache);
        pthread_mutex_destroy(&o->lock);
        free(o);
}
