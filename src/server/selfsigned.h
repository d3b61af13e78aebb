/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kubelet's self-signed serving certificate, as upstream makes it when
 * neither --tls-cert-file nor --tls-private-key-file is given
 * (cmd/kubelet/app/server.go InitializeTLS, client-go util/cert
 * GenerateSelfSignedCertKey): a throw-away CA "<host>-ca@<unix time>" (RSA
 * 2048, one year, an hour back-dated) signs a serving certificate
 * "<host>@<unix time>" (RSA 2048, serverAuth, SAN DNS:<host>, or IP:<host>
 * when host is an IP address).  The certificate file holds the serving
 * certificate followed by the CA; the key file the PKCS#1 RSA key.
 */
#ifndef CK_SERVER_SELFSIGNED_H
#define CK_SERVER_SELFSIGNED_H

#include "util/error.h"

#include <stddef.h>

/* Generates a new pair for host.  Returns new NUL-terminated PEM strings in
 * *cert_pem and *key_pem (the caller frees them; clear the key with
 * explicit_bzero first).  Any thread. */
int secure_selfsigned_generate(const char *host, char **cert_pem, char **key_pem, ck_error_t *err);

/* Upstream's reuse-or-create step: the pair is <cert_dir>/kubelet.crt and
 * <cert_dir>/kubelet.key.  Both readable: reused as they are.  Neither:
 * generated for host and written (cert_dir created 0755 as needed, the
 * certificate 0644, the key 0600, each atomically: a temporary file in
 * cert_dir, then rename).  Only one of them readable: an error, as upstream
 * ("certificate and key must be supplied as a pair").  Returns the two
 * paths as new strings.  Any thread. */
int secure_selfsigned_ensure(const char *cert_dir, const char *host, char **cert_path,
                             char **key_path, ck_error_t *err);

/* The reuse-or-create step's check alone (nothing is made): an error when
 * only one of <cert_dir>/kubelet.crt and kubelet.key is readable. */
int secure_selfsigned_check(const char *cert_dir, ck_error_t *err);

#endif
