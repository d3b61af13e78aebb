/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kubelet's HTTPS server (--port, 10250): TLS and HTTP/1.1 framing
 * only; routes, authentication and request logs belong to the caller's
 * handler.
 *
 * TLS as upstream (cmd/kubelet/app/server.go InitializeTLS): the given
 * --tls-cert-file/--tls-private-key-file, or else a self-signed pair
 * <cert-dir>/kubelet.crt + kubelet.key (server/selfsigned.h), reused when
 * present; TLS 1.2 at least.  With a client CA file, client certificates
 * are requested but not required (Go's tls.RequestClientCert), and the
 * handshake accepts any certificate, as Go's does: verification against the
 * client CA happens per request, like upstream's x509 authenticator.  A
 * verified certificate shows up as peer_cn/peer_orgs; one that fails
 * verification as peer_verify_error (the request then carries no
 * certificate identity and other authenticators, e.g. a bearer token, may
 * still apply; upstream answers 401 when none does).
 *
 * HTTP: one thread per connection (at most SECURE_MAX_CONNS (1024) at once; a
 * connection beyond that is closed at once), one request per connection:
 * the request head must arrive within the request timeout (10 s, TLS
 * handshake included) and fit in SECURE_MAX_HEAD bytes (else 431); a
 * malformed head gets 400; a failed handshake is closed (logged at -v=4).
 * Every response carries "Connection: close".  A request body is never
 * read.  HEAD requests get the headers without the body.
 *
 * SIGPIPE: connection threads block SIGPIPE, so a write to a vanished
 * client fails with EPIPE instead of killing the process, whatever the
 * process' disposition.
 */
#ifndef CK_SERVER_SECURE_H
#define CK_SERVER_SECURE_H

#include "util/error.h"

#include <stdbool.h>
#include <stddef.h>

#define SECURE_MAX_CONNS 1024
#define SECURE_MAX_HEAD 16384

/* One request, borrowed for the duration of the handler call (copy what
 * must outlive it).  All strings are NUL-terminated. */
struct secure_request {
        const char *method;            /* "GET", ... */
        const char *path;              /* raw path, not percent-decoded */
        const char *query;             /* raw query after '?', or NULL */
        const char *authorization;     /* the Authorization header value, or NULL */
        bool upgrade;                  /* a Connection header names "upgrade" (as upstream's
                                        * httpstream.IsUpgradeRequest: case-insensitive substring) */
        const char *peer_cn;           /* verified client certificate's subject CN; NULL when there
                                        * is no certificate, it failed verification, or its CN is
                                        * empty */
        const char *const *peer_orgs;  /* its O= values in order, NULL-terminated (empty when
                                        * peer_cn is NULL) */
        const char *peer_verify_error; /* a client certificate was presented but failed
                                        * verification against the client CA: why; else NULL */
        const char *remote_addr;       /* the client's "ip:port" ("[ip6]:port") */
        const char *user_agent;        /* the User-Agent header value, or NULL */
};

/* One connection, for the handler to answer on.  Valid only during the
 * handler call, and only on the thread that runs it. */
struct secure_conn;

/* Called on the connection's own thread, once per connection, with the
 * parsed request.  Answer with secure_respond() or a secure_stream_*()
 * sequence; if the handler answers nothing, the server answers 500.  Many
 * connections run handlers concurrently: ctx must be thread-safe. */
typedef void (*secure_handler_fn)(void *ctx, const struct secure_request *req,
                                  struct secure_conn *c);

struct secure_server_options {
        const char *address; /* "0.0.0.0", "::", "127.0.0.1", "[::1]"; NULL/"": 0.0.0.0 */
        int port;            /* 0: an ephemeral port (tests; see secure_server_port) */
        const char *cert_file, *key_file; /* both or neither (NULL or "") */
        const char *cert_dir;             /* neither: the self-signed pair lives here */
        const char *hostname;        /* the self-signed certificate's host; NULL: gethostname() */
        const char *client_ca_file;  /* NULL/"": client certificates are not requested */
        const char *tls_min_version; /* Go's name ("VersionTLS13"); NULL/"": TLS 1.2 */
        const char *const *tls_cipher_suites; /* Go's names (TLS 1.2 and older), NULL-terminated;
                                               * NULL/empty: OpenSSL's defaults; TLS 1.3 names
                                               * are accepted and ignored, as Go does */
        secure_handler_fn handler;
        void *ctx;
        int request_timeout_ms; /* handshake + request head; 0: 10000 (tests set it lower) */
        int max_conns;          /* connections at once; 0: SECURE_MAX_CONNS (tests set it lower) */
        /* Make the TLS context (and a self-signed pair) at the first
         * connection rather than at start: OpenSSL's setup maps about 3 MB
         * of libcrypto/libssl pages, which a node nobody connects to need
         * not carry.  At start only the given certificate and key files are
         * checked to be readable; a later TLS setup error is logged and the
         * connection closed.  The option strings must then stay valid until
         * secure_server_stop. */
        bool lazy_tls;
};

struct secure_server;

/* Prepares TLS (loads or creates the certificate, loads the client CA;
 * with lazy_tls only the checks that need no OpenSSL: names of the TLS
 * version and suites, the given files open as regular files, a self-signed
 * pair is whole), binds, and starts accepting on a thread of its own.
 * Options are copied, their strings too unless lazy_tls.  Errors name the
 * step and the file ("load TLS certificate `/x/kubelet.crt`: ...", "load
 * client CA file `...`: ...", "bind ..."). */
int secure_server_start(const struct secure_server_options *o, struct secure_server **out,
                        ck_error_t *err);

/* The port actually bound (useful with port 0).  Any thread. */
int secure_server_port(struct secure_server *s);

/* Stops accepting, closes the listener, shuts every open connection down
 * (blocked reads and writes fail, secure_conn_closed() turns true) and
 * waits for every connection thread to finish; then frees s.  Returns as
 * soon as the handlers return: a handler that waits on something else than
 * its connection must poll secure_conn_closed().  Not from a handler.
 * NULL: no-op. */
void secure_server_stop(struct secure_server *s);

/* A whole response: status line, Content-Type (NULL: "text/plain;
 * charset=utf-8"), Content-Length, Date, Connection: close, then body.
 * Returns 0, or < 0 when the client went away, the server stops, or a
 * response was already begun on c.  Handler thread only. */
int secure_respond(struct secure_conn *c, int status, const char *content_type, const char *body,
                   size_t len);

/* A streamed response: begin writes the head (Transfer-Encoding: chunked;
 * to an HTTP/1.0 client: no framing, the end of the body is the close),
 * each write sends buf as one chunk (len 0: nothing), end sends the last
 * chunk.  Each returns 0, or < 0 when the client went away (checked before
 * every write, so a write after the client closed fails even while the
 * kernel would still take the bytes), the server stops, or a write stalled
 * for SECURE_WRITE_STALL_MS.  A stream the handler does not end is ended
 * by the server.  Handler thread only. */
#define SECURE_WRITE_STALL_MS (5 * 60 * 1000)
int secure_stream_begin(struct secure_conn *c, int status, const char *content_type);
int secure_stream_write(struct secure_conn *c, const char *buf, size_t len);
int secure_stream_end(struct secure_conn *c);

/* True when the client has closed or reset its end of the connection (a
 * FIN counts: Go's server cancels the request context on EOF too), a write
 * failed, or the server stops.  Cheap (one poll(2) with no wait): a
 * handler that waits for something else, e.g. the logs follower waiting
 * for new log lines, calls it about once a second and gives up when it
 * turns true.  Handler thread only. */
bool secure_conn_closed(struct secure_conn *c);

#endif
