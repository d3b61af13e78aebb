/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a REST client needs to reach an apiserver (upstream
 * k8s.io/client-go/rest.Config, the subset the kubelet uses): the server URL
 * and the TLS and credential material, all in memory.  Filled by
 * kubeconfig_load() (client/kubeconfig.h) or by hand.
 *
 * The key and the token are secrets: never log them; rest_config_clear()
 * wipes them before freeing.
 */
#ifndef CK_CLIENT_REST_CONFIG_H
#define CK_CLIENT_REST_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

struct ssl_ctx_st; /* OpenSSL's SSL_CTX */

struct rest_config {
        char *server;          /* "https://host:port[/prefix]", no trailing '/' */
        char *ca_pem;          /* PEM bundle to verify the server; NULL: system roots */
        size_t ca_len;         /* bytes in ca_pem (excluding the NUL ending it) */
        char *cert_pem;        /* client certificate (chain), PEM; NULL if none */
        size_t cert_len;       /* bytes in cert_pem */
        char *key_pem;         /* client private key, PEM (secret); NULL if none */
        size_t key_len;        /* bytes in key_pem */
        char *token;           /* bearer token (secret); NULL if none */
        bool insecure;         /* insecure-skip-tls-verify: no server verification */
        char *tls_server_name; /* name to verify the server certificate for; NULL: host */
        /* The TLS context made once from the material above
         * (rest_config_share_tls, client/rest.h): every client made from
         * this config or a copy uses it (a reference each).  NULL: each
         * client makes its own. */
        struct ssl_ctx_st *tls;
};

/* Deep copy of src into *dst (every buffer duplicated, NUL terminated; the
 * TLS context shared, a new reference). */
void rest_config_copy(struct rest_config *dst, const struct rest_config *src);

/* Wipes the secrets, frees every buffer and zeroes *c.  NULL-safe. */
void rest_config_clear(struct rest_config *c);

#endif
