/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Integer quantities printed the way the apiserver stores them (upstream
 * resource.Quantity's canonical form), so that a status built here compares
 * equal to the one read back.
 */
#include "node/node_internal.h"

#include "util/xalloc.h"

#include <inttypes.h>

/* DecimalSI of an integer: the largest power of 1000 that divides it. */
static char *decimal_si(int64_t v, int extra_exp3)
{
        static const char *const suffix[] = {"", "k", "M", "G", "T", "P", "E"};
        int e = extra_exp3;
        while (v != 0 && v % 1000 == 0 && e < 6) {
                v /= 1000;
                e++;
        }
        return xasprintf("%" PRId64 "%s", v, suffix[e]);
}

char *node_quantity_binary(int64_t v)
{
        static const char *const suffix[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
        /* upstream: small values are printed in DecimalSI to avoid confusion */
        if (v > -1024 && v < 1024)
                return decimal_si(v, 0);
        int e = 0;
        while (v % 1024 == 0 && e < 6) {
                v /= 1024;
                e++;
        }
        return xasprintf("%" PRId64 "%s", v, suffix[e]);
}

char *node_quantity_decimal_milli(int64_t milli)
{
        if (milli % 1000 == 0)
                return decimal_si(milli / 1000, 0);
        return xasprintf("%" PRId64 "m", milli);
}
