/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internals of src/dockershim shared by its files and the unit tests: the
 * shim's state and the CRI methods, each a grpc_method_fn (request and
 * answer are protobuf bytes).
 */
#ifndef CK_DOCKERSHIM_INTERNAL_H
#define CK_DOCKERSHIM_INTERNAL_H

#include "cri.pb-c.h"
#include "dockershim/dockershim.h"
#include "libdocker/docker.h"

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct grpc_server;
struct grpc_method;

struct dockershim_method; /* a method with its request's descriptor (dockershim.c) */

struct dockershim {
        struct docker_client *docker;
        struct grpc_server *server;
        struct grpc_method *methods;          /* the server's table */
        struct dockershim_method *dispatched; /* what its entries call */
        char *listen_path;
        char *pod_infra_image;
        char *cgroup_driver;   /* the engine's: "cgroupfs" or "systemd" */
        char *docker_root_dir; /* the engine's data root: the image filesystem */
        char *root_dir;        /* the shim's: sandbox/ (checkpoints), network/ (CNI results) */
        char *cni_conf_dir, *cni_bin_dirs;
        bool restrict_oom_score_adj; /* never below the shim's own (containerd's option) */
        int own_oom_score_adj;
        struct streaming_server *streaming; /* Exec, Attach, PortForward (streaming.c) */
        char *proc_root; /* "/proc" (NULL: the same): a sandbox's network usage */
};

/* The server's method table (*n entries, freed by the caller), each entry
 * the dispatcher of one CRI method: it refuses a request with a string
 * that is not valid UTF-8, then calls the method.  Fills s->dispatched
 * (freed by dockershim_stop, or by the caller of a shim it made). */
struct grpc_method *dockershim_methods(struct dockershim *s, size_t *n);

/* The OOM score adjustment to give a container: asked, or the shim's own
 * when restricted and asked is lower. */
int shim_oom_score_adj(const struct dockershim *s, int64_t asked);

/* The gRPC status of a failed Docker call (enum docker_error_code):
 * the engine away is UNAVAILABLE, a deadline DEADLINE_EXCEEDED, a 404
 * NOT_FOUND, a 400 INVALID_ARGUMENT, anything else UNKNOWN. */
int dockershim_grpc_code(const ck_error_t err);
/* Gives *err (a failed Docker call's) its gRPC status; returns -1. */
int dockershim_fail(ck_error_t *err);

/* Packs m into *out (malloc'ed) and *len; returns 0. */
int dockershim_pack(const ProtobufCMessage *m, uint8_t **out, size_t *len);

/* Runtime (runtime.c) */
int dockershim_version(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                       uint8_t **resp, size_t *resp_len, ck_error_t *err);
int dockershim_status(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms, uint8_t **resp,
                      size_t *resp_len, ck_error_t *err);
int dockershim_runtime_config(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                              uint8_t **resp, size_t *resp_len, ck_error_t *err);
int dockershim_update_runtime_config(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                                     uint8_t **resp, size_t *resp_len, ck_error_t *err);

/* Sandboxes (sandbox.c) */
int dockershim_run_pod_sandbox(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                               uint8_t **resp, size_t *resp_len, ck_error_t *err);
int dockershim_stop_pod_sandbox(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                                uint8_t **resp, size_t *resp_len, ck_error_t *err);
int dockershim_remove_pod_sandbox(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                                  uint8_t **resp, size_t *resp_len, ck_error_t *err);
int dockershim_pod_sandbox_status(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                                  uint8_t **resp, size_t *resp_len, ck_error_t *err);
int dockershim_list_pod_sandbox(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                                uint8_t **resp, size_t *resp_len, ck_error_t *err);

/* The engine's list filters of one type of ours ("podsandbox",
 * "container"), an ID and a CRI label selector. */
json_t *shim_filters(const char *type, const char *id, size_t n_sel, char **keys, char **values);

/* Containers (container.c) */
int dockershim_create_container(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                                uint8_t **resp, size_t *resp_len, ck_error_t *err);
int dockershim_start_container(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                               uint8_t **resp, size_t *resp_len, ck_error_t *err);
int dockershim_stop_container(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                              uint8_t **resp, size_t *resp_len, ck_error_t *err);
int dockershim_remove_container(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                                uint8_t **resp, size_t *resp_len, ck_error_t *err);
int dockershim_container_status(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                                uint8_t **resp, size_t *resp_len, ck_error_t *err);
int dockershim_list_containers(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                               uint8_t **resp, size_t *resp_len, ck_error_t *err);
int dockershim_update_container_resources(void *ctx, const uint8_t *req, size_t len,
                                          int64_t timeout_ms, uint8_t **resp, size_t *resp_len,
                                          ck_error_t *err);
int dockershim_reopen_container_log(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                                    uint8_t **resp, size_t *resp_len, ck_error_t *err);
/* The engine's filters of a CRI container filter (ListContainers' and
 * ListContainerStats', whose label selectors are maps of two types: sel
 * holds n_sel map entries of either): the shim's containers, by ID,
 * sandbox and labels (a new object). */
json_t *shim_container_filters(const char *id, const char *sandbox_id, void *const *sel,
                               size_t n_sel);
/* The container must run, as cri-dockerd's checkContainerStatus: 0 (with
 * its Config.Tty in *tty, may be NULL), or -1: NotFound, or UNKNOWN
 * "container not running (<id>)".  ExecSync, Exec, Attach. */
int shim_running_container(struct dockershim *s, const char *id, bool *tty, ck_error_t *err);
/* Waits (up to a second) for an exec whose stream ended to be reported
 * exited; *st its state. */
int shim_exec_wait_exit(struct dockershim *s, const char *exec_id, struct docker_exec_state *st,
                        ck_error_t *err);

/* Stats (stats.c) */
int dockershim_container_stats(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                               uint8_t **resp, size_t *resp_len, ck_error_t *err);
int dockershim_list_container_stats(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                                    uint8_t **resp, size_t *resp_len, ck_error_t *err);
int dockershim_pod_sandbox_stats(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                                 uint8_t **resp, size_t *resp_len, ck_error_t *err);
int dockershim_list_pod_sandbox_stats(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                                      uint8_t **resp, size_t *resp_len, ck_error_t *err);

/* streaming.c: the streaming server on bind_addr ("host[:port]"), and the
 * CRI calls that hand out its URLs. */
int dockershim_streaming_start(struct dockershim *s, const char *bind_addr, int64_t idle_ms,
                               ck_error_t *err);
int dockershim_exec(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms, uint8_t **resp,
                    size_t *resp_len, ck_error_t *err);
int dockershim_attach(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms, uint8_t **resp,
                      size_t *resp_len, ck_error_t *err);
int dockershim_port_forward(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                            uint8_t **resp, size_t *resp_len, ck_error_t *err);
int dockershim_exec_sync(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                         uint8_t **resp, size_t *resp_len, ck_error_t *err);
/* Removes a container and its CRI log link; gone already: 0. */
int shim_remove_container(struct dockershim *s, const char *id, ck_error_t *err);

/* Images (images.c) */
int dockershim_list_images(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                           uint8_t **resp, size_t *resp_len, ck_error_t *err);
int dockershim_image_status(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                            uint8_t **resp, size_t *resp_len, ck_error_t *err);
int dockershim_pull_image(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                          uint8_t **resp, size_t *resp_len, ck_error_t *err);
int dockershim_remove_image(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                            uint8_t **resp, size_t *resp_len, ck_error_t *err);
int dockershim_image_fs_info(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                             uint8_t **resp, size_t *resp_len, ck_error_t *err);

/* The X-Registry-Auth value of a CRI AuthConfig's fields (base64url of
 * the engine's auth JSON, padded); the CRI "auth" field (base64 of
 * user:password) fills username and password when they are empty.  NULL
 * with err when auth does not decode. */
char *dockershim_registry_auth(const char *username, const char *password, const char *auth,
                               const char *server_address, const char *identity_token,
                               const char *registry_token, ck_error_t *err);

/* ---- names and labels (naming.c): pure, fuzzed -------------------------- */

#define SHIM_LABEL_TYPE "io.kubernetes.docker.type"
#define SHIM_TYPE_SANDBOX "podsandbox"
#define SHIM_TYPE_CONTAINER "container"
#define SHIM_LABEL_LOGPATH "io.kubernetes.container.logpath"
#define SHIM_LABEL_SANDBOX_ID "io.kubernetes.sandbox.id"
#define SHIM_LABEL_CONTAINER_NAME "io.kubernetes.container.name"
#define SHIM_ANNOTATION_PREFIX "annotation."

char *shim_sandbox_name(const char *pod, const char *ns, const char *uid, uint32_t attempt);
char *shim_container_name(const char *container, const char *pod, const char *ns, const char *uid,
                          uint32_t attempt);
/* name with cri-dockerd's random suffix ("_%08x"): for a name the engine
 * holds for a container it no longer knows. */
char *shim_name_randomized(const char *name);
/* The ID in the engine's name-conflict message ("Conflict. ... is already
 * in use by container \"<id>\""), a new string; NULL for another message. */
char *shim_conflicting_id(const char *message);
/* docker_container_create with cri-dockerd's recovery from a name in use
 * (recoverFromCreationConflictIfNeeded): the container holding it is
 * removed (not forced) and the create still fails, for the kubelet's next
 * try; when the engine does not know that container (its stale name
 * reservation), the create is tried once more under the name with a
 * random suffix (which shim_parse_name takes). */
int shim_container_create(struct dockershim *s, const char *name, json_t *cfg, char **id,
                          ck_error_t *err);

/* A parsed name: container is "POD" for a sandbox. */
struct shim_name {
        char *container, *pod, *ns, *uid;
        uint32_t attempt;
};
/* 0, or -1 when docker_name (with or without its '/') is not one of ours. */
int shim_parse_name(const char *docker_name, struct shim_name *out);
void shim_name_clear(struct shim_name *n);

/* The engine's container id when it is one of the shim's of that type
 * (SHIM_TYPE_SANDBOX or SHIM_TYPE_CONTAINER): *info and *name filled (the
 * caller clears both).  Else -1: the engine's error as a gRPC status, or
 * NOT_FOUND "no such <what>: <id> (<name>)" for another container. */
int shim_inspect_own(struct dockershim *s, const char *id, const char *type, const char *what,
                     struct docker_container *info, struct shim_name *name, ck_error_t *err);

struct shim_kv {
        const char *key, *value;
};
/* The engine's labels of CRI labels and annotations (a new object). */
json_t *shim_make_labels(const struct shim_kv *labels, size_t n_labels,
                         const struct shim_kv *annotations, size_t n_annotations);

/* A CRI map (labels or annotations) for an answer: entries of whatever
 * map-entry message the descriptor names (they all are {key, value}),
 * borrowing their strings. */
struct shim_map_entry {
        ProtobufCMessage base;
        char *key, *value;
};
struct shim_map {
        struct shim_map_entry **entries; /* cast to the message's entry type */
        size_t n;
        struct shim_map_entry *storage;
};
/* The CRI labels and annotations of the engine's labels, the shim's own
 * left out (strings borrowed from docker_labels). */
void shim_split_labels(const json_t *docker_labels, const ProtobufCMessageDescriptor *label_desc,
                       const ProtobufCMessageDescriptor *annotation_desc, struct shim_map *labels,
                       struct shim_map *annotations);
void shim_map_clear(struct shim_map *m);

/* ---- stats (stats.c) ---------------------------------------------------- */

/* One running container's stats: the CRI message and what it is made of
 * (its strings borrowed from the engine's list that shim_container_stats
 * holds). */
struct shim_container_stat {
        Runtime__V1__ContainerStats stats;
        Runtime__V1__ContainerAttributes attributes;
        Runtime__V1__ContainerMetadata metadata;
        Runtime__V1__CpuUsage cpu;
        Runtime__V1__MemoryUsage memory;
        Runtime__V1__UInt64Value cpu_ns, mem_usage, mem_working_set;
        struct shim_name name;
        struct shim_map labels, annotations;
        struct docker_stats raw; /* the engine's figures (a sandbox's sums) */
};
/* The stats of the running containers a filter names: stats[i] is
 * &items[i].stats, ready for an answer.  Owns everything; cleared with
 * shim_container_stats_clear. */
struct shim_container_stats {
        size_t n;
        Runtime__V1__ContainerStats **stats;
        struct shim_container_stat *items;
        struct docker_container_summary *list; /* the engine's list */
        size_t n_list;
};
/* The engine's one-shot stats of each of the shim's running containers
 * that id (an ID or prefix), sandbox_id and the label selector (as
 * shim_container_filters takes it) name; any may be NULL.  A container
 * whose stats fail (gone meanwhile) is left out.  -1 when the engine's
 * list fails (err its gRPC status). */
int shim_container_stats_collect(struct dockershim *s, const char *id, const char *sandbox_id,
                                 void *const *sel, size_t n_sel, struct shim_container_stats *out,
                                 ck_error_t *err);
void shim_container_stats_clear(struct shim_container_stats *c);

/* One interface of /proc/<pid>/net/dev. */
struct shim_netdev {
        char *name;
        uint64_t rx_bytes, rx_errors, tx_bytes, tx_errors;
};
/* The interfaces of a /proc/<pid>/net/dev text but "lo", in order: lines
 * without a ':' (the two header lines) and lines that are not a name, a
 * ':' and 16 counters are skipped.  *out: a new array of *n entries
 * (shim_netdevs_free).  Pure, fuzzed. */
void shim_parse_net_dev(const char *text, struct shim_netdev **out, size_t *n);
void shim_netdevs_free(struct shim_netdev *v, size_t n);

/* ---- sandbox checkpoints (checkpoint.c): cri-dockerd's files ------------- */

struct shim_port {
        char *protocol; /* "tcp", "udp", "sctp" */
        int32_t container_port, host_port;
        char *host_ip; /* "" when none */
};
struct shim_checkpoint {
        char *name, *ns; /* the pod's */
        bool host_network;
        bool ports_present; /* port_mappings written (even empty) */
        struct shim_port *ports;
        size_t n_ports;
};
void shim_checkpoint_clear(struct shim_checkpoint *c);
/* cri-dockerd's checksum of c's data. */
uint32_t shim_checkpoint_checksum(const struct shim_checkpoint *c);
/* The file's text (a new string). */
char *shim_checkpoint_encode(const struct shim_checkpoint *c);
/* The file's text decoded, its checksum checked ("checkpoint is
 * corrupted: ..."). */
int shim_checkpoint_decode(const char *buf, size_t len, struct shim_checkpoint *out,
                           ck_error_t *err);
/* <dir>/<id>: written atomically (mode 0600), read (a missing file: err
 * status ENOENT), removed (missing is fine), listed (names not starting
 * with '.'). */
int shim_checkpoint_write(const char *dir, const char *id, const struct shim_checkpoint *c,
                          ck_error_t *err);
int shim_checkpoint_read(const char *dir, const char *id, struct shim_checkpoint *out,
                         ck_error_t *err);
int shim_checkpoint_remove(const char *dir, const char *id, ck_error_t *err);
int shim_checkpoint_list(const char *dir, char ***ids, size_t *n, ck_error_t *err);

/* ---- pod networks (cni.c) ------------------------------------------------ */

struct shim_cni;
/* The first usable configuration of conf_dir (bin_dirs: ':' or ','
 * separated); "no valid networks found in <dir>: <why the last one was
 * not>" when none is. */
int shim_cni_load(const char *conf_dir, const char *bin_dirs, struct shim_cni **out,
                  ck_error_t *err);
void shim_cni_free(struct shim_cni *n);
const char *shim_cni_name(const struct shim_cni *n);

/* The interface CNI makes in a pod (CNI_IFNAME): its default one. */
#define SHIM_CNI_IFNAME "eth0"

struct shim_cni_args {
        const char *container_id; /* the sandbox's */
        const char *netns;        /* its network namespace's path */
        const char *ifname;       /* NULL: SHIM_CNI_IFNAME */
        const char *pod_name, *pod_ns;
        const struct shim_port *ports; /* the portMappings capability */
        size_t n_ports;
};
/* ADD: "lo" up, then the network's plugins in order; *ip the pod's
 * address, *result the final result (JSON, for the DEL). */
int shim_cni_add(const struct shim_cni *n, const struct shim_cni_args *a, int64_t timeout_ms,
                 char **ip, char **result, ck_error_t *err);
/* DEL: the plugins in reverse (result: the ADD's, or NULL), then lo. */
int shim_cni_del(const struct shim_cni *n, const struct shim_cni_args *a, const char *result,
                 int64_t timeout_ms, ck_error_t *err);

#endif
