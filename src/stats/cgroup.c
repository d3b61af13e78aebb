/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading one cgroup of the cgroupfs tree (v1: the cpuacct, memory and pids
 * hierarchies; v2: the unified one) for the stats: the files cAdvisor's
 * libcontainer handler reads, turned into a sample by
 * stats__cgroup_sample_parse().
 */
#include "stats/stats_internal.h"

#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CGROUP_FILE_MAX (256u << 10)
#define MAX_DEPTH 16

void stats__cgroupfs_init(struct stats_cgroupfs *fs, const char *root)
{
        fs->root = xstrdup(root ? root : "/sys/fs/cgroup");
        cleanup_free char *probe = xasprintf("%s/cgroup.controllers", fs->root);
        fs->v2 = access(probe, F_OK) == 0;
}

void stats__cgroupfs_clear(struct stats_cgroupfs *fs)
{
        free(fs->root);
        fs->root = NULL;
}

/* The cgroup's directory in a hierarchy ("" for v2): name "" or "/..." */
static char *dir_of(const struct stats_cgroupfs *fs, const char *controller, const char *name)
{
        const char *n = name ? name : "";
        if (strcmp(n, "/") == 0)
                n = "";
        const char *sep = (*n && *n != '/') ? "/" : "";
        if (fs->v2)
                return xasprintf("%s%s%s", fs->root, sep, n);
        return xasprintf("%s/%s%s%s", fs->root, controller, sep, n);
}

static bool is_root(const char *name)
{
        return name == NULL || *name == '\0' || strcmp(name, "/") == 0;
}

static char *read_in(const char *dir, const char *file)
{
        cleanup_free char *path = xasprintf("%s/%s", dir, file);
        char *buf = NULL;
        cleanup_error ck_error_t err = NULL;
        if (fs_read_file(path, CGROUP_FILE_MAX, &buf, NULL, &err) < 0)
                return NULL;
        return buf;
}

static bool is_dir(const char *path)
{
        struct stat st;
        return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool stats__cgroup_exists(const struct stats_cgroupfs *fs, const char *name)
{
        cleanup_free char *dir = dir_of(fs, "memory", name);
        if (is_dir(dir))
                return true;
        if (fs->v2)
                return false;
        free(dir);
        dir = dir_of(fs, "cpuacct", name);
        return is_dir(dir);
}

static char *procs_dir(const struct stats_cgroupfs *fs, const char *name);

/* The next pid of a cgroup.procs text at *s (advanced past it; 0 for a
 * number that is no pid), or -1 at its end or at something that is not a
 * number. */
static long long next_pid(const char **s)
{
        if (*s == NULL || **s == '\0')
                return -1;
        char *end;
        long long pid = strtoll(*s, &end, 10);
        if (end == *s)
                return -1;
        *s = end;
        while (**s == '\n')
                (*s)++;
        return pid > 0 ? pid : 0;
}

void stats__cgroup_fds(const struct stats_cgroupfs *fs, const char *name, const char *proc_root,
                       uint64_t *fds, uint64_t *sockets, int64_t *first_pid)
{
        *fds = *sockets = 0;
        *first_pid = 0;
        cleanup_free char *dir = procs_dir(fs, name);
        cleanup_free char *procs = read_in(dir, "cgroup.procs");
        const char *s = procs;
        for (long long pid; (pid = next_pid(&s)) >= 0;) {
                if (pid == 0)
                        continue;
                if (*first_pid == 0)
                        *first_pid = pid;
                cleanup_free char *fd_dir = xasprintf("%s/%lld/fd", proc_root, pid);
                DIR *d = opendir(fd_dir);
                if (d == NULL)
                        continue; /* gone, or not ours to see */
                struct dirent *e;
                while ((e = readdir(d)) != NULL) {
                        if (e->d_name[0] == '.')
                                continue;
                        (*fds)++;
                        char link[16];
                        ssize_t n = readlinkat(dirfd(d), e->d_name, link, sizeof(link));
                        if (n >= 7 && memcmp(link, "socket:", 7) == 0)
                                (*sockets)++;
                }
                closedir(d);
        }
}

bool stats__cgroup_read(const struct stats_cgroupfs *fs, const char *name, const char *proc_root,
                        struct stats_cgroup_sample *out)
{
        memset(out, 0, sizeof(*out));
        if (!stats__cgroup_exists(fs, name))
                return false;
        bool root = is_root(name);
        cleanup_free char *cpu_dir = dir_of(fs, "cpuacct", name);
        cleanup_free char *mem_dir = dir_of(fs, "memory", name);
        cleanup_free char *cpu_stat = NULL, *cpuacct = NULL, *mstat = NULL, *musage = NULL;
        cleanup_free char *mlimit = NULL, *susage = NULL, *slimit = NULL, *meminfo = NULL;
        cleanup_free char *cpu_psi = NULL, *mem_psi = NULL, *io_psi = NULL;
        /* the extras /metrics/cadvisor shows */
        cleanup_free char *cpuacct_stat = NULL, *cpu_max = NULL, *cpu_weight = NULL;
        cleanup_free char *cpu_shares = NULL, *cfs_period = NULL, *cfs_quota = NULL;
        cleanup_free char *mfailcnt = NULL, *mpeak = NULL, *mmin = NULL, *mevents = NULL;
        cleanup_free char *pids_current = NULL, *pids_max = NULL;
        cleanup_free char *pids_dir = dir_of(fs, "pids", name);
        if (fs->v2) {
                cpu_max = read_in(mem_dir, "cpu.max");
                cpu_weight = read_in(mem_dir, "cpu.weight");
                mpeak = read_in(mem_dir, "memory.peak");
                mmin = read_in(mem_dir, "memory.min");
                mevents = read_in(mem_dir, "memory.events");
        } else {
                cleanup_free char *cfs_dir = dir_of(fs, "cpu", name);
                cpuacct_stat = read_in(cpu_dir, "cpuacct.stat");
                cpu_shares = read_in(cfs_dir, "cpu.shares");
                cfs_period = read_in(cfs_dir, "cpu.cfs_period_us");
                cfs_quota = read_in(cfs_dir, "cpu.cfs_quota_us");
                mfailcnt = read_in(mem_dir, "memory.failcnt");
                mpeak = read_in(mem_dir, "memory.max_usage_in_bytes");
                mmin = read_in(mem_dir, "memory.soft_limit_in_bytes");
        }
        pids_current = read_in(pids_dir, "pids.current");
        pids_max = read_in(pids_dir, "pids.max");
        if (fs->v2) {
                cpu_stat = read_in(mem_dir, "cpu.stat");
                mstat = read_in(mem_dir, "memory.stat");
                musage = read_in(mem_dir, "memory.current");
                mlimit = read_in(mem_dir, "memory.max");
                susage = read_in(mem_dir, "memory.swap.current");
                slimit = read_in(mem_dir, "memory.swap.max");
                cpu_psi = read_in(mem_dir, "cpu.pressure");
                mem_psi = read_in(mem_dir, "memory.pressure");
                io_psi = read_in(mem_dir, "io.pressure");
        } else {
                cpuacct = read_in(cpu_dir, "cpuacct.usage");
                mstat = read_in(mem_dir, "memory.stat");
                musage = read_in(mem_dir, "memory.usage_in_bytes");
                mlimit = read_in(mem_dir, "memory.limit_in_bytes");
                slimit = read_in(mem_dir, "memory.memsw.limit_in_bytes");
        }
        if (root)
                meminfo = read_in(proc_root ? proc_root : "/proc", "meminfo");
        struct stats_cgroup_files f = {
            .cpu_stat = cpu_stat,
            .cpuacct_usage = cpuacct,
            .memory_stat = mstat,
            .memory_usage = musage,
            .memory_limit = mlimit,
            .swap_usage = susage,
            .swap_limit = slimit,
            .cpu_pressure = cpu_psi,
            .memory_pressure = mem_psi,
            .io_pressure = io_psi,
            .meminfo = meminfo,
            .cpuacct_stat = cpuacct_stat,
            .cpu_max = cpu_max,
            .cpu_weight = cpu_weight,
            .cpu_shares = cpu_shares,
            .cfs_period = cfs_period,
            .cfs_quota = cfs_quota,
            .memory_failcnt = mfailcnt,
            .memory_peak = mpeak,
            .memory_min = mmin,
            .memory_events = mevents,
            .pids_current = pids_current,
            .pids_max = pids_max,
        };
        stats__cgroup_sample_parse(fs->v2, root, &f, out);
        if (!out->has_cpu && !out->has_memory)
                return false;
        out->processes = (uint64_t)stats__cgroup_procs(fs, name, false, NULL);
        return true;
}

static int64_t mtime_ns(const char *path)
{
        struct stat st;
        if (stat(path, &st) < 0)
                return 0;
        return (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
}

int64_t stats__cgroup_ctime_ns(const struct stats_cgroupfs *fs, const char *name)
{
        static const char *const v1[] = {"cpu", "cpuacct", "memory"};
        int64_t lowest = 0;
        size_t n = fs->v2 ? 1 : sizeof(v1) / sizeof(v1[0]);
        for (size_t i = 0; i < n; i++) {
                cleanup_free char *dir = dir_of(fs, v1[i], name);
                /* a directory's mtime moves when a child cgroup is made; the
                 * events / clone_children file's does not (cAdvisor) */
                cleanup_free char *file =
                    xasprintf("%s/%s", dir, fs->v2 ? "cgroup.events" : "cgroup.clone_children");
                int64_t t[2] = {mtime_ns(dir), mtime_ns(file)};
                for (size_t k = 0; k < 2; k++)
                        if (t[k] > 0 && (lowest == 0 || t[k] < lowest))
                                lowest = t[k];
        }
        return lowest;
}

/* Counts the pids of dir/cgroup.procs (and of its sub-cgroups when depth
 * allows). */
static int64_t count_procs(const char *dir, int depth, int64_t *first_pid)
{
        int64_t n = 0;
        cleanup_free char *procs = read_in(dir, "cgroup.procs");
        const char *s = procs;
        for (long long pid; (pid = next_pid(&s)) >= 0;) {
                if (pid == 0)
                        continue;
                n++;
                if (first_pid && *first_pid == 0)
                        *first_pid = pid;
        }
        if (depth <= 0)
                return n;
        DIR *d = opendir(dir);
        if (d == NULL)
                return n;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
                if (e->d_type != DT_DIR || strcmp(e->d_name, ".") == 0 ||
                    strcmp(e->d_name, "..") == 0)
                        continue;
                cleanup_free char *sub = xasprintf("%s/%s", dir, e->d_name);
                n += count_procs(sub, depth - 1, first_pid);
        }
        closedir(d);
        return n;
}

/* The directory whose cgroup.procs lists the cgroup's processes (v1: the
 * pids hierarchy, else the memory one). */
static char *procs_dir(const struct stats_cgroupfs *fs, const char *name)
{
        char *dir = dir_of(fs, "pids", name);
        if (!fs->v2 && !is_dir(dir)) {
                free(dir);
                dir = dir_of(fs, "memory", name);
        }
        return dir;
}

int64_t stats__cgroup_procs(const struct stats_cgroupfs *fs, const char *name, bool recursive,
                            int64_t *first_pid)
{
        if (first_pid)
                *first_pid = 0;
        cleanup_free char *dir = procs_dir(fs, name);
        return count_procs(dir, recursive ? MAX_DEPTH : 0, first_pid);
}

void stats__cgroup_blkio(const struct stats_cgroupfs *fs, const char *name, struct stats_blkio *out)
{
        *out = (struct stats_blkio){0};
        cleanup_free char *dir = dir_of(fs, "blkio", name);
        if (fs->v2) {
                cleanup_free char *io = read_in(dir, "io.stat");
                stats__blkio_parse_v2(io, out);
                return;
        }
        /* runc's order: a table is taken when its io_serviced file lists a
         * device (the debug-only bfq and the pre-5.0 cfq extras, sectors
         * and times, are not read) */
        static const char *const tables[][2] = {
            {"blkio.bfq.io_serviced_recursive", "blkio.bfq.io_service_bytes_recursive"},
            {"blkio.io_serviced_recursive", "blkio.io_service_bytes_recursive"},
            {"blkio.throttle.io_serviced_recursive", "blkio.throttle.io_service_bytes_recursive"},
            {"blkio.throttle.io_serviced", "blkio.throttle.io_service_bytes"},
        };
        for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
                cleanup_free char *ios = read_in(dir, tables[i][0]);
                if (ios == NULL || strchr(ios, ':') == NULL)
                        continue; /* absent, or "Total 0" alone: no device */
                cleanup_free char *bytes = read_in(dir, tables[i][1]);
                stats__blkio_parse_v1(bytes, ios, out);
                bool listed = false;
                for (size_t k = 0; k < out->n && !listed; k++)
                        listed = out->devs[k].in_ios;
                if (listed)
                        return;
                stats__blkio_clear(out);
        }
}
