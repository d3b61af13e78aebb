/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kubelet's HTTP/1.1 server core, one for every port it serves: the
 * secure port (--port, 10250, TLS), the read-only port (--read-only-port)
 * and the healthz port (--healthz-port, 10248).  Framing, keep-alive,
 * request bodies and connection upgrades live here; routes, authentication
 * and request logs belong to the caller's handler (kubelet/kubelet_server.c).
 *
 * TLS (tls = true) as upstream (cmd/kubelet/app/server.go InitializeTLS):
 * the given cert_file/key_file, or else a self-signed pair
 * <cert_dir>/kubelet.crt + kubelet.key (server/selfsigned.h), reused when
 * present; TLS 1.2 at least.  With a client CA file, client certificates
 * are requested but not required (Go's tls.RequestClientCert), and the
 * handshake accepts any certificate, as Go's does: verification against the
 * client CA happens per request, like upstream's x509 authenticator.  A
 * verified certificate shows up as peer_cn/peer_orgs; one that fails
 * verification as peer_verify_error.  Plain HTTP sent to the TLS port gets
 * Go's unencrypted "Client sent an HTTP request to an HTTPS server." 400.
 *
 * HTTP: one thread per connection (at most HTTPD_MAX_CONNS at once; a
 * connection beyond that is closed at once).  Connections are kept alive
 * as Go's server does: an HTTP/1.1 request without "Connection: close" may
 * be followed by another on the same connection, which waits up to
 * idle_timeout_ms (90 s, upstream's IdleTimeout) for it; HTTP/1.0 clients
 * get one request.  The first request head must arrive within the request
 * timeout (10 s, TLS handshake included), each later one within it of its
 * first byte; a head must fit in HTTPD_MAX_HEAD bytes (else 431), a
 * malformed one gets 400 (an HTTP/1.1 request without Host too, as Go).
 * The path is percent-decoded (a bad escape: 400) and, as Go's ServeMux,
 * a path that is not clean ("//", "/./", "/../") is answered 301 to its
 * clean form, so handlers and authorization see one spelling of a path.
 * HEAD requests get the headers without the body.  A request body (Content-
 * Length or chunked) is read by the handler (httpd_body_read); what it
 * leaves is discarded after the response, up to HTTPD_DRAIN_BODY bytes
 * (more: the connection is closed).
 *
 * Upgrades: a handler may take the connection over (httpd_hijack) and speak
 * whatever it likes on it, e.g. proxy SPDY or WebSocket to the runtime's
 * streaming server; the connection closes when the handler returns.
 *
 * SIGPIPE: connection threads block SIGPIPE, so a write to a vanished
 * client fails with EPIPE instead of killing the process, whatever the
 * process' disposition.
 */
#ifndef CK_SERVER_HTTPD_H
#define CK_SERVER_HTTPD_H

#include "http/http1.h"
#include "util/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define HTTPD_MAX_CONNS 1024
#define HTTPD_MAX_HEAD 16384
#define HTTPD_DRAIN_BODY (256 * 1024)

/* One request, borrowed for the duration of the handler call (copy what
 * must outlive it).  All strings are NUL-terminated. */
struct httpd_request {
        const char *method;            /* "GET", ... */
        const char *path;              /* percent-decoded and clean (see above) */
        const char *raw_path;          /* as sent, not decoded */
        const char *query;             /* raw query after '?', or NULL */
        const char *authorization;     /* the Authorization header value, or NULL */
        bool upgrade;                  /* a Connection header names "upgrade" (as upstream's
                                        * httpstream.IsUpgradeRequest: case-insensitive substring) */
        const char *peer_cn;           /* verified client certificate's subject CN; NULL when there
                                        * is no certificate, it failed verification, or its CN is
                                        * empty (and always without TLS) */
        const char *const *peer_orgs;  /* its O= values in order, NULL-terminated (empty when
                                        * peer_cn is NULL) */
        const char *peer_verify_error; /* a client certificate was presented but failed
                                        * verification against the client CA: why; else NULL */
        const char *remote_addr;       /* the client's "ip:port" ("[ip6]:port") */
        const char *user_agent;        /* the User-Agent header value, or NULL */
        /* the whole head as received (request line and header fields, the
         * blank line included) and its parse, for header lookups with
         * http_request_header() and for proxying */
        const char *head;
        const struct http_request *parsed;
};

/* One connection, for the handler to answer on.  Valid only during the
 * handler call, and only on the thread that runs it. */
struct httpd_conn;

/* Called on the connection's own thread, once per request, with the
 * parsed request.  Answer with httpd_respond() or an httpd_stream_*()
 * sequence, or take the connection over with httpd_hijack(); if the
 * handler answers nothing, the server answers 500.  Many connections run
 * handlers concurrently: ctx must be thread-safe. */
typedef void (*httpd_handler_fn)(void *ctx, const struct httpd_request *req, struct httpd_conn *c);

struct httpd_options {
        const char *name;    /* for logs: "kubelet server", "read-only server", ... */
        const char *address; /* "0.0.0.0", "::", "127.0.0.1", "[::1]"; NULL/"": 0.0.0.0 */
        int port;            /* 0: an ephemeral port (tests; see httpd_port) */
        bool tls;            /* HTTPS with the settings below; false: plain HTTP */
        const char *cert_file, *key_file; /* both or neither (NULL or "") */
        const char *cert_dir;             /* neither: the self-signed pair lives here */
        const char *hostname;        /* the self-signed certificate's host; NULL: gethostname() */
        const char *client_ca_file;  /* NULL/"": client certificates are not requested */
        const char *tls_min_version; /* Go's name ("VersionTLS13"); NULL/"": TLS 1.2 */
        const char *const *tls_cipher_suites; /* Go's names (TLS 1.2 and older), NULL-terminated;
                                               * NULL/empty: OpenSSL's defaults; TLS 1.3 names
                                               * are accepted and ignored, as Go does */
        httpd_handler_fn handler;
        void *ctx;
        int request_timeout_ms; /* handshake + request head; 0: 10000 (tests set it lower) */
        int idle_timeout_ms;    /* keep-alive wait for the next request; 0: 90000 */
        int max_conns;          /* connections at once; 0: HTTPD_MAX_CONNS (tests set it lower) */
        /* Make the TLS context (and a self-signed pair) at the first
         * connection rather than at start: OpenSSL's setup maps about 3 MB
         * of libcrypto/libssl pages, which a node nobody connects to need
         * not carry.  At start only the given certificate and key files are
         * checked to be readable; a later TLS setup error is logged and the
         * connection closed.  The option strings must then stay valid until
         * httpd_stop. */
        bool lazy_tls;
};

struct httpd;

/* Prepares TLS (loads or creates the certificate, loads the client CA;
 * with lazy_tls only the checks that need no OpenSSL: names of the TLS
 * version and suites, the given files open as regular files, a self-signed
 * pair is whole), binds, and starts accepting on a thread of its own.
 * Options are copied, their strings too unless lazy_tls.  Errors name the
 * step and the file ("load TLS certificate `/x/kubelet.crt`: ...", "load
 * client CA file `...`: ...", "bind ..."). */
int httpd_start(const struct httpd_options *o, struct httpd **out, ck_error_t *err);

/* The port actually bound (useful with port 0).  Any thread. */
int httpd_port(struct httpd *s);

/* Stops accepting, closes the listener, shuts every open connection down
 * (blocked reads and writes fail, httpd_conn_closed() turns true) and
 * waits for every connection thread to finish; then frees s.  Returns as
 * soon as the handlers return: a handler that waits on something else than
 * its connection must poll httpd_conn_closed().  Not from a handler.
 * NULL: no-op. */
void httpd_stop(struct httpd *s);

/* A whole response: status line, Content-Type (NULL: "text/plain;
 * charset=utf-8"), extra header lines (NULL, or "Name: value\r\n"...),
 * Content-Length, Date, then body.  Returns 0, or < 0 when the client went
 * away, the server stops, or a response was already begun on c.  Handler
 * thread only. */
int httpd_respond(struct httpd_conn *c, int status, const char *content_type, const char *body,
                  size_t len);
int httpd_respond_with(struct httpd_conn *c, int status, const char *content_type,
                       const char *extra_headers, const char *body, size_t len);

/* A streamed response: begin writes the head (Transfer-Encoding: chunked;
 * to an HTTP/1.0 client: no framing, the end of the body is the close),
 * each write sends buf as one chunk (len 0: nothing), end sends the last
 * chunk.  Each returns 0, or < 0 when the client went away (checked before
 * every write, so a write after the client closed fails even while the
 * kernel would still take the bytes), the server stops, or a write stalled
 * for HTTPD_WRITE_STALL_MS.  A stream the handler does not end is ended
 * by the server.  Handler thread only. */
#define HTTPD_WRITE_STALL_MS (5 * 60 * 1000)
int httpd_stream_begin(struct httpd_conn *c, int status, const char *content_type);
int httpd_stream_write(struct httpd_conn *c, const char *buf, size_t len);
int httpd_stream_end(struct httpd_conn *c);

/* True when the client has closed or reset its end of the connection (a
 * FIN counts: Go's server cancels the request context on EOF too), a write
 * failed, or the server stops.  Cheap (one poll(2) with no wait): a
 * handler that waits for something else, e.g. the logs follower waiting
 * for new log lines, calls it about once a second and gives up when it
 * turns true.  Not after httpd_hijack.  Handler thread only. */
bool httpd_conn_closed(struct httpd_conn *c);

/* The request body: reads up to len bytes of it (Content-Length or
 * chunked; none: the body is empty).  Returns the bytes read, 0 at its
 * end, < 0 when it is malformed, the client went away or stays silent for
 * the request timeout.  Handler thread only, before the response. */
ssize_t httpd_body_read(struct httpd_conn *c, void *buf, size_t len);

/* The whole body as a new NUL-terminated string (*out, *len without the
 * NUL).  Returns 0; -413 when it is longer than max (nothing is kept); < 0
 * otherwise as httpd_body_read. */
int httpd_body_all(struct httpd_conn *c, size_t max, char **out, size_t *len);

/* Takes the connection over: no response framing from here on, the
 * connection is closed after the handler returns.  *pending, *pending_len:
 * what the client sent after the request head (borrowed, valid until the
 * handler returns), to be handled before anything read later.  Returns 0;
 * < 0 once a response was begun.  Handler thread only. */
int httpd_hijack(struct httpd_conn *c, const char **pending, size_t *pending_len);

/* After httpd_hijack: the socket (to poll for POLLIN; with TLS, check
 * httpd_raw_pending first: decrypted bytes may wait in the TLS layer). */
int httpd_raw_fd(struct httpd_conn *c);
/* Decrypted bytes already buffered (0 without TLS). */
size_t httpd_raw_pending(struct httpd_conn *c);
/* Reads what is there without waiting: > 0 bytes, 0 the client closed its
 * side (FIN or close_notify), -EAGAIN nothing yet, other < 0 an error. */
ssize_t httpd_raw_read(struct httpd_conn *c, void *buf, size_t len);
/* Writes all of buf (a write that makes no progress for
 * HTTPD_WRITE_STALL_MS fails): 0, or < 0. */
int httpd_raw_write(struct httpd_conn *c, const void *buf, size_t len);
/* Ends our side: close_notify with TLS, then shutdown(SHUT_WR). */
void httpd_raw_shutdown_write(struct httpd_conn *c);
/* True when the server is stopping (the handler should end). */
bool httpd_stopping(struct httpd_conn *c);

#endif
