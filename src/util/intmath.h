/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Integer arithmetic on resource amounts (millicores, bytes) that cannot
 * wrap: a pod may ask for 5Ei of memory in each of two containers, and the
 * sum must stay "more than the node has", not become negative.
 */
#ifndef CK_UTIL_INTMATH_H
#define CK_UTIL_INTMATH_H

#include <stdint.h>

/* a + b, held at INT64_MAX / INT64_MIN instead of overflowing. */
static inline int64_t ck_add_sat(int64_t a, int64_t b)
{
        int64_t r;
        if (__builtin_add_overflow(a, b, &r))
                return b > 0 ? INT64_MAX : INT64_MIN;
        return r;
}

#endif
