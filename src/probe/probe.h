/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Running one handler once (upstream pkg/probe and the lifecycle handler
 * runner's httpGet): exec through CRI ExecSync, httpGet, tcpSocket, gRPC
 * health check, sleep.  The prober's workers run probes with it, the
 * runtime manager's lifecycle hooks their httpGet; it knows neither, and
 * depends only on api, cri, grpc, expansion and util.
 */
#ifndef CK_PROBE_PROBE_H
#define CK_PROBE_PROBE_H

#include "api/pod.h"
#include "cri/cri.h"

#include <stdbool.h>
#include <stdint.h>

/* Output kept from a run (exec output, HTTP body): upstream's 10 KiB. */
#define PROBE_MAX_OUTPUT (10 * 1024)
/* upstream: "kube-probe/<major>.<minor>" of the kubelet's version */
#define PROBE_USER_AGENT "kube-probe/1.35"
/* ... and of lifecycle hooks' requests */
#define PROBE_HOOK_USER_AGENT "kube-lifecycle/1.35"

/* The outcome of one run, as upstream's probe.Result plus error: a warning
 * counts as success (an HTTP redirect to another host), an error (the
 * handler could not be run: CRI failure, unresolvable port) is retried and
 * then thrown away by a probe worker, and is a failure for hooks. */
enum probe_outcome {
        PROBE_OUTCOME_SUCCESS = 0,
        PROBE_OUTCOME_WARNING,
        PROBE_OUTCOME_FAILURE,
        PROBE_OUTCOME_ERROR,
};

static inline bool probe_outcome_ok(enum probe_outcome o)
{
        return o == PROBE_OUTCOME_SUCCESS || o == PROBE_OUTCOME_WARNING;
}

/* Runs h once for container c (its ports name httpGet/tcpSocket ports, its
 * env values expand an exec command's $(VAR)).  pod_ip is the target of
 * httpGet/tcpSocket/grpc when the handler names no host; cri may be NULL
 * (then exec is an error).  An httpGet that is c's postStart or preStop
 * runs as a hook: any HTTP response succeeds, User-Agent
 * PROBE_HOOK_USER_AGENT.  *message: a new string or NULL, why it failed or
 * the exec output. */
enum probe_outcome probe_run(struct cri_client *cri, const struct container *c,
                             const char *container_id, const char *pod_ip, const struct handler *h,
                             int64_t timeout_ms, char **message);

#endif
