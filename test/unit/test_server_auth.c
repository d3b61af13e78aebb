/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Authentication and authorization of the kubelet API (server/auth.h)
 * against a scripted fake apiserver: who a request is (client certificate,
 * bearer token through a TokenReview, anonymous), what it may do (always,
 * or a SubjectAccessReview per subresource), the answers upstream's kubelet
 * sends (401 "Unauthorized", 403 "Forbidden (...)", 500 on an apiserver
 * error), and that reviews are cached and never log the token.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fake_apiserver.h"

#include "server/auth.h"
#include "util/cleanup.h"
#include "util/log.h"

#include <fcntl.h>

#define TOKENREVIEWS "POST /apis/authentication.k8s.io/v1/tokenreviews"
#define SARS "POST /apis/authorization.k8s.io/v1/subjectaccessreviews"

#define ALICE_REVIEW                                                                               \
        "{\"kind\":\"TokenReview\",\"status\":{\"authenticated\":true,\"user\":{"                  \
        "\"username\":\"alice\",\"uid\":\"u-1\",\"groups\":[\"dev\"],"                             \
        "\"extra\":{\"scopes\":[\"a\"]}}}}"
#define NOT_AUTHENTICATED "{\"kind\":\"TokenReview\",\"status\":{\"authenticated\":false}}"
#define ALLOWED "{\"kind\":\"SubjectAccessReview\",\"status\":{\"allowed\":true}}"
#define DENIED "{\"kind\":\"SubjectAccessReview\",\"status\":{\"allowed\":false}}"
#define FORBIDDEN_STATUS                                                                           \
        "{\"kind\":\"Status\",\"code\":403,\"reason\":\"Forbidden\",\"message\":\"no\"}"
#define INTERNAL_STATUS                                                                            \
        "{\"kind\":\"Status\",\"code\":500,\"reason\":\"InternalError\",\"message\":\"etcd\"}"

static const char *const masters[] = {"system:masters", NULL};

/* One request without a rejected client certificate. */
static void auth_check(struct server_auth *a, const char *method, const char *path,
                       const char *authorization, const char *peer_cn, const char *const *peer_orgs,
                       struct server_auth_result *out)
{
        struct server_auth_request req = {
            .method = method,
            .path = path,
            .authorization = authorization,
            .peer_cn = peer_cn,
            .peer_orgs = peer_orgs,
        };
        server_auth_check_request(a, &req, out);
}

struct fixture {
        struct fake *fake;
        struct rest_pool *pool;
        struct server_auth *auth;
        struct server_auth_result res;
};

/* webhook authentication and authorization against the fake (no retry
 * unless retry_ms > 0), caches as configured by default. */
static void start(struct fixture *f, const struct answer *script, size_t n,
                  struct server_auth_options o)
{
        memset(f, 0, sizeof(*f));
        f->fake = fake_start(script, n);
        f->pool = fake_rest_pool(f->fake);
        o.node_name = "node-a";
        o.pool = f->pool;
        if (o.retry_initial_ms == 0)
                o.retry_initial_ms = -1;
        ck_error_t err = NULL;
        if (server_auth_new(&o, &f->auth, &err) < 0)
                fail_msg("%s", ck_error_msg(err));
}

static struct server_auth_options webhook_options(void)
{
        return (struct server_auth_options){
            .x509 = true,
            .webhook_authn = true,
            .authn_cache_ttl_ms = SERVER_AUTH_DEFAULT_AUTHN_TTL_MS,
            .authz_mode = SERVER_AUTHZ_WEBHOOK,
            .authz_allowed_ttl_ms = SERVER_AUTH_DEFAULT_ALLOWED_TTL_MS,
            .authz_denied_ttl_ms = SERVER_AUTH_DEFAULT_DENIED_TTL_MS,
        };
}

static void stop(struct fixture *f)
{
        server_auth_result_release(&f->res);
        server_auth_free(f->auth);
        rest_pool_free(f->pool);
        fake_stop(f->fake);
}

static void check(struct fixture *f, const char *method, const char *path,
                  const char *authorization, const char *cn, const char *const *orgs)
{
        server_auth_result_release(&f->res);
        auth_check(f->auth, method, path, authorization, cn, orgs, &f->res);
}

static size_t requests(struct fixture *f)
{
        pthread_mutex_lock(&f->fake->lock);
        size_t n = f->fake->n_req;
        pthread_mutex_unlock(&f->fake->lock);
        return n;
}

/* The spec of recorded request i (a new reference). */
static json_t *spec_of(struct fixture *f, size_t i)
{
        json_error_t jerr;
        json_t *body = json_loads(f->fake->body[i], 0, &jerr);
        if (body == NULL)
                fail_msg("request %zu: %s: %s", i, jerr.text, f->fake->body[i]);
        json_t *spec = json_incref(json_object_get(body, "spec"));
        json_decref(body);
        assert_non_null(spec);
        return spec;
}

static void assert_json_equal(const json_t *got, const char *want)
{
        cleanup_json json_t *w = json_loads(want, 0, NULL);
        assert_non_null(w);
        if (!json_equal(got, w)) {
                cleanup_free char *g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);
                fail_msg("got %s, want %s", g, want);
        }
}

static struct server_auth *new_local(struct server_auth_options o)
{
        struct server_auth *a = NULL;
        ck_error_t err = NULL;
        o.node_name = "node-a";
        if (server_auth_new(&o, &a, &err) < 0)
                fail_msg("%s", ck_error_msg(err));
        return a;
}

static void test_cert_identity_always_allowed(void **state)
{
        (void)state;
        struct server_auth *a = new_local((struct server_auth_options){.x509 = true});
        struct server_auth_result r;
        auth_check(a, "GET", "/containerLogs/ns/p/c", NULL, "kube-apiserver-kubelet-client",
                   masters, &r);
        assert_int_equal(r.status, 0);
        assert_string_equal(r.user, "kube-apiserver-kubelet-client");
        server_auth_result_release(&r);
        /* no certificate, no anonymous: 401 */
        auth_check(a, "GET", "/containerLogs/ns/p/c", "Bearer t", NULL, NULL, &r);
        assert_int_equal(r.status, 401);
        assert_string_equal(r.message, "Unauthorized");
        assert_null(r.user);
        server_auth_result_release(&r);
        /* a certificate without a CN names nobody */
        auth_check(a, "GET", "/pods", NULL, "", masters, &r);
        assert_int_equal(r.status, 401);
        server_auth_result_release(&r);
        server_auth_free(a);
}

static void test_anonymous_on_and_off(void **state)
{
        (void)state;
        struct server_auth *a = new_local((struct server_auth_options){.anonymous = true});
        struct server_auth_result r;
        /* without x509, a certificate does not identify: anonymous */
        auth_check(a, "GET", "/pods", NULL, "someone", masters, &r);
        assert_int_equal(r.status, 0);
        assert_string_equal(r.user, "system:anonymous");
        server_auth_result_release(&r);
        /* without webhook authentication, a token is ignored */
        auth_check(a, "GET", "/pods", "Bearer abc", NULL, NULL, &r);
        assert_int_equal(r.status, 0);
        assert_string_equal(r.user, "system:anonymous");
        server_auth_result_release(&r);
        server_auth_free(a);

        a = new_local((struct server_auth_options){.x509 = true, .anonymous = false});
        auth_check(a, "GET", "/pods", NULL, NULL, NULL, &r);
        assert_int_equal(r.status, 401);
        assert_string_equal(r.message, "Unauthorized");
        server_auth_result_release(&r);
        server_auth_free(a);
}

static void test_configuration_errors(void **state)
{
        (void)state;
        struct server_auth *a = NULL;
        ck_error_t err = NULL;
        struct server_auth_options o = {.node_name = "n", .webhook_authn = true};
        assert_int_equal(server_auth_new(&o, &a, &err), -1);
        assert_string_equal(ck_error_msg(err),
                            "no client provided, cannot use webhook authentication");
        ck_error_release(&err);
        o = (struct server_auth_options){
            .node_name = "n", .anonymous = true, .authz_mode = SERVER_AUTHZ_WEBHOOK};
        assert_int_equal(server_auth_new(&o, &a, &err), -1);
        assert_string_equal(ck_error_msg(err),
                            "no client provided, cannot use webhook authorization");
        ck_error_release(&err);
        o = (struct server_auth_options){.node_name = "n"};
        assert_int_equal(server_auth_new(&o, &a, &err), -1);
        assert_string_equal(ck_error_msg(err), "no authentication method configured");
        ck_error_release(&err);
        assert_null(a);
}

static void test_token_reviewed_and_identity_authorized(void **state)
{
        (void)state;
        static const struct answer script[] = {
            {.status = 201, .body = ALICE_REVIEW},
            {.status = 201, .body = ALLOWED},
        };
        struct fixture f;
        start(&f, script, 2, webhook_options());
        check(&f, "GET", "/containerLogs/ns/p/c", "Bearer tok-1", NULL, NULL);
        assert_int_equal(f.res.status, 0);
        assert_string_equal(f.res.user, "alice");
        assert_int_equal(requests(&f), 2);

        assert_string_equal(f.fake->req[0], TOKENREVIEWS);
        cleanup_json json_t *tr = spec_of(&f, 0);
        assert_json_equal(tr, "{\"token\":\"tok-1\"}");
        assert_non_null(strstr(f.fake->body[0], "\"kind\":\"TokenReview\""));

        assert_string_equal(f.fake->req[1], SARS);
        cleanup_json json_t *sar = spec_of(&f, 1);
        assert_json_equal(sar, "{\"user\":\"alice\",\"uid\":\"u-1\","
                               "\"groups\":[\"dev\",\"system:authenticated\"],"
                               "\"extra\":{\"scopes\":[\"a\"]},"
                               "\"resourceAttributes\":{\"verb\":\"get\",\"version\":\"v1\","
                               "\"resource\":\"nodes\",\"subresource\":\"proxy\","
                               "\"name\":\"node-a\"}}");
        assert_non_null(strstr(f.fake->body[1], "\"apiVersion\":\"authorization.k8s.io/v1\""));

        /* both answers are cached: the same request asks nothing */
        check(&f, "GET", "/containerLogs/ns/p/c", "Bearer tok-1", NULL, NULL);
        assert_int_equal(f.res.status, 0);
        assert_string_equal(f.res.user, "alice");
        assert_int_equal(requests(&f), 2);
        stop(&f);
}

static void test_denied_is_403_with_upstream_message(void **state)
{
        (void)state;
        static const struct answer script[] = {
            {.status = 201, .body = DENIED},  /* pods */
            {.status = 201, .body = DENIED},  /* proxy */
            {.status = 201, .body = ALLOWED}, /* healthz */
        };
        struct fixture f;
        start(&f, script, 3, webhook_options());
        check(&f, "GET", "/pods", NULL, "bob", masters);
        assert_int_equal(f.res.status, 403);
        assert_string_equal(
            f.res.message,
            "Forbidden (user=bob, verb=get, resource=nodes, subresource(s)=[pods proxy])\n");
        assert_int_equal(requests(&f), 2);
        cleanup_json json_t *pods = spec_of(&f, 0);
        cleanup_json json_t *proxy = spec_of(&f, 1);
        assert_json_equal(json_object_get(pods, "resourceAttributes"),
                          "{\"verb\":\"get\",\"version\":\"v1\",\"resource\":\"nodes\","
                          "\"subresource\":\"pods\",\"name\":\"node-a\"}");
        assert_json_equal(json_object_get(proxy, "groups"),
                          "[\"system:masters\",\"system:authenticated\"]");
        assert_string_equal(json_string_value(json_object_get(
                                json_object_get(proxy, "resourceAttributes"), "subresource")),
                            "proxy");

        /* denials are cached too */
        check(&f, "GET", "/pods/", NULL, "bob", masters);
        assert_int_equal(f.res.status, 403);
        assert_int_equal(requests(&f), 2);

        /* the first allowed subresource is enough */
        check(&f, "GET", "/healthz", NULL, "bob", masters);
        assert_int_equal(f.res.status, 0);
        assert_int_equal(requests(&f), 3);
        stop(&f);
}

static void test_unknown_token_is_401_even_for_anonymous(void **state)
{
        (void)state;
        static const struct answer script[] = {
            {.status = 201, .body = NOT_AUTHENTICATED},
            {.status = 201, .body = DENIED},
        };
        struct fixture f;
        struct server_auth_options o = webhook_options();
        o.anonymous = true;
        start(&f, script, 2, o);
        int fds[2];
        assert_int_equal(pipe2(fds, O_CLOEXEC | O_NONBLOCK), 0);
        log_set_fd(fds[1]);
        check(&f, "GET", "/pods", "Bearer secret-token-123", NULL, NULL);
        log_set_fd(2);
        assert_int_equal(f.res.status, 401);
        assert_string_equal(f.res.message, "Unauthorized");
        char logs[4096] = "";
        ssize_t n = read(fds[0], logs, sizeof(logs) - 1);
        close(fds[0]);
        close(fds[1]);
        assert_true(n > 0);
        logs[n] = '\0';
        assert_non_null(strstr(logs, "invalid bearer token"));
        assert_null(strstr(logs, "secret-token-123"));

        /* the answer is cached: no second review */
        log_set_fd(-1);
        check(&f, "GET", "/pods", "Bearer secret-token-123", NULL, NULL);
        assert_int_equal(f.res.status, 401);
        assert_int_equal(requests(&f), 1);

        /* no token at all: anonymous, authorized by the apiserver */
        check(&f, "GET", "/stats/summary", NULL, NULL, NULL);
        assert_int_equal(f.res.status, 403);
        assert_string_equal(f.res.message, "Forbidden (user=system:anonymous, verb=get, "
                                           "resource=nodes, subresource(s)=[stats])\n");
        cleanup_json json_t *sar = spec_of(&f, 1);
        assert_json_equal(sar, "{\"user\":\"system:anonymous\","
                               "\"groups\":[\"system:unauthenticated\"],"
                               "\"resourceAttributes\":{\"verb\":\"get\",\"version\":\"v1\","
                               "\"resource\":\"nodes\",\"subresource\":\"stats\","
                               "\"name\":\"node-a\"}}");
        log_set_fd(2);
        stop(&f);
}

static void test_apiserver_errors_fail_closed_and_are_not_cached(void **state)
{
        (void)state;
        static const struct answer script[] = {
            {.status = 403, .body = FORBIDDEN_STATUS}, /* TokenReview refused */
            {.status = 403, .body = FORBIDDEN_STATUS}, /* again: not cached */
            {.status = 201, .body = "{\"status\":{\"authenticated\":false,\"error\":\"bad\"}}"},
            {.status = 500, .body = INTERNAL_STATUS}, /* the SAR */
            {.status = 201, .body = "{\"status\":{\"allowed\":true,\"denied\":true}}"},
        };
        struct fixture f;
        start(&f, script, 5, webhook_options());
        log_set_fd(-1);
        check(&f, "GET", "/logs/", "Bearer t", NULL, NULL);
        assert_int_equal(f.res.status, 401);
        assert_string_equal(f.res.message, "Unauthorized");
        check(&f, "GET", "/logs/", "Bearer t", NULL, NULL);
        assert_int_equal(f.res.status, 401);
        assert_int_equal(requests(&f), 2);
        /* a review that carries an error */
        check(&f, "GET", "/logs/", "Bearer t", NULL, NULL);
        assert_int_equal(f.res.status, 401);
        assert_int_equal(requests(&f), 3);

        check(&f, "POST", "/exec/ns/p/c", NULL, "carol", NULL);
        assert_int_equal(f.res.status, 500);
        assert_string_equal(
            f.res.message,
            "Authorization error (user=carol, verb=create, resource=nodes, subresource=proxy)");
        assert_string_equal(f.res.user, "carol");
        /* allowed and denied at once is an error too */
        check(&f, "POST", "/exec/ns/p/c", NULL, "carol", NULL);
        assert_int_equal(f.res.status, 500);
        assert_int_equal(requests(&f), 5);
        log_set_fd(2);
        stop(&f);
}

static void test_retried_on_internal_error(void **state)
{
        (void)state;
        static const struct answer script[] = {
            {.status = 500, .body = INTERNAL_STATUS},
            {.status = 201, .body = ALLOWED},
        };
        struct fixture f;
        struct server_auth_options o = webhook_options();
        o.retry_initial_ms = 1;
        start(&f, script, 2, o);
        check(&f, "GET", "/metrics/cadvisor", NULL, "dave", NULL);
        assert_int_equal(f.res.status, 0);
        assert_int_equal(requests(&f), 2);
        cleanup_json json_t *sar = spec_of(&f, 1);
        assert_string_equal(json_string_value(json_object_get(
                                json_object_get(sar, "resourceAttributes"), "subresource")),
                            "metrics");
        stop(&f);
}

static void test_cached_answers_expire(void **state)
{
        (void)state;
        static const struct answer script[] = {
            {.status = 201, .body = ALICE_REVIEW},
            {.status = 201, .body = ALLOWED},
            {.status = 201, .body = ALICE_REVIEW},
            {.status = 201, .body = ALLOWED},
        };
        struct fixture f;
        struct server_auth_options o = webhook_options();
        o.authn_cache_ttl_ms = 50;
        o.authz_allowed_ttl_ms = 50;
        start(&f, script, 4, o);
        check(&f, "GET", "/configz", "Bearer tok-2", NULL, NULL);
        assert_int_equal(f.res.status, 0);
        assert_int_equal(requests(&f), 2);
        usleep(100000);
        check(&f, "GET", "/configz", "Bearer tok-2", NULL, NULL);
        assert_int_equal(f.res.status, 0);
        assert_int_equal(requests(&f), 4);
        assert_string_equal(f.fake->req[2], TOKENREVIEWS);
        stop(&f);
}

/* One token review (alice) to answer, anonymous allowed, AlwaysAllow. */
static void start_alice_anonymous(struct fixture *f)
{
        static const struct answer script[] = {
            {.status = 201, .body = ALICE_REVIEW},
        };
        struct server_auth_options o = webhook_options();
        o.anonymous = true;
        o.authz_mode = SERVER_AUTHZ_ALWAYS_ALLOW;
        start(f, script, 1, o);
}

static void test_bearer_header_forms(void **state)
{
        (void)state;
        struct fixture f;
        start_alice_anonymous(&f);
        /* not bearer tokens: anonymous */
        static const char *const none[] = {"Basic dXNlcjpwdw==", "Bearer", "Bearer  t2", "",
                                           "Bearertok"};
        for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
                check(&f, "GET", "/pods", none[i], NULL, NULL);
                assert_int_equal(f.res.status, 0);
                assert_string_equal(f.res.user, "system:anonymous");
        }
        assert_int_equal(requests(&f), 0);
        /* the scheme in any case, surrounding blanks and a third word ignored */
        check(&f, "GET", "/pods", " bEaReR tok-3 extra\t", NULL, NULL);
        assert_int_equal(f.res.status, 0);
        assert_string_equal(f.res.user, "alice");
        cleanup_json json_t *tr = spec_of(&f, 0);
        assert_json_equal(tr, "{\"token\":\"tok-3\"}");
        /* a verified certificate comes first: no review */
        check(&f, "GET", "/pods", "Bearer other", "erin", NULL);
        assert_string_equal(f.res.user, "erin");
        assert_int_equal(requests(&f), 1);
        stop(&f);
}

static void test_rejected_certificate_is_never_anonymous(void **state)
{
        (void)state;
        struct fixture f;
        start_alice_anonymous(&f);
        struct server_auth_request req = {
            .method = "GET",
            .path = "/containerLogs/ns/p/c",
            .peer_verify_error = "unable to get local issuer certificate",
        };
        log_set_fd(-1);
        server_auth_check_request(f.auth, &req, &f.res);
        assert_int_equal(f.res.status, 401);
        assert_string_equal(f.res.message, "Unauthorized");
        log_set_fd(2);
        /* a valid token still identifies the request */
        req.authorization = "Bearer tok-5";
        server_auth_result_release(&f.res);
        server_auth_check_request(f.auth, &req, &f.res);
        assert_int_equal(f.res.status, 0);
        assert_string_equal(f.res.user, "alice");
        assert_int_equal(requests(&f), 1);
        stop(&f);
}

/* A subject that is not UTF-8 (found by fuzz_server_auth: a crash) is a
 * rejected certificate, not a user and not anonymous. */
static void test_certificate_subject_not_utf8_is_401(void **state)
{
        (void)state;
        struct fixture f;
        start_alice_anonymous(&f);
        static const char *const bad_orgs[] = {"system:masters", "\xff\xfe", NULL};
        log_set_fd(-1);
        auth_check(f.auth, "GET", "/containerLogs/ns/p/c", NULL, "caf\xe9", masters, &f.res);
        assert_int_equal(f.res.status, 401);
        server_auth_result_release(&f.res);
        auth_check(f.auth, "GET", "/containerLogs/ns/p/c", NULL, "alice", bad_orgs, &f.res);
        assert_int_equal(f.res.status, 401);
        log_set_fd(2);
        assert_int_equal(requests(&f), 0);
        stop(&f);
}

struct hammer {
        struct server_auth *auth;
        int failures;
};

static void *hammer_run(void *arg)
{
        struct hammer *h = arg;
        for (int i = 0; i < 50; i++) {
                struct server_auth_result r;
                auth_check(h->auth, "GET", "/containerLogs/ns/p/c", "Bearer tok-4", NULL, NULL, &r);
                if (r.status != 0 || r.user == NULL || strcmp(r.user, "alice") != 0)
                        h->failures++;
                server_auth_result_release(&r);
        }
        return NULL;
}

static void test_concurrent_checks_share_the_caches(void **state)
{
        (void)state;
        /* at most one miss per thread before the answers are cached */
        static const struct answer script[] = {
            {.status = 201, .body = ALICE_REVIEW},
            {.status = 201, .body = ALICE_REVIEW},
            {.status = 201, .body = ALICE_REVIEW},
            {.status = 201, .body = ALICE_REVIEW},
        };
        struct fixture f;
        struct server_auth_options o = webhook_options();
        o.authz_mode = SERVER_AUTHZ_ALWAYS_ALLOW;
        start(&f, script, 4, o);
        struct hammer h[4];
        pthread_t t[4];
        for (int i = 0; i < 4; i++) {
                h[i] = (struct hammer){.auth = f.auth};
                assert_int_equal(pthread_create(&t[i], NULL, hammer_run, &h[i]), 0);
        }
        for (int i = 0; i < 4; i++) {
                pthread_join(t[i], NULL);
                assert_int_equal(h[i].failures, 0);
        }
        assert_in_range(requests(&f), 1, 4);
        stop(&f);
}

static void test_verbs_and_subresources(void **state)
{
        (void)state;
        static const char *const verbs[][2] = {
            {"GET", "get"},       {"POST", "create"}, {"PUT", "update"}, {"PATCH", "patch"},
            {"DELETE", "delete"}, {"HEAD", ""},       {"get", ""},       {"OPTIONS", ""},
        };
        for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
                assert_string_equal(server_auth_verb(verbs[i][0]), verbs[i][1]);

        static const char *const paths[][3] = {
            {"/containerLogs/ns/pod/c", "proxy", NULL},
            {"/exec/ns/pod/c", "proxy", NULL},
            {"/spec", "proxy", NULL},
            {"/", "proxy", NULL},
            {"/pods", "pods", "proxy"},
            {"/pods/", "pods", "proxy"},
            {"/podsx", "proxy", NULL},
            {"/runningpods/", "pods", "proxy"},
            {"/healthz", "healthz", "proxy"},
            {"/healthz/ping", "healthz", "proxy"},
            {"/configz", "configz", "proxy"},
            {"/stats/summary", "stats", NULL},
            {"/stats", "stats", NULL},
            {"/statsx", "proxy", NULL},
            {"/metrics", "metrics", NULL},
            {"/metrics/cadvisor", "metrics", NULL},
            {"/logs/", "log", NULL},
            {"/logs/messages", "log", NULL},
            {"/checkpoint/ns/pod/c", "checkpoint", NULL},
            {"/statusz", "statusz", NULL},
            {"/flagz", "configz", NULL},
        };
        for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
                const char *got[2] = {NULL, NULL};
                size_t n = server_auth_subresources(paths[i][0], got);
                assert_int_equal(n, paths[i][2] ? 2 : 1);
                if (strcmp(got[0], paths[i][1]) != 0 ||
                    (n == 2 && strcmp(got[1], paths[i][2]) != 0))
                        fail_msg("%s: got %s %s", paths[i][0], got[0], n == 2 ? got[1] : "");
        }
}

int main(void)
{
        log_set_verbosity(-1);
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_cert_identity_always_allowed),
            cmocka_unit_test(test_anonymous_on_and_off),
            cmocka_unit_test(test_configuration_errors),
            cmocka_unit_test(test_token_reviewed_and_identity_authorized),
            cmocka_unit_test(test_denied_is_403_with_upstream_message),
            cmocka_unit_test(test_unknown_token_is_401_even_for_anonymous),
            cmocka_unit_test(test_apiserver_errors_fail_closed_and_are_not_cached),
            cmocka_unit_test(test_retried_on_internal_error),
            cmocka_unit_test(test_cached_answers_expire),
            cmocka_unit_test(test_bearer_header_forms),
            cmocka_unit_test(test_rejected_certificate_is_never_anonymous),
            cmocka_unit_test(test_certificate_subject_not_utf8_is_401),
            cmocka_unit_test(test_concurrent_checks_share_the_caches),
            cmocka_unit_test(test_verbs_and_subresources),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
