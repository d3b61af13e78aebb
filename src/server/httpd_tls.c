/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The TLS side of the kubelet's HTTPS server: certificate and key (given,
 * or the self-signed pair), TLS >= 1.2, the client CA, and the identity of
 * a client certificate.
 */
#include "server/httpd_internal.h"
#include "server/selfsigned.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <limits.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <string.h>

#define TLS_FILE_MAX (1024 * 1024)

static bool empty(const char *s)
{
        return s == NULL || s[0] == '\0';
}

/* The reason of the newest OpenSSL error (and clears the queue). */
static const char *openssl_reason(const char *fallback)
{
        unsigned long e = ERR_peek_last_error();
        const char *r = e ? ERR_reason_error_string(e) : NULL;
        ERR_clear_error();
        return r ? r : fallback;
}

/* Declines to decrypt: an encrypted key is an error, never a tty prompt. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
        (void)buf, (void)size, (void)rwflag, (void)u;
        return -1;
}

/* Reads a whole PEM file into a memory BIO; what: "TLS certificate", ... */
static int read_pem(const char *what, const char *path, char **data, BIO **bio, ck_error_t *err)
{
        size_t len = 0;
        if (fs_read_file(path, TLS_FILE_MAX, data, &len, err) < 0)
                return ck_error_wrap(err, "load %s", what);
        *bio = BIO_new_mem_buf(*data, (int)len);
        if (*bio == NULL)
                return ck_error_make(err, ENOMEM, "load %s `%s`", what, path);
        return 0;
}

/* The certificate (first PEM block) and its chain (the rest). */
static int load_cert_chain(SSL_CTX *ctx, const char *path, ck_error_t *err)
{
        cleanup_free char *data = NULL;
        BIO *bio = NULL;
        if (read_pem("TLS certificate", path, &data, &bio, err) < 0)
                return -1;
        int rc = 0;
        X509 *leaf = PEM_read_bio_X509(bio, NULL, NULL, NULL);
        if (leaf == NULL || SSL_CTX_use_certificate(ctx, leaf) != 1) {
                rc = ck_error_make(err, 0, "load TLS certificate `%s`: %s", path,
                                   openssl_reason("no certificate found"));
        } else {
                X509 *x;
                while ((x = PEM_read_bio_X509(bio, NULL, NULL, NULL)) != NULL)
                        if (SSL_CTX_add0_chain_cert(ctx, x) != 1) {
                                X509_free(x);
                                rc = ck_error_make(err, 0, "load TLS certificate `%s`: %s", path,
                                                   openssl_reason("bad chain certificate"));
                                break;
                        }
                ERR_clear_error(); /* the end of the PEM data */
        }
        X509_free(leaf);
        BIO_free(bio);
        return rc;
}

static int load_key(SSL_CTX *ctx, const char *path, ck_error_t *err)
{
        char *data = NULL;
        BIO *bio = NULL;
        if (read_pem("TLS private key", path, &data, &bio, err) < 0)
                return -1;
        int rc = 0;
        EVP_PKEY *key = PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL);
        if (key == NULL || SSL_CTX_use_PrivateKey(ctx, key) != 1)
                rc = ck_error_make(err, 0, "load TLS private key `%s`: %s", path,
                                   openssl_reason("no private key found"));
        EVP_PKEY_free(key);
        BIO_free(bio);
        explicit_bzero(data, strlen(data));
        free(data);
        return rc;
}

/* Every certificate of the file becomes a trust anchor for client
 * certificates, and its subject is announced in the CertificateRequest, as
 * Go's tls.Config.ClientCAs does. */
static int load_client_ca(SSL_CTX *ctx, const char *path, ck_error_t *err)
{
        cleanup_free char *data = NULL;
        BIO *bio = NULL;
        if (read_pem("client CA file", path, &data, &bio, err) < 0)
                return -1;
        X509_STORE *store = SSL_CTX_get_cert_store(ctx);
        int n = 0, rc = 0;
        X509 *x;
        while (rc == 0 && (x = PEM_read_bio_X509(bio, NULL, NULL, NULL)) != NULL) {
                if (X509_STORE_add_cert(store, x) != 1 || SSL_CTX_add_client_CA(ctx, x) != 1)
                        rc = ck_error_make(err, 0, "load client CA file `%s`: %s", path,
                                           openssl_reason("cannot add certificate"));
                X509_free(x);
                n++;
        }
        ERR_clear_error();
        BIO_free(bio);
        if (rc == 0 && n == 0)
                rc = ck_error_make(err, 0, "load client CA file `%s`: no certificate found", path);
        return rc;
}

/* Go's tls.RequestClientCert: the handshake takes any certificate (or
 * none); the verdict stays in SSL_get_verify_result() for the request. */
static int accept_any_cert(int preverify_ok, X509_STORE_CTX *store)
{
        (void)preverify_ok, (void)store;
        return 1;
}

/* HTTP/1.1 if the client offers it; no ALPN answer otherwise (h2 is not
 * served, a client that offers only h2 falls back or fails on its own). */
static int select_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned int inlen, void *arg)
{
        (void)ssl, (void)arg;
        static const unsigned char h1[] = "http/1.1";
        for (unsigned int i = 0; i < inlen;) {
                unsigned int n = in[i];
                if (i + 1 + n <= inlen && n == sizeof(h1) - 1 && memcmp(in + i + 1, h1, n) == 0) {
                        *out = in + i + 1;
                        *outlen = (unsigned char)n;
                        return SSL_TLSEXT_ERR_OK;
                }
                i += 1 + n;
        }
        return SSL_TLSEXT_ERR_NOACK;
}

/* Upstream's nodeutil.GetHostname: the override, else the kernel's
 * hostname, trimmed and lower-cased. */
static char *node_hostname(const char *override, ck_error_t *err)
{
        char buf[HOST_NAME_MAX + 1] = "";
        if (empty(override) && gethostname(buf, sizeof(buf)) < 0) {
                ck_error_make(err, errno, "get hostname");
                return NULL;
        }
        const char *h = empty(override) ? buf : override;
        while (isspace((unsigned char)*h))
                h++;
        char *out = xstrdup(h);
        size_t n = strlen(out);
        while (n > 0 && isspace((unsigned char)out[n - 1]))
                out[--n] = '\0';
        for (size_t i = 0; i < n; i++)
                out[i] = (char)tolower((unsigned char)out[i]);
        if (n == 0) {
                free(out);
                ck_error_make(err, 0, "empty hostname is invalid");
                return NULL;
        }
        return out;
}

/* Go's crypto/tls version names (component-base cliflag.TLSVersion). */
static int tls_version(const char *name, int *out, ck_error_t *err)
{
        static const struct {
                const char *go;
                int version;
        } versions[] = {
            {"VersionTLS10", TLS1_VERSION},
            {"VersionTLS11", TLS1_1_VERSION},
            {"VersionTLS12", TLS1_2_VERSION},
            {"VersionTLS13", TLS1_3_VERSION},
        };
        if (empty(name)) {
                *out = TLS1_2_VERSION;
                return 0;
        }
        for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
                if (strcmp(versions[i].go, name) == 0) {
                        *out = versions[i].version;
                        return 0;
                }
        return ck_error_make(err, 0, "unknown tls version \"%s\"", name);
}

/* Go's cipher suite names (tls.CipherSuites() and InsecureCipherSuites(),
 * plus cliflag's legacy CHACHA20 names) as OpenSSL names; "" for the TLS
 * 1.3 suites, which Go does not let a configuration choose. */
static const char *openssl_cipher(const char *go)
{
        static const char *const names[][2] = {
            {"TLS_AES_128_GCM_SHA256", ""},
            {"TLS_AES_256_GCM_SHA384", ""},
            {"TLS_CHACHA20_POLY1305_SHA256", ""},
            {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA-AES128-SHA"},
            {"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA-AES256-SHA"},
            {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA-AES128-SHA"},
            {"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA-AES256-SHA"},
            {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256"},
            {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384"},
            {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256"},
            {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384"},
            {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305"},
            {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA-CHACHA20-POLY1305"},
            {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", "ECDHE-ECDSA-CHACHA20-POLY1305"},
            {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "ECDHE-RSA-CHACHA20-POLY1305"},
            /* insecure, still accepted (upstream logs them) */
            {"TLS_RSA_WITH_RC4_128_SHA", "RC4-SHA"},
            {"TLS_RSA_WITH_3DES_EDE_CBC_SHA", "DES-CBC3-SHA"},
            {"TLS_RSA_WITH_AES_128_CBC_SHA", "AES128-SHA"},
            {"TLS_RSA_WITH_AES_256_CBC_SHA", "AES256-SHA"},
            {"TLS_RSA_WITH_AES_128_CBC_SHA256", "AES128-SHA256"},
            {"TLS_RSA_WITH_AES_128_GCM_SHA256", "AES128-GCM-SHA256"},
            {"TLS_RSA_WITH_AES_256_GCM_SHA384", "AES256-GCM-SHA384"},
            {"TLS_ECDHE_ECDSA_WITH_RC4_128_SHA", "ECDHE-ECDSA-RC4-SHA"},
            {"TLS_ECDHE_RSA_WITH_RC4_128_SHA", "ECDHE-RSA-RC4-SHA"},
            {"TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA", "ECDHE-RSA-DES-CBC3-SHA"},
            {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "ECDHE-ECDSA-AES128-SHA256"},
            {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", "ECDHE-RSA-AES128-SHA256"},
        };
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if (strcmp(names[i][0], go) == 0)
                        return names[i][1];
        return NULL;
}

/* The suites Go calls insecure (tls.InsecureCipherSuites()). */
static bool insecure_cipher(const char *go)
{
        return strstr(go, "_RC4_") || strstr(go, "_3DES_") || strncmp(go, "TLS_RSA_", 8) == 0 ||
               strstr(go, "_CBC_SHA256");
}

/* --tls-min-version and --tls-cipher-suites, as upstream's InitializeTLS:
 * the minimum version and the OpenSSL cipher list (a new string, "" when
 * no TLS 1.2 suite is named) in *list when list is not NULL. */
static int protocol_options(const struct httpd_options *o, int *min, char **list, ck_error_t *err)
{
        if (tls_version(o->tls_min_version, min, err) < 0)
                return -1;
        cleanup_free char *l = xstrdup("");
        for (const char *const *p = o->tls_cipher_suites; p && *p; p++) {
                const char *name = openssl_cipher(*p);
                if (name == NULL)
                        return ck_error_make(err, 0,
                                             "Cipher suite %s not supported or doesn't exist", *p);
                if (*name == '\0')
                        continue;
                if (list && insecure_cipher(*p))
                        LOG_INFO(0, "Use of insecure cipher detected.", "cipher=\"%s\"", *p);
                char *next = xasprintf("%s%s%s", l, *l ? ":" : "", name);
                free(l);
                l = next;
        }
        if (list) {
                *list = l;
                l = NULL;
        }
        return 0;
}

/* A certificate file goes with its key file. */
static int check_pair(const struct httpd_options *o, ck_error_t *err)
{
        if (empty(o->cert_file) == empty(o->key_file))
                return 0;
        return ck_error_make(err, 0,
                             "TLS certificate file (`%s`) and private key file (`%s`) must be "
                             "given together",
                             o->cert_file ? o->cert_file : "", o->key_file ? o->key_file : "");
}

int httpd_tls_check_options(const struct httpd_options *o, ck_error_t *err)
{
        int min = 0;
        if (protocol_options(o, &min, NULL, err) < 0 || check_pair(o, err) < 0)
                return -1;
        if (empty(o->cert_file) && !empty(o->cert_dir))
                return secure_selfsigned_check(o->cert_dir, err);
        return 0;
}

static int configure_protocol(SSL_CTX *ctx, const struct httpd_options *o, ck_error_t *err)
{
        int min = 0;
        cleanup_free char *list = NULL;
        if (protocol_options(o, &min, &list, err) < 0)
                return -1;
        bool named = o->tls_cipher_suites && o->tls_cipher_suites[0];
        if (named && *list == '\0')
                min = TLS1_3_VERSION; /* only TLS 1.3 names: Go leaves TLS 1.2 no suite */
        if (min < TLS1_2_VERSION)
                SSL_CTX_set_security_level(ctx, 0); /* OpenSSL 3's level 1 refuses TLS 1.0/1.1 */
        if (SSL_CTX_set_min_proto_version(ctx, min) != 1)
                return ck_error_make(err, 0, "set TLS minimum version %s: %s", o->tls_min_version,
                                     openssl_reason("not supported"));
        if (named && min == TLS1_3_VERSION && *list != '\0')
                LOG_INFO(0,
                         "Warning: TLS 1.3 cipher suites are not configurable, ignoring "
                         "--tls-cipher-suites",
                         "");
        if (*list && SSL_CTX_set_cipher_list(ctx, list) != 1)
                return ck_error_make(err, 0, "set TLS cipher suites `%s`: %s", list,
                                     openssl_reason("none is available"));
        return 0;
}

static int configure(SSL_CTX *ctx, const struct httpd_options *o, ck_error_t *err)
{
        cleanup_free char *cert = NULL, *key = NULL, *host = NULL;
        if (check_pair(o, err) < 0)
                return -1;
        if (!empty(o->cert_file)) {
                cert = xstrdup(o->cert_file);
                key = xstrdup(o->key_file);
        } else {
                if (empty(o->cert_dir))
                        return ck_error_make(err, 0,
                                             "no TLS certificate given and no certificate "
                                             "directory for a self-signed one");
                host = node_hostname(o->hostname, err);
                if (host == NULL ||
                    secure_selfsigned_ensure(o->cert_dir, host, &cert, &key, err) < 0)
                        return -1;
        }
        if (configure_protocol(ctx, o, err) < 0)
                return -1;
        SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
        SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
        SSL_CTX_set_alpn_select_cb(ctx, select_alpn, NULL);
        if (load_cert_chain(ctx, cert, err) < 0 || load_key(ctx, key, err) < 0)
                return -1;
        if (SSL_CTX_check_private_key(ctx) != 1)
                return ck_error_make(err, 0, "TLS certificate `%s` and private key `%s`: %s", cert,
                                     key, openssl_reason("do not match"));
        if (!empty(o->client_ca_file)) {
                if (load_client_ca(ctx, o->client_ca_file, err) < 0)
                        return -1;
                static const unsigned char sid[] = "ckubelet";
                SSL_CTX_set_session_id_context(ctx, sid, sizeof(sid) - 1);
                SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, accept_any_cert);
        }
        return 0;
}

int httpd_tls_new(const struct httpd_options *o, SSL_CTX **out, ck_error_t *err)
{
        SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
        if (ctx == NULL)
                return ck_error_make(err, 0, "create TLS context: %s", openssl_reason("failed"));
        if (configure(ctx, o, err) < 0) {
                SSL_CTX_free(ctx);
                return -1;
        }
        *out = ctx;
        return 0;
}

/* An X509_NAME entry's value as a new UTF-8 string; NULL if it does not
 * convert or holds a NUL byte. */
static char *entry_utf8(const X509_NAME_ENTRY *e)
{
        unsigned char *u = NULL;
        int n = ASN1_STRING_to_UTF8(&u, X509_NAME_ENTRY_get_data(e));
        if (n < 0)
                return NULL;
        char *s = NULL;
        if (memchr(u, '\0', (size_t)n) == NULL)
                s = xstrdup((const char *)u);
        OPENSSL_free(u);
        return s;
}

void httpd_tls_peer(SSL *ssl, struct httpd_peer *p)
{
        memset(p, 0, sizeof(*p));
        X509 *x = SSL_get0_peer_certificate(ssl);
        if (x == NULL)
                return;
        long vr = SSL_get_verify_result(ssl);
        if (vr != X509_V_OK) {
                p->verify_error = xstrdup(X509_verify_cert_error_string(vr));
                return;
        }
        /* As Go's pkix.Name: the last CN, every O in order. */
        const X509_NAME *name = X509_get_subject_name(x);
        int count = X509_NAME_entry_count(name), n_orgs = 0;
        p->orgs = xcalloc((size_t)count + 1, sizeof(char *));
        for (int i = 0; i < count; i++) {
                const X509_NAME_ENTRY *e = X509_NAME_get_entry(name, i);
                int nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(e));
                if (nid != NID_commonName && nid != NID_organizationName)
                        continue;
                char *v = entry_utf8(e);
                if (v == NULL) {
                        httpd_tls_peer_free(p);
                        p->verify_error = xstrdup("unreadable certificate subject");
                        return;
                }
                if (nid == NID_organizationName) {
                        p->orgs[n_orgs++] = v;
                } else {
                        free(p->cn);
                        p->cn = v;
                }
        }
        if (p->cn != NULL && p->cn[0] == '\0') {
                free(p->cn);
                p->cn = NULL;
        }
        if (p->cn == NULL) {
                for (int i = 0; i < n_orgs; i++)
                        free(p->orgs[i]);
                p->orgs[0] = NULL;
        }
}

void httpd_tls_peer_free(struct httpd_peer *p)
{
        for (size_t i = 0; p->orgs != NULL && p->orgs[i] != NULL; i++)
                free(p->orgs[i]);
        free(p->orgs);
        free(p->cn);
        free(p->verify_error);
        memset(p, 0, sizeof(*p));
}
