/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: what the HTTP client reads from a server, on arbitrary
 * bytes: the response head parser and its header lookup, and a Location
 * resolved against a URL (the probes follow redirects).  Checks the
 * parser's own invariants besides memory safety. */
#include "http/http1.h"
#include "http/http_client.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_head(const char *buf, size_t size)
{
        struct http_response r;
        if (http_parse_response(buf, size, &r) != HTTP_PARSE_OK)
                return;
        if (r.head_len == 0 || r.head_len > size || r.status < 100 || r.status > 999)
                abort();
        if (r.version_minor != 0 && r.version_minor != 1)
                abort();
        if (r.reason_len > 0 && (r.reason < buf || r.reason + r.reason_len > buf + r.head_len))
                abort();
        struct http_response again;
        if (http_parse_response(buf, r.head_len, &again) != HTTP_PARSE_OK ||
            again.head_len != r.head_len || again.status != r.status)
                abort();
        static const char *const names[] = {"Location", "content-encoding", "CONNECTION", "x"};
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                const char *v;
                size_t n, pos = 0, prev = 0;
                while (http_response_header_next(buf, &r, names[i], &pos, &v, &n)) {
                        if (pos <= prev || pos > r.head_len)
                                abort();
                        if (v < buf || v + n > buf + r.head_len || memchr(v, '\n', n) != NULL)
                                abort();
                        prev = pos;
                }
        }
}

/* The input up to its first NUL as a Location, against a fixed URL and
 * as a URL of its own. */
static void check_url(const char *s)
{
        char *r = http_url_resolve("http://10.0.0.1:8080/a/b?q=1", s);
        if (r == NULL)
                abort(); /* the base always parses */
        struct http_url u;
        if (http_url_parse(r, &u, NULL) == 0) {
                if (u.target[0] != '/' || u.host[0] == '\0')
                        abort();
                http_url_clear(&u);
        }
        free(r);
        if (http_url_parse(s, &u, NULL) == 0) {
                char *hp = http_join_host_port(u.host, u.port);
                free(hp);
                http_url_clear(&u);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        /* an exact-size heap copy, so that ASan sees any read past the end */
        char *buf = malloc(size + 1);
        if (buf == NULL)
                return 0;
        memcpy(buf, data, size);
        check_head(buf, size);
        buf[size] = '\0';
        check_url(buf);
        free(buf);
        return 0;
}
