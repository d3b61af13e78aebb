/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internals of the HTTP server shared by httpd.c (threads, the request
 * loop), httpd_conn.c (socket and TLS I/O, responses, bodies, hijack) and
 * httpd_tls.c (the SSL_CTX and the peer's identity).  Not for other
 * modules.
 */
#ifndef CK_SERVER_HTTPD_INTERNAL_H
#define CK_SERVER_HTTPD_INTERNAL_H

#include "server/httpd.h"

#include <openssl/ssl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#define HTTPD_DRAIN_MS 1000 /* after the last response: wait this long for the client's close */

enum httpd_resp {
        HTTPD_RESP_NONE = 0, /* nothing sent yet */
        HTTPD_RESP_DONE,     /* a whole response, or an ended stream */
        HTTPD_RESP_STREAM,   /* a stream was begun */
        HTTPD_RESP_HIJACKED, /* the handler took the connection over */
};

enum httpd_body {
        HTTPD_BODY_NONE = 0, /* no body, or all of it read */
        HTTPD_BODY_LENGTH,   /* body_left bytes to come */
        HTTPD_BODY_CHUNKED,  /* chunked, decoded by `chunked` */
        HTTPD_BODY_BROKEN,   /* malformed or cut: the connection cannot go on */
};

struct httpd_conn {
        struct httpd *server;
        struct httpd_conn *prev, *next; /* in the server's active or done list (server lock) */
        pthread_t thread;
        int fd;   /* closed by the connection thread under the server lock */
        SSL *ssl; /* NULL without TLS; connection thread only */
        int64_t accepted_ms;
        char remote[64]; /* "ip:port" */
        /* the current request */
        enum httpd_resp resp;
        bool head_only;       /* HEAD: headers without a body */
        bool http10;          /* an HTTP/1.0 client: no chunked framing */
        bool close;           /* the connection ends after this response */
        bool expect_continue; /* "Expect: 100-continue", not answered yet */
        enum httpd_body body;
        uint64_t body_left;
        struct http_chunked chunked;
        /* the connection */
        bool broken;        /* a TLS or socket error, or the peer went away: no more I/O */
        bool plain_http;    /* the handshake failed on a plain HTTP request */
        char io_error[128]; /* why the last TLS call failed (for logs) */
        size_t in_off;      /* in[in_off..in_len): received, not consumed */
        size_t in_len;
        char in[HTTPD_MAX_HEAD];
};

struct httpd {
        int listen_fd, stop_fd, reap_fd;
        int port;
        SSL_CTX *tls;
        /* lazy_tls: the options the context is made from at the first
         * connection (strings borrowed from the caller), once, under tls_mu */
        bool lazy_tls;
        int64_t tls_retry_ms; /* CLOCK_MONOTONIC: no new try before */
        struct httpd_options opts;
        char name[64];
        pthread_mutex_t tls_mu;
        httpd_handler_fn handler;
        void *ctx;
        int request_timeout_ms;
        int idle_timeout_ms;
        int max_conns;
        atomic_bool stopping;
        pthread_t accept_thread;
        pthread_mutex_t mu; /* guards the lists, n_active and the connections' fds */
        pthread_cond_t cv;  /* a connection moved to done */
        struct httpd_conn *active, *done;
        size_t n_active;
};

/* httpd_tls.c */

/* The server's TLS context from the options (see httpd.h), or an error
 * that names the step and the file. */
int httpd_tls_new(const struct httpd_options *o, SSL_CTX **out, ck_error_t *err);

/* What can be checked of the options without setting OpenSSL up (lazy_tls):
 * the TLS version and cipher suite names, a certificate file with its key,
 * a self-signed pair that is whole (nothing is made). */
int httpd_tls_check_options(const struct httpd_options *o, ck_error_t *err);

/* The client certificate's identity after the handshake: cn and orgs (new
 * strings, orgs NULL-terminated) when it verified, verify_error when it
 * did not; all NULL/empty when there is none. */
struct httpd_peer {
        char *cn;
        char **orgs;
        char *verify_error;
};
void httpd_tls_peer(SSL *ssl, struct httpd_peer *p);
void httpd_tls_peer_free(struct httpd_peer *p);

/* httpd_conn.c (connection thread only) */

/* The TLS handshake, until deadline_ms (CLOCK_MONOTONIC).  < 0: failed
 * (c->io_error says why). */
int httpd_conn_handshake(struct httpd_conn *c, int64_t deadline_ms);

/* Reads more into c->in (waits until deadline_ms): > 0 bytes, 0 the client
 * closed, < 0 an error or the deadline. */
int httpd_conn_fill(struct httpd_conn *c, int64_t deadline_ms);

/* After a handler: answers 500 if it answered nothing, ends an open
 * stream, discards the rest of the request body.  Returns true when the
 * connection may serve another request. */
bool httpd_conn_end_request(struct httpd_conn *c);

/* Before closing: close_notify and a brief wait for the client's close. */
void httpd_conn_finish(struct httpd_conn *c);

#endif
