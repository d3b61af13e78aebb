/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The static pod directory: a thread that rescans the directory whenever
 * inotify reports a change in it and at least once per period, and hands
 * the full set of pods to the sink when it changed (and once at start).
 *
 * Rescans are cheap: each file's (device, inode, size, mtime, ctime) and
 * md5 of the content are cached with the pod decoded from it, so a file is
 * re-read only when its metadata changed, and re-decoded only when its bytes
 * changed.  A file that turns bad keeps its last good pod (logged once per
 * bad version); a file that disappears takes its pod with it.
 *
 * As upstream (pkg/kubelet/config/file.go): hidden files (".name") and
 * directories are skipped, symlinks are followed (the UID uses the path in
 * the directory), files larger than 10 MiB are refused, and of two files
 * holding the same pod name the first in name order wins.  The path may
 * also name a single manifest file.
 */
#include "config/file_source.h"
#include "api/decode.h"
#include "util/fsutil.h"
#include "util/cleanup.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "util/yamljson.h"

#include <dirent.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* upstream maxConfigLength */
#define MANIFEST_MAX_BYTES (10u << 20)

#define WATCH_MASK                                                                                 \
        (IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM |        \
         IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF)

struct manifest {
        char *path; /* dir/name (or the path itself for a single file) */
        /* identity of the version last read */
        dev_t dev;
        ino_t ino;
        off_t size;
        struct timespec mtime, ctime;
        unsigned char digest[16];
        bool read_once;
        struct pod *pod; /* last good pod, NULL if never good */
        bool bad;        /* the version last read did not decode (logged) */
        bool dup_logged; /* the duplicate-name message for this pod was logged */
        bool seen;       /* found by the current scan */
};

struct file_source {
        char *path;
        char *node_name;
        int64_t period_ms;
        pod_source_sink sink;
        void *ctx;
        int stop_fd;
        int inotify_fd;
        int wd;
        pthread_t thread;

        struct manifest *files; /* sorted by path */
        size_t n_files, cap_files;

        struct pod **last; /* the set last delivered (references) */
        size_t n_last;
        bool delivered;
        bool missing_logged;
};

static void md5(const char *buf, size_t len, unsigned char out[16])
{
        unsigned int n = 0;
        if (EVP_Digest(buf, len, out, &n, EVP_md5(), NULL) != 1 || n != 16)
                memset(out, 0, 16);
}

static void manifest_release(struct manifest *m)
{
        free(m->path);
        pod_unref(m->pod);
        memset(m, 0, sizeof(*m));
}

/* The cache entry of path, created (in sorted position) if absent. */
static struct manifest *manifest_get(struct file_source *fs, const char *path)
{
        size_t lo = 0, hi = fs->n_files;
        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                int c = strcmp(fs->files[mid].path, path);
                if (c == 0)
                        return &fs->files[mid];
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (fs->n_files == fs->cap_files) {
                fs->cap_files = fs->cap_files ? fs->cap_files * 2 : 16;
                fs->files = xrealloc(fs->files, fs->cap_files * sizeof(*fs->files));
        }
        memmove(&fs->files[lo + 1], &fs->files[lo], (fs->n_files - lo) * sizeof(*fs->files));
        fs->n_files++;
        memset(&fs->files[lo], 0, sizeof(fs->files[lo]));
        fs->files[lo].path = xstrdup(path);
        return &fs->files[lo];
}

static bool same_identity(const struct manifest *m, const struct stat *st)
{
        return m->read_once && m->dev == st->st_dev && m->ino == st->st_ino &&
               m->size == st->st_size && m->mtime.tv_sec == st->st_mtim.tv_sec &&
               m->mtime.tv_nsec == st->st_mtim.tv_nsec && m->ctime.tv_sec == st->st_ctim.tv_sec &&
               m->ctime.tv_nsec == st->st_ctim.tv_nsec;
}

static void set_identity(struct manifest *m, const struct stat *st)
{
        m->read_once = true;
        m->dev = st->st_dev;
        m->ino = st->st_ino;
        m->size = st->st_size;
        m->mtime = st->st_mtim;
        m->ctime = st->st_ctim;
}

/* Reads the whole file (at most MANIFEST_MAX_BYTES) through fd. */
static int read_manifest(int fd, const struct stat *st, char **out, size_t *out_len,
                         ck_error_t *err)
{
        if ((uint64_t)st->st_size > MANIFEST_MAX_BYTES)
                return ck_error_make(err, 0, "the file is larger than %u bytes",
                                     MANIFEST_MAX_BYTES);
        size_t cap = (size_t)st->st_size + 1, len = 0;
        cleanup_free char *buf = xmalloc(cap);
        for (;;) {
                if (len == cap) {
                        if (cap > MANIFEST_MAX_BYTES)
                                return ck_error_make(err, 0, "the file is larger than %u bytes",
                                                     MANIFEST_MAX_BYTES);
                        cap = cap * 2 > MANIFEST_MAX_BYTES + 1 ? MANIFEST_MAX_BYTES + 1 : cap * 2;
                        buf = xrealloc(buf, cap);
                }
                ssize_t n = TEMP_FAILURE_RETRY_INT(read(fd, buf + len, cap - len));
                if (n < 0)
                        return ck_error_make(err, errno, "read");
                if (n == 0)
                        break;
                len += (size_t)n;
        }
        if (len > MANIFEST_MAX_BYTES)
                return ck_error_make(err, 0, "the file is larger than %u bytes",
                                     MANIFEST_MAX_BYTES);
        *out = buf;
        *out_len = len;
        buf = NULL;
        return 0;
}

/* Parses, defaults and decodes a manifest's bytes into a new pod. */
static int decode_manifest(struct file_source *fs, const char *path, const char *buf, size_t len,
                           struct pod **out, ck_error_t *err)
{
        cleanup_json json_t *obj = NULL;
        if (yamljson_parse(buf, len, &obj, err) < 0)
                return -1;
        /* As upstream's universal decoder: a manifest names what it is. */
        const char *kind = json_string_value(json_object_get(obj, "kind"));
        const char *version = json_string_value(json_object_get(obj, "apiVersion"));
        if (!json_is_object(obj) || kind == NULL || version == NULL)
                return ck_error_make(err, 0, "Object 'Kind' or 'apiVersion' is missing");
        if (strcmp(kind, "Pod") != 0 || strcmp(version, "v1") != 0)
                return ck_error_make(err, 0, "invalid pod: a manifest must be a v1 Pod, not %s/%s",
                                     version, kind);
        if (file_source_apply_defaults(obj, fs->node_name, path, "file", err) < 0)
                return -1;
        struct pod *pod = NULL;
        if (api_pod_decode(obj, &pod, err) < 0)
                return -1;
        /* ValidatePodCreate, which upstream's file source applies: ephemeral
         * containers come only through the ephemeralcontainers subresource */
        if (pod->n_ephemeral_containers > 0) {
                pod_unref(pod);
                return ck_error_make(err, 0,
                                     "invalid pod: spec.ephemeralContainers: Forbidden: cannot be "
                                     "set on create");
        }
        /* not shared yet: the source fields are still ours to fill */
        pod->source = POD_SOURCE_FILE;
        free(pod->source_path);
        pod->source_path = xstrdup(path);
        *out = pod;
        return 0;
}

/* Brings one cache entry up to date with the file at path. */
static void refresh_manifest(struct file_source *fs, struct manifest *m)
{
        cleanup_error ck_error_t err = NULL;
        cleanup_free char *buf = NULL;
        size_t len = 0;
        unsigned char digest[16];
        struct pod *pod = NULL;
        cleanup_close int fd =
            TEMP_FAILURE_RETRY_INT(open(m->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
        struct stat st;
        if (fd < 0) {
                if (errno == ENOENT)
                        return; /* gone between listing and opening */
                ck_error_make(&err, errno, "open");
                goto bad;
        }
        if (fstat(fd, &st) < 0) {
                ck_error_make(&err, errno, "stat");
                goto bad;
        }
        if (!S_ISREG(st.st_mode))
                return;
        if (same_identity(m, &st))
                return;

        if (read_manifest(fd, &st, &buf, &len, &err) < 0) {
                set_identity(m, &st);
                memset(m->digest, 0, sizeof(m->digest));
                goto bad_logged_once;
        }
        md5(buf, len, digest);
        bool same_bytes = m->read_once && memcmp(digest, m->digest, sizeof(digest)) == 0;
        set_identity(m, &st);
        memcpy(m->digest, digest, sizeof(digest));
        if (same_bytes && (m->pod != NULL || m->bad))
                return; /* touched, not changed */

        LOG_INFO(3, "Reading config file", "path=\"%s\"", m->path);
        if (decode_manifest(fs, m->path, buf, len, &pod, &err) < 0)
                goto bad_logged_once;
        pod_unref(m->pod);
        m->pod = pod;
        m->bad = false;
        m->dup_logged = false;
        return;

bad:
        /* could not even look at it: try again next scan */
        m->read_once = false;
bad_logged_once:
        m->bad = true;
        LOG_ERROR("Could not process manifest file", "path=\"%s\" err=\"%s\"", m->path,
                  ck_error_msg(err));
}

/* Lists the manifest names of the directory: not hidden, sorted.  Returns
 * -1 with errno set if the directory cannot be read. */
static int list_dir(const char *dir, char ***names, size_t *n)
{
        *names = NULL;
        *n = 0;
        int dfd = TEMP_FAILURE_RETRY_INT(open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (dfd < 0)
                return -1;
        DIR *d = fdopendir(dfd);
        if (d == NULL) {
                int e = errno;
                close(dfd);
                errno = e;
                return -1;
        }
        size_t cap = 0;
        struct dirent *de;
        errno = 0;
        while ((de = readdir(d)) != NULL) {
                if (de->d_name[0] == '.')
                        continue;
                if (*n == cap) {
                        cap = cap ? cap * 2 : 16;
                        *names = xrealloc(*names, cap * sizeof(**names));
                }
                (*names)[(*n)++] = xstrdup(de->d_name);
        }
        closedir(d);
        return 0;
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Rescans the path; updates the cache.  Returns false when the path could
 * not be read for a reason other than not existing (the previous set then
 * stands). */
static bool scan(struct file_source *fs)
{
        for (size_t i = 0; i < fs->n_files; i++)
                fs->files[i].seen = false;

        struct stat st;
        if (stat(fs->path, &st) < 0) {
                if (errno != ENOENT) {
                        LOG_ERROR("Unable to read config path", "path=\"%s\" err=\"%s\"", fs->path,
                                  strerror(errno));
                        return false;
                }
                if (!fs->missing_logged)
                        LOG_WARN("Unable to read config path",
                                 "path=\"%s\" err=\"path does not exist, ignoring\"", fs->path);
                fs->missing_logged = true;
                return true; /* an empty set */
        }
        fs->missing_logged = false;

        if (S_ISREG(st.st_mode)) {
                struct manifest *m = manifest_get(fs, fs->path);
                m->seen = true;
                refresh_manifest(fs, m);
                return true;
        }
        if (!S_ISDIR(st.st_mode)) {
                LOG_ERROR("Unable to read config path",
                          "path=\"%s\" err=\"path is not a directory or file\"", fs->path);
                return false;
        }

        char **names = NULL;
        size_t n = 0;
        if (list_dir(fs->path, &names, &n) < 0) {
                LOG_ERROR("Unable to read config path", "path=\"%s\" err=\"%s\"", fs->path,
                          strerror(errno));
                return false;
        }
        if (n > 1)
                qsort(names, n, sizeof(*names), cmp_str);
        for (size_t i = 0; i < n; i++) {
                cleanup_free char *path = xasprintf("%s/%s", fs->path, names[i]);
                free(names[i]);
                struct stat fst;
                if (stat(path, &fst) < 0) {
                        if (errno != ENOENT)
                                LOG_ERROR("Could not get metadata", "path=\"%s\" err=\"%s\"", path,
                                          strerror(errno));
                        continue;
                }
                if (S_ISDIR(fst.st_mode)) {
                        LOG_INFO(4,
                                 "Provided manifest path is a directory, not recursing into "
                                 "manifest path",
                                 "path=\"%s\"", path);
                        continue;
                }
                if (!S_ISREG(fst.st_mode)) {
                        LOG_INFO(4, "Manifest path is not a directory or file",
                                 "path=\"%s\" mode=\"%o\"", path, (unsigned)fst.st_mode);
                        continue;
                }
                struct manifest *m = manifest_get(fs, path);
                m->seen = true;
                refresh_manifest(fs, m);
        }
        free(names);
        return true;
}

/* Drops the cache entries of files that are gone. */
static void sweep(struct file_source *fs)
{
        size_t j = 0;
        for (size_t i = 0; i < fs->n_files; i++) {
                if (fs->files[i].seen)
                        fs->files[j++] = fs->files[i];
                else
                        manifest_release(&fs->files[i]);
        }
        fs->n_files = j;
}

/* The pods of the cache in path order; a repeated namespace/name keeps the
 * first (upstream filterInvalidPods).  The array holds borrowed pods. */
static struct pod **current_set(struct file_source *fs, size_t *n)
{
        struct pod **set = xcalloc(fs->n_files ? fs->n_files : 1, sizeof(*set));
        const char **owner = xcalloc(fs->n_files ? fs->n_files : 1, sizeof(*owner));
        *n = 0;
        for (size_t i = 0; i < fs->n_files; i++) {
                struct manifest *m = &fs->files[i];
                if (m->pod == NULL)
                        continue;
                size_t k;
                for (k = 0; k < *n; k++)
                        if (strcmp(pod_full_name(set[k]), pod_full_name(m->pod)) == 0)
                                break;
                if (k < *n) {
                        if (!m->dup_logged)
                                LOG_WARN("Pod failed validation due to duplicate pod name, "
                                         "ignoring",
                                         "pod=\"%s\" path=\"%s\" first=\"%s\" source=\"file\"",
                                         pod_full_name(m->pod), m->path, owner[k]);
                        m->dup_logged = true;
                        continue;
                }
                m->dup_logged = false;
                owner[*n] = m->path;
                set[(*n)++] = m->pod;
        }
        free(owner);
        return set;
}

static void release_last(struct file_source *fs)
{
        for (size_t i = 0; i < fs->n_last; i++)
                pod_unref(fs->last[i]);
        free(fs->last);
        fs->last = NULL;
        fs->n_last = 0;
}

/* Calls the sink if the set differs from the last one delivered. */
static void deliver(struct file_source *fs)
{
        size_t n = 0;
        struct pod **set = current_set(fs, &n);
        bool changed = !fs->delivered || n != fs->n_last;
        for (size_t i = 0; !changed && i < n; i++)
                changed = set[i] != fs->last[i];
        if (!changed) {
                free(set);
                return;
        }
        release_last(fs);
        for (size_t i = 0; i < n; i++)
                pod_ref(set[i]);
        fs->last = set;
        fs->n_last = n;
        fs->delivered = true;
        LOG_INFO(4, "Static pod manifests changed", "path=\"%s\" pods=%zu", fs->path, n);
        fs->sink(fs->ctx, POD_SOURCE_FILE, (struct pod *const *)set, n);
}

static void rescan(struct file_source *fs)
{
        if (!scan(fs)) {
                /* unreadable: keep what we had, but the first snapshot
                 * must still come (an empty one) */
                if (!fs->delivered)
                        deliver(fs);
                return;
        }
        sweep(fs);
        deliver(fs);
}

/* Drains the inotify queue; returns true if a rescan is due. */
static bool drain_events(struct file_source *fs)
{
        char buf[16 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));
        bool changed = false;
        for (;;) {
                ssize_t n = read(fs->inotify_fd, buf, sizeof(buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return changed;
                for (char *p = buf; p < buf + n;) {
                        const struct inotify_event *ev = (const struct inotify_event *)p;
                        p += sizeof(*ev) + ev->len;
                        if (ev->mask & IN_Q_OVERFLOW) {
                                changed = true;
                                continue;
                        }
                        if (ev->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT)) {
                                /* the watched directory is gone or moved:
                                 * watch the path again (whatever is there) */
                                if (fs->wd >= 0 && !(ev->mask & IN_IGNORED))
                                        inotify_rm_watch(fs->inotify_fd, fs->wd);
                                fs->wd = -1;
                                changed = true;
                                continue;
                        }
                        /* editors' hidden swap files do not matter */
                        if (ev->len > 0 && ev->name[0] == '.')
                                continue;
                        changed = true;
                }
        }
}

static void *source_thread(void *arg)
{
        struct file_source *fs = arg;
        bool need_scan = true;
        int64_t next_periodic = 0;

        for (;;) {
                if (fs->wd < 0) {
                        fs->wd = inotify_add_watch(fs->inotify_fd, fs->path, WATCH_MASK);
                        if (fs->wd >= 0)
                                need_scan = true; /* may have appeared just now */
                        else if (errno != ENOENT)
                                LOG_INFO(2, "Unable to watch config path", "path=\"%s\" err=\"%s\"",
                                         fs->path, strerror(errno));
                }
                int64_t now = fs_now_mono_ms();
                if (need_scan || now >= next_periodic) {
                        rescan(fs);
                        need_scan = false;
                        next_periodic = fs_now_mono_ms() + fs->period_ms;
                        now = fs_now_mono_ms();
                }
                struct pollfd pfds[2] = {
                    {.fd = fs->stop_fd, .events = POLLIN},
                    {.fd = fs->inotify_fd, .events = POLLIN},
                };
                int timeout = next_periodic > now ? (int)(next_periodic - now) : 0;
                int r = poll(pfds, 2, timeout);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0) {
                        LOG_ERROR("Static pod source poll failed", "err=\"%s\"", strerror(errno));
                        break;
                }
                if (pfds[0].revents)
                        break;
                if ((pfds[1].revents & POLLIN) && drain_events(fs))
                        need_scan = true;
        }
        return NULL;
}

int file_source_start(const char *dir, const char *node_name, int64_t period_ms,
                      pod_source_sink sink, void *ctx, struct file_source **out, ck_error_t *err)
{
        if (dir == NULL || dir[0] == '\0')
                return ck_error_make(err, 0, "static pod path is empty");
        if (node_name == NULL || node_name[0] == '\0')
                return ck_error_make(err, 0, "static pod source: node name is empty");
        struct file_source *fs = xcalloc(1, sizeof(*fs));
        fs->path = xstrdup(dir);
        /* as upstream: no trailing '/', so that file paths (and UIDs) do
         * not depend on how the flag was written */
        for (size_t n = strlen(fs->path); n > 1 && fs->path[n - 1] == '/'; n--)
                fs->path[n - 1] = '\0';
        fs->node_name = xstrdup(node_name);
        fs->period_ms = period_ms > 0 ? period_ms : 20000;
        fs->sink = sink;
        fs->ctx = ctx;
        fs->wd = -1;
        fs->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        fs->inotify_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        if (fs->stop_fd < 0 || fs->inotify_fd < 0) {
                int e = errno;
                if (fs->stop_fd >= 0)
                        close(fs->stop_fd);
                if (fs->inotify_fd >= 0)
                        close(fs->inotify_fd);
                free(fs->path);
                free(fs->node_name);
                free(fs);
                return ck_error_make(err, e, "static pod source %s", dir);
        }
        int rc = pthread_create(&fs->thread, NULL, source_thread, fs);
        if (rc != 0) {
                close(fs->stop_fd);
                close(fs->inotify_fd);
                free(fs->path);
                free(fs->node_name);
                free(fs);
                return ck_error_make(err, rc, "static pod source %s: start thread", dir);
        }
        LOG_INFO(1, "Watching path", "path=\"%s\"", fs->path);
        *out = fs;
        return 0;
}

void file_source_stop(struct file_source *fs)
{
        if (fs == NULL)
                return;
        uint64_t one = 1;
        ssize_t w;
        do
                w = write(fs->stop_fd, &one, sizeof(one));
        while (w < 0 && errno == EINTR);
        pthread_join(fs->thread, NULL);
        close(fs->stop_fd);
        close(fs->inotify_fd);
        for (size_t i = 0; i < fs->n_files; i++)
                manifest_release(&fs->files[i]);
        free(fs->files);
        release_last(fs);
        free(fs->path);
        free(fs->node_name);
        free(fs);
}
