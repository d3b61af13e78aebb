/* SPDX-License-Identifier: Apache-2.0 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static char *make_tmpdir(void)
{
        char *dir = xstrdup("/tmp/ck-fsutil-XXXXXX");
        assert_non_null(mkdtemp(dir));
        return dir;
}

static void remove_tmpdir(char *dir)
{
        ck_error_t err = NULL;
        assert_int_equal(fs_remove_all(dir, &err), 0);
        free(dir);
}

static void write_plain(const char *path, const char *content)
{
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(content, f);
        fclose(f);
}

static size_t count_entries(const char *dir)
{
        DIR *d = opendir(dir);
        assert_non_null(d);
        size_t n = 0;
        struct dirent *de;
        while ((de = readdir(d)) != NULL)
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                        n++;
        closedir(d);
        return n;
}

static void test_write_atomic_content_and_mode(void **state)
{
        (void)state;
        char *dir = make_tmpdir();
        cleanup_free char *path = xasprintf("%s/hosts", dir);
        ck_error_t err = NULL;
        mode_t old = umask(022);

        assert_int_equal(fs_write_file_atomic(path, "first\n", 6, 0664, &err), 0);
        assert_int_equal(fs_write_file_atomic(path, "second", 6, 0640, &err), 0);
        umask(old);

        char *buf = NULL;
        size_t len = 0;
        assert_int_equal(fs_read_file(path, 1024, &buf, &len, &err), 0);
        assert_string_equal(buf, "second");
        assert_int_equal(len, 6);
        free(buf);

        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0640);
        /* the temporary file was renamed, nothing else is left */
        assert_int_equal(count_entries(dir), 1);
        remove_tmpdir(dir);
}

static void test_write_atomic_missing_dir_fails_cleanly(void **state)
{
        (void)state;
        char *dir = make_tmpdir();
        cleanup_free char *path = xasprintf("%s/nodir/file", dir);
        ck_error_t err = NULL;
        assert_true(fs_write_file_atomic(path, "x", 1, 0644, &err) < 0);
        assert_non_null(strstr(ck_error_msg(err), path));
        ck_error_release(&err);
        assert_int_equal(count_entries(dir), 0);
        remove_tmpdir(dir);
}

static void test_read_file_limit(void **state)
{
        (void)state;
        char *dir = make_tmpdir();
        cleanup_free char *path = xasprintf("%s/big", dir);
        write_plain(path, "0123456789");
        ck_error_t err = NULL;
        char *buf = NULL;
        assert_true(fs_read_file(path, 5, &buf, NULL, &err) < 0);
        assert_null(buf);
        assert_non_null(strstr(ck_error_msg(err), "larger than 5 bytes"));
        ck_error_release(&err);
        assert_int_equal(fs_read_file(path, 10, &buf, NULL, &err), 0);
        assert_string_equal(buf, "0123456789");
        free(buf);
        remove_tmpdir(dir);
}

static void test_mkdir_p(void **state)
{
        (void)state;
        char *dir = make_tmpdir();
        cleanup_free char *deep = xasprintf("%s/a/b//c/", dir);
        ck_error_t err = NULL;
        assert_int_equal(fs_mkdir_p(deep, 0750, &err), 0);
        assert_int_equal(fs_mkdir_p(deep, 0750, &err), 0); /* idempotent */
        cleanup_free char *c = xasprintf("%s/a/b/c", dir);
        struct stat st;
        assert_int_equal(stat(c, &st), 0);
        assert_true(S_ISDIR(st.st_mode));

        cleanup_free char *file = xasprintf("%s/f", dir);
        write_plain(file, "");
        cleanup_free char *under_file = xasprintf("%s/f/x", dir);
        assert_true(fs_mkdir_p(under_file, 0750, &err) < 0);
        assert_non_null(strstr(ck_error_msg(err), file));
        ck_error_release(&err);
        remove_tmpdir(dir);
}

typedef int (*open_fn)(int, const char *, int, mode_t, ck_error_t *);

/* Layout: <dir>/in/sub/file, <dir>/in/link -> sub, <dir>/in/out -> <dir>/secret,
 * opened beneath <dir>/in. */
static void check_open_beneath(open_fn fn)
{
        char *dir = make_tmpdir();
        cleanup_free char *in = xasprintf("%s/in", dir);
        cleanup_free char *sub = xasprintf("%s/in/sub", dir);
        cleanup_free char *file = xasprintf("%s/in/sub/file", dir);
        cleanup_free char *secret = xasprintf("%s/secret", dir);
        cleanup_free char *link = xasprintf("%s/in/link", dir);
        cleanup_free char *out = xasprintf("%s/in/out", dir);
        assert_int_equal(mkdir(in, 0755), 0);
        assert_int_equal(mkdir(sub, 0755), 0);
        write_plain(file, "inside");
        write_plain(secret, "outside");
        assert_int_equal(symlink("sub", link), 0);
        assert_int_equal(symlink(secret, out), 0);

        cleanup_close int dfd = open(in, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(dfd >= 0);
        ck_error_t err = NULL;

        int fd = fn(dfd, "sub/file", O_RDONLY, 0, &err);
        assert_true(fd >= 0);
        char buf[16] = {0};
        assert_int_equal(read(fd, buf, sizeof(buf) - 1), 6);
        assert_string_equal(buf, "inside");
        assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
        close(fd);

        static const char *const rejected[] = {
            "../secret", "sub/../../secret", "/etc/passwd", "link/file", "out", ""};
        for (size_t i = 0; i < ARRAY_SIZE(rejected); i++) {
                fd = fn(dfd, rejected[i], O_RDONLY, 0, &err);
                if (fd >= 0)
                        fail_msg("opened `%s`", rejected[i]);
                assert_non_null(err);
                /* `..` and absolute paths say EXDEV, as openat2 does; symlinks ELOOP */
                if (i < 3)
                        assert_int_equal(err->status, EXDEV);
                else if (i < 5)
                        assert_int_equal(err->status, ELOOP);
                ck_error_release(&err);
        }

        /* creating beneath works and lands inside */
        fd = fn(dfd, "sub/new", O_WRONLY | O_CREAT | O_EXCL, 0600, &err);
        assert_true(fd >= 0);
        close(fd);
        cleanup_free char *created = xasprintf("%s/in/sub/new", dir);
        assert_int_equal(access(created, F_OK), 0);
        /* creating through a symlinked directory is refused */
        fd = fn(dfd, "link/new2", O_WRONLY | O_CREAT, 0600, &err);
        assert_true(fd < 0);
        ck_error_release(&err);
        cleanup_free char *created2 = xasprintf("%s/in/sub/new2", dir);
        assert_int_not_equal(access(created2, F_OK), 0);
        remove_tmpdir(dir);
}

static void test_open_beneath_openat2(void **state)
{
        (void)state;
        check_open_beneath(fs_open_beneath);
}

static void test_open_beneath_walk_fallback(void **state)
{
        (void)state;
        check_open_beneath(fs_open_beneath_walk);
}

static void test_remove_all_keeps_symlink_targets(void **state)
{
        (void)state;
        char *dir = make_tmpdir();
        cleanup_free char *victim = xasprintf("%s/victim", dir);
        cleanup_free char *keep = xasprintf("%s/keep", dir);
        cleanup_free char *keep_file = xasprintf("%s/keep/precious", dir);
        assert_int_equal(mkdir(keep, 0755), 0);
        write_plain(keep_file, "x");
        ck_error_t err = NULL;
        cleanup_free char *deep = xasprintf("%s/a/b/c", victim);
        assert_int_equal(fs_mkdir_p(deep, 0755, &err), 0);
        for (int i = 0; i < 50; i++) {
                cleanup_free char *f = xasprintf("%s/a/b/file%d", victim, i);
                write_plain(f, "data");
        }
        cleanup_free char *link_dir = xasprintf("%s/a/tokeep", victim);
        assert_int_equal(symlink(keep, link_dir), 0);
        cleanup_free char *ro = xasprintf("%s/a/b/c", victim);
        assert_int_equal(chmod(ro, 0500), 0);

        assert_int_equal(fs_remove_all(victim, &err), 0);
        assert_int_not_equal(access(victim, F_OK), 0);
        assert_int_equal(access(keep_file, F_OK), 0);
        /* missing: not an error */
        assert_int_equal(fs_remove_all(victim, &err), 0);
        /* a plain file */
        assert_int_equal(fs_remove_all(keep_file, &err), 0);
        assert_int_not_equal(access(keep_file, F_OK), 0);
        remove_tmpdir(dir);
}

static void test_remove_all_stops_at_mount_point(void **state)
{
        (void)state;
        if (geteuid() != 0)
                skip();
        char *dir = make_tmpdir();
        cleanup_free char *mnt = xasprintf("%s/pod/vol", dir);
        ck_error_t err = NULL;
        assert_int_equal(fs_mkdir_p(mnt, 0755, &err), 0);
        assert_int_equal(mount("tmpfs", mnt, "tmpfs", 0, "size=1m"), 0);
        cleanup_free char *inside = xasprintf("%s/data", mnt);
        write_plain(inside, "must survive");

        cleanup_free char *pod = xasprintf("%s/pod", dir);
        assert_true(fs_remove_all(pod, &err) < 0);
        assert_non_null(strstr(ck_error_msg(err), mnt));
        assert_non_null(strstr(ck_error_msg(err), "mount point"));
        ck_error_release(&err);
        assert_int_equal(access(inside, F_OK), 0);
        /* asked to remove the mount point itself */
        assert_true(fs_remove_all(mnt, &err) < 0);
        ck_error_release(&err);
        assert_int_equal(access(inside, F_OK), 0);

        assert_int_equal(umount2(mnt, MNT_DETACH), 0);
        assert_int_equal(fs_remove_all(pod, &err), 0);
        remove_tmpdir(dir);
}

static void test_rfc3339(void **state)
{
        (void)state;
        char buf[32];
        assert_string_equal(fs_format_rfc3339(0, buf), "1970-01-01T00:00:00Z");
        assert_string_equal(fs_format_rfc3339(1795994286999999999LL, buf), "2026-11-29T23:18:06Z");
        assert_string_equal(fs_format_rfc3339(-1, buf), "1969-12-31T23:59:59Z");
        int64_t a = fs_now_mono_ms();
        int64_t b = fs_now_mono_ms();
        assert_true(b >= a);
        assert_true(fs_now_real_ns() > 1700000000LL * 1000000000LL);
}

/* fs_opendir_if_exists: a directory opened close-on-exec, an absent one
 * NULL without error, a file an error naming it. */
static void test_opendir_if_exists(void **state)
{
        (void)state;
        char *dir = make_tmpdir();
        ck_error_t err = NULL;
        DIR *d = NULL;
        assert_int_equal(fs_opendir_if_exists(dir, &d, &err), 0);
        assert_non_null(d);
        assert_true(fcntl(dirfd(d), F_GETFD) & FD_CLOEXEC);
        closedir(d);
        char *absent = xasprintf("%s/absent", dir);
        assert_int_equal(fs_opendir_if_exists(absent, &d, &err), 0);
        assert_null(d);
        char *file = xasprintf("%s/file", dir);
        write_plain(file, "x");
        assert_int_equal(fs_opendir_if_exists(file, &d, &err), -1);
        assert_null(d);
        char *want = xasprintf("open `%s`: Not a directory", file);
        assert_string_equal(ck_error_msg(err), want);
        ck_error_release(&err);
        free(want);
        free(file);
        free(absent);
        remove_tmpdir(dir);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_write_atomic_content_and_mode),
            cmocka_unit_test(test_write_atomic_missing_dir_fails_cleanly),
            cmocka_unit_test(test_read_file_limit),
            cmocka_unit_test(test_opendir_if_exists),
            cmocka_unit_test(test_mkdir_p),
            cmocka_unit_test(test_open_beneath_openat2),
            cmocka_unit_test(test_open_beneath_walk_fallback),
            cmocka_unit_test(test_remove_all_keeps_symlink_targets),
            cmocka_unit_test(test_remove_all_stops_at_mount_point),
            cmocka_unit_test(test_rfc3339),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
