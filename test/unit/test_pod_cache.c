/* SPDX-License-Identifier: Apache-2.0 */
/* The pod status cache between syncs (kubelet/pod_cache.h): what a sync
 * put back is what the next sync takes, unless the PLEG saw the pod change
 * in between, even while the sync's read of the runtime was in flight. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "kubelet/pod_cache.h"
#include "util/xalloc.h"

#include <stdint.h>

#define NOW 1000000 /* ms, CLOCK_MONOTONIC */
#define FOREVER INT64_MAX

/* A cache whose PLEG has just relisted. */
static struct pod_cache *new_cache(void)
{
        struct pod_cache *c = pod_cache_new();
        pod_cache_relisted(c, NOW);
        return c;
}

static struct runtime_pod_status *status_of(const char *uid)
{
        struct runtime_pod_status *s = xcalloc(1, sizeof(*s));
        s->uid = xstrdup(uid);
        return s;
}

static void test_first_take_is_empty_then_what_was_put(void **state)
{
        (void)state;
        struct pod_cache *c = new_cache();
        uint64_t gen = 0;
        assert_null(pod_cache_take(c, "a", NOW, &gen));
        struct runtime_pod_status *s = status_of("a");
        pod_cache_put(c, "a", s, gen, FOREVER);
        uint64_t gen2 = 0;
        assert_ptr_equal(pod_cache_take(c, "a", NOW, &gen2), s);
        assert_int_equal(gen2, gen);
        /* taken: the cache holds it no more until it is put back */
        uint64_t gen3 = 0;
        assert_null(pod_cache_take(c, "a", NOW, &gen3));
        pod_cache_put(c, "a", s, gen3, FOREVER);
        assert_ptr_equal(pod_cache_take(c, "a", NOW, &gen3), s);
        runtime_pod_status_free(s);
        pod_cache_free(c);
}

static void test_invalidated_status_is_not_taken(void **state)
{
        (void)state;
        struct pod_cache *c = new_cache();
        uint64_t gen = 0;
        assert_null(pod_cache_take(c, "a", NOW, &gen));
        pod_cache_put(c, "a", status_of("a"), gen, FOREVER);
        pod_cache_put(c, "b", status_of("b"), pod_cache_generation(c, "b"), FOREVER);
        pod_cache_invalidate(c, "a");
        assert_null(pod_cache_take(c, "a", NOW, &gen));
        /* another pod keeps its own */
        struct runtime_pod_status *b = pod_cache_take(c, "b", NOW, &gen);
        assert_non_null(b);
        assert_string_equal(b->uid, "b");
        runtime_pod_status_free(b);
        pod_cache_free(c);
}

/* The race the generations close: the PLEG reports a change while the
 * sync reads the runtime; what the sync read may predate the change. */
static void test_put_after_an_invalidation_in_flight_is_dropped(void **state)
{
        (void)state;
        struct pod_cache *c = new_cache();
        uint64_t gen = 0;
        assert_null(pod_cache_take(c, "a", NOW, &gen)); /* then the runtime is read... */
        pod_cache_invalidate(c, "a");                   /* ...while the PLEG sees a change */
        pod_cache_put(c, "a", status_of("a"), gen, FOREVER);
        assert_null(pod_cache_take(c, "a", NOW, &gen));
        /* the same after a generation read for a second read of the runtime */
        gen = pod_cache_generation(c, "a");
        pod_cache_invalidate_all(c);
        pod_cache_put(c, "a", status_of("a"), gen, FOREVER);
        assert_null(pod_cache_take(c, "a", NOW, &gen));
        /* and a read that no event crossed is kept */
        gen = pod_cache_generation(c, "a");
        pod_cache_put(c, "a", status_of("a"), gen, FOREVER);
        struct runtime_pod_status *s = pod_cache_take(c, "a", NOW, &gen);
        assert_non_null(s);
        runtime_pod_status_free(s);
        pod_cache_free(c);
}

static void test_invalidate_all_drops_every_pod(void **state)
{
        (void)state;
        struct pod_cache *c = new_cache();
        const char *uids[] = {"a", "b", "c"};
        for (size_t i = 0; i < 3; i++)
                pod_cache_put(c, uids[i], status_of(uids[i]), pod_cache_generation(c, uids[i]),
                              FOREVER);
        pod_cache_invalidate_all(c);
        uint64_t gen;
        for (size_t i = 0; i < 3; i++)
                assert_null(pod_cache_take(c, uids[i], NOW, &gen));
        pod_cache_free(c);
}

/* A pod forgotten (deleted) while a read was in flight: the read is not
 * kept, and a pod of the same UID made again starts empty, with a
 * generation the old read cannot match. */
static void test_forgotten_pod_keeps_nothing(void **state)
{
        (void)state;
        struct pod_cache *c = new_cache();
        uint64_t gen = pod_cache_generation(c, "a");
        pod_cache_forget(c, "a");
        assert_int_equal(pod_cache_size(c), 0);
        pod_cache_put(c, "a", status_of("a"), gen, FOREVER);
        assert_int_equal(pod_cache_size(c), 0);
        uint64_t gen2 = 0;
        assert_null(pod_cache_take(c, "a", NOW, &gen2));
        assert_int_not_equal(gen2, gen);
        pod_cache_put(c, "a", status_of("a"), gen, FOREVER);
        assert_null(pod_cache_take(c, "a", NOW, &gen2));
        /* an invalidation of a pod the cache never knew makes nothing */
        pod_cache_invalidate(c, "never");
        assert_int_equal(pod_cache_size(c), 1);
        pod_cache_forget(c, "a");
        pod_cache_forget(c, "a"); /* twice: harmless */
        assert_int_equal(pod_cache_size(c), 0);
        pod_cache_free(c);
}

static struct runtime_pod_status *running_pod(const char *uid, const char *cid,
                                              enum container_state state)
{
        struct runtime_pod_status *s = status_of(uid);
        s->sandboxes = xcalloc(1, sizeof(*s->sandboxes));
        s->sandboxes[0].id = xstrdup("sb1");
        s->sandboxes[0].state = SANDBOX_STATE_READY;
        s->n_sandboxes = 1;
        s->containers = xcalloc(1, sizeof(*s->containers));
        s->containers[0].id = xstrdup(cid);
        s->containers[0].state = state;
        s->n_containers = 1;
        return s;
}

/* The PLEG reports the change the last sync made itself (it started the
 * container and read the pod at its end): what is kept shows it already
 * and stays.  Any other difference makes it stale. */
static void test_observed_change_already_kept_keeps_it(void **state)
{
        (void)state;
        struct pod_cache *c = new_cache();
        struct runtime_pod_entry_sandbox sb = {.id = "sb1", .state = SANDBOX_STATE_READY};
        struct runtime_pod_entry_container ct = {.id = "c1", .state = CONTAINER_STATE_RUNNING};
        struct runtime_pod_entry seen = {
            .uid = "a", .sandboxes = &sb, .n_sandboxes = 1, .containers = &ct, .n_containers = 1};
        uint64_t gen = pod_cache_generation(c, "a");
        pod_cache_put(c, "a", running_pod("a", "c1", CONTAINER_STATE_RUNNING), gen, FOREVER);
        pod_cache_observe(c, "a", &seen);
        struct runtime_pod_status *s = pod_cache_take(c, "a", NOW, &gen);
        assert_non_null(s);
        pod_cache_put(c, "a", s, gen, FOREVER);

        /* the container died since */
        ct.state = CONTAINER_STATE_EXITED;
        pod_cache_observe(c, "a", &seen);
        assert_null(pod_cache_take(c, "a", NOW, &gen));
        pod_cache_put(c, "a", running_pod("a", "c1", CONTAINER_STATE_RUNNING), gen, FOREVER);
        /* the sandbox stopped */
        ct.state = CONTAINER_STATE_RUNNING;
        sb.state = SANDBOX_STATE_NOTREADY;
        pod_cache_observe(c, "a", &seen);
        assert_null(pod_cache_take(c, "a", NOW, &gen));
        pod_cache_put(c, "a", running_pod("a", "c1", CONTAINER_STATE_RUNNING), gen, FOREVER);
        /* another container appeared */
        sb.state = SANDBOX_STATE_READY;
        struct runtime_pod_entry_container two[] = {ct,
                                                    {.id = "c2", .state = CONTAINER_STATE_CREATED}};
        seen.containers = two;
        seen.n_containers = 2;
        pod_cache_observe(c, "a", &seen);
        assert_null(pod_cache_take(c, "a", NOW, &gen));
        pod_cache_put(c, "a", running_pod("a", "c1", CONTAINER_STATE_RUNNING), gen, FOREVER);
        /* the pod left the runtime */
        pod_cache_observe(c, "a", NULL);
        assert_null(pod_cache_take(c, "a", NOW, &gen));

        /* a sync holds the pod (its status taken): any event makes its
         * read in flight stale, even one that matches */
        seen.containers = &ct;
        seen.n_containers = 1;
        assert_null(pod_cache_take(c, "a", NOW, &gen));
        pod_cache_observe(c, "a", &seen);
        pod_cache_put(c, "a", running_pod("a", "c1", CONTAINER_STATE_RUNNING), gen, FOREVER);
        assert_null(pod_cache_take(c, "a", NOW, &gen));
        pod_cache_free(c);
}

/* Without a live PLEG nothing tells the cache that a pod changed: every
 * sync reads the runtime. */
static void test_nothing_is_used_while_the_pleg_is_not_relisting(void **state)
{
        (void)state;
        struct pod_cache *c = pod_cache_new();
        uint64_t gen = pod_cache_generation(c, "a");
        pod_cache_put(c, "a", status_of("a"), gen, FOREVER);
        assert_null(pod_cache_take(c, "a", NOW, &gen)); /* no relist yet */
        pod_cache_put(c, "a", status_of("a"), gen, FOREVER);
        pod_cache_relisted(c, NOW);
        int64_t late = NOW + POD_CACHE_RELIST_MAX_AGE_MS;
        struct runtime_pod_status *s = pod_cache_take(c, "a", late, &gen);
        assert_non_null(s);
        pod_cache_put(c, "a", s, gen, FOREVER);
        assert_null(pod_cache_take(c, "a", late + 1, &gen)); /* the PLEG stalled */
        pod_cache_free(c);
}

/* A container that just exited: what the runtime says of it may settle
 * (OOMKilled), so its pod's status is kept only a short while. */
static void test_a_recent_exit_expires_the_status(void **state)
{
        (void)state;
        const int64_t real = 1700000000LL * 1000000000LL;
        struct runtime_pod_status *s = running_pod("a", "c1", CONTAINER_STATE_RUNNING);
        assert_true(pod_cache_expiry(s, NOW, real) == INT64_MAX);
        s->containers[0].state = CONTAINER_STATE_EXITED;
        s->containers[0].finished_at = real - 2000000000LL; /* 2 s ago */
        assert_int_equal(pod_cache_expiry(s, NOW, real), NOW + POD_CACHE_RECENT_EXIT_MS);
        s->containers[0].finished_at = real - POD_CACHE_RECENT_EXIT_MS * 1000000LL; /* long ago */
        assert_true(pod_cache_expiry(s, NOW, real) == INT64_MAX);

        struct pod_cache *c = new_cache();
        uint64_t gen = pod_cache_generation(c, "a");
        pod_cache_put(c, "a", s, gen, NOW + 100);
        s = pod_cache_take(c, "a", NOW + 99, &gen);
        assert_non_null(s);
        pod_cache_put(c, "a", s, gen, NOW + 100);
        assert_null(pod_cache_take(c, "a", NOW + 100, &gen));
        pod_cache_free(c);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_first_take_is_empty_then_what_was_put),
            cmocka_unit_test(test_invalidated_status_is_not_taken),
            cmocka_unit_test(test_put_after_an_invalidation_in_flight_is_dropped),
            cmocka_unit_test(test_invalidate_all_drops_every_pod),
            cmocka_unit_test(test_forgotten_pod_keeps_nothing),
            cmocka_unit_test(test_observed_change_already_kept_keeps_it),
            cmocka_unit_test(test_nothing_is_used_while_the_pleg_is_not_relisting),
            cmocka_unit_test(test_a_recent_exit_expires_the_status),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
