/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The event recorder (upstream client-go tools/record eventBroadcasterImpl
 * with StartStructuredLogging(3) and StartRecordingToSink, as the kubelet
 * sets it up): callers queue events and return at once; one thread
 * correlates them (event_correlator.c) and writes them to the apiserver on
 * its own REST client.
 *
 * Writing: a repeat is a strategic merge PATCH of the first Event (a 404,
 * the Event expired: POST a new one); anything else a POST to
 * /api/v1/namespaces/<ns>/events.  An answer the apiserver refused is not
 * retried (upstream: "Server rejected event (will not retry!)"); no answer,
 * 429 or 5xx is retried EVENT_MAX_TRIES times, EVENT_RETRY_MS apart (the
 * first wait jittered).  Upstream tries 12 times 10 s apart; shorter here
 * so that a dead apiserver costs the queue less, which then drops what
 * does not fit, never blocking a caller.
 */
#include "client/events_internal.h"
#include "client/rest.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EVENT_MAX_TRIES 4
#define EVENT_RETRY_MS 2000
/* a request's deadline: an event is not worth a minute's wait */
#define EVENT_REQUEST_TIMEOUT_MS 10000
/* how long event_recorder_free lets the queue drain */
#define EVENT_DRAIN_MS 1000

struct event_recorder {
        pthread_mutex_t lock;
        pthread_cond_t cond;                  /* CLOCK_MONOTONIC: queue changed, or stopping */
        struct event *queue[EVENT_QUEUE_MAX]; /* ring, under lock */
        size_t head, len;
        bool busy;        /* the thread holds an event (under lock) */
        bool stopping;    /* under lock */
        atomic_bool stop; /* aborts a request in flight */
        pthread_t thread;
        bool started;

        char *host;
        struct rest_client *client;    /* the thread's */
        struct event_correlator *corr; /* the thread's */
};

/* ---- logging (upstream StartStructuredLogging(3)) ---- */

static void log_event(const struct event *ev)
{
        if (!LOG_V(3))
                return;
        char ref[512];
        if (ev->obj_namespace != NULL)
                snprintf(ref, sizeof(ref), "%s/%s", ev->obj_namespace,
                         ev->obj_name ? ev->obj_name : "");
        else
                snprintf(ref, sizeof(ref), "%s", ev->obj_name ? ev->obj_name : "");
        LOG_INFO(3, "Event occurred",
                 "object=\"%s\" fieldPath=\"%s\" kind=\"%s\" apiVersion=\"%s\" type=\"%s\" "
                 "reason=\"%s\" message=\"%s\"",
                 ref, ev->field_path ? ev->field_path : "", ev->kind ? ev->kind : "",
                 ev->api_version ? ev->api_version : "", ev->type, ev->reason, ev->message);
}

/* ---- writing ---- */

static char *events_path(const struct event *ev, bool named)
{
        if (named)
                return xasprintf("/api/v1/namespaces/%s/events/%s", ev->namespace, ev->name);
        return xasprintf("/api/v1/namespaces/%s/events", ev->namespace);
}

/* Whether a failed write may succeed later: no answer, or an answer that
 * client-go's transport would itself have retried. */
static bool retryable(ck_error_t err)
{
        int code = err ? err->code : 0;
        if (code == REST_ERR_STOPPED)
                return false;
        return code < 100 || code == 429 || code >= 500;
}

/* upstream recordEvent: one attempt.  true when done with the event
 * (written, or rejected for good). */
static bool write_event(struct event_recorder *r, struct event *ev, bool patch)
{
        cleanup_error ck_error_t err = NULL;
        cleanup_json json_t *out = NULL;
        int rc = -1;
        if (patch) {
                cleanup_free char *path = events_path(ev, true);
                cleanup_json json_t *body = event__patch_json(ev);
                rc = rest_patch(r->client, path, NULL, REST_PATCH_STRATEGIC, body, &out, &err);
        }
        if (!patch || (rc < 0 && err != NULL && err->code == 404)) {
                ck_error_release(&err);
                free(ev->resource_version);
                ev->resource_version = NULL;
                cleanup_free char *path = events_path(ev, false);
                cleanup_json json_t *body = event__to_json(ev);
                rc = rest_post(r->client, path, body, &out, &err);
        }
        if (rc >= 0) {
                const char *rv = json_string_value(
                    json_object_get(json_object_get(out, "metadata"), "resourceVersion"));
                free(ev->resource_version);
                ev->resource_version = xstrdup(rv);
                event__correlator_update(r->corr, ev);
                LOG_INFO(5, "Event written", "event=\"%s/%s\" reason=\"%s\" count=%d",
                         ev->namespace, ev->name, ev->reason, (int)ev->count);
                return true;
        }
        if (!retryable(err)) {
                if (err != NULL && (err->code == 409 || err->code == REST_ERR_STOPPED))
                        LOG_INFO(5, "Server rejected event (will not retry!)",
                                 "event=\"%s/%s\" err=\"%s\"", ev->namespace, ev->name,
                                 ck_error_msg(err));
                else
                        LOG_ERROR("Server rejected event (will not retry!)",
                                  "err=\"%s\" event=\"%s/%s\" reason=\"%s\"", ck_error_msg(err),
                                  ev->namespace, ev->name, ev->reason);
                return true;
        }
        LOG_ERROR("Unable to write event (may retry after sleeping)",
                  "err=\"%s\" event=\"%s/%s\" reason=\"%s\"", ck_error_msg(err), ev->namespace,
                  ev->name, ev->reason);
        return false;
}

/* Waits ms unless the recorder stops; false when it does.  Under lock. */
static bool sleep_unless_stopping(struct event_recorder *r, int64_t ms)
{
        int64_t deadline = fs_now_mono_ms() + ms;
        struct timespec ts = {.tv_sec = (time_t)(deadline / 1000),
                              .tv_nsec = (long)(deadline % 1000) * 1000000};
        while (!r->stopping)
                if (pthread_cond_timedwait(&r->cond, &r->lock, &ts) == ETIMEDOUT)
                        break;
        return !r->stopping;
}

/* upstream recordToSink.  Called without the lock. */
static void record_to_sink(struct event_recorder *r, struct event **ev)
{
        enum event_action a = event__correlate(r->corr, ev, fs_now_real_ns());
        if (a == EVENT_ACTION_SKIP) {
                LOG_INFO(5, "Event dropped by the spam filter", "object=\"%s\" reason=\"%s\"",
                         (*ev)->obj_name ? (*ev)->obj_name : "", (*ev)->reason);
                return;
        }
        for (int tries = 1;; tries++) {
                if (write_event(r, *ev, a == EVENT_ACTION_PATCH))
                        return;
                if (tries >= EVENT_MAX_TRIES) {
                        LOG_ERROR("Unable to write event (retry limit exceeded!)",
                                  "event=\"%s/%s\" reason=\"%s\"", (*ev)->namespace, (*ev)->name,
                                  (*ev)->reason);
                        return;
                }
                int64_t delay = EVENT_RETRY_MS;
                if (tries == 1)
                        delay = (int64_t)((double)delay * ((double)rand() / RAND_MAX));
                pthread_mutex_lock(&r->lock);
                bool go_on = sleep_unless_stopping(r, delay);
                pthread_mutex_unlock(&r->lock);
                if (!go_on) {
                        LOG_ERROR("Unable to write event (broadcaster is shut down)",
                                  "event=\"%s/%s\" reason=\"%s\"", (*ev)->namespace, (*ev)->name,
                                  (*ev)->reason);
                        return;
                }
        }
}

static void *recorder_main(void *arg)
{
        struct event_recorder *r = arg;
        pthread_mutex_lock(&r->lock);
        for (;;) {
                while (!r->stopping && r->len == 0)
                        pthread_cond_wait(&r->cond, &r->lock);
                if (r->stopping)
                        break;
                struct event *ev = r->queue[r->head];
                r->queue[r->head] = NULL;
                r->head = (r->head + 1) % EVENT_QUEUE_MAX;
                r->len--;
                r->busy = true;
                pthread_mutex_unlock(&r->lock);

                record_to_sink(r, &ev);
                event__free(ev);

                pthread_mutex_lock(&r->lock);
                r->busy = false;
                pthread_cond_broadcast(&r->cond);
        }
        pthread_mutex_unlock(&r->lock);
        return NULL;
}

/* ---- the API ---- */

int event_recorder_new(const struct rest_config *cfg, struct rest_ratelimiter *rl,
                       const char *source_host, struct event_recorder **out, ck_error_t *err)
{
        *out = NULL;
        struct event_recorder *r = xcalloc(1, sizeof(*r));
        r->host = xstrdup(source_host ? source_host : "");
        if (rest_client_new(cfg, rl, &r->client, err) < 0) {
                free(r->host);
                free(r);
                return ck_error_wrap(err, "event recorder");
        }
        rest_client_set_timeout(r->client, EVENT_REQUEST_TIMEOUT_MS);
        rest_client_set_stop(r->client, &r->stop);
        r->corr = event__correlator_new();
        pthread_mutex_init(&r->lock, NULL);
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&r->cond, &ca);
        pthread_condattr_destroy(&ca);
        int rc = pthread_create(&r->thread, NULL, recorder_main, r);
        if (rc != 0) {
                event_recorder_free(r);
                return ck_error_make(err, rc, "event recorder: start thread");
        }
        r->started = true;
        *out = r;
        return 0;
}

void event_recorder_free(struct event_recorder *r)
{
        if (r == NULL)
                return;
        if (r->started) {
                pthread_mutex_lock(&r->lock);
                int64_t deadline = fs_now_mono_ms() + EVENT_DRAIN_MS;
                struct timespec ts = {.tv_sec = (time_t)(deadline / 1000),
                                      .tv_nsec = (long)(deadline % 1000) * 1000000};
                while (r->len > 0 || r->busy)
                        if (pthread_cond_timedwait(&r->cond, &r->lock, &ts) == ETIMEDOUT)
                                break;
                r->stopping = true;
                atomic_store(&r->stop, true);
                pthread_cond_broadcast(&r->cond);
                pthread_mutex_unlock(&r->lock);
                pthread_join(r->thread, NULL);
        }
        for (size_t i = 0; i < r->len; i++)
                event__free(r->queue[(r->head + i) % EVENT_QUEUE_MAX]);
        if (r->len > 0)
                LOG_WARN("Events not written at shutdown", "count=%zu", r->len);
        event__correlator_free(r->corr);
        rest_client_free(r->client);
        pthread_cond_destroy(&r->cond);
        pthread_mutex_destroy(&r->lock);
        free(r->host);
        free(r);
}

/* upstream generateEvent: validated, logged, queued (or dropped). */
__attribute__((format(printf, 5, 0))) static void emit(struct event_recorder *r,
                                                       const struct event_object *obj,
                                                       const char *type, const char *reason,
                                                       const char *fmt, va_list ap)
{
        if (type == NULL || (strcmp(type, EVENT_NORMAL) != 0 && strcmp(type, EVENT_WARNING) != 0)) {
                LOG_ERROR("Unsupported event type", "eventType=\"%s\"", type ? type : "");
                return;
        }
        cleanup_free char *message = xvasprintf(fmt, ap);
        struct event *ev =
            event__new(obj, r ? r->host : NULL, type, reason, message, fs_now_real_ns());
        log_event(ev);
        if (r == NULL) {
                event__free(ev);
                return;
        }
        pthread_mutex_lock(&r->lock);
        bool queued = !r->stopping && r->len < EVENT_QUEUE_MAX;
        if (queued) {
                r->queue[(r->head + r->len) % EVENT_QUEUE_MAX] = ev;
                r->len++;
                pthread_cond_broadcast(&r->cond);
        }
        pthread_mutex_unlock(&r->lock);
        if (!queued) {
                LOG_ERROR("Unable to record event: too many queued events, dropped event",
                          "event=\"%s/%s\" reason=\"%s\"", ev->namespace, ev->name, ev->reason);
                event__free(ev);
        }
}

void event_emit(struct event_recorder *r, const struct event_object *obj, const char *type,
                const char *reason, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        emit(r, obj, type, reason, fmt, ap);
        va_end(ap);
}

/* upstream fieldpath.ExtractContainerFieldPath; NULL when the pod has no
 * such container.  New string. */
static char *container_field_path(const struct pod *pod, const char *name)
{
        for (size_t i = 0; i < pod->n_containers; i++)
                if (strcmp(pod->containers[i].name, name) == 0)
                        return xasprintf("spec.containers{%s}", name);
        for (size_t i = 0; i < pod->n_init_containers; i++)
                if (strcmp(pod->init_containers[i].name, name) == 0)
                        return xasprintf("spec.initContainers{%s}", name);
        if (pod_find_ephemeral_container(pod, name) != NULL)
                return xasprintf("spec.ephemeralContainers{%s}", name);
        return NULL;
}

void event_emit_pod(struct event_recorder *r, const struct pod *pod, const char *container,
                    const char *type, const char *reason, const char *fmt, ...)
{
        if (pod == NULL)
                return;
        cleanup_free char *field_path = NULL;
        if (container != NULL) {
                field_path = container_field_path(pod, container);
                if (field_path == NULL) {
                        /* upstream GenerateContainerRef fails: no event */
                        LOG_ERROR("Can't make a container ref",
                                  "pod=\"%s/%s\" podUID=\"%s\" containerName=\"%s\"",
                                  pod->namespace ? pod->namespace : "", pod->name ? pod->name : "",
                                  pod->uid ? pod->uid : "", container);
                        return;
                }
        }
        struct event_object obj = {.kind = "Pod",
                                   .api_version = "v1",
                                   .namespace = pod->namespace,
                                   .name = pod->name,
                                   .uid = pod->uid,
                                   .resource_version = pod->resource_version,
                                   .field_path = field_path};
        va_list ap;
        va_start(ap, fmt);
        emit(r, &obj, type, reason, fmt, ap);
        va_end(ap);
}
