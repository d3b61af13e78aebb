/* SPDX-License-Identifier: Apache-2.0 */
#include "server/selfsigned.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#define SELFSIGNED_RSA_BITS 2048
#define SELFSIGNED_DAYS 365
#define SELFSIGNED_BACKDATE_S 3600 /* "to avoid flakes due to clock skew" */

/* A random serial in [1, 2^63), as upstream's. */
static bool set_serial(X509 *x)
{
        unsigned char b[8];
        if (RAND_bytes(b, sizeof(b)) != 1)
                return false;
        b[0] &= 0x7f;
        BIGNUM *bn = BN_bin2bn(b, sizeof(b), NULL);
        bool ok = bn != NULL && BN_add_word(bn, 1) == 1 &&
                  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != NULL;
        BN_free(bn);
        return ok;
}

static bool add_ext(X509 *x, X509V3_CTX *ctx, int nid, const char *value)
{
        X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, ctx, nid, value);
        bool ok = e != NULL && X509_add_ext(x, e, -1) == 1;
        X509_EXTENSION_free(e);
        return ok;
}

/* SAN: the host as an IP address if it is one, else as a DNS name.  Built
 * from typed values, never from a config string the host could inject into. */
static bool add_san(X509 *x, const char *host)
{
        unsigned char ip[16];
        int ip_len = 0;
        if (inet_pton(AF_INET, host, ip) == 1)
                ip_len = 4;
        else if (inet_pton(AF_INET6, host, ip) == 1)
                ip_len = 16;
        GENERAL_NAMES *names = sk_GENERAL_NAME_new_null();
        GENERAL_NAME *g = GENERAL_NAME_new();
        ASN1_STRING *s = ip_len ? ASN1_OCTET_STRING_new() : ASN1_IA5STRING_new();
        bool ok = names != NULL && g != NULL && s != NULL;
        if (ok)
                ok = ip_len ? ASN1_OCTET_STRING_set(s, ip, ip_len) == 1
                            : ASN1_STRING_set(s, host, -1) == 1;
        if (ok) {
                GENERAL_NAME_set0_value(g, ip_len ? GEN_IPADD : GEN_DNS, s);
                s = NULL;
                ok = sk_GENERAL_NAME_push(names, g) > 0;
                if (ok)
                        g = NULL;
        }
        if (ok)
                ok = X509_add1_ext_i2d(x, NID_subject_alt_name, names, 0, X509V3_ADD_DEFAULT) == 1;
        ASN1_STRING_free(s);
        GENERAL_NAME_free(g);
        GENERAL_NAMES_free(names);
        return ok;
}

/* A certificate for key with subject CN=cn, signed by issuer (NULL:
 * self-signed) with issuer_key; the CA or the serving profile. */
static X509 *make_cert(const char *cn, EVP_PKEY *key, X509 *issuer, EVP_PKEY *issuer_key,
                       const char *san_host, time_t now)
{
        X509 *x = X509_new();
        if (x == NULL)
                return NULL;
        bool is_ca = issuer == NULL;
        X509_NAME *name = X509_get_subject_name(x);
        bool ok = X509_set_version(x, X509_VERSION_3) == 1 && set_serial(x) &&
                  X509_time_adj_ex(X509_getm_notBefore(x), 0, -SELFSIGNED_BACKDATE_S, &now) &&
                  X509_time_adj_ex(X509_getm_notAfter(x), SELFSIGNED_DAYS, -SELFSIGNED_BACKDATE_S,
                                   &now) &&
                  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)cn,
                                             -1, -1, 0) == 1 &&
                  X509_set_issuer_name(x, is_ca ? name : X509_get_subject_name(issuer)) == 1 &&
                  X509_set_pubkey(x, key) == 1;
        X509V3_CTX ctx;
        X509V3_set_ctx(&ctx, is_ca ? x : issuer, x, NULL, NULL, 0);
        if (ok && is_ca)
                ok = add_ext(x, &ctx, NID_key_usage,
                             "critical,digitalSignature,keyEncipherment,keyCertSign") &&
                     add_ext(x, &ctx, NID_basic_constraints, "critical,CA:TRUE") &&
                     add_ext(x, &ctx, NID_subject_key_identifier, "hash");
        else if (ok)
                ok = add_ext(x, &ctx, NID_key_usage, "critical,digitalSignature,keyEncipherment") &&
                     add_ext(x, &ctx, NID_ext_key_usage, "serverAuth") &&
                     add_ext(x, &ctx, NID_basic_constraints, "critical,CA:FALSE") &&
                     add_ext(x, &ctx, NID_authority_key_identifier, "keyid:always") &&
                     add_san(x, san_host);
        if (ok)
                ok = X509_sign(x, is_ca ? key : issuer_key, EVP_sha256()) > 0;
        if (!ok) {
                X509_free(x);
                return NULL;
        }
        return x;
}

/* The contents of a memory BIO as a new NUL-terminated string. */
static char *bio_string(BIO *b)
{
        char *data = NULL;
        long n = BIO_get_mem_data(b, &data);
        char *s = xmalloc((size_t)n + 1);
        memcpy(s, data, (size_t)n);
        s[n] = '\0';
        return s;
}

static int openssl_error(ck_error_t *err, const char *step)
{
        unsigned long e = ERR_peek_last_error();
        const char *reason = e ? ERR_reason_error_string(e) : NULL;
        ERR_clear_error();
        return ck_error_make(err, 0, "%s: %s", step, reason ? reason : "OpenSSL error");
}

int secure_selfsigned_generate(const char *host, char **cert_pem, char **key_pem, ck_error_t *err)
{
        time_t now = time(NULL);
        cleanup_free char *ca_cn = xasprintf("%s-ca@%lld", host, (long long)now);
        cleanup_free char *cn = xasprintf("%s@%lld", host, (long long)now);
        EVP_PKEY *ca_key = EVP_RSA_gen(SELFSIGNED_RSA_BITS);
        EVP_PKEY *key = ca_key ? EVP_RSA_gen(SELFSIGNED_RSA_BITS) : NULL;
        X509 *ca = key ? make_cert(ca_cn, ca_key, NULL, NULL, NULL, now) : NULL;
        X509 *leaf = ca ? make_cert(cn, key, ca, ca_key, host, now) : NULL;
        BIO *cb = BIO_new(BIO_s_mem());
        BIO *kb = BIO_new(BIO_s_secmem());
        int rc = 0;
        if (leaf == NULL)
                rc = openssl_error(err, "generate self-signed certificate");
        else if (cb == NULL || kb == NULL || PEM_write_bio_X509(cb, leaf) != 1 ||
                 PEM_write_bio_X509(cb, ca) != 1 ||
                 PEM_write_bio_PrivateKey_traditional(kb, key, NULL, NULL, 0, NULL, NULL) != 1)
                rc = openssl_error(err, "encode self-signed certificate");
        if (rc == 0) {
                *cert_pem = bio_string(cb);
                *key_pem = bio_string(kb);
        }
        BIO_free(kb);
        BIO_free(cb);
        X509_free(leaf);
        X509_free(ca);
        EVP_PKEY_free(key);
        EVP_PKEY_free(ca_key);
        return rc;
}

static bool can_read(const char *path)
{
        int fd = TEMP_FAILURE_RETRY_INT(open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY));
        if (fd < 0)
                return false;
        close(fd);
        return true;
}

/* Both of the pair readable (*have true), neither (false), or an error. */
static int pair_state(const char *crt, const char *key, bool *have, ck_error_t *err)
{
        bool have_crt = can_read(crt), have_key = can_read(key);
        if (have_crt != have_key)
                return ck_error_make(err, 0,
                                     "error reading %s, certificate and key must be supplied as a "
                                     "pair",
                                     have_crt ? key : crt);
        *have = have_crt;
        return 0;
}

int secure_selfsigned_check(const char *cert_dir, ck_error_t *err)
{
        cleanup_free char *crt = xasprintf("%s/kubelet.crt", cert_dir);
        cleanup_free char *key = xasprintf("%s/kubelet.key", cert_dir);
        bool have = false;
        return pair_state(crt, key, &have, err);
}

int secure_selfsigned_ensure(const char *cert_dir, const char *host, char **cert_path,
                             char **key_path, ck_error_t *err)
{
        cleanup_free char *crt = xasprintf("%s/kubelet.crt", cert_dir);
        cleanup_free char *key = xasprintf("%s/kubelet.key", cert_dir);
        bool have = false;
        if (pair_state(crt, key, &have, err) < 0)
                return -1;
        if (!have) {
                char *cert_pem = NULL, *key_pem = NULL;
                if (secure_selfsigned_generate(host, &cert_pem, &key_pem, err) < 0)
                        return ck_error_wrap(err, "unable to generate self signed cert");
                size_t key_len = strlen(key_pem);
                int rc = fs_mkdir_p(cert_dir, 0755, err);
                if (rc == 0)
                        rc = fs_write_file_atomic(key, key_pem, key_len, 0600, err);
                if (rc == 0)
                        rc = fs_write_file_atomic(crt, cert_pem, strlen(cert_pem), 0644, err);
                explicit_bzero(key_pem, key_len);
                free(key_pem);
                free(cert_pem);
                if (rc < 0)
                        return ck_error_wrap(err, "write self-signed certificate");
                LOG_INFO(4, "Using self-signed cert", "TLSCertFile=\"%s\" TLSPrivateKeyFile=\"%s\"",
                         crt, key);
        }
        *cert_path = crt;
        *key_path = key;
        crt = key = NULL;
        return 0;
}
