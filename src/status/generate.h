/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The API view of a pod's status (upstream pkg/kubelet/kubelet_pods.go
 * generateAPIPodStatus, getPhase, convertToAPIContainerStatuses and
 * pkg/kubelet/status/generate.go for the conditions), built from the pod
 * spec and what the runtime reports.
 *
 * Output: a v1.PodStatus as a JSON object (new reference): phase,
 * conditions (PodReadyToStartContainers, Initialized, Ready,
 * ContainersReady, PodScheduled), message/reason, hostIP(s), podIP(s),
 * startTime, qosClass, containerStatuses and initContainerStatuses (name,
 * state, lastState, ready, started, restartCount, image, imageID,
 * containerID "containerd://<id>"), init ones in spec order, app ones by
 * name (as upstream sorts them).
 *
 * Pure except for the clock (now_ns passed in).
 */
#ifndef CK_STATUS_GENERATE_H
#define CK_STATUS_GENERATE_H

#include "api/pod.h"
#include "kuberuntime/runtime.h"

#include <jansson.h>
#include <stdbool.h>

struct status_input {
        const struct pod *pod;
        const struct runtime_pod_status *runtime;   /* NULL: the runtime has nothing */
        const struct kuberuntime_sync_result *sync; /* waiting reasons, may be NULL */
        const json_t *old_status; /* the previous status (for startTime, lastState,
                                     condition transition times), may be NULL */
        const char *runtime_name; /* "containerd" for containerID prefixes */
        const char *host_ip;      /* the node's IP, may be NULL */
        /* readiness per container name from probes; NULL = no probes yet:
         * a running container without a readiness probe is ready. */
        const struct kv_list *readiness; /* value "true"/"false" */
        /* startup probe results per container name ("true" once the probe
         * succeeded); NULL or absent: a running container without a startup
         * probe is started, one with a startup probe is not (yet). */
        const struct kv_list *startup;
        /* set when the pod was rejected by admission or failed for good */
        const char
            *reject_reason; /* e.g. "OutOfcpu", "UnexpectedAdmissionError", "DeadlineExceeded" */
        const char *reject_message;
        bool terminal_failed; /* the pod failed for good (reject/deadline) */
        /* the kubelet stops the pod (an eviction): a DisruptionTarget
         * condition, True, reason TerminationByKubelet, this message
         * (upstream's eviction manager); NULL: none added */
        const char *disruption_message;
        /* reject_reason with runtime == NULL (never admitted, never ran):
         * the status is upstream rejectPod's: phase Failed, reason, message
         * "Pod was rejected: <reject_message>", qosClass, startTime and
         * nothing else.  Otherwise reject_reason or terminal_failed make the
         * full status's phase Failed, with reason and message (as is) if
         * given, as upstream's ShouldEvict (DeadlineExceeded) does. */
        bool network_ready; /* the runtime's network is ready */
        /* {"<container>": resources} the runtime was given for each
         * container (the actuated state, borrowed); NULL: unknown, a
         * running container reports its allocated resources */
        const json_t *actuated;
        /* the PodResizePending / PodResizeInProgress conditions to report
         * (an array, borrowed; NULL: none) */
        const json_t *resize_conditions;
        /* the pod is being deleted and its containers were stopped
         * (upstream podIsTerminal): stopped containers make it Succeeded
         * (all exited 0) or Failed, whatever the restartPolicy */
        bool pod_terminal;
        int64_t now_ns;
};

/* Returns a new reference; never NULL.  Container statuses: init ones in
 * spec order, app ones sorted by name (upstream SortedContainerStatuses). */
json_t *status_generate(const struct status_input *in);

/* The final touch on the status of a pod whose containers were all stopped
 * (upstream status manager TerminatePod): each container not known to have
 * ended (once the pod initialized; init containers up to the last that
 * started) is terminated with exit code 137, reason ContainerStatusUnknown,
 * and a pod other than a static one moves from Pending or Running to
 * Failed.  Changes status in place. */
void status_terminate(const struct pod *pod, json_t *status);

/* The pod phase alone (upstream getPhase), for tests and the sync loop. */
const char *status_phase(const struct status_input *in);

/* Whether the kubelet sets and owns conditions of this type (PodScheduled,
 * Ready, Initialized, ContainersReady, PodReadyToStartContainers, the resize
 * ones); others belong to other writers. */
bool status_condition_owned_by_kubelet(const char *type);

#endif
