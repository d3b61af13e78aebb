/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The credential material a kubeconfig points at: files or base64 data,
 * checked to be PEM that OpenSSL reads (so a bad key is reported with the
 * field that holds it, not as a TLS failure at the first request), and
 * tokens.  Nothing here ever prints the content of a key or a token.
 */
#include "client/kubeconfig_internal.h"
#include "util/base64.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <string.h>

int kubeconfig_string(const json_t *obj, const char *where, const char *key, const char **out,
                      ck_error_t *err)
{
        const json_t *v = json_object_get(obj, key);
        *out = NULL;
        if (v == NULL || json_is_null(v))
                return 0;
        if (!json_is_string(v))
                return ck_error_make(err, 0, "%s%s%s: must be a string", where, *where ? "." : "",
                                     key);
        if (json_string_length(v) > 0)
                *out = json_string_value(v);
        return 0;
}

char *kubeconfig_resolve_path(const char *base_dir, const char *path)
{
        if (path[0] == '/' || base_dir == NULL || base_dir[0] == '\0')
                return xstrdup(path);
        size_t n = strlen(base_dir);
        return xasprintf("%s%s%s", base_dir, base_dir[n - 1] == '/' ? "" : "/", path);
}

/* Declines to decrypt: an encrypted key is an error, never a tty prompt. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
        (void)buf, (void)size, (void)rwflag, (void)u;
        return -1;
}

static bool is_pem(const char *data, size_t len, enum kubeconfig_pem kind)
{
        BIO *bio = BIO_new_mem_buf(data, (int)len);
        if (bio == NULL)
                return false;
        bool ok;
        if (kind == KUBECONFIG_PEM_KEY) {
                EVP_PKEY *key = PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL);
                ok = key != NULL;
                EVP_PKEY_free(key);
        } else {
                X509 *cert = PEM_read_bio_X509(bio, NULL, NULL, NULL);
                ok = cert != NULL;
                X509_free(cert);
        }
        BIO_free(bio);
        ERR_clear_error();
        return ok;
}

bool kubeconfig_cert_matches_key(const char *cert, size_t cert_len, const char *key, size_t key_len)
{
        BIO *cb = BIO_new_mem_buf(cert, (int)cert_len);
        BIO *kb = BIO_new_mem_buf(key, (int)key_len);
        X509 *x = cb ? PEM_read_bio_X509(cb, NULL, NULL, NULL) : NULL;
        EVP_PKEY *k = kb ? PEM_read_bio_PrivateKey(kb, NULL, no_passphrase, NULL) : NULL;
        bool ok = x != NULL && k != NULL && X509_check_private_key(x, k) == 1;
        EVP_PKEY_free(k);
        X509_free(x);
        BIO_free(kb);
        BIO_free(cb);
        ERR_clear_error();
        return ok;
}

static void free_secret(char *p, size_t len)
{
        if (p != NULL)
                explicit_bzero(p, len);
        free(p);
}

int kubeconfig_file_or_data(const json_t *obj, const char *where, const char *file_key,
                            const char *data_key, const char *base_dir, enum kubeconfig_pem kind,
                            char **out, size_t *out_len, ck_error_t *err)
{
        const char *file, *data;
        *out = NULL;
        *out_len = 0;
        if (kubeconfig_string(obj, where, file_key, &file, err) < 0 ||
            kubeconfig_string(obj, where, data_key, &data, err) < 0)
                return -1;
        if (file && data)
                return ck_error_make(err, 0, "%s: both %s and %s are set", where, file_key,
                                     data_key);
        if (!file && !data)
                return 0;
        char *buf = NULL;
        size_t len = 0;
        const char *field = file ? file_key : data_key;
        if (file) {
                cleanup_free char *path = kubeconfig_resolve_path(base_dir, file);
                if (fs_read_file(path, KUBECONFIG_MAX_FILE, &buf, &len, err) < 0)
                        return ck_error_wrap(err, "%s.%s", where, field);
        } else if (base64_decode(data, strlen(data), 0, &buf, &len, NULL) < 0) {
                return ck_error_make(err, 0, "%s.%s: invalid base64 data", where, field);
        }
        if (!is_pem(buf, len, kind)) {
                free_secret(buf, len);
                return ck_error_make(err, 0, "%s.%s: %s", where, field,
                                     kind == KUBECONFIG_PEM_KEY ? "no PEM private key found"
                                                                : "no PEM certificate found");
        }
        *out = buf;
        *out_len = len;
        return 0;
}

static bool is_space(char c)
{
        return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

/* A header value cannot hold control characters (nor a NUL from a file). */
static int check_token(const char *tok, size_t len, const char *where, const char *field,
                       ck_error_t *err)
{
        for (size_t i = 0; i < len; i++)
                if ((unsigned char)tok[i] < 0x20 || tok[i] == 0x7f)
                        return ck_error_make(err, 0, "%s.%s: the token contains control characters",
                                             where, field);
        return 0;
}

int kubeconfig_token(const json_t *user, const char *where, const char *base_dir, char **out,
                     ck_error_t *err)
{
        const char *token, *file;
        *out = NULL;
        if (kubeconfig_string(user, where, "token", &token, err) < 0 ||
            kubeconfig_string(user, where, "tokenFile", &file, err) < 0)
                return -1;
        if (token) {
                if (check_token(token, strlen(token), where, "token", err) < 0)
                        return -1;
                *out = xstrdup(token);
                return 0;
        }
        if (!file)
                return 0;
        cleanup_free char *path = kubeconfig_resolve_path(base_dir, file);
        char *buf = NULL;
        size_t len = 0;
        if (fs_read_file(path, KUBECONFIG_MAX_FILE, &buf, &len, err) < 0)
                return ck_error_wrap(err, "%s.tokenFile", where);
        /* strings.TrimSpace, as client-go's cachedFileTokenSource */
        size_t start = 0, end = len;
        while (start < end && is_space(buf[start]))
                start++;
        while (end > start && is_space(buf[end - 1]))
                end--;
        int rc;
        if (start == end)
                rc = ck_error_make(err, 0, "%s.tokenFile: `%s` holds no token", where, path);
        else
                rc = check_token(buf + start, end - start, where, "tokenFile", err);
        if (rc == 0)
                *out = xstrndup(buf + start, end - start);
        free_secret(buf, len);
        return rc;
}
