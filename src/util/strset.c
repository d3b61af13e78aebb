/* SPDX-License-Identifier: Apache-2.0 */
#include "util/strset.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct strset {
        pthread_mutex_t lock;
        char **keys; /* sorted by strcmp */
        size_t n, cap;
};

struct strset *strset_new(void)
{
        struct strset *s = xcalloc(1, sizeof(*s));
        pthread_mutex_init(&s->lock, NULL);
        return s;
}

void strset_free(struct strset *s)
{
        if (s == NULL)
                return;
        for (size_t i = 0; i < s->n; i++)
                free(s->keys[i]);
        free(s->keys);
        pthread_mutex_destroy(&s->lock);
        free(s);
}

/* The index of key, or where it would go (*found false). */
static size_t find(const struct strset *s, const char *key, bool *found)
{
        size_t lo = 0, hi = s->n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(s->keys[mid], key);
                if (c == 0) {
                        *found = true;
                        return mid;
                }
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        *found = false;
        return lo;
}

bool strset_add(struct strset *s, const char *key)
{
        pthread_mutex_lock(&s->lock);
        bool found;
        size_t i = find(s, key, &found);
        if (!found) {
                if (s->n == s->cap) {
                        s->cap = s->cap ? s->cap * 2 : 16;
                        s->keys = xrealloc(s->keys, s->cap * sizeof(*s->keys));
                }
                memmove(&s->keys[i + 1], &s->keys[i], (s->n - i) * sizeof(*s->keys));
                s->keys[i] = xstrdup(key);
                s->n++;
        }
        pthread_mutex_unlock(&s->lock);
        return !found;
}

bool strset_contains(struct strset *s, const char *key)
{
        pthread_mutex_lock(&s->lock);
        bool found;
        find(s, key, &found);
        pthread_mutex_unlock(&s->lock);
        return found;
}

void strset_retain(struct strset *s, const char *const *keep, size_t n)
{
        pthread_mutex_lock(&s->lock);
        size_t o = 0;
        for (size_t i = 0; i < s->n; i++) {
                bool wanted = false;
                for (size_t k = 0; k < n && !wanted; k++)
                        wanted = strcmp(s->keys[i], keep[k]) == 0;
                if (wanted)
                        s->keys[o++] = s->keys[i];
                else
                        free(s->keys[i]);
        }
        s->n = o;
        pthread_mutex_unlock(&s->lock);
}
