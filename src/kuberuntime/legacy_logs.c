/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The legacy container log links (upstream kuberuntime legacy.go): for each
 * container, /var/log/containers/<pod>_<namespace>_<container>-<id>.log
 * points at its CRI log file, for the log collectors that read that
 * directory (fluentd, fluent-bit, promtail...).  Made once the container
 * started, removed with it; dangling ones of containers that are gone or
 * exited are removed by kuberuntime_legacy_logs_gc, as upstream's container
 * GC does.
 */
#include "kuberuntime/runtime_internal.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define EXT4_NAME_MAX 255
#define LEGACY_SUFFIX ".log"

/* A name the link may carry: one path component. */
static bool component_ok(const char *s)
{
        return s != NULL && s[0] != '\0' && strchr(s, '/') == NULL && strcmp(s, ".") != 0 &&
               strcmp(s, "..") != 0;
}

char *kuberuntime__legacy_log_link(const struct kuberuntime *rt, const char *container_id,
                                   const char *container, const char *pod, const char *ns)
{
        const char *dir = rt->opts.legacy_logs_dir;
        if (dir == NULL || dir[0] == '\0' || !component_ok(container_id) ||
            !component_ok(container) || !component_ok(pod) || !component_ok(ns))
                return NULL;
        char name[EXT4_NAME_MAX + 1];
        /* upstream logSymlink: the name cut to 255 bytes with its suffix */
        snprintf(name, EXT4_NAME_MAX + 1 - strlen(LEGACY_SUFFIX), "%s_%s_%s-%s", pod, ns, container,
                 container_id);
        return xasprintf("%s/%s" LEGACY_SUFFIX, dir, name);
}

void kuberuntime__legacy_log_create(const struct kuberuntime *rt, const char *container_id,
                                    const char *container, const char *pod, const char *ns,
                                    const char *log_path)
{
        cleanup_free char *link =
            kuberuntime__legacy_log_link(rt, container_id, container, pod, ns);
        if (link == NULL || log_path == NULL)
                return;
        /* only for a log that exists: a dangling link helps nobody */
        struct stat st;
        if (stat(log_path, &st) < 0 && errno == ENOENT)
                return;
        if (mkdir(rt->opts.legacy_logs_dir, 0755) < 0 && errno != EEXIST) {
                LOG_WARN("Failed to create the legacy container log directory",
                         "path=\"%s\" err=\"%s\"", rt->opts.legacy_logs_dir, strerror(errno));
                return;
        }
        if (symlink(log_path, link) < 0)
                LOG_ERROR("Failed to create legacy symbolic link",
                          "path=\"%s\" containerID=\"%s\" containerLogPath=\"%s\" err=\"%s\"", link,
                          container_id, log_path, strerror(errno));
}

void kuberuntime__legacy_log_remove(const struct kuberuntime *rt, const char *container_id,
                                    const char *container, const char *pod, const char *ns)
{
        cleanup_free char *link =
            kuberuntime__legacy_log_link(rt, container_id, container, pod, ns);
        if (link != NULL && unlink(link) < 0 && errno != ENOENT)
                LOG_WARN("Failed to remove container log symlink",
                         "containerID=\"%s\" path=\"%s\" err=\"%s\"", container_id, link,
                         strerror(errno));
}

/* upstream getContainerIDFromLegacyLogSymlink: what follows the last '-'
 * up to the suffix, at least 6 characters (the runtime accepts a prefix of
 * an ID that long); NULL when there is none. */
static char *container_id_of(const char *name)
{
        const char *dash = strrchr(name, '-');
        size_t len = strlen(name), suffix = strlen(LEGACY_SUFFIX);
        if (dash == NULL || len < suffix || strcmp(name + len - suffix, LEGACY_SUFFIX) != 0)
                return NULL;
        const char *id = dash + 1, *end = name + len - suffix;
        if (end < id || (size_t)(end - id) < 6)
                return NULL;
        return xstrndup(id, (size_t)(end - id));
}

int kuberuntime_legacy_logs_gc(struct kuberuntime *rt, kuberuntime_container_live_fn live,
                               void *live_ctx, ck_error_t *err)
{
        const char *dir = rt->opts.legacy_logs_dir;
        if (dir == NULL || dir[0] == '\0')
                return 0;
        DIR *d = NULL;
        if (fs_opendir_if_exists(dir, &d, err) < 0)
                return -1;
        if (d == NULL)
                return 0;
        int dfd = dirfd(d);
        struct dirent *de;
        size_t suffix = strlen(LEGACY_SUFFIX);
        while ((de = readdir(d)) != NULL) {
                size_t len = strlen(de->d_name);
                if (len <= suffix || strcmp(de->d_name + len - suffix, LEGACY_SUFFIX) != 0)
                        continue;
                struct stat lst, tst;
                if (fstatat(dfd, de->d_name, &lst, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISLNK(lst.st_mode))
                        continue;
                /* dangling: its container's log is gone */
                if (fstatat(dfd, de->d_name, &tst, 0) == 0 || errno != ENOENT)
                        continue;
                cleanup_free char *id = container_id_of(de->d_name);
                if (id != NULL && live != NULL && live(live_ctx, id)) {
                        LOG_INFO(5, "Container is still running, not removing symlink",
                                 "containerID=\"%s\" path=\"%s/%s\"", id, dir, de->d_name);
                        continue;
                }
                if (unlinkat(dfd, de->d_name, 0) < 0 && errno != ENOENT)
                        LOG_WARN("Failed to remove dangling container log symlink",
                                 "path=\"%s/%s\" err=\"%s\"", dir, de->d_name, strerror(errno));
                else
                        LOG_INFO(4, "Removed dangling container log symlink", "path=\"%s/%s\"", dir,
                                 de->d_name);
        }
        closedir(d);
        return 0;
}
