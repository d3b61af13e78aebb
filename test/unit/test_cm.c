/* SPDX-License-Identifier: Apache-2.0 */
/* The container manager against fake cgroup trees (plain directories in a
 * temporary dir, cm_options.fake_cgroupfs) for v1 and v2: the files it writes
 * for each QoS class, the cgroup parents, destroy, listing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "cm/cm.h"
#include "fake_systemd.h"
#include "util/cgroup_name.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#define MI (1024LL * 1024LL)
#define UNSET (-1)

struct fake_tree {
        char *root;
        bool v2;
};

static struct fake_tree *make_tree(bool v2)
{
        struct fake_tree *t = xcalloc(1, sizeof(*t));
        t->root = xstrdup("/tmp/ck-cgroupfs-XXXXXX");
        t->v2 = v2;
        assert_non_null(mkdtemp(t->root));
        if (v2) {
                cleanup_free char *c = xasprintf("%s/cgroup.controllers", t->root);
                FILE *f = fopen(c, "w");
                assert_non_null(f);
                fputs("cpuset cpu io memory pids\n", f);
                fclose(f);
                cleanup_free char *s = xasprintf("%s/cgroup.subtree_control", t->root);
                f = fopen(s, "w");
                assert_non_null(f);
                fclose(f);
        } else {
                static const char *const ctrls[] = {"cpu", "memory", "pids"};
                for (size_t i = 0; i < ARRAY_SIZE(ctrls); i++) {
                        cleanup_free char *d = xasprintf("%s/%s", t->root, ctrls[i]);
                        assert_int_equal(mkdir(d, 0755), 0);
                }
        }
        return t;
}

static void free_tree(struct fake_tree *t)
{
        ck_error_t err = NULL;
        assert_int_equal(fs_remove_all(t->root, &err), 0);
        free(t->root);
        free(t);
}

/* Contents of <root>/<rel> without the trailing newline, NULL if missing. */
static char *read_value(const struct fake_tree *t, const char *rel)
{
        cleanup_free char *path = xasprintf("%s/%s", t->root, rel);
        char *buf = NULL;
        size_t len = 0;
        ck_error_t err = NULL;
        if (fs_read_file(path, 4096, &buf, &len, &err) < 0) {
                ck_error_release(&err);
                return NULL;
        }
        while (len > 0 && buf[len - 1] == '\n')
                buf[--len] = '\0';
        return buf;
}

static void assert_value(const struct fake_tree *t, const char *rel, const char *want)
{
        cleanup_free char *got = read_value(t, rel);
        if (want == NULL) {
                if (got != NULL)
                        fail_msg("%s: want no file, got \"%s\"", rel, got);
                return;
        }
        if (got == NULL)
                fail_msg("%s: missing, want \"%s\"", rel, want);
        if (strcmp(got, want) != 0)
                fail_msg("%s: got \"%s\", want \"%s\"", rel, got, want);
}

static bool exists(const struct fake_tree *t, const char *rel)
{
        cleanup_free char *path = xasprintf("%s/%s", t->root, rel);
        struct stat st;
        return stat(path, &st) == 0;
}

/* A container; UNSET leaves a value out. */
static struct container ctr(const char *name, int64_t req_cpu, int64_t req_mem, int64_t lim_cpu,
                            int64_t lim_mem)
{
        struct container c = {.name = (char *)name};
        struct resource_requirements *r = &c.resources;
        r->requests.has_cpu = req_cpu != UNSET;
        r->requests.cpu_milli = req_cpu != UNSET ? req_cpu : 0;
        r->requests.has_memory = req_mem != UNSET;
        r->requests.memory = req_mem != UNSET ? req_mem : 0;
        r->limits.has_cpu = lim_cpu != UNSET;
        r->limits.cpu_milli = lim_cpu != UNSET ? lim_cpu : 0;
        r->limits.has_memory = lim_mem != UNSET;
        r->limits.memory = lim_mem != UNSET ? lim_mem : 0;
        return c;
}

static struct pod mkpod(const char *uid, struct container *cs, size_t n)
{
        struct pod p = {
            .name = (char *)"web",
            .namespace = (char *)"default",
            .uid = (char *)uid,
            .containers = cs,
            .n_containers = n,
        };
        return p;
}

static struct cm *new_cm(const struct fake_tree *t, const char *cgroup_root)
{
        struct cm_options o = {
            .cgroupfs_root = t->root,
            .cgroup_root = cgroup_root,
            .cgroups_per_qos = true,
            .cgroup_driver = "cgroupfs",
            .reserved_cpu_milli = 100,
            .reserved_memory = 64 * MI,
            .fake_cgroupfs = true,
        };
        struct cm *cm = NULL;
        ck_error_t err = NULL;
        if (cm_new(&o, &cm, &err) < 0)
                fail_msg("cm_new: %s", ck_error_msg(err));
        return cm;
}

static char *ensure(struct cm *cm, const struct pod *pod)
{
        char *parent = NULL;
        ck_error_t err = NULL;
        if (cm_pod_cgroup_ensure(cm, pod, &parent, &err) < 0)
                fail_msg("ensure: %s", ck_error_msg(err));
        return parent;
}

static void test_conversions(void **state)
{
        (void)state;
        assert_int_equal(cm_milli_cpu_to_shares(0), 2);
        assert_int_equal(cm_milli_cpu_to_shares(1), 2);
        assert_int_equal(cm_milli_cpu_to_shares(100), 102);
        assert_int_equal(cm_milli_cpu_to_shares(1000), 1024);
        assert_int_equal(cm_milli_cpu_to_shares(1000000), 262144);
        assert_int_equal(cm_milli_cpu_to_quota(0, 100000), 0);
        assert_int_equal(cm_milli_cpu_to_quota(5, 100000), 1000);
        assert_int_equal(cm_milli_cpu_to_quota(250, 100000), 25000);
        assert_int_equal(cm_cpu_shares_to_weight(2), 1);
        assert_int_equal(cm_cpu_shares_to_weight(1024), 39);
        assert_int_equal(cm_cpu_shares_to_weight(262144), 10000);
}

/* kubepods gets node allocatable; the QoS cgroups exist with their shares. */
static void test_v1_node_allocatable_and_qos(void **state)
{
        (void)state;
        struct fake_tree *t = make_tree(false);
        struct cm *cm = new_cm(t, "");

        struct cm_node_resources n;
        cm_node_resources(cm, &n);
        assert_int_equal(n.capacity_cpu_milli, sysconf(_SC_NPROCESSORS_ONLN) * 1000);
        FILE *f = fopen("/proc/meminfo", "r");
        assert_non_null(f);
        long long kb = 0;
        assert_int_equal(fscanf(f, "MemTotal: %lld kB", &kb), 1);
        fclose(f);
        assert_int_equal(n.capacity_memory, kb * 1024);
        assert_int_equal(n.allocatable_cpu_milli, n.capacity_cpu_milli - 100);
        assert_int_equal(n.allocatable_memory, n.capacity_memory - 64 * MI);

        char want[64];
        snprintf(want, sizeof(want), "%lld", (long long)n.allocatable_memory);
        assert_value(t, "memory/kubepods/memory.limit_in_bytes", want);
        snprintf(want, sizeof(want), "%llu",
                 (unsigned long long)cm_milli_cpu_to_shares(n.allocatable_cpu_milli));
        assert_value(t, "cpu/kubepods/cpu.shares", want);
        assert_value(t, "cpu/kubepods/burstable/cpu.shares", "2");
        assert_value(t, "cpu/kubepods/besteffort/cpu.shares", "2");
        assert_true(exists(t, "memory/kubepods/besteffort"));
        assert_true(exists(t, "pids/kubepods/burstable"));
        cm_free(cm);
        free_tree(t);
}

static void test_v1_guaranteed(void **state)
{
        (void)state;
        struct fake_tree *t = make_tree(false);
        struct cm *cm = new_cm(t, "");
        struct container cs[] = {ctr("a", 500, 128 * MI, 500, 128 * MI)};
        struct pod pod = mkpod("1111", cs, 1);
        cleanup_free char *parent = ensure(cm, &pod);
        assert_string_equal(parent, "/kubepods/pod1111");
        assert_value(t, "cpu/kubepods/pod1111/cpu.shares", "512");
        assert_value(t, "cpu/kubepods/pod1111/cpu.cfs_quota_us", "50000");
        assert_value(t, "cpu/kubepods/pod1111/cpu.cfs_period_us", "100000");
        assert_value(t, "memory/kubepods/pod1111/memory.limit_in_bytes", "134217728");
        assert_true(exists(t, "pids/kubepods/pod1111"));
        assert_value(t, "pids/kubepods/pod1111/pids.max", NULL); /* no --pod-max-pids */
        cm_free(cm);
        free_tree(t);
}

/* Limits missing on one container: shares only; the burstable cgroup's shares
 * follow its pods' requests. */
static void test_v1_burstable(void **state)
{
        (void)state;
        struct fake_tree *t = make_tree(false);
        struct cm *cm = new_cm(t, "");
        struct container cs[] = {ctr("a", 250, 64 * MI, 1000, UNSET),
                                 ctr("b", 100, UNSET, UNSET, UNSET)};
        struct pod pod = mkpod("2222", cs, 2);
        cleanup_free char *parent = ensure(cm, &pod);
        assert_string_equal(parent, "/kubepods/burstable/pod2222");
        assert_value(t, "cpu/kubepods/burstable/pod2222/cpu.shares", "358");
        assert_value(t, "cpu/kubepods/burstable/pod2222/cpu.cfs_quota_us", NULL);
        assert_value(t, "memory/kubepods/burstable/pod2222/memory.limit_in_bytes", NULL);
        assert_value(t, "cpu/kubepods/burstable/cpu.shares", "358");

        /* every container limited: quota and memory limit appear */
        struct container cs2[] = {ctr("a", 100, 64 * MI, 200, 128 * MI)};
        struct pod pod2 = mkpod("3333", cs2, 1);
        cleanup_free char *parent2 = ensure(cm, &pod2);
        assert_value(t, "cpu/kubepods/burstable/pod3333/cpu.shares", "102");
        assert_value(t, "cpu/kubepods/burstable/pod3333/cpu.cfs_quota_us", "20000");
        assert_value(t, "cpu/kubepods/burstable/pod3333/cpu.cfs_period_us", "100000");
        assert_value(t, "memory/kubepods/burstable/pod3333/memory.limit_in_bytes", "134217728");
        assert_value(t, "cpu/kubepods/burstable/cpu.shares", "460"); /* 450m */

        ck_error_t err = NULL;
        assert_int_equal(cm_pod_cgroup_destroy(cm, "2222", &err), 0);
        assert_value(t, "cpu/kubepods/burstable/cpu.shares", "102");
        cm_free(cm);
        free_tree(t);
}

static void test_v1_besteffort_and_pids(void **state)
{
        (void)state;
        struct fake_tree *t = make_tree(false);
        struct cm_options o = {
            .cgroupfs_root = t->root,
            .cgroups_per_qos = true,
            .pod_pids_limit = 1024,
            .fake_cgroupfs = true,
        };
        struct cm *cm = NULL;
        ck_error_t err = NULL;
        assert_int_equal(cm_new(&o, &cm, &err), 0);
        struct container cs[] = {ctr("a", UNSET, UNSET, UNSET, UNSET)};
        struct pod pod = mkpod("4444", cs, 1);
        cleanup_free char *parent = ensure(cm, &pod);
        assert_string_equal(parent, "/kubepods/besteffort/pod4444");
        assert_value(t, "cpu/kubepods/besteffort/pod4444/cpu.shares", "2");
        assert_value(t, "cpu/kubepods/besteffort/pod4444/cpu.cfs_quota_us", NULL);
        assert_value(t, "memory/kubepods/besteffort/pod4444/memory.limit_in_bytes", NULL);
        assert_value(t, "pids/kubepods/besteffort/pod4444/pids.max", "1024");
        cm_free(cm);
        free_tree(t);
}

/* Init containers count at their maximum, sidecars add up (upstream
 * PodRequests). */
static void test_init_and_sidecar_requests(void **state)
{
        (void)state;
        struct fake_tree *t = make_tree(false);
        struct cm *cm = new_cm(t, "");
        struct container app[] = {ctr("app", 100, UNSET, UNSET, UNSET)};
        struct container init[] = {ctr("sidecar", 200, UNSET, UNSET, UNSET),
                                   ctr("setup", 150, UNSET, UNSET, UNSET)};
        init[0].restart_policy = (char *)"Always";
        struct pod pod = mkpod("5555", app, 1);
        pod.init_containers = init;
        pod.n_init_containers = 2;
        cleanup_free char *parent = ensure(cm, &pod);
        /* max(100 + 200, 150 + 200) = 350m -> 358 */
        assert_value(t, "cpu/kubepods/burstable/pod5555/cpu.shares", "358");

        struct container big_init[] = {ctr("init", 1000, UNSET, UNSET, UNSET)};
        struct pod pod2 = mkpod("6666", app, 1);
        pod2.init_containers = big_init;
        pod2.n_init_containers = 1;
        cleanup_free char *parent2 = ensure(cm, &pod2);
        assert_value(t, "cpu/kubepods/burstable/pod6666/cpu.shares", "1024");
        cm_free(cm);
        free_tree(t);
}

static void test_cgroup_root_and_names(void **state)
{
        (void)state;
        struct fake_tree *t = make_tree(false);
        struct cm *cm = new_cm(t, "ck/");
        cleanup_free char *g = cm_pod_cgroup_name(cm, "u1", QOS_GUARANTEED);
        cleanup_free char *b = cm_pod_cgroup_name(cm, "u1", QOS_BURSTABLE);
        cleanup_free char *e = cm_pod_cgroup_name(cm, "u1", QOS_BEST_EFFORT);
        assert_string_equal(g, "/ck/kubepods/podu1");
        assert_string_equal(b, "/ck/kubepods/burstable/podu1");
        assert_string_equal(e, "/ck/kubepods/besteffort/podu1");
        assert_true(exists(t, "cpu/ck/kubepods/burstable"));
        assert_true(exists(t, "memory/ck/kubepods/besteffort"));
        assert_false(exists(t, "cpu/kubepods"));

        struct container cs[] = {ctr("a", 100, UNSET, UNSET, UNSET)};
        struct pod pod = mkpod("u1", cs, 1);
        cleanup_free char *parent = ensure(cm, &pod);
        assert_string_equal(parent, "/ck/kubepods/burstable/podu1");
        assert_value(t, "cpu/ck/kubepods/burstable/podu1/cpu.shares", "102");

        pod.uid = (char *)"../x";
        char *bad = NULL;
        ck_error_t err = NULL;
        assert_true(cm_pod_cgroup_ensure(cm, &pod, &bad, &err) < 0);
        assert_non_null(strstr(ck_error_msg(err), "invalid pod UID"));
        ck_error_release(&err);
        cm_free(cm);
        free_tree(t);
}

static void test_destroy_and_list(void **state)
{
        (void)state;
        struct fake_tree *t = make_tree(false);
        struct cm *cm = new_cm(t, "/ck");
        struct container g[] = {ctr("a", 100, MI, 100, MI)};
        struct container b[] = {ctr("a", 100, UNSET, UNSET, UNSET)};
        struct container e[] = {ctr("a", UNSET, UNSET, UNSET, UNSET)};
        struct pod pg = mkpod("aaa", g, 1), pb = mkpod("bbb", b, 1), pe = mkpod("ccc", e, 1);
        free(ensure(cm, &pg));
        free(ensure(cm, &pb));
        free(ensure(cm, &pe));
        /* a container cgroup below the pod's, as runc makes with cgroupfs */
        cleanup_free char *ctr_dir = xasprintf("%s/cpu/ck/kubepods/burstable/podbbb/c1", t->root);
        assert_int_equal(mkdir(ctr_dir, 0755), 0);

        char **uids = NULL;
        ck_error_t err = NULL;
        assert_int_equal(cm_list_pod_cgroups(cm, &uids, &err), 0);
        size_t n = 0;
        bool seen[3] = {false, false, false};
        for (char **u = uids; *u; u++, n++) {
                seen[0] |= strcmp(*u, "aaa") == 0;
                seen[1] |= strcmp(*u, "bbb") == 0;
                seen[2] |= strcmp(*u, "ccc") == 0;
                free(*u);
        }
        free(uids);
        assert_int_equal(n, 3);
        assert_true(seen[0] && seen[1] && seen[2]);

        assert_int_equal(cm_pod_cgroup_destroy(cm, "bbb", &err), 0);
        assert_false(exists(t, "cpu/ck/kubepods/burstable/podbbb"));
        assert_false(exists(t, "memory/ck/kubepods/burstable/podbbb"));
        assert_false(exists(t, "pids/ck/kubepods/burstable/podbbb"));
        assert_true(exists(t, "cpu/ck/kubepods/podaaa"));
        assert_int_equal(cm_pod_cgroup_destroy(cm, "aaa", &err), 0);
        assert_false(exists(t, "cpu/ck/kubepods/podaaa"));
        assert_true(exists(t, "cpu/ck/kubepods/burstable"));
        /* already gone: fine */
        assert_int_equal(cm_pod_cgroup_destroy(cm, "aaa", &err), 0);

        assert_int_equal(cm_list_pod_cgroups(cm, &uids, &err), 0);
        assert_string_equal(uids[0], "ccc");
        assert_null(uids[1]);
        free(uids[0]);
        free(uids);
        cm_free(cm);
        free_tree(t);
}

/* hybrid layout: the unified hierarchy at <root>/unified gets the pod's
 * cgroup too (runc makes the containers' there), and loses it with it */
static void test_hybrid_unified(void **state)
{
        (void)state;
        struct fake_tree *t = make_tree(false);
        cleanup_free char *unified = xasprintf("%s/unified", t->root);
        assert_int_equal(mkdir(unified, 0755), 0);
        struct cm *cm = new_cm(t, "/ck");
        struct container b[] = {ctr("a", 100, UNSET, UNSET, UNSET)};
        struct pod pb = mkpod("bbb", b, 1);
        free(ensure(cm, &pb));
        assert_true(exists(t, "unified/ck/kubepods/burstable/podbbb"));
        cleanup_free char *ctr_dir =
            xasprintf("%s/unified/ck/kubepods/burstable/podbbb/c1", t->root);
        assert_int_equal(mkdir(ctr_dir, 0755), 0);
        ck_error_t err = NULL;
        assert_int_equal(cm_pod_cgroup_destroy(cm, "bbb", &err), 0);
        assert_false(exists(t, "unified/ck/kubepods/burstable/podbbb"));
        assert_false(exists(t, "cpu/ck/kubepods/burstable/podbbb"));
        assert_true(exists(t, "unified/ck/kubepods/burstable"));
        cm_free(cm);
        free_tree(t);
}

/* a process the runtime lost (a `runc init` of a create cut short) is
 * killed with the pod's cgroup, as upstream's Destroy does */
static void test_destroy_kills_leftovers(void **state)
{
        (void)state;
        struct fake_tree *t = make_tree(false);
        struct cm *cm = new_cm(t, "/ck");
        struct container b[] = {ctr("a", 100, UNSET, UNSET, UNSET)};
        struct pod pb = mkpod("bbb", b, 1);
        free(ensure(cm, &pb));
        pid_t child = fork();
        assert_true(child >= 0);
        if (child == 0) {
                pause();
                _exit(0);
        }
        cleanup_free char *ctr_dir =
            xasprintf("%s/memory/ck/kubepods/burstable/podbbb/c1", t->root);
        assert_int_equal(mkdir(ctr_dir, 0755), 0);
        cleanup_free char *procs = xasprintf("%s/cgroup.procs", ctr_dir);
        FILE *f = fopen(procs, "w");
        assert_non_null(f);
        fprintf(f, "%ld\n", (long)child);
        fclose(f);
        ck_error_t err = NULL;
        assert_int_equal(cm_pod_cgroup_destroy(cm, "bbb", &err), 0);
        int status = 0;
        assert_int_equal(waitpid(child, &status, 0), child);
        assert_true(WIFSIGNALED(status));
        assert_int_equal(WTERMSIG(status), SIGKILL);
        assert_false(exists(t, "memory/ck/kubepods/burstable/podbbb"));
        cm_free(cm);
        free_tree(t);
}

static void test_v2_values(void **state)
{
        (void)state;
        struct fake_tree *t = make_tree(true);
        struct cm *cm = new_cm(t, "/ck");
        struct cm_node_resources n;
        cm_node_resources(cm, &n);
        char want[64];
        snprintf(want, sizeof(want), "%lld", (long long)n.allocatable_memory);
        assert_value(t, "ck/kubepods/memory.max", want);
        snprintf(want, sizeof(want), "%llu",
                 (unsigned long long)cm_cpu_shares_to_weight(
                     cm_milli_cpu_to_shares(n.allocatable_cpu_milli)));
        assert_value(t, "ck/kubepods/cpu.weight", want);
        assert_value(t, "ck/kubepods/besteffort/cpu.weight", "1");
        /* controllers enabled down to the QoS cgroups */
        assert_value(t, "cgroup.subtree_control", "+cpuset +cpu +io +memory +pids");
        assert_value(t, "ck/cgroup.subtree_control", "+cpuset +cpu +io +memory +pids");
        assert_value(t, "ck/kubepods/cgroup.subtree_control", "+cpuset +cpu +io +memory +pids");

        struct container g[] = {ctr("a", 500, 128 * MI, 500, 128 * MI)};
        struct pod pg = mkpod("g1", g, 1);
        cleanup_free char *pgp = ensure(cm, &pg);
        assert_string_equal(pgp, "/ck/kubepods/podg1");
        assert_value(t, "ck/kubepods/podg1/cpu.weight", "20");
        assert_value(t, "ck/kubepods/podg1/cpu.max", "50000 100000");
        assert_value(t, "ck/kubepods/podg1/memory.max", "134217728");
        assert_value(t, "ck/kubepods/podg1/cgroup.subtree_control", NULL);

        struct container b[] = {ctr("a", 250, 64 * MI, 1000, UNSET),
                                ctr("b", 100, UNSET, UNSET, UNSET)};
        struct pod pb = mkpod("b1", b, 2);
        cleanup_free char *pbp = ensure(cm, &pb);
        assert_value(t, "ck/kubepods/burstable/cgroup.subtree_control",
                     "+cpuset +cpu +io +memory +pids");
        assert_value(t, "ck/kubepods/burstable/podb1/cpu.weight", "14");
        assert_value(t, "ck/kubepods/burstable/podb1/cpu.max", NULL);
        assert_value(t, "ck/kubepods/burstable/podb1/memory.max", NULL);
        assert_value(t, "ck/kubepods/burstable/cpu.weight", "14");

        struct container e[] = {ctr("a", UNSET, UNSET, UNSET, UNSET)};
        struct pod pe = mkpod("e1", e, 1);
        cleanup_free char *pep = ensure(cm, &pe);
        assert_value(t, "ck/kubepods/besteffort/pode1/cpu.weight", "1");

        ck_error_t err = NULL;
        assert_int_equal(cm_pod_cgroup_destroy(cm, "g1", &err), 0);
        assert_false(exists(t, "ck/kubepods/podg1"));
        assert_int_equal(cm_pod_cgroup_destroy(cm, "b1", &err), 0);
        assert_false(exists(t, "ck/kubepods/burstable/podb1"));
        assert_value(t, "ck/kubepods/burstable/cpu.weight", "1");
        cm_free(cm);
        free_tree(t);
}

static void write_value(const struct fake_tree *t, const char *rel, const char *value)
{
        cleanup_free char *path = xasprintf("%s/%s", t->root, rel);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "%s\n", value);
        fclose(f);
}

/* spec.overhead in the pod cgroup (upstream ResourceConfigForPod counts it
 * in the requests and in the limits the containers set), and the pod's
 * huge pages limits: its size, 0 for the machine's other sizes. */
static void test_overhead_and_hugetlb(void **state)
{
        (void)state;
        struct fake_tree *t = make_tree(true);
        write_value(t, "cgroup.controllers", "cpuset cpu io memory hugetlb pids");
        struct cm *cm = new_cm(t, "/ck");
        struct container g[] = {ctr("a", 500, 128 * MI, 500, 128 * MI)};
        struct resource_count huge = {.name = (char *)"hugepages-2Mi", .value = 4 * MI};
        /* as decoded: the limit defaults the request */
        g[0].resources.limits.hugepages = &huge;
        g[0].resources.limits.n_hugepages = 1;
        g[0].resources.requests.hugepages = &huge;
        g[0].resources.requests.n_hugepages = 1;
        struct pod p = mkpod("o1", g, 1);
        p.has_overhead = true;
        p.overhead = (struct resource_list){
            .has_cpu = true, .cpu_milli = 250, .has_memory = true, .memory = 64 * MI};
        cleanup_free char *pp = ensure(cm, &p);
        assert_string_equal(pp, "/ck/kubepods/podo1");
        char want[64];
        snprintf(want, sizeof(want), "%llu",
                 (unsigned long long)cm_cpu_shares_to_weight(cm_milli_cpu_to_shares(750)));
        assert_value(t, "ck/kubepods/podo1/cpu.weight", want);
        assert_value(t, "ck/kubepods/podo1/cpu.max", "75000 100000");
        assert_value(t, "ck/kubepods/podo1/memory.max", "201326592"); /* 128Mi + 64Mi */
        int64_t sizes[16];
        size_t n = cm_hugepage_sizes(sizes, ARRAY_SIZE(sizes));
        if (n == 0)
                fail_msg("this host lists no huge page sizes (/sys/kernel/mm/hugepages)");
        for (size_t i = 0; i < n; i++) {
                char name[16];
                cm_hugepage_name(sizes[i], name, sizeof(name));
                cleanup_free char *rel = xasprintf("ck/kubepods/podo1/hugetlb.%s.max", name);
                assert_value(t, rel, sizes[i] == 2 * MI ? "4194304" : "0");
        }
        /* two names of one size are summed, the overhead's added */
        struct container g2[] = {ctr("a", 100, 32 * MI, 100, 32 * MI),
                                 ctr("b", 100, 32 * MI, 100, 32 * MI)};
        struct resource_count h_mi = {.name = (char *)"hugepages-2Mi", .value = 2 * MI};
        struct resource_count h_ki = {.name = (char *)"hugepages-2048Ki", .value = 4 * MI};
        struct resource_count h_over = {.name = (char *)"hugepages-2Mi", .value = 2 * MI};
        g2[0].resources.requests.hugepages = g2[0].resources.limits.hugepages = &h_mi;
        g2[0].resources.requests.n_hugepages = g2[0].resources.limits.n_hugepages = 1;
        g2[1].resources.requests.hugepages = g2[1].resources.limits.hugepages = &h_ki;
        g2[1].resources.requests.n_hugepages = g2[1].resources.limits.n_hugepages = 1;
        struct pod p2 = mkpod("o3", g2, 2);
        p2.has_overhead = true;
        p2.overhead = (struct resource_list){
            .has_cpu = true, .cpu_milli = 10, .hugepages = &h_over, .n_hugepages = 1};
        cleanup_free char *p2p = ensure(cm, &p2);
        for (size_t i = 0; i < n; i++) {
                char name[16];
                cm_hugepage_name(sizes[i], name, sizeof(name));
                cleanup_free char *rel = xasprintf("ck/kubepods/podo3/hugetlb.%s.max", name);
                assert_value(t, rel, sizes[i] == 2 * MI ? "8388608" : "0");
        }

        /* a burstable pod without a memory limit: the overhead raises only
         * its requests */
        struct container b[] = {ctr("a", 100, 64 * MI, 200, UNSET)};
        struct pod pb = mkpod("o2", b, 1);
        pb.has_overhead = true;
        pb.overhead = p.overhead;
        cleanup_free char *pbp = ensure(cm, &pb);
        snprintf(want, sizeof(want), "%llu",
                 (unsigned long long)cm_cpu_shares_to_weight(cm_milli_cpu_to_shares(350)));
        assert_value(t, "ck/kubepods/burstable/podo2/cpu.weight", want);
        assert_value(t, "ck/kubepods/burstable/podo2/memory.max", NULL);
        cm_free(cm);
        free_tree(t);
}

/* An in-place resize: an existing pod cgroup keeps its values through
 * ensure; the resize reads them, computes the new ones and writes each part
 * on its own (upstream GetPodCgroupConfig / SetPodCgroupConfig). */
static void test_pod_resources_resize(void **state)
{
        (void)state;
        for (int v2 = 0; v2 < 2; v2++) {
                struct fake_tree *t = make_tree(v2);
                struct cm *cm = new_cm(t, "");
                struct container cs[] = {ctr("a", 500, 128 * MI, 500, 128 * MI)};
                struct pod pod = mkpod("r1", cs, 1);
                cleanup_free char *parent = ensure(cm, &pod);
                const char *shares =
                    v2 ? "kubepods/podr1/cpu.weight" : "cpu/kubepods/podr1/cpu.shares";
                const char *mem = v2 ? "kubepods/podr1/memory.max"
                                     : "memory/kubepods/podr1/memory.limit_in_bytes";

                /* the allocated pod grows: ensure leaves the cgroup as it is */
                struct container grown[] = {ctr("a", 700, 256 * MI, 700, 256 * MI)};
                struct pod pod2 = mkpod("r1", grown, 1);
                cleanup_free char *parent2 = ensure(cm, &pod2);
                assert_value(t, shares, v2 ? "20" : "512");
                assert_value(t, mem, "134217728");

                struct cm_pod_resources want, have;
                cm_pod_resources_desired(cm, &pod2, &want);
                assert_true(want.has_cpu_shares && want.has_cpu_quota && want.has_memory);
                assert_int_equal(want.cpu_shares, 716);
                assert_int_equal(want.cpu_quota, 70000);
                assert_int_equal(want.memory, 256 * MI);
                ck_error_t err = NULL;
                assert_int_equal(cm_pod_resources_read(cm, &pod2, &have, &err), 0);
                /* v2 keeps cpu.weight: 512 shares come back as 500 */
                assert_int_equal(have.cpu_shares, v2 ? 500 : 512);
                assert_int_equal(have.cpu_quota, 50000);
                assert_int_equal(have.cpu_period, 100000);
                assert_int_equal(have.memory, 128 * MI);

                /* one part at a time: the memory limit alone */
                struct cm_pod_resources w = {.has_memory = true, .memory = want.memory};
                assert_int_equal(cm_pod_resources_write(cm, &pod2, &w, &err), 0);
                assert_value(t, mem, "268435456");
                assert_value(t, shares, v2 ? "20" : "512");
                w = (struct cm_pod_resources){.has_cpu_quota = true,
                                              .cpu_quota = want.cpu_quota,
                                              .cpu_period = want.cpu_period};
                assert_int_equal(cm_pod_resources_write(cm, &pod2, &w, &err), 0);
                assert_value(t,
                             v2 ? "kubepods/podr1/cpu.max" : "cpu/kubepods/podr1/cpu.cfs_quota_us",
                             v2 ? "70000 100000" : "70000");
                w = (struct cm_pod_resources){.has_cpu_shares = true, .cpu_shares = 716};
                assert_int_equal(cm_pod_resources_write(cm, &pod2, &w, &err), 0);
                assert_value(t, shares, v2 ? "28" : "716");

                /* unlimited reads as -1 on v2 ("max") */
                if (v2) {
                        write_value(t, "kubepods/podr1/memory.max", "max");
                        write_value(t, "kubepods/podr1/cpu.max", "max 100000");
                        assert_int_equal(cm_pod_resources_read(cm, &pod2, &have, &err), 0);
                        assert_int_equal(have.memory, -1);
                        assert_int_equal(have.cpu_quota, -1);
                }
                /* the usage a memory decrease is checked against */
                write_value(t,
                            v2 ? "kubepods/podr1/memory.current"
                               : "memory/kubepods/podr1/memory.usage_in_bytes",
                            "12345");
                int64_t usage;
                assert_int_equal(cm_pod_memory_usage(cm, &pod2, &usage, &err), 0);
                assert_int_equal(usage, 12345);
                /* a missing file is an error that names it */
                assert_int_equal(cm_pod_cgroup_destroy(cm, "r1", &err), 0);
                assert_int_equal(cm_pod_memory_usage(cm, &pod2, &usage, &err), -1);
                assert_non_null(strstr(ck_error_msg(err), "r1"));
                ck_error_release(&err);
                cm_free(cm);
                free_tree(t);
        }
        assert_int_equal(cm_cpu_weight_to_shares(1), 2);
        assert_int_equal(cm_cpu_weight_to_shares(10000), 262144);
}

static void test_cgroups_per_qos_off(void **state)
{
        (void)state;
        struct fake_tree *t = make_tree(false);
        struct cm_options o = {
            .cgroupfs_root = t->root,
            .cgroups_per_qos = false,
            .fake_cgroupfs = true,
        };
        struct cm *cm = NULL;
        ck_error_t err = NULL;
        assert_int_equal(cm_new(&o, &cm, &err), 0);
        struct container cs[] = {ctr("a", 100, MI, 100, MI)};
        struct pod pod = mkpod("7777", cs, 1);
        cleanup_free char *parent = ensure(cm, &pod);
        assert_string_equal(parent, "");
        cleanup_free char *name = cm_pod_cgroup_name(cm, "7777", QOS_GUARANTEED);
        assert_string_equal(name, "");
        assert_false(exists(t, "cpu/kubepods"));
        assert_int_equal(cm_pod_cgroup_destroy(cm, "7777", &err), 0);
        cm_free(cm);
        free_tree(t);
}

/* Upstream's CgroupName.ToSystemd / ParseSystemdToCgroupName. */
static void test_systemd_names(void **state)
{
        (void)state;
        static const struct {
                const char *name, *literal, *unit;
        } cases[] = {
            {"", "", "-.slice"},
            {"/kubepods", "/kubepods.slice", "kubepods.slice"},
            {"/kubepods/burstable", "/kubepods.slice/kubepods-burstable.slice",
             "kubepods-burstable.slice"},
            {"/kubepods/burstable/pod12-34",
             "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod12_34.slice",
             "kubepods-burstable-pod12_34.slice"},
            {"/ck-e2e/kubepods/pod9",
             "/ck_e2e.slice/ck_e2e-kubepods.slice/ck_e2e-kubepods-pod9.slice",
             "ck_e2e-kubepods-pod9.slice"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                char *lit = cgroup_name_literal(cases[i].name, true);
                char *unit = cgroup_name_unit(cases[i].name);
                char *fs = cgroup_name_literal(cases[i].name, false);
                assert_string_equal(lit, cases[i].literal);
                assert_string_equal(unit, cases[i].unit);
                assert_string_equal(fs, cases[i].name);
                free(lit);
                free(unit);
                free(fs);
        }
        char *c = cgroup_name_child("kubepods-burstable-pod12_34.slice", true);
        assert_string_equal(c, "pod12-34");
        free(c);
        c = cgroup_name_child("kubepods-burstable.slice", true);
        assert_string_equal(c, "burstable");
        free(c);
        assert_null(cgroup_name_child("cri-containerd-abc.scope", true));
        assert_null(cgroup_name_child("kubepods-.slice", true));
        c = cgroup_name_child("pod12-34", false);
        assert_string_equal(c, "pod12-34");
        free(c);
}

static void assert_calls(struct fake_systemd *f, const char *want)
{
        cleanup_free char *got = fake_systemd_take_calls(f);
        if (strcmp(got, want) != 0)
                fail_msg("systemd calls:\n%s\nwant:\n%s", got, want);
}

/* The systemd driver against a fake of systemd's D-Bus API on a v2 tree:
 * every cgroup a slice started with its values as unit properties (and in
 * its files), the pod's cgroup parent the slice path, a pod cgroup that
 * exists kept as it is, removal through StopUnit, the pod cgroups read back
 * from the slice names, and systemd's refusal as a clear error. */
static void test_systemd_driver(void **state)
{
        (void)state;
        struct fake_tree *t = make_tree(true);
        struct fake_systemd *f = fake_systemd_start_server(t->root);
        struct cm_options o = {
            .cgroupfs_root = t->root,
            .cgroup_root = "/ck-e2e",
            .cgroups_per_qos = true,
            .cgroup_driver = "systemd",
            .systemd_address = f->address,
            .reserved_cpu_milli = 100,
            .reserved_memory = 64 * MI,
            .fake_cgroupfs = true,
        };
        struct cm *cm = NULL;
        ck_error_t err = NULL;
        if (cm_new(&o, &cm, &err) < 0)
                fail_msg("cm_new: %s", ck_error_msg(err));
        struct cm_node_resources n;
        cm_node_resources(cm, &n);
        unsigned long long weight =
            cm_cpu_shares_to_weight(cm_milli_cpu_to_shares(n.allocatable_cpu_milli));
        char want[2048];
        snprintf(want, sizeof(want),
                 "start ck_e2e.slice Wants=-.slice DefaultDependencies=no MemoryAccounting=yes "
                 "CPUAccounting=yes TasksAccounting=yes IOAccounting=yes\n"
                 "start ck_e2e-kubepods.slice Wants=ck_e2e.slice DefaultDependencies=no "
                 "MemoryAccounting=yes CPUAccounting=yes TasksAccounting=yes IOAccounting=yes "
                 "CPUWeight=%llu MemoryMax=%lld\n"
                 "start ck_e2e-kubepods-burstable.slice Wants=ck_e2e-kubepods.slice "
                 "DefaultDependencies=no MemoryAccounting=yes CPUAccounting=yes "
                 "TasksAccounting=yes IOAccounting=yes CPUWeight=1\n"
                 "start ck_e2e-kubepods-besteffort.slice Wants=ck_e2e-kubepods.slice "
                 "DefaultDependencies=no MemoryAccounting=yes CPUAccounting=yes "
                 "TasksAccounting=yes IOAccounting=yes CPUWeight=1\n",
                 weight, (long long)n.allocatable_memory);
        assert_calls(f, want);
        /* the files too, at the slice paths */
        snprintf(want, sizeof(want), "%llu", weight);
        assert_value(t, "ck_e2e.slice/ck_e2e-kubepods.slice/cpu.weight", want);

        /* a Guaranteed pod: its slice with quota and limit */
        struct container g[] = {ctr("a", 500, 128 * MI, 500, 128 * MI)};
        struct pod pg = mkpod("12-34", g, 1);
        cleanup_free char *parent = ensure(cm, &pg);
        assert_string_equal(parent,
                            "/ck_e2e.slice/ck_e2e-kubepods.slice/ck_e2e-kubepods-pod12_34.slice");
        assert_calls(f, "start ck_e2e-kubepods-pod12_34.slice Wants=ck_e2e-kubepods.slice "
                        "DefaultDependencies=no MemoryAccounting=yes CPUAccounting=yes "
                        "TasksAccounting=yes IOAccounting=yes CPUWeight=20 "
                        "CPUQuotaPerSecUSec=500000 CPUQuotaPeriodUSec=100000 "
                        "MemoryMax=134217728\n");
        assert_value(t, "ck_e2e.slice/ck_e2e-kubepods.slice/ck_e2e-kubepods-pod12_34.slice/cpu.max",
                     "50000 100000");
        cleanup_free char *name = cm_pod_cgroup_name(cm, "12-34", QOS_GUARANTEED);
        assert_string_equal(name, parent);
        /* ensured again (a restart of the agent): kept as it is */
        cleanup_free char *again = ensure(cm, &pg);
        assert_calls(f, "");

        /* the pod cgroups read back from the slice names */
        char **uids = NULL;
        assert_int_equal(cm_list_pod_cgroups(cm, &uids, &err), 0);
        assert_non_null(uids[0]);
        assert_string_equal(uids[0], "12-34");
        assert_null(uids[1]);
        free(uids[0]);
        free(uids);

        /* a Burstable pod: the burstable slice's weight follows its requests */
        struct container b[] = {ctr("a", 250, 64 * MI, 1000, UNSET)};
        struct pod pb = mkpod("b1", b, 1);
        cleanup_free char *pbp = ensure(cm, &pb);
        assert_calls(f, "set ck_e2e-kubepods-burstable.slice (runtime) CPUWeight=10\n"
                        "start ck_e2e-kubepods-burstable-podb1.slice "
                        "Wants=ck_e2e-kubepods-burstable.slice DefaultDependencies=no "
                        "MemoryAccounting=yes CPUAccounting=yes TasksAccounting=yes "
                        "IOAccounting=yes CPUWeight=10 CPUQuotaPerSecUSec=1000000 "
                        "CPUQuotaPeriodUSec=100000\n");

        /* removal: StopUnit of each QoS class's name (systemd does not know
         * the ones the pod does not have), then the burstable weight */
        assert_int_equal(cm_pod_cgroup_destroy(cm, "12-34", &err), 0);
        assert_calls(f, "stop ck_e2e-kubepods-pod12_34.slice\n"
                        "stop ck_e2e-kubepods-burstable-pod12_34.slice\n"
                        "stop ck_e2e-kubepods-besteffort-pod12_34.slice\n");
        assert_false(
            exists(t, "ck_e2e.slice/ck_e2e-kubepods.slice/ck_e2e-kubepods-pod12_34.slice"));

        /* systemd re-executed: the next call connects again */
        atomic_store(&f->drop, true);
        while (atomic_load(&f->drop))
                usleep(10000);
        usleep(100000);
        struct container b2[] = {ctr("a", 250, 64 * MI, UNSET, UNSET)};
        struct pod pb2 = mkpod("b2", b2, 1);
        cleanup_free char *pb2p = ensure(cm, &pb2);
        cleanup_free char *calls = fake_systemd_take_calls(f);
        assert_non_null(strstr(calls, "start ck_e2e-kubepods-burstable-podb2.slice"));

        /* systemd refusing a slice: the error names the unit and its answer */
        f->fail_start = true;
        struct container e[] = {ctr("a", UNSET, UNSET, UNSET, UNSET)};
        struct pod pe = mkpod("e1", e, 1);
        char *p = NULL;
        assert_true(cm_pod_cgroup_ensure(cm, &pe, &p, &err) < 0);
        assert_non_null(strstr(ck_error_msg(err), "start ck_e2e-kubepods-besteffort-pode1.slice: "
                                                  "no slices today"));
        ck_error_release(&err);
        cm_free(cm);
        fake_systemd_free(f);
        free_tree(t);
}

static void test_rejected_configurations(void **state)
{
        (void)state;
        struct fake_tree *t = make_tree(false);
        struct cm *cm = NULL;
        ck_error_t err = NULL;

        struct cm_options systemd = {.cgroupfs_root = t->root,
                                     .cgroups_per_qos = true,
                                     .cgroup_driver = "systemd",
                                     .fake_cgroupfs = true};
        /* systemd not there: the start fails naming where it looked */
        systemd.systemd_address = "unix:path=/nonexistent/systemd/private";
        assert_true(cm_new(&systemd, &cm, &err) < 0);
        assert_non_null(strstr(ck_error_msg(err), "connect to systemd at "
                                                  "unix:path=/nonexistent/systemd/private"));
        ck_error_release(&err);
        assert_false(exists(t, "cpu/kubepods"));

        struct cm_options dotdot = {.cgroupfs_root = t->root,
                                    .cgroup_root = "/a/../..",
                                    .cgroups_per_qos = true,
                                    .fake_cgroupfs = true};
        assert_true(cm_new(&dotdot, &cm, &err) < 0);
        assert_non_null(strstr(ck_error_msg(err), "--cgroup-root"));
        ck_error_release(&err);

        /* failCgroupV1 (upstream's default): a v1 host is refused */
        struct cm_options v1 = {.cgroupfs_root = t->root,
                                .cgroups_per_qos = true,
                                .fake_cgroupfs = true,
                                .fail_cgroup_v1 = true};
        assert_true(cm_new(&v1, &cm, &err) < 0);
        assert_string_equal(ck_error_msg(err),
                            "kubelet is configured to not run on a host using cgroup v1. cgroup "
                            "v1 support is unsupported and will be removed in a future release");
        ck_error_release(&err);
        assert_false(exists(t, "cpu/kubepods"));
        struct fake_tree *t2 = make_tree(true);
        struct cm_options v2 = {.cgroupfs_root = t2->root,
                                .cgroups_per_qos = true,
                                .fake_cgroupfs = true,
                                .fail_cgroup_v1 = true};
        if (cm_new(&v2, &cm, &err) < 0)
                fail_msg("cm_new on v2 with failCgroupV1: %s", ck_error_msg(err));
        cm_free(cm);
        free_tree(t2);

        /* without the fake flag, plain directories are no cgroup hierarchy */
        struct cm_options real = {.cgroupfs_root = t->root, .cgroups_per_qos = true};
        assert_true(cm_new(&real, &cm, &err) < 0);
        assert_non_null(strstr(ck_error_msg(err), "controller cpu is not mounted"));
        ck_error_release(&err);
        assert_false(exists(t, "cpu/kubepods"));
        free_tree(t);
}

/* failSwapOn as upstream: /proc/swaps with an entry under its header is
 * swap on, refused unless failSwapOn is false; a header alone or no file
 * at all is off. */
static void test_fail_swap_on(void **state)
{
        (void)state;
        struct fake_tree *t = make_tree(false);
        cleanup_free char *swaps = xasprintf("%s/swaps", t->root);
        struct cm_options o = {.cgroupfs_root = t->root,
                               .cgroups_per_qos = false,
                               .fake_cgroupfs = true,
                               .fail_swap_on = true,
                               .proc_swaps = swaps};
        struct cm *cm = NULL;
        ck_error_t err = NULL;
        const char *header = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n";
        cleanup_free char *on = xasprintf("%s/swapfile                               file\t\t"
                                          "1048572\t\t0\t\t-2\n",
                                          header);

        /* no file: off */
        assert_int_equal(cm_new(&o, &cm, &err), 0);
        cm_free(cm);
        cm = NULL;
        /* the header alone: off */
        assert_int_equal(fs_write_file_atomic(swaps, header, strlen(header), 0644, &err), 0);
        assert_int_equal(cm_new(&o, &cm, &err), 0);
        cm_free(cm);
        cm = NULL;
        /* an entry: on, refused */
        assert_int_equal(fs_write_file_atomic(swaps, on, strlen(on), 0644, &err), 0);
        assert_true(cm_new(&o, &cm, &err) < 0);
        assert_string_equal(ck_error_msg(err), "running with swap on is not supported, please "
                                               "disable swap or set --fail-swap-on flag to false");
        ck_error_release(&err);
        assert_null(cm);
        /* ... and allowed with failSwapOn false */
        o.fail_swap_on = false;
        assert_int_equal(cm_new(&o, &cm, &err), 0);
        cm_free(cm);
        free_tree(t);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_conversions),
            cmocka_unit_test(test_fail_swap_on),
            cmocka_unit_test(test_v1_node_allocatable_and_qos),
            cmocka_unit_test(test_v1_guaranteed),
            cmocka_unit_test(test_v1_burstable),
            cmocka_unit_test(test_v1_besteffort_and_pids),
            cmocka_unit_test(test_init_and_sidecar_requests),
            cmocka_unit_test(test_cgroup_root_and_names),
            cmocka_unit_test(test_destroy_and_list),
            cmocka_unit_test(test_hybrid_unified),
            cmocka_unit_test(test_destroy_kills_leftovers),
            cmocka_unit_test(test_v2_values),
            cmocka_unit_test(test_overhead_and_hugetlb),
            cmocka_unit_test(test_pod_resources_resize),
            cmocka_unit_test(test_cgroups_per_qos_off),
            cmocka_unit_test(test_systemd_names),
            cmocka_unit_test(test_systemd_driver),
            cmocka_unit_test(test_rejected_configurations),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
