/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An informer's store (upstream client-go SharedInformer + Indexer, the
 * subset a lister needs): every object of a collection, kept current by a
 * reflector (list, then watch), readable from any thread.
 *
 * Objects are keyed by "namespace/name" (upstream MetaNamespaceKeyFunc).
 * An optional transform (upstream SetTransform) trims each object before it
 * is stored, so that a store of every Service in a cluster keeps only the
 * fields its consumer reads.
 *
 * Thread: informer_list and informer_has_synced from any thread; the rest
 * from the thread that owns the informer.
 */
#ifndef CK_CLIENT_INFORMER_H
#define CK_CLIENT_INFORMER_H

#include "client/ratelimit.h"
#include "client/reflector.h"
#include "client/rest_config.h"
#include "util/error.h"

#include <jansson.h>
#include <stdbool.h>

/* Returns what to store for obj (borrowed): a new reference, or NULL to
 * store nothing for it.  Runs on the reflector's thread. */
typedef json_t *(*informer_transform_fn)(json_t *obj);

struct informer;

/* A store for the collection at path ("/api/v1/services"), not yet
 * watching; name is for logs.  transform may be NULL (objects kept whole). */
struct informer *informer_new(const char *name, const char *path, informer_transform_fn transform);

/* Starts the reflector (its own thread and connection; cfg is copied, rl
 * borrowed and must outlive the informer).  Errors: as reflector_start. */
int informer_start(struct informer *inf, const struct rest_config *cfg, struct rest_ratelimiter *rl,
                   ck_error_t *err);

/* True once the first list has been stored (upstream HasSynced). */
bool informer_has_synced(struct informer *inf);

/* Every stored object, ordered by key: a new JSON array whose items are
 * shared with the store (read them, never modify them). */
json_t *informer_list(struct informer *inf);

/* The events a reflector delivers, applied to the store (what
 * informer_start wires up; exposed for tests). */
void informer__replace(struct informer *inf, json_t *items);
void informer__event(struct informer *inf, enum watch_event_type type, json_t *obj);

/* Stops the reflector and frees the store.  NULL-safe. */
void informer_free(struct informer *inf);

#endif
