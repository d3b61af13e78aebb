/* SPDX-License-Identifier: Apache-2.0 */
/* The expiring caches of token and access reviews (server/auth_internal.h). */
#include "server/auth_internal.h"

#include "util/xalloc.h"

#include <openssl/evp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

struct cache_entry {
        unsigned char key[SERVER_AUTH_KEY_LEN];
        json_t *value;
        int64_t expires_ms;
};

struct server_auth_cache {
        unsigned char salt[32];
        pthread_mutex_t lock; /* guards entries */
        struct cache_entry entries[SERVER_AUTH_CACHE_MAX];
        size_t n;
};

int server_auth_cache_new(struct server_auth_cache **out, ck_error_t *err)
{
        struct server_auth_cache *c = xcalloc(1, sizeof(*c));
        size_t got = 0;
        while (got < sizeof(c->salt)) {
                ssize_t r = getrandom(c->salt + got, sizeof(c->salt) - got, 0);
                if (r < 0 && errno != EINTR) {
                        free(c);
                        return ck_error_make(err, errno, "getrandom");
                }
                if (r > 0)
                        got += (size_t)r;
        }
        pthread_mutex_init(&c->lock, NULL);
        *out = c;
        return 0;
}

void server_auth_cache_free(struct server_auth_cache *c)
{
        if (c == NULL)
                return;
        for (size_t i = 0; i < c->n; i++)
                json_decref(c->entries[i].value);
        pthread_mutex_destroy(&c->lock);
        free(c);
}

void server_auth_cache_key(const struct server_auth_cache *c, const char *data, size_t len,
                           unsigned char key[SERVER_AUTH_KEY_LEN])
{
        EVP_MD_CTX *ctx = EVP_MD_CTX_new();
        unsigned int n = 0;
        if (ctx == NULL || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1 ||
            EVP_DigestUpdate(ctx, c->salt, sizeof(c->salt)) != 1 ||
            EVP_DigestUpdate(ctx, data, len) != 1 || EVP_DigestFinal_ex(ctx, key, &n) != 1 ||
            n != SERVER_AUTH_KEY_LEN)
                abort(); /* SHA-256 is always there: only out of memory gets here */
        EVP_MD_CTX_free(ctx);
}

static void drop(struct server_auth_cache *c, size_t i)
{
        json_decref(c->entries[i].value);
        c->entries[i] = c->entries[--c->n];
}

/* Under the lock. */
static struct cache_entry *find(struct server_auth_cache *c, const unsigned char *key)
{
        for (size_t i = 0; i < c->n; i++)
                if (memcmp(c->entries[i].key, key, SERVER_AUTH_KEY_LEN) == 0)
                        return &c->entries[i];
        return NULL;
}

json_t *server_auth_cache_get(struct server_auth_cache *c, const unsigned char *key, int64_t now_ms)
{
        json_t *copy = NULL;
        pthread_mutex_lock(&c->lock);
        struct cache_entry *e = find(c, key);
        if (e && e->expires_ms > now_ms)
                copy = json_deep_copy(e->value);
        else if (e)
                drop(c, (size_t)(e - c->entries));
        pthread_mutex_unlock(&c->lock);
        return copy;
}

/* Room for one more entry.  Under the lock. */
static void make_room(struct server_auth_cache *c, int64_t now_ms)
{
        for (size_t i = 0; i < c->n; i++)
                if (c->entries[i].expires_ms <= now_ms)
                        drop(c, i--);
        if (c->n < SERVER_AUTH_CACHE_MAX)
                return;
        size_t soonest = 0;
        for (size_t i = 1; i < c->n; i++)
                if (c->entries[i].expires_ms < c->entries[soonest].expires_ms)
                        soonest = i;
        drop(c, soonest);
}

void server_auth_cache_put(struct server_auth_cache *c, const unsigned char *key,
                           const json_t *value, int64_t now_ms, int64_t ttl_ms)
{
        if (ttl_ms <= 0)
                return;
        json_t *copy = json_deep_copy(value);
        if (copy == NULL)
                abort(); /* out of memory */
        pthread_mutex_lock(&c->lock);
        struct cache_entry *e = find(c, key);
        if (e == NULL) {
                if (c->n == SERVER_AUTH_CACHE_MAX)
                        make_room(c, now_ms);
                e = &c->entries[c->n++];
                memcpy(e->key, key, SERVER_AUTH_KEY_LEN);
        } else {
                json_decref(e->value);
        }
        e->value = copy;
        e->expires_ms = now_ms + ttl_ms;
        pthread_mutex_unlock(&c->lock);
}
