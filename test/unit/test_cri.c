/* SPDX-License-Identifier: Apache-2.0 */
/* The CRI client (cri/cri.c) against a fake runtime: an in-process gRPC
 * server (fake_grpc_server.h) that decodes the runtime.v1 requests and
 * answers like a runtime would.  Checks what reaches the runtime (method
 * paths, request fields, deadlines) and what the caller gets back (ids,
 * messages, errors with their codes and context). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cri/cri.h"
#include "grpc/grpc.h"
#include "kubelet/kubelet.h"
#include "util/xalloc.h"
#include "fake_grpc_server.h"

#include <stdlib.h>
#include <string.h>

struct runtime {
        int fail_code;             /* != 0: every call fails with this status */
        bool empty_ids;            /* answer RunPodSandbox / CreateContainer with "" */
        bool bad_container_status; /* ContainerStatus without image_ref */
        bool no_image;             /* ImageStatus of an absent image */
        char last_request[512];    /* a summary of the last decoded request */
        /* RuntimeConfig: 0 unimplemented (containerd 1.6), else the
         * CgroupDriver value + 1 */
        int cgroup_driver;
};

static void pack_reply(struct fake_reply *reply, const ProtobufCMessage *m)
{
        reply->body_len = protobuf_c_message_get_packed_size(m);
        reply->body = malloc(reply->body_len + 1);
        protobuf_c_message_pack(m, reply->body);
}

#define METHOD(path, name) (strcmp((path), "/runtime.v1." name) == 0)
#define UNPACK(type, req) runtime__v1__##type##__unpack(NULL, (req)->msg_len, (req)->msg)

static void runtime_handler(struct fake_server *s, const struct fake_request *req,
                            struct fake_reply *reply)
{
        struct runtime *rt = s->data;
        reply->kind = FAKE_REPLY_MESSAGE;
        if (rt->fail_code) {
                reply->kind = FAKE_REPLY_TRAILERS_ONLY;
                reply->grpc_status = rt->fail_code;
                reply->grpc_message = "an error from the runtime";
                return;
        }
        char *sum = rt->last_request;
        size_t sz = sizeof(rt->last_request);
        sum[0] = '\0';
        if (METHOD(req->path, "RuntimeService/Version")) {
                Runtime__V1__VersionRequest *in = UNPACK(version_request, req);
                snprintf(sum, sz, "version=%s", in->version);
                runtime__v1__version_request__free_unpacked(in, NULL);
                Runtime__V1__VersionResponse out = RUNTIME__V1__VERSION_RESPONSE__INIT;
                out.version = "0.1.0";
                out.runtime_name = "fake";
                out.runtime_version = "1.2.3";
                out.runtime_api_version = "v1";
                pack_reply(reply, &out.base);
        } else if (METHOD(req->path, "RuntimeService/RunPodSandbox")) {
                Runtime__V1__RunPodSandboxRequest *in = UNPACK(run_pod_sandbox_request, req);
                snprintf(sum, sz, "name=%s ns=%s uid=%s handler=%s logdir=%s",
                         in->config->metadata->name, in->config->metadata->namespace_,
                         in->config->metadata->uid, in->runtime_handler, in->config->log_directory);
                runtime__v1__run_pod_sandbox_request__free_unpacked(in, NULL);
                Runtime__V1__RunPodSandboxResponse out =
                    RUNTIME__V1__RUN_POD_SANDBOX_RESPONSE__INIT;
                out.pod_sandbox_id = rt->empty_ids ? "" : "sandbox-1";
                pack_reply(reply, &out.base);
        } else if (METHOD(req->path, "RuntimeService/CreateContainer")) {
                Runtime__V1__CreateContainerRequest *in = UNPACK(create_container_request, req);
                snprintf(sum, sz, "sandbox=%s name=%s image=%s cmd0=%s", in->pod_sandbox_id,
                         in->config->metadata->name, in->config->image->image,
                         in->config->n_command ? in->config->command[0] : "");
                runtime__v1__create_container_request__free_unpacked(in, NULL);
                Runtime__V1__CreateContainerResponse out =
                    RUNTIME__V1__CREATE_CONTAINER_RESPONSE__INIT;
                out.container_id = rt->empty_ids ? "" : "container-1";
                pack_reply(reply, &out.base);
        } else if (METHOD(req->path, "RuntimeService/StopContainer")) {
                Runtime__V1__StopContainerRequest *in = UNPACK(stop_container_request, req);
                snprintf(sum, sz, "id=%s timeout=%lld", in->container_id, (long long)in->timeout);
                runtime__v1__stop_container_request__free_unpacked(in, NULL);
                Runtime__V1__StopContainerResponse out = RUNTIME__V1__STOP_CONTAINER_RESPONSE__INIT;
                pack_reply(reply, &out.base);
        } else if (METHOD(req->path, "RuntimeService/ExecSync")) {
                Runtime__V1__ExecSyncRequest *in = UNPACK(exec_sync_request, req);
                snprintf(sum, sz, "id=%s argc=%zu argv=%s,%s timeout=%lld", in->container_id,
                         in->n_cmd, in->n_cmd > 0 ? in->cmd[0] : "",
                         in->n_cmd > 1 ? in->cmd[1] : "", (long long)in->timeout);
                runtime__v1__exec_sync_request__free_unpacked(in, NULL);
                Runtime__V1__ExecSyncResponse out = RUNTIME__V1__EXEC_SYNC_RESPONSE__INIT;
                out.stdout.data = (uint8_t *)"hi\n";
                out.stdout.len = 3;
                out.exit_code = 0;
                pack_reply(reply, &out.base);
        } else if (METHOD(req->path, "RuntimeService/ContainerStatus")) {
                Runtime__V1__ContainerStatus st = RUNTIME__V1__CONTAINER_STATUS__INIT;
                Runtime__V1__ContainerMetadata md = RUNTIME__V1__CONTAINER_METADATA__INIT;
                Runtime__V1__ImageSpec img = RUNTIME__V1__IMAGE_SPEC__INIT;
                md.name = "web";
                img.image = "localhost/busybox:1.35";
                st.id = "container-1";
                st.metadata = &md;
                st.image = &img;
                st.image_ref = rt->bad_container_status ? "" : "sha256:abc";
                st.created_at = 1;
                st.state = RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING;
                st.reason = "Started";
                Runtime__V1__ContainerStatusResponse out =
                    RUNTIME__V1__CONTAINER_STATUS_RESPONSE__INIT;
                out.status = &st;
                pack_reply(reply, &out.base);
        } else if (METHOD(req->path, "ImageService/ImageStatus")) {
                Runtime__V1__ImageStatusRequest *in = UNPACK(image_status_request, req);
                snprintf(sum, sz, "image=%s", in->image->image);
                runtime__v1__image_status_request__free_unpacked(in, NULL);
                Runtime__V1__Image img = RUNTIME__V1__IMAGE__INIT;
                char *tags[] = {"localhost/pause:3.10"};
                img.id = "sha256:1234";
                img.n_repo_tags = 1;
                img.repo_tags = tags;
                img.size = 4096;
                Runtime__V1__ImageStatusResponse out = RUNTIME__V1__IMAGE_STATUS_RESPONSE__INIT;
                out.image = rt->no_image ? NULL : &img;
                pack_reply(reply, &out.base);
        } else if (METHOD(req->path, "RuntimeService/RuntimeConfig") && rt->cgroup_driver) {
                Runtime__V1__RuntimeConfigResponse out = RUNTIME__V1__RUNTIME_CONFIG_RESPONSE__INIT;
                Runtime__V1__LinuxRuntimeConfiguration lc =
                    RUNTIME__V1__LINUX_RUNTIME_CONFIGURATION__INIT;
                lc.cgroup_driver = rt->cgroup_driver - 1;
                out.linux = &lc;
                pack_reply(reply, &out.base);
        } else if (METHOD(req->path, "ImageService/PullImage")) {
                Runtime__V1__PullImageResponse out = RUNTIME__V1__PULL_IMAGE_RESPONSE__INIT;
                out.image_ref = "sha256:5678";
                pack_reply(reply, &out.base);
        } else {
                reply->kind = FAKE_REPLY_TRAILERS_ONLY;
                reply->grpc_status = GRPC_UNIMPLEMENTED;
                reply->grpc_message = "unknown method";
        }
}

struct fixture {
        struct runtime rt;
        struct fake_server *server;
        struct cri_client *client;
};

#define CLIENT_TIMEOUT_MS 2000

static int setup(void **state)
{
        struct fixture *f = calloc(1, sizeof(*f));
        f->server = fake_server_start(runtime_handler, &f->rt);
        char endpoint[160];
        snprintf(endpoint, sizeof(endpoint), "unix://%s", f->server->path);
        f->client = cri_client_new(endpoint, CLIENT_TIMEOUT_MS);
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        struct fixture *f = *state;
        cri_client_free(f->client);
        fake_server_stop(f->server);
        free(f);
        return 0;
}

/* The grpc-timeout of the last request, in ms (-1 when absent). */
static int64_t last_timeout_ms(struct fixture *f)
{
        pthread_mutex_lock(&f->server->lock);
        int64_t ms = -1;
        ck_error_t err = NULL;
        if (f->server->last_timeout[0] &&
            grpc_parse_timeout(f->server->last_timeout, strlen(f->server->last_timeout), &ms,
                               &err) < 0)
                ms = -2;
        ck_error_release(&err);
        pthread_mutex_unlock(&f->server->lock);
        return ms;
}

static void assert_last_path(struct fixture *f, const char *want)
{
        pthread_mutex_lock(&f->server->lock);
        assert_string_equal(f->server->last_path, want);
        pthread_mutex_unlock(&f->server->lock);
}

static void test_parse_endpoint(void **state)
{
        (void)state;
        char *path = NULL;
        ck_error_t err = NULL;
        assert_int_equal(cri_parse_endpoint("unix:///run/containerd/containerd.sock", &path, &err),
                         0);
        assert_string_equal(path, "/run/containerd/containerd.sock");
        free(path);
        assert_int_equal(cri_parse_endpoint("/run/crio/crio.sock", &path, &err), 0);
        assert_string_equal(path, "/run/crio/crio.sock");
        free(path);

        const char *bad[] = {"tcp://127.0.0.1:1234",
                             "npipe:////./pipe/containerd",
                             "unix://",
                             "unix://relative.sock",
                             "relative.sock",
                             ""};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                path = NULL;
                assert_true(cri_parse_endpoint(bad[i], &path, &err) < 0);
                assert_null(path);
                assert_non_null(strstr(err->msg, "endpoint"));
                ck_error_release(&err);
        }
}

static void test_invalid_endpoint_fails_every_call(void **state)
{
        (void)state;
        struct cri_client *c = cri_client_new("tcp://127.0.0.1:10010", 1000);
        Runtime__V1__VersionResponse *v = NULL;
        ck_error_t err = NULL;
        assert_true(cri_version(c, &v, &err) < 0);
        assert_null(v);
        assert_non_null(strstr(err->msg, "CRI Version: unsupported CRI endpoint"));
        ck_error_release(&err);
        cri_client_free(c);
}

static void test_version(void **state)
{
        struct fixture *f = *state;
        Runtime__V1__VersionResponse *v = NULL;
        ck_error_t err = NULL;
        assert_int_equal(cri_version(f->client, &v, &err), 0);
        assert_string_equal(v->runtime_name, "fake");
        assert_string_equal(v->runtime_api_version, "v1");
        runtime__v1__version_response__free_unpacked(v, NULL);
        assert_last_path(f, "/runtime.v1.RuntimeService/Version");
        assert_string_equal(f->rt.last_request, "version=0.1.0");
        int64_t ms = last_timeout_ms(f);
        assert_true(ms > CLIENT_TIMEOUT_MS - 1000 && ms <= CLIENT_TIMEOUT_MS);
}

static void test_run_pod_sandbox_and_create_container(void **state)
{
        struct fixture *f = *state;
        Runtime__V1__PodSandboxMetadata md = RUNTIME__V1__POD_SANDBOX_METADATA__INIT;
        md.name = "web";
        md.namespace_ = "default";
        md.uid = "uid-1";
        Runtime__V1__PodSandboxConfig cfg = RUNTIME__V1__POD_SANDBOX_CONFIG__INIT;
        cfg.metadata = &md;
        cfg.log_directory = "/var/log/pods/default_web_uid-1";
        char *id = NULL;
        ck_error_t err = NULL;
        uint64_t changes = cri_client_changes(f->client);
        assert_int_equal(cri_run_pod_sandbox(f->client, &cfg, "runc", &id, &err), 0);
        assert_string_equal(id, "sandbox-1");
        /* a call that changes a pod counts as one */
        assert_int_equal(cri_client_changes(f->client), changes + 1);
        assert_string_equal(f->rt.last_request, "name=web ns=default uid=uid-1 handler=runc "
                                                "logdir=/var/log/pods/default_web_uid-1");
        free(id);

        Runtime__V1__ContainerMetadata cmd = RUNTIME__V1__CONTAINER_METADATA__INIT;
        cmd.name = "app";
        Runtime__V1__ImageSpec img = RUNTIME__V1__IMAGE_SPEC__INIT;
        img.image = "localhost/busybox:1.35";
        char *argv[] = {"sleep"};
        Runtime__V1__ContainerConfig cc = RUNTIME__V1__CONTAINER_CONFIG__INIT;
        cc.metadata = &cmd;
        cc.image = &img;
        cc.n_command = 1;
        cc.command = argv;
        char *cid = NULL;
        assert_int_equal(cri_create_container(f->client, "sandbox-1", &cc, &cfg, &cid, &err), 0);
        assert_string_equal(cid, "container-1");
        assert_int_equal(cri_client_changes(f->client), changes + 2);
        assert_string_equal(f->rt.last_request,
                            "sandbox=sandbox-1 name=app image=localhost/busybox:1.35 cmd0=sleep");
        free(cid);

        /* a runtime that answers without an id */
        f->rt.empty_ids = true;
        id = NULL;
        assert_true(cri_run_pod_sandbox(f->client, &cfg, NULL, &id, &err) < 0);
        assert_null(id);
        assert_string_equal(err->msg, "CRI RunPodSandbox: PodSandboxId is not set");
        ck_error_release(&err);
        assert_true(cri_create_container(f->client, "sandbox-1", &cc, &cfg, &cid, &err) < 0);
        assert_string_equal(err->msg, "CRI CreateContainer: ContainerId is not set");
        ck_error_release(&err);
        /* failed ones too: the runtime may have done part of it */
        assert_int_equal(cri_client_changes(f->client), changes + 4);
}

static void test_runtime_error_is_wrapped_with_the_method(void **state)
{
        struct fixture *f = *state;
        f->rt.fail_code = GRPC_NOT_FOUND;
        Runtime__V1__ContainerStatusResponse *st = NULL;
        ck_error_t err = NULL;
        assert_true(cri_container_status(f->client, "nope", &st, &err) < 0);
        assert_null(st);
        assert_int_equal(err->code, CRI_CODE_NOT_FOUND);
        assert_string_equal(err->msg,
                            "CRI ContainerStatus: rpc error 5: an error from the runtime");
        ck_error_release(&err);
}

static void test_stop_container_and_exec_sync_extend_the_deadline(void **state)
{
        struct fixture *f = *state;
        ck_error_t err = NULL;
        assert_int_equal(cri_stop_container(f->client, "container-1", 30, &err), 0);
        assert_string_equal(f->rt.last_request, "id=container-1 timeout=30");
        int64_t ms = last_timeout_ms(f);
        assert_true(ms > CLIENT_TIMEOUT_MS + 30000 - 1000 && ms <= CLIENT_TIMEOUT_MS + 30000);

        char *cmd[] = {"echo", "hi", NULL};
        Runtime__V1__ExecSyncResponse *out = NULL;
        assert_int_equal(cri_exec_sync(f->client, "container-1", cmd, 10, &out, &err), 0);
        assert_int_equal(out->exit_code, 0);
        assert_int_equal(out->stdout.len, 3);
        assert_memory_equal(out->stdout.data, "hi\n", 3);
        runtime__v1__exec_sync_response__free_unpacked(out, NULL);
        assert_string_equal(f->rt.last_request, "id=container-1 argc=2 argv=echo,hi timeout=10");
        ms = last_timeout_ms(f);
        assert_true(ms > CLIENT_TIMEOUT_MS + 10000 - 1000 && ms <= CLIENT_TIMEOUT_MS + 10000);

        /* timeout 0: the client's deadline */
        assert_int_equal(cri_exec_sync(f->client, "container-1", cmd, 0, &out, &err), 0);
        runtime__v1__exec_sync_response__free_unpacked(out, NULL);
        ms = last_timeout_ms(f);
        assert_true(ms > CLIENT_TIMEOUT_MS - 1000 && ms <= CLIENT_TIMEOUT_MS);
}

static void test_container_status_is_verified(void **state)
{
        struct fixture *f = *state;
        Runtime__V1__ContainerStatusResponse *st = NULL;
        ck_error_t err = NULL;
        uint64_t changes = cri_client_changes(f->client);
        assert_int_equal(cri_container_status(f->client, "container-1", &st, &err), 0);
        assert_int_equal(cri_client_changes(f->client), changes); /* a read changes nothing */
        assert_string_equal(st->status->reason, "Started");
        assert_int_equal(st->status->state, RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING);
        runtime__v1__container_status_response__free_unpacked(st, NULL);

        f->rt.bad_container_status = true;
        st = NULL;
        assert_true(cri_container_status(f->client, "container-1", &st, &err) < 0);
        assert_null(st);
        assert_string_equal(err->msg, "CRI ContainerStatus: status.ImageRef is not set");
        ck_error_release(&err);
}

static void test_images(void **state)
{
        struct fixture *f = *state;
        Runtime__V1__ImageStatusResponse *st = NULL;
        ck_error_t err = NULL;
        assert_int_equal(cri_image_status(f->client, "localhost/pause:3.10", &st, &err), 0);
        assert_string_equal(f->rt.last_request, "image=localhost/pause:3.10");
        assert_non_null(st->image);
        assert_string_equal(st->image->id, "sha256:1234");
        assert_int_equal(st->image->n_repo_tags, 1);
        assert_string_equal(st->image->repo_tags[0], "localhost/pause:3.10");
        runtime__v1__image_status_response__free_unpacked(st, NULL);
        assert_last_path(f, "/runtime.v1.ImageService/ImageStatus");

        f->rt.no_image = true;
        assert_int_equal(cri_image_status(f->client, "localhost/absent:1", &st, &err), 0);
        assert_null(st->image);
        runtime__v1__image_status_response__free_unpacked(st, NULL);

        char *ref = NULL;
        assert_int_equal(
            cri_pull_image(f->client, "localhost/busybox:1.35", NULL, NULL, &ref, &err), 0);
        assert_string_equal(ref, "sha256:5678");
        free(ref);
        assert_int_equal(last_timeout_ms(f), -1); /* pulls have no deadline, as upstream */
}

static void test_unimplemented_method(void **state)
{
        struct fixture *f = *state;
        Runtime__V1__ListImagesResponse *out = NULL;
        ck_error_t err = NULL;
        assert_true(cri_list_images(f->client, &out, &err) < 0);
        assert_int_equal(err->code, 12);
        assert_string_equal(err->msg, "CRI ListImages: rpc error 12: unknown method");
        ck_error_release(&err);
}

/* KubeletCgroupDriverFromCRI: the runtime's driver replaces the
 * configured one; a runtime without RuntimeConfig or one that does not
 * answer leaves it; a driver ckubelet does not know fails the start. */
static void test_cgroup_driver_from_cri(void **state)
{
        struct fixture *f = *state;
        char endpoint[160];
        snprintf(endpoint, sizeof(endpoint), "unix://%s", f->server->path);
        struct kubelet_config cfg = {.container_runtime_endpoint = endpoint,
                                     .cgroup_driver = xstrdup("cgroupfs")};
        ck_error_t err = NULL;
        /* Unimplemented: as configured */
        assert_int_equal(kubelet_cgroup_driver_from_cri(&cfg, &err), 0);
        assert_string_equal(cfg.cgroup_driver, "cgroupfs");
        assert_last_path(f, "/runtime.v1.RuntimeService/RuntimeConfig");
        f->rt.cgroup_driver = RUNTIME__V1__CGROUP_DRIVER__SYSTEMD + 1;
        assert_int_equal(kubelet_cgroup_driver_from_cri(&cfg, &err), 0);
        assert_string_equal(cfg.cgroup_driver, "systemd");
        f->rt.cgroup_driver = RUNTIME__V1__CGROUP_DRIVER__CGROUPFS + 1;
        assert_int_equal(kubelet_cgroup_driver_from_cri(&cfg, &err), 0);
        assert_string_equal(cfg.cgroup_driver, "cgroupfs");
        f->rt.cgroup_driver = 7 + 1;
        assert_true(kubelet_cgroup_driver_from_cri(&cfg, &err) < 0);
        assert_string_equal(ck_error_msg(err), "runtime returned an unknown cgroup driver 7");
        ck_error_release(&err);
        assert_string_equal(cfg.cgroup_driver, "cgroupfs");
        /* no runtime there: as configured */
        free(cfg.cgroup_driver);
        cfg.cgroup_driver = xstrdup("systemd");
        cfg.container_runtime_endpoint = "unix:///nonexistent/cri.sock";
        assert_int_equal(kubelet_cgroup_driver_from_cri(&cfg, &err), 0);
        assert_string_equal(cfg.cgroup_driver, "systemd");
        free(cfg.cgroup_driver);
}

static void test_runtime_down_is_unavailable(void **state)
{
        (void)state;
        struct cri_client *c = cri_client_new("unix:///nonexistent/cri.sock", 1000);
        Runtime__V1__StatusResponse *st = NULL;
        ck_error_t err = NULL;
        assert_true(cri_status(c, &st, &err) < 0);
        assert_int_equal(err->code, CRI_CODE_UNAVAILABLE);
        assert_non_null(strstr(err->msg, "CRI Status: connect `/nonexistent/cri.sock`"));
        ck_error_release(&err);
        cri_client_free(c);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_parse_endpoint),
            cmocka_unit_test(test_invalid_endpoint_fails_every_call),
            cmocka_unit_test_setup_teardown(test_version, setup, teardown),
            cmocka_unit_test_setup_teardown(test_run_pod_sandbox_and_create_container, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_runtime_error_is_wrapped_with_the_method, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_stop_container_and_exec_sync_extend_the_deadline,
                                            setup, teardown),
            cmocka_unit_test_setup_teardown(test_container_status_is_verified, setup, teardown),
            cmocka_unit_test_setup_teardown(test_images, setup, teardown),
            cmocka_unit_test_setup_teardown(test_unimplemented_method, setup, teardown),
            cmocka_unit_test_setup_teardown(test_cgroup_driver_from_cri, setup, teardown),
            cmocka_unit_test(test_runtime_down_is_unavailable),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
