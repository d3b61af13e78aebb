/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Go's strconv.Quote / %q for byte strings, so that messages that upstream
 * formats with %q read the same here: "..." with \a \b \f \n \r \t \v \" \\
 * escaped and other control bytes as \xNN (bytes >= 0x80 are kept as they are).
 */
#ifndef CK_UTIL_STRQUOTE_H
#define CK_UTIL_STRQUOTE_H

#include <stddef.h>

/* Returns a new string: the n bytes at p, quoted. */
char *str_go_quote(const char *p, size_t n);

#endif
