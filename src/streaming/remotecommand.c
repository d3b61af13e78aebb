/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Exec and attach over SPDY: the server side of Kubernetes' remote command
 * protocols, as upstream's pkg/cri/streaming/remotecommand (httpstream.go,
 * exec.go, attach.go).
 *
 * The client opens one stream per channel (header "streamtype": error,
 * stdin, stdout, stderr, resize); once all that the request named are
 * there, the runtime runs with them.  Its end is written on the error
 * stream: v4 a metav1.Status in JSON (Success, or Failure with reason
 * NonZeroExitCode and the code as a cause, or InternalError), earlier
 * protocols the failure's message as text.
 *
 * Threads: the connection's handler thread waits for the streams and then
 * runs the runtime's call; a reader thread takes the client's frames: stdin
 * into a socket pair the runtime reads, resize messages into another,
 * pings answered, the end of the connection made the runtime's done_fd.
 */
#include "streaming/streaming_internal.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/netutil.h"
#include "util/xalloc.h"

#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* How long the client may take to close the connection after the session's
 * end was sent, before it is closed under it. */
#define RC_LINGER_MS 10000
#define RC_RESIZE_MAX 4096

/* The channels, numbered as on a WebSocket (upstream's remotecommand
 * channel constants). */
enum { CH_STDIN = 0, CH_STDOUT = 1, CH_STDERR = 2, CH_ERROR = 3, CH_RESIZE = 4 };

struct rc_session {
        struct streaming_io io; /* first: the runtime's callbacks get &io */
        int fd;                 /* the connection's socket */
        struct spdy_conn *spdy; /* the transport: one of these two */
        struct ws_conn *ws;
        int version; /* 1..5 */
        /* SPDY: the client's streams, 0 for one it did not open */
        uint32_t id_error, id_stdin, id_stdout, id_stderr, id_resize;
        /* WebSocket: the channels the request has (upstream's createChannels) */
        bool has_stdout, has_stderr;
        int stdin_w, resize_w; /* the reader thread's ends; -1 when closed */
        char resize_buf[RC_RESIZE_MAX];
        size_t resize_len;
        bool resize_broken;
};

static void close_fd(int *fd)
{
        if (*fd >= 0)
                close(*fd);
        *fd = -1;
}

static bool conn_broken(const struct rc_session *s)
{
        return atomic_load(s->ws ? &s->ws->broken : &s->spdy->broken);
}

/* Sends on one of our channels (stdout, stderr, error); a channel the
 * client did not open drops it, as upstream's.  0, or -1 once the client
 * is gone. */
static int send_channel(struct rc_session *s, int ch, const void *buf, size_t len)
{
        if (s->ws) {
                bool has = ch == CH_ERROR || (ch == CH_STDOUT && s->has_stdout) ||
                           (ch == CH_STDERR && s->has_stderr);
                if (!has)
                        return conn_broken(s) ? -1 : 0;
                return ws_conn_write(s->ws, (uint8_t)ch, buf, len);
        }
        uint32_t id = ch == CH_ERROR ? s->id_error : ch == CH_STDERR ? s->id_stderr : s->id_stdout;
        if (id == 0)
                return conn_broken(s) ? -1 : 0;
        return spdy_conn_data(s->spdy, id, buf, len, false);
}

static int io_write(struct streaming_io *io, int stream, const void *buf, size_t len)
{
        struct rc_session *s = (struct rc_session *)io;
        if (len == 0)
                return 0;
        return send_channel(s, stream == 2 ? CH_STDERR : CH_STDOUT, buf, len);
}

char *rc_status_json(int exit_code, const char *message)
{
        json_t *st = json_object();
        json_object_set_new(st, "metadata", json_object());
        if (message == NULL) {
                json_object_set_new(st, "status", json_string("Success"));
        } else if (exit_code > 0) {
                cleanup_free char *code = xasprintf("%d", exit_code);
                json_object_set_new(st, "status", json_string("Failure"));
                json_object_set_new(st, "message", json_string(message));
                json_object_set_new(st, "reason", json_string("NonZeroExitCode"));
                json_object_set_new(
                    st, "details",
                    json_pack("{s:[{s:s,s:s}]}", "causes", "reason", "ExitCode", "message", code));
        } else {
                cleanup_free char *msg = xasprintf("Internal error occurred: %s", message);
                json_object_set_new(st, "status", json_string("Failure"));
                json_object_set_new(st, "message", json_string(msg));
                json_object_set_new(st, "reason", json_string("InternalError"));
                json_object_set_new(st, "details",
                                    json_pack("{s:[{s:s}]}", "causes", "message", message));
                json_object_set_new(st, "code", json_integer(500));
        }
        char *s = json_dumps(st, JSON_COMPACT | JSON_PRESERVE_ORDER);
        json_decref(st);
        return s;
}

/* Go's %v of a []string: "[a b c]". */
static char *format_cmd(char *const *cmd)
{
        size_t n = 3;
        for (char *const *a = cmd; a && *a; a++)
                n += strlen(*a) + 1;
        char *s = xmalloc(n), *p = s;
        *p++ = '[';
        for (char *const *a = cmd; a && *a; a++)
                p += sprintf(p, "%s%s", a == cmd ? "" : " ", *a);
        strcpy(p, "]");
        return s;
}

/* Resize messages: a stream of JSON objects {"Width":w,"Height":h}, as
 * Go's json.Encoder writes them.  A message that does not decode ends
 * the resizing (upstream's decoder loop stops there too). */
static void resize_feed(struct rc_session *s, const uint8_t *data, size_t len)
{
        if (s->resize_broken || s->resize_w < 0)
                return;
        if (len > sizeof(s->resize_buf) - s->resize_len) {
                s->resize_broken = true;
                return;
        }
        memcpy(s->resize_buf + s->resize_len, data, len);
        s->resize_len += len;
        for (;;) {
                size_t skip = 0;
                while (skip < s->resize_len && strchr(" \t\r\n", s->resize_buf[skip]) &&
                       s->resize_buf[skip] != '\0')
                        skip++;
                memmove(s->resize_buf, s->resize_buf + skip, s->resize_len - skip);
                s->resize_len -= skip;
                if (s->resize_len == 0)
                        return;
                json_error_t jerr;
                json_t *j = json_loadb(s->resize_buf, s->resize_len, JSON_DISABLE_EOF_CHECK, &jerr);
                if (j == NULL) {
                        /* an object not whole yet, or garbage */
                        if (json_error_code(&jerr) != json_error_premature_end_of_input)
                                s->resize_broken = true;
                        return;
                }
                size_t used = (size_t)jerr.position;
                json_int_t w = json_integer_value(json_object_get(j, "Width"));
                json_int_t h = json_integer_value(json_object_get(j, "Height"));
                bool ok = json_is_object(j) && w >= 0 && w <= UINT16_MAX && h >= 0 &&
                          h <= UINT16_MAX && used > 0 && used <= s->resize_len;
                json_decref(j);
                if (!ok) {
                        s->resize_broken = true;
                        return;
                }
                struct streaming_size sz = {(uint16_t)w, (uint16_t)h};
                if (net_send_all_watch(s->resize_w, &sz, sizeof(sz), s->fd) < 0)
                        close_fd(&s->resize_w);
                memmove(s->resize_buf, s->resize_buf + used, s->resize_len - used);
                s->resize_len -= used;
        }
}

/* The client's stdin to the runtime: waits for it to read, unless the
 * connection hangs up (the client gone, or the server stopping). */
static void stdin_feed(struct rc_session *s, const uint8_t *data, size_t len)
{
        if (s->stdin_w >= 0 && len > 0 && net_send_all_watch(s->stdin_w, data, len, s->fd) < 0)
                close_fd(&s->stdin_w);
}

/* One frame of the client's, once the session's streams are known (or
 * while they are opened: a client may write on a stream before opening the
 * next).  Returns true when the client ends the connection (GOAWAY).
 * Writes to the runtime wait for it to read, unless the connection hangs
 * up (the client gone, or the server stopping). */
static bool client_frame(struct rc_session *s, const struct spdy_frame *f)
{
        switch (f->type) {
        case SPDY_DATA:
                if (f->stream_id != 0 && f->stream_id == s->id_stdin) {
                        stdin_feed(s, f->data, f->len);
                        if (f->flags & SPDY_FLAG_FIN)
                                close_fd(&s->stdin_w);
                } else if (f->stream_id != 0 && f->stream_id == s->id_resize) {
                        resize_feed(s, f->data, f->len);
                }
                return false;
        case SPDY_PING:
                spdy_conn_ping(s->spdy, f->value);
                return false;
        case SPDY_RST_STREAM:
                if (f->stream_id == s->id_stdin)
                        close_fd(&s->stdin_w);
                return false;
        case SPDY_GOAWAY:
                return true;
        default:
                return false;
        }
}

/* The reader's end: the runtime's inputs closed, its session told. */
static void reader_done(struct rc_session *s)
{
        close_fd(&s->stdin_w);
        close_fd(&s->resize_w);
        uint64_t one = 1;
        if (write(s->io.done_fd, &one, sizeof(one)) < 0)
                LOG_WARN("Cannot signal the end of a stream session", "err=\"%s\"",
                         strerror(errno));
}

/* The client's frames, until it closes the connection or is idle for the
 * connection's idle timeout. */
static void *spdy_reader_main(void *arg)
{
        struct rc_session *s = arg;
        for (;;) {
                struct spdy_frame f;
                cleanup_error ck_error_t err = NULL;
                int r = spdy_conn_read(s->spdy, &f, 0, &err);
                if (r < 0) {
                        LOG_INFO(4, "Stream connection ended", "err=\"%s\"", ck_error_msg(err));
                        /* idle, or broken: a write to the client that waits
                         * on it (the runtime's output) must end too */
                        shutdown(s->fd, SHUT_RDWR);
                }
                if (r <= 0)
                        break;
                bool end;
                if (f.type == SPDY_SYN_STREAM) { /* after the session began: refused */
                        spdy_conn_rst(s->spdy, f.stream_id, SPDY_RST_REFUSED_STREAM);
                        end = false;
                } else {
                        end = client_frame(s, &f);
                }
                spdy_frame_clear(&f);
                if (end)
                        break;
        }
        reader_done(s);
        return NULL;
}

/* The same on a WebSocket: stdin (channel 0), resizes (4), and v5's close
 * signal (0xff, then the channel: stdin's closes it). */
static void *ws_reader_main(void *arg)
{
        struct rc_session *s = arg;
        for (;;) {
                int ch;
                const uint8_t *data;
                size_t len;
                cleanup_error ck_error_t err = NULL;
                int r = ws_conn_read(s->ws, &ch, &data, &len, 0, &err);
                if (r < 0) {
                        LOG_INFO(4, "Stream connection ended", "err=\"%s\"", ck_error_msg(err));
                        shutdown(s->fd, SHUT_RDWR);
                }
                if (r <= 0)
                        break;
                if (ch == 0xff && s->version >= 5) {
                        /* upstream ends the connection on a signal that is
                         * not one valid channel */
                        if (len != 1 || data[0] > CH_RESIZE) {
                                LOG_INFO(4, "Stream connection ended",
                                         "err=\"a bad close signal (%zu bytes)\"", len + 1);
                                shutdown(s->fd, SHUT_RDWR);
                                break;
                        }
                        if (data[0] == CH_STDIN)
                                close_fd(&s->stdin_w);
                        else if (data[0] == CH_RESIZE)
                                close_fd(&s->resize_w);
                } else if (ch == CH_STDIN) {
                        stdin_feed(s, data, len);
                } else if (ch == CH_RESIZE) {
                        resize_feed(s, data, len);
                }
        }
        reader_done(s);
        return NULL;
}

static int version_of(const char *protocol)
{
        if (strcmp(protocol, RC_PROTOCOL_V5) == 0)
                return 5;
        if (strcmp(protocol, RC_PROTOCOL_V4) == 0 ||
            strcmp(protocol, "v4.base64.channel.k8s.io") == 0)
                return 4;
        if (strcmp(protocol, RC_PROTOCOL_V3) == 0)
                return 3;
        if (strcmp(protocol, RC_PROTOCOL_V2) == 0)
                return 2;
        return 1;
}

/* Waits for the streams the request named and answers each: 0, or -1
 * (logged) when the client does not open them in time or goes away. */
static int wait_streams(struct rc_session *s, const struct streaming_request *r,
                        int creation_timeout_ms)
{
        int expected = 1 + r->in + r->out + r->errs + (r->tty && s->version >= 3);
        int received = 0;
        int64_t deadline = fs_now_mono_ms() + creation_timeout_ms;
        while (received < expected) {
                struct spdy_frame f;
                cleanup_error ck_error_t err = NULL;
                int rr = spdy_conn_read(s->spdy, &f, deadline, &err);
                if (rr <= 0) {
                        LOG_ERROR("Waiting for the client's streams failed",
                                  "container=\"%s\" err=\"%s\"", r->id,
                                  rr == 0 ? "the client went away"
                                  : err && err->status == ETIMEDOUT
                                      ? "timed out waiting for client to create streams"
                                      : ck_error_msg(err));
                        return -1;
                }
                if (f.type == SPDY_PING) {
                        spdy_conn_ping(s->spdy, f.value);
                } else if (f.type == SPDY_SYN_STREAM) {
                        const char *type = spdy_headers_get(&f.headers, "streamtype");
                        uint32_t *slot = NULL;
                        if (type == NULL)
                                ;
                        else if (strcmp(type, "error") == 0)
                                slot = &s->id_error;
                        else if (strcmp(type, "stdin") == 0)
                                slot = &s->id_stdin;
                        else if (strcmp(type, "stdout") == 0)
                                slot = &s->id_stdout;
                        else if (strcmp(type, "stderr") == 0)
                                slot = &s->id_stderr;
                        else if (strcmp(type, "resize") == 0)
                                slot = &s->id_resize;
                        if (spdy_conn_reply(s->spdy, f.stream_id) < 0) {
                                spdy_frame_clear(&f);
                                return -1;
                        }
                        if (slot) {
                                *slot = f.stream_id;
                                received++;
                        } else {
                                LOG_ERROR("Unexpected stream type", "type=\"%s\"",
                                          type ? type : "");
                        }
                } else if (client_frame(s, &f)) {
                        spdy_frame_clear(&f);
                        return -1;
                }
                spdy_frame_clear(&f);
        }
        return 0;
}

/* The session's end on the error stream, in the protocol's form: v4 a
 * Status, earlier ones the failure's message (upstream's
 * v1WriteStatusFunc). */
static void write_status(struct rc_session *s, const struct streaming_request *r, int rc,
                         int exit_code, const char *what, ck_error_t err)
{
        if (s->spdy && s->id_error == 0)
                return;
        cleanup_free char *message = NULL;
        if (rc < 0) {
                message = xasprintf("%s: %s", what, ck_error_msg(err));
                exit_code = 0;
        } else if (exit_code != 0) {
                /* containerd's words, under upstream's prefix */
                cleanup_free char *cmd = format_cmd(r->cmd);
                message = xasprintf("command terminated with non-zero exit code: error executing "
                                    "command %s, exit code %d",
                                    cmd, exit_code);
        }
        cleanup_free char *text = NULL;
        if (s->version >= 4)
                text = rc_status_json(exit_code, message);
        else if (message && exit_code == 0)
                text = xasprintf("Internal error occurred: %s", message);
        else if (message)
                text = xstrdup(message);
        if (text)
                send_channel(s, CH_ERROR, text, strlen(text));
}

/* A session whose transport is set: the runtime's inputs (made before
 * the SPDY streams are awaited: the client may write on a stream before it
 * has opened them all), the reader, the runtime's call, the end. */
static void run_session(const struct streaming_runtime *rt, const struct streaming_request *r,
                        struct rc_session *s, int creation_timeout_ms)
{
        s->stdin_w = -1;
        s->resize_w = -1;
        s->io = (struct streaming_io){.tty = r->tty,
                                      .stdout_wanted = r->out,
                                      .stderr_wanted = r->errs,
                                      .stdin_fd = -1,
                                      .resize_fd = -1,
                                      .done_fd = -1,
                                      .write = io_write};
        /* resizing: SPDY from v3 on; a WebSocket always has the channel */
        bool resizes = r->tty && (s->ws || s->version >= 3);
        int sp[2];
        if (r->in && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == 0) {
                s->io.stdin_fd = sp[0];
                s->stdin_w = sp[1];
        }
        if (resizes && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == 0) {
                s->io.resize_fd = sp[0];
                s->resize_w = sp[1];
        }
        s->io.done_fd = eventfd(0, EFD_CLOEXEC);
        if (s->spdy && wait_streams(s, r, creation_timeout_ms) < 0) {
                close_fd(&s->io.stdin_fd);
                close_fd(&s->stdin_w);
                close_fd(&s->io.resize_fd);
                close_fd(&s->resize_w);
                close_fd(&s->io.done_fd);
                return;
        }
        if (s->ws) {
                /* upstream's first write: an empty message on the first of
                 * stdout, stderr, error the session has */
                s->has_stdout = r->out;
                s->has_stderr = r->errs;
                ws_conn_write(s->ws, r->out ? CH_STDOUT : r->errs ? CH_STDERR : CH_ERROR, NULL, 0);
        }
        pthread_t reader;
        int perr = s->io.done_fd < 0 ? errno
                                     : pthread_create(&reader, NULL,
                                                      s->ws ? ws_reader_main : spdy_reader_main, s);
        bool reading = perr == 0;

        cleanup_error ck_error_t err = NULL;
        int exit_code = 0, rc;
        const char *what;
        if (!reading) {
                rc = ck_error_make(&err, perr, "start the session");
                what = "streaming";
        } else if (r->kind == STREAMING_EXEC) {
                what = "error executing command in container";
                rc = rt->exec(rt->ctx, r->id, r->cmd, &s->io, &exit_code, &err);
        } else {
                what = "error attaching to container";
                rc = rt->attach(rt->ctx, r->id, &s->io, &err);
        }
        if (rc < 0)
                LOG_ERROR(r->kind == STREAMING_EXEC ? "Exec in container failed"
                                                    : "Attach to container failed",
                          "container=\"%s\" err=\"%s\"", r->id, ck_error_msg(err));
        /* the reader's writes to these now fail instead of blocking */
        close_fd(&s->io.stdin_fd);
        close_fd(&s->io.resize_fd);

        write_status(s, r, rc, exit_code, what, err);
        if (s->ws) {
                ws_conn_close(s->ws, 1000);
        } else {
                uint32_t ours[] = {s->id_stdout, s->id_stderr, s->id_error};
                for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
                        if (ours[i])
                                spdy_conn_data(s->spdy, ours[i], NULL, 0, true);
                spdy_conn_goaway(s->spdy);
        }
        shutdown(s->fd, SHUT_WR);
        if (reading) {
                /* the client closes once it has read it all; one that does
                 * not is closed under it */
                struct timespec until;
                clock_gettime(CLOCK_REALTIME, &until);
                until.tv_sec += RC_LINGER_MS / 1000;
                if (pthread_timedjoin_np(reader, NULL, &until) != 0) {
                        shutdown(s->fd, SHUT_RDWR);
                        pthread_join(reader, NULL);
                }
        } else {
                close_fd(&s->stdin_w);
                close_fd(&s->resize_w);
        }
        close_fd(&s->io.done_fd);
}

void rc_serve(const struct streaming_runtime *rt, const struct streaming_request *r,
              struct spdy_conn *c, const char *protocol, int creation_timeout_ms)
{
        struct rc_session s = {.fd = c->fd, .spdy = c, .version = version_of(protocol)};
        run_session(rt, r, &s, creation_timeout_ms);
}

void rc_serve_ws(const struct streaming_runtime *rt, const struct streaming_request *r,
                 struct ws_conn *c, const char *protocol)
{
        struct rc_session s = {.fd = c->fd, .ws = c, .version = version_of(protocol)};
        run_session(rt, r, &s, 0);
}
