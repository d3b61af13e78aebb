/* SPDX-License-Identifier: Apache-2.0 */
/* The pod's directories under <root>/pods/<uid> (upstream makePodDataDirs)
 * and their removal once the pod is gone. */
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "volume/plugins.h"
#include "volume/volume.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* upstream: os.MkdirAll(podDir / volumes / plugins, 0750) */
#define POD_DIR_MODE 0750

int volume_check_component(const char *what, const char *name, ck_error_t *err)
{
        if (name == NULL || *name == '\0')
                return ck_error_make(err, 0, "empty %s", what);
        if (strchr(name, '/') != NULL || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
                return ck_error_make(err, 0, "invalid %s \"%s\": not a single path component", what,
                                     name);
        return 0;
}

int volume_mkdir_open(int dirfd, const char *dir_path, const char *name, mode_t mode,
                      ck_error_t *err)
{
        if (mkdirat(dirfd, name, mode) < 0 && errno != EEXIST)
                return ck_error_make(err, errno, "mkdir `%s/%s`", dir_path, name);
        int fd = TEMP_FAILURE_RETRY_INT(
            openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (fd < 0)
                return ck_error_make(err, errno, "open directory `%s/%s`", dir_path, name);
        return fd;
}

int volume_make_pod_dirs(const char *root_dir, const struct pod *pod, ck_error_t *err)
{
        if (volume_check_component("pod UID", pod->uid, err) < 0)
                return ck_error_wrap(err, "make pod directories");
        cleanup_free char *pods = xasprintf("%s/pods", root_dir);
        if (fs_mkdir_p(pods, POD_DIR_MODE, err) < 0)
                return ck_error_wrap(err, "make pod directories");
        cleanup_close int pods_fd =
            TEMP_FAILURE_RETRY_INT(open(pods, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (pods_fd < 0)
                return ck_error_make(err, errno, "make pod directories: open `%s`", pods);
        cleanup_close int pod_fd = volume_mkdir_open(pods_fd, pods, pod->uid, POD_DIR_MODE, err);
        if (pod_fd < 0)
                return ck_error_wrap(err, "make pod directories");
        cleanup_free char *pod_dir = xasprintf("%s/%s", pods, pod->uid);
        static const char *const subdirs[] = {"volumes", "plugins"};
        for (size_t i = 0; i < ARRAY_SIZE(subdirs); i++) {
                int fd = volume_mkdir_open(pod_fd, pod_dir, subdirs[i], POD_DIR_MODE, err);
                if (fd < 0)
                        return ck_error_wrap(err, "make pod directories");
                close(fd);
        }
        return 0;
}

int volume_cleanup_pod(const char *root_dir, const char *uid, ck_error_t *err)
{
        if (volume_check_component("pod UID", uid, err) < 0)
                return ck_error_wrap(err, "clean up pod directory");
        cleanup_free char *pod_dir = xasprintf("%s/pods/%s", root_dir, uid);
        cleanup_free char *volumes = xasprintf("%s/volumes", pod_dir);
        struct stat st;
        if (lstat(volumes, &st) == 0 && S_ISDIR(st.st_mode)) {
                /* mountinfo shows resolved paths: compare with the real one */
                cleanup_free char *real = realpath(volumes, NULL);
                if (real == NULL)
                        return ck_error_make(err, errno, "clean up pod directory: resolve `%s`",
                                             volumes);
                if (volume_unmount_tmpfs_below(real, err) < 0)
                        return ck_error_wrap(err, "clean up pod directory `%s`", pod_dir);
        }
        if (fs_remove_all(pod_dir, err) < 0)
                return ck_error_wrap(err, "clean up pod directory");
        LOG_INFO(3, "Removed the pod directory", "podUID=\"%s\" path=\"%s\"", uid, pod_dir);
        return 0;
}

int volume_list_pod_dirs(const char *root_dir, char ***uids, ck_error_t *err)
{
        cleanup_free char *pods = xasprintf("%s/pods", root_dir);
        size_t n = 0;
        char **list = xcalloc(1, sizeof(*list));
        DIR *d = opendir(pods);
        if (d == NULL) {
                if (errno == ENOENT) {
                        *uids = list;
                        return 0;
                }
                free(list);
                return ck_error_make(err, errno, "list pod directories in `%s`", pods);
        }
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                struct stat st;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISDIR(st.st_mode))
                        continue;
                list = xrealloc(list, (n + 2) * sizeof(*list));
                list[n++] = xstrdup(de->d_name);
        }
        closedir(d);
        list[n] = NULL;
        *uids = list;
        return 0;
}
