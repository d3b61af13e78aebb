/* SPDX-License-Identifier: Apache-2.0 */
#include "kubelet/status_store.h"
#include "status/generate.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct status_entry {
        struct pod *pod;
        json_t *status;
        uint64_t version;
        uint64_t synced_version; /* what the apiserver has */
        char *api_uid;           /* the API object the status goes to */
        json_t *sent;            /* the status the apiserver last accepted from us */
};

struct status_store {
        pthread_mutex_t lock;
        struct status_entry *entries;
        size_t n, cap;
};

struct status_store *status_store_new(void)
{
        struct status_store *st = xcalloc(1, sizeof(*st));
        pthread_mutex_init(&st->lock, NULL);
        return st;
}

void status_store_free(struct status_store *st)
{
        if (st == NULL)
                return;
        for (size_t i = 0; i < st->n; i++) {
                pod_unref(st->entries[i].pod);
                json_decref(st->entries[i].status);
                json_decref(st->entries[i].sent);
                free(st->entries[i].api_uid);
        }
        free(st->entries);
        pthread_mutex_destroy(&st->lock);
        free(st);
}

static struct status_entry *find(struct status_store *st, const char *uid)
{
        for (size_t i = 0; i < st->n; i++)
                if (strcmp(st->entries[i].pod->uid, uid) == 0)
                        return &st->entries[i];
        return NULL;
}

void status_store_set_pod(struct status_store *st, struct pod *pod)
{
        pthread_mutex_lock(&st->lock);
        struct status_entry *e = find(st, pod->uid);
        if (e) {
                pod_unref(e->pod);
                e->pod = pod_ref(pod);
        } else {
                if (st->n == st->cap) {
                        st->cap = st->cap ? st->cap * 2 : 16;
                        st->entries = xrealloc(st->entries, st->cap * sizeof(*st->entries));
                }
                st->entries[st->n++] = (struct status_entry){
                    .pod = pod_ref(pod),
                    .api_uid = pod->source == POD_SOURCE_API ? xstrdup(pod->uid) : NULL,
                };
        }
        pthread_mutex_unlock(&st->lock);
}

void status_store_set_status(struct status_store *st, const char *uid, json_t *status)
{
        pthread_mutex_lock(&st->lock);
        struct status_entry *e = find(st, uid);
        if (e == NULL) {
                pthread_mutex_unlock(&st->lock);
                json_decref(status);
                return;
        }
        if (e->status == NULL || !json_equal(e->status, status))
                e->version++;
        json_decref(e->status);
        e->status = status;
        pthread_mutex_unlock(&st->lock);
}

json_t *status_store_get_status(struct status_store *st, const char *uid)
{
        pthread_mutex_lock(&st->lock);
        struct status_entry *e = find(st, uid);
        json_t *s = e ? json_incref(e->status) : NULL;
        pthread_mutex_unlock(&st->lock);
        return s;
}

struct pod *status_store_find_by_name(struct status_store *st, const char *ns, const char *name,
                                      json_t **status)
{
        struct status_entry *best = NULL;
        pthread_mutex_lock(&st->lock);
        for (size_t i = 0; i < st->n; i++) {
                struct status_entry *e = &st->entries[i];
                if (strcmp(e->pod->namespace, ns) != 0 || strcmp(e->pod->name, name) != 0)
                        continue;
                if (best == NULL || (best->pod->deletion_timestamp && !e->pod->deletion_timestamp))
                        best = e;
        }
        struct pod *pod = best ? pod_ref(best->pod) : NULL;
        *status = best ? json_incref(best->status) : NULL;
        pthread_mutex_unlock(&st->lock);
        return pod;
}

uint64_t status_store_version(struct status_store *st, const char *uid)
{
        pthread_mutex_lock(&st->lock);
        struct status_entry *e = find(st, uid);
        uint64_t v = e ? e->version : 0;
        pthread_mutex_unlock(&st->lock);
        return v;
}

void status_store_remove(struct status_store *st, const char *uid)
{
        pthread_mutex_lock(&st->lock);
        struct status_entry *e = find(st, uid);
        if (e) {
                pod_unref(e->pod);
                json_decref(e->status);
                json_decref(e->sent);
                free(e->api_uid);
                *e = st->entries[--st->n];
        }
        pthread_mutex_unlock(&st->lock);
}

bool status_store_set_api_uid(struct status_store *st, const char *uid, const char *api_uid)
{
        pthread_mutex_lock(&st->lock);
        struct status_entry *e = find(st, uid);
        bool same = e == NULL || (e->api_uid == NULL && api_uid == NULL) ||
                    (e->api_uid && api_uid && strcmp(e->api_uid, api_uid) == 0);
        if (!same) {
                free(e->api_uid);
                e->api_uid = api_uid ? xstrdup(api_uid) : NULL;
                e->synced_version = 0;
                json_decref(e->sent); /* another object */
                e->sent = NULL;
        }
        pthread_mutex_unlock(&st->lock);
        return !same;
}

size_t status_store_pending(struct status_store *st, struct status_pending **out)
{
        pthread_mutex_lock(&st->lock);
        struct status_pending *p = xcalloc(st->n ? st->n : 1, sizeof(*p));
        size_t n = 0;
        for (size_t i = 0; i < st->n; i++) {
                struct status_entry *e = &st->entries[i];
                if (e->api_uid == NULL || e->status == NULL || e->version == e->synced_version)
                        continue;
                p[n++] = (struct status_pending){
                    .uid = xstrdup(e->pod->uid),
                    .api_uid = xstrdup(e->api_uid),
                    .namespace = xstrdup(e->pod->namespace),
                    .name = xstrdup(e->pod->name),
                    .status = json_incref(e->status),
                    /* before our first write: the apiserver's copy of an
                     * apiserver pod, as the watch last showed it */
                    .old = json_incref(e->sent ? e->sent
                                       : e->pod->source == POD_SOURCE_API
                                           ? json_object_get(e->pod->raw, "status")
                                           : NULL),
                    .version = e->version,
                };
        }
        pthread_mutex_unlock(&st->lock);
        *out = p;
        return n;
}

void status_pending_free(struct status_pending *p, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(p[i].uid);
                free(p[i].api_uid);
                free(p[i].namespace);
                free(p[i].name);
                json_decref(p[i].status);
                json_decref(p[i].old);
        }
        free(p);
}

void status_store_mark_synced(struct status_store *st, const char *uid, uint64_t version,
                              json_t *sent)
{
        pthread_mutex_lock(&st->lock);
        struct status_entry *e = find(st, uid);
        if (e && version > e->synced_version) {
                e->synced_version = version;
                json_decref(e->sent);
                e->sent = json_incref(sent);
        }
        pthread_mutex_unlock(&st->lock);
}

static const char *str_at(const json_t *obj, const char *key)
{
        const char *s = json_string_value(json_object_get(obj, key));
        return s ? s : "";
}

/* Whether the apiserver's status contradicts ours in what the kubelet owns:
 * the phase and the status of each condition of the kubelet's types. */
static bool contradicts(const json_t *ours, const json_t *api)
{
        if (strcmp(str_at(ours, "phase"), str_at(api, "phase")) != 0)
                return true;
        size_t i, j;
        json_t *c, *a;
        json_array_foreach(json_object_get(ours, "conditions"), i, c)
        {
                if (!status_condition_owned_by_kubelet(str_at(c, "type")))
                        continue; /* a readiness gate's is its controller's */
                bool same = false;
                json_array_foreach(json_object_get(api, "conditions"), j, a)
                {
                        if (strcmp(str_at(c, "type"), str_at(a, "type")) == 0) {
                                same = strcmp(str_at(c, "status"), str_at(a, "status")) == 0;
                                break;
                        }
                }
                if (!same)
                        return true;
        }
        return false;
}

bool status_store_reconcile(struct status_store *st, const char *uid, const json_t *api_status)
{
        pthread_mutex_lock(&st->lock);
        struct status_entry *e = find(st, uid);
        bool again = e && e->api_uid && e->status && e->synced_version == e->version &&
                     contradicts(e->status, api_status);
        if (again) {
                e->synced_version = 0;
                /* the next patch goes from what the apiserver has now */
                json_decref(e->sent);
                e->sent = json_incref((json_t *)api_status);
        }
        pthread_mutex_unlock(&st->lock);
        return again;
}

json_t *status_store_pod_list(struct status_store *st)
{
        json_t *items = json_array();
        pthread_mutex_lock(&st->lock);
        for (size_t i = 0; i < st->n; i++) {
                struct status_entry *e = &st->entries[i];
                json_t *obj = json_deep_copy(e->pod->raw);
                if (obj == NULL)
                        continue;
                if (e->status)
                        json_object_set(obj, "status", e->status);
                json_array_append_new(items, obj);
        }
        pthread_mutex_unlock(&st->lock);
        return json_pack("{s:s, s:s, s:{}, s:o}", "kind", "PodList", "apiVersion", "v1", "metadata",
                         "items", items);
}
