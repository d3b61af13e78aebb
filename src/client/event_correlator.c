/* SPDX-License-Identifier: Apache-2.0 */
/*
 * upstream client-go tools/record events_cache.go with the defaults the
 * kubelet uses (NewEventCorrelator): three LRU caches of 4096 entries each,
 *  - the aggregator: per (object, type, reason) the distinct messages seen
 *    within 10 minutes; the 10th distinct one turns into a single
 *    "(combined from similar events): ..." event;
 *  - the observation log: per identical event, its name, count and
 *    firstTimestamp, so that a repeat becomes a PATCH of count and
 *    lastTimestamp instead of a new Event;
 *  - the spam filter: a token bucket per (object, type), burst 25, one
 *    more token every 5 minutes.
 * The clock is passed in (tests drive it).
 */
#include "client/events_internal.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* ---- a small LRU map (string -> owned value) ---- */

struct lru_entry {
        char *key;
        uint64_t hash;
        uint64_t used; /* the tick of the last get/add */
        void *value;
};

struct lru {
        struct lru_entry *e;
        size_t n, cap; /* entries used, and at most */
        size_t alloc;  /* entries allocated: grown as used, up to cap */
        uint64_t tick;
        void (*free_value)(void *);
};

static uint64_t hash_str(const char *s)
{
        uint64_t h = 1469598103934665603ULL; /* FNV-1a */
        for (; *s; s++) {
                h ^= (unsigned char)*s;
                h *= 1099511628211ULL;
        }
        return h;
}

static void lru_init(struct lru *l, size_t cap, void (*free_value)(void *))
{
        /* allocated as entries come: a node with few events reserves no
         * 3 x 4096 empty entries (3 x 128 kB, though pages it never
         * touched were not resident either) */
        *l = (struct lru){.cap = cap, .free_value = free_value};
}

static void lru_clear(struct lru *l)
{
        for (size_t i = 0; i < l->n; i++) {
                free(l->e[i].key);
                l->free_value(l->e[i].value);
        }
        free(l->e);
        *l = (struct lru){0};
}

static void *lru_get(struct lru *l, const char *key)
{
        uint64_t h = hash_str(key);
        for (size_t i = 0; i < l->n; i++)
                if (l->e[i].hash == h && strcmp(l->e[i].key, key) == 0) {
                        l->e[i].used = ++l->tick;
                        return l->e[i].value;
                }
        return NULL;
}

/* Stores value (taken) under key, replacing (and freeing) an older value
 * or, when full, the least recently used entry. */
static void lru_add(struct lru *l, const char *key, void *value)
{
        uint64_t h = hash_str(key);
        for (size_t i = 0; i < l->n; i++)
                if (l->e[i].hash == h && strcmp(l->e[i].key, key) == 0) {
                        if (l->e[i].value != value)
                                l->free_value(l->e[i].value);
                        l->e[i].value = value;
                        l->e[i].used = ++l->tick;
                        return;
                }
        struct lru_entry *slot;
        if (l->n < l->cap) {
                if (l->n == l->alloc) {
                        l->alloc = l->alloc ? l->alloc * 2 : 16;
                        if (l->alloc > l->cap)
                                l->alloc = l->cap;
                        l->e = xrealloc(l->e, l->alloc * sizeof(*l->e));
                }
                slot = &l->e[l->n++];
        } else {
                slot = &l->e[0];
                for (size_t i = 1; i < l->n; i++)
                        if (l->e[i].used < slot->used)
                                slot = &l->e[i];
                free(slot->key);
                l->free_value(slot->value);
        }
        *slot = (struct lru_entry){xstrdup(key), h, ++l->tick, value};
}

/* ---- the spam filter's bucket ---- */

bool event__bucket_take(struct event_bucket *b, int64_t now_ns, int burst, double qps)
{
        if (!b->started) {
                b->tokens = burst;
                b->last_ns = now_ns;
                b->started = true;
        }
        if (now_ns > b->last_ns) {
                b->tokens += (double)(now_ns - b->last_ns) / 1e9 * qps;
                if (b->tokens > burst)
                        b->tokens = burst;
                b->last_ns = now_ns;
        }
        if (b->tokens < 1.0)
                return false;
        b->tokens -= 1.0;
        return true;
}

/* ---- the records ---- */

struct aggregate_record {
        char *messages[EVENT_AGGREGATE_MAX_EVENTS]; /* the local keys, a set */
        size_t n;
        int64_t last_ns;
};

static void aggregate_record_free(void *p)
{
        struct aggregate_record *r = p;
        for (size_t i = 0; i < r->n; i++)
                free(r->messages[i]);
        free(r);
}

struct observation {
        int32_t count;
        int64_t first_ns;
        char *name;
        char *resource_version;
};

static void observation_free(void *p)
{
        struct observation *o = p;
        free(o->name);
        free(o->resource_version);
        free(o);
}

struct event_correlator {
        struct lru aggregates;   /* aggregate key -> struct aggregate_record */
        struct lru observations; /* event key -> struct observation */
        struct lru spam;         /* spam key -> struct event_bucket */
};

struct event_correlator *event__correlator_new(void)
{
        struct event_correlator *c = xcalloc(1, sizeof(*c));
        lru_init(&c->aggregates, EVENT_CACHE_ENTRIES, aggregate_record_free);
        lru_init(&c->observations, EVENT_CACHE_ENTRIES, observation_free);
        lru_init(&c->spam, EVENT_CACHE_ENTRIES, free);
        return c;
}

void event__correlator_free(struct event_correlator *c)
{
        if (c == NULL)
                return;
        lru_clear(&c->aggregates);
        lru_clear(&c->observations);
        lru_clear(&c->spam);
        free(c);
}

/* upstream EventAggregate: returns the key the observation log uses (new
 * string); *ev may be replaced by a combined event. */
static char *aggregate(struct event_correlator *c, struct event **evp, int64_t now_ns)
{
        struct event *ev = *evp;
        char *agg_key = event__aggregate_key(ev);
        struct aggregate_record *r = lru_get(&c->aggregates, agg_key);
        if (r == NULL) {
                r = xcalloc(1, sizeof(*r));
                lru_add(&c->aggregates, agg_key, r);
        } else if (now_ns - r->last_ns > EVENT_AGGREGATE_INTERVAL_NS) {
                for (size_t i = 0; i < r->n; i++)
                        free(r->messages[i]);
                r->n = 0;
        }
        bool seen = false;
        for (size_t i = 0; i < r->n && !seen; i++)
                seen = strcmp(r->messages[i], ev->message) == 0;
        if (!seen)
                r->messages[r->n++] = xstrdup(ev->message);
        r->last_ns = now_ns;

        if (r->n < EVENT_AGGREGATE_MAX_EVENTS) {
                free(agg_key);
                return event__key(ev);
        }
        /* PopAny: the oldest message makes room for the next one */
        free(r->messages[0]);
        memmove(&r->messages[0], &r->messages[1], (r->n - 1) * sizeof(r->messages[0]));
        r->n--;

        struct event *combined = event__copy(ev);
        free(combined->name);
        combined->name = event__name(ev->obj_name, now_ns);
        free(combined->message);
        combined->message = xasprintf("(combined from similar events): %s", ev->message);
        free(combined->resource_version);
        combined->resource_version = NULL;
        combined->count = 1;
        combined->first_ns = now_ns;
        combined->last_ns = now_ns;
        event__free(ev);
        *evp = combined;
        return agg_key;
}

/* upstream eventObserve: a repeat takes the name, count and first time of
 * what was recorded under key. */
static bool observe(struct event_correlator *c, struct event *ev, const char *key)
{
        struct observation *o = lru_get(&c->observations, key);
        bool repeat = o != NULL && o->count > 0;
        if (repeat) {
                free(ev->name);
                ev->name = xstrdup(o->name);
                free(ev->resource_version);
                ev->resource_version = xstrdup(o->resource_version);
                ev->first_ns = o->first_ns;
                ev->count = o->count + 1;
        } else {
                o = xcalloc(1, sizeof(*o));
                lru_add(&c->observations, key, o);
        }
        o->count = ev->count;
        o->first_ns = ev->first_ns;
        if (o->name != ev->name) {
                free(o->name);
                o->name = xstrdup(ev->name);
        }
        free(o->resource_version);
        o->resource_version = xstrdup(ev->resource_version);
        return repeat;
}

/* upstream EventSourceObjectSpamFilter.Filter: true to drop. */
static bool spam_filtered(struct event_correlator *c, const struct event *ev, int64_t now_ns)
{
        char *key = event__spam_key(ev);
        struct event_bucket *b = lru_get(&c->spam, key);
        if (b == NULL) {
                b = xcalloc(1, sizeof(*b));
                lru_add(&c->spam, key, b);
        }
        free(key);
        return !event__bucket_take(b, now_ns, EVENT_SPAM_BURST, EVENT_SPAM_QPS);
}

enum event_action event__correlate(struct event_correlator *c, struct event **ev, int64_t now_ns)
{
        char *key = aggregate(c, ev, now_ns);
        bool repeat = observe(c, *ev, key);
        free(key);
        if (spam_filtered(c, *ev, now_ns))
                return EVENT_ACTION_SKIP;
        return repeat ? EVENT_ACTION_PATCH : EVENT_ACTION_CREATE;
}

void event__correlator_update(struct event_correlator *c, const struct event *ev)
{
        char *key = event__key(ev);
        struct observation *o = lru_get(&c->observations, key);
        if (o == NULL) {
                o = xcalloc(1, sizeof(*o));
                lru_add(&c->observations, key, o);
        }
        free(key);
        o->count = ev->count;
        o->first_ns = ev->first_ns;
        free(o->name);
        o->name = xstrdup(ev->name);
        free(o->resource_version);
        o->resource_version = xstrdup(ev->resource_version);
}
