/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The device manager (src/devicemanager) in a temporary directory, with a
 * fake device plugin served by the project's gRPC server and registered
 * through the manager's real Registration socket: registration and its
 * refusals in upstream's words, ListAndWatch driving capacity and
 * allocatable, a stopped plugin's resource going after its grace period,
 * allocation at admission (Allocate, reuse, too few devices), a
 * container's options (PreStartContainer, the plugin's mounts, envs,
 * devices, annotations), release of inactive pods' devices, and the
 * checkpoint: upstream's exact checksum, and what a restart keeps.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_pods.h"

#include "devicemanager/devicemanager_internal.h"
#include "grpc/grpc_server.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* ---- the checkpoint's checksum: values Go computed (upstream's types,
 * checksum.New) ---- */

static void test_checkpoint_checksum_matches_go(void **state)
{
        (void)state;
        static const struct {
                const char *json;
                uint32_t sum;
        } vectors[] = {
            {"{\"PodDeviceEntries\":null,\"RegisteredDevices\":{\"test.device/foo\":[]}}",
             2217542618u},
            {"{\"PodDeviceEntries\":null,\"RegisteredDevices\":{}}", 3467439661u},
            {"{\"PodDeviceEntries\":[{\"PodUID\":\"uid-1\",\"ContainerName\":\"c1\","
             "\"ResourceName\":\"test.device/foo\",\"DeviceIDs\":{\"-1\":[\"dev1\"],\"0\":"
             "[\"dev0\",\"dev2\"]},\"AllocResp\":\"EgoKBC90bXASAi94\"}],\"RegisteredDevices\":"
             "{\"a.b/c\":[\"x\"],\"test.device/foo\":[\"dev1\",\"dev0\"]}}",
             2882423689u},
        };
        for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
                json_t *data = json_loads(vectors[i].json, 0, NULL);
                assert_non_null(data);
                assert_int_equal(dm_checkpoint_checksum(data), vectors[i].sum);
                json_decref(data);
        }
}

static void test_checkpoint_roundtrip_and_corruption(void **state)
{
        (void)state;
        struct dm_alloc a = {.pod_uid = "uid-1", .container = "c1", .resource = "test.device/foo"};
        char *ids0[] = {"dev0", "dev2"}, *ids1[] = {"dev1"};
        struct dm_numa_ids numa[] = {{.numa = 0, .ids = ids0, .n_ids = 2},
                                     {.numa = -1, .ids = ids1, .n_ids = 1}};
        a.numa = numa;
        a.n_numa = 2;
        uint8_t resp[] = {18, 10, 10, 4, 47, 116, 109, 112, 18, 2, 47, 120};
        a.resp = resp;
        a.resp_len = sizeof(resp);
        char *h1[] = {"dev1", "dev0"}, *h2[] = {"x"};
        struct dm_resource res[] = {
            {.name = "test.device/foo", .has_healthy = true, .healthy = h1, .n_healthy = 2},
            {.name = "a.b/c", .has_healthy = true, .healthy = h2, .n_healthy = 1},
            {.name = "only.unhealthy/x", .has_unhealthy = true}, /* not registered */
        };
        json_t *doc = dm_checkpoint_build(&a, 1, res, 3);
        char *text = json_dumps(doc, JSON_COMPACT);
        json_decref(doc);
        /* the checksum Go gives this very content */
        assert_non_null(strstr(text, "\"Checksum\":2882423689"));
        struct dm_alloc *allocs = NULL;
        size_t n_allocs = 0, n_reg = 0;
        char **reg = NULL;
        ck_error_t err = NULL;
        if (dm_checkpoint_parse(text, &allocs, &n_allocs, &reg, &n_reg, &err) < 0)
                fail_msg("parse: %s", ck_error_msg(err));
        assert_int_equal(n_allocs, 1);
        assert_string_equal(allocs[0].pod_uid, "uid-1");
        assert_int_equal(allocs[0].resp_len, sizeof(resp));
        assert_memory_equal(allocs[0].resp, resp, sizeof(resp));
        assert_int_equal(allocs[0].n_numa, 2);
        assert_int_equal(n_reg, 2);
        dm_alloc_clear(&allocs[0]);
        free(allocs);
        for (size_t i = 0; i < n_reg; i++)
                free(reg[i]);
        free(reg);
        /* one byte changed: refused */
        char *p = strstr(text, "dev2");
        p[3] = '3';
        assert_int_equal(dm_checkpoint_parse(text, &allocs, &n_allocs, &reg, &n_reg, &err), -1);
        assert_string_equal(ck_error_msg(err), "checkpoint is corrupted");
        ck_error_release(&err);
        free(text);
}

static void test_extended_resource_names(void **state)
{
        (void)state;
        assert_true(dm_is_extended_resource_name("example.com/resource"));
        assert_true(dm_is_extended_resource_name("test.device/device-plugin-failures-1234"));
        assert_false(dm_is_extended_resource_name("cpu"));
        assert_false(dm_is_extended_resource_name("kubernetes.io/foo"));
        assert_false(dm_is_extended_resource_name("requests.example.com/x"));
        assert_false(dm_is_extended_resource_name("Example.com/x"));
        assert_false(dm_is_extended_resource_name("example.com/a/b"));
        assert_false(dm_is_extended_resource_name("example.com/-x"));
}

/* ---- a fake device plugin ---- */

struct fake_plugin {
        char path[160];
        struct grpc_server *server;
        pthread_mutex_t lock;
        pthread_cond_t cond;
        /* the devices: "id" + health */
        char ids[4][16];
        bool healthy[4];
        int n;
        int version;
        bool end_stream;
        bool fail_options, pre_start;
        atomic_int options_calls, law_calls, allocate_calls, pre_start_calls;
        char last_allocate[128]; /* the ids of the last Allocate, comma separated */
};

static int fake_options(void *ctx, const uint8_t *req, size_t req_len, int64_t timeout_ms,
                        uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        (void)req;
        (void)req_len;
        (void)timeout_ms;
        struct fake_plugin *f = ctx;
        atomic_fetch_add(&f->options_calls, 1);
        if (f->fail_options)
                return ck_error_make(err, 0, "GetDevicePluginOptions failed");
        V1beta1__DevicePluginOptions o = V1BETA1__DEVICE_PLUGIN_OPTIONS__INIT;
        o.pre_start_required = f->pre_start;
        *resp_len = protobuf_c_message_get_packed_size(&o.base);
        *resp = xmalloc(*resp_len + 1);
        protobuf_c_message_pack(&o.base, *resp);
        return 0;
}

static size_t pack_devices(struct fake_plugin *f, uint8_t **out)
{
        V1beta1__Device devs[4], *list[4];
        for (int i = 0; i < f->n; i++) {
                v1beta1__device__init(&devs[i]);
                devs[i].id = f->ids[i];
                devs[i].health = f->healthy[i] ? "Healthy" : "Unhealthy";
                list[i] = &devs[i];
        }
        V1beta1__ListAndWatchResponse r = V1BETA1__LIST_AND_WATCH_RESPONSE__INIT;
        r.devices = list;
        r.n_devices = (size_t)f->n;
        size_t n = protobuf_c_message_get_packed_size(&r.base);
        *out = xmalloc(n + 1);
        protobuf_c_message_pack(&r.base, *out);
        return n;
}

static int fake_law(void *ctx, const uint8_t *req, size_t req_len, struct grpc_server_stream *s,
                    ck_error_t *err)
{
        (void)req;
        (void)req_len;
        struct fake_plugin *f = ctx;
        atomic_fetch_add(&f->law_calls, 1);
        int sent = -1;
        for (;;) {
                pthread_mutex_lock(&f->lock);
                if (f->end_stream) {
                        pthread_mutex_unlock(&f->lock);
                        return ck_error_make(err, 0, "ListAndWatch failed");
                }
                uint8_t *msg = NULL;
                size_t n = 0;
                if (sent != f->version) {
                        sent = f->version;
                        n = pack_devices(f, &msg);
                }
                pthread_mutex_unlock(&f->lock);
                if (msg != NULL) {
                        int r = grpc_server_stream_send(s, msg, n);
                        free(msg);
                        if (r < 0)
                                return 0;
                }
                if (!grpc_server_stream_alive(s, 20))
                        return 0;
        }
}

static int fake_allocate(void *ctx, const uint8_t *req, size_t req_len, int64_t timeout_ms,
                         uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        (void)timeout_ms;
        (void)err;
        struct fake_plugin *f = ctx;
        atomic_fetch_add(&f->allocate_calls, 1);
        V1beta1__AllocateRequest *r = v1beta1__allocate_request__unpack(NULL, req_len, req);
        assert_non_null(r);
        assert_int_equal(r->n_container_requests, 1);
        const V1beta1__ContainerAllocateRequest *c = r->container_requests[0];
        char ids[128] = "";
        for (size_t i = 0; i < c->n_devices_ids; i++) {
                strcat(ids, i ? "," : "");
                strcat(ids, c->devices_ids[i]);
        }
        pthread_mutex_lock(&f->lock);
        snprintf(f->last_allocate, sizeof(f->last_allocate), "%s", ids);
        pthread_mutex_unlock(&f->lock);
        /* a mount, an env, a device and an annotation naming the devices */
        V1beta1__Mount mt = V1BETA1__MOUNT__INIT;
        char cp[160];
        snprintf(cp, sizeof(cp), "/dev-state/%s", ids);
        mt.container_path = cp;
        mt.host_path = "/tmp";
        mt.read_only = true;
        V1beta1__Mount *mts[] = {&mt};
        V1beta1__DeviceSpec dv = V1BETA1__DEVICE_SPEC__INIT;
        dv.container_path = "/dev/fake0";
        dv.host_path = "/dev/null";
        dv.permissions = "rw";
        V1beta1__DeviceSpec *dvs[] = {&dv};
        V1beta1__ContainerAllocateResponse__EnvsEntry env =
            V1BETA1__CONTAINER_ALLOCATE_RESPONSE__ENVS_ENTRY__INIT;
        env.key = "FAKE_DEVICES";
        env.value = ids;
        V1beta1__ContainerAllocateResponse__EnvsEntry *envs[] = {&env};
        V1beta1__ContainerAllocateResponse__AnnotationsEntry ann =
            V1BETA1__CONTAINER_ALLOCATE_RESPONSE__ANNOTATIONS_ENTRY__INIT;
        ann.key = "fake.io/devices";
        ann.value = ids;
        V1beta1__ContainerAllocateResponse__AnnotationsEntry *anns[] = {&ann};
        V1beta1__ContainerAllocateResponse cr = V1BETA1__CONTAINER_ALLOCATE_RESPONSE__INIT;
        cr.mounts = mts;
        cr.n_mounts = 1;
        cr.devices = dvs;
        cr.n_devices = 1;
        cr.envs = envs;
        cr.n_envs = 1;
        cr.annotations = anns;
        cr.n_annotations = 1;
        V1beta1__ContainerAllocateResponse *crs[] = {&cr};
        V1beta1__AllocateResponse ar = V1BETA1__ALLOCATE_RESPONSE__INIT;
        ar.container_responses = crs;
        ar.n_container_responses = 1;
        *resp_len = protobuf_c_message_get_packed_size(&ar.base);
        *resp = xmalloc(*resp_len + 1);
        protobuf_c_message_pack(&ar.base, *resp);
        v1beta1__allocate_request__free_unpacked(r, NULL);
        return 0;
}

static int fake_pre_start(void *ctx, const uint8_t *req, size_t req_len, int64_t timeout_ms,
                          uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        (void)req;
        (void)req_len;
        (void)err;
        struct fake_plugin *f = ctx;
        atomic_fetch_add(&f->pre_start_calls, 1);
        assert_true(timeout_ms > 0 && timeout_ms <= 30000); /* upstream's 30 s */
        *resp = NULL;
        *resp_len = 0;
        return 0;
}

static struct grpc_method fake_methods[4];

static void fake_start(struct fake_plugin *f, const char *dir, const char *name)
{
        snprintf(f->path, sizeof(f->path), "%s/%s", dir, name);
        pthread_mutex_init(&f->lock, NULL);
        pthread_cond_init(&f->cond, NULL);
        fake_methods[0] = (struct grpc_method){"/v1beta1.DevicePlugin/GetDevicePluginOptions",
                                               fake_options, NULL, f};
        fake_methods[1] =
            (struct grpc_method){"/v1beta1.DevicePlugin/ListAndWatch", NULL, fake_law, f};
        fake_methods[2] =
            (struct grpc_method){"/v1beta1.DevicePlugin/Allocate", fake_allocate, NULL, f};
        fake_methods[3] = (struct grpc_method){"/v1beta1.DevicePlugin/PreStartContainer",
                                               fake_pre_start, NULL, f};
        ck_error_t err = NULL;
        if (grpc_server_start(f->path, fake_methods, 4, &f->server, &err) < 0)
                fail_msg("fake plugin: %s", ck_error_msg(err));
}

static void fake_stop(struct fake_plugin *f)
{
        grpc_server_stop(f->server);
        f->server = NULL;
}

static void fake_set(struct fake_plugin *f, int i, bool healthy)
{
        pthread_mutex_lock(&f->lock);
        f->healthy[i] = healthy;
        f->version++;
        pthread_mutex_unlock(&f->lock);
}

/* ---- the manager ---- */

struct fixture {
        char dir[64];
        struct devicemanager *m;
        struct fake_plugin plugin;
        char inactive[64]; /* a pod UID that is no longer active */
};

static bool pod_active(void *ctx, const char *uid)
{
        struct fixture *f = ctx;
        return strcmp(uid, f->inactive) != 0;
}

static void manager_start(struct fixture *f)
{
        struct devicemanager_options o = {
            .dir = f->dir, .pod_active = pod_active, .ctx = f, .stop_grace_ms = 1500};
        ck_error_t err = NULL;
        if (devicemanager_start(&o, &f->m, &err) < 0)
                fail_msg("start: %s", ck_error_msg(err));
}

static int setup(void **state)
{
        struct fixture *f = calloc(1, sizeof(*f));
        snprintf(f->dir, sizeof(f->dir), "/tmp/ck-dm-XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        struct fixture *f = *state;
        devicemanager_stop(f->m);
        if (f->plugin.server)
                fake_stop(&f->plugin);
        ck_error_t err = NULL;
        fs_remove_all(f->dir, &err);
        ck_error_release(&err);
        free(f);
        return 0;
}

/* Register as a plugin would: 0, or -1 with the error. */
static int do_register(struct fixture *f, const char *version, const char *endpoint,
                       const char *resource, ck_error_t *err)
{
        cleanup_free char *sock = xasprintf("%s/kubelet.sock", f->dir);
        struct grpc_conn *c = grpc_conn_new(sock);
        V1beta1__RegisterRequest r = V1BETA1__REGISTER_REQUEST__INIT;
        r.version = (char *)version;
        r.endpoint = (char *)endpoint;
        r.resource_name = (char *)resource;
        size_t n = protobuf_c_message_get_packed_size(&r.base);
        cleanup_free uint8_t *buf = xmalloc(n + 1);
        protobuf_c_message_pack(&r.base, buf);
        uint8_t *resp = NULL;
        size_t len = 0;
        int rc = grpc_unary(c, "/v1beta1.Registration/Register", buf, n, 15000, &resp, &len, err);
        free(resp);
        grpc_conn_free(c);
        return rc;
}

/* capacity/allocatable of name now (-2: absent); *removed: listed removed */
static void capacity_of(struct fixture *f, const char *name, int64_t *cap, int64_t *alloc,
                        bool *removed)
{
        struct devicemanager_resource *res;
        size_t n, n_removed;
        char **rm;
        devicemanager_capacity(f->m, &res, &n, &rm, &n_removed);
        *cap = *alloc = -2;
        for (size_t i = 0; i < n; i++)
                if (strcmp(res[i].name, name) == 0) {
                        *cap = res[i].capacity;
                        *alloc = res[i].allocatable;
                }
        if (removed != NULL) {
                *removed = false;
                for (size_t i = 0; i < n_removed; i++)
                        *removed |= strcmp(rm[i], name) == 0;
        }
        devicemanager_capacity_free(res, n, rm, n_removed);
}

/* Waits (5 s at most) for name to show cap/alloc. */
static void wait_capacity(struct fixture *f, const char *name, int64_t cap, int64_t alloc)
{
        int64_t c = 0, a = 0;
        for (int i = 0; i < 250; i++) {
                capacity_of(f, name, &c, &a, NULL);
                if (c == cap && a == alloc)
                        return;
                usleep(20000);
        }
        fail_msg("%s: capacity %lld allocatable %lld, want %lld %lld", name, (long long)c,
                 (long long)a, (long long)cap, (long long)alloc);
}

static void plugin_with_devices(struct fixture *f, int n)
{
        f->plugin.n = n;
        for (int i = 0; i < n; i++) {
                snprintf(f->plugin.ids[i], sizeof(f->plugin.ids[i]), "dev%d", i);
                f->plugin.healthy[i] = true;
        }
        fake_start(&f->plugin, f->dir, "fake.sock");
}

static void test_registration(void **state)
{
        struct fixture *f = *state;
        /* what a previous run left: its sockets go, other files stay */
        cleanup_free char *stale = xasprintf("%s/old-plugin.sock", f->dir);
        int s = socket(AF_UNIX, SOCK_STREAM, 0);
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", stale);
        assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
        close(s);
        cleanup_free char *keep = xasprintf("%s/README", f->dir);
        ck_error_t err = NULL;
        assert_int_equal(fs_write_file_atomic(keep, "x", 1, 0644, &err), 0);
        manager_start(f);
        struct stat st;
        assert_int_equal(stat(stale, &st), -1);
        assert_int_equal(stat(keep, &st), 0);

        plugin_with_devices(f, 2);
        /* refusals, in upstream's words, before the plugin is called */
        assert_int_equal(do_register(f, "v1alpha1", "fake.sock", "example.com/dev", &err), -1);
        assert_int_equal(err->code, GRPC_UNKNOWN);
        assert_string_equal(ck_error_msg(err),
                            "rpc error 2: requested API version \"v1alpha1\" is not supported by "
                            "kubelet. Supported version is [\"v1beta1\"]");
        ck_error_release(&err);
        assert_int_equal(do_register(f, "v1beta1", "fake.sock", "nodomain", &err), -1);
        assert_string_equal(ck_error_msg(err),
                            "rpc error 2: the ResourceName \"nodomain\" is invalid");
        ck_error_release(&err);
        assert_int_equal(do_register(f, "v1beta1", "../escape.sock", "example.com/dev", &err), -1);
        ck_error_release(&err);
        assert_int_equal(atomic_load(&f->plugin.options_calls), 0);

        /* options that fail: refused, the plugin called once, no resource */
        f->plugin.fail_options = true;
        assert_int_equal(do_register(f, "v1beta1", "fake.sock", "example.com/dev", &err), -1);
        assert_string_equal(ck_error_msg(err),
                            "rpc error 2: failed to get device plugin options: rpc error: code "
                            "= Unknown desc = GetDevicePluginOptions failed");
        ck_error_release(&err);
        assert_int_equal(atomic_load(&f->plugin.options_calls), 1);
        assert_int_equal(atomic_load(&f->plugin.law_calls), 0);
        int64_t cap, alloc;
        capacity_of(f, "example.com/dev", &cap, &alloc, NULL);
        assert_int_equal(cap, -2);

        /* accepted: its devices, their health */
        f->plugin.fail_options = false;
        if (do_register(f, "v1beta1", "fake.sock", "example.com/dev", &err) < 0)
                fail_msg("register: %s", ck_error_msg(err));
        wait_capacity(f, "example.com/dev", 2, 2);
        fake_set(&f->plugin, 1, false);
        wait_capacity(f, "example.com/dev", 2, 1);
        fake_set(&f->plugin, 1, true);
        wait_capacity(f, "example.com/dev", 2, 2);
        assert_int_equal(atomic_load(&f->plugin.law_calls), 1);

        /* the stream ends: all unhealthy, never called again; after the
         * grace period the resource goes, reported removed once */
        pthread_mutex_lock(&f->plugin.lock);
        f->plugin.end_stream = true;
        pthread_mutex_unlock(&f->plugin.lock);
        wait_capacity(f, "example.com/dev", 2, 0);
        usleep(1600 * 1000);
        bool removed = false;
        capacity_of(f, "example.com/dev", &cap, &alloc, &removed);
        assert_int_equal(cap, -2);
        assert_true(removed);
        capacity_of(f, "example.com/dev", &cap, &alloc, &removed);
        assert_false(removed);
        assert_int_equal(atomic_load(&f->plugin.law_calls), 1);
        assert_int_equal(atomic_load(&f->plugin.options_calls), 2);
}

static struct pod *device_pod(const char *uid, int64_t app, int64_t init)
{
        char init_part[256] = "";
        if (init > 0)
                snprintf(init_part, sizeof(init_part),
                         "  initContainers:\n  - name: setup\n    image: busybox\n"
                         "    resources: {limits: {example.com/dev: %lld}}\n",
                         (long long)init);
        cleanup_free char *yaml = xasprintf(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p-%s, namespace: default, uid: %s}\n"
            "spec:\n%s  containers:\n  - name: main\n    image: busybox\n"
            "    resources: {limits: {example.com/dev: %lld, cpu: 100m}}\n",
            uid, uid, init_part, (long long)app);
        return test_pod_yaml(yaml);
}

static void test_allocation_and_restart(void **state)
{
        struct fixture *f = *state;
        manager_start(f);
        f->plugin.pre_start = true;
        plugin_with_devices(f, 2);
        ck_error_t err = NULL;
        if (do_register(f, "v1beta1", "fake.sock", "example.com/dev", &err) < 0)
                fail_msg("register: %s", ck_error_msg(err));
        wait_capacity(f, "example.com/dev", 2, 2);
        assert_true(devicemanager_is_device_resource(f->m, "example.com/dev"));
        assert_false(devicemanager_is_device_resource(f->m, "example.com/other"));

        /* an init container's device serves the app container after it */
        cleanup_pod struct pod *a = device_pod("uid-a", 1, 1);
        if (devicemanager_allocate(f->m, a, &err) < 0)
                fail_msg("allocate: %s", ck_error_msg(err));
        assert_int_equal(atomic_load(&f->plugin.allocate_calls), 2);
        assert_string_equal(f->plugin.last_allocate, "dev0");
        /* a pod asking for nothing of it: nothing to do */
        cleanup_pod struct pod *none = test_pod_yaml(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: nodev, namespace: default, uid: uid-n}\n"
            "spec:\n  containers: [{name: c, image: busybox}]\n");
        assert_int_equal(devicemanager_allocate(f->m, none, &err), 0);

        /* the container's options: the plugin's answer, after PreStart */
        struct devicemanager_container_options o;
        if (devicemanager_container_options(f->m, a, &a->containers[0], &o, &err) < 0)
                fail_msg("options: %s", ck_error_msg(err));
        assert_int_equal(atomic_load(&f->plugin.pre_start_calls), 1);
        assert_string_equal(kv_list_get(&o.envs, "FAKE_DEVICES"), "dev0");
        assert_int_equal(o.n_mounts, 1);
        assert_string_equal(o.mounts[0].container_path, "/dev-state/dev0");
        assert_true(o.mounts[0].read_only);
        assert_int_equal(o.n_devices, 1);
        assert_string_equal(o.devices[0].permissions, "rw");
        assert_string_equal(kv_list_get(&o.annotations, "fake.io/devices"), "dev0");
        devicemanager_container_options_release(&o);

        /* two more: one is left */
        cleanup_pod struct pod *b = device_pod("uid-b", 2, 0);
        assert_int_equal(devicemanager_allocate(f->m, b, &err), -1);
        assert_string_equal(ck_error_msg(err),
                            "requested number of devices unavailable for example.com/dev. "
                            "Requested: 2, Available: 1");
        ck_error_release(&err);
        struct devicemanager_resource *held;
        size_t n_held;
        devicemanager_allocated(f->m, &held, &n_held);
        assert_int_equal(n_held, 1);
        assert_int_equal(held[0].capacity, 1);
        devicemanager_capacity_free(held, n_held, NULL, 0);
        /* capacity and allocatable do not count allocations */
        wait_capacity(f, "example.com/dev", 2, 2);

        /* a restart: the allocation is the checkpoint's; the resource 0/0
         * until its plugin registers again */
        devicemanager_stop(f->m);
        f->m = NULL;
        manager_start(f);
        wait_capacity(f, "example.com/dev", 0, 0);
        if (devicemanager_container_options(f->m, a, &a->containers[0], &o, &err) < 0)
                fail_msg("options after restart: %s", ck_error_msg(err));
        assert_int_equal(o.n_mounts, 1);
        devicemanager_container_options_release(&o);
        /* the same pod again (a restarted kubelet admits it again): no call */
        if (devicemanager_allocate(f->m, a, &err) < 0)
                fail_msg("again: %s", ck_error_msg(err));
        assert_int_equal(atomic_load(&f->plugin.allocate_calls), 2);

        /* the restart removed the plugin's socket, as upstream's does: the
         * plugin makes it again and registers again */
        struct stat st;
        assert_int_equal(stat(f->plugin.path, &st), -1);
        fake_stop(&f->plugin);
        fake_start(&f->plugin, f->dir, "fake.sock");
        if (do_register(f, "v1beta1", "fake.sock", "example.com/dev", &err) < 0)
                fail_msg("register again: %s", ck_error_msg(err));
        wait_capacity(f, "example.com/dev", 2, 2);
        /* pod a is gone: its device is free for b's two */
        snprintf(f->inactive, sizeof(f->inactive), "uid-a");
        if (devicemanager_allocate(f->m, b, &err) < 0)
                fail_msg("b: %s", ck_error_msg(err));
        assert_string_equal(f->plugin.last_allocate, "dev0,dev1");

        /* a device unhealthy: no new allocation of it */
        fake_set(&f->plugin, 0, false);
        fake_set(&f->plugin, 1, false);
        wait_capacity(f, "example.com/dev", 2, 0);
        cleanup_pod struct pod *c = device_pod("uid-c", 1, 0);
        assert_int_equal(devicemanager_allocate(f->m, c, &err), -1);
        assert_string_equal(ck_error_msg(err),
                            "no healthy devices present; cannot allocate unhealthy devices "
                            "example.com/dev");
        ck_error_release(&err);
}

/* Two resources of one container answer the same mount and device paths:
 * the first response's wins, each path once (upstream's deviceRunContainerOptions). */
static void test_options_first_path_wins(void **state)
{
        struct fixture *f = *state;
        manager_start(f);
        plugin_with_devices(f, 2);
        ck_error_t err = NULL;
        if (do_register(f, "v1beta1", "fake.sock", "example.com/dev", &err) < 0)
                fail_msg("register: %s", ck_error_msg(err));
        if (do_register(f, "v1beta1", "fake.sock", "example.com/gpu", &err) < 0)
                fail_msg("register gpu: %s", ck_error_msg(err));
        wait_capacity(f, "example.com/dev", 2, 2);
        wait_capacity(f, "example.com/gpu", 2, 2);
        cleanup_pod struct pod *p = test_pod_yaml(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: two, namespace: default, uid: uid-2}\n"
            "spec:\n  containers:\n  - name: main\n    image: busybox\n"
            "    resources: {limits: {example.com/dev: 1, example.com/gpu: 2}}\n");
        if (devicemanager_allocate(f->m, p, &err) < 0)
                fail_msg("allocate: %s", ck_error_msg(err));
        assert_int_equal(atomic_load(&f->plugin.allocate_calls), 2);

        struct devicemanager_container_options o;
        if (devicemanager_container_options(f->m, p, &p->containers[0], &o, &err) < 0)
                fail_msg("options: %s", ck_error_msg(err));
        /* mounts /dev-state/dev0 and /dev-state/dev0,dev1: two paths; device /dev/fake0 once */
        assert_int_equal(o.n_mounts, 2);
        assert_string_not_equal(o.mounts[0].container_path, o.mounts[1].container_path);
        assert_int_equal(o.n_devices, 1);
        assert_string_equal(o.devices[0].container_path, "/dev/fake0");
        assert_string_equal(o.devices[0].host_path, "/dev/null");
        /* FAKE_DEVICES: the first response's value */
        const char *env = kv_list_get(&o.envs, "FAKE_DEVICES");
        assert_non_null(env);
        assert_string_equal(env, o.mounts[0].container_path + strlen("/dev-state/"));
        devicemanager_container_options_release(&o);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_checkpoint_checksum_matches_go),
            cmocka_unit_test(test_checkpoint_roundtrip_and_corruption),
            cmocka_unit_test(test_extended_resource_names),
            cmocka_unit_test_setup_teardown(test_registration, setup, teardown),
            cmocka_unit_test_setup_teardown(test_allocation_and_restart, setup, teardown),
            cmocka_unit_test_setup_teardown(test_options_first_path_wins, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
