/* SPDX-License-Identifier: Apache-2.0 */
/* /metrics/cadvisor (src/stats/cadvisor_metrics.c): the exact text of a
 * fixed snapshot (the root, a pod's cgroup, its sandbox with the pod's
 * network, a container) and fixed machine facts, every family's HELP and
 * TYPE against cAdvisor v0.53's (metrics/prometheus.go,
 * prometheus_machine.go), the scrape error, the machine facts read from
 * fixture /proc and /sys trees, and the cgroup readings cAdvisor adds (the
 * extras of stats__cgroup_sample_parse and stats__cgroup_read). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "metrics/metrics.h"
#include "stats/stats.h"
#include "stats/stats_internal.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SEC 1000000000ll
#define T0 (1700000100ll * SEC) /* the refresh: 2023-11-14T22:15:00Z */
#define NOW (T0 + 3 * SEC + 500000000ll)
#define BTIME 1700000000ll

static void write_file(const char *base, const char *rel, const char *content)
{
        cleanup_free char *path = xasprintf("%s/%s", base, rel);
        cleanup_free char *dir = xstrdup(path);
        *strrchr(dir, '/') = '\0';
        ck_error_t err = NULL;
        assert_int_equal(fs_mkdir_p(dir, 0755, &err), 0);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(content, f);
        assert_int_equal(fclose(f), 0);
}

/* ---- The provider over an empty cgroupfs, a fake clock ----------------------- */

struct fixture {
        char base[64];
        char *proc, *cg, *sys;
        atomic_llong real_ns, mono_ns;
        struct stats_provider *p;
};

static int64_t fake_real(void *ctx)
{
        return atomic_load(&((struct fixture *)ctx)->real_ns);
}

static int64_t fake_mono(void *ctx)
{
        return atomic_load(&((struct fixture *)ctx)->mono_ns);
}

static int setup(void **state)
{
        struct fixture *f = calloc(1, sizeof(*f));
        snprintf(f->base, sizeof(f->base), "/tmp/ck-cadvisor-XXXXXX");
        assert_non_null(mkdtemp(f->base));
        f->proc = xasprintf("%s/proc", f->base);
        f->cg = xasprintf("%s/cgroup", f->base);
        f->sys = xasprintf("%s/sys", f->base);
        write_file(f->proc, "meminfo", "MemTotal: 8000000 kB\nSwapTotal: 1000 kB\n");
        write_file(f->proc, "stat", "cpu  100 0 50 1000 0 0 0 0 0 0\nbtime 1700000000\n");
        write_file(f->proc, "sys/kernel/random/boot_id", "boot-1\n");
        write_file(f->cg, "cgroup.controllers", "cpu memory pids\n");
        write_file(f->sys, "block/vda/dev", "253:0\n");
        atomic_store(&f->real_ns, NOW);
        atomic_store(&f->mono_ns, 1000 * SEC);
        struct stats_options o = {
            .node_name = "node1",
            .root_dir = f->base,
            .runtime_endpoint = "unix:///nonexistent/ck-cadvisor-test.sock",
            .runtime_timeout_ms = 1000,
            .cgroups_per_qos = true,
            .housekeeping_interval_ms = 10000,
            .cgroupfs_root = f->cg,
            .proc_root = f->proc,
            .sys_root = f->sys,
            .now_real_ns = fake_real,
            .now_mono_ns = fake_mono,
            .clock_ctx = f,
        };
        ck_error_t err = NULL;
        assert_int_equal(stats_provider_new(&o, &f->p, &err), 0);
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        struct fixture *f = *state;
        stats_provider_free(f->p);
        ck_error_t err = NULL;
        assert_int_equal(fs_remove_all(f->base, &err), 0);
        free(f->proc);
        free(f->cg);
        free(f->sys);
        free(f);
        return 0;
}

/* Makes the provider's cache hold s (fresh: no refresh on render). */
static void install_snapshot(struct fixture *f, struct stats_snapshot *s)
{
        s->taken_mono_ns = atomic_load(&f->mono_ns);
        pthread_mutex_lock(&f->p->lock);
        stats__snapshot_unref(f->p->snap);
        f->p->snap = s;
        pthread_mutex_unlock(&f->p->lock);
}

/* ---- The fixed snapshot ---------------------------------------------------------- */

static struct stats_cgroup_view view(const char *name, int64_t t)
{
        struct stats_cgroup_view v = {.name = xstrdup(name), .time_ns = t};
        v.s.has_cpu = v.s.has_memory = true;
        v.s.has_cpu_spec = v.s.has_memory_spec = true;
        v.s.spec_cpu_period = 100000;
        v.s.spec_cpu_shares = 2;
        v.s.spec_memory_limit = UINT64_MAX; /* "max": 0 */
        v.s.spec_swap_limit = UINT64_MAX;
        return v;
}

static struct stats_iface eth0(void)
{
        return (struct stats_iface){
            .name = xstrdup("eth0"),
            .rx_bytes = stats_u64_of(1000),
            .rx_errors = stats_u64_of(1),
            .tx_bytes = stats_u64_of(2000),
            .tx_errors = stats_u64_of(2),
            .rx_packets = stats_u64_of(10),
            .rx_dropped = stats_u64_of(3),
            .tx_packets = stats_u64_of(20),
            .tx_dropped = stats_u64_of(4),
        };
}

static struct stats_snapshot *fixed_snapshot(void)
{
        struct stats_snapshot *s = stats__snapshot_new();
        struct stats_node *n = &s->node;
        n->cpu = (struct stats_cpu){
            .ok = true, .time_ns = T0, .usage_core_nano_seconds = stats_u64_of(150 * SEC)};
        n->memory = (struct stats_memory){.ok = true,
                                          .time_ns = T0,
                                          .usage = stats_u64_of(4000000),
                                          .working_set = stats_u64_of(3500000),
                                          .rss = stats_u64_of(1000000)};
        n->swap = (struct stats_swap){.ok = true, .time_ns = T0, .usage = stats_u64_of(0)};
        n->network = (struct stats_network){.ok = true, .time_ns = T0 + SEC};
        n->network.ifaces = xcalloc(1, sizeof(*n->network.ifaces));
        /* the CRI / summary view: no packet counters */
        n->network.ifaces[0] = (struct stats_iface){
            .name = xstrdup("ens3"), .rx_bytes = stats_u64_of(5), .tx_bytes = stats_u64_of(6)};
        n->network.n_ifaces = 1;

        s->n_pods = 1;
        s->pods = xcalloc(1, sizeof(*s->pods));
        struct stats_pod *p = &s->pods[0];
        p->name = xstrdup("web");
        p->namespace = xstrdup("default");
        p->uid = xstrdup("uid-a");
        p->start_ns = T0 - 100 * SEC + 900000000ll;
        p->sandbox_id = xstrdup("sb-a");
        p->cgroup = view("/kubepods/burstable/poduid-a", T0);
        p->cgroup.s.cpu_usage_ns = 7 * SEC;
        p->cgroup.s.usage = 9000;
        p->cgroup.s.working_set = 8000;
        p->cgroup.s.spec_memory_limit = 1u << 20;
        p->sandbox_cgroup = view("/kubepods/burstable/poduid-a/sb-a", T0);
        /* a sandbox that has not run yet: no container_cpu_usage_seconds_total */
        p->sandbox_cgroup.s.usage = 4096;
        p->sandbox_cgroup.s.threads = 1;
        p->sandbox_cgroup.s.threads_max = 0;
        /* the runtime's network (left for the proc one) */
        p->network = (struct stats_network){.ok = true, .time_ns = T0};
        p->network.ifaces = xcalloc(1, sizeof(*p->network.ifaces));
        p->network.ifaces[0] =
            (struct stats_iface){.name = xstrdup("eth0"), .rx_bytes = stats_u64_of(999)};
        p->network.n_ifaces = 1;
        p->proc_network = (struct stats_network){.ok = true, .time_ns = T0};
        p->proc_network.ifaces = xcalloc(1, sizeof(*p->proc_network.ifaces));
        p->proc_network.ifaces[0] = eth0();
        p->proc_network.n_ifaces = 1;

        p->n_containers = 1;
        p->containers = xcalloc(1, sizeof(*p->containers));
        struct stats_container *c = &p->containers[0];
        c->name = xstrdup("app");
        c->id = xstrdup("c-a1");
        c->image = xstrdup("docker.io/library/nginx:1.25");
        c->start_ns = T0 - 90 * SEC + 999999999ll;
        c->cgroup = view("/kubepods/burstable/poduid-a/c-a1", T0 + 250000000ll);
        struct stats_cgroup_sample *cs = &c->cgroup.s;
        cs->cpu_usage_ns = 2500000000ull;
        cs->cpu_user_ns = 2000000000ull;
        cs->cpu_system_ns = 500000000ull;
        cs->cfs_periods = 40;
        cs->cfs_throttled_periods = 4;
        cs->cfs_throttled_ns = 1500000ull;
        cs->usage = 1500;
        cs->working_set = 1000;
        cs->rss = 800;
        cs->cache = 700;
        cs->mapped_file = 100;
        cs->swap_usage = 16;
        cs->failcnt = 0;
        cs->max_usage = 2048;
        cs->active_file = 300;
        cs->inactive_file = 500;
        cs->page_faults = 10;
        cs->major_page_faults = 1;
        cs->processes = 2;
        cs->fds = 7;
        cs->sockets = 2;
        c->cgroup.has_nofile = true;
        c->cgroup.nofile_soft = 1048576;
        cs->threads = 5;
        cs->threads_max = 1024;
        cs->oom_kills = 1;
        cs->cpu_psi = (struct stats_psi){.ok = true, .some = {.total = 1500000}};
        cs->memory_psi = (struct stats_psi){.ok = true, .full = {.total = 250}};
        cs->spec_cpu_quota = 50000;
        cs->spec_cpu_shares = 102;
        cs->spec_memory_limit = 64ull << 20;
        cs->spec_swap_limit = 0;
        cs->spec_memory_reservation = 0;
        return s;
}

static struct stats_cadvisor_machine fixed_machine(void)
{
        struct stats_cadvisor_machine m = {.physical_cores = 2, .sockets = 1, .time_ns = T0};
        m.info.num_cores = 4;
        m.info.memory_capacity = 8192000000ll;
        m.info.swap_capacity = 1024000;
        snprintf(m.info.boot_id, sizeof(m.info.boot_id), "boot-1");
        snprintf(m.info.machine_id, sizeof(m.info.machine_id), "machine-1");
        snprintf(m.info.system_uuid, sizeof(m.info.system_uuid), "uuid-1");
        return m;
}

/* The fixed snapshot plus block I/O (the root cgroup's, on 8:0, not a
 * disk of the fixture's; the app container's: the disk vda, 253:0, and an
 * unnamed 7:1) and one root filesystem, vda, with its /proc/diskstats
 * figures. */
static struct stats_snapshot *with_disks(struct stats_snapshot *s)
{
        stats__blkio_parse_v1("8:0 Read 4096\n8:0 Write 8192\n8:0 Sync 0\n"
                              "8:0 Async 12288\n8:0 Discard 0\n8:0 Total 12288\nTotal 12288\n",
                              "8:0 Read 1\n8:0 Write 2\n8:0 Total 3\nTotal 3\n", &s->root_blkio);
        struct stats_cgroup_view *cv = &s->pods[0].containers[0].cgroup;
        cv->blkio = xcalloc(1, sizeof(*cv->blkio));
        stats__blkio_parse_v2("253:0 rbytes=512 wbytes=1024 rios=3 wios=4 dbytes=0 dios=0\n"
                              "7:1 rbytes=5 wbytes=0 rios=1 wios=0\n",
                              cv->blkio);
        s->root_time_ns = T0;
        s->n_root_fs = 1;
        s->root_fs = xcalloc(1, sizeof(*s->root_fs));
        s->root_fs[0] = (struct stats_root_fs){.device = xstrdup("/dev/vda"),
                                               .major = 253,
                                               .limit = 1000000,
                                               .usage = 400000,
                                               .inodes = 100,
                                               .inodes_free = 60};
        assert_true(stats__parse_diskstats(
            " 253       0 vda 10 1 80 1500 20 2 160 2500 0 3000 4000 0 0 0 0\n", "/dev/vda", 253, 0,
            &s->root_fs[0]));
        return s;
}

static char *render(struct fixture *f, const struct stats_cadvisor_machine *m)
{
        struct metrics_registry *r = metrics_registry_new();
        ck_error_t err = NULL;
        if (m)
                assert_int_equal(stats__register_cadvisor_metrics(r, f->p, m, &err), 0);
        else
                assert_int_equal(stats_register_cadvisor_metrics(r, f->p, &err), 0);
        struct metrics_buf b = {0};
        assert_int_equal(metrics_render(r, &b), 0);
        metrics_registry_free(r);
        char *out = xstrdup(b.data ? b.data : "");
        metrics_buf_release(&b);
        return out;
}

/* The families served, with the HELP and type cAdvisor v0.53 declares
 * (copied from metrics/prometheus.go and prometheus_machine.go). */
static const struct {
        const char *name, *help, *type;
} upstream[] = {
    {"container_cpu_cfs_periods_total", "Number of elapsed enforcement period intervals.",
     "counter"},
    {"container_cpu_cfs_throttled_periods_total", "Number of throttled period intervals.",
     "counter"},
    {"container_cpu_cfs_throttled_seconds_total",
     "Total time duration the container has been throttled.", "counter"},
    {"container_cpu_load_average_10s",
     "Value of container cpu load average over the last 10 seconds.", "gauge"},
    {"container_cpu_load_d_average_10s",
     "Value of container cpu load.d average over the last 10 seconds.", "gauge"},
    {"container_cpu_system_seconds_total", "Cumulative system cpu time consumed in seconds.",
     "counter"},
    {"container_cpu_usage_seconds_total", "Cumulative cpu time consumed in seconds.", "counter"},
    {"container_cpu_user_seconds_total", "Cumulative user cpu time consumed in seconds.",
     "counter"},
    {"container_blkio_device_usage_total", "Blkio Device bytes usage", "counter"},
    {"container_fs_inodes_free", "Number of available Inodes", "gauge"},
    {"container_fs_inodes_total", "Number of Inodes", "gauge"},
    {"container_fs_io_current", "Number of I/Os currently in progress", "gauge"},
    {"container_fs_io_time_seconds_total", "Cumulative count of seconds spent doing I/Os",
     "counter"},
    {"container_fs_io_time_weighted_seconds_total", "Cumulative weighted I/O time in seconds",
     "counter"},
    {"container_fs_limit_bytes",
     "Number of bytes that can be consumed by the container on this filesystem.", "gauge"},
    {"container_fs_read_seconds_total", "Cumulative count of seconds spent reading", "counter"},
    {"container_fs_reads_bytes_total", "Cumulative count of bytes read", "counter"},
    {"container_fs_reads_merged_total", "Cumulative count of reads merged", "counter"},
    {"container_fs_reads_total", "Cumulative count of reads completed", "counter"},
    {"container_fs_sector_reads_total", "Cumulative count of sector reads completed", "counter"},
    {"container_fs_sector_writes_total", "Cumulative count of sector writes completed", "counter"},
    {"container_fs_usage_bytes",
     "Number of bytes that are consumed by the container on this filesystem.", "gauge"},
    {"container_fs_write_seconds_total", "Cumulative count of seconds spent writing", "counter"},
    {"container_fs_writes_bytes_total", "Cumulative count of bytes written", "counter"},
    {"container_fs_writes_merged_total", "Cumulative count of writes merged", "counter"},
    {"container_fs_writes_total", "Cumulative count of writes completed", "counter"},
    {"container_file_descriptors", "Number of open file descriptors for the container.", "gauge"},
    {"container_last_seen", "Last time a container was seen by the exporter", "gauge"},
    {"container_memory_cache", "Number of bytes of page cache memory.", "gauge"},
    {"container_memory_failcnt", "Number of memory usage hits limits", "counter"},
    {"container_memory_failures_total", "Cumulative count of memory allocation failures.",
     "counter"},
    {"container_memory_kernel_usage", "Size of kernel memory allocated in bytes.", "gauge"},
    {"container_memory_mapped_file", "Size of memory mapped files in bytes.", "gauge"},
    {"container_memory_max_usage_bytes", "Maximum memory usage recorded in bytes", "gauge"},
    {"container_memory_rss", "Size of RSS in bytes.", "gauge"},
    {"container_memory_swap", "Container swap usage in bytes.", "gauge"},
    {"container_memory_total_active_file_bytes", "Current total active file in bytes.", "gauge"},
    {"container_memory_total_inactive_file_bytes", "Current total inactive file in bytes.",
     "gauge"},
    {"container_memory_usage_bytes",
     "Current memory usage in bytes, including all memory regardless of when it was accessed",
     "gauge"},
    {"container_memory_working_set_bytes", "Current working set in bytes.", "gauge"},
    {"container_network_receive_bytes_total", "Cumulative count of bytes received", "counter"},
    {"container_network_receive_errors_total",
     "Cumulative count of errors encountered while receiving", "counter"},
    {"container_network_receive_packets_dropped_total",
     "Cumulative count of packets dropped while receiving", "counter"},
    {"container_network_receive_packets_total", "Cumulative count of packets received", "counter"},
    {"container_network_transmit_bytes_total", "Cumulative count of bytes transmitted", "counter"},
    {"container_network_transmit_errors_total",
     "Cumulative count of errors encountered while transmitting", "counter"},
    {"container_network_transmit_packets_dropped_total",
     "Cumulative count of packets dropped while transmitting", "counter"},
    {"container_network_transmit_packets_total", "Cumulative count of packets transmitted",
     "counter"},
    {"container_oom_events_total", "Count of out of memory events observed for the container",
     "counter"},
    {"container_pressure_cpu_stalled_seconds_total",
     "Total time duration no tasks in the container could make progress due to CPU congestion.",
     "counter"},
    {"container_pressure_cpu_waiting_seconds_total",
     "Total time duration tasks in the container have waited due to CPU congestion.", "counter"},
    {"container_pressure_io_stalled_seconds_total",
     "Total time duration no tasks in the container could make progress due to IO congestion.",
     "counter"},
    {"container_pressure_io_waiting_seconds_total",
     "Total time duration tasks in the container have waited due to IO congestion.", "counter"},
    {"container_pressure_memory_stalled_seconds_total",
     "Total time duration no tasks in the container could make progress due to memory congestion.",
     "counter"},
    {"container_pressure_memory_waiting_seconds_total",
     "Total time duration tasks in the container have waited due to memory congestion.", "counter"},
    {"container_processes", "Number of processes running inside the container.", "gauge"},
    {"container_scrape_error",
     "1 if there was an error while getting container metrics, 0 otherwise", "gauge"},
    {"container_sockets", "Number of open sockets for the container.", "gauge"},
    {"container_spec_cpu_period", "CPU period of the container.", "gauge"},
    {"container_spec_cpu_quota", "CPU quota of the container.", "gauge"},
    {"container_spec_cpu_shares", "CPU share of the container.", "gauge"},
    {"container_spec_memory_limit_bytes", "Memory limit for the container.", "gauge"},
    {"container_spec_memory_reservation_limit_bytes", "Memory reservation limit for the container.",
     "gauge"},
    {"container_spec_memory_swap_limit_bytes", "Memory swap limit for the container.", "gauge"},
    {"container_start_time_seconds", "Start time of the container since unix epoch in seconds.",
     "gauge"},
    {"container_tasks_state", "Number of tasks in given state", "gauge"},
    {"container_threads", "Number of threads running inside the container", "gauge"},
    {"container_threads_max",
     "Maximum number of threads allowed inside the container, infinity if value is zero", "gauge"},
    {"container_ulimits_soft",
     "Soft ulimit values for the container root process. Unlimited if -1, except priority and "
     "nice",
     "gauge"},
    {"machine_cpu_cores", "Number of logical CPU cores.", "gauge"},
    {"machine_cpu_physical_cores", "Number of physical CPU cores.", "gauge"},
    {"machine_cpu_sockets", "Number of CPU sockets.", "gauge"},
    {"machine_memory_bytes", "Amount of memory installed on the machine.", "gauge"},
    {"machine_nvm_avg_power_budget_watts", "NVM power budget.", "gauge"},
    {"machine_nvm_capacity",
     "NVM capacity value labeled by NVM mode (memory mode or app direct mode).", "gauge"},
    {"machine_scrape_error", "1 if there was an error while getting machine metrics, 0 otherwise.",
     "gauge"},
    {"machine_swap_bytes", "Amount of swap memory available on the machine.", "gauge"},
};

/* Every family of the fixed snapshot: the root (the node's values), the
 * pod's cgroup, its sandbox (the pod's /proc network, no CPU yet) and the
 * app container (a CFS quota: the cfs series). */
static const char expected_text[] =
    "# HELP container_cpu_cfs_periods_total Number of elapsed enforcement period intervals.\n"
    "# TYPE container_cpu_cfs_periods_total counter\n"
    "container_cpu_cfs_periods_total{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 40 1700000100250\n"
    "# HELP container_cpu_cfs_throttled_periods_total Number of throttled period intervals.\n"
    "# TYPE container_cpu_cfs_throttled_periods_total counter\n"
    "container_cpu_cfs_throttled_periods_total{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 4 1700000100250\n"
    "# HELP container_cpu_cfs_throttled_seconds_total Total time duration the container has been "
    "throttled.\n"
    "# TYPE container_cpu_cfs_throttled_seconds_total counter\n"
    "container_cpu_cfs_throttled_seconds_total{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 0.0015 1700000100250\n"
    "# HELP container_cpu_load_average_10s Value of container cpu load average over the last 10 "
    "seconds.\n"
    "# TYPE container_cpu_load_average_10s gauge\n"
    "container_cpu_load_average_10s{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_cpu_load_average_10s{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_cpu_load_average_10s{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 0 1700000100250\n"
    "# HELP container_cpu_load_d_average_10s Value of container cpu load.d average over the last "
    "10 seconds.\n"
    "# TYPE container_cpu_load_d_average_10s gauge\n"
    "container_cpu_load_d_average_10s{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_cpu_load_d_average_10s{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_cpu_load_d_average_10s{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 0 1700000100250\n"
    "# HELP container_cpu_system_seconds_total Cumulative system cpu time consumed in seconds.\n"
    "# TYPE container_cpu_system_seconds_total counter\n"
    "container_cpu_system_seconds_total{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_cpu_system_seconds_total{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_cpu_system_seconds_total{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 0.5 1700000100250\n"
    "# HELP container_cpu_usage_seconds_total Cumulative cpu time consumed in seconds.\n"
    "# TYPE container_cpu_usage_seconds_total counter\n"
    "container_cpu_usage_seconds_total{container=\"\",cpu=\"total\",id=\"/"
    "\",image=\"\",name=\"\",namespace=\"\",pod=\"\"} 150 1700000100000\n"
    "container_cpu_usage_seconds_total{container=\"\",cpu=\"total\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 7 1700000100000\n"
    "container_cpu_usage_seconds_total{container=\"app\",cpu=\"total\",id=\"/kubepods/burstable/"
    "poduid-a/c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 2.5 1700000100250\n"
    "# HELP container_cpu_user_seconds_total Cumulative user cpu time consumed in seconds.\n"
    "# TYPE container_cpu_user_seconds_total counter\n"
    "container_cpu_user_seconds_total{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_cpu_user_seconds_total{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_cpu_user_seconds_total{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 2 1700000100250\n"
    "# HELP container_file_descriptors Number of open file descriptors for the container.\n"
    "# TYPE container_file_descriptors gauge\n"
    "container_file_descriptors{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_file_descriptors{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_file_descriptors{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 7 1700000100250\n"
    "# HELP container_last_seen Last time a container was seen by the exporter\n"
    "# TYPE container_last_seen gauge\n"
    "container_last_seen{container=\"\",id=\"/\",image=\"\",name=\"\",namespace=\"\",pod=\"\"} "
    "1.700000103e+09 1700000103500\n"
    "container_last_seen{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 1.700000103e+09 "
    "1700000103500\n"
    "container_last_seen{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 1.700000103e+09 "
    "1700000103500\n"
    "container_last_seen{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 1.700000103e+09 1700000103500\n"
    "# HELP container_memory_cache Number of bytes of page cache memory.\n"
    "# TYPE container_memory_cache gauge\n"
    "container_memory_cache{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_memory_cache{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_memory_cache{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 700 1700000100250\n"
    "# HELP container_memory_failcnt Number of memory usage hits limits\n"
    "# TYPE container_memory_failcnt counter\n"
    "container_memory_failcnt{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_memory_failcnt{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_memory_failcnt{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 0 1700000100250\n"
    "# HELP container_memory_failures_total Cumulative count of memory allocation failures.\n"
    "# TYPE container_memory_failures_total counter\n"
    "container_memory_failures_total{container=\"\",failure_type=\"pgfault\",id=\"/kubepods/"
    "burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\",scope=\"container\"} 0 "
    "1700000100000\n"
    "container_memory_failures_total{container=\"\",failure_type=\"pgfault\",id=\"/kubepods/"
    "burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\",scope=\"hierarchy\"} 0 "
    "1700000100000\n"
    "container_memory_failures_total{container=\"\",failure_type=\"pgfault\",id=\"/kubepods/"
    "burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\",scope=\"container\"} 0 "
    "1700000100000\n"
    "container_memory_failures_total{container=\"\",failure_type=\"pgfault\",id=\"/kubepods/"
    "burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\",scope=\"hierarchy\"} 0 "
    "1700000100000\n"
    "container_memory_failures_total{container=\"\",failure_type=\"pgmajfault\",id=\"/kubepods/"
    "burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\",scope=\"container\"} 0 "
    "1700000100000\n"
    "container_memory_failures_total{container=\"\",failure_type=\"pgmajfault\",id=\"/kubepods/"
    "burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\",scope=\"hierarchy\"} 0 "
    "1700000100000\n"
    "container_memory_failures_total{container=\"\",failure_type=\"pgmajfault\",id=\"/kubepods/"
    "burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\",scope=\"container\"} 0 "
    "1700000100000\n"
    "container_memory_failures_total{container=\"\",failure_type=\"pgmajfault\",id=\"/kubepods/"
    "burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\",scope=\"hierarchy\"} 0 "
    "1700000100000\n"
    "container_memory_failures_total{container=\"app\",failure_type=\"pgfault\",id=\"/kubepods/"
    "burstable/poduid-a/c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\",scope=\"container\"} 10 "
    "1700000100250\n"
    "container_memory_failures_total{container=\"app\",failure_type=\"pgfault\",id=\"/kubepods/"
    "burstable/poduid-a/c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\",scope=\"hierarchy\"} 10 "
    "1700000100250\n"
    "container_memory_failures_total{container=\"app\",failure_type=\"pgmajfault\",id=\"/kubepods/"
    "burstable/poduid-a/c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\",scope=\"container\"} 1 "
    "1700000100250\n"
    "container_memory_failures_total{container=\"app\",failure_type=\"pgmajfault\",id=\"/kubepods/"
    "burstable/poduid-a/c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\",scope=\"hierarchy\"} 1 "
    "1700000100250\n"
    "# HELP container_memory_kernel_usage Size of kernel memory allocated in bytes.\n"
    "# TYPE container_memory_kernel_usage gauge\n"
    "container_memory_kernel_usage{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_memory_kernel_usage{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_memory_kernel_usage{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 0 1700000100250\n"
    "# HELP container_memory_mapped_file Size of memory mapped files in bytes.\n"
    "# TYPE container_memory_mapped_file gauge\n"
    "container_memory_mapped_file{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_memory_mapped_file{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_memory_mapped_file{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 100 1700000100250\n"
    "# HELP container_memory_max_usage_bytes Maximum memory usage recorded in bytes\n"
    "# TYPE container_memory_max_usage_bytes gauge\n"
    "container_memory_max_usage_bytes{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_memory_max_usage_bytes{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_memory_max_usage_bytes{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 2048 1700000100250\n"
    "# HELP container_memory_rss Size of RSS in bytes.\n"
    "# TYPE container_memory_rss gauge\n"
    "container_memory_rss{container=\"\",id=\"/\",image=\"\",name=\"\",namespace=\"\",pod=\"\"} "
    "1e+06 1700000100000\n"
    "container_memory_rss{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_memory_rss{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_memory_rss{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 800 1700000100250\n"
    "# HELP container_memory_swap Container swap usage in bytes.\n"
    "# TYPE container_memory_swap gauge\n"
    "container_memory_swap{container=\"\",id=\"/\",image=\"\",name=\"\",namespace=\"\",pod=\"\"} 0 "
    "1700000100000\n"
    "container_memory_swap{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_memory_swap{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_memory_swap{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 16 1700000100250\n"
    "# HELP container_memory_total_active_file_bytes Current total active file in bytes.\n"
    "# TYPE container_memory_total_active_file_bytes gauge\n"
    "container_memory_total_active_file_bytes{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_memory_total_active_file_bytes{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_memory_total_active_file_bytes{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 300 1700000100250\n"
    "# HELP container_memory_total_inactive_file_bytes Current total inactive file in bytes.\n"
    "# TYPE container_memory_total_inactive_file_bytes gauge\n"
    "container_memory_total_inactive_file_bytes{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_memory_total_inactive_file_bytes{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_memory_total_inactive_file_bytes{container=\"app\",id=\"/kubepods/burstable/"
    "poduid-a/c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 500 1700000100250\n"
    "# HELP container_memory_usage_bytes Current memory usage in bytes, including all memory "
    "regardless of when it was accessed\n"
    "# TYPE container_memory_usage_bytes gauge\n"
    "container_memory_usage_bytes{container=\"\",id=\"/"
    "\",image=\"\",name=\"\",namespace=\"\",pod=\"\"} 4e+06 1700000100000\n"
    "container_memory_usage_bytes{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 9000 1700000100000\n"
    "container_memory_usage_bytes{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 4096 1700000100000\n"
    "container_memory_usage_bytes{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 1500 1700000100250\n"
    "# HELP container_memory_working_set_bytes Current working set in bytes.\n"
    "# TYPE container_memory_working_set_bytes gauge\n"
    "container_memory_working_set_bytes{container=\"\",id=\"/"
    "\",image=\"\",name=\"\",namespace=\"\",pod=\"\"} 3.5e+06 1700000100000\n"
    "container_memory_working_set_bytes{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 8000 1700000100000\n"
    "container_memory_working_set_bytes{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_memory_working_set_bytes{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 1000 1700000100250\n"
    "# HELP container_network_receive_bytes_total Cumulative count of bytes received\n"
    "# TYPE container_network_receive_bytes_total counter\n"
    "container_network_receive_bytes_total{container=\"\",id=\"/"
    "\",image=\"\",interface=\"ens3\",name=\"\",namespace=\"\",pod=\"\"} 5 1700000101000\n"
    "container_network_receive_bytes_total{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",interface=\"eth0\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 1000 "
    "1700000100000\n"
    "# HELP container_network_receive_errors_total Cumulative count of errors encountered while "
    "receiving\n"
    "# TYPE container_network_receive_errors_total counter\n"
    "container_network_receive_errors_total{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",interface=\"eth0\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 1 "
    "1700000100000\n"
    "# HELP container_network_receive_packets_dropped_total Cumulative count of packets dropped "
    "while receiving\n"
    "# TYPE container_network_receive_packets_dropped_total counter\n"
    "container_network_receive_packets_dropped_total{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a/"
    "sb-a\",image=\"\",interface=\"eth0\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 3 "
    "1700000100000\n"
    "# HELP container_network_receive_packets_total Cumulative count of packets received\n"
    "# TYPE container_network_receive_packets_total counter\n"
    "container_network_receive_packets_total{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",interface=\"eth0\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 10 "
    "1700000100000\n"
    "# HELP container_network_transmit_bytes_total Cumulative count of bytes transmitted\n"
    "# TYPE container_network_transmit_bytes_total counter\n"
    "container_network_transmit_bytes_total{container=\"\",id=\"/"
    "\",image=\"\",interface=\"ens3\",name=\"\",namespace=\"\",pod=\"\"} 6 1700000101000\n"
    "container_network_transmit_bytes_total{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",interface=\"eth0\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 2000 "
    "1700000100000\n"
    "# HELP container_network_transmit_errors_total Cumulative count of errors encountered while "
    "transmitting\n"
    "# TYPE container_network_transmit_errors_total counter\n"
    "container_network_transmit_errors_total{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",interface=\"eth0\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 2 "
    "1700000100000\n"
    "# HELP container_network_transmit_packets_dropped_total Cumulative count of packets dropped "
    "while transmitting\n"
    "# TYPE container_network_transmit_packets_dropped_total counter\n"
    "container_network_transmit_packets_dropped_total{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a/"
    "sb-a\",image=\"\",interface=\"eth0\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 4 "
    "1700000100000\n"
    "# HELP container_network_transmit_packets_total Cumulative count of packets transmitted\n"
    "# TYPE container_network_transmit_packets_total counter\n"
    "container_network_transmit_packets_total{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",interface=\"eth0\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 20 "
    "1700000100000\n"
    "# HELP container_oom_events_total Count of out of memory events observed for the container\n"
    "# TYPE container_oom_events_total counter\n"
    "container_oom_events_total{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_oom_events_total{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_oom_events_total{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 1 1700000100250\n"
    "# HELP container_pressure_cpu_stalled_seconds_total Total time duration no tasks in the "
    "container could make progress due to CPU congestion.\n"
    "# TYPE container_pressure_cpu_stalled_seconds_total counter\n"
    "container_pressure_cpu_stalled_seconds_total{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_pressure_cpu_stalled_seconds_total{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_pressure_cpu_stalled_seconds_total{container=\"app\",id=\"/kubepods/burstable/"
    "poduid-a/c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 0 1700000100250\n"
    "# HELP container_pressure_cpu_waiting_seconds_total Total time duration tasks in the "
    "container have waited due to CPU congestion.\n"
    "# TYPE container_pressure_cpu_waiting_seconds_total counter\n"
    "container_pressure_cpu_waiting_seconds_total{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_pressure_cpu_waiting_seconds_total{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_pressure_cpu_waiting_seconds_total{container=\"app\",id=\"/kubepods/burstable/"
    "poduid-a/c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 1.5 1700000100250\n"
    "# HELP container_pressure_io_stalled_seconds_total Total time duration no tasks in the "
    "container could make progress due to IO congestion.\n"
    "# TYPE container_pressure_io_stalled_seconds_total counter\n"
    "container_pressure_io_stalled_seconds_total{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_pressure_io_stalled_seconds_total{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_pressure_io_stalled_seconds_total{container=\"app\",id=\"/kubepods/burstable/"
    "poduid-a/c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 0 1700000100250\n"
    "# HELP container_pressure_io_waiting_seconds_total Total time duration tasks in the container "
    "have waited due to IO congestion.\n"
    "# TYPE container_pressure_io_waiting_seconds_total counter\n"
    "container_pressure_io_waiting_seconds_total{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_pressure_io_waiting_seconds_total{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_pressure_io_waiting_seconds_total{container=\"app\",id=\"/kubepods/burstable/"
    "poduid-a/c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 0 1700000100250\n"
    "# HELP container_pressure_memory_stalled_seconds_total Total time duration no tasks in the "
    "container could make progress due to memory congestion.\n"
    "# TYPE container_pressure_memory_stalled_seconds_total counter\n"
    "container_pressure_memory_stalled_seconds_total{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_pressure_memory_stalled_seconds_total{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a/sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_pressure_memory_stalled_seconds_total{container=\"app\",id=\"/kubepods/burstable/"
    "poduid-a/c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 0.00025 1700000100250\n"
    "# HELP container_pressure_memory_waiting_seconds_total Total time duration tasks in the "
    "container have waited due to memory congestion.\n"
    "# TYPE container_pressure_memory_waiting_seconds_total counter\n"
    "container_pressure_memory_waiting_seconds_total{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_pressure_memory_waiting_seconds_total{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a/sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_pressure_memory_waiting_seconds_total{container=\"app\",id=\"/kubepods/burstable/"
    "poduid-a/c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 0 1700000100250\n"
    "# HELP container_processes Number of processes running inside the container.\n"
    "# TYPE container_processes gauge\n"
    "container_processes{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_processes{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_processes{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 2 1700000100250\n"
    "# HELP container_scrape_error 1 if there was an error while getting container metrics, 0 "
    "otherwise\n"
    "# TYPE container_scrape_error gauge\n"
    "container_scrape_error 0\n"
    "# HELP container_sockets Number of open sockets for the container.\n"
    "# TYPE container_sockets gauge\n"
    "container_sockets{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_sockets{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_sockets{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 2 1700000100250\n"
    "# HELP container_spec_cpu_period CPU period of the container.\n"
    "# TYPE container_spec_cpu_period gauge\n"
    "container_spec_cpu_period{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 100000\n"
    "container_spec_cpu_period{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 100000\n"
    "container_spec_cpu_period{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 100000\n"
    "# HELP container_spec_cpu_quota CPU quota of the container.\n"
    "# TYPE container_spec_cpu_quota gauge\n"
    "container_spec_cpu_quota{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 50000\n"
    "# HELP container_spec_cpu_shares CPU share of the container.\n"
    "# TYPE container_spec_cpu_shares gauge\n"
    "container_spec_cpu_shares{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 2\n"
    "container_spec_cpu_shares{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 2\n"
    "container_spec_cpu_shares{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 102\n"
    "# HELP container_spec_memory_limit_bytes Memory limit for the container.\n"
    "# TYPE container_spec_memory_limit_bytes gauge\n"
    "container_spec_memory_limit_bytes{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 1.048576e+06\n"
    "container_spec_memory_limit_bytes{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 0\n"
    "container_spec_memory_limit_bytes{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 6.7108864e+07\n"
    "# HELP container_spec_memory_reservation_limit_bytes Memory reservation limit for the "
    "container.\n"
    "# TYPE container_spec_memory_reservation_limit_bytes gauge\n"
    "container_spec_memory_reservation_limit_bytes{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 0\n"
    "container_spec_memory_reservation_limit_bytes{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a/sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 0\n"
    "container_spec_memory_reservation_limit_bytes{container=\"app\",id=\"/kubepods/burstable/"
    "poduid-a/c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 0\n"
    "# HELP container_spec_memory_swap_limit_bytes Memory swap limit for the container.\n"
    "# TYPE container_spec_memory_swap_limit_bytes gauge\n"
    "container_spec_memory_swap_limit_bytes{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 0\n"
    "container_spec_memory_swap_limit_bytes{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 0\n"
    "container_spec_memory_swap_limit_bytes{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 0\n"
    "# HELP container_start_time_seconds Start time of the container since unix epoch in seconds.\n"
    "# TYPE container_start_time_seconds gauge\n"
    "container_start_time_seconds{container=\"\",id=\"/"
    "\",image=\"\",name=\"\",namespace=\"\",pod=\"\"} 1.7e+09\n"
    "container_start_time_seconds{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 1.7e+09\n"
    "container_start_time_seconds{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 1.7e+09\n"
    "container_start_time_seconds{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 1.70000001e+09\n"
    "# HELP container_tasks_state Number of tasks in given state\n"
    "# TYPE container_tasks_state gauge\n"
    "container_tasks_state{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\",state=\"iowaiting\"} 0 "
    "1700000100000\n"
    "container_tasks_state{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\",state=\"running\"} 0 "
    "1700000100000\n"
    "container_tasks_state{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\",state=\"sleeping\"} 0 "
    "1700000100000\n"
    "container_tasks_state{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\",state=\"stopped\"} 0 "
    "1700000100000\n"
    "container_tasks_state{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\",state=\"uninterruptible\"} "
    "0 1700000100000\n"
    "container_tasks_state{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\",state=\"iowaiting\"} 0 "
    "1700000100000\n"
    "container_tasks_state{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\",state=\"running\"} 0 "
    "1700000100000\n"
    "container_tasks_state{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\",state=\"sleeping\"} 0 "
    "1700000100000\n"
    "container_tasks_state{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\",state=\"stopped\"} 0 "
    "1700000100000\n"
    "container_tasks_state{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\",state=\"uninterruptible\"} "
    "0 1700000100000\n"
    "container_tasks_state{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\",state=\"iowaiting\"} 0 "
    "1700000100250\n"
    "container_tasks_state{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\",state=\"running\"} 0 "
    "1700000100250\n"
    "container_tasks_state{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\",state=\"sleeping\"} 0 "
    "1700000100250\n"
    "container_tasks_state{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\",state=\"stopped\"} 0 "
    "1700000100250\n"
    "container_tasks_state{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\",state=\"uninterruptible\"} 0 "
    "1700000100250\n"
    "# HELP container_threads Number of threads running inside the container\n"
    "# TYPE container_threads gauge\n"
    "container_threads{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_threads{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 1 1700000100000\n"
    "container_threads{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 5 1700000100250\n"
    "# HELP container_threads_max Maximum number of threads allowed inside the container, infinity "
    "if value is zero\n"
    "# TYPE container_threads_max gauge\n"
    "container_threads_max{container=\"\",id=\"/kubepods/burstable/"
    "poduid-a\",image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_threads_max{container=\"\",id=\"/kubepods/burstable/poduid-a/"
    "sb-a\",image=\"\",name=\"sb-a\",namespace=\"default\",pod=\"web\"} 0 1700000100000\n"
    "container_threads_max{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\"} 1024 1700000100250\n"
    "# HELP container_ulimits_soft Soft ulimit values for the container root process. Unlimited if "
    "-1, except priority and nice\n"
    "# TYPE container_ulimits_soft gauge\n"
    "container_ulimits_soft{container=\"app\",id=\"/kubepods/burstable/poduid-a/"
    "c-a1\",image=\"docker.io/library/"
    "nginx:1.25\",name=\"c-a1\",namespace=\"default\",pod=\"web\",ulimit=\"max_open_files\"} "
    "1.048576e+06 1700000100250\n"
    "# HELP machine_cpu_cores Number of logical CPU cores.\n"
    "# TYPE machine_cpu_cores gauge\n"
    "machine_cpu_cores{boot_id=\"boot-1\",machine_id=\"machine-1\",system_uuid=\"uuid-1\"} 4 "
    "1700000100000\n"
    "# HELP machine_cpu_physical_cores Number of physical CPU cores.\n"
    "# TYPE machine_cpu_physical_cores gauge\n"
    "machine_cpu_physical_cores{boot_id=\"boot-1\",machine_id=\"machine-1\",system_uuid=\"uuid-1\"}"
    " 2 1700000100000\n"
    "# HELP machine_cpu_sockets Number of CPU sockets.\n"
    "# TYPE machine_cpu_sockets gauge\n"
    "machine_cpu_sockets{boot_id=\"boot-1\",machine_id=\"machine-1\",system_uuid=\"uuid-1\"} 1 "
    "1700000100000\n"
    "# HELP machine_memory_bytes Amount of memory installed on the machine.\n"
    "# TYPE machine_memory_bytes gauge\n"
    "machine_memory_bytes{boot_id=\"boot-1\",machine_id=\"machine-1\",system_uuid=\"uuid-1\"} "
    "8.192e+09 1700000100000\n"
    "# HELP machine_nvm_avg_power_budget_watts NVM power budget.\n"
    "# TYPE machine_nvm_avg_power_budget_watts gauge\n"
    "machine_nvm_avg_power_budget_watts{boot_id=\"boot-1\",machine_id=\"machine-1\",system_uuid="
    "\"uuid-1\"} 0 1700000100000\n"
    "# HELP machine_nvm_capacity NVM capacity value labeled by NVM mode (memory mode or app direct "
    "mode).\n"
    "# TYPE machine_nvm_capacity gauge\n"
    "machine_nvm_capacity{boot_id=\"boot-1\",machine_id=\"machine-1\",mode=\"app_direct_mode\","
    "system_uuid=\"uuid-1\"} 0 1700000100000\n"
    "machine_nvm_capacity{boot_id=\"boot-1\",machine_id=\"machine-1\",mode=\"memory_mode\",system_"
    "uuid=\"uuid-1\"} 0 1700000100000\n"
    "# HELP machine_scrape_error 1 if there was an error while getting machine metrics, 0 "
    "otherwise.\n"
    "# TYPE machine_scrape_error gauge\n"
    "machine_scrape_error 0\n"
    "# HELP machine_swap_bytes Amount of swap memory available on the machine.\n"
    "# TYPE machine_swap_bytes gauge\n"
    "machine_swap_bytes{boot_id=\"boot-1\",machine_id=\"machine-1\",system_uuid=\"uuid-1\"} "
    "1.024e+06 1700000100000\n";

static void test_text(void **state)
{
        struct fixture *f = *state;
        install_snapshot(f, fixed_snapshot());
        struct stats_cadvisor_machine m = fixed_machine();
        cleanup_free char *text = render(f, &m);
        if (strcmp(text, expected_text) != 0) {
                FILE *out = fopen("/tmp/ck-cadvisor-got.txt", "w");
                if (out) {
                        fputs(text, out);
                        fclose(out);
                }
        }
        assert_string_equal(text, expected_text);

        /* a registry holds the families once */
        struct metrics_registry *r = metrics_registry_new();
        ck_error_t err = NULL;
        assert_int_equal(stats__register_cadvisor_metrics(r, f->p, &m, &err), 0);
        assert_true(stats__register_cadvisor_metrics(r, f->p, &m, &err) < 0);
        assert_non_null(strstr(err->msg, "cadvisor metrics"));
        ck_error_release(&err);
        metrics_registry_free(r);
}

/* Every family served: its HELP and TYPE as cAdvisor declares them. */
static void test_help_and_type(void **state)
{
        struct fixture *f = *state;
        install_snapshot(f, with_disks(fixed_snapshot()));
        struct stats_cadvisor_machine m = fixed_machine();
        cleanup_free char *text = render(f, &m);
        size_t families = 0;
        for (const char *p = strstr(text, "# HELP "); p; p = strstr(p + 1, "# HELP "))
                families++;
        assert_int_equal(families, sizeof(upstream) / sizeof(upstream[0]));
        for (size_t i = 0; i < sizeof(upstream) / sizeof(upstream[0]); i++) {
                cleanup_free char *want =
                    xasprintf("# HELP %s %s\n# TYPE %s %s\n", upstream[i].name, upstream[i].help,
                              upstream[i].name, upstream[i].type);
                if (strstr(text, want) == NULL)
                        fail_msg("missing or different:\n%s", want);
        }
}

/* A failed listing: cAdvisor's "Couldn't get containers", the machine
 * collector unaffected. */
static void test_scrape_error(void **state)
{
        struct fixture *f = *state;
        struct stats_snapshot *s = fixed_snapshot();
        s->pods_error = xstrdup("failed to list pod stats: boom");
        install_snapshot(f, s);
        struct stats_cadvisor_machine m = fixed_machine();
        cleanup_free char *text = render(f, &m);
        assert_non_null(strstr(text, "\ncontainer_scrape_error 1\n"));
        assert_null(strstr(text, "\ncontainer_cpu"));
        assert_null(strstr(text, "\ncontainer_start_time_seconds{"));
        assert_non_null(strstr(text, "\nmachine_scrape_error 0\n"));
        assert_non_null(strstr(text, "machine_cpu_cores{boot_id=\"boot-1\""));
}

/* The public entry point reads the machine facts under the provider's
 * /proc, and cAdvisor's core and socket counts. */
static void test_machine_facts(void **state)
{
        struct fixture *f = *state;
        int64_t cores = -1, sockets = -1;
        stats__parse_cpuinfo_counts("processor\t: 0\nphysical id\t: 0\ncore id\t\t: 0\n"
                                    "processor\t: 1\nphysical id\t: 0\ncore id\t\t: 1\n"
                                    "processor\t: 2\nphysical id\t: 1\ncore id\t\t: 0\n"
                                    "processor\t: 3\nphysical id\t: 1\ncore id\t\t: 1\n"
                                    "core id: x\n",
                                    &cores, &sockets);
        /* cAdvisor counts distinct lines: the second socket's cores repeat */
        assert_int_equal(cores, 2);
        assert_int_equal(sockets, 2);
        stats__parse_cpuinfo_counts("processor : 0\n", &cores, &sockets);
        assert_int_equal(cores, 0);
        assert_int_equal(sockets, 0);

        /* no "core id" in cpuinfo (arm64): the sysfs topology */
        write_file(f->proc, "cpuinfo", "processor\t: 0\nBogoMIPS\t: 50.00\n");
        const char *topo[][3] = {{"cpu0", "0", "0"}, {"cpu1", "1", "0"}, {"cpu2", "0", "0"}};
        for (size_t i = 0; i < 3; i++) {
                cleanup_free char *c =
                    xasprintf("devices/system/cpu/%s/topology/core_id", topo[i][0]);
                cleanup_free char *p =
                    xasprintf("devices/system/cpu/%s/topology/physical_package_id", topo[i][0]);
                write_file(f->sys, c, topo[i][1]);
                write_file(f->sys, p, topo[i][2]);
        }
        write_file(f->sys, "devices/system/cpu/online", "0-2\n");
        write_file(f->sys, "class/dmi/id/product_uuid", "uuid-9\n");
        struct stats_cadvisor_machine m;
        stats__cadvisor_machine_read(f->proc, f->sys, f->base, f->base, 42 * SEC, &m);
        assert_int_equal(m.physical_cores, 2);
        assert_int_equal(m.sockets, 1);
        assert_int_equal(m.info.num_cores, 3);
        assert_int_equal(m.info.memory_capacity, 8192000000ll);
        assert_int_equal(m.time_ns, 42 * SEC);
        assert_string_equal(m.info.system_uuid, "uuid-9");

        install_snapshot(f, fixed_snapshot());
        cleanup_free char *text = render(f, NULL);
        /* the provider's clock: the machine facts' time */
        assert_non_null(strstr(text, "machine_memory_bytes{boot_id=\"boot-1\",machine_id=\""));
        assert_non_null(strstr(text, "} 8.192e+09 1700000103500\n"));
}

/* The cgroup files cAdvisor reads beyond the summary's (v2). */
static void test_cgroup_extras_v2(void **state)
{
        struct fixture *f = *state;
        const char *cg = "kubepods/burstable/poduid-a/c-a1";
        const char *files[][2] = {
            {"cpu.stat", "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n"
                         "nr_periods 40\nnr_throttled 4\nthrottled_usec 1500\n"},
            {"cpu.max", "50000 100000\n"},
            {"cpu.weight", "4\n"},
            {"memory.current", "1500\n"},
            {"memory.stat", "anon 800\nfile 700\nfile_mapped 100\nactive_file 300\n"
                            "inactive_file 500\npgfault 10\npgmajfault 1\n"},
            {"memory.max", "67108864\n"},
            {"memory.min", "0\n"},
            {"memory.peak", "2048\n"},
            {"memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n"},
            {"memory.swap.current", "16\n"},
            {"memory.swap.max", "max\n"},
            {"pids.current", "5\n"},
            {"pids.max", "max\n"},
            {"cgroup.procs", "100\n101\n"},
        };
        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
                cleanup_free char *rel = xasprintf("%s/%s", cg, files[i][0]);
                write_file(f->cg, rel, files[i][1]);
        }
        struct stats_cgroupfs fs;
        stats__cgroupfs_init(&fs, f->cg);
        assert_true(fs.v2);
        struct stats_cgroup_sample s;
        assert_true(stats__cgroup_read(&fs, "/kubepods/burstable/poduid-a/c-a1", f->proc, &s));
        stats__cgroupfs_clear(&fs);
        assert_int_equal(s.cpu_usage_ns, 2500000000ull);
        assert_int_equal(s.cpu_user_ns, 2000000000ull);
        assert_int_equal(s.cpu_system_ns, 500000000ull);
        assert_int_equal(s.cfs_periods, 40);
        assert_int_equal(s.cfs_throttled_periods, 4);
        assert_int_equal(s.cfs_throttled_ns, 1500000);
        assert_int_equal(s.cache, 700);
        assert_int_equal(s.mapped_file, 100);
        assert_int_equal(s.active_file, 300);
        assert_int_equal(s.inactive_file, 500);
        assert_int_equal(s.failcnt, 0);
        assert_int_equal(s.max_usage, 2048);
        assert_int_equal(s.oom_kills, 1);
        assert_true(s.has_cpu_spec);
        assert_int_equal(s.spec_cpu_quota, 50000);
        assert_int_equal(s.spec_cpu_period, 100000);
        /* convertCPUWeightToCPULimit(4) */
        assert_int_equal(s.spec_cpu_shares, 2 + (3 * 262142) / 9999);
        assert_true(s.has_memory_spec);
        assert_int_equal(s.spec_memory_limit, 67108864);
        assert_true(s.spec_swap_limit == UINT64_MAX);
        assert_int_equal(s.spec_memory_reservation, 0);
        assert_int_equal(s.threads, 5);
        assert_int_equal(s.threads_max, 0);
        assert_int_equal(s.processes, 2);

        /* no quota: "max 100000" */
        struct stats_cgroup_files fl = {
            .cpu_stat = "usage_usec 1\n", .cpu_max = "max 100000\n", .memory_usage = "10\n"};
        stats__cgroup_sample_parse(true, false, &fl, &s);
        assert_int_equal(s.spec_cpu_quota, 0);
        assert_int_equal(s.spec_cpu_period, 100000);
        assert_int_equal(s.spec_cpu_shares, 0);
        assert_false(s.has_memory_spec); /* no memory.max */
}

/* cgroup v1's files for the same readings. */
static void test_cgroup_extras_v1(void **state)
{
        (void)state;
        struct stats_cgroup_files f = {
            .cpuacct_usage = "2500000000\n",
            .cpuacct_stat = "user 200\nsystem 50\n",
            .cpu_shares = "102\n",
            .cfs_period = "100000\n",
            .cfs_quota = "-1\n",
            .memory_usage = "1500\n",
            .memory_limit = "9223372036854771712\n",
            .memory_stat = "total_rss 800\ntotal_cache 700\ntotal_mapped_file 100\n"
                           "total_active_file 300\ntotal_inactive_file 500\n",
            .memory_failcnt = "7\n",
            .memory_peak = "4096\n",
            .memory_min = "9223372036854771712\n",
        };
        struct stats_cgroup_sample s;
        stats__cgroup_sample_parse(false, false, &f, &s);
        assert_int_equal(s.cpu_user_ns, 2 * SEC);
        assert_int_equal(s.cpu_system_ns, SEC / 2);
        assert_int_equal(s.cache, 700);
        assert_int_equal(s.mapped_file, 100);
        assert_int_equal(s.failcnt, 7);
        assert_int_equal(s.max_usage, 4096);
        assert_true(s.has_cpu_spec);
        assert_int_equal(s.spec_cpu_shares, 102);
        assert_int_equal(s.spec_cpu_period, 100000);
        assert_int_equal(s.spec_cpu_quota, 0);
        assert_true(s.has_memory_spec);
        assert_int_equal(s.spec_memory_limit, 9223372036854771712ull);
}

/* /proc/<pid>/net/dev's packet and drop counters (cAdvisor's). */
static void test_net_dev_packets(void **state)
{
        (void)state;
        struct stats_iface *v;
        size_t n;
        assert_int_equal(
            stats__parse_net_dev("h1\nh2\n  eth0: 900 9 1 3 0 0 0 0 800 8 2 4 0 0 0 0\n", &v, &n),
            0);
        assert_int_equal(n, 1);
        assert_int_equal(v[0].rx_packets.v, 9);
        assert_int_equal(v[0].rx_dropped.v, 3);
        assert_int_equal(v[0].tx_packets.v, 8);
        assert_int_equal(v[0].tx_dropped.v, 4);
        assert_int_equal(v[0].rx_errors.v, 1);
        assert_int_equal(v[0].tx_errors.v, 2);
        free(v[0].name);
        free(v);
}

/* The DiskIO and DiskUsage families: a container's io.stat per device
 * (named from the disk map, "" when unknown), the root's blkio table and
 * its filesystem (statfs and diskstats, cAdvisor's ms / 1e9 times). */
static void test_disk_io(void **state)
{
        struct fixture *f = *state;
        install_snapshot(f, with_disks(fixed_snapshot()));
        struct stats_cadvisor_machine m = fixed_machine();
        cleanup_free char *text = render(f, &m);
        static const char *const want[] = {
            "container_fs_reads_bytes_total{container=\"app\",device=\"/dev/vda\",id=\"/kubepods/"
            "burstable/poduid-a/c-a1\",image=\"docker.io/library/nginx:1.25\",name=\"c-a1\","
            "namespace=\"default\",pod=\"web\"} 512 1700000100250\n",
            "container_fs_reads_bytes_total{container=\"app\",device=\"\",id=\"/kubepods/"
            "burstable/poduid-a/c-a1\",image=\"docker.io/library/nginx:1.25\",name=\"c-a1\","
            "namespace=\"default\",pod=\"web\"} 5 1700000100250\n",
            "container_fs_writes_total{container=\"app\",device=\"/dev/vda\",id=\"/kubepods/"
            "burstable/poduid-a/c-a1\",image=\"docker.io/library/nginx:1.25\",name=\"c-a1\","
            "namespace=\"default\",pod=\"web\"} 4 1700000100250\n",
            "container_blkio_device_usage_total{container=\"app\",device=\"/dev/vda\",id=\"/"
            "kubepods/burstable/poduid-a/c-a1\",image=\"docker.io/library/nginx:1.25\",major="
            "\"253\",minor=\"0\",name=\"c-a1\",namespace=\"default\",operation=\"Write\","
            "pod=\"web\"} 1024 1700000100250\n",
            /* the root: its blkio table, then its filesystem */
            "container_fs_reads_total{container=\"\",device=\"\",id=\"/\",image=\"\","
            "name=\"\",namespace=\"\",pod=\"\"} 1 1700000100000\n",
            "container_fs_reads_total{container=\"\",device=\"/dev/vda\",id=\"/\",image=\"\","
            "name=\"\",namespace=\"\",pod=\"\"} 10 1700000100000\n",
            "container_blkio_device_usage_total{container=\"\",device=\"\",id=\"/\","
            "image=\"\",major=\"8\",minor=\"0\",name=\"\",namespace=\"\",operation="
            "\"Async\",pod=\"\"} 12288 1700000100000\n",
            "container_fs_usage_bytes{container=\"\",device=\"/dev/vda\",id=\"/\",image=\"\","
            "name=\"\",namespace=\"\",pod=\"\"} 400000 1700000100000\n",
            "container_fs_limit_bytes{container=\"\",device=\"/dev/vda\",id=\"/\",image=\"\","
            "name=\"\",namespace=\"\",pod=\"\"} 1e+06 1700000100000\n",
            "container_fs_inodes_free{container=\"\",device=\"/dev/vda\",id=\"/\",image=\"\","
            "name=\"\",namespace=\"\",pod=\"\"} 60 1700000100000\n",
            "container_fs_sector_writes_total{container=\"\",device=\"/dev/vda\",id=\"/\","
            "image=\"\",name=\"\",namespace=\"\",pod=\"\"} 160 1700000100000\n",
            "container_fs_read_seconds_total{container=\"\",device=\"/dev/vda\",id=\"/\","
            "image=\"\",name=\"\",namespace=\"\",pod=\"\"} 1.5e-06 1700000100000\n",
            "container_fs_io_time_weighted_seconds_total{container=\"\",device=\"/dev/vda\","
            "id=\"/\",image=\"\",name=\"\",namespace=\"\",pod=\"\"} 4e-06 1700000100000\n",
        };
        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
                if (strstr(text, want[i]) == NULL)
                        fail_msg("missing:\n%s", want[i]);
        /* no merged table in blkio: the root filesystem's value alone */
        assert_null(strstr(text, "container_fs_reads_merged_total{container=\"\",device=\"\""));
        assert_non_null(strstr(text, "container_fs_reads_merged_total{container=\"\",device=\"/dev/"
                                     "vda\",id=\"/\",image=\"\",name=\"\",namespace=\"\",pod="
                                     "\"\"} 1 1700000100000\n"));
        /* a v2 table has Read and Write only */
        assert_null(strstr(text, "operation=\"Sync\",pod=\"web\""));
}

/* The blkio tables as runc parses them. */
static void test_blkio_parse(void **state)
{
        (void)state;
        struct stats_blkio b;
        stats__blkio_parse_v1("8:0 Read 100\n8:0 Write 200\nbad line\n8:0 Bogus 5\n8:16 Read 7\n"
                              "Total 307\n",
                              "8:0 Read 1\n8:0 Write x\n", &b);
        assert_int_equal(b.n, 2);
        assert_int_equal(b.devs[0].major, 8);
        assert_int_equal(b.devs[0].minor, 0);
        assert_true(b.devs[0].in_bytes && b.devs[0].in_ios);
        assert_int_equal(b.devs[0].bytes[STATS_BLKIO_READ], 100);
        assert_int_equal(b.devs[0].bytes[STATS_BLKIO_WRITE], 200);
        assert_false(b.devs[0].has_bytes[STATS_BLKIO_SYNC]);
        assert_int_equal(b.devs[0].ios[STATS_BLKIO_READ], 1);
        assert_false(b.devs[0].has_ios[STATS_BLKIO_WRITE]); /* "x" */
        assert_true(b.devs[1].in_bytes);
        assert_false(b.devs[1].in_ios);
        stats__blkio_clear(&b);

        stats__blkio_parse_v2("259:0 rbytes=10 wbytes=20 rios=1 wios=2 dbytes=9 dios=1\n"
                              "259:1 junk rbytes= wios=5\n\n8:a rbytes=1\n",
                              &b);
        assert_int_equal(b.n, 2);
        assert_int_equal(b.devs[0].bytes[STATS_BLKIO_READ], 10);
        assert_int_equal(b.devs[0].bytes[STATS_BLKIO_WRITE], 20);
        assert_int_equal(b.devs[0].ios[STATS_BLKIO_WRITE], 2);
        assert_false(b.devs[0].has_bytes[STATS_BLKIO_DISCARD]);
        assert_false(b.devs[1].in_bytes);
        assert_int_equal(b.devs[1].ios[STATS_BLKIO_WRITE], 5);
        stats__blkio_clear(&b);

        stats__blkio_parse_v1(NULL, NULL, &b);
        assert_int_equal(b.n, 0);
}

/* runc's v1 table order: the bfq table lists nothing ("Total 0"), the
 * throttle one does. */
static void test_cgroup_blkio_v1(void **state)
{
        struct fixture *f = *state;
        cleanup_free char *v1 = xasprintf("%s/v1", f->base);
        write_file(v1, "blkio/kubepods/pod1/blkio.bfq.io_serviced_recursive", "Total 0\n");
        write_file(v1, "blkio/kubepods/pod1/blkio.bfq.io_service_bytes_recursive", "Total 0\n");
        write_file(v1, "blkio/kubepods/pod1/blkio.throttle.io_serviced_recursive",
                   "253:0 Read 3\n253:0 Write 4\nTotal 7\n");
        write_file(v1, "blkio/kubepods/pod1/blkio.throttle.io_service_bytes_recursive",
                   "253:0 Read 300\n253:0 Write 400\nTotal 700\n");
        struct stats_cgroupfs fs;
        stats__cgroupfs_init(&fs, v1);
        assert_false(fs.v2);
        struct stats_blkio b;
        stats__cgroup_blkio(&fs, "/kubepods/pod1", &b);
        assert_int_equal(b.n, 1);
        assert_int_equal(b.devs[0].bytes[STATS_BLKIO_WRITE], 400);
        assert_int_equal(b.devs[0].ios[STATS_BLKIO_READ], 3);
        stats__blkio_clear(&b);
        stats__cgroup_blkio(&fs, "/kubepods/none", &b);
        assert_int_equal(b.n, 0);
        stats__cgroupfs_clear(&fs);
}

/* fsInfo's partitions: supported types, one per source (bind mounts
 * skipped), tmpfs by mount point, overlay by source and device number,
 * escaped mount points. */
static void test_partitions(void **state)
{
        (void)state;
        static const char mountinfo[] =
            "22 27 0:21 / /proc rw,relatime - proc proc rw\n"
            "27 1 253:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
            "30 27 253:0 /var/lib/x /mnt/bind rw - ext4 /dev/vda rw\n"
            "31 27 0:40 / /run/my\\040dir rw master:2 - tmpfs tmpfs rw\n"
            "32 27 0:41 / /var/lib/kubelet/pods/u/volumes/kubernetes.io~projected/t rw - tmpfs "
            "tmpfs rw\n"
            "33 27 0:50 / /var/lib/containerd/rootfs rw - overlay overlay rw,lowerdir=/a\n"
            "34 27 0:51 / /data rw - xfs /dev/vdb1 rw\n"
            "35 27 0:52 / /nfs rw - nfs4 server:/export rw\n"
            "36 27 0:53 / /broken rw no-dash-here\n";
        struct stats_partition *p;
        size_t n = stats__parse_partitions(mountinfo, &p);
        assert_int_equal(n, 6);
        assert_string_equal(p[0].device, "/dev/vda");
        assert_string_equal(p[0].mountpoint, "/");
        assert_int_equal(p[0].major, 253);
        assert_string_equal(p[1].device, "/run/my dir");
        assert_string_equal(p[1].mountpoint, "/run/my dir");
        assert_string_equal(p[3].device, "overlay_0-50");
        assert_string_equal(p[4].device, "/dev/vdb1");
        assert_string_equal(p[5].device, "server:/export");
        stats__partitions_free(p, n);
        assert_int_equal(stats__parse_partitions(NULL, &p), 0);
        assert_null(p);
}

/* /proc/diskstats as cAdvisor reads it: by name, sd/vd/xvd/dm- only, all
 * 11 columns. */
static void test_diskstats(void **state)
{
        (void)state;
        static const char text[] =
            "   7       0 loop0 1 2 3 4 5 6 7 8 9 10 11\n"
            " 253       0 vda 10 1 80 1500 20 2 160 2500 1 3000 4000 0 0 0 0\n"
            " 253      16 vdb 1 2 3\n"
            " 252       0 dm-0 5 0 0 0 0 0 0 0 0 0 0\n"
            " 259       0 nvme0n1 5 0 0 0 0 0 0 0 0 0 0\n";
        struct stats_root_fs fs = {0};
        assert_true(stats__parse_diskstats(text, "/dev/vda", 1, 1, &fs));
        assert_int_equal(fs.reads, 10);
        assert_int_equal(fs.sectors_written, 160);
        assert_int_equal(fs.io_in_progress, 1);
        assert_int_equal(fs.weighted_io_ms, 4000);
        assert_false(stats__parse_diskstats(text, "/dev/vdb", 1, 1, &fs));   /* short */
        assert_false(stats__parse_diskstats(text, "/dev/loop0", 1, 1, &fs)); /* not a disk name */
        assert_false(stats__parse_diskstats(text, "/dev/nvme0n1", 259, 0, &fs));
        assert_false(stats__parse_diskstats(text, "tmpfs", 0, 40, &fs));
        memset(&fs, 0, sizeof(fs));
        assert_true(stats__parse_diskstats(text, "/dev/dm-0", 1, 1, &fs));
        assert_int_equal(fs.reads, 5);
        /* no line of that name (an LVM volume's): the device number's */
        memset(&fs, 0, sizeof(fs));
        assert_true(stats__parse_diskstats(text, "/dev/mapper/vg-root", 252, 0, &fs));
        assert_int_equal(fs.reads, 5);
        /* ...among the lines cAdvisor reads only (loop0 is 7:0) */
        assert_false(stats__parse_diskstats(text, "/dev/root", 7, 0, &fs));
}

/* MachineInfo.DiskMap: <sys>/block but loop, ram, sr and hidden devices. */
static void test_disks(void **state)
{
        struct fixture *f = *state;
        write_file(f->sys, "block/loop0/dev", "7:0\n");
        write_file(f->sys, "block/ram0/dev", "1:0\n");
        write_file(f->sys, "block/sr0/dev", "11:0\n");
        write_file(f->sys, "block/nvme0c0n1/dev", "259:9\n");
        write_file(f->sys, "block/nvme0c0n1/hidden", "1\n");
        write_file(f->sys, "block/nvme0n1/dev", "259:0\n");
        write_file(f->sys, "block/nvme0n1/hidden", "0\n");
        write_file(f->sys, "block/bad/dev", "x\n");
        struct stats_disk *d;
        size_t n = stats__disks_read(f->sys, &d);
        assert_int_equal(n, 2); /* vda (setup) and nvme0n1 */
        assert_string_equal(stats__disk_name(d, n, 253, 0), "/dev/vda");
        assert_string_equal(stats__disk_name(d, n, 259, 0), "/dev/nvme0n1");
        assert_string_equal(stats__disk_name(d, n, 259, 9), "");
        assert_string_equal(stats__disk_name(d, n, 7, 0), "");
        stats__disks_free(d, n);
}

/* processStatsFromProcs: the fds of the cgroup's processes, the sockets
 * among them; the soft "Max open files" of /proc/<pid>/limits. */
static void test_process_fds(void **state)
{
        struct fixture *f = *state;
        write_file(f->cg, "kubepods/pod1/c1/cgroup.procs", "100\n101\n102\n");
        write_file(f->cg, "kubepods/pod1/c1/memory.current", "10\n");
        write_file(f->proc, "100/fd/.keep", "");
        write_file(f->proc, "101/fd/.keep", "");
        const char *links[][2] = {{"100/fd/0", "/dev/null"},
                                  {"100/fd/1", "socket:[123]"},
                                  {"100/fd/2", "pipe:[9]"},
                                  {"101/fd/3", "socket:[124]"}};
        for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
                cleanup_free char *path = xasprintf("%s/%s", f->proc, links[i][0]);
                assert_int_equal(symlink(links[i][1], path), 0);
        }
        struct stats_cgroupfs fs;
        stats__cgroupfs_init(&fs, f->cg);
        struct stats_cgroup_sample s;
        assert_true(stats__cgroup_read(&fs, "/kubepods/pod1/c1", f->proc, &s));
        assert_int_equal(s.fds, 0); /* for the cAdvisor views only */
        int64_t first_pid;
        stats__cgroup_fds(&fs, "/kubepods/pod1/c1", f->proc, &s.fds, &s.sockets, &first_pid);
        assert_int_equal(first_pid, 100);
        stats__cgroupfs_clear(&fs);
        assert_int_equal(s.processes, 3); /* 102 has no /proc entry: no fds */
        assert_int_equal(s.fds, 4);
        assert_int_equal(s.sockets, 2);

        int64_t v = 0;
        assert_true(stats__parse_nofile_soft(
            "Limit                     Soft Limit           Hard Limit           Units\n"
            "Max processes             63382                63382                processes\n"
            "Max open files            1024                 524288               files\n",
            &v));
        assert_int_equal(v, 1024);
        assert_true(stats__parse_nofile_soft("Max open files unlimited unlimited files\n", &v));
        assert_int_equal(v, -1);
        assert_false(stats__parse_nofile_soft("Max open files 1024 files\n", &v));
        assert_false(stats__parse_nofile_soft("Max open files 1024 lots files\n", &v));
        assert_false(stats__parse_nofile_soft("Max processes 1 1 processes\n", &v));
        assert_false(stats__parse_nofile_soft(NULL, &v));
}

/* A raw cgroup of the kubelet's cgroupRoots (here the burstable QoS
 * class): id its name, every other label empty, its creation time. */
static void test_raw_cgroup(void **state)
{
        struct fixture *f = *state;
        struct stats_snapshot *s = fixed_snapshot();
        s->n_raw = 1;
        s->raw = xcalloc(1, sizeof(*s->raw));
        s->raw[0].view = view("/kubepods/burstable", T0);
        s->raw[0].view.s.working_set = 12345;
        s->raw[0].start_ns = T0 - 500 * SEC;
        install_snapshot(f, s);
        struct stats_cadvisor_machine m = fixed_machine();
        cleanup_free char *text = render(f, &m);
        assert_non_null(strstr(text, "container_memory_working_set_bytes{container=\"\",id=\"/"
                                     "kubepods/burstable\",image=\"\",name=\"\",namespace=\"\","
                                     "pod=\"\"} 12345 1700000100000\n"));
        assert_non_null(strstr(text, "container_start_time_seconds{container=\"\",id=\"/kubepods/"
                                     "burstable\",image=\"\",name=\"\",namespace=\"\",pod=\"\"} "
                                     "1.6999996e+09\n"));
        /* not a runtime container: no ulimits */
        assert_null(
            strstr(text, "container_ulimits_soft{container=\"\",id=\"/kubepods/burstable\""));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_text, setup, teardown),
            cmocka_unit_test_setup_teardown(test_help_and_type, setup, teardown),
            cmocka_unit_test_setup_teardown(test_scrape_error, setup, teardown),
            cmocka_unit_test_setup_teardown(test_machine_facts, setup, teardown),
            cmocka_unit_test_setup_teardown(test_cgroup_extras_v2, setup, teardown),
            cmocka_unit_test(test_cgroup_extras_v1),
            cmocka_unit_test(test_net_dev_packets),
            cmocka_unit_test_setup_teardown(test_disk_io, setup, teardown),
            cmocka_unit_test(test_blkio_parse),
            cmocka_unit_test_setup_teardown(test_cgroup_blkio_v1, setup, teardown),
            cmocka_unit_test(test_partitions),
            cmocka_unit_test(test_diskstats),
            cmocka_unit_test_setup_teardown(test_disks, setup, teardown),
            cmocka_unit_test_setup_teardown(test_process_fds, setup, teardown),
            cmocka_unit_test_setup_teardown(test_raw_cgroup, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
