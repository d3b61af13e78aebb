/* SPDX-License-Identifier: Apache-2.0 */
#include "kubelet/status_manager.h"

#include "kubelet/status_patch.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SYNC_PERIOD_MS 10000 /* upstream syncPeriod of the status manager */
#define RETRY_MS 1000        /* a failed write is tried again this soon */

enum sm_op_kind { SM_OP_DELETE, SM_OP_CREATE_MIRROR };

struct sm_op {
        enum sm_op_kind kind;
        struct sm_op *next;
        char *namespace, *name, *uid; /* DELETE: the pod; CREATE: the stale mirror's uid */
        json_t *mirror;               /* CREATE */
};

struct status_manager {
        struct status_store *store;
        struct rest_pool *pool;
        char *node_name;
        char *node_uid; /* thread only: for the mirror pods' owner reference */
        pthread_t thread;
        pthread_mutex_t lock;
        pthread_cond_t cond;
        bool wake;
        atomic_bool stop;
        struct sm_op *ops, *ops_tail;
};

static void op_free(struct sm_op *op)
{
        free(op->namespace);
        free(op->name);
        free(op->uid);
        json_decref(op->mirror);
        free(op);
}

/* Queues op, replacing a queued op of the same kind for the same pod (a
 * write retried while the apiserver refuses it is asked for again by the
 * sync loop: one copy is enough). */
static void enqueue(struct status_manager *sm, struct sm_op *op)
{
        pthread_mutex_lock(&sm->lock);
        for (struct sm_op *q = sm->ops; q; q = q->next) {
                if (q->kind != op->kind || strcmp(q->namespace, op->namespace) != 0 ||
                    strcmp(q->name, op->name) != 0)
                        continue;
                /* same place in the queue, the newer content */
                struct sm_op tmp = *q;
                *q = *op;
                q->next = tmp.next;
                tmp.next = NULL;
                *op = tmp;
                op_free(op);
                sm->wake = true;
                pthread_cond_signal(&sm->cond);
                pthread_mutex_unlock(&sm->lock);
                return;
        }
        if (sm->ops_tail)
                sm->ops_tail->next = op;
        else
                sm->ops = op;
        sm->ops_tail = op;
        sm->wake = true;
        pthread_cond_signal(&sm->cond);
        pthread_mutex_unlock(&sm->lock);
}

void status_manager_notify(struct status_manager *sm)
{
        if (sm == NULL)
                return;
        pthread_mutex_lock(&sm->lock);
        sm->wake = true;
        pthread_cond_signal(&sm->cond);
        pthread_mutex_unlock(&sm->lock);
}

void status_manager_delete_pod(struct status_manager *sm, const char *ns, const char *name,
                               const char *uid)
{
        struct sm_op *op = xcalloc(1, sizeof(*op));
        op->kind = SM_OP_DELETE;
        op->namespace = xstrdup(ns);
        op->name = xstrdup(name);
        op->uid = xstrdup(uid);
        enqueue(sm, op);
}

void status_manager_create_mirror(struct status_manager *sm, json_t *mirror,
                                  const char *replace_uid)
{
        json_t *meta = json_object_get(mirror, "metadata");
        struct sm_op *op = xcalloc(1, sizeof(*op));
        op->kind = SM_OP_CREATE_MIRROR;
        op->namespace = xstrdup(json_string_value(json_object_get(meta, "namespace")));
        op->name = xstrdup(json_string_value(json_object_get(meta, "name")));
        op->uid = replace_uid ? xstrdup(replace_uid) : NULL;
        op->mirror = mirror;
        enqueue(sm, op);
}

/* A write the apiserver refused for good: the object is gone (404) or is
 * another one now (409 from the UID precondition). */
static bool gone(const ck_error_t err)
{
        return err != NULL && (err->code == 404 || err->code == 409);
}

static int send_patch(struct rest_client *c, const char *path, const struct status_pending *p,
                      const json_t *old, ck_error_t *err)
{
        cleanup_json json_t *patch = json_pack("{s:{s:s}, s:o}", "metadata", "uid", p->api_uid,
                                               "status", status_patch_build(old, p->status));
        return rest_patch(c, path, NULL, REST_PATCH_STRATEGIC, patch, NULL, err);
}

/* The patch was built against a status the apiserver no longer has (e.g.
 * the podIPs of a mirror pod whose static pod restarted: the old IP stays
 * beside the new one, 422): built again against the pod as it is now, as
 * upstream's status manager always does (it GETs the pod first). */
static int repatch_from_apiserver(struct rest_client *c, const char *path,
                                  const struct status_pending *p, ck_error_t *err)
{
        cleanup_free char *pod_path =
            xasprintf("/api/v1/namespaces/%s/pods/%s", p->namespace, p->name);
        cleanup_json json_t *pod = NULL;
        if (rest_get(c, pod_path, NULL, &pod, err) < 0)
                return ck_error_wrap(err, "get the pod to build its status patch again");
        const char *uid =
            json_string_value(json_object_get(json_object_get(pod, "metadata"), "uid"));
        if (uid == NULL || strcmp(uid, p->api_uid) != 0)
                return ck_error_make_code(err, 409, "the pod is another one now (uid %s)",
                                          uid ? uid : "none");
        return send_patch(c, path, p, json_object_get(pod, "status"), err);
}

/* PATCHes one pending status; false when it must be tried again. */
static bool patch_status(struct status_manager *sm, struct rest_client *c,
                         const struct status_pending *p)
{
        cleanup_free char *path =
            xasprintf("/api/v1/namespaces/%s/pods/%s/status", p->namespace, p->name);
        cleanup_error ck_error_t err = NULL;
        int r = send_patch(c, path, p, p->old, &err);
        if (r < 0 && err != NULL && err->code == 422) {
                LOG_INFO(2, "Status patch refused, building it again from the apiserver's pod",
                         "pod=\"%s/%s\" podUID=\"%s\" err=\"%s\"", p->namespace, p->name,
                         p->api_uid, ck_error_msg(err));
                ck_error_release(&err);
                r = repatch_from_apiserver(c, path, p, &err);
        }
        if (r >= 0) {
                LOG_INFO(3, "Patch status for pod", "pod=\"%s/%s\" podUID=\"%s\"", p->namespace,
                         p->name, p->api_uid);
                status_store_mark_synced(sm->store, p->uid, p->version, p->status);
                return true;
        }
        if (gone(err)) {
                LOG_INFO(2, "Pod no longer exists in the apiserver; status dropped",
                         "pod=\"%s/%s\" podUID=\"%s\" err=\"%s\"", p->namespace, p->name,
                         p->api_uid, ck_error_msg(err));
                status_store_mark_synced(sm->store, p->uid, p->version, NULL);
                return true;
        }
        LOG_WARN("Failed to update status for pod", "pod=\"%s/%s\" podUID=\"%s\" err=\"%s\"",
                 p->namespace, p->name, p->api_uid, ck_error_msg(err));
        return false;
}

static void sync_statuses(struct status_manager *sm, struct rest_client *c, bool *failed)
{
        struct status_pending *p = NULL;
        size_t n = status_store_pending(sm->store, &p);
        for (size_t i = 0; i < n && !atomic_load(&sm->stop); i++)
                if (!patch_status(sm, c, &p[i]))
                        *failed = true;
        status_pending_free(p, n);
}

bool status_manager_sync_pod(struct status_manager *sm, const char *uid)
{
        if (sm == NULL)
                return true;
        struct status_pending *p = NULL;
        size_t n = status_store_pending(sm->store, &p);
        bool ok = true;
        for (size_t i = 0; i < n; i++) {
                if (strcmp(p[i].uid, uid) != 0)
                        continue;
                struct rest_client *c = rest_pool_get(sm->pool);
                ok = patch_status(sm, c, &p[i]);
                rest_pool_put(sm->pool, c);
        }
        status_pending_free(p, n);
        return ok;
}

static int delete_pod(struct rest_client *c, const char *ns, const char *name, const char *uid,
                      ck_error_t *err)
{
        cleanup_free char *path = xasprintf("/api/v1/namespaces/%s/pods/%s", ns, name);
        cleanup_json json_t *opts =
            json_pack("{s:s, s:s, s:i, s:{s:s}}", "kind", "DeleteOptions", "apiVersion", "v1",
                      "gracePeriodSeconds", 0, "preconditions", "uid", uid);
        if (rest_delete(c, path, opts, NULL, err) < 0 && !gone(*err))
                return -1;
        return 0;
}

static int ensure_node_uid(struct status_manager *sm, struct rest_client *c, ck_error_t *err)
{
        if (sm->node_uid)
                return 0;
        cleanup_free char *path = xasprintf("/api/v1/nodes/%s", sm->node_name);
        cleanup_json json_t *node = NULL;
        if (rest_get(c, path, NULL, &node, err) < 0)
                return ck_error_wrap(err, "get node %s for the mirror pod's owner", sm->node_name);
        const char *uid =
            json_string_value(json_object_get(json_object_get(node, "metadata"), "uid"));
        if (uid == NULL)
                return ck_error_make(err, 0, "node %s has no metadata.uid", sm->node_name);
        sm->node_uid = xstrdup(uid);
        return 0;
}

static int create_mirror(struct status_manager *sm, struct rest_client *c, struct sm_op *op,
                         ck_error_t *err)
{
        if (op->uid) {
                if (delete_pod(c, op->namespace, op->name, op->uid, err) < 0)
                        return ck_error_wrap(err, "delete stale mirror pod");
                free(op->uid);
                op->uid = NULL;
        }
        if (ensure_node_uid(sm, c, err) < 0)
                return -1;
        json_t *meta = json_object_get(op->mirror, "metadata");
        json_object_set_new(meta, "ownerReferences",
                            json_pack("[{s:s, s:s, s:s, s:s, s:b}]", "apiVersion", "v1", "kind",
                                      "Node", "name", sm->node_name, "uid", sm->node_uid,
                                      "controller", 1));
        cleanup_free char *path = xasprintf("/api/v1/namespaces/%s/pods", op->namespace);
        if (rest_post(c, path, op->mirror, NULL, err) < 0) {
                if ((*err)->code != 409)
                        return ck_error_wrap(err, "create mirror pod");
                LOG_INFO(2, "Mirror pod already exists", "pod=\"%s/%s\"", op->namespace, op->name);
                ck_error_release(err);
                return 0;
        }
        LOG_INFO(2, "Created mirror pod", "pod=\"%s/%s\"", op->namespace, op->name);
        return 0;
}

/* Runs the queued writes; a failed one stays queued, in order. */
static void run_ops(struct status_manager *sm, struct rest_client *c, bool *failed)
{
        pthread_mutex_lock(&sm->lock);
        struct sm_op *ops = sm->ops;
        sm->ops = sm->ops_tail = NULL;
        pthread_mutex_unlock(&sm->lock);
        struct sm_op *keep = NULL, *keep_last = NULL;
        for (struct sm_op *op = ops, *next; op; op = next) {
                next = op->next;
                op->next = NULL;
                cleanup_error ck_error_t err = NULL;
                int r = -1;
                if (!atomic_load(&sm->stop)) {
                        if (op->kind == SM_OP_DELETE) {
                                r = delete_pod(c, op->namespace, op->name, op->uid, &err);
                                if (r == 0)
                                        LOG_INFO(2, "Pod deleted from the apiserver",
                                                 "pod=\"%s/%s\" podUID=\"%s\"", op->namespace,
                                                 op->name, op->uid);
                        } else {
                                r = create_mirror(sm, c, op, &err);
                        }
                }
                if (r == 0) {
                        op_free(op);
                        continue;
                }
                if (err && !atomic_load(&sm->stop))
                        LOG_WARN("Failed to write pod to the apiserver, will retry",
                                 "pod=\"%s/%s\" err=\"%s\"", op->namespace, op->name,
                                 ck_error_msg(err));
                *failed = true;
                if (keep_last)
                        keep_last->next = op;
                else
                        keep = op;
                keep_last = op;
        }
        if (keep == NULL)
                return;
        pthread_mutex_lock(&sm->lock); /* failed ones go before newer ones */
        keep_last->next = sm->ops;
        if (sm->ops == NULL)
                sm->ops_tail = keep_last;
        sm->ops = keep;
        pthread_mutex_unlock(&sm->lock);
}

static void *sm_thread(void *arg)
{
        struct status_manager *sm = arg;
        struct rest_client *c = rest_pool_get(sm->pool);
        rest_client_set_stop(c, &sm->stop);
        int64_t wait_ms = SYNC_PERIOD_MS, retry_ms = 0;
        while (!atomic_load(&sm->stop)) {
                pthread_mutex_lock(&sm->lock);
                if (!sm->wake) {
                        int64_t deadline = fs_now_mono_ms() + wait_ms;
                        struct timespec ts = {.tv_sec = deadline / 1000,
                                              .tv_nsec = (deadline % 1000) * 1000000};
                        while (!sm->wake && !atomic_load(&sm->stop))
                                if (pthread_cond_timedwait(&sm->cond, &sm->lock, &ts) != 0)
                                        break;
                }
                sm->wake = false;
                pthread_mutex_unlock(&sm->lock);
                if (atomic_load(&sm->stop))
                        break;
                bool failed = false;
                sync_statuses(sm, c, &failed);
                run_ops(sm, c, &failed);
                /* failures: 1 s, doubling up to the sync period (an
                 * apiserver that is away is not hammered) */
                retry_ms = failed ? (retry_ms ? retry_ms * 2 : RETRY_MS) : 0;
                if (retry_ms > SYNC_PERIOD_MS)
                        retry_ms = SYNC_PERIOD_MS;
                wait_ms = failed ? retry_ms : SYNC_PERIOD_MS;
        }
        rest_client_set_stop(c, NULL);
        rest_pool_put(sm->pool, c);
        return NULL;
}

struct status_manager *status_manager_start(struct status_store *store, struct rest_pool *pool,
                                            const char *node_name)
{
        struct status_manager *sm = xcalloc(1, sizeof(*sm));
        sm->store = store;
        sm->pool = pool;
        sm->node_name = xstrdup(node_name);
        pthread_mutex_init(&sm->lock, NULL);
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&sm->cond, &ca);
        pthread_condattr_destroy(&ca);
        if (pthread_create(&sm->thread, NULL, sm_thread, sm) != 0) {
                LOG_ERROR("Failed to start the status manager", "err=\"%s\"", strerror(errno));
                abort();
        }
        return sm;
}

void status_manager_stop(struct status_manager *sm)
{
        if (sm == NULL)
                return;
        atomic_store(&sm->stop, true);
        status_manager_notify(sm);
        pthread_join(sm->thread, NULL);
        for (struct sm_op *op = sm->ops, *next; op; op = next) {
                next = op->next;
                op_free(op);
        }
        free(sm->node_name);
        free(sm->node_uid);
        pthread_mutex_destroy(&sm->lock);
        pthread_cond_destroy(&sm->cond);
        free(sm);
}
