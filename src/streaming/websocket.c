/* SPDX-License-Identifier: Apache-2.0 */
/*
 * WebSocket (RFC 6455), the server's side, carrying Kubernetes' channel
 * protocols as upstream's wsstream does (apimachinery's
 * pkg/util/httpstream/wsstream): every message's first byte names its
 * channel; with base64.channel.k8s.io the channel is a digit and the rest
 * base64, in text messages.
 *
 * A client's frames must be masked; control frames are answered here (a
 * ping with a pong, a close with a close), fragments are joined, and a
 * message over WS_READ_MAX ends the connection.
 */
#include "streaming/streaming_internal.h"
#include "util/base64.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The largest message taken from a client (as SPDY_CONN_READ_MAX). */
#define WS_READ_MAX (1024 * 1024)

enum {
        WS_OP_CONT = 0x0,
        WS_OP_TEXT = 0x1,
        WS_OP_BINARY = 0x2,
        WS_OP_CLOSE = 0x8,
        WS_OP_PING = 0x9,
        WS_OP_PONG = 0xa,
};

char *ws_accept_key(const char *key)
{
        static const char guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
        size_t klen = strlen(key);
        char *in = xmalloc(klen + sizeof(guid));
        memcpy(in, key, klen);
        memcpy(in + klen, guid, sizeof(guid));
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned int mdlen = 0;
        int ok = EVP_Digest(in, klen + sizeof(guid) - 1, md, &mdlen, EVP_sha1(), NULL);
        free(in);
        if (!ok)
                return NULL;
        char *out = xmalloc(4 * ((mdlen + 2) / 3) + 1);
        EVP_EncodeBlock((unsigned char *)out, md, (int)mdlen);
        return out;
}

ssize_t ws_parse_frame(uint8_t *buf, size_t len, struct ws_frame *f, size_t *need, ck_error_t *err)
{
        *need = 2;
        if (len < 2)
                return 0;
        uint8_t b0 = buf[0], b1 = buf[1];
        if (b0 & 0x70)
                return ck_error_make(err, 0, "WebSocket: reserved bits set");
        f->fin = (b0 & 0x80) != 0;
        f->opcode = b0 & 0x0f;
        switch (f->opcode) {
        case WS_OP_CONT:
        case WS_OP_TEXT:
        case WS_OP_BINARY:
        case WS_OP_CLOSE:
        case WS_OP_PING:
        case WS_OP_PONG:
                break;
        default:
                return ck_error_make(err, 0, "WebSocket: unknown opcode %u", f->opcode);
        }
        if (!(b1 & 0x80))
                return ck_error_make(err, 0, "WebSocket: a client's frame is not masked");
        uint64_t plen = b1 & 0x7f;
        size_t head = 2;
        if (plen == 126) {
                head = 4;
        } else if (plen == 127) {
                head = 10;
        }
        if (len < head) {
                *need = head;
                return 0;
        }
        if (plen == 126) {
                plen = (uint64_t)buf[2] << 8 | buf[3];
        } else if (plen == 127) {
                plen = 0;
                for (int i = 0; i < 8; i++)
                        plen = plen << 8 | buf[2 + i];
        }
        if (f->opcode & 0x8) {
                if (!f->fin || plen > 125)
                        return ck_error_make(err, 0, "WebSocket: a bad control frame");
        }
        if (plen > WS_READ_MAX)
                return ck_error_make(err, 0, "WebSocket: a frame of %llu bytes (at most %d)",
                                     (unsigned long long)plen, WS_READ_MAX);
        size_t total = head + 4 + (size_t)plen;
        if (len < total) {
                *need = total;
                return 0;
        }
        const uint8_t *mask = buf + head;
        f->data = buf + head + 4;
        f->len = (size_t)plen;
        for (size_t i = 0; i < f->len; i++)
                f->data[i] ^= mask[i & 3];
        return (ssize_t)total;
}

int ws_conn_init(struct ws_conn *c, int fd, const char *pending, size_t pending_len, bool base64,
                 int64_t idle_ms, ck_error_t *err)
{
        memset(c, 0, sizeof(*c));
        c->fd = fd;
        c->wake_fd = -1;
        c->base64 = base64;
        c->idle_ms = idle_ms;
        if (streaming_conn_setup(fd, pending, pending_len, &c->rbuf, &c->rlen, &c->rcap,
                                 "WebSocket", err) < 0)
                return -1;
        atomic_store(&c->last_ms, fs_now_mono_ms());
        pthread_mutex_init(&c->wlock, NULL);
        return 0;
}

void ws_conn_clear(struct ws_conn *c)
{
        pthread_mutex_destroy(&c->wlock);
        free(c->rbuf);
        free(c->msg);
        free(c->decoded);
        c->rbuf = c->msg = NULL;
        c->decoded = NULL;
}

/* Sends one frame whole (a server's: unmasked). */
static int send_frame(struct ws_conn *c, uint8_t opcode, const void *prefix, size_t prefix_len,
                      const void *data, size_t len)
{
        size_t plen = prefix_len + len;
        uint8_t head[10];
        size_t hl = 2;
        head[0] = 0x80 | opcode;
        if (plen < 126) {
                head[1] = (uint8_t)plen;
        } else if (plen <= 0xffff) {
                head[1] = 126;
                head[2] = (uint8_t)(plen >> 8);
                head[3] = (uint8_t)plen;
                hl = 4;
        } else {
                head[1] = 127;
                for (int i = 0; i < 8; i++)
                        head[2 + i] = (uint8_t)((uint64_t)plen >> (56 - 8 * i));
                hl = 10;
        }
        struct iovec iov[3] = {{head, hl}, {(void *)prefix, prefix_len}, {(void *)data, len}};
        size_t left = hl + plen;
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = 3};
        pthread_mutex_lock(&c->wlock);
        int rc = 0;
        /* nothing after our close (RFC 6455 section 5.5.1) */
        if (c->close_sent) {
                pthread_mutex_unlock(&c->wlock);
                return opcode == WS_OP_CLOSE ? 0 : -1;
        }
        if (opcode == WS_OP_CLOSE)
                c->close_sent = true;
        while (left > 0) {
                if (atomic_load(&c->broken)) {
                        rc = -1;
                        break;
                }
                ssize_t w = sendmsg(c->fd, &m, MSG_NOSIGNAL);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0) {
                        atomic_store(&c->broken, true);
                        rc = -1;
                        break;
                }
                left -= (size_t)w;
                while (w > 0 && m.msg_iovlen > 0) {
                        size_t take =
                            (size_t)w < m.msg_iov->iov_len ? (size_t)w : m.msg_iov->iov_len;
                        m.msg_iov->iov_base = (uint8_t *)m.msg_iov->iov_base + take;
                        m.msg_iov->iov_len -= take;
                        w -= (ssize_t)take;
                        if (m.msg_iov->iov_len == 0) {
                                m.msg_iov++;
                                m.msg_iovlen--;
                        }
                }
        }
        if (rc == 0)
                atomic_store(&c->last_ms, fs_now_mono_ms());
        pthread_mutex_unlock(&c->wlock);
        return rc;
}

int ws_conn_write(struct ws_conn *c, uint8_t channel, const void *buf, size_t len)
{
        if (!c->base64)
                return send_frame(c, WS_OP_BINARY, &channel, 1, buf, len);
        uint8_t digit = (uint8_t)('0' + channel);
        char *text = xmalloc(4 * ((len + 2) / 3) + 1);
        int n = len ? EVP_EncodeBlock((unsigned char *)text, buf, (int)len) : 0;
        int rc = send_frame(c, WS_OP_TEXT, &digit, 1, text, (size_t)n);
        free(text);
        return rc;
}

int ws_conn_close(struct ws_conn *c, uint16_t code)
{
        uint8_t b[2] = {(uint8_t)(code >> 8), (uint8_t)code};
        return send_frame(c, WS_OP_CLOSE, b, 2, NULL, 0);
}

/* The code a client's close is answered with: its own when it may be
 * sent (RFC 6455 section 7.4), 1000 when it gave none or one that may not
 * be, 1002 for a one-byte payload. */
static uint16_t close_answer(const struct ws_frame *f)
{
        if (f->len == 0)
                return 1000;
        if (f->len == 1)
                return 1002;
        uint16_t code = (uint16_t)(f->data[0] << 8 | f->data[1]);
        bool ok = (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1011) ||
                  (code >= 3000 && code <= 4999);
        return ok ? code : 1000;
}

/* The message's channel and data (base64 decoded when negotiated). */
static int channel_of(struct ws_conn *c, int *channel, const uint8_t **data, size_t *len)
{
        if (c->msg_len == 0) { /* an empty message: no channel, skipped */
                *channel = -1;
                *data = NULL;
                *len = 0;
                return 1;
        }
        if (!c->base64 || c->msg[0] == 0xff) {
                *channel = c->msg[0];
                *data = c->msg + 1;
                *len = c->msg_len - 1;
                return 1;
        }
        *channel = c->msg[0] - '0';
        free(c->decoded);
        c->decoded = NULL;
        size_t n = 0;
        ck_error_t e = NULL;
        if (base64_decode((const char *)c->msg + 1, c->msg_len - 1, 0, &c->decoded, &n, &e) < 0) {
                /* dropped, as upstream's reader does; the session goes on */
                LOG_INFO(4, "WebSocket: a channel message dropped", "channel=%d err=\"%s\"",
                         *channel, ck_error_msg(e));
                ck_error_release(&e);
                *channel = -1;
                *data = NULL;
                *len = 0;
                return 1;
        }
        *data = (const uint8_t *)c->decoded;
        *len = n;
        return 1;
}

int ws_conn_read(struct ws_conn *c, int *channel, const uint8_t **data, size_t *len,
                 int64_t deadline_ms, ck_error_t *err)
{
        c->msg_len = 0;
        bool in_message = false;
        for (;;) {
                struct ws_frame f;
                size_t need = 0;
                ssize_t took = ws_parse_frame(c->rbuf, c->rlen, &f, &need, err);
                if (took < 0)
                        return -1;
                if (took > 0) {
                        atomic_store(&c->last_ms, fs_now_mono_ms());
                        int done = 0;
                        switch (f.opcode) {
                        case WS_OP_PING:
                                send_frame(c, WS_OP_PONG, NULL, 0, f.data, f.len);
                                break;
                        case WS_OP_PONG:
                                break;
                        case WS_OP_CLOSE:
                                ws_conn_close(c, close_answer(&f));
                                done = -1;
                                break;
                        default:
                                if ((f.opcode == WS_OP_CONT) != in_message) {
                                        ck_error_make(err, 0, "WebSocket: fragments out of order");
                                        done = -2;
                                        break;
                                }
                                if (c->msg_len + f.len > WS_READ_MAX) {
                                        ck_error_make(err, 0, "WebSocket: a message over %d bytes",
                                                      WS_READ_MAX);
                                        done = -2;
                                        break;
                                }
                                if (c->msg_len + f.len > c->msg_cap) {
                                        c->msg_cap = c->msg_len + f.len + 1024;
                                        c->msg = xrealloc(c->msg, c->msg_cap);
                                }
                                if (f.len)
                                        memcpy(c->msg + c->msg_len, f.data, f.len);
                                c->msg_len += f.len;
                                in_message = !f.fin;
                                done = f.fin ? 1 : 0;
                        }
                        memmove(c->rbuf, c->rbuf + took, c->rlen - (size_t)took);
                        c->rlen -= (size_t)took;
                        if (done == 1)
                                return channel_of(c, channel, data, len);
                        if (done == -1)
                                return 0;
                        if (done == -2)
                                return -1;
                        continue;
                }
                if (need > c->rcap) {
                        c->rbuf = xrealloc(c->rbuf, need);
                        c->rcap = need;
                }
                struct streaming_idle idle = {&c->last_ms, c->idle_ms};
                int r = streaming_recv(c->fd, c->wake_fd, c->rbuf, &c->rlen, c->rcap, deadline_ms,
                                       &idle, "WebSocket", err);
                if (r < 0)
                        return -1;
                if (r == 0) {
                        if (c->rlen > 0 || in_message)
                                return ck_error_make(err, 0,
                                                     "WebSocket: connection closed inside a "
                                                     "message");
                        return 0;
                }
        }
}
