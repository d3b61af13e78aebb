/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The interruptible sleep of a background thread that another thread
 * stops: it waits on a condition variable until a time passes or a stop
 * flag is set; and the plain sleep of a thread nobody stops.
 */
#ifndef CK_UTIL_SLEEP_H
#define CK_UTIL_SLEEP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Sleeps ms milliseconds unless *stop is set first.  cond must use
 * CLOCK_MONOTONIC (pthread_condattr_setclock); whoever sets *stop
 * broadcasts cond while holding lock.  Takes and releases lock (the caller
 * must not hold it); other signals of cond do not end the sleep early.
 * Returns false when stopped. */
bool sleep_unless_stopped(pthread_mutex_t *lock, pthread_cond_t *cond, const atomic_bool *stop,
                          int64_t ms);

/* The same, ended early too by *wake set (and clearing it): a thread told
 * to do its work now.  Whoever sets *wake broadcasts cond holding lock. */
bool sleep_unless_woken(pthread_mutex_t *lock, pthread_cond_t *cond, const atomic_bool *stop,
                        atomic_bool *wake, int64_t ms);

/* Sleeps ms milliseconds of CLOCK_MONOTONIC, whatever signals arrive
 * (ms <= 0: returns at once). */
void sleep_ms(int64_t ms);

#endif
