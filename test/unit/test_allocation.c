/* SPDX-License-Identifier: Apache-2.0 */
/* The allocation checkpoint (allocation/state.h: upstream's file, its
 * checksum, a corrupt file refused) and a pod's allocation
 * (allocation/allocation.h: what is recorded, compared and put back into
 * the pod the workers sync). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "allocation/allocation.h"
#include "allocation/state.h"
#include "api/decode.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/gohash.h"
#include "util/xalloc.h"
#include "util/yamljson.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

static char *tmpdir(void)
{
        char *d = xstrdup("/tmp/ck-alloc-XXXXXX");
        assert_non_null(mkdtemp(d));
        return d;
}

static void write_file(const char *dir, const char *name, const char *text)
{
        cleanup_free char *path = xasprintf("%s/%s", dir, name);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
}

static char *read_file(const char *dir, const char *name)
{
        cleanup_free char *path = xasprintf("%s/%s", dir, name);
        char *buf = NULL;
        size_t len;
        ck_error_t err = NULL;
        if (fs_read_file(path, 1 << 20, &buf, &len, &err) < 0) {
                ck_error_release(&err);
                return NULL;
        }
        return buf;
}

static void remove_dir(char *d)
{
        ck_error_t err = NULL;
        assert_int_equal(fs_remove_all(d, &err), 0);
        free(d);
}

/* The checksum is DeepHashObject's of the data string: these values are
 * what upstream v1.35.8 computes (checksum.New on each string). */
static void test_checksum_vectors(void **state)
{
        (void)state;
        assert_int_equal(go_deep_hash_string(""), 441364273u);
        assert_int_equal(go_deep_hash_string("{\"entries\":{}}"), 1057365947u);
        assert_int_equal(go_deep_hash_string("a\"b\\c\n\xc3\xa9"), 986620565u);
}

/* A checkpoint as upstream writes it (this text is what Go's json.Marshal
 * of upstream's Checkpoint and PodResourceCheckpointInfo, with k8s.io/api
 * v0.35.8's ResourceRequirements, and DeepHashObject give) is read; what
 * we write is read back, with a checksum upstream's Verify accepts. */
static const char UPSTREAM_CHECKPOINT[] =
    "{\"data\":\"{\\\"entries\\\":{\\\"u1\\\":{\\\"ContainerResources\\\":{"
    "\\\"c1\\\":{\\\"limits\\\":{\\\"cpu\\\":\\\"25m\\\",\\\"memory\\\":\\\"25Mi\\\"},"
    "\\\"requests\\\":{\\\"cpu\\\":\\\"25m\\\",\\\"memory\\\":\\\"25Mi\\\"}},"
    "\\\"c2\\\":{\\\"requests\\\":{\\\"cpu\\\":\\\"1\\\"}}},"
    "\\\"PodLevelResources\\\":null}}}\",\"checksum\":%u}";

static void test_state_round_trip(void **state)
{
        (void)state;
        char *dir = tmpdir();
        /* upstream's own file, for a pod uid-like key */
        const char *up =
            "{\"data\":\"{\\\"entries\\\":{\\\"2f0a7c9e-1111-4222-8333-944455556666\\\":"
            "{\\\"ContainerResources\\\":{\\\"c1\\\":{\\\"limits\\\":{\\\"cpu\\\":"
            "\\\"25m\\\",\\\"memory\\\":\\\"25Mi\\\"},\\\"requests\\\":{\\\"cpu\\\":"
            "\\\"25m\\\",\\\"memory\\\":\\\"25Mi\\\"}},\\\"c2\\\":{\\\"requests\\\":"
            "{\\\"cpu\\\":\\\"1\\\"}}},\\\"PodLevelResources\\\":null}}}\","
            "\"checksum\":1388929123}";
        write_file(dir, "allocated_pods_state", up);
        struct alloc_state *s = NULL;
        ck_error_t err = NULL;
        assert_int_equal(alloc_state_open(dir, "allocated_pods_state", &s, &err), 0);
        json_t *c2 = alloc_state_get(s, "2f0a7c9e-1111-4222-8333-944455556666", "c2");
        assert_non_null(c2);
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(c2, "requests"), "cpu")), "1");
        json_decref(c2);
        alloc_state_free(s);

        /* the same layout for another key, checksummed here */
        const char *data = "{\"entries\":{\"u1\":{\"ContainerResources\":{\"c1\":{\"limits\":{"
                           "\"cpu\":\"25m\",\"memory\":\"25Mi\"},\"requests\":{\"cpu\":\"25m\","
                           "\"memory\":\"25Mi\"}},\"c2\":{\"requests\":{\"cpu\":\"1\"}}},"
                           "\"PodLevelResources\":null}}}";
        cleanup_free char *text = xasprintf(UPSTREAM_CHECKPOINT, go_deep_hash_string(data));
        write_file(dir, "allocated_pods_state", text);

        assert_int_equal(alloc_state_open(dir, "allocated_pods_state", &s, &err), 0);
        json_t *c1 = alloc_state_get(s, "u1", "c1");
        assert_non_null(c1);
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(c1, "limits"), "memory")), "25Mi");
        json_decref(c1);
        assert_null(alloc_state_get(s, "u1", "c3"));
        assert_null(alloc_state_get_pod(s, "u2"));

        json_t *res = json_pack("{s:{s:s}}", "requests", "cpu", "1");
        assert_int_equal(alloc_state_set(s, "u2", "web", res, &err), 0);
        json_decref(res);
        alloc_state_free(s);

        /* the file: {"data": ..., "checksum": FNV of data}; both pods */
        cleanup_free char *written = read_file(dir, "allocated_pods_state");
        json_t *f = json_loads(written, 0, NULL);
        assert_non_null(f);
        const char *d = json_string_value(json_object_get(f, "data"));
        assert_non_null(d);
        assert_int_equal(json_integer_value(json_object_get(f, "checksum")),
                         go_deep_hash_string(d));
        json_t *info = json_loads(d, 0, NULL);
        assert_non_null(json_object_get(json_object_get(json_object_get(info, "entries"), "u2"),
                                        "ContainerResources"));
        assert_true(json_is_null(json_object_get(
            json_object_get(json_object_get(info, "entries"), "u1"), "PodLevelResources")));
        json_decref(info);
        json_decref(f);

        assert_int_equal(alloc_state_open(dir, "allocated_pods_state", &s, &err), 0);
        json_t *pod = alloc_state_get_pod(s, "u2");
        assert_string_equal(json_string_value(json_object_get(
                                json_object_get(json_object_get(pod, "web"), "requests"), "cpu")),
                            "1");
        json_decref(pod);
        /* forgetting: the pods no source has */
        const char *keep[] = {"u2"};
        alloc_state_retain(s, keep, 1);
        assert_null(alloc_state_get_pod(s, "u1"));
        alloc_state_remove_pod(s, "u2");
        assert_null(alloc_state_get_pod(s, "u2"));
        alloc_state_free(s);
        remove_dir(dir);
}

/* A checkpoint whose checksum does not match its data is refused, as
 * upstream refuses to start on it; so is one that is not JSON.  No file is
 * an empty state. */
static void test_state_corrupt(void **state)
{
        (void)state;
        char *dir = tmpdir();
        struct alloc_state *s = NULL;
        ck_error_t err = NULL;
        assert_int_equal(alloc_state_open(dir, "actuated_pods_state", &s, &err), 0);
        assert_null(alloc_state_get_pod(s, "x"));
        alloc_state_free(s);

        write_file(dir, "actuated_pods_state", "{\"data\":\"{}\",\"checksum\":1}");
        assert_int_equal(alloc_state_open(dir, "actuated_pods_state", &s, &err), -1);
        assert_non_null(strstr(ck_error_msg(err), "actuated_pods_state"));
        assert_non_null(strstr(ck_error_msg(err), "corrupted"));
        ck_error_release(&err);
        write_file(dir, "actuated_pods_state", "not json");
        assert_int_equal(alloc_state_open(dir, "actuated_pods_state", &s, &err), -1);
        assert_non_null(strstr(ck_error_msg(err), "actuated_pods_state"));
        ck_error_release(&err);
        /* an empty state, as upstream marshals it */
        cleanup_free char *ok =
            xasprintf("{\"data\":\"{}\",\"checksum\":%u}", go_deep_hash_string("{}"));
        write_file(dir, "actuated_pods_state", ok);
        assert_int_equal(alloc_state_open(dir, "actuated_pods_state", &s, &err), 0);
        alloc_state_free(s);
        remove_dir(dir);
}

/* A checkpoint that cannot be written changes nothing: what is in memory
 * stays what is on disk, and the caller sees the error. */
static void test_state_write_failure(void **state)
{
        (void)state;
        char *dir = tmpdir();
        struct alloc_state *s = NULL;
        ck_error_t err = NULL;
        assert_int_equal(alloc_state_open(dir, "allocated_pods_state", &s, &err), 0);
        json_t *one = json_pack("{s:{s:s}}", "requests", "cpu", "1");
        assert_int_equal(alloc_state_set(s, "u1", "web", one, &err), 0);
        cleanup_free char *sub = xasprintf("%s/gone", dir);
        alloc_state_free(s);
        /* a state whose directory is gone: every write fails */
        assert_int_equal(mkdir(sub, 0755), 0);
        assert_int_equal(alloc_state_open(sub, "allocated_pods_state", &s, &err), 0);
        assert_int_equal(alloc_state_set(s, "u1", "web", one, &err), 0);
        assert_int_equal(rmdir(sub) == 0 || errno == ENOTEMPTY, 1);
        cleanup_free char *file = xasprintf("%s/allocated_pods_state", sub);
        unlink(file);
        rmdir(sub);
        json_t *two = json_pack("{s:{s:s}}", "requests", "cpu", "2");
        assert_int_equal(alloc_state_set(s, "u1", "web", two, &err), -1);
        assert_non_null(strstr(ck_error_msg(err), "allocated_pods_state"));
        ck_error_release(&err);
        json_t *kept = alloc_state_get(s, "u1", "web");
        if (!json_equal(kept, one))
                fail_msg("kept %s", json_dumps(kept, JSON_COMPACT));
        json_decref(kept);
        json_t *pod = json_pack("{s:O}", "web", two);
        assert_int_equal(alloc_state_set_pod(s, "u2", pod, &err), -1);
        ck_error_release(&err);
        assert_null(alloc_state_get_pod(s, "u2"));
        json_decref(pod);
        json_decref(one);
        json_decref(two);
        alloc_state_free(s);
        remove_dir(dir);
}

static struct pod *decode(const char *yaml)
{
        json_t *obj = NULL;
        ck_error_t err = NULL;
        if (yamljson_parse(yaml, strlen(yaml), &obj, &err) < 0)
                fail_msg("yaml: %s", ck_error_msg(err));
        struct pod *p = NULL;
        if (api_pod_decode(obj, &p, &err) < 0)
                fail_msg("decode: %s", ck_error_msg(err));
        json_decref(obj);
        p->source = POD_SOURCE_API;
        return p;
}

static const char POD[] = "apiVersion: v1\nkind: Pod\n"
                          "metadata: {name: p, namespace: d, uid: u1}\n"
                          "spec:\n"
                          "  initContainers:\n"
                          "  - {name: setup, image: x, resources: {requests: {cpu: 50m}}}\n"
                          "  - {name: proxy, image: x, restartPolicy: Always,\n"
                          "     resources: {limits: {cpu: 100m}}}\n"
                          "  containers:\n"
                          "  - {name: web, image: x, resources: {requests: {cpu: 250m, memory: "
                          "64Mi}, limits: {memory: 128Mi}}}\n"
                          "  - {name: bare, image: x}\n";

/* upstream allocationFromPod: app containers and sidecars, {} for none;
 * the regular init container is not resizable. */
static void test_from_pod(void **state)
{
        (void)state;
        cleanup_pod struct pod *p = decode(POD);
        cleanup_json json_t *a = alloc_from_pod(p);
        assert_int_equal(json_object_size(a), 3);
        assert_null(json_object_get(a, "setup"));
        assert_int_equal(json_object_size(json_object_get(a, "bare")), 0);
        /* the sidecar's limit defaulted its request, as the apiserver does */
        assert_string_equal(json_string_value(json_object_get(
                                json_object_get(json_object_get(a, "proxy"), "requests"), "cpu")),
                            "100m");
        assert_true(alloc_pod_matches(p, a));
        assert_true(alloc_container_resizable(p, "proxy"));
        assert_true(alloc_container_resizable(p, "web"));
        assert_false(alloc_container_resizable(p, "setup"));
        assert_false(alloc_container_resizable(p, "nope"));
}

/* Quantities compare by value; a missing list is an empty one. */
static void test_resources_equal(void **state)
{
        (void)state;
        cleanup_json json_t *a =
            json_pack("{s:{s:s, s:s}}", "requests", "cpu", "1", "memory", "1Gi");
        cleanup_json json_t *b = json_pack("{s:{s:s, s:s}, s:{}}", "requests", "cpu", "1000m",
                                           "memory", "1073741824", "limits");
        cleanup_json json_t *c = json_pack("{s:{s:s}}", "requests", "cpu", "1");
        cleanup_json json_t *d =
            json_pack("{s:{s:s, s:s}}", "requests", "cpu", "2", "memory", "1Gi");
        assert_true(alloc_resources_equal(a, b));
        assert_false(alloc_resources_equal(a, c));
        assert_false(alloc_resources_equal(a, d));
        cleanup_json json_t *empty = json_object();
        assert_true(alloc_resources_equal(empty, NULL));
}

/* The pod the workers sync: the spec with the allocated resources; the
 * same pod when they match; containers the allocation does not name keep
 * theirs. */
static void test_update_pod(void **state)
{
        (void)state;
        struct pod *p = decode(POD);
        cleanup_json json_t *a = alloc_from_pod(p);
        struct pod *same = NULL;
        ck_error_t err = NULL;
        assert_int_equal(alloc_update_pod(p, a, &same, &err), 0);
        assert_ptr_equal(same, p);
        pod_unref(same);

        /* as allocations are recorded: from decoded (defaulted) pods */
        json_object_set_new(a, "web",
                            json_pack("{s:{s:s, s:s}, s:{s:s}}", "requests", "cpu", "100m",
                                      "memory", "64Mi", "limits", "memory", "64Mi"));
        json_object_del(a, "proxy");
        struct pod *q = NULL;
        assert_int_equal(alloc_update_pod(p, a, &q, &err), 0);
        assert_ptr_not_equal(q, p);
        assert_int_equal(q->containers[0].resources.requests.cpu_milli, 100);
        assert_int_equal(q->containers[0].resources.limits.memory, 64 << 20);
        assert_int_equal(q->containers[0].resources.requests.memory, 64 << 20);
        assert_int_equal(q->init_containers[1].resources.limits.cpu_milli, 100);
        assert_int_equal(q->source, POD_SOURCE_API);
        assert_string_equal(q->uid, "u1");
        assert_true(alloc_pod_matches(q, a));
        assert_false(alloc_pod_matches(p, a));
        pod_unref(q);
        pod_unref(p);
}

/* The numbers a resize compares, and the JSON the actuated state keeps. */
static void test_resources_numbers(void **state)
{
        (void)state;
        cleanup_json json_t *j = json_pack("{s:{s:s, s:s}, s:{s:s}}", "limits", "cpu", "35m",
                                           "memory", "35Mi", "requests", "cpu", "25m");
        struct alloc_resources r;
        alloc_resources_from_json(j, &r);
        assert_int_equal(r.cpu_limit, 35);
        assert_int_equal(r.memory_limit, 35 << 20);
        assert_int_equal(r.cpu_request, 25);
        assert_int_equal(r.memory_request, 0);
        cleanup_json json_t *back = alloc_resources_to_json(&r);
        assert_true(alloc_resources_equal(j, back));
        assert_null(json_object_get(json_object_get(back, "requests"), "memory"));
        struct alloc_resources big = {.cpu_request = 1500, .memory_request = 1000};
        cleanup_json json_t *b = alloc_resources_to_json(&big);
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(b, "requests"), "cpu")), "1500m");
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(b, "requests"), "memory")), "1k");
        struct alloc_resources zero;
        alloc_resources_from_json(NULL, &zero);
        assert_true(alloc_resources_same(&zero, &(struct alloc_resources){0}));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_checksum_vectors), cmocka_unit_test(test_state_round_trip),
            cmocka_unit_test(test_state_corrupt),    cmocka_unit_test(test_state_write_failure),
            cmocka_unit_test(test_from_pod),         cmocka_unit_test(test_resources_equal),
            cmocka_unit_test(test_update_pod),       cmocka_unit_test(test_resources_numbers),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
