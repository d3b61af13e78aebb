/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Allocation helpers that abort on exhaustion (as crun's xmalloc does): an
 * agent that cannot allocate a few bytes cannot report anything useful, and
 * checking every small allocation would hide the real error paths.
 */
#ifndef CK_UTIL_XALLOC_H
#define CK_UTIL_XALLOC_H

#include <stdarg.h>
#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s); /* NULL in, NULL out */
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

#endif
