/* SPDX-License-Identifier: Apache-2.0 */
/*
 * /metrics/resource: upstream's resource metrics collector
 * (pkg/kubelet/metrics/collectors/resource_metrics.go), one collect
 * callback per family, each reading the provider's cached snapshot in its
 * CPU-and-memory view (GetCPUAndMemoryStats: a container's missing value is
 * 0).  Samples carry the time of the reading they come from, as
 * NewLazyMetricWithTimestamp; container_start_time_seconds and the scrape
 * errors carry none.
 */
#include "stats/stats_internal.h"

#include "util/xalloc.h"

#include <stdlib.h>

enum family {
        NODE_CPU,
        NODE_MEMORY,
        NODE_SWAP,
        CONTAINER_CPU,
        CONTAINER_MEMORY,
        CONTAINER_SWAP,
        CONTAINER_SWAP_LIMIT,
        CONTAINER_START,
        POD_CPU,
        POD_MEMORY,
        POD_SWAP,
        SCRAPE_ERROR,
        RESOURCE_SCRAPE_ERROR,
        N_FAMILIES,
};

static const char *const container_labels[] = {"container", "pod", "namespace"};
static const char *const pod_labels[] = {"pod", "namespace"};

static const struct {
        const char *name, *help;
        enum metrics_type type;
        enum metrics_stability stability;
        const char *const *labels;
        size_t n_labels;
        const char *deprecated; /* hidden (component-base) unless shown */
} families[N_FAMILIES] = {
    [NODE_CPU] = {"node_cpu_usage_seconds_total",
                  "Cumulative cpu time consumed by the node in core-seconds", METRICS_COUNTER,
                  METRICS_STABLE, NULL, 0, NULL},
    [NODE_MEMORY] = {"node_memory_working_set_bytes", "Current working set of the node in bytes",
                     METRICS_GAUGE, METRICS_STABLE, NULL, 0, NULL},
    [NODE_SWAP] = {"node_swap_usage_bytes",
                   "Current swap usage of the node in bytes. Reported only on non-windows systems",
                   METRICS_GAUGE, METRICS_ALPHA, NULL, 0, NULL},
    [CONTAINER_CPU] = {"container_cpu_usage_seconds_total",
                       "Cumulative cpu time consumed by the container in core-seconds",
                       METRICS_COUNTER, METRICS_STABLE, container_labels, 3, NULL},
    [CONTAINER_MEMORY] = {"container_memory_working_set_bytes",
                          "Current working set of the container in bytes", METRICS_GAUGE,
                          METRICS_STABLE, container_labels, 3, NULL},
    [CONTAINER_SWAP] = {"container_swap_usage_bytes",
                        "Current amount of the container swap usage in bytes. Reported only on "
                        "non-windows systems",
                        METRICS_GAUGE, METRICS_ALPHA, container_labels, 3, NULL},
    [CONTAINER_SWAP_LIMIT] = {"container_swap_limit_bytes",
                              "Current amount of the container swap limit in bytes. Reported only "
                              "on non-windows systems",
                              METRICS_GAUGE, METRICS_ALPHA, container_labels, 3, NULL},
    [CONTAINER_START] = {"container_start_time_seconds",
                         "Start time of the container since unix epoch in seconds", METRICS_GAUGE,
                         METRICS_STABLE, container_labels, 3, NULL},
    [POD_CPU] = {"pod_cpu_usage_seconds_total",
                 "Cumulative cpu time consumed by the pod in core-seconds", METRICS_COUNTER,
                 METRICS_STABLE, pod_labels, 2, NULL},
    [POD_MEMORY] = {"pod_memory_working_set_bytes", "Current working set of the pod in bytes",
                    METRICS_GAUGE, METRICS_STABLE, pod_labels, 2, NULL},
    [POD_SWAP] = {"pod_swap_usage_bytes",
                  "Current amount of the pod swap usage in bytes. Reported only on non-windows "
                  "systems",
                  METRICS_GAUGE, METRICS_ALPHA, pod_labels, 2, NULL},
    [SCRAPE_ERROR] = {"scrape_error",
                      "1 if there was an error while getting container metrics, 0 otherwise",
                      METRICS_GAUGE, METRICS_ALPHA, NULL, 0, "1.29.0"},
    [RESOURCE_SCRAPE_ERROR] = {"resource_scrape_error",
                               "1 if there was an error while getting container metrics, 0 "
                               "otherwise",
                               METRICS_GAUGE, METRICS_STABLE, NULL, 0, NULL},
};

/* The collect context of one family (the registry borrows it; the
 * provider owns it). */
struct family_ctx {
        struct stats_provider *p;
        enum family f;
};

static double seconds(uint64_t ns)
{
        return (double)ns / 1e9;
}

/* Go's time.UnixMilli of a metav1.Time from ns. */
static int64_t ms_of(int64_t ns)
{
        int64_t ms = ns / 1000000;
        if (ns % 1000000 < 0)
                ms--;
        return ms;
}

static uint64_t or_zero(struct stats_u64 v)
{
        return v.ok ? v.v : 0;
}

static void collect_container(enum family f, const struct stats_pod *pod,
                              const struct stats_container *c, struct metrics_emit *e)
{
        const char *v[] = {c->name, pod->name, pod->namespace};
        switch (f) {
        case CONTAINER_START:
                /* s.StartTime.Unix() <= 0: left out */
                if (c->start_ns >= 1000000000)
                        metrics_emit(e, v, (double)c->start_ns / 1e9);
                break;
        case CONTAINER_CPU:
                if (c->cpu.ok)
                        metrics_emit_at(e, v, seconds(or_zero(c->cpu.usage_core_nano_seconds)),
                                        ms_of(c->cpu.time_ns));
                break;
        case CONTAINER_MEMORY:
                if (c->memory.ok)
                        metrics_emit_at(e, v, (double)or_zero(c->memory.working_set),
                                        ms_of(c->memory.time_ns));
                break;
        case CONTAINER_SWAP:
                if (c->swap.ok)
                        metrics_emit_at(e, v, (double)or_zero(c->swap.usage),
                                        ms_of(c->swap.time_ns));
                break;
        case CONTAINER_SWAP_LIMIT:
                if (c->swap.ok)
                        metrics_emit_at(e, v,
                                        (double)or_zero(c->swap.available) +
                                            (double)or_zero(c->swap.usage),
                                        ms_of(c->swap.time_ns));
                break;
        default:
                break;
        }
}

static void collect_pod(enum family f, const struct stats_pod *pod, struct metrics_emit *e)
{
        const char *v[] = {pod->name, pod->namespace};
        if (f == POD_CPU && pod->cpu.ok && pod->cpu.usage_core_nano_seconds.ok)
                metrics_emit_at(e, v, seconds(pod->cpu.usage_core_nano_seconds.v),
                                ms_of(pod->cpu.time_ns));
        else if (f == POD_MEMORY && pod->memory.ok && pod->memory.working_set.ok)
                metrics_emit_at(e, v, (double)pod->memory.working_set.v,
                                ms_of(pod->memory.time_ns));
        else if (f == POD_SWAP && pod->swap.ok && pod->swap.usage.ok)
                metrics_emit_at(e, v, (double)pod->swap.usage.v, ms_of(pod->swap.time_ns));
}

static void collect_snapshot(enum family f, const struct stats_snapshot *s, struct metrics_emit *e)
{
        if (f == SCRAPE_ERROR || f == RESOURCE_SCRAPE_ERROR) {
                metrics_emit(e, NULL, s->pods_error ? 1 : 0);
                return;
        }
        if (s->pods_error)
                return; /* upstream: only the scrape errors then */
        const struct stats_node *n = &s->node;
        switch (f) {
        case NODE_CPU:
                if (n->cpu.ok && n->cpu.usage_core_nano_seconds.ok)
                        metrics_emit_at(e, NULL, seconds(n->cpu.usage_core_nano_seconds.v),
                                        ms_of(n->cpu.time_ns));
                return;
        case NODE_MEMORY:
                if (n->memory.ok && n->memory.working_set.ok)
                        metrics_emit_at(e, NULL, (double)n->memory.working_set.v,
                                        ms_of(n->memory.time_ns));
                return;
        case NODE_SWAP:
                if (n->swap.ok && n->swap.usage.ok)
                        metrics_emit_at(e, NULL, (double)n->swap.usage.v, ms_of(n->swap.time_ns));
                return;
        case POD_CPU:
        case POD_MEMORY:
        case POD_SWAP:
                for (size_t i = 0; i < s->n_pods; i++)
                        collect_pod(f, &s->pods[i], e);
                return;
        default:
                for (size_t i = 0; i < s->n_pods; i++)
                        for (size_t k = 0; k < s->pods[i].n_containers; k++)
                                collect_container(f, &s->pods[i], &s->pods[i].containers[k], e);
                return;
        }
}

static void collect(void *ctx, struct metrics_emit *e)
{
        const struct family_ctx *fc = ctx;
        struct stats_snapshot *s = stats__get(fc->p);
        collect_snapshot(fc->f, s, e);
        stats__snapshot_unref(s);
}

int stats_register_resource_metrics_hidden(struct metrics_registry *r, struct stats_provider *p,
                                           bool show_hidden, ck_error_t *err)
{
        /* the registry borrows the contexts: the provider keeps them */
        struct family_ctx *ctx = xcalloc(N_FAMILIES, sizeof(*ctx));
        pthread_mutex_lock(&p->lock);
        p->metric_ctx = xrealloc(p->metric_ctx, (p->n_metric_ctx + 1) * sizeof(*p->metric_ctx));
        p->metric_ctx[p->n_metric_ctx++] = ctx;
        pthread_mutex_unlock(&p->lock);
        for (int i = 0; i < N_FAMILIES; i++) {
                if (families[i].deprecated && !show_hidden)
                        continue;
                ctx[i] = (struct family_ctx){.p = p, .f = (enum family)i};
                struct metrics_opts o = {
                    .name = families[i].name,
                    .help = families[i].help,
                    .type = families[i].type,
                    .stability = families[i].stability,
                    .deprecated_version = families[i].deprecated,
                    .label_names = families[i].labels,
                    .n_labels = families[i].n_labels,
                    .collect = collect,
                    .collect_ctx = &ctx[i],
                };
                if (metrics_register(r, &o, NULL, err) < 0)
                        return ck_error_wrap(err, "resource metrics");
        }
        return 0;
}

int stats_register_resource_metrics(struct metrics_registry *r, struct stats_provider *p,
                                    ck_error_t *err)
{
        return stats_register_resource_metrics_hidden(r, p, false, err);
}
