/* SPDX-License-Identifier: Apache-2.0 */
/* Pod directories, emptyDir (disk and tmpfs), hostPath type checks, cleanup
 * and the managed /etc/hosts, in a temporary root dir.  The tmpfs and mount
 * point cases need root (CI runs as root) and are skipped otherwise. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/xalloc.h"
#include "volume/volume.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define UID "8f7c1e2a-0000-4000-8000-000000000001"

struct fixture {
        char *root;
        mode_t umask;
};

static int setup(void **state)
{
        struct fixture *f = xcalloc(1, sizeof(*f));
        f->root = xstrdup("/tmp/ck-volume-XXXXXX");
        if (mkdtemp(f->root) == NULL)
                return -1;
        /* a typical daemon umask: the modes below must not depend on it */
        f->umask = umask(022);
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        struct fixture *f = *state;
        ck_error_t err = NULL;
        umask(f->umask);
        int ret = fs_remove_all(f->root, &err);
        ck_error_release(&err);
        free(f->root);
        free(f);
        return ret;
}

static struct pod mkpod(struct volume *vols, size_t n)
{
        struct pod p = {
            .name = (char *)"web",
            .namespace = (char *)"default",
            .uid = (char *)UID,
            .volumes = vols,
            .n_volumes = n,
        };
        return p;
}

static mode_t mode_of(const char *path)
{
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        return st.st_mode;
}

static const char *path_of(const struct kv_list *paths, const char *name)
{
        const char *p = kv_list_get(paths, name);
        if (p == NULL)
                fail_msg("no path for volume %s", name);
        return p;
}

/* Number of tmpfs mounts at exactly `path`; *opts gets the super options of
 * the last (new string) when opts is not NULL. */
static int tmpfs_mounts_at(const char *path, char **opts)
{
        FILE *f = fopen("/proc/self/mountinfo", "r");
        assert_non_null(f);
        char line[4096];
        int n = 0;
        while (fgets(line, sizeof(line), f)) {
                char mp[2048], fstype[64], super[1024];
                char *dash = strstr(line, " - ");
                if (dash == NULL || sscanf(line, "%*s %*s %*s %*s %2047s", mp) != 1 ||
                    sscanf(dash, " - %63s %*s %1023s", fstype, super) != 2)
                        continue;
                if (strcmp(mp, path) == 0 && strcmp(fstype, "tmpfs") == 0) {
                        n++;
                        if (opts) {
                                free(*opts);
                                *opts = xstrdup(super);
                        }
                }
        }
        fclose(f);
        return n;
}

static void test_pod_dirs(void **state)
{
        struct fixture *f = *state;
        struct pod pod = mkpod(NULL, 0);
        ck_error_t err = NULL;
        assert_int_equal(volume_make_pod_dirs(f->root, &pod, &err), 0);
        assert_int_equal(volume_make_pod_dirs(f->root, &pod, &err), 0);
        static const char *const dirs[] = {"", "/volumes", "/plugins"};
        for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
                cleanup_free char *p = xasprintf("%s/pods/" UID "%s", f->root, dirs[i]);
                mode_t m = mode_of(p);
                assert_true(S_ISDIR(m));
                assert_int_equal(m & 07777, 0750);
        }

        pod.uid = (char *)"../escape";
        assert_true(volume_make_pod_dirs(f->root, &pod, &err) < 0);
        assert_non_null(strstr(ck_error_msg(err), "invalid pod UID \"../escape\""));
        ck_error_release(&err);
        cleanup_free char *escaped = xasprintf("%s/escape", f->root);
        assert_int_not_equal(access(escaped, F_OK), 0);
}

static void test_empty_dir_on_disk(void **state)
{
        struct fixture *f = *state;
        struct volume vols[] = {{.name = (char *)"cache", .kind = VOLUME_EMPTY_DIR}};
        struct pod pod = mkpod(vols, 1);
        struct kv_list paths = {0};
        ck_error_t err = NULL;
        assert_int_equal(volume_mount_pod_volumes(f->root, &pod, NULL, &paths, &err), 0);
        cleanup_free char *want =
            xasprintf("%s/pods/" UID "/volumes/kubernetes.io~empty-dir/cache", f->root);
        assert_string_equal(path_of(&paths, "cache"), want);
        mode_t m = mode_of(want);
        assert_true(S_ISDIR(m));
        assert_int_equal(m & 07777, 0777);
        kv_list_release(&paths);

        /* idempotent: data written in between survives */
        cleanup_free char *file = xasprintf("%s/data", want);
        assert_int_equal(fs_write_file_atomic(file, "x", 1, 0644, &err), 0);
        assert_int_equal(volume_mount_pod_volumes(f->root, &pod, NULL, &paths, &err), 0);
        assert_int_equal(access(file, F_OK), 0);
        kv_list_release(&paths);
}

static void test_empty_dir_fs_group(void **state)
{
        struct fixture *f = *state;
        if (geteuid() != 0)
                skip();
        struct volume vols[] = {{.name = (char *)"shared", .kind = VOLUME_EMPTY_DIR}};
        struct pod pod = mkpod(vols, 1);
        pod.security_context.has_fs_group = true;
        pod.security_context.fs_group = 1234;
        struct kv_list paths = {0};
        ck_error_t err = NULL;
        assert_int_equal(volume_mount_pod_volumes(f->root, &pod, NULL, &paths, &err), 0);
        struct stat st;
        assert_int_equal(stat(path_of(&paths, "shared"), &st), 0);
        assert_int_equal(st.st_gid, 1234);
        assert_int_equal(st.st_mode & 07777, 02777);
        cleanup_free char *root = xstrdup(path_of(&paths, "shared"));

        /* what the containers wrote, in other groups, with a link out */
        cleanup_free char *sub = xasprintf("%s/sub", root);
        cleanup_free char *file = xasprintf("%s/sub/f", root);
        cleanup_free char *link = xasprintf("%s/out", root);
        cleanup_free char *outside = xasprintf("%s/outside", f->root);
        assert_int_equal(mkdir(sub, 0700), 0);
        assert_int_equal(fs_write_file_atomic(file, "x", 1, 0600, &err), 0);
        assert_int_equal(fs_write_file_atomic(outside, "y", 1, 0600, &err), 0);
        assert_int_equal(symlink(outside, link), 0);
        assert_int_equal(chown(sub, 0, 5), 0);
        assert_int_equal(chown(file, 0, 5), 0);
        kv_list_release(&paths);

        /* set up again (a later sync, or a restarted kubelet: upstream's
         * readiness file is there): what the containers did stands */
        cleanup_free char *ready =
            xasprintf("%s/pods/" UID "/plugins/kubernetes.io~empty-dir/shared/ready", f->root);
        assert_int_equal(access(ready, F_OK), 0);
        assert_int_equal(volume_mount_pod_volumes(f->root, &pod, NULL, &paths, &err), 0);
        assert_int_equal(stat(file, &st), 0);
        assert_int_equal(st.st_gid, 5);
        kv_list_release(&paths);

        /* not ready (set up but never marked): everything below gets the
         * group, group rw, directories x and setgid; the link itself is
         * regrouped, what it points to is not */
        cleanup_free char *suid = xasprintf("%s/suid", root);
        assert_int_equal(fs_write_file_atomic(suid, "s", 1, 0755, &err), 0);
        assert_int_equal(chmod(suid, 04755), 0);
        assert_int_equal(unlink(ready), 0);
        assert_int_equal(volume_mount_pod_volumes(f->root, &pod, NULL, &paths, &err), 0);
        /* the chown clears setuid; the mode set after it keeps it, as
         * upstream's chmod of what the walk saw */
        assert_int_equal(stat(suid, &st), 0);
        assert_int_equal(st.st_mode & 07777, 04775);
        assert_int_equal(stat(file, &st), 0);
        assert_int_equal(st.st_gid, 1234);
        assert_int_equal(st.st_mode & 07777, 0660);
        assert_int_equal(stat(sub, &st), 0);
        assert_int_equal(st.st_gid, 1234);
        assert_int_equal(st.st_mode & 07777, 02770);
        assert_int_equal(lstat(link, &st), 0);
        assert_int_equal(st.st_gid, 1234);
        assert_int_equal(stat(outside, &st), 0);
        assert_int_equal(st.st_gid, 0);
        assert_int_equal(st.st_mode & 07777, 0600);
        assert_int_equal(access(ready, F_OK), 0);
        kv_list_release(&paths);
}

static void test_host_path_types(void **state)
{
        struct fixture *f = *state;
        cleanup_free char *mkdir_path = xasprintf("%s/host/a/b", f->root);
        cleanup_free char *file_path = xasprintf("%s/host/created.txt", f->root);
        cleanup_free char *sock_path = xasprintf("%s/host/s.sock", f->root);
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        assert_true(strlen(sock_path) < sizeof(sa.sun_path));
        strcpy(sa.sun_path, sock_path);
        ck_error_t err = NULL;
        cleanup_free char *host = xasprintf("%s/host", f->root);
        assert_int_equal(fs_mkdir_p(host, 0755, &err), 0);
        assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);

        struct volume vols[] = {
            {.name = (char *)"d",
             .kind = VOLUME_HOST_PATH,
             .host_path = mkdir_path,
             .host_path_type = (char *)"DirectoryOrCreate"},
            {.name = (char *)"f",
             .kind = VOLUME_HOST_PATH,
             .host_path = file_path,
             .host_path_type = (char *)"FileOrCreate"},
            {.name = (char *)"sock",
             .kind = VOLUME_HOST_PATH,
             .host_path = sock_path,
             .host_path_type = (char *)"Socket"},
            {.name = (char *)"null",
             .kind = VOLUME_HOST_PATH,
             .host_path = (char *)"/dev/null",
             .host_path_type = (char *)"CharDevice"},
            {.name = (char *)"any",
             .kind = VOLUME_HOST_PATH,
             .host_path = (char *)"/nonexistent/unchecked",
             .host_path_type = (char *)""},
        };
        struct pod pod = mkpod(vols, ARRAY_SIZE(vols));
        struct kv_list paths = {0};
        if (volume_mount_pod_volumes(f->root, &pod, NULL, &paths, &err) < 0)
                fail_msg("%s", ck_error_msg(err));
        close(s);
        assert_string_equal(path_of(&paths, "d"), mkdir_path);
        assert_string_equal(path_of(&paths, "null"), "/dev/null");
        assert_string_equal(path_of(&paths, "any"), "/nonexistent/unchecked");
        mode_t m = mode_of(mkdir_path);
        assert_true(S_ISDIR(m));
        assert_int_equal(m & 07777, 0755);
        m = mode_of(file_path);
        assert_true(S_ISREG(m));
        assert_int_equal(m & 07777, 0644);
        kv_list_release(&paths);
}

/* Runs one volume and returns the error message (new string), NULL if it worked. */
static char *one_volume_error(const char *root, struct volume v)
{
        struct pod pod = mkpod(&v, 1);
        struct kv_list paths = {0};
        ck_error_t err = NULL;
        if (volume_mount_pod_volumes(root, &pod, NULL, &paths, &err) == 0) {
                kv_list_release(&paths);
                return NULL;
        }
        assert_int_equal(paths.n, 0);
        char *msg = xstrdup(ck_error_msg(err));
        ck_error_release(&err);
        return msg;
}

static void test_host_path_errors(void **state)
{
        struct fixture *f = *state;
        cleanup_free char *missing = xasprintf("%s/missing", f->root);
        cleanup_free char *msg =
            one_volume_error(f->root, (struct volume){.name = (char *)"data",
                                                      .kind = VOLUME_HOST_PATH,
                                                      .host_path = missing,
                                                      .host_path_type = (char *)"Directory"});
        cleanup_free char *want = xasprintf("volume \"data\": hostPath type Directory: hostPath "
                                            "type check failed: %s is not a directory",
                                            missing);
        assert_non_null(msg);
        assert_string_equal(msg, want);
        assert_int_not_equal(access(missing, F_OK), 0);

        cleanup_free char *msg2 =
            one_volume_error(f->root, (struct volume){.name = (char *)"blk",
                                                      .kind = VOLUME_HOST_PATH,
                                                      .host_path = (char *)"/dev/null",
                                                      .host_path_type = (char *)"BlockDevice"});
        assert_non_null(msg2);
        assert_string_equal(msg2, "volume \"blk\": hostPath type BlockDevice: hostPath type check "
                                  "failed: /dev/null is not a block device");

        cleanup_free char *msg3 =
            one_volume_error(f->root, (struct volume){.name = (char *)"file",
                                                      .kind = VOLUME_HOST_PATH,
                                                      .host_path = f->root,
                                                      .host_path_type = (char *)"File"});
        assert_non_null(msg3);
        assert_non_null(strstr(msg3, "is not a file"));

        cleanup_free char *msg4 =
            one_volume_error(f->root, (struct volume){.name = (char *)"up",
                                                      .kind = VOLUME_HOST_PATH,
                                                      .host_path = (char *)"/var/../etc",
                                                      .host_path_type = (char *)""});
        assert_non_null(msg4);
        assert_string_equal(msg4,
                            "volume \"up\": invalid HostPath `/var/../etc`: must not contain '..'");

        cleanup_free char *msg5 =
            one_volume_error(f->root, (struct volume){.name = (char *)"nfs", .kind = VOLUME_OTHER});
        assert_non_null(msg5);
        assert_string_equal(msg5, "volume \"nfs\": unsupported volume type");

        cleanup_free char *msg6 = one_volume_error(
            f->root, (struct volume){.name = (char *)"../x", .kind = VOLUME_EMPTY_DIR});
        assert_non_null(msg6);
        assert_non_null(strstr(msg6, "invalid volume name"));
}

static void test_empty_dir_memory_and_cleanup(void **state)
{
        struct fixture *f = *state;
        if (geteuid() != 0)
                skip();
        struct volume vols[] = {
            {.name = (char *)"shm",
             .kind = VOLUME_EMPTY_DIR,
             .medium = (char *)"Memory",
             .has_size_limit = true,
             .size_limit = 1024 * 1024},
            {.name = (char *)"disk", .kind = VOLUME_EMPTY_DIR},
        };
        struct pod pod = mkpod(vols, 2);
        struct kv_list paths = {0};
        ck_error_t err = NULL;
        if (volume_mount_pod_volumes(f->root, &pod, NULL, &paths, &err) < 0)
                fail_msg("%s", ck_error_msg(err));
        cleanup_free char *shm = realpath(path_of(&paths, "shm"), NULL);
        assert_non_null(shm);
        cleanup_free char *opts = NULL;
        assert_int_equal(tmpfs_mounts_at(shm, &opts), 1);
        assert_non_null(strstr(opts, "size=1024k"));
        assert_int_equal(mode_of(shm) & 0777, 0777);
        kv_list_release(&paths);

        /* idempotent: not mounted twice */
        assert_int_equal(volume_mount_pod_volumes(f->root, &pod, NULL, &paths, &err), 0);
        kv_list_release(&paths);
        assert_int_equal(tmpfs_mounts_at(shm, NULL), 1);

        char **uids = NULL;
        assert_int_equal(volume_list_pod_dirs(f->root, &uids, &err), 0);
        assert_non_null(uids[0]);
        assert_string_equal(uids[0], UID);
        assert_null(uids[1]);
        free(uids[0]);
        free(uids);

        assert_int_equal(volume_cleanup_pod(f->root, UID, &err), 0);
        assert_int_equal(tmpfs_mounts_at(shm, NULL), 0);
        cleanup_free char *pod_dir = xasprintf("%s/pods/" UID, f->root);
        assert_int_not_equal(access(pod_dir, F_OK), 0);
        /* gone already: fine */
        assert_int_equal(volume_cleanup_pod(f->root, UID, &err), 0);
        assert_int_equal(volume_list_pod_dirs(f->root, &uids, &err), 0);
        assert_null(uids[0]);
        free(uids);
}

/* A mount that is not ours (a bind mount) stops the cleanup with an error
 * that names it; what is behind it is left alone. */
static void test_cleanup_refuses_foreign_mount(void **state)
{
        struct fixture *f = *state;
        if (geteuid() != 0)
                skip();
        struct volume vols[] = {{.name = (char *)"v", .kind = VOLUME_EMPTY_DIR}};
        struct pod pod = mkpod(vols, 1);
        struct kv_list paths = {0};
        ck_error_t err = NULL;
        assert_int_equal(volume_mount_pod_volumes(f->root, &pod, NULL, &paths, &err), 0);
        cleanup_free char *target = xstrdup(path_of(&paths, "v"));
        kv_list_release(&paths);
        cleanup_free char *precious = xasprintf("%s/precious", f->root);
        assert_int_equal(mkdir(precious, 0755), 0);
        cleanup_free char *keep = xasprintf("%s/keep", precious);
        assert_int_equal(fs_write_file_atomic(keep, "x", 1, 0644, &err), 0);
        assert_int_equal(mount(precious, target, NULL, MS_BIND, NULL), 0);

        assert_true(volume_cleanup_pod(f->root, UID, &err) < 0);
        assert_non_null(strstr(ck_error_msg(err), target));
        assert_non_null(strstr(ck_error_msg(err), "mount point"));
        ck_error_release(&err);
        assert_int_equal(access(keep, F_OK), 0);

        assert_int_equal(umount2(target, MNT_DETACH), 0);
        assert_int_equal(volume_cleanup_pod(f->root, UID, &err), 0);
        assert_int_equal(access(keep, F_OK), 0);
}

static char *read_all(const char *path)
{
        char *buf = NULL;
        ck_error_t err = NULL;
        if (fs_read_file(path, 1 << 20, &buf, NULL, &err) < 0)
                fail_msg("%s", ck_error_msg(err));
        return buf;
}

static void test_etc_hosts(void **state)
{
        struct fixture *f = *state;
        char *a1[] = {(char *)"foo.local", (char *)"bar.local"};
        char *a2[] = {(char *)"baz"};
        struct host_alias aliases[] = {
            {.ip = (char *)"10.1.2.3", .hostnames = {.items = a1, .n = 2}},
            {.ip = (char *)"10.1.2.4", .hostnames = {.items = a2, .n = 1}},
        };
        struct pod pod = mkpod(NULL, 0);
        ck_error_t err = NULL;
        assert_int_equal(volume_make_pod_dirs(f->root, &pod, &err), 0);

        cleanup_free char *path = NULL;
        assert_int_equal(volume_write_etc_hosts(f->root, &pod, "10.88.0.5", NULL, &path, &err), 0);
        cleanup_free char *want_path = xasprintf("%s/pods/" UID "/etc-hosts", f->root);
        assert_string_equal(path, want_path);
        assert_int_equal(mode_of(path) & 07777, 0644);
        static const char base[] = "# Kubernetes-managed hosts file.\n"
                                   "127.0.0.1\tlocalhost\n"
                                   "::1\tlocalhost ip6-localhost ip6-loopback\n"
                                   "fe00::0\tip6-localnet\n"
                                   "fe00::0\tip6-mcastprefix\n"
                                   "fe00::1\tip6-allnodes\n"
                                   "fe00::2\tip6-allrouters\n";
        cleanup_free char *got = read_all(path);
        assert_string_equal(got, "# Kubernetes-managed hosts file.\n"
                                 "127.0.0.1\tlocalhost\n"
                                 "::1\tlocalhost ip6-localhost ip6-loopback\n"
                                 "fe00::0\tip6-localnet\n"
                                 "fe00::0\tip6-mcastprefix\n"
                                 "fe00::1\tip6-allnodes\n"
                                 "fe00::2\tip6-allrouters\n"
                                 "10.88.0.5\tweb\n");

        pod.hostname = (char *)"myhost";
        pod.subdomain = (char *)"sub";
        pod.host_aliases = aliases;
        pod.n_host_aliases = 2;
        cleanup_free char *path2 = NULL;
        assert_int_equal(
            volume_write_etc_hosts(f->root, &pod, "10.88.0.5", "cluster.local", &path2, &err), 0);
        cleanup_free char *got2 = read_all(path2);
        cleanup_free char *want2 = xasprintf("%s10.88.0.5\tmyhost.sub.default.svc.cluster.local\t"
                                             "myhost\n\n# Entries added by HostAliases.\n"
                                             "10.1.2.3\tfoo.local\tbar.local\n10.1.2.4\tbaz\n",
                                             base);
        assert_string_equal(got2, want2);

        /* hostnameOverride: the name, without a domain (upstream) */
        pod.hostname_override = (char *)"db.internal";
        pod.n_host_aliases = 0;
        cleanup_free char *path_ov = NULL;
        assert_int_equal(
            volume_write_etc_hosts(f->root, &pod, "10.88.0.5", "cluster.local", &path_ov, &err), 0);
        cleanup_free char *got_ov = read_all(path_ov);
        cleanup_free char *want_ov = xasprintf("%s10.88.0.5\tdb.internal\n", base);
        assert_string_equal(got_ov, want_ov);
        pod.hostname_override = NULL;

        /* host network: the node's file under its own header */
        pod.host_network = true;
        pod.n_host_aliases = 0;
        cleanup_free char *path3 = NULL;
        assert_int_equal(volume_write_etc_hosts(f->root, &pod, "192.0.2.1", "", &path3, &err), 0);
        cleanup_free char *node = read_all("/etc/hosts");
        cleanup_free char *want3 =
            xasprintf("# Kubernetes-managed hosts file (host network).\n%s", node);
        cleanup_free char *got3 = read_all(path3);
        assert_string_equal(got3, want3);

        /* a newline in a field would forge entries */
        pod.host_network = false;
        char *evil[] = {(char *)"ok\n6.6.6.6\tevil"};
        struct host_alias bad = {.ip = (char *)"10.0.0.1", .hostnames = {.items = evil, .n = 1}};
        pod.host_aliases = &bad;
        pod.n_host_aliases = 1;
        char *path4 = NULL;
        assert_true(volume_write_etc_hosts(f->root, &pod, "10.88.0.5", "", &path4, &err) < 0);
        assert_non_null(strstr(ck_error_msg(err), "invalid hostAliases hostname"));
        ck_error_release(&err);
        cleanup_free char *still = read_all(path3);
        assert_string_equal(still, want3);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_pod_dirs, setup, teardown),
            cmocka_unit_test_setup_teardown(test_empty_dir_on_disk, setup, teardown),
            cmocka_unit_test_setup_teardown(test_empty_dir_fs_group, setup, teardown),
            cmocka_unit_test_setup_teardown(test_host_path_types, setup, teardown),
            cmocka_unit_test_setup_teardown(test_host_path_errors, setup, teardown),
            cmocka_unit_test_setup_teardown(test_empty_dir_memory_and_cleanup, setup, teardown),
            cmocka_unit_test_setup_teardown(test_cleanup_refuses_foreign_mount, setup, teardown),
            cmocka_unit_test_setup_teardown(test_etc_hosts, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
