/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An HTTP/1.1 client: what the kubelet needs of Go's net/http client, for
 * the apiserver's REST client (client/rest.c) and the httpGet probes and
 * lifecycle hooks (probe/http.c).
 *
 * One client is one connection to one host:port, plain TCP or TLS
 * (OpenSSL), or to a unix socket (the Docker Engine API), kept alive between requests when asked
 * and when the server allows it (HTTP/1.1, no "Connection: close", a body with its own end). A kept
 * connection the server closed while idle is noticed before reuse; a GET or HEAD whose reused
 * connection breaks before any byte of the answer is sent again once on a new one, as Go's
 * transport does.
 *
 * Bodies are read as they arrive, de-chunked, and gunzipped when the
 * request asked for gzip (Accept-Encoding, as Go's transport adds and
 * decodes itself).  Blocking I/O bounded by a CLOCK_MONOTONIC deadline
 * (fs_now_mono_ms), with an optional stop flag polled at least once a
 * second.  Every descriptor is O_CLOEXEC.  Plain writes never raise
 * SIGPIPE (MSG_NOSIGNAL); OpenSSL writes with write(2), so a TLS client
 * needs SIGPIPE ignored or blocked, as the agent has it.
 *
 * A client belongs to one thread at a time.
 */
#ifndef CK_HTTP_HTTP_CLIENT_H
#define CK_HTTP_HTTP_CLIENT_H

#include "http/http1.h"
#include "util/error.h"

#include <openssl/ssl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* err->code of a failed exchange. */
enum http_error_code {
        HTTP_ERR_CONNECT = 1,   /* no connection (refused, unreachable, DNS) */
        HTTP_ERR_TIMEOUT = 2,   /* the deadline passed */
        HTTP_ERR_STOPPED = 3,   /* the stop flag was raised */
        HTTP_ERR_TRANSPORT = 4, /* TLS failure, reset, EOF inside a message */
        HTTP_ERR_PROTOCOL = 5,  /* an answer that is not HTTP/1.x, or too big a head */
};

/* An absolute http or https URL, split. */
struct http_url {
        char *scheme;    /* "http" or "https", lower case */
        char *host;      /* without the brackets of an IPv6 literal */
        char *port;      /* decimal; the scheme's default when the URL names none */
        char *authority; /* host[:port] as the URL has it (the Host header) */
        char *target;    /* path and query as they came ("/" when empty), no fragment */
};

/* Splits url (scheme://host[:port][/path][?query][#fragment]; userinfo
 * refused).  0, or -1 with err. */
int http_url_parse(const char *url, struct http_url *u, ck_error_t *err);
void http_url_clear(struct http_url *u);

/* s percent-encoded: every byte but RFC 3986's unreserved ones (A-Z a-z
 * 0-9 - . _ ~) as %XX, upper case (Go's url.QueryEscape but for ' ',
 * which is %20 here): a new string.  For a query value or a path
 * segment. */
char *http_escape(const char *s);

/* "host:port", with brackets around an IPv6 host (Go's JoinHostPort). */
char *http_join_host_port(const char *host, const char *port);

/* ref (a Location header) resolved against the absolute URL base, as Go's
 * URL.ResolveReference (RFC 3986 5.2, dot segments removed): a new string,
 * or NULL when base does not parse. */
char *http_url_resolve(const char *base, const char *ref);

/* TLS material for a client context, PEM in memory (any may be NULL). */
struct http_tls_config {
        const char *ca_pem; /* the only trust anchors; NULL: the system's */
        size_t ca_len;
        const char *cert_pem; /* client certificate, then its chain */
        size_t cert_len;
        const char *key_pem; /* its private key (secret) */
        size_t key_len;
        bool insecure; /* no verification of the server at all */
};

/* A client TLS context: TLS 1.2 or later, ALPN http/1.1, the server's
 * certificate verified against the CA unless insecure.  0, or -1 with err
 * naming the material that did not load. */
int http_tls_client_ctx(const struct http_tls_config *cfg, SSL_CTX **out, ck_error_t *err);

struct http_client_options {
        SSL_CTX *tls;               /* NULL: plain HTTP; borrowed, outlives the client */
        const char *tls_name;       /* SNI (unless an IP) and the name the certificate must
                                     * hold when the context verifies; NULL: the host */
        bool keep_alive;            /* reuse the connection between requests */
        int tcp_keepalive_s;        /* TCP keep-alive probes every that many s (0: none) */
        bool linger;                /* SO_LINGER {on, 1 s}: upstream's probe dialer */
        int64_t connect_timeout_ms; /* 0: the request's deadline only */
        const atomic_bool *stop;    /* borrowed, may be NULL */
        const char *unix_path;      /* connect to this unix socket instead of host:port
                                     * (host is then the Host header only) */
};

struct http_client;

/* A client for host:port (no connection yet).  o is copied. */
struct http_client *http_client_new(const char *host, const char *port,
                                    const struct http_client_options *o);
void http_client_free(struct http_client *c);

/* Replaces the stop flag of the options (borrowed, may be NULL). */
void http_client_set_stop(struct http_client *c, const atomic_bool *stop);

struct http_field {
        const char *name;
        const char *value;
};

struct http_request_spec {
        const char *method;
        const char *target;               /* origin-form "/path?query", sent as is */
        const char *host;                 /* the Host header's value */
        const struct http_field *headers; /* sent as given (checked: no CR/LF) */
        size_t n_headers;
        const char *body; /* with Content-Length; NULL: none (and no Content-Length
                           * unless the method carries a body: POST, PUT, PATCH) */
        size_t body_len;
        bool gzip; /* Accept-Encoding: gzip, and the answer decoded */
};

/* The head of an answer: status and header fields (head, parsed). */
struct http_answer {
        int status;
        char *head; /* the raw head, NUL-terminated */
        struct http_response parsed;
};

/* A header field of the answer as a new string, or NULL. */
char *http_answer_header(const struct http_answer *a, const char *name);
void http_answer_clear(struct http_answer *a);

/* Connects when there is no live connection, sends the request and reads
 * the answer's head into *a (1xx answers but 101 skipped).  Then the body
 * is read with http_client_read, and the exchange ended with
 * http_client_end.  0, or -1 with err (enum http_error_code; the message
 * names the step and the cause, e.g. "connect `10.0.0.1:80`: Connection
 * refused") and the connection closed. */
int http_client_send(struct http_client *c, const struct http_request_spec *req,
                     int64_t deadline_ms, struct http_answer *a, ck_error_t *err);

/* Reads up to cap bytes of the body: the count, 0 at its end, -1 with err. */
ssize_t http_client_read(struct http_client *c, char *buf, size_t cap, int64_t deadline_ms,
                         ck_error_t *err);

/* Ends the exchange: the connection is kept when the body was read to its
 * end and keeping it is allowed, else closed. */
void http_client_end(struct http_client *c);

/* The errno of the last failed connect (0 if none): Go's error text for a
 * probe names it ("dial tcp ...: connect: connection refused"). */
int http_client_connect_errno(const struct http_client *c);

#endif
