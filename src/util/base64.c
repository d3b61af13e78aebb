/* SPDX-License-Identifier: Apache-2.0 */
/* Standard-alphabet base64 decoding (see base64.h). */
#include "util/base64.h"

#include "util/xalloc.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int b64_value(unsigned char c)
{
        if (c >= 'A' && c <= 'Z')
                return c - 'A';
        if (c >= 'a' && c <= 'z')
                return c - 'a' + 26;
        if (c >= '0' && c <= '9')
                return c - '0' + 52;
        if (c == '+')
                return 62;
        if (c == '/')
                return 63;
        return -1;
}

static bool skipped(unsigned char c, unsigned flags)
{
        if (c == '\r' || c == '\n')
                return true;
        return (flags & BASE64_SKIP_SPACE) != 0 &&
               (c == ' ' || c == '\t' || c == '\v' || c == '\f');
}

/* Appends the first `bytes` bytes of the 24-bit group acc to buf. */
static size_t emit(char *buf, size_t n, uint32_t acc, size_t bytes)
{
        buf[n++] = (char)(acc >> 16);
        if (bytes > 1)
                buf[n++] = (char)(acc >> 8);
        if (bytes > 2)
                buf[n++] = (char)acc;
        return n;
}

static int fail(char *buf, size_t cap, ck_error_t *err)
{
        explicit_bzero(buf, cap); /* the data may be a secret */
        free(buf);
        return ck_error_make(err, 0, "illegal base64 data");
}

int base64_decode(const char *in, size_t len, unsigned flags, char **out, size_t *out_len,
                  ck_error_t *err)
{
        bool raw = (flags & BASE64_RAW) != 0;
        size_t cap = len / 4 * 3 + 3; /* full quanta, a raw tail of 2 bytes, the NUL */
        char *buf = xmalloc(cap);
        size_t n = 0, quad = 0, pad = 0;
        bool ended = false; /* a padded quantum was read: only skipped bytes may follow */
        uint32_t acc = 0;
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char)in[i];
                if (skipped(c, flags))
                        continue;
                if (ended)
                        return fail(buf, cap, err);
                if (c == '=') {
                        /* "xx==" or "xxx=" */
                        if (raw || quad < 2)
                                return fail(buf, cap, err);
                        pad++;
                        acc <<= 6;
                } else {
                        int v = b64_value(c);
                        if (v < 0 || pad > 0)
                                return fail(buf, cap, err);
                        acc = acc << 6 | (uint32_t)v;
                }
                if (++quad == 4) {
                        n = emit(buf, n, acc, 3 - pad);
                        ended = pad > 0;
                        quad = 0;
                        acc = 0;
                }
        }
        if (quad != 0) {
                /* StdEncoding needs whole quanta; RawStdEncoding a tail of 2 or 3 */
                if (!raw || quad == 1)
                        return fail(buf, cap, err);
                n = emit(buf, n, acc << 6 * (4 - quad), quad - 1);
        }
        buf[n] = '\0';
        *out = buf;
        *out_len = n;
        return 0;
}
