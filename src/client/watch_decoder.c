/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The watch stream decoder: finds each complete top-level JSON object by
 * tracking nesting outside strings (a string may hold any brace), then
 * parses it with jansson.  Between objects only whitespace may appear.
 */
#include "client/watch.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct watch_decoder {
        char *buf; /* the bytes of the event being read */
        size_t len, cap, max;
        size_t depth; /* 0: between events */
        bool in_string, escape;
        bool failed;
};

static const char *const type_names[] = {
    [WATCH_ADDED] = "ADDED",       [WATCH_MODIFIED] = "MODIFIED", [WATCH_DELETED] = "DELETED",
    [WATCH_BOOKMARK] = "BOOKMARK", [WATCH_ERROR] = "ERROR",
};

const char *watch_event_type_name(enum watch_event_type type)
{
        return (unsigned)type < ARRAY_SIZE(type_names) ? type_names[type] : "UNKNOWN";
}

struct watch_decoder *watch_decoder_new(size_t max_event)
{
        struct watch_decoder *d = xcalloc(1, sizeof(*d));
        d->max = max_event ? max_event : WATCH_MAX_EVENT;
        return d;
}

void watch_decoder_free(struct watch_decoder *d)
{
        if (d == NULL)
                return;
        free(d->buf);
        free(d);
}

/* Marks the decoder failed and fills err. */
__attribute__((format(printf, 3, 4))) static int fail(struct watch_decoder *d, ck_error_t *err,
                                                      const char *fmt, ...)
{
        d->failed = true;
        va_list ap;
        va_start(ap, fmt);
        cleanup_free char *msg = xvasprintf(fmt, ap);
        va_end(ap);
        return ck_error_make(err, 0, "watch stream: %s", msg);
}

/* Parses the complete event in d->buf and hands it to fn. */
static int emit(struct watch_decoder *d, watch_event_fn fn, void *opaque, ck_error_t *err)
{
        json_error_t jerr;
        cleanup_json json_t *ev = json_loadb(d->buf, d->len, 0, &jerr);
        d->len = 0;
        if (ev == NULL)
                return ck_error_make(err, 0, "watch stream: invalid event: %s", jerr.text);
        const char *type = json_string_value(json_object_get(ev, "type"));
        json_t *obj = json_object_get(ev, "object");
        if (type == NULL)
                return ck_error_make(err, 0, "watch stream: event without a type");
        size_t t = 0;
        while (t < ARRAY_SIZE(type_names) && strcmp(type, type_names[t]) != 0)
                t++;
        if (t == ARRAY_SIZE(type_names))
                return ck_error_make(err, 0, "watch stream: unknown event type \"%.32s\"", type);
        if (!json_is_object(obj))
                return ck_error_make(err, 0, "watch stream: %s event without an object", type);
        return fn(opaque, (enum watch_event_type)t, obj, err) < 0 ? -1 : 0;
}

static void append(struct watch_decoder *d, const char *p, size_t n)
{
        if (d->len + n > d->cap) {
                d->cap = (d->len + n) * 2 < 4096 ? 4096 : (d->len + n) * 2;
                d->buf = xrealloc(d->buf, d->cap);
        }
        memcpy(d->buf + d->len, p, n);
        d->len += n;
}

int watch_decoder_feed(struct watch_decoder *d, const char *data, size_t len, watch_event_fn fn,
                       void *opaque, ck_error_t *err)
{
        if (d->failed)
                return ck_error_make(err, 0, "watch stream: decoder already failed");
        size_t start = 0; /* first byte of data not yet appended */
        for (size_t i = 0; i < len; i++) {
                char c = data[i];
                if (d->depth == 0) {
                        if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
                                continue;
                        if (c != '{')
                                return fail(d, err, "unexpected byte 0x%02x between events",
                                            (unsigned char)c);
                        start = i;
                        d->depth = 1;
                        continue;
                }
                if (d->in_string) {
                        if (d->escape)
                                d->escape = false;
                        else if (c == '\\')
                                d->escape = true;
                        else if (c == '"')
                                d->in_string = false;
                } else if (c == '"') {
                        d->in_string = true;
                } else if (c == '{' || c == '[') {
                        d->depth++;
                } else if ((c == '}' || c == ']') && --d->depth == 0) {
                        if (d->len + (i + 1 - start) > d->max)
                                goto too_big;
                        append(d, data + start, i + 1 - start);
                        if (emit(d, fn, opaque, err) < 0) {
                                d->failed = true;
                                return -1;
                        }
                }
                if (d->depth > 0 && d->len + (i + 1 - start) > d->max)
                        goto too_big;
        }
        if (d->depth > 0)
                append(d, data + start, len - start);
        return 0;
too_big:
        return fail(d, err, "event larger than %zu bytes", d->max);
}

int watch_decoder_finish(struct watch_decoder *d, ck_error_t *err)
{
        if (d->failed || d->depth == 0)
                return 0;
        return fail(d, err, "ended inside an event (%zu bytes)", d->len);
}
