/* SPDX-License-Identifier: Apache-2.0 */
#include "util/gohash.h"
#include "util/xalloc.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

uint32_t go_fnv32a(uint32_t h, const void *p, size_t n)
{
        const unsigned char *b = p;
        for (size_t i = 0; i < n; i++) {
                h ^= b[i];
                h *= 16777619u;
        }
        return h;
}

uint32_t go_deep_hash_bytes(const void *p, size_t n)
{
        static const char head[] = "([]uint8)[";
        uint32_t h = go_fnv32a(GO_FNV32A_INIT, head, sizeof(head) - 1);
        const unsigned char *b = p;
        for (size_t i = 0; i < n; i++) {
                char num[8];
                int len = snprintf(num, sizeof(num), i ? " %u" : "%u", b[i]);
                h = go_fnv32a(h, num, (size_t)len);
        }
        return go_fnv32a(h, "]", 1);
}

uint32_t go_deep_hash_string(const char *s)
{
        static const char head[] = "(string)";
        uint32_t h = go_fnv32a(GO_FNV32A_INIT, head, sizeof(head) - 1);
        return go_fnv32a(h, s, strlen(s));
}

/* The length of the valid UTF-8 sequence at p (at most n bytes), or 0 (Go's
 * utf8.DecodeRune rules: no overlong forms, no surrogates, <= U+10FFFF). */
static size_t utf8_valid(const unsigned char *p, size_t n, uint32_t *rune)
{
        unsigned char c = p[0];
        size_t len;
        uint32_t r, min;
        if (c < 0x80) {
                *rune = c;
                return 1;
        } else if ((c & 0xe0) == 0xc0) {
                len = 2, r = c & 0x1f, min = 0x80;
        } else if ((c & 0xf0) == 0xe0) {
                len = 3, r = c & 0x0f, min = 0x800;
        } else if ((c & 0xf8) == 0xf0) {
                len = 4, r = c & 0x07, min = 0x10000;
        } else {
                return 0;
        }
        if (len > n)
                return 0;
        for (size_t i = 1; i < len; i++) {
                if ((p[i] & 0xc0) != 0x80)
                        return 0;
                r = (r << 6) | (p[i] & 0x3f);
        }
        if (r < min || r > 0x10ffff || (r >= 0xd800 && r <= 0xdfff))
                return 0;
        *rune = r;
        return len;
}

char *go_json_string(const char *s)
{
        static const char hex[] = "0123456789abcdef";
        size_t n = strlen(s);
        /* worst case: every byte becomes \ufffd (6 bytes) */
        char *out = xmalloc(n * 6 + 3);
        size_t o = 0;
        out[o++] = '"';
        const unsigned char *p = (const unsigned char *)s;
        for (size_t i = 0; i < n;) {
                unsigned char c = p[i];
                if (c < 0x80) {
                        bool plain =
                            c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&';
                        if (plain) {
                                out[o++] = (char)c;
                        } else if (c == '"' || c == '\\') {
                                out[o++] = '\\';
                                out[o++] = (char)c;
                        } else if (c == '\n' || c == '\r' || c == '\t') {
                                out[o++] = '\\';
                                out[o++] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
                        } else {
                                memcpy(out + o, "\\u00", 4);
                                o += 4;
                                out[o++] = hex[c >> 4];
                                out[o++] = hex[c & 0xf];
                        }
                        i++;
                        continue;
                }
                uint32_t r;
                size_t len = utf8_valid(p + i, n - i, &r);
                if (len == 0) {
                        memcpy(out + o, "\\ufffd", 6);
                        o += 6;
                        i++;
                } else if (r == 0x2028 || r == 0x2029) {
                        memcpy(out + o, r == 0x2028 ? "\\u2028" : "\\u2029", 6);
                        o += 6;
                        i += len;
                } else {
                        memcpy(out + o, p + i, len);
                        o += len;
                        i += len;
                }
        }
        out[o++] = '"';
        out[o] = '\0';
        return out;
}
