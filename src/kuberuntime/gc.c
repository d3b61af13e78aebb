/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Container garbage collection (upstream pkg/kubelet/kuberuntime/
 * kuberuntime_gc.go, evictContainers): which dead containers of the pods
 * that exist go, by the policy of --minimum-container-ttl-duration,
 * --maximum-dead-containers-per-container and --maximum-dead-containers.
 */
#include "kuberuntime/runtime_internal.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NS_PER_MS 1000000LL

/* qsort_r of indices into the array given as arg */
static int by_unit_newest_first(const void *a, const void *b, void *arg)
{
        const struct container_gc_info *base = arg;
        const struct container_gc_info *x = &base[*(const size_t *)a];
        const struct container_gc_info *y = &base[*(const size_t *)b];
        int c = strcmp(x->pod_uid, y->pod_uid);
        if (c == 0)
                c = strcmp(x->name, y->name);
        if (c == 0 && x->created_ns != y->created_ns)
                c = x->created_ns > y->created_ns ? -1 : 1;
        return c;
}

static int by_newest_first(const void *a, const void *b, void *arg)
{
        const struct container_gc_info *base = arg;
        const struct container_gc_info *x = &base[*(const size_t *)a];
        const struct container_gc_info *y = &base[*(const size_t *)b];
        if (x->created_ns != y->created_ns)
                return x->created_ns > y->created_ns ? -1 : 1;
        return strcmp(x->id, y->id);
}

static bool same_unit(const struct container_gc_info *x, const struct container_gc_info *y)
{
        return strcmp(x->pod_uid, y->pod_uid) == 0 && strcmp(x->name, y->name) == 0;
}

/* upstream enforceMaxContainersPerEvictUnit: in each unit of idx (sorted by
 * unit, newest first), what is not yet removed beyond the first keep goes. */
static void enforce_per_unit(const struct container_gc_info *c, const size_t *idx, size_t n,
                             int32_t keep, bool *remove)
{
        int32_t seen = 0;
        for (size_t k = 0; k < n; k++) {
                if (k > 0 && !same_unit(&c[idx[k]], &c[idx[k - 1]]))
                        seen = 0;
                if (remove[idx[k]])
                        continue;
                if (seen++ >= keep)
                        remove[idx[k]] = true;
        }
}

size_t kuberuntime_container_gc_plan(const struct container_gc_info *c, size_t n,
                                     const struct container_gc_policy *p, int64_t now_ns,
                                     bool *remove)
{
        memset(remove, 0, n * sizeof(*remove));
        /* upstream evictableContainers: not running, created at least
         * min_age ago */
        int64_t newest_gc_time = now_ns - p->min_age_ms * NS_PER_MS;
        cleanup_free size_t *idx = xcalloc(n + 1, sizeof(*idx));
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
                if (!c[i].running && c[i].created_ns <= newest_gc_time)
                        idx[m++] = i;
        qsort_r(idx, m, sizeof(*idx), by_unit_newest_first, (void *)c);
        if (p->max_per_pod_container >= 0)
                enforce_per_unit(c, idx, m, p->max_per_pod_container, remove);
        size_t left = 0, units = 0;
        for (size_t k = 0; k < m; k++) {
                left += !remove[idx[k]];
                units += k == 0 || !same_unit(&c[idx[k]], &c[idx[k - 1]]);
        }
        if (p->max_containers >= 0 && left > (size_t)p->max_containers) {
                int32_t per = units ? (int32_t)((size_t)p->max_containers / units) : 0;
                enforce_per_unit(c, idx, m, per < 1 ? 1 : per, remove);
                /* still too many: the oldest of all go */
                size_t k2 = 0;
                for (size_t k = 0; k < m; k++)
                        if (!remove[idx[k]])
                                idx[k2++] = idx[k];
                if (k2 > (size_t)p->max_containers) {
                        qsort_r(idx, k2, sizeof(*idx), by_newest_first, (void *)c);
                        for (size_t k = (size_t)p->max_containers; k < k2; k++)
                                remove[idx[k]] = true;
                }
        }
        size_t count = 0;
        for (size_t i = 0; i < n; i++)
                count += remove[i];
        return count;
}

static const char *label_of(const Runtime__V1__Container *c, const char *key)
{
        for (size_t i = 0; i < c->n_labels; i++)
                if (c->labels[i]->key && strcmp(c->labels[i]->key, key) == 0)
                        return c->labels[i]->value;
        return NULL;
}

const struct container_gc_policy *kuberuntime_options_gc(const struct kuberuntime *rt)
{
        return &rt->opts.gc;
}

int kuberuntime_gc_containers(struct kuberuntime *rt, struct cri_client *cri,
                              const struct container_gc_policy *policy, int64_t now_ns,
                              ck_error_t *err)
{
        const struct container_gc_policy *p = policy ? policy : &rt->opts.gc;
        if (policy == NULL && p->max_containers < 0)
                return 0;
        Runtime__V1__ListContainersResponse *lc = NULL;
        if (cri_list_containers(cri, NULL, &lc, err) < 0)
                return ck_error_wrap(err, "failed to list containers");
        size_t n = 0;
        struct container_gc_info *c = xcalloc(lc->n_containers + 1, sizeof(*c));
        const Runtime__V1__Container **src = xcalloc(lc->n_containers + 1, sizeof(*src));
        for (size_t i = 0; i < lc->n_containers; i++) {
                const Runtime__V1__Container *x = lc->containers[i];
                const char *uid = label_of(x, "io.kubernetes.pod.uid");
                const char *name = label_of(x, "io.kubernetes.container.name");
                if (uid == NULL || name == NULL || x->id == NULL)
                        continue; /* not a kubelet's container */
                src[n] = x;
                c[n++] = (struct container_gc_info){
                    .id = x->id,
                    .pod_uid = uid,
                    .name = name,
                    .created_ns = x->created_at,
                    .running = x->state == RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING};
        }
        bool *remove = xcalloc(n + 1, sizeof(*remove));
        kuberuntime_container_gc_plan(c, n, p, now_ns, remove);
        for (size_t i = 0; i < n; i++) {
                if (!remove[i])
                        continue;
                /* the log file's path: only ContainerStatus has it */
                Runtime__V1__ContainerStatusResponse *cs = NULL;
                cleanup_error ck_error_t se = NULL;
                if (cri_container_status(cri, c[i].id, &cs, &se) < 0)
                        LOG_INFO(4, "No status of a container to remove",
                                 "containerID=\"%s\" err=\"%s\"", c[i].id, ck_error_msg(se));
                struct runtime_container_status st = {
                    .id = (char *)c[i].id,
                    .name = (char *)c[i].name,
                    .log_path = cs && cs->status ? cs->status->log_path : NULL};
                const char *pod = label_of(src[i], "io.kubernetes.pod.name");
                const char *ns = label_of(src[i], "io.kubernetes.pod.namespace");
                LOG_INFO(4, "Removing container to stay within the dead containers' limit",
                         "containerID=\"%s\" pod=\"%s/%s\" containerName=\"%s\"", c[i].id,
                         ns ? ns : "", pod ? pod : "", c[i].name);
                cleanup_error ck_error_t e = NULL;
                /* upstream removeOldestN: a failure is logged, the rest go on */
                if (kuberuntime__remove_container(rt, cri, &st, pod, ns, &e) < 0)
                        LOG_ERROR("Failed to remove container", "containerID=\"%s\" err=\"%s\"",
                                  c[i].id, ck_error_msg(e));
                if (cs)
                        runtime__v1__container_status_response__free_unpacked(cs, NULL);
        }
        free(remove);
        free(src);
        free(c);
        runtime__v1__list_containers_response__free_unpacked(lc, NULL);
        return 0;
}

int kuberuntime_pod_logs_gc(struct kuberuntime *rt, kuberuntime_pod_gone_fn gone, void *ctx,
                            ck_error_t *err)
{
        const char *dir = rt->opts.pod_logs_dir;
        if (dir == NULL || dir[0] == '\0')
                return 0;
        DIR *d = NULL;
        if (fs_opendir_if_exists(dir, &d, err) < 0)
                return -1;
        if (d == NULL)
                return 0;
        int dfd = dirfd(d);
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
                /* <namespace>_<name>_<uid>: neither a namespace nor a pod
                 * name holds '_' */
                const char *uid = strrchr(de->d_name, '_');
                if (uid == NULL || uid == de->d_name || uid[1] == '\0' ||
                    strchr(de->d_name, '_') == uid)
                        continue;
                uid++;
                struct stat st;
                if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
                        continue;
                if (!gone(ctx, uid))
                        continue;
                cleanup_free char *path = xasprintf("%s/%s", dir, de->d_name);
                LOG_INFO(2, "Removing the log directory of a pod that is gone",
                         "path=\"%s\" podUID=\"%s\"", path, uid);
                cleanup_error ck_error_t e = NULL;
                if (fs_remove_all(path, &e) < 0)
                        LOG_WARN("Failed to remove a pod's log directory", "path=\"%s\" err=\"%s\"",
                                 path, ck_error_msg(e));
        }
        closedir(d);
        return 0;
}
