/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the eviction manager reads of the Summary (upstream
 * makeSignalObservations and the pods' usage helpers), copied out of the
 * cached snapshot.
 */
#include "stats/stats_internal.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

static void signal_of_memory(const struct stats_memory *m, struct stats_signal *out)
{
        /* capacity = available + working set, both needed */
        if (!m->ok || !m->available.ok || !m->working_set.ok)
                return;
        *out = (struct stats_signal){.ok = true,
                                     .available = (int64_t)m->available.v,
                                     .capacity = (int64_t)(m->available.v + m->working_set.v),
                                     .time_ns = m->time_ns};
}

static void signals_of_fs(const struct stats_fs *f, struct stats_signal *bytes,
                          struct stats_signal *inodes)
{
        if (!f->ok)
                return;
        if (f->available.ok && f->capacity.ok)
                *bytes = (struct stats_signal){true, (int64_t)f->available.v,
                                               (int64_t)f->capacity.v, f->time_ns};
        if (f->inodes_free.ok && f->inodes.ok)
                *inodes = (struct stats_signal){true, (int64_t)f->inodes_free.v,
                                                (int64_t)f->inodes.v, f->time_ns};
}

static void add_fs(const struct stats_fs *f, int64_t *bytes, int64_t *inodes, bool *any)
{
        if (!f->ok)
                return;
        if (f->used.ok) {
                *bytes += (int64_t)f->used.v;
                *any = true;
        }
        if (f->inodes_used.ok)
                *inodes += (int64_t)f->inodes_used.v;
}

static void pod_of(const struct stats_pod *sp, struct stats_eviction_pod *out)
{
        out->uid = xstrdup(sp->uid);
        out->has_memory = sp->memory.ok && sp->memory.working_set.ok;
        out->memory_working_set = out->has_memory ? (int64_t)sp->memory.working_set.v : 0;
        out->has_processes = sp->has_process_stats && sp->process_count.ok;
        out->processes = out->has_processes ? (int64_t)sp->process_count.v : 0;
        out->containers = xcalloc(sp->n_containers + 1, sizeof(*out->containers));
        for (size_t i = 0; i < sp->n_containers; i++) {
                const struct stats_container *c = &sp->containers[i];
                struct stats_eviction_container *oc = &out->containers[out->n_containers++];
                oc->name = xstrdup(c->name);
                oc->has_memory = c->memory.ok && c->memory.working_set.ok;
                oc->memory_working_set = oc->has_memory ? (int64_t)c->memory.working_set.v : 0;
                /* upstream: rootfs and logs, both measured */
                oc->has_disk = c->rootfs.ok && c->rootfs.used.ok && c->logs.ok && c->logs.used.ok;
                oc->disk_used = oc->has_disk ? (int64_t)(c->rootfs.used.v + c->logs.used.v) : 0;
                oc->has_rootfs = c->rootfs.ok && c->rootfs.used.ok;
                oc->rootfs_used = oc->has_rootfs ? (int64_t)c->rootfs.used.v : 0;
                oc->has_logs = c->logs.ok && c->logs.used.ok;
                oc->logs_used = oc->has_logs ? (int64_t)c->logs.used.v : 0;
                out->rootfs_used += oc->rootfs_used;
                out->logs_used += oc->logs_used;
                add_fs(&c->rootfs, &out->disk_used, &out->inodes_used, &out->has_disk);
                add_fs(&c->logs, &out->disk_used, &out->inodes_used, &out->has_disk);
        }
        out->volumes = xcalloc(sp->n_volumes + 1, sizeof(*out->volumes));
        for (size_t i = 0; i < sp->n_volumes; i++) {
                const struct stats_volume *vol = &sp->volumes[i];
                if (vol->ephemeral) {
                        add_fs(&vol->fs, &out->disk_used, &out->inodes_used, &out->has_disk);
                        if (vol->fs.ok && vol->fs.used.ok)
                                out->volumes_used += (int64_t)vol->fs.used.v;
                }
                if (vol->fs.ok && vol->fs.used.ok)
                        out->volumes[out->n_volumes++] = (struct stats_eviction_volume){
                            xstrdup(vol->name), (int64_t)vol->fs.used.v};
        }
        out->has_ephemeral = sp->ephemeral.ok && sp->ephemeral.used.ok;
        out->ephemeral_used = out->has_ephemeral ? (int64_t)sp->ephemeral.used.v : 0;
}

int stats_eviction_view(struct stats_provider *p, bool fresh, bool pods,
                        struct stats_eviction_view *out, ck_error_t *err)
{
        *out = (struct stats_eviction_view){0};
        struct stats_snapshot *s =
            stats__get_since(p, fresh ? stats__now_mono(p) : INT64_MIN, pods);
        if (pods && s->pods_error) {
                int r = ck_error_make(err, 0, "%s", s->pods_error);
                stats__snapshot_unref(s);
                return r;
        }
        const struct stats_node *n = &s->node;
        signal_of_memory(&n->memory, &out->memory);
        for (size_t i = 0; i < n->n_sys; i++)
                if (n->sys[i].name && strcmp(n->sys[i].name, "pods") == 0)
                        signal_of_memory(&n->sys[i].memory, &out->allocatable_memory);
        signals_of_fs(&n->fs, &out->nodefs, &out->nodefs_inodes);
        signals_of_fs(&n->image_fs, &out->imagefs, &out->imagefs_inodes);
        signals_of_fs(&n->container_fs, &out->containerfs, &out->containerfs_inodes);
        /* pid.available: the pid limit less the processes */
        if (n->rlimit.ok && n->rlimit.has_maxpid && n->rlimit.has_curproc)
                out->pid = (struct stats_signal){true, n->rlimit.maxpid - n->rlimit.curproc,
                                                 n->rlimit.maxpid, n->rlimit.time_ns};
        out->has_pods = pods;
        out->pods = xcalloc((pods ? s->n_pods : 0) + 1, sizeof(*out->pods));
        for (size_t i = 0; pods && i < s->n_pods; i++)
                if (s->pods[i].uid)
                        pod_of(&s->pods[i], &out->pods[out->n_pods++]);
        stats__snapshot_unref(s);
        return 0;
}

void stats_eviction_view_release(struct stats_eviction_view *v)
{
        for (size_t i = 0; i < v->n_pods; i++) {
                for (size_t j = 0; j < v->pods[i].n_containers; j++)
                        free(v->pods[i].containers[j].name);
                free(v->pods[i].containers);
                for (size_t j = 0; j < v->pods[i].n_volumes; j++)
                        free(v->pods[i].volumes[j].name);
                free(v->pods[i].volumes);
                free(v->pods[i].uid);
        }
        free(v->pods);
        *v = (struct stats_eviction_view){0};
}
