/* SPDX-License-Identifier: Apache-2.0 */
/* Private to src/kubelet: the kubelet struct, its event queue, pod records. */
#ifndef CK_KUBELET_INTERNAL_H
#define CK_KUBELET_INTERNAL_H

#include "client/events.h"
#include "client/objects.h"
#include "client/ratelimit.h"
#include "client/rest_config.h"
#include "cm/cm.h"
#include "config/api_source.h"
#include "config/file_source.h"
#include "eviction/eviction.h"
#include "kubelet/eviction_loop.h"
#include "kubelet/shutdown_loop.h"
#include "kubelet/gc_loop.h"
#include "kubelet/kubelet.h"
#include "kubelet/kubelet_server.h"
#include "kubelet/pod_cache.h"
#include "kubelet/podworkers.h"
#include "kubelet/runtime_state.h"
#include "kubelet/status_manager.h"
#include "kubelet/status_store.h"
#include "kuberuntime/runtime.h"
#include "logs/container_log_manager.h"
#include "node/node.h"
#include "pleg/pleg.h"
#include "prober/prober.h"
#include "util/backoff.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

enum kl_event_type {
        KL_EV_SOURCE = 0, /* a source's full pod set */
        KL_EV_POD_EVENT,  /* PLEG saw a change for uid */
        KL_EV_RELIST,     /* PLEG relisted: runtime uids (for housekeeping) */
        KL_EV_WORK_DONE,  /* a worker finished */
        KL_EV_EVICT,      /* the eviction manager evicts uid (message, grace_s) */
        KL_EV_STOP,
};

struct kl_runtime_uid {
        char *uid, *name, *namespace;
        char **live; /* its containers that have not exited (IDs) */
        size_t n_live;
};

/* upstream's preemption: the status reason and message of a pod preempted
 * for a critical one, and its DisruptionTarget condition's message */
#define KL_PREEMPT_REASON "Preempting"
#define KL_PREEMPT_MESSAGE "Preempted in order to admit critical pod"
#define KL_PREEMPT_DISRUPTION "Pod was preempted by Kubelet to accommodate a critical pod."

struct kl_event {
        enum kl_event_type type;
        struct kl_event *next;
        /* KL_EV_SOURCE */
        enum pod_source source;
        struct pod **pods;
        size_t n_pods;
        /* KL_EV_POD_EVENT, KL_EV_WORK_DONE */
        char *uid;
        /* KL_EV_RELIST */
        struct kl_runtime_uid *runtime_uids;
        size_t n_runtime_uids;
        bool runtime_back; /* the first good relist after failed ones */
        /* KL_EV_WORK_DONE */
        enum pod_work_kind work_kind;
        bool ok;
        bool terminal;         /* the pod reached Succeeded/Failed and was stopped */
        int64_t next_retry_ms; /* CLOCK_MONOTONIC; 0 = none */
        /* KL_EV_EVICT */
        const char *reason; /* a static string: "Evicted", "Terminated" */
        char *message;
        int64_t grace_s;
        bool disruption;
};

/* What the sync loop knows about one desired pod (upstream pod manager +
 * pod worker state). */
struct pod_record {
        struct pod *pod; /* as its source has it */
        /* the pod the workers sync and admission counts: pod with the
         * resources the kubelet allocated (the same pod unless a resize
         * waits); a reference */
        struct pod *alloc;
        /* PodResizePending: its reason (static string, NULL: none) and
         * since when (realtime ns) */
        const char *resize_pending_reason;
        char *resize_pending_message;
        int64_t resize_pending_since_ns;
        bool admitted; /* passed admission (or rejected: then never synced) */
        bool rejected;
        bool deleting;       /* left its source: being killed */
        bool kill_in_flight; /* its kill is submitted and not finished */
        bool terminal;       /* Succeeded / Failed and stopped: no more syncs */
        /* static pods: back in the source with the same UID while being
         * killed: started again once stopped (pod is the new object) */
        bool restart_requested;
        /* static pods: allowed to start (upstream allowStaticPodStart): no
         * other of its full name runs or stops, none came first */
        bool static_started;
        uint64_t seq; /* the order records were made in */
        int64_t next_sync_ms;
        /* its last sync (or kill) failed: next_sync_ms is the error back-off,
         * cut short when the runtime answers again after failing */
        bool sync_failed;
        int64_t first_seen_us;       /* when the record was made (CLOCK_MONOTONIC) */
        int64_t mirror_requested_ms; /* static pods: when a mirror pod was last asked for */
        /* evicted (the eviction manager, the node shutdown manager): each
         * sync stops it, Failed with evict_reason (static: "Evicted",
         * "Terminated") and this message; NULL: not evicted */
        const char *evict_reason;
        char *evict_message;
        int64_t evict_grace_s;
        bool evict_disruption; /* a DisruptionTarget condition too */
};

/* A write to the apiserver asked for recently (not asked again meanwhile). */
struct kl_recent {
        char *uid;
        int64_t at_ms;
};

/* The sync loop's event queue: the one way the other threads (sources,
 * PLEG, prober, pod workers) reach the sync loop. */
struct kl_queue {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        struct kl_event *head, *tail;
};

/* What a pod worker reaches (sync_pod.c): the modules a sync drives, each
 * thread-safe, and the queue back to the sync loop; nothing of the loop's
 * own state.  Filled before the first work is submitted, read-only after. */
struct kl_sync_deps {
        const struct kubelet_config *cfg;
        struct cm *cm;
        struct kuberuntime *rt;
        struct status_store *status;
        struct status_manager *sm; /* NULL standalone */
        struct prober *prober;
        struct podworkers *workers;
        struct alloc_state *allocated;
        struct kube_objects *kube;       /* NULL standalone */
        struct event_recorder *recorder; /* NULL standalone: logged */
        /* failed volume setups, per pod UID: retried from 500 ms doubling
         * to 10 s (upstream's volume manager retries from 500 ms; a
         * TokenRequest right after a pod's creation may not find it yet) */
        struct backoff *mount_backoff;
        struct runtime_state *runtime_state;
        /* each pod's runtime status as its last sync left it */
        struct pod_cache *pod_cache;
        const char *runtime_name; /* from CRI Version, e.g. "containerd" */
        const char *node_ip;
        struct kl_queue *queue;
};

/* What the PLEG's callback reaches (on the PLEG thread). */
struct kl_pleg_deps {
        struct kl_queue *queue;
        struct pod_cache *pod_cache; /* invalidated by the events */
};

/* What the node status thread reaches (its callbacks in kubelet.c). */
struct kl_node_deps {
        const struct kubelet_config *cfg;
        struct runtime_state *runtime_state;
        struct devicemanager *devices;
        _Atomic(struct pleg *) pleg; /* set once the PLEG runs */
        /* the pressure conditions, as the eviction manager publishes them */
        atomic_uint pressure;
        /* the node shutdown manager's state, as it publishes it */
        atomic_bool shutting_down;
        struct cri_client *cri; /* made on first use */
        /* the runtime's images, listed every 30 s (upstream's image
         * manager cache): the last good list stays when a listing fails */
        struct node_image *images;
        size_t n_images;
        bool images_listed;
        int64_t images_at_ms;
};

/* The sync loop's own state: only its thread touches it (kubelet.c,
 * mirror.c, resize.c). */
struct kl_loop {
        struct pod_record *records;
        size_t n_records, cap_records;
        uint64_t records_made; /* the next pod_record.seq */
        bool sources_ready;
        unsigned sources_expected, sources_seen; /* bits 1 << enum pod_source */
        struct pod **mirrors;                    /* mirror pods in the apiserver (cluster mode) */
        size_t n_mirrors;
        bool api_seen;                    /* the apiserver source delivered once */
        struct kl_recent *mirror_deletes; /* orphaned mirror pods being deleted */
        size_t n_mirror_deletes;
        /* apiserver pods stopped and deleted by us that the watch may still
         * show (with their deletionTimestamp): not to be started again */
        struct kl_recent *finished;
        size_t n_finished;
        struct kl_runtime_uid *runtime_uids; /* last relist */
        size_t n_runtime_uids;
        bool relisted; /* a relist has come: runtime_uids say what runs */
        int64_t next_housekeeping_ms;
        int64_t next_log_link_gc_ms; /* dangling /var/log/containers links */
        /* in-place resize (resize.c): the UIDs of the pods whose resize
         * waits, retried on pod changes and at next_resize_retry_ms */
        char **pending_resizes;
        size_t n_pending_resizes;
        int64_t next_resize_retry_ms;
};

/* The wiring root: owns every module, made by kubelet_new, started by
 * kubelet_run.  Other threads get only &queue, &sync or &node. */
struct kubelet {
        const struct kubelet_config *cfg;
        struct cm *cm;
        struct devicemanager *devices;    /* device plugins (upstream cm's device manager) */
        struct sysctl_allowlist *sysctls; /* admission: safe + allowedUnsafeSysctls */
        struct kuberuntime *rt;
        struct kuberuntime_options rt_opts;
        struct status_store *status;
        struct podworkers *workers;
        struct file_source *files;
        struct kubelet_server *server; /* the ports 10250, read-only, 10248 (healthz) */
        struct prober *prober;
        /* container log rotation (NULL when disabled), its runtime settings */
        struct clm *log_manager;
        struct clm_cri log_cri;
        struct gc_loop *gc;           /* the garbage collectors */
        struct stats_provider *stats; /* the Summary: the server, the eviction manager */
        struct eviction_config eviction_cfg;
        struct eviction_loop *eviction; /* NULL without thresholds */
        struct shutdown_loop *shutdown; /* NULL without a shutdown grace period */
        /* the admitted, non-terminal pods (references), published by the
         * sync loop for the eviction manager's thread */
        pthread_mutex_t active_lock;
        struct pod **active;
        size_t n_active;
        struct pod **stopping; /* deleted or evicted, not yet stopped */
        size_t n_stopping;
        char *runtime_name; /* from CRI Version, e.g. "containerd" */
        char *node_ip;

        /* cluster mode (--kubeconfig); all NULL when standalone */
        struct rest_config *api_cfg;
        struct rest_ratelimiter *api_rl;
        struct rest_pool *api_pool;
        struct kube_objects *kube;
        struct informer *services;        /* every Service, for the service env vars */
        struct informer *runtime_classes; /* every RuntimeClass: name and handler */
        struct event_recorder *recorder;
        struct status_manager *sm;
        struct api_source *api;
        struct node_agent *node_agent;
        /* the Node this kubelet would register (node_local), made at start
         * and never changed: kl_admission_node copies it */
        json_t *local_node;
        int64_t reserved_cpu_milli, reserved_memory;
        bool apparmor_enabled; /* the host enforces AppArmor (read at start) */

        struct backoff *mount_backoff;       /* see kl_sync_deps */
        struct runtime_state *runtime_state; /* the runtime's readiness (CRI Status) */
        struct userns_manager *userns;       /* hostUsers: false pods' ID ranges */
        struct pod_cache *pod_cache;         /* see kl_sync_deps */
        /* the in-place resize checkpoints under the root directory */
        struct alloc_state *allocated, *actuated;

        struct kl_queue queue;
        struct kl_pleg_deps pleg;
        struct kl_sync_deps sync;
        struct kl_node_deps node;
        struct kl_loop loop;
};

void kl_queue_post(struct kl_queue *q, struct kl_event *ev);
struct kl_event *kl_event_new(enum kl_event_type type);
void kl_event_free(struct kl_event *ev);

/* mirror.c: mirror pods, on the sync loop thread. */
bool kl_is_mirror_pod(const struct pod *pod);
/* Takes the mirror pods out of an apiserver source event into kl->mirrors. */
void kl_mirrors_take(struct kubelet *kl, struct kl_event *ev);
/* Creates, recreates and deletes mirror pods as the static pods require. */
void kl_mirrors_reconcile(struct kubelet *kl);
void kl_mirrors_free(struct kubelet *kl);

/* kubelet.c: submits the record's work (a sync, or its kill once it is
 * deleting); update_type as pod_work's. */
void kl_sync_record(struct kubelet *kl, struct pod_record *r, const char *update_type);

/* The Node the admission checks a pod against (upstream getNodeAnyWay):
 * as the apiserver has it (*from_api true; from_api may be NULL), else
 * {metadata: {name, labels: the default labels}}.  A new reference. */
json_t *kl_admission_node(struct kubelet *kl, bool *from_api);
/* The node's allocatable ephemeral-storage and huge pages (of a Node from
 * kl_admission_node), for admission_node.native: a new array. */
struct resource_count *kl_node_native(const json_t *node, size_t *n);
void kl_resource_counts_free(struct resource_count *l, size_t n);

/* resize.c: in-place resize on the sync loop (upstream's allocation
 * manager).  A new record: its alloc pod from the checkpoint (a restarted
 * kubelet) before admission; admitted: the allocation recorded, or a
 * pending resize queued; its pod replaced: a resize looked at; removed:
 * its allocation forgotten. */
void kl_resize_pod_added(struct kubelet *kl, struct pod_record *r);
void kl_resize_admitted(struct kubelet *kl, struct pod_record *r);
void kl_resize_pod_updated(struct kubelet *kl, struct pod_record *r, bool spec_changed);
void kl_resize_pod_removed(struct kubelet *kl, const char *uid);
/* Frees what resize.c keeps in a record (its alloc pod, the message). */
void kl_resize_record_free(struct pod_record *r);
/* Evaluates the pending resizes in upstream's order (trigger: upstream's
 * retry_trigger, "periodic_retry" from the timer). */
void kl_resize_retry(struct kubelet *kl, const char *trigger);
/* When the pending resizes are due again (CLOCK_MONOTONIC ms), 0: none. */
int64_t kl_resize_next_retry_ms(const struct kubelet *kl);
/* upstream's resize event messages: "<prefix>: {"containers":[...],
 * "generation":N,"error":"..."}" of pod's resources.  New string; any
 * thread. */
char *kl_resize_message(const struct pod *pod, int64_t generation, const char *error,
                        const char *prefix);

/* sync_pod.c: the worker side. */
/* ctx: the struct kl_sync_deps */
void kl_do_work(void *ctx, struct cri_client *cri, const struct pod_work *w);

#endif
