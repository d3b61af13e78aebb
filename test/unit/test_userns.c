/* SPDX-License-Identifier: Apache-2.0 */
/* User namespaces: the kubelet's IDs, a range per pod kept in its file,
 * read back by a new manager, released for pods gone. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "userns/userns.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char root[] = "/tmp/ck-test-userns-XXXXXX";

static char *write_tmp(const char *name, const char *text)
{
        char *p = xasprintf("%s/%s", root, name);
        ck_error_t err = NULL;
        assert_int_equal(fs_write_file_atomic(p, text, strlen(text), 0644, &err), 0);
        return p;
}

static void test_kubelet_mappings(void **state)
{
        (void)state;
        uint32_t first, len;
        ck_error_t err = NULL;
        /* no "kubelet" user: idsPerPod up to 2^32 */
        struct userns_config c = {.kubelet_user = 0};
        assert_int_equal(userns_kubelet_mappings(&c, 65536, &first, &len, &err), 0);
        assert_int_equal(first, 65536);
        assert_int_equal(len, 4294967296ull - 65536);

        cleanup_free char *uid = write_tmp("subuid", "root:100000:65536\nkubelet:65536:7208960\n");
        cleanup_free char *gid = write_tmp("subgid", "kubelet:65536:7208960\n");
        cleanup_free char *other = write_tmp("subgid2", "kubelet:131072:7208960\n");
        cleanup_free char *none = write_tmp("subgid3", "root:100000:65536\n");
        c = (struct userns_config){.kubelet_user = 1, .subuid_path = uid, .subgid_path = gid};
        assert_int_equal(userns_kubelet_mappings(&c, 65536, &first, &len, &err), 0);
        assert_int_equal(first, 65536);
        assert_int_equal(len, 7208960);
        c.subgid_path = other;
        assert_int_equal(userns_kubelet_mappings(&c, 65536, &first, &len, &err), -1);
        assert_string_equal(ck_error_msg(err),
                            "mismatched subuids and subgids for user \"kubelet\"");
        ck_error_release(&err);
        c.subgid_path = none;
        assert_int_equal(userns_kubelet_mappings(&c, 65536, &first, &len, &err), -1);
        assert_non_null(strstr(ck_error_msg(err), "error retrieving additional gids for user"));
        ck_error_release(&err);
}

static void test_ranges(void **state)
{
        (void)state;
        ck_error_t err = NULL;
        /* 110 pods need 110 ranges: 7208960 = 110 * 65536 from 65536 */
        cleanup_free char *uid = write_tmp("subuid", "kubelet:65536:7208960\n");
        struct userns_config c = {.root_dir = root,
                                  .max_pods = 110,
                                  .kubelet_user = 1,
                                  .subuid_path = uid,
                                  .subgid_path = uid};
        struct userns_manager *m = NULL;
        assert_int_equal(userns_manager_new(&c, &m, &err), 0);
        uint32_t a, b, a2, len;
        assert_int_equal(userns_pod_mappings(m, "pod-a", &a, &len, &err), 0);
        assert_int_equal(len, 65536);
        assert_int_equal(userns_pod_mappings(m, "pod-b", &b, &len, &err), 0);
        assert_true(a >= 65536 && b >= 65536 && a != b);
        assert_int_equal(a % 65536, 0);
        /* the same again; the file upstream writes */
        assert_int_equal(userns_pod_mappings(m, "pod-a", &a2, &len, &err), 0);
        assert_int_equal(a2, a);
        cleanup_free char *path = xasprintf("%s/pods/pod-a/userns", root);
        cleanup_free char *text = NULL;
        size_t n = 0;
        assert_int_equal(fs_read_file(path, 4096, &text, &n, &err), 0);
        char want[256];
        snprintf(want, sizeof(want),
                 "{\"uidMappings\":[{\"hostId\":%u,\"containerId\":0,\"length\":65536}],"
                 "\"gidMappings\":[{\"hostId\":%u,\"containerId\":0,\"length\":65536}]}",
                 a, a);
        assert_string_equal(text, want);
        userns_manager_free(m);

        /* a restarted kubelet reads them back: pod-b keeps its range, and a
         * new pod gets neither */
        assert_int_equal(userns_manager_new(&c, &m, &err), 0);
        uint32_t b2, cnew;
        assert_int_equal(userns_pod_mappings(m, "pod-b", &b2, &len, &err), 0);
        assert_int_equal(b2, b);
        assert_int_equal(userns_pod_mappings(m, "pod-c", &cnew, &len, &err), 0);
        assert_true(cnew != a && cnew != b);
        /* pod-a gone: its range is free for the next pod */
        const char *keep[] = {"pod-b", "pod-c"};
        userns_retain(m, keep, 2);
        assert_int_equal(access(path, F_OK), -1); /* its file goes with it */
        uint32_t d;
        assert_int_equal(userns_pod_mappings(m, "pod-d", &d, &len, &err), 0);
        assert_int_equal(d, a);
        assert_int_equal(userns_pod_mappings(m, "../x", &d, &len, &err), -1);
        ck_error_release(&err);
        /* a file that cannot be read is an error, never a second range */
        cleanup_free char *bad = xasprintf("%s/pods/pod-e/userns", root);
        assert_int_equal(fs_mkdir_p(bad, 0750, &err), 0);
        assert_int_equal(userns_pod_mappings(m, "pod-e", &d, &len, &err), -1);
        assert_non_null(strstr(ck_error_msg(err), "user namespace: "));
        ck_error_release(&err);
        cleanup_free char *dir_e = xasprintf("%s/pods/pod-e", root);
        assert_int_equal(fs_remove_all(dir_e, &err), 0);
        userns_manager_free(m);

        /* not enough IDs for maxPods; a first ID not on a range's edge */
        c.max_pods = 111;
        assert_int_equal(userns_manager_new(&c, &m, &err), -1);
        assert_string_equal(ck_error_msg(err), "kubelet user assigned IDs are not enough to "
                                               "support 111 pods");
        ck_error_release(&err);
        cleanup_free char *odd = write_tmp("subuid-odd", "kubelet:1000:7208960\n");
        c = (struct userns_config){.root_dir = root,
                                   .max_pods = 10,
                                   .kubelet_user = 1,
                                   .subuid_path = odd,
                                   .subgid_path = odd};
        assert_int_equal(userns_manager_new(&c, &m, &err), -1);
        assert_string_equal(ck_error_msg(err), "kubelet user assigned ID 1000 is not a multiple "
                                               "of 65536");
        ck_error_release(&err);

        /* a pod file that claims another's range: the manager refuses */
        cleanup_free char *dir_x = xasprintf("%s/pods/pod-x", root);
        assert_int_equal(fs_mkdir_p(dir_x, 0750, &err), 0);
        snprintf(want, sizeof(want),
                 "{\"uidMappings\":[{\"hostId\":%u,\"containerId\":0,\"length\":65536}],"
                 "\"gidMappings\":[{\"hostId\":%u,\"containerId\":0,\"length\":65536}]}",
                 b, b);
        cleanup_free char *px = xasprintf("%s/userns", dir_x);
        assert_int_equal(fs_write_file_atomic(px, want, strlen(want), 0644, &err), 0);
        c = (struct userns_config){.root_dir = root,
                                   .max_pods = 110,
                                   .kubelet_user = 1,
                                   .subuid_path = uid,
                                   .subgid_path = uid};
        assert_int_equal(userns_manager_new(&c, &m, &err), -1);
        assert_non_null(strstr(ck_error_msg(err), "already taken"));
        ck_error_release(&err);
}

static int setup(void **state)
{
        (void)state;
        return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
        (void)state;
        ck_error_t err = NULL;
        fs_remove_all(root, &err);
        ck_error_release(&err);
        return 0;
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_kubelet_mappings),
            cmocka_unit_test(test_ranges),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
