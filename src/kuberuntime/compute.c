/* SPDX-License-Identifier: Apache-2.0 */
/*
 * computePodActions (upstream pkg/kubelet/kuberuntime/kuberuntime_manager.go)
 * and computeInitContainerActions (kuberuntime_container.go): what one sync
 * must do.  Pure functions over the spec and the runtime's status.
 */
#include "kuberuntime/compute.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

static bool str_eq(const char *a, const char *b)
{
        return a != NULL && b != NULL && strcmp(a, b) == 0;
}

static bool is_sidecar(const struct container *c)
{
        return str_eq(c->restart_policy, "Always");
}

/* Latest status by name (the list is newest first), or NULL. */
static const struct runtime_container_status *find_status(const struct runtime_pod_status *s,
                                                          const char *name)
{
        if (s == NULL)
                return NULL;
        for (size_t i = 0; i < s->n_containers; i++)
                if (str_eq(s->containers[i].name, name))
                        return &s->containers[i];
        return NULL;
}

static bool name_in_list(const char *const *list, const char *name)
{
        for (; list != NULL && *list != NULL; list++)
                if (str_eq(*list, name))
                        return true;
        return false;
}

static void push_int(int **v, size_t *n, int x)
{
        *v = xrealloc(*v, (*n + 1) * sizeof(**v));
        (*v)[(*n)++] = x;
}

static void push_kill(struct pod_actions *a, const struct runtime_container_status *st,
                      const char *reason)
{
        for (size_t i = 0; i < a->n_containers_to_kill; i++)
                if (str_eq(a->containers_to_kill[i].container_id, st->id))
                        return;
        a->containers_to_kill = xrealloc(a->containers_to_kill, (a->n_containers_to_kill + 1) *
                                                                    sizeof(*a->containers_to_kill));
        a->containers_to_kill[a->n_containers_to_kill++] =
            (struct container_to_kill){.container_id = st->id, .name = st->name, .reason = reason};
}

bool kuberuntime_should_restart(const struct pod *pod, const struct container *c,
                                const struct runtime_container_status *last)
{
        /* once a pod is being deleted nothing restarts */
        if (pod->deletion_timestamp != NULL)
                return false;
        if (last == NULL)
                return true;
        if (last->state == CONTAINER_STATE_RUNNING)
                return false;
        if (last->state == CONTAINER_STATE_UNKNOWN || last->state == CONTAINER_STATE_CREATED)
                return true;
        /* ContainerRestartRules: its rules, its policy, then the pod's */
        return container_should_restart(c, pod, last->exit_code);
}

/* A policy that is not Never, the container's own if it has one (probe
 * failures and unknown states: no exit code for the rules). */
static bool restarts_without_exit_code(const struct pod *pod, const struct container *c)
{
        if (c->restart_policy != NULL)
                return !str_eq(c->restart_policy, "Never");
        return pod->restart_policy != RESTART_NEVER;
}

static bool container_succeeded(const struct runtime_container_status *st)
{
        return st != NULL && st->state == CONTAINER_STATE_EXITED && st->exit_code == 0;
}

/* upstream isInitContainerFailed */
static bool init_container_failed(const struct runtime_container_status *st)
{
        if (str_eq(st->reason, "OOMKilled"))
                return true;
        if (st->state == CONTAINER_STATE_EXITED && st->exit_code != 0)
                return true;
        return st->state == CONTAINER_STATE_UNKNOWN;
}

/* upstream PodSandboxChanged: whether a new sandbox is needed, its attempt
 * number, and the sandbox to use (or kill). */
static bool sandbox_changed(const struct pod *pod, const struct runtime_pod_status *s,
                            uint32_t *attempt, const char **sandbox_id)
{
        *attempt = 0;
        *sandbox_id = NULL;
        if (s == NULL || s->n_sandboxes == 0)
                return true;
        const struct runtime_sandbox_status *sb = &s->sandboxes[0];
        size_t ready = 0;
        for (size_t i = 0; i < s->n_sandboxes; i++)
                if (s->sandboxes[i].state == SANDBOX_STATE_READY)
                        ready++;
        *attempt = sb->attempt + 1;
        *sandbox_id = sb->id;
        if (ready > 1 || sb->state != SANDBOX_STATE_READY)
                return true;
        if (sb->host_network != pod->host_network) {
                /* the network namespace mode changed */
                *sandbox_id = NULL;
                return true;
        }
        if (!pod->host_network && (sb->ip == NULL || sb->ip[0] == '\0'))
                return true;
        *attempt = sb->attempt;
        return false;
}

static bool any_regular_container_created(const struct pod *pod, const struct runtime_pod_status *s)
{
        for (size_t i = 0; i < pod->n_containers; i++) {
                const struct runtime_container_status *st = find_status(s, pod->containers[i].name);
                if (st != NULL && st->state != CONTAINER_STATE_UNKNOWN)
                        return true;
        }
        return false;
}

/* The actions when the sandbox is (re)created: everything starts over. */
static void compute_fresh_sandbox(const struct pod *pod, const struct runtime_pod_status *s,
                                  struct pod_actions *a)
{
        if (pod->restart_policy == RESTART_NEVER && a->attempt != 0 && s != NULL &&
            s->n_containers != 0) {
                /* never restart: the containers ran, the pod is done */
                a->create_sandbox = false;
                a->pod_done = true;
                return;
        }
        for (size_t i = 0; i < pod->n_containers; i++) {
                const struct container *c = &pod->containers[i];
                /* upstream: OnFailure (the container's own, if it has one)
                 * does not run a succeeded container again */
                bool run_once = c->restart_policy != NULL
                                    ? str_eq(c->restart_policy, "OnFailure")
                                    : pod->restart_policy == RESTART_ON_FAILURE;
                if (run_once && container_succeeded(find_status(s, c->name)))
                        continue;
                push_int(&a->containers_to_start, &a->n_containers_to_start, (int)i);
        }
        if (a->n_containers_to_start == 0 && any_regular_container_created(pod, s)) {
                /* initialisation is done and nothing is left to run */
                a->create_sandbox = false;
                a->pod_done = true;
                return;
        }
        if (pod->n_init_containers != 0) {
                /* init containers first: the app containers come in a later sync */
                free(a->containers_to_start);
                a->containers_to_start = NULL;
                a->n_containers_to_start = 0;
                push_int(&a->init_containers_to_start, &a->n_init_containers_to_start, 0);
        }
}

static void push_size(size_t **v, size_t *n, size_t x, bool front)
{
        *v = xrealloc(*v, (*n + 1) * sizeof(**v));
        if (front) {
                memmove(*v + 1, *v, *n * sizeof(**v));
                (*v)[0] = x;
        } else {
                (*v)[*n] = x;
        }
        (*n)++;
}

/* upstream computePodResizeAction for one running container: nothing when
 * its actuated resources are the allocated ones; a restart (false) when a
 * changed resource's resizePolicy says RestartContainer; else an in-place
 * update, ordered decreases first per resource. */
static bool compute_resize(const struct pod *pod, const struct container *c,
                           const struct runtime_container_status *st, const json_t *actuated,
                           struct pod_actions *a)
{
        if (actuated == NULL || pod_is_static(pod) || st->state != CONTAINER_STATE_RUNNING)
                return true;
        struct alloc_resources desired, current;
        alloc_resources_from_spec(&c->resources, &desired);
        /* no record: zero, as upstream (an idempotent update follows) */
        alloc_resources_from_json(json_object_get(actuated, c->name), &current);
        if (alloc_resources_same(&desired, &current))
                return true;
        bool mem_lim = desired.memory_limit != current.memory_limit;
        bool mem_req = desired.memory_request != current.memory_request;
        bool cpu_lim = desired.cpu_limit != current.cpu_limit;
        bool cpu_req = desired.cpu_request != current.cpu_request;
        if (((mem_lim || mem_req) && c->resize_memory == RESIZE_RESTART_CONTAINER) ||
            ((cpu_lim || cpu_req) && c->resize_cpu == RESIZE_RESTART_CONTAINER)) {
                a->update_pod_resources = true;
                return false;
        }
        size_t i = a->n_resizes;
        a->resizes = xrealloc(a->resizes, (i + 1) * sizeof(*a->resizes));
        a->resizes[a->n_resizes++] = (struct container_resize){
            .c = c, .container_id = st->id, .desired = desired, .current = current};
        if (mem_lim || mem_req) {
                int64_t want = mem_lim ? desired.memory_limit : desired.memory_request;
                int64_t have = mem_lim ? current.memory_limit : current.memory_request;
                push_size(&a->resize_memory, &a->n_resize_memory, i, want < have);
        }
        if (cpu_lim || cpu_req) {
                int64_t want = cpu_lim ? desired.cpu_limit : desired.cpu_request;
                int64_t have = cpu_lim ? current.cpu_limit : current.cpu_request;
                push_size(&a->resize_cpu, &a->n_resize_cpu, i, want < have);
        }
        return true;
}

/* upstream computeInitContainerActions; returns whether the pod has been
 * initialised (app containers may run). */
static bool compute_init_actions(const struct pod *pod, const struct runtime_pod_status *s,
                                 const struct probe_verdicts *v, const json_t *actuated,
                                 struct pod_actions *a)
{
        size_t n = pod->n_init_containers;
        if (n == 0)
                return true;

        /* A created or running app container means initialisation happened
         * (its init containers may have been removed since). */
        bool initialized = false;
        for (size_t i = 0; i < pod->n_containers && !initialized; i++) {
                const struct runtime_container_status *st = find_status(s, pod->containers[i].name);
                if (st != NULL &&
                    (st->state == CONTAINER_STATE_CREATED || st->state == CONTAINER_STATE_RUNNING))
                        initialized = true;
        }
        bool previously_initialized = initialized;

        /* Backwards: the last init container with a status tells how far
         * initialisation got (completed ones may have been removed). */
        int *start = NULL;
        size_t n_start = 0;
        for (size_t k = n; k-- > 0;) {
                const struct container *c = &pod->init_containers[k];
                const struct runtime_container_status *st = find_status(s, c->name);
                bool sidecar = is_sidecar(c);
                if (st == NULL) {
                        if (previously_initialized && sidecar)
                                push_int(&start, &n_start, (int)k);
                        continue;
                }
                if (previously_initialized && !sidecar)
                        continue;

                switch (st->state) {
                case CONTAINER_STATE_CREATED:
                        /* created but never started: the start failed, retry */
                        push_int(&start, &n_start, (int)k);
                        break;
                case CONTAINER_STATE_RUNNING:
                        if (!sidecar)
                                break; /* still initialising */
                        if (st->hash != c->hash) {
                                push_kill(a, st, KILL_REASON_HASH_CHANGED);
                                push_int(&start, &n_start, (int)k);
                        } else if (name_in_list(v->liveness_failed, c->name)) {
                                push_kill(a, st, KILL_REASON_LIVENESS);
                                push_int(&start, &n_start, (int)k);
                        } else if (name_in_list(v->startup_failed, c->name)) {
                                push_kill(a, st, KILL_REASON_STARTUP);
                                push_int(&start, &n_start, (int)k);
                                break;
                        } else if (!compute_resize(pod, c, st, actuated, a)) {
                                push_kill(a, st, KILL_REASON_RESIZE);
                                push_int(&start, &n_start, (int)k);
                        }
                        /* a sidecar with a startup probe is started, and
                         * the next container may start, once that probe
                         * has succeeded */
                        if (c->startup_probe != NULL && !name_in_list(v->started, c->name))
                                break;
                        if (k == n - 1)
                                initialized = true;
                        else if (!previously_initialized)
                                push_int(&start, &n_start, (int)k + 1);
                        break;
                case CONTAINER_STATE_EXITED:
                        if (sidecar) {
                                push_int(&start, &n_start, (int)k);
                                break;
                        }
                        if (init_container_failed(st)) {
                                if (!kuberuntime_should_restart(pod, c, st))
                                        goto pod_failed;
                                push_int(&start, &n_start, (int)k);
                                break;
                        }
                        if (k == n - 1)
                                initialized = true;
                        else
                                push_int(&start, &n_start, (int)k + 1);
                        break;
                default: /* unknown */
                        if (!sidecar && !restarts_without_exit_code(pod, c))
                                goto pod_failed;
                        push_kill(a, st, KILL_REASON_UNKNOWN_STATE);
                        push_int(&start, &n_start, (int)k);
                        break;
                }
                previously_initialized = true;
        }
        if (!previously_initialized)
                push_int(&start, &n_start, 0); /* nothing started yet: the first */

        /* into spec order, without duplicates */
        for (size_t i = n_start; i-- > 0;) {
                bool dup = false;
                for (size_t j = 0; j < a->n_init_containers_to_start; j++)
                        dup |= a->init_containers_to_start[j] == start[i];
                if (!dup)
                        push_int(&a->init_containers_to_start, &a->n_init_containers_to_start,
                                 start[i]);
        }
        free(start);
        return initialized;

pod_failed:
        /* an init container failed under restartPolicy Never: the pod failed */
        free(start);
        a->kill_pod = true;
        a->pod_done = true;
        free(a->init_containers_to_start);
        a->init_containers_to_start = NULL;
        a->n_init_containers_to_start = 0;
        return false;
}

static const struct container *spec_by_name(const struct pod *pod, const char *name)
{
        for (size_t i = 0; i < pod->n_containers; i++)
                if (str_eq(pod->containers[i].name, name))
                        return &pod->containers[i];
        for (size_t i = 0; i < pod->n_init_containers; i++)
                if (str_eq(pod->init_containers[i].name, name))
                        return &pod->init_containers[i];
        for (size_t i = 0; i < pod->n_ephemeral_containers; i++)
                if (str_eq(pod->ephemeral_containers[i].name, name))
                        return &pod->ephemeral_containers[i];
        return NULL;
}

/* Running instances that no spec claims: names not in the spec, and older
 * duplicates of a name (a crash between create and status). */
static void kill_unwanted(const struct pod *pod, const struct runtime_pod_status *s,
                          struct pod_actions *a)
{
        for (size_t i = 0; i < s->n_containers; i++) {
                const struct runtime_container_status *st = &s->containers[i];
                if (st->state != CONTAINER_STATE_RUNNING && st->state != CONTAINER_STATE_UNKNOWN)
                        continue;
                if (st->name == NULL || spec_by_name(pod, st->name) == NULL)
                        push_kill(a, st, KILL_REASON_NOT_IN_SPEC);
                else if (find_status(s, st->name) != st)
                        push_kill(a, st, KILL_REASON_STALE);
        }
}

void kuberuntime_compute_pod_actions(const struct pod *pod, const struct runtime_pod_status *status,
                                     const struct probe_verdicts *probes, const json_t *actuated,
                                     struct pod_actions *a)
{
        static const struct probe_verdicts none = {0};
        const struct probe_verdicts *v = probes ? probes : &none;
        memset(a, 0, sizeof(*a));
        a->next_init_container = -1;

        const char *sandbox_id;
        bool create = sandbox_changed(pod, status, &a->attempt, &sandbox_id);
        a->sandbox_id = sandbox_id;
        if (create) {
                bool anything =
                    status != NULL && (status->n_sandboxes != 0 || status->n_containers != 0);
                a->kill_pod = anything;
                a->create_sandbox = true;
                compute_fresh_sandbox(pod, status, a);
                goto out;
        }

        /* Ephemeral containers may start before initialization is complete;
         * one that ever ran (any instance in the runtime) is never started
         * again. */
        for (size_t i = 0; i < pod->n_ephemeral_containers; i++)
                if (find_status(status, pod->ephemeral_containers[i].name) == NULL)
                        push_int(&a->ephemeral_containers_to_start,
                                 &a->n_ephemeral_containers_to_start, (int)i);

        bool initialized = compute_init_actions(pod, status, v, actuated, a);
        if (a->kill_pod)
                goto out;
        kill_unwanted(pod, status, a);
        if (!initialized)
                goto out;

        size_t keep = 0;
        for (size_t i = 0; i < pod->n_containers; i++) {
                const struct container *c = &pod->containers[i];
                const struct runtime_container_status *st = find_status(status, c->name);
                if (st == NULL || st->state != CONTAINER_STATE_RUNNING) {
                        if (kuberuntime_should_restart(pod, c, st)) {
                                push_int(&a->containers_to_start, &a->n_containers_to_start,
                                         (int)i);
                                if (st != NULL && st->state == CONTAINER_STATE_UNKNOWN)
                                        push_kill(a, st, KILL_REASON_UNKNOWN_STATE);
                        }
                        continue;
                }
                const char *reason;
                bool restart = restarts_without_exit_code(pod, c);
                if (st->hash != c->hash) {
                        reason = KILL_REASON_HASH_CHANGED;
                        restart = true; /* whatever the policy: the spec changed */
                } else if (name_in_list(v->liveness_failed, c->name)) {
                        reason = KILL_REASON_LIVENESS;
                } else if (name_in_list(v->startup_failed, c->name)) {
                        reason = KILL_REASON_STARTUP;
                } else if (!compute_resize(pod, c, st, actuated, a)) {
                        reason = KILL_REASON_RESIZE;
                        restart = true;
                } else {
                        keep++;
                        continue;
                }
                if (restart)
                        push_int(&a->containers_to_start, &a->n_containers_to_start, (int)i);
                push_kill(a, st, reason);
        }

        if (keep == 0 && a->n_containers_to_start == 0) {
                /* every container is done: stop the sandbox; sidecars must
                 * not keep the pod alive */
                a->kill_pod = true;
                a->pod_done = pod->deletion_timestamp == NULL;
                free(a->init_containers_to_start);
                a->init_containers_to_start = NULL;
                a->n_init_containers_to_start = 0;
        }
out:
        if (a->kill_pod && !a->create_sandbox) {
                /* nothing starts in a sandbox about to stop */
                free(a->ephemeral_containers_to_start);
                a->ephemeral_containers_to_start = NULL;
                a->n_ephemeral_containers_to_start = 0;
        }
        if (a->n_init_containers_to_start > 0)
                a->next_init_container = a->init_containers_to_start[0];
}

void pod_actions_clear(struct pod_actions *a)
{
        if (a == NULL)
                return;
        free(a->containers_to_start);
        free(a->containers_to_kill);
        free(a->init_containers_to_start);
        free(a->ephemeral_containers_to_start);
        free(a->resizes);
        free(a->resize_memory);
        free(a->resize_cpu);
        memset(a, 0, sizeof(*a));
        a->next_init_container = -1;
}
