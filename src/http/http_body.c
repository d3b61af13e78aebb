/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pure parts of a request past its head: the path (percent-decoding
 * and Go's ServeMux path cleaning) and the chunked transfer coding
 * (RFC 9112 7.1).  No I/O; fuzzed by test/fuzz/fuzz_http_body.c.
 */
#include "http/http1.h"
#include "util/xalloc.h"

#include <stdlib.h>

#include <string.h>

enum {
        CHUNK_SIZE = 0, /* hex digits of the chunk size */
        CHUNK_SIZE_WS,  /* whitespace after them: before ';' or the CR */
        CHUNK_EXT,      /* ";ext" up to the CR */
        CHUNK_SIZE_LF,  /* the CR seen, LF next */
        CHUNK_DATA,
        CHUNK_DATA_CR, /* after the data: CRLF */
        CHUNK_DATA_LF,
        CHUNK_TRAILER, /* trailer lines, up to an empty one */
        CHUNK_TRAILER_LF,
        CHUNK_DONE,
};

#define CHUNK_LINE_MAX 4096 /* size line or trailer line (Go: 4096) */

static int hexval(unsigned char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

int http_chunked_decode(struct http_chunked *st, const char *in, size_t in_len, char *out,
                        size_t out_cap, size_t *used, size_t *made)
{
        size_t i = 0, o = 0;
        int rc = 0;
        while (rc == 0 && st->state != CHUNK_DONE) {
                if (st->state == CHUNK_DATA) {
                        if (st->left == 0) {
                                st->state = CHUNK_DATA_CR;
                                continue;
                        }
                        size_t n = in_len - i;
                        if (n > out_cap - o)
                                n = out_cap - o;
                        if (n > st->left)
                                n = (size_t)st->left;
                        if (n == 0)
                                break; /* more input or more room */
                        memcpy(out + o, in + i, n);
                        i += n;
                        o += n;
                        st->left -= n;
                        continue;
                }
                if (i == in_len)
                        break;
                unsigned char c = (unsigned char)in[i++];
                if (st->state != CHUNK_DATA_CR && st->state != CHUNK_DATA_LF &&
                    ++st->line_len > CHUNK_LINE_MAX) {
                        rc = -1;
                        break;
                }
                switch (st->state) {
                case CHUNK_SIZE: {
                        int h = hexval(c);
                        if (h >= 0) {
                                if (st->left > (UINT64_MAX >> 4)) {
                                        rc = -1;
                                        break;
                                }
                                st->left = st->left * 16 + (uint64_t)h;
                                st->digits++;
                        } else if (st->digits == 0) {
                                rc = -1;
                        } else if (c == ';') {
                                st->state = CHUNK_EXT;
                        } else if (c == ' ' || c == '\t') {
                                st->state = CHUNK_SIZE_WS;
                        } else if (c == '\r') {
                                st->state = CHUNK_SIZE_LF;
                        } else {
                                rc = -1; /* a bare LF too, see CHUNK_SIZE_LF */
                        }
                        break;
                }
                case CHUNK_SIZE_WS: /* "5 x" is no size, "5 ;x" and "5 \r\n" are */
                        if (c == ';')
                                st->state = CHUNK_EXT;
                        else if (c == '\r')
                                st->state = CHUNK_SIZE_LF;
                        else if (c != ' ' && c != '\t')
                                rc = -1;
                        break;
                case CHUNK_EXT:
                        if (c == '\r')
                                st->state = CHUNK_SIZE_LF;
                        else if (c < 0x20 && c != '\t')
                                rc = -1;
                        break;
                case CHUNK_SIZE_LF:
                        /* A size line ends in CRLF: no bare LF, no CR inside,
                         * as Go's chunked reader since CVE-2025-22871 (a
                         * proxy that reads such a line otherwise than we do
                         * could smuggle a request in the body). */
                        if (c != '\n') {
                                rc = -1;
                                break;
                        }
                        st->line_len = 0;
                        st->digits = 0;
                        st->state = st->left == 0 ? CHUNK_TRAILER : CHUNK_DATA;
                        break;
                case CHUNK_DATA_CR:
                        if (c != '\r') {
                                rc = -1;
                                break;
                        }
                        st->state = CHUNK_DATA_LF;
                        break;
                case CHUNK_DATA_LF:
                        if (c != '\n') {
                                rc = -1;
                                break;
                        }
                        st->line_len = 0;
                        st->state = CHUNK_SIZE;
                        break;
                case CHUNK_TRAILER:
                        if (c == '\r') {
                                st->state = CHUNK_TRAILER_LF;
                        } else if (c == '\n') {
                                if (st->line_len == 1)
                                        st->state = CHUNK_DONE;
                                else
                                        st->line_len = 0;
                        } else if (c < 0x20 && c != '\t') {
                                rc = -1;
                        }
                        break;
                case CHUNK_TRAILER_LF:
                        if (c != '\n') {
                                rc = -1;
                                break;
                        }
                        if (st->line_len == 2) { /* the empty line: the end */
                                st->state = CHUNK_DONE;
                        } else {
                                st->line_len = 0;
                                st->state = CHUNK_TRAILER;
                        }
                        break;
                }
        }
        *used = i;
        *made = o;
        if (rc < 0)
                return -1;
        return st->state == CHUNK_DONE ? 1 : 0;
}

char *http_path_unescape(const char *raw, size_t len)
{
        char *out = xmalloc(len + 1);
        size_t o = 0;
        for (size_t i = 0; i < len; i++) {
                if (raw[i] != '%') {
                        out[o++] = raw[i];
                        continue;
                }
                int hi = i + 1 < len ? hexval((unsigned char)raw[i + 1]) : -1;
                int lo = i + 2 < len ? hexval((unsigned char)raw[i + 2]) : -1;
                if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) { /* bad escape, or a NUL */
                        free(out);
                        return NULL;
                }
                out[o++] = (char)(hi * 16 + lo);
                i += 2;
        }
        out[o] = '\0';
        return out;
}

char *http_path_clean(const char *p)
{
        size_t n = strlen(p);
        /* the result is never longer than "/" + p + "/" */
        char *out = xmalloc(n + 3);
        size_t o = 0;
        out[o++] = '/';
        size_t i = 0;
        while (i < n) {
                while (i < n && p[i] == '/')
                        i++;
                size_t start = i;
                while (i < n && p[i] != '/')
                        i++;
                size_t len = i - start;
                if (len == 0 || (len == 1 && p[start] == '.'))
                        continue;
                if (len == 2 && p[start] == '.' && p[start + 1] == '.') {
                        /* back to the previous '/', never above the root */
                        if (o > 1) {
                                o--; /* the '/' after the last element */
                                while (o > 1 && out[o - 1] != '/')
                                        o--;
                        }
                        continue;
                }
                memcpy(out + o, p + start, len);
                o += len;
                out[o++] = '/';
        }
        if (o > 1)
                o--; /* no trailing '/' from the loop */
        /* Go's ServeMux keeps a trailing slash the request had */
        if (n > 0 && p[n - 1] == '/' && o > 1)
                out[o++] = '/';
        out[o] = '\0';
        return out;
}
