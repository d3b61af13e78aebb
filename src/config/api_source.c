/* SPDX-License-Identifier: Apache-2.0 */
#include "config/api_source.h"

#include "api/decode.h"
#include "client/reflector.h"
#include "util/cleanup.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

struct api_pod {
        char *uid;
        char *resource_version;
        struct pod *pod; /* NULL when the object does not decode */
};

struct api_source {
        struct reflector *reflector;
        pod_source_sink sink;
        void *ctx;
        /* reflector thread only */
        struct api_pod *pods;
        size_t n, cap;
};

static void api_pod_clear(struct api_pod *p)
{
        free(p->uid);
        free(p->resource_version);
        pod_unref(p->pod);
}

static struct api_pod *find(struct api_source *s, const char *uid)
{
        for (size_t i = 0; i < s->n; i++)
                if (strcmp(s->pods[i].uid, uid) == 0)
                        return &s->pods[i];
        return NULL;
}

static const char *meta_str(json_t *obj, const char *key)
{
        return json_string_value(json_object_get(json_object_get(obj, "metadata"), key));
}

/* Decodes obj unless the same resourceVersion is already known. */
static void upsert(struct api_source *s, json_t *obj)
{
        const char *uid = meta_str(obj, "uid");
        const char *rv = meta_str(obj, "resourceVersion");
        if (uid == NULL)
                return;
        struct api_pod *p = find(s, uid);
        if (p && rv && p->resource_version && strcmp(p->resource_version, rv) == 0)
                return;
        if (p == NULL) {
                if (s->n == s->cap) {
                        s->cap = s->cap ? s->cap * 2 : 32;
                        s->pods = xrealloc(s->pods, s->cap * sizeof(*s->pods));
                }
                p = &s->pods[s->n++];
                *p = (struct api_pod){.uid = xstrdup(uid)};
        }
        free(p->resource_version);
        p->resource_version = rv ? xstrdup(rv) : NULL;
        struct pod *pod = NULL;
        cleanup_error ck_error_t err = NULL;
        if (api_pod_decode(obj, &pod, &err) < 0) {
                /* an update we cannot read keeps the pod as it was: a
                 * running pod must not be killed for it */
                LOG_ERROR(p->pod ? "Failed to decode pod update from the apiserver, keeping "
                                   "the previous version"
                                 : "Failed to decode pod from the apiserver, ignoring it",
                          "pod=\"%s/%s\" podUID=\"%s\" err=\"%s\"",
                          meta_str(obj, "namespace") ? meta_str(obj, "namespace") : "",
                          meta_str(obj, "name") ? meta_str(obj, "name") : "", uid,
                          ck_error_msg(err));
                return;
        }
        pod->source = POD_SOURCE_API;
        pod_unref(p->pod);
        p->pod = pod;
}

static void remove_uid(struct api_source *s, const char *uid)
{
        struct api_pod *p = uid ? find(s, uid) : NULL;
        if (p == NULL)
                return;
        api_pod_clear(p);
        *p = s->pods[--s->n];
}

static void deliver(struct api_source *s)
{
        struct pod **set = xcalloc(s->n ? s->n : 1, sizeof(*set));
        size_t n = 0;
        for (size_t i = 0; i < s->n; i++)
                if (s->pods[i].pod)
                        set[n++] = s->pods[i].pod;
        s->sink(s->ctx, POD_SOURCE_API, set, n);
        free(set);
}

static void on_replace(void *opaque, json_t *items, const char *resource_version)
{
        struct api_source *s = opaque;
        (void)resource_version;
        /* drop what the list no longer has, then take every item */
        for (size_t i = 0; i < s->n; i++) {
                bool present = false;
                size_t j;
                json_t *item;
                json_array_foreach(items, j, item)
                {
                        const char *uid = meta_str(item, "uid");
                        if (uid && strcmp(uid, s->pods[i].uid) == 0) {
                                present = true;
                                break;
                        }
                }
                if (!present) {
                        api_pod_clear(&s->pods[i]);
                        s->pods[i--] = s->pods[--s->n];
                }
        }
        size_t j;
        json_t *item;
        json_array_foreach(items, j, item) upsert(s, item);
        deliver(s);
}

static void on_event(void *opaque, enum watch_event_type type, json_t *object)
{
        struct api_source *s = opaque;
        if (type == WATCH_DELETED)
                remove_uid(s, meta_str(object, "uid"));
        else
                upsert(s, object);
        deliver(s);
}

int api_source_start(const struct rest_config *cfg, struct rest_ratelimiter *rl,
                     const char *node_name, pod_source_sink sink, void *ctx,
                     struct api_source **out, ck_error_t *err)
{
        struct api_source *s = xcalloc(1, sizeof(*s));
        s->sink = sink;
        s->ctx = ctx;
        cleanup_free char *selector = xasprintf("spec.nodeName=%s", node_name);
        struct reflector_options opts = {
            .name = "pods",
            .path = "/api/v1/pods",
            .field_selector = selector,
        };
        struct reflector_callbacks cb = {
            .on_replace = on_replace, .on_event = on_event, .opaque = s};
        if (reflector_start(cfg, rl, &opts, &cb, &s->reflector, err) < 0) {
                free(s);
                return ck_error_wrap(err, "watch pods of node %s", node_name);
        }
        *out = s;
        return 0;
}

void api_source_stop(struct api_source *s)
{
        if (s == NULL)
                return;
        reflector_stop(s->reflector);
        for (size_t i = 0; i < s->n; i++)
                api_pod_clear(&s->pods[i]);
        free(s->pods);
        free(s);
}

bool api_source_synced(struct api_source *s)
{
        return s != NULL && reflector_has_synced(s->reflector);
}
