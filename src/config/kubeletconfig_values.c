/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Value parsers that accept exactly what Go's strconv.ParseInt/ParseUint/
 * ParseBool and time.ParseDuration accept, with their error wording, because
 * pflag (and so the upstream kubelet) reports a bad flag value as
 *   invalid argument "abc" for "--max-pods" flag: strconv.ParseInt: parsing "abc": invalid syntax
 * and users (and their scripts) know those messages.
 */
#include "config/kubeletconfig_internal.h"
#include "util/strquote.h"
#include "util/xalloc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *kcfg_quote(const char *s)
{
        return str_go_quote(s, strlen(s));
}

/* time's own quote(): only '"' and '\\' escaped, other non-printable or
 * non-ASCII bytes as \xNN. */
static char *time_quote(const char *s)
{
        size_t cap = strlen(s) * 4 + 3, n = 0;
        char *out = xmalloc(cap);
        out[n++] = '"';
        for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
                if (*p >= 0x80 || *p < 0x20) {
                        n += (size_t)snprintf(out + n, cap - n, "\\x%02x", *p);
                        continue;
                }
                if (*p == '"' || *p == '\\')
                        out[n++] = '\\';
                out[n++] = (char)*p;
        }
        out[n++] = '"';
        out[n] = '\0';
        return out;
}

static int num_error(ck_error_t *err, const char *func, const char *num, const char *what)
{
        char *q = kcfg_quote(num);
        ck_error_make(err, 0, "strconv.%s: parsing %s: %s", func, q, what);
        free(q);
        return -1;
}

static char lower(char c)
{
        return (char)(c | ('x' - 'X'));
}

/* strconv's underscoreOK: '_' only between digits (or after a base prefix). */
static bool underscore_ok(const char *s)
{
        char saw = '^';
        size_t i = 0, len;
        if (*s == '-' || *s == '+')
                s++;
        len = strlen(s);
        bool hex = false;
        if (len >= 2 && s[0] == '0' &&
            (lower(s[1]) == 'b' || lower(s[1]) == 'o' || lower(s[1]) == 'x')) {
                i = 2;
                saw = '0';
                hex = lower(s[1]) == 'x';
        }
        for (; i < len; i++) {
                char c = s[i];
                if ((c >= '0' && c <= '9') || (hex && lower(c) >= 'a' && lower(c) <= 'f')) {
                        saw = '0';
                        continue;
                }
                if (c == '_') {
                        if (saw != '0')
                                return false;
                        saw = '_';
                        continue;
                }
                if (saw == '_')
                        return false;
                saw = '!';
        }
        return saw != '_';
}

enum parse_status { PARSE_OK = 0, PARSE_SYNTAX, PARSE_RANGE };

/* strconv.ParseUint(s, base, bits) with base 0 or 10. */
static enum parse_status parse_uint(const char *s, int base, int bits, uint64_t *out)
{
        const char *s0 = s;
        bool base0 = base == 0;
        if (*s == '\0')
                return PARSE_SYNTAX;
        if (base0) {
                base = 10;
                if (s[0] == '0') {
                        size_t len = strlen(s);
                        if (len >= 3 && lower(s[1]) == 'b') {
                                base = 2;
                                s += 2;
                        } else if (len >= 3 && lower(s[1]) == 'o') {
                                base = 8;
                                s += 2;
                        } else if (len >= 3 && lower(s[1]) == 'x') {
                                base = 16;
                                s += 2;
                        } else {
                                base = 8;
                                s += 1;
                        }
                }
        }
        uint64_t max = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
        uint64_t cutoff = UINT64_MAX / (uint64_t)base + 1;
        uint64_t n = 0;
        bool underscores = false;
        for (; *s; s++) {
                char c = *s;
                int d;
                if (c == '_' && base0) {
                        underscores = true;
                        continue;
                } else if (c >= '0' && c <= '9') {
                        d = c - '0';
                } else if (lower(c) >= 'a' && lower(c) <= 'z') {
                        d = lower(c) - 'a' + 10;
                } else {
                        return PARSE_SYNTAX;
                }
                if (d >= base)
                        return PARSE_SYNTAX;
                if (n >= cutoff) {
                        *out = max;
                        return PARSE_RANGE;
                }
                n *= (uint64_t)base;
                uint64_t n1 = n + (uint64_t)d;
                if (n1 < n || n1 > max) {
                        *out = max;
                        return PARSE_RANGE;
                }
                n = n1;
        }
        if (underscores && !underscore_ok(s0))
                return PARSE_SYNTAX;
        *out = n;
        return PARSE_OK;
}

int kcfg_parse_int(const char *s, int bits, int64_t *out, ck_error_t *err)
{
        const char *p = s;
        bool neg = false;
        if (*p == '+') {
                p++;
        } else if (*p == '-') {
                neg = true;
                p++;
        }
        if (*s == '\0')
                return num_error(err, "ParseInt", s, "invalid syntax");
        uint64_t un = 0;
        enum parse_status st = parse_uint(p, 0, 64, &un);
        if (st == PARSE_SYNTAX)
                return num_error(err, "ParseInt", s, "invalid syntax");
        uint64_t cutoff = UINT64_C(1) << (bits - 1);
        if (st == PARSE_RANGE || (!neg && un >= cutoff) || (neg && un > cutoff))
                return num_error(err, "ParseInt", s, "value out of range");
        *out = neg ? (int64_t)(0 - un) : (int64_t)un;
        return 0;
}

int kcfg_parse_uint10(const char *s, int bits, uint64_t *out, ck_error_t *err)
{
        uint64_t v = 0;
        enum parse_status st = parse_uint(s, 10, bits, &v);
        if (st == PARSE_SYNTAX)
                return num_error(err, "ParseUint", s, "invalid syntax");
        if (st == PARSE_RANGE)
                return num_error(err, "ParseUint", s, "value out of range");
        *out = v;
        return 0;
}

int kcfg_parse_bool(const char *s, bool *out, ck_error_t *err)
{
        static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True"};
        static const char *const no[] = {"0", "f", "F", "FALSE", "false", "False"};
        for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
                if (strcmp(s, yes[i]) == 0) {
                        *out = true;
                        return 0;
                }
                if (strcmp(s, no[i]) == 0) {
                        *out = false;
                        return 0;
                }
        }
        return num_error(err, "ParseBool", s, "invalid syntax");
}

/* ---- time.ParseDuration ---- */

static int duration_error(ck_error_t *err, const char *fmt_prefix, const char *unit,
                          const char *orig)
{
        char *q = time_quote(orig);
        if (unit) {
                char *u = time_quote(unit);
                ck_error_make(err, 0, "time: %s %s in duration %s", fmt_prefix, u, q);
                free(u);
        } else {
                ck_error_make(err, 0, "time: %s %s", fmt_prefix, q);
        }
        free(q);
        return -1;
}

static const struct {
        const char *name;
        uint64_t ns;
} duration_units[] = {
    {"ns", 1},
    {"us", 1000},
    {"\xc2\xb5s", 1000}, /* U+00B5 micro sign */
    {"\xce\xbcs", 1000}, /* U+03BC Greek mu */
    {"ms", 1000000},
    {"s", UINT64_C(1000000000)},
    {"m", UINT64_C(60000000000)},
    {"h", UINT64_C(3600000000000)},
};

int kcfg_parse_duration_ns(const char *orig, int64_t *ns, ck_error_t *err)
{
        const char *s = orig;
        const uint64_t limit = UINT64_C(1) << 63;
        uint64_t d = 0;
        bool neg = false;

        if (*s == '-' || *s == '+') {
                neg = *s == '-';
                s++;
        }
        if (strcmp(s, "0") == 0) {
                *ns = 0;
                return 0;
        }
        if (*s == '\0')
                return duration_error(err, "invalid duration", NULL, orig);
        while (*s) {
                uint64_t v = 0, f = 0;
                double scale = 1;
                if (!(*s == '.' || (*s >= '0' && *s <= '9')))
                        return duration_error(err, "invalid duration", NULL, orig);
                const char *start = s;
                for (; *s >= '0' && *s <= '9'; s++) {
                        if (v > limit / 10)
                                return duration_error(err, "invalid duration", NULL, orig);
                        v = v * 10 + (uint64_t)(*s - '0');
                        if (v > limit)
                                return duration_error(err, "invalid duration", NULL, orig);
                }
                bool pre = s != start, post = false;
                if (*s == '.') {
                        s++;
                        const char *fstart = s;
                        bool overflow = false;
                        for (; *s >= '0' && *s <= '9'; s++) {
                                if (overflow)
                                        continue;
                                if (f > (UINT64_C(1) << 63) / 10) {
                                        overflow = true; /* further digits do not matter */
                                        continue;
                                }
                                uint64_t y = f * 10 + (uint64_t)(*s - '0');
                                if (y > limit) {
                                        overflow = true;
                                        continue;
                                }
                                f = y;
                                scale *= 10;
                        }
                        post = s != fstart;
                }
                if (!pre && !post)
                        return duration_error(err, "invalid duration", NULL, orig);
                const char *ustart = s;
                while (*s && *s != '.' && !(*s >= '0' && *s <= '9'))
                        s++;
                size_t ulen = (size_t)(s - ustart);
                if (ulen == 0)
                        return duration_error(err, "missing unit in duration", NULL, orig);
                uint64_t unit = 0;
                for (size_t i = 0; i < sizeof(duration_units) / sizeof(duration_units[0]); i++) {
                        if (strlen(duration_units[i].name) == ulen &&
                            memcmp(duration_units[i].name, ustart, ulen) == 0) {
                                unit = duration_units[i].ns;
                                break;
                        }
                }
                if (unit == 0) {
                        char *u = xstrndup(ustart, ulen);
                        duration_error(err, "unknown unit", u, orig);
                        free(u);
                        return -1;
                }
                if (v > limit / unit)
                        return duration_error(err, "invalid duration", NULL, orig);
                v *= unit;
                if (f > 0) {
                        v += (uint64_t)((double)f * ((double)unit / scale));
                        if (v > limit)
                                return duration_error(err, "invalid duration", NULL, orig);
                }
                d += v;
                if (d > limit)
                        return duration_error(err, "invalid duration", NULL, orig);
        }
        if (neg) {
                *ns = d == limit ? INT64_MIN : -(int64_t)d;
                return 0;
        }
        if (d > limit - 1)
                return duration_error(err, "invalid duration", NULL, orig);
        *ns = (int64_t)d;
        return 0;
}

int config_parse_duration(const char *s, int64_t *ms, ck_error_t *err)
{
        int64_t ns = 0;
        if (kcfg_parse_duration_ns(s, &ns, err) < 0)
                return -1;
        *ms = ns / 1000000;
        return 0;
}
