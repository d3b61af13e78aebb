/* SPDX-License-Identifier: Apache-2.0 */
/* The container manager: node capacity, the kubepods / QoS cgroups (upstream
 * node_container_manager_linux.go, qos_container_manager_linux.go) and the
 * pod cgroups (pod_container_manager_linux.go). */
#include "cm/cm.h"
#include "cm/cgroup_driver.h"
#include "cm/resource_config.h"
#include "cm/systemd.h"
#include "stats/stats.h"
#include "util/cgroup_name.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_CGROUPFS_ROOT "/sys/fs/cgroup"
#define NODE_ALLOCATABLE_CGROUP "kubepods"
#define POD_CGROUP_PREFIX "pod"

/* A Burstable pod's cpu request, summed into the burstable cgroup's shares. */
struct burstable_pod {
        char *uid;
        int64_t cpu_requests;
};

struct cm {
        pthread_mutex_t lock;
        bool per_qos;
        int64_t pod_pids_limit;
        char *kubepods;   /* "<root>/kubepods": Guaranteed pods' parent */
        char *burstable;  /* "<root>/kubepods/burstable" */
        char *besteffort; /* "<root>/kubepods/besteffort" */
        struct cgroup_fs *fs;
        /* the systemd driver: each cgroup a slice unit, made through sd */
        bool systemd;
        struct cm_systemd *sd;
        struct cm_node_resources node;
        struct burstable_pod *burstable_pods; /* guarded by lock */
        size_t n_burstable_pods;
};

/* --cgroup-root as upstream's ParseCgroupfsToCgroupName reads it: "" and "/"
 * are the top; "ck", "/ck/" are "/ck".  ".." could leave the hierarchy. */
static int normalize_cgroup_root(const char *in, char **out, ck_error_t *err)
{
        size_t len = in ? strlen(in) : 0;
        char *res = xcalloc(1, len + 2);
        size_t n = 0;
        const char *p = in ? in : "";
        while (*p) {
                while (*p == '/')
                        p++;
                size_t c = strcspn(p, "/");
                if (c == 0)
                        break;
                if ((c == 1 && p[0] == '.') || (c == 2 && p[0] == '.' && p[1] == '.')) {
                        free(res);
                        return ck_error_make(err, EINVAL,
                                             "invalid --cgroup-root \"%s\": \"%.*s\" component", in,
                                             (int)c, p);
                }
                res[n++] = '/';
                memcpy(res + n, p, c);
                n += c;
                p += c;
        }
        res[n] = '\0';
        *out = res;
        return 0;
}

static void node_resources(const struct cm_options *opts, struct cm_node_resources *n)
{
        /* the machine's facts, read once for the whole agent (src/stats) */
        const struct stats_machine_info *mi = stats_machine_info();
        n->capacity_cpu_milli = mi->num_cores * 1000;
        n->capacity_memory = mi->memory_capacity;
        n->allocatable_cpu_milli = n->capacity_cpu_milli - opts->reserved_cpu_milli;
        n->allocatable_memory = n->capacity_memory - opts->reserved_memory;
        if (n->allocatable_cpu_milli < 0)
                n->allocatable_cpu_milli = 0;
        if (n->allocatable_memory < 0)
                n->allocatable_memory = 0;
}

/* ---- The naming and creation axis: cgroupfs or systemd ------------------------ */

/* A cgroup is named in cgroupfs form ("/ck/kubepods/pod<uid>", upstream's
 * CgroupName); the filesystem drivers are handed its path in the hierarchy
 * (upstream cgroupManager.Name): the same for cgroupfs, the slice path for
 * systemd.  With systemd, systemd makes and removes the directories (slice
 * units, as runc's systemd manager does for the upstream kubelet), and the
 * values are set both as unit properties (which systemd re-applies) and in
 * the control files (which it has no property for: hugetlb). */
static char *literal(const struct cm *cm, const char *name)
{
        return cgroup_name_literal(name, cm->systemd);
}

static bool cg_exists(const struct cm *cm, const char *name)
{
        cleanup_free char *path = literal(cm, name);
        return cm_cgroup_exists(cm->fs, path);
}

/* Makes the cgroup with r's values (NULL: none). */
static int cg_create(struct cm *cm, const char *name, const struct cgroup_resources *r,
                     ck_error_t *err)
{
        static const struct cgroup_resources none;
        cleanup_free char *path = literal(cm, name);
        if (cm->systemd) {
                cleanup_free char *unit = cgroup_name_unit(name);
                cleanup_free char *parent_name = xstrdup(name);
                char *slash = strrchr(parent_name, '/');
                if (slash)
                        *slash = '\0';
                cleanup_free char *parent = cgroup_name_unit(parent_name);
                if (cm_systemd_start_slice(cm->sd, unit, parent, r ? r : &none, err) < 0)
                        return ck_error_wrap(err, "cgroup \"%s\"", name);
        }
        if (cm->fs->driver->create(cm->fs, path, err) < 0 ||
            (r && cm->fs->driver->set(cm->fs, path, r, err) < 0))
                return ck_error_wrap(err, "cgroup \"%s\"", name);
        return 0;
}

static int cg_set(struct cm *cm, const char *name, const struct cgroup_resources *r,
                  ck_error_t *err)
{
        cleanup_free char *path = literal(cm, name);
        if (cm->systemd) {
                cleanup_free char *unit = cgroup_name_unit(name);
                if (cm_systemd_set(cm->sd, unit, r, err) < 0)
                        return -1;
        }
        return cm->fs->driver->set(cm->fs, path, r, err);
}

/* Kills what is left in the cgroup, then removes it (systemd: stops its
 * unit first). */
static int cg_destroy(struct cm *cm, const char *name, ck_error_t *err)
{
        cleanup_free char *path = literal(cm, name);
        if (cm_cgroup_kill_all(cm->fs, path, err) < 0)
                return -1;
        if (cm->systemd) {
                cleanup_free char *unit = cgroup_name_unit(name);
                if (cm_systemd_stop(cm->sd, unit, err) < 0)
                        return -1;
        }
        return cm_cgroup_destroy(cm->fs, path, err);
}

/* The burstable cgroup's shares: the sum of its pods' cpu requests
 * (upstream setCPUCgroupConfig).  Called with the lock held. */
static int update_burstable_shares(struct cm *cm, ck_error_t *err)
{
        int64_t sum = 0;
        for (size_t i = 0; i < cm->n_burstable_pods; i++)
                sum += cm->burstable_pods[i].cpu_requests;
        struct cgroup_resources r = {
            .has_cpu_shares = true,
            .cpu_shares = cm_milli_cpu_to_shares(sum),
        };
        if (cg_set(cm, cm->burstable, &r, err) < 0)
                return ck_error_wrap(err, "update QoS cgroup \"%s\"", cm->burstable);
        return 0;
}

static int create_qos_cgroups(struct cm *cm, const char *root, ck_error_t *err)
{
        if (*root != '\0' && !cg_exists(cm, root)) {
                LOG_INFO(2, "Creating the cgroup root", "cgroupRoot=\"%s\"", root);
                if (cg_create(cm, root, NULL, err) < 0)
                        return ck_error_wrap(err, "create cgroup root \"%s\"", root);
        }
        /* node allocatable on kubepods (enforceNodeAllocatableCgroups) */
        struct cgroup_resources node = {
            .has_cpu_shares = true,
            .cpu_shares = cm_milli_cpu_to_shares(cm->node.allocatable_cpu_milli),
            .has_memory = cm->node.allocatable_memory > 0,
            .memory = cm->node.allocatable_memory,
            .hugetlb = CGROUP_HUGETLB_CAPACITY,
        };
        if (cg_create(cm, cm->kubepods, &node, err) < 0)
                return -1;
        /* burstable: shares from its pods (none yet); besteffort: the minimum */
        struct cgroup_resources qos = {
            .has_cpu_shares = true,
            .cpu_shares = cm_milli_cpu_to_shares(0),
            .hugetlb = CGROUP_HUGETLB_UNBOUNDED,
        };
        if (cg_create(cm, cm->burstable, &qos, err) < 0 ||
            cg_create(cm, cm->besteffort, &qos, err) < 0)
                return -1;
        return 0;
}

/* upstream swap.IsSwapOn: /proc/swaps has lines beyond its header. */
static int swap_on(const char *path, bool *on, ck_error_t *err)
{
        *on = false;
        cleanup_free char *text = NULL;
        size_t len = 0;
        if (fs_read_file(path, 1 << 20, &text, &len, err) < 0) {
                if ((*err)->status == ENOENT) {
                        ck_error_release(err);
                        return 0; /* upstream: assumed off */
                }
                return -1;
        }
        /* trimmed, more than one line */
        while (len > 0 && isspace((unsigned char)text[len - 1]))
                text[--len] = '\0';
        const char *s = text;
        while (*s && isspace((unsigned char)*s))
                s++;
        *on = strchr(s, '\n') != NULL;
        return 0;
}

int cm_new(const struct cm_options *opts, struct cm **out, ck_error_t *err)
{
        bool swap = false;
        if (swap_on(opts->proc_swaps ? opts->proc_swaps : "/proc/swaps", &swap, err) < 0)
                return ck_error_wrap(err, "failed to determine if swap is on");
        if (swap && opts->fail_swap_on)
                return ck_error_make(err, 0,
                                     "running with swap on is not supported, please disable swap "
                                     "or set --fail-swap-on flag to false");
        if (swap)
                LOG_INFO(0, "Swap is on; running, as failSwapOn is false", "path=\"%s\"",
                         opts->proc_swaps ? opts->proc_swaps : "/proc/swaps");
        const char *fsroot = opts->cgroupfs_root ? opts->cgroupfs_root : DEFAULT_CGROUPFS_ROOT;
        if (cm_check_cgroup_v1(fsroot, opts->fail_cgroup_v1, err) < 0)
                return -1;
        if (!cm_cgroup_unified(fsroot)) {
                /* allowed: upstream's warning (kubelet_linux.go) */
                LOG_WARN("cgroup v1 detected. cgroup v1 support is deprecated and will be "
                         "removed in a future release. Please migrate to cgroup v2. More "
                         "information at "
                         "https://git.k8s.io/enhancements/keps/sig-node/5573-remove-cgroup-v1",
                         "cgroupfsRoot=\"%s\"", fsroot);
        }
        const char *driver = opts->cgroup_driver ? opts->cgroup_driver : "cgroupfs";
        if (strcmp(driver, "cgroupfs") != 0 && strcmp(driver, "systemd") != 0 && *driver != '\0')
                return ck_error_make(err, 0, "unknown cgroup driver \"%s\"", driver);
        cleanup_free char *root = NULL;
        if (normalize_cgroup_root(opts->cgroup_root, &root, err) < 0)
                return -1;

        struct cm *cm = xcalloc(1, sizeof(*cm));
        pthread_mutex_init(&cm->lock, NULL);
        cm->per_qos = opts->cgroups_per_qos;
        cm->systemd = strcmp(driver, "systemd") == 0;
        cm->pod_pids_limit = opts->pod_pids_limit;
        node_resources(opts, &cm->node);
        cm->kubepods = xasprintf("%s/" NODE_ALLOCATABLE_CGROUP, root);
        cm->burstable = xasprintf("%s/burstable", cm->kubepods);
        cm->besteffort = xasprintf("%s/besteffort", cm->kubepods);
        if (!cm->per_qos) {
                *out = cm;
                return 0;
        }

        if (cm_cgroup_fs_open(fsroot, opts->fake_cgroupfs, &cm->fs, err) < 0 ||
            (cm->systemd &&
             cm_systemd_open(opts->systemd_address, cm->fs->driver == &cm_cgroup_v2_driver, &cm->sd,
                             err) < 0) ||
            create_qos_cgroups(cm, root, err) < 0) {
                cm_free(cm);
                return ck_error_wrap(err, "container manager");
        }
        LOG_INFO(2, "Created the QoS cgroups",
                 "cgroupVersion=\"%s\" cgroupDriver=\"%s\" kubepods=\"%s\"", cm->fs->driver->name,
                 cm->systemd ? "systemd" : "cgroupfs", cm->kubepods);
        *out = cm;
        return 0;
}

int cm_check_cgroup_v1(const char *cgroupfs_root, bool fail_cgroup_v1, ck_error_t *err)
{
        const char *root = cgroupfs_root ? cgroupfs_root : DEFAULT_CGROUPFS_ROOT;
        /* upstream validateKubeletOSConfiguration */
        if (fail_cgroup_v1 && !cm_cgroup_unified(root))
                return ck_error_make(err, 0,
                                     "kubelet is configured to not run on a host using cgroup v1. "
                                     "cgroup v1 support is unsupported and will be removed in a "
                                     "future release");
        return 0;
}

void cm_free(struct cm *cm)
{
        if (cm == NULL)
                return;
        cm_systemd_close(cm->sd);
        cm_cgroup_fs_free(cm->fs);
        for (size_t i = 0; i < cm->n_burstable_pods; i++)
                free(cm->burstable_pods[i].uid);
        free(cm->burstable_pods);
        free(cm->kubepods);
        free(cm->burstable);
        free(cm->besteffort);
        pthread_mutex_destroy(&cm->lock);
        free(cm);
}

void cm_node_resources(const struct cm *cm, struct cm_node_resources *out)
{
        *out = cm->node;
}

/* A pod UID is one path component of the cgroup name. */
static int check_uid(const char *uid, ck_error_t *err)
{
        if (uid == NULL || *uid == '\0' || strchr(uid, '/') != NULL || strcmp(uid, ".") == 0 ||
            strcmp(uid, "..") == 0)
                return ck_error_make(err, 0, "invalid pod UID \"%s\" for a cgroup name",
                                     uid ? uid : "");
        return 0;
}

static const char *qos_parent(const struct cm *cm, enum qos_class qos)
{
        switch (qos) {
        case QOS_BURSTABLE:
                return cm->burstable;
        case QOS_BEST_EFFORT:
                return cm->besteffort;
        case QOS_GUARANTEED:
                break;
        }
        return cm->kubepods;
}

/* The pod cgroup's name (cgroupfs form). */
static char *pod_cgroup_name(const struct cm *cm, const char *uid, enum qos_class qos)
{
        return xasprintf("%s/" POD_CGROUP_PREFIX "%s", qos_parent(cm, qos), uid);
}

char *cm_pod_cgroup_name(const struct cm *cm, const char *uid, enum qos_class qos)
{
        if (!cm->per_qos)
                return xstrdup("");
        cleanup_free char *name = pod_cgroup_name(cm, uid, qos);
        return literal(cm, name);
}

/* Records (or forgets, when remove) a Burstable pod's cpu request; true if
 * the recorded sum changed.  Lock held. */
static bool track_burstable(struct cm *cm, const char *uid, int64_t cpu_requests, bool remove)
{
        for (size_t i = 0; i < cm->n_burstable_pods; i++) {
                struct burstable_pod *bp = &cm->burstable_pods[i];
                if (strcmp(bp->uid, uid) != 0)
                        continue;
                if (remove) {
                        free(bp->uid);
                        *bp = cm->burstable_pods[--cm->n_burstable_pods];
                        return true;
                }
                bool changed = bp->cpu_requests != cpu_requests;
                bp->cpu_requests = cpu_requests;
                return changed;
        }
        if (remove)
                return false;
        cm->burstable_pods =
            xrealloc(cm->burstable_pods, (cm->n_burstable_pods + 1) * sizeof(*cm->burstable_pods));
        cm->burstable_pods[cm->n_burstable_pods].uid = xstrdup(uid);
        cm->burstable_pods[cm->n_burstable_pods++].cpu_requests = cpu_requests;
        return true;
}

int cm_pod_cgroup_ensure(struct cm *cm, const struct pod *pod, char **parent, ck_error_t *err)
{
        if (!cm->per_qos) {
                *parent = xstrdup("");
                return 0;
        }
        if (check_uid(pod->uid, err) < 0)
                return ck_error_wrap(err, "pod cgroup");
        enum qos_class qos = pod_qos_class(pod);
        cleanup_free char *name = pod_cgroup_name(cm, pod->uid, qos);
        struct cgroup_resources r;
        cm_pod_resource_config(pod, qos, cm->pod_pids_limit, &r);
        cleanup_free char *path = literal(cm, name);

        pthread_mutex_lock(&cm->lock);
        int ret = 0;
        /* the QoS cgroup first, as syncPod's UpdateQOSCgroups precedes EnsureExists */
        if (qos == QOS_BURSTABLE) {
                struct cm_pod_totals t;
                cm_pod_totals(pod, &t);
                if (track_burstable(cm, pod->uid, t.cpu_requests, false))
                        ret = update_burstable_shares(cm, err);
        }
        if (ret == 0 && cm_cgroup_exists(cm->fs, path)) {
                /* its values stand: only a resize changes them; the
                 * hierarchies it may lack are still made */
                if (cm->fs->driver->create(cm->fs, path, err) < 0)
                        ret = ck_error_wrap(err, "cgroup \"%s\"", name);
        } else if (ret == 0) {
                ret = cg_create(cm, name, &r, err);
                /* a cgroup made without its values is made again next time
                 * (an existing one keeps what it has) */
                ck_error_t undo = NULL;
                if (ret < 0 && cg_destroy(cm, name, &undo) < 0)
                        LOG_WARN("Failed to remove a pod cgroup whose values failed",
                                 "cgroup=\"%s\" err=\"%s\"", name, ck_error_msg(undo));
                ck_error_release(&undo);
        }
        pthread_mutex_unlock(&cm->lock);
        if (ret < 0)
                return ck_error_wrap(err, "pod cgroup");
        LOG_INFO(4, "Pod cgroup ensured", "pod=\"%s/%s\" cgroup=\"%s\" qos=\"%s\"",
                 pod->namespace ? pod->namespace : "", pod->name ? pod->name : "", name,
                 qos_class_name(qos));
        *parent = path;
        path = NULL;
        return 0;
}

void cm_pod_resources_desired(const struct cm *cm, const struct pod *pod,
                              struct cm_pod_resources *out)
{
        (void)cm;
        struct cgroup_resources r;
        cm_pod_resource_config(pod, pod_qos_class(pod), 0, &r);
        *out = (struct cm_pod_resources){
            .has_cpu_shares = r.has_cpu_shares,
            .cpu_shares = r.cpu_shares,
            .has_cpu_quota = r.has_cpu_quota,
            .cpu_quota = r.cpu_quota == 0 ? -1 : r.cpu_quota,
            .cpu_period = r.cpu_period,
            .has_memory = r.has_memory,
            .memory = r.memory == 0 ? -1 : r.memory,
        };
}

int cm_pod_resources_read(struct cm *cm, const struct pod *pod, struct cm_pod_resources *out,
                          ck_error_t *err)
{
        memset(out, 0, sizeof(*out));
        if (!cm->per_qos)
                return 0;
        if (check_uid(pod->uid, err) < 0)
                return ck_error_wrap(err, "pod cgroup");
        cleanup_free char *name = pod_cgroup_name(cm, pod->uid, pod_qos_class(pod));
        cleanup_free char *path = literal(cm, name);
        struct cgroup_resources r = {0};
        pthread_mutex_lock(&cm->lock);
        int ret = cm->fs->driver->get(cm->fs, path, &r, err);
        pthread_mutex_unlock(&cm->lock);
        if (ret < 0)
                return ck_error_wrap(err, "read pod cgroup \"%s\"", name);
        *out = (struct cm_pod_resources){
            .has_cpu_shares = true,
            .cpu_shares = r.cpu_shares,
            .has_cpu_quota = true,
            .cpu_quota = r.cpu_quota,
            .cpu_period = r.cpu_period,
            .has_memory = true,
            .memory = r.memory,
        };
        return 0;
}

int cm_pod_resources_write(struct cm *cm, const struct pod *pod, const struct cm_pod_resources *r,
                           ck_error_t *err)
{
        if (!cm->per_qos)
                return 0;
        if (check_uid(pod->uid, err) < 0)
                return ck_error_wrap(err, "pod cgroup");
        cleanup_free char *name = pod_cgroup_name(cm, pod->uid, pod_qos_class(pod));
        struct cgroup_resources w = {
            .has_cpu_shares = r->has_cpu_shares,
            .cpu_shares = r->cpu_shares,
            .has_cpu_quota = r->has_cpu_quota,
            .cpu_quota = r->cpu_quota,
            .cpu_period = r->cpu_period ? r->cpu_period : CM_CPU_PERIOD_US,
            .has_memory = r->has_memory,
            .memory = r->memory,
        };
        pthread_mutex_lock(&cm->lock);
        int ret = 0;
        if (pod_qos_class(pod) == QOS_BURSTABLE && r->has_cpu_shares) {
                /* the burstable class's shares follow its pods' requests */
                struct cm_pod_totals t;
                cm_pod_totals(pod, &t);
                if (track_burstable(cm, pod->uid, t.cpu_requests, false))
                        ret = update_burstable_shares(cm, err);
        }
        if (ret == 0 && cg_set(cm, name, &w, err) < 0)
                ret = ck_error_wrap(err, "set pod cgroup \"%s\"", name);
        pthread_mutex_unlock(&cm->lock);
        return ret;
}

int cm_pod_memory_usage(struct cm *cm, const struct pod *pod, int64_t *usage, ck_error_t *err)
{
        *usage = -1;
        if (!cm->per_qos)
                return 0;
        if (check_uid(pod->uid, err) < 0)
                return ck_error_wrap(err, "pod cgroup");
        cleanup_free char *name = pod_cgroup_name(cm, pod->uid, pod_qos_class(pod));
        cleanup_free char *path = literal(cm, name);
        pthread_mutex_lock(&cm->lock);
        int ret = cm->fs->driver->memory_usage(cm->fs, path, usage, err);
        pthread_mutex_unlock(&cm->lock);
        if (ret < 0)
                return ck_error_wrap(err, "memory usage of pod cgroup \"%s\"", name);
        return 0;
}

int cm_pod_cgroup_destroy(struct cm *cm, const char *uid, ck_error_t *err)
{
        if (!cm->per_qos)
                return 0;
        if (check_uid(uid, err) < 0)
                return ck_error_wrap(err, "destroy pod cgroup");
        static const enum qos_class classes[] = {QOS_GUARANTEED, QOS_BURSTABLE, QOS_BEST_EFFORT};
        int ret = 0;
        pthread_mutex_lock(&cm->lock);
        for (size_t i = 0; i < ARRAY_SIZE(classes) && ret == 0; i++) {
                cleanup_free char *name = pod_cgroup_name(cm, uid, classes[i]);
                if (cg_destroy(cm, name, err) < 0)
                        ret = ck_error_wrap(err, "destroy pod cgroup \"%s\"", name);
        }
        if (ret == 0 && track_burstable(cm, uid, 0, true))
                ret = update_burstable_shares(cm, err);
        pthread_mutex_unlock(&cm->lock);
        return ret;
}

int cm_list_pod_cgroups(struct cm *cm, char ***uids, ck_error_t *err)
{
        size_t n = 0;
        char **list = xcalloc(1, sizeof(*list));
        if (!cm->per_qos) {
                *uids = list;
                return 0;
        }
        const char *parents[] = {cm->kubepods, cm->burstable, cm->besteffort};
        for (size_t i = 0; i < ARRAY_SIZE(parents); i++) {
                char **children = NULL;
                cleanup_free char *path = literal(cm, parents[i]);
                pthread_mutex_lock(&cm->lock);
                int ret = cm_cgroup_list_children(cm->fs, path, &children, err);
                pthread_mutex_unlock(&cm->lock);
                if (ret < 0) {
                        for (size_t j = 0; j < n; j++)
                                free(list[j]);
                        free(list);
                        return ck_error_wrap(err, "list pod cgroups");
                }
                for (char **c = children; *c; c++) {
                        /* systemd: "ck-kubepods-pod<uid>.slice" reads as "pod<uid>" */
                        char *child = cgroup_name_child(*c, cm->systemd);
                        free(*c);
                        size_t plen = strlen(POD_CGROUP_PREFIX);
                        if (child == NULL || strncmp(child, POD_CGROUP_PREFIX, plen) != 0 ||
                            child[plen] == '\0') {
                                free(child);
                                continue;
                        }
                        list = xrealloc(list, (n + 2) * sizeof(*list));
                        list[n++] = xstrdup(child + plen);
                        free(child);
                }
                free(children);
        }
        list[n] = NULL;
        *uids = list;
        return 0;
}
