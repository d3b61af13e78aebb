/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kubelet: wires the pod sources, the sync loop, the pod workers, PLEG,
 * the runtime manager, the container manager and the status store together
 * (upstream pkg/kubelet/kubelet.go).
 *
 * Threads: kubelet_run() runs the sync loop on the calling thread; it is the
 * only thread that touches the pod records.  Sources, PLEG and workers post
 * events to its queue.  kubelet_stop() may be called from any thread (it only
 * posts an event).
 */
#ifndef CK_KUBELET_KUBELET_H
#define CK_KUBELET_KUBELET_H

#include "config/kubeletconfig.h"
#include "util/error.h"

#include <stdbool.h>

struct kubelet;

/* KubeletCgroupDriverFromCRI (GA, locked on in 1.35): asks the runtime for
 * its cgroup driver (CRI RuntimeConfig) and sets cfg->cgroup_driver to it,
 * as upstream's getCgroupDriverFromCRI.  A runtime without the call
 * (Unimplemented: containerd 1.6) leaves the configured driver, with
 * upstream's log line.  Unlike upstream, which fails its start after three
 * tries, a runtime that does not answer also leaves the configured driver
 * (with a warning): the agent waits for a runtime that is not there yet.
 * Fails only for a driver the runtime names that ckubelet does not know. */
int kubelet_cgroup_driver_from_cri(struct kubelet_config *cfg, ck_error_t *err);

/* Creates the kubelet from a parsed configuration (borrowed; must outlive
 * the kubelet): checks the root directory, the cgroup layout, and that the
 * runtime endpoint is well formed.  Does not contact the runtime yet. */
int kubelet_new(const struct kubelet_config *cfg, struct kubelet **out, ck_error_t *err);

/* Waits for the runtime (retrying, logging why it is not ready), starts the
 * sources, PLEG, workers and servers, then runs the sync loop until
 * kubelet_stop().  Returns < 0 only for failures that make running
 * impossible (e.g. the read-only port cannot be bound). */
int kubelet_run(struct kubelet *kl, ck_error_t *err);

void kubelet_stop(struct kubelet *kl);

/* Stops every thread and frees kl.  Returns false when pod workers were
 * still busy (a kill waiting out its grace period) and were left running
 * with what they use: the caller must then end the process without
 * running exit handlers under them (_exit). */
bool kubelet_free(struct kubelet *kl);

#endif
