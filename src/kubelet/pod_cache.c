/* SPDX-License-Identifier: Apache-2.0 */
#include "kubelet/pod_cache.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A pod the cache knows: made by a take or a generation read, so that a
 * read in flight always has an entry to compare its generation with. */
struct pod_cache_entry {
        char *uid;
        uint64_t gen;                      /* unique across the cache: see next_gen */
        struct runtime_pod_status *status; /* NULL: none, or stale */
        int64_t expires_ms;                /* of status */
};

struct pod_cache {
        pthread_mutex_t lock;
        struct pod_cache_entry *entries;
        size_t n, cap;
        /* each new generation is a new number: an entry forgotten and made
         * again never reuses one a read in flight holds */
        uint64_t next_gen;
        int64_t relisted_ms; /* the PLEG's last successful relist, 0: none */
};

struct pod_cache *pod_cache_new(void)
{
        struct pod_cache *c = xcalloc(1, sizeof(*c));
        pthread_mutex_init(&c->lock, NULL);
        return c;
}

void pod_cache_free(struct pod_cache *c)
{
        if (c == NULL)
                return;
        for (size_t i = 0; i < c->n; i++) {
                free(c->entries[i].uid);
                runtime_pod_status_free(c->entries[i].status);
        }
        free(c->entries);
        pthread_mutex_destroy(&c->lock);
        free(c);
}

static struct pod_cache_entry *find(struct pod_cache *c, const char *uid)
{
        for (size_t i = 0; i < c->n; i++)
                if (strcmp(c->entries[i].uid, uid) == 0)
                        return &c->entries[i];
        return NULL;
}

static struct pod_cache_entry *find_or_add(struct pod_cache *c, const char *uid)
{
        struct pod_cache_entry *e = find(c, uid);
        if (e != NULL)
                return e;
        if (c->n == c->cap) {
                c->cap = c->cap ? 2 * c->cap : 16;
                c->entries = xrealloc(c->entries, c->cap * sizeof(*c->entries));
        }
        e = &c->entries[c->n++];
        *e = (struct pod_cache_entry){.uid = xstrdup(uid), .gen = ++c->next_gen};
        return e;
}

/* Under the lock: the entry's status is stale, and so is any read of it
 * in flight. */
static void stale(struct pod_cache *c, struct pod_cache_entry *e)
{
        e->gen = ++c->next_gen;
        runtime_pod_status_free(e->status);
        e->status = NULL;
}

void pod_cache_relisted(struct pod_cache *c, int64_t now_ms)
{
        pthread_mutex_lock(&c->lock);
        c->relisted_ms = now_ms;
        pthread_mutex_unlock(&c->lock);
}

struct runtime_pod_status *pod_cache_take(struct pod_cache *c, const char *uid, int64_t now_ms,
                                          uint64_t *gen)
{
        pthread_mutex_lock(&c->lock);
        struct pod_cache_entry *e = find_or_add(c, uid);
        struct runtime_pod_status *s = e->status;
        bool usable = c->relisted_ms > 0 &&
                      now_ms - c->relisted_ms <= POD_CACHE_RELIST_MAX_AGE_MS &&
                      now_ms < e->expires_ms;
        e->status = NULL;
        *gen = e->gen;
        pthread_mutex_unlock(&c->lock);
        if (!usable) {
                runtime_pod_status_free(s);
                s = NULL;
        }
        return s;
}

int64_t pod_cache_expiry(const struct runtime_pod_status *s, int64_t now_ms, int64_t now_real_ns)
{
        for (size_t i = 0; i < s->n_containers; i++) {
                const struct runtime_container_status *ct = &s->containers[i];
                if (ct->state == CONTAINER_STATE_EXITED &&
                    now_real_ns - ct->finished_at < POD_CACHE_RECENT_EXIT_MS * 1000000LL)
                        return now_ms + POD_CACHE_RECENT_EXIT_MS;
        }
        return INT64_MAX;
}

uint64_t pod_cache_generation(struct pod_cache *c, const char *uid)
{
        pthread_mutex_lock(&c->lock);
        uint64_t gen = find_or_add(c, uid)->gen;
        pthread_mutex_unlock(&c->lock);
        return gen;
}

void pod_cache_put(struct pod_cache *c, const char *uid, struct runtime_pod_status *s, uint64_t gen,
                   int64_t expires_ms)
{
        pthread_mutex_lock(&c->lock);
        struct pod_cache_entry *e = find(c, uid);
        if (e != NULL && e->gen == gen) {
                runtime_pod_status_free(e->status);
                e->status = s;
                e->expires_ms = expires_ms;
                s = NULL;
        }
        pthread_mutex_unlock(&c->lock);
        runtime_pod_status_free(s);
}

void pod_cache_invalidate(struct pod_cache *c, const char *uid)
{
        pthread_mutex_lock(&c->lock);
        struct pod_cache_entry *e = find(c, uid);
        if (e != NULL) /* no entry: nothing kept, no read in flight */
                stale(c, e);
        pthread_mutex_unlock(&c->lock);
}

/* Whether s shows the pod as the relist saw it: the same sandboxes and
 * containers, each in the same state. */
static bool shows(const struct runtime_pod_status *s, const struct runtime_pod_entry *seen)
{
        size_t n_sandboxes = seen ? seen->n_sandboxes : 0;
        size_t n_containers = seen ? seen->n_containers : 0;
        if (s->n_sandboxes != n_sandboxes || s->n_containers != n_containers)
                return false;
        for (size_t i = 0; i < s->n_sandboxes; i++) {
                bool found = false;
                for (size_t j = 0; j < n_sandboxes && !found; j++)
                        found = strcmp(s->sandboxes[i].id, seen->sandboxes[j].id) == 0 &&
                                s->sandboxes[i].state == seen->sandboxes[j].state;
                if (!found)
                        return false;
        }
        for (size_t i = 0; i < s->n_containers; i++) {
                bool found = false;
                for (size_t j = 0; j < n_containers && !found; j++)
                        found = strcmp(s->containers[i].id, seen->containers[j].id) == 0 &&
                                s->containers[i].state == seen->containers[j].state;
                if (!found)
                        return false;
        }
        return true;
}

void pod_cache_observe(struct pod_cache *c, const char *uid, const struct runtime_pod_entry *seen)
{
        pthread_mutex_lock(&c->lock);
        struct pod_cache_entry *e = find(c, uid);
        /* a status kept means no sync holds the pod, so no read in flight */
        if (e != NULL && (e->status == NULL || !shows(e->status, seen)))
                stale(c, e);
        pthread_mutex_unlock(&c->lock);
}

void pod_cache_invalidate_all(struct pod_cache *c)
{
        pthread_mutex_lock(&c->lock);
        for (size_t i = 0; i < c->n; i++)
                stale(c, &c->entries[i]);
        pthread_mutex_unlock(&c->lock);
}

void pod_cache_forget(struct pod_cache *c, const char *uid)
{
        pthread_mutex_lock(&c->lock);
        struct pod_cache_entry *e = find(c, uid);
        if (e != NULL) {
                free(e->uid);
                runtime_pod_status_free(e->status);
                *e = c->entries[--c->n];
        }
        pthread_mutex_unlock(&c->lock);
}

size_t pod_cache_size(struct pod_cache *c)
{
        pthread_mutex_lock(&c->lock);
        size_t n = c->n;
        pthread_mutex_unlock(&c->lock);
        return n;
}
