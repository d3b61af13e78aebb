/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Graceful node shutdown (upstream pkg/kubelet/nodeshutdown): what the
 * manager's thread (src/kubelet/shutdown_loop.c) is built from.
 *
 * - The periods: shutdownGracePeriodByPodPriority, or shutdownGracePeriod
 *   and shutdownGracePeriodCriticalPods made into two of them; the pods
 *   grouped by priority, each group stopped in turn, lowest first.
 * - The files: logind's drop-in that raises InhibitDelayMaxSec to the sum
 *   of the periods, and the state file with the last shutdown's start and
 *   end (the graceful_shutdown metrics after a restart).
 * - The logind client (org.freedesktop.login1 on the system bus, sd-bus
 *   loaded at first use): InhibitDelayMaxUSec, a "delay" inhibitor lock on
 *   shutdown, the PrepareForShutdown signal, and logind's reload through
 *   systemd (KillUnit SIGHUP), as upstream's systemd package.
 */
#ifndef CK_NODESHUTDOWN_NODESHUTDOWN_H
#define CK_NODESHUTDOWN_NODESHUTDOWN_H

#include "util/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* upstream's reasons and messages */
#define NODESHUTDOWN_REASON "Terminated"
#define NODESHUTDOWN_MESSAGE "Pod was terminated in response to imminent node shutdown."
#define NODESHUTDOWN_NOT_ADMITTED_REASON "NodeShutdown"
#define NODESHUTDOWN_NOT_ADMITTED_MESSAGE "Pod was rejected as the node is shutting down."
#define NODESHUTDOWN_STATE_FILE "graceful_node_shutdown_state"
#define NODESHUTDOWN_LOGIND_DROPIN_DIR "/etc/systemd/logind.conf.d"
#define NODESHUTDOWN_LOGIND_DROPIN "99-kubelet.conf"

/* A ShutdownGracePeriodByPodPriority: pods of this priority and up (to
 * the next period's) get grace_s seconds in all. */
struct shutdown_period {
        int32_t priority;
        int64_t grace_s;
};

/* The periods in use, sorted by priority (upstream newPodManager): the
 * by-priority list when it has any, else grace_ms and critical_ms as
 * migrateConfig makes them (priority 0: grace - critical, system-critical
 * 2000000000: critical).  Returns how many in *out (a new array); 0, and
 * *out NULL, when graceful shutdown is off (no period, or critical >
 * grace). */
size_t nodeshutdown_periods(int64_t grace_ms, int64_t critical_ms,
                            const struct shutdown_period *by_priority, size_t n_by_priority,
                            struct shutdown_period **out);

/* upstream periodRequested: the sum of the periods, in seconds. */
int64_t nodeshutdown_period_requested(const struct shutdown_period *p, size_t n);

/* upstream groupByPriority: the index of the period (n > 0) a pod of this
 * priority belongs to: the last whose priority is below it, or the first
 * equal to it; the first when all are above. */
size_t nodeshutdown_group_of(const struct shutdown_period *p, size_t n, int32_t priority);

/* The grace period a pod is given in its group: the group's, or the pod's
 * own terminationGracePeriodSeconds when smaller (pod_grace_s < 0: unset). */
int64_t nodeshutdown_pod_grace(int64_t group_grace_s, int64_t pod_grace_s);

/* upstream OverrideInhibitDelay: writes dir/99-kubelet.conf (dir made if
 * missing) with InhibitDelayMaxSec=seconds, atomically. */
int nodeshutdown_write_logind_dropin(const char *dir, int64_t seconds, ck_error_t *err);

/* The state file ({"startTime":..., "endTime":...}, Go's time.Time JSON;
 * an unset time is Go's zero time).  Times in ns since the epoch, 0: unset.
 * Load of a missing file: both 0. */
int nodeshutdown_state_store(const char *path, int64_t start_ns, int64_t end_ns, ck_error_t *err);
int nodeshutdown_state_load(const char *path, int64_t *start_ns, int64_t *end_ns, ck_error_t *err);
/* The file's text (a new string), and its reading (-1, both 0, when it is
 * not a state; times before 1970 or past 2262 included). */
char *nodeshutdown_state_format(int64_t start_ns, int64_t end_ns);
int nodeshutdown_state_parse(const char *text, size_t len, int64_t *start_ns, int64_t *end_ns);

/* ---- the logind client ---- */

struct logind;

/* Connects to the system bus (address NULL: $DBUS_SYSTEM_BUS_ADDRESS, else
 * unix:path=/run/dbus/system_bus_socket). */
int logind_open(const char *address, struct logind **out, ck_error_t *err);
void logind_close(struct logind *l);

/* logind's InhibitDelayMaxUSec, in microseconds. */
int logind_inhibit_delay_max(struct logind *l, uint64_t *usec, ck_error_t *err);

/* Takes a delay inhibitor lock on shutdown ("kubelet"): *fd, the lock
 * (O_CLOEXEC), held until closed. */
int logind_inhibit(struct logind *l, int *fd, ck_error_t *err);

/* Makes logind read its configuration again (systemd's KillUnit of
 * systemd-logind.service with SIGHUP). */
int logind_reload(struct logind *l, ck_error_t *err);

/* Subscribes to logind's PrepareForShutdown signal. */
int logind_watch(struct logind *l, ck_error_t *err);

/* Waits up to timeout_ms (< 0: no limit) for the next PrepareForShutdown,
 * or until wake_fd (may be -1) is readable.  Returns 1 with *active (true:
 * shutting down, false: cancelled), 0 on timeout or wake, -1 when the
 * connection is lost. */
int logind_next(struct logind *l, int wake_fd, int64_t timeout_ms, bool *active, ck_error_t *err);

#endif
