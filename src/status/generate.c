/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The v1.PodStatus of a pod: upstream generateAPIPodStatus +
 * convertStatusToAPIStatus (pkg/kubelet/kubelet_pods.go) and what the status
 * manager adds before it stores a status (start time, transition times,
 * observedGeneration, normalizeStatus).
 */
#include "status/generate_internal.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

/* upstream kubecontainer.MaxPodTerminationMessageLogLength */
#define MAX_POD_TERMINATION_MESSAGE_LOG_LENGTH (1024 * 12)

static const char *const phases[] = {"Pending", "Running", "Succeeded", "Failed", "Unknown"};

/* The static spelling of a phase, or NULL for anything else. */
static const char *phase_const(const char *p)
{
        for (size_t i = 0; p != NULL && i < sizeof(phases) / sizeof(phases[0]); i++)
                if (strcmp(p, phases[i]) == 0)
                        return phases[i];
        return NULL;
}

static bool phase_terminal(const char *p)
{
        return p != NULL && (strcmp(p, "Failed") == 0 || strcmp(p, "Succeeded") == 0);
}

static const json_t *api_status(const struct pod *pod)
{
        return json_object_get(pod->raw, "status");
}

struct generated {
        json_t *app, *init;
        const char *phase;
};

/* The phase of a terminal pod (upstream getPhase with podIsTerminal): once
 * no app container runs and each has stopped, Succeeded if every one
 * exited 0, else Failed; otherwise `phase` as computed. */
static const char *stopped_phase(const json_t *app, const char *phase)
{
        size_t i, stopped = 0, succeeded = 0;
        json_t *st;
        json_array_foreach(app, i, st)
        {
                json_t *t = status_cs_state(st, "terminated");
                if (t == NULL && status_cs_state(st, "waiting") != NULL)
                        t = status_cs_last(st, "terminated");
                if (t == NULL)
                        return phase; /* running, or never started: upstream's cases */
                stopped++;
                if (status_get_int(t, "exitCode") == 0)
                        succeeded++;
        }
        if (stopped == 0)
                return phase;
        return stopped == succeeded ? "Succeeded" : "Failed";
}

/* Container statuses and the phase, with upstream's three-way merge, the
 * eviction override and the no-way-out-of-terminal rule. */
static void generate_core(const struct status_input *in, struct generated *g)
{
        struct status_runtime_view view;
        status_runtime_view_init(&view, in->runtime);
        g->app = status_container_statuses(in, &view, STATUS_APP);
        g->init = status_container_statuses(in, &view, STATUS_INIT);
        status_runtime_view_release(&view);
        status_apply_probes(in, g->app, g->init);

        const char *phase = status_compute_phase(
            in->pod, g->app, g->init, status_any_active_regular_started(in->pod, in->runtime));
        const char *old_phase = phase_const(status_get_str(in->old_status, "phase"));
        const char *api_phase = phase_const(status_get_str(api_status(in->pod), "phase"));
        if (!phase_terminal(phase)) {
                if (phase_terminal(old_phase))
                        phase = old_phase;
                else if (phase_terminal(api_phase))
                        phase = api_phase;
        }
        if (in->pod_terminal && !phase_terminal(phase))
                phase = stopped_phase(g->app, phase);
        if (in->terminal_failed || in->reject_reason != NULL)
                phase = "Failed";
        /* the API shows a terminal phase: no transition out of it */
        if (phase_terminal(api_phase) && strcmp(phase, api_phase) != 0)
                phase = api_phase;
        g->phase = phase;
}

/* An IP parsed as Go's ParseIPSloppy would and printed canonically;
 * *v4 tells the family (IPv4-mapped IPv6 counts as IPv4). */
static bool canonical_ip(const char *s, char *out, bool *v4)
{
        struct in_addr a4;
        struct in6_addr a6;
        if (s == NULL)
                return false;
        if (inet_pton(AF_INET, s, &a4) == 1) {
                *v4 = true;
                return inet_ntop(AF_INET, &a4, out, INET6_ADDRSTRLEN) != NULL;
        }
        if (inet_pton(AF_INET6, s, &a6) != 1)
                return false;
        if (IN6_IS_ADDR_V4MAPPED(&a6)) {
                memcpy(&a4, &a6.s6_addr[12], 4);
                *v4 = true;
                return inet_ntop(AF_INET, &a4, out, INET6_ADDRSTRLEN) != NULL;
        }
        *v4 = false;
        return inet_ntop(AF_INET6, &a6, out, INET6_ADDRSTRLEN) != NULL;
}

/* upstream sortPodIPs: the first IP of the node's family, then the first
 * of the other family. */
static json_t *pod_ips(const struct status_input *in)
{
        const struct runtime_pod_status *rt = in->runtime;
        json_t *out = json_array();
        if (rt == NULL)
                return out;
        const char *cand[64];
        size_t n = 0;
        if (rt->ip != NULL)
                cand[n++] = rt->ip;
        if (rt->n_sandboxes > 0 && rt->sandboxes[0].state == SANDBOX_STATE_READY) {
                const struct runtime_sandbox_status *sb = &rt->sandboxes[0];
                if (sb->ip != NULL && n < 64)
                        cand[n++] = sb->ip;
                for (size_t i = 0; i < sb->n_additional_ips && n < 64; i++)
                        cand[n++] = sb->additional_ips[i];
        }
        char buf[INET6_ADDRSTRLEN];
        bool node_v4 = true, v4;
        if (in->host_ip != NULL && canonical_ip(in->host_ip, buf, &v4))
                node_v4 = v4;
        for (int pass = 0; pass < 2; pass++) {
                bool want_v4 = pass == 0 ? node_v4 : !node_v4;
                for (size_t i = 0; i < n; i++) {
                        if (canonical_ip(cand[i], buf, &v4) && v4 == want_v4) {
                                json_array_append_new(out, json_pack("{s:s}", "ip", buf));
                                break;
                        }
                }
        }
        return out;
}

/* normalizeStatus: termination messages share 12 KiB among the containers. */
static void truncate_messages(const struct pod *pod, json_t *arr)
{
        size_t per = MAX_POD_TERMINATION_MESSAGE_LOG_LENGTH;
        size_t n = pod->n_containers + pod->n_init_containers + pod->n_ephemeral_containers;
        if (n > 0)
                per /= n;
        size_t i;
        json_t *st;
        json_array_foreach(arr, i, st)
        {
                json_t *ts[2] = {status_cs_state(st, "terminated"),
                                 status_cs_last(st, "terminated")};
                for (int k = 0; k < 2; k++) {
                        const char *m = status_get_str(ts[k], "message");
                        if (m != NULL && strlen(m) > per) {
                                char *cut = xstrndup(m, per);
                                json_object_set_new(ts[k], "message", json_string(cut));
                                free(cut);
                        }
                }
        }
}

static json_t *start_time(const struct status_input *in)
{
        json_t *old = json_object_get(in->old_status, "startTime");
        if (json_is_string(old) && json_string_length(old) > 0)
                return json_incref(old);
        return status_time(in->now_ns);
}

static void set_observed_generation(json_t *s, const struct status_input *in)
{
        json_int_t gen = in->pod->generation;
        json_int_t old = status_get_int(in->old_status, "observedGeneration");
        if (old > gen)
                gen = old;
        if (gen != 0)
                json_object_set_new(s, "observedGeneration", json_integer(gen));
}

/* upstream rejectPod: the whole status of a pod admission turned away. */
static json_t *rejected_status(const struct status_input *in)
{
        json_t *s = json_object();
        set_observed_generation(s, in);
        json_object_set_new(s, "phase", json_string("Failed"));
        json_object_set_new(
            s, "message",
            json_sprintf("Pod was rejected: %s", in->reject_message ? in->reject_message : ""));
        json_object_set_new(s, "reason", json_string(in->reject_reason));
        json_object_set_new(s, "startTime", start_time(in));
        json_object_set_new(s, "qosClass", json_string(qos_class_name(pod_qos_class(in->pod))));
        return s;
}

/* Conditions: the ones others own (from the API status), the disruption
 * target from the old status, then the kubelet's own. */
static json_t *conditions(const struct status_input *in, const struct generated *g)
{
        json_t *conds = json_array();
        size_t i;
        json_t *c;
        json_array_foreach(json_object_get(api_status(in->pod), "conditions"), i, c)
        {
                if (!status_condition_owned_by_kubelet(status_get_str(c, "type")))
                        json_array_append_new(conds, json_deep_copy(c));
        }
        /* the resize conditions, as they were set: their own times */
        if (!in->pod_terminal)
                json_array_foreach(in->resize_conditions, i, c)
                {
                        json_array_append_new(conds, json_deep_copy(c));
                }
        json_t *dt = status_find_named(json_object_get(in->old_status, "conditions"), "type",
                                       "DisruptionTarget");
        cleanup_json json_t *added = NULL;
        if (in->disruption_message &&
            (dt == NULL || strcmp(status_get_str(dt, "status"), "True") != 0)) {
                added = json_pack("{s:s, s:s, s:o, s:s, s:s}", "type", "DisruptionTarget", "status",
                                  "True", "lastTransitionTime", status_time(in->now_ns), "reason",
                                  "TerminationByKubelet", "message", in->disruption_message);
                dt = added;
        }
        if (dt != NULL) {
                json_array_foreach(conds, i, c)
                {
                        if (strcmp(status_get_str(c, "type"), "DisruptionTarget") == 0)
                                break;
                }
                if (i < json_array_size(conds))
                        json_array_set_new(conds, i, json_deep_copy(dt));
                else
                        json_array_append_new(conds, json_deep_copy(dt));
        }
        status_append_conditions(in, conds, g->app, g->init, g->phase);
        status_set_transition_times(conds, in->old_status, in->now_ns);
        return conds;
}

json_t *status_generate(const struct status_input *in)
{
        if (in->reject_reason != NULL && in->runtime == NULL)
                return rejected_status(in);

        struct generated g;
        generate_core(in, &g);
        const struct pod *pod = in->pod;

        /* the reason and message belong to the phase */
        const char *reason = NULL, *message = NULL;
        const char *old_phase = status_get_str(in->old_status, "phase");
        if (old_phase != NULL && strcmp(old_phase, g.phase) == 0) {
                reason = status_get_str(in->old_status, "reason");
                message = status_get_str(in->old_status, "message");
        }
        if (reason == NULL || reason[0] == '\0')
                reason = status_get_str(api_status(pod), "reason");
        if (message == NULL || message[0] == '\0')
                message = status_get_str(api_status(pod), "message");
        if (in->reject_reason != NULL) {
                reason = in->reject_reason;
                message = in->reject_message;
        }

        json_t *s = json_object();
        set_observed_generation(s, in);
        json_object_set_new(s, "phase", json_string(g.phase));
        json_object_set_new(s, "conditions", conditions(in, &g));
        if (message != NULL && message[0] != '\0')
                json_object_set_new(s, "message", json_string(message));
        if (reason != NULL && reason[0] != '\0')
                json_object_set_new(s, "reason", json_string(reason));

        char host[INET6_ADDRSTRLEN];
        bool v4;
        bool has_host = in->host_ip != NULL && canonical_ip(in->host_ip, host, &v4);
        if (has_host) {
                json_object_set_new(s, "hostIP", json_string(host));
                json_object_set_new(s, "hostIPs", json_pack("[{s:s}]", "ip", host));
        }
        json_t *ips = pod_ips(in);
        /* host-network pods have the node's IP */
        if (json_array_size(ips) == 0 && pod->host_network && has_host)
                json_array_append_new(ips, json_pack("{s:s}", "ip", host));
        if (json_array_size(ips) > 0) {
                json_object_set(s, "podIP", json_object_get(json_array_get(ips, 0), "ip"));
                json_object_set_new(s, "podIPs", ips);
        } else {
                json_decref(ips);
        }
        json_object_set_new(s, "startTime", start_time(in));

        truncate_messages(pod, g.init);
        truncate_messages(pod, g.app);
        if (json_array_size(g.init) > 0)
                json_object_set_new(s, "initContainerStatuses", g.init);
        else
                json_decref(g.init);
        if (json_array_size(g.app) > 0)
                json_object_set_new(s, "containerStatuses", g.app);
        else
                json_decref(g.app);
        if (pod->n_ephemeral_containers > 0) {
                /* outside generate_core: ephemeral containers have no part
                 * in the phase, the conditions or the probes */
                struct status_runtime_view view;
                status_runtime_view_init(&view, in->runtime);
                json_t *eph = status_container_statuses(in, &view, STATUS_EPHEMERAL);
                status_runtime_view_release(&view);
                truncate_messages(pod, eph);
                json_object_set_new(s, "ephemeralContainerStatuses", eph);
        }
        json_object_set_new(s, "qosClass", json_string(qos_class_name(pod_qos_class(pod))));
        return s;
}

const char *status_phase(const struct status_input *in)
{
        if (in->reject_reason != NULL && in->runtime == NULL)
                return "Failed";
        struct generated g;
        generate_core(in, &g);
        json_decref(g.app);
        json_decref(g.init);
        return g.phase;
}
