/* SPDX-License-Identifier: Apache-2.0 */
/* Flags and KubeletConfiguration (config/kubeletconfig.h): upstream defaults,
 * the file, flags over the file, pflag's syntax and messages, validation. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "config/kubeletconfig.h"
#include "config/kubeletconfig_internal.h"
#include "util/log.h"

#include <ctype.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/test_kubeletconfig.XXXXXX";
static int quiet_fd = 2; /* the deprecation warnings are expected: keep the output readable */

#define ARGV(...) ((char *[]){"kubelet", __VA_ARGS__, NULL})

static int argv_len(char **argv)
{
        int n = 0;
        while (argv[n])
                n++;
        return n;
}

/* Parses argv over fresh defaults; on failure returns the message (new
 * string) and leaves *cfg released. */
static char *parse(struct kubelet_config *cfg, char **argv, enum kubelet_flags_action *action)
{
        ck_error_t err = NULL;
        enum kubelet_flags_action a = FLAGS_RUN;
        kubelet_config_defaults(cfg);
        if (kubelet_flags_parse(cfg, argv_len(argv), argv, &a, &err) < 0) {
                char *msg = strdup(ck_error_msg(err));
                ck_error_release(&err);
                kubelet_config_release(cfg);
                return msg;
        }
        if (action)
                *action = a;
        return NULL;
}

static void parse_ok(struct kubelet_config *cfg, char **argv)
{
        char *msg = parse(cfg, argv, NULL);
        if (msg)
                fail_msg("unexpected error: %s", msg);
}

static void assert_parse_error(char **argv, const char *want)
{
        struct kubelet_config cfg;
        char *msg = parse(&cfg, argv, NULL);
        if (msg == NULL) {
                kubelet_config_release(&cfg);
                fail_msg("expected error \"%s\"", want);
        }
        assert_string_equal(msg, want);
        free(msg);
}

/* Writes a file into the test directory; returns its path (new string). */
static char *write_file(const char *name, const char *content)
{
        char *path = NULL;
        assert_true(asprintf(&path, "%s/%s", tmpdir, name) > 0);
        FILE *f = fopen(path, "we");
        assert_non_null(f);
        fputs(content, f);
        fclose(f);
        return path;
}

static const char *label(const struct kv_list *l, const char *key)
{
        for (size_t i = 0; i < l->n; i++) {
                if (strcmp(l->items[i].key, key) == 0)
                        return l->items[i].value;
        }
        return NULL;
}

static size_t strv_len(char **v)
{
        size_t n = 0;
        while (v && v[n])
                n++;
        return n;
}

/* ---- defaults ---- */

static void test_defaults_are_upstream(void **state)
{
        (void)state;
        struct kubelet_config c;
        kubelet_config_defaults(&c);
        assert_string_equal(c.container_runtime_endpoint, "unix:///run/containerd/containerd.sock");
        assert_string_equal(c.root_dir, "/var/lib/kubelet");
        assert_string_equal(c.address, "0.0.0.0");
        assert_int_equal(c.port, 10250);
        assert_int_equal(c.read_only_port, 0);
        assert_int_equal(c.healthz_port, 10248);
        assert_string_equal(c.healthz_bind_address, "127.0.0.1");
        assert_true(c.enable_debugging_handlers);
        assert_true(c.enable_debug_flags_handler);
        assert_int_equal(c.file_check_frequency_ms, 20000);
        assert_int_equal(c.http_check_frequency_ms, 20000);
        assert_int_equal(c.sync_frequency_ms, 60000);
        assert_int_equal(c.runtime_request_timeout_ms, 120000);
        assert_int_equal(c.max_pods, 110);
        assert_string_equal(c.resolv_conf, "/etc/resolv.conf");
        assert_string_equal(c.cgroup_root, "");
        assert_true(c.cgroups_per_qos);
        assert_string_equal(c.cgroup_driver, "cgroupfs");
        assert_string_equal(c.pod_logs_dir, "/var/log/pods");
        assert_true(c.serialize_image_pulls);
        assert_int_equal(c.kube_api_qps, 50);
        assert_int_equal(c.kube_api_burst, 100);
        assert_int_equal(c.node_status_update_frequency_ms, 10000);
        assert_int_equal(c.node_status_report_frequency_ms, 300000);
        assert_int_equal(c.node_lease_duration_seconds, 40);
        assert_true(c.register_node);
        assert_true(c.fail_swap_on);
        assert_string_equal(c.cluster_domain, "");
        assert_null(c.cluster_dns);
        assert_null(c.static_pod_path);
        assert_null(c.kubeconfig);
        assert_int_equal(c.node_labels.n, 0);
        assert_int_equal(c.system_reserved.n, 0);
        kubelet_config_release(&c);
}

static void test_no_flags_derives_node_name_and_image_endpoint(void **state)
{
        (void)state;
        struct kubelet_config c;
        enum kubelet_flags_action action = FLAGS_HELP;
        char *argv[] = {"kubelet", NULL};
        assert_null(parse(&c, argv, &action));
        assert_int_equal(action, FLAGS_RUN);
        char host[HOST_NAME_MAX + 1];
        assert_int_equal(gethostname(host, sizeof(host)), 0);
        for (char *p = host; *p; p++)
                *p = (char)tolower((unsigned char)*p);
        assert_string_equal(c.node_name, host);
        assert_string_equal(c.image_service_endpoint, "unix:///run/containerd/containerd.sock");
        assert_int_equal(c.port, 10250);
        kubelet_config_release(&c);
}

/* ---- durations ---- */

static void test_duration_table(void **state)
{
        (void)state;
        static const struct {
                const char *in;
                int64_t ms;
        } ok[] = {
            {"1m30s", 90000}, {"500ms", 500},    {"2h", 7200000},   {"1h2m3.5s", 3723500},
            {"20s", 20000},   {"0", 0},          {"0s", 0},         {"-1.5s", -1500},
            {"+3s", 3000},    {".5s", 500},      {"1.s", 1000},     {"1500us", 1},
            {"2000000ns", 2}, {"1.5h", 5400000}, {"1\xc2\xb5s", 0}, {"10m0s", 600000},
        };
        for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
                ck_error_t err = NULL;
                int64_t ms = -42;
                if (config_parse_duration(ok[i].in, &ms, &err) < 0)
                        fail_msg("%s: %s", ok[i].in, ck_error_msg(err));
                assert_int_equal(ms, ok[i].ms);
        }
        static const struct {
                const char *in, *msg;
        } bad[] = {
            {"10x", "time: unknown unit \"x\" in duration \"10x\""},
            {"10", "time: missing unit in duration \"10\""},
            {"", "time: invalid duration \"\""},
            {"abc", "time: invalid duration \"abc\""},
            {".s", "time: invalid duration \".s\""},
            {"-", "time: invalid duration \"-\""},
            {"1s2", "time: missing unit in duration \"1s2\""},
            {"3000000h", "time: invalid duration \"3000000h\""},
            {"99999999999999999999s", "time: invalid duration \"99999999999999999999s\""},
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                ck_error_t err = NULL;
                int64_t ms = 0;
                assert_int_equal(config_parse_duration(bad[i].in, &ms, &err), -1);
                assert_string_equal(ck_error_msg(err), bad[i].msg);
                ck_error_release(&err);
        }
}

/* ---- flag syntax ---- */

static void test_flag_syntax_forms(void **state)
{
        (void)state;
        struct kubelet_config c;
        parse_ok(&c, ARGV("--root-dir=/a", "--max-pods", "7", "-v=4", "--register-node=false",
                          "--fail-swap-on", "--sync-frequency", "1m30s", "--port=0x2800",
                          "--cluster-domain=cluster.local"));
        assert_string_equal(c.root_dir, "/a");
        assert_int_equal(c.max_pods, 7);
        assert_int_equal(c.verbosity, 4);
        assert_false(c.register_node);
        assert_true(c.fail_swap_on);
        assert_int_equal(c.sync_frequency_ms, 90000);
        assert_int_equal(c.port, 10240);
        assert_string_equal(c.cluster_domain, "cluster.local");
        kubelet_config_release(&c);

        parse_ok(&c, ARGV("-v", "3"));
        assert_int_equal(c.verbosity, 3);
        kubelet_config_release(&c);
        parse_ok(&c, ARGV("-v5"));
        assert_int_equal(c.verbosity, 5);
        kubelet_config_release(&c);
        parse_ok(&c, ARGV("--v=2", "--fail-swap-on=false", "--cgroups-per-qos=F",
                          "--fail-cgroupv1=false"));
        assert_int_equal(c.verbosity, 2);
        assert_false(c.fail_swap_on);
        assert_false(c.fail_cgroup_v1);
        assert_false(c.cgroups_per_qos);
        kubelet_config_release(&c);
        /* '_' reads as '-' (upstream's WordSepNormalizeFunc); the last value wins */
        parse_ok(&c, ARGV("--root_dir", "/b", "--max-pods=1_000", "--max-pods=12"));
        assert_string_equal(c.root_dir, "/b");
        assert_int_equal(c.max_pods, 12);
        kubelet_config_release(&c);
        /* a relative root directory is taken from the working directory:
         * its paths become the runtime's mount sources */
        parse_ok(&c, ARGV("--root-dir=build/root"));
        char cwd[4096];
        assert_non_null(getcwd(cwd, sizeof(cwd)));
        char want[4200];
        snprintf(want, sizeof(want), "%s/build/root", cwd);
        assert_string_equal(c.root_dir, want);
        kubelet_config_release(&c);
        log_set_verbosity(0);
}

static void test_flag_error_messages(void **state)
{
        (void)state;
        assert_parse_error(ARGV("--foo"), "unknown flag: --foo");
        assert_parse_error(ARGV("--foo=1"), "unknown flag: --foo");
        assert_parse_error(ARGV("-x"), "unknown shorthand flag: 'x' in -x");
        assert_parse_error(ARGV("--root-dir"), "flag needs an argument: --root-dir");
        assert_parse_error(ARGV("-v"), "flag needs an argument: 'v' in -v");
        assert_parse_error(ARGV("--max-pods=abc"),
                           "invalid argument \"abc\" for \"--max-pods\" flag: strconv.ParseInt: "
                           "parsing \"abc\": invalid syntax");
        assert_parse_error(ARGV("--max-pods", "99999999999"),
                           "invalid argument \"99999999999\" for \"--max-pods\" flag: "
                           "strconv.ParseInt: parsing \"99999999999\": value out of range");
        assert_parse_error(ARGV("--max-pods=1__0"),
                           "invalid argument \"1__0\" for \"--max-pods\" flag: strconv.ParseInt: "
                           "parsing \"1__0\": invalid syntax");
        assert_parse_error(ARGV("--fail-swap-on=maybe"),
                           "invalid argument \"maybe\" for \"--fail-swap-on\" flag: "
                           "strconv.ParseBool: parsing \"maybe\": invalid syntax");
        assert_parse_error(ARGV("--sync-frequency=10x"),
                           "invalid argument \"10x\" for \"--sync-frequency\" flag: time: unknown "
                           "unit \"x\" in duration \"10x\"");
        assert_parse_error(ARGV("-v=x"), "invalid argument \"x\" for \"-v, --v\" flag: "
                                         "strconv.ParseUint: parsing \"x\": invalid syntax");
        assert_parse_error(ARGV("--address=1.2.3"),
                           "invalid argument \"1.2.3\" for \"--address\" flag: \"1.2.3\" is not a "
                           "valid IP address");
        assert_parse_error(ARGV("--system-reserved=cpu"),
                           "invalid argument \"cpu\" for \"--system-reserved\" flag: malformed "
                           "pair, expect string=string");
        assert_parse_error(ARGV("---x"), "bad flag syntax: ---x");
        assert_parse_error(ARGV("foo"), "unknown command foo");
        /* a bool never takes the next argument: "false" is left over */
        assert_parse_error(ARGV("--fail-swap-on", "false"), "unknown command false");
        assert_parse_error(ARGV("--", "--port=1"), "unknown command --port=1");
        log_set_verbosity(0);
}

static void test_help_and_version(void **state)
{
        (void)state;
        struct kubelet_config c;
        enum kubelet_flags_action action = FLAGS_RUN;
        assert_null(parse(&c, ARGV("--help"), &action));
        assert_int_equal(action, FLAGS_HELP);
        kubelet_config_release(&c);
        assert_null(parse(&c, ARGV("-h"), &action));
        assert_int_equal(action, FLAGS_HELP);
        kubelet_config_release(&c);
        assert_null(parse(&c, ARGV("--version"), &action));
        assert_int_equal(action, FLAGS_VERSION);
        kubelet_config_release(&c);
        assert_null(parse(&c, ARGV("--version=raw"), &action));
        assert_int_equal(action, FLAGS_VERSION);
        kubelet_config_release(&c);
        assert_null(parse(&c, ARGV("--version=false"), &action));
        assert_int_equal(action, FLAGS_RUN);
        kubelet_config_release(&c);
        /* a bad flag is an error even with --help, as pflag parses first */
        assert_parse_error(ARGV("--help", "--nope"), "unknown flag: --nope");
}

static void test_unimplemented_upstream_flags_are_accepted(void **state)
{
        (void)state;
        struct kubelet_config c;
        /* bool flags do not take the next argument, value flags do */
        parse_ok(&c, ARGV("--rotate-server-certificates=false", "--volume-plugin-dir", "/v",
                          "--rotate-certificates", "--eviction-hard", "memory.available<100Mi",
                          "--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf",
                          "--max-pods=5"));
        assert_int_equal(c.max_pods, 5);
        kubelet_config_release(&c);
        /* their values are still checked as pflag would */
        assert_parse_error(ARGV("--image-gc-high-threshold=x"),
                           "invalid argument \"x\" for \"--image-gc-high-threshold\" flag: "
                           "strconv.ParseInt: parsing \"x\": invalid syntax");
        assert_parse_error(ARGV("--volume-plugin-dir"),
                           "flag needs an argument: --volume-plugin-dir");
}

/* nodeStatusMaxImages: 50 by default, a pointer upstream (an explicit 0
 * stays), the flag over the file, -1 or greater. */
static void test_node_status_max_images(void **state)
{
        (void)state;
        struct kubelet_config c;
        kubelet_config_defaults(&c);
        assert_int_equal(c.node_status_max_images, 50);
        kubelet_config_release(&c);
        char *path =
            write_file("images.yaml",
                       "apiVersion: kubelet.config.k8s.io/v1beta1\n"
                       "kind: KubeletConfiguration\n"
                       "authentication: {webhook: {enabled: false}, anonymous: {enabled: true}}\n"
                       "authorization: {mode: AlwaysAllow}\n"
                       "nodeStatusMaxImages: 0\n");
        char *flag = NULL;
        assert_true(asprintf(&flag, "--config=%s", path) > 0);
        parse_ok(&c, ARGV(flag));
        assert_int_equal(c.node_status_max_images, 0);
        kubelet_config_release(&c);
        parse_ok(&c, ARGV(flag, "--node-status-max-images=-1"));
        assert_int_equal(c.node_status_max_images, -1);
        kubelet_config_release(&c);
        assert_parse_error(ARGV("--node-status-max-images=-2"),
                           "failed to validate kubelet configuration: invalid configuration: "
                           "nodeStatusMaxImages (--node-status-max-images) -2 must be -1 or "
                           "greater");
        free(flag);
        free(path);
}

/* The image garbage collection policy: upstream's defaults (85, 80, 2m,
 * 0), the thresholds pointers (an explicit 0 stays), imageMinimumGCAge 0
 * defaulted, the flags over the file, upstream's validation messages. */
static void test_image_gc_policy(void **state)
{
        (void)state;
        struct kubelet_config c;
        kubelet_config_defaults(&c);
        assert_int_equal(c.image_gc_high_threshold_percent, 85);
        assert_int_equal(c.image_gc_low_threshold_percent, 80);
        assert_int_equal(c.image_minimum_gc_age_ms, 120000);
        assert_int_equal(c.image_maximum_gc_age_ms, 0);
        kubelet_config_release(&c);
        char *path =
            write_file("imagegc.yaml",
                       "apiVersion: kubelet.config.k8s.io/v1beta1\n"
                       "kind: KubeletConfiguration\n"
                       "authentication: {webhook: {enabled: false}, anonymous: {enabled: true}}\n"
                       "authorization: {mode: AlwaysAllow}\n"
                       "imageGCHighThresholdPercent: 50\n"
                       "imageGCLowThresholdPercent: 0\n"
                       "imageMinimumGCAge: 0s\n"
                       "imageMaximumGCAge: 1h\n");
        char *flag = NULL;
        assert_true(asprintf(&flag, "--config=%s", path) > 0);
        parse_ok(&c, ARGV(flag));
        assert_int_equal(c.image_gc_high_threshold_percent, 50);
        assert_int_equal(c.image_gc_low_threshold_percent, 0);
        assert_int_equal(c.image_minimum_gc_age_ms, 120000);
        assert_int_equal(c.image_maximum_gc_age_ms, 3600000);
        kubelet_config_release(&c);
        parse_ok(&c, ARGV(flag, "--image-gc-high-threshold=100", "--image-gc-low-threshold=90",
                          "--minimum-image-ttl-duration=30s"));
        assert_int_equal(c.image_gc_high_threshold_percent, 100);
        assert_int_equal(c.image_gc_low_threshold_percent, 90);
        assert_int_equal(c.image_minimum_gc_age_ms, 30000);
        kubelet_config_release(&c);
        assert_parse_error(ARGV("--image-gc-high-threshold=101"),
                           "failed to validate kubelet configuration: invalid configuration: "
                           "imageGCHighThresholdPercent (--image-gc-high-threshold) 101 must be "
                           "between 0 and 100, inclusive");
        assert_parse_error(ARGV("--image-gc-low-threshold=85"),
                           "failed to validate kubelet configuration: invalid configuration: "
                           "imageGCLowThresholdPercent (--image-gc-low-threshold) 85 must be less "
                           "than imageGCHighThresholdPercent (--image-gc-high-threshold) 85");
        assert_parse_error(ARGV(flag, "--minimum-image-ttl-duration=2h"),
                           "failed to validate kubelet configuration: invalid configuration: "
                           "imageMaximumGCAge 1h0m0s must be greater than imageMinimumGCAge "
                           "2h0m0s");
        free(flag);
        free(path);
}

static void test_node_labels(void **state)
{
        (void)state;
        struct kubelet_config c;
        parse_ok(&c, ARGV("--node-labels=a=1, b = 2 ,,c", "--node-labels", "d=4,a=5",
                          "--node-labels=node.kubernetes.io/pool=x,kubernetes.io/os=linux"));
        assert_int_equal(c.node_labels.n, 6);
        assert_string_equal(label(&c.node_labels, "a"), "5");
        assert_string_equal(label(&c.node_labels, "b"), "2");
        assert_string_equal(label(&c.node_labels, "c"), "");
        assert_string_equal(label(&c.node_labels, "d"), "4");
        assert_string_equal(label(&c.node_labels, "node.kubernetes.io/pool"), "x");
        kubelet_config_release(&c);

        assert_parse_error(
            ARGV("--node-labels=node-role.kubernetes.io/worker="),
            "failed to validate kubelet flags: unknown 'kubernetes.io' or 'k8s.io' labels "
            "specified with --node-labels: [node-role.kubernetes.io/worker]\n--node-labels in "
            "the 'kubernetes.io' namespace must begin with an allowed prefix "
            "(kubelet.kubernetes.io, node.kubernetes.io) or be in the specifically allowed set "
            "(beta.kubernetes.io/arch, beta.kubernetes.io/instance-type, beta.kubernetes.io/os, "
            "failure-domain.beta.kubernetes.io/region, failure-domain.beta.kubernetes.io/zone, "
            "kubernetes.io/arch, kubernetes.io/hostname, kubernetes.io/os, "
            "node.kubernetes.io/instance-type, topology.kubernetes.io/region, "
            "topology.kubernetes.io/zone)");
        assert_parse_error(
            ARGV("--node-labels=-bad=ok"),
            "failed to validate kubelet flags: invalid node labels: '-bad' - name part must "
            "consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
            "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
            "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
        assert_parse_error(
            ARGV("--node-labels=ok=bad value"),
            "failed to validate kubelet flags: invalid node labels: 'bad value' - a valid "
            "label must be an empty string or consist of alphanumeric characters, '-', '_' or "
            "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
            "'my_value',  or '12345', regex used for validation is "
            "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
}

static void test_repeated_cluster_dns_appends(void **state)
{
        (void)state;
        struct kubelet_config c;
        parse_ok(&c, ARGV("--cluster-dns=10.96.0.10,10.96.0.11", "--cluster-dns", "fd00::a"));
        assert_int_equal(strv_len(c.cluster_dns), 3);
        assert_string_equal(c.cluster_dns[0], "10.96.0.10");
        assert_string_equal(c.cluster_dns[1], "10.96.0.11");
        assert_string_equal(c.cluster_dns[2], "fd00::a");
        kubelet_config_release(&c);
}

static void test_reserved_maps(void **state)
{
        (void)state;
        struct kubelet_config c;
        parse_ok(&c, ARGV("--system-reserved=cpu=100m, memory=1Gi", "--system-reserved=pid=1000",
                          "--kube-reserved", "ephemeral-storage=1Gi"));
        assert_int_equal(c.system_reserved.n, 3);
        assert_string_equal(label(&c.system_reserved, "cpu"), "100m");
        assert_string_equal(label(&c.system_reserved, "memory"), "1Gi");
        assert_string_equal(label(&c.system_reserved, "pid"), "1000");
        assert_string_equal(label(&c.kube_reserved, "ephemeral-storage"), "1Gi");
        kubelet_config_release(&c);
        assert_parse_error(ARGV("--kube-reserved=gpu=1"),
                           "failed to validate kubelet configuration: invalid configuration: "
                           "kubeReserved (--kube-reserved): cannot reserve \"gpu\" resource");
}

static void test_hostname_override_is_trimmed_and_lowercased(void **state)
{
        (void)state;
        struct kubelet_config c;
        parse_ok(&c, ARGV("--hostname-override", " Node-A.Example.COM "));
        assert_string_equal(c.node_name, "node-a.example.com");
        assert_string_equal(c.hostname_override, " Node-A.Example.COM ");
        kubelet_config_release(&c);
}

/* The healthz server and the debugging handlers (upstream's
 * AddKubeletConfigFlags; enableDebugFlagsHandler has no flag). */
static void test_healthz_and_debugging_flags(void **state)
{
        (void)state;
        struct kubelet_config c;
        parse_ok(&c, ARGV("--healthz-port", "12345", "--healthz-bind-address=0.0.0.0",
                          "--enable-debugging-handlers=false"));
        assert_int_equal(c.healthz_port, 12345);
        assert_string_equal(c.healthz_bind_address, "0.0.0.0");
        assert_false(c.enable_debugging_handlers);
        assert_true(c.enable_debug_flags_handler);
        kubelet_config_release(&c);
        /* 0 turns the healthz server off; a bool flag alone is true */
        parse_ok(&c, ARGV("--healthz-port=0", "--healthz-bind-address=::1",
                          "--enable-debugging-handlers"));
        assert_int_equal(c.healthz_port, 0);
        assert_string_equal(c.healthz_bind_address, "::1");
        assert_true(c.enable_debugging_handlers);
        kubelet_config_release(&c);
        assert_parse_error(ARGV("--healthz-port=x"),
                           "invalid argument \"x\" for \"--healthz-port\" flag: strconv.ParseInt: "
                           "parsing \"x\": invalid syntax");
        assert_parse_error(ARGV("--healthz-bind-address=localhost"),
                           "invalid argument \"localhost\" for \"--healthz-bind-address\" flag: "
                           "\"localhost\" is not a valid IP address");
        assert_parse_error(ARGV("--enable-debugging-handlers=maybe"),
                           "invalid argument \"maybe\" for \"--enable-debugging-handlers\" flag: "
                           "strconv.ParseBool: parsing \"maybe\": invalid syntax");
        assert_parse_error(ARGV("--enable-debug-flags-handler=false"),
                           "unknown flag: --enable-debug-flags-handler");
}

static void test_validation(void **state)
{
        (void)state;
        assert_parse_error(ARGV("--port=70000"),
                           "failed to validate kubelet configuration: invalid configuration: port "
                           "(--port) 70000 must be between 1 and 65535, inclusive");
        assert_parse_error(ARGV("--max-pods=-1", "--read-only-port=-2"),
                           "failed to validate kubelet configuration: [invalid configuration: "
                           "maxPods (--max-pods) -1 must not be a negative number, invalid "
                           "configuration: readOnlyPort (--read-only-port) -2 must be between 0 "
                           "and 65535, inclusive]");
        assert_parse_error(ARGV("--healthz-port=70000"),
                           "failed to validate kubelet configuration: invalid configuration: "
                           "healthzPort (--healthz-port) 70000 must be between 1 and 65535, "
                           "inclusive");
        assert_parse_error(ARGV("--healthz-port=-1"),
                           "failed to validate kubelet configuration: invalid configuration: "
                           "healthzPort (--healthz-port) -1 must be between 1 and 65535, "
                           "inclusive");
        assert_parse_error(ARGV("--kube-api-qps=-1"),
                           "failed to validate kubelet configuration: invalid configuration: "
                           "kubeAPIQPS (--kube-api-qps) -1 must not be a negative number");
        assert_parse_error(ARGV("--cgroup-driver=foo"),
                           "failed to validate kubelet configuration: invalid configuration: "
                           "cgroupDriver (--cgroup-driver) \"foo\" must be one of: \"cgroupfs\", "
                           "\"systemd\"");
        assert_parse_error(ARGV("--sync-frequency=0s"),
                           "failed to validate kubelet configuration: invalid configuration: "
                           "syncFrequency (--sync-frequency) 0s must be greater than 0");
        assert_parse_error(ARGV("--container-runtime-endpoint="),
                           "failed to validate kubelet configuration: invalid configuration: the "
                           "containerRuntimeEndpoint was not specified or empty");
        struct kubelet_config c;
        parse_ok(&c, ARGV("--cgroup-driver=systemd", "--read-only-port=10255", "--max-pods=0"));
        assert_string_equal(c.cgroup_driver, "systemd");
        assert_int_equal(c.read_only_port, 10255);
        assert_int_equal(c.max_pods, 0);
        kubelet_config_release(&c);
        parse_ok(&c, ARGV("--healthz-port=65535"));
        assert_int_equal(c.healthz_port, 65535);
        kubelet_config_release(&c);
}

/* ---- the file ---- */

static const char full_yaml[] = "apiVersion: kubelet.config.k8s.io/v1beta1\n"
                                "kind: KubeletConfiguration\n"
                                "staticPodPath: manifests\n"
                                "podLogsDir: logs/./pods\n"
                                "syncFrequency: 30s\n"
                                "fileCheckFrequency: 1m30s\n"
                                "httpCheckFrequency: 500ms\n"
                                "staticPodURL: http://127.0.0.1:8080/pods\n"
                                "address: 127.0.0.1\n"
                                "port: 11250\n"
                                "readOnlyPort: 10255\n"
                                "healthzPort: 12248\n"
                                "healthzBindAddress: 0.0.0.0\n"
                                "enableDebuggingHandlers: false\n"
                                "enableDebugFlagsHandler: false\n"
                                "clusterDomain: cluster.local\n"
                                "clusterDNS:\n"
                                "- 10.96.0.10\n"
                                "- 10.96.0.11\n"
                                "nodeStatusUpdateFrequency: 4s\n"
                                "nodeLeaseDurationSeconds: 20\n"
                                "cgroupRoot: /kubepods-root\n"
                                "cgroupsPerQOS: false\n"
                                "cgroupDriver: systemd\n"
                                "runtimeRequestTimeout: 10m\n"
                                "maxPods: 42\n"
                                "resolvConf: ''\n"
                                "kubeAPIQPS: 0\n"
                                "kubeAPIBurst: 7\n"
                                "serializeImagePulls: false\n"
                                "failSwapOn: false\n"
                                "systemReserved:\n"
                                "  cpu: 100m\n"
                                "  pid: '1000'\n"
                                "kubeReserved: {memory: 1Gi}\n"
                                "registerNode: false\n"
                                "containerRuntimeEndpoint: unix:///run/crio/crio.sock\n"
                                "logging:\n"
                                "  verbosity: 2\n";

static void test_file_sets_fields(void **state)
{
        (void)state;
        char *path = write_file("full.yaml", full_yaml);
        struct kubelet_config c;
        ck_error_t err = NULL;
        kubelet_config_defaults(&c);
        if (kubelet_config_load_file(&c, path, &err) < 0)
                fail_msg("%s", ck_error_msg(err));
        char *want = NULL;
        assert_true(asprintf(&want, "%s/manifests", tmpdir) > 0);
        assert_string_equal(c.static_pod_path, want);
        free(want);
        assert_true(asprintf(&want, "%s/logs/pods", tmpdir) > 0);
        assert_string_equal(c.pod_logs_dir, want);
        assert_int_equal(c.sync_frequency_ms, 30000);
        assert_int_equal(c.file_check_frequency_ms, 90000);
        assert_int_equal(c.http_check_frequency_ms, 500);
        assert_string_equal(c.static_pod_url, "http://127.0.0.1:8080/pods");
        assert_string_equal(c.address, "127.0.0.1");
        assert_int_equal(c.port, 11250);
        assert_int_equal(c.read_only_port, 10255);
        assert_int_equal(c.healthz_port, 12248);
        assert_string_equal(c.healthz_bind_address, "0.0.0.0");
        assert_false(c.enable_debugging_handlers);
        assert_false(c.enable_debug_flags_handler);
        assert_string_equal(c.cluster_domain, "cluster.local");
        assert_int_equal(strv_len(c.cluster_dns), 2);
        assert_string_equal(c.cluster_dns[1], "10.96.0.11");
        assert_int_equal(c.node_status_update_frequency_ms, 4000);
        /* upstream: the report frequency follows an explicit update frequency */
        assert_int_equal(c.node_status_report_frequency_ms, 4000);
        assert_int_equal(c.node_lease_duration_seconds, 20);
        assert_string_equal(c.cgroup_root, "/kubepods-root");
        assert_false(c.cgroups_per_qos);
        assert_string_equal(c.cgroup_driver, "systemd");
        assert_int_equal(c.runtime_request_timeout_ms, 600000);
        assert_int_equal(c.max_pods, 42);
        assert_string_equal(c.resolv_conf, ""); /* a *string upstream: "" is kept */
        assert_int_equal(c.kube_api_qps, 0);    /* a *int32 upstream: 0 is kept */
        assert_int_equal(c.kube_api_burst, 7);
        assert_false(c.serialize_image_pulls);
        assert_false(c.fail_swap_on);
        assert_string_equal(label(&c.system_reserved, "cpu"), "100m");
        assert_string_equal(label(&c.system_reserved, "pid"), "1000");
        assert_string_equal(label(&c.kube_reserved, "memory"), "1Gi");
        assert_false(c.register_node);
        assert_string_equal(c.container_runtime_endpoint, "unix:///run/crio/crio.sock");
        assert_int_equal(c.verbosity, 2);
        free(want);
        free(path);
        kubelet_config_release(&c);
}

static void test_json_file(void **state)
{
        (void)state;
        char *path = write_file("c.json", "{\"kind\": \"KubeletConfiguration\", \"apiVersion\": "
                                          "\"kubelet.config.k8s.io/v1beta1\", \"maxPods\": 9, "
                                          "\"clusterDNS\": [\"1.1.1.1\"], \"staticPodPath\": "
                                          "\"/etc/kubernetes/manifests\"}");
        struct kubelet_config c;
        ck_error_t err = NULL;
        kubelet_config_defaults(&c);
        if (kubelet_config_load_file(&c, path, &err) < 0)
                fail_msg("%s", ck_error_msg(err));
        assert_int_equal(c.max_pods, 9);
        assert_string_equal(c.cluster_dns[0], "1.1.1.1");
        assert_string_equal(c.static_pod_path, "/etc/kubernetes/manifests");
        free(path);
        kubelet_config_release(&c);
}

static void test_flags_override_file(void **state)
{
        (void)state;
        char *path = write_file("over.yaml", "apiVersion: kubelet.config.k8s.io/v1beta1\n"
                                             "kind: KubeletConfiguration\n"
                                             "maxPods: 42\n"
                                             "port: 11250\n"
                                             "clusterDNS: [10.0.0.1, 10.0.0.2]\n"
                                             "systemReserved: {cpu: 1, memory: 1Gi}\n"
                                             "syncFrequency: 30s\n");
        /* cpu: 1 is an integer: upstream rejects it in a map of strings */
        struct kubelet_config c;
        char *cfgflag = NULL;
        assert_true(asprintf(&cfgflag, "--config=%s", path) > 0);
        char *msg = parse(&c, ARGV("--max-pods=7", cfgflag), NULL);
        assert_non_null(msg);
        assert_true(strstr(msg, "systemReserved.cpu: expected a string") != NULL);
        free(msg);

        free(path);
        path = write_file("over.yaml", "apiVersion: kubelet.config.k8s.io/v1beta1\n"
                                       "kind: KubeletConfiguration\n"
                                       "maxPods: 42\n"
                                       "port: 11250\n"
                                       "clusterDNS: [10.0.0.1, 10.0.0.2]\n"
                                       "systemReserved: {cpu: '1', memory: 1Gi}\n"
                                       "syncFrequency: 30s\n");
        /* the flags come before and after --config: order does not matter;
         * a file's webhook defaults need a kubeconfig: flags turn them off */
        msg = parse(&c, ARGV(cfgflag), NULL);
        assert_non_null(msg);
        assert_non_null(strstr(msg, "no client provided, cannot use webhook authorization"));
        assert_non_null(strstr(msg, "no client provided, cannot use webhook authentication"));
        free(msg);
        parse_ok(&c, ARGV("--max-pods=7", cfgflag, "--cluster-dns=10.9.9.9",
                          "--system-reserved=memory=2Gi", "--hostname-override=Box",
                          "--authorization-mode=AlwaysAllow",
                          "--authentication-token-webhook=false", "--client-ca-file=/ca.pem"));
        assert_string_equal(c.authorization_mode, "AlwaysAllow");
        assert_false(c.authn_webhook);
        assert_false(c.anonymous_auth);  /* the file's default, not the command line's */
        assert_int_equal(c.max_pods, 7); /* flag */
        assert_int_equal(c.port, 11250); /* file */
        assert_int_equal(c.sync_frequency_ms, 30000); /* file */
        assert_int_equal(strv_len(c.cluster_dns), 1); /* the flag replaced the file's list */
        assert_string_equal(c.cluster_dns[0], "10.9.9.9");
        assert_int_equal(c.system_reserved.n, 1); /* and its map */
        assert_string_equal(label(&c.system_reserved, "memory"), "2Gi");
        assert_string_equal(c.config_file, path);
        assert_string_equal(c.node_name, "box");
        kubelet_config_release(&c);
        free(cfgflag);
        free(path);
}

/* featureGates / --feature-gates (cliflag.MapStringBool): the flag's gates
 * win over the file's one by one; a gate not named keeps its default. */
static void test_feature_gates(void **state)
{
        (void)state;
        struct kubelet_config c;
        parse_ok(&c, ARGV("--fail-swap-on=false"));
        assert_false(kubelet_config_feature_enabled(&c, "PodAndContainerStatsFromCRI", false));
        assert_true(kubelet_config_feature_enabled(&c, "PodAndContainerStatsFromCRI", true));
        kubelet_config_release(&c);

        char *path =
            write_file("gates.yaml",
                       "apiVersion: kubelet.config.k8s.io/v1beta1\n"
                       "kind: KubeletConfiguration\n"
                       "authentication: {webhook: {enabled: false}, anonymous: {enabled: true}}\n"
                       "authorization: {mode: AlwaysAllow}\n"
                       "featureGates:\n"
                       "  PodAndContainerStatsFromCRI: true\n"
                       "  Foo: false\n");
        char *cfgflag = NULL;
        assert_true(asprintf(&cfgflag, "--config=%s", path) > 0);
        parse_ok(&c, ARGV(cfgflag));
        assert_true(kubelet_config_feature_enabled(&c, "PodAndContainerStatsFromCRI", false));
        assert_false(kubelet_config_feature_enabled(&c, "Foo", true));
        kubelet_config_release(&c);
        /* the flag's value wins for its gate, the file's other gates stay */
        parse_ok(&c, ARGV(cfgflag, "--feature-gates=PodAndContainerStatsFromCRI=False, Bar=1",
                          "--feature-gates=Baz=t"));
        assert_false(kubelet_config_feature_enabled(&c, "PodAndContainerStatsFromCRI", true));
        assert_false(kubelet_config_feature_enabled(&c, "Foo", true));
        assert_true(kubelet_config_feature_enabled(&c, "Bar", false));
        assert_true(kubelet_config_feature_enabled(&c, "Baz", false));
        assert_int_equal(c.feature_gates.n, 4);
        kubelet_config_release(&c);
        free(cfgflag);
        free(path);

        assert_parse_error(ARGV("--feature-gates=PodAndContainerStatsFromCRI=yes"),
                           "invalid argument \"PodAndContainerStatsFromCRI=yes\" for "
                           "\"--feature-gates\" flag: invalid value of "
                           "PodAndContainerStatsFromCRI: yes, err: strconv.ParseBool: parsing "
                           "\"yes\": invalid syntax");
        assert_parse_error(ARGV("--feature-gates=Foo"),
                           "invalid argument \"Foo\" for \"--feature-gates\" flag: malformed "
                           "pair, expect string=bool");
}

static void test_zero_values_in_file_mean_default(void **state)
{
        (void)state;
        /* what kubeadm writes: explicit zero values that upstream defaults */
        char *path = write_file("kubeadm.yaml", "apiVersion: kubelet.config.k8s.io/v1beta1\n"
                                                "authentication:\n"
                                                "  anonymous:\n"
                                                "    enabled: false\n"
                                                "  webhook:\n"
                                                "    cacheTTL: 0s\n"
                                                "    enabled: true\n"
                                                "  x509:\n"
                                                "    clientCAFile: /etc/kubernetes/pki/ca.crt\n"
                                                "authorization:\n"
                                                "  mode: Webhook\n"
                                                "  webhook:\n"
                                                "    cacheAuthorizedTTL: 0s\n"
                                                "    cacheUnauthorizedTTL: 0s\n"
                                                "cgroupDriver: systemd\n"
                                                "clusterDNS:\n"
                                                "- 10.96.0.10\n"
                                                "clusterDomain: cluster.local\n"
                                                "containerRuntimeEndpoint: \"\"\n"
                                                "cpuManagerReconcilePeriod: 0s\n"
                                                "evictionPressureTransitionPeriod: 0s\n"
                                                "fileCheckFrequency: 0s\n"
                                                "healthzBindAddress: 127.0.0.1\n"
                                                "healthzPort: 10248\n"
                                                "httpCheckFrequency: 0s\n"
                                                "imageMaximumGCAge: 0s\n"
                                                "imageMinimumGCAge: 0s\n"
                                                "kind: KubeletConfiguration\n"
                                                "logging:\n"
                                                "  flushFrequency: 0\n"
                                                "  options:\n"
                                                "    json:\n"
                                                "      infoBufferSize: \"0\"\n"
                                                "  verbosity: 0\n"
                                                "memorySwap: {}\n"
                                                "nodeStatusReportFrequency: 0s\n"
                                                "nodeStatusUpdateFrequency: 0s\n"
                                                "port: 0\n"
                                                "rotateCertificates: true\n"
                                                "runtimeRequestTimeout: 0s\n"
                                                "shutdownGracePeriod: 0s\n"
                                                "shutdownGracePeriodCriticalPods: 0s\n"
                                                "staticPodPath: /etc/kubernetes/manifests\n"
                                                "streamingConnectionIdleTimeout: 0s\n"
                                                "syncFrequency: 0s\n"
                                                "volumeStatsAggPeriod: 0s\n"
                                                "evictionHard:\n"
                                                "  memory.available: 100Mi\n");
        struct kubelet_config c;
        ck_error_t err = NULL;
        kubelet_config_defaults(&c);
        if (kubelet_config_load_file(&c, path, &err) < 0)
                fail_msg("%s", ck_error_msg(err));
        assert_int_equal(c.port, 10250);
        assert_int_equal(c.sync_frequency_ms, 60000);
        assert_int_equal(c.file_check_frequency_ms, 20000);
        assert_int_equal(c.http_check_frequency_ms, 20000);
        assert_int_equal(c.runtime_request_timeout_ms, 120000);
        assert_int_equal(c.node_status_update_frequency_ms, 10000);
        assert_int_equal(c.node_status_report_frequency_ms, 300000);
        assert_string_equal(c.container_runtime_endpoint, "unix:///run/containerd/containerd.sock");
        assert_string_equal(c.cgroup_driver, "systemd");
        assert_string_equal(c.static_pod_path, "/etc/kubernetes/manifests");
        assert_int_equal(c.healthz_port, 10248);
        assert_string_equal(c.healthz_bind_address, "127.0.0.1");
        free(path);
        kubelet_config_release(&c);
}

/* Loads buf as "<tmpdir>/t.yaml" and returns the error message (new string)
 * or NULL. */
static char *load_error(const char *yaml)
{
        struct kubelet_config c;
        ck_error_t err = NULL;
        char *msg = NULL;
        kubelet_config_defaults(&c);
        if (kubelet_config_load_buffer(&c, "t.yaml", yaml, strlen(yaml), &err) < 0)
                msg = strdup(ck_error_msg(err));
        ck_error_release(&err);
        kubelet_config_release(&c);
        return msg;
}

#define HDR "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
/* what a standalone kubelet's file needs: v1beta1 defaults to webhooks */
#define STANDALONE_AUTH                                                                            \
        "authentication: {webhook: {enabled: false}, anonymous: {enabled: true}}\n"                \
        "authorization: {mode: AlwaysAllow}\n"

static void assert_load_error(const char *yaml, const char *want)
{
        char *msg = load_error(yaml);
        if (msg == NULL)
                fail_msg("expected error \"%s\"", want);
        assert_string_equal(msg, want);
        free(msg);
}

/* userNamespaces.idsPerPod: read, and checked with upstream's messages */
static void test_user_namespaces(void **state)
{
        (void)state;
        struct kubelet_config c;
        static const char head[] = "apiVersion: kubelet.config.k8s.io/v1beta1\n"
                                   "kind: KubeletConfiguration\n"
                                   "authentication: {webhook: {enabled: false}, anonymous: "
                                   "{enabled: true}}\n"
                                   "authorization: {mode: AlwaysAllow}\n";
        char body[512];
        snprintf(body, sizeof(body), "%suserNamespaces: {idsPerPod: 131072}\n", head);
        char *path = write_file("userns.yaml", body);
        char *flag = NULL;
        assert_true(asprintf(&flag, "--config=%s", path) > 0);
        parse_ok(&c, ARGV(flag));
        assert_int_equal(c.userns_ids_per_pod, 131072);
        kubelet_config_release(&c);
        free(flag);
        free(path);
        static const char *const bad[][2] = {
            {"1000", "must not be less than 65536"},
            {"0", "must not be less than 65536"},
            {"100000", "must be a multiple of 65536"},
            {"4295032832", "must not be more than 4294967295"},
        };
        for (size_t i = 0; i < 4; i++) {
                snprintf(body, sizeof(body), "%suserNamespaces: {idsPerPod: %s}\n", head,
                         bad[i][0]);
                path = write_file("userns.yaml", body);
                assert_true(asprintf(&flag, "--config=%s", path) > 0);
                char want[256];
                snprintf(want, sizeof(want),
                         "failed to validate kubelet configuration: invalid configuration: "
                         "userNamespaces.idsPerPod %s",
                         bad[i][1]);
                assert_parse_error(ARGV(flag), want);
                free(flag);
                free(path);
        }
}

static void test_file_errors(void **state)
{
        (void)state;
        assert_load_error(HDR "fooBar: 1\n", "t.yaml: strict decoding error: unknown field "
                                             "\"fooBar\"");
        assert_load_error(HDR "fooBar: 1\nmaxPod: 3\n",
                          "t.yaml: strict decoding error: unknown field \"fooBar\", unknown field "
                          "\"maxPod\"");
        assert_load_error(HDR "clusterDNS: 10.0.0.1\n",
                          "t.yaml: clusterDNS: expected a list of strings");
        assert_load_error(HDR "clusterDNS: [1]\n",
                          "t.yaml: clusterDNS: expected a list of strings");
        assert_load_error(HDR "maxPods: many\n", "t.yaml: maxPods: expected an integer");
        assert_load_error(HDR "maxPods: 1.5\n", "t.yaml: maxPods: expected an integer");
        assert_load_error(HDR "port: 4294967296\n", "t.yaml: port: 4294967296 is out of range");
        assert_load_error(HDR "failSwapOn: 'no'\n", "t.yaml: failSwapOn: expected a boolean");
        assert_load_error(HDR "address: 1\n", "t.yaml: address: expected a string");
        assert_load_error(HDR "syncFrequency: 10\n",
                          "t.yaml: syncFrequency: expected a duration string (e.g. \"20s\")");
        assert_load_error(HDR "syncFrequency: 10x\n",
                          "t.yaml: syncFrequency: time: unknown unit \"x\" in duration \"10x\"");
        assert_load_error(HDR "kubeReserved: [cpu]\n", "t.yaml: kubeReserved: expected a map of "
                                                       "strings");
        assert_load_error(HDR "logging: 3\n", "t.yaml: logging: expected an object");
        assert_load_error("apiVersion: kubelet.config.k8s.io/v1\nkind: KubeletConfiguration\n",
                          "t.yaml: apiVersion \"kubelet.config.k8s.io/v1\" is not "
                          "\"kubelet.config.k8s.io/v1beta1\"");
        assert_load_error("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: Pod\n",
                          "t.yaml: kind \"Pod\" is not \"KubeletConfiguration\"");
        assert_load_error("kind: KubeletConfiguration\n",
                          "t.yaml: missing apiVersion, expected \"kubelet.config.k8s.io/v1beta1\"");
        assert_load_error("apiVersion: kubelet.config.k8s.io/v1beta1\n",
                          "t.yaml: missing kind, expected \"KubeletConfiguration\"");
        assert_load_error("- a\n- b\n", "t.yaml: expected a KubeletConfiguration object");
        /* upstream fields ckubelet does not implement are accepted */
        char *msg = load_error(HDR "evictionHard: {memory.available: 100Mi}\n"
                                   "authentication: {anonymous: {enabled: false}}\n"
                                   "tlsCipherSuites: [a]\n");
        assert_null(msg);
        /* a gate's value is a boolean, as upstream's map[string]bool */
        assert_load_error(HDR "featureGates: {Foo: 'true'}\n",
                          "t.yaml: featureGates.Foo: expected a boolean");
        assert_load_error(HDR "featureGates: [Foo]\n",
                          "t.yaml: featureGates: expected a map of booleans");
}

static void test_pod_logs_dir_must_be_normalized(void **state)
{
        (void)state;
        char *path = write_file("logs.yaml", HDR STANDALONE_AUTH "podLogsDir: /srv/logs/../pods\n");
        char *flag = NULL;
        assert_true(asprintf(&flag, "--config=%s", path) > 0);
        assert_parse_error(ARGV(flag), "failed to validate kubelet configuration: invalid "
                                       "configuration: pod logs path \"/srv/logs/../pods\" must "
                                       "be normalized");
        free(flag);
        free(path);
}

/* healthzPort, healthzBindAddress, enableDebuggingHandlers and
 * enableDebugFlagsHandler in a file: types checked, "" defaulted, flags
 * over the file, the port validated. */
static void test_healthz_and_debugging_in_file(void **state)
{
        (void)state;
        assert_load_error(HDR "healthzPort: many\n", "t.yaml: healthzPort: expected an integer");
        assert_load_error(HDR "healthzBindAddress: 1\n",
                          "t.yaml: healthzBindAddress: expected a string");
        assert_load_error(HDR "enableDebuggingHandlers: 'no'\n",
                          "t.yaml: enableDebuggingHandlers: expected a boolean");
        assert_load_error(HDR "enableDebugFlagsHandler: 1\n",
                          "t.yaml: enableDebugFlagsHandler: expected a boolean");
        assert_load_error(HDR "healthzport: 1\n", "t.yaml: strict decoding error: unknown field "
                                                  "\"healthzport\"");

        struct kubelet_config c;
        ck_error_t err = NULL;
        static const char empty[] = HDR "healthzBindAddress: ''\nenableDebugFlagsHandler: true\n";
        kubelet_config_defaults(&c);
        assert_int_equal(kubelet_config_load_buffer(&c, "t.yaml", empty, strlen(empty), &err), 0);
        assert_string_equal(c.healthz_bind_address, "127.0.0.1"); /* upstream's defaulting */
        assert_true(c.enable_debug_flags_handler);
        assert_true(c.enable_debugging_handlers); /* absent: the default */
        assert_int_equal(c.healthz_port, 10248);
        kubelet_config_release(&c);
        /* a *int32 upstream: an explicit 0 is kept and turns the server off */
        static const char off[] = HDR "healthzPort: 0\n";
        kubelet_config_defaults(&c);
        assert_int_equal(kubelet_config_load_buffer(&c, "t.yaml", off, strlen(off), &err), 0);
        assert_int_equal(c.healthz_port, 0);
        kubelet_config_release(&c);

        char *path = write_file("healthz.yaml", HDR STANDALONE_AUTH "healthzPort: 12248\n"
                                                                    "healthzBindAddress: '::'\n"
                                                                    "enableDebuggingHandlers: "
                                                                    "false\n"
                                                                    "enableDebugFlagsHandler: "
                                                                    "false\n");
        char *flag = NULL;
        assert_true(asprintf(&flag, "--config=%s", path) > 0);
        parse_ok(&c, ARGV(flag));
        assert_int_equal(c.healthz_port, 12248);
        assert_string_equal(c.healthz_bind_address, "::");
        assert_false(c.enable_debugging_handlers);
        assert_false(c.enable_debug_flags_handler);
        kubelet_config_release(&c);
        parse_ok(&c, ARGV("--healthz-port=1", flag, "--enable-debugging-handlers",
                          "--healthz-bind-address=127.0.0.2"));
        assert_int_equal(c.healthz_port, 1);
        assert_string_equal(c.healthz_bind_address, "127.0.0.2");
        assert_true(c.enable_debugging_handlers);
        assert_false(c.enable_debug_flags_handler); /* the file's: no flag for it */
        kubelet_config_release(&c);
        free(flag);
        free(path);

        path = write_file("healthz-bad.yaml", HDR STANDALONE_AUTH "healthzPort: 70000\n");
        assert_true(asprintf(&flag, "--config=%s", path) > 0);
        assert_parse_error(ARGV(flag), "failed to validate kubelet configuration: invalid "
                                       "configuration: healthzPort (--healthz-port) 70000 must "
                                       "be between 1 and 65535, inclusive");
        free(flag);
        free(path);
}

static void test_secure_port_settings(void **state)
{
        (void)state;
        struct kubelet_config c;
        /* the command line's legacy defaults */
        parse_ok(&c, ARGV("--hostname-override=n"));
        assert_true(c.enable_server);
        assert_true(c.anonymous_auth);
        assert_false(c.authn_webhook);
        assert_string_equal(c.authorization_mode, "AlwaysAllow");
        assert_string_equal(c.cert_dir, "/var/lib/kubelet/pki");
        assert_int_equal(c.authn_webhook_cache_ttl_ms, 120000);
        assert_int_equal(c.authz_cache_authorized_ttl_ms, 300000);
        assert_int_equal(c.authz_cache_unauthorized_ttl_ms, 30000);
        kubelet_config_release(&c);

        /* a file: nested fields, relative paths against the file's directory */
        char *path = write_file("auth.yaml", HDR "tlsCertFile: pki/k.crt\n"
                                                 "tlsPrivateKeyFile: pki/k.key\n"
                                                 "enableServer: false\n"
                                                 "authentication:\n"
                                                 "  x509: {clientCAFile: ca.crt}\n"
                                                 "  webhook: {enabled: true, cacheTTL: 10s}\n"
                                                 "  anonymous: {enabled: true}\n"
                                                 "authorization:\n"
                                                 "  mode: Webhook\n"
                                                 "  webhook: {cacheAuthorizedTTL: 1m, "
                                                 "cacheUnauthorizedTTL: 0s}\n");
        char *flag = NULL, *want = NULL;
        assert_true(asprintf(&flag, "--config=%s", path) > 0);
        parse_ok(&c, ARGV(flag, "--kubeconfig=/k"));
        assert_false(c.enable_server);
        assert_true(asprintf(&want, "%s/pki/k.crt", tmpdir) > 0);
        assert_string_equal(c.tls_cert_file, want);
        free(want);
        assert_true(asprintf(&want, "%s/pki/k.key", tmpdir) > 0);
        assert_string_equal(c.tls_private_key_file, want);
        free(want);
        assert_true(asprintf(&want, "%s/ca.crt", tmpdir) > 0);
        assert_string_equal(c.client_ca_file, want);
        free(want);
        assert_true(c.anonymous_auth);
        assert_true(c.authn_webhook);
        assert_int_equal(c.authn_webhook_cache_ttl_ms, 10000);
        assert_string_equal(c.authorization_mode, "Webhook");
        assert_int_equal(c.authz_cache_authorized_ttl_ms, 60000);
        assert_int_equal(c.authz_cache_unauthorized_ttl_ms, 30000); /* 0s: the default */
        kubelet_config_release(&c);
        free(flag);
        free(path);

        assert_load_error(HDR "authentication: {x509: {clientCAfile: x}}\n",
                          "t.yaml: strict decoding error: unknown field "
                          "\"authentication.x509.clientCAfile\"");
        assert_load_error(HDR "authentication.x509.clientCAFile: /x\n",
                          "t.yaml: strict decoding error: unknown field "
                          "\"authentication.x509.clientCAFile\"");
        assert_load_error(HDR "authorization: {mode: 5}\n",
                          "t.yaml: authorization.mode: expected a string");
        parse_ok(&c, ARGV("--tls-min-version=VersionTLS13",
                          "--tls-cipher-suites=TLS_AES_128_GCM_SHA256,TLS_X"));
        assert_string_equal(c.tls_min_version, "VersionTLS13");
        assert_int_equal(strv_len(c.tls_cipher_suites), 2);
        assert_string_equal(c.tls_cipher_suites[1], "TLS_X"); /* checked by the server */
        kubelet_config_release(&c);
        /* 0: no caching, as upstream */
        parse_ok(&c, ARGV("--authorization-webhook-cache-unauthorized-ttl=0s",
                          "--authentication-token-webhook-cache-ttl=0"));
        assert_int_equal(c.authz_cache_unauthorized_ttl_ms, 0);
        assert_int_equal(c.authn_webhook_cache_ttl_ms, 0);
        kubelet_config_release(&c);
        assert_parse_error(ARGV("--anonymous-auth=false"),
                           "failed to validate kubelet configuration: no authentication method "
                           "configured (enable authentication.anonymous, authentication.webhook or "
                           "set authentication.x509.clientCAFile)");
        assert_parse_error(ARGV("--authorization-mode=RBAC"),
                           "failed to validate kubelet configuration: unknown authorization mode "
                           "RBAC");
        assert_parse_error(ARGV("--tls-cert-file=/a.crt"),
                           "failed to validate kubelet configuration: invalid configuration: "
                           "tlsCertFile (--tls-cert-file) and tlsPrivateKeyFile "
                           "(--tls-private-key-file) must be set together");
}

static void test_file_error_leaves_config_unchanged(void **state)
{
        (void)state;
        static const char yaml[] = HDR "maxPods: 3\nport: 1\nclusterDNS: [1.1.1.1]\nnope: 1\n";
        struct kubelet_config c;
        ck_error_t err = NULL;
        kubelet_config_defaults(&c);
        assert_int_equal(kubelet_config_load_buffer(&c, "t.yaml", yaml, strlen(yaml), &err), -1);
        ck_error_release(&err);
        assert_int_equal(c.max_pods, 110);
        assert_int_equal(c.port, 10250);
        assert_null(c.cluster_dns);
        kubelet_config_release(&c);
}

static void test_config_file_errors_through_flags(void **state)
{
        (void)state;
        char *missing = NULL;
        assert_true(asprintf(&missing, "--config=%s/does-not-exist.yaml", tmpdir) > 0);
        struct kubelet_config c;
        char *msg = parse(&c, ARGV(missing), NULL);
        assert_non_null(msg);
        assert_true(strstr(msg, "failed to load kubelet config file: ") == msg);
        assert_non_null(strstr(msg, "does-not-exist.yaml"));
        assert_non_null(strstr(msg, "No such file or directory"));
        free(msg);
        free(missing);

        char *path = write_file("bad.yaml", HDR "clusterDNS: nope\n");
        char *flag = NULL;
        assert_true(asprintf(&flag, "--config=%s", path) > 0);
        char *want = NULL;
        assert_true(asprintf(&want,
                             "failed to load kubelet config file: %s: clusterDNS: expected a list "
                             "of strings",
                             path) > 0);
        assert_parse_error(ARGV(flag), want);
        free(want);
        free(flag);
        free(path);
}

/* Reads what the logger wrote into fd (a file) and closes it. */
static char *read_log(int fd)
{
        off_t len = lseek(fd, 0, SEEK_END);
        char *buf = calloc(1, (size_t)len + 1);
        assert_int_equal(pread(fd, buf, (size_t)len, 0), len);
        close(fd);
        return buf;
}

static int capture_log(void)
{
        char *path = NULL;
        assert_true(asprintf(&path, "%s/log.XXXXXX", tmpdir) > 0);
        int fd = mkostemp(path, O_CLOEXEC);
        assert_true(fd >= 0);
        unlink(path);
        free(path);
        log_set_fd(fd);
        return fd;
}

/* Gates ckubelet does not act on keep their defaults: one warning names
 * them all, in the order given. */
static void test_gates_not_acted_on_are_named(void **state)
{
        (void)state;
        struct kubelet_config c;
        int fd = capture_log();
        parse_ok(&c, ARGV("--feature-gates=Foo=true,PodAndContainerStatsFromCRI=true,Bar=false"));
        kubelet_config_release(&c);
        char *out = read_log(fd);
        log_set_fd(quiet_fd);
        assert_non_null(strstr(out, "Feature gates that ckubelet does not act on keep their "
                                    "defaults\" gates=\"Foo, Bar\""));
        free(out);
}

static void test_ignored_fields_are_listed_at_v1(void **state)
{
        (void)state;
        static const char yaml[] = HDR "podPidsLimit: 100\nmaxPods: 3\n"
                                       "healthzPort: 10248\nenableDebuggingHandlers: true\n";
        struct kubelet_config c;
        ck_error_t err = NULL;

        int fd = capture_log();
        log_set_verbosity(0);
        kubelet_config_defaults(&c);
        assert_int_equal(kubelet_config_load_buffer(&c, "t.yaml", yaml, strlen(yaml), &err), 0);
        kubelet_config_release(&c);
        char *quiet = read_log(fd);
        assert_string_equal(quiet, "");
        free(quiet);

        fd = capture_log();
        log_set_verbosity(1);
        kubelet_config_defaults(&c);
        assert_int_equal(kubelet_config_load_buffer(&c, "t.yaml", yaml, strlen(yaml), &err), 0);
        assert_int_equal(c.max_pods, 3);
        kubelet_config_release(&c);
        char *out = read_log(fd);
        log_set_fd(quiet_fd);
        log_set_verbosity(0);
        assert_true(out[0] == 'W');
        assert_non_null(strstr(out, "fields=\"podPidsLimit\""));
        assert_null(strstr(out, "maxPods"));
        assert_null(strstr(out, "healthzPort")); /* implemented now */
        assert_null(strstr(out, "enableDebuggingHandlers"));
        free(out);
}

/* failCgroupV1 (upstream since v1.31, true by default): the field a cgroup
 * v1 host's config sets to false, and --fail-cgroupv1 (not deprecated). */
static void test_fail_cgroup_v1(void **state)
{
        (void)state;
        static const char yaml[] = HDR "failCgroupV1: false\nfailSwapOn: false\n";
        struct kubelet_config c;
        ck_error_t err = NULL;
        int fd = capture_log();
        log_set_verbosity(1);
        kubelet_config_defaults(&c);
        assert_true(c.fail_cgroup_v1);
        assert_int_equal(kubelet_config_load_buffer(&c, "t.yaml", yaml, strlen(yaml), &err), 0);
        assert_false(c.fail_cgroup_v1);
        kubelet_config_release(&c);
        char *out = read_log(fd);
        log_set_fd(quiet_fd);
        log_set_verbosity(0);
        /* implemented: no "not implemented" warning names it */
        assert_null(strstr(out, "failCgroupV1"));
        free(out);
        assert_true(kcfg_upstream_field_known("failCgroupV1"));
        assert_false(kcfg_upstream_field_known("failCgroupV"));
}

static void test_deprecated_flags_warn_as_upstream(void **state)
{
        (void)state;
        struct kubelet_config c;
        int fd = capture_log();
        parse_ok(&c, ARGV("--max-pods=3", "--root-dir=/r", "--pod-infra-container-image=p:1",
                          "--volume-plugin-dir=/x"));
        kubelet_config_release(&c);
        char *out = read_log(fd);
        log_set_fd(quiet_fd);
        assert_non_null(strstr(out, "Flag --max-pods has been deprecated, This parameter should "
                                    "be set via the config file specified by the Kubelet's "
                                    "--config flag."));
        assert_null(strstr(out, "--root-dir has been deprecated"));
        assert_non_null(strstr(out, "Flag --pod-infra-container-image has been deprecated"));
        assert_non_null(strstr(out, "flag=\"--volume-plugin-dir\""));
        free(out);
}

static void test_usage_is_aligned_with_defaults(void **state)
{
        (void)state;
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        assert_non_null(f);
        kubelet_flags_usage(f);
        fclose(f);
        static const struct {
                const char *flag, *def;
        } want[] = {
            {"      --max-pods int32 ", "(default 110)"},
            {"      --sync-frequency duration ", "(default 1m0s)"},
            {"      --root-dir string ", "(default \"/var/lib/kubelet\")"},
            {"      --address ip ", "(default 0.0.0.0)"},
            {"      --register-node ", "(default true)"},
            {"  -v, --v Level ", NULL},
            {"  -h, --help ", NULL},
            {"      --cluster-dns strings ", NULL},
            {"      --read-only-port int32 ", NULL},
            {"      --healthz-port int32 ", "(default 10248)"},
            {"      --healthz-bind-address ip ", "(default 127.0.0.1)"},
            {"      --enable-debugging-handlers ", "(default true)"},
        };
        long column = -1;
        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
                char *line = strstr(buf, want[i].flag);
                if (line == NULL)
                        fail_msg("no line for %s", want[i].flag);
                char *eol = strchr(line, '\n');
                assert_non_null(eol);
                *eol = '\0';
                if (want[i].def)
                        assert_non_null(strstr(line, want[i].def));
                else
                        assert_null(strstr(line, "(default"));
                /* descriptions start in one column */
                char *p = line + strlen(want[i].flag);
                while (*p == ' ')
                        p++;
                if (column < 0)
                        column = p - line;
                assert_int_equal(p - line, column);
                *eol = '\n';
        }
        free(buf);
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
            cmocka_unit_test(test_defaults_are_upstream),
            cmocka_unit_test(test_no_flags_derives_node_name_and_image_endpoint),
            cmocka_unit_test(test_duration_table),
            cmocka_unit_test(test_flag_syntax_forms),
            cmocka_unit_test(test_flag_error_messages),
            cmocka_unit_test(test_help_and_version),
            cmocka_unit_test(test_unimplemented_upstream_flags_are_accepted),
            cmocka_unit_test(test_node_labels),
            cmocka_unit_test(test_node_status_max_images),
            cmocka_unit_test(test_image_gc_policy),
            cmocka_unit_test(test_repeated_cluster_dns_appends),
            cmocka_unit_test(test_reserved_maps),
            cmocka_unit_test(test_hostname_override_is_trimmed_and_lowercased),
            cmocka_unit_test(test_healthz_and_debugging_flags),
            cmocka_unit_test(test_validation),
            cmocka_unit_test(test_file_sets_fields),
            cmocka_unit_test(test_json_file),
            cmocka_unit_test(test_flags_override_file),
            cmocka_unit_test(test_feature_gates),
            cmocka_unit_test(test_zero_values_in_file_mean_default),
            cmocka_unit_test(test_user_namespaces),
            cmocka_unit_test(test_file_errors),
            cmocka_unit_test(test_pod_logs_dir_must_be_normalized),
            cmocka_unit_test(test_healthz_and_debugging_in_file),
            cmocka_unit_test(test_secure_port_settings),
            cmocka_unit_test(test_file_error_leaves_config_unchanged),
            cmocka_unit_test(test_config_file_errors_through_flags),
            cmocka_unit_test(test_ignored_fields_are_listed_at_v1),
            cmocka_unit_test(test_gates_not_acted_on_are_named),
            cmocka_unit_test(test_fail_cgroup_v1),
            cmocka_unit_test(test_deprecated_flags_warn_as_upstream),
            cmocka_unit_test(test_usage_is_aligned_with_defaults),
        };
        return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
