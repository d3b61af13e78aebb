/* SPDX-License-Identifier: Apache-2.0 */
/* The eviction manager's decisions (eviction/eviction.h) as upstream's
 * eviction_manager_test.go and helpers_test.go have them: thresholds and
 * their errors, thresholds met with grace periods and minimum reclaim, the
 * conditions and their transition period, the ranking per resource, the
 * evicted pod's message, admission under pressure. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "config/kubeletconfig.h"
#include "eviction/eviction.h"

#include "test_pods.h"

#include <stdlib.h>
#include <string.h>

#define Mi (1024LL * 1024)
#define S 1000000000LL

static int parse(const struct eviction_kv *hard, size_t nh, const struct eviction_kv *soft,
                 size_t ns, const struct eviction_kv *grace, size_t ng,
                 const struct eviction_kv *rec, size_t nr, struct eviction_config *c, char **msg)
{
        ck_error_t err = NULL;
        int rc = eviction_config_parse(hard, nh, soft, ns, grace, ng, rec, nr, true, c, &err);
        *msg = err ? strdup(ck_error_msg(err)) : NULL;
        ck_error_release(&err);
        return rc;
}

static void assert_parse_error(const struct eviction_kv *hard, size_t nh,
                               const struct eviction_kv *soft, size_t ns,
                               const struct eviction_kv *grace, size_t ng,
                               const struct eviction_kv *rec, size_t nr, const char *want)
{
        struct eviction_config c;
        char *msg = NULL;
        assert_int_equal(parse(hard, nh, soft, ns, grace, ng, rec, nr, &c, &msg), -1);
        assert_non_null(msg);
        assert_string_equal(msg, want);
        free(msg);
}

static void thresholds_parse_as_upstream(void **state)
{
        (void)state;
        struct eviction_config c;
        char *msg = NULL;
        /* upstream's defaults, as the configuration fills them in */
        struct eviction_kv defaults[8];
        for (size_t i = 0; i < kubelet_config_n_default_eviction_hard; i++)
                defaults[i] = (struct eviction_kv){kubelet_config_default_eviction_hard[i][0],
                                                   kubelet_config_default_eviction_hard[i][1]};
        assert_int_equal(parse(defaults, kubelet_config_n_default_eviction_hard, NULL, 0, NULL, 0,
                               NULL, 0, &c, &msg),
                         0);
        /* the five defaults and allocatableMemory.available from memory */
        assert_int_equal(c.n, 6);
        assert_int_equal(c.thresholds[0].signal, EVICTION_MEMORY_AVAILABLE);
        assert_int_equal(c.thresholds[0].value.quantity, 100 * Mi);
        assert_int_equal(c.thresholds[0].grace_period_ms, 0);
        assert_int_equal(c.thresholds[1].signal, EVICTION_NODEFS_AVAILABLE);
        assert_true(c.thresholds[1].value.percentage == 0.1f);
        assert_int_equal(c.thresholds[5].signal, EVICTION_ALLOCATABLE_MEMORY_AVAILABLE);
        /* "10%" of 1000 as upstream's float32 arithmetic makes it */
        assert_int_equal(eviction_value_quantity(&c.thresholds[1].value, 1000), 100);
        eviction_config_release(&c);

        /* soft with its grace period and a minimum reclaim on both kinds */
        const struct eviction_kv hard[] = {{"memory.available", "1Gi"}, {"nodefs.available", "0%"}};
        const struct eviction_kv soft[] = {{"memory.available", "2Gi"}};
        const struct eviction_kv grace[] = {{"memory.available", "1m30s"}};
        const struct eviction_kv rec[] = {{"memory.available", "500Mi"}};
        assert_int_equal(parse(hard, 2, soft, 1, grace, 1, rec, 1, &c, &msg), 0);
        assert_int_equal(c.n, 3); /* "0%" disables nodefs.available */
        assert_int_equal(c.thresholds[1].grace_period_ms, 90000);
        assert_int_equal(c.thresholds[0].min_reclaim.quantity, 500 * Mi);
        assert_int_equal(c.thresholds[1].min_reclaim.quantity, 500 * Mi);
        eviction_config_release(&c);
}

static void threshold_errors_are_upstreams(void **state)
{
        (void)state;
        const struct eviction_kv bad_signal[] = {{"memory.free", "1Gi"}};
        assert_parse_error(bad_signal, 1, NULL, 0, NULL, 0, NULL, 0,
                           "unsupported eviction signal memory.free");
        const struct eviction_kv zero[] = {{"memory.available", "0"}};
        assert_parse_error(zero, 1, NULL, 0, NULL, 0, NULL, 0,
                           "eviction threshold memory.available must be positive: 0");
        const struct eviction_kv pct[] = {{"nodefs.available", "150%"}};
        assert_parse_error(pct, 1, NULL, 0, NULL, 0, NULL, 0,
                           "eviction percentage threshold nodefs.available must be <= 100%: 150%");
        const struct eviction_kv neg[] = {{"nodefs.available", "-5%"}};
        assert_parse_error(neg, 1, NULL, 0, NULL, 0, NULL, 0,
                           "eviction percentage threshold nodefs.available must be >= 0%: -5%");
        const struct eviction_kv soft[] = {{"memory.available", "1Gi"}};
        assert_parse_error(NULL, 0, soft, 1, NULL, 0, NULL, 0,
                           "grace period must be specified for the soft eviction threshold "
                           "memory.available");
        const struct eviction_kv grace[] = {{"memory.available", "-1s"}};
        assert_parse_error(NULL, 0, soft, 1, grace, 1, NULL, 0,
                           "invalid eviction grace period specified: -1s, must be a positive "
                           "value");
        const struct eviction_kv rec[] = {{"memory.available", "0%"}};
        assert_parse_error(soft, 1, NULL, 0, NULL, 0, rec, 1,
                           "eviction percentage minimum reclaim memory.available must be "
                           "positive: 0%");
}

static void observe_memory(struct eviction_observation *obs, int64_t available, int64_t t)
{
        memset(obs, 0, sizeof(*obs) * EVICTION_N_SIGNALS);
        obs[EVICTION_MEMORY_AVAILABLE] =
            (struct eviction_observation){true, available, 4096 * Mi, t};
}

static void hard_soft_min_reclaim_and_transition(void **state)
{
        (void)state;
        const struct eviction_kv hard[] = {{"memory.available", "100Mi"}};
        const struct eviction_kv soft[] = {{"memory.available", "500Mi"}};
        const struct eviction_kv grace[] = {{"memory.available", "30s"}};
        const struct eviction_kv rec[] = {{"memory.available", "200Mi"}};
        struct eviction_config c;
        char *msg = NULL;
        assert_int_equal(parse(hard, 1, soft, 1, grace, 1, rec, 1, &c, &msg), 0);
        c.pressure_transition_ms = 300000;
        struct eviction_state *s = eviction_state_new(&c);
        struct eviction_observation obs[EVICTION_N_SIGNALS];
        struct eviction_decision d;

        /* plenty free: nothing */
        observe_memory(obs, 2048 * Mi, 1 * S);
        eviction_observe(s, obs, 1000, &d);
        assert_int_equal(d.conditions, 0);
        assert_int_equal(d.threshold, -1);
        /* under the soft threshold: the condition at once, no eviction
         * before its grace period */
        observe_memory(obs, 400 * Mi, 2 * S);
        eviction_observe(s, obs, 2000, &d);
        assert_int_equal(d.conditions, EVICTION_MEMORY_PRESSURE);
        assert_int_equal(d.threshold, -1);
        observe_memory(obs, 400 * Mi, 3 * S);
        eviction_observe(s, obs, 32000, &d);
        assert_int_equal(d.threshold, 1);
        assert_false(d.hard);
        /* the same stats again: not acted on twice */
        eviction_observe(s, obs, 33000, &d);
        assert_int_equal(d.threshold, -1);
        /* under the hard one: hard, at once (memory.available first) */
        observe_memory(obs, 50 * Mi, 4 * S);
        eviction_observe(s, obs, 34000, &d);
        assert_true(d.hard);
        assert_int_equal(c.thresholds[d.threshold].signal, EVICTION_MEMORY_AVAILABLE);
        /* above the hard threshold but below it plus the minimum reclaim
         * (300Mi): still met */
        observe_memory(obs, 250 * Mi, 5 * S);
        eviction_observe(s, obs, 35000, &d);
        assert_true(d.hard);
        assert_true(eviction_still_met(s, obs));
        /* all clear: no threshold, the condition held for 5 minutes */
        observe_memory(obs, 3000 * Mi, 6 * S);
        eviction_observe(s, obs, 36000, &d);
        assert_int_equal(d.threshold, -1);
        assert_false(eviction_still_met(s, obs));
        assert_int_equal(d.conditions, EVICTION_MEMORY_PRESSURE);
        observe_memory(obs, 3000 * Mi, 7 * S);
        eviction_observe(s, obs, 35000 + 300000, &d);
        assert_int_equal(d.conditions, 0);
        eviction_state_free(s);
        eviction_config_release(&c);
}

static void disk_and_pid_conditions(void **state)
{
        (void)state;
        const struct eviction_kv hard[] = {{"nodefs.available", "10%"}, {"pid.available", "100"}};
        struct eviction_config c;
        char *msg = NULL;
        assert_int_equal(parse(hard, 2, NULL, 0, NULL, 0, NULL, 0, &c, &msg), 0);
        c.pressure_transition_ms = 1;
        struct eviction_state *s = eviction_state_new(&c);
        struct eviction_observation obs[EVICTION_N_SIGNALS] = {0};
        obs[EVICTION_NODEFS_AVAILABLE] = (struct eviction_observation){true, 50, 1000, S};
        obs[EVICTION_PID_AVAILABLE] = (struct eviction_observation){true, 50, 32768, S};
        struct eviction_decision d;
        eviction_observe(s, obs, 1000, &d);
        assert_int_equal(d.conditions, EVICTION_DISK_PRESSURE | EVICTION_PID_PRESSURE);
        /* the configuration's order among non-memory signals */
        assert_int_equal(c.thresholds[d.threshold].signal, EVICTION_NODEFS_AVAILABLE);
        /* a signal without observation is never met */
        memset(obs, 0, sizeof(obs));
        eviction_observe(s, obs, 2000, &d);
        assert_int_equal(d.conditions, 0);
        eviction_state_free(s);
        eviction_config_release(&c);
}

static struct pod *api_pod(const char *yaml)
{
        struct pod *p = test_pod_yaml(yaml);
        p->source = POD_SOURCE_API;
        return p;
}

static void ranking_per_resource(void **state)
{
        (void)state;
        struct pod *pods[3] = {
            api_pod("apiVersion: v1\nkind: Pod\nmetadata: {name: guaranteed}\nspec:\n"
                    "  containers: [{name: c, image: x, resources: {requests: {memory: 1Gi}, "
                    "limits: {memory: 1Gi}}}]\n"),
            api_pod("apiVersion: v1\nkind: Pod\nmetadata: {name: besteffort}\nspec:\n"
                    "  containers: [{name: c, image: x}]\n"),
            api_pod("apiVersion: v1\nkind: Pod\nmetadata: {name: important}\nspec:\n"
                    "  priority: 1000\n  containers: [{name: c, image: x}]\n"),
        };
        struct eviction_pod_stats g = {.memory_request = 1024 * Mi,
                                       .has_memory = true,
                                       .memory_working_set = 900 * Mi,
                                       .has_processes = true,
                                       .processes = 50,
                                       .disk_used = 10 * Mi};
        struct eviction_pod_stats b = {.has_memory = true,
                                       .memory_working_set = 100 * Mi,
                                       .has_processes = true,
                                       .processes = 5,
                                       .disk_used = 500 * Mi};
        struct eviction_pod_stats i = {.has_memory = true,
                                       .memory_working_set = 800 * Mi,
                                       .has_processes = true,
                                       .processes = 500,
                                       .disk_used = 900 * Mi};
        const struct eviction_pod_stats *stats[3] = {&g, &b, &i};
        size_t idx[3] = {0, 1, 2};
        /* memory: over its request first (besteffort, important), then
         * lower priority; the guaranteed pod within its request last */
        eviction_rank(EVICTION_MEMORY_AVAILABLE, pods, stats, idx, 3);
        assert_int_equal(idx[0], 1);
        assert_int_equal(idx[1], 2);
        assert_int_equal(idx[2], 0);
        /* pids: priority, then the most processes */
        size_t p[3] = {0, 1, 2};
        eviction_rank(EVICTION_PID_AVAILABLE, pods, stats, p, 3);
        assert_int_equal(p[0], 0);
        assert_int_equal(p[1], 1);
        assert_int_equal(p[2], 2);
        /* disk: all exceed (no requests), priority, then usage */
        size_t k[3] = {0, 1, 2};
        eviction_rank(EVICTION_NODEFS_AVAILABLE, pods, stats, k, 3);
        assert_int_equal(k[0], 1);
        assert_int_equal(k[1], 0);
        assert_int_equal(k[2], 2);
        /* a pod whose memory figure is missing counts 0, as upstream's
         * memoryUsage: not first, the guaranteed pod within its request */
        struct eviction_pod_stats nomem = {.has_memory = false};
        const struct eviction_pod_stats *missing[3] = {&g, &nomem, &i};
        size_t m[3] = {0, 1, 2};
        eviction_rank(EVICTION_MEMORY_AVAILABLE, pods, missing, m, 3);
        assert_int_equal(m[0], 2);
        assert_int_equal(m[1], 1);
        assert_int_equal(m[2], 0);
        /* a pod without stats comes first */
        const struct eviction_pod_stats *none[3] = {&g, &b, NULL};
        size_t n[3] = {0, 1, 2};
        eviction_rank(EVICTION_MEMORY_AVAILABLE, pods, none, n, 3);
        assert_int_equal(n[0], 2);
        for (int x = 0; x < 3; x++)
                pod_unref(pods[x]);
}

static void the_evicted_pods_message(void **state)
{
        (void)state;
        struct pod *pod = api_pod("apiVersion: v1\nkind: Pod\nmetadata: {name: hog}\nspec:\n"
                                  "  containers:\n  - {name: a, image: x, resources: {requests: "
                                  "{memory: 10Mi}}}\n  - {name: b, image: x}\n");
        struct eviction_threshold t = {.signal = EVICTION_MEMORY_AVAILABLE,
                                       .value = {.quantity = 2048 * Mi}};
        struct eviction_observation obs[EVICTION_N_SIGNALS] = {0};
        obs[EVICTION_MEMORY_AVAILABLE] = (struct eviction_observation){true, 1500 * Mi, 0, 1};
        struct eviction_container_stats cs[] = {{"a", true, false, 60 * Mi, 0},
                                                {"b", true, false, 0, 0}};
        struct eviction_pod_stats st = {.has_memory = true, .containers = cs, .n_containers = 2};
        char *m = eviction_message(&t, obs, pod, &st);
        assert_string_equal(m, "The node was low on resource: memory. Threshold quantity: 2Gi, "
                               "available: 1500Mi. Container a was using 60Mi, request is 10Mi, "
                               "has larger consumption of memory. ");
        free(m);
        /* pids: no container lines; counts in DecimalSI */
        struct eviction_threshold tp = {.signal = EVICTION_PID_AVAILABLE,
                                        .value = {.quantity = 5000}};
        obs[EVICTION_PID_AVAILABLE] = (struct eviction_observation){true, 500, 32768, 1};
        m = eviction_message(&tp, obs, pod, &st);
        assert_string_equal(m, "The node was low on resource: pids. Threshold quantity: 5k, "
                               "available: 500. ");
        free(m);
        pod_unref(pod);
}

static void admission_under_pressure(void **state)
{
        (void)state;
        struct pod *be = api_pod("apiVersion: v1\nkind: Pod\nmetadata: {name: be}\nspec:\n"
                                 "  containers: [{name: c, image: x}]\n");
        struct pod *burst =
            api_pod("apiVersion: v1\nkind: Pod\nmetadata: {name: b}\nspec:\n"
                    "  containers: [{name: c, image: x, resources: {requests: {cpu: 10m}}}]\n");
        struct pod *tol = api_pod("apiVersion: v1\nkind: Pod\nmetadata: {name: t}\nspec:\n"
                                  "  tolerations: [{key: node.kubernetes.io/memory-pressure, "
                                  "operator: Exists, effect: NoSchedule}]\n"
                                  "  containers: [{name: c, image: x}]\n");
        struct pod *stat = test_pod_yaml("apiVersion: v1\nkind: Pod\nmetadata: {name: s}\nspec:\n"
                                         "  containers: [{name: c, image: x}]\n");
        char *msg = NULL;
        assert_true(eviction_admit(0, be, &msg));
        assert_false(eviction_admit(EVICTION_MEMORY_PRESSURE, be, &msg));
        assert_string_equal(msg, "The node had condition: [MemoryPressure]. ");
        free(msg);
        assert_true(eviction_admit(EVICTION_MEMORY_PRESSURE, burst, &msg));
        assert_true(eviction_admit(EVICTION_MEMORY_PRESSURE, tol, &msg));
        assert_false(eviction_admit(EVICTION_DISK_PRESSURE, burst, &msg));
        assert_string_equal(msg, "The node had condition: [DiskPressure]. ");
        free(msg);
        assert_false(eviction_admit(EVICTION_MEMORY_PRESSURE | EVICTION_PID_PRESSURE, tol, &msg));
        assert_string_equal(msg, "The node had condition: [MemoryPressure PIDPressure]. ");
        free(msg);
        /* a static pod is critical: admitted whatever the pressure */
        assert_true(pod_is_critical(stat));
        assert_true(eviction_admit(EVICTION_DISK_PRESSURE | EVICTION_MEMORY_PRESSURE, stat, &msg));
        pod_unref(be);
        pod_unref(burst);
        pod_unref(tol);
        pod_unref(stat);
}

static void local_storage_limits(void **state)
{
        (void)state;
        struct pod *pod = api_pod(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
            "  volumes: [{name: data, emptyDir: {sizeLimit: 10Mi}}, {name: other, emptyDir: {}}]\n"
            "  containers:\n"
            "  - {name: a, image: x, resources: {limits: {ephemeral-storage: 5Mi}}}\n"
            "  - {name: b, image: x, resources: {limits: {ephemeral-storage: 15Mi}}}\n");
        struct eviction_volume_usage vols[] = {{"data", 4 * Mi}, {"other", 100 * Mi}};
        struct eviction_container_usage ctrs[] = {{"a", true, true, 3 * Mi, 1 * Mi},
                                                  {"b", true, true, 0, 0}};
        struct eviction_local_usage u = {.volumes = vols,
                                         .n_volumes = 2,
                                         .has_ephemeral = true,
                                         .ephemeral_used = 10 * Mi,
                                         .containers = ctrs,
                                         .n_containers = 2,
                                         .has_pod_limit = true,
                                         .pod_limit = 20 * Mi};
        const char *signal = NULL;
        assert_true(eviction_has_local_limits(pod, true));
        assert_true(eviction_has_local_limits(pod, false));
        /* within every limit (no sizeLimit on "other") */
        assert_null(eviction_local_storage(pod, &u, &signal));
        /* the emptyDir over its sizeLimit comes first */
        vols[0].used = 11 * Mi;
        u.ephemeral_used = 30 * Mi;
        char *m = eviction_local_storage(pod, &u, &signal);
        assert_string_equal(m, "Usage of EmptyDir volume \"data\" exceeds the limit \"10Mi\". ");
        assert_string_equal(signal, "emptydirfs.limit");
        free(m);
        /* then the pod's total */
        vols[0].used = 1 * Mi;
        m = eviction_local_storage(pod, &u, &signal);
        assert_string_equal(m, "Pod ephemeral local storage usage exceeds the total limit of "
                               "containers 20Mi. ");
        assert_string_equal(signal, "ephemeralpodfs.limit");
        free(m);
        /* then a container: logs and rootfs (on the node's filesystem) */
        u.ephemeral_used = 10 * Mi;
        ctrs[0].rootfs_used = 5 * Mi;
        m = eviction_local_storage(pod, &u, &signal);
        assert_string_equal(m, "Container a exceeded its local ephemeral storage limit \"5Mi\". ");
        assert_string_equal(signal, "ephemeralcontainerfs.limit");
        free(m);
        /* with a dedicated image filesystem only its logs count */
        u.dedicated_imagefs = true;
        assert_null(eviction_local_storage(pod, &u, &signal));
        pod_unref(pod);

        /* the limits one by one: each is one; a sizeLimit of 0 and an
         * emptyDir without one are none */
        struct pod *none = api_pod("apiVersion: v1\nkind: Pod\nmetadata: {name: nolimit}\nspec:\n"
                                   "  volumes: [{name: d, emptyDir: {}}, {name: z, emptyDir: "
                                   "{sizeLimit: \"0\"}}]\n"
                                   "  containers: [{name: a, image: x}]\n");
        assert_false(eviction_has_local_limits(none, false));
        assert_true(eviction_has_local_limits(none, true));
        pod_unref(none);
        struct pod *vol = api_pod("apiVersion: v1\nkind: Pod\nmetadata: {name: vol}\nspec:\n"
                                  "  volumes: [{name: d, emptyDir: {sizeLimit: 1Mi}}]\n"
                                  "  containers: [{name: a, image: x}]\n");
        assert_true(eviction_has_local_limits(vol, false));
        pod_unref(vol);
        struct pod *ctr = api_pod("apiVersion: v1\nkind: Pod\nmetadata: {name: ctr}\nspec:\n"
                                  "  containers: [{name: a, image: x}, {name: b, image: x, "
                                  "resources: {limits: {ephemeral-storage: 1Mi}}}]\n");
        assert_true(eviction_has_local_limits(ctr, false));
        pod_unref(ctr);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(thresholds_parse_as_upstream),
            cmocka_unit_test(threshold_errors_are_upstreams),
            cmocka_unit_test(hard_soft_min_reclaim_and_transition),
            cmocka_unit_test(disk_and_pid_conditions),
            cmocka_unit_test(ranking_per_resource),
            cmocka_unit_test(the_evicted_pods_message),
            cmocka_unit_test(admission_under_pressure),
            cmocka_unit_test(local_storage_limits),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
