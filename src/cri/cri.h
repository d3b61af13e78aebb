/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CRI client (runtime.v1 RuntimeService and ImageService) over gRPC on a unix
 * socket.  Messages are the protobuf-c types generated from proto/cri.proto
 * (package runtime.v1, so the C names are Runtime__V1__Xxx).
 *
 * Threading: a `struct cri_client` belongs to one thread at a time (each
 * worker owns its own connection; no locks inside).
 *
 * Every call has a deadline (the client's timeout unless stated) and
 * reconnects transparently when the runtime restarted (the call that found the
 * connection broken is retried once on a fresh connection when it is safe:
 * before any request byte was accepted by the runtime).
 *
 * Errors: < 0 with *err filled; message "CRI <Method>: rpc error <code>: <msg>"
 * (gRPC status code in err->code) or "CRI <Method>: <transport cause>".
 * Responses (`**out`) are new protobuf-c messages owned by the caller: free
 * with the matching runtime__v1__xxx_response__free_unpacked(out, NULL).
 */
#ifndef CK_CRI_CRI_H
#define CK_CRI_CRI_H

#include "cri.pb-c.h"
#include "util/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* gRPC status codes used by callers. */
enum {
        CRI_CODE_OK = 0,
        CRI_CODE_DEADLINE_EXCEEDED = 4,
        CRI_CODE_NOT_FOUND = 5,
        CRI_CODE_UNAVAILABLE = 14
};

struct cri_client;

/* endpoint: "unix:///path/to/sock" or "/path/to/sock".  Does not connect yet.
 * timeout_ms: the default deadline of every call (runtimeRequestTimeout). */
struct cri_client *cri_client_new(const char *endpoint, int64_t timeout_ms);
/* Validates an endpoint ("unix:///path" or "/path"; tcp:// and npipe:// are
 * errors) and sets *path to a new string with the socket path.  A client made
 * from an invalid endpoint fails every call with this error. */
int cri_parse_endpoint(const char *endpoint, char **path, ck_error_t *err);
void cri_client_free(struct cri_client *c);
#define cleanup_cri_client __attribute__((cleanup(cri_client_freep)))
void cri_client_freep(struct cri_client **c);

/* Total time this client has spent inside calls (microseconds): the
 * kubelet subtracts it from a sync's wall time to see its own share. */
int64_t cri_client_busy_us(const struct cri_client *c);

/* How many calls this client made that may change a pod's runtime state
 * (run, stop, remove a sandbox; create, start, update, stop, remove a
 * container), failed ones too: a caller compares two readings to know
 * whether a status it read before is still what it did leave. */
uint64_t cri_client_changes(const struct cri_client *c);

/* RuntimeService */
int cri_version(struct cri_client *c, Runtime__V1__VersionResponse **out, ck_error_t *err);
int cri_status(struct cri_client *c, Runtime__V1__StatusResponse **out, ck_error_t *err);
/* The runtime's configuration (its cgroup driver); a runtime without the
 * call (containerd 1.6) answers with err->code GRPC_UNIMPLEMENTED. */
int cri_runtime_config(struct cri_client *c, Runtime__V1__RuntimeConfigResponse **out,
                       ck_error_t *err);
/* Status with verbose: the runtime's info map too (containerd: "config"). */
int cri_status_verbose(struct cri_client *c, Runtime__V1__StatusResponse **out, ck_error_t *err);
int cri_run_pod_sandbox(struct cri_client *c, const Runtime__V1__PodSandboxConfig *config,
                        const char *runtime_handler, char **sandbox_id, ck_error_t *err);
int cri_stop_pod_sandbox(struct cri_client *c, const char *sandbox_id, ck_error_t *err);
int cri_remove_pod_sandbox(struct cri_client *c, const char *sandbox_id, ck_error_t *err);
int cri_pod_sandbox_status(struct cri_client *c, const char *sandbox_id,
                           Runtime__V1__PodSandboxStatusResponse **out, ck_error_t *err);
/* filter may be NULL */
int cri_list_pod_sandbox(struct cri_client *c, const Runtime__V1__PodSandboxFilter *filter,
                         Runtime__V1__ListPodSandboxResponse **out, ck_error_t *err);
int cri_create_container(struct cri_client *c, const char *sandbox_id,
                         const Runtime__V1__ContainerConfig *config,
                         const Runtime__V1__PodSandboxConfig *sandbox_config, char **container_id,
                         ck_error_t *err);
int cri_start_container(struct cri_client *c, const char *container_id, ck_error_t *err);
/* timeout_s: grace period; the call's deadline is extended by it. */
int cri_stop_container(struct cri_client *c, const char *container_id, int64_t timeout_s,
                       ck_error_t *err);
int cri_remove_container(struct cri_client *c, const char *container_id, ck_error_t *err);
/* filter may be NULL */
int cri_list_containers(struct cri_client *c, const Runtime__V1__ContainerFilter *filter,
                        Runtime__V1__ListContainersResponse **out, ck_error_t *err);
int cri_container_status(struct cri_client *c, const char *container_id,
                         Runtime__V1__ContainerStatusResponse **out, ck_error_t *err);
/* cmd: argv, NULL-terminated.  timeout_s: 0 = no timeout (the call's deadline
 * is then the client's), else the deadline is extended by it. */
int cri_exec_sync(struct cri_client *c, const char *container_id, char *const *cmd,
                  int64_t timeout_s, Runtime__V1__ExecSyncResponse **out, ck_error_t *err);
/* Applies new cpu and memory settings to a running container (in-place
 * resize); resources is borrowed. */
int cri_update_container_resources(struct cri_client *c, const char *container_id,
                                   const Runtime__V1__LinuxContainerResources *resources,
                                   ck_error_t *err);
/* Asks the runtime to reopen the container's stdout/stderr log file (after
 * the kubelet rotated it). */
int cri_reopen_container_log(struct cri_client *c, const char *container_id, ck_error_t *err);

/* Streaming.  The runtime prepares a session on its streaming server and
 * answers with its URL, which the kubelet's server redirects or proxies
 * kubectl exec / attach / port-forward to.  *url is a new string (free());
 * a response without a URL is an error (as upstream).  tty, in, out, errs:
 * ExecRequest / AttachRequest tty, stdin, stdout, stderr, sent as given
 * (upstream's client does not check them either; the API asks for one
 * stream at least and no stderr with a tty). */
/* cmd: argv, NULL-terminated (as cri_exec_sync). */
int cri_exec(struct cri_client *c, const char *container_id, char *const *cmd, bool tty, bool in,
             bool out, bool errs, char **url, ck_error_t *err);
int cri_attach(struct cri_client *c, const char *container_id, bool tty, bool in, bool out,
               bool errs, char **url, ck_error_t *err);
/* ports: n_ports container ports of the sandbox (ports may be NULL when 0). */
int cri_port_forward(struct cri_client *c, const char *sandbox_id, const int32_t *ports,
                     size_t n_ports, char **url, ck_error_t *err);

/* Stats (the Summary API, /metrics/resource).  filter may be NULL (every
 * running container / every sandbox).  A runtime without the call answers
 * with err->code GRPC_UNIMPLEMENTED (12). */
int cri_list_container_stats(struct cri_client *c, const Runtime__V1__ContainerStatsFilter *filter,
                             Runtime__V1__ListContainerStatsResponse **out, ck_error_t *err);
int cri_list_pod_sandbox_stats(struct cri_client *c,
                               const Runtime__V1__PodSandboxStatsFilter *filter,
                               Runtime__V1__ListPodSandboxStatsResponse **out, ck_error_t *err);

/* ImageService */
/* auth may be NULL; sandbox_config may be NULL. image_ref: the resolved ref.
 * No deadline (as upstream: pulls of large images take long). */
int cri_pull_image(struct cri_client *c, const char *image, const Runtime__V1__AuthConfig *auth,
                   const Runtime__V1__PodSandboxConfig *sandbox_config, char **image_ref,
                   ck_error_t *err);
/* *out->image is NULL when the image is not present. */
int cri_image_status(struct cri_client *c, const char *image,
                     Runtime__V1__ImageStatusResponse **out, ck_error_t *err);
int cri_list_images(struct cri_client *c, Runtime__V1__ListImagesResponse **out, ck_error_t *err);
/* Removes an image (by ID, name or digest).  An image that is not present
 * is no error (CRI: RemoveImage is idempotent). */
int cri_remove_image(struct cri_client *c, const char *image, ck_error_t *err);
/* The image (and container) filesystems' usage, as the runtime sees them. */
int cri_image_fs_info(struct cri_client *c, Runtime__V1__ImageFsInfoResponse **out,
                      ck_error_t *err);

#endif
