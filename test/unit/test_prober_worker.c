/* SPDX-License-Identifier: Apache-2.0 */
/* The prober's workers on its own threads, against an in-process HTTP
 * server on loopback whose answers the tests flip: thresholds, the changed
 * callback, startup gating, liveness failures until a new container,
 * initialDelaySeconds, containers that stop running, pods that go away.
 * Runtime statuses are built by hand (the boundary type); probes run with
 * periodSeconds 1, so each test takes a few seconds. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_pods.h"
#include "util/fsutil.h"

#include "api/decode.h"
#include "prober/prober.h"

#include "test_prober_server.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static void sleep_ms(int ms)
{
        poll(NULL, 0, ms);
}

/* "<type>Probe": an httpGet of path on the test server, period 1 s. */
static char *http_probe(const char *type, const char *path, int port, const char *extra)
{
        char *s = NULL;
        if (asprintf(&s,
                     "\"%sProbe\":{\"httpGet\":{\"path\":\"%s\",\"port\":%d},"
                     "\"periodSeconds\":1%s%s}",
                     type, path, port, extra ? "," : "", extra ? extra : "") < 0)
                abort();
        return s;
}

/* A pod "default/web" (uid "uid-1") with one container "c" carrying the
 * given probe members (comma separated JSON members). */
static struct pod *pod_with_probes(const char *probes, bool deleting)
{
        return test_pod_json(
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web\","
            "\"namespace\":\"default\",\"uid\":\"uid-1\"%s},\"spec\":{\"containers\":[{"
            "\"name\":\"c\",\"image\":\"busybox\",%s}]}}",
            deleting ? ",\"deletionTimestamp\":\"2030-01-01T00:00:00Z\"" : "", probes);
}

/* The runtime's view: container "c" with this id and state. */
struct rs_fixture {
        struct runtime_container_status cs;
        struct runtime_pod_status rs;
};

static const struct runtime_pod_status *runtime(struct rs_fixture *r, const char *id,
                                                enum container_state state, int64_t started_at)
{
        memset(r, 0, sizeof(*r));
        r->cs.id = (char *)id;
        r->cs.name = (char *)"c";
        r->cs.state = state;
        r->cs.started_at = started_at;
        r->rs.uid = (char *)"uid-1";
        r->rs.name = (char *)"web";
        r->rs.namespace = (char *)"default";
        r->rs.ip = (char *)"127.0.0.1";
        r->rs.containers = &r->cs;
        r->rs.n_containers = 1;
        return &r->rs;
}

/* ---- the changed callback ---- */

struct change {
        enum probe_type type;
        enum probe_result result;
        char container[16];
};

struct recorder {
        pthread_mutex_t lock;
        struct change changes[64];
        int n;
        int bad_uid; /* changes of another pod (asserted on the test's thread) */
};

static void on_change(void *ctx, const char *pod_uid, const char *container_name,
                      enum probe_type type, enum probe_result result)
{
        struct recorder *r = ctx;
        pthread_mutex_lock(&r->lock);
        if (strcmp(pod_uid, "uid-1") != 0)
                r->bad_uid++;
        if (r->n < 64) {
                struct change *c = &r->changes[r->n++];
                c->type = type;
                c->result = result;
                snprintf(c->container, sizeof(c->container), "%s", container_name);
        }
        pthread_mutex_unlock(&r->lock);
}

static int n_changes(struct recorder *r)
{
        pthread_mutex_lock(&r->lock);
        int n = r->n;
        pthread_mutex_unlock(&r->lock);
        return n;
}

static struct change change_at(struct recorder *r, int i)
{
        pthread_mutex_lock(&r->lock);
        struct change c = r->changes[i];
        pthread_mutex_unlock(&r->lock);
        return c;
}

/* How long a test waits for what must happen: a bound for a busy machine
 * (ASan, 2 cores), not a measure of the prober's speed. */
#define WAIT_MS 10000

/* Waits up to timeout_ms for n changes. */
static bool wait_changes(struct recorder *r, int n, int timeout_ms)
{
        int64_t end = fs_now_mono_ms() + timeout_ms;
        while (n_changes(r) < n && fs_now_mono_ms() < end)
                sleep_ms(10);
        return n_changes(r) >= n;
}

static bool wait_hits(struct http_server *s, const char *path, int n, int timeout_ms)
{
        int64_t end = fs_now_mono_ms() + timeout_ms;
        while (hs_hits(s, path) < n && fs_now_mono_ms() < end)
                sleep_ms(10);
        return hs_hits(s, path) >= n;
}

/* prober_results' value for container "c" ("true", "false"), or NULL. */
static const char *result_of(struct prober *p, bool startup, char *buf, size_t size)
{
        struct kv_list readiness = {0}, started = {0};
        prober_results(p, "uid-1", &readiness, &started);
        const char *v = kv_list_get(startup ? &started : &readiness, "c");
        const char *ret = NULL;
        if (v != NULL) {
                snprintf(buf, size, "%s", v);
                ret = buf;
        }
        kv_list_release(&readiness);
        kv_list_release(&started);
        return ret;
}

static void assert_result(struct prober *p, bool startup, const char *want)
{
        char buf[16];
        const char *got = result_of(p, startup, buf, sizeof(buf));
        if (want == NULL)
                assert_null(got);
        else if (got == NULL)
                fail_msg("no %s result, want %s", startup ? "startup" : "readiness", want);
        else
                assert_string_equal(got, want);
}

struct fixture {
        struct http_server *srv;
        struct recorder rec;
        struct prober *p;
        struct rs_fixture rs;
};

static int setup(void **state)
{
        struct fixture *f = calloc(1, sizeof(*f));
        f->srv = hs_start();
        pthread_mutex_init(&f->rec.lock, NULL);
        struct prober_options opts = {.n_threads = 2};
        f->p = prober_new(&opts, on_change, &f->rec);
        assert_non_null(f->p);
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        struct fixture *f = *state;
        prober_free(f->p);
        hs_stop(f->srv);
        assert_int_equal(f->rec.bad_uid, 0);
        pthread_mutex_destroy(&f->rec.lock);
        free(f);
        return 0;
}

static void test_readiness_thresholds_and_changes(void **state)
{
        struct fixture *f = *state;
        hs_route(f->srv, "/ready", 200);
        char *probe = http_probe("readiness", "/ready", f->srv->port,
                                 "\"successThreshold\":2,\"failureThreshold\":2");
        struct pod *pod = pod_with_probes(probe, false);
        free(probe);
        prober_update_pod(f->p, pod,
                          runtime(&f->rs, "c1", CONTAINER_STATE_RUNNING, fs_now_real_ns()));
        /* not ready until probed */
        assert_result(f->p, false, "false");
        assert_null(prober_liveness_failures(f->p, "uid-1"));

        /* two successes in a row make it ready */
        assert_true(wait_changes(&f->rec, 1, WAIT_MS));
        assert_true(hs_hits(f->srv, "/ready") >= 2);
        struct change c = change_at(&f->rec, 0);
        assert_int_equal(c.type, PROBE_READINESS);
        assert_int_equal(c.result, PROBE_RESULT_SUCCESS);
        assert_string_equal(c.container, "c");
        assert_result(f->p, false, "true");

        /* two failures in a row make it unready again */
        hs_route(f->srv, "/ready", 500);
        int before = hs_hits(f->srv, "/ready");
        assert_true(wait_changes(&f->rec, 2, WAIT_MS));
        assert_true(hs_hits(f->srv, "/ready") - before >= 2);
        c = change_at(&f->rec, 1);
        assert_int_equal(c.type, PROBE_READINESS);
        assert_int_equal(c.result, PROBE_RESULT_FAILURE);
        assert_result(f->p, false, "false");
        /* readiness failures never ask for a restart */
        assert_null(prober_liveness_failures(f->p, "uid-1"));
        assert_int_equal(n_changes(&f->rec), 2);
        pod_unref(pod);
}

static void test_startup_gates_liveness_and_readiness(void **state)
{
        struct fixture *f = *state;
        hs_route(f->srv, "/startup", 500);
        hs_route(f->srv, "/live", 200);
        hs_route(f->srv, "/ready", 200);
        char *s = http_probe("startup", "/startup", f->srv->port, "\"failureThreshold\":30");
        char *l = http_probe("liveness", "/live", f->srv->port, NULL);
        char *r = http_probe("readiness", "/ready", f->srv->port, NULL);
        char probes[1024];
        snprintf(probes, sizeof(probes), "%s,%s,%s", s, l, r);
        free(s);
        free(l);
        free(r);
        struct pod *pod = pod_with_probes(probes, false);
        prober_update_pod(f->p, pod,
                          runtime(&f->rs, "c1", CONTAINER_STATE_RUNNING, fs_now_real_ns()));
        assert_result(f->p, true, "false");

        /* the startup probe runs, the others wait */
        assert_true(wait_hits(f->srv, "/startup", 2, WAIT_MS));
        assert_int_equal(hs_hits(f->srv, "/live"), 0);
        assert_int_equal(hs_hits(f->srv, "/ready"), 0);
        assert_result(f->p, true, "false");
        assert_result(f->p, false, "false");
        assert_null(prober_started(f->p, "uid-1")); /* a sidecar would still hold the next */
        assert_int_equal(n_changes(&f->rec), 0);
        /* a sync in between changes nothing */
        prober_update_pod(f->p, pod,
                          runtime(&f->rs, "c1", CONTAINER_STATE_RUNNING, fs_now_real_ns()));

        /* started: liveness and readiness begin, startup stops */
        hs_route(f->srv, "/startup", 200);
        /* startup's change, then readiness's (the success let it run); each
         * is reported once the prober's lock is released, from the thread
         * that ran it, so the two may arrive in either order */
        assert_true(wait_changes(&f->rec, 2, WAIT_MS));
        struct change c0 = change_at(&f->rec, 0), c1 = change_at(&f->rec, 1);
        bool startup_first = c0.type == PROBE_STARTUP;
        struct change c = startup_first ? c0 : c1;
        assert_int_equal(c.type, PROBE_STARTUP);
        assert_int_equal(c.result, PROBE_RESULT_SUCCESS);
        assert_result(f->p, true, "true");
        char **started = prober_started(f->p, "uid-1");
        assert_non_null(started);
        assert_string_equal(started[0], "c");
        assert_null(started[1]);
        free(started[0]);
        free(started);
        int startup_hits = hs_hits(f->srv, "/startup");
        assert_true(wait_hits(f->srv, "/live", 1, WAIT_MS));
        c = startup_first ? c1 : c0;
        assert_int_equal(c.type, PROBE_READINESS);
        assert_int_equal(c.result, PROBE_RESULT_SUCCESS);
        assert_result(f->p, false, "true");
        /* liveness goes on probing (a second period), startup does not */
        assert_true(wait_hits(f->srv, "/live", 2, WAIT_MS));
        assert_int_equal(hs_hits(f->srv, "/startup"), startup_hits);
        pod_unref(pod);
}

/* A failed startup probe asks for a restart as a startup failure (upstream's
 * reasonStartupProbe: the startup probe's terminationGracePeriodSeconds). */
static void test_startup_failure(void **state)
{
        struct fixture *f = *state;
        hs_route(f->srv, "/startup", 500);
        char *probe = http_probe("startup", "/startup", f->srv->port, "\"failureThreshold\":1");
        struct pod *pod = pod_with_probes(probe, false);
        free(probe);
        prober_update_pod(f->p, pod,
                          runtime(&f->rs, "c1", CONTAINER_STATE_RUNNING, fs_now_real_ns()));
        assert_true(wait_changes(&f->rec, 1, WAIT_MS));
        struct change c = change_at(&f->rec, 0);
        assert_int_equal(c.type, PROBE_STARTUP);
        assert_int_equal(c.result, PROBE_RESULT_FAILURE);
        char **names = prober_startup_failures(f->p, "uid-1");
        assert_non_null(names);
        assert_string_equal(names[0], "c");
        assert_null(names[1]);
        free(names[0]);
        free(names);
        assert_null(prober_liveness_failures(f->p, "uid-1"));
        pod_unref(pod);
}

static void test_liveness_failure_until_a_new_container(void **state)
{
        struct fixture *f = *state;
        hs_route(f->srv, "/live", 500);
        char *probe = http_probe("liveness", "/live", f->srv->port, "\"failureThreshold\":1");
        struct pod *pod = pod_with_probes(probe, false);
        free(probe);
        prober_update_pod(f->p, pod,
                          runtime(&f->rs, "c1", CONTAINER_STATE_RUNNING, fs_now_real_ns()));
        assert_true(wait_changes(&f->rec, 1, WAIT_MS));
        struct change c = change_at(&f->rec, 0);
        assert_int_equal(c.type, PROBE_LIVENESS);
        assert_int_equal(c.result, PROBE_RESULT_FAILURE);
        char **names = prober_liveness_failures(f->p, "uid-1");
        assert_non_null(names);
        assert_string_equal(names[0], "c");
        assert_null(names[1]);
        free(names[0]);
        free(names);
        /* a liveness failure, not a startup one: the kill uses the liveness
         * probe's terminationGracePeriodSeconds */
        assert_null(prober_startup_failures(f->p, "uid-1"));

        /* on hold: no more probes of this container; a sync of the same
         * container keeps the verdict */
        int hits = hs_hits(f->srv, "/live");
        prober_update_pod(f->p, pod,
                          runtime(&f->rs, "c1", CONTAINER_STATE_RUNNING, fs_now_real_ns()));
        sleep_ms(1300);
        assert_int_equal(hs_hits(f->srv, "/live"), hits);
        names = prober_liveness_failures(f->p, "uid-1");
        assert_non_null(names);
        free(names[0]);
        free(names);

        /* the restarted container: forgotten, probed afresh */
        hs_route(f->srv, "/live", 200);
        prober_update_pod(f->p, pod,
                          runtime(&f->rs, "c2", CONTAINER_STATE_RUNNING, fs_now_real_ns()));
        assert_null(prober_liveness_failures(f->p, "uid-1"));
        assert_true(wait_hits(f->srv, "/live", hits + 2, WAIT_MS));
        assert_int_equal(n_changes(&f->rec), 1); /* liveness starts as success */
        pod_unref(pod);
}

static void test_initial_delay_counts_from_the_container_start(void **state)
{
        struct fixture *f = *state;
        hs_route(f->srv, "/ready", 200);
        char *probe = http_probe("readiness", "/ready", f->srv->port, "\"initialDelaySeconds\":2");
        struct pod *pod = pod_with_probes(probe, false);
        free(probe);
        int64_t start = fs_now_mono_ms();
        prober_update_pod(f->p, pod,
                          runtime(&f->rs, "c1", CONTAINER_STATE_RUNNING, fs_now_real_ns()));
        assert_true(wait_hits(f->srv, "/ready", 1, WAIT_MS));
        /* not before the initial delay */
        assert_true(fs_now_mono_ms() - start >= 1900);
        pod_unref(pod);

        /* a container that started 60 s ago, with an initial delay of 30 s
         * (and its own path, so that c1's probes do not count): its delay is
         * over, it is probed without waiting another 30 s (WAIT_MS is 10 s) */
        hs_route(f->srv, "/ready2", 200);
        probe = http_probe("readiness", "/ready2", f->srv->port, "\"initialDelaySeconds\":30");
        pod = pod_with_probes(probe, false);
        free(probe);
        prober_update_pod(
            f->p, pod,
            runtime(&f->rs, "c2", CONTAINER_STATE_RUNNING, fs_now_real_ns() - 60LL * 1000000000));
        assert_true(wait_hits(f->srv, "/ready2", 1, WAIT_MS));
        pod_unref(pod);
}

static void test_stopped_container_and_removed_pod(void **state)
{
        struct fixture *f = *state;
        hs_route(f->srv, "/ready", 200);
        char *probe = http_probe("readiness", "/ready", f->srv->port, NULL);
        struct pod *pod = pod_with_probes(probe, false);
        free(probe);
        prober_update_pod(f->p, pod,
                          runtime(&f->rs, "c1", CONTAINER_STATE_RUNNING, fs_now_real_ns()));
        assert_true(wait_changes(&f->rec, 1, WAIT_MS));
        assert_result(f->p, false, "true");

        /* exited: no readiness result, no more probes */
        prober_update_pod(f->p, pod,
                          runtime(&f->rs, "c1", CONTAINER_STATE_EXITED, fs_now_real_ns()));
        assert_result(f->p, false, NULL);
        int hits = hs_hits(f->srv, "/ready");
        sleep_ms(1300);
        assert_true(hs_hits(f->srv, "/ready") <= hits + 1); /* at most one in flight */
        hits = hs_hits(f->srv, "/ready");
        sleep_ms(1100);
        assert_int_equal(hs_hits(f->srv, "/ready"), hits);

        /* running again: a fresh worker, not ready until probed */
        prober_update_pod(f->p, pod,
                          runtime(&f->rs, "c2", CONTAINER_STATE_RUNNING, fs_now_real_ns()));
        assert_result(f->p, false, "false");
        assert_true(wait_hits(f->srv, "/ready", hits + 1, WAIT_MS));

        /* the pod left: as for the exited container, a probe in flight may
         * still arrive, then none */
        prober_remove_pod(f->p, "uid-1");
        assert_result(f->p, false, NULL);
        hits = hs_hits(f->srv, "/ready");
        sleep_ms(1300);
        assert_true(hs_hits(f->srv, "/ready") <= hits + 1);
        hits = hs_hits(f->srv, "/ready");
        sleep_ms(1300);
        assert_int_equal(hs_hits(f->srv, "/ready"), hits);
        pod_unref(pod);
}

static void test_deleted_pod_is_not_restarted_and_updates_never_block(void **state)
{
        struct fixture *f = *state;
        struct hs_route *slow = hs_route(f->srv, "/live", 500);
        atomic_store(&slow->delay_ms, 3000);
        char *probe = http_probe("liveness", "/live", f->srv->port,
                                 "\"failureThreshold\":1,\"timeoutSeconds\":5");
        struct pod *pod = pod_with_probes(probe, false);
        /* an update never waits for a probe in flight */
        prober_update_pod(f->p, pod,
                          runtime(&f->rs, "c1", CONTAINER_STATE_RUNNING, fs_now_real_ns()));
        assert_true(wait_hits(f->srv, "/live", 1, WAIT_MS));
        /* the updates return while the probe is still unanswered (the
         * server holds it 3 s) */
        prober_update_pod(f->p, pod,
                          runtime(&f->rs, "c1", CONTAINER_STATE_RUNNING, fs_now_real_ns()));
        assert_int_equal(atomic_load(&slow->in_flight), 1);

        /* the pod is being deleted: liveness turns quiet, no restart */
        struct pod *deleting = pod_with_probes(probe, true);
        free(probe);
        prober_update_pod(f->p, deleting,
                          runtime(&f->rs, "c1", CONTAINER_STATE_RUNNING, fs_now_real_ns()));
        assert_int_equal(atomic_load(&slow->in_flight), 1);
        /* the slow failure lands on a worker on hold */
        for (int waited = 0; atomic_load(&slow->in_flight) > 0 && waited < WAIT_MS; waited += 10)
                sleep_ms(10);
        assert_int_equal(atomic_load(&slow->in_flight), 0);
        sleep_ms(500);
        assert_null(prober_liveness_failures(f->p, "uid-1"));
        assert_int_equal(hs_hits(f->srv, "/live"), 1);
        pod_unref(pod);
        pod_unref(deleting);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_readiness_thresholds_and_changes, setup, teardown),
            cmocka_unit_test_setup_teardown(test_startup_gates_liveness_and_readiness, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_startup_failure, setup, teardown),
            cmocka_unit_test_setup_teardown(test_liveness_failure_until_a_new_container, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_initial_delay_counts_from_the_container_start,
                                            setup, teardown),
            cmocka_unit_test_setup_teardown(test_stopped_container_and_removed_pod, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(
                test_deleted_pod_is_not_restarted_and_updates_never_block, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
