/* SPDX-License-Identifier: Apache-2.0 */
/*
 * resource.Quantity (k8s.io/apimachinery/pkg/api/resource): parsing, the
 * rounding the apiserver applies (every ResourceList is rounded up to
 * millis by SetDefaults_ResourceList), Value()/MilliValue() (rounded up,
 * away from zero) and the canonical text the apiserver stores ("0.5" ->
 * "500m", "1.5Gi" -> "1536Mi", "1000" -> "1k").
 *
 * Upstream keeps arbitrary precision and silently wraps on int64 overflow;
 * here a value whose millis do not fit 127 bits, or whose Value() does not
 * fit int64, is an error.
 */
#include "api/api_internal.h"
#include "api/decode.h"

#include "util/cleanup.h"
#include "util/xalloc.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define QUANTITY_FORMAT_ERROR                                                                      \
        "quantities must match the regular expression "                                            \
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"

/* Significant digits accepted; far beyond any value that fits. */
#define QUANTITY_MAX_DIGITS 4096

typedef unsigned __int128 u128;

static const u128 U128_LIMIT = (u128)1 << 126;

/* A little-endian base 2^32 unsigned integer. */
struct big {
        uint32_t *w;
        size_t n;
};

static void big_mul_add(struct big *b, uint32_t m, uint32_t a)
{
        uint64_t carry = a;
        for (size_t i = 0; i < b->n; i++) {
                uint64_t v = (uint64_t)b->w[i] * m + carry;
                b->w[i] = (uint32_t)v;
                carry = v >> 32;
        }
        if (carry)
                b->w[b->n++] = (uint32_t)carry; /* capacity reserved by the caller */
}

/* Divides in place; returns the remainder. */
static uint32_t big_divmod(struct big *b, uint32_t d)
{
        uint64_t rem = 0;
        for (size_t i = b->n; i > 0; i--) {
                uint64_t cur = (rem << 32) | b->w[i - 1];
                b->w[i - 1] = (uint32_t)(cur / d);
                rem = cur % d;
        }
        while (b->n > 0 && b->w[b->n - 1] == 0)
                b->n--;
        return (uint32_t)rem;
}

/* The value if below U128_LIMIT. */
static bool big_small(const struct big *b, u128 *out)
{
        if (b->n > 4)
                return false;
        u128 v = 0;
        for (size_t i = b->n; i > 0; i--)
                v = (v << 32) | b->w[i - 1];
        if (v >= U128_LIMIT)
                return false;
        *out = v;
        return true;
}

static bool is_digit(char c)
{
        return c >= '0' && c <= '9';
}

/* parseQuantityString: sign, integer digits, fraction digits, suffix. */
static bool split_quantity(const char *str, bool *positive, const char **num, size_t *num_len,
                           const char **denom, size_t *denom_len, const char **suffix)
{
        size_t end = strlen(str), pos = 0;
        *positive = true;
        *num = "0";
        *num_len = 1;
        *denom = "";
        *denom_len = 0;
        *suffix = str + end;
        if (pos < end && (str[0] == '-' || str[0] == '+')) {
                *positive = str[0] == '+';
                pos++;
        }
        while (pos < end && str[pos] == '0')
                pos++;
        if (pos >= end)
                return true;
        size_t start = pos;
        while (pos < end && is_digit(str[pos]))
                pos++;
        if (pos > start) {
                *num = str + start;
                *num_len = pos - start;
        }
        if (pos >= end)
                return true;
        if (str[pos] == '.') {
                pos++;
                start = pos;
                while (pos < end && is_digit(str[pos]))
                        pos++;
                *denom = str + start;
                *denom_len = pos - start;
                if (pos >= end)
                        return true;
        }
        *suffix = str + pos;
        while (pos < end && strchr("eEinumkKMGTP", str[pos]))
                pos++;
        if (pos < end && (str[pos] == '-' || str[pos] == '+'))
                pos++;
        while (pos < end && is_digit(str[pos]))
                pos++;
        return pos >= end;
}

/* suffixHandler.interpret: base 10 or 2, exponent, format. */
static bool interpret_suffix(const char *s, int *base, int64_t *exponent,
                             enum quantity_format *format)
{
        static const struct {
                const char *s;
                int base, exp;
        } table[] = {
            {"", 10, 0},   {"n", 10, -9}, {"u", 10, -6}, {"m", 10, -3},
            {"k", 10, 3},  {"M", 10, 6},  {"G", 10, 9},  {"T", 10, 12},
            {"P", 10, 15}, {"E", 10, 18}, {"Ki", 2, 10}, {"Mi", 2, 20},
            {"Gi", 2, 30}, {"Ti", 2, 40}, {"Pi", 2, 50}, {"Ei", 2, 60},
        };
        for (size_t i = 0; i < ARRAY_SIZE(table); i++) {
                if (strcmp(s, table[i].s) == 0) {
                        *base = table[i].base;
                        *exponent = table[i].exp;
                        *format = table[i].base == 2 ? QUANTITY_BINARY_SI : QUANTITY_DECIMAL_SI;
                        return true;
                }
        }
        if (strlen(s) > 1 && (s[0] == 'e' || s[0] == 'E')) {
                const char *p = s + 1;
                bool neg = false;
                if (*p == '+' || *p == '-')
                        neg = *p++ == '-';
                if (*p == '\0')
                        return false;
                int64_t v = 0;
                for (; *p; p++) {
                        if (!is_digit(*p))
                                return false;
                        /* Beyond a million the value overflows or rounds to 1m. */
                        if (v < 1000000)
                                v = v * 10 + (*p - '0');
                }
                *base = 10;
                *exponent = neg ? -v : v;
                *format = QUANTITY_DECIMAL_EXPONENT;
                return true;
        }
        return false;
}

int quantity_parse(const char *str, struct quantity *q, ck_error_t *err)
{
        memset(q, 0, sizeof(*q));
        if (str[0] == '\0')
                return ck_error_make(err, 0, "%s", QUANTITY_FORMAT_ERROR);
        bool positive;
        const char *num, *denom, *suffix;
        size_t num_len, denom_len;
        if (!split_quantity(str, &positive, &num, &num_len, &denom, &denom_len, &suffix))
                return ck_error_make(err, 0, "%s", QUANTITY_FORMAT_ERROR);
        int base;
        int64_t exponent;
        if (!interpret_suffix(suffix, &base, &exponent, &q->format))
                return ck_error_make(err, 0, "unable to parse quantity's suffix");

        /* digits = num denom, value = digits * 10^e10 * 2^e2, in millis */
        size_t nd = num_len + denom_len;
        cleanup_free char *digits = xmalloc(nd + 1);
        memcpy(digits, num, num_len);
        memcpy(digits + num_len, denom, denom_len);
        digits[nd] = '\0';
        int64_t e10 = (base == 10 ? exponent : 0) - (int64_t)denom_len + 3;
        int e2 = base == 2 ? (int)exponent : 0;

        size_t lead = 0;
        while (lead < nd && digits[lead] == '0')
                lead++;
        while (nd > lead && digits[nd - 1] == '0') {
                nd--;
                e10++;
        }
        q->negative = !positive;
        if (nd == lead) {
                q->negative = false;
                if (q->format == QUANTITY_BINARY_SI)
                        q->format = QUANTITY_DECIMAL_SI;
                return 0;
        }
        if (nd - lead > QUANTITY_MAX_DIGITS)
                return ck_error_make(err, 0, "quantity has too many digits");

        cleanup_free uint32_t *words = xcalloc((nd - lead) / 9 + 8, sizeof(uint32_t));
        struct big b = {.w = words, .n = 0};
        for (size_t i = lead; i < nd; i++)
                big_mul_add(&b, 10, (uint32_t)(digits[i] - '0'));
        for (int i = 0; i < e2; i++)
                big_mul_add(&b, 2, 0);

        bool inexact = false;
        u128 v;
        if (e10 >= 0) {
                for (int64_t i = 0; i < e10; i++) {
                        if (b.n > 4)
                                break;
                        big_mul_add(&b, 10, 0);
                }
                if (!big_small(&b, &v))
                        return ck_error_make(err, 0, "quantity is too large");
        } else {
                for (int64_t i = 0; i < -e10 && b.n > 0; i++)
                        if (big_divmod(&b, 10) != 0)
                                inexact = true;
                if (!big_small(&b, &v))
                        return ck_error_make(err, 0, "quantity is too large");
                if (inexact)
                        v++;
        }
        q->milli = v;
        /* BinarySI below 1 is written in DecimalSI (ParseQuantity). */
        if (q->format == QUANTITY_BINARY_SI && (v < 1000 || (v == 1000 && inexact)))
                q->format = QUANTITY_DECIMAL_SI;
        return 0;
}

bool quantity_value(const struct quantity *q, bool milli, int64_t *out)
{
        u128 v = milli ? q->milli : (q->milli + 999) / 1000;
        if (v > (u128)INT64_MAX)
                return false;
        *out = q->negative ? -(int64_t)v : (int64_t)v;
        return true;
}

int quantity_cmp(const struct quantity *a, const struct quantity *b)
{
        if (a->negative != b->negative)
                return a->negative ? -1 : 1;
        int c = a->milli < b->milli ? -1 : a->milli > b->milli ? 1 : 0;
        return a->negative ? -c : c;
}

static char *u128_text(u128 v)
{
        char buf[48];
        size_t i = sizeof(buf) - 1;
        buf[i] = '\0';
        do {
                buf[--i] = (char)('0' + (int)(v % 10));
                v /= 10;
        } while (v);
        return xstrdup(buf + i);
}

char *quantity_string(const struct quantity *q)
{
        if (q->milli == 0)
                return xstrdup("0");
        const char *sign = q->negative ? "-" : "";
        enum quantity_format format = q->format;
        if (format == QUANTITY_BINARY_SI && (q->milli < 1024000 || q->milli % 1000 != 0))
                format = QUANTITY_DECIMAL_SI;
        if (format == QUANTITY_BINARY_SI) {
                static const char *const bin[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
                u128 v = q->milli / 1000;
                int e = 0;
                while (v % 1024 == 0) {
                        v /= 1024;
                        e++;
                }
                cleanup_free char *n = u128_text(v);
                return xasprintf("%s%s%s", sign, n, e < 7 ? bin[e] : "");
        }
        /* Groups of three zeros move into the exponent. */
        u128 v = q->milli;
        int e = -3;
        while (v % 1000 == 0) {
                v /= 1000;
                e += 3;
        }
        cleanup_free char *n = u128_text(v);
        if (format == QUANTITY_DECIMAL_EXPONENT) {
                if (e == 0)
                        return xasprintf("%s%s", sign, n);
                return xasprintf("%s%se%d", sign, n, e);
        }
        static const char *const dec[] = {"m", "", "k", "M", "G", "T", "P", "E"};
        int idx = (e + 3) / 3;
        return xasprintf("%s%s%s", sign, n, idx < (int)ARRAY_SIZE(dec) ? dec[idx] : "");
}

int api_parse_quantity(const char *s, bool milli, int64_t *out, ck_error_t *err)
{
        struct quantity q;
        if (quantity_parse(s, &q, err) < 0)
                return ck_error_wrap(err, "invalid quantity \"%s\"", s);
        if (!quantity_value(&q, milli, out))
                return ck_error_make(err, 0, "invalid quantity \"%s\": quantity is too large", s);
        return 0;
}

char *api_format_quantity(int64_t value, bool milli)
{
        struct quantity q = {.negative = value < 0};
        unsigned __int128 mag = value < 0 ? -(unsigned __int128)value : (unsigned __int128)value;
        q.milli = milli ? mag : mag * 1000;
        q.format = milli ? QUANTITY_DECIMAL_SI : QUANTITY_BINARY_SI;
        return quantity_string(&q);
}
