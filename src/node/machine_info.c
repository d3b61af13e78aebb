/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The facts about this machine that the Node status reports, read as
 * cAdvisor's MachineInfo and VersionInfo read them.
 */
#include "node/node_internal.h"
#include "stats/stats.h"

#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#define SMALL_FILE_MAX (64u << 10)

int64_t node_parse_meminfo_total(const char *buf)
{
        for (const char *line = buf; line && *line; line = strchr(line, '\n')) {
                if (*line == '\n')
                        line++;
                if (strncmp(line, "MemTotal:", 9) != 0)
                        continue;
                char *end;
                long long kb = strtoll(line + 9, &end, 10);
                if (end == line + 9 || kb < 0)
                        return -1;
                while (*end == ' ')
                        end++;
                /* the kernel writes "kB" (KiB) */
                return strncmp(end, "kB", 2) == 0 ? (int64_t)kb * 1024 : (int64_t)kb;
        }
        return -1;
}

char *node_parse_os_release_pretty(const char *buf)
{
        for (const char *line = buf; line && *line; line = strchr(line, '\n')) {
                if (*line == '\n')
                        line++;
                if (strncmp(line, "PRETTY_NAME=", 12) != 0)
                        continue;
                const char *v = line + 12;
                size_t n = strcspn(v, "\n");
                if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
                        v++;
                        n -= 2;
                }
                return xstrndup(v, n);
        }
        return NULL;
}

/* The file's first line, trimmed (a new string), or "" when unreadable. */
static char *read_first_line(const char *path, bool quiet)
{
        cleanup_free char *buf = NULL;
        size_t len = 0;
        cleanup_error ck_error_t err = NULL;
        if (fs_read_file(path, SMALL_FILE_MAX, &buf, &len, &err) < 0) {
                if (!quiet)
                        LOG_WARN("Unable to read machine fact", "path=\"%s\" err=\"%s\"", path,
                                 ck_error_msg(err));
                return xstrdup("");
        }
        size_t n = strcspn(buf, "\n");
        while (n > 0 && isspace((unsigned char)buf[n - 1]))
                n--;
        return xstrndup(buf, n);
}

/* /sys/kernel/mm/hugepages/hugepages-<size>kB/nr_hugepages, as cAdvisor. */
static void read_hugepages(struct node_machine_info *mi)
{
        DIR *d = opendir("/sys/kernel/mm/hugepages");
        if (d == NULL)
                return;
        struct dirent *e;
        while ((e = readdir(d)) != NULL && mi->n_hugepages < ARRAY_SIZE(mi->hugepages)) {
                long long kb;
                char unit[4] = "";
                if (sscanf(e->d_name, "hugepages-%lld%2s", &kb, unit) != 2 ||
                    strcmp(unit, "kB") != 0 || kb <= 0)
                        continue;
                cleanup_free char *path =
                    xasprintf("/sys/kernel/mm/hugepages/%s/nr_hugepages", e->d_name);
                cleanup_free char *nr = read_first_line(path, false);
                struct node_hugepages *h = &mi->hugepages[mi->n_hugepages++];
                h->page_size = (int64_t)kb * 1024;
                h->pages = strtoll(nr, NULL, 10);
        }
        closedir(d);
        /* a stable order: smallest page size first */
        for (size_t i = 1; i < mi->n_hugepages; i++)
                for (size_t j = i;
                     j > 0 && mi->hugepages[j].page_size < mi->hugepages[j - 1].page_size; j--) {
                        struct node_hugepages t = mi->hugepages[j];
                        mi->hugepages[j] = mi->hugepages[j - 1];
                        mi->hugepages[j - 1] = t;
                }
}

void node_machine_info_read(const char *root_dir, struct node_machine_info *mi)
{
        memset(mi, 0, sizeof(*mi));
        /* CPUs and memory: the machine's facts, read once for the whole
         * agent (src/stats), so that the node's capacity, the pod cgroups'
         * allocatable and the downward API agree */
        const struct stats_machine_info *facts = stats_machine_info();
        mi->num_cores = facts->num_cores;
        mi->memory = facts->memory_capacity;
        if (mi->memory <= 0) {
                LOG_ERROR("Error getting machine info", "err=\"no MemTotal in /proc/meminfo\"");
                mi->memory = 0;
        }

        mi->ephemeral_storage = -1;
        struct statvfs st;
        const char *dir = root_dir && *root_dir ? root_dir : "/";
        if (TEMP_FAILURE_RETRY_INT(statvfs(dir, &st)) == 0)
                mi->ephemeral_storage = (int64_t)st.f_blocks * (int64_t)st.f_frsize;
        else
                LOG_ERROR("Unable to get rootfs data", "path=\"%s\" err=\"%s\"", dir,
                          strerror(errno));

        read_hugepages(mi);

        mi->machine_id = read_first_line("/etc/machine-id", true);
        if (*mi->machine_id == '\0') {
                free(mi->machine_id);
                mi->machine_id = read_first_line("/var/lib/dbus/machine-id", true);
        }
        mi->system_uuid = read_first_line("/sys/class/dmi/id/product_uuid", true);
        mi->boot_id = read_first_line("/proc/sys/kernel/random/boot_id", false);

        struct utsname u;
        mi->kernel_version = xstrdup(uname(&u) == 0 ? u.release : "");

        cleanup_free char *osr = NULL;
        size_t len = 0;
        cleanup_error ck_error_t err = NULL;
        if (fs_read_file("/etc/os-release", SMALL_FILE_MAX, &osr, &len, &err) == 0)
                mi->os_image = node_parse_os_release_pretty(osr);
        if (mi->os_image == NULL)
                mi->os_image = xstrdup("Linux");
}

void node_machine_info_clear(struct node_machine_info *mi)
{
        free(mi->machine_id);
        free(mi->system_uuid);
        free(mi->boot_id);
        free(mi->kernel_version);
        free(mi->os_image);
        memset(mi, 0, sizeof(*mi));
}
