/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pure pieces of the node agent (node.h), for the agent and its unit
 * tests: machine facts, building the Node and its status as JSON, the
 * "changed?" comparison, the status patch and the Lease object.  Not for
 * other modules.
 */
#ifndef CK_NODE_NODE_INTERNAL_H
#define CK_NODE_NODE_INTERNAL_H

#include "api/pod.h"
#include "node/node.h"
#include "util/error.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__)
#define NODE_GOARCH "amd64"
#elif defined(__aarch64__)
#define NODE_GOARCH "arm64"
#elif defined(__arm__)
#define NODE_GOARCH "arm"
#elif defined(__s390x__)
#define NODE_GOARCH "s390x"
#elif defined(__powerpc64__)
#define NODE_GOARCH "ppc64le"
#elif defined(__riscv) && __riscv_xlen == 64
#define NODE_GOARCH "riscv64"
#else
#define NODE_GOARCH "unknown"
#endif

/* What `ckubelet --version` prints, and the User-Agent's version. */
#define NODE_KUBELET_VERSION "v1.35.0"
#define NODE_LEASE_NAMESPACE "kube-node-lease"
#define NODE_CMAD_ANNOTATION "volumes.kubernetes.io/controller-managed-attach-detach"

/* ---- Machine facts (machine_info.c; upstream: cAdvisor's MachineInfo) ---- */

struct node_hugepages {
        int64_t page_size; /* bytes */
        int64_t pages;     /* nr_hugepages */
};

struct node_machine_info {
        int64_t num_cores;         /* online CPUs */
        int64_t memory;            /* MemTotal, bytes */
        int64_t ephemeral_storage; /* size of the root dir's filesystem, bytes; < 0: unknown */
        struct node_hugepages hugepages[8];
        size_t n_hugepages;
        char *machine_id;     /* /etc/machine-id ("" if unreadable) */
        char *system_uuid;    /* /sys/class/dmi/id/product_uuid ("" if unreadable) */
        char *boot_id;        /* /proc/sys/kernel/random/boot_id */
        char *kernel_version; /* uname -r */
        char *os_image;       /* PRETTY_NAME of /etc/os-release, else "Linux" */
};

/* Reads the facts of this host; never fails: what cannot be read is logged
 * and left empty (0, "" or -1 for the storage). */
void node_machine_info_read(const char *root_dir, struct node_machine_info *mi);
void node_machine_info_clear(struct node_machine_info *mi);

/* MemTotal of a /proc/meminfo text, in bytes; -1 if absent. */
int64_t node_parse_meminfo_total(const char *buf);
/* PRETTY_NAME of an os-release text, unquoted (a new string), or NULL. */
char *node_parse_os_release_pretty(const char *buf);

/* ---- Node IP (node_ip.c) ---- */

/* node_ip_resolve: see node/node.h */

/* ---- Quantities, as the apiserver prints them (quantity.c) ---- */

/* resource.NewQuantity(v, BinarySI).String(): "16384000Ki", "2Mi", "0", "1536". New string. */
char *node_quantity_binary(int64_t v);
/* resource.NewMilliQuantity(m, DecimalSI).String(): "2", "1900m". New string. */
char *node_quantity_decimal_milli(int64_t milli);

/* ---- The Node object (node_object.c) ---- */

struct node_status_inputs {
        const struct node_machine_info *machine;
        const char *hostname;
        const char *node_ip;
        int32_t max_pods;
        int32_t port;
        int64_t reserved_cpu_milli;
        int64_t reserved_memory;
        /* the hard eviction thresholds reserved (node.h's options) */
        int64_t eviction_memory_bytes, eviction_nodefs_bytes;
        float eviction_memory_fraction, eviction_nodefs_fraction;
        const char *runtime_version; /* "containerd://1.6.20"; NULL: "Unknown" */
        bool runtime_ready;
        const char *not_ready_message; /* when !runtime_ready */
        unsigned pressure;             /* the eviction manager's conditions (node.h's bits) */
        bool shutting_down;            /* the node shutdown manager's (Ready is False) */
        int64_t now_ns;                /* wall clock for the condition times */
        /* the device plugins' resources, and those they took away since
         * the last status (reported 0, and kept at 0) */
        const struct node_device_resource *devices;
        size_t n_devices;
        char *const *removed_devices;
        size_t n_removed_devices;
        /* status.images (upstream's Images setter): the images, largest
         * first, at most max_images (-1: all) with at most 5 names each;
         * images_known false: not set (no images callback); images_error:
         * they could not be listed (no images, as upstream) */
        bool images_known, images_error;
        struct node_image *images; /* sorted here: writable */
        size_t n_images;
        int32_t max_images;
};

/* upstream nodestatus.MaxNamesPerImageInNodeStatus */
#define NODE_MAX_NAMES_PER_IMAGE 5

/* status.images from the inputs (sorted as upstream's ByImageSize: size
 * descending, then ID descending).  New reference (an array). */
json_t *node_images_json(const struct node_status_inputs *in);

/* Events the status setters ask to record (upstream recordNodeStatusEvent
 * and the reboot event): reasons, borrowed static strings. */
struct node_status_events {
        const char *reasons[8];
        size_t n;
        bool rebooted; /* NodeRebooted (Warning) */
};

/* The Node to register (upstream initialNode): name, default labels,
 * `labels` over them, the attach-detach annotation, and the status (its
 * events in *events, which may be NULL).  New reference. */
json_t *node_build_initial(const char *node_name, const struct kv_list *labels,
                           const struct node_status_inputs *in, struct node_status_events *events);

/* Runs the status setters on `node` in place (upstream setNodeStatus):
 * addresses, capacity/allocatable, nodeInfo, daemonEndpoints, then the
 * conditions MemoryPressure, DiskPressure, PIDPressure, Ready (last), with
 * upstream's heartbeat and transition rules.  events may be NULL. */
void node_set_status(json_t *node, const struct node_status_inputs *in,
                     struct node_status_events *events);

/* Sets kubernetes.io/os and kubernetes.io/arch when missing or wrong
 * (upstream updateNode); true when it changed a label. */
bool node_ensure_os_arch_labels(json_t *node);

/* Upstream nodeStatusHasChanged: the conditions (compared by type, the
 * heartbeat times ignored) or any other status field differ.  Quantities are
 * compared by value, an absent field equals an empty one. */
bool node_status_changed(const json_t *old_status, const json_t *new_status);

/* The strategic merge patch that turns old_node into new_node for the fields
 * the kubelet writes (upstream PatchNodeStatus): metadata labels and
 * annotations, and every status field that differs (capacity/allocatable
 * per key, null for removed keys; conditions merged by type; addresses
 * replaced with "$patch": "replace").  New reference; {} when equal. */
json_t *node_status_patch(const json_t *old_node, const json_t *new_node);

/* Registration on an existing Node (upstream tryRegisterWithAPIServer's
 * reconcile): the attach-detach annotation, the default labels and the huge
 * page resources of `initial` copied into `existing`.  True when `existing`
 * changed and must be patched. */
bool node_reconcile_existing(json_t *existing, const json_t *initial);

/* Semantic equality of two JSON values (an absent or null value equals "",
 * 0, false, {} and []). */
bool node_json_equal(const json_t *a, const json_t *b);

/* ---- The Lease (lease.c) ---- */

/* metav1.MicroTime: "2024-05-01T10:00:00.123456Z" (always 6 digits).  buf: 40 bytes.
 * (metav1.Time is fs_format_rfc3339.) */
char *node_format_micro_time(int64_t real_ns, char *buf);

/* The Lease to write (upstream lease controller newLease + SetNodeOwnerFunc):
 * a copy of base (NULL: a new one in kube-node-lease with holderIdentity
 * node_name), with leaseDurationSeconds and renewTime set, and an owner
 * reference to the Node when it has none and node_uid is known.  New
 * reference. */
json_t *node_lease_build(const json_t *base, const char *node_name, int32_t duration_s,
                         const char *node_uid, int64_t now_ns);

#endif
