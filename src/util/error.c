/* SPDX-License-Identifier: Apache-2.0 */
#include "util/error.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int error_new(ck_error_t *err, int status, int code, const char *fmt, va_list ap)
{
        if (err == NULL)
                return -1;
        char *msg = xvasprintf(fmt, ap);
        if (status != 0) {
                char *full = xasprintf("%s: %s", msg, strerror(status));
                free(msg);
                msg = full;
        }
        ck_error_release(err);
        *err = xcalloc(1, sizeof(**err));
        (*err)->status = status;
        (*err)->code = code;
        (*err)->msg = msg;
        return -1;
}

int ck_error_make(ck_error_t *err, int status, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        error_new(err, status, 0, fmt, ap);
        va_end(ap);
        return -1;
}

int ck_error_make_code(ck_error_t *err, int code, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        error_new(err, 0, code, fmt, ap);
        va_end(ap);
        return -1;
}

int ck_error_wrap(ck_error_t *err, const char *fmt, ...)
{
        if (err == NULL)
                return -1;
        va_list ap;
        va_start(ap, fmt);
        char *ctx = xvasprintf(fmt, ap);
        va_end(ap);
        if (*err == NULL) {
                ck_error_make(err, 0, "%s: unknown error", ctx);
                free(ctx);
                return -1;
        }
        char *full = xasprintf("%s: %s", ctx, (*err)->msg);
        free(ctx);
        free((*err)->msg);
        (*err)->msg = full;
        return -1;
}

void ck_error_release(ck_error_t *err)
{
        if (err == NULL || *err == NULL)
                return;
        free((*err)->msg);
        free(*err);
        *err = NULL;
}

const char *ck_error_msg(ck_error_t err)
{
        return err ? err->msg : "(no error)";
}
