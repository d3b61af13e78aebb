/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Container log rotation (container_log_manager.h): the plan (pure), the
 * file steps in the container's log directory, one container's processing,
 * the work queue, the monitor and worker threads, the CRI binding.
 */
#include "logs/container_log_manager.h"
#include "api/decode.h"
#include "cri/cri.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/goduration.h"
#include "util/log.h"
#include "util/sleep.h"
#include "util/strquote.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* the read and write chunk of a compression; the stop flag is looked at
 * between two */
#define COMPRESS_CHUNK (64 * 1024)

/* ---- string vectors ---- */

struct strv {
        char **v;
        size_t n, cap;
};

static void strv_push(struct strv *s, char *owned)
{
        if (s->n + 2 > s->cap) {
                s->cap = s->cap ? s->cap * 2 : 8;
                s->v = xrealloc(s->v, s->cap * sizeof(char *));
        }
        s->v[s->n++] = owned;
        s->v[s->n] = NULL;
}

/* A NULL-terminated vector, never NULL itself. */
static char **strv_take(struct strv *s)
{
        if (s->v == NULL)
                return xcalloc(1, sizeof(char *));
        char **v = s->v;
        s->v = NULL;
        s->n = s->cap = 0;
        return v;
}

static void strv_free(char **v)
{
        for (size_t i = 0; v && v[i]; i++)
                free(v[i]);
        free(v);
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool has_suffix(const char *s, const char *suffix)
{
        size_t n = strlen(s), m = strlen(suffix);
        return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

static char *quote(const char *s)
{
        return str_go_quote(s, strlen(s));
}

/* ---- pure steps ---- */

int clm_parse_max_size(const char *s, int64_t *out, ck_error_t *err)
{
        cleanup_error ck_error_t e = NULL;
        if (api_parse_quantity(s, false, out, &e) == 0)
                return 0;
        /* api_parse_quantity says `invalid quantity "s": <cause>`; upstream
         * gives the cause alone, and "invalid max log size" for a value
         * AsInt64 cannot give */
        const char *msg = ck_error_msg(e);
        if (has_suffix(msg, "quantity is too large"))
                return ck_error_make(err, 0, "invalid max log size");
        cleanup_free char *prefix = xasprintf("invalid quantity \"%s\": ", s);
        if (strncmp(msg, prefix, strlen(prefix)) == 0)
                msg += strlen(prefix);
        return ck_error_make(err, 0, "%s", msg);
}

void clm_timestamp(time_t t, char buf[CLM_TIMESTAMP_LEN + 1])
{
        struct tm tm;
        if (localtime_r(&t, &tm) == NULL ||
            strftime(buf, CLM_TIMESTAMP_LEN + 1, "%Y%m%d-%H%M%S", &tm) != CLM_TIMESTAMP_LEN)
                snprintf(buf, CLM_TIMESTAMP_LEN + 1, "00000000-000000");
}

/* Whether p[0..len) is a path component other than "", "." and "..". */
static bool plain_component(const char *p, size_t len)
{
        return len > 0 && !(len == 1 && p[0] == '.') && !(len == 2 && p[0] == '.' && p[1] == '.');
}

int clm_split_log_path(const char *pod_logs_dir, const char *path, char **dir, char **base,
                       ck_error_t *err)
{
        size_t root_len = strlen(pod_logs_dir);
        while (root_len > 1 && pod_logs_dir[root_len - 1] == '/')
                root_len--;
        bool root_is_slash = root_len == 1 && pod_logs_dir[0] == '/';
        const char *rel = NULL;
        if (pod_logs_dir[0] == '/' && strncmp(path, pod_logs_dir, root_len) == 0 &&
            (root_is_slash || path[root_len] == '/'))
                rel = path + (root_is_slash ? 1 : root_len + 1);
        const char *last = rel ? strrchr(rel, '/') : NULL;
        bool ok = last != NULL;
        for (const char *p = rel; ok && p;) {
                const char *slash = strchr(p, '/');
                size_t len = slash ? (size_t)(slash - p) : strlen(p);
                ok = plain_component(p, len);
                p = slash ? slash + 1 : NULL;
        }
        if (!ok) {
                cleanup_free char *qpath = quote(path), *qroot = quote(pod_logs_dir);
                return ck_error_make(err, 0,
                                     "log path %s is not a file in a directory under podLogsDir %s",
                                     qpath, qroot);
        }
        *dir = xstrndup(rel, (size_t)(last - rel));
        *base = xstrdup(last + 1);
        return 0;
}

/* upstream isInUse: temp files are not, compressed files are, an
 * uncompressed file is unless its compressed form is there too. */
static bool in_use(const char *name, char *const *names, size_t n)
{
        if (has_suffix(name, CLM_TMP_SUFFIX))
                return false;
        if (has_suffix(name, CLM_COMPRESS_SUFFIX))
                return true;
        size_t len = strlen(name);
        for (size_t i = 0; i < n; i++) {
                if (strncmp(names[i], name, len) == 0 &&
                    strcmp(names[i] + len, CLM_COMPRESS_SUFFIX) == 0)
                        return false;
        }
        return true;
}

void clm_plan_make(const char *base, char *const *names, size_t n, int max_files,
                   const char *timestamp, struct clm_plan *out)
{
        size_t base_len = strlen(base);
        /* filepath.Glob("<log>.*"): the matches, sorted */
        char **matches = xcalloc(n + 1, sizeof(char *));
        size_t n_matches = 0;
        for (size_t i = 0; i < n; i++) {
                if (strncmp(names[i], base, base_len) == 0 && names[i][base_len] == '.')
                        matches[n_matches++] = names[i];
        }
        qsort(matches, n_matches, sizeof(char *), cmp_str);

        struct strv unused = {0}, excess = {0}, compress = {0};
        char **inuse = xcalloc(n_matches + 1, sizeof(char *));
        size_t n_inuse = 0;
        for (size_t i = 0; i < n_matches; i++) {
                if (in_use(matches[i], matches, n_matches))
                        inuse[n_inuse++] = matches[i];
                else
                        strv_push(&unused, xstrdup(matches[i]));
        }
        /* removeExcessLogs: besides the current log and the one about to be
         * rotated, at most max_files - 2 rotated files */
        size_t keep = max_files > 2 ? (size_t)(max_files - 2) : 0;
        size_t first_kept = n_inuse > keep ? n_inuse - keep : 0;
        for (size_t i = 0; i < first_kept; i++)
                strv_push(&excess, xstrdup(inuse[i]));
        for (size_t i = first_kept; i < n_inuse; i++) {
                if (!has_suffix(inuse[i], CLM_COMPRESS_SUFFIX))
                        strv_push(&compress, xstrdup(inuse[i]));
        }
        out->unused = strv_take(&unused);
        out->excess = strv_take(&excess);
        out->compress = strv_take(&compress);
        out->rotated = xasprintf("%s.%s", base, timestamp);
        free(inuse);
        free(matches);
}

void clm_plan_release(struct clm_plan *p)
{
        strv_free(p->unused);
        strv_free(p->excess);
        strv_free(p->compress);
        free(p->rotated);
        memset(p, 0, sizeof(*p));
}

/* ---- file steps, relative to the log's directory ---- */

static void closedirp(DIR **d)
{
        if (*d)
                closedir(*d);
}

/* The regular files of dirfd whose names start with "<base>." (dotted) or
 * with "<base>". */
static int list_prefixed(int dirfd, const char *base, bool dotted, struct strv *out,
                         ck_error_t *err)
{
        int fd = TEMP_FAILURE_RETRY_INT(openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (fd < 0)
                return ck_error_make(err, errno, "open the log directory");
        __attribute__((cleanup(closedirp))) DIR *d = fdopendir(fd);
        if (d == NULL) {
                int e = errno;
                close(fd);
                return ck_error_make(err, e, "read the log directory");
        }
        size_t base_len = strlen(base);
        for (;;) {
                errno = 0;
                struct dirent *de = readdir(d);
                if (de == NULL) {
                        if (errno != 0)
                                return ck_error_make(err, errno, "read the log directory");
                        return 0;
                }
                if (strncmp(de->d_name, base, base_len) != 0 ||
                    (dotted && de->d_name[base_len] != '.'))
                        continue;
                struct stat st;
                if (de->d_type == DT_REG ||
                    (de->d_type == DT_UNKNOWN &&
                     fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                     S_ISREG(st.st_mode)))
                        strv_push(out, xstrdup(de->d_name));
        }
}

/* os.Remove of a name; one already gone is fine. */
static int remove_at(int dirfd, const char *name)
{
        if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
                return -1;
        return 0;
}

static int write_all(int fd, const unsigned char *p, size_t len)
{
        while (len > 0) {
                ssize_t w = write(fd, p, len);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0)
                        return -1;
                p += w;
                len -= (size_t)w;
        }
        return 0;
}

/* gzip of in into out, at gzip.NewWriter's default level. */
static int gzip_copy(int in, int out, const atomic_bool *stop, ck_error_t *err)
{
        z_stream zs;
        memset(&zs, 0, sizeof(zs));
        if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
            Z_OK)
                return ck_error_make(err, 0, "gzip: init failed");
        cleanup_free unsigned char *ibuf = xmalloc(COMPRESS_CHUNK);
        cleanup_free unsigned char *obuf = xmalloc(COMPRESS_CHUNK);
        int ret = 0, flush = Z_NO_FLUSH;
        while (ret == 0 && flush != Z_FINISH) {
                if (stop != NULL && atomic_load(stop)) {
                        ret = ck_error_make(err, 0, "stopped");
                        break;
                }
                ssize_t n = read(in, ibuf, COMPRESS_CHUNK);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        ret = ck_error_make(err, errno, "read");
                        break;
                }
                flush = n == 0 ? Z_FINISH : Z_NO_FLUSH;
                zs.next_in = ibuf;
                zs.avail_in = (uInt)n;
                do {
                        zs.next_out = obuf;
                        zs.avail_out = COMPRESS_CHUNK;
                        int z = deflate(&zs, flush);
                        if (z == Z_STREAM_ERROR) {
                                ret = ck_error_make(err, 0, "gzip: %s", zs.msg ? zs.msg : "error");
                                break;
                        }
                        if (write_all(out, obuf, COMPRESS_CHUNK - zs.avail_out) < 0) {
                                ret = ck_error_make(err, errno, "write");
                                break;
                        }
                } while (zs.avail_out == 0);
        }
        deflateEnd(&zs);
        return ret;
}

int clm_compress_at(int dirfd, const char *name, const atomic_bool *stop, ck_error_t *err)
{
        cleanup_free char *tmp = xasprintf("%s%s", name, CLM_TMP_SUFFIX);
        cleanup_free char *gz = xasprintf("%s%s", name, CLM_COMPRESS_SUFFIX);
        cleanup_free char *qname = quote(name), *qtmp = quote(tmp), *qgz = quote(gz);
        cleanup_close int in = TEMP_FAILURE_RETRY_INT(
            openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY));
        if (in < 0)
                return ck_error_make(err, errno, "failed to open log %s", qname);
        struct stat st;
        if (fstat(in, &st) < 0)
                return ck_error_make(err, errno, "failed to stat log file");
        if (!S_ISREG(st.st_mode))
                return ck_error_make(err, 0, "log %s is not a regular file", qname);
        cleanup_close int out = TEMP_FAILURE_RETRY_INT(
            openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY,
                   st.st_mode & 0777));
        if (out < 0)
                return ck_error_make(err, errno, "failed to create temporary log %s", qtmp);
        int ret = gzip_copy(in, out, stop, err);
        if (ret < 0)
                ck_error_wrap(err, "failed to compress %s to %s", qname, qtmp);
        else if (TEMP_FAILURE_RETRY_INT(fsync(out)) < 0)
                ret = ck_error_make(err, errno, "failed to compress %s to %s: fsync", qname, qtmp);
        int fd = out;
        out = -1;
        if (close(fd) < 0 && ret == 0)
                ret = ck_error_make(err, errno, "failed to compress %s to %s: close", qname, qtmp);
        if (ret == 0 && renameat(dirfd, tmp, dirfd, gz) < 0)
                ret = ck_error_make(err, errno, "failed to rename %s to %s", qtmp, qgz);
        if (ret < 0) {
                unlinkat(dirfd, tmp, 0); /* best effort, as upstream */
                return -1;
        }
        if (remove_at(dirfd, name) < 0)
                return ck_error_make(err, errno, "failed to remove log %s after compress", qname);
        return 0;
}

int clm_rotate_at(int dirfd, const char *base, int max_files, time_t now, clm_reopen_fn reopen,
                  void *reopen_ctx, const atomic_bool *stop, ck_error_t *err)
{
        struct strv names = {0};
        if (list_prefixed(dirfd, base, true, &names, err) < 0) {
                strv_free(strv_take(&names));
                cleanup_free char *qpattern = xasprintf("%s.*", base), *q = quote(qpattern);
                return ck_error_wrap(err, "failed to list all log files with pattern %s", q);
        }
        char ts[CLM_TIMESTAMP_LEN + 1];
        clm_timestamp(now, ts);
        struct clm_plan plan;
        char **list = strv_take(&names);
        size_t n = 0;
        while (list[n])
                n++;
        clm_plan_make(base, list, n, max_files, ts, &plan);
        strv_free(list);

        int ret = 0;
        for (size_t i = 0; ret == 0 && plan.unused[i]; i++) {
                if (remove_at(dirfd, plan.unused[i]) < 0) {
                        cleanup_free char *q = quote(plan.unused[i]);
                        ret = ck_error_make(
                            err, errno, "failed to cleanup logs: failed to remove unused log %s",
                            q);
                }
        }
        for (size_t i = 0; ret == 0 && plan.excess[i]; i++) {
                if (remove_at(dirfd, plan.excess[i]) < 0) {
                        cleanup_free char *q = quote(plan.excess[i]);
                        ret = ck_error_make(
                            err, errno, "failed to remove excess logs: failed to remove old log %s",
                            q);
                }
        }
        for (size_t i = 0; ret == 0 && plan.compress[i]; i++) {
                if (clm_compress_at(dirfd, plan.compress[i], stop, err) < 0) {
                        cleanup_free char *q = quote(plan.compress[i]);
                        ret = ck_error_wrap(err, "failed to compress log %s", q);
                }
        }
        cleanup_free char *qbase = quote(base), *qrot = quote(plan.rotated);
        if (ret == 0 && renameat(dirfd, base, dirfd, plan.rotated) < 0)
                ret = ck_error_make(err, errno,
                                    "failed to rotate log %s: failed to rotate log %s to %s", qbase,
                                    qbase, qrot);
        if (ret == 0 && reopen(reopen_ctx, err) < 0) {
                /* rename it back, so that the next round rotates it again */
                if (renameat(dirfd, plan.rotated, dirfd, base) < 0)
                        LOG_ERROR("Failed to rename rotated log",
                                  "rotatedLog=%s newLog=%s err=\"%s\"", qrot, qbase,
                                  strerror(errno));
                ret = ck_error_wrap(err, "failed to rotate log %s", qbase);
        }
        clm_plan_release(&plan);
        return ret;
}

/* ---- one container ---- */

struct reopen_ctx {
        const struct clm_runtime *rt;
        void *conn;
        const char *id;
};

static int reopen_container(void *arg, ck_error_t *err)
{
        struct reopen_ctx *r = arg;
        if (r->rt->reopen(r->conn, r->id, err) < 0) {
                cleanup_free char *q = quote(r->id);
                return ck_error_wrap(err, "failed to reopen container log %s", q);
        }
        return 0;
}

int clm_process_container(const char *pod_logs_dir, const struct clm_policy *policy,
                          const struct clm_runtime *runtime, void *conn, const char *id, time_t now,
                          const atomic_bool *stop, enum clm_outcome *outcome, const char **what,
                          ck_error_t *err)
{
        *outcome = CLM_SKIPPED;
        cleanup_free char *path = NULL, *dir = NULL, *base = NULL;
        if (runtime->log_path(conn, id, &path, err) < 0) {
                *what = "Failed to get container status";
                return -1;
        }
        if (clm_split_log_path(pod_logs_dir, path, &dir, &base, err) < 0) {
                *what = "Refusing to rotate a container log outside podLogsDir";
                return -1;
        }
        *what = "Failed to stat container log";
        cleanup_close int root =
            TEMP_FAILURE_RETRY_INT(open(pod_logs_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (root < 0)
                return ck_error_make(err, errno, "open podLogsDir `%s`", pod_logs_dir);
        cleanup_close int dirfd = fs_open_beneath(root, dir, O_RDONLY | O_DIRECTORY, 0, err);
        if (dirfd < 0)
                return ck_error_wrap(err, "log directory of `%s`", path);
        struct stat st;
        if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                if (errno != ENOENT)
                        return ck_error_make(err, errno, "stat `%s`", path);
                struct reopen_ctx r = {runtime, conn, id};
                if (reopen_container(&r, err) < 0) {
                        *what = "Container log doesn't exist, reopen container log failed";
                        return -1;
                }
                if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        *what = "Failed to stat container log after reopen";
                        return ck_error_make(err, errno, "stat `%s`", path);
                }
        }
        /* A link is a runtime's own log (a dockershim's to the engine's
         * json-file): the engine rotates it, and it could not reopen it
         * (upstream renames the link, gets Unimplemented, renames it back). */
        if (S_ISLNK(st.st_mode)) {
                LOG_INFO(4, "Container log is the runtime's own file, not rotated",
                         "containerID=\"%s\" path=\"%s\"", id, path);
                return 0;
        }
        if (!S_ISREG(st.st_mode))
                return ck_error_make(err, 0, "`%s` is not a regular file", path);
        if ((int64_t)st.st_size < policy->max_size) {
                LOG_INFO(7, "log file doesn't need to be rotated",
                         "containerID=\"%s\" path=\"%s\" currentSize=%lld maxSize=%lld", id, path,
                         (long long)st.st_size, (long long)policy->max_size);
                return 0;
        }
        struct reopen_ctx r = {runtime, conn, id};
        if (clm_rotate_at(dirfd, base, policy->max_files, now, reopen_container, &r, stop, err) <
            0) {
                *what = "Failed to rotate log for container";
                return ck_error_wrap(err, "path `%s` (size %lld, max %lld)", path,
                                     (long long)st.st_size, (long long)policy->max_size);
        }
        *outcome = CLM_ROTATED;
        return 0;
}

int clm_clean(const char *pod_logs_dir, const char *log_path, ck_error_t *err)
{
        cleanup_free char *dir = NULL, *base = NULL;
        if (clm_split_log_path(pod_logs_dir, log_path, &dir, &base, err) < 0)
                return -1;
        cleanup_close int root =
            TEMP_FAILURE_RETRY_INT(open(pod_logs_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (root < 0)
                return ck_error_make(err, errno, "open podLogsDir `%s`", pod_logs_dir);
        cleanup_close int dirfd = fs_open_beneath(root, dir, O_RDONLY | O_DIRECTORY, 0, err);
        if (dirfd < 0) {
                if ((*err)->status != ENOENT)
                        return ck_error_wrap(err, "log directory of `%s`", log_path);
                ck_error_release(err); /* nothing left to remove */
                return 0;
        }
        /* filepath.Glob("<log>*"): the log itself and "<log>" + anything */
        struct strv names = {0};
        int ret = list_prefixed(dirfd, base, false, &names, err);
        if (ret < 0)
                ck_error_wrap(err, "log directory of `%s`", log_path);
        for (size_t i = 0; ret == 0 && i < names.n; i++) {
                if (remove_at(dirfd, names.v[i]) < 0) {
                        cleanup_free char *q = quote(names.v[i]);
                        ret = ck_error_make(err, errno, "failed to remove container log %s", q);
                }
        }
        strv_free(strv_take(&names));
        return ret;
}

/* ---- the work queue ---- */

static ssize_t find(char *const *v, size_t n, const char *id)
{
        for (size_t i = 0; i < n; i++) {
                if (strcmp(v[i], id) == 0)
                        return (ssize_t)i;
        }
        return -1;
}

static void push(char ***v, size_t *n, size_t *cap, const char *id)
{
        if (*n == *cap) {
                *cap = *cap ? *cap * 2 : 16;
                *v = xrealloc(*v, *cap * sizeof(char *));
        }
        (*v)[(*n)++] = xstrdup(id);
}

/* Removes the i-th keeping the order; returns it. */
static char *take(char **v, size_t *n, size_t i)
{
        char *s = v[i];
        memmove(v + i, v + i + 1, (*n - i - 1) * sizeof(char *));
        (*n)--;
        return s;
}

void clm_queue_add(struct clm_queue *q, const char *id)
{
        if (find(q->dirty, q->n_dirty, id) >= 0)
                return;
        push(&q->dirty, &q->n_dirty, &q->cap_dirty, id);
        if (find(q->processing, q->n_processing, id) >= 0)
                return;
        push(&q->items, &q->n, &q->cap, id);
}

char *clm_queue_get(struct clm_queue *q)
{
        if (q->n == 0)
                return NULL;
        char *id = take(q->items, &q->n, 0);
        push(&q->processing, &q->n_processing, &q->cap_processing, id);
        ssize_t d = find(q->dirty, q->n_dirty, id);
        if (d >= 0)
                free(take(q->dirty, &q->n_dirty, (size_t)d));
        return id;
}

void clm_queue_done(struct clm_queue *q, const char *id)
{
        ssize_t p = find(q->processing, q->n_processing, id);
        if (p >= 0)
                free(take(q->processing, &q->n_processing, (size_t)p));
        if (find(q->dirty, q->n_dirty, id) >= 0)
                push(&q->items, &q->n, &q->cap, id);
}

void clm_queue_release(struct clm_queue *q)
{
        for (size_t i = 0; i < q->n; i++)
                free(q->items[i]);
        for (size_t i = 0; i < q->n_dirty; i++)
                free(q->dirty[i]);
        for (size_t i = 0; i < q->n_processing; i++)
                free(q->processing[i]);
        free(q->items);
        free(q->dirty);
        free(q->processing);
        memset(q, 0, sizeof(*q));
}

/* ---- the manager ---- */

struct clm_worker {
        struct clm *m;
        int id;
        pthread_t thread;
};

struct clm {
        char *pod_logs_dir;
        struct clm_policy policy;
        int64_t interval_ms;
        struct clm_runtime rt;
        pthread_mutex_t lock;
        pthread_cond_t work_cond; /* an item queued, or stopping */
        pthread_cond_t stop_cond; /* CLOCK_MONOTONIC: the monitor's sleep */
        atomic_bool stopping;
        struct clm_queue queue; /* under lock */
        pthread_t monitor;
        bool monitor_started;
        struct clm_worker *workers;
        int n_workers; /* started */
};

static void *monitor_thread(void *arg)
{
        struct clm *m = arg;
        void *conn = m->rt.connect(m->rt.ctx);
        do {
                char **ids = NULL;
                cleanup_error ck_error_t e = NULL;
                LOG_INFO(4, "Starting container log rotation sequence");
                if (m->rt.list_running(conn, &ids, &e) < 0) {
                        LOG_ERROR("Failed to rotate container logs", "err=\"%s\"", ck_error_msg(e));
                        continue;
                }
                pthread_mutex_lock(&m->lock);
                for (size_t i = 0; ids[i]; i++) {
                        LOG_INFO(4, "Adding new entry to the queue for processing", "id=\"%s\"",
                                 ids[i]);
                        clm_queue_add(&m->queue, ids[i]);
                }
                pthread_cond_broadcast(&m->work_cond);
                pthread_mutex_unlock(&m->lock);
                strv_free(ids);
        } while (sleep_unless_stopped(&m->lock, &m->stop_cond, &m->stopping, m->interval_ms));
        m->rt.disconnect(conn);
        return NULL;
}

static void *worker_thread(void *arg)
{
        struct clm_worker *w = arg;
        struct clm *m = w->m;
        void *conn = m->rt.connect(m->rt.ctx);
        LOG_INFO(4, "Starting container log rotation worker", "workerID=%d", w->id);
        pthread_mutex_lock(&m->lock);
        for (;;) {
                while (!atomic_load(&m->stopping) && m->queue.n == 0)
                        pthread_cond_wait(&m->work_cond, &m->lock);
                if (atomic_load(&m->stopping))
                        break;
                char *id = clm_queue_get(&m->queue);
                pthread_mutex_unlock(&m->lock);

                enum clm_outcome outcome;
                const char *what = NULL;
                cleanup_error ck_error_t e = NULL;
                if (clm_process_container(m->pod_logs_dir, &m->policy, &m->rt, conn, id, time(NULL),
                                          &m->stopping, &outcome, &what, &e) < 0)
                        LOG_ERROR(what, "worker=%d containerID=\"%s\" err=\"%s\"", w->id, id,
                                  ck_error_msg(e));
                else if (outcome == CLM_ROTATED)
                        LOG_INFO(4, "Rotated container log", "worker=%d containerID=\"%s\"", w->id,
                                 id);

                pthread_mutex_lock(&m->lock);
                clm_queue_done(&m->queue, id);
                free(id);
        }
        pthread_mutex_unlock(&m->lock);
        LOG_INFO(4, "Terminating container log rotation worker", "workerID=%d", w->id);
        m->rt.disconnect(conn);
        return NULL;
}

int clm_start(const struct clm_options *o, struct clm **out, ck_error_t *err)
{
        *out = NULL;
        if (o->max_files <= 1)
                return ck_error_make(err, 0, "invalid MaxFiles %d, must be > 1", o->max_files);
        int64_t max_size = 0;
        if (clm_parse_max_size(o->max_size, &max_size, err) < 0) {
                cleanup_free char *q = quote(o->max_size);
                return ck_error_wrap(err, "failed to parse container log max size %s", q);
        }
        if (o->max_workers < 1 || o->monitor_interval_ms <= 0)
                return ck_error_make(err, 0, "invalid container log workers %d or interval %lldms",
                                     o->max_workers, (long long)o->monitor_interval_ms);
        if (max_size < 0) /* upstream's stub manager */
                return 0;

        struct clm *m = xcalloc(1, sizeof(*m));
        m->pod_logs_dir = xstrdup(o->pod_logs_dir);
        m->policy = (struct clm_policy){.max_size = max_size, .max_files = o->max_files};
        m->interval_ms = o->monitor_interval_ms;
        m->rt = o->runtime;
        atomic_init(&m->stopping, false);
        pthread_mutex_init(&m->lock, NULL);
        pthread_cond_init(&m->work_cond, NULL);
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&m->stop_cond, &ca);
        pthread_condattr_destroy(&ca);
        m->workers = xcalloc((size_t)o->max_workers, sizeof(*m->workers));

        char period[64];
        go_duration_format_ms(m->interval_ms, period, sizeof(period));
        LOG_INFO(0, "Initializing container log rotate workers", "workers=%d monitorPeriod=\"%s\"",
                 o->max_workers, period);
        for (int i = 0; i < o->max_workers; i++) {
                struct clm_worker *w = &m->workers[i];
                w->m = m;
                w->id = i + 1;
                int r = pthread_create(&w->thread, NULL, worker_thread, w);
                if (r != 0) {
                        clm_stop(m);
                        return ck_error_make(err, r, "start container log rotation worker");
                }
                m->n_workers++;
        }
        int r = pthread_create(&m->monitor, NULL, monitor_thread, m);
        if (r != 0) {
                clm_stop(m);
                return ck_error_make(err, r, "start container log monitor");
        }
        m->monitor_started = true;
        *out = m;
        return 0;
}

void clm_stop(struct clm *m)
{
        if (m == NULL)
                return;
        pthread_mutex_lock(&m->lock);
        atomic_store(&m->stopping, true);
        pthread_cond_broadcast(&m->work_cond);
        pthread_cond_broadcast(&m->stop_cond);
        pthread_mutex_unlock(&m->lock);
        if (m->monitor_started)
                pthread_join(m->monitor, NULL);
        for (int i = 0; i < m->n_workers; i++)
                pthread_join(m->workers[i].thread, NULL);
        clm_queue_release(&m->queue);
        pthread_mutex_destroy(&m->lock);
        pthread_cond_destroy(&m->work_cond);
        pthread_cond_destroy(&m->stop_cond);
        free(m->workers);
        free(m->pod_logs_dir);
        free(m);
}

/* ---- the CRI binding ---- */

static void *cri_connect(void *ctx)
{
        const struct clm_cri *c = ctx;
        return cri_client_new(c->endpoint, c->timeout_ms);
}

static void cri_disconnect(void *conn)
{
        cri_client_free(conn);
}

static int cri_list_running(void *conn, char ***ids, ck_error_t *err)
{
        Runtime__V1__ListContainersResponse *resp = NULL;
        if (cri_list_containers(conn, NULL, &resp, err) < 0)
                return ck_error_wrap(err, "failed to list containers");
        struct strv out = {0};
        for (size_t i = 0; i < resp->n_containers; i++) {
                const Runtime__V1__Container *c = resp->containers[i];
                /* only running containers write: a stopped one's log stays */
                if (c->state == RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING && c->id)
                        strv_push(&out, xstrdup(c->id));
        }
        runtime__v1__list_containers_response__free_unpacked(resp, NULL);
        *ids = strv_take(&out);
        return 0;
}

static int cri_log_path(void *conn, const char *id, char **path, ck_error_t *err)
{
        Runtime__V1__ContainerStatusResponse *resp = NULL;
        if (cri_container_status(conn, id, &resp, err) < 0) {
                cleanup_free char *q = quote(id);
                return ck_error_wrap(err, "failed to get container status %s", q);
        }
        int ret = 0;
        if (resp->status == NULL) {
                cleanup_free char *q = quote(id);
                ret = ck_error_make(err, 0, "container status is nil for %s", q);
        } else {
                *path = xstrdup(resp->status->log_path ? resp->status->log_path : "");
        }
        runtime__v1__container_status_response__free_unpacked(resp, NULL);
        return ret;
}

static int cri_reopen(void *conn, const char *id, ck_error_t *err)
{
        return cri_reopen_container_log(conn, id, err);
}

const struct clm_runtime clm_cri_runtime_template = {
    .connect = cri_connect,
    .disconnect = cri_disconnect,
    .list_running = cri_list_running,
    .log_path = cri_log_path,
    .reopen = cri_reopen,
    .ctx = NULL,
};
