/* SPDX-License-Identifier: Apache-2.0 */
#include "streaming/spdy.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- the dictionary (2.6.10.1) ----------------------------------------- */

/* The spec writes the dictionary as these words, each preceded by its
 * length in four bytes (big-endian), then the text below as is. */
static const char *const dict_words[] = {
    "options",
    "head",
    "post",
    "put",
    "delete",
    "trace",
    "accept",
    "accept-charset",
    "accept-encoding",
    "accept-language",
    "accept-ranges",
    "age",
    "allow",
    "authorization",
    "cache-control",
    "connection",
    "content-base",
    "content-encoding",
    "content-language",
    "content-length",
    "content-location",
    "content-md5",
    "content-range",
    "content-type",
    "date",
    "etag",
    "expect",
    "expires",
    "from",
    "host",
    "if-match",
    "if-modified-since",
    "if-none-match",
    "if-range",
    "if-unmodified-since",
    "last-modified",
    "location",
    "max-forwards",
    "pragma",
    "proxy-authenticate",
    "proxy-authorization",
    "range",
    "referer",
    "retry-after",
    "server",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "user-agent",
    "vary",
    "via",
    "warning",
    "www-authenticate",
    "method",
    "get",
    "status",
    "200 OK",
    "version",
    "HTTP/1.1",
    "url",
    "public",
    "set-cookie",
    "keep-alive",
    "origin",
};

static const char dict_tail[] =
    "100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505"
    "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request"
    "401 Unauthorized403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented"
    "503 Service UnavailableJan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 "
    "Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMTchunked,text/html,image/png,image/jpg,image/gif,"
    "application/xml,application/xhtml+xml,text/plain,text/javascript,publicprivatemax-age="
    "gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.";

static uint8_t dict[1536];
static size_t dict_len;
static pthread_once_t dict_once = PTHREAD_ONCE_INIT;

static void put32(uint8_t *p, uint32_t v)
{
        p[0] = (uint8_t)(v >> 24);
        p[1] = (uint8_t)(v >> 16);
        p[2] = (uint8_t)(v >> 8);
        p[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p)
{
        return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t get24(const uint8_t *p)
{
        return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static void dict_build(void)
{
        size_t n = 0;
        for (size_t i = 0; i < sizeof(dict_words) / sizeof(dict_words[0]); i++) {
                size_t w = strlen(dict_words[i]);
                put32(dict + n, (uint32_t)w);
                memcpy(dict + n + 4, dict_words[i], w);
                n += 4 + w;
        }
        memcpy(dict + n, dict_tail, sizeof(dict_tail) - 1);
        dict_len = n + sizeof(dict_tail) - 1;
}

const uint8_t *spdy_dictionary(size_t *len)
{
        pthread_once(&dict_once, dict_build);
        *len = dict_len;
        return dict;
}

/* ---- headers and frames ------------------------------------------------ */

void spdy_headers_clear(struct spdy_headers *h)
{
        for (size_t i = 0; i < h->n; i++) {
                free(h->v[i].name);
                free(h->v[i].value);
        }
        free(h->v);
        h->v = NULL;
        h->n = 0;
}

const char *spdy_headers_get(const struct spdy_headers *h, const char *name)
{
        for (size_t i = 0; i < h->n; i++)
                if (strcmp(h->v[i].name, name) == 0)
                        return h->v[i].value;
        return NULL;
}

void spdy_frame_clear(struct spdy_frame *f)
{
        spdy_headers_clear(&f->headers);
        memset(f, 0, sizeof(*f));
}

int spdy_codec_init(struct spdy_codec *c, ck_error_t *err)
{
        memset(c, 0, sizeof(*c));
        if (inflateInit(&c->in) != Z_OK)
                return ck_error_make(err, 0, "SPDY: zlib inflateInit failed");
        c->in_ready = true;
        if (deflateInit(&c->out, Z_BEST_COMPRESSION) != Z_OK) {
                spdy_codec_clear(c);
                return ck_error_make(err, 0, "SPDY: zlib deflateInit failed");
        }
        c->out_ready = true;
        size_t dl;
        const uint8_t *d = spdy_dictionary(&dl);
        if (deflateSetDictionary(&c->out, d, (uInt)dl) != Z_OK) {
                spdy_codec_clear(c);
                return ck_error_make(err, 0, "SPDY: zlib deflateSetDictionary failed");
        }
        return 0;
}

void spdy_codec_clear(struct spdy_codec *c)
{
        if (c->in_ready)
                inflateEnd(&c->in);
        if (c->out_ready)
                deflateEnd(&c->out);
        c->in_ready = c->out_ready = false;
}

/* Inflates one frame's header block (the whole of in) on the connection's
 * decoder: a new buffer of *out_len bytes. */
static int inflate_block(struct spdy_codec *c, const uint8_t *in, size_t in_len, uint8_t **out,
                         size_t *out_len, ck_error_t *err)
{
        size_t cap = 1024, n = 0;
        uint8_t *buf = xmalloc(cap);
        c->in.next_in = (Bytef *)in;
        c->in.avail_in = (uInt)in_len;
        for (;;) {
                if (n == cap) {
                        if (cap >= SPDY_MAX_HEADER_BLOCK) {
                                free(buf);
                                return ck_error_make(err, 0,
                                                     "SPDY: header block larger than %u bytes",
                                                     SPDY_MAX_HEADER_BLOCK);
                        }
                        cap *= 2;
                        buf = xrealloc(buf, cap);
                }
                c->in.next_out = buf + n;
                c->in.avail_out = (uInt)(cap - n);
                int r = inflate(&c->in, Z_SYNC_FLUSH);
                n = cap - c->in.avail_out;
                if (r == Z_NEED_DICT && !c->in_dict_set) {
                        size_t dl;
                        const uint8_t *d = spdy_dictionary(&dl);
                        if (inflateSetDictionary(&c->in, d, (uInt)dl) != Z_OK)
                                break;
                        c->in_dict_set = true;
                        continue;
                }
                if (r == Z_BUF_ERROR && c->in.avail_in == 0 && c->in.avail_out > 0)
                        goto done; /* all input taken, nothing more to give */
                if (r != Z_OK)
                        break;
                if (c->in.avail_in == 0 && c->in.avail_out > 0)
                        goto done;
        }
        free(buf);
        return ck_error_make(err, 0, "SPDY: header block does not inflate: %s",
                             c->in.msg ? c->in.msg : "bad data");
done:
        *out = buf;
        *out_len = n;
        return 0;
}

/* A length-prefixed string at p[*off..len): a new string, or NULL when
 * the block ends first. */
static char *take_string(const uint8_t *p, size_t len, size_t *off, size_t *out_len)
{
        if (len - *off < 4)
                return NULL;
        uint32_t l = get32(p + *off);
        if (l > len - *off - 4)
                return NULL;
        char *s = xmalloc((size_t)l + 1); /* all l bytes, NULs included, and one more */
        memcpy(s, p + *off + 4, l);
        s[l] = '\0';
        *off += 4 + (size_t)l;
        *out_len = l;
        return s;
}

/* Splits an inflated header block into h (cleared by the caller on
 * failure). */
static int parse_block(const uint8_t *p, size_t len, struct spdy_headers *h, ck_error_t *err)
{
        if (len < 4)
                return ck_error_make(err, 0, "SPDY: header block too short");
        uint32_t count = get32(p);
        size_t off = 4;
        /* each pair takes at least 8 bytes */
        if (count > (len - 4) / 8)
                return ck_error_make(err, 0, "SPDY: header block claims %u pairs in %zu bytes",
                                     count, len);
        h->v = xcalloc(count ? count : 1, sizeof(*h->v));
        for (uint32_t i = 0; i < count; i++) {
                size_t name_len = 0, value_len = 0;
                char *name = take_string(p, len, &off, &name_len);
                char *value = name ? take_string(p, len, &off, &value_len) : NULL;
                if (value == NULL) {
                        free(name);
                        return ck_error_make(err, 0, "SPDY: header block truncated");
                }
                h->v[h->n++] = (struct spdy_header){name, value, value_len};
                /* as Go's framer: names are lower case, not empty, no NUL */
                if (name_len == 0 || strlen(name) != name_len)
                        return ck_error_make(err, 0, "SPDY: empty or NUL in a header name");
                for (const char *q = name; *q; q++)
                        if (*q >= 'A' && *q <= 'Z')
                                return ck_error_make(err, 0,
                                                     "SPDY: header name `%s` not lower case", name);
        }
        if (off != len)
                return ck_error_make(err, 0, "SPDY: %zu bytes after the header block", len - off);
        return 0;
}

static int read_headers(struct spdy_codec *c, const uint8_t *in, size_t in_len,
                        struct spdy_headers *h, ck_error_t *err)
{
        uint8_t *block = NULL;
        size_t block_len = 0;
        if (inflate_block(c, in, in_len, &block, &block_len, err) < 0)
                return -1;
        int r = parse_block(block, block_len, h, err);
        free(block);
        if (r < 0)
                spdy_headers_clear(h);
        return r;
}

ssize_t spdy_parse(struct spdy_codec *c, const uint8_t *buf, size_t len, struct spdy_frame *f,
                   size_t *need, ck_error_t *err)
{
        memset(f, 0, sizeof(*f));
        if (len < SPDY_HEAD_LEN) {
                *need = SPDY_HEAD_LEN;
                return 0;
        }
        uint32_t plen = get24(buf + 5);
        if (len - SPDY_HEAD_LEN < plen) {
                *need = SPDY_HEAD_LEN + plen;
                return 0;
        }
        const uint8_t *p = buf + SPDY_HEAD_LEN;
        f->flags = buf[4];
        ssize_t took = (ssize_t)(SPDY_HEAD_LEN + plen);
        if (!(buf[0] & 0x80)) {
                f->type = SPDY_DATA;
                f->stream_id = get32(buf) & 0x7fffffff;
                f->data = p;
                f->len = plen;
                return took;
        }
        unsigned version = ((unsigned)buf[0] & 0x7f) << 8 | buf[1];
        if (version != SPDY_VERSION)
                return ck_error_make(err, 0, "SPDY: control frame of version %u", version);
        f->type = (enum spdy_frame_type)((unsigned)buf[2] << 8 | buf[3]);
        switch (f->type) {
        case SPDY_SYN_STREAM:
                if (plen < 10)
                        break;
                f->stream_id = get32(p) & 0x7fffffff;
                f->value = get32(p + 4) & 0x7fffffff;
                if (read_headers(c, p + 10, plen - 10, &f->headers, err) < 0)
                        return ck_error_wrap(err, "SYN_STREAM %u", f->stream_id);
                return took;
        case SPDY_SYN_REPLY:
        case SPDY_HEADERS:
                if (plen < 4)
                        break;
                f->stream_id = get32(p) & 0x7fffffff;
                if (read_headers(c, p + 4, plen - 4, &f->headers, err) < 0)
                        return ck_error_wrap(err, "%s %u",
                                             f->type == SPDY_HEADERS ? "HEADERS" : "SYN_REPLY",
                                             f->stream_id);
                return took;
        case SPDY_RST_STREAM:
        case SPDY_GOAWAY:
        case SPDY_WINDOW_UPDATE:
                if (plen < 8)
                        break;
                f->stream_id = get32(p) & 0x7fffffff;
                f->value = get32(p + 4) & (f->type == SPDY_WINDOW_UPDATE ? 0x7fffffff : 0xffffffff);
                return took;
        case SPDY_PING:
                if (plen < 4)
                        break;
                f->value = get32(p);
                return took;
        default: /* SETTINGS and unknown types: taken and ignored */
                f->data = p;
                f->len = plen;
                return took;
        }
        return ck_error_make(err, 0, "SPDY: control frame of type %u too short (%u bytes)",
                             (unsigned)f->type, plen);
}

/* ---- encoding ------------------------------------------------------------ */

void spdy_buf_clear(struct spdy_buf *b)
{
        free(b->p);
        memset(b, 0, sizeof(*b));
}

static uint8_t *grow(struct spdy_buf *b, size_t n)
{
        if (b->cap - b->len < n) {
                size_t cap = b->cap ? b->cap : 256;
                while (cap - b->len < n)
                        cap *= 2;
                b->p = xrealloc(b->p, cap);
                b->cap = cap;
        }
        uint8_t *at = b->p + b->len;
        b->len += n;
        return at;
}

static void put_control_head(uint8_t *p, enum spdy_frame_type type, uint8_t flags, uint32_t len)
{
        p[0] = 0x80;
        p[1] = SPDY_VERSION;
        p[2] = (uint8_t)(type >> 8);
        p[3] = (uint8_t)type;
        put32(p + 4, len);
        p[4] = flags;
}

/* Deflates the pairs onto b (a sync flush: the peer can inflate it now). */
static int deflate_block(struct spdy_codec *c, struct spdy_buf *b, const char *const *names,
                         const char *const *values, size_t n, ck_error_t *err)
{
        struct spdy_buf raw = {0};
        put32(grow(&raw, 4), (uint32_t)n);
        for (size_t i = 0; i < n; i++) {
                const char *s[2] = {names[i], values[i]};
                for (int k = 0; k < 2; k++) {
                        size_t l = strlen(s[k]);
                        put32(grow(&raw, 4), (uint32_t)l);
                        memcpy(grow(&raw, l), s[k], l);
                }
        }
        c->out.next_in = raw.p;
        c->out.avail_in = (uInt)raw.len;
        do {
                size_t room = raw.len + 64;
                uint8_t *at = grow(b, room);
                c->out.next_out = at;
                c->out.avail_out = (uInt)room;
                if (deflate(&c->out, Z_SYNC_FLUSH) != Z_OK) {
                        spdy_buf_clear(&raw);
                        return ck_error_make(err, 0, "SPDY: header block does not deflate");
                }
                b->len -= c->out.avail_out;
        } while (c->out.avail_out == 0 || c->out.avail_in > 0);
        spdy_buf_clear(&raw);
        return 0;
}

static int put_headers_frame(struct spdy_codec *c, struct spdy_buf *b, enum spdy_frame_type type,
                             uint32_t stream_id, uint8_t flags, const char *const *names,
                             const char *const *values, size_t n, ck_error_t *err)
{
        size_t start = b->len;
        size_t fixed = type == SPDY_SYN_STREAM ? 10 : 4;
        uint8_t *p = grow(b, SPDY_HEAD_LEN + fixed);
        memset(p, 0, SPDY_HEAD_LEN + fixed);
        put32(p + SPDY_HEAD_LEN, stream_id & 0x7fffffff);
        if (deflate_block(c, b, names, values, n, err) < 0) {
                b->len = start;
                return -1;
        }
        size_t len = b->len - start - SPDY_HEAD_LEN;
        if (len > SPDY_MAX_PAYLOAD) {
                b->len = start;
                return ck_error_make(err, 0, "SPDY: header block too large");
        }
        put_control_head(b->p + start, type, flags, (uint32_t)len);
        return 0;
}

int spdy_put_syn_stream(struct spdy_codec *c, struct spdy_buf *b, uint32_t stream_id, uint8_t flags,
                        const char *const *names, const char *const *values, size_t n,
                        ck_error_t *err)
{
        return put_headers_frame(c, b, SPDY_SYN_STREAM, stream_id, flags, names, values, n, err);
}

int spdy_put_syn_reply(struct spdy_codec *c, struct spdy_buf *b, uint32_t stream_id, uint8_t flags,
                       const char *const *names, const char *const *values, size_t n,
                       ck_error_t *err)
{
        return put_headers_frame(c, b, SPDY_SYN_REPLY, stream_id, flags, names, values, n, err);
}

void spdy_put_data(struct spdy_buf *b, uint32_t stream_id, uint8_t flags, const void *data,
                   size_t len)
{
        uint8_t *p = grow(b, SPDY_HEAD_LEN + len);
        put32(p, stream_id & 0x7fffffff);
        put32(p + 4, (uint32_t)len);
        p[4] = flags;
        if (len > 0)
                memcpy(p + SPDY_HEAD_LEN, data, len);
}

static void put_two(struct spdy_buf *b, enum spdy_frame_type type, uint32_t a, uint32_t v)
{
        uint8_t *p = grow(b, SPDY_HEAD_LEN + 8);
        put_control_head(p, type, 0, 8);
        put32(p + 8, a & 0x7fffffff);
        put32(p + 12, v);
}

void spdy_put_rst_stream(struct spdy_buf *b, uint32_t stream_id, uint32_t status)
{
        put_two(b, SPDY_RST_STREAM, stream_id, status);
}

void spdy_put_goaway(struct spdy_buf *b, uint32_t last_good_stream_id, uint32_t status)
{
        put_two(b, SPDY_GOAWAY, last_good_stream_id, status);
}

void spdy_put_ping(struct spdy_buf *b, uint32_t id)
{
        uint8_t *p = grow(b, SPDY_HEAD_LEN + 4);
        put_control_head(p, SPDY_PING, 0, 4);
        put32(p + 8, id);
}
