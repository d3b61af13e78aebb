/* SPDX-License-Identifier: Apache-2.0 */
/* Container log rotation (logs/container_log_manager.h): the plan over a
 * directory listing, gzip through a temp file, the rotation in a real temp
 * directory with a reopen callback, one container's processing against a
 * fake runtime, the work queue, the threads, the CRI binding against a fake
 * gRPC runtime, and the four configuration fields (defaults, flags, file,
 * validation, /configz).  Timestamps are in TZ=UTC, set by main. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "config/configz.h"
#include "config/kubeletconfig.h"
#include "cri/cri.h"
#include "fake_grpc_server.h"
#include "logs/container_log_manager.h"
#include "util/log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

/* 2023-11-14T22:13:20Z */
#define NOW ((time_t)1700000000)
#define NOW_TS "20231114-221320"

static char *xfmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xfmt(const char *fmt, ...)
{
        va_list ap;
        char *s = NULL;
        va_start(ap, fmt);
        assert_true(vasprintf(&s, fmt, ap) >= 0);
        va_end(ap);
        return s;
}

/* ---- temp directories and files ---- */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st;
        (void)flag;
        (void)ftw;
        return remove(path);
}

static void rm_rf(const char *path)
{
        nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* A temp podLogsDir with the container directory "ns_web_uid1/main". */
struct logdir {
        char root[64];
        char *dir; /* root/ns_web_uid1/main */
        char *log; /* dir/0.log */
        int dirfd; /* dir */
};

static void logdir_init(struct logdir *d)
{
        snprintf(d->root, sizeof(d->root), "/tmp/test_log_rotation.XXXXXX");
        assert_non_null(mkdtemp(d->root));
        char *pod = xfmt("%s/ns_web_uid1", d->root);
        assert_int_equal(mkdir(pod, 0755), 0);
        free(pod);
        d->dir = xfmt("%s/ns_web_uid1/main", d->root);
        assert_int_equal(mkdir(d->dir, 0755), 0);
        d->log = xfmt("%s/0.log", d->dir);
        d->dirfd = open(d->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(d->dirfd >= 0);
}

static void logdir_release(struct logdir *d)
{
        close(d->dirfd);
        rm_rf(d->root);
        free(d->dir);
        free(d->log);
}

static void write_at(const char *dir, const char *name, const char *data, size_t len)
{
        char *path = xfmt("%s/%s", dir, name);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, data, len), (ssize_t)len);
        close(fd);
        free(path);
}

static void put_file(const char *dir, const char *name, const char *content)
{
        write_at(dir, name, content, strlen(content));
}

/* A file's content (new string), or NULL when it does not exist. */
static char *read_at(const char *dir, const char *name, size_t *len)
{
        char *path = xfmt("%s/%s", dir, name);
        FILE *f = fopen(path, "rbe");
        free(path);
        if (f == NULL)
                return NULL;
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        char *buf = malloc((size_t)n + 1);
        assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
        buf[n] = '\0';
        fclose(f);
        if (len)
                *len = (size_t)n;
        return buf;
}

static int cmp_names(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The directory's entries, sorted, joined by ',' (new string). */
static char *listing(const char *dir)
{
        DIR *d = opendir(dir);
        assert_non_null(d);
        char *names[64];
        size_t n = 0;
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                assert_true(n < 64);
                names[n++] = strdup(de->d_name);
        }
        closedir(d);
        qsort(names, n, sizeof(char *), cmp_names);
        size_t len = 1;
        for (size_t i = 0; i < n; i++)
                len += strlen(names[i]) + 1;
        char *out = calloc(1, len);
        for (size_t i = 0; i < n; i++) {
                if (i)
                        strcat(out, ",");
                strcat(out, names[i]);
                free(names[i]);
        }
        return out;
}

static void assert_listing(const char *dir, const char *want)
{
        char *got = listing(dir);
        assert_string_equal(got, want);
        free(got);
}

/* gunzips a whole file with zlib (new buffer, *len its size); fails the
 * test on a stream that is not one whole valid gzip member. */
static char *gunzip_at(const char *dir, const char *name, size_t *len)
{
        size_t zlen = 0;
        char *z = read_at(dir, name, &zlen);
        assert_non_null(z);
        assert_true(zlen >= 18);
        assert_int_equal((unsigned char)z[0], 0x1f);
        assert_int_equal((unsigned char)z[1], 0x8b);
        z_stream zs;
        memset(&zs, 0, sizeof(zs));
        assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
        size_t cap = 1 << 16, n = 0;
        char *out = malloc(cap);
        zs.next_in = (unsigned char *)z;
        zs.avail_in = (uInt)zlen;
        int r;
        do {
                if (n == cap) {
                        cap *= 2;
                        out = realloc(out, cap);
                }
                zs.next_out = (unsigned char *)out + n;
                zs.avail_out = (uInt)(cap - n);
                r = inflate(&zs, Z_NO_FLUSH);
                assert_true(r == Z_OK || r == Z_STREAM_END);
                n = cap - zs.avail_out;
        } while (r != Z_STREAM_END);
        assert_int_equal(zs.avail_in, 0); /* nothing after the member */
        inflateEnd(&zs);
        free(z);
        *len = n;
        return out;
}

/* ---- the plan ---- */

static char *joined(char *const *v)
{
        size_t len = 1;
        for (size_t i = 0; v[i]; i++)
                len += strlen(v[i]) + 1;
        char *out = calloc(1, len);
        for (size_t i = 0; v[i]; i++) {
                if (i)
                        strcat(out, ",");
                strcat(out, v[i]);
        }
        return out;
}

static void assert_plan(const char *base, char **names, int max_files, const char *unused,
                        const char *excess, const char *compress)
{
        size_t n = 0;
        while (names[n])
                n++;
        struct clm_plan p;
        clm_plan_make(base, names, n, max_files, NOW_TS, &p);
        char *u = joined(p.unused), *e = joined(p.excess), *c = joined(p.compress);
        assert_string_equal(u, unused);
        assert_string_equal(e, excess);
        assert_string_equal(c, compress);
        char *want_rotated = xfmt("%s.%s", base, NOW_TS);
        assert_string_equal(p.rotated, want_rotated);
        free(want_rotated);
        free(u);
        free(e);
        free(c);
        clm_plan_release(&p);
}

#define NAMES(...) ((char *[]){__VA_ARGS__, NULL})

static void test_plan_nothing_rotated_yet(void **state)
{
        (void)state;
        assert_plan("0.log", (char *[]){NULL}, 5, "", "", "");
        /* the log itself and other containers' logs are not looked at */
        assert_plan("0.log", NAMES("0.log", "1.log", "1.log.20231114-221300", "0.logx", "00.log.1"),
                    5, "", "", "");
}

/* upstream TestCleanupUnusedLog: a temp file, and a log compressed already
 * (its .gz exists) whose original is still there, are removed first. */
static void test_plan_unused_logs_removed_first(void **state)
{
        (void)state;
        assert_plan("0.log",
                    NAMES("0.log.20231114-221000", "0.log", "0.log.20231114-221000.tmp",
                          "0.log.20231114-220000.gz", "0.log.20231114-221000.gz",
                          "0.log.20231114-221100", "0.log.20231114-221100.gz.tmp"),
                    5,
                    "0.log.20231114-221000,0.log.20231114-221000.tmp,0.log.20231114-221100.gz.tmp",
                    "", "0.log.20231114-221100");
}

/* upstream TestRemoveExcessLog: at most max_files - 2 rotated files stay,
 * the oldest (by name) removed first; what stays uncompressed is compressed. */
static void test_plan_excess_logs_oldest_first(void **state)
{
        (void)state;
        char **names = NAMES("0.log.3", "0.log.1", "0.log.2", "0.log.4");
        assert_plan("0.log", names, 2, "", "0.log.1,0.log.2,0.log.3,0.log.4", "");
        assert_plan("0.log", names, 3, "", "0.log.1,0.log.2,0.log.3", "0.log.4");
        assert_plan("0.log", names, 6, "", "", "0.log.1,0.log.2,0.log.3,0.log.4");
}

/* The steady state with containerLogMaxFiles 3: one compressed and one
 * plain rotated file; the compressed one goes, the plain one is compressed,
 * the current log becomes the new plain one: 3 files again. */
static void test_plan_steady_state(void **state)
{
        (void)state;
        assert_plan("0.log", NAMES("0.log", "0.log.20231114-221300.gz", "0.log.20231114-221310"), 3,
                    "", "0.log.20231114-221300.gz", "0.log.20231114-221310");
        /* compressed files count as rotated files too */
        assert_plan(
            "0.log",
            NAMES("0.log.20231114-221250.gz", "0.log.20231114-221300.gz", "0.log.20231114-221310"),
            4, "", "0.log.20231114-221250.gz", "0.log.20231114-221310");
}

/* ---- pure helpers ---- */

static void test_timestamp_is_local_time(void **state)
{
        (void)state;
        char buf[CLM_TIMESTAMP_LEN + 1];
        clm_timestamp(NOW, buf);
        assert_string_equal(buf, NOW_TS);
        clm_timestamp(0, buf);
        assert_string_equal(buf, "19700101-000000");
        /* Go's time.Now() is in the local zone; so is the suffix */
        setenv("TZ", "XYZ-2", 1); /* POSIX: two hours east of UTC */
        tzset();
        clm_timestamp(NOW, buf);
        setenv("TZ", "UTC", 1);
        tzset();
        assert_string_equal(buf, "20231115-001320");
}

static void test_parse_max_size(void **state)
{
        (void)state;
        struct {
                const char *in;
                int64_t want;
        } ok[] = {{"10Mi", 10485760}, {"1Mi", 1048576}, {"1k", 1000}, {"100", 100},       {"0", 0},
                  {"-1", -1},         {"1.5", 2},       {"1n", 1},    {"1Gi", 1073741824}};
        for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
                int64_t v = 12345;
                ck_error_t err = NULL;
                assert_int_equal(clm_parse_max_size(ok[i].in, &v, &err), 0);
                assert_int_equal(v, ok[i].want);
        }
        struct {
                const char *in, *msg;
        } bad[] = {
            {"abc", "quantities must match the regular expression "
                    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
            {"", "quantities must match the regular expression "
                 "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
            {"1e30", "invalid max log size"},
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                int64_t v = 0;
                ck_error_t err = NULL;
                assert_int_equal(clm_parse_max_size(bad[i].in, &v, &err), -1);
                assert_string_equal(ck_error_msg(err), bad[i].msg);
                ck_error_release(&err);
        }
}

static void assert_split(const char *root, const char *path, const char *dir, const char *base)
{
        char *d = NULL, *b = NULL;
        ck_error_t err = NULL;
        int r = clm_split_log_path(root, path, &d, &b, &err);
        if (dir == NULL) {
                assert_int_equal(r, -1);
                char *want = xfmt("log path \"%s\" is not a file in a directory under podLogsDir "
                                  "\"%s\"",
                                  path, root);
                assert_string_equal(ck_error_msg(err), want);
                free(want);
                ck_error_release(&err);
                return;
        }
        if (r < 0)
                fail_msg("%s: %s", path, ck_error_msg(err));
        assert_string_equal(d, dir);
        assert_string_equal(b, base);
        free(d);
        free(b);
}

static void test_split_log_path_stays_under_pod_logs_dir(void **state)
{
        (void)state;
        const char *r = "/var/log/pods";
        assert_split(r, "/var/log/pods/ns_web_uid/main/0.log", "ns_web_uid/main", "0.log");
        assert_split("/var/log/pods/", "/var/log/pods/ns_web_uid/main/0.log", "ns_web_uid/main",
                     "0.log");
        assert_split("/", "/a/0.log", "a", "0.log");
        assert_split(r, "/var/log/pods/0.log", NULL, NULL); /* no directory of its own */
        assert_split(r, "/var/log/podsx/a/0.log", NULL, NULL);
        assert_split(r, "/var/log/pods/a/../../../etc/0.log", NULL, NULL);
        assert_split(r, "/var/log/pods/a/./0.log", NULL, NULL);
        assert_split(r, "/var/log/pods/a//0.log", NULL, NULL);
        assert_split(r, "/var/log/pods/a/b/", NULL, NULL);
        assert_split(r, "/var/log/pods/a/..", NULL, NULL);
        assert_split(r, "/etc/passwd", NULL, NULL);
        assert_split(r, "var/log/pods/a/0.log", NULL, NULL);
        assert_split(r, "", NULL, NULL);
        assert_split("pods", "pods/a/0.log", NULL, NULL); /* a relative root */
}

/* ---- compression ---- */

/* Deterministic, poorly compressible bytes: a 64-bit LCG. */
static char *noise(size_t len)
{
        char *buf = malloc(len);
        uint64_t x = 42;
        for (size_t i = 0; i < len; i++) {
                x = x * 6364136223846793005ULL + 1442695040888963407ULL;
                buf[i] = (char)(x >> 56);
        }
        return buf;
}

static void test_compress_gzips_through_a_temp_file(void **state)
{
        (void)state;
        struct logdir d;
        logdir_init(&d);
        /* several chunks, half text, half noise */
        size_t len = 300 * 1024 + 17;
        char *data = noise(len);
        for (size_t i = 0; i < len / 2; i++)
                data[i] = (char)('a' + i % 26);
        write_at(d.dir, "0.log.20231114-221300", data, len);
        char *p = xfmt("%s/0.log.20231114-221300", d.dir);
        assert_int_equal(chmod(p, 0640), 0);
        free(p);

        ck_error_t err = NULL;
        assert_int_equal(clm_compress_at(d.dirfd, "0.log.20231114-221300", NULL, &err), 0);
        assert_listing(d.dir, "0.log.20231114-221300.gz");
        size_t n = 0;
        char *out = gunzip_at(d.dir, "0.log.20231114-221300.gz", &n);
        assert_int_equal(n, len);
        assert_memory_equal(out, data, len);
        /* the original's permissions (upstream TestCompressLog) */
        struct stat st;
        assert_int_equal(fstatat(d.dirfd, "0.log.20231114-221300.gz", &st, 0), 0);
        assert_int_equal(st.st_mode & 0777, 0640);
        free(out);

        /* an empty file is a valid empty gzip */
        put_file(d.dir, "empty", "");
        assert_int_equal(clm_compress_at(d.dirfd, "empty", NULL, &err), 0);
        out = gunzip_at(d.dir, "empty.gz", &n);
        assert_int_equal(n, 0);
        free(out);
        free(data);
        logdir_release(&d);
}

static void assert_compress_fails(int dirfd, const char *name, const atomic_bool *stop,
                                  const char *want)
{
        ck_error_t err = NULL;
        assert_int_equal(clm_compress_at(dirfd, name, stop, &err), -1);
        assert_string_equal(ck_error_msg(err), want);
        ck_error_release(&err);
}

/* Whatever fails, no .tmp and no .gz stay, and the original is intact. */
static void test_compress_failures_leave_no_partial_file(void **state)
{
        (void)state;
        struct logdir d;
        logdir_init(&d);
        assert_compress_fails(d.dirfd, "nope", NULL,
                              "failed to open log \"nope\": No such file or directory");
        assert_listing(d.dir, "");

        /* stopped between two chunks */
        char *data = noise(200 * 1024);
        write_at(d.dir, "big", data, 200 * 1024);
        atomic_bool stop;
        atomic_init(&stop, true);
        assert_compress_fails(d.dirfd, "big", &stop,
                              "failed to compress \"big\" to \"big.tmp\": stopped");
        assert_listing(d.dir, "big");

        /* the .gz name taken by a directory: the rename fails */
        char *gzdir = xfmt("%s/big.gz", d.dir);
        assert_int_equal(mkdir(gzdir, 0755), 0);
        assert_compress_fails(d.dirfd, "big", NULL,
                              "failed to rename \"big.tmp\" to \"big.gz\": Is a directory");
        assert_listing(d.dir, "big,big.gz");
        assert_int_equal(rmdir(gzdir), 0);
        free(gzdir);
        size_t n = 0;
        char *back = read_at(d.dir, "big", &n);
        assert_int_equal(n, 200 * 1024);
        assert_memory_equal(back, data, n);
        free(back);

        /* symlinks are not followed: neither the log nor the temp file */
        char *outside = xfmt("%s/outside", d.root);
        int fd = open(outside, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "keep", 4), 4);
        close(fd);
        assert_int_equal(symlinkat(outside, d.dirfd, "link"), 0);
        assert_compress_fails(d.dirfd, "link", NULL,
                              "failed to open log \"link\": Too many levels of symbolic links");
        assert_int_equal(symlinkat(outside, d.dirfd, "big.tmp"), 0);
        assert_compress_fails(
            d.dirfd, "big", NULL,
            "failed to create temporary log \"big.tmp\": Too many levels of symbolic links");
        assert_listing(d.dir, "big,big.tmp,link");
        char *kept = read_at(d.root, "outside", NULL);
        assert_string_equal(kept, "keep");
        free(kept);
        free(outside);
        free(data);
        logdir_release(&d);
}

/* ---- rotation ---- */

struct reopen_rec {
        int calls;
        bool fail;
        bool create; /* create the log again, as the runtime does */
        const char *dir;
        char listing_at_call[512]; /* the directory when the runtime was asked */
};

static int reopen_cb(void *ctx, ck_error_t *err)
{
        struct reopen_rec *r = ctx;
        r->calls++;
        char *l = listing(r->dir);
        snprintf(r->listing_at_call, sizeof(r->listing_at_call), "%s", l);
        free(l);
        if (r->fail)
                return ck_error_make(err, 0, "CRI ReopenContainerLog: rpc error 2: boom");
        if (r->create)
                put_file(r->dir, "0.log", "");
        return 0;
}

static void test_rotate_steady_state(void **state)
{
        (void)state;
        struct logdir d;
        logdir_init(&d);
        put_file(d.dir, "0.log", "current\n");
        put_file(d.dir, "0.log.20231114-221300.gz", "old gz");
        put_file(d.dir, "0.log.20231114-221310", "newest rotated\n");
        put_file(d.dir, "0.log.20231114-221200.tmp", "half written");
        put_file(d.dir, "1.log", "another restart's log");
        struct reopen_rec r = {.create = true, .dir = d.dir};
        ck_error_t err = NULL;
        assert_int_equal(clm_rotate_at(d.dirfd, "0.log", 3, NOW, reopen_cb, &r, NULL, &err), 0);
        assert_int_equal(r.calls, 1);
        /* when the runtime reopens, the log is renamed away already */
        assert_string_equal(r.listing_at_call, "0.log.20231114-221310.gz,0.log." NOW_TS ",1.log");
        assert_listing(d.dir, "0.log,0.log.20231114-221310.gz,0.log." NOW_TS ",1.log");
        char *moved = read_at(d.dir, "0.log." NOW_TS, NULL);
        assert_string_equal(moved, "current\n");
        free(moved);
        size_t n = 0;
        char *gz = gunzip_at(d.dir, "0.log.20231114-221310.gz", &n);
        assert_int_equal(n, strlen("newest rotated\n"));
        assert_memory_equal(gz, "newest rotated\n", n);
        free(gz);
        logdir_release(&d);
}

/* upstream TestRotateLatestLog: a failed reopen renames the log back. */
static void test_rotate_failed_reopen_renames_back(void **state)
{
        (void)state;
        struct logdir d;
        logdir_init(&d);
        put_file(d.dir, "0.log", "current\n");
        put_file(d.dir, "0.log.20231114-221310", "newest rotated\n");
        struct reopen_rec r = {.fail = true, .dir = d.dir};
        ck_error_t err = NULL;
        assert_int_equal(clm_rotate_at(d.dirfd, "0.log", 5, NOW, reopen_cb, &r, NULL, &err), -1);
        assert_string_equal(ck_error_msg(err),
                            "failed to rotate log \"0.log\": CRI ReopenContainerLog: rpc error 2: "
                            "boom");
        ck_error_release(&err);
        assert_int_equal(r.calls, 1);
        assert_string_equal(r.listing_at_call, "0.log.20231114-221310.gz,0.log." NOW_TS);
        /* as upstream, the compression done before the rotation stays */
        assert_listing(d.dir, "0.log,0.log.20231114-221310.gz");
        char *back = read_at(d.dir, "0.log", NULL);
        assert_string_equal(back, "current\n");
        free(back);
        logdir_release(&d);
}

/* A failing step stops the rotation before the log is renamed. */
static void test_rotate_stops_at_a_failed_compression(void **state)
{
        (void)state;
        struct logdir d;
        logdir_init(&d);
        put_file(d.dir, "0.log", "current\n");
        put_file(d.dir, "0.log.20231114-221310", "newest rotated\n");
        char *gzdir = xfmt("%s/0.log.20231114-221310.gz", d.dir);
        assert_int_equal(mkdir(gzdir, 0755), 0); /* not a regular file: not a log */
        free(gzdir);
        struct reopen_rec r = {.create = true, .dir = d.dir};
        ck_error_t err = NULL;
        assert_int_equal(clm_rotate_at(d.dirfd, "0.log", 5, NOW, reopen_cb, &r, NULL, &err), -1);
        assert_string_equal(ck_error_msg(err),
                            "failed to compress log \"0.log.20231114-221310\": failed to rename "
                            "\"0.log.20231114-221310.tmp\" to \"0.log.20231114-221310.gz\": Is a "
                            "directory");
        ck_error_release(&err);
        assert_int_equal(r.calls, 0);
        assert_listing(d.dir, "0.log,0.log.20231114-221310,0.log.20231114-221310.gz");
        logdir_release(&d);
}

/* ---- one container, against a fake runtime ---- */

struct fake_container {
        const char *id;
        bool running;
        char *log_path; /* NULL: ContainerStatus fails */
};

struct fake_runtime {
        pthread_mutex_t lock;
        struct fake_container c[4];
        size_t n;
        int connects, disconnects, lists;
        int reopens;          /* successful */
        char reopened[4][64]; /* the first IDs reopened */
        bool reopen_fails;
        bool reopen_creates;
};

static void *fake_connect(void *ctx)
{
        struct fake_runtime *f = ctx;
        pthread_mutex_lock(&f->lock);
        f->connects++;
        pthread_mutex_unlock(&f->lock);
        return f;
}

static void fake_disconnect(void *conn)
{
        struct fake_runtime *f = conn;
        pthread_mutex_lock(&f->lock);
        f->disconnects++;
        pthread_mutex_unlock(&f->lock);
}

static int fake_list(void *conn, char ***ids, ck_error_t *err)
{
        (void)err;
        struct fake_runtime *f = conn;
        pthread_mutex_lock(&f->lock);
        f->lists++;
        char **v = calloc(f->n + 1, sizeof(char *));
        size_t k = 0;
        for (size_t i = 0; i < f->n; i++)
                if (f->c[i].running)
                        v[k++] = strdup(f->c[i].id);
        pthread_mutex_unlock(&f->lock);
        *ids = v;
        return 0;
}

static struct fake_container *fake_find(struct fake_runtime *f, const char *id)
{
        for (size_t i = 0; i < f->n; i++)
                if (strcmp(f->c[i].id, id) == 0)
                        return &f->c[i];
        return NULL;
}

static int fake_log_path(void *conn, const char *id, char **path, ck_error_t *err)
{
        struct fake_runtime *f = conn;
        struct fake_container *c = fake_find(f, id);
        if (c == NULL || c->log_path == NULL)
                return ck_error_make(err, 0,
                                     "failed to get container status \"%s\": CRI "
                                     "ContainerStatus: rpc error 5: not found",
                                     id);
        *path = strdup(c->log_path);
        return 0;
}

static int fake_reopen(void *conn, const char *id, ck_error_t *err)
{
        struct fake_runtime *f = conn;
        if (f->reopen_fails)
                return ck_error_make(err, 0, "CRI ReopenContainerLog: rpc error 2: boom");
        struct fake_container *c = fake_find(f, id);
        assert_non_null(c);
        if (f->reopen_creates) {
                int fd = open(c->log_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
                assert_true(fd >= 0);
                close(fd);
        }
        pthread_mutex_lock(&f->lock);
        if (f->reopens < 4)
                snprintf(f->reopened[f->reopens], sizeof(f->reopened[0]), "%s", id);
        f->reopens++;
        pthread_mutex_unlock(&f->lock);
        return 0;
}

static struct clm_runtime fake_runtime_of(struct fake_runtime *f)
{
        return (struct clm_runtime){
            .connect = fake_connect,
            .disconnect = fake_disconnect,
            .list_running = fake_list,
            .log_path = fake_log_path,
            .reopen = fake_reopen,
            .ctx = f,
        };
}

static void fake_init(struct fake_runtime *f)
{
        memset(f, 0, sizeof(*f));
        pthread_mutex_init(&f->lock, NULL);
        f->reopen_creates = true;
}

static void fake_add(struct fake_runtime *f, const char *id, bool running, char *log_path)
{
        f->c[f->n++] = (struct fake_container){id, running, log_path};
}

static void fake_release(struct fake_runtime *f)
{
        for (size_t i = 0; i < f->n; i++)
                free(f->c[i].log_path);
        pthread_mutex_destroy(&f->lock);
}

static int process(struct logdir *d, struct fake_runtime *f, const char *id, int64_t max_size,
                   enum clm_outcome *outcome, const char **what, char **msg)
{
        struct clm_policy policy = {.max_size = max_size, .max_files = 3};
        struct clm_runtime rt = fake_runtime_of(f);
        ck_error_t err = NULL;
        *what = NULL;
        int r = clm_process_container(d->root, &policy, &rt, f, id, NOW, NULL, outcome, what, &err);
        *msg = r < 0 ? strdup(ck_error_msg(err)) : NULL;
        ck_error_release(&err);
        return r;
}

/* upstream TestRotateLogs: below the size nothing happens; at the size the
 * log is rotated (size >= max), excess and compression as the plan says. */
static void test_process_rotates_at_max_size(void **state)
{
        (void)state;
        struct logdir d;
        logdir_init(&d);
        struct fake_runtime f;
        fake_init(&f);
        fake_add(&f, "c1", true, strdup(d.log));
        enum clm_outcome out;
        const char *what;
        char *msg;

        put_file(d.dir, "0.log", "123456789"); /* 9 bytes */
        put_file(d.dir, "0.log.00000000-000000.gz", "x");
        put_file(d.dir, "0.log.00000000-000001", "the length doesn't matter");
        assert_int_equal(process(&d, &f, "c1", 10, &out, &what, &msg), 0);
        assert_int_equal(out, CLM_SKIPPED);
        assert_int_equal(f.reopens, 0);
        assert_listing(d.dir, "0.log,0.log.00000000-000000.gz,0.log.00000000-000001");

        put_file(d.dir, "0.log", "1234567890"); /* 10 bytes: rotated */
        assert_int_equal(process(&d, &f, "c1", 10, &out, &what, &msg), 0);
        assert_int_equal(out, CLM_ROTATED);
        assert_int_equal(f.reopens, 1);
        assert_string_equal(f.reopened[0], "c1");
        assert_listing(d.dir, "0.log,0.log.00000000-000001.gz,0.log." NOW_TS);

        /* max size 0: every log is rotated, even an empty one (upstream) */
        unlinkat(d.dirfd, "0.log." NOW_TS, 0);
        assert_int_equal(process(&d, &f, "c1", 0, &out, &what, &msg), 0);
        assert_int_equal(out, CLM_ROTATED);
        assert_int_equal(f.reopens, 2);
        fake_release(&f);
        logdir_release(&d);
}

static void test_process_missing_log_is_reopened(void **state)
{
        (void)state;
        struct logdir d;
        logdir_init(&d);
        struct fake_runtime f;
        fake_init(&f);
        fake_add(&f, "c1", true, strdup(d.log));
        enum clm_outcome out;
        const char *what;
        char *msg;
        assert_int_equal(process(&d, &f, "c1", 10, &out, &what, &msg), 0);
        assert_int_equal(out, CLM_SKIPPED);
        assert_int_equal(f.reopens, 1);
        assert_listing(d.dir, "0.log");

        /* a reopen that creates nothing */
        unlinkat(d.dirfd, "0.log", 0);
        f.reopen_creates = false;
        assert_int_equal(process(&d, &f, "c1", 10, &out, &what, &msg), -1);
        assert_string_equal(what, "Failed to stat container log after reopen");
        char *want = xfmt("stat `%s`: No such file or directory", d.log);
        assert_string_equal(msg, want);
        free(want);
        free(msg);

        f.reopen_fails = true;
        assert_int_equal(process(&d, &f, "c1", 10, &out, &what, &msg), -1);
        assert_string_equal(what, "Container log doesn't exist, reopen container log failed");
        assert_string_equal(msg,
                            "failed to reopen container log \"c1\": CRI ReopenContainerLog: rpc "
                            "error 2: boom");
        free(msg);
        fake_release(&f);
        logdir_release(&d);
}

static void test_process_failed_reopen_keeps_the_log(void **state)
{
        (void)state;
        struct logdir d;
        logdir_init(&d);
        struct fake_runtime f;
        fake_init(&f);
        fake_add(&f, "c1", true, strdup(d.log));
        f.reopen_fails = true;
        put_file(d.dir, "0.log", "1234567890");
        enum clm_outcome out;
        const char *what;
        char *msg;
        assert_int_equal(process(&d, &f, "c1", 10, &out, &what, &msg), -1);
        assert_string_equal(what, "Failed to rotate log for container");
        char *want = xfmt("path `%s` (size 10, max 10): failed to rotate log \"0.log\": failed to "
                          "reopen container log \"c1\": CRI ReopenContainerLog: rpc error 2: boom",
                          d.log);
        assert_string_equal(msg, want);
        free(want);
        free(msg);
        assert_listing(d.dir, "0.log");
        fake_release(&f);
        logdir_release(&d);
}

/* Paths outside podLogsDir, a symlinked directory: refused; a symlinked log
 * skipped; nothing touched. */
static void test_process_refuses_paths_it_does_not_own(void **state)
{
        (void)state;
        struct logdir d;
        logdir_init(&d);
        struct fake_runtime f;
        fake_init(&f);
        char *elsewhere = xfmt("%s/../elsewhere/0.log", d.root);
        fake_add(&f, "outside", true, elsewhere);
        char *linked_dir = xfmt("%s/ns_web_uid1/linked", d.root);
        assert_int_equal(symlink(d.dir, linked_dir), 0);
        fake_add(&f, "viadirlink", true, xfmt("%s/0.log", linked_dir));
        fake_add(&f, "loglink", true, xfmt("%s/link.log", d.dir));
        fake_add(&f, "gone", true, NULL);
        put_file(d.dir, "0.log", "1234567890");
        assert_int_equal(symlinkat("0.log", d.dirfd, "link.log"), 0);
        enum clm_outcome out;
        const char *what;
        char *msg;

        assert_int_equal(process(&d, &f, "outside", 1, &out, &what, &msg), -1);
        assert_string_equal(what, "Refusing to rotate a container log outside podLogsDir");
        char *want = xfmt("log path \"%s\" is not a file in a directory under podLogsDir \"%s\"",
                          elsewhere, d.root);
        assert_string_equal(msg, want);
        free(want);
        free(msg);

        assert_int_equal(process(&d, &f, "viadirlink", 1, &out, &what, &msg), -1);
        assert_string_equal(what, "Failed to stat container log");
        want = xfmt("log directory of `%s/0.log`: open `ns_web_uid1/linked`: Too many levels of "
                    "symbolic links",
                    linked_dir);
        assert_string_equal(msg, want);
        free(want);
        free(msg);

        /* a link: the runtime's own file (a dockershim's), left alone */
        assert_int_equal(process(&d, &f, "loglink", 1, &out, &what, &msg), 0);
        assert_int_equal(out, CLM_SKIPPED);
        assert_null(msg);

        assert_int_equal(process(&d, &f, "gone", 1, &out, &what, &msg), -1);
        assert_string_equal(what, "Failed to get container status");
        assert_string_equal(msg, "failed to get container status \"gone\": CRI ContainerStatus: "
                                 "rpc error 5: not found");
        free(msg);

        assert_int_equal(f.reopens, 0);
        assert_listing(d.dir, "0.log,link.log");
        free(linked_dir);
        fake_release(&f);
        logdir_release(&d);
}

/* upstream Clean: the log and "<log>*", regular files only. */
static void test_clean_removes_the_log_and_its_rotated_files(void **state)
{
        (void)state;
        struct logdir d;
        logdir_init(&d);
        put_file(d.dir, "0.log", "current");
        put_file(d.dir, "0.log.20231114-221300.gz", "gz");
        put_file(d.dir, "0.log.20231114-221310", "rotated");
        put_file(d.dir, "0.log.20231114-221310.gz.tmp", "half");
        put_file(d.dir, "1.log", "next restart");
        put_file(d.dir, "1.log.20231114-221320", "next restart, rotated");
        assert_int_equal(symlinkat("1.log", d.dirfd, "0.log.link"), 0);
        char *sub = xfmt("%s/0.log.d", d.dir);
        assert_int_equal(mkdir(sub, 0755), 0);
        free(sub);
        ck_error_t err = NULL;
        assert_int_equal(clm_clean(d.root, d.log, &err), 0);
        assert_listing(d.dir, "0.log.d,0.log.link,1.log,1.log.20231114-221320");
        /* again: nothing left, fine; a directory already gone too */
        assert_int_equal(clm_clean(d.root, d.log, &err), 0);
        char *gone = xfmt("%s/ns_gone_uid2/main/0.log", d.root);
        assert_int_equal(clm_clean(d.root, gone, &err), 0);
        free(gone);
        assert_int_equal(clm_clean(d.root, "/etc/passwd", &err), -1);
        ck_error_release(&err);
        logdir_release(&d);
}

/* ---- the queue ---- */

static void assert_get(struct clm_queue *q, const char *want)
{
        char *got = clm_queue_get(q);
        if (want == NULL) {
                assert_null(got);
                return;
        }
        assert_non_null(got);
        assert_string_equal(got, want);
        free(got);
}

static void test_queue_as_upstream_workqueue(void **state)
{
        (void)state;
        struct clm_queue q = {0};
        assert_get(&q, NULL);
        /* FIFO without duplicates */
        clm_queue_add(&q, "a");
        clm_queue_add(&q, "b");
        clm_queue_add(&q, "a");
        assert_get(&q, "a");
        assert_get(&q, "b");
        assert_get(&q, NULL);
        /* added while processing: queued again when done, once */
        clm_queue_add(&q, "a");
        clm_queue_add(&q, "a");
        assert_get(&q, NULL);
        clm_queue_done(&q, "a");
        assert_get(&q, "a");
        /* done without a new add: not queued again */
        clm_queue_done(&q, "a");
        clm_queue_done(&q, "b");
        assert_get(&q, NULL);
        /* the state is released with items in every set */
        clm_queue_add(&q, "x");
        clm_queue_add(&q, "y");
        assert_get(&q, "x");
        clm_queue_add(&q, "x");
        clm_queue_release(&q);
}

/* ---- the threads ---- */

static bool fake_reopens_at_least(struct fake_runtime *f, int n)
{
        pthread_mutex_lock(&f->lock);
        bool ok = f->reopens >= n && f->lists >= 2;
        pthread_mutex_unlock(&f->lock);
        return ok;
}

/* The manager lists, queues the running containers and rotates the big
 * log; a stopped container's log is left however big. */
static void test_manager_rotates_running_containers(void **state)
{
        (void)state;
        struct logdir d;
        logdir_init(&d);
        struct fake_runtime f;
        fake_init(&f);
        fake_add(&f, "big", true, strdup(d.log));
        char *exited_log = xfmt("%s/1.log", d.dir);
        fake_add(&f, "exited", false, exited_log);
        put_file(d.dir, "0.log", "more than ten bytes\n");
        put_file(d.dir, "1.log", "more than ten bytes\n");
        struct clm_options o = {
            .pod_logs_dir = d.root,
            .max_size = "10",
            .max_files = 3,
            .max_workers = 2,
            .monitor_interval_ms = 20,
            .runtime = fake_runtime_of(&f),
        };
        struct clm *m = NULL;
        ck_error_t err = NULL;
        assert_int_equal(clm_start(&o, &m, &err), 0);
        assert_non_null(m);
        /* no timing assumption: wait for the outcome (10 s at most) */
        for (int i = 0; i < 1000 && !fake_reopens_at_least(&f, 1); i++)
                usleep(10 * 1000);
        clm_stop(m);
        assert_true(fake_reopens_at_least(&f, 1));
        assert_int_equal(f.reopens, 1); /* the new log is small */
        assert_string_equal(f.reopened[0], "big");
        /* the monitor and both workers connected, and disconnected */
        assert_int_equal(f.connects, 3);
        assert_int_equal(f.disconnects, 3);
        char *l = listing(d.dir);
        char *ts = l + strlen("0.log,0.log.");
        assert_true(strncmp(l, "0.log,0.log.", strlen("0.log,0.log.")) == 0);
        assert_int_equal(strlen(ts), CLM_TIMESTAMP_LEN + strlen(",1.log"));
        assert_string_equal(ts + CLM_TIMESTAMP_LEN, ",1.log");
        free(l);
        fake_release(&f);
        logdir_release(&d);
}

static void test_manager_start_checks_and_disabled(void **state)
{
        (void)state;
        struct fake_runtime f;
        fake_init(&f);
        struct clm_options o = {
            .pod_logs_dir = "/var/log/pods",
            .max_size = "10Mi",
            .max_files = 1,
            .max_workers = 1,
            .monitor_interval_ms = 10000,
            .runtime = fake_runtime_of(&f),
        };
        struct clm *m = (struct clm *)&f;
        ck_error_t err = NULL;
        assert_int_equal(clm_start(&o, &m, &err), -1);
        assert_null(m);
        assert_string_equal(ck_error_msg(err), "invalid MaxFiles 1, must be > 1");
        ck_error_release(&err);
        o.max_files = 2;
        o.max_size = "ten";
        assert_int_equal(clm_start(&o, &m, &err), -1);
        assert_string_equal(ck_error_msg(err),
                            "failed to parse container log max size \"ten\": quantities must "
                            "match the regular expression "
                            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
        ck_error_release(&err);
        /* a negative size disables rotation: nothing runs */
        o.max_size = "-1";
        assert_int_equal(clm_start(&o, &m, &err), 0);
        assert_null(m);
        assert_int_equal(f.connects, 0);
        clm_stop(NULL);
        fake_release(&f);
}

/* ---- the CRI binding, against a fake gRPC runtime ---- */

struct cri_seen {
        char reopened[64];
        char status_of[64];
        bool nil_status;
};

static void pack_reply(struct fake_reply *reply, const ProtobufCMessage *msg)
{
        reply->kind = FAKE_REPLY_MESSAGE;
        reply->body_len = protobuf_c_message_get_packed_size(msg);
        reply->body = malloc(reply->body_len + 1);
        protobuf_c_message_pack(msg, reply->body);
}

#define METHOD(path, name) (strcmp((path), "/runtime.v1.RuntimeService/" name) == 0)

static void cri_handler(struct fake_server *s, const struct fake_request *req,
                        struct fake_reply *reply)
{
        struct cri_seen *seen = s->data;
        if (METHOD(req->path, "ListContainers")) {
                Runtime__V1__Container c[3];
                Runtime__V1__Container *cs[3] = {&c[0], &c[1], &c[2]};
                const char *ids[3] = {"created1", "running1", "exited1"};
                Runtime__V1__ContainerState st[3] = {
                    RUNTIME__V1__CONTAINER_STATE__CONTAINER_CREATED,
                    RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING,
                    RUNTIME__V1__CONTAINER_STATE__CONTAINER_EXITED};
                for (int i = 0; i < 3; i++) {
                        runtime__v1__container__init(&c[i]);
                        c[i].id = (char *)ids[i];
                        c[i].state = st[i];
                }
                Runtime__V1__ListContainersResponse out =
                    RUNTIME__V1__LIST_CONTAINERS_RESPONSE__INIT;
                out.n_containers = 3;
                out.containers = cs;
                pack_reply(reply, &out.base);
        } else if (METHOD(req->path, "ContainerStatus")) {
                Runtime__V1__ContainerStatusRequest *in =
                    runtime__v1__container_status_request__unpack(NULL, req->msg_len, req->msg);
                snprintf(seen->status_of, sizeof(seen->status_of), "%s", in->container_id);
                runtime__v1__container_status_request__free_unpacked(in, NULL);
                Runtime__V1__ContainerMetadata md = RUNTIME__V1__CONTAINER_METADATA__INIT;
                md.name = "main";
                Runtime__V1__ImageSpec image = RUNTIME__V1__IMAGE_SPEC__INIT;
                image.image = "busybox";
                Runtime__V1__ContainerStatus st = RUNTIME__V1__CONTAINER_STATUS__INIT;
                st.id = "running1";
                st.metadata = &md;
                st.created_at = 1;
                st.image = &image;
                st.image_ref = "sha256:1";
                st.log_path = "/var/log/pods/ns_web_uid/main/0.log";
                Runtime__V1__ContainerStatusResponse out =
                    RUNTIME__V1__CONTAINER_STATUS_RESPONSE__INIT;
                out.status = seen->nil_status ? NULL : &st;
                pack_reply(reply, &out.base);
        } else if (METHOD(req->path, "ReopenContainerLog")) {
                Runtime__V1__ReopenContainerLogRequest *in =
                    runtime__v1__reopen_container_log_request__unpack(NULL, req->msg_len, req->msg);
                snprintf(seen->reopened, sizeof(seen->reopened), "%s", in->container_id);
                runtime__v1__reopen_container_log_request__free_unpacked(in, NULL);
                Runtime__V1__ReopenContainerLogResponse out =
                    RUNTIME__V1__REOPEN_CONTAINER_LOG_RESPONSE__INIT;
                pack_reply(reply, &out.base);
        } else {
                reply->kind = FAKE_REPLY_TRAILERS_ONLY;
                reply->grpc_status = 12;
                reply->grpc_message = "unknown method";
        }
}

static void test_cri_binding(void **state)
{
        (void)state;
        struct cri_seen seen = {0};
        struct fake_server *s = fake_server_start(cri_handler, &seen);
        char endpoint[160];
        snprintf(endpoint, sizeof(endpoint), "unix://%s", s->path);
        struct clm_cri cri = {endpoint, 2000};
        struct clm_runtime rt = clm_cri_runtime_template;
        rt.ctx = &cri;
        void *conn = rt.connect(rt.ctx);
        assert_non_null(conn);
        ck_error_t err = NULL;

        char **ids = NULL;
        assert_int_equal(rt.list_running(conn, &ids, &err), 0);
        assert_non_null(ids);
        assert_string_equal(ids[0], "running1"); /* only the running one */
        assert_null(ids[1]);
        free(ids[0]);
        free(ids);

        char *path = NULL;
        assert_int_equal(rt.log_path(conn, "running1", &path, &err), 0);
        assert_string_equal(path, "/var/log/pods/ns_web_uid/main/0.log");
        assert_string_equal(seen.status_of, "running1");
        free(path);
        seen.nil_status = true;
        assert_int_equal(rt.log_path(conn, "running1", &path, &err), -1);
        assert_string_equal(ck_error_msg(err), "container status is nil for \"running1\"");
        ck_error_release(&err);

        assert_int_equal(rt.reopen(conn, "running1", &err), 0);
        assert_string_equal(seen.reopened, "running1");
        rt.disconnect(conn);
        fake_server_stop(s);
}

/* ---- configuration ---- */

#define ARGV(...) ((char *[]){"kubelet", __VA_ARGS__, NULL})

static int argv_len(char **argv)
{
        int n = 0;
        while (argv[n])
                n++;
        return n;
}

/* Parses argv over fresh defaults: NULL, or the error (new string). */
static char *parse(struct kubelet_config *cfg, char **argv)
{
        ck_error_t err = NULL;
        enum kubelet_flags_action a = FLAGS_RUN;
        kubelet_config_defaults(cfg);
        if (kubelet_flags_parse(cfg, argv_len(argv), argv, &a, &err) < 0) {
                char *msg = strdup(ck_error_msg(err));
                ck_error_release(&err);
                kubelet_config_release(cfg);
                return msg;
        }
        return NULL;
}

static void parse_ok(struct kubelet_config *cfg, char **argv)
{
        char *msg = parse(cfg, argv);
        if (msg)
                fail_msg("unexpected error: %s", msg);
}

static void assert_parse_error(char **argv, const char *want)
{
        struct kubelet_config cfg;
        char *msg = parse(&cfg, argv);
        if (msg == NULL) {
                kubelet_config_release(&cfg);
                fail_msg("expected error \"%s\"", want);
        }
        assert_string_equal(msg, want);
        free(msg);
}

static char cfgdir[] = "/tmp/test_log_rotation_cfg.XXXXXX";

static char *config_file(const char *name, const char *body)
{
        char *path = xfmt("%s/%s", cfgdir, name);
        FILE *f = fopen(path, "we");
        assert_non_null(f);
        fprintf(f,
                "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
                "authentication: {webhook: {enabled: false}, anonymous: {enabled: true}}\n"
                "authorization: {mode: AlwaysAllow}\n%s",
                body);
        fclose(f);
        return path;
}

static void test_config_defaults_and_flags(void **state)
{
        (void)state;
        struct kubelet_config c;
        parse_ok(&c, ARGV("--hostname-override=n1"));
        assert_string_equal(c.container_log_max_size, "10Mi");
        assert_int_equal(c.container_log_max_files, 5);
        assert_int_equal(c.container_log_max_workers, 1);
        assert_int_equal(c.container_log_monitor_interval_ms, 10000);
        kubelet_config_release(&c);

        parse_ok(&c, ARGV("--hostname-override=n1", "--container-log-max-size=1Mi",
                          "--container-log-max-files", "3"));
        assert_string_equal(c.container_log_max_size, "1Mi");
        assert_int_equal(c.container_log_max_files, 3);
        kubelet_config_release(&c);

        assert_parse_error(ARGV("--container-log-max-files=abc"),
                           "invalid argument \"abc\" for \"--container-log-max-files\" flag: "
                           "strconv.ParseInt: parsing \"abc\": invalid syntax");
        /* not flags upstream */
        assert_parse_error(ARGV("--container-log-max-workers=2"),
                           "unknown flag: --container-log-max-workers");
        assert_parse_error(ARGV("--container-log-monitor-interval=5s"),
                           "unknown flag: --container-log-monitor-interval");
}

static void test_config_file_and_flags_over_it(void **state)
{
        (void)state;
        char *path = config_file("c.yaml", "containerLogMaxSize: 20Mi\ncontainerLogMaxFiles: 4\n"
                                           "containerLogMaxWorkers: 2\n"
                                           "containerLogMonitorInterval: 5s\n");
        char *flag = xfmt("--config=%s", path);
        struct kubelet_config c;
        parse_ok(&c, ARGV("--hostname-override=n1", flag));
        assert_string_equal(c.container_log_max_size, "20Mi");
        assert_int_equal(c.container_log_max_files, 4);
        assert_int_equal(c.container_log_max_workers, 2);
        assert_int_equal(c.container_log_monitor_interval_ms, 5000);
        kubelet_config_release(&c);
        parse_ok(&c, ARGV("--hostname-override=n1", flag, "--container-log-max-files=7",
                          "--container-log-max-size=3Mi"));
        assert_string_equal(c.container_log_max_size, "3Mi");
        assert_int_equal(c.container_log_max_files, 7);
        assert_int_equal(c.container_log_max_workers, 2);
        kubelet_config_release(&c);
        free(flag);
        free(path);

        /* "" is defaulted (a string field); the others are pointers upstream */
        path = config_file("empty.yaml", "containerLogMaxSize: \"\"\n");
        flag = xfmt("--config=%s", path);
        parse_ok(&c, ARGV("--hostname-override=n1", flag));
        assert_string_equal(c.container_log_max_size, "10Mi");
        kubelet_config_release(&c);
        free(flag);
        free(path);

        path = config_file("zero.yaml", "containerLogMaxFiles: 0\ncontainerLogMaxWorkers: 0\n"
                                        "containerLogMonitorInterval: 0s\n");
        flag = xfmt("--config=%s", path);
        assert_parse_error(ARGV("--hostname-override=n1", flag),
                           "failed to validate kubelet configuration: [invalid configuration: "
                           "containerLogMaxWorkers must be greater than or equal to 1, invalid "
                           "configuration: containerLogMonitorInterval must be a positive time "
                           "duration greater than or equal to 3s, invalid configuration: "
                           "containerLogMaxFiles must be greater than 1]");
        free(flag);
        free(path);

        path = config_file("type.yaml", "containerLogMaxFiles: three\n");
        flag = xfmt("--config=%s", path);
        char *want = xfmt("failed to load kubelet config file: %s: containerLogMaxFiles: expected "
                          "an integer",
                          path);
        assert_parse_error(ARGV("--hostname-override=n1", flag), want);
        free(want);
        free(flag);
        free(path);
}

static void test_config_validation(void **state)
{
        (void)state;
        char *path = config_file("v.yaml", "containerLogMonitorInterval: 2999ms\n");
        char *flag = xfmt("--config=%s", path);
        assert_parse_error(ARGV("--hostname-override=n1", flag),
                           "failed to validate kubelet configuration: invalid configuration: "
                           "containerLogMonitorInterval must be a positive time duration greater "
                           "than or equal to 3s");
        free(flag);
        free(path);
        path = config_file("v3.yaml", "containerLogMonitorInterval: 3s\n");
        flag = xfmt("--config=%s", path);
        struct kubelet_config c;
        parse_ok(&c, ARGV("--hostname-override=n1", flag, "--container-log-max-files=2"));
        assert_int_equal(c.container_log_monitor_interval_ms, 3000);
        assert_int_equal(c.container_log_max_files, 2);
        kubelet_config_release(&c);
        free(flag);
        free(path);

        assert_parse_error(ARGV("--hostname-override=n1", "--container-log-max-files=1"),
                           "failed to validate kubelet configuration: invalid configuration: "
                           "containerLogMaxFiles must be greater than 1");
        assert_parse_error(ARGV("--hostname-override=n1", "--container-log-max-size=10MB"),
                           "failed to initialize container log manager: failed to parse "
                           "container log max size \"10MB\": quantities must match the regular "
                           "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
        /* negative: valid, rotation off */
        parse_ok(&c, ARGV("--hostname-override=n1", "--container-log-max-size=-1"));
        kubelet_config_release(&c);
}

static void test_configz_fields(void **state)
{
        (void)state;
        struct kubelet_config c;
        parse_ok(&c, ARGV("--hostname-override=n1", "--container-log-max-size=1Mi",
                          "--container-log-max-files=3"));
        json_t *doc = configz_json(&c);
        json_t *kc = json_object_get(doc, "kubeletconfig");
        assert_string_equal(json_string_value(json_object_get(kc, "containerLogMaxSize")), "1Mi");
        assert_int_equal(json_integer_value(json_object_get(kc, "containerLogMaxFiles")), 3);
        assert_int_equal(json_integer_value(json_object_get(kc, "containerLogMaxWorkers")), 1);
        assert_string_equal(json_string_value(json_object_get(kc, "containerLogMonitorInterval")),
                            "10s");
        /* v1beta1's order: after failSwapOn */
        char *text = json_dumps(kc, JSON_COMPACT);
        assert_non_null(strstr(text, "\"failSwapOn\":true,\"containerLogMaxSize\":\"1Mi\","
                                     "\"containerLogMaxFiles\":3,\"containerLogMaxWorkers\":1,"
                                     "\"containerLogMonitorInterval\":\"10s\""));
        free(text);
        json_decref(doc);
        kubelet_config_release(&c);
}

int main(void)
{
        setenv("TZ", "UTC", 1);
        tzset();
        umask(022);
        assert_non_null(mkdtemp(cfgdir));
        /* the deprecation warnings of the flags are expected */
        int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
        log_set_fd(devnull);
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_plan_nothing_rotated_yet),
            cmocka_unit_test(test_plan_unused_logs_removed_first),
            cmocka_unit_test(test_plan_excess_logs_oldest_first),
            cmocka_unit_test(test_plan_steady_state),
            cmocka_unit_test(test_timestamp_is_local_time),
            cmocka_unit_test(test_parse_max_size),
            cmocka_unit_test(test_split_log_path_stays_under_pod_logs_dir),
            cmocka_unit_test(test_compress_gzips_through_a_temp_file),
            cmocka_unit_test(test_compress_failures_leave_no_partial_file),
            cmocka_unit_test(test_rotate_steady_state),
            cmocka_unit_test(test_rotate_failed_reopen_renames_back),
            cmocka_unit_test(test_rotate_stops_at_a_failed_compression),
            cmocka_unit_test(test_process_rotates_at_max_size),
            cmocka_unit_test(test_process_missing_log_is_reopened),
            cmocka_unit_test(test_process_failed_reopen_keeps_the_log),
            cmocka_unit_test(test_process_refuses_paths_it_does_not_own),
            cmocka_unit_test(test_clean_removes_the_log_and_its_rotated_files),
            cmocka_unit_test(test_queue_as_upstream_workqueue),
            cmocka_unit_test(test_manager_rotates_running_containers),
            cmocka_unit_test(test_manager_start_checks_and_disabled),
            cmocka_unit_test(test_cri_binding),
            cmocka_unit_test(test_config_defaults_and_flags),
            cmocka_unit_test(test_config_file_and_flags_over_it),
            cmocka_unit_test(test_config_validation),
            cmocka_unit_test(test_configz_fields),
        };
        int failed = cmocka_run_group_tests(tests, NULL, NULL);
        rm_rf(cfgdir);
        close(devnull);
        return failed;
}
