/* SPDX-License-Identifier: Apache-2.0 */
#include "client/pool.h"

#include "util/log.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdlib.h>

/* Idle clients kept: as many as threads that usually talk at once (eight
 * pod workers); more would be connections held open for nothing. */
#define POOL_MAX_IDLE 8

struct rest_pool {
        struct rest_config cfg;
        struct rest_ratelimiter *rl;
        pthread_mutex_t lock;
        struct rest_client *idle[POOL_MAX_IDLE];
        size_t n_idle;
};

int rest_pool_new(const struct rest_config *cfg, struct rest_ratelimiter *rl,
                  struct rest_pool **out, ck_error_t *err)
{
        struct rest_client *first = NULL;
        if (rest_client_new(cfg, rl, &first, err) < 0)
                return -1;
        struct rest_pool *p = xcalloc(1, sizeof(*p));
        rest_config_copy(&p->cfg, cfg);
        p->rl = rl;
        pthread_mutex_init(&p->lock, NULL);
        p->idle[p->n_idle++] = first;
        *out = p;
        return 0;
}

void rest_pool_free(struct rest_pool *p)
{
        if (p == NULL)
                return;
        for (size_t i = 0; i < p->n_idle; i++)
                rest_client_free(p->idle[i]);
        rest_config_clear(&p->cfg);
        pthread_mutex_destroy(&p->lock);
        free(p);
}

struct rest_client *rest_pool_get(struct rest_pool *p)
{
        pthread_mutex_lock(&p->lock);
        struct rest_client *c = p->n_idle > 0 ? p->idle[--p->n_idle] : NULL;
        pthread_mutex_unlock(&p->lock);
        if (c != NULL)
                return c;
        ck_error_t err = NULL;
        if (rest_client_new(&p->cfg, p->rl, &c, &err) < 0) {
                /* the same config succeeded in rest_pool_new: only memory
                 * exhaustion can get here */
                LOG_ERROR("Failed to create an apiserver client", "err=\"%s\"", ck_error_msg(err));
                abort();
        }
        return c;
}

void rest_pool_put(struct rest_pool *p, struct rest_client *c)
{
        if (c == NULL)
                return;
        pthread_mutex_lock(&p->lock);
        if (p->n_idle < POOL_MAX_IDLE) {
                p->idle[p->n_idle++] = c;
                c = NULL;
        }
        pthread_mutex_unlock(&p->lock);
        rest_client_free(c);
}
