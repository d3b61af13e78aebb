/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The event recorder (upstream client-go tools/record with the kubelet's
 * settings): core/v1 Events about pods and the node, posted to the
 * apiserver by a background thread, never blocking the caller.
 *
 * As upstream's EventCorrelator: identical events (same object, type,
 * reason, message) within 10 minutes are aggregated into one Event whose
 * count and lastTimestamp are PATCHed; a spam filter (token bucket per
 * object: burst 25, one more every 5 minutes) drops the excess; the queue is
 * bounded (1000, upstream's incoming queue) and drops when full.  Every
 * event is also logged (verbosity 3) so that a standalone kubelet (no
 * recorder: NULL) still says what happened.
 */
#ifndef CK_CLIENT_EVENTS_H
#define CK_CLIENT_EVENTS_H

#include "api/pod.h"
#include "client/ratelimit.h"
#include "client/rest_config.h"
#include "util/error.h"

/* The object an event is about (upstream v1.ObjectReference). */
struct event_object {
        const char *kind;        /* "Pod", "Node" */
        const char *api_version; /* "v1" */
        const char *namespace;   /* NULL/"" for the node */
        const char *name;
        const char *uid;
        const char *resource_version; /* may be NULL */
        const char *field_path;       /* "spec.containers{web}", may be NULL */
};

#define EVENT_NORMAL "Normal"
#define EVENT_WARNING "Warning"

struct event_recorder;

/* Starts the recorder's thread.  cfg copied; rl borrowed (must outlive it).
 * source_host: the node name (Event.source.host, reportingInstance). */
int event_recorder_new(const struct rest_config *cfg, struct rest_ratelimiter *rl,
                       const char *source_host, struct event_recorder **out, ck_error_t *err);
/* Sends what is queued (for up to a second), stops the thread, frees.
 * NULL-safe. */
void event_recorder_free(struct event_recorder *r);

/* Records an event (copied; returns at once).  r may be NULL: logged only.
 * type: EVENT_NORMAL or EVENT_WARNING; reason: "Pulling", "Started"... */
void event_emit(struct event_recorder *r, const struct event_object *obj, const char *type,
                const char *reason, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* An event about a pod, or about one of its containers when container is
 * not NULL (fieldPath spec.containers{name}, spec.initContainers{name}). */
void event_emit_pod(struct event_recorder *r, const struct pod *pod, const char *container,
                    const char *type, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

#endif
