/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Mirror pods (upstream pkg/kubelet/pod/mirror_client.go and the mirror
 * steps of SyncPod / HandlePodCleanups), on the sync loop thread: every
 * static pod gets a mirror pod in the apiserver so that `kubectl get pods`
 * shows it and its status; a mirror pod whose static pod is gone, or that
 * no longer matches it (config hash) or is being deleted, is deleted (and
 * recreated).  The writes themselves run on the status manager's thread.
 */
#include "kubelet/kubelet_internal.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <string.h>

#define ANNOTATION_MIRROR "kubernetes.io/config.mirror"
#define ANNOTATION_HASH "kubernetes.io/config.hash"
/* A write asked for and not yet seen in the watch is asked again after this. */
#define MIRROR_RETRY_MS 15000

bool kl_is_mirror_pod(const struct pod *pod)
{
        return kv_list_get(&pod->annotations, ANNOTATION_MIRROR) != NULL;
}

void kl_mirrors_take(struct kubelet *kl, struct kl_event *ev)
{
        for (size_t i = 0; i < kl->loop.n_mirrors; i++)
                pod_unref(kl->loop.mirrors[i]);
        free(kl->loop.mirrors);
        kl->loop.mirrors = xcalloc(ev->n_pods ? ev->n_pods : 1, sizeof(*kl->loop.mirrors));
        kl->loop.n_mirrors = 0;
        size_t kept = 0;
        for (size_t i = 0; i < ev->n_pods; i++) {
                if (kl_is_mirror_pod(ev->pods[i]))
                        kl->loop.mirrors[kl->loop.n_mirrors++] = ev->pods[i];
                else
                        ev->pods[kept++] = ev->pods[i];
        }
        ev->n_pods = kept;
        kl->loop.api_seen = true;
}

static struct pod *mirror_of(struct kubelet *kl, const struct pod *pod)
{
        for (size_t i = 0; i < kl->loop.n_mirrors; i++)
                if (strcmp(kl->loop.mirrors[i]->name, pod->name) == 0 &&
                    strcmp(kl->loop.mirrors[i]->namespace, pod->namespace) == 0)
                        return kl->loop.mirrors[i];
        return NULL;
}

/* The mirror pod of a static pod: its object, with the mirror annotation
 * and without what the apiserver sets. */
static json_t *mirror_object(const struct pod *pod, const char *hash)
{
        json_t *obj = json_deep_copy(pod->raw);
        json_object_del(obj, "status");
        json_t *meta = json_object_get(obj, "metadata");
        const char *drop[] = {"uid",        "resourceVersion", "creationTimestamp",
                              "generation", "managedFields",   "selfLink"};
        for (size_t i = 0; i < sizeof(drop) / sizeof(drop[0]); i++)
                json_object_del(meta, drop[i]);
        json_t *ann = json_object_get(meta, "annotations");
        if (!json_is_object(ann)) {
                ann = json_object();
                json_object_set_new(meta, "annotations", ann);
        }
        json_object_set_new(ann, ANNOTATION_MIRROR, json_string(hash));
        return obj;
}

static bool recently(struct kl_recent *list, size_t n, const char *uid, int64_t now)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(list[i].uid, uid) == 0 && now - list[i].at_ms < MIRROR_RETRY_MS)
                        return true;
        return false;
}

static void forget_old_deletes(struct kubelet *kl, int64_t now)
{
        for (size_t i = 0; i < kl->loop.n_mirror_deletes; i++) {
                if (now - kl->loop.mirror_deletes[i].at_ms < MIRROR_RETRY_MS)
                        continue;
                free(kl->loop.mirror_deletes[i].uid);
                kl->loop.mirror_deletes[i--] = kl->loop.mirror_deletes[--kl->loop.n_mirror_deletes];
        }
}

static void delete_orphans(struct kubelet *kl, int64_t now)
{
        for (size_t i = 0; i < kl->loop.n_mirrors; i++) {
                const struct pod *m = kl->loop.mirrors[i];
                bool wanted = false;
                for (size_t j = 0; j < kl->loop.n_records && !wanted; j++) {
                        const struct pod_record *r = &kl->loop.records[j];
                        /* a static pod being stopped keeps its mirror
                         * until it is gone, as upstream */
                        wanted = r->pod->source != POD_SOURCE_API &&
                                 strcmp(r->pod->name, m->name) == 0 &&
                                 strcmp(r->pod->namespace, m->namespace) == 0;
                }
                if (wanted ||
                    recently(kl->loop.mirror_deletes, kl->loop.n_mirror_deletes, m->uid, now))
                        continue;
                LOG_INFO(2, "Deleting orphaned mirror pod", "pod=\"%s\" podUID=\"%s\"",
                         pod_full_name(m), m->uid);
                status_manager_delete_pod(kl->sm, m->namespace, m->name, m->uid);
                kl->loop.mirror_deletes =
                    xrealloc(kl->loop.mirror_deletes,
                             (kl->loop.n_mirror_deletes + 1) * sizeof(*kl->loop.mirror_deletes));
                kl->loop.mirror_deletes[kl->loop.n_mirror_deletes++] =
                    (struct kl_recent){.uid = xstrdup(m->uid), .at_ms = now};
        }
}

void kl_mirrors_reconcile(struct kubelet *kl)
{
        if (kl->sm == NULL || !kl->loop.api_seen)
                return;
        int64_t now = fs_now_mono_ms();
        forget_old_deletes(kl, now);
        for (size_t i = 0; i < kl->loop.n_records; i++) {
                struct pod_record *r = &kl->loop.records[i];
                /* upstream makes the mirror in SyncPod: not for a static
                 * pod that waits for another of its name to stop */
                if (r->pod->source == POD_SOURCE_API || r->deleting || !r->static_started)
                        continue;
                const char *hash = kv_list_get(&r->pod->annotations, ANNOTATION_HASH);
                if (hash == NULL)
                        hash = r->pod->uid;
                struct pod *m = mirror_of(kl, r->pod);
                const char *m_hash = m ? kv_list_get(&m->annotations, ANNOTATION_MIRROR) : NULL;
                if (m && m->deletion_timestamp == NULL && m_hash && strcmp(m_hash, hash) == 0) {
                        bool again = status_store_set_api_uid(kl->status, r->pod->uid, m->uid);
                        again |= status_store_reconcile(kl->status, r->pod->uid,
                                                        json_object_get(m->raw, "status"));
                        if (again)
                                status_manager_notify(kl->sm);
                        r->mirror_requested_ms = 0;
                        continue;
                }
                status_store_set_api_uid(kl->status, r->pod->uid, NULL);
                if (r->mirror_requested_ms != 0 && now - r->mirror_requested_ms < MIRROR_RETRY_MS)
                        continue;
                LOG_INFO(2, m ? "Recreating mirror pod" : "Creating mirror pod",
                         "pod=\"%s\" podUID=\"%s\"", pod_full_name(r->pod), r->pod->uid);
                status_manager_create_mirror(kl->sm, mirror_object(r->pod, hash),
                                             m ? m->uid : NULL);
                r->mirror_requested_ms = now;
        }
        if (kl->loop.sources_ready)
                delete_orphans(kl, now);
}

void kl_mirrors_free(struct kubelet *kl)
{
        for (size_t i = 0; i < kl->loop.n_mirrors; i++)
                pod_unref(kl->loop.mirrors[i]);
        free(kl->loop.mirrors);
        for (size_t i = 0; i < kl->loop.n_mirror_deletes; i++)
                free(kl->loop.mirror_deletes[i].uid);
        free(kl->loop.mirror_deletes);
}
