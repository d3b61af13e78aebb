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
#include "util/base64.h"
#include "util/cleanup.h"

#include <stdlib.h>
#include <string.h>

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
        return s;
}

static void shim_free(struct dockershim *s)
{
        docker_client_free(s->docker);
        free(s->pod_infra_image);
        free(s->cgroup_driver);
        free(s->docker_root_dir);
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
        assert_string_equal(json,
                            "{\"password\":\"pass\",\"serveraddress\":\"reg\",\"username\":\"user\"}");

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

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_list_images),
            cmocka_unit_test(test_image_status),
            cmocka_unit_test(test_pull_image),
            cmocka_unit_test(test_registry_auth_refuses_bad_auth),
            cmocka_unit_test(test_remove_image),
            cmocka_unit_test(test_engine_away_is_unavailable),
            cmocka_unit_test(test_bad_request_is_invalid_argument),
        };
        return cmocka_run_group_tests(tests, setup, NULL);
}
