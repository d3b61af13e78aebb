/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzzes the watch stream decoder.  The first input byte picks how the rest
 * is cut into pieces; the events (and the error, if any) must be the same
 * as when the whole stream is fed at once, and so must the error: how bytes
 * arrive never changes what the decoder sees.
 */
#include "client/watch.h"
#include "util/xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct trace {
        char *text;
        size_t len;
};

static int record(void *opaque, enum watch_event_type type, json_t *obj, ck_error_t *err)
{
        (void)err;
        struct trace *t = opaque;
        if (!json_is_object(obj))
                abort(); /* the decoder promised an object */
        char *dump = json_dumps(obj, JSON_COMPACT | JSON_SORT_KEYS);
        char *line = xasprintf("%s %s\n", watch_event_type_name(type), dump ? dump : "?");
        size_t n = strlen(line);
        t->text = xrealloc(t->text, t->len + n + 1);
        memcpy(t->text + t->len, line, n + 1);
        t->len += n;
        free(line);
        free(dump);
        return 0;
}

/* Feeds data in pieces of `step` bytes (0: whole); returns the outcome. */
static int run(const char *data, size_t size, size_t step, struct trace *t, char **msg)
{
        struct watch_decoder *d = watch_decoder_new(4096);
        ck_error_t err = NULL;
        int rc = 0;
        for (size_t off = 0; off < size && rc == 0;) {
                size_t n = step == 0 || step > size - off ? size - off : step;
                rc = watch_decoder_feed(d, data + off, n, record, t, &err);
                off += n;
        }
        if (rc == 0)
                rc = watch_decoder_finish(d, &err);
        *msg = xstrdup(err ? ck_error_msg(err) : "");
        ck_error_release(&err);
        watch_decoder_free(d);
        return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size == 0)
                return 0;
        size_t step = (size_t)data[0] % 17 + 1;
        const char *stream = (const char *)data + 1;
        size--;
        struct trace whole = {0}, pieces = {0};
        char *msg_whole, *msg_pieces;
        int rc_whole = run(stream, size, 0, &whole, &msg_whole);
        int rc_pieces = run(stream, size, step, &pieces, &msg_pieces);
        if (rc_whole != rc_pieces || whole.len != pieces.len ||
            (whole.len && memcmp(whole.text, pieces.text, whole.len) != 0))
                abort();
        if (strcmp(msg_whole, msg_pieces) != 0)
                abort();
        free(whole.text);
        free(pieces.text);
        free(msg_whole);
        free(msg_pieces);
        return 0;
}
