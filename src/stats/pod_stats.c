/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One pod's stats from what the runtime gave (upstream makeContainerStats,
 * addCRIPod*Stats), with what it left out read from the pod's and the
 * container's cgroups (what cAdvisor adds upstream), or summed over the
 * containers (addPodCPUMemoryStats, addSwapStats); then its volumes and
 * ephemeral-storage.
 */
#include "stats/stats_internal.h"

#include "util/cgroup_name.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

static const char *str_or_empty(const char *s)
{
        return s ? s : "";
}

/* Filesystem info per mountpoint, asked once per refresh (fsIDtoInfo). */
static const struct stats_fs_memo *fs_info_of(struct stats_refresh *r, const char *mountpoint)
{
        for (size_t i = 0; i < r->n_fs; i++)
                if (strcmp(r->fs[i].mountpoint, mountpoint) == 0)
                        return &r->fs[i];
        r->fs = xrealloc(r->fs, (r->n_fs + 1) * sizeof(*r->fs));
        struct stats_fs_memo *m = &r->fs[r->n_fs++];
        memset(m, 0, sizeof(*m));
        m->mountpoint = xstrdup(mountpoint);
        cleanup_error ck_error_t err = NULL;
        m->ok = stats_fs_info(mountpoint, &m->info, &err) == 0;
        if (!m->ok)
                LOG_INFO(2, "Failed to get the info of the filesystem with mountpoint",
                         "mountpoint=\"%s\" err=\"%s\"", mountpoint, ck_error_msg(err));
        return m;
}

/* ---- CRI values ------------------------------------------------------------ */

static void psi_of(struct stats_psi *dst, const Runtime__V1__PsiStats *src)
{
        memset(dst, 0, sizeof(*dst));
        if (src == NULL)
                return;
        dst->ok = true;
        if (src->full)
                dst->full = (struct stats_psi_data){src->full->total, src->full->avg10,
                                                    src->full->avg60, src->full->avg300};
        if (src->some)
                dst->some = (struct stats_psi_data){src->some->total, src->some->avg10,
                                                    src->some->avg60, src->some->avg300};
}

static void fill(struct stats_u64 *dst, struct stats_u64 v)
{
        if (!dst->ok)
                *dst = v;
}

/* CRI CpuUsage: usageNanoCores the runtime gives, else computed from the
 * cache (key). */
static void cpu_of(struct stats_refresh *r, const Runtime__V1__CpuUsage *u, const char *key,
                   struct stats_cpu *out)
{
        *out = (struct stats_cpu){.ok = true, .time_ns = u->timestamp};
        out->usage_core_nano_seconds = stats_u64_cri(u->usage_core_nano_seconds);
        if (u->usage_nano_cores)
                out->usage_nano_cores = stats_u64_of(u->usage_nano_cores->value);
        else if (u->usage_core_nano_seconds)
                out->usage_nano_cores = stats__cpu_cache_update(r->p->cpu_cache, key, u->timestamp,
                                                                u->usage_core_nano_seconds->value);
        psi_of(&out->psi, u->psi);
}

static void memory_of(const Runtime__V1__MemoryUsage *u, struct stats_memory *out)
{
        *out = (struct stats_memory){.ok = true, .time_ns = u->timestamp};
        out->available = stats_u64_cri(u->available_bytes);
        out->usage = stats_u64_cri(u->usage_bytes);
        out->working_set = stats_u64_cri(u->working_set_bytes);
        out->rss = stats_u64_cri(u->rss_bytes);
        out->page_faults = stats_u64_cri(u->page_faults);
        out->major_page_faults = stats_u64_cri(u->major_page_faults);
        psi_of(&out->psi, u->psi);
}

/* ---- Cgroup fallbacks ----------------------------------------------------------- */

static bool safe_component(const char *s)
{
        return s && *s && strchr(s, '/') == NULL && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

/* The pod's cgroup (src/cm's naming), or NULL. */
static char *pod_cgroup(const struct stats_provider *p, const char *uid)
{
        if (p->kubepods == NULL || !safe_component(uid))
                return NULL;
        static const char *const qos[] = {"", "/burstable", "/besteffort"};
        for (size_t i = 0; i < sizeof(qos) / sizeof(qos[0]); i++) {
                cleanup_free char *name = xasprintf("%s%s/pod%s", p->kubepods, qos[i], uid);
                char *path = cgroup_name_literal(name, p->systemd_cgroups);
                if (stats__cgroup_exists(&p->cgroupfs, path))
                        return path;
                free(path);
        }
        return NULL;
}

/* A container's cgroup under its pod's, as its runtime names it: the ID
 * (containerd, the dockershim: cgroupfs driver), a scope of the systemd
 * driver (cri-containerd-, crio-, docker-<id>.scope), CRI-O's crio-<id>
 * (cgroupfs).  NULL when there is no pod cgroup or none of them exists. */
static char *container_cgroup(const struct stats_provider *p, const char *pod_cg, const char *id)
{
        static const char *const forms[][2] = {
            {"", ""},      {"cri-containerd-", ".scope"}, {"crio-", ".scope"},
            {"crio-", ""}, {"docker-", ".scope"},
        };
        if (pod_cg == NULL || !safe_component(id))
                return NULL;
        for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
                char *name = xasprintf("%s/%s%s%s", pod_cg, forms[i][0], id, forms[i][1]);
                if (stats__cgroup_exists(&p->cgroupfs, name))
                        return name;
                free(name);
        }
        return NULL;
}

/* A cgroup's readings, taken once when a field is missing. */
struct lazy_cgroup {
        const char *name; /* NULL: none */
        bool read, ok;
        struct stats_cpu cpu;
        struct stats_memory memory;
        struct stats_swap swap;
        struct stats_io io;
};

static struct lazy_cgroup *lazy_get(struct stats_refresh *r, struct lazy_cgroup *l)
{
        if (!l->read && l->name) {
                l->read = true;
                l->ok = stats__cgroup_stats(r->p, l->name, r->now_ns, &l->cpu, &l->memory, &l->swap,
                                            &l->io);
        }
        return l->ok ? l : NULL;
}

static void cpu_fill(struct stats_cpu *c, const struct stats_cpu *from)
{
        if (!from->ok)
                return;
        if (!c->usage_core_nano_seconds.ok) {
                /* the cumulative value is the cgroup's: so is its time */
                c->usage_core_nano_seconds = from->usage_core_nano_seconds;
                c->time_ns = from->time_ns;
        }
        if (!c->psi.ok)
                c->psi = from->psi;
}

static void memory_fill(struct stats_memory *m, const struct stats_memory *from)
{
        if (!from->ok)
                return;
        fill(&m->available, from->available);
        fill(&m->usage, from->usage);
        fill(&m->working_set, from->working_set);
        fill(&m->rss, from->rss);
        fill(&m->page_faults, from->page_faults);
        fill(&m->major_page_faults, from->major_page_faults);
        if (!m->psi.ok)
                m->psi = from->psi;
}

static bool memory_complete(const struct stats_memory *m)
{
        return m->usage.ok && m->working_set.ok && m->rss.ok && m->page_faults.ok &&
               m->major_page_faults.ok && m->available.ok && m->psi.ok;
}

/* The soft "Max open files" of the cgroup's first process, pid (cAdvisor's
 * containerd handler reads its container's root process). */
static void nofile_read(struct stats_provider *p, int64_t pid, struct stats_cgroup_view *out)
{
        if (pid <= 0)
                return;
        cleanup_free char *path = xasprintf("%s/%lld/limits", p->proc_root, (long long)pid);
        cleanup_free char *text = NULL;
        cleanup_error ck_error_t err = NULL;
        if (fs_read_file(path, 64u << 10, &text, NULL, &err) == 0)
                out->has_nofile = stats__parse_nofile_soft(text, &out->nofile_soft);
}

void stats__cgroup_view_read(struct stats_provider *p, const char *name, int64_t now_ns,
                             bool container, struct stats_cgroup_view *out)
{
        memset(out, 0, sizeof(*out));
        if (name == NULL || !stats__cgroup_read(&p->cgroupfs, name, p->proc_root, &out->s))
                return;
        out->name = xstrdup(name);
        out->time_ns = now_ns;
        int64_t first_pid;
        stats__cgroup_fds(&p->cgroupfs, name, p->proc_root, &out->s.fds, &out->s.sockets,
                          &first_pid);
        struct stats_blkio b;
        stats__cgroup_blkio(&p->cgroupfs, name, &b);
        if (b.n > 0) {
                out->blkio = xmalloc(sizeof(*out->blkio));
                *out->blkio = b;
        }
        if (container)
                nofile_read(p, first_pid, out);
}

static void view_read(struct stats_refresh *r, const char *name, bool container,
                      struct stats_cgroup_view *out)
{
        stats__cgroup_view_read(r->p, name, r->now_ns, container, out);
}

/* The image cAdvisor labels a container with: what the pod spec named
 * (containerd's image name upstream), else the image the kubelet asked for. */
static const char *image_of(const Runtime__V1__Container *ctr)
{
        const Runtime__V1__ImageSpec *im = ctr->image;
        if (im == NULL)
                return "";
        if (im->user_specified_image && *im->user_specified_image)
                return im->user_specified_image;
        return str_or_empty(im->image);
}

/* ---- Containers -------------------------------------------------------------- */

/* upstream makeContainerStats, with the container's cgroup for what the
 * runtime leaves out (cAdvisor's addCadvisorContainerStats upstream). */
static void build_container(struct stats_refresh *r, const struct stats_pod *pod,
                            const char *pod_cg, const Runtime__V1__ContainerStats *cs,
                            const Runtime__V1__Container *ctr, struct stats_container *out)
{
        const char *id = str_or_empty(cs->attributes->id);
        memset(out, 0, sizeof(*out));
        const Runtime__V1__ContainerMetadata *md =
            cs->attributes->metadata ? cs->attributes->metadata : ctr->metadata;
        out->name = xstrdup(md ? str_or_empty(md->name) : "");
        out->start_ns = ctr->created_at;
        cleanup_free char *cg_name = container_cgroup(r->p, pod_cg, id);
        struct lazy_cgroup cg = {.name = cg_name};
        out->id = xstrdup(id);
        out->image = xstrdup(image_of(ctr));
        view_read(r, cg_name, true, &out->cgroup);
        struct lazy_cgroup *c;

        if (cs->cpu) {
                cpu_of(r, cs->cpu, id, &out->cpu);
                if ((!out->cpu.usage_core_nano_seconds.ok || !out->cpu.psi.ok) &&
                    (c = lazy_get(r, &cg)))
                        cpu_fill(&out->cpu, &c->cpu);
        } else if ((c = lazy_get(r, &cg)) && c->cpu.ok) {
                out->cpu = c->cpu;
        } else {
                out->cpu = (struct stats_cpu){.ok = true, .time_ns = r->now_ns};
                out->cpu.usage_core_nano_seconds = stats_u64_of(0);
                out->cpu.usage_nano_cores = stats_u64_of(0);
        }

        if (cs->memory) {
                memory_of(cs->memory, &out->memory);
                if (!memory_complete(&out->memory) && (c = lazy_get(r, &cg)))
                        memory_fill(&out->memory, &c->memory);
        } else if ((c = lazy_get(r, &cg)) && c->memory.ok) {
                out->memory = c->memory;
        } else {
                out->memory = (struct stats_memory){.ok = true, .time_ns = r->now_ns};
                out->memory.working_set = stats_u64_of(0);
                out->memory.usage = stats_u64_of(0);
                out->memory.rss = stats_u64_of(0);
        }

        if (cs->swap) {
                out->swap = (struct stats_swap){.ok = true, .time_ns = cs->swap->timestamp};
                out->swap.usage = stats_u64_cri(cs->swap->swap_usage_bytes);
                out->swap.available = stats_u64_cri(cs->swap->swap_available_bytes);
                if ((!out->swap.usage.ok || !out->swap.available.ok) && (c = lazy_get(r, &cg)) &&
                    c->swap.ok) {
                        fill(&out->swap.usage, c->swap.usage);
                        fill(&out->swap.available, c->swap.available);
                }
        } else if ((c = lazy_get(r, &cg)) && c->swap.ok) {
                out->swap = c->swap;
        } else {
                out->swap = (struct stats_swap){.ok = true, .time_ns = r->now_ns};
                out->swap.usage = stats_u64_of(0);
                out->swap.available = stats_u64_of(0);
        }

        /* KubeletPSI: an IOStats always, its PSI when known */
        out->io = (struct stats_io){.ok = true, .time_ns = cs->io ? cs->io->timestamp : r->now_ns};
        if (cs->io)
                psi_of(&out->io.psi, cs->io->psi);
        if (!out->io.psi.ok && (c = lazy_get(r, &cg)) && c->io.ok)
                out->io.psi = c->io.psi;

        /* the writable layer: usage from the runtime, the filesystem's size
         * from its mountpoint */
        out->rootfs = (struct stats_fs){.ok = true};
        const Runtime__V1__FilesystemUsage *wl = cs->writable_layer;
        if (wl) {
                out->rootfs.time_ns = wl->timestamp;
                out->rootfs.used = stats_u64_cri(wl->used_bytes);
                out->rootfs.inodes_used = stats_u64_cri(wl->inodes_used);
                if (wl->fs_id && wl->fs_id->mountpoint && *wl->fs_id->mountpoint) {
                        const struct stats_fs_memo *m = fs_info_of(r, wl->fs_id->mountpoint);
                        if (m->ok) {
                                out->rootfs.available = stats_u64_of(m->info.available);
                                out->rootfs.capacity = stats_u64_of(m->info.capacity);
                                out->rootfs.inodes_free = stats_u64_of(m->info.inodes_free);
                                out->rootfs.inodes = stats_u64_of(m->info.inodes);
                        }
                }
        }

        cleanup_free char *logs =
            stats__pod_logs_path(r->p->pod_logs_dir, pod->namespace, pod->name, pod->uid,
                                 ctr->metadata ? ctr->metadata->name : NULL);
        if (logs == NULL || !stats__dir_files_usage(logs, &r->rootfs, r->now_ns, &out->logs))
                LOG_INFO(6, "Unable to fetch container log stats", "containerName=\"%s\"",
                         out->name);
}

static int cmp_container_name(const void *a, const void *b)
{
        return strcmp(((const struct stats_container *)a)->name,
                      ((const struct stats_container *)b)->name);
}

/* ---- Pods -------------------------------------------------------------------- */

static void add_u64(struct stats_u64 *dst, struct stats_u64 v)
{
        *dst = stats_u64_of((dst->ok ? dst->v : 0) + (v.ok ? v.v : 0));
}

/* upstream addPodCPUMemoryStats without a pod cgroup: the sums of the
 * containers (time: the last container's). */
static void sum_containers(struct stats_pod *pod, bool cpu, bool memory)
{
        for (size_t i = 0; i < pod->n_containers; i++) {
                const struct stats_container *c = &pod->containers[i];
                if (cpu && c->cpu.ok) {
                        pod->cpu.ok = true;
                        pod->cpu.time_ns = c->cpu.time_ns;
                        add_u64(&pod->cpu.usage_core_nano_seconds, c->cpu.usage_core_nano_seconds);
                        add_u64(&pod->cpu.usage_nano_cores, c->cpu.usage_nano_cores);
                }
                if (memory && c->memory.ok) {
                        struct stats_memory *m = &pod->memory;
                        m->ok = true;
                        m->time_ns = c->memory.time_ns;
                        add_u64(&m->available, c->memory.available);
                        add_u64(&m->usage, c->memory.usage);
                        add_u64(&m->working_set, c->memory.working_set);
                        add_u64(&m->rss, c->memory.rss);
                        add_u64(&m->page_faults, c->memory.page_faults);
                        add_u64(&m->major_page_faults, c->memory.major_page_faults);
                }
        }
}

/* upstream addSwapStats without a pod cgroup (time: the first container's). */
static void sum_swap(struct stats_pod *pod)
{
        for (size_t i = 0; i < pod->n_containers; i++) {
                const struct stats_container *c = &pod->containers[i];
                if (!c->swap.ok)
                        continue;
                if (!pod->swap.ok)
                        pod->swap = (struct stats_swap){.ok = true, .time_ns = c->swap.time_ns};
                add_u64(&pod->swap.available, c->swap.available);
                add_u64(&pod->swap.usage, c->swap.usage);
        }
}

static void iface_of(struct stats_iface *dst, const Runtime__V1__NetworkInterfaceUsage *u)
{
        memset(dst, 0, sizeof(*dst));
        if (u == NULL)
                return;
        dst->name = xstrdup(str_or_empty(u->name));
        dst->rx_bytes = stats_u64_cri(u->rx_bytes);
        dst->rx_errors = stats_u64_cri(u->rx_errors);
        dst->tx_bytes = stats_u64_cri(u->tx_bytes);
        dst->tx_errors = stats_u64_cri(u->tx_errors);
}

/* The network of a pod the runtime gave none for: /proc/<pid>/net/dev of
 * one of its processes (cAdvisor reads the sandbox's pid). */
static void network_from_procs(struct stats_refresh *r, const char *pod_cg,
                               struct stats_network *out)
{
        int64_t pid = 0;
        stats__cgroup_procs(&r->p->cgroupfs, pod_cg, true, &pid);
        if (pid <= 0)
                return;
        cleanup_free char *path = xasprintf("%s/%lld/net/dev", r->p->proc_root, (long long)pid);
        cleanup_free char *text = NULL;
        cleanup_error ck_error_t err = NULL;
        if (fs_read_file(path, 1u << 20, &text, NULL, &err) < 0)
                return;
        struct stats_iface *ifaces;
        size_t n;
        if (stats__parse_net_dev(text, &ifaces, &n) < 0)
                return;
        stats__network_from_ifaces(out, r->now_ns, ifaces, n);
}

/* dst (cleared) becomes a deep copy of src. */
static void network_copy(struct stats_network *dst, const struct stats_network *src)
{
        *dst = *src;
        dst->dflt.name = src->dflt.name ? xstrdup(src->dflt.name) : NULL;
        dst->ifaces = xcalloc(src->n_ifaces + 1, sizeof(*dst->ifaces));
        for (size_t i = 0; i < src->n_ifaces; i++) {
                dst->ifaces[i] = src->ifaces[i];
                dst->ifaces[i].name = src->ifaces[i].name ? xstrdup(src->ifaces[i].name) : NULL;
        }
}

void stats__build_pod(struct stats_refresh *r, const struct stats_pod_build *b,
                      struct stats_pod *pod)
{
        memset(pod, 0, sizeof(*pod));
        const Runtime__V1__PodSandboxMetadata *md = b->sandbox->metadata;
        pod->name = xstrdup(md ? str_or_empty(md->name) : "");
        pod->namespace = xstrdup(md ? str_or_empty(md->namespace_) : "");
        pod->uid = xstrdup(md ? str_or_empty(md->uid) : "");
        pod->start_ns = b->sandbox->created_at;
        cleanup_free char *pod_cg = pod_cgroup(r->p, pod->uid);
        struct lazy_cgroup cg = {.name = pod_cg};
        struct lazy_cgroup *c;
        pod->sandbox_id = xstrdup(str_or_empty(b->sandbox->id));
        view_read(r, pod_cg, false, &pod->cgroup);
        cleanup_free char *sb_cg = container_cgroup(r->p, pod_cg, pod->sandbox_id);
        view_read(r, sb_cg, true, &pod->sandbox_cgroup);

        pod->containers = xcalloc(b->n_cs + 1, sizeof(*pod->containers));
        for (size_t i = 0; i < b->n_cs; i++)
                build_container(r, pod, pod_cg, b->cs[i], b->ctrs[i],
                                &pod->containers[pod->n_containers++]);
        if (pod->n_containers > 1)
                qsort(pod->containers, pod->n_containers, sizeof(*pod->containers),
                      cmp_container_name);

        const Runtime__V1__LinuxPodSandboxStats *lx = b->stats ? b->stats->linux : NULL;
        cleanup_free char *key = xasprintf("pod/%s", str_or_empty(b->sandbox->id));
        if (lx && lx->cpu) {
                cpu_of(r, lx->cpu, key, &pod->cpu);
                if ((!pod->cpu.usage_core_nano_seconds.ok || !pod->cpu.psi.ok) &&
                    (c = lazy_get(r, &cg)))
                        cpu_fill(&pod->cpu, &c->cpu);
        } else if ((c = lazy_get(r, &cg)) && c->cpu.ok) {
                pod->cpu = c->cpu;
        }
        if (lx && lx->memory) {
                memory_of(lx->memory, &pod->memory);
                if (!memory_complete(&pod->memory) && (c = lazy_get(r, &cg)))
                        memory_fill(&pod->memory, &c->memory);
        } else if ((c = lazy_get(r, &cg)) && c->memory.ok) {
                pod->memory = c->memory;
        }
        sum_containers(pod, !pod->cpu.ok, !pod->memory.ok);

        if ((c = lazy_get(r, &cg)) && c->swap.ok)
                pod->swap = c->swap;
        else
                sum_swap(pod);

        if (lx && lx->io) {
                pod->io = (struct stats_io){.ok = true, .time_ns = lx->io->timestamp};
                psi_of(&pod->io.psi, lx->io->psi);
        } else if ((c = lazy_get(r, &cg)) && c->io.ok) {
                pod->io = c->io;
        } else if (pod->n_containers > 0) {
                pod->io = (struct stats_io){.ok = true, .time_ns = pod->containers[0].io.time_ns};
        }

        if (lx && lx->network) {
                const Runtime__V1__NetworkUsage *nu = lx->network;
                pod->network = (struct stats_network){.ok = true, .time_ns = nu->timestamp};
                iface_of(&pod->network.dflt, nu->default_interface);
                pod->network.ifaces = xcalloc(nu->n_interfaces + 1, sizeof(*pod->network.ifaces));
                for (size_t i = 0; i < nu->n_interfaces; i++)
                        iface_of(&pod->network.ifaces[pod->network.n_ifaces++], nu->interfaces[i]);
                /* cAdvisor reads the sandbox's /proc/<pid>/net/dev (packets,
                 * drops: the CRI has neither) */
                if (pod_cg)
                        network_from_procs(r, pod_cg, &pod->proc_network);
                /* containerd 1.6 gives the default interface alone, and no
                 * time: cAdvisor's reading (what upstream reports with
                 * containerd) has the list and its time */
                if ((pod->network.n_ifaces == 0 || pod->network.time_ns == 0) &&
                    pod->proc_network.ok && pod->proc_network.n_ifaces > 0) {
                        stats__network_clear(&pod->network);
                        network_copy(&pod->network, &pod->proc_network);
                }
        } else if (pod_cg) {
                network_from_procs(r, pod_cg, &pod->network);
        }

        if (lx && lx->process) {
                pod->has_process_stats = true; /* even without a count, as upstream */
                pod->process_count = stats_u64_cri(lx->process->process_count);
        } else if (pod_cg) {
                /* cAdvisor's ProcessCount per container, summed (mergeProcessStats) */
                bool any = false;
                uint64_t sum = 0;
                for (size_t i = 0; i < b->n_cs; i++) {
                        cleanup_free char *name =
                            container_cgroup(r->p, pod_cg, b->cs[i]->attributes->id);
                        if (name == NULL)
                                continue;
                        any = true;
                        sum += (uint64_t)stats__cgroup_procs(&r->p->cgroupfs, name, false, NULL);
                }
                if (any) {
                        pod->has_process_stats = true;
                        pod->process_count = stats_u64_of(sum);
                }
        }

        stats__pod_volumes(r->p->volume_cache, r->p->root_dir, pod->uid, r->now_ns, r->now_mono_ns,
                           r->p->volume_period_ns, &pod->volumes, &pod->n_volumes);
        stats__pod_ephemeral(r->p, pod, &r->rootfs, r->now_ns);
}
