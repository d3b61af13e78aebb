/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internals of the HTTPS server shared by secure.c (threads, requests),
 * secure_conn.c (TLS I/O and responses) and secure_tls.c (the SSL_CTX and
 * the peer's identity).  Not for other modules.
 */
#ifndef CK_SERVER_SECURE_INTERNAL_H
#define CK_SERVER_SECURE_INTERNAL_H

#include "server/secure.h"

#include <openssl/ssl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#define SECURE_DRAIN_MS 1000 /* after the response: wait this long for the client's close */

enum secure_resp {
        SECURE_RESP_NONE = 0, /* nothing sent yet */
        SECURE_RESP_DONE,     /* a whole response, or an ended stream */
        SECURE_RESP_STREAM,   /* a stream was begun */
};

struct secure_conn {
        struct secure_server *server;
        struct secure_conn *prev, *next; /* in the server's active or done list (server lock) */
        pthread_t thread;
        int fd;   /* closed by the connection thread under the server lock */
        SSL *ssl; /* connection thread only */
        int64_t accepted_ms;
        char remote[64]; /* "ip:port" */
        enum secure_resp resp;
        bool head_only;     /* HEAD: headers without a body */
        bool http10;        /* an HTTP/1.0 client: no chunked framing */
        bool broken;        /* a TLS or socket error, or the peer went away: no more I/O */
        bool plain_http;    /* the handshake failed on a plain HTTP request */
        char io_error[128]; /* why the last TLS call failed (for logs) */
        size_t in_len;
        char in[SECURE_MAX_HEAD];
};

struct secure_server {
        int listen_fd, stop_fd, reap_fd;
        int port;
        SSL_CTX *tls;
        /* lazy_tls: the options the context is made from at the first
         * connection (strings borrowed from the caller), once, under tls_mu */
        bool lazy_tls;
        int64_t tls_retry_ms; /* CLOCK_MONOTONIC: no new try before */
        struct secure_server_options opts;
        pthread_mutex_t tls_mu;
        secure_handler_fn handler;
        void *ctx;
        int request_timeout_ms;
        int max_conns;
        atomic_bool stopping;
        pthread_t accept_thread;
        pthread_mutex_t mu; /* guards the lists, n_active and the connections' fds */
        pthread_cond_t cv;  /* a connection moved to done */
        struct secure_conn *active, *done;
        size_t n_active;
};

/* secure_tls.c */

/* The server's TLS context from the options (see secure.h), or an error
 * that names the step and the file. */
int secure_tls_new(const struct secure_server_options *o, SSL_CTX **out, ck_error_t *err);

/* What can be checked of the options without setting OpenSSL up (lazy_tls):
 * the TLS version and cipher suite names, a certificate file with its key,
 * a self-signed pair that is whole (nothing is made). */
int secure_tls_check_options(const struct secure_server_options *o, ck_error_t *err);

/* The client certificate's identity after the handshake: cn and orgs (new
 * strings, orgs NULL-terminated) when it verified, verify_error when it
 * did not; all NULL/empty when there is none. */
struct secure_peer {
        char *cn;
        char **orgs;
        char *verify_error;
};
void secure_tls_peer(SSL *ssl, struct secure_peer *p);
void secure_tls_peer_free(struct secure_peer *p);

/* secure_conn.c (connection thread only) */

/* The TLS handshake, until deadline_ms (CLOCK_MONOTONIC).  < 0: failed
 * (c->io_error says why). */
int secure_conn_handshake(struct secure_conn *c, int64_t deadline_ms);

/* Reads what is there (waits until deadline_ms): > 0 bytes, 0 the client
 * closed, < 0 an error or the deadline. */
int secure_conn_read(struct secure_conn *c, void *buf, size_t len, int64_t deadline_ms);

/* After the handler: answers 500 if it answered nothing, ends an open
 * stream, sends close_notify and waits briefly for the client to close. */
void secure_conn_finish(struct secure_conn *c);

#endif
