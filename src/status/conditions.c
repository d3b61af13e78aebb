/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kubelet-owned pod conditions (upstream pkg/kubelet/status/generate.go
 * and the PodScheduled condition of generateAPIPodStatus), with
 * observedGeneration (PodObservedGenerationTracking is GA) and the
 * transition times of the status manager (updateLastTransitionTime).
 */
#include "status/generate_internal.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define REASON_UNKNOWN_CONTAINER_STATUSES "UnknownContainerStatuses"
#define REASON_POD_COMPLETED "PodCompleted"
#define REASON_POD_FAILED "PodFailed"
#define REASON_CONTAINERS_NOT_READY "ContainersNotReady"
#define REASON_CONTAINERS_NOT_INITIALIZED "ContainersNotInitialized"
#define REASON_READINESS_GATES_NOT_READY "ReadinessGatesNotReady"

/* A growable list of names, printed the way Go prints a []string: "[a b]". */
struct names {
        char *buf;
        size_t n;
};

static void names_add(struct names *l, const char *name)
{
        char *next = l->buf ? xasprintf("%s %s", l->buf, name) : xstrdup(name);
        free(l->buf);
        l->buf = next;
        l->n++;
}

static void names_free(struct names *l)
{
        free(l->buf);
        l->buf = NULL;
        l->n = 0;
}

/* Joins "prefix[names]" parts with ", " into *msg. */
static void message_add(char **msg, const char *prefix, const struct names *l)
{
        if (l->n == 0)
                return;
        char *part = xasprintf("%s[%s]", prefix, l->buf);
        char *next = *msg ? xasprintf("%s, %s", *msg, part) : xstrdup(part);
        free(part);
        free(*msg);
        *msg = next;
}

static json_t *condition(const struct pod *pod, const char *type, const char *status,
                         const char *reason, const char *message)
{
        json_t *c = json_object();
        json_object_set_new(c, "type", json_string(type));
        if (pod->generation != 0)
                json_object_set_new(c, "observedGeneration", json_integer(pod->generation));
        json_object_set_new(c, "status", json_string(status));
        json_object_set_new(c, "lastProbeTime", json_null());
        json_object_set_new(c, "lastTransitionTime", json_null());
        if (reason != NULL && reason[0] != '\0')
                json_object_set_new(c, "reason", json_string(reason));
        if (message != NULL && message[0] != '\0')
                json_object_set_new(c, "message", json_string(message));
        return c;
}

static const json_t *find_status(const json_t *app, const json_t *init, const char *name)
{
        json_t *s = status_find_named(app, "name", name);
        return s ? s : status_find_named(init, "name", name);
}

/* upstream GenerateContainersReadyCondition */
static json_t *containers_ready(const struct pod *pod, const json_t *app, const json_t *init,
                                const char *phase)
{
        struct names unknown = {0}, unready = {0};
        for (size_t i = 0; i < pod->n_init_containers; i++) {
                const struct container *c = &pod->init_containers[i];
                if (!container_is_sidecar(c))
                        continue;
                const json_t *st = find_status(app, init, c->name);
                if (st == NULL)
                        names_add(&unknown, c->name);
                else if (!status_get_true(st, "ready"))
                        names_add(&unready, c->name);
        }
        for (size_t i = 0; i < pod->n_containers; i++) {
                const struct container *c = &pod->containers[i];
                const json_t *st = find_status(app, init, c->name);
                if (st == NULL)
                        names_add(&unknown, c->name);
                else if (!status_get_true(st, "ready"))
                        names_add(&unready, c->name);
        }
        json_t *out;
        if ((strcmp(phase, "Succeeded") == 0 && unknown.n == 0) || strcmp(phase, "Failed") == 0) {
                out = condition(
                    pod, "ContainersReady", "False",
                    strcmp(phase, "Failed") == 0 ? REASON_POD_FAILED : REASON_POD_COMPLETED, NULL);
        } else {
                char *msg = NULL;
                message_add(&msg, "containers with unknown status: ", &unknown);
                message_add(&msg, "containers with unready status: ", &unready);
                if (msg != NULL)
                        out = condition(pod, "ContainersReady", "False",
                                        REASON_CONTAINERS_NOT_READY, msg);
                else
                        out = condition(pod, "ContainersReady", "True", NULL, NULL);
                free(msg);
        }
        names_free(&unknown);
        names_free(&unready);
        return out;
}

/* upstream GeneratePodReadyCondition: ContainersReady, then the readiness
 * gates (spec.readinessGates) against the other conditions. */
static json_t *pod_ready(const struct pod *pod, const json_t *conds, const json_t *cr)
{
        if (strcmp(status_get_str(cr, "status"), "True") != 0)
                return condition(pod, "Ready", status_get_str(cr, "status"),
                                 status_get_str(cr, "reason"), status_get_str(cr, "message"));
        json_t *gates = json_object_get(json_object_get(pod->raw, "spec"), "readinessGates");
        char *msg = NULL;
        size_t i;
        json_t *g;
        json_array_foreach(gates, i, g)
        {
                const char *type = status_get_str(g, "conditionType");
                if (type == NULL)
                        continue;
                const json_t *c = status_find_named(conds, "type", type);
                char *part = NULL;
                if (c == NULL)
                        part = xasprintf("corresponding condition of pod readiness gate \"%s\" "
                                         "does not exist.",
                                         type);
                else if (strcmp(status_get_str(c, "status") ? status_get_str(c, "status") : "",
                                "True") != 0)
                        part = xasprintf(
                            "the status of pod readiness gate \"%s\" is not "
                            "\"True\", but %s",
                            type, status_get_str(c, "status") ? status_get_str(c, "status") : "");
                if (part == NULL)
                        continue;
                char *next = msg ? xasprintf("%s, %s", msg, part) : xstrdup(part);
                free(part);
                free(msg);
                msg = next;
        }
        json_t *out;
        if (msg != NULL)
                out = condition(pod, "Ready", "False", REASON_READINESS_GATES_NOT_READY, msg);
        else
                out = condition(pod, "Ready", "True", NULL, NULL);
        free(msg);
        return out;
}

/* upstream HasAnyRegularContainerStarted over the API statuses */
static bool any_regular_started(const struct pod *pod, const json_t *app)
{
        for (size_t i = 0; i < pod->n_containers; i++) {
                const json_t *st = status_find_named(app, "name", pod->containers[i].name);
                if (status_cs_state(st, "running") != NULL ||
                    status_cs_state(st, "terminated") != NULL)
                        return true;
        }
        return false;
}

/* upstream GeneratePodInitializedCondition */
static json_t *initialized(const struct pod *pod, const json_t *app, const json_t *init,
                           const char *phase)
{
        struct names unknown = {0}, incomplete = {0};
        for (size_t i = 0; i < pod->n_init_containers; i++) {
                const struct container *c = &pod->init_containers[i];
                const json_t *st = find_status(app, init, c->name);
                if (st == NULL) {
                        names_add(&unknown, c->name);
                        continue;
                }
                bool done = container_is_sidecar(c) ? status_get_true(st, "started")
                                                    : status_get_true(st, "ready");
                if (!done)
                        names_add(&incomplete, c->name);
        }
        json_t *out;
        if (strcmp(phase, "Succeeded") == 0 && unknown.n == 0) {
                out = condition(pod, "Initialized", "True", REASON_POD_COMPLETED, NULL);
        } else if (any_regular_started(pod, app)) {
                /* initialized before; sidecars may be restarting */
                out = condition(pod, "Initialized", "True", NULL, NULL);
        } else {
                char *msg = NULL;
                message_add(&msg, "containers with unknown status: ", &unknown);
                message_add(&msg, "containers with incomplete status: ", &incomplete);
                if (msg != NULL)
                        out = condition(pod, "Initialized", "False",
                                        REASON_CONTAINERS_NOT_INITIALIZED, msg);
                else
                        out = condition(pod, "Initialized", "True", NULL, NULL);
                free(msg);
        }
        names_free(&unknown);
        names_free(&incomplete);
        return out;
}

/* upstream runtimeutil.PodSandboxChanged, the "new sandbox needed" part */
static bool new_sandbox_needed(const struct pod *pod, const struct runtime_pod_status *rt)
{
        if (rt == NULL || rt->n_sandboxes == 0)
                return true;
        size_t ready = 0;
        for (size_t i = 0; i < rt->n_sandboxes; i++)
                if (rt->sandboxes[i].state == SANDBOX_STATE_READY)
                        ready++;
        const struct runtime_sandbox_status *sb = &rt->sandboxes[0];
        if (ready > 1 || sb->state != SANDBOX_STATE_READY)
                return true;
        if (sb->host_network != pod->host_network)
                return true; /* network namespace changed */
        if (!pod->host_network && (sb->ip == NULL || sb->ip[0] == '\0'))
                return true;
        return false;
}

void status_append_conditions(const struct status_input *in, json_t *conds, const json_t *app,
                              const json_t *init, const char *phase)
{
        const struct pod *pod = in->pod;
        json_array_append_new(
            conds, condition(pod, "PodReadyToStartContainers",
                             new_sandbox_needed(pod, in->runtime) ? "False" : "True", NULL, NULL));
        json_array_append_new(conds, initialized(pod, app, init, phase));
        json_t *cr = containers_ready(pod, app, init, phase);
        json_array_append_new(conds, pod_ready(pod, conds, cr));
        json_array_append_new(conds, cr);
        json_array_append_new(conds, condition(pod, "PodScheduled", "True", NULL, NULL));
}

bool status_condition_owned_by_kubelet(const char *type)
{
        static const char *const owned[] = {
            "PodScheduled",
            "Ready",
            "Initialized",
            "ContainersReady",
            "PodResizePending",
            "PodResizeInProgress",
            "PodReadyToStartContainers",
        };
        for (size_t i = 0; type != NULL && i < sizeof(owned) / sizeof(owned[0]); i++)
                if (strcmp(type, owned[i]) == 0)
                        return true;
        return false;
}

void status_set_transition_times(json_t *conds, const json_t *old_status, int64_t now_ns)
{
        json_t *old_conds = json_object_get(old_status, "conditions");
        size_t i;
        json_t *c;
        json_array_foreach(conds, i, c)
        {
                const char *type = status_get_str(c, "type");
                /* conditions owned by others keep the time their owner set;
                 * the resize conditions carry the times they were set with */
                if ((!status_condition_owned_by_kubelet(type) &&
                     strcmp(type ? type : "", "DisruptionTarget") != 0) ||
                    strncmp(type ? type : "", "PodResize", 9) == 0)
                        continue;
                const json_t *old = status_find_named(old_conds, "type", type);
                const char *os = status_get_str(old, "status");
                const char *ns = status_get_str(c, "status");
                json_t *t = json_object_get(old, "lastTransitionTime");
                if (old != NULL && os != NULL && ns != NULL && strcmp(os, ns) == 0 && t != NULL)
                        json_object_set(c, "lastTransitionTime", t);
                else
                        json_object_set_new(c, "lastTransitionTime", status_time(now_ns));
        }
}
