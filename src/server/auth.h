/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Authentication and authorization of the requests to the kubelet's secure
 * port (10250), as upstream's kubelet does them (cmd/kubelet/app/auth.go,
 * pkg/kubelet/server/auth.go and server.go InstallAuthFilter, and the
 * apiserver's delegating authenticator and authorizer it builds on).
 *
 * Authentication, in upstream's order:
 *   1. x509 (a client CA is configured): the verified client certificate
 *      names the user (its CN) and groups (its O values); no CN: next.
 *   2. webhook (authentication.webhook.enabled): "Authorization: Bearer <t>"
 *      is sent to the apiserver as a TokenReview; the answers (authenticated
 *      or not, not errors) are kept for authn_cache_ttl_ms.  A token the
 *      apiserver does not authenticate is an error: 401, even when anonymous
 *      requests are allowed.
 *   Both add the group "system:authenticated" (unless the user is
 *   system:anonymous or already has system:(un)authenticated).
 *   3. anonymous (authentication.anonymous.enabled): user
 *      "system:anonymous", group "system:unauthenticated".
 *   Else, or on an error: 401 with the body "Unauthorized".
 *
 * Authorization: the request is a verb (server_auth_verb) on nodes/<node>
 * with a subresource (server_auth_subresources; with two, either allowing
 * is enough).  AlwaysAllow, or webhook: a SubjectAccessReview per
 * subresource, its answer kept for authz_allowed_ttl_ms / authz_denied_ttl_ms.
 * Denied: 403 with the body
 *   "Forbidden (user=system:anonymous, verb=get, resource=nodes, subresource(s)=[proxy])\n"
 * An apiserver error (after upstream's webhook retries: up to 5 tries,
 * 500 ms growing x1.5, on 429, 500, 504 and broken connections): 500
 *   "Authorization error (user=u, verb=get, resource=nodes, subresource=proxy)"
 * (upstream's kubelet answers 500 here, not 403: fail closed either way).
 *
 * Caches hold SHA-256 digests (salted per instance) of the tokens and of the
 * review specs, never a token.  No token is ever logged.
 */
#ifndef CK_SERVER_AUTH_H
#define CK_SERVER_AUTH_H

#include "client/pool.h"
#include "util/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The KubeletConfiguration defaults (authentication.webhook.cacheTTL,
 * authorization.webhook.cacheAuthorizedTTL / cacheUnauthorizedTTL). */
#define SERVER_AUTH_DEFAULT_AUTHN_TTL_MS 120000
#define SERVER_AUTH_DEFAULT_ALLOWED_TTL_MS 300000
#define SERVER_AUTH_DEFAULT_DENIED_TTL_MS 30000

enum server_authz_mode { SERVER_AUTHZ_ALWAYS_ALLOW = 0, SERVER_AUTHZ_WEBHOOK };

struct server_auth_options {
        const char *node_name;      /* copied */
        bool x509;                  /* a client CA is configured: peer certs identify */
        bool anonymous;             /* authentication.anonymous.enabled */
        bool webhook_authn;         /* authentication.webhook.enabled (TokenReview) */
        int64_t authn_cache_ttl_ms; /* as given, 0: not cached (config default: 2m) */
        enum server_authz_mode authz_mode;
        int64_t authz_allowed_ttl_ms; /* as given, 0: not cached (config default: 5m) */
        int64_t authz_denied_ttl_ms;  /* as given, 0: not cached (config default: 30s) */
        /* Borrowed, must outlive the auth; NULL in standalone mode: then a
         * webhook mode is a configuration error, as upstream's "no client
         * provided, cannot use webhook authentication/authorization". */
        struct rest_pool *pool;
        /* The first delay of the webhook retries: 0 is upstream's 500 ms;
         * < 0: no retry (tests). */
        int64_t retry_initial_ms;
};

struct server_auth;

/* A new auth for o (copied; o->pool is borrowed).  Errors, as upstream's
 * BuildAuth refuses to start: a webhook mode without a pool, no
 * authentication method at all (neither x509, webhook nor anonymous), no
 * node name. */
int server_auth_new(const struct server_auth_options *o, struct server_auth **out, ck_error_t *err);
/* NULL-safe.  No server_auth_check_request may be running. */
void server_auth_free(struct server_auth *a);

struct server_auth_result {
        int status;    /* 0: allowed; else the HTTP status to answer: 401, 403 or 500 */
        char *message; /* owned: the body (text/plain) to send when status != 0 */
        char *user;    /* owned: the authenticated user (for logs), NULL when none */
};

/* A request as the TLS layer hands it over (all borrowed).
 *   method: the HTTP method as received ("GET").
 *   path: the request path without the query, as the router matches it
 *     (ckubelet's router matches the raw path; Go's decodes it first).
 *   authorization: the Authorization header value, or NULL.
 *   peer_cn, peer_orgs: the subject of the client certificate the TLS layer
 *     verified against the client CA (peer_orgs NULL-terminated, may be
 *     NULL), or NULL when the client sent none. */
struct server_auth_request {
        const char *method, *path, *authorization;
        const char *peer_cn;
        const char *const *peer_orgs;
        /* A client certificate was presented but failed verification against
         * the client CA: why (else NULL).  With x509 on, upstream's x509
         * authenticator fails on it: the request is then only authenticated
         * by a valid bearer token, never anonymous (401, even when anonymous
         * requests are allowed). */
        const char *peer_verify_error;
};

/* Authenticates req and authorizes its method on its path.  Thread-safe:
 * connection threads call it concurrently; it blocks while it asks the
 * apiserver (a cache miss).  Fills *out (release it with
 * server_auth_result_release).  Failures are logged as upstream logs them
 * (never with the token). */
void server_auth_check_request(struct server_auth *a, const struct server_auth_request *req,
                               struct server_auth_result *out);

/* Frees what r holds and zeroes it.  NULL-safe. */
void server_auth_result_release(struct server_auth_result *r);

/* The API verb upstream authorizes an HTTP method as: POST "create", GET
 * "get", PUT "update", PATCH "patch", DELETE "delete", any other (HEAD, ...)
 * "".  A static string. */
const char *server_auth_verb(const char *method);

/* The subresources of nodes/<node> a request path is authorized as, in the
 * order they are tried: "stats" (/stats), "metrics" (/metrics), "log"
 * (/logs), "checkpoint" (/checkpoint), "statusz", "configz" (/flagz), else
 * "proxy"; with upstream's KubeletFineGrainedAuthz (beta, on since 1.33)
 * /pods and /runningpods first try "pods", /healthz "healthz", /configz
 * "configz", then "proxy".  A path matches a prefix when it equals it or
 * continues with '/'.  Fills out[] with static strings; returns 1 or 2. */
size_t server_auth_subresources(const char *path, const char *out[2]);

#endif
