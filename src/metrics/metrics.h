/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Prometheus metrics for the kubelet's /metrics, /metrics/probes and
 * /metrics/resource endpoints (upstream k8s.io/component-base/metrics over
 * prometheus client_golang, rendered as client_golang's expfmt writes the
 * text exposition format 0.0.4).
 *
 * A registry holds metric families (counter, gauge, histogram), each
 * registered once with its label names.  A family has a child per tuple of
 * label values; callers look a child up once, keep the pointer and update it
 * from any thread (counters and gauges are lock-free atomics, a histogram
 * child has its own mutex).  A family may also have a collect callback that
 * emits samples when the registry is rendered (values computed at scrape
 * time, e.g. from a stats snapshot, optionally with a timestamp).
 *
 * Rendering matches client_golang's Gather + text encoder: families sorted by
 * name, families without samples omitted, label pairs sorted by label name,
 * samples sorted by label values, histograms as cumulative _bucket{le=...}
 * lines (always ending with le="+Inf"), _sum and _count.
 *
 * Thread-safe throughout unless a function says otherwise.
 */
#ifndef CK_METRICS_METRICS_H
#define CK_METRICS_METRICS_H

#include "util/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The Content-Type of metrics_render()'s output. */
#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Label names per family at most (kubelet families have up to ~6). */
#define METRICS_MAX_LABELS 16

/* Buffer size metrics_format_float() needs ("-1.2345678901234567e-308"). */
#define METRICS_FLOAT_BUF 32

enum metrics_type {
        METRICS_COUNTER,
        METRICS_GAUGE,
        METRICS_HISTOGRAM,
};

/* component-base's StabilityLevel: HELP reads "[ALPHA] text" and so on.
 * METRICS_RAW adds nothing, as a raw client_golang collector registered with
 * RawMustRegister (the process_* families). */
enum metrics_stability {
        METRICS_ALPHA = 0, /* component-base's default for an empty level */
        METRICS_INTERNAL,
        METRICS_BETA,
        METRICS_STABLE,
        METRICS_RAW,
};

struct metrics_registry;
struct metrics_family;
struct metrics_child;
struct metrics_emit;

/* Called at render time, on the rendering thread, without any registry
 * lock held; emits the family's samples with metrics_emit*().  It must not
 * call other metrics_* functions on the same registry. */
typedef void (*metrics_collect_fn)(void *ctx, struct metrics_emit *e);

struct metrics_opts {
        const char *name; /* [a-zA-Z_:][a-zA-Z0-9_:]* */
        const char *help;
        enum metrics_type type;
        enum metrics_stability stability;
        /* When set, HELP reads "[ALPHA] (Deprecated since 1.30.0) text" (as
         * component-base once the running version reaches it; the caller
         * decides that). */
        const char *deprecated_version;
        /* [a-zA-Z_][a-zA-Z0-9_]*, not "__..."; not "le" in a histogram. */
        const char *const *label_names;
        size_t n_labels;
        /* Histograms: strictly increasing upper bounds; a trailing +Inf is
         * dropped (it is always rendered).  None: client_golang's
         * DefBuckets (.005 .01 .025 .05 .1 .25 .5 1 2.5 5 10). */
        const double *buckets;
        size_t n_buckets;
        /* Optional (counters and gauges only): ctx is borrowed and must
         * outlive the registry. */
        metrics_collect_fn collect;
        void *collect_ctx;
};

struct metrics_registry *metrics_registry_new(void);
/* Frees the registry, its families and their children.  NULL-safe.  No
 * other thread may use it or any child pointer taken from it. */
void metrics_registry_free(struct metrics_registry *r);

/* Registers a family (every string copied).  *out (out may be NULL) is
 * borrowed, valid until metrics_registry_free().  Errors: invalid name or
 * label name, a name already registered, non-increasing buckets, collect on
 * a histogram.  A family with no labels and no collect callback has its one
 * child from the start, so it renders 0 before any update (as a plain
 * Counter/Gauge). */
int metrics_register(struct metrics_registry *r, const struct metrics_opts *o,
                     struct metrics_family **out, ck_error_t *err);

/* The child for a tuple of label values (n_labels values in the order the
 * label names were registered; NULL when there are none), created on first
 * use (values copied).  *out is borrowed: valid until the tuple is deleted
 * or the registry freed.  Errors: a NULL or non-UTF-8 value (as
 * client_golang's WithLabelValues). */
int metrics_child_get(struct metrics_family *f, const char *const *values,
                      struct metrics_child **out, ck_error_t *err);

/* Forgets a tuple (upstream DeleteLabelValues, e.g. when a probe worker
 * stops).  Returns whether it existed.  The caller guarantees no thread
 * still updates through that child's pointer. */
bool metrics_child_delete(struct metrics_family *f, const char *const *values);

/* Counters: add ignores negative values (client_golang panics on them). */
void metrics_counter_inc(struct metrics_child *c);
void metrics_counter_add(struct metrics_child *c, double v);
/* Gauges. */
void metrics_gauge_set(struct metrics_child *c, double v);
void metrics_gauge_add(struct metrics_child *c, double v);
/* Histograms: counts v in the first bucket whose bound is >= v (NaN only in
 * +Inf), as client_golang. */
void metrics_histogram_observe(struct metrics_child *c, double v);
/* The current value of a counter or gauge child (0 for a histogram). */
double metrics_child_value(const struct metrics_child *c);

/* From a collect callback: one sample with values as metrics_child_get
 * takes them, with a timestamp in ms since the epoch for _at (rendered after
 * the value, as /metrics/resource does).  A sample with a NULL or non-UTF-8
 * value, or a tuple already emitted or held as a child, is dropped (counted
 * in metrics_render's result). */
void metrics_emit(struct metrics_emit *e, const char *const *values, double v);
void metrics_emit_at(struct metrics_emit *e, const char *const *values, double v,
                     int64_t timestamp_ms);

/* A growable text buffer: data is NUL-terminated whenever len > 0. */
struct metrics_buf {
        char *data;
        size_t len, cap;
};
void metrics_buf_release(struct metrics_buf *b);
#define cleanup_metrics_buf __attribute__((cleanup(metrics_buf_release)))

/* Appends the whole registry in the text format to out (which may already
 * hold text).  Runs the collect callbacks.  Returns the number of emitted
 * samples dropped (see metrics_emit), normally 0. */
size_t metrics_render(struct metrics_registry *r, struct metrics_buf *out);

/* v as client_golang's writeFloat writes a sample value: Go's
 * strconv.FormatFloat(v, 'g', -1, 64), i.e. the shortest digits that read
 * back, in %e form when the decimal exponent is < -4 or >= 6 (100000,
 * 1e+06, 1.048576e+06, 0.0001, 1e-05), "+Inf", "-Inf", "NaN", and "0" for
 * -0.  Writes a NUL-terminated string into buf; returns its length. */
size_t metrics_format_float(double v, char buf[METRICS_FLOAT_BUF]);

/* client_golang's ExponentialBuckets / LinearBuckets: count bounds into
 * out.  start > 0 and factor > 1 (exponential), width > 0 (linear). */
void metrics_exponential_buckets(double start, double factor, size_t count, double *out);
void metrics_linear_buckets(double start, double width, size_t count, double *out);

/* Registers client_golang's process collector (collectors.NewProcessCollector
 * as component-base's legacyregistry adds it): process_cpu_seconds_total,
 * process_max_fds, process_network_receive_bytes_total,
 * process_network_transmit_bytes_total, process_open_fds,
 * process_resident_memory_bytes, process_start_time_seconds,
 * process_virtual_memory_bytes, process_virtual_memory_max_bytes, read from
 * /proc/self when rendered; a value that cannot be read is left out (as the
 * collector does with reportErrors unset).  Errors: a name already taken
 * (the families before it stay registered). */
int metrics_register_process(struct metrics_registry *r, ck_error_t *err);

#endif
