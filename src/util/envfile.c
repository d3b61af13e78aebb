/* SPDX-License-Identifier: Apache-2.0 */
#include "util/envfile.h"
#include "util/xalloc.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* bufio.Scanner's MaxScanTokenSize: a longer line is an error upstream */
#define ENVFILE_MAX_LINE (64 * 1024)

/* The next line of buf from *pos (without its '\n'); false at the end.
 * As bufio.Scanner: a last line without '\n' counts, a '\r' before '\n'
 * is dropped. */
static bool next_line(const char *buf, size_t len, size_t *pos, const char **line, size_t *n)
{
        if (*pos >= len)
                return false;
        const char *start = buf + *pos;
        const char *nl = memchr(start, '\n', len - *pos);
        size_t l = nl ? (size_t)(nl - start) : len - *pos;
        *pos += l + (nl ? 1 : 0);
        if (l > 0 && start[l - 1] == '\r')
                l--;
        *line = start;
        *n = l;
        return true;
}

static size_t skip_blanks(const char *s, size_t n, size_t i)
{
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
                i++;
        return i;
}

int envfile_lookup(const char *buf, size_t len, const char *key, char **value, ck_error_t *err)
{
        *value = NULL;
        size_t pos = 0, klen = strlen(key);
        int lineno = 0;
        const char *line;
        size_t n;
        while (next_line(buf, len, &pos, &line, &n)) {
                lineno++;
                if (n >= ENVFILE_MAX_LINE)
                        return ck_error_make(err, 0, "line %d is too long (%d bytes at most)",
                                             lineno, ENVFILE_MAX_LINE - 1);
                size_t i = skip_blanks(line, n, 0);
                if (i == n || line[i] == '#')
                        continue;
                const char *eq = memchr(line + i, '=', n - i);
                if (eq == NULL)
                        return ck_error_make(err, 0,
                                             "invalid environment variable format at line %d: "
                                             "missing '='",
                                             lineno);
                size_t name_end = (size_t)(eq - line), trimmed = name_end;
                while (trimmed > i && (line[trimmed - 1] == ' ' || line[trimmed - 1] == '\t'))
                        trimmed--;
                if (trimmed == i)
                        return ck_error_make(err, 0,
                                             "invalid environment variable format at line %d: "
                                             "empty variable name",
                                             lineno);
                if (trimmed != name_end)
                        return ck_error_make(err, 0,
                                             "invalid environment variable format at line %d: "
                                             "whitespace before '=' is not allowed",
                                             lineno);
                bool wanted = trimmed - i == klen && memcmp(line + i, key, klen) == 0;
                size_t v = name_end + 1;
                if (v < n && (line[v] == ' ' || line[v] == '\t')) {
                        /* KEY= 'x': bash assigns KEY the empty string */
                        if (wanted)
                                return 0;
                        continue;
                }
                if (v >= n || line[v] != '\'')
                        return ck_error_make(err, 0,
                                             "invalid environment variable format at line %d: "
                                             "value must be enclosed in single quotes",
                                             lineno);
                /* the value up to the closing quote, across lines */
                char *acc = xstrdup("");
                size_t acc_len = 0;
                const char *rest = line + v + 1;
                size_t rest_n = n - v - 1;
                int start_line = lineno;
                for (;;) {
                        const char *q = memchr(rest, '\'', rest_n);
                        size_t take = q ? (size_t)(q - rest) : rest_n;
                        acc = xrealloc(acc, acc_len + take + 2);
                        memcpy(acc + acc_len, rest, take);
                        acc_len += take;
                        acc[acc_len] = '\0';
                        if (q != NULL) {
                                size_t after = skip_blanks(q + 1, rest_n - take - 1, 0);
                                if (after < rest_n - take - 1 && q[1 + after] != '#') {
                                        free(acc);
                                        return ck_error_make(err, 0,
                                                             "invalid environment variable format "
                                                             "at line %d: unexpected content after "
                                                             "closing quote",
                                                             lineno);
                                }
                                break;
                        }
                        acc[acc_len++] = '\n';
                        acc[acc_len] = '\0';
                        if (!next_line(buf, len, &pos, &rest, &rest_n)) {
                                free(acc);
                                return ck_error_make(err, 0,
                                                     "invalid environment variable format "
                                                     "starting at line %d: unclosed single quote",
                                                     start_line);
                        }
                        lineno++;
                        if (rest_n >= ENVFILE_MAX_LINE) {
                                free(acc);
                                return ck_error_make(err, 0,
                                                     "line %d is too long (%d bytes at most)",
                                                     lineno, ENVFILE_MAX_LINE - 1);
                        }
                }
                if (wanted) {
                        if (memchr(acc, '\0', acc_len) != NULL) {
                                /* an environment cannot carry it */
                                free(acc);
                                return ck_error_make(err, 0,
                                                     "invalid environment variable value at "
                                                     "line %d: contains a NUL byte",
                                                     start_line);
                        }
                        if (acc_len > 0) {
                                *value = acc;
                                return 0;
                        }
                        free(acc);
                        return 0;
                }
                free(acc);
        }
        return 0;
}
