/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to src/cm: the systemd cgroup driver's client of systemd's D-Bus
 * API (org.freedesktop.systemd1.Manager, over systemd's private socket, as
 * runc's libcontainer/cgroups/systemd does for the upstream kubelet): the
 * pod and QoS cgroups are transient slice units, created with their
 * resource properties, changed with SetUnitProperties and removed with
 * StopUnit.  Each call waits for its job (the JobRemoved signal), at most
 * 30 s, and fails with the job's result when it is not "done".  A closed
 * connection (systemd re-executed) is opened again at the next call.
 *
 * Not thread-safe: struct cm serialises calls.
 */
#ifndef CK_CM_SYSTEMD_H
#define CK_CM_SYSTEMD_H

#include "cm/cgroup_driver.h"
#include "util/error.h"

#include <stdbool.h>

struct cm_systemd;

/* Connects to systemd at address (NULL: unix:path=/run/systemd/private) and
 * subscribes to its job signals.  v2: the unified hierarchy (the property
 * names differ: CPUWeight/MemoryMax against CPUShares/MemoryLimit). */
int cm_systemd_open(const char *address, bool v2, struct cm_systemd **out, ck_error_t *err);
void cm_systemd_close(struct cm_systemd *sd);

/* Starts the slice unit (e.g. "kubepods-burstable.slice") below parent
 * with r's values, as runc's Apply does; a slice that exists already gets
 * r's values instead (cm_systemd_set). */
int cm_systemd_start_slice(struct cm_systemd *sd, const char *unit, const char *parent,
                           const struct cgroup_resources *r, ck_error_t *err);
/* SetUnitProperties (runtime) of r's values that have their has_ flag. */
int cm_systemd_set(struct cm_systemd *sd, const char *unit, const struct cgroup_resources *r,
                   ck_error_t *err);
/* StopUnit; a unit systemd does not know is not an error. */
int cm_systemd_stop(struct cm_systemd *sd, const char *unit, ck_error_t *err);

#endif
