/* SPDX-License-Identifier: Apache-2.0 */
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(void)
{
        fputs("ckubelet: out of memory\n", stderr);
        abort();
}

void *xmalloc(size_t n)
{
        void *p = malloc(n ? n : 1);
        if (p == NULL)
                oom();
        return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
        void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
        if (p == NULL)
                oom();
        return p;
}

void *xrealloc(void *p, size_t n)
{
        p = realloc(p, n ? n : 1);
        if (p == NULL)
                oom();
        return p;
}

char *xstrdup(const char *s)
{
        if (s == NULL)
                return NULL;
        char *r = strdup(s);
        if (r == NULL)
                oom();
        return r;
}

char *xstrndup(const char *s, size_t n)
{
        char *r = strndup(s, n);
        if (r == NULL)
                oom();
        return r;
}

char *xvasprintf(const char *fmt, va_list ap)
{
        char *r = NULL;
        if (vasprintf(&r, fmt, ap) < 0)
                oom();
        return r;
}

char *xasprintf(const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        char *r = xvasprintf(fmt, ap);
        va_end(ap);
        return r;
}
