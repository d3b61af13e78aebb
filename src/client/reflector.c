/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The reflector's thread: ListAndWatch in a loop with backoff between
 * attempts (upstream tools/cache/reflector.go: ListAndWatch, watch,
 * handleWatch, relistResourceVersion).
 */
#include "client/reflector.h"
#include "client/rest.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/sleep.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BACKOFF_INITIAL_MS 800
#define BACKOFF_MAX_MS 30000
#define BACKOFF_RESET_MS 120000
#define DEFAULT_MIN_WATCH_TIMEOUT_S 300

struct reflector {
        char *name, *path, *field_selector, *label_selector;
        long min_watch_timeout_s;
        struct reflector_callbacks cb;
        struct rest_client *client;
        pthread_t thread;
        atomic_bool stop;
        atomic_bool synced;
        pthread_mutex_t lock; /* with wake: interruptible sleeps */
        pthread_cond_t wake;
        struct reflector_backoff backoff;
        unsigned rand_state;

        /* thread-owned */
        char *rv;             /* last resourceVersion seen; NULL: none yet */
        bool rv_unavailable;  /* a list at rv got 410: list at "" */
        unsigned long events; /* events of the current watch */
};

int64_t reflector_backoff_next(struct reflector_backoff *b, int64_t now_ms, double rand01)
{
        if (b->next_ms == 0 || now_ms - b->last_ms > BACKOFF_RESET_MS)
                b->next_ms = BACKOFF_INITIAL_MS;
        b->last_ms = now_ms;
        int64_t d = b->next_ms;
        b->next_ms = d * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : d * 2;
        return d + (int64_t)(rand01 * (double)d);
}

static double rand01(struct reflector *r)
{
        return (double)rand_r(&r->rand_state) / ((double)RAND_MAX + 1.0);
}

/* Sleeps the next backoff delay unless stopped first; false when stopped. */
static bool backoff(struct reflector *r)
{
        return sleep_unless_stopped(
            &r->lock, &r->wake, &r->stop,
            reflector_backoff_next(&r->backoff, fs_now_mono_ms(), rand01(r)));
}

static void set_rv(struct reflector *r, const char *rv)
{
        if (rv == NULL || rv[0] == '\0')
                return;
        free(r->rv);
        r->rv = xstrdup(rv);
}

static const char *object_rv(const json_t *obj)
{
        return json_string_value(
            json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
}

/* List items carry no apiVersion and kind: give them the list's. */
static void set_item_kinds(json_t *list, json_t *items)
{
        const char *api = json_string_value(json_object_get(list, "apiVersion"));
        const char *kind = json_string_value(json_object_get(list, "kind"));
        size_t n = kind ? strlen(kind) : 0;
        if (api == NULL || n <= 4 || strcmp(kind + n - 4, "List") != 0)
                return;
        cleanup_free char *item_kind = xstrndup(kind, n - 4);
        size_t i;
        json_t *item;
        json_array_foreach(items, i, item)
        {
                if (!json_is_object(item))
                        continue;
                if (json_object_get(item, "apiVersion") == NULL)
                        json_object_set_new(item, "apiVersion", json_string(api));
                if (json_object_get(item, "kind") == NULL)
                        json_object_set_new(item, "kind", json_string(item_kind));
        }
}

static int list(struct reflector *r, ck_error_t *err)
{
        /* relistResourceVersion */
        const char *rv = r->rv_unavailable ? "" : r->rv ? r->rv : "0";
        cleanup_free char *query = NULL;
        if (rv[0])
                rest_query_add(&query, "resourceVersion", rv);
        if (r->field_selector)
                rest_query_add(&query, "fieldSelector", r->field_selector);
        if (r->label_selector)
                rest_query_add(&query, "labelSelector", r->label_selector);
        cleanup_json json_t *list = NULL;
        if (rest_get(r->client, r->path, query, &list, err) < 0) {
                if (watch_is_expired(*err))
                        r->rv_unavailable = true;
                return -1;
        }
        json_t *items = json_object_get(list, "items");
        const char *list_rv = object_rv(list);
        if (!json_is_object(list) || (items && !json_is_null(items) && !json_is_array(items)))
                return ck_error_make(err, 0, "GET %s: the answer is not a list", r->path);
        if (list_rv == NULL || list_rv[0] == '\0')
                return ck_error_make(err, 0, "GET %s: the list has no resourceVersion", r->path);
        cleanup_json json_t *all = json_is_array(items) ? json_incref(items) : json_array();
        set_item_kinds(list, all);
        LOG_INFO(4, "Listed", "reflector=\"%s\" items=%zu resourceVersion=\"%s\"", r->name,
                 json_array_size(all), list_rv);
        r->cb.on_replace(r->cb.opaque, all, list_rv);
        set_rv(r, list_rv);
        r->rv_unavailable = false;
        atomic_store(&r->synced, true);
        return 0;
}

static int on_watch_event(void *opaque, enum watch_event_type type, json_t *object, ck_error_t *err)
{
        (void)err;
        struct reflector *r = opaque;
        if (type != WATCH_BOOKMARK) {
                r->events++;
                r->cb.on_event(r->cb.opaque, type, object);
        }
        set_rv(r, object_rv(object));
        return 0;
}

/* Watches until a relist is due (or the stop). */
static void watch_loop(struct reflector *r)
{
        while (!atomic_load(&r->stop)) {
                long min = r->min_watch_timeout_s;
                struct watch_options opts = {
                    .resource_version = r->rv,
                    .field_selector = r->field_selector,
                    .label_selector = r->label_selector,
                    .timeout_seconds = min + (long)(rand01(r) * (double)min),
                    .allow_bookmarks = true,
                };
                int64_t start = fs_now_mono_ms();
                r->events = 0;
                cleanup_error ck_error_t err = NULL;
                int rc = watch_stream(r->client, r->path, &opts, on_watch_event, r, &err);
                if (atomic_load(&r->stop))
                        return;
                int code = err ? err->code : 0;
                if (rc == 0 || code == REST_ERR_TRANSPORT) {
                        /* ended by the server, or the connection broke: resume */
                        if (r->events == 0 && fs_now_mono_ms() - start < 1000) {
                                LOG_INFO(0, "Warning: watch ended with error",
                                         "reflector=\"%s\" err=\"very short watch: unexpected "
                                         "watch close - watch lasted less than a second and no "
                                         "items received%s%s\"",
                                         r->name, err ? ": " : "", err ? ck_error_msg(err) : "");
                                return;
                        }
                        LOG_INFO(4, "Watch ended", "reflector=\"%s\" events=%lu", r->name,
                                 r->events);
                        continue;
                }
                if (watch_is_expired(err)) {
                        LOG_INFO(4, "Watch closed", "reflector=\"%s\" err=\"%s\"", r->name,
                                 ck_error_msg(err));
                        return;
                }
                if (code == REST_ERR_CONNECT || code == 429) {
                        LOG_INFO(4, "Watch failed - backing off", "reflector=\"%s\" err=\"%s\"",
                                 r->name, ck_error_msg(err));
                        if (!backoff(r))
                                return;
                        continue;
                }
                LOG_INFO(0, "Warning: watch ended with error", "reflector=\"%s\" err=\"%s\"",
                         r->name, ck_error_msg(err));
                return;
        }
}

static void *run(void *arg)
{
        struct reflector *r = arg;
        while (!atomic_load(&r->stop)) {
                cleanup_error ck_error_t err = NULL;
                if (list(r, &err) == 0)
                        watch_loop(r);
                else if (!atomic_load(&r->stop))
                        LOG_WARN("Failed to list", "reflector=\"%s\" err=\"%s\"", r->name,
                                 ck_error_msg(err));
                if (atomic_load(&r->stop) || !backoff(r))
                        break;
        }
        return NULL;
}

int reflector_start(const struct rest_config *cfg, struct rest_ratelimiter *rl,
                    const struct reflector_options *opts, const struct reflector_callbacks *cb,
                    struct reflector **out, ck_error_t *err)
{
        if (opts->path == NULL || opts->path[0] != '/')
                return ck_error_make(err, 0, "reflector: the path must be absolute");
        struct reflector *r = xcalloc(1, sizeof(*r));
        r->name = xstrdup(opts->name ? opts->name : opts->path);
        r->path = xstrdup(opts->path);
        r->field_selector =
            opts->field_selector && *opts->field_selector ? xstrdup(opts->field_selector) : NULL;
        r->label_selector =
            opts->label_selector && *opts->label_selector ? xstrdup(opts->label_selector) : NULL;
        r->min_watch_timeout_s =
            opts->min_watch_timeout_s > 0 ? opts->min_watch_timeout_s : DEFAULT_MIN_WATCH_TIMEOUT_S;
        r->cb = *cb;
        r->rand_state = (unsigned)fs_now_mono_us() ^ (unsigned)(uintptr_t)r;
        atomic_init(&r->stop, false);
        atomic_init(&r->synced, false);
        pthread_mutex_init(&r->lock, NULL);
        pthread_condattr_t attr;
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&r->wake, &attr);
        pthread_condattr_destroy(&attr);
        if (rest_client_new(cfg, rl, &r->client, err) < 0) {
                reflector_stop(r);
                return ck_error_wrap(err, "reflector %s", opts->path);
        }
        rest_client_set_stop(r->client, &r->stop);
        int rc = pthread_create(&r->thread, NULL, run, r);
        if (rc != 0) {
                rest_client_free(r->client);
                r->client = NULL;
                reflector_stop(r);
                return ck_error_make(err, rc, "reflector %s: start thread", opts->path);
        }
        *out = r;
        return 0;
}

void reflector_stop(struct reflector *r)
{
        if (r == NULL)
                return;
        if (r->client) { /* the thread runs */
                pthread_mutex_lock(&r->lock);
                atomic_store(&r->stop, true);
                pthread_cond_broadcast(&r->wake);
                pthread_mutex_unlock(&r->lock);
                pthread_join(r->thread, NULL);
                rest_client_free(r->client);
        }
        pthread_cond_destroy(&r->wake);
        pthread_mutex_destroy(&r->lock);
        free(r->rv);
        free(r->name);
        free(r->path);
        free(r->field_selector);
        free(r->label_selector);
        free(r);
}

bool reflector_has_synced(struct reflector *r)
{
        return atomic_load(&r->synced);
}
