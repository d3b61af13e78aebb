/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PodLogOptions from the query of GET /containerLogs/...: what upstream's
 * getContainerLogs does with the legacy "tail" param, the v1 parameter
 * codec's conversion (Convert_url_Values_To_v1_PodLogOptions: first value
 * of each key), the defaulting of stream to All and the v1
 * ValidatePodLogOptions.
 */
#include "logs/logs_internal.h"
#include "util/cleanup.h"
#include "util/strquote.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* What the query said, before validation. */
struct decoded {
        struct logs_options opts;
        bool has_tail, has_limit, has_since_seconds, has_since_time;
        const struct logs_query_pair *stream; /* NULL: defaulted to All */
};

void logs_options_init(struct logs_options *o)
{
        *o = (struct logs_options){.tail_lines = -1, .limit_bytes = -1};
}

void logs_options_release(struct logs_options *o)
{
        free(o->container);
        o->container = NULL;
}

/* Go's strings.EqualFold(v, "false"): ASCII case folding, and U+017F
 * (LATIN SMALL LETTER LONG S) folds to 's'. */
static bool equal_fold_false(const char *v, size_t n)
{
        static const char want[] = "false";
        size_t i = 0;
        for (const char *w = want; *w != '\0'; w++) {
                if (i < n && (v[i] | 0x20) == *w) {
                        i++;
                } else if (*w == 's' && i + 1 < n && (unsigned char)v[i] == 0xc5 &&
                           (unsigned char)v[i + 1] == 0xbf) {
                        i += 2;
                } else {
                        return false;
                }
        }
        return i == n;
}

/* runtime.Convert_Slice_string_To_bool: only "0" and "false" (any case) are
 * false; anything else, the empty string too, is true. */
static bool decode_bool(const struct logs_query_pair *p)
{
        if (p == NULL)
                return false;
        if (p->value_len == 1 && p->value[0] == '0')
                return false;
        return !equal_fold_false(p->value, p->value_len);
}

/* strconv.ParseInt(v, 10, 64): an optional sign, then decimal digits that
 * are read as an unsigned 64-bit number (the first overflow or non-digit
 * ends it with that error), then the int64 range. */
static int decode_int64(const struct logs_query_pair *p, int64_t *out, ck_error_t *err)
{
        const char *s = p->value, *why = NULL;
        size_t n = p->value_len, i = 0;
        bool neg = false;
        if (n > 0 && (s[0] == '+' || s[0] == '-')) {
                neg = s[0] == '-';
                i = 1;
        }
        uint64_t v = 0;
        if (i == n)
                why = "invalid syntax";
        for (; i < n && why == NULL; i++) {
                if (s[i] < '0' || s[i] > '9')
                        why = "invalid syntax";
                else if (v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
                        why = "value out of range";
                else
                        v = v * 10 + (uint64_t)(s[i] - '0');
        }
        if (why == NULL && v > (neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX))
                why = "value out of range";
        if (why != NULL) {
                cleanup_free char *q = str_go_quote(s, n);
                return ck_error_make_code(err, 400,
                                          "decode query parameter %s: strconv.ParseInt: parsing "
                                          "%s: %s",
                                          p->key, q, why);
        }
        *out = neg ? (int64_t)(0 - v) : (int64_t)v;
        return 0;
}

/* metav1.Time.UnmarshalQueryParameter: "" and "null" are the zero time
 * (left 0 here: the zero time is never after another since); clamped to
 * int64 ns.  (The epoch itself also reads as 0, "not set": that only
 * differs for records stamped before 1970.) */
static int decode_since_time(const struct logs_query_pair *p, int64_t *ns, ck_error_t *err)
{
        struct go_time t;
        if (p->value_len == 0 || (p->value_len == 4 && memcmp(p->value, "null", 4) == 0))
                return 0;
        if (!go_time_parse(p->value, p->value_len, &t)) {
                cleanup_free char *q = str_go_quote(p->value, p->value_len);
                return ck_error_make_code(err, 400,
                                          "decode query parameter sinceTime: parsing time %s as "
                                          "\"2006-01-02T15:04:05Z07:00\": not RFC 3339",
                                          q);
        }
        if (t.sec >= INT64_MAX / 1000000000)
                *ns = INT64_MAX;
        else if (t.sec < INT64_MIN / 1000000000)
                *ns = INT64_MIN;
        else
                *ns = t.sec * 1000000000 + t.nsec;
        return 0;
}

static int decode(const struct logs_query *q, struct decoded *d, ck_error_t *err)
{
        const struct logs_query_pair *p;
        if ((p = logs_query_get(q, "container")) != NULL)
                d->opts.container = xstrndup(p->value, p->value_len);
        d->opts.follow = decode_bool(logs_query_get(q, "follow"));
        d->opts.previous = decode_bool(logs_query_get(q, "previous"));
        if ((p = logs_query_get(q, "sinceSeconds")) != NULL) {
                d->has_since_seconds = true;
                if (decode_int64(p, &d->opts.since_seconds, err) < 0)
                        return -1;
        }
        if ((p = logs_query_get(q, "sinceTime")) != NULL) {
                d->has_since_time = true;
                if (decode_since_time(p, &d->opts.since_time_ns, err) < 0)
                        return -1;
        }
        d->opts.timestamps = decode_bool(logs_query_get(q, "timestamps"));

        /* the legacy "tail" replaces tailLines when not empty; "all": none */
        const struct logs_query_pair *tail = logs_query_get(q, "tail");
        if (tail != NULL && tail->value_len > 0)
                p = strcmp(tail->value, "all") == 0 && tail->value_len == 3 ? NULL : tail;
        else
                p = logs_query_get(q, "tailLines");
        if (p != NULL) {
                d->has_tail = true;
                if (decode_int64(p, &d->opts.tail_lines, err) < 0)
                        return -1;
        }
        if ((p = logs_query_get(q, "limitBytes")) != NULL) {
                d->has_limit = true;
                if (decode_int64(p, &d->opts.limit_bytes, err) < 0)
                        return -1;
        }
        d->stream = logs_query_get(q, "stream");
        return 0;
}

static bool stream_is(const struct logs_query_pair *p, const char *name)
{
        return p->value_len == strlen(name) && memcmp(p->value, name, p->value_len) == 0;
}

/* Appends one validation error to *list (a new string). */
static void add_error(char **list, size_t *n, const char *msg)
{
        char *joined = *list == NULL ? xstrdup(msg) : xasprintf("%s, %s", *list, msg);
        free(*list);
        *list = joined;
        (*n)++;
}

/* ValidatePodLogOptions (v1); the messages are field.Error's. */
static int validate(struct decoded *d, ck_error_t *err)
{
        cleanup_free char *list = NULL;
        size_t n = 0;
        char buf[160];
        if (d->has_tail && d->opts.tail_lines < 0) {
                snprintf(buf, sizeof(buf),
                         "tailLines: Invalid value: %lld: must be greater than or equal to 0",
                         (long long)d->opts.tail_lines);
                add_error(&list, &n, buf);
        }
        if (d->has_limit && d->opts.limit_bytes < 1) {
                snprintf(buf, sizeof(buf),
                         "limitBytes: Invalid value: %lld: must be greater than 0",
                         (long long)d->opts.limit_bytes);
                add_error(&list, &n, buf);
        }
        if (d->has_since_seconds && d->has_since_time) {
                add_error(&list, &n,
                          "Forbidden: at most one of `sinceTime` or `sinceSeconds` may be "
                          "specified");
        } else if (d->has_since_seconds && d->opts.since_seconds < 1) {
                snprintf(buf, sizeof(buf),
                         "sinceSeconds: Invalid value: %lld: must be greater than 0",
                         (long long)d->opts.since_seconds);
                add_error(&list, &n, buf);
        }
        if (d->stream != NULL) {
                if (stream_is(d->stream, "Stdout")) {
                        d->opts.stream = LOGS_STREAM_STDOUT;
                } else if (stream_is(d->stream, "Stderr")) {
                        d->opts.stream = LOGS_STREAM_STDERR;
                } else if (!stream_is(d->stream, "All")) {
                        cleanup_free char *q = str_go_quote(d->stream->value, d->stream->value_len);
                        cleanup_free char *msg =
                            xasprintf("stream: Unsupported value: %s: supported values: \"All\", "
                                      "\"Stderr\", \"Stdout\"",
                                      q);
                        add_error(&list, &n, msg);
                }
                if (!stream_is(d->stream, "All") && d->has_tail)
                        add_error(&list, &n,
                                  "Forbidden: `tailLines` and specific `stream` are mutually "
                                  "exclusive for now");
        }
        if (n == 0)
                return 0;
        return ck_error_make_code(
            err, 422, n == 1 ? "invalid log options: %s" : "invalid log options: [%s]", list);
}

int logs_options_parse(const char *query, size_t len, struct logs_options *out, ck_error_t *err)
{
        struct logs_query q;
        struct decoded d = {0};
        logs_options_init(&d.opts);
        logs_query_parse(query, query != NULL ? len : 0, &q);
        int r = decode(&q, &d, err);
        if (r == 0)
                r = validate(&d, err);
        logs_query_release(&q);
        if (r < 0) {
                logs_options_release(&d.opts);
                logs_options_init(out);
                return -1;
        }
        *out = d.opts;
        return 0;
}
