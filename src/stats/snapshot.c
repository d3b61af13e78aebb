/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The snapshot's lifetime (reference counted, immutable once published) and
 * the per-key cache of the previous cumulative CPU sample that
 * usageNanoCores is computed from (upstream cpuUsageCache).
 */
#include "stats/stats_internal.h"

#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

struct stats_snapshot *stats__snapshot_new(void)
{
        struct stats_snapshot *s = xcalloc(1, sizeof(*s));
        atomic_init(&s->refs, 1);
        return s;
}

struct stats_snapshot *stats__snapshot_ref(struct stats_snapshot *s)
{
        atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
        return s;
}

void stats__network_clear(struct stats_network *n)
{
        free(n->dflt.name);
        for (size_t i = 0; i < n->n_ifaces; i++)
                free(n->ifaces[i].name);
        free(n->ifaces);
        memset(n, 0, sizeof(*n));
}

void stats__cgroup_view_clear(struct stats_cgroup_view *v)
{
        free(v->name);
        if (v->blkio) {
                stats__blkio_clear(v->blkio);
                free(v->blkio);
        }
        memset(v, 0, sizeof(*v));
}

void stats__container_clear(struct stats_container *c)
{
        free(c->name);
        free(c->id);
        free(c->image);
        stats__cgroup_view_clear(&c->cgroup);
        memset(c, 0, sizeof(*c));
}

void stats__pod_clear(struct stats_pod *p)
{
        free(p->name);
        free(p->namespace);
        free(p->uid);
        for (size_t i = 0; i < p->n_containers; i++)
                stats__container_clear(&p->containers[i]);
        free(p->containers);
        for (size_t i = 0; i < p->n_volumes; i++)
                free(p->volumes[i].name);
        free(p->volumes);
        stats__network_clear(&p->network);
        free(p->sandbox_id);
        stats__cgroup_view_clear(&p->cgroup);
        stats__cgroup_view_clear(&p->sandbox_cgroup);
        stats__network_clear(&p->proc_network);
        memset(p, 0, sizeof(*p));
}

void stats__snapshot_unref(struct stats_snapshot *s)
{
        if (s == NULL || atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
                return;
        free(s->node_name);
        for (size_t i = 0; i < s->node.n_sys; i++)
                stats__container_clear(&s->node.sys[i]);
        free(s->node.sys);
        stats__network_clear(&s->node.network);
        for (size_t i = 0; i < s->n_pods; i++)
                stats__pod_clear(&s->pods[i]);
        free(s->pods);
        stats__blkio_clear(&s->root_blkio);
        for (size_t i = 0; i < s->n_raw; i++)
                stats__cgroup_view_clear(&s->raw[i].view);
        free(s->raw);
        stats__root_fs_free(s->root_fs, s->n_root_fs);
        free(s->pods_error);
        free(s->rootfs_error);
        free(s->imagefs_error);
        free(s);
}

/* ---- The CPU sample cache ------------------------------------------------- */

#define CPU_CACHE_BUCKETS 256
#define CPU_CACHE_PERIOD_NS (10ll * 60 * 1000000000) /* upstream defaultCachePeriod */

struct cpu_entry {
        struct cpu_entry *next;
        char *key;
        int64_t time_ns;
        uint64_t usage;
};

struct stats_cpu_cache {
        struct cpu_entry *buckets[CPU_CACHE_BUCKETS];
};

struct stats_cpu_cache *stats__cpu_cache_new(void)
{
        return xcalloc(1, sizeof(struct stats_cpu_cache));
}

void stats__cpu_cache_free(struct stats_cpu_cache *c)
{
        if (c == NULL)
                return;
        for (size_t i = 0; i < CPU_CACHE_BUCKETS; i++) {
                for (struct cpu_entry *e = c->buckets[i], *next; e; e = next) {
                        next = e->next;
                        free(e->key);
                        free(e);
                }
        }
        free(c);
}

static size_t bucket_of(const char *key)
{
        uint32_t h = 2166136261u; /* FNV-1a */
        for (const unsigned char *s = (const unsigned char *)key; *s; s++)
                h = (h ^ *s) * 16777619u;
        return h % CPU_CACHE_BUCKETS;
}

struct stats_u64 stats__cpu_cache_update(struct stats_cpu_cache *c, const char *key,
                                         int64_t time_ns, uint64_t usage_core_ns)
{
        struct cpu_entry **head = &c->buckets[bucket_of(key)];
        struct cpu_entry *e = *head;
        while (e && strcmp(e->key, key) != 0)
                e = e->next;
        if (e == NULL) {
                e = xcalloc(1, sizeof(*e));
                e->key = xstrdup(key);
                e->next = *head;
                *head = e;
                e->time_ns = time_ns;
                e->usage = usage_core_ns;
                return (struct stats_u64){0};
        }
        if (usage_core_ns < e->usage) {
                /* a restarted container: start over from this sample */
                e->time_ns = time_ns;
                e->usage = usage_core_ns;
                return (struct stats_u64){0};
        }
        int64_t dt = time_ns - e->time_ns;
        if (dt <= 0)
                return (struct stats_u64){0}; /* upstream: "zero or negative interval" */
        double nano = (double)(usage_core_ns - e->usage) / (double)dt * 1e9;
        e->time_ns = time_ns;
        e->usage = usage_core_ns;
        return stats_u64_of((uint64_t)nano);
}

void stats__cpu_cache_expire(struct stats_cpu_cache *c, int64_t now_ns)
{
        for (size_t i = 0; i < CPU_CACHE_BUCKETS; i++) {
                struct cpu_entry **pe = &c->buckets[i];
                while (*pe) {
                        struct cpu_entry *e = *pe;
                        if (now_ns - e->time_ns > CPU_CACHE_PERIOD_NS) {
                                *pe = e->next;
                                free(e->key);
                                free(e);
                        } else {
                                pe = &e->next;
                        }
                }
        }
}
