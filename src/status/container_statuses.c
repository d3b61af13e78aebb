/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Container statuses as upstream convertToAPIContainerStatuses builds them
 * (pkg/kubelet/kubelet_pods.go), and the probe manager's UpdatePodStatus
 * (pkg/kubelet/prober/prober_manager.go) for "started" and "ready".
 */
#include "status/generate_internal.h"
#include "allocation/allocation.h"
#include "api/decode.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* upstream kubecontainer.ContainerReasonStatusUnknown */
#define REASON_STATUS_UNKNOWN "ContainerStatusUnknown"

static json_t *empty_object(void)
{
        return json_object();
}

static json_t *waiting_state(const char *reason, const char *message)
{
        json_t *w = json_object();
        if (reason != NULL && reason[0] != '\0')
                json_object_set_new(w, "reason", json_string(reason));
        if (message != NULL && message[0] != '\0')
                json_object_set_new(w, "message", json_string(message));
        return json_pack("{s:o}", "waiting", w);
}

static const char *spec_key(enum status_list list)
{
        return list == STATUS_INIT        ? "initContainers"
               : list == STATUS_EPHEMERAL ? "ephemeralContainers"
                                          : "containers";
}

static const char *status_key(enum status_list list)
{
        return list == STATUS_INIT        ? "initContainerStatuses"
               : list == STATUS_EPHEMERAL ? "ephemeralContainerStatuses"
                                          : "containerStatuses";
}

/* The raw JSON of a container of the pod (spec.containers,
 * spec.initContainers or spec.ephemeralContainers), for the fields struct
 * container does not keep verbatim (resources as written). Borrowed, may be
 * NULL. */
static json_t *raw_container(const struct pod *pod, const char *name, enum status_list list)
{
        json_t *spec = json_object_get(pod->raw, "spec");
        return status_find_named(json_object_get(spec, spec_key(list)), "name", name);
}

/* v1.VolumeMountStatus list (RecursiveReadOnlyMounts is GA): readOnly
 * mounts report recursiveReadOnly "Disabled": ckubelet never asks the
 * runtime for recursive read-only mounts (IfPossible resolves to Disabled,
 * Enabled is refused, kuberuntime container_mounts.c). */
static json_t *volume_mount_statuses(const struct container *c)
{
        if (c->n_volume_mounts == 0)
                return NULL;
        json_t *arr = json_array();
        for (size_t i = 0; i < c->n_volume_mounts; i++) {
                const struct volume_mount *m = &c->volume_mounts[i];
                json_t *v = json_pack("{s:s, s:s}", "name", m->name ? m->name : "", "mountPath",
                                      m->mount_path ? m->mount_path : "");
                if (m->read_only) {
                        json_object_set_new(v, "readOnly", json_true());
                        json_object_set_new(v, "recursiveReadOnly", json_string("Disabled"));
                }
                json_array_append_new(arr, v);
        }
        return arr;
}

/* A fresh status in the default waiting state. */
static json_t *default_status(const struct container *c, const char *default_reason)
{
        json_t *st = json_object();
        json_object_set_new(st, "name", json_string(c->name ? c->name : ""));
        json_object_set_new(st, "state", waiting_state(default_reason, NULL));
        json_object_set_new(st, "lastState", empty_object());
        json_object_set_new(st, "ready", json_false());
        json_object_set_new(st, "restartCount", json_integer(0));
        json_object_set_new(st, "image", json_string(c->image ? c->image : ""));
        json_object_set_new(st, "imageID", json_string(""));
        json_t *vm = volume_mount_statuses(c);
        if (vm != NULL)
                json_object_set_new(st, "volumeMounts", vm);
        return st;
}

/* upstream cm.MinMilliCPULimit, cm.MinShares */
#define STATUS_MIN_MILLI_CPU_LIMIT 10
#define STATUS_MIN_SHARES 2

/* The values the runtime reports for a container's resources (upstream
 * toKubeContainerResources and toKubeContainerStatus): its cpu limit
 * quota * 1000 / period, its cpu request ceil(shares * 1000 / 1024), its
 * memory limit, from CRI ContainerStatus.resources; the memory request
 * (which no cgroup holds), and everything when the runtime reports
 * nothing, from the actuated state.  A value not reported is NULL. */
struct reported {
        json_t *cpu_limit, *cpu_request, *memory_limit, *memory_request;
};

static json_t *quantity(int64_t v, bool milli)
{
        char *text = api_format_quantity(v, milli);
        json_t *j = json_string(text);
        free(text);
        return j;
}

static void reported_from(const struct runtime_container_status *rc, const json_t *actuated,
                          struct reported *r)
{
        struct alloc_resources a;
        alloc_resources_from_json(actuated, &a);
        *r = (struct reported){0};
        const struct runtime_container_resources *cri = &rc->resources;
        if (cri->reported) {
                if (cri->cpu_period > 0 && cri->cpu_quota != -1) {
                        int64_t milli = cri->cpu_quota * 1000 / cri->cpu_period;
                        if (milli > 0)
                                r->cpu_limit = quantity(milli, true);
                }
                if (cri->cpu_shares >= STATUS_MIN_SHARES)
                        r->cpu_request = quantity((cri->cpu_shares * 1000 + 1023) / 1024, true);
                if (cri->memory_limit > 0)
                        r->memory_limit = quantity(cri->memory_limit, false);
        }
        if (actuated == NULL)
                return;
        if (r->cpu_limit == NULL && r->cpu_request == NULL && r->memory_limit == NULL) {
                /* nothing from the runtime: what it was given */
                r->cpu_limit = quantity(a.cpu_limit, true);
                r->cpu_request = quantity(a.cpu_request, true);
                r->memory_limit = quantity(a.memory_limit, false);
                r->memory_request = quantity(a.memory_request, false);
        } else if (a.memory_request != 0) {
                r->memory_request = quantity(a.memory_request, false);
        }
}

static void reported_release(struct reported *r)
{
        json_decref(r->cpu_limit);
        json_decref(r->cpu_request);
        json_decref(r->memory_limit);
        json_decref(r->memory_request);
}

static int64_t milli_value(const json_t *q)
{
        const char *s = json_string_value(q);
        int64_t v = 0;
        ck_error_t e = NULL;
        if (s != NULL && api_parse_quantity(s, true, &v, &e) < 0)
                v = 0;
        ck_error_release(&e);
        return v;
}

/* Sets list[key] to the reported value; min_milli (cpu only): when both
 * the reported and the allocated values are at or below it, the allocated
 * one stays (upstream's MinShares / MinMilliCPULimit rule: 1m and 2m both
 * give 2 shares). */
static void report(json_t *list, const char *key, json_t *value, int64_t min_milli)
{
        if (value == NULL)
                return;
        if (min_milli > 0 && milli_value(json_object_get(list, key)) <= min_milli &&
            milli_value(value) <= min_milli)
                return;
        json_object_set(list, key, value);
}

/* resources and allocatedResources (upstream convertContainerStatusResources):
 * the allocated resources (those of pod, the allocated pod) for a container
 * that is not running; for a running one, the allocated ones with what its
 * runtime reports in their place. */
static void set_resources(json_t *st, const struct status_input *in,
                          const struct runtime_container_status *rc, const char *name,
                          enum status_list list, bool running)
{
        json_t *raw = raw_container(in->pod, name, list);
        json_t *res = json_object_get(raw, "resources");
        json_t *out = json_object();
        json_t *limits = json_object_get(res, "limits");
        json_t *requests = json_object_get(res, "requests");
        if (json_is_object(limits))
                json_object_set_new(out, "limits", json_deep_copy(limits));
        if (json_is_object(requests))
                json_object_set_new(out, "requests", json_deep_copy(requests));
        const json_t *actuated = json_object_get(in->actuated, name);
        if (running && list != STATUS_EPHEMERAL) {
                struct reported r;
                reported_from(rc, actuated, &r);
                json_t *l = json_object_get(out, "limits");
                if (l != NULL) {
                        report(l, "cpu", r.cpu_limit, STATUS_MIN_MILLI_CPU_LIMIT);
                        report(l, "memory", r.memory_limit, 0);
                }
                json_t *q = json_object_get(out, "requests");
                if (q != NULL) {
                        report(q, "cpu", r.cpu_request, STATUS_MIN_SHARES);
                        report(q, "memory", r.memory_request, 0);
                }
                reported_release(&r);
        }
        /* empty lists are left out, as Go's omitempty */
        if (json_object_size(json_object_get(out, "limits")) == 0)
                json_object_del(out, "limits");
        if (json_object_size(json_object_get(out, "requests")) == 0)
                json_object_del(out, "requests");
        json_object_set_new(st, "resources", out);
        if (json_object_size(requests) > 0)
                json_object_set_new(st, "allocatedResources", json_deep_copy(requests));
}

/* upstream convertContainerStatus: one runtime container to a status. */
static json_t *convert_runtime(const struct status_input *in, const struct container *spec,
                               const struct runtime_container_status *rc, const json_t *old,
                               enum status_list list)
{
        char *cid = xasprintf("%s://%s", in->runtime_name ? in->runtime_name : "containerd",
                              rc->id ? rc->id : "");
        const char *image = rc->image ? rc->image : spec->image;
        json_t *st = json_object();
        json_object_set_new(st, "name", json_string(spec->name));
        json_object_set_new(st, "lastState", empty_object());
        json_object_set_new(st, "ready", json_false());
        json_object_set_new(st, "restartCount", json_integer(rc->restart_count));
        json_object_set_new(st, "image", json_string(image ? image : ""));
        json_object_set_new(st, "imageID", json_string(rc->image_ref ? rc->image_ref : ""));
        json_object_set_new(st, "containerID", json_string(cid));
        json_t *old_vm = json_object_get(old, "volumeMounts");
        if (old_vm != NULL)
                json_object_set_new(st, "volumeMounts", json_deep_copy(old_vm));

        json_t *state;
        switch (rc->state) {
        case CONTAINER_STATE_RUNNING:
                state = json_pack("{s:{s:o}}", "running", "startedAt", status_time(rc->started_at));
                break;
        case CONTAINER_STATE_CREATED:
                /* created but not running: "waiting to be running" */
                state = waiting_state(NULL, NULL);
                break;
        case CONTAINER_STATE_EXITED: {
                json_t *t = json_object();
                json_object_set_new(t, "exitCode", json_integer(rc->exit_code));
                if (rc->reason != NULL && rc->reason[0] != '\0')
                        json_object_set_new(t, "reason", json_string(rc->reason));
                if (rc->message != NULL && rc->message[0] != '\0')
                        json_object_set_new(t, "message", json_string(rc->message));
                json_object_set_new(t, "startedAt", status_time(rc->started_at));
                json_object_set_new(t, "finishedAt", status_time(rc->finished_at));
                json_object_set_new(t, "containerID", json_string(cid));
                state = json_pack("{s:o}", "terminated", t);
                break;
        }
        default:
                if (rc->state == CONTAINER_STATE_UNKNOWN && status_cs_state(old, "running")) {
                        /* it ran and is gone: terminated, not "never ran" */
                        state = json_pack(
                            "{s:{s:i, s:s, s:s, s:n, s:n}}", "terminated", "exitCode", 137,
                            "reason", REASON_STATUS_UNKNOWN, "message",
                            "The container could not be located when the pod was terminated",
                            "startedAt", "finishedAt");
                        json_object_set_new(st, "restartCount",
                                            json_integer(status_get_int(old, "restartCount") + 1));
                } else {
                        state = waiting_state(NULL, NULL);
                }
                break;
        }
        json_object_set_new(st, "state", state);

        /* ChangeContainerStatusOnKubeletRestart is off: a running container
         * keeps the started flag it had. */
        if (rc->state == CONTAINER_STATE_RUNNING && json_object_get(old, "started") != NULL)
                json_object_set(st, "started", json_object_get(old, "started"));

        set_resources(st, in, rc, spec->name, list, rc->state == CONTAINER_STATE_RUNNING);
        free(cid);
        return st;
}

static bool runtime_has(const struct status_runtime_view *rt, const char *name)
{
        return status_runtime_latest(rt, name) != NULL;
}

/* upstream kubecontainer.ShouldContainerBeRestarted */
static bool should_be_restarted(const struct container *c, const struct pod *pod,
                                const struct runtime_container_status *latest)
{
        if (pod->deletion_timestamp != NULL)
                return false;
        if (latest == NULL)
                return true;
        if (latest->state == CONTAINER_STATE_RUNNING)
                return false;
        if (latest->state == CONTAINER_STATE_UNKNOWN || latest->state == CONTAINER_STATE_CREATED)
                return true;
        return container_should_restart(c, pod, latest->exit_code);
}

static const struct kuberuntime_waiting *sync_waiting(const struct kuberuntime_sync_result *r,
                                                      const char *name)
{
        if (r == NULL)
                return NULL;
        for (size_t i = 0; i < r->n_waiting; i++)
                if (r->waiting[i].container_name != NULL &&
                    strcmp(r->waiting[i].container_name, name) == 0)
                        return &r->waiting[i];
        return NULL;
}

static int cmp_status_name(const void *a, const void *b)
{
        const char *na = status_get_str(*(json_t *const *)a, "name");
        const char *nb = status_get_str(*(json_t *const *)b, "name");
        return strcmp(na ? na : "", nb ? nb : "");
}

json_t *status_container_statuses(const struct status_input *in,
                                  const struct status_runtime_view *rt, enum status_list list)
{
        const struct pod *pod = in->pod;
        bool is_init = list == STATUS_INIT;
        const struct container *cs = is_init                    ? pod->init_containers
                                     : list == STATUS_EPHEMERAL ? pod->ephemeral_containers
                                                                : pod->containers;
        size_t n = is_init                    ? pod->n_init_containers
                   : list == STATUS_EPHEMERAL ? pod->n_ephemeral_containers
                                              : pod->n_containers;
        bool has_init = pod->n_init_containers > 0;
        const char *default_reason = has_init ? "PodInitializing" : "ContainerCreating";
        json_t *old_list = json_object_get(in->old_status, status_key(list));
        json_t **st = xcalloc(n ? n : 1, sizeof(*st));
        int *seen = xcalloc(n ? n : 1, sizeof(*seen));

        /* Defaults, with what the old status says about restarts. */
        for (size_t i = 0; i < n; i++) {
                json_t *old = status_find_named(old_list, "name", cs[i].name);
                if (old != NULL && status_cs_state(old, "terminated") != NULL) {
                        st[i] = json_deep_copy(old);
                        continue;
                }
                st[i] = default_status(&cs[i], default_reason);
                if (old != NULL) {
                        json_object_set_new(st[i], "restartCount",
                                            json_integer(status_get_int(old, "restartCount")));
                        json_t *last = json_object_get(old, "lastState");
                        json_object_set_new(st[i], "lastState",
                                            last ? json_deep_copy(last) : empty_object());
                }
        }

        /* A container that was running and vanished from the runtime ran
         * and stopped: say so, so that the pod does not look Pending. */
        for (size_t i = 0; i < n; i++) {
                if (runtime_has(rt, cs[i].name))
                        continue;
                json_t *old = status_find_named(old_list, "name", cs[i].name);
                if (old == NULL || status_cs_state(old, "terminated") != NULL ||
                    status_cs_state(old, "running") == NULL)
                        continue;
                json_t *w = status_cs_state(st[i], "waiting");
                const char *reason = status_get_str(w, "reason");
                if (w == NULL || reason == NULL || strcmp(reason, default_reason) != 0)
                        continue;
                if (status_cs_last(st[i], "terminated") != NULL)
                        continue;
                json_object_set_new(
                    st[i], "lastState",
                    json_pack("{s:{s:i, s:s, s:s, s:n, s:n}}", "terminated", "exitCode", 137,
                              "reason", REASON_STATUS_UNKNOWN, "message",
                              "The container could not be located when the pod was deleted.  "
                              "The container used to be Running",
                              "startedAt", "finishedAt"));
                if (pod->deletion_timestamp == NULL)
                        json_object_set_new(
                            st[i], "restartCount",
                            json_integer(status_get_int(st[i], "restartCount") + 1));
        }

        /* The runtime's view: the newest instance is the state, the one
         * before it the last state. */
        for (size_t k = 0; k < rt->n; k++) {
                const struct runtime_container_status *rc = rt->items[k];
                size_t i;
                for (i = 0; i < n; i++)
                        if (rc->name != NULL && strcmp(cs[i].name, rc->name) == 0)
                                break;
                if (i == n || seen[i] >= 2)
                        continue;
                json_t *old = status_find_named(old_list, "name", cs[i].name);
                json_t *conv = convert_runtime(in, &cs[i], rc, old, list);
                if (seen[i] == 0) {
                        json_decref(st[i]);
                        st[i] = conv;
                } else {
                        json_object_set(st[i], "lastState", json_object_get(conv, "state"));
                        json_decref(conv);
                }
                seen[i]++;
        }

        /* Containers that failed to start: waiting with the sync's reason. */
        for (size_t i = 0; i < n; i++) {
                const struct runtime_container_status *latest =
                    status_runtime_latest(rt, cs[i].name);
                if (is_init && latest != NULL && latest->state == CONTAINER_STATE_EXITED &&
                    latest->exit_code == 0)
                        continue;
                if (!should_be_restarted(&cs[i], pod, latest))
                        continue;
                const struct kuberuntime_waiting *w = sync_waiting(in->sync, cs[i].name);
                if (w == NULL)
                        continue;
                if (status_cs_state(st[i], "terminated") != NULL)
                        json_object_set(st[i], "lastState", json_object_get(st[i], "state"));
                json_object_set_new(st[i], "state", waiting_state(w->reason, w->message));
        }

        if (!is_init)
                qsort(st, n, sizeof(*st), cmp_status_name);
        json_t *arr = json_array();
        for (size_t i = 0; i < n; i++)
                json_array_append_new(arr, st[i]);
        free(st);
        free(seen);
        return arr;
}

/* upstream prober manager isContainerStarted */
static bool is_started(const struct status_input *in, const struct container *c, const json_t *st)
{
        if (status_cs_state(st, "running") == NULL)
                return false;
        const char *r = status_kv(in->startup, c->name);
        if (r != NULL)
                return strcmp(r, "true") == 0;
        if (status_get_true(st, "started"))
                return true;
        /* a startup probe that has not succeeded yet */
        return c->startup_probe == NULL;
}

/* Readiness of a started container (upstream: the readiness result, else
 * ready unless a readiness probe exists). */
static bool is_ready(const struct status_input *in, const struct container *c, const json_t *st)
{
        if (status_cs_state(st, "running") == NULL)
                return false;
        const char *r = status_kv(in->readiness, c->name);
        if (r != NULL)
                return strcmp(r, "true") == 0;
        return c->readiness_probe == NULL;
}

static const struct container *find_spec(const struct container *cs, size_t n, const char *name)
{
        for (size_t i = 0; name != NULL && i < n; i++)
                if (strcmp(cs[i].name, name) == 0)
                        return &cs[i];
        return NULL;
}

void status_apply_probes(const struct status_input *in, json_t *app, json_t *init)
{
        const struct pod *pod = in->pod;
        size_t i;
        json_t *st;
        json_array_foreach(app, i, st)
        {
                const struct container *c =
                    find_spec(pod->containers, pod->n_containers, status_get_str(st, "name"));
                if (c == NULL)
                        continue;
                bool started = is_started(in, c, st);
                json_object_set_new(st, "started", json_boolean(started));
                if (!started)
                        continue;
                json_object_set_new(st, "ready", json_boolean(is_ready(in, c, st)));
        }
        json_array_foreach(init, i, st)
        {
                const struct container *c = find_spec(pod->init_containers, pod->n_init_containers,
                                                      status_get_str(st, "name"));
                if (c == NULL)
                        continue;
                bool started = is_started(in, c, st);
                json_object_set_new(st, "started", json_boolean(started));
                if (!container_is_sidecar(c)) {
                        json_t *t = status_cs_state(st, "terminated");
                        if (t != NULL && status_get_int(t, "exitCode") == 0)
                                json_object_set_new(st, "ready", json_true());
                        continue;
                }
                if (!started)
                        continue;
                json_object_set_new(st, "ready", json_boolean(is_ready(in, c, st)));
        }
}
