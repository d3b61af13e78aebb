/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The runtime's view of pods (upstream pkg/kubelet/container: Pod, PodStatus)
 * and the kuberuntime manager API the kubelet core drives
 * (upstream pkg/kubelet/kuberuntime/kuberuntime_manager.go).
 *
 * Threading: a `struct kuberuntime` is shared by the worker threads; its
 * methods are thread-safe (internal state such as the backoff table has its
 * own lock).  Each call takes the calling thread's own `struct cri_client`.
 */
#ifndef CK_KUBERUNTIME_RUNTIME_H
#define CK_KUBERUNTIME_RUNTIME_H

#include "allocation/state.h"
#include "api/pod.h"
#include "client/events.h"
#include "client/objects.h"
#include "cri/cri.h"
#include "util/error.h"

#include <stdbool.h>
#include <stdint.h>

enum container_state {
        CONTAINER_STATE_CREATED = 0,
        CONTAINER_STATE_RUNNING,
        CONTAINER_STATE_EXITED,
        CONTAINER_STATE_UNKNOWN
};
enum sandbox_state { SANDBOX_STATE_READY = 0, SANDBOX_STATE_NOTREADY };

/* Times are nanoseconds since the epoch, 0 when unset (as CRI reports them). */
struct runtime_container_status {
        char *id;   /* CRI container id */
        char *name; /* io.kubernetes.container.name */
        enum container_state state;
        int64_t created_at, started_at, finished_at;
        int32_t exit_code;
        char *image;     /* spec image as requested */
        char *image_ref; /* resolved image id / digest (status imageID) */
        char *reason;    /* e.g. Completed, Error, OOMKilled */
        char *message;   /* termination message if any */
        uint64_t hash;   /* io.kubernetes.container.hash */
        int32_t restart_count;
        char *log_path;
        char *sandbox_id;
        /* ContainerStatus.resources.linux, when the runtime reports it
         * (containerd 1.6 does): what the container's cgroup was given */
        struct runtime_container_resources {
                bool reported;
                int64_t cpu_period, cpu_quota, cpu_shares, memory_limit;
        } resources;
};

struct runtime_sandbox_status {
        char *id;
        enum sandbox_state state;
        int64_t created_at;
        uint32_t attempt;
        char *ip; /* primary pod IP, NULL for none / hostNetwork */
        char **additional_ips;
        size_t n_additional_ips;
        bool host_network; /* network namespace mode NODE */
};

/* Everything the runtime knows about one pod. Arrays are sorted newest first
 * (as upstream: sandbox_statuses[0] is the latest sandbox). */
struct runtime_pod_status {
        char *uid;
        char *name;
        char *namespace;
        char *ip; /* from the newest ready sandbox */
        struct runtime_sandbox_status *sandboxes;
        size_t n_sandboxes;
        struct runtime_container_status *containers;
        size_t n_containers;
};

void runtime_pod_status_free(struct runtime_pod_status *s);

/* Latest status of a container by name (newest first), or NULL. Borrowed. */
const struct runtime_container_status *runtime_pod_status_find(const struct runtime_pod_status *s,
                                                               const char *container_name);

/* A light listing for PLEG and housekeeping (no per-container status calls). */
struct runtime_pod_entry_container {
        char *id;
        char *name;
        char *image; /* the image the container was created from ("" if unknown) */
        enum container_state state;
        char *sandbox_id;
};
struct runtime_pod_entry_sandbox {
        char *id;
        enum sandbox_state state;
};
struct runtime_pod_entry {
        char *uid;
        char *name;
        char *namespace;
        struct runtime_pod_entry_sandbox *sandboxes;
        size_t n_sandboxes;
        struct runtime_pod_entry_container *containers;
        size_t n_containers;
};
struct runtime_pod_list {
        struct runtime_pod_entry *pods;
        size_t n_pods;
};
void runtime_pod_list_free(struct runtime_pod_list *l);

/* Container garbage collection (upstream kubecontainer.GCPolicy): dead
 * containers created less than min_age_ms ago are kept; of the others, the
 * newest max_per_pod_container of each container of a pod (-1: all), and at
 * most max_containers on the node (-1: no limit). */
struct container_gc_policy {
        int64_t min_age_ms;            /* --minimum-container-ttl-duration, 0 */
        int32_t max_per_pod_container; /* --maximum-dead-containers-per-container, 1 */
        int32_t max_containers;        /* --maximum-dead-containers, -1 */
};

/* One dead container as the garbage collector sees it (upstream
 * containerGCInfo): its pod and name (the evict unit), its creation. */
struct container_gc_info {
        const char *id;
        const char *pod_uid;
        const char *name;
        int64_t created_ns;
        bool running; /* never removed */
};

/* upstream evictContainers for pods that exist: sets remove[i] for each
 * container of c (any order) the policy removes at now_ns: per unit (pod,
 * name) all but the newest max_per_pod_container evictable ones, then, over
 * max_containers, the units cut to max_containers / units (at least 1)
 * each, then the oldest of what is left.  Returns how many. */
size_t kuberuntime_container_gc_plan(const struct container_gc_info *c, size_t n,
                                     const struct container_gc_policy *p, int64_t now_ns,
                                     bool *remove);

struct kuberuntime;
struct cri_client;
/* The node-wide pass (upstream's GarbageCollect every minute, for the pods
 * that exist: those no source has are housekeeping's): lists every
 * container, removes what kuberuntime_container_gc_plan says of policy (with
 * their log files and legacy links).  policy NULL: the manager's, and then
 * only with a max_containers limit (the per-pod limit is each sync's,
 * kuberuntime_sync_pod).  Errors: the listing (a removal that fails is
 * logged, as upstream's removeOldestN does). */
int kuberuntime_gc_containers(struct kuberuntime *rt, struct cri_client *cri,
                              const struct container_gc_policy *policy, int64_t now_ns,
                              ck_error_t *err);
/* The container GC policy the manager was made with. */
const struct container_gc_policy *kuberuntime_options_gc(const struct kuberuntime *rt);

/* Settings the runtime manager needs from the kubelet configuration. */
struct kuberuntime_options {
        const char *root_dir;     /* --root-dir: pods/<uid>/... */
        const char *pod_logs_dir; /* default /var/log/pods */
        const char *node_name;
        const char *cluster_domain;     /* may be NULL */
        const char *const *cluster_dns; /* NULL-terminated list, may be NULL */
        const char *resolv_conf;        /* host resolv.conf path, "" disables */
        const char *pod_infra_image;    /* informational: the sandbox image */
        int64_t image_backoff_initial_ms, image_backoff_max_ms;         /* 10 s, 300 s */
        int64_t crashloop_backoff_initial_ms, crashloop_backoff_max_ms; /* 10 s, 300 s */
        /* for the manager's own connections (parallel container stops) */
        const char *runtime_endpoint;
        int64_t runtime_timeout_ms;
        /* --serialize-image-pulls (default true): one pull at a time; when
         * false, only pulls of the same image wait for each other */
        bool serialize_image_pulls;
        /* events about pods and containers (Pulling, Created, Killing...);
         * NULL: logged only (borrowed, outlives the manager) */
        struct event_recorder *recorder;
        /* the node's InternalIP (status.hostIP for env); NULL/"": unknown */
        const char *node_ip;
        /* the resources each container was given, at its creation and at
         * each in-place resize (actuated_pods_state); NULL: not recorded,
         * no resize is done (borrowed, outlives the manager) */
        struct alloc_state *actuated;
        /* where the legacy log links go (/var/log/containers); NULL or "":
         * none are made */
        const char *legacy_logs_dir;
        /* the device plugins' answers for containers that have devices
         * (environment, mounts, devices, annotations, CDI devices); NULL:
         * none (borrowed, outlives the manager) */
        struct devicemanager *devices;
        /* Whether the runtime handler supports user namespaces (upstream's
         * runtimeHelper.HandlerSupportsUserNamespaces, from CRI Status): a
         * pod with hostUsers false needs it.  false with *error (new
         * string) when the handler is unknown.  NULL: none does. */
        bool (*handler_supports_userns)(void *ctx, const char *handler, char **error);
        void *handler_ctx;
        /* The host range of a pod's user namespace (src/userns): host IDs
         * [*host_id, *host_id + *length) are the pod's 0..; -1 with err.
         * NULL: no user namespace manager (a pod with hostUsers false is
         * refused). */
        int (*userns_mappings)(void *ctx, const struct pod *pod, uint32_t *host_id,
                               uint32_t *length, ck_error_t *err);
        void *userns_ctx;
        /* The runtime handler of a pod's spec.runtimeClassName (upstream
         * runtimeClassManager.LookupRuntimeHandler): *handler a new string;
         * -1 with err when the RuntimeClass is not known.  NULL (no
         * apiserver, as upstream's standalone kubelet): the default
         * handler, "". */
        int (*lookup_runtime_handler)(void *ctx, const char *runtime_class, char **handler,
                                      ck_error_t *err);
        void *runtime_class_ctx;
        /* the dead containers kept (each sync prunes by it) */
        struct container_gc_policy gc;
        /* SELinux enforces on this host (kuberuntime_selinux_enabled, read
         * once at start): the runtime is asked to relabel the kubelet's
         * volumes, as upstream's selinux.GetEnabled() decides */
        bool selinux_enabled;
};

/* Whether SELinux is on (go-selinux GetEnabled): selinuxfs is mounted at
 * /sys/fs/selinux and this process's label is not "kernel". */
bool kuberuntime_selinux_enabled(void);

/* The runtime handler for pod (opts->lookup_runtime_handler, "" for no
 * spec.runtimeClassName or no lookup): a new string, or NULL with err. */
char *kuberuntime_runtime_handler(const struct kuberuntime_options *opts, const struct pod *pod,
                                  ck_error_t *err);

struct kuberuntime;
struct cm;

struct kuberuntime *kuberuntime_new(const struct kuberuntime_options *opts);
void kuberuntime_free(struct kuberuntime *rt);

/* Status of one pod: ListPodSandbox + ListContainers filtered by the pod UID
 * label, then PodSandboxStatus / ContainerStatus for each. */
int kuberuntime_get_pod_status(struct kuberuntime *rt, struct cri_client *cri, const char *uid,
                               const char *name, const char *ns, struct runtime_pod_status **out,
                               ck_error_t *err);

/* Every pod the runtime has (labelled by a kubelet), with all = include
 * exited containers and not-ready sandboxes. */
int kuberuntime_get_pods(struct kuberuntime *rt, struct cri_client *cri, bool all,
                         struct runtime_pod_list **out, ck_error_t *err);

/* What the sync did, for status generation and events. */
struct kuberuntime_sync_result {
        bool sandbox_created;
        /* per container name: why it is waiting (e.g. "CrashLoopBackOff",
         * "ImagePullBackOff", "ErrImagePull", "CreateContainerConfigError")
         * and the message; n entries. */
        struct kuberuntime_waiting {
                char *container_name;
                char *reason;
                char *message;
        } * waiting;
        size_t n_waiting;
        /* earliest time (CLOCK_MONOTONIC ms) a backoff expires, 0 if none:
         * the sync loop re-syncs the pod then. */
        int64_t next_retry_ms;
        /* an in-place resize that failed (NULL: none, or done) */
        char *resize_error;
};
void kuberuntime_sync_result_clear(struct kuberuntime_sync_result *r);

/* Registry credentials of one pod: its imagePullSecrets' docker configs
 * (upstream credentialprovider BasicDockerKeyring).  Immutable once
 * loaded: lookups may run on any thread. */
struct kuberuntime_keyring;

/* Reads each secret of pod->imagePullSecrets through kube (NULL in
 * standalone mode) and parses its docker config: type
 * kubernetes.io/dockerconfigjson (key .dockerconfigjson, {"auths": {...}})
 * or kubernetes.io/dockercfg (key .dockercfg); secrets of other types are
 * ignored.  A secret that cannot be read is logged and skipped ("Unable to
 * retrieve pull secret"), with a FailedToRetrieveImagePullSecret warning on
 * recorder (may be NULL).  A secret whose docker config is malformed makes
 * every lookup fail with that error, as upstream.  Returns a new keyring
 * (kuberuntime_keyring_free), or NULL when the pod names no secret.  Any
 * thread; blocks on the apiserver. */
struct kuberuntime_keyring *kuberuntime_pull_keyring_load(const struct kube_objects *kube,
                                                          struct event_recorder *recorder,
                                                          const struct pod *pod);
void kuberuntime_keyring_free(struct kuberuntime_keyring *k);

/* The credentials to try, in order, for pulling image (upstream
 * DockerKeyring.Lookup of the image's repository): entries whose registry
 * host[:port] and path prefix match, most specific first; for a Docker Hub
 * image with no match, the index.docker.io entries.  *out: a new array of
 * *n new AuthConfigs (kuberuntime_auths_free); *n 0 when none match or k is
 * NULL.  Fails only when one of the secrets was malformed. */
int kuberuntime_keyring_lookup(const struct kuberuntime_keyring *k, const char *image,
                               Runtime__V1__AuthConfig ***out, size_t *n, ck_error_t *err);
void kuberuntime_auths_free(Runtime__V1__AuthConfig **auths, size_t n);

/* What the prober says of a pod's containers: names, NULL-terminated lists,
 * each may be NULL. */
struct probe_verdicts {
        const char *const *liveness_failed; /* a restart is due */
        const char *const *startup_failed;  /* a restart is due */
        const char *const *started;         /* the startup probe has succeeded */
};

/* Information the runtime needs from the kubelet for one sync (volumes
 * already set up, the cgroup parent, resolved pull secrets). Borrowed. */
struct kuberuntime_pod_context {
        const char *cgroup_parent; /* "" when cgroups-per-qos is off */
        /* host path of each pod volume, by volume name; NULL-terminated pairs */
        const struct kv_list *volume_paths;
        /* registry credentials from the pod's imagePullSecrets, matched
         * per image; NULL: when a pull is due, they are read through `kube`
         * below (kuberuntime_pull_keyring_load) */
        const struct kuberuntime_keyring *keyring;
        const char *pod_ip_hint; /* unused in standalone mode */
        /* the prober's verdicts: containers to restart, sidecars started */
        struct probe_verdicts probes;
        /* configMaps and secrets for env / envFrom and pull secrets; NULL:
         * standalone, a reference to one is an error as upstream without a
         * kubeClient (pull secrets: skipped, logged) */
        const struct kube_objects *kube;
        /* the pod cgroups, resized with the containers; NULL: none */
        struct cm *cm;
};

/* Drive the pod's sandbox and containers towards the spec (upstream
 * SyncPod): computes the actions (see compute.h), kills what must go,
 * (re)creates the sandbox, starts init containers in order then the app
 * containers, honouring restartPolicy and backoff.  A container that cannot
 * start is reported in `result->waiting`, not as an error; an error return
 * means the step that failed made the sync meaningless (e.g. sandbox). */
int kuberuntime_sync_pod(struct kuberuntime *rt, struct cri_client *cri, const struct pod *pod,
                         const struct runtime_pod_status *status,
                         const struct kuberuntime_pod_context *ctx,
                         struct kuberuntime_sync_result *result, ck_error_t *err);

/* Whether a running resizable container of pod (the allocated pod) has
 * other resources than the runtime was given (upstream
 * IsPodResizeInProgress); false without an actuated state. */
bool kuberuntime_resize_in_progress(struct kuberuntime *rt, const struct pod *pod,
                                    const struct runtime_pod_status *status);

/* The resources the runtime was last given for each of pod's containers
 * ({"<name>": v1.ResourceRequirements}, a new reference), or NULL. */
json_t *kuberuntime_actuated_resources(struct kuberuntime *rt, const char *uid);

/* Stop every container (with grace_s; -1 = the pod's / container's own grace
 * period) and then the sandboxes of a pod.  pod may be NULL (an orphan found
 * by housekeeping): then the runtime's labels give the grace period. */
int kuberuntime_kill_pod(struct kuberuntime *rt, struct cri_client *cri, const struct pod *pod,
                         const struct runtime_pod_status *status, int64_t grace_s, ck_error_t *err);

/* Whether the runtime has a container whose ID starts with id_prefix and
 * that has not exited (it may be rotating its log). */
typedef bool (*kuberuntime_container_live_fn)(void *ctx, const char *id_prefix);

/* Removes the links of legacy_logs_dir whose container log is gone, unless
 * their container lives (upstream's container GC of dead symlinks: a log
 * being rotated is briefly missing). */
int kuberuntime_legacy_logs_gc(struct kuberuntime *rt, kuberuntime_container_live_fn live,
                               void *live_ctx, ck_error_t *err);

/* Whether everything of the pod of that UID may go: no source has it and
 * the runtime has nothing of it. */
typedef bool (*kuberuntime_pod_gone_fn)(void *ctx, const char *uid);

/* Removes the directories <namespace>_<name>_<uid> of pod_logs_dir whose pod
 * is gone (upstream's container GC, evictPodLogsDirectories): those of pods
 * removed with their runtime objects are removed with them; these are left
 * by pods removed while the kubelet was not running.  Errors: the directory
 * cannot be read (a removal that fails is logged). */
int kuberuntime_pod_logs_gc(struct kuberuntime *rt, kuberuntime_pod_gone_fn gone, void *ctx,
                            ck_error_t *err);

/* Remove the stopped containers and sandboxes of a pod that is gone (or of
 * an orphan), and its log directory. */
int kuberuntime_remove_pod(struct kuberuntime *rt, struct cri_client *cri,
                           const struct runtime_pod_status *status, ck_error_t *err);

#endif
