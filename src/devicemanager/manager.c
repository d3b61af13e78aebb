/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The device manager's state and what the kubelet asks of it (upstream
 * devicemanager/manager.go): the resources' devices and health, the
 * allocations, the node's capacity, admission, a container's options.
 * One lock; it is never held across a call to a plugin.
 */
#include "devicemanager/devicemanager_internal.h"
#include "metrics/kubelet_metrics.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include "deviceplugin.pb-c.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- small sets of strings (arrays) ---- */

static void strv_free(char **v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
}

static bool strv_has(char *const *v, size_t n, const char *s)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(v[i], s) == 0)
                        return true;
        return false;
}

static void strv_add(char ***v, size_t *n, const char *s)
{
        *v = xrealloc(*v, (*n + 2) * sizeof(**v));
        (*v)[(*n)++] = xstrdup(s);
        (*v)[*n] = NULL;
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ---- resources ---- */

struct dm_resource *dm_resource_get(struct devicemanager *m, const char *name, bool create)
{
        for (size_t i = 0; i < m->n_res; i++)
                if (strcmp(m->res[i].name, name) == 0)
                        return &m->res[i];
        if (!create)
                return NULL;
        m->res = xrealloc(m->res, (m->n_res + 1) * sizeof(*m->res));
        struct dm_resource *r = &m->res[m->n_res++];
        *r = (struct dm_resource){.name = xstrdup(name)};
        return r;
}

static void topology_clear(struct dm_resource *r)
{
        for (size_t i = 0; i < r->n_topo; i++) {
                free(r->topo[i].id);
                free(r->topo[i].nodes);
        }
        free(r->topo);
        r->topo = NULL;
        r->n_topo = 0;
}

static void resource_clear(struct dm_resource *r)
{
        free(r->name);
        strv_free(r->healthy, r->n_healthy);
        strv_free(r->unhealthy, r->n_unhealthy);
        topology_clear(r);
}

/* Forgets resource i (its endpoint stays on m->endpoints until the stop). */
static void resource_remove(struct devicemanager *m, size_t i)
{
        resource_clear(&m->res[i]);
        m->res[i] = m->res[--m->n_res];
}

/* A ListAndWatch message (upstream genericDeviceUpdateCallback): the sets
 * replaced; "Healthy" exactly is healthy, anything else is not. */
static void update_devices(struct devicemanager *m, struct dm_resource *r,
                           const V1beta1__ListAndWatchResponse *msg)
{
        (void)m;
        strv_free(r->healthy, r->n_healthy);
        strv_free(r->unhealthy, r->n_unhealthy);
        r->healthy = r->unhealthy = NULL;
        r->n_healthy = r->n_unhealthy = 0;
        topology_clear(r);
        r->has_healthy = r->has_unhealthy = true;
        r->topo = xcalloc(msg->n_devices + 1, sizeof(*r->topo));
        for (size_t i = 0; i < msg->n_devices; i++) {
                const V1beta1__Device *d = msg->devices[i];
                const char *id = d->id ? d->id : "";
                if (d->health != NULL && strcmp(d->health, "Healthy") == 0)
                        strv_add(&r->healthy, &r->n_healthy, id);
                else
                        strv_add(&r->unhealthy, &r->n_unhealthy, id);
                struct dm_topology *t = &r->topo[r->n_topo++];
                t->id = xstrdup(id);
                if (d->topology != NULL && d->topology->n_nodes > 0) {
                        t->nodes = xcalloc(d->topology->n_nodes, sizeof(*t->nodes));
                        for (size_t k = 0; k < d->topology->n_nodes; k++)
                                if (d->topology->nodes[k] != NULL)
                                        t->nodes[t->n_nodes++] = d->topology->nodes[k]->id;
                }
        }
}

void dm_endpoint_devices(struct devicemanager *m, struct dm_endpoint *ep,
                         const V1beta1__ListAndWatchResponse *msg)
{
        pthread_mutex_lock(&m->lock);
        struct dm_resource *r = dm_resource_get(m, ep->resource, false);
        /* a plugin registered again since: the old stream's word no longer
         * counts */
        if (r != NULL && r->ep == ep) {
                update_devices(m, r, msg);
                LOG_INFO(4, "Device plugin sent devices",
                         "resource=\"%s\" healthy=%zu unhealthy=%zu", r->name, r->n_healthy,
                         r->n_unhealthy);
                cleanup_error ck_error_t err = NULL;
                dm_write_checkpoint(m, &err);
        }
        pthread_mutex_unlock(&m->lock);
}

void dm_mark_unhealthy(struct devicemanager *m, struct dm_endpoint *ep)
{
        pthread_mutex_lock(&m->lock);
        struct dm_resource *r = dm_resource_get(m, ep->resource, false);
        if (r != NULL && r->ep == ep) {
                /* upstream markResourceUnhealthy: the healthy key stays if it
                 * was there; the unhealthy one is made */
                if (r->has_healthy) {
                        for (size_t i = 0; i < r->n_healthy; i++)
                                strv_add(&r->unhealthy, &r->n_unhealthy, r->healthy[i]);
                        strv_free(r->healthy, r->n_healthy);
                        r->healthy = NULL;
                        r->n_healthy = 0;
                }
                r->has_unhealthy = true;
                ep->stop_ms = fs_now_mono_ms();
                LOG_INFO(2, "Device plugin stopped: its devices are unhealthy",
                         "resource=\"%s\" devices=%zu", r->name, r->n_unhealthy);
        }
        pthread_mutex_unlock(&m->lock);
}

static bool expired(const struct devicemanager *m, const struct dm_endpoint *ep, int64_t now)
{
        return ep->stop_ms != 0 && now - ep->stop_ms > m->stop_grace_ms;
}

/* ---- the checkpoint ---- */

int dm_write_checkpoint(struct devicemanager *m, ck_error_t *err)
{
        cleanup_json json_t *doc = dm_checkpoint_build(m->allocs, m->n_allocs, m->res, m->n_res);
        cleanup_free char *text = json_dumps(doc, JSON_COMPACT);
        if (fs_mkdir_p(m->dir, 0755, err) < 0 ||
            fs_write_file_atomic(m->checkpoint_path, text, strlen(text), 0600, err) < 0) {
                LOG_ERROR("Failed to write the device manager's checkpoint",
                          "path=\"%s\" err=\"%s\"", m->checkpoint_path, ck_error_msg(*err));
                return -1;
        }
        return 0;
}

static void read_checkpoint(struct devicemanager *m)
{
        cleanup_free char *text = NULL;
        cleanup_error ck_error_t err = NULL;
        if (fs_read_file(m->checkpoint_path, 64u << 20, &text, NULL, &err) < 0) {
                if (err->status == ENOENT)
                        LOG_INFO(4, "No device manager checkpoint", "path=\"%s\"",
                                 m->checkpoint_path);
                else
                        LOG_ERROR("Continue after failing to read checkpoint file. Device "
                                  "allocation info may NOT be up-to-date",
                                  "err=\"%s\"", ck_error_msg(err));
                return;
        }
        char **registered = NULL;
        size_t n_registered = 0;
        if (dm_checkpoint_parse(text, &m->allocs, &m->n_allocs, &registered, &n_registered, &err) <
            0) {
                LOG_ERROR("Continue after failing to read checkpoint file. Device allocation "
                          "info may NOT be up-to-date",
                          "path=\"%s\" err=\"%s\"", m->checkpoint_path, ck_error_msg(err));
                return;
        }
        /* upstream: each registered resource with empty sets and a stopped
         * endpoint, until its plugin registers again (or 5 minutes pass) */
        for (size_t i = 0; i < n_registered; i++) {
                struct dm_resource *r = dm_resource_get(m, registered[i], true);
                r->has_healthy = r->has_unhealthy = true;
                r->ep = dm_endpoint_restored(m, registered[i]);
        }
        LOG_INFO(2, "Read the device manager's checkpoint", "allocations=%zu resources=%zu",
                 m->n_allocs, n_registered);
        strv_free(registered, n_registered);
}

/* ---- start and stop ---- */

int devicemanager_start(const struct devicemanager_options *o, struct devicemanager **out,
                        ck_error_t *err)
{
        struct devicemanager *m = xcalloc(1, sizeof(*m));
        m->dir = xstrdup(o->dir);
        m->socket_path = xasprintf("%s/" DM_SOCKET_NAME, o->dir);
        m->checkpoint_path = xasprintf("%s/" DM_CHECKPOINT_NAME, o->dir);
        m->pod_active = o->pod_active;
        m->ctx = o->ctx;
        m->stop_grace_ms = o->stop_grace_ms > 0 ? o->stop_grace_ms : DM_STOP_GRACE_MS;
        pthread_mutex_init(&m->lock, NULL);
        if (fs_mkdir_p(m->dir, 0755, err) < 0) {
                ck_error_wrap(err, "device manager");
                devicemanager_stop(m);
                return -1;
        }
        read_checkpoint(m);
        if (dm_registration_start(m, err) < 0) {
                ck_error_wrap(err, "device manager");
                devicemanager_stop(m);
                return -1;
        }
        *out = m;
        return 0;
}

void devicemanager_stop(struct devicemanager *m)
{
        if (m == NULL)
                return;
        atomic_store(&m->stopping, true);
        dm_registration_stop(m);
        for (struct dm_endpoint *ep = m->endpoints, *next; ep; ep = next) {
                next = ep->next;
                dm_endpoint_free(ep);
        }
        for (size_t i = 0; i < m->n_res; i++)
                resource_clear(&m->res[i]);
        free(m->res);
        for (size_t i = 0; i < m->n_allocs; i++)
                dm_alloc_clear(&m->allocs[i]);
        free(m->allocs);
        pthread_mutex_destroy(&m->lock);
        free(m->dir);
        free(m->socket_path);
        free(m->checkpoint_path);
        free(m);
}

/* ---- node status ---- */

void devicemanager_capacity(struct devicemanager *m, struct devicemanager_resource **res, size_t *n,
                            char ***removed, size_t *n_removed)
{
        *res = NULL;
        *n = 0;
        *removed = NULL;
        *n_removed = 0;
        if (m == NULL)
                return;
        pthread_mutex_lock(&m->lock);
        int64_t now = fs_now_mono_ms();
        struct devicemanager_resource *out = xcalloc(m->n_res + 1, sizeof(*out));
        size_t k = 0;
        bool deleted = false;
        for (size_t i = 0; i < m->n_res;) {
                struct dm_resource *r = &m->res[i];
                if (!r->has_healthy && !r->has_unhealthy) {
                        i++; /* registered, no list yet: not reported */
                        continue;
                }
                if (r->ep == NULL || expired(m, r->ep, now)) {
                        LOG_INFO(2, "Device plugin gone for good: resource removed",
                                 "resource=\"%s\"", r->name);
                        strv_add(removed, n_removed, r->name);
                        resource_remove(m, i);
                        deleted = true;
                        continue;
                }
                out[k] = (struct devicemanager_resource){
                    .name = xstrdup(r->name),
                    .capacity = (int64_t)(r->n_healthy + r->n_unhealthy),
                    .allocatable = r->has_healthy ? (int64_t)r->n_healthy : -1,
                };
                k++;
                i++;
        }
        if (deleted) {
                cleanup_error ck_error_t err = NULL;
                dm_write_checkpoint(m, &err);
        }
        pthread_mutex_unlock(&m->lock);
        *res = out;
        *n = k;
}

void devicemanager_resources(struct devicemanager *m, struct devicemanager_resource **res,
                             size_t *n)
{
        *res = NULL;
        *n = 0;
        if (m == NULL)
                return;
        pthread_mutex_lock(&m->lock);
        int64_t now = fs_now_mono_ms();
        struct devicemanager_resource *out = xcalloc(m->n_res + 1, sizeof(*out));
        size_t k = 0;
        for (size_t i = 0; i < m->n_res; i++) {
                const struct dm_resource *r = &m->res[i];
                if ((!r->has_healthy && !r->has_unhealthy) || r->ep == NULL ||
                    expired(m, r->ep, now))
                        continue;
                out[k++] = (struct devicemanager_resource){
                    .name = xstrdup(r->name),
                    .capacity = (int64_t)(r->n_healthy + r->n_unhealthy),
                    .allocatable = r->has_healthy ? (int64_t)r->n_healthy : -1,
                };
        }
        pthread_mutex_unlock(&m->lock);
        *res = out;
        *n = k;
}

void devicemanager_capacity_free(struct devicemanager_resource *res, size_t n, char **removed,
                                 size_t n_removed)
{
        for (size_t i = 0; i < n; i++)
                free(res[i].name);
        free(res);
        strv_free(removed, n_removed);
}

/* ---- allocations ---- */

static struct dm_alloc *alloc_find(struct devicemanager *m, const char *uid, const char *container,
                                   const char *resource)
{
        for (size_t i = 0; i < m->n_allocs; i++) {
                struct dm_alloc *a = &m->allocs[i];
                if (strcmp(a->pod_uid, uid) == 0 && strcmp(a->container, container) == 0 &&
                    strcmp(a->resource, resource) == 0)
                        return a;
        }
        return NULL;
}

/* Every device ID of a, into *ids (appended). */
static void alloc_ids(const struct dm_alloc *a, char ***ids, size_t *n)
{
        for (size_t i = 0; i < a->n_numa; i++)
                for (size_t k = 0; k < a->numa[i].n_ids; k++)
                        if (!strv_has(*ids, *n, a->numa[i].ids[k]))
                                strv_add(ids, n, a->numa[i].ids[k]);
}

static size_t alloc_count(const struct dm_alloc *a)
{
        char **ids = NULL;
        size_t n = 0;
        alloc_ids(a, &ids, &n);
        strv_free(ids, n);
        return n;
}

/* The devices pods hold of resource (upstream allocatedDevices). */
static void allocated_ids(struct devicemanager *m, const char *resource, char ***ids, size_t *n)
{
        for (size_t i = 0; i < m->n_allocs; i++)
                if (strcmp(m->allocs[i].resource, resource) == 0)
                        alloc_ids(&m->allocs[i], ids, n);
}

bool devicemanager_is_device_resource(struct devicemanager *m, const char *name)
{
        if (m == NULL)
                return false;
        pthread_mutex_lock(&m->lock);
        struct dm_resource *r = dm_resource_get(m, name, false);
        bool yes = r != NULL && r->has_healthy;
        for (size_t i = 0; !yes && i < m->n_allocs; i++)
                yes = strcmp(m->allocs[i].resource, name) == 0;
        pthread_mutex_unlock(&m->lock);
        return yes;
}

void devicemanager_allocated(struct devicemanager *m, struct devicemanager_resource **res,
                             size_t *n)
{
        *res = NULL;
        *n = 0;
        if (m == NULL)
                return;
        pthread_mutex_lock(&m->lock);
        struct devicemanager_resource *out = xcalloc(m->n_allocs + 1, sizeof(*out));
        size_t k = 0;
        for (size_t i = 0; i < m->n_allocs; i++) {
                const char *name = m->allocs[i].resource;
                bool seen = false;
                for (size_t j = 0; j < k && !seen; j++)
                        seen = strcmp(out[j].name, name) == 0;
                if (seen)
                        continue;
                char **ids = NULL;
                size_t nids = 0;
                allocated_ids(m, name, &ids, &nids);
                out[k++] = (struct devicemanager_resource){
                    .name = xstrdup(name), .capacity = (int64_t)nids, .allocatable = (int64_t)nids};
                strv_free(ids, nids);
        }
        pthread_mutex_unlock(&m->lock);
        *res = out;
        *n = k;
}

/* upstream UpdateAllocatedDevices: the allocations of pods no longer
 * active go. */
static void release_inactive(struct devicemanager *m)
{
        if (m->pod_active == NULL)
                return;
        for (size_t i = 0; i < m->n_allocs;) {
                if (m->pod_active(m->ctx, m->allocs[i].pod_uid)) {
                        i++;
                        continue;
                }
                LOG_INFO(4, "Devices of an inactive pod freed", "podUID=\"%s\" resource=\"%s\"",
                         m->allocs[i].pod_uid, m->allocs[i].resource);
                dm_alloc_clear(&m->allocs[i]);
                m->allocs[i] = m->allocs[--m->n_allocs];
        }
}

static void alloc_remove(struct devicemanager *m, struct dm_alloc *a)
{
        size_t i = (size_t)(a - m->allocs);
        dm_alloc_clear(a);
        m->allocs[i] = m->allocs[--m->n_allocs];
}

/* The NUMA nodes of a device (-1: none). */
static void add_by_numa(const struct dm_resource *r, struct dm_alloc *a, const char *id)
{
        const struct dm_topology *t = NULL;
        for (size_t i = 0; r && i < r->n_topo && t == NULL; i++)
                if (strcmp(r->topo[i].id, id) == 0)
                        t = &r->topo[i];
        size_t nn = t && t->n_nodes ? t->n_nodes : 1;
        for (size_t k = 0; k < nn; k++) {
                int64_t numa = t && t->n_nodes ? t->nodes[k] : -1;
                struct dm_numa_ids *slot = NULL;
                for (size_t j = 0; j < a->n_numa && slot == NULL; j++)
                        if (a->numa[j].numa == numa)
                                slot = &a->numa[j];
                if (slot == NULL) {
                        a->numa = xrealloc(a->numa, (a->n_numa + 1) * sizeof(*a->numa));
                        slot = &a->numa[a->n_numa++];
                        *slot = (struct dm_numa_ids){.numa = numa};
                }
                strv_add(&slot->ids, &slot->n_ids, id);
        }
}

/* upstream devicesToAllocate: the devices container c of pod gets of r
 * (needed of them), *chosen empty when it has them already; reuse are
 * the devices init containers of the pod freed.  Lock held; released
 * around GetPreferredAllocation. */
static int devices_to_allocate(struct devicemanager *m, const struct pod *pod, const char *cname,
                               const char *resource, int64_t required, char **reuse, size_t n_reuse,
                               char ***chosen, size_t *n_chosen, ck_error_t *err)
{
        *chosen = NULL;
        *n_chosen = 0;
        struct dm_alloc *cached = alloc_find(m, pod->uid, cname, resource);
        if (cached != NULL) {
                int64_t have = (int64_t)alloc_count(cached);
                if (have != required)
                        return ck_error_make(err, 0,
                                             "pod \"%s\" container \"%s\" changed request for "
                                             "resource \"%s\" from %" PRId64 " to %" PRId64,
                                             pod->uid, cname, resource, have, required);
                /* what it was given already (a restart: the checkpoint's) */
                return 0;
        }
        struct dm_resource *r = dm_resource_get(m, resource, false);
        if (r == NULL || !r->has_healthy)
                return ck_error_make(err, 0, "cannot allocate unregistered device %s", resource);
        if (r->n_healthy == 0)
                return ck_error_make(err, 0,
                                     "no healthy devices present; cannot allocate unhealthy "
                                     "devices %s",
                                     resource);
        if (required == 0)
                return 0;
        char **out = NULL;
        size_t n_out = 0;
        /* devices init containers of this pod used and freed first */
        if (n_reuse > 1)
                qsort(reuse, n_reuse, sizeof(*reuse), cmp_str);
        for (size_t i = 0; i < n_reuse && (int64_t)n_out < required; i++)
                if (strv_has(r->healthy, r->n_healthy, reuse[i]))
                        strv_add(&out, &n_out, reuse[i]);
        if ((int64_t)n_out == required) {
                *chosen = out;
                *n_chosen = n_out;
                return 0;
        }
        char **taken = NULL;
        size_t n_taken = 0;
        allocated_ids(m, resource, &taken, &n_taken);
        char **avail = NULL;
        size_t n_avail = 0;
        for (size_t i = 0; i < r->n_healthy; i++)
                if (!strv_has(taken, n_taken, r->healthy[i]) &&
                    !strv_has(out, n_out, r->healthy[i]))
                        strv_add(&avail, &n_avail, r->healthy[i]);
        strv_free(taken, n_taken);
        int64_t needed = required - (int64_t)n_out;
        if ((int64_t)n_avail < needed) {
                strv_free(out, n_out);
                strv_free(avail, n_avail);
                return ck_error_make(err, 0,
                                     "requested number of devices unavailable for %s. Requested: "
                                     "%" PRId64 ", Available: %zu",
                                     resource, needed, n_avail);
        }
        if (n_avail > 1)
                qsort(avail, n_avail, sizeof(*avail), cmp_str);
        /* the plugin's preference, when it says it has one */
        struct dm_endpoint *ep = r->ep;
        if (ep != NULL && ep->has_options && ep->preferred_available) {
                char **offer = NULL, **pref = NULL;
                size_t n_offer = 0, n_pref = 0;
                for (size_t i = 0; i < n_avail; i++)
                        strv_add(&offer, &n_offer, avail[i]);
                for (size_t i = 0; i < n_out; i++)
                        strv_add(&offer, &n_offer, out[i]);
                pthread_mutex_unlock(&m->lock);
                int rc = dm_endpoint_preferred(ep, offer, n_offer, out, n_out, (int32_t)required,
                                               &pref, &n_pref, err);
                pthread_mutex_lock(&m->lock);
                strv_free(offer, n_offer);
                if (rc < 0) {
                        strv_free(out, n_out);
                        strv_free(avail, n_avail);
                        return -1;
                }
                for (size_t i = 0; i < n_pref && (int64_t)n_out < required; i++)
                        if (strv_has(avail, n_avail, pref[i]) && !strv_has(out, n_out, pref[i]))
                                strv_add(&out, &n_out, pref[i]);
                strv_free(pref, n_pref);
        }
        for (size_t i = 0; i < n_avail && (int64_t)n_out < required; i++)
                if (!strv_has(out, n_out, avail[i]))
                        strv_add(&out, &n_out, avail[i]);
        strv_free(avail, n_avail);
        if ((int64_t)n_out < required) {
                size_t got = n_out;
                strv_free(out, n_out);
                return ck_error_make(err, 0,
                                     "unexpectedly allocated less resources than required. "
                                     "Requested: %" PRId64 ", Got: %zu",
                                     required, got);
        }
        *chosen = out;
        *n_chosen = n_out;
        return 0;
}

/* upstream allocateContainerResources for container c: each device
 * resource of its limits.  Lock held (released around the calls). */
static int allocate_container(struct devicemanager *m, const struct pod *pod,
                              const struct container *c, char ***reuse, size_t *n_reuse,
                              bool *wrote, ck_error_t *err)
{
        const struct resource_list *lim = &c->resources.limits;
        for (size_t i = 0; i < lim->n_extended; i++) {
                const char *resource = lim->extended[i].name;
                struct dm_resource *r = dm_resource_get(m, resource, false);
                bool known = r != NULL && r->has_healthy;
                for (size_t k = 0; !known && k < m->n_allocs; k++)
                        known = strcmp(m->allocs[k].resource, resource) == 0;
                if (!known)
                        continue; /* not a plugin's: the fit check's business */
                char **ids = NULL;
                size_t n = 0;
                if (devices_to_allocate(m, pod, c->name, resource, lim->extended[i].value, *reuse,
                                        *n_reuse, &ids, &n, err) < 0)
                        return -1;
                if (n == 0)
                        continue;
                r = dm_resource_get(m, resource, false);
                struct dm_endpoint *ep = r ? r->ep : NULL;
                if (ep == NULL) {
                        strv_free(ids, n);
                        return ck_error_make(err, 0, "unknown Device Plugin %s", resource);
                }
                /* held from now on (upstream adds them to allocatedDevices
                 * before the call) */
                m->allocs = xrealloc(m->allocs, (m->n_allocs + 1) * sizeof(*m->allocs));
                struct dm_alloc *a = &m->allocs[m->n_allocs++];
                *a = (struct dm_alloc){.pod_uid = xstrdup(pod->uid),
                                       .container = xstrdup(c->name),
                                       .resource = xstrdup(resource)};
                for (size_t k = 0; k < n; k++)
                        add_by_numa(r, a, ids[k]);
                pthread_mutex_unlock(&m->lock);
                uint8_t *resp = NULL;
                size_t resp_len = 0;
                int64_t t0 = fs_now_mono_us();
                int rc = dm_endpoint_allocate(ep, ids, n, &resp, &resp_len, err);
                kmetrics_device_plugin_alloc(resource, (double)(fs_now_mono_us() - t0) / 1e6);
                pthread_mutex_lock(&m->lock);
                a = alloc_find(m, pod->uid, c->name, resource);
                if (rc < 0) {
                        if (a != NULL)
                                alloc_remove(m, a);
                        strv_free(ids, n);
                        return -1;
                }
                if (a == NULL) { /* cannot be: only this thread allocates */
                        free(resp);
                        strv_free(ids, n);
                        return ck_error_make(err, 0, "allocation of %s vanished", resource);
                }
                a->resp = resp;
                a->resp_len = resp_len;
                *wrote = true;
                LOG_INFO(2, "Allocated devices",
                         "pod=\"%s\" container=\"%s\" resource=\"%s\" devices=%zu",
                         pod_full_name(pod), c->name, resource, n);
                /* init containers' devices serve the next containers */
                for (size_t k = 0; k < n; k++)
                        if (!strv_has(*reuse, *n_reuse, ids[k]))
                                strv_add(reuse, n_reuse, ids[k]);
                strv_free(ids, n);
        }
        return 0;
}

/* The devices of (pod, container) leave reuse: held for good (a sidecar,
 * an app container). */
static void unreuse(struct devicemanager *m, const struct pod *pod, const char *cname,
                    char ***reuse, size_t *n_reuse)
{
        for (size_t i = 0; i < m->n_allocs; i++) {
                const struct dm_alloc *a = &m->allocs[i];
                if (strcmp(a->pod_uid, pod->uid) != 0 || strcmp(a->container, cname) != 0)
                        continue;
                char **ids = NULL;
                size_t n = 0;
                alloc_ids(a, &ids, &n);
                for (size_t k = 0; k < n; k++)
                        for (size_t j = 0; j < *n_reuse; j++)
                                if (strcmp((*reuse)[j], ids[k]) == 0) {
                                        free((*reuse)[j]);
                                        (*reuse)[j] = (*reuse)[--*n_reuse];
                                        break;
                                }
                strv_free(ids, n);
        }
}

static bool asks_for_devices(struct devicemanager *m, const struct pod *pod)
{
        const struct container *lists[] = {pod->init_containers, pod->containers};
        size_t counts[] = {pod->n_init_containers, pod->n_containers};
        for (size_t l = 0; l < 2; l++)
                for (size_t i = 0; i < counts[l]; i++)
                        for (size_t k = 0; k < lists[l][i].resources.limits.n_extended; k++) {
                                const char *name = lists[l][i].resources.limits.extended[k].name;
                                struct dm_resource *r = dm_resource_get(m, name, false);
                                if (r != NULL && r->has_healthy)
                                        return true;
                                for (size_t j = 0; j < m->n_allocs; j++)
                                        if (strcmp(m->allocs[j].resource, name) == 0)
                                                return true;
                        }
        return false;
}

int devicemanager_allocate(struct devicemanager *m, const struct pod *pod, ck_error_t *err)
{
        if (m == NULL)
                return 0;
        pthread_mutex_lock(&m->lock);
        if (!asks_for_devices(m, pod)) {
                pthread_mutex_unlock(&m->lock);
                return 0;
        }
        release_inactive(m);
        char **reuse = NULL;
        size_t n_reuse = 0;
        bool wrote = false;
        int rc = 0;
        for (size_t i = 0; rc == 0 && i < pod->n_init_containers; i++) {
                const struct container *c = &pod->init_containers[i];
                rc = allocate_container(m, pod, c, &reuse, &n_reuse, &wrote, err);
                /* a sidecar keeps its devices; a regular init container's
                 * serve the containers after it */
                if (rc == 0 && c->restart_policy != NULL &&
                    strcmp(c->restart_policy, "Always") == 0)
                        unreuse(m, pod, c->name, &reuse, &n_reuse);
        }
        for (size_t i = 0; rc == 0 && i < pod->n_containers; i++) {
                const struct container *c = &pod->containers[i];
                rc = allocate_container(m, pod, c, &reuse, &n_reuse, &wrote, err);
                if (rc == 0)
                        unreuse(m, pod, c->name, &reuse, &n_reuse);
        }
        strv_free(reuse, n_reuse);
        if (rc == 0 && wrote) {
                cleanup_error ck_error_t werr = NULL;
                if (dm_write_checkpoint(m, &werr) < 0)
                        rc = ck_error_make(err, 0, "failed to write checkpoint file \"%s\": %s",
                                           DM_CHECKPOINT_NAME, ck_error_msg(werr));
        }
        pthread_mutex_unlock(&m->lock);
        return rc;
}

/* ---- a container's options ---- */

static void add_unique_kv(struct kv_list *l, const char *k, const char *v)
{
        if (kv_list_get(l, k) == NULL)
                kv_list_add(l, k, v);
}

/* Whether one of the n elements of size sz at arr has, at offset off, a
 * container_path string equal to path: a mount or device a previous
 * response already placed there wins. */
static bool has_container_path(const void *arr, size_t n, size_t sz, size_t off, const char *path)
{
        for (size_t k = 0; k < n; k++) {
                const char *cp = *(const char *const *)((const char *)arr + k * sz + off);
                if (strcmp(cp, path) == 0)
                        return true;
        }
        return false;
}

/* Adds one ContainerAllocateResponse's options (first of each key wins). */
static void merge_response(struct devicemanager_container_options *o, const uint8_t *resp,
                           size_t len)
{
        V1beta1__ContainerAllocateResponse *r =
            v1beta1__container_allocate_response__unpack(NULL, len, resp);
        if (r == NULL)
                return;
        for (size_t i = 0; i < r->n_envs; i++)
                if (r->envs[i]->key)
                        add_unique_kv(&o->envs, r->envs[i]->key,
                                      r->envs[i]->value ? r->envs[i]->value : "");
        for (size_t i = 0; i < r->n_mounts; i++) {
                const V1beta1__Mount *mt = r->mounts[i];
                const char *cp = mt->container_path ? mt->container_path : "";
                if (has_container_path(o->mounts, o->n_mounts, sizeof(*o->mounts),
                                       offsetof(struct devicemanager_mount, container_path), cp))
                        continue;
                o->mounts = xrealloc(o->mounts, (o->n_mounts + 1) * sizeof(*o->mounts));
                o->mounts[o->n_mounts++] = (struct devicemanager_mount){
                    .container_path = xstrdup(cp),
                    .host_path = xstrdup(mt->host_path ? mt->host_path : ""),
                    .read_only = mt->read_only};
        }
        for (size_t i = 0; i < r->n_devices; i++) {
                const V1beta1__DeviceSpec *d = r->devices[i];
                const char *cp = d->container_path ? d->container_path : "";
                if (has_container_path(o->devices, o->n_devices, sizeof(*o->devices),
                                       offsetof(struct devicemanager_device, container_path), cp))
                        continue;
                o->devices = xrealloc(o->devices, (o->n_devices + 1) * sizeof(*o->devices));
                o->devices[o->n_devices++] = (struct devicemanager_device){
                    .container_path = xstrdup(cp),
                    .host_path = xstrdup(d->host_path ? d->host_path : ""),
                    .permissions = xstrdup(d->permissions ? d->permissions : "")};
        }
        for (size_t i = 0; i < r->n_annotations; i++)
                if (r->annotations[i]->key)
                        add_unique_kv(&o->annotations, r->annotations[i]->key,
                                      r->annotations[i]->value ? r->annotations[i]->value : "");
        for (size_t i = 0; i < r->n_cdi_devices; i++) {
                const char *name = r->cdi_devices[i]->name ? r->cdi_devices[i]->name : "";
                if (!strv_has(o->cdi_devices, o->n_cdi_devices, name))
                        strv_add(&o->cdi_devices, &o->n_cdi_devices, name);
        }
        v1beta1__container_allocate_response__free_unpacked(r, NULL);
}

int devicemanager_container_options(struct devicemanager *m, const struct pod *pod,
                                    const struct container *c,
                                    struct devicemanager_container_options *out, ck_error_t *err)
{
        memset(out, 0, sizeof(*out));
        if (m == NULL)
                return 0;
        pthread_mutex_lock(&m->lock);
        const struct resource_list *lim = &c->resources.limits;
        for (size_t i = 0; i < lim->n_extended; i++) {
                const char *resource = lim->extended[i].name;
                if (lim->extended[i].value == 0)
                        continue;
                struct dm_alloc *a = alloc_find(m, pod->uid, c->name, resource);
                struct dm_resource *r = dm_resource_get(m, resource, false);
                if (a == NULL && (r == NULL || !r->has_healthy))
                        continue; /* not a device plugin's resource */
                /* upstream callPreStartContainerIfNeeded */
                struct dm_endpoint *ep = r ? r->ep : NULL;
                if (ep == NULL) {
                        pthread_mutex_unlock(&m->lock);
                        return ck_error_make(err, 0,
                                             "endpoint not found in cache for a registered "
                                             "resource: %s",
                                             resource);
                }
                if (!ep->has_options || !ep->pre_start_required)
                        continue;
                if (a == NULL) {
                        pthread_mutex_unlock(&m->lock);
                        return ck_error_make(err, 0,
                                             "no devices found allocated in local cache for pod "
                                             "%s, container %s, resource %s",
                                             pod->uid, c->name, resource);
                }
                char **ids = NULL;
                size_t n = 0;
                alloc_ids(a, &ids, &n);
                pthread_mutex_unlock(&m->lock);
                cleanup_error ck_error_t e = NULL;
                int rc = dm_endpoint_pre_start(ep, ids, n, &e);
                strv_free(ids, n);
                if (rc < 0) {
                        cleanup_free char *why = dm_rpc_error_text(e);
                        return ck_error_make(err, 0,
                                             "device plugin PreStartContainer rpc failed with "
                                             "err: %s",
                                             why);
                }
                pthread_mutex_lock(&m->lock);
        }
        for (size_t i = 0; i < m->n_allocs; i++) {
                const struct dm_alloc *a = &m->allocs[i];
                if (strcmp(a->pod_uid, pod->uid) == 0 && strcmp(a->container, c->name) == 0 &&
                    a->resp != NULL)
                        merge_response(out, a->resp, a->resp_len);
        }
        pthread_mutex_unlock(&m->lock);
        return 0;
}

void devicemanager_container_options_release(struct devicemanager_container_options *o)
{
        kv_list_release(&o->envs);
        kv_list_release(&o->annotations);
        for (size_t i = 0; i < o->n_mounts; i++) {
                free(o->mounts[i].container_path);
                free(o->mounts[i].host_path);
        }
        free(o->mounts);
        for (size_t i = 0; i < o->n_devices; i++) {
                free(o->devices[i].container_path);
                free(o->devices[i].host_path);
                free(o->devices[i].permissions);
        }
        free(o->devices);
        strv_free(o->cdi_devices, o->n_cdi_devices);
        memset(o, 0, sizeof(*o));
}
