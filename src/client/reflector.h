/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A reflector (upstream k8s.io/client-go/tools/cache.Reflector): keeps a
 * consumer in step with a collection on the apiserver by listing it, then
 * watching from the list's resourceVersion, on its own thread.
 *
 * As upstream:
 *  - the first list asks for resourceVersion=0 (served from the watch
 *    cache), a relist for the last resourceVersion seen, and after a 410
 *    on a list for "" (a consistent read);
 *  - each watch asks for timeoutSeconds in [min, 2*min] (5 min by default)
 *    and bookmarks; when the server ends it, the next watch resumes from the
 *    last resourceVersion seen (events and bookmarks);
 *  - a watch ending with 410 Gone / Expired ("too old resource version",
 *    as an answer or an ERROR event) or another error leads to a relist;
 *    one refused at connect (the apiserver is down) or with 429 is retried;
 *    a broken connection resumes the watch; a watch that ends within a
 *    second without an event counts as an error;
 *  - between attempts: 800 ms doubling to 30 s, plus up to 100% jitter,
 *    back to 800 ms after 2 min without a failure.
 *
 * Callbacks run on the reflector's thread, one at a time, in stream order.
 */
#ifndef CK_CLIENT_REFLECTOR_H
#define CK_CLIENT_REFLECTOR_H

#include "client/ratelimit.h"
#include "client/rest_config.h"
#include "client/watch.h"
#include "util/error.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

struct reflector_callbacks {
        /* After each list: every object of the collection (a JSON array,
         * borrowed; each item gets the list's apiVersion and its kind without
         * "List") and the list's resourceVersion.  SET semantics: an object
         * not in items is gone. */
        void (*on_replace)(void *opaque, json_t *items, const char *resource_version);
        /* Each ADDED, MODIFIED or DELETED event (object borrowed). */
        void (*on_event)(void *opaque, enum watch_event_type type, json_t *object);
        void *opaque;
};

struct reflector_options {
        const char *name;           /* for logs, e.g. "pods"; NULL: the path */
        const char *path;           /* a collection: "/api/v1/pods" */
        const char *field_selector; /* "spec.nodeName=n1"; one object: "metadata.name=n1" */
        const char *label_selector; /* NULL: none */
        long min_watch_timeout_s;   /* 0: 300, client-go's minWatchTimeout */
};

struct reflector;

/* Starts a reflector on its own thread, with its own connection to the
 * apiserver of cfg (copied).  rl (borrowed, may be NULL) must outlive it.
 * Errors: a config the REST client refuses, a thread that cannot start. */
int reflector_start(const struct rest_config *cfg, struct rest_ratelimiter *rl,
                    const struct reflector_options *opts, const struct reflector_callbacks *cb,
                    struct reflector **out, ck_error_t *err);

/* Stops the thread (within about a second: an ongoing transfer is
 * abandoned), waits for it and frees r.  No callback runs after it returns.
 * NULL-safe.  Not from a callback. */
void reflector_stop(struct reflector *r);

/* True once a list has been delivered (upstream HasSynced).  Any thread. */
bool reflector_has_synced(struct reflector *r);

/* The retry delay (upstream wait.NewExponentialBackoffManager(800ms, 30s,
 * 2min, 2.0, 1.0)); exposed for tests.  Start from a zeroed struct. */
struct reflector_backoff {
        int64_t next_ms; /* delay before jitter of the next step; 0: initial */
        int64_t last_ms; /* when the last step was taken */
};

/* The delay to wait now (ms): the current step plus rand01 (in [0, 1)) of
 * it; the step doubles up to 30 s and resets after 2 min without steps. */
int64_t reflector_backoff_next(struct reflector_backoff *b, int64_t now_ms, double rand01);

#endif
