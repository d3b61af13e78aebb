/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Disk usage as upstream measures it for the Summary: `du` of a path
 * (pkg/volume/util/fs DiskUsage), the files of a log directory
 * (host_stats_provider.go), the pod's volumes (volume_stat_calculator.go
 * over the emptyDir, configMap, secret, downwardAPI and projected plugins'
 * MetricsDu) and its ephemeral-storage (helper.go calcEphemeralStorage).
 */
#include "stats/stats_internal.h"

#include "util/cleanup.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DU_MAX_DEPTH 256

/* ---- du -------------------------------------------------------------------- */

/* The inodes with more than one link seen so far (open addressing). */
struct ino_set {
        uint64_t *slots; /* 0: empty (inode 0 does not exist) */
        size_t cap, n;
};

static bool ino_set_add(struct ino_set *s, uint64_t ino)
{
        if (ino == 0)
                return true;
        if (2 * (s->n + 1) > s->cap) {
                size_t cap = s->cap ? 2 * s->cap : 64;
                uint64_t *slots = xcalloc(cap, sizeof(*slots));
                for (size_t i = 0; i < s->cap; i++) {
                        if (s->slots[i] == 0)
                                continue;
                        size_t h = (size_t)(s->slots[i] * 0x9e3779b97f4a7c15ull) & (cap - 1);
                        while (slots[h])
                                h = (h + 1) & (cap - 1);
                        slots[h] = s->slots[i];
                }
                free(s->slots);
                s->slots = slots;
                s->cap = cap;
        }
        size_t h = (size_t)(ino * 0x9e3779b97f4a7c15ull) & (s->cap - 1);
        while (s->slots[h]) {
                if (s->slots[h] == ino)
                        return false;
                h = (h + 1) & (s->cap - 1);
        }
        s->slots[h] = ino;
        s->n++;
        return true;
}

struct du {
        dev_t dev;
        struct ino_set seen;
        uint64_t bytes, inodes;
};

static void du_count(struct du *d, const struct stat *st)
{
        if (st->st_nlink > 1 && !ino_set_add(&d->seen, st->st_ino))
                return; /* a hard link already counted */
        d->bytes += (uint64_t)st->st_blocks * 512;
        d->inodes++;
}

/* Counts the entries of the directory open as fd (which it closes). */
static void du_dir(struct du *d, int fd, int depth)
{
        DIR *dir = fdopendir(fd);
        if (dir == NULL) {
                close(fd);
                return;
        }
        struct dirent *e;
        while ((e = readdir(dir)) != NULL) {
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                        continue;
                struct stat st;
                if (fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue; /* deleted meanwhile */
                if (st.st_dev != d->dev)
                        continue; /* another filesystem: not descended into, not counted */
                du_count(d, &st);
                if (!S_ISDIR(st.st_mode) || depth >= DU_MAX_DEPTH)
                        continue;
                int sub =
                    openat(dirfd(dir), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub >= 0)
                        du_dir(d, sub, depth + 1);
        }
        closedir(dir);
}

int stats__disk_usage(const char *path, uint64_t *bytes, uint64_t *inodes, ck_error_t *err)
{
        struct stat top;
        if (stat(path, &top) < 0)
                return ck_error_make(err, errno, "stat `%s`", path);
        struct du d = {.dev = top.st_dev};
        struct stat st;
        if (lstat(path, &st) == 0 && st.st_dev == d.dev) {
                du_count(&d, &st);
                if (S_ISDIR(st.st_mode)) {
                        int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (fd >= 0)
                                du_dir(&d, fd, 1);
                }
        }
        free(d.seen.slots);
        *bytes = d.bytes;
        *inodes = d.inodes;
        return 0;
}

/* ---- FsStats helpers -------------------------------------------------------- */

/* upstream addUsage: nil + nil is nil. */
static void add_usage(struct stats_u64 *dst, struct stats_u64 v)
{
        if (!v.ok)
                return;
        if (!dst->ok)
                *dst = v;
        else
                dst->v += v.v;
}

static void max_time(int64_t *dst, int64_t t)
{
        if (t > *dst)
                *dst = t;
}

/* rootFsInfoToFsStats */
static struct stats_fs from_rootfs(const struct stats_fs *rootfs)
{
        struct stats_fs f = {.ok = true};
        if (rootfs && rootfs->ok) {
                f.time_ns = rootfs->time_ns;
                f.available = rootfs->available;
                f.capacity = rootfs->capacity;
                f.inodes_free = rootfs->inodes_free;
                f.inodes = rootfs->inodes;
        }
        return f;
}

bool stats__dir_files_usage(const char *dir, const struct stats_fs *rootfs, int64_t now_ns,
                            struct stats_fs *out)
{
        DIR *d = opendir(dir);
        if (d == NULL)
                return false;
        *out = from_rootfs(rootfs);
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
                struct stat st;
                /* upstream's DirEntry.IsDir: a link to a directory is a file here */
                if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    S_ISDIR(st.st_mode))
                        continue;
                cleanup_free char *path = xasprintf("%s/%s", dir, e->d_name);
                uint64_t bytes, inodes;
                cleanup_error ck_error_t err = NULL;
                if (stats__disk_usage(path, &bytes, &inodes, &err) < 0)
                        continue;
                add_usage(&out->used, stats_u64_of(bytes));
                add_usage(&out->inodes_used, stats_u64_of(inodes));
                max_time(&out->time_ns, now_ns);
        }
        closedir(d);
        return true;
}

/* ---- Paths ------------------------------------------------------------------- */

static bool safe_component(const char *s)
{
        return s && *s && strchr(s, '/') == NULL && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

char *stats__pod_logs_path(const char *logs_dir, const char *ns, const char *name, const char *uid,
                           const char *container)
{
        if (!safe_component(ns) || !safe_component(name) || !safe_component(uid) ||
            (container && !safe_component(container)))
                return NULL;
        /* kuberuntime BuildPodLogsDirectory / BuildContainerLogsDirectory */
        if (container)
                return xasprintf("%s/%s_%s_%s/%s", logs_dir, ns, name, uid, container);
        return xasprintf("%s/%s_%s_%s", logs_dir, ns, name, uid);
}

/* ---- Volumes ------------------------------------------------------------------ */

struct pod_volumes {
        char *uid;
        int64_t measured_mono_ns;
        struct stats_volume *v;
        size_t n;
};

struct stats_volume_cache {
        struct pod_volumes *pods;
        size_t n;
};

struct stats_volume_cache *stats__volume_cache_new(void)
{
        return xcalloc(1, sizeof(struct stats_volume_cache));
}

static void volumes_free(struct stats_volume *v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(v[i].name);
        free(v);
}

static void pod_volumes_clear(struct pod_volumes *pv)
{
        free(pv->uid);
        volumes_free(pv->v, pv->n);
        memset(pv, 0, sizeof(*pv));
}

void stats__volume_cache_free(struct stats_volume_cache *c)
{
        if (c == NULL)
                return;
        for (size_t i = 0; i < c->n; i++)
                pod_volumes_clear(&c->pods[i]);
        free(c->pods);
        free(c);
}

static int cmp_volume(const void *a, const void *b)
{
        return strcmp(((const struct stats_volume *)a)->name,
                      ((const struct stats_volume *)b)->name);
}

/* The plugins whose volumes report metrics (MetricsDu) and whether they
 * are local ephemeral storage (IsLocalEphemeralVolume: emptyDir on disk,
 * configMap; secret, downwardAPI and projected are on tmpfs). */
static const struct {
        const char *dir;
        bool ephemeral;
        bool empty_dir;
} plugins[] = {
    {"kubernetes.io~empty-dir", true, true},   {"kubernetes.io~configmap", true, false},
    {"kubernetes.io~secret", false, false},    {"kubernetes.io~downward-api", false, false},
    {"kubernetes.io~projected", false, false},
};

static void measure_volume(const char *path, bool ephemeral, const char *name, int64_t now_ns,
                           struct stats_volume **v, size_t *n)
{
        uint64_t bytes, inodes;
        struct stats_fs_info fi;
        cleanup_error ck_error_t err = NULL;
        if (stats__disk_usage(path, &bytes, &inodes, &err) < 0 ||
            stats_fs_info(path, &fi, &err) < 0) {
                LOG_INFO(4, "Failed to calculate volume metrics", "path=\"%s\" err=\"%s\"", path,
                         ck_error_msg(err));
                return;
        }
        *v = xrealloc(*v, (*n + 1) * sizeof(**v));
        struct stats_volume *vol = &(*v)[(*n)++];
        memset(vol, 0, sizeof(*vol));
        vol->name = xstrdup(name);
        vol->ephemeral = ephemeral;
        /* parsePodVolumeStats sets every field */
        vol->fs = (struct stats_fs){
            .ok = true,
            .time_ns = now_ns,
            .available = stats_u64_of(fi.available),
            .capacity = stats_u64_of(fi.capacity),
            .used = stats_u64_of(bytes),
            .inodes_free = stats_u64_of(fi.inodes_free),
            .inodes = stats_u64_of(fi.inodes),
            .inodes_used = stats_u64_of(inodes),
        };
}

static void measure_pod(const char *root_dir, const char *uid, int64_t now_ns,
                        struct stats_volume **v, size_t *n)
{
        *v = NULL;
        *n = 0;
        for (size_t i = 0; i < sizeof(plugins) / sizeof(plugins[0]); i++) {
                cleanup_free char *dir =
                    xasprintf("%s/pods/%s/volumes/%s", root_dir, uid, plugins[i].dir);
                DIR *d = opendir(dir);
                if (d == NULL)
                        continue;
                struct stat plugin_st;
                if (fstat(dirfd(d), &plugin_st) < 0) {
                        closedir(d);
                        continue;
                }
                struct dirent *e;
                while ((e = readdir(d)) != NULL) {
                        struct stat st;
                        if (e->d_name[0] == '.' ||
                            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                            !S_ISDIR(st.st_mode))
                                continue;
                        /* a medium Memory (or HugePages) emptyDir is a mount */
                        bool ephemeral = plugins[i].ephemeral &&
                                         !(plugins[i].empty_dir && st.st_dev != plugin_st.st_dev);
                        cleanup_free char *path = xasprintf("%s/%s", dir, e->d_name);
                        measure_volume(path, ephemeral, e->d_name, now_ns, v, n);
                }
                closedir(d);
        }
        if (*n > 1)
                qsort(*v, *n, sizeof(**v), cmp_volume);
}

void stats__pod_volumes(struct stats_volume_cache *c, const char *root_dir, const char *uid,
                        int64_t now_ns, int64_t now_mono_ns, int64_t period_ns,
                        struct stats_volume **out, size_t *n)
{
        *out = NULL;
        *n = 0;
        if (period_ns < 0 || !safe_component(uid))
                return;
        struct pod_volumes *pv = NULL;
        for (size_t i = 0; i < c->n && pv == NULL; i++)
                if (strcmp(c->pods[i].uid, uid) == 0)
                        pv = &c->pods[i];
        if (pv == NULL) {
                c->pods = xrealloc(c->pods, (c->n + 1) * sizeof(*c->pods));
                pv = &c->pods[c->n++];
                memset(pv, 0, sizeof(*pv));
                pv->uid = xstrdup(uid);
                pv->measured_mono_ns = INT64_MIN;
        }
        if (pv->measured_mono_ns == INT64_MIN || now_mono_ns - pv->measured_mono_ns >= period_ns) {
                volumes_free(pv->v, pv->n);
                measure_pod(root_dir, uid, now_ns, &pv->v, &pv->n);
                pv->measured_mono_ns = now_mono_ns;
        }
        if (pv->n == 0)
                return;
        *out = xcalloc(pv->n, sizeof(**out));
        for (size_t i = 0; i < pv->n; i++) {
                (*out)[i] = pv->v[i];
                (*out)[i].name = xstrdup(pv->v[i].name);
        }
        *n = pv->n;
}

void stats__volume_cache_retain(struct stats_volume_cache *c, char *const *uids, size_t n)
{
        size_t o = 0;
        for (size_t i = 0; i < c->n; i++) {
                bool keep = false;
                for (size_t k = 0; k < n && !keep; k++)
                        keep = strcmp(c->pods[i].uid, uids[k]) == 0;
                if (keep)
                        c->pods[o++] = c->pods[i];
                else
                        pod_volumes_clear(&c->pods[i]);
        }
        c->n = o;
}

/* ---- ephemeral-storage ----------------------------------------------------------- */

static void add_fs_usage(struct stats_fs *dst, const struct stats_fs *src)
{
        add_usage(&dst->used, src->used);
        add_usage(&dst->inodes_used, src->inodes_used);
        max_time(&dst->time_ns, src->time_ns);
}

void stats__pod_ephemeral(const struct stats_provider *p, struct stats_pod *pod,
                          const struct stats_fs *rootfs, int64_t now_ns)
{
        struct stats_fs r = from_rootfs(rootfs);
        for (size_t i = 0; i < pod->n_containers; i++) {
                const struct stats_container *c = &pod->containers[i];
                if (!c->rootfs.ok)
                        continue;
                max_time(&r.time_ns, c->rootfs.time_ns);
                add_usage(&r.inodes_used, c->rootfs.inodes_used);
                add_usage(&r.used, c->rootfs.used);
                if (c->logs.ok) {
                        add_usage(&r.used, c->logs.used);
                        /* the CRI provider's log inodes are exact */
                        add_usage(&r.inodes_used, c->logs.inodes_used);
                        max_time(&r.time_ns, c->logs.time_ns);
                }
        }
        for (size_t i = 0; i < pod->n_volumes; i++)
                if (pod->volumes[i].ephemeral)
                        add_fs_usage(&r, &pod->volumes[i].fs);
        cleanup_free char *logs =
            stats__pod_logs_path(p->pod_logs_dir, pod->namespace, pod->name, pod->uid, NULL);
        struct stats_fs f;
        if (logs && stats__dir_files_usage(logs, rootfs, now_ns, &f))
                add_fs_usage(&r, &f);
        if (safe_component(pod->uid)) {
                cleanup_free char *hosts = xasprintf("%s/pods/%s/etc-hosts", p->root_dir, pod->uid);
                uint64_t bytes, inodes;
                cleanup_error ck_error_t err = NULL;
                if (access(hosts, F_OK) == 0 &&
                    stats__disk_usage(hosts, &bytes, &inodes, &err) == 0) {
                        struct stats_fs h = from_rootfs(rootfs);
                        h.used = stats_u64_of(bytes);
                        h.inodes_used = stats_u64_of(inodes);
                        max_time(&h.time_ns, now_ns);
                        add_fs_usage(&r, &h);
                }
        }
        pod->ephemeral = r;
}
