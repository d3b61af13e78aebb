/* SPDX-License-Identifier: Apache-2.0 */
/* cgroup v1: one hierarchy per controller under <root>/<controller> (also
 * the v1 part of a hybrid layout).  A cgroup is created in every mounted
 * controller, as runc's fs manager does for the kubelet (upstream
 * cgroupV1impl).  In a hybrid layout the controller-less v2 hierarchy at
 * <root>/unified is one more: runc makes each container's cgroup there too,
 * with its parents (the pod's), so a pod's cgroup removed only from the v1
 * hierarchies would leave a directory there behind. */
#include "cm/cgroup_driver.h"
#include "cm/cm.h"
#include "util/cleanup.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <inttypes.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

/* Controllers looked for, the ones values are written to first so that a
 * combined mount ("cpu,cpuacct") is known by the name set() looks up. */
static const char *const v1_controllers[] = {
    "cpu",     "memory",  "pids",     "hugetlb",    "cpuset", "cpuacct", "blkio",   "devices",
    "freezer", "net_cls", "net_prio", "perf_event", "rdma",   "misc",    "systemd",
};

static const char *mount_of(const struct cgroup_fs *fs, const char *controller)
{
        for (size_t i = 0; i < fs->n_mounts; i++)
                if (strcmp(fs->mounts[i].controller, controller) == 0)
                        return fs->mounts[i].path;
        return NULL;
}

static int v1_probe(struct cgroup_fs *fs, ck_error_t *err)
{
        struct {
                dev_t dev;
                ino_t ino;
        } seen[ARRAY_SIZE(v1_controllers)];
        size_t n_seen = 0;
        fs->mounts = xcalloc(ARRAY_SIZE(v1_controllers) + 1, sizeof(*fs->mounts));
        for (size_t i = 0; i < ARRAY_SIZE(v1_controllers); i++) {
                cleanup_free char *path = xasprintf("%s/%s", fs->root, v1_controllers[i]);
                struct stat st;
                if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
                        continue;
                if (!fs->fake) {
                        struct statfs sfs;
                        if (statfs(path, &sfs) < 0 || sfs.f_type != CGROUP_SUPER_MAGIC)
                                continue; /* a directory, but nothing mounted there */
                }
                bool dup = false;
                for (size_t j = 0; j < n_seen && !dup; j++)
                        dup = seen[j].dev == st.st_dev && seen[j].ino == st.st_ino;
                if (dup)
                        continue; /* the same hierarchy under another name */
                seen[n_seen].dev = st.st_dev;
                seen[n_seen++].ino = st.st_ino;
                fs->mounts[fs->n_mounts].controller = xstrdup(v1_controllers[i]);
                fs->mounts[fs->n_mounts++].path = path;
                path = NULL;
        }
        static const char *const required[] = {"cpu", "memory"};
        for (size_t i = 0; i < ARRAY_SIZE(required); i++)
                if (mount_of(fs, required[i]) == NULL)
                        return ck_error_make(err, ENOENT,
                                             "cgroup v1 controller %s is not mounted at `%s/%s`",
                                             required[i], fs->root, required[i]);
        fs->has_pids = mount_of(fs, "pids") != NULL;
        fs->has_hugetlb = mount_of(fs, "hugetlb") != NULL;
        /* hybrid: the v2 hierarchy, no controllers (nothing is written there) */
        cleanup_free char *unified = xasprintf("%s/unified", fs->root);
        struct stat st;
        struct statfs sfs;
        if (stat(unified, &st) == 0 && S_ISDIR(st.st_mode) &&
            (fs->fake || (statfs(unified, &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC))) {
                fs->mounts[fs->n_mounts].controller = xstrdup("");
                fs->mounts[fs->n_mounts++].path = unified;
                unified = NULL;
        }
        return 0;
}

/* A new cpuset cgroup has no cpus and no mems, and no task can join it:
 * copy the parent's (runc's cpuset ensureParent). */
static int cpuset_init(const struct cgroup_fs *fs, const char *parent, const char *path,
                       ck_error_t *err)
{
        static const char *const files[] = {"cpuset.cpus", "cpuset.mems"};
        for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
                cleanup_free char *cur = NULL;
                cleanup_free char *from_parent = NULL;
                if (cm_cgroup_read(path, files[i], &cur, err) < 0) {
                        if (fs->fake && (*err)->status == ENOENT) {
                                ck_error_release(err);
                                continue;
                        }
                        return -1;
                }
                if (*cur != '\0')
                        continue;
                if (cm_cgroup_read(parent, files[i], &from_parent, err) < 0)
                        return -1;
                if (cm_cgroup_write(fs, path, files[i], from_parent, err) < 0)
                        return -1;
        }
        return 0;
}

static int v1_create(struct cgroup_fs *fs, const char *name, ck_error_t *err)
{
        if (*name == '\0')
                return 0; /* the root exists */
        for (size_t i = 0; i < fs->n_mounts; i++) {
                const struct cgroup_mount *m = &fs->mounts[i];
                bool cpuset = strcmp(m->controller, "cpuset") == 0;
                cleanup_free char *path = xasprintf("%s%s", m->path, name);
                /* mkdir each level below the mount point */
                for (char *p = path + strlen(m->path) + 1;; p++) {
                        if (*p != '/' && *p != '\0')
                                continue;
                        char saved = *p;
                        *p = '\0';
                        bool created;
                        if (cm_cgroup_mkdir(path, &created, err) < 0)
                                return -1;
                        if (cpuset) {
                                cleanup_free char *parent = xstrdup(path);
                                *strrchr(parent, '/') = '\0';
                                if (cpuset_init(fs, parent, path, err) < 0)
                                        return ck_error_wrap(err, "set up cpuset `%s`", path);
                        }
                        *p = saved;
                        if (saved == '\0')
                                break;
                }
        }
        return 0;
}

static int v1_set_cpu(struct cgroup_fs *fs, const char *dir, const struct cgroup_resources *r,
                      ck_error_t *err)
{
        char buf[64];
        if (r->has_cpu_shares) {
                snprintf(buf, sizeof(buf), "%" PRIu64, r->cpu_shares);
                if (cm_cgroup_write(fs, dir, "cpu.shares", buf, err) < 0)
                        return -1;
        }
        if (!r->has_cpu_quota)
                return 0;
        /* A period shorter than the current one can be refused (EINVAL) while
         * the old quota stands: set the quota, then the period again (runc). */
        bool period_pending = false;
        snprintf(buf, sizeof(buf), "%" PRIu64, r->cpu_period);
        if (cm_cgroup_write(fs, dir, "cpu.cfs_period_us", buf, err) < 0) {
                if ((*err)->status != EINVAL)
                        return -1;
                ck_error_release(err);
                period_pending = true;
        }
        snprintf(buf, sizeof(buf), "%" PRId64, r->cpu_quota);
        if (cm_cgroup_write(fs, dir, "cpu.cfs_quota_us", buf, err) < 0)
                return -1;
        if (period_pending) {
                snprintf(buf, sizeof(buf), "%" PRIu64, r->cpu_period);
                if (cm_cgroup_write(fs, dir, "cpu.cfs_period_us", buf, err) < 0)
                        return -1;
        }
        return 0;
}

static int v1_set(struct cgroup_fs *fs, const char *name, const struct cgroup_resources *r,
                  ck_error_t *err)
{
        char buf[64];
        cleanup_free char *cpu = xasprintf("%s%s", mount_of(fs, "cpu"), name);
        if (v1_set_cpu(fs, cpu, r, err) < 0)
                return -1;
        if (r->has_memory && r->memory != 0) {
                cleanup_free char *mem = xasprintf("%s%s", mount_of(fs, "memory"), name);
                snprintf(buf, sizeof(buf), "%" PRId64, r->memory);
                if (cm_cgroup_write(fs, mem, "memory.limit_in_bytes", buf, err) < 0)
                        return -1;
        }
        if (r->has_pids_limit && fs->has_pids) {
                cleanup_free char *pids = xasprintf("%s%s", mount_of(fs, "pids"), name);
                if (r->pids_limit > 0)
                        snprintf(buf, sizeof(buf), "%" PRId64, r->pids_limit);
                else
                        snprintf(buf, sizeof(buf), "max");
                if (cm_cgroup_write(fs, pids, "pids.max", buf, err) < 0)
                        return -1;
        } else if (r->has_pids_limit) {
                LOG_INFO(4, "Optional subsystem not supported: pids", "cgroup=\"%s\"", name);
        }
        if (r->hugetlb != CGROUP_HUGETLB_KEEP && fs->has_hugetlb) {
                cleanup_free char *dir = xasprintf("%s%s", mount_of(fs, "hugetlb"), name);
                for (size_t i = 0; i < fs->n_hugepages; i++) {
                        cleanup_free char *file =
                            xasprintf("hugetlb.%s.limit_in_bytes", fs->hugepages[i].name);
                        snprintf(buf, sizeof(buf), "%" PRId64,
                                 cm_hugetlb_limit(r, &fs->hugepages[i]));
                        if (cm_cgroup_write(fs, dir, file, buf, err) < 0)
                                return -1;
                }
        }
        return 0;
}

static int v1_get(struct cgroup_fs *fs, const char *name, struct cgroup_resources *r,
                  ck_error_t *err)
{
        cleanup_free char *cpu = xasprintf("%s%s", mount_of(fs, "cpu"), name);
        cleanup_free char *mem = xasprintf("%s%s", mount_of(fs, "memory"), name);
        int64_t shares, quota, period;
        if (cm_cgroup_read_int(cpu, "cpu.shares", &shares, err) < 0 ||
            cm_cgroup_read_int(cpu, "cpu.cfs_quota_us", &quota, err) < 0 ||
            cm_cgroup_read_int(cpu, "cpu.cfs_period_us", &period, err) < 0 ||
            cm_cgroup_read_int(mem, "memory.limit_in_bytes", &r->memory, err) < 0)
                return -1;
        r->has_cpu_shares = r->has_cpu_quota = r->has_memory = true;
        r->cpu_shares = (uint64_t)shares;
        r->cpu_quota = quota;
        r->cpu_period = (uint64_t)period;
        return 0;
}

static int v1_memory_usage(struct cgroup_fs *fs, const char *name, int64_t *usage, ck_error_t *err)
{
        cleanup_free char *mem = xasprintf("%s%s", mount_of(fs, "memory"), name);
        return cm_cgroup_read_int(mem, "memory.usage_in_bytes", usage, err);
}

const struct cgroup_driver cm_cgroup_v1_driver = {
    .name = "v1",
    .probe = v1_probe,
    .create = v1_create,
    .set = v1_set,
    .get = v1_get,
    .memory_usage = v1_memory_usage,
};
