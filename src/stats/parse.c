/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pure parsers of the /proc and cgroup files the stats come from (file
 * contents in, values out), as cAdvisor and runc's cgroup managers read
 * them.  See stats_internal.h for each contract.
 */
#include "stats/stats_internal.h"

#include "util/cleanup.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* The next line of *p (without its '\n') into [*line, *line + *len); false
 * at the end. */
static bool next_line(const char **p, const char **line, size_t *len)
{
        if (*p == NULL || **p == '\0')
                return false;
        const char *nl = strchr(*p, '\n');
        *line = *p;
        *len = nl ? (size_t)(nl - *p) : strlen(*p);
        *p = nl ? nl + 1 : *p + *len;
        return true;
}

/* A uint64 in s[0..len) after leading blanks; *end past its digits. */
static bool parse_u64_at(const char *s, size_t len, uint64_t *out, size_t *end)
{
        size_t i = 0;
        while (i < len && (s[i] == ' ' || s[i] == '\t'))
                i++;
        if (i == len || !isdigit((unsigned char)s[i]))
                return false;
        uint64_t v = 0;
        for (; i < len && isdigit((unsigned char)s[i]); i++) {
                uint64_t d = (uint64_t)(s[i] - '0');
                if (v > (UINT64_MAX - d) / 10)
                        return false;
                v = v * 10 + d;
        }
        *out = v;
        if (end)
                *end = i;
        return true;
}

void stats__parse_meminfo(const char *text, struct stats_meminfo *out)
{
        static const struct {
                const char *key;
                size_t has_off, val_off;
        } keys[] = {
#define K(name, field)                                                                             \
        {name, offsetof(struct stats_meminfo, has_##field), offsetof(struct stats_meminfo, field)}
            K("MemTotal", total),
            K("MemFree", free),
            K("MemAvailable", available),
            K("SwapTotal", swap_total),
            K("SwapFree", swap_free),
            K("AnonPages", anon),
            K("Inactive(file)", inactive_file),
            K("Active(file)", active_file),
            K("Buffers", buffers),
            K("Cached", cached),
#undef K
        };
        memset(out, 0, sizeof(*out));
        const char *p = text, *line;
        size_t len;
        while (next_line(&p, &line, &len)) {
                const char *colon = memchr(line, ':', len);
                if (colon == NULL)
                        continue;
                size_t klen = (size_t)(colon - line);
                for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
                        if (strlen(keys[i].key) != klen || memcmp(keys[i].key, line, klen) != 0)
                                continue;
                        const char *v = colon + 1;
                        size_t vlen = len - klen - 1, end;
                        uint64_t n;
                        if (!parse_u64_at(v, vlen, &n, &end))
                                break;
                        /* the kernel writes "kB" (KiB), as cAdvisor's regexp expects */
                        if (end + 3 <= vlen && memcmp(v + end, " kB", 3) == 0)
                                n *= 1024;
                        *(bool *)((char *)out + keys[i].has_off) = true;
                        *(uint64_t *)((char *)out + keys[i].val_off) = n;
                        break;
                }
        }
}

void stats__parse_proc_stat(const char *text, struct stats_proc_stat *out)
{
        memset(out, 0, sizeof(*out));
        const char *p = text, *line;
        size_t len;
        while (next_line(&p, &line, &len)) {
                if (len > 4 && memcmp(line, "cpu ", 4) == 0 && !out->has_cpu) {
                        uint64_t *f[] = {&out->user,   &out->nice, &out->system,  &out->idle,
                                         &out->iowait, &out->irq,  &out->softirq, &out->steal};
                        size_t off = 4, end;
                        size_t got = 0;
                        for (; got < sizeof(f) / sizeof(f[0]); got++) {
                                if (!parse_u64_at(line + off, len - off, f[got], &end))
                                        break;
                                off += end;
                        }
                        /* steal appeared in 2.6.11, irq/softirq in 2.6.0 */
                        out->has_cpu = got >= 4;
                } else if (len > 6 && memcmp(line, "btime ", 6) == 0) {
                        uint64_t v;
                        if (parse_u64_at(line + 6, len - 6, &v, NULL) && v <= INT64_MAX) {
                                out->has_btime = true;
                                out->btime = (int64_t)v;
                        }
                }
        }
}

uint64_t stats__proc_stat_busy_ns(const struct stats_proc_stat *s, long ticks_per_second)
{
        if (ticks_per_second <= 0)
                ticks_per_second = 100;
        uint64_t ticks = s->user + s->nice + s->system + s->irq + s->softirq + s->steal;
        uint64_t per = 1000000000ull / (uint64_t)ticks_per_second;
        return ticks * per;
}

bool stats__parse_keyed(const char *text, const char *key, uint64_t *out)
{
        size_t klen = strlen(key);
        const char *p = text, *line;
        size_t len;
        while (next_line(&p, &line, &len)) {
                if (len <= klen || memcmp(line, key, klen) != 0 || line[klen] != ' ')
                        continue;
                size_t end;
                uint64_t v;
                if (!parse_u64_at(line + klen, len - klen, &v, &end))
                        return false;
                *out = v;
                return true;
        }
        return false;
}

bool stats__parse_uint(const char *text, uint64_t *out)
{
        if (text == NULL)
                return false;
        const char *s = text;
        while (isspace((unsigned char)*s))
                s++;
        size_t n = strlen(s);
        while (n > 0 && isspace((unsigned char)s[n - 1]))
                n--;
        if (n == 3 && memcmp(s, "max", 3) == 0) {
                *out = UINT64_MAX;
                return true;
        }
        size_t end;
        uint64_t v;
        if (!parse_u64_at(s, n, &v, &end) || end != n)
                return false;
        *out = v;
        return true;
}

/* "avg10=0.12 avg60=0.00 avg300=0.00 total=12345" */
static bool parse_psi_data(const char *s, size_t len, struct stats_psi_data *d)
{
        char buf[256];
        if (len >= sizeof(buf))
                return false;
        memcpy(buf, s, len);
        buf[len] = '\0';
        int seen = 0;
        char *save = NULL;
        for (char *tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
                char *eq = strchr(tok, '=');
                if (eq == NULL)
                        return false;
                *eq = '\0';
                const char *v = eq + 1;
                char *end;
                errno = 0;
                if (strcmp(tok, "total") == 0) {
                        size_t e;
                        if (!parse_u64_at(v, strlen(v), &d->total, &e) || v[e] != '\0')
                                return false;
                        seen |= 1;
                        continue;
                }
                double f = strtod(v, &end);
                if (end == v || *end != '\0' || errno != 0)
                        return false;
                if (strcmp(tok, "avg10") == 0)
                        d->avg10 = f, seen |= 2;
                else if (strcmp(tok, "avg60") == 0)
                        d->avg60 = f, seen |= 4;
                else if (strcmp(tok, "avg300") == 0)
                        d->avg300 = f, seen |= 8;
        }
        return seen == 15;
}

bool stats__parse_psi(const char *text, struct stats_psi *out)
{
        memset(out, 0, sizeof(*out));
        const char *p = text, *line;
        size_t len;
        bool any = false;
        while (next_line(&p, &line, &len)) {
                struct stats_psi_data *d = NULL;
                size_t skip = 0;
                if (len > 5 && memcmp(line, "some ", 5) == 0)
                        d = &out->some, skip = 5;
                else if (len > 5 && memcmp(line, "full ", 5) == 0)
                        d = &out->full, skip = 5;
                if (d == NULL)
                        continue;
                if (!parse_psi_data(line + skip, len - skip, d)) {
                        memset(out, 0, sizeof(*out));
                        return false;
                }
                any = true;
        }
        out->ok = any;
        return any;
}

bool stats__parse_loadavg_procs(const char *text, int64_t *out)
{
        /* "1.36 3.49 4.53 2/3518 3715089" */
        const char *s = text;
        for (int field = 0; field < 3; field++) {
                while (*s == ' ')
                        s++;
                while (*s && *s != ' ' && *s != '\n')
                        s++;
                if (*s != ' ')
                        return false;
        }
        while (*s == ' ')
                s++;
        const char *slash = strchr(s, '/');
        const char *sp = strpbrk(s, " \n");
        if (slash == NULL || (sp && sp < slash))
                return false;
        uint64_t v;
        size_t end;
        size_t len = sp ? (size_t)(sp - slash - 1) : strlen(slash + 1);
        if (!parse_u64_at(slash + 1, len, &v, &end) || end != len || v > INT64_MAX)
                return false;
        *out = (int64_t)v;
        return true;
}

int64_t stats__parse_cpu_list(const char *text)
{
        int64_t count = 0;
        const char *s = text;
        while (*s && *s != '\n') {
                uint64_t a, b;
                size_t end;
                if (!parse_u64_at(s, strlen(s), &a, &end))
                        return 0;
                s += end;
                b = a;
                if (*s == '-') {
                        s++;
                        if (!parse_u64_at(s, strlen(s), &b, &end) || b < a)
                                return 0;
                        s += end;
                }
                /* no machine has 2^20 CPUs: a range beyond that is not a
                 * CPU list (and would overflow the count) */
                if (b - a >= (1u << 20) || count >= (1 << 20))
                        return 0;
                count += (int64_t)(b - a + 1);
                if (*s == ',')
                        s++;
                else if (*s != '\0' && *s != '\n')
                        return 0;
        }
        return count;
}

/* cAdvisor's ignoredDevicePrefixes (case-insensitive). */
static bool ignored_device(const char *name)
{
        static const char *const prefixes[] = {"lo", "veth", "docker", "nerdctl"};
        for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
                if (strncasecmp(name, prefixes[i], strlen(prefixes[i])) == 0)
                        return true;
        return false;
}

static void ifaces_free(struct stats_iface *v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(v[i].name);
        free(v);
}

int stats__parse_net_dev(const char *text, struct stats_iface **ifaces, size_t *n)
{
        *ifaces = NULL;
        *n = 0;
        const char *p = text, *line;
        size_t len;
        for (int i = 0; i < 2; i++)
                if (!next_line(&p, &line, &len))
                        return 0;
        struct stats_iface *v = NULL;
        size_t cnt = 0;
        while (next_line(&p, &line, &len)) {
                /* "  eth0: 1234 ..." or "veth1234:12345678 ...": the kernel
                 * pads the name to 6 and a counter to 8, so they may touch;
                 * a device name has no ':' (dev_valid_name) */
                char buf[512];
                if (len >= sizeof(buf))
                        goto bad;
                memcpy(buf, line, len);
                buf[len] = '\0';
                for (char *c = buf; *c; c++)
                        if (*c == ':')
                                *c = ' ';
                char *fields[17];
                size_t nf = 0;
                char *save = NULL;
                for (char *tok = strtok_r(buf, " \t", &save); tok;
                     tok = strtok_r(NULL, " \t", &save)) {
                        if (nf == 17)
                                goto bad;
                        fields[nf++] = tok;
                }
                if (nf == 0)
                        continue; /* a trailing empty line */
                if (nf != 17)
                        goto bad;
                uint64_t vals[16];
                for (size_t k = 0; k < 16; k++) {
                        size_t end;
                        if (!parse_u64_at(fields[k + 1], strlen(fields[k + 1]), &vals[k], &end) ||
                            fields[k + 1][end] != '\0')
                                goto bad;
                }
                if (ignored_device(fields[0]))
                        continue;
                v = xrealloc(v, (cnt + 1) * sizeof(*v));
                v[cnt] = (struct stats_iface){
                    .name = xstrdup(fields[0]),
                    .rx_bytes = stats_u64_of(vals[0]),
                    .rx_errors = stats_u64_of(vals[2]),
                    .tx_bytes = stats_u64_of(vals[8]),
                    .tx_errors = stats_u64_of(vals[10]),
                    .rx_packets = stats_u64_of(vals[1]),
                    .rx_dropped = stats_u64_of(vals[3]),
                    .tx_packets = stats_u64_of(vals[9]),
                    .tx_dropped = stats_u64_of(vals[11]),
                };
                cnt++;
        }
        *ifaces = v;
        *n = cnt;
        return 0;
bad:
        ifaces_free(v, cnt);
        return -1;
}

void stats__network_from_ifaces(struct stats_network *out, int64_t time_ns,
                                struct stats_iface *ifaces, size_t n)
{
        memset(out, 0, sizeof(*out));
        out->ok = true;
        out->time_ns = time_ns;
        out->ifaces = ifaces;
        out->n_ifaces = n;
        for (size_t i = 0; i < n; i++) {
                if (strcmp(ifaces[i].name, "eth0") != 0)
                        continue;
                /* the last eth0 of the list, as upstream's loop (a list
                 * naming it twice must not leak the first copy) */
                free(out->dflt.name);
                out->dflt = ifaces[i];
                out->dflt.name = xstrdup(ifaces[i].name);
        }
}

/* Whether the comma-separated list [s, s+len) holds word. */
static bool list_has(const char *s, size_t len, const char *word)
{
        size_t wl = strlen(word);
        while (len > 0) {
                const char *comma = memchr(s, ',', len);
                size_t l = comma ? (size_t)(comma - s) : len;
                if (l == wl && memcmp(s, word, wl) == 0)
                        return true;
                if (comma == NULL)
                        break;
                len -= l + 1;
                s = comma + 1;
        }
        return false;
}

char *stats__parse_proc_cgroup(const char *text, bool v2)
{
        char *cpu = NULL, *memory = NULL;
        const char *p = text, *line;
        size_t len;
        while (next_line(&p, &line, &len)) {
                /* "hierarchy-ID:controller-list:cgroup-path" */
                const char *c1 = memchr(line, ':', len);
                if (c1 == NULL)
                        continue;
                const char *ctrl = c1 + 1;
                const char *c2 = memchr(ctrl, ':', len - (size_t)(ctrl - line));
                if (c2 == NULL)
                        continue;
                size_t clen = (size_t)(c2 - ctrl);
                const char *path = c2 + 1;
                size_t plen = len - (size_t)(path - line);
                if (v2) {
                        if (clen == 0 && c1 - line == 1 && line[0] == '0') {
                                free(cpu);
                                return xstrndup(path, plen);
                        }
                        continue;
                }
                if (cpu == NULL && list_has(ctrl, clen, "cpu"))
                        cpu = xstrndup(path, plen);
                if (memory == NULL && list_has(ctrl, clen, "memory"))
                        memory = xstrndup(path, plen);
        }
        char *res = NULL;
        /* upstream: "cpu and memory cgroup hierarchy not unified" */
        if (cpu && memory && strcmp(cpu, memory) == 0) {
                res = cpu;
                cpu = NULL;
        }
        free(cpu);
        free(memory);
        return res;
}

/* cAdvisor's isMemoryUnlimited: above 2^62 (the kernel rounds its max). */
static bool unlimited(uint64_t v)
{
        return v > (1ull << 62);
}

static uint64_t stat_or_zero(const char *text, const char *key)
{
        uint64_t v = 0;
        if (text)
                stats__parse_keyed(text, key, &v);
        return v;
}

/* cAdvisor's readUInt64: "max" is UINT64_MAX, anything unreadable 0. */
static uint64_t uint_or_zero(const char *text)
{
        uint64_t v = 0;
        return text && stats__parse_uint(text, &v) ? v : 0;
}

/* cAdvisor's convertCPUWeightToCPULimit (0 when out of range). */
static uint64_t shares_of_weight(uint64_t w)
{
        return w >= 1 && w <= 10000 ? 2 + ((w - 1) * 262142) / 9999 : 0;
}

/* cAdvisor's parseUint64String of one cpu.max field. */
static uint64_t cpu_max_field(const char *s, size_t len)
{
        if (len == 3 && memcmp(s, "max", 3) == 0)
                return UINT64_MAX;
        uint64_t v = 0;
        size_t end;
        return parse_u64_at(s, len, &v, &end) && end == len ? v : 0;
}

/* The readings only /metrics/cadvisor shows (see stats_internal.h). */
static void extras_parse(bool v2, const struct stats_cgroup_files *f,
                         struct stats_cgroup_sample *out)
{
        const char *ms = f->memory_stat;
        uint64_t v;
        if (v2) {
                out->cpu_user_ns = stat_or_zero(f->cpu_stat, "user_usec") * 1000;
                out->cpu_system_ns = stat_or_zero(f->cpu_stat, "system_usec") * 1000;
                out->cfs_periods = stat_or_zero(f->cpu_stat, "nr_periods");
                out->cfs_throttled_periods = stat_or_zero(f->cpu_stat, "nr_throttled");
                out->cfs_throttled_ns = stat_or_zero(f->cpu_stat, "throttled_usec") * 1000;
                out->cache = stat_or_zero(ms, "file");
                out->mapped_file = stat_or_zero(ms, "file_mapped");
                out->active_file = stat_or_zero(ms, "active_file");
                out->inactive_file = stat_or_zero(ms, "inactive_file");
                out->oom_kills = stat_or_zero(f->memory_events, "oom_kill");
                /* cgroup v2: the cpu controller's files are always there */
                out->has_cpu_spec = true;
                out->spec_cpu_shares = shares_of_weight(uint_or_zero(f->cpu_weight));
                if (f->cpu_max) {
                        /* "quota period": "max 100000" */
                        const char *sp = strchr(f->cpu_max, ' ');
                        if (sp) {
                                uint64_t quota =
                                    cpu_max_field(f->cpu_max, (size_t)(sp - f->cpu_max));
                                if (quota != UINT64_MAX)
                                        out->spec_cpu_quota = quota;
                                out->spec_cpu_period = cpu_max_field(sp + 1, strcspn(sp + 1, "\n"));
                        }
                }
                out->has_memory_spec = f->memory_limit != NULL;
        } else {
                /* USER_HZ is 100 wherever cpuacct.stat is (runc's clock ticks) */
                out->cpu_user_ns = stat_or_zero(f->cpuacct_stat, "user") * 10000000;
                out->cpu_system_ns = stat_or_zero(f->cpuacct_stat, "system") * 10000000;
                out->cache = stat_or_zero(ms, "total_cache");
                out->mapped_file = stat_or_zero(ms, "total_mapped_file");
                out->active_file = stat_or_zero(ms, "total_active_file");
                out->inactive_file = stat_or_zero(ms, "total_inactive_file");
                out->failcnt = uint_or_zero(f->memory_failcnt);
                out->has_cpu_spec = f->cpu_shares != NULL;
                out->spec_cpu_shares = uint_or_zero(f->cpu_shares);
                out->spec_cpu_period = uint_or_zero(f->cfs_period);
                /* "-1": no quota */
                if (f->cfs_quota && stats__parse_uint(f->cfs_quota, &v))
                        out->spec_cpu_quota = v;
                out->has_memory_spec = f->memory_usage != NULL;
        }
        out->max_usage = uint_or_zero(f->memory_peak);
        if (out->max_usage == UINT64_MAX)
                out->max_usage = 0;
        if (out->has_memory_spec) {
                out->spec_memory_limit = uint_or_zero(f->memory_limit);
                out->spec_swap_limit = uint_or_zero(f->swap_limit);
                out->spec_memory_reservation = uint_or_zero(f->memory_min);
        }
        out->threads = uint_or_zero(f->pids_current);
        out->threads_max = uint_or_zero(f->pids_max);
        if (out->threads_max == UINT64_MAX)
                out->threads_max = 0;
}

void stats__cgroup_sample_parse(bool v2, bool root, const struct stats_cgroup_files *f,
                                struct stats_cgroup_sample *out)
{
        memset(out, 0, sizeof(*out));
        struct stats_meminfo mi = {0};
        if (root && f->meminfo)
                stats__parse_meminfo(f->meminfo, &mi);

        uint64_t v;
        if (v2 && f->cpu_stat && stats__parse_keyed(f->cpu_stat, "usage_usec", &v)) {
                out->has_cpu = true;
                out->cpu_usage_ns = v * 1000;
        } else if (!v2 && stats__parse_uint(f->cpuacct_usage, &v)) {
                out->has_cpu = true;
                out->cpu_usage_ns = v;
        }

        const char *ms = f->memory_stat;
        uint64_t usage = 0;
        bool has_usage = stats__parse_uint(f->memory_usage, &usage) && usage != UINT64_MAX;
        bool emulated = false;
        if (!has_usage && v2 && root && ms) {
                /* runc rootStatsFromMeminfo: the v1 usage_in_bytes sum */
                usage = stat_or_zero(ms, "anon") + stat_or_zero(ms, "file");
                has_usage = emulated = true;
        }
        if (has_usage) {
                out->has_memory = true;
                out->usage = usage;
                uint64_t inactive;
                out->working_set = usage;
                if (ms &&
                    stats__parse_keyed(ms, v2 ? "inactive_file" : "total_inactive_file", &inactive))
                        out->working_set = inactive > usage ? 0 : usage - inactive;
                if (v2)
                        out->rss = stat_or_zero(ms, "anon");
                else if (ms && stats__parse_keyed(ms, "total_rss", &v))
                        out->rss = v;
                else
                        out->rss = stat_or_zero(ms, "rss");
                out->page_faults = stat_or_zero(ms, "pgfault");
                out->major_page_faults = stat_or_zero(ms, "pgmajfault");

                /* swap: v2 memory.swap.current (0 without swap accounting), the
                 * v2 root SwapTotal - SwapFree, v1 total_swap */
                out->has_swap = true;
                if (v2 && emulated) {
                        if (mi.has_swap_total && mi.has_swap_free && mi.swap_total >= mi.swap_free)
                                out->swap_usage = mi.swap_total - mi.swap_free;
                } else if (v2) {
                        if (stats__parse_uint(f->swap_usage, &v) && v != UINT64_MAX)
                                out->swap_usage = v;
                } else if (ms && stats__parse_keyed(ms, "total_swap", &v)) {
                        out->swap_usage = v;
                } else {
                        out->swap_usage = stat_or_zero(ms, "swap");
                }

                if (root) {
                        out->has_limit = mi.has_total;
                        out->limit = mi.total;
                        out->has_swap_limit = mi.has_swap_total;
                        out->swap_limit = mi.swap_total;
                } else {
                        if (stats__parse_uint(f->memory_limit, &v) && !unlimited(v)) {
                                out->has_limit = true;
                                out->limit = v;
                        }
                        /* cAdvisor's readUInt64 reads a missing file as 0 */
                        v = 0;
                        if (f->swap_limit == NULL || stats__parse_uint(f->swap_limit, &v)) {
                                if (!unlimited(v)) {
                                        out->has_swap_limit = true;
                                        out->swap_limit = v;
                                }
                        }
                }
        }
        extras_parse(v2, f, out);
        if (v2) {
                if (f->cpu_pressure)
                        stats__parse_psi(f->cpu_pressure, &out->cpu_psi);
                if (f->memory_pressure)
                        stats__parse_psi(f->memory_pressure, &out->memory_psi);
                if (f->io_pressure)
                        stats__parse_psi(f->io_pressure, &out->io_psi);
        }
}

/* cAdvisor's parseUlimit: a number, or "unlimited" (-1). */
static bool parse_limit(const char *s, int64_t *out)
{
        if (strcasecmp(s, "unlimited") == 0) {
                *out = -1;
                return true;
        }
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (errno || *end || end == s)
                return false;
        *out = v;
        return true;
}

bool stats__parse_nofile_soft(const char *text, int64_t *out)
{
        static const char prefix[] = "Max open files";
        const size_t plen = sizeof(prefix) - 1;
        for (const char *line = text; line && *line;) {
                const char *nl = strchr(line, '\n');
                size_t len = nl ? (size_t)(nl - line) : strlen(line);
                if (len >= plen && memcmp(line, prefix, plen) == 0) {
                        /* "soft hard units": three fields, as cAdvisor wants */
                        char soft[32], hard[32], units[32], extra;
                        cleanup_free char *rest = xstrndup(line + plen, len - plen);
                        int64_t h;
                        return sscanf(rest, "%31s %31s %31s %c", soft, hard, units, &extra) == 3 &&
                               parse_limit(hard, &h) && parse_limit(soft, out);
                }
                line = nl ? nl + 1 : line + len;
        }
        return false;
}
