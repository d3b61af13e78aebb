/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The scalar half of yamljson: go-yaml v2's resolve() (which plain scalars
 * are booleans, integers, floats or null under YAML 1.1) and Go's number
 * formatting (strconv.FormatFloat, encoding/json), so that types and texts
 * match what sigs.k8s.io/yaml produces.
 */
#include "util/yamljson.h"
#include "util/yamljson_internal.h"

#include "util/base64.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Go number formatting ---------------------------------------------- */

/* Shortest decimal digits that read back as v (as float when as_float32):
 * digits without a point, and the exponent of the first digit. */
static void shortest_digits(double v, bool as_float32, char *digits, size_t size, int *exp10)
{
        char buf[64];
        for (int prec = 0; prec < 17; prec++) {
                snprintf(buf, sizeof(buf), "%.*e", prec, v);
                if (as_float32 ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v)
                        break;
        }
        /* buf: d[.ddd]e[+-]xx */
        size_t n = 0;
        const char *p = buf;
        for (; *p && *p != 'e'; p++)
                if (isdigit((unsigned char)*p) && n + 1 < size)
                        digits[n++] = *p;
        while (n > 1 && digits[n - 1] == '0')
                n--;
        digits[n] = '\0';
        *exp10 = *p == 'e' ? atoi(p + 1) : 0;
}

/* Writes digits (value 0.d1d2... * 10^(exp10+1)) in %f style. */
static char *format_fixed(bool neg, const char *digits, int exp10)
{
        size_t nd = strlen(digits);
        int dp = exp10 + 1; /* digits before the point */
        size_t cap = nd + (size_t)abs(dp) + 8;
        char *out = xmalloc(cap);
        size_t o = 0;
        if (neg)
                out[o++] = '-';
        if (dp <= 0) {
                out[o++] = '0';
                out[o++] = '.';
                for (int i = 0; i < -dp; i++)
                        out[o++] = '0';
                memcpy(out + o, digits, nd);
                o += nd;
        } else {
                for (int i = 0; i < dp; i++)
                        out[o++] = (size_t)i < nd ? digits[i] : '0';
                if ((size_t)dp < nd) {
                        out[o++] = '.';
                        memcpy(out + o, digits + dp, nd - (size_t)dp);
                        o += nd - (size_t)dp;
                }
        }
        out[o] = '\0';
        return out;
}

static char *format_exp(bool neg, const char *digits, int exp10, int min_exp_digits)
{
        size_t nd = strlen(digits);
        cleanup_free char *mant = xmalloc(nd + 2);
        mant[0] = digits[0];
        size_t o = 1;
        if (nd > 1) {
                mant[o++] = '.';
                memcpy(mant + o, digits + 1, nd - 1);
                o += nd - 1;
        }
        mant[o] = '\0';
        return xasprintf("%s%se%c%0*d", neg ? "-" : "", mant, exp10 < 0 ? '-' : '+', min_exp_digits,
                         abs(exp10));
}

/* Go's strconv.FormatFloat(v, 'g', -1, 32): how sigs.k8s.io/yaml names a
 * float mapping key. */
char *yamljson_float32_text(double v)
{
        if (isnan(v))
                return xstrdup(".nan");
        /* float32(v): beyond the float range it is infinite (a C cast would be undefined) */
        if (isinf(v) || fabs(v) > FLT_MAX)
                return xstrdup(v > 0 ? ".inf" : "-.inf");
        float f = (float)v;
        if (f == 0)
                return xstrdup(signbit(f) ? "-0" : "0");
        char digits[32];
        int e;
        shortest_digits(fabs((double)f), true, digits, sizeof(digits), &e);
        if (e < -4 || e >= 6)
                return format_exp(f < 0, digits, e, 2);
        return format_fixed(f < 0, digits, e);
}

char *yamljson_number_text(const json_t *num)
{
        if (json_is_integer(num))
                return xasprintf("%" PRId64, (int64_t)json_integer_value(num));
        double v = json_real_value(num);
        if (v == 0)
                return xstrdup("0");
        char digits[32];
        int e;
        shortest_digits(fabs(v), false, digits, sizeof(digits), &e);
        /* encoding/json: %e outside [1e-6, 1e21), exponent without padding */
        if (fabs(v) < 1e-6 || fabs(v) >= 1e21)
                return format_exp(v < 0, digits, e, 1);
        return format_fixed(v < 0, digits, e);
}

/* ---- Scalar resolution (go-yaml v2 resolve.go) --------------------------- */

static bool in_list(const char *s, const char *const *list)
{
        for (; *list; list++)
                if (strcmp(s, *list) == 0)
                        return true;
        return false;
}

static int digit_value(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'z')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'Z')
                return c - 'A' + 10;
        return 99;
}

/* strconv.ParseUint(s, 0, 64) without a sign: base from the prefix. */
static bool parse_uint_base0(const char *s, uint64_t *out)
{
        int base = 10;
        if (s[0] == '0' && s[1] != '\0') {
                switch (s[1]) {
                case 'x':
                case 'X':
                        base = 16, s += 2;
                        break;
                case 'o':
                case 'O':
                        base = 8, s += 2;
                        break;
                case 'b':
                case 'B':
                        base = 2, s += 2;
                        break;
                default:
                        base = 8, s += 1;
                        break;
                }
        }
        if (*s == '\0')
                return false;
        uint64_t v = 0;
        for (; *s; s++) {
                int d = digit_value(*s);
                if (d >= base)
                        return false;
                if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
                        return false;
                v = v * (uint64_t)base + (uint64_t)d;
        }
        *out = v;
        return true;
}

/* strconv.ParseInt(s, 0, 64). */
static bool parse_int_base0(const char *s, int64_t *out)
{
        bool neg = false;
        if (*s == '+' || *s == '-')
                neg = *s++ == '-';
        uint64_t u;
        if (!parse_uint_base0(s, &u))
                return false;
        if (neg) {
                if (u > (uint64_t)INT64_MAX + 1)
                        return false;
                *out = u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u;
        } else {
                if (u > (uint64_t)INT64_MAX)
                        return false;
                *out = (int64_t)u;
        }
        return true;
}

/* ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ */
static bool yaml_style_float(const char *s)
{
        if (*s == '+' || *s == '-')
                s++;
        if (*s == '.') {
                s++;
                if (!isdigit((unsigned char)*s))
                        return false;
                while (isdigit((unsigned char)*s))
                        s++;
        } else {
                if (!isdigit((unsigned char)*s))
                        return false;
                while (isdigit((unsigned char)*s))
                        s++;
                if (*s == '.') {
                        s++;
                        while (isdigit((unsigned char)*s))
                                s++;
                }
        }
        if (*s == 'e' || *s == 'E') {
                s++;
                if (*s == '+' || *s == '-')
                        s++;
                if (!isdigit((unsigned char)*s))
                        return false;
                while (isdigit((unsigned char)*s))
                        s++;
        }
        return *s == '\0';
}

static bool parse_float_full(const char *s, double *out)
{
        char *end;
        errno = 0;
        double v = strtod(s, &end);
        if (end == s || *end != '\0' || isinf(v) || isnan(v))
                return false;
        *out = v;
        return true;
}

/* resolve() for an untagged plain scalar (or one tagged with a core type). */
void yamljson_resolve_plain(const char *in, struct scalar *r)
{
        static const char *const yes[] = {"y",    "Y",    "yes", "Yes", "YES", "true",
                                          "True", "TRUE", "on",  "On",  "ON",  NULL};
        static const char *const no[] = {"n",     "N",     "no",  "No",  "NO",  "false",
                                         "False", "FALSE", "off", "Off", "OFF", NULL};
        static const char *const nul[] = {"", "~", "null", "Null", "NULL", NULL};
        static const char *const nan_[] = {".nan", ".NaN", ".NAN", NULL};
        static const char *const pinf[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", NULL};
        static const char *const ninf[] = {"-.inf", "-.Inf", "-.INF", NULL};

        memset(r, 0, sizeof(*r));
        r->type = S_STRING;

        char c = in[0];
        char hint = 0;
        if (c == '\0')
                hint = 'N';
        else if (c == '+' || c == '-')
                hint = 'S';
        else if (isdigit((unsigned char)c))
                hint = 'D';
        else if (strchr("yYnNtTfFoO~", c))
                hint = 'M';
        else if (c == '.')
                hint = '.';
        if (hint == 0) {
                if (strcmp(in, "<<") == 0)
                        r->type = S_MERGE;
                return;
        }

        if (in_list(in, yes) || in_list(in, no)) {
                r->type = S_BOOL;
                r->b = in_list(in, yes);
                return;
        }
        if (in_list(in, nul)) {
                r->type = S_NULL;
                return;
        }
        if (in_list(in, nan_) || in_list(in, pinf) || in_list(in, ninf)) {
                r->type = S_FLOAT;
                r->f = in_list(in, nan_) ? NAN : in_list(in, ninf) ? -INFINITY : INFINITY;
                return;
        }

        if (hint == '.') {
                if (parse_float_full(in, &r->f))
                        r->type = S_FLOAT;
                return;
        }
        if (hint != 'D' && hint != 'S')
                return;

        /* Underscores are digit separators (1_000). */
        size_t n = strlen(in);
        cleanup_free char *plain = xmalloc(n + 1);
        size_t o = 0;
        for (size_t i = 0; i < n; i++)
                if (in[i] != '_')
                        plain[o++] = in[i];
        plain[o] = '\0';

        uint64_t u;
        if (parse_int_base0(plain, &r->i)) {
                r->type = S_INT;
        } else if (plain[0] != '+' && plain[0] != '-' && parse_uint_base0(plain, &u)) {
                r->type = S_FLOAT;
                r->big = true;
                r->f = (double)u;
        } else if (yaml_style_float(plain) && parse_float_full(plain, &r->f)) {
                r->type = S_FLOAT;
        }
}

const char *yamljson_short_tag(enum scalar_type t)
{
        switch (t) {
        case S_NULL:
                return "!!null";
        case S_BOOL:
                return "!!bool";
        case S_INT:
                return "!!int";
        case S_FLOAT:
                return "!!float";
        case S_MERGE:
                return "!!merge";
        default:
                return "!!str";
        }
}

/* !!binary: standard base64 (whitespace ignored), decoded to a string. */
json_t *yamljson_decode_binary(const char *s, size_t len)
{
        cleanup_free char *out = NULL;
        size_t n = 0;
        if (base64_decode(s, len, BASE64_SKIP_SPACE, &out, &n, NULL) < 0)
                return NULL;
        return json_stringn(out, n);
}

json_t *yamljson_scalar_to_json(const struct scalar *s)
{
        switch (s->type) {
        case S_NULL:
                return json_null();
        case S_BOOL:
                return json_boolean(s->b);
        case S_INT:
                return json_integer(s->i);
        case S_FLOAT:
                return json_real(s->f); /* NULL for NaN/Inf: not representable in JSON */
        default:
                return NULL;
        }
}
