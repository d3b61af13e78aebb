/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Per-key exponential backoff (upstream k8s.io/client-go/util/flowcontrol
 * Backoff): initial delay doubling to a maximum; an entry idle for twice the
 * maximum is reset (the kubelet's "10 min of clean running" with max 5 min).
 * Thread-safe.  Times are CLOCK_MONOTONIC milliseconds, passed in so that
 * unit tests control the clock.
 */
#ifndef CK_UTIL_BACKOFF_H
#define CK_UTIL_BACKOFF_H

#include <stdbool.h>
#include <stdint.h>

struct backoff;

struct backoff *backoff_new(int64_t initial_ms, int64_t max_ms);
void backoff_free(struct backoff *b);

/* True while `key` is in backoff at `now` relative to `event_ms` (the time
 * of the event being backed off, e.g. the container's finish time). */
bool backoff_is_in_backoff_since(struct backoff *b, const char *key, int64_t event_ms,
                                 int64_t now_ms);

/* Records one more failure: the delay doubles (or starts at initial); an
 * entry whose last update is older than 2*max is reset first. */
void backoff_next(struct backoff *b, const char *key, int64_t now_ms);

/* True while `key` is in backoff at `now` relative to its last update
 * (upstream IsInBackOffSinceUpdate: the image pull backoff, where the event
 * is the failed pull that updated the entry). */
bool backoff_is_in_backoff_since_update(struct backoff *b, const char *key, int64_t now_ms);

/* The current delay for key (0 if none). */
int64_t backoff_get(struct backoff *b, const char *key);

/* Forgets the key / every key not updated since 2*max (garbage collection). */
void backoff_reset(struct backoff *b, const char *key);
void backoff_gc(struct backoff *b, int64_t now_ms);

#endif
