/* SPDX-License-Identifier: Apache-2.0 */
/*
 * configMap, secret, downwardAPI and projected volumes, against a fake
 * `struct kube_objects` (the module boundary): what a container would read
 * in the volume directory, the atomic `..data` swap on updates, modes,
 * optional objects and keys, item path checks, fsGroup, tokens.  Pods are
 * YAML manifests decoded as the kubelet does.  The tmpfs-backed kinds need
 * root (CI runs as root) and are skipped otherwise.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "api/decode.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/xalloc.h"
#include "util/yamljson.h"
#include "volume/plugins.h"
#include "volume/volume.h"

#include "test_pods.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#define UID "5a1d3c9e-0000-4000-8000-00000000c0f1"

/* ---- the fake apiserver ---- */

struct fake_kube {
        struct kube_objects iface;
        json_t *objects; /* "configmaps/ns/name" -> object */
        int gets, tokens;
        int fail_status; /* every get fails with it (e.g. 503) */
        bool token_fail;
        struct kube_token_request last; /* strings borrowed from the pod */
};

static int fake_get(void *opaque, const char *resource, const char *ns, const char *name,
                    const char *pod_uid, json_t **out, ck_error_t *err)
{
        (void)pod_uid;
        struct fake_kube *k = opaque;
        k->gets++;
        if (k->fail_status)
                return ck_error_make_code(err, k->fail_status, "the server is unavailable");
        cleanup_free char *key = xasprintf("%s/%s/%s", resource, ns, name);
        json_t *o = json_object_get(k->objects, key);
        if (o == NULL)
                return ck_error_make_code(err, 404, "%s \"%s\" not found", resource, name);
        *out = json_incref(o);
        return 0;
}

static int fake_token(void *opaque, const struct kube_token_request *req, char **token,
                      int64_t *expiration_unix, ck_error_t *err)
{
        struct fake_kube *k = opaque;
        if (k->token_fail)
                return ck_error_make_code(err, 503, "the server is unavailable");
        k->tokens++;
        k->last = *req;
        *token = xasprintf("token-%d", k->tokens);
        *expiration_unix = (int64_t)time(NULL) + req->expiration_seconds;
        return 0;
}

static void put_object(struct fake_kube *k, const char *resource, const char *name,
                       const char *json)
{
        cleanup_free char *key = xasprintf("%s/default/%s", resource, name);
        json_error_t je;
        json_t *o = json_loads(json, 0, &je);
        if (o == NULL)
                fail_msg("bad test json: %s", je.text);
        json_object_set_new(k->objects, key, o);
}

/* ---- fixture ---- */

struct fixture {
        char *root;
        mode_t umask;
        struct fake_kube kube;
        struct pod *pod;
};

static int setup(void **state)
{
        struct fixture *f = xcalloc(1, sizeof(*f));
        f->root = xstrdup("/tmp/ck-volume-payload-XXXXXX");
        if (mkdtemp(f->root) == NULL)
                return -1;
        f->umask = umask(022);
        f->kube.iface.get = fake_get;
        f->kube.iface.request_token = fake_token;
        f->kube.iface.opaque = &f->kube;
        f->kube.objects = json_object();
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        struct fixture *f = *state;
        ck_error_t err = NULL;
        umask(f->umask);
        int ret = volume_cleanup_pod(f->root, UID, &err);
        if (ret == 0)
                ret = fs_remove_all(f->root, &err);
        if (ret < 0)
                print_error("teardown: %s\n", ck_error_msg(err));
        ck_error_release(&err);
        json_decref(f->kube.objects);
        pod_unref(f->pod);
        free(f->root);
        free(f);
        return ret;
}

/* Decodes a pod named web in namespace default with the given volumes
 * block (YAML lines indented for spec.volumes) and pod securityContext. */
static struct pod *pod_with(struct fixture *f, const char *volumes, const char *spec_extra)
{
        cleanup_free char *yaml = xasprintf("apiVersion: v1\n"
                                            "kind: Pod\n"
                                            "metadata:\n"
                                            "  name: web\n"
                                            "  namespace: default\n"
                                            "  uid: " UID "\n"
                                            "  labels: {app: web, tier: front}\n"
                                            "  annotations: {note: \"say \\\"hi\\\"\\n\"}\n"
                                            "spec:\n"
                                            "  serviceAccountName: builder\n"
                                            "%s"
                                            "  containers:\n"
                                            "  - name: app\n"
                                            "    image: localhost/busybox:1.35\n"
                                            "    resources:\n"
                                            "      limits: {cpu: 1500m, memory: 64Mi}\n"
                                            "  volumes:\n%s",
                                            spec_extra ? spec_extra : "", volumes);
        pod_unref(f->pod);
        f->pod = test_pod_yaml(yaml);
        return f->pod;
}

/* Sets up the pod's volumes; returns the error message (new) or NULL. */
static char *mount_all(struct fixture *f, const struct kube_objects *kube, struct kv_list *paths)
{
        ck_error_t err = NULL;
        struct kv_list local = {0};
        if (volume_mount_pod_volumes(f->root, f->pod, kube, paths ? paths : &local, &err) < 0) {
                char *msg = xstrdup(ck_error_msg(err));
                ck_error_release(&err);
                return msg;
        }
        kv_list_release(&local);
        return NULL;
}

static void mount_ok(struct fixture *f, struct kv_list *paths)
{
        cleanup_free char *msg = mount_all(f, &f->kube.iface, paths);
        if (msg != NULL)
                fail_msg("mount: %s", msg);
}

static char *vol_path(struct fixture *f, const char *plugin, const char *name, const char *rel)
{
        return rel ? xasprintf("%s/pods/" UID "/volumes/%s/%s/%s", f->root, plugin, name, rel)
                   : xasprintf("%s/pods/" UID "/volumes/%s/%s", f->root, plugin, name);
}

/* What a reader of the file sees; NULL if it cannot be read. New string. */
static char *read_text(const char *path)
{
        char *buf = NULL;
        ck_error_t err = NULL;
        if (fs_read_file(path, 1 << 20, &buf, NULL, &err) < 0) {
                ck_error_release(&err);
                return NULL;
        }
        return buf;
}

static void assert_file(const char *path, const char *want)
{
        cleanup_free char *got = read_text(path);
        if (got == NULL)
                fail_msg("cannot read %s", path);
        assert_string_equal(got, want);
}

static char *link_target(const char *path)
{
        char buf[512];
        ssize_t n = readlink(path, buf, sizeof(buf) - 1);
        if (n < 0)
                return NULL;
        buf[n] = '\0';
        return xstrdup(buf);
}

/* Entries of a directory whose name starts with "..": the data dirs. */
static int count_dot_dirs(const char *dir)
{
        DIR *d = opendir(dir);
        assert_non_null(d);
        int n = 0;
        struct dirent *de;
        while ((de = readdir(d)) != NULL)
                if (strncmp(de->d_name, "..", 2) == 0 && strcmp(de->d_name, "..") != 0 &&
                    strcmp(de->d_name, "..data") != 0)
                        n++;
        closedir(d);
        return n;
}

static mode_t mode_of(const char *path)
{
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        return st.st_mode & 07777;
}

static bool is_tmpfs(const char *path)
{
        struct statfs s;
        return statfs(path, &s) == 0 && s.f_type == TMPFS_MAGIC;
}

#define SKIP_UNLESS_ROOT()                                                                         \
        do {                                                                                       \
                if (geteuid() != 0)                                                                \
                        skip();                                                                    \
        } while (0)

/* ---- configMap ---- */

static const char CM_VOLUME[] = "  - name: config\n"
                                "    configMap: {name: settings}\n";

static void test_config_map_files(void **state)
{
        struct fixture *f = *state;
        put_object(&f->kube, "configmaps", "settings",
                   "{\"data\": {\"color\": \"blue\", \"size\": \"L\"},"
                   " \"binaryData\": {\"logo\": \"AAEC/w==\"}}");
        pod_with(f, CM_VOLUME, NULL);
        struct kv_list paths = {0};
        mount_ok(f, &paths);
        cleanup_free char *dir = vol_path(f, "kubernetes.io~configmap", "config", NULL);
        assert_string_equal(kv_list_get(&paths, "config"), dir);
        kv_list_release(&paths);

        cleanup_free char *color = vol_path(f, "kubernetes.io~configmap", "config", "color");
        assert_file(color, "blue");
        cleanup_free char *link = link_target(color);
        assert_string_equal(link, "..data/color");
        assert_int_equal(mode_of(color), 0644);
        cleanup_free char *logo = vol_path(f, "kubernetes.io~configmap", "config", "logo");
        char *bin = NULL;
        size_t len = 0;
        ck_error_t err = NULL;
        assert_int_equal(fs_read_file(logo, 64, &bin, &len, &err), 0);
        assert_int_equal(len, 4);
        assert_memory_equal(bin, "\x00\x01\x02\xff", 4);
        free(bin);
        /* the emptyDir upstream wraps: 0777, on disk for configMaps */
        assert_int_equal(mode_of(dir), 0777);
        assert_false(is_tmpfs(dir) && !is_tmpfs(f->root));
}

static void test_config_map_update_is_atomic_swap(void **state)
{
        struct fixture *f = *state;
        put_object(&f->kube, "configmaps", "settings",
                   "{\"data\": {\"color\": \"blue\", \"size\": \"L\"}}");
        pod_with(f, CM_VOLUME, NULL);
        mount_ok(f, NULL);
        cleanup_free char *dir = vol_path(f, "kubernetes.io~configmap", "config", NULL);
        cleanup_free char *data = xasprintf("%s/..data", dir);
        cleanup_free char *first = link_target(data);
        assert_non_null(first);
        assert_true(strncmp(first, "..", 2) == 0);

        /* unchanged: no new data directory */
        mount_ok(f, NULL);
        cleanup_free char *same = link_target(data);
        assert_string_equal(same, first);
        assert_int_equal(count_dot_dirs(dir), 1);

        /* a changed value and a removed key */
        put_object(&f->kube, "configmaps", "settings", "{\"data\": {\"color\": \"red\"}}");
        mount_ok(f, NULL);
        cleanup_free char *second = link_target(data);
        assert_string_not_equal(second, first);
        cleanup_free char *color = vol_path(f, "kubernetes.io~configmap", "config", "color");
        assert_file(color, "red");
        cleanup_free char *size = vol_path(f, "kubernetes.io~configmap", "config", "size");
        struct stat st;
        assert_int_equal(lstat(size, &st), -1);
        /* the old data directory is gone */
        cleanup_free char *old = xasprintf("%s/%s", dir, first);
        assert_int_equal(lstat(old, &st), -1);
        assert_int_equal(count_dot_dirs(dir), 1);

        /* a key added back */
        put_object(&f->kube, "configmaps", "settings",
                   "{\"data\": {\"color\": \"red\", \"size\": \"S\"}}");
        mount_ok(f, NULL);
        assert_file(size, "S");
}

static void test_config_map_items_and_modes(void **state)
{
        struct fixture *f = *state;
        put_object(&f->kube, "configmaps", "settings",
                   "{\"data\": {\"color\": \"blue\", \"size\": \"L\", \"extra\": \"x\"}}");
        pod_with(f,
                 "  - name: config\n"
                 "    configMap:\n"
                 "      name: settings\n"
                 "      defaultMode: 0400\n"
                 "      items:\n"
                 "      - {key: color, path: nested/dir/color.txt}\n"
                 "      - {key: size, path: size, mode: 0755}\n",
                 NULL);
        mount_ok(f, NULL);
        cleanup_free char *color =
            vol_path(f, "kubernetes.io~configmap", "config", "nested/dir/color.txt");
        assert_file(color, "blue");
        assert_int_equal(mode_of(color), 0400);
        cleanup_free char *nested = vol_path(f, "kubernetes.io~configmap", "config", "nested");
        cleanup_free char *link = link_target(nested);
        assert_string_equal(link, "..data/nested");
        cleanup_free char *size = vol_path(f, "kubernetes.io~configmap", "config", "size");
        assert_int_equal(mode_of(size), 0755);
        cleanup_free char *extra = vol_path(f, "kubernetes.io~configmap", "config", "extra");
        assert_int_equal(access(extra, F_OK), -1);
}

static void test_config_map_missing(void **state)
{
        struct fixture *f = *state;
        pod_with(f, CM_VOLUME, NULL);
        cleanup_free char *msg = mount_all(f, &f->kube.iface, NULL);
        assert_non_null(msg);
        assert_string_equal(msg, "volume \"config\": configmap \"settings\" not found");

        /* optional: an empty volume */
        pod_with(f,
                 "  - name: config\n"
                 "    configMap: {name: settings, optional: true}\n",
                 NULL);
        mount_ok(f, NULL);
        cleanup_free char *dir = vol_path(f, "kubernetes.io~configmap", "config", NULL);
        cleanup_free char *data = xasprintf("%s/..data", dir);
        cleanup_free char *target = link_target(data);
        assert_non_null(target);
        DIR *d = opendir(dir);
        assert_non_null(d);
        struct dirent *de;
        while ((de = readdir(d)) != NULL)
                if (strncmp(de->d_name, ".", 1) != 0)
                        fail_msg("unexpected file %s", de->d_name);
        closedir(d);
}

static void test_config_map_missing_key(void **state)
{
        struct fixture *f = *state;
        put_object(&f->kube, "configmaps", "settings", "{\"data\": {\"color\": \"blue\"}}");
        pod_with(f,
                 "  - name: config\n"
                 "    configMap:\n"
                 "      name: settings\n"
                 "      items: [{key: shape, path: shape}]\n",
                 NULL);
        cleanup_free char *msg = mount_all(f, &f->kube.iface, NULL);
        assert_non_null(msg);
        assert_string_equal(
            msg, "volume \"config\": configmap references non-existent config key: shape");

        pod_with(f,
                 "  - name: config\n"
                 "    configMap:\n"
                 "      name: settings\n"
                 "      optional: true\n"
                 "      items: [{key: shape, path: shape}, {key: color, path: c}]\n",
                 NULL);
        mount_ok(f, NULL);
        cleanup_free char *c = vol_path(f, "kubernetes.io~configmap", "config", "c");
        assert_file(c, "blue");
        cleanup_free char *shape = vol_path(f, "kubernetes.io~configmap", "config", "shape");
        assert_int_equal(access(shape, F_OK), -1);
}

static void test_standalone(void **state)
{
        struct fixture *f = *state;
        pod_with(f, CM_VOLUME, NULL);
        cleanup_free char *msg = mount_all(f, NULL, NULL);
        assert_non_null(msg);
        assert_string_equal(
            msg,
            "volume \"config\": couldn't get configMap default/settings, no kubeClient defined");
}

static void test_keeps_content_when_apiserver_away(void **state)
{
        struct fixture *f = *state;
        put_object(&f->kube, "configmaps", "settings", "{\"data\": {\"color\": \"blue\"}}");
        pod_with(f, CM_VOLUME, NULL);
        mount_ok(f, NULL);
        f->kube.fail_status = 503;
        struct kv_list paths = {0};
        mount_ok(f, &paths);
        assert_non_null(kv_list_get(&paths, "config"));
        kv_list_release(&paths);
        cleanup_free char *color = vol_path(f, "kubernetes.io~configmap", "config", "color");
        assert_file(color, "blue");

        /* a volume never set up still fails */
        pod_with(f,
                 "  - name: other\n"
                 "    configMap: {name: settings}\n",
                 NULL);
        cleanup_free char *msg = mount_all(f, &f->kube.iface, NULL);
        assert_non_null(msg);
        assert_non_null(strstr(msg, "couldn't get configMap default/settings"));
        assert_non_null(strstr(msg, "the server is unavailable"));
}

/* ---- item paths ---- */

static void test_payload_paths(void **state)
{
        (void)state;
        static const struct {
                const char *in, *clean, *err;
        } cases[] = {
            {"a", "a", NULL},
            {"a//b/./c/", "a/b/c", NULL},
            {"..data_x", NULL, "must not start with '..'"},
            {"../etc/passwd", NULL, "must not contain '..'"},
            {"a/../../b", NULL, "must not contain '..'"},
            {"/etc/passwd", NULL, "must be relative path"},
            {"", NULL, "must not be empty"},
            {"./", NULL, "must name a file"},
            {"a/..b", "a/..b", NULL},
            /* cleaned, it would be the writer's own ..data */
            {"./..data/x", NULL, "must not start with '..'"},
            {".//..2026_12_01", NULL, "must not start with '..'"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                char *clean = NULL;
                ck_error_t err = NULL;
                int r = volume_payload_check_path(cases[i].in, &clean, &err);
                if (cases[i].err == NULL) {
                        if (r < 0)
                                fail_msg("%s: %s", cases[i].in, ck_error_msg(err));
                        assert_string_equal(clean, cases[i].clean);
                        free(clean);
                } else {
                        assert_int_equal(r, -1);
                        if (strstr(ck_error_msg(err), cases[i].err) == NULL)
                                fail_msg("%s: got \"%s\"", cases[i].in, ck_error_msg(err));
                        ck_error_release(&err);
                }
        }
}

static void test_atomic_writer_refuses_escape(void **state)
{
        struct fixture *f = *state;
        cleanup_free char *dir = xasprintf("%s/vol", f->root);
        assert_int_equal(mkdir(dir, 0755), 0);
        cleanup_close int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct volume_payload p = {0};
        volume_payload_set(&p, "ok", "1", 1, 0644);
        volume_payload_set(&p, "../escape", "2", 1, 0644);
        ck_error_t err = NULL;
        bool wrote = true;
        assert_int_equal(volume_atomic_write(fd, dir, &p, -1, &wrote, &err), -1);
        assert_false(wrote);
        assert_non_null(strstr(ck_error_msg(err), "must not contain '..'"));
        ck_error_release(&err);
        volume_payload_release(&p);
        cleanup_free char *escape = xasprintf("%s/escape", f->root);
        assert_int_equal(access(escape, F_OK), -1);
        cleanup_free char *data = xasprintf("%s/..data", dir);
        assert_int_equal(access(data, F_OK), -1);
}

/* ---- secret ---- */

static void test_secret_on_tmpfs(void **state)
{
        SKIP_UNLESS_ROOT();
        struct fixture *f = *state;
        put_object(&f->kube, "secrets", "db",
                   "{\"data\": {\"password\": \"czNjcjN0\", \"user\": \"YWRtaW4=\"}}");
        pod_with(f,
                 "  - name: creds\n"
                 "    secret: {secretName: db}\n",
                 NULL);
        mount_ok(f, NULL);
        cleanup_free char *dir = vol_path(f, "kubernetes.io~secret", "creds", NULL);
        assert_true(is_tmpfs(dir));
        cleanup_free char *pw = vol_path(f, "kubernetes.io~secret", "creds", "password");
        assert_file(pw, "s3cr3t");
        assert_int_equal(mode_of(pw), 0644);
        /* not world-reachable on the node: the pod directory is 0750 */
        cleanup_free char *pod_dir = xasprintf("%s/pods/" UID, f->root);
        assert_int_equal(mode_of(pod_dir) & 0007, 0);

        /* mounted once */
        mount_ok(f, NULL);
        ck_error_t err = NULL;
        assert_int_equal(volume_cleanup_pod(f->root, UID, &err), 0);
        struct stat st;
        assert_int_equal(stat(pod_dir, &st), -1);

        /* missing: the secret named */
        pod_with(f,
                 "  - name: creds\n"
                 "    secret: {secretName: nope}\n",
                 NULL);
        cleanup_free char *msg = mount_all(f, &f->kube.iface, NULL);
        assert_string_equal(msg, "volume \"creds\": secret \"nope\" not found");
}

static void test_fs_group(void **state)
{
        SKIP_UNLESS_ROOT();
        struct fixture *f = *state;
        put_object(&f->kube, "secrets", "db", "{\"data\": {\"password\": \"czNjcjN0\"}}");
        pod_with(f,
                 "  - name: creds\n"
                 "    secret: {secretName: db, defaultMode: 0400}\n",
                 "  securityContext: {fsGroup: 2345}\n");
        mount_ok(f, NULL);
        cleanup_free char *pw = vol_path(f, "kubernetes.io~secret", "creds", "password");
        struct stat st;
        assert_int_equal(stat(pw, &st), 0);
        assert_int_equal(st.st_gid, 2345);
        assert_int_equal(st.st_mode & 07777, 0440);
        cleanup_free char *dir = vol_path(f, "kubernetes.io~secret", "creds", NULL);
        assert_int_equal(stat(dir, &st), 0);
        assert_int_equal(st.st_gid, 2345);
        assert_true(st.st_mode & S_ISGID);
}

/* ---- downwardAPI ---- */

static void test_downward_api(void **state)
{
        SKIP_UNLESS_ROOT();
        struct fixture *f = *state;
        pod_with(f,
                 "  - name: info\n"
                 "    downwardAPI:\n"
                 "      items:\n"
                 "      - {path: name, fieldRef: {fieldPath: metadata.name}}\n"
                 "      - {path: labels, fieldRef: {fieldPath: metadata.labels}}\n"
                 "      - {path: annotations, fieldRef: {fieldPath: metadata.annotations}}\n"
                 "      - {path: app, fieldRef: {fieldPath: \"metadata.labels['app']\"}}\n"
                 "      - path: cpu\n"
                 "        resourceFieldRef: {containerName: app, resource: limits.cpu, "
                 "divisor: 1m}\n"
                 "      - path: mem\n"
                 "        mode: 0600\n"
                 "        resourceFieldRef: {containerName: app, resource: limits.memory, "
                 "divisor: 1Mi}\n",
                 NULL);
        /* works without an apiserver */
        cleanup_free char *msg = mount_all(f, NULL, NULL);
        if (msg != NULL)
                fail_msg("%s", msg);
        cleanup_free char *dir = vol_path(f, "kubernetes.io~downward-api", "info", NULL);
        assert_true(is_tmpfs(dir));
        cleanup_free char *name = vol_path(f, "kubernetes.io~downward-api", "info", "name");
        assert_file(name, "web");
        cleanup_free char *labels = vol_path(f, "kubernetes.io~downward-api", "info", "labels");
        assert_file(labels, "app=\"web\"\ntier=\"front\"");
        cleanup_free char *notes = vol_path(f, "kubernetes.io~downward-api", "info", "annotations");
        assert_file(notes, "note=\"say \\\"hi\\\"\\n\"");
        cleanup_free char *app = vol_path(f, "kubernetes.io~downward-api", "info", "app");
        assert_file(app, "web");
        cleanup_free char *cpu = vol_path(f, "kubernetes.io~downward-api", "info", "cpu");
        assert_file(cpu, "1500");
        cleanup_free char *mem = vol_path(f, "kubernetes.io~downward-api", "info", "mem");
        assert_file(mem, "64");
        assert_int_equal(mode_of(mem), 0600);
}

/* ---- projected ---- */

static const char PROJECTED[] = "  - name: kube-api-access-x7k2p\n"
                                "    projected:\n"
                                "      sources:\n"
                                "      - serviceAccountToken: {path: token, audience: vault}\n"
                                "      - configMap:\n"
                                "          name: kube-root-ca.crt\n"
                                "          items: [{key: ca.crt, path: ca.crt}]\n"
                                "      - secret: {name: db, optional: true}\n"
                                "      - downwardAPI:\n"
                                "          items:\n"
                                "          - {path: namespace, fieldRef: {fieldPath: "
                                "metadata.namespace}}\n";

static void test_projected(void **state)
{
        SKIP_UNLESS_ROOT();
        struct fixture *f = *state;
        put_object(&f->kube, "configmaps", "kube-root-ca.crt",
                   "{\"data\": {\"ca.crt\": \"-----BEGIN CERTIFICATE-----\\n\"}}");
        pod_with(f, PROJECTED, NULL);
        struct kv_list paths = {0};
        mount_ok(f, &paths);
        cleanup_free char *dir =
            vol_path(f, "kubernetes.io~projected", "kube-api-access-x7k2p", NULL);
        assert_string_equal(kv_list_get(&paths, "kube-api-access-x7k2p"), dir);
        kv_list_release(&paths);
        assert_true(is_tmpfs(dir));
        cleanup_free char *token =
            vol_path(f, "kubernetes.io~projected", "kube-api-access-x7k2p", "token");
        assert_file(token, "token-1");
        assert_int_equal(mode_of(token), 0644);
        assert_string_equal(f->kube.last.audience, "vault");
        assert_int_equal(f->kube.last.expiration_seconds, 3600);
        assert_string_equal(f->kube.last.service_account, "builder");
        assert_string_equal(f->kube.last.pod_uid, UID);
        assert_string_equal(f->kube.last.pod_name, "web");
        cleanup_free char *ca =
            vol_path(f, "kubernetes.io~projected", "kube-api-access-x7k2p", "ca.crt");
        assert_file(ca, "-----BEGIN CERTIFICATE-----\n");
        cleanup_free char *ns =
            vol_path(f, "kubernetes.io~projected", "kube-api-access-x7k2p", "namespace");
        assert_file(ns, "default");

        /* the token is reused while fresh, also across a restart (cache file) */
        mount_ok(f, NULL);
        assert_int_equal(f->kube.tokens, 1);
        assert_file(token, "token-1");
        cleanup_free char *cache = xasprintf(
            "%s/pods/" UID "/plugins/kubernetes.io~projected/kube-api-access-x7k2p/token-0",
            f->root);
        assert_int_equal(mode_of(cache), 0600);

        /* an expired cached token is replaced */
        cleanup_free char *stale = xasprintf("{\"audience\":\"vault\",\"expirationSeconds\":3600,"
                                             "\"expirationTimestamp\":%lld,\"token\":\"old\"}",
                                             (long long)time(NULL) - 10);
        ck_error_t err = NULL;
        assert_int_equal(fs_write_file_atomic(cache, stale, strlen(stale), 0600, &err), 0);
        mount_ok(f, NULL);
        assert_int_equal(f->kube.tokens, 2);
        assert_file(token, "token-2");
}

static void test_projected_token_refresh_failure(void **state)
{
        SKIP_UNLESS_ROOT();
        struct fixture *f = *state;
        put_object(&f->kube, "configmaps", "kube-root-ca.crt", "{\"data\": {\"ca.crt\": \"x\"}}");
        pod_with(f, PROJECTED, NULL);
        f->kube.token_fail = true;
        cleanup_free char *msg = mount_all(f, &f->kube.iface, NULL);
        assert_non_null(msg);
        assert_non_null(strstr(msg, "request a token for service account default/builder"));
        f->kube.token_fail = false;
        mount_ok(f, NULL);

        /* due for refresh (80% of its life) but the apiserver is away: kept */
        cleanup_free char *cache = xasprintf(
            "%s/pods/" UID "/plugins/kubernetes.io~projected/kube-api-access-x7k2p/token-0",
            f->root);
        cleanup_free char *due = xasprintf("{\"audience\":\"vault\",\"expirationSeconds\":3600,"
                                           "\"expirationTimestamp\":%lld,\"token\":\"aging\"}",
                                           (long long)time(NULL) + 300);
        ck_error_t err = NULL;
        assert_int_equal(fs_write_file_atomic(cache, due, strlen(due), 0600, &err), 0);
        f->kube.token_fail = true;
        mount_ok(f, NULL);
        cleanup_free char *token =
            vol_path(f, "kubernetes.io~projected", "kube-api-access-x7k2p", "token");
        assert_file(token, "aging");
}

static void test_projected_standalone(void **state)
{
        struct fixture *f = *state;
        pod_with(f, PROJECTED, NULL);
        cleanup_free char *msg = mount_all(f, NULL, NULL);
        assert_string_equal(msg, "volume \"kube-api-access-x7k2p\": cannot setup projected volume "
                                 "kube-api-access-x7k2p because kube client is not configured");
}

static void test_token_refresh_decision(void **state)
{
        (void)state;
        const int64_t exp = 1000000;
        /* a 1 h token: refreshed past 80% of its life (12 min before expiry) */
        assert_false(volume_token_requires_refresh(exp - 3600, exp, 3600));
        assert_false(volume_token_requires_refresh(exp - 721, exp, 3600));
        assert_true(volume_token_requires_refresh(exp - 719, exp, 3600));
        assert_true(volume_token_requires_refresh(exp, exp, 3600));
        assert_true(volume_token_requires_refresh(exp + 5, exp, 3600));
        /* a 7 day token: refreshed after 24 h */
        const int64_t week = 7 * 24 * 3600;
        assert_false(volume_token_requires_refresh(exp - week + 23 * 3600, exp, week));
        assert_true(volume_token_requires_refresh(exp - week + 24 * 3600 + 1, exp, week));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_config_map_files, setup, teardown),
            cmocka_unit_test_setup_teardown(test_config_map_update_is_atomic_swap, setup, teardown),
            cmocka_unit_test_setup_teardown(test_config_map_items_and_modes, setup, teardown),
            cmocka_unit_test_setup_teardown(test_config_map_missing, setup, teardown),
            cmocka_unit_test_setup_teardown(test_config_map_missing_key, setup, teardown),
            cmocka_unit_test_setup_teardown(test_standalone, setup, teardown),
            cmocka_unit_test_setup_teardown(test_keeps_content_when_apiserver_away, setup,
                                            teardown),
            cmocka_unit_test(test_payload_paths),
            cmocka_unit_test_setup_teardown(test_atomic_writer_refuses_escape, setup, teardown),
            cmocka_unit_test_setup_teardown(test_secret_on_tmpfs, setup, teardown),
            cmocka_unit_test_setup_teardown(test_fs_group, setup, teardown),
            cmocka_unit_test_setup_teardown(test_downward_api, setup, teardown),
            cmocka_unit_test_setup_teardown(test_projected, setup, teardown),
            cmocka_unit_test_setup_teardown(test_projected_token_refresh_failure, setup, teardown),
            cmocka_unit_test_setup_teardown(test_projected_standalone, setup, teardown),
            cmocka_unit_test(test_token_refresh_decision),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
