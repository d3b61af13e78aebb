/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lease thread: claims and renews the node's Lease in kube-node-lease
 * every lease duration / 4 (upstream component-helpers lease controller as
 * the kubelet runs it: Run, not Start, so an old lease is not deleted and
 * a stopped kubelet's lease is left to expire).
 */
#include "node/agent_internal.h"

#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <string.h>

#define LEASE_MAX_UPDATE_RETRIES 5
#define LEASE_MAX_BACKOFF_MS 7000
#define LEASE_COLLECTION "/apis/coordination.k8s.io/v1/namespaces/" NODE_LEASE_NAMESPACE "/leases"

struct lease_ctl {
        struct node_agent *a;
        struct rest_client *c;
        char *path;       /* the Lease's path */
        json_t *latest;   /* the Lease as last read or written, or NULL */
        int64_t renew_ms; /* lease duration * 0.25 */
        unsigned rand_state;
};

/* The Node's uid (a new string), or NULL while unknown. */
static char *node_uid(struct node_agent *a)
{
        cleanup_json json_t *node = node_agent__copy_node(a);
        const char *uid =
            json_string_value(json_object_get(json_object_get(node, "metadata"), "uid"));
        return uid && *uid ? xstrdup(uid) : NULL;
}

static json_t *new_lease(struct lease_ctl *l, const json_t *base)
{
        cleanup_free char *uid = node_uid(l->a);
        json_t *owners = json_object_get(json_object_get(base, "metadata"), "ownerReferences");
        if (uid == NULL && json_array_size(owners) == 0)
                LOG_ERROR("Failed to get node when trying to set owner ref to the node lease",
                          "node=\"%s\"", l->a->node_name);
        return node_lease_build(base, l->a->node_name, l->a->lease_s, uid, fs_now_real_ns());
}

/* upstream ensureLease: GET, or create on 404.  0 and *out (new
 * reference), *created; else -1 and err. */
static int ensure_lease(struct lease_ctl *l, json_t **out, bool *created, ck_error_t *err)
{
        *created = false;
        if (rest_get(l->c, l->path, NULL, out, err) >= 0)
                return 0;
        if ((*err)->code != 404)
                return -1;
        ck_error_release(err);
        cleanup_json json_t *lease = new_lease(l, NULL);
        if (rest_post(l->c, LEASE_COLLECTION, lease, out, err) < 0)
                return -1;
        *created = true;
        return 0;
}

/* upstream backoffEnsureLease: until it works (200 ms doubling to 7 s) or
 * the stop; NULL when stopped. */
static json_t *backoff_ensure_lease(struct lease_ctl *l, bool *created)
{
        int64_t sleep = 100;
        for (;;) {
                json_t *lease = NULL;
                cleanup_error ck_error_t err = NULL;
                if (ensure_lease(l, &lease, created, &err) == 0)
                        return lease;
                sleep = sleep * 2 < LEASE_MAX_BACKOFF_MS ? sleep * 2 : LEASE_MAX_BACKOFF_MS;
                LOG_ERROR("Failed to ensure lease exists, will retry",
                          "err=\"%s\" interval=\"%lldms\"", ck_error_msg(err), (long long)sleep);
                if (!node_agent__sleep(l->a, sleep))
                        return NULL;
        }
}

static void set_latest(struct lease_ctl *l, json_t *lease)
{
        json_decref(l->latest);
        l->latest = lease;
}

/* upstream retryUpdateLease: PUT the renewed lease, re-reading it on 409. */
static int retry_update_lease(struct lease_ctl *l, json_t *base_in, ck_error_t *err)
{
        json_t *base = json_incref(base_in);
        for (int i = 0; i < LEASE_MAX_UPDATE_RETRIES && !atomic_load(&l->a->stop); i++) {
                cleanup_json json_t *lease = new_lease(l, base);
                json_t *updated = NULL;
                cleanup_error ck_error_t e = NULL;
                if (rest_put(l->c, l->path, lease, &updated, &e) >= 0) {
                        set_latest(l, updated);
                        json_decref(base);
                        return 0;
                }
                LOG_ERROR("Failed to update lease", "err=\"%s\"", ck_error_msg(e));
                if (e->code == 409) {
                        bool created;
                        json_decref(base);
                        base = backoff_ensure_lease(l, &created);
                        if (base == NULL)
                                break;
                }
        }
        json_decref(base);
        return ck_error_make(err, 0, "failed %d attempts to update lease",
                             LEASE_MAX_UPDATE_RETRIES);
}

/* upstream controller.sync */
static void lease_sync(struct lease_ctl *l)
{
        if (l->latest) {
                cleanup_error ck_error_t err = NULL;
                if (retry_update_lease(l, l->latest, &err) == 0)
                        return;
                LOG_INFO(0, "failed to update lease using latest lease, fallback to ensure lease",
                         "err=\"%s\"", ck_error_msg(err));
        }
        bool created = false;
        json_t *lease = backoff_ensure_lease(l, &created);
        set_latest(l, lease);
        if (!created && lease) {
                cleanup_error ck_error_t err = NULL;
                if (retry_update_lease(l, lease, &err) < 0)
                        LOG_ERROR("Will retry updating lease", "err=\"%s\" interval=\"%lldms\"",
                                  ck_error_msg(err), (long long)l->renew_ms);
        }
}

void *node_agent__lease_main(void *arg)
{
        struct node_agent *a = arg;
        struct lease_ctl l = {
            .a = a,
            .path = xasprintf(LEASE_COLLECTION "/%s", a->node_name),
            .renew_ms = a->lease_s * 250LL, /* nodeLeaseRenewIntervalFraction 0.25 */
            .rand_state = (unsigned)fs_now_real_ns() ^ 0x5eedu,
        };
        cleanup_error ck_error_t err = NULL;
        if (rest_client_new(&a->cfg, NULL, &l.c, &err) < 0) {
                LOG_ERROR("Unable to create the node lease client", "err=\"%s\"",
                          ck_error_msg(err));
                free(l.path);
                return NULL;
        }
        rest_client_set_stop(l.c, &a->stop);
        rest_client_set_timeout(l.c, a->update_ms < a->lease_s * 1000LL ? (long)a->update_ms
                                                                        : a->lease_s * 1000L);

        /* the lease is owned by the Node: wait until it exists */
        while (!atomic_load(&a->registered))
                if (!node_agent__sleep(a, 200))
                        goto out;

        /* upstream wait.JitterUntilWithContext(sync, renewInterval, 0.04, sliding) */
        do {
                lease_sync(&l);
        } while (node_agent__sleep(a, l.renew_ms + (int64_t)((double)l.renew_ms * 0.04 *
                                                             node_agent__rand01(&l.rand_state))));
out:
        json_decref(l.latest);
        rest_client_free(l.c);
        free(l.path);
        return NULL;
}
