/* SPDX-License-Identifier: Apache-2.0 */
/* Image pull secrets: docker configs read from the pod's imagePullSecrets
 * (through a fake apiserver object getter) and the credentials each image
 * gets, in order (upstream pkg/credentialprovider semantics); then image
 * pulls (kuberuntime images.c) against a fake CRI image service: which
 * credentials reach PullImage, and the waiting reasons and messages a user
 * sees when a pull fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "fake_grpc_server.h"

#include "api/decode.h"
#include "kuberuntime/runtime.h"
#include "kuberuntime/runtime_internal.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

#include "test_pods.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a fake apiserver: secrets by name in one namespace ---- */

struct fake_secret {
        const char *name;
        const char *type;
        const char *key;   /* data key */
        const char *value; /* plain text, base64-encoded into data[key] */
};

struct fake_api {
        const struct fake_secret *secrets;
        size_t n;
        int gets; /* how many GETs */
        char last_ns[64];
};

static char *b64(const char *s)
{
        size_t n = strlen(s);
        char *out = xmalloc(4 * ((n + 2) / 3) + 1);
        EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)s, (int)n);
        return out;
}

static int fake_get(void *opaque, const char *resource, const char *ns, const char *name,
                    const char *pod_uid, json_t **out, ck_error_t *err)
{
        (void)pod_uid;
        struct fake_api *api = opaque;
        api->gets++;
        snprintf(api->last_ns, sizeof(api->last_ns), "%s", ns);
        assert_string_equal(resource, "secrets");
        for (size_t i = 0; i < api->n; i++) {
                const struct fake_secret *s = &api->secrets[i];
                if (strcmp(s->name, name) != 0)
                        continue;
                cleanup_free char *enc = b64(s->value);
                *out = json_pack("{s:{s:s,s:s},s:s,s:{s:s}}", "metadata", "name", s->name,
                                 "namespace", ns, "type", s->type, "data", s->key, enc);
                return 0;
        }
        int r = ck_error_make_code(err, 404, "secrets \"%s\" not found", name);
        return r;
}

/* A pod in namespace "team" naming the given pull secrets. */
static struct pod *pod_with_secrets(const char *const *names)
{
        json_t *refs = json_array();
        for (size_t i = 0; names != NULL && names[i] != NULL; i++)
                json_array_append_new(refs, json_pack("{s:s}", "name", names[i]));
        cleanup_json json_t *obj =
            json_pack("{s:s,s:s,s:{s:s,s:s,s:s},s:{s:[{s:s,s:s}],s:o}}", "apiVersion", "v1", "kind",
                      "Pod", "metadata", "name", "web", "namespace", "team", "uid", "u-1", "spec",
                      "containers", "name", "c", "image", "busybox", "imagePullSecrets", refs);
        return test_pod_object(obj);
}

static struct kuberuntime_keyring *load(struct fake_api *api, const char *const *names)
{
        struct kube_objects kube = {.get = fake_get, .opaque = api};
        cleanup_pod struct pod *pod = pod_with_secrets(names);
        return kuberuntime_pull_keyring_load(&kube, NULL, pod);
}

/* The credentials for image as "user:password" strings joined by " ", or
 * "" for none.  Asserts the lookup succeeds. */
static char *creds_for(const struct kuberuntime_keyring *k, const char *image)
{
        Runtime__V1__AuthConfig **auths = NULL;
        size_t n = 99;
        cleanup_error ck_error_t err = NULL;
        int r = kuberuntime_keyring_lookup(k, image, &auths, &n, &err);
        if (r < 0)
                fail_msg("lookup %s: %s", image, ck_error_msg(err));
        char *out = xstrdup("");
        for (size_t i = 0; i < n; i++) {
                char *next = xasprintf("%s%s%s:%s", out, i ? " " : "", auths[i]->username,
                                       auths[i]->password);
                free(out);
                out = next;
        }
        kuberuntime_auths_free(auths, n);
        return out;
}

static void assert_creds(const struct kuberuntime_keyring *k, const char *image, const char *want)
{
        cleanup_free char *got = creds_for(k, image);
        if (strcmp(got, want) != 0)
                fail_msg("image %s: credentials \"%s\", want \"%s\"", image, got, want);
}

#define DOCKERCONFIGJSON "kubernetes.io/dockerconfigjson"
#define DOCKERCFG "kubernetes.io/dockercfg"

/* ---- docker config formats ---- */

static void test_dockerconfigjson_auth_field(void **state)
{
        (void)state;
        /* auth is base64("alice:s3cr:et"): the password keeps its colon */
        cleanup_free char *auth = b64("alice:s3cr:et");
        cleanup_free char *cfg = xasprintf(
            "{\"auths\":{\"127.0.0.1:5000\":{\"auth\":\"%s\",\"username\":\"ignored\"}}}", auth);
        const struct fake_secret secrets[] = {
            {"regcred", DOCKERCONFIGJSON, ".dockerconfigjson", cfg}};
        struct fake_api api = {secrets, 1, 0, ""};
        struct kuberuntime_keyring *k = load(&api, (const char *[]){"regcred", NULL});
        assert_non_null(k);
        assert_int_equal(api.gets, 1);
        assert_string_equal(api.last_ns, "team");
        assert_creds(k, "127.0.0.1:5000/private/busybox:1.35", "alice:s3cr:et");
        kuberuntime_keyring_free(k);
}

static void test_dockercfg_username_password_and_raw_auth(void **state)
{
        (void)state;
        /* .dockercfg is the bare registry map; "auth" without padding
         * (Go's RawStdEncoding) is accepted too */
        const char *cfg = "{\"https://reg.example.com\":{\"username\":\"bob\",\"password\":\"pw\","
                          "\"email\":\"b@example.com\"},"
                          "\"other.example.com\":{\"auth\":\"Y2Fyb2w6eA\"}}";
        const struct fake_secret secrets[] = {{"old", DOCKERCFG, ".dockercfg", cfg}};
        struct fake_api api = {secrets, 1, 0, ""};
        struct kuberuntime_keyring *k = load(&api, (const char *[]){"old", NULL});
        assert_creds(k, "reg.example.com/app:1", "bob:pw");
        assert_creds(k, "other.example.com/app", "carol:x");
        kuberuntime_keyring_free(k);
}

static void test_tokens_are_passed(void **state)
{
        (void)state;
        const char *cfg =
            "{\"auths\":{\"reg.example.com\":{\"identitytoken\":\"id-tok\",\"registrytoken\":"
            "\"reg-tok\"}}}";
        const struct fake_secret secrets[] = {{"tok", DOCKERCONFIGJSON, ".dockerconfigjson", cfg}};
        struct fake_api api = {secrets, 1, 0, ""};
        struct kuberuntime_keyring *k = load(&api, (const char *[]){"tok", NULL});
        Runtime__V1__AuthConfig **auths = NULL;
        size_t n = 0;
        cleanup_error ck_error_t err = NULL;
        assert_int_equal(kuberuntime_keyring_lookup(k, "reg.example.com/x", &auths, &n, &err), 0);
        assert_int_equal(n, 1);
        assert_string_equal(auths[0]->identity_token, "id-tok");
        assert_string_equal(auths[0]->registry_token, "reg-tok");
        assert_string_equal(auths[0]->username, "");
        kuberuntime_auths_free(auths, n);
        kuberuntime_keyring_free(k);
}

/* ---- matching ---- */

static void test_host_and_port_must_match(void **state)
{
        (void)state;
        const char *cfg =
            "{\"auths\":{\"127.0.0.1:5000\":{\"username\":\"u\",\"password\":\"p\"}}}";
        const struct fake_secret secrets[] = {{"r", DOCKERCONFIGJSON, ".dockerconfigjson", cfg}};
        struct fake_api api = {secrets, 1, 0, ""};
        struct kuberuntime_keyring *k = load(&api, (const char *[]){"r", NULL});
        assert_creds(k, "127.0.0.1:5000/private/busybox:1.35", "u:p");
        assert_creds(k, "127.0.0.1:5000/busybox@sha256:0123", "u:p");
        assert_creds(k, "127.0.0.1:5001/private/busybox:1.35", "");
        assert_creds(k, "127.0.0.1/private/busybox", "");
        assert_creds(k, "127.0.0.2:5000/private/busybox", "");
        assert_creds(k, "busybox", "");
        kuberuntime_keyring_free(k);
}

static void test_path_prefix_most_specific_first(void **state)
{
        (void)state;
        /* "https://" and the "/v2/" API prefix are stripped from the keys;
         * entries of two secrets for one key keep the secrets' order */
        const char *a =
            "{\"auths\":{"
            "\"https://reg.example.com/v2/\":{\"username\":\"root\",\"password\":\"1\"},"
            "\"reg.example.com/team/app\":{\"username\":\"app\",\"password\":\"3\"},"
            "\"http://reg.example.com/team\":{\"username\":\"team\",\"password\":\"2\"}"
            "}}";
        const char *b = "{\"auths\":{\"reg.example.com/team\":{\"username\":\"team-b\","
                        "\"password\":\"4\"}}}";
        const struct fake_secret secrets[] = {{"a", DOCKERCONFIGJSON, ".dockerconfigjson", a},
                                              {"b", DOCKERCONFIGJSON, ".dockerconfigjson", b}};
        struct fake_api api = {secrets, 2, 0, ""};
        struct kuberuntime_keyring *k = load(&api, (const char *[]){"a", "b", NULL});
        assert_creds(k, "reg.example.com/team/app:1.0", "app:3 team:2 team-b:4 root:1");
        assert_creds(k, "reg.example.com/team/web", "team:2 team-b:4 root:1");
        /* a plain string prefix, as upstream */
        assert_creds(k, "reg.example.com/teamster/x", "team:2 team-b:4 root:1");
        assert_creds(k, "reg.example.com/other", "root:1");
        assert_creds(k, "example.com/team/app", "");
        kuberuntime_keyring_free(k);
}

static void test_host_globs(void **state)
{
        (void)state;
        const char *cfg = "{\"auths\":{\"*.example.com\":{\"username\":\"g\",\"password\":\"p\"}}}";
        const struct fake_secret secrets[] = {{"g", DOCKERCONFIGJSON, ".dockerconfigjson", cfg}};
        struct fake_api api = {secrets, 1, 0, ""};
        struct kuberuntime_keyring *k = load(&api, (const char *[]){"g", NULL});
        assert_creds(k, "eu.example.com/app", "g:p");
        assert_creds(k, "a.eu.example.com/app", ""); /* one part per '*' */
        assert_creds(k, "example.com/app", "");
        kuberuntime_keyring_free(k);
}

static void test_docker_hub_aliases(void **state)
{
        (void)state;
        /* the classic Docker Hub entry and a "docker.io" one */
        const char *cfg =
            "{\"auths\":{\"https://index.docker.io/v1/\":{\"username\":\"hub\",\"password\":\"1\"},"
            "\"docker.io/myorg\":{\"username\":\"org\",\"password\":\"2\"}}}";
        const struct fake_secret secrets[] = {{"hub", DOCKERCONFIGJSON, ".dockerconfigjson", cfg}};
        struct fake_api api = {secrets, 1, 0, ""};
        struct kuberuntime_keyring *k = load(&api, (const char *[]){"hub", NULL});
        assert_creds(k, "busybox", "hub:1");
        assert_creds(k, "library/busybox:1.35", "hub:1");
        assert_creds(k, "docker.io/library/busybox", "hub:1");
        assert_creds(k, "index.docker.io/someone/app", "hub:1");
        assert_creds(k, "myorg/app:2", "org:2"); /* docker.io/myorg/app */
        assert_creds(k, "quay.io/someone/app", "");
        assert_creds(k, "127.0.0.1:5000/busybox", "");
        kuberuntime_keyring_free(k);
}

/* ---- missing, foreign and invalid secrets ---- */

static void test_missing_and_foreign_secrets_are_skipped(void **state)
{
        (void)state;
        const char *cfg =
            "{\"auths\":{\"reg.example.com\":{\"username\":\"u\",\"password\":\"p\"}}}";
        const struct fake_secret secrets[] = {
            {"opaque", "Opaque", ".dockerconfigjson", cfg},        /* wrong type: ignored */
            {"wrongkey", DOCKERCONFIGJSON, ".dockercfg", cfg},     /* key absent: ignored */
            {"good", DOCKERCONFIGJSON, ".dockerconfigjson", cfg}}; /* used */
        struct fake_api api = {secrets, 3, 0, ""};
        struct kuberuntime_keyring *k =
            load(&api, (const char *[]){"gone", "", "opaque", "wrongkey", "good", NULL});
        assert_non_null(k);
        assert_int_equal(api.gets, 4); /* the empty name is not fetched */
        assert_creds(k, "reg.example.com/app", "u:p");
        kuberuntime_keyring_free(k);

        /* only missing secrets: pulls go without credentials */
        struct fake_api none = {NULL, 0, 0, ""};
        k = load(&none, (const char *[]){"gone", NULL});
        assert_creds(k, "reg.example.com/app", "");
        kuberuntime_keyring_free(k);
}

static void test_no_secrets_and_standalone(void **state)
{
        (void)state;
        struct fake_api api = {NULL, 0, 0, ""};
        assert_null(load(&api, NULL));
        assert_int_equal(api.gets, 0);
        assert_creds(NULL, "reg.example.com/app", "");

        /* no apiserver: secrets cannot be read, pulls go without them */
        cleanup_pod struct pod *pod = pod_with_secrets((const char *[]){"regcred", NULL});
        struct kuberuntime_keyring *k = kuberuntime_pull_keyring_load(NULL, NULL, pod);
        assert_creds(k, "reg.example.com/app", "");
        kuberuntime_keyring_free(k);
}

static void assert_lookup_fails(const char *type, const char *key, const char *cfg,
                                const char *want_in_error)
{
        const struct fake_secret secrets[] = {
            {"bad", type, key, cfg},
            {"good", DOCKERCONFIGJSON, ".dockerconfigjson",
             "{\"auths\":{\"reg.example.com\":{\"username\":\"u\",\"password\":\"p\"}}}"}};
        struct fake_api api = {secrets, 2, 0, ""};
        struct kuberuntime_keyring *k = load(&api, (const char *[]){"good", "bad", NULL});
        assert_non_null(k);
        Runtime__V1__AuthConfig **auths = NULL;
        size_t n = 7;
        cleanup_error ck_error_t err = NULL;
        assert_int_equal(kuberuntime_keyring_lookup(k, "reg.example.com/app", &auths, &n, &err),
                         -1);
        assert_null(auths);
        assert_int_equal(n, 0);
        const char *msg = ck_error_msg(err);
        if (strstr(msg, "pull secret team/bad") == NULL || strstr(msg, want_in_error) == NULL)
                fail_msg("error \"%s\" does not name the secret and \"%s\"", msg, want_in_error);
        kuberuntime_keyring_free(k);
}

static void test_invalid_secrets_fail_lookups(void **state)
{
        (void)state;
        assert_lookup_fails(DOCKERCONFIGJSON, ".dockerconfigjson", "{\"auths\":", "invalid JSON");
        assert_lookup_fails(DOCKERCONFIGJSON, ".dockerconfigjson", "[1]", "JSON object");
        assert_lookup_fails(DOCKERCONFIGJSON, ".dockerconfigjson", "{\"auths\":[]}", "object");
        assert_lookup_fails(DOCKERCFG, ".dockercfg", "{\"r.io\":{\"username\":1}}",
                            "username must be a string");
        assert_lookup_fails(DOCKERCFG, ".dockercfg", "{\"r.io\":{\"auth\":\"!!!\"}}",
                            "illegal base64");
        /* base64("nocolon") */
        assert_lookup_fails(DOCKERCFG, ".dockercfg", "{\"r.io\":{\"auth\":\"bm9jb2xvbg==\"}}",
                            "base64(username:password)");
}

static void test_invalid_registry_entry_is_ignored(void **state)
{
        (void)state;
        /* a key Go's url.Parse rejects (port not numeric) is dropped alone */
        const char *cfg = "{\"auths\":{\"reg.example.com:http\":{\"username\":\"x\",\"password\":"
                          "\"y\"},\"reg.example.com\":{\"username\":\"u\",\"password\":\"p\"}}}";
        const struct fake_secret secrets[] = {{"s", DOCKERCONFIGJSON, ".dockerconfigjson", cfg}};
        struct fake_api api = {secrets, 1, 0, ""};
        struct kuberuntime_keyring *k = load(&api, (const char *[]){"s", NULL});
        assert_creds(k, "reg.example.com/app", "u:p");
        kuberuntime_keyring_free(k);
}

/* ---- pulls against a fake CRI image service ---- */

struct registry {
        pthread_mutex_t lock;
        bool present;         /* ImageStatus finds the image */
        int pulls;            /* PullImage calls */
        char users[8][32];    /* the username of each PullImage ("" anonymous) */
        int fail_code;        /* PullImage fails with this status when not 0 */
        const char *fail_msg; /* ... and this message */
};

static void pack_reply(struct fake_reply *reply, const ProtobufCMessage *m)
{
        reply->body_len = protobuf_c_message_get_packed_size(m);
        reply->body = malloc(reply->body_len + 1);
        protobuf_c_message_pack(m, reply->body);
}

static void fail_reply(struct fake_reply *reply, int code, const char *msg)
{
        reply->kind = FAKE_REPLY_TRAILERS_ONLY;
        reply->grpc_status = code;
        reply->grpc_message = msg;
}

/* A registry that lets alice:pw pull and answers 401 to anyone else. */
static void registry_handler(struct fake_server *s, const struct fake_request *req,
                             struct fake_reply *reply)
{
        struct registry *r = s->data;
        reply->kind = FAKE_REPLY_MESSAGE;
        pthread_mutex_lock(&r->lock);
        if (strcmp(req->path, "/runtime.v1.ImageService/ImageStatus") == 0) {
                Runtime__V1__ImageStatusResponse out = RUNTIME__V1__IMAGE_STATUS_RESPONSE__INIT;
                Runtime__V1__Image img = RUNTIME__V1__IMAGE__INIT;
                img.id = "sha256:abc";
                img.size = 2140000;
                if (r->present)
                        out.image = &img;
                pack_reply(reply, &out.base);
        } else if (strcmp(req->path, "/runtime.v1.ImageService/PullImage") == 0) {
                Runtime__V1__PullImageRequest *in =
                    runtime__v1__pull_image_request__unpack(NULL, req->msg_len, req->msg);
                const char *user = in->auth ? in->auth->username : "";
                const char *pass = in->auth ? in->auth->password : "";
                if (r->pulls < 8)
                        snprintf(r->users[r->pulls], sizeof(r->users[0]), "%s", user);
                r->pulls++;
                if (r->fail_code != 0) {
                        fail_reply(reply, r->fail_code, r->fail_msg);
                } else if (strcmp(user, "alice") == 0 && strcmp(pass, "pw") == 0) {
                        Runtime__V1__PullImageResponse out = RUNTIME__V1__PULL_IMAGE_RESPONSE__INIT;
                        out.image_ref = "sha256:abc";
                        pack_reply(reply, &out.base);
                        r->present = true;
                } else {
                        fail_reply(reply, 2,
                                   user[0] ? "pulling failed: 401 Unauthorized (bad password)"
                                           : "pulling failed: 401 Unauthorized");
                }
                runtime__v1__pull_image_request__free_unpacked(in, NULL);
        } else {
                fail_reply(reply, 12, "unimplemented");
        }
        pthread_mutex_unlock(&r->lock);
}

struct pull_fixture {
        struct registry reg;
        struct fake_server *server;
        char endpoint[160];
        struct kuberuntime *kr;
        struct cri_client *cri;
};

static int pull_setup(void **state)
{
        struct pull_fixture *f = calloc(1, sizeof(*f));
        pthread_mutex_init(&f->reg.lock, NULL);
        f->server = fake_server_start(registry_handler, &f->reg);
        snprintf(f->endpoint, sizeof(f->endpoint), "unix://%s", f->server->path);
        struct kuberuntime_options o = {
            .root_dir = "/nonexistent",
            .pod_logs_dir = "/nonexistent",
            .node_name = "node1",
            .resolv_conf = "",
            .runtime_endpoint = f->endpoint,
            .runtime_timeout_ms = 5000,
            .image_backoff_initial_ms = 10000,
            .image_backoff_max_ms = 300000,
            .serialize_image_pulls = true,
        };
        f->kr = kuberuntime_new(&o);
        f->cri = cri_client_new(f->endpoint, 5000);
        *state = f;
        return 0;
}

static int pull_teardown(void **state)
{
        struct pull_fixture *f = *state;
        cri_client_free(f->cri);
        kuberuntime_free(f->kr);
        fake_server_stop(f->server);
        pthread_mutex_destroy(&f->reg.lock);
        free(f);
        return 0;
}

/* A pod with one container "c" running image with policy, naming the pull
 * secret (may be NULL). */
static struct pod *pod_running(const char *image, const char *policy, const char *secret)
{
        cleanup_json json_t *obj =
            json_pack("{s:s,s:s,s:{s:s,s:s,s:s},s:{s:[{s:s,s:s,s:s}]}}", "apiVersion", "v1", "kind",
                      "Pod", "metadata", "name", "web", "namespace", "team", "uid", "u-1", "spec",
                      "containers", "name", "c", "image", image, "imagePullPolicy", policy);
        if (secret != NULL)
                json_object_set_new(json_object_get(obj, "spec"), "imagePullSecrets",
                                    json_pack("[{s:s}]", "name", secret));
        return test_pod_object(obj);
}

/* Runs EnsureImageExists for the pod's container: 0 and the image ref, or
 * -1 with the waiting reason and message in *r. */
static int ensure(struct pull_fixture *f, const char *image, const char *policy,
                  const struct kuberuntime_keyring *k, struct kuberuntime_sync_result *r,
                  char **ref)
{
        cleanup_pod struct pod *pod = pod_running(image, policy, NULL);
        struct kuberuntime_pod_context ctx = {.cgroup_parent = "", .keyring = k};
        *ref = NULL;
        return kuberuntime__ensure_image(f->kr, f->cri, pod, &pod->containers[0], NULL, &ctx, ref,
                                         r);
}

static void assert_waiting(const struct kuberuntime_sync_result *r, const char *reason,
                           const char *message)
{
        assert_int_equal(r->n_waiting, 1);
        assert_string_equal(r->waiting[0].container_name, "c");
        assert_string_equal(r->waiting[0].reason, reason);
        assert_string_equal(r->waiting[0].message, message);
}

#define PRIVATE_IMAGE "127.0.0.1:5000/private/busybox:1.35"

static struct kuberuntime_keyring *two_credentials(void)
{
        /* the more specific (and wrong) entry is tried first */
        const char *cfg = "{\"auths\":{"
                          "\"127.0.0.1:5000\":{\"username\":\"alice\",\"password\":\"pw\"},"
                          "\"127.0.0.1:5000/private\":{\"username\":\"bob\",\"password\":\"no\"}}}";
        const struct fake_secret secrets[] = {
            {"regcred", DOCKERCONFIGJSON, ".dockerconfigjson", cfg}};
        struct fake_api api = {secrets, 1, 0, ""};
        return load(&api, (const char *[]){"regcred", NULL});
}

static void test_pull_tries_matching_credentials_in_order(void **state)
{
        struct pull_fixture *f = *state;
        struct kuberuntime_keyring *k = two_credentials();
        struct kuberuntime_sync_result r = {0};
        cleanup_free char *ref = NULL;
        assert_int_equal(ensure(f, PRIVATE_IMAGE, "IfNotPresent", k, &r, &ref), 0);
        assert_string_equal(ref, "sha256:abc");
        assert_int_equal(r.n_waiting, 0);
        assert_int_equal(f->reg.pulls, 2);
        assert_string_equal(f->reg.users[0], "bob");
        assert_string_equal(f->reg.users[1], "alice");

        /* present now: IfNotPresent does not pull again */
        free(ref);
        assert_int_equal(ensure(f, PRIVATE_IMAGE, "IfNotPresent", k, &r, &ref), 0);
        assert_string_equal(ref, "sha256:abc");
        assert_int_equal(f->reg.pulls, 2);
        kuberuntime_sync_result_clear(&r);
        kuberuntime_keyring_free(k);
}

static void test_pull_reads_the_pods_secrets_only_when_pulling(void **state)
{
        struct pull_fixture *f = *state;
        const char *cfg = "{\"auths\":{\"127.0.0.1:5000\":{\"username\":\"alice\","
                          "\"password\":\"pw\"}}}";
        const struct fake_secret secrets[] = {
            {"regcred", DOCKERCONFIGJSON, ".dockerconfigjson", cfg}};
        struct fake_api api = {secrets, 1, 0, ""};
        struct kube_objects kube = {.get = fake_get, .opaque = &api};
        cleanup_pod struct pod *pod = pod_running(PRIVATE_IMAGE, "IfNotPresent", "regcred");
        struct kuberuntime_pod_context ctx = {.cgroup_parent = "", .kube = &kube};
        struct kuberuntime_sync_result r = {0};
        cleanup_free char *ref = NULL;

        f->reg.present = true;
        assert_int_equal(kuberuntime__ensure_image(f->kr, f->cri, pod, &pod->containers[0], NULL,
                                                   &ctx, &ref, &r),
                         0);
        assert_int_equal(api.gets, 0); /* present: no pull, no secret read */

        f->reg.present = false;
        free(ref);
        assert_int_equal(kuberuntime__ensure_image(f->kr, f->cri, pod, &pod->containers[0], NULL,
                                                   &ctx, &ref, &r),
                         0);
        assert_int_equal(api.gets, 1);
        assert_int_equal(f->reg.pulls, 1);
        assert_string_equal(f->reg.users[0], "alice");
        assert_string_equal(ref, "sha256:abc");
        kuberuntime_sync_result_clear(&r);
}

static void test_pull_without_credentials_fails_then_backs_off(void **state)
{
        struct pull_fixture *f = *state;
        /* the secret is for another registry: the pull goes anonymously */
        struct kuberuntime_keyring *k = two_credentials();
        struct kuberuntime_sync_result r = {0};
        cleanup_free char *ref = NULL;
        assert_int_equal(ensure(f, "registry.example.com/app:1", "Always", k, &r, &ref), -1);
        assert_int_equal(f->reg.pulls, 1);
        assert_string_equal(f->reg.users[0], "");
        /* an Unknown status shows the runtime's message alone, as upstream */
        assert_waiting(&r, "ErrImagePull", "pulling failed: 401 Unauthorized");
        assert_true(r.next_retry_ms > 0);
        kuberuntime_sync_result_clear(&r);

        assert_int_equal(ensure(f, "registry.example.com/app:1", "Always", k, &r, &ref), -1);
        assert_int_equal(f->reg.pulls, 1); /* in backoff: not pulled */
        assert_waiting(&r, "ImagePullBackOff",
                       "Back-off pulling image \"registry.example.com/app:1\": ErrImagePull: "
                       "pulling failed: 401 Unauthorized");
        kuberuntime_sync_result_clear(&r);
        kuberuntime_keyring_free(k);
}

static void test_pull_errors_of_every_credential_are_reported(void **state)
{
        struct pull_fixture *f = *state;
        const char *cfg = "{\"auths\":{\"127.0.0.1:5000\":{\"username\":\"carol\",\"password\":"
                          "\"x\"},\"127.0.0.1:5000/private\":{\"username\":\"bob\",\"password\":"
                          "\"y\"}}}";
        const struct fake_secret secrets[] = {{"s", DOCKERCONFIGJSON, ".dockerconfigjson", cfg}};
        struct fake_api api = {secrets, 1, 0, ""};
        struct kuberuntime_keyring *k = load(&api, (const char *[]){"s", NULL});
        struct kuberuntime_sync_result r = {0};
        cleanup_free char *ref = NULL;
        assert_int_equal(ensure(f, PRIVATE_IMAGE, "Always", k, &r, &ref), -1);
        assert_int_equal(f->reg.pulls, 2);
        /* the same message twice is reported once, as upstream's aggregate */
        assert_waiting(&r, "ErrImagePull", "pulling failed: 401 Unauthorized (bad password)");
        kuberuntime_sync_result_clear(&r);
        kuberuntime_keyring_free(k);
}

static void test_pull_error_codes_and_reasons(void **state)
{
        struct pull_fixture *f = *state;
        struct kuberuntime_sync_result r = {0};
        cleanup_free char *ref = NULL;
        f->reg.fail_code = 5;
        f->reg.fail_msg = "no such image";
        assert_int_equal(ensure(f, "a.example.com/x:1", "Always", NULL, &r, &ref), -1);
        assert_waiting(&r, "ErrImagePull", "rpc error: code = NotFound desc = no such image");
        kuberuntime_sync_result_clear(&r);

        f->reg.fail_code = 2;
        f->reg.fail_msg = "RegistryUnavailable: dial tcp 127.0.0.1:5000: connection refused";
        assert_int_equal(ensure(f, "b.example.com/x:1", "Always", NULL, &r, &ref), -1);
        assert_waiting(&r, "RegistryUnavailable",
                       "image pull failed for b.example.com/x:1 because the registry is "
                       "unavailable: dial tcp 127.0.0.1:5000: connection refused");
        kuberuntime_sync_result_clear(&r);
}

static void test_never_policy_and_malformed_secret(void **state)
{
        struct pull_fixture *f = *state;
        struct kuberuntime_sync_result r = {0};
        cleanup_free char *ref = NULL;
        assert_int_equal(ensure(f, PRIVATE_IMAGE, "Never", NULL, &r, &ref), -1);
        assert_waiting(&r, "ErrImageNeverPull",
                       "Container image \"" PRIVATE_IMAGE
                       "\" is not present with pull policy of Never");
        kuberuntime_sync_result_clear(&r);

        const struct fake_secret secrets[] = {{"broken", DOCKERCFG, ".dockercfg",
                                               "{\"127.0.0.1:5000\":{\"auth\":\"bm9jb2xvbg==\"}}"}};
        struct fake_api api = {secrets, 1, 0, ""};
        struct kuberuntime_keyring *k = load(&api, (const char *[]){"broken", NULL});
        assert_int_equal(ensure(f, PRIVATE_IMAGE, "IfNotPresent", k, &r, &ref), -1);
        assert_int_equal(f->reg.pulls, 0);
        assert_int_equal(r.n_waiting, 1);
        assert_string_equal(r.waiting[0].reason, "ErrImagePull");
        assert_non_null(strstr(r.waiting[0].message, "pull secret team/broken"));
        kuberuntime_sync_result_clear(&r);
        kuberuntime_keyring_free(k);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_dockerconfigjson_auth_field),
            cmocka_unit_test(test_dockercfg_username_password_and_raw_auth),
            cmocka_unit_test(test_tokens_are_passed),
            cmocka_unit_test(test_host_and_port_must_match),
            cmocka_unit_test(test_path_prefix_most_specific_first),
            cmocka_unit_test(test_host_globs),
            cmocka_unit_test(test_docker_hub_aliases),
            cmocka_unit_test(test_missing_and_foreign_secrets_are_skipped),
            cmocka_unit_test(test_no_secrets_and_standalone),
            cmocka_unit_test(test_invalid_secrets_fail_lookups),
            cmocka_unit_test(test_invalid_registry_entry_is_ignored),
            cmocka_unit_test_setup_teardown(test_pull_tries_matching_credentials_in_order,
                                            pull_setup, pull_teardown),
            cmocka_unit_test_setup_teardown(test_pull_reads_the_pods_secrets_only_when_pulling,
                                            pull_setup, pull_teardown),
            cmocka_unit_test_setup_teardown(test_pull_without_credentials_fails_then_backs_off,
                                            pull_setup, pull_teardown),
            cmocka_unit_test_setup_teardown(test_pull_errors_of_every_credential_are_reported,
                                            pull_setup, pull_teardown),
            cmocka_unit_test_setup_teardown(test_pull_error_codes_and_reasons, pull_setup,
                                            pull_teardown),
            cmocka_unit_test_setup_teardown(test_never_policy_and_malformed_secret, pull_setup,
                                            pull_teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
