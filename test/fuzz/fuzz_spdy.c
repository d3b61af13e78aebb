/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzzes the SPDY/3.1 frame parser (streaming/spdy.h), what a client of
 * the streaming server sends: the input is a run of frames parsed in order
 * on one connection's decoder, as the server reads them.  Checks that a
 * parse takes no more than it was given, asks for more only beyond it, and
 * that parsed headers are lower-case names; a header block re-encoded and
 * parsed again on a fresh pair of codecs gives the same pairs.
 */
#include "streaming/spdy.h"

#include <stdlib.h>
#include <string.h>

static void check_round_trip(const struct spdy_headers *h)
{
        struct spdy_codec tx, rx;
        if (spdy_codec_init(&tx, NULL) < 0 || spdy_codec_init(&rx, NULL) < 0)
                abort();
        const char **names = calloc(h->n + 1, sizeof(char *));
        const char **values = calloc(h->n + 1, sizeof(char *));
        for (size_t i = 0; i < h->n; i++) {
                names[i] = h->v[i].name;
                values[i] = h->v[i].value; /* up to its first NUL */
        }
        struct spdy_buf b = {0};
        if (spdy_put_syn_reply(&tx, &b, 1, 0, names, values, h->n, NULL) < 0)
                abort();
        struct spdy_frame f;
        size_t need;
        if (spdy_parse(&rx, b.p, b.len, &f, &need, NULL) != (ssize_t)b.len || f.headers.n != h->n)
                abort();
        for (size_t i = 0; i < h->n; i++)
                if (strcmp(f.headers.v[i].name, names[i]) != 0 ||
                    strcmp(f.headers.v[i].value, values[i]) != 0)
                        abort();
        spdy_frame_clear(&f);
        spdy_buf_clear(&b);
        free(names);
        free(values);
        spdy_codec_clear(&tx);
        spdy_codec_clear(&rx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct spdy_codec c;
        if (spdy_codec_init(&c, NULL) < 0)
                abort();
        size_t off = 0;
        while (off < size) {
                struct spdy_frame f;
                size_t need = 0;
                ck_error_t err = NULL;
                ssize_t n = spdy_parse(&c, data + off, size - off, &f, &need, &err);
                if (n < 0) {
                        if (err == NULL)
                                abort();
                        ck_error_release(&err);
                        break;
                }
                if (n == 0) {
                        if (need <= size - off)
                                abort();
                        break;
                }
                if ((size_t)n > size - off)
                        abort();
                for (size_t i = 0; i < f.headers.n; i++)
                        for (const char *p = f.headers.v[i].name; *p; p++)
                                if (*p >= 'A' && *p <= 'Z')
                                        abort();
                if (f.headers.n > 0)
                        check_round_trip(&f.headers);
                spdy_frame_clear(&f);
                off += (size_t)n;
        }
        spdy_codec_clear(&c);
        return 0;
}
