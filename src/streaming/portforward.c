/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Port-forward over SPDY, as upstream's pkg/cri/streaming/portforward
 * (httpstream.go): each connection the client forwards is a pair of
 * streams, "data" and "error", with the same "requestid" and "port"
 * headers; a stream without a valid port or type is reset.  Once a pair is
 * whole the runtime dials the port inside the sandbox and the bytes flow
 * both ways; a failure is written on the pair's error stream as upstream
 * words it ("error forwarding port 80 to pod <sandbox>, uid : ...").
 *
 * Threads: the connection's handler thread reads the client's frames
 * (its data to the dialled sockets); one thread per forwarded connection
 * copies the socket's bytes back.
 */
#include "streaming/streaming_internal.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/netutil.h"
#include "util/xalloc.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

struct pf_pair {
        char *request_id;
        uint32_t id_data, id_error;
        int32_t port;
        int fd; /* the dialled socket, -1 before (or without) one */
        struct spdy_conn *conn;
        pthread_t copier;
        bool copying;
        bool client_done;        /* the client ended its side (FIN or reset) */
        atomic_bool copier_done; /* the socket's side ended */
        struct pf_pair *next;
};

/* The socket's bytes to the data stream until it closes; then both of the
 * pair's streams end. */
static void *copier_main(void *arg)
{
        struct pf_pair *p = arg;
        char buf[32 * 1024];
        for (;;) {
                ssize_t n = recv(p->fd, buf, sizeof(buf), 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                if (spdy_conn_data(p->conn, p->id_data, buf, (size_t)n, false) < 0)
                        break;
        }
        spdy_conn_data(p->conn, p->id_data, NULL, 0, true);
        spdy_conn_data(p->conn, p->id_error, NULL, 0, true);
        atomic_store(&p->copier_done, true);
        return NULL;
}

/* upstream's httpStreamReceived: a port in 1..65535 and a known type */
static const char *check_stream(const struct spdy_headers *h, int32_t *port, bool *is_data)
{
        const char *ps = spdy_headers_get(h, "port");
        const char *type = spdy_headers_get(h, "streamtype");
        if (ps == NULL || *ps == '\0')
                return "\"port\" header is required";
        char *end;
        errno = 0;
        unsigned long v = strtoul(ps, &end, 10);
        if (*ps < '0' || *ps > '9' || *end != '\0' || errno || v > 65535)
                return "unable to parse the port";
        if (v < 1)
                return "port must be > 0";
        if (type == NULL || *type == '\0')
                return "\"streamType\" header is required";
        if (strcmp(type, "error") != 0 && strcmp(type, "data") != 0)
                return "invalid stream type";
        *port = (int32_t)v;
        *is_data = strcmp(type, "data") == 0;
        return NULL;
}

/* The request ID of a stream; an old client's streams without one are
 * paired by their IDs, as upstream does (error n, data n + 2). */
static char *request_id(const struct spdy_frame *f, bool is_data)
{
        const char *id = spdy_headers_get(&f->headers, "requestid");
        if (id && *id)
                return xstrdup(id);
        return xasprintf("%u", is_data ? f->stream_id - 2 : f->stream_id);
}

static struct pf_pair *pair_find(struct pf_pair *list, const char *rid)
{
        for (struct pf_pair *p = list; p; p = p->next)
                if (strcmp(p->request_id, rid) == 0)
                        return p;
        return NULL;
}

static struct pf_pair *pair_by_data(struct pf_pair *list, uint32_t id)
{
        for (struct pf_pair *p = list; p; p = p->next)
                if (p->id_data == id)
                        return p;
        return NULL;
}

/* A whole pair: dial and start copying, or say why not on its error
 * stream. */
static void pair_start(const struct streaming_runtime *rt, const struct streaming_request *r,
                       struct pf_pair *p)
{
        cleanup_error ck_error_t err = NULL;
        if (rt->port_dial(rt->ctx, r->id, p->port, &p->fd, &err) < 0) {
                p->fd = -1;
                cleanup_free char *msg = xasprintf("error forwarding port %d to pod %s, uid : %s",
                                                   p->port, r->id, ck_error_msg(err));
                LOG_ERROR("Port-forward failed", "sandbox=\"%s\" port=%d err=\"%s\"", r->id,
                          p->port, ck_error_msg(err));
                spdy_conn_data(p->conn, p->id_error, msg, strlen(msg), true);
                spdy_conn_data(p->conn, p->id_data, NULL, 0, true);
                p->client_done = true; /* nothing more to do for it */
                return;
        }
        if (pthread_create(&p->copier, NULL, copier_main, p) != 0) {
                spdy_conn_data(p->conn, p->id_error, NULL, 0, true);
                spdy_conn_data(p->conn, p->id_data, NULL, 0, true);
                p->client_done = true;
                return;
        }
        p->copying = true;
}

static void on_syn_stream(const struct streaming_runtime *rt, const struct streaming_request *r,
                          struct spdy_conn *c, struct pf_pair **list, const struct spdy_frame *f)
{
        int32_t port = 0;
        bool is_data = false;
        const char *why = check_stream(&f->headers, &port, &is_data);
        if (why) {
                LOG_ERROR("Port-forward stream refused", "sandbox=\"%s\" stream=%u err=\"%s\"",
                          r->id, f->stream_id, why);
                spdy_conn_rst(c, f->stream_id, SPDY_RST_CANCEL);
                return;
        }
        if (spdy_conn_reply(c, f->stream_id) < 0)
                return;
        cleanup_free char *rid = request_id(f, is_data);
        struct pf_pair *p = pair_find(*list, rid);
        if (p == NULL) {
                p = xcalloc(1, sizeof(*p));
                p->request_id = xstrdup(rid);
                p->fd = -1;
                p->conn = c;
                p->next = *list;
                *list = p;
        }
        uint32_t *slot = is_data ? &p->id_data : &p->id_error;
        if (*slot != 0) { /* a second stream of that kind for the ID */
                spdy_conn_rst(c, f->stream_id, SPDY_RST_PROTOCOL_ERROR);
                return;
        }
        *slot = f->stream_id;
        if (is_data)
                p->port = port;
        if (p->id_data && p->id_error)
                pair_start(rt, r, p);
}

static void pair_free(struct pf_pair *p)
{
        if (p->copying)
                pthread_join(p->copier, NULL);
        if (p->fd >= 0)
                close(p->fd);
        free(p->request_id);
        free(p);
}

/* Frees the pairs that both sides have ended, so that a long session of
 * many forwarded connections holds no socket it no longer uses. */
static void reap(struct pf_pair **list)
{
        for (struct pf_pair **pp = list; *pp;) {
                struct pf_pair *p = *pp;
                bool over = p->client_done && (!p->copying || atomic_load(&p->copier_done));
                if (!over) {
                        pp = &p->next;
                        continue;
                }
                *pp = p->next;
                pair_free(p);
        }
}

void pf_serve(const struct streaming_runtime *rt, const struct streaming_request *r,
              struct spdy_conn *c)
{
        struct pf_pair *list = NULL;
        for (;;) {
                struct spdy_frame f;
                cleanup_error ck_error_t err = NULL;
                int rr = spdy_conn_read(c, &f, 0, &err);
                if (rr < 0)
                        LOG_INFO(4, "Port-forward connection ended", "sandbox=\"%s\" err=\"%s\"",
                                 r->id, ck_error_msg(err));
                if (rr <= 0)
                        break;
                bool end = false;
                struct pf_pair *p;
                switch (f.type) {
                case SPDY_SYN_STREAM:
                        on_syn_stream(rt, r, c, &list, &f);
                        break;
                case SPDY_DATA:
                        p = pair_by_data(list, f.stream_id);
                        if (p == NULL || p->fd < 0)
                                break;
                        /* waits for the pod to read, unless the client
                         * hangs up or the server stops */
                        if (f.len > 0 && net_send_all_watch(p->fd, f.data, f.len, c->fd) < 0) {
                                shutdown(p->fd, SHUT_RDWR);
                                p->client_done = true;
                        } else if (f.flags & SPDY_FLAG_FIN) {
                                shutdown(p->fd, SHUT_WR);
                                p->client_done = true;
                        }
                        break;
                case SPDY_RST_STREAM:
                        p = pair_by_data(list, f.stream_id);
                        if (p && p->fd >= 0)
                                shutdown(p->fd, SHUT_RDWR);
                        if (p)
                                p->client_done = true;
                        break;
                case SPDY_PING:
                        spdy_conn_ping(c, f.value);
                        break;
                case SPDY_GOAWAY:
                        end = true;
                        break;
                default:
                        break;
                }
                spdy_frame_clear(&f);
                if (end)
                        break;
                reap(&list);
        }
        /* a copier may wait on a client that stopped reading: the
         * connection's end frees it */
        shutdown(c->fd, SHUT_RDWR);
        for (struct pf_pair *p = list; p; p = p->next)
                if (p->fd >= 0)
                        shutdown(p->fd, SHUT_RDWR);
        while (list) {
                struct pf_pair *p = list;
                list = p->next;
                pair_free(p);
        }
}

/* ---- over a WebSocket ------------------------------------------------------ */

/* How long the client may take to answer our close before the connection
 * is closed under it (as remotecommand.c's linger). */
#define PF_WS_LINGER_MS 10000

/* One port of a WebSocket session: channels 2i (data) and 2i + 1 (error). */
struct pf_ws_pair {
        int32_t port;
        uint8_t ch_data;
        int fd; /* the dialled socket, -1 without one */
        pthread_t copier;
        bool copying;
        struct ws_conn *conn;
        const char *sandbox;
        atomic_int *active; /* the session's pairs whose pod side is open */
        int done_fd;        /* the session's: written when the last pair ends */
};

/* The pair's failure, on its error channel in upstream's words. */
static void ws_pair_error(struct pf_ws_pair *p, const char *why)
{
        cleanup_free char *msg =
            xasprintf("error forwarding port %d to pod %s, uid : %s", p->port, p->sandbox, why);
        LOG_ERROR("Port-forward failed", "sandbox=\"%s\" port=%d err=\"%s\"", p->sandbox, p->port,
                  why);
        ws_conn_write(p->conn, (uint8_t)(p->ch_data + 1), msg, strlen(msg));
}

/* A pair's end (or the end of the start of them all, counted as one):
 * the last one wakes the session's reader, which ends the session. */
static void ws_pairs_less_one(atomic_int *active, int done_fd)
{
        uint64_t one = 1;
        if (atomic_fetch_sub(active, 1) == 1 && write(done_fd, &one, sizeof(one)) < 0)
                LOG_WARN("Cannot end a port-forward session", "err=\"%s\"", strerror(errno));
}

static void *ws_copier_main(void *arg)
{
        struct pf_ws_pair *p = arg;
        char buf[32 * 1024];
        for (;;) {
                ssize_t n = recv(p->fd, buf, sizeof(buf), 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno != ECONNRESET && errno != EPIPE && errno != ESHUTDOWN)
                        ws_pair_error(p, strerror(errno));
                if (n <= 0)
                        break;
                if (ws_conn_write(p->conn, p->ch_data, buf, (size_t)n) < 0)
                        break;
        }
        ws_pairs_less_one(p->active, p->done_fd);
        return NULL;
}

void pf_serve_ws(const struct streaming_runtime *rt, const struct streaming_request *r,
                 struct ws_conn *c)
{
        size_t n = r->n_ports;
        struct pf_ws_pair *pairs = xcalloc(n ? n : 1, sizeof(*pairs));
        atomic_int active = (int)n + 1; /* + 1: until every pair is started */
        int done_fd = eventfd(0, EFD_CLOEXEC);
        if (done_fd < 0) {
                LOG_ERROR("Port-forward failed", "sandbox=\"%s\" err=\"eventfd: %s\"", r->id,
                          strerror(errno));
                free(pairs);
                return;
        }
        c->wake_fd = done_fd;
        /* upstream writes each channel's port first, then forwards */
        for (size_t i = 0; i < n; i++) {
                uint8_t le[2] = {(uint8_t)r->ports[i], (uint8_t)(r->ports[i] >> 8)};
                pairs[i] = (struct pf_ws_pair){.port = r->ports[i],
                                               .ch_data = (uint8_t)(2 * i),
                                               .fd = -1,
                                               .conn = c,
                                               .sandbox = r->id,
                                               .active = &active,
                                               .done_fd = done_fd};
                ws_conn_write(c, (uint8_t)(2 * i), le, 2);
                ws_conn_write(c, (uint8_t)(2 * i + 1), le, 2);
        }
        for (size_t i = 0; i < n; i++) {
                struct pf_ws_pair *p = &pairs[i];
                cleanup_error ck_error_t err = NULL;
                int perr;
                if (rt->port_dial(rt->ctx, r->id, p->port, &p->fd, &err) < 0) {
                        p->fd = -1;
                        ws_pair_error(p, ck_error_msg(err));
                        ws_pairs_less_one(p->active, p->done_fd);
                } else if ((perr = pthread_create(&p->copier, NULL, ws_copier_main, p)) != 0) {
                        ws_pair_error(p, strerror(perr));
                        ws_pairs_less_one(p->active, p->done_fd);
                } else {
                        p->copying = true;
                }
        }
        ws_pairs_less_one(&active, done_fd); /* all started: if none is left, the end */
        /* the client's data to the pods, until every pod side closed (the
         * read is woken), the client leaves, or the connection fails */
        bool failed = false;
        for (;;) {
                int ch;
                const uint8_t *data;
                size_t len;
                cleanup_error ck_error_t err = NULL;
                int rr = ws_conn_read(c, &ch, &data, &len, 0, &err);
                if (rr < 0 && err->status != ECANCELED) {
                        LOG_INFO(4, "Port-forward connection ended", "sandbox=\"%s\" err=\"%s\"",
                                 r->id, ck_error_msg(err));
                        failed = true;
                }
                if (rr <= 0)
                        break;
                if (ch < 0 || ch % 2 != 0 || (size_t)ch / 2 >= n) /* an error channel, or none */
                        continue;
                struct pf_ws_pair *p = &pairs[ch / 2];
                if (p->fd >= 0 && len > 0 && net_send_all_watch(p->fd, data, len, c->fd) < 0)
                        shutdown(p->fd, SHUT_RDWR);
        }
        c->wake_fd = -1;
        if (failed) {
                /* a copier may wait on a client that does not read */
                shutdown(c->fd, SHUT_RDWR);
        } else {
                /* our close, then the client's answer (its bytes drained),
                 * so that what the pods sent last is not reset away */
                ws_conn_close(c, 1000);
                shutdown(c->fd, SHUT_WR);
                int64_t until = fs_now_mono_ms() + PF_WS_LINGER_MS;
                for (;;) {
                        int ch;
                        const uint8_t *data;
                        size_t len;
                        cleanup_error ck_error_t err = NULL;
                        if (ws_conn_read(c, &ch, &data, &len, until, &err) <= 0)
                                break;
                }
                shutdown(c->fd, SHUT_RDWR);
        }
        for (size_t i = 0; i < n; i++) {
                if (pairs[i].fd >= 0)
                        shutdown(pairs[i].fd, SHUT_RDWR);
                if (pairs[i].copying)
                        pthread_join(pairs[i].copier, NULL);
                if (pairs[i].fd >= 0)
                        close(pairs[i].fd);
        }
        close(done_fd);
        free(pairs);
}
