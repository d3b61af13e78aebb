/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node's part of the Summary: the root cgroup (cAdvisor's "/" raw
 * container) or /proc, the kubelet root dir's filesystem, rlimit (upstream
 * pidlimit.Stats), the host's network interfaces and the system containers
 * (summary_sys_containers.go).
 */
#include "stats/stats_internal.h"

#include "util/cgroup_name.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <string.h>
#include <sys/sysinfo.h>

#define PROC_FILE_MAX (4u << 20)

static char *read_proc(const struct stats_provider *p, const char *rel)
{
        cleanup_free char *path = xasprintf("%s/%s", p->proc_root, rel);
        char *buf = NULL;
        cleanup_error ck_error_t err = NULL;
        if (fs_read_file(path, PROC_FILE_MAX, &buf, NULL, &err) < 0)
                return NULL;
        return buf;
}

static void psi_into(struct stats_psi *dst, const struct stats_psi *src)
{
        if (src->ok)
                *dst = *src;
}

bool stats__cgroup_stats(struct stats_provider *p, const char *name, int64_t now_ns,
                         struct stats_cpu *cpu, struct stats_memory *memory,
                         struct stats_swap *swap, struct stats_io *io)
{
        struct stats_cgroup_sample s;
        if (!stats__cgroup_read(&p->cgroupfs, name, p->proc_root, &s))
                return false;
        if (cpu && s.has_cpu) {
                cleanup_free char *key = xasprintf("cgroup:%s", name);
                *cpu = (struct stats_cpu){.ok = true, .time_ns = now_ns};
                cpu->usage_core_nano_seconds = stats_u64_of(s.cpu_usage_ns);
                /* cAdvisor: 0 until it has two samples */
                cpu->usage_nano_cores =
                    stats__cpu_cache_update(p->cpu_cache, key, now_ns, s.cpu_usage_ns);
                if (!cpu->usage_nano_cores.ok)
                        cpu->usage_nano_cores = stats_u64_of(0);
                psi_into(&cpu->psi, &s.cpu_psi);
        }
        if (memory && s.has_memory) {
                /* cadvisorInfoToCPUandMemoryStats */
                *memory = (struct stats_memory){.ok = true, .time_ns = now_ns};
                memory->usage = stats_u64_of(s.usage);
                memory->working_set = stats_u64_of(s.working_set);
                memory->rss = stats_u64_of(s.rss);
                memory->page_faults = stats_u64_of(s.page_faults);
                memory->major_page_faults = stats_u64_of(s.major_page_faults);
                if (s.has_limit)
                        memory->available =
                            stats_u64_of(s.limit > s.working_set ? s.limit - s.working_set : 0);
                psi_into(&memory->psi, &s.memory_psi);
        }
        if (swap && s.has_swap) {
                *swap = (struct stats_swap){.ok = true, .time_ns = now_ns};
                swap->usage = stats_u64_of(s.swap_usage);
                if (s.has_swap_limit)
                        swap->available = stats_u64_of(
                            s.swap_limit > s.swap_usage ? s.swap_limit - s.swap_usage : 0);
        }
        if (io && p->cgroupfs.v2) {
                *io = (struct stats_io){.ok = true, .time_ns = now_ns};
                psi_into(&io->psi, &s.io_psi);
        }
        return true;
}

/* What the root cgroup lacks, from /proc (no cpuacct / memory controller
 * at the top, a kernel without the root's pressure files). */
static void node_from_proc(struct stats_provider *p, struct stats_node *n, int64_t now_ns)
{
        if (!n->cpu.ok) {
                cleanup_free char *text = read_proc(p, "stat");
                struct stats_proc_stat ps;
                if (text) {
                        stats__parse_proc_stat(text, &ps);
                        if (ps.has_cpu) {
                                uint64_t busy = stats__proc_stat_busy_ns(&ps, p->ticks_per_second);
                                n->cpu = (struct stats_cpu){.ok = true, .time_ns = now_ns};
                                n->cpu.usage_core_nano_seconds = stats_u64_of(busy);
                                n->cpu.usage_nano_cores = stats__cpu_cache_update(
                                    p->cpu_cache, "node:/proc/stat", now_ns, busy);
                                if (!n->cpu.usage_nano_cores.ok)
                                        n->cpu.usage_nano_cores = stats_u64_of(0);
                        }
                }
        }
        if (!n->memory.ok) {
                cleanup_free char *text = read_proc(p, "meminfo");
                struct stats_meminfo mi;
                if (text) {
                        stats__parse_meminfo(text, &mi);
                        if (mi.has_total && mi.has_free && mi.total >= mi.free) {
                                uint64_t usage = mi.total - mi.free;
                                uint64_t ws = usage;
                                if (mi.has_inactive_file)
                                        ws =
                                            mi.inactive_file > usage ? 0 : usage - mi.inactive_file;
                                struct stats_memory *m = &n->memory;
                                *m = (struct stats_memory){.ok = true, .time_ns = now_ns};
                                m->usage = stats_u64_of(usage);
                                m->working_set = stats_u64_of(ws);
                                m->available = stats_u64_of(mi.total - ws);
                                if (mi.has_anon)
                                        m->rss = stats_u64_of(mi.anon);
                                cleanup_free char *vm = read_proc(p, "vmstat");
                                uint64_t v;
                                if (vm && stats__parse_keyed(vm, "pgfault", &v))
                                        m->page_faults = stats_u64_of(v);
                                if (vm && stats__parse_keyed(vm, "pgmajfault", &v))
                                        m->major_page_faults = stats_u64_of(v);
                        }
                        if (!n->swap.ok && mi.has_swap_total && mi.has_swap_free &&
                            mi.swap_total >= mi.swap_free) {
                                n->swap = (struct stats_swap){.ok = true, .time_ns = now_ns};
                                n->swap.usage = stats_u64_of(mi.swap_total - mi.swap_free);
                                n->swap.available = stats_u64_of(mi.swap_free);
                        }
                }
        }
        /* /proc/pressure mirrors the root cgroup's pressure files */
        static const char *const files[] = {"pressure/cpu", "pressure/memory", "pressure/io"};
        struct stats_psi *dst[] = {&n->cpu.psi, &n->memory.psi, &n->io.psi};
        bool present[] = {n->cpu.ok, n->memory.ok, n->io.ok};
        for (size_t i = 0; i < 3; i++) {
                if (!present[i] || dst[i]->ok)
                        continue;
                cleanup_free char *text = read_proc(p, files[i]);
                if (text)
                        stats__parse_psi(text, dst[i]);
        }
}

static void node_network(struct stats_provider *p, struct stats_node *n, int64_t now_ns)
{
        /* cAdvisor reads the root container's network through pid 1 */
        cleanup_free char *text = read_proc(p, "1/net/dev");
        if (text == NULL)
                text = read_proc(p, "net/dev");
        struct stats_iface *ifaces;
        size_t cnt;
        if (text == NULL || stats__parse_net_dev(text, &ifaces, &cnt) < 0) {
                LOG_INFO(4, "Unable to get the node's network stats", "procRoot=\"%s\"",
                         p->proc_root);
                return;
        }
        /* cAdvisor's spec.HasNetwork for "/": there are network devices */
        if (cnt == 0) {
                free(ifaces);
                return;
        }
        stats__network_from_ifaces(&n->network, now_ns, ifaces, cnt);
}

static void node_rlimit(struct stats_provider *p, struct stats_rlimit *r, int64_t now_ns)
{
        *r = (struct stats_rlimit){.ok = true, .time_ns = now_ns};
        /* the smaller of kernel.pid_max and kernel.threads-max */
        static const char *const files[] = {"sys/kernel/pid_max", "sys/kernel/threads-max"};
        for (size_t i = 0; i < 2; i++) {
                cleanup_free char *text = read_proc(p, files[i]);
                uint64_t v;
                if (text == NULL || !stats__parse_uint(text, &v) || v > INT64_MAX)
                        continue;
                if (!r->has_maxpid || (int64_t)v < r->maxpid) {
                        r->has_maxpid = true;
                        r->maxpid = (int64_t)v;
                }
        }
        /* /proc/loadavg rather than sysinfo(2), whose count is 16 bits */
        cleanup_free char *load = read_proc(p, "loadavg");
        if (load && stats__parse_loadavg_procs(load, &r->curproc)) {
                r->has_curproc = true;
                return;
        }
        struct sysinfo si;
        if (sysinfo(&si) == 0) {
                r->has_curproc = true;
                r->curproc = si.procs;
        }
}

static void node_fs(struct stats_provider *p, struct stats_snapshot *s, int64_t now_ns)
{
        struct stats_fs_info fi;
        cleanup_error ck_error_t err = NULL;
        if (stats_fs_info(p->root_dir, &fi, &err) < 0) {
                s->rootfs_error = xasprintf(
                    "failed to get rootFs stats: failed to get rootFs info: %s", ck_error_msg(err));
                return;
        }
        struct stats_fs *f = &s->node.fs;
        *f = (struct stats_fs){.ok = true, .time_ns = now_ns};
        f->available = stats_u64_of(fi.available);
        f->capacity = stats_u64_of(fi.capacity);
        f->used = stats_u64_of(fi.usage);
        f->inodes_free = stats_u64_of(fi.inodes_free);
        f->inodes = stats_u64_of(fi.inodes);
        f->inodes_used = stats_u64_of(fi.inodes >= fi.inodes_free ? fi.inodes - fi.inodes_free : 0);
}

/* The kubelet's own cgroup, as upstream's getContainer(os.Getpid()). */
static char *own_cgroup(struct stats_provider *p)
{
        cleanup_free char *text = read_proc(p, "self/cgroup");
        return text ? stats__parse_proc_cgroup(text, p->cgroupfs.v2) : NULL;
}

static void system_containers(struct stats_provider *p, struct stats_node *n, int64_t now_ns)
{
        cleanup_free char *kubelet =
            p->detect_kubelet_cgroup ? own_cgroup(p) : xstrdup(p->kubelet_cgroup);
        const struct {
                const char *name; /* summary name */
                const char *cgroup;
                bool kubelet;
        } sys[] = {
            {"kubelet", kubelet, true},
            {"runtime", p->runtime_cgroup, false},
            {"misc", p->system_cgroup, false},
            {"pods", p->pods_cgroup, false},
        };
        n->sys = xcalloc(sizeof(sys) / sizeof(sys[0]), sizeof(*n->sys));
        for (size_t i = 0; i < sizeof(sys) / sizeof(sys[0]); i++) {
                if (sys[i].cgroup == NULL || *sys[i].cgroup == '\0')
                        continue;
                struct stats_container *c = &n->sys[n->n_sys];
                memset(c, 0, sizeof(*c));
                if (!stats__cgroup_stats(p, sys[i].cgroup, now_ns, &c->cpu, &c->memory, &c->swap,
                                         &c->io)) {
                        LOG_INFO(4, "Failed to get system container stats", "containerName=\"%s\"",
                                 sys[i].cgroup);
                        continue;
                }
                /* cadvisorInfoToCPUandMemoryStats: a container without memory
                 * readings still has a zero working set */
                if (!c->memory.ok)
                        c->memory = (struct stats_memory){
                            .ok = true, .time_ns = now_ns, .working_set = stats_u64_of(0)};
                c->name = xstrdup(sys[i].name);
                if (sys[i].kubelet) {
                        c->start_ns = p->created_ns;
                } else {
                        c->start_ns = stats__cgroup_ctime_ns(&p->cgroupfs, sys[i].cgroup);
                        if (c->start_ns < p->boot_time_ns)
                                c->start_ns = p->boot_time_ns;
                }
                n->n_sys++;
        }
}

static void raw_add(struct stats_provider *p, struct stats_snapshot *s, const char *name,
                    int64_t now_ns)
{
        if (name == NULL || *name == '\0' || strcmp(name, "/") == 0)
                return;
        for (size_t i = 0; i < s->n_raw; i++)
                if (strcmp(s->raw[i].view.name, name) == 0)
                        return;
        struct stats_raw_cgroup r = {0};
        stats__cgroup_view_read(p, name, now_ns, false, &r.view);
        if (r.view.name == NULL)
                return;
        r.start_ns = stats__cgroup_ctime_ns(&p->cgroupfs, name);
        if (r.start_ns < p->boot_time_ns)
                r.start_ns = p->boot_time_ns;
        s->raw = xrealloc(s->raw, (s->n_raw + 1) * sizeof(*s->raw));
        s->raw[s->n_raw++] = r;
}

/* The raw cgroups of the kubelet's cAdvisor other than the root and the
 * pods': its cgroupRoots (the node allocatable root, the kubelet's, the
 * runtime's, the system's) and, under the first, the QoS classes. */
static void raw_cgroups(struct stats_provider *p, struct stats_snapshot *s, int64_t now_ns)
{
        raw_add(p, s, p->pods_cgroup, now_ns);
        if (p->kubepods) {
                static const char *const qos[] = {"/burstable", "/besteffort"};
                for (size_t i = 0; i < sizeof(qos) / sizeof(qos[0]); i++) {
                        cleanup_free char *name = xasprintf("%s%s", p->kubepods, qos[i]);
                        cleanup_free char *path = cgroup_name_literal(name, p->systemd_cgroups);
                        raw_add(p, s, path, now_ns);
                }
        }
        cleanup_free char *kubelet =
            p->detect_kubelet_cgroup ? own_cgroup(p) : xstrdup(p->kubelet_cgroup);
        raw_add(p, s, kubelet, now_ns);
        raw_add(p, s, p->runtime_cgroup, now_ns);
        raw_add(p, s, p->system_cgroup, now_ns);
}

/* What cAdvisor's root container "/" has beyond the node's summary: the
 * root cgroup's block I/O, the machine's filesystems. */
static void root_container(struct stats_provider *p, struct stats_snapshot *s, int64_t now_ns)
{
        s->root_time_ns = now_ns;
        stats__cgroup_blkio(&p->cgroupfs, "/", &s->root_blkio);
        cleanup_free char *diskstats = read_proc(p, "diskstats");
        s->n_root_fs = stats__root_fs_read(p->partitions, p->n_partitions, diskstats, &s->root_fs);
}

void stats__collect_node(struct stats_provider *p, struct stats_snapshot *s, int64_t now_ns,
                         bool full)
{
        struct stats_node *n = &s->node;
        n->start_ns = p->boot_time_ns;
        stats__cgroup_stats(p, "/", now_ns, &n->cpu, &n->memory, &n->swap, &n->io);
        node_from_proc(p, n, now_ns);
        node_fs(p, s, now_ns);
        node_rlimit(p, &n->rlimit, now_ns);
        system_containers(p, n, now_ns);
        if (!full)
                return;
        node_network(p, n, now_ns);
        root_container(p, s, now_ns);
        raw_cgroups(p, s, now_ns);
}
