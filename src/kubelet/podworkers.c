/* SPDX-License-Identifier: Apache-2.0 */
#include "kubelet/podworkers.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <malloc.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#define PODWORKERS_STOP_TIMEOUT_S 2
/* Kills wait out grace periods: when every thread is busy, a kill gets a
 * thread of its own, up to this many beside the pool (upstream runs each
 * pod's worker in a goroutine of its own), so that the pods of a dense
 * node (maxPods 250) stop at once; such a thread leaves when the queue is
 * empty.  64 left 110 static pods 1.26 times upstream's time to stop. */
#define PODWORKERS_MAX_TRANSIENT 256

/* One UID's state: in flight or not, and at most one pending work item. */
struct pod_slot {
        char *uid;
        bool in_flight;
        bool in_flight_kill;
        bool queued; /* on the ready queue (not yet taken by a thread) */
        bool keep;   /* the pod comes back: a kill stops, keeps its history */
        struct pod_work pending;
        bool has_pending;
        struct pod_slot *next_ready;
};

struct podworkers {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        bool stopping;
        pod_work_fn fn;
        void *ctx;
        char *endpoint;
        int64_t timeout_ms;
        struct pod_slot **slots;
        size_t n_slots, cap_slots;
        struct pod_slot *ready_head, *ready_tail;
        size_t n_ready; /* on the ready queue */
        int n_idle;     /* threads waiting for work */
        pthread_t *threads;
        int n_threads;
        int n_transient; /* live transient threads (detached) */
        pthread_cond_t transient_done;
};

void pod_work_clear(struct pod_work *w)
{
        free(w->uid);
        pod_unref(w->pod);
        free(w->name);
        free(w->namespace);
        free(w->evict_message);
        memset(w, 0, sizeof(*w));
}

static struct pod_slot *slot_find(struct podworkers *pw, const char *uid, size_t *idx)
{
        for (size_t i = 0; i < pw->n_slots; i++)
                if (strcmp(pw->slots[i]->uid, uid) == 0) {
                        if (idx)
                                *idx = i;
                        return pw->slots[i];
                }
        return NULL;
}

static void slot_remove(struct podworkers *pw, struct pod_slot *s)
{
        size_t i;
        if (slot_find(pw, s->uid, &i) == NULL)
                return;
        pw->slots[i] = pw->slots[--pw->n_slots];
        free(s->uid);
        free(s);
}

static void *transient_thread(void *arg);

/* Under the lock: a kill waits on the ready queue and no thread is free
 * for it: a transient thread (it takes only kills). */
static void maybe_spawn(struct podworkers *pw)
{
        if (pw->stopping || pw->n_ready <= (size_t)pw->n_idle ||
            pw->n_transient >= PODWORKERS_MAX_TRANSIENT)
                return;
        bool kill = false;
        for (struct pod_slot *q = pw->ready_head; q != NULL && !kill; q = q->next_ready)
                kill = q->pending.kind != POD_WORK_SYNC;
        if (!kill)
                return;
        pthread_attr_t attr;
        pthread_t t;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &attr, transient_thread, pw) == 0)
                pw->n_transient++;
        else
                LOG_WARN("Failed to start a pod worker thread for a kill; it waits its turn");
        pthread_attr_destroy(&attr);
}

/* Under the lock. */
static void ready_push(struct podworkers *pw, struct pod_slot *s)
{
        s->queued = true;
        s->next_ready = NULL;
        if (pw->ready_tail)
                pw->ready_tail->next_ready = s;
        else
                pw->ready_head = s;
        pw->ready_tail = s;
        pw->n_ready++;
        pthread_cond_signal(&pw->cond);
        maybe_spawn(pw);
}

/* Under the lock: the first queued slot (only_kills: the first with a kill
 * pending) off the queue, or NULL. */
static struct pod_slot *take(struct podworkers *pw, bool only_kills)
{
        struct pod_slot *prev = NULL, *s = pw->ready_head;
        while (s != NULL && only_kills && s->pending.kind == POD_WORK_SYNC) {
                prev = s;
                s = s->next_ready;
        }
        if (s == NULL)
                return NULL;
        if (prev != NULL)
                prev->next_ready = s->next_ready;
        else
                pw->ready_head = s->next_ready;
        if (pw->ready_tail == s)
                pw->ready_tail = prev;
        pw->n_ready--;
        s->queued = false;
        s->next_ready = NULL;
        return s;
}

/* Takes ready work until the pool stops (a transient thread: kills, until
 * none is queued).  Called and returns with the lock held. */
static void run_worker(struct podworkers *pw, struct cri_client *cri, bool transient)
{
        for (;;) {
                while (!transient && !pw->stopping && pw->ready_head == NULL) {
                        pw->n_idle++;
                        pthread_cond_wait(&pw->cond, &pw->lock);
                        pw->n_idle--;
                }
                if (pw->stopping)
                        return;
                struct pod_slot *s = take(pw, transient);
                if (s == NULL)
                        return; /* transient: no kill left */
                struct pod_work w = s->pending;
                memset(&s->pending, 0, sizeof(s->pending));
                s->has_pending = false;
                s->in_flight = true;
                s->in_flight_kill = w.kind != POD_WORK_SYNC;
                pthread_mutex_unlock(&pw->lock);
                w.started_us = fs_now_mono_us();

                pw->fn(pw->ctx, cri, &w);
                pod_work_clear(&w);

                pthread_mutex_lock(&pw->lock);
                s->in_flight = false;
                s->in_flight_kill = false;
                if (s->has_pending)
                        ready_push(pw, s);
                else
                        slot_remove(pw, s);
        }
}

static void *worker_thread(void *arg)
{
        struct podworkers *pw = arg;
        struct cri_client *cri = cri_client_new(pw->endpoint, pw->timeout_ms);
        pthread_mutex_lock(&pw->lock);
        run_worker(pw, cri, false);
        pthread_mutex_unlock(&pw->lock);
        cri_client_free(cri);
        return NULL;
}

static void *transient_thread(void *arg)
{
        struct podworkers *pw = arg;
        struct cri_client *cri = cri_client_new(pw->endpoint, pw->timeout_ms);
        pthread_mutex_lock(&pw->lock);
        run_worker(pw, cri, true);
        bool last = --pw->n_transient == 0;
        pthread_cond_broadcast(&pw->transient_done);
        pthread_mutex_unlock(&pw->lock);
        cri_client_free(cri);
        /* A mass stop leaves the heap full of the kills' freed memory
         * (their connections, the runtime's answers): give its pages
         * back.  250 pods stopped at once left 67.6 MB of RSS against
         * 44.2 MB before (bench/README.md). */
        if (last)
                malloc_trim(0);
        return NULL;
}

struct podworkers *podworkers_new(int n_threads, const char *endpoint, int64_t timeout_ms,
                                  pod_work_fn fn, void *ctx)
{
        struct podworkers *pw = xcalloc(1, sizeof(*pw));
        pthread_mutex_init(&pw->lock, NULL);
        pthread_cond_init(&pw->cond, NULL);
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_REALTIME);
        pthread_cond_init(&pw->transient_done, &ca);
        pthread_condattr_destroy(&ca);
        pw->fn = fn;
        pw->ctx = ctx;
        pw->endpoint = xstrdup(endpoint);
        pw->timeout_ms = timeout_ms;
        pw->threads = xcalloc((size_t)n_threads, sizeof(pthread_t));
        for (int i = 0; i < n_threads; i++) {
                if (pthread_create(&pw->threads[i], NULL, worker_thread, pw) != 0) {
                        LOG_ERROR("Failed to start pod worker thread", "index=%d", i);
                        break;
                }
                pw->n_threads++;
        }
        return pw;
}

bool podworkers_free(struct podworkers *pw)
{
        if (pw == NULL)
                return true;
        pthread_mutex_lock(&pw->lock);
        pw->stopping = true;
        pthread_cond_broadcast(&pw->cond);
        pthread_mutex_unlock(&pw->lock);
        /* Work in flight may be a kill waiting out a grace period: give it a
         * moment, then leave it.  The agent is exiting, and like upstream it
         * does not wait for pods to stop; the next start adopts them. */
        struct timespec deadline;
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += PODWORKERS_STOP_TIMEOUT_S;
        bool all_joined = true;
        for (int i = 0; i < pw->n_threads; i++)
                if (pthread_timedjoin_np(pw->threads[i], NULL, &deadline) != 0) {
                        pthread_detach(pw->threads[i]);
                        all_joined = false;
                }
        /* the transient threads: detached, counted */
        pthread_mutex_lock(&pw->lock);
        while (pw->n_transient > 0 &&
               pthread_cond_timedwait(&pw->transient_done, &pw->lock, &deadline) == 0)
                ;
        bool transient_left = pw->n_transient > 0;
        pthread_mutex_unlock(&pw->lock);
        if (!all_joined || transient_left) {
                LOG_WARN("Pod workers still busy at shutdown; leaving them");
                return false; /* their state stays allocated: they may still use it */
        }
        for (size_t i = 0; i < pw->n_slots; i++) {
                if (pw->slots[i]->has_pending)
                        pod_work_clear(&pw->slots[i]->pending);
                free(pw->slots[i]->uid);
                free(pw->slots[i]);
        }
        free(pw->slots);
        free(pw->threads);
        free(pw->endpoint);
        pthread_mutex_destroy(&pw->lock);
        pthread_cond_destroy(&pw->cond);
        pthread_cond_destroy(&pw->transient_done);
        free(pw);
        return true;
}

bool podworkers_submit(struct podworkers *pw, struct pod_work *w)
{
        pthread_mutex_lock(&pw->lock);
        struct pod_slot *s = slot_find(pw, w->uid, NULL);
        if (s == NULL) {
                s = xcalloc(1, sizeof(*s));
                s->uid = xstrdup(w->uid);
                if (pw->n_slots == pw->cap_slots) {
                        pw->cap_slots = pw->cap_slots ? pw->cap_slots * 2 : 16;
                        pw->slots = xrealloc(pw->slots, pw->cap_slots * sizeof(*pw->slots));
                }
                pw->slots[pw->n_slots++] = s;
        }
        bool is_kill = w->kind != POD_WORK_SYNC;
        bool kill_ahead = s->in_flight_kill || (s->has_pending && s->pending.kind != POD_WORK_SYNC);
        if (!is_kill && kill_ahead) {
                pthread_mutex_unlock(&pw->lock);
                pod_work_clear(w);
                return false;
        }
        /* the replaced work's submission time stays, as upstream keeps
         * the oldest StartTime: the wait is counted from the first */
        w->submitted_us = fs_now_mono_us();
        if (s->has_pending) {
                w->submitted_us = s->pending.submitted_us;
                pod_work_clear(&s->pending);
        }
        s->pending = *w;
        s->has_pending = true;
        memset(w, 0, sizeof(*w));
        if (!s->in_flight && !s->queued)
                ready_push(pw, s);
        else if (s->queued && is_kill)
                maybe_spawn(pw); /* a kill replaced a queued sync */
        pthread_mutex_unlock(&pw->lock);
        return true;
}

bool podworkers_busy(struct podworkers *pw, const char *uid)
{
        pthread_mutex_lock(&pw->lock);
        bool busy = slot_find(pw, uid, NULL) != NULL;
        pthread_mutex_unlock(&pw->lock);
        return busy;
}

void podworkers_set_keep(struct podworkers *pw, const char *uid, bool keep)
{
        pthread_mutex_lock(&pw->lock);
        struct pod_slot *s = slot_find(pw, uid, NULL);
        if (s != NULL)
                s->keep = keep;
        pthread_mutex_unlock(&pw->lock);
}

bool podworkers_keep(struct podworkers *pw, const char *uid)
{
        pthread_mutex_lock(&pw->lock);
        struct pod_slot *s = slot_find(pw, uid, NULL);
        bool keep = s != NULL && s->keep;
        pthread_mutex_unlock(&pw->lock);
        return keep;
}
