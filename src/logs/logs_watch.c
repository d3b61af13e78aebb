/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The wait of `kubectl logs -f` at the end of the file (upstream's
 * waitLogs): first ask whether the container still runs, then wait for any
 * change in the log file's directory (write, create, rename, remove,
 * chmod: fsnotify's events) or for a second, whichever comes first.  A
 * new file at the log path (created, moved there, or found by its inode)
 * means the log was rotated.
 */
#include "logs/logs_internal.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

/* upstream's logForceCheckPeriod */
#define WAIT_PERIOD_MS 1000
/* how often a wait looks at the stop flag */
#define STOP_CHECK_MS 100

#define WATCH_MASK                                                                                 \
        (IN_MODIFY | IN_ATTRIB | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVED_FROM |          \
         IN_MOVED_TO | IN_MOVE_SELF)

int logs_watch_open(struct logs_watch *w, const char *path, ck_error_t *err)
{
        const char *slash = strrchr(path, '/');
        cleanup_free char *dir = NULL;
        if (slash == NULL)
                dir = xstrdup(".");
        else if (slash == path)
                dir = xstrdup("/");
        else
                dir = xstrndup(path, (size_t)(slash - path));
        w->path = path;
        w->base = slash != NULL ? slash + 1 : path;
        w->fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        if (w->fd < 0)
                return ck_error_make(err, errno, "create inotify watcher");
        if (inotify_add_watch(w->fd, dir, WATCH_MASK) < 0) {
                int saved = errno;
                logs_watch_close(w);
                return ck_error_make(err, saved, "watch directory `%s`", dir);
        }
        return 0;
}

void logs_watch_close(struct logs_watch *w)
{
        if (w->fd >= 0)
                close(w->fd);
        w->fd = -1;
}

/* Reads the queued events: *changed when there was one, *recreated when
 * one created or moved a file to the log's name. */
static int drain_events(struct logs_watch *w, bool *changed, bool *recreated, ck_error_t *err)
{
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        for (;;) {
                ssize_t n = read(w->fd, buf, sizeof(buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        return 0;
                if (n <= 0)
                        return ck_error_make(err, n < 0 ? errno : EIO, "read inotify events");
                for (char *p = buf; p < buf + n;) {
                        const struct inotify_event *ev = (const struct inotify_event *)p;
                        if (ev->mask & (WATCH_MASK | IN_Q_OVERFLOW))
                                *changed = true;
                        if ((ev->mask & (IN_CREATE | IN_MOVED_TO)) && ev->len > 0 &&
                            strcmp(ev->name, w->base) == 0)
                                *recreated = true;
                        p += sizeof(*ev) + ev->len;
                }
        }
}

static bool stop_raised(const struct logs_sink *sink)
{
        return sink->stop != NULL && atomic_load(sink->stop);
}

int logs_watch_wait(struct logs_watch *w, const struct logs_sink *sink, dev_t dev, ino_t ino,
                    enum logs_wait_result *res, ck_error_t *err)
{
        if (sink->running == NULL || !sink->running(sink->ctx)) {
                *res = LOGS_WAIT_NOT_RUNNING;
                return 0;
        }
        bool changed = false, recreated = false;
        int64_t deadline = fs_now_mono_ms() + WAIT_PERIOD_MS;
        while (!changed) {
                if (stop_raised(sink)) {
                        *res = LOGS_WAIT_STOPPED;
                        return 0;
                }
                int64_t left = deadline - fs_now_mono_ms();
                if (left <= 0)
                        break;
                struct pollfd pfd = {.fd = w->fd, .events = POLLIN};
                int r = poll(&pfd, 1, (int)(left < STOP_CHECK_MS ? left : STOP_CHECK_MS));
                if (r < 0 && errno != EINTR)
                        return ck_error_make(err, errno, "wait for inotify events");
                if (r > 0 && drain_events(w, &changed, &recreated, err) < 0)
                        return -1;
        }
        /* The name now holds another file: a rotation, whether its events
         * came or not.  It holds the file being read: no rotation, even
         * when a creation event says so (a stale one: that file was found
         * by this check in an earlier wait and opened since, and the event
         * came after; taken at its word, the file would be read again from
         * its start). */
        struct stat st;
        if (stat(w->path, &st) == 0)
                recreated = st.st_dev != dev || st.st_ino != ino;
        *res = recreated ? LOGS_WAIT_RECREATED : LOGS_WAIT_CHANGED;
        return 0;
}
