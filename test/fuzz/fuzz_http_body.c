/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: the pure parts of a request past its head
 * (http/http1.h) on arbitrary bytes.  The chunked decoder fed in
 * pieces of sizes taken from the input, into output room of such sizes,
 * must give what it gives all at once and never write past its room; the
 * path decoder must agree with a plain reference; the path cleaner's
 * result must be clean (rooted, no "//", no "." or ".." segment), kept by
 * a second cleaning, and a clean path must be left as it is.
 */
#include "http/http1.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ROOM 12

/* Decodes in[0..len) in one call with room for all of it. */
static int decode_whole(const char *in, size_t len, char *out, size_t *used, size_t *made)
{
        struct http_chunked st = {0};
        int rc = http_chunked_decode(&st, in, len, out, len, used, made);
        if (*used > len || *made > len || *made > *used)
                abort();
        if (rc < -1 || rc > 1 || (rc == 0 && *used != len))
                abort(); /* 0 only when it needs more input: all of it used */
        return rc;
}

/* The same in pieces: piece and room sizes from the input itself. */
static int decode_pieces(const char *in, size_t len, char *out, size_t *used, size_t *made)
{
        struct http_chunked st = {0};
        size_t i = 0, o = 0, step = 0;
        int rc = 0, stalled = 0;
        for (;;) {
                unsigned char k = len ? (unsigned char)in[(step * 7 + 3) % len] : 0;
                size_t piece = 1 + (len ? (unsigned char)in[step % len] % 17 : 0);
                size_t room = stalled >= 2 ? 1 : k % (MAX_ROOM + 1); /* 0 sometimes */
                step++;
                if (piece > len - i)
                        piece = len - i;
                /* exactly room bytes on the heap: ASan sees a write past them */
                char *buf = malloc(room ? room : 1);
                if (buf == NULL)
                        abort();
                size_t u = 0, m = 0;
                rc = http_chunked_decode(&st, in + i, piece, buf, room, &u, &m);
                if (u > piece || m > room || rc < -1 || rc > 1)
                        abort();
                if (rc == 0 && u < piece && m < room)
                        abort(); /* stopped with input and room left */
                memcpy(out + o, buf, m);
                free(buf);
                i += u;
                o += m;
                stalled = u == 0 && m == 0 ? stalled + 1 : 0;
                if (rc != 0 || i == len || stalled > 3)
                        break;
        }
        if (stalled > 3)
                abort();
        *used = i;
        *made = o;
        return rc;
}

static void check_chunked(const char *in, size_t len)
{
        char *whole = malloc(len ? len : 1), *pieces = malloc(len ? len : 1);
        if (whole == NULL || pieces == NULL)
                abort();
        size_t wu, wm, pu, pm;
        int wrc = decode_whole(in, len, whole, &wu, &wm);
        int prc = decode_pieces(in, len, pieces, &pu, &pm);
        if (wrc != prc || wu != pu || wm != pm || memcmp(whole, pieces, wm) != 0)
                abort();
        free(whole);
        free(pieces);
}

static int hex(unsigned char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        c |= 0x20;
        return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* A reference decoder: true with out/out_len, or false for an escape
 * that is bad or decodes to NUL. */
static bool unescape_ref(const char *in, size_t len, char *out, size_t *out_len)
{
        size_t o = 0;
        for (size_t i = 0; i < len; i++) {
                if (in[i] == '%') {
                        if (len - i < 3)
                                return false;
                        int hi = hex((unsigned char)in[i + 1]), lo = hex((unsigned char)in[i + 2]);
                        if (hi < 0 || lo < 0 || (hi | lo) == 0)
                                return false;
                        out[o++] = (char)(hi << 4 | lo);
                        i += 2;
                } else {
                        out[o++] = in[i];
                }
        }
        *out_len = o;
        return true;
}

/* Rooted, no empty, "." or ".." segment (a trailing '/' aside). */
static bool is_clean(const char *p)
{
        if (p[0] != '/')
                return false;
        for (const char *s = p + 1; *s != '\0';) {
                const char *e = strchrnul(s, '/');
                size_t n = (size_t)(e - s);
                if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
                        return false;
                if (*e == '\0')
                        break;
                s = e + 1;
        }
        return true;
}

static void check_clean(const char *p)
{
        char *c = http_path_clean(p);
        size_t n = strlen(p), cn = strlen(c);
        if (!is_clean(c) || strstr(c, "//") != NULL || strstr(c, "/./") != NULL ||
            strstr(c, "/../") != NULL || cn > n + 2)
                abort();
        if (cn >= 2 && strcmp(c + cn - 2, "/.") == 0)
                abort();
        if (cn >= 3 && strcmp(c + cn - 3, "/..") == 0)
                abort();
        /* a trailing slash is kept, and none is added */
        bool slash_in = n > 0 && p[n - 1] == '/';
        if (strcmp(c, "/") != 0 && (c[cn - 1] == '/') != slash_in)
                abort();
        /* idempotent, and the identity on a clean path */
        char *again = http_path_clean(c);
        if (strcmp(again, c) != 0)
                abort();
        if (is_clean(p) && strcmp(c, p) != 0)
                abort();
        free(again);
        free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        /* an exact-size heap copy, so that ASan sees any read past the end */
        char *in = malloc(size ? size : 1);
        if (in == NULL)
                return 0;
        memcpy(in, data, size);
        check_chunked(in, size);

        char *ref = malloc(size + 1);
        size_t ref_len = 0;
        bool ref_ok = unescape_ref(in, size, ref, &ref_len);
        char *u = http_path_unescape(in, size);
        if ((u != NULL) != ref_ok || (u != NULL && memcmp(u, ref, ref_len) != 0) ||
            (u != NULL && u[ref_len] != '\0'))
                abort();
        /* the path as the server cleans it: decoded, up to a NUL */
        if (u != NULL) {
                check_clean(u);
                free(u);
        }
        memcpy(ref, in, size);
        ref[size] = '\0';
        check_clean(ref); /* and the raw bytes */
        free(ref);
        free(in);
        return 0;
}
