/* SPDX-License-Identifier: Apache-2.0 */
/* Interruptible sleeps (see sleep.h). */
#include "util/sleep.h"

#include <errno.h>
#include <time.h>

/* never set: exchanging it writes false over false */
static atomic_bool never;

bool sleep_unless_stopped(pthread_mutex_t *lock, pthread_cond_t *cond, const atomic_bool *stop,
                          int64_t ms)
{
        return sleep_unless_woken(lock, cond, stop, &never, ms);
}

bool sleep_unless_woken(pthread_mutex_t *lock, pthread_cond_t *cond, const atomic_bool *stop,
                        atomic_bool *wake, int64_t ms)
{
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += ms / 1000;
        until.tv_nsec += (ms % 1000) * 1000000;
        if (until.tv_nsec >= 1000000000) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000;
        }
        pthread_mutex_lock(lock);
        while (!atomic_load(stop) && !atomic_exchange(wake, false) &&
               pthread_cond_timedwait(cond, lock, &until) != ETIMEDOUT)
                ;
        pthread_mutex_unlock(lock);
        return !atomic_load(stop);
}

void sleep_ms(int64_t ms)
{
        if (ms <= 0)
                return;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        int64_t ns = (int64_t)ts.tv_nsec + (ms % 1000) * 1000000;
        ts.tv_sec += (time_t)(ms / 1000 + ns / 1000000000);
        ts.tv_nsec = (long)(ns % 1000000000);
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
                ;
}
