/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Scope-bound cleanup (the crun utils.h habit).  Hand a value off by setting
 * the local to NULL (or -1 for fds) before the scope ends.
 */
#ifndef CK_UTIL_CLEANUP_H
#define CK_UTIL_CLEANUP_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline void ck_cleanup_freep(void *p)
{
        void **pp = (void **)p;
        free(*pp);
        *pp = NULL;
}

static inline void ck_cleanup_closep(int *fd)
{
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
        }
        *fd = -1;
}

static inline void ck_cleanup_fclosep(FILE **f)
{
        if (*f)
                fclose(*f);
        *f = NULL;
}

#define cleanup_free __attribute__((cleanup(ck_cleanup_freep)))
#define cleanup_close __attribute__((cleanup(ck_cleanup_closep)))
#define cleanup_fclose __attribute__((cleanup(ck_cleanup_fclosep)))

/* jansson references */
#include <jansson.h>
static inline void ck_cleanup_jsonp(json_t **j)
{
        json_decref(*j);
        *j = NULL;
}
#define cleanup_json __attribute__((cleanup(ck_cleanup_jsonp)))

/* Retry a syscall while it fails with EINTR. */
#define TEMP_FAILURE_RETRY_INT(expr)                                                               \
        ({                                                                                         \
                long _r;                                                                           \
                do                                                                                 \
                        _r = (long)(expr);                                                         \
                while (_r == -1 && errno == EINTR);                                                \
                _r;                                                                                \
        })

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
