/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by kubeconfig.c and kubeconfig_material.c; not a public API. */
#ifndef CK_CLIENT_KUBECONFIG_INTERNAL_H
#define CK_CLIENT_KUBECONFIG_INTERNAL_H

#include "util/error.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Largest file a kubeconfig may refer to (CA bundles, certificates, keys,
 * tokens) and the largest kubeconfig itself. */
#define KUBECONFIG_MAX_FILE (4u << 20)

/* obj[key] as a string: NULL when absent, null or "" (clientcmd treats an
 * empty value as unset).  Error "<where>.<key>: must be a string". */
int kubeconfig_string(const json_t *obj, const char *where, const char *key, const char **out,
                      ck_error_t *err);

/* What a file-or-data item holds, for its PEM check. */
enum kubeconfig_pem {
        KUBECONFIG_PEM_CERTS, /* one or more certificates */
        KUBECONFIG_PEM_KEY,   /* a private key (secret) */
};

/* The item given either as <file_key> (a path, relative to base_dir) or as
 * <data_key> (base64) in obj: both set is an error (as clientcmd's
 * validation), neither leaves *out NULL.  The content must be PEM of `kind`.
 * Returns a new buffer in *out. */
int kubeconfig_file_or_data(const json_t *obj, const char *where, const char *file_key,
                            const char *data_key, const char *base_dir, enum kubeconfig_pem kind,
                            char **out, size_t *out_len, ck_error_t *err);

/* The token: `token` wins over `tokenFile` (read, whitespace trimmed,
 * empty is an error).  *out NULL when neither is set. */
int kubeconfig_token(const json_t *user, const char *where, const char *base_dir, char **out,
                     ck_error_t *err);

/* True when the PEM certificate (first of cert) belongs to the PEM key. */
bool kubeconfig_cert_matches_key(const char *cert, size_t cert_len, const char *key,
                                 size_t key_len);

/* path itself when absolute or base_dir is NULL, else base_dir/path.
 * Returns a new string. */
char *kubeconfig_resolve_path(const char *base_dir, const char *path);

#endif
