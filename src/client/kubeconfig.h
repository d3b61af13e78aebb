/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kubeconfig files (upstream k8s.io/client-go/tools/clientcmd, as the
 * kubelet's --kubeconfig reads them): the context (current-context, or one
 * named by the caller) selects a cluster and a user:
 *
 *   clusters[].cluster: server, certificate-authority (file) or
 *     certificate-authority-data (base64 PEM), insecure-skip-tls-verify,
 *     tls-server-name
 *   users[].user: client-certificate / client-certificate-data,
 *     client-key / client-key-data, token, tokenFile
 *
 * Relative file paths are resolved against the kubeconfig's directory (as
 * clientcmd.ResolveLocalPaths does).  As clientcmd's validation: a file and
 * inline data for the same item, a certificate without a key, and a CA with
 * insecure-skip-tls-verify are errors; a token wins over tokenFile; a token
 * file's content is trimmed of surrounding whitespace.  Exec plugins, auth
 * providers, basic auth and proxy-url are not supported (an error naming
 * the field).  Certificates and keys are checked to be PEM that OpenSSL
 * reads, and the client certificate to match its key.
 *
 * Errors name the file and the field:
 *   kubeconfig `/k`: users[0].user.client-certificate: open `/x.crt`: No such file or directory
 * Secrets (keys, tokens) never appear in errors or logs.
 */
#ifndef CK_CLIENT_KUBECONFIG_H
#define CK_CLIENT_KUBECONFIG_H

#include "client/rest_config.h"
#include "util/error.h"

#include <stddef.h>

/* Reads the kubeconfig at `path` and fills *out (owned by the caller:
 * rest_config_clear()).  context: the context to use, NULL or "" for the
 * file's current-context.  On error *out is left zeroed. */
int kubeconfig_load(const char *path, const char *context, struct rest_config *out,
                    ck_error_t *err);

/* The same from memory: `name` is what errors call the kubeconfig, relative
 * file paths are resolved against `base_dir` (NULL: the working directory). */
int kubeconfig_load_buffer(const char *buf, size_t len, const char *name, const char *base_dir,
                           const char *context, struct rest_config *out, ck_error_t *err);

#endif
