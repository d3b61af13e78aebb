/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Summary as JSON: k8s.io/kubelet/pkg/apis/stats/v1alpha1's field
 * names, in its structs' field order (encoding/json's order), omitempty
 * where upstream has it, metav1.Time as RFC 3339 seconds (null for the zero
 * time), and the two views of upstream's summary provider: Get (everything)
 * and GetCPUAndMemoryStats (only_cpu_and_memory).
 */
#include "stats/stats_internal.h"

#include "util/fsutil.h"

#include <math.h>
#include <stdint.h>

json_t *stats__time_json(int64_t ns)
{
        if (ns == 0)
                return json_null();
        char buf[32];
        return json_string(fs_format_rfc3339(ns, buf));
}

static void set_new(json_t *o, const char *key, json_t *v)
{
        json_object_set_new(o, key, v);
}

static json_t *u64_json(uint64_t v)
{
        /* jansson integers are signed 64-bit */
        return v <= INT64_MAX ? json_integer((json_int_t)v) : json_real((double)v);
}

/* A uint64 pointer: omitted when nil; zero: upstream's zeroMissingValues. */
static void put_u64(json_t *o, const char *key, struct stats_u64 v, bool zero)
{
        if (v.ok)
                set_new(o, key, u64_json(v.v));
        else if (zero)
                set_new(o, key, json_integer(0));
}

/* A float64 as encoding/json writes it: an integral value without ".0". */
static json_t *float_json(double v)
{
        if (isfinite(v) && v == floor(v) && fabs(v) < 1e15)
                return json_integer((json_int_t)v);
        return json_real(v);
}

static json_t *psi_data_json(const struct stats_psi_data *d)
{
        json_t *o = json_object();
        set_new(o, "total", u64_json(d->total));
        set_new(o, "avg10", float_json(d->avg10));
        set_new(o, "avg60", float_json(d->avg60));
        set_new(o, "avg300", float_json(d->avg300));
        return o;
}

static void put_psi(json_t *o, const struct stats_psi *p)
{
        if (!p->ok)
                return;
        json_t *v = json_object();
        set_new(v, "full", psi_data_json(&p->full));
        set_new(v, "some", psi_data_json(&p->some));
        set_new(o, "psi", v);
}

static json_t *cpu_json(const struct stats_cpu *c, bool zero)
{
        json_t *o = json_object();
        set_new(o, "time", stats__time_json(c->time_ns));
        put_u64(o, "usageNanoCores", c->usage_nano_cores, false);
        put_u64(o, "usageCoreNanoSeconds", c->usage_core_nano_seconds, zero);
        put_psi(o, &c->psi);
        return o;
}

static json_t *memory_json(const struct stats_memory *m, bool zero)
{
        json_t *o = json_object();
        set_new(o, "time", stats__time_json(m->time_ns));
        put_u64(o, "availableBytes", m->available, zero);
        put_u64(o, "usageBytes", m->usage, zero);
        put_u64(o, "workingSetBytes", m->working_set, zero);
        put_u64(o, "rssBytes", m->rss, zero);
        put_u64(o, "pageFaults", m->page_faults, zero);
        put_u64(o, "majorPageFaults", m->major_page_faults, zero);
        put_psi(o, &m->psi);
        return o;
}

static json_t *io_json(const struct stats_io *io)
{
        json_t *o = json_object();
        set_new(o, "time", stats__time_json(io->time_ns));
        put_psi(o, &io->psi);
        return o;
}

static json_t *swap_json(const struct stats_swap *s, bool zero)
{
        json_t *o = json_object();
        set_new(o, "time", stats__time_json(s->time_ns));
        put_u64(o, "swapAvailableBytes", s->available, zero);
        put_u64(o, "swapUsageBytes", s->usage, zero);
        return o;
}

/* FsStats' fields into o (also VolumeStats' inline FsStats). */
static void put_fs_fields(json_t *o, const struct stats_fs *f)
{
        set_new(o, "time", stats__time_json(f->time_ns));
        put_u64(o, "availableBytes", f->available, false);
        put_u64(o, "capacityBytes", f->capacity, false);
        put_u64(o, "usedBytes", f->used, false);
        put_u64(o, "inodesFree", f->inodes_free, false);
        put_u64(o, "inodes", f->inodes, false);
        put_u64(o, "inodesUsed", f->inodes_used, false);
}

static json_t *fs_json(const struct stats_fs *f)
{
        json_t *o = json_object();
        put_fs_fields(o, f);
        return o;
}

/* InterfaceStats' fields into o (also NetworkStats' inline one). */
static void put_iface_fields(json_t *o, const struct stats_iface *i)
{
        set_new(o, "name", json_string(i->name ? i->name : ""));
        put_u64(o, "rxBytes", i->rx_bytes, false);
        put_u64(o, "rxErrors", i->rx_errors, false);
        put_u64(o, "txBytes", i->tx_bytes, false);
        put_u64(o, "txErrors", i->tx_errors, false);
}

static json_t *network_json(const struct stats_network *n)
{
        json_t *o = json_object();
        set_new(o, "time", stats__time_json(n->time_ns));
        put_iface_fields(o, &n->dflt);
        if (n->n_ifaces > 0) {
                json_t *a = json_array();
                for (size_t i = 0; i < n->n_ifaces; i++) {
                        json_t *it = json_object();
                        put_iface_fields(it, &n->ifaces[i]);
                        json_array_append_new(a, it);
                }
                set_new(o, "interfaces", a);
        }
        return o;
}

/* ContainerStats: full (Get) or CPU-and-memory (GetCPUAndMemoryStats,
 * where a missing value of a container is 0: zero). */
static json_t *container_json(const struct stats_container *c, bool only_cpu_mem, bool zero)
{
        json_t *o = json_object();
        set_new(o, "name", json_string(c->name ? c->name : ""));
        set_new(o, "startTime", stats__time_json(c->start_ns));
        if (c->cpu.ok)
                set_new(o, "cpu", cpu_json(&c->cpu, zero));
        if (c->memory.ok)
                set_new(o, "memory", memory_json(&c->memory, zero));
        if (!only_cpu_mem && c->io.ok)
                set_new(o, "io", io_json(&c->io));
        if (!only_cpu_mem && c->rootfs.ok)
                set_new(o, "rootfs", fs_json(&c->rootfs));
        if (!only_cpu_mem && c->logs.ok)
                set_new(o, "logs", fs_json(&c->logs));
        if (c->swap.ok)
                set_new(o, "swap", swap_json(&c->swap, zero));
        return o;
}

static json_t *node_json(const struct stats_snapshot *s, bool only_cpu_mem)
{
        const struct stats_node *n = &s->node;
        json_t *o = json_object();
        set_new(o, "nodeName", json_string(s->node_name ? s->node_name : ""));
        if (n->n_sys > 0) {
                json_t *a = json_array();
                for (size_t i = 0; i < n->n_sys; i++)
                        json_array_append_new(a, container_json(&n->sys[i], only_cpu_mem, false));
                set_new(o, "systemContainers", a);
        }
        set_new(o, "startTime", stats__time_json(n->start_ns));
        if (n->cpu.ok)
                set_new(o, "cpu", cpu_json(&n->cpu, false));
        if (n->memory.ok)
                set_new(o, "memory", memory_json(&n->memory, false));
        if (!only_cpu_mem) {
                if (n->io.ok)
                        set_new(o, "io", io_json(&n->io));
                if (n->network.ok)
                        set_new(o, "network", network_json(&n->network));
                if (n->fs.ok)
                        set_new(o, "fs", fs_json(&n->fs));
                json_t *rt = json_object();
                if (n->image_fs.ok)
                        set_new(rt, "imageFs", fs_json(&n->image_fs));
                if (n->container_fs.ok)
                        set_new(rt, "containerFs", fs_json(&n->container_fs));
                set_new(o, "runtime", rt);
                if (n->rlimit.ok) {
                        json_t *r = json_object();
                        set_new(r, "time", stats__time_json(n->rlimit.time_ns));
                        if (n->rlimit.has_maxpid)
                                set_new(r, "maxpid", json_integer(n->rlimit.maxpid));
                        if (n->rlimit.has_curproc)
                                set_new(r, "curproc", json_integer(n->rlimit.curproc));
                        set_new(o, "rlimit", r);
                }
        }
        if (n->swap.ok)
                set_new(o, "swap", swap_json(&n->swap, false));
        return o;
}

static json_t *pod_json(const struct stats_pod *p, bool only_cpu_mem)
{
        json_t *o = json_object();
        json_t *ref = json_object();
        set_new(ref, "name", json_string(p->name));
        set_new(ref, "namespace", json_string(p->namespace));
        set_new(ref, "uid", json_string(p->uid));
        set_new(o, "podRef", ref);
        set_new(o, "startTime", stats__time_json(p->start_ns));
        /* `json:"containers"` without omitempty: a nil slice is null */
        if (p->n_containers == 0) {
                set_new(o, "containers", json_null());
        } else {
                json_t *a = json_array();
                for (size_t i = 0; i < p->n_containers; i++)
                        json_array_append_new(
                            a, container_json(&p->containers[i], only_cpu_mem, only_cpu_mem));
                set_new(o, "containers", a);
        }
        if (p->cpu.ok)
                set_new(o, "cpu", cpu_json(&p->cpu, false));
        if (p->memory.ok)
                set_new(o, "memory", memory_json(&p->memory, false));
        if (!only_cpu_mem) {
                if (p->io.ok)
                        set_new(o, "io", io_json(&p->io));
                if (p->network.ok)
                        set_new(o, "network", network_json(&p->network));
                if (p->n_volumes > 0) {
                        json_t *a = json_array();
                        for (size_t i = 0; i < p->n_volumes; i++) {
                                json_t *v = json_object();
                                put_fs_fields(v, &p->volumes[i].fs);
                                set_new(v, "name", json_string(p->volumes[i].name));
                                json_array_append_new(a, v);
                        }
                        set_new(o, "volume", a);
                }
                if (p->ephemeral.ok)
                        set_new(o, "ephemeral-storage", fs_json(&p->ephemeral));
                if (p->has_process_stats) {
                        json_t *ps = json_object();
                        put_u64(ps, "process_count", p->process_count, false);
                        set_new(o, "process_stats", ps);
                }
        }
        if (p->swap.ok)
                set_new(o, "swap", swap_json(&p->swap, false));
        return o;
}

json_t *stats__summary_of(const struct stats_snapshot *s, bool only_cpu_and_memory)
{
        json_t *o = json_object();
        set_new(o, "node", node_json(s, only_cpu_and_memory));
        json_t *pods = json_array();
        for (size_t i = 0; i < s->n_pods; i++)
                json_array_append_new(pods, pod_json(&s->pods[i], only_cpu_and_memory));
        set_new(o, "pods", pods);
        return o;
}
