/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pods' side of eviction: critical pods, the ranking per starved
 * resource (upstream rankMemoryPressure, rankPIDPressure,
 * rankDiskPressureFunc), the evicted pod's message (evictionMessage) and
 * admission under pressure (Admit).
 */
#include "eviction/eviction.h"
#include "api/decode.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void eviction_format_quantity(int64_t v, bool binary, char *buf, size_t size)
{
        cleanup_free char *s =
            binary ? api_format_quantity(v, false) : api_format_quantity(v * 1000, true);
        snprintf(buf, size, "%s", s ? s : "0");
}

/* ---- ranking ---- */

struct rank_ctx {
        enum eviction_signal signal;
        struct pod *const *pods;
        const struct eviction_pod_stats *const *stats;
};

static int cmp_i64_desc(int64_t a, int64_t b)
{
        return a > b ? -1 : a < b ? 1 : 0;
}

static bool disk_signal(enum eviction_signal s)
{
        return s != EVICTION_MEMORY_AVAILABLE && s != EVICTION_ALLOCATABLE_MEMORY_AVAILABLE &&
               s != EVICTION_PID_AVAILABLE;
}

static bool inodes_signal(enum eviction_signal s)
{
        return s == EVICTION_NODEFS_INODES_FREE || s == EVICTION_IMAGEFS_INODES_FREE ||
               s == EVICTION_CONTAINERFS_INODES_FREE;
}

/* upstream exceedMemoryRequests / exceedDiskRequests: a pod without stats,
 * then one whose usage exceeds its request, first */
static int exceeds(const struct rank_ctx *c, const struct eviction_pod_stats *a,
                   const struct eviction_pod_stats *b)
{
        if (a == NULL || b == NULL)
                return a == b ? 0 : a == NULL ? -1 : 1;
        bool ea, eb;
        if (disk_signal(c->signal)) {
                /* for inodes the request is the "inodes" resource: none */
                bool in = inodes_signal(c->signal);
                ea = (in ? a->inodes_used : a->disk_used) > (in ? 0 : a->disk_request);
                eb = (in ? b->inodes_used : b->disk_used) > (in ? 0 : b->disk_request);
        } else {
                /* upstream memoryUsage: no figure is 0 */
                ea = (a->has_memory ? a->memory_working_set : 0) > a->memory_request;
                eb = (b->has_memory ? b->memory_working_set : 0) > b->memory_request;
        }
        return ea == eb ? 0 : ea ? -1 : 1;
}

static int by_rank(const void *x, const void *y, void *arg)
{
        const struct rank_ctx *c = arg;
        size_t i = *(const size_t *)x, j = *(const size_t *)y;
        const struct eviction_pod_stats *a = c->stats[i], *b = c->stats[j];
        int r = 0;
        if (c->signal != EVICTION_PID_AVAILABLE && (r = exceeds(c, a, b)) != 0)
                return r;
        /* lower priority first */
        if (c->pods[i]->priority != c->pods[j]->priority)
                return c->pods[i]->priority < c->pods[j]->priority ? -1 : 1;
        if (a == NULL || b == NULL)
                return a == b ? 0 : a == NULL ? -1 : 1;
        if (c->signal == EVICTION_PID_AVAILABLE) {
                /* upstream processUsage: no figure is 0 */
                r = cmp_i64_desc(a->has_processes ? a->processes : 0,
                                 b->has_processes ? b->processes : 0);
        } else if (disk_signal(c->signal)) {
                /* usage over the ephemeral-storage request (for inodes too,
                 * as upstream) */
                bool in = inodes_signal(c->signal);
                r = cmp_i64_desc((in ? a->inodes_used : a->disk_used) - a->disk_request,
                                 (in ? b->inodes_used : b->disk_used) - b->disk_request);
        } else {
                r = cmp_i64_desc((a->has_memory ? a->memory_working_set : 0) - a->memory_request,
                                 (b->has_memory ? b->memory_working_set : 0) - b->memory_request);
        }
        if (r != 0)
                return r;
        return i < j ? -1 : i > j ? 1 : 0; /* stable */
}

void eviction_rank(enum eviction_signal signal, struct pod *const *pods,
                   const struct eviction_pod_stats *const *stats, size_t *idx, size_t n)
{
        struct rank_ctx c = {signal, pods, stats};
        qsort_r(idx, n, sizeof(*idx), by_rank, &c);
}

/* ---- the message ---- */

/* an app or init container (upstream's message leaves ephemeral ones out) */
static const struct container *find_spec(const struct pod *pod, const char *name)
{
        const struct container *c = pod_find_container(pod, name);
        return c && c != pod_find_ephemeral_container(pod, name) ? c : NULL;
}

char *eviction_message(const struct eviction_threshold *t, const struct eviction_observation *obs,
                       const struct pod *pod, const struct eviction_pod_stats *stats)
{
        const char *resource = eviction_signal_resource(t->signal);
        bool bytes = strcmp(resource, "memory") == 0 || strcmp(resource, "ephemeral-storage") == 0;
        char *msg = xasprintf("The node was low on resource: %s. ", resource);
        const struct eviction_observation *o = &obs[t->signal];
        if (o->ok) {
                char q[64], a[64];
                /* upstream: a percentage's quantity is made BinarySI */
                eviction_format_quantity(eviction_value_quantity(&t->value, o->capacity),
                                         bytes || t->value.quantity == 0, q, sizeof(q));
                eviction_format_quantity(o->available, bytes, a, sizeof(a));
                char *m = xasprintf("%sThreshold quantity: %s, available: %s. ", msg, q, a);
                free(msg);
                msg = m;
        }
        bool memory = strcmp(resource, "memory") == 0;
        bool disk = strcmp(resource, "ephemeral-storage") == 0;
        if (stats == NULL || (!memory && !disk))
                return msg;
        for (size_t i = 0; i < stats->n_containers; i++) {
                const struct eviction_container_stats *cs = &stats->containers[i];
                const struct container *spec = find_spec(pod, cs->name);
                if (spec == NULL)
                        continue;
                int64_t usage, request;
                if (memory) {
                        if (!cs->has_memory)
                                continue;
                        usage = cs->memory_working_set;
                        request = spec->resources.requests.has_memory
                                      ? spec->resources.requests.memory
                                      : 0;
                } else {
                        if (!cs->has_disk)
                                continue;
                        usage = cs->disk_used;
                        request = spec->resources.requests.has_ephemeral_storage
                                      ? spec->resources.requests.ephemeral_storage
                                      : 0;
                }
                if (usage <= request)
                        continue;
                char u[64], r[64];
                eviction_format_quantity(usage, true, u, sizeof(u));
                eviction_format_quantity(request, true, r, sizeof(r));
                char *m = xasprintf("%sContainer %s was using %s, request is %s, has larger "
                                    "consumption of %s. ",
                                    msg, cs->name, u, r, resource);
                free(msg);
                msg = m;
        }
        return msg;
}

/* ---- admission ---- */

/* upstream v1helper.TolerationsTolerateTaint for the taint
 * node.kubernetes.io/memory-pressure:NoSchedule (no value) */
static bool tolerates_memory_pressure(const struct pod *pod)
{
        json_t *tols = json_object_get(json_object_get(pod->raw, "spec"), "tolerations");
        size_t i;
        json_t *t;
        json_array_foreach(tols, i, t)
        {
                const char *effect = json_string_value(json_object_get(t, "effect"));
                const char *key = json_string_value(json_object_get(t, "key"));
                const char *op = json_string_value(json_object_get(t, "operator"));
                const char *value = json_string_value(json_object_get(t, "value"));
                if (effect && *effect && strcmp(effect, "NoSchedule") != 0)
                        continue;
                if (key && *key && strcmp(key, "node.kubernetes.io/memory-pressure") != 0)
                        continue;
                if (op && strcmp(op, "Exists") == 0)
                        return true;
                if ((op == NULL || *op == '\0' || strcmp(op, "Equal") == 0) &&
                    (value == NULL || *value == '\0'))
                        return true;
        }
        return false;
}

bool eviction_admit(unsigned conditions, const struct pod *pod, char **message)
{
        *message = NULL;
        if (conditions == 0 || pod_is_critical(pod))
                return true;
        if (conditions == EVICTION_MEMORY_PRESSURE &&
            (pod_qos_class(pod) != QOS_BEST_EFFORT || tolerates_memory_pressure(pod)))
                return true;
        char list[64] = "";
        static const struct {
                unsigned bit;
                const char *name;
        } names[] = {{EVICTION_MEMORY_PRESSURE, "MemoryPressure"},
                     {EVICTION_DISK_PRESSURE, "DiskPressure"},
                     {EVICTION_PID_PRESSURE, "PIDPressure"}};
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                if (!(conditions & names[i].bit))
                        continue;
                if (list[0])
                        strcat(list, " ");
                strcat(list, names[i].name);
        }
        *message = xasprintf("The node had condition: [%s]. ", list);
        return false;
}

/* ---- local storage limits ---- */

static const struct eviction_volume_usage *volume_usage(const struct eviction_local_usage *u,
                                                        const char *name)
{
        for (size_t i = 0; i < u->n_volumes; i++)
                if (strcmp(u->volumes[i].name, name) == 0)
                        return &u->volumes[i];
        return NULL;
}

/* the emptyDir volumes eviction_local_storage checks */
static bool size_limited(const struct volume *v)
{
        return v->kind == VOLUME_EMPTY_DIR && v->has_size_limit && v->size_limit > 0;
}

/* the containers eviction_local_storage checks */
static bool storage_limited(const struct container *c)
{
        return c->resources.limits.has_ephemeral_storage &&
               c->resources.limits.ephemeral_storage != 0;
}

bool eviction_has_local_limits(const struct pod *pod, bool has_pod_limit)
{
        if (has_pod_limit)
                return true;
        for (size_t i = 0; i < pod->n_volumes; i++)
                if (size_limited(&pod->volumes[i]))
                        return true;
        for (size_t i = 0; i < pod->n_containers; i++)
                if (storage_limited(&pod->containers[i]))
                        return true;
        return false;
}

char *eviction_local_storage(const struct pod *pod, const struct eviction_local_usage *u,
                             const char **signal)
{
        char q[64];
        for (size_t i = 0; i < pod->n_volumes; i++) {
                const struct volume *v = &pod->volumes[i];
                if (!size_limited(v))
                        continue;
                const struct eviction_volume_usage *vu = volume_usage(u, v->name);
                if (vu == NULL || vu->used <= v->size_limit)
                        continue;
                eviction_format_quantity(v->size_limit, true, q, sizeof(q));
                *signal = "emptydirfs.limit";
                return xasprintf("Usage of EmptyDir volume \"%s\" exceeds the limit \"%s\". ",
                                 v->name, q);
        }
        if (u->has_pod_limit && u->has_ephemeral && u->ephemeral_used > u->pod_limit) {
                eviction_format_quantity(u->pod_limit, true, q, sizeof(q));
                *signal = "ephemeralpodfs.limit";
                return xasprintf(
                    "Pod ephemeral local storage usage exceeds the total limit of containers %s. ",
                    q);
        }
        for (size_t i = 0; i < pod->n_containers; i++) {
                const struct container *c = &pod->containers[i];
                const struct resource_list *l = &c->resources.limits;
                if (!storage_limited(c))
                        continue;
                for (size_t j = 0; j < u->n_containers; j++) {
                        const struct eviction_container_usage *cu = &u->containers[j];
                        if (strcmp(cu->name, c->name) != 0)
                                continue;
                        int64_t used =
                            (cu->has_logs ? cu->logs_used : 0) +
                            (!u->dedicated_imagefs && cu->has_rootfs ? cu->rootfs_used : 0);
                        if (used <= l->ephemeral_storage)
                                break;
                        eviction_format_quantity(l->ephemeral_storage, true, q, sizeof(q));
                        *signal = "ephemeralcontainerfs.limit";
                        return xasprintf("Container %s exceeded its local ephemeral storage limit "
                                         "\"%s\". ",
                                         c->name, q);
                }
        }
        return NULL;
}
