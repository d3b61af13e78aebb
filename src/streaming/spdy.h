/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SPDY/3.1 framing, what Kubernetes' streams speak after an HTTP/1.1
 * "Upgrade: SPDY/3.1" (k8s.io/apimachinery/pkg/util/httpstream/spdy over
 * github.com/moby/spdystream): exec, attach and port-forward between the
 * apiserver, the kubelet and a CRI runtime's streaming server.
 *
 * Frames (draft-mbelshe-httpbis-spdy-00 2.2): a control frame has the high
 * bit set, version 3, a type, flags and a 24-bit length; a data frame a
 * 31-bit stream ID, flags and a 24-bit length.  Header blocks (SYN_STREAM,
 * SYN_REPLY, HEADERS) are name/value pairs, each length-prefixed, deflated
 * with zlib and the spec's dictionary on one compression context per
 * direction of the connection (2.6.10).
 *
 * Flow control: none, as spdystream: WINDOW_UPDATE frames are parsed and
 * ignored, and none are sent (Go's clients neither send nor wait for them).
 *
 * struct spdy_codec: the two zlib contexts of one connection.  A codec
 * belongs to one connection; its decoder to the connection's reader, its
 * encoder to whoever holds the connection's write lock.
 */
#ifndef CK_STREAMING_SPDY_H
#define CK_STREAMING_SPDY_H

#include "util/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <zlib.h>

#define SPDY_VERSION 3
#define SPDY_HEAD_LEN 8
#define SPDY_MAX_PAYLOAD 0xffffffu /* 24 bits */
/* The largest header block accepted, decompressed (the streams here carry
 * a handful of short headers). */
#define SPDY_MAX_HEADER_BLOCK (256u * 1024)

enum spdy_frame_type {
        SPDY_DATA = 0, /* not a control type: a data frame */
        SPDY_SYN_STREAM = 1,
        SPDY_SYN_REPLY = 2,
        SPDY_RST_STREAM = 3,
        SPDY_SETTINGS = 4,
        SPDY_PING = 6,
        SPDY_GOAWAY = 7,
        SPDY_HEADERS = 8,
        SPDY_WINDOW_UPDATE = 9,
};

#define SPDY_FLAG_FIN 0x01
#define SPDY_FLAG_UNIDIRECTIONAL 0x02

/* RST_STREAM status codes (2.6.3). */
enum spdy_rst_status {
        SPDY_RST_PROTOCOL_ERROR = 1,
        SPDY_RST_INVALID_STREAM = 2,
        SPDY_RST_REFUSED_STREAM = 3,
        SPDY_RST_CANCEL = 5,
        SPDY_RST_INTERNAL_ERROR = 6,
        SPDY_RST_STREAM_IN_USE = 8,
        SPDY_RST_STREAM_ALREADY_CLOSED = 9,
};

/* A header block: names in lower case, a value with several values joined
 * by NUL bytes is kept as one (value_len counts them all). */
struct spdy_header {
        char *name;
        char *value;
        size_t value_len;
};

struct spdy_headers {
        struct spdy_header *v;
        size_t n;
};

void spdy_headers_clear(struct spdy_headers *h);
/* The first value of the header called name (lower case), or NULL. */
const char *spdy_headers_get(const struct spdy_headers *h, const char *name);

/* One parsed frame.  Data points into the buffer given to spdy_parse;
 * headers are owned by the frame (spdy_frame_clear). */
struct spdy_frame {
        enum spdy_frame_type type; /* SPDY_DATA or a control type (unknown ones too) */
        uint8_t flags;
        uint32_t stream_id;  /* DATA, SYN_STREAM, SYN_REPLY, RST_STREAM, HEADERS, WINDOW_UPDATE;
                              * GOAWAY: the last good stream */
        uint32_t value;      /* RST_STREAM and GOAWAY: the status; PING: its ID;
                              * WINDOW_UPDATE: the delta; SYN_STREAM: associated-to */
        const uint8_t *data; /* DATA: the payload */
        size_t len;
        struct spdy_headers headers; /* SYN_STREAM, SYN_REPLY, HEADERS */
};

void spdy_frame_clear(struct spdy_frame *f);

struct spdy_codec {
        z_stream in, out;
        bool in_ready, out_ready;
        bool in_dict_set;
};

int spdy_codec_init(struct spdy_codec *c, ck_error_t *err);
void spdy_codec_clear(struct spdy_codec *c);

/* The SPDY/3 header compression dictionary (2.6.10.1), 1423 bytes. */
const uint8_t *spdy_dictionary(size_t *len);

/* Parses one frame at the start of buf[0..len).  Returns the bytes it
 * took (> 0) with *f filled, 0 when buf does not hold a whole frame yet
 * (*need: how many bytes it must hold), or -1 with err for a frame that
 * breaks the protocol (a control frame of another version, a header block
 * that does not inflate or parse, a frame too short for its type).  A
 * header block inflates on c's decoder, so frames must be parsed in the
 * order they came. */
ssize_t spdy_parse(struct spdy_codec *c, const uint8_t *buf, size_t len, struct spdy_frame *f,
                   size_t *need, ck_error_t *err);

/* ---- encoding: each appends one frame to a growing buffer ---------------- */

struct spdy_buf {
        uint8_t *p;
        size_t len, cap;
};

void spdy_buf_clear(struct spdy_buf *b);

/* n pairs of (names[i], values[i]); names must be lower case. */
int spdy_put_syn_stream(struct spdy_codec *c, struct spdy_buf *b, uint32_t stream_id, uint8_t flags,
                        const char *const *names, const char *const *values, size_t n,
                        ck_error_t *err);
int spdy_put_syn_reply(struct spdy_codec *c, struct spdy_buf *b, uint32_t stream_id, uint8_t flags,
                       const char *const *names, const char *const *values, size_t n,
                       ck_error_t *err);
/* len at most SPDY_MAX_PAYLOAD. */
void spdy_put_data(struct spdy_buf *b, uint32_t stream_id, uint8_t flags, const void *data,
                   size_t len);
void spdy_put_rst_stream(struct spdy_buf *b, uint32_t stream_id, uint32_t status);
void spdy_put_ping(struct spdy_buf *b, uint32_t id);
void spdy_put_goaway(struct spdy_buf *b, uint32_t last_good_stream_id, uint32_t status);

#endif
