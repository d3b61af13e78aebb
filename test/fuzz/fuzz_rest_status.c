/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzzes the errors made of the apiserver's failed answers
 * (client/rest_status.c: rest_answer_error, rest_status_error, upstream
 * apimachinery's errors.FromObject and the rest client's fallback) and the
 * query escaping.  The input is
 *
 *   <HTTP status, 2 bytes big-endian> <body>
 *
 * Checks, beyond memory safety: the result is -1 with an error whose code
 * is an HTTP status (100..599, 500 for anything else) and whose message
 * starts with what was being done; a body that is no Status object is
 * quoted as printable ASCII only, at most 200 bytes of it; a Status's code,
 * when an HTTP status, wins over the answer's; rest_query_add leaves only
 * unreserved bytes and %XX escapes that decode back to the value.
 */
#include "client/rest.h"
#include "client/rest_internal.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WHAT "get pods"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool is_status(const char *body, size_t len, json_t **out)
{
        json_t *j = len > 0 ? json_loadb(body, len, 0, NULL) : NULL;
        const char *kind = json_string_value(json_object_get(j, "kind"));
        if (kind != NULL && strcmp(kind, "Status") == 0) {
                *out = j;
                return true;
        }
        json_decref(j);
        *out = NULL;
        return false;
}

static void check_answer(long http_code, const char *body, size_t len)
{
        ck_error_t err = NULL;
        int r = rest_answer_error(&err, WHAT, http_code, body, len);
        if (r != -1 || err == NULL)
                abort();
        const char *msg = ck_error_msg(err);
        if (err->code < 100 || err->code > 599 || strncmp(msg, WHAT ": ", strlen(WHAT ": ")) != 0)
                abort();
        cleanup_json json_t *status = NULL;
        if (is_status(body, len, &status)) {
                json_t *c = json_object_get(status, "code");
                json_int_t sc = json_integer_value(c);
                long want = sc >= 100 && sc <= 599                 ? (long)sc
                            : http_code >= 100 && http_code <= 599 ? http_code
                                                                   : 500;
                if (err->code != want)
                        abort();
                /* the same error from the object itself */
                ck_error_t again = NULL;
                if (rest_status_error(&again, WHAT, http_code, status) != -1 ||
                    strcmp(ck_error_msg(again), msg) != 0 || again->code != err->code)
                        abort();
                ck_error_release(&again);
        } else {
                long want = http_code >= 100 && http_code <= 599 ? http_code : 500;
                if (err->code != want)
                        abort();
                /* "<what>: <code> <phrase>[: <excerpt>]": the excerpt printable */
                const char *p = msg + strlen(WHAT ": ");
                char code[8];
                snprintf(code, sizeof(code), "%ld ", want);
                if (strncmp(p, code, strlen(code)) != 0)
                        abort();
                size_t n = strlen(msg);
                for (size_t i = 0; i < n; i++)
                        if ((unsigned char)msg[i] < 0x20 || (unsigned char)msg[i] >= 0x7f)
                                abort();
                if (n > strlen(WHAT ": 599 Request Entity Too Large: ") + 200 || msg[n - 1] == ' ')
                        abort();
        }
        ck_error_release(&err);
}

static int hex(char c)
{
        return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static void check_query(const char *value)
{
        char *q = NULL;
        rest_query_add(&q, "k", "v");
        rest_query_add(&q, "labelSelector", value);
        if (strncmp(q, "k=v&labelSelector=", 18) != 0)
                abort();
        cleanup_free char *back = xmalloc(strlen(q) + 1);
        size_t n = 0;
        for (const char *p = q + 18; *p; p++) {
                unsigned char c = (unsigned char)*p;
                if (c == '%') {
                        int h = hex(p[1]), l = h >= 0 ? hex(p[2]) : -1;
                        if (l < 0)
                                abort();
                        back[n++] = (char)(h * 16 + l);
                        p += 2;
                } else if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                           (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~') {
                        back[n++] = (char)c;
                } else {
                        abort();
                }
        }
        back[n] = '\0';
        if (strcmp(back, value) != 0)
                abort();
        free(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 2)
                return 0;
        long http_code = (long)data[0] << 8 | data[1];
        /* an exact-size copy: ASan sees a read past the end */
        cleanup_free char *body = xmalloc(size - 2 ? size - 2 : 1);
        memcpy(body, data + 2, size - 2);
        check_answer(http_code, body, size - 2);
        check_answer(-1, body, size - 2);
        cleanup_free char *value = xstrndup(body, size - 2);
        check_query(value);
        return 0;
}
