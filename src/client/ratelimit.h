/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Client-side rate limiting of apiserver requests: a token bucket as
 * upstream client-go's flowcontrol.NewTokenBucketRateLimiter (over
 * golang.org/x/time/rate): `burst` tokens at start, refilled at `qps` per
 * second up to `burst`; each request takes one token, waiting for it when
 * the bucket is empty.  The kubelet's defaults are kubeAPIQPS 50 and
 * kubeAPIBurst 100 (--kube-api-qps, --kube-api-burst).
 *
 * One limiter is shared by every REST client of a process (every thread):
 * it is thread-safe.
 */
#ifndef CK_CLIENT_RATELIMIT_H
#define CK_CLIENT_RATELIMIT_H

#include <stdint.h>

struct rest_ratelimiter;

/* A new limiter.  qps <= 0 means no limit (as client-go, where a negative
 * QPS disables the limiter): every call returns at once.  A burst below 1
 * is taken as 1. */
struct rest_ratelimiter *rest_ratelimiter_new(double qps, int burst);
void rest_ratelimiter_free(struct rest_ratelimiter *rl);

/* Takes one token at `now_ns` (CLOCK_MONOTONIC nanoseconds, passed in so
 * that tests control the clock) and returns how long the caller must wait
 * before its request (0 when a token was available).  The token is taken
 * either way: later callers queue behind it. */
int64_t rest_ratelimiter_reserve(struct rest_ratelimiter *rl, int64_t now_ns);

/* Takes a token, sleeping as long as needed.  NULL-safe (no limit). */
void rest_ratelimiter_accept(struct rest_ratelimiter *rl);

#endif
