/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pieces of server/auth.c: an expiring cache keyed by salted digests,
 * and the TokenReview / SubjectAccessReview calls to the apiserver.
 */
#ifndef CK_SERVER_AUTH_INTERNAL_H
#define CK_SERVER_AUTH_INTERNAL_H

#include "client/pool.h"
#include "util/error.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define SERVER_AUTH_KEY_LEN 32 /* SHA-256 */

/* Entries a cache holds at the most: beyond, the expired go first, then the
 * one that expires soonest (upstream: an LRU of 8192 for reviews, an
 * unbounded map for tokens; a kubelet sees few clients). */
#define SERVER_AUTH_CACHE_MAX 1024

/* A map from a digest to a JSON value with an expiry.  Thread-safe (its own
 * lock). */
struct server_auth_cache;

/* A new cache with a random salt for its keys.  Errors: no random bytes. */
int server_auth_cache_new(struct server_auth_cache **out, ck_error_t *err);
void server_auth_cache_free(struct server_auth_cache *c);

/* The key of data[0..len): SHA-256 of the cache's salt and the data. */
void server_auth_cache_key(const struct server_auth_cache *c, const char *data, size_t len,
                           unsigned char key[SERVER_AUTH_KEY_LEN]);

/* A new copy of the value stored under key, or NULL when there is none or it
 * expired at now_ms. */
json_t *server_auth_cache_get(struct server_auth_cache *c, const unsigned char *key,
                              int64_t now_ms);

/* Stores a copy of value under key until now_ms + ttl_ms (ttl_ms <= 0: not
 * stored). */
void server_auth_cache_put(struct server_auth_cache *c, const unsigned char *key,
                           const json_t *value, int64_t now_ms, int64_t ttl_ms);

/* The bearer token of an Authorization header value (a new string, a
 * secret: zero it before freeing), or NULL when it carries none (upstream's
 * bearertoken authenticator: "Bearer <token>" after trimming, the scheme in
 * any case, the token up to the next space). */
char *server_auth_bearer_token(const char *authorization);

/* How the reviews reach the apiserver. */
struct server_auth_webhook {
        struct rest_pool *pool;   /* borrowed */
        int64_t retry_initial_ms; /* first retry delay; < 0: no retry */
};

/* POSTs a TokenReview of token.  On an answer returns 0 and sets *user to a
 * new reference to {"username","uid","groups","extra"} of an authenticated
 * token, or NULL for a token the apiserver does not authenticate.  Errors:
 * the request failed (after retries), or the review carries status.error. */
int server_auth_token_review(const struct server_auth_webhook *w, const char *token, json_t **user,
                             ck_error_t *err);

/* POSTs a SubjectAccessReview with spec (borrowed) and returns 0 with
 * *status a new reference to the answer's status (an object).  Errors: the
 * request failed (after retries), or the answer has no status. */
int server_auth_subject_access_review(const struct server_auth_webhook *w, const json_t *spec,
                                      json_t **status, ck_error_t *err);

#endif
