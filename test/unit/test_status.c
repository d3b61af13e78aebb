/* SPDX-License-Identifier: Apache-2.0 */
/*
 * API pod status generation: the phase and the Initialized / Ready /
 * ContainersReady conditions over restartPolicy x container states x init
 * containers x sidecars (a table, checked against upstream getPhase and
 * pkg/kubelet/status/generate.go), then the container status details.
 * Pods come from the real decoder; the runtime status is built by hand
 * (it is the boundary type).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "api/decode.h"
#include "status/generate.h"
#include "util/error.h"

#include "test_pods.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T0 1700000000000000000LL /* 2023-11-14T22:13:20Z */
#define SEC 1000000000LL

/* ---- building pods ---- */

/* containers: "name[:flags]" separated by ','; flags: s = sidecar (init
 * restartPolicy Always), r = readiness probe, u = startup probe. */
static json_t *containers_json(const char *list)
{
        json_t *arr = json_array();
        if (list == NULL || list[0] == '\0')
                return arr;
        char *dup = strdup(list), *save = NULL;
        for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                char *flags = strchr(tok, ':');
                if (flags)
                        *flags++ = '\0';
                json_t *c = json_pack("{s:s, s:s}", "name", tok, "image", "localhost/busybox:1.35");
                if (flags && strchr(flags, 's'))
                        json_object_set_new(c, "restartPolicy", json_string("Always"));
                if (flags && strchr(flags, 'r'))
                        json_object_set_new(c, "readinessProbe",
                                            json_pack("{s:{s:[s]}}", "exec", "command", "true"));
                if (flags && strchr(flags, 'u'))
                        json_object_set_new(c, "startupProbe",
                                            json_pack("{s:{s:[s]}}", "exec", "command", "true"));
                json_array_append_new(arr, c);
        }
        free(dup);
        return arr;
}

static struct pod *make_pod(const char *restart_policy, const char *init, const char *app)
{
        json_t *obj =
            json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:I}, s:{s:s, s:o, s:o}}", "apiVersion", "v1",
                      "kind", "Pod", "metadata", "name", "web", "namespace", "default", "uid",
                      "uid-1", "generation", (json_int_t)1, "spec", "restartPolicy", restart_policy,
                      "containers", containers_json(app), "initContainers", containers_json(init));
        struct pod *pod = test_pod_object(obj);
        json_decref(obj);
        return pod;
}

/* ---- building runtime statuses ---- */

struct rc_spec {
        const char *name;
        enum container_state state;
        int exit_code;
        int created; /* seconds after T0: the order of instances */
        int restarts;
};

struct runtime_fixture {
        struct runtime_pod_status st;
        struct runtime_sandbox_status sb;
        struct runtime_container_status cs[8];
        char ids[8][32];
};

static const struct runtime_pod_status *make_runtime(struct runtime_fixture *f,
                                                     const struct rc_spec *rcs, bool sandbox)
{
        memset(f, 0, sizeof(*f));
        f->st.uid = "uid-1";
        f->st.name = "web";
        f->st.namespace = "default";
        if (sandbox) {
                f->sb.id = "sb1";
                f->sb.state = SANDBOX_STATE_READY;
                f->sb.ip = "10.88.0.5";
                f->st.sandboxes = &f->sb;
                f->st.n_sandboxes = 1;
                f->st.ip = "10.88.0.5";
        }
        size_t n = 0;
        for (; rcs && rcs[n].name; n++) {
                struct runtime_container_status *c = &f->cs[n];
                snprintf(f->ids[n], sizeof(f->ids[n]), "c%zu%s", n, rcs[n].name);
                c->id = f->ids[n];
                c->name = (char *)rcs[n].name;
                c->state = rcs[n].state;
                c->exit_code = rcs[n].exit_code;
                c->created_at = T0 + rcs[n].created * SEC;
                if (c->state != CONTAINER_STATE_CREATED)
                        c->started_at = c->created_at + SEC / 2;
                if (c->state == CONTAINER_STATE_EXITED) {
                        c->finished_at = c->created_at + 3 * SEC;
                        c->reason = rcs[n].exit_code == 0 ? "Completed" : "Error";
                }
                c->image = "localhost/busybox:1.35";
                c->image_ref = "sha256:1111";
                c->restart_count = rcs[n].restarts;
                c->sandbox_id = "sb1";
        }
        f->st.containers = f->cs;
        f->st.n_containers = n;
        return &f->st;
}

/* ---- reading the result ---- */

static const json_t *find_by(const json_t *arr, const char *key, const char *val)
{
        size_t i;
        json_t *el;
        json_array_foreach(arr, i, el)
        {
                if (strcmp(json_string_value(json_object_get(el, key)), val) == 0)
                        return el;
        }
        return NULL;
}

static const json_t *cond(const json_t *status, const char *type)
{
        const json_t *c = find_by(json_object_get(status, "conditions"), "type", type);
        if (c == NULL)
                fail_msg("no condition %s", type);
        return c;
}

static const char *str(const json_t *obj, const char *key)
{
        const char *s = json_string_value(json_object_get(obj, key));
        return s ? s : "";
}

static const json_t *cstatus(const json_t *status, const char *name)
{
        const json_t *c = find_by(json_object_get(status, "containerStatuses"), "name", name);
        if (c == NULL)
                c = find_by(json_object_get(status, "initContainerStatuses"), "name", name);
        if (c == NULL)
                fail_msg("no status for container %s", name);
        return c;
}

/* ---- the table ---- */

#define R CONTAINER_STATE_RUNNING
#define X CONTAINER_STATE_EXITED
#define C CONTAINER_STATE_CREATED

struct phase_case {
        const char *desc;
        const char *policy;
        const char *init, *app;
        struct rc_spec rcs[6];
        bool sandbox;
        const char *waiting_for, *waiting_reason; /* from the sync */
        const char *ready_true;                   /* readiness kv: this container "true" */
        const char *started_true;                 /* startup kv: this container "true" */
        /* expected */
        const char *phase;
        const char *initialized, *initialized_reason;
        const char *ready, *ready_reason;
        const char *containers_ready_reason;
        const char *message; /* of Ready, or NULL for none */
};

/* Columns: description, restartPolicy, init containers, app containers,
 * runtime containers {name, state, exit code, created (s), restarts},
 * sandbox ready, sync waiting {container, reason}, readiness "true" for,
 * startup "true" for; expected: phase, Initialized status/reason, Ready
 * status/reason, ContainersReady reason, Ready message (NULL: unchecked). */
// clang-format off
static const struct phase_case phase_cases[] = {
    {"nothing yet", "Always", "", "a", {{0}}, false, 0, 0, 0, 0,
     "Pending", "True", "", "False", "ContainersNotReady", "ContainersNotReady", "containers with unready status: [a]"},
    {"always: running", "Always", "", "a", {{"a", R}}, true, 0, 0, 0, 0,
     "Running", "True", "", "True", "", "", NULL},
    {"always: one running one not started", "Always", "", "a,b", {{"a", R}}, true, 0, 0, 0, 0,
     "Pending", "True", "", "False", "ContainersNotReady", "ContainersNotReady", "containers with unready status: [b]"},
    {"always: both running", "Always", "", "b,a", {{"a", R}, {"b", R}}, true, 0, 0, 0, 0,
     "Running", "True", "", "True", "", "", NULL},
    {"always: exited 0 restarts", "Always", "", "a", {{"a", X, 0}}, true, 0, 0, 0, 0,
     "Running", "True", "", "False", "ContainersNotReady", "ContainersNotReady", "containers with unready status: [a]"},
    {"always: exited 1 restarts", "Always", "", "a", {{"a", X, 1}}, true, 0, 0, 0, 0,
     "Running", "True", "", "False", "ContainersNotReady", "ContainersNotReady", NULL},
    {"always: crashloop", "Always", "", "a", {{"a", X, 1, 0, 3}}, true, "a", "CrashLoopBackOff", 0, 0,
     "Running", "True", "", "False", "ContainersNotReady", "ContainersNotReady", NULL},
    {"always: created only", "Always", "", "a", {{"a", C}}, true, 0, 0, 0, 0,
     "Pending", "True", "", "False", "ContainersNotReady", "ContainersNotReady", NULL},
    {"always: image pull error", "Always", "", "a", {{0}}, true, "a", "ErrImagePull", 0, 0,
     "Pending", "True", "", "False", "ContainersNotReady", "ContainersNotReady", NULL},
    {"onfailure: all exited 0", "OnFailure", "", "a,b", {{"a", X, 0}, {"b", X, 0}}, true, 0, 0, 0, 0,
     "Succeeded", "True", "PodCompleted", "False", "PodCompleted", "PodCompleted", NULL},
    {"onfailure: one failed restarts", "OnFailure", "", "a,b", {{"a", X, 0}, {"b", X, 1}}, true, 0, 0, 0, 0,
     "Running", "True", "", "False", "ContainersNotReady", "ContainersNotReady", "containers with unready status: [a b]"},
    {"onfailure: failed, backing off", "OnFailure", "", "a", {{"a", X, 2}}, true, "a", "CrashLoopBackOff", 0, 0,
     "Running", "True", "", "False", "ContainersNotReady", "ContainersNotReady", NULL},
    {"onfailure: one done one running", "OnFailure", "", "a,b", {{"a", X, 0}, {"b", R}}, true, 0, 0, 0, 0,
     "Running", "True", "", "False", "ContainersNotReady", "ContainersNotReady", "containers with unready status: [a]"},
    {"never: failed", "Never", "", "a", {{"a", X, 1}}, true, 0, 0, 0, 0,
     "Failed", "True", "", "False", "PodFailed", "PodFailed", NULL},
    {"never: one done one running", "Never", "", "a,b", {{"a", X, 0}, {"b", R}}, true, 0, 0, 0, 0,
     "Running", "True", "", "False", "ContainersNotReady", "ContainersNotReady", NULL},
    {"never: all succeeded", "Never", "", "a,b", {{"a", X, 0}, {"b", X, 0}}, true, 0, 0, 0, 0,
     "Succeeded", "True", "PodCompleted", "False", "PodCompleted", "PodCompleted", NULL},
    {"never: one of two failed", "Never", "", "a,b", {{"a", X, 0}, {"b", X, 2}}, true, 0, 0, 0, 0,
     "Failed", "True", "", "False", "PodFailed", "PodFailed", NULL},
    {"never: failed and one not started", "Never", "", "a,b", {{"a", X, 1}}, true, 0, 0, 0, 0,
     "Pending", "True", "", "False", "ContainersNotReady", "ContainersNotReady", "containers with unready status: [a b]"},
    {"init: running", "Always", "setup", "a", {{"setup", R}}, true, 0, 0, 0, 0,
     "Pending", "False", "ContainersNotInitialized", "False", "ContainersNotReady", "ContainersNotReady", "containers with unready status: [a]"},
    {"init: done, app running", "Always", "setup", "a", {{"setup", X, 0}, {"a", R, 0, 1}}, true, 0, 0, 0, 0,
     "Running", "True", "", "True", "", "", NULL},
    {"init: done, app not started", "Always", "setup", "a", {{"setup", X, 0}}, true, 0, 0, 0, 0,
     "Pending", "True", "", "False", "ContainersNotReady", "ContainersNotReady", NULL},
    {"init: failed under never", "Never", "setup", "a", {{"setup", X, 1}}, true, 0, 0, 0, 0,
     "Failed", "False", "ContainersNotInitialized", "False", "PodFailed", "PodFailed", NULL},
    {"init: failed under always retries", "Always", "setup", "a", {{"setup", X, 1}}, true, 0, 0, 0, 0,
     "Pending", "False", "ContainersNotInitialized", "False", "ContainersNotReady", "ContainersNotReady", NULL},
    {"init: failed under onfailure retries", "OnFailure", "setup", "a", {{"setup", X, 1}}, true, "setup", "CrashLoopBackOff", 0, 0,
     "Pending", "False", "ContainersNotInitialized", "False", "ContainersNotReady", "ContainersNotReady", NULL},
    {"init: second of two pending", "Always", "one,two", "a", {{"one", X, 0}}, true, 0, 0, 0, 0,
     "Pending", "False", "ContainersNotInitialized", "False", "ContainersNotReady", "ContainersNotReady", NULL},
    {"init: all done, onfailure, app succeeded", "OnFailure", "one,two", "a", {{"one", X, 0}, {"two", X, 0, 1}, {"a", X, 0, 2}}, true, 0, 0, 0, 0,
     "Succeeded", "True", "PodCompleted", "False", "PodCompleted", "PodCompleted", NULL},
    {"sidecar: running, app running", "Always", "side:s", "a", {{"side", R}, {"a", R, 0, 1}}, true, 0, 0, 0, 0,
     "Running", "True", "", "True", "", "", NULL},
    {"sidecar: unready (probe), app running", "Always", "side:sr", "a", {{"side", R}, {"a", R, 0, 1}}, true, 0, 0, 0, 0,
     "Running", "True", "", "False", "ContainersNotReady", "ContainersNotReady", "containers with unready status: [side]"},
    {"sidecar: ready by probe", "Always", "side:sr", "a", {{"side", R}, {"a", R, 0, 1}}, true, 0, 0, "side", 0,
     "Running", "True", "", "True", "", "", NULL},
    {"sidecar: not started yet", "Always", "side:s", "a", {{0}}, true, 0, 0, 0, 0,
     "Pending", "False", "ContainersNotInitialized", "False", "ContainersNotReady", "ContainersNotReady", "containers with unready status: [side a]"},
    {"sidecar: startup probe pending", "Always", "side:su", "a", {{"side", R}}, true, 0, 0, 0, 0,
     "Pending", "False", "ContainersNotInitialized", "False", "ContainersNotReady", "ContainersNotReady", NULL},
    {"sidecar: startup probe passed", "Always", "side:su", "a", {{"side", R}}, true, 0, 0, 0, "side",
     "Pending", "True", "", "False", "ContainersNotReady", "ContainersNotReady", "containers with unready status: [a]"},
    {"sidecar: running, never, app exited 0", "Never", "side:s", "a", {{"side", R}, {"a", X, 0, 1}}, true, 0, 0, 0, 0,
     "Running", "True", "", "False", "ContainersNotReady", "ContainersNotReady", "containers with unready status: [a]"},
    {"sidecar: stopped, never, app exited 0", "Never", "side:s", "a", {{"side", X, 137}, {"a", X, 0, 1}}, true, 0, 0, 0, 0,
     "Succeeded", "True", "PodCompleted", "False", "PodCompleted", "PodCompleted", NULL},
    {"sidecar: stopped, never, app failed", "Never", "side:s", "a", {{"side", X, 0}, {"a", X, 3, 1}}, true, 0, 0, 0, 0,
     "Failed", "True", "", "False", "PodFailed", "PodFailed", NULL},
    {"sidecar: restarting after init, app running", "Always", "side:s", "a", {{"side", X, 1}, {"a", R, 0, 1}}, true, "side", "CrashLoopBackOff", 0, 0,
     "Running", "True", "", "False", "ContainersNotReady", "ContainersNotReady", "containers with unready status: [side]"},
    {"sidecar + init: init after sidecar running", "Always", "side:s,setup", "a", {{"side", R}, {"setup", R, 0, 1}}, true, 0, 0, 0, 0,
     "Pending", "False", "ContainersNotInitialized", "False", "ContainersNotReady", "ContainersNotReady", NULL},
    {"readiness probe: no result yet", "Always", "", "a:r", {{"a", R}}, true, 0, 0, 0, 0,
     "Running", "True", "", "False", "ContainersNotReady", "ContainersNotReady", "containers with unready status: [a]"},
    {"readiness probe: passed", "Always", "", "a:r", {{"a", R}}, true, 0, 0, "a", 0,
     "Running", "True", "", "True", "", "", NULL},
    {"startup probe pending: not ready", "Always", "", "a:u", {{"a", R}}, true, 0, 0, 0, 0,
     "Running", "True", "", "False", "ContainersNotReady", "ContainersNotReady", NULL},
};
// clang-format on

static void check_case(const struct phase_case *tc)
{
        struct pod *pod = make_pod(tc->policy, tc->init, tc->app);
        struct runtime_fixture f;
        const struct runtime_pod_status *rt = make_runtime(&f, tc->rcs, tc->sandbox);
        struct kuberuntime_waiting w = {(char *)tc->waiting_for, (char *)tc->waiting_reason,
                                        "back-off restarting"};
        struct kuberuntime_sync_result sync = {.waiting = &w, .n_waiting = tc->waiting_for != 0};
        struct kv ready_kv = {(char *)tc->ready_true, "true"};
        struct kv_list ready = {&ready_kv, tc->ready_true != NULL};
        struct kv started_kv = {(char *)tc->started_true, "true"};
        struct kv_list started = {&started_kv, tc->started_true != NULL};
        struct status_input in = {
            .pod = pod,
            .runtime = rt,
            .sync = &sync,
            .runtime_name = "containerd",
            .readiness = &ready,
            .startup = &started,
            .now_ns = T0 + 100 * SEC,
        };
        json_t *s = status_generate(&in);
        const char *where = tc->desc;
        if (strcmp(str(s, "phase"), tc->phase) != 0)
                fail_msg("%s: phase %s, want %s", where, str(s, "phase"), tc->phase);
        if (strcmp(status_phase(&in), tc->phase) != 0)
                fail_msg("%s: status_phase disagrees", where);
        const json_t *ini = cond(s, "Initialized");
        const json_t *rdy = cond(s, "Ready");
        const json_t *crd = cond(s, "ContainersReady");
        if (strcmp(str(ini, "status"), tc->initialized) != 0 ||
            strcmp(str(ini, "reason"), tc->initialized_reason) != 0)
                fail_msg("%s: Initialized %s/%s, want %s/%s (%s)", where, str(ini, "status"),
                         str(ini, "reason"), tc->initialized, tc->initialized_reason,
                         str(ini, "message"));
        if (strcmp(str(rdy, "status"), tc->ready) != 0 ||
            strcmp(str(rdy, "reason"), tc->ready_reason) != 0)
                fail_msg("%s: Ready %s/%s, want %s/%s (%s)", where, str(rdy, "status"),
                         str(rdy, "reason"), tc->ready, tc->ready_reason, str(rdy, "message"));
        if (strcmp(str(crd, "status"), tc->ready) != 0 ||
            strcmp(str(crd, "reason"), tc->containers_ready_reason) != 0)
                fail_msg("%s: ContainersReady %s/%s", where, str(crd, "status"),
                         str(crd, "reason"));
        if (tc->message != NULL && strcmp(str(rdy, "message"), tc->message) != 0)
                fail_msg("%s: Ready message \"%s\", want \"%s\"", where, str(rdy, "message"),
                         tc->message);
        /* the same condition on both, as upstream copies ContainersReady */
        assert_string_equal(str(rdy, "message"), str(crd, "message"));
        if (tc->waiting_for != NULL) {
                const json_t *w = json_object_get(
                    json_object_get(cstatus(s, tc->waiting_for), "state"), "waiting");
                if (w == NULL || strcmp(str(w, "reason"), tc->waiting_reason) != 0)
                        fail_msg("%s: %s not waiting with %s", where, tc->waiting_for,
                                 tc->waiting_reason);
                assert_string_equal(str(w, "message"), "back-off restarting");
        }
        /* PodReadyToStartContainers follows the sandbox */
        assert_string_equal(str(cond(s, "PodReadyToStartContainers"), "status"),
                            tc->sandbox ? "True" : "False");
        assert_string_equal(str(cond(s, "PodScheduled"), "status"), "True");
        json_decref(s);
        pod_unref(pod);
}

static void test_phase_table(void **state)
{
        (void)state;
        for (size_t i = 0; i < sizeof(phase_cases) / sizeof(phase_cases[0]); i++)
                check_case(&phase_cases[i]);
}

/* ---- details ---- */

static json_t *generate_simple(struct pod *pod, const struct runtime_pod_status *rt,
                               const json_t *old, int64_t now)
{
        struct status_input in = {
            .pod = pod,
            .runtime = rt,
            .old_status = old,
            .runtime_name = "containerd",
            .host_ip = "192.168.1.10",
            .now_ns = now,
        };
        return status_generate(&in);
}

static void test_container_status_fields(void **state)
{
        (void)state;
        struct pod *pod = make_pod("Always", "", "web,db");
        struct runtime_fixture f;
        /* web: the current instance running (restart 2), the one before it
         * exited 137; db: created, not started */
        const struct rc_spec rcs[] = {
            {"web", X, 137, 1, 1}, {"web", R, 0, 5, 2}, {"web", X, 1, 0, 0}, {"db", C}, {0}};
        const struct runtime_pod_status *rt = make_runtime(&f, rcs, true);
        json_t *s = generate_simple(pod, rt, NULL, T0 + 100 * SEC);

        /* app statuses sorted by name */
        json_t *arr = json_object_get(s, "containerStatuses");
        assert_int_equal(json_array_size(arr), 2);
        assert_string_equal(str(json_array_get(arr, 0), "name"), "db");
        assert_string_equal(str(json_array_get(arr, 1), "name"), "web");
        assert_null(json_object_get(s, "initContainerStatuses"));

        const json_t *web = cstatus(s, "web");
        assert_int_equal(json_integer_value(json_object_get(web, "restartCount")), 2);
        assert_string_equal(str(web, "containerID"), "containerd://c1web");
        assert_string_equal(str(web, "image"), "localhost/busybox:1.35");
        assert_string_equal(str(web, "imageID"), "sha256:1111");
        assert_true(json_is_true(json_object_get(web, "ready")));
        assert_true(json_is_true(json_object_get(web, "started")));
        json_t *running = json_object_get(json_object_get(web, "state"), "running");
        assert_string_equal(str(running, "startedAt"), "2023-11-14T22:13:25Z");
        json_t *last = json_object_get(json_object_get(web, "lastState"), "terminated");
        assert_non_null(last);
        assert_int_equal(json_integer_value(json_object_get(last, "exitCode")), 137);
        assert_string_equal(str(last, "reason"), "Error");
        assert_string_equal(str(last, "containerID"), "containerd://c0web");
        assert_string_equal(str(last, "startedAt"), "2023-11-14T22:13:21Z");
        assert_string_equal(str(last, "finishedAt"), "2023-11-14T22:13:24Z");

        const json_t *db = cstatus(s, "db");
        json_t *w = json_object_get(json_object_get(db, "state"), "waiting");
        assert_non_null(w);
        assert_int_equal(json_object_size(w), 0); /* created: waiting, no reason */
        assert_int_equal(json_object_size(json_object_get(db, "lastState")), 0);
        assert_true(json_is_false(json_object_get(db, "ready")));
        assert_true(json_is_false(json_object_get(db, "started")));

        /* IPs, QoS, start time */
        assert_string_equal(str(s, "podIP"), "10.88.0.5");
        assert_string_equal(str(s, "hostIP"), "192.168.1.10");
        assert_string_equal(str(s, "qosClass"), "BestEffort");
        assert_string_equal(str(s, "startTime"), "2023-11-14T22:15:00Z");
        assert_int_equal(json_integer_value(json_object_get(s, "observedGeneration")), 1);
        json_decref(s);
        pod_unref(pod);
}

/* The pod with its containers' resources set (YAML-ish JSON strings). */
static struct pod *make_resized_pod(const char *c1, const char *c2)
{
        json_t *obj = json_loads(c1, 0, NULL), *obj2 = json_loads(c2, 0, NULL);
        assert_non_null(obj);
        assert_non_null(obj2);
        json_t *cs = containers_json("c1,c2");
        json_object_set_new(json_array_get(cs, 0), "resources", obj);
        json_object_set_new(json_array_get(cs, 1), "resources", obj2);
        json_t *p =
            json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:I}, s:{s:o}}", "apiVersion", "v1", "kind",
                      "Pod", "metadata", "name", "web", "namespace", "default", "uid", "uid-1",
                      "generation", (json_int_t)2, "spec", "containers", cs);
        struct pod *pod = test_pod_object(p);
        json_decref(p);
        return pod;
}

static const char *res_str(const json_t *cs, const char *key, const char *list, const char *name)
{
        return json_string_value(
            json_object_get(json_object_get(json_object_get(cs, key), list), name));
}

/* resources (upstream convertContainerStatusResources) and
 * allocatedResources of an in-place resize: a running container reports
 * what its runtime was given (1m and 2m both give 2 shares, 5m and 10m a
 * 1000 us quota: the allocated value stays then), a stopped one its
 * allocation; the resize conditions are reported as they were set. */
static void test_resize_resources_and_conditions(void **state)
{
        (void)state;
        /* allocated: c1 1m/5m (equivalent to what runs), c2 25m/35m, 25Mi
         * (what runs: 20m, no cpu limit, 20Mi) */
        struct pod *pod =
            make_resized_pod("{\"requests\": {\"cpu\": \"1m\"}, \"limits\": {\"cpu\": \"5m\"}}",
                             "{\"requests\": {\"cpu\": \"25m\", \"memory\": \"25Mi\"}, \"limits\": "
                             "{\"cpu\": \"35m\", \"memory\": \"25Mi\"}}");
        json_t *actuated =
            json_loads("{\"c1\": {\"requests\": {\"cpu\": \"2m\"}, \"limits\": {\"cpu\": \"10m\"}},"
                       " \"c2\": {\"requests\": {\"cpu\": \"20m\", \"memory\": \"20Mi\"},"
                       " \"limits\": {\"memory\": \"20Mi\"}}}",
                       0, NULL);
        assert_non_null(actuated);
        json_t *conds = json_loads("[{\"type\": \"PodResizeInProgress\", \"status\": \"True\","
                                   " \"observedGeneration\": 2, \"lastProbeTime\":"
                                   " \"2023-11-14T22:13:21Z\", \"lastTransitionTime\":"
                                   " \"2023-11-14T22:13:21Z\"}]",
                                   0, NULL);
        struct runtime_fixture f;
        const struct rc_spec rcs[] = {{"c1", R}, {"c2", R}, {0}};
        const struct runtime_pod_status *rt = make_runtime(&f, rcs, true);
        /* what the runtime reports (CRI ContainerStatus.resources): c1
         * the minimum shares and quota, c2 20m, no quota, 20Mi */
        f.cs[0].resources = (struct runtime_container_resources){
            .reported = true, .cpu_period = 100000, .cpu_quota = 1000, .cpu_shares = 2};
        f.cs[1].resources = (struct runtime_container_resources){.reported = true,
                                                                 .cpu_period = 100000,
                                                                 .cpu_quota = -1,
                                                                 .cpu_shares = 20,
                                                                 .memory_limit = 20 << 20};
        struct status_input in = {
            .pod = pod,
            .runtime = rt,
            .runtime_name = "containerd",
            .actuated = actuated,
            .resize_conditions = conds,
            .now_ns = T0 + 100 * SEC,
        };
        json_t *s = status_generate(&in);
        const json_t *c1 = cstatus(s, "c1"), *c2 = cstatus(s, "c2");
        assert_string_equal(res_str(c1, "resources", "requests", "cpu"), "1m");
        assert_string_equal(res_str(c1, "resources", "limits", "cpu"), "5m");
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(c1, "allocatedResources"), "cpu")),
            "1m");
        /* c2: cpu request and memory limit as they run, the memory request
         * (no cgroup holds one) from the actuated state; the cpu limit it
         * does not have yet stays the allocated one (none reported) */
        assert_string_equal(res_str(c2, "resources", "requests", "cpu"), "20m");
        assert_string_equal(res_str(c2, "resources", "requests", "memory"), "20Mi");
        assert_string_equal(res_str(c2, "resources", "limits", "memory"), "20Mi");
        assert_string_equal(res_str(c2, "resources", "limits", "cpu"), "35m");
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(c2, "allocatedResources"), "memory")),
            "25Mi");
        /* the condition as set, its times its own, before the kubelet's */
        const json_t *ip = cond(s, "PodResizeInProgress");
        assert_non_null(ip);
        assert_string_equal(str(ip, "lastTransitionTime"), "2023-11-14T22:13:21Z");
        assert_int_equal(json_integer_value(json_object_get(ip, "observedGeneration")), 2);
        assert_string_equal(str(json_array_get(json_object_get(s, "conditions"), 0), "type"),
                            "PodResizeInProgress");
        json_decref(s);

        /* stopped: the allocation, whatever ran */
        f.cs[1].state = CONTAINER_STATE_EXITED;
        f.cs[1].finished_at = T0 + 3 * SEC;
        s = status_generate(&in);
        c2 = cstatus(s, "c2");
        assert_string_equal(res_str(c2, "resources", "requests", "cpu"), "25m");
        assert_string_equal(res_str(c2, "resources", "limits", "memory"), "25Mi");
        json_decref(s);

        /* a runtime that reports nothing: the actuated state stands in */
        f.cs[1].state = CONTAINER_STATE_RUNNING;
        f.cs[0].resources.reported = false;
        f.cs[1].resources.reported = false;
        s = status_generate(&in);
        c1 = cstatus(s, "c1");
        c2 = cstatus(s, "c2");
        assert_string_equal(res_str(c1, "resources", "requests", "cpu"), "1m");
        assert_string_equal(res_str(c1, "resources", "limits", "cpu"), "5m");
        assert_string_equal(res_str(c2, "resources", "requests", "cpu"), "20m");
        assert_string_equal(res_str(c2, "resources", "limits", "memory"), "20Mi");
        json_decref(s);

        /* neither: the allocation */
        in.actuated = NULL;
        in.resize_conditions = NULL;
        s = status_generate(&in);
        c2 = cstatus(s, "c2");
        assert_string_equal(res_str(c2, "resources", "requests", "cpu"), "25m");
        assert_null(find_by(json_object_get(s, "conditions"), "type", "PodResizeInProgress"));
        json_decref(s);
        json_decref(conds);
        json_decref(actuated);
        pod_unref(pod);
}

static void test_default_waiting_reasons(void **state)
{
        (void)state;
        struct pod *pod = make_pod("Always", "", "a");
        json_t *s = generate_simple(pod, NULL, NULL, T0);
        json_t *w = json_object_get(json_object_get(cstatus(s, "a"), "state"), "waiting");
        assert_string_equal(str(w, "reason"), "ContainerCreating");
        assert_false(json_is_true(json_object_get(cstatus(s, "a"), "ready")));
        assert_null(json_object_get(s, "podIP"));
        json_decref(s);
        pod_unref(pod);

        pod = make_pod("Always", "setup", "a");
        s = generate_simple(pod, NULL, NULL, T0);
        w = json_object_get(json_object_get(cstatus(s, "a"), "state"), "waiting");
        assert_string_equal(str(w, "reason"), "PodInitializing");
        w = json_object_get(json_object_get(cstatus(s, "setup"), "state"), "waiting");
        assert_string_equal(str(w, "reason"), "PodInitializing");
        assert_string_equal(str(cond(s, "Initialized"), "message"),
                            "containers with incomplete status: [setup]");
        json_decref(s);
        pod_unref(pod);
}

/* ephemeralContainerStatuses: as the app containers' (upstream converts them
 * with the same function), sorted by name, outside the phase and conditions. */
static void test_ephemeral_container_statuses(void **state)
{
        (void)state;
        json_t *obj = json_pack(
            "{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s, s:o, s:[{s:s, s:s}, {s:s, s:s}]}}", "apiVersion",
            "v1", "kind", "Pod", "metadata", "name", "web", "namespace", "default", "uid", "uid-1",
            "spec", "restartPolicy", "Always", "containers", containers_json("web"),
            "ephemeralContainers", "name", "zz-debug", "image", "localhost/busybox:1.35", "name",
            "debugger", "image", "localhost/busybox:1.35");
        struct pod *pod = test_pod_object(obj);
        json_decref(obj);
        struct runtime_fixture f;
        /* debugger ran and exited 1; zz-debug not started yet */
        const struct rc_spec rcs[] = {{"web", R, 0, 1, 0}, {"debugger", X, 1, 2, 0}, {0}};
        json_t *s = generate_simple(pod, make_runtime(&f, rcs, true), NULL, T0 + 100 * SEC);

        json_t *arr = json_object_get(s, "ephemeralContainerStatuses");
        assert_int_equal(json_array_size(arr), 2);
        assert_string_equal(str(json_array_get(arr, 0), "name"), "debugger");
        assert_string_equal(str(json_array_get(arr, 1), "name"), "zz-debug");
        const json_t *d = json_array_get(arr, 0);
        json_t *t = json_object_get(json_object_get(d, "state"), "terminated");
        assert_non_null(t);
        assert_int_equal(json_integer_value(json_object_get(t, "exitCode")), 1);
        assert_string_equal(str(d, "containerID"), "containerd://c1debugger");
        json_t *w = json_object_get(json_object_get(json_array_get(arr, 1), "state"), "waiting");
        assert_string_equal(str(w, "reason"), "ContainerCreating");
        /* not in the app list, and the pod is Running and Ready on web alone */
        assert_int_equal(json_array_size(json_object_get(s, "containerStatuses")), 1);
        assert_string_equal(str(s, "phase"), "Running");
        assert_string_equal(str(cond(s, "Ready"), "status"), "True");
        json_decref(s);
        pod_unref(pod);

        /* a pod without ephemeral containers has no such list */
        pod = make_pod("Always", "", "web");
        s = generate_simple(pod, NULL, NULL, T0);
        assert_null(json_object_get(s, "ephemeralContainerStatuses"));
        json_decref(s);
        pod_unref(pod);
}

static void test_transition_times_and_start_time(void **state)
{
        (void)state;
        struct pod *pod = make_pod("Always", "", "a");
        struct runtime_fixture f;
        const struct rc_spec pending[] = {{0}};
        json_t *s1 = generate_simple(pod, make_runtime(&f, pending, true), NULL, T0 + 10 * SEC);
        assert_string_equal(str(cond(s1, "Ready"), "lastTransitionTime"), "2023-11-14T22:13:30Z");
        assert_true(json_is_null(json_object_get(cond(s1, "Ready"), "lastProbeTime")));

        /* Ready flips: a new time; PodScheduled unchanged: the old time */
        const struct rc_spec running[] = {{"a", R}, {0}};
        json_t *s2 = generate_simple(pod, make_runtime(&f, running, true), s1, T0 + 20 * SEC);
        assert_string_equal(str(cond(s2, "Ready"), "status"), "True");
        assert_string_equal(str(cond(s2, "Ready"), "lastTransitionTime"), "2023-11-14T22:13:40Z");
        assert_string_equal(str(cond(s2, "PodScheduled"), "lastTransitionTime"),
                            "2023-11-14T22:13:30Z");
        assert_string_equal(str(s2, "startTime"), "2023-11-14T22:13:30Z");

        /* nothing changes: every time stays */
        json_t *s3 = generate_simple(pod, make_runtime(&f, running, true), s2, T0 + 30 * SEC);
        assert_string_equal(str(cond(s3, "Ready"), "lastTransitionTime"), "2023-11-14T22:13:40Z");
        json_decref(s1);
        json_decref(s2);
        json_decref(s3);
        pod_unref(pod);
}

static void test_vanished_running_container(void **state)
{
        (void)state;
        struct pod *pod = make_pod("Always", "", "a");
        struct runtime_fixture f;
        const struct rc_spec running[] = {{"a", R, 0, 0, 4}, {0}};
        json_t *s1 = generate_simple(pod, make_runtime(&f, running, true), NULL, T0);
        /* the runtime lost the container: it ran and stopped, the pod
         * does not fall back to Pending */
        const struct rc_spec none[] = {{0}};
        json_t *s2 = generate_simple(pod, make_runtime(&f, none, true), s1, T0 + SEC);
        const json_t *a = cstatus(s2, "a");
        json_t *lt = json_object_get(json_object_get(a, "lastState"), "terminated");
        assert_non_null(lt);
        assert_string_equal(str(lt, "reason"), "ContainerStatusUnknown");
        assert_int_equal(json_integer_value(json_object_get(lt, "exitCode")), 137);
        assert_int_equal(json_integer_value(json_object_get(a, "restartCount")), 5);
        assert_string_equal(str(s2, "phase"), "Running");

        /* unknown state after running: terminated with ContainerStatusUnknown */
        const struct rc_spec unknown[] = {{"a", CONTAINER_STATE_UNKNOWN, 0, 0, 4}, {0}};
        json_t *s3 = generate_simple(pod, make_runtime(&f, unknown, true), s1, T0 + SEC);
        json_t *t = json_object_get(json_object_get(cstatus(s3, "a"), "state"), "terminated");
        assert_non_null(t);
        assert_string_equal(str(t, "reason"), "ContainerStatusUnknown");
        json_decref(s1);
        json_decref(s2);
        json_decref(s3);
        pod_unref(pod);
}

static void test_terminal_phase_is_kept(void **state)
{
        (void)state;
        struct pod *pod = make_pod("Always", "", "a");
        struct runtime_fixture f;
        const struct rc_spec running[] = {{"a", R}, {0}};
        json_t *old =
            json_pack("{s:s, s:s, s:s}", "phase", "Failed", "reason", "DeadlineExceeded", "message",
                      "Pod was active on the node longer than the specified "
                      "deadline");
        json_t *s = generate_simple(pod, make_runtime(&f, running, true), old, T0);
        assert_string_equal(str(s, "phase"), "Failed");
        assert_string_equal(str(s, "reason"), "DeadlineExceeded");
        assert_string_equal(str(cond(s, "Ready"), "reason"), "PodFailed");
        json_decref(s);
        json_decref(old);
        pod_unref(pod);
}

/* A pod deleted through the apiserver whose containers were stopped
 * (upstream podIsTerminal): Succeeded when all exited 0, else Failed, even
 * with restartPolicy Always; without the flag the same containers mean
 * "restarting", Running. */
static void test_stopped_pod_being_deleted_is_terminal(void **state)
{
        (void)state;
        struct pod *pod = make_pod("Always", "", "a,b");
        struct runtime_fixture f;
        const struct rc_spec clean[] = {
            {"a", CONTAINER_STATE_EXITED, 0}, {"b", CONTAINER_STATE_EXITED, 0}, {0}};
        const struct rc_spec killed[] = {
            {"a", CONTAINER_STATE_EXITED, 0}, {"b", CONTAINER_STATE_EXITED, 137}, {0}};
        struct status_input in = {
            .pod = pod,
            .runtime = make_runtime(&f, clean, true),
            .runtime_name = "containerd",
            .now_ns = T0,
        };
        json_t *s = status_generate(&in);
        assert_string_equal(str(s, "phase"), "Running");
        json_decref(s);
        in.pod_terminal = true;
        s = status_generate(&in);
        assert_string_equal(str(s, "phase"), "Succeeded");
        json_decref(s);
        in.runtime = make_runtime(&f, killed, true);
        s = status_generate(&in);
        assert_string_equal(str(s, "phase"), "Failed");
        json_decref(s);
        pod_unref(pod);
}

/* upstream TerminatePod: a pod deleted before its container ever started
 * ends Failed, the container terminated as unknown; a static pod keeps its
 * phase; init containers up to the last that ran are ended, the rest of
 * them (and the app containers of a pod never initialized) stay waiting. */
static void test_terminate_pod(void **state)
{
        (void)state;
        struct pod *pod = make_pod("Always", "", "a");
        pod->source = POD_SOURCE_API;
        struct runtime_fixture f;
        struct status_input in = {
            .pod = pod,
            .runtime = make_runtime(&f, NULL, true),
            .runtime_name = "containerd",
            .pod_terminal = true,
            .now_ns = T0,
        };
        json_t *s = status_generate(&in);
        assert_string_equal(str(s, "phase"), "Pending");
        status_terminate(pod, s);
        assert_string_equal(str(s, "phase"), "Failed");
        const json_t *t = json_object_get(
            json_object_get(json_array_get(json_object_get(s, "containerStatuses"), 0), "state"),
            "terminated");
        assert_non_null(t);
        assert_int_equal(json_integer_value(json_object_get(t, "exitCode")), 137);
        assert_string_equal(str(t, "reason"), "ContainerStatusUnknown");
        assert_string_equal(str(t, "message"),
                            "The container could not be located when the pod was terminated");
        json_decref(s);
        pod_unref(pod);

        /* static (from a manifest file): the containers ended, the phase
         * as it was */
        pod = make_pod("Always", "", "a");
        assert_true(pod_is_static(pod));
        in.pod = pod;
        s = status_generate(&in);
        status_terminate(pod, s);
        assert_string_equal(str(s, "phase"), "Pending");
        assert_non_null(json_object_get(
            json_object_get(json_array_get(json_object_get(s, "containerStatuses"), 0), "state"),
            "terminated"));
        json_decref(s);
        pod_unref(pod);

        /* init i1 failed and waits for its restart, i2 and i3 never ran */
        pod = make_pod("Always", "i1,i2,i3", "a");
        pod->source = POD_SOURCE_API;
        const struct rc_spec failed[] = {{"i1", CONTAINER_STATE_EXITED, 1}, {0}};
        in.pod = pod;
        in.runtime = make_runtime(&f, failed, true);
        s = status_generate(&in);
        status_terminate(pod, s);
        assert_string_equal(str(s, "phase"), "Failed");
        const json_t *init = json_object_get(s, "initContainerStatuses");
        assert_int_equal(json_array_size(init), 3);
        t = json_object_get(json_object_get(json_array_get(init, 0), "state"), "terminated");
        assert_int_equal(json_integer_value(json_object_get(t, "exitCode")), 1);
        assert_non_null(
            json_object_get(json_object_get(json_array_get(init, 1), "state"), "waiting"));
        assert_non_null(
            json_object_get(json_object_get(json_array_get(init, 2), "state"), "waiting"));
        assert_non_null(json_object_get(
            json_object_get(json_array_get(json_object_get(s, "containerStatuses"), 0), "state"),
            "waiting"));
        json_decref(s);

        /* none ran: the first init container counts as ended */
        in.runtime = make_runtime(&f, NULL, true);
        s = status_generate(&in);
        status_terminate(pod, s);
        init = json_object_get(s, "initContainerStatuses");
        assert_non_null(
            json_object_get(json_object_get(json_array_get(init, 0), "state"), "terminated"));
        assert_non_null(
            json_object_get(json_object_get(json_array_get(init, 1), "state"), "waiting"));
        json_decref(s);
        pod_unref(pod);
}

static void test_rejected_pod(void **state)
{
        (void)state;
        struct pod *pod = make_pod("Always", "", "a");
        struct status_input in = {
            .pod = pod,
            .runtime_name = "containerd",
            .reject_reason = "OutOfcpu",
            .reject_message = "Node didn't have enough resource: cpu",
            .terminal_failed = true,
            .now_ns = T0,
        };
        json_t *s = status_generate(&in);
        assert_string_equal(str(s, "phase"), "Failed");
        assert_string_equal(str(s, "reason"), "OutOfcpu");
        assert_string_equal(str(s, "message"),
                            "Pod was rejected: Node didn't have enough resource: cpu");
        assert_string_equal(str(s, "qosClass"), "BestEffort");
        assert_null(json_object_get(s, "containerStatuses"));
        assert_null(json_object_get(s, "conditions"));
        assert_string_equal(status_phase(&in), "Failed");
        json_decref(s);

        /* a deadline on a running pod: the full status, phase Failed */
        struct runtime_fixture f;
        const struct rc_spec running[] = {{"a", R}, {0}};
        in.runtime = make_runtime(&f, running, true);
        in.reject_reason = "DeadlineExceeded";
        in.reject_message = "Pod was active on the node longer than the specified deadline";
        s = status_generate(&in);
        assert_string_equal(str(s, "phase"), "Failed");
        assert_string_equal(str(s, "reason"), "DeadlineExceeded");
        assert_string_equal(str(s, "message"), in.reject_message);
        assert_non_null(json_object_get(s, "containerStatuses"));
        json_decref(s);
        pod_unref(pod);
}

static void test_pod_ips_follow_node_family(void **state)
{
        (void)state;
        struct pod *pod = make_pod("Always", "", "a");
        struct runtime_fixture f;
        const struct rc_spec running[] = {{"a", R}, {0}};
        make_runtime(&f, running, true);
        char *extra[] = {"fd00::5", "10.88.0.9"};
        f.sb.additional_ips = extra;
        f.sb.n_additional_ips = 2;
        struct status_input in = {
            .pod = pod, .runtime = &f.st, .runtime_name = "containerd", .now_ns = T0};
        in.host_ip = "192.168.1.10";
        json_t *s = status_generate(&in);
        json_t *ips = json_object_get(s, "podIPs");
        assert_int_equal(json_array_size(ips), 2);
        assert_string_equal(str(json_array_get(ips, 0), "ip"), "10.88.0.5");
        assert_string_equal(str(json_array_get(ips, 1), "ip"), "fd00::5");
        json_decref(s);

        in.host_ip = "fd00::1";
        s = status_generate(&in);
        assert_string_equal(str(s, "podIP"), "fd00::5");
        assert_string_equal(str(s, "hostIP"), "fd00::1");
        json_decref(s);
        pod_unref(pod);
}

static void test_old_terminated_status_survives_gc(void **state)
{
        (void)state;
        struct pod *pod = make_pod("Never", "", "a");
        struct runtime_fixture f;
        const struct rc_spec done[] = {{"a", X, 0}, {0}};
        json_t *s1 = generate_simple(pod, make_runtime(&f, done, true), NULL, T0);
        assert_string_equal(str(s1, "phase"), "Succeeded");
        /* the container was garbage collected: the old terminated state stays */
        const struct rc_spec none[] = {{0}};
        json_t *s2 = generate_simple(pod, make_runtime(&f, none, false), s1, T0 + SEC);
        assert_string_equal(str(s2, "phase"), "Succeeded");
        json_t *t = json_object_get(json_object_get(cstatus(s2, "a"), "state"), "terminated");
        assert_non_null(t);
        assert_string_equal(str(t, "reason"), "Completed");
        json_decref(s1);
        json_decref(s2);
        pod_unref(pod);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_phase_table),
            cmocka_unit_test(test_container_status_fields),
            cmocka_unit_test(test_resize_resources_and_conditions),
            cmocka_unit_test(test_default_waiting_reasons),
            cmocka_unit_test(test_ephemeral_container_statuses),
            cmocka_unit_test(test_transition_times_and_start_time),
            cmocka_unit_test(test_vanished_running_container),
            cmocka_unit_test(test_terminal_phase_is_kept),
            cmocka_unit_test(test_rejected_pod),
            cmocka_unit_test(test_terminate_pod),
            cmocka_unit_test(test_stopped_pod_being_deleted_is_terminal),
            cmocka_unit_test(test_pod_ips_follow_node_family),
            cmocka_unit_test(test_old_terminated_status_survives_gc),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
