/* SPDX-License-Identifier: Apache-2.0 */
/* fsGroup on a volume (upstream pkg/volume/volume_linux.go
 * SetVolumeOwnership): group, group permissions and setgid, everything
 * below the root, links regrouped but never followed. */
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "volume/plugins.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* upstream rwMask, roMask and execMask */
#define RW_MASK 0660
#define RO_MASK 0440
#define EXEC_MASK 0110

static mode_t mask_of(const struct stat *st, bool read_only)
{
        mode_t mask = read_only ? RO_MASK : RW_MASK;
        if (S_ISDIR(st->st_mode))
                mask |= S_ISGID | EXEC_MASK;
        return mask;
}

/* upstream changeFilePermission on `name` of dir_fd: a failure is logged,
 * as upstream, and the walk goes on.  The mode is set through an O_PATH
 * descriptor of the entry seen by lstat, never through its name: a
 * container swapping it for a link meanwhile cannot send the chmod out of
 * the volume. */
static void own_entry(int dir_fd, const char *dir_path, const char *name, const struct stat *st,
                      gid_t gid, bool read_only)
{
        if (fchownat(dir_fd, name, (uid_t)-1, gid, AT_SYMLINK_NOFOLLOW) < 0 && errno != ENOENT)
                LOG_ERROR("Lchown failed", "path=\"%s/%s\" err=\"%s\"", dir_path, name,
                          strerror(errno));
        /* a link's mode means nothing */
        if (S_ISLNK(st->st_mode))
                return;
        cleanup_close int fd =
            TEMP_FAILURE_RETRY_INT(openat(dir_fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC));
        struct stat now;
        if (fd < 0 || fstat(fd, &now) < 0 || now.st_ino != st->st_ino || now.st_dev != st->st_dev ||
            S_ISLNK(now.st_mode))
                return; /* gone or replaced meanwhile */
        char proc[64];
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        /* the mode lstat saw: the chown just cleared setuid and setgid,
         * which upstream's chmod (of the walk's FileInfo) puts back */
        if (chmod(proc, (st->st_mode & 07777) | mask_of(st, read_only)) < 0)
                LOG_ERROR("chmod failed", "path=\"%s/%s\" err=\"%s\"", dir_path, name,
                          strerror(errno));
}

/* upstream walkDeep below the directory open as fd. */
static int own_tree(int fd, const char *path, gid_t gid, bool read_only, ck_error_t *err)
{
        /* a description of its own: readdir must not move fd's offset */
        int dir_fd = TEMP_FAILURE_RETRY_INT(openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (dir_fd < 0)
                return ck_error_make(err, errno, "open `%s`", path);
        DIR *d = fdopendir(dir_fd);
        if (d == NULL) {
                close(dir_fd);
                return ck_error_make(err, errno, "read directory `%s`", path);
        }
        int ret = 0;
        struct dirent *e;
        while (ret == 0 && (e = readdir(d)) != NULL) {
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                        continue;
                struct stat st;
                if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        if (errno == ENOENT)
                                continue; /* removed meanwhile */
                        ret = ck_error_make(err, errno, "lstat `%s/%s`", path, e->d_name);
                        break;
                }
                own_entry(dirfd(d), path, e->d_name, &st, gid, read_only);
                if (!S_ISDIR(st.st_mode))
                        continue;
                cleanup_free char *sub = xasprintf("%s/%s", path, e->d_name);
                cleanup_close int sub_fd = TEMP_FAILURE_RETRY_INT(
                    openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
                if (sub_fd < 0 && errno == ENOENT)
                        continue;
                ret = sub_fd < 0 ? ck_error_make(err, errno, "open `%s`", sub)
                                 : own_tree(sub_fd, sub, gid, read_only, err);
        }
        closedir(d);
        return ret;
}

int volume_set_ownership(int fd, const char *path, gid_t gid, bool read_only, ck_error_t *err)
{
        struct stat st;
        if (fstat(fd, &st) < 0)
                return ck_error_make(err, errno, "stat `%s`", path);
        if (fchown(fd, (uid_t)-1, gid) < 0)
                return ck_error_make(err, errno, "chown `%s` to group %u", path, (unsigned)gid);
        if (fchmod(fd, (st.st_mode & 07777) | mask_of(&st, read_only)) < 0)
                return ck_error_make(err, errno, "chmod `%s`", path);
        return own_tree(fd, path, gid, read_only, err);
}
