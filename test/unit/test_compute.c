/* SPDX-License-Identifier: Apache-2.0 */
/* computePodActions (kuberuntime/compute.h) from a table: the spec, what the
 * runtime reports, and what one sync must then do. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "kuberuntime/compute.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXC 6

struct spec_c {
        const char *name;
        bool sidecar;
        uint64_t hash;      /* 0: the default hash 1 */
        bool startup_probe; /* has one */
        const char *policy; /* its own restartPolicy (ContainerRestartRules) */
        int restart_on;     /* a restartPolicyRules entry: Restart on this exit code */
};

/* A container instance in the runtime, listed newest first. */
struct stat_c {
        const char *name;
        enum container_state state;
        int exit_code;
        uint64_t hash;  /* 0: equal to the spec's */
        const char *id; /* NULL: "id-<name>-<index>" */
};

struct sandbox {
        bool ready;
        uint32_t attempt;
        const char *ip; /* NULL: no IP */
        bool host_network;
};

struct want {
        bool kill_pod, create_sandbox, pod_done;
        uint32_t attempt;
        const char *init_start; /* names, comma separated, in order */
        const char *start;
        const char *kill;      /* names of the killed instances */
        const char *eph_start; /* ephemeral containers to start */
};

struct tcase {
        const char *what;
        enum restart_policy policy;
        bool host_network, deleting;
        struct spec_c init[MAXC];
        struct spec_c app[MAXC];
        struct spec_c eph[MAXC];     /* ephemeral containers */
        struct sandbox sandboxes[3]; /* newest first; attempt 0 + !ready + no ip = none */
        size_t n_sandboxes;
        struct stat_c stats[MAXC];
        const char *liveness_failed[MAXC];
        const char *startup_failed[MAXC];
        const char *started[MAXC]; /* startup probe succeeded */
        struct want want;
};

#define READY(att)                                                                                 \
        {                                                                                          \
                .ready = true, .attempt = (att), .ip = "10.88.0.5"                                 \
        }
#define DEAD(att)                                                                                  \
        {                                                                                          \
                .ready = false, .attempt = (att), .ip = "10.88.0.5"                                \
        }
#define RUN CONTAINER_STATE_RUNNING
#define EXITED CONTAINER_STATE_EXITED
#define CREATED CONTAINER_STATE_CREATED
#define UNKNOWN CONTAINER_STATE_UNKNOWN

static const struct tcase cases[] = {
    {.what = "fresh pod: create the sandbox, start every container",
     .app = {{"web"}, {"log"}},
     .want = {.create_sandbox = true, .attempt = 0, .start = "web,log"}},
    {.what = "running and unchanged: nothing to do",
     .app = {{"web"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"web", RUN}},
     .want = {.attempt = 0}},
    {.what = "sandbox dead: kill, recreate with attempt+1, start again",
     .app = {{"web"}},
     .sandboxes = {DEAD(2)},
     .n_sandboxes = 1,
     .stats = {{"web", EXITED, 137}},
     .want = {.kill_pod = true, .create_sandbox = true, .attempt = 3, .start = "web"}},
    {.what = "sandbox without an IP is recreated",
     .app = {{"web"}},
     .sandboxes = {{.ready = true, .attempt = 0}},
     .n_sandboxes = 1,
     .stats = {{"web", RUN}},
     .want = {.kill_pod = true, .create_sandbox = true, .attempt = 1, .start = "web"}},
    {.what = "hostNetwork sandbox has no IP and is fine",
     .host_network = true,
     .app = {{"web"}},
     .sandboxes = {{.ready = true, .attempt = 0, .host_network = true}},
     .n_sandboxes = 1,
     .stats = {{"web", RUN}},
     .want = {.attempt = 0}},
    {.what = "network namespace mode changed: new sandbox",
     .host_network = true,
     .app = {{"web"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"web", RUN}},
     .want = {.kill_pod = true, .create_sandbox = true, .attempt = 1, .start = "web"}},
    {.what = "two ready sandboxes are reconciled into a new one",
     .app = {{"web"}},
     .sandboxes = {READY(1), READY(0)},
     .n_sandboxes = 2,
     .stats = {{"web", RUN}},
     .want = {.kill_pod = true, .create_sandbox = true, .attempt = 2, .start = "web"}},

    /* restartPolicy x exit code */
    {.what = "Always, exit 0: restart",
     .policy = RESTART_ALWAYS,
     .app = {{"web"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"web", EXITED, 0}},
     .want = {.start = "web"}},
    {.what = "Always, exit 1: restart",
     .policy = RESTART_ALWAYS,
     .app = {{"web"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"web", EXITED, 1}},
     .want = {.start = "web"}},
    {.what = "OnFailure, exit 0: done",
     .policy = RESTART_ON_FAILURE,
     .app = {{"web"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"web", EXITED, 0}},
     .want = {.kill_pod = true, .pod_done = true}},
    {.what = "OnFailure, exit 1: restart",
     .policy = RESTART_ON_FAILURE,
     .app = {{"web"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"web", EXITED, 1}},
     .want = {.start = "web"}},
    {.what = "Never, exit 0: done",
     .policy = RESTART_NEVER,
     .app = {{"web"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"web", EXITED, 0}},
     .want = {.kill_pod = true, .pod_done = true}},
    {.what = "Never, exit 1: done (failed)",
     .policy = RESTART_NEVER,
     .app = {{"web"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"web", EXITED, 1}},
     .want = {.kill_pod = true, .pod_done = true}},
    {.what = "Never, one exited, one running: keep going",
     .policy = RESTART_NEVER,
     .app = {{"web"}, {"job"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"job", EXITED, 1}, {"web", RUN}},
     .want = {}},
    {.what = "Never, sandbox died after the containers ran: no new sandbox",
     .policy = RESTART_NEVER,
     .app = {{"web"}},
     .sandboxes = {DEAD(0)},
     .n_sandboxes = 1,
     .stats = {{"web", EXITED, 0}},
     .want = {.kill_pod = true, .attempt = 1, .pod_done = true}},
    {.what = "Never, sandbox died before any container: retry the sandbox",
     .policy = RESTART_NEVER,
     .app = {{"web"}},
     .sandboxes = {DEAD(0)},
     .n_sandboxes = 1,
     .want = {.kill_pod = true, .create_sandbox = true, .attempt = 1, .start = "web"}},
    {.what = "OnFailure, sandbox died: only the failed container runs again",
     .policy = RESTART_ON_FAILURE,
     .app = {{"ok"}, {"bad"}},
     .sandboxes = {DEAD(0)},
     .n_sandboxes = 1,
     .stats = {{"bad", EXITED, 2}, {"ok", EXITED, 0}},
     .want = {.kill_pod = true, .create_sandbox = true, .attempt = 1, .start = "bad"}},
    {.what = "OnFailure, sandbox died, all succeeded: no new sandbox",
     .policy = RESTART_ON_FAILURE,
     .app = {{"ok"}},
     .sandboxes = {DEAD(0)},
     .n_sandboxes = 1,
     .stats = {{"ok", EXITED, 0}},
     .want = {.kill_pod = true, .attempt = 1, .pod_done = true}},
    {.what = "the newest instance decides, not an older one",
     .policy = RESTART_ON_FAILURE,
     .app = {{"web"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"web", EXITED, 0, .id = "new"}, {"web", EXITED, 1, .id = "old"}},
     .want = {.kill_pod = true, .pod_done = true}},

    /* spec changes, probes, odd states */
    {.what = "running container whose spec hash changed: kill and start",
     .app = {{"web", .hash = 2}, {"log"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"web", RUN}, {"log", RUN}},
     .want = {.start = "web", .kill = "web"}},
    {.what = "hash change restarts even under Never",
     .policy = RESTART_NEVER,
     .app = {{"web", .hash = 7}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"web", RUN}},
     .want = {.start = "web", .kill = "web"}},
    {.what = "liveness failure: kill and restart",
     .app = {{"web"}, {"log"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"web", RUN}, {"log", RUN}},
     .liveness_failed = {"web"},
     .want = {.start = "web", .kill = "web"}},
    {.what = "startup failure: kill and restart",
     .app = {{"web"}, {"log"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"web", RUN}, {"log", RUN}},
     .startup_failed = {"log"},
     .want = {.start = "log", .kill = "log"}},
    /* ContainerRestartRules: the container's own policy and rules */
    {.what = "container OnFailure in a Never pod, exit 1: restart",
     .policy = RESTART_NEVER,
     .app = {{"web", .policy = "OnFailure"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"web", EXITED, 1}},
     .want = {.start = "web"}},
    {.what = "container OnFailure in a Never pod, exit 0: done",
     .policy = RESTART_NEVER,
     .app = {{"web", .policy = "OnFailure"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"web", EXITED, 0}},
     .want = {.kill_pod = true, .pod_done = true}},
    {.what = "container Never, rule In [42], in an Always pod, exit 42: restart",
     .app = {{"web", .policy = "Never", .restart_on = 42}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"web", EXITED, 42}},
     .want = {.start = "web"}},
    {.what = "container Never, rule In [42], in an Always pod, exit 1: done",
     .app = {{"web", .policy = "Never", .restart_on = 42}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"web", EXITED, 1}},
     .want = {.kill_pod = true, .pod_done = true}},
    {.what = "liveness failure of a container Never in an Always pod: kill, no restart",
     .app = {{"web", .policy = "Never"}, {"log"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"web", RUN}, {"log", RUN}},
     .liveness_failed = {"web"},
     .want = {.kill = "web"}},
    {.what = "new sandbox: a succeeded container OnFailure in an Always pod stays done",
     .app = {{"web", .policy = "OnFailure"}, {"log"}},
     .sandboxes = {DEAD(0)},
     .n_sandboxes = 1,
     .stats = {{"web", EXITED, 0}, {"log", EXITED, 1}},
     .want = {.kill_pod = true, .create_sandbox = true, .attempt = 1, .start = "log"}},
    {.what = "init container OnFailure in a Never pod failed: retried",
     .policy = RESTART_NEVER,
     .init = {{"setup", .policy = "OnFailure"}},
     .app = {{"web"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"setup", EXITED, 1}},
     .want = {.init_start = "setup"}},
    {.what = "liveness failure under Never: kill, no restart",
     .policy = RESTART_NEVER,
     .app = {{"web"}, {"log"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"web", RUN}, {"log", RUN}},
     .liveness_failed = {"web"},
     .want = {.kill = "web"}},
    {.what = "unknown state: kill before the restart",
     .app = {{"web"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"web", UNKNOWN}},
     .want = {.start = "web", .kill = "web"}},
    {.what = "created but not started: start again",
     .policy = RESTART_NEVER,
     .app = {{"web"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"web", CREATED}},
     .want = {.start = "web"}},
    {.what = "container removed from the spec is killed",
     .app = {{"web"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"web", RUN}, {"gone", RUN}},
     .want = {.kill = "gone"}},
    {.what = "an older running duplicate is killed",
     .app = {{"web"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"web", RUN, .id = "new"}, {"web", RUN, .id = "old"}},
     .want = {.kill = "web"}},
    {.what = "deleting pod: nothing restarts",
     .deleting = true,
     .app = {{"web"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"web", EXITED, 1}},
     .want = {.kill_pod = true}},

    /* init containers */
    {.what = "fresh pod with init containers: the first init only",
     .init = {{"init1"}, {"init2"}},
     .app = {{"web"}},
     .want = {.create_sandbox = true, .init_start = "init1"}},
    {.what = "new sandbox, nothing ran yet: first init",
     .init = {{"init1"}, {"init2"}},
     .app = {{"web"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .want = {.init_start = "init1"}},
    {.what = "init1 running: wait",
     .init = {{"init1"}, {"init2"}},
     .app = {{"web"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"init1", RUN}},
     .want = {}},
    {.what = "init1 succeeded: init2 next",
     .init = {{"init1"}, {"init2"}},
     .app = {{"web"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"init1", EXITED, 0}},
     .want = {.init_start = "init2"}},
    {.what = "all init succeeded: app containers",
     .init = {{"init1"}, {"init2"}},
     .app = {{"web"}, {"log"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"init2", EXITED, 0}, {"init1", EXITED, 0}},
     .want = {.start = "web,log"}},
    {.what = "init failure under Always: restart that init container",
     .init = {{"init1"}, {"init2"}},
     .app = {{"web"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"init2", EXITED, 1}, {"init1", EXITED, 0}},
     .want = {.init_start = "init2"}},
    {.what = "init failure under OnFailure: restart it",
     .policy = RESTART_ON_FAILURE,
     .init = {{"init1"}},
     .app = {{"web"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"init1", EXITED, 3}},
     .want = {.init_start = "init1"}},
    {.what = "init failure under Never: the pod failed",
     .policy = RESTART_NEVER,
     .init = {{"init1"}, {"init2"}},
     .app = {{"web"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"init1", EXITED, 1}},
     .want = {.kill_pod = true, .pod_done = true}},
    {.what = "init containers done long ago and removed: app running stays",
     .init = {{"init1"}},
     .app = {{"web"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"web", RUN}},
     .want = {}},
    {.what = "sandbox dead with init containers: start over at the first",
     .init = {{"init1"}},
     .app = {{"web"}},
     .sandboxes = {DEAD(0)},
     .n_sandboxes = 1,
     .stats = {{"web", EXITED, 1}, {"init1", EXITED, 0}},
     .want = {.kill_pod = true, .create_sandbox = true, .attempt = 1, .init_start = "init1"}},

    /* sidecars: init containers with restartPolicy Always */
    {.what = "sidecar first: start it",
     .init = {{"proxy", true}, {"setup"}},
     .app = {{"web"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .want = {.init_start = "proxy"}},
    {.what = "sidecar running: next init container, sidecar kept",
     .init = {{"proxy", true}, {"setup"}},
     .app = {{"web"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"proxy", RUN}},
     .want = {.init_start = "setup"}},
    {.what = "sidecar running, init done: app containers",
     .init = {{"proxy", true}, {"setup"}},
     .app = {{"web"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"setup", EXITED, 0}, {"proxy", RUN}},
     .want = {.start = "web"}},
    {.what = "sidecar last and running: app containers",
     .init = {{"setup"}, {"proxy", true}},
     .app = {{"web"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"proxy", RUN}, {"setup", EXITED, 0}},
     .want = {.start = "web"}},
    {.what = "sidecar crashed after init: restart it, app kept",
     .policy = RESTART_NEVER,
     .init = {{"proxy", true}, {"setup"}},
     .app = {{"web"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"web", RUN}, {"proxy", EXITED, 1}, {"setup", EXITED, 0}},
     .want = {.init_start = "proxy"}},
    {.what = "sidecar spec changed: kill and start it",
     .init = {{"proxy", true, .hash = 9}},
     .app = {{"web"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"web", RUN}, {"proxy", RUN}},
     .want = {.init_start = "proxy", .kill = "proxy"}},
    {.what = "sidecar with a startup probe not passed yet: the next container waits",
     .init = {{"proxy", true, .startup_probe = true}, {"setup"}},
     .app = {{"web"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"proxy", RUN}},
     .want = {}},
    {.what = "sidecar's startup probe passed: the next container starts",
     .init = {{"proxy", true, .startup_probe = true}, {"setup"}},
     .app = {{"web"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"proxy", RUN}},
     .started = {"proxy"},
     .want = {.init_start = "setup"}},
    {.what = "last sidecar not started: the app containers wait",
     .init = {{"proxy", true, .startup_probe = true}},
     .app = {{"web"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"proxy", RUN}},
     .want = {}},
    {.what = "last sidecar started: the app containers start",
     .init = {{"proxy", true, .startup_probe = true}},
     .app = {{"web"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"proxy", RUN}},
     .started = {"proxy"},
     .want = {.start = "web"}},
    {.what = "sidecar failed its startup probe: restart it, nothing else starts",
     .init = {{"proxy", true, .startup_probe = true}},
     .app = {{"web"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"proxy", RUN}},
     .startup_failed = {"proxy"},
     .want = {.init_start = "proxy", .kill = "proxy"}},
    {.what = "apps done under Never: the sidecar does not keep the pod",
     .policy = RESTART_NEVER,
     .init = {{"proxy", true}},
     .app = {{"job"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"job", EXITED, 0}, {"proxy", RUN}},
     .want = {.kill_pod = true, .pod_done = true}},

    /* ephemeral containers */
    {.what = "ephemeral container added to a running pod: start it, kill nothing",
     .app = {{"web"}},
     .eph = {{"debugger"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"web", RUN}},
     .want = {.eph_start = "debugger"}},
    {.what = "a running ephemeral container is in the spec: kept",
     .app = {{"web"}},
     .eph = {{"debugger"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"debugger", RUN}, {"web", RUN}},
     .want = {}},
    {.what = "an exited ephemeral container is never started again, whatever the policy",
     .policy = RESTART_ALWAYS,
     .app = {{"web"}},
     .eph = {{"debugger"}, {"second"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"debugger", EXITED, 1}, {"web", RUN}},
     .want = {.eph_start = "second"}},
    {.what = "ephemeral containers start while initialization is stuck",
     .init = {{"setup"}},
     .app = {{"web"}},
     .eph = {{"debugger"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"setup", RUN}},
     .want = {.eph_start = "debugger"}},
    {.what = "a pod whose apps are done starts no ephemeral container",
     .policy = RESTART_NEVER,
     .app = {{"job"}},
     .eph = {{"debugger"}},
     .sandboxes = {READY(0)},
     .n_sandboxes = 1,
     .stats = {{"job", EXITED, 0}},
     .want = {.kill_pod = true, .pod_done = true}},
    {.what = "a new sandbox starts no ephemeral container",
     .app = {{"web"}},
     .eph = {{"debugger"}},
     .sandboxes = {DEAD(0)},
     .n_sandboxes = 1,
     .stats = {{"debugger", EXITED, 137}, {"web", EXITED, 137}},
     .want = {.kill_pod = true, .create_sandbox = true, .attempt = 1, .start = "web"}},
};

/* --- building the inputs ------------------------------------------------ */

struct fixture {
        struct pod pod;
        struct container init[MAXC], app[MAXC], eph[MAXC];
        struct probe probe;
        struct runtime_sandbox_status sandboxes[3];
        struct runtime_container_status stats[MAXC];
        char ids[MAXC][32];
        struct runtime_pod_status status;
        struct container_restart_rule rules[MAXC];
        int32_t codes[MAXC];
};

static void build(const struct tcase *tc, struct fixture *f)
{
        memset(f, 0, sizeof(*f));
        f->pod.name = "web";
        f->pod.namespace = "default";
        f->pod.uid = "uid-1";
        f->pod.restart_policy = tc->policy;
        f->pod.host_network = tc->host_network;
        f->pod.deletion_timestamp = tc->deleting ? "2026-01-01T00:00:00Z" : NULL;
        for (size_t i = 0; i < MAXC && tc->init[i].name; i++) {
                f->init[i].name = (char *)tc->init[i].name;
                f->init[i].restart_policy =
                    tc->init[i].sidecar ? "Always" : (char *)tc->init[i].policy;
                f->init[i].startup_probe = tc->init[i].startup_probe ? &f->probe : NULL;
                f->init[i].hash = tc->init[i].hash ? tc->init[i].hash : 1;
                f->pod.n_init_containers = i + 1;
        }
        for (size_t i = 0; i < MAXC && tc->app[i].name; i++) {
                f->app[i].name = (char *)tc->app[i].name;
                f->app[i].hash = tc->app[i].hash ? tc->app[i].hash : 1;
                f->app[i].restart_policy = (char *)tc->app[i].policy;
                if (tc->app[i].restart_on != 0) {
                        f->codes[i] = tc->app[i].restart_on;
                        f->rules[i] = (struct container_restart_rule){
                            .exit_codes_in = true, .exit_codes = &f->codes[i], .n_exit_codes = 1};
                        f->app[i].restart_rules = &f->rules[i];
                        f->app[i].n_restart_rules = 1;
                }
                f->pod.n_containers = i + 1;
        }
        for (size_t i = 0; i < MAXC && tc->eph[i].name; i++) {
                f->eph[i].name = (char *)tc->eph[i].name;
                f->eph[i].hash = tc->eph[i].hash ? tc->eph[i].hash : 1;
                f->pod.n_ephemeral_containers = i + 1;
        }
        f->pod.init_containers = f->init;
        f->pod.containers = f->app;
        f->pod.ephemeral_containers = f->eph;

        for (size_t i = 0; i < tc->n_sandboxes; i++) {
                f->sandboxes[i].id = i == 0 ? "sb-new" : "sb-old";
                f->sandboxes[i].state =
                    tc->sandboxes[i].ready ? SANDBOX_STATE_READY : SANDBOX_STATE_NOTREADY;
                f->sandboxes[i].attempt = tc->sandboxes[i].attempt;
                f->sandboxes[i].ip = (char *)tc->sandboxes[i].ip;
                f->sandboxes[i].host_network = tc->sandboxes[i].host_network;
        }
        f->status.sandboxes = f->sandboxes;
        f->status.n_sandboxes = tc->n_sandboxes;
        for (size_t i = 0; i < MAXC && tc->stats[i].name; i++) {
                const struct stat_c *s = &tc->stats[i];
                struct runtime_container_status *st = &f->stats[i];
                snprintf(f->ids[i], sizeof(f->ids[i]), "%s", s->id ? s->id : s->name);
                st->id = f->ids[i];
                st->name = (char *)s->name;
                st->state = s->state;
                st->exit_code = s->exit_code;
                st->sandbox_id = "sb-new";
                st->hash = s->hash ? s->hash : 1;
                f->status.n_containers = i + 1;
        }
        f->status.containers = f->stats;
        f->status.uid = "uid-1";
}

/* "a,b" from indexes into a container array */
static void names_of(const struct container *cs, const int *idx, size_t n, char *out, size_t len)
{
        out[0] = '\0';
        for (size_t i = 0; i < n; i++) {
                size_t used = strlen(out);
                snprintf(out + used, len - used, "%s%s", i ? "," : "", cs[idx[i]].name);
        }
}

/* One line that says what the actions are, so that a failing case prints
 * what it wanted and what it got. */
static void describe(bool kill_pod, bool create, bool done, uint32_t attempt, const char *init,
                     const char *start, const char *kill, const char *eph, char *out, size_t len)
{
        snprintf(out, len,
                 "kill_pod=%d create_sandbox=%d pod_done=%d attempt=%u init=[%s] start=[%s] "
                 "kill=[%s] ephemeral=[%s]",
                 kill_pod, create, done, attempt, init ? init : "", start ? start : "",
                 kill ? kill : "", eph ? eph : "");
}

/* Returns whether the case passed (printing the difference if not). */
static bool check_case(const struct tcase *tc)
{
        struct fixture f;
        build(tc, &f);
        struct pod_actions a;
        const char *const *liveness = tc->liveness_failed[0] ? tc->liveness_failed : NULL;
        struct probe_verdicts v = {
            .liveness_failed = liveness,
            .startup_failed = tc->startup_failed[0] ? tc->startup_failed : NULL,
            .started = tc->started[0] ? tc->started : NULL,
        };
        kuberuntime_compute_pod_actions(&f.pod, &f.status, &v, NULL, &a);

        char init[128], start[128], eph[128], kill[128] = "", got[1024], want[1024];
        names_of(f.init, a.init_containers_to_start, a.n_init_containers_to_start, init,
                 sizeof(init));
        names_of(f.app, a.containers_to_start, a.n_containers_to_start, start, sizeof(start));
        names_of(f.eph, a.ephemeral_containers_to_start, a.n_ephemeral_containers_to_start, eph,
                 sizeof(eph));
        bool ok = true;
        for (size_t i = 0; i < a.n_containers_to_kill; i++) {
                size_t used = strlen(kill);
                snprintf(kill + used, sizeof(kill) - used, "%s%s", i ? "," : "",
                         a.containers_to_kill[i].name);
                ok &= a.containers_to_kill[i].container_id != NULL &&
                      a.containers_to_kill[i].reason != NULL;
        }
        describe(a.kill_pod, a.create_sandbox, a.pod_done, a.attempt, init, start, kill, eph, got,
                 sizeof(got));
        describe(tc->want.kill_pod, tc->want.create_sandbox, tc->want.pod_done, tc->want.attempt,
                 tc->want.init_start, tc->want.start, tc->want.kill, tc->want.eph_start, want,
                 sizeof(want));
        ok &= strcmp(got, want) == 0;
        /* next_init_container is the first init container to start */
        ok &= a.next_init_container ==
              (a.n_init_containers_to_start ? a.init_containers_to_start[0] : -1);
        /* the sandbox to use: the newest one unless a new one is created */
        if (!a.create_sandbox && !a.pod_done && tc->n_sandboxes > 0)
                ok &= a.sandbox_id != NULL && strcmp(a.sandbox_id, "sb-new") == 0;
        if (!ok)
                print_error("case \"%s\"\n  want %s\n  got  %s\n", tc->what, want, got);
        pod_actions_clear(&a);
        return ok;
}

static void test_table(void **state)
{
        (void)state;
        size_t failed = 0;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                failed += !check_case(&cases[i]);
        assert_int_equal(failed, 0);
}

/* The killed instance is the one named by the status, with a reason. */
static void test_kill_names_the_instance(void **state)
{
        (void)state;
        struct fixture f;
        build(&(struct tcase){.app = {{"web"}},
                              .sandboxes = {READY(0)},
                              .n_sandboxes = 1,
                              .stats = {{"web", RUN, .id = "new"}, {"web", RUN, .id = "old"}}},
              &f);
        struct pod_actions a;
        kuberuntime_compute_pod_actions(&f.pod, &f.status, NULL, NULL, &a);
        assert_int_equal(a.n_containers_to_kill, 1);
        assert_string_equal(a.containers_to_kill[0].container_id, "old");
        assert_string_equal(a.containers_to_kill[0].reason, KILL_REASON_STALE);
        pod_actions_clear(&a);

        build(&(struct tcase){.app = {{"web", .hash = 5}},
                              .sandboxes = {READY(0)},
                              .n_sandboxes = 1,
                              .stats = {{"web", RUN}}},
              &f);
        kuberuntime_compute_pod_actions(&f.pod, &f.status, NULL, NULL, &a);
        assert_int_equal(a.n_containers_to_kill, 1);
        assert_string_equal(a.containers_to_kill[0].reason, KILL_REASON_HASH_CHANGED);
        pod_actions_clear(&a);

        /* liveness and startup failures are told apart (each probe's
         * terminationGracePeriodSeconds applies to its own kill) */
        build(&(struct tcase){.init = {{"proxy", true}},
                              .app = {{"web"}, {"db"}},
                              .sandboxes = {READY(0)},
                              .n_sandboxes = 1,
                              .stats = {{"web", RUN}, {"db", RUN}, {"proxy", RUN}}},
              &f);
        static const char *const live[] = {"db", NULL}, *const startup[] = {"web", "proxy", NULL};
        kuberuntime_compute_pod_actions(
            &f.pod, &f.status,
            &(struct probe_verdicts){.liveness_failed = live, .startup_failed = startup}, NULL, &a);
        assert_int_equal(a.n_containers_to_kill, 3);
        for (size_t i = 0; i < a.n_containers_to_kill; i++)
                assert_string_equal(a.containers_to_kill[i].reason,
                                    strcmp(a.containers_to_kill[i].name, "db") == 0
                                        ? KILL_REASON_LIVENESS
                                        : KILL_REASON_STARTUP);
        assert_int_equal(a.n_containers_to_start, 2);
        assert_int_equal(a.n_init_containers_to_start, 1);
        pod_actions_clear(&a);
}

/* No status at all (NULL) is a fresh pod. */
static void test_null_status(void **state)
{
        (void)state;
        struct fixture f;
        build(&(struct tcase){.app = {{"web"}}}, &f);
        struct pod_actions a;
        kuberuntime_compute_pod_actions(&f.pod, NULL, NULL, NULL, &a);
        assert_true(a.create_sandbox);
        assert_false(a.kill_pod);
        assert_int_equal(a.n_containers_to_start, 1);
        pod_actions_clear(&a);
}

/* Guaranteed-style resources: request = limit, cpu in millis, memory in Mi. */
static void set_resources(struct container *c, int64_t cpu, int64_t mem_mi)
{
        struct resource_list l = {
            .has_cpu = true, .has_memory = true, .cpu_milli = cpu, .memory = mem_mi << 20};
        c->resources = (struct resource_requirements){.requests = l, .limits = l};
}

/* The names of the resizes in the order of one resource's calls. */
static void resize_order(const struct pod_actions *a, const size_t *idx, size_t n, char *out,
                         size_t len)
{
        out[0] = '\0';
        for (size_t i = 0; i < n; i++) {
                size_t used = strlen(out);
                snprintf(out + used, len - used, "%s%s", i ? "," : "", a->resizes[idx[i]].c->name);
        }
}

/* upstream computePodResizeAction: running containers whose actuated
 * resources differ from the allocated ones are updated in place, each
 * resource's decreases first; a RestartContainer policy restarts instead;
 * static pods, stopped containers and an unknown actuated state are left. */
static void test_resize(void **state)
{
        (void)state;
        struct fixture f;
        const struct tcase tc = {
            .init = {{"proxy", true}, {"setup"}},
            .app = {{"c1"}, {"c2"}, {"c3"}},
            .sandboxes = {READY(0)},
            .n_sandboxes = 1,
            .stats = {{"c1", RUN}, {"c2", RUN}, {"c3", RUN}, {"proxy", RUN}, {"setup", EXITED}}};
        build(&tc, &f);
        f.pod.source = POD_SOURCE_API;
        /* upstream's "net decrease" spec: c1 20 -> 25, c2 22 -> 17, c3 24 -> 19 */
        set_resources(&f.app[0], 25, 25);
        set_resources(&f.app[1], 17, 17);
        set_resources(&f.app[2], 19, 19);
        set_resources(&f.init[0], 10, 10); /* the sidecar: cpu up, memory kept */
        json_t *actuated =
            json_pack("{s:{s:{s:s,s:s},s:{s:s,s:s}}, s:{s:{s:s,s:s},s:{s:s,s:s}},"
                      " s:{s:{s:s,s:s},s:{s:s,s:s}}, s:{s:{s:s,s:s},s:{s:s,s:s}}}",
                      "c1", "limits", "cpu", "20m", "memory", "20Mi", "requests", "cpu", "20m",
                      "memory", "20Mi", "c2", "limits", "cpu", "22m", "memory", "22Mi", "requests",
                      "cpu", "22m", "memory", "22Mi", "c3", "limits", "cpu", "24m", "memory",
                      "24Mi", "requests", "cpu", "24m", "memory", "24Mi", "proxy", "limits", "cpu",
                      "5m", "memory", "10Mi", "requests", "cpu", "5m", "memory", "10Mi");
        struct pod_actions a;
        kuberuntime_compute_pod_actions(&f.pod, &f.status, NULL, actuated, &a);
        assert_int_equal(a.n_containers_to_kill, 0);
        assert_int_equal(a.n_containers_to_start, 0);
        assert_int_equal(a.n_resizes, 4);
        assert_false(a.update_pod_resources);
        char order[128];
        resize_order(&a, a.resize_memory, a.n_resize_memory, order, sizeof(order));
        assert_string_equal(order, "c3,c2,c1");
        resize_order(&a, a.resize_cpu, a.n_resize_cpu, order, sizeof(order));
        assert_string_equal(order, "c3,c2,proxy,c1");
        for (size_t i = 0; i < a.n_resizes; i++) {
                const struct container_resize *r = &a.resizes[i];
                /* the running instance's ID (the fixture's IDs are the names) */
                assert_string_equal(r->container_id, r->c->name);
                assert_int_equal(r->desired.cpu_limit, r->c->resources.limits.cpu_milli);
                assert_int_equal(r->desired.memory_request, r->c->resources.requests.memory);
        }
        /* the sidecar comes first (init containers are looked at first) */
        assert_string_equal(a.resizes[0].c->name, "proxy");
        assert_int_equal(a.resizes[0].current.cpu_request, 5);
        assert_int_equal(a.resizes[1].current.cpu_request, 20);
        assert_int_equal(a.resizes[1].current.memory_limit, 20 << 20);
        pod_actions_clear(&a);

        /* RestartContainer for memory: c2 restarts with its new resources */
        f.app[1].resize_memory = RESIZE_RESTART_CONTAINER;
        kuberuntime_compute_pod_actions(&f.pod, &f.status, NULL, actuated, &a);
        assert_int_equal(a.n_containers_to_kill, 1);
        assert_string_equal(a.containers_to_kill[0].name, "c2");
        assert_string_equal(a.containers_to_kill[0].reason, KILL_REASON_RESIZE);
        assert_int_equal(a.n_containers_to_start, 1);
        assert_int_equal(a.containers_to_start[0], 1);
        assert_true(a.update_pod_resources);
        assert_int_equal(a.n_resizes, 3);
        pod_actions_clear(&a);
        /* ... a cpu-only policy does not restart for a memory change */
        f.app[1].resize_memory = RESIZE_NOT_REQUIRED;
        f.app[1].resize_cpu = RESIZE_RESTART_CONTAINER;
        set_resources(&f.app[1], 22, 17);
        kuberuntime_compute_pod_actions(&f.pod, &f.status, NULL, actuated, &a);
        assert_int_equal(a.n_containers_to_kill, 0);
        assert_int_equal(a.n_resizes, 4);
        pod_actions_clear(&a);

        /* a static pod is never resized; nor without an actuated state */
        f.pod.source = POD_SOURCE_FILE;
        kuberuntime_compute_pod_actions(&f.pod, &f.status, NULL, actuated, &a);
        assert_int_equal(a.n_resizes, 0);
        pod_actions_clear(&a);
        f.pod.source = POD_SOURCE_API;
        kuberuntime_compute_pod_actions(&f.pod, &f.status, NULL, NULL, &a);
        assert_int_equal(a.n_resizes, 0);
        pod_actions_clear(&a);

        /* a container that is not running starts with its resources */
        f.stats[0].state = CONTAINER_STATE_EXITED;
        kuberuntime_compute_pod_actions(&f.pod, &f.status, NULL, actuated, &a);
        assert_int_equal(a.n_containers_to_start, 1);
        assert_int_equal(a.n_resizes, 3);
        pod_actions_clear(&a);
        json_decref(actuated);
}

static void test_should_restart(void **state)
{
        (void)state;
        struct pod pod = {0};
        struct container c = {.name = "web"};
        struct runtime_container_status st = {.name = "web", .state = CONTAINER_STATE_EXITED};
        const struct {
                enum restart_policy policy;
                int exit_code;
                bool want;
        } t[] = {
            {RESTART_ALWAYS, 0, true},      {RESTART_ALWAYS, 1, true},
            {RESTART_ON_FAILURE, 0, false}, {RESTART_ON_FAILURE, 1, true},
            {RESTART_NEVER, 0, false},      {RESTART_NEVER, 1, false},
        };
        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
                pod.restart_policy = t[i].policy;
                st.exit_code = t[i].exit_code;
                assert_int_equal(kuberuntime_should_restart(&pod, &c, &st), t[i].want);
        }
        pod.restart_policy = RESTART_NEVER;
        assert_true(kuberuntime_should_restart(&pod, &c, NULL)); /* never ran */
        st.state = CONTAINER_STATE_RUNNING;
        assert_false(kuberuntime_should_restart(&pod, &c, &st));
        pod.restart_policy = RESTART_ALWAYS;
        st.state = CONTAINER_STATE_EXITED;
        pod.deletion_timestamp = "2026-01-01T00:00:00Z";
        assert_false(kuberuntime_should_restart(&pod, &c, &st));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_table),          cmocka_unit_test(test_kill_names_the_instance),
            cmocka_unit_test(test_null_status),    cmocka_unit_test(test_resize),
            cmocka_unit_test(test_should_restart),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
