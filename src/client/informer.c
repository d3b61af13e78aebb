/* SPDX-License-Identifier: Apache-2.0 */
#include "client/informer.h"

#include "util/cleanup.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct informer {
        char *name, *path;
        informer_transform_fn transform;
        struct reflector *reflector;
        atomic_bool synced;
        pthread_mutex_t lock;
        json_t *objects; /* key -> stored object; replaced whole by a list */
};

/* "namespace/name", or "name" for a cluster-scoped object; NULL without a
 * name.  New string. */
static char *object_key(json_t *obj)
{
        json_t *md = json_object_get(obj, "metadata");
        const char *name = json_string_value(json_object_get(md, "name"));
        const char *ns = json_string_value(json_object_get(md, "namespace"));
        if (name == NULL || *name == '\0')
                return NULL;
        return ns && *ns ? xasprintf("%s/%s", ns, name) : xstrdup(name);
}

static json_t *stored_form(struct informer *inf, json_t *obj)
{
        return inf->transform ? inf->transform(obj) : json_incref(obj);
}

void informer__replace(struct informer *inf, json_t *items)
{
        json_t *fresh = json_object();
        size_t i;
        json_t *obj;
        json_array_foreach(items, i, obj)
        {
                cleanup_free char *key = object_key(obj);
                json_t *keep = key ? stored_form(inf, obj) : NULL;
                if (keep)
                        json_object_set_new(fresh, key, keep);
        }
        pthread_mutex_lock(&inf->lock);
        json_t *old = inf->objects;
        inf->objects = fresh;
        pthread_mutex_unlock(&inf->lock);
        json_decref(old);
        if (!atomic_exchange(&inf->synced, true))
                LOG_INFO(2, "Informer synced", "resource=\"%s\" objects=%zu", inf->name,
                         json_object_size(fresh));
}

void informer__event(struct informer *inf, enum watch_event_type type, json_t *obj)
{
        cleanup_free char *key = object_key(obj);
        if (key == NULL)
                return;
        json_t *keep = type == WATCH_DELETED ? NULL : stored_form(inf, obj);
        pthread_mutex_lock(&inf->lock);
        if (keep)
                json_object_set_new(inf->objects, key, keep);
        else
                json_object_del(inf->objects, key);
        pthread_mutex_unlock(&inf->lock);
}

static void on_replace(void *opaque, json_t *items, const char *resource_version)
{
        (void)resource_version;
        informer__replace(opaque, items);
}

static void on_event(void *opaque, enum watch_event_type type, json_t *object)
{
        informer__event(opaque, type, object);
}

struct informer *informer_new(const char *name, const char *path, informer_transform_fn transform)
{
        struct informer *inf = xcalloc(1, sizeof(*inf));
        inf->name = xstrdup(name);
        inf->path = xstrdup(path);
        inf->transform = transform;
        inf->objects = json_object();
        pthread_mutex_init(&inf->lock, NULL);
        return inf;
}

int informer_start(struct informer *inf, const struct rest_config *cfg, struct rest_ratelimiter *rl,
                   ck_error_t *err)
{
        struct reflector_options ro = {.name = inf->name, .path = inf->path};
        struct reflector_callbacks cb = {
            .on_replace = on_replace, .on_event = on_event, .opaque = inf};
        if (reflector_start(cfg, rl, &ro, &cb, &inf->reflector, err) < 0)
                return ck_error_wrap(err, "watch %s", inf->name);
        return 0;
}

bool informer_has_synced(struct informer *inf)
{
        return atomic_load(&inf->synced);
}

static int compare_keys(const void *a, const void *b)
{
        return strcmp(*(const char *const *)a, *(const char *const *)b);
}

json_t *informer_list(struct informer *inf)
{
        json_t *out = json_array();
        pthread_mutex_lock(&inf->lock);
        size_t n = json_object_size(inf->objects), i = 0;
        const char **keys = xcalloc(n ? n : 1, sizeof(*keys));
        const char *key;
        json_t *obj;
        json_object_foreach(inf->objects, key, obj) keys[i++] = key;
        qsort(keys, n, sizeof(*keys), compare_keys);
        for (i = 0; i < n; i++)
                json_array_append(out, json_object_get(inf->objects, keys[i]));
        pthread_mutex_unlock(&inf->lock);
        free(keys);
        return out;
}

void informer_free(struct informer *inf)
{
        if (inf == NULL)
                return;
        reflector_stop(inf->reflector);
        json_decref(inf->objects);
        pthread_mutex_destroy(&inf->lock);
        free(inf->name);
        free(inf->path);
        free(inf);
}
