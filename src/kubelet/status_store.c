/* SPDX-License-Identifier: Apache-2.0 */
#include "kubelet/status_store.h"
#include "status/generate.h"
#include "util/fsutil.h"
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
        /* the resize conditions (upstream podResizeConditions), or NULL */
        json_t *resize_pending, *resize_in_progress;
        /* its containers were all stopped (upstream: the pod worker finished
         * terminating): a terminal phase may be published */
        bool stopped;
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
                json_decref(st->entries[i].resize_pending);
                json_decref(st->entries[i].resize_in_progress);
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
        if (e->status != NULL && json_equal(e->status, status)) {
                /* the same status again (every resync): keep the tree the
                 * apiserver was sent, which e->sent shares, rather than
                 * hold two equal ones per pod */
                json_decref(status);
        } else {
                e->version++;
                json_decref(e->status);
                e->status = status;
        }
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
                json_decref(e->resize_pending);
                json_decref(e->resize_in_progress);
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

static bool phase_terminal(const json_t *status)
{
        const char *p = json_string_value(json_object_get(status, "phase"));
        return p != NULL && (strcmp(p, "Succeeded") == 0 || strcmp(p, "Failed") == 0);
}

/* upstream mergePodStatus: a pod whose containers may still run is not
 * reported terminal yet; its phase, reason and message stay the
 * apiserver's (new reference). */
static json_t *hold_terminal_phase(const json_t *status, const json_t *old)
{
        json_t *held = json_copy((json_t *)status);
        const char *keys[] = {"phase", "reason", "message"};
        for (size_t i = 0; i < 3; i++) {
                json_t *v = json_object_get(old, keys[i]);
                if (v != NULL)
                        json_object_set(held, keys[i], v);
                else
                        json_object_del(held, keys[i]);
        }
        return held;
}

void status_store_set_stopped(struct status_store *st, const char *uid)
{
        pthread_mutex_lock(&st->lock);
        struct status_entry *e = find(st, uid);
        if (e != NULL && !e->stopped) {
                e->stopped = true;
                e->version++; /* a terminal phase held back goes out now */
        }
        pthread_mutex_unlock(&st->lock);
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
                /* before our first write: the apiserver's copy of an
                 * apiserver pod, as the watch last showed it */
                json_t *old = e->sent ? e->sent
                              : e->pod->source == POD_SOURCE_API
                                  ? json_object_get(e->pod->raw, "status")
                                  : NULL;
                bool hold = !e->stopped && phase_terminal(e->status) && !phase_terminal(old);
                p[n++] = (struct status_pending){
                    .uid = xstrdup(e->pod->uid),
                    .api_uid = xstrdup(e->api_uid),
                    .namespace = xstrdup(e->pod->namespace),
                    .name = xstrdup(e->pod->name),
                    .status = hold ? hold_terminal_phase(e->status, old) : json_incref(e->status),
                    .old = json_incref(old),
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
                json_t *obj = pod_raw_copy(e->pod);
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

/* upstream updatedPodResizeCondition: lastProbeTime now, the transition
 * time kept while the reason stays. */
static json_t *resize_condition(const char *type, const json_t *old, const char *reason,
                                const char *message, int64_t generation)
{
        char now[32];
        fs_format_rfc3339(fs_now_real_ns(), now);
        const char *old_reason = json_string_value(json_object_get(old, "reason"));
        json_t *t = json_object_get(old, "lastTransitionTime");
        bool same = old != NULL && strcmp(old_reason ? old_reason : "", reason ? reason : "") == 0;
        json_t *c = json_object();
        json_object_set_new(c, "type", json_string(type));
        if (generation != 0)
                json_object_set_new(c, "observedGeneration", json_integer(generation));
        json_object_set_new(c, "status", json_string("True"));
        json_object_set_new(c, "lastProbeTime", json_string(now));
        json_object_set_new(c, "lastTransitionTime",
                            same && t != NULL ? json_incref(t) : json_string(now));
        if (reason != NULL && reason[0] != '\0')
                json_object_set_new(c, "reason", json_string(reason));
        if (message != NULL && message[0] != '\0')
                json_object_set_new(c, "message", json_string(message));
        return c;
}

static int64_t generation_of(const json_t *c)
{
        return json_integer_value(json_object_get(c, "observedGeneration"));
}

bool status_store_set_resize_pending(struct status_store *st, const char *uid, const char *reason,
                                     const char *message, int64_t generation)
{
        pthread_mutex_lock(&st->lock);
        struct status_entry *e = find(st, uid);
        bool changed = false;
        if (e != NULL) {
                json_t *old = e->resize_pending;
                const char *old_reason = json_string_value(json_object_get(old, "reason"));
                changed = old == NULL || strcmp(old_reason ? old_reason : "", reason) != 0 ||
                          generation_of(old) != generation;
                e->resize_pending =
                    resize_condition("PodResizePending", old, reason, message, generation);
                json_decref(old);
        }
        pthread_mutex_unlock(&st->lock);
        return changed;
}

void status_store_clear_resize_pending(struct status_store *st, const char *uid)
{
        pthread_mutex_lock(&st->lock);
        struct status_entry *e = find(st, uid);
        if (e != NULL) {
                json_decref(e->resize_pending);
                e->resize_pending = NULL;
        }
        pthread_mutex_unlock(&st->lock);
}

bool status_store_set_resize_in_progress(struct status_store *st, const char *uid,
                                         const char *reason, const char *message,
                                         int64_t generation, int64_t *generation_out)
{
        pthread_mutex_lock(&st->lock);
        struct status_entry *e = find(st, uid);
        bool changed = false;
        if (e != NULL) {
                json_t *old = e->resize_in_progress;
                if (old != NULL) {
                        /* the generation stays; so do the reason and
                         * message unless new ones are given */
                        generation = generation_of(old);
                        if ((reason == NULL || reason[0] == '\0') &&
                            (message == NULL || message[0] == '\0')) {
                                reason = json_string_value(json_object_get(old, "reason"));
                                message = json_string_value(json_object_get(old, "message"));
                        }
                }
                json_t *c =
                    resize_condition("PodResizeInProgress", old, reason, message, generation);
                changed =
                    old == NULL ||
                    !json_equal(json_object_get(old, "reason"), json_object_get(c, "reason")) ||
                    !json_equal(json_object_get(old, "message"), json_object_get(c, "message"));
                e->resize_in_progress = c;
                json_decref(old);
        }
        if (generation_out != NULL)
                *generation_out = generation;
        pthread_mutex_unlock(&st->lock);
        return changed;
}

bool status_store_clear_resize_in_progress(struct status_store *st, const char *uid,
                                           int64_t *generation)
{
        pthread_mutex_lock(&st->lock);
        struct status_entry *e = find(st, uid);
        bool had = e != NULL && e->resize_in_progress != NULL;
        if (had) {
                if (generation != NULL)
                        *generation = generation_of(e->resize_in_progress);
                json_decref(e->resize_in_progress);
                e->resize_in_progress = NULL;
        }
        pthread_mutex_unlock(&st->lock);
        return had;
}

json_t *status_store_resize_conditions(struct status_store *st, const char *uid)
{
        json_t *out = json_array();
        pthread_mutex_lock(&st->lock);
        struct status_entry *e = find(st, uid);
        if (e != NULL && e->resize_pending != NULL)
                json_array_append_new(out, json_deep_copy(e->resize_pending));
        if (e != NULL && e->resize_in_progress != NULL)
                json_array_append_new(out, json_deep_copy(e->resize_in_progress));
        pthread_mutex_unlock(&st->lock);
        return out;
}

static json_t *status_find_condition(const json_t *status, const char *type)
{
        size_t i;
        json_t *c;
        json_array_foreach(json_object_get(status, "conditions"), i, c)
        {
                const char *t = json_string_value(json_object_get(c, "type"));
                if (t != NULL && strcmp(t, type) == 0)
                        return c;
        }
        return NULL;
}

void status_store_backfill_resize_conditions(struct status_store *st, const char *uid,
                                             const json_t *api_status)
{
        json_t *pending = status_find_condition(api_status, "PodResizePending");
        json_t *progress = status_find_condition(api_status, "PodResizeInProgress");
        if (pending == NULL && progress == NULL)
                return;
        pthread_mutex_lock(&st->lock);
        struct status_entry *e = find(st, uid);
        if (e != NULL && pending != NULL && e->resize_pending == NULL)
                e->resize_pending = json_deep_copy(pending);
        if (e != NULL && progress != NULL && e->resize_in_progress == NULL)
                e->resize_in_progress = json_deep_copy(progress);
        pthread_mutex_unlock(&st->lock);
}
