/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The shim's wiring (dockershim.h): the engine's client and facts read
 * once, the gRPC server with the CRI methods served so far.
 */
#include "cri.pb-c.h"
#include "dockershim/dockershim_internal.h"
#include "grpc/grpc.h"
#include "grpc/grpc_server.h"
#include "streaming/streaming.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/netutil.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int dockershim_pack(const ProtobufCMessage *m, uint8_t **out, size_t *len)
{
        size_t n = protobuf_c_message_get_packed_size(m);
        *out = xmalloc(n ? n : 1);
        *len = protobuf_c_message_pack(m, *out);
        return 0;
}

int shim_inspect_own(struct dockershim *s, const char *id, const char *type, const char *what,
                     struct docker_container *info, struct shim_name *name, ck_error_t *err)
{
        if (docker_container_inspect(s->docker, id, info, err) < 0)
                return dockershim_fail(err);
        const char *t = json_string_value(json_object_get(info->labels, SHIM_LABEL_TYPE));
        if (t != NULL && strcmp(t, type) == 0 && shim_parse_name(info->name, name) == 0)
                return 0;
        ck_error_make_code(err, GRPC_NOT_FOUND, "no such %s: %s (%s)", what, id,
                           info->name ? info->name : "");
        docker_container_clear(info);
        return -1;
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

/* The first string field of m (at any depth: nested messages, repeated
 * fields, map entries) that is not valid UTF-8, by name; NULL when every
 * one is. */
static const char *invalid_utf8_field(const ProtobufCMessage *m)
{
        const ProtobufCMessageDescriptor *d = m->descriptor;
        for (unsigned i = 0; i < d->n_fields; i++) {
                const ProtobufCFieldDescriptor *f = &d->fields[i];
                if (f->type != PROTOBUF_C_TYPE_STRING && f->type != PROTOBUF_C_TYPE_MESSAGE)
                        continue;
                const char *field = (const char *)m + f->offset;
                if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
                    *(const uint32_t *)((const char *)m + f->quantifier_offset) != f->id)
                        continue; /* another member of the oneof is set */
                size_t n = 1;
                void *const *items = (void *const *)field;
                if (f->label == PROTOBUF_C_LABEL_REPEATED) {
                        n = *(const size_t *)((const char *)m + f->quantifier_offset);
                        items = *(void *const *const *)field;
                }
                for (size_t k = 0; k < n; k++) {
                        if (items[k] == NULL)
                                continue;
                        if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
                                const char *bad = invalid_utf8_field(items[k]);
                                if (bad)
                                        return bad;
                        } else if (!utf8_valid(items[k], strlen(items[k]))) {
                                return f->name;
                        }
                }
        }
        return NULL;
}

struct dockershim_method {
        const char *name;
        grpc_method_fn fn;
        const ProtobufCMessageDescriptor *request;
        struct dockershim *shim;
};

/* Every method's entry: a request whose strings are not all valid UTF-8
 * is refused before the method sees it, as a Go gRPC server refuses it
 * (cri-dockerd's): the engine's JSON could not carry such a string, and a
 * string dropped on the way (a label, a filter, an argument) would change
 * what the call does. */
static int dispatch(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms, uint8_t **resp,
                    size_t *resp_len, ck_error_t *err)
{
        const struct dockershim_method *m = ctx;
        ProtobufCMessage *in = protobuf_c_message_unpack(m->request, NULL, len, req);
        if (in != NULL) {
                const char *bad = invalid_utf8_field(in);
                cleanup_free char *field = bad ? xstrdup(bad) : NULL;
                protobuf_c_message_free_unpacked(in, NULL);
                if (field)
                        return ck_error_make_code(err, GRPC_INTERNAL,
                                                  "%s: error unmarshalling request: string field "
                                                  "%s contains invalid UTF-8",
                                                  m->name, field);
        }
        /* (a request that does not unpack: the method says so) */
        return m->fn(m->shim, req, len, timeout_ms, resp, resp_len, err);
}

#define RT "/runtime.v1.RuntimeService/"
#define IMG "/runtime.v1.ImageService/"
#define METHOD(svc, name, fn, req)                                                                 \
        {                                                                                          \
                svc #name,                                                                         \
                {                                                                                  \
#name, fn, &runtime__v1__##req##__descriptor, NULL                         \
                }                                                                                  \
        }

struct grpc_method *dockershim_methods(struct dockershim *s, size_t *n)
{
        struct {
                const char *path;
                struct dockershim_method m;
        } const table[] = {
            METHOD(RT, Version, dockershim_version, version_request),
            METHOD(RT, Status, dockershim_status, status_request),
            METHOD(RT, RuntimeConfig, dockershim_runtime_config, runtime_config_request),
            METHOD(RT, UpdateRuntimeConfig, dockershim_update_runtime_config,
                   update_runtime_config_request),
            METHOD(RT, RunPodSandbox, dockershim_run_pod_sandbox, run_pod_sandbox_request),
            METHOD(RT, StopPodSandbox, dockershim_stop_pod_sandbox, stop_pod_sandbox_request),
            METHOD(RT, RemovePodSandbox, dockershim_remove_pod_sandbox, remove_pod_sandbox_request),
            METHOD(RT, PodSandboxStatus, dockershim_pod_sandbox_status, pod_sandbox_status_request),
            METHOD(RT, ListPodSandbox, dockershim_list_pod_sandbox, list_pod_sandbox_request),
            METHOD(RT, CreateContainer, dockershim_create_container, create_container_request),
            METHOD(RT, StartContainer, dockershim_start_container, start_container_request),
            METHOD(RT, StopContainer, dockershim_stop_container, stop_container_request),
            METHOD(RT, RemoveContainer, dockershim_remove_container, remove_container_request),
            METHOD(RT, ContainerStatus, dockershim_container_status, container_status_request),
            METHOD(RT, ListContainers, dockershim_list_containers, list_containers_request),
            METHOD(RT, UpdateContainerResources, dockershim_update_container_resources,
                   update_container_resources_request),
            METHOD(RT, ReopenContainerLog, dockershim_reopen_container_log,
                   reopen_container_log_request),
            METHOD(RT, ExecSync, dockershim_exec_sync, exec_sync_request),
            METHOD(RT, Exec, dockershim_exec, exec_request),
            METHOD(RT, Attach, dockershim_attach, attach_request),
            METHOD(RT, PortForward, dockershim_port_forward, port_forward_request),
            METHOD(RT, ContainerStats, dockershim_container_stats, container_stats_request),
            METHOD(RT, ListContainerStats, dockershim_list_container_stats,
                   list_container_stats_request),
            METHOD(RT, PodSandboxStats, dockershim_pod_sandbox_stats, pod_sandbox_stats_request),
            METHOD(RT, ListPodSandboxStats, dockershim_list_pod_sandbox_stats,
                   list_pod_sandbox_stats_request),
            METHOD(IMG, ListImages, dockershim_list_images, list_images_request),
            METHOD(IMG, ImageStatus, dockershim_image_status, image_status_request),
            METHOD(IMG, PullImage, dockershim_pull_image, pull_image_request),
            METHOD(IMG, RemoveImage, dockershim_remove_image, remove_image_request),
            METHOD(IMG, ImageFsInfo, dockershim_image_fs_info, image_fs_info_request),
        };
        *n = ARRAY_SIZE(table);
        struct grpc_method *g = xcalloc(*n, sizeof(*g));
        s->dispatched = xcalloc(*n, sizeof(*s->dispatched));
        for (size_t i = 0; i < *n; i++) {
                s->dispatched[i] = table[i].m;
                s->dispatched[i].shim = s;
                g[i] = (struct grpc_method){table[i].path, dispatch, NULL, &s->dispatched[i]};
        }
        return g;
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
        /* the containers log with the engine's default driver and its
         * options (max-size ...), as cri-dockerd's do: only json-file gives
         * the kubelet a file to read */
        if (info.logging_driver && strcmp(info.logging_driver, "json-file") != 0)
                LOG_WARN("The engine's logging driver is not json-file: the kubelet cannot read "
                         "the containers' logs (kubectl logs)",
                         "loggingDriver=\"%s\"", info.logging_driver);
        s->docker_root_dir =
            xstrdup(info.docker_root_dir && *info.docker_root_dir ? info.docker_root_dir
                                                                  : "/var/lib/docker");
        docker_info_clear(&info);
        s->pod_infra_image = o->pod_infra_image ? xstrdup(o->pod_infra_image) : NULL;
        s->root_dir = xstrdup(o->root_dir ? o->root_dir : "/var/lib/ckubelet-dockershim");
        s->cni_conf_dir = xstrdup(o->cni_conf_dir ? o->cni_conf_dir : "/etc/cni/net.d");
        s->cni_bin_dirs = xstrdup(o->cni_bin_dirs ? o->cni_bin_dirs : "/opt/cni/bin");
        s->proc_root = xstrdup("/proc");
        s->restrict_oom_score_adj = o->restrict_oom_score_adj;
        s->own_oom_score_adj = own_oom_score_adj();
        if (fs_mkdir_p(s->root_dir, 0700, err) < 0) {
                ck_error_wrap(err, "root directory `%s`", s->root_dir);
                goto fail;
        }
        s->listen_path = xstrdup(listen);

        /* a socket a previous run left: only a socket nobody answers on */
        struct stat st;
        if (lstat(s->listen_path, &st) == 0) {
                if (!S_ISSOCK(st.st_mode)) {
                        ck_error_make(err, 0, "listen `%s`: exists and is not a socket",
                                      s->listen_path);
                        goto fail;
                }
                ck_error_t e = NULL;
                int fd = net_unix_dial(s->listen_path, fs_now_mono_ms() + 1000, &e);
                if (fd >= 0 || e->status != ECONNREFUSED) {
                        /* (a full backlog: someone serves there, busy) */
                        if (fd >= 0)
                                close(fd);
                        ck_error_release(&e);
                        ck_error_make(err, 0, "listen `%s`: another server answers there",
                                      s->listen_path);
                        goto fail;
                }
                ck_error_release(&e);
                if (unlink(s->listen_path) < 0 && errno != ENOENT) {
                        ck_error_make(err, errno, "remove the stale socket `%s`", s->listen_path);
                        goto fail;
                }
        }
        if (dockershim_streaming_start(s, o->streaming_bind_addr, o->streaming_idle_timeout_ms,
                                       err) < 0)
                goto fail;
        size_t n = 0;
        s->methods = dockershim_methods(s, &n);
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
        streaming_server_stop(s->streaming);
        docker_client_free(s->docker);
        free(s->methods);
        free(s->dispatched);
        free(s->listen_path);
        free(s->pod_infra_image);
        free(s->cgroup_driver);
        free(s->docker_root_dir);
        free(s->root_dir);
        free(s->cni_conf_dir);
        free(s->cni_bin_dirs);
        free(s->proc_root);
        free(s);
}
