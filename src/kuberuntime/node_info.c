/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Facts about the node the builders need, read once and cached
 * (thread-safe through pthread_once), and the pod's namespace options.
 */
#include "kuberuntime/builders_internal.h"

#include "util/cleanup.h"
#include "util/xalloc.h"
#include "volume/downward.h"

#include <inttypes.h>
#include <linux/magic.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

Runtime__V1__NamespaceOption *kuberuntime__namespace_options(const struct pod *pod)
{
        Runtime__V1__NamespaceOption *ns = xmalloc(sizeof(*ns));
        runtime__v1__namespace_option__init(ns);
        ns->network = pod->host_network ? RUNTIME__V1__NAMESPACE_MODE__NODE
                                        : RUNTIME__V1__NAMESPACE_MODE__POD;
        ns->ipc =
            pod->host_ipc ? RUNTIME__V1__NAMESPACE_MODE__NODE : RUNTIME__V1__NAMESPACE_MODE__POD;
        if (pod->host_pid)
                ns->pid = RUNTIME__V1__NAMESPACE_MODE__NODE;
        else if (pod->share_process_namespace)
                ns->pid = RUNTIME__V1__NAMESPACE_MODE__POD;
        else
                ns->pid = RUNTIME__V1__NAMESPACE_MODE__CONTAINER;
        return ns;
}

static pthread_once_t facts_once = PTHREAD_ONCE_INIT;
static int64_t mem_total;
static int64_t cpu_milli;
static bool cgroup2;

static void read_facts(void)
{
        /* the capacity downward API values default to; its filesystem size
         * (of "/") is not needed here */
        struct volume_node_resources node;
        volume_node_capacity(NULL, &node);
        mem_total = node.memory;
        cpu_milli = node.cpu_milli;
        struct statfs st;
        cgroup2 = statfs("/sys/fs/cgroup", &st) == 0 && st.f_type == CGROUP2_SUPER_MAGIC;
}

int64_t kuberuntime__node_memory_capacity(void)
{
        pthread_once(&facts_once, read_facts);
        return mem_total;
}

int64_t kuberuntime__node_cpu_capacity_milli(void)
{
        pthread_once(&facts_once, read_facts);
        return cpu_milli;
}

bool kuberuntime__cgroup2_unified(void)
{
        pthread_once(&facts_once, read_facts);
        return cgroup2;
}

/* upstream pkg/securitycontext/util.go (kept in sync with moby's defaults). */
static const char *const base_masked_paths[] = {
    "/proc/asound",      "/proc/acpi",          "/proc/interrupts", "/proc/kcore",
    "/proc/keys",        "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats",
    "/proc/sched_debug", "/proc/scsi",          "/sys/firmware",    "/sys/devices/virtual/powercap",
};
static const char *const readonly_paths[] = {
    "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger", NULL,
};

static pthread_once_t masked_once = PTHREAD_ONCE_INIT;
static char **masked_paths;

static void add_path(size_t *n, const char *p)
{
        masked_paths = xrealloc(masked_paths, (*n + 2) * sizeof(*masked_paths));
        masked_paths[(*n)++] = xstrdup(p);
        masked_paths[*n] = NULL;
}

/* Parses /sys/devices/system/cpu/possible ("0-3,5") as upstream possibleCPUs. */
static void add_thermal_throttle_paths(size_t *n)
{
        cleanup_fclose FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
        char list[1024];
        if (f == NULL || fgets(list, sizeof(list), f) == NULL)
                return;
        char *save = NULL;
        for (char *r = strtok_r(list, ",\n", &save); r; r = strtok_r(NULL, ",\n", &save)) {
                unsigned lo, hi;
                int k = sscanf(r, "%u-%u", &lo, &hi);
                if (k == 1)
                        hi = lo;
                else if (k != 2 || hi < lo || hi - lo > 65536)
                        continue;
                for (unsigned cpu = lo; cpu <= hi; cpu++) {
                        char path[96];
                        struct stat st;
                        snprintf(path, sizeof(path),
                                 "/sys/devices/system/cpu/cpu%u/thermal_throttle", cpu);
                        if (stat(path, &st) == 0)
                                add_path(n, path);
                }
        }
}

static void compute_masked_paths(void)
{
        size_t n = 0;
        for (size_t i = 0; i < ARRAY_SIZE(base_masked_paths); i++)
                add_path(&n, base_masked_paths[i]);
        add_thermal_throttle_paths(&n);
}

const char *const *kuberuntime__default_masked_paths(void)
{
        pthread_once(&masked_once, compute_masked_paths);
        return (const char *const *)masked_paths;
}

const char *const *kuberuntime__default_readonly_paths(void)
{
        return readonly_paths;
}
