/* SPDX-License-Identifier: Apache-2.0 */
/* v1.Pod decoding: defaults as the apiserver applies them, validation
 * errors worded and placed as the apiserver's, QoS, hashing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "api/decode.h"
#include "api/pod.h"
#include "util/cleanup.h"
#include "util/yamljson.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Decodes a YAML manifest; on failure returns NULL and *msg (new string). */
static struct pod *decode(const char *yaml, char **msg)
{
        json_t *obj = NULL;
        ck_error_t err = NULL;
        struct pod *pod = NULL;
        if (yamljson_parse(yaml, strlen(yaml), &obj, &err) < 0 ||
            api_pod_decode(obj, &pod, &err) < 0) {
                if (msg)
                        *msg = strdup(ck_error_msg(err));
                ck_error_release(&err);
                json_decref(obj);
                return NULL;
        }
        json_decref(obj);
        return pod;
}

static struct pod *must_decode(const char *yaml)
{
        cleanup_free char *msg = NULL;
        struct pod *pod = decode(yaml, &msg);
        if (pod == NULL)
                fail_msg("decode failed: %s\n%s", msg, yaml);
        return pod;
}

/* The raw value at a path like "spec.containers.0.imagePullPolicy". */
static json_t *raw_at(json_t *j, const char *path)
{
        cleanup_free char *p = strdup(path);
        for (char *save = NULL, *tok = strtok_r(p, ".", &save); tok && j;
             tok = strtok_r(NULL, ".", &save)) {
                if (json_is_array(j))
                        j = json_array_get(j, strtoul(tok, NULL, 10));
                else
                        j = json_object_get(j, tok);
        }
        return j;
}

static const char GOOD_POD[] =
    "apiVersion: v1\n"
    "kind: Pod\n"
    "metadata:\n"
    "  name: web\n"
    "  uid: abc-1234\n"
    "  labels: {app: web, tier: \"1\"}\n"
    "  annotations: {kubernetes.io/config.source: api}\n"
    "spec:\n"
    "  nodeName: node-1\n"
    "  serviceAccount: builder\n"
    "  volumes:\n"
    "  - name: data\n"
    "  - name: cfg\n"
    "    configMap: {name: web-config, items: [{key: a, path: a.conf}]}\n"
    "  - name: host\n"
    "    hostPath: {path: /var/log}\n"
    "  - name: token\n"
    "    projected: {sources: [{serviceAccountToken: {path: t}}]}\n"
    "  initContainers:\n"
    "  - name: init\n"
    "    image: busybox:1.35\n"
    "    command: [sh, -c, 'true']\n"
    "  - name: sidecar\n"
    "    image: localhost/busybox\n"
    "    restartPolicy: Always\n"
    "    readinessProbe:\n"
    "      exec: {command: [cat, /tmp/ready]}\n"
    "  containers:\n"
    "  - name: app\n"
    "    image: nginx:1.25\n"
    "    args: [--port, \"80\"]\n"
    "    ports:\n"
    "    - {name: http, containerPort: 80}\n"
    "    - {containerPort: 53, protocol: UDP, hostPort: 5353}\n"
    "    env:\n"
    "    - {name: MODE, value: prod}\n"
    "    - name: POD\n"
    "      valueFrom: {fieldRef: {fieldPath: metadata.name}}\n"
    "    - name: KEY\n"
    "      valueFrom: {secretKeyRef: {name: s, key: k, optional: true}}\n"
    "    envFrom:\n"
    "    - {prefix: CFG_, configMapRef: {name: web-config}}\n"
    "    resources:\n"
    "      limits: {cpu: 0.5, memory: 64Mi}\n"
    "    volumeMounts:\n"
    "    - {name: data, mountPath: /data}\n"
    "    - {name: cfg, mountPath: /etc/web, readOnly: true}\n"
    "    livenessProbe:\n"
    "      httpGet: {port: http}\n"
    "      periodSeconds: 5\n"
    "    lifecycle:\n"
    "      preStop: {sleep: {seconds: 5}}\n"
    "    securityContext:\n"
    "      runAsUser: 1000\n"
    "      capabilities: {add: [NET_ADMIN], drop: [ALL]}\n"
    "  - name: log\n"
    "    image: busybox\n"
    "    resources:\n"
    "      requests: {cpu: 100m, memory: 1e3}\n";

static void test_good_pod_fields(void **state)
{
        (void)state;
        cleanup_pod struct pod *pod = must_decode(GOOD_POD);
        assert_string_equal(pod->name, "web");
        assert_string_equal(pod->namespace, "default");
        assert_string_equal(pod_full_name(pod), "default/web");
        assert_string_equal(pod->uid, "abc-1234");
        assert_string_equal(kv_list_get(&pod->labels, "tier"), "1");
        assert_null(kv_list_get(&pod->labels, "nope"));
        assert_string_equal(pod->node_name, "node-1");
        assert_string_equal(pod->service_account_name, "builder");
        assert_false(pod_is_static(pod));

        /* pod-level defaults */
        assert_int_equal(pod->restart_policy, RESTART_ALWAYS);
        assert_int_equal(pod->termination_grace_period_seconds, 30);
        assert_int_equal(pod->dns_policy, DNS_CLUSTER_FIRST);

        assert_int_equal(pod->n_volumes, 4);
        assert_int_equal(pod->volumes[0].kind, VOLUME_EMPTY_DIR);
        assert_string_equal(pod->volumes[0].medium, "");
        assert_int_equal(pod->volumes[1].kind, VOLUME_CONFIG_MAP);
        assert_string_equal(pod->volumes[1].source_name, "web-config");
        assert_int_equal(pod->volumes[1].n_items, 1);
        assert_string_equal(pod->volumes[1].items[0].path, "a.conf");
        assert_true(pod->volumes[1].has_default_mode);
        assert_int_equal(pod->volumes[1].default_mode, 0644);
        assert_int_equal(pod->volumes[2].kind, VOLUME_HOST_PATH);
        assert_string_equal(pod->volumes[2].host_path, "/var/log");
        assert_string_equal(pod->volumes[2].host_path_type, "");
        assert_int_equal(pod->volumes[3].kind, VOLUME_PROJECTED);
        assert_ptr_equal(pod->volumes[3].source, raw_at(pod->raw, "spec.volumes.3.projected"));

        assert_int_equal(pod->n_init_containers, 2);
        assert_false(container_is_sidecar(&pod->init_containers[0]));
        assert_null(pod->init_containers[0].restart_policy);
        assert_true(container_is_sidecar(&pod->init_containers[1]));
        assert_int_equal(pod->init_containers[1].image_pull_policy, PULL_ALWAYS); /* no tag */
        assert_int_equal(pod->init_containers[1].readiness_probe->timeout_seconds, 1);

        assert_int_equal(pod->n_containers, 2);
        const struct container *app = pod_find_container(pod, "app");
        assert_ptr_equal(app, &pod->containers[0]);
        assert_ptr_equal(pod_find_container(pod, "sidecar"), &pod->init_containers[1]);
        assert_null(pod_find_container(pod, "nope"));
        assert_int_equal(app->image_pull_policy, PULL_IF_NOT_PRESENT);
        assert_string_equal(app->termination_message_path, "/dev/termination-log");
        assert_string_equal(app->termination_message_policy, "File");
        assert_int_equal(app->args.n, 2);
        assert_string_equal(app->args.items[1], "80");
        assert_int_equal(app->n_ports, 2);
        assert_string_equal(app->ports[0].protocol, "TCP");
        assert_int_equal(app->ports[0].host_port, 0);
        assert_string_equal(app->ports[1].protocol, "UDP");
        assert_int_equal(app->ports[1].host_port, 5353);
        assert_int_equal(app->n_env, 3);
        assert_int_equal(app->env[0].kind, ENV_VALUE);
        assert_string_equal(app->env[0].value, "prod");
        assert_int_equal(app->env[1].kind, ENV_FIELD_REF);
        assert_string_equal(app->env[1].field_path, "metadata.name");
        assert_int_equal(app->env[2].kind, ENV_SECRET_KEY);
        assert_string_equal(app->env[2].ref_name, "s");
        assert_string_equal(app->env[2].ref_key, "k");
        assert_true(app->env[2].optional);
        assert_int_equal(app->n_env_from, 1);
        assert_string_equal(app->env_from[0].prefix, "CFG_");
        assert_false(app->env_from[0].is_secret);
        /* requests default from limits */
        assert_true(app->resources.limits.has_cpu);
        assert_int_equal(app->resources.limits.cpu_milli, 500);
        assert_int_equal(app->resources.requests.cpu_milli, 500);
        assert_int_equal(app->resources.requests.memory, 64 << 20);
        assert_false(app->resources.requests.has_ephemeral_storage);
        assert_int_equal(app->n_volume_mounts, 2);
        assert_true(app->volume_mounts[1].read_only);
        assert_non_null(app->liveness_probe);
        assert_int_equal(app->liveness_probe->handler.kind, HANDLER_HTTP_GET);
        assert_true(app->liveness_probe->handler.port.is_string);
        assert_string_equal(app->liveness_probe->handler.port.sval, "http");
        assert_string_equal(app->liveness_probe->handler.http_path, "/");
        assert_string_equal(app->liveness_probe->handler.http_scheme, "HTTP");
        assert_int_equal(app->liveness_probe->period_seconds, 5);
        assert_int_equal(app->liveness_probe->timeout_seconds, 1);
        assert_int_equal(app->liveness_probe->success_threshold, 1);
        assert_int_equal(app->liveness_probe->failure_threshold, 3);
        assert_null(app->readiness_probe);
        assert_non_null(app->pre_stop);
        assert_int_equal(app->pre_stop->kind, HANDLER_SLEEP);
        assert_int_equal(app->pre_stop->sleep_seconds, 5);
        assert_non_null(app->security_context);
        assert_true(app->security_context->has_run_as_user);
        assert_int_equal(app->security_context->run_as_user, 1000);
        assert_false(app->security_context->has_privileged);
        assert_string_equal(app->security_context->capabilities.drop.items[0], "ALL");
        assert_int_equal(pod->containers[1].image_pull_policy, PULL_ALWAYS);
        assert_int_equal(pod->containers[1].resources.requests.memory, 1000);
        assert_false(pod->containers[1].resources.limits.has_memory);
        assert_int_equal(pod_qos_class(pod), QOS_BURSTABLE);
}

/* pod->raw is the defaulted object the read-only API serves. */
static void test_good_pod_raw_defaults(void **state)
{
        (void)state;
        cleanup_pod struct pod *pod = must_decode(GOOD_POD);
        static const char *const strs[][2] = {
            {"metadata.namespace", "default"},
            {"spec.restartPolicy", "Always"},
            {"spec.dnsPolicy", "ClusterFirst"},
            {"spec.schedulerName", "default-scheduler"},
            {"spec.serviceAccountName", "builder"},
            {"spec.volumes.2.hostPath.type", ""},
            {"spec.containers.0.imagePullPolicy", "IfNotPresent"},
            {"spec.containers.0.terminationMessagePath", "/dev/termination-log"},
            {"spec.containers.0.terminationMessagePolicy", "File"},
            {"spec.containers.0.ports.0.protocol", "TCP"},
            {"spec.containers.0.resources.limits.cpu", "500m"},
            {"spec.containers.0.resources.requests.cpu", "500m"},
            {"spec.containers.0.resources.requests.memory", "64Mi"},
            {"spec.containers.0.livenessProbe.httpGet.path", "/"},
            {"spec.containers.0.livenessProbe.httpGet.scheme", "HTTP"},
            {"spec.containers.0.env.1.valueFrom.fieldRef.apiVersion", "v1"},
            {"spec.containers.1.imagePullPolicy", "Always"},
            {"spec.containers.1.resources.requests.memory", "1k"}, /* YAML 1e3 is the number 1000 */
            {"spec.initContainers.0.imagePullPolicy", "IfNotPresent"},
        };
        for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
                json_t *v = raw_at(pod->raw, strs[i][0]);
                if (!json_is_string(v) || strcmp(json_string_value(v), strs[i][1]) != 0)
                        fail_msg("%s: want \"%s\"", strs[i][0], strs[i][1]);
        }
        static const struct {
                const char *path;
                json_int_t v;
        } ints[] = {
            {"spec.terminationGracePeriodSeconds", 30},
            {"spec.volumes.1.configMap.defaultMode", 0644},
            {"spec.volumes.3.projected.defaultMode", 0644},
            {"spec.volumes.3.projected.sources.0.serviceAccountToken.expirationSeconds", 3600},
            {"spec.containers.0.livenessProbe.timeoutSeconds", 1},
            {"spec.containers.0.livenessProbe.periodSeconds", 5},
            {"spec.containers.0.livenessProbe.successThreshold", 1},
            {"spec.containers.0.livenessProbe.failureThreshold", 3},
        };
        for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
                json_t *v = raw_at(pod->raw, ints[i].path);
                if (!json_is_integer(v) || json_integer_value(v) != ints[i].v)
                        fail_msg("%s: want %lld", ints[i].path, (long long)ints[i].v);
        }
        assert_true(json_is_true(raw_at(pod->raw, "spec.enableServiceLinks")));
        assert_true(json_is_object(raw_at(pod->raw, "spec.securityContext")));
        assert_true(json_is_object(raw_at(pod->raw, "spec.volumes.0.emptyDir")));
        /* the input is not touched */
        json_t *obj = NULL;
        assert_int_equal(yamljson_parse(GOOD_POD, strlen(GOOD_POD), &obj, NULL), 0);
        json_t *copy = json_deep_copy(obj);
        struct pod *again = NULL;
        assert_int_equal(api_pod_decode(obj, &again, NULL), 0);
        assert_true(json_equal(obj, copy));
        pod_unref(again);
        json_decref(obj);
        json_decref(copy);
}

static void test_host_network_defaults_host_port(void **state)
{
        (void)state;
        cleanup_pod struct pod *pod =
            must_decode("metadata: {name: p}\n"
                        "spec:\n"
                        "  hostNetwork: true\n"
                        "  containers:\n"
                        "  - {name: a, image: x:1, ports: [{containerPort: 8080}]}\n");
        assert_true(pod->host_network);
        assert_int_equal(pod->containers[0].ports[0].host_port, 8080);
        assert_int_equal(json_integer_value(raw_at(pod->raw, "spec.containers.0.ports.0.hostPort")),
                         8080);
}

static void test_pull_policy_from_image(void **state)
{
        (void)state;
        static const struct {
                const char *image;
                enum pull_policy want;
        } cases[] = {
            {"busybox", PULL_ALWAYS},
            {"busybox:latest", PULL_ALWAYS},
            {"busybox:1.35", PULL_IF_NOT_PRESENT},
            {"localhost:5000/busybox", PULL_ALWAYS},
            {"localhost:5000/busybox:1", PULL_IF_NOT_PRESENT},
            {"busybox@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
             PULL_IF_NOT_PRESENT},
            {"busybox:latest@sha256:0123456789abcdef0123456789abcdef0123456789abcdef01234567"
             "89abcdef",
             PULL_ALWAYS},
            {"BusyBox", PULL_IF_NOT_PRESENT}, /* not a valid reference: no tag */
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char yaml[512];
                snprintf(yaml, sizeof(yaml),
                         "metadata: {name: p}\nspec: {containers: [{name: a, image: \"%s\"}]}\n",
                         cases[i].image);
                cleanup_pod struct pod *pod = must_decode(yaml);
                if (pod->containers[0].image_pull_policy != cases[i].want)
                        fail_msg("%s: pull policy %d, want %d", cases[i].image,
                                 pod->containers[0].image_pull_policy, cases[i].want);
        }
}

struct bad_case {
        const char *yaml;
        const char *want;
};

#define META "metadata: {name: p}\n"
#define ONE "containers: [{name: a, image: x:1}]"

static void test_validation_errors(void **state)
{
        (void)state;
        static const struct bad_case cases[] = {
            /* type and kind */
            {"kind: Deployment\napiVersion: apps/v1\n" META "spec: {" ONE "}\n",
             "kind: Unsupported value: \"Deployment\": supported values: \"Pod\"; apiVersion: "
             "Unsupported value: \"apps/v1\": supported values: \"v1\""},
            {"apiVersion: v2\n" META "spec: {" ONE "}\n",
             "apiVersion: Unsupported value: \"v2\": supported values: \"v1\""},
            {META "spec: []\n", "spec: Invalid value: []: must be an object"},
            {META "spec: {securityContext: {fsGroupChangePolicy: Sometimes}, " ONE "}\n",
             "spec.securityContext.fsGroupChangePolicy: Unsupported value: \"Sometimes\": "
             "supported values: \"Always\", \"OnRootMismatch\""},
            /* spec.overhead: validated as container limits (upstream's path) */
            {META "spec: {overhead: {cpu: '-1'}, " ONE "}\n",
             "spec.overhead.limits[cpu]: Invalid value: \"-1\": must be greater than or equal to "
             "0"},
            {META "spec: {overhead: {hugepages-2Mi: 2Mi}, " ONE "}\n",
             "spec.overhead: Forbidden: HugePages require cpu or memory"},
            {META "spec: {containers: [{name: a, image: x, ports: [{containerPort: 80x}]}]}\n",
             "spec.containers[0].ports[0].containerPort: Invalid value: \"80x\": must be an "
             "integer"},
            {META "spec: {containers: [{name: a, image: x, ports: {}}]}\n",
             "spec.containers[0].ports: Invalid value: {}: must be a list"},
            {META "spec: {containers: [{name: a, image: x, ports: [{containerPort: 1.5}]}]}\n",
             "spec.containers[0].ports[0].containerPort: Invalid value: 1.5: must be an "
             "integer"},
            {META
             "spec: {containers: [{name: a, image: x, ports: [{containerPort: 4294967296}]}]}\n",
             "spec.containers[0].ports[0].containerPort: Invalid value: 4294967296: must be a "
             "32-bit integer"},
            {META "spec: {containers: [{name: a, image: [x]}]}\n",
             "spec.containers[0].image: Invalid value: [\"x\"]: must be a string"},
            {META "spec: {containers: [{name: a, image: x, terminationMessagePolicy: 5}]}\n",
             "spec.containers[0].terminationMessagePolicy: Invalid value: 5: must be a string"},
            {META "spec: {containers: [{name: a, image: x, tty: \"yes\"}]}\n",
             "spec.containers[0].tty: Invalid value: \"yes\": must be a boolean"},
            {"metadata: {name: p, labels: {a: [1]}}\nspec: {" ONE "}\n",
             "metadata.labels[a]: Invalid value: [1]: must be a string"},
            {META "spec: {containers: [{name: a, image: x, resources: {limits: {memory: abc}}}]}\n",
             "spec.containers[0].resources.limits[memory]: Invalid value: \"abc\": quantities "
             "must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
            {META "spec: {containers: [{name: a, image: x, resources: {limits: {memory: "
                  "12345678901234567890Ki}}}]}\n",
             "spec.containers[0].resources.limits[memory]: Invalid value: "
             "\"12345678901234567890Ki\": quantity is too large"},
            /* metadata */
            {"metadata: {}\nspec: {" ONE "}\n",
             "metadata.name: Required value: name or generateName is required"},
            {"metadata: {name: Web_1}\nspec: {" ONE "}\n",
             "metadata.name: Invalid value: \"Web_1\": a lowercase RFC 1123 subdomain must "
             "consist of lower case alphanumeric characters, '-' or '.', and must start and "
             "end with an alphanumeric character (e.g. 'example.com', regex used for "
             "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"},
            {"metadata: {name: p, namespace: a.b}\nspec: {" ONE "}\n",
             "metadata.namespace: Invalid value: \"a.b\": must not contain dots"},
            {"metadata: {name: p, labels: {a: b c}}\nspec: {" ONE "}\n",
             "metadata.labels: Invalid value: \"b c\": a valid label must be an empty string "
             "or consist of alphanumeric characters, '-', '_' or '.', and must start and end "
             "with an alphanumeric character (e.g. 'MyValue' or 'my_value' or '12345', regex "
             "used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"},
            {"metadata: {name: p, annotations: {/x: v}}\nspec: {" ONE "}\n",
             "metadata.annotations: Invalid value: \"/x\": prefix part must be non-empty"},
            /* containers */
            {META "spec: {containers: []}\n", "spec.containers: Required value"},
            {META "spec: {}\n", "spec.containers: Required value"},
            {META "spec: {containers: [{name: Web, image: x}]}\n",
             "spec.containers[0].name: Invalid value: \"Web\": a lowercase RFC 1123 label must "
             "consist of lower case alphanumeric characters or '-', and must start and end "
             "with an alphanumeric character (e.g. 'my-name' or '123-abc', regex used for "
             "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"},
            {META "spec: {containers: [{image: x}]}\n", "spec.containers[0].name: Required value"},
            {META "spec: {containers: [{name: a, image: x}, {name: a, image: z}]}\n",
             "spec.containers[1].name: Duplicate value: \"a\""},
            {META "spec: {" ONE ", initContainers: [{name: a, image: x}]}\n",
             "spec.initContainers[0].name: Duplicate value: \"a\""},
            {META "spec: {containers: [{name: a}]}\n", "spec.containers[0].image: Required value"},
            {META "spec: {containers: [{name: a, image: ' x'}]}\n",
             "spec.containers[0].image: Invalid value: \" x\": must not have leading or "
             "trailing whitespace"},
            {META "spec: {containers: [{name: a}, {name: b}]}\n",
             "spec.containers[0].image: Required value; spec.containers[1].image: Required value"},
            {META "spec: {containers: [{name: a, image: x, imagePullPolicy: Sometimes}]}\n",
             "spec.containers[0].imagePullPolicy: Unsupported value: \"Sometimes\": supported "
             "values: \"Always\", \"IfNotPresent\", \"Never\""},
            {META "spec: {containers: [{name: a, image: x, terminationMessagePolicy: Log}]}\n",
             "spec.containers[0].terminationMessagePolicy: Unsupported value: \"Log\": "
             "supported values: \"File\", \"FallbackToLogsOnError\""},
            {META "spec: {hostnameOverride: Not_A.Name, containers: [{name: a, image: x}]}\n",
             "spec.hostnameOverride: Invalid value: \"Not_A.Name\": a lowercase RFC 1123 "
             "subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
             "start and end with an alphanumeric character (e.g. 'example.com', regex used for "
             "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"},
            {META "spec: {hostnameOverride: db, setHostnameAsFQDN: true, hostNetwork: true, "
                  "containers: [{name: a, image: x}]}\n",
             "spec.hostnameOverride: Forbidden: may not be specified when setHostnameAsFQDN is "
             "true; spec.hostnameOverride: Forbidden: may not be specified when hostNetwork is "
             "true"},
            {META "spec: {volumes: [{name: v, emptyDir: {}}], containers: [{name: a, image: x, "
                  "volumeMounts: [{name: v, mountPath: /v, recursiveReadOnly: Enabled, "
                  "mountPropagation: HostToContainer}, {name: v, mountPath: /w, "
                  "recursiveReadOnly: Sometimes}]}]}\n",
             "spec.containers[0].volumeMounts[0].recursiveReadOnly: Forbidden: may only be "
             "specified when readOnly is true; spec.containers[0].volumeMounts[0]."
             "recursiveReadOnly: Forbidden: may only be specified when mountPropagation is None "
             "or not specified; spec.containers[0].volumeMounts[1].recursiveReadOnly: "
             "Unsupported value: \"Sometimes\": supported values: \"Disabled\", \"Enabled\", "
             "\"IfPossible\""},
            /* ContainerRestartRules (on by default since 1.35) */
            {META "spec: {containers: [{name: a, image: x, restartPolicy: Sometimes}]}\n",
             "spec.containers[0].restartPolicy: Unsupported value: \"Sometimes\": supported "
             "values: \"Always\", \"Never\", \"OnFailure\""},
            {META "spec: {containers: [{name: a, image: x, restartPolicyRules: [{action: "
                  "Restart, exitCodes: {operator: In, values: [1]}}]}]}\n",
             "spec.containers[0].restartPolicy: Required value: must specify restartPolicy "
             "when restart rules are used"},
            {META "spec: {containers: [{name: a, image: x, restartPolicy: Never, "
                  "restartPolicyRules: [{action: RestartAllContainers, exitCodes: {operator: "
                  "Between, values: [1]}}, {action: Restart}]}]}\n",
             "spec.containers[0].restartPolicyRules[0].action: Unsupported value: "
             "\"RestartAllContainers\": supported values: \"Restart\"; "
             "spec.containers[0].restartPolicyRules[0].exitCodes.operator: Unsupported value: "
             "\"Between\": supported values: \"In\", \"NotIn\"; "
             "spec.containers[0].restartPolicyRules[1].exitCodes: Required value: must be "
             "specified"},
            /* ports */
            {META "spec: {containers: [{name: a, image: x, ports: [{containerPort: 0}]}]}\n",
             "spec.containers[0].ports[0].containerPort: Required value"},
            {META "spec: {containers: [{name: a, image: x, ports: [{containerPort: 70000}]}]}\n",
             "spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between "
             "1 and 65535, inclusive"},
            {META "spec: {containers: [{name: a, image: x, ports: [{containerPort: 80, "
                  "hostPort: -1}]}]}\n",
             "spec.containers[0].ports[0].hostPort: Invalid value: -1: must be between 1 and "
             "65535, inclusive"},
            {META "spec: {containers: [{name: a, image: x, ports: [{containerPort: 80, "
                  "protocol: ICMP}]}]}\n",
             "spec.containers[0].ports[0].protocol: Unsupported value: \"ICMP\": supported "
             "values: \"SCTP\", \"TCP\", \"UDP\""},
            {META "spec: {containers: [{name: a, image: x, ports: [{containerPort: 80, name: "
                  "h}, {containerPort: 81, name: h}]}]}\n",
             "spec.containers[0].ports[1].name: Duplicate value: \"h\""},
            {META "spec: {containers: [{name: a, image: x, ports: [{containerPort: 80, "
                  "hostPort: 8080}]}, {name: b, image: x, ports: [{containerPort: 81, "
                  "hostPort: 8080}]}]}\n",
             "spec.containers[1].ports[0].hostPort: Duplicate value: \"TCP//8080\""},
            {META "spec: {hostNetwork: true, containers: [{name: a, image: x, ports: "
                  "[{containerPort: 80, hostPort: 8080}]}]}\n",
             "spec.containers[0].ports[0].hostPort: Invalid value: 8080: must match "
             "`containerPort` when `hostNetwork` is true"},
            /* resizePolicy (validateResizePolicy) */
            {META "spec: {containers: [{name: a, image: x, resizePolicy: [{resourceName: cpu, "
                  "restartPolicy: NotRequired}, {resourceName: cpu, restartPolicy: "
                  "RestartContainer}]}]}\n",
             "spec.containers[0].resizePolicy[1]: Duplicate value: \"cpu\""},
            {META "spec: {containers: [{name: a, image: x, resizePolicy: [{resourceName: disk, "
                  "restartPolicy: NotRequired}]}]}\n",
             "spec.containers[0].resizePolicy: Unsupported value: \"disk\": supported values: "
             "\"cpu\", \"memory\""},
            {META "spec: {containers: [{name: a, image: x, resizePolicy: [{resourceName: memory, "
                  "restartPolicy: Sometimes}]}]}\n",
             "spec.containers[0].resizePolicy: Unsupported value: \"Sometimes\": supported "
             "values: \"NotRequired\", \"RestartContainer\""},
            {META "spec: {containers: [{name: a, image: x, resizePolicy: [{restartPolicy: "
                  "NotRequired}]}]}\n",
             "spec.containers[0].resizePolicy: Required value"},
            {META "spec: {restartPolicy: Never, containers: [{name: a, image: x, resizePolicy: "
                  "[{resourceName: memory, restartPolicy: RestartContainer}]}]}\n",
             "spec.containers[0].resizePolicy: Invalid value: \"RestartContainer\": must be "
             "'NotRequired' when `restartPolicy` is 'Never'"},
            /* volumes and mounts */
            {META "spec: {volumes: [{name: v}, {name: v}], " ONE "}\n",
             "spec.volumes[1].name: Duplicate value: \"v\""},
            {META "spec: {volumes: [{name: V}], " ONE "}\n",
             "spec.volumes[0].name: Invalid value: \"V\": a lowercase RFC 1123 label must "
             "consist of lower case alphanumeric characters or '-', and must start and end "
             "with an alphanumeric character (e.g. 'my-name' or '123-abc', regex used for "
             "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"},
            {META "spec: {volumes: [{emptyDir: {}}], " ONE "}\n",
             "spec.volumes[0].name: Required value"},
            {META "spec: {volumes: [{name: v, hostPath: {}}], " ONE "}\n",
             "spec.volumes[0].hostPath.path: Required value"},
            {META "spec: {volumes: [{name: v, hostPath: {path: /x, type: Dir}}], " ONE "}\n",
             "spec.volumes[0].hostPath.type: Unsupported value: \"Dir\": supported values: "
             "\"\", \"BlockDevice\", \"CharDevice\", \"Directory\", \"DirectoryOrCreate\", "
             "\"File\", \"FileOrCreate\", \"Socket\""},
            {META "spec: {volumes: [{name: v, emptyDir: {}, hostPath: {path: /x}}], " ONE "}\n",
             "spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type"},
            {META "spec: {volumes: [{name: v, secret: {}}], " ONE "}\n",
             "spec.volumes[0].secret.secretName: Required value"},
            {META "spec: {volumes: [{name: v, configMap: {name: c, defaultMode: 1000}}], " ONE
                  "}\n",
             "spec.volumes[0].configMap.defaultMode: Invalid value: 1000: must be a number "
             "between 0 and 0777 (octal), both inclusive"},
            {META "spec: {volumes: [{name: v, configMap: {name: c, items: [{key: k, path: "
                  "../x}]}}], " ONE "}\n",
             "spec.volumes[0].configMap.items[0].path: Invalid value: \"../x\": must not "
             "contain '..'"},
            {META "spec: {containers: [{name: a, image: x, volumeMounts: [{name: nope, "
                  "mountPath: /d}]}]}\n",
             "spec.containers[0].volumeMounts[0].name: Not found: \"nope\""},
            {META "spec: {volumes: [{name: v}], containers: [{name: a, image: x, "
                  "volumeMounts: [{name: v}]}]}\n",
             "spec.containers[0].volumeMounts[0].mountPath: Required value"},
            {META "spec: {volumes: [{name: v}], containers: [{name: a, image: x, "
                  "volumeMounts: [{name: v, mountPath: /d}, {name: v, mountPath: /d}]}]}\n",
             "spec.containers[0].volumeMounts[1].mountPath: Invalid value: \"/d\": must be "
             "unique"},
            {META "spec: {volumes: [{name: v}], containers: [{name: a, image: x, "
                  "volumeMounts: [{name: v, mountPath: /d, mountPropagation: "
                  "Bidirectional}]}]}\n",
             "spec.containers[0].volumeMounts.mountPropagation: Forbidden: Bidirectional "
             "mount propagation is available only to privileged containers"},
            /* pod enums */
            {META "spec: {restartPolicy: Sometimes, " ONE "}\n",
             "spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: "
             "\"Always\", \"OnFailure\", \"Never\""},
            {META "spec: {dnsPolicy: Foo, " ONE "}\n",
             "spec.dnsPolicy: Unsupported value: \"Foo\": supported values: "
             "\"ClusterFirstWithHostNet\", \"ClusterFirst\", \"Default\", \"None\""},
            {META "spec: {dnsPolicy: None, " ONE "}\n",
             "spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is "
             "None"},
            {META "spec: {dnsPolicy: None, dnsConfig: {searches: [a]}, " ONE "}\n",
             "spec.dnsConfig.nameservers: Required value: must provide at least one DNS "
             "nameserver when `dnsPolicy` is None"},
            {META "spec: {dnsConfig: {nameservers: [1.2.3.400]}, " ONE "}\n",
             "spec.dnsConfig.nameservers[0]: Invalid value: \"1.2.3.400\": must be a valid IP "
             "address, (e.g. 10.9.8.7 or 2001:db8::ffff)"},
            {META "spec: {dnsConfig: {options: [{value: '1'}]}, " ONE "}\n",
             "spec.dnsConfig.options[0]: Required value: must not be empty"},
            /* probes and handlers */
            {META "spec: {containers: [{name: a, image: x, livenessProbe: {periodSeconds: 5}}]}\n",
             "spec.containers[0].livenessProbe: Required value: must specify a handler type"},
            {META "spec: {containers: [{name: a, image: x, livenessProbe: {exec: {command: "
                  "[x]}, tcpSocket: {port: 80}}}]}\n",
             "spec.containers[0].livenessProbe.tcpSocket: Forbidden: may not specify more "
             "than 1 handler type"},
            {META "spec: {containers: [{name: a, image: x, livenessProbe: {exec: {}}}]}\n",
             "spec.containers[0].livenessProbe.exec.command: Required value"},
            {META "spec: {containers: [{name: a, image: x, livenessProbe: {tcpSocket: "
                  "{port: 0}}}]}\n",
             "spec.containers[0].livenessProbe.tcpSocket.port: Invalid value: 0: must be "
             "between 1 and 65535, inclusive"},
            {META "spec: {containers: [{name: a, image: x, livenessProbe: {httpGet: {port: "
                  "80, scheme: FTP}}}]}\n",
             "spec.containers[0].livenessProbe.httpGet.scheme: Unsupported value: \"FTP\": "
             "supported values: \"HTTP\", \"HTTPS\""},
            {META "spec: {containers: [{name: a, image: x, livenessProbe: {exec: {command: "
                  "[x]}, successThreshold: 2}}]}\n",
             "spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1"},
            {META "spec: {containers: [{name: a, image: x, readinessProbe: {exec: {command: "
                  "[x]}, periodSeconds: -1}}]}\n",
             "spec.containers[0].readinessProbe.periodSeconds: Invalid value: -1: must be "
             "greater than or equal to 0"},
            {META "spec: {containers: [{name: a, image: x, readinessProbe: {exec: {command: "
                  "[x]}, terminationGracePeriodSeconds: 5}}]}\n",
             "spec.containers[0].readinessProbe.terminationGracePeriodSeconds: Invalid value: "
             "5: must not be set for readinessProbes"},
            {META "spec: {containers: [{name: a, image: x, lifecycle: {preStop: {sleep: "
                  "{seconds: 60}}}}]}\n",
             "spec.containers[0].lifecycle.preStop.sleep: Invalid value: 60: must be "
             "non-negative and less than terminationGracePeriodSeconds (30)"},
            {META "spec: {containers: [{name: a, image: x, lifecycle: {stopSignal: "
                  "SIGUSR1}}]}\n",
             "spec.containers[0].lifecycle.stopSignal: Forbidden: may not be set for "
             "containers with empty `spec.os.name`"},
            /* init containers and sidecars */
            {META "spec: {" ONE ", initContainers: [{name: i, image: x, restartPolicy: "
                  "Sometimes}]}\n",
             "spec.initContainers[0].restartPolicy: Unsupported value: \"Sometimes\": "
             "supported values: \"Always\", \"Never\", \"OnFailure\""},
            {META "spec: {" ONE ", initContainers: [{name: i, image: x, restartPolicy: "
                  "Always, restartPolicyRules: [{action: Restart, exitCodes: {operator: In, "
                  "values: [1]}}]}]}\n",
             "spec.initContainers[0].restartPolicyRules: Forbidden: restartPolicyRules are not "
             "allowed for init containers with restart policy Always"},
            {META "spec: {" ONE ", initContainers: [{name: i, image: x, livenessProbe: "
                  "{exec: {}}}]}\n",
             "spec.initContainers[0].livenessProbe: Forbidden: may not be set for init "
             "containers without restartPolicy=Always"},
            /* ephemeral containers: validateEphemeralContainers */
            {META "spec: {" ONE ", ephemeralContainers: [{name: d, image: x, ports: "
                  "[{containerPort: 80}]}]}\n",
             "spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral "
             "Container"},
            {META "spec: {" ONE ", ephemeralContainers: [{name: d, image: x, resources: "
                  "{limits: {}}, restartPolicy: Always}]}\n",
             "spec.ephemeralContainers[0].resources: Forbidden: cannot be set for an Ephemeral "
             "Container; spec.ephemeralContainers[0].restartPolicy: Forbidden: cannot be set for "
             "an Ephemeral Container"},
            {META "spec: {" ONE ", ephemeralContainers: [{name: d, image: x, lifecycle: "
                  "{preStop: {exec: {command: [a]}}}, readinessProbe: {exec: {}}}]}\n",
             "spec.ephemeralContainers[0].readinessProbe: Forbidden: cannot be set for an "
             "Ephemeral Container; spec.ephemeralContainers[0].lifecycle: Forbidden: cannot be "
             "set for an Ephemeral Container"},
            {META "spec: {" ONE ", volumes: [{name: v, emptyDir: {}}], ephemeralContainers: "
                  "[{name: d, image: x, volumeMounts: [{name: v, mountPath: /v, subPath: s}]}]}\n",
             "spec.ephemeralContainers[0].volumeMounts[0].subPath: Forbidden: cannot be set for "
             "an Ephemeral Container"},
            {META "spec: {" ONE ", ephemeralContainers: [{name: d, image: x, "
                  "targetContainerName: nope}]}\n",
             "spec.ephemeralContainers[0].targetContainerName: Not found: \"nope\""},
            {META "spec: {" ONE ", ephemeralContainers: [{name: a, image: x}]}\n",
             "spec.ephemeralContainers[0].name: Duplicate value: \"a\""},
            /* resources */
            {META "spec: {containers: [{name: a, image: x, resources: {requests: {cpu: 2}, "
                  "limits: {cpu: 1}}}]}\n",
             "spec.containers[0].resources.requests: Invalid value: \"2\": must be less than "
             "or equal to cpu limit of 1"},
            {META "spec: {containers: [{name: a, image: x, resources: {requests: {memory: "
                  "-1}}}]}\n",
             "spec.containers[0].resources.requests[memory]: Invalid value: \"-1\": must be "
             "greater than or equal to 0"},
            {META "spec: {containers: [{name: a, image: x, resources: {limits: {gpu: 1}}}]}\n",
             "spec.containers[0].resources.limits[gpu]: Invalid value: \"gpu\": must be a "
             "standard resource type or fully qualified; "
             "spec.containers[0].resources.limits[gpu]: Invalid value: \"gpu\": must be a "
             "standard resource for containers; "
             /* the request defaulted from the limit is checked too, as upstream does */
             "spec.containers[0].resources.requests[gpu]: Invalid value: \"gpu\": must be a "
             "standard resource type or fully qualified; "
             "spec.containers[0].resources.requests[gpu]: Invalid value: \"gpu\": must be a "
             "standard resource for containers"},
            {META "spec: {containers: [{name: a, image: x, resources: {requests: "
                  "{example.com/dev: 1}}}]}\n",
             "spec.containers[0].resources.limits: Required value: Limit must be set for non "
             "overcommitable resources"},
            /* env */
            {META "spec: {containers: [{name: a, image: x, env: [{value: v}]}]}\n",
             "spec.containers[0].env[0].name: Required value"},
            {META "spec: {containers: [{name: a, image: x, env: [{name: A=B}]}]}\n",
             "spec.containers[0].env[0].name: Invalid value: \"A=B\": a valid environment "
             "variable name must consist only of printable ASCII characters other than '='"},
            {META "spec: {containers: [{name: a, image: x, env: [{name: A, valueFrom: {}}]}]}\n",
             "spec.containers[0].env[0].valueFrom: Invalid value: \"\": must specify one of: "
             "`fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or `fileKeyRef`"},
            /* fileKeyRef (EnvFiles): validateFileKeySelector, and an emptyDir */
            {META "spec: {volumes: [{name: v, emptyDir: {}}], containers: [{name: a, image: x, "
                  "env: [{name: A, valueFrom: {fileKeyRef: {volumeName: v, path: ../x, key: "
                  "K}}}]}]}\n",
             "spec.containers[0].env[0].valueFrom.fileKeyRef.path: Invalid value: \"../x\": must "
             "not contain '..'"},
            {META "spec: {volumes: [{name: v, emptyDir: {}}], containers: [{name: a, image: x, "
                  "env: [{name: A, valueFrom: {fileKeyRef: {volumeName: v, path: f}}}]}]}\n",
             "spec.containers[0].env[0].valueFrom.fileKeyRef.key: Required value"},
            {META "spec: {containers: [{name: a, image: x, env: [{name: A, valueFrom: "
                  "{fileKeyRef: {volumeName: v, path: f, key: K}}}]}]}\n",
             "spec.containers[0].env[0].valueFrom.fileKeyRef.volumeName: Not found: \"v\""},
            {META "spec: {volumes: [{name: v, hostPath: {path: /tmp}}], containers: [{name: a, "
                  "image: x, env: [{name: A, valueFrom: {fileKeyRef: {volumeName: v, path: f, "
                  "key: K}}}]}]}\n",
             "spec.containers[0].env[0].valueFrom.fileKeyRef.volumeName: Invalid value: \"v\": "
             "referenced volume must be of type emptyDir"},
            {META "spec: {containers: [{name: a, image: x, env: [{name: A, valueFrom: "
                  "{fieldRef: {fieldPath: spec.hostname}}}]}]}\n",
             "spec.containers[0].env[0].valueFrom.fieldRef.fieldPath: Invalid value: "
             "\"spec.hostname\": error converting fieldPath: field label not supported: "
             "spec.hostname"},
            {META "spec: {containers: [{name: a, image: x, env: [{name: A, valueFrom: "
                  "{secretKeyRef: {name: s}}}]}]}\n",
             "spec.containers[0].env[0].valueFrom.secretKeyRef.key: Required value"},
            {META "spec: {containers: [{name: a, image: x, envFrom: [{prefix: P}]}]}\n",
             "spec.containers[0].envFrom: Invalid value: \"\": must specify one of: "
             "`configMapRef` or `secretRef`"},
            /* security contexts */
            {META "spec: {containers: [{name: a, image: x, securityContext: {runAsUser: -1}}]}\n",
             "spec.containers[0].securityContext.runAsUser: Invalid value: -1: must be "
             "between 0 and 2147483647, inclusive"},
            {META "spec: {securityContext: {supplementalGroups: [1, -2]}, " ONE "}\n",
             "spec.securityContext.supplementalGroups[1]: Invalid value: -2: must be between "
             "0 and 2147483647, inclusive"},
            {META "spec: {hostNetwork: true, securityContext: {sysctls: [{name: "
                  "net.core.somaxconn, value: '1024'}]}, " ONE "}\n",
             "spec.securityContext.sysctls[0].name: Invalid value: \"net.core.somaxconn\": "
             "may not be specified when 'hostNetwork' is true"},
            {META "spec: {securityContext: {sysctls: [{name: Net.X}]}, " ONE "}\n",
             "spec.securityContext.sysctls[0].name: Invalid value: \"Net.X\": must have at "
             "most 253 characters and match regex "
             "^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$"},
            /* pod scalars */
            {META "spec: {terminationGracePeriodSeconds: -1, " ONE "}\n",
             "spec.terminationGracePeriodSeconds: Invalid value: -1: must be greater than or "
             "equal to 0"},
            {META "spec: {activeDeadlineSeconds: 0, " ONE "}\n",
             "spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, "
             "inclusive"},
            {META "spec: {hostname: a.b, " ONE "}\n",
             "spec.hostname: Invalid value: \"a.b\": must not contain dots"},
            {META "spec: {hostAliases: [{ip: nope, hostnames: [a]}], " ONE "}\n",
             "spec.hostAliases[0].ip: Invalid value: \"nope\": must be a valid IP address, "
             "(e.g. 10.9.8.7 or 2001:db8::ffff)"},
            {META "spec: {runtimeClassName: '', " ONE "}\n",
             "spec.runtimeClassName: Invalid value: \"\": a lowercase RFC 1123 subdomain must "
             "consist of lower case alphanumeric characters, '-' or '.', and must start and "
             "end with an alphanumeric character (e.g. 'example.com', regex used for "
             "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                cleanup_free char *msg = NULL;
                struct pod *pod = decode(cases[i].yaml, &msg);
                if (pod) {
                        pod_unref(pod);
                        fail_msg("case %zu decoded:\n%s", i, cases[i].yaml);
                }
                if (strcmp(msg, cases[i].want) != 0)
                        fail_msg("case %zu:\n%s\ngot:  %s\nwant: %s", i, cases[i].yaml, msg,
                                 cases[i].want);
        }
}

/* What kubectl debug adds through the ephemeralcontainers subresource. */
static void test_ephemeral_containers(void **state)
{
        (void)state;
        cleanup_pod struct pod *pod = must_decode(
            "metadata: {name: p}\n"
            "spec:\n"
            "  containers: [{name: app, image: x:1}]\n"
            "  ephemeralContainers:\n"
            "  - {name: debugger, image: busybox:1, command: [sh], stdin: true, tty: true,\n"
            "     targetContainerName: app, env: [{name: A, value: b}],\n"
            "     resources: {}, ports: null, lifecycle: null}\n"
            "  - {name: plain, image: agnhost:2}\n");
        assert_int_equal(pod->n_ephemeral_containers, 2);
        const struct container *d = &pod->ephemeral_containers[0];
        assert_string_equal(d->name, "debugger");
        assert_string_equal(d->target_container_name, "app");
        assert_true(d->stdin_open && d->tty);
        assert_int_equal(d->n_env, 1);
        assert_int_equal(d->image_pull_policy, PULL_IF_NOT_PRESENT);
        assert_string_equal(d->termination_message_path, "/dev/termination-log");
        assert_null(pod->ephemeral_containers[1].target_container_name);
        assert_ptr_equal(pod_find_container(pod, "plain"), &pod->ephemeral_containers[1]);
        assert_ptr_equal(pod_find_ephemeral_container(pod, "debugger"), d);
        assert_null(pod_find_ephemeral_container(pod, "app"));
        /* the defaults are written into the raw object, as for the others */
        json_t *raw = raw_at(pod->raw, "spec.ephemeralContainers");
        assert_string_equal(
            json_string_value(json_object_get(json_array_get(raw, 1), "imagePullPolicy")),
            "IfNotPresent");
        /* each has a spec hash, as the other containers */
        assert_true(d->hash != 0 && d->hash != pod->ephemeral_containers[1].hash);
}

/* ContainerRestartRules: the container's rules, then its policy, then the
 * pod's (upstream podutil.ContainerShouldRestart) */
static void test_container_restart_rules(void **state)
{
        (void)state;
        cleanup_free char *msg = NULL;
        struct pod *pod =
            decode(META "spec:\n"
                        "  restartPolicy: Never\n"
                        "  initContainers:\n"
                        "  - {name: i, image: x, restartPolicy: OnFailure}\n"
                        "  containers:\n"
                        "  - name: a\n"
                        "    image: x\n"
                        "    restartPolicy: Never\n"
                        "    restartPolicyRules:\n"
                        "    - {action: Restart, exitCodes: {operator: In, values: [42, 43]}}\n"
                        "  - name: b\n"
                        "    image: x\n"
                        "    restartPolicy: Always\n"
                        "  - name: c\n"
                        "    image: x\n"
                        "    restartPolicy: OnFailure\n"
                        "    restartPolicyRules:\n"
                        "    - {action: Restart, exitCodes: {operator: NotIn, values: [0, 1]}}\n"
                        "  - {name: d, image: x}\n",
                   &msg);
        if (pod == NULL)
                fail_msg("%s", msg);
        const struct container *a = &pod->containers[0], *b = &pod->containers[1],
                               *c = &pod->containers[2], *d = &pod->containers[3];
        assert_int_equal(a->n_restart_rules, 1);
        assert_true(a->restart_rules[0].exit_codes_in);
        assert_int_equal(a->restart_rules[0].n_exit_codes, 2);
        /* a: Never, but 42 and 43 restart it */
        assert_true(container_should_restart(a, pod, 42));
        assert_true(container_should_restart(a, pod, 43));
        assert_false(container_should_restart(a, pod, 1));
        assert_false(container_should_restart(a, pod, 0));
        /* b: Always in a Never pod */
        assert_true(container_should_restart(b, pod, 0));
        /* c: NotIn [0, 1] restarts 2; 1 is a failure, OnFailure restarts it; 0 not */
        assert_true(container_should_restart(c, pod, 2));
        assert_true(container_should_restart(c, pod, 1));
        assert_false(container_should_restart(c, pod, 0));
        /* d: the pod's Never */
        assert_false(container_should_restart(d, pod, 1));
        /* a regular init container with its own policy is no sidecar */
        assert_false(container_is_sidecar(&pod->init_containers[0]));
        assert_true(container_should_restart(&pod->init_containers[0], pod, 1));
        pod_unref(pod);
}

static void test_accepted_edge_cases(void **state)
{
        (void)state;
        static const char *const ok[] = {
            /* kind and apiVersion may be absent (list items) */
            META "spec: {" ONE "}\n",
            /* unknown fields are kept, not rejected */
            META "spec: {" ONE ", tolerations: [{operator: Exists}], futureField: 1}\n",
            /* 80.0 is an integer; a port name where a name is allowed */
            META "spec: {containers: [{name: a, image: x, ports: [{containerPort: 80.0}], "
                 "readinessProbe: {tcpSocket: {port: web}}}]}\n",
            /* quantities as bare numbers; null is zero */
            META "spec: {containers: [{name: a, image: x, resources: {limits: {cpu: 1, "
                 "memory: ~}}}]}\n",
            /* None with nameservers, os for stopSignal */
            META "spec: {dnsPolicy: None, dnsConfig: {nameservers: [1.1.1.1], searches: "
                 "[_srv.example.com.]}, os: {name: linux}, containers: [{name: a, image: x, "
                 "lifecycle: {stopSignal: SIGRTMIN+3}}]}\n",
            /* sidecar with probes and lifecycle */
            META "spec: {" ONE ", initContainers: [{name: s, image: x, restartPolicy: "
                 "Always, startupProbe: {grpc: {port: 9000}}, lifecycle: {postStart: "
                 "{exec: {command: [x]}}}}]}\n",
            /* hugepages with memory, extended resources equal */
            META "spec: {containers: [{name: a, image: x, resources: {limits: "
                 "{hugepages-2Mi: 4Mi, memory: 1Gi, example.com/dev: 2}}}]}\n",
        };
        for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
                cleanup_free char *msg = NULL;
                struct pod *pod = decode(ok[i], &msg);
                if (pod == NULL)
                        fail_msg("case %zu: %s\n%s", i, msg, ok[i]);
                pod_unref(pod);
        }
        cleanup_pod struct pod *pod = must_decode(ok[1]);
        assert_non_null(raw_at(pod->raw, "spec.futureField"));
        cleanup_pod struct pod *q = must_decode(ok[3]);
        assert_true(q->containers[0].resources.limits.has_memory);
        assert_int_equal(q->containers[0].resources.limits.memory, 0);
        assert_string_equal(
            json_string_value(raw_at(q->raw, "spec.containers.0.resources.limits.cpu")), "1");
}

static const char *qos_of(const char *containers)
{
        char yaml[2048];
        snprintf(yaml, sizeof(yaml), "metadata: {name: p}\nspec:\n%s", containers);
        cleanup_pod struct pod *pod = must_decode(yaml);
        return qos_class_name(pod_qos_class(pod));
}

/* Extended resources (a device plugin's vendor.com/gpu): counted in the
 * typed lists, limits defaulting the requests; native and kubernetes.io/
 * names are not extended. */
static void test_extended_resources(void **state)
{
        (void)state;
        struct pod *p =
            must_decode("apiVersion: v1\nkind: Pod\nmetadata: {name: g}\nspec:\n  containers:\n"
                        "  - name: c\n    image: busybox\n"
                        "    resources: {limits: {example.com/gpu: 2, cpu: 1, other.io/thing: '3',"
                        " kubernetes.io/x: 1}, requests: {other.io/thing: '3'}}\n");
        const struct resource_list *lim = &p->containers[0].resources.limits;
        const struct resource_list *req = &p->containers[0].resources.requests;
        assert_int_equal(lim->n_extended, 2);
        assert_int_equal(resource_list_extended(lim, "example.com/gpu"), 2);
        assert_int_equal(resource_list_extended(req, "example.com/gpu"), 2);
        assert_int_equal(resource_list_extended(req, "other.io/thing"), 3);
        assert_int_equal(resource_list_extended(lim, "other.io/thing"), 3);
        assert_int_equal(resource_list_extended(lim, "kubernetes.io/x"), 0);
        assert_int_equal(resource_list_extended(lim, "cpu"), 0);
        pod_unref(p);

        /* huge pages (bytes, by the spec's name) and spec.overhead */
        p = must_decode("apiVersion: v1\nkind: Pod\nmetadata: {name: g}\nspec:\n"
                        "  overhead: {cpu: 250m, memory: 64Mi, hugepages-2Mi: 2Mi}\n"
                        "  securityContext: {fsGroup: 5, fsGroupChangePolicy: OnRootMismatch}\n"
                        "  containers:\n  - name: c\n    image: busybox\n"
                        "    resources: {limits: {hugepages-2Mi: 4Mi, memory: 1Gi}}\n");
        lim = &p->containers[0].resources.limits;
        assert_int_equal(lim->n_hugepages, 1);
        assert_int_equal(resource_list_hugepages(lim, "hugepages-2Mi"), 4 << 20);
        assert_int_equal(
            resource_list_hugepages(&p->containers[0].resources.requests, "hugepages-2Mi"),
            4 << 20);
        assert_int_equal(resource_list_extended(lim, "hugepages-2Mi"), 0);
        assert_true(p->has_overhead);
        assert_int_equal(p->overhead.cpu_milli, 250);
        assert_int_equal(p->overhead.memory, 64 << 20);
        assert_int_equal(resource_list_hugepages(&p->overhead, "hugepages-2Mi"), 2 << 20);
        assert_int_equal(resource_hugepage_size("hugepages-2Mi"), 2 << 20);
        assert_int_equal(resource_hugepage_size("hugepages-1Gi"), 1 << 30);
        assert_int_equal(resource_hugepage_size("hugepages-x"), -1);
        assert_int_equal(resource_hugepage_size("memory"), -1);
        pod_unref(p);
}

static void test_qos_class(void **state)
{
        (void)state;
        static const char *const cases[][2] = {
            {"  containers: [{name: a, image: x}]\n", "BestEffort"},
            {"  containers: [{name: a, image: x, resources: {requests: {cpu: 0, memory: 0}}}]\n",
             "BestEffort"},
            {"  containers: [{name: a, image: x, resources: {requests: {ephemeral-storage: "
             "1Gi}}}]\n",
             "BestEffort"},
            {"  containers: [{name: a, image: x, resources: {requests: {cpu: 100m}}}]\n",
             "Burstable"},
            /* requests defaulted from limits */
            {"  containers: [{name: a, image: x, resources: {limits: {cpu: 1, memory: 1Gi}}}]\n",
             "Guaranteed"},
            {"  containers: [{name: a, image: x, resources: {limits: {cpu: 1}}}]\n", "Burstable"},
            {"  containers: [{name: a, image: x, resources: {limits: {cpu: 1, memory: 1Gi}, "
             "requests: {cpu: 500m}}}]\n",
             "Burstable"},
            {"  containers: [{name: a, image: x, resources: {limits: {cpu: 1, memory: 1Gi}, "
             "requests: {cpu: 1000m, memory: 1024Mi}}}]\n",
             "Guaranteed"},
            /* init containers count */
            {"  containers: [{name: a, image: x, resources: {limits: {cpu: 1, memory: 1Gi}}}]\n"
             "  initContainers: [{name: i, image: x, resources: {limits: {cpu: 2, memory: "
             "2Gi}}}]\n",
             "Guaranteed"},
            {"  containers: [{name: a, image: x, resources: {limits: {cpu: 1, memory: 1Gi}}}]\n"
             "  initContainers: [{name: i, image: x}]\n",
             "Burstable"},
            {"  containers: [{name: a, image: x}]\n"
             "  initContainers: [{name: i, image: x, resources: {requests: {memory: 1Mi}}}]\n",
             "Burstable"},
            {"  containers: [{name: a, image: x, resources: {limits: {cpu: 1, memory: 1Gi}}}, "
             "{name: b, image: x}]\n",
             "Burstable"},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                const char *got = qos_of(cases[i][0]);
                if (strcmp(got, cases[i][1]) != 0)
                        fail_msg("case %zu: %s, want %s\n%s", i, got, cases[i][1], cases[i][0]);
        }
}

static uint64_t hash_of(const char *yaml)
{
        cleanup_pod struct pod *pod = must_decode(yaml);
        return pod->containers[0].hash;
}

static void test_resize_policy(void **state)
{
        (void)state;
        cleanup_pod struct pod *pod = must_decode(
            "metadata: {name: p}\n"
            "spec:\n"
            "  containers:\n"
            "  - {name: a, image: x, resizePolicy: [{resourceName: memory, restartPolicy: "
            "RestartContainer}, {resourceName: cpu, restartPolicy: NotRequired}]}\n"
            "  - {name: b, image: x}\n"
            "  initContainers:\n"
            "  - {name: s, image: x, restartPolicy: Always, resizePolicy: [{resourceName: cpu, "
            "restartPolicy: RestartContainer}]}\n");
        assert_int_equal(pod->containers[0].resize_memory, RESIZE_RESTART_CONTAINER);
        assert_int_equal(pod->containers[0].resize_cpu, RESIZE_NOT_REQUIRED);
        /* no policy: NotRequired */
        assert_int_equal(pod->containers[1].resize_memory, RESIZE_NOT_REQUIRED);
        assert_int_equal(pod->containers[1].resize_cpu, RESIZE_NOT_REQUIRED);
        assert_int_equal(pod->init_containers[0].resize_cpu, RESIZE_RESTART_CONTAINER);
}

static void test_container_hash(void **state)
{
        (void)state;
        uint64_t base = hash_of("metadata: {name: p, labels: {a: b}}\n"
                                "spec: {containers: [{name: a, image: x:1}]}\n");
        assert_int_not_equal(base, 0);
        /* only the name and the image count (upstream pickFieldsToHash):
         * labels, defaults, args and resources do not */
        assert_int_equal(base, hash_of("metadata: {name: p, labels: {a: c}}\n"
                                       "spec: {containers: [{name: a, image: x:1}]}\n"));
        assert_int_equal(base, hash_of("metadata: {name: p}\n"
                                       "spec: {containers: [{image: x:1, name: a, "
                                       "imagePullPolicy: IfNotPresent, args: [-v], "
                                       "resources: {requests: {cpu: 10m}}}]}\n"));
        assert_int_not_equal(base, hash_of("metadata: {name: p, labels: {a: b}}\n"
                                           "spec: {containers: [{name: a, image: x:2}]}\n"));
        /* upstream's own values: HashContainer of v1.35.8 run on these */
        assert_int_equal(api_container_hash("c1", "registry.k8s.io/e2e-test-images/agnhost:2.59"),
                         0x17342903);
        assert_int_equal(api_container_hash("web", "localhost/busybox:1.35"), 0x46a25507);
        /* json.Marshal's HTML escapes, control bytes, U+2028 and invalid UTF-8 */
        assert_int_equal(api_container_hash("a<b>&", "x"), 0xeda759a0);
        assert_int_equal(api_container_hash("\xc3\xa9\xe2\x80\xa8\x01\t\"\\", "\xff\xfeok\xe2\x82"),
                         0x56100b77);
}

/* metadata.managedFields is kept as text, out of raw (memory), and put
 * back, whole and last in metadata, by pod_raw_copy (/pods). */
static void test_managed_fields_kept_as_text(void **state)
{
        (void)state;
        cleanup_pod struct pod *pod =
            must_decode("apiVersion: v1\nkind: Pod\n"
                        "metadata:\n  name: web\n  uid: u1\n"
                        "  managedFields:\n"
                        "  - manager: kubectl-create\n    operation: Update\n"
                        "    fieldsType: FieldsV1\n"
                        "    fieldsV1: {'f:spec': {'f:containers': {}}}\n"
                        "  labels: {app: web}\n"
                        "spec:\n  containers:\n  - name: c\n    image: busybox\n");
        assert_null(json_object_get(json_object_get(pod->raw, "metadata"), "managedFields"));
        assert_non_null(pod->managed_fields);
        cleanup_json json_t *copy = pod_raw_copy(pod);
        json_t *meta = json_object_get(copy, "metadata");
        json_t *mf = json_object_get(meta, "managedFields");
        assert_int_equal(json_array_size(mf), 1);
        assert_string_equal(json_string_value(json_object_get(json_array_get(mf, 0), "manager")),
                            "kubectl-create");
        assert_non_null(json_object_get(
            json_object_get(json_object_get(json_array_get(mf, 0), "fieldsV1"), "f:spec"),
            "f:containers"));
        /* the rest is raw's, and raw is untouched */
        assert_string_equal(json_string_value(json_object_get(meta, "name")), "web");
        assert_null(json_object_get(json_object_get(pod->raw, "metadata"), "managedFields"));
        const char *last = NULL;
        const char *key;
        json_t *v;
        json_object_foreach(meta, key, v) last = key;
        assert_string_equal(last, "managedFields");

        /* a pod without them: NULL, and the copy has none */
        cleanup_pod struct pod *plain = must_decode(GOOD_POD);
        assert_null(plain->managed_fields);
        cleanup_json json_t *c2 = pod_raw_copy(plain);
        assert_null(json_object_get(json_object_get(c2, "metadata"), "managedFields"));
        assert_true(json_equal(c2, plain->raw));
}

static void test_refcount_and_static(void **state)
{
        (void)state;
        struct pod *pod = must_decode("metadata: {name: p, namespace: kube-system, annotations: "
                                      "{kubernetes.io/config.source: file}}\n"
                                      "spec: {" ONE "}\n");
        assert_true(pod_is_static(pod));
        assert_string_equal(pod_full_name(pod), "kube-system/p");
        assert_ptr_equal(pod_ref(pod), pod);
        pod_unref(pod);
        assert_string_equal(pod->name, "p"); /* still alive */
        pod_unref(pod);
        pod_unref(NULL);

        cleanup_pod struct pod *api = must_decode(META "spec: {" ONE "}\n");
        api->source = POD_SOURCE_API;
        assert_false(pod_is_static(api));
        api->source = POD_SOURCE_HTTP;
        assert_true(pod_is_static(api));
}

static void test_kv_list(void **state)
{
        (void)state;
        struct kv_list l = {0};
        kv_list_add(&l, "a", "1");
        kv_list_add(&l, "b", "2");
        assert_string_equal(kv_list_get(&l, "b"), "2");
        kv_list_release(&l);
        assert_int_equal(l.n, 0);
        assert_null(l.items);
        assert_null(kv_list_get(&l, "a"));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_good_pod_fields),
            cmocka_unit_test(test_good_pod_raw_defaults),
            cmocka_unit_test(test_host_network_defaults_host_port),
            cmocka_unit_test(test_pull_policy_from_image),
            cmocka_unit_test(test_validation_errors),
            cmocka_unit_test(test_ephemeral_containers),
            cmocka_unit_test(test_container_restart_rules),
            cmocka_unit_test(test_accepted_edge_cases),
            cmocka_unit_test(test_extended_resources),
            cmocka_unit_test(test_qos_class),
            cmocka_unit_test(test_resize_policy),
            cmocka_unit_test(test_container_hash),
            cmocka_unit_test(test_managed_fields_kept_as_text),
            cmocka_unit_test(test_refcount_and_static),
            cmocka_unit_test(test_kv_list),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
