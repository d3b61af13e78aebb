/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pods and containers the CRI reports stats for (upstream
 * cri_stats_provider.go and cri_stats_provider_linux.go), and the image
 * filesystem (ImageFsStats).
 *
 * Which pods: the sandboxes of ListPodSandbox less the terminated ones that
 * have a successor (removeTerminatedPods); which containers: the running
 * ones of ListContainers (removeTerminatedContainers).  Their stats:
 * ListContainerStats grouped by sandbox (listPodStatsPartiallyFromCRI,
 * upstream's default), or with the feature gate PodAndContainerStatsFromCRI
 * ListPodSandboxStats (listPodStatsStrictlyFromCRI; ListContainerStats when
 * the runtime does not implement it).  Each pod is then built by
 * pod_stats.c.
 */
#include "stats/stats_internal.h"

#include "grpc/grpc.h"
#include "util/cleanup.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* ---- Listing ------------------------------------------------------------- */

static const char *str_or_empty(const char *s)
{
        return s ? s : "";
}

static int cmp_sandbox_id(const void *a, const void *b)
{
        const Runtime__V1__PodSandbox *x = *(const Runtime__V1__PodSandbox *const *)a;
        const Runtime__V1__PodSandbox *y = *(const Runtime__V1__PodSandbox *const *)b;
        return strcmp(str_or_empty(x->id), str_or_empty(y->id));
}

static int cmp_container_id(const void *a, const void *b)
{
        const Runtime__V1__Container *x = *(const Runtime__V1__Container *const *)a;
        const Runtime__V1__Container *y = *(const Runtime__V1__Container *const *)b;
        return strcmp(str_or_empty(x->id), str_or_empty(y->id));
}

static const char *sb_name(const Runtime__V1__PodSandbox *s)
{
        return s->metadata ? str_or_empty(s->metadata->name) : "";
}

static const char *sb_namespace(const Runtime__V1__PodSandbox *s)
{
        return s->metadata ? str_or_empty(s->metadata->namespace_) : "";
}

static int cmp_sandbox_ref_created(const void *a, const void *b)
{
        const Runtime__V1__PodSandbox *x = *(const Runtime__V1__PodSandbox *const *)a;
        const Runtime__V1__PodSandbox *y = *(const Runtime__V1__PodSandbox *const *)b;
        int c = strcmp(sb_namespace(x), sb_namespace(y));
        if (c == 0)
                c = strcmp(sb_name(x), sb_name(y));
        if (c == 0)
                c = x->created_at < y->created_at ? -1 : x->created_at > y->created_at;
        return c;
}

/* upstream removeTerminatedPods: per name/namespace, every ready sandbox,
 * else the newest.  Returns a new array (sorted by ID) of borrowed
 * pointers. */
static const Runtime__V1__PodSandbox **
select_sandboxes(const Runtime__V1__ListPodSandboxResponse *r, size_t *n_out)
{
        size_t n = r->n_items;
        const Runtime__V1__PodSandbox **all = xcalloc(n + 1, sizeof(*all));
        for (size_t i = 0; i < n; i++)
                all[i] = r->items[i];
        qsort(all, n, sizeof(*all), cmp_sandbox_ref_created);
        const Runtime__V1__PodSandbox **out = xcalloc(n + 1, sizeof(*out));
        size_t o = 0;
        for (size_t i = 0; i < n;) {
                size_t j = i;
                while (j < n && strcmp(sb_namespace(all[j]), sb_namespace(all[i])) == 0 &&
                       strcmp(sb_name(all[j]), sb_name(all[i])) == 0)
                        j++;
                bool ready = false;
                for (size_t k = i; k < j; k++) {
                        if (j - i == 1 ||
                            all[k]->state == RUNTIME__V1__POD_SANDBOX_STATE__SANDBOX_READY) {
                                out[o++] = all[k];
                                ready = true;
                        }
                }
                if (!ready)
                        out[o++] = all[j - 1];
                i = j;
        }
        free(all);
        qsort(out, o, sizeof(*out), cmp_sandbox_id);
        *n_out = o;
        return out;
}

static const Runtime__V1__PodSandbox *find_sandbox(const Runtime__V1__PodSandbox **v, size_t n,
                                                   const char *id)
{
        Runtime__V1__PodSandbox key = RUNTIME__V1__POD_SANDBOX__INIT;
        key.id = (char *)id;
        const Runtime__V1__PodSandbox *kp = &key;
        const Runtime__V1__PodSandbox **hit = bsearch(&kp, v, n, sizeof(*v), cmp_sandbox_id);
        return hit ? *hit : NULL;
}

/* upstream removeTerminatedContainers: the running ones, sorted by ID. */
static const Runtime__V1__Container **
select_containers(const Runtime__V1__ListContainersResponse *r, size_t *n_out)
{
        const Runtime__V1__Container **out = xcalloc(r->n_containers + 1, sizeof(*out));
        size_t o = 0;
        for (size_t i = 0; i < r->n_containers; i++)
                if (r->containers[i]->state == RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING)
                        out[o++] = r->containers[i];
        qsort(out, o, sizeof(*out), cmp_container_id);
        *n_out = o;
        return out;
}

static const Runtime__V1__Container *find_container(const Runtime__V1__Container **v, size_t n,
                                                    const char *id)
{
        Runtime__V1__Container key = RUNTIME__V1__CONTAINER__INIT;
        key.id = (char *)id;
        const Runtime__V1__Container *kp = &key;
        const Runtime__V1__Container **hit = bsearch(&kp, v, n, sizeof(*v), cmp_container_id);
        return hit ? *hit : NULL;
}

static int cmp_pod(const void *a, const void *b)
{
        const struct stats_pod *x = a, *y = b;
        int c = strcmp(x->namespace, y->namespace);
        if (c == 0)
                c = strcmp(x->name, y->name);
        if (c == 0)
                c = strcmp(x->uid, y->uid);
        return c;
}

static struct stats_pod_build *build_for(struct stats_pod_build **v, size_t *n,
                                         const Runtime__V1__PodSandbox *sb)
{
        for (size_t i = 0; i < *n; i++)
                if ((*v)[i].sandbox == sb)
                        return &(*v)[i];
        *v = xrealloc(*v, (*n + 1) * sizeof(**v));
        struct stats_pod_build *b = &(*v)[(*n)++];
        memset(b, 0, sizeof(*b));
        b->sandbox = sb;
        return b;
}

static void add_cs(struct stats_pod_build *b, const Runtime__V1__ContainerStats *cs,
                   const Runtime__V1__Container *ctr)
{
        b->cs = xrealloc(b->cs, (b->n_cs + 1) * sizeof(*b->cs));
        b->ctrs = xrealloc(b->ctrs, (b->n_cs + 1) * sizeof(*b->ctrs));
        b->cs[b->n_cs] = cs;
        b->ctrs[b->n_cs++] = ctr;
}

static bool has_id(const Runtime__V1__ContainerStats *cs)
{
        return cs && cs->attributes && cs->attributes->id;
}

/* The runtime's stats grouped by pod: from ListPodSandboxStats when it
 * answers (ss), else from ListContainerStats (cs). */
static void group(const Runtime__V1__ListPodSandboxStatsResponse *ss,
                  const Runtime__V1__ListContainerStatsResponse *cs,
                  const Runtime__V1__PodSandbox **sbs, size_t n_sbs,
                  const Runtime__V1__Container **ctrs, size_t n_ctrs, struct stats_pod_build **out,
                  size_t *n_out)
{
        if (ss) {
                for (size_t i = 0; i < ss->n_stats; i++) {
                        const Runtime__V1__PodSandboxStats *st = ss->stats[i];
                        if (st == NULL || st->attributes == NULL || st->attributes->id == NULL)
                                continue;
                        const Runtime__V1__PodSandbox *sb =
                            find_sandbox(sbs, n_sbs, st->attributes->id);
                        if (sb == NULL)
                                continue;
                        struct stats_pod_build *b = build_for(out, n_out, sb);
                        b->stats = st;
                        const Runtime__V1__LinuxPodSandboxStats *lx = st->linux;
                        for (size_t k = 0; lx && k < lx->n_containers; k++) {
                                if (!has_id(lx->containers[k]))
                                        continue;
                                const Runtime__V1__Container *ctr =
                                    find_container(ctrs, n_ctrs, lx->containers[k]->attributes->id);
                                if (ctr)
                                        add_cs(b, lx->containers[k], ctr);
                        }
                }
                return;
        }
        for (size_t i = 0; cs && i < cs->n_stats; i++) {
                if (!has_id(cs->stats[i]))
                        continue;
                const Runtime__V1__Container *ctr =
                    find_container(ctrs, n_ctrs, cs->stats[i]->attributes->id);
                if (ctr == NULL || ctr->pod_sandbox_id == NULL)
                        continue;
                const Runtime__V1__PodSandbox *sb = find_sandbox(sbs, n_sbs, ctr->pod_sandbox_id);
                if (sb == NULL)
                        continue;
                add_cs(build_for(out, n_out, sb), cs->stats[i], ctr);
        }
}

void stats__collect_pods(struct stats_provider *p, struct stats_snapshot *s, int64_t now_ns)
{
        cleanup_error ck_error_t err = NULL;
        Runtime__V1__ListContainersResponse *lc = NULL;
        Runtime__V1__ListPodSandboxResponse *ls = NULL;
        Runtime__V1__ListPodSandboxStatsResponse *ss = NULL;
        Runtime__V1__ListContainerStatsResponse *cs = NULL;
        const Runtime__V1__PodSandbox **sbs = NULL;
        const Runtime__V1__Container **ctrs = NULL;
        struct stats_pod_build *builds = NULL;
        size_t n_builds = 0, n_sbs = 0, n_ctrs = 0;
        struct stats_refresh r = {.p = p, .now_ns = now_ns, .now_mono_ns = stats__now_mono(p)};

        Runtime__V1__ContainerFilter cf = RUNTIME__V1__CONTAINER_FILTER__INIT;
        if (cri_list_containers(p->runtime, &cf, &lc, &err) < 0) {
                s->pods_error =
                    xasprintf("failed to list pod stats: failed to get pod or container "
                              "map: failed to list all containers: %s",
                              ck_error_msg(err));
                goto out;
        }
        Runtime__V1__PodSandboxFilter sf = RUNTIME__V1__POD_SANDBOX_FILTER__INIT;
        if (cri_list_pod_sandbox(p->runtime, &sf, &ls, &err) < 0) {
                s->pods_error =
                    xasprintf("failed to list pod stats: failed to get pod or container "
                              "map: failed to list all pod sandboxes: %s",
                              ck_error_msg(err));
                goto out;
        }
        sbs = select_sandboxes(ls, &n_sbs);
        ctrs = select_containers(lc, &n_ctrs);

        /* The gate asks for ListPodSandboxStats, strictly: only a runtime
         * that does not implement it falls back. */
        Runtime__V1__PodSandboxStatsFilter ssf = RUNTIME__V1__POD_SANDBOX_STATS_FILTER__INIT;
        if (p->pod_stats_from_cri && cri_list_pod_sandbox_stats(p->runtime, &ssf, &ss, &err) < 0) {
                if (err == NULL || err->code != GRPC_UNIMPLEMENTED) {
                        s->pods_error =
                            xasprintf("failed to list pod stats: %s", ck_error_msg(err));
                        goto out;
                }
                if (!p->sandbox_stats_unimplemented)
                        LOG_INFO(5,
                                 "CRI implementation must be updated to support "
                                 "ListPodSandboxStats if PodAndContainerStatsFromCRI feature gate "
                                 "is enabled. Falling back to populating with cAdvisor; this call "
                                 "will fail in the future.",
                                 "err=\"%s\"", ck_error_msg(err));
                p->sandbox_stats_unimplemented = true;
                ck_error_release(&err);
                ss = NULL;
        }
        if (ss == NULL) {
                Runtime__V1__ContainerStatsFilter csf = RUNTIME__V1__CONTAINER_STATS_FILTER__INIT;
                if (cri_list_container_stats(p->runtime, &csf, &cs, &err) < 0) {
                        s->pods_error = xasprintf(
                            "failed to list pod stats: failed to list all container stats: %s",
                            ck_error_msg(err));
                        goto out;
                }
        }

        struct stats_fs_info fi;
        if (stats_fs_info(p->root_dir, &fi, &err) == 0) {
                r.rootfs = (struct stats_fs){
                    .ok = true,
                    .time_ns = now_ns,
                    .available = stats_u64_of(fi.available),
                    .capacity = stats_u64_of(fi.capacity),
                    .inodes_free = stats_u64_of(fi.inodes_free),
                    .inodes = stats_u64_of(fi.inodes),
                };
        }
        ck_error_release(&err); /* the node's fs stats report it */

        group(ss, cs, sbs, n_sbs, ctrs, n_ctrs, &builds, &n_builds);
        s->pods = xcalloc(n_builds + 1, sizeof(*s->pods));
        char **uids = xcalloc(n_builds + 1, sizeof(*uids));
        for (size_t i = 0; i < n_builds; i++) {
                stats__build_pod(&r, &builds[i], &s->pods[s->n_pods]);
                uids[i] = s->pods[s->n_pods].uid;
                s->n_pods++;
        }
        stats__volume_cache_retain(p->volume_cache, uids, s->n_pods);
        free(uids);
        if (s->n_pods > 1)
                qsort(s->pods, s->n_pods, sizeof(*s->pods), cmp_pod);
out:
        for (size_t i = 0; i < n_builds; i++) {
                free(builds[i].cs);
                free(builds[i].ctrs);
        }
        free(builds);
        for (size_t i = 0; i < r.n_fs; i++)
                free(r.fs[i].mountpoint);
        free(r.fs);
        free(sbs);
        free(ctrs);
        if (lc)
                runtime__v1__list_containers_response__free_unpacked(lc, NULL);
        if (ls)
                runtime__v1__list_pod_sandbox_response__free_unpacked(ls, NULL);
        if (ss)
                runtime__v1__list_pod_sandbox_stats_response__free_unpacked(ss, NULL);
        if (cs)
                runtime__v1__list_container_stats_response__free_unpacked(cs, NULL);
}

int stats_image_fs(struct cri_client *image, struct stats_image_fs *out, ck_error_t *err)
{
        *out = (struct stats_image_fs){0};
        Runtime__V1__ImageFsInfoResponse *resp = NULL;
        if (cri_image_fs_info(image, &resp, err) < 0)
                return ck_error_wrap(err, "failed to get imageFs stats");
        /* upstream returns the first image filesystem, and it as the
         * container filesystem too ("we don't support separate disks yet") */
        if (resp->n_image_filesystems == 0 || resp->image_filesystems[0] == NULL) {
                runtime__v1__image_fs_info_response__free_unpacked(resp, NULL);
                return ck_error_make(err, 0,
                                     "failed to get imageFs stats: imageFs information is "
                                     "unavailable");
        }
        const Runtime__V1__FilesystemUsage *u = resp->image_filesystems[0];
        out->time_ns = u->timestamp;
        out->has_used = u->used_bytes != NULL;
        out->used = u->used_bytes ? u->used_bytes->value : 0;
        out->has_inodes_used = u->inodes_used != NULL;
        out->inodes_used = u->inodes_used ? u->inodes_used->value : 0;
        if (u->fs_id && u->fs_id->mountpoint && *u->fs_id->mountpoint) {
                cleanup_error ck_error_t e = NULL;
                if (stats_fs_info(u->fs_id->mountpoint, &out->fs, &e) == 0)
                        out->fs_ok = true;
                else
                        LOG_INFO(2, "Failed to get the info of the filesystem with mountpoint",
                                 "mountpoint=\"%s\" err=\"%s\"", u->fs_id->mountpoint,
                                 ck_error_msg(e));
        }
        runtime__v1__image_fs_info_response__free_unpacked(resp, NULL);
        return 0;
}

void stats__collect_image_fs(struct stats_provider *p, struct stats_snapshot *s)
{
        cleanup_error ck_error_t err = NULL;
        struct stats_image_fs fs;
        if (stats_image_fs(p->image, &fs, &err) < 0) {
                s->imagefs_error = xstrdup(ck_error_msg(err));
                return;
        }
        struct stats_fs *f = &s->node.image_fs;
        *f = (struct stats_fs){.ok = true, .time_ns = fs.time_ns};
        if (fs.has_used)
                f->used = stats_u64_of(fs.used);
        if (fs.has_inodes_used)
                f->inodes_used = stats_u64_of(fs.inodes_used);
        if (fs.fs_ok) {
                f->available = stats_u64_of(fs.fs.available);
                f->capacity = stats_u64_of(fs.fs.capacity);
                f->inodes_free = stats_u64_of(fs.fs.inodes_free);
                f->inodes = stats_u64_of(fs.fs.inodes);
        }
        s->node.container_fs = *f;
}
