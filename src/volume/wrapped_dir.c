/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The directory of a configMap, secret, downwardAPI or projected volume.
 * Upstream's plugins wrap an emptyDir: a 0777 directory, on a tmpfs
 * (medium Memory) for secret, downwardAPI and projected, so that secrets
 * never reach the node's disk.  The pod directory above is 0750.
 */
#include "util/cleanup.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "volume/plugins.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#define WRAPPED_DIR_MODE 0777
#define PLUGIN_DIR_MODE 0750

static bool is_tmpfs_root(int parent_fd, int fd)
{
        struct stat pst, st;
        struct statfs sfs;
        if (fstat(parent_fd, &pst) < 0 || fstat(fd, &st) < 0 || fstatfs(fd, &sfs) < 0)
                return false;
        return st.st_dev != pst.st_dev && sfs.f_type == TMPFS_MAGIC;
}

/* Through /proc/self/fd so that the directory cannot be swapped for a
 * symlink meanwhile; noswap where the kernel knows it (6.4+). */
static int mount_tmpfs(int fd, const char *path, ck_error_t *err)
{
        char target[64];
        snprintf(target, sizeof(target), "/proc/self/fd/%d", fd);
        if (mount("tmpfs", target, "tmpfs", 0, "noswap") == 0)
                return 0;
        if (errno == EINVAL && mount("tmpfs", target, "tmpfs", 0, NULL) == 0)
                return 0;
        return ck_error_make(err, errno, "mount tmpfs on `%s`", path);
}

int volume_wrapped_dir_setup(const struct volume_ctx *vc, const char *plugin, const char *name,
                             bool memory, char **path, ck_error_t *err)
{
        if (volume_check_component("volume name", name, err) < 0)
                return -1;
        cleanup_close int plugin_fd =
            volume_mkdir_open(vc->volumes_fd, vc->volumes_path, plugin, PLUGIN_DIR_MODE, err);
        if (plugin_fd < 0)
                return -1;
        cleanup_free char *plugin_path = xasprintf("%s/%s", vc->volumes_path, plugin);
        cleanup_free char *dir = xasprintf("%s/%s", plugin_path, name);
        cleanup_close int fd =
            volume_mkdir_open(plugin_fd, plugin_path, name, WRAPPED_DIR_MODE, err);
        if (fd < 0)
                return -1;
        if (memory && !is_tmpfs_root(plugin_fd, fd)) {
                if (mount_tmpfs(fd, dir, err) < 0)
                        return -1;
                LOG_INFO(3, "Mounted tmpfs for a volume", "podUID=\"%s\" volume=\"%s\" path=\"%s\"",
                         vc->pod->uid, name, dir);
                ck_cleanup_closep(&fd);
                fd = TEMP_FAILURE_RETRY_INT(
                    openat(plugin_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
                if (fd < 0)
                        return ck_error_make(err, errno, "open `%s`", dir);
        }
        struct stat st;
        if (fstat(fd, &st) < 0)
                return ck_error_make(err, errno, "stat `%s`", dir);
        /* emptyDir's setupDir: the umask took bits away */
        if ((st.st_mode & 0777) != WRAPPED_DIR_MODE &&
            fchmod(fd, (st.st_mode & 07000) | WRAPPED_DIR_MODE) < 0)
                return ck_error_make(err, errno, "chmod `%s`", dir);
        *path = dir;
        dir = NULL;
        int ret = fd;
        fd = -1;
        return ret;
}
