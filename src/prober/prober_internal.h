/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to src/prober: the worker and scheduler structures shared by
 * manager.c, worker.c and scheduler.c (the handlers they run: src/probe).
 */
#ifndef CK_PROBER_INTERNAL_H
#define CK_PROBER_INTERNAL_H

#include "prober/prober.h"
#include "probe/probe.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- workers (worker.c) ---- */

struct prober_pod;

/* One probe of one container of a pod (upstream worker), keyed by
 * (pod UID, container name, type); it follows the container's instances:
 * a new container ID starts it from scratch.  All fields are guarded by
 * the prober's lock. */
struct prober_worker {
        struct prober_pod *pp; /* NULL once removed */
        enum probe_type type;
        char *container_name;
        const struct container *c; /* into pp->pod */
        const struct probe *spec;  /* into pp->pod */
        char *container_id;        /* the running instance probed */
        int64_t started_at_ns;     /* its start (wall clock) */

        enum probe_result result; /* published */
        enum probe_result last;   /* last outcome */
        int run;                  /* how many times in a row */
        bool on_hold;             /* until a new container ID */

        /* scheduling */
        int64_t due_ms;    /* CLOCK_MONOTONIC: the next run */
        size_t heap_index; /* SIZE_MAX: not in the heap */
        bool queued;       /* in the run queue */
        bool running;      /* a pool thread runs it */
        bool removed;      /* gone from its pod: freed once idle */
        struct prober_worker *next_queued;
};

struct prober_failure {
        char *container_name;
        char *container_id;
        bool startup; /* the startup probe failed (else the liveness probe) */
};

struct prober_pod {
        char *uid;
        struct pod *pod; /* a reference */
        char *ip;        /* the probes' target, NULL if none */
        struct prober_worker **workers;
        size_t n_workers;
        struct prober_failure *failures; /* liveness/startup failures: restart due */
        size_t n_failures;
};

struct prober {
        pthread_mutex_t lock;
        pthread_cond_t sched_cond; /* the heap's top changed, or stopping */
        pthread_cond_t work_cond;  /* the run queue is not empty, or stopping */
        bool stopping;

        struct prober_pod **pods;
        size_t n_pods;

        struct prober_worker **heap; /* min-heap on due_ms */
        size_t heap_len, heap_cap;
        struct prober_worker *queue_head, *queue_tail;

        pthread_t scheduler;
        bool scheduler_started;
        pthread_t *threads;
        int n_threads; /* started */

        char *runtime_endpoint;
        int64_t runtime_timeout_ms;
        char *node_ip;
        struct event_recorder *recorder; /* borrowed, may be NULL */
        prober_changed_fn fn;
        void *ctx;
};

const char *prober__type_name(enum probe_type t); /* "Liveness", ... */

struct prober_worker *prober__worker_new(struct prober_pod *pp, const struct container *c,
                                         const struct probe *spec, enum probe_type type);
void prober__worker_free(struct prober_worker *w);

/* A new container instance: the initial result (readiness failure,
 * liveness success, startup unknown), counters cleared, due at
 * started_at + initialDelaySeconds. */
void prober__worker_reset(struct prober_worker *w, const char *container_id, int64_t started_at_ns);

/* Records the outcome of a run (upstream doProbe's threshold logic).
 * Returns true when the published result changed. */
bool prober__worker_record(struct prober_worker *w, enum probe_outcome outcome);

/* Whether the worker should run now: a running instance, not on hold, and
 * for liveness/readiness a startup probe that succeeded (if any). */
bool prober__worker_wants_run(const struct prober_worker *w);

/* ---- scheduling (scheduler.c), under the prober's lock ---- */

/* Puts the worker in the heap at w->due_ms if it wants to run and is not
 * already in the heap, queued or running. */
void prober__arm(struct prober *p, struct prober_worker *w);
/* Takes the worker out of the heap (a queued or running one finishes). */
void prober__disarm(struct prober *p, struct prober_worker *w);
/* Unlinks a worker from its pod and frees it now or, if a pool thread
 * holds it, when that thread is done with it. */
void prober__remove_worker(struct prober *p, struct prober_worker *w);

/* Starts the scheduler and p->n_threads pool threads; < 0 with errno when
 * one could not start (those started run until prober__stop_threads). */
int prober__start_threads(struct prober *p);
void prober__stop_threads(struct prober *p);

#endif
