/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to src/devicemanager: the manager's state (one lock), the plugin
 * endpoints (endpoint.c), the checkpoint (checkpoint.c, pure), the
 * Registration server (registration.c).
 */
#ifndef CK_DEVICEMANAGER_INTERNAL_H
#define CK_DEVICEMANAGER_INTERNAL_H

#include "devicemanager/devicemanager.h"
#include "grpc/grpc.h"
#include "grpc/grpc_server.h"

#include "deviceplugin.pb-c.h"

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>

/* upstream endpointStopGracePeriod */
#define DM_STOP_GRACE_MS (5 * 60 * 1000)
/* upstream: the dial of a registering plugin, PreStartContainer */
#define DM_DIAL_TIMEOUT_MS 10000
#define DM_PRE_START_TIMEOUT_MS 30000
/* No upstream deadline for these (context.TODO()); a plugin that never
 * answers would hold the admission of every pod for good: bounded here. */
#define DM_CALL_TIMEOUT_MS 120000
/* GetDevicePluginOptions at registration: upstream uses the Register call's
 * deadline, none for grpc-go's plugins; bounded so that a plugin that hangs
 * there holds neither its registration nor the kubelet's stop long. */
#define DM_OPTIONS_TIMEOUT_MS 30000
#define DM_CHECKPOINT_NAME "kubelet_internal_checkpoint"
#define DM_SOCKET_NAME "kubelet.sock"
#define DM_API_VERSION "v1beta1"

/* A plugin as the manager reaches it (upstream endpointImpl + client). */
struct dm_endpoint {
        struct devicemanager *m;
        char *resource;
        char *socket;
        /* unary calls (Allocate, PreStartContainer, GetPreferredAllocation):
         * one at a time */
        pthread_mutex_t calls_lock;
        struct grpc_conn *calls;
        /* the ListAndWatch stream, its thread's alone */
        struct grpc_conn *stream;
        pthread_t thread;
        bool thread_started;
        atomic_bool done;
        /* from GetDevicePluginOptions; has_options false for an endpoint
         * restored from the checkpoint (upstream: opts nil) */
        bool has_options, pre_start_required, preferred_available;
        /* under the manager's lock: 0 while live, else when it stopped
         * (CLOCK_MONOTONIC ms) */
        int64_t stop_ms;
        struct dm_endpoint *next; /* every endpoint made, until the stop */
};

/* A device's NUMA nodes (upstream Device.Topology). */
struct dm_topology {
        char *id;
        int64_t *nodes;
        size_t n_nodes;
};

/* One extended resource (upstream healthyDevices / unhealthyDevices /
 * allDevices / endpoints, keyed by the resource). */
struct dm_resource {
        char *name;
        bool has_healthy, has_unhealthy; /* whether upstream's map has the key */
        char **healthy, **unhealthy;
        size_t n_healthy, n_unhealthy;
        struct dm_topology *topo;
        size_t n_topo;
        struct dm_endpoint *ep; /* NULL: none */
};

/* The devices of one container for one resource (upstream podDevices
 * entry): per NUMA node (-1: none), and the plugin's answer as received. */
struct dm_numa_ids {
        int64_t numa;
        char **ids;
        size_t n_ids;
};
struct dm_alloc {
        char *pod_uid, *container, *resource;
        struct dm_numa_ids *numa;
        size_t n_numa;
        uint8_t *resp; /* a ContainerAllocateResponse (protobuf) */
        size_t resp_len;
};

struct devicemanager {
        char *dir, *socket_path, *checkpoint_path;
        bool (*pod_active)(void *ctx, const char *uid);
        void *ctx;
        int64_t stop_grace_ms;
        pthread_mutex_t lock;
        struct dm_resource *res;
        size_t n_res;
        struct dm_alloc *allocs;
        size_t n_allocs;
        struct dm_endpoint *endpoints; /* every endpoint made (a list) */
        struct grpc_server *server;
        struct grpc_method register_method;
        atomic_bool stopping;
};

/* ---- state (manager.c) ---- */

/* The resource of that name (lock held), made when create. */
struct dm_resource *dm_resource_get(struct devicemanager *m, const char *name, bool create);
/* A ListAndWatch message of ep: its resource's devices replaced (unless
 * another endpoint registered for it since), the checkpoint written. */
void dm_endpoint_devices(struct devicemanager *m, struct dm_endpoint *ep,
                         const V1beta1__ListAndWatchResponse *msg);
/* ep's stream ended: its resource's devices all unhealthy, ep stopped
 * (when it is still the resource's endpoint). */
void dm_mark_unhealthy(struct devicemanager *m, struct dm_endpoint *ep);
/* Writes the checkpoint, lock held (errors logged and returned). */
int dm_write_checkpoint(struct devicemanager *m, ck_error_t *err);

/* ---- endpoints (endpoint.c) ---- */

/* Dials the plugin at socket and asks its options (upstream Connect, then
 * PluginConnected's GetDevicePluginOptions); on success the endpoint is
 * installed for resource and its ListAndWatch thread started. */
int dm_endpoint_connect(struct devicemanager *m, const char *resource, const char *socket,
                        int64_t timeout_ms, ck_error_t *err);
/* A stopped endpoint restored from the checkpoint (no socket, no options). */
struct dm_endpoint *dm_endpoint_restored(struct devicemanager *m, const char *resource);
/* Allocate for one container: ids -> the ContainerAllocateResponse bytes
 * (the first of the answer's), *resp malloc'ed. */
int dm_endpoint_allocate(struct dm_endpoint *ep, char *const *ids, size_t n, uint8_t **resp,
                         size_t *resp_len, ck_error_t *err);
int dm_endpoint_pre_start(struct dm_endpoint *ep, char *const *ids, size_t n, ck_error_t *err);
/* GetPreferredAllocation: *out (malloc'ed strings) the plugin's choice. */
int dm_endpoint_preferred(struct dm_endpoint *ep, char *const *available, size_t n_available,
                          char *const *must, size_t n_must, int32_t size, char ***out,
                          size_t *n_out, ck_error_t *err);
/* Ends the stream and waits for its thread; frees ep. */
void dm_endpoint_free(struct dm_endpoint *ep);
/* An error of a call to a plugin in grpc-go's words: "rpc error: code =
 * Unknown desc = <message>". */
char *dm_rpc_error_text(const ck_error_t e);

/* ---- the checkpoint (checkpoint.c): pure ---- */

/* upstream's checksum of the checkpoint's "Data" (FNV-1a-32 over go-spew's
 * rendering of checkpointData), computed from its JSON. */
uint32_t dm_checkpoint_checksum(const json_t *data);
/* The file's JSON for these allocations and registered resources (their
 * healthy devices). */
json_t *dm_checkpoint_build(const struct dm_alloc *allocs, size_t n_allocs,
                            const struct dm_resource *res, size_t n_res);
/* Parses a checkpoint file's text: allocations and the names of the
 * registered resources; -1 with err when it does not parse or its
 * checksum differs ("checkpoint is corrupted"). */
int dm_checkpoint_parse(const char *text, struct dm_alloc **allocs, size_t *n_allocs,
                        char ***registered, size_t *n_registered, ck_error_t *err);
void dm_alloc_clear(struct dm_alloc *a);

/* ---- registration (registration.c) ---- */

/* Removes the unix sockets of dir except the checkpoint (upstream
 * CleanupPluginDirectory); listens on kubelet.sock. */
int dm_registration_start(struct devicemanager *m, ck_error_t *err);
void dm_registration_stop(struct devicemanager *m);
/* upstream v1helper.IsExtendedResourceName */
bool dm_is_extended_resource_name(const char *name);

#endif
