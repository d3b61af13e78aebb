/* SPDX-License-Identifier: Apache-2.0 */
/* The node agent's pure pieces (node/node_internal.h): the Node object and
 * its status as upstream's setters build them, the "changed?" check, the
 * status patch, registration on an existing Node and the Lease. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "node/node.h"
#include "node/node_internal.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define SEC 1000000000LL
/* 2024-05-01T10:00:00Z */
#define T0 (1714557600LL * SEC)

static struct node_machine_info machine(void)
{
        struct node_machine_info mi = {
            .num_cores = 2,
            .memory = 16374584LL * 1024,
            .ephemeral_storage = 101445540LL * 1024,
            .hugepages = {{2LL << 20, 0}, {1LL << 30, 0}},
            .n_hugepages = 2,
            .machine_id = "3d1219c7c4c5404aaa1f6d2a48adfda4",
            .system_uuid = "",
            .boot_id = "b0b1",
            .kernel_version = "6.1.0-18-amd64",
            .os_image = "Debian GNU/Linux 12 (bookworm)",
        };
        return mi;
}

static struct node_status_inputs inputs(const struct node_machine_info *mi, int64_t now)
{
        struct node_status_inputs in = {
            .machine = mi,
            .hostname = "n1",
            .node_ip = "127.0.0.1",
            .max_pods = 110,
            .port = 10250,
            .eviction_memory_bytes = 100LL << 20,
            .eviction_nodefs_fraction = 0.1f,
            .runtime_version = "containerd://1.6.20",
            .runtime_ready = true,
            .now_ns = now,
        };
        return in;
}

static const char *sget(const json_t *root, const char *path)
{
        /* "a.b.c": object keys separated by '.', '/' allowed in keys via '|' */
        cleanup_free char *p = xstrdup(path);
        const json_t *cur = root;
        for (char *save = NULL, *tok = strtok_r(p, ".", &save); tok;
             tok = strtok_r(NULL, ".", &save)) {
                for (char *c = tok; *c; c++)
                        if (*c == '|')
                                *c = '.';
                cur = json_object_get(cur, tok);
        }
        return json_string_value(cur);
}

static json_t *condition(json_t *node, const char *type)
{
        size_t i;
        json_t *c;
        json_array_foreach(json_object_get(json_object_get(node, "status"), "conditions"), i, c)
        {
                if (strcmp(json_string_value(json_object_get(c, "type")), type) == 0)
                        return c;
        }
        return NULL;
}

static void test_quantities_print_as_the_apiserver_does(void **state)
{
        (void)state;
        struct {
                int64_t v;
                const char *bin;
        } b[] = {{16374584LL * 1024, "16374584Ki"},
                 {16384000LL * 1024, "16000Mi"},
                 {2LL << 20, "2Mi"},
                 {1LL << 30, "1Gi"},
                 {0, "0"},
                 {1536, "1536"},
                 {1000, "1k"},
                 {512, "512"},
                 {93492209510LL, "93492209510"}};
        for (size_t i = 0; i < ARRAY_SIZE(b); i++) {
                cleanup_free char *s = node_quantity_binary(b[i].v);
                assert_string_equal(s, b[i].bin);
        }
        struct {
                int64_t m;
                const char *dec;
        } d[] = {{2000, "2"}, {1900, "1900m"}, {110000, "110"}, {0, "0"}, {1000000, "1k"}};
        for (size_t i = 0; i < ARRAY_SIZE(d); i++) {
                cleanup_free char *s = node_quantity_decimal_milli(d[i].m);
                assert_string_equal(s, d[i].dec);
        }
}

static void test_meminfo_and_os_release(void **state)
{
        (void)state;
        assert_int_equal(node_parse_meminfo_total("MemFree: 1 kB\nMemTotal:       16384000 kB\n"),
                         16384000LL * 1024);
        assert_int_equal(node_parse_meminfo_total("MemFree: 1 kB\n"), -1);
        cleanup_free char *p =
            node_parse_os_release_pretty("NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian "
                                         "GNU/Linux 12 (bookworm)\"\nID=debian\n");
        assert_string_equal(p, "Debian GNU/Linux 12 (bookworm)");
        assert_null(node_parse_os_release_pretty("NAME=x\n"));
}

static void test_initial_node_labels_and_annotation(void **state)
{
        (void)state;
        struct node_machine_info mi = machine();
        struct node_status_inputs in = inputs(&mi, T0);
        struct kv kvs[] = {{"role", "edge"}, {"kubernetes.io/hostname", "override"}};
        struct kv_list labels = {kvs, 2};
        cleanup_json json_t *n = node_build_initial("n1", &labels, &in, NULL);
        assert_string_equal(sget(n, "kind"), "Node");
        assert_string_equal(sget(n, "metadata.name"), "n1");
        assert_string_equal(sget(n, "metadata.labels.kubernetes|io/os"), "linux");
        assert_string_equal(sget(n, "metadata.labels.kubernetes|io/arch"), NODE_GOARCH);
        assert_string_equal(sget(n, "metadata.labels.beta|kubernetes|io/os"), "linux");
        assert_string_equal(sget(n, "metadata.labels.beta|kubernetes|io/arch"), NODE_GOARCH);
        /* --node-labels win over the defaults, as upstream */
        assert_string_equal(sget(n, "metadata.labels.kubernetes|io/hostname"), "override");
        assert_string_equal(sget(n, "metadata.labels.role"), "edge");
        assert_string_equal(
            sget(n, "metadata.annotations.volumes|kubernetes|io/controller-managed-attach-detach"),
            "true");
}

static void test_capacity_and_allocatable(void **state)
{
        (void)state;
        struct node_machine_info mi = machine();
        struct node_status_inputs in = inputs(&mi, T0);
        in.reserved_cpu_milli = 100;
        in.reserved_memory = 256LL << 20;
        cleanup_json json_t *n = node_build_initial("n1", NULL, &in, NULL);
        assert_string_equal(sget(n, "status.capacity.cpu"), "2");
        assert_string_equal(sget(n, "status.capacity.memory"), "16374584Ki");
        assert_string_equal(sget(n, "status.capacity.pods"), "110");
        assert_string_equal(sget(n, "status.capacity.hugepages-2Mi"), "0");
        assert_string_equal(sget(n, "status.capacity.hugepages-1Gi"), "0");
        assert_string_equal(sget(n, "status.capacity.ephemeral-storage"), "101445540Ki");
        assert_string_equal(sget(n, "status.allocatable.cpu"), "1900m");
        /* 16374584Ki - 256Mi reserved - 100Mi evictionHard */
        assert_string_equal(sget(n, "status.allocatable.memory"), "16010040Ki");
        assert_string_equal(sget(n, "status.allocatable.pods"), "110");
        /* capacity - int64(capacity * float32(0.1)): upstream's figure */
        int64_t cap = 101445540LL * 1024;
        int64_t want = cap - (int64_t)((double)cap * (double)0.1f);
        cleanup_free char *ws = node_quantity_binary(want);
        assert_string_equal(sget(n, "status.allocatable.ephemeral-storage"), ws);
        assert_string_equal(sget(n, "status.allocatable.hugepages-2Mi"), "0");

        /* huge pages come off allocatable memory; reservations never go negative */
        mi.hugepages[0].pages = 512; /* 1Gi of 2Mi pages */
        in.reserved_cpu_milli = 5000;
        cleanup_json json_t *h = node_build_initial("n1", NULL, &in, NULL);
        assert_string_equal(sget(h, "status.capacity.hugepages-2Mi"), "1Gi");
        assert_string_equal(sget(h, "status.allocatable.memory"), "14961464Ki");
        assert_string_equal(sget(h, "status.allocatable.cpu"), "0");
}

/* Device plugin resources (upstream's MachineInfo setter): capacity all
 * devices, allocatable the healthy ones; all unhealthy from the start:
 * allocatable as capacity; a removed resource stays at 0; an extended
 * resource gone from capacity leaves allocatable. */
static void test_device_plugin_resources(void **state)
{
        (void)state;
        struct node_machine_info mi = machine();
        struct node_status_inputs in = inputs(&mi, T0);
        struct node_device_resource dev[] = {
            {.name = "example.com/gpu", .capacity = 4, .allocatable = 3},
            {.name = "test.device/x", .capacity = 0, .allocatable = -1},
        };
        in.devices = dev;
        in.n_devices = 2;
        cleanup_json json_t *n = node_build_initial("n1", NULL, &in, NULL);
        assert_string_equal(sget(n, "status.capacity.example|com/gpu"), "4");
        assert_string_equal(sget(n, "status.allocatable.example|com/gpu"), "3");
        assert_string_equal(sget(n, "status.capacity.test|device/x"), "0");
        assert_string_equal(sget(n, "status.allocatable.test|device/x"), "0");

        /* the plugin gone for good: reported removed once, 0 ever after */
        char *removed[] = {"example.com/gpu"};
        in.devices = NULL;
        in.n_devices = 0;
        in.removed_devices = removed;
        in.n_removed_devices = 1;
        node_set_status(n, &in, NULL);
        assert_string_equal(sget(n, "status.capacity.example|com/gpu"), "0");
        assert_string_equal(sget(n, "status.allocatable.example|com/gpu"), "0");
        in.removed_devices = NULL;
        in.n_removed_devices = 0;
        node_set_status(n, &in, NULL);
        assert_string_equal(sget(n, "status.capacity.example|com/gpu"), "0");
        assert_string_equal(sget(n, "status.allocatable.example|com/gpu"), "0");

        /* an extended resource allocatable has and capacity not: dropped */
        json_object_set_new(json_object_get(json_object_get(n, "status"), "allocatable"),
                            "stale.io/thing", json_string("2"));
        node_set_status(n, &in, NULL);
        assert_null(sget(n, "status.allocatable.stale|io/thing"));
}

/* status.images as upstream's Images setter: largest first (ties: ID
 * descending), digests then tags, at most 5 names, at most
 * nodeStatusMaxImages images; none when the runtime could not list them. */
static void test_images(void **state)
{
        (void)state;
        struct node_machine_info mi = machine();
        struct node_status_inputs in = inputs(&mi, T0);
        char *small_names[] = {"localhost/pause:3.10"};
        char *big_names[] = {
            "docker.io/library/nginx@sha256:aa", "a:1", "a:2", "a:3", "a:4", "a:5"};
        char *tie_names[] = {"localhost/busybox:1.35"};
        struct node_image images[] = {
            {.id = "sha256:01", .names = small_names, .n_names = 1, .size = 300000},
            {.id = "sha256:02", .names = big_names, .n_names = 6, .size = 70000000},
            {.id = "sha256:03", .names = tie_names, .n_names = 1, .size = 300000},
            {.id = "sha256:04", .names = NULL, .n_names = 0, .size = 10},
        };
        in.images_known = true;
        in.images = images;
        in.n_images = 4;
        in.max_images = 50;
        cleanup_json json_t *n = node_build_initial("n1", NULL, &in, NULL);
        json_t *list = json_object_get(json_object_get(n, "status"), "images");
        assert_int_equal(json_array_size(list), 4);
        json_t *first = json_array_get(list, 0);
        assert_int_equal(json_integer_value(json_object_get(first, "sizeBytes")), 70000000);
        json_t *names = json_object_get(first, "names");
        assert_int_equal(json_array_size(names), 5);
        assert_string_equal(json_string_value(json_array_get(names, 0)),
                            "docker.io/library/nginx@sha256:aa");
        assert_string_equal(json_string_value(json_array_get(names, 4)), "a:4");
        /* the same size: the larger ID first */
        assert_string_equal(
            json_string_value(json_array_get(json_object_get(json_array_get(list, 1), "names"), 0)),
            "localhost/busybox:1.35");
        /* no names: an empty list (names has no omitempty upstream) */
        assert_int_equal(json_array_size(json_object_get(json_array_get(list, 3), "names")), 0);
        assert_int_equal(json_integer_value(json_object_get(json_array_get(list, 3), "sizeBytes")),
                         10);

        /* nodeStatusMaxImages 2: the two largest */
        in.max_images = 2;
        node_set_status(n, &in, NULL);
        list = json_object_get(json_object_get(n, "status"), "images");
        assert_int_equal(json_array_size(list), 2);
        /* 0: none at all, the field gone */
        in.max_images = 0;
        node_set_status(n, &in, NULL);
        assert_null(json_object_get(json_object_get(n, "status"), "images"));
        /* -1: every image */
        in.max_images = -1;
        node_set_status(n, &in, NULL);
        assert_int_equal(json_array_size(json_object_get(json_object_get(n, "status"), "images")),
                         4);
        /* the runtime did not answer: no images */
        in.images_error = true;
        node_set_status(n, &in, NULL);
        assert_null(json_object_get(json_object_get(n, "status"), "images"));
}

static void test_addresses_node_info_endpoints(void **state)
{
        (void)state;
        struct node_machine_info mi = machine();
        struct node_status_inputs in = inputs(&mi, T0);
        cleanup_json json_t *n = node_build_initial("n1", NULL, &in, NULL);
        json_t *st = json_object_get(n, "status");
        cleanup_json json_t *want_addr =
            json_pack("[{s:s,s:s},{s:s,s:s}]", "type", "InternalIP", "address", "127.0.0.1", "type",
                      "Hostname", "address", "n1");
        assert_true(json_equal(json_object_get(st, "addresses"), want_addr));
        assert_string_equal(sget(n, "status.nodeInfo.kubeletVersion"), "v1.35.0");
        assert_string_equal(sget(n, "status.nodeInfo.kubeProxyVersion"), "");
        assert_string_equal(sget(n, "status.nodeInfo.containerRuntimeVersion"),
                            "containerd://1.6.20");
        assert_string_equal(sget(n, "status.nodeInfo.osImage"), "Debian GNU/Linux 12 (bookworm)");
        assert_string_equal(sget(n, "status.nodeInfo.kernelVersion"), "6.1.0-18-amd64");
        assert_string_equal(sget(n, "status.nodeInfo.operatingSystem"), "linux");
        assert_string_equal(sget(n, "status.nodeInfo.architecture"), NODE_GOARCH);
        assert_string_equal(sget(n, "status.nodeInfo.machineID"),
                            "3d1219c7c4c5404aaa1f6d2a48adfda4");
        assert_string_equal(sget(n, "status.nodeInfo.bootID"), "b0b1");
        assert_string_equal(sget(n, "status.nodeInfo.systemUUID"), "");
        assert_int_equal(
            json_integer_value(json_object_get(
                json_object_get(json_object_get(st, "daemonEndpoints"), "kubeletEndpoint"),
                "Port")),
            10250);
        /* an unknown runtime version reads "Unknown" */
        in.runtime_version = NULL;
        node_set_status(n, &in, NULL);
        assert_string_equal(sget(n, "status.nodeInfo.containerRuntimeVersion"), "Unknown");
}

static void test_conditions_order_and_messages(void **state)
{
        (void)state;
        struct node_machine_info mi = machine();
        struct node_status_inputs in = inputs(&mi, T0);
        struct node_status_events ev = {0};
        cleanup_json json_t *n = json_pack("{s:{s:s}}", "metadata", "name", "n1");
        node_set_status(n, &in, &ev);
        json_t *conds = json_object_get(json_object_get(n, "status"), "conditions");
        const char *types[] = {"MemoryPressure", "DiskPressure", "PIDPressure", "Ready"};
        const char *reasons[] = {"KubeletHasSufficientMemory", "KubeletHasNoDiskPressure",
                                 "KubeletHasSufficientPID", "KubeletReady"};
        const char *messages[] = {
            "kubelet has sufficient memory available", "kubelet has no disk pressure",
            "kubelet has sufficient PID available", "kubelet is posting ready status"};
        assert_int_equal(json_array_size(conds), 4);
        for (size_t i = 0; i < 4; i++) {
                json_t *c = json_array_get(conds, i);
                assert_string_equal(sget(c, "type"), types[i]);
                assert_string_equal(sget(c, "status"), i == 3 ? "True" : "False");
                assert_string_equal(sget(c, "reason"), reasons[i]);
                assert_string_equal(sget(c, "message"), messages[i]);
                assert_string_equal(sget(c, "lastHeartbeatTime"), "2024-05-01T10:00:00Z");
                assert_string_equal(sget(c, "lastTransitionTime"), "2024-05-01T10:00:00Z");
        }
        /* the pressure transitions Unknown -> False are events; a first Ready is not */
        assert_int_equal(ev.n, 3);
        assert_string_equal(ev.reasons[0], "NodeHasSufficientMemory");
        assert_string_equal(ev.reasons[1], "NodeHasNoDiskPressure");
        assert_string_equal(ev.reasons[2], "NodeHasSufficientPID");
}

/* The eviction manager's conditions: True with upstream's reasons and
 * messages, an event on each transition, back to False. */
static void test_pressure_conditions(void **state)
{
        (void)state;
        struct node_machine_info mi = machine();
        struct node_status_inputs in = inputs(&mi, T0);
        cleanup_json json_t *n = node_build_initial("n1", NULL, &in, NULL);
        in.now_ns = T0 + 10 * SEC;
        in.pressure = 1u | 4u; /* memory and PID */
        struct node_status_events ev = {0};
        node_set_status(n, &in, &ev);
        json_t *m = condition(n, "MemoryPressure");
        assert_string_equal(sget(m, "status"), "True");
        assert_string_equal(sget(m, "reason"), "KubeletHasInsufficientMemory");
        assert_string_equal(sget(m, "message"), "kubelet has insufficient memory available");
        assert_string_equal(sget(m, "lastTransitionTime"), "2024-05-01T10:00:10Z");
        json_t *p = condition(n, "PIDPressure");
        assert_string_equal(sget(p, "status"), "True");
        assert_string_equal(sget(p, "reason"), "KubeletHasInsufficientPID");
        assert_string_equal(sget(p, "message"), "kubelet has insufficient PID available");
        assert_string_equal(sget(condition(n, "DiskPressure"), "status"), "False");
        assert_int_equal(ev.n, 2);
        assert_string_equal(ev.reasons[0], "NodeHasInsufficientMemory");
        assert_string_equal(ev.reasons[1], "NodeHasInsufficientPID");
        /* disk pressure alone now */
        in.now_ns = T0 + 20 * SEC;
        in.pressure = 2u;
        struct node_status_events ev2 = {0};
        node_set_status(n, &in, &ev2);
        json_t *d = condition(n, "DiskPressure");
        assert_string_equal(sget(d, "status"), "True");
        assert_string_equal(sget(d, "reason"), "KubeletHasDiskPressure");
        assert_string_equal(sget(d, "message"), "kubelet has disk pressure");
        assert_string_equal(sget(condition(n, "MemoryPressure"), "reason"),
                            "KubeletHasSufficientMemory");
        assert_int_equal(ev2.n, 3);
        assert_string_equal(ev2.reasons[0], "NodeHasSufficientMemory");
        assert_string_equal(ev2.reasons[1], "NodeHasDiskPressure");
        assert_string_equal(ev2.reasons[2], "NodeHasSufficientPID");
}

static void test_heartbeat_moves_transition_stays(void **state)
{
        (void)state;
        struct node_machine_info mi = machine();
        struct node_status_inputs in = inputs(&mi, T0);
        cleanup_json json_t *n = node_build_initial("n1", NULL, &in, NULL);
        cleanup_json json_t *later = json_deep_copy(n);
        in.now_ns = T0 + 10 * SEC;
        struct node_status_events ev = {0};
        node_set_status(later, &in, &ev);
        assert_int_equal(ev.n, 0);
        assert_string_equal(sget(condition(later, "Ready"), "lastHeartbeatTime"),
                            "2024-05-01T10:00:10Z");
        assert_string_equal(sget(condition(later, "Ready"), "lastTransitionTime"),
                            "2024-05-01T10:00:00Z");
        assert_string_equal(sget(condition(later, "DiskPressure"), "lastHeartbeatTime"),
                            "2024-05-01T10:00:10Z");
        assert_string_equal(sget(condition(later, "DiskPressure"), "lastTransitionTime"),
                            "2024-05-01T10:00:00Z");
        /* only heartbeats moved: not a change worth a patch */
        assert_false(
            node_status_changed(json_object_get(n, "status"), json_object_get(later, "status")));

        /* the runtime goes away: Ready False with its message, a transition */
        cleanup_json json_t *down = json_deep_copy(later);
        in.now_ns = T0 + 20 * SEC;
        in.runtime_ready = false;
        in.not_ready_message = "container runtime network not ready: NetworkReady=false "
                               "reason:NetworkPluginNotReady message:cni not initialized";
        memset(&ev, 0, sizeof(ev));
        node_set_status(down, &in, &ev);
        json_t *r = condition(down, "Ready");
        assert_string_equal(sget(r, "status"), "False");
        assert_string_equal(sget(r, "reason"), "KubeletNotReady");
        assert_string_equal(sget(r, "message"), in.not_ready_message);
        assert_string_equal(sget(r, "lastTransitionTime"), "2024-05-01T10:00:20Z");
        assert_int_equal(ev.n, 1);
        assert_string_equal(ev.reasons[0], "NodeNotReady");
        assert_true(
            node_status_changed(json_object_get(later, "status"), json_object_get(down, "status")));
        /* Ready stays last */
        json_t *conds = json_object_get(json_object_get(down, "status"), "conditions");
        assert_string_equal(sget(json_array_get(conds, 3), "type"), "Ready");

        /* back: NodeReady, a new transition time */
        in.now_ns = T0 + 30 * SEC;
        in.runtime_ready = true;
        memset(&ev, 0, sizeof(ev));
        node_set_status(down, &in, &ev);
        assert_string_equal(sget(condition(down, "Ready"), "status"), "True");
        assert_string_equal(sget(condition(down, "Ready"), "lastTransitionTime"),
                            "2024-05-01T10:00:30Z");
        assert_int_equal(ev.n, 1);
        assert_string_equal(ev.reasons[0], "NodeReady");
}

static void test_not_ready_without_capacity_aggregates(void **state)
{
        (void)state;
        struct node_machine_info mi = machine();
        mi.ephemeral_storage = -1;
        struct node_status_inputs in = inputs(&mi, T0);
        cleanup_json json_t *n = node_build_initial("n1", NULL, &in, NULL);
        json_t *r = condition(n, "Ready");
        assert_string_equal(sget(r, "status"), "False");
        assert_string_equal(sget(r, "message"),
                            "missing node capacity for resources: ephemeral-storage");
        in.runtime_ready = false;
        in.not_ready_message = NULL;
        node_set_status(n, &in, NULL);
        assert_string_equal(sget(condition(n, "Ready"), "message"),
                            "[container runtime is down, missing node capacity for resources: "
                            "ephemeral-storage]");
}

/* the node shutdown manager's error (upstream's nodeShutdownManagerErrorsFunc):
 * Ready False while the node shuts down, after the runtime's error */
static void test_not_ready_while_shutting_down(void **state)
{
        (void)state;
        struct node_machine_info mi = machine();
        struct node_status_inputs in = inputs(&mi, T0);
        cleanup_json json_t *n = node_build_initial("n1", NULL, &in, NULL);
        assert_string_equal(sget(condition(n, "Ready"), "status"), "True");
        in.shutting_down = true;
        struct node_status_events ev = {0};
        node_set_status(n, &in, &ev);
        json_t *r = condition(n, "Ready");
        assert_string_equal(sget(r, "status"), "False");
        assert_string_equal(sget(r, "reason"), "KubeletNotReady");
        assert_string_equal(sget(r, "message"), "node is shutting down");
        assert_int_equal(ev.n, 1);
        assert_string_equal(ev.reasons[0], "NodeNotReady");
        in.runtime_ready = false;
        node_set_status(n, &in, NULL);
        assert_string_equal(sget(condition(n, "Ready"), "message"),
                            "[container runtime is down, node is shutting down]");
}

static void test_status_changed_is_semantic(void **state)
{
        (void)state;
        cleanup_json json_t *a = json_pack(
            "{s:{s:s, s:s}, s:{s:s, s:s}, s:[{s:s, s:s, s:s}]}", "capacity", "memory", "1Gi", "cpu",
            "2", "nodeInfo", "machineID", "m", "kubeProxyVersion", "", "conditions", "type",
            "Ready", "status", "True", "lastHeartbeatTime", "2024-05-01T10:00:00Z");
        /* the same values written differently, conditions in another order */
        cleanup_json json_t *b =
            json_pack("{s:{s:s, s:s}, s:{s:s}, s:[{s:s, s:s, s:s}]}", "capacity", "memory",
                      "1024Mi", "cpu", "2000m", "nodeInfo", "machineID", "m", "conditions", "type",
                      "Ready", "status", "True", "lastHeartbeatTime", "2024-05-01T10:09:00Z");
        assert_false(node_status_changed(a, b));
        json_object_set_new(json_object_get(b, "capacity"), "memory", json_string("2Gi"));
        assert_true(node_status_changed(a, b));
        json_object_set_new(json_object_get(b, "capacity"), "memory", json_string("1Gi"));
        json_object_set_new(json_object_get(b, "nodeInfo"), "bootID", json_string("x"));
        assert_true(node_status_changed(a, b));
        json_object_del(json_object_get(b, "nodeInfo"), "bootID");
        json_array_append_new(json_object_get(b, "conditions"),
                              json_pack("{s:s, s:s}", "type", "DiskPressure", "status", "False"));
        assert_true(node_status_changed(a, b));
}

static void test_status_patch_has_only_what_changed(void **state)
{
        (void)state;
        struct node_machine_info mi = machine();
        struct node_status_inputs in = inputs(&mi, T0);
        cleanup_json json_t *old = node_build_initial("n1", NULL, &in, NULL);
        json_object_set_new(json_object_get(json_object_get(old, "status"), "capacity"),
                            "hugepages-32Mi", json_string("0"));
        json_object_set_new(json_object_get(old, "metadata"), "resourceVersion", json_string("7"));
        cleanup_json json_t *new = json_deep_copy(old);
        json_object_del(json_object_get(json_object_get(new, "status"), "capacity"),
                        "hugepages-32Mi");
        in.now_ns = T0 + 10 * SEC;
        in.node_ip = "10.0.0.5";
        node_set_status(new, &in, NULL);

        cleanup_json json_t *p = node_status_patch(old, new);
        json_t *ps = json_object_get(p, "status");
        assert_null(json_object_get(p, "metadata"));
        /* unchanged fields are not sent */
        assert_null(json_object_get(ps, "nodeInfo"));
        assert_null(json_object_get(ps, "allocatable"));
        assert_null(json_object_get(ps, "daemonEndpoints"));
        /* a removed resource is deleted, the rest of the map left alone */
        cleanup_json json_t *want_cap = json_pack("{s:n}", "hugepages-32Mi");
        assert_true(json_equal(json_object_get(ps, "capacity"), want_cap));
        /* changed addresses replace the list */
        json_t *addr = json_object_get(ps, "addresses");
        assert_int_equal(json_array_size(addr), 3);
        assert_string_equal(sget(json_array_get(addr, 0), "address"), "10.0.0.5");
        assert_string_equal(sget(json_array_get(addr, 2), "$patch"), "replace");
        /* the heartbeats moved: every condition, merged by type, in order */
        assert_int_equal(json_array_size(json_object_get(ps, "conditions")), 4);
        assert_int_equal(json_array_size(json_object_get(ps, "$setElementOrder/conditions")), 4);

        /* labels forced back by the status loop are patched too */
        json_object_del(json_object_get(json_object_get(old, "metadata"), "labels"),
                        "kubernetes.io/os");
        cleanup_json json_t *fixed = json_deep_copy(old);
        assert_true(node_ensure_os_arch_labels(fixed));
        assert_false(node_ensure_os_arch_labels(fixed));
        cleanup_json json_t *lp = node_status_patch(old, fixed);
        cleanup_json json_t *want_lp =
            json_pack("{s:{s:{s:s}}}", "metadata", "labels", "kubernetes.io/os", "linux");
        assert_true(json_equal(lp, want_lp));

        cleanup_json json_t *same = node_status_patch(old, old);
        assert_int_equal(json_object_size(same), 0);
}

static void test_reconcile_existing_node(void **state)
{
        (void)state;
        struct node_machine_info mi = machine();
        struct node_status_inputs in = inputs(&mi, T0);
        struct kv kvs[] = {{"role", "edge"}};
        struct kv_list labels = {kvs, 1};
        cleanup_json json_t *initial = node_build_initial("n1", &labels, &in, NULL);

        /* an identical node needs nothing */
        cleanup_json json_t *same = json_deep_copy(initial);
        assert_false(node_reconcile_existing(same, initial));

        cleanup_json json_t *existing = json_pack(
            "{s:{s:s, s:s, s:{s:s, s:s, s:s}}, s:{s:{s:s, s:s}, s:{s:s, s:s}}}", "metadata", "name",
            "n1", "uid", "u1", "labels", "kubernetes.io/arch", "s390x", "custom", "keep",
            "beta.kubernetes.io/os", "linux", "status", "capacity", "cpu", "2", "hugepages-64Ki",
            "0", "allocatable", "cpu", "2", "hugepages-64Ki", "0");
        assert_true(node_reconcile_existing(existing, initial));
        assert_string_equal(sget(existing, "metadata.labels.kubernetes|io/arch"), NODE_GOARCH);
        assert_string_equal(sget(existing, "metadata.labels.kubernetes|io/hostname"), "n1");
        assert_string_equal(sget(existing, "metadata.labels.custom"), "keep");
        /* --node-labels are not reconciled onto an existing node (upstream) */
        assert_null(sget(existing, "metadata.labels.role"));
        assert_string_equal(
            sget(existing,
                 "metadata.annotations.volumes|kubernetes|io/controller-managed-attach-detach"),
            "true");
        assert_null(sget(existing, "status.capacity.hugepages-64Ki"));
        assert_null(sget(existing, "status.allocatable.hugepages-64Ki"));
        assert_string_equal(sget(existing, "status.capacity.hugepages-2Mi"), "0");
        assert_string_equal(sget(existing, "status.allocatable.hugepages-1Gi"), "0");
}

static void test_lease_object(void **state)
{
        (void)state;
        char buf[40];
        assert_string_equal(node_format_micro_time(T0 + 123456789, buf),
                            "2024-05-01T10:00:00.123456Z");
        assert_string_equal(node_format_micro_time(T0, buf), "2024-05-01T10:00:00.000000Z");
        assert_string_equal(node_format_micro_time(T0 - 1, buf), "2024-05-01T09:59:59.999999Z");

        /* new, before the Node's uid is known: no owner yet */
        cleanup_json json_t *l = node_lease_build(NULL, "n1", 40, NULL, T0 + 5000);
        assert_string_equal(sget(l, "apiVersion"), "coordination.k8s.io/v1");
        assert_string_equal(sget(l, "kind"), "Lease");
        assert_string_equal(sget(l, "metadata.name"), "n1");
        assert_string_equal(sget(l, "metadata.namespace"), "kube-node-lease");
        assert_string_equal(sget(l, "spec.holderIdentity"), "n1");
        assert_int_equal(
            json_integer_value(json_object_get(json_object_get(l, "spec"), "leaseDurationSeconds")),
            40);
        assert_string_equal(sget(l, "spec.renewTime"), "2024-05-01T10:00:00.000005Z");
        assert_null(json_object_get(json_object_get(l, "metadata"), "ownerReferences"));

        /* a renewal keeps the base (resourceVersion) and gains the owner */
        json_object_set_new(json_object_get(l, "metadata"), "resourceVersion", json_string("42"));
        cleanup_json json_t *r = node_lease_build(l, "n1", 40, "uid-1", T0 + 10 * SEC);
        assert_string_equal(sget(r, "metadata.resourceVersion"), "42");
        assert_string_equal(sget(r, "spec.renewTime"), "2024-05-01T10:00:10.000000Z");
        cleanup_json json_t *want_owner = json_pack("[{s:s, s:s, s:s, s:s}]", "apiVersion", "v1",
                                                    "kind", "Node", "name", "n1", "uid", "uid-1");
        assert_true(json_equal(json_object_get(json_object_get(r, "metadata"), "ownerReferences"),
                               want_owner));
        /* an owner already there is kept as it is */
        cleanup_json json_t *r2 = node_lease_build(r, "n1", 40, "uid-2", T0 + 20 * SEC);
        assert_true(json_equal(json_object_get(json_object_get(r2, "metadata"), "ownerReferences"),
                               want_owner));
        /* base is not modified */
        assert_string_equal(sget(l, "spec.renewTime"), "2024-05-01T10:00:00.000005Z");
}

static void test_node_ip(void **state)
{
        (void)state;
        char *ip = NULL;
        ck_error_t err = NULL;
        assert_int_equal(node_ip_resolve("127.0.0.1", &ip, &err), 0);
        assert_string_equal(ip, "127.0.0.1");
        free(ip);
        /* TEST-NET-1: on no interface of this host */
        assert_true(node_ip_resolve("192.0.2.77", &ip, &err) < 0);
        assert_non_null(strstr(ck_error_msg(err), "not found in the host's network interfaces"));
        ck_error_release(&err);
        assert_true(node_ip_resolve("224.0.0.1", &ip, &err) < 0);
        assert_non_null(strstr(ck_error_msg(err), "multicast"));
        ck_error_release(&err);
        assert_true(node_ip_resolve("not-an-ip", &ip, &err) < 0);
        assert_non_null(strstr(ck_error_msg(err), "must be a valid IP address"));
        ck_error_release(&err);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_quantities_print_as_the_apiserver_does),
            cmocka_unit_test(test_meminfo_and_os_release),
            cmocka_unit_test(test_initial_node_labels_and_annotation),
            cmocka_unit_test(test_capacity_and_allocatable),
            cmocka_unit_test(test_device_plugin_resources),
            cmocka_unit_test(test_images),
            cmocka_unit_test(test_addresses_node_info_endpoints),
            cmocka_unit_test(test_conditions_order_and_messages),
            cmocka_unit_test(test_pressure_conditions),
            cmocka_unit_test(test_heartbeat_moves_transition_stays),
            cmocka_unit_test(test_not_ready_without_capacity_aggregates),
            cmocka_unit_test(test_not_ready_while_shutting_down),
            cmocka_unit_test(test_status_changed_is_semantic),
            cmocka_unit_test(test_status_patch_has_only_what_changed),
            cmocka_unit_test(test_reconcile_existing_node),
            cmocka_unit_test(test_lease_object),
            cmocka_unit_test(test_node_ip),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
