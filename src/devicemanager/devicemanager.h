/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The device plugin manager (upstream pkg/kubelet/cm/devicemanager): device
 * plugins register their extended resource (vendor.com/gpu) on the
 * kubelet's Registration socket, /var/lib/kubelet/device-plugins/kubelet.sock;
 * the manager then calls the plugin back on its own socket beside it:
 * GetDevicePluginOptions at once, ListAndWatch for the devices and their
 * health (never called again once it ends), Allocate when a pod that asks
 * for the resource is admitted, PreStartContainer before each of its
 * containers is created when the plugin asks for it.
 *
 *  - node status: capacity = the devices, allocatable = the healthy ones;
 *    a plugin gone for more than 5 minutes takes its resource away (it is
 *    reported once as removed: 0);
 *  - admission: devices for each container (init containers first, their
 *    devices reused by the app containers), an Allocate per container and
 *    resource; a failure rejects the pod (UnexpectedAdmissionError);
 *  - a container's start: the plugin's answer (environment, mounts,
 *    devices, annotations, CDI devices) goes into its CRI config;
 *  - the allocations and the registered resources survive a restart in
 *    upstream's checkpoint file, kubelet_internal_checkpoint.
 * Devices of pods that are no longer active are freed at the next
 * allocation (as upstream: lazily).
 *
 * Threads: the registration server's, one ListAndWatch thread per plugin;
 * every function below may be called from any thread.
 */
#ifndef CK_DEVICEMANAGER_DEVICEMANAGER_H
#define CK_DEVICEMANAGER_DEVICEMANAGER_H

#include "api/pod.h"
#include "util/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* upstream pluginapi.DevicePluginPath: fixed, whatever --root-dir says */
#define DEVICEMANAGER_DIR "/var/lib/kubelet/device-plugins"

struct devicemanager;

struct devicemanager_options {
        const char *dir; /* DEVICEMANAGER_DIR (tests: their own) */
        /* Whether the pod of that UID still holds its devices (upstream
         * activePods: known, not terminated); called from
         * devicemanager_allocate's thread.  NULL: every pod does. */
        bool (*pod_active)(void *ctx, const char *uid);
        void *ctx;
        /* how long a stopped plugin's resource stays (0: upstream's 5
         * minutes; tests shorten it) */
        int64_t stop_grace_ms;
};

/* Reads the checkpoint, removes the sockets a previous run left in the
 * directory (plugins register again when kubelet.sock reappears) and
 * serves Registration on <dir>/kubelet.sock. */
int devicemanager_start(const struct devicemanager_options *o, struct devicemanager **out,
                        ck_error_t *err);
/* Stops serving, ends the ListAndWatch streams, frees m.  NULL-safe. */
void devicemanager_stop(struct devicemanager *m);

/* ---- node status ---- */

struct devicemanager_resource {
        char *name;
        int64_t capacity;    /* every device the plugin listed */
        int64_t allocatable; /* the healthy ones; -1: as capacity (a resource
                                that only has unhealthy ones, upstream's
                                node status copies capacity then) */
};

/* The resources to report (upstream GetCapacity): *res (n of them) and the
 * names of resources removed since the last call (reported as 0 then, and
 * forgotten).  Release with devicemanager_capacity_free. */
void devicemanager_capacity(struct devicemanager *m, struct devicemanager_resource **res, size_t *n,
                            char ***removed, size_t *n_removed);
void devicemanager_capacity_free(struct devicemanager_resource *res, size_t n, char **removed,
                                 size_t n_removed);

/* What the resources offer now, without forgetting the expired ones as
 * devicemanager_capacity does (for a node without a Node object: the
 * admission's fit check).  Release with devicemanager_capacity_free(res,
 * n, NULL, 0). */
void devicemanager_resources(struct devicemanager *m, struct devicemanager_resource **res,
                             size_t *n);

/* ---- admission ---- */

/* Whether a resource name is one the manager knows (it has devices or
 * allocations): the admission's fit check counts it against what the
 * manager reports. */
bool devicemanager_is_device_resource(struct devicemanager *m, const char *name);

/* Devices for each container of pod that asks for a device resource
 * (upstream's Allocate of the topology manager's admit handler); 0 when
 * admitted (nothing to do counts), else -1 with err as upstream words it
 * (the admission message is "Allocate failed due to <err>, which is
 * unexpected"). */
int devicemanager_allocate(struct devicemanager *m, const struct pod *pod, ck_error_t *err);

/* How many devices of each resource pods hold (upstream
 * UpdatePluginResources: the fit check counts at least these as
 * allocatable).  Release with devicemanager_capacity_free(res, n, NULL, 0). */
void devicemanager_allocated(struct devicemanager *m, struct devicemanager_resource **res,
                             size_t *n);

/* ---- a container's start ---- */

struct devicemanager_mount {
        char *container_path, *host_path;
        bool read_only;
};
struct devicemanager_device {
        char *container_path, *host_path, *permissions;
};

/* What the plugins' answers give a container (upstream
 * DeviceRunContainerOptions), first occurrence of each name or path
 * winning. */
struct devicemanager_container_options {
        struct kv_list envs;
        struct devicemanager_mount *mounts;
        size_t n_mounts;
        struct devicemanager_device *devices;
        size_t n_devices;
        struct kv_list annotations;
        char **cdi_devices;
        size_t n_cdi_devices;
};

/* The options of container c of pod, after PreStartContainer for each of
 * its resources whose plugin asks for it; an empty set when it has no
 * devices.  -1 with err (the container waits: CreateContainerConfigError). */
int devicemanager_container_options(struct devicemanager *m, const struct pod *pod,
                                    const struct container *c,
                                    struct devicemanager_container_options *out, ck_error_t *err);
void devicemanager_container_options_release(struct devicemanager_container_options *o);

#endif
