/* SPDX-License-Identifier: Apache-2.0 */
/* Prometheus metrics (metrics/metrics.h): the text client_golang's registry
 * and expfmt write for the same families, updates from many threads,
 * collect callbacks and the process collector's families. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "metrics/metrics.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct metrics_family *must_register(struct metrics_registry *r,
                                            const struct metrics_opts *o)
{
        ck_error_t err = NULL;
        struct metrics_family *f = NULL;
        if (metrics_register(r, o, &f, &err) < 0)
                fail_msg("register %s: %s", o->name, ck_error_msg(err));
        return f;
}

static struct metrics_child *must_child(struct metrics_family *f, const char *const *values)
{
        ck_error_t err = NULL;
        struct metrics_child *c = NULL;
        if (metrics_child_get(f, values, &c, &err) < 0)
                fail_msg("child: %s", ck_error_msg(err));
        return c;
}

/* Renders r and compares with want; returns nothing dropped. */
static void assert_render(struct metrics_registry *r, const char *want)
{
        cleanup_metrics_buf struct metrics_buf b = {0};
        assert_int_equal(metrics_render(r, &b), 0);
        assert_string_equal(b.len ? b.data : "", want);
        assert_int_equal(b.len, strlen(want));
}

static void test_counter_with_labels(void **state)
{
        (void)state;
        struct metrics_registry *r = metrics_registry_new();
        const char *labels[] = {"method", "code"};
        struct metrics_family *f = must_register(r, &(struct metrics_opts){
                                                        .name = "http_requests_total",
                                                        .help = "Requests served.",
                                                        .type = METRICS_COUNTER,
                                                        .label_names = labels,
                                                        .n_labels = 2,
                                                    });
        struct metrics_child *get500 = must_child(f, (const char *[]){"GET", "500"});
        struct metrics_child *post200 = must_child(f, (const char *[]){"POST", "200"});
        metrics_counter_inc(get500);
        metrics_counter_inc(get500);
        metrics_counter_add(post200, 2.5);
        metrics_counter_add(post200, -1); /* a counter never decreases */
        /* the same tuple is the same child */
        assert_ptr_equal(must_child(f, (const char *[]){"GET", "500"}), get500);
        metrics_counter_inc(must_child(f, (const char *[]){"GET", "500"}));
        assert_true(metrics_child_value(get500) == 3);
        /* label pairs are sorted by name, then samples by those values:
         * code="200" (POST) before code="500" (GET) */
        assert_render(r, "# HELP http_requests_total [ALPHA] Requests served.\n"
                         "# TYPE http_requests_total counter\n"
                         "http_requests_total{code=\"200\",method=\"POST\"} 2.5\n"
                         "http_requests_total{code=\"500\",method=\"GET\"} 3\n");
        metrics_registry_free(r);
}

static void test_gauges_stability_and_order(void **state)
{
        (void)state;
        struct metrics_registry *r = metrics_registry_new();
        /* registered out of order: rendered sorted by name */
        struct metrics_family *pods = must_register(r, &(struct metrics_opts){
                                                           .name = "kubelet_running_pods",
                                                           .help = "Number of pods.",
                                                           .type = METRICS_GAUGE,
                                                           .stability = METRICS_BETA,
                                                       });
        must_register(r, &(struct metrics_opts){
                             .name = "kubelet_node_name",
                             .help = "The node's name.",
                             .type = METRICS_GAUGE,
                             .stability = METRICS_STABLE,
                         });
        must_register(r, &(struct metrics_opts){
                             .name = "kubelet_internal_thing",
                             .help = "Internal.",
                             .type = METRICS_GAUGE,
                             .stability = METRICS_INTERNAL,
                         });
        must_register(r, &(struct metrics_opts){
                             .name = "kubelet_old_thing",
                             .help = "Old.",
                             .type = METRICS_GAUGE,
                             .deprecated_version = "1.30.0",
                         });
        must_register(r, &(struct metrics_opts){
                             .name = "go_raw",
                             .help = "Raw collector.",
                             .type = METRICS_GAUGE,
                             .stability = METRICS_RAW,
                         });
        /* a vector with no child yet: no samples, not rendered at all */
        const char *labels[] = {"state"};
        must_register(r, &(struct metrics_opts){
                             .name = "kubelet_empty",
                             .help = "Never set.",
                             .type = METRICS_GAUGE,
                             .label_names = labels,
                             .n_labels = 1,
                         });
        struct metrics_child *c = must_child(pods, NULL);
        metrics_gauge_set(c, 42);
        metrics_gauge_add(c, -0.5);
        assert_render(r, "# HELP go_raw Raw collector.\n"
                         "# TYPE go_raw gauge\n"
                         "go_raw 0\n"
                         "# HELP kubelet_internal_thing [INTERNAL] Internal.\n"
                         "# TYPE kubelet_internal_thing gauge\n"
                         "kubelet_internal_thing 0\n"
                         "# HELP kubelet_node_name [STABLE] The node's name.\n"
                         "# TYPE kubelet_node_name gauge\n"
                         "kubelet_node_name 0\n"
                         "# HELP kubelet_old_thing [ALPHA] (Deprecated since 1.30.0) Old.\n"
                         "# TYPE kubelet_old_thing gauge\n"
                         "kubelet_old_thing 0\n"
                         "# HELP kubelet_running_pods [BETA] Number of pods.\n"
                         "# TYPE kubelet_running_pods gauge\n"
                         "kubelet_running_pods 41.5\n");
        metrics_registry_free(r);
}

static void test_histogram_buckets(void **state)
{
        (void)state;
        struct metrics_registry *r = metrics_registry_new();
        const char *labels[] = {"operation_type"};
        struct metrics_family *f =
            must_register(r, &(struct metrics_opts){
                                 .name = "kubelet_runtime_operations_duration_seconds",
                                 .help = "Duration in seconds of runtime operations.",
                                 .type = METRICS_HISTOGRAM,
                                 .label_names = labels,
                                 .n_labels = 1,
                                 .buckets = (const double[]){0.125, 1, 5, INFINITY},
                                 .n_buckets = 4,
                             });
        struct metrics_child *create = must_child(f, (const char *[]){"create"});
        struct metrics_child *stop = must_child(f, (const char *[]){"stop"});
        /* a bound is inclusive: 0.125 and 1 count in their own buckets */
        const double obs[] = {0.0625, 0.125, 1, 3, 7};
        for (size_t i = 0; i < sizeof(obs) / sizeof(obs[0]); i++)
                metrics_histogram_observe(create, obs[i]);
        metrics_histogram_observe(stop, 2);
        metrics_gauge_set(stop, 99); /* not a gauge: ignored by rendering */
        /* a trailing +Inf bound is not repeated */
        assert_render(r, "# HELP kubelet_runtime_operations_duration_seconds [ALPHA] Duration "
                         "in seconds of runtime operations.\n"
                         "# TYPE kubelet_runtime_operations_duration_seconds histogram\n"
                         "kubelet_runtime_operations_duration_seconds_bucket{operation_type="
                         "\"create\",le=\"0.125\"} 2\n"
                         "kubelet_runtime_operations_duration_seconds_bucket{operation_type="
                         "\"create\",le=\"1\"} 3\n"
                         "kubelet_runtime_operations_duration_seconds_bucket{operation_type="
                         "\"create\",le=\"5\"} 4\n"
                         "kubelet_runtime_operations_duration_seconds_bucket{operation_type="
                         "\"create\",le=\"+Inf\"} 5\n"
                         "kubelet_runtime_operations_duration_seconds_sum{operation_type="
                         "\"create\"} 11.1875\n"
                         "kubelet_runtime_operations_duration_seconds_count{operation_type="
                         "\"create\"} 5\n"
                         "kubelet_runtime_operations_duration_seconds_bucket{operation_type="
                         "\"stop\",le=\"0.125\"} 0\n"
                         "kubelet_runtime_operations_duration_seconds_bucket{operation_type="
                         "\"stop\",le=\"1\"} 0\n"
                         "kubelet_runtime_operations_duration_seconds_bucket{operation_type="
                         "\"stop\",le=\"5\"} 1\n"
                         "kubelet_runtime_operations_duration_seconds_bucket{operation_type="
                         "\"stop\",le=\"+Inf\"} 1\n"
                         "kubelet_runtime_operations_duration_seconds_sum{operation_type="
                         "\"stop\"} 2\n"
                         "kubelet_runtime_operations_duration_seconds_count{operation_type="
                         "\"stop\"} 1\n");
        metrics_registry_free(r);
}

static void test_histogram_default_buckets_and_nan(void **state)
{
        (void)state;
        struct metrics_registry *r = metrics_registry_new();
        struct metrics_family *f = must_register(r, &(struct metrics_opts){
                                                        .name = "op_seconds",
                                                        .help = "h",
                                                        .type = METRICS_HISTOGRAM,
                                                        .stability = METRICS_RAW,
                                                    });
        struct metrics_child *c = must_child(f, NULL);
        metrics_histogram_observe(c, 0.005);
        metrics_histogram_observe(c, 11);
        metrics_histogram_observe(c, NAN); /* above every bound, sum NaN */
        assert_render(r, "# HELP op_seconds h\n"
                         "# TYPE op_seconds histogram\n"
                         "op_seconds_bucket{le=\"0.005\"} 1\n"
                         "op_seconds_bucket{le=\"0.01\"} 1\n"
                         "op_seconds_bucket{le=\"0.025\"} 1\n"
                         "op_seconds_bucket{le=\"0.05\"} 1\n"
                         "op_seconds_bucket{le=\"0.1\"} 1\n"
                         "op_seconds_bucket{le=\"0.25\"} 1\n"
                         "op_seconds_bucket{le=\"0.5\"} 1\n"
                         "op_seconds_bucket{le=\"1\"} 1\n"
                         "op_seconds_bucket{le=\"2.5\"} 1\n"
                         "op_seconds_bucket{le=\"5\"} 1\n"
                         "op_seconds_bucket{le=\"10\"} 1\n"
                         "op_seconds_bucket{le=\"+Inf\"} 3\n"
                         "op_seconds_sum NaN\n"
                         "op_seconds_count 3\n");
        metrics_registry_free(r);
}

static void test_escaping(void **state)
{
        (void)state;
        struct metrics_registry *r = metrics_registry_new();
        const char *labels[] = {"path"};
        struct metrics_family *f =
            must_register(r, &(struct metrics_opts){
                                 .name = "escaped",
                                 .help = "Line one\nline \"two\" with C:\\dir",
                                 .type = METRICS_GAUGE,
                                 .stability = METRICS_RAW,
                                 .label_names = labels,
                                 .n_labels = 1,
                             });
        metrics_gauge_set(must_child(f, (const char *[]){"a\\b\"c\nd"}), 1);
        metrics_gauge_set(
            must_child(f, (const char *[]){"caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80"}), 2);
        metrics_gauge_set(must_child(f, (const char *[]){""}), 3);
        /* HELP escapes backslash and newline only; label values also `"` */
        assert_render(r, "# HELP escaped Line one\\nline \"two\" with C:\\\\dir\n"
                         "# TYPE escaped gauge\n"
                         "escaped{path=\"\"} 3\n"
                         "escaped{path=\"a\\\\b\\\"c\\nd\"} 1\n"
                         "escaped{path=\"caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80\"} 2\n");
        metrics_registry_free(r);
}

static void test_float_formatting(void **state)
{
        (void)state;
        /* strconv.FormatFloat(v, 'g', -1, 64) from Go 1.26 for each value */
        uint64_t pow2_bits = 0x0060000000000000ull; /* 2^-1017 */
        double pow2;
        memcpy(&pow2, &pow2_bits, sizeof(pow2));
        volatile double a = 0.1, b = 0.2;
        const struct {
                double v;
                const char *want;
        } cases[] = {
            {0, "0"},
            {-0.0, "0"}, /* writeFloat's f == 0 */
            {1, "1"},
            {-1, "-1"},
            {0.1, "0.1"},
            {-2.25, "-2.25"},
            {42, "42"},
            {3600, "3600"},
            {100000, "100000"},
            {999999, "999999"},
            {123456.7, "123456.7"},
            {1e6, "1e+06"},
            {1048576, "1.048576e+06"},
            {1234567.8, "1.2345678e+06"},
            {123456789, "1.23456789e+08"},
            {1e21, "1e+21"},
            {1e22, "1e+22"},
            {1e100, "1e+100"},
            {18446744073709551615.0, "1.8446744073709552e+19"},
            {9007199254740993.0, "9.007199254740992e+15"},
            {0.0001, "0.0001"},
            {0.00012, "0.00012"},
            {1e-5, "1e-05"},
            {2.5e-7, "2.5e-07"},
            {-1e-300, "-1e-300"},
            {1.0 / 3, "0.3333333333333333"},
            {a + b, "0.30000000000000004"},
            {1.7976931348623157e308, "1.7976931348623157e+308"},
            {5e-324, "5e-324"},
            {pow2, "7.120236347223045e-307"}, /* 16 digits, not printf's 17 */
            {INFINITY, "+Inf"},
            {-INFINITY, "-Inf"},
            {NAN, "NaN"},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char buf[METRICS_FLOAT_BUF];
                size_t n = metrics_format_float(cases[i].v, buf);
                assert_string_equal(buf, cases[i].want);
                assert_int_equal(n, strlen(cases[i].want));
        }

        /* the same text in a rendered sample */
        struct metrics_registry *r = metrics_registry_new();
        const char *labels[] = {"case"};
        struct metrics_family *f = must_register(r, &(struct metrics_opts){
                                                        .name = "values",
                                                        .help = "v",
                                                        .type = METRICS_GAUGE,
                                                        .stability = METRICS_RAW,
                                                        .label_names = labels,
                                                        .n_labels = 1,
                                                    });
        metrics_gauge_set(must_child(f, (const char *[]){"a_million"}), 1e6);
        metrics_gauge_set(must_child(f, (const char *[]){"b_neg_zero"}), -0.0);
        metrics_gauge_set(must_child(f, (const char *[]){"c_nan"}), NAN);
        metrics_gauge_set(must_child(f, (const char *[]){"d_inf"}), INFINITY);
        metrics_gauge_set(must_child(f, (const char *[]){"e_neg_inf"}), -INFINITY);
        metrics_gauge_set(must_child(f, (const char *[]){"f_small"}), 0.00001);
        assert_render(r, "# HELP values v\n"
                         "# TYPE values gauge\n"
                         "values{case=\"a_million\"} 1e+06\n"
                         "values{case=\"b_neg_zero\"} 0\n"
                         "values{case=\"c_nan\"} NaN\n"
                         "values{case=\"d_inf\"} +Inf\n"
                         "values{case=\"e_neg_inf\"} -Inf\n"
                         "values{case=\"f_small\"} 1e-05\n");
        metrics_registry_free(r);
}

/* ---- Threads ------------------------------------------------------------- */

#define THREADS 4
#define ITERS 100000

struct worker {
        struct metrics_registry *r;
        struct metrics_family *counter, *gauge, *hist;
        int id;
};

static void *worker_main(void *arg)
{
        struct worker *w = arg;
        /* every thread asks for the same tuples at once: one child each */
        struct metrics_child *c = must_child(w->counter, (const char *[]){"shared"});
        struct metrics_child *g = must_child(w->gauge, (const char *[]){"shared"});
        struct metrics_child *h = must_child(w->hist, (const char *[]){"shared"});
        char own[16];
        snprintf(own, sizeof(own), "t%d", w->id);
        struct metrics_child *mine = must_child(w->counter, (const char *[]){own});
        for (int i = 0; i < ITERS; i++) {
                metrics_counter_inc(c);
                metrics_counter_add(mine, 0.5);
                metrics_gauge_add(g, i % 2 ? 1 : -0.5);
                metrics_histogram_observe(h, (double)(i % 3));
                if (i % 1000 == 0) { /* children created while others are updated */
                        char tmp[32];
                        snprintf(tmp, sizeof(tmp), "t%d_%d", w->id, i / 1000);
                        metrics_counter_inc(must_child(w->counter, (const char *[]){tmp}));
                        assert_true(metrics_child_delete(w->counter, (const char *[]){tmp}));
                }
        }
        return NULL;
}

static void *render_main(void *arg)
{
        struct metrics_registry *r = arg;
        for (int i = 0; i < 50; i++) {
                cleanup_metrics_buf struct metrics_buf b = {0};
                metrics_render(r, &b);
                assert_non_null(strstr(b.data, "# TYPE conc_total counter\n"));
        }
        return NULL;
}

static void test_concurrent_updates(void **state)
{
        (void)state;
        struct metrics_registry *r = metrics_registry_new();
        const char *labels[] = {"who"};
        struct worker proto = {
            .r = r,
            .counter = must_register(r, &(struct metrics_opts){.name = "conc_total",
                                                               .help = "c",
                                                               .type = METRICS_COUNTER,
                                                               .label_names = labels,
                                                               .n_labels = 1}),
            .gauge = must_register(r, &(struct metrics_opts){.name = "conc_gauge",
                                                             .help = "g",
                                                             .type = METRICS_GAUGE,
                                                             .label_names = labels,
                                                             .n_labels = 1}),
            .hist = must_register(r, &(struct metrics_opts){.name = "conc_seconds",
                                                            .help = "h",
                                                            .type = METRICS_HISTOGRAM,
                                                            .label_names = labels,
                                                            .n_labels = 1,
                                                            .buckets = (const double[]){0, 1},
                                                            .n_buckets = 2}),
        };
        /* a child before the renderer starts: a family without children is
         * not rendered at all (as client_golang), and the workers' own may
         * not exist yet when it first renders */
        metrics_counter_inc(must_child(proto.counter, (const char *[]){"main"}));
        pthread_t t[THREADS], renderer;
        struct worker w[THREADS];
        for (int i = 0; i < THREADS; i++) {
                w[i] = proto;
                w[i].id = i;
                assert_int_equal(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
        }
        assert_int_equal(pthread_create(&renderer, NULL, render_main, r), 0);
        for (int i = 0; i < THREADS; i++)
                pthread_join(t[i], NULL);
        pthread_join(renderer, NULL);
        assert_true(metrics_child_delete(proto.counter, (const char *[]){"main"}));

        /* 400000 increments; the gauge gains 1 - 0.5 per two iterations */
        assert_true(metrics_child_value(must_child(proto.counter, (const char *[]){"shared"})) ==
                    THREADS * ITERS);
        assert_true(metrics_child_value(must_child(proto.gauge, (const char *[]){"shared"})) ==
                    THREADS * (ITERS / 2) * 0.5);
        /* observations 0, 1, 2 in turn: 33334 zeros, 33333 ones and 33333
         * twos per thread (sum 99999) */
        cleanup_metrics_buf struct metrics_buf b = {0};
        assert_int_equal(metrics_render(r, &b), 0);
        assert_string_equal(b.data, "# HELP conc_gauge [ALPHA] g\n"
                                    "# TYPE conc_gauge gauge\n"
                                    "conc_gauge{who=\"shared\"} 100000\n"
                                    "# HELP conc_seconds [ALPHA] h\n"
                                    "# TYPE conc_seconds histogram\n"
                                    "conc_seconds_bucket{who=\"shared\",le=\"0\"} 133336\n"
                                    "conc_seconds_bucket{who=\"shared\",le=\"1\"} 266668\n"
                                    "conc_seconds_bucket{who=\"shared\",le=\"+Inf\"} 400000\n"
                                    "conc_seconds_sum{who=\"shared\"} 399996\n"
                                    "conc_seconds_count{who=\"shared\"} 400000\n"
                                    "# HELP conc_total [ALPHA] c\n"
                                    "# TYPE conc_total counter\n"
                                    "conc_total{who=\"shared\"} 400000\n"
                                    "conc_total{who=\"t0\"} 50000\n"
                                    "conc_total{who=\"t1\"} 50000\n"
                                    "conc_total{who=\"t2\"} 50000\n"
                                    "conc_total{who=\"t3\"} 50000\n");
        metrics_registry_free(r);
}

/* ---- Collect callbacks --------------------------------------------------- */

struct fake_stats {
        int calls;
};

static void collect_working_set(void *ctx, struct metrics_emit *e)
{
        struct fake_stats *s = ctx;
        s->calls++;
        /* labels in registration order: container, pod, namespace */
        metrics_emit_at(e, (const char *[]){"web", "web-0", "default"}, 1048576, 1700000000123);
        metrics_emit_at(e, (const char *[]){"db", "db-0", "default"}, 2.5e9, 1700000000456);
        metrics_emit(e, (const char *[]){"app", "app-0", "kube-system"}, 4096);
        metrics_emit_at(e, (const char *[]){"web", "web-0", "default"}, 7, 1); /* duplicate */
        metrics_emit(e, (const char *[]){"bad\xff", "x", "y"}, 1);             /* not UTF-8 */
        metrics_emit(e, (const char *[]){"sidecar", "db-0", "default"}, 5);    /* held as a child */
}

static void collect_nothing(void *ctx, struct metrics_emit *e)
{
        (void)ctx;
        (void)e;
}

static void test_collect_callback(void **state)
{
        (void)state;
        struct metrics_registry *r = metrics_registry_new();
        struct fake_stats stats = {0};
        const char *labels[] = {"container", "pod", "namespace"};
        struct metrics_family *f =
            must_register(r, &(struct metrics_opts){
                                 .name = "container_memory_working_set_bytes",
                                 .help = "Current working set of the "
                                         "container in bytes",
                                 .type = METRICS_GAUGE,
                                 .stability = METRICS_STABLE,
                                 .label_names = labels,
                                 .n_labels = 3,
                                 .collect = collect_working_set,
                                 .collect_ctx = &stats,
                             });
        must_register(r, &(struct metrics_opts){
                             .name = "a_collected_empty",
                             .help = "nothing",
                             .type = METRICS_COUNTER,
                             .collect = collect_nothing,
                         });
        metrics_gauge_set(must_child(f, (const char *[]){"sidecar", "db-0", "default"}), 3);
        const char *want =
            "# HELP container_memory_working_set_bytes [STABLE] Current working set of the "
            "container in bytes\n"
            "# TYPE container_memory_working_set_bytes gauge\n"
            "container_memory_working_set_bytes{container=\"app\",namespace=\"kube-system\","
            "pod=\"app-0\"} 4096\n"
            "container_memory_working_set_bytes{container=\"db\",namespace=\"default\",pod="
            "\"db-0\"} 2.5e+09 1700000000456\n"
            "container_memory_working_set_bytes{container=\"sidecar\",namespace=\"default\","
            "pod=\"db-0\"} 3\n"
            "container_memory_working_set_bytes{container=\"web\",namespace=\"default\",pod="
            "\"web-0\"} 1.048576e+06 1700000000123\n";
        for (int round = 1; round <= 2; round++) {
                cleanup_metrics_buf struct metrics_buf b = {0};
                /* dropped: the duplicate, the non-UTF-8 one, the child's tuple */
                assert_int_equal(metrics_render(r, &b), 3);
                assert_string_equal(b.data, want);
                assert_int_equal(stats.calls, round);
        }
        metrics_registry_free(r);
}

/* ---- Registration rules -------------------------------------------------- */

static void assert_register_fails(struct metrics_registry *r, const struct metrics_opts *o,
                                  const char *want_msg)
{
        ck_error_t err = NULL;
        struct metrics_family *f = NULL;
        assert_int_equal(metrics_register(r, o, &f, &err), -1);
        assert_null(f);
        assert_string_equal(ck_error_msg(err), want_msg);
        ck_error_release(&err);
}

static void test_registration_errors(void **state)
{
        (void)state;
        struct metrics_registry *r = metrics_registry_new();
        assert_register_fails(r, &(struct metrics_opts){.name = "1abc", .type = METRICS_COUNTER},
                              "register metric: invalid name `1abc`: Invalid argument");
        assert_register_fails(r, &(struct metrics_opts){.name = "foo-bar", .type = METRICS_COUNTER},
                              "register metric: invalid name `foo-bar`: Invalid argument");
        assert_register_fails(r,
                              &(struct metrics_opts){.name = "x",
                                                     .type = METRICS_GAUGE,
                                                     .label_names = (const char *[]){"__name"},
                                                     .n_labels = 1},
                              "register metric `x`: invalid label name `__name`: Invalid "
                              "argument");
        assert_register_fails(r,
                              &(struct metrics_opts){.name = "x",
                                                     .type = METRICS_GAUGE,
                                                     .label_names = (const char *[]){"a", "a"},
                                                     .n_labels = 2},
                              "register metric `x`: duplicate label name `a`: Invalid argument");
        assert_register_fails(r,
                              &(struct metrics_opts){.name = "h",
                                                     .type = METRICS_HISTOGRAM,
                                                     .label_names = (const char *[]){"le"},
                                                     .n_labels = 1},
                              "register metric `h`: `le` is not allowed as label name in "
                              "histograms: Invalid argument");
        assert_register_fails(r,
                              &(struct metrics_opts){.name = "h",
                                                     .type = METRICS_HISTOGRAM,
                                                     .buckets = (const double[]){1, 0.5},
                                                     .n_buckets = 2},
                              "register metric `h`: histogram buckets must be in increasing "
                              "order: 1 >= 0.5: Invalid argument");
        assert_register_fails(r,
                              &(struct metrics_opts){.name = "h",
                                                     .type = METRICS_HISTOGRAM,
                                                     .collect = collect_nothing},
                              "register metric `h`: a histogram cannot be collected: Invalid "
                              "argument");
        /* a colon is fine in a metric name, a digit after the first letter too */
        must_register(r, &(struct metrics_opts){.name = "ns:sub_x1", .type = METRICS_COUNTER});
        assert_register_fails(
            r, &(struct metrics_opts){.name = "ns:sub_x1", .type = METRICS_GAUGE},
            "register metric `ns:sub_x1`: duplicate metrics collector registration attempted: "
            "File exists");

        /* label values must be UTF-8 (client_golang's WithLabelValues) */
        struct metrics_family *f =
            must_register(r, &(struct metrics_opts){.name = "utf8",
                                                    .type = METRICS_GAUGE,
                                                    .label_names = (const char *[]){"v"},
                                                    .n_labels = 1});
        const char *bad[] = {"\xff", "\xc0\xaf" /* overlong */, "\xed\xa0\x80" /* surrogate */,
                             "\xe6\x97" /* cut short */, NULL};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                ck_error_t err = NULL;
                struct metrics_child *c = NULL;
                assert_int_equal(metrics_child_get(f, (const char *[]){bad[i]}, &c, &err), -1);
                assert_string_equal(ck_error_msg(err),
                                    "metric `utf8`: label `v`: value missing or not valid "
                                    "UTF-8: Invalid argument");
                ck_error_release(&err);
        }
        metrics_registry_free(r);
}

static void test_child_delete(void **state)
{
        (void)state;
        struct metrics_registry *r = metrics_registry_new();
        const char *labels[] = {"probe_type", "container"};
        struct metrics_family *f = must_register(r, &(struct metrics_opts){
                                                        .name = "prober_probe_total",
                                                        .help = "Cumulative number of probes.",
                                                        .type = METRICS_COUNTER,
                                                        .label_names = labels,
                                                        .n_labels = 2,
                                                    });
        metrics_counter_inc(must_child(f, (const char *[]){"Liveness", "web"}));
        metrics_counter_inc(must_child(f, (const char *[]){"Readiness", "web"}));
        assert_true(metrics_child_delete(f, (const char *[]){"Liveness", "web"}));
        assert_false(metrics_child_delete(f, (const char *[]){"Liveness", "web"}));
        assert_false(metrics_child_delete(f, (const char *[]){"Startup", "web"}));
        assert_render(r, "# HELP prober_probe_total [ALPHA] Cumulative number of probes.\n"
                         "# TYPE prober_probe_total counter\n"
                         "prober_probe_total{container=\"web\",probe_type=\"Readiness\"} 1\n");
        /* a tuple created again starts from zero */
        struct metrics_child *c = must_child(f, (const char *[]){"Liveness", "web"});
        assert_true(metrics_child_value(c) == 0);
        assert_true(metrics_child_delete(f, (const char *[]){"Readiness", "web"}));
        assert_true(metrics_child_delete(f, (const char *[]){"Liveness", "web"}));
        assert_render(r, ""); /* no samples left: the family is not rendered */
        metrics_registry_free(r);
}

static void test_buckets_helpers_and_appending(void **state)
{
        (void)state;
        double exp[4], lin[3];
        metrics_exponential_buckets(0.001, 2, 4, exp);
        metrics_linear_buckets(1, 2.5, 3, lin);
        assert_true(exp[0] == 0.001 && exp[1] == 0.002 && exp[2] == 0.004 && exp[3] == 0.008);
        assert_true(lin[0] == 1 && lin[1] == 3.5 && lin[2] == 6);
        assert_string_equal(METRICS_CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8");

        struct metrics_registry *r = metrics_registry_new();
        must_register(r, &(struct metrics_opts){.name = "up", .help = "u", .type = METRICS_GAUGE});
        cleanup_metrics_buf struct metrics_buf b = {0};
        metrics_render(r, &b);
        metrics_render(r, &b); /* appends */
        assert_string_equal(b.data, "# HELP up [ALPHA] u\n# TYPE up gauge\nup 0\n"
                                    "# HELP up [ALPHA] u\n# TYPE up gauge\nup 0\n");
        metrics_registry_free(r);
}

/* ---- Process collector --------------------------------------------------- */

/* The value on the line "name value\n" of text, or NAN when absent. */
static double sample_value(const char *text, const char *name)
{
        char key[128];
        snprintf(key, sizeof(key), "\n%s ", name);
        const char *p = strstr(text, key);
        return p ? strtod(p + strlen(key), NULL) : NAN;
}

static void test_process_metrics(void **state)
{
        (void)state;
        struct metrics_registry *r = metrics_registry_new();
        ck_error_t err = NULL;
        assert_int_equal(metrics_register_process(r, &err), 0);
        /* client_golang's descriptors: name, type, HELP without annotation */
        const struct {
                const char *name, *type, *help;
        } fams[] = {
            {"process_cpu_seconds_total", "counter",
             "Total user and system CPU time spent in seconds."},
            {"process_max_fds", "gauge", "Maximum number of open file descriptors."},
            {"process_open_fds", "gauge", "Number of open file descriptors."},
            {"process_resident_memory_bytes", "gauge", "Resident memory size in bytes."},
            {"process_start_time_seconds", "gauge",
             "Start time of the process since unix epoch in seconds."},
            {"process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes."},
            {"process_virtual_memory_max_bytes", "gauge",
             "Maximum amount of virtual memory available in bytes."},
        };
        cleanup_metrics_buf struct metrics_buf b = {0};
        assert_int_equal(metrics_render(r, &b), 0);
        for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++) {
                char want[256];
                snprintf(want, sizeof(want), "# HELP %s %s\n# TYPE %s %s\n%s ", fams[i].name,
                         fams[i].help, fams[i].name, fams[i].type, fams[i].name);
                if (strstr(b.data, want) == NULL)
                        fail_msg("no %s in:\n%s", fams[i].name, b.data);
        }
        double open_fds = sample_value(b.data, "process_open_fds");
        double max_fds = sample_value(b.data, "process_max_fds");
        double rss = sample_value(b.data, "process_resident_memory_bytes");
        double vsize = sample_value(b.data, "process_virtual_memory_bytes");
        double cpu = sample_value(b.data, "process_cpu_seconds_total");
        double start = sample_value(b.data, "process_start_time_seconds");
        assert_true(open_fds >= 3); /* stdin, stdout, stderr at least */
        assert_true(max_fds >= open_fds);
        assert_true(rss > 0);
        assert_true(vsize >= rss);
        assert_true(cpu >= 0);
        double now = (double)time(NULL);
        assert_true(start > 1e9 && start <= now + 1 && start > now - 86400 * 365);
        /* the network counters exist where /proc/self/net/netstat does */
        if (access("/proc/self/net/netstat", R_OK) == 0) {
                assert_true(sample_value(b.data, "process_network_receive_bytes_total") >= 0);
                assert_true(sample_value(b.data, "process_network_transmit_bytes_total") >= 0);
        }

        /* read at collect time: two more fds show in the next scrape */
        int p[2];
        assert_int_equal(pipe(p), 0);
        cleanup_metrics_buf struct metrics_buf b2 = {0};
        metrics_render(r, &b2);
        assert_true(sample_value(b2.data, "process_open_fds") == open_fds + 2);
        close(p[0]);
        close(p[1]);

        /* the names are taken now */
        assert_int_equal(metrics_register_process(r, &err), -1);
        assert_string_equal(ck_error_msg(err),
                            "process metrics: register metric `process_cpu_seconds_total`: "
                            "duplicate metrics collector registration attempted: File exists");
        ck_error_release(&err);
        metrics_registry_free(r);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_counter_with_labels),
            cmocka_unit_test(test_gauges_stability_and_order),
            cmocka_unit_test(test_histogram_buckets),
            cmocka_unit_test(test_histogram_default_buckets_and_nan),
            cmocka_unit_test(test_escaping),
            cmocka_unit_test(test_float_formatting),
            cmocka_unit_test(test_concurrent_updates),
            cmocka_unit_test(test_collect_callback),
            cmocka_unit_test(test_registration_errors),
            cmocka_unit_test(test_child_delete),
            cmocka_unit_test(test_buckets_helpers_and_appending),
            cmocka_unit_test(test_process_metrics),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
