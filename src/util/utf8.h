/* SPDX-License-Identifier: Apache-2.0 */
/*
 * UTF-8 validity as Go's utf8.ValidString judges it (what a Go gRPC server
 * requires of every protobuf string field): no overlong forms, no
 * surrogates (U+D800..U+DFFF), nothing above U+10FFFF, no truncated
 * sequence.
 */
#ifndef CK_UTIL_UTF8_H
#define CK_UTIL_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* Whether the n bytes at p are valid UTF-8.  Pure. */
bool utf8_valid(const char *p, size_t n);

#endif
