/* SPDX-License-Identifier: Apache-2.0 */
/* The stats provider (src/stats): the pure parsers of /proc and cgroup files
 * from fixture text, usageNanoCores from two cumulative samples, disk usage,
 * the machine facts, and the provider end to end against a fake runtime
 * (fake_grpc_server.h) over fixture /proc, cgroupfs, root and log trees
 * with a fake clock: the Summary's shape and values (both views, the
 * ListPodSandboxStats and ListContainerStats paths, what the cgroups fill
 * in), the errors, the snapshot cache (no runtime call within the
 * interval, one refresh for many concurrent callers) and the exact
 * /metrics/resource text of a fixed snapshot. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cri/cri.h"
#include "grpc/grpc.h"
#include "fake_grpc_server.h"
#include "metrics/metrics.h"
#include "stats/stats.h"
#include "stats/stats_internal.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SEC 1000000000ll
#define BTIME 1700000000ll      /* 2023-11-14T22:13:20Z */
#define T0 (1700000100ll * SEC) /* 2023-11-14T22:15:00Z */
#define MONO0 (1000ll * SEC)
#define INTERVAL_MS 10000

/* ---- Pure parsers ----------------------------------------------------------- */

static const char meminfo[] = "MemTotal:        8000000 kB\n"
                              "MemFree:         2000000 kB\n"
                              "MemAvailable:    5000000 kB\n"
                              "Buffers:          100000 kB\n"
                              "Cached:          3000000 kB\n"
                              "Active(file):    1000000 kB\n"
                              "Inactive(file):  1500000 kB\n"
                              "AnonPages:       2500000 kB\n"
                              "SwapTotal:       1000000 kB\n"
                              "SwapFree:         600000 kB\n"
                              "HugePages_Total:       0\n";

static void test_parse_meminfo(void **state)
{
        (void)state;
        struct stats_meminfo mi;
        stats__parse_meminfo(meminfo, &mi);
        assert_true(mi.has_total && mi.has_free && mi.has_swap_total && mi.has_swap_free);
        assert_int_equal(mi.total, 8000000ull * 1024);
        assert_int_equal(mi.free, 2000000ull * 1024);
        assert_int_equal(mi.available, 5000000ull * 1024);
        assert_int_equal(mi.inactive_file, 1500000ull * 1024);
        assert_int_equal(mi.anon, 2500000ull * 1024);
        assert_int_equal(mi.swap_total - mi.swap_free, 400000ull * 1024);

        stats__parse_meminfo("MemFree: x kB\nSwapTotal: 12\n", &mi);
        assert_false(mi.has_total || mi.has_free);
        assert_true(mi.has_swap_total);
        assert_int_equal(mi.swap_total, 12); /* no unit: as written */
}

static void test_parse_proc_stat(void **state)
{
        (void)state;
        struct stats_proc_stat ps;
        stats__parse_proc_stat("cpu  100 20 30 4000 50 6 7 8 9 10\n"
                               "cpu0 50 10 15 2000 25 3 3 4 0 0\n"
                               "intr 12345\nbtime 1700000000\nprocesses 99\n",
                               &ps);
        assert_true(ps.has_cpu && ps.has_btime);
        assert_int_equal(ps.btime, BTIME);
        assert_int_equal(ps.user, 100);
        assert_int_equal(ps.steal, 8);
        /* user + nice + system + irq + softirq + steal, 10 ms a tick */
        assert_int_equal(stats__proc_stat_busy_ns(&ps, 100), 171ull * 10000000);

        stats__parse_proc_stat("cpu0 1 2 3 4\n", &ps);
        assert_false(ps.has_cpu || ps.has_btime);
}

static void test_parse_keyed_and_uint(void **state)
{
        (void)state;
        const char *ms = "anon 100\nfile 200\nanon_thp 5\ninactive_file 50\n";
        uint64_t v = 0;
        assert_true(stats__parse_keyed(ms, "anon", &v));
        assert_int_equal(v, 100);
        assert_true(stats__parse_keyed(ms, "inactive_file", &v));
        assert_int_equal(v, 50);
        assert_false(stats__parse_keyed(ms, "active_file", &v));
        assert_false(stats__parse_keyed("anon x\n", "anon", &v));

        assert_true(stats__parse_uint("4096\n", &v));
        assert_int_equal(v, 4096);
        assert_true(stats__parse_uint("max\n", &v));
        assert_true(v == UINT64_MAX);
        assert_false(stats__parse_uint("12a\n", &v));
        assert_false(stats__parse_uint("", &v));
        assert_false(stats__parse_uint("99999999999999999999", &v)); /* overflows */
        assert_false(stats__parse_uint(NULL, &v));
}

static void test_parse_psi(void **state)
{
        (void)state;
        struct stats_psi psi;
        assert_true(stats__parse_psi("some avg10=1.50 avg60=0.25 avg300=0.00 total=12345\n"
                                     "full avg10=0.10 avg60=0.00 avg300=0.00 total=99\n",
                                     &psi));
        assert_true(psi.ok);
        assert_int_equal(psi.some.total, 12345);
        assert_true(psi.some.avg10 == 1.5 && psi.some.avg60 == 0.25);
        assert_int_equal(psi.full.total, 99);
        assert_true(psi.full.avg10 == 0.1);
        /* cpu.pressure of old kernels has no "full" line */
        assert_true(stats__parse_psi("some avg10=0.00 avg60=0.00 avg300=0.00 total=1\n", &psi));
        assert_int_equal(psi.full.total, 0);
        assert_false(stats__parse_psi("some avg10=x avg60=0 avg300=0 total=1\n", &psi));
        assert_false(psi.ok);
        assert_false(stats__parse_psi("some avg10=0.00 total=1\n", &psi)); /* fields missing */
        assert_false(stats__parse_psi("", &psi));
}

static void test_parse_loadavg_and_cpu_list(void **state)
{
        (void)state;
        int64_t n = 0;
        assert_true(stats__parse_loadavg_procs("1.36 3.49 4.53 2/3518 3715089\n", &n));
        assert_int_equal(n, 3518);
        assert_false(stats__parse_loadavg_procs("1.36 3.49 4.53\n", &n));
        assert_false(stats__parse_loadavg_procs("1.36 3.49 4.53 23518 1\n", &n));

        assert_int_equal(stats__parse_cpu_list("0-3\n"), 4);
        assert_int_equal(stats__parse_cpu_list("0-3,8,10-11\n"), 7);
        assert_int_equal(stats__parse_cpu_list("0\n"), 1);
        assert_int_equal(stats__parse_cpu_list("3-1\n"), 0);
        assert_int_equal(stats__parse_cpu_list("x\n"), 0);
}

static const char net_dev[] =
    "Inter-|   Receive                                                |  Transmit\n"
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "
    "drop fifo colls carrier compressed\n"
    "    lo:  123456     100    0    0    0     0          0         0   123456     100    0 "
    "   0    0     0       0          0\n"
    "  eth0: 1000 10 1 0 0 0 0 0 2000 20 2 0 0 0 0 0\n"
    "vethab12:12345678 5 0 0 0 0 0 0 7 1 0 0 0 0 0 0\n"
    "enp0s3123:12345678 5 3 0 0 0 0 0 7 1 4 0 0 0 0 0\n"
    "docker0: 1 1 0 0 0 0 0 0 1 1 0 0 0 0 0 0\n";

static void test_parse_net_dev(void **state)
{
        (void)state;
        struct stats_iface *ifs = NULL;
        size_t n = 0;
        assert_int_equal(stats__parse_net_dev(net_dev, &ifs, &n), 0);
        /* lo, veth*, docker* left out, as cAdvisor */
        assert_int_equal(n, 2);
        assert_string_equal(ifs[0].name, "eth0");
        assert_int_equal(ifs[0].rx_bytes.v, 1000);
        assert_int_equal(ifs[0].rx_errors.v, 1);
        assert_int_equal(ifs[0].tx_bytes.v, 2000);
        assert_int_equal(ifs[0].tx_errors.v, 2);
        /* a name and a counter that touch ("enp0s3123:12345678") */
        assert_string_equal(ifs[1].name, "enp0s3123");
        assert_int_equal(ifs[1].rx_bytes.v, 12345678);
        assert_int_equal(ifs[1].tx_errors.v, 4);

        struct stats_network net;
        stats__network_from_ifaces(&net, T0, ifs, n);
        assert_true(net.ok);
        assert_string_equal(net.dflt.name, "eth0");
        assert_int_equal(net.dflt.tx_bytes.v, 2000);
        stats__network_clear(&net);

        /* a line that is not 17 fields: the whole file is refused */
        assert_int_equal(stats__parse_net_dev("h1\nh2\n  eth0: 1 2 3\n", &ifs, &n), -1);
        assert_int_equal(stats__parse_net_dev("h1\nh2\n  eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 "
                                              "14 15 x\n",
                                              &ifs, &n),
                         -1);
        /* no eth0: the inline interface has no name and no counters */
        assert_int_equal(
            stats__parse_net_dev("h1\nh2\nens3: 5 0 0 0 0 0 0 0 6 0 0 0 0 0 0 0\n", &ifs, &n), 0);
        stats__network_from_ifaces(&net, T0, ifs, n);
        assert_null(net.dflt.name);
        assert_false(net.dflt.rx_bytes.ok);
        assert_int_equal(net.n_ifaces, 1);
        stats__network_clear(&net);
}

static void test_parse_proc_cgroup(void **state)
{
        (void)state;
        char *c = stats__parse_proc_cgroup("0::/system.slice/kubelet.service\n", true);
        assert_string_equal(c, "/system.slice/kubelet.service");
        free(c);
        const char *v1 = "12:memory:/kubelet\n4:cpu,cpuacct:/kubelet\n1:name=systemd:/x\n0::/\n";
        c = stats__parse_proc_cgroup(v1, false);
        assert_string_equal(c, "/kubelet");
        free(c);
        /* upstream: "cpu and memory cgroup hierarchy not unified" */
        assert_null(stats__parse_proc_cgroup("4:memory:/a\n2:cpuacct:/\n1:cpu:/\n", false));
        assert_null(stats__parse_proc_cgroup("1:cpu:/\n", true));
}

static void test_cgroup_sample_v2(void **state)
{
        (void)state;
        struct stats_cgroup_files f = {
            .cpu_stat = "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n",
            .memory_stat = "anon 6000\nfile 4000\ninactive_file 1000\nactive_file 3000\n"
                           "pgfault 50\npgmajfault 2\n",
            .memory_usage = "10000\n",
            .memory_limit = "20000\n",
            .swap_usage = "300\n",
            .swap_limit = "1000\n",
            .cpu_pressure = "some avg10=0.50 avg60=0.00 avg300=0.00 total=7\n"
                            "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
        };
        struct stats_cgroup_sample s;
        stats__cgroup_sample_parse(true, false, &f, &s);
        assert_true(s.has_cpu && s.has_memory && s.has_swap);
        assert_int_equal(s.cpu_usage_ns, 2500000000ull);
        assert_int_equal(s.usage, 10000);
        assert_int_equal(s.working_set, 9000); /* usage - inactive_file */
        assert_int_equal(s.rss, 6000);         /* anon */
        assert_int_equal(s.page_faults, 50);
        assert_int_equal(s.major_page_faults, 2);
        assert_true(s.has_limit);
        assert_int_equal(s.limit, 20000);
        assert_int_equal(s.swap_usage, 300);
        assert_true(s.has_swap_limit);
        assert_int_equal(s.swap_limit, 1000);
        assert_true(s.cpu_psi.ok);
        assert_int_equal(s.cpu_psi.some.total, 7);
        assert_false(s.memory_psi.ok);

        /* "max" is no limit; a missing memory.swap.max reads as 0 (cAdvisor) */
        f.memory_limit = "max\n";
        f.swap_limit = NULL;
        f.swap_usage = NULL;
        stats__cgroup_sample_parse(true, false, &f, &s);
        assert_false(s.has_limit);
        assert_true(s.has_swap_limit);
        assert_int_equal(s.swap_limit, 0);
        assert_int_equal(s.swap_usage, 0);
        /* a limit above 2^62 is none either */
        f.memory_limit = "9223372036854771712\n";
        stats__cgroup_sample_parse(true, false, &f, &s);
        assert_false(s.has_limit);

        /* no memory.current and not the root: no memory readings */
        f.memory_usage = NULL;
        stats__cgroup_sample_parse(true, false, &f, &s);
        assert_false(s.has_memory);
        assert_true(s.has_cpu);
}

static void test_cgroup_sample_v2_root(void **state)
{
        (void)state;
        /* the root has no memory.current: runc's rootStatsFromMeminfo */
        struct stats_cgroup_files f = {
            .cpu_stat = "usage_usec 100\n",
            .memory_stat = "anon 1000000\nfile 3000000\ninactive_file 500000\npgfault 42\n",
            .meminfo = meminfo,
        };
        struct stats_cgroup_sample s;
        stats__cgroup_sample_parse(true, true, &f, &s);
        assert_true(s.has_memory);
        assert_int_equal(s.usage, 4000000);
        assert_int_equal(s.working_set, 3500000);
        assert_int_equal(s.rss, 1000000);
        assert_int_equal(s.page_faults, 42);
        /* the machine's MemTotal and SwapTotal are the root's limits */
        assert_true(s.has_limit);
        assert_int_equal(s.limit, 8000000ull * 1024);
        assert_int_equal(s.swap_usage, 400000ull * 1024);
        assert_int_equal(s.swap_limit, 1000000ull * 1024);
}

static void test_cgroup_sample_v1(void **state)
{
        (void)state;
        struct stats_cgroup_files f = {
            .cpuacct_usage = "123456789\n",
            .memory_stat = "cache 10\nrss 20\ntotal_rss 2000\ntotal_inactive_file 500\n"
                           "total_swap 64\npgfault 9\npgmajfault 1\n",
            .memory_usage = "5000\n",
            .memory_limit = "9223372036854771712\n",
            .swap_limit = "9223372036854771712\n",
        };
        struct stats_cgroup_sample s;
        stats__cgroup_sample_parse(false, false, &f, &s);
        assert_true(s.has_cpu && s.has_memory);
        assert_int_equal(s.cpu_usage_ns, 123456789);
        assert_int_equal(s.usage, 5000);
        assert_int_equal(s.working_set, 4500);
        assert_int_equal(s.rss, 2000); /* total_rss (hierarchical) */
        assert_int_equal(s.swap_usage, 64);
        assert_int_equal(s.page_faults, 9);
        assert_false(s.has_limit);
        assert_false(s.has_swap_limit);
        assert_false(s.cpu_psi.ok); /* v1: no PSI */
}

/* upstream getAndUpdateContainerUsageNanoCores */
static void test_nano_cores_from_two_samples(void **state)
{
        (void)state;
        struct stats_cpu_cache *c = stats__cpu_cache_new();
        /* the first sample: nothing to compare with */
        assert_false(stats__cpu_cache_update(c, "ctr", T0, 1 * SEC).ok);
        /* 3 s of CPU in 2 s: 1.5 cores */
        struct stats_u64 v = stats__cpu_cache_update(c, "ctr", T0 + 2 * SEC, 4 * SEC);
        assert_true(v.ok);
        assert_int_equal(v.v, 1500000000ull);
        /* other keys are separate */
        assert_false(stats__cpu_cache_update(c, "other", T0 + 2 * SEC, 4 * SEC).ok);
        /* the time did not advance: no value, the sample not kept */
        assert_false(stats__cpu_cache_update(c, "ctr", T0 + 2 * SEC, 5 * SEC).ok);
        v = stats__cpu_cache_update(c, "ctr", T0 + 4 * SEC, 5 * SEC);
        assert_true(v.ok);
        assert_int_equal(v.v, 500000000ull); /* 1 s over 2 s, from the kept sample */
        /* the counter went back (a new container of the same ID): start over */
        assert_false(stats__cpu_cache_update(c, "ctr", T0 + 6 * SEC, 1 * SEC).ok);
        v = stats__cpu_cache_update(c, "ctr", T0 + 7 * SEC, 1 * SEC + SEC / 4);
        assert_true(v.ok);
        assert_int_equal(v.v, 250000000ull);
        /* samples older than 10 minutes are dropped */
        stats__cpu_cache_expire(c, T0 + 7 * SEC + 11 * 60 * SEC);
        assert_false(stats__cpu_cache_update(c, "ctr", T0 + 8 * SEC, 2 * SEC).ok);
        stats__cpu_cache_free(c);
}

/* ---- Fixture trees ------------------------------------------------------------- */

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

static void make_dir(const char *base, const char *rel)
{
        cleanup_free char *path = xasprintf("%s/%s", base, rel);
        ck_error_t err = NULL;
        assert_int_equal(fs_mkdir_p(path, 0755, &err), 0);
}

static void test_disk_usage(void **state)
{
        (void)state;
        char base[] = "/tmp/ck-stats-du-XXXXXX";
        assert_non_null(mkdtemp(base));
        char big[10000];
        memset(big, 'x', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        write_file(base, "d/a", big);
        write_file(base, "d/sub/b", "hello");
        cleanup_free char *a = xasprintf("%s/d/a", base);
        cleanup_free char *hard = xasprintf("%s/d/sub/a-link", base);
        assert_int_equal(link(a, hard), 0);
        cleanup_free char *dir = xasprintf("%s/d", base);
        uint64_t bytes, inodes;
        ck_error_t err = NULL;
        assert_int_equal(stats__disk_usage(dir, &bytes, &inodes, &err), 0);
        /* d, a, sub, b: the hard link counted once */
        assert_int_equal(inodes, 4);
        struct stat st_a, st_b, st_d, st_sub;
        cleanup_free char *b = xasprintf("%s/d/sub/b", base);
        cleanup_free char *sub = xasprintf("%s/d/sub", base);
        assert_int_equal(stat(a, &st_a), 0);
        assert_int_equal(stat(b, &st_b), 0);
        assert_int_equal(stat(dir, &st_d), 0);
        assert_int_equal(stat(sub, &st_sub), 0);
        assert_int_equal(
            bytes,
            (uint64_t)(st_a.st_blocks + st_b.st_blocks + st_d.st_blocks + st_sub.st_blocks) * 512);
        /* a file: itself */
        assert_int_equal(stats__disk_usage(b, &bytes, &inodes, &err), 0);
        assert_int_equal(inodes, 1);
        cleanup_free char *missing = xasprintf("%s/nope", base);
        assert_true(stats__disk_usage(missing, &bytes, &inodes, &err) < 0);
        assert_int_equal(err->status, ENOENT);
        ck_error_release(&err);
        assert_int_equal(fs_remove_all(base, &err), 0);
}

static void test_machine_info_read(void **state)
{
        (void)state;
        char base[] = "/tmp/ck-stats-mi-XXXXXX";
        assert_non_null(mkdtemp(base));
        write_file(base, "proc/meminfo", meminfo);
        write_file(base, "proc/stat", "cpu  1 2 3 4\nbtime 1700000000\n");
        write_file(base, "proc/sys/kernel/random/boot_id",
                   "0f6f2c4e-1111-2222-3333-444455556666\n");
        write_file(base, "sys/devices/system/cpu/online", "0-3,6\n");
        write_file(base, "sys/class/dmi/id/product_uuid", "EC2A-UUID\n");
        write_file(base, "var/lib/dbus/machine-id", "dbus-machine-id\n");
        make_dir(base, "etc");
        cleanup_free char *proc = xasprintf("%s/proc", base);
        cleanup_free char *sys = xasprintf("%s/sys", base);
        cleanup_free char *etc = xasprintf("%s/etc", base);
        cleanup_free char *var = xasprintf("%s/var/lib", base);
        struct stats_machine_info mi;
        stats_machine_info_read(proc, sys, etc, var, &mi);
        assert_int_equal(mi.num_cores, 5);
        assert_int_equal(mi.memory_capacity, 8000000ll * 1024);
        assert_int_equal(mi.swap_capacity, 1000000ll * 1024);
        assert_int_equal(mi.boot_time_s, BTIME);
        assert_string_equal(mi.boot_id, "0f6f2c4e-1111-2222-3333-444455556666");
        assert_string_equal(mi.machine_id, "dbus-machine-id"); /* no /etc/machine-id */
        assert_string_equal(mi.system_uuid, "EC2A-UUID");
        write_file(base, "etc/machine-id", "etc-machine-id\n");
        stats_machine_info_read(proc, sys, etc, var, &mi);
        assert_string_equal(mi.machine_id, "etc-machine-id");

        /* the process-wide copy is read once: the same pointer every time */
        const struct stats_machine_info *m1 = stats_machine_info();
        assert_true(m1 == stats_machine_info());
        assert_true(m1->num_cores >= 1);
        ck_error_t err = NULL;
        assert_int_equal(fs_remove_all(base, &err), 0);
}

/* ---- A fake runtime ------------------------------------------------------------ */

struct runtime {
        atomic_llong now_ns;   /* the fake clock: CRI timestamps follow it */
        bool no_sandbox_stats; /* ListPodSandboxStats is UNIMPLEMENTED */
        int fail_containers;   /* != 0: ListContainers fails with this code */
        int fail_image_fs;
        int fail_sandbox_stats;    /* != 0: ListPodSandboxStats fails with this code */
        atomic_bool hold_image_fs; /* ImageFsInfo waits while set */
        const char *image_mountpoint;
        atomic_int list_containers, list_sandboxes, sandbox_stats, container_stats, image_fs;
};

/* Everything a reply allocates, freed once it is packed. */
struct arena {
        void *p[256];
        size_t n;
};

static void *arena_new(struct arena *a, size_t n)
{
        assert_true(a->n < sizeof(a->p) / sizeof(a->p[0]));
        void *x = calloc(1, n);
        a->p[a->n++] = x;
        return x;
}

static void arena_free(struct arena *a)
{
        for (size_t i = 0; i < a->n; i++)
                free(a->p[i]);
        a->n = 0;
}

#define NEW(a, type, init)                                                                         \
        ({                                                                                         \
                type *m_ = arena_new(a, sizeof(type));                                             \
                init(m_);                                                                          \
                m_;                                                                                \
        })

static Runtime__V1__UInt64Value *U(struct arena *a, uint64_t v)
{
        Runtime__V1__UInt64Value *u =
            NEW(a, Runtime__V1__UInt64Value, runtime__v1__uint64_value__init);
        u->value = v;
        return u;
}

static Runtime__V1__CpuUsage *cpu_usage(struct arena *a, int64_t ts, uint64_t core, int64_t nano)
{
        Runtime__V1__CpuUsage *c = NEW(a, Runtime__V1__CpuUsage, runtime__v1__cpu_usage__init);
        c->timestamp = ts;
        c->usage_core_nano_seconds = U(a, core);
        if (nano >= 0)
                c->usage_nano_cores = U(a, (uint64_t)nano);
        return c;
}

/* rss < 0: left out */
static Runtime__V1__MemoryUsage *memory_usage(struct arena *a, int64_t ts, uint64_t ws,
                                              uint64_t usage, int64_t rss)
{
        Runtime__V1__MemoryUsage *m =
            NEW(a, Runtime__V1__MemoryUsage, runtime__v1__memory_usage__init);
        m->timestamp = ts;
        m->working_set_bytes = U(a, ws);
        m->usage_bytes = U(a, usage);
        if (rss >= 0)
                m->rss_bytes = U(a, (uint64_t)rss);
        return m;
}

static Runtime__V1__ContainerStats *container_stats(struct arena *a, const char *id,
                                                    const char *name)
{
        Runtime__V1__ContainerStats *s =
            NEW(a, Runtime__V1__ContainerStats, runtime__v1__container_stats__init);
        s->attributes =
            NEW(a, Runtime__V1__ContainerAttributes, runtime__v1__container_attributes__init);
        s->attributes->id = (char *)id;
        s->attributes->metadata =
            NEW(a, Runtime__V1__ContainerMetadata, runtime__v1__container_metadata__init);
        s->attributes->metadata->name = (char *)name;
        return s;
}

/* The containers' stats at the runtime's time now: app with everything,
 * sidecar with no usageNanoCores and no memory (its cgroup has them), dns
 * with a memory lacking rssBytes. */
static void all_container_stats(struct runtime *rt, struct arena *a,
                                Runtime__V1__ContainerStats **out)
{
        int64_t now = atomic_load(&rt->now_ns);
        uint64_t elapsed = (uint64_t)(now - T0);
        Runtime__V1__ContainerStats *app = container_stats(a, "c-a1", "app");
        app->cpu = cpu_usage(a, now, 2 * SEC + elapsed / 10, 100000000);
        app->memory = memory_usage(a, now, 1000, 1500, 800);
        app->memory->available_bytes = U(a, 5000);
        app->memory->page_faults = U(a, 10);
        app->memory->major_page_faults = U(a, 1);
        app->writable_layer =
            NEW(a, Runtime__V1__FilesystemUsage, runtime__v1__filesystem_usage__init);
        app->writable_layer->timestamp = now;
        app->writable_layer->used_bytes = U(a, 4096);
        app->writable_layer->inodes_used = U(a, 5);
        app->writable_layer->fs_id =
            NEW(a, Runtime__V1__FilesystemIdentifier, runtime__v1__filesystem_identifier__init);
        app->writable_layer->fs_id->mountpoint = (char *)rt->image_mountpoint;
        app->swap = NEW(a, Runtime__V1__SwapUsage, runtime__v1__swap_usage__init);
        app->swap->timestamp = now;
        app->swap->swap_usage_bytes = U(a, 0);
        app->swap->swap_available_bytes = U(a, 100);
        out[0] = app;

        /* 0.2 cores: sidecar's usageNanoCores is ours to compute */
        Runtime__V1__ContainerStats *sidecar = container_stats(a, "c-a2", "sidecar");
        sidecar->cpu = cpu_usage(a, now, 1 * SEC + elapsed / 5, -1);
        out[1] = sidecar;

        Runtime__V1__ContainerStats *dns = container_stats(a, "c-b1", "dns");
        dns->cpu = cpu_usage(a, now, 3 * SEC, 50000000);
        dns->memory = memory_usage(a, now, 600, 700, -1);
        out[2] = dns;

        /* an exited container's last stats: not reported */
        Runtime__V1__ContainerStats *old = container_stats(a, "c-a3", "old");
        old->cpu = cpu_usage(a, now, 1, 1);
        out[3] = old;
}

static Runtime__V1__Container *container(struct arena *a, const char *id, const char *sandbox,
                                         const char *name, Runtime__V1__ContainerState state,
                                         int64_t created)
{
        Runtime__V1__Container *c = NEW(a, Runtime__V1__Container, runtime__v1__container__init);
        c->id = (char *)id;
        c->pod_sandbox_id = (char *)sandbox;
        c->metadata = NEW(a, Runtime__V1__ContainerMetadata, runtime__v1__container_metadata__init);
        c->metadata->name = (char *)name;
        c->state = state;
        c->created_at = created;
        return c;
}

static Runtime__V1__PodSandbox *sandbox(struct arena *a, const char *id, const char *ns,
                                        const char *name, const char *uid,
                                        Runtime__V1__PodSandboxState state, int64_t created)
{
        Runtime__V1__PodSandbox *s =
            NEW(a, Runtime__V1__PodSandbox, runtime__v1__pod_sandbox__init);
        s->id = (char *)id;
        s->metadata =
            NEW(a, Runtime__V1__PodSandboxMetadata, runtime__v1__pod_sandbox_metadata__init);
        s->metadata->name = (char *)name;
        s->metadata->namespace_ = (char *)ns;
        s->metadata->uid = (char *)uid;
        s->state = state;
        s->created_at = created;
        return s;
}

static Runtime__V1__PodSandboxStats *sandbox_stats(struct arena *a, const char *id)
{
        Runtime__V1__PodSandboxStats *s =
            NEW(a, Runtime__V1__PodSandboxStats, runtime__v1__pod_sandbox_stats__init);
        s->attributes =
            NEW(a, Runtime__V1__PodSandboxAttributes, runtime__v1__pod_sandbox_attributes__init);
        s->attributes->id = (char *)id;
        s->linux =
            NEW(a, Runtime__V1__LinuxPodSandboxStats, runtime__v1__linux_pod_sandbox_stats__init);
        return s;
}

static Runtime__V1__NetworkInterfaceUsage *iface(struct arena *a, const char *name, uint64_t rx,
                                                 uint64_t tx)
{
        Runtime__V1__NetworkInterfaceUsage *i =
            NEW(a, Runtime__V1__NetworkInterfaceUsage, runtime__v1__network_interface_usage__init);
        i->name = (char *)name;
        i->rx_bytes = U(a, rx);
        i->rx_errors = U(a, 1);
        i->tx_bytes = U(a, tx);
        i->tx_errors = U(a, 2);
        return i;
}

static void pack_reply(struct fake_reply *reply, const ProtobufCMessage *m)
{
        reply->kind = FAKE_REPLY_MESSAGE;
        reply->body_len = protobuf_c_message_get_packed_size(m);
        reply->body = malloc(reply->body_len + 1);
        protobuf_c_message_pack(m, reply->body);
}

static void fail_reply(struct fake_reply *reply, int code)
{
        reply->kind = FAKE_REPLY_TRAILERS_ONLY;
        reply->grpc_status = code;
        reply->grpc_message = "the runtime is unhappy";
}

#define METHOD(path, name) (strcmp((path), "/runtime.v1." name) == 0)

static void runtime_handler(struct fake_server *s, const struct fake_request *req,
                            struct fake_reply *reply)
{
        struct runtime *rt = s->data;
        struct arena a = {0};
        if (METHOD(req->path, "RuntimeService/ListContainers")) {
                atomic_fetch_add(&rt->list_containers, 1);
                if (rt->fail_containers) {
                        fail_reply(reply, rt->fail_containers);
                        return;
                }
                Runtime__V1__Container *c[] = {
                    container(&a, "c-a1", "sb-a", "app",
                              RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING, T0 - 90 * SEC),
                    container(&a, "c-a2", "sb-a", "sidecar",
                              RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING, T0 - 80 * SEC + 5),
                    container(&a, "c-a3", "sb-a", "old",
                              RUNTIME__V1__CONTAINER_STATE__CONTAINER_EXITED, T0 - 95 * SEC),
                    container(&a, "c-b1", "sb-b", "dns",
                              RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING, T0 - 50 * SEC),
                };
                Runtime__V1__ListContainersResponse out =
                    RUNTIME__V1__LIST_CONTAINERS_RESPONSE__INIT;
                out.n_containers = 4;
                out.containers = c;
                pack_reply(reply, &out.base);
        } else if (METHOD(req->path, "RuntimeService/ListPodSandbox")) {
                atomic_fetch_add(&rt->list_sandboxes, 1);
                Runtime__V1__PodSandbox *sb[] = {
                    sandbox(&a, "sb-b-old", "kube-system", "dns", "uid-b-old",
                            RUNTIME__V1__POD_SANDBOX_STATE__SANDBOX_NOTREADY, T0 - 500 * SEC),
                    sandbox(&a, "sb-a", "default", "web", "uid-a",
                            RUNTIME__V1__POD_SANDBOX_STATE__SANDBOX_READY, T0 - 100 * SEC),
                    sandbox(&a, "sb-b", "kube-system", "dns", "uid-b",
                            RUNTIME__V1__POD_SANDBOX_STATE__SANDBOX_READY, T0 - 60 * SEC),
                };
                Runtime__V1__ListPodSandboxResponse out =
                    RUNTIME__V1__LIST_POD_SANDBOX_RESPONSE__INIT;
                out.n_items = 3;
                out.items = sb;
                pack_reply(reply, &out.base);
        } else if (METHOD(req->path, "RuntimeService/ListPodSandboxStats")) {
                atomic_fetch_add(&rt->sandbox_stats, 1);
                if (rt->no_sandbox_stats || rt->fail_sandbox_stats) {
                        fail_reply(reply, rt->fail_sandbox_stats ? rt->fail_sandbox_stats
                                                                 : GRPC_UNIMPLEMENTED);
                        return;
                }
                int64_t now = atomic_load(&rt->now_ns);
                Runtime__V1__ContainerStats *cs[4];
                all_container_stats(rt, &a, cs);
                Runtime__V1__ContainerStats *a_cs[] = {cs[1], cs[0], cs[3]};
                Runtime__V1__ContainerStats *b_cs[] = {cs[2]};
                Runtime__V1__PodSandboxStats *pa = sandbox_stats(&a, "sb-a");
                pa->linux->cpu = cpu_usage(&a, now, 5 * SEC, 250000000);
                pa->linux->memory = memory_usage(&a, now, 3000, 4000, 2000);
                pa->linux->network =
                    NEW(&a, Runtime__V1__NetworkUsage, runtime__v1__network_usage__init);
                pa->linux->network->timestamp = now;
                pa->linux->network->default_interface = iface(&a, "eth0", 100, 200);
                pa->linux->process =
                    NEW(&a, Runtime__V1__ProcessUsage, runtime__v1__process_usage__init);
                pa->linux->process->timestamp = now;
                pa->linux->process->process_count = U(&a, 3);
                pa->linux->n_containers = 3;
                pa->linux->containers = a_cs;
                Runtime__V1__PodSandboxStats *pb = sandbox_stats(&a, "sb-b");
                pb->linux->cpu = cpu_usage(&a, now, 4 * SEC, -1);
                pb->linux->memory = memory_usage(&a, now, 700, 800, -1);
                pb->linux->n_containers = 1;
                pb->linux->containers = b_cs;
                /* the old sandbox's stats: not reported (removeTerminatedPods) */
                Runtime__V1__PodSandboxStats *pold = sandbox_stats(&a, "sb-b-old");
                Runtime__V1__PodSandboxStats *all[] = {pb, pold, pa};
                Runtime__V1__ListPodSandboxStatsResponse out =
                    RUNTIME__V1__LIST_POD_SANDBOX_STATS_RESPONSE__INIT;
                out.n_stats = 3;
                out.stats = all;
                pack_reply(reply, &out.base);
        } else if (METHOD(req->path, "RuntimeService/ListContainerStats")) {
                atomic_fetch_add(&rt->container_stats, 1);
                Runtime__V1__ContainerStats *cs[4];
                all_container_stats(rt, &a, cs);
                Runtime__V1__ListContainerStatsResponse out =
                    RUNTIME__V1__LIST_CONTAINER_STATS_RESPONSE__INIT;
                out.n_stats = 4;
                out.stats = cs;
                pack_reply(reply, &out.base);
        } else if (METHOD(req->path, "ImageService/ImageFsInfo")) {
                atomic_fetch_add(&rt->image_fs, 1);
                while (atomic_load(&rt->hold_image_fs))
                        usleep(1000);
                if (rt->fail_image_fs) {
                        fail_reply(reply, rt->fail_image_fs);
                        return;
                }
                Runtime__V1__FilesystemUsage *fu =
                    NEW(&a, Runtime__V1__FilesystemUsage, runtime__v1__filesystem_usage__init);
                fu->timestamp = atomic_load(&rt->now_ns);
                fu->used_bytes = U(&a, 123456);
                fu->inodes_used = U(&a, 77);
                fu->fs_id = NEW(&a, Runtime__V1__FilesystemIdentifier,
                                runtime__v1__filesystem_identifier__init);
                fu->fs_id->mountpoint = (char *)rt->image_mountpoint;
                Runtime__V1__FilesystemUsage *fs[] = {fu};
                Runtime__V1__ImageFsInfoResponse out = RUNTIME__V1__IMAGE_FS_INFO_RESPONSE__INIT;
                out.n_image_filesystems = 1;
                out.image_filesystems = fs;
                pack_reply(reply, &out.base);
        } else {
                fail_reply(reply, GRPC_UNIMPLEMENTED);
        }
        arena_free(&a);
}

/* ---- The provider's fixture ------------------------------------------------------ */

struct fixture {
        char base[64];
        char *proc, *cg, *root, *logs;
        struct runtime rt;
        struct fake_server *server;
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

/* Moves both clocks (and the runtime's) on. */
static void advance(struct fixture *f, int64_t ns)
{
        atomic_fetch_add(&f->real_ns, ns);
        atomic_fetch_add(&f->mono_ns, ns);
        atomic_store(&f->rt.now_ns, atomic_load(&f->real_ns));
}

static void write_trees(struct fixture *f)
{
        /* /proc */
        write_file(f->proc, "meminfo", meminfo);
        write_file(f->proc, "stat", "cpu  100 0 50 1000 0 0 0 0 0 0\nbtime 1700000000\n");
        write_file(f->proc, "vmstat", "pgfault 11\npgmajfault 3\n");
        write_file(f->proc, "loadavg", "0.50 0.40 0.30 2/3518 99999\n");
        write_file(f->proc, "sys/kernel/pid_max", "4194304\n");
        write_file(f->proc, "sys/kernel/threads-max", "127000\n");
        write_file(f->proc, "self/cgroup", "0::/system.slice/kubelet.service\n");
        write_file(f->proc, "1/net/dev", net_dev);
        write_file(f->proc, "4242/net/dev",
                   "h1\nh2\n  eth0: 900 9 0 0 0 0 0 0 800 8 0 0 0 0 0 0\n"
                   "    lo: 5 5 0 0 0 0 0 0 5 5 0 0 0 0 0 0\n");

        /* cgroup v2 */
        write_file(f->cg, "cgroup.controllers", "cpuset cpu io memory pids\n");
        write_file(f->cg, "cpu.stat", "usage_usec 100000000\nuser_usec 80000000\n");
        write_file(f->cg, "memory.stat",
                   "anon 1000000\nfile 3000000\ninactive_file 500000\npgfault 42\npgmajfault 7\n");
        write_file(f->cg, "cpu.pressure",
                   "some avg10=1.50 avg60=0.25 avg300=0.00 total=12345\n"
                   "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
        write_file(f->cg, "system.slice/kubelet.service/cpu.stat", "usage_usec 3000000\n");
        write_file(f->cg, "system.slice/kubelet.service/memory.current", "50000000\n");
        write_file(f->cg, "system.slice/kubelet.service/memory.stat",
                   "anon 40000000\nfile 10000000\ninactive_file 2000000\n");
        write_file(f->cg, "system.slice/kubelet.service/memory.max", "max\n");
        write_file(f->cg, "kubepods/cpu.stat", "usage_usec 9000000\n");
        write_file(f->cg, "kubepods/memory.current", "600000\n");
        write_file(f->cg, "kubepods/memory.stat", "anon 400000\nfile 200000\ninactive_file 0\n");
        write_file(f->cg, "kubepods/memory.max", "7000000000\n");
        const char *pa = "kubepods/burstable/poduid-a";
        cleanup_free char *p1 = xasprintf("%s/cpu.stat", pa);
        write_file(f->cg, p1, "usage_usec 7000000\n");
        cleanup_free char *p2 = xasprintf("%s/memory.current", pa);
        write_file(f->cg, p2, "9000\n");
        cleanup_free char *p3 = xasprintf("%s/memory.stat", pa);
        write_file(f->cg, p3,
                   "anon 6000\nfile 3000\ninactive_file 1000\npgfault 5\npgmajfault 0\n");
        cleanup_free char *p4 = xasprintf("%s/memory.max", pa);
        write_file(f->cg, p4, "max\n");
        cleanup_free char *p5 = xasprintf("%s/memory.swap.current", pa);
        write_file(f->cg, p5, "0\n");
        cleanup_free char *p6 = xasprintf("%s/memory.swap.max", pa);
        write_file(f->cg, p6, "max\n");
        cleanup_free char *p7 = xasprintf("%s/cgroup.procs", pa);
        write_file(f->cg, p7, "");
        cleanup_free char *c1 = xasprintf("%s/c-a1/cgroup.procs", pa);
        write_file(f->cg, c1, "100\n101\n");
        cleanup_free char *c2 = xasprintf("%s/c-a2/cgroup.procs", pa);
        write_file(f->cg, c2, "102\n");
        const char *sidecar_files[][2] = {
            {"memory.current", "2048\n"},
            {"memory.stat", "anon 1500\nfile 548\ninactive_file 48\npgfault 20\npgmajfault 2\n"},
            {"memory.max", "4096\n"},
            {"memory.swap.current", "16\n"},
            {"memory.swap.max", "116\n"},
            {"cpu.stat", "usage_usec 1\n"},
        };
        for (size_t i = 0; i < sizeof(sidecar_files) / sizeof(sidecar_files[0]); i++) {
                cleanup_free char *rel = xasprintf("%s/c-a2/%s", pa, sidecar_files[i][0]);
                write_file(f->cg, rel, sidecar_files[i][1]);
        }
        write_file(f->cg, "kubepods/besteffort/poduid-b/cgroup.procs", "4242\n");
        write_file(f->cg, "kubepods/besteffort/poduid-b/c-b1/cgroup.procs", "4243\n4244\n");

        /* the root dir: an emptyDir and a secret, the etc-hosts */
        char data[8193];
        memset(data, 'd', sizeof(data) - 1);
        data[sizeof(data) - 1] = '\0';
        write_file(f->root, "pods/uid-a/volumes/kubernetes.io~empty-dir/cache/data", data);
        write_file(f->root, "pods/uid-a/volumes/kubernetes.io~secret/token/token", "secret");
        write_file(f->root, "pods/uid-a/etc-hosts", "127.0.0.1 localhost\n");

        /* logs */
        write_file(f->logs, "default_web_uid-a/app/0.log", "a log line\n");
        make_dir(f->logs, "default_web_uid-a/sidecar");
}

static struct stats_options options(struct fixture *f, char *endpoint)
{
        snprintf(endpoint, 160, "unix://%s", f->server->path);
        return (struct stats_options){
            .node_name = "node1",
            .root_dir = f->root,
            .pod_logs_dir = f->logs,
            .runtime_endpoint = endpoint,
            .runtime_timeout_ms = 5000,
            .cgroups_per_qos = true,
            .housekeeping_interval_ms = INTERVAL_MS,
            .cgroupfs_root = f->cg,
            .proc_root = f->proc,
            .now_real_ns = fake_real,
            .now_mono_ns = fake_mono,
            .clock_ctx = f,
        };
}

static int setup_with(void **state, bool pod_stats_from_cri, bool cgroups_per_qos)
{
        struct fixture *f = calloc(1, sizeof(*f));
        snprintf(f->base, sizeof(f->base), "/tmp/ck-stats-XXXXXX");
        assert_non_null(mkdtemp(f->base));
        f->proc = xasprintf("%s/proc", f->base);
        f->cg = xasprintf("%s/cgroup", f->base);
        f->root = xasprintf("%s/root", f->base);
        f->logs = xasprintf("%s/logs", f->base);
        write_trees(f);
        atomic_store(&f->real_ns, T0);
        atomic_store(&f->mono_ns, MONO0);
        atomic_store(&f->rt.now_ns, T0);
        f->rt.image_mountpoint = f->base;
        f->server = fake_server_start(runtime_handler, &f->rt);
        char endpoint[160];
        struct stats_options o = options(f, endpoint);
        o.pod_stats_from_cri = pod_stats_from_cri;
        o.cgroups_per_qos = cgroups_per_qos;
        ck_error_t err = NULL;
        assert_int_equal(stats_provider_new(&o, &f->p, &err), 0);
        *state = f;
        return 0;
}

/* Upstream's default: ListContainerStats and the cgroups. */
static int setup(void **state)
{
        return setup_with(state, false, true);
}

/* The feature gate PodAndContainerStatsFromCRI on: ListPodSandboxStats. */
static int setup_from_cri(void **state)
{
        return setup_with(state, true, true);
}

/* cgroupsPerQOS false: no pod cgroups */
static int setup_no_pod_cgroups(void **state)
{
        return setup_with(state, false, false);
}

static int teardown(void **state)
{
        struct fixture *f = *state;
        stats_provider_free(f->p);
        fake_server_stop(f->server);
        ck_error_t err = NULL;
        assert_int_equal(fs_remove_all(f->base, &err), 0);
        free(f->proc);
        free(f->cg);
        free(f->root);
        free(f->logs);
        free(f);
        return 0;
}

/* ---- JSON helpers ------------------------------------------------------------------- */

/* "a.b[2].c" */
static json_t *jget(json_t *root, const char *path)
{
        char buf[256];
        snprintf(buf, sizeof(buf), "%s", path);
        json_t *cur = root;
        char *save = NULL;
        for (char *tok = strtok_r(buf, ".", &save); tok && cur; tok = strtok_r(NULL, ".", &save)) {
                char *br = strchr(tok, '[');
                if (br)
                        *br = '\0';
                if (*tok)
                        cur = json_object_get(cur, tok);
                while (br && cur) {
                        size_t i = strtoul(br + 1, &br, 10);
                        cur = json_array_get(cur, i);
                        br = strchr(br, '[');
                }
        }
        return cur;
}

static long long jint(json_t *root, const char *path)
{
        json_t *v = jget(root, path);
        if (!json_is_integer(v))
                fail_msg("%s: not an integer", path);
        return json_integer_value(v);
}

static const char *jstr(json_t *root, const char *path)
{
        json_t *v = jget(root, path);
        if (!json_is_string(v))
                fail_msg("%s: not a string", path);
        return json_string_value(v);
}

static void assert_absent(json_t *root, const char *path)
{
        if (jget(root, path) != NULL)
                fail_msg("%s: present", path);
}

/* The object's keys in order, comma-separated. */
static char *keys_of(json_t *o)
{
        char *out = xstrdup("");
        const char *k;
        json_t *v;
        json_object_foreach(o, k, v)
        {
                char *n = xasprintf("%s%s%s", out, *out ? "," : "", k);
                free(out);
                out = n;
        }
        return out;
}

static void assert_keys(json_t *root, const char *path, const char *want)
{
        json_t *o = jget(root, path);
        if (!json_is_object(o))
                fail_msg("%s: not an object", path);
        cleanup_free char *got = keys_of(o);
        if (strcmp(got, want) != 0)
                fail_msg("%s keys:\n got  %s\n want %s", path, got, want);
}

/* ---- The Summary -------------------------------------------------------------------- */

static void test_summary_shape(void **state)
{
        struct fixture *f = *state;
        /* 10 s after the first sample, the node used 5 more CPU seconds */
        advance(f, 10 * SEC);
        write_file(f->cg, "cpu.stat", "usage_usec 105000000\n");
        ck_error_t err = NULL;
        cleanup_json json_t *s = stats_summary_json(f->p, false, &err);
        assert_non_null(s);
        assert_keys(s, "", "node,pods");

        /* the node, in v1alpha1's field order */
        assert_keys(s, "node",
                    "nodeName,systemContainers,startTime,cpu,memory,io,network,fs,runtime,rlimit,"
                    "swap");
        assert_string_equal(jstr(s, "node.nodeName"), "node1");
        assert_string_equal(jstr(s, "node.startTime"), "2023-11-14T22:13:20Z");
        assert_keys(s, "node.cpu", "time,usageNanoCores,usageCoreNanoSeconds,psi");
        assert_string_equal(jstr(s, "node.cpu.time"), "2023-11-14T22:15:10Z");
        assert_int_equal(jint(s, "node.cpu.usageCoreNanoSeconds"), 105000000000ll);
        assert_int_equal(jint(s, "node.cpu.usageNanoCores"), 500000000);
        assert_keys(s, "node.cpu.psi", "full,some");
        assert_keys(s, "node.cpu.psi.some", "total,avg10,avg60,avg300");
        assert_int_equal(jint(s, "node.cpu.psi.some.total"), 12345);
        assert_true(json_real_value(jget(s, "node.cpu.psi.some.avg10")) == 1.5);
        assert_int_equal(jint(s, "node.cpu.psi.full.avg10"), 0); /* as Go writes 0 */
        assert_keys(s, "node.memory",
                    "time,availableBytes,usageBytes,workingSetBytes,rssBytes,pageFaults,"
                    "majorPageFaults");
        assert_int_equal(jint(s, "node.memory.usageBytes"), 4000000);
        assert_int_equal(jint(s, "node.memory.workingSetBytes"), 3500000);
        assert_int_equal(jint(s, "node.memory.rssBytes"), 1000000);
        assert_int_equal(jint(s, "node.memory.availableBytes"), 8000000ll * 1024 - 3500000);
        assert_int_equal(jint(s, "node.memory.pageFaults"), 42);
        assert_int_equal(jint(s, "node.memory.majorPageFaults"), 7);
        assert_keys(s, "node.swap", "time,swapAvailableBytes,swapUsageBytes");
        assert_int_equal(jint(s, "node.swap.swapUsageBytes"), 400000ll * 1024);
        assert_int_equal(jint(s, "node.swap.swapAvailableBytes"), 600000ll * 1024);
        assert_keys(s, "node.io", "time");
        assert_keys(s, "node.network", "time,name,rxBytes,rxErrors,txBytes,txErrors,interfaces");
        assert_string_equal(jstr(s, "node.network.name"), "eth0");
        assert_int_equal(jint(s, "node.network.rxBytes"), 1000);
        assert_int_equal(json_array_size(jget(s, "node.network.interfaces")), 2);
        assert_string_equal(jstr(s, "node.network.interfaces[1].name"), "enp0s3123");
        assert_keys(s, "node.fs",
                    "time,availableBytes,capacityBytes,usedBytes,inodesFree,inodes,inodesUsed");
        assert_keys(s, "node.runtime", "imageFs,containerFs");
        assert_keys(s, "node.runtime.imageFs",
                    "time,availableBytes,capacityBytes,usedBytes,inodesFree,inodes,inodesUsed");
        assert_int_equal(jint(s, "node.runtime.imageFs.usedBytes"), 123456);
        assert_int_equal(jint(s, "node.runtime.containerFs.inodesUsed"), 77);
        assert_keys(s, "node.rlimit", "time,maxpid,curproc");
        assert_int_equal(jint(s, "node.rlimit.maxpid"), 127000);
        assert_int_equal(jint(s, "node.rlimit.curproc"), 3518);

        /* system containers: the kubelet's own cgroup and kubepods */
        assert_int_equal(json_array_size(jget(s, "node.systemContainers")), 2);
        assert_string_equal(jstr(s, "node.systemContainers[0].name"), "kubelet");
        assert_keys(s, "node.systemContainers[0]", "name,startTime,cpu,memory,io,swap");
        assert_string_equal(jstr(s, "node.systemContainers[0].startTime"), "2023-11-14T22:15:00Z");
        assert_int_equal(jint(s, "node.systemContainers[0].cpu.usageCoreNanoSeconds"), 3000000000);
        assert_int_equal(jint(s, "node.systemContainers[0].cpu.usageNanoCores"), 0);
        assert_int_equal(jint(s, "node.systemContainers[0].memory.workingSetBytes"), 48000000);
        assert_absent(s, "node.systemContainers[0].memory.availableBytes"); /* no limit */
        assert_string_equal(jstr(s, "node.systemContainers[1].name"), "pods");
        assert_int_equal(jint(s, "node.systemContainers[1].memory.availableBytes"),
                         7000000000ll - 600000);

        /* the pods, by namespace and name; the old dns sandbox left out */
        assert_int_equal(json_array_size(jget(s, "pods")), 2);
        assert_keys(s, "pods[0]",
                    "podRef,startTime,containers,cpu,memory,io,network,volume,ephemeral-storage,"
                    "process_stats,swap");
        assert_keys(s, "pods[0].podRef", "name,namespace,uid");
        assert_string_equal(jstr(s, "pods[0].podRef.name"), "web");
        assert_string_equal(jstr(s, "pods[0].podRef.namespace"), "default");
        assert_string_equal(jstr(s, "pods[0].podRef.uid"), "uid-a");
        assert_string_equal(jstr(s, "pods[0].startTime"), "2023-11-14T22:13:20Z");
        assert_string_equal(jstr(s, "pods[1].podRef.uid"), "uid-b");

        /* pod A's containers: running ones only, by name */
        assert_int_equal(json_array_size(jget(s, "pods[0].containers")), 2);
        assert_keys(s, "pods[0].containers[0]", "name,startTime,cpu,memory,io,rootfs,logs,swap");
        assert_string_equal(jstr(s, "pods[0].containers[0].name"), "app");
        assert_string_equal(jstr(s, "pods[0].containers[0].startTime"), "2023-11-14T22:13:30Z");
        assert_int_equal(jint(s, "pods[0].containers[0].cpu.usageNanoCores"), 100000000);
        assert_int_equal(jint(s, "pods[0].containers[0].cpu.usageCoreNanoSeconds"), 3 * SEC);
        assert_int_equal(jint(s, "pods[0].containers[0].memory.workingSetBytes"), 1000);
        assert_int_equal(jint(s, "pods[0].containers[0].memory.availableBytes"), 5000);
        assert_int_equal(jint(s, "pods[0].containers[0].memory.majorPageFaults"), 1);
        assert_int_equal(jint(s, "pods[0].containers[0].rootfs.usedBytes"), 4096);
        assert_int_equal(jint(s, "pods[0].containers[0].rootfs.inodesUsed"), 5);
        assert_non_null(jget(s, "pods[0].containers[0].rootfs.capacityBytes"));
        assert_int_equal(jint(s, "pods[0].containers[0].logs.inodesUsed"), 1);
        assert_non_null(jget(s, "pods[0].containers[0].logs.usedBytes"));
        assert_non_null(jget(s, "pods[0].containers[0].logs.availableBytes"));
        assert_int_equal(jint(s, "pods[0].containers[0].swap.swapAvailableBytes"), 100);

        /* sidecar: no usageNanoCores yet (one sample), memory and swap from
         * its cgroup, an empty log directory */
        assert_string_equal(jstr(s, "pods[0].containers[1].name"), "sidecar");
        assert_keys(s, "pods[0].containers[1].cpu", "time,usageCoreNanoSeconds");
        assert_int_equal(jint(s, "pods[0].containers[1].memory.workingSetBytes"), 2000);
        assert_int_equal(jint(s, "pods[0].containers[1].memory.rssBytes"), 1500);
        assert_int_equal(jint(s, "pods[0].containers[1].memory.availableBytes"), 2096);
        assert_int_equal(jint(s, "pods[0].containers[1].memory.pageFaults"), 20);
        assert_int_equal(jint(s, "pods[0].containers[1].swap.swapUsageBytes"), 16);
        assert_int_equal(jint(s, "pods[0].containers[1].swap.swapAvailableBytes"), 100);
        assert_keys(s, "pods[0].containers[1].logs",
                    "time,availableBytes,capacityBytes,inodesFree,"
                    "inodes");
        assert_keys(s, "pods[0].containers[1].rootfs", "time");
        assert_true(json_is_null(jget(s, "pods[0].containers[1].rootfs.time")));

        /* pod A: the runtime's CPU, memory (pageFaults from the pod cgroup),
         * network and process count */
        assert_int_equal(jint(s, "pods[0].cpu.usageNanoCores"), 250000000);
        assert_int_equal(jint(s, "pods[0].memory.workingSetBytes"), 3000);
        assert_int_equal(jint(s, "pods[0].memory.pageFaults"), 5);
        assert_absent(s, "pods[0].memory.availableBytes");
        assert_keys(s, "pods[0].network", "time,name,rxBytes,rxErrors,txBytes,txErrors");
        assert_int_equal(jint(s, "pods[0].network.txBytes"), 200);
        assert_keys(s, "pods[0].process_stats", "process_count");
        assert_int_equal(jint(s, "pods[0].process_stats.process_count"), 3);
        assert_int_equal(jint(s, "pods[0].swap.swapUsageBytes"), 0); /* the pod cgroup */

        /* volumes: the emptyDir and the secret, by name */
        assert_int_equal(json_array_size(jget(s, "pods[0].volume")), 2);
        assert_keys(
            s, "pods[0].volume[0]",
            "time,availableBytes,capacityBytes,usedBytes,inodesFree,inodes,inodesUsed,name");
        assert_string_equal(jstr(s, "pods[0].volume[0].name"), "cache");
        assert_int_equal(jint(s, "pods[0].volume[0].inodesUsed"), 2);
        assert_string_equal(jstr(s, "pods[0].volume[1].name"), "token");
        long long cache = jint(s, "pods[0].volume[0].usedBytes");
        assert_true(cache >= 8192);

        /* ephemeral-storage: rootfs + logs of the containers, the emptyDir
         * (not the secret), etc-hosts */
        long long app_logs = jint(s, "pods[0].containers[0].logs.usedBytes");
        cleanup_free char *hosts = xasprintf("%s/pods/uid-a/etc-hosts", f->root);
        struct stat st;
        assert_int_equal(stat(hosts, &st), 0);
        assert_int_equal(jint(s, "pods[0].ephemeral-storage.usedBytes"),
                         4096 + app_logs + cache + (long long)st.st_blocks * 512);
        assert_int_equal(jint(s, "pods[0].ephemeral-storage.inodesUsed"), 5 + 1 + 2 + 1);

        /* pod B: no network from the runtime: its process's /proc/<pid>/net/dev;
         * the process count from its containers' cgroups */
        assert_string_equal(jstr(s, "pods[1].network.name"), "eth0");
        assert_int_equal(jint(s, "pods[1].network.rxBytes"), 900);
        assert_int_equal(json_array_size(jget(s, "pods[1].network.interfaces")), 1);
        assert_int_equal(jint(s, "pods[1].process_stats.process_count"), 2);
        assert_keys(s, "pods[1].cpu", "time,usageCoreNanoSeconds"); /* one sample so far */
        assert_absent(s, "pods[1].containers[0].memory.rssBytes");
        assert_absent(s, "pods[1].volume");

        /* the next refresh: usageNanoCores from two samples 10 s apart */
        advance(f, 10 * SEC);
        cleanup_json json_t *s2 = stats_summary_json(f->p, false, &err);
        assert_non_null(s2);
        assert_int_equal(jint(s2, "pods[0].containers[1].cpu.usageNanoCores"), 200000000);
        assert_int_equal(jint(s2, "pods[1].cpu.usageNanoCores"), 0); /* no CPU used */
        assert_int_equal(jint(s2, "node.cpu.usageNanoCores"), 0);
        assert_int_equal(atomic_load(&f->rt.container_stats), 0); /* sandbox stats sufficed */
}

static void test_summary_only_cpu_and_memory(void **state)
{
        struct fixture *f = *state;
        ck_error_t err = NULL;
        cleanup_json json_t *s = stats_summary_json(f->p, true, &err);
        assert_non_null(s);
        assert_keys(s, "node", "nodeName,systemContainers,startTime,cpu,memory,swap");
        assert_keys(s, "node.systemContainers[0]", "name,startTime,cpu,memory,swap");
        assert_keys(s, "pods[0]", "podRef,startTime,containers,cpu,memory,swap");
        assert_keys(s, "pods[0].containers[0]", "name,startTime,cpu,memory,swap");
        /* a container's missing values are 0 in this view */
        assert_int_equal(jint(s, "pods[1].containers[0].memory.rssBytes"), 0);
        assert_int_equal(jint(s, "pods[1].containers[0].memory.availableBytes"), 0);
        assert_int_equal(jint(s, "pods[1].containers[0].swap.swapUsageBytes"), 0);
        /* but not a usageNanoCores nobody could compute, nor a pod's value */
        assert_absent(s, "pods[0].containers[1].cpu.usageNanoCores");
        assert_absent(s, "pods[1].memory.rssBytes");
}

/* The runtime's network without a list of interfaces or a time (containerd
 * 1.6 gives the default interface alone): the pod's process's reading
 * instead, which has both, as cAdvisor's. */
static void test_summary_network_completed_from_procs(void **state)
{
        struct fixture *f = *state;
        write_file(f->cg, "kubepods/burstable/poduid-a/cgroup.procs", "4242\n");
        ck_error_t err = NULL;
        cleanup_json json_t *s = stats_summary_json(f->p, false, &err);
        assert_non_null(s);
        assert_keys(s, "pods[0].network", "time,name,rxBytes,rxErrors,txBytes,txErrors,interfaces");
        assert_int_equal(jint(s, "pods[0].network.rxBytes"), 900);
        assert_int_equal(json_array_size(jget(s, "pods[0].network.interfaces")), 1);
        assert_string_equal(jstr(s, "pods[0].network.interfaces[0].name"), "eth0");
}

/* What ListContainerStats and the cgroups give for the fixture's pods. */
static void assert_partial_stats(json_t *s)
{
        assert_int_equal(json_array_size(jget(s, "pods")), 2);
        assert_int_equal(json_array_size(jget(s, "pods[0].containers")), 2);
        /* pod A's CPU and memory: its cgroup (what cAdvisor gives upstream) */
        assert_int_equal(jint(s, "pods[0].cpu.usageCoreNanoSeconds"), 7 * SEC);
        assert_int_equal(jint(s, "pods[0].cpu.usageNanoCores"), 0);
        assert_int_equal(jint(s, "pods[0].memory.workingSetBytes"), 8000);
        /* its network from one of its processes: none has /proc/<pid>/net/dev */
        assert_absent(s, "pods[0].network");
        /* process count: its containers' cgroup.procs */
        assert_int_equal(jint(s, "pods[0].process_stats.process_count"), 3);
        /* pod B has no pod cgroup readings: the sum of its containers */
        assert_int_equal(jint(s, "pods[1].cpu.usageCoreNanoSeconds"), 3 * SEC);
        assert_int_equal(jint(s, "pods[1].cpu.usageNanoCores"), 50000000);
        assert_int_equal(jint(s, "pods[1].memory.workingSetBytes"), 600);
        assert_int_equal(jint(s, "pods[1].memory.rssBytes"), 0);
        assert_int_equal(jint(s, "pods[1].network.rxBytes"), 900);
        assert_int_equal(jint(s, "pods[1].process_stats.process_count"), 2);
}

/* The gate on, and a runtime without ListPodSandboxStats */
static void test_summary_from_container_stats(void **state)
{
        struct fixture *f = *state;
        f->rt.no_sandbox_stats = true;
        ck_error_t err = NULL;
        cleanup_json json_t *s = stats_summary_json(f->p, false, &err);
        assert_non_null(s);
        assert_int_equal(atomic_load(&f->rt.sandbox_stats), 1);
        assert_int_equal(atomic_load(&f->rt.container_stats), 1);
        assert_partial_stats(s);
}

/* The gate off (the default): ListPodSandboxStats is never asked, though
 * the runtime has it */
static void test_summary_default_asks_container_stats(void **state)
{
        struct fixture *f = *state;
        ck_error_t err = NULL;
        cleanup_json json_t *s = stats_summary_json(f->p, false, &err);
        assert_non_null(s);
        assert_int_equal(atomic_load(&f->rt.sandbox_stats), 0);
        assert_int_equal(atomic_load(&f->rt.container_stats), 1);
        assert_partial_stats(s);
}

/* A runtime names a container's cgroup as it likes: the process count and
 * the cAdvisor view still find it. */
static void test_summary_container_cgroup_names(void **state)
{
        struct fixture *f = *state;
        static const char *const forms[] = {"cri-containerd-c-b1.scope", "crio-c-b1.scope",
                                            "crio-c-b1", "docker-c-b1.scope", "c-b1"};
        cleanup_free char *pod = xasprintf("%s/kubepods/besteffort/poduid-b", f->cg);
        ck_error_t err = NULL;
        for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
                cleanup_free char *old = xasprintf("%s/c-b1", pod);
                assert_int_equal(fs_remove_all(old, &err), 0);
                if (i > 0) {
                        cleanup_free char *prev = xasprintf("%s/%s", pod, forms[i - 1]);
                        assert_int_equal(fs_remove_all(prev, &err), 0);
                }
                cleanup_free char *rel =
                    xasprintf("kubepods/besteffort/poduid-b/%s/cgroup.procs", forms[i]);
                write_file(f->cg, rel, i % 2 ? "4243\n" : "4243\n4244\n4245\n");
                advance(f, INTERVAL_MS * 1000000ll);
                cleanup_json json_t *s = stats_summary_json(f->p, false, &err);
                assert_non_null(s);
                if (jint(s, "pods[1].process_stats.process_count") != (i % 2 ? 1 : 3))
                        fail_msg("%s: process count %lld", forms[i],
                                 (long long)jint(s, "pods[1].process_stats.process_count"));
        }
}

/* The gate on: a ListPodSandboxStats that fails for another reason than
 * UNIMPLEMENTED fails the pods' stats, as upstream's ListPodStats */
static void test_summary_from_cri_fails(void **state)
{
        struct fixture *f = *state;
        f->rt.fail_sandbox_stats = GRPC_UNAVAILABLE;
        ck_error_t err = NULL;
        assert_null(stats_summary_json(f->p, false, &err));
        assert_string_equal(err->msg, "failed to list pod stats: CRI ListPodSandboxStats: rpc "
                                      "error 14: the runtime is unhappy");
        ck_error_release(&err);
        assert_int_equal(atomic_load(&f->rt.container_stats), 0);
}

/* No pod cgroups (cgroupsPerQOS false): ListContainerStats alone, the
 * pods' CPU and memory summed over their containers, no network */
static void test_summary_without_pod_cgroups(void **state)
{
        struct fixture *f = *state;
        ck_error_t err = NULL;
        cleanup_json json_t *s = stats_summary_json(f->p, false, &err);
        assert_non_null(s);
        assert_int_equal(atomic_load(&f->rt.sandbox_stats), 0);
        assert_int_equal(atomic_load(&f->rt.container_stats), 1);
        assert_int_equal(json_array_size(jget(s, "pods")), 2);
        /* pod A: its containers' sums, not its cgroup's 7 s */
        assert_int_equal(jint(s, "pods[0].cpu.usageCoreNanoSeconds"),
                         jint(s, "pods[0].containers[0].cpu.usageCoreNanoSeconds") +
                             jint(s, "pods[0].containers[1].cpu.usageCoreNanoSeconds"));
        assert_true(jint(s, "pods[0].cpu.usageCoreNanoSeconds") != 7 * SEC);
        assert_absent(s, "pods[0].network");
        assert_absent(s, "pods[0].process_stats");
}

static void test_summary_errors(void **state)
{
        struct fixture *f = *state;
        f->rt.fail_containers = GRPC_UNAVAILABLE;
        ck_error_t err = NULL;
        assert_null(stats_summary_json(f->p, false, &err));
        assert_non_null(err);
        assert_string_equal(err->msg, "failed to list pod stats: failed to get pod or container "
                                      "map: failed to list all containers: CRI ListContainers: "
                                      "rpc error 14: the runtime is unhappy");
        ck_error_release(&err);
        /* a failed refresh is kept for the interval too: the same error,
         * the runtime not asked again */
        f->rt.fail_containers = 0;
        assert_null(stats_summary_json(f->p, true, &err));
        assert_non_null(strstr(err->msg, "failed to list all containers"));
        ck_error_release(&err);
        assert_int_equal(atomic_load(&f->rt.list_containers), 1);

        advance(f, INTERVAL_MS * 1000000ll);
        f->rt.fail_image_fs = GRPC_UNAVAILABLE;
        assert_null(stats_summary_json(f->p, false, &err));
        assert_string_equal(err->msg, "failed to get imageFs stats: CRI ImageFsInfo: rpc error "
                                      "14: the runtime is unhappy");
        ck_error_release(&err);
        /* GetCPUAndMemoryStats needs no image filesystem */
        cleanup_json json_t *s = stats_summary_json(f->p, true, &err);
        assert_non_null(s);
        assert_int_equal(json_array_size(jget(s, "pods")), 2);
}

/* ---- The cache ------------------------------------------------------------------------- */

static void test_cache_within_interval(void **state)
{
        struct fixture *f = *state;
        ck_error_t err = NULL;
        json_t *s = stats_summary_json(f->p, false, &err);
        assert_non_null(s);
        json_decref(s);
        assert_int_equal(atomic_load(&f->rt.list_containers), 1);
        int requests = atomic_load(&f->server->requests);

        /* within the interval: the cached snapshot, no runtime call */
        advance(f, INTERVAL_MS * 1000000ll - 1);
        s = stats_summary_json(f->p, true, &err);
        assert_non_null(s);
        json_decref(s);
        s = stats_summary_json(f->p, false, &err);
        assert_non_null(s);
        json_decref(s);
        struct metrics_registry *r = metrics_registry_new();
        assert_int_equal(stats_register_resource_metrics(r, f->p, &err), 0);
        cleanup_metrics_buf struct metrics_buf b = {0};
        metrics_render(r, &b);
        metrics_registry_free(r);
        assert_int_equal(atomic_load(&f->server->requests), requests);

        /* the interval is over: one refresh */
        advance(f, 1);
        s = stats_summary_json(f->p, false, &err);
        assert_non_null(s);
        json_decref(s);
        assert_int_equal(atomic_load(&f->rt.list_containers), 2);
        assert_int_equal(atomic_load(&f->rt.image_fs), 2);
}

/* The eviction manager's pass with nothing to rank reads the node alone: no
 * CRI listing; a full snapshot within the interval serves it, and a node-only
 * one never serves a caller that needs the pods. */
static void test_node_only_eviction_view(void **state)
{
        struct fixture *f = *state;
        ck_error_t err = NULL;
        struct stats_eviction_view v;
        assert_int_equal(stats_eviction_view(f->p, false, false, &v, &err), 0);
        assert_false(v.has_pods);
        assert_int_equal(v.n_pods, 0);
        assert_true(v.memory.ok);
        assert_true(v.nodefs.ok);
        stats_eviction_view_release(&v);
        assert_int_equal(atomic_load(&f->rt.list_containers), 0);
        assert_int_equal(atomic_load(&f->rt.image_fs), 1);

        /* the pods wanted: a full refresh, though the node-only one is recent */
        assert_int_equal(stats_eviction_view(f->p, false, true, &v, &err), 0);
        assert_true(v.has_pods);
        assert_int_equal(v.n_pods, 2);
        stats_eviction_view_release(&v);
        assert_int_equal(atomic_load(&f->rt.list_containers), 1);

        /* a summary and a node-only pass within the interval: the full one */
        json_t *s = stats_summary_json(f->p, false, &err);
        assert_non_null(s);
        assert_int_equal(json_array_size(json_object_get(s, "pods")), 2);
        json_decref(s);
        assert_int_equal(stats_eviction_view(f->p, false, false, &v, &err), 0);
        assert_false(v.has_pods);
        assert_int_equal(v.n_pods, 0);
        stats_eviction_view_release(&v);
        assert_int_equal(atomic_load(&f->rt.list_containers), 1);
        assert_int_equal(atomic_load(&f->rt.image_fs), 2);

        /* fresh, within the interval: read again, the node alone; then a
         * summary lists again */
        advance(f, 1000000);
        assert_int_equal(stats_eviction_view(f->p, true, false, &v, &err), 0);
        stats_eviction_view_release(&v);
        assert_int_equal(atomic_load(&f->rt.image_fs), 3);
        assert_int_equal(atomic_load(&f->rt.list_containers), 1);
        s = stats_summary_json(f->p, false, &err);
        assert_non_null(s);
        assert_int_equal(json_array_size(json_object_get(s, "pods")), 2);
        json_decref(s);
        assert_int_equal(atomic_load(&f->rt.list_containers), 2);
}

/* The node's signals while the runtime cannot list its containers: the
 * node-only view works, the one with the pods fails. */
static void test_node_only_eviction_view_runtime_fails(void **state)
{
        struct fixture *f = *state;
        f->rt.fail_containers = GRPC_UNAVAILABLE;
        ck_error_t err = NULL;
        struct stats_eviction_view v;
        assert_int_equal(stats_eviction_view(f->p, false, false, &v, &err), 0);
        assert_true(v.memory.ok);
        stats_eviction_view_release(&v);
        assert_true(stats_eviction_view(f->p, false, true, &v, &err) < 0);
        assert_non_null(err);
        ck_error_release(&err);
}

static void *node_only_thread(void *arg)
{
        struct fixture *f = arg;
        ck_error_t err = NULL;
        struct stats_eviction_view v;
        if (stats_eviction_view(f->p, false, false, &v, &err) < 0)
                return NULL;
        bool ok = !v.has_pods && v.n_pods == 0;
        stats_eviction_view_release(&v);
        return ok ? arg : NULL;
}

static void *summary_pods_thread(void *arg)
{
        struct fixture *f = arg;
        ck_error_t err = NULL;
        json_t *s = stats_summary_json(f->p, false, &err);
        size_t n = s ? json_array_size(json_object_get(s, "pods")) : 0;
        json_decref(s);
        return n == 2 ? arg : NULL;
}

/* A summary that arrives while a node-only refresh runs waits for it, then
 * refreshes with the pods: it never gets the node-only snapshot. */
static void test_summary_waits_out_node_only_refresh(void **state)
{
        struct fixture *f = *state;
        atomic_store(&f->rt.hold_image_fs, true);
        pthread_t node, summaries[4];
        assert_int_equal(pthread_create(&node, NULL, node_only_thread, f), 0);
        while (atomic_load(&f->rt.image_fs) == 0)
                usleep(1000);
        /* the node-only refresh is under way (held in ImageFsInfo) */
        for (size_t i = 0; i < 4; i++)
                assert_int_equal(pthread_create(&summaries[i], NULL, summary_pods_thread, f), 0);
        usleep(50000);
        atomic_store(&f->rt.hold_image_fs, false);
        void *ret;
        assert_int_equal(pthread_join(node, &ret), 0);
        assert_ptr_equal(ret, f);
        for (size_t i = 0; i < 4; i++) {
                assert_int_equal(pthread_join(summaries[i], &ret), 0);
                assert_ptr_equal(ret, f);
        }
        /* one full refresh for the four */
        assert_int_equal(atomic_load(&f->rt.list_containers), 1);
}

static void *summary_thread(void *arg)
{
        struct fixture *f = arg;
        ck_error_t err = NULL;
        json_t *s = stats_summary_json(f->p, false, &err);
        json_decref(s);
        return s ? arg : NULL;
}

/* Many HTTP threads at once: one refresh, shared by all. */
static void test_cache_concurrent_callers(void **state)
{
        struct fixture *f = *state;
        pthread_t t[8];
        for (size_t i = 0; i < 8; i++)
                assert_int_equal(pthread_create(&t[i], NULL, summary_thread, f), 0);
        for (size_t i = 0; i < 8; i++) {
                void *ret;
                assert_int_equal(pthread_join(t[i], &ret), 0);
                assert_ptr_equal(ret, f);
        }
        assert_int_equal(atomic_load(&f->rt.list_containers), 1);
        assert_int_equal(atomic_load(&f->rt.list_sandboxes), 1);
}

/* ---- /metrics/resource ----------------------------------------------------------------- */

static struct stats_container metric_container(const char *name, int64_t start_ns, int64_t t)
{
        struct stats_container c = {.name = xstrdup(name), .start_ns = start_ns};
        c.cpu = (struct stats_cpu){
            .ok = true, .time_ns = t, .usage_core_nano_seconds = stats_u64_of(10 * SEC)};
        c.memory =
            (struct stats_memory){.ok = true, .time_ns = t, .working_set = stats_u64_of(1000)};
        return c;
}

/* upstream's TestCollectResourceMetrics values, one snapshot */
static struct stats_snapshot *fixed_snapshot(void)
{
        const int64_t t = 1624396278302091597ll;
        struct stats_snapshot *s = stats__snapshot_new();
        s->node.cpu = (struct stats_cpu){
            .ok = true, .time_ns = t, .usage_core_nano_seconds = stats_u64_of(10 * SEC)};
        s->node.memory =
            (struct stats_memory){.ok = true, .time_ns = t, .working_set = stats_u64_of(1000)};
        s->node.swap =
            (struct stats_swap){.ok = true, .time_ns = t + 10 * SEC, .usage = stats_u64_of(500)};
        s->n_pods = 2;
        s->pods = xcalloc(2, sizeof(*s->pods));
        struct stats_pod *a = &s->pods[0], *b = &s->pods[1];
        a->name = xstrdup("pod_a");
        a->namespace = xstrdup("namespace_a");
        a->uid = xstrdup("uid-a");
        a->n_containers = 2;
        a->containers = xcalloc(2, sizeof(*a->containers));
        a->containers[0] = metric_container("container_a", t - 30 * SEC, t);
        a->containers[0].swap = (struct stats_swap){
            .ok = true, .time_ns = t, .usage = stats_u64_of(1000), .available = stats_u64_of(9000)};
        a->containers[1] = metric_container("container_b", t - 120 * SEC, t);
        a->cpu = (struct stats_cpu){
            .ok = true, .time_ns = t, .usage_core_nano_seconds = stats_u64_of(10 * SEC)};
        a->memory =
            (struct stats_memory){.ok = true, .time_ns = t, .working_set = stats_u64_of(1000)};
        a->swap = (struct stats_swap){.ok = true, .time_ns = t, .usage = stats_u64_of(5000)};
        b->name = xstrdup("pod_b");
        b->namespace = xstrdup("namespace_b");
        b->uid = xstrdup("uid-b");
        b->n_containers = 1;
        b->containers = xcalloc(1, sizeof(*b->containers));
        /* a start time before the epoch: no container_start_time_seconds */
        b->containers[0] = metric_container("container_a", -t, t);
        /* a pod without CPU / memory values: no pod series */
        b->cpu = (struct stats_cpu){.ok = true, .time_ns = t};
        return s;
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

static const char expected_resource_metrics[] =
    "# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the "
    "container in core-seconds\n"
    "# TYPE container_cpu_usage_seconds_total counter\n"
    "container_cpu_usage_seconds_total{container=\"container_a\",namespace=\"namespace_a\","
    "pod=\"pod_a\"} 10 1624396278302\n"
    "container_cpu_usage_seconds_total{container=\"container_a\",namespace=\"namespace_b\","
    "pod=\"pod_b\"} 10 1624396278302\n"
    "container_cpu_usage_seconds_total{container=\"container_b\",namespace=\"namespace_a\","
    "pod=\"pod_a\"} 10 1624396278302\n"
    "# HELP container_memory_working_set_bytes [STABLE] Current working set of the container in "
    "bytes\n"
    "# TYPE container_memory_working_set_bytes gauge\n"
    "container_memory_working_set_bytes{container=\"container_a\",namespace=\"namespace_a\","
    "pod=\"pod_a\"} 1000 1624396278302\n"
    "container_memory_working_set_bytes{container=\"container_a\",namespace=\"namespace_b\","
    "pod=\"pod_b\"} 1000 1624396278302\n"
    "container_memory_working_set_bytes{container=\"container_b\",namespace=\"namespace_a\","
    "pod=\"pod_a\"} 1000 1624396278302\n"
    "# HELP container_start_time_seconds [STABLE] Start time of the container since unix epoch "
    "in seconds\n"
    "# TYPE container_start_time_seconds gauge\n"
    "container_start_time_seconds{container=\"container_a\",namespace=\"namespace_a\","
    "pod=\"pod_a\"} 1.6243962483020916e+09\n"
    "container_start_time_seconds{container=\"container_b\",namespace=\"namespace_a\","
    "pod=\"pod_a\"} 1.6243961583020916e+09\n"
    "# HELP container_swap_limit_bytes [ALPHA] Current amount of the container swap limit in "
    "bytes. Reported only on non-windows systems\n"
    "# TYPE container_swap_limit_bytes gauge\n"
    "container_swap_limit_bytes{container=\"container_a\",namespace=\"namespace_a\","
    "pod=\"pod_a\"} 10000 1624396278302\n"
    "# HELP container_swap_usage_bytes [ALPHA] Current amount of the container swap usage in "
    "bytes. Reported only on non-windows systems\n"
    "# TYPE container_swap_usage_bytes gauge\n"
    "container_swap_usage_bytes{container=\"container_a\",namespace=\"namespace_a\","
    "pod=\"pod_a\"} 1000 1624396278302\n"
    "# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in "
    "core-seconds\n"
    "# TYPE node_cpu_usage_seconds_total counter\n"
    "node_cpu_usage_seconds_total 10 1624396278302\n"
    "# HELP node_memory_working_set_bytes [STABLE] Current working set of the node in bytes\n"
    "# TYPE node_memory_working_set_bytes gauge\n"
    "node_memory_working_set_bytes 1000 1624396278302\n"
    "# HELP node_swap_usage_bytes [ALPHA] Current swap usage of the node in bytes. Reported "
    "only on non-windows systems\n"
    "# TYPE node_swap_usage_bytes gauge\n"
    "node_swap_usage_bytes 500 1624396288302\n"
    "# HELP pod_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the pod in "
    "core-seconds\n"
    "# TYPE pod_cpu_usage_seconds_total counter\n"
    "pod_cpu_usage_seconds_total{namespace=\"namespace_a\",pod=\"pod_a\"} 10 1624396278302\n"
    "# HELP pod_memory_working_set_bytes [STABLE] Current working set of the pod in bytes\n"
    "# TYPE pod_memory_working_set_bytes gauge\n"
    "pod_memory_working_set_bytes{namespace=\"namespace_a\",pod=\"pod_a\"} 1000 1624396278302\n"
    "# HELP pod_swap_usage_bytes [ALPHA] Current amount of the pod swap usage in bytes. "
    "Reported only on non-windows systems\n"
    "# TYPE pod_swap_usage_bytes gauge\n"
    "pod_swap_usage_bytes{namespace=\"namespace_a\",pod=\"pod_a\"} 5000 1624396278302\n"
    "# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container "
    "metrics, 0 otherwise\n"
    "# TYPE resource_scrape_error gauge\n"
    "resource_scrape_error 0\n";

static char *render(struct fixture *f, bool show_hidden)
{
        struct metrics_registry *r = metrics_registry_new();
        ck_error_t err = NULL;
        assert_int_equal(stats_register_resource_metrics_hidden(r, f->p, show_hidden, &err), 0);
        struct metrics_buf b = {0};
        assert_int_equal(metrics_render(r, &b), 0);
        metrics_registry_free(r);
        char *out = xstrdup(b.data ? b.data : "");
        metrics_buf_release(&b);
        return out;
}

static void test_resource_metrics_text(void **state)
{
        struct fixture *f = *state;
        install_snapshot(f, fixed_snapshot());
        int requests = atomic_load(&f->server->requests);
        cleanup_free char *text = render(f, false);
        assert_string_equal(text, expected_resource_metrics);
        assert_int_equal(atomic_load(&f->server->requests), requests);

        /* --show-hidden-metrics-for-version: scrape_error too */
        cleanup_free char *all = render(f, true);
        const char *want = "# HELP scrape_error [ALPHA] (Deprecated since 1.29.0) 1 if there was "
                           "an error while getting container metrics, 0 otherwise\n"
                           "# TYPE scrape_error gauge\n"
                           "scrape_error 0\n";
        assert_non_null(strstr(all, want));
        assert_int_equal(strlen(all), strlen(expected_resource_metrics) + strlen(want));

        /* a registry holds the families once */
        struct metrics_registry *r = metrics_registry_new();
        ck_error_t err = NULL;
        assert_int_equal(stats_register_resource_metrics(r, f->p, &err), 0);
        assert_true(stats_register_resource_metrics(r, f->p, &err) < 0);
        ck_error_release(&err);
        metrics_registry_free(r);
}

static void test_resource_metrics_error(void **state)
{
        struct fixture *f = *state;
        f->rt.fail_containers = GRPC_UNAVAILABLE;
        cleanup_free char *text = render(f, true);
        assert_string_equal(text, "# HELP resource_scrape_error [STABLE] 1 if there was an error "
                                  "while getting container metrics, 0 otherwise\n"
                                  "# TYPE resource_scrape_error gauge\n"
                                  "resource_scrape_error 1\n"
                                  "# HELP scrape_error [ALPHA] (Deprecated since 1.29.0) 1 if "
                                  "there was an error while getting container metrics, 0 "
                                  "otherwise\n"
                                  "# TYPE scrape_error gauge\n"
                                  "scrape_error 1\n");
}

/* The provider's own readings rendered: the runtime's values and times. */
static void test_resource_metrics_from_runtime(void **state)
{
        struct fixture *f = *state;
        cleanup_free char *text = render(f, false);
        const char *lines[] = {
            "container_cpu_usage_seconds_total{container=\"app\",namespace=\"default\",pod=\"web\"}"
            " "
            "2 1700000100000\n",
            "container_memory_working_set_bytes{container=\"sidecar\",namespace=\"default\","
            "pod=\"web\"} 2000 1700000100000\n",
            "container_start_time_seconds{container=\"sidecar\",namespace=\"default\",pod=\"web\"} "
            "1.70000002e+09\n",
            "container_swap_limit_bytes{container=\"app\",namespace=\"default\",pod=\"web\"} 100 "
            "1700000100000\n",
            "node_cpu_usage_seconds_total 100 1700000100000\n",
            "node_memory_working_set_bytes 3.5e+06 1700000100000\n",
            "pod_cpu_usage_seconds_total{namespace=\"default\",pod=\"web\"} 5 1700000100000\n",
            "pod_memory_working_set_bytes{namespace=\"kube-system\",pod=\"dns\"} 700 "
            "1700000100000\n",
            "resource_scrape_error 0\n",
        };
        for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
                if (strstr(text, lines[i]) == NULL)
                        fail_msg("missing line %s in:\n%s", lines[i], text);
}

/* What a refresh keeps for /metrics/cadvisor: the cgroups read (those with
 * readings), the runtime's IDs, the sandbox. */
static void test_cadvisor_views(void **state)
{
        struct fixture *f = *state;
        struct stats_snapshot *s = stats__get(f->p);
        assert_null(s->pods_error);
        const struct stats_pod *web = NULL;
        for (size_t i = 0; i < s->n_pods; i++)
                if (strcmp(s->pods[i].name, "web") == 0)
                        web = &s->pods[i];
        assert_non_null(web);
        assert_string_equal(web->cgroup.name, "/kubepods/burstable/poduid-a");
        assert_int_equal(web->cgroup.time_ns, T0);
        assert_int_equal(web->cgroup.s.cpu_usage_ns, 7 * SEC);
        assert_string_equal(web->sandbox_id, "sb-a");
        assert_null(web->sandbox_cgroup.name); /* no <pod>/sb-a cgroup */
        assert_int_equal(web->n_containers, 2);
        const struct stats_container *app = &web->containers[0], *sidecar = &web->containers[1];
        assert_string_equal(app->id, "c-a1");
        assert_null(app->cgroup.name); /* c-a1 has no readings */
        assert_string_equal(sidecar->id, "c-a2");
        assert_string_equal(sidecar->cgroup.name, "/kubepods/burstable/poduid-a/c-a2");
        assert_int_equal(sidecar->cgroup.s.usage, 2048);
        assert_int_equal(sidecar->cgroup.s.cache, 548);
        assert_int_equal(sidecar->cgroup.s.processes, 1);
        assert_string_equal(sidecar->image, "");
        stats__snapshot_unref(s);
}

static void test_provider_options(void **state)
{
        (void)state;
        struct stats_provider *p = NULL;
        ck_error_t err = NULL;
        struct stats_options o = {.runtime_endpoint = "tcp://127.0.0.1:1", .root_dir = "/"};
        assert_true(stats_provider_new(&o, &p, &err) < 0);
        assert_non_null(strstr(err->msg, "stats provider: unsupported CRI endpoint"));
        ck_error_release(&err);
        o.runtime_endpoint = "unix:///nonexistent.sock";
        o.cgroup_root = "/a/../b";
        assert_true(stats_provider_new(&o, &p, &err) < 0);
        assert_non_null(strstr(err->msg, "invalid cgroup root"));
        ck_error_release(&err);
        stats_provider_free(NULL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_parse_meminfo),
            cmocka_unit_test(test_parse_proc_stat),
            cmocka_unit_test(test_parse_keyed_and_uint),
            cmocka_unit_test(test_parse_psi),
            cmocka_unit_test(test_parse_loadavg_and_cpu_list),
            cmocka_unit_test(test_parse_net_dev),
            cmocka_unit_test(test_parse_proc_cgroup),
            cmocka_unit_test(test_cgroup_sample_v2),
            cmocka_unit_test(test_cgroup_sample_v2_root),
            cmocka_unit_test(test_cgroup_sample_v1),
            cmocka_unit_test(test_nano_cores_from_two_samples),
            cmocka_unit_test(test_disk_usage),
            cmocka_unit_test(test_machine_info_read),
            cmocka_unit_test(test_provider_options),
            cmocka_unit_test_setup_teardown(test_summary_shape, setup_from_cri, teardown),
            cmocka_unit_test_setup_teardown(test_summary_only_cpu_and_memory, setup_from_cri,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_summary_from_container_stats, setup_from_cri,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_summary_default_asks_container_stats, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_summary_container_cgroup_names, setup, teardown),
            cmocka_unit_test_setup_teardown(test_summary_from_cri_fails, setup_from_cri, teardown),
            cmocka_unit_test_setup_teardown(test_summary_without_pod_cgroups, setup_no_pod_cgroups,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_summary_network_completed_from_procs,
                                            setup_from_cri, teardown),
            cmocka_unit_test_setup_teardown(test_summary_errors, setup, teardown),
            cmocka_unit_test_setup_teardown(test_cache_within_interval, setup, teardown),
            cmocka_unit_test_setup_teardown(test_cache_concurrent_callers, setup, teardown),
            cmocka_unit_test_setup_teardown(test_node_only_eviction_view, setup, teardown),
            cmocka_unit_test_setup_teardown(test_node_only_eviction_view_runtime_fails, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_summary_waits_out_node_only_refresh, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_resource_metrics_text, setup, teardown),
            cmocka_unit_test_setup_teardown(test_resource_metrics_error, setup, teardown),
            cmocka_unit_test_setup_teardown(test_resource_metrics_from_runtime, setup_from_cri,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_cadvisor_views, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
