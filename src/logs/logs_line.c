/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CRI log record parser (upstream's parseCRILog):
 *
 *   <RFC3339Nano time> SP <stdout|stderr> SP <tag[:tag...]> SP <message>
 *
 * Only the first tag means something: "P" (partial) says that the message
 * continues in the next record; anything else ends the line.  Like
 * upstream, a partial record loses its trailing '\n' (there is none when the
 * runtime wrote it correctly, as the record was split mid-line).
 */
#include "logs/logs_internal.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* The field at *p up to the next ' ', which is consumed. */
static bool next_field(const char **p, const char *end, const char **field, size_t *len)
{
        const char *sp = memchr(*p, ' ', (size_t)(end - *p));
        if (sp == NULL)
                return false;
        *field = *p;
        *len = (size_t)(sp - *p);
        *p = sp + 1;
        return true;
}

int logs_parse_cri_line(const char *line, size_t len, struct logs_record *out, const char **why)
{
        const char *p = line, *end = line + len, *f;
        size_t n;

        if (!next_field(&p, end, &f, &n)) {
                *why = "timestamp is not found";
                return -1;
        }
        if (!go_time_parse(f, n, &out->time)) {
                *why = "unexpected timestamp format";
                return -1;
        }
        if (!next_field(&p, end, &f, &n)) {
                *why = "stream type is not found";
                return -1;
        }
        if (n == 6 && memcmp(f, "stdout", 6) == 0) {
                out->stream = LOGS_STREAM_STDOUT;
        } else if (n == 6 && memcmp(f, "stderr", 6) == 0) {
                out->stream = LOGS_STREAM_STDERR;
        } else {
                *why = "unexpected stream type";
                return -1;
        }
        if (!next_field(&p, end, &f, &n)) {
                *why = "log tag is not found";
                return -1;
        }
        const char *colon = memchr(f, ':', n);
        size_t first_tag = colon != NULL ? (size_t)(colon - f) : n;
        out->partial = first_tag == 1 && f[0] == 'P';
        if (out->partial && end > p && end[-1] == '\n')
                end--;
        out->msg = p;
        out->msg_len = (size_t)(end - p);
        return 0;
}

int logs_parse_docker_json_line(const char *line, size_t len, struct logs_record *out, char **owned,
                                const char **why)
{
        *owned = NULL;
        json_error_t jerr;
        json_t *j = json_loadb(line, len, JSON_DISABLE_EOF_CHECK, &jerr);
        if (!json_is_object(j)) {
                json_decref(j);
                *why = "not a JSON object";
                return -1;
        }
        const json_t *log = json_object_get(j, "log");
        const char *stream = json_string_value(json_object_get(j, "stream"));
        const char *time = json_string_value(json_object_get(j, "time"));
        int rc = -1;
        if (!json_is_string(log)) {
                *why = "no log string";
        } else if (stream == NULL ||
                   (strcmp(stream, "stdout") != 0 && strcmp(stream, "stderr") != 0)) {
                *why = "unexpected stream type";
        } else if (time == NULL || !go_time_parse(time, strlen(time), &out->time)) {
                *why = "unexpected timestamp format";
        } else {
                size_t n = json_string_length(log);
                char *msg = malloc(n + 1);
                if (msg == NULL)
                        abort();
                memcpy(msg, json_string_value(log), n);
                msg[n] = '\0';
                out->stream = stream[3] == 'o' ? LOGS_STREAM_STDOUT : LOGS_STREAM_STDERR;
                out->partial = n == 0 || msg[n - 1] != '\n';
                out->msg = msg;
                out->msg_len = n;
                *owned = msg;
                rc = 0;
        }
        json_decref(j);
        return rc;
}
