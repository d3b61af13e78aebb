/* SPDX-License-Identifier: Apache-2.0 */
/*
 * /metrics/cadvisor: the series upstream's kubelet serves there from
 * cAdvisor (pkg/kubelet/server/server.go: metrics.NewPrometheusCollector
 * with CpuUsage, MemoryUsage, CpuLoad, DiskIO, DiskUsage, NetworkUsage,
 * App, Process, OOM and Pressure (KubeletPSI), and
 * NewPrometheusMachineCollector), with cAdvisor v0.53's names, HELP texts,
 * types and labels, read from the provider's cached snapshot.
 *
 * The containers are the cgroups cAdvisor would report for the pods, with
 * the labels of the kubelet's containerPrometheusLabelsFunc:
 *   "/"                    the root: id="/", the rest "" (the node's values)
 *   <raw cgroup>           id=<cgroup>, the rest "": the pods' cgroup and
 *                          its QoS classes, the kubelet's, the runtime's and
 *                          the system cgroups (the kubelet's cgroupRoots)
 *   <pod cgroup>           id=<cgroup>, pod, namespace; container, image,
 *                          name "" (GetPodByCgroupfs)
 *   <pod cgroup>/<sandbox> the pause container: name=<sandbox id>,
 *                          container "" (the CRI does not name the pause
 *                          image: image ""); the pod's network is here, as
 *                          cAdvisor reports it for the sandbox only
 *   <pod cgroup>/<id>      container=<name>, image, name=<container id>
 * Block I/O (container_fs_reads_bytes_total and the other DiskIO series,
 * container_blkio_device_usage_total) is each cgroup's blkio table per
 * device, named from the machine's disks (cAdvisor's DiskMap, "" for
 * others); the root "/" adds the machine's filesystems (DiskUsage:
 * container_fs_usage_bytes, _limit_bytes, inodes; the DiskIO series from
 * /proc/diskstats), which containerd's containers have none of in
 * cAdvisor either.  Process series: the cgroup's own processes' fds and
 * sockets; container_ulimits_soft for runtime containers only (cAdvisor's
 * containerd handler knows their root process; its raw handler, for pod
 * cgroups and "/", does not).
 * Every container_* sample carries its reading's time (cAdvisor's
 * NewMetricWithTimestamp); container_start_time_seconds and the
 * container_spec_* carry none, container_last_seen the scrape's time;
 * machine_* carry the time the machine facts were read.
 */
#include "stats/stats_internal.h"

#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum family {
        /* the container collector */
        LAST_SEEN,
        CPU_USER,
        CPU_SYSTEM,
        CPU_USAGE,
        CFS_PERIODS,
        CFS_THROTTLED_PERIODS,
        CFS_THROTTLED_SECONDS,
        LOAD_AVERAGE,
        LOAD_D_AVERAGE,
        TASKS_STATE,
        MEM_CACHE,
        MEM_RSS,
        MEM_KERNEL,
        MEM_MAPPED_FILE,
        MEM_SWAP,
        MEM_FAILCNT,
        MEM_USAGE,
        MEM_MAX_USAGE,
        MEM_WORKING_SET,
        MEM_ACTIVE_FILE,
        MEM_INACTIVE_FILE,
        MEM_FAILURES,
        NET_RX_BYTES,
        NET_RX_PACKETS,
        NET_RX_DROPPED,
        NET_RX_ERRORS,
        NET_TX_BYTES,
        NET_TX_PACKETS,
        NET_TX_DROPPED,
        NET_TX_ERRORS,
        FS_INODES_FREE,
        FS_INODES_TOTAL,
        FS_LIMIT,
        FS_USAGE,
        FS_READS_BYTES,
        FS_READS,
        FS_SECTOR_READS,
        FS_READS_MERGED,
        FS_READ_SECONDS,
        FS_WRITES_BYTES,
        FS_WRITES,
        FS_SECTOR_WRITES,
        FS_WRITES_MERGED,
        FS_WRITE_SECONDS,
        FS_IO_CURRENT,
        FS_IO_TIME,
        FS_IO_TIME_WEIGHTED,
        BLKIO_DEVICE_USAGE,
        PROCESSES,
        FILE_DESCRIPTORS,
        SOCKETS,
        ULIMITS_SOFT,
        THREADS_MAX,
        THREADS,
        OOM_EVENTS,
        PSI_CPU_STALLED,
        PSI_CPU_WAITING,
        PSI_MEMORY_STALLED,
        PSI_MEMORY_WAITING,
        PSI_IO_STALLED,
        PSI_IO_WAITING,
        START_TIME,
        SPEC_CPU_PERIOD,
        SPEC_CPU_QUOTA,
        SPEC_CPU_SHARES,
        SPEC_MEMORY_LIMIT,
        SPEC_MEMORY_SWAP_LIMIT,
        SPEC_MEMORY_RESERVATION,
        CONTAINER_SCRAPE_ERROR,
        /* the machine collector */
        MACHINE_PHYSICAL_CORES,
        MACHINE_CORES,
        MACHINE_SOCKETS,
        MACHINE_MEMORY,
        MACHINE_SWAP,
        MACHINE_NVM_CAPACITY,
        MACHINE_NVM_POWER,
        MACHINE_SCRAPE_ERROR,
        N_FAMILIES,
};

#define FIRST_MACHINE MACHINE_PHYSICAL_CORES

/* The container labels, in the order every container family registers
 * them (client_golang renders them sorted anyway), then the extra ones. */
enum { L_CONTAINER, L_ID, L_IMAGE, L_NAME, L_NAMESPACE, L_POD, N_BASE };

static const struct {
        const char *name, *help;
        enum metrics_type type;
        const char *extra[4]; /* extra label names */
} families[N_FAMILIES] = {
    [LAST_SEEN] = {"container_last_seen",
                   "Last time a container was seen by the exporter",
                   METRICS_GAUGE,
                   {0}},
    [CPU_USER] = {"container_cpu_user_seconds_total",
                  "Cumulative user cpu time consumed in seconds.",
                  METRICS_COUNTER,
                  {0}},
    [CPU_SYSTEM] = {"container_cpu_system_seconds_total",
                    "Cumulative system cpu time consumed in seconds.",
                    METRICS_COUNTER,
                    {0}},
    [CPU_USAGE] = {"container_cpu_usage_seconds_total",
                   "Cumulative cpu time consumed in seconds.",
                   METRICS_COUNTER,
                   {"cpu"}},
    [CFS_PERIODS] = {"container_cpu_cfs_periods_total",
                     "Number of elapsed enforcement period intervals.",
                     METRICS_COUNTER,
                     {0}},
    [CFS_THROTTLED_PERIODS] = {"container_cpu_cfs_throttled_periods_total",
                               "Number of throttled period intervals.",
                               METRICS_COUNTER,
                               {0}},
    [CFS_THROTTLED_SECONDS] = {"container_cpu_cfs_throttled_seconds_total",
                               "Total time duration the container has been throttled.",
                               METRICS_COUNTER,
                               {0}},
    [LOAD_AVERAGE] = {"container_cpu_load_average_10s",
                      "Value of container cpu load average over the last 10 seconds.",
                      METRICS_GAUGE,
                      {0}},
    [LOAD_D_AVERAGE] = {"container_cpu_load_d_average_10s",
                        "Value of container cpu load.d average over the last 10 seconds.",
                        METRICS_GAUGE,
                        {0}},
    [TASKS_STATE] = {"container_tasks_state",
                     "Number of tasks in given state",
                     METRICS_GAUGE,
                     {"state"}},
    [MEM_CACHE] = {"container_memory_cache",
                   "Number of bytes of page cache memory.",
                   METRICS_GAUGE,
                   {0}},
    [MEM_RSS] = {"container_memory_rss", "Size of RSS in bytes.", METRICS_GAUGE, {0}},
    [MEM_KERNEL] = {"container_memory_kernel_usage",
                    "Size of kernel memory allocated in bytes.",
                    METRICS_GAUGE,
                    {0}},
    [MEM_MAPPED_FILE] = {"container_memory_mapped_file",
                         "Size of memory mapped files in bytes.",
                         METRICS_GAUGE,
                         {0}},
    [MEM_SWAP] = {"container_memory_swap", "Container swap usage in bytes.", METRICS_GAUGE, {0}},
    [MEM_FAILCNT] = {"container_memory_failcnt",
                     "Number of memory usage hits limits",
                     METRICS_COUNTER,
                     {0}},
    [MEM_USAGE] = {"container_memory_usage_bytes",
                   "Current memory usage in bytes, including all memory regardless of when it was "
                   "accessed",
                   METRICS_GAUGE,
                   {0}},
    [MEM_MAX_USAGE] = {"container_memory_max_usage_bytes",
                       "Maximum memory usage recorded in bytes",
                       METRICS_GAUGE,
                       {0}},
    [MEM_WORKING_SET] = {"container_memory_working_set_bytes",
                         "Current working set in bytes.",
                         METRICS_GAUGE,
                         {0}},
    [MEM_ACTIVE_FILE] = {"container_memory_total_active_file_bytes",
                         "Current total active file in bytes.",
                         METRICS_GAUGE,
                         {0}},
    [MEM_INACTIVE_FILE] = {"container_memory_total_inactive_file_bytes",
                           "Current total inactive file in bytes.",
                           METRICS_GAUGE,
                           {0}},
    [MEM_FAILURES] = {"container_memory_failures_total",
                      "Cumulative count of memory allocation failures.",
                      METRICS_COUNTER,
                      {"failure_type", "scope"}},
    [NET_RX_BYTES] = {"container_network_receive_bytes_total",
                      "Cumulative count of bytes received",
                      METRICS_COUNTER,
                      {"interface"}},
    [NET_RX_PACKETS] = {"container_network_receive_packets_total",
                        "Cumulative count of packets received",
                        METRICS_COUNTER,
                        {"interface"}},
    [NET_RX_DROPPED] = {"container_network_receive_packets_dropped_total",
                        "Cumulative count of packets dropped while receiving",
                        METRICS_COUNTER,
                        {"interface"}},
    [NET_RX_ERRORS] = {"container_network_receive_errors_total",
                       "Cumulative count of errors encountered while receiving",
                       METRICS_COUNTER,
                       {"interface"}},
    [NET_TX_BYTES] = {"container_network_transmit_bytes_total",
                      "Cumulative count of bytes transmitted",
                      METRICS_COUNTER,
                      {"interface"}},
    [NET_TX_PACKETS] = {"container_network_transmit_packets_total",
                        "Cumulative count of packets transmitted",
                        METRICS_COUNTER,
                        {"interface"}},
    [NET_TX_DROPPED] = {"container_network_transmit_packets_dropped_total",
                        "Cumulative count of packets dropped while transmitting",
                        METRICS_COUNTER,
                        {"interface"}},
    [NET_TX_ERRORS] = {"container_network_transmit_errors_total",
                       "Cumulative count of errors encountered while transmitting",
                       METRICS_COUNTER,
                       {"interface"}},
    [FS_INODES_FREE] = {"container_fs_inodes_free",
                        "Number of available Inodes",
                        METRICS_GAUGE,
                        {"device"}},
    [FS_INODES_TOTAL] = {"container_fs_inodes_total",
                         "Number of Inodes",
                         METRICS_GAUGE,
                         {"device"}},
    [FS_LIMIT] = {"container_fs_limit_bytes",
                  "Number of bytes that can be consumed by the container on this filesystem.",
                  METRICS_GAUGE,
                  {"device"}},
    [FS_USAGE] = {"container_fs_usage_bytes",
                  "Number of bytes that are consumed by the container on this filesystem.",
                  METRICS_GAUGE,
                  {"device"}},
    [FS_READS_BYTES] = {"container_fs_reads_bytes_total",
                        "Cumulative count of bytes read",
                        METRICS_COUNTER,
                        {"device"}},
    [FS_READS] = {"container_fs_reads_total",
                  "Cumulative count of reads completed",
                  METRICS_COUNTER,
                  {"device"}},
    [FS_SECTOR_READS] = {"container_fs_sector_reads_total",
                         "Cumulative count of sector reads completed",
                         METRICS_COUNTER,
                         {"device"}},
    [FS_READS_MERGED] = {"container_fs_reads_merged_total",
                         "Cumulative count of reads merged",
                         METRICS_COUNTER,
                         {"device"}},
    [FS_READ_SECONDS] = {"container_fs_read_seconds_total",
                         "Cumulative count of seconds spent reading",
                         METRICS_COUNTER,
                         {"device"}},
    [FS_WRITES_BYTES] = {"container_fs_writes_bytes_total",
                         "Cumulative count of bytes written",
                         METRICS_COUNTER,
                         {"device"}},
    [FS_WRITES] = {"container_fs_writes_total",
                   "Cumulative count of writes completed",
                   METRICS_COUNTER,
                   {"device"}},
    [FS_SECTOR_WRITES] = {"container_fs_sector_writes_total",
                          "Cumulative count of sector writes completed",
                          METRICS_COUNTER,
                          {"device"}},
    [FS_WRITES_MERGED] = {"container_fs_writes_merged_total",
                          "Cumulative count of writes merged",
                          METRICS_COUNTER,
                          {"device"}},
    [FS_WRITE_SECONDS] = {"container_fs_write_seconds_total",
                          "Cumulative count of seconds spent writing",
                          METRICS_COUNTER,
                          {"device"}},
    [FS_IO_CURRENT] = {"container_fs_io_current",
                       "Number of I/Os currently in progress",
                       METRICS_GAUGE,
                       {"device"}},
    [FS_IO_TIME] = {"container_fs_io_time_seconds_total",
                    "Cumulative count of seconds spent doing I/Os",
                    METRICS_COUNTER,
                    {"device"}},
    [FS_IO_TIME_WEIGHTED] = {"container_fs_io_time_weighted_seconds_total",
                             "Cumulative weighted I/O time in seconds",
                             METRICS_COUNTER,
                             {"device"}},
    [BLKIO_DEVICE_USAGE] = {"container_blkio_device_usage_total",
                            "Blkio Device bytes usage",
                            METRICS_COUNTER,
                            {"device", "major", "minor", "operation"}},
    [PROCESSES] = {"container_processes",
                   "Number of processes running inside the container.",
                   METRICS_GAUGE,
                   {0}},
    [FILE_DESCRIPTORS] = {"container_file_descriptors",
                          "Number of open file descriptors for the container.",
                          METRICS_GAUGE,
                          {0}},
    [SOCKETS] = {"container_sockets",
                 "Number of open sockets for the container.",
                 METRICS_GAUGE,
                 {0}},
    [ULIMITS_SOFT] = {"container_ulimits_soft",
                      "Soft ulimit values for the container root process. Unlimited if -1, "
                      "except priority and nice",
                      METRICS_GAUGE,
                      {"ulimit"}},
    [THREADS_MAX] = {"container_threads_max",
                     "Maximum number of threads allowed inside the container, infinity if value "
                     "is zero",
                     METRICS_GAUGE,
                     {0}},
    [THREADS] = {"container_threads",
                 "Number of threads running inside the container",
                 METRICS_GAUGE,
                 {0}},
    [OOM_EVENTS] = {"container_oom_events_total",
                    "Count of out of memory events observed for the container",
                    METRICS_COUNTER,
                    {0}},
    [PSI_CPU_STALLED] = {"container_pressure_cpu_stalled_seconds_total",
                         "Total time duration no tasks in the container could make progress due "
                         "to CPU congestion.",
                         METRICS_COUNTER,
                         {0}},
    [PSI_CPU_WAITING] = {"container_pressure_cpu_waiting_seconds_total",
                         "Total time duration tasks in the container have waited due to CPU "
                         "congestion.",
                         METRICS_COUNTER,
                         {0}},
    [PSI_MEMORY_STALLED] = {"container_pressure_memory_stalled_seconds_total",
                            "Total time duration no tasks in the container could make progress "
                            "due to memory congestion.",
                            METRICS_COUNTER,
                            {0}},
    [PSI_MEMORY_WAITING] = {"container_pressure_memory_waiting_seconds_total",
                            "Total time duration tasks in the container have waited due to memory "
                            "congestion.",
                            METRICS_COUNTER,
                            {0}},
    [PSI_IO_STALLED] = {"container_pressure_io_stalled_seconds_total",
                        "Total time duration no tasks in the container could make progress due "
                        "to IO congestion.",
                        METRICS_COUNTER,
                        {0}},
    [PSI_IO_WAITING] = {"container_pressure_io_waiting_seconds_total",
                        "Total time duration tasks in the container have waited due to IO "
                        "congestion.",
                        METRICS_COUNTER,
                        {0}},
    [START_TIME] = {"container_start_time_seconds",
                    "Start time of the container since unix epoch in seconds.",
                    METRICS_GAUGE,
                    {0}},
    [SPEC_CPU_PERIOD] = {"container_spec_cpu_period",
                         "CPU period of the container.",
                         METRICS_GAUGE,
                         {0}},
    [SPEC_CPU_QUOTA] = {"container_spec_cpu_quota",
                        "CPU quota of the container.",
                        METRICS_GAUGE,
                        {0}},
    [SPEC_CPU_SHARES] = {"container_spec_cpu_shares",
                         "CPU share of the container.",
                         METRICS_GAUGE,
                         {0}},
    [SPEC_MEMORY_LIMIT] = {"container_spec_memory_limit_bytes",
                           "Memory limit for the container.",
                           METRICS_GAUGE,
                           {0}},
    [SPEC_MEMORY_SWAP_LIMIT] = {"container_spec_memory_swap_limit_bytes",
                                "Memory swap limit for the container.",
                                METRICS_GAUGE,
                                {0}},
    [SPEC_MEMORY_RESERVATION] = {"container_spec_memory_reservation_limit_bytes",
                                 "Memory reservation limit for the container.",
                                 METRICS_GAUGE,
                                 {0}},
    [CONTAINER_SCRAPE_ERROR] = {"container_scrape_error",
                                "1 if there was an error while getting container metrics, 0 "
                                "otherwise",
                                METRICS_GAUGE,
                                {0}},
    [MACHINE_PHYSICAL_CORES] = {"machine_cpu_physical_cores",
                                "Number of physical CPU cores.",
                                METRICS_GAUGE,
                                {0}},
    [MACHINE_CORES] = {"machine_cpu_cores", "Number of logical CPU cores.", METRICS_GAUGE, {0}},
    [MACHINE_SOCKETS] = {"machine_cpu_sockets", "Number of CPU sockets.", METRICS_GAUGE, {0}},
    [MACHINE_MEMORY] = {"machine_memory_bytes",
                        "Amount of memory installed on the machine.",
                        METRICS_GAUGE,
                        {0}},
    [MACHINE_SWAP] = {"machine_swap_bytes",
                      "Amount of swap memory available on the machine.",
                      METRICS_GAUGE,
                      {0}},
    [MACHINE_NVM_CAPACITY] = {"machine_nvm_capacity",
                              "NVM capacity value labeled by NVM mode (memory mode or app direct "
                              "mode).",
                              METRICS_GAUGE,
                              {"mode"}},
    [MACHINE_NVM_POWER] = {"machine_nvm_avg_power_budget_watts",
                           "NVM power budget.",
                           METRICS_GAUGE,
                           {0}},
    [MACHINE_SCRAPE_ERROR] = {"machine_scrape_error",
                              "1 if there was an error while getting machine metrics, 0 "
                              "otherwise.",
                              METRICS_GAUGE,
                              {0}},
};

/* What the registry's collect callbacks borrow (the provider owns it). */
struct cadvisor_ctx;

struct family_ctx {
        struct cadvisor_ctx *c;
        enum family f;
};

struct cadvisor_ctx {
        struct stats_provider *p;
        struct stats_cadvisor_machine machine;
        struct family_ctx fam[N_FAMILIES];
};

/* One cAdvisor container of the snapshot. */
struct entry {
        const char *v[N_BASE];
        int64_t start_ns;
        const struct stats_cgroup_view *cg; /* NULL: the root, from the node's values */
        const struct stats_node *node;
        const struct stats_network *net; /* NULL: no network */
        const struct stats_blkio *blkio; /* NULL: no block I/O */
        const struct stats_root_fs *fs;  /* the root's filesystems */
        size_t n_fs;
        int64_t io_time_ns;             /* the block I/O and filesystems' reading */
        const struct stats_provider *p; /* its disk names */
};

/* Go's time.UnixMilli. */
static int64_t ms_of(int64_t ns)
{
        int64_t ms = ns / 1000000;
        if (ns % 1000000 < 0)
                ms--;
        return ms;
}

/* Go's time.Unix (seconds, rounded down). */
static int64_t unix_of(int64_t ns)
{
        int64_t s = ns / 1000000000;
        if (ns % 1000000000 < 0)
                s--;
        return s;
}

/* cAdvisor's specMemoryValue: "unlimited" (above 2^62) is 0. */
static double spec_memory(uint64_t v)
{
        return v > (1ull << 62) ? 0 : (double)v;
}

/* The base labels plus up to two extra values. */
static void emit(struct metrics_emit *e, const struct entry *en, const char *x1, const char *x2,
                 double v, bool ts, int64_t time_ns)
{
        const char *vals[N_BASE + 2];
        memcpy(vals, en->v, sizeof(en->v));
        vals[N_BASE] = x1;
        vals[N_BASE + 1] = x2;
        if (ts)
                metrics_emit_at(e, vals, v, ms_of(time_ns));
        else
                metrics_emit(e, vals, v);
}

/* The base labels plus four extra values (container_blkio_device_usage_total). */
static void emit4(struct metrics_emit *e, const struct entry *en, const char *const x[4], double v,
                  int64_t time_ns)
{
        const char *vals[N_BASE + 4];
        memcpy(vals, en->v, sizeof(en->v));
        memcpy(vals + N_BASE, x, 4 * sizeof(*x));
        metrics_emit_at(e, vals, v, ms_of(time_ns));
}

/* A blkio table's value of the operation for a DiskIO family: bytes
 * (IoServiceBytes) or ios (IoServiced); false for the families whose
 * tables (sectors, merged, times, queued: the pre-5.0 cfq and debug bfq
 * files) are not read. */
static bool io_table(enum family f, bool *bytes, enum stats_blkio_op *op)
{
        switch (f) {
        case FS_READS_BYTES:
                *bytes = true;
                *op = STATS_BLKIO_READ;
                return true;
        case FS_WRITES_BYTES:
                *bytes = true;
                *op = STATS_BLKIO_WRITE;
                return true;
        case FS_READS:
                *bytes = false;
                *op = STATS_BLKIO_READ;
                return true;
        case FS_WRITES:
                *bytes = false;
                *op = STATS_BLKIO_WRITE;
                return true;
        default:
                return false;
        }
}

/* A root filesystem's value for a DiskUsage or DiskIO family (false: the
 * family has no filesystem source: bytes read and written).  The times are
 * cAdvisor's: /proc/diskstats' milliseconds divided by 1e9, as its
 * collector does (float64(fs.ReadTime) / float64(time.Second)). */
static bool fs_value(enum family f, const struct stats_root_fs *fs, double *v)
{
        switch (f) {
        case FS_INODES_FREE:
                *v = (double)fs->inodes_free;
                return true;
        case FS_INODES_TOTAL:
                *v = (double)fs->inodes;
                return true;
        case FS_LIMIT:
                *v = (double)fs->limit;
                return true;
        case FS_USAGE:
                *v = (double)fs->usage;
                return true;
        case FS_READS:
                *v = (double)fs->reads;
                return true;
        case FS_SECTOR_READS:
                *v = (double)fs->sectors_read;
                return true;
        case FS_READS_MERGED:
                *v = (double)fs->reads_merged;
                return true;
        case FS_READ_SECONDS:
                *v = (double)fs->read_ms / 1e9;
                return true;
        case FS_WRITES:
                *v = (double)fs->writes;
                return true;
        case FS_SECTOR_WRITES:
                *v = (double)fs->sectors_written;
                return true;
        case FS_WRITES_MERGED:
                *v = (double)fs->writes_merged;
                return true;
        case FS_WRITE_SECONDS:
                *v = (double)fs->write_ms / 1e9;
                return true;
        case FS_IO_CURRENT:
                *v = (double)fs->io_in_progress;
                return true;
        case FS_IO_TIME:
                *v = (double)fs->io_ms / 1e9;
                return true;
        case FS_IO_TIME_WEIGHTED:
                *v = (double)fs->weighted_io_ms / 1e9;
                return true;
        default:
                return false;
        }
}

/* The device label of a blkio device: for the root, the filesystem on it
 * first (cAdvisor's fsNamer), else the machine's disk of that number. */
static const char *device_name(const struct entry *en, uint32_t major, uint32_t minor)
{
        for (size_t i = 0; i < en->n_fs; i++)
                if (en->fs[i].major == major && en->fs[i].minor == minor)
                        return en->fs[i].device;
        return stats__disk_name(en->p->disks, en->p->n_disks, major, minor);
}

/* cAdvisor's ioValues / fsValues: a value per device of the blkio table,
 * then one per filesystem; blkio_device_usage: every operation of each
 * device's IoServiceBytes. */
static void collect_disk(enum family f, const struct entry *en, struct metrics_emit *e)
{
        const struct stats_blkio *b = en->blkio;
        int64_t t = en->io_time_ns;
        if (f == BLKIO_DEVICE_USAGE) {
                for (size_t i = 0; b && i < b->n; i++) {
                        const struct stats_blkio_dev *d = &b->devs[i];
                        if (!d->in_bytes)
                                continue;
                        char major[16], minor[16];
                        snprintf(major, sizeof(major), "%" PRIu32, d->major);
                        snprintf(minor, sizeof(minor), "%" PRIu32, d->minor);
                        const char *dev = device_name(en, d->major, d->minor);
                        for (int op = 0; op < STATS_BLKIO_N_OPS; op++)
                                if (d->has_bytes[op])
                                        emit4(e, en,
                                              (const char *const[]){dev, major, minor,
                                                                    stats_blkio_op_names[op]},
                                              (double)d->bytes[op], t);
                }
                return;
        }
        bool bytes;
        enum stats_blkio_op op;
        if (b && io_table(f, &bytes, &op))
                for (size_t i = 0; i < b->n; i++) {
                        const struct stats_blkio_dev *d = &b->devs[i];
                        if (!(bytes ? d->in_bytes : d->in_ios))
                                continue;
                        const char *dev = device_name(en, d->major, d->minor);
                        emit(e, en, dev, NULL, (double)(bytes ? d->bytes[op] : d->ios[op]), true,
                             t);
                }
        double v;
        for (size_t i = 0; i < en->n_fs; i++)
                if (fs_value(f, &en->fs[i], &v))
                        emit(e, en, en->fs[i].device, NULL, v, true, t);
}

static const struct stats_u64 *iface_field(enum family f, const struct stats_iface *i)
{
        switch (f) {
        case NET_RX_BYTES:
                return &i->rx_bytes;
        case NET_RX_PACKETS:
                return &i->rx_packets;
        case NET_RX_DROPPED:
                return &i->rx_dropped;
        case NET_RX_ERRORS:
                return &i->rx_errors;
        case NET_TX_BYTES:
                return &i->tx_bytes;
        case NET_TX_PACKETS:
                return &i->tx_packets;
        case NET_TX_DROPPED:
                return &i->tx_dropped;
        default:
                return &i->tx_errors;
        }
}

/* cAdvisor's per-interface values (network usage of a container that has
 * its own network); a counter the source did not give is left out. */
static void collect_network(enum family f, const struct entry *en, int64_t t,
                            struct metrics_emit *e)
{
        const struct stats_network *n = en->net;
        for (size_t i = 0; n && i < n->n_ifaces; i++) {
                const struct stats_u64 *v = iface_field(f, &n->ifaces[i]);
                if (v->ok)
                        emit(e, en, n->ifaces[i].name ? n->ifaces[i].name : "", NULL, (double)v->v,
                             true, t);
        }
}

/* The root: what the node's summary values hold (cAdvisor's "/" raw
 * container has the rest too; the snapshot does not keep it). */
static void collect_root(enum family f, const struct entry *en, struct metrics_emit *e)
{
        const struct stats_node *n = en->node;
        const struct stats_memory *m = &n->memory;
        switch (f) {
        case CPU_USAGE:
                if (n->cpu.ok && n->cpu.usage_core_nano_seconds.ok &&
                    n->cpu.usage_core_nano_seconds.v > 0)
                        emit(e, en, "total", NULL, (double)n->cpu.usage_core_nano_seconds.v / 1e9,
                             true, n->cpu.time_ns);
                return;
        case MEM_USAGE:
        case MEM_WORKING_SET:
        case MEM_RSS: {
                const struct stats_u64 *v = f == MEM_USAGE         ? &m->usage
                                            : f == MEM_WORKING_SET ? &m->working_set
                                                                   : &m->rss;
                if (m->ok && v->ok)
                        emit(e, en, NULL, NULL, (double)v->v, true, m->time_ns);
                return;
        }
        case MEM_SWAP:
                if (n->swap.ok && n->swap.usage.ok)
                        emit(e, en, NULL, NULL, (double)n->swap.usage.v, true, n->swap.time_ns);
                return;
        default:
                if (f >= NET_RX_BYTES && f <= NET_TX_ERRORS)
                        collect_network(f, en, n->network.time_ns, e);
                return;
        }
}

/* The one value of a plain container family (false: none). */
static bool value_of(enum family f, const struct stats_cgroup_sample *s, double *v)
{
        switch (f) {
        case CPU_USER:
                *v = (double)s->cpu_user_ns / 1e9;
                return true;
        case CPU_SYSTEM:
                *v = (double)s->cpu_system_ns / 1e9;
                return true;
        case CFS_PERIODS:
                *v = (double)s->cfs_periods;
                return s->spec_cpu_quota != 0;
        case CFS_THROTTLED_PERIODS:
                *v = (double)s->cfs_throttled_periods;
                return s->spec_cpu_quota != 0;
        case CFS_THROTTLED_SECONDS:
                *v = (double)s->cfs_throttled_ns / 1e9;
                return s->spec_cpu_quota != 0;
        case LOAD_AVERAGE:
        case LOAD_D_AVERAGE:
        case MEM_KERNEL:
                /* the load reader is off in the kubelet's cAdvisor; runc
                 * reports no kernel usage on cgroup v2 */
                *v = 0;
                return true;
        case MEM_CACHE:
                *v = (double)s->cache;
                return true;
        case MEM_RSS:
                *v = (double)s->rss;
                return true;
        case MEM_MAPPED_FILE:
                *v = (double)s->mapped_file;
                return true;
        case MEM_SWAP:
                *v = (double)s->swap_usage;
                return true;
        case MEM_FAILCNT:
                *v = (double)s->failcnt;
                return true;
        case MEM_USAGE:
                *v = (double)s->usage;
                return true;
        case MEM_MAX_USAGE:
                *v = (double)s->max_usage;
                return true;
        case MEM_WORKING_SET:
                *v = (double)s->working_set;
                return true;
        case MEM_ACTIVE_FILE:
                *v = (double)s->active_file;
                return true;
        case MEM_INACTIVE_FILE:
                *v = (double)s->inactive_file;
                return true;
        case PROCESSES:
                *v = (double)s->processes;
                return true;
        case FILE_DESCRIPTORS:
                *v = (double)s->fds;
                return true;
        case SOCKETS:
                *v = (double)s->sockets;
                return true;
        case THREADS_MAX:
                *v = (double)s->threads_max;
                return true;
        case THREADS:
                *v = (double)s->threads;
                return true;
        case OOM_EVENTS:
                *v = (double)s->oom_kills;
                return true;
        case PSI_CPU_STALLED:
                *v = (double)s->cpu_psi.full.total / 1e6;
                return true;
        case PSI_CPU_WAITING:
                *v = (double)s->cpu_psi.some.total / 1e6;
                return true;
        case PSI_MEMORY_STALLED:
                *v = (double)s->memory_psi.full.total / 1e6;
                return true;
        case PSI_MEMORY_WAITING:
                *v = (double)s->memory_psi.some.total / 1e6;
                return true;
        case PSI_IO_STALLED:
                *v = (double)s->io_psi.full.total / 1e6;
                return true;
        case PSI_IO_WAITING:
                *v = (double)s->io_psi.some.total / 1e6;
                return true;
        default:
                return false;
        }
}

/* The spec families: no timestamp, as cAdvisor's MustNewConstMetric. */
static bool spec_of(enum family f, const struct stats_cgroup_sample *s, double *v)
{
        switch (f) {
        case SPEC_CPU_PERIOD:
                *v = (double)s->spec_cpu_period;
                return s->has_cpu_spec;
        case SPEC_CPU_QUOTA:
                *v = (double)s->spec_cpu_quota;
                return s->has_cpu_spec && s->spec_cpu_quota != 0;
        case SPEC_CPU_SHARES:
                *v = (double)s->spec_cpu_shares;
                return s->has_cpu_spec;
        case SPEC_MEMORY_LIMIT:
                *v = spec_memory(s->spec_memory_limit);
                return s->has_memory_spec;
        case SPEC_MEMORY_SWAP_LIMIT:
                *v = spec_memory(s->spec_swap_limit);
                return s->has_memory_spec;
        case SPEC_MEMORY_RESERVATION:
                *v = spec_memory(s->spec_memory_reservation);
                return s->has_memory_spec;
        default:
                return false;
        }
}

static void collect_entry(enum family f, const struct entry *en, int64_t now_ns,
                          struct metrics_emit *e)
{
        if (f == START_TIME) {
                emit(e, en, NULL, NULL, (double)unix_of(en->start_ns), false, 0);
                return;
        }
        if (f == LAST_SEEN) {
                emit(e, en, NULL, NULL, (double)unix_of(now_ns), true, now_ns);
                return;
        }
        if (f >= FS_INODES_FREE && f <= BLKIO_DEVICE_USAGE) {
                collect_disk(f, en, e);
                return;
        }
        if (en->cg == NULL) {
                collect_root(f, en, e);
                return;
        }
        const struct stats_cgroup_sample *s = &en->cg->s;
        int64_t t = en->cg->time_ns;
        double v;
        switch (f) {
        case CPU_USAGE:
                /* no per-CPU usage in the kubelet's cAdvisor: "total", when > 0 */
                if (s->cpu_usage_ns > 0)
                        emit(e, en, "total", NULL, (double)s->cpu_usage_ns / 1e9, true, t);
                return;
        case TASKS_STATE: {
                static const char *const states[] = {"sleeping", "running", "stopped",
                                                     "uninterruptible", "iowaiting"};
                for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++)
                        emit(e, en, states[i], NULL, 0, true, t);
                return;
        }
        case ULIMITS_SOFT:
                if (en->cg->has_nofile)
                        emit(e, en, "max_open_files", NULL, (double)en->cg->nofile_soft, true, t);
                return;
        case MEM_FAILURES:
                emit(e, en, "pgfault", "container", (double)s->page_faults, true, t);
                emit(e, en, "pgmajfault", "container", (double)s->major_page_faults, true, t);
                emit(e, en, "pgfault", "hierarchy", (double)s->page_faults, true, t);
                emit(e, en, "pgmajfault", "hierarchy", (double)s->major_page_faults, true, t);
                return;
        default:
                break;
        }
        if (f >= NET_RX_BYTES && f <= NET_TX_ERRORS)
                collect_network(f, en, t, e);
        else if (spec_of(f, s, &v))
                emit(e, en, NULL, NULL, v, false, 0);
        else if (value_of(f, s, &v))
                emit(e, en, NULL, NULL, v, true, t);
}

static void collect_pod(const struct stats_provider *p, enum family f, const struct stats_pod *pod,
                        int64_t now_ns, struct metrics_emit *e)
{
        struct entry en = {
            .v = {"", "", "", "", pod->namespace, pod->name}, .start_ns = pod->start_ns, .p = p};
        if (pod->cgroup.name) {
                en.v[L_ID] = pod->cgroup.name;
                en.cg = &pod->cgroup;
                en.blkio = pod->cgroup.blkio;
                en.io_time_ns = pod->cgroup.time_ns;
                collect_entry(f, &en, now_ns, e);
        }
        if (pod->sandbox_cgroup.name) {
                en.v[L_ID] = pod->sandbox_cgroup.name;
                en.v[L_NAME] = pod->sandbox_id;
                en.cg = &pod->sandbox_cgroup;
                en.blkio = pod->sandbox_cgroup.blkio;
                en.io_time_ns = pod->sandbox_cgroup.time_ns;
                en.net = pod->proc_network.ok ? &pod->proc_network
                         : pod->network.ok    ? &pod->network
                                              : NULL;
                collect_entry(f, &en, now_ns, e);
        }
        for (size_t i = 0; i < pod->n_containers; i++) {
                const struct stats_container *c = &pod->containers[i];
                if (c->cgroup.name == NULL)
                        continue;
                struct entry ce = {
                    .v = {c->name, c->cgroup.name, c->image ? c->image : "", c->id ? c->id : "",
                          pod->namespace, pod->name},
                    .start_ns = c->start_ns,
                    .cg = &c->cgroup,
                    .blkio = c->cgroup.blkio,
                    .io_time_ns = c->cgroup.time_ns,
                    .p = p,
                };
                collect_entry(f, &ce, now_ns, e);
        }
}

static void collect_containers(const struct cadvisor_ctx *c, enum family f,
                               const struct stats_snapshot *s, struct metrics_emit *e)
{
        if (f == CONTAINER_SCRAPE_ERROR) {
                metrics_emit(e, NULL, s->pods_error ? 1 : 0);
                return;
        }
        if (s->pods_error)
                return; /* cAdvisor: "Couldn't get containers", only the scrape error */
        int64_t now = stats__now_real(c->p);
        struct entry root = {
            .v = {"", "/", "", "", "", ""},
            .start_ns = c->p->boot_time_ns,
            .node = &s->node,
            .net = s->node.network.ok ? &s->node.network : NULL,
            .blkio = &s->root_blkio,
            .fs = s->root_fs,
            .n_fs = s->n_root_fs,
            .io_time_ns = s->root_time_ns,
            .p = c->p,
        };
        collect_entry(f, &root, now, e);
        for (size_t i = 0; i < s->n_raw; i++) {
                const struct stats_raw_cgroup *rc = &s->raw[i];
                struct entry en = {
                    .v = {"", rc->view.name, "", "", "", ""},
                    .start_ns = rc->start_ns,
                    .cg = &rc->view,
                    .blkio = rc->view.blkio,
                    .io_time_ns = rc->view.time_ns,
                    .p = c->p,
                };
                collect_entry(f, &en, now, e);
        }
        for (size_t i = 0; i < s->n_pods; i++)
                collect_pod(c->p, f, &s->pods[i], now, e);
}

static void collect_machine(const struct stats_cadvisor_machine *m, enum family f,
                            struct metrics_emit *e)
{
        if (f == MACHINE_SCRAPE_ERROR) {
                metrics_emit(e, NULL, 0);
                return;
        }
        const char *v[] = {m->info.boot_id, m->info.machine_id, m->info.system_uuid, NULL};
        int64_t ts = ms_of(m->time_ns);
        switch (f) {
        case MACHINE_PHYSICAL_CORES:
                metrics_emit_at(e, v, (double)m->physical_cores, ts);
                return;
        case MACHINE_CORES:
                metrics_emit_at(e, v, (double)m->info.num_cores, ts);
                return;
        case MACHINE_SOCKETS:
                metrics_emit_at(e, v, (double)m->sockets, ts);
                return;
        case MACHINE_MEMORY:
                metrics_emit_at(e, v, (double)m->info.memory_capacity, ts);
                return;
        case MACHINE_SWAP:
                metrics_emit_at(e, v, (double)m->info.swap_capacity, ts);
                return;
        case MACHINE_NVM_CAPACITY:
                /* no NVM (cAdvisor built without libipmctl): zeros */
                v[3] = "memory_mode";
                metrics_emit_at(e, v, 0, ts);
                v[3] = "app_direct_mode";
                metrics_emit_at(e, v, 0, ts);
                return;
        case MACHINE_NVM_POWER:
                metrics_emit_at(e, v, 0, ts);
                return;
        default:
                return;
        }
}

static void collect(void *ctx, struct metrics_emit *e)
{
        const struct family_ctx *fc = ctx;
        if (fc->f >= FIRST_MACHINE) {
                collect_machine(&fc->c->machine, fc->f, e);
                return;
        }
        struct stats_snapshot *s = stats__get(fc->c->p);
        collect_containers(fc->c, fc->f, s, e);
        stats__snapshot_unref(s);
}

/* ---- Machine facts ------------------------------------------------------------ */

static bool add_unique(char ***set, size_t *n, const char *s, size_t len)
{
        for (size_t i = 0; i < *n; i++)
                if (strlen((*set)[i]) == len && memcmp((*set)[i], s, len) == 0)
                        return false;
        *set = xrealloc(*set, (*n + 1) * sizeof(**set));
        (*set)[(*n)++] = xstrndup(s, len);
        return true;
}

static void free_set(char **set, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(set[i]);
        free(set);
}

/* Whether line [s, s + len) is "<key>\s*:\s*[0-9]+" (cAdvisor's regexp). */
static bool key_line(const char *s, size_t len, const char *key)
{
        size_t kl = strlen(key), i = kl;
        if (len < kl || memcmp(s, key, kl) != 0)
                return false;
        while (i < len && (s[i] == ' ' || s[i] == '\t'))
                i++;
        if (i == len || s[i++] != ':')
                return false;
        while (i < len && (s[i] == ' ' || s[i] == '\t'))
                i++;
        if (i == len)
                return false;
        for (; i < len; i++)
                if (s[i] < '0' || s[i] > '9')
                        return false;
        return true;
}

void stats__parse_cpuinfo_counts(const char *text, int64_t *physical_cores, int64_t *sockets)
{
        char **cores = NULL, **ids = NULL;
        size_t n_cores = 0, n_ids = 0;
        for (const char *p = text; p && *p;) {
                size_t len = strcspn(p, "\n");
                /* cAdvisor counts distinct matching lines */
                if (key_line(p, len, "core id"))
                        add_unique(&cores, &n_cores, p, len);
                else if (key_line(p, len, "physical id"))
                        add_unique(&ids, &n_ids, p, len);
                p += len;
                if (*p == '\n')
                        p++;
        }
        *physical_cores = (int64_t)n_cores;
        *sockets = (int64_t)n_ids;
        free_set(cores, n_cores);
        free_set(ids, n_ids);
}

/* sysfs.GetUniqueCPUPropertyCount: distinct "<prop>_<package>" over
 * <sys>/devices/system/cpu/cpu<N>/topology. */
static int64_t sysfs_unique(const char *sys_root, const char *prop)
{
        cleanup_free char *dir = xasprintf("%s/devices/system/cpu", sys_root);
        DIR *d = opendir(dir);
        if (d == NULL)
                return 0;
        char **set = NULL;
        size_t n = 0;
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
                const char *nm = de->d_name;
                if (strncmp(nm, "cpu", 3) != 0 || nm[3] < '0' || nm[3] > '9')
                        continue;
                const char *files[] = {prop, "physical_package_id"};
                char vals[2][64];
                for (int k = 0; k < 2; k++) {
                        cleanup_free char *path = xasprintf("%s/%s/topology/%s", dir, nm, files[k]);
                        cleanup_free char *buf = NULL;
                        cleanup_error ck_error_t err = NULL;
                        snprintf(vals[k], sizeof(vals[k]), "0"); /* cAdvisor: assume 0 */
                        if (fs_read_file(path, 4096, &buf, NULL, &err) == 0)
                                snprintf(vals[k], sizeof(vals[k]), "%.*s",
                                         (int)strcspn(buf, " \t\n"), buf);
                }
                cleanup_free char *key = xasprintf("%s_%s", vals[0], vals[1]);
                add_unique(&set, &n, key, strlen(key));
        }
        closedir(d);
        free_set(set, n);
        return (int64_t)n;
}

void stats__cadvisor_machine_read(const char *proc_root, const char *sys_root, const char *etc_root,
                                  const char *var_lib_root, int64_t now_ns,
                                  struct stats_cadvisor_machine *out)
{
        memset(out, 0, sizeof(*out));
        stats_machine_info_read(proc_root, sys_root, etc_root, var_lib_root, &out->info);
        out->time_ns = now_ns;
        cleanup_free char *path = xasprintf("%s/cpuinfo", proc_root);
        cleanup_free char *text = NULL;
        cleanup_error ck_error_t err = NULL;
        if (fs_read_file(path, 4u << 20, &text, NULL, &err) == 0)
                stats__parse_cpuinfo_counts(text, &out->physical_cores, &out->sockets);
        if (out->physical_cores == 0)
                out->physical_cores = sysfs_unique(sys_root, "core_id");
        if (out->sockets == 0)
                out->sockets = sysfs_unique(sys_root, "physical_package_id");
}

/* ---- Registration ----------------------------------------------------------------- */

int stats__register_cadvisor_metrics(struct metrics_registry *r, struct stats_provider *p,
                                     const struct stats_cadvisor_machine *m, ck_error_t *err)
{
        /* the registry borrows the context: the provider keeps it */
        struct cadvisor_ctx *c = xcalloc(1, sizeof(*c));
        c->p = p;
        c->machine = *m;
        pthread_mutex_lock(&p->lock);
        p->metric_ctx = xrealloc(p->metric_ctx, (p->n_metric_ctx + 1) * sizeof(*p->metric_ctx));
        p->metric_ctx[p->n_metric_ctx++] = c;
        pthread_mutex_unlock(&p->lock);
        static const char *const machine_labels[] = {"boot_id", "machine_id", "system_uuid",
                                                     "mode"};
        for (int i = 0; i < N_FAMILIES; i++) {
                const char *labels[N_BASE + 4] = {"container", "id",        "image",
                                                  "name",      "namespace", "pod"};
                size_t n = 0;
                const char *const *names = labels;
                if (i == CONTAINER_SCRAPE_ERROR || i == MACHINE_SCRAPE_ERROR) {
                        names = NULL;
                } else if (i >= FIRST_MACHINE) {
                        names = machine_labels;
                        n = families[i].extra[0] ? 4 : 3;
                } else {
                        n = N_BASE;
                        for (int k = 0; k < 4 && families[i].extra[k]; k++)
                                labels[n++] = families[i].extra[k];
                }
                c->fam[i] = (struct family_ctx){.c = c, .f = (enum family)i};
                struct metrics_opts o = {
                    .name = families[i].name,
                    .help = families[i].help,
                    .type = families[i].type,
                    .stability = METRICS_RAW,
                    .label_names = names,
                    .n_labels = n,
                    .collect = collect,
                    .collect_ctx = &c->fam[i],
                };
                if (metrics_register(r, &o, NULL, err) < 0)
                        return ck_error_wrap(err, "cadvisor metrics");
        }
        return 0;
}

int stats_register_cadvisor_metrics(struct metrics_registry *r, struct stats_provider *p,
                                    ck_error_t *err)
{
        /* the machine facts as stats_provider_new reads them */
        struct stats_cadvisor_machine m;
        stats__cadvisor_machine_read(p->proc_root, "/sys", "/etc", "/var/lib", stats__now_real(p),
                                     &m);
        return stats__register_cadvisor_metrics(r, p, &m, err);
}
