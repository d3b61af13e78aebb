/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CRI client: runtime.v1 RuntimeService and ImageService calls packed
 * with protobuf-c and carried by the unary gRPC transport (grpc.h).
 *
 * Deadlines and response checks follow the upstream kubelet's CRI client
 * (k8s.io/cri-client remote_runtime.go / remote_image.go): every call has the
 * client's timeout, StopContainer and ExecSync add their own timeout to it,
 * and responses missing fields the kubelet relies on are errors.
 */
#include "cri/cri.h"
#include "cri/cri_internal.h"
#include "grpc/grpc.h"
#include "metrics/kubelet_metrics.h"
#include "util/fsutil.h"
#include "util/cleanup.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <string.h>
#include <time.h>

struct cri_client {
        struct grpc_conn *conn; /* NULL when the endpoint is invalid */
        char *endpoint_error;   /* why, then: every call fails with it */
        int64_t timeout_ms;
        int64_t busy_us;  /* time spent inside calls, for cri_client_busy_us() */
        uint64_t changes; /* calls that may change a pod, for cri_client_changes() */
};

static const char runtime_service[] = "RuntimeService";
static const char image_service[] = "ImageService";

int cri_parse_endpoint(const char *endpoint, char **path, ck_error_t *err)
{
        static const char unix_scheme[] = "unix://";
        const char *p = endpoint;
        if (strncmp(endpoint, unix_scheme, strlen(unix_scheme)) == 0) {
                p = endpoint + strlen(unix_scheme);
        } else if (strstr(endpoint, "://") != NULL) {
                return ck_error_make(err, 0,
                                     "unsupported CRI endpoint `%s`: only unix sockets "
                                     "(unix:///path) are supported",
                                     endpoint);
        }
        if (p[0] != '/')
                return ck_error_make(
                    err, 0, "invalid CRI endpoint `%s`: expected unix:///absolute/path", endpoint);
        *path = xstrdup(p);
        return 0;
}

struct cri_client *cri_client_new(const char *endpoint, int64_t timeout_ms)
{
        struct cri_client *c = xcalloc(1, sizeof(*c));
        c->timeout_ms = timeout_ms;
        cleanup_error ck_error_t err = NULL;
        cleanup_free char *path = NULL;
        if (cri_parse_endpoint(endpoint, &path, &err) < 0)
                c->endpoint_error = xstrdup(ck_error_msg(err));
        else
                c->conn = grpc_conn_new(path);
        return c;
}

void cri_client_free(struct cri_client *c)
{
        if (c == NULL)
                return;
        grpc_conn_free(c->conn);
        free(c->endpoint_error);
        free(c);
}

void cri_client_freep(struct cri_client **c)
{
        cri_client_free(*c);
        *c = NULL;
}

/* One call (cri_internal.h). */
int cri__call(struct cri_client *c, const char *service, const char *method,
              const ProtobufCMessage *req, const ProtobufCMessageDescriptor *resp_desc,
              int64_t extra_ms, ProtobufCMessage **out, ck_error_t *err)
{
        if (c->conn == NULL)
                return ck_error_make(err, 0, "CRI %s: %s", method, c->endpoint_error);

        int64_t start = fs_now_mono_us();
        size_t req_len = protobuf_c_message_get_packed_size(req);
        cleanup_free uint8_t *req_buf = xmalloc(req_len > 0 ? req_len : 1);
        protobuf_c_message_pack(req, req_buf);
        cleanup_free char *path = xasprintf("/runtime.v1.%s/%s", service, method);
        int64_t timeout_ms =
            c->timeout_ms > 0 && extra_ms != NO_DEADLINE ? c->timeout_ms + extra_ms : 0;

        cleanup_free uint8_t *resp = NULL;
        size_t resp_len = 0;
        int ret = grpc_unary(c->conn, path, req_buf, req_len, timeout_ms, &resp, &resp_len, err);
        c->busy_us += fs_now_mono_us() - start;
        double ms = (double)(fs_now_mono_us() - start) / 1000.0;
        kmetrics_runtime_operation(method, ms / 1000.0, ret < 0);
        if (ret < 0) {
                ck_error_wrap(err, "CRI %s", method);
                LOG_INFO(5, "CRI call failed", "method=\"%s\" duration=\"%.3fms\" err=\"%s\"",
                         method, ms, err ? ck_error_msg(*err) : "");
                return -1;
        }
        LOG_INFO(5, "CRI call", "method=\"%s\" duration=\"%.3fms\"", method, ms);

        *out = protobuf_c_message_unpack(resp_desc, NULL, resp_len, resp);
        if (*out == NULL)
                return ck_error_make_code(
                    err, GRPC_INTERNAL, "CRI %s: rpc error %d: cannot decode the %zu-byte response",
                    method, GRPC_INTERNAL, resp_len);
        return 0;
}

/* A response that lacks what the kubelet needs (the upstream client's checks). */
static int invalid_response(ck_error_t *err, const char *method, const char *what)
{
        return ck_error_make_code(err, GRPC_INTERNAL, "CRI %s: %s", method, what);
}

/* ---- RuntimeService ---- */

int cri_version(struct cri_client *c, Runtime__V1__VersionResponse **out, ck_error_t *err)
{
        /* The version the upstream kubelet sends (kuberuntime's kubeRuntimeAPIVersion);
         * runtimes answer with the same string in VersionResponse.version. */
        Runtime__V1__VersionRequest req = RUNTIME__V1__VERSION_REQUEST__INIT;
        req.version = "0.1.0";
        return CALL(c, runtime_service, "Version", req, version_response, 0, out, err);
}

int cri_status(struct cri_client *c, Runtime__V1__StatusResponse **out, ck_error_t *err)
{
        Runtime__V1__StatusRequest req = RUNTIME__V1__STATUS_REQUEST__INIT;
        return CALL(c, runtime_service, "Status", req, status_response, 0, out, err);
}

int cri_status_verbose(struct cri_client *c, Runtime__V1__StatusResponse **out, ck_error_t *err)
{
        Runtime__V1__StatusRequest req = RUNTIME__V1__STATUS_REQUEST__INIT;
        req.verbose = true;
        return CALL(c, runtime_service, "Status", req, status_response, 0, out, err);
}

int cri_runtime_config(struct cri_client *c, Runtime__V1__RuntimeConfigResponse **out,
                       ck_error_t *err)
{
        Runtime__V1__RuntimeConfigRequest req = RUNTIME__V1__RUNTIME_CONFIG_REQUEST__INIT;
        return CALL(c, runtime_service, "RuntimeConfig", req, runtime_config_response, 0, out, err);
}

int cri_run_pod_sandbox(struct cri_client *c, const Runtime__V1__PodSandboxConfig *config,
                        const char *runtime_handler, char **sandbox_id, ck_error_t *err)
{
        Runtime__V1__RunPodSandboxRequest req = RUNTIME__V1__RUN_POD_SANDBOX_REQUEST__INIT;
        req.config = (Runtime__V1__PodSandboxConfig *)config;
        if (runtime_handler)
                req.runtime_handler = (char *)runtime_handler;
        Runtime__V1__RunPodSandboxResponse *resp = NULL;
        c->changes++;
        if (CALL(c, runtime_service, "RunPodSandbox", req, run_pod_sandbox_response, 0, &resp,
                 err) < 0)
                return -1;
        int ret = 0;
        if (resp->pod_sandbox_id == NULL || resp->pod_sandbox_id[0] == '\0')
                ret = invalid_response(err, "RunPodSandbox", "PodSandboxId is not set");
        else
                *sandbox_id = xstrdup(resp->pod_sandbox_id);
        FREE_MSG(resp);
        return ret;
}

int cri_stop_pod_sandbox(struct cri_client *c, const char *sandbox_id, ck_error_t *err)
{
        Runtime__V1__StopPodSandboxRequest req = RUNTIME__V1__STOP_POD_SANDBOX_REQUEST__INIT;
        req.pod_sandbox_id = (char *)sandbox_id;
        Runtime__V1__StopPodSandboxResponse *resp = NULL;
        c->changes++;
        if (CALL(c, runtime_service, "StopPodSandbox", req, stop_pod_sandbox_response, 0, &resp,
                 err) < 0)
                return -1;
        FREE_MSG(resp);
        return 0;
}

int cri_remove_pod_sandbox(struct cri_client *c, const char *sandbox_id, ck_error_t *err)
{
        Runtime__V1__RemovePodSandboxRequest req = RUNTIME__V1__REMOVE_POD_SANDBOX_REQUEST__INIT;
        req.pod_sandbox_id = (char *)sandbox_id;
        Runtime__V1__RemovePodSandboxResponse *resp = NULL;
        c->changes++;
        if (CALL(c, runtime_service, "RemovePodSandbox", req, remove_pod_sandbox_response, 0, &resp,
                 err) < 0)
                return -1;
        FREE_MSG(resp);
        return 0;
}

static const char *check_sandbox_status(const Runtime__V1__PodSandboxStatus *s)
{
        if (s->id == NULL || s->id[0] == '\0')
                return "status.Id is not set";
        if (s->metadata == NULL)
                return "status.Metadata is not set";
        const Runtime__V1__PodSandboxMetadata *m = s->metadata;
        if (!m->name || !m->name[0] || !m->namespace_ || !m->namespace_[0] || !m->uid || !m->uid[0])
                return "metadata.Name, metadata.Namespace or metadata.Uid is not in metadata";
        if (s->created_at == 0)
                return "status.CreatedAt is not set";
        return NULL;
}

int cri_pod_sandbox_status(struct cri_client *c, const char *sandbox_id,
                           Runtime__V1__PodSandboxStatusResponse **out, ck_error_t *err)
{
        Runtime__V1__PodSandboxStatusRequest req = RUNTIME__V1__POD_SANDBOX_STATUS_REQUEST__INIT;
        req.pod_sandbox_id = (char *)sandbox_id;
        Runtime__V1__PodSandboxStatusResponse *resp = NULL;
        if (CALL(c, runtime_service, "PodSandboxStatus", req, pod_sandbox_status_response, 0, &resp,
                 err) < 0)
                return -1;
        const char *bad = resp->status ? check_sandbox_status(resp->status) : NULL;
        if (bad) {
                FREE_MSG(resp);
                return invalid_response(err, "PodSandboxStatus", bad);
        }
        *out = resp;
        return 0;
}

int cri_list_pod_sandbox(struct cri_client *c, const Runtime__V1__PodSandboxFilter *filter,
                         Runtime__V1__ListPodSandboxResponse **out, ck_error_t *err)
{
        Runtime__V1__ListPodSandboxRequest req = RUNTIME__V1__LIST_POD_SANDBOX_REQUEST__INIT;
        req.filter = (Runtime__V1__PodSandboxFilter *)filter;
        return CALL(c, runtime_service, "ListPodSandbox", req, list_pod_sandbox_response, 0, out,
                    err);
}

int cri_create_container(struct cri_client *c, const char *sandbox_id,
                         const Runtime__V1__ContainerConfig *config,
                         const Runtime__V1__PodSandboxConfig *sandbox_config, char **container_id,
                         ck_error_t *err)
{
        Runtime__V1__CreateContainerRequest req = RUNTIME__V1__CREATE_CONTAINER_REQUEST__INIT;
        req.pod_sandbox_id = (char *)sandbox_id;
        req.config = (Runtime__V1__ContainerConfig *)config;
        req.sandbox_config = (Runtime__V1__PodSandboxConfig *)sandbox_config;
        Runtime__V1__CreateContainerResponse *resp = NULL;
        c->changes++;
        if (CALL(c, runtime_service, "CreateContainer", req, create_container_response, 0, &resp,
                 err) < 0)
                return -1;
        int ret = 0;
        if (resp->container_id == NULL || resp->container_id[0] == '\0')
                ret = invalid_response(err, "CreateContainer", "ContainerId is not set");
        else
                *container_id = xstrdup(resp->container_id);
        FREE_MSG(resp);
        return ret;
}

int cri_start_container(struct cri_client *c, const char *container_id, ck_error_t *err)
{
        Runtime__V1__StartContainerRequest req = RUNTIME__V1__START_CONTAINER_REQUEST__INIT;
        req.container_id = (char *)container_id;
        Runtime__V1__StartContainerResponse *resp = NULL;
        c->changes++;
        if (CALL(c, runtime_service, "StartContainer", req, start_container_response, 0, &resp,
                 err) < 0)
                return -1;
        FREE_MSG(resp);
        return 0;
}

int cri_update_container_resources(struct cri_client *c, const char *container_id,
                                   const Runtime__V1__LinuxContainerResources *resources,
                                   ck_error_t *err)
{
        Runtime__V1__UpdateContainerResourcesRequest req =
            RUNTIME__V1__UPDATE_CONTAINER_RESOURCES_REQUEST__INIT;
        req.container_id = (char *)container_id;
        req.linux = (Runtime__V1__LinuxContainerResources *)resources;
        Runtime__V1__UpdateContainerResourcesResponse *resp = NULL;
        c->changes++;
        if (CALL(c, runtime_service, "UpdateContainerResources", req,
                 update_container_resources_response, 0, &resp, err) < 0)
                return -1;
        FREE_MSG(resp);
        return 0;
}

int cri_stop_container(struct cri_client *c, const char *container_id, int64_t timeout_s,
                       ck_error_t *err)
{
        Runtime__V1__StopContainerRequest req = RUNTIME__V1__STOP_CONTAINER_REQUEST__INIT;
        req.container_id = (char *)container_id;
        req.timeout = timeout_s;
        Runtime__V1__StopContainerResponse *resp = NULL;
        int64_t extra_ms = timeout_s > 0 ? timeout_s * 1000 : 0;
        c->changes++;
        if (CALL(c, runtime_service, "StopContainer", req, stop_container_response, extra_ms, &resp,
                 err) < 0)
                return -1;
        FREE_MSG(resp);
        return 0;
}

int cri_remove_container(struct cri_client *c, const char *container_id, ck_error_t *err)
{
        Runtime__V1__RemoveContainerRequest req = RUNTIME__V1__REMOVE_CONTAINER_REQUEST__INIT;
        req.container_id = (char *)container_id;
        Runtime__V1__RemoveContainerResponse *resp = NULL;
        c->changes++;
        if (CALL(c, runtime_service, "RemoveContainer", req, remove_container_response, 0, &resp,
                 err) < 0)
                return -1;
        FREE_MSG(resp);
        return 0;
}

int cri_list_containers(struct cri_client *c, const Runtime__V1__ContainerFilter *filter,
                        Runtime__V1__ListContainersResponse **out, ck_error_t *err)
{
        Runtime__V1__ListContainersRequest req = RUNTIME__V1__LIST_CONTAINERS_REQUEST__INIT;
        req.filter = (Runtime__V1__ContainerFilter *)filter;
        return CALL(c, runtime_service, "ListContainers", req, list_containers_response, 0, out,
                    err);
}

static const char *check_container_status(const Runtime__V1__ContainerStatus *s)
{
        if (s->id == NULL || s->id[0] == '\0')
                return "status.Id is not set";
        if (s->metadata == NULL)
                return "status.Metadata is not set";
        if (s->metadata->name == NULL || s->metadata->name[0] == '\0')
                return "metadata.Name is not in metadata";
        if (s->created_at == 0)
                return "status.CreatedAt is not set";
        if (s->image == NULL || s->image->image == NULL || s->image->image[0] == '\0')
                return "status.Image is not set";
        if (s->image_ref == NULL || s->image_ref[0] == '\0')
                return "status.ImageRef is not set";
        return NULL;
}

int cri_container_status(struct cri_client *c, const char *container_id,
                         Runtime__V1__ContainerStatusResponse **out, ck_error_t *err)
{
        Runtime__V1__ContainerStatusRequest req = RUNTIME__V1__CONTAINER_STATUS_REQUEST__INIT;
        req.container_id = (char *)container_id;
        Runtime__V1__ContainerStatusResponse *resp = NULL;
        if (CALL(c, runtime_service, "ContainerStatus", req, container_status_response, 0, &resp,
                 err) < 0)
                return -1;
        const char *bad = resp->status ? check_container_status(resp->status) : NULL;
        if (bad) {
                FREE_MSG(resp);
                return invalid_response(err, "ContainerStatus", bad);
        }
        *out = resp;
        return 0;
}

int cri_exec_sync(struct cri_client *c, const char *container_id, char *const *cmd,
                  int64_t timeout_s, Runtime__V1__ExecSyncResponse **out, ck_error_t *err)
{
        Runtime__V1__ExecSyncRequest req = RUNTIME__V1__EXEC_SYNC_REQUEST__INIT;
        req.container_id = (char *)container_id;
        size_t n = 0;
        while (cmd && cmd[n])
                n++;
        req.n_cmd = n;
        req.cmd = (char **)cmd;
        req.timeout = timeout_s;
        int64_t extra_ms = timeout_s > 0 ? timeout_s * 1000 : 0;
        return CALL(c, runtime_service, "ExecSync", req, exec_sync_response, extra_ms, out, err);
}

/* ---- ImageService ---- */

int cri_pull_image(struct cri_client *c, const char *image, const Runtime__V1__AuthConfig *auth,
                   const Runtime__V1__PodSandboxConfig *sandbox_config, char **image_ref,
                   ck_error_t *err)
{
        Runtime__V1__ImageSpec spec = RUNTIME__V1__IMAGE_SPEC__INIT;
        spec.image = (char *)image;
        Runtime__V1__PullImageRequest req = RUNTIME__V1__PULL_IMAGE_REQUEST__INIT;
        req.image = &spec;
        req.auth = (Runtime__V1__AuthConfig *)auth;
        req.sandbox_config = (Runtime__V1__PodSandboxConfig *)sandbox_config;
        Runtime__V1__PullImageResponse *resp = NULL;
        /* No deadline, as upstream: a pull of a large image takes as long as it takes. */
        if (CALL(c, image_service, "PullImage", req, pull_image_response, NO_DEADLINE, &resp, err) <
            0)
                return -1;
        int ret = 0;
        if (resp->image_ref == NULL || resp->image_ref[0] == '\0')
                ret = ck_error_make_code(err, GRPC_INTERNAL,
                                         "CRI PullImage: imageRef of image `%s` is not set", image);
        else
                *image_ref = xstrdup(resp->image_ref);
        FREE_MSG(resp);
        return ret;
}

int cri_image_status(struct cri_client *c, const char *image,
                     Runtime__V1__ImageStatusResponse **out, ck_error_t *err)
{
        Runtime__V1__ImageSpec spec = RUNTIME__V1__IMAGE_SPEC__INIT;
        spec.image = (char *)image;
        Runtime__V1__ImageStatusRequest req = RUNTIME__V1__IMAGE_STATUS_REQUEST__INIT;
        req.image = &spec;
        Runtime__V1__ImageStatusResponse *resp = NULL;
        if (CALL(c, image_service, "ImageStatus", req, image_status_response, 0, &resp, err) < 0)
                return -1;
        const Runtime__V1__Image *img = resp->image;
        if (img && (img->id == NULL || img->id[0] == '\0' || img->size == 0)) {
                FREE_MSG(resp);
                return ck_error_make_code(err, GRPC_INTERNAL,
                                          "CRI ImageStatus: Id or size of image `%s` is not set",
                                          image);
        }
        *out = resp;
        return 0;
}

int cri_list_images(struct cri_client *c, Runtime__V1__ListImagesResponse **out, ck_error_t *err)
{
        Runtime__V1__ListImagesRequest req = RUNTIME__V1__LIST_IMAGES_REQUEST__INIT;
        return CALL(c, image_service, "ListImages", req, list_images_response, 0, out, err);
}

int cri_remove_image(struct cri_client *c, const char *image, ck_error_t *err)
{
        Runtime__V1__ImageSpec spec = RUNTIME__V1__IMAGE_SPEC__INIT;
        spec.image = (char *)image;
        Runtime__V1__RemoveImageRequest req = RUNTIME__V1__REMOVE_IMAGE_REQUEST__INIT;
        req.image = &spec;
        Runtime__V1__RemoveImageResponse *resp = NULL;
        if (CALL(c, image_service, "RemoveImage", req, remove_image_response, 0, &resp, err) < 0)
                return -1;
        FREE_MSG(resp);
        return 0;
}

uint64_t cri_client_changes(const struct cri_client *c)
{
        return c ? c->changes : 0;
}

int64_t cri_client_busy_us(const struct cri_client *c)
{
        return c ? c->busy_us : 0;
}
