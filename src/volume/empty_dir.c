/* SPDX-License-Identifier: Apache-2.0 */
/* emptyDir (upstream pkg/volume/emptydir): a 0777 directory on the node's
 * disk, or a tmpfs mounted on it for medium Memory. */
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "volume/plugins.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

/* upstream: const perm os.FileMode = 0777 */
#define EMPTY_DIR_MODE 0777
#define PLUGIN_DIR_MODE 0755

/* Whether dir_fd is the root of a tmpfs mounted over a directory of parent_fd. */
static bool is_tmpfs_mount(int parent_fd, int dir_fd)
{
        struct stat pst, st;
        struct statfs sfs;
        if (fstat(parent_fd, &pst) < 0 || fstat(dir_fd, &st) < 0 || fstatfs(dir_fd, &sfs) < 0)
                return false;
        return st.st_dev != pst.st_dev && sfs.f_type == TMPFS_MAGIC;
}

/* mount(2) of a tmpfs on the directory open as fd, through its /proc/self/fd
 * link so that the target cannot be swapped for a symlink meanwhile.  Options
 * as upstream: size= from sizeLimit, and noswap where the kernel has it
 * (6.4+; older ones refuse the option with EINVAL). */
static int mount_tmpfs(int fd, const char *path, const struct volume *v, ck_error_t *err)
{
        char target[64], opts[64] = "";
        snprintf(target, sizeof(target), "/proc/self/fd/%d", fd);
        if (v->has_size_limit && v->size_limit > 0)
                snprintf(opts, sizeof(opts), "size=%" PRId64, v->size_limit);
        char with_noswap[80];
        snprintf(with_noswap, sizeof(with_noswap), "%s%snoswap", opts, *opts ? "," : "");
        if (mount("tmpfs", target, "tmpfs", 0, with_noswap) == 0)
                return 0;
        if (errno == EINVAL && mount("tmpfs", target, "tmpfs", 0, *opts ? opts : NULL) == 0)
                return 0;
        return ck_error_make(err, errno, "mount tmpfs (%s) on `%s`", *opts ? opts : "no options",
                             path);
}

/* upstream's readiness file of an emptyDir:
 * <pod>/plugins/kubernetes.io~empty-dir/<name>/ready, written once the
 * volume is set up; its ownership is applied only before that. */
static char *ready_path(const char *pod_dir, const char *name)
{
        return xasprintf("%s/plugins/" VOLUME_EMPTY_DIR_PLUGIN "/%s/ready", pod_dir, name);
}

static bool is_ready(const char *pod_dir, const char *name)
{
        cleanup_free char *p = ready_path(pod_dir, name);
        struct stat st;
        return lstat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int set_ready(const char *pod_dir, const char *name, ck_error_t *err)
{
        cleanup_free char *p = ready_path(pod_dir, name);
        cleanup_free char *dir =
            xasprintf("%s/plugins/" VOLUME_EMPTY_DIR_PLUGIN "/%s", pod_dir, name);
        if (fs_mkdir_p(dir, 0750, err) < 0)
                return -1;
        int fd = TEMP_FAILURE_RETRY_INT(open(p, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
        if (fd < 0)
                return ck_error_make(err, errno, "create `%s`", p);
        close(fd);
        return 0;
}

int volume_empty_dir_setup(const struct volume_ctx *vc, const struct volume *v, char **path,
                           ck_error_t *err)
{
        int volumes_fd = vc->volumes_fd;
        const char *volumes_path = vc->volumes_path;
        const struct pod *pod = vc->pod;
        /* set up before (upstream IsReady): its ownership stands, whatever
         * its containers made of it */
        bool ready = is_ready(vc->pod_dir, v->name);
        bool memory = v->medium != NULL && strcmp(v->medium, "Memory") == 0;
        if (v->medium != NULL && *v->medium != '\0' && !memory)
                return ck_error_make(err, 0, "unknown storage medium \"%s\"", v->medium);
        cleanup_close int plugin_fd = volume_mkdir_open(
            volumes_fd, volumes_path, VOLUME_EMPTY_DIR_PLUGIN, PLUGIN_DIR_MODE, err);
        if (plugin_fd < 0)
                return -1;
        cleanup_free char *plugin_path = xasprintf("%s/" VOLUME_EMPTY_DIR_PLUGIN, volumes_path);
        cleanup_free char *dir = xasprintf("%s/%s", plugin_path, v->name);
        if (ready) {
                /* upstream SetUpAt returns at once: a ready volume whose
                 * directory is there (and, for Memory, its tmpfs mounted) is
                 * left as its containers made it */
                cleanup_close int have = TEMP_FAILURE_RETRY_INT(
                    openat(plugin_fd, v->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
                if (have >= 0 && (!memory || is_tmpfs_mount(plugin_fd, have))) {
                        *path = dir;
                        dir = NULL;
                        return 0;
                }
                if (have < 0)
                        LOG_WARN("Volume ready file exists but its directory does not; setting "
                                 "it up again",
                                 "podUID=\"%s\" volume=\"%s\"", pod->uid, v->name);
        }
        cleanup_close int fd =
            volume_mkdir_open(plugin_fd, plugin_path, v->name, EMPTY_DIR_MODE, err);
        if (fd < 0)
                return -1;
        struct stat st;
        if (fstat(fd, &st) < 0)
                return ck_error_make(err, errno, "stat `%s`", dir);
        /* the umask took bits away (upstream setupDir compares Perm() only, so a
         * mounted tmpfs root's sticky 1777 is left alone) */
        if ((st.st_mode & 0777) != EMPTY_DIR_MODE && fchmod(fd, EMPTY_DIR_MODE) < 0)
                return ck_error_make(err, errno, "chmod `%s`", dir);
        if (memory && !is_tmpfs_mount(plugin_fd, fd)) {
                if (mount_tmpfs(fd, dir, v, err) < 0)
                        return -1;
                LOG_INFO(3, "Mounted tmpfs for an emptyDir volume", "podUID=\"%s\" volume=\"%s\"",
                         pod->uid, v->name);
                /* from here on work on the tmpfs, not the directory under it */
                ck_cleanup_closep(&fd);
                fd = TEMP_FAILURE_RETRY_INT(
                    openat(plugin_fd, v->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
                if (fd < 0)
                        return ck_error_make(err, errno, "open `%s`", dir);
        }
        /* upstream SetUpAt: the pod's fsGroup (its change policy is not
         * passed: emptyDirs are always done whole), a failure ignored; then
         * the readiness file, a failure logged */
        if (pod->security_context.has_fs_group) {
                cleanup_error ck_error_t e = NULL;
                if (volume_set_ownership(fd, dir, (gid_t)pod->security_context.fs_group, false,
                                         &e) < 0)
                        LOG_ERROR("Failed to set the fsGroup of an emptyDir volume",
                                  "podUID=\"%s\" volume=\"%s\" err=\"%s\"", pod->uid, v->name,
                                  ck_error_msg(e));
        }
        cleanup_error ck_error_t re = NULL;
        if (set_ready(vc->pod_dir, v->name, &re) < 0)
                LOG_ERROR("Failed to mark an emptyDir volume ready",
                          "podUID=\"%s\" volume=\"%s\" err=\"%s\"", pod->uid, v->name,
                          ck_error_msg(re));
        *path = dir;
        dir = NULL;
        return 0;
}
