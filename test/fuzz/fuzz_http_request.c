/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the read-only port's request-head parser on arbitrary
 * bytes.  Checks the parser's own invariants besides memory safety. */
#include "server/http_request.h"

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
