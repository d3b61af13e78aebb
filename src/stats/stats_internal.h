/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to src/stats: the snapshot (v1alpha1's types with "is set" flags
 * where upstream has pointers), the pure parsers of /proc and cgroup files,
 * the cgroup reader, the collectors and the renderers.  Unit tests include
 * it to feed fixture text to the parsers and a fixed snapshot to the
 * renderers.
 */
#ifndef CK_STATS_INTERNAL_H
#define CK_STATS_INTERNAL_H

#include "cri/cri.h"
#include "stats/stats.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- The snapshot --------------------------------------------------------- */

/* upstream's *uint64: ok false is nil (the JSON key left out). */
struct stats_u64 {
        uint64_t v;
        bool ok;
};

static inline struct stats_u64 stats_u64_of(uint64_t v)
{
        return (struct stats_u64){.v = v, .ok = true};
}

/* A CRI UInt64Value (NULL: nil). */
static inline struct stats_u64 stats_u64_cri(const Runtime__V1__UInt64Value *v)
{
        return v ? stats_u64_of(v->value) : (struct stats_u64){0};
}

struct stats_psi_data {
        uint64_t total; /* as the kernel writes it (microseconds), as cAdvisor passes it on */
        double avg10, avg60, avg300;
};

struct stats_psi {
        bool ok;
        struct stats_psi_data full, some;
};

/* ---- Block I/O and the machine's filesystems (blkio.c) --------------------- */

/* The operations of a blkio table, cgroup v1's names (runc maps v2's
 * rbytes/wbytes/rios/wios to Read and Write). */
enum stats_blkio_op {
        STATS_BLKIO_READ,
        STATS_BLKIO_WRITE,
        STATS_BLKIO_SYNC,
        STATS_BLKIO_ASYNC,
        STATS_BLKIO_DISCARD,
        STATS_BLKIO_TOTAL,
        STATS_BLKIO_N_OPS
};
extern const char *const stats_blkio_op_names[STATS_BLKIO_N_OPS];

/* One device of a cgroup's block I/O as cAdvisor's PerDiskStats of
 * IoServiceBytes (bytes) and IoServiced (ios): a device may be in one table
 * and not the other. */
struct stats_blkio_dev {
        uint32_t major, minor;
        bool in_bytes, in_ios;
        bool has_bytes[STATS_BLKIO_N_OPS], has_ios[STATS_BLKIO_N_OPS];
        uint64_t bytes[STATS_BLKIO_N_OPS], ios[STATS_BLKIO_N_OPS];
};
struct stats_blkio {
        struct stats_blkio_dev *devs;
        size_t n;
};
/* cgroup v1: the "MAJ:MIN Op value" lines of an io_service_bytes and an
 * io_serviced file (either may be NULL; the "Total N" line and lines that
 * do not parse are skipped).  v2: io.stat's "MAJ:MIN rbytes=.. wbytes=..
 * rios=.. wios=.." lines.  out is cleared first. */
void stats__blkio_parse_v1(const char *service_bytes, const char *serviced,
                           struct stats_blkio *out);
void stats__blkio_parse_v2(const char *io_stat, struct stats_blkio *out);
void stats__blkio_clear(struct stats_blkio *b);

/* The whole disks cAdvisor names devices by (MachineInfo.DiskMap):
 * <sys>/block/<name> but loop*, ram*, sr* and hidden ones, as "/dev/<name>". */
struct stats_disk {
        uint32_t major, minor;
        char *name;
};
size_t stats__disks_read(const char *sys_root, struct stats_disk **out);
void stats__disks_free(struct stats_disk *d, size_t n);
/* The device name of major:minor, "" when it is not a known disk (as
 * cAdvisor leaves PerDiskStats.Device). */
const char *stats__disk_name(const struct stats_disk *d, size_t n, uint32_t major, uint32_t minor);

/* A filesystem of the machine as cAdvisor's fsInfo lists them (the
 * partitions of /proc/self/mountinfo it supports: ext*, nfs*, btrfs,
 * overlay, tmpfs, xfs, zfs; one per source, tmpfs by mount point). */
struct stats_statfs_job;
struct stats_partition {
        char *device; /* cAdvisor's Device label */
        char *mountpoint;
        uint32_t major, minor;
        bool network;                 /* nfs*: statfs in a thread, given up after 2 s */
        struct stats_statfs_job *job; /* such a statfs still running, or NULL */
};
size_t stats__parse_partitions(const char *mountinfo, struct stats_partition **out);
void stats__partitions_free(struct stats_partition *p, size_t n);
/* Drops the partitions' references to statfs calls still running. */
void stats__partition_jobs_release(struct stats_partition *p, size_t n);

/* The root container's FsStats of one partition: statfs and the
 * partition's line of /proc/diskstats (has_disk: found). */
struct stats_root_fs {
        char *device;
        uint32_t major, minor;
        uint64_t limit, usage, inodes, inodes_free;
        bool has_disk;
        uint64_t reads, reads_merged, sectors_read, read_ms;
        uint64_t writes, writes_merged, sectors_written, write_ms;
        uint64_t io_in_progress, io_ms, weighted_io_ms;
};
/* The /proc/diskstats line of device into fs, as cAdvisor finds it: by
 * name ("/dev/vda"; only sd*, vd*, xvd* and dm-* lines are read), else by
 * major:minor (/dev/mapper/..., /dev/root).  False: none. */
bool stats__parse_diskstats(const char *text, const char *device, uint32_t major, uint32_t minor,
                            struct stats_root_fs *fs);
/* Reads each partition (statfs; the diskstats text may be NULL): *out
 * holds those statfs answered for.  A network filesystem's statfs that
 * takes longer than 2 s is left running and that partition skipped until
 * it returns (cAdvisor's getVfsStats gives up after 2 s too). */
size_t stats__root_fs_read(struct stats_partition *parts, size_t n, const char *diskstats,
                           struct stats_root_fs **out);
void stats__root_fs_free(struct stats_root_fs *fs, size_t n);

/* One cgroup's readings, as runc's cgroup managers and cAdvisor's
 * libcontainer handler turn the files into ContainerStats. */
struct stats_cgroup_sample {
        bool has_cpu;
        uint64_t cpu_usage_ns; /* v2 usage_usec * 1000; v1 cpuacct.usage */
        bool has_memory;
        uint64_t usage, working_set, rss, page_faults, major_page_faults;
        bool has_limit; /* a memory limit below 2^62 (isMemoryUnlimited) */
        uint64_t limit;
        bool has_swap;
        uint64_t swap_usage;
        bool has_swap_limit;
        uint64_t swap_limit;
        struct stats_psi cpu_psi, memory_psi, io_psi;

        /* What else cAdvisor's libcontainer handler reports
         * (/metrics/cadvisor), 0 when its file is absent, as cAdvisor's.
         * CPU: v2 cpu.stat user_usec / system_usec, v1 cpuacct.stat
         * (USER_HZ ticks); CFS: v2 cpu.stat nr_periods / nr_throttled /
         * throttled_usec (v1: not read). */
        uint64_t cpu_user_ns, cpu_system_ns;
        uint64_t cfs_periods, cfs_throttled_periods, cfs_throttled_ns;
        /* memory.stat: v2 file / file_mapped / active_file / inactive_file,
         * v1 total_cache / total_mapped_file / total_active_file /
         * total_inactive_file; failcnt: v1 memory.failcnt (v2: 0, as
         * runc); max_usage: v2 memory.peak, v1 memory.max_usage_in_bytes;
         * oom_kills: v2 memory.events oom_kill. */
        uint64_t cache, mapped_file, active_file, inactive_file;
        uint64_t failcnt, max_usage, oom_kills;
        /* ContainerSpec (common.GetSpec): cpu when the cgroup has the cpu
         * controller (v2: always), shares from v2 cpu.weight (cAdvisor's
         * convertCPUWeightToCPULimit) or v1 cpu.shares, period and quota
         * from v2 cpu.max or v1 cpu.cfs_period_us / cpu.cfs_quota_us (no
         * quota: 0); memory (v2: memory.max exists) limit, swap limit and
         * reservation (v2 memory.min, v1 memory.soft_limit_in_bytes) as
         * read ("max": UINT64_MAX). */
        bool has_cpu_spec;
        uint64_t spec_cpu_shares, spec_cpu_period, spec_cpu_quota;
        bool has_memory_spec;
        uint64_t spec_memory_limit, spec_swap_limit, spec_memory_reservation;
        /* processes: the cgroup's own (cgroup.procs), threads pids.current,
         * threads_max pids.max (max: 0); fds and sockets: the entries of
         * those processes' /proc/<pid>/fd, and the ones linking to
         * "socket:..." (stats__cgroup_fds: cAdvisor views only) */
        uint64_t processes, threads, threads_max;
        uint64_t fds, sockets;
};

/* A container's or pod's cgroup as cAdvisor sees it (/metrics/cadvisor):
 * name NULL when it was not found or had no readings. */
struct stats_cgroup_view {
        char *name;      /* "/kubepods/burstable/pod<uid>[/<id>]": cAdvisor's id label */
        int64_t time_ns; /* when it was read: the samples' timestamp */
        struct stats_cgroup_sample s;
        struct stats_blkio *blkio; /* NULL: none (owned) */
        /* a container's (cAdvisor's containerd handler: its root process,
         * here the cgroup's first): the soft "Max open files" (-1:
         * unlimited); a pod's cgroup and the root have none */
        bool has_nofile;
        int64_t nofile_soft;
};

/* Every struct's ok says whether upstream's pointer is set; time_ns is
 * metav1.Time (0: the zero time, JSON null). */
struct stats_cpu {
        bool ok;
        int64_t time_ns;
        struct stats_u64 usage_nano_cores, usage_core_nano_seconds;
        struct stats_psi psi;
};

struct stats_memory {
        bool ok;
        int64_t time_ns;
        struct stats_u64 available, usage, working_set, rss, page_faults, major_page_faults;
        struct stats_psi psi;
};

struct stats_io {
        bool ok;
        int64_t time_ns;
        struct stats_psi psi;
};

struct stats_swap {
        bool ok;
        int64_t time_ns;
        struct stats_u64 available, usage;
};

struct stats_fs {
        bool ok;
        int64_t time_ns;
        struct stats_u64 available, capacity, used, inodes_free, inodes, inodes_used;
};

struct stats_iface {
        char *name; /* NULL: "" */
        struct stats_u64 rx_bytes, rx_errors, tx_bytes, tx_errors;
        /* /proc/<pid>/net/dev only (the CRI has none): cAdvisor's */
        struct stats_u64 rx_packets, rx_dropped, tx_packets, tx_dropped;
};

struct stats_network {
        bool ok;
        int64_t time_ns;
        struct stats_iface dflt; /* the inline InterfaceStats */
        struct stats_iface *ifaces;
        size_t n_ifaces;
};

struct stats_rlimit {
        bool ok;
        int64_t time_ns;
        bool has_maxpid, has_curproc;
        int64_t maxpid, curproc;
};

/* A container (also a system container: no rootfs, no logs). */
struct stats_container {
        char *name;
        int64_t start_ns;
        /* pods' containers only (NULL for system containers): the runtime's
         * ID, its image (ImageSpec user_specified_image, else image) and
         * its cgroup */
        char *id, *image;
        struct stats_cgroup_view cgroup;
        struct stats_cpu cpu;
        struct stats_memory memory;
        struct stats_io io;
        struct stats_swap swap;
        struct stats_fs rootfs, logs;
};

struct stats_volume {
        char *name;
        bool ephemeral; /* counted in ephemeral-storage (IsLocalEphemeralVolume) */
        struct stats_fs fs;
};

struct stats_pod {
        char *name, *namespace, *uid;
        int64_t start_ns;
        struct stats_container *containers; /* sorted by name */
        size_t n_containers;
        struct stats_cpu cpu;
        struct stats_memory memory;
        struct stats_io io;
        struct stats_network network;
        struct stats_volume *volumes; /* sorted by name */
        size_t n_volumes;
        struct stats_fs ephemeral;
        bool has_process_stats; /* process_stats is set (its count may not be) */
        struct stats_u64 process_count;
        struct stats_swap swap;
        /* /metrics/cadvisor: the pod's cgroup, its sandbox's (the pause
         * container: <pod cgroup>/<sandbox id>) and the network cAdvisor
         * reads for the sandbox (/proc/<pid>/net/dev of one of the pod's
         * processes; ok false when it could not be read) */
        char *sandbox_id;
        struct stats_cgroup_view cgroup, sandbox_cgroup;
        struct stats_network proc_network;
};

struct stats_node {
        int64_t start_ns;
        struct stats_container *sys; /* kubelet, runtime, misc, pods (those that exist) */
        size_t n_sys;
        struct stats_cpu cpu;
        struct stats_memory memory;
        struct stats_io io;
        struct stats_network network;
        struct stats_fs fs;
        struct stats_fs image_fs, container_fs;
        struct stats_rlimit rlimit;
        struct stats_swap swap;
};

struct stats_raw_cgroup {
        struct stats_cgroup_view view;
        int64_t start_ns; /* the cgroup's creation (cAdvisor's) */
};

struct stats_snapshot {
        atomic_int refs;
        int64_t taken_mono_ns;
        /* the node's part alone (stats__get_since with pods false): no
         * pods, no pods_error; never served to a caller that needs pods */
        bool node_only;
        char *node_name;
        struct stats_node node;
        struct stats_pod *pods; /* sorted by namespace, name, uid */
        size_t n_pods;
        /* cAdvisor's root container "/" beyond the node's values: the root
         * cgroup's block I/O and the machine's filesystems */
        struct stats_blkio root_blkio;
        struct stats_root_fs *root_fs;
        size_t n_root_fs;
        int64_t root_time_ns; /* when those were read */
        /* the other raw cgroups cAdvisor watches for the kubelet (its
         * cgroupRoots): the pods' cgroup and its QoS classes, the kubelet's,
         * the runtime's and the system cgroups, those that exist */
        struct stats_raw_cgroup *raw;
        size_t n_raw;
        /* The parts that fail a summary, as upstream's Get fails it (NULL:
         * fine).  pods_error fails both views and the resource metrics. */
        char *pods_error, *rootfs_error, *imagefs_error;
};

struct stats_snapshot *stats__snapshot_new(void);
struct stats_snapshot *stats__snapshot_ref(struct stats_snapshot *s);
/* Drops a reference; the last one frees everything.  NULL-safe. */
void stats__snapshot_unref(struct stats_snapshot *s);
void stats__container_clear(struct stats_container *c);
void stats__pod_clear(struct stats_pod *p);
void stats__network_clear(struct stats_network *n);
void stats__cgroup_view_clear(struct stats_cgroup_view *v);
/* cAdvisor's reading of a cgroup (/metrics/cadvisor) at now_ns: out->name
 * stays NULL when it does not exist or has no readings; container: a
 * runtime container's (the sandbox's too), which has a root process
 * (container_ulimits_soft), not a pod's or a raw cgroup's. */
void stats__cgroup_view_read(struct stats_provider *p, const char *name, int64_t now_ns,
                             bool container, struct stats_cgroup_view *out);

/* ---- Renderers (summary.c, resource_metrics.c) ---------------------------- */

/* The Summary of a snapshot (errors ignored: the caller checks them). */
json_t *stats__summary_of(const struct stats_snapshot *s, bool only_cpu_and_memory);
/* metav1.Time's JSON: RFC 3339 in UTC, seconds; null for the zero time. */
json_t *stats__time_json(int64_t ns);

/* /metrics/cadvisor (cadvisor_metrics.c): cAdvisor's MachineInfo as its
 * machine collector shows it. */
struct stats_cadvisor_machine {
        struct stats_machine_info info;
        /* GetPhysicalCores / GetSockets: the distinct "core id" / "physical
         * id" lines of /proc/cpuinfo, else the distinct topology values of
         * <sys>/devices/system/cpu/cpu<N> */
        int64_t physical_cores, sockets;
        int64_t time_ns; /* MachineInfo.Timestamp: when it was read */
};
void stats__parse_cpuinfo_counts(const char *text, int64_t *physical_cores, int64_t *sockets);
void stats__cadvisor_machine_read(const char *proc_root, const char *sys_root, const char *etc_root,
                                  const char *var_lib_root, int64_t now_ns,
                                  struct stats_cadvisor_machine *out);
/* stats_register_cadvisor_metrics with the machine facts given (copied). */
int stats__register_cadvisor_metrics(struct metrics_registry *r, struct stats_provider *p,
                                     const struct stats_cadvisor_machine *m, ck_error_t *err);

/* ---- Pure parsers (parse.c): file contents in, values out ----------------- */

/* /proc/meminfo, in bytes (the "kB" values times 1024). */
struct stats_meminfo {
        bool has_total, has_free, has_available, has_swap_total, has_swap_free;
        bool has_anon, has_inactive_file, has_active_file, has_buffers, has_cached;
        uint64_t total, free, available, swap_total, swap_free;
        uint64_t anon, inactive_file, active_file, buffers, cached;
};
void stats__parse_meminfo(const char *text, struct stats_meminfo *out);

/* /proc/stat: the aggregate "cpu" line (USER_HZ ticks) and btime. */
struct stats_proc_stat {
        bool has_cpu, has_btime;
        uint64_t user, nice, system, idle, iowait, irq, softirq, steal;
        int64_t btime;
};
void stats__parse_proc_stat(const char *text, struct stats_proc_stat *out);
/* The busy time of the "cpu" line in ns: user + nice + system + irq +
 * softirq + steal (guest time is part of user / nice already). */
uint64_t stats__proc_stat_busy_ns(const struct stats_proc_stat *s, long ticks_per_second);

/* The value of "key value" lines (cpu.stat, memory.stat, /proc/vmstat).
 * Returns false when the key is absent or its value is not a uint64. */
bool stats__parse_keyed(const char *text, const char *key, uint64_t *out);
/* A file holding one unsigned number ("max" is UINT64_MAX, as cAdvisor's
 * readUInt64).  Returns false when it is neither. */
bool stats__parse_uint(const char *text, uint64_t *out);
/* A PSI file (cpu.pressure, /proc/pressure/io): "some avg10=... total=..."
 * and "full ...".  Returns false when no line parses (out->ok false). */
bool stats__parse_psi(const char *text, struct stats_psi *out);
/* /proc/loadavg's 4th field "running/total": the total. */
bool stats__parse_loadavg_procs(const char *text, int64_t *out);
/* /proc/<pid>/limits: the soft limit of "Max open files" (-1 for
 * "unlimited"); false when the line is absent or does not parse. */
bool stats__parse_nofile_soft(const char *text, int64_t *out);
/* A CPU list ("0-3,8,10-11\n", /sys/devices/system/cpu/online): the count,
 * 0 when it does not parse. */
int64_t stats__parse_cpu_list(const char *text);

/* /proc/<pid>/net/dev as cAdvisor's scanInterfaceStats reads it: the two
 * header lines skipped, every line 17 fields once its ':' are removed (else
 * the whole file is refused: returns -1), the devices lo*, veth*, docker*
 * and nerdctl* left out.  *ifaces is a new array of *n entries. */
int stats__parse_net_dev(const char *text, struct stats_iface **ifaces, size_t *n);
/* upstream cadvisorInfoToNetworkStats: every interface, the inline one
 * "eth0" (name "" and no counters when there is none).  Takes the array. */
void stats__network_from_ifaces(struct stats_network *out, int64_t time_ns,
                                struct stats_iface *ifaces, size_t n);

/* /proc/<pid>/cgroup: the process's cgroup as upstream's getContainer finds
 * it: v2 the "0::" line; v1 the cpu controller's path, which must be the
 * memory controller's too.  Returns a new string or NULL. */
char *stats__parse_proc_cgroup(const char *text, bool v2);

/* The control files of one cgroup, as read (NULL when absent). */
struct stats_cgroup_files {
        const char *cpu_stat;      /* v2 cpu.stat */
        const char *cpuacct_usage; /* v1 cpuacct.usage */
        const char *memory_stat;   /* memory.stat */
        const char *memory_usage;  /* v2 memory.current; v1 memory.usage_in_bytes */
        const char *memory_limit;  /* v2 memory.max; v1 memory.limit_in_bytes */
        const char *swap_usage;    /* v2 memory.swap.current */
        const char *swap_limit;    /* v2 memory.swap.max; v1 memory.memsw.limit_in_bytes */
        const char *cpu_pressure;  /* v2 cpu.pressure */
        const char *memory_pressure;
        const char *io_pressure;
        const char *meminfo; /* the root cgroup: /proc/meminfo, see below */
        /* the extras (see struct stats_cgroup_sample) */
        const char *cpuacct_stat;   /* v1 */
        const char *cpu_max;        /* v2 */
        const char *cpu_weight;     /* v2 */
        const char *cpu_shares;     /* v1 */
        const char *cfs_period;     /* v1 cpu.cfs_period_us */
        const char *cfs_quota;      /* v1 cpu.cfs_quota_us */
        const char *memory_failcnt; /* v1 */
        const char *memory_peak;    /* v2 memory.peak; v1 memory.max_usage_in_bytes */
        const char *memory_min;     /* v2 memory.min; v1 memory.soft_limit_in_bytes */
        const char *memory_events;  /* v2 */
        const char *pids_current, *pids_max;
};

/* Turns the files of a cgroup into a sample.  root: the root cgroup, whose
 * v2 memory has no memory.current (usage is anon + file of memory.stat and
 * swap SwapTotal - SwapFree of f->meminfo, as runc's rootStatsFromMeminfo)
 * and whose limits are the machine's MemTotal / SwapTotal (cAdvisor's raw
 * handler for "/"). */
void stats__cgroup_sample_parse(bool v2, bool root, const struct stats_cgroup_files *f,
                                struct stats_cgroup_sample *out);

/* ---- Cgroup tree reader (cgroup.c) ----------------------------------------- */

struct stats_cgroupfs {
        char *root; /* /sys/fs/cgroup */
        bool v2;
};

/* Probes v2 (<root>/cgroup.controllers) or v1. */
void stats__cgroupfs_init(struct stats_cgroupfs *fs, const char *root);
void stats__cgroupfs_clear(struct stats_cgroupfs *fs);
/* Whether the cgroup name ("/kubepods/pod<uid>", "" or "/" for the root)
 * exists (v1: in the memory hierarchy). */
bool stats__cgroup_exists(const struct stats_cgroupfs *fs, const char *name);
/* Reads the cgroup's files into a sample; false when it does not exist or
 * has neither CPU nor memory readings.  proc_root: for the root's meminfo. */
bool stats__cgroup_read(const struct stats_cgroupfs *fs, const char *name, const char *proc_root,
                        struct stats_cgroup_sample *out);
/* The cgroup's creation time as cAdvisor takes it: the oldest mtime of its
 * directories (0 when unknown). */
int64_t stats__cgroup_ctime_ns(const struct stats_cgroupfs *fs, const char *name);
/* The pids of cgroup.procs: recursive false counts the cgroup's own
 * processes (cAdvisor's process count), true also its descendants'.
 * first_pid (may be NULL): one of them, 0 when there is none. */
int64_t stats__cgroup_procs(const struct stats_cgroupfs *fs, const char *name, bool recursive,
                            int64_t *first_pid);
/* cAdvisor's processStatsFromProcs: the entries of /proc/<pid>/fd of the
 * cgroup's own processes, and those that are sockets; first_pid: the first
 * of those processes (0: none), as stats__cgroup_procs gives it. */
void stats__cgroup_fds(const struct stats_cgroupfs *fs, const char *name, const char *proc_root,
                       uint64_t *fds, uint64_t *sockets, int64_t *first_pid);
/* The cgroup's block I/O, the files runc reads (v1: the bfq, cfq, then
 * throttle tables, the first whose io_serviced lists a device; v2:
 * io.stat).  Empty when there is none. */
void stats__cgroup_blkio(const struct stats_cgroupfs *fs, const char *name,
                         struct stats_blkio *out);

/* ---- Disk usage (disk.c) --------------------------------------------------- */

/* upstream fs.DiskUsage: st_blocks * 512 and one inode per entry under path
 * (path included), hard links counted once, not crossing into other
 * filesystems.  Errors: the top cannot be stat'ed. */
int stats__disk_usage(const char *path, uint64_t *bytes, uint64_t *inodes, ck_error_t *err);

/* upstream rootFsInfoToFsStats + metricsByPathToFsStats over the files (not
 * directories) directly in dir: the root fs' available / capacity / inodes,
 * used and inodes used summed over the files.  Returns false when dir
 * cannot be read (upstream: no stats). */
bool stats__dir_files_usage(const char *dir, const struct stats_fs *rootfs, int64_t now_ns,
                            struct stats_fs *out);

/* ---- The provider (provider.c) and its collectors ---------------------------- */

/* Previous cumulative CPU sample per key (container ID, "pod/<sandbox>",
 * "cgroup:<name>"), upstream's cpuUsageCache. */
struct stats_cpu_cache;
struct stats_cpu_cache *stats__cpu_cache_new(void);
void stats__cpu_cache_free(struct stats_cpu_cache *c);
/* upstream getAndUpdateContainerUsageNanoCores: the usage between the
 * cached sample of key and this one (ok false when there is no earlier
 * sample, the counter went back or the time did not advance); the cache
 * then holds this sample (but not when the time did not advance). */
struct stats_u64 stats__cpu_cache_update(struct stats_cpu_cache *c, const char *key,
                                         int64_t time_ns, uint64_t usage_core_ns);
/* upstream cleanupOutdatedCaches: drops samples older than 10 minutes. */
void stats__cpu_cache_expire(struct stats_cpu_cache *c, int64_t now_ns);

/* Cached volume usage per pod (du is the costly part). */
struct stats_volume_cache;

struct stats_provider {
        /* options, copied */
        char *node_name, *root_dir, *pod_logs_dir, *proc_root, *sys_root;
        /* read once, at creation, as cAdvisor's manager does at start: the
         * disks naming block devices, the filesystems of the root "/" */
        struct stats_disk *disks;
        size_t n_disks;
        struct stats_partition *partitions;
        size_t n_partitions;
        char *kubepods;       /* "<cgroup root>/kubepods" (cgroupfs form, as src/cm names
                                 it), NULL without cgroups_per_qos */
        char *pods_cgroup;    /* the "pods" system container (its path) */
        bool systemd_cgroups; /* names are slices (util/cgroup_name.h) */
        char *kubelet_cgroup, *runtime_cgroup, *system_cgroup; /* NULL: none / detect */
        bool detect_kubelet_cgroup;
        int64_t interval_ns, volume_period_ns;
        int64_t (*now_real_ns)(void *ctx);
        int64_t (*now_mono_ns)(void *ctx);
        void *clock_ctx;
        int64_t created_ns; /* kubelet's system container start time */
        struct stats_cgroupfs cgroupfs;
        long ticks_per_second;
        int64_t boot_time_ns; /* node.startTime */

        /* the cache */
        pthread_mutex_t lock;
        pthread_cond_t cond;
        struct stats_snapshot *snap; /* the latest, or NULL */
        bool refreshing;
        uint64_t generation; /* refreshes finished */

        /* Refresh state: only the thread that set `refreshing` touches it. */
        struct cri_client *runtime, *image; /* image == runtime when one endpoint */
        struct stats_cpu_cache *cpu_cache;
        struct stats_volume_cache *volume_cache;
        bool pod_stats_from_cri;          /* stats_options */
        bool sandbox_stats_unimplemented; /* logged once */

        /* the resource metrics' collect contexts (guarded by lock) */
        void **metric_ctx;
        size_t n_metric_ctx;
};

int64_t stats__now_real(const struct stats_provider *p);
int64_t stats__now_mono(const struct stats_provider *p);

/* The cached snapshot, refreshed first when older than the interval (see
 * stats.h).  Returns a new reference (never NULL). */
struct stats_snapshot *stats__get(struct stats_provider *p);
/* The same, refreshed at or after since_mono_ns (the provider's clock).
 * pods false: a snapshot of the node alone will do (the eviction manager's
 * pass with nothing to rank); a full one within the interval serves it too. */
struct stats_snapshot *stats__get_since(struct stats_provider *p, int64_t since_mono_ns, bool pods);

/* Collectors, run by the refreshing thread (node.c, pods.c). */
/* full false: the eviction manager's signals alone (memory, the system
 * containers, the filesystems, the pid limit); not the network, the root's
 * block I/O and filesystems or the raw cgroups (their fds), which only the
 * Summary and /metrics/cadvisor show and a node-only snapshot never serves */
void stats__collect_node(struct stats_provider *p, struct stats_snapshot *s, int64_t now_ns,
                         bool full);
/* CPU of a cgroup into cpu (usageNanoCores from the cache, 0 when unknown,
 * as cAdvisor's), memory, swap and io when given (may be NULL).  limit_*:
 * the machine's for the root.  Returns false when the cgroup has no stats. */
bool stats__cgroup_stats(struct stats_provider *p, const char *name, int64_t now_ns,
                         struct stats_cpu *cpu, struct stats_memory *memory,
                         struct stats_swap *swap, struct stats_io *io);
void stats__collect_pods(struct stats_provider *p, struct stats_snapshot *s, int64_t now_ns);
void stats__collect_image_fs(struct stats_provider *p, struct stats_snapshot *s);

/* Pods from the CRI: pods.c lists and groups them, pod_stats.c builds each. */
struct stats_fs_memo {
        char *mountpoint;
        bool ok;
        struct stats_fs_info info;
};

/* One refresh's working state. */
struct stats_refresh {
        struct stats_provider *p;
        int64_t now_ns, now_mono_ns;
        struct stats_fs rootfs;   /* the kubelet root dir's filesystem (ok false: unknown) */
        struct stats_fs_memo *fs; /* filesystem info per mountpoint, asked once */
        size_t n_fs;
};

/* A pod to build: its sandbox, its sandbox stats (NULL on the
 * ListContainerStats path) and its running containers' stats, each with
 * its container (all borrowed from the CRI responses). */
struct stats_pod_build {
        const Runtime__V1__PodSandbox *sandbox;
        const Runtime__V1__PodSandboxStats *stats;
        const Runtime__V1__ContainerStats **cs;
        const Runtime__V1__Container **ctrs;
        size_t n_cs;
};

/* Fills out (zeroed first) from b. */
void stats__build_pod(struct stats_refresh *r, const struct stats_pod_build *b,
                      struct stats_pod *out);

/* Volume stats (disk.c). */
struct stats_volume_cache *stats__volume_cache_new(void);
void stats__volume_cache_free(struct stats_volume_cache *c);
/* The pod's volumes (new array of *n), measured again when the cached
 * measure is older than period_ns. */
void stats__pod_volumes(struct stats_volume_cache *c, const char *root_dir, const char *uid,
                        int64_t now_ns, int64_t now_mono_ns, int64_t period_ns,
                        struct stats_volume **out, size_t *n);
/* Forgets the pods not in uids (n of them), after each refresh. */
void stats__volume_cache_retain(struct stats_volume_cache *c, char *const *uids, size_t n);
/* upstream makePodStorageStats minus the volume listing: the pod's
 * ephemeral-storage from its containers' rootfs and logs, its ephemeral
 * volumes, its log directory's own files and its etc-hosts. */
void stats__pod_ephemeral(const struct stats_provider *p, struct stats_pod *pod,
                          const struct stats_fs *rootfs, int64_t now_ns);
/* <pod logs dir>/<ns>_<name>_<uid>[/<container>], or NULL when a component
 * is empty or could leave the directory. */
char *stats__pod_logs_path(const char *logs_dir, const char *ns, const char *name, const char *uid,
                           const char *container);

#endif
