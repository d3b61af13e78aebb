/* SPDX-License-Identifier: Apache-2.0 */
/* One watch request: the REST stream fed through the event decoder. */
#include "client/watch.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>

int watch_error_event(const json_t *status, const char *what, ck_error_t *err)
{
        return rest_status_error(err, what, 500, status);
}

bool watch_is_expired(const ck_error_t err)
{
        return err != NULL && err->code == 410;
}

struct stream {
        struct watch_decoder *decoder;
        watch_event_fn fn;
        void *opaque;
};

static int on_event(void *opaque, enum watch_event_type type, json_t *object, ck_error_t *err)
{
        struct stream *s = opaque;
        if (type == WATCH_ERROR)
                return watch_error_event(object, "ERROR event", err);
        return s->fn(s->opaque, type, object, err);
}

static int on_data(void *opaque, const char *data, size_t len, ck_error_t *err)
{
        struct stream *s = opaque;
        return watch_decoder_feed(s->decoder, data, len, on_event, s, err);
}

int watch_stream(struct rest_client *c, const char *path, const struct watch_options *opts,
                 watch_event_fn fn, void *opaque, ck_error_t *err)
{
        cleanup_free char *query = NULL;
        rest_query_add(&query, "watch", "true");
        if (opts->resource_version && opts->resource_version[0])
                rest_query_add(&query, "resourceVersion", opts->resource_version);
        if (opts->allow_bookmarks)
                rest_query_add(&query, "allowWatchBookmarks", "true");
        if (opts->field_selector && opts->field_selector[0])
                rest_query_add(&query, "fieldSelector", opts->field_selector);
        if (opts->label_selector && opts->label_selector[0])
                rest_query_add(&query, "labelSelector", opts->label_selector);
        long deadline_ms = 0;
        if (opts->timeout_seconds > 0) {
                char secs[24];
                snprintf(secs, sizeof(secs), "%ld", opts->timeout_seconds);
                rest_query_add(&query, "timeoutSeconds", secs);
                deadline_ms = (opts->timeout_seconds + 60) * 1000;
        }
        struct stream s = {.decoder = watch_decoder_new(0), .fn = fn, .opaque = opaque};
        int rc = rest_stream(c, path, query, deadline_ms, on_data, &s, err);
        if (rc >= 0 && watch_decoder_finish(s.decoder, err) < 0)
                rc = ck_error_wrap(err, "GET %s", path);
        watch_decoder_free(s.decoder);
        return rc < 0 ? -1 : 0;
}
