/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A pool of REST clients to one apiserver, for code that runs on many
 * threads (pod workers, the status manager): a rest_client belongs to one
 * thread at a time, so a thread borrows one for a few requests and gives it
 * back.  Idle clients keep their connection alive.  Thread-safe.
 */
#ifndef CK_CLIENT_POOL_H
#define CK_CLIENT_POOL_H

#include "client/ratelimit.h"
#include "client/rest.h"
#include "client/rest_config.h"
#include "util/error.h"

struct rest_pool;

/* cfg is copied; rl (may be NULL) is borrowed and must outlive the pool.
 * Errors: those of rest_client_new (checked once, here). */
int rest_pool_new(const struct rest_config *cfg, struct rest_ratelimiter *rl,
                  struct rest_pool **out, ck_error_t *err);
/* Frees the pool and its idle clients; every client must be back.  NULL-safe. */
void rest_pool_free(struct rest_pool *p);

/* An idle client, or a new one.  Never NULL (the config was checked). */
struct rest_client *rest_pool_get(struct rest_pool *p);
/* Gives c back (NULL-safe).  Kept idle up to a few, else freed. */
void rest_pool_put(struct rest_pool *p, struct rest_client *c);

#endif
