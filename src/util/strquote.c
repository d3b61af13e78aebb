/* SPDX-License-Identifier: Apache-2.0 */
#include "util/strquote.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <string.h>

static const char *escape_of(unsigned char c)
{
        switch (c) {
        case '\a':
                return "\\a";
        case '\b':
                return "\\b";
        case '\f':
                return "\\f";
        case '\n':
                return "\\n";
        case '\r':
                return "\\r";
        case '\t':
                return "\\t";
        case '\v':
                return "\\v";
        case '"':
                return "\\\"";
        case '\\':
                return "\\\\";
        default:
                return NULL;
        }
}

char *str_go_quote(const char *p, size_t n)
{
        size_t cap = n * 4 + 3, o = 0;
        char *out = xmalloc(cap);
        out[o++] = '"';
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)p[i];
                const char *esc = escape_of(c);
                if (esc != NULL) {
                        memcpy(out + o, esc, 2);
                        o += 2;
                } else if (c < 0x20 || c == 0x7f) {
                        o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
                } else {
                        out[o++] = (char)c;
                }
        }
        out[o++] = '"';
        out[o] = '\0';
        return out;
}
