/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The streaming server (src/streaming): SPDY/3.1 framing and header
 * compression, WebSocket framing, the request cache, the handshakes, and
 * exec, attach and port-forward sessions driven by SPDY and WebSocket
 * clients written here against a runtime fake (the module's boundary).  Interoperation with Go's
 * SPDY clients (crictl, kubectl through the apiserver) is the e2e suites' part
 * (test/e2e/80-dockershim.bats).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "grpc/grpc.h"
#include "streaming/streaming_internal.h"
#include "util/base64.h"
#include "util/netutil.h"
#include "util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/sha.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- framing ---------------------------------------------------------- */

static void test_dictionary(void **state)
{
        (void)state;
        size_t len;
        const uint8_t *d = spdy_dictionary(&len);
        assert_int_equal(len, 1423);
        unsigned char md[SHA256_DIGEST_LENGTH];
        SHA256(d, len, md);
        char hex[2 * SHA256_DIGEST_LENGTH + 1];
        for (int i = 0; i < SHA256_DIGEST_LENGTH; i++)
                sprintf(hex + 2 * i, "%02x", md[i]);
        /* the spec's dictionary, byte for byte (as Go's spdy package has it) */
        assert_string_equal(hex,
                            "51d27341373f923f3cd88e1eb7162aeaa3723d7585ff2399201dc06498407f02");
}

static void test_frames_round_trip(void **state)
{
        (void)state;
        struct spdy_codec tx, rx;
        assert_int_equal(spdy_codec_init(&tx, NULL), 0);
        assert_int_equal(spdy_codec_init(&rx, NULL), 0);
        struct spdy_buf b = {0};
        const char *n1[] = {"streamtype", "port"}, *v1[] = {"data", "8080"};
        const char *n2[] = {"streamtype"}, *v2[] = {"error"};
        /* two header blocks on one compression context: the second one
         * refers to the first's words */
        assert_int_equal(spdy_put_syn_stream(&tx, &b, 1, 0, n1, v1, 2, NULL), 0);
        assert_int_equal(spdy_put_syn_stream(&tx, &b, 3, SPDY_FLAG_FIN, n2, v2, 1, NULL), 0);
        assert_int_equal(spdy_put_syn_reply(&tx, &b, 5, 0, NULL, NULL, 0, NULL), 0);
        spdy_put_data(&b, 1, SPDY_FLAG_FIN, "hello", 5);
        spdy_put_rst_stream(&b, 3, SPDY_RST_CANCEL);
        spdy_put_ping(&b, 7);
        spdy_put_goaway(&b, 9, 0);

        size_t off = 0, need = 0;
        struct spdy_frame f;
        ssize_t n = spdy_parse(&rx, b.p + off, b.len - off, &f, &need, NULL);
        assert_true(n > 0);
        assert_int_equal(f.type, SPDY_SYN_STREAM);
        assert_int_equal(f.stream_id, 1);
        assert_int_equal(f.headers.n, 2);
        assert_string_equal(spdy_headers_get(&f.headers, "port"), "8080");
        assert_string_equal(spdy_headers_get(&f.headers, "streamtype"), "data");
        spdy_frame_clear(&f);
        off += (size_t)n;
        n = spdy_parse(&rx, b.p + off, b.len - off, &f, &need, NULL);
        assert_true(n > 0);
        assert_int_equal(f.stream_id, 3);
        assert_int_equal(f.flags, SPDY_FLAG_FIN);
        assert_string_equal(spdy_headers_get(&f.headers, "streamtype"), "error");
        assert_null(spdy_headers_get(&f.headers, "port"));
        spdy_frame_clear(&f);
        off += (size_t)n;
        n = spdy_parse(&rx, b.p + off, b.len - off, &f, &need, NULL);
        assert_int_equal(f.type, SPDY_SYN_REPLY);
        assert_int_equal(f.stream_id, 5);
        assert_int_equal(f.headers.n, 0);
        spdy_frame_clear(&f);
        off += (size_t)n;
        n = spdy_parse(&rx, b.p + off, b.len - off, &f, &need, NULL);
        assert_int_equal(f.type, SPDY_DATA);
        assert_int_equal(f.stream_id, 1);
        assert_int_equal(f.flags, SPDY_FLAG_FIN);
        assert_int_equal(f.len, 5);
        assert_memory_equal(f.data, "hello", 5);
        off += (size_t)n;
        n = spdy_parse(&rx, b.p + off, b.len - off, &f, &need, NULL);
        assert_int_equal(f.type, SPDY_RST_STREAM);
        assert_int_equal(f.stream_id, 3);
        assert_int_equal(f.value, SPDY_RST_CANCEL);
        off += (size_t)n;
        n = spdy_parse(&rx, b.p + off, b.len - off, &f, &need, NULL);
        assert_int_equal(f.type, SPDY_PING);
        assert_int_equal(f.value, 7);
        off += (size_t)n;
        n = spdy_parse(&rx, b.p + off, b.len - off, &f, &need, NULL);
        assert_int_equal(f.type, SPDY_GOAWAY);
        assert_int_equal(f.stream_id, 9);
        off += (size_t)n;
        assert_int_equal(off, b.len);
        /* nothing left: a whole head is needed */
        assert_int_equal(spdy_parse(&rx, b.p + off, 0, &f, &need, NULL), 0);
        assert_int_equal(need, SPDY_HEAD_LEN);
        spdy_buf_clear(&b);
        spdy_codec_clear(&tx);
        spdy_codec_clear(&rx);
}

static void test_frames_partial_and_bad(void **state)
{
        (void)state;
        struct spdy_codec rx;
        assert_int_equal(spdy_codec_init(&rx, NULL), 0);
        struct spdy_buf b = {0};
        spdy_put_data(&b, 1, 0, "abcdef", 6);
        struct spdy_frame f;
        size_t need = 0;
        /* a frame cut short: how much is needed */
        assert_int_equal(spdy_parse(&rx, b.p, 10, &f, &need, NULL), 0);
        assert_int_equal(need, SPDY_HEAD_LEN + 6);
        spdy_buf_clear(&b);

        /* a control frame of SPDY/2 */
        uint8_t v2[] = {0x80, 0x02, 0x00, 0x06, 0x00, 0x00, 0x00, 0x04, 0, 0, 0, 1};
        ck_error_t err = NULL;
        assert_int_equal(spdy_parse(&rx, v2, sizeof(v2), &f, &need, &err), -1);
        assert_non_null(strstr(ck_error_msg(err), "version 2"));
        ck_error_release(&err);

        /* a SYN_STREAM whose header block is not zlib */
        uint8_t junk[] = {0x80, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x0e, /* head */
                          0,    0,    0,    1,    0,    0,    0,    0,    /* ids */
                          0,    0,    0xde, 0xad, 0xbe, 0xef};            /* pri, block */
        assert_int_equal(spdy_parse(&rx, junk, sizeof(junk), &f, &need, &err), -1);
        assert_non_null(strstr(ck_error_msg(err), "inflate"));
        ck_error_release(&err);
        spdy_codec_clear(&rx);

        /* an upper-case header name, as Go's framer refuses it */
        struct spdy_codec tx;
        assert_int_equal(spdy_codec_init(&tx, NULL), 0);
        assert_int_equal(spdy_codec_init(&rx, NULL), 0);
        const char *n[] = {"StreamType"}, *v[] = {"stdin"};
        assert_int_equal(spdy_put_syn_stream(&tx, &b, 1, 0, n, v, 1, NULL), 0);
        assert_int_equal(spdy_parse(&rx, b.p, b.len, &f, &need, &err), -1);
        assert_non_null(strstr(ck_error_msg(err), "lower case"));
        ck_error_release(&err);
        spdy_buf_clear(&b);
        spdy_codec_clear(&tx);
        spdy_codec_clear(&rx);

        /* a too short RST_STREAM */
        uint8_t rst[] = {0x80, 0x03, 0x00, 0x03, 0x00, 0x00, 0x00, 0x04, 0, 0, 0, 1};
        assert_int_equal(spdy_codec_init(&rx, NULL), 0);
        assert_int_equal(spdy_parse(&rx, rst, sizeof(rst), &f, &need, &err), -1);
        assert_non_null(strstr(ck_error_msg(err), "too short"));
        ck_error_release(&err);
        spdy_codec_clear(&rx);
}

static void test_status_json(void **state)
{
        (void)state;
        char *s = rc_status_json(0, NULL);
        assert_string_equal(s, "{\"metadata\":{},\"status\":\"Success\"}");
        free(s);
        s = rc_status_json(3, "command terminated with non-zero exit code: x");
        assert_string_equal(s, "{\"metadata\":{},\"status\":\"Failure\",\"message\":\"command "
                               "terminated with non-zero exit code: x\",\"reason\":"
                               "\"NonZeroExitCode\",\"details\":{\"causes\":[{\"reason\":"
                               "\"ExitCode\",\"message\":\"3\"}]}}");
        free(s);
        s = rc_status_json(0, "boom");
        assert_string_equal(s, "{\"metadata\":{},\"status\":\"Failure\",\"message\":\"Internal "
                               "error occurred: boom\",\"reason\":\"InternalError\",\"details\":"
                               "{\"causes\":[{\"message\":\"boom\"}]},\"code\":500}");
        free(s);
}

/* ---- the server, with a runtime fake ------------------------------------- */

struct fake {
        char last_id[64];
        char last_cmd[256];
        _Atomic int dial_fd; /* the other end of what port_dial hands out */
        int resized_w, resized_h;
};

static int write_all(int fd, const void *buf, size_t len)
{
        const char *p = buf;
        while (len > 0) {
                ssize_t w = write(fd, p, len);
                if (w <= 0)
                        return -1;
                p += w;
                len -= (size_t)w;
        }
        return 0;
}

/* exec: "upper" copies stdin to stdout upper-cased, then exits 3;
 * "fail" does not run; "size" waits for a resize and prints it */
static int fake_exec(void *ctx, const char *id, char *const *cmd, struct streaming_io *io,
                     int *exit_code, ck_error_t *err)
{
        struct fake *f = ctx;
        snprintf(f->last_id, sizeof(f->last_id), "%s", id);
        snprintf(f->last_cmd, sizeof(f->last_cmd), "%s", cmd[0]);
        if (strcmp(cmd[0], "fail") == 0)
                return ck_error_make(err, 0, "no such container");
        if (strcmp(cmd[0], "big") == 0) { /* 4 MiB: far more than a socket holds */
                static char chunk[64 * 1024];
                memset(chunk, 'x', sizeof(chunk));
                for (int i = 0; i < 64; i++)
                        if (io->write(io, 1, chunk, sizeof(chunk)) < 0)
                                return ck_error_make(err, 0, "the client went away");
                *exit_code = 0;
                return 0;
        }
        if (strcmp(cmd[0], "tick") == 0) { /* a byte each 100 ms for 1 s */
                for (int i = 0; i < 10; i++) {
                        usleep(100 * 1000);
                        if (io->write(io, 1, ".", 1) < 0)
                                return ck_error_make(err, 0, "the client went away");
                }
                *exit_code = 0;
                return 0;
        }
        if (strcmp(cmd[0], "size") == 0) {
                struct streaming_size sz;
                assert_int_equal(read(io->resize_fd, &sz, sizeof(sz)), sizeof(sz));
                char out[64];
                int n = snprintf(out, sizeof(out), "%u %u", sz.height, sz.width);
                io->write(io, 1, out, (size_t)n);
                *exit_code = 0;
                return 0;
        }
        char buf[4096];
        ssize_t n;
        while ((n = read(io->stdin_fd, buf, sizeof(buf))) > 0) {
                for (ssize_t i = 0; i < n; i++)
                        if (buf[i] >= 'a' && buf[i] <= 'z')
                                buf[i] = (char)(buf[i] - 'a' + 'A');
                io->write(io, 1, buf, (size_t)n);
        }
        io->write(io, 2, "to stderr", 9);
        *exit_code = 3;
        return 0;
}

/* attach: writes until the client goes */
static int fake_attach(void *ctx, const char *id, struct streaming_io *io, ck_error_t *err)
{
        (void)err;
        struct fake *f = ctx;
        snprintf(f->last_id, sizeof(f->last_id), "%s", id);
        io->write(io, 1, "attached", 8);
        struct pollfd p = {.fd = io->done_fd, .events = POLLIN};
        poll(&p, 1, 10000);
        return 0;
}

static int fake_dial(void *ctx, const char *sandbox, int32_t port, int *fd, ck_error_t *err)
{
        struct fake *f = ctx;
        if (port != 8080)
                return ck_error_make(err, ECONNREFUSED, "connect to localhost:%d", port);
        int sp[2];
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
        snprintf(f->last_id, sizeof(f->last_id), "%s", sandbox);
        f->dial_fd = sp[1];
        *fd = sp[0];
        return 0;
}

struct fixture {
        struct fake fake;
        struct streaming_server *s;
};

static int setup_idle(void **state, int64_t idle_ms)
{
        struct fixture *fx = xcalloc(1, sizeof(*fx));
        fx->fake.dial_fd = -1;
        struct streaming_runtime rt = {fake_exec, fake_attach, fake_dial, &fx->fake};
        struct streaming_options o = {.address = "127.0.0.1",
                                      .stream_creation_timeout_ms = 2000,
                                      .stream_idle_timeout_ms = idle_ms};
        ck_error_t err = NULL;
        if (streaming_server_start(&o, &rt, &fx->s, &err) < 0) {
                fprintf(stderr, "%s\n", ck_error_msg(err));
                return -1;
        }
        *state = fx;
        return 0;
}

static int setup(void **state)
{
        return setup_idle(state, 0);
}

static int setup_short_idle(void **state)
{
        return setup_idle(state, 300);
}

static int teardown(void **state)
{
        struct fixture *fx = *state;
        streaming_server_stop(fx->s);
        if (fx->fake.dial_fd >= 0)
                close(fx->fake.dial_fd);
        free(fx);
        return 0;
}

/* A SPDY client of the server, as client-go's is. */
struct client {
        int fd;
        struct spdy_codec codec;
        uint8_t buf[1 << 16];
        size_t len, taken;
        uint32_t next_id;
};

/* The answer's head, a byte at a time (a refusal's body, or the upgraded
 * protocol's bytes, after it). */
static char *read_head(int fd)
{
        char head[4096];
        size_t n = 0;
        while (n < 4 || memcmp(head + n - 4, "\r\n\r\n", 4) != 0) {
                assert_true(n < sizeof(head) - 1);
                ssize_t r = read(fd, head + n, 1);
                if (r <= 0)
                        break;
                n++;
        }
        head[n] = '\0';
        return xstrdup(head);
}

static char *url_path(const char *url)
{
        const char *p = strstr(url + 7, "/");
        return xstrdup(p);
}

/* Sends the upgrade request for url's path; returns the answer's head. */
static char *client_open(struct client *c, struct streaming_server *s, const char *url,
                         const char *protocols, const char *upgrade)
{
        memset(c, 0, sizeof(*c));
        c->next_id = 1;
        char port[16];
        snprintf(port, sizeof(port), "%d", streaming_server_port(s));
        c->fd = net_tcp_dial("127.0.0.1", port, 0, false, NULL);
        assert_true(c->fd >= 0);
        char *path = url_path(url);
        char *req = xasprintf("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\n"
                              "Upgrade: %s\r\n%s%s%sContent-Length: 0\r\n\r\n",
                              path, upgrade, protocols ? "X-Stream-Protocol-Version: " : "",
                              protocols ? protocols : "", protocols ? "\r\n" : "");
        assert_int_equal(write_all(c->fd, req, strlen(req)), 0);
        free(req);
        free(path);
        assert_int_equal(spdy_codec_init(&c->codec, NULL), 0);
        return read_head(c->fd);
}

static void client_close(struct client *c)
{
        close(c->fd);
        spdy_codec_clear(&c->codec);
}

static uint32_t client_stream(struct client *c, const char *type, const char *extra_name,
                              const char *extra_value)
{
        uint32_t id = c->next_id;
        c->next_id += 2;
        const char *names[] = {"streamtype", extra_name}, *values[] = {type, extra_value};
        struct spdy_buf b = {0};
        assert_int_equal(
            spdy_put_syn_stream(&c->codec, &b, id, 0, names, values, extra_name ? 2 : 1, NULL), 0);
        assert_int_equal(write_all(c->fd, b.p, b.len), 0);
        spdy_buf_clear(&b);
        return id;
}

static void client_data(struct client *c, uint32_t id, const char *s, bool fin)
{
        struct spdy_buf b = {0};
        spdy_put_data(&b, id, fin ? SPDY_FLAG_FIN : 0, s, strlen(s));
        assert_int_equal(write_all(c->fd, b.p, b.len), 0);
        spdy_buf_clear(&b);
}

/* The next frame (data borrowed until the next call); 0 at EOF. */
static int client_frame(struct client *c, struct spdy_frame *f)
{
        memmove(c->buf, c->buf + c->taken, c->len - c->taken);
        c->len -= c->taken;
        c->taken = 0;
        for (;;) {
                size_t need;
                ck_error_t err = NULL;
                ssize_t n = spdy_parse(&c->codec, c->buf, c->len, f, &need, &err);
                if (n < 0)
                        fail_msg("%s", ck_error_msg(err));
                if (n > 0) {
                        c->taken = (size_t)n;
                        return 1;
                }
                struct pollfd p = {.fd = c->fd, .events = POLLIN};
                assert_int_equal(poll(&p, 1, 10000), 1);
                ssize_t r = read(c->fd, c->buf + c->len, sizeof(c->buf) - c->len);
                if (r <= 0)
                        return 0;
                c->len += (size_t)r;
        }
}

/* Reads frames until EOF: the replies counted, each stream's data
 * gathered (stdout into out, error into status). */
struct gathered {
        int replies;
        char out[4096], errs[256], status[1024];
        size_t out_len, errs_len, status_len;
        bool goaway;
};

static void gather(struct client *c, uint32_t id_out, uint32_t id_err, uint32_t id_status,
                   struct gathered *g)
{
        memset(g, 0, sizeof(*g));
        struct spdy_frame f;
        while (client_frame(c, &f) == 1) {
                if (f.type == SPDY_SYN_REPLY)
                        g->replies++;
                if (f.type == SPDY_GOAWAY)
                        g->goaway = true;
                if (f.type == SPDY_DATA) {
                        char *dst = f.stream_id == id_out      ? g->out
                                    : f.stream_id == id_err    ? g->errs
                                    : f.stream_id == id_status ? g->status
                                                               : NULL;
                        size_t *len = f.stream_id == id_out   ? &g->out_len
                                      : f.stream_id == id_err ? &g->errs_len
                                                              : &g->status_len;
                        if (dst && f.len > 0) {
                                memcpy(dst + *len, f.data, f.len);
                                *len += f.len;
                                dst[*len] = '\0';
                        }
                }
                spdy_frame_clear(&f);
        }
}

static void test_exec_v4(void **state)
{
        struct fixture *fx = *state;
        char *url = NULL;
        char *cmd[] = {"upper", "x", NULL};
        assert_int_equal(
            streaming_get_exec(fx->s, "ctr1", cmd, false, true, true, true, &url, NULL), 0);
        assert_non_null(strstr(url, "http://127.0.0.1:"));
        assert_non_null(strstr(url, "/exec/"));
        struct client c;
        char *head =
            client_open(&c, fx->s, url, "v4.channel.k8s.io, v3.channel.k8s.io", "SPDY/3.1");
        assert_non_null(strstr(head, "HTTP/1.1 101 "));
        assert_non_null(strstr(head, "X-Stream-Protocol-Version: v4.channel.k8s.io"));
        free(head);
        uint32_t e = client_stream(&c, "error", NULL, NULL);
        uint32_t in = client_stream(&c, "stdin", NULL, NULL);
        uint32_t out = client_stream(&c, "stdout", NULL, NULL);
        uint32_t er = client_stream(&c, "stderr", NULL, NULL);
        client_data(&c, in, "hello ", false);
        client_data(&c, in, "world", true);
        struct gathered g;
        gather(&c, out, er, e, &g);
        assert_int_equal(g.replies, 4);
        assert_string_equal(g.out, "HELLO WORLD");
        assert_string_equal(g.errs, "to stderr");
        assert_non_null(strstr(g.status, "\"reason\":\"NonZeroExitCode\""));
        assert_non_null(strstr(g.status, "\"message\":\"3\""));
        assert_non_null(strstr(g.status, "error executing command [upper x], exit code 3"));
        assert_true(g.goaway);
        assert_string_equal(fx->fake.last_id, "ctr1");
        client_close(&c);

        /* the token was for one use */
        head = client_open(&c, fx->s, url, "v4.channel.k8s.io", "SPDY/3.1");
        assert_non_null(strstr(head, "HTTP/1.1 404 "));
        free(head);
        client_close(&c);
        free(url);
}

static void test_exec_failure_and_old_protocol(void **state)
{
        struct fixture *fx = *state;
        char *url = NULL;
        char *cmd[] = {"fail", NULL};
        /* v4: an InternalError Status */
        assert_int_equal(
            streaming_get_exec(fx->s, "ctr2", cmd, false, false, true, false, &url, NULL), 0);
        struct client c;
        char *head = client_open(&c, fx->s, url, "v4.channel.k8s.io", "SPDY/3.1");
        free(head);
        uint32_t e = client_stream(&c, "error", NULL, NULL);
        uint32_t out = client_stream(&c, "stdout", NULL, NULL);
        struct gathered g;
        gather(&c, out, 0, e, &g);
        assert_non_null(strstr(g.status, "\"reason\":\"InternalError\""));
        assert_non_null(
            strstr(g.status, "error executing command in container: no such container"));
        client_close(&c);
        free(url);

        /* v2: the message as text */
        assert_int_equal(
            streaming_get_exec(fx->s, "ctr2", cmd, false, false, true, false, &url, NULL), 0);
        head = client_open(&c, fx->s, url, "v2.channel.k8s.io", "SPDY/3.1");
        assert_non_null(strstr(head, "X-Stream-Protocol-Version: v2.channel.k8s.io"));
        free(head);
        e = client_stream(&c, "error", NULL, NULL);
        out = client_stream(&c, "stdout", NULL, NULL);
        gather(&c, out, 0, e, &g);
        assert_string_equal(g.status, "Internal error occurred: error executing command in "
                                      "container: no such container");
        client_close(&c);
        free(url);
}

static void test_exec_tty_resize(void **state)
{
        struct fixture *fx = *state;
        char *url = NULL;
        char *cmd[] = {"size", NULL};
        assert_int_equal(
            streaming_get_exec(fx->s, "ctr3", cmd, true, false, true, false, &url, NULL), 0);
        struct client c;
        char *head = client_open(&c, fx->s, url, "v4.channel.k8s.io", "SPDY/3.1");
        free(head);
        uint32_t e = client_stream(&c, "error", NULL, NULL);
        uint32_t out = client_stream(&c, "stdout", NULL, NULL);
        uint32_t rs = client_stream(&c, "resize", NULL, NULL);
        /* a message cut in two frames, as a stream may carry it */
        client_data(&c, rs, "{\"Width\":123,", false);
        client_data(&c, rs, "\"Height\":45}\n", false);
        struct gathered g;
        gather(&c, out, 0, e, &g);
        assert_int_equal(g.replies, 3);
        assert_string_equal(g.out, "45 123");
        assert_string_equal(g.status, "{\"metadata\":{},\"status\":\"Success\"}");
        client_close(&c);
        free(url);
}

static void test_attach_until_client_leaves(void **state)
{
        struct fixture *fx = *state;
        char *url = NULL;
        assert_int_equal(streaming_get_attach(fx->s, "ctr4", false, false, true, true, &url, NULL),
                         0);
        assert_non_null(strstr(url, "/attach/"));
        struct client c;
        char *head = client_open(&c, fx->s, url, "v4.channel.k8s.io", "SPDY/3.1");
        free(head);
        client_stream(&c, "error", NULL, NULL);
        uint32_t out = client_stream(&c, "stdout", NULL, NULL);
        client_stream(&c, "stderr", NULL, NULL);
        struct spdy_frame f;
        char got[64] = "";
        while (got[0] == '\0' && client_frame(&c, &f) == 1) {
                if (f.type == SPDY_DATA && f.stream_id == out)
                        snprintf(got, sizeof(got), "%.*s", (int)f.len, (const char *)f.data);
                spdy_frame_clear(&f);
        }
        assert_string_equal(got, "attached");
        assert_string_equal(fx->fake.last_id, "ctr4");
        /* the client goes: the runtime's call sees done_fd and the server
         * stops without waiting out the fake's 10 s */
        client_close(&c);
        free(url);
}

static void test_port_forward(void **state)
{
        struct fixture *fx = *state;
        char *url = NULL;
        assert_int_equal(streaming_get_port_forward(fx->s, "sb1", NULL, 0, &url, NULL), 0);
        struct client c;
        char *head = client_open(&c, fx->s, url, "portforward.k8s.io", "SPDY/3.1");
        assert_non_null(strstr(head, "HTTP/1.1 101 "));
        free(head);
        /* a stream without a port is reset */
        uint32_t bad = client_stream(&c, "data", NULL, NULL);
        struct spdy_frame f;
        assert_int_equal(client_frame(&c, &f), 1);
        assert_int_equal(f.type, SPDY_RST_STREAM);
        assert_int_equal(f.stream_id, bad);
        spdy_frame_clear(&f);

        /* a port nobody listens on: the message on the error stream */
        const char *names[] = {"streamtype", "port", "requestid"};
        const char *ev[] = {"error", "9999", "1"}, *dv[] = {"data", "9999", "1"};
        struct spdy_buf b = {0};
        uint32_t e1 = c.next_id, d1 = c.next_id + 2;
        c.next_id += 4;
        spdy_put_syn_stream(&c.codec, &b, e1, 0, names, ev, 3, NULL);
        spdy_put_syn_stream(&c.codec, &b, d1, 0, names, dv, 3, NULL);
        assert_int_equal(write_all(c.fd, b.p, b.len), 0);
        spdy_buf_clear(&b);
        char msg[512] = "";
        bool error_fin = false;
        while (!error_fin && client_frame(&c, &f) == 1) {
                if (f.type == SPDY_DATA && f.stream_id == e1) {
                        snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), "%.*s", (int)f.len,
                                 (const char *)f.data);
                        error_fin = f.flags & SPDY_FLAG_FIN;
                }
                spdy_frame_clear(&f);
        }
        assert_string_equal(msg, "error forwarding port 9999 to pod sb1, uid : connect to "
                                 "localhost:9999: Connection refused");

        /* port 8080: bytes both ways */
        const char *ev2[] = {"error", "8080", "2"}, *dv2[] = {"data", "8080", "2"};
        uint32_t e2 = c.next_id, d2 = c.next_id + 2;
        c.next_id += 4;
        spdy_put_syn_stream(&c.codec, &b, e2, 0, names, ev2, 3, NULL);
        spdy_put_syn_stream(&c.codec, &b, d2, 0, names, dv2, 3, NULL);
        assert_int_equal(write_all(c.fd, b.p, b.len), 0);
        spdy_buf_clear(&b);
        client_data(&c, d2, "ping", false);
        /* the pair's replies, then the forwarded bytes reach the "pod" */
        char in[16] = "";
        for (int replies = 0; replies < 2 && client_frame(&c, &f) == 1;) {
                replies += f.type == SPDY_SYN_REPLY;
                spdy_frame_clear(&f);
        }
        /* the dial follows the replies on the server's thread */
        for (int i = 0; i < 500 && fx->fake.dial_fd < 0; i++)
                usleep(10 * 1000);
        assert_true(fx->fake.dial_fd >= 0);
        assert_int_equal(read(fx->fake.dial_fd, in, 4), 4);
        assert_string_equal(in, "ping");
        assert_int_equal(write_all(fx->fake.dial_fd, "pong", 4), 0);
        close(fx->fake.dial_fd);
        fx->fake.dial_fd = -1;
        char back[16] = "";
        bool data_fin = false;
        while (!data_fin && client_frame(&c, &f) == 1) {
                if (f.type == SPDY_DATA && f.stream_id == d2) {
                        snprintf(back + strlen(back), sizeof(back) - strlen(back), "%.*s",
                                 (int)f.len, (const char *)f.data);
                        data_fin = f.flags & SPDY_FLAG_FIN;
                }
                spdy_frame_clear(&f);
        }
        assert_string_equal(back, "pong");
        assert_string_equal(fx->fake.last_id, "sb1");
        client_close(&c);
        free(url);
}

static void test_refusals(void **state)
{
        struct fixture *fx = *state;
        char *url = NULL;
        ck_error_t err = NULL;
        char *cmd[] = {"upper", NULL};
        char *none[] = {NULL};
        assert_int_equal(streaming_get_exec(fx->s, "c", cmd, true, true, true, true, &url, &err),
                         -1);
        assert_int_equal(err->code, GRPC_INVALID_ARGUMENT);
        assert_string_equal(ck_error_msg(err), "tty and stderr cannot both be true");
        ck_error_release(&err);
        assert_int_equal(
            streaming_get_exec(fx->s, "c", cmd, false, false, false, false, &url, &err), -1);
        assert_string_equal(ck_error_msg(err), "one of stdin, stdout, or stderr must be set");
        ck_error_release(&err);
        assert_int_equal(
            streaming_get_exec(fx->s, "c", none, false, false, true, false, &url, &err), -1);
        assert_int_equal(err->code, GRPC_INVALID_ARGUMENT);
        ck_error_release(&err);
        assert_int_equal(streaming_get_port_forward(fx->s, "", NULL, 0, &url, &err), -1);
        assert_string_equal(ck_error_msg(err), "missing required pod_sandbox_id");
        ck_error_release(&err);

        /* a protocol the server does not speak: 403 and what it accepts */
        assert_int_equal(streaming_get_exec(fx->s, "c", cmd, false, false, true, false, &url, NULL),
                         0);
        struct client c;
        char *head = client_open(&c, fx->s, url, "v9.channel.k8s.io", "SPDY/3.1");
        assert_non_null(strstr(head, "HTTP/1.1 403 "));
        assert_non_null(strstr(head, "X-Accepted-Stream-Protocol-Versions: v4.channel.k8s.io"));
        free(head);
        client_close(&c);
        free(url);
        /* WebSocket: a GET only */
        assert_int_equal(streaming_get_exec(fx->s, "c", cmd, false, false, true, false, &url, NULL),
                         0);
        head = client_open(&c, fx->s, url, "v4.channel.k8s.io", "websocket");
        assert_non_null(strstr(head, "HTTP/1.1 405 "));
        free(head);
        client_close(&c);
        free(url);
        /* an exec token on the attach path is no attach token */
        assert_int_equal(streaming_get_exec(fx->s, "c", cmd, false, false, true, false, &url, NULL),
                         0);
        char *swapped = xstrdup(url);
        memcpy(strstr(swapped, "/exec/"), "/xxxx/", 6);
        char *attach = xasprintf("%.*sattach/%s", (int)(strstr(swapped, "xxxx/") - swapped),
                                 swapped, strstr(swapped, "xxxx/") + 5);
        head = client_open(&c, fx->s, attach, "v4.channel.k8s.io", "SPDY/3.1");
        assert_non_null(strstr(head, "HTTP/1.1 404 "));
        free(head);
        client_close(&c);
        free(attach);
        free(swapped);
        free(url);
}

static void test_exec_large_output(void **state)
{
        struct fixture *fx = *state;
        char *url = NULL;
        char *cmd[] = {"big", NULL};
        assert_int_equal(
            streaming_get_exec(fx->s, "ctr5", cmd, false, false, true, false, &url, NULL), 0);
        struct client c;
        char *head = client_open(&c, fx->s, url, "v4.channel.k8s.io", "SPDY/3.1");
        free(head);
        uint32_t e = client_stream(&c, "error", NULL, NULL);
        uint32_t out = client_stream(&c, "stdout", NULL, NULL);
        /* read slowly at first, so that the server's socket fills up */
        usleep(300 * 1000);
        size_t got = 0;
        char status[256] = "";
        struct spdy_frame f;
        while (client_frame(&c, &f) == 1) {
                if (f.type == SPDY_DATA && f.stream_id == out)
                        got += f.len;
                if (f.type == SPDY_DATA && f.stream_id == e && f.len > 0)
                        snprintf(status, sizeof(status), "%.*s", (int)f.len, (const char *)f.data);
                spdy_frame_clear(&f);
        }
        assert_int_equal(got, 64 * 64 * 1024);
        assert_string_equal(status, "{\"metadata\":{},\"status\":\"Success\"}");
        client_close(&c);
        free(url);
}

static void test_idle_session_ends(void **state)
{
        struct fixture *fx = *state;
        char *url = NULL;
        assert_int_equal(streaming_get_attach(fx->s, "ctr6", false, false, true, false, &url, NULL),
                         0);
        struct client c;
        char *head = client_open(&c, fx->s, url, "v4.channel.k8s.io", "SPDY/3.1");
        free(head);
        client_stream(&c, "error", NULL, NULL);
        client_stream(&c, "stdout", NULL, NULL);
        /* the client says nothing more: after the idle timeout (300 ms
         * here) the session ends and the server closes the connection */
        struct spdy_frame f;
        int frames = 0;
        while (client_frame(&c, &f) == 1) {
                frames++;
                spdy_frame_clear(&f);
        }
        assert_true(frames >= 3); /* the replies and the attach's output at least */
        client_close(&c);
        free(url);
}

/* What the server writes counts too: a command whose output comes every
 * 100 ms outlives the 300 ms idle timeout while the client says nothing. */
static void test_idle_counts_output(void **state)
{
        struct fixture *fx = *state;
        char *url = NULL;
        char *cmd[] = {"tick", NULL};
        assert_int_equal(
            streaming_get_exec(fx->s, "ctr7", cmd, false, false, true, false, &url, NULL), 0);
        struct client c;
        char *head = client_open(&c, fx->s, url, "v4.channel.k8s.io", "SPDY/3.1");
        free(head);
        uint32_t e = client_stream(&c, "error", NULL, NULL);
        uint32_t out = client_stream(&c, "stdout", NULL, NULL);
        struct gathered g;
        gather(&c, out, 0, e, &g);
        assert_string_equal(g.out, "..........");
        assert_string_equal(g.status, "{\"metadata\":{},\"status\":\"Success\"}");
        client_close(&c);
        free(url);
}

/* ---- WebSocket -------------------------------------------------------- */

static void test_ws_accept_key(void **state)
{
        (void)state;
        /* RFC 6455 section 1.3's example */
        char *a = ws_accept_key("dGhlIHNhbXBsZSBub25jZQ==");
        assert_string_equal(a, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
        free(a);
}

/* A client's frame: masked, as RFC 6455 requires of clients. */
static size_t ws_frame(uint8_t *out, uint8_t opcode, bool fin, const void *data, size_t len)
{
        static const uint8_t mask[4] = {0x11, 0x22, 0x33, 0x44};
        size_t n = 0;
        out[n++] = (uint8_t)((fin ? 0x80 : 0) | opcode);
        if (len < 126) {
                out[n++] = (uint8_t)(0x80 | len);
        } else {
                out[n++] = 0x80 | 126;
                out[n++] = (uint8_t)(len >> 8);
                out[n++] = (uint8_t)len;
        }
        memcpy(out + n, mask, 4);
        n += 4;
        for (size_t i = 0; i < len; i++)
                out[n + i] = ((const uint8_t *)data)[i] ^ mask[i & 3];
        return n + len;
}

static void test_ws_parse_frame(void **state)
{
        (void)state;
        uint8_t b[512];
        struct ws_frame f;
        size_t need = 0;
        ck_error_t err = NULL;
        size_t n = ws_frame(b, 0x2, true, "\x00hello", 6);
        /* cut short: how much is needed */
        assert_int_equal(ws_parse_frame(b, 1, &f, &need, NULL), 0);
        assert_int_equal(need, 2);
        assert_int_equal(ws_parse_frame(b, n - 1, &f, &need, NULL), 0);
        assert_int_equal(need, n);
        assert_int_equal(ws_parse_frame(b, n, &f, &need, NULL), (ssize_t)n);
        assert_true(f.fin);
        assert_int_equal(f.opcode, 2);
        assert_int_equal(f.len, 6);
        assert_memory_equal(f.data, "\x00hello", 6);
        /* a 16-bit length */
        char big[300];
        memset(big, 'z', sizeof(big));
        n = ws_frame(b, 0x2, false, big, sizeof(big));
        assert_int_equal(ws_parse_frame(b, n, &f, &need, NULL), (ssize_t)n);
        assert_false(f.fin);
        assert_int_equal(f.len, 300);
        assert_memory_equal(f.data, big, 300);
        /* not masked */
        uint8_t plain[] = {0x82, 0x01, 0x00};
        assert_int_equal(ws_parse_frame(plain, sizeof(plain), &f, &need, &err), -1);
        assert_non_null(strstr(ck_error_msg(err), "not masked"));
        ck_error_release(&err);
        /* a control frame in fragments, or over 125 bytes */
        n = ws_frame(b, 0x9, false, "x", 1);
        assert_int_equal(ws_parse_frame(b, n, &f, &need, &err), -1);
        ck_error_release(&err);
        n = ws_frame(b, 0x9, true, big, 126);
        assert_int_equal(ws_parse_frame(b, n, &f, &need, &err), -1);
        ck_error_release(&err);
        /* reserved bits, an unknown opcode */
        n = ws_frame(b, 0x2, true, "a", 1);
        b[0] |= 0x40;
        assert_int_equal(ws_parse_frame(b, n, &f, &need, &err), -1);
        ck_error_release(&err);
        n = ws_frame(b, 0x3, true, "a", 1);
        assert_int_equal(ws_parse_frame(b, n, &f, &need, &err), -1);
        ck_error_release(&err);
        /* a length over 1 MiB, refused from its head */
        uint8_t huge[] = {0x82, 0xff, 0, 0, 0, 0, 0, 0x20, 0, 0, 1, 2, 3, 4};
        assert_int_equal(ws_parse_frame(huge, sizeof(huge), &f, &need, &err), -1);
        ck_error_release(&err);
}

/* A WebSocket client of the server, as client-go's is. */
struct wsclient {
        int fd;
        uint8_t buf[1 << 16];
        size_t len;
};

/* GETs url's path with the upgrade (protocols: the Sec-WebSocket-Protocol
 * value, or NULL; version: Sec-WebSocket-Version); the answer's head. */
static char *ws_open(struct wsclient *c, struct streaming_server *s, const char *url,
                     const char *protocols, const char *version)
{
        memset(c, 0, sizeof(*c));
        char port[16];
        snprintf(port, sizeof(port), "%d", streaming_server_port(s));
        c->fd = net_tcp_dial("127.0.0.1", port, 0, false, NULL);
        assert_true(c->fd >= 0);
        char *path = url_path(url);
        char *req =
            xasprintf("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\n"
                      "Upgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                      "Sec-WebSocket-Version: %s\r\n%s%s%s\r\n",
                      path, version, protocols ? "Sec-WebSocket-Protocol: " : "",
                      protocols ? protocols : "", protocols ? "\r\n" : "");
        assert_int_equal(write_all(c->fd, req, strlen(req)), 0);
        free(req);
        free(path);
        return read_head(c->fd);
}

static void ws_send(struct wsclient *c, uint8_t opcode, bool fin, const void *data, size_t len)
{
        uint8_t *b = xmalloc(len + 16);
        size_t n = ws_frame(b, opcode, fin, data, len);
        assert_int_equal(write_all(c->fd, b, n), 0);
        free(b);
}

/* A binary message on a channel. */
static void ws_send_ch(struct wsclient *c, uint8_t ch, const char *s)
{
        char b[1024];
        b[0] = (char)ch;
        memcpy(b + 1, s, strlen(s));
        ws_send(c, 0x2, true, b, strlen(s) + 1);
}

/* The server's next frame (unmasked, whole): 1 with its opcode and
 * payload (NUL-terminated), 0 at EOF. */
static int ws_recv(struct wsclient *c, uint8_t *opcode, char *payload, size_t cap, size_t *len)
{
        for (;;) {
                if (c->len >= 2) {
                        assert_int_equal(c->buf[1] & 0x80, 0);
                        size_t pl = c->buf[1] & 0x7f, hl = 2;
                        if (pl == 126 && c->len >= 4) {
                                pl = (size_t)c->buf[2] << 8 | c->buf[3];
                                hl = 4;
                        }
                        assert_true(pl != 127);
                        if (!(pl == 126 && hl == 2) && c->len >= hl + pl) {
                                assert_true(pl < cap);
                                *opcode = c->buf[0] & 0x0f;
                                memcpy(payload, c->buf + hl, pl);
                                payload[pl] = '\0';
                                *len = pl;
                                memmove(c->buf, c->buf + hl + pl, c->len - hl - pl);
                                c->len -= hl + pl;
                                return 1;
                        }
                }
                struct pollfd p = {.fd = c->fd, .events = POLLIN};
                assert_int_equal(poll(&p, 1, 10000), 1);
                ssize_t r = read(c->fd, c->buf + c->len, sizeof(c->buf) - c->len);
                if (r <= 0)
                        return 0;
                c->len += (size_t)r;
        }
}

/* Messages until the server's close: each channel's bytes gathered
 * (channels 0..4), the close's code. */
struct ws_gathered {
        char ch[5][4096];
        size_t len[5];
        int first_channel; /* the first message's, -1 none */
        size_t first_len;
        int close_code;
        bool pong;
};

static void ws_gather(struct wsclient *c, bool base64, struct ws_gathered *g)
{
        memset(g, 0, sizeof(*g));
        g->first_channel = -1;
        g->close_code = -1;
        static char payload[1 << 16];
        uint8_t op;
        size_t len;
        while (ws_recv(c, &op, payload, sizeof(payload), &len) == 1) {
                if (op == 0xa) {
                        g->pong = true;
                        continue;
                }
                if (op == 0x8) {
                        g->close_code =
                            len >= 2 ? ((uint8_t)payload[0] << 8 | (uint8_t)payload[1]) : 0;
                        ws_send(c, 0x8, true, payload, len);
                        continue;
                }
                assert_true(len >= 1);
                assert_int_equal(op, base64 ? 0x1 : 0x2);
                int ch = base64 ? payload[0] - '0' : (uint8_t)payload[0];
                assert_true(ch >= 0 && ch < 5);
                char *data = payload + 1;
                size_t dl = len - 1;
                char *decoded = NULL;
                if (base64) {
                        assert_int_equal(base64_decode(data, dl, 0, &decoded, &dl, NULL), 0);
                        data = decoded;
                }
                if (g->first_channel < 0) {
                        g->first_channel = ch;
                        g->first_len = dl;
                }
                memcpy(g->ch[ch] + g->len[ch], data, dl);
                g->len[ch] += dl;
                g->ch[ch][g->len[ch]] = '\0';
                free(decoded);
        }
}

static void test_ws_exec_v5(void **state)
{
        struct fixture *fx = *state;
        char *url = NULL;
        char *cmd[] = {"upper", "x", NULL};
        assert_int_equal(
            streaming_get_exec(fx->s, "ctr1", cmd, false, true, true, true, &url, NULL), 0);
        struct wsclient c;
        char *head = ws_open(&c, fx->s, url, "v5.channel.k8s.io, v4.channel.k8s.io", "13");
        assert_non_null(strstr(head, "HTTP/1.1 101 "));
        assert_non_null(strstr(head, "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"));
        assert_non_null(strstr(head, "Sec-WebSocket-Protocol: v5.channel.k8s.io\r\n"));
        free(head);
        /* a ping, answered; stdin in a message of two fragments, then
         * another; then v5's close of stdin ends the command's input */
        ws_send(&c, 0x9, true, "hb", 2);
        ws_send(&c, 0x2, false, "\x00hel", 4);
        ws_send(&c, 0x0, true, "lo ", 3);
        ws_send_ch(&c, 0, "world");
        ws_send(&c, 0x2, true, "\xff\x00", 2);
        struct ws_gathered g;
        ws_gather(&c, false, &g);
        assert_true(g.pong);
        /* upstream's first message: stdout's, empty */
        assert_int_equal(g.first_channel, 1);
        assert_int_equal(g.first_len, 0);
        assert_string_equal(g.ch[1], "HELLO WORLD");
        assert_string_equal(g.ch[2], "to stderr");
        assert_non_null(strstr(g.ch[3], "\"reason\":\"NonZeroExitCode\""));
        assert_non_null(strstr(g.ch[3], "\"message\":\"3\""));
        assert_int_equal(g.close_code, 1000);
        assert_string_equal(fx->fake.last_id, "ctr1");
        close(c.fd);
        free(url);
}

static void test_ws_exec_base64_v1_failure(void **state)
{
        struct fixture *fx = *state;
        char *url = NULL;
        char *cmd[] = {"fail", NULL};
        assert_int_equal(
            streaming_get_exec(fx->s, "ctr2", cmd, false, false, true, false, &url, NULL), 0);
        struct wsclient c;
        char *head = ws_open(&c, fx->s, url, "base64.channel.k8s.io", "13");
        assert_non_null(strstr(head, "Sec-WebSocket-Protocol: base64.channel.k8s.io\r\n"));
        free(head);
        struct ws_gathered g;
        ws_gather(&c, true, &g);
        /* channel.k8s.io's end: the failure's message as text */
        assert_string_equal(g.ch[3], "Internal error occurred: error executing command in "
                                     "container: no such container");
        assert_int_equal(g.close_code, 1000);
        close(c.fd);
        free(url);
}

static void test_ws_exec_tty_resize(void **state)
{
        struct fixture *fx = *state;
        char *url = NULL;
        char *cmd[] = {"size", NULL};
        assert_int_equal(
            streaming_get_exec(fx->s, "ctr3", cmd, true, false, true, false, &url, NULL), 0);
        struct wsclient c;
        /* no protocol named: upstream's "" (channel.k8s.io, binary) */
        char *head = ws_open(&c, fx->s, url, NULL, "13");
        assert_non_null(strstr(head, "HTTP/1.1 101 "));
        assert_null(strstr(head, "Sec-WebSocket-Protocol"));
        free(head);
        ws_send_ch(&c, 4, "{\"Width\":123,\"Height\":45}");
        struct ws_gathered g;
        ws_gather(&c, false, &g);
        assert_string_equal(g.ch[1], "45 123");
        assert_int_equal(g.len[3], 0); /* v1: nothing on success */
        close(c.fd);
        free(url);
}

static void test_ws_port_forward(void **state)
{
        struct fixture *fx = *state;
        char *url = NULL;
        int32_t ports[] = {8080, 9999};
        assert_int_equal(streaming_get_port_forward(fx->s, "sb1", ports, 2, &url, NULL), 0);
        struct wsclient c;
        char *head = ws_open(&c, fx->s, url, "v4.channel.k8s.io", "13");
        assert_non_null(strstr(head, "HTTP/1.1 101 "));
        assert_non_null(strstr(head, "Sec-WebSocket-Protocol: v4.channel.k8s.io\r\n"));
        free(head);
        static char payload[1 << 16];
        uint8_t op;
        size_t len;
        /* each channel opens with its port, little-endian */
        const char *want[] = {"\x00\x90\x1f", "\x01\x90\x1f", "\x02\x0f\x27", "\x03\x0f\x27"};
        for (int i = 0; i < 4; i++) {
                assert_int_equal(ws_recv(&c, &op, payload, sizeof(payload), &len), 1);
                assert_int_equal(op, 0x2);
                assert_int_equal(len, 3);
                assert_memory_equal(payload, want[i], 3);
        }
        /* 9999: its error channel says why */
        assert_int_equal(ws_recv(&c, &op, payload, sizeof(payload), &len), 1);
        assert_int_equal(payload[0], 3);
        assert_string_equal(payload + 1, "error forwarding port 9999 to pod sb1, uid : connect to "
                                         "localhost:9999: Connection refused");
        /* 8080: bytes both ways on channel 0 */
        ws_send_ch(&c, 0, "ping");
        char got[8] = "";
        size_t n = 0;
        while (n < 4) {
                ssize_t r = read(fx->fake.dial_fd, got + n, 4 - n);
                assert_true(r > 0);
                n += (size_t)r;
        }
        assert_string_equal(got, "ping");
        assert_int_equal(write_all(fx->fake.dial_fd, "pong", 4), 0);
        assert_int_equal(ws_recv(&c, &op, payload, sizeof(payload), &len), 1);
        assert_int_equal(len, 5);
        assert_memory_equal(payload, "\x00pong", 5);
        /* the pod closes its side: every port is done, the server closes */
        close(fx->fake.dial_fd);
        fx->fake.dial_fd = -1;
        assert_int_equal(ws_recv(&c, &op, payload, sizeof(payload), &len), 1);
        assert_int_equal(op, 0x8);
        close(c.fd);
        free(url);
}

/* The client closes first: its close is answered with its code, and
 * nothing follows (no status after the close). */
static void test_ws_client_closes(void **state)
{
        struct fixture *fx = *state;
        char *url = NULL;
        assert_int_equal(streaming_get_attach(fx->s, "ctr4", false, false, true, true, &url, NULL),
                         0);
        struct wsclient c;
        char *head = ws_open(&c, fx->s, url, "v5.channel.k8s.io", "13");
        assert_non_null(strstr(head, "HTTP/1.1 101 "));
        free(head);
        static char payload[1 << 16];
        uint8_t op;
        size_t len;
        /* the empty first message, then the attach's output */
        assert_int_equal(ws_recv(&c, &op, payload, sizeof(payload), &len), 1);
        assert_int_equal(len, 1);
        assert_int_equal(ws_recv(&c, &op, payload, sizeof(payload), &len), 1);
        assert_string_equal(payload + 1, "attached");
        ws_send(&c, 0x8, true, "\x03\xe9", 2); /* 1001: going away */
        assert_int_equal(ws_recv(&c, &op, payload, sizeof(payload), &len), 1);
        assert_int_equal(op, 0x8);
        assert_int_equal(len, 2);
        assert_memory_equal(payload, "\x03\xe9", 2);
        /* and then the end, no frame after the close */
        assert_int_equal(ws_recv(&c, &op, payload, sizeof(payload), &len), 0);
        close(c.fd);
        free(url);
}

/* The idle timeout counts what the server writes too: a command whose
 * output comes every 100 ms outlives an idle timeout of 300 ms while the
 * client says nothing; a silent session ends after it. */
static void test_ws_idle_counts_output(void **state)
{
        struct fixture *fx = *state;
        char *url = NULL;
        char *cmd[] = {"tick", NULL};
        assert_int_equal(
            streaming_get_exec(fx->s, "ctr7", cmd, false, false, true, false, &url, NULL), 0);
        struct wsclient c;
        char *head = ws_open(&c, fx->s, url, "v4.channel.k8s.io", "13");
        free(head);
        struct ws_gathered g;
        ws_gather(&c, false, &g);
        assert_string_equal(g.ch[1], "..........");
        assert_string_equal(g.ch[3], "{\"metadata\":{},\"status\":\"Success\"}");
        close(c.fd);
        free(url);

        /* the attach writes once, then waits: the session ends */
        assert_int_equal(streaming_get_attach(fx->s, "ctr8", false, false, true, false, &url, NULL),
                         0);
        head = ws_open(&c, fx->s, url, "v4.channel.k8s.io", "13");
        free(head);
        static char payload[1 << 16];
        uint8_t op;
        size_t len;
        int frames = 0;
        while (ws_recv(&c, &op, payload, sizeof(payload), &len) == 1)
                frames++;
        assert_true(frames >= 2); /* the first message and "attached" */
        close(c.fd);
        free(url);
}

/* base64.channel.k8s.io: a message that does not decode is dropped and the
 * session goes on (upstream's reader logs it and continues). */
static void test_ws_base64_bad_message_dropped(void **state)
{
        struct fixture *fx = *state;
        char *url = NULL;
        char *cmd[] = {"size", NULL};
        assert_int_equal(
            streaming_get_exec(fx->s, "ctr9", cmd, true, false, true, false, &url, NULL), 0);
        struct wsclient c;
        char *head = ws_open(&c, fx->s, url, "v4.base64.channel.k8s.io", "13");
        assert_non_null(strstr(head, "Sec-WebSocket-Protocol: v4.base64.channel.k8s.io\r\n"));
        free(head);
        ws_send(&c, 0x1, true, "4!!!", 4);
        const char *resize = "4eyJXaWR0aCI6MywiSGVpZ2h0Ijo0fQ=="; /* {"Width":3,"Height":4} */
        ws_send(&c, 0x1, true, resize, strlen(resize));
        struct ws_gathered g;
        ws_gather(&c, true, &g);
        assert_string_equal(g.ch[1], "4 3");
        assert_string_equal(g.ch[3], "{\"metadata\":{},\"status\":\"Success\"}");
        close(c.fd);
        free(url);
}

static void test_ws_refusals(void **state)
{
        struct fixture *fx = *state;
        char *url = NULL;
        char *cmd[] = {"upper", NULL};
        struct wsclient c;
        /* a protocol it does not speak */
        assert_int_equal(streaming_get_exec(fx->s, "c", cmd, false, false, true, false, &url, NULL),
                         0);
        char *head = ws_open(&c, fx->s, url, "v9.channel.k8s.io", "13");
        assert_non_null(strstr(head, "HTTP/1.1 403 "));
        free(head);
        close(c.fd);
        free(url);
        /* another WebSocket version: 400, and the one it speaks */
        assert_int_equal(streaming_get_exec(fx->s, "c", cmd, false, false, true, false, &url, NULL),
                         0);
        head = ws_open(&c, fx->s, url, "v5.channel.k8s.io", "8");
        assert_non_null(strstr(head, "HTTP/1.1 400 "));
        assert_non_null(strstr(head, "Sec-WebSocket-Version: 13\r\n"));
        free(head);
        close(c.fd);
        free(url);
        /* port-forward has no v5 */
        int32_t port = 8080;
        assert_int_equal(streaming_get_port_forward(fx->s, "sb", &port, 1, &url, NULL), 0);
        head = ws_open(&c, fx->s, url, "v5.channel.k8s.io", "13");
        assert_non_null(strstr(head, "HTTP/1.1 403 "));
        free(head);
        close(c.fd);
        free(url);
        /* an unmasked frame ends the session (the command's stdin closed,
         * the connection with it) */
        assert_int_equal(streaming_get_exec(fx->s, "c", cmd, false, true, true, false, &url, NULL),
                         0);
        head = ws_open(&c, fx->s, url, "v4.channel.k8s.io", "13");
        assert_non_null(strstr(head, "HTTP/1.1 101 "));
        free(head);
        uint8_t plain[] = {0x82, 0x02, 0x00, 'a'};
        assert_int_equal(write_all(c.fd, plain, sizeof(plain)), 0);
        static char payload[1 << 16];
        uint8_t op;
        size_t len;
        int frames = 0;
        while (ws_recv(&c, &op, payload, sizeof(payload), &len) == 1)
                frames++;
        assert_true(frames < 10); /* and it ended */
        close(c.fd);
        free(url);
}

static void test_send_watch_gives_up(void **state)
{
        (void)state;
        int sp[2], watch[2];
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, watch), 0);
        /* nobody reads sp[1]: the send waits until watch hangs up */
        shutdown(watch[1], SHUT_RDWR);
        static char big[8 * 1024 * 1024];
        errno = 0;
        assert_int_equal(net_send_all_watch(sp[0], big, sizeof(big), watch[0]), -1);
        assert_int_equal(errno, ECONNRESET);
        for (int i = 0; i < 2; i++) {
                close(sp[i]);
                close(watch[i]);
        }
        /* with room, all of it goes */
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
        assert_int_equal(net_send_all_watch(sp[0], "abc", 3, -1), 0);
        char got[4] = "";
        assert_int_equal(read(sp[1], got, 3), 3);
        assert_string_equal(got, "abc");
        close(sp[0]);
        close(sp[1]);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_dictionary),
            cmocka_unit_test(test_frames_round_trip),
            cmocka_unit_test(test_frames_partial_and_bad),
            cmocka_unit_test(test_status_json),
            cmocka_unit_test_setup_teardown(test_exec_v4, setup, teardown),
            cmocka_unit_test_setup_teardown(test_exec_failure_and_old_protocol, setup, teardown),
            cmocka_unit_test_setup_teardown(test_exec_tty_resize, setup, teardown),
            cmocka_unit_test_setup_teardown(test_attach_until_client_leaves, setup, teardown),
            cmocka_unit_test_setup_teardown(test_port_forward, setup, teardown),
            cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
            cmocka_unit_test_setup_teardown(test_exec_large_output, setup, teardown),
            cmocka_unit_test_setup_teardown(test_idle_session_ends, setup_short_idle, teardown),
            cmocka_unit_test_setup_teardown(test_idle_counts_output, setup_short_idle, teardown),
            cmocka_unit_test(test_ws_accept_key),
            cmocka_unit_test(test_ws_parse_frame),
            cmocka_unit_test_setup_teardown(test_ws_exec_v5, setup, teardown),
            cmocka_unit_test_setup_teardown(test_ws_exec_base64_v1_failure, setup, teardown),
            cmocka_unit_test_setup_teardown(test_ws_exec_tty_resize, setup, teardown),
            cmocka_unit_test_setup_teardown(test_ws_port_forward, setup, teardown),
            cmocka_unit_test_setup_teardown(test_ws_refusals, setup, teardown),
            cmocka_unit_test_setup_teardown(test_ws_client_closes, setup, teardown),
            cmocka_unit_test_setup_teardown(test_ws_idle_counts_output, setup_short_idle, teardown),
            cmocka_unit_test_setup_teardown(test_ws_base64_bad_message_dropped, setup, teardown),
            cmocka_unit_test(test_send_watch_gives_up),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
