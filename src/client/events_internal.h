/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to the event recorder (events.c, event_object.c,
 * event_correlator.c) and its unit tests: the Event as the recorder holds
 * it, its JSON, and upstream's EventCorrelator as pure functions of a
 * clock passed in.
 */
#ifndef CK_CLIENT_EVENTS_INTERNAL_H
#define CK_CLIENT_EVENTS_INTERNAL_H

#include "client/events.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* upstream client-go tools/record */
#define EVENT_QUEUE_MAX 1000          /* maxQueuedEvents */
#define EVENT_CACHE_ENTRIES 4096      /* maxLruCacheEntries */
#define EVENT_AGGREGATE_MAX_EVENTS 10 /* defaultAggregateMaxEvents */
#define EVENT_AGGREGATE_INTERVAL_NS (600LL * 1000000000LL)
#define EVENT_SPAM_BURST 25
#define EVENT_SPAM_QPS (1.0 / 300.0)
#define EVENT_COMPONENT "kubelet"

/* One core/v1 Event; every string owned (NULL: absent). */
struct event {
        char *name;
        char *namespace; /* of the Event: the object's, "default" for the node */
        /* involvedObject */
        char *kind, *api_version, *obj_namespace, *obj_name, *obj_uid, *obj_resource_version,
            *field_path;
        char *type, *reason, *message;
        char *host;             /* source.host and reportingInstance */
        int64_t first_ns;       /* firstTimestamp, unix nanoseconds */
        int64_t last_ns;        /* lastTimestamp */
        int32_t count;          /* 1 for a new event */
        char *resource_version; /* the Event's own, once the apiserver answered */
};

/* upstream makeEvent: a new event (count 1, both timestamps now_ns, name
 * "<object name>.<now_ns in hex>").  Strings copied. */
struct event *event__new(const struct event_object *obj, const char *host, const char *type,
                         const char *reason, const char *message, int64_t now_ns);
struct event *event__copy(const struct event *ev);
void event__free(struct event *ev);

/* upstream util.GenerateEventName: "<ref name>.<unix nanos, %x>", or a
 * random UUID when that is not a DNS subdomain.  New string. */
char *event__name(const char *ref_name, int64_t now_ns);

/* RFC 3339 UTC with seconds, as metav1.Time marshals ("2024-05-01T10:00:00Z"). */
void event__format_time(int64_t unix_ns, char *buf, size_t len);

/* The Event as POSTed (new reference). */
json_t *event__to_json(const struct event *ev);
/* The strategic merge patch that updates an aggregated Event: count,
 * lastTimestamp and message (upstream eventObserve's two-way patch). */
json_t *event__patch_json(const struct event *ev);

/* upstream getEventKey / getSpamKey / EventAggregatorByReasonFunc's
 * aggregate key: the fields joined without separator.  New strings. */
char *event__key(const struct event *ev);
char *event__spam_key(const struct event *ev);
char *event__aggregate_key(const struct event *ev);

/* ---- the correlator (event_correlator.c) ---- */

/* A token bucket as x/time/rate's Limiter.Allow: starts full with `burst`
 * tokens, refilled at qps per second up to burst. */
struct event_bucket {
        double tokens;
        int64_t last_ns;
        bool started;
};
/* Takes a token at now_ns if there is one (upstream TryAccept). */
bool event__bucket_take(struct event_bucket *b, int64_t now_ns, int burst, double qps);

enum event_action {
        EVENT_ACTION_SKIP,   /* the spam filter dropped it */
        EVENT_ACTION_CREATE, /* POST a new Event */
        EVENT_ACTION_PATCH,  /* PATCH count/lastTimestamp of *ev (name of the first) */
};

struct event_correlator;

struct event_correlator *event__correlator_new(void);
void event__correlator_free(struct event_correlator *c);

/* upstream EventCorrelate at now_ns: the aggregator may replace *ev by a
 * "(combined from similar events)" event (the old one freed), the
 * observation log turns a repeat into a PATCH (name, count+1,
 * firstTimestamp of the first), the spam filter may skip it.  Not
 * thread-safe (the recorder's thread only). */
enum event_action event__correlate(struct event_correlator *c, struct event **ev, int64_t now_ns);

/* upstream UpdateState: what the apiserver stored (ev with its
 * resourceVersion), so that the next repeat patches it. */
void event__correlator_update(struct event_correlator *c, const struct event *ev);

#endif
