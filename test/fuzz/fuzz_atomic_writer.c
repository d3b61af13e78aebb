/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzzes the path guard and the atomic writer of configMap, secret,
 * downwardAPI and projected volumes (volume/atomic_writer.c, upstream
 * pkg/volume/util/atomic_writer.go) with payloads whose paths a pod's author
 * or an object's keys choose.  The input is a script of up to MAX_ROUNDS
 * writes into one volume directory:
 *
 *   <path> [TAB <octal mode> [TAB <content>]] LF    a file of this write
 *   %% LF                                            the next write
 *   %%g LF                                           the next write, fsGroup 1234
 *
 * Each path also goes through volume_payload_check_path (against upstream's
 * validatePath and filepath.Clean) and volume_check_component.  Checks,
 * beyond memory safety, after every write:
 *   - nothing exists outside the volume directory (it lives three levels
 *     below a private temporary directory, so that "..", "../.." or a
 *     symlink followed out would show), and no symlink in it is absolute
 *     or has a ".." component;
 *   - a write fails if and only if a path is invalid or one file's path is
 *     another's directory; a write that fails leaves the last good content;
 *   - after a write, every file reads back through <dir>/<path> with its
 *     content (and its mode, when the write happened).
 */
#include "fuzz_fs.h"

#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "volume/plugins.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_ROUNDS 4
#define MAX_FILES 32
#define FS_GROUP 1234

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char root[64];     /* /tmp/fuzz_atomic_writer.XXXXXX */
static char vol_path[96]; /* <root>/a/b/vol */

static void remove_root(void)
{
        ck_error_t err = NULL;
        fs_remove_all(root, &err);
        ck_error_release(&err);
}

/* ---- the reference path guard: upstream validatePath + filepath.Clean ---- */

static bool go_validate_path(const char *p)
{
        size_t len = strlen(p);
        if (len == 0 || p[0] == '/' || len > 4096)
                return false;
        size_t first = strcspn(p, "/");
        for (const char *s = p;;) {
                size_t n = strcspn(s, "/");
                if ((n == 2 && s[0] == '.' && s[1] == '.') || n > 255)
                        return false;
                if (s[n] == '\0')
                        break;
                s += n + 1;
        }
        return !(first > 2 && p[0] == '.' && p[1] == '.');
}

/* Whether the first component filepath.Clean(p) keeps starts with "..":
 * the writer's own names ("./..data/x"), refused after cleaning. */
static bool cleans_to_dotdot(const char *p)
{
        for (const char *s = p; *s;) {
                size_t n = strcspn(s, "/");
                if (n > 0 && !(n == 1 && s[0] == '.'))
                        return n >= 2 && s[0] == '.' && s[1] == '.';
                s += n;
                while (*s == '/')
                        s++;
        }
        return false;
}

/* Whether filepath.Clean(p) is "." (no component names anything). */
static bool cleans_to_dot(const char *p)
{
        for (const char *s = p; *s;) {
                size_t n = strcspn(s, "/");
                if (n > 0 && !(n == 1 && s[0] == '.'))
                        return false;
                s += n;
                while (*s == '/')
                        s++;
        }
        return true;
}

static void check_path(const char *p)
{
        char *clean = NULL;
        ck_error_t err = NULL;
        int r = volume_payload_check_path(p, &clean, &err);
        bool want = go_validate_path(p) && !cleans_to_dot(p) && !cleans_to_dotdot(p);
        if ((r == 0) != want || (r < 0) != (err != NULL) || (r < 0 && clean != NULL))
                abort();
        if (r < 0) {
                ck_error_release(&err);
        } else {
                /* cleaned: relative, no empty, "." or ".." component, no
                 * longer, and a fixed point */
                size_t n = strlen(clean);
                if (n == 0 || n > strlen(p) || clean[0] == '/' || clean[n - 1] == '/' ||
                    strstr(clean, "//") != NULL)
                        abort();
                for (const char *s = clean;;) {
                        size_t l = strcspn(s, "/");
                        if ((l == 1 && s[0] == '.') || (l == 2 && s[0] == '.' && s[1] == '.'))
                                abort();
                        if (s[l] == '\0')
                                break;
                        s += l + 1;
                }
                /* never one of the writer's own names, and a fixed point */
                char *again = NULL;
                if (strncmp(clean, "..", 2) == 0 ||
                    volume_payload_check_path(clean, &again, &err) < 0 || strcmp(again, clean) != 0)
                        abort();
                free(again);
                free(clean);
        }
        bool component =
            p[0] != '\0' && strchr(p, '/') == NULL && strcmp(p, ".") != 0 && strcmp(p, "..") != 0;
        r = volume_check_component("name", p, &err);
        if ((r == 0) != component || (r < 0) != (err != NULL))
                abort();
        ck_error_release(&err);
}

/* ---- what the volume must hold ---- */

struct want_file {
        char *path; /* cleaned */
        char *data;
        size_t len;
        mode_t mode;
};

struct want {
        struct want_file files[MAX_FILES];
        size_t n;
        bool valid; /* every path valid, none another's directory */
};

static void want_release(struct want *w)
{
        for (size_t i = 0; i < w->n; i++) {
                free(w->files[i].path);
                free(w->files[i].data);
        }
        memset(w, 0, sizeof(*w));
}

/* What a write of p makes visible: the cleaned paths, a later file of one
 * path winning (clean_payload's order). */
static void want_of(const struct volume_payload *p, struct want *w)
{
        memset(w, 0, sizeof(*w));
        w->valid = true;
        for (size_t i = 0; i < p->n; i++) {
                char *clean = NULL;
                ck_error_t err = NULL;
                if (volume_payload_check_path(p->files[i].path, &clean, &err) < 0) {
                        ck_error_release(&err);
                        w->valid = false;
                        continue;
                }
                if (strncmp(clean, "..", 2) == 0)
                        abort(); /* the guard lets no path beside "..data" */
                size_t j = 0;
                while (j < w->n && strcmp(w->files[j].path, clean) != 0)
                        j++;
                if (j == w->n) {
                        w->n++;
                        w->files[j].path = clean;
                } else {
                        free(clean);
                        free(w->files[j].data);
                }
                w->files[j].data = xmalloc(p->files[i].len + 1);
                memcpy(w->files[j].data, p->files[i].data, p->files[i].len + 1);
                w->files[j].len = p->files[i].len;
                w->files[j].mode = p->files[i].mode;
        }
        for (size_t i = 0; i < w->n; i++)
                for (size_t j = 0; j < w->n; j++) {
                        size_t l = strlen(w->files[i].path);
                        if (i != j && strncmp(w->files[j].path, w->files[i].path, l) == 0 &&
                            w->files[j].path[l] == '/')
                                w->valid = false;
                }
}

/* ---- checks on the file system ---- */

/* dir holds exactly the entry `only`. */
static void check_only(const char *dir, const char *only)
{
        DIR *d = opendir(dir);
        if (d == NULL)
                abort();
        struct dirent *de;
        size_t n = 0;
        while ((de = readdir(d)) != NULL) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (strcmp(de->d_name, only) != 0) {
                        fprintf(stderr, "fuzz_atomic_writer: `%s/%s` created outside the volume\n",
                                dir, de->d_name);
                        abort();
                }
                n++;
        }
        closedir(d);
        if (n != 1)
                abort();
}

static void check_contained(int vol_fd)
{
        char a[80], b[88];
        snprintf(a, sizeof(a), "%s/a", root);
        snprintf(b, sizeof(b), "%s/a/b", root);
        check_only(root, "a");
        check_only(a, "b");
        check_only(b, "vol");
        fuzz_check_tree(vol_fd, vol_path);
}

/* Every file of w reads back through the visible links. */
static void check_content(int vol_fd, const struct want *w, bool modes, int64_t fs_group)
{
        for (size_t i = 0; i < w->n; i++) {
                const struct want_file *f = &w->files[i];
                cleanup_close int fd = openat(vol_fd, f->path, O_RDONLY | O_CLOEXEC);
                struct stat st;
                if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
                    (size_t)st.st_size != f->len) {
                        fprintf(stderr, "fuzz_atomic_writer: `%s` missing or wrong size\n",
                                f->path);
                        abort();
                }
                cleanup_free char *buf = xmalloc(f->len + 1);
                if (read(fd, buf, f->len + 1) != (ssize_t)f->len || memcmp(buf, f->data, f->len))
                        abort();
                mode_t want_mode = (f->mode & 07777) | (fs_group >= 0 ? 0440 : 0);
                if (modes && ((st.st_mode & 07777) != want_mode ||
                              (fs_group >= 0 && st.st_gid != (gid_t)fs_group)))
                        abort();
        }
}

/* ---- one write ---- */

static mode_t parse_mode(const char *s, size_t n)
{
        mode_t m = 0;
        for (size_t i = 0; i < n && i < 6 && s[i] >= '0' && s[i] <= '7'; i++)
                m = (mode_t)(m * 8 + (mode_t)(s[i] - '0'));
        return n == 0 ? 0644 : m;
}

/* Fills p from the lines of one round ([s, end)). */
static void parse_round(const char *s, const char *end, struct volume_payload *p)
{
        while (s < end && p->n < MAX_FILES) {
                const char *nl = memchr(s, '\n', (size_t)(end - s));
                const char *le = nl != NULL ? nl : end;
                const char *t1 = memchr(s, '\t', (size_t)(le - s));
                const char *pe = t1 != NULL ? t1 : le;
                cleanup_free char *path = xstrndup(s, (size_t)(pe - s));
                mode_t mode = 0644;
                const char *content = "";
                size_t clen = 0;
                if (t1 != NULL) {
                        const char *t2 = memchr(t1 + 1, '\t', (size_t)(le - t1 - 1));
                        const char *me = t2 != NULL ? t2 : le;
                        mode = parse_mode(t1 + 1, (size_t)(me - t1 - 1));
                        if (t2 != NULL) {
                                content = t2 + 1;
                                clen = (size_t)(le - t2 - 1);
                        }
                }
                check_path(path);
                volume_payload_set(p, path, content, clen, mode);
                s = nl != NULL ? nl + 1 : end;
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (root[0] == '\0') {
                log_set_fd(open("/dev/null", O_WRONLY | O_CLOEXEC));
                snprintf(root, sizeof(root), "/tmp/fuzz_atomic_writer.XXXXXX");
                if (mkdtemp(root) == NULL)
                        abort();
                atexit(remove_root);
                snprintf(vol_path, sizeof(vol_path), "%s/a/b/vol", root);
        }
        ck_error_t err = NULL;
        cleanup_free char *a = xasprintf("%s/a", root);
        if (fs_remove_all(a, &err) < 0 || fs_mkdir_p(vol_path, 0755, &err) < 0)
                abort();
        cleanup_close int vol_fd = open(vol_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (vol_fd < 0)
                abort();

        struct want last = {0}; /* the last good write */
        bool have_last = false;
        int64_t fs_group = -1; /* of the next write */
        const char *s = (const char *)data, *end = s + size;
        for (int round = 0; round < MAX_ROUNDS && s <= end; round++) {
                /* the round's lines end at a "%%" line */
                const char *r_end = s;
                while (r_end < end && !(r_end[0] == '%' && r_end + 1 < end && r_end[1] == '%')) {
                        const char *nl = memchr(r_end, '\n', (size_t)(end - r_end));
                        r_end = nl != NULL ? nl + 1 : end;
                }
                struct volume_payload p = {0};
                parse_round(s, r_end, &p);
                struct want w;
                want_of(&p, &w);
                bool wrote = false;
                int r = volume_atomic_write(vol_fd, vol_path, &p, fs_group, &wrote, &err);
                if ((r < 0) != (err != NULL) || (r < 0 && wrote))
                        abort();
                ck_error_release(&err);
                check_contained(vol_fd);
                if ((r == 0) != w.valid) {
                        fprintf(stderr, "fuzz_atomic_writer: write %s, paths %s\n",
                                r == 0 ? "succeeded" : "failed", w.valid ? "valid" : "invalid");
                        abort();
                }
                if (r == 0) {
                        check_content(vol_fd, &w, wrote, fs_group);
                        want_release(&last);
                        last = w;
                        have_last = true;
                } else {
                        if (have_last)
                                check_content(vol_fd, &last, false, -1);
                        want_release(&w);
                }
                volume_payload_release(&p);
                if (r_end >= end)
                        break;
                /* the separator line: "%%g" gives the next write an fsGroup */
                const char *nl = memchr(r_end, '\n', (size_t)(end - r_end));
                fs_group = r_end + 2 < end && r_end[2] == 'g' ? FS_GROUP : -1;
                s = nl != NULL ? nl + 1 : end;
        }
        want_release(&last);
        return 0;
}
