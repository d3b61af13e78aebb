/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Per-key exponential backoff, as k8s.io/client-go/util/flowcontrol.Backoff
 * (without jitter, as the kubelet creates it).  Entries live in an array
 * kept sorted by key (binary search): a kubelet has at most a few hundred
 * keys (one per container and per pod image), so a memmove on insertion is
 * cheaper than a hash table's bookkeeping.
 */
#include "util/backoff.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct backoff_entry {
        char *key;
        int64_t delay_ms;
        int64_t last_update_ms;
};

struct backoff {
        pthread_mutex_t lock;
        int64_t initial_ms, max_ms;
        struct backoff_entry *entries; /* sorted by key */
        size_t n, cap;
};

struct backoff *backoff_new(int64_t initial_ms, int64_t max_ms)
{
        struct backoff *b = xcalloc(1, sizeof(*b));
        pthread_mutex_init(&b->lock, NULL);
        b->initial_ms = initial_ms;
        b->max_ms = max_ms < initial_ms ? initial_ms : max_ms;
        return b;
}

void backoff_free(struct backoff *b)
{
        if (b == NULL)
                return;
        for (size_t i = 0; i < b->n; i++)
                free(b->entries[i].key);
        free(b->entries);
        pthread_mutex_destroy(&b->lock);
        free(b);
}

/* Index of key, or -(insertion point) - 1 when absent.  Lock held. */
static long find_locked(const struct backoff *b, const char *key)
{
        size_t lo = 0, hi = b->n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(b->entries[mid].key, key);
                if (c == 0)
                        return (long)mid;
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return -(long)lo - 1;
}

static void remove_at_locked(struct backoff *b, size_t i)
{
        free(b->entries[i].key);
        memmove(&b->entries[i], &b->entries[i + 1], (b->n - i - 1) * sizeof(b->entries[0]));
        b->n--;
}

/* upstream hasExpired: stable when nothing happened for twice the maximum. */
static bool has_expired(const struct backoff *b, int64_t event_ms, int64_t last_update_ms)
{
        return event_ms - last_update_ms > 2 * b->max_ms;
}

bool backoff_is_in_backoff_since(struct backoff *b, const char *key, int64_t event_ms,
                                 int64_t now_ms)
{
        bool in = false;
        pthread_mutex_lock(&b->lock);
        long i = find_locked(b, key);
        if (i >= 0) {
                const struct backoff_entry *e = &b->entries[i];
                if (!has_expired(b, event_ms, e->last_update_ms))
                        in = now_ms - event_ms < e->delay_ms;
        }
        pthread_mutex_unlock(&b->lock);
        return in;
}

bool backoff_is_in_backoff_since_update(struct backoff *b, const char *key, int64_t now_ms)
{
        bool in = false;
        pthread_mutex_lock(&b->lock);
        long i = find_locked(b, key);
        if (i >= 0) {
                const struct backoff_entry *e = &b->entries[i];
                if (!has_expired(b, now_ms, e->last_update_ms))
                        in = now_ms - e->last_update_ms < e->delay_ms;
        }
        pthread_mutex_unlock(&b->lock);
        return in;
}

void backoff_next(struct backoff *b, const char *key, int64_t now_ms)
{
        pthread_mutex_lock(&b->lock);
        long i = find_locked(b, key);
        struct backoff_entry *e;
        if (i < 0) {
                size_t at = (size_t)(-i - 1);
                if (b->n == b->cap) {
                        b->cap = b->cap ? b->cap * 2 : 16;
                        b->entries = xrealloc(b->entries, b->cap * sizeof(b->entries[0]));
                }
                memmove(&b->entries[at + 1], &b->entries[at], (b->n - at) * sizeof(b->entries[0]));
                b->n++;
                e = &b->entries[at];
                e->key = xstrdup(key);
                e->delay_ms = b->initial_ms;
        } else {
                e = &b->entries[i];
                if (has_expired(b, now_ms, e->last_update_ms))
                        e->delay_ms = b->initial_ms;
                else
                        e->delay_ms = e->delay_ms > b->max_ms / 2 ? b->max_ms : e->delay_ms * 2;
        }
        e->last_update_ms = now_ms;
        pthread_mutex_unlock(&b->lock);
}

int64_t backoff_get(struct backoff *b, const char *key)
{
        int64_t d = 0;
        pthread_mutex_lock(&b->lock);
        long i = find_locked(b, key);
        if (i >= 0)
                d = b->entries[i].delay_ms;
        pthread_mutex_unlock(&b->lock);
        return d;
}

void backoff_reset(struct backoff *b, const char *key)
{
        pthread_mutex_lock(&b->lock);
        long i = find_locked(b, key);
        if (i >= 0)
                remove_at_locked(b, (size_t)i);
        pthread_mutex_unlock(&b->lock);
}

void backoff_gc(struct backoff *b, int64_t now_ms)
{
        pthread_mutex_lock(&b->lock);
        size_t out = 0;
        for (size_t i = 0; i < b->n; i++) {
                if (has_expired(b, now_ms, b->entries[i].last_update_ms)) {
                        free(b->entries[i].key);
                        continue;
                }
                b->entries[out++] = b->entries[i];
        }
        b->n = out;
        pthread_mutex_unlock(&b->lock);
}
