/* SPDX-License-Identifier: Apache-2.0 */
#include "util/goduration.h"

#include <inttypes.h>
#include <stdio.h>

void go_duration_format_ms(int64_t ms, char *buf, size_t size)
{
        if (ms == 0) {
                snprintf(buf, size, "0s");
                return;
        }
        uint64_t u = ms < 0 ? (uint64_t)0 - (uint64_t)ms : (uint64_t)ms;
        const char *sign = ms < 0 ? "-" : "";
        if (u < 1000) {
                snprintf(buf, size, "%s%" PRIu64 "ms", sign, u);
                return;
        }
        uint64_t h = u / 3600000, m = (u / 60000) % 60, s = (u / 1000) % 60, frac = u % 1000;
        char secs[32];
        if (frac == 0) {
                snprintf(secs, sizeof(secs), "%" PRIu64 "s", s);
        } else {
                char f[8];
                snprintf(f, sizeof(f), "%03" PRIu64, frac);
                for (int i = 2; i > 0 && f[i] == '0'; i--)
                        f[i] = '\0';
                snprintf(secs, sizeof(secs), "%" PRIu64 ".%ss", s, f);
        }
        if (h > 0)
                snprintf(buf, size, "%s%" PRIu64 "h%" PRIu64 "m%s", sign, h, m, secs);
        else if (m > 0)
                snprintf(buf, size, "%s%" PRIu64 "m%s", sign, m, secs);
        else
                snprintf(buf, size, "%s%s", sign, secs);
}
