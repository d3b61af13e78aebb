/* SPDX-License-Identifier: Apache-2.0 */
/* PLEG relist diff: the events a user's pods produce between two relists. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "pleg/pleg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct seen {
        char ev[16][48];
        const struct runtime_pod_entry *pod[16]; /* the event's pod as relisted */
        int n;
};

static const char *names[] = {"started", "died", "removed", "changed", "sandbox", "relist"};

static void record(void *ctx, const struct pleg_event *e)
{
        struct seen *s = ctx;
        s->pod[s->n] = e->pod;
        snprintf(s->ev[s->n++], 48, "%s %s %s", names[e->type], e->uid,
                 e->container_id ? e->container_id : "-");
}

#define C(i, n, st)                                                                                \
        {                                                                                          \
                .id = (char *)(i), .name = (char *)(n), .state = (st)                              \
        }

static void test_diff_events(void **state)
{
        (void)state;
        struct runtime_pod_entry_sandbox sb_ready = {.id = "s1", .state = SANDBOX_STATE_READY};
        struct runtime_pod_entry_sandbox sb_dead = {.id = "s1", .state = SANDBOX_STATE_NOTREADY};
        struct runtime_pod_entry_container old_c[] = {
            C("c1", "web", CONTAINER_STATE_RUNNING),
            C("c2", "side", CONTAINER_STATE_RUNNING),
            C("c3", "gone", CONTAINER_STATE_EXITED),
        };
        struct runtime_pod_entry_container new_c[] = {
            C("c1", "web", CONTAINER_STATE_RUNNING),  /* unchanged: no event */
            C("c2", "side", CONTAINER_STATE_EXITED),  /* died */
            C("c4", "new", CONTAINER_STATE_RUNNING),  /* started */
            C("c5", "made", CONTAINER_STATE_CREATED), /* changed */
        };
        struct runtime_pod_entry old_p = {.uid = "u1",
                                          .sandboxes = &sb_ready,
                                          .n_sandboxes = 1,
                                          .containers = old_c,
                                          .n_containers = 3};
        struct runtime_pod_entry new_p = {.uid = "u1",
                                          .sandboxes = &sb_dead,
                                          .n_sandboxes = 1,
                                          .containers = new_c,
                                          .n_containers = 4};
        struct runtime_pod_entry_container gone_c[] = {C("x1", "app", CONTAINER_STATE_RUNNING)};
        struct runtime_pod_entry gone_p = {.uid = "u2", .containers = gone_c, .n_containers = 1};
        struct runtime_pod_entry old_pods[] = {old_p, gone_p};
        struct runtime_pod_list old = {.pods = old_pods, .n_pods = 2};
        struct runtime_pod_list cur = {.pods = &new_p, .n_pods = 1};

        struct seen s = {0};
        pleg_diff(&old, &cur, record, &s);
        const char *want[] = {
            "died u1 c2",   "started u1 c4", "changed u1 c5", "removed u1 c3",
            "sandbox u1 -", "died u2 x1",    "removed u2 x1",
        };
        assert_int_equal(s.n, (int)(sizeof(want) / sizeof(want[0])));
        for (int i = 0; i < s.n; i++)
                assert_string_equal(s.ev[i], want[i]);
        /* each event carries its pod as this relist saw it (the pod cache
         * compares it with what it keeps); a pod gone has none */
        for (int i = 0; i < 5; i++)
                assert_ptr_equal(s.pod[i], &cur.pods[0]);
        assert_null(s.pod[5]);
        assert_null(s.pod[6]);
}

static void test_first_relist_reports_everything_running(void **state)
{
        (void)state;
        struct runtime_pod_entry_container c[] = {C("c1", "web", CONTAINER_STATE_RUNNING)};
        struct runtime_pod_entry p = {.uid = "u1", .containers = c, .n_containers = 1};
        struct runtime_pod_list cur = {.pods = &p, .n_pods = 1};
        struct seen s = {0};
        pleg_diff(NULL, &cur, record, &s);
        assert_int_equal(s.n, 1);
        assert_string_equal(s.ev[0], "started u1 c1");
        /* and an identical relist says nothing */
        s.n = 0;
        pleg_diff(&cur, &cur, record, &s);
        assert_int_equal(s.n, 0);
}

/* upstream GenericPLEG.Healthy, as the node's Ready condition shows it */
static void test_health(void **state)
{
        (void)state;
        char *why = pleg_unhealthy(0, 5000);
        assert_string_equal(why, "pleg has yet to be successful");
        free(why);
        assert_null(pleg_unhealthy(1000, 1000 + PLEG_RELIST_THRESHOLD_MS));
        why = pleg_unhealthy(1000, 1000 + PLEG_RELIST_THRESHOLD_MS + 5500);
        assert_string_equal(why, "pleg was last seen active 3m5.5s ago; threshold is 3m0s");
        free(why);
        why = pleg_unhealthy(1, 1 + 2 * 3600 * 1000);
        assert_string_equal(why, "pleg was last seen active 2h0m0s ago; threshold is 3m0s");
        free(why);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_diff_events),
            cmocka_unit_test(test_first_relist_reports_everything_running),
            cmocka_unit_test(test_health),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
