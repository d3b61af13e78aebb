/* SPDX-License-Identifier: Apache-2.0 */
#include "util/fsutil.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#ifndef STATX_ATTR_MOUNT_ROOT
#define STATX_ATTR_MOUNT_ROOT 0x00002000
#endif

/* Passes over a directory before fs_remove_all gives up on entries that keep
 * appearing (something is writing into the tree while it is removed). */
#define REMOVE_ALL_MAX_PASSES 16

int fs_mkdir_p(const char *path, mode_t mode, ck_error_t *err)
{
        if (path == NULL || *path == '\0')
                return ck_error_make(err, 0, "mkdir: empty path");
        cleanup_free char *copy = xstrdup(path);
        for (char *p = copy + 1;; p++) {
                if (*p != '/' && *p != '\0')
                        continue;
                char saved = *p;
                *p = '\0';
                if (mkdir(copy, mode) < 0) {
                        int e = errno;
                        struct stat st;
                        if (e != EEXIST)
                                return ck_error_make(err, e, "mkdir `%s`", copy);
                        if (stat(copy, &st) < 0)
                                return ck_error_make(err, errno, "stat `%s`", copy);
                        if (!S_ISDIR(st.st_mode))
                                return ck_error_make(err, ENOTDIR, "mkdir `%s`", copy);
                }
                *p = saved;
                if (saved == '\0')
                        break;
        }
        return 0;
}

int fs_read_file(const char *path, size_t max, char **buf, size_t *len, ck_error_t *err)
{
        cleanup_close int fd = TEMP_FAILURE_RETRY_INT(open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY));
        if (fd < 0)
                return ck_error_make(err, errno, "open `%s`", path);
        size_t cap = 4096, used = 0;
        cleanup_free char *data = xmalloc(cap);
        for (;;) {
                if (cap - used < 2) {
                        cap *= 2;
                        data = xrealloc(data, cap);
                }
                ssize_t n = TEMP_FAILURE_RETRY_INT(read(fd, data + used, cap - used - 1));
                if (n < 0)
                        return ck_error_make(err, errno, "read `%s`", path);
                if (n == 0)
                        break;
                used += (size_t)n;
                if (used > max)
                        return ck_error_make(err, EFBIG, "read `%s`: larger than %zu bytes", path,
                                             max);
        }
        data[used] = '\0';
        *buf = data;
        data = NULL;
        if (len)
                *len = used;
        return 0;
}

static int write_all(int fd, const void *data, size_t len)
{
        const char *p = data;
        while (len > 0) {
                ssize_t n = TEMP_FAILURE_RETRY_INT(write(fd, p, len));
                if (n < 0)
                        return -1;
                p += n;
                len -= (size_t)n;
        }
        return 0;
}

static int fsync_dir(const char *dir, ck_error_t *err)
{
        cleanup_close int fd =
            TEMP_FAILURE_RETRY_INT(open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (fd < 0)
                return ck_error_make(err, errno, "open directory `%s`", dir);
        /* Some filesystems cannot sync a directory (EINVAL): nothing to wait for. */
        if (fsync(fd) < 0 && errno != EINVAL)
                return ck_error_make(err, errno, "fsync directory `%s`", dir);
        return 0;
}

int fs_write_file_atomic(const char *path, const void *data, size_t len, mode_t mode,
                         ck_error_t *err)
{
        cleanup_free char *dir_copy = xstrdup(path);
        cleanup_free char *base_copy = xstrdup(path);
        const char *dir = dirname(dir_copy);
        const char *base = basename(base_copy);
        /* ".<base>.XXXXXX" in the same directory, so the rename is atomic; the
         * name is bounded so that a long base name still fits NAME_MAX. */
        cleanup_free char *tmp = xasprintf("%s/.%.200s.XXXXXX", dir, base);
        int fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return ck_error_make(err, errno, "create temporary file for `%s`", path);

        int e = 0;
        const char *step = NULL;
        if (write_all(fd, data, len) < 0) {
                e = errno;
                step = "write";
        } else if (fchmod(fd, mode) < 0) {
                e = errno;
                step = "chmod";
        } else if (fsync(fd) < 0) {
                e = errno;
                step = "fsync";
        }
        if (close(fd) < 0 && step == NULL && errno != EINTR) {
                e = errno;
                step = "close";
        }
        if (step == NULL && rename(tmp, path) < 0) {
                e = errno;
                step = "rename";
        }
        if (step != NULL) {
                unlink(tmp);
                return ck_error_make(err, e, "write `%s`: %s `%s`", path, step, tmp);
        }
        if (fsync_dir(dir, err) < 0)
                return ck_error_wrap(err, "write `%s`", path);
        return 0;
}

/* status EXDEV (as openat2 says it) without strerror's "Invalid cross-device link" */
static int escape_error(const char *rel, ck_error_t *err)
{
        ck_error_make(err, 0, "open `%s`: path escapes its directory", rel);
        if (err != NULL)
                (*err)->status = EXDEV;
        return -1;
}

/* True if rel is relative and has no ".." component. */
static bool path_stays_beneath(const char *rel)
{
        if (rel[0] == '/')
                return false;
        const char *p = rel;
        while (*p) {
                const char *slash = strchr(p, '/');
                size_t n = slash ? (size_t)(slash - p) : strlen(p);
                if (n == 2 && p[0] == '.' && p[1] == '.')
                        return false;
                p += n;
                while (*p == '/')
                        p++;
        }
        return true;
}

int fs_open_beneath_walk(int dirfd, const char *rel, int flags, mode_t mode, ck_error_t *err)
{
        if (*rel == '\0' || !path_stays_beneath(rel))
                return escape_error(rel, err);
        cleanup_free char *copy = xstrdup(rel);
        /* strip trailing slashes: "a/b/" names b */
        for (size_t n = strlen(copy); n > 1 && copy[n - 1] == '/'; n--)
                copy[n - 1] = '\0';
        cleanup_close int cur = -1;
        int at = dirfd;
        char *save = NULL;
        char *comp = strtok_r(copy, "/", &save);
        while (comp != NULL) {
                char *next = strtok_r(NULL, "/", &save);
                if (next == NULL) {
                        int fd = TEMP_FAILURE_RETRY_INT(
                            openat(at, comp, flags | O_CLOEXEC | O_NOFOLLOW, mode));
                        if (fd < 0)
                                return ck_error_make(err, errno, "open `%s`", rel);
                        return fd;
                }
                if (strcmp(comp, ".") != 0) {
                        int fd = TEMP_FAILURE_RETRY_INT(
                            openat(at, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
                        if (fd < 0) {
                                int e = errno;
                                struct stat st;
                                /* a symlink component: say so, as openat2 does */
                                if (fstatat(at, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                                    S_ISLNK(st.st_mode))
                                        e = ELOOP;
                                return ck_error_make(err, e, "open `%s`", rel);
                        }
                        ck_cleanup_closep(&cur);
                        cur = fd;
                        at = cur;
                }
                comp = next;
        }
        /* only "." components: the directory itself */
        int fd = TEMP_FAILURE_RETRY_INT(openat(at, ".", flags | O_CLOEXEC, mode));
        if (fd < 0)
                return ck_error_make(err, errno, "open `%s`", rel);
        return fd;
}

int fs_open_beneath(int dirfd, const char *rel, int flags, mode_t mode, ck_error_t *err)
{
        if (*rel == '\0' || !path_stays_beneath(rel))
                return escape_error(rel, err);
        struct open_how how = {
            .flags = (uint64_t)(flags | O_CLOEXEC),
            .mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
            .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
        };
        int fd = TEMP_FAILURE_RETRY_INT(syscall(SYS_openat2, dirfd, rel, &how, sizeof(how)));
        if (fd >= 0)
                return fd;
        if (errno == ENOSYS)
                return fs_open_beneath_walk(dirfd, rel, flags, mode, err);
        if (errno == EXDEV)
                return escape_error(rel, err);
        return ck_error_make(err, errno, "open `%s`", rel);
}

int fs_open_in_root(int dirfd, const char *path, int flags, ck_error_t *err)
{
        struct open_how how = {
            .flags = (uint64_t)(flags | O_CLOEXEC),
            .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
        };
        int fd = TEMP_FAILURE_RETRY_INT(syscall(SYS_openat2, dirfd, path, &how, sizeof(how)));
        if (fd >= 0)
                return fd;
        if (errno != ENOSYS)
                return ck_error_make(err, errno, "open `%s`", path);
        while (*path == '/')
                path++;
        return fs_open_beneath(dirfd, *path ? path : ".", flags, 0, err);
}

/* Whether the entry (not followed if a symlink) is the root of a mount: the
 * kernel says so through statx, and a device differing from the parent's
 * catches it on kernels without STATX_ATTR_MOUNT_ROOT. */
static int stat_entry(int dirfd, const char *name, struct stat *st, bool *mount_root)
{
        struct statx stx;
        if (statx(dirfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_TYPE | STATX_INO,
                  &stx) < 0)
                return -1;
        memset(st, 0, sizeof(*st));
        st->st_mode = stx.stx_mode;
        st->st_ino = stx.stx_ino;
        st->st_dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
        *mount_root = (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
                      (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
        return 0;
}

static int remove_dir_contents(int fd, dev_t dev, const char *path, ck_error_t *err);

static int remove_entry(int dirfd, dev_t dev, const char *dir_path, const char *name,
                        ck_error_t *err)
{
        struct stat st;
        bool mount_root = false;
        if (stat_entry(dirfd, name, &st, &mount_root) < 0) {
                if (errno == ENOENT)
                        return 0;
                return ck_error_make(err, errno, "stat `%s/%s`", dir_path, name);
        }
        if (!S_ISDIR(st.st_mode)) {
                if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
                        return ck_error_make(err, errno, "remove `%s/%s`", dir_path, name);
                return 0;
        }
        cleanup_free char *sub_path = xasprintf("%s/%s", dir_path, name);
        if (mount_root || st.st_dev != dev)
                return ck_error_make(err, EBUSY, "remove `%s`: it is a mount point", sub_path);
        cleanup_close int sub = TEMP_FAILURE_RETRY_INT(
            openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (sub < 0) {
                if (errno == ENOENT)
                        return 0;
                return ck_error_make(err, errno, "open `%s`", sub_path);
        }
        struct stat sub_st;
        if (fstat(sub, &sub_st) < 0)
                return ck_error_make(err, errno, "stat `%s`", sub_path);
        /* replaced between the stat and the open: never cross into it */
        if (sub_st.st_dev != dev || sub_st.st_ino != st.st_ino)
                return ck_error_make(err, EBUSY, "remove `%s`: it is a mount point", sub_path);
        if (remove_dir_contents(sub, dev, sub_path, err) < 0)
                return -1;
        if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                return ck_error_make(err, errno, "remove directory `%s`", sub_path);
        return 0;
}

static int remove_dir_contents(int fd, dev_t dev, const char *path, ck_error_t *err)
{
        int dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
        if (dfd < 0)
                return ck_error_make(err, errno, "dup fd of `%s`", path);
        DIR *d = fdopendir(dfd);
        if (d == NULL) {
                int e = errno;
                close(dfd);
                return ck_error_make(err, e, "open directory `%s`", path);
        }
        int ret = 0;
        /* Removing while reading may hide entries from this pass: repeat until
         * a pass sees nothing left. */
        for (int pass = 0; pass < REMOVE_ALL_MAX_PASSES; pass++) {
                bool seen = false;
                struct dirent *de;
                errno = 0;
                while ((de = readdir(d)) != NULL) {
                        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                                continue;
                        seen = true;
                        if (remove_entry(fd, dev, path, de->d_name, err) < 0) {
                                ret = -1;
                                goto out;
                        }
                        errno = 0;
                }
                if (errno != 0) {
                        ret = ck_error_make(err, errno, "read directory `%s`", path);
                        goto out;
                }
                if (!seen)
                        goto out;
                rewinddir(d);
        }
        ret = ck_error_make(err, ENOTEMPTY, "remove `%s`: entries keep appearing", path);
out:
        closedir(d);
        return ret;
}

int fs_remove_all(const char *path, ck_error_t *err)
{
        struct stat st;
        bool mount_root = false;
        if (stat_entry(AT_FDCWD, path, &st, &mount_root) < 0) {
                if (errno == ENOENT)
                        return 0;
                return ck_error_make(err, errno, "stat `%s`", path);
        }
        if (!S_ISDIR(st.st_mode)) {
                if (unlink(path) < 0 && errno != ENOENT)
                        return ck_error_make(err, errno, "remove `%s`", path);
                return 0;
        }
        if (mount_root)
                return ck_error_make(err, EBUSY, "remove `%s`: it is a mount point", path);
        cleanup_close int fd =
            TEMP_FAILURE_RETRY_INT(open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (fd < 0) {
                if (errno == ENOENT)
                        return 0;
                return ck_error_make(err, errno, "open `%s`", path);
        }
        struct stat fst;
        if (fstat(fd, &fst) < 0)
                return ck_error_make(err, errno, "stat `%s`", path);
        if (fst.st_dev != st.st_dev || fst.st_ino != st.st_ino)
                return ck_error_make(err, EBUSY, "remove `%s`: replaced while removing", path);
        if (remove_dir_contents(fd, fst.st_dev, path, err) < 0)
                return -1;
        if (rmdir(path) < 0 && errno != ENOENT)
                return ck_error_make(err, errno, "remove directory `%s`", path);
        return 0;
}

int64_t fs_now_mono_us(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t fs_now_mono_ms(void)
{
        return fs_now_mono_us() / 1000;
}

int64_t fs_now_real_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

char *fs_format_rfc3339(int64_t real_ns, char *buf)
{
        /* floor division, so instants before 1970 round down like Go's time */
        int64_t sec = real_ns / 1000000000;
        if (real_ns % 1000000000 < 0)
                sec--;
        time_t t = (time_t)sec;
        struct tm tm;
        if (gmtime_r(&t, &tm) == NULL || strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
                snprintf(buf, 32, "1970-01-01T00:00:00Z");
        return buf;
}

int fs_opendir_if_exists(const char *path, DIR **out, ck_error_t *err)
{
        *out = NULL;
        int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0) {
                if (errno == ENOENT)
                        return 0;
                return ck_error_make(err, errno, "open `%s`", path);
        }
        DIR *d = fdopendir(dfd);
        if (d == NULL) {
                int e = errno;
                close(dfd);
                return ck_error_make(err, e, "read `%s`", path);
        }
        *out = d;
        return 0;
}
