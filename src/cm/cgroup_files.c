/* SPDX-License-Identifier: Apache-2.0 */
/* What the v1 and v2 drivers share: opening a hierarchy, control file I/O,
 * removal of a cgroup subtree, listing, huge page sizes. */
#include "cm/cgroup_driver.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "util/sleep.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define HUGEPAGES_DIR "/sys/kernel/mm/hugepages"
/* rmdir of a cgroup whose last task is still exiting fails with EBUSY for a
 * moment: retry as runc's RemovePath does (10 ms doubling, 5 tries). */
#define RMDIR_TRIES 5
#define RMDIR_FIRST_DELAY_MS 10
/* rounds of SIGKILL over the processes left in a pod's cgroup (upstream) */
#define KILL_ROUNDS 5

bool cm_cgroup_unified(const char *root)
{
        cleanup_free char *controllers = xasprintf("%s/cgroup.controllers", root);
        return access(controllers, F_OK) == 0;
}

int cm_cgroup_fs_open(const char *root, bool fake, struct cgroup_fs **out, ck_error_t *err)
{
        struct cgroup_fs *fs = xcalloc(1, sizeof(*fs));
        fs->root = xstrdup(root);
        fs->fake = fake;
        fs->driver = cm_cgroup_unified(root) ? &cm_cgroup_v2_driver : &cm_cgroup_v1_driver;
        if (fs->driver->probe(fs, err) < 0) {
                const char *version = fs->driver->name;
                cm_cgroup_fs_free(fs);
                return ck_error_wrap(err, "probe cgroup %s hierarchy under `%s`", version, root);
        }
        if (fs->has_hugetlb)
                cm_hugepages_probe(fs);
        *out = fs;
        return 0;
}

void cm_cgroup_fs_free(struct cgroup_fs *fs)
{
        if (fs == NULL)
                return;
        for (size_t i = 0; i < fs->n_mounts; i++) {
                free(fs->mounts[i].controller);
                free(fs->mounts[i].path);
        }
        free(fs->mounts);
        free(fs->v2_enable);
        free(fs->hugepages);
        free(fs->root);
        free(fs);
}

int cm_cgroup_write(const struct cgroup_fs *fs, const char *dir, const char *file,
                    const char *value, ck_error_t *err)
{
        cleanup_free char *path = xasprintf("%s/%s", dir, file);
        /* A real cgroupfs has every control file already; creating one there
         * is impossible, and a missing file must fail, not be made up. */
        int flags = O_WRONLY | O_TRUNC | O_CLOEXEC | (fs->fake ? O_CREAT : 0);
        cleanup_close int fd = TEMP_FAILURE_RETRY_INT(open(path, flags, 0644));
        if (fd < 0)
                return ck_error_make(err, errno, "open `%s`", path);
        size_t len = strlen(value);
        ssize_t n = TEMP_FAILURE_RETRY_INT(write(fd, value, len));
        if (n < 0)
                return ck_error_make(err, errno, "write \"%s\" to `%s`", value, path);
        if ((size_t)n != len)
                return ck_error_make(err, EIO, "write \"%s\" to `%s`: short write", value, path);
        return 0;
}

int cm_cgroup_read(const char *dir, const char *file, char **value, ck_error_t *err)
{
        cleanup_free char *path = xasprintf("%s/%s", dir, file);
        char *buf = NULL;
        size_t len = 0;
        if (fs_read_file(path, 1 << 20, &buf, &len, err) < 0)
                return -1;
        while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
                buf[--len] = '\0';
        *value = buf;
        return 0;
}

int cm_cgroup_read_int(const char *dir, const char *file, int64_t *value, ck_error_t *err)
{
        cleanup_free char *text = NULL;
        if (cm_cgroup_read(dir, file, &text, err) < 0)
                return -1;
        if (strcmp(text, "max") == 0) {
                *value = -1;
                return 0;
        }
        char *end;
        errno = 0;
        long long v = strtoll(text, &end, 10);
        if (errno != 0 || end == text || *end != '\0')
                return ck_error_make(err, 0, "`%s/%s`: not an integer: \"%s\"", dir, file, text);
        *value = v;
        return 0;
}

int cm_cgroup_mkdir(const char *path, bool *created, ck_error_t *err)
{
        *created = false;
        if (mkdir(path, 0755) == 0) {
                *created = true;
                return 0;
        }
        if (errno != EEXIST)
                return ck_error_make(err, errno, "create cgroup `%s`", path);
        struct stat st;
        if (stat(path, &st) < 0)
                return ck_error_make(err, errno, "stat `%s`", path);
        if (!S_ISDIR(st.st_mode))
                return ck_error_make(err, ENOTDIR, "create cgroup `%s`", path);
        return 0;
}

static bool entry_is_dir(const char *dir, const struct dirent *de)
{
        if (de->d_type == DT_DIR)
                return true;
        if (de->d_type != DT_UNKNOWN)
                return false;
        cleanup_free char *path = xasprintf("%s/%s", dir, de->d_name);
        struct stat st;
        return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* rmdir of one cgroup directory and everything below it, deepest first. */
static int remove_cgroup_dir(const struct cgroup_fs *fs, const char *path, ck_error_t *err)
{
        DIR *d = opendir(path);
        if (d == NULL) {
                if (errno == ENOENT)
                        return 0;
                return ck_error_make(err, errno, "open cgroup `%s`", path);
        }
        struct dirent *de;
        int ret = 0;
        while ((de = readdir(d)) != NULL) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                cleanup_free char *child = xasprintf("%s/%s", path, de->d_name);
                if (entry_is_dir(path, de)) {
                        if (remove_cgroup_dir(fs, child, err) < 0) {
                                ret = -1;
                                break;
                        }
                } else if (fs->fake && unlink(child) < 0 && errno != ENOENT) {
                        ret = ck_error_make(err, errno, "remove `%s`", child);
                        break;
                }
        }
        closedir(d);
        if (ret < 0)
                return ret;
        long delay = RMDIR_FIRST_DELAY_MS;
        for (int i = 0; i < RMDIR_TRIES; i++) {
                if (rmdir(path) == 0 || errno == ENOENT)
                        return 0;
                if (errno != EBUSY)
                        return ck_error_make(err, errno, "remove cgroup `%s`", path);
                if (i + 1 < RMDIR_TRIES) {
                        sleep_ms(delay);
                        delay *= 2;
                }
        }
        return ck_error_make(err, EBUSY, "remove cgroup `%s`: it still has processes", path);
}

/* ---- the processes left in a cgroup ---- */

struct pid_set {
        pid_t *pids;
        size_t n, cap;
};

static void pid_set_add(struct pid_set *set, pid_t pid)
{
        for (size_t i = 0; i < set->n; i++)
                if (set->pids[i] == pid)
                        return;
        if (set->n == set->cap) {
                set->cap = set->cap ? set->cap * 2 : 8;
                set->pids = xrealloc(set->pids, set->cap * sizeof(*set->pids));
        }
        set->pids[set->n++] = pid;
}

/* The pids in cgroup.procs of path and of every cgroup below it (upstream
 * cgroupCommon.Pids walks each hierarchy so).  What cannot be read is
 * skipped, as there: the cgroup may be going away. */
static void collect_pids(const char *path, struct pid_set *set)
{
        cleanup_free char *procs = xasprintf("%s/cgroup.procs", path);
        cleanup_fclose FILE *f = fopen(procs, "re");
        if (f != NULL) {
                long pid;
                while (fscanf(f, "%ld", &pid) == 1)
                        if (pid > 0)
                                pid_set_add(set, (pid_t)pid);
        }
        DIR *d = opendir(path);
        if (d == NULL)
                return;
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
                    !entry_is_dir(path, de))
                        continue;
                cleanup_free char *child = xasprintf("%s/%s", path, de->d_name);
                collect_pids(child, set);
        }
        closedir(d);
}

int cm_cgroup_kill_all(struct cgroup_fs *fs, const char *name, ck_error_t *err)
{
        struct pid_set set = {0};
        for (size_t i = 0; i < fs->n_mounts; i++) {
                cleanup_free char *path = xasprintf("%s%s", fs->mounts[i].path, name);
                collect_pids(path, &set);
        }
        int ret = 0;
        size_t left = set.n;
        /* upstream tryKillingCgroupProcesses: five rounds over the pids not
         * yet killed; a process already gone is killed */
        for (int round = 0; round < KILL_ROUNDS && left > 0; round++) {
                int last_errno = 0;
                for (size_t i = 0; i < set.n; i++) {
                        if (set.pids[i] == 0)
                                continue;
                        LOG_INFO(3, "Attempting to kill process from cgroup",
                                 "pid=%ld cgroupName=\"%s\"", (long)set.pids[i], name);
                        if (kill(set.pids[i], SIGKILL) == 0 || errno == ESRCH) {
                                set.pids[i] = 0;
                                left--;
                        } else {
                                last_errno = errno;
                        }
                }
                if (left > 0 && round + 1 == KILL_ROUNDS)
                        ret = ck_error_make(err, last_errno,
                                            "kill the %zu processes left in cgroup \"%s\"", left,
                                            name);
        }
        free(set.pids);
        return ret;
}

int cm_cgroup_destroy(struct cgroup_fs *fs, const char *name, ck_error_t *err)
{
        for (size_t i = 0; i < fs->n_mounts; i++) {
                cleanup_free char *path = xasprintf("%s%s", fs->mounts[i].path, name);
                if (remove_cgroup_dir(fs, path, err) < 0)
                        return -1;
        }
        return 0;
}

bool cm_cgroup_exists(struct cgroup_fs *fs, const char *name)
{
        if (fs->n_mounts == 0)
                return false;
        cleanup_free char *path = xasprintf("%s%s", fs->mounts[0].path, name);
        struct stat st;
        return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int cm_cgroup_list_children(struct cgroup_fs *fs, const char *name, char ***children,
                            ck_error_t *err)
{
        size_t n = 0, cap = 8;
        char **list = xcalloc(cap, sizeof(*list));
        for (size_t i = 0; i < fs->n_mounts; i++) {
                cleanup_free char *path = xasprintf("%s%s", fs->mounts[i].path, name);
                DIR *d = opendir(path);
                if (d == NULL) {
                        if (errno == ENOENT)
                                continue;
                        int e = errno;
                        for (size_t j = 0; j < n; j++)
                                free(list[j]);
                        free(list);
                        return ck_error_make(err, e, "list cgroup `%s`", path);
                }
                struct dirent *de;
                while ((de = readdir(d)) != NULL) {
                        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
                            !entry_is_dir(path, de))
                                continue;
                        bool dup = false;
                        for (size_t j = 0; j < n && !dup; j++)
                                dup = strcmp(list[j], de->d_name) == 0;
                        if (dup)
                                continue;
                        if (n + 1 >= cap) {
                                cap *= 2;
                                list = xrealloc(list, cap * sizeof(*list));
                        }
                        list[n++] = xstrdup(de->d_name);
                }
                closedir(d);
        }
        list[n] = NULL;
        *children = list;
        return 0;
}

void cm_hugepage_name(int64_t bytes, char *buf, size_t len)
{
        static const char *const units[] = {"B", "KB", "MB", "GB", "TB", "PB"};
        double v = (double)bytes;
        size_t u = 0;
        while (v >= 1024 && u + 1 < ARRAY_SIZE(units)) {
                v /= 1024;
                u++;
        }
        snprintf(buf, len, "%g%s", v, units[u]);
}

size_t cm_hugepage_sizes(int64_t *sizes, size_t room)
{
        DIR *d = opendir(HUGEPAGES_DIR);
        if (d == NULL)
                return 0;
        size_t n = 0;
        struct dirent *de;
        while ((de = readdir(d)) != NULL && n < room) {
                long long kb = 0;
                char unit[4] = {0};
                if (sscanf(de->d_name, "hugepages-%lld%3s", &kb, unit) == 2 &&
                    strcmp(unit, "kB") == 0 && kb > 0)
                        sizes[n++] = (int64_t)kb * 1024;
        }
        closedir(d);
        return n;
}

void cm_hugepages_probe(struct cgroup_fs *fs)
{
        int64_t sizes[16];
        size_t n = cm_hugepage_sizes(sizes, ARRAY_SIZE(sizes));
        for (size_t i = 0; i < n; i++) {
                cleanup_free char *dir =
                    xasprintf(HUGEPAGES_DIR "/hugepages-%" PRId64 "kB", sizes[i] / 1024);
                cleanup_free char *nr = NULL;
                ck_error_t err = NULL;
                int64_t pages = 0;
                if (cm_cgroup_read(dir, "nr_hugepages", &nr, &err) == 0)
                        pages = strtoll(nr, NULL, 10);
                ck_error_release(&err);
                fs->hugepages =
                    xrealloc(fs->hugepages, (fs->n_hugepages + 1) * sizeof(*fs->hugepages));
                struct cgroup_hugepage *hp = &fs->hugepages[fs->n_hugepages++];
                cm_hugepage_name(sizes[i], hp->name, sizeof(hp->name));
                hp->page_size = sizes[i];
                hp->capacity = pages * hp->page_size;
        }
}

int64_t cm_hugetlb_limit(const struct cgroup_resources *r, const struct cgroup_hugepage *hp)
{
        switch (r->hugetlb) {
        case CGROUP_HUGETLB_NONE:
                for (size_t i = 0; i < r->n_hugetlb_limits; i++)
                        if (r->hugetlb_limits[i].page_size == hp->page_size)
                                return r->hugetlb_limits[i].limit;
                return 0;
        case CGROUP_HUGETLB_UNBOUNDED:
                return (int64_t)1 << 62;
        case CGROUP_HUGETLB_CAPACITY:
                return hp->capacity;
        case CGROUP_HUGETLB_KEEP:
                break;
        }
        return -1;
}
