/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Exec, Attach and PortForward: the CRI calls answer with a URL of the
 * shim's streaming server (src/streaming), and the sessions behind it run
 * here on the engine, as cri-dockerd's NativeExecHandler and
 * streaming runtime: a hijacked exec or attach stream of the engine
 * copied to the client's channels, and the port dialled from inside the
 * sandbox's network namespace.
 */
#include "cri.pb-c.h"
#include "dockershim/dockershim_internal.h"
#include "grpc/grpc.h"
#include "streaming/streaming.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/netutil.h"
#include "util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* How long a port-forward's connection to the pod may take. */
#define DIAL_TIMEOUT_MS 10000

/* ---- the sessions ------------------------------------------------------ */

struct pump {
        struct dockershim *s;
        struct streaming_io *io;
        int fd;           /* the engine's hijacked stream */
        bool mux;         /* multiplexed (no TTY) or raw */
        const char *kind; /* "exec" or "containers": what resizes */
        const char *id;
        struct docker_demux demux;
        bool client_gone;
};

static void demuxed(void *ctx, int stream, const char *data, size_t len)
{
        struct pump *p = ctx;
        /* 1 stdout, 2 stderr, 3 the engine's own error: the client's stderr */
        if (stream == 0)
                return;
        if (p->io->write(p->io, stream == 1 ? 1 : 2, data, len) < 0)
                p->client_gone = true;
}

static void resize(struct pump *p, const struct streaming_size *sz)
{
        cleanup_error ck_error_t err = NULL;
        int r = p->kind[0] == 'e'
                    ? docker_exec_resize(p->s->docker, p->id, sz->width, sz->height, &err)
                    : docker_container_resize(p->s->docker, p->id, sz->width, sz->height, &err);
        if (r < 0)
                LOG_INFO(2, "Resize failed", "err=\"%s\"", ck_error_msg(err));
}

/* Copies between the engine's stream and the client until the stream ends
 * (the command or container exited) or the client goes.  The engine's
 * socket is non-blocking: stdin waits in a buffer while the engine does not
 * take it, and the command's output is read all the while, so a command
 * that writes before it reads on cannot lock the two up.  The client's own
 * pace holds the output back (io->write waits for it). */
static int pump_run(struct pump *p, ck_error_t *err)
{
        char buf[32 * 1024];
        char pending[32 * 1024]; /* stdin read, not yet taken by the engine */
        size_t pending_len = 0, pending_off = 0;
        int in = p->io->stdin_fd, rs = p->io->resize_fd;
        bool stdin_ended = false;
        int fl = fcntl(p->fd, F_GETFL);
        if (fl < 0 || fcntl(p->fd, F_SETFL, fl | O_NONBLOCK) < 0)
                return ck_error_make(err, errno, "fcntl");
        for (;;) {
                bool have = pending_off < pending_len;
                struct pollfd f[4] = {
                    {.fd = p->fd, .events = (short)(POLLIN | (have ? POLLOUT : 0))},
                    {.fd = have ? -1 : in, .events = POLLIN},
                    {.fd = rs, .events = POLLIN},
                    {.fd = p->io->done_fd, .events = POLLIN},
                };
                if (poll(f, 4, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        return ck_error_make(err, errno, "poll");
                }
                if (f[3].revents)
                        return 0; /* the client has gone */
                if (f[2].revents) {
                        struct streaming_size sz;
                        ssize_t n = read(rs, &sz, sizeof(sz));
                        if (n == (ssize_t)sizeof(sz))
                                resize(p, &sz);
                        else if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
                                rs = -1; /* no more resizes (the session owns the fd) */
                }
                if (f[1].revents) {
                        ssize_t n = read(in, pending, sizeof(pending));
                        if (n > 0) {
                                pending_len = (size_t)n;
                                pending_off = 0;
                        } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
                                in = -1;
                                stdin_ended = true;
                        }
                }
                if (pending_off < pending_len && (f[0].revents & (POLLOUT | POLLERR | POLLHUP))) {
                        ssize_t w = send(p->fd, pending + pending_off, pending_len - pending_off,
                                         MSG_NOSIGNAL);
                        if (w > 0) {
                                pending_off += (size_t)w;
                        } else if (w < 0 && errno != EINTR && errno != EAGAIN) {
                                /* the engine closed stdin: drop the rest */
                                pending_off = pending_len;
                                in = -1;
                                stdin_ended = true;
                        }
                }
                if (stdin_ended && pending_off >= pending_len) {
                        shutdown(p->fd, SHUT_WR); /* the client's stdin ended */
                        stdin_ended = false;
                }
                if (f[0].revents & (POLLIN | POLLHUP | POLLERR)) {
                        ssize_t n = recv(p->fd, buf, sizeof(buf), 0);
                        if (n < 0 && (errno == EINTR || errno == EAGAIN))
                                continue;
                        if (n < 0)
                                return ck_error_make(err, errno, "read the engine's stream");
                        if (n == 0)
                                return 0;
                        if (!p->mux) {
                                if (p->io->write(p->io, 1, buf, (size_t)n) < 0)
                                        return 0;
                        } else if (docker_demux_feed(&p->demux, buf, (size_t)n, demuxed, p) < 0) {
                                return ck_error_make(err, 0,
                                                     "the engine's stream does not "
                                                     "demultiplex");
                        }
                        if (p->client_gone)
                                return 0;
                }
        }
}

static int stream_exec(void *ctx, const char *container_id, char *const *cmd,
                       struct streaming_io *io, int *exit_code, ck_error_t *err)
{
        struct dockershim *s = ctx;
        if (shim_running_container(s, container_id, NULL, err) < 0)
                return -1;
        struct docker_exec_config ec = {
            .cmd = (const char *const *)cmd,
            .tty = io->tty,
            .attach_stdin = io->stdin_fd >= 0,
            .attach_stdout = io->stdout_wanted,
            .attach_stderr = io->stderr_wanted,
        };
        cleanup_free char *exec_id = NULL;
        if (docker_exec_create(s->docker, container_id, &ec, &exec_id, err) < 0)
                return -1;
        cleanup_free char *path = xasprintf("/exec/%s/start", exec_id);
        json_t *body = json_pack("{s:b,s:b}", "Detach", false, "Tty", io->tty);
        cleanup_free char *what = xasprintf("start exec `%s`", exec_id);
        int fd = -1;
        int hr = docker_hijack(s->docker, path, body, what, &fd, err);
        json_decref(body);
        if (hr < 0)
                return -1;
        struct pump p = {
            .s = s, .io = io, .fd = fd, .mux = !io->tty, .kind = "exec", .id = exec_id};
        int rc = pump_run(&p, err);
        close(fd);
        if (rc < 0)
                return -1;
        /* a client that left leaves the command running (as upstream) */
        struct docker_exec_state st;
        if (shim_exec_wait_exit(s, exec_id, &st, err) < 0)
                return -1;
        *exit_code = st.exit_code;
        return 0;
}

static int stream_attach(void *ctx, const char *container_id, struct streaming_io *io,
                         ck_error_t *err)
{
        struct dockershim *s = ctx;
        bool tty = false;
        if (shim_running_container(s, container_id, &tty, err) < 0)
                return -1;
        cleanup_free char *path =
            xasprintf("/containers/%s/attach?stream=1&stdin=%d&stdout=%d&stderr=%d", container_id,
                      io->stdin_fd >= 0, io->stdout_wanted, io->stderr_wanted);
        cleanup_free char *what = xasprintf("attach to container `%s`", container_id);
        int fd = -1;
        if (docker_hijack(s->docker, path, NULL, what, &fd, err) < 0)
                return -1;
        /* the stream is multiplexed unless the container has a TTY */
        struct pump p = {
            .s = s, .io = io, .fd = fd, .mux = !tty, .kind = "containers", .id = container_id};
        int rc = pump_run(&p, err);
        close(fd);
        return rc;
}

struct dial {
        const char *netns;
        int32_t port;
        int fd;
        int status;     /* errno of the failure */
        char step[160]; /* what failed */
};

/* On a thread of its own: setns(2) changes the calling thread only, and
 * the thread ends with it, so no other work runs in the sandbox's
 * namespace.  localhost as containerd dials it: IPv4, then IPv6. */
static void *dial_main(void *arg)
{
        struct dial *d = arg;
        int ns = open(d->netns, O_RDONLY | O_CLOEXEC);
        if (ns < 0 || setns(ns, CLONE_NEWNET) < 0) {
                d->status = errno;
                snprintf(d->step, sizeof(d->step), "%s the network namespace `%s`",
                         ns < 0 ? "open" : "enter", d->netns);
                if (ns >= 0)
                        close(ns);
                return NULL;
        }
        close(ns);
        /* within 10 s: a listener whose backlog is full drops the SYN */
        char port[16];
        snprintf(port, sizeof(port), "%d", (int)d->port);
        int64_t deadline = fs_now_mono_ms() + DIAL_TIMEOUT_MS;
        ck_error_t e4 = NULL, e6 = NULL;
        d->fd = net_tcp_dial("127.0.0.1", port, deadline, false, &e4);
        if (d->fd < 0)
                d->fd = net_tcp_dial("::1", port, deadline, false, &e6);
        if (d->fd < 0) {
                d->status = e4 ? e4->status : 0;
                snprintf(d->step, sizeof(d->step), "connect to localhost:%d in the sandbox",
                         (int)d->port);
        }
        ck_error_release(&e4);
        ck_error_release(&e6);
        return NULL;
}

static int stream_port_dial(void *ctx, const char *sandbox_id, int32_t port, int *fd,
                            ck_error_t *err)
{
        struct dockershim *s = ctx;
        *fd = -1;
        struct docker_container info;
        struct shim_name name;
        if (shim_inspect_own(s, sandbox_id, SHIM_TYPE_SANDBOX, "sandbox", &info, &name, err) < 0)
                return -1;
        shim_name_clear(&name);
        cleanup_free char *netns = NULL;
        if (info.running && info.pid > 0)
                netns = xasprintf("/proc/%d/ns/net", info.pid);
        docker_container_clear(&info);
        if (netns == NULL)
                return ck_error_make(err, 0, "sandbox `%s` is not running", sandbox_id);
        struct dial d = {.netns = netns, .port = port, .fd = -1};
        pthread_t t;
        if (pthread_create(&t, NULL, dial_main, &d) != 0)
                return ck_error_make(err, 0, "start the dialling thread");
        pthread_join(t, NULL);
        if (d.fd < 0)
                return ck_error_make(err, d.status, "%s", d.step);
        *fd = d.fd;
        return 0;
}

int dockershim_streaming_start(struct dockershim *s, const char *bind_addr, int64_t idle_ms,
                               ck_error_t *err)
{
        struct streaming_runtime rt = {
            .exec = stream_exec,
            .attach = stream_attach,
            .port_dial = stream_port_dial,
            .ctx = s,
        };
        cleanup_free char *host = NULL;
        int port = 0;
        const char *a = bind_addr && *bind_addr ? bind_addr : "127.0.0.1";
        const char *colon = strrchr(a, ':');
        if (a[0] == '[') { /* [v6]:port or [v6] */
                const char *rb = strchr(a, ']');
                if (rb == NULL)
                        return ck_error_make(err, 0, "streaming address `%s`: bad host", a);
                host = xstrndup(a + 1, (size_t)(rb - a - 1));
                colon = rb[1] == ':' ? rb + 1 : NULL;
        } else if (colon && strchr(a, ':') == colon) {
                host = xstrndup(a, (size_t)(colon - a));
        } else {
                host = xstrdup(a); /* a bare IPv6 address or a host */
                colon = NULL;
        }
        if (colon) {
                char *end;
                long v = strtol(colon + 1, &end, 10);
                if (colon[1] == '\0' || *end != '\0' || v < 0 || v > 65535)
                        return ck_error_make(err, 0, "streaming address `%s`: bad port", a);
                port = (int)v;
        }
        struct streaming_options o = {
            .address = host, .port = port, .stream_idle_timeout_ms = idle_ms};
        return streaming_server_start(&o, &rt, &s->streaming, err);
}

/* ---- the CRI calls ------------------------------------------------------- */

static int respond_url(const char *url, uint8_t **resp, size_t *resp_len, int kind)
{
        if (kind == 0) {
                Runtime__V1__ExecResponse r = RUNTIME__V1__EXEC_RESPONSE__INIT;
                r.url = (char *)url;
                return dockershim_pack(&r.base, resp, resp_len);
        }
        if (kind == 1) {
                Runtime__V1__AttachResponse r = RUNTIME__V1__ATTACH_RESPONSE__INIT;
                r.url = (char *)url;
                return dockershim_pack(&r.base, resp, resp_len);
        }
        Runtime__V1__PortForwardResponse r = RUNTIME__V1__PORT_FORWARD_RESPONSE__INIT;
        r.url = (char *)url;
        return dockershim_pack(&r.base, resp, resp_len);
}

int dockershim_exec(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms, uint8_t **resp,
                    size_t *resp_len, ck_error_t *err)
{
        (void)timeout_ms;
        struct dockershim *s = ctx;
        Runtime__V1__ExecRequest *in = runtime__v1__exec_request__unpack(NULL, len, req);
        if (in == NULL)
                return ck_error_make_code(err, GRPC_INVALID_ARGUMENT,
                                          "Exec: the request does not decode");
        cleanup_free char *url = NULL;
        int rc = -1;
        if (shim_running_container(s, in->container_id, NULL, err) < 0)
                goto out;
        char **cmd = xcalloc(in->n_cmd + 1, sizeof(char *));
        for (size_t i = 0; i < in->n_cmd; i++)
                cmd[i] = in->cmd[i];
        rc = streaming_get_exec(s->streaming, in->container_id, cmd, in->tty, in->stdin, in->stdout,
                                in->stderr, &url, err);
        free(cmd);
        if (rc == 0)
                rc = respond_url(url, resp, resp_len, 0);
out:
        runtime__v1__exec_request__free_unpacked(in, NULL);
        return rc;
}

int dockershim_attach(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms, uint8_t **resp,
                      size_t *resp_len, ck_error_t *err)
{
        (void)timeout_ms;
        struct dockershim *s = ctx;
        Runtime__V1__AttachRequest *in = runtime__v1__attach_request__unpack(NULL, len, req);
        if (in == NULL)
                return ck_error_make_code(err, GRPC_INVALID_ARGUMENT,
                                          "Attach: the request does not decode");
        cleanup_free char *url = NULL;
        int rc = -1;
        if (shim_running_container(s, in->container_id, NULL, err) < 0)
                goto out;
        rc = streaming_get_attach(s->streaming, in->container_id, in->tty, in->stdin, in->stdout,
                                  in->stderr, &url, err);
        if (rc == 0)
                rc = respond_url(url, resp, resp_len, 1);
out:
        runtime__v1__attach_request__free_unpacked(in, NULL);
        return rc;
}

int dockershim_port_forward(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                            uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        (void)timeout_ms;
        struct dockershim *s = ctx;
        Runtime__V1__PortForwardRequest *in =
            runtime__v1__port_forward_request__unpack(NULL, len, req);
        if (in == NULL)
                return ck_error_make_code(err, GRPC_INVALID_ARGUMENT,
                                          "PortForward: the request does not decode");
        cleanup_free char *url = NULL;
        int rc = -1;
        struct docker_container info;
        struct shim_name name;
        if (in->pod_sandbox_id && *in->pod_sandbox_id) {
                if (shim_inspect_own(s, in->pod_sandbox_id, SHIM_TYPE_SANDBOX, "sandbox", &info,
                                     &name, err) < 0)
                        goto out;
                docker_container_clear(&info);
                shim_name_clear(&name);
        }
        rc = streaming_get_port_forward(s->streaming, in->pod_sandbox_id, in->port, in->n_port,
                                        &url, err);
        if (rc == 0)
                rc = respond_url(url, resp, resp_len, 2);
out:
        runtime__v1__port_forward_request__free_unpacked(in, NULL);
        return rc;
}
