/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to src/cm: the cgroup filesystem drivers (v1: a directory per
 * controller; v2: the unified hierarchy) behind one vtable, as upstream's
 * cgroupV1impl / cgroupV2impl sit behind CgroupManager.
 *
 * A cgroup is named as the cgroupfs driver names it: "/kubepods/burstable/
 * pod<uid>" ("" for the root).  Each driver joins that name to the mount
 * point of every controller hierarchy it manages.
 *
 * Not thread-safe: struct cm serialises calls.
 */
#ifndef CK_CM_CGROUP_DRIVER_H
#define CK_CM_CGROUP_DRIVER_H

#include "util/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* hugetlb limits to write, for every huge page size of the machine */
enum cgroup_hugetlb {
        CGROUP_HUGETLB_KEEP = 0,  /* write nothing */
        CGROUP_HUGETLB_NONE,      /* 0, but the pod's limits (hugetlb_limits) */
        CGROUP_HUGETLB_UNBOUNDED, /* 1 << 62: the QoS cgroups */
        CGROUP_HUGETLB_CAPACITY,  /* nr_hugepages * size: kubepods */
};

/* Upstream cm.ResourceConfig: a value is written only when its has_ flag is set. */
struct cgroup_resources {
        bool has_cpu_shares;
        uint64_t cpu_shares; /* v1 cpu.shares; v2 cpu.weight converted */
        bool has_cpu_quota;
        int64_t cpu_quota;   /* us; -1: unlimited */
        uint64_t cpu_period; /* us, written with the quota */
        bool has_memory;
        int64_t memory; /* bytes; -1: unlimited */
        bool has_pids_limit;
        int64_t pids_limit; /* -1: unlimited */
        enum cgroup_hugetlb hugetlb;
        /* CGROUP_HUGETLB_NONE: the pod's huge pages limits, by page size
         * (bytes); a size not listed is limited to 0 (upstream
         * ResourceConfigForPod's HugePageLimit) */
        struct cgroup_hugetlb_limit {
                int64_t page_size, limit;
        } hugetlb_limits[8];
        size_t n_hugetlb_limits;
};

struct cgroup_hugepage {
        char name[16];     /* "2MB", "1GB": the size in control file names */
        int64_t page_size; /* bytes */
        int64_t capacity;  /* bytes: nr_hugepages * size */
};

/* One hierarchy to create cgroups in: v1 a controller's mount, v2 the root. */
struct cgroup_mount {
        char *controller; /* v1 controller ("cpu", "memory", "systemd"); v2 and
                             a hybrid layout's unified hierarchy "" */
        char *path;       /* mount point */
};

/* A probed cgroup filesystem. */
struct cgroup_fs {
        const struct cgroup_driver *driver;
        bool fake;
        char *root;
        struct cgroup_mount *mounts;
        size_t n_mounts;
        /* v2: "+cpu +memory ...", every controller of the root, enabled in
         * each ancestor of a cgroup it creates (as runc's fs2 does) */
        char *v2_enable;
        bool has_pids, has_hugetlb;
        struct cgroup_hugepage *hugepages;
        size_t n_hugepages;
};

struct cgroup_driver {
        const char *name; /* "v1", "v2" */
        /* Fills fs (root, fake, driver already set) with the hierarchies. */
        int (*probe)(struct cgroup_fs *fs, ck_error_t *err);
        /* mkdir -p of the cgroup in every hierarchy (parents set up as the
         * kernel needs: v1 cpuset copied, v2 controllers enabled). */
        int (*create)(struct cgroup_fs *fs, const char *name, ck_error_t *err);
        int (*set)(struct cgroup_fs *fs, const char *name, const struct cgroup_resources *r,
                   ck_error_t *err);
        /* The cgroup's cpu shares, quota and period, and memory limit (the
         * has_ flags of those set; unlimited reads as -1), as upstream's
         * GetCgroupConfig reads them for a resize. */
        int (*get)(struct cgroup_fs *fs, const char *name, struct cgroup_resources *r,
                   ck_error_t *err);
        /* The cgroup's memory usage in bytes (v1 memory.usage_in_bytes, v2
         * memory.current). */
        int (*memory_usage)(struct cgroup_fs *fs, const char *name, int64_t *usage,
                            ck_error_t *err);
};

extern const struct cgroup_driver cm_cgroup_v1_driver;
extern const struct cgroup_driver cm_cgroup_v2_driver;

/* Picks v2 when <root>/cgroup.controllers exists, else v1 (hybrid layouts
 * are v1), and probes it.  Returns a new fs (cm_cgroup_fs_free). */
int cm_cgroup_fs_open(const char *root, bool fake, struct cgroup_fs **out, ck_error_t *err);
/* Whether root is the unified hierarchy (cgroup v2), as cm_cgroup_fs_open
 * decides (upstream IsCgroup2UnifiedMode). */
bool cm_cgroup_unified(const char *root);
void cm_cgroup_fs_free(struct cgroup_fs *fs);

/* Removes the cgroup in every hierarchy, child cgroups first.  A missing
 * cgroup is not an error; one that still has processes is (EBUSY). */
int cm_cgroup_destroy(struct cgroup_fs *fs, const char *name, ck_error_t *err);

/* SIGKILL to every process in the cgroup and the cgroups below it, in
 * every hierarchy (upstream podContainerManager.Destroy does this before the
 * removal: what the runtime lost track of, e.g. a `runc init` whose
 * containerd died mid-create, would otherwise hold the cgroup forever).
 * Fails when a process could not be killed. */
int cm_cgroup_kill_all(struct cgroup_fs *fs, const char *name, ck_error_t *err);

/* Whether the cgroup's directory exists in the first hierarchy. */
bool cm_cgroup_exists(struct cgroup_fs *fs, const char *name);

/* Names of the child cgroups of `name` in any hierarchy (deduplicated);
 * NULL-terminated array of new strings. */
int cm_cgroup_list_children(struct cgroup_fs *fs, const char *name, char ***children,
                            ck_error_t *err);

/* Helpers shared by the drivers (cgroup_files.c). */
int cm_cgroup_write(const struct cgroup_fs *fs, const char *dir, const char *file,
                    const char *value, ck_error_t *err);
/* Reads a control file, trailing newline stripped (new string). */
int cm_cgroup_read(const char *dir, const char *file, char **value, ck_error_t *err);
/* Reads a control file holding one integer; "max" (v2) reads as -1. */
int cm_cgroup_read_int(const char *dir, const char *file, int64_t *value, ck_error_t *err);
/* mkdir (EEXIST is fine); *created tells whether it is new. */
int cm_cgroup_mkdir(const char *path, bool *created, ck_error_t *err);
/* Huge page sizes of the machine (/sys/kernel/mm/hugepages). */
void cm_hugepages_probe(struct cgroup_fs *fs);
/* The limit to write for one page size, or -1 for KEEP. */
int64_t cm_hugetlb_limit(const struct cgroup_resources *r, const struct cgroup_hugepage *hp);

#endif
