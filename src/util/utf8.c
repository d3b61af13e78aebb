/* SPDX-License-Identifier: Apache-2.0 */
#include "util/utf8.h"

#include <stdint.h>

bool utf8_valid(const char *p, size_t n)
{
        const uint8_t *s = (const uint8_t *)p, *end = s + n;
        while (s < end) {
                uint8_t c = *s;
                if (c < 0x80) {
                        s++;
                        continue;
                }
                size_t len;
                uint8_t lo = 0x80, hi = 0xBF; /* the second byte's range */
                if (c >= 0xC2 && c <= 0xDF) {
                        len = 2;
                } else if (c >= 0xE0 && c <= 0xEF) {
                        len = 3;
                        if (c == 0xE0)
                                lo = 0xA0; /* no overlong form */
                        else if (c == 0xED)
                                hi = 0x9F; /* no surrogate */
                } else if (c >= 0xF0 && c <= 0xF4) {
                        len = 4;
                        if (c == 0xF0)
                                lo = 0x90; /* no overlong form */
                        else if (c == 0xF4)
                                hi = 0x8F; /* nothing above U+10FFFF */
                } else {
                        return false; /* a continuation byte, C0, C1, F5..FF */
                }
                if ((size_t)(end - s) < len || s[1] < lo || s[1] > hi)
                        return false;
                for (size_t i = 2; i < len; i++)
                        if (s[i] < 0x80 || s[i] > 0xBF)
                                return false;
                s += len;
        }
        return true;
}
