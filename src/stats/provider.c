/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The stats provider: its options, its CRI clients and the snapshot cache
 * (at most one refresh per housekeeping interval; callers that arrive
 * while one runs wait for it and share its result), and the Summary API
 * entry point.
 */
#include "stats/stats_internal.h"

#include "util/cgroup_name.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_INTERVAL_NS (10ll * 1000000000)      /* --housekeeping-interval */
#define DEFAULT_VOLUME_PERIOD_NS (60ll * 1000000000) /* --volume-stats-agg-period */
#define DEFAULT_TIMEOUT_MS (2 * 60 * 1000)           /* --runtime-request-timeout */

int64_t stats__now_real(const struct stats_provider *p)
{
        return p->now_real_ns ? p->now_real_ns(p->clock_ctx) : fs_now_real_ns();
}

int64_t stats__now_mono(const struct stats_provider *p)
{
        if (p->now_mono_ns)
                return p->now_mono_ns(p->clock_ctx);
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* --cgroup-root as src/cm normalizes it: "" for the top, else "/a/b". */
static int normalize_cgroup_root(const char *in, char **out, ck_error_t *err)
{
        const char *p = in ? in : "";
        size_t len = strlen(p);
        char *res = xcalloc(1, len + 2);
        size_t n = 0;
        while (*p) {
                while (*p == '/')
                        p++;
                size_t c = strcspn(p, "/");
                if (c == 0)
                        break;
                if ((c == 1 && p[0] == '.') || (c == 2 && p[0] == '.' && p[1] == '.')) {
                        free(res);
                        return ck_error_make(err, EINVAL,
                                             "invalid cgroup root \"%s\": \"%.*s\" component", in,
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

static char *dup_or_null(const char *s)
{
        return s && *s ? xstrdup(s) : NULL;
}

/* The machine's filesystems as cAdvisor's fsInfo lists them at start. */
static void read_partitions(struct stats_provider *p)
{
        cleanup_free char *path = xasprintf("%s/self/mountinfo", p->proc_root);
        cleanup_free char *mountinfo = NULL;
        cleanup_error ck_error_t err = NULL;
        if (fs_read_file(path, 16u << 20, &mountinfo, NULL, &err) == 0)
                p->n_partitions = stats__parse_partitions(mountinfo, &p->partitions);
}

int stats_provider_new(const struct stats_options *o, struct stats_provider **out, ck_error_t *err)
{
        const char *image_ep =
            o->image_endpoint && *o->image_endpoint ? o->image_endpoint : o->runtime_endpoint;
        cleanup_free char *path = NULL;
        if (o->runtime_endpoint == NULL)
                return ck_error_make(err, 0, "stats provider: no runtime endpoint");
        if (cri_parse_endpoint(o->runtime_endpoint, &path, err) < 0)
                return ck_error_wrap(err, "stats provider");
        free(path);
        path = NULL;
        if (cri_parse_endpoint(image_ep, &path, err) < 0)
                return ck_error_wrap(err, "stats provider");
        cleanup_free char *root = NULL;
        if (normalize_cgroup_root(o->cgroup_root, &root, err) < 0)
                return ck_error_wrap(err, "stats provider");

        struct stats_provider *p = xcalloc(1, sizeof(*p));
        p->node_name = xstrdup(o->node_name ? o->node_name : "");
        p->root_dir = xstrdup(o->root_dir && *o->root_dir ? o->root_dir : "/var/lib/kubelet");
        p->pod_logs_dir =
            xstrdup(o->pod_logs_dir && *o->pod_logs_dir ? o->pod_logs_dir : "/var/log/pods");
        p->proc_root = xstrdup(o->proc_root && *o->proc_root ? o->proc_root : "/proc");
        p->sys_root = xstrdup(o->sys_root && *o->sys_root ? o->sys_root : "/sys");
        p->n_disks = stats__disks_read(p->sys_root, &p->disks);
        read_partitions(p);
        if (o->cgroups_per_qos) {
                p->kubepods = xasprintf("%s/kubepods", root);
                p->pods_cgroup = cgroup_name_literal(p->kubepods, o->systemd_cgroups);
        } else {
                /* upstream GetPodCgroupRoot: the cgroup root itself */
                p->pods_cgroup =
                    *root ? cgroup_name_literal(root, o->systemd_cgroups) : xstrdup("/");
        }
        p->systemd_cgroups = o->systemd_cgroups;
        p->detect_kubelet_cgroup = o->kubelet_cgroup == NULL;
        p->kubelet_cgroup = dup_or_null(o->kubelet_cgroup);
        p->runtime_cgroup = dup_or_null(o->runtime_cgroup);
        p->system_cgroup = dup_or_null(o->system_cgroup);
        p->interval_ns = o->housekeeping_interval_ms > 0 ? o->housekeeping_interval_ms * 1000000
                                                         : DEFAULT_INTERVAL_NS;
        p->volume_period_ns = o->volume_stats_period_ms == 0  ? DEFAULT_VOLUME_PERIOD_NS
                              : o->volume_stats_period_ms < 0 ? -1
                                                              : o->volume_stats_period_ms * 1000000;
        p->pod_stats_from_cri = o->pod_stats_from_cri;
        if (o->now_real_ns && o->now_mono_ns) {
                p->now_real_ns = o->now_real_ns;
                p->now_mono_ns = o->now_mono_ns;
                p->clock_ctx = o->clock_ctx;
        }
        stats__cgroupfs_init(&p->cgroupfs, o->cgroupfs_root);
        long hz = sysconf(_SC_CLK_TCK);
        p->ticks_per_second = hz > 0 ? hz : 100;

        struct stats_machine_info local;
        const struct stats_machine_info *mi = stats_machine_info();
        if (o->proc_root && *o->proc_root) {
                stats_machine_info_read(o->proc_root, "/sys", "/etc", "/var/lib", &local);
                mi = &local;
        }
        p->boot_time_ns = mi->boot_time_s * 1000000000;

        pthread_mutex_init(&p->lock, NULL);
        pthread_cond_init(&p->cond, NULL);
        int64_t timeout = o->runtime_timeout_ms > 0 ? o->runtime_timeout_ms : DEFAULT_TIMEOUT_MS;
        p->runtime = cri_client_new(o->runtime_endpoint, timeout);
        p->image = strcmp(image_ep, o->runtime_endpoint) == 0 ? p->runtime
                                                              : cri_client_new(image_ep, timeout);
        p->cpu_cache = stats__cpu_cache_new();
        p->volume_cache = stats__volume_cache_new();
        p->created_ns = stats__now_real(p);

        /* a first CPU sample of the node and the system containers */
        struct stats_snapshot *prime = stats__snapshot_new();
        stats__collect_node(p, prime, p->created_ns, true);
        stats__snapshot_unref(prime);
        *out = p;
        return 0;
}

void stats_provider_free(struct stats_provider *p)
{
        if (p == NULL)
                return;
        stats__snapshot_unref(p->snap);
        if (p->image != p->runtime)
                cri_client_free(p->image);
        cri_client_free(p->runtime);
        stats__cpu_cache_free(p->cpu_cache);
        stats__volume_cache_free(p->volume_cache);
        stats__cgroupfs_clear(&p->cgroupfs);
        stats__disks_free(p->disks, p->n_disks);
        stats__partitions_free(p->partitions, p->n_partitions);
        for (size_t i = 0; i < p->n_metric_ctx; i++)
                free(p->metric_ctx[i]);
        free(p->metric_ctx);
        pthread_cond_destroy(&p->cond);
        pthread_mutex_destroy(&p->lock);
        free(p->node_name);
        free(p->root_dir);
        free(p->pod_logs_dir);
        free(p->proc_root);
        free(p->sys_root);
        free(p->kubepods);
        free(p->pods_cgroup);
        free(p->kubelet_cgroup);
        free(p->runtime_cgroup);
        free(p->system_cgroup);
        free(p);
}

/* pods false: the eviction manager's signals alone (no CRI listing, no walk
 * of the pods' cgroups; one ImageFsInfo); the CPU cache keeps the pods'
 * samples for the next full one */
static struct stats_snapshot *refresh(struct stats_provider *p, bool pods)
{
        struct stats_snapshot *s = stats__snapshot_new();
        s->taken_mono_ns = stats__now_mono(p);
        s->node_name = xstrdup(p->node_name);
        s->node_only = !pods;
        int64_t now = stats__now_real(p);
        int64_t t0 = fs_now_mono_us();
        int64_t cri0 = cri_client_busy_us(p->runtime);
        stats__collect_node(p, s, now, pods);
        int64_t t1 = fs_now_mono_us();
        stats__collect_image_fs(p, s);
        if (pods) {
                stats__collect_pods(p, s, now);
                stats__cpu_cache_expire(p->cpu_cache, now);
        }
        /* bench/ reads this line: the node's part, the pods', and the
         * runtime calls' share of the latter */
        LOG_INFO(2, "Stats snapshot taken", "pods=%zu node_ms=%.1f pods_ms=%.1f cri_ms=%.1f%s",
                 s->n_pods, (double)(t1 - t0) / 1000.0, (double)(fs_now_mono_us() - t1) / 1000.0,
                 (double)(cri_client_busy_us(p->runtime) - cri0) / 1000.0,
                 pods ? "" : " nodeOnly=true");
        if (s->pods_error || s->imagefs_error)
                LOG_INFO(2, "Stats refresh failed", "err=\"%s\"",
                         s->pods_error ? s->pods_error : s->imagefs_error);
        return s;
}

struct stats_snapshot *stats__get(struct stats_provider *p)
{
        return stats__get_since(p, INT64_MIN, true);
}

/* s serves a caller that wants a snapshot taken at or after since, with the
 * pods when pods */
static bool serves(const struct stats_snapshot *s, int64_t since_mono_ns, bool pods)
{
        return s && s->taken_mono_ns >= since_mono_ns && (!pods || !s->node_only);
}

struct stats_snapshot *stats__get_since(struct stats_provider *p, int64_t since_mono_ns, bool pods)
{
        pthread_mutex_lock(&p->lock);
        for (;;) {
                struct stats_snapshot *s = p->snap;
                /* a failed refresh is kept for the interval too: a runtime
                 * that hangs is asked once per interval, not once per
                 * request (or per family of a /metrics/resource scrape) */
                if (serves(s, since_mono_ns, pods) &&
                    stats__now_mono(p) - s->taken_mono_ns < p->interval_ns) {
                        stats__snapshot_ref(s);
                        pthread_mutex_unlock(&p->lock);
                        return s;
                }
                if (!p->refreshing)
                        break;
                uint64_t gen = p->generation;
                while (p->refreshing)
                        pthread_cond_wait(&p->cond, &p->lock);
                if (p->generation != gen && serves(p->snap, since_mono_ns, pods)) {
                        /* the refresh we waited for: its result, whatever it is */
                        s = stats__snapshot_ref(p->snap);
                        pthread_mutex_unlock(&p->lock);
                        return s;
                }
        }
        p->refreshing = true;
        pthread_mutex_unlock(&p->lock);

        struct stats_snapshot *s = refresh(p, pods);

        pthread_mutex_lock(&p->lock);
        struct stats_snapshot *old = p->snap;
        p->snap = s;
        p->generation++;
        p->refreshing = false;
        stats__snapshot_ref(s);
        pthread_cond_broadcast(&p->cond);
        pthread_mutex_unlock(&p->lock);
        stats__snapshot_unref(old);
        return s;
}

json_t *stats_summary_json(struct stats_provider *p, bool only_cpu_and_memory, ck_error_t *err)
{
        struct stats_snapshot *s = stats__get(p);
        /* in upstream Get's order: rootFs, imageFs, then the pods */
        const char *fail = s->pods_error;
        if (!only_cpu_and_memory)
                fail = s->rootfs_error    ? s->rootfs_error
                       : s->imagefs_error ? s->imagefs_error
                                          : s->pods_error;
        json_t *j = NULL;
        if (fail)
                ck_error_make(err, 0, "%s", fail);
        else
                j = stats__summary_of(s, only_cpu_and_memory);
        stats__snapshot_unref(s);
        return j;
}
