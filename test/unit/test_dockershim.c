/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The dockershim's CRI methods (src/dockershim) against a scripted engine
 * on a unix socket: what each sends to the engine and what it answers
 * (images pinned, a missing image an empty ImageStatus, a pull's
 * X-Registry-Auth, a removal of every name of an image, the engine's
 * failures as gRPC statuses).  The real engine: test/e2e/80-dockershim.bats.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cri.pb-c.h"
#include "dockershim/dockershim_internal.h"
#include "fake_apiserver.h"
#include "grpc/grpc.h"
#include "grpc/grpc_server.h"
#include "http/http1.h"
#include "util/base64.h"
#include "util/cleanup.h"
#include "util/fsutil.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define VERSION_141 "{\"Version\":\"20.10.24+dfsg1\",\"ApiVersion\":\"1.41\"}"

static char sock_path[64];

static int setup(void **state)
{
        (void)state;
        snprintf(sock_path, sizeof(sock_path), "/tmp/ck-dockershim-test-%d.sock", getpid());
        return 0;
}

/* A shim whose engine is the fake (its first answer: the version). */
static struct dockershim *shim_on(void)
{
        struct dockershim *s = xcalloc(1, sizeof(*s));
        cleanup_free char *ep = xasprintf("unix://%s", sock_path);
        ck_error_t err = NULL;
        if (docker_client_open(ep, 5000, &s->docker, &err) < 0)
                fail_msg("%s", ck_error_msg(err));
        s->pod_infra_image = xstrdup("localhost/pause:3.10");
        s->cgroup_driver = xstrdup("cgroupfs");
        s->docker_root_dir = xstrdup("/");
        s->cni_conf_dir = xstrdup("/nonexistent");
        s->cni_bin_dirs = xstrdup("/nonexistent");
        return s;
}

static void shim_free(struct dockershim *s)
{
        docker_client_free(s->docker);
        free(s->pod_infra_image);
        free(s->cgroup_driver);
        free(s->docker_root_dir);
        free(s->cni_conf_dir);
        free(s->cni_bin_dirs);
        free(s->root_dir);
        free(s->proc_root);
        free(s);
}

static void done(struct fake *f, struct dockershim *s)
{
        shim_free(s);
        fake_stop(f);
        unlink(sock_path);
}

/* Calls method with the packed request m. */
static int call(grpc_method_fn method, struct dockershim *s, const ProtobufCMessage *m,
                uint8_t **resp, size_t *len, ck_error_t *err)
{
        uint8_t *req = NULL;
        size_t rl = 0;
        dockershim_pack(m, &req, &rl);
        int rc = method(s, req, rl, 0, resp, len, err);
        free(req);
        return rc;
}

static void test_list_images(void **state)
{
        (void)state;
        static const struct answer script[] = {
            {200, VERSION_141},
            {200, "[{\"Id\":\"sha256:p\",\"RepoTags\":[\"localhost/pause:3.10\"],\"Size\":700},"
                  "{\"Id\":\"sha256:b\",\"RepoTags\":[\"localhost/busybox:1.35\"],"
                  "\"RepoDigests\":[\"localhost/busybox@sha256:d\"],\"Size\":4000}]"},
        };
        struct fake *f = fake_start_unix(script, 2, sock_path);
        struct dockershim *s = shim_on();
        Runtime__V1__ListImagesRequest req = RUNTIME__V1__LIST_IMAGES_REQUEST__INIT;
        uint8_t *resp = NULL;
        size_t len = 0;
        ck_error_t err = NULL;
        assert_int_equal(call(dockershim_list_images, s, &req.base, &resp, &len, &err), 0);
        Runtime__V1__ListImagesResponse *r =
            runtime__v1__list_images_response__unpack(NULL, len, resp);
        assert_non_null(r);
        assert_int_equal(r->n_images, 2);
        assert_string_equal(r->images[0]->id, "sha256:p");
        assert_true(r->images[0]->pinned);
        assert_false(r->images[1]->pinned);
        assert_string_equal(r->images[1]->repo_digests[0], "localhost/busybox@sha256:d");
        assert_true(r->images[1]->size == 4000);
        runtime__v1__list_images_response__free_unpacked(r, NULL);
        free(resp);
        assert_string_equal(f->req[1], "GET /v1.41/images/json");
        done(f, s);
}

static Runtime__V1__ImageStatusResponse *image_status(struct dockershim *s, const char *ref,
                                                      ck_error_t *err)
{
        Runtime__V1__ImageSpec spec = RUNTIME__V1__IMAGE_SPEC__INIT;
        spec.image = (char *)ref;
        Runtime__V1__ImageStatusRequest req = RUNTIME__V1__IMAGE_STATUS_REQUEST__INIT;
        req.image = &spec;
        uint8_t *resp = NULL;
        size_t len = 0;
        if (call(dockershim_image_status, s, &req.base, &resp, &len, err) < 0)
                return NULL;
        Runtime__V1__ImageStatusResponse *r =
            runtime__v1__image_status_response__unpack(NULL, len, resp);
        free(resp);
        assert_non_null(r);
        return r;
}

static void test_image_status(void **state)
{
        (void)state;
        static const struct answer script[] = {
            {200, VERSION_141},
            {200, "{\"Id\":\"sha256:b\",\"RepoTags\":[\"busybox:1\"],\"Size\":9,"
                  "\"Config\":{\"User\":\"1000:1000\"}}"},
            {200, "{\"Id\":\"sha256:n\",\"Config\":{\"User\":\"nobody\"}}"},
            {404, "{\"message\":\"No such image: gone:1\"}"},
            {500, "{\"message\":\"layer store broke\"}"},
        };
        struct fake *f = fake_start_unix(script, 5, sock_path);
        struct dockershim *s = shim_on();
        ck_error_t err = NULL;
        Runtime__V1__ImageStatusResponse *r = image_status(s, "busybox:1", &err);
        assert_non_null(r->image);
        assert_non_null(r->image->uid);
        assert_true(r->image->uid->value == 1000);
        assert_string_equal(r->image->username, "");
        runtime__v1__image_status_response__free_unpacked(r, NULL);

        r = image_status(s, "named", &err);
        assert_null(r->image->uid);
        assert_string_equal(r->image->username, "nobody");
        runtime__v1__image_status_response__free_unpacked(r, NULL);

        /* not there: an empty answer, no error */
        r = image_status(s, "gone:1", &err);
        assert_null(r->image);
        runtime__v1__image_status_response__free_unpacked(r, NULL);

        assert_null(image_status(s, "broken:1", &err));
        assert_int_equal(err->code, GRPC_UNKNOWN);
        assert_string_equal(ck_error_msg(err), "inspect image `broken:1`: layer store broke");
        ck_error_release(&err);
        done(f, s);
}

static void test_pull_image(void **state)
{
        (void)state;
        static const char *const progress[] = {"{\"status\":\"Pulling\"}\n", NULL};
        static const struct answer script[] = {
            {200, VERSION_141},
            {200, NULL, progress},
            {200, "{\"Id\":\"sha256:b\",\"RepoDigests\":[\"reg/busybox@sha256:d\"]}"},
            {404, "{\"message\":\"pull access denied for nope\"}"},
        };
        struct fake *f = fake_start_unix(script, 4, sock_path);
        struct dockershim *s = shim_on();
        Runtime__V1__ImageSpec spec = RUNTIME__V1__IMAGE_SPEC__INIT;
        spec.image = (char *)"reg/busybox:1";
        Runtime__V1__AuthConfig auth = RUNTIME__V1__AUTH_CONFIG__INIT;
        auth.auth = (char *)"dXNlcjpwYXNz"; /* user:pass */
        auth.server_address = (char *)"reg";
        Runtime__V1__PullImageRequest req = RUNTIME__V1__PULL_IMAGE_REQUEST__INIT;
        req.image = &spec;
        req.auth = &auth;
        uint8_t *resp = NULL;
        size_t len = 0;
        ck_error_t err = NULL;
        assert_int_equal(call(dockershim_pull_image, s, &req.base, &resp, &len, &err), 0);
        Runtime__V1__PullImageResponse *r =
            runtime__v1__pull_image_response__unpack(NULL, len, resp);
        assert_string_equal(r->image_ref, "reg/busybox@sha256:d");
        runtime__v1__pull_image_response__free_unpacked(r, NULL);
        free(resp);
        assert_string_equal(f->req[1], "POST /v1.41/images/create?fromImage=reg%2Fbusybox&tag=1");
        /* the auth header: base64url of the engine's JSON, the CRI auth
         * split into username and password */
        const char *h = strstr(f->head[1], "X-Registry-Auth: ");
        assert_non_null(h);
        h += strlen("X-Registry-Auth: ");
        size_t hl = strcspn(h, "\r\n");
        cleanup_free char *std = xstrndup(h, hl);
        for (char *p = std; *p; p++)
                *p = *p == '-' ? '+' : *p == '_' ? '/' : *p;
        cleanup_free char *json = NULL;
        size_t jl = 0;
        assert_int_equal(base64_decode(std, strlen(std), 0, &json, &jl, NULL), 0);
        assert_string_equal(
            json, "{\"password\":\"pass\",\"serveraddress\":\"reg\",\"username\":\"user\"}");

        spec.image = (char *)"nope:1";
        req.auth = NULL;
        assert_int_equal(call(dockershim_pull_image, s, &req.base, &resp, &len, &err), -1);
        assert_int_equal(err->code, GRPC_NOT_FOUND);
        assert_string_equal(ck_error_msg(err), "pull image `nope:1`: pull access denied for nope");
        ck_error_release(&err);
        /* no credentials: an empty auth object ("{}") */
        assert_non_null(strstr(f->head[3], "X-Registry-Auth: e30="));
        done(f, s);
}

static void test_registry_auth_refuses_bad_auth(void **state)
{
        (void)state;
        ck_error_t err = NULL;
        assert_null(dockershim_registry_auth(NULL, NULL, "!!!", NULL, NULL, NULL, &err));
        assert_non_null(strstr(ck_error_msg(err), "auth: illegal base64 data"));
        ck_error_release(&err);
        assert_null(dockershim_registry_auth(NULL, NULL, "bm9jb2xvbg==", NULL, NULL, NULL, &err));
        assert_string_equal(ck_error_msg(err), "auth: not user:password");
        ck_error_release(&err);
        /* username and password given: auth is not read */
        cleanup_free char *a = dockershim_registry_auth("u", "p", "!!!", NULL, NULL, NULL, &err);
        assert_non_null(a);
}

static void test_remove_image(void **state)
{
        (void)state;
        static const struct answer script[] = {
            {200, VERSION_141},
            {200, "{\"Id\":\"sha256:b\",\"RepoTags\":[\"a:1\",\"a:2\"],"
                  "\"RepoDigests\":[\"a@sha256:d\"]}"},
            {200, "[{\"Untagged\":\"a:1\"}]"},
            {404, "{\"message\":\"No such image: a:2\"}"},
            {200, "[{\"Untagged\":\"a@sha256:d\"}]"},
            {200, "[{\"Deleted\":\"sha256:b\"}]"},
            {404, "{\"message\":\"No such image: a:1\"}"},
        };
        struct fake *f = fake_start_unix(script, 7, sock_path);
        struct dockershim *s = shim_on();
        Runtime__V1__ImageSpec spec = RUNTIME__V1__IMAGE_SPEC__INIT;
        spec.image = (char *)"a:1";
        Runtime__V1__RemoveImageRequest req = RUNTIME__V1__REMOVE_IMAGE_REQUEST__INIT;
        req.image = &spec;
        uint8_t *resp = NULL;
        size_t len = 0;
        ck_error_t err = NULL;
        assert_int_equal(call(dockershim_remove_image, s, &req.base, &resp, &len, &err), 0);
        free(resp);
        assert_string_equal(f->req[2], "DELETE /v1.41/images/a%3A1?noprune=0");
        assert_string_equal(f->req[3], "DELETE /v1.41/images/a%3A2?noprune=0");
        assert_string_equal(f->req[4], "DELETE /v1.41/images/a%40sha256%3Ad?noprune=0");
        assert_string_equal(f->req[5], "DELETE /v1.41/images/sha256%3Ab?noprune=0");
        /* gone already: done, nothing removed */
        assert_int_equal(call(dockershim_remove_image, s, &req.base, &resp, &len, &err), 0);
        free(resp);
        assert_int_equal(f->n_req, 7);
        done(f, s);
}

static void test_engine_away_is_unavailable(void **state)
{
        (void)state;
        static const struct answer script[] = {{200, VERSION_141}};
        struct fake *f = fake_start_unix(script, 1, sock_path);
        struct dockershim *s = shim_on();
        fake_stop(f);
        unlink(sock_path);
        Runtime__V1__VersionRequest req = RUNTIME__V1__VERSION_REQUEST__INIT;
        uint8_t *resp = NULL;
        size_t len = 0;
        ck_error_t err = NULL;
        assert_int_equal(call(dockershim_version, s, &req.base, &resp, &len, &err), -1);
        assert_int_equal(err->code, GRPC_UNAVAILABLE);
        assert_non_null(strstr(ck_error_msg(err), sock_path));
        ck_error_release(&err);
        /* Status answers, with the runtime not ready and why */
        Runtime__V1__StatusRequest sreq = RUNTIME__V1__STATUS_REQUEST__INIT;
        assert_int_equal(call(dockershim_status, s, &sreq.base, &resp, &len, &err), 0);
        Runtime__V1__StatusResponse *r = runtime__v1__status_response__unpack(NULL, len, resp);
        free(resp);
        assert_int_equal(r->status->n_conditions, 2);
        assert_string_equal(r->status->conditions[0]->type, "RuntimeReady");
        assert_false(r->status->conditions[0]->status);
        assert_string_equal(r->status->conditions[0]->reason, "DockerDaemonNotReady");
        /* no CNI configuration there: the network is not ready, and why */
        assert_string_equal(r->status->conditions[1]->type, "NetworkReady");
        assert_false(r->status->conditions[1]->status);
        assert_string_equal(r->status->conditions[1]->reason, "NetworkPluginNotReady");
        assert_non_null(strstr(r->status->conditions[1]->message, "/nonexistent"));
        runtime__v1__status_response__free_unpacked(r, NULL);
        shim_free(s);
}

static void test_bad_request_is_invalid_argument(void **state)
{
        (void)state;
        static const uint8_t junk[] = {0xff, 0xff, 0xff};
        uint8_t *resp = NULL;
        size_t len = 0;
        ck_error_t err = NULL;
        assert_int_equal(dockershim_image_status(NULL, junk, sizeof(junk), 0, &resp, &len, &err),
                         -1);
        assert_int_equal(err->code, GRPC_INVALID_ARGUMENT);
        ck_error_release(&err);
        /* no image named */
        Runtime__V1__ImageStatusRequest req = RUNTIME__V1__IMAGE_STATUS_REQUEST__INIT;
        assert_int_equal(call(dockershim_image_status, NULL, &req.base, &resp, &len, &err), -1);
        assert_int_equal(err->code, GRPC_INVALID_ARGUMENT);
        ck_error_release(&err);
}

/* The server's table: a request with a string that is not UTF-8 (here a
 * sandbox ID, and a label value deep in a container's config) is refused
 * as a Go gRPC server refuses it, before the engine is asked anything (a
 * RemovePodSandbox whose label filter could not be encoded once listed,
 * and removed, every container). */
static void test_invalid_utf8_is_refused_before_the_engine(void **state)
{
        (void)state;
        static const struct answer script[] = {{200, VERSION_141}};
        struct fake *f = fake_start_unix(script, 1, sock_path);
        struct dockershim *s = shim_on();
        size_t n = 0;
        struct grpc_method *table = dockershim_methods(s, &n);
        const struct grpc_method *remove = NULL, *create = NULL;
        for (size_t i = 0; i < n; i++) {
                if (strcmp(table[i].path, "/runtime.v1.RuntimeService/RemovePodSandbox") == 0)
                        remove = &table[i];
                if (strcmp(table[i].path, "/runtime.v1.RuntimeService/CreateContainer") == 0)
                        create = &table[i];
        }
        assert_non_null(remove);
        assert_non_null(create);
        uint8_t *req = NULL, *resp = NULL;
        size_t rl = 0, len = 0;
        ck_error_t err = NULL;

        Runtime__V1__RemovePodSandboxRequest rm = RUNTIME__V1__REMOVE_POD_SANDBOX_REQUEST__INIT;
        rm.pod_sandbox_id = (char *)"\xff";
        dockershim_pack(&rm.base, &req, &rl);
        assert_int_equal(remove->fn(remove->ctx, req, rl, 0, &resp, &len, &err), -1);
        free(req);
        assert_int_equal(err->code, GRPC_INTERNAL);
        assert_string_equal(ck_error_msg(err),
                            "RemovePodSandbox: error unmarshalling request: "
                            "string field pod_sandbox_id contains invalid UTF-8");
        ck_error_release(&err);

        Runtime__V1__KeyValue kv = RUNTIME__V1__KEY_VALUE__INIT;
        kv.key = (char *)"app";
        kv.value = (char *)"caf\xc3"; /* a truncated sequence */
        Runtime__V1__KeyValue *kvs[] = {&kv};
        Runtime__V1__ContainerConfig cfg = RUNTIME__V1__CONTAINER_CONFIG__INIT;
        cfg.n_envs = 1;
        cfg.envs = kvs;
        Runtime__V1__CreateContainerRequest cr = RUNTIME__V1__CREATE_CONTAINER_REQUEST__INIT;
        cr.pod_sandbox_id = (char *)"abc";
        cr.config = &cfg;
        dockershim_pack(&cr.base, &req, &rl);
        assert_int_equal(create->fn(create->ctx, req, rl, 0, &resp, &len, &err), -1);
        free(req);
        assert_int_equal(err->code, GRPC_INTERNAL);
        assert_non_null(strstr(ck_error_msg(err), "string field value contains invalid UTF-8"));
        ck_error_release(&err);

        /* valid UTF-8 goes through to the method (no such sandbox here) */
        rm.pod_sandbox_id = (char *)"caf\xc3\xa9";
        dockershim_pack(&rm.base, &req, &rl);
        assert_int_equal(remove->fn(remove->ctx, req, rl, 0, &resp, &len, &err), -1);
        free(req);
        assert_int_not_equal(err->code, GRPC_INTERNAL);
        ck_error_release(&err);
        /* the engine was asked only about that one */
        pthread_mutex_lock(&f->lock);
        for (size_t i = 1; i < f->n_req; i++)
                assert_null(strstr(f->req[i], "%FF"));
        pthread_mutex_unlock(&f->lock);
        free(table);
        free(s->dispatched);
        done(f, s);
}

/* The listen path: a file that is not a socket, or a socket another server
 * answers on, is refused and kept; a stale socket is replaced. */
static void test_start_refuses_a_listen_path_it_does_not_own(void **state)
{
        (void)state;
        static const struct answer script[] = {
            {200, VERSION_141}, {200, "{\"CgroupDriver\":\"cgroupfs\"}"},
            {200, VERSION_141}, {200, "{\"CgroupDriver\":\"cgroupfs\"}"},
            {200, VERSION_141}, {200, "{\"CgroupDriver\":\"cgroupfs\"}"},
        };
        struct fake *f = fake_start_unix(script, 6, sock_path);
        char dir[] = "/tmp/ck-dockershim-listen-XXXXXX";
        assert_non_null(mkdtemp(dir));
        cleanup_free char *ep = xasprintf("unix://%s", sock_path);
        cleanup_free char *file = xasprintf("%s/not-a-socket", dir);
        cleanup_free char *busy = xasprintf("%s/busy.sock", dir);
        cleanup_free char *root = xasprintf("%s/root", dir);
        FILE *fp = fopen(file, "we");
        assert_non_null(fp);
        fclose(fp);
        struct dockershim_options o = {
            .docker_endpoint = ep, .request_timeout_ms = 5000, .root_dir = root};
        struct dockershim *s = NULL;
        ck_error_t err = NULL;

        cleanup_free char *l1 = xasprintf("unix://%s", file);
        o.listen = l1;
        assert_int_equal(dockershim_start(&o, &s, &err), -1);
        cleanup_free char *want = xasprintf("listen `%s`: exists and is not a socket", file);
        assert_string_equal(ck_error_msg(err), want);
        ck_error_release(&err);
        assert_int_equal(access(file, F_OK), 0);

        int srv = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        memcpy(sa.sun_path, busy, strlen(busy) + 1);
        assert_int_equal(bind(srv, (struct sockaddr *)&sa, sizeof(sa)), 0);
        assert_int_equal(listen(srv, 4), 0);
        cleanup_free char *l2 = xasprintf("unix://%s", busy);
        o.listen = l2;
        assert_int_equal(dockershim_start(&o, &s, &err), -1);
        cleanup_free char *want2 = xasprintf("listen `%s`: another server answers there", busy);
        assert_string_equal(ck_error_msg(err), want2);
        ck_error_release(&err);
        assert_int_equal(access(busy, F_OK), 0);
        close(srv);
        /* the same socket, nobody serving it now: replaced, served */
        assert_int_equal(dockershim_start(&o, &s, &err), 0);
        dockershim_stop(s);
        fake_stop(f);
        unlink(sock_path);
        cleanup_free char *cmd = xasprintf("rm -rf '%s'", dir);
        assert_int_equal(system(cmd), 0);
}

static void test_names(void **state)
{
        (void)state;
        cleanup_free char *sb = shim_sandbox_name("web", "default", "u-1", 2);
        assert_string_equal(sb, "k8s_POD_web_default_u-1_2");
        cleanup_free char *c = shim_container_name("app", "web", "default", "u-1", 0);
        assert_string_equal(c, "k8s_app_web_default_u-1_0");
        struct shim_name n;
        assert_int_equal(shim_parse_name("/k8s_POD_web_default_u-1_2", &n), 0);
        assert_string_equal(n.container, "POD");
        assert_string_equal(n.pod, "web");
        assert_string_equal(n.ns, "default");
        assert_string_equal(n.uid, "u-1");
        assert_int_equal(n.attempt, 2);
        shim_name_clear(&n);
        /* a random suffix (cri-dockerd's retry after a name conflict) */
        assert_int_equal(shim_parse_name("k8s_app_web_ns_u_4294967295_0a1b2c3d", &n), 0);
        assert_int_equal(n.attempt, 4294967295u);
        shim_name_clear(&n);
        static const char *const not_ours[] = {"web",
                                               "k8s_a_b_c_d",
                                               "k9s_a_b_c_d_0",
                                               "k8s_a_b_c_d_x",
                                               "k8s_a_b_c_d_4294967296",
                                               "k8s_a__c_d_0",
                                               "k8s_a_b_c_d_0_e_f",
                                               "k8s_a_b_c_d_-1",
                                               "k8s_a_b_c_d_"};
        for (size_t i = 0; i < ARRAY_SIZE(not_ours); i++)
                if (shim_parse_name(not_ours[i], &n) == 0)
                        fail_msg("%s parsed", not_ours[i]);
}

static void test_labels_round_trip(void **state)
{
        (void)state;
        const struct shim_kv labels[] = {{"app", "web"}, {"io.kubernetes.pod.name", "web"}};
        const struct shim_kv ann[] = {{"kubernetes.io/config.seen", "now"}};
        json_t *j = shim_make_labels(labels, 2, ann, 1);
        json_object_set_new(j, SHIM_LABEL_TYPE, json_string(SHIM_TYPE_SANDBOX));
        json_object_set_new(j, SHIM_LABEL_CONTAINER_NAME, json_string("POD"));
        assert_string_equal(
            json_string_value(json_object_get(j, "annotation.kubernetes.io/config.seen")), "now");
        struct shim_map l, a;
        shim_split_labels(j, &runtime__v1__pod_sandbox__labels_entry__descriptor,
                          &runtime__v1__pod_sandbox__annotations_entry__descriptor, &l, &a);
        assert_int_equal(l.n, 2);
        assert_int_equal(a.n, 1);
        assert_string_equal(a.entries[0]->key, "kubernetes.io/config.seen");
        assert_string_equal(a.entries[0]->value, "now");
        /* packable as the message's own map entries */
        Runtime__V1__PodSandbox ps = RUNTIME__V1__POD_SANDBOX__INIT;
        ps.n_labels = l.n;
        ps.labels = (Runtime__V1__PodSandbox__LabelsEntry **)l.entries;
        ps.n_annotations = a.n;
        ps.annotations = (Runtime__V1__PodSandbox__AnnotationsEntry **)a.entries;
        uint8_t *buf = NULL;
        size_t len = 0;
        dockershim_pack(&ps.base, &buf, &len);
        Runtime__V1__PodSandbox *back = runtime__v1__pod_sandbox__unpack(NULL, len, buf);
        assert_non_null(back);
        assert_int_equal(back->n_labels, 2);
        assert_int_equal(back->n_annotations, 1);
        runtime__v1__pod_sandbox__free_unpacked(back, NULL);
        free(buf);
        shim_map_clear(&l);
        shim_map_clear(&a);
        json_decref(j);
}

/* The checksums cri-dockerd computes (Go's spew, FNV-1a 32) for three
 * checkpoints, so that the files are the same. */
static void test_checkpoint_matches_cri_dockerd(void **state)
{
        (void)state;
        struct shim_checkpoint c = {.name = (char *)"web", .ns = (char *)"default"};
        assert_true(shim_checkpoint_checksum(&c) == 2305795928u);
        c.host_network = true;
        assert_true(shim_checkpoint_checksum(&c) == 12315789u);
        struct shim_port p = {(char *)"tcp", 80, 8080, (char *)""};
        c.host_network = false;
        c.ports_present = true;
        c.ports = &p;
        c.n_ports = 1;
        assert_true(shim_checkpoint_checksum(&c) == 3712672205u);

        cleanup_free char *text = shim_checkpoint_encode(&c);
        assert_string_equal(text, "{\"version\":\"v1\",\"name\":\"web\",\"namespace\":\"default\","
                                  "\"data\":{\"port_mappings\":[{\"protocol\":\"tcp\","
                                  "\"container_port\":80,\"host_port\":8080}]},"
                                  "\"checksum\":3712672205}");
        struct shim_checkpoint back;
        ck_error_t err = NULL;
        assert_int_equal(shim_checkpoint_decode(text, strlen(text), &back, &err), 0);
        assert_string_equal(back.name, "web");
        assert_int_equal(back.n_ports, 1);
        assert_int_equal(back.ports[0].host_port, 8080);
        shim_checkpoint_clear(&back);

        /* a changed byte: corrupted */
        char *edit = strstr(text, "8080");
        edit[0] = '9';
        assert_int_equal(shim_checkpoint_decode(text, strlen(text), &back, &err), -1);
        assert_string_equal(ck_error_msg(err), "checkpoint is corrupted: checksum mismatch");
        ck_error_release(&err);
}

static void test_checkpoint_files(void **state)
{
        (void)state;
        char dir[] = "/tmp/ck-shim-ckpt-XXXXXX";
        assert_non_null(mkdtemp(dir));
        cleanup_free char *sub = xasprintf("%s/sandbox", dir);
        struct shim_checkpoint c = {
            .name = (char *)"web", .ns = (char *)"ns", .host_network = true};
        ck_error_t err = NULL;
        assert_int_equal(shim_checkpoint_write(sub, "abc", &c, &err), 0);
        char **ids = NULL;
        size_t n = 0;
        assert_int_equal(shim_checkpoint_list(sub, &ids, &n, &err), 0);
        assert_int_equal(n, 1);
        assert_string_equal(ids[0], "abc");
        free(ids[0]);
        free(ids);
        struct shim_checkpoint back;
        assert_int_equal(shim_checkpoint_read(sub, "abc", &back, &err), 0);
        assert_true(back.host_network);
        shim_checkpoint_clear(&back);
        assert_int_equal(shim_checkpoint_remove(sub, "abc", &err), 0);
        assert_int_equal(shim_checkpoint_remove(sub, "abc", &err), 0);
        assert_int_equal(shim_checkpoint_read(sub, "abc", &back, &err), -1);
        assert_int_equal(err->status, ENOENT);
        ck_error_release(&err);
        /* a name that would leave the directory */
        assert_int_equal(shim_checkpoint_write(sub, "../x", &c, &err), -1);
        ck_error_release(&err);
        rmdir(sub);
        rmdir(dir);
}

/* The shim with a root directory of its own (for checkpoints). */
static struct dockershim *shim_with_root(char *dir)
{
        struct dockershim *s = shim_on();
        assert_non_null(mkdtemp(dir));
        s->root_dir = xstrdup(dir);
        return s;
}

/* A host-network sandbox: the engine's create request as cri-dockerd
 * makes it, the checkpoint, the DNS file written, no CNI. */
static void test_run_pod_sandbox_on_the_host_network(void **state)
{
        (void)state;
        char dir[] = "/tmp/ck-shim-sb-XXXXXX";
        char resolv[] = "/tmp/ck-shim-resolv-XXXXXX";
        int rfd = mkstemp(resolv);
        assert_true(rfd >= 0);
        assert_int_equal(write(rfd, "old\n", 4), 4);
        close(rfd);
        cleanup_free char *inspect =
            xasprintf("{\"Id\":\"s1\",\"Name\":\"/k8s_POD_web_ns_u1_0\",\"ResolvConfPath\":\"%s\","
                      "\"HostConfig\":{\"NetworkMode\":\"host\"},\"State\":{\"Running\":true}}",
                      resolv);
        const struct answer script[] = {
            {200, VERSION_141},
            {200, "{\"Id\":\"sha256:p\",\"RepoTags\":[\"localhost/pause:3.10\"]}"},
            {201, "{\"Id\":\"s1\",\"Warnings\":[]}"},
            {204, ""},
            {200, inspect},
        };
        struct fake *f = fake_start_unix(script, 5, sock_path);
        struct dockershim *s = shim_with_root(dir);

        Runtime__V1__PodSandboxMetadata md = RUNTIME__V1__POD_SANDBOX_METADATA__INIT;
        md.name = (char *)"web";
        md.namespace_ = (char *)"ns";
        md.uid = (char *)"u1";
        Runtime__V1__NamespaceOption nso = RUNTIME__V1__NAMESPACE_OPTION__INIT;
        nso.network = RUNTIME__V1__NAMESPACE_MODE__NODE;
        Runtime__V1__LinuxSandboxSecurityContext sc =
            RUNTIME__V1__LINUX_SANDBOX_SECURITY_CONTEXT__INIT;
        sc.namespace_options = &nso;
        Runtime__V1__LinuxPodSandboxConfig lx = RUNTIME__V1__LINUX_POD_SANDBOX_CONFIG__INIT;
        lx.security_context = &sc;
        lx.cgroup_parent = (char *)"/kubepods/besteffort/podu1";
        Runtime__V1__PodSandboxConfig__AnnotationsEntry a1 =
            RUNTIME__V1__POD_SANDBOX_CONFIG__ANNOTATIONS_ENTRY__INIT;
        a1.key = (char *)"note";
        a1.value = (char *)"kept";
        Runtime__V1__PodSandboxConfig__AnnotationsEntry *anns[] = {&a1};
        char *servers[] = {(char *)"10.0.0.10"};
        char *searches[] = {(char *)"a.svc", (char *)"svc"};
        Runtime__V1__DNSConfig dns = RUNTIME__V1__DNSCONFIG__INIT;
        dns.n_servers = 1;
        dns.servers = servers;
        dns.n_searches = 2;
        dns.searches = searches;
        Runtime__V1__PodSandboxConfig cfg = RUNTIME__V1__POD_SANDBOX_CONFIG__INIT;
        cfg.metadata = &md;
        cfg.hostname = (char *)"web";
        cfg.linux = &lx;
        cfg.dns_config = &dns;
        cfg.n_annotations = 1;
        cfg.annotations = anns;
        Runtime__V1__RunPodSandboxRequest req = RUNTIME__V1__RUN_POD_SANDBOX_REQUEST__INIT;
        req.config = &cfg;
        uint8_t *resp = NULL;
        size_t len = 0;
        ck_error_t err = NULL;
        if (call(dockershim_run_pod_sandbox, s, &req.base, &resp, &len, &err) < 0)
                fail_msg("%s", ck_error_msg(err));
        Runtime__V1__RunPodSandboxResponse *r =
            runtime__v1__run_pod_sandbox_response__unpack(NULL, len, resp);
        assert_string_equal(r->pod_sandbox_id, "s1");
        runtime__v1__run_pod_sandbox_response__free_unpacked(r, NULL);
        free(resp);

        assert_string_equal(f->req[2], "POST /v1.41/containers/create?name=k8s_POD_web_ns_u1_0");
        json_t *body = json_loads(f->body[2], 0, NULL);
        assert_non_null(body);
        assert_string_equal(json_string_value(json_object_get(body, "Image")),
                            "localhost/pause:3.10");
        assert_string_equal(json_string_value(json_object_get(body, "Hostname")), "web");
        json_t *labels = json_object_get(body, "Labels");
        assert_string_equal(json_string_value(json_object_get(labels, "io.kubernetes.docker.type")),
                            "podsandbox");
        assert_string_equal(json_string_value(json_object_get(labels, "annotation.note")), "kept");
        json_t *host = json_object_get(body, "HostConfig");
        assert_string_equal(json_string_value(json_object_get(host, "NetworkMode")), "host");
        assert_string_equal(json_string_value(json_object_get(host, "IpcMode")), "shareable");
        assert_int_equal(json_integer_value(json_object_get(host, "OomScoreAdj")), -998);
        assert_int_equal(json_integer_value(json_object_get(host, "CpuShares")), 2);
        assert_string_equal(json_string_value(json_object_get(host, "CgroupParent")),
                            "/kubepods/besteffort/podu1");
        assert_string_equal(
            json_string_value(json_array_get(json_object_get(host, "SecurityOpt"), 0)),
            "no-new-privileges");
        json_decref(body);
        assert_string_equal(f->req[3], "POST /v1.41/containers/s1/start");

        /* the checkpoint, before the start; the DNS file after */
        struct shim_checkpoint cp;
        cleanup_free char *cpdir = xasprintf("%s/sandbox", dir);
        assert_int_equal(shim_checkpoint_read(cpdir, "s1", &cp, &err), 0);
        assert_string_equal(cp.name, "web");
        assert_true(cp.host_network);
        shim_checkpoint_clear(&cp);
        cleanup_free char *dnsfile = NULL;
        size_t dl = 0;
        assert_int_equal(fs_read_file(resolv, 4096, &dnsfile, &dl, &err), 0);
        assert_string_equal(dnsfile, "nameserver 10.0.0.10\nsearch a.svc svc\n");

        assert_int_equal(shim_checkpoint_remove(cpdir, "s1", &err), 0);
        rmdir(cpdir);
        rmdir(dir);
        unlink(resolv);
        done(f, s);
}

/* The engine's create request of a container: command and args, env,
 * binds, devices, resources, namespaces, security context. */
static void test_create_container_request(void **state)
{
        (void)state;
        static const struct answer script[] = {
            {200, VERSION_141},
            {201, "{\"Id\":\"c1\"}"},
        };
        struct fake *f = fake_start_unix(script, 2, sock_path);
        struct dockershim *s = shim_on();
        s->restrict_oom_score_adj = true;
        s->own_oom_score_adj = 0;

        Runtime__V1__PodSandboxMetadata smd = RUNTIME__V1__POD_SANDBOX_METADATA__INIT;
        smd.name = (char *)"web";
        smd.namespace_ = (char *)"ns";
        smd.uid = (char *)"u1";
        Runtime__V1__PodSandboxConfig sbc = RUNTIME__V1__POD_SANDBOX_CONFIG__INIT;
        sbc.metadata = &smd;
        sbc.log_directory = (char *)"/var/log/pods/ns_web_u1";
        Runtime__V1__ContainerMetadata md = RUNTIME__V1__CONTAINER_METADATA__INIT;
        md.name = (char *)"app";
        md.attempt = 2;
        Runtime__V1__ImageSpec img = RUNTIME__V1__IMAGE_SPEC__INIT;
        img.image = (char *)"busybox:1";
        char *cmd[] = {(char *)"sh"};
        char *args[] = {(char *)"-c", (char *)"sleep 1"};
        Runtime__V1__KeyValue e1 = RUNTIME__V1__KEY_VALUE__INIT;
        e1.key = (char *)"A";
        e1.value = (char *)"b=c";
        Runtime__V1__KeyValue *envs[] = {&e1};
        Runtime__V1__Mount m1 = RUNTIME__V1__MOUNT__INIT;
        m1.host_path = (char *)"/h";
        m1.container_path = (char *)"/c";
        m1.readonly = true;
        m1.propagation = RUNTIME__V1__MOUNT_PROPAGATION__PROPAGATION_HOST_TO_CONTAINER;
        Runtime__V1__Mount m2 = RUNTIME__V1__MOUNT__INIT;
        m2.host_path = (char *)"/h2";
        m2.container_path = (char *)"/c2";
        Runtime__V1__Mount *mounts[] = {&m1, &m2};
        Runtime__V1__LinuxContainerResources res = RUNTIME__V1__LINUX_CONTAINER_RESOURCES__INIT;
        res.memory_limit_in_bytes = 64 << 20;
        res.cpu_shares = 512;
        res.cpu_quota = 50000;
        res.cpu_period = 100000;
        res.oom_score_adj = -997;
        Runtime__V1__Int64Value uid = RUNTIME__V1__INT64_VALUE__INIT,
                                gid = RUNTIME__V1__INT64_VALUE__INIT;
        uid.value = 1000;
        gid.value = 2000;
        char *add[] = {(char *)"NET_ADMIN"};
        char *drop[] = {(char *)"ALL"};
        Runtime__V1__Capability caps = RUNTIME__V1__CAPABILITY__INIT;
        caps.n_add_capabilities = 1;
        caps.add_capabilities = add;
        caps.n_drop_capabilities = 1;
        caps.drop_capabilities = drop;
        Runtime__V1__NamespaceOption nso = RUNTIME__V1__NAMESPACE_OPTION__INIT;
        nso.pid = RUNTIME__V1__NAMESPACE_MODE__POD;
        Runtime__V1__SecurityProfile seccomp = RUNTIME__V1__SECURITY_PROFILE__INIT;
        seccomp.profile_type = RUNTIME__V1__SECURITY_PROFILE__PROFILE_TYPE__RuntimeDefault;
        Runtime__V1__LinuxContainerSecurityContext sc =
            RUNTIME__V1__LINUX_CONTAINER_SECURITY_CONTEXT__INIT;
        sc.run_as_user = &uid;
        sc.run_as_group = &gid;
        sc.capabilities = &caps;
        sc.namespace_options = &nso;
        sc.no_new_privs = true;
        sc.seccomp = &seccomp;
        Runtime__V1__LinuxContainerConfig lx = RUNTIME__V1__LINUX_CONTAINER_CONFIG__INIT;
        lx.resources = &res;
        lx.security_context = &sc;
        Runtime__V1__ContainerConfig c = RUNTIME__V1__CONTAINER_CONFIG__INIT;
        c.metadata = &md;
        c.image = &img;
        c.n_command = 1;
        c.command = cmd;
        c.n_args = 2;
        c.args = args;
        c.n_envs = 1;
        c.envs = envs;
        c.n_mounts = 2;
        c.mounts = mounts;
        c.log_path = (char *)"app/2.log";
        c.linux = &lx;
        Runtime__V1__CreateContainerRequest req = RUNTIME__V1__CREATE_CONTAINER_REQUEST__INIT;
        req.pod_sandbox_id = (char *)"s1";
        req.config = &c;
        req.sandbox_config = &sbc;
        uint8_t *resp = NULL;
        size_t len = 0;
        ck_error_t err = NULL;
        if (call(dockershim_create_container, s, &req.base, &resp, &len, &err) < 0)
                fail_msg("%s", ck_error_msg(err));
        free(resp);
        assert_string_equal(f->req[1], "POST /v1.41/containers/create?name=k8s_app_web_ns_u1_2");
        json_t *b = json_loads(f->body[1], 0, NULL);
        assert_non_null(b);
        cleanup_free char *text = json_dumps(b, JSON_SORT_KEYS | JSON_COMPACT);
        json_t *h = json_object_get(b, "HostConfig");
#define HAS(j, key, want)                                                                          \
        do {                                                                                       \
                cleanup_free char *got_ =                                                          \
                    json_dumps(json_object_get(j, key), JSON_ENCODE_ANY | JSON_COMPACT);           \
                if (strcmp(got_, want) != 0)                                                       \
                        fail_msg("%s: got %s, want %s (in %s)", key, got_, want, text);            \
        } while (0)
        HAS(b, "Entrypoint", "[\"sh\"]");
        HAS(b, "Cmd", "[\"-c\",\"sleep 1\"]");
        HAS(b, "Env", "[\"A=b=c\"]");
        HAS(b, "User", "\"1000:2000\"");
        HAS(json_object_get(b, "Labels"), "io.kubernetes.container.logpath",
            "\"/var/log/pods/ns_web_u1/app/2.log\"");
        HAS(json_object_get(b, "Labels"), "io.kubernetes.sandbox.id", "\"s1\"");
        HAS(h, "Binds", "[\"/h:/c:ro,rslave\",\"/h2:/c2\"]");
        HAS(h, "NetworkMode", "\"container:s1\"");
        HAS(h, "IpcMode", "\"container:s1\"");
        HAS(h, "PidMode", "\"container:s1\"");
        HAS(h, "Memory", "67108864");
        HAS(h, "MemorySwap", "67108864");
        HAS(h, "CpuShares", "512");
        HAS(h, "CpuQuota", "50000");
        HAS(h, "OomScoreAdj", "0"); /* restricted: not below the shim's own */
        HAS(h, "CapAdd", "[\"NET_ADMIN\"]");
        HAS(h, "CapDrop", "[\"ALL\"]");
        HAS(h, "SecurityOpt", "[\"no-new-privileges\"]");
        /* the engine's default logging driver and options, as cri-dockerd */
        assert_null(json_object_get(h, "LogConfig"));
#undef HAS
        json_decref(b);
        done(f, s);
}

static void test_container_status(void **state)
{
        (void)state;
        static const struct answer script[] = {
            {200, VERSION_141},
            {200, "{\"Id\":\"c1\",\"Name\":\"/k8s_app_web_ns_u1_2\","
                  "\"Created\":\"2026-12-03T10:00:00Z\",\"Image\":\"sha256:i\","
                  "\"State\":{\"Running\":false,\"OOMKilled\":true,\"ExitCode\":137,"
                  "\"StartedAt\":\"2026-12-03T10:00:01Z\",\"FinishedAt\":\"2026-12-03T10:00:02Z\"},"
                  "\"Config\":{\"Image\":\"busybox\",\"Labels\":{\"io.kubernetes.docker.type\":"
                  "\"container\",\"io.kubernetes.container.logpath\":\"/l/app.log\","
                  "\"io.kubernetes.sandbox.id\":\"s1\",\"app\":\"web\"}},"
                  "\"Mounts\":[{\"Source\":\"/h\",\"Destination\":\"/c\",\"RW\":false}]}"},
            {200, "{\"Id\":\"sha256:i\",\"RepoTags\":[\"busybox:1\"],"
                  "\"RepoDigests\":[\"busybox@sha256:d\"]}"},
        };
        struct fake *f = fake_start_unix(script, 3, sock_path);
        struct dockershim *s = shim_on();
        Runtime__V1__ContainerStatusRequest req = RUNTIME__V1__CONTAINER_STATUS_REQUEST__INIT;
        req.container_id = (char *)"c1";
        uint8_t *resp = NULL;
        size_t len = 0;
        ck_error_t err = NULL;
        if (call(dockershim_container_status, s, &req.base, &resp, &len, &err) < 0)
                fail_msg("%s", ck_error_msg(err));
        Runtime__V1__ContainerStatusResponse *r =
            runtime__v1__container_status_response__unpack(NULL, len, resp);
        free(resp);
        Runtime__V1__ContainerStatus *st = r->status;
        assert_string_equal(st->metadata->name, "app");
        assert_int_equal(st->metadata->attempt, 2);
        assert_int_equal(st->state, RUNTIME__V1__CONTAINER_STATE__CONTAINER_EXITED);
        assert_string_equal(st->reason, "OOMKilled");
        assert_int_equal(st->exit_code, 137);
        assert_true(st->started_at == 1796292001000000000LL);
        assert_true(st->finished_at == 1796292002000000000LL);
        assert_string_equal(st->image->image, "busybox:1");
        assert_string_equal(st->image_ref, "docker-pullable://busybox@sha256:d");
        assert_string_equal(st->log_path, "/l/app.log");
        assert_int_equal(st->n_labels, 1);
        assert_string_equal(st->labels[0]->key, "app");
        assert_int_equal(st->n_mounts, 1);
        assert_true(st->mounts[0]->readonly);
        runtime__v1__container_status_response__free_unpacked(r, NULL);
        done(f, s);
}

static void test_list_container_stats(void **state)
{
        (void)state;
        static const struct answer script[] = {
            {200, VERSION_141},
            {200, "[{\"Id\":\"c1\",\"Names\":[\"/k8s_app_web_ns_u1_0\"],\"State\":\"running\","
                  "\"Labels\":{\"io.kubernetes.docker.type\":\"container\",\"app\":\"web\"}},"
                  "{\"Id\":\"x\",\"Names\":[\"/not-ours\"],\"Labels\":{}}]"},
            {200, "{\"read\":\"2026-12-03T10:00:00Z\",\"cpu_stats\":{\"cpu_usage\":"
                  "{\"total_usage\":123456789}},\"memory_stats\":{\"usage\":10485760,"
                  "\"stats\":{\"total_inactive_file\":1048576,\"inactive_file\":5}}}"},
        };
        struct fake *f = fake_start_unix(script, 3, sock_path);
        struct dockershim *s = shim_on();
        Runtime__V1__ListContainerStatsRequest req =
            RUNTIME__V1__LIST_CONTAINER_STATS_REQUEST__INIT;
        uint8_t *resp = NULL;
        size_t len = 0;
        ck_error_t err = NULL;
        if (call(dockershim_list_container_stats, s, &req.base, &resp, &len, &err) < 0)
                fail_msg("%s", ck_error_msg(err));
        Runtime__V1__ListContainerStatsResponse *r =
            runtime__v1__list_container_stats_response__unpack(NULL, len, resp);
        free(resp);
        assert_int_equal(r->n_stats, 1);
        Runtime__V1__ContainerStats *st = r->stats[0];
        assert_string_equal(st->attributes->id, "c1");
        assert_string_equal(st->attributes->metadata->name, "app");
        assert_int_equal(st->attributes->n_labels, 1);
        assert_true(st->cpu->usage_core_nano_seconds->value == 123456789);
        assert_true(st->cpu->timestamp == 1796292000000000000LL);
        assert_true(st->memory->usage_bytes->value == 10485760);
        /* the working set as cAdvisor counts it: usage less inactive files */
        assert_true(st->memory->working_set_bytes->value == 10485760 - 1048576);
        runtime__v1__list_container_stats_response__free_unpacked(r, NULL);
        assert_string_equal(f->req[2], "GET /v1.41/containers/c1/stats?stream=false&one-shot=true");
        /* only running containers, ours */
        assert_non_null(strstr(f->req[1], "all=0"));
        done(f, s);
}

static void test_container_stats(void **state)
{
        (void)state;
        static const struct answer script[] = {
            {200, VERSION_141},
            {200, "[{\"Id\":\"c1\",\"Names\":[\"/k8s_app_web_ns_u1_0\"],\"State\":\"running\","
                  "\"Labels\":{\"io.kubernetes.docker.type\":\"container\"}}]"},
            {200, "{\"read\":\"2026-12-03T10:00:00Z\",\"cpu_stats\":{\"cpu_usage\":"
                  "{\"total_usage\":42}},\"memory_stats\":{\"usage\":2048}}"},
            {200, "[]"},
        };
        struct fake *f = fake_start_unix(script, 4, sock_path);
        struct dockershim *s = shim_on();
        Runtime__V1__ContainerStatsRequest req = RUNTIME__V1__CONTAINER_STATS_REQUEST__INIT;
        req.container_id = "c1";
        uint8_t *resp = NULL;
        size_t len = 0;
        ck_error_t err = NULL;
        if (call(dockershim_container_stats, s, &req.base, &resp, &len, &err) < 0)
                fail_msg("%s", ck_error_msg(err));
        Runtime__V1__ContainerStatsResponse *r =
            runtime__v1__container_stats_response__unpack(NULL, len, resp);
        free(resp);
        assert_string_equal(r->stats->attributes->id, "c1");
        assert_true(r->stats->cpu->usage_core_nano_seconds->value == 42);
        runtime__v1__container_stats_response__free_unpacked(r, NULL);
        /* the engine asked for that container only */
        assert_non_null(strstr(f->req[1], "c1"));
        /* a container that does not run: NotFound */
        req.container_id = "gone";
        assert_int_equal(call(dockershim_container_stats, s, &req.base, &resp, &len, &err), -1);
        assert_int_equal(err->code, GRPC_NOT_FOUND);
        ck_error_release(&err);
        done(f, s);
}

/* The engine's filters of a recorded list request ("GET
 * /v1.41/containers/json?all=..&filters=<escaped JSON>"). */
static json_t *list_filters(const char *req)
{
        const char *q = strstr(req, "filters=");
        assert_non_null(q);
        q += strlen("filters=");
        cleanup_free char *text = http_path_unescape(q, strlen(q));
        assert_non_null(text);
        json_t *j = json_loads(text, 0, NULL);
        assert_non_null(j);
        return j;
}

/* Whether the JSON array a holds the string v. */
static bool has_string(const json_t *a, const char *v)
{
        size_t i;
        json_t *e;
        json_array_foreach(a, i, e)
        {
                if (json_is_string(e) && strcmp(json_string_value(e), v) == 0)
                        return true;
        }
        return false;
}

#define NET_DEV_HEAD                                                                               \
        "Inter-|   Receive                                                |  Transmit\n"           \
        " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs " \
        "drop fifo colls carrier compressed\n"

/* /proc/<pid>/net/dev: the header lines, lo and malformed lines skipped,
 * a name padded with spaces or touching its counters. */
static void test_parse_net_dev(void **state)
{
        (void)state;
        struct shim_netdev *v = NULL;
        size_t n = 0;
        shim_parse_net_dev(
            NET_DEV_HEAD "    lo:     100       1    0    0    0     0          0         0"
                         "      100       1    0    0    0     0       0          0\n"
                         "  eth0: 1500      10    2    0    0     0          0         0"
                         "     2500      20    3    0    0     0       0          0\n"
                         "broken: 1 2 3\n"
                         "  bad0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 x\n"
                         "  big0: 18446744073709551616 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
                         " long0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n"
                         "  : 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n"
                         "veth1234567:4294967296 7 8 0 0 0 0 0 18446744073709551615 0 9 0 0 0 0 0",
            &v, &n);
        assert_int_equal(n, 2);
        assert_string_equal(v[0].name, "eth0");
        assert_true(v[0].rx_bytes == 1500);
        assert_true(v[0].rx_errors == 2);
        assert_true(v[0].tx_bytes == 2500);
        assert_true(v[0].tx_errors == 3);
        /* a long name touches its first counter; no newline at the end */
        assert_string_equal(v[1].name, "veth1234567");
        assert_true(v[1].rx_bytes == 4294967296ULL);
        assert_true(v[1].rx_errors == 8);
        assert_true(v[1].tx_bytes == UINT64_MAX);
        assert_true(v[1].tx_errors == 9);
        shim_netdevs_free(v, n);

        shim_parse_net_dev(NET_DEV_HEAD, &v, &n);
        assert_int_equal(n, 0);
        shim_netdevs_free(v, n);
        shim_parse_net_dev("", &v, &n);
        assert_int_equal(n, 0);
        shim_netdevs_free(v, n);
}

#define SANDBOX_INSPECT(id, running, pid)                                                          \
        "{\"Id\":\"" id "\",\"Name\":\"/k8s_POD_web_ns_u1_3\",\"State\":{\"Running\":" running     \
        ",\"Pid\":" pid "},\"HostConfig\":{\"NetworkMode\":\"none\"},\"Config\":{\"Labels\":{"     \
        "\"io.kubernetes.docker.type\":\"podsandbox\",\"io.kubernetes.container.name\":\"POD\","   \
        "\"app\":\"web\",\"annotation.note\":\"kept\"}}}"

/* A running sandbox with one container: CPU, memory and processes the
 * sums of the container's and the pause container's, stamped with the
 * newer read; the container's own stats; the attributes as ListPodSandbox
 * gives them; the network of the pause process's net/dev. */
static void test_pod_sandbox_stats(void **state)
{
        (void)state;
        static const struct answer script[] = {
            {200, VERSION_141},
            {200, SANDBOX_INSPECT("s1full", "true", "4242")},
            {200, "{\"read\":\"2026-12-03T10:00:00Z\",\"pids_stats\":{\"current\":1},"
                  "\"cpu_stats\":{\"cpu_usage\":{\"total_usage\":100}},"
                  "\"memory_stats\":{\"usage\":1000,\"stats\":{\"inactive_file\":100}}}"},
            {200, "[{\"Id\":\"c1\",\"Names\":[\"/k8s_app_web_ns_u1_0\"],\"State\":\"running\","
                  "\"Labels\":{\"io.kubernetes.docker.type\":\"container\","
                  "\"io.kubernetes.sandbox.id\":\"s1full\"}}]"},
            {200, "{\"read\":\"2026-12-03T10:00:01Z\",\"pids_stats\":{\"current\":3},"
                  "\"cpu_stats\":{\"cpu_usage\":{\"total_usage\":2000}},"
                  "\"memory_stats\":{\"usage\":5000,\"stats\":{\"inactive_file\":1000}}}"},
        };
        struct fake *f = fake_start_unix(script, 5, sock_path);
        struct dockershim *s = shim_on();
        /* the pause process's /proc/<pid>/net/dev */
        char proc[] = "/tmp/ck-shim-proc-XXXXXX";
        assert_non_null(mkdtemp(proc));
        s->proc_root = xstrdup(proc);
        cleanup_free char *netdir = xasprintf("%s/4242/net", proc);
        ck_error_t err = NULL;
        assert_int_equal(fs_mkdir_p(netdir, 0700, &err), 0);
        cleanup_free char *netdev = xasprintf("%s/dev", netdir);
        static const char text[] = NET_DEV_HEAD "    lo: 7 1 0 0 0 0 0 0 7 1 0 0 0 0 0 0\n"
                                                "  eth0: 1500 10 2 0 0 0 0 0 2500 20 3 0 0 0 0 0\n"
                                                "  net1: 11 1 0 0 0 0 0 0 22 2 0 0 0 0 0 0\n";
        assert_int_equal(fs_write_file_atomic(netdev, text, strlen(text), 0600, &err), 0);

        Runtime__V1__PodSandboxStatsRequest req = RUNTIME__V1__POD_SANDBOX_STATS_REQUEST__INIT;
        req.pod_sandbox_id = (char *)"s1";
        uint8_t *resp = NULL;
        size_t len = 0;
        if (call(dockershim_pod_sandbox_stats, s, &req.base, &resp, &len, &err) < 0)
                fail_msg("%s", ck_error_msg(err));
        Runtime__V1__PodSandboxStatsResponse *r =
            runtime__v1__pod_sandbox_stats_response__unpack(NULL, len, resp);
        free(resp);
        assert_non_null(r);
        const Runtime__V1__PodSandboxStats *st = r->stats;
        /* the attributes: the full ID, the metadata of the name, the CRI
         * labels and annotations (the shim's own labels left out) */
        assert_string_equal(st->attributes->id, "s1full");
        assert_string_equal(st->attributes->metadata->name, "web");
        assert_string_equal(st->attributes->metadata->namespace_, "ns");
        assert_string_equal(st->attributes->metadata->uid, "u1");
        assert_int_equal(st->attributes->metadata->attempt, 3);
        assert_int_equal(st->attributes->n_labels, 1);
        assert_string_equal(st->attributes->labels[0]->key, "app");
        assert_string_equal(st->attributes->labels[0]->value, "web");
        assert_int_equal(st->attributes->n_annotations, 1);
        assert_string_equal(st->attributes->annotations[0]->key, "note");
        assert_string_equal(st->attributes->annotations[0]->value, "kept");
        /* the sums, stamped with the newer read */
        const Runtime__V1__LinuxPodSandboxStats *lx = st->linux;
        assert_non_null(lx);
        assert_true(lx->cpu->usage_core_nano_seconds->value == 2100);
        assert_true(lx->cpu->timestamp == 1796292001000000000LL);
        assert_true(lx->memory->usage_bytes->value == 6000);
        assert_true(lx->memory->working_set_bytes->value == 900 + 4000);
        assert_true(lx->memory->timestamp == 1796292001000000000LL);
        assert_true(lx->process->process_count->value == 4);
        assert_true(lx->process->timestamp == 1796292001000000000LL);
        /* the container's own */
        assert_int_equal(lx->n_containers, 1);
        assert_string_equal(lx->containers[0]->attributes->id, "c1");
        assert_string_equal(lx->containers[0]->attributes->metadata->name, "app");
        assert_true(lx->containers[0]->cpu->usage_core_nano_seconds->value == 2000);
        assert_true(lx->containers[0]->memory->working_set_bytes->value == 4000);
        /* the network: every interface but lo, eth0 the default */
        assert_non_null(lx->network);
        assert_true(lx->network->timestamp > 0);
        assert_int_equal(lx->network->n_interfaces, 2);
        assert_string_equal(lx->network->interfaces[0]->name, "eth0");
        assert_string_equal(lx->network->interfaces[1]->name, "net1");
        assert_true(lx->network->interfaces[1]->tx_bytes->value == 22);
        const Runtime__V1__NetworkInterfaceUsage *d = lx->network->default_interface;
        assert_non_null(d);
        assert_string_equal(d->name, "eth0");
        assert_true(d->rx_bytes->value == 1500);
        assert_true(d->rx_errors->value == 2);
        assert_true(d->tx_bytes->value == 2500);
        assert_true(d->tx_errors->value == 3);
        runtime__v1__pod_sandbox_stats_response__free_unpacked(r, NULL);

        /* what the engine was asked: the sandbox (by the ID given), its
         * stats, its running containers (by the full ID), theirs */
        assert_string_equal(f->req[1], "GET /v1.41/containers/s1/json");
        assert_string_equal(f->req[2],
                            "GET /v1.41/containers/s1full/stats?stream=false&one-shot=true");
        assert_non_null(strstr(f->req[3], "all=0"));
        json_t *flt = list_filters(f->req[3]);
        assert_true(has_string(json_object_get(flt, "label"), "io.kubernetes.sandbox.id=s1full"));
        assert_true(
            has_string(json_object_get(flt, "label"), "io.kubernetes.docker.type=container"));
        json_decref(flt);
        assert_string_equal(f->req[4], "GET /v1.41/containers/c1/stats?stream=false&one-shot=true");
        assert_int_equal(fs_remove_all(proc, &err), 0);
        done(f, s);
}

/* The engine's name-conflict message: the ID of the container that holds
 * the name; another message: none. */
static void test_conflicting_id(void **state)
{
        (void)state;
        char *id = shim_conflicting_id(
            "create container `k8s_a_p_ns_u_0`: Conflict. The container name \"/k8s_a_p_ns_u_0\" "
            "is already in use by container \"0a1b2c\". You have to remove (or rename) that "
            "container to be able to reuse that name.");
        assert_string_equal(id, "0a1b2c");
        free(id);
        id = shim_conflicting_id("Conflict. x is already in use by container 77ff");
        assert_string_equal(id, "77ff");
        free(id);
        assert_null(shim_conflicting_id("Conflict. You cannot remove a running container"));
        assert_null(shim_conflicting_id("is already in use by container \"0a\""));
        assert_null(shim_conflicting_id(NULL));
        /* the randomized name still parses, as the same pod's */
        char *r = shim_name_randomized("k8s_app_web_ns_u1_2");
        assert_int_equal(strlen(r), strlen("k8s_app_web_ns_u1_2") + 9);
        struct shim_name n;
        assert_int_equal(shim_parse_name(r, &n), 0);
        assert_string_equal(n.container, "app");
        assert_string_equal(n.uid, "u1");
        assert_int_equal(n.attempt, 2);
        shim_name_clear(&n);
        free(r);
}

/* cri-dockerd's recovery from a name in use: the container holding it is
 * removed (not forced) and the create fails, for the next try; when the
 * engine does not know that container, the create is tried again under a
 * randomized name. */
static void test_create_name_conflict(void **state)
{
        (void)state;
#define CONFLICT                                                                                   \
        "{\"message\":\"Conflict. The container name \\\"/k8s_app_web_ns_u1_2\\\" is already in "  \
        "use by container \\\"dead01\\\". You have to remove (or rename) that container to be "    \
        "able to reuse that name.\"}"
        static const struct answer script[] = {
            {200, VERSION_141},
            {409, CONFLICT},
            {204, ""},
            {409, CONFLICT},
            {404, "{\"message\":\"No such container: dead01\"}"},
            {201, "{\"Id\":\"new1\"}"},
        };
#undef CONFLICT
        struct fake *f = fake_start_unix(script, 6, sock_path);
        struct dockershim *s = shim_on();
        json_t *cfg = json_pack("{s:s}", "Image", "busybox");
        char *id = NULL;
        ck_error_t err = NULL;
        assert_int_equal(shim_container_create(s, "k8s_app_web_ns_u1_2", cfg, &id, &err), -1);
        assert_non_null(strstr(ck_error_msg(err), "is already in use"));
        ck_error_release(&err);
        assert_null(id);
        assert_string_equal(f->req[2], "DELETE /v1.41/containers/dead01?v=1");
        if (shim_container_create(s, "k8s_app_web_ns_u1_2", cfg, &id, &err) < 0)
                fail_msg("%s", ck_error_msg(err));
        assert_string_equal(id, "new1");
        free(id);
        assert_string_equal(f->req[4], "DELETE /v1.41/containers/dead01?v=1");
        assert_non_null(
            strstr(f->req[5], "POST /v1.41/containers/create?name=k8s_app_web_ns_u1_2_"));
        assert_int_equal(strlen(strstr(f->req[5], "name=") + 5),
                         strlen("k8s_app_web_ns_u1_2_") + 8);
        json_decref(cfg);
        done(f, s);
}

/* StopContainer is idempotent: a container the engine does not know is
 * stopped (critest's Idempotence spec); another failure is the engine's. */
static void test_stop_container_gone_is_stopped(void **state)
{
        (void)state;
        static const struct answer script[] = {
            {200, VERSION_141},
            {404, "{\"message\":\"No such container: gone\"}"},
            {500, "{\"message\":\"cannot stop it\"}"},
        };
        struct fake *f = fake_start_unix(script, 3, sock_path);
        struct dockershim *s = shim_on();
        Runtime__V1__StopContainerRequest req = RUNTIME__V1__STOP_CONTAINER_REQUEST__INIT;
        req.container_id = (char *)"gone";
        req.timeout = 5;
        uint8_t *resp = NULL;
        size_t len = 0;
        ck_error_t err = NULL;
        if (call(dockershim_stop_container, s, &req.base, &resp, &len, &err) < 0)
                fail_msg("%s", ck_error_msg(err));
        free(resp);
        assert_non_null(strstr(f->req[1], "POST /v1.41/containers/gone/stop?t=5"));
        req.container_id = (char *)"stuck";
        assert_int_equal(call(dockershim_stop_container, s, &req.base, &resp, &len, &err), -1);
        assert_non_null(strstr(ck_error_msg(err), "cannot stop it"));
        ck_error_release(&err);
        done(f, s);
}

/* A sandbox that does not run: its attributes, no usage.  Unknown, or a
 * container that is not a sandbox: NotFound naming the ID. */
static void test_pod_sandbox_stats_stopped_and_unknown(void **state)
{
        (void)state;
        static const struct answer script[] = {
            {200, VERSION_141},
            {200, SANDBOX_INSPECT("s2full", "false", "0")},
            {404, "{\"message\":\"No such container: nope\"}"},
            {200, "{\"Id\":\"c1\",\"Name\":\"/k8s_app_web_ns_u1_0\",\"Config\":{\"Labels\":"
                  "{\"io.kubernetes.docker.type\":\"container\"}}}"},
        };
        struct fake *f = fake_start_unix(script, 4, sock_path);
        struct dockershim *s = shim_on();
        Runtime__V1__PodSandboxStatsRequest req = RUNTIME__V1__POD_SANDBOX_STATS_REQUEST__INIT;
        req.pod_sandbox_id = (char *)"s2";
        uint8_t *resp = NULL;
        size_t len = 0;
        ck_error_t err = NULL;
        if (call(dockershim_pod_sandbox_stats, s, &req.base, &resp, &len, &err) < 0)
                fail_msg("%s", ck_error_msg(err));
        Runtime__V1__PodSandboxStatsResponse *r =
            runtime__v1__pod_sandbox_stats_response__unpack(NULL, len, resp);
        free(resp);
        assert_string_equal(r->stats->attributes->id, "s2full");
        assert_string_equal(r->stats->attributes->metadata->name, "web");
        assert_null(r->stats->linux);
        runtime__v1__pod_sandbox_stats_response__free_unpacked(r, NULL);
        /* no stats asked of the engine for it */
        assert_int_equal(f->n_req, 2);

        req.pod_sandbox_id = (char *)"nope";
        assert_int_equal(call(dockershim_pod_sandbox_stats, s, &req.base, &resp, &len, &err), -1);
        assert_int_equal(err->code, GRPC_NOT_FOUND);
        assert_non_null(strstr(ck_error_msg(err), "nope"));
        ck_error_release(&err);
        req.pod_sandbox_id = (char *)"c1";
        assert_int_equal(call(dockershim_pod_sandbox_stats, s, &req.base, &resp, &len, &err), -1);
        assert_int_equal(err->code, GRPC_NOT_FOUND);
        assert_non_null(strstr(ck_error_msg(err), "no such pod sandbox: c1"));
        ck_error_release(&err);
        done(f, s);
}

/* The running sandboxes ListPodSandbox would list for the filter (ID,
 * label selector), each as PodSandboxStats answers (one that stopped
 * since the list: its attributes); one removed meanwhile is left out. */
static void test_list_pod_sandbox_stats(void **state)
{
        (void)state;
        static const struct answer script[] = {
            {200, VERSION_141},
            {200, "[{\"Id\":\"s2full\",\"Names\":[\"/k8s_POD_web_ns_u1_3\"],\"State\":\"running\","
                  "\"Labels\":{\"io.kubernetes.docker.type\":\"podsandbox\"}},"
                  "{\"Id\":\"s2gone\",\"Names\":[\"/k8s_POD_db_ns_u2_0\"],\"State\":\"running\","
                  "\"Labels\":{\"io.kubernetes.docker.type\":\"podsandbox\"}}]"},
            {200, SANDBOX_INSPECT("s2full", "false", "0")},
            {404, "{\"message\":\"No such container: s2gone\"}"},
        };
        struct fake *f = fake_start_unix(script, 4, sock_path);
        struct dockershim *s = shim_on();
        Runtime__V1__PodSandboxStatsFilter__LabelSelectorEntry sel =
            RUNTIME__V1__POD_SANDBOX_STATS_FILTER__LABEL_SELECTOR_ENTRY__INIT;
        sel.key = (char *)"app";
        sel.value = (char *)"web";
        Runtime__V1__PodSandboxStatsFilter__LabelSelectorEntry *sels[] = {&sel};
        Runtime__V1__PodSandboxStatsFilter flt = RUNTIME__V1__POD_SANDBOX_STATS_FILTER__INIT;
        flt.id = (char *)"s2";
        flt.n_label_selector = 1;
        flt.label_selector = sels;
        Runtime__V1__ListPodSandboxStatsRequest req =
            RUNTIME__V1__LIST_POD_SANDBOX_STATS_REQUEST__INIT;
        req.filter = &flt;
        uint8_t *resp = NULL;
        size_t len = 0;
        ck_error_t err = NULL;
        if (call(dockershim_list_pod_sandbox_stats, s, &req.base, &resp, &len, &err) < 0)
                fail_msg("%s", ck_error_msg(err));
        Runtime__V1__ListPodSandboxStatsResponse *r =
            runtime__v1__list_pod_sandbox_stats_response__unpack(NULL, len, resp);
        free(resp);
        assert_int_equal(r->n_stats, 1);
        assert_string_equal(r->stats[0]->attributes->id, "s2full");
        assert_null(r->stats[0]->linux);
        runtime__v1__list_pod_sandbox_stats_response__free_unpacked(r, NULL);
        /* the engine's list: the running ones (not all=1), the shim's
         * sandboxes by ID and labels */
        assert_null(strstr(f->req[1], "all=1"));
        json_t *j = list_filters(f->req[1]);
        assert_true(has_string(json_object_get(j, "id"), "s2"));
        assert_true(
            has_string(json_object_get(j, "label"), "io.kubernetes.docker.type=podsandbox"));
        assert_true(has_string(json_object_get(j, "label"), "app=web"));
        json_decref(j);
        assert_string_equal(f->req[2], "GET /v1.41/containers/s2full/json");
        assert_string_equal(f->req[3], "GET /v1.41/containers/s2gone/json");
        done(f, s);
}

/* The server's entry of a method, by its path. */
static const struct grpc_method *method_of(const struct grpc_method *table, size_t n,
                                           const char *path)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(table[i].path, path) == 0)
                        return &table[i];
        fail_msg("%s: not served", path);
        return NULL;
}

/* ReopenContainerLog is served, with cri-dockerd's error (a Go error of
 * its own, UNKNOWN on the wire), not UNIMPLEMENTED; the engine is not
 * asked. */
static void test_reopen_container_log(void **state)
{
        (void)state;
        static const struct answer script[] = {{200, VERSION_141}};
        struct fake *f = fake_start_unix(script, 1, sock_path);
        struct dockershim *s = shim_on();
        size_t n = 0;
        struct grpc_method *table = dockershim_methods(s, &n);
        const struct grpc_method *m =
            method_of(table, n, "/runtime.v1.RuntimeService/ReopenContainerLog");
        Runtime__V1__ReopenContainerLogRequest req =
            RUNTIME__V1__REOPEN_CONTAINER_LOG_REQUEST__INIT;
        req.container_id = (char *)"c1";
        uint8_t *buf = NULL, *resp = NULL;
        size_t bl = 0, len = 0;
        ck_error_t err = NULL;
        dockershim_pack(&req.base, &buf, &bl);
        assert_int_equal(m->fn(m->ctx, buf, bl, 0, &resp, &len, &err), -1);
        free(buf);
        assert_null(resp);
        assert_int_equal(err->code, GRPC_UNKNOWN);
        assert_string_equal(ck_error_msg(err),
                            "docker does not support reopening container log files");
        ck_error_release(&err);
        assert_int_equal(f->n_req, 1);
        free(table);
        free(s->dispatched);
        done(f, s);
}

/* UpdateRuntimeConfig is served: accepted (an empty answer), with or
 * without a pod CIDR, nothing asked of the engine. */
static void test_update_runtime_config(void **state)
{
        (void)state;
        static const struct answer script[] = {{200, VERSION_141}};
        struct fake *f = fake_start_unix(script, 1, sock_path);
        struct dockershim *s = shim_on();
        size_t n = 0;
        struct grpc_method *table = dockershim_methods(s, &n);
        const struct grpc_method *m =
            method_of(table, n, "/runtime.v1.RuntimeService/UpdateRuntimeConfig");
        Runtime__V1__NetworkConfig net = RUNTIME__V1__NETWORK_CONFIG__INIT;
        net.pod_cidr = (char *)"10.244.1.0/24";
        Runtime__V1__RuntimeConfig cfg = RUNTIME__V1__RUNTIME_CONFIG__INIT;
        cfg.network_config = &net;
        Runtime__V1__UpdateRuntimeConfigRequest req =
            RUNTIME__V1__UPDATE_RUNTIME_CONFIG_REQUEST__INIT;
        req.runtime_config = &cfg;
        Runtime__V1__UpdateRuntimeConfigRequest empty =
            RUNTIME__V1__UPDATE_RUNTIME_CONFIG_REQUEST__INIT;
        const Runtime__V1__UpdateRuntimeConfigRequest *reqs[] = {&req, &empty};
        for (size_t i = 0; i < 2; i++) {
                uint8_t *buf = NULL, *resp = NULL;
                size_t bl = 0, len = 99;
                ck_error_t err = NULL;
                dockershim_pack(&reqs[i]->base, &buf, &bl);
                if (m->fn(m->ctx, buf, bl, 0, &resp, &len, &err) < 0)
                        fail_msg("%s", ck_error_msg(err));
                free(buf);
                assert_null(err);
                assert_non_null(resp);
                assert_int_equal(len, 0); /* UpdateRuntimeConfigResponse{} */
                free(resp);
        }
        assert_int_equal(f->n_req, 1);
        free(table);
        free(s->dispatched);
        done(f, s);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_list_images),
            cmocka_unit_test(test_invalid_utf8_is_refused_before_the_engine),
            cmocka_unit_test(test_start_refuses_a_listen_path_it_does_not_own),
            cmocka_unit_test(test_image_status),
            cmocka_unit_test(test_pull_image),
            cmocka_unit_test(test_registry_auth_refuses_bad_auth),
            cmocka_unit_test(test_remove_image),
            cmocka_unit_test(test_engine_away_is_unavailable),
            cmocka_unit_test(test_bad_request_is_invalid_argument),
            cmocka_unit_test(test_names),
            cmocka_unit_test(test_labels_round_trip),
            cmocka_unit_test(test_checkpoint_matches_cri_dockerd),
            cmocka_unit_test(test_checkpoint_files),
            cmocka_unit_test(test_run_pod_sandbox_on_the_host_network),
            cmocka_unit_test(test_create_container_request),
            cmocka_unit_test(test_container_status),
            cmocka_unit_test(test_list_container_stats),
            cmocka_unit_test(test_container_stats),
            cmocka_unit_test(test_parse_net_dev),
            cmocka_unit_test(test_pod_sandbox_stats),
            cmocka_unit_test(test_pod_sandbox_stats_stopped_and_unknown),
            cmocka_unit_test(test_stop_container_gone_is_stopped),
            cmocka_unit_test(test_conflicting_id),
            cmocka_unit_test(test_create_name_conflict),
            cmocka_unit_test(test_list_pod_sandbox_stats),
            cmocka_unit_test(test_reopen_container_log),
            cmocka_unit_test(test_update_runtime_config),
        };
        return cmocka_run_group_tests(tests, setup, NULL);
}
