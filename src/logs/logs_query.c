/* SPDX-License-Identifier: Apache-2.0 */
/*
 * URL query splitting as Go's net/url does it for url.URL.Query(), which
 * the kubelet's log handler uses: errors are not reported, the pair that
 * caused one is just left out.
 */
#include "logs/logs_internal.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* net/url's defaultMaxParams: a query with more pairs decodes to nothing. */
#define QUERY_MAX_PAIRS 10000

/* The value of a hex digit, -1 for another byte. */
static int hex_digit(char c)
{
        if (!isxdigit((unsigned char)c))
                return -1;
        return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

/* url.QueryUnescape of s[0..len): a new NUL-terminated string in *out, or
 * false when a '%' is not followed by two hex digits. */
static bool query_unescape(const char *s, size_t len, char **out, size_t *out_len)
{
        char *d = xmalloc(len + 1);
        size_t o = 0;
        for (size_t i = 0; i < len; i++) {
                if (s[i] == '%') {
                        int hi = i + 2 < len ? hex_digit(s[i + 1]) : -1;
                        int lo = i + 2 < len ? hex_digit(s[i + 2]) : -1;
                        if (hi < 0 || lo < 0) {
                                free(d);
                                return false;
                        }
                        d[o++] = (char)(hi << 4 | lo);
                        i += 2;
                } else {
                        d[o++] = s[i] == '+' ? ' ' : s[i];
                }
        }
        d[o] = '\0';
        *out = d;
        *out_len = o;
        return true;
}

static size_t count_byte(const char *s, size_t len, char c)
{
        size_t n = 0;
        for (size_t i = 0; i < len; i++)
                n += s[i] == c;
        return n;
}

void logs_query_parse(const char *query, size_t len, struct logs_query *out)
{
        out->pairs = NULL;
        out->n = 0;
        if (len == 0 || count_byte(query, len, '&') + 1 > QUERY_MAX_PAIRS)
                return;
        size_t cap = 0;
        const char *p = query, *end = query + len;
        while (p < end) {
                const char *amp = memchr(p, '&', (size_t)(end - p));
                const char *seg_end = amp != NULL ? amp : end;
                size_t seg_len = (size_t)(seg_end - p);
                const char *seg = p;
                p = amp != NULL ? amp + 1 : end;
                if (seg_len == 0 || memchr(seg, ';', seg_len) != NULL)
                        continue;
                const char *eq = memchr(seg, '=', seg_len);
                size_t key_len = eq != NULL ? (size_t)(eq - seg) : seg_len;
                struct logs_query_pair pair;
                if (!query_unescape(seg, key_len, &pair.key, &pair.key_len))
                        continue;
                const char *val = eq != NULL ? eq + 1 : seg_end;
                if (!query_unescape(val, (size_t)(seg_end - val), &pair.value, &pair.value_len)) {
                        free(pair.key);
                        continue;
                }
                if (out->n == cap) {
                        cap = cap == 0 ? 8 : cap * 2;
                        out->pairs = xrealloc(out->pairs, cap * sizeof(*out->pairs));
                }
                out->pairs[out->n++] = pair;
        }
}

const struct logs_query_pair *logs_query_get(const struct logs_query *q, const char *key)
{
        size_t key_len = strlen(key);
        for (size_t i = 0; i < q->n; i++)
                if (q->pairs[i].key_len == key_len && memcmp(q->pairs[i].key, key, key_len) == 0)
                        return &q->pairs[i];
        return NULL;
}

void logs_query_release(struct logs_query *q)
{
        for (size_t i = 0; i < q->n; i++) {
                free(q->pairs[i].key);
                free(q->pairs[i].value);
        }
        free(q->pairs);
        q->pairs = NULL;
        q->n = 0;
}
