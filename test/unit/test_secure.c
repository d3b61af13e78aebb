/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kubelet's HTTPS server over real TLS on loopback: certificates
 * (self-signed, given, client CA), requests, streams, disconnects, stop.
 * Client certificates and CAs are made by the openssl command in a
 * temporary directory, independent of the code under test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "server/secure.h"
#include "server/selfsigned.h"
#include "util/error.h"
#include "util/fsutil.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

static char dir[64]; /* fixtures: ca, other-ca, client, rogue, server */

static char *fx(const char *name)
{
        static char buf[8][160];
        static int i;
        char *b = buf[i++ % 8];
        snprintf(b, sizeof(buf[0]), "%s/%s", dir, name);
        return b;
}

static void run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void run(const char *fmt, ...)
{
        char cmd[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(cmd, sizeof(cmd), fmt, ap);
        va_end(ap);
        if (system(cmd) != 0)
                fail_msg("command failed: %s", cmd);
}

#define EC "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"

/* A CA <name>.crt/.key, and a certificate <name>.crt/.key signed by it. */
static void make_ca(const char *name)
{
        run("openssl req -x509 " EC " -days 2 -subj /CN=%s -keyout %s/%s.key -out %s/%s.crt "
            "2>/dev/null",
            name, dir, name, dir, name);
}

static void make_signed(const char *name, const char *ca, const char *subj, const char *eku)
{
        run("printf 'extendedKeyUsage=%s\\n' > %s/%s.ext && "
            "openssl req -new " EC " -subj '%s' -keyout %s/%s.key -out %s/%s.csr 2>/dev/null && "
            "openssl x509 -req -days 2 -set_serial 7 -in %s/%s.csr -CA %s/%s.crt -CAkey "
            "%s/%s.key -extfile %s/%s.ext -out %s/%s.crt 2>/dev/null",
            eku, dir, name, subj, dir, name, dir, name, dir, name, dir, ca, dir, ca, dir, name, dir,
            name);
}

static int group_setup(void **state)
{
        (void)state;
        strcpy(dir, "/tmp/test_secure.XXXXXX");
        if (mkdtemp(dir) == NULL)
                return -1;
        make_ca("ca");
        make_ca("other-ca");
        const char *subj = "/O=system:masters/O=second/CN=kube-apiserver-kubelet-client";
        make_signed("client", "ca", subj, "clientAuth");
        make_signed("rogue", "other-ca", subj, "clientAuth");
        make_signed("server-only", "ca", subj, "serverAuth");
        run("openssl req -x509 " EC " -days 2 -subj /CN=given-server -keyout %s/server.key "
            "-out %s/server.crt 2>/dev/null",
            dir, dir);
        return 0;
}

static int group_teardown(void **state)
{
        (void)state;
        ck_error_t err = NULL;
        fs_remove_all(dir, &err);
        ck_error_release(&err);
        return 0;
}

/* ---- the handler ---- */

static atomic_int follow_result; /* 0 running, 1 a write failed, 2 gave up */
static atomic_int wait_result;   /* 0 running, 1 closed seen, 2 gave up */
static atomic_int handler_calls;

static void handler(void *ctx, const struct secure_request *r, struct secure_conn *c)
{
        (void)ctx;
        atomic_fetch_add(&handler_calls, 1);
        if (strcmp(r->path, "/stream") == 0) {
                assert_int_equal(secure_stream_begin(c, 200, "text/plain"), 0);
                assert_int_equal(secure_stream_write(c, "hello ", 6), 0);
                assert_int_equal(secure_stream_write(c, "", 0), 0);
                assert_int_equal(secure_stream_write(c, "world", 5), 0);
                assert_int_equal(secure_stream_end(c), 0);
                assert_true(secure_respond(c, 200, NULL, "x", 1) < 0); /* answered already */
        } else if (strcmp(r->path, "/unended") == 0) {
                secure_stream_begin(c, 200, NULL);
                secure_stream_write(c, "abc", 3);
        } else if (strcmp(r->path, "/none") == 0) {
                return;
        } else if (strcmp(r->path, "/follow") == 0) {
                secure_stream_begin(c, 200, NULL);
                for (int i = 0; i < 1000; i++) {
                        if (secure_stream_write(c, "tick\n", 5) < 0) {
                                atomic_store(&follow_result, 1);
                                return;
                        }
                        usleep(10000);
                }
                atomic_store(&follow_result, 2);
        } else if (strcmp(r->path, "/wait") == 0) {
                for (int i = 0; i < 1000; i++) {
                        if (secure_conn_closed(c)) {
                                atomic_store(&wait_result, 1);
                                return;
                        }
                        usleep(10000);
                }
                atomic_store(&wait_result, 2);
        } else if (strcmp(r->path, "/big") == 0 || strcmp(r->path, "/huge") == 0) {
                size_t n = strcmp(r->path, "/big") == 0 ? 200000 : 32u << 20;
                char *b = malloc(n);
                for (size_t i = 0; i < n; i++)
                        b[i] = (char)('a' + i % 26);
                secure_respond(c, 200, "application/octet-stream", b, n);
                free(b);
        } else {
                char orgs[256] = "";
                for (size_t i = 0; r->peer_orgs[i] != NULL; i++)
                        snprintf(orgs + strlen(orgs), sizeof(orgs) - strlen(orgs), "%s%s",
                                 i ? "," : "", r->peer_orgs[i]);
                char body[2048];
                int n = snprintf(body, sizeof(body),
                                 "method=%s path=%s query=%s auth=%s upgrade=%d cn=%s orgs=%s "
                                 "verr=%s ua=%s remote=%s",
                                 r->method, r->path, r->query ? r->query : "(null)",
                                 r->authorization ? r->authorization : "(null)", r->upgrade,
                                 r->peer_cn ? r->peer_cn : "(null)", orgs,
                                 r->peer_verify_error ? "set" : "(null)",
                                 r->user_agent ? r->user_agent : "(null)", r->remote_addr);
                secure_respond(c, 200, NULL, body, (size_t)n);
        }
}

/* ---- server and client helpers ---- */

/* Starts a server with SIGPIPE unblocked (the test thread blocks it for
 * its own client writes): the server's threads must cope on their own. */
static struct secure_server *start(struct secure_server_options *o, ck_error_t *err)
{
        if (o->handler == NULL)
                o->handler = handler;
        if (o->address == NULL)
                o->address = "127.0.0.1";
        sigset_t pipe, old;
        sigemptyset(&pipe);
        sigaddset(&pipe, SIGPIPE);
        pthread_sigmask(SIG_UNBLOCK, &pipe, &old);
        struct secure_server *s = NULL;
        int rc = secure_server_start(o, &s, err);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return rc < 0 ? NULL : s;
}

static struct secure_server *start_ok(struct secure_server_options *o)
{
        ck_error_t err = NULL;
        struct secure_server *s = start(o, &err);
        if (s == NULL)
                fail_msg("start: %s", ck_error_msg(err));
        return s;
}

static int tcp_connect(int port)
{
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(fd >= 0);
        struct timeval tv = {.tv_sec = 5};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
        return fd;
}

struct client {
        int fd;
        SSL_CTX *ctx;
        SSL *ssl;
};

struct client_opts {
        const char *cert, *key; /* client certificate */
        const char *trust;      /* verify the server against this file */
        const char *host;       /* ... for this DNS name */
};

/* A TLS connection; false if the handshake fails. */
static bool client_connect(int port, const struct client_opts *o, struct client *cl)
{
        memset(cl, 0, sizeof(*cl));
        cl->ctx = SSL_CTX_new(TLS_client_method());
        assert_non_null(cl->ctx);
        if (o && o->cert) {
                assert_int_equal(SSL_CTX_use_certificate_chain_file(cl->ctx, o->cert), 1);
                assert_int_equal(SSL_CTX_use_PrivateKey_file(cl->ctx, o->key, SSL_FILETYPE_PEM), 1);
        }
        if (o && o->trust) {
                assert_int_equal(SSL_CTX_load_verify_locations(cl->ctx, o->trust, NULL), 1);
                SSL_CTX_set_verify(cl->ctx, SSL_VERIFY_PEER, NULL);
        }
        cl->fd = tcp_connect(port);
        cl->ssl = SSL_new(cl->ctx);
        SSL_set_fd(cl->ssl, cl->fd);
        if (o && o->host)
                SSL_set1_host(cl->ssl, o->host);
        return SSL_connect(cl->ssl) == 1;
}

static void client_close(struct client *cl)
{
        SSL_free(cl->ssl);
        SSL_CTX_free(cl->ctx);
        if (cl->fd >= 0)
                close(cl->fd);
        ERR_clear_error();
        memset(cl, 0, sizeof(*cl));
}

static void client_send(struct client *cl, const char *s)
{
        assert_int_equal(SSL_write(cl->ssl, s, (int)strlen(s)), (int)strlen(s));
}

/* Everything until the server closes; returns a new string. */
static char *client_read_all(struct client *cl, size_t *len)
{
        size_t cap = 4096, n = 0;
        char *buf = malloc(cap);
        for (;;) {
                if (cap - n < 2048)
                        buf = realloc(buf, cap *= 2);
                int r = SSL_read(cl->ssl, buf + n, (int)(cap - n - 1));
                if (r <= 0)
                        break;
                n += (size_t)r;
        }
        buf[n] = '\0';
        if (len)
                *len = n;
        return buf;
}

static int status_of(const char *resp)
{
        int code = 0;
        if (sscanf(resp, "HTTP/1.1 %d", &code) != 1)
                return -1;
        return code;
}

static const char *body_of(const char *resp)
{
        const char *b = strstr(resp, "\r\n\r\n");
        assert_non_null(b);
        return b + 4;
}

/* One request on a new connection; returns the whole response (new). */
static char *request(int port, const struct client_opts *o, const char *req)
{
        struct client cl;
        assert_true(client_connect(port, o, &cl));
        client_send(&cl, req);
        char *resp = client_read_all(&cl, NULL);
        client_close(&cl);
        return resp;
}

static char *get(int port, const struct client_opts *o, const char *path)
{
        char req[512];
        snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: node\r\n\r\n", path);
        return request(port, o, req);
}

/* Decodes a chunked body in place; returns false on bad framing or a
 * missing last chunk. */
static bool dechunk(const char *in, char *out)
{
        for (;;) {
                char *end;
                unsigned long n = strtoul(in, &end, 16);
                if (end == in || strncmp(end, "\r\n", 2) != 0)
                        return false;
                in = end + 2;
                if (n == 0)
                        return strcmp(in, "\r\n") == 0;
                memcpy(out, in, n);
                out += n;
                *out = '\0';
                in += n;
                if (strncmp(in, "\r\n", 2) != 0)
                        return false;
                in += 2;
        }
}

static int64_t wait_for(atomic_int *flag, int64_t timeout_ms)
{
        int64_t end = fs_now_mono_ms() + timeout_ms;
        while (atomic_load(flag) == 0 && fs_now_mono_ms() < end)
                usleep(5000);
        return atomic_load(flag);
}

static char *read_file(const char *path)
{
        char *buf = NULL;
        ck_error_t err = NULL;
        if (fs_read_file(path, 1 << 20, &buf, NULL, &err) < 0)
                fail_msg("%s", ck_error_msg(err));
        return buf;
}

/* ---- certificates ---- */

static void test_selfsigned_created_then_reused(void **state)
{
        (void)state;
        char certs[128], crt[160], key[160];
        snprintf(certs, sizeof(certs), "%s/pki/sub", dir);
        snprintf(crt, sizeof(crt), "%s/kubelet.crt", certs);
        snprintf(key, sizeof(key), "%s/kubelet.key", certs);
        struct secure_server_options o = {.cert_dir = certs, .hostname = " Node-A "};
        struct secure_server *s = start_ok(&o);

        struct stat st;
        assert_int_equal(stat(key, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0600);
        assert_int_equal(stat(crt, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0644);
        /* written atomically: no temporary file left beside them */
        DIR *d = opendir(certs);
        int entries = 0;
        for (struct dirent *e; (e = readdir(d)) != NULL;)
                entries += e->d_name[0] != '.';
        closedir(d);
        assert_int_equal(entries, 2);

        /* A client that trusts the file's CA and checks the name connects. */
        struct client_opts verify = {.trust = crt, .host = "node-a"};
        char *resp = get(secure_server_port(s), &verify, "/x");
        assert_int_equal(status_of(resp), 200);
        free(resp);
        struct client cl;
        struct client_opts wrong = {.trust = crt, .host = "other-node"};
        assert_false(client_connect(secure_server_port(s), &wrong, &cl));
        client_close(&cl);
        secure_server_stop(s);

        char *first = read_file(crt);
        char *key_pem = read_file(key);
        assert_non_null(strstr(key_pem, "-----BEGIN RSA PRIVATE KEY-----"));
        free(key_pem);
        s = start_ok(&o);
        char *second = read_file(crt);
        assert_string_equal(first, second); /* reused, not regenerated */
        resp = get(secure_server_port(s), &verify, "/x");
        assert_int_equal(status_of(resp), 200);
        free(resp);
        secure_server_stop(s);
        free(first);
        free(second);
}

/* The generated pair as upstream's: serving certificate then its CA, CN
 * host@time signed by host-ca@time, serverAuth, SAN of the host (an IP
 * host as an IP SAN), valid an hour back. */
static void test_selfsigned_contents(void **state)
{
        (void)state;
        const char *hosts[] = {"node-b", "10.1.2.3"};
        for (size_t h = 0; h < 2; h++) {
                char *cert = NULL, *key = NULL;
                ck_error_t err = NULL;
                assert_int_equal(secure_selfsigned_generate(hosts[h], &cert, &key, &err), 0);
                BIO *b = BIO_new_mem_buf(cert, -1);
                X509 *leaf = PEM_read_bio_X509(b, NULL, NULL, NULL);
                X509 *ca = PEM_read_bio_X509(b, NULL, NULL, NULL);
                assert_non_null(leaf);
                assert_non_null(ca);
                char cn[128], ca_cn[128], want[128];
                X509_NAME_get_text_by_NID(X509_get_subject_name(leaf), NID_commonName, cn,
                                          sizeof(cn));
                X509_NAME_get_text_by_NID(X509_get_subject_name(ca), NID_commonName, ca_cn,
                                          sizeof(ca_cn));
                snprintf(want, sizeof(want), "%s@", hosts[h]);
                assert_true(strncmp(cn, want, strlen(want)) == 0);
                snprintf(want, sizeof(want), "%s-ca@", hosts[h]);
                assert_true(strncmp(ca_cn, want, strlen(want)) == 0);
                assert_int_equal(X509_check_issued(ca, leaf), X509_V_OK);
                assert_int_equal(X509_check_ca(ca), 1);
                assert_int_equal(X509_check_ca(leaf), 0);
                assert_true(X509_get_extended_key_usage(leaf) & XKU_SSL_SERVER);
                if (h == 0) {
                        assert_int_equal(X509_check_host(leaf, "node-b", 0, 0, NULL), 1);
                } else {
                        assert_int_equal(X509_check_ip_asc(leaf, "10.1.2.3", 0), 1);
                        assert_int_not_equal(X509_check_host(leaf, "10.1.2.3", 0, 0, NULL), 1);
                }
                time_t now = time(NULL), later = now + 364 * 86400, past = now - 1800;
                assert_true(X509_cmp_time(X509_get0_notBefore(leaf), &past) < 0);
                assert_true(X509_cmp_time(X509_get0_notAfter(leaf), &later) > 0);
                EVP_PKEY *pub = X509_get0_pubkey(leaf);
                assert_int_equal(EVP_PKEY_get_bits(pub), 2048);
                X509_free(leaf);
                X509_free(ca);
                BIO_free(b);
                free(cert);
                free(key);
        }
}

static void test_selfsigned_half_pair_is_an_error(void **state)
{
        (void)state;
        char certs[128], crt[160];
        snprintf(certs, sizeof(certs), "%s/half", dir);
        mkdir(certs, 0755);
        snprintf(crt, sizeof(crt), "%s/kubelet.crt", certs);
        ck_error_t err = NULL;
        assert_int_equal(fs_write_file_atomic(crt, "x", 1, 0644, &err), 0);
        struct secure_server_options o = {.cert_dir = certs, .hostname = "node"};
        assert_null(start(&o, &err));
        assert_non_null(strstr(ck_error_msg(err), "kubelet.key, certificate and key must be "
                                                  "supplied as a pair"));
        ck_error_release(&err);
}

static void test_given_cert_and_key_are_used(void **state)
{
        (void)state;
        char certs[128];
        snprintf(certs, sizeof(certs), "%s/unused", dir);
        struct secure_server_options o = {
            .cert_file = fx("server.crt"), .key_file = fx("server.key"), .cert_dir = certs};
        struct secure_server *s = start_ok(&o);
        struct client cl;
        assert_true(client_connect(secure_server_port(s), NULL, &cl));
        X509 *peer = SSL_get1_peer_certificate(cl.ssl);
        char cn[64] = "";
        X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, cn, sizeof(cn));
        assert_string_equal(cn, "given-server");
        X509_free(peer);
        assert_int_equal(SSL_version(cl.ssl) >= TLS1_2_VERSION, 1);
        client_close(&cl);
        struct stat st;
        assert_int_not_equal(stat(certs, &st), 0); /* nothing self-signed made */
        secure_server_stop(s);
}

static void expect_start_error(struct secure_server_options *o, const char *want)
{
        ck_error_t err = NULL;
        struct secure_server *s = start(o, &err);
        if (s != NULL) {
                secure_server_stop(s);
                fail_msg("started, wanted error containing %s", want);
        }
        if (strstr(ck_error_msg(err), want) == NULL)
                fail_msg("error `%s` lacks `%s`", ck_error_msg(err), want);
        ck_error_release(&err);
}

static void test_start_errors_name_step_and_file(void **state)
{
        (void)state;
        char missing[160], want[256];
        snprintf(missing, sizeof(missing), "%s/missing.crt", dir);
        struct secure_server_options o = {.cert_file = missing, .key_file = fx("server.key")};
        snprintf(want, sizeof(want), "load TLS certificate: open `%s`: No such file", missing);
        expect_start_error(&o, want);

        o = (struct secure_server_options){.cert_file = fx("server.crt"),
                                           .key_file = fx("server.crt")};
        snprintf(want, sizeof(want), "load TLS private key `%s`:", fx("server.crt"));
        expect_start_error(&o, want);

        o = (struct secure_server_options){.cert_file = fx("server.crt"),
                                           .key_file = fx("client.key")};
        expect_start_error(&o, "private key `");

        o = (struct secure_server_options){.cert_file = fx("server.crt")};
        expect_start_error(&o, "must be given together");

        o = (struct secure_server_options){
            .cert_file = fx("server.crt"), .key_file = fx("server.key"), .client_ca_file = missing};
        snprintf(want, sizeof(want), "load client CA file: open `%s`", missing);
        expect_start_error(&o, want);

        o.client_ca_file = fx("server.key");
        snprintf(want, sizeof(want), "load client CA file `%s`: no certificate found",
                 fx("server.key"));
        expect_start_error(&o, want);

        o.client_ca_file = NULL;
        o.address = "not-an-ip";
        expect_start_error(&o, "invalid address `not-an-ip`");
}

/* A TLS 1.2 (at most) connection offering only `ciphers` (NULL: the
 * defaults); true if the handshake succeeds.  Close cl after. */
static bool client_connect_tls12(int port, const char *ciphers, struct client *cl)
{
        memset(cl, 0, sizeof(*cl));
        cl->ctx = SSL_CTX_new(TLS_client_method());
        assert_non_null(cl->ctx);
        SSL_CTX_set_max_proto_version(cl->ctx, TLS1_2_VERSION);
        if (ciphers)
                assert_int_equal(SSL_CTX_set_cipher_list(cl->ctx, ciphers), 1);
        cl->fd = tcp_connect(port);
        cl->ssl = SSL_new(cl->ctx);
        SSL_set_fd(cl->ssl, cl->fd);
        return SSL_connect(cl->ssl) == 1;
}

static void test_tls_min_version_and_cipher_suites(void **state)
{
        (void)state;
        struct secure_server_options o = {.cert_file = fx("server.crt"),
                                          .key_file = fx("server.key"),
                                          .tls_min_version = "VersionTLS13"};
        struct secure_server *s = start_ok(&o);
        struct client cl;
        assert_true(client_connect(secure_server_port(s), NULL, &cl));
        assert_string_equal(SSL_get_version(cl.ssl), "TLSv1.3");
        client_close(&cl);
        assert_false(client_connect_tls12(secure_server_port(s), NULL, &cl)); /* refused */
        client_close(&cl);
        secure_server_stop(s);

        /* TLS 1.2 with one suite (a TLS 1.3 name is accepted and ignored) */
        static const char *const suites[] = {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
                                             "TLS_AES_128_GCM_SHA256", NULL};
        o = (struct secure_server_options){.cert_file = fx("server.crt"),
                                           .key_file = fx("server.key"),
                                           .tls_cipher_suites = suites};
        s = start_ok(&o);
        assert_false(
            client_connect_tls12(secure_server_port(s), "ECDHE-ECDSA-AES128-GCM-SHA256", &cl));
        client_close(&cl);
        assert_true(client_connect_tls12(secure_server_port(s), NULL, &cl));
        assert_string_equal(SSL_get_cipher_name(cl.ssl), "ECDHE-ECDSA-AES256-GCM-SHA384");
        client_close(&cl);
        secure_server_stop(s);

        o.tls_min_version = "VersionTLS99";
        expect_start_error(&o, "unknown tls version \"VersionTLS99\"");
        static const char *const bad[] = {"TLS_NOPE", NULL};
        o.tls_min_version = NULL;
        o.tls_cipher_suites = bad;
        expect_start_error(&o, "Cipher suite TLS_NOPE not supported or doesn't exist");
}

static void test_lazy_tls_is_set_up_at_the_first_connection(void **state)
{
        (void)state;
        char certs[200], crt[240];
        snprintf(certs, sizeof(certs), "%s/lazy-certs", dir);
        snprintf(crt, sizeof(crt), "%s/kubelet.crt", certs);
        struct secure_server_options o = {.cert_dir = certs, .hostname = "node", .lazy_tls = true};
        struct secure_server *s = start_ok(&o);
        assert_int_not_equal(access(crt, F_OK), 0); /* nothing made yet */
        char *resp = get(secure_server_port(s), NULL, "/x");
        assert_int_equal(status_of(resp), 200);
        free(resp);
        assert_int_equal(access(crt, F_OK), 0);
        secure_server_stop(s);

        /* given files are still checked at start */
        char missing[200];
        snprintf(missing, sizeof(missing), "%s/missing.crt", dir);
        o = (struct secure_server_options){
            .cert_file = missing, .key_file = fx("server.key"), .lazy_tls = true};
        expect_start_error(&o, "load TLS certificate: open `");
        /* and so are the names upstream checks at start */
        static const char *const bad[] = {"TLS_NOPE", NULL};
        o = (struct secure_server_options){
            .cert_dir = certs, .lazy_tls = true, .tls_cipher_suites = bad};
        expect_start_error(&o, "Cipher suite TLS_NOPE not supported or doesn't exist");
        o = (struct secure_server_options){
            .cert_dir = certs, .lazy_tls = true, .tls_min_version = "VersionTLS9"};
        expect_start_error(&o, "unknown tls version \"VersionTLS9\"");
        /* a self-signed pair missing its key */
        char key[240];
        snprintf(key, sizeof(key), "%s/kubelet.key", certs);
        assert_int_equal(unlink(key), 0);
        o = (struct secure_server_options){.cert_dir = certs, .lazy_tls = true};
        expect_start_error(&o, "certificate and key must be supplied as a pair");
}

/* ---- client certificates ---- */

static struct secure_server *start_with_client_ca(void)
{
        struct secure_server_options o = {.cert_file = fx("server.crt"),
                                          .key_file = fx("server.key"),
                                          .client_ca_file = fx("ca.crt")};
        return start_ok(&o);
}

static void test_client_cert_from_client_ca_is_reported(void **state)
{
        (void)state;
        struct secure_server *s = start_with_client_ca();
        struct client_opts c = {.cert = fx("client.crt"), .key = fx("client.key")};
        char *resp = get(secure_server_port(s), &c, "/x");
        assert_int_equal(status_of(resp), 200);
        assert_non_null(strstr(body_of(resp),
                               " cn=kube-apiserver-kubelet-client orgs=system:masters,second "
                               "verr=(null) "));
        free(resp);
        secure_server_stop(s);
}

static void test_client_without_cert_connects(void **state)
{
        (void)state;
        struct secure_server *s = start_with_client_ca();
        char *resp = get(secure_server_port(s), NULL, "/x");
        assert_int_equal(status_of(resp), 200);
        assert_non_null(strstr(body_of(resp), " cn=(null) orgs= verr=(null) "));
        free(resp);
        secure_server_stop(s);
}

/* As Go's tls.RequestClientCert: the handshake succeeds, the certificate
 * gives no identity and the failed verification is reported (upstream's
 * x509 authenticator then fails the request unless a token is valid). */
static void test_client_cert_from_other_ca_gives_no_identity(void **state)
{
        (void)state;
        struct secure_server *s = start_with_client_ca();
        struct client_opts rogue = {.cert = fx("rogue.crt"), .key = fx("rogue.key")};
        char *resp = get(secure_server_port(s), &rogue, "/x");
        assert_int_equal(status_of(resp), 200);
        assert_non_null(strstr(body_of(resp), " cn=(null) orgs= verr=set "));
        free(resp);
        /* signed by the right CA but not for client auth: no identity either */
        struct client_opts server_only = {.cert = fx("server-only.crt"),
                                          .key = fx("server-only.key")};
        resp = get(secure_server_port(s), &server_only, "/x");
        assert_non_null(strstr(body_of(resp), " cn=(null) orgs= verr=set "));
        free(resp);
        secure_server_stop(s);
}

static void test_no_client_ca_requests_no_cert(void **state)
{
        (void)state;
        struct secure_server_options o = {.cert_file = fx("server.crt"),
                                          .key_file = fx("server.key")};
        struct secure_server *s = start_ok(&o);
        struct client_opts c = {.cert = fx("client.crt"), .key = fx("client.key")};
        char *resp = get(secure_server_port(s), &c, "/x");
        assert_non_null(strstr(body_of(resp), " cn=(null) orgs= verr=(null) "));
        free(resp);
        secure_server_stop(s);
}

/* ---- HTTP ---- */

struct fixture {
        struct secure_server *s;
        int port;
};

#define TEST_MAX_CONNS 32

/* The request deadline of the servers of setup: far beyond what a test
 * waits (tcp_connect's 5 s receive timeout), so that a connection the
 * server closes is told from one it keeps by what recv returns, not by a
 * clock.  setup_short_deadline's is 2 s, for the test of the deadline. */
#define TEST_REQUEST_TIMEOUT_MS 60000

static int setup_with_deadline(void **state, int request_timeout_ms)
{
        struct fixture *f = calloc(1, sizeof(*f));
        struct secure_server_options o = {.cert_file = fx("server.crt"),
                                          .key_file = fx("server.key"),
                                          .request_timeout_ms = request_timeout_ms,
                                          .max_conns = TEST_MAX_CONNS};
        f->s = start_ok(&o);
        f->port = secure_server_port(f->s);
        atomic_store(&follow_result, 0);
        atomic_store(&wait_result, 0);
        *state = f;
        return 0;
}

static int setup(void **state)
{
        return setup_with_deadline(state, TEST_REQUEST_TIMEOUT_MS);
}

static int setup_short_deadline(void **state)
{
        return setup_with_deadline(state, 2000);
}

/* Waits (up to 10 s) until the handler has been called n times in all. */
static void wait_handler_calls(int n)
{
        for (int waited = 0; atomic_load(&handler_calls) < n; waited += 5) {
                if (waited >= 10000)
                        fail_msg("the handler ran %d times, expected %d",
                                 atomic_load(&handler_calls), n);
                usleep(5000);
        }
}

static int teardown(void **state)
{
        struct fixture *f = *state;
        secure_server_stop(f->s);
        free(f);
        return 0;
}

static void test_request_fields_and_response_head(void **state)
{
        struct fixture *f = *state;
        char *resp = request(f->port, NULL,
                             "GET /containerLogs/ns/p%20x/c?follow=true&tailLines=5 HTTP/1.1\r\n"
                             "Host: node\r\nauthorization:  Bearer tok-en \r\n"
                             "Connection: keep-alive\r\nConnection: Upgrade\r\n"
                             "User-Agent: kube-apiserver/v1.35\r\n\r\n");
        assert_int_equal(status_of(resp), 200);
        const char *body = body_of(resp);
        assert_non_null(strstr(body,
                               "method=GET path=/containerLogs/ns/p%20x/c "
                               "query=follow=true&tailLines=5 auth=Bearer tok-en upgrade=1 "));
        assert_non_null(strstr(body, " ua=kube-apiserver/v1.35 remote=127.0.0.1:"));
        assert_true(strncmp(resp, "HTTP/1.1 200 OK\r\n", 17) == 0);
        assert_non_null(strstr(resp, "\r\nConnection: close\r\n"));
        assert_non_null(strstr(resp, "\r\nContent-Type: text/plain; charset=utf-8\r\n"));
        char cl[64];
        snprintf(cl, sizeof(cl), "\r\nContent-Length: %zu\r\n", strlen(body));
        assert_non_null(strstr(resp, cl));
        free(resp);

        resp = get(f->port, NULL, "/plain");
        assert_non_null(strstr(body_of(resp), "query=(null) auth=(null) upgrade=0 "));
        free(resp);
}

static void test_stream_is_chunked(void **state)
{
        struct fixture *f = *state;
        char *resp = get(f->port, NULL, "/stream");
        assert_int_equal(status_of(resp), 200);
        assert_non_null(strstr(resp, "\r\nTransfer-Encoding: chunked\r\n"));
        assert_null(strstr(resp, "Content-Length"));
        char out[64] = "";
        assert_true(dechunk(body_of(resp), out));
        assert_string_equal(out, "hello world");
        free(resp);
}

static void test_stream_to_http10_is_unframed(void **state)
{
        struct fixture *f = *state;
        char *resp = request(f->port, NULL, "GET /stream HTTP/1.0\r\n\r\n");
        assert_int_equal(status_of(resp), 200);
        assert_null(strstr(resp, "Transfer-Encoding"));
        assert_string_equal(body_of(resp), "hello world");
        free(resp);
}

static void test_unended_stream_is_ended(void **state)
{
        struct fixture *f = *state;
        char *resp = get(f->port, NULL, "/unended");
        char out[64] = "";
        assert_true(dechunk(body_of(resp), out));
        assert_string_equal(out, "abc");
        free(resp);
}

static void test_no_answer_is_500(void **state)
{
        struct fixture *f = *state;
        char *resp = get(f->port, NULL, "/none");
        assert_int_equal(status_of(resp), 500);
        free(resp);
}

static void test_head_has_no_body(void **state)
{
        struct fixture *f = *state;
        char *resp = request(f->port, NULL, "HEAD /x HTTP/1.1\r\nHost: n\r\n\r\n");
        assert_int_equal(status_of(resp), 200);
        assert_non_null(strstr(resp, "Content-Length: "));
        assert_string_equal(body_of(resp), "");
        free(resp);
}

static void test_big_response_arrives_whole(void **state)
{
        struct fixture *f = *state;
        struct client cl;
        assert_true(client_connect(f->port, NULL, &cl));
        client_send(&cl, "GET /big HTTP/1.1\r\nHost: n\r\n\r\n");
        size_t n;
        char *resp = client_read_all(&cl, &n);
        client_close(&cl);
        const char *body = body_of(resp);
        size_t blen = n - (size_t)(body - resp);
        assert_int_equal(blen, 200000);
        for (size_t i = 0; i < blen; i++)
                if (body[i] != (char)('a' + i % 26))
                        fail_msg("byte %zu differs", i);
        assert_non_null(strstr(resp, "Content-Length: 200000\r\n"));
        free(resp);
}

/* A client that leaves while a large answer is written: the write fails
 * (EPIPE/ECONNRESET, never a SIGPIPE that kills the process) and the server
 * keeps serving. */
static void test_client_gone_during_big_write_does_not_kill(void **state)
{
        struct fixture *f = *state;
        for (int i = 0; i < 5; i++) {
                struct client cl;
                assert_true(client_connect(f->port, NULL, &cl));
                client_send(&cl, "GET /huge HTTP/1.1\r\nHost: n\r\n\r\n");
                char buf[16];
                assert_true(SSL_read(cl.ssl, buf, sizeof(buf)) > 0);
                client_close(&cl);
        }
        usleep(200000);
        char *resp = get(f->port, NULL, "/x");
        assert_int_equal(status_of(resp), 200);
        free(resp);
}

static void test_garbage_is_400(void **state)
{
        struct fixture *f = *state;
        char *resp = request(f->port, NULL, "\x01\x02 garbage\r\n\r\n");
        assert_int_equal(status_of(resp), 400);
        free(resp);
        resp = request(f->port, NULL, "GET /x HTTP/1.1\r\n\r\n"); /* no Host */
        assert_int_equal(status_of(resp), 400);
        assert_non_null(strstr(body_of(resp), "missing required Host header"));
        free(resp);
        int before = atomic_load(&handler_calls);
        resp = request(f->port, NULL, "GET /x HTTP/2.0\r\nHost: x\r\n\r\n");
        assert_int_equal(status_of(resp), 400);
        free(resp);
        assert_int_equal(atomic_load(&handler_calls), before);
}

static void test_oversized_head_is_431(void **state)
{
        struct fixture *f = *state;
        struct client cl;
        assert_true(client_connect(f->port, NULL, &cl));
        client_send(&cl, "GET /x HTTP/1.1\r\nHost: n\r\n");
        char line[1024];
        memset(line, 'a', sizeof(line));
        memcpy(line, "X-Pad: ", 7);
        memcpy(line + sizeof(line) - 3, "\r\n", 3);
        for (int i = 0; i < 17; i++)
                client_send(&cl, line);
        char *resp = client_read_all(&cl, NULL);
        assert_int_equal(status_of(resp), 431);
        free(resp);
        client_close(&cl);
}

/* As Go's server: a plain HTTP request on the TLS port gets a plain 400. */
static void test_plain_http_gets_plain_400(void **state)
{
        struct fixture *f = *state;
        int fd = tcp_connect(f->port);
        const char *req = "GET /x HTTP/1.1\r\nHost: n\r\n\r\n";
        assert_int_equal(send(fd, req, strlen(req), MSG_NOSIGNAL), (ssize_t)strlen(req));
        char buf[256];
        size_t total = 0;
        ssize_t r = 0;
        while (total < sizeof(buf) - 1 &&
               (r = recv(fd, buf + total, sizeof(buf) - 1 - total, 0)) > 0)
                total += (size_t)r;
        buf[total] = '\0';
        /* closed by the server (EOF), not our receive timeout (EAGAIN) */
        assert_int_equal(r, 0);
        assert_true(strncmp(buf, "HTTP/1.0 400 Bad Request\r\n", 26) == 0);
        assert_non_null(strstr(buf, "Client sent an HTTP request to an HTTPS server."));
        close(fd);
}

/* A failed handshake (garbage instead of a ClientHello) is just closed. */
static void test_failed_handshake_is_closed(void **state)
{
        struct fixture *f = *state;
        int fd = tcp_connect(f->port);
        static const char junk[] = "\x16\x03\x01\x00\x05hello-not-tls";
        assert_int_equal(send(fd, junk, sizeof(junk) - 1, MSG_NOSIGNAL), (ssize_t)sizeof(junk) - 1);
        char buf[256];
        ssize_t r;
        while ((r = recv(fd, buf, sizeof(buf), 0)) > 0)
                assert_true(memcmp(buf, "HTTP", 4) != 0); /* a TLS alert at most */
        /* closed by the server, not our receive timeout (EAGAIN) */
        assert_true(r == 0 || errno == ECONNRESET);
        close(fd);
}

static void test_silent_client_is_closed_at_the_deadline(void **state)
{
        struct fixture *f = *state; /* setup_short_deadline: request_timeout_ms 2000 */
        struct client cl;
        int64_t t0 =
            fs_now_mono_ms(); /* before the connection: the deadline counts from the accept */
        assert_true(client_connect(f->port, NULL, &cl));
        struct timeval tv = {.tv_sec = 30}; /* far beyond the deadline */
        setsockopt(cl.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        client_send(&cl, "GET /x HTTP/1.1\r\n"); /* and then nothing */
        char buf[64];
        int r = SSL_read(cl.ssl, buf, sizeof(buf));
        int64_t took = fs_now_mono_ms() - t0;
        assert_true(r <= 0);
        /* the server closed it (EOF), at the deadline and not before */
        char c;
        ssize_t n = recv(cl.fd, &c, 1, MSG_DONTWAIT);
        assert_true(n == 0 || (n < 0 && errno == ECONNRESET));
        assert_true(took >= 1900);
        client_close(&cl);
}

/* ---- disconnects and stop ---- */

static void test_disconnect_fails_stream_write(void **state)
{
        struct fixture *f = *state;
        struct client cl;
        assert_true(client_connect(f->port, NULL, &cl));
        client_send(&cl, "GET /follow HTTP/1.1\r\nHost: n\r\n\r\n");
        char buf[512];
        assert_true(SSL_read(cl.ssl, buf, sizeof(buf)) > 0); /* the stream runs */
        client_close(&cl); /* as the apiserver does on ^C: no close_notify, just close */
        /* a write failed (1), before the handler's 1000 writes of 10 ms were
         * through (2: gave up) */
        assert_int_equal(wait_for(&follow_result, 30000), 1);
}

static void test_disconnect_is_seen_by_a_waiting_handler(void **state)
{
        struct fixture *f = *state;
        struct client cl;
        assert_true(client_connect(f->port, NULL, &cl));
        int calls = atomic_load(&handler_calls);
        client_send(&cl, "GET /wait HTTP/1.1\r\nHost: n\r\n\r\n");
        wait_handler_calls(calls + 1);
        usleep(100000);
        assert_int_equal(atomic_load(&wait_result), 0); /* not closed while connected */
        SSL_shutdown(cl.ssl);                           /* a polite close: close_notify, then FIN */
        client_close(&cl);
        /* seen (1), before the handler's 1000 polls of 10 ms were through
         * (2: gave up) */
        assert_int_equal(wait_for(&wait_result, 30000), 1);
}

static void test_stop_with_open_connections_is_prompt(void **state)
{
        struct fixture *f = *state;
        struct client idle, waiting, following;
        int raw = tcp_connect(f->port); /* not even a handshake */
        assert_true(client_connect(f->port, NULL, &idle));
        int calls = atomic_load(&handler_calls);
        assert_true(client_connect(f->port, NULL, &waiting));
        client_send(&waiting, "GET /wait HTTP/1.1\r\nHost: n\r\n\r\n");
        assert_true(client_connect(f->port, NULL, &following));
        client_send(&following, "GET /follow HTTP/1.1\r\nHost: n\r\n\r\n");
        char buf[256];
        assert_true(SSL_read(following.ssl, buf, sizeof(buf)) > 0);
        wait_handler_calls(calls + 2); /* both handlers run */

        int64_t t0 = fs_now_mono_ms();
        secure_server_stop(f->s);
        int64_t took = fs_now_mono_ms() - t0;
        f->s = NULL;
        /* prompt: the handlers saw the shutdown (1), they did not run out
         * their 10 s (2); far from the request deadline of 60 s */
        assert_true(took < 8000);
        assert_int_equal(atomic_load(&wait_result), 1);
        assert_int_equal(atomic_load(&follow_result), 1);
        /* the listener is gone */
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)f->port)};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        assert_int_not_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
        close(fd);
        close(raw);
        client_close(&idle);
        client_close(&waiting);
        client_close(&following);
}

static void test_connections_beyond_the_limit_are_closed(void **state)
{
        struct fixture *f = *state;
        int fds[TEST_MAX_CONNS];
        for (int i = 0; i < TEST_MAX_CONNS; i++)
                fds[i] = tcp_connect(f->port);
        usleep(200000);
        /* accepted after the others (the backlog is in order): over the
         * limit, closed by the server (EOF or RST), not our receive timeout
         * (EAGAIN; the request deadline is 60 s) */
        int extra = tcp_connect(f->port);
        char c;
        ssize_t r = recv(extra, &c, 1, 0);
        assert_true(r == 0 || (r < 0 && errno == ECONNRESET));
        close(extra);
        /* one of the first ones gone, a new one gets served (once the server
         * has seen it go) */
        close(fds[0]);
        struct client cl;
        bool served = false;
        for (int waited = 0; !served && waited < 10000; waited += 50) {
                if (client_connect(f->port, NULL, &cl)) {
                        client_send(&cl, "GET /x HTTP/1.1\r\nHost: node\r\n\r\n");
                        char *resp = client_read_all(&cl, NULL);
                        served = status_of(resp) == 200;
                        free(resp);
                }
                client_close(&cl);
                if (!served)
                        usleep(50000);
        }
        assert_true(served);
        for (int i = 1; i < TEST_MAX_CONNS; i++)
                close(fds[i]);
}

int main(void)
{
        /* The test's own client writes must not die of SIGPIPE; the server's
         * threads are started with it unblocked (see start()). */
        sigset_t pipe;
        sigemptyset(&pipe);
        sigaddset(&pipe, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &pipe, NULL);
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_selfsigned_created_then_reused),
            cmocka_unit_test(test_selfsigned_contents),
            cmocka_unit_test(test_selfsigned_half_pair_is_an_error),
            cmocka_unit_test(test_given_cert_and_key_are_used),
            cmocka_unit_test(test_start_errors_name_step_and_file),
            cmocka_unit_test(test_client_cert_from_client_ca_is_reported),
            cmocka_unit_test(test_client_without_cert_connects),
            cmocka_unit_test(test_client_cert_from_other_ca_gives_no_identity),
            cmocka_unit_test(test_no_client_ca_requests_no_cert),
            cmocka_unit_test_setup_teardown(test_request_fields_and_response_head, setup, teardown),
            cmocka_unit_test_setup_teardown(test_stream_is_chunked, setup, teardown),
            cmocka_unit_test_setup_teardown(test_stream_to_http10_is_unframed, setup, teardown),
            cmocka_unit_test_setup_teardown(test_unended_stream_is_ended, setup, teardown),
            cmocka_unit_test_setup_teardown(test_no_answer_is_500, setup, teardown),
            cmocka_unit_test_setup_teardown(test_head_has_no_body, setup, teardown),
            cmocka_unit_test_setup_teardown(test_big_response_arrives_whole, setup, teardown),
            cmocka_unit_test_setup_teardown(test_client_gone_during_big_write_does_not_kill, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_garbage_is_400, setup, teardown),
            cmocka_unit_test_setup_teardown(test_oversized_head_is_431, setup, teardown),
            cmocka_unit_test_setup_teardown(test_plain_http_gets_plain_400, setup, teardown),
            cmocka_unit_test_setup_teardown(test_failed_handshake_is_closed, setup, teardown),
            cmocka_unit_test_setup_teardown(test_silent_client_is_closed_at_the_deadline,
                                            setup_short_deadline, teardown),
            cmocka_unit_test_setup_teardown(test_disconnect_fails_stream_write, setup, teardown),
            cmocka_unit_test_setup_teardown(test_disconnect_is_seen_by_a_waiting_handler, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_stop_with_open_connections_is_prompt, setup,
                                            teardown),
            cmocka_unit_test(test_tls_min_version_and_cipher_suites),
            cmocka_unit_test(test_lazy_tls_is_set_up_at_the_first_connection),
            cmocka_unit_test_setup_teardown(test_connections_beyond_the_limit_are_closed, setup,
                                            teardown),
        };
        return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
