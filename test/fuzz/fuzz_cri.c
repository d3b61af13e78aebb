/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzzes what the agent makes of a CRI runtime's answers: the response
 * bytes go through the CRI client (cri/cri.c: protobuf-c unpack, upstream
 * cri-client's checks) into the code that consumes them: the pod's runtime
 * status (kuberuntime_get_pod_status: sandboxes, containers, termination
 * messages read from the files the runtime names), the API status and the
 * actions computed from it (status_generate, kuberuntime_compute_pod_actions),
 * the pod listing of PLEG and housekeeping (kuberuntime_get_pods), image
 * checks and pulls (kuberuntime__ensure_image), an exec probe
 * (probe_run), and the other calls directly.
 *
 * The transport is faked at the module boundary: this file defines the
 * functions of grpc/grpc_conn.c (grpc.h), so the linker takes them instead
 * of that archive member, and each unary call answers with the next record
 * of the input:
 *
 *   <scenario byte> then records <tag> <length, 2 bytes big-endian> <bytes>
 *   tag % 4 == 0: the response message (protobuf bytes)
 *   tag % 4 == 1: a gRPC error, code (tag >> 2) % 17 (0: Unknown), message
 *   tag % 4 == 2: the content of the termination message file
 *   tag % 4 == 3: the content of the container log file
 *
 * A call past the last record fails as Unavailable.  A ContainerStatus
 * answer's log path and mount host paths are pointed at the two files above
 * (in a private temporary directory) before the client sees them.  Checks,
 * beyond memory safety: each request the client sends unpacks as its
 * method's request type; a call fails only with an error; a status's
 * arrays are sorted newest first and hold the IDs the runtime gave.
 */
#include "api/decode.h"
#include "cri/cri.h"
#include "grpc/grpc.h"
#include "kuberuntime/compute.h"
#include "kuberuntime/runtime.h"
#include "kuberuntime/runtime_internal.h"
#include "probe/probe.h"
#include "status/generate.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <fcntl.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char tmp[64]; /* /tmp/fuzz_cri.XXXXXX: the runtime's files */
static char log_file[96], msg_file[96];

/* ---- the script ---- */

static const uint8_t *script;
static size_t script_len, script_pos;

/* The next response record (tag % 4 < 2); false past the end. */
static bool next_record(uint8_t *tag, const uint8_t **bytes, size_t *len)
{
        while (script_pos + 3 <= script_len) {
                uint8_t t = script[script_pos];
                size_t n = (size_t)script[script_pos + 1] << 8 | script[script_pos + 2];
                script_pos += 3;
                if (n > script_len - script_pos)
                        n = script_len - script_pos;
                const uint8_t *b = script + script_pos;
                script_pos += n;
                if (t % 4 < 2) {
                        *tag = t;
                        *bytes = b;
                        *len = n;
                        return true;
                }
        }
        return false;
}

/* Writes the file records (tag % 4 of 2 or 3) to the runtime's files. */
static void write_files(void)
{
        unlink(log_file);
        unlink(msg_file);
        for (size_t pos = 0; pos + 3 <= script_len;) {
                uint8_t t = script[pos];
                size_t n = (size_t)script[pos + 1] << 8 | script[pos + 2];
                pos += 3;
                if (n > script_len - pos)
                        n = script_len - pos;
                if (t % 4 >= 2) {
                        ck_error_t err = NULL;
                        if (fs_write_file_atomic(t % 4 == 2 ? msg_file : log_file, script + pos, n,
                                                 0644, &err) < 0)
                                abort();
                }
                pos += n;
        }
}

/* ---- the fake transport (grpc/grpc_conn.c) ---- */

struct grpc_conn {
        int unused;
};

struct grpc_conn *grpc_conn_new(const char *unix_path)
{
        (void)unix_path;
        return xcalloc(1, sizeof(struct grpc_conn));
}

struct grpc_conn *grpc_conn_new_tcp(const char *host, int port)
{
        (void)host;
        (void)port;
        return xcalloc(1, sizeof(struct grpc_conn));
}

void grpc_conn_set_user_agent(struct grpc_conn *c, const char *user_agent)
{
        (void)c;
        (void)user_agent;
}

void grpc_conn_free(struct grpc_conn *c)
{
        free(c);
}

bool grpc_conn_is_connected(const struct grpc_conn *c)
{
        (void)c;
        return true;
}

void grpc_conn_set_max_stream_id(struct grpc_conn *c, int32_t max)
{
        (void)c;
        (void)max;
}

/* The dial and the streaming calls (device plugins, not the CRI) are in the
 * same archive member: defined here so that the linker does not take it. */
int grpc_conn_dial(struct grpc_conn *c, int64_t timeout_ms, ck_error_t *err)
{
        (void)c;
        (void)timeout_ms;
        (void)err;
        return 0;
}

int grpc_stream_start(struct grpc_conn *c, const char *path, const uint8_t *req, size_t req_len,
                      ck_error_t *err)
{
        (void)c;
        (void)req;
        (void)req_len;
        return ck_error_make_code(err, GRPC_UNIMPLEMENTED, "%s: no stream in this fake", path);
}

int grpc_stream_recv(struct grpc_conn *c, int64_t timeout_ms, uint8_t **msg, size_t *msg_len,
                     ck_error_t *err)
{
        (void)c;
        (void)timeout_ms;
        (void)msg;
        (void)msg_len;
        return ck_error_make_code(err, GRPC_UNAVAILABLE, "no stream in this fake");
}

void grpc_stream_cancel(struct grpc_conn *c)
{
        (void)c;
}

static const struct {
        const char *path;
        const ProtobufCMessageDescriptor *req;
} methods[] = {
    {"/runtime.v1.RuntimeService/Version", &runtime__v1__version_request__descriptor},
    {"/runtime.v1.RuntimeService/RunPodSandbox", &runtime__v1__run_pod_sandbox_request__descriptor},
    {"/runtime.v1.RuntimeService/StopPodSandbox",
     &runtime__v1__stop_pod_sandbox_request__descriptor},
    {"/runtime.v1.RuntimeService/RemovePodSandbox",
     &runtime__v1__remove_pod_sandbox_request__descriptor},
    {"/runtime.v1.RuntimeService/PodSandboxStatus",
     &runtime__v1__pod_sandbox_status_request__descriptor},
    {"/runtime.v1.RuntimeService/ListPodSandbox",
     &runtime__v1__list_pod_sandbox_request__descriptor},
    {"/runtime.v1.RuntimeService/CreateContainer",
     &runtime__v1__create_container_request__descriptor},
    {"/runtime.v1.RuntimeService/StartContainer",
     &runtime__v1__start_container_request__descriptor},
    {"/runtime.v1.RuntimeService/StopContainer", &runtime__v1__stop_container_request__descriptor},
    {"/runtime.v1.RuntimeService/RemoveContainer",
     &runtime__v1__remove_container_request__descriptor},
    {"/runtime.v1.RuntimeService/ListContainers",
     &runtime__v1__list_containers_request__descriptor},
    {"/runtime.v1.RuntimeService/ContainerStatus",
     &runtime__v1__container_status_request__descriptor},
    {"/runtime.v1.RuntimeService/ExecSync", &runtime__v1__exec_sync_request__descriptor},
    {"/runtime.v1.RuntimeService/Status", &runtime__v1__status_request__descriptor},
    {"/runtime.v1.ImageService/ListImages", &runtime__v1__list_images_request__descriptor},
    {"/runtime.v1.ImageService/ImageStatus", &runtime__v1__image_status_request__descriptor},
    {"/runtime.v1.ImageService/PullImage", &runtime__v1__pull_image_request__descriptor},
};

/* Points the files a ContainerStatus names at the script's files. */
static void redirect_files(const uint8_t *in, size_t len, uint8_t **out, size_t *out_len)
{
        Runtime__V1__ContainerStatusResponse *r =
            runtime__v1__container_status_response__unpack(NULL, len, in);
        if (r == NULL || r->status == NULL) {
                if (r != NULL)
                        runtime__v1__container_status_response__free_unpacked(r, NULL);
                *out = xmalloc(len ? len : 1);
                memcpy(*out, in, len);
                *out_len = len;
                return;
        }
        /* the unpacked strings belong to protobuf-c: swap in ours, then back */
        Runtime__V1__ContainerStatus *s = r->status;
        char *saved_log = s->log_path;
        if (s->log_path != NULL && s->log_path[0] != '\0')
                s->log_path = log_file;
        char **saved_hosts = xcalloc(s->n_mounts + 1, sizeof(*saved_hosts));
        for (size_t i = 0; i < s->n_mounts; i++) {
                saved_hosts[i] = s->mounts[i]->host_path;
                if (s->mounts[i]->host_path != NULL && s->mounts[i]->host_path[0] != '\0')
                        s->mounts[i]->host_path = msg_file;
        }
        *out_len = runtime__v1__container_status_response__get_packed_size(r);
        *out = xmalloc(*out_len ? *out_len : 1);
        runtime__v1__container_status_response__pack(r, *out);
        s->log_path = saved_log;
        for (size_t i = 0; i < s->n_mounts; i++)
                s->mounts[i]->host_path = saved_hosts[i];
        free(saved_hosts);
        runtime__v1__container_status_response__free_unpacked(r, NULL);
}

int grpc_unary(struct grpc_conn *c, const char *path, const uint8_t *req, size_t req_len,
               int64_t timeout_ms, uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        (void)c;
        (void)timeout_ms;
        const ProtobufCMessageDescriptor *desc = NULL;
        for (size_t i = 0; i < ARRAY_SIZE(methods) && desc == NULL; i++)
                if (strcmp(path, methods[i].path) == 0)
                        desc = methods[i].req;
        if (desc == NULL)
                abort(); /* a method this fake does not know */
        ProtobufCMessage *m = protobuf_c_message_unpack(desc, NULL, req_len, req);
        if (m == NULL)
                abort(); /* the client sent what the runtime cannot read */
        protobuf_c_message_free_unpacked(m, NULL);

        uint8_t tag;
        const uint8_t *bytes;
        size_t len;
        if (!next_record(&tag, &bytes, &len))
                return ck_error_make_code(err, GRPC_UNAVAILABLE, "rpc error %d: connection refused",
                                          GRPC_UNAVAILABLE);
        if (tag % 4 == 1) {
                int code = (tag >> 2) % 17;
                if (code == GRPC_OK)
                        code = GRPC_UNKNOWN;
                return ck_error_make_code(err, code, "rpc error %d: %.*s", code, (int)len,
                                          (const char *)bytes);
        }
        if (strcmp(path, "/runtime.v1.RuntimeService/ContainerStatus") == 0) {
                redirect_files(bytes, len, resp, resp_len);
        } else {
                *resp = xmalloc(len ? len : 1);
                memcpy(*resp, bytes, len);
                *resp_len = len;
        }
        return 0;
}

/* ---- the consumers ---- */

static struct pod *pod;

static const char pod_json[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
    "\"metadata\":{\"name\":\"web\",\"namespace\":\"team\",\"uid\":\"u-1\"},"
    "\"spec\":{\"initContainers\":[{\"name\":\"init\",\"image\":\"busybox:1.35\"},"
    "{\"name\":\"side\",\"image\":\"busybox:1.35\",\"restartPolicy\":\"Always\"}],"
    "\"containers\":[{\"name\":\"c\",\"image\":\"busybox:1.35\","
    "\"imagePullPolicy\":\"IfNotPresent\","
    "\"terminationMessagePolicy\":\"FallbackToLogsOnError\","
    "\"livenessProbe\":{\"exec\":{\"command\":[\"cat\",\"/tmp/healthy\"]}},"
    "\"readinessProbe\":{\"exec\":{\"command\":[\"true\"]}}},"
    "{\"name\":\"d\",\"image\":\"nginx\",\"imagePullPolicy\":\"Always\"}]}}";

static struct kuberuntime *new_runtime(void)
{
        struct kuberuntime_options o = {
            .root_dir = tmp,
            .pod_logs_dir = tmp,
            .node_name = "node-1",
            .runtime_endpoint = "unix:///fake.sock",
            .runtime_timeout_ms = 1000,
            .serialize_image_pulls = true,
            .node_ip = "10.0.0.1",
        };
        return kuberuntime_new(&o);
}

static void check_pod_status(const struct runtime_pod_status *s)
{
        for (size_t i = 0; i < s->n_sandboxes; i++)
                if (s->sandboxes[i].id == NULL || s->sandboxes[i].id[0] == '\0' ||
                    (i > 0 && s->sandboxes[i].created_at > s->sandboxes[i - 1].created_at))
                        abort();
        for (size_t i = 0; i < s->n_containers; i++) {
                const struct runtime_container_status *c = &s->containers[i];
                if (c->id == NULL || c->id[0] == '\0' || c->name == NULL || c->image == NULL ||
                    c->image_ref == NULL || c->sandbox_id == NULL ||
                    (i > 0 && c->created_at > s->containers[i - 1].created_at))
                        abort();
                if (c->state != CONTAINER_STATE_EXITED && (c->reason != NULL || c->message != NULL))
                        abort();
        }
        if (s->ip != NULL && (s->n_sandboxes == 0 || s->sandboxes[0].ip == NULL ||
                              strcmp(s->ip, s->sandboxes[0].ip) != 0))
                abort();
}

static void scenario_pod_status(struct kuberuntime *rt, struct cri_client *cri)
{
        struct runtime_pod_status *s = NULL;
        cleanup_error ck_error_t err = NULL;
        if (kuberuntime_get_pod_status(rt, cri, pod->uid, pod->name, pod->namespace, &s, &err) <
            0) {
                if (err == NULL || s != NULL)
                        abort();
                return;
        }
        check_pod_status(s);
        (void)runtime_pod_status_find(s, "c");
        struct kv_list readiness = {0};
        kv_list_add(&readiness, "c", "true");
        struct status_input in = {
            .pod = pod,
            .runtime = s,
            .runtime_name = "containerd",
            .host_ip = "10.0.0.1",
            .readiness = &readiness,
            .network_ready = true,
            .now_ns = 1714557600LL * 1000000000LL,
        };
        cleanup_json json_t *status = status_generate(&in);
        if (!json_is_object(status) || json_string_value(json_object_get(status, "phase")) == NULL)
                abort();
        /* the next status from this one, as the status manager keeps it */
        in.old_status = status;
        in.pod_terminal = true;
        cleanup_json json_t *next = status_generate(&in);
        if (!json_is_object(next))
                abort();
        struct pod_actions a;
        static const char *const liveness_failed[] = {"c", NULL};
        static const char *const startup_failed[] = {"d", NULL};
        static const char *const started[] = {"c", "d", NULL};
        const struct probe_verdicts v = {.liveness_failed = liveness_failed,
                                         .startup_failed = startup_failed,
                                         .started = started};
        /* what the runtime was given: a resize for some of the containers */
        cleanup_json json_t *actuated =
            json_pack("{s:{s:{s:s}}, s:{}}", "c", "limits", "cpu", "1", "d");
        kuberuntime_compute_pod_actions(pod, s, &v, actuated, &a);
        pod_actions_clear(&a);
        kv_list_release(&readiness);
        runtime_pod_status_free(s);
}

static void scenario_pods(struct kuberuntime *rt, struct cri_client *cri, bool all)
{
        struct runtime_pod_list *l = NULL;
        cleanup_error ck_error_t err = NULL;
        if (kuberuntime_get_pods(rt, cri, all, &l, &err) < 0) {
                if (err == NULL)
                        abort();
                return;
        }
        for (size_t i = 0; i < l->n_pods; i++) {
                const struct runtime_pod_entry *p = &l->pods[i];
                if (p->uid == NULL || p->name == NULL || p->namespace == NULL)
                        abort();
                for (size_t j = 0; j < i; j++)
                        if (strcmp(l->pods[j].uid, p->uid) == 0)
                                abort(); /* one entry per pod */
        }
        runtime_pod_list_free(l);
}

static void scenario_images(struct kuberuntime *rt, struct cri_client *cri)
{
        struct kuberuntime_pod_context ctx = {.cgroup_parent = ""};
        for (size_t i = 0; i < pod->n_containers; i++) {
                struct kuberuntime_sync_result result = {0};
                char *image_ref = NULL;
                int r = kuberuntime__ensure_image(rt, cri, pod, &pod->containers[i], NULL, &ctx,
                                                  &image_ref, &result);
                if (r == 0 && image_ref == NULL)
                        abort();
                if (r < 0 && result.n_waiting == 0)
                        abort(); /* the container waits with a reason */
                free(image_ref);
                kuberuntime_sync_result_clear(&result);
        }
}

/* Every call once: Version, Status, ImageStatus, ListImages, PullImage,
 * RunPodSandbox, CreateContainer, PodSandboxStatus, ContainerStatus, and an
 * exec probe. */
static void scenario_calls(struct cri_client *cri)
{
        ck_error_t err = NULL;
#define EXPECT(call)                                                                               \
        do {                                                                                       \
                int r_ = (call);                                                                   \
                if ((r_ < 0) != (err != NULL))                                                     \
                        abort();                                                                   \
                ck_error_release(&err);                                                            \
        } while (0)
        Runtime__V1__VersionResponse *v = NULL;
        EXPECT(cri_version(cri, &v, &err));
        if (v)
                runtime__v1__version_response__free_unpacked(v, NULL);
        Runtime__V1__StatusResponse *st = NULL;
        EXPECT(cri_status(cri, &st, &err));
        for (size_t i = 0; st && st->status && i < st->status->n_conditions; i++)
                if (st->status->conditions[i]->type == NULL)
                        abort();
        if (st)
                runtime__v1__status_response__free_unpacked(st, NULL);
        Runtime__V1__ImageStatusResponse *is = NULL;
        EXPECT(cri_image_status(cri, "busybox:1.35", &is, &err));
        if (is)
                runtime__v1__image_status_response__free_unpacked(is, NULL);
        Runtime__V1__ListImagesResponse *li = NULL;
        EXPECT(cri_list_images(cri, &li, &err));
        if (li)
                runtime__v1__list_images_response__free_unpacked(li, NULL);
        char *ref = NULL;
        EXPECT(cri_pull_image(cri, "busybox:1.35", NULL, NULL, &ref, &err));
        free(ref);
        Runtime__V1__PodSandboxConfig sc = RUNTIME__V1__POD_SANDBOX_CONFIG__INIT;
        char *id = NULL;
        EXPECT(cri_run_pod_sandbox(cri, &sc, NULL, &id, &err));
        free(id);
        Runtime__V1__ContainerConfig cc = RUNTIME__V1__CONTAINER_CONFIG__INIT;
        id = NULL;
        EXPECT(cri_create_container(cri, "sb", &cc, &sc, &id, &err));
        free(id);
        Runtime__V1__PodSandboxStatusResponse *ps = NULL;
        EXPECT(cri_pod_sandbox_status(cri, "sb", &ps, &err));
        if (ps)
                runtime__v1__pod_sandbox_status_response__free_unpacked(ps, NULL);
        Runtime__V1__ContainerStatusResponse *cs = NULL;
        EXPECT(cri_container_status(cri, "ct", &cs, &err));
        if (cs)
                runtime__v1__container_status_response__free_unpacked(cs, NULL);
        EXPECT(cri_stop_container(cri, "ct", 30, &err));
#undef EXPECT
        const struct container *c = &pod->containers[0];
        char *message = NULL;
        enum probe_outcome o =
            probe_run(cri, c, "ct", "10.1.0.2", &c->liveness_probe->handler, 1000, &message);
        if (o != PROBE_OUTCOME_SUCCESS && o != PROBE_OUTCOME_FAILURE && o != PROBE_OUTCOME_ERROR)
                abort();
        free(message);
}

static void remove_tmp(void)
{
        ck_error_t err = NULL;
        fs_remove_all(tmp, &err);
        ck_error_release(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (pod == NULL) {
                log_set_fd(open("/dev/null", O_WRONLY | O_CLOEXEC));
                log_set_verbosity(10); /* every log line, with what it prints */
                snprintf(tmp, sizeof(tmp), "/tmp/fuzz_cri.XXXXXX");
                if (mkdtemp(tmp) == NULL)
                        abort();
                atexit(remove_tmp);
                snprintf(log_file, sizeof(log_file), "%s/log", tmp);
                snprintf(msg_file, sizeof(msg_file), "%s/msg", tmp);
                cleanup_json json_t *obj = json_loads(pod_json, 0, NULL);
                ck_error_t err = NULL;
                if (obj == NULL || api_pod_decode(obj, &pod, &err) < 0)
                        abort();
        }
        if (size == 0)
                return 0;
        script = data + 1;
        script_len = size - 1;
        script_pos = 0;
        write_files();
        struct kuberuntime *rt = new_runtime();
        struct cri_client *cri = cri_client_new("unix:///fake.sock", 1000);
        switch (data[0] % 5) {
        case 0:
                scenario_pod_status(rt, cri);
                break;
        case 1:
        case 2:
                scenario_pods(rt, cri, data[0] % 5 == 2);
                break;
        case 3:
                scenario_images(rt, cri);
                break;
        default:
                scenario_calls(cri);
                break;
        }
        cri_client_free(cri);
        kuberuntime_free(rt);
        return 0;
}
