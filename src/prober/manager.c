/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The probe manager (upstream pkg/kubelet/prober/prober_manager.go and the
 * results managers): the table of pods and their workers, kept in step with
 * each sync's runtime status, and the results the status generator and the
 * sync read.  Every function only updates tables under the lock: probes run
 * on the scheduler's threads (scheduler.c).
 */
#include "prober/prober_internal.h"

#include "util/cleanup.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_THREADS 4

static const enum probe_type probe_types[] = {PROBE_STARTUP, PROBE_READINESS, PROBE_LIVENESS};

static const struct probe *probe_of(const struct container *c, enum probe_type t)
{
        switch (t) {
        case PROBE_LIVENESS:
                return c->liveness_probe;
        case PROBE_READINESS:
                return c->readiness_probe;
        case PROBE_STARTUP:
                return c->startup_probe;
        }
        return NULL;
}

/* The probed containers (upstream: app containers and restartable init
 * containers) by name; NULL if the pod has none of that name. */
static const struct container *probed_container(const struct pod *pod, const char *name)
{
        for (size_t i = 0; i < pod->n_containers; i++)
                if (strcmp(pod->containers[i].name, name) == 0)
                        return &pod->containers[i];
        for (size_t i = 0; i < pod->n_init_containers; i++)
                if (container_is_sidecar(&pod->init_containers[i]) &&
                    strcmp(pod->init_containers[i].name, name) == 0)
                        return &pod->init_containers[i];
        return NULL;
}

static struct prober_pod *find_pod(const struct prober *p, const char *uid, size_t *index)
{
        for (size_t i = 0; i < p->n_pods; i++)
                if (strcmp(p->pods[i]->uid, uid) == 0) {
                        if (index)
                                *index = i;
                        return p->pods[i];
                }
        return NULL;
}

static struct prober_worker *find_worker(const struct prober_pod *pp, const char *name,
                                         enum probe_type t)
{
        for (size_t i = 0; i < pp->n_workers; i++)
                if (pp->workers[i]->type == t && strcmp(pp->workers[i]->container_name, name) == 0)
                        return pp->workers[i];
        return NULL;
}

static void remove_failure(struct prober_pod *pp, size_t i)
{
        free(pp->failures[i].container_name);
        free(pp->failures[i].container_id);
        pp->failures[i] = pp->failures[--pp->n_failures];
}

/* A failure stands until the runtime shows another instance of the container. */
static void clear_stale_failures(struct prober_pod *pp, const struct runtime_pod_status *rs,
                                 bool deleting)
{
        for (size_t i = pp->n_failures; i-- > 0;) {
                const struct runtime_container_status *st =
                    rs ? runtime_pod_status_find(rs, pp->failures[i].container_name) : NULL;
                if (deleting || st == NULL || st->id == NULL ||
                    strcmp(st->id, pp->failures[i].container_id) != 0 ||
                    probed_container(pp->pod, pp->failures[i].container_name) == NULL)
                        remove_failure(pp, i);
        }
}

/* Creates, updates or removes the workers of one container. */
static void update_container(struct prober *p, struct prober_pod *pp, const struct container *c,
                             const struct runtime_pod_status *rs, bool deleting)
{
        const struct runtime_container_status *st =
            rs ? runtime_pod_status_find(rs, c->name) : NULL;
        bool running = st != NULL && st->state == CONTAINER_STATE_RUNNING && st->id != NULL &&
                       st->id[0] != '\0';
        for (size_t k = 0; k < ARRAY_SIZE(probe_types); k++) {
                enum probe_type t = probe_types[k];
                const struct probe *spec = probe_of(c, t);
                struct prober_worker *w = find_worker(pp, c->name, t);
                if (spec == NULL || !running) {
                        /* no probe, or the container is not running: nothing to probe */
                        if (w != NULL)
                                prober__remove_worker(p, w);
                        continue;
                }
                if (w == NULL) {
                        w = prober__worker_new(pp, c, spec, t);
                        pp->workers =
                            xrealloc(pp->workers, (pp->n_workers + 1) * sizeof(*pp->workers));
                        pp->workers[pp->n_workers++] = w;
                }
                w->c = c;
                w->spec = spec;
                if (w->container_id == NULL || strcmp(w->container_id, st->id) != 0)
                        prober__worker_reset(w, st->id, st->started_at);
                if (deleting && t != PROBE_READINESS && !w->on_hold) {
                        /* upstream: a quiet shutdown, no restart of a pod going away */
                        LOG_INFO(3, "Pod deletion requested, setting probe result to success",
                                 "probeType=\"%s\" pod=\"%s\" containerName=\"%s\"",
                                 prober__type_name(t), pod_full_name(pp->pod), c->name);
                        w->result = PROBE_RESULT_SUCCESS;
                        w->on_hold = true;
                }
        }
}

void prober_update_pod(struct prober *p, struct pod *pod, const struct runtime_pod_status *rs)
{
        pthread_mutex_lock(&p->lock);
        struct prober_pod *pp = find_pod(p, pod->uid, NULL);
        if (pp == NULL) {
                pp = xcalloc(1, sizeof(*pp));
                pp->uid = xstrdup(pod->uid);
                p->pods = xrealloc(p->pods, (p->n_pods + 1) * sizeof(*p->pods));
                p->pods[p->n_pods++] = pp;
        }
        /* workers point into the old pod until updated below */
        struct pod *old = pp->pod != pod ? pp->pod : NULL;
        if (old != NULL || pp->pod == NULL)
                pp->pod = pod_ref(pod);
        free(pp->ip);
        pp->ip = NULL;
        if (rs != NULL && rs->ip != NULL && rs->ip[0] != '\0')
                pp->ip = xstrdup(rs->ip);
        else if (pod->host_network)
                pp->ip = xstrdup(p->node_ip);

        bool deleting = pod->deletion_timestamp != NULL;
        for (size_t i = 0; i < pod->n_containers; i++)
                update_container(p, pp, &pod->containers[i], rs, deleting);
        for (size_t i = 0; i < pod->n_init_containers; i++)
                if (container_is_sidecar(&pod->init_containers[i]))
                        update_container(p, pp, &pod->init_containers[i], rs, deleting);
        /* workers of containers (or probes) the pod no longer has */
        for (size_t i = pp->n_workers; i-- > 0;) {
                struct prober_worker *w = pp->workers[i];
                const struct container *c = probed_container(pod, w->container_name);
                if (c == NULL || probe_of(c, w->type) == NULL)
                        prober__remove_worker(p, w);
        }
        clear_stale_failures(pp, rs, deleting);
        for (size_t i = 0; i < pp->n_workers; i++)
                prober__arm(p, pp->workers[i]);
        pod_unref(old);
        pthread_mutex_unlock(&p->lock);
}

static void free_pod_entry(struct prober *p, struct prober_pod *pp)
{
        while (pp->n_workers > 0)
                prober__remove_worker(p, pp->workers[pp->n_workers - 1]);
        while (pp->n_failures > 0)
                remove_failure(pp, pp->n_failures - 1);
        free(pp->workers);
        free(pp->failures);
        free(pp->ip);
        free(pp->uid);
        pod_unref(pp->pod);
        free(pp);
}

void prober_remove_pod(struct prober *p, const char *uid)
{
        pthread_mutex_lock(&p->lock);
        size_t i;
        struct prober_pod *pp = find_pod(p, uid, &i);
        if (pp != NULL) {
                p->pods[i] = p->pods[--p->n_pods];
                free_pod_entry(p, pp);
        }
        pthread_mutex_unlock(&p->lock);
}

void prober_results(struct prober *p, const char *uid, struct kv_list *readiness,
                    struct kv_list *startup)
{
        pthread_mutex_lock(&p->lock);
        const struct prober_pod *pp = find_pod(p, uid, NULL);
        for (size_t i = 0; pp != NULL && i < pp->n_workers; i++) {
                const struct prober_worker *w = pp->workers[i];
                const char *v = w->result == PROBE_RESULT_SUCCESS ? "true" : "false";
                if (w->container_id == NULL)
                        continue;
                if (w->type == PROBE_READINESS && readiness != NULL)
                        kv_list_add(readiness, w->container_name, v);
                else if (w->type == PROBE_STARTUP && startup != NULL)
                        kv_list_add(startup, w->container_name, v);
        }
        pthread_mutex_unlock(&p->lock);
}

static char **failures(struct prober *p, const char *uid, bool startup)
{
        char **names = NULL;
        size_t n = 0;
        pthread_mutex_lock(&p->lock);
        const struct prober_pod *pp = find_pod(p, uid, NULL);
        for (size_t i = 0; pp != NULL && i < pp->n_failures; i++) {
                if (pp->failures[i].startup != startup)
                        continue;
                if (names == NULL)
                        names = xcalloc(pp->n_failures + 1, sizeof(*names));
                names[n++] = xstrdup(pp->failures[i].container_name);
        }
        pthread_mutex_unlock(&p->lock);
        return names;
}

char **prober_started(struct prober *p, const char *uid)
{
        char **names = NULL;
        size_t n = 0;
        pthread_mutex_lock(&p->lock);
        const struct prober_pod *pp = find_pod(p, uid, NULL);
        for (size_t i = 0; pp != NULL && i < pp->n_workers; i++) {
                const struct prober_worker *w = pp->workers[i];
                if (w->type != PROBE_STARTUP || w->container_id == NULL ||
                    w->result != PROBE_RESULT_SUCCESS)
                        continue;
                if (names == NULL)
                        names = xcalloc(pp->n_workers + 1, sizeof(*names));
                names[n++] = xstrdup(w->container_name);
        }
        pthread_mutex_unlock(&p->lock);
        return names;
}

char **prober_liveness_failures(struct prober *p, const char *uid)
{
        return failures(p, uid, false);
}

char **prober_startup_failures(struct prober *p, const char *uid)
{
        return failures(p, uid, true);
}

struct prober *prober_new(const struct prober_options *opts, prober_changed_fn fn, void *ctx)
{
        struct prober *p = xcalloc(1, sizeof(*p));
        pthread_condattr_t attr;
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_mutex_init(&p->lock, NULL);
        pthread_cond_init(&p->sched_cond, &attr);
        pthread_cond_init(&p->work_cond, NULL);
        pthread_condattr_destroy(&attr);
        p->runtime_endpoint = xstrdup(opts ? opts->runtime_endpoint : NULL);
        p->runtime_timeout_ms =
            opts && opts->runtime_timeout_ms > 0 ? opts->runtime_timeout_ms : 2 * 60 * 1000;
        p->node_ip = xstrdup(opts && opts->node_ip ? opts->node_ip : "127.0.0.1");
        p->n_threads = opts && opts->n_threads > 0 ? opts->n_threads : DEFAULT_THREADS;
        p->recorder = opts ? opts->recorder : NULL;
        p->fn = fn;
        p->ctx = ctx;
        if (prober__start_threads(p) < 0) {
                LOG_ERROR("Failed to start the prober's threads", "err=\"%s\"", strerror(errno));
                prober_free(p);
                return NULL;
        }
        return p;
}

void prober_free(struct prober *p)
{
        if (p == NULL)
                return;
        prober__stop_threads(p);
        /* removed workers still queued belong to no pod */
        for (struct prober_worker *w = p->queue_head, *next; w != NULL; w = next) {
                next = w->next_queued;
                w->queued = false;
                if (w->removed)
                        prober__worker_free(w);
        }
        p->queue_head = p->queue_tail = NULL;
        while (p->n_pods > 0)
                free_pod_entry(p, p->pods[--p->n_pods]);
        free(p->pods);
        free(p->heap);
        free(p->runtime_endpoint);
        free(p->node_ip);
        pthread_cond_destroy(&p->sched_cond);
        pthread_cond_destroy(&p->work_cond);
        pthread_mutex_destroy(&p->lock);
        free(p);
}
