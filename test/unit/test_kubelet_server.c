/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The secure port's routes over real TLS on loopback (a self-signed pair
 * in a temporary cert dir, libcurl as the client): /healthz, /pods, the
 * container log errors answered before the runtime is asked, 404/405, and
 * authentication in front of it all.  The log bytes themselves come from
 * the runtime and are tested end to end (test/e2e/56-cluster-logs.bats).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "api/decode.h"
#include "config/kubeletconfig.h"
#include "kubelet/kubelet_server.h"
#include "kubelet/status_store.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "util/yamljson.h"

#include "test_pods.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct fixture {
        char dir[64];
        struct kubelet_config cfg;
        struct status_store *store;
        struct kubelet_server *srv;
        char body[8192];
        size_t body_len;
};

static size_t on_body(char *p, size_t size, size_t n, void *ctx)
{
        struct fixture *f = ctx;
        size_t len = size * n;
        size_t room = sizeof(f->body) - 1 - f->body_len;
        size_t take = len < room ? len : room;
        memcpy(f->body + f->body_len, p, take);
        f->body_len += take;
        f->body[f->body_len] = '\0';
        return len;
}

/* The HTTP status of METHOD /path; the body in f->body. */
static long request(struct fixture *f, const char *method, const char *path)
{
        char url[512];
        snprintf(url, sizeof(url), "https://127.0.0.1:%d%s", kubelet_server_port(f->srv), path);
        CURL *h = curl_easy_init();
        assert_non_null(h);
        f->body_len = 0;
        f->body[0] = '\0';
        curl_easy_setopt(h, CURLOPT_URL, url);
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L); /* self-signed */
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
        curl_easy_setopt(h, CURLOPT_TIMEOUT, 10L);
        curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, f);
        CURLcode rc = curl_easy_perform(h);
        if (rc != CURLE_OK)
                fail_msg("%s %s: %s", method, path, curl_easy_strerror(rc));
        long status = 0;
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
        curl_easy_cleanup(h);
        return status;
}

static void start(struct fixture *f, bool anonymous)
{
        ck_error_t err = NULL;
        kubelet_config_release(&f->cfg);
        kubelet_config_defaults(&f->cfg);
        free(f->cfg.address);
        f->cfg.address = xstrdup("127.0.0.1");
        free(f->cfg.cert_dir);
        f->cfg.cert_dir = xasprintf("%s/pki", f->dir);
        f->cfg.node_name = xstrdup("node-a");
        f->cfg.anonymous_auth = anonymous;
        f->cfg.client_ca_file = anonymous ? NULL : xasprintf("%s/pki/kubelet.crt", f->dir);
        struct kubelet_server_options o = {.cfg = &f->cfg, .port = 0, .status = f->store};
        if (kubelet_server_start(&o, &f->srv, &err) < 0)
                fail_msg("start: %s", ck_error_msg(err));
}

static int setup(void **state)
{
        struct fixture *f = xcalloc(1, sizeof(*f));
        strcpy(f->dir, "/tmp/ck-kserver-XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        kubelet_config_defaults(&f->cfg);
        f->store = status_store_new();
        struct pod *p = test_pod_yaml("metadata: {name: web, namespace: ns, uid: u1}\n"
                                      "spec: {containers: [{name: main, image: i}, "
                                      "{name: side, image: i}]}\n");
        status_store_set_pod(f->store, p);
        status_store_set_status(f->store, "u1",
                                json_pack("{s:s, s:[{s:s, s:{s:{s:s}}, s:{}}, {s:s, s:{}, s:{}}]}",
                                          "phase", "Pending", "containerStatuses", "name", "main",
                                          "state", "waiting", "reason", "ContainerCreating",
                                          "lastState", "name", "side", "state", "lastState"));
        pod_unref(p);
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        struct fixture *f = *state;
        kubelet_server_stop(f->srv);
        status_store_free(f->store);
        kubelet_config_release(&f->cfg);
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
        assert_int_equal(system(cmd), 0);
        free(f);
        return 0;
}

static void test_healthz_and_pods(void **state)
{
        struct fixture *f = *state;
        start(f, true);
        assert_int_equal(request(f, "GET", "/healthz"), 200);
        assert_string_equal(f->body, "ok");
        assert_int_equal(request(f, "GET", "/pods"), 200);
        json_t *list = json_loads(f->body, 0, NULL);
        assert_non_null(list);
        assert_string_equal(json_string_value(json_object_get(list, "kind")), "PodList");
        json_t *item = json_array_get(json_object_get(list, "items"), 0);
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(item, "metadata"), "name")), "web");
        json_decref(list);
        assert_int_equal(request(f, "POST", "/pods"), 405);
        assert_int_equal(request(f, "GET", "/exec/ns/web/main"), 404);
        /* the self-signed pair was made in the cert dir, the key private */
        char key[128];
        snprintf(key, sizeof(key), "%s/pki/kubelet.key", f->dir);
        struct stat st;
        assert_int_equal(stat(key, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0600);
}

static void test_log_errors_in_upstream_words(void **state)
{
        struct fixture *f = *state;
        start(f, true);
        assert_int_equal(request(f, "GET", "/containerLogs/ns/nope/main"), 404);
        assert_string_equal(f->body, "pod \"nope\" does not exist");
        assert_int_equal(request(f, "GET", "/containerLogs/other/web/main"), 404);
        assert_int_equal(request(f, "GET", "/containerLogs/ns/web/db"), 404);
        assert_string_equal(f->body, "container \"db\" not found in pod \"web\"");
        assert_int_equal(request(f, "GET", "/containerLogs/ns/web/main"), 400);
        assert_string_equal(f->body, "container \"main\" in pod \"web\" is waiting to start: "
                                     "ContainerCreating");
        assert_int_equal(request(f, "GET", "/containerLogs/ns/web/main?previous=true"), 400);
        assert_string_equal(f->body,
                            "previous terminated container \"main\" in pod \"web\" not found");
        assert_int_equal(request(f, "GET", "/containerLogs/ns/web/side"), 400);
        assert_string_equal(f->body,
                            "container \"side\" in pod \"web\" is waiting to start - no logs yet");
        assert_int_equal(request(f, "GET", "/containerLogs/ns/web/main?tailLines=-1"), 422);
        assert_int_equal(request(f, "GET", "/containerLogs/ns/web/main?stream=Stdout"), 400);
        assert_non_null(strstr(f->body, "PodLogsQuerySplitStreams"));
        assert_int_equal(request(f, "GET", "/containerLogs/ns/web"), 400);
}

/* Past the pod's status, upstream has answered 200: a runtime error ends
 * the body as text. */
static void test_runtime_error_after_the_headers(void **state)
{
        struct fixture *f = *state;
        status_store_set_status(f->store, "u1",
                                json_pack("{s:s, s:[{s:s, s:s, s:{s:{}}, s:{}}]}", "phase",
                                          "Running", "containerStatuses", "name", "main",
                                          "containerID", "containerd://c0ffee", "state", "running",
                                          "lastState"));
        start(f, true);
        free(f->cfg.container_runtime_endpoint); /* no runtime there */
        f->cfg.container_runtime_endpoint = xasprintf("unix://%s/none.sock", f->dir);
        assert_int_equal(request(f, "GET", "/containerLogs/ns/web/main"), 200);
        assert_string_equal(f->body, "unable to retrieve container logs for containerd://c0ffee");
}

static void test_no_credentials_is_401_without_anonymous(void **state)
{
        struct fixture *f = *state;
        start(f, true); /* its first connection makes the pair the second server trusts as a
                           client CA (standalone: TLS is set up at the first connection) */
        assert_int_equal(request(f, "GET", "/healthz"), 200);
        kubelet_server_stop(f->srv);
        f->srv = NULL;
        start(f, false);
        assert_int_equal(request(f, "GET", "/healthz"), 401);
        assert_string_equal(f->body, "Unauthorized");
        assert_int_equal(request(f, "GET", "/containerLogs/ns/web/main"), 401);
}

static void test_log_container_id(void **state)
{
        (void)state;
        char *why = NULL;
        json_t *st = json_loads(
            "{\"containerStatuses\": ["
            "{\"name\": \"run\", \"containerID\": \"containerd://r2\", \"state\": {\"running\": "
            "{}}, \"lastState\": {\"terminated\": {\"containerID\": \"containerd://r1\"}}},"
            "{\"name\": \"done\", \"state\": {\"terminated\": {\"containerID\": "
            "\"containerd://d1\"}}, \"lastState\": {}},"
            "{\"name\": \"restarting\", \"state\": {\"waiting\": {\"reason\": "
            "\"CrashLoopBackOff\"}}, \"lastState\": {\"terminated\": {\"containerID\": "
            "\"containerd://c1\"}}},"
            "{\"name\": \"unpulled\", \"state\": {\"waiting\": {\"reason\": "
            "\"ImagePullBackOff\"}}, \"lastState\": {}}],"
            "\"initContainerStatuses\": [{\"name\": \"init\", \"state\": {\"terminated\": "
            "{\"containerID\": \"containerd://i1\"}}}]}",
            0, NULL);
        assert_non_null(st);
        assert_string_equal(kubelet_server_log_container_id(st, "p", "run", false, &why),
                            "containerd://r2");
        assert_string_equal(kubelet_server_log_container_id(st, "p", "run", true, &why),
                            "containerd://r1");
        assert_string_equal(kubelet_server_log_container_id(st, "p", "done", false, &why),
                            "containerd://d1");
        /* between restarts: the last instance's log */
        assert_string_equal(kubelet_server_log_container_id(st, "p", "restarting", false, &why),
                            "containerd://c1");
        assert_string_equal(kubelet_server_log_container_id(st, "p", "init", false, &why),
                            "containerd://i1");
        assert_null(kubelet_server_log_container_id(st, "p", "unpulled", false, &why));
        assert_string_equal(why, "container \"unpulled\" in pod \"p\" is waiting to start: "
                                 "trying and failing to pull image");
        free(why);
        why = NULL;
        assert_null(kubelet_server_log_container_id(st, "p", "ghost", false, &why));
        assert_string_equal(why, "container \"ghost\" in pod \"p\" is not available");
        free(why);
        json_decref(st);
}

int main(void)
{
        log_set_fd(open("/dev/null", O_WRONLY | O_CLOEXEC));
        curl_global_init(CURL_GLOBAL_DEFAULT);
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_healthz_and_pods, setup, teardown),
            cmocka_unit_test_setup_teardown(test_log_errors_in_upstream_words, setup, teardown),
            cmocka_unit_test_setup_teardown(test_runtime_error_after_the_headers, setup, teardown),
            cmocka_unit_test_setup_teardown(test_no_credentials_is_401_without_anonymous, setup,
                                            teardown),
            cmocka_unit_test(test_log_container_id),
        };
        int rc = cmocka_run_group_tests(tests, NULL, NULL);
        curl_global_cleanup();
        return rc;
}
