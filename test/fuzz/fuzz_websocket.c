/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzzes the streaming server's WebSocket reader (streaming_internal.h),
 * what a client sends once upgraded: the input's frames parsed in order
 * with ws_parse_frame (a parse takes no more than it was given, asks for
 * more only beyond it, its payload lies inside what it took), then the
 * same bytes read as a connection's messages with ws_conn_read (fragments
 * joined, control frames answered, base64 channels decoded when the first
 * byte's low bit says so), every message's data within its bounds.
 */
#include "streaming/streaming_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The connection's answers (pongs, its close) are drained here so that
 * its writes never wait. */
static void *drain(void *arg)
{
        int fd = *(int *)arg;
        char buf[4096];
        while (read(fd, buf, sizeof(buf)) > 0)
                ;
        return NULL;
}

static void parse_frames(const uint8_t *data, size_t size)
{
        uint8_t *buf = malloc(size ? size : 1);
        memcpy(buf, data, size);
        size_t off = 0;
        while (off < size) {
                struct ws_frame f;
                size_t need = 0;
                ck_error_t err = NULL;
                ssize_t n = ws_parse_frame(buf + off, size - off, &f, &need, &err);
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
                if ((size_t)n > size - off || f.data < buf + off ||
                    f.data + f.len > buf + off + (size_t)n)
                        abort();
                off += (size_t)n;
        }
        free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        parse_frames(data, size);
        if (size < 1 || size > 64 * 1024)
                return 0;
        int sp[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
                abort();
        pthread_t t;
        int peer = sp[1];
        /* the input after its first byte, then the client's end of it */
        size_t off = 1;
        while (off < size) {
                ssize_t w = write(peer, data + off, size - off > 4096 ? 4096 : size - off);
                if (w <= 0)
                        break;
                off += (size_t)w;
        }
        if (pthread_create(&t, NULL, drain, &peer) != 0)
                abort();
        shutdown(peer, SHUT_WR);
        struct ws_conn c;
        if (ws_conn_init(&c, sp[0], NULL, 0, data[0] & 1, 1000, NULL) < 0)
                abort();
        for (int i = 0; i < 10000; i++) {
                int ch;
                const uint8_t *d = NULL;
                size_t len = 0;
                ck_error_t err = NULL;
                int r = ws_conn_read(&c, &ch, &d, &len, 0, &err);
                if (r < 0) {
                        if (err == NULL)
                                abort();
                        ck_error_release(&err);
                        break;
                }
                if (r == 0)
                        break;
                if (len > 0 && d == NULL)
                        abort();
                volatile uint8_t sum = ch; /* readable, all of it (ASan) */
                for (size_t k = 0; k < len; k++)
                        sum = (uint8_t)(sum + d[k]);
        }
        ws_conn_clear(&c);
        shutdown(sp[0], SHUT_RDWR);
        pthread_join(t, NULL);
        close(sp[0]);
        close(sp[1]);
        return 0;
}
