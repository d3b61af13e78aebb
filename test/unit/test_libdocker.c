/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Docker Engine API client (libdocker/docker.h) against a scripted
 * engine on a unix socket: the version check on open, the requests it
 * sends (method, versioned path, query escaping, headers, bodies), the
 * engine's error answers made errors with their codes, a pull's progress
 * stream and an exec's multiplexed output; and the pure decoders.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fake_apiserver.h"
#include "libdocker/docker.h"
#include "util/cleanup.h"

#include <stdlib.h>
#include <string.h>

#define VERSION_141                                                                                \
        "{\"Version\":\"20.10.24+dfsg1\",\"ApiVersion\":\"1.41\",\"Os\":\"linux\","                \
        "\"Arch\":\"amd64\",\"KernelVersion\":\"6.1.0\"}"

static char sock_path[64];

static int setup(void **state)
{
        (void)state;
        snprintf(sock_path, sizeof(sock_path), "/tmp/ck-docker-test-%d.sock", getpid());
        return 0;
}

static struct docker_client *open_on(struct fake *f)
{
        (void)f;
        cleanup_free char *ep = xasprintf("unix://%s", sock_path);
        struct docker_client *d = NULL;
        ck_error_t err = NULL;
        if (docker_client_open(ep, 5000, &d, &err) < 0)
                fail_msg("%s", ck_error_msg(err));
        return d;
}

static void done(struct fake *f, struct docker_client *d)
{
        docker_client_free(d);
        fake_stop(f);
        unlink(sock_path);
}

static void test_open_checks_the_version(void **state)
{
        (void)state;
        static const struct answer script[] = {{200, VERSION_141}};
        struct fake *f = fake_start_unix(script, 1, sock_path);
        struct docker_client *d = open_on(f);
        assert_string_equal(f->req[0], "GET /v1.41/version");
        assert_non_null(strstr(f->head[0], "Host: docker"));
        done(f, d);

        static const struct answer old[] = {
            {200, "{\"Version\":\"19.03.15\",\"ApiVersion\":\"1.40\"}"}};
        f = fake_start_unix(old, 1, sock_path);
        cleanup_free char *ep = xasprintf("unix://%s", sock_path);
        ck_error_t err = NULL;
        d = NULL;
        assert_int_equal(docker_client_open(ep, 5000, &d, &err), -1);
        assert_null(d);
        assert_int_equal(err->code, DOCKER_ERR_UNAVAILABLE);
        assert_non_null(strstr(ck_error_msg(err), "Docker Engine 19.03.15 speaks API 1.40"));
        ck_error_release(&err);
        done(f, NULL);
}

static void test_open_fails_clearly(void **state)
{
        (void)state;
        struct docker_client *d = NULL;
        ck_error_t err = NULL;
        unlink(sock_path);
        cleanup_free char *ep = xasprintf("unix://%s", sock_path);
        assert_int_equal(docker_client_open(ep, 2000, &d, &err), -1);
        assert_int_equal(err->code, DOCKER_ERR_UNAVAILABLE);
        assert_non_null(strstr(ck_error_msg(err), sock_path));
        assert_non_null(strstr(ck_error_msg(err), "No such file or directory"));
        ck_error_release(&err);

        assert_int_equal(docker_client_open("tcp://127.0.0.1:2375", 2000, &d, &err), -1);
        assert_int_equal(err->code, DOCKER_ERR_INVALID);
        assert_non_null(strstr(ck_error_msg(err), "only unix:// is supported"));
        ck_error_release(&err);
}

static void test_errors_carry_the_engine_message(void **state)
{
        (void)state;
        static const struct answer script[] = {
            {200, VERSION_141},
            {404, "{\"message\":\"No such container: k8s_x\"}"},
            {409, "{\"message\":\"Conflict. The container name \\\"/a\\\" is already in use\"}"},
            {304, ""},
            {304, ""},
            {500, "plain text failure\n"},
        };
        struct fake *f = fake_start_unix(script, 6, sock_path);
        struct docker_client *d = open_on(f);
        ck_error_t err = NULL;
        struct docker_container c;
        assert_int_equal(docker_container_inspect(d, "k8s_x", &c, &err), -1);
        assert_int_equal(err->code, DOCKER_ERR_NOT_FOUND);
        assert_string_equal(ck_error_msg(err),
                            "inspect container `k8s_x`: No such container: k8s_x");
        ck_error_release(&err);

        cleanup_free char *id = NULL;
        json_t *cfg = json_pack("{s:s}", "Image", "busybox");
        assert_int_equal(docker_container_create(d, "a", cfg, &id, &err), -1);
        json_decref(cfg);
        assert_int_equal(err->code, DOCKER_ERR_CONFLICT);
        assert_non_null(strstr(ck_error_msg(err), "create container `a`: Conflict."));
        ck_error_release(&err);

        /* already started, already stopped: done */
        assert_int_equal(docker_container_start(d, "a", &err), 0);
        assert_int_equal(docker_container_stop(d, "a", 10, &err), 0);

        assert_int_equal(docker_container_remove(d, "a", true, &err), -1);
        assert_int_equal(err->code, DOCKER_ERR_SERVER);
        assert_string_equal(ck_error_msg(err), "remove container `a`: plain text failure");
        ck_error_release(&err);

        assert_string_equal(f->req[1], "GET /v1.41/containers/k8s_x/json");
        assert_string_equal(f->req[2], "POST /v1.41/containers/create?name=a");
        assert_non_null(strstr(f->head[2], "Content-Type: application/json"));
        assert_string_equal(f->body[2], "{\"Image\":\"busybox\"}");
        assert_string_equal(f->req[3], "POST /v1.41/containers/a/start");
        assert_string_equal(f->req[4], "POST /v1.41/containers/a/stop?t=10");
        assert_string_equal(f->req[5], "DELETE /v1.41/containers/a?v=1&force=1");
        /* one kept-alive connection served all */
        assert_int_equal(f->accepts, 1);
        done(f, d);
}

static const char inspect_json[] =
    "{\"Id\":\"abc123\",\"Name\":\"/k8s_POD_web_default_uid_0\","
    "\"Created\":\"2026-12-03T10:00:00.123456789Z\",\"Image\":\"sha256:feed\","
    "\"LogPath\":\"/d/abc123-json.log\",\"ResolvConfPath\":\"/d/resolv.conf\","
    "\"State\":{\"Status\":\"exited\",\"Running\":false,\"OOMKilled\":true,\"Pid\":0,"
    "\"ExitCode\":137,\"Error\":\"\",\"StartedAt\":\"2026-12-03T10:00:01Z\","
    "\"FinishedAt\":\"0001-01-01T00:00:00Z\"},"
    "\"Config\":{\"Image\":\"localhost/busybox:1.35\",\"Labels\":{\"io.kubernetes.docker.type\":"
    "\"podsandbox\"}},"
    "\"HostConfig\":{\"NetworkMode\":\"none\",\"IpcMode\":\"shareable\",\"CgroupParent\":\"/k\"},"
    "\"NetworkSettings\":{\"SandboxKey\":\"/var/run/docker/netns/1\",\"IPAddress\":\"\"},"
    "\"Mounts\":[{\"Type\":\"bind\",\"Source\":\"/h\",\"Destination\":\"/c\",\"RW\":false,"
    "\"Propagation\":\"rslave\"}]}";

static void test_decode_container(void **state)
{
        (void)state;
        json_t *j = json_loads(inspect_json, 0, NULL);
        assert_non_null(j);
        struct docker_container c;
        ck_error_t err = NULL;
        assert_int_equal(docker_decode_container(j, &c, &err), 0);
        json_decref(j);
        assert_string_equal(c.id, "abc123");
        assert_string_equal(c.name, "k8s_POD_web_default_uid_0");
        assert_string_equal(c.image, "localhost/busybox:1.35");
        assert_string_equal(c.image_id, "sha256:feed");
        assert_true(c.created_ns == 1796292000123456789LL);
        assert_string_equal(c.status, "exited");
        assert_false(c.running);
        assert_true(c.oom_killed);
        assert_int_equal(c.exit_code, 137);
        assert_true(c.started_ns == 1796292001000000000LL);
        assert_true(c.finished_ns == 0);
        assert_string_equal(
            json_string_value(json_object_get(c.labels, "io.kubernetes.docker.type")),
            "podsandbox");
        assert_string_equal(c.ipc_mode, "shareable");
        assert_string_equal(c.sandbox_key, "/var/run/docker/netns/1");
        assert_int_equal(c.n_mounts, 1);
        assert_string_equal(c.mounts[0].destination, "/c");
        assert_false(c.mounts[0].rw);
        assert_string_equal(c.mounts[0].propagation, "rslave");
        docker_container_clear(&c);

        static const char *const bad[][2] = {
            {"[]", "not a JSON object"},
            {"{}", "field Id missing"},
            {"{\"Id\":1}", "field Id: not a string"},
            {"{\"Id\":\"x\",\"State\":{\"Running\":\"yes\"}}", "State: field Running"},
            {"{\"Id\":\"x\",\"State\":{\"StartedAt\":\"yesterday\"}}",
             "State: field StartedAt: not an RFC 3339 time"},
            {"{\"Id\":\"x\",\"State\":{\"ExitCode\":4294967296}}", "out of range"},
            {"{\"Id\":\"x\",\"Config\":{\"Labels\":{\"a\":1}}}", "Config: label a: not a string"},
            {"{\"Id\":\"x\",\"Mounts\":[{\"Source\":\"/a\"}]}", "Mounts[0]: field Destination"},
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                j = json_loads(bad[i][0], JSON_DECODE_ANY, NULL);
                assert_non_null(j);
                assert_int_equal(docker_decode_container(j, &c, &err), -1);
                if (strstr(ck_error_msg(err), bad[i][1]) == NULL)
                        fail_msg("%s: got \"%s\", want \"%s\"", bad[i][0], ck_error_msg(err),
                                 bad[i][1]);
                assert_int_equal(err->code, DOCKER_ERR_PROTOCOL);
                ck_error_release(&err);
                json_decref(j);
        }
}

/* /info: the facts the shim reads at its start. */
static void test_decode_info(void **state)
{
        (void)state;
        json_t *j = json_loads("{\"CgroupDriver\":\"systemd\",\"CgroupVersion\":\"2\","
                               "\"DockerRootDir\":\"/var/lib/docker\",\"Driver\":\"overlay2\","
                               "\"LoggingDriver\":\"journald\",\"Containers\":3}",
                               0, NULL);
        assert_non_null(j);
        struct docker_info i;
        ck_error_t err = NULL;
        assert_int_equal(docker_decode_info(j, &i, &err), 0);
        assert_string_equal(i.cgroup_driver, "systemd");
        assert_string_equal(i.cgroup_version, "2");
        assert_string_equal(i.docker_root_dir, "/var/lib/docker");
        assert_string_equal(i.driver, "overlay2");
        assert_string_equal(i.logging_driver, "journald");
        docker_info_clear(&i);
        json_decref(j);
        /* a field of another type */
        j = json_loads("{\"LoggingDriver\":7}", 0, NULL);
        assert_int_equal(docker_decode_info(j, &i, &err), -1);
        assert_int_equal(err->code, DOCKER_ERR_PROTOCOL);
        assert_non_null(strstr(ck_error_msg(err), "LoggingDriver"));
        ck_error_release(&err);
        json_decref(j);
}

static void test_list_containers_with_filters(void **state)
{
        (void)state;
        static const struct answer script[] = {
            {200, VERSION_141},
            {200, "[{\"Id\":\"a1\",\"Names\":[\"/k8s_c_p_ns_u_0\"],\"Image\":\"busybox\","
                  "\"ImageID\":\"sha256:1\",\"Created\":1700000000,\"State\":\"running\","
                  "\"Labels\":{\"io.kubernetes.sandbox.id\":\"s1\"}},"
                  "{\"Id\":\"a2\",\"Names\":null,\"Labels\":null}]"},
        };
        struct fake *f = fake_start_unix(script, 2, sock_path);
        struct docker_client *d = open_on(f);
        json_t *filters = json_pack("{s:[s]}", "label", "io.kubernetes.docker.type=container");
        struct docker_container_summary *v = NULL;
        size_t n = 0;
        ck_error_t err = NULL;
        assert_int_equal(docker_container_list(d, true, filters, &v, &n, &err), 0);
        json_decref(filters);
        assert_string_equal(f->req[1],
                            "GET /v1.41/containers/json?all=1&filters=%7B%22label%22%3A%5B%22io."
                            "kubernetes.docker.type%3Dcontainer%22%5D%7D");
        assert_int_equal(n, 2);
        assert_string_equal(v[0].name, "k8s_c_p_ns_u_0");
        assert_string_equal(v[0].state, "running");
        assert_true(v[0].created_s == 1700000000);
        assert_string_equal(
            json_string_value(json_object_get(v[0].labels, "io.kubernetes.sandbox.id")), "s1");
        assert_null(v[1].name);
        assert_int_equal(json_object_size(v[1].labels), 0);
        docker_container_summaries_free(v, n);
        done(f, d);
}

static void test_images(void **state)
{
        (void)state;
        static const char *const ok_progress[] = {
            "{\"status\":\"Pulling from library/busybox\",\"id\":\"1.35\"}\n",
            "{\"status\":\"Digest: sha256:abc\"}\n{\"status\":\"Status: Downloaded\"}\n", NULL};
        static const char *const bad_progress[] = {
            "{\"status\":\"Pulling\"}\n{\"errorDetail\":{\"message\":\"manifest for x:9 not "
            "found\"},\"error\":\"manifest for x:9 not found\"}\n",
            NULL};
        static const struct answer script[] = {
            {200, VERSION_141},
            {200, "[{\"Id\":\"sha256:1\",\"RepoTags\":[\"busybox:1.35\"],\"RepoDigests\":null,"
                  "\"Size\":4261550},{\"Id\":\"sha256:2\",\"RepoTags\":[\"<none>:<none>\"],"
                  "\"RepoDigests\":[\"<none>@<none>\"],\"Size\":1}]"},
            {200, "{\"Id\":\"sha256:1\",\"RepoTags\":[\"busybox:1.35\"],\"Size\":4261550,"
                  "\"Config\":{\"User\":\"1000:1000\"}}"},
            {404, "{\"message\":\"No such image: nope:1\"}"},
            {200, NULL, ok_progress},
            {200, NULL, bad_progress},
            {200, "[{\"Untagged\":\"busybox:1.35\"}]"},
        };
        struct fake *f = fake_start_unix(script, 7, sock_path);
        struct docker_client *d = open_on(f);
        ck_error_t err = NULL;
        struct docker_image *v = NULL;
        size_t n = 0;
        assert_int_equal(docker_image_list(d, &v, &n, &err), 0);
        assert_int_equal(n, 2);
        assert_int_equal(v[0].n_repo_tags, 1);
        assert_string_equal(v[0].repo_tags[0], "busybox:1.35");
        assert_true(v[0].size == 4261550);
        assert_int_equal(v[1].n_repo_tags, 0);
        assert_int_equal(v[1].n_repo_digests, 0);
        docker_images_free(v, n);

        struct docker_image img;
        assert_int_equal(docker_image_inspect(d, "busybox:1.35", &img, &err), 0);
        assert_string_equal(img.user, "1000:1000");
        docker_image_clear(&img);
        assert_string_equal(f->req[2], "GET /v1.41/images/busybox%3A1.35/json");

        assert_int_equal(docker_image_inspect(d, "nope:1", &img, &err), -1);
        assert_int_equal(err->code, DOCKER_ERR_NOT_FOUND);
        ck_error_release(&err);

        assert_int_equal(docker_image_pull(d, "127.0.0.1:5000/busybox:1.35", "e30=", 0, &err), 0);
        assert_string_equal(
            f->req[4], "POST /v1.41/images/create?fromImage=127.0.0.1%3A5000%2Fbusybox&tag=1.35");
        assert_non_null(strstr(f->head[4], "X-Registry-Auth: e30="));

        assert_int_equal(docker_image_pull(d, "x:9", NULL, 0, &err), -1);
        assert_string_equal(ck_error_msg(err), "pull image `x:9`: manifest for x:9 not found");
        ck_error_release(&err);
        assert_null(strstr(f->head[5], "X-Registry-Auth"));

        assert_int_equal(docker_image_remove(d, "busybox:1.35", false, &err), 0);
        assert_string_equal(f->req[6], "DELETE /v1.41/images/busybox%3A1.35?noprune=0");
        done(f, d);
}

/* An exec's output: frames of stdout and stderr, in pieces of 5 bytes. */
static const char exec_stream[] = "\x01\0\0\0\0\0\0\x06hello\n"
                                  "\x02\0\0\0\0\0\0\x04oops"
                                  "\x01\0\0\0\0\0\0\0"
                                  "\x01\0\0\0\0\0\0\x03"
                                  "abc";

static const char sys_error_stream[] = "\x03\0\0\0\0\0\0\x0f"
                                       "no such binary\n";

static void test_exec(void **state)
{
        (void)state;
        static const struct answer script[] = {
            {200, VERSION_141},
            {201, "{\"Id\":\"e1\"}"},
            {200, NULL, NULL, 0, exec_stream, sizeof(exec_stream) - 1},
            {200, "{\"Running\":false,\"ExitCode\":3,\"Pid\":42}"},
            {200, NULL, NULL, 0, exec_stream, sizeof(exec_stream) - 1},
            {200, NULL, NULL, 0, sys_error_stream, sizeof(sys_error_stream) - 1},
        };
        struct fake *f = fake_start_unix(script, 6, sock_path);
        struct docker_client *d = open_on(f);
        ck_error_t err = NULL;
        static const char *const cmd[] = {"sh", "-c", "echo hello", NULL};
        struct docker_exec_config cfg = {.cmd = cmd, .attach_stdout = true, .attach_stderr = true};
        cleanup_free char *id = NULL;
        assert_int_equal(docker_exec_create(d, "c1", &cfg, &id, &err), 0);
        assert_string_equal(id, "e1");
        assert_string_equal(f->req[1], "POST /v1.41/containers/c1/exec");
        assert_non_null(strstr(f->body[1], "\"Cmd\":[\"sh\",\"-c\",\"echo hello\"]"));

        struct docker_exec_output o = {.cap = 1024};
        assert_int_equal(docker_exec_run(d, id, 5000, &o, &err), 0);
        assert_string_equal(f->req[2], "POST /v1.41/exec/e1/start");
        assert_int_equal(o.out_len, 9);
        assert_memory_equal(o.out, "hello\nabc", 9);
        assert_int_equal(o.err_len, 4);
        assert_memory_equal(o.err, "oops", 4);
        assert_false(o.truncated);
        docker_exec_output_clear(&o);

        struct docker_exec_state st;
        assert_int_equal(docker_exec_inspect(d, id, &st, &err), 0);
        assert_false(st.running);
        assert_int_equal(st.exit_code, 3);
        assert_int_equal(st.pid, 42);

        /* output beyond the cap is dropped and said so */
        o = (struct docker_exec_output){.cap = 4};
        assert_int_equal(docker_exec_run(d, id, 5000, &o, &err), 0);
        assert_int_equal(o.out_len, 4);
        assert_memory_equal(o.out, "hell", 4);
        assert_int_equal(o.err_len, 4);
        assert_true(o.truncated);
        docker_exec_output_clear(&o);

        o = (struct docker_exec_output){.cap = 64};
        assert_int_equal(docker_exec_run(d, id, 5000, &o, &err), -1);
        assert_int_equal(err->code, DOCKER_ERR_SERVER);
        assert_string_equal(ck_error_msg(err), "start exec `e1`: no such binary");
        ck_error_release(&err);
        docker_exec_output_clear(&o);
        done(f, d);
}

static void record(void *ctx, int stream, const char *data, size_t len)
{
        char *out = ctx;
        size_t n = strlen(out);
        out[n++] = (char)('0' + stream);
        memcpy(out + n, data, len);
        out[n + len] = '\0';
}

static void test_demux(void **state)
{
        (void)state;
        /* byte by byte: the same pieces, one byte each */
        struct docker_demux m = {0};
        char got[128] = "";
        for (size_t i = 0; i < sizeof(exec_stream) - 1; i++)
                assert_int_equal(docker_demux_feed(&m, exec_stream + i, 1, record, got), 0);
        assert_string_equal(got, "1h1e1l1l1o1\n2o2o2p2s1a1b1c");

        m = (struct docker_demux){0};
        got[0] = '\0';
        assert_int_equal(docker_demux_feed(&m, "\x03\0\0\0\0\0\0\x01x", 9, record, got), 0);
        assert_string_equal(got, "3x");
        assert_int_equal(docker_demux_feed(&m, "\x04\0\0\0\0\0\0\x01x", 9, record, got), -1);
}

static void test_decode_time(void **state)
{
        (void)state;
        int64_t ns = -1;
        json_t *v = json_string("0001-01-01T00:00:00Z");
        assert_int_equal(docker_decode_time(v, &ns), 0);
        assert_true(ns == 0);
        json_decref(v);
        v = json_string("2026-12-03T11:00:00.5+01:00");
        assert_int_equal(docker_decode_time(v, &ns), 0);
        assert_true(ns == 1796292000500000000LL);
        json_decref(v);
        v = json_integer(5);
        assert_int_equal(docker_decode_time(v, &ns), -1);
        json_decref(v);
        assert_int_equal(docker_decode_time(NULL, &ns), 0);
        assert_true(ns == 0);
}

/* A container's one-shot stats: cgroup v1's and v2's memory keys, the
 * process count when the engine has it. */
static void test_decode_stats(void **state)
{
        (void)state;
        json_t *j = json_loads(
            "{\"read\":\"2026-12-03T10:00:00Z\",\"pids_stats\":{\"current\":7,\"limit\":100},"
            "\"cpu_stats\":{\"cpu_usage\":{\"total_usage\":123}},"
            "\"memory_stats\":{\"usage\":4096,\"stats\":{\"inactive_file\":1024}}}",
            0, NULL);
        assert_non_null(j);
        struct docker_stats st;
        ck_error_t err = NULL;
        assert_int_equal(docker_decode_stats(j, &st, &err), 0);
        json_decref(j);
        assert_true(st.read_ns == 1796292000000000000LL);
        assert_true(st.cpu_total_ns == 123);
        assert_true(st.has_memory);
        assert_true(st.mem_usage == 4096);
        assert_true(st.mem_inactive_file == 1024);
        assert_true(st.has_pids);
        assert_true(st.pids_current == 7);

        /* no pids controller: the engine gives an empty object */
        j = json_loads("{\"pids_stats\":{},\"memory_stats\":{\"usage\":1,"
                       "\"stats\":{\"total_inactive_file\":5,\"inactive_file\":9}}}",
                       0, NULL);
        assert_int_equal(docker_decode_stats(j, &st, &err), 0);
        json_decref(j);
        assert_false(st.has_pids);
        assert_true(st.pids_current == 0);
        assert_true(st.mem_inactive_file == 5); /* v1's total_ first */

        static const char *const bad[][2] = {
            {"{\"pids_stats\":{\"current\":\"7\"}}", "field current: not an integer"},
            {"{\"pids_stats\":{\"current\":-1}}", "field current: negative"},
            {"{\"pids_stats\":[]}", "field pids_stats: not an object"},
            {"{\"cpu_stats\":{\"cpu_usage\":{\"total_usage\":1.5}}}", "field total_usage"},
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                j = json_loads(bad[i][0], 0, NULL);
                assert_non_null(j);
                assert_int_equal(docker_decode_stats(j, &st, &err), -1);
                if (strstr(ck_error_msg(err), bad[i][1]) == NULL)
                        fail_msg("%s: got \"%s\", want \"%s\"", bad[i][0], ck_error_msg(err),
                                 bad[i][1]);
                assert_int_equal(err->code, DOCKER_ERR_PROTOCOL);
                ck_error_release(&err);
                json_decref(j);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_open_checks_the_version),
            cmocka_unit_test(test_open_fails_clearly),
            cmocka_unit_test(test_errors_carry_the_engine_message),
            cmocka_unit_test(test_decode_container),
            cmocka_unit_test(test_decode_info),
            cmocka_unit_test(test_list_containers_with_filters),
            cmocka_unit_test(test_images),
            cmocka_unit_test(test_exec),
            cmocka_unit_test(test_demux),
            cmocka_unit_test(test_decode_time),
            cmocka_unit_test(test_decode_stats),
        };
        return cmocka_run_group_tests(tests, setup, NULL);
}
