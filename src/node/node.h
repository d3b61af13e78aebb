/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node agent: registers the Node with the apiserver, keeps its status
 * current and renews its Lease, as the upstream kubelet does
 * (pkg/kubelet/kubelet_node_status.go, pkg/kubelet/nodestatus,
 * component-helpers/apimachinery/lease).
 *
 *  - Registration: POST /api/v1/nodes with the default labels
 *    (kubernetes.io/hostname, kubernetes.io/os, kubernetes.io/arch and the
 *    beta.kubernetes.io/ ones), --node-labels and the controller-managed
 *    attach-detach annotation.  On 409 the existing Node is reconciled
 *    (default labels, annotation, huge page resources).  Retried forever:
 *    100 ms doubling to 7 s between attempts.
 *  - Status: every status_update_ms the status is computed (capacity,
 *    allocatable, addresses, nodeInfo, daemonEndpoints, the MemoryPressure,
 *    DiskPressure, PIDPressure and Ready conditions) and PATCHed (strategic
 *    merge on nodes/<name>/status) when it changed, heartbeat times aside,
 *    or status_report_ms (plus a random delay after a change, as upstream)
 *    passed since the last report; 5 tries per tick.  While the node is not
 *    Ready the check runs every second, so that it turns Ready quickly
 *    (upstream's fastStatusUpdateOnce).  The Node is watched (a reflector on
 *    metadata.name=<node>), as upstream's node informer.
 *  - Lease: coordination.k8s.io/v1 Lease <node> in kube-node-lease, owned by
 *    the Node, renewed every lease_duration_s / 4 seconds (PUT with the
 *    resourceVersion; created on 404, re-read on 409).  Not deleted on stop:
 *    a stopped kubelet's node goes NotReady when the lease expires.
 *
 * Status and lease run on two threads of their own, each with its own REST
 * client and no client-side rate limit (upstream's heartbeat client, with a
 * timeout of min(status_update, lease duration)); the Node watch takes
 * tokens from `rl`.  Nothing here blocks the caller: an apiserver that is
 * down is waited for.
 */
#ifndef CK_NODE_NODE_H
#define CK_NODE_NODE_H

#include "api/pod.h"
#include "client/events.h"
#include "client/ratelimit.h"
#include "client/rest_config.h"
#include "util/error.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* An extended resource of the device plugins: its devices, the healthy
 * ones (-1: as capacity). */
struct node_device_resource {
        char *name;
        int64_t capacity;
        int64_t allocatable;
};

/* An image the runtime has (upstream kubecontainer.Image): its ID, its
 * repo digests then tags, its size. */
struct node_image {
        char *id;
        char **names; /* repo digests, then repo tags */
        size_t n_names;
        int64_t size;
};

void node_images_free(struct node_image *images, size_t n);
/* A deep copy of the n images (n may be 0: an empty array). */
struct node_image *node_images_copy(const struct node_image *images, size_t n);

struct node_agent_options {
        const struct rest_config *api;     /* copied */
        struct rest_ratelimiter *rl;       /* borrowed, may be NULL; must outlive the agent */
        struct event_recorder *recorder;   /* borrowed, may be NULL: node events logged only */
        const char *node_name;             /* also the hostname (label, Hostname address) */
        const char *node_ip;               /* --node-ip; NULL/"": the default route's IPv4 */
        const struct kv_list *node_labels; /* --node-labels, copied; may be NULL */
        bool register_node;                /* --register-node */
        int64_t status_update_ms;          /* nodeStatusUpdateFrequency; 0: 10 s */
        int64_t status_report_ms;          /* nodeStatusReportFrequency; 0: 5 min */
        int64_t lease_duration_s;          /* nodeLeaseDurationSeconds; 0: 40 */
        int32_t max_pods;                  /* maxPods; 0: 110 */
        int32_t port;                      /* daemonEndpoints.kubeletEndpoint; 0: 10250 */
        const char *root_dir;              /* ephemeral-storage = its filesystem's size */
        int64_t reserved_cpu_milli;        /* system + kube reserved cpu */
        int64_t reserved_memory;           /* system + kube reserved memory, bytes */
        /* the hard eviction thresholds of memory.available and
         * nodefs.available, reserved from allocatable (upstream
         * hardEvictionReservation): bytes, else a fraction of capacity (a
         * float32, as upstream); both 0: none */
        int64_t eviction_memory_bytes, eviction_nodefs_bytes;
        float eviction_memory_fraction, eviction_nodefs_fraction;
        int32_t max_images; /* nodeStatusMaxImages: 50; -1 all; 0 none */

        /* Called on the agent's status thread, once per status check.
         * runtime_ready: true when the runtime and its network are ready;
         * else false and, when message is not NULL, a new string saying why
         * (the Ready condition's message, e.g. "container runtime network
         * not ready: NetworkReady=false reason:... message:...").  NULL:
         * always ready. */
        bool (*runtime_ready)(void *opaque, char **message);
        /* The eviction manager's pressure conditions: bits 1 memory, 2
         * disk, 4 PID (src/eviction's EVICTION_*_PRESSURE).  NULL: none. */
        unsigned (*pressure)(void *opaque);
        /* The node shutdown manager's state: true while the node shuts
         * down (Ready False, "node is shutting down").  NULL: never. */
        bool (*shutting_down)(void *opaque);
        /* "containerd://1.6.20" (a new string), or NULL while unknown (reported
         * as "Unknown").  NULL callback: "Unknown". */
        char *(*runtime_version)(void *opaque);
        /* The device plugins' resources for this status (upstream
         * GetDevicePluginResourceCapacity): *res and the names of removed
         * ones, new arrays the agent frees (strings included).  NULL: none. */
        void (*device_resources)(void *opaque, struct node_device_resource **res, size_t *n,
                                 char ***removed, size_t *n_removed);
        /* The runtime's images (upstream imageManager.GetImageList), a new
         * array the agent frees (strings included); < 0 when they could not
         * be listed (status.images then empty, as upstream).  NULL: no
         * status.images. */
        int (*images)(void *opaque, struct node_image **images, size_t *n);
        void *opaque;
};

struct node_agent;

/* Starts the agent's threads and returns at once.  Errors: missing
 * node_name/api, a --node-ip that is not an address of this host, a REST
 * client or thread that cannot be made.  Machine facts it cannot read are
 * logged and reported empty. */
/* Checks an explicit --node-ip (an address of one of this host's interfaces,
 * not multicast, link-local or unspecified; upstream also refuses loopback,
 * which a single-machine cluster needs, so it is accepted here) and
 * returns it as a new string in *out; for NULL/"" picks the IPv4 address of
 * the interface of the default route, else the first non-loopback IPv4 of an
 * interface that is up (upstream ResolveBindAddress/ChooseHostInterface). */
int node_ip_resolve(const char *node_ip, char **out, ck_error_t *err);

int node_agent_start(const struct node_agent_options *o, struct node_agent **out, ck_error_t *err);

/* Stops the threads (within about a second: ongoing requests are
 * abandoned), waits for them and frees a.  The Lease is left to expire.
 * NULL-safe. */
void node_agent_stop(struct node_agent *a);

/* Asks the status thread for a status update now (upstream's
 * syncNodeStatus from the node shutdown manager).  Any thread; NULL-safe. */
void node_agent_sync_status(struct node_agent *a);

/* True once the Node exists on the apiserver (registered by this agent, or
 * found when register_node is false).  Any thread. */
bool node_agent_registered(struct node_agent *a);

/* The node's InternalIP (--node-ip, or the one chosen at start): borrowed,
 * valid until node_agent_stop.  Any thread. */
const char *node_agent_node_ip(struct node_agent *a);

/* The Node as last read from the apiserver (a new reference to a private
 * copy), or NULL before it is known.  Any thread. */
json_t *node_agent_get_node(struct node_agent *a);

/* The Node this kubelet would register, status included (upstream
 * initialNode, what getNodeAnyWay gives a kubelet without the apiserver's
 * Node): labels, capacity and allocatable from this host's facts and o's
 * reservation; o->api and the callbacks are not used.  New reference. */
json_t *node_local(const struct node_agent_options *o);

/* The labels this kubelet gives its Node (kubernetes.io/hostname, os, arch
 * and the beta ones, then `labels` (--node-labels) over them): what the
 * admission checks a pod's node selector against when the Node is not
 * known (standalone).  A new object. */
json_t *node_default_labels(const char *hostname, const struct kv_list *labels);

#endif
