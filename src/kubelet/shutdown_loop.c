/* SPDX-License-Identifier: Apache-2.0 */
#include "kubelet/shutdown_loop.h"
#include "api/pod.h"
#include "client/events.h"
#include "metrics/kubelet_metrics.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/goduration.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define RECONNECT_PERIOD_MS 1000 /* upstream dbusReconnectPeriod */
#define POD_POLL_MS 100
#define DELAY_CHECK_STEPS 5 /* upstream's backoff: 100 ms doubled, 5 steps */

struct shutdown_loop {
        struct shutdown_period *periods;
        size_t n_periods;
        char *state_path;
        char *dropin_dir;
        char *bus_address;
        struct event_recorder *recorder;
        char *node_name;
        struct pod **(*active_pods)(void *ctx, size_t *n);
        bool (*pod_finished)(void *ctx, const char *uid);
        void (*kill)(void *ctx, const struct pod *pod, int64_t grace_s);
        void (*sync_node_status)(void *ctx);
        void *ctx;
        atomic_bool *publish;

        struct logind *bus;
        int lock_fd; /* the inhibitor lock, -1 when not held */
        int wake_fd; /* an eventfd: written at stop */
        atomic_bool stop;
        atomic_bool shutting_down;
        pthread_t thread;
};

static void node_event(struct shutdown_loop *l, const char *message)
{
        struct event_object obj = {.kind = "Node", .name = l->node_name, .uid = l->node_name};
        event_emit(l->recorder, &obj, EVENT_NORMAL, "NodeShutdown", "%s", message);
}

/* sleeps ms unless stopped first (the eventfd); false when stopped */
static bool pause_unless_stopped(struct shutdown_loop *l, int64_t ms)
{
        struct pollfd p = {.fd = l->wake_fd, .events = POLLIN};
        (void)poll(&p, 1, (int)ms); /* an error (EINTR) ends the pause early */
        return !atomic_load(&l->stop);
}

static void release_lock(struct shutdown_loop *l)
{
        if (l->lock_fd >= 0)
                close(l->lock_fd);
        l->lock_fd = -1;
}

/* upstream acquireInhibitLock: the new lock first, then the old one
 * released */
static int acquire_lock(struct shutdown_loop *l, ck_error_t *err)
{
        int fd;
        if (logind_inhibit(l->bus, &fd, err) < 0)
                return -1;
        release_lock(l);
        l->lock_fd = fd;
        return 0;
}

/* upstream start(): logind's delay raised when smaller than the periods,
 * the lock taken, the signal watched */
static int connect_logind(struct shutdown_loop *l, ck_error_t *err)
{
        logind_close(l->bus);
        l->bus = NULL;
        if (logind_open(l->bus_address, &l->bus, err) < 0)
                return -1;
        uint64_t delay_us;
        if (logind_inhibit_delay_max(l->bus, &delay_us, err) < 0)
                return -1;
        int64_t requested_s = nodeshutdown_period_requested(l->periods, l->n_periods);
        /* upstream compares durations: a sum of (unchecked) negative
         * periods is never above logind's delay */
        uint64_t requested_us = requested_s > 0 ? (uint64_t)requested_s * 1000000 : 0;
        if (requested_s > 0 && requested_us > delay_us) {
                if (nodeshutdown_write_logind_dropin(l->dropin_dir, requested_s, err) < 0)
                        return ck_error_wrap(
                            err, "unable to override inhibit delay by shutdown manager");
                if (logind_reload(l->bus, err) < 0)
                        return -1;
                int64_t wait_ms = 100;
                int attempt = 0;
                for (;;) {
                        attempt++;
                        if (logind_inhibit_delay_max(l->bus, &delay_us, err) < 0)
                                return -1;
                        if (requested_us <= delay_us)
                                break;
                        if (attempt == DELAY_CHECK_STEPS) {
                                char want[32], have[32];
                                go_duration_format_ms(requested_s * 1000, want, sizeof(want));
                                go_duration_format_ms((int64_t)(delay_us / 1000), have,
                                                      sizeof(have));
                                return ck_error_make(
                                    err, 0,
                                    "node shutdown manager was timed out after %d attempts "
                                    "waiting for logind InhibitDelayMaxSec to update to %s "
                                    "(ShutdownGracePeriod), current value is %s",
                                    attempt, want, have);
                        }
                        LOG_INFO(3, "InhibitDelayMaxSec still less than requested, retrying",
                                 "attempt=%d current=%" PRIu64 "us requested=%" PRId64 "s", attempt,
                                 delay_us, requested_s);
                        if (!pause_unless_stopped(l, wait_ms))
                                return ck_error_make(err, 0, "stopped");
                        wait_ms *= 2;
                }
        }
        if (acquire_lock(l, err) < 0)
                return -1;
        if (logind_watch(l->bus, err) < 0) {
                release_lock(l);
                return -1;
        }
        return 0;
}

static bool group_finished(struct shutdown_loop *l, struct pod **pods, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (pods[i] && !l->pod_finished(l->ctx, pods[i]->uid))
                        return false;
        return true;
}

/* upstream killPods: each group in turn, lowest priority first; its pods
 * told to stop, then waited for until the group's period ends */
static void kill_pods(struct shutdown_loop *l)
{
        size_t n = 0;
        struct pod **pods = l->active_pods(l->ctx, &n);
        size_t *group = xcalloc(n + 1, sizeof(*group));
        for (size_t i = 0; i < n; i++)
                group[i] = nodeshutdown_group_of(l->periods, l->n_periods, pods[i]->priority);
        struct pod **members = xcalloc(n + 1, sizeof(*members));
        for (size_t g = 0; g < l->n_periods && !atomic_load(&l->stop); g++) {
                size_t m = 0;
                for (size_t i = 0; i < n; i++)
                        if (group[i] == g)
                                members[m++] = pods[i];
                if (m == 0)
                        continue;
                int64_t period_s = l->periods[g].grace_s;
                for (size_t i = 0; i < m; i++) {
                        const struct pod *p = members[i];
                        int64_t grace =
                            nodeshutdown_pod_grace(period_s, p->termination_grace_period_seconds);
                        LOG_INFO(1, "Shutdown manager killing pod with gracePeriod",
                                 "pod=\"%s\" gracePeriod=%" PRId64, pod_full_name(p), grace);
                        l->kill(l->ctx, p, grace);
                }
                int64_t until = fs_now_mono_ms() + period_s * 1000;
                bool done;
                while (!(done = group_finished(l, members, m)) && fs_now_mono_ms() < until)
                        if (!pause_unless_stopped(l, POD_POLL_MS))
                                break;
                if (done)
                        LOG_INFO(1, "Done waiting for all pods in group to terminate",
                                 "gracePeriod=%" PRId64 " priority=%d", period_s,
                                 l->periods[g].priority);
                else
                        LOG_INFO(1, "Shutdown manager pod killing time out",
                                 "gracePeriod=%" PRId64 " priority=%d", period_s,
                                 l->periods[g].priority);
        }
        for (size_t i = 0; i < n; i++)
                pod_unref(pods[i]);
        free(pods);
        free(members);
        free(group);
}

static void store_state(struct shutdown_loop *l, int64_t start_ns, int64_t end_ns)
{
        cleanup_error ck_error_t err = NULL;
        if (nodeshutdown_state_store(l->state_path, start_ns, end_ns, &err) < 0)
                LOG_ERROR("Failed to store graceful shutdown state", "err=\"%s\"",
                          ck_error_msg(err));
}

/* upstream processShutdownEvent */
static void process_shutdown(struct shutdown_loop *l)
{
        LOG_INFO(1, "Shutdown manager processing shutdown event");
        int64_t start = fs_now_real_ns();
        store_state(l, start, 0);
        kmetrics_graceful_shutdown((double)(start / 1000000000), 0);
        kill_pods(l);
        int64_t end = fs_now_real_ns();
        store_state(l, start, end);
        kmetrics_graceful_shutdown((double)(start / 1000000000), (double)(end / 1000000000));
        release_lock(l);
        LOG_INFO(1, "Shutdown manager completed processing shutdown event, node will shutdown "
                    "shortly");
}

static void *shutdown_thread(void *arg)
{
        struct shutdown_loop *l = arg;
        while (!atomic_load(&l->stop)) {
                if (l->bus == NULL) {
                        if (!pause_unless_stopped(l, RECONNECT_PERIOD_MS))
                                break;
                        LOG_INFO(1, "Restarting watch for node shutdown events");
                        cleanup_error ck_error_t err = NULL;
                        if (connect_logind(l, &err) < 0) {
                                LOG_ERROR("Unable to watch the node for shutdown events",
                                          "err=\"%s\"", ck_error_msg(err));
                                logind_close(l->bus);
                                l->bus = NULL;
                                continue;
                        }
                }
                bool active;
                cleanup_error ck_error_t err = NULL;
                int r = logind_next(l->bus, l->wake_fd, -1, &active, &err);
                if (r == 0)
                        continue; /* stopped */
                if (r < 0) {
                        LOG_ERROR("Ended to watching the node for shutdown events", "err=\"%s\"",
                                  ck_error_msg(err));
                        logind_close(l->bus);
                        l->bus = NULL;
                        continue;
                }
                LOG_INFO(1, "Shutdown manager detected new shutdown event", "event=\"%s\"",
                         active ? "shutdown" : "cancelled");
                node_event(l, active ? "Shutdown manager detected shutdown event"
                                     : "Shutdown manager detected shutdown cancellation");
                atomic_store(&l->shutting_down, active);
                if (l->publish)
                        atomic_store(l->publish, active);
                if (active) {
                        if (l->sync_node_status)
                                l->sync_node_status(l->ctx);
                        process_shutdown(l);
                } else if (acquire_lock(l, &err) < 0) {
                        LOG_ERROR("Unable to take the shutdown inhibitor lock again", "err=\"%s\"",
                                  ck_error_msg(err));
                }
        }
        return NULL;
}

static void set_metrics(struct shutdown_loop *l)
{
        int64_t start, end;
        cleanup_error ck_error_t err = NULL;
        if (nodeshutdown_state_load(l->state_path, &start, &end, &err) < 0) {
                LOG_ERROR("Failed to load graceful shutdown state", "err=\"%s\"",
                          ck_error_msg(err));
                return;
        }
        kmetrics_graceful_shutdown((double)(start / 1000000000), (double)(end / 1000000000));
}

int shutdown_loop_start(const struct shutdown_loop_options *o, struct shutdown_loop **out,
                        ck_error_t *err)
{
        *out = NULL;
        struct shutdown_loop *l = xcalloc(1, sizeof(*l));
        l->periods = xcalloc(o->n_periods + 1, sizeof(*l->periods));
        memcpy(l->periods, o->periods, o->n_periods * sizeof(*l->periods));
        l->n_periods = o->n_periods;
        l->state_path = xstrdup(o->state_path);
        l->dropin_dir = xstrdup(o->dropin_dir ? o->dropin_dir : NODESHUTDOWN_LOGIND_DROPIN_DIR);
        l->bus_address = o->bus_address ? xstrdup(o->bus_address) : NULL;
        l->recorder = o->recorder;
        l->node_name = xstrdup(o->node_name);
        l->active_pods = o->active_pods;
        l->pod_finished = o->pod_finished;
        l->kill = o->kill;
        l->sync_node_status = o->sync_node_status;
        l->ctx = o->ctx;
        l->publish = o->publish;
        l->lock_fd = -1;
        l->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (l->wake_fd < 0) {
                int e = errno;
                shutdown_loop_stop(l);
                return ck_error_make(err, e, "node shutdown manager: eventfd");
        }
        for (size_t i = 0; i < l->n_periods; i++)
                LOG_INFO(0, "Creating node shutdown manager",
                         "shutdownGracePeriodByPodPriority={\"priority\":%d,"
                         "\"shutdownGracePeriodSeconds\":%" PRId64 "}",
                         l->periods[i].priority, l->periods[i].grace_s);
        if (connect_logind(l, err) < 0) {
                shutdown_loop_stop(l);
                return -1;
        }
        int rc = pthread_create(&l->thread, NULL, shutdown_thread, l);
        if (rc != 0) {
                l->thread = 0;
                shutdown_loop_stop(l);
                return ck_error_make(err, rc, "node shutdown manager thread");
        }
        set_metrics(l);
        *out = l;
        return 0;
}

void shutdown_loop_stop(struct shutdown_loop *l)
{
        if (l == NULL)
                return;
        if (l->thread) {
                atomic_store(&l->stop, true);
                uint64_t one = 1;
                if (write(l->wake_fd, &one, sizeof(one)) < 0)
                        LOG_ERROR("Cannot wake the node shutdown manager", "err=\"%s\"",
                                  strerror(errno));
                pthread_join(l->thread, NULL);
        }
        logind_close(l->bus);
        release_lock(l);
        if (l->wake_fd >= 0)
                close(l->wake_fd);
        free(l->periods);
        free(l->state_path);
        free(l->dropin_dir);
        free(l->bus_address);
        free(l->node_name);
        free(l);
}

bool shutdown_loop_shutting_down(const struct shutdown_loop *l)
{
        return l != NULL && atomic_load(&l->shutting_down);
}
