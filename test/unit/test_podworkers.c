/* SPDX-License-Identifier: Apache-2.0 */
/* Pod workers: one piece of work in flight per pod, the newest pending
 * update replaces older ones, a kill is never replaced by a sync. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "kubelet/podworkers.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

struct recorder {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        /* the first work of uid "a" blocks until released */
        bool block_first;
        bool released;
        int in_flight_a, max_in_flight_a;
        char log[64][32];
        int n;
};

static void work_fn(void *ctx, struct cri_client *cri, const struct pod_work *w)
{
        (void)cri;
        struct recorder *r = ctx;
        pthread_mutex_lock(&r->lock);
        bool is_a = strcmp(w->uid, "a") == 0;
        if (is_a) {
                r->in_flight_a++;
                if (r->in_flight_a > r->max_in_flight_a)
                        r->max_in_flight_a = r->in_flight_a;
        }
        snprintf(r->log[r->n++], 32, "%s:%s", w->uid, w->name ? w->name : "?");
        pthread_cond_broadcast(&r->cond);
        while (is_a && r->block_first && !r->released)
                pthread_cond_wait(&r->cond, &r->lock);
        if (is_a)
                r->in_flight_a--;
        pthread_mutex_unlock(&r->lock);
}

static void submit(struct podworkers *pw, const char *uid, enum pod_work_kind kind, const char *tag)
{
        struct pod_work w = {
            .kind = kind, .uid = xstrdup(uid), .name = xstrdup(tag), .grace_s = -1};
        podworkers_submit(pw, &w);
}

static void wait_for_entries(struct recorder *r, int n)
{
        pthread_mutex_lock(&r->lock);
        while (r->n < n)
                pthread_cond_wait(&r->cond, &r->lock);
        pthread_mutex_unlock(&r->lock);
}

static void wait_idle(struct podworkers *pw, const char *uid)
{
        for (int i = 0; i < 500 && podworkers_busy(pw, uid); i++)
                usleep(10000);
        assert_false(podworkers_busy(pw, uid));
}

static void test_newest_pending_replaces_older(void **state)
{
        (void)state;
        struct recorder r = {.lock = PTHREAD_MUTEX_INITIALIZER,
                             .cond = PTHREAD_COND_INITIALIZER,
                             .block_first = true};
        struct podworkers *pw = podworkers_new(3, "/nonexistent.sock", 1000, work_fn, &r);
        submit(pw, "a", POD_WORK_SYNC, "v1");
        wait_for_entries(&r, 1);
        /* v1 in flight: v2 and v3 queue up, only v3 must run */
        submit(pw, "a", POD_WORK_SYNC, "v2");
        submit(pw, "a", POD_WORK_SYNC, "v3");
        pthread_mutex_lock(&r.lock);
        r.released = true;
        pthread_cond_broadcast(&r.cond);
        pthread_mutex_unlock(&r.lock);
        wait_idle(pw, "a");
        assert_int_equal(r.n, 2);
        assert_string_equal(r.log[0], "a:v1");
        assert_string_equal(r.log[1], "a:v3");
        assert_int_equal(r.max_in_flight_a, 1);
        podworkers_free(pw);
}

static void test_kill_wins_over_sync(void **state)
{
        (void)state;
        struct recorder r = {.lock = PTHREAD_MUTEX_INITIALIZER,
                             .cond = PTHREAD_COND_INITIALIZER,
                             .block_first = true};
        struct podworkers *pw = podworkers_new(2, "/nonexistent.sock", 1000, work_fn, &r);
        submit(pw, "a", POD_WORK_SYNC, "v1");
        wait_for_entries(&r, 1);
        submit(pw, "a", POD_WORK_KILL, "kill");
        struct pod_work late = {.kind = POD_WORK_SYNC, .uid = xstrdup("a"), .name = xstrdup("v2")};
        assert_false(podworkers_submit(pw, &late)); /* dropped: a kill is pending */
        pthread_mutex_lock(&r.lock);
        r.released = true;
        pthread_cond_broadcast(&r.cond);
        pthread_mutex_unlock(&r.lock);
        wait_idle(pw, "a");
        assert_int_equal(r.n, 2);
        assert_string_equal(r.log[1], "a:kill");
        podworkers_free(pw);
}

static void test_pods_run_in_parallel(void **state)
{
        (void)state;
        struct recorder r = {.lock = PTHREAD_MUTEX_INITIALIZER,
                             .cond = PTHREAD_COND_INITIALIZER,
                             .block_first = true};
        struct podworkers *pw = podworkers_new(2, "/nonexistent.sock", 1000, work_fn, &r);
        submit(pw, "a", POD_WORK_SYNC, "v1");
        wait_for_entries(&r, 1);
        /* "a" is blocked; "b" must still be served by the other thread */
        submit(pw, "b", POD_WORK_SYNC, "v1");
        wait_for_entries(&r, 2);
        assert_string_equal(r.log[1], "b:v1");
        pthread_mutex_lock(&r.lock);
        r.released = true;
        pthread_cond_broadcast(&r.cond);
        pthread_mutex_unlock(&r.lock);
        wait_idle(pw, "a");
        podworkers_free(pw);
}

/* Every kill in flight at once blocks until all ten are: with a pool of
 * two threads they get threads of their own (a kill waits out a grace
 * period; upstream stops every pod at once).  Syncs keep to the pool. */
struct gate {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        int in_flight, max_in_flight, done;
        bool open;
        char started[32][16]; /* uids, in the order they started */
        int n_started;
};

static void gate_fn(void *ctx, struct cri_client *cri, const struct pod_work *w)
{
        (void)cri;
        struct gate *g = ctx;
        pthread_mutex_lock(&g->lock);
        if (g->n_started < 32)
                snprintf(g->started[g->n_started++], 16, "%s", w->uid);
        g->in_flight++;
        if (g->in_flight > g->max_in_flight)
                g->max_in_flight = g->in_flight;
        pthread_cond_broadcast(&g->cond);
        while (!g->open)
                pthread_cond_wait(&g->cond, &g->lock);
        g->in_flight--;
        g->done++;
        pthread_cond_broadcast(&g->cond);
        pthread_mutex_unlock(&g->lock);
}

/* Waits (at most 10 s) until the gate holds n in flight, or n are done. */
static bool gate_wait(struct gate *g, int n, bool done)
{
        struct timespec deadline;
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += 10;
        pthread_mutex_lock(&g->lock);
        int rc = 0;
        while ((done ? g->done : g->in_flight) < n && rc == 0)
                rc = pthread_cond_timedwait(&g->cond, &g->lock, &deadline);
        bool ok = (done ? g->done : g->in_flight) >= n;
        pthread_mutex_unlock(&g->lock);
        return ok;
}

static void gate_open(struct gate *g)
{
        pthread_mutex_lock(&g->lock);
        g->open = true;
        pthread_cond_broadcast(&g->cond);
        pthread_mutex_unlock(&g->lock);
}

static void test_kills_do_not_wait_for_each_other(void **state)
{
        (void)state;
        struct gate g = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
        struct podworkers *pw = podworkers_new(2, "/nonexistent.sock", 1000, gate_fn, &g);
        char uid[16];
        for (int i = 0; i < 10; i++) {
                snprintf(uid, sizeof(uid), "k%d", i);
                submit(pw, uid, POD_WORK_KILL, "kill");
        }
        assert_true(gate_wait(&g, 10, false));
        gate_open(&g);
        assert_true(gate_wait(&g, 10, true));
        assert_true(podworkers_free(pw));

        /* syncs: two at a time, the pool's size */
        struct gate s = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
        pw = podworkers_new(2, "/nonexistent.sock", 1000, gate_fn, &s);
        for (int i = 0; i < 6; i++) {
                snprintf(uid, sizeof(uid), "s%d", i);
                submit(pw, uid, POD_WORK_SYNC, "sync");
        }
        assert_true(gate_wait(&s, 2, false));
        usleep(100 * 1000); /* a third would have started by now */
        pthread_mutex_lock(&s.lock);
        assert_int_equal(s.max_in_flight, 2);
        pthread_mutex_unlock(&s.lock);
        gate_open(&s);
        assert_true(gate_wait(&s, 6, true));
        assert_true(podworkers_free(pw));
}

/* A pool of one busy with a sync: a kill queued behind other syncs, or
 * replacing a queued sync, starts at once on a thread of its own, which
 * takes no sync. */
static void test_kill_behind_syncs(void **state)
{
        (void)state;
        struct gate g = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
        struct podworkers *pw = podworkers_new(1, "/nonexistent.sock", 1000, gate_fn, &g);
        submit(pw, "s0", POD_WORK_SYNC, "sync");
        assert_true(gate_wait(&g, 1, false));
        submit(pw, "s1", POD_WORK_SYNC, "sync");
        submit(pw, "s2", POD_WORK_SYNC, "sync");
        submit(pw, "k1", POD_WORK_KILL, "kill");
        assert_true(gate_wait(&g, 2, false));
        submit(pw, "s2", POD_WORK_KILL, "kill"); /* replaces s2's queued sync */
        assert_true(gate_wait(&g, 3, false));
        usleep(100 * 1000); /* s1 would have started by now */
        pthread_mutex_lock(&g.lock);
        assert_int_equal(g.n_started, 3);
        assert_string_equal(g.started[0], "s0");
        assert_string_equal(g.started[1], "k1");
        assert_string_equal(g.started[2], "s2");
        pthread_mutex_unlock(&g.lock);
        gate_open(&g);
        assert_true(gate_wait(&g, 4, true));
        assert_true(podworkers_free(pw));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_newest_pending_replaces_older),
            cmocka_unit_test(test_kill_wins_over_sync),
            cmocka_unit_test(test_pods_run_in_parallel),
            cmocka_unit_test(test_kills_do_not_wait_for_each_other),
            cmocka_unit_test(test_kill_behind_syncs),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
