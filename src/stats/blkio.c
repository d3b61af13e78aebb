/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What cAdvisor's DiskIO and DiskUsage metrics read: a cgroup's block I/O
 * tables (runc's BlkioStats), the disks that name their devices
 * (MachineInfo.DiskMap), the machine's filesystems (fsInfo's partitions
 * from /proc/self/mountinfo) with their statfs and /proc/diskstats
 * figures, which cAdvisor's raw handler gives the root container "/".
 * The parsers take file contents and are fuzzed (fuzz_stats).
 */
#include "stats/stats_internal.h"

#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>

const char *const stats_blkio_op_names[STATS_BLKIO_N_OPS] = {
    [STATS_BLKIO_READ] = "Read",   [STATS_BLKIO_WRITE] = "Write",     [STATS_BLKIO_SYNC] = "Sync",
    [STATS_BLKIO_ASYNC] = "Async", [STATS_BLKIO_DISCARD] = "Discard", [STATS_BLKIO_TOTAL] = "Total",
};

void stats__blkio_clear(struct stats_blkio *b)
{
        free(b->devs);
        b->devs = NULL;
        b->n = 0;
}

static struct stats_blkio_dev *dev_of(struct stats_blkio *b, uint32_t major, uint32_t minor)
{
        for (size_t i = 0; i < b->n; i++)
                if (b->devs[i].major == major && b->devs[i].minor == minor)
                        return &b->devs[i];
        b->devs = xrealloc(b->devs, (b->n + 1) * sizeof(*b->devs));
        struct stats_blkio_dev *d = &b->devs[b->n++];
        *d = (struct stats_blkio_dev){.major = major, .minor = minor};
        return d;
}

static int op_of(const char *s, size_t len)
{
        for (int i = 0; i < STATS_BLKIO_N_OPS; i++)
                if (strlen(stats_blkio_op_names[i]) == len &&
                    memcmp(stats_blkio_op_names[i], s, len) == 0)
                        return i;
        return -1;
}

/* "MAJ:MIN" at *p (advanced past it); false when it is not one. */
static bool parse_devno(const char **p, uint32_t *major, uint32_t *minor)
{
        char *end;
        const char *s = *p;
        if (*s < '0' || *s > '9')
                return false;
        unsigned long ma = strtoul(s, &end, 10);
        if (*end != ':' || end[1] < '0' || end[1] > '9' || ma > UINT32_MAX)
                return false;
        unsigned long mi = strtoul(end + 1, &end, 10);
        if (mi > UINT32_MAX)
                return false;
        *major = (uint32_t)ma;
        *minor = (uint32_t)mi;
        *p = end;
        return true;
}

/* A decimal uint64 at s (advanced); false on anything else or overflow. */
static bool parse_u64_at(const char **s, uint64_t *out)
{
        const char *p = *s;
        if (*p < '0' || *p > '9')
                return false;
        uint64_t v = 0;
        for (; *p >= '0' && *p <= '9'; p++) {
                unsigned d = (unsigned)(*p - '0');
                if (v > (UINT64_MAX - d) / 10)
                        return false;
                v = v * 10 + d;
        }
        *out = v;
        *s = p;
        return true;
}

static const char *next_line(const char *p)
{
        const char *nl = strchr(p, '\n');
        return nl ? nl + 1 : p + strlen(p);
}

static void skip_blanks(const char **p)
{
        while (**p == ' ' || **p == '\t')
                (*p)++;
}

/* One v1 table: "MAJ:MIN Op value" lines into bytes or ios. */
static void parse_v1_table(const char *text, bool bytes, struct stats_blkio *out)
{
        for (const char *line = text; line && *line; line = next_line(line)) {
                const char *p = line;
                uint32_t major, minor;
                if (!parse_devno(&p, &major, &minor)) /* "Total N" too */
                        continue;
                skip_blanks(&p);
                const char *op = p;
                while (*p && *p != ' ' && *p != '\t' && *p != '\n')
                        p++;
                int o = op_of(op, (size_t)(p - op));
                skip_blanks(&p);
                uint64_t v;
                if (o < 0 || !parse_u64_at(&p, &v))
                        continue;
                struct stats_blkio_dev *d = dev_of(out, major, minor);
                if (bytes) {
                        d->in_bytes = d->has_bytes[o] = true;
                        d->bytes[o] = v;
                } else {
                        d->in_ios = d->has_ios[o] = true;
                        d->ios[o] = v;
                }
        }
}

void stats__blkio_parse_v1(const char *service_bytes, const char *serviced, struct stats_blkio *out)
{
        *out = (struct stats_blkio){0};
        parse_v1_table(service_bytes, true, out);
        parse_v1_table(serviced, false, out);
}

void stats__blkio_parse_v2(const char *io_stat, struct stats_blkio *out)
{
        *out = (struct stats_blkio){0};
        static const struct {
                const char *key;
                bool bytes;
                enum stats_blkio_op op;
        } keys[] = {
            {"rbytes", true, STATS_BLKIO_READ},
            {"wbytes", true, STATS_BLKIO_WRITE},
            {"rios", false, STATS_BLKIO_READ},
            {"wios", false, STATS_BLKIO_WRITE},
        };
        for (const char *line = io_stat; line && *line; line = next_line(line)) {
                const char *p = line;
                uint32_t major, minor;
                if (!parse_devno(&p, &major, &minor))
                        continue;
                struct stats_blkio_dev *d = NULL;
                for (;;) {
                        skip_blanks(&p);
                        if (*p == '\0' || *p == '\n')
                                break;
                        const char *k = p;
                        while (*p && *p != '=' && *p != ' ' && *p != '\n')
                                p++;
                        size_t klen = (size_t)(p - k);
                        uint64_t v;
                        bool ok = *p == '=' && (p++, parse_u64_at(&p, &v));
                        for (size_t i = 0; ok && i < sizeof(keys) / sizeof(keys[0]); i++) {
                                if (strlen(keys[i].key) != klen || memcmp(keys[i].key, k, klen))
                                        continue;
                                if (d == NULL)
                                        d = dev_of(out, major, minor);
                                if (keys[i].bytes) {
                                        d->in_bytes = d->has_bytes[keys[i].op] = true;
                                        d->bytes[keys[i].op] = v;
                                } else {
                                        d->in_ios = d->has_ios[keys[i].op] = true;
                                        d->ios[keys[i].op] = v;
                                }
                        }
                        while (*p && *p != ' ' && *p != '\t' && *p != '\n')
                                p++; /* the rest of a field that did not parse */
                }
        }
}

/* ---- Disks ------------------------------------------------------------------ */

static char *read_small(const char *path)
{
        char *buf = NULL;
        cleanup_error ck_error_t err = NULL;
        if (fs_read_file(path, 4096, &buf, NULL, &err) < 0)
                return NULL;
        return buf;
}

size_t stats__disks_read(const char *sys_root, struct stats_disk **out)
{
        *out = NULL;
        cleanup_free char *dir = xasprintf("%s/block", sys_root);
        DIR *d = opendir(dir);
        if (d == NULL)
                return 0;
        size_t n = 0;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
                const char *nm = e->d_name;
                if (nm[0] == '.' || strncmp(nm, "loop", 4) == 0 || strncmp(nm, "ram", 3) == 0 ||
                    strncmp(nm, "sr", 2) == 0)
                        continue;
                cleanup_free char *hidden_path = xasprintf("%s/%s/hidden", dir, nm);
                cleanup_free char *hidden = read_small(hidden_path);
                if (hidden && hidden[0] == '1')
                        continue; /* nvme path devices */
                cleanup_free char *dev_path = xasprintf("%s/%s/dev", dir, nm);
                cleanup_free char *dev = read_small(dev_path);
                const char *p = dev;
                uint32_t major, minor;
                if (p == NULL || !parse_devno(&p, &major, &minor))
                        continue;
                *out = xrealloc(*out, (n + 1) * sizeof(**out));
                (*out)[n++] = (struct stats_disk){
                    .major = major, .minor = minor, .name = xasprintf("/dev/%s", nm)};
        }
        closedir(d);
        return n;
}

void stats__disks_free(struct stats_disk *d, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(d[i].name);
        free(d);
}

const char *stats__disk_name(const struct stats_disk *d, size_t n, uint32_t major, uint32_t minor)
{
        for (size_t i = 0; i < n; i++)
                if (d[i].major == major && d[i].minor == minor)
                        return d[i].name;
        return "";
}

/* ---- Partitions --------------------------------------------------------------- */

/* A mountinfo field: the next space-separated word, its \ooo escapes
 * decoded (a new string), or NULL at the end of the line. */
static char *field(const char **p)
{
        skip_blanks(p);
        const char *s = *p;
        if (*s == '\0' || *s == '\n')
                return NULL;
        while (**p && **p != ' ' && **p != '\n')
                (*p)++;
        size_t len = (size_t)(*p - s);
        char *out = xmalloc(len + 1), *o = out;
        for (size_t i = 0; i < len; i++) {
                if (s[i] == '\\' && i + 3 < len && s[i + 1] >= '0' && s[i + 1] <= '3' &&
                    s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
                        *o++ =
                            (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
                        i += 3;
                        continue;
                }
                *o++ = s[i];
        }
        *o = '\0';
        return out;
}

static bool supported_type(const char *t)
{
        static const char *const types[] = {"btrfs", "overlay", "tmpfs", "xfs", "zfs"};
        if (strncmp(t, "ext", 3) == 0 || strncmp(t, "nfs", 3) == 0)
                return true;
        for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
                if (strcmp(t, types[i]) == 0)
                        return true;
        return false;
}

static struct stats_partition *partition_find(struct stats_partition *p, size_t n,
                                              const char *device)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(p[i].device, device) == 0)
                        return &p[i];
        return NULL;
}

size_t stats__parse_partitions(const char *mountinfo, struct stats_partition **out)
{
        *out = NULL;
        size_t n = 0;
        for (const char *line = mountinfo; line && *line; line = next_line(line)) {
                const char *p = line;
                free(field(&p)); /* mount ID */
                free(field(&p)); /* parent ID */
                cleanup_free char *devno = field(&p);
                free(field(&p)); /* root */
                cleanup_free char *mountpoint = field(&p);
                if (mountpoint == NULL)
                        continue;
                /* the optional fields end at "-" */
                char *f;
                bool dash = false;
                while ((f = field(&p)) != NULL) {
                        dash = strcmp(f, "-") == 0;
                        free(f);
                        if (dash)
                                break;
                }
                if (!dash)
                        continue;
                cleanup_free char *type = field(&p), *source = field(&p);
                const char *dp = devno;
                uint32_t major, minor;
                if (type == NULL || source == NULL || !parse_devno(&dp, &major, &minor) ||
                    !supported_type(type))
                        continue;
                bool tmpfs = strcmp(type, "tmpfs") == 0;
                if (!tmpfs && partition_find(*out, n, source))
                        continue; /* a bind mount of a filesystem already listed */
                cleanup_free char *device = NULL;
                if (tmpfs)
                        device = xstrdup(mountpoint);
                else if (strcmp(type, "overlay") == 0)
                        device = xasprintf("%s_%" PRIu32 "-%" PRIu32, source, major, minor);
                else
                        device = xstrdup(source);
                struct stats_partition *old = partition_find(*out, n, device);
                if (old) { /* the last mount of a tmpfs mount point wins */
                        free(old->mountpoint);
                        old->mountpoint = xstrdup(mountpoint);
                        old->major = major;
                        old->minor = minor;
                        continue;
                }
                *out = xrealloc(*out, (n + 1) * sizeof(**out));
                (*out)[n++] = (struct stats_partition){.device = device,
                                                       .mountpoint = xstrdup(mountpoint),
                                                       .major = major,
                                                       .minor = minor,
                                                       .network = strncmp(type, "nfs", 3) == 0};
                device = NULL;
        }
        return n;
}

void stats__partitions_free(struct stats_partition *p, size_t n)
{
        stats__partition_jobs_release(p, n);
        for (size_t i = 0; i < n; i++) {
                free(p[i].device);
                free(p[i].mountpoint);
        }
        free(p);
}

/* ---- The root's filesystems ------------------------------------------------------ */

/* cAdvisor's partitionRegex: ^(?:(?:s|v|xv)d[a-z]+\d*|dm-\d+)$ */
static bool disk_stats_name(const char *s, size_t len)
{
        size_t i = 0;
        if (len > 3 && memcmp(s, "dm-", 3) == 0) {
                for (i = 3; i < len; i++)
                        if (s[i] < '0' || s[i] > '9')
                                return false;
                return true;
        }
        if (len >= 2 && s[0] == 'x' && s[1] == 'v')
                i = 2;
        else if (len >= 1 && (s[0] == 's' || s[0] == 'v'))
                i = 1;
        else
                return false;
        if (i >= len || s[i] != 'd')
                return false;
        i++;
        size_t letters = i;
        while (i < len && s[i] >= 'a' && s[i] <= 'z')
                i++;
        if (i == letters)
                return false;
        while (i < len && s[i] >= '0' && s[i] <= '9')
                i++;
        return i == len;
}

/* The 11 counters after the name of a diskstats line into fs. */
static bool diskstats_fields(const char *p, struct stats_root_fs *fs)
{
        uint64_t v[11];
        for (size_t k = 0; k < 11; k++) {
                skip_blanks(&p);
                if (!parse_u64_at(&p, &v[k]))
                        return false; /* cAdvisor: "could not parse all 11 columns" */
        }
        fs->has_disk = true;
        fs->reads = v[0];
        fs->reads_merged = v[1];
        fs->sectors_read = v[2];
        fs->read_ms = v[3];
        fs->writes = v[4];
        fs->writes_merged = v[5];
        fs->sectors_written = v[6];
        fs->write_ms = v[7];
        fs->io_in_progress = v[8];
        fs->io_ms = v[9];
        fs->weighted_io_ms = v[10];
        return true;
}

bool stats__parse_diskstats(const char *text, const char *device, uint32_t major, uint32_t minor,
                            struct stats_root_fs *fs)
{
        const char *want = strncmp(device, "/dev/", 5) == 0 ? device + 5 : NULL;
        const char *by_number = NULL; /* the fields of the major:minor line */
        for (const char *line = text; line && *line; line = next_line(line)) {
                const char *p = line;
                uint64_t devno[2];
                skip_blanks(&p);
                if (!parse_u64_at(&p, &devno[0]))
                        continue;
                skip_blanks(&p);
                if (!parse_u64_at(&p, &devno[1]))
                        continue;
                skip_blanks(&p);
                const char *name = p;
                while (*p && *p != ' ' && *p != '\t' && *p != '\n')
                        p++;
                size_t len = (size_t)(p - name);
                if (!disk_stats_name(name, len))
                        continue; /* cAdvisor's map holds these only */
                if (want && strlen(want) == len && memcmp(name, want, len) == 0)
                        return diskstats_fields(p, fs);
                if (by_number == NULL && devno[0] == major && devno[1] == minor)
                        by_number = p;
        }
        return by_number && diskstats_fields(by_number, fs);
}

/* ---- statfs, bounded for network filesystems ------------------------------------ */

struct stats_statfs_job {
        atomic_int refs; /* the thread's and the partition's */
        atomic_bool done;
        char *path;
        int rc;
        struct statvfs st;
};

static void job_unref(struct stats_statfs_job *j)
{
        if (atomic_fetch_sub(&j->refs, 1) == 1) {
                free(j->path);
                free(j);
        }
}

static void *job_run(void *arg)
{
        struct stats_statfs_job *j = arg;
        j->rc = statvfs(j->path, &j->st);
        atomic_store(&j->done, true);
        job_unref(j);
        return NULL;
}

#define STATFS_TIMEOUT_S 2

/* statvfs of a network filesystem's mount point, 2 s at most; a call still
 * running from an earlier refresh: skipped until it returns. */
static int statvfs_bounded(struct stats_partition *part, struct statvfs *st)
{
        if (part->job) {
                if (!atomic_load(&part->job->done))
                        return -1; /* still hung */
                job_unref(part->job);
                part->job = NULL;
        }
        struct stats_statfs_job *j = xcalloc(1, sizeof(*j));
        atomic_init(&j->refs, 2);
        j->path = xstrdup(part->mountpoint);
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 64u << 10);
        int e = pthread_create(&t, &attr, job_run, j);
        pthread_attr_destroy(&attr);
        if (e != 0) {
                free(j->path);
                free(j);
                return -1;
        }
        struct timespec deadline;
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += STATFS_TIMEOUT_S;
        if (pthread_timedjoin_np(t, NULL, &deadline) != 0) {
                pthread_detach(t);
                part->job = j; /* the partition's reference */
                return -1;
        }
        int rc = j->rc;
        if (rc == 0)
                *st = j->st;
        job_unref(j);
        return rc;
}

void stats__partition_jobs_release(struct stats_partition *p, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (p[i].job) {
                        job_unref(p[i].job);
                        p[i].job = NULL;
                }
}

size_t stats__root_fs_read(struct stats_partition *parts, size_t n, const char *diskstats,
                           struct stats_root_fs **out)
{
        *out = NULL;
        size_t o = 0;
        for (size_t i = 0; i < n; i++) {
                struct statvfs st;
                int rc = parts[i].network ? statvfs_bounded(&parts[i], &st)
                                          : statvfs(parts[i].mountpoint, &st);
                if (rc < 0)
                        continue; /* cAdvisor logs it and goes on */
                uint64_t frsize = st.f_frsize ? st.f_frsize : st.f_bsize;
                struct stats_root_fs fs = {
                    .device = xstrdup(parts[i].device),
                    .major = parts[i].major,
                    .minor = parts[i].minor,
                    .limit = (uint64_t)st.f_blocks * frsize,
                    .usage = (uint64_t)(st.f_blocks - st.f_bfree) * frsize,
                    .inodes = (uint64_t)st.f_files,
                    .inodes_free = (uint64_t)st.f_ffree,
                };
                if (diskstats)
                        stats__parse_diskstats(diskstats, fs.device, fs.major, fs.minor, &fs);
                *out = xrealloc(*out, (o + 1) * sizeof(**out));
                (*out)[o++] = fs;
        }
        return o;
}

void stats__root_fs_free(struct stats_root_fs *fs, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(fs[i].device);
        free(fs);
}
