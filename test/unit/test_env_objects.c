/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A container's environment from configMaps and secrets (valueFrom
 * configMapKeyRef / secretKeyRef, envFrom with prefix) read through a fake
 * `struct kube_objects`, as the container config a runtime receives; the
 * errors a user sees in CreateContainerConfigError, as upstream words them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_pods.h"

#include "api/decode.h"
#include "kuberuntime/builders.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/xalloc.h"
#include "util/log.h"
#include "util/yamljson.h"
#include "volume/volume.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[] = "/tmp/ck-test-env-XXXXXX";

struct fake_kube {
        struct kube_objects iface;
        json_t *objects; /* "configmaps/ns/name" -> object */
        int gets;
        int fail_status;
        json_t *services; /* what list_services answers */
        bool services_synced;
};

static struct fake_kube kube;

static int fake_get(void *opaque, const char *resource, const char *ns, const char *name,
                    const char *pod_uid, json_t **out, ck_error_t *err)
{
        (void)pod_uid;
        struct fake_kube *k = opaque;
        k->gets++;
        if (k->fail_status)
                return ck_error_make_code(err, k->fail_status,
                                          "%s \"%s\" is forbidden: no relationship found", resource,
                                          name);
        cleanup_free char *key = xasprintf("%s/%s/%s", resource, ns, name);
        json_t *o = json_object_get(k->objects, key);
        if (o == NULL)
                return ck_error_make_code(err, 404, "%s \"%s\" not found", resource, name);
        *out = json_incref(o);
        return 0;
}

static bool fake_list_services(void *opaque, json_t **out)
{
        struct fake_kube *k = opaque;
        *out = k->services_synced ? json_incref(k->services) : json_array();
        return k->services_synced;
}

static void put_object(const char *resource, const char *name, const char *json)
{
        cleanup_free char *key = xasprintf("%s/shop/%s", resource, name);
        json_object_set_new(kube.objects, key, json_loads(json, 0, NULL));
}

static struct pod *pod_with_container(const char *cextra)
{
        cleanup_free char *yaml = xasprintf("apiVersion: v1\n"
                                            "kind: Pod\n"
                                            "metadata: {name: web, namespace: shop, uid: e1-uid}\n"
                                            "spec:\n"
                                            "  containers:\n"
                                            "  - name: app\n"
                                            "    image: localhost/busybox:1.35\n"
                                            "%s",
                                            cextra);
        return test_pod_yaml(yaml);
}

/* The config of p's first container, or NULL with the error message in
 * *msg (new string). */
static Runtime__V1__ContainerConfig *build_pod(const struct pod *p, const struct kube_objects *k,
                                               char **msg)
{
        struct kuberuntime_options o = {.root_dir = root, .node_name = "node1"};
        Runtime__V1__ContainerConfig *cfg = NULL;
        ck_error_t err = NULL;
        /* as sync_pod does before any container starts (/etc/hosts goes there) */
        if (volume_make_pod_dirs(root, p, &err) < 0)
                fail_msg("pod dirs: %s", ck_error_msg(err));
        if (kuberuntime_container_config_with_objects(&o, p, &p->containers[0], 0, "10.0.0.7", NULL,
                                                      k, &cfg, &err) < 0) {
                *msg = xstrdup(ck_error_msg(err));
                ck_error_release(&err);
                cfg = NULL;
        }
        return cfg;
}

/* The same for a pod "web" whose container has the YAML lines cextra. */
static Runtime__V1__ContainerConfig *build(const char *cextra, const struct kube_objects *k,
                                           char **msg)
{
        cleanup_pod struct pod *p = pod_with_container(cextra);
        return build_pod(p, k, msg);
}

/* build_pod that must succeed. */
static Runtime__V1__ContainerConfig *build_pod_ok(const struct pod *p)
{
        cleanup_free char *msg = NULL;
        Runtime__V1__ContainerConfig *cfg = build_pod(p, &kube.iface, &msg);
        if (cfg == NULL)
                fail_msg("container config: %s", msg);
        return cfg;
}

static Runtime__V1__ContainerConfig *build_ok(const char *cextra)
{
        cleanup_free char *msg = NULL;
        Runtime__V1__ContainerConfig *cfg = build(cextra, &kube.iface, &msg);
        if (cfg == NULL)
                fail_msg("container config: %s", msg);
        return cfg;
}

static char *build_error(const char *cextra, const struct kube_objects *k)
{
        char *msg = NULL;
        Runtime__V1__ContainerConfig *cfg = build(cextra, k, &msg);
        if (cfg != NULL)
                fail_msg("container config unexpectedly built");
        return msg;
}

static const char *env_value(const Runtime__V1__ContainerConfig *c, const char *k)
{
        for (size_t i = 0; i < c->n_envs; i++)
                if (strcmp(c->envs[i]->key, k) == 0)
                        return c->envs[i]->value;
        return NULL;
}

static int env_index(const Runtime__V1__ContainerConfig *c, const char *k)
{
        for (size_t i = 0; i < c->n_envs; i++)
                if (strcmp(c->envs[i]->key, k) == 0)
                        return (int)i;
        return -1;
}

static int reset(void **state)
{
        (void)state;
        json_decref(kube.objects);
        json_decref(kube.services);
        kube = (struct fake_kube){.iface = {.get = fake_get, .opaque = &kube},
                                  .objects = json_object()};
        kube.services = json_loads(
            "[{\"metadata\": {\"namespace\": \"default\", \"name\": \"kubernetes\"},"
            "  \"spec\": {\"clusterIP\": \"10.96.0.1\", \"ports\": [{\"name\": \"https\","
            "   \"port\": 443, \"protocol\": \"TCP\"}]}},"
            " {\"metadata\": {\"namespace\": \"shop\", \"name\": \"cart\"},"
            "  \"spec\": {\"clusterIP\": \"10.96.0.7\", \"ports\": [{\"port\": 8080}]}}]",
            0, NULL);
        kube.services_synced = true;
        put_object("configmaps", "settings",
                   "{\"data\": {\"color\": \"blue\", \"size\": \"L\", \"my.dotted-key\": \"v\"},"
                   " \"binaryData\": {\"blob\": \"AAE=\"}}");
        put_object("secrets", "db",
                   "{\"data\": {\"password\": \"czNjcjN0\", \"user\": \"YWRtaW4=\"}}");
        return 0;
}

static void test_key_refs(void **state)
{
        (void)state;
        Runtime__V1__ContainerConfig *cfg =
            build_ok("    env:\n"
                     "    - {name: COLOR, valueFrom: {configMapKeyRef: {name: settings, key: "
                     "color}}}\n"
                     "    - {name: PW, valueFrom: {secretKeyRef: {name: db, key: password}}}\n"
                     "    - {name: USER, valueFrom: {secretKeyRef: {name: db, key: user}}}\n"
                     "    - {name: DSN, value: \"$(USER):$(PW)@$(COLOR)\"}\n"
                     "    - {name: OPT, valueFrom: {configMapKeyRef: {name: settings, key: nope, "
                     "optional: true}}}\n"
                     "    - {name: GONE, valueFrom: {secretKeyRef: {name: other, key: k, "
                     "optional: true}}}\n");
        assert_string_equal(env_value(cfg, "COLOR"), "blue");
        assert_string_equal(env_value(cfg, "PW"), "s3cr3t");
        assert_string_equal(env_value(cfg, "DSN"), "admin:s3cr3t@blue");
        assert_null(env_value(cfg, "OPT"));
        assert_null(env_value(cfg, "GONE"));
        /* each object read once for the container */
        assert_int_equal(kube.gets, 3);
        kuberuntime_container_config_free(cfg);
}

static void test_key_ref_errors(void **state)
{
        (void)state;
        cleanup_free char *m1 = build_error(
            "    env:\n"
            "    - {name: X, valueFrom: {configMapKeyRef: {name: settings, key: nope}}}\n",
            &kube.iface);
        assert_non_null(strstr(m1, "couldn't find key nope in ConfigMap shop/settings"));
        cleanup_free char *m2 =
            build_error("    env:\n"
                        "    - {name: X, valueFrom: {secretKeyRef: {name: db, key: nope}}}\n",
                        &kube.iface);
        assert_non_null(strstr(m2, "couldn't find key nope in Secret shop/db"));
        cleanup_free char *m3 =
            build_error("    env:\n"
                        "    - {name: X, valueFrom: {configMapKeyRef: {name: missing, key: k}}}\n",
                        &kube.iface);
        assert_non_null(strstr(m3, "configmap \"missing\" not found"));
        cleanup_free char *m4 =
            build_error("    envFrom:\n    - {secretRef: {name: missing}}\n", &kube.iface);
        assert_non_null(strstr(m4, "secret \"missing\" not found"));
        /* binaryData is not for the environment */
        cleanup_free char *m5 = build_error(
            "    env:\n"
            "    - {name: X, valueFrom: {configMapKeyRef: {name: settings, key: blob}}}\n",
            &kube.iface);
        assert_non_null(strstr(m5, "couldn't find key blob in ConfigMap shop/settings"));
        /* an optional object the node may not read is still an error */
        kube.fail_status = 403;
        cleanup_free char *m6 = build_error(
            "    env:\n"
            "    - {name: X, valueFrom: {secretKeyRef: {name: db, key: k, optional: true}}}\n",
            &kube.iface);
        assert_non_null(strstr(m6, "couldn't get secret shop/db"));
        assert_non_null(strstr(m6, "is forbidden"));
}

static void test_env_from(void **state)
{
        (void)state;
        Runtime__V1__ContainerConfig *cfg =
            build_ok("    env:\n"
                     "    - {name: CFG_color, value: overridden}\n"
                     "    - {name: LAST, value: x}\n"
                     "    envFrom:\n"
                     "    - {prefix: CFG_, configMapRef: {name: settings}}\n"
                     "    - {secretRef: {name: db}}\n"
                     "    - {configMapRef: {name: absent, optional: true}}\n");
        assert_string_equal(env_value(cfg, "CFG_color"), "overridden");
        assert_string_equal(env_value(cfg, "CFG_size"), "L");
        /* 1.35: keys that are not C identifiers are kept */
        assert_string_equal(env_value(cfg, "CFG_my.dotted-key"), "v");
        assert_null(env_value(cfg, "CFG_blob"));
        assert_string_equal(env_value(cfg, "password"), "s3cr3t");
        assert_string_equal(env_value(cfg, "user"), "admin");
        /* envFrom first, env after */
        assert_true(env_index(cfg, "CFG_size") < env_index(cfg, "LAST"));
        kuberuntime_container_config_free(cfg);
}

static void test_standalone(void **state)
{
        (void)state;
        cleanup_free char *msg = build_error(
            "    env:\n"
            "    - {name: X, valueFrom: {configMapKeyRef: {name: settings, key: color}}}\n",
            NULL);
        assert_non_null(strstr(msg, "couldn't get configMap shop/settings, no kubeClient defined"));
        assert_int_equal(kube.gets, 0);
}

static void test_field_refs(void **state)
{
        (void)state;
        Runtime__V1__ContainerConfig *cfg =
            build_ok("    env:\n"
                     "    - {name: IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}\n"
                     "    - {name: IPS, valueFrom: {fieldRef: {fieldPath: status.podIPs}}}\n"
                     "    - {name: NODE, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}\n"
                     "    - {name: NS, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}\n");
        assert_string_equal(env_value(cfg, "IP"), "10.0.0.7");
        assert_string_equal(env_value(cfg, "IPS"), "10.0.0.7");
        assert_string_equal(env_value(cfg, "NODE"), "node1");
        assert_string_equal(env_value(cfg, "NS"), "shop");
        kuberuntime_container_config_free(cfg);
}

static void test_service_links(void **state)
{
        (void)state;
        kube.iface.list_services = fake_list_services;
        Runtime__V1__ContainerConfig *cfg = build_ok(
            "    env:\n"
            "    - {name: URL, value: 'http://$(CART_SERVICE_HOST):$(CART_SERVICE_PORT)'}\n"
            "    - {name: CART_SERVICE_PORT, value: '9999'}\n"
            "    - {name: LATE, value: '$(CART_SERVICE_PORT)'}\n"
            "    command: [sh, -c, 'echo $(KUBERNETES_SERVICE_HOST)']\n");
        assert_string_equal(env_value(cfg, "KUBERNETES_SERVICE_HOST"), "10.96.0.1");
        assert_string_equal(env_value(cfg, "KUBERNETES_SERVICE_PORT"), "443");
        assert_string_equal(env_value(cfg, "KUBERNETES_PORT_443_TCP"), "tcp://10.96.0.1:443");
        assert_string_equal(env_value(cfg, "CART_SERVICE_HOST"), "10.96.0.7");
        assert_string_equal(env_value(cfg, "CART_PORT"), "tcp://10.96.0.7:8080");
        /* $(VAR) sees the service variables; a declared variable overrides
         * one, for itself and for what follows it (upstream MappingFuncFor) */
        assert_string_equal(env_value(cfg, "URL"), "http://10.96.0.7:8080");
        assert_string_equal(env_value(cfg, "CART_SERVICE_PORT"), "9999");
        assert_string_equal(env_value(cfg, "LATE"), "9999");
        assert_string_equal(cfg->command[2], "echo 10.96.0.1");
        /* each name once */
        for (size_t i = 0; i < cfg->n_envs; i++)
                for (size_t j = i + 1; j < cfg->n_envs; j++)
                        assert_string_not_equal(cfg->envs[i]->key, cfg->envs[j]->key);
        kuberuntime_container_config_free(cfg);
}

static void test_service_links_disabled(void **state)
{
        (void)state;
        kube.iface.list_services = fake_list_services;
        cleanup_free char *yaml = xasprintf("apiVersion: v1\n"
                                            "kind: Pod\n"
                                            "metadata: {name: web, namespace: shop, uid: e2-uid}\n"
                                            "spec:\n"
                                            "  enableServiceLinks: false\n"
                                            "  containers:\n"
                                            "  - {name: app, image: localhost/busybox:1.35}\n");
        struct pod *p = test_pod_yaml(yaml);
        Runtime__V1__ContainerConfig *cfg = build_pod_ok(p);
        assert_string_equal(env_value(cfg, "KUBERNETES_SERVICE_HOST"), "10.96.0.1");
        assert_null(env_value(cfg, "CART_SERVICE_HOST"));
        kuberuntime_container_config_free(cfg);
        pod_unref(p);
}

static void test_services_not_yet_listed(void **state)
{
        (void)state;
        kube.iface.list_services = fake_list_services;
        kube.services_synced = false;
        /* a pod from the apiserver waits, with upstream's message */
        struct pod *api = pod_with_container("");
        api->source = POD_SOURCE_API;
        assert_false(pod_is_static(api));
        cleanup_free char *msg = NULL;
        assert_null(build_pod(api, &kube.iface, &msg));
        assert_non_null(
            strstr(msg, "services have not yet been read at least once, cannot construct envvars"));
        /* once listed, it starts */
        kube.services_synced = true;
        Runtime__V1__ContainerConfig *acfg = build_pod_ok(api);
        assert_string_equal(env_value(acfg, "KUBERNETES_SERVICE_HOST"), "10.96.0.1");
        kuberuntime_container_config_free(acfg);
        pod_unref(api);
        kube.services_synced = false;
        /* a static pod does not wait */
        cleanup_free char *yaml = xasprintf("apiVersion: v1\n"
                                            "kind: Pod\n"
                                            "metadata:\n"
                                            "  name: web\n"
                                            "  namespace: shop\n"
                                            "  uid: e3-uid\n"
                                            "  annotations: {kubernetes.io/config.source: file}\n"
                                            "spec:\n"
                                            "  containers:\n"
                                            "  - {name: app, image: localhost/busybox:1.35}\n");
        struct pod *p = test_pod_yaml(yaml);
        assert_true(pod_is_static(p));
        Runtime__V1__ContainerConfig *cfg = build_pod_ok(p);
        assert_null(env_value(cfg, "KUBERNETES_SERVICE_HOST"));
        kuberuntime_container_config_free(cfg);
        pod_unref(p);
        /* without a Service source (standalone): no variables, no wait */
        kube.iface.list_services = NULL;
        Runtime__V1__ContainerConfig *cfg2 = build_ok("");
        assert_null(env_value(cfg2, "KUBERNETES_SERVICE_HOST"));
        kuberuntime_container_config_free(cfg2);
}

static int setup(void **state)
{
        (void)state;
        if (mkdtemp(root) == NULL)
                return -1;
        log_set_fd(open("/dev/null", O_WRONLY | O_CLOEXEC));
        return 0;
}

static int teardown(void **state)
{
        (void)state;
        json_decref(kube.objects);
        json_decref(kube.services);
        ck_error_t err = NULL;
        int r = fs_remove_all(root, &err);
        ck_error_release(&err);
        return r;
}

/* valueFrom.fileKeyRef: the file is looked up as if the volume were the
 * root (upstream's securejoin): an absolute path and in-volume symlinks
 * work, nothing leads out of it; only a regular file is read (a FIFO would
 * block the worker). */
static void test_file_key_refs(void **state)
{
        (void)state;
        cleanup_free char *vol = xasprintf("%s/envvol", root);
        ck_error_t err = NULL;
        assert_int_equal(fs_mkdir_p(vol, 0755, &err), 0);
        cleanup_free char *file = xasprintf("%s/config.env", vol);
        assert_int_equal(fs_write_file_atomic(file, "K='v'\n", 6, 0644, &err), 0);
        cleanup_free char *link = xasprintf("%s/link.env", vol);
        assert_int_equal(symlink("/config.env", link), 0); /* absolute: inside the volume */
        cleanup_free char *esc = xasprintf("%s/esc.env", vol);
        assert_int_equal(symlink("../../../../etc/hostname", esc), 0);
        cleanup_free char *fifo = xasprintf("%s/fifo.env", vol);
        assert_int_equal(mkfifo(fifo, 0644), 0);
        struct kv_list paths = {0};
        kv_list_add(&paths, "config", vol);
        struct kuberuntime_options o = {.root_dir = root, .node_name = "node1"};
        static const struct {
                const char *path;
                const char *want; /* NULL: an error */
        } cases[] = {
            {"config.env", "v"}, {"/config.env", "v"}, {"link.env", "v"},
            {"esc.env", NULL},   {"fifo.env", NULL},   {"missing.env", NULL},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                cleanup_free char *yaml = xasprintf(
                    "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: shop, uid: e1}\n"
                    "spec:\n  volumes: [{name: config, emptyDir: {}}]\n  containers:\n"
                    "  - name: app\n    image: localhost/busybox:1.35\n"
                    "    env: [{name: K, valueFrom: {fileKeyRef: {volumeName: config, "
                    "path: '%s', key: K}}}]\n",
                    cases[i].path);
                cleanup_pod struct pod *p = test_pod_yaml(yaml);
                assert_int_equal(volume_make_pod_dirs(root, p, &err), 0);
                Runtime__V1__ContainerConfig *cfg = NULL;
                int r = kuberuntime_container_config_with_objects(
                    &o, p, &p->containers[0], 0, "10.0.0.7", &paths, NULL, &cfg, &err);
                if (cases[i].want != NULL) {
                        if (r < 0)
                                fail_msg("%s: %s", cases[i].path, ck_error_msg(err));
                        assert_string_equal(env_value(cfg, "K"), cases[i].want);
                        kuberuntime_container_config_free(cfg);
                } else {
                        if (r == 0)
                                fail_msg("%s: read, want an error", cases[i].path);
                        assert_string_equal(ck_error_msg(err), "couldn't parse env file");
                        ck_error_release(&err);
                }
        }
        kv_list_release(&paths);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup(test_key_refs, reset),
            cmocka_unit_test_setup(test_key_ref_errors, reset),
            cmocka_unit_test_setup(test_env_from, reset),
            cmocka_unit_test_setup(test_standalone, reset),
            cmocka_unit_test_setup(test_field_refs, reset),
            cmocka_unit_test_setup(test_service_links, reset),
            cmocka_unit_test_setup(test_service_links_disabled, reset),
            cmocka_unit_test_setup(test_services_not_yet_listed, reset),
            cmocka_unit_test_setup(test_file_key_refs, reset),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
