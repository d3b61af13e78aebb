/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The last word on a terminated pod's status: upstream status manager
 * TerminatePod (pkg/kubelet/status/status_manager.go).
 */
#include "status/generate_internal.h"

#include <string.h>

static bool waiting_never_ran(const json_t *cs)
{
        return status_cs_state(cs, "waiting") != NULL && status_cs_last(cs, "terminated") == NULL;
}

/* upstream hasPodInitialized: whether the pod (its status as the apiserver
 * has it) shows a regular container ever started, or its last init
 * container done. */
static bool pod_has_initialized(const struct pod *pod)
{
        if (pod->n_init_containers == 0)
                return true;
        const json_t *st = json_object_get(pod->raw, "status");
        size_t i;
        json_t *cs;
        json_array_foreach(json_object_get(st, "containerStatuses"), i, cs)
        {
                if (status_cs_last(cs, "terminated") != NULL ||
                    status_cs_state(cs, "waiting") == NULL)
                        return true;
        }
        const json_t *init = json_object_get(st, "initContainerStatuses");
        size_t n = json_array_size(init);
        if (n == 0 || n > pod->n_init_containers)
                return false;
        const json_t *last = json_array_get(init, n - 1);
        const struct container *c = &pod->init_containers[n - 1];
        if (c->name == NULL || strcmp(c->name, status_get_str(last, "name") ?: "") != 0)
                return false;
        if (c->restart_policy != NULL && strcmp(c->restart_policy, "Always") == 0)
                return status_cs_state(last, "running") != NULL && status_get_true(last, "started");
        const json_t *t = status_cs_last(last, "terminated");
        if (t != NULL && status_get_int(t, "exitCode") == 0)
                return true;
        t = status_cs_state(last, "terminated");
        return t != NULL && status_get_int(t, "exitCode") == 0;
}

static void mark_unknown(json_t *cs)
{
        json_object_set_new(cs, "state",
                            json_pack("{s:{s:i, s:s, s:s, s:n, s:n}}", "terminated", "exitCode",
                                      137, "reason", "ContainerStatusUnknown", "message",
                                      "The container could not be located when the pod was "
                                      "terminated",
                                      "startedAt", "finishedAt"));
}

void status_terminate(const struct pod *pod, json_t *status)
{
        size_t i;
        json_t *cs;
        /* once the pod initialized, a container not known to have ended
         * ended in failure */
        if (pod_has_initialized(pod))
                json_array_foreach(json_object_get(status, "containerStatuses"), i, cs)
                {
                        if (status_cs_state(cs, "terminated") == NULL)
                                mark_unknown(cs);
                }
        /* init containers: all but the final run of never-started ones (the
         * first always counts) */
        json_t *init = json_object_get(status, "initContainerStatuses");
        size_t n = json_array_size(init), upto = n > 0 ? 1 : 0;
        for (size_t k = n; k > 0; k--)
                if (!waiting_never_ran(json_array_get(init, k - 1))) {
                        upto = k;
                        break;
                }
        for (i = 0; i < upto; i++) {
                cs = json_array_get(init, i);
                if (status_cs_state(cs, "terminated") == NULL)
                        mark_unknown(cs);
        }
        /* a pod the apiserver owns ends in a terminal phase */
        if (pod_is_static(pod))
                return;
        const char *phase = status_get_str(status, "phase");
        if (phase == NULL || (strcmp(phase, "Succeeded") != 0 && strcmp(phase, "Failed") != 0))
                json_object_set_new(status, "phase", json_string("Failed"));
}
