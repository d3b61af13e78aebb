/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Typed v1.Pod: the fields the kubelet uses, decoded from JSON (YAML is
 * converted to the same JSON tree first; see util/yamljson.h).
 *
 * A `struct pod` is immutable once decoded and reference counted: the sync
 * loop hands snapshots to worker threads with pod_ref(); whoever drops the
 * last reference frees it.  Strings are owned by the pod.  Optional scalars
 * carry a `has_` flag; absent strings are NULL; absent lists have n == 0.
 *
 * Defaults are applied by the decoder as the apiserver's defaulting does
 * (restartPolicy Always, terminationGracePeriodSeconds 30, dnsPolicy
 * ClusterFirst, imagePullPolicy from the tag, probe timings 1/10/1/3,
 * terminationMessagePath /dev/termination-log, protocol TCP, ...), so every
 * consumer sees a fully defaulted pod.
 */
#ifndef CK_API_POD_H
#define CK_API_POD_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kv {
        char *key;
        char *value;
};

struct kv_list {
        struct kv *items;
        size_t n;
};

struct str_list {
        char **items;
        size_t n;
};

/* An extended resource (vendor.com/gpu: a '/', not kubernetes.io/) and
 * its count. */
struct resource_count {
        char *name;
        int64_t value;
};

/* cpu in millicores, memory and ephemeral-storage in bytes; the extended
 * resources in spec order (owned: container_release frees them). */
struct resource_list {
        bool has_cpu, has_memory, has_ephemeral_storage;
        int64_t cpu_milli;
        int64_t memory;
        int64_t ephemeral_storage;
        struct resource_count *extended;
        size_t n_extended;
        /* hugepages-<size>: bytes, named as the spec names them */
        struct resource_count *hugepages;
        size_t n_hugepages;
};

/* The count of extended resource name in l (0 when absent). */
int64_t resource_list_extended(const struct resource_list *l, const char *name);
/* The bytes of huge pages resource name ("hugepages-2Mi") in l (0 when
 * absent). */
int64_t resource_list_hugepages(const struct resource_list *l, const char *name);
/* The page size of a huge pages resource name ("hugepages-2Mi": 2097152),
 * -1 when name is not one (upstream HugePageSizeFromResourceName). */
int64_t resource_hugepage_size(const char *name);

struct resource_requirements {
        struct resource_list requests;
        struct resource_list limits;
};

struct int_or_string {
        bool is_string;
        int32_t ival;
        char *sval;
};

enum env_source_kind {
        ENV_VALUE = 0,      /* value (possibly empty), $(VAR) expansion applies */
        ENV_FIELD_REF,      /* valueFrom.fieldRef.fieldPath */
        ENV_RESOURCE_REF,   /* valueFrom.resourceFieldRef */
        ENV_CONFIG_MAP_KEY, /* valueFrom.configMapKeyRef */
        ENV_SECRET_KEY,     /* valueFrom.secretKeyRef */
        ENV_FILE_KEY,       /* valueFrom.fileKeyRef (EnvFiles): a key of an env file */
};

struct env_var {
        char *name;
        enum env_source_kind kind;
        char *value;          /* ENV_VALUE */
        char *field_path;     /* ENV_FIELD_REF */
        char *resource;       /* ENV_RESOURCE_REF: limits.cpu, requests.memory, ... */
        char *container_name; /* ENV_RESOURCE_REF, optional */
        char *divisor;        /* ENV_RESOURCE_REF, optional quantity string */
        char *ref_name;       /* ENV_CONFIG_MAP_KEY / ENV_SECRET_KEY: object name;
                                 ENV_FILE_KEY: the (emptyDir) volume's name */
        char *ref_key;        /* ... and key */
        char *file_path;      /* ENV_FILE_KEY: the file, relative to the volume */
        bool optional;
};

struct env_from_source {
        char *prefix;
        bool is_secret; /* else configMap */
        char *name;
        bool optional;
};

struct container_port {
        char *name;
        int32_t container_port;
        int32_t host_port; /* 0 if none */
        char *protocol;    /* "TCP" (default), "UDP", "SCTP" */
        char *host_ip;
};

struct volume_mount {
        char *name;
        char *mount_path;
        char *sub_path;
        bool read_only;
        char *mount_propagation; /* None (default), HostToContainer, Bidirectional */
        /* recursiveReadOnly: Disabled (default), IfPossible, Enabled */
        char *recursive_read_only;
};

struct http_header {
        char *name;
        char *value;
};

enum handler_kind {
        HANDLER_NONE = 0,
        HANDLER_EXEC,
        HANDLER_HTTP_GET,
        HANDLER_TCP_SOCKET,
        HANDLER_GRPC,
        HANDLER_SLEEP
};

/* A probe or lifecycle hook action. */
struct handler {
        enum handler_kind kind;
        struct str_list exec_command;
        char *http_path;   /* default "/" */
        char *http_host;   /* default: pod IP */
        char *http_scheme; /* HTTP (default) or HTTPS */
        struct http_header *http_headers;
        size_t n_http_headers;
        struct int_or_string port; /* httpGet / tcpSocket; grpc uses ival */
        char *grpc_service;
        int64_t sleep_seconds;
};

struct probe {
        struct handler handler;
        int32_t initial_delay_seconds;
        int32_t timeout_seconds;   /* default 1 */
        int32_t period_seconds;    /* default 10 */
        int32_t success_threshold; /* default 1 */
        int32_t failure_threshold; /* default 3 */
        bool has_termination_grace_period_seconds;
        int64_t termination_grace_period_seconds;
};

struct capabilities {
        struct str_list add;
        struct str_list drop;
};

struct security_context {
        bool has_run_as_user, has_run_as_group, has_run_as_non_root, has_privileged;
        bool has_read_only_root_filesystem, has_allow_privilege_escalation;
        int64_t run_as_user;
        int64_t run_as_group;
        bool run_as_non_root;
        bool privileged;
        bool read_only_root_filesystem;
        bool allow_privilege_escalation;
        struct capabilities capabilities;
};

enum pull_policy { PULL_IF_NOT_PRESENT = 0, PULL_ALWAYS, PULL_NEVER };

/* resizePolicy[].restartPolicy of one resource: what an in-place resize of
 * it needs (NotRequired when the container names no policy for it). */
enum resize_restart { RESIZE_NOT_REQUIRED = 0, RESIZE_RESTART_CONTAINER };

/* A restartPolicyRules entry (upstream ContainerRestartRule).  Its action
 * is "Restart", the only one without the RestartAllContainers gate (alpha,
 * off): the decoder refuses any other. */
struct container_restart_rule {
        bool exit_codes_in; /* exitCodes.operator In; false: NotIn */
        int32_t *exit_codes;
        size_t n_exit_codes;
};

struct container {
        char *name;
        char *image;
        enum pull_policy image_pull_policy;
        struct str_list command;
        struct str_list args;
        char *working_dir;
        struct container_port *ports;
        size_t n_ports;
        struct env_var *env;
        size_t n_env;
        struct env_from_source *env_from;
        size_t n_env_from;
        struct resource_requirements resources;
        enum resize_restart resize_cpu, resize_memory; /* resizePolicy */
        struct volume_mount *volume_mounts;
        size_t n_volume_mounts;
        struct probe *liveness_probe;              /* NULL if none */
        struct probe *readiness_probe;             /* NULL if none */
        struct probe *startup_probe;               /* NULL if none */
        struct handler *post_start;                /* lifecycle; NULL if none */
        struct handler *pre_stop;                  /* lifecycle; NULL if none */
        char *stop_signal;                         /* lifecycle.stopSignal, NULL if none */
        char *termination_message_path;            /* default /dev/termination-log */
        char *termination_message_policy;          /* File (default) or FallbackToLogsOnError */
        struct security_context *security_context; /* NULL if none */
        bool stdin_open, stdin_once, tty;
        /* the container's own restartPolicy (ContainerRestartRules, on by
         * default since 1.35): "Always", "OnFailure", "Never"; on an init
         * container "Always" marks a sidecar; NULL: the pod's applies */
        char *restart_policy;
        /* restartPolicyRules, in order (only with restart_policy) */
        struct container_restart_rule *restart_rules;
        size_t n_restart_rules;
        /* ephemeral containers: the container whose process namespace it
         * joins (targetContainerName); NULL if none or not ephemeral */
        char *target_container_name;
        /* api_container_hash of name and image, as upstream annotates
         * `io.kubernetes.container.hash`: a change means restart. */
        uint64_t hash;
};

enum volume_kind {
        VOLUME_OTHER = 0, /* a kind ckubelet does not implement: rejected with FailedMount */
        VOLUME_EMPTY_DIR,
        VOLUME_HOST_PATH,
        VOLUME_CONFIG_MAP,
        VOLUME_SECRET,
        VOLUME_DOWNWARD_API,
        VOLUME_PROJECTED,
};

struct key_to_path {
        char *key;
        char *path;
        bool has_mode;
        int32_t mode;
};

struct volume {
        char *name;
        enum volume_kind kind;
        /* emptyDir */
        char *medium; /* "" or "Memory" */
        bool has_size_limit;
        int64_t size_limit;
        /* hostPath */
        char *host_path;
        char
            *host_path_type; /* "", DirectoryOrCreate, Directory, FileOrCreate, File, Socket, ... */
        /* configMap / secret */
        char *source_name; /* configMap.name or secret.secretName */
        struct key_to_path *items;
        size_t n_items;
        bool has_default_mode;
        int32_t default_mode;
        bool optional;
        /* downwardAPI / projected and anything richer: the raw JSON of the
         * volume source, borrowed from the pod's raw object. */
        json_t *source;
};

enum restart_policy { RESTART_ALWAYS = 0, RESTART_ON_FAILURE, RESTART_NEVER };

enum dns_policy { DNS_CLUSTER_FIRST = 0, DNS_CLUSTER_FIRST_WITH_HOST_NET, DNS_DEFAULT, DNS_NONE };

struct pod_dns_config {
        struct str_list nameservers;
        struct str_list searches;
        struct kv_list options; /* value NULL when absent */
};

struct host_alias {
        char *ip;
        struct str_list hostnames;
};

struct pod_security_context {
        bool has_run_as_user, has_run_as_group, has_run_as_non_root, has_fs_group;
        int64_t run_as_user;
        int64_t run_as_group;
        bool run_as_non_root;
        int64_t fs_group;
        int64_t *supplemental_groups;
        size_t n_supplemental_groups;
        struct kv_list sysctls;
};

enum pod_source { POD_SOURCE_FILE = 0, POD_SOURCE_HTTP, POD_SOURCE_API };

struct pod {
        atomic_int refcount;
        json_t *raw; /* the decoded object (defaults applied), owned */
        /* metadata.managedFields of a pod from the apiserver, as compact
         * JSON, kept out of raw: as a tree it is about 20 KB per pod, half
         * of raw's, and only /pods shows it (pod_raw_copy).  NULL: none */
        char *managed_fields;

        /* metadata */
        char *name;
        char *namespace; /* default "default" */
        char *uid;
        char *resource_version;
        int64_t generation;
        struct kv_list labels;
        struct kv_list annotations;
        char *deletion_timestamp; /* RFC 3339, NULL if not being deleted */
        bool has_deletion_grace_period_seconds;
        int64_t deletion_grace_period_seconds;
        char *creation_timestamp;

        /* spec */
        struct container *containers;
        size_t n_containers;
        struct container *init_containers;
        size_t n_init_containers;
        /* spec.ephemeralContainers (kubectl debug): started once, never
         * restarted, added by the ephemeralcontainers subresource */
        struct container *ephemeral_containers;
        size_t n_ephemeral_containers;
        struct volume *volumes;
        size_t n_volumes;
        enum restart_policy restart_policy;
        int64_t termination_grace_period_seconds; /* default 30 */
        bool has_active_deadline_seconds;
        int64_t active_deadline_seconds;
        enum dns_policy dns_policy;
        struct pod_dns_config *dns_config; /* NULL if none */
        bool host_network, host_pid, host_ipc, share_process_namespace;
        /* spec.hostUsers (default true: the host's user namespace) */
        bool has_host_users, host_users;
        bool enable_service_links; /* default true */
        char *hostname;
        char *hostname_override; /* spec.hostnameOverride (HostnameOverride, on in 1.35) */
        char *subdomain;
        char *node_name;
        char *service_account_name;
        bool has_automount_service_account_token;
        bool automount_service_account_token;
        struct str_list image_pull_secrets;
        struct host_alias *host_aliases;
        size_t n_host_aliases;
        struct pod_security_context security_context;
        char *priority_class_name;
        int32_t priority;
        bool has_priority; /* spec.priority is set (upstream's *int32 not nil) */
        char *runtime_class_name;
        /* spec.overhead (what the RuntimeClass admission put there): added
         * to the pod's requests at admission and to its pod cgroup, and
         * sent as the sandbox's overhead */
        bool has_overhead;
        struct resource_list overhead;
        char *os_name; /* spec.os.name, NULL if not set */
        /* spec.resources names cpu, memory or huge pages (upstream
         * IsPodLevelResourcesSet): pod-level resources, which ckubelet does
         * not implement; admission refuses the pod as upstream does with
         * the PodLevelResources gate off */
        bool pod_level_resources;

        /* where it came from */
        enum pod_source source;
        char *source_path; /* manifest file for POD_SOURCE_FILE */

        /* private: "namespace/name", set by the decoder (see pod_full_name) */
        char *full_name_;
};

/* References. pod_unref(NULL) is a no-op. Thread-safe. */
struct pod *pod_ref(struct pod *pod);
void pod_unref(struct pod *pod);
#define cleanup_pod __attribute__((cleanup(pod_unrefp)))
void pod_unrefp(struct pod **pod);

/* "namespace/name", valid while the pod lives. */
const char *pod_full_name(const struct pod *pod);

/* A new deep copy of pod->raw with its metadata.managedFields put back (the
 * whole object, as the apiserver gave it with the defaults applied). */
json_t *pod_raw_copy(const struct pod *pod);

/* Frees the items of a list (not the list struct itself) and zeroes it. */
void kv_list_release(struct kv_list *l);
void str_list_release(struct str_list *l);
/* Appends copies of key and value. */
void kv_list_add(struct kv_list *l, const char *key, const char *value);

/* Looks up a label/annotation value; NULL if absent. Borrowed. */
const char *kv_list_get(const struct kv_list *l, const char *key);

/* Whether this is a static pod (file or http source, or the
 * kubernetes.io/config.source annotation says so). */
bool pod_is_static(const struct pod *pod);

/* upstream scheduling.SystemCriticalPriority (2 * HighestUserDefinablePriority) */
#define POD_SYSTEM_CRITICAL_PRIORITY 2000000000
/* upstream types.IsCriticalPod: a static or mirror pod, or priority at least
 * system critical. */
bool pod_is_critical(const struct pod *pod);

/* QoS class as upstream computes it (pkg/apis/core/v1/helper/qos):
 * Guaranteed, Burstable or BestEffort. */
enum qos_class { QOS_GUARANTEED = 0, QOS_BURSTABLE, QOS_BEST_EFFORT };
enum qos_class pod_qos_class(const struct pod *pod);
const char *qos_class_name(enum qos_class q);

/* Finds a container (app, then init, then ephemeral) by name; NULL if none.
 * Borrowed. */
const struct container *pod_find_container(const struct pod *pod, const char *name);
/* Finds an ephemeral container by name; NULL if none. Borrowed. */
const struct container *pod_find_ephemeral_container(const struct pod *pod, const char *name);

/* upstream fieldpath.SplitMaybeSubscriptedPath: "metadata.labels['key']"
 * gives *path "metadata.labels" and *subscript "key" (new strings) and true;
 * a field path without a subscript gives false and sets nothing. */
bool pod_split_field_path(const char *field_path, char **path, char **subscript);

/* upstream kubecontainer.HashContainer, bit for bit: FNV-1a 32 of the
 * spew dump of json.Marshal({"image": image, "name": name}).  Only the name
 * and the image count: they are the only container fields the apiserver
 * lets change, besides resources, which are resized in place. */
uint64_t api_container_hash(const char *name, const char *image);

/* True if the container is a sidecar (init container with restartPolicy Always). */
bool container_is_sidecar(const struct container *c);

/* upstream's effective request (or limit) of one resource (component-helpers
 * PodRequests / PodLimits, without the overhead): the app containers and
 * sidecars summed, against each init container with the sidecars before it,
 * the larger; `of` reads the amount from a list, saturating sums. */
/* The huge page resource names the pod's containers, init containers and
 * overhead request, each once (borrowed from the pod), at most room. */
size_t pod_hugepage_names(const struct pod *pod, const char **names, size_t room);

int64_t pod_resource_effective(const struct pod *pod, bool limits,
                               int64_t (*of)(const struct resource_list *l, const char *name),
                               const char *name);

/* upstream podutil.ContainerShouldRestart: whether an exit with exit_code
 * restarts the container: its first restartPolicyRules entry whose exit
 * codes match (action Restart), else its own restartPolicy, else the pod's. */
bool container_should_restart(const struct container *c, const struct pod *pod, int32_t exit_code);

#endif
