/* SPDX-License-Identifier: Apache-2.0 */
/* Lifecycle hooks and termination (kuberuntime hooks.c, kill.c,
 * container_start.c): the grace period accounting, the order in which a
 * pod's containers stop when it has sidecars, the preStop deadline, and a
 * failing postStart hook, against a fake CRI runtime.  The handler runner
 * (probe_run, the probe module's boundary) is a fake here that
 * records each call and takes as long as the test says. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_pods.h"

#include "fake_grpc_server.h"

#include "api/decode.h"
#include "kuberuntime/builders.h"
#include "kuberuntime/runtime_internal.h"
#include "probe/probe.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/yamljson.h"
#include "volume/volume.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- the fake handler runner ---- */

/* Every call of the fake handler runner and of the fake runtime's
 * StopContainer/StopPodSandbox takes the next number: the order of events
 * across threads, which the tests assert instead of wall-clock bounds. */
static atomic_int event_seq;

struct hook_call {
        char container[32];
        char pod_ip[32];
        enum handler_kind kind;
        int64_t timeout_ms;
        int64_t at_ms, end_ms;
        int seq, end_seq;
        bool released;      /* a held hook: let go by the test (not by the 30 s safety bound) */
        char port_name[16]; /* the container's first port, as the hook saw it */
        int32_t port;
};

/* A hook held until released: by the test (hooks_release) or by the fake
 * runtime's StopContainer of release_on_stop.  30 s without a release fail
 * the test's assertion on `released`, not the test run. */
#define HOOK_HOLD_MAX_MS 30000

static struct {
        pthread_mutex_t lock;
        struct hook_call calls[16];
        size_t n;
        /* how the hooks of one container behave */
        const char *slow_container; /* takes slow_ms (after the hold, if held) */
        int64_t slow_ms;
        const char *held_container;
        const char *release_on_stop; /* a container id */
        bool release;
        const char *failing_container;
} hooks = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void hooks_release(void)
{
        pthread_mutex_lock(&hooks.lock);
        hooks.release = true;
        pthread_mutex_unlock(&hooks.lock);
}

/* Waits until released; true if released, false after HOOK_HOLD_MAX_MS. */
static bool hook_hold(void)
{
        for (int waited = 0; waited < HOOK_HOLD_MAX_MS; waited += 5) {
                pthread_mutex_lock(&hooks.lock);
                bool released = hooks.release;
                pthread_mutex_unlock(&hooks.lock);
                if (released)
                        return true;
                poll(NULL, 0, 5);
        }
        return false;
}

enum probe_outcome probe_run(struct cri_client *cri, const struct container *c,
                             const char *container_id, const char *pod_ip, const struct handler *h,
                             int64_t timeout_ms, char **message)
{
        (void)cri;
        (void)container_id;
        pthread_mutex_lock(&hooks.lock);
        struct hook_call *k = NULL;
        if (hooks.n < 16) {
                k = &hooks.calls[hooks.n++];
                snprintf(k->container, sizeof(k->container), "%s", c->name);
                snprintf(k->pod_ip, sizeof(k->pod_ip), "%s", pod_ip ? pod_ip : "");
                k->kind = h->kind;
                k->timeout_ms = timeout_ms;
                k->at_ms = fs_now_mono_ms();
                k->seq = atomic_fetch_add(&event_seq, 1);
                if (c->n_ports > 0) {
                        snprintf(k->port_name, sizeof(k->port_name), "%s",
                                 c->ports[0].name ? c->ports[0].name : "");
                        k->port = c->ports[0].container_port;
                }
        }
        bool slow = hooks.slow_container && strcmp(hooks.slow_container, c->name) == 0;
        bool held = hooks.held_container && strcmp(hooks.held_container, c->name) == 0;
        bool fail = hooks.failing_container && strcmp(hooks.failing_container, c->name) == 0;
        int64_t delay = hooks.slow_ms;
        pthread_mutex_unlock(&hooks.lock);
        bool released = held ? hook_hold() : false;
        if (slow)
                poll(NULL, 0, (int)delay);
        pthread_mutex_lock(&hooks.lock);
        if (k != NULL) {
                k->released = released;
                k->end_ms = fs_now_mono_ms();
                k->end_seq = atomic_fetch_add(&event_seq, 1);
        }
        pthread_mutex_unlock(&hooks.lock);
        *message = fail ? strdup("Get \"http://10.88.0.9:8080/hi\": connection refused") : NULL;
        return fail ? PROBE_OUTCOME_FAILURE : PROBE_OUTCOME_SUCCESS;
}

static const struct hook_call *hook_call_of(const char *container)
{
        for (size_t i = 0; i < hooks.n; i++)
                if (strcmp(hooks.calls[i].container, container) == 0)
                        return &hooks.calls[i];
        return NULL;
}

/* ---- the fake runtime ---- */

struct stop_call {
        char id[64];
        int64_t timeout;
        int64_t at_ms;
        int seq;
};

struct runtime {
        pthread_mutex_t lock;
        struct stop_call stops[16];
        size_t n_stops;
        int sandbox_stops;
        int sandbox_stop_seq;
        int started;
        /* ExecSync: what it answers, what it was asked */
        int32_t exec_exit_code;
        const char *exec_stdout, *exec_stderr;
        int execs;
        char exec_request[256];
        bool orphan_without_hook; /* ContainerStatus: grace only */
};

static void pack_reply(struct fake_reply *reply, const ProtobufCMessage *m)
{
        reply->body_len = protobuf_c_message_get_packed_size(m);
        reply->body = malloc(reply->body_len + 1);
        protobuf_c_message_pack(m, reply->body);
}

#define METHOD(path, name) (strcmp((path), "/runtime.v1." name) == 0)
#define UNPACK(type, req) runtime__v1__##type##__unpack(NULL, (req)->msg_len, (req)->msg)

static void runtime_handler(struct fake_server *s, const struct fake_request *req,
                            struct fake_reply *reply)
{
        struct runtime *rt = s->data;
        reply->kind = FAKE_REPLY_MESSAGE;
        pthread_mutex_lock(&rt->lock);
        if (METHOD(req->path, "RuntimeService/StopContainer")) {
                Runtime__V1__StopContainerRequest *in = UNPACK(stop_container_request, req);
                if (rt->n_stops < 16) {
                        struct stop_call *c = &rt->stops[rt->n_stops++];
                        snprintf(c->id, sizeof(c->id), "%s", in->container_id);
                        c->timeout = in->timeout;
                        c->at_ms = fs_now_mono_ms();
                        c->seq = atomic_fetch_add(&event_seq, 1);
                }
                pthread_mutex_lock(&hooks.lock);
                if (hooks.release_on_stop && strcmp(hooks.release_on_stop, in->container_id) == 0)
                        hooks.release = true;
                pthread_mutex_unlock(&hooks.lock);
                runtime__v1__stop_container_request__free_unpacked(in, NULL);
                Runtime__V1__StopContainerResponse out = RUNTIME__V1__STOP_CONTAINER_RESPONSE__INIT;
                pack_reply(reply, &out.base);
        } else if (METHOD(req->path, "RuntimeService/StopPodSandbox")) {
                rt->sandbox_stops++;
                rt->sandbox_stop_seq = atomic_fetch_add(&event_seq, 1);
                Runtime__V1__StopPodSandboxResponse out =
                    RUNTIME__V1__STOP_POD_SANDBOX_RESPONSE__INIT;
                pack_reply(reply, &out.base);
        } else if (METHOD(req->path, "RuntimeService/RunPodSandbox")) {
                Runtime__V1__RunPodSandboxResponse out =
                    RUNTIME__V1__RUN_POD_SANDBOX_RESPONSE__INIT;
                out.pod_sandbox_id = "sandbox-1";
                pack_reply(reply, &out.base);
        } else if (METHOD(req->path, "RuntimeService/PodSandboxStatus")) {
                Runtime__V1__PodSandboxNetworkStatus net =
                    RUNTIME__V1__POD_SANDBOX_NETWORK_STATUS__INIT;
                net.ip = "10.88.0.9";
                Runtime__V1__PodSandboxMetadata md = RUNTIME__V1__POD_SANDBOX_METADATA__INIT;
                md.name = "web";
                md.namespace_ = "shop";
                md.uid = "uid-1";
                Runtime__V1__PodSandboxStatus st = RUNTIME__V1__POD_SANDBOX_STATUS__INIT;
                st.metadata = &md;
                st.id = "sandbox-1";
                st.created_at = 1;
                st.state = RUNTIME__V1__POD_SANDBOX_STATE__SANDBOX_READY;
                st.network = &net;
                Runtime__V1__PodSandboxStatusResponse out =
                    RUNTIME__V1__POD_SANDBOX_STATUS_RESPONSE__INIT;
                out.status = &st;
                pack_reply(reply, &out.base);
        } else if (METHOD(req->path, "ImageService/ImageStatus")) {
                Runtime__V1__Image img = RUNTIME__V1__IMAGE__INIT;
                char *tags[] = {"localhost/busybox:1.35"};
                img.id = "sha256:1234";
                img.n_repo_tags = 1;
                img.repo_tags = tags;
                img.size = 4096;
                Runtime__V1__ImageStatusResponse out = RUNTIME__V1__IMAGE_STATUS_RESPONSE__INIT;
                out.image = &img;
                pack_reply(reply, &out.base);
        } else if (METHOD(req->path, "RuntimeService/CreateContainer")) {
                Runtime__V1__CreateContainerResponse out =
                    RUNTIME__V1__CREATE_CONTAINER_RESPONSE__INIT;
                out.container_id = "container-1";
                pack_reply(reply, &out.base);
        } else if (METHOD(req->path, "RuntimeService/ExecSync")) {
                Runtime__V1__ExecSyncRequest *in = UNPACK(exec_sync_request, req);
                rt->execs++;
                int o = snprintf(rt->exec_request, sizeof(rt->exec_request), "id=%s timeout=%lld",
                                 in->container_id, (long long)in->timeout);
                for (size_t i = 0; i < in->n_cmd && o > 0 && (size_t)o < sizeof(rt->exec_request);
                     i++)
                        o += snprintf(rt->exec_request + o, sizeof(rt->exec_request) - (size_t)o,
                                      " %s", in->cmd[i]);
                runtime__v1__exec_sync_request__free_unpacked(in, NULL);
                Runtime__V1__ExecSyncResponse out = RUNTIME__V1__EXEC_SYNC_RESPONSE__INIT;
                if (rt->exec_stdout) {
                        out.stdout.data = (uint8_t *)rt->exec_stdout;
                        out.stdout.len = strlen(rt->exec_stdout);
                }
                if (rt->exec_stderr) {
                        out.stderr.data = (uint8_t *)rt->exec_stderr;
                        out.stderr.len = strlen(rt->exec_stderr);
                }
                out.exit_code = rt->exec_exit_code;
                pack_reply(reply, &out.base);
        } else if (METHOD(req->path, "RuntimeService/ContainerStatus")) {
                /* an orphan's container, as kuberuntime labelled it */
                Runtime__V1__ContainerStatus__LabelsEntry l[4], *lp[4];
                const char *lk[4] = {LABEL_POD_NAME, LABEL_POD_NAMESPACE, LABEL_POD_UID,
                                     LABEL_CONTAINER_NAME};
                const char *lv[4] = {"web", "shop", "uid-1", "app"};
                for (int i = 0; i < 4; i++) {
                        runtime__v1__container_status__labels_entry__init(&l[i]);
                        l[i].key = (char *)lk[i];
                        l[i].value = (char *)lv[i];
                        lp[i] = &l[i];
                }
                Runtime__V1__ContainerStatus__AnnotationsEntry a[3], *ap[3];
                const char *ak[3] = {ANNOTATION_POD_TERMINATION_GRACE, ANNOTATION_PRESTOP_HANDLER,
                                     ANNOTATION_CONTAINER_PORTS};
                const char *av[3] = {"6", "{\"httpGet\":{\"path\":\"/bye\",\"port\":\"http\"}}",
                                     "[{\"name\":\"http\",\"containerPort\":8080,"
                                     "\"protocol\":\"TCP\"}]"};
                for (int i = 0; i < 3; i++) {
                        runtime__v1__container_status__annotations_entry__init(&a[i]);
                        a[i].key = (char *)ak[i];
                        a[i].value = (char *)av[i];
                        ap[i] = &a[i];
                }
                Runtime__V1__ContainerMetadata md = RUNTIME__V1__CONTAINER_METADATA__INIT;
                md.name = "app";
                Runtime__V1__ImageSpec img = RUNTIME__V1__IMAGE_SPEC__INIT;
                img.image = "localhost/busybox:1.35";
                Runtime__V1__ContainerStatus st = RUNTIME__V1__CONTAINER_STATUS__INIT;
                st.id = "id-app";
                st.metadata = &md;
                st.image = &img;
                st.image_ref = "sha256:1234";
                st.created_at = 1;
                st.state = RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING;
                st.n_labels = 4;
                st.labels = lp;
                st.n_annotations = rt->orphan_without_hook ? 1 : 3;
                st.annotations = ap;
                Runtime__V1__ContainerStatusResponse out =
                    RUNTIME__V1__CONTAINER_STATUS_RESPONSE__INIT;
                out.status = &st;
                pack_reply(reply, &out.base);
        } else if (METHOD(req->path, "RuntimeService/StartContainer")) {
                rt->started++;
                Runtime__V1__StartContainerResponse out =
                    RUNTIME__V1__START_CONTAINER_RESPONSE__INIT;
                pack_reply(reply, &out.base);
        } else {
                reply->kind = FAKE_REPLY_TRAILERS_ONLY;
                reply->grpc_status = 12; /* UNIMPLEMENTED */
                reply->grpc_message = "unknown method";
        }
        pthread_mutex_unlock(&rt->lock);
}

/* ---- fixture ---- */

struct fixture {
        struct runtime rt;
        struct fake_server *server;
        char dir[64];
        char endpoint[160];
        char root[128], logs[128];
        struct kuberuntime *kr;
        struct cri_client *cri;
};

static int setup(void **state)
{
        struct fixture *f = calloc(1, sizeof(*f));
        pthread_mutex_init(&f->rt.lock, NULL);
        f->server = fake_server_start(runtime_handler, &f->rt);
        snprintf(f->endpoint, sizeof(f->endpoint), "unix://%s", f->server->path);
        snprintf(f->dir, sizeof(f->dir), "/tmp/ck-test-hooks-XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        snprintf(f->root, sizeof(f->root), "%s/root", f->dir);
        snprintf(f->logs, sizeof(f->logs), "%s/logs", f->dir);
        struct kuberuntime_options o = {
            .root_dir = f->root,
            .pod_logs_dir = f->logs,
            .node_name = "node1",
            .cluster_domain = "cluster.local",
            .resolv_conf = "",
            .runtime_endpoint = f->endpoint,
            .runtime_timeout_ms = 5000,
            .gc = {.max_per_pod_container = 1, .max_containers = -1},
        };
        f->kr = kuberuntime_new(&o);
        f->cri = cri_client_new(f->endpoint, 5000);
        pthread_mutex_lock(&hooks.lock);
        hooks.n = 0;
        memset(hooks.calls, 0, sizeof(hooks.calls));
        hooks.slow_container = hooks.failing_container = NULL;
        hooks.held_container = hooks.release_on_stop = NULL;
        hooks.release = false;
        hooks.slow_ms = 0;
        pthread_mutex_unlock(&hooks.lock);
        *state = f;
        return 0;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
        (void)sb;
        (void)flag;
        (void)ftw;
        return remove(path);
}

static int teardown(void **state)
{
        struct fixture *f = *state;
        cri_client_free(f->cri);
        kuberuntime_free(f->kr);
        fake_server_stop(f->server);
        nftw(f->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        pthread_mutex_destroy(&f->rt.lock);
        free(f);
        return 0;
}

/* A pod: init containers "setup" (regular), "side-a", "side-b" (sidecars),
 * app containers "app" and "web". */
static const char sidecar_pod[] = "apiVersion: v1\n"
                                  "kind: Pod\n"
                                  "metadata: {name: web, namespace: shop, uid: uid-1}\n"
                                  "spec:\n"
                                  "  terminationGracePeriodSeconds: 10\n"
                                  "  initContainers:\n"
                                  "  - {name: setup, image: localhost/busybox:1.35}\n"
                                  "  - name: side-a\n"
                                  "    image: localhost/busybox:1.35\n"
                                  "    restartPolicy: Always\n"
                                  "    lifecycle:\n"
                                  "      preStop: {httpGet: {path: /bye, port: 8080}}\n"
                                  "  - name: side-b\n"
                                  "    image: localhost/busybox:1.35\n"
                                  "    restartPolicy: Always\n"
                                  "  containers:\n"
                                  "  - name: app\n"
                                  "    image: localhost/busybox:1.35\n"
                                  "    lifecycle:\n"
                                  "      preStop: {httpGet: {path: /bye, port: 8080}}\n"
                                  "  - {name: web, image: localhost/busybox:1.35}\n";

/* ---- grace accounting ---- */

static void test_grace_accounting(void **state)
{
        (void)state;
        /* whole seconds spent are subtracted; the fraction is not (upstream
         * truncates the duration to seconds) */
        assert_int_equal(kuberuntime__grace_left(30, 0), 30);
        assert_int_equal(kuberuntime__grace_left(30, 999), 30);
        assert_int_equal(kuberuntime__grace_left(30, 1000), 29);
        assert_int_equal(kuberuntime__grace_left(30, 12500), 18);
        assert_int_equal(kuberuntime__grace_left(5, 7000), -2);
        /* StopContainer always gets at least the minimum of 2 s */
        assert_int_equal(kuberuntime__stop_grace(30), 30);
        assert_int_equal(kuberuntime__stop_grace(2), 2);
        assert_int_equal(kuberuntime__stop_grace(1), 2);
        assert_int_equal(kuberuntime__stop_grace(0), 2);
        assert_int_equal(kuberuntime__stop_grace(-2), 2);
        /* a hook that used all of a 30 s grace: the container still gets 2 s */
        assert_int_equal(kuberuntime__stop_grace(kuberuntime__grace_left(30, 30200)), 2);
}

/* ---- termination order ---- */

/* The order as groups: group g stops once every container it waits for is
 * in an earlier group.  "app,web | side-b | side-a" */
static void order_groups(const bool *waits, const char *const *names, size_t n, char *out,
                         size_t len)
{
        int group[16];
        for (size_t i = 0; i < n; i++)
                group[i] = -1;
        out[0] = '\0';
        for (int g = 0; g < (int)n; g++) {
                int members[16], m = 0;
                for (size_t i = 0; i < n; i++) {
                        if (group[i] >= 0)
                                continue;
                        bool ready = true;
                        for (size_t j = 0; j < n && ready; j++)
                                ready =
                                    !(waits && waits[i * n + j]) || (group[j] >= 0 && group[j] < g);
                        if (ready)
                                members[m++] = (int)i;
                }
                if (m == 0)
                        break;
                size_t l = strlen(out);
                snprintf(out + l, len - l, "%s", g > 0 ? " | " : "");
                for (int k = 0; k < m; k++) {
                        group[members[k]] = g;
                        l = strlen(out);
                        snprintf(out + l, len - l, "%s%s", k > 0 ? "," : "", names[members[k]]);
                }
        }
}

static void test_order_sidecars_last_in_reverse(void **state)
{
        (void)state;
        struct pod *p = test_pod_yaml(sidecar_pod);
        const char *names[] = {"side-a", "app", "setup", "side-b", "web"};
        bool *w = kuberuntime__termination_order(p, names, 5);
        assert_non_null(w);
        char groups[256];
        order_groups(w, names, 5, groups, sizeof(groups));
        /* app containers and a still running regular init container first,
         * together; then the sidecars, the last declared first */
        assert_string_equal(groups, "app,setup,web | side-b | side-a");
        /* side-a waits for the app containers and side-b, not for setup */
        assert_true(w[0 * 5 + 1] && w[0 * 5 + 3] && w[0 * 5 + 4]);
        assert_false(w[0 * 5 + 2]);
        /* side-b waits for the app containers only */
        assert_true(w[3 * 5 + 1] && w[3 * 5 + 4]);
        assert_false(w[3 * 5 + 0] || w[3 * 5 + 2]);
        free(w);
        pod_unref(p);
}

static void test_order_only_running_containers_count(void **state)
{
        (void)state;
        struct pod *p = test_pod_yaml(sidecar_pod);
        /* the app containers have exited (restartPolicy Never, done): the
         * sidecars still stop in reverse order */
        const char *names[] = {"side-a", "side-b"};
        bool *w = kuberuntime__termination_order(p, names, 2);
        char groups[256];
        order_groups(w, names, 2, groups, sizeof(groups));
        assert_string_equal(groups, "side-b | side-a");
        free(w);
        /* side-b is not running (crashed): side-a waits for the apps only,
         * as upstream (it waits on side-b, which is gone) */
        const char *names2[] = {"web", "side-a"};
        w = kuberuntime__termination_order(p, names2, 2);
        order_groups(w, names2, 2, groups, sizeof(groups));
        assert_string_equal(groups, "web | side-a");
        free(w);
        pod_unref(p);
}

static void test_order_none_without_sidecars(void **state)
{
        (void)state;
        struct pod *p = test_pod_yaml("apiVersion: v1\n"
                                      "kind: Pod\n"
                                      "metadata: {name: web, namespace: shop, uid: uid-1}\n"
                                      "spec:\n"
                                      "  initContainers:\n"
                                      "  - {name: setup, image: localhost/busybox:1.35}\n"
                                      "  containers:\n"
                                      "  - {name: app, image: localhost/busybox:1.35}\n");
        const char *names[] = {"app", "setup"};
        assert_null(kuberuntime__termination_order(p, names, 2));
        /* an orphan (no spec): no order */
        assert_null(kuberuntime__termination_order(NULL, names, 2));
        pod_unref(p);
}

/* ---- preStop deadline ---- */

static void test_pre_stop_within_grace(void **state)
{
        struct fixture *f = *state;
        struct pod *p = test_pod_yaml(sidecar_pod);
        hooks.slow_container = "app";
        hooks.slow_ms = 300;
        struct kuberuntime_hook *pending = (void *)1;
        int64_t t0 = fs_now_mono_ms();
        int64_t spent = kuberuntime__run_pre_stop(f->kr, p, &p->containers[0], "id-app",
                                                  "10.88.0.9", 10, &pending);
        /* it waited for the hook, which ended within the grace period (10 s):
         * nothing left pending */
        assert_null(pending);
        assert_true(spent >= 300);
        assert_true(spent <= fs_now_mono_ms() - t0);
        const struct hook_call *k = hook_call_of("app");
        assert_non_null(k);
        assert_int_equal(k->kind, HANDLER_HTTP_GET);
        assert_string_equal(k->pod_ip, "10.88.0.9");
        /* bounded by the runtime request timeout, not by the grace period */
        assert_int_equal(k->timeout_ms, 5000);
        pod_unref(p);
}

static void test_pre_stop_past_grace_stops_waiting(void **state)
{
        struct fixture *f = *state;
        struct pod *p = test_pod_yaml(sidecar_pod);
        /* the hook runs until the test lets it go */
        hooks.held_container = "app";
        struct kuberuntime_hook *pending = NULL;
        int64_t spent =
            kuberuntime__run_pre_stop(f->kr, p, &p->containers[0], "id-app", NULL, 1, &pending);
        /* waited for the grace period (1 s), not for the hook: it returned
         * with the hook still running, handed over as pending */
        assert_true(spent >= 1000);
        assert_non_null(pending);
        assert_int_equal(kuberuntime__grace_left(1, spent), 0);
        hooks_release();
        kuberuntime__hook_finish(pending);
        assert_true(hook_call_of("app")->released);
        pod_unref(p);
}

static void test_pre_stop_sleep_bounded_by_grace(void **state)
{
        struct fixture *f = *state;
        struct pod *p = test_pod_yaml("apiVersion: v1\n"
                                      "kind: Pod\n"
                                      "metadata: {name: web, namespace: shop, uid: uid-1}\n"
                                      "spec:\n"
                                      "  terminationGracePeriodSeconds: 120\n"
                                      "  containers:\n"
                                      "  - name: app\n"
                                      "    image: localhost/busybox:1.35\n"
                                      "    lifecycle:\n"
                                      "      preStop: {sleep: {seconds: 60}}\n");
        struct kuberuntime_hook *pending = NULL;
        int64_t spent =
            kuberuntime__run_pre_stop(f->kr, p, &p->containers[0], "id-app", NULL, 1, &pending);
        assert_null(pending);
        /* the grace period (1 s), not the 60 s of the hook */
        assert_true(spent >= 1000 && spent < 30000);
        /* a sleep action is not the handler runner's */
        assert_int_equal(hooks.n, 0);
        /* no grace left: the hook does not run at all (upstream) */
        spent = kuberuntime__run_pre_stop(f->kr, p, &p->containers[0], "id-app", NULL, 0, &pending);
        assert_int_equal(spent, 0);
        assert_null(pending);
        pod_unref(p);
}

/* ---- KillPod ---- */

static struct runtime_pod_status *running_status(const char *const *names, size_t n)
{
        struct runtime_pod_status *s = calloc(1, sizeof(*s));
        s->uid = strdup("uid-1");
        s->name = strdup("web");
        s->namespace = strdup("shop");
        s->ip = strdup("10.88.0.9");
        s->n_sandboxes = 1;
        s->sandboxes = calloc(1, sizeof(*s->sandboxes));
        s->sandboxes[0].id = strdup("sandbox-1");
        s->n_containers = n;
        s->containers = calloc(n, sizeof(*s->containers));
        for (size_t i = 0; i < n; i++) {
                char id[64];
                snprintf(id, sizeof(id), "id-%s", names[i]);
                s->containers[i].id = strdup(id);
                s->containers[i].name = strdup(names[i]);
                s->containers[i].state = CONTAINER_STATE_RUNNING;
        }
        return s;
}

static const struct stop_call *stop_of(struct runtime *rt, const char *id, size_t *pos)
{
        for (size_t i = 0; i < rt->n_stops; i++)
                if (strcmp(rt->stops[i].id, id) == 0) {
                        if (pos)
                                *pos = i;
                        return &rt->stops[i];
                }
        fail_msg("no StopContainer for %s", id);
        return NULL;
}

static void test_kill_pod_sidecars_after_apps(void **state)
{
        struct fixture *f = *state;
        struct pod *p = test_pod_yaml(sidecar_pod);
        const char *names[] = {"side-a", "side-b", "app", "web"};
        struct runtime_pod_status *st = running_status(names, 4);
        /* app's preStop hook is held until web is stopped, then takes 2 s */
        hooks.held_container = "app";
        hooks.release_on_stop = "id-web";
        hooks.slow_container = "app";
        hooks.slow_ms = 2000;
        ck_error_t err = NULL;
        int64_t t0 = fs_now_mono_ms();
        if (kuberuntime_kill_pod(f->kr, f->cri, p, st, -1, &err) < 0)
                fail_msg("kill: %s", ck_error_msg(err));

        assert_int_equal(f->rt.n_stops, 4);
        size_t p_app = 0, p_web = 0, p_a = 0, p_b = 0;
        const struct stop_call *app = stop_of(&f->rt, "id-app", &p_app);
        const struct stop_call *web = stop_of(&f->rt, "id-web", &p_web);
        const struct stop_call *sa = stop_of(&f->rt, "id-side-a", &p_a);
        const struct stop_call *sb = stop_of(&f->rt, "id-side-b", &p_b);
        const struct hook_call *ha = hook_call_of("side-a");
        const struct hook_call *hp = hook_call_of("app");
        assert_non_null(ha);
        assert_non_null(hp);
        /* the app containers first, then side-b, then side-a */
        assert_true(p_app < p_b && p_web < p_b && p_b < p_a);
        /* web: no hook, stopped while app's hook was still held (it released
         * it), with the whole grace period */
        assert_true(hp->released);
        assert_true(web->seq < hp->end_seq);
        assert_int_equal(web->timeout, 10);
        /* app: stopped after its hook (2 s or more): the grace period less
         * the whole seconds the hook took, at least 2 */
        assert_true(app->seq > hp->end_seq);
        assert_true(app->timeout <= 8);
        assert_true(app->timeout >= 10 - (app->at_ms - t0) / 1000);
        /* the sidecars waited for app: their grace is what was left then */
        assert_true(sb->seq > app->seq);
        assert_true(sb->timeout <= 9 && sb->timeout >= 10 - (sb->at_ms - t0) / 1000);
        assert_true(sa->timeout <= 9 && sa->timeout >= 10 - (sa->at_ms - t0) / 1000);
        /* both preStop hooks started when the kill began (as upstream: a
         * sidecar's hook does not wait for its turn): side-a's before app,
         * which side-b and then side-a wait for, was stopped */
        assert_true(hp->seq < app->seq);
        assert_true(ha->seq < app->seq);
        assert_string_equal(ha->pod_ip, "10.88.0.9");
        /* then the sandbox */
        assert_int_equal(f->rt.sandbox_stops, 1);
        assert_true(f->rt.sandbox_stop_seq > sa->seq);
        runtime_pod_status_free(st);
        pod_unref(p);
}

static void test_kill_pod_hook_past_grace_gets_minimum(void **state)
{
        struct fixture *f = *state;
        struct pod *p = test_pod_yaml("apiVersion: v1\n"
                                      "kind: Pod\n"
                                      "metadata: {name: web, namespace: shop, uid: uid-1}\n"
                                      "spec:\n"
                                      "  terminationGracePeriodSeconds: 1\n"
                                      "  containers:\n"
                                      "  - name: app\n"
                                      "    image: localhost/busybox:1.35\n"
                                      "    lifecycle:\n"
                                      "      preStop: {httpGet: {path: /slow, port: 8080}}\n");
        const char *names[] = {"app"};
        struct runtime_pod_status *st = running_status(names, 1);
        /* the hook runs until app's StopContainer */
        hooks.held_container = "app";
        hooks.release_on_stop = "id-app";
        ck_error_t err = NULL;
        int64_t t0 = fs_now_mono_ms();
        if (kuberuntime_kill_pod(f->kr, f->cri, p, st, -1, &err) < 0)
                fail_msg("kill: %s", ck_error_msg(err));
        const struct stop_call *app = stop_of(&f->rt, "id-app", NULL);
        const struct hook_call *k = hook_call_of("app");
        assert_non_null(k);
        /* stopped once the grace period (1 s from the kill's start) ran out,
         * while the hook still ran (the stop released it), with the 2 s
         * minimum.  Measured from the kill's start, not from the hook
         * request's arrival at the fake server, which a busy machine delays. */
        assert_true(k->released);
        assert_true(app->seq > k->seq && app->seq < k->end_seq);
        assert_true(app->at_ms - t0 >= 1000);
        assert_int_equal(app->timeout, 2);
        runtime_pod_status_free(st);
        pod_unref(p);
}

static void test_kill_pod_override_without_time_skips_hook(void **state)
{
        struct fixture *f = *state;
        struct pod *p = test_pod_yaml(sidecar_pod);
        const char *names[] = {"app"};
        struct runtime_pod_status *st = running_status(names, 1);
        ck_error_t err = NULL;
        /* a grace period of 0 (forced): no time for the hook, 2 s minimum */
        if (kuberuntime_kill_pod(f->kr, f->cri, p, st, 0, &err) < 0)
                fail_msg("kill: %s", ck_error_msg(err));
        assert_int_equal(stop_of(&f->rt, "id-app", NULL)->timeout, 2);
        assert_int_equal(hooks.n, 0);
        runtime_pod_status_free(st);
        pod_unref(p);
}

static void test_kill_orphan_runs_restored_pre_stop(void **state)
{
        struct fixture *f = *state;
        const char *names[] = {"app"};
        struct runtime_pod_status *st = running_status(names, 1);
        ck_error_t err = NULL;
        /* no pod spec: the hook, its named port and the grace period come
         * from the container's annotations */
        if (kuberuntime_kill_pod(f->kr, f->cri, NULL, st, -1, &err) < 0)
                fail_msg("kill: %s", ck_error_msg(err));
        const struct hook_call *k = hook_call_of("app");
        assert_non_null(k);
        assert_int_equal(k->kind, HANDLER_HTTP_GET);
        assert_string_equal(k->pod_ip, "10.88.0.9");
        assert_string_equal(k->port_name, "http");
        assert_int_equal(k->port, 8080);
        assert_int_equal(stop_of(&f->rt, "id-app", NULL)->timeout, 6);
        runtime_pod_status_free(st);
}

static void test_kill_orphan_without_hook(void **state)
{
        struct fixture *f = *state;
        f->rt.orphan_without_hook = true;
        const char *names[] = {"app"};
        struct runtime_pod_status *st = running_status(names, 1);
        ck_error_t err = NULL;
        if (kuberuntime_kill_pod(f->kr, f->cri, NULL, st, -1, &err) < 0)
                fail_msg("kill: %s", ck_error_msg(err));
        assert_int_equal(hooks.n, 0);
        assert_int_equal(stop_of(&f->rt, "id-app", NULL)->timeout, 6);
        runtime_pod_status_free(st);
}

/* ---- postStart ---- */

/* The pod's directories, as the kubelet's sync makes them before the
 * runtime's (a container's /etc/hosts is written there). */
static void make_pod_dirs(struct fixture *f, const struct pod *p)
{
        ck_error_t err = NULL;
        if (volume_make_pod_dirs(f->root, p, &err) < 0)
                fail_msg("pod dirs: %s", ck_error_msg(err));
}

static const char post_start_pod[] = "apiVersion: v1\n"
                                     "kind: Pod\n"
                                     "metadata: {name: web, namespace: shop, uid: uid-1}\n"
                                     "spec:\n"
                                     "  terminationGracePeriodSeconds: 7\n"
                                     "  containers:\n"
                                     "  - name: app\n"
                                     "    image: localhost/busybox:1.35\n"
                                     "    lifecycle:\n"
                                     "      postStart: {exec: {command: [sh, -c, 'exit 3']}}\n";

static void test_post_start_failure_kills_and_waits(void **state)
{
        struct fixture *f = *state;
        struct pod *p = test_pod_yaml(post_start_pod);
        make_pod_dirs(f, p);
        f->rt.exec_exit_code = 3;
        f->rt.exec_stdout = "oops\n";
        f->rt.exec_stderr = "bad \"x\"";
        struct kuberuntime_sync_result result = {0};
        struct kuberuntime_pod_context ctx = {.cgroup_parent = ""};
        ck_error_t err = NULL;
        if (kuberuntime_sync_pod(f->kr, f->cri, p, NULL, &ctx, &result, &err) < 0)
                fail_msg("sync: %s", ck_error_msg(err));
        assert_int_equal(f->rt.started, 1);
        /* the hook ran in the new container, with no timeout of its own */
        assert_int_equal(f->rt.execs, 1);
        assert_string_equal(f->rt.exec_request, "id=container-1 timeout=0 sh -c exit 3");
        /* the container was killed with the pod's grace period */
        assert_int_equal(f->rt.n_stops, 1);
        assert_string_equal(f->rt.stops[0].id, "container-1");
        assert_int_equal(f->rt.stops[0].timeout, 7);
        /* and waits with upstream's reason and message */
        assert_int_equal(result.n_waiting, 1);
        assert_string_equal(result.waiting[0].container_name, "app");
        assert_string_equal(result.waiting[0].reason, "PostStartHookError");
        assert_string_equal(result.waiting[0].message,
                            "Exec lifecycle hook ([sh -c exit 3]) for Container \"app\" in Pod "
                            "\"web_shop(uid-1)\" failed - error: command 'sh -c exit 3' exited "
                            "with 3: bad \"x\", message: \"oops\\nbad \\\"x\\\"\"");
        kuberuntime_sync_result_clear(&result);
        pod_unref(p);
}

static void test_post_start_success_keeps_running(void **state)
{
        struct fixture *f = *state;
        struct pod *p = test_pod_yaml(post_start_pod);
        make_pod_dirs(f, p);
        struct kuberuntime_sync_result result = {0};
        struct kuberuntime_pod_context ctx = {.cgroup_parent = ""};
        ck_error_t err = NULL;
        if (kuberuntime_sync_pod(f->kr, f->cri, p, NULL, &ctx, &result, &err) < 0)
                fail_msg("sync: %s", ck_error_msg(err));
        assert_int_equal(f->rt.started, 1);
        assert_int_equal(f->rt.execs, 1);
        assert_int_equal(f->rt.n_stops, 0);
        assert_int_equal(result.n_waiting, 0);
        kuberuntime_sync_result_clear(&result);
        pod_unref(p);
}

static void test_post_start_http_failure_message(void **state)
{
        struct fixture *f = *state;
        struct pod *p = test_pod_yaml("apiVersion: v1\n"
                                      "kind: Pod\n"
                                      "metadata: {name: web, namespace: shop, uid: uid-1}\n"
                                      "spec:\n"
                                      "  containers:\n"
                                      "  - name: app\n"
                                      "    image: localhost/busybox:1.35\n"
                                      "    lifecycle:\n"
                                      "      postStart: {httpGet: {path: /hi, port: 8080}}\n");
        hooks.failing_container = "app";
        char *msg = NULL;
        assert_int_equal(kuberuntime__run_post_start(f->kr, f->cri, p, &p->containers[0], "id-1",
                                                     "10.88.0.9", &msg),
                         -1);
        assert_string_equal(msg, "HTTP lifecycle hook (/hi) for Container \"app\" in Pod "
                                 "\"web_shop(uid-1)\" failed - error: Get "
                                 "\"http://10.88.0.9:8080/hi\": connection refused");
        const struct hook_call *k = hook_call_of("app");
        assert_non_null(k);
        assert_string_equal(k->pod_ip, "10.88.0.9");
        free(msg);
        pod_unref(p);
}

static void test_post_start_tcp_socket_fails(void **state)
{
        struct fixture *f = *state;
        struct pod *p = test_pod_yaml("apiVersion: v1\n"
                                      "kind: Pod\n"
                                      "metadata: {name: web, namespace: shop, uid: uid-1}\n"
                                      "spec:\n"
                                      "  containers:\n"
                                      "  - name: app\n"
                                      "    image: localhost/busybox:1.35\n"
                                      "    lifecycle:\n"
                                      "      postStart: {tcpSocket: {port: 80}}\n");
        char *msg = NULL;
        /* the API keeps tcpSocket for compatibility; it fails at run time */
        assert_int_equal(kuberuntime__run_post_start(f->kr, f->cri, p, &p->containers[0], "id-1",
                                                     "10.88.0.9", &msg),
                         -1);
        assert_non_null(msg);
        assert_non_null(strstr(msg, "Cannot run handler"));
        assert_int_equal(hooks.n, 0);
        free(msg);
        pod_unref(p);
}

/* ---- stop signal ---- */

static void test_stop_signal_in_container_config(void **state)
{
        struct fixture *f = *state;
        static const struct {
                const char *signal;
                Runtime__V1__Signal want;
        } cases[] = {
            {"SIGUSR1", RUNTIME__V1__SIGNAL__SIGUSR1},
            {"SIGQUIT", RUNTIME__V1__SIGNAL__SIGQUIT},
            {"SIGRTMIN+3", RUNTIME__V1__SIGNAL__SIGRTMINPLUS3},
            {"SIGRTMAX-14", RUNTIME__V1__SIGNAL__SIGRTMAXMINUS14},
            {NULL, RUNTIME__V1__SIGNAL__RUNTIME_DEFAULT},
        };
        struct kuberuntime_options o = {
            .root_dir = f->root, .pod_logs_dir = f->logs, .node_name = "node1", .resolv_conf = ""};
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char yaml[512];
                snprintf(yaml, sizeof(yaml),
                         "apiVersion: v1\n"
                         "kind: Pod\n"
                         "metadata: {name: web, namespace: shop, uid: uid-1}\n"
                         "spec:\n"
                         "  os: {name: linux}\n"
                         "  containers:\n"
                         "  - name: app\n"
                         "    image: localhost/busybox:1.35\n"
                         "%s%s%s",
                         cases[i].signal ? "    lifecycle: {stopSignal: " : "",
                         cases[i].signal ? cases[i].signal : "", cases[i].signal ? "}\n" : "");
                struct pod *p = test_pod_yaml(yaml);
                Runtime__V1__ContainerConfig *cfg = NULL;
                ck_error_t err = NULL;
                if (kuberuntime_container_config(&o, p, &p->containers[0], 0, NULL, NULL, &cfg,
                                                 &err) < 0)
                        fail_msg("config: %s", ck_error_msg(err));
                assert_int_equal(cfg->stop_signal, cases[i].want);
                kuberuntime_container_config_free(cfg);
                pod_unref(p);
        }
}

/* ---- crash loop backoff ---- */

static const char crash_pod[] = "apiVersion: v1\n"
                                "kind: Pod\n"
                                "metadata: {name: web, namespace: shop, uid: uid-1}\n"
                                "spec:\n"
                                "  containers:\n"
                                "  - name: app\n"
                                "    image: %s\n";

/* The runtime's view: the pod's ready sandbox and its container "app",
 * created from `hash`, exited just now. */
static struct runtime_pod_status crashed_status(struct runtime_sandbox_status *sb,
                                                struct runtime_container_status *c, uint64_t hash)
{
        *sb = (struct runtime_sandbox_status){
            .id = "sandbox-1", .state = SANDBOX_STATE_READY, .created_at = 1, .ip = "10.88.0.9"};
        int64_t now = fs_now_real_ns();
        *c = (struct runtime_container_status){.id = "container-0",
                                               .name = "app",
                                               .state = CONTAINER_STATE_EXITED,
                                               .created_at = now - 2000000000,
                                               .started_at = now - 2000000000,
                                               .finished_at = now,
                                               .exit_code = 1,
                                               .image = "localhost/busybox:1.35",
                                               .image_ref = "sha256:1234",
                                               .reason = "Error",
                                               .hash = hash,
                                               .sandbox_id = "sandbox-1"};
        return (struct runtime_pod_status){.uid = "uid-1",
                                           .name = "web",
                                           .namespace = "shop",
                                           .ip = "10.88.0.9",
                                           .sandboxes = sb,
                                           .n_sandboxes = 1,
                                           .containers = c,
                                           .n_containers = 1};
}

static void sync_crashed(struct fixture *f, const struct pod *p, uint64_t hash,
                         struct kuberuntime_sync_result *result)
{
        struct runtime_sandbox_status sb;
        struct runtime_container_status c;
        struct runtime_pod_status st = crashed_status(&sb, &c, hash);
        struct kuberuntime_pod_context ctx = {.cgroup_parent = ""};
        ck_error_t err = NULL;
        if (kuberuntime_sync_pod(f->kr, f->cri, p, &st, &ctx, result, &err) < 0)
                fail_msg("sync: %s", ck_error_msg(err));
}

/* upstream doBackOff with getStableKey: the backoff belongs to the
 * container's spec hash, so a new image starts without the old backoff. */
static void test_crash_loop_backoff_resets_on_image_update(void **state)
{
        struct fixture *f = *state;
        char yaml[512];
        snprintf(yaml, sizeof(yaml), crash_pod, "localhost/busybox:1.35");
        struct pod *p = test_pod_yaml(yaml);
        make_pod_dirs(f, p);
        uint64_t old_hash = p->containers[0].hash;

        /* the first exit: restarted at once, the backoff starts */
        struct kuberuntime_sync_result result = {0};
        sync_crashed(f, p, old_hash, &result);
        assert_int_equal(f->rt.started, 1);
        assert_int_equal(result.n_waiting, 0);
        kuberuntime_sync_result_clear(&result);

        /* exited again at once: it waits out the backoff */
        sync_crashed(f, p, old_hash, &result);
        assert_int_equal(f->rt.started, 1);
        assert_int_equal(result.n_waiting, 1);
        assert_string_equal(result.waiting[0].reason, "CrashLoopBackOff");
        assert_true(result.next_retry_ms > 0);
        kuberuntime_sync_result_clear(&result);

        /* a new image: a new container, started at once */
        snprintf(yaml, sizeof(yaml), crash_pod, "localhost/nginx:1.15");
        struct pod *updated = test_pod_yaml(yaml);
        assert_true(updated->containers[0].hash != old_hash);
        sync_crashed(f, updated, old_hash, &result);
        assert_int_equal(f->rt.started, 2);
        assert_int_equal(result.n_waiting, 0);
        kuberuntime_sync_result_clear(&result);

        /* the same image again: its own backoff, as the old one had */
        sync_crashed(f, updated, updated->containers[0].hash, &result);
        assert_int_equal(f->rt.started, 2);
        assert_int_equal(result.n_waiting, 1);
        assert_string_equal(result.waiting[0].reason, "CrashLoopBackOff");
        kuberuntime_sync_result_clear(&result);
        pod_unref(updated);
        pod_unref(p);
}

int main(void)
{
        log_set_fd(open("/dev/null", O_WRONLY | O_CLOEXEC));
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_grace_accounting),
            cmocka_unit_test(test_order_sidecars_last_in_reverse),
            cmocka_unit_test(test_order_only_running_containers_count),
            cmocka_unit_test(test_order_none_without_sidecars),
            cmocka_unit_test_setup_teardown(test_pre_stop_within_grace, setup, teardown),
            cmocka_unit_test_setup_teardown(test_pre_stop_past_grace_stops_waiting, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_pre_stop_sleep_bounded_by_grace, setup, teardown),
            cmocka_unit_test_setup_teardown(test_kill_pod_sidecars_after_apps, setup, teardown),
            cmocka_unit_test_setup_teardown(test_kill_pod_hook_past_grace_gets_minimum, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_kill_pod_override_without_time_skips_hook, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_kill_orphan_runs_restored_pre_stop, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_kill_orphan_without_hook, setup, teardown),
            cmocka_unit_test_setup_teardown(test_post_start_failure_kills_and_waits, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_post_start_success_keeps_running, setup, teardown),
            cmocka_unit_test_setup_teardown(test_post_start_http_failure_message, setup, teardown),
            cmocka_unit_test_setup_teardown(test_post_start_tcp_socket_fails, setup, teardown),
            cmocka_unit_test_setup_teardown(test_stop_signal_in_container_config, setup, teardown),
            cmocka_unit_test_setup_teardown(test_crash_loop_backoff_resets_on_image_update, setup,
                                            teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
