/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The shim's wiring (dockershim.h): the engine's client and facts read
 * once, the gRPC server with the CRI methods served so far.
 */
#include "dockershim/dockershim_internal.h"
#include "grpc/grpc.h"
#include "grpc/grpc_server.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int dockershim_pack(const ProtobufCMessage *m, uint8_t **out, size_t *len)
{
        size_t n = protobuf_c_message_get_packed_size(m);
        *out = xmalloc(n ? n : 1);
        *len = protobuf_c_message_pack(m, *out);
        return 0;
}

int dockershim_grpc_code(const ck_error_t err)
{
        switch (err ? err->code : 0) {
        case DOCKER_ERR_UNAVAILABLE:
                return GRPC_UNAVAILABLE;
        case DOCKER_ERR_TIMEOUT:
                return GRPC_DEADLINE_EXCEEDED;
        case DOCKER_ERR_NOT_FOUND:
                return GRPC_NOT_FOUND;
        case DOCKER_ERR_INVALID:
                return GRPC_INVALID_ARGUMENT;
        default:
                return GRPC_UNKNOWN;
        }
}

int dockershim_fail(ck_error_t *err)
{
        if (err && *err)
                (*err)->code = dockershim_grpc_code(*err);
        return -1;
}

#define RT "/runtime.v1.RuntimeService/"
#define IMG "/runtime.v1.ImageService/"

static struct grpc_method *methods_of(struct dockershim *s, size_t *n)
{
        const struct grpc_method table[] = {
            {RT "Version", dockershim_version, NULL, s},
            {RT "Status", dockershim_status, NULL, s},
            {RT "RuntimeConfig", dockershim_runtime_config, NULL, s},
            {RT "RunPodSandbox", dockershim_run_pod_sandbox, NULL, s},
            {RT "StopPodSandbox", dockershim_stop_pod_sandbox, NULL, s},
            {RT "RemovePodSandbox", dockershim_remove_pod_sandbox, NULL, s},
            {RT "PodSandboxStatus", dockershim_pod_sandbox_status, NULL, s},
            {RT "ListPodSandbox", dockershim_list_pod_sandbox, NULL, s},
            {RT "CreateContainer", dockershim_create_container, NULL, s},
            {RT "StartContainer", dockershim_start_container, NULL, s},
            {RT "StopContainer", dockershim_stop_container, NULL, s},
            {RT "RemoveContainer", dockershim_remove_container, NULL, s},
            {RT "ContainerStatus", dockershim_container_status, NULL, s},
            {RT "ListContainers", dockershim_list_containers, NULL, s},
            {RT "UpdateContainerResources", dockershim_update_container_resources, NULL, s},
            {RT "ExecSync", dockershim_exec_sync, NULL, s},
            {RT "ListContainerStats", dockershim_list_container_stats, NULL, s},
            {IMG "ListImages", dockershim_list_images, NULL, s},
            {IMG "ImageStatus", dockershim_image_status, NULL, s},
            {IMG "PullImage", dockershim_pull_image, NULL, s},
            {IMG "RemoveImage", dockershim_remove_image, NULL, s},
            {IMG "ImageFsInfo", dockershim_image_fs_info, NULL, s},
        };
        struct grpc_method *m = xmalloc(sizeof(table));
        memcpy(m, table, sizeof(table));
        *n = ARRAY_SIZE(table);
        return m;
}

/* The shim's own OOM score adjustment (0 when unreadable). */
static int own_oom_score_adj(void)
{
        cleanup_free char *own = NULL;
        size_t len = 0;
        ck_error_t e = NULL;
        if (fs_read_file("/proc/self/oom_score_adj", 64, &own, &len, &e) < 0) {
                ck_error_release(&e);
                return 0;
        }
        return atoi(own);
}

int dockershim_start(const struct dockershim_options *o, struct dockershim **out, ck_error_t *err)
{
        *out = NULL;
        const char *listen = o->listen;
        if (strncmp(listen, "unix://", 7) == 0)
                listen += 7;
        else if (strstr(listen, "://") != NULL)
                return ck_error_make(err, 0, "listen `%s`: only unix:// is supported", o->listen);
        if (*listen != '/')
                return ck_error_make(err, 0, "listen `%s`: not an absolute socket path", o->listen);

        struct dockershim *s = xcalloc(1, sizeof(*s));
        if (docker_client_open(o->docker_endpoint, o->request_timeout_ms, &s->docker, err) < 0)
                goto fail;
        struct docker_info info;
        if (docker_info(s->docker, &info, err) < 0) {
                ck_error_wrap(err, "docker endpoint `%s`", o->docker_endpoint);
                goto fail;
        }
        s->cgroup_driver =
            xstrdup(info.cgroup_driver && *info.cgroup_driver ? info.cgroup_driver : "cgroupfs");
        s->docker_root_dir =
            xstrdup(info.docker_root_dir && *info.docker_root_dir ? info.docker_root_dir
                                                                  : "/var/lib/docker");
        docker_info_clear(&info);
        s->pod_infra_image = o->pod_infra_image ? xstrdup(o->pod_infra_image) : NULL;
        s->root_dir = xstrdup(o->root_dir ? o->root_dir : "/var/lib/ckubelet-dockershim");
        s->cni_conf_dir = xstrdup(o->cni_conf_dir ? o->cni_conf_dir : "/etc/cni/net.d");
        s->cni_bin_dirs = xstrdup(o->cni_bin_dirs ? o->cni_bin_dirs : "/opt/cni/bin");
        s->restrict_oom_score_adj = o->restrict_oom_score_adj;
        s->own_oom_score_adj = own_oom_score_adj();
        if (fs_mkdir_p(s->root_dir, 0700, err) < 0) {
                ck_error_wrap(err, "root directory `%s`", s->root_dir);
                goto fail;
        }
        s->listen_path = xstrdup(listen);

        /* a socket a previous run left */
        if (unlink(s->listen_path) < 0 && errno != ENOENT) {
                ck_error_make(err, errno, "remove the stale socket `%s`", s->listen_path);
                goto fail;
        }
        size_t n = 0;
        s->methods = methods_of(s, &n);
        if (grpc_server_start(s->listen_path, s->methods, n, &s->server, err) < 0)
                goto fail;
        LOG_INFO(0, "dockershim: serving CRI", "listen=\"%s\" docker=\"%s\" cgroupDriver=\"%s\"",
                 s->listen_path, o->docker_endpoint, s->cgroup_driver);
        *out = s;
        return 0;
fail:
        dockershim_stop(s);
        return -1;
}

void dockershim_stop(struct dockershim *s)
{
        if (s == NULL)
                return;
        /* the calls in progress end now (a StopContainer's grace period,
         * a pull): the server waits for them */
        if (s->docker)
                docker_client_cancel(s->docker);
        grpc_server_stop(s->server);
        docker_client_free(s->docker);
        free(s->methods);
        free(s->listen_path);
        free(s->pod_infra_image);
        free(s->cgroup_driver);
        free(s->docker_root_dir);
        free(s->root_dir);
        free(s->cni_conf_dir);
        free(s->cni_bin_dirs);
        free(s);
}
