/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one error convention of ckubelet.
 *
 * Every fallible function returns a negative value on failure and fills
 * `*err` with a new error (never both success and an error).  Each layer that
 * passes an error up wraps it with its own context, so that what a user
 * finally reads names the object, the step and the cause:
 *
 *   pod default/web: create sandbox: CRI RunPodSandbox: rpc error 2: ...
 *
 * Usage:
 *   if (open_thing (path, err) < 0)
 *           return ck_error_wrap (err, "open manifest `%s`", path);
 *
 * Errors are plain heap objects owned by whoever holds the pointer; release
 * with ck_error_release() (or the cleanup_error attribute).  Thread-safe:
 * an error belongs to one thread at a time.
 */
#ifndef CK_UTIL_ERROR_H
#define CK_UTIL_ERROR_H

#include <errno.h>
#include <stdarg.h>

struct ck_error_s {
        int status; /* errno value, or 0 when the cause is not a syscall */
        int code;   /* module specific code (e.g. gRPC status), 0 if none */
        char *msg;  /* full message, innermost cause last */
};
typedef struct ck_error_s *ck_error_t;

/* Sets *err to a new error built from fmt (when err is not NULL) and returns -1.
 * If `status` is non-zero, ": strerror(status)" is appended. */
int ck_error_make(ck_error_t *err, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Like ck_error_make, with a module code (see ck_error_s.code). */
int ck_error_make_code(ck_error_t *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefixes the existing *err with "context: " and returns -1.  If *err is NULL
 * (a callee forgot to fill it) an "unknown error" is created. */
int ck_error_wrap(ck_error_t *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Frees *err (if any) and sets it to NULL. */
void ck_error_release(ck_error_t *err);

/* The message of an error, or "(no error)". Borrowed. */
const char *ck_error_msg(ck_error_t err);

#define cleanup_error __attribute__((cleanup(ck_error_release)))

#endif
