/* SPDX-License-Identifier: Apache-2.0 */
/* The handlers of src/probe (probe_run) against in-process servers on
 * loopback: an HTTP/1.1 server for httpGet and tcpSocket, an h2c gRPC
 * server for the health protocol, and a fake CRI (gRPC on a unix socket)
 * answering ExecSync. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_pods.h"
#include "util/fsutil.h"

#include "api/decode.h"
#include "cri/cri.h"
#include "grpc/grpc.h"
#include "probe/probe.h"

#include "fake_grpc_server.h"
#include "test_prober_server.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A pod whose container "c" has a port named "http" and a readiness probe
 * with the given handler JSON. */
static struct pod *pod_with_handler(int named_port, const char *handler_json)
{
        return test_pod_json(
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web\","
            "\"namespace\":\"default\",\"uid\":\"uid-1\"},\"spec\":{\"containers\":[{"
            "\"name\":\"c\",\"image\":\"busybox\",\"env\":[{\"name\":\"GREETING\","
            "\"value\":\"hello\"}],\"ports\":[{\"name\":\"http\",\"containerPort\":%d}],"
            "\"readinessProbe\":%s}]}}",
            named_port, handler_json);
}

/* Runs the readiness handler of pod's first container: whether it
 * succeeded (a warning is a success). */
static bool run(struct cri_client *cri, const struct pod *pod, int64_t timeout_ms, char **message)
{
        const struct container *c = &pod->containers[0];
        return probe_outcome_ok(probe_run(cri, c, "cid-1", "127.0.0.1",
                                          &c->readiness_probe->handler, timeout_ms, message));
}

/* ---- httpGet ---- */

struct http_fixture {
        struct http_server *srv;
};

static int http_setup(void **state)
{
        struct http_fixture *f = calloc(1, sizeof(*f));
        f->srv = hs_start();
        *state = f;
        return 0;
}

static int http_teardown(void **state)
{
        struct http_fixture *f = *state;
        hs_stop(f->srv);
        free(f);
        return 0;
}

static bool http_probe(struct http_fixture *f, const char *path, int64_t timeout_ms, char **message)
{
        char handler[512];
        snprintf(handler, sizeof(handler), "{\"httpGet\":{\"path\":\"%s\",\"port\":%d}}", path,
                 f->srv->port);
        struct pod *pod = pod_with_handler(1, handler);
        bool r = run(NULL, pod, timeout_ms, message);
        pod_unref(pod);
        return r;
}

static void test_http_200_is_success_500_is_failure(void **state)
{
        struct http_fixture *f = *state;
        hs_route(f->srv, "/ok", 200);
        hs_route(f->srv, "/broken", 500);
        char *msg = NULL;
        assert_true(http_probe(f, "/ok", 1000, &msg));
        free(msg);
        msg = NULL;
        assert_false(http_probe(f, "/broken", 1000, &msg));
        assert_string_equal(msg, "HTTP probe failed with statuscode: 500");
        free(msg);
        msg = NULL;
        /* 404 from an unknown path */
        assert_false(http_probe(f, "/nothing-here", 1000, &msg));
        assert_string_equal(msg, "HTTP probe failed with statuscode: 404");
        free(msg);
        assert_int_equal(hs_hits(f->srv, "/ok"), 1);
        assert_int_equal(hs_hits(f->srv, "/broken"), 1);
}

static void test_http_sends_kube_probe_headers_and_custom_ones(void **state)
{
        struct http_fixture *f = *state;
        hs_route(f->srv, "/h", 200);
        char handler[512];
        snprintf(handler, sizeof(handler),
                 "{\"httpGet\":{\"path\":\"/h\",\"port\":%d,\"httpHeaders\":["
                 "{\"name\":\"X-Custom\",\"value\":\"hello\"},"
                 "{\"name\":\"Host\",\"value\":\"example.com\"}]}}",
                 f->srv->port);
        struct pod *pod = pod_with_handler(1, handler);
        char *msg = NULL;
        assert_true(run(NULL, pod, 1000, &msg));
        free(msg);
        pod_unref(pod);
        char req[4096];
        hs_last_request(f->srv, req, sizeof(req));
        assert_non_null(strstr(req, "GET /h HTTP/1.1\r\n"));
        assert_non_null(strstr(req, "\r\nX-Custom: hello\r\n"));
        assert_non_null(strstr(req, "\r\nHost: example.com\r\n"));
        assert_null(strstr(req, "Host: 127.0.0.1"));
        assert_non_null(strstr(req, "\r\nUser-Agent: kube-probe/1.35\r\n"));
        assert_non_null(strstr(req, "\r\nAccept: */*\r\n"));
        assert_null(strstr(req, "Accept-Encoding"));

        /* a User-Agent of the pod's own replaces ours; an empty Accept removes it */
        snprintf(handler, sizeof(handler),
                 "{\"httpGet\":{\"path\":\"/h\",\"port\":%d,\"httpHeaders\":["
                 "{\"name\":\"User-Agent\",\"value\":\"mine/2\"},"
                 "{\"name\":\"Accept\",\"value\":\"\"}]}}",
                 f->srv->port);
        pod = pod_with_handler(1, handler);
        msg = NULL;
        assert_true(run(NULL, pod, 1000, &msg));
        free(msg);
        pod_unref(pod);
        hs_last_request(f->srv, req, sizeof(req));
        assert_non_null(strstr(req, "\r\nUser-Agent: mine/2\r\n"));
        assert_null(strstr(req, "kube-probe"));
        assert_null(strstr(req, "Accept:"));
}

static void test_http_header_injection_is_refused(void **state)
{
        struct http_fixture *f = *state;
        hs_route(f->srv, "/h", 200);
        char handler[512];
        snprintf(handler, sizeof(handler),
                 "{\"httpGet\":{\"path\":\"/h\",\"port\":%d,\"httpHeaders\":["
                 "{\"name\":\"X-A\",\"value\":\"a\\r\\nX-Injected: 1\"}]}}",
                 f->srv->port);
        struct pod *pod = pod_with_handler(1, handler);
        char *msg = NULL;
        assert_false(run(NULL, pod, 1000, &msg));
        assert_non_null(strstr(msg, "invalid header"));
        free(msg);
        pod_unref(pod);
        assert_int_equal(hs_hits(f->srv, "/h"), 0);
}

static void test_http_redirects(void **state)
{
        struct http_fixture *f = *state;
        hs_route(f->srv, "/ok", 200);
        /* same host: followed */
        struct hs_route *r = hs_route(f->srv, "/moved", 301);
        snprintf(r->location, sizeof(r->location), "/ok");
        char *msg = NULL;
        assert_true(http_probe(f, "/moved", 1000, &msg));
        free(msg);
        assert_int_equal(hs_hits(f->srv, "/moved"), 1);
        assert_int_equal(hs_hits(f->srv, "/ok"), 1);

        /* absolute, same host: followed */
        r = hs_route(f->srv, "/abs", 302);
        snprintf(r->location, sizeof(r->location), "http://127.0.0.1:%d/ok", f->srv->port);
        msg = NULL;
        assert_true(http_probe(f, "/abs", 1000, &msg));
        free(msg);
        assert_int_equal(hs_hits(f->srv, "/ok"), 2);

        /* another host: not followed, a success with a warning (upstream) */
        r = hs_route(f->srv, "/away", 302);
        snprintf(r->location, sizeof(r->location), "http://other.invalid:1/ok");
        msg = NULL;
        assert_true(http_probe(f, "/away", 1000, &msg));
        assert_non_null(strstr(msg, "Probe terminated redirects"));
        free(msg);
        assert_int_equal(hs_hits(f->srv, "/ok"), 2);

        /* a loop: stopped after 10 redirects, a failure */
        r = hs_route(f->srv, "/loop", 302);
        snprintf(r->location, sizeof(r->location), "/loop");
        msg = NULL;
        assert_false(http_probe(f, "/loop", 2000, &msg));
        assert_non_null(strstr(msg, "stopped after 10 redirects"));
        free(msg);
        assert_int_equal(hs_hits(f->srv, "/loop"), 10);
}

static void test_http_slow_server_fails_within_the_timeout(void **state)
{
        struct http_fixture *f = *state;
        /* the answer would come after 30 s (the server's stop cuts it short) */
        struct hs_route *r = hs_route(f->srv, "/slow", 200);
        atomic_store(&r->delay_ms, 30000);
        char *msg = NULL;
        int64_t start = fs_now_mono_ms();
        assert_false(http_probe(f, "/slow", 500, &msg));
        int64_t took = fs_now_mono_ms() - start;
        /* at the timeout (500 ms), not at the answer */
        assert_true(took >= 450 && took < 15000);
        assert_non_null(strstr(msg, "Client.Timeout exceeded"));
        free(msg);
}

static void test_http_body_is_capped_at_10k(void **state)
{
        struct http_fixture *f = *state;
        struct hs_route *r = hs_route(f->srv, "/big", 200);
        r->body_len = 100000;
        char *msg = NULL;
        assert_true(http_probe(f, "/big", 2000, &msg));
        assert_int_equal(strlen(msg), 10 * 1024);
        free(msg);
}

static void test_http_named_port(void **state)
{
        struct http_fixture *f = *state;
        hs_route(f->srv, "/ok", 200);
        struct pod *pod =
            pod_with_handler(f->srv->port, "{\"httpGet\":{\"path\":\"/ok\",\"port\":\"http\"}}");
        char *msg = NULL;
        assert_true(run(NULL, pod, 1000, &msg));
        free(msg);
        pod_unref(pod);
        assert_int_equal(hs_hits(f->srv, "/ok"), 1);

        /* a name the container does not have */
        pod = pod_with_handler(f->srv->port, "{\"httpGet\":{\"path\":\"/ok\",\"port\":\"web\"}}");
        msg = NULL;
        assert_false(run(NULL, pod, 1000, &msg));
        assert_string_equal(msg, "port web not found");
        free(msg);
        pod_unref(pod);
        assert_int_equal(hs_hits(f->srv, "/ok"), 1);
}

static void test_http_connection_refused(void **state)
{
        (void)state;
        char handler[256];
        int port = hs_closed_port();
        snprintf(handler, sizeof(handler), "{\"httpGet\":{\"path\":\"/\",\"port\":%d}}", port);
        struct pod *pod = pod_with_handler(1, handler);
        char *msg = NULL;
        assert_false(run(NULL, pod, 1000, &msg));
        assert_non_null(strstr(msg, "connect: connection refused"));
        free(msg);
        pod_unref(pod);
}

static void test_http_lifecycle_hook_succeeds_on_any_response(void **state)
{
        struct http_fixture *f = *state;
        hs_route(f->srv, "/broken", 500);
        struct pod *pod = test_pod_json(
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web\","
            "\"uid\":\"u\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"b\","
            "\"lifecycle\":{\"postStart\":{\"httpGet\":{\"path\":\"/broken\",\"port\":%d}},"
            "\"preStop\":{\"httpGet\":{\"path\":\"/\",\"port\":%d}}}}]}}",
            f->srv->port, hs_closed_port());
        const struct container *c = &pod->containers[0];
        char *msg = NULL;
        /* upstream's hook runner: any HTTP response will do */
        assert_true(
            probe_outcome_ok(probe_run(NULL, c, "cid", "127.0.0.1", c->post_start, 1000, &msg)));
        free(msg);
        assert_int_equal(hs_hits(f->srv, "/broken"), 1);
        char req[4096];
        hs_last_request(f->srv, req, sizeof(req));
        assert_non_null(strstr(req, "\r\nUser-Agent: kube-lifecycle/1.35\r\n"));
        /* no response at all is a failure */
        msg = NULL;
        assert_false(
            probe_outcome_ok(probe_run(NULL, c, "cid", "127.0.0.1", c->pre_stop, 1000, &msg)));
        assert_non_null(strstr(msg, "connection refused"));
        free(msg);
        pod_unref(pod);
}

/* ---- tcpSocket ---- */

static void test_tcp_open_and_closed_port(void **state)
{
        struct http_fixture *f = *state;
        char handler[256];
        snprintf(handler, sizeof(handler), "{\"tcpSocket\":{\"port\":%d}}", f->srv->port);
        struct pod *pod = pod_with_handler(1, handler);
        char *msg = NULL;
        assert_true(run(NULL, pod, 1000, &msg));
        free(msg);
        pod_unref(pod);

        int port = hs_closed_port();
        snprintf(handler, sizeof(handler), "{\"tcpSocket\":{\"port\":%d}}", port);
        pod = pod_with_handler(1, handler);
        msg = NULL;
        assert_false(run(NULL, pod, 1000, &msg));
        char want[128];
        snprintf(want, sizeof(want), "dial tcp 127.0.0.1:%d: connect: connection refused", port);
        assert_string_equal(msg, want);
        free(msg);
        pod_unref(pod);

        /* a named port */
        pod = pod_with_handler(f->srv->port, "{\"tcpSocket\":{\"port\":\"http\"}}");
        msg = NULL;
        assert_true(run(NULL, pod, 1000, &msg));
        free(msg);
        pod_unref(pod);
}

/* ---- grpc ---- */

struct health {
        atomic_int status; /* the ServingStatus to answer; -1: UNIMPLEMENTED */
        pthread_mutex_t lock;
        char service[64]; /* the last request's service */
        char path[128];
};

static void health_handler(struct fake_server *s, const struct fake_request *req,
                           struct fake_reply *reply)
{
        struct health *h = s->data;
        pthread_mutex_lock(&h->lock);
        snprintf(h->path, sizeof(h->path), "%s", req->path);
        h->service[0] = '\0';
        /* field 1, length-delimited, one-byte length */
        if (req->msg_len >= 2 && req->msg[0] == 0x0a && req->msg[1] == req->msg_len - 2 &&
            req->msg_len - 2 < sizeof(h->service)) {
                memcpy(h->service, req->msg + 2, req->msg_len - 2);
                h->service[req->msg_len - 2] = '\0';
        }
        pthread_mutex_unlock(&h->lock);
        int status = atomic_load(&h->status);
        if (status < 0) {
                reply->kind = FAKE_REPLY_TRAILERS_ONLY;
                reply->grpc_status = GRPC_UNIMPLEMENTED;
                reply->grpc_message = "unknown service grpc.health.v1.Health";
                return;
        }
        reply->kind = FAKE_REPLY_MESSAGE;
        reply->body = malloc(2);
        reply->body[0] = 0x08;
        reply->body[1] = (uint8_t)status;
        reply->body_len = 2;
}

/* The fake gRPC server of fake_grpc_server.h, listening on TCP loopback. */
static struct fake_server *grpc_server_tcp(struct health *h, int *port)
{
        struct fake_server *s = calloc(1, sizeof(*s));
        s->handler = health_handler;
        s->data = h;
        pthread_mutex_init(&s->lock, NULL);
        if (pipe2(s->stop_pipe, O_CLOEXEC) < 0)
                abort();
        s->listen_fd = hs_listen_loopback(port);
        pthread_create(&s->thread, NULL, fake_server_main, s);
        return s;
}

static void test_grpc_health_check(void **state)
{
        (void)state;
        struct health h = {0};
        pthread_mutex_init(&h.lock, NULL);
        int port;
        struct fake_server *s = grpc_server_tcp(&h, &port);
        char handler[256];
        snprintf(handler, sizeof(handler), "{\"grpc\":{\"port\":%d,\"service\":\"svc\"}}", port);
        struct pod *pod = pod_with_handler(1, handler);

        atomic_store(&h.status, 1); /* SERVING */
        char *msg = NULL;
        assert_true(run(NULL, pod, 1000, &msg));
        free(msg);
        pthread_mutex_lock(&h.lock);
        assert_string_equal(h.path, "/grpc.health.v1.Health/Check");
        assert_string_equal(h.service, "svc");
        pthread_mutex_unlock(&h.lock);

        atomic_store(&h.status, 2); /* NOT_SERVING */
        msg = NULL;
        assert_false(run(NULL, pod, 1000, &msg));
        assert_string_equal(msg, "service unhealthy (responded with \"NOT_SERVING\")");
        free(msg);

        atomic_store(&h.status, 0); /* UNKNOWN (an empty message) */
        msg = NULL;
        assert_false(run(NULL, pod, 1000, &msg));
        assert_string_equal(msg, "service unhealthy (responded with \"UNKNOWN\")");
        free(msg);

        atomic_store(&h.status, -1);
        msg = NULL;
        assert_false(run(NULL, pod, 1000, &msg));
        assert_non_null(strstr(msg, "does not implement the grpc health protocol"));
        free(msg);
        pod_unref(pod);
        fake_server_stop(s);
        pthread_mutex_destroy(&h.lock);

        /* nothing listening */
        snprintf(handler, sizeof(handler), "{\"grpc\":{\"port\":%d}}", hs_closed_port());
        pod = pod_with_handler(1, handler);
        msg = NULL;
        assert_false(run(NULL, pod, 1000, &msg));
        assert_non_null(strstr(msg, "failed to connect service"));
        free(msg);
        pod_unref(pod);
}

/* ---- exec through a fake CRI ---- */

struct exec_plan {
        atomic_int mode; /* 0: answer, 1: DEADLINE_EXCEEDED, 2: NOT_FOUND */
        int exit_code;
        size_t out_len; /* stdout of 'o's */
        pthread_mutex_t lock;
        char argv[256]; /* the command received, space separated */
        char container_id[64];
        int64_t timeout;
};

static void exec_handler(struct fake_server *s, const struct fake_request *req,
                         struct fake_reply *reply)
{
        struct exec_plan *p = s->data;
        Runtime__V1__ExecSyncRequest *in =
            runtime__v1__exec_sync_request__unpack(NULL, req->msg_len, req->msg);
        pthread_mutex_lock(&p->lock);
        p->argv[0] = '\0';
        for (size_t i = 0; in && i < in->n_cmd; i++) {
                strncat(p->argv, in->cmd[i], sizeof(p->argv) - strlen(p->argv) - 2);
                if (i + 1 < in->n_cmd)
                        strcat(p->argv, " ");
        }
        snprintf(p->container_id, sizeof(p->container_id), "%s", in ? in->container_id : "");
        p->timeout = in ? in->timeout : -1;
        pthread_mutex_unlock(&p->lock);
        runtime__v1__exec_sync_request__free_unpacked(in, NULL);

        int mode = atomic_load(&p->mode);
        if (mode != 0) {
                reply->kind = FAKE_REPLY_TRAILERS_ONLY;
                reply->grpc_status = mode == 1 ? GRPC_DEADLINE_EXCEEDED : GRPC_NOT_FOUND;
                reply->grpc_message = "nope";
                return;
        }
        Runtime__V1__ExecSyncResponse out = RUNTIME__V1__EXEC_SYNC_RESPONSE__INIT;
        uint8_t *o = malloc(p->out_len + 1);
        memset(o, 'o', p->out_len);
        out.stdout.data = o;
        out.stdout.len = p->out_len;
        out.stderr.data = (uint8_t *)"err";
        out.stderr.len = 3;
        out.exit_code = p->exit_code;
        reply->kind = FAKE_REPLY_MESSAGE;
        reply->body_len = runtime__v1__exec_sync_response__get_packed_size(&out);
        reply->body = malloc(reply->body_len);
        runtime__v1__exec_sync_response__pack(&out, reply->body);
        free(o);
}

static void test_exec_through_cri(void **state)
{
        (void)state;
        struct exec_plan plan = {.out_len = 3};
        pthread_mutex_init(&plan.lock, NULL);
        struct fake_server *s = fake_server_start(exec_handler, &plan);
        char endpoint[256];
        snprintf(endpoint, sizeof(endpoint), "unix://%s", s->path);
        struct cri_client *cri = cri_client_new(endpoint, 5000);
        struct pod *pod = pod_with_handler(
            1,
            "{\"exec\":{\"command\":[\"sh\",\"-c\",\"echo $(GREETING)\"]},\"timeoutSeconds\":3}");

        char *msg = NULL;
        assert_true(run(cri, pod, 3000, &msg));
        assert_string_equal(msg, "oooerr");
        free(msg);
        pthread_mutex_lock(&plan.lock);
        assert_string_equal(plan.argv, "sh -c echo hello"); /* $(VAR) from the env */
        assert_string_equal(plan.container_id, "cid-1");
        assert_int_equal(plan.timeout, 3);
        pthread_mutex_unlock(&plan.lock);

        plan.exit_code = 1;
        plan.out_len = 50000;
        msg = NULL;
        assert_false(run(cri, pod, 3000, &msg));
        assert_int_equal(strlen(msg), 10 * 1024); /* the output, capped */
        free(msg);

        atomic_store(&plan.mode, 1);
        msg = NULL;
        assert_false(run(cri, pod, 3000, &msg));
        assert_string_equal(msg, "command timed out");
        free(msg);

        atomic_store(&plan.mode, 2);
        msg = NULL;
        assert_false(run(cri, pod, 3000, &msg));
        assert_non_null(strstr(msg, "nope"));
        free(msg);

        /* no runtime at all */
        msg = NULL;
        assert_false(run(NULL, pod, 3000, &msg));
        free(msg);

        pod_unref(pod);
        cri_client_free(cri);
        fake_server_stop(s);
        pthread_mutex_destroy(&plan.lock);
}

/* ---- sleep (lifecycle hooks) ---- */

static void test_sleep_handler(void **state)
{
        (void)state;
        struct pod *pod = test_pod_json(
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web\","
            "\"uid\":\"u\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"b\","
            "\"lifecycle\":{\"preStop\":{\"sleep\":{\"seconds\":1}}}}]}}");
        const struct container *c = &pod->containers[0];
        assert_non_null(c->pre_stop);
        char *msg = NULL;
        int64_t start = fs_now_mono_ms();
        assert_true(probe_outcome_ok(probe_run(NULL, c, "cid", NULL, c->pre_stop, 1000, &msg)));
        assert_true(fs_now_mono_ms() - start >= 990);
        free(msg);
        pod_unref(pod);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_http_200_is_success_500_is_failure, http_setup,
                                            http_teardown),
            cmocka_unit_test_setup_teardown(test_http_sends_kube_probe_headers_and_custom_ones,
                                            http_setup, http_teardown),
            cmocka_unit_test_setup_teardown(test_http_header_injection_is_refused, http_setup,
                                            http_teardown),
            cmocka_unit_test_setup_teardown(test_http_redirects, http_setup, http_teardown),
            cmocka_unit_test_setup_teardown(test_http_slow_server_fails_within_the_timeout,
                                            http_setup, http_teardown),
            cmocka_unit_test_setup_teardown(test_http_body_is_capped_at_10k, http_setup,
                                            http_teardown),
            cmocka_unit_test_setup_teardown(test_http_named_port, http_setup, http_teardown),
            cmocka_unit_test(test_http_connection_refused),
            cmocka_unit_test_setup_teardown(test_http_lifecycle_hook_succeeds_on_any_response,
                                            http_setup, http_teardown),
            cmocka_unit_test_setup_teardown(test_tcp_open_and_closed_port, http_setup,
                                            http_teardown),
            cmocka_unit_test(test_grpc_health_check),
            cmocka_unit_test(test_exec_through_cri),
            cmocka_unit_test(test_sleep_handler),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
