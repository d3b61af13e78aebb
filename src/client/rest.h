/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A REST client for the Kubernetes apiserver (the parts of upstream
 * k8s.io/client-go/rest the kubelet uses), JSON only, over the project's
 * HTTP/1.1 client (http/http_client.h).
 *
 * One client is one connection kept alive between requests: a client
 * belongs to one thread at a time (create one per thread); the rate
 * limiter passed in may be shared by all of them (client/ratelimit.h).
 *
 * TLS: the server is verified against the config's CA (only that CA, as
 * client-go: the system roots are used only when no CA is configured), for
 * its host name or tls_server_name; the client certificate and key and the
 * bearer token authenticate.  Every request carries
 * "User-Agent: kubelet/v1.35.0 (<os>/<arch>) ckubelet" and
 * "Accept: application/json".  No proxy is used, no redirect
 * is followed, HTTP/1.1; answers are asked for gzip and decoded, as Go's
 * transport does.
 *
 * Errors (ck_error_t): the code (err->code) is the HTTP status when the
 * apiserver answered (>= 100), else one of enum rest_error_code.  The
 * message names the request and, for an answer, the Status the apiserver
 * sent:
 *   GET /api/v1/secrets: 403 Forbidden: secrets is forbidden: User "system:node:n" ...
 * Secrets (token, key) never appear in messages or logs.
 */
#ifndef CK_CLIENT_REST_H
#define CK_CLIENT_REST_H

#include "client/ratelimit.h"
#include "client/rest_config.h"
#include "util/error.h"

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/* err->code of a request that got no HTTP answer (an HTTP status is >= 100). */
enum rest_error_code {
        REST_ERR_TRANSPORT = 1, /* TLS failure, broken connection, timeout, ... */
        REST_ERR_CONNECT = 2,   /* could not connect (refused, unreachable) */
        REST_ERR_STOPPED = 3,   /* the client's stop flag was raised */
        REST_ERR_DECODE = 4,    /* a 2xx answer whose body is not JSON */
};

/* The timeout of a request (not of a stream) unless rest_client_set_timeout
 * says otherwise.  Upstream's main client has none; here every blocking call
 * has a deadline. */
#define REST_DEFAULT_TIMEOUT_MS 60000

struct rest_client;

/* A new client for cfg (copied: cfg may be freed after the call) that takes
 * a token from rl (borrowed, may be NULL: no limit) before every request.
 * Errors: a server URL that is not http(s), TLS material that does not
 * load. */
int rest_client_new(const struct rest_config *cfg, struct rest_ratelimiter *rl,
                    struct rest_client **out, ck_error_t *err);
void rest_client_free(struct rest_client *c);

/* Makes cfg's TLS context (cfg->tls) from its material, once, for an https
 * server: every client made from cfg and its copies then shares it instead
 * of making its own (one CA store, one key; about 37 kB of heap each with
 * OpenSSL 3).  0 (also for http://, or when cfg->tls is set), or -1 with
 * the errors of rest_client_new. */
int rest_config_share_tls(struct rest_config *cfg, ck_error_t *err);

/* Per-request timeout in milliseconds (0: none).  Streams are not affected. */
void rest_client_set_timeout(struct rest_client *c, long timeout_ms);

/* A flag (borrowed, may be NULL) polled during transfers, at least about
 * once a second: when it is true the transfer is abandoned with
 * REST_ERR_STOPPED.  Any thread may set it. */
void rest_client_set_stop(struct rest_client *c, const atomic_bool *stop);

/* One request.  path: absolute ("/api/v1/pods"), not escaped by the
 * client; query: "k=v&k2=v2" already escaped (rest_query_add), or NULL.
 * body: sent with content_type when not NULL.  On a 2xx answer returns the
 * status and, when out is not NULL, the body parsed as JSON in *out (a new
 * reference; NULL for an empty body).  Else -1 and err (see above). */
int rest_request(struct rest_client *c, const char *method, const char *path, const char *query,
                 const char *content_type, const char *body, size_t body_len, json_t **out,
                 ck_error_t *err);

/* GET path?query. */
int rest_get(struct rest_client *c, const char *path, const char *query, json_t **out,
             ck_error_t *err);
/* POST (create) / PUT (update) of `obj` as application/json. */
int rest_post(struct rest_client *c, const char *path, const json_t *obj, json_t **out,
              ck_error_t *err);
int rest_put(struct rest_client *c, const char *path, const json_t *obj, json_t **out,
             ck_error_t *err);

enum rest_patch_type {
        REST_PATCH_STRATEGIC, /* application/strategic-merge-patch+json (node, pod status) */
        REST_PATCH_MERGE,     /* application/merge-patch+json (RFC 7386) */
        REST_PATCH_JSON,      /* application/json-patch+json (RFC 6902, an array) */
        REST_PATCH_APPLY,     /* application/apply-patch+yaml (needs fieldManager in query) */
};

/* PATCH path?query with `patch`. */
int rest_patch(struct rest_client *c, const char *path, const char *query,
               enum rest_patch_type type, const json_t *patch, json_t **out, ck_error_t *err);

/* DELETE path, with a DeleteOptions body when options is not NULL (e.g.
 * {"gracePeriodSeconds":0,"preconditions":{"uid":"..."}}). */
int rest_delete(struct rest_client *c, const char *path, const json_t *options, json_t **out,
                ck_error_t *err);

/* Called with each piece of a streamed 2xx body as it arrives (pieces split
 * anywhere).  Return < 0 (with err) to end the stream with that error. */
typedef int (*rest_stream_fn)(void *opaque, const char *data, size_t len, ck_error_t *err);

/* GET path?query and hand the body to fn as it arrives, until the server
 * ends it (returns the 2xx status), timeout_ms passes (0: no limit;
 * REST_ERR_TRANSPORT), the stop flag is raised, or fn fails (its error,
 * wrapped).  A non-2xx answer is read whole and reported as rest_request
 * does. */
int rest_stream(struct rest_client *c, const char *path, const char *query, long timeout_ms,
                rest_stream_fn fn, void *opaque, ck_error_t *err);

/* Appends "key=value" to *query (a new string, or NULL to start one), with
 * '&' between pairs and the value percent-encoded. */
void rest_query_add(char **query, const char *key, const char *value);

/* Fills err from a Status object the apiserver sent (a failed answer, or a
 * watch ERROR event): code = Status.code (else http_code), message
 * "<what>: <code> <reason>: <message>".  Returns -1. */
int rest_status_error(ck_error_t *err, const char *what, long http_code, const json_t *status);

#endif
