/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Errors from the apiserver's answers (upstream apimachinery's
 * errors.FromObject and the rest client's "an error on the server"
 * fallback), and the query string helper.
 */
#include "client/rest.h"
#include "client/rest_internal.h"
#include "http/http_client.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

static const char *http_phrase(long code)
{
        static const struct {
                long code;
                const char *phrase;
        } phrases[] = {
            {400, "Bad Request"},
            {401, "Unauthorized"},
            {403, "Forbidden"},
            {404, "Not Found"},
            {405, "Method Not Allowed"},
            {406, "Not Acceptable"},
            {409, "Conflict"},
            {410, "Gone"},
            {413, "Request Entity Too Large"},
            {415, "Unsupported Media Type"},
            {422, "Unprocessable Entity"},
            {429, "Too Many Requests"},
            {500, "Internal Server Error"},
            {502, "Bad Gateway"},
            {503, "Service Unavailable"},
            {504, "Gateway Timeout"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(phrases); i++)
                if (phrases[i].code == code)
                        return phrases[i].phrase;
        return code >= 500 ? "Server Error" : "Error";
}

static bool is_http_code(long code)
{
        return code >= 100 && code <= 599;
}

int rest_status_error(ck_error_t *err, const char *what, long http_code, const json_t *status)
{
        long code = http_code;
        const char *reason = NULL, *message = NULL;
        if (json_is_object(status)) {
                json_int_t c = json_integer_value(json_object_get(status, "code"));
                if (is_http_code((long)c))
                        code = (long)c;
                reason = json_string_value(json_object_get(status, "reason"));
                message = json_string_value(json_object_get(status, "message"));
        }
        if (!is_http_code(code))
                code = 500;
        if (reason == NULL || reason[0] == '\0')
                reason = http_phrase(code);
        if (message == NULL || message[0] == '\0')
                return ck_error_make_code(err, (int)code, "%s: %ld %s", what, code, reason);
        return ck_error_make_code(err, (int)code, "%s: %ld %s: %s", what, code, reason, message);
}

int rest_answer_error(ck_error_t *err, const char *what, long http_code, const char *body,
                      size_t len)
{
        cleanup_json json_t *j = len > 0 ? json_loadb(body, len, 0, NULL) : NULL;
        const char *kind = json_string_value(json_object_get(j, "kind"));
        if (kind != NULL && strcmp(kind, "Status") == 0)
                return rest_status_error(err, what, http_code, j);
        /* Not a Status (a proxy, an old server): quote the start of the body. */
        char excerpt[201];
        size_t n = 0;
        for (size_t i = 0; i < len && n < sizeof(excerpt) - 1; i++)
                excerpt[n++] = (body[i] >= 0x20 && body[i] < 0x7f) ? body[i] : ' ';
        while (n > 0 && excerpt[n - 1] == ' ')
                n--;
        excerpt[n] = '\0';
        long code = is_http_code(http_code) ? http_code : 500;
        if (n == 0)
                return ck_error_make_code(err, (int)code, "%s: %ld %s", what, code,
                                          http_phrase(code));
        return ck_error_make_code(err, (int)code, "%s: %ld %s: %s", what, code, http_phrase(code),
                                  excerpt);
}

void rest_query_add(char **query, const char *key, const char *value)
{
        cleanup_free char *esc = http_escape(value);
        char *q = (*query && **query) ? xasprintf("%s&%s=%s", *query, key, esc)
                                      : xasprintf("%s=%s", key, esc);
        free(*query);
        *query = q;
}
