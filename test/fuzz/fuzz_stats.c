/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the stats provider's parsers of /proc and cgroup files
 * (src/stats/parse.c, blkio.c) on arbitrary text: memory safety, and the
 * few promises their headers make. */
#include "stats/stats_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *text = malloc(size + 1); /* exact size: ASan sees a read past the end */
        if (text == NULL)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';

        struct stats_meminfo mi;
        stats__parse_meminfo(text, &mi);
        struct stats_proc_stat ps;
        stats__parse_proc_stat(text, &ps);
        (void)stats__proc_stat_busy_ns(&ps, 100);
        uint64_t v;
        (void)stats__parse_keyed(text, "usage_usec", &v);
        (void)stats__parse_keyed(text, "total_inactive_file", &v);
        if (stats__parse_uint(text, &v) && strncmp(text, "max", 3) == 0 && v != UINT64_MAX)
                abort(); /* "max" reads as UINT64_MAX */
        struct stats_psi psi;
        if (stats__parse_psi(text, &psi) != psi.ok)
                abort();
        int64_t procs;
        (void)stats__parse_loadavg_procs(text, &procs);
        if (stats__parse_cpu_list(text) < 0)
                abort(); /* a count, 0 when it does not parse */
        struct stats_iface *ifaces = NULL;
        size_t n = 0;
        if (stats__parse_net_dev(text, &ifaces, &n) == 0) {
                for (size_t i = 0; i < n; i++)
                        if (ifaces[i].name && (strncmp(ifaces[i].name, "lo", 2) == 0 ||
                                               strncmp(ifaces[i].name, "veth", 4) == 0))
                                abort(); /* left out, as cAdvisor does */
                struct stats_network net = {0};
                stats__network_from_ifaces(&net, 1, ifaces, n); /* takes the array */
                stats__network_clear(&net);
        }
        struct stats_blkio b;
        stats__blkio_parse_v1(text, text, &b);
        for (size_t i = 0; i < b.n; i++)
                if (!b.devs[i].in_bytes || !b.devs[i].in_ios)
                        abort(); /* the same text as both tables */
        stats__blkio_clear(&b);
        stats__blkio_parse_v2(text, &b);
        stats__blkio_clear(&b);
        struct stats_partition *parts = NULL;
        size_t np = stats__parse_partitions(text, &parts);
        for (size_t i = 0; i < np; i++)
                for (size_t k = i + 1; k < np; k++)
                        if (strcmp(parts[i].device, parts[k].device) == 0)
                                abort(); /* one partition per device */
        stats__partitions_free(parts, np);
        struct stats_root_fs fs = {0};
        if (stats__parse_diskstats(text, "/dev/vda", 252, 0, &fs) != fs.has_disk)
                abort();
        int64_t nofile;
        (void)stats__parse_nofile_soft(text, &nofile);
        free(stats__parse_proc_cgroup(text, false));
        free(stats__parse_proc_cgroup(text, true));
        free(text);
        return 0;
}
