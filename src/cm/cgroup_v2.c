/* SPDX-License-Identifier: Apache-2.0 */
/* cgroup v2: the unified hierarchy at <root>.  Controllers reach a cgroup
 * only when every ancestor lists them in cgroup.subtree_control, so creating
 * a cgroup enables the root's controllers in each ancestor first (as runc's
 * fs2 CreateCgroupPath does for the kubelet, upstream cgroupV2impl). */
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
#include <sys/vfs.h>

static bool has_word(const char *list, const char *word)
{
        size_t n = strlen(word);
        for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
                if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
                        return true;
        return false;
}

static int v2_probe(struct cgroup_fs *fs, ck_error_t *err)
{
        if (!fs->fake) {
                struct statfs sfs;
                if (statfs(fs->root, &sfs) < 0)
                        return ck_error_make(err, errno, "statfs `%s`", fs->root);
                if (sfs.f_type != CGROUP2_SUPER_MAGIC)
                        return ck_error_make(err, 0, "`%s` is not a cgroup2 filesystem", fs->root);
        }
        cleanup_free char *controllers = NULL;
        if (cm_cgroup_read(fs->root, "cgroup.controllers", &controllers, err) < 0)
                return -1;
        static const char *const required[] = {"cpu", "memory"};
        for (size_t i = 0; i < ARRAY_SIZE(required); i++)
                if (!has_word(controllers, required[i]))
                        return ck_error_make(err, 0,
                                             "cgroup v2 controller %s is not available in "
                                             "`%s/cgroup.controllers` (\"%s\")",
                                             required[i], fs->root, controllers);
        fs->has_pids = has_word(controllers, "pids");
        fs->has_hugetlb = has_word(controllers, "hugetlb");

        /* "cpu memory pids" -> "+cpu +memory +pids" */
        size_t cap = strlen(controllers) * 2 + 2, len = 0;
        fs->v2_enable = xcalloc(1, cap);
        char *save = NULL;
        for (char *w = strtok_r(controllers, " \n", &save); w; w = strtok_r(NULL, " \n", &save))
                len += (size_t)snprintf(fs->v2_enable + len, cap - len, "%s+%s", len ? " " : "", w);

        fs->mounts = xcalloc(1, sizeof(*fs->mounts));
        fs->mounts[0].controller = xstrdup("");
        fs->mounts[0].path = xstrdup(fs->root);
        fs->n_mounts = 1;
        return 0;
}

/* Enables the controllers for the children of `dir`.  One write enables all
 * of them; if the kernel refuses that (one controller cannot be enabled
 * here), each is tried alone and a refusal left for the value writes to
 * report, as runc does. */
static void enable_controllers(const struct cgroup_fs *fs, const char *dir)
{
        ck_error_t err = NULL;
        if (cm_cgroup_write(fs, dir, "cgroup.subtree_control", fs->v2_enable, &err) == 0)
                return;
        LOG_INFO(4, "Enabling cgroup controllers one by one", "cgroup=\"%s\" err=\"%s\"", dir,
                 ck_error_msg(err));
        ck_error_release(&err);
        cleanup_free char *copy = xstrdup(fs->v2_enable);
        char *save = NULL;
        for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
                if (cm_cgroup_write(fs, dir, "cgroup.subtree_control", w, &err) < 0)
                        LOG_INFO(4, "Cannot enable cgroup controller",
                                 "cgroup=\"%s\" controller=\"%s\" err=\"%s\"", dir, w + 1,
                                 ck_error_msg(err));
                ck_error_release(&err);
        }
}

static int v2_create(struct cgroup_fs *fs, const char *name, ck_error_t *err)
{
        if (*name == '\0')
                return 0;
        cleanup_free char *path = xasprintf("%s%s", fs->root, name);
        size_t root_len = strlen(fs->root);
        for (char *p = path + root_len + 1;; p++) {
                if (*p != '/' && *p != '\0')
                        continue;
                char saved = *p;
                *p = '\0';
                /* the parent of this level */
                char *slash = strrchr(path, '/');
                *slash = '\0';
                enable_controllers(fs, path);
                *slash = '/';
                bool created;
                if (cm_cgroup_mkdir(path, &created, err) < 0)
                        return -1;
                *p = saved;
                if (saved == '\0')
                        break;
        }
        return 0;
}

static int v2_set(struct cgroup_fs *fs, const char *name, const struct cgroup_resources *r,
                  ck_error_t *err)
{
        char buf[64];
        cleanup_free char *dir = xasprintf("%s%s", fs->root, name);
        if (r->has_cpu_shares) {
                snprintf(buf, sizeof(buf), "%" PRIu64, cm_cpu_shares_to_weight(r->cpu_shares));
                if (cm_cgroup_write(fs, dir, "cpu.weight", buf, err) < 0)
                        return -1;
        }
        if (r->has_cpu_quota) {
                if (r->cpu_quota > 0)
                        snprintf(buf, sizeof(buf), "%" PRId64 " %" PRIu64, r->cpu_quota,
                                 r->cpu_period);
                else
                        snprintf(buf, sizeof(buf), "max %" PRIu64, r->cpu_period);
                if (cm_cgroup_write(fs, dir, "cpu.max", buf, err) < 0)
                        return -1;
        }
        if (r->has_memory && r->memory != 0) {
                if (r->memory > 0)
                        snprintf(buf, sizeof(buf), "%" PRId64, r->memory);
                else
                        snprintf(buf, sizeof(buf), "max");
                if (cm_cgroup_write(fs, dir, "memory.max", buf, err) < 0)
                        return -1;
        }
        if (r->has_pids_limit && fs->has_pids) {
                if (r->pids_limit > 0)
                        snprintf(buf, sizeof(buf), "%" PRId64, r->pids_limit);
                else
                        snprintf(buf, sizeof(buf), "max");
                if (cm_cgroup_write(fs, dir, "pids.max", buf, err) < 0)
                        return -1;
        } else if (r->has_pids_limit) {
                LOG_INFO(4, "Optional subsystem not supported: pids", "cgroup=\"%s\"", name);
        }
        if (r->hugetlb != CGROUP_HUGETLB_KEEP && fs->has_hugetlb) {
                for (size_t i = 0; i < fs->n_hugepages; i++) {
                        cleanup_free char *file =
                            xasprintf("hugetlb.%s.max", fs->hugepages[i].name);
                        snprintf(buf, sizeof(buf), "%" PRId64,
                                 cm_hugetlb_limit(r, &fs->hugepages[i]));
                        if (cm_cgroup_write(fs, dir, file, buf, err) < 0)
                                return -1;
                }
        }
        return 0;
}

static int v2_get(struct cgroup_fs *fs, const char *name, struct cgroup_resources *r,
                  ck_error_t *err)
{
        cleanup_free char *dir = xasprintf("%s%s", fs->root, name);
        cleanup_free char *max = NULL;
        int64_t weight;
        if (cm_cgroup_read_int(dir, "cpu.weight", &weight, err) < 0 ||
            cm_cgroup_read(dir, "cpu.max", &max, err) < 0 ||
            cm_cgroup_read_int(dir, "memory.max", &r->memory, err) < 0)
                return -1;
        /* "<quota> <period>" or "max <period>" */
        char quota[32];
        unsigned long long period;
        if (sscanf(max, "%31s %llu", quota, &period) != 2)
                return ck_error_make(err, 0, "`%s/cpu.max`: unexpected \"%s\"", dir, max);
        r->cpu_quota = strcmp(quota, "max") == 0 ? -1 : strtoll(quota, NULL, 10);
        r->cpu_period = period;
        r->cpu_shares = cm_cpu_weight_to_shares((uint64_t)weight);
        r->has_cpu_shares = r->has_cpu_quota = r->has_memory = true;
        return 0;
}

static int v2_memory_usage(struct cgroup_fs *fs, const char *name, int64_t *usage, ck_error_t *err)
{
        cleanup_free char *dir = xasprintf("%s%s", fs->root, name);
        return cm_cgroup_read_int(dir, "memory.current", usage, err);
}

const struct cgroup_driver cm_cgroup_v2_driver = {
    .name = "v2",
    .probe = v2_probe,
    .create = v2_create,
    .set = v2_set,
    .get = v2_get,
    .memory_usage = v2_memory_usage,
};
