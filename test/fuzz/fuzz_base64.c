/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzzes the base64 decoder (util/base64.h) in every mode and checks what Go
 * guarantees: a padded input decodes like the same input without its '=' in
 * the raw mode, skipping spaces is the same as removing them, and what a
 * plain encoder makes of the output decodes back to it.
 */
#include "util/base64.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* RFC 4648 encoding of n bytes at p, padded unless raw; a new string. */
static char *encode(const unsigned char *p, size_t n, bool raw, size_t *out_len)
{
        static const char alphabet[] =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        char *s = malloc((n + 2) / 3 * 4 + 1);
        if (s == NULL)
                abort();
        size_t o = 0;
        for (size_t i = 0; i < n; i += 3) {
                size_t k = n - i < 3 ? n - i : 3;
                uint32_t v = (uint32_t)p[i] << 16;
                if (k > 1)
                        v |= (uint32_t)p[i + 1] << 8;
                if (k > 2)
                        v |= p[i + 2];
                for (size_t j = 0; j < 4; j++) {
                        if (j <= k)
                                s[o++] = alphabet[v >> (18 - 6 * j) & 63];
                        else if (!raw)
                                s[o++] = '=';
                }
        }
        s[o] = '\0';
        *out_len = o;
        return s;
}

/* The input without the bytes for which drop() is true; a new buffer. */
static char *without(const uint8_t *data, size_t size, bool (*drop)(uint8_t), size_t *out_len)
{
        char *s = malloc(size + 1);
        if (s == NULL)
                abort();
        size_t n = 0;
        for (size_t i = 0; i < size; i++)
                if (!drop(data[i]))
                        s[n++] = (char)data[i];
        *out_len = n;
        return s;
}

static bool is_pad(uint8_t c)
{
        return c == '=';
}

static bool is_space(uint8_t c)
{
        return c == ' ' || c == '\t' || c == '\v' || c == '\f';
}

static bool same(int r1, const char *a, size_t na, int r2, const char *b, size_t nb)
{
        return r1 == r2 && (r1 < 0 || (na == nb && memcmp(a, b, na) == 0));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *in = (const char *)data;
        char *out[4] = {NULL};
        size_t n[4] = {0};
        int r[4];
        for (unsigned flags = 0; flags < 4; flags++) {
                ck_error_t err = NULL;
                r[flags] = base64_decode(in, size, flags, &out[flags], &n[flags], &err);
                if ((r[flags] < 0) != (err != NULL))
                        abort();
                ck_error_release(&err);
                if (r[flags] == 0 && (n[flags] > size / 4 * 3 + 2 || out[flags][n[flags]] != '\0'))
                        abort();
        }

        /* padded (StdEncoding) succeeds only if raw decoding of the input
         * without its '=' does, with the same bytes */
        for (unsigned space = 0; space <= BASE64_SKIP_SPACE; space += BASE64_SKIP_SPACE) {
                if (r[space] < 0)
                        continue;
                size_t len, m;
                char *bare = without(data, size, is_pad, &len), *dec = NULL;
                int rr = base64_decode(bare, len, BASE64_RAW | space, &dec, &m, NULL);
                if (!same(0, out[space], n[space], rr, dec, m))
                        abort();
                free(dec);
                free(bare);
        }

        /* BASE64_SKIP_SPACE is the same as removing those spaces first */
        size_t len;
        char *nospace = without(data, size, is_space, &len);
        for (unsigned raw = 0; raw <= BASE64_RAW; raw++) {
                char *dec = NULL;
                size_t m;
                int rr = base64_decode(nospace, len, raw, &dec, &m, NULL);
                if (!same(r[raw | BASE64_SKIP_SPACE], out[raw | BASE64_SKIP_SPACE],
                          n[raw | BASE64_SKIP_SPACE], rr, dec, m))
                        abort();
                free(dec);
        }
        free(nospace);

        /* an encoder's output of the decoded bytes decodes back to them */
        for (unsigned raw = 0; raw <= BASE64_RAW; raw++) {
                if (r[raw] < 0)
                        continue;
                size_t elen, m;
                char *enc = encode((const unsigned char *)out[raw], n[raw], raw, &elen), *dec;
                if (base64_decode(enc, elen, raw, &dec, &m, NULL) < 0 ||
                    !same(0, out[raw], n[raw], 0, dec, m))
                        abort();
                free(dec);
                free(enc);
        }
        for (int i = 0; i < 4; i++)
                free(out[i]);
        return 0;
}
