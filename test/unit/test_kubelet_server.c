/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kubelet's three listeners (kubelet/kubelet_server.h) over real
 * loopback sockets, with the status store as the source of pods:
 *
 * - the secure port, over TLS (a self-signed pair in a temporary cert dir,
 *   libcurl as the client): /healthz, /pods, the container log errors
 *   answered before the runtime is asked, /configz, /runningpods/ (a fake
 *   CRI runtime), PUT /debug/flags/v, keep-alive, the debugging handlers
 *   turned off, and authentication in front of it all;
 * - the read-only port, in plain HTTP with raw sockets where the framing
 *   is the point (HEAD, malformed and oversized heads, slow and idle
 *   clients, keep-alive) and without authentication;
 * - the healthz port.
 *
 * The log bytes themselves come from the runtime and are tested end to end
 * (test/e2e/56-cluster-logs.bats).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "api/decode.h"
#include "config/configz.h"
#include "config/kubeletconfig.h"
#include "cri/cri.h"
#include "grpc/grpc.h"
#include "kubelet/kubelet_server.h"
#include "kubelet/status_store.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "util/yamljson.h"

#include "fake_grpc_server.h"
#include "test_pods.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

struct fixture {
        char dir[64];
        struct kubelet_config cfg;
        struct status_store *store;
        struct kubelet_server *srv;
        int verbosity; /* the logger's at setup, restored at teardown */
        char body[8192];
        size_t body_len;
        char content_type[128];
};

/* ---- libcurl ------------------------------------------------------------ */

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

/* METHOD url on h (NULL: a handle of its own), with body when not NULL:
 * the HTTP status; the body in f->body, its Content-Type in
 * f->content_type. */
static long perform(struct fixture *f, CURL *h, const char *url, const char *method,
                    const char *body)
{
        CURL *own = h ? NULL : curl_easy_init();
        if (own)
                h = own;
        assert_non_null(h);
        f->body_len = 0;
        f->body[0] = '\0';
        f->content_type[0] = '\0';
        curl_easy_setopt(h, CURLOPT_URL, url);
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L); /* self-signed */
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
        curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
        curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, f);
        if (body)
                curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        CURLcode rc = curl_easy_perform(h);
        if (rc != CURLE_OK)
                fail_msg("%s %s: %s", method, url, curl_easy_strerror(rc));
        long status = 0;
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
        const char *ct = NULL;
        if (curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct)
                snprintf(f->content_type, sizeof(f->content_type), "%s", ct);
        if (own)
                curl_easy_cleanup(own);
        return status;
}

static void secure_url(struct fixture *f, const char *path, char *url, size_t n)
{
        snprintf(url, n, "https://127.0.0.1:%d%s", kubelet_server_port(f->srv), path);
}

/* METHOD /path on the secure port. */
static long request(struct fixture *f, const char *method, const char *path)
{
        char url[512];
        secure_url(f, path, url, sizeof(url));
        return perform(f, NULL, url, method, NULL);
}

static long request_body(struct fixture *f, const char *method, const char *path, const char *body)
{
        char url[512];
        secure_url(f, path, url, sizeof(url));
        return perform(f, NULL, url, method, body);
}

/* METHOD /path in plain HTTP on a loopback port (read-only, healthz). */
static long request_plain(struct fixture *f, int port, const char *method, const char *path)
{
        char url[512];
        snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
        return perform(f, NULL, url, method, NULL);
}

/* ---- raw sockets -------------------------------------------------------- */

/* Far beyond any answer's time, even on a loaded machine: a receive that
 * times out fails the test instead of hanging it. */
#define RECV_TIMEOUT_S 20

static int connect_to(int family, int port)
{
        int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(fd >= 0);
        struct timeval tv = {.tv_sec = RECV_TIMEOUT_S};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        int rc;
        if (family == AF_INET6) {
                struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
                inet_pton(AF_INET6, "::1", &a.sin6_addr);
                rc = connect(fd, (struct sockaddr *)&a, sizeof(a));
        } else {
                struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
                a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                rc = connect(fd, (struct sockaddr *)&a, sizeof(a));
        }
        assert_int_equal(rc, 0);
        return fd;
}

static void send_all(int fd, const char *data, size_t len)
{
        while (len > 0) {
                ssize_t w = send(fd, data, len, MSG_NOSIGNAL);
                if (w < 0 && errno == EINTR)
                        continue;
                assert_true(w > 0);
                data += w;
                len -= (size_t)w;
        }
}

struct response {
        int code;
        char *raw;  /* the whole response */
        char *body; /* points into raw */
        long content_length;
        bool close; /* "Connection: close" */
};

static void response_free(struct response *r)
{
        free(r->raw);
        memset(r, 0, sizeof(*r));
}

/* Parses buf (a new string, taken) as one response. */
static void parse_response(char *buf, struct response *r)
{
        memset(r, 0, sizeof(*r));
        r->raw = buf;
        r->content_length = -1;
        assert_int_equal(sscanf(buf, "HTTP/1.1 %d", &r->code), 1);
        char *end = strstr(buf, "\r\n\r\n");
        assert_non_null(end);
        r->body = end + 4;
        const char *cl = strcasestr(buf, "\r\nContent-Length: ");
        if (cl != NULL && cl < end)
                r->content_length = strtol(cl + 18, NULL, 10);
        const char *conn = strcasestr(buf, "\r\nConnection: close\r\n");
        r->close = conn != NULL && conn < end;
}

/* What the server sends until it closes (a new string). */
static char *read_all(int fd)
{
        size_t cap = 4096, len = 0;
        char *buf = xmalloc(cap);
        for (;;) {
                if (len + 1 >= cap)
                        buf = xrealloc(buf, cap *= 2);
                ssize_t n = recv(fd, buf + len, cap - len - 1, 0);
                if (n < 0 && errno == EINTR)
                        continue;
                assert_true(n >= 0); /* not a timeout */
                if (n == 0)
                        break;
                len += (size_t)n;
        }
        buf[len] = '\0';
        return buf;
}

/* Reads to EOF: the server closes after a response to a request with
 * "Connection: close", to HTTP/1.0 and after an error, and says so. */
static void read_response(int fd, struct response *r)
{
        parse_response(read_all(fd), r);
        assert_true(r->close);
}

/* Reads one response that leaves the connection open: its head, then
 * Content-Length bytes of body. */
static void read_one_response(int fd, struct response *r)
{
        size_t cap = 8192, len = 0;
        char *buf = xmalloc(cap);
        for (;;) {
                buf[len] = '\0';
                char *end = strstr(buf, "\r\n\r\n");
                if (end != NULL) {
                        const char *cl = strcasestr(buf, "\r\nContent-Length: ");
                        assert_true(cl != NULL && cl < end);
                        size_t want = (size_t)(end + 4 - buf) + strtoul(cl + 18, NULL, 10);
                        if (len >= want)
                                break;
                }
                if (len + 1 >= cap)
                        buf = xrealloc(buf, cap *= 2);
                ssize_t n = recv(fd, buf + len, cap - len - 1, 0);
                if (n < 0 && errno == EINTR)
                        continue;
                assert_true(n > 0); /* neither a timeout nor the server's close */
                len += (size_t)n;
        }
        parse_response(buf, r);
        assert_false(r->close);
}

/* One request on a connection of its own, read to EOF. */
static void raw_request(int port, const char *req, struct response *r)
{
        int fd = connect_to(AF_INET, port);
        send_all(fd, req, strlen(req));
        read_response(fd, r);
        close(fd);
}

#define GET_CLOSE(path) "GET " path " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- the fixture -------------------------------------------------------- */

/* Fresh defaults with the fixture's addresses, cert dir and node name, the
 * healthz port off unless a test turns it on (so that -1 means off). */
static void configure(struct fixture *f, bool anonymous)
{
        kubelet_config_release(&f->cfg);
        kubelet_config_defaults(&f->cfg);
        free(f->cfg.address);
        f->cfg.address = xstrdup("127.0.0.1");
        free(f->cfg.cert_dir);
        f->cfg.cert_dir = xasprintf("%s/pki", f->dir);
        f->cfg.node_name = xstrdup("node-a");
        f->cfg.anonymous_auth = anonymous;
        f->cfg.client_ca_file = anonymous ? NULL : xasprintf("%s/pki/kubelet.crt", f->dir);
        f->cfg.healthz_port = 0;
}

/* kubelet_server_start with f->cfg: -1 from cfg, 0 an ephemeral port. */
static int try_serve(struct fixture *f, int port, int read_only_port, int healthz_port,
                     struct kubelet_server **out, ck_error_t *err)
{
        struct kubelet_server_options o = {
            .cfg = &f->cfg,
            .port = port,
            .read_only_port = read_only_port,
            .healthz_port = healthz_port,
            .status = f->store,
        };
        return kubelet_server_start(&o, out, err);
}

static void serve(struct fixture *f, int port, int read_only_port, int healthz_port)
{
        cleanup_error ck_error_t err = NULL;
        if (try_serve(f, port, read_only_port, healthz_port, &f->srv, &err) < 0)
                fail_msg("start: %s", ck_error_msg(err));
}

/* The secure port alone. */
static void start(struct fixture *f, bool anonymous)
{
        configure(f, anonymous);
        serve(f, 0, -1, -1);
}

/* The read-only port alone: the secure port off by enableServer=false. */
static void start_read_only(struct fixture *f)
{
        configure(f, true);
        f->cfg.enable_server = false;
        serve(f, -1, 0, -1);
        assert_int_equal(kubelet_server_port(f->srv), 0);
        assert_int_equal(kubelet_server_healthz_port(f->srv), 0);
        assert_true(kubelet_server_read_only_port(f->srv) > 0);
}

static int ro_port(struct fixture *f)
{
        return kubelet_server_read_only_port(f->srv);
}

static int setup(void **state)
{
        struct fixture *f = xcalloc(1, sizeof(*f));
        strcpy(f->dir, "/tmp/ck-kserver-XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        kubelet_config_defaults(&f->cfg);
        f->verbosity = log_get_verbosity();
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

static int setup_read_only(void **state)
{
        setup(state);
        start_read_only(*state);
        return 0;
}

static int teardown(void **state)
{
        struct fixture *f = *state;
        kubelet_server_stop(f->srv);
        status_store_free(f->store);
        kubelet_config_release(&f->cfg);
        log_set_verbosity(f->verbosity);
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
        assert_int_equal(system(cmd), 0);
        free(f);
        return 0;
}

/* ---- the secure port ---------------------------------------------------- */

static void test_healthz_and_pods(void **state)
{
        struct fixture *f = *state;
        start(f, true);
        assert_int_equal(kubelet_server_read_only_port(f->srv), 0);
        assert_int_equal(kubelet_server_healthz_port(f->srv), 0);
        assert_int_equal(request(f, "GET", "/healthz"), 200);
        assert_string_equal(f->body, "ok");
        assert_int_equal(request(f, "GET", "/healthz/ping"), 200);
        assert_int_equal(request(f, "GET", "/healthz/log"), 200);
        assert_int_equal(request(f, "GET", "/pods"), 200);
        json_t *list = json_loads(f->body, 0, NULL);
        assert_non_null(list);
        assert_string_equal(json_string_value(json_object_get(list, "kind")), "PodList");
        json_t *item = json_array_get(json_object_get(list, "items"), 0);
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(item, "metadata"), "name")), "web");
        json_decref(list);
        assert_int_equal(request(f, "POST", "/pods"), 405);
        assert_int_equal(request(f, "GET", "/nope"), 404);
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
        /* no container segment: no route matches, as go-restful's */
        assert_int_equal(request(f, "GET", "/containerLogs/ns/web"), 404);
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

/* Authentication applies on the secure port and not on the read-only
 * port (upstream's read-only server has no auth filter). */
static void test_no_credentials_is_401_without_anonymous(void **state)
{
        struct fixture *f = *state;
        start(f, true); /* its first connection makes the pair the second server trusts as a
                           client CA (standalone: TLS is set up at the first connection) */
        assert_int_equal(request(f, "GET", "/healthz"), 200);
        kubelet_server_stop(f->srv);
        f->srv = NULL;
        configure(f, false);
        serve(f, 0, 0, -1);
        assert_int_equal(request(f, "GET", "/healthz"), 401);
        assert_string_equal(f->body, "Unauthorized");
        assert_int_equal(request(f, "GET", "/containerLogs/ns/web/main"), 401);
        assert_int_equal(request(f, "GET", "/pods"), 401);
        assert_int_equal(request_plain(f, ro_port(f), "GET", "/healthz"), 200);
        assert_string_equal(f->body, "ok");
        assert_int_equal(request_plain(f, ro_port(f), "GET", "/pods"), 200);
        assert_non_null(strstr(f->body, "\"PodList\""));
}

/* A JSON value at a dotted path of obj; NULL when absent. */
static json_t *at(json_t *obj, const char *path)
{
        char *copy = xstrdup(path), *save = NULL;
        json_t *v = obj;
        for (char *tok = strtok_r(copy, ".", &save); tok && v; tok = strtok_r(NULL, ".", &save))
                v = json_object_get(v, tok);
        free(copy);
        return v;
}

/* GET /configz: the effective configuration as configz_json makes it, not
 * served on the read-only port. */
static void test_configz(void **state)
{
        struct fixture *f = *state;
        configure(f, true);
        f->cfg.read_only_port = 10255; /* what configz shows: the servers take ephemeral ports */
        f->cfg.healthz_port = 10248;
        f->cfg.max_pods = 42;
        serve(f, 0, 0, 0);
        assert_int_equal(request(f, "GET", "/configz"), 200);
        assert_string_equal(f->content_type, "application/json");
        json_t *got = json_loads(f->body, 0, NULL);
        assert_non_null(got);
        json_t *kc = json_object_get(got, "kubeletconfig");
        assert_non_null(kc);
        assert_int_equal(json_integer_value(at(kc, "port")), 10250);
        assert_int_equal(json_integer_value(at(kc, "readOnlyPort")), 10255);
        assert_int_equal(json_integer_value(at(kc, "healthzPort")), 10248);
        assert_string_equal(json_string_value(at(kc, "healthzBindAddress")), "127.0.0.1");
        assert_string_equal(json_string_value(at(kc, "address")), "127.0.0.1");
        assert_int_equal(json_integer_value(at(kc, "maxPods")), 42);
        assert_true(json_is_true(at(kc, "enableServer")));
        assert_true(json_is_true(at(kc, "enableDebuggingHandlers")));
        assert_true(json_is_true(at(kc, "enableDebugFlagsHandler")));
        assert_true(json_is_true(at(kc, "authentication.anonymous.enabled")));
        json_t *want = configz_json(&f->cfg);
        assert_true(json_equal(got, want));
        json_decref(want);
        json_decref(got);
        assert_int_equal(request_plain(f, ro_port(f), "GET", "/configz"), 404);
        assert_int_equal(request_plain(f, kubelet_server_healthz_port(f->srv), "GET", "/configz"),
                         404);
}

static void test_debug_flags_v(void **state)
{
        struct fixture *f = *state;
        start(f, true);
        int before = log_get_verbosity();
        assert_int_equal(request_body(f, "PUT", "/debug/flags/v", "5"), 200);
        /* upstream's writePlainText (Fprintln) */
        assert_string_equal(f->body, "successfully set klog.logging.verbosity to 5\n");
        assert_int_equal(log_get_verbosity(), 5);
        log_set_verbosity(before);

        static const char *const bad[] = {"abc", "", "-1", "5x", "99999999999", " 5", "+5", "5\n"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                long code = request_body(f, "PUT", "/debug/flags/v", bad[i]);
                if (code != 400)
                        fail_msg("PUT \"%s\": %ld, want 400", bad[i], code);
                assert_int_equal(log_get_verbosity(), before);
        }
        assert_int_equal(request_body(f, "PUT", "/debug/flags/v", "abc"), 400);
        assert_string_equal(f->body, "strconv.ParseUint: parsing \"abc\": invalid syntax\n");
        /* another method: upstream's StringFlagPutHandler answers 406 */
        assert_int_equal(request(f, "GET", "/debug/flags/v"), 406);
        assert_string_equal(f->body, "unsupported http method\n");
        assert_int_equal(request_body(f, "POST", "/debug/flags/v", "6"), 406);
        assert_int_equal(log_get_verbosity(), before);
}

/* enableDebugFlagsHandler=false: the handler does not run; upstream's
 * InstallDebugFlagsHandler answers 405 "flags endpoint is disabled.". */
static void test_debug_flags_handler_off(void **state)
{
        struct fixture *f = *state;
        configure(f, true);
        f->cfg.enable_debug_flags_handler = false;
        serve(f, 0, -1, -1);
        int before = log_get_verbosity();
        assert_int_equal(request_body(f, "PUT", "/debug/flags/v", "7"), 405);
        assert_string_equal(f->body, "flags endpoint is disabled.\n");
        assert_int_equal(log_get_verbosity(), before);
        /* the other debugging handlers stay */
        assert_int_equal(request(f, "GET", "/configz"), 200);
}

/* enableDebuggingHandlers=false: upstream's NewServer installs
 * InstallDebuggingDisabledHandlers instead of InstallAuthRequiredHandlers
 * (and the flags handler): the debugging prefixes answer 405, /configz and
 * /debug/flags/v are not installed at all (404). */
static void test_debugging_handlers_off(void **state)
{
        struct fixture *f = *state;
        configure(f, true);
        f->cfg.enable_debugging_handlers = false;
        serve(f, 0, -1, -1);
        static const char *const paths[] = {
            "/containerLogs/ns/web/main", "/exec/ns/web/main", "/attach/ns/web/main",
            "/portForward/ns/web",        "/run/ns/web/main",  "/runningpods/",
            "/debug/pprof/profile",       "/logs/syslog",
        };
        for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
                long code = request(f, "GET", paths[i]);
                if (code != 405)
                        fail_msg("GET %s: %ld, want 405", paths[i], code);
                assert_string_equal(f->body, "Debug endpoints are disabled.\n");
        }
        assert_int_equal(request(f, "POST", "/exec/ns/web/main"), 405);
        assert_string_equal(f->body, "Debug endpoints are disabled.\n");
        assert_int_equal(request(f, "GET", "/configz"), 404);
        int before = log_get_verbosity();
        assert_int_equal(request_body(f, "PUT", "/debug/flags/v", "7"), 404);
        assert_int_equal(log_get_verbosity(), before);
        /* InstallAuthNotRequiredHandlers stay */
        assert_int_equal(request(f, "GET", "/healthz"), 200);
        assert_int_equal(request(f, "GET", "/pods"), 200);
}

/* Go's http.Transport and libcurl keep a connection for the next request:
 * both are answered on one TLS connection. */
static void test_keep_alive_over_tls(void **state)
{
        struct fixture *f = *state;
        start(f, true);
        CURL *h = curl_easy_init();
        assert_non_null(h);
        char url[512];
        long connects = -1;
        secure_url(f, "/healthz", url, sizeof(url));
        assert_int_equal(perform(f, h, url, "GET", NULL), 200);
        assert_string_equal(f->body, "ok");
        curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &connects);
        assert_int_equal(connects, 1);
        secure_url(f, "/pods", url, sizeof(url));
        assert_int_equal(perform(f, h, url, "GET", NULL), 200);
        assert_non_null(strstr(f->body, "\"PodList\""));
        curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &connects);
        assert_int_equal(connects, 0); /* the first connection was reused */
        secure_url(f, "/containerLogs/ns/web/main", url, sizeof(url));
        assert_int_equal(perform(f, h, url, "GET", NULL), 400);
        curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &connects);
        assert_int_equal(connects, 0);
        curl_easy_cleanup(h);
}

/* ---- /runningpods/ against a fake runtime ------------------------------- */

struct runtime {
        int sandbox_state;   /* the ListPodSandbox filter's, -1: none */
        int container_state; /* the ListContainers filter's, -1: none */
};

static void pack_reply(struct fake_reply *reply, const ProtobufCMessage *m)
{
        reply->body_len = protobuf_c_message_get_packed_size(m);
        reply->body = malloc(reply->body_len + 1);
        protobuf_c_message_pack(m, reply->body);
}

static void runtime_handler(struct fake_server *s, const struct fake_request *req,
                            struct fake_reply *reply)
{
        struct runtime *rt = s->data;
        reply->kind = FAKE_REPLY_MESSAGE;
        if (strcmp(req->path, "/runtime.v1.RuntimeService/ListPodSandbox") == 0) {
                Runtime__V1__ListPodSandboxRequest *in =
                    runtime__v1__list_pod_sandbox_request__unpack(NULL, req->msg_len, req->msg);
                rt->sandbox_state =
                    in && in->filter && in->filter->state ? (int)in->filter->state->state : -1;
                runtime__v1__list_pod_sandbox_request__free_unpacked(in, NULL);
                Runtime__V1__PodSandboxMetadata md = RUNTIME__V1__POD_SANDBOX_METADATA__INIT;
                md.name = "web";
                md.namespace_ = "ns";
                md.uid = "u1";
                Runtime__V1__PodSandbox__LabelsEntry label =
                    RUNTIME__V1__POD_SANDBOX__LABELS_ENTRY__INIT;
                label.key = "io.kubernetes.pod.uid";
                label.value = "u1";
                Runtime__V1__PodSandbox__LabelsEntry *labels[] = {&label};
                Runtime__V1__PodSandbox sb = RUNTIME__V1__POD_SANDBOX__INIT;
                sb.id = "sandbox-1";
                sb.metadata = &md;
                sb.state = RUNTIME__V1__POD_SANDBOX_STATE__SANDBOX_READY;
                sb.n_labels = 1;
                sb.labels = labels;
                Runtime__V1__PodSandbox *items[] = {&sb};
                Runtime__V1__ListPodSandboxResponse out =
                    RUNTIME__V1__LIST_POD_SANDBOX_RESPONSE__INIT;
                out.n_items = 1;
                out.items = items;
                pack_reply(reply, &out.base);
        } else if (strcmp(req->path, "/runtime.v1.RuntimeService/ListContainers") == 0) {
                Runtime__V1__ListContainersRequest *in =
                    runtime__v1__list_containers_request__unpack(NULL, req->msg_len, req->msg);
                rt->container_state =
                    in && in->filter && in->filter->state ? (int)in->filter->state->state : -1;
                runtime__v1__list_containers_request__free_unpacked(in, NULL);
                Runtime__V1__ContainerMetadata md = RUNTIME__V1__CONTAINER_METADATA__INIT;
                md.name = "main";
                Runtime__V1__ImageSpec img = RUNTIME__V1__IMAGE_SPEC__INIT;
                img.image = "localhost/busybox:1.35";
                /* the labels every container a kubelet made carries */
                Runtime__V1__Container__LabelsEntry cl[2] = {
                    RUNTIME__V1__CONTAINER__LABELS_ENTRY__INIT,
                    RUNTIME__V1__CONTAINER__LABELS_ENTRY__INIT};
                cl[0].key = "io.kubernetes.pod.uid";
                cl[0].value = "u1";
                cl[1].key = "io.kubernetes.container.name";
                cl[1].value = "main";
                Runtime__V1__Container__LabelsEntry *clabels[] = {&cl[0], &cl[1]};
                Runtime__V1__Container mine = RUNTIME__V1__CONTAINER__INIT;
                mine.n_labels = 2;
                mine.labels = clabels;
                mine.id = "container-1";
                mine.pod_sandbox_id = "sandbox-1";
                mine.metadata = &md;
                mine.image = &img;
                mine.state = RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING;
                Runtime__V1__ContainerMetadata md2 = RUNTIME__V1__CONTAINER_METADATA__INIT;
                md2.name = "stranger";
                /* not made by a kubelet: no pod UID label */
                Runtime__V1__Container other = mine;
                other.n_labels = 0;
                other.labels = NULL;
                other.id = "container-2";
                other.pod_sandbox_id = "sandbox-9";
                other.metadata = &md2;
                Runtime__V1__Container *containers[] = {&mine, &other};
                Runtime__V1__ListContainersResponse out =
                    RUNTIME__V1__LIST_CONTAINERS_RESPONSE__INIT;
                out.n_containers = 2;
                out.containers = containers;
                pack_reply(reply, &out.base);
        } else {
                reply->kind = FAKE_REPLY_TRAILERS_ONLY;
                reply->grpc_status = GRPC_UNIMPLEMENTED;
                reply->grpc_message = "unknown method";
        }
}

/* Upstream's getRunningPods: the runtime's ready sandboxes and running
 * containers as a v1 PodList; without a runtime, its error as a 500. */
static void test_running_pods(void **state)
{
        struct fixture *f = *state;
        struct runtime rt = {.sandbox_state = -2, .container_state = -2};
        struct fake_server *fake = fake_server_start(runtime_handler, &rt);
        start(f, true);
        free(f->cfg.container_runtime_endpoint);
        f->cfg.container_runtime_endpoint = xasprintf("unix://%s", fake->path);
        assert_int_equal(request(f, "GET", "/runningpods/"), 200);
        assert_string_equal(f->content_type, "application/json");
        assert_int_equal(rt.sandbox_state, RUNTIME__V1__POD_SANDBOX_STATE__SANDBOX_READY);
        assert_int_equal(rt.container_state, RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING);
        json_t *got = json_loads(f->body, 0, NULL);
        assert_non_null(got);
        json_t *want = json_loads("{\"kind\": \"PodList\", \"apiVersion\": \"v1\", \"metadata\": "
                                  "{}, \"items\": [{\"metadata\": {\"name\": \"web\", "
                                  "\"namespace\": \"ns\", \"uid\": \"u1\", \"creationTimestamp\": "
                                  "null}, \"spec\": {\"containers\": [{\"name\": \"main\", "
                                  "\"image\": \"localhost/busybox:1.35\", \"resources\": {}}]}, "
                                  "\"status\": {}}]}",
                                  0, NULL);
        assert_non_null(want);
        if (!json_equal(got, want))
                fail_msg("got %s", f->body);
        json_decref(want);
        json_decref(got);
        fake_server_stop(fake);

        free(f->cfg.container_runtime_endpoint); /* no runtime there */
        f->cfg.container_runtime_endpoint = xasprintf("unix://%s/none.sock", f->dir);
        assert_int_equal(request(f, "GET", "/runningpods/"), 500);
        assert_true(f->body_len > 0);
        assert_int_equal(request(f, "POST", "/runningpods/"), 405);
}

/* ---- the healthz port --------------------------------------------------- */

/* Upstream's healthz.InstallHandler on a mux of its own, on
 * healthzBindAddress: /healthz, nothing of the API. */
static void test_healthz_port(void **state)
{
        struct fixture *f = *state;
        configure(f, true);
        f->cfg.enable_server = false;
        serve(f, -1, -1, 0);
        assert_int_equal(kubelet_server_port(f->srv), 0);
        assert_int_equal(kubelet_server_read_only_port(f->srv), 0);
        int port = kubelet_server_healthz_port(f->srv);
        assert_true(port > 0);
        assert_int_equal(request_plain(f, port, "GET", "/healthz"), 200);
        assert_string_equal(f->body, "ok");
        assert_int_equal(request_plain(f, port, "GET", "/healthz?verbose"), 200);
        assert_int_equal(request_plain(f, port, "GET", "/healthz/ping"), 200);
        static const char *const paths[] = {"/", "/pods", "/configz", "/healthzx",
                                            "/containerLogs/ns/web/main"};
        for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
                long code = request_plain(f, port, "GET", paths[i]);
                if (code != 404)
                        fail_msg("GET %s: %ld, want 404", paths[i], code);
        }
        kubelet_server_stop(f->srv);
        f->srv = NULL;

        /* it listens on healthzBindAddress, not on address */
        free(f->cfg.healthz_bind_address);
        f->cfg.healthz_bind_address = xstrdup("localhost:1");
        struct kubelet_server *s = NULL;
        cleanup_error ck_error_t err = NULL;
        assert_int_equal(try_serve(f, -1, -1, 0, &s, &err), -1);
        assert_non_null(strstr(ck_error_msg(err), "healthz server"));
        assert_non_null(strstr(ck_error_msg(err), "invalid address"));
        ck_error_release(&err);
        /* -1 takes cfg's port; 0 there: off */
        f->cfg.healthz_port = 0;
        assert_int_equal(try_serve(f, -1, -1, -1, &s, &err), 0);
        assert_int_equal(kubelet_server_healthz_port(s), 0);
        kubelet_server_stop(s);
}

/* ---- the read-only port ------------------------------------------------- */

static void test_read_only_healthz_ok(void **state)
{
        struct fixture *f = *state;
        struct response r;
        raw_request(ro_port(f), GET_CLOSE("/healthz"), &r);
        assert_int_equal(r.code, 200);
        assert_string_equal(r.body, "ok");
        assert_int_equal(r.content_length, 2);
        response_free(&r);
        raw_request(ro_port(f), GET_CLOSE("/healthz/ping"), &r);
        assert_int_equal(r.code, 200);
        response_free(&r);
        raw_request(ro_port(f), GET_CLOSE("/healthz/log"), &r);
        assert_int_equal(r.code, 200);
        response_free(&r);
}

static void test_read_only_pods_json(void **state)
{
        struct fixture *f = *state;
        struct response r;
        raw_request(ro_port(f),
                    "GET /pods HTTP/1.1\r\nHost: localhost\r\nAccept: */*\r\n"
                    "Connection: close\r\n\r\n",
                    &r);
        assert_int_equal(r.code, 200);
        assert_non_null(strcasestr(r.raw, "\r\nContent-Type: application/json\r\n"));
        assert_int_equal(r.content_length, (long)strlen(r.body));
        json_t *got = json_loads(r.body, 0, NULL);
        assert_non_null(got);
        json_t *want = status_store_pod_list(f->store);
        assert_true(json_equal(got, want));
        assert_string_equal(
            json_string_value(json_object_get(
                json_object_get(json_array_get(json_object_get(got, "items"), 0), "metadata"),
                "name")),
            "web");
        json_decref(got);
        json_decref(want);
        response_free(&r);
}

static void test_read_only_query_is_ignored_for_routing(void **state)
{
        struct fixture *f = *state;
        struct response r;
        raw_request(ro_port(f), "GET /healthz?verbose HTTP/1.0\r\n\r\n", &r);
        assert_int_equal(r.code, 200);
        assert_string_equal(r.body, "ok");
        response_free(&r);
        raw_request(ro_port(f), GET_CLOSE("/pods?fieldSelector=x"), &r);
        assert_int_equal(r.code, 200);
        assert_non_null(strstr(r.body, "\"PodList\""));
        response_free(&r);
}

static void test_read_only_head_has_length_but_no_body(void **state)
{
        struct fixture *f = *state;
        struct response r;
        raw_request(ro_port(f), "HEAD /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                    &r);
        assert_int_equal(r.code, 200);
        assert_int_equal(r.content_length, 2);
        assert_string_equal(r.body, "");
        response_free(&r);
}

static void test_read_only_unknown_path_404(void **state)
{
        struct fixture *f = *state;
        static const char *const reqs[] = {
            GET_CLOSE("/x"),
            GET_CLOSE("/podsx"),
            GET_CLOSE("/configz"), /* a debugging handler, never on this port */
            "PUT /debug/flags/v HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: "
            "1\r\n\r\n5",
        };
        int before = log_get_verbosity();
        for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
                struct response r;
                raw_request(ro_port(f), reqs[i], &r);
                if (r.code != 404)
                        fail_msg("request %zu: %d, want 404", i, r.code);
                response_free(&r);
        }
        assert_int_equal(log_get_verbosity(), before);
}

static void test_read_only_post_405(void **state)
{
        struct fixture *f = *state;
        struct response r;
        raw_request(ro_port(f),
                    "POST /pods HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                    "Content-Length: 4\r\n\r\nabcd",
                    &r);
        assert_int_equal(r.code, 405);
        assert_null(strstr(r.body, "PodList")); /* nothing was served */
        response_free(&r);
}

/* InstallDebuggingDisabledHandlers: the read-only server always has them. */
static void test_read_only_debug_endpoints_disabled(void **state)
{
        struct fixture *f = *state;
        static const char *const reqs[] = {
            GET_CLOSE("/containerLogs/a/b/c"),
            GET_CLOSE("/exec/a/b/c"),
            GET_CLOSE("/attach/a/b/c"),
            GET_CLOSE("/portForward/a/b"),
            GET_CLOSE("/runningpods/"),
            GET_CLOSE("/debug/pprof/heap"),
            GET_CLOSE("/logs/"),
            "POST /run/a/b/c HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
            /* with the pod and the container of the store: still disabled */
            GET_CLOSE("/containerLogs/ns/web/main"),
        };
        for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
                struct response r;
                raw_request(ro_port(f), reqs[i], &r);
                if (r.code != 405)
                        fail_msg("request %zu: %d, want 405", i, r.code);
                assert_string_equal(r.body, "Debug endpoints are disabled.\n");
                response_free(&r);
        }
}

static void test_read_only_malformed_400(void **state)
{
        struct fixture *f = *state;
        /* each HTTP/1.1 request has its Host: the 400 is for what follows */
        static const char *const bad[] = {
            "GET\r\n\r\n",
            "GET /healthz\r\n\r\n",
            "GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n",
            "GET healthz HTTP/1.1\r\nHost: x\r\n\r\n",
            "G(T /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /healthz HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n",
            "GET /healthz HTTP/1.1\r\nHost: x\r\nX: a\r\n folded\r\n\r\n",
            "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n\r\n",
            "GET /health%zz HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /healthz HTTP/1.1\r\n\r\n", /* no Host, as Go's server */
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                struct response r;
                raw_request(ro_port(f), bad[i], &r);
                if (r.code != 400)
                        fail_msg("request %zu: got %d, want 400", i, r.code);
                response_free(&r);
        }
}

static void test_read_only_oversized_request_431(void **state)
{
        struct fixture *f = *state;
        size_t n = 20000; /* more than HTTPD_MAX_HEAD, without the end of the head */
        char *req = xmalloc(n + 64);
        strcpy(req, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ");
        size_t off = strlen(req);
        memset(req + off, 'a', n);
        req[off + n] = '\0';
        int fd = connect_to(AF_INET, ro_port(f));
        /* the server answers once its buffer is full and stops reading: the
         * send may fail part way, the answer is what matters */
        send(fd, req, strlen(req), MSG_NOSIGNAL);
        struct response r;
        read_response(fd, &r);
        assert_int_equal(r.code, 431);
        response_free(&r);
        close(fd);
        free(req);
}

static void test_read_only_slow_client_does_not_block_others(void **state)
{
        struct fixture *f = *state;
        int slow = connect_to(AF_INET, ro_port(f));
        send_all(slow, "GET /heal", 9);
        /* a second connection that sends nothing at all */
        int idle = connect_to(AF_INET, ro_port(f));

        struct response r;
        raw_request(ro_port(f), GET_CLOSE("/healthz"), &r);
        assert_int_equal(r.code, 200);
        response_free(&r);

        /* the slow client can still finish its request: it was not dropped
         * at its deadline for this one to be served (as a server that
         * serves one connection at a time would have to) */
        static const char rest[] = "thz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
        send_all(slow, rest, strlen(rest));
        read_response(slow, &r);
        assert_int_equal(r.code, 200);
        assert_string_equal(r.body, "ok");
        response_free(&r);
        close(slow);
        close(idle);
}

/* A head that never completes is dropped at the request timeout (10 s,
 * counted from the accept), without an answer, and not before. */
static void test_read_only_idle_client_is_dropped(void **state)
{
        struct fixture *f = *state;
        double t0 = now_s(); /* before the connection: the deadline counts from the accept */
        int fd = connect_to(AF_INET, ro_port(f));
        struct timeval tv = {.tv_sec = 60}; /* far beyond the deadline */
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        send_all(fd, "GET /hea", 8);
        char buf[64];
        ssize_t n;
        while ((n = recv(fd, buf, sizeof(buf), 0)) < 0 && errno == EINTR)
                ;
        double waited = now_s() - t0;
        /* closed by the server (not our receive timeout, EAGAIN) */
        assert_true(n == 0 || (n < 0 && errno == ECONNRESET));
        assert_true(waited >= 9.9);
        close(fd);
}

static void test_read_only_many_sequential_requests(void **state)
{
        struct fixture *f = *state;
        for (int i = 0; i < 200; i++) {
                struct response r;
                raw_request(ro_port(f), GET_CLOSE("/healthz"), &r);
                assert_int_equal(r.code, 200);
                response_free(&r);
        }
}

/* HTTP/1.1 keeps the connection: a second request (and a pipelined third)
 * on it; the last one's "Connection: close" ends it. */
static void test_read_only_keep_alive(void **state)
{
        struct fixture *f = *state;
        int fd = connect_to(AF_INET, ro_port(f));
        static const char first[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
        send_all(fd, first, strlen(first));
        struct response r;
        read_one_response(fd, &r);
        assert_int_equal(r.code, 200);
        assert_string_equal(r.body, "ok");
        response_free(&r);

        static const char next[] = "GET /pods HTTP/1.1\r\nHost: x\r\n\r\n" GET_CLOSE("/healthz");
        send_all(fd, next, strlen(next));
        char *all = read_all(fd);
        close(fd);
        /* the second answer, by its Content-Length, then the third */
        char *end = strstr(all, "\r\n\r\n");
        assert_non_null(end);
        const char *cl = strcasestr(all, "\r\nContent-Length: ");
        assert_true(cl != NULL && cl < end);
        size_t first_len = (size_t)(end + 4 - all) + strtoul(cl + 18, NULL, 10);
        assert_true(first_len <= strlen(all));
        parse_response(xstrndup(all, first_len), &r);
        assert_int_equal(r.code, 200);
        assert_false(r.close);
        assert_non_null(strstr(r.body, "\"PodList\""));
        response_free(&r);
        parse_response(xstrdup(all + first_len), &r);
        assert_int_equal(r.code, 200);
        assert_true(r.close);
        assert_string_equal(r.body, "ok");
        response_free(&r);
        free(all);
}

static void test_read_only_ipv6_any_serves_loopback(void **state)
{
        struct fixture *f = *state;
        configure(f, true);
        f->cfg.enable_server = false;
        free(f->cfg.address);
        f->cfg.address = xstrdup("::");
        ck_error_t err = NULL;
        if (try_serve(f, -1, 0, -1, &f->srv, &err) < 0) {
                /* a kernel without IPv6 */
                ck_error_release(&err);
                skip();
        }
        struct response r;
        raw_request(ro_port(f), GET_CLOSE("/healthz"), &r); /* IPv4 via the dual-stack socket */
        assert_int_equal(r.code, 200);
        response_free(&r);
        int fd = connect_to(AF_INET6, ro_port(f));
        static const char req[] = GET_CLOSE("/healthz");
        send_all(fd, req, strlen(req));
        read_response(fd, &r);
        assert_int_equal(r.code, 200);
        response_free(&r);
        close(fd);
}

static void test_read_only_bad_address_is_an_error(void **state)
{
        struct fixture *f = *state;
        configure(f, true);
        f->cfg.enable_server = false;
        free(f->cfg.address);
        f->cfg.address = xstrdup("localhost:1");
        struct kubelet_server *s = NULL;
        ck_error_t err = NULL;
        assert_int_equal(try_serve(f, -1, 0, -1, &s, &err), -1);
        assert_non_null(strstr(ck_error_msg(err), "read-only server"));
        assert_non_null(strstr(ck_error_msg(err), "invalid address"));
        ck_error_release(&err);
        free(f->cfg.address);
        f->cfg.address = xstrdup("127.0.0.1");
        assert_int_equal(try_serve(f, -1, 70000, -1, &s, &err), -1);
        assert_non_null(strstr(ck_error_msg(err), "invalid port 70000"));
        ck_error_release(&err);
}

static void test_read_only_port_in_use_is_an_error(void **state)
{
        struct fixture *f = *state;
        struct kubelet_server *s = NULL;
        ck_error_t err = NULL;
        assert_int_equal(try_serve(f, -1, ro_port(f), -1, &s, &err), -1);
        assert_non_null(strstr(ck_error_msg(err), "read-only server"));
        assert_non_null(strstr(ck_error_msg(err), "Address already in use"));
        ck_error_release(&err);
        /* the first one still serves */
        struct response r;
        raw_request(ro_port(f), GET_CLOSE("/healthz"), &r);
        assert_int_equal(r.code, 200);
        response_free(&r);
}

/* ---- pure --------------------------------------------------------------- */

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

#define SECURE(t) cmocka_unit_test_setup_teardown(t, setup, teardown)
#define READ_ONLY(t) cmocka_unit_test_setup_teardown(t, setup_read_only, teardown)

int main(void)
{
        log_set_fd(open("/dev/null", O_WRONLY | O_CLOEXEC));
        curl_global_init(CURL_GLOBAL_DEFAULT);
        const struct CMUnitTest tests[] = {
            SECURE(test_healthz_and_pods),
            SECURE(test_log_errors_in_upstream_words),
            SECURE(test_runtime_error_after_the_headers),
            SECURE(test_no_credentials_is_401_without_anonymous),
            SECURE(test_configz),
            SECURE(test_debug_flags_v),
            SECURE(test_debug_flags_handler_off),
            SECURE(test_debugging_handlers_off),
            SECURE(test_keep_alive_over_tls),
            SECURE(test_running_pods),
            SECURE(test_healthz_port),
            READ_ONLY(test_read_only_healthz_ok),
            READ_ONLY(test_read_only_pods_json),
            READ_ONLY(test_read_only_query_is_ignored_for_routing),
            READ_ONLY(test_read_only_head_has_length_but_no_body),
            READ_ONLY(test_read_only_unknown_path_404),
            READ_ONLY(test_read_only_post_405),
            READ_ONLY(test_read_only_debug_endpoints_disabled),
            READ_ONLY(test_read_only_malformed_400),
            READ_ONLY(test_read_only_oversized_request_431),
            READ_ONLY(test_read_only_slow_client_does_not_block_others),
            READ_ONLY(test_read_only_idle_client_is_dropped),
            READ_ONLY(test_read_only_many_sequential_requests),
            READ_ONLY(test_read_only_keep_alive),
            READ_ONLY(test_read_only_port_in_use_is_an_error),
            SECURE(test_read_only_ipv6_any_serves_loopback),
            SECURE(test_read_only_bad_address_is_an_error),
            cmocka_unit_test(test_log_container_id),
        };
        int rc = cmocka_run_group_tests(tests, NULL, NULL);
        curl_global_cleanup();
        return rc;
}
