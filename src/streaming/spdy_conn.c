/* SPDX-License-Identifier: Apache-2.0 */
/* One SPDY connection on a socket (streaming_internal.h). */
#include "streaming/streaming_internal.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The most one data frame carries when we send (Go's framer has no limit;
 * a frame of this size keeps one stream from holding the socket long). */
#define SPDY_CONN_FRAME_MAX (32 * 1024)
/* The largest frame taken from a client (Go's clients write 32 KiB at most):
 * a peer cannot make the connection hold more. */
#define SPDY_CONN_READ_MAX (1024 * 1024)

int spdy_conn_init(struct spdy_conn *c, int fd, const char *pending, size_t pending_len,
                   int64_t idle_ms, ck_error_t *err)
{
        memset(c, 0, sizeof(*c));
        c->fd = fd;
        c->idle_ms = idle_ms;
        if (spdy_codec_init(&c->codec, err) < 0)
                return -1;
        if (streaming_conn_setup(fd, pending, pending_len, &c->rbuf, &c->rlen, &c->rcap, "SPDY",
                                 err) < 0) {
                spdy_codec_clear(&c->codec);
                return -1;
        }
        pthread_mutex_init(&c->wlock, NULL);
        atomic_store(&c->last_ms, fs_now_mono_ms());
        return 0;
}

int streaming_conn_setup(int fd, const char *pending, size_t pending_len, uint8_t **rbuf,
                         size_t *rlen, size_t *rcap, const char *what, ck_error_t *err)
{
        /* blocking writes (the peer's pace; a shutdown of the socket ends
         * them), keep-alive probes for a peer that vanished */
        int fl = fcntl(fd, F_GETFL);
        if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
                return ck_error_make(err, errno, "%s: fcntl", what);
        int one = 1;
        (void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
        *rcap = pending_len > 65536 ? pending_len : 65536;
        *rbuf = xmalloc(*rcap);
        if (pending_len > 0)
                memcpy(*rbuf, pending, pending_len);
        *rlen = pending_len;
        return 0;
}

void spdy_conn_clear(struct spdy_conn *c)
{
        spdy_codec_clear(&c->codec);
        pthread_mutex_destroy(&c->wlock);
        free(c->rbuf);
        c->rbuf = NULL;
}

int spdy_conn_read(struct spdy_conn *c, struct spdy_frame *f, int64_t deadline_ms, ck_error_t *err)
{
        if (c->taken > 0) { /* the previous frame's bytes, no longer borrowed */
                memmove(c->rbuf, c->rbuf + c->taken, c->rlen - c->taken);
                c->rlen -= c->taken;
                c->taken = 0;
        }
        for (;;) {
                size_t need = 0;
                ssize_t took = spdy_parse(&c->codec, c->rbuf, c->rlen, f, &need, err);
                if (took < 0)
                        return -1;
                if (took > 0) {
                        c->taken = (size_t)took;
                        atomic_store(&c->last_ms, fs_now_mono_ms());
                        return 1;
                }
                if (need > SPDY_CONN_READ_MAX)
                        return ck_error_make(err, 0, "SPDY: a frame of %zu bytes (at most %d)",
                                             need - SPDY_HEAD_LEN, SPDY_CONN_READ_MAX);
                if (need > c->rcap) {
                        c->rbuf = xrealloc(c->rbuf, need);
                        c->rcap = need;
                }
                struct streaming_idle idle = {&c->last_ms, c->idle_ms};
                int r = streaming_recv(c->fd, -1, c->rbuf, &c->rlen, c->rcap, deadline_ms, &idle,
                                       "SPDY", err);
                if (r < 0)
                        return -1;
                if (r == 0) {
                        if (c->rlen > 0)
                                return ck_error_make(err, 0,
                                                     "SPDY: connection closed inside a "
                                                     "frame");
                        return 0;
                }
        }
}

int streaming_recv(int fd, int wake, uint8_t *buf, size_t *len, size_t cap, int64_t deadline_ms,
                   const struct streaming_idle *idle, const char *what, ck_error_t *err)
{
        /* idle: nothing read nor written for idle_ms, the last of either
         * read again at each wait (upstream's streams count both ways) */
        bool idle_mode = deadline_ms == 0 && idle && idle->idle_ms > 0;
        for (;;) {
                int timeout = -1;
                if (idle_mode)
                        deadline_ms = atomic_load(idle->last_ms) + idle->idle_ms;
                if (deadline_ms > 0) {
                        int64_t left = deadline_ms - fs_now_mono_ms();
                        if (left <= 0)
                                return ck_error_make(err, ETIMEDOUT, "%s: nothing read in time",
                                                     what);
                        timeout = left > 1000 ? 1000 : (int)left;
                }
                struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = wake, .events = POLLIN}};
                int pr = poll(p, wake >= 0 ? 2 : 1, timeout);
                if (pr < 0 && errno != EINTR)
                        return ck_error_make(err, errno, "%s: poll", what);
                if (pr <= 0)
                        continue;
                if (wake >= 0 && (p[1].revents & POLLIN))
                        return ck_error_make(err, ECANCELED, "%s: stopped", what);
                ssize_t n = recv(fd, buf + *len, cap - *len, 0);
                if (n < 0 && (errno == EINTR || errno == EAGAIN))
                        continue;
                if (n < 0)
                        return ck_error_make(err, errno, "%s: read", what);
                *len += (size_t)n;
                return n > 0;
        }
}

/* Sends b whole; call with wlock held. */
static int send_locked(struct spdy_conn *c, const struct spdy_buf *b)
{
        if (atomic_load(&c->broken))
                return -1;
        size_t off = 0;
        while (off < b->len) {
                ssize_t w = send(c->fd, b->p + off, b->len - off, MSG_NOSIGNAL);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0) {
                        atomic_store(&c->broken, true);
                        return -1;
                }
                off += (size_t)w;
        }
        atomic_store(&c->last_ms, fs_now_mono_ms());
        return 0;
}

static int send_frame(struct spdy_conn *c, struct spdy_buf *b)
{
        pthread_mutex_lock(&c->wlock);
        int r = send_locked(c, b);
        pthread_mutex_unlock(&c->wlock);
        spdy_buf_clear(b);
        return r;
}

int spdy_conn_reply(struct spdy_conn *c, uint32_t stream_id)
{
        struct spdy_buf b = {0};
        pthread_mutex_lock(&c->wlock);
        int r = spdy_put_syn_reply(&c->codec, &b, stream_id, 0, NULL, NULL, 0, NULL);
        if (r == 0)
                r = send_locked(c, &b);
        pthread_mutex_unlock(&c->wlock);
        spdy_buf_clear(&b);
        return r;
}

int spdy_conn_data(struct spdy_conn *c, uint32_t stream_id, const void *buf, size_t len, bool fin)
{
        const uint8_t *p = buf;
        do {
                size_t n = len > SPDY_CONN_FRAME_MAX ? SPDY_CONN_FRAME_MAX : len;
                struct spdy_buf b = {0};
                spdy_put_data(&b, stream_id, fin && n == len ? SPDY_FLAG_FIN : 0, p, n);
                if (send_frame(c, &b) < 0)
                        return -1;
                p += n;
                len -= n;
        } while (len > 0);
        return 0;
}

int spdy_conn_rst(struct spdy_conn *c, uint32_t stream_id, uint32_t status)
{
        struct spdy_buf b = {0};
        spdy_put_rst_stream(&b, stream_id, status);
        return send_frame(c, &b);
}

int spdy_conn_ping(struct spdy_conn *c, uint32_t id)
{
        struct spdy_buf b = {0};
        spdy_put_ping(&b, id);
        return send_frame(c, &b);
}

int spdy_conn_goaway(struct spdy_conn *c)
{
        struct spdy_buf b = {0};
        spdy_put_goaway(&b, 0, 0);
        return send_frame(c, &b);
}
