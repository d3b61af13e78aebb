/* SPDX-License-Identifier: Apache-2.0 */
#include "kubelet/eviction_loop.h"
#include "client/events.h"
#include "kubelet/admission.h"
#include "kubelet/gc_loop.h"
#include "metrics/kubelet_metrics.h"
#include "stats/stats.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/sleep.h"
#include "util/xalloc.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define MONITORING_INTERVAL_MS 10000
#define CLEANUP_TIMEOUT_MS 30000 /* upstream podCleanupTimeout */
#define CLEANUP_POLL_MS 1000     /* upstream podCleanupPollFreq */
#define IMMEDIATE_GRACE_S 1      /* upstream immediateEvictionGracePeriodSeconds */

struct eviction_loop {
        struct eviction_config config;
        struct eviction_state *state;
        struct stats_provider *stats;
        struct gc_loop *gc;
        struct event_recorder *recorder;
        char *node_name;
        int64_t interval_ms;
        struct pod **(*active_pods)(void *ctx, size_t *n);
        bool (*pod_finished)(void *ctx, const char *uid);
        void (*evict)(void *ctx, const struct pod *pod, const char *reason, const char *message,
                      int64_t grace_s, bool disruption);
        void *ctx;
        atomic_uint conditions;
        atomic_uint *publish;

        pthread_t thread;
        pthread_mutex_t lock;
        pthread_cond_t cond;
        atomic_bool stop;
};

unsigned eviction_loop_conditions(const struct eviction_loop *l)
{
        return l ? atomic_load(&((struct eviction_loop *)l)->conditions) : 0;
}

static void observations_of(const struct stats_eviction_view *v, struct eviction_observation *obs)
{
        const struct stats_signal *src[EVICTION_N_SIGNALS] = {
            [EVICTION_MEMORY_AVAILABLE] = &v->memory,
            [EVICTION_ALLOCATABLE_MEMORY_AVAILABLE] = &v->allocatable_memory,
            [EVICTION_NODEFS_AVAILABLE] = &v->nodefs,
            [EVICTION_NODEFS_INODES_FREE] = &v->nodefs_inodes,
            [EVICTION_IMAGEFS_AVAILABLE] = &v->imagefs,
            [EVICTION_IMAGEFS_INODES_FREE] = &v->imagefs_inodes,
            [EVICTION_CONTAINERFS_AVAILABLE] = &v->containerfs,
            [EVICTION_CONTAINERFS_INODES_FREE] = &v->containerfs_inodes,
            [EVICTION_PID_AVAILABLE] = &v->pid,
        };
        for (int i = 0; i < EVICTION_N_SIGNALS; i++)
                obs[i] = (struct eviction_observation){src[i]->ok, src[i]->available,
                                                       src[i]->capacity, src[i]->time_ns};
}

/* upstream debugLogObservations: each signal observed, at -v=3 */
static void log_observations(const char *what, const struct eviction_observation *obs)
{
        if (!LOG_V(3))
                return;
        for (int i = 0; i < EVICTION_N_SIGNALS; i++) {
                if (!obs[i].ok)
                        continue;
                char at[32];
                LOG_INFO(3, "Eviction manager:",
                         "log=\"%s\" signal=\"%s\" resourceName=\"%s\" available=%" PRId64
                         " capacity=%" PRId64 " time=\"%s\"",
                         what, eviction_signal_name(i), eviction_signal_resource(i),
                         obs[i].available, obs[i].capacity,
                         obs[i].time_ns ? fs_format_rfc3339(obs[i].time_ns, at) : "");
        }
}

static bool disk_signal(enum eviction_signal s)
{
        return s != EVICTION_MEMORY_AVAILABLE && s != EVICTION_ALLOCATABLE_MEMORY_AVAILABLE &&
               s != EVICTION_PID_AVAILABLE;
}

static void node_event(struct eviction_loop *l, const char *reason, const char *fmt,
                       const char *arg)
{
        struct event_object obj = {.kind = "Node", .name = l->node_name, .uid = l->node_name};
        event_emit(l->recorder, &obj, EVENT_WARNING, reason, fmt, arg);
}

/* A pod's usage and requests for the ranking and the message; NULL
 * without stats. */
struct pod_usage {
        struct eviction_pod_stats stats;
        struct eviction_container_stats *containers;
        bool found;
};

/* upstream's filesystem layout: the image filesystem is another than the
 * node's (the root directory's) when their size or inodes differ */
static bool dedicated_imagefs(const struct stats_eviction_view *v)
{
        return v->imagefs.ok && v->nodefs.ok &&
               (v->imagefs.capacity != v->nodefs.capacity ||
                v->imagefs_inodes.capacity != v->nodefs_inodes.capacity);
}

static bool nodefs_signal(enum eviction_signal s)
{
        return s == EVICTION_NODEFS_AVAILABLE || s == EVICTION_NODEFS_INODES_FREE;
}

/* upstream's disk measure per signal: everything on a single filesystem;
 * with a dedicated image filesystem, logs and local volumes for nodefs,
 * the containers' rootfs for imagefs */
static int64_t disk_measure(const struct stats_eviction_pod *sp, enum eviction_signal s,
                            bool dedicated)
{
        if (!dedicated)
                return sp->disk_used;
        if (nodefs_signal(s))
                return sp->logs_used + sp->volumes_used;
        return sp->rootfs_used;
}

static void usage_of(const struct pod *pod, const struct stats_eviction_view *v,
                     enum eviction_signal signal, struct pod_usage *u)
{
        memset(u, 0, sizeof(*u));
        const struct stats_eviction_pod *sp = NULL;
        for (size_t i = 0; i < v->n_pods && sp == NULL; i++)
                if (strcmp(v->pods[i].uid, pod->uid) == 0)
                        sp = &v->pods[i];
        if (sp == NULL)
                return;
        u->found = true;
        int64_t cpu = 0;
        admission_pod_requests(pod, &cpu, &u->stats.memory_request);
        u->stats.disk_request = admission_pod_ephemeral_storage_request(pod);
        u->stats.has_memory = sp->has_memory;
        u->stats.memory_working_set = sp->memory_working_set;
        u->stats.has_processes = sp->has_processes;
        u->stats.processes = sp->processes;
        u->stats.disk_used = disk_measure(sp, signal, dedicated_imagefs(v));
        u->stats.inodes_used = sp->inodes_used;
        u->containers = xcalloc(sp->n_containers + 1, sizeof(*u->containers));
        for (size_t i = 0; i < sp->n_containers; i++)
                u->containers[i] = (struct eviction_container_stats){
                    sp->containers[i].name, sp->containers[i].has_memory,
                    sp->containers[i].has_disk, sp->containers[i].memory_working_set,
                    sp->containers[i].disk_used};
        u->stats.containers = u->containers;
        u->stats.n_containers = sp->n_containers;
}

/* upstream's grace period of an eviction: 1 s for a hard threshold; for a
 * soft one evictionMaxPodGracePeriod, or the pod's own when smaller (an
 * override below 1 s is 1 s, as the pod workers clamp it) */
static int64_t grace_of(const struct eviction_loop *l, bool hard, const struct pod *pod)
{
        if (hard)
                return IMMEDIATE_GRACE_S;
        int64_t g = l->config.max_pod_grace_period_s;
        if (pod->termination_grace_period_seconds < g)
                g = pod->termination_grace_period_seconds;
        return g < 1 ? 1 : g;
}

/* Ranks the active pods for the threshold's signal and evicts the first one
 * that is not critical.  Returns its UID (new string), or NULL. */
static char *evict_one(struct eviction_loop *l, const struct eviction_threshold *t, bool hard,
                       const struct eviction_observation *obs, const struct stats_eviction_view *v)
{
        size_t n = 0;
        struct pod **pods = l->active_pods(l->ctx, &n);
        char *evicted = NULL;
        if (n == 0) {
                LOG_INFO(0, "Eviction manager: eviction thresholds have been met, but no pods are "
                            "active to evict");
                free(pods);
                return NULL;
        }
        struct pod_usage *u = xcalloc(n, sizeof(*u));
        const struct eviction_pod_stats **stats = xcalloc(n, sizeof(*stats));
        size_t *idx = xcalloc(n, sizeof(*idx));
        for (size_t i = 0; i < n; i++) {
                usage_of(pods[i], v, t->signal, &u[i]);
                stats[i] = u[i].found ? &u[i].stats : NULL;
                idx[i] = i;
        }
        eviction_rank(t->signal, pods, stats, idx, n);
        for (size_t k = 0; k < n && evicted == NULL; k++) {
                const struct pod *pod = pods[idx[k]];
                if (pod_is_critical(pod)) {
                        LOG_INFO(2, "Eviction manager: cannot evict a critical pod", "pod=\"%s\"",
                                 pod_full_name(pod));
                        continue;
                }
                cleanup_free char *msg = eviction_message(t, obs, pod, stats[idx[k]]);
                int64_t grace = grace_of(l, hard, pod);
                LOG_INFO(0, "Eviction manager: pod is evicted successfully",
                         "pod=\"%s\" signal=\"%s\"", pod_full_name(pod),
                         eviction_signal_name(t->signal));
                event_emit_pod(l->recorder, pod, NULL, EVENT_WARNING, "Evicted", "%s", msg);
                l->evict(l->ctx, pod, "Evicted", msg, grace, true);
                kmetrics_eviction(eviction_signal_name(t->signal),
                                  obs[t->signal].time_ns
                                      ? (double)(fs_now_real_ns() - obs[t->signal].time_ns) / 1e9
                                      : -1);
                evicted = xstrdup(pod->uid);
        }
        if (evicted == NULL)
                LOG_ERROR("Eviction manager: unable to evict any pods from the node");
        for (size_t i = 0; i < n; i++) {
                free(u[i].containers);
                pod_unref(pods[i]);
        }
        free(u);
        free(stats);
        free(idx);
        free(pods);
        return evicted;
}

/* upstream localStorageEviction: each active pod over one of its local
 * storage limits is evicted (at once, no DisruptionTarget, several in one
 * look).  Returns their UIDs (a NULL-terminated array), or NULL. */
static char **evict_over_limits(struct eviction_loop *l, const struct stats_eviction_view *v)
{
        size_t n = 0, n_evicted = 0;
        struct pod **pods = l->active_pods(l->ctx, &n);
        char **evicted = NULL;
        bool dedicated = dedicated_imagefs(v);
        for (size_t i = 0; i < n; i++) {
                const struct stats_eviction_pod *sp = NULL;
                for (size_t j = 0; j < v->n_pods && sp == NULL; j++)
                        if (strcmp(v->pods[j].uid, pods[i]->uid) == 0)
                                sp = &v->pods[j];
                if (sp == NULL)
                        continue;
                struct eviction_volume_usage *vols = xcalloc(sp->n_volumes + 1, sizeof(*vols));
                for (size_t j = 0; j < sp->n_volumes; j++)
                        vols[j] = (struct eviction_volume_usage){sp->volumes[j].name,
                                                                 sp->volumes[j].used};
                struct eviction_container_usage *ctrs =
                    xcalloc(sp->n_containers + 1, sizeof(*ctrs));
                for (size_t j = 0; j < sp->n_containers; j++)
                        ctrs[j] = (struct eviction_container_usage){
                            sp->containers[j].name, sp->containers[j].has_rootfs,
                            sp->containers[j].has_logs, sp->containers[j].rootfs_used,
                            sp->containers[j].logs_used};
                struct eviction_local_usage u = {.volumes = vols,
                                                 .n_volumes = sp->n_volumes,
                                                 .has_ephemeral = sp->has_ephemeral,
                                                 .ephemeral_used = sp->ephemeral_used,
                                                 .containers = ctrs,
                                                 .n_containers = sp->n_containers,
                                                 .dedicated_imagefs = dedicated};
                u.pod_limit = admission_pod_ephemeral_storage_limit(pods[i], &u.has_pod_limit);
                const char *signal = NULL;
                cleanup_free char *msg = eviction_local_storage(pods[i], &u, &signal);
                free(vols);
                free(ctrs);
                if (msg == NULL)
                        continue;
                if (pod_is_critical(pods[i])) {
                        LOG_INFO(2, "Eviction manager: cannot evict a critical pod", "pod=\"%s\"",
                                 pod_full_name(pods[i]));
                        continue;
                }
                LOG_INFO(0, "Eviction manager: pod is over its local storage limit",
                         "pod=\"%s\" signal=\"%s\"", pod_full_name(pods[i]), signal);
                event_emit_pod(l->recorder, pods[i], NULL, EVENT_WARNING, "Evicted", "%s", msg);
                l->evict(l->ctx, pods[i], "Evicted", msg, IMMEDIATE_GRACE_S, false);
                kmetrics_eviction(signal, -1);
                if (evicted == NULL)
                        evicted = xcalloc(n + 1, sizeof(*evicted));
                evicted[n_evicted++] = xstrdup(pods[i]->uid);
        }
        for (size_t i = 0; i < n; i++)
                pod_unref(pods[i]);
        free(pods);
        return evicted;
}

static void free_uids(char **uids)
{
        for (size_t i = 0; uids && uids[i]; i++)
                free(uids[i]);
        free(uids);
}

/* The pods' usage is read when a pass needs it: a pod has a local storage
 * limit, or a threshold is met and the pods must be ranked.  Otherwise the
 * node's signals alone: a pass then costs no CRI listing (one ImageFsInfo)
 * and no walk of the pods' cgroups (upstream reads cAdvisor's cache, which
 * its housekeeping refreshes every 10 s whoever asks). */
static bool any_local_limits(struct eviction_loop *l)
{
        size_t n = 0;
        struct pod **pods = l->active_pods(l->ctx, &n);
        bool any = false;
        for (size_t i = 0; i < n; i++) {
                bool has_pod_limit = false;
                admission_pod_ephemeral_storage_limit(pods[i], &has_pod_limit);
                any = any || eviction_has_local_limits(pods[i], has_pod_limit);
                pod_unref(pods[i]);
        }
        free(pods);
        return any;
}

/* upstream synchronize; returns the UIDs of the pods evicted (a
 * NULL-terminated array), or NULL */
static char **synchronize(struct eviction_loop *l)
{
        struct stats_eviction_view v;
        cleanup_error ck_error_t err = NULL;
        bool pods = any_local_limits(l);
        if (stats_eviction_view(l->stats, false, pods, &v, &err) < 0) {
                LOG_ERROR("Eviction manager: failed to get summary stats", "err=\"%s\"",
                          ck_error_msg(err));
                return NULL;
        }
        struct eviction_observation obs[EVICTION_N_SIGNALS];
        observations_of(&v, obs);
        if (!pods && eviction_still_met(l->state, obs)) {
                /* a threshold is met: the pods' usage, to rank them, and the
                 * observations of that same snapshot, so that the next pass
                 * on it sees no new observation (upstream's
                 * thresholdsUpdatedStats).  When the pods cannot be read,
                 * the node's observations still set the conditions; no pod
                 * is evicted. */
                struct stats_eviction_view full;
                if (stats_eviction_view(l->stats, false, true, &full, &err) == 0) {
                        stats_eviction_view_release(&v);
                        v = full;
                        observations_of(&v, obs);
                } else {
                        LOG_ERROR("Eviction manager: failed to get summary stats", "err=\"%s\"",
                                  ck_error_msg(err));
                        ck_error_release(&err);
                }
        }
        log_observations("observations", obs);
        struct eviction_decision d;
        eviction_observe(l->state, obs, fs_now_mono_ms(), &d);
        unsigned before = atomic_exchange(&l->conditions, d.conditions);
        if (l->publish)
                atomic_store(l->publish, d.conditions);
        if (before != d.conditions)
                LOG_INFO(0, "Eviction manager: node conditions",
                         "memoryPressure=%s "
                         "diskPressure=%s pidPressure=%s",
                         d.conditions & EVICTION_MEMORY_PRESSURE ? "true" : "false",
                         d.conditions & EVICTION_DISK_PRESSURE ? "true" : "false",
                         d.conditions & EVICTION_PID_PRESSURE ? "true" : "false");
        char **evicted = evict_over_limits(l, &v);
        if (evicted)
                goto out;
        if (d.threshold < 0) {
                LOG_INFO(3, "Eviction manager: no resources are starved");
                goto out;
        }
        const struct eviction_threshold *t = eviction_state_threshold(l->state, d.threshold);
        const char *resource = eviction_signal_resource(t->signal);
        LOG_INFO(0, "Eviction manager: attempting to reclaim", "resourceName=\"%s\"", resource);
        node_event(l, "EvictionThresholdMet", "Attempting to reclaim %s", resource);
        /* upstream's reclaim functions: none for nodefs with a dedicated
         * image filesystem (neither images nor containers are there) */
        if (disk_signal(t->signal) && l->gc &&
            !(nodefs_signal(t->signal) && dedicated_imagefs(&v))) {
                /* node-level resources first: dead containers, unused images */
                if (gc_loop_reclaim(l->gc, &err) < 0) {
                        LOG_ERROR("Eviction manager: failed to reclaim", "err=\"%s\"",
                                  ck_error_msg(err));
                        ck_error_release(&err);
                }
                struct stats_eviction_view fresh;
                if (stats_eviction_view(l->stats, true, false, &fresh, &err) == 0) {
                        struct eviction_observation now[EVICTION_N_SIGNALS];
                        observations_of(&fresh, now);
                        log_observations("observations after resource reclaim", now);
                        bool still = eviction_still_met(l->state, now);
                        stats_eviction_view_release(&fresh);
                        if (!still) {
                                LOG_INFO(0,
                                         "Eviction manager: able to reduce resource pressure "
                                         "without evicting pods.",
                                         "resourceName=\"%s\"", resource);
                                goto out;
                        }
                } else {
                        LOG_ERROR("Eviction manager: failed to get summary stats after "
                                  "resource reclaim",
                                  "err=\"%s\"", ck_error_msg(err));
                        ck_error_release(&err);
                }
        }
        if (!v.has_pods) /* they could not be read above: nothing to rank */
                goto out;
        char *uid = evict_one(l, t, d.hard, obs, &v);
        if (uid) {
                evicted = xcalloc(2, sizeof(*evicted));
                evicted[0] = uid;
        }
out:
        stats_eviction_view_release(&v);
        return evicted;
}

/* upstream waitForPodsCleanup: each evicted pod stopped, or 30 s.  False
 * when the loop is stopped meanwhile. */
static bool wait_for_cleanup(struct eviction_loop *l, char **uids)
{
        int64_t until = fs_now_mono_ms() + CLEANUP_TIMEOUT_MS;
        for (size_t i = 0; uids[i]; i++) {
                while (!l->pod_finished(l->ctx, uids[i])) {
                        if (fs_now_mono_ms() >= until) {
                                LOG_INFO(0,
                                         "Eviction manager: timed out waiting for pods to be "
                                         "cleaned up",
                                         "podUID=\"%s\"", uids[i]);
                                return true;
                        }
                        if (!sleep_unless_stopped(&l->lock, &l->cond, &l->stop, CLEANUP_POLL_MS))
                                return false;
                }
        }
        return true;
}

static void *eviction_thread(void *arg)
{
        struct eviction_loop *l = arg;
        for (;;) {
                char **uids = synchronize(l);
                if (uids == NULL) {
                        if (!sleep_unless_stopped(&l->lock, &l->cond, &l->stop, l->interval_ms))
                                return NULL;
                        continue;
                }
                /* then look again at once */
                bool go_on = wait_for_cleanup(l, uids);
                free_uids(uids);
                if (!go_on || atomic_load(&l->stop))
                        return NULL;
        }
}

int eviction_loop_start(const struct eviction_loop_options *o, struct eviction_loop **out,
                        ck_error_t *err)
{
        *out = NULL;
        struct eviction_loop *l = xcalloc(1, sizeof(*l));
        l->config = *o->config;
        l->config.thresholds = xcalloc(o->config->n + 1, sizeof(*l->config.thresholds));
        if (o->config->n)
                memcpy(l->config.thresholds, o->config->thresholds,
                       o->config->n * sizeof(*l->config.thresholds));
        l->state = eviction_state_new(&l->config);
        l->stats = o->stats;
        l->gc = o->gc;
        l->recorder = o->recorder;
        l->node_name = xstrdup(o->node_name);
        l->interval_ms = o->interval_ms > 0 ? o->interval_ms : MONITORING_INTERVAL_MS;
        l->publish = o->publish;
        l->active_pods = o->active_pods;
        l->pod_finished = o->pod_finished;
        l->evict = o->evict;
        l->ctx = o->ctx;
        pthread_mutex_init(&l->lock, NULL);
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&l->cond, &ca);
        pthread_condattr_destroy(&ca);
        int rc = pthread_create(&l->thread, NULL, eviction_thread, l);
        if (rc != 0) {
                l->thread = 0;
                eviction_loop_stop(l);
                return ck_error_make(err, rc, "eviction manager thread");
        }
        LOG_INFO(0, "Eviction manager: starting control loop", "thresholds=%zu", l->config.n);
        *out = l;
        return 0;
}

void eviction_loop_stop(struct eviction_loop *l)
{
        if (l == NULL)
                return;
        if (l->thread) {
                pthread_mutex_lock(&l->lock);
                atomic_store(&l->stop, true);
                pthread_cond_broadcast(&l->cond);
                pthread_mutex_unlock(&l->lock);
                pthread_join(l->thread, NULL);
        }
        eviction_state_free(l->state);
        eviction_config_release(&l->config);
        free(l->node_name);
        pthread_mutex_destroy(&l->lock);
        pthread_cond_destroy(&l->cond);
        free(l);
}
