/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the read-only port's request-head parser on arbitrary
 * bytes.  Checks the parser's own invariants besides memory safety. */
#include "http/http1.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        /* an exact-size heap copy, so that ASan sees any read past the end */
        char *buf = malloc(size ? size : 1);
        if (buf == NULL)
                return 0;
        memcpy(buf, data, size);
        struct http_request req;
        enum http_parse_result r = http_parse_request(buf, size, &req);
        if (r == HTTP_PARSE_OK) {
                if (req.head_len == 0 || req.head_len > size)
                        abort();
                if (req.method_len == 0 || req.path_len == 0 || req.path[0] != '/')
                        abort();
                if (req.version_minor != 0 && req.version_minor != 1)
                        abort();
                /* the same head parses the same way on its own */
                struct http_request again;
                if (http_parse_request(buf, req.head_len, &again) != HTTP_PARSE_OK ||
                    again.head_len != req.head_len)
                        abort();
        }
        /* header lookup: values inside the head, trimmed, on one line; the
         * cursor moves forward and ends */
        if (r == HTTP_PARSE_OK) {
                static const char *const names[] = {"Host", "authorization", "CONNECTION",
                                                    "Content-Length", "x"};
                for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                        const char *v;
                        size_t n, pos = 0, prev = 0;
                        bool first = http_request_header(buf, &req, names[i], &v, &n);
                        size_t count = 0;
                        while (http_request_header_next(buf, &req, names[i], &pos, &v, &n)) {
                                if (pos <= prev || pos > req.head_len)
                                        abort();
                                if (v < buf || v + n > buf + req.head_len)
                                        abort();
                                if (n > 0 && (v[0] == ' ' || v[0] == '\t' || v[n - 1] == ' ' ||
                                              v[n - 1] == '\t'))
                                        abort();
                                if (memchr(v, '\n', n) != NULL || memchr(v, '\r', n) != NULL)
                                        abort();
                                prev = pos;
                                count++;
                        }
                        if (first != (count > 0) || count > req.n_headers)
                                abort();
                }
        }
        /* every prefix of a valid head is incomplete or (early) bad, never OK
         * with a different length */
        if (r == HTTP_PARSE_OK && req.head_len > 1) {
                struct http_request pre;
                if (http_parse_request(buf, req.head_len - 1, &pre) == HTTP_PARSE_OK)
                        abort();
        }
        free(buf);
        return 0;
}
