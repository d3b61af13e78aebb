/* SPDX-License-Identifier: Apache-2.0 */
/* /configz (config/configz.h): the effective configuration, from flags and a
 * --config file as kubelet_flags_parse merges them, in upstream's v1beta1
 * JSON, and back through the file loader unchanged. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "config/configz.h"
#include "config/kubeletconfig.h"
#include "util/log.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/test_configz.XXXXXX";
static int quiet_fd = 2; /* deprecation warnings for config flags are expected */

#define ARGV(...) ((char *[]){"kubelet", __VA_ARGS__, NULL})
#define KUBECONFIG_FLAG "--kubeconfig=/etc/kubernetes/kubelet.conf"

static int argv_len(char **argv)
{
        int n = 0;
        while (argv[n])
                n++;
        return n;
}

/* kubelet_flags_parse over fresh defaults, as the daemon does. */
static void parse_ok(struct kubelet_config *cfg, char **argv)
{
        ck_error_t err = NULL;
        enum kubelet_flags_action action = FLAGS_RUN;
        kubelet_config_defaults(cfg);
        if (kubelet_flags_parse(cfg, argv_len(argv), argv, &action, &err) < 0)
                fail_msg("unexpected error: %s", ck_error_msg(err));
        assert_int_equal(action, FLAGS_RUN);
}

/* Writes a file into the test directory; returns its path (new string). */
static char *write_file(const char *name, const char *content)
{
        char *path = NULL;
        assert_true(asprintf(&path, "%s/%s", tmpdir, name) > 0);
        FILE *f = fopen(path, "we");
        assert_non_null(f);
        fputs(content, f);
        assert_int_equal(fclose(f), 0);
        return path;
}

static char *config_flag(const char *path)
{
        char *flag = NULL;
        assert_true(asprintf(&flag, "--config=%s", path) > 0);
        return flag;
}

/* The inner object of configz_json(cfg), borrowed from *doc (a new
 * reference the caller releases). */
static json_t *inner(const struct kubelet_config *cfg, json_t **doc)
{
        *doc = configz_json(cfg);
        assert_non_null(*doc);
        assert_true(json_is_object(*doc));
        assert_int_equal(json_object_size(*doc), 1);
        json_t *kc = json_object_get(*doc, "kubeletconfig");
        assert_non_null(kc);
        assert_true(json_is_object(kc));
        return kc;
}

/* A member at a dotted path ("authentication.webhook.cacheTTL"); NULL when
 * absent. */
static json_t *at(json_t *obj, const char *path)
{
        char *copy = strdup(path), *save = NULL;
        json_t *v = obj;
        for (char *tok = strtok_r(copy, ".", &save); tok && v; tok = strtok_r(NULL, ".", &save))
                v = json_object_get(v, tok);
        free(copy);
        return v;
}

static void assert_str(json_t *kc, const char *path, const char *want)
{
        json_t *v = at(kc, path);
        if (v == NULL)
                fail_msg("%s: absent, want \"%s\"", path, want);
        if (!json_is_string(v))
                fail_msg("%s: not a string", path);
        assert_string_equal(json_string_value(v), want);
}

static void assert_int(json_t *kc, const char *path, json_int_t want)
{
        json_t *v = at(kc, path);
        if (v == NULL || !json_is_integer(v))
                fail_msg("%s: absent or not an integer, want %lld", path, (long long)want);
        assert_int_equal(json_integer_value(v), want);
}

static void assert_bool(json_t *kc, const char *path, bool want)
{
        json_t *v = at(kc, path);
        if (v == NULL || !json_is_boolean(v))
                fail_msg("%s: absent or not a boolean", path);
        assert_int_equal(json_is_true(v), want);
}

static void assert_absent(json_t *kc, const char *path)
{
        if (at(kc, path) != NULL)
                fail_msg("%s: present, want it left out", path);
}

/* Writes the inner object as a KubeletConfiguration file (apiVersion and
 * kind added: the loader requires them), starts a kubelet from it with the
 * flags that are not configuration (so not in configz) and asserts that
 * configz serves byte for byte the same document. */
static void assert_round_trip(const struct kubelet_config *cfg, const char *name)
{
        json_t *doc = NULL;
        json_t *file = json_deep_copy(inner(cfg, &doc));
        json_object_set_new(file, "apiVersion", json_string("kubelet.config.k8s.io/v1beta1"));
        json_object_set_new(file, "kind", json_string("KubeletConfiguration"));
        /* no evictionHard (omitted when empty) is no threshold; a file
         * without it would get upstream's DefaultEvictionHard */
        if (json_object_get(file, "evictionHard") == NULL)
                json_object_set_new(file, "evictionHard", json_object());
        char *text = json_dumps(file, JSON_INDENT(2));
        assert_non_null(text);
        char *path = write_file(name, text);
        char *flag = config_flag(path);

        struct kubelet_config again;
        parse_ok(&again, ARGV(flag, KUBECONFIG_FLAG));
        json_t *doc2 = configz_json(&again);
        assert_true(json_equal(doc, doc2));
        char *a = json_dumps(doc, JSON_COMPACT), *b = json_dumps(doc2, JSON_COMPACT);
        assert_string_equal(a, b);

        free(a);
        free(b);
        json_decref(doc2);
        kubelet_config_release(&again);
        free(flag);
        free(path);
        free(text);
        json_decref(file);
        json_decref(doc);
}

/* ---- tests ---- */

/* A kubelet started with no flags: upstream's v1beta1 defaults with the
 * command line's legacy authentication defaults, in v1beta1's field order.
 * What upstream serves, restricted to the fields ckubelet has: no kind or
 * apiVersion (setConfigz converts without TypeMeta), readOnlyPort 0 left
 * out, the self-signed pair's paths filled in by InitializeTLS. */
static void test_defaults_document(void **state)
{
        (void)state;
        struct kubelet_config c;
        parse_ok(&c, ARGV("--hostname-override=node1"));
        json_t *doc = configz_json(&c);
        char *text = json_dumps(doc, JSON_COMPACT);
        assert_string_equal(
            text, "{\"kubeletconfig\":{"
                  "\"enableServer\":true,"
                  "\"podLogsDir\":\"/var/log/pods\","
                  "\"syncFrequency\":\"1m0s\","
                  "\"fileCheckFrequency\":\"20s\","
                  "\"httpCheckFrequency\":\"20s\","
                  "\"address\":\"0.0.0.0\","
                  "\"port\":10250,"
                  "\"tlsCertFile\":\"/var/lib/kubelet/pki/kubelet.crt\","
                  "\"tlsPrivateKeyFile\":\"/var/lib/kubelet/pki/kubelet.key\","
                  "\"authentication\":{"
                  "\"x509\":{},"
                  "\"webhook\":{\"enabled\":false,\"cacheTTL\":\"2m0s\"},"
                  "\"anonymous\":{\"enabled\":true}},"
                  "\"authorization\":{"
                  "\"mode\":\"AlwaysAllow\","
                  "\"webhook\":{\"cacheAuthorizedTTL\":\"5m0s\",\"cacheUnauthorizedTTL\":\"30s\"}},"
                  "\"enableDebuggingHandlers\":true,"
                  "\"healthzPort\":10248,"
                  "\"healthzBindAddress\":\"127.0.0.1\","
                  "\"nodeStatusUpdateFrequency\":\"10s\","
                  "\"nodeStatusReportFrequency\":\"5m0s\","
                  "\"nodeLeaseDurationSeconds\":40,"
                  "\"imageMinimumGCAge\":\"2m0s\","
                  "\"imageMaximumGCAge\":\"0s\","
                  "\"imageGCHighThresholdPercent\":85,"
                  "\"imageGCLowThresholdPercent\":80,"
                  "\"volumeStatsAggPeriod\":\"1m0s\","
                  "\"cgroupsPerQOS\":true,"
                  "\"cgroupDriver\":\"cgroupfs\","
                  "\"runtimeRequestTimeout\":\"2m0s\","
                  "\"maxPods\":110,"
                  "\"resolvConf\":\"/etc/resolv.conf\","
                  "\"nodeStatusMaxImages\":50,"
                  "\"kubeAPIQPS\":50,"
                  "\"kubeAPIBurst\":100,"
                  "\"serializeImagePulls\":true,"
                  "\"evictionPressureTransitionPeriod\":\"5m0s\","
                  "\"mergeDefaultEvictionSettings\":false,"
                  "\"failSwapOn\":true,"
                  "\"containerLogMaxSize\":\"10Mi\","
                  "\"containerLogMaxFiles\":5,"
                  "\"containerLogMaxWorkers\":1,"
                  "\"containerLogMonitorInterval\":\"10s\","
                  "\"logging\":{\"verbosity\":0},"
                  "\"shutdownGracePeriod\":\"0s\","
                  "\"shutdownGracePeriodCriticalPods\":\"0s\","
                  "\"enableDebugFlagsHandler\":true,"
                  "\"registerNode\":true,"
                  "\"containerRuntimeEndpoint\":\"unix:///run/containerd/containerd.sock\","
                  "\"failCgroupV1\":true"
                  "}}");
        free(text);

        /* the same, field by field, and what is not there */
        json_t *kc = json_object_get(doc, "kubeletconfig");
        assert_str(kc, "syncFrequency", "1m0s");
        assert_int(kc, "port", 10250);
        assert_absent(kc, "kind");
        assert_absent(kc, "apiVersion");
        assert_absent(kc, "featureGates"); /* omitempty */
        assert_absent(kc, "readOnlyPort"); /* 0: omitempty */
        assert_int(kc, "healthzPort", 10248);
        assert_absent(kc, "imageServiceEndpoint"); /* derived from the runtime's */
        assert_absent(kc, "staticPodPath");
        assert_absent(kc, "clusterDomain");
        assert_absent(kc, "clusterDNS");
        assert_absent(kc, "systemReserved");
        /* flags that are not KubeletConfiguration fields */
        assert_absent(kc, "hostnameOverride");
        assert_absent(kc, "rootDir");
        assert_absent(kc, "certDir");
        assert_absent(kc, "nodeLabels");
        json_decref(doc);
        kubelet_config_release(&c);
}

/* Flags over a file: the file's values, the flags' where both are given,
 * the defaults upstream derives from the file (webhook authentication,
 * nodeStatusReportFrequency following nodeStatusUpdateFrequency), paths
 * resolved against the file's directory. */
static const char node_yaml[] = "apiVersion: kubelet.config.k8s.io/v1beta1\n"
                                "kind: KubeletConfiguration\n"
                                "staticPodPath: manifests\n"
                                "syncFrequency: 4h\n"
                                "maxPods: 50\n"
                                "address: 127.0.0.1\n"
                                "readOnlyPort: 10255\n"
                                "healthzBindAddress: 0.0.0.0\n"
                                "enableDebuggingHandlers: false\n"
                                "clusterDomain: cluster.local\n"
                                "clusterDNS: [10.96.0.10, 10.96.0.11]\n"
                                "nodeStatusUpdateFrequency: 20s\n"
                                "cgroupRoot: /kubepods-root\n"
                                "cgroupDriver: systemd\n"
                                "systemReserved: {memory: 1Gi, cpu: 100m, pid: '1000'}\n"
                                "kubeReserved: {ephemeral-storage: 10Gi}\n"
                                "tlsMinVersion: VersionTLS12\n"
                                "tlsCipherSuites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]\n"
                                "authentication:\n"
                                "  x509: {clientCAFile: /etc/kubernetes/pki/ca.crt}\n"
                                "  webhook: {cacheTTL: 90s}\n"
                                "staticPodURL: http://127.0.0.1:8080/pods\n"
                                "containerRuntimeEndpoint: unix:///run/crio/crio.sock\n"
                                "imageServiceEndpoint: unix:///run/images.sock\n";

static void parse_node_config(struct kubelet_config *c, char **path)
{
        *path = write_file("node.yaml", node_yaml);
        char *flag = config_flag(*path);
        parse_ok(c, ARGV(flag, KUBECONFIG_FLAG, "--max-pods=20", "--file-check-frequency=90s",
                         "--http-check-frequency=1.5s", "--healthz-port=10249",
                         "--runtime-request-timeout=500ms", "-v=3", "--fail-swap-on=false",
                         "--kube-api-qps=0", "--tls-cert-file=/etc/kubelet/tls.crt",
                         "--tls-private-key-file=/etc/kubelet/tls.key"));
        free(flag);
}

static void test_file_and_flags(void **state)
{
        (void)state;
        struct kubelet_config c;
        char *path = NULL;
        parse_node_config(&c, &path);
        json_t *doc = NULL, *kc = inner(&c, &doc);

        /* from the file */
        char *want = NULL;
        assert_true(asprintf(&want, "%s/manifests", tmpdir) > 0);
        assert_str(kc, "staticPodPath", want);
        free(want);
        assert_str(kc, "syncFrequency", "4h0m0s");
        assert_str(kc, "address", "127.0.0.1");
        assert_int(kc, "readOnlyPort", 10255);
        assert_str(kc, "healthzBindAddress", "0.0.0.0");
        assert_bool(kc, "enableDebuggingHandlers", false);
        assert_str(kc, "clusterDomain", "cluster.local");
        json_t *dns = json_object_get(kc, "clusterDNS");
        assert_int_equal(json_array_size(dns), 2);
        assert_string_equal(json_string_value(json_array_get(dns, 1)), "10.96.0.11");
        assert_str(kc, "nodeStatusUpdateFrequency", "20s");
        assert_str(kc, "nodeStatusReportFrequency", "20s"); /* follows the update frequency */
        assert_str(kc, "cgroupRoot", "/kubepods-root");
        assert_str(kc, "cgroupDriver", "systemd");
        assert_str(kc, "tlsMinVersion", "VersionTLS12");
        assert_string_equal(json_string_value(json_array_get(at(kc, "tlsCipherSuites"), 0)),
                            "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256");
        assert_str(kc, "authentication.x509.clientCAFile", "/etc/kubernetes/pki/ca.crt");
        assert_str(kc, "authentication.webhook.cacheTTL", "1m30s");
        assert_str(kc, "staticPodURL", "http://127.0.0.1:8080/pods");
        assert_str(kc, "containerRuntimeEndpoint", "unix:///run/crio/crio.sock");
        assert_str(kc, "imageServiceEndpoint", "unix:///run/images.sock");
        /* a file's secure-port defaults are v1beta1's, not the command line's */
        assert_bool(kc, "authentication.webhook.enabled", true);
        assert_bool(kc, "authentication.anonymous.enabled", false);
        assert_str(kc, "authorization.mode", "Webhook");
        assert_str(kc, "authorization.webhook.cacheAuthorizedTTL", "5m0s");

        /* resource quantities: strings, as given; keys sorted as Go's maps */
        json_t *sr = json_object_get(kc, "systemReserved");
        assert_int_equal(json_object_size(sr), 3);
        void *it = json_object_iter(sr);
        assert_string_equal(json_object_iter_key(it), "cpu");
        it = json_object_iter_next(sr, it);
        assert_string_equal(json_object_iter_key(it), "memory");
        it = json_object_iter_next(sr, it);
        assert_string_equal(json_object_iter_key(it), "pid");
        assert_str(kc, "systemReserved.cpu", "100m");
        assert_str(kc, "systemReserved.memory", "1Gi");
        assert_str(kc, "systemReserved.pid", "1000");
        assert_str(kc, "kubeReserved.ephemeral-storage", "10Gi");

        /* from the flags */
        assert_int(kc, "maxPods", 20); /* over the file's 50 */
        assert_str(kc, "fileCheckFrequency", "1m30s");
        assert_str(kc, "httpCheckFrequency", "1.5s");
        assert_str(kc, "runtimeRequestTimeout", "500ms");
        assert_int(kc, "logging.verbosity", 3);
        assert_int(kc, "healthzPort", 10249);
        assert_bool(kc, "failSwapOn", false);
        assert_int(kc, "kubeAPIQPS", 0); /* a *int32: 0 is served */
        assert_str(kc, "tlsCertFile", "/etc/kubelet/tls.crt");
        assert_str(kc, "tlsPrivateKeyFile", "/etc/kubelet/tls.key");

        /* untouched defaults */
        assert_int(kc, "port", 10250);
        assert_int(kc, "kubeAPIBurst", 100);
        assert_bool(kc, "enableDebugFlagsHandler", true);
        assert_str(kc, "resolvConf", "/etc/resolv.conf");
        assert_absent(kc, "kind");
        assert_absent(kc, "apiVersion");

        json_decref(doc);
        kubelet_config_release(&c);
        free(path);
}

/* What a config file says comes back the same. */
static void test_round_trip(void **state)
{
        (void)state;
        struct kubelet_config c;
        char *path = NULL;
        parse_node_config(&c, &path);
        assert_round_trip(&c, "rt-node.json");
        kubelet_config_release(&c);
        free(path);

        /* no flags at all: the legacy defaults are written out and kept */
        parse_ok(&c, ARGV("--hostname-override=node1"));
        assert_round_trip(&c, "rt-defaults.json");
        kubelet_config_release(&c);

        /* zero values that the file keeps: a *string "", a *int32 0, bools */
        parse_ok(&c, ARGV(KUBECONFIG_FLAG, "--resolv-conf=", "--kube-api-qps=0",
                          "--serialize-image-pulls=false", "--register-node=false",
                          "--cgroups-per-qos=false", "--enable-server=false",
                          "--anonymous-auth=false", "--authentication-token-webhook",
                          "--authorization-mode=Webhook", "--cluster-dns=10.0.0.10,10.0.0.11",
                          "--system-reserved=memory=500Mi,cpu=200m", "--kube-reserved=cpu=1",
                          "--feature-gates=Zeta=false,PodAndContainerStatsFromCRI=true"));
        json_t *doc = NULL, *kc = inner(&c, &doc);
        assert_str(kc, "resolvConf", "");
        /* featureGates: booleans, keys sorted */
        assert_bool(kc, "featureGates.PodAndContainerStatsFromCRI", true);
        assert_bool(kc, "featureGates.Zeta", false);
        assert_string_equal(json_object_iter_key(json_object_iter(at(kc, "featureGates"))),
                            "PodAndContainerStatsFromCRI");
        assert_bool(kc, "enableServer", false);
        assert_bool(kc, "registerNode", false);
        assert_bool(kc, "serializeImagePulls", false);
        json_decref(doc);
        assert_round_trip(&c, "rt-zero.json");
        kubelet_config_release(&c);
}

/* Durations as Go's time.Duration.String() prints them, from what a file
 * says. */
static void test_durations_as_go_prints_them(void **state)
{
        (void)state;
        static const struct {
                const char *in, *want;
        } cases[] = {
            {"60s", "1m0s"},      {"90s", "1m30s"},       {"4h", "4h0m0s"},
            {"2h45m", "2h45m0s"}, {"1.5s", "1.5s"},       {"500ms", "500ms"},
            {"1500ms", "1.5s"},   {"3m0.25s", "3m0.25s"}, {"25h1s", "25h0m1s"},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char *yaml = NULL;
                assert_true(asprintf(&yaml,
                                     "apiVersion: kubelet.config.k8s.io/v1beta1\n"
                                     "kind: KubeletConfiguration\n"
                                     "syncFrequency: %s\n",
                                     cases[i].in) > 0);
                struct kubelet_config c;
                ck_error_t err = NULL;
                kubelet_config_defaults(&c);
                if (kubelet_config_load_buffer(&c, "d.yaml", yaml, strlen(yaml), &err) < 0)
                        fail_msg("%s: %s", cases[i].in, ck_error_msg(err));
                json_t *doc = NULL, *kc = inner(&c, &doc);
                assert_str(kc, "syncFrequency", cases[i].want);
                json_decref(doc);
                kubelet_config_release(&c);
                free(yaml);
        }
}

/* imageServiceEndpoint: left out when ckubelet derived it from the runtime
 * endpoint (upstream leaves the field empty then), served when set apart. */
static void test_image_service_endpoint(void **state)
{
        (void)state;
        struct kubelet_config c;
        parse_ok(&c, ARGV("--container-runtime-endpoint=unix:///run/crio/crio.sock"));
        assert_string_equal(c.image_service_endpoint, "unix:///run/crio/crio.sock");
        json_t *doc = NULL, *kc = inner(&c, &doc);
        assert_str(kc, "containerRuntimeEndpoint", "unix:///run/crio/crio.sock");
        assert_absent(kc, "imageServiceEndpoint");
        json_decref(doc);
        kubelet_config_release(&c);

        parse_ok(&c, ARGV("--image-service-endpoint=unix:///run/images.sock"));
        kc = inner(&c, &doc);
        assert_str(kc, "containerRuntimeEndpoint", "unix:///run/containerd/containerd.sock");
        assert_str(kc, "imageServiceEndpoint", "unix:///run/images.sock");
        json_decref(doc);
        assert_round_trip(&c, "rt-image.json");
        kubelet_config_release(&c);
}

/* The self-signed pair: in --cert-dir when neither file is given (as
 * InitializeTLS sets them), the given files otherwise. */
static void test_tls_files(void **state)
{
        (void)state;
        struct kubelet_config c;
        parse_ok(&c, ARGV("--cert-dir=/srv/kubelet/pki/"));
        json_t *doc = NULL, *kc = inner(&c, &doc);
        assert_str(kc, "tlsCertFile", "/srv/kubelet/pki/kubelet.crt");
        assert_str(kc, "tlsPrivateKeyFile", "/srv/kubelet/pki/kubelet.key");
        json_decref(doc);
        assert_round_trip(&c, "rt-certdir.json");
        kubelet_config_release(&c);

        parse_ok(&c, ARGV("--cert-dir=/srv/kubelet/pki", "--tls-cert-file=/etc/tls/a.crt",
                          "--tls-private-key-file=/etc/tls/a.key"));
        kc = inner(&c, &doc);
        assert_str(kc, "tlsCertFile", "/etc/tls/a.crt");
        assert_str(kc, "tlsPrivateKeyFile", "/etc/tls/a.key");
        json_decref(doc);
        kubelet_config_release(&c);
}

/* encoding/json replaces each byte that does not start valid UTF-8 with
 * U+FFFD, in values and in map keys; jansson would refuse the string. */
static void test_invalid_utf8_is_replaced(void **state)
{
        (void)state;
        struct kubelet_config c;
        kubelet_config_defaults(&c);
        free(c.cluster_domain);
        c.cluster_domain = strdup("a\xff"
                                  "b\xe2\x82|\xed\xa0\x80|\xe2\x82\xac");
        c.system_reserved.items = calloc(1, sizeof(*c.system_reserved.items));
        c.system_reserved.items[0].key = strdup("k\xc0");
        c.system_reserved.items[0].value = strdup("v\xf5");
        c.system_reserved.n = 1;
        json_t *doc = NULL, *kc = inner(&c, &doc);
        assert_str(kc, "clusterDomain",
                   "a\xef\xbf\xbd"
                   "b\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd|\xe2\x82\xac");
        json_t *sr = json_object_get(kc, "systemReserved");
        assert_non_null(sr);
        assert_string_equal(json_string_value(json_object_get(sr, "k\xef\xbf\xbd")),
                            "v\xef\xbf\xbd");
        json_decref(doc);
        kubelet_config_release(&c);
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
        (void)sb;
        (void)flag;
        (void)ftw;
        return remove(path);
}

static int group_setup(void **state)
{
        (void)state;
        quiet_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
        log_set_fd(quiet_fd);
        return mkdtemp(tmpdir) ? 0 : -1;
}

static int group_teardown(void **state)
{
        (void)state;
        log_set_fd(2);
        close(quiet_fd);
        return nftw(tmpdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_defaults_document),
            cmocka_unit_test(test_file_and_flags),
            cmocka_unit_test(test_round_trip),
            cmocka_unit_test(test_durations_as_go_prints_them),
            cmocka_unit_test(test_image_service_endpoint),
            cmocka_unit_test(test_tls_files),
            cmocka_unit_test(test_invalid_utf8_is_replaced),
        };
        return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
