/* SPDX-License-Identifier: Apache-2.0 */
/*
 * client_golang's process collector (prometheus/collectors
 * NewProcessCollector over prometheus/procfs), as component-base's
 * legacyregistry registers it raw, so HELP has no stability annotation.
 * Each family reads what it needs from /proc/self when rendered:
 *
 *   /proc/self/stat         cpu (utime+stime)/USER_HZ, vsize, rss*pagesize,
 *                           start = btime (/proc/stat) + starttime/USER_HZ
 *   /proc/self/fd           open fds (its size on Linux >= 6.2, else counted)
 *   RLIMIT_NOFILE, _AS      soft limits, as /proc/self/limits shows them;
 *                           "unlimited" is 2^64-1 in both
 *   /proc/self/net/netstat  IpExt InOctets / OutOctets
 *
 * A value that cannot be read is left out: the collector's reportErrors is
 * off by default.
 */
#include "metrics/metrics.h"

#include "util/cleanup.h"
#include "util/fsutil.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* procfs's userHZ: the kernel's USER_HZ, which sysconf reports. */
static double user_hz(void)
{
        long hz = sysconf(_SC_CLK_TCK);
        return hz > 0 ? (double)hz : 100;
}

static char *read_proc(const char *path)
{
        cleanup_error ck_error_t err = NULL;
        char *buf = NULL;
        if (fs_read_file(path, 1 << 22, &buf, NULL, &err) < 0)
                return NULL;
        return buf;
}

struct self_stat {
        unsigned long long utime, stime, starttime, vsize;
        long long rss; /* pages */
};

/* proc(5): the fields after the parenthesised comm, which may hold spaces
 * or parentheses itself, hence the last ')'. */
static int read_self_stat(struct self_stat *st)
{
        cleanup_free char *buf = read_proc("/proc/self/stat");
        if (buf == NULL)
                return -1;
        char *p = strrchr(buf, ')');
        if (p == NULL)
                return -1;
        int field = 2; /* comm */
        char *save = NULL;
        for (char *tok = strtok_r(p + 1, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
                switch (++field) {
                case 14:
                        st->utime = strtoull(tok, NULL, 10);
                        break;
                case 15:
                        st->stime = strtoull(tok, NULL, 10);
                        break;
                case 22:
                        st->starttime = strtoull(tok, NULL, 10);
                        break;
                case 23:
                        st->vsize = strtoull(tok, NULL, 10);
                        break;
                case 24:
                        st->rss = strtoll(tok, NULL, 10);
                        break;
                }
        }
        return field >= 24 ? 0 : -1;
}

static void collect_cpu(void *ctx, struct metrics_emit *e)
{
        (void)ctx;
        struct self_stat st;
        if (read_self_stat(&st) == 0)
                metrics_emit(e, NULL, (double)(st.utime + st.stime) / user_hz());
}

static void collect_vsize(void *ctx, struct metrics_emit *e)
{
        (void)ctx;
        struct self_stat st;
        if (read_self_stat(&st) == 0)
                metrics_emit(e, NULL, (double)st.vsize);
}

static void collect_rss(void *ctx, struct metrics_emit *e)
{
        (void)ctx;
        struct self_stat st;
        if (read_self_stat(&st) == 0)
                metrics_emit(e, NULL, (double)st.rss * (double)sysconf(_SC_PAGESIZE));
}

/* The "btime" line of /proc/stat (never its first line): boot time in
 * seconds since the epoch. */
static int read_boot_time(unsigned long long *btime)
{
        cleanup_free char *buf = read_proc("/proc/stat");
        const char *line = buf ? strstr(buf, "\nbtime ") : NULL;
        if (line == NULL)
                return -1;
        *btime = strtoull(line + 7, NULL, 10);
        return 0;
}

static void collect_start_time(void *ctx, struct metrics_emit *e)
{
        (void)ctx;
        struct self_stat st;
        unsigned long long btime;
        if (read_self_stat(&st) == 0 && read_boot_time(&btime) == 0)
                metrics_emit(e, NULL, (double)btime + (double)st.starttime / user_hz());
}

static void collect_open_fds(void *ctx, struct metrics_emit *e)
{
        (void)ctx;
        struct stat sb;
        if (stat("/proc/self/fd", &sb) == 0 && sb.st_size > 0) {
                metrics_emit(e, NULL, (double)sb.st_size);
                return;
        }
        int fd = TEMP_FAILURE_RETRY_INT(open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (fd < 0)
                return;
        DIR *d = fdopendir(fd);
        if (d == NULL) {
                close(fd);
                return;
        }
        size_t n = 0;
        for (struct dirent *de; (de = readdir(d)) != NULL;)
                if (de->d_name[0] != '.' && atoi(de->d_name) != fd)
                        n++; /* not counting the fd that reads the directory */
        closedir(d);
        metrics_emit(e, NULL, (double)n);
}

static void emit_soft_limit(struct metrics_emit *e, int resource)
{
        struct rlimit rl;
        if (getrlimit(resource, &rl) == 0)
                metrics_emit(e, NULL, (double)rl.rlim_cur);
}

static void collect_max_fds(void *ctx, struct metrics_emit *e)
{
        (void)ctx;
        emit_soft_limit(e, RLIMIT_NOFILE);
}

static void collect_vm_max(void *ctx, struct metrics_emit *e)
{
        (void)ctx;
        emit_soft_limit(e, RLIMIT_AS);
}

/* procfs ProcNetstat: lines come in pairs, "Proto: names..." then
 * "Proto: values...".  A missing field reads 0 (client_golang's nil check). */
static int read_ipext(const char *field, double *out)
{
        cleanup_free char *buf = read_proc("/proc/self/net/netstat");
        if (buf == NULL)
                return -1;
        *out = 0;
        char *save_lines = NULL;
        for (char *names = strtok_r(buf, "\n", &save_lines); names;
             names = strtok_r(NULL, "\n", &save_lines)) {
                char *values = strtok_r(NULL, "\n", &save_lines);
                if (values == NULL)
                        break;
                if (strncmp(names, "IpExt: ", 7) != 0)
                        continue;
                char *sn = NULL, *sv = NULL;
                char *n = strtok_r(names + 7, " ", &sn);
                char *v = strtok_r(values + 7, " ", &sv);
                for (; n && v; n = strtok_r(NULL, " ", &sn), v = strtok_r(NULL, " ", &sv))
                        if (strcmp(n, field) == 0) {
                                *out = strtod(v, NULL);
                                break;
                        }
                break;
        }
        return 0;
}

static void collect_net_rx(void *ctx, struct metrics_emit *e)
{
        (void)ctx;
        double v;
        if (read_ipext("InOctets", &v) == 0)
                metrics_emit(e, NULL, v);
}

static void collect_net_tx(void *ctx, struct metrics_emit *e)
{
        (void)ctx;
        double v;
        if (read_ipext("OutOctets", &v) == 0)
                metrics_emit(e, NULL, v);
}

/* Names, types and HELP of client_golang v1.23's process_collector.go. */
static const struct {
        const char *name, *help;
        enum metrics_type type;
        metrics_collect_fn collect;
} process_families[] = {
    {"process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
     METRICS_COUNTER, collect_cpu},
    {"process_open_fds", "Number of open file descriptors.", METRICS_GAUGE, collect_open_fds},
    {"process_max_fds", "Maximum number of open file descriptors.", METRICS_GAUGE, collect_max_fds},
    {"process_virtual_memory_bytes", "Virtual memory size in bytes.", METRICS_GAUGE, collect_vsize},
    {"process_virtual_memory_max_bytes", "Maximum amount of virtual memory available in bytes.",
     METRICS_GAUGE, collect_vm_max},
    {"process_resident_memory_bytes", "Resident memory size in bytes.", METRICS_GAUGE, collect_rss},
    {"process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
     METRICS_GAUGE, collect_start_time},
    {"process_network_receive_bytes_total",
     "Number of bytes received by the process over the network.", METRICS_COUNTER, collect_net_rx},
    {"process_network_transmit_bytes_total",
     "Number of bytes sent by the process over the network.", METRICS_COUNTER, collect_net_tx},
};

int metrics_register_process(struct metrics_registry *r, ck_error_t *err)
{
        for (size_t i = 0; i < ARRAY_SIZE(process_families); i++) {
                struct metrics_opts o = {
                    .name = process_families[i].name,
                    .help = process_families[i].help,
                    .type = process_families[i].type,
                    .stability = METRICS_RAW,
                    .collect = process_families[i].collect,
                };
                if (metrics_register(r, &o, NULL, err) < 0)
                        return ck_error_wrap(err, "process metrics");
        }
        return 0;
}
