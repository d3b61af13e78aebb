/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pod phase from the container statuses: upstream getPhase
 * (pkg/kubelet/kubelet_pods.go) with the ContainerRestartRules feature gate
 * on (its default since 1.35): a container "stopped for good" is one its
 * own or the pod's restart policy will not restart.
 */
#include "status/generate_internal.h"

#include <string.h>

/* upstream podutil.GetContainerStatus over init + app statuses */
static const json_t *find_status(const json_t *app, const json_t *init, const char *name)
{
        json_t *s = status_find_named(app, "name", name);
        return s ? s : status_find_named(init, "name", name);
}

const char *status_compute_phase(const struct pod *pod, const json_t *app, const json_t *init,
                                 bool pod_has_initialized)
{
        int pending_sidecars = 0, pending_regular_init = 0, failed_init_not_restartable = 0;

        /* regular init containers */
        for (size_t i = 0; i < pod->n_init_containers; i++) {
                const struct container *c = &pod->init_containers[i];
                if (container_is_sidecar(c))
                        continue;
                const json_t *st = find_status(app, init, c->name);
                if (st == NULL) {
                        pending_regular_init++;
                        continue;
                }
                json_t *t;
                if (status_cs_state(st, "running") != NULL) {
                        pending_regular_init++;
                } else if ((t = status_cs_state(st, "terminated")) != NULL) {
                        int32_t code = (int32_t)status_get_int(t, "exitCode");
                        if (code != 0 && !container_should_restart(c, pod, code))
                                failed_init_not_restartable++;
                } else if (status_cs_state(st, "waiting") != NULL) {
                        json_t *lt = status_cs_last(st, "terminated");
                        if (lt != NULL) {
                                int32_t code = (int32_t)status_get_int(lt, "exitCode");
                                if (code != 0 && !container_should_restart(c, pod, code))
                                        failed_init_not_restartable++;
                        } else {
                                pending_regular_init++;
                        }
                } else {
                        pending_regular_init++;
                }
        }

        int unknown = 0, running = 0, waiting = 0, stopped = 0, stopped_not_restartable = 0,
            succeeded = 0;

        /* sidecars (restartable init containers) */
        for (size_t i = 0; i < pod->n_init_containers; i++) {
                const struct container *c = &pod->init_containers[i];
                if (!container_is_sidecar(c))
                        continue;
                const json_t *st = find_status(app, init, c->name);
                if (st == NULL) {
                        unknown++;
                        continue;
                }
                if (status_cs_state(st, "running") != NULL) {
                        if (!status_get_true(st, "started"))
                                pending_sidecars++;
                        running++;
                } else if (status_cs_state(st, "terminated") != NULL) {
                        /* a terminated sidecar does not count for the phase */
                } else if (status_cs_state(st, "waiting") != NULL) {
                        if (status_cs_last(st, "terminated") == NULL) {
                                pending_sidecars++;
                                waiting++;
                        }
                } else {
                        pending_sidecars++;
                        unknown++;
                }
        }

        for (size_t i = 0; i < pod->n_containers; i++) {
                const struct container *c = &pod->containers[i];
                const json_t *st = find_status(app, init, c->name);
                if (st == NULL) {
                        unknown++;
                        continue;
                }
                json_t *t;
                if (status_cs_state(st, "running") != NULL) {
                        running++;
                } else if ((t = status_cs_state(st, "terminated")) != NULL) {
                        stopped++;
                        int32_t code = (int32_t)status_get_int(t, "exitCode");
                        if (!container_should_restart(c, pod, code))
                                stopped_not_restartable++;
                        if (code == 0)
                                succeeded++;
                } else if (status_cs_state(st, "waiting") != NULL) {
                        json_t *lt = status_cs_last(st, "terminated");
                        if (lt != NULL) {
                                stopped++;
                                int32_t code = (int32_t)status_get_int(lt, "exitCode");
                                if (!container_should_restart(c, pod, code))
                                        stopped_not_restartable++;
                        } else {
                                waiting++;
                        }
                } else {
                        unknown++;
                }
        }

        if (failed_init_not_restartable > 0)
                return "Failed";
        if (pending_regular_init > 0 || (pending_sidecars > 0 && !pod_has_initialized) ||
            waiting > 0)
                return "Pending"; /* one or more containers has not been started */
        if (running > 0 && unknown == 0)
                return "Running";
        if (running == 0 && stopped > 0 && unknown == 0) {
                if (stopped != stopped_not_restartable)
                        return "Running"; /* at least one is restarting */
                if (stopped == succeeded)
                        return "Succeeded";
                return "Failed";
        }
        return "Pending";
}

bool status_any_active_regular_started(const struct pod *pod, const struct runtime_pod_status *rt)
{
        if (rt == NULL || rt->n_sandboxes == 0 || rt->sandboxes[0].state != SANDBOX_STATE_READY)
                return false;
        const char *active = rt->sandboxes[0].id;
        for (size_t i = 0; i < rt->n_containers; i++) {
                const struct runtime_container_status *c = &rt->containers[i];
                /* a container without a sandbox id is taken to be in the
                 * newest sandbox */
                if (c->sandbox_id != NULL && active != NULL && strcmp(c->sandbox_id, active) != 0)
                        continue;
                for (size_t j = 0; c->name != NULL && j < pod->n_containers; j++)
                        if (strcmp(pod->containers[j].name, c->name) == 0)
                                return true;
        }
        return false;
}
