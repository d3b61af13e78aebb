/* SPDX-License-Identifier: Apache-2.0 */
#include "client/rest_config.h"
#include "util/xalloc.h"

#include <openssl/ssl.h>
#include <stdlib.h>
#include <string.h>

static char *dup_bytes(const char *p, size_t len)
{
        if (p == NULL)
                return NULL;
        char *d = xmalloc(len + 1);
        memcpy(d, p, len);
        d[len] = '\0';
        return d;
}

void rest_config_copy(struct rest_config *dst, const struct rest_config *src)
{
        *dst = (struct rest_config){
            .server = xstrdup(src->server),
            .ca_pem = dup_bytes(src->ca_pem, src->ca_len),
            .ca_len = src->ca_len,
            .cert_pem = dup_bytes(src->cert_pem, src->cert_len),
            .cert_len = src->cert_len,
            .key_pem = dup_bytes(src->key_pem, src->key_len),
            .key_len = src->key_len,
            .token = xstrdup(src->token),
            .insecure = src->insecure,
            .tls_server_name = xstrdup(src->tls_server_name),
            .tls = src->tls,
        };
        if (dst->tls)
                SSL_CTX_up_ref(dst->tls);
}

static void free_secret(char *p, size_t len)
{
        if (p == NULL)
                return;
        explicit_bzero(p, len);
        free(p);
}

void rest_config_clear(struct rest_config *c)
{
        if (c == NULL)
                return;
        free(c->server);
        free(c->ca_pem);
        free(c->cert_pem);
        free_secret(c->key_pem, c->key_len);
        free_secret(c->token, c->token ? strlen(c->token) : 0);
        free(c->tls_server_name);
        SSL_CTX_free(c->tls);
        memset(c, 0, sizeof(*c));
}
