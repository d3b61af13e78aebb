/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Watches (upstream apimachinery's watch.StreamWatcher over the JSON
 * framer): GET <path>?watch=1&resourceVersion=..&allowWatchBookmarks=true
 * &timeoutSeconds=N returns a stream of events
 *   {"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":{...}}
 * The apiserver writes one per line, but nothing here relies on lines or
 * on how the bytes arrive: the decoder finds each complete top-level JSON
 * object itself (as Go's json.Decoder does).
 *
 * An ERROR event carries a Status; code 410 (reason Expired or Gone) means
 * the resource version is too old: the caller must list again.
 */
#ifndef CK_CLIENT_WATCH_H
#define CK_CLIENT_WATCH_H

#include "client/rest.h"
#include "util/error.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

enum watch_event_type {
        WATCH_ADDED,
        WATCH_MODIFIED,
        WATCH_DELETED,
        WATCH_BOOKMARK,
        WATCH_ERROR,
};

/* "ADDED", "MODIFIED", ... (static). */
const char *watch_event_type_name(enum watch_event_type type);

/* Called for each event; `object` is borrowed for the call (json_incref
 * what you keep).  Return < 0 (with err) to stop. */
typedef int (*watch_event_fn)(void *opaque, enum watch_event_type type, json_t *object,
                              ck_error_t *err);

/* The largest event the decoder accepts unless told otherwise (an object in
 * etcd is at most 1.5 MiB by default, a request to the apiserver 3 MiB). */
#define WATCH_MAX_EVENT (16u << 20)

/* The stream decoder: a pure function of the bytes fed to it (no I/O). */
struct watch_decoder;

/* max_event: the largest event in bytes (0: WATCH_MAX_EVENT). */
struct watch_decoder *watch_decoder_new(size_t max_event);
void watch_decoder_free(struct watch_decoder *d);

/* Feeds the next bytes of the stream (any split); calls fn for each event
 * completed by them, in order.  Errors: bytes that are not an event
 * ("watch stream: ..."), an event over the size limit, an unknown type, an
 * event without an object, or fn's error.  After an error the decoder
 * refuses further input. */
int watch_decoder_feed(struct watch_decoder *d, const char *data, size_t len, watch_event_fn fn,
                       void *opaque, ck_error_t *err);

/* The end of the stream: an error when it stopped inside an event. */
int watch_decoder_finish(struct watch_decoder *d, ck_error_t *err);

/* The error an ERROR event's object (a Status) stands for, in err: code =
 * Status.code (410 for "too old"), message "watch <what>: 410 Expired: too
 * old resource version: ...".  Returns -1. */
int watch_error_event(const json_t *status, const char *what, ck_error_t *err);

/* True for the error of a resource version the apiserver no longer has (410
 * Gone / Expired, from an answer or an ERROR event): relist. */
bool watch_is_expired(const ck_error_t err);

struct watch_options {
        const char *resource_version; /* NULL or "": start at the most recent */
        const char *field_selector;   /* e.g. "spec.nodeName=node1"; NULL: none */
        const char *label_selector;   /* NULL: none */
        long timeout_seconds;         /* server side end of the watch; 0: its default */
        bool allow_bookmarks;         /* allowWatchBookmarks=true */
};

/* Runs one watch of the collection at `path` ("/api/v1/pods") on c until
 * the server ends it, calling fn for every event but ERROR.  Returns 0
 * when the server ended the stream cleanly (the timeout passed); -1 with
 * err otherwise: an ERROR event (watch_error_event), an answer that is not
 * 2xx (code = HTTP status), a transport failure or stop (REST_ERR_*), a
 * malformed stream, or fn's error.  The client-side deadline is
 * timeout_seconds plus a minute. */
int watch_stream(struct rest_client *c, const char *path, const struct watch_options *opts,
                 watch_event_fn fn, void *opaque, ck_error_t *err);

#endif
