/* SPDX-License-Identifier: Apache-2.0 */
/*
 * When probes run, and on which thread.
 *
 * One scheduler thread keeps the workers that want to run in a min-heap on
 * their due time (CLOCK_MONOTONIC) and sleeps on a condition variable until
 * the earliest is due; it then moves it to the run queue.  A pool of
 * n_threads threads, each with its own CRI connection, takes workers off
 * the queue and runs their probe outside the lock.  A worker is in at most
 * one place at a time (heap, queue or a thread), so it never runs twice at
 * once; its next run is due a period after the start of the last one (as
 * upstream's ticker), or at once when the probe took longer than that.
 *
 * Workers on hold, waiting for a startup probe, or without a running
 * container are in none of these: they cost nothing until an update or a
 * startup success arms them again.
 */
#include "client/events.h"
#include "metrics/kubelet_metrics.h"
#include "prober/prober_internal.h"

#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* upstream maxProbeRetries: a probe that errors is tried this many times */
#define MAX_PROBE_RETRIES 3

/* ---- the heap ---- */

static void heap_set(struct prober *p, size_t i, struct prober_worker *w)
{
        p->heap[i] = w;
        w->heap_index = i;
}

static void sift_up(struct prober *p, size_t i)
{
        struct prober_worker *w = p->heap[i];
        while (i > 0) {
                size_t parent = (i - 1) / 2;
                if (p->heap[parent]->due_ms <= w->due_ms)
                        break;
                heap_set(p, i, p->heap[parent]);
                i = parent;
        }
        heap_set(p, i, w);
}

static void sift_down(struct prober *p, size_t i)
{
        struct prober_worker *w = p->heap[i];
        for (;;) {
                size_t l = 2 * i + 1, r = l + 1, m = i;
                int64_t due = w->due_ms;
                if (l < p->heap_len && p->heap[l]->due_ms < due) {
                        m = l;
                        due = p->heap[l]->due_ms;
                }
                if (r < p->heap_len && p->heap[r]->due_ms < due)
                        m = r;
                if (m == i)
                        break;
                heap_set(p, i, p->heap[m]);
                i = m;
        }
        heap_set(p, i, w);
}

static void heap_delete(struct prober *p, size_t i)
{
        struct prober_worker *w = p->heap[i];
        w->heap_index = SIZE_MAX;
        p->heap_len--;
        if (i == p->heap_len)
                return;
        struct prober_worker *moved = p->heap[p->heap_len];
        heap_set(p, i, moved);
        sift_up(p, i);
        sift_down(p, moved->heap_index);
}

void prober__disarm(struct prober *p, struct prober_worker *w)
{
        if (w->heap_index != SIZE_MAX)
                heap_delete(p, w->heap_index);
}

void prober__arm(struct prober *p, struct prober_worker *w)
{
        if (!prober__worker_wants_run(w)) {
                prober__disarm(p, w);
                return;
        }
        if (w->queued || w->running)
                return; /* rescheduled when the run finishes */
        if (w->heap_index == SIZE_MAX) {
                if (p->heap_len == p->heap_cap) {
                        p->heap_cap = p->heap_cap ? 2 * p->heap_cap : 64;
                        p->heap = xrealloc(p->heap, p->heap_cap * sizeof(*p->heap));
                }
                heap_set(p, p->heap_len++, w);
        }
        sift_up(p, w->heap_index);
        sift_down(p, w->heap_index);
        if (w->heap_index == 0)
                pthread_cond_signal(&p->sched_cond);
}

void prober__remove_worker(struct prober *p, struct prober_worker *w)
{
        struct prober_pod *pp = w->pp;
        if (pp != NULL && pp->pod != NULL) /* upstream deletes the worker's series */
                kmetrics_probe_forget(prober__type_name(w->type), w->container_name, pp->pod->name,
                                      pp->pod->namespace, pp->uid);
        for (size_t i = 0; pp != NULL && i < pp->n_workers; i++) {
                if (pp->workers[i] == w) {
                        pp->workers[i] = pp->workers[--pp->n_workers];
                        break;
                }
        }
        w->pp = NULL;
        w->removed = true;
        prober__disarm(p, w);
        if (!w->queued && !w->running)
                prober__worker_free(w);
}

/* ---- the scheduler thread ---- */

static void *scheduler_main(void *arg)
{
        struct prober *p = arg;
        pthread_mutex_lock(&p->lock);
        while (!p->stopping) {
                if (p->heap_len == 0) {
                        pthread_cond_wait(&p->sched_cond, &p->lock);
                        continue;
                }
                struct prober_worker *w = p->heap[0];
                if (w->due_ms > fs_now_mono_ms()) {
                        struct timespec ts = {.tv_sec = w->due_ms / 1000,
                                              .tv_nsec = (w->due_ms % 1000) * 1000000};
                        pthread_cond_timedwait(&p->sched_cond, &p->lock, &ts);
                        continue;
                }
                heap_delete(p, 0);
                w->queued = true;
                w->next_queued = NULL;
                if (p->queue_tail)
                        p->queue_tail->next_queued = w;
                else
                        p->queue_head = w;
                p->queue_tail = w;
                pthread_cond_signal(&p->work_cond);
        }
        pthread_mutex_unlock(&p->lock);
        return NULL;
}

/* ---- the pool ---- */

/* What a run needs, copied under the lock. */
struct job {
        struct pod *pod; /* a reference: keeps c and spec alive */
        const struct container *c;
        const struct probe *spec;
        char *uid;
        char *container_id;
        char *ip;
        enum probe_type type;
        int64_t start_ms;
};

static void job_clear(struct job *j)
{
        pod_unref(j->pod);
        free(j->uid);
        free(j->container_id);
        free(j->ip);
}

/* A change to report once the lock is released. */
struct change {
        bool set;
        char *uid;
        char *container_name;
        enum probe_type type;
        enum probe_result result;
};

static enum probe_outcome run_job(struct cri_client *cri, const struct job *j, char **message)
{
        enum probe_outcome o = PROBE_OUTCOME_ERROR;
        int64_t timeout_ms =
            (int64_t)(j->spec->timeout_seconds > 0 ? j->spec->timeout_seconds : 1) * 1000;
        for (int i = 0; i < MAX_PROBE_RETRIES; i++) {
                free(*message);
                *message = NULL;
                o = probe_run(cri, j->c, j->container_id, j->ip, &j->spec->handler, timeout_ms,
                              message);
                if (o != PROBE_OUTCOME_ERROR)
                        break;
        }
        return o;
}

/* prober_probe_total and prober_probe_duration_seconds (upstream's
 * worker.doProbe: a success with a warning counts as successful, an error
 * as unknown). */
static void record_metrics(const struct job *j, enum probe_outcome o, double seconds)
{
        const char *result = o == PROBE_OUTCOME_FAILURE ? "failed"
                             : o == PROBE_OUTCOME_ERROR ? "unknown"
                                                        : "successful";
        kmetrics_probe(prober__type_name(j->type), result, j->c->name, j->pod->name,
                       j->pod->namespace, j->uid, seconds);
}

/* upstream prober.probe's log lines */
static void log_outcome(const struct job *j, enum probe_outcome o, const char *message)
{
        const char *type = prober__type_name(j->type);
        const char *pod = pod_full_name(j->pod);
        const char *out = message ? message : "";
        switch (o) {
        case PROBE_OUTCOME_SUCCESS:
                LOG_INFO(3, "Probe succeeded",
                         "probeType=\"%s\" pod=\"%s\" podUID=\"%s\" containerName=\"%s\"", type,
                         pod, j->uid, j->c->name);
                break;
        case PROBE_OUTCOME_WARNING:
                LOG_INFO(3, "Probe succeeded with a warning",
                         "probeType=\"%s\" pod=\"%s\" podUID=\"%s\" containerName=\"%s\" "
                         "output=\"%s\"",
                         type, pod, j->uid, j->c->name, out);
                break;
        case PROBE_OUTCOME_FAILURE:
                LOG_INFO(1, "Probe failed",
                         "probeType=\"%s\" pod=\"%s\" podUID=\"%s\" containerName=\"%s\" "
                         "probeResult=\"failure\" output=\"%s\"",
                         type, pod, j->uid, j->c->name, out);
                break;
        case PROBE_OUTCOME_ERROR:
                if (LOG_V(1))
                        LOG_ERROR("Probe errored",
                                  "err=\"%s\" probeType=\"%s\" pod=\"%s\" podUID=\"%s\" "
                                  "containerName=\"%s\" probeResult=\"unknown\"",
                                  out, type, pod, j->uid, j->c->name);
                break;
        }
}

/* upstream prober.probe's events: every failure (Unhealthy), error
 * (Unhealthy) and warning (ProbeWarning); the recorder aggregates repeats. */
static void record_outcome(struct prober *p, const struct job *j, enum probe_outcome o,
                           const char *message)
{
        const char *type = prober__type_name(j->type);
        const char *out = message ? message : "";
        switch (o) {
        case PROBE_OUTCOME_SUCCESS:
                break;
        case PROBE_OUTCOME_WARNING:
                event_emit_pod(p->recorder, j->pod, j->c->name, EVENT_WARNING, "ProbeWarning",
                               "%s probe warning: %s", type, out);
                break;
        case PROBE_OUTCOME_FAILURE:
                event_emit_pod(p->recorder, j->pod, j->c->name, EVENT_WARNING, "Unhealthy",
                               "%s probe failed: %s", type, out);
                break;
        case PROBE_OUTCOME_ERROR:
                event_emit_pod(p->recorder, j->pod, j->c->name, EVENT_WARNING, "Unhealthy",
                               "%s probe errored and resulted in unknown state: %s", type, out);
                break;
        }
}

static void add_failure(struct prober_pod *pp, const char *name, const char *container_id,
                        bool startup)
{
        for (size_t i = 0; i < pp->n_failures; i++)
                if (strcmp(pp->failures[i].container_name, name) == 0) {
                        free(pp->failures[i].container_id);
                        pp->failures[i].container_id = xstrdup(container_id);
                        pp->failures[i].startup = startup;
                        return;
                }
        pp->failures = xrealloc(pp->failures, (pp->n_failures + 1) * sizeof(*pp->failures));
        pp->failures[pp->n_failures++] =
            (struct prober_failure){xstrdup(name), xstrdup(container_id), startup};
}

/* Applies a run's outcome to its worker and schedules the next run. */
static void finish_job(struct prober *p, struct prober_worker *w, const struct job *j,
                       enum probe_outcome o, struct change *ch)
{
        w->running = false;
        if (w->removed) {
                prober__worker_free(w);
                return;
        }
        /* a verdict that came while the run was in flight (a pod being
         * deleted) stands: the outcome is dropped */
        if (w->container_id != NULL && strcmp(w->container_id, j->container_id) == 0 &&
            !w->on_hold && prober__worker_record(w, o)) {
                *ch = (struct change){true, xstrdup(j->uid), xstrdup(w->container_name), w->type,
                                      w->result};
                if (w->type != PROBE_READINESS && w->result == PROBE_RESULT_FAILURE)
                        add_failure(w->pp, w->container_name, w->container_id,
                                    w->type == PROBE_STARTUP);
                if (w->type == PROBE_STARTUP && w->result == PROBE_RESULT_SUCCESS) {
                        /* liveness and readiness may start now */
                        for (size_t i = 0; i < w->pp->n_workers; i++)
                                if (w->pp->workers[i] != w &&
                                    strcmp(w->pp->workers[i]->container_name, w->container_name) ==
                                        0)
                                        prober__arm(p, w->pp->workers[i]);
                }
        }
        if (w->container_id != NULL && strcmp(w->container_id, j->container_id) == 0) {
                int64_t period_ms =
                    (int64_t)(w->spec->period_seconds > 0 ? w->spec->period_seconds : 10) * 1000;
                int64_t now = fs_now_mono_ms();
                w->due_ms = j->start_ms + period_ms > now ? j->start_ms + period_ms : now;
        }
        /* else: a new instance came meanwhile; its due time is set */
        prober__arm(p, w);
}

static void *pool_main(void *arg)
{
        struct prober *p = arg;
        struct cri_client *cri =
            p->runtime_endpoint ? cri_client_new(p->runtime_endpoint, p->runtime_timeout_ms) : NULL;
        pthread_mutex_lock(&p->lock);
        for (;;) {
                while (!p->stopping && p->queue_head == NULL)
                        pthread_cond_wait(&p->work_cond, &p->lock);
                if (p->stopping)
                        break;
                struct prober_worker *w = p->queue_head;
                p->queue_head = w->next_queued;
                if (p->queue_head == NULL)
                        p->queue_tail = NULL;
                w->queued = false;
                if (w->removed) {
                        prober__worker_free(w);
                        continue;
                }
                if (!prober__worker_wants_run(w))
                        continue;
                if (w->due_ms > fs_now_mono_ms()) {
                        /* a new instance while queued, with an initial delay */
                        prober__arm(p, w);
                        continue;
                }
                struct job j = {
                    .pod = pod_ref(w->pp->pod),
                    .c = w->c,
                    .spec = w->spec,
                    .uid = xstrdup(w->pp->uid),
                    .container_id = xstrdup(w->container_id),
                    .ip = xstrdup(w->pp->ip),
                    .type = w->type,
                    .start_ms = fs_now_mono_ms(),
                };
                w->running = true;
                pthread_mutex_unlock(&p->lock);

                char *message = NULL;
                int64_t t0 = fs_now_mono_us();
                enum probe_outcome o = run_job(cri, &j, &message);
                log_outcome(&j, o, message);
                record_metrics(&j, o, (double)(fs_now_mono_us() - t0) / 1e6);
                record_outcome(p, &j, o, message);
                free(message);

                pthread_mutex_lock(&p->lock);
                struct change ch = {0};
                finish_job(p, w, &j, o, &ch);
                job_clear(&j);
                if (ch.set) {
                        pthread_mutex_unlock(&p->lock);
                        if (p->fn)
                                p->fn(p->ctx, ch.uid, ch.container_name, ch.type, ch.result);
                        free(ch.uid);
                        free(ch.container_name);
                        pthread_mutex_lock(&p->lock);
                }
        }
        pthread_mutex_unlock(&p->lock);
        cri_client_free(cri);
        return NULL;
}

int prober__start_threads(struct prober *p)
{
        int n = p->n_threads;
        p->threads = xcalloc((size_t)n, sizeof(*p->threads));
        p->n_threads = 0;
        int rv = pthread_create(&p->scheduler, NULL, scheduler_main, p);
        if (rv != 0) {
                errno = rv;
                return -1;
        }
        p->scheduler_started = true;
        for (; p->n_threads < n; p->n_threads++) {
                rv = pthread_create(&p->threads[p->n_threads], NULL, pool_main, p);
                if (rv != 0) {
                        errno = rv;
                        return -1;
                }
        }
        return 0;
}

void prober__stop_threads(struct prober *p)
{
        pthread_mutex_lock(&p->lock);
        p->stopping = true;
        pthread_cond_broadcast(&p->sched_cond);
        pthread_cond_broadcast(&p->work_cond);
        pthread_mutex_unlock(&p->lock);
        if (p->scheduler_started)
                pthread_join(p->scheduler, NULL);
        p->scheduler_started = false;
        for (int i = 0; i < p->n_threads; i++)
                pthread_join(p->threads[i], NULL);
        free(p->threads);
        p->threads = NULL;
}
