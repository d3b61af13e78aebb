/* SPDX-License-Identifier: Apache-2.0 */
#include "pleg/pleg.h"
#include "metrics/kubelet_metrics.h"
#include "util/goduration.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

struct pleg {
        struct kuberuntime *rt;
        char *endpoint;
        int64_t timeout_ms;
        int64_t period_ms;
        pleg_event_fn fn;
        void *ctx;
        pthread_t thread;
        pthread_mutex_t lock;
        pthread_cond_t cond;
        bool stopping;
        atomic_llong last_relist_ms;
        struct runtime_pod_list *last; /* previous relist, owned by the thread */
        int64_t last_start_us;         /* when the last good relist began; thread-owned */
        bool failing;                  /* the last relist failed; thread-owned */
};

static const struct runtime_pod_entry *find_pod(const struct runtime_pod_list *l, const char *uid)
{
        for (size_t i = 0; l && i < l->n_pods; i++)
                if (strcmp(l->pods[i].uid, uid) == 0)
                        return &l->pods[i];
        return NULL;
}

static const struct runtime_pod_entry_container *find_container(const struct runtime_pod_entry *p,
                                                                const char *id)
{
        for (size_t i = 0; p && i < p->n_containers; i++)
                if (strcmp(p->containers[i].id, id) == 0)
                        return &p->containers[i];
        return NULL;
}

static const struct runtime_pod_entry_sandbox *find_sandbox(const struct runtime_pod_entry *p,
                                                            const char *id)
{
        for (size_t i = 0; p && i < p->n_sandboxes; i++)
                if (strcmp(p->sandboxes[i].id, id) == 0)
                        return &p->sandboxes[i];
        return NULL;
}

/* Where one pod's events go, and the pod as the relist saw it. */
struct pod_events {
        pleg_event_fn fn;
        void *ctx;
        const char *uid;
        const struct runtime_pod_entry *now; /* NULL: gone */
};

static void emit(const struct pod_events *pe, enum pleg_event_type type, const char *cid)
{
        struct pleg_event ev = {.type = type, .uid = pe->uid, .container_id = cid, .pod = pe->now};
        pe->fn(pe->ctx, &ev);
}

/* The event for a container that went from `was` to `now` (upstream
 * generateEvents); `present` false means it is gone. */
static void container_transition(const struct pod_events *pe, const char *id, bool had,
                                 enum container_state was, bool present, enum container_state now)
{
        if (had && present && was == now)
                return;
        if (!present) {
                /* Gone without being seen to exit: died, then removed. */
                if (had && was == CONTAINER_STATE_RUNNING)
                        emit(pe, PLEG_CONTAINER_DIED, id);
                emit(pe, PLEG_CONTAINER_REMOVED, id);
                return;
        }
        switch (now) {
        case CONTAINER_STATE_RUNNING:
                emit(pe, PLEG_CONTAINER_STARTED, id);
                break;
        case CONTAINER_STATE_EXITED:
                emit(pe, PLEG_CONTAINER_DIED, id);
                break;
        default:
                emit(pe, PLEG_CONTAINER_CHANGED, id);
                break;
        }
}

static void diff_pod(const struct runtime_pod_entry *o, const struct runtime_pod_entry *c,
                     pleg_event_fn fn, void *ctx)
{
        const struct pod_events events = {fn, ctx, c ? c->uid : o->uid, c};
        const struct pod_events *pe = &events;
        bool sandbox_changed = false;

        for (size_t i = 0; c && i < c->n_containers; i++) {
                const struct runtime_pod_entry_container *now = &c->containers[i];
                const struct runtime_pod_entry_container *was = find_container(o, now->id);
                container_transition(pe, now->id, was != NULL,
                                     was ? was->state : CONTAINER_STATE_UNKNOWN, true, now->state);
        }
        for (size_t i = 0; o && i < o->n_containers; i++) {
                const struct runtime_pod_entry_container *was = &o->containers[i];
                if (find_container(c, was->id) == NULL)
                        container_transition(pe, was->id, true, was->state, false,
                                             CONTAINER_STATE_UNKNOWN);
        }
        for (size_t i = 0; c && i < c->n_sandboxes; i++) {
                const struct runtime_pod_entry_sandbox *was = find_sandbox(o, c->sandboxes[i].id);
                if (was == NULL || was->state != c->sandboxes[i].state)
                        sandbox_changed = true;
        }
        for (size_t i = 0; o && i < o->n_sandboxes; i++)
                if (find_sandbox(c, o->sandboxes[i].id) == NULL)
                        sandbox_changed = true;
        if (sandbox_changed)
                emit(pe, PLEG_SANDBOX_CHANGED, NULL);
}

void pleg_diff(const struct runtime_pod_list *old, const struct runtime_pod_list *cur,
               pleg_event_fn fn, void *ctx)
{
        for (size_t i = 0; cur && i < cur->n_pods; i++)
                diff_pod(find_pod(old, cur->pods[i].uid), &cur->pods[i], fn, ctx);
        for (size_t i = 0; old && i < old->n_pods; i++)
                if (find_pod(cur, old->pods[i].uid) == NULL)
                        diff_pod(&old->pods[i], NULL, fn, ctx);
}

/* upstream's updateRunningPodAndContainerMetrics */
static void record_running(const struct runtime_pod_list *l)
{
        size_t pods = 0, containers[4] = {0};
        for (size_t i = 0; i < l->n_pods; i++) {
                const struct runtime_pod_entry *e = &l->pods[i];
                for (size_t k = 0; k < e->n_containers; k++)
                        if ((unsigned)e->containers[k].state < 4)
                                containers[e->containers[k].state]++;
                for (size_t k = 0; k < e->n_sandboxes; k++)
                        if (e->sandboxes[k].state == SANDBOX_STATE_READY) {
                                pods++;
                                break;
                        }
        }
        kmetrics_set_running(pods, containers);
}

static void relist(struct pleg *p, struct cri_client *cri)
{
        int64_t start_us = fs_now_mono_us();
        struct runtime_pod_list *cur = NULL;
        cleanup_error ck_error_t err = NULL;
        int rc = kuberuntime_get_pods(p->rt, cri, true, &cur, &err);
        /* kubelet_pleg_relist_interval_seconds: since the previous relist's
         * start, as upstream's relistTime */
        kmetrics_pleg_relist((double)(fs_now_mono_us() - start_us) / 1e6,
                             p->last_start_us ? (double)(start_us - p->last_start_us) / 1e6 : -1);
        if (rc < 0) {
                LOG_ERROR("GenericPLEG: Unable to retrieve pods", "err=\"%s\"", ck_error_msg(err));
                p->failing = true;
                return;
        }
        p->last_start_us = start_us;
        record_running(cur);
        pleg_diff(p->last, cur, p->fn, p->ctx);
        struct pleg_event done = {.type = PLEG_RELIST_DONE, .pods = cur, .recovered = p->failing};
        p->failing = false;
        p->fn(p->ctx, &done);
        runtime_pod_list_free(p->last);
        p->last = cur;
        atomic_store(&p->last_relist_ms, fs_now_mono_ms());
}

static void *pleg_thread(void *arg)
{
        struct pleg *p = arg;
        struct cri_client *cri = cri_client_new(p->endpoint, p->timeout_ms);
        pthread_mutex_lock(&p->lock);
        while (!p->stopping) {
                pthread_mutex_unlock(&p->lock);
                int64_t start = fs_now_mono_ms();
                relist(p, cri);
                int64_t took = fs_now_mono_ms() - start;
                if (took > p->period_ms * 10)
                        LOG_WARN("GenericPLEG: relist took long", "duration_ms=%lld",
                                 (long long)took);
                /* Wait out the rest of the period (wait.Until semantics). */
                struct timespec ts;
                clock_gettime(CLOCK_MONOTONIC, &ts);
                int64_t wait_ms = p->period_ms > took ? p->period_ms - took : 0;
                ts.tv_sec += wait_ms / 1000;
                ts.tv_nsec += (wait_ms % 1000) * 1000000;
                if (ts.tv_nsec >= 1000000000) {
                        ts.tv_sec++;
                        ts.tv_nsec -= 1000000000;
                }
                pthread_mutex_lock(&p->lock);
                while (!p->stopping && pthread_cond_timedwait(&p->cond, &p->lock, &ts) == 0)
                        ;
        }
        pthread_mutex_unlock(&p->lock);
        cri_client_free(cri);
        return NULL;
}

int pleg_start(struct kuberuntime *rt, const char *endpoint, int64_t timeout_ms, int64_t period_ms,
               pleg_event_fn fn, void *ctx, struct pleg **out, ck_error_t *err)
{
        struct pleg *p = xcalloc(1, sizeof(*p));
        p->rt = rt;
        p->endpoint = xstrdup(endpoint);
        p->timeout_ms = timeout_ms;
        p->period_ms = period_ms;
        p->fn = fn;
        p->ctx = ctx;
        pthread_mutex_init(&p->lock, NULL);
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&p->cond, &ca);
        pthread_condattr_destroy(&ca);
        int r = pthread_create(&p->thread, NULL, pleg_thread, p);
        if (r != 0) {
                free(p->endpoint);
                free(p);
                return ck_error_make(err, r, "start PLEG thread");
        }
        *out = p;
        return 0;
}

void pleg_stop(struct pleg *p)
{
        if (p == NULL)
                return;
        pthread_mutex_lock(&p->lock);
        p->stopping = true;
        pthread_cond_signal(&p->cond);
        pthread_mutex_unlock(&p->lock);
        pthread_join(p->thread, NULL);
        runtime_pod_list_free(p->last);
        pthread_mutex_destroy(&p->lock);
        pthread_cond_destroy(&p->cond);
        free(p->endpoint);
        free(p);
}

int64_t pleg_last_relist_ms(struct pleg *p)
{
        return atomic_load(&p->last_relist_ms);
}

char *pleg_unhealthy(int64_t last_relist_ms, int64_t now_ms)
{
        if (last_relist_ms == 0)
                return xstrdup("pleg has yet to be successful");
        int64_t elapsed = now_ms - last_relist_ms;
        if (elapsed <= PLEG_RELIST_THRESHOLD_MS)
                return NULL;
        char ago[32], threshold[32];
        go_duration_format_ms(elapsed, ago, sizeof(ago));
        go_duration_format_ms(PLEG_RELIST_THRESHOLD_MS, threshold, sizeof(threshold));
        return xasprintf("pleg was last seen active %s ago; threshold is %s", ago, threshold);
}
