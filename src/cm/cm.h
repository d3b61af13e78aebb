/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Container manager: the node's cgroup hierarchy for pods, by QoS class, as
 * upstream pkg/kubelet/cm builds it with the cgroupfs driver:
 *
 *   <cgroup-root>/kubepods/                      (node allocatable)
 *   <cgroup-root>/kubepods/pod<uid>/             Guaranteed
 *   <cgroup-root>/kubepods/burstable/pod<uid>/   Burstable
 *   <cgroup-root>/kubepods/besteffort/pod<uid>/  BestEffort
 *
 * The cgroup parent handed to CRI is that path ("/kubepods/burstable/pod<uid>").
 * With the systemd driver the same names are slices, made through systemd
 * (util/cgroup_name.h):
 *
 *   /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid>.slice
 *
 * and the cgroup parent handed to CRI is that slice path.
 * cgroup v1 (one directory per controller) and v2 (unified) drivers sit
 * behind one vtable (struct cgroup_driver); the layout is probed from the
 * filesystem under `cgroupfs_root` (normally /sys/fs/cgroup; unit tests point
 * it at a fake tree).
 *
 * Threading: thread-safe (an internal lock serialises cgroup writes).
 */
#ifndef CK_CM_CM_H
#define CK_CM_CM_H

#include "api/pod.h"
#include "util/error.h"

#include <stdbool.h>
#include <stdint.h>

struct cm_options {
        const char *cgroupfs_root; /* "/sys/fs/cgroup" */
        const char *cgroup_root;   /* --cgroup-root, "" or "/" means the top */
        bool cgroups_per_qos;      /* false: no pod cgroups, cgroup parent "" */
        /* "cgroupfs" or "systemd" (each cgroup a slice unit made through
         * systemd's D-Bus API at systemd_address, NULL: its private socket) */
        const char *cgroup_driver;
        const char *systemd_address;
        /* reserved resources subtracted from capacity for allocatable */
        int64_t reserved_cpu_milli;
        int64_t reserved_memory;
        /* --pod-max-pids: pids.max of each pod cgroup; <= 0 leaves it unset */
        int64_t pod_pids_limit;
        /* Tests only: cgroupfs_root is a plain directory tree, not a cgroup
         * filesystem.  Control files are then created when written and removed
         * before rmdir (the kernel makes and drops them on a real cgroupfs);
         * without this flag a controller directory that is not a cgroup
         * filesystem is ignored (v1) or refused (v2). */
        bool fake_cgroupfs;
        /* --fail-swap-on (upstream's default true): refuse to start when
         * swap is on, as told by proc_swaps (NULL: /proc/swaps; a file that
         * does not exist: off) */
        bool fail_swap_on;
        const char *proc_swaps;
        /* --fail-cgroupv1 (upstream's default true): refuse to start on a
         * cgroup v1 host (a hybrid layout is v1); false: start, with
         * upstream's deprecation warning */
        bool fail_cgroup_v1;
};

struct cm;

/* Checks swap (failSwapOn), probes the cgroup layout, creates the kubepods
 * / burstable / besteffort cgroups.  Errors name the path. */
int cm_new(const struct cm_options *opts, struct cm **out, ck_error_t *err);
void cm_free(struct cm *cm);

/* failCgroupV1: an error (upstream's message) when fail_cgroup_v1 is set and
 * the hierarchy at cgroupfs_root (NULL: /sys/fs/cgroup) is not the unified
 * one.  cm_new checks it too; the agent calls it first, before it makes
 * anything, as upstream validates its configuration. */
int cm_check_cgroup_v1(const char *cgroupfs_root, bool fail_cgroup_v1, ck_error_t *err);

/* Node capacity (cpu from online CPUs, memory from /proc/meminfo) and
 * allocatable (capacity minus reserved). */
struct cm_node_resources {
        int64_t capacity_cpu_milli, capacity_memory;
        int64_t allocatable_cpu_milli, allocatable_memory;
};
void cm_node_resources(const struct cm *cm, struct cm_node_resources *out);

/* Creates the pod's cgroup with its cpu shares/quota and memory limit when
 * it does not exist yet (upstream EnsureExists: an existing one keeps its
 * values; a resize changes them, see cm_pod_resources_write), updates its
 * QoS class's shares, and returns the cgroup parent for CRI in *parent (new
 * string; "" if cgroups-per-qos is off). */
int cm_pod_cgroup_ensure(struct cm *cm, const struct pod *pod, char **parent, ck_error_t *err);

/* A pod cgroup's cpu and memory settings, the part an in-place resize
 * changes (upstream ResourceConfig).  A value counts when its has_ flag is
 * set. */
struct cm_pod_resources {
        bool has_cpu_shares;
        uint64_t cpu_shares;
        bool has_cpu_quota;
        int64_t cpu_quota;   /* us; -1: unlimited */
        uint64_t cpu_period; /* us, with the quota */
        bool has_memory;
        int64_t memory; /* bytes; -1: unlimited */
};

/* What pod's cgroup should have for its resources (upstream
 * ResourceConfigForPod): the shares always; the quota and the memory limit
 * when the pod is Guaranteed or every container has that limit. */
void cm_pod_resources_desired(const struct cm *cm, const struct pod *pod,
                              struct cm_pod_resources *out);
/* What pod's cgroup has (upstream GetPodCgroupConfig).  With cgroups-per-qos
 * off there is no pod cgroup: every has_ flag is false. */
int cm_pod_resources_read(struct cm *cm, const struct pod *pod, struct cm_pod_resources *out,
                          ck_error_t *err);
/* Writes the values whose has_ flag is set to pod's cgroup (upstream
 * SetPodCgroupConfig); a no-op with cgroups-per-qos off. */
int cm_pod_resources_write(struct cm *cm, const struct pod *pod, const struct cm_pod_resources *r,
                           ck_error_t *err);
/* The pod cgroup's memory usage in bytes (v1 memory.usage_in_bytes, v2
 * memory.current); -1 with cgroups-per-qos off. */
int cm_pod_memory_usage(struct cm *cm, const struct pod *pod, int64_t *usage, ck_error_t *err);

/* The cgroup parent a pod would get (its path in the hierarchy: a slice path
 * for systemd), without touching the filesystem. */
char *cm_pod_cgroup_name(const struct cm *cm, const char *uid, enum qos_class qos);

/* Removes the pod's cgroup (after its containers are gone), killing the
 * processes still in it first, as upstream.  A missing cgroup is not an
 * error. */
int cm_pod_cgroup_destroy(struct cm *cm, const char *uid, ck_error_t *err);

/* UIDs of pod cgroups that exist under kubepods (for housekeeping of orphans).
 * Returns a NULL-terminated array of new strings. */
int cm_list_pod_cgroups(struct cm *cm, char ***uids, ck_error_t *err);

/* Upstream's CFS conversions (pkg/kubelet/cm/helpers_linux.go), shared with
 * the runtime manager's container resources:
 * MilliCPUToShares: 1024 per core, at least 2 (also for 0), at most 262144.
 * MilliCPUToQuota: milli * period / 1000, at least 1000 us; 0 for 0.
 * Shares to cgroup v2 cpu.weight: 1 + ((shares - 2) * 9999) / 262142. */
uint64_t cm_milli_cpu_to_shares(int64_t milli_cpu);

/* The machine's huge page sizes, bytes (/sys/kernel/mm/hugepages, as runc's
 * HugePageSizes): at most room of them. */
size_t cm_hugepage_sizes(int64_t *sizes, size_t room);
/* "2MB", "1GB", "64KB": how runc and the CRI name a page size of `bytes`
 * (upstream HugePageUnitSizeFromByteSize). */
void cm_hugepage_name(int64_t bytes, char *buf, size_t len);
int64_t cm_milli_cpu_to_quota(int64_t milli_cpu, int64_t period_us);
uint64_t cm_cpu_shares_to_weight(uint64_t shares);
/* cgroup v2 cpu.weight back to shares: 2 + ((weight - 1) * 262142) / 9999. */
uint64_t cm_cpu_weight_to_shares(uint64_t weight);

#endif
