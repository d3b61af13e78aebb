/* SPDX-License-Identifier: Apache-2.0 */
#include "client/ratelimit.h"
#include "util/xalloc.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct rest_ratelimiter {
        pthread_mutex_t lock;
        double qps;      /* tokens per second; <= 0: unlimited */
        double burst;    /* bucket size */
        double tokens;   /* may go negative: reserved by waiting callers */
        int64_t last_ns; /* when tokens was last brought up to date */
        int started;     /* last_ns is set */
};

struct rest_ratelimiter *rest_ratelimiter_new(double qps, int burst)
{
        struct rest_ratelimiter *rl = xcalloc(1, sizeof(*rl));
        pthread_mutex_init(&rl->lock, NULL);
        rl->qps = qps;
        rl->burst = burst < 1 ? 1 : burst;
        rl->tokens = rl->burst;
        return rl;
}

void rest_ratelimiter_free(struct rest_ratelimiter *rl)
{
        if (rl == NULL)
                return;
        pthread_mutex_destroy(&rl->lock);
        free(rl);
}

int64_t rest_ratelimiter_reserve(struct rest_ratelimiter *rl, int64_t now_ns)
{
        if (rl == NULL || !(rl->qps > 0))
                return 0;
        pthread_mutex_lock(&rl->lock);
        if (rl->started && now_ns > rl->last_ns) {
                rl->tokens += (double)(now_ns - rl->last_ns) * rl->qps / 1e9;
                if (rl->tokens > rl->burst)
                        rl->tokens = rl->burst;
        }
        if (!rl->started || now_ns > rl->last_ns)
                rl->last_ns = now_ns;
        rl->started = 1;
        rl->tokens -= 1;
        int64_t wait = 0;
        if (rl->tokens < 0)
                wait = (int64_t)ceil(-rl->tokens / rl->qps * 1e9);
        pthread_mutex_unlock(&rl->lock);
        return wait;
}

void rest_ratelimiter_accept(struct rest_ratelimiter *rl)
{
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        int64_t wait = rest_ratelimiter_reserve(rl, (int64_t)now.tv_sec * 1000000000 + now.tv_nsec);
        if (wait <= 0)
                return;
        struct timespec d = {.tv_sec = wait / 1000000000, .tv_nsec = wait % 1000000000};
        while (nanosleep(&d, &d) < 0 && errno == EINTR)
                ;
}
