/* SPDX-License-Identifier: Apache-2.0 */
/* The CRI streaming calls (cri/cri_streaming.c: Exec, Attach, PortForward,
 * ReopenContainerLog) against a fake runtime (fake_grpc_server.h) that
 * decodes each request, keeps its fields and answers with a URL.  Checks the
 * method paths, every request field (a flag or a port lost or swapped on the
 * way shows), the deadline, the URL handed back, and the errors: a runtime
 * error and a response without a URL, both naming the RPC. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cri/cri.h"
#include "grpc/grpc.h"
#include "fake_grpc_server.h"

#include <stdlib.h>
#include <string.h>

#define MAX_SEEN 8

/* The fields of the last request the runtime decoded. */
struct seen {
        char id[128]; /* container_id, or pod_sandbox_id of PortForward */
        size_t n_cmd;
        char cmd[MAX_SEEN][64];
        bool tty, in, out, errs;
        size_t n_port;
        int32_t port[MAX_SEEN];
};

struct runtime {
        int fail_code;  /* != 0: every call fails with this status */
        bool empty_url; /* answer Exec / Attach / PortForward without a URL */
        int calls;      /* requests decoded */
        struct seen seen;
};

static void pack_reply(struct fake_reply *reply, const ProtobufCMessage *m)
{
        reply->body_len = protobuf_c_message_get_packed_size(m);
        reply->body = malloc(reply->body_len + 1);
        protobuf_c_message_pack(m, reply->body);
}

static void copy_str(char *dst, size_t size, const char *s)
{
        snprintf(dst, size, "%s", s ? s : "(null)");
}

#define METHOD(path, name) (strcmp((path), "/runtime.v1." name) == 0)
#define UNPACK(type, req) runtime__v1__##type##__unpack(NULL, (req)->msg_len, (req)->msg)

static void runtime_handler(struct fake_server *s, const struct fake_request *req,
                            struct fake_reply *reply)
{
        struct runtime *rt = s->data;
        struct seen *seen = &rt->seen;
        memset(seen, 0, sizeof(*seen));
        reply->kind = FAKE_REPLY_MESSAGE;
        if (rt->fail_code) {
                reply->kind = FAKE_REPLY_TRAILERS_ONLY;
                reply->grpc_status = rt->fail_code;
                reply->grpc_message = "an error from the runtime";
                return;
        }
        rt->calls++;
        if (METHOD(req->path, "RuntimeService/Exec")) {
                Runtime__V1__ExecRequest *in = UNPACK(exec_request, req);
                copy_str(seen->id, sizeof(seen->id), in->container_id);
                seen->n_cmd = in->n_cmd;
                for (size_t i = 0; i < in->n_cmd && i < MAX_SEEN; i++)
                        copy_str(seen->cmd[i], sizeof(seen->cmd[i]), in->cmd[i]);
                seen->tty = in->tty;
                seen->in = in->stdin;
                seen->out = in->stdout;
                seen->errs = in->stderr;
                runtime__v1__exec_request__free_unpacked(in, NULL);
                Runtime__V1__ExecResponse out = RUNTIME__V1__EXEC_RESPONSE__INIT;
                out.url = rt->empty_url ? "" : "http://127.0.0.1:35001/exec/tok-exec";
                pack_reply(reply, &out.base);
        } else if (METHOD(req->path, "RuntimeService/Attach")) {
                Runtime__V1__AttachRequest *in = UNPACK(attach_request, req);
                copy_str(seen->id, sizeof(seen->id), in->container_id);
                seen->tty = in->tty;
                seen->in = in->stdin;
                seen->out = in->stdout;
                seen->errs = in->stderr;
                runtime__v1__attach_request__free_unpacked(in, NULL);
                Runtime__V1__AttachResponse out = RUNTIME__V1__ATTACH_RESPONSE__INIT;
                out.url = rt->empty_url ? "" : "http://127.0.0.1:35001/attach/tok-attach";
                pack_reply(reply, &out.base);
        } else if (METHOD(req->path, "RuntimeService/PortForward")) {
                Runtime__V1__PortForwardRequest *in = UNPACK(port_forward_request, req);
                copy_str(seen->id, sizeof(seen->id), in->pod_sandbox_id);
                seen->n_port = in->n_port;
                for (size_t i = 0; i < in->n_port && i < MAX_SEEN; i++)
                        seen->port[i] = in->port[i];
                runtime__v1__port_forward_request__free_unpacked(in, NULL);
                Runtime__V1__PortForwardResponse out = RUNTIME__V1__PORT_FORWARD_RESPONSE__INIT;
                out.url = rt->empty_url ? "" : "http://127.0.0.1:35001/portforward/tok-pf";
                pack_reply(reply, &out.base);
        } else if (METHOD(req->path, "RuntimeService/ReopenContainerLog")) {
                Runtime__V1__ReopenContainerLogRequest *in =
                    UNPACK(reopen_container_log_request, req);
                copy_str(seen->id, sizeof(seen->id), in->container_id);
                runtime__v1__reopen_container_log_request__free_unpacked(in, NULL);
                Runtime__V1__ReopenContainerLogResponse out =
                    RUNTIME__V1__REOPEN_CONTAINER_LOG_RESPONSE__INIT;
                pack_reply(reply, &out.base);
        } else {
                rt->calls--;
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

/* Copies taken under the server's lock, so that a failed assert never
 * leaves it held. */
static void assert_last_path(struct fixture *f, const char *want)
{
        char path[sizeof(f->server->last_path)];
        pthread_mutex_lock(&f->server->lock);
        memcpy(path, f->server->last_path, sizeof(path));
        pthread_mutex_unlock(&f->server->lock);
        assert_string_equal(path, want);
}

/* Each call has the client's timeout (as upstream), no more. */
static void assert_client_deadline(struct fixture *f)
{
        char timeout[sizeof(f->server->last_timeout)];
        pthread_mutex_lock(&f->server->lock);
        memcpy(timeout, f->server->last_timeout, sizeof(timeout));
        pthread_mutex_unlock(&f->server->lock);
        int64_t ms = -1;
        ck_error_t err = NULL;
        assert_true(timeout[0] != '\0');
        assert_int_equal(grpc_parse_timeout(timeout, strlen(timeout), &ms, &err), 0);
        assert_true(ms > CLIENT_TIMEOUT_MS - 1000 && ms <= CLIENT_TIMEOUT_MS);
}

static void assert_flags(const struct seen *seen, bool tty, bool in, bool out, bool errs)
{
        assert_int_equal(seen->tty, tty);
        assert_int_equal(seen->in, in);
        assert_int_equal(seen->out, out);
        assert_int_equal(seen->errs, errs);
}

static void test_exec_sends_the_command_and_the_streams(void **state)
{
        struct fixture *f = *state;
        char *cmd[] = {"sh", "-c", "echo hi; cat", NULL};
        char *url = NULL;
        ck_error_t err = NULL;
        assert_int_equal(
            cri_exec(f->client, "container-1", cmd, false, true, true, true, &url, &err), 0);
        assert_null(err);
        assert_string_equal(url, "http://127.0.0.1:35001/exec/tok-exec");
        free(url);
        assert_last_path(f, "/runtime.v1.RuntimeService/Exec");
        assert_client_deadline(f);
        assert_string_equal(f->rt.seen.id, "container-1");
        assert_int_equal(f->rt.seen.n_cmd, 3);
        assert_string_equal(f->rt.seen.cmd[0], "sh");
        assert_string_equal(f->rt.seen.cmd[1], "-c");
        assert_string_equal(f->rt.seen.cmd[2], "echo hi; cat");
        assert_flags(&f->rt.seen, false, true, true, true);

        /* every flag the other way round, each on its own field */
        char *shell[] = {"/bin/sh", NULL};
        url = NULL;
        assert_int_equal(
            cri_exec(f->client, "container-2", shell, true, false, true, false, &url, &err), 0);
        free(url);
        assert_string_equal(f->rt.seen.id, "container-2");
        assert_int_equal(f->rt.seen.n_cmd, 1);
        assert_string_equal(f->rt.seen.cmd[0], "/bin/sh");
        assert_flags(&f->rt.seen, true, false, true, false);

        url = NULL;
        assert_int_equal(
            cri_exec(f->client, "container-2", shell, false, false, false, true, &url, &err), 0);
        free(url);
        assert_flags(&f->rt.seen, false, false, false, true);
        assert_int_equal(f->rt.calls, 3);
}

static void test_attach_sends_the_streams(void **state)
{
        struct fixture *f = *state;
        char *url = NULL;
        ck_error_t err = NULL;
        /* AttachRequest numbers stdin 2, tty 3: a swap would show here */
        assert_int_equal(cri_attach(f->client, "container-1", true, false, true, false, &url, &err),
                         0);
        assert_null(err);
        assert_string_equal(url, "http://127.0.0.1:35001/attach/tok-attach");
        free(url);
        assert_last_path(f, "/runtime.v1.RuntimeService/Attach");
        assert_client_deadline(f);
        assert_string_equal(f->rt.seen.id, "container-1");
        assert_flags(&f->rt.seen, true, false, true, false);

        url = NULL;
        assert_int_equal(cri_attach(f->client, "container-3", false, true, false, true, &url, &err),
                         0);
        free(url);
        assert_string_equal(f->rt.seen.id, "container-3");
        assert_flags(&f->rt.seen, false, true, false, true);
}

static void test_port_forward_sends_the_ports(void **state)
{
        struct fixture *f = *state;
        const int32_t ports[] = {80, 8080, 65535};
        char *url = NULL;
        ck_error_t err = NULL;
        assert_int_equal(cri_port_forward(f->client, "sandbox-1", ports, 3, &url, &err), 0);
        assert_null(err);
        assert_string_equal(url, "http://127.0.0.1:35001/portforward/tok-pf");
        free(url);
        assert_last_path(f, "/runtime.v1.RuntimeService/PortForward");
        assert_client_deadline(f);
        assert_string_equal(f->rt.seen.id, "sandbox-1");
        assert_int_equal(f->rt.seen.n_port, 3);
        assert_int_equal(f->rt.seen.port[0], 80);
        assert_int_equal(f->rt.seen.port[1], 8080);
        assert_int_equal(f->rt.seen.port[2], 65535);

        /* no ports: an empty repeated field (ports may then be NULL) */
        url = NULL;
        assert_int_equal(cri_port_forward(f->client, "sandbox-2", NULL, 0, &url, &err), 0);
        free(url);
        assert_string_equal(f->rt.seen.id, "sandbox-2");
        assert_int_equal(f->rt.seen.n_port, 0);
}

static void test_reopen_container_log(void **state)
{
        struct fixture *f = *state;
        ck_error_t err = NULL;
        assert_int_equal(cri_reopen_container_log(f->client, "container-7", &err), 0);
        assert_null(err);
        assert_last_path(f, "/runtime.v1.RuntimeService/ReopenContainerLog");
        assert_client_deadline(f);
        assert_string_equal(f->rt.seen.id, "container-7");
        assert_int_equal(f->rt.calls, 1);
}

static void assert_error(ck_error_t *err, int code, const char *msg)
{
        assert_non_null(*err);
        assert_int_equal((*err)->code, code);
        assert_string_equal((*err)->msg, msg);
        ck_error_release(err);
}

static void test_runtime_error_names_the_rpc(void **state)
{
        struct fixture *f = *state;
        f->rt.fail_code = GRPC_NOT_FOUND;
        char *cmd[] = {"true", NULL};
        const int32_t port = 80;
        char *url = NULL;
        ck_error_t err = NULL;

        assert_true(cri_exec(f->client, "nope", cmd, false, false, true, true, &url, &err) < 0);
        assert_null(url);
        assert_error(&err, CRI_CODE_NOT_FOUND, "CRI Exec: rpc error 5: an error from the runtime");

        assert_true(cri_attach(f->client, "nope", false, false, true, true, &url, &err) < 0);
        assert_null(url);
        assert_error(&err, CRI_CODE_NOT_FOUND,
                     "CRI Attach: rpc error 5: an error from the runtime");

        assert_true(cri_port_forward(f->client, "nope", &port, 1, &url, &err) < 0);
        assert_null(url);
        assert_error(&err, CRI_CODE_NOT_FOUND,
                     "CRI PortForward: rpc error 5: an error from the runtime");

        assert_true(cri_reopen_container_log(f->client, "nope", &err) < 0);
        assert_error(&err, CRI_CODE_NOT_FOUND,
                     "CRI ReopenContainerLog: rpc error 5: an error from the runtime");
        assert_int_equal(f->rt.calls, 0);
}

static void test_empty_url_is_an_error(void **state)
{
        struct fixture *f = *state;
        f->rt.empty_url = true;
        char *cmd[] = {"true", NULL};
        const int32_t port = 8080;
        char *url = NULL;
        ck_error_t err = NULL;

        assert_true(cri_exec(f->client, "container-1", cmd, false, false, true, true, &url, &err) <
                    0);
        assert_null(url);
        assert_error(&err, GRPC_INTERNAL, "CRI Exec: URL of container `container-1` is not set");

        assert_true(cri_attach(f->client, "container-1", false, false, true, true, &url, &err) < 0);
        assert_null(url);
        assert_error(&err, GRPC_INTERNAL, "CRI Attach: URL of container `container-1` is not set");

        assert_true(cri_port_forward(f->client, "sandbox-1", &port, 1, &url, &err) < 0);
        assert_null(url);
        assert_error(&err, GRPC_INTERNAL, "CRI PortForward: URL of sandbox `sandbox-1` is not set");
        assert_int_equal(f->rt.calls, 3); /* the runtime did answer each */
}

static void test_runtime_down_is_unavailable(void **state)
{
        (void)state;
        struct cri_client *c = cri_client_new("unix:///nonexistent/cri.sock", 1000);
        char *cmd[] = {"true", NULL};
        char *url = NULL;
        ck_error_t err = NULL;
        assert_true(cri_exec(c, "container-1", cmd, false, false, true, true, &url, &err) < 0);
        assert_null(url);
        assert_int_equal(err->code, CRI_CODE_UNAVAILABLE);
        assert_non_null(strstr(err->msg, "CRI Exec: connect `/nonexistent/cri.sock`"));
        ck_error_release(&err);
        cri_client_free(c);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_exec_sends_the_command_and_the_streams, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_attach_sends_the_streams, setup, teardown),
            cmocka_unit_test_setup_teardown(test_port_forward_sends_the_ports, setup, teardown),
            cmocka_unit_test_setup_teardown(test_reopen_container_log, setup, teardown),
            cmocka_unit_test_setup_teardown(test_runtime_error_names_the_rpc, setup, teardown),
            cmocka_unit_test_setup_teardown(test_empty_url_is_an_error, setup, teardown),
            cmocka_unit_test(test_runtime_down_is_unavailable),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
