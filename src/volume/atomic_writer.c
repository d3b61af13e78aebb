/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The payload of configMap, secret, downwardAPI and projected volumes and its
 * atomic update (upstream pkg/volume/util/atomic_writer.go):
 *
 *   <dir>/..2026_01_02_03_04_05.123456/<files>   the payload
 *   <dir>/..data -> ..2026_01_02_03_04_05.123456 swapped by rename(2)
 *   <dir>/<name> -> ..data/<name>                 what the container sees
 *
 * A reader of <dir>/<name> sees either the old or the new payload, never a
 * mix.  Everything is resolved under the volume's directory fd.
 */
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "volume/plugins.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DATA_DIR_NAME "..data"
#define NEW_DATA_DIR_NAME "..data_tmp"
#define MAX_FILE_NAME_LENGTH 255
#define MAX_PATH_LENGTH 4096
#define TS_DIR_MODE 0755

void volume_payload_set(struct volume_payload *p, const char *path, const void *data, size_t len,
                        mode_t mode)
{
        struct volume_file *f = NULL;
        for (size_t i = 0; i < p->n && f == NULL; i++)
                if (strcmp(p->files[i].path, path) == 0)
                        f = &p->files[i];
        if (f == NULL) {
                p->files = xrealloc(p->files, (p->n + 1) * sizeof(*p->files));
                f = &p->files[p->n++];
                f->path = xstrdup(path);
        } else {
                free(f->data);
        }
        f->data = xmalloc(len + 1);
        if (len > 0)
                memcpy(f->data, data, len);
        f->data[len] = '\0';
        f->len = len;
        f->mode = mode;
        f->has_owner = false;
        f->owner = 0;
}

void volume_payload_release(struct volume_payload *p)
{
        for (size_t i = 0; i < p->n; i++) {
                free(p->files[i].path);
                free(p->files[i].data);
        }
        free(p->files);
        p->files = NULL;
        p->n = 0;
}

int volume_payload_check_path(const char *path, char **clean, ck_error_t *err)
{
        if (*path == '\0')
                return ck_error_make(err, 0, "invalid path: must not be empty: \"\"");
        if (*path == '/')
                return ck_error_make(err, 0, "invalid path: must be relative path: %s", path);
        if (strlen(path) > MAX_PATH_LENGTH)
                return ck_error_make(err, 0,
                                     "invalid path: must be less than or equal to %d characters",
                                     MAX_PATH_LENGTH);
        size_t first_len = strcspn(path, "/");
        if (first_len > 2 && strncmp(path, "..", 2) == 0)
                return ck_error_make(err, 0, "invalid path: must not start with '..': %s", path);
        char *out = xmalloc(strlen(path) + 1);
        size_t o = 0;
        for (const char *s = path; *s;) {
                size_t n = strcspn(s, "/");
                if (n == 2 && s[0] == '.' && s[1] == '.') {
                        free(out);
                        return ck_error_make(err, 0, "invalid path: must not contain '..': %s",
                                             path);
                }
                if (n > MAX_FILE_NAME_LENGTH) {
                        free(out);
                        return ck_error_make(
                            err, 0,
                            "invalid path: filenames must be less than or equal to %d "
                            "characters",
                            MAX_FILE_NAME_LENGTH);
                }
                /* filepath.Clean: no empty or "." components */
                if (n > 0 && !(n == 1 && s[0] == '.')) {
                        if (o > 0)
                                out[o++] = '/';
                        memcpy(out + o, s, n);
                        o += n;
                }
                s += n;
                while (*s == '/')
                        s++;
        }
        out[o] = '\0';
        if (o == 0) {
                free(out);
                return ck_error_make(err, 0, "invalid path: must name a file: %s", path);
        }
        /* "./..data/x" passes upstream's raw check but cleans to the
         * writer's own "..data": the next write would unlink the live data
         * link as an old user path (upstream has this hole; found by
         * fuzz_atomic_writer) */
        if (strncmp(out, "..", 2) == 0) {
                free(out);
                return ck_error_make(err, 0, "invalid path: must not start with '..': %s", path);
        }
        *clean = out;
        return 0;
}

/* ---- a set of relative paths ---- */

struct path_set {
        char **items;
        size_t n;
};

static bool path_set_has(const struct path_set *s, const char *p)
{
        for (size_t i = 0; i < s->n; i++)
                if (strcmp(s->items[i], p) == 0)
                        return true;
        return false;
}

static void path_set_add(struct path_set *s, const char *p)
{
        if (path_set_has(s, p))
                return;
        s->items = xrealloc(s->items, (s->n + 1) * sizeof(*s->items));
        s->items[s->n++] = xstrdup(p);
}

static void path_set_release(struct path_set *s)
{
        for (size_t i = 0; i < s->n; i++)
                free(s->items[i]);
        free(s->items);
        s->items = NULL;
        s->n = 0;
}

/* Every file and directory below the directory fd, relative ("a", "a/b"). */
static int walk_paths(int fd, const char *prefix, struct path_set *out, ck_error_t *err)
{
        int dup_fd = TEMP_FAILURE_RETRY_INT(openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (dup_fd < 0)
                return ck_error_make(err, errno, "open `%s`", prefix);
        DIR *d = fdopendir(dup_fd);
        if (d == NULL) {
                close(dup_fd);
                return ck_error_make(err, errno, "read directory `%s`", prefix);
        }
        int ret = 0;
        struct dirent *de;
        while (ret == 0 && (de = readdir(d)) != NULL) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                cleanup_free char *rel =
                    *prefix ? xasprintf("%s/%s", prefix, de->d_name) : xstrdup(de->d_name);
                path_set_add(out, rel);
                struct stat st;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISDIR(st.st_mode))
                        continue;
                cleanup_close int sub = TEMP_FAILURE_RETRY_INT(
                    openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
                if (sub < 0)
                        ret = ck_error_make(err, errno, "open `%s`", rel);
                else
                        ret = walk_paths(sub, rel, out, err);
        }
        closedir(d);
        return ret;
}

/* ---- the steps of a write ---- */

/* The cleaned, validated payload: files by cleaned path, a later one of the
 * same path winning. */
struct clean_file {
        char *path;
        const struct volume_file *f;
};

struct clean_payload {
        struct clean_file *files;
        size_t n;
};

static void clean_payload_release(struct clean_payload *c)
{
        for (size_t i = 0; i < c->n; i++)
                free(c->files[i].path);
        free(c->files);
}

static int clean_payload(const struct volume_payload *p, struct clean_payload *out, ck_error_t *err)
{
        out->files = xcalloc(p->n + 1, sizeof(*out->files));
        out->n = 0;
        for (size_t i = 0; i < p->n; i++) {
                char *clean = NULL;
                if (volume_payload_check_path(p->files[i].path, &clean, err) < 0)
                        return -1;
                size_t j = 0;
                while (j < out->n && strcmp(out->files[j].path, clean) != 0)
                        j++;
                if (j < out->n)
                        free(out->files[j].path);
                else
                        out->n++;
                out->files[j].path = clean;
                out->files[j].f = &p->files[i];
        }
        return 0;
}

/* Whether the file under dir_fd differs from data (or is missing). */
static bool file_differs(int dir_fd, const char *rel, const char *data, size_t len)
{
        cleanup_error ck_error_t ignored = NULL;
        cleanup_close int fd = fs_open_beneath(dir_fd, rel, O_RDONLY | O_NOFOLLOW, 0, &ignored);
        if (fd < 0)
                return true;
        struct stat st;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size != len)
                return true;
        cleanup_free char *buf = xmalloc(len + 1);
        size_t got = 0;
        while (got < len + 1) {
                ssize_t n = TEMP_FAILURE_RETRY_INT(read(fd, buf + got, len + 1 - got));
                if (n <= 0)
                        break;
                got += (size_t)n;
        }
        return got != len || (len > 0 && memcmp(buf, data, len) != 0);
}

/* The old timestamped directory "..data" points to; NULL if none. */
static int read_data_link(int dir_fd, const char *dir_path, char **out, ck_error_t *err)
{
        char buf[MAX_FILE_NAME_LENGTH + 1];
        ssize_t n = readlinkat(dir_fd, DATA_DIR_NAME, buf, sizeof(buf) - 1);
        if (n < 0) {
                if (errno == ENOENT) {
                        *out = NULL;
                        return 0;
                }
                return ck_error_make(err, errno, "read link `%s/" DATA_DIR_NAME "`", dir_path);
        }
        buf[n] = '\0';
        /* only ever one of ours: a single "..<timestamp>" component */
        if (strncmp(buf, "..", 2) != 0 || strchr(buf, '/') != NULL || strcmp(buf, "..") == 0 ||
            strcmp(buf, DATA_DIR_NAME) == 0 || strcmp(buf, NEW_DATA_DIR_NAME) == 0)
                return ck_error_make(err, 0, "`%s/" DATA_DIR_NAME "` points to unexpected `%s`",
                                     dir_path, buf);
        *out = xstrdup(buf);
        return 0;
}

/* upstream newTimestampDir: "..<UTC time>.<random>", mode 0755. */
static int new_timestamp_dir(int dir_fd, const char *dir_path, char **name, ck_error_t *err)
{
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        char stamp[64];
        strftime(stamp, sizeof(stamp), "..%Y_%m_%d_%H_%M_%S.", &tm);
        for (int attempt = 0; attempt < 100; attempt++) {
                uint32_t r = 0;
                if (getrandom(&r, sizeof(r), 0) != sizeof(r))
                        r = (uint32_t)rand();
                char *n = xasprintf("%s%" PRIu32, stamp, r);
                if (mkdirat(dir_fd, n, 0700) == 0) {
                        if (fchmodat(dir_fd, n, TS_DIR_MODE, 0) < 0) {
                                int e = errno;
                                free(n);
                                return ck_error_make(err, e, "chmod new data directory in `%s`",
                                                     dir_path);
                        }
                        *name = n;
                        return 0;
                }
                int e = errno;
                free(n);
                if (e != EEXIST)
                        return ck_error_make(err, e, "create a data directory in `%s`", dir_path);
        }
        return ck_error_make(err, EEXIST, "create a data directory in `%s`", dir_path);
}

/* Opens (creating) the parent directories of rel under dir_fd; *base is the
 * last component of rel. */
static int open_parent(int dir_fd, const char *rel, const char **base, ck_error_t *err)
{
        int fd = TEMP_FAILURE_RETRY_INT(openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (fd < 0)
                return ck_error_make(err, errno, "open data directory");
        const char *s = rel;
        for (const char *slash; (slash = strchr(s, '/')) != NULL; s = slash + 1) {
                cleanup_free char *comp = xstrndup(s, (size_t)(slash - s));
                /* umask applies, as os.MkdirAll(dir, os.ModePerm) */
                if (mkdirat(fd, comp, 0777) < 0 && errno != EEXIST) {
                        int e = errno;
                        close(fd);
                        return ck_error_make(err, e, "mkdir for `%s`", rel);
                }
                int sub = TEMP_FAILURE_RETRY_INT(
                    openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
                int e = errno;
                close(fd);
                if (sub < 0)
                        return ck_error_make(err, e, "open directory for `%s`", rel);
                fd = sub;
        }
        *base = s;
        return fd;
}

static int write_file(int ts_fd, const char *ts_path, const char *rel, const struct volume_file *f,
                      ck_error_t *err)
{
        const char *base = NULL;
        cleanup_close int parent = open_parent(ts_fd, rel, &base, err);
        if (parent < 0)
                return ck_error_wrap(err, "in `%s`", ts_path);
        cleanup_close int fd = TEMP_FAILURE_RETRY_INT(
            openat(parent, base, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
        if (fd < 0)
                return ck_error_make(err, errno, "create `%s/%s`", ts_path, rel);
        for (size_t off = 0; off < f->len;) {
                ssize_t n = TEMP_FAILURE_RETRY_INT(write(fd, f->data + off, f->len - off));
                if (n < 0)
                        return ck_error_make(err, errno, "write `%s/%s`", ts_path, rel);
                off += (size_t)n;
        }
        if (fchmod(fd, f->mode & 07777) < 0)
                return ck_error_make(err, errno, "chmod `%s/%s` to %04o", ts_path, rel,
                                     (unsigned)f->mode);
        if (f->has_owner && fchown(fd, f->owner, (gid_t)-1) < 0)
                return ck_error_make(err, errno, "chown `%s/%s` to %u", ts_path, rel,
                                     (unsigned)f->owner);
        return 0;
}

static void remove_dir(const char *dir_path, const char *name)
{
        cleanup_free char *p = xasprintf("%s/%s", dir_path, name);
        cleanup_error ck_error_t e = NULL;
        if (fs_remove_all(p, &e) < 0)
                LOG_ERROR("Failed to remove a volume data directory", "path=\"%s\" err=\"%s\"", p,
                          ck_error_msg(e));
}

/* Writes the new timestamped directory and swaps "..data" to it. */
static int write_and_swap(int dir_fd, const char *dir_path, const struct clean_payload *c,
                          int64_t fs_group, ck_error_t *err)
{
        cleanup_free char *ts = NULL;
        if (new_timestamp_dir(dir_fd, dir_path, &ts, err) < 0)
                return -1;
        cleanup_free char *ts_path = xasprintf("%s/%s", dir_path, ts);
        cleanup_close int ts_fd = TEMP_FAILURE_RETRY_INT(
            openat(dir_fd, ts, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (ts_fd < 0) {
                ck_error_make(err, errno, "open `%s`", ts_path);
                goto fail;
        }
        for (size_t i = 0; i < c->n; i++)
                if (write_file(ts_fd, ts_path, c->files[i].path, c->files[i].f, err) < 0)
                        goto fail;
        if (fs_group >= 0 &&
            volume_set_ownership(dir_fd, dir_path, (gid_t)fs_group, true, err) < 0) {
                ck_error_wrap(err, "apply fsGroup %" PRId64, fs_group);
                goto fail;
        }
        /* a "..data_tmp" left by a crash would stop every later write */
        if (unlinkat(dir_fd, NEW_DATA_DIR_NAME, 0) < 0 && errno != ENOENT) {
                ck_error_make(err, errno, "remove `%s/" NEW_DATA_DIR_NAME "`", dir_path);
                goto fail;
        }
        if (symlinkat(ts, dir_fd, NEW_DATA_DIR_NAME) < 0) {
                ck_error_make(err, errno, "symlink `%s/" NEW_DATA_DIR_NAME "`", dir_path);
                goto fail;
        }
        if (renameat(dir_fd, NEW_DATA_DIR_NAME, dir_fd, DATA_DIR_NAME) < 0) {
                ck_error_make(err, errno, "rename `%s/" NEW_DATA_DIR_NAME "` to " DATA_DIR_NAME,
                              dir_path);
                unlinkat(dir_fd, NEW_DATA_DIR_NAME, 0);
                goto fail;
        }
        return 0;
fail:
        remove_dir(dir_path, ts);
        return -1;
}

/* upstream createUserVisibleFiles: "<first component>" -> "..data/<it>". */
static int create_visible_links(int dir_fd, const char *dir_path, const struct clean_payload *c,
                                ck_error_t *err)
{
        for (size_t i = 0; i < c->n; i++) {
                cleanup_free char *name =
                    xstrndup(c->files[i].path, strcspn(c->files[i].path, "/"));
                char buf[8];
                if (readlinkat(dir_fd, name, buf, sizeof(buf)) >= 0 || errno != ENOENT)
                        continue;
                cleanup_free char *target = xasprintf(DATA_DIR_NAME "/%s", name);
                if (symlinkat(target, dir_fd, name) < 0 && errno != EEXIST)
                        return ck_error_make(err, errno, "symlink `%s/%s`", dir_path, name);
        }
        return 0;
}

/* upstream removeUserVisiblePaths: the top-level names no longer there. */
static int remove_visible_paths(int dir_fd, const char *dir_path, const struct path_set *paths,
                                ck_error_t *err)
{
        int ret = 0;
        for (size_t i = 0; i < paths->n; i++) {
                const char *p = paths->items[i];
                if (strchr(p, '/') != NULL)
                        continue;
                if (unlinkat(dir_fd, p, 0) < 0 && errno != ENOENT &&
                    !(errno == EISDIR && unlinkat(dir_fd, p, AT_REMOVEDIR) == 0)) {
                        ck_error_release(err);
                        ret = ck_error_make(err, errno, "remove `%s/%s`", dir_path, p);
                        LOG_ERROR("Failed to prune an old user-visible path",
                                  "path=\"%s/%s\" err=\"%s\"", dir_path, p, ck_error_msg(*err));
                }
        }
        return ret;
}

/* The old paths that the new payload does not have (upstream pathsToRemove). */
static int paths_to_remove(int dir_fd, const char *dir_path, const char *old_ts,
                           const struct clean_payload *c, struct path_set *out, ck_error_t *err)
{
        cleanup_close int old_fd = TEMP_FAILURE_RETRY_INT(
            openat(dir_fd, old_ts, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (old_fd < 0) {
                if (errno == ENOENT)
                        return 0;
                return ck_error_make(err, errno, "open `%s/%s`", dir_path, old_ts);
        }
        struct path_set old = {0};
        if (walk_paths(old_fd, "", &old, err) < 0) {
                path_set_release(&old);
                return ck_error_wrap(err, "in `%s/%s`", dir_path, old_ts);
        }
        struct path_set keep = {0};
        for (size_t i = 0; i < c->n; i++) {
                /* the file and each directory above it */
                cleanup_free char *p = xstrdup(c->files[i].path);
                char *slash;
                path_set_add(&keep, p);
                while ((slash = strrchr(p, '/')) != NULL) {
                        *slash = '\0';
                        path_set_add(&keep, p);
                }
        }
        for (size_t i = 0; i < old.n; i++)
                if (!path_set_has(&keep, old.items[i]))
                        path_set_add(out, old.items[i]);
        path_set_release(&keep);
        path_set_release(&old);
        return 0;
}

static bool payload_differs(int dir_fd, const char *old_ts, const struct clean_payload *c)
{
        cleanup_close int old_fd = TEMP_FAILURE_RETRY_INT(
            openat(dir_fd, old_ts, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (old_fd < 0)
                return true;
        for (size_t i = 0; i < c->n; i++)
                if (file_differs(old_fd, c->files[i].path, c->files[i].f->data, c->files[i].f->len))
                        return true;
        return false;
}

int volume_atomic_write(int dir_fd, const char *dir_path, const struct volume_payload *p,
                        int64_t fs_group, bool *wrote, ck_error_t *err)
{
        *wrote = false;
        struct clean_payload c = {0};
        struct path_set remove = {0};
        cleanup_free char *old_ts = NULL;
        int ret = -1;
        if (clean_payload(p, &c, err) < 0) {
                ck_error_wrap(err, "invalid payload for `%s`", dir_path);
                goto out;
        }
        if (read_data_link(dir_fd, dir_path, &old_ts, err) < 0)
                goto out;
        bool should_write = true;
        if (old_ts != NULL) {
                if (paths_to_remove(dir_fd, dir_path, old_ts, &c, &remove, err) < 0)
                        goto out;
                should_write = remove.n > 0 || payload_differs(dir_fd, old_ts, &c);
                if (!should_write) {
                        LOG_INFO(4, "Write not required for the volume's data directory",
                                 "path=\"%s/%s\"", dir_path, old_ts);
                        free(old_ts);
                        old_ts = NULL;
                }
        }
        if (should_write) {
                if (write_and_swap(dir_fd, dir_path, &c, fs_group, err) < 0)
                        goto out;
                *wrote = true;
        }
        if (create_visible_links(dir_fd, dir_path, &c, err) < 0 ||
            remove_visible_paths(dir_fd, dir_path, &remove, err) < 0)
                goto out;
        if (old_ts != NULL)
                remove_dir(dir_path, old_ts);
        ret = 0;
out:
        path_set_release(&remove);
        clean_payload_release(&c);
        return ret;
}
