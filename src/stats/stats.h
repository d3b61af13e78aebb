/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Node, pod and container statistics: the kubelet's Summary API
 * (/stats/summary, k8s.io/kubelet/pkg/apis/stats/v1alpha1) and the
 * /metrics/resource series, as upstream's CRI stats provider
 * (pkg/kubelet/stats/cri_stats_provider.go) with the cgroup readings cAdvisor
 * would add, and pkg/kubelet/server/stats/summary.go.
 *
 * Sources:
 *   node        the root cgroup (CPU, memory, swap, PSI), else /proc/stat and
 *               /proc/meminfo; /proc/1/net/dev; statfs of the kubelet root
 *               dir; pid_max / threads-max and /proc/loadavg (rlimit)
 *   runtime     CRI ImageFsInfo (imageFs; containerFs is the same, as upstream)
 *   pods        CRI ListPodSandbox + ListContainers (which pods and containers
 *               exist, their names and start times: the sandbox and container
 *               metadata) and ListContainerStats (upstream's default,
 *               listPodStatsPartiallyFromCRI), or with the feature gate
 *               PodAndContainerStatsFromCRI ListPodSandboxStats (pod CPU,
 *               memory, network, process count and the containers' stats;
 *               ListContainerStats when the runtime does not implement it).
 *               A field the runtime leaves out is read
 *               from the pod's cgroup (<cgroup root>/kubepods[/burstable|
 *               /besteffort]/pod<uid>) or the container's (under it, named
 *               as the runtime names it), the pod's network from
 *               /proc/<pid>/net/dev of one of the pod's processes (they
 *               share the sandbox's network namespace); usageNanoCores the
 *               runtime leaves out is computed from two cumulative samples,
 *               the previous one cached per container (upstream
 *               getAndUpdateContainerUsageNanoCores).  Without pod cgroups
 *               (cgroupsPerQOS false) a pod's CPU and memory are its
 *               containers' sums, and it has no network or process count
 *               (upstream's cAdvisor reads them from the sandbox's cgroup)
 *   disk        container logs (<pod logs dir>/<ns>_<name>_<uid>/<container>/),
 *               the pod's etc-hosts and its volumes (emptyDir, configMap,
 *               secret, downwardAPI, projected under <root>/pods/<uid>/volumes)
 *               measured as `du` does, the volumes at most once per
 *               volume_stats_period (upstream --volume-stats-agg-period)
 *
 * Everything is collected at once into an immutable snapshot, refreshed at
 * most once per housekeeping interval: a call within the interval gets the
 * cached snapshot (a failed refresh too: its error, so that a runtime that
 * hangs is asked once per interval, not once per request); calls that
 * arrive while a refresh runs wait for it and share its result.
 *
 * Threading: every function here is thread-safe unless it says otherwise;
 * many HTTP threads may call stats_summary_json() and render the metrics
 * registry at the same time.  A refresh runs on the calling thread and may
 * block for the CRI calls (each bounded by runtime_timeout_ms).
 */
#ifndef CK_STATS_STATS_H
#define CK_STATS_STATS_H

#include "metrics/metrics.h"
#include "util/error.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* ---- Machine facts, read once ------------------------------------------- */

/* What cAdvisor's MachineInfo gives the kubelet for the node's capacity and
 * identity. */
struct stats_machine_info {
        int64_t num_cores;       /* online CPUs; at least 1 */
        int64_t memory_capacity; /* MemTotal of /proc/meminfo, bytes; 0 when unreadable */
        int64_t swap_capacity;   /* SwapTotal of /proc/meminfo, bytes; 0 when unreadable */
        int64_t boot_time_s;     /* btime of /proc/stat (util.GetBootTime); 0 when unreadable */
        char boot_id[64];        /* /proc/sys/kernel/random/boot_id; "" when unreadable */
        char machine_id[64];     /* /etc/machine-id, else /var/lib/dbus/machine-id; "" */
        char system_uuid[64];    /* /sys/class/dmi/id/product_uuid; "" */
};

/* The facts of this machine, read on the first call (of any thread) and
 * never again; never fails (what cannot be read is logged once and left as
 * documented above).  The pointer is borrowed and valid forever. */
const struct stats_machine_info *stats_machine_info(void);

/* The same facts read from other roots ("/proc", "/sys", "/etc", "/var/lib"
 * for the real ones; a test's fixture tree).  Never fails; logs nothing. */
void stats_machine_info_read(const char *proc_root, const char *sys_root, const char *etc_root,
                             const char *var_lib_root, struct stats_machine_info *out);

/* The filesystem holding path (statfs), as upstream's fs.Info / cAdvisor's
 * GetDirFsInfo: capacity f_blocks, available f_bavail, usage
 * f_blocks - f_bfree (times f_frsize), inodes f_files, inodes_free f_ffree. */
struct stats_fs_info {
        uint64_t capacity, available, usage;
        uint64_t inodes, inodes_free;
};
/* Errors: "statfs `<path>`: <errno>". */
int stats_fs_info(const char *path, struct stats_fs_info *out, ck_error_t *err);

/* The image filesystem as upstream's CRI stats provider reads it
 * (ImageFsStats): the first filesystem of CRI ImageFsInfo (its used bytes
 * and inodes, its timestamp), and statfs of its mountpoint for the capacity,
 * available bytes and inodes (fs_ok false when that failed: logged at
 * verbosity 2).  Errors: "failed to get imageFs stats: <cause>", the CRI
 * call's or "imageFs information is unavailable". */
struct cri_client;
struct stats_image_fs {
        int64_t time_ns;
        bool has_used, has_inodes_used;
        uint64_t used, inodes_used;
        bool fs_ok;
        struct stats_fs_info fs;
};
int stats_image_fs(struct cri_client *image, struct stats_image_fs *out, ck_error_t *err);

/* ---- The provider -------------------------------------------------------- */

struct stats_options {
        const char *node_name;        /* Summary node.nodeName */
        const char *root_dir;         /* --root-dir: node fs, pods/<uid>/{volumes,etc-hosts} */
        const char *pod_logs_dir;     /* podLogsDir; NULL: /var/log/pods */
        const char *runtime_endpoint; /* "unix:///run/containerd/containerd.sock" */
        const char *image_endpoint;   /* NULL or "": the runtime endpoint */
        int64_t runtime_timeout_ms;   /* each CRI call's deadline; <= 0: 2 min */
        /* Where pod cgroups live, as src/cm names them (cgroupfs driver):
         * <cgroup_root>/kubepods[/burstable|/besteffort]/pod<uid>.  With
         * cgroups_per_qos false there are no pod cgroups (no fallback to
         * them) and the "pods" system container is the cgroup root, as
         * upstream's GetPodCgroupRoot. */
        const char *cgroup_root; /* --cgroup-root; NULL, "" or "/": the top */
        bool cgroups_per_qos;
        /* --cgroup-driver=systemd: the same names are slices at their
         * systemd paths (util/cgroup_name.h) */
        bool systemd_cgroups;
        /* System containers (node.systemContainers): NULL or "" leaves one
         * out, except kubelet_cgroup: NULL means this process's own cgroup
         * (/proc/self/cgroup, as upstream when --kubelet-cgroups is unset). */
        const char *kubelet_cgroup;       /* --kubelet-cgroups */
        const char *runtime_cgroup;       /* --runtime-cgroups */
        const char *system_cgroup;        /* --system-cgroups ("misc") */
        int64_t housekeeping_interval_ms; /* <= 0: 10 s (--housekeeping-interval) */
        int64_t volume_stats_period_ms;   /* 0: 1 min; < 0: no volume stats */
        /* the feature gate PodAndContainerStatsFromCRI (upstream's default:
         * off): ask ListPodSandboxStats first.  Off, the pods' stats come
         * from ListContainerStats and the cgroups, as upstream with
         * cAdvisor; containerd 1.6 answers ListPodSandboxStats about ten
         * times slower (2.0 s against 0.18 s for 150 pods here) */
        bool pod_stats_from_cri;

        /* Tests only: fixture trees instead of /sys/fs/cgroup, /proc and
         * /sys, and a clock (both functions or neither; ctx is passed back). */
        const char *cgroupfs_root;
        const char *proc_root;
        const char *sys_root;
        int64_t (*now_real_ns)(void *ctx);
        int64_t (*now_mono_ns)(void *ctx);
        void *clock_ctx;
};

struct stats_provider;

/* Copies the options (strings included); connects to nothing yet (the
 * first refresh does).  Takes a first CPU sample of the node and the system
 * containers so that the first summary has a usageNanoCores.  Errors: an
 * invalid endpoint or cgroup root. */
int stats_provider_new(const struct stats_options *o, struct stats_provider **out, ck_error_t *err);
/* NULL-safe.  No other thread may still use p, and a metrics registry
 * that p's collectors are registered on must be freed first. */
void stats_provider_free(struct stats_provider *p);

/* The Summary (v1alpha1 field names, in upstream's field order) as a new
 * reference.  only_cpu_and_memory: upstream's ?only_cpu_and_memory=true
 * (GetCPUAndMemoryStats: node CPU/memory/swap and system containers, pods
 * with CPU, memory and swap, missing values as 0).  Errors as upstream's
 * Get / GetCPUAndMemoryStats, answered 500 "Internal Error: <msg>" by the
 * handler: "failed to list pod stats: ...", and, without
 * only_cpu_and_memory, "failed to get rootFs stats: ..." and "failed to get
 * imageFs stats: ...". */
json_t *stats_summary_json(struct stats_provider *p, bool only_cpu_and_memory, ck_error_t *err);

/* What the eviction manager reads (upstream makeSignalObservations over
 * the Summary): each signal's available and capacity, and each pod's
 * usage, from the cached snapshot (a call may run a refresh). */
struct stats_signal {
        bool ok;
        int64_t available, capacity;
        int64_t time_ns;
};
struct stats_eviction_container {
        char *name;
        bool has_memory, has_disk;
        int64_t memory_working_set;
        int64_t disk_used; /* rootfs + logs */
        bool has_rootfs, has_logs;
        int64_t rootfs_used, logs_used;
};
struct stats_eviction_volume {
        char *name;
        int64_t used;
};
struct stats_eviction_pod {
        char *uid;
        bool has_memory, has_processes, has_disk;
        int64_t memory_working_set, processes;
        /* containers' rootfs and logs, and the local ephemeral volumes */
        int64_t disk_used, inodes_used;
        struct stats_eviction_container *containers;
        size_t n_containers;
        struct stats_eviction_volume *volumes; /* those measured */
        size_t n_volumes;
        bool has_ephemeral; /* the pod's ephemeral-storage usage */
        int64_t ephemeral_used;
        /* disk_used's parts: the containers' rootfs, their logs, the local
         * ephemeral volumes */
        int64_t rootfs_used, logs_used, volumes_used;
};
struct stats_eviction_view {
        /* memory.available: the node's available and working set;
         * allocatableMemory.available: the same of the "pods" system
         * container; the filesystems' available bytes and free inodes;
         * pid.available: the pid limit less the processes */
        struct stats_signal memory, allocatable_memory;
        struct stats_signal nodefs, nodefs_inodes, imagefs, imagefs_inodes;
        struct stats_signal containerfs, containerfs_inodes, pid;
        struct stats_eviction_pod *pods; /* when has_pods */
        size_t n_pods;
        bool has_pods;
};
/* fresh: a snapshot taken now (upstream's Get(updateStats=true) after a
 * reclaim), else the cached one.  pods: with the pods' usage (to rank them,
 * or to check their local storage limits); without, the node's signals
 * alone, which cost no CRI listing (one ImageFsInfo) and no walk of the
 * pods' cgroups.  Errors (pods only): the pods could not be listed
 * ("failed to list pod stats: ..."). */
int stats_eviction_view(struct stats_provider *p, bool fresh, bool pods,
                        struct stats_eviction_view *out, ck_error_t *err);
void stats_eviction_view_release(struct stats_eviction_view *v);

/* Registers upstream's resource metrics collector
 * (pkg/kubelet/metrics/collectors/resource_metrics.go) on r, the registry of
 * /metrics/resource, as a v1.35 kubelet serves it: node_cpu_usage_seconds_total,
 * node_memory_working_set_bytes, node_swap_usage_bytes,
 * container_cpu_usage_seconds_total, container_memory_working_set_bytes,
 * container_swap_usage_bytes, container_swap_limit_bytes,
 * container_start_time_seconds, pod_cpu_usage_seconds_total,
 * pod_memory_working_set_bytes, pod_swap_usage_bytes and
 * resource_scrape_error, with their HELP, type, stability and sample
 * timestamps.  scrape_error (ALPHA, deprecated in 1.29.0) is hidden from
 * 1.30 on, as component-base hides it; show_hidden (upstream
 * --show-hidden-metrics-for-version) registers it too.  Values come from the
 * cached snapshot (the CPU-and-memory view) at render time (a render may
 * run a refresh).  p must outlive r (free the registry first).  Errors: a
 * name already registered on r (the families before it stay registered). */
int stats_register_resource_metrics(struct metrics_registry *r, struct stats_provider *p,
                                    ck_error_t *err);
int stats_register_resource_metrics_hidden(struct metrics_registry *r, struct stats_provider *p,
                                           bool show_hidden, ck_error_t *err);

/* Registers what upstream's kubelet serves on /metrics/cadvisor on r:
 * cAdvisor's container collector (metrics.NewPrometheusCollector with the
 * kubelet's includedMetrics and containerPrometheusLabelsFunc: labels
 * container, id, image, name, namespace, pod) for the root cgroup "/", the
 * pods' cgroups, their sandboxes' and their containers' (container_cpu_*,
 * container_memory_*, container_network_*, container_processes,
 * container_threads*, container_oom_events_total, container_pressure_*,
 * container_start_time_seconds, container_last_seen, container_spec_*,
 * container_scrape_error) and its machine collector (machine_cpu_cores,
 * machine_cpu_physical_cores, machine_cpu_sockets, machine_memory_bytes,
 * machine_swap_bytes, machine_nvm_*, machine_scrape_error), with cAdvisor's
 * HELP texts, types and sample timestamps.  Container values come from the
 * cached snapshot at render time (a render may run a refresh); the machine
 * facts are read now.  p must outlive r (free the registry first).  Errors:
 * a name already registered on r (the families before it stay
 * registered). */
int stats_register_cadvisor_metrics(struct metrics_registry *r, struct stats_provider *p,
                                    ck_error_t *err);

#endif
