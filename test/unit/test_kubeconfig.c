/* SPDX-License-Identifier: Apache-2.0 */
/* kubeconfig loading: what a --kubeconfig file turns into, and its errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "client/kubeconfig.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A self-signed certificate with its key (A), and an unrelated key (B). */
static const char CERT_A[] = "-----BEGIN CERTIFICATE-----\n"
                             "MIIBeDCCAR+gAwIBAgIULtsLdAYCzr8oeGNCUuIMp6RLdzIwCgYIKoZIzj0EAwIw\n"
                             "ETEPMA0GA1UEAwwGdGVzdC1hMCAXDTI2MTEzMDAxMDExOFoYDzIxMjYxMTA2MDEw\n"
                             "MTE4WjARMQ8wDQYDVQQDDAZ0ZXN0LWEwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNC\n"
                             "AARWaxx3AyiWuJwhCuBKq+W4/ZT2+zLtKGEI2iUfXT4QFuLuglQwGdBjYT9IadmJ\n"
                             "i95NF7N9BMHpK3OYp3ob2Nlio1MwUTAdBgNVHQ4EFgQU0VoquzNE6ZKAWcvtCXin\n"
                             "ypXCFkkwHwYDVR0jBBgwFoAU0VoquzNE6ZKAWcvtCXinypXCFkkwDwYDVR0TAQH/\n"
                             "BAUwAwEB/zAKBggqhkjOPQQDAgNHADBEAiBpt4P3tKiqhXHkPlHBklxxQQg8rEOA\n"
                             "jQ+sQ14ZjVXhJQIgaBxZwjBHwUErnw6CjbyXoxE5/p2tfdhYKcmAijWALJk=\n"
                             "-----END CERTIFICATE-----\n";
static const char KEY_A[] = "-----BEGIN PRIVATE KEY-----\n"
                            "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgGJCJEwUu8McTzO9p\n"
                            "+MK2Dai/ltUaR1Y92auy9ylvWxKhRANCAARWaxx3AyiWuJwhCuBKq+W4/ZT2+zLt\n"
                            "KGEI2iUfXT4QFuLuglQwGdBjYT9IadmJi95NF7N9BMHpK3OYp3ob2Nli\n"
                            "-----END PRIVATE KEY-----\n";
static const char KEY_B[] = "-----BEGIN EC PRIVATE KEY-----\n"
                            "MHcCAQEEII30bpdkT96sCl6SVPpDEqDOeQw46vWG97J3vARUK0qOoAoGCCqGSM49\n"
                            "AwEHoUQDQgAEw+t+6ot4g1YOVP4yMVDcwP1cxDJebRac+64oKPqwwcvBqAgpiWmC\n"
                            "Ndqovl1QdAbo1JaA9gUBupCpfea5MTvTbA==\n"
                            "-----END EC PRIVATE KEY-----\n";

static char tmpdir[] = "/tmp/test_kubeconfig.XXXXXX";

static char *b64(const char *s)
{
        size_t n = strlen(s);
        char *out = xmalloc(4 * ((n + 2) / 3) + 1);
        EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)s, (int)n);
        return out;
}

static void write_file(const char *rel, const char *content)
{
        cleanup_free char *path = xasprintf("%s/%s", tmpdir, rel);
        cleanup_free char *dir = xstrdup(path);
        *strrchr(dir, '/') = '\0';
        ck_error_t err = NULL;
        assert_int_equal(fs_mkdir_p(dir, 0700, &err), 0);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(content, f);
        fclose(f);
}

/* Loads yaml (from memory, named "k", relative paths against tmpdir):
 * NULL and *cfg on success, else the error message (a new string). */
static char *load(const char *yaml, const char *context, struct rest_config *cfg)
{
        ck_error_t err = NULL;
        if (kubeconfig_load_buffer(yaml, strlen(yaml), "k", tmpdir, context, cfg, &err) == 0)
                return NULL;
        char *msg = xstrdup(ck_error_msg(err));
        ck_error_release(&err);
        assert_null(cfg->server); /* nothing half-filled on error */
        return msg;
}

static void expect_error(const char *yaml, const char *want)
{
        struct rest_config cfg = {0};
        cleanup_free char *msg = load(yaml, NULL, &cfg);
        if (msg == NULL)
                fail_msg("loaded; wanted the error: %s\n%s", want, yaml);
        if (strcmp(msg, want) != 0)
                fail_msg("input:\n%s\ngot:  %s\nwant: %s", yaml, msg, want);
}

/* A kubeconfig with one context "ctx" -> cluster "c" and user "u". */
static char *kc(const char *cluster_lines, const char *user_lines)
{
        return xasprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n%s\n"
                         "users:\n- name: u\n  user:\n%s\ncontexts:\n- name: ctx\n"
                         "  context: {cluster: c, user: u, namespace: ignored}\n"
                         "current-context: ctx\n",
                         cluster_lines, user_lines);
}

static void test_inline_data(void **state)
{
        (void)state;
        cleanup_free char *ca = b64(CERT_A), *cert = b64(CERT_A), *key = b64(KEY_A);
        cleanup_free char *cl = xasprintf("    server: https://10.0.0.1:6443/\n"
                                          "    certificate-authority-data: %s",
                                          ca);
        cleanup_free char *us = xasprintf("    client-certificate-data: %s\n"
                                          "    client-key-data: %s",
                                          cert, key);
        cleanup_free char *yaml = kc(cl, us);
        struct rest_config cfg = {0};
        cleanup_free char *msg = load(yaml, NULL, &cfg);
        assert_null(msg);
        assert_string_equal(cfg.server, "https://10.0.0.1:6443");
        assert_int_equal(cfg.ca_len, strlen(CERT_A));
        assert_memory_equal(cfg.ca_pem, CERT_A, cfg.ca_len);
        assert_int_equal(cfg.cert_len, strlen(CERT_A));
        assert_memory_equal(cfg.cert_pem, CERT_A, cfg.cert_len);
        assert_int_equal(cfg.key_len, strlen(KEY_A));
        assert_memory_equal(cfg.key_pem, KEY_A, cfg.key_len);
        assert_null(cfg.token);
        assert_false(cfg.insecure);
        assert_null(cfg.tls_server_name);
        rest_config_clear(&cfg);
}

static void test_files_relative_to_the_kubeconfig(void **state)
{
        (void)state;
        write_file("pki/ca.crt", CERT_A);
        write_file("pki/node.crt", CERT_A);
        write_file("pki/node.key", KEY_A);
        cleanup_free char *abs_key = xasprintf("%s/pki/node.key", tmpdir);
        cleanup_free char *us = xasprintf("    client-certificate: ../pki/node.crt\n"
                                          "    client-key: %s",
                                          abs_key);
        cleanup_free char *yaml = kc("    server: https://h:1\n"
                                     "    certificate-authority: ../pki/ca.crt\n"
                                     "    tls-server-name: kubernetes",
                                     us);
        write_file("conf/kubelet.conf", yaml);

        cleanup_free char *path = xasprintf("%s/conf/kubelet.conf", tmpdir);
        struct rest_config cfg;
        ck_error_t err = NULL;
        if (kubeconfig_load(path, NULL, &cfg, &err) < 0)
                fail_msg("%s", ck_error_msg(err));
        assert_memory_equal(cfg.ca_pem, CERT_A, cfg.ca_len);
        assert_memory_equal(cfg.cert_pem, CERT_A, cfg.cert_len);
        assert_memory_equal(cfg.key_pem, KEY_A, cfg.key_len);
        assert_string_equal(cfg.tls_server_name, "kubernetes");
        rest_config_clear(&cfg);

        /* A relative kubeconfig path: still against its own directory. */
        char cwd[4096];
        assert_non_null(getcwd(cwd, sizeof(cwd)));
        assert_int_equal(chdir(tmpdir), 0);
        int rc = kubeconfig_load("conf/kubelet.conf", NULL, &cfg, &err);
        assert_int_equal(chdir(cwd), 0);
        if (rc < 0)
                fail_msg("%s", ck_error_msg(err));
        assert_memory_equal(cfg.cert_pem, CERT_A, cfg.cert_len);
        rest_config_clear(&cfg);
}

static void test_missing_file_names_file_and_field(void **state)
{
        (void)state;
        cleanup_free char *yaml =
            kc("    server: https://h:1", "    client-certificate: nope/gone.crt\n"
                                          "    client-key: nope/gone.key");
        cleanup_free char *want = xasprintf("kubeconfig `k`: users[0].user.client-certificate: "
                                            "open `%s/nope/gone.crt`: No such file or directory",
                                            tmpdir);
        expect_error(yaml, want);

        ck_error_t err = NULL;
        struct rest_config cfg;
        cleanup_free char *kpath = xasprintf("%s/absent.conf", tmpdir);
        assert_int_equal(kubeconfig_load(kpath, NULL, &cfg, &err), -1);
        cleanup_free char *want2 =
            xasprintf("kubeconfig: open `%s`: No such file or directory", kpath);
        assert_string_equal(ck_error_msg(err), want2);
        ck_error_release(&err);
}

static void test_tokens(void **state)
{
        (void)state;
        write_file("secrets/token", "  abc.def-123\n\n");
        struct rest_config cfg = {0};
        cleanup_free char *y1 = kc("    server: https://h:1\n    insecure-skip-tls-verify: true",
                                   "    tokenFile: secrets/token");
        cleanup_free char *m1 = load(y1, NULL, &cfg);
        assert_null(m1);
        assert_string_equal(cfg.token, "abc.def-123"); /* trimmed */
        assert_true(cfg.insecure);
        rest_config_clear(&cfg);

        /* token wins; the token file is then not even read */
        cleanup_free char *y2 =
            kc("    server: https://h:1", "    token: inline-token\n    tokenFile: missing");
        cleanup_free char *m2 = load(y2, NULL, &cfg);
        assert_null(m2);
        assert_string_equal(cfg.token, "inline-token");
        rest_config_clear(&cfg);

        write_file("secrets/empty", " \n");
        cleanup_free char *y3 = kc("    server: https://h:1", "    tokenFile: secrets/empty");
        cleanup_free char *want = xasprintf(
            "kubeconfig `k`: users[0].user.tokenFile: `%s/secrets/empty` holds no token", tmpdir);
        expect_error(y3, want);

        /* a token that would split the Authorization header; not echoed */
        cleanup_free char *y4 = kc("    server: https://h:1", "    token: \"se\\r\\ncret\"");
        expect_error(y4, "kubeconfig `k`: users[0].user.token: the token contains control "
                         "characters");
}

static const char TWO_CONTEXTS[] = "clusters:\n"
                                   "- name: one\n  cluster: {server: https://one:1}\n"
                                   "- name: two\n  cluster: {server: https://two:2}\n"
                                   "contexts:\n"
                                   "- name: a\n  context: {cluster: one}\n"
                                   "- name: b\n  context: {cluster: two}\n";

static void test_context_selection(void **state)
{
        (void)state;
        struct rest_config cfg = {0};
        cleanup_free char *yaml = xasprintf("%scurrent-context: b\n", TWO_CONTEXTS);
        cleanup_free char *m1 = load(yaml, NULL, &cfg);
        assert_null(m1);
        assert_string_equal(cfg.server, "https://two:2");
        rest_config_clear(&cfg);

        cleanup_free char *m2 = load(yaml, "a", &cfg); /* an override wins */
        assert_null(m2);
        assert_string_equal(cfg.server, "https://one:1");
        rest_config_clear(&cfg);

        cleanup_free char *m3 = load(yaml, "zz", &cfg);
        assert_string_equal(m3, "kubeconfig `k`: contexts: no context named \"zz\"");

        expect_error(TWO_CONTEXTS, "kubeconfig `k`: current-context: not set");
        expect_error("", "kubeconfig `k`: empty document");
}

static void test_missing_and_wrong_fields(void **state)
{
        (void)state;
        static const char *const cases[][2] = {
            {"clusters: [{name: c, cluster: {server: https://h:1}}]\n"
             "contexts: [{name: x, context: {user: u}}]\ncurrent-context: x\n",
             "kubeconfig `k`: contexts[0].context.cluster: required"},
            {"clusters: [{name: c, cluster: {server: https://h:1}}]\n"
             "contexts: [{name: x, context: {cluster: d}}]\ncurrent-context: x\n",
             "kubeconfig `k`: contexts[0].context.cluster: no cluster named \"d\" in clusters"},
            {"clusters: [{name: c, cluster: {server: https://h:1}}]\n"
             "contexts: [{name: x, context: {cluster: c, user: v}}]\ncurrent-context: x\n",
             "kubeconfig `k`: contexts[0].context.user: no user named \"v\" in users"},
            {"clusters: [{name: z, cluster: {}}, {name: c, cluster: {insecure-skip-tls-verify: "
             "true}}]\ncontexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x\n",
             "kubeconfig `k`: clusters[1].cluster.server: required"},
            {"clusters: [{name: c, cluster: {server: 5}}]\n"
             "contexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x\n",
             "kubeconfig `k`: clusters[0].cluster.server: must be a string"},
            {"clusters: [{name: c, cluster: {server: \"ftp://h\"}}]\n"
             "contexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x\n",
             "kubeconfig `k`: clusters[0].cluster.server: unsupported scheme in `ftp://h`"},
            {"clusters: [{name: c, cluster: {server: \"https:///x\"}}]\n"
             "contexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x\n",
             "kubeconfig `k`: clusters[0].cluster.server: no host in `https:///x`"},
            {"clusters: [{name: c, cluster: {server: \"https://\"}}]\n"
             "contexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x\n",
             "kubeconfig `k`: clusters[0].cluster.server: no host in `https://`"},
            {"clusters: [{name: c, cluster: {server: \"http:////\"}}]\n"
             "contexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x\n",
             "kubeconfig `k`: clusters[0].cluster.server: no host in `http:////`"},
            {"clusters: [{name: c, cluster: {server: https://h, insecure-skip-tls-verify: "
             "\"yes\"}}]\ncontexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x\n",
             "kubeconfig `k`: clusters[0].cluster.insecure-skip-tls-verify: must be a boolean"},
            {"clusters: [{name: c, cluster: {server: https://h}}, {name: c, cluster: {}}]\n"
             "contexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x\n",
             "kubeconfig `k`: clusters[1].name: duplicate name \"c\""},
            {"clusters: {c: 1}\ncontexts: [{name: x, context: {cluster: c}}]\n"
             "current-context: x\n",
             "kubeconfig `k`: clusters: must be a list"},
            {"clusters: [{name: c, cluster: {server: https://h}}]\n"
             "users: [{name: u, user: {exec: {command: x}}}]\n"
             "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n",
             "kubeconfig `k`: users[0].user.exec: not supported"},
            {"clusters: [{name: c, cluster: {server: https://h, proxy-url: http://p}}]\n"
             "contexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x\n",
             "kubeconfig `k`: clusters[0].cluster.proxy-url: not supported"},
            {"- a\n- b\n", "kubeconfig `k`: not a kubeconfig (a mapping is expected)"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
                expect_error(cases[i][0], cases[i][1]);
}

static void test_certificate_and_key_errors(void **state)
{
        (void)state;
        cleanup_free char *cert = b64(CERT_A), *key_a = b64(KEY_A), *key_b = b64(KEY_B);
        const char *cl = "    server: https://h:1";
        struct {
                char *user;
                const char *want;
        } cases[] = {
            {xasprintf("    client-certificate-data: %s", cert),
             "kubeconfig `k`: users[0].user: client-certificate without client-key"},
            {xasprintf("    client-key-data: %s", key_a),
             "kubeconfig `k`: users[0].user: client-key without client-certificate"},
            {xasprintf("    client-certificate-data: %s\n    client-key-data: %s", cert, key_b),
             "kubeconfig `k`: users[0].user: the client certificate does not match its key"},
            {xasprintf("    client-certificate-data: %s\n    client-key-data: \"%%%%%%\"", cert),
             "kubeconfig `k`: users[0].user.client-key-data: invalid base64 data"},
            {xasprintf("    client-certificate-data: %s\n    client-key-data: QUJD=", cert),
             "kubeconfig `k`: users[0].user.client-key-data: invalid base64 data"},
            /* base64 of "SECRETKEY": not PEM, and never echoed */
            {xasprintf("    client-certificate-data: %s\n    client-key-data: U0VDUkVUS0VZ", cert),
             "kubeconfig `k`: users[0].user.client-key-data: no PEM private key found"},
            {xasprintf("    client-certificate-data: %s\n    client-key-data: %s", key_a, key_a),
             "kubeconfig `k`: users[0].user.client-certificate-data: no PEM certificate found"},
            {xasprintf("    client-certificate-data: %s\n    client-certificate: x.crt\n"
                       "    client-key-data: %s",
                       cert, key_a),
             "kubeconfig `k`: users[0].user: both client-certificate and client-certificate-data "
             "are set"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                cleanup_free char *yaml = kc(cl, cases[i].user);
                expect_error(yaml, cases[i].want);
                free(cases[i].user);
        }

        cleanup_free char *ca = b64(CERT_A);
        cleanup_free char *insecure_ca = xasprintf("    server: https://h:1\n"
                                                   "    insecure-skip-tls-verify: true\n"
                                                   "    certificate-authority-data: %s",
                                                   ca);
        cleanup_free char *y = kc(insecure_ca, "    token: t");
        expect_error(y, "kubeconfig `k`: clusters[0].cluster: a certificate authority with "
                        "insecure-skip-tls-verify is not allowed");
}

static void test_server_scheme_defaults(void **state)
{
        (void)state;
        struct rest_config cfg = {0};
        /* clientcmd's DefaultServerURL: https when TLS is configured */
        cleanup_free char *y1 =
            kc("    server: 10.0.0.1:6443\n    insecure-skip-tls-verify: true", "    token: t");
        cleanup_free char *m1 = load(y1, NULL, &cfg);
        assert_null(m1);
        assert_string_equal(cfg.server, "https://10.0.0.1:6443");
        rest_config_clear(&cfg);
        cleanup_free char *y2 = kc("    server: localhost:8080//", "    token: t");
        cleanup_free char *m2 = load(y2, NULL, &cfg);
        assert_null(m2);
        assert_string_equal(cfg.server, "http://localhost:8080");
        rest_config_clear(&cfg);
}

static void test_copy_is_deep(void **state)
{
        (void)state;
        cleanup_free char *cert = b64(CERT_A), *key = b64(KEY_A);
        cleanup_free char *us = xasprintf("    client-certificate-data: %s\n"
                                          "    client-key-data: %s\n    token: tok",
                                          cert, key);
        cleanup_free char *yaml = kc("    server: https://h:1", us);
        struct rest_config cfg = {0}, copy;
        cleanup_free char *m = load(yaml, NULL, &cfg);
        assert_null(m);
        rest_config_copy(&copy, &cfg);
        rest_config_clear(&cfg);
        assert_null(cfg.server);
        assert_string_equal(copy.server, "https://h:1");
        assert_memory_equal(copy.key_pem, KEY_A, copy.key_len);
        assert_string_equal(copy.token, "tok");
        rest_config_clear(&copy);
}

static int setup(void **state)
{
        (void)state;
        return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
        (void)state;
        ck_error_t err = NULL;
        fs_remove_all(tmpdir, &err);
        ck_error_release(&err);
        return 0;
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_inline_data),
            cmocka_unit_test(test_files_relative_to_the_kubeconfig),
            cmocka_unit_test(test_missing_file_names_file_and_field),
            cmocka_unit_test(test_tokens),
            cmocka_unit_test(test_context_selection),
            cmocka_unit_test(test_missing_and_wrong_fields),
            cmocka_unit_test(test_certificate_and_key_errors),
            cmocka_unit_test(test_server_scheme_defaults),
            cmocka_unit_test(test_copy_is_deep),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
