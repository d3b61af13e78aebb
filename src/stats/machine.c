/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The machine's facts (cAdvisor's MachineInfo: NumCores, MemoryCapacity,
 * SwapCapacity, BootID, MachineID, SystemUUID; util.GetBootTime), read once
 * per process, and the statfs of a directory (fs.Info).
 */
#include "stats/stats_internal.h"

#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define SMALL_FILE_MAX (64u << 10)
#define PROC_STAT_MAX (4u << 20) /* one "cpuN" line per CPU */

/* The file under root (NULL when unreadable). */
static char *read_under(const char *root, const char *rel, size_t max)
{
        cleanup_free char *path = xasprintf("%s/%s", root, rel);
        char *buf = NULL;
        cleanup_error ck_error_t err = NULL;
        if (fs_read_file(path, max, &buf, NULL, &err) < 0)
                return NULL;
        return buf;
}

/* The first line, trimmed, into dst ("" when unreadable or empty). */
static void first_line_under(const char *root, const char *rel, char *dst, size_t size)
{
        dst[0] = '\0';
        cleanup_free char *buf = read_under(root, rel, SMALL_FILE_MAX);
        if (buf == NULL)
                return;
        const char *s = buf;
        while (isspace((unsigned char)*s))
                s++;
        size_t n = strcspn(s, "\n");
        while (n > 0 && isspace((unsigned char)s[n - 1]))
                n--;
        if (n >= size)
                n = size - 1;
        memcpy(dst, s, n);
        dst[n] = '\0';
}

static int64_t count_cores(const char *sys_root)
{
        cleanup_free char *online =
            read_under(sys_root, "devices/system/cpu/online", SMALL_FILE_MAX);
        int64_t n = online ? stats__parse_cpu_list(online) : 0;
        if (n > 0)
                return n;
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        if (c > 0)
                return c;
        cpu_set_t set;
        if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
                return CPU_COUNT(&set);
        return 1;
}

void stats_machine_info_read(const char *proc_root, const char *sys_root, const char *etc_root,
                             const char *var_lib_root, struct stats_machine_info *out)
{
        memset(out, 0, sizeof(*out));
        out->num_cores = count_cores(sys_root);

        cleanup_free char *meminfo = read_under(proc_root, "meminfo", SMALL_FILE_MAX);
        if (meminfo) {
                struct stats_meminfo mi;
                stats__parse_meminfo(meminfo, &mi);
                if (mi.has_total && mi.total <= INT64_MAX)
                        out->memory_capacity = (int64_t)mi.total;
                if (mi.has_swap_total && mi.swap_total <= INT64_MAX)
                        out->swap_capacity = (int64_t)mi.swap_total;
        }
        cleanup_free char *stat = read_under(proc_root, "stat", PROC_STAT_MAX);
        if (stat) {
                struct stats_proc_stat ps;
                stats__parse_proc_stat(stat, &ps);
                if (ps.has_btime)
                        out->boot_time_s = ps.btime;
        }
        first_line_under(proc_root, "sys/kernel/random/boot_id", out->boot_id,
                         sizeof(out->boot_id));
        first_line_under(etc_root, "machine-id", out->machine_id, sizeof(out->machine_id));
        if (out->machine_id[0] == '\0')
                first_line_under(var_lib_root, "dbus/machine-id", out->machine_id,
                                 sizeof(out->machine_id));
        first_line_under(sys_root, "class/dmi/id/product_uuid", out->system_uuid,
                         sizeof(out->system_uuid));
}

static struct stats_machine_info machine;
static pthread_once_t machine_once = PTHREAD_ONCE_INIT;

static void machine_init(void)
{
        stats_machine_info_read("/proc", "/sys", "/etc", "/var/lib", &machine);
        if (machine.memory_capacity == 0)
                LOG_ERROR("Error getting machine info", "err=\"no MemTotal in /proc/meminfo\"");
        if (machine.boot_time_s == 0)
                LOG_WARN("Error getting system boot time. Node metrics will have an incorrect "
                         "start time",
                         "err=\"no btime in /proc/stat\"");
        if (machine.boot_id[0] == '\0')
                LOG_WARN("Unable to read machine fact", "path=\"/proc/sys/kernel/random/boot_id\"");
}

const struct stats_machine_info *stats_machine_info(void)
{
        pthread_once(&machine_once, machine_init);
        return &machine;
}

int stats_fs_info(const char *path, struct stats_fs_info *out, ck_error_t *err)
{
        struct statvfs st;
        if (TEMP_FAILURE_RETRY_INT(statvfs(path, &st)) < 0)
                return ck_error_make(err, errno, "statfs `%s`", path);
        uint64_t frsize = st.f_frsize ? st.f_frsize : st.f_bsize;
        out->capacity = (uint64_t)st.f_blocks * frsize;
        out->available = (uint64_t)st.f_bavail * frsize;
        out->usage = ((uint64_t)st.f_blocks - (uint64_t)st.f_bfree) * frsize;
        out->inodes = st.f_files;
        out->inodes_free = st.f_ffree;
        return 0;
}
