/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The status manager against a scripted fake apiserver: what it writes
 * (PATCH pods/<name>/status with the UID precondition, DELETE with grace
 * period 0, mirror pods with the node owner reference), that a failed write
 * is retried until it lands, and that a pod the apiserver no longer has is
 * dropped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fake_apiserver.h"

#include "api/decode.h"
#include "kubelet/status_manager.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"

#include "test_pods.h"

static struct pod *api_pod(const char *name, const char *uid)
{
        cleanup_free char *text =
            xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
                      "\"namespace\":\"default\",\"uid\":\"%s\"},\"spec\":{\"nodeName\":\"n1\","
                      "\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}]}}",
                      name, uid);
        cleanup_json json_t *obj = json_loads(text, 0, NULL);
        struct pod *pod = test_pod_object(obj);
        pod->source = POD_SOURCE_API;
        return pod;
}

struct fixture {
        struct fake *fake;
        struct rest_pool *pool;
        struct status_store *store;
        struct status_manager *sm;
};

static void start(struct fixture *f, const struct answer *script, size_t n)
{
        f->fake = fake_start(script, n);
        f->pool = fake_rest_pool(f->fake);
        f->store = status_store_new();
        f->sm = status_manager_start(f->store, f->pool, "n1");
}

static void stop(struct fixture *f)
{
        status_manager_stop(f->sm);
        status_store_free(f->store);
        rest_pool_free(f->pool);
        fake_stop(f->fake);
}

static size_t pending_count(struct status_store *st)
{
        struct status_pending *p = NULL;
        size_t n = status_store_pending(st, &p);
        status_pending_free(p, n);
        return n;
}

static void set_status(struct fixture *f, struct pod *pod, const char *phase)
{
        status_store_set_pod(f->store, pod);
        status_store_set_status(f->store, pod->uid, json_pack("{s:s}", "phase", phase));
        status_manager_notify(f->sm);
}

/* Waits (up to 10 s, a bound for a busy machine, not a measure) until the
 * store has n statuses pending; fails the test on timeout. */
static void wait_pending(struct status_store *st, size_t n)
{
        size_t have = 0;
        for (int waited = 0; (have = pending_count(st)) != n; waited += 10) {
                if (waited >= 10000)
                        fail_msg("%zu statuses pending, expected %zu", have, n);
                usleep(10000);
        }
}

/* The request line of the fake's i-th request, read under its lock. */
static void assert_request(struct fake *fk, size_t i, const char *want)
{
        pthread_mutex_lock(&fk->lock);
        char got[sizeof(fk->req[0])];
        snprintf(got, sizeof(got), "%s", i < fk->n_req ? fk->req[i] : "(none)");
        pthread_mutex_unlock(&fk->lock);
        assert_string_equal(got, want);
}

/* upstream mergePodStatus: a terminal phase is not published while the
 * pod's containers may still run; the apiserver keeps the phase it had
 * until the pod is stopped, then gets the terminal one. */
static void test_terminal_phase_waits_for_the_stop(void **state)
{
        (void)state;
        struct status_store *st = status_store_new();
        cleanup_json json_t *obj = json_loads(
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\","
            "\"namespace\":\"default\",\"uid\":\"u\"},\"spec\":{\"containers\":[{\"name\":"
            "\"c\",\"image\":\"busybox\"}]},\"status\":{\"phase\":\"Running\"}}",
            0, NULL);
        cleanup_pod struct pod *pod = test_pod_object(obj);
        pod->source = POD_SOURCE_API;
        status_store_set_pod(st, pod);
        status_store_set_status(st, "u",
                                json_pack("{s:s, s:s, s:s}", "phase", "Failed", "reason",
                                          "DeadlineExceeded", "message", "too long"));
        struct status_pending *p = NULL;
        size_t n = status_store_pending(st, &p);
        assert_int_equal(n, 1);
        assert_string_equal(json_string_value(json_object_get(p[0].status, "phase")), "Running");
        assert_null(json_object_get(p[0].status, "reason"));
        status_pending_free(p, n);
        status_store_set_stopped(st, "u");
        n = status_store_pending(st, &p);
        assert_int_equal(n, 1);
        assert_string_equal(json_string_value(json_object_get(p[0].status, "phase")), "Failed");
        assert_string_equal(json_string_value(json_object_get(p[0].status, "reason")),
                            "DeadlineExceeded");
        status_pending_free(p, n);
        status_store_free(st);
}

static void test_status_patch_retried_until_it_lands(void **state)
{
        (void)state;
        static const struct answer script[] = {
            {.status = 500, .body = "{\"kind\":\"Status\",\"code\":500,\"message\":\"etcd\"}"},
            {.status = 200, .body = "{}"},
            {.status = 200, .body = "{}"}, /* p2, the barrier below */
        };
        struct fixture f = {0};
        start(&f, script, 3);
        cleanup_pod struct pod *pod = api_pod("p1", "u1");
        set_status(&f, pod, "Running");
        fake_wait_requests(f.fake, 2);
        /* the answer is handled after the fake records it: landed, once the
         * status is no longer pending */
        wait_pending(f.store, 0);
        assert_string_equal(f.fake->req[0], "PATCH /api/v1/namespaces/default/pods/p1/status");
        assert_string_equal(f.fake->req[1], "PATCH /api/v1/namespaces/default/pods/p1/status");
        assert_non_null(
            strcasestr(f.fake->head[1], "Content-Type: application/strategic-merge-patch+json"));
        cleanup_json json_t *body = json_loads(f.fake->body[1], 0, NULL);
        assert_non_null(body);
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(body, "metadata"), "uid")), "u1");
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(body, "status"), "phase")),
            "Running");
        /* an unchanged status is not written again: p2's status, set after
         * it, is the next write (the manager writes what is pending in the
         * store's order, p1 first) */
        status_store_set_status(f.store, "u1", json_pack("{s:s}", "phase", "Running"));
        status_manager_notify(f.sm);
        cleanup_pod struct pod *p2 = api_pod("p2", "u2");
        set_status(&f, p2, "Pending");
        fake_wait_requests(f.fake, 3);
        assert_request(f.fake, 2, "PATCH /api/v1/namespaces/default/pods/p2/status");
        wait_pending(f.store, 0);
        assert_int_equal(fake_wait_requests(f.fake, 3), 3);
        stop(&f);
}

/* Every resync generates the pod's status again: an equal one keeps the
 * tree already stored (the one the apiserver was sent shares it), so a
 * pod holds one status tree, not two; a changed one replaces it. */
static void test_equal_status_keeps_the_stored_tree(void **state)
{
        (void)state;
        struct status_store *st = status_store_new();
        cleanup_pod struct pod *pod = api_pod("p1", "u1");
        status_store_set_pod(st, pod);
        json_t *first =
            json_pack("{s:s, s:[{s:s}]}", "phase", "Running", "conditions", "type", "Ready");
        status_store_set_status(st, "u1", first);
        uint64_t v = status_store_version(st, "u1");
        status_store_set_status(st, "u1", json_deep_copy(first));
        cleanup_json json_t *kept = status_store_get_status(st, "u1");
        assert_ptr_equal(kept, first);
        assert_int_equal(status_store_version(st, "u1"), v);
        status_store_set_status(st, "u1", json_pack("{s:s}", "phase", "Succeeded"));
        cleanup_json json_t *changed = status_store_get_status(st, "u1");
        assert_string_equal(json_string_value(json_object_get(changed, "phase")), "Succeeded");
        assert_int_equal(status_store_version(st, "u1"), v + 1);
        status_store_free(st);
}

/* A patch built against a status the apiserver no longer has (a podIP
 * that is not there: the new IP would sit beside the old one, 422) is built
 * again against the pod the apiserver gives, with a delete directive for
 * what is gone there, as upstream's status manager diffs the pod it GETs. */
static void test_refused_patch_is_built_again_from_the_apiserver(void **state)
{
        (void)state;
        static const struct answer script[] = {
            {.status = 422,
             .body = "{\"kind\":\"Status\",\"code\":422,\"reason\":\"Invalid\",\"message\":"
                     "\"status.podIPs: may specify no more than one IP for each IP family\"}"},
            {.status = 200,
             .body = "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p1\",\"uid\":\"u1\"},"
                     "\"status\":{\"phase\":\"Running\",\"podIP\":\"10.0.0.1\","
                     "\"podIPs\":[{\"ip\":\"10.0.0.1\"}]}}"},
            {.status = 200, .body = "{}"},
        };
        struct fixture f = {0};
        start(&f, script, 3);
        cleanup_pod struct pod *pod = api_pod("p1", "u1");
        status_store_set_pod(f.store, pod);
        status_store_set_status(f.store, "u1",
                                json_pack("{s:s, s:s, s:[{s:s}]}", "phase", "Running", "podIP",
                                          "10.0.0.2", "podIPs", "ip", "10.0.0.2"));
        status_manager_notify(f.sm);
        fake_wait_requests(f.fake, 3);
        wait_pending(f.store, 0);
        assert_request(f.fake, 0, "PATCH /api/v1/namespaces/default/pods/p1/status");
        assert_request(f.fake, 1, "GET /api/v1/namespaces/default/pods/p1");
        assert_request(f.fake, 2, "PATCH /api/v1/namespaces/default/pods/p1/status");
        pthread_mutex_lock(&f.fake->lock);
        cleanup_json json_t *body = json_loads(f.fake->body[2], 0, NULL);
        pthread_mutex_unlock(&f.fake->lock);
        assert_non_null(body);
        json_t *ips = json_object_get(json_object_get(body, "status"), "podIPs");
        assert_int_equal(json_array_size(ips), 2);
        assert_string_equal(json_string_value(json_object_get(json_array_get(ips, 0), "ip")),
                            "10.0.0.2");
        assert_string_equal(json_string_value(json_object_get(json_array_get(ips, 1), "$patch")),
                            "delete");
        assert_string_equal(json_string_value(json_object_get(json_array_get(ips, 1), "ip")),
                            "10.0.0.1");
        stop(&f);
}

static void test_status_of_a_pod_gone_from_the_apiserver_is_dropped(void **state)
{
        (void)state;
        static const struct answer script[] = {
            {.status = 404, .body = "{\"kind\":\"Status\",\"code\":404,\"reason\":\"NotFound\"}"},
            {.status = 200, .body = "{}"}, /* p2, the barrier below */
        };
        struct fixture f = {0};
        start(&f, script, 2);
        cleanup_pod struct pod *pod = api_pod("p1", "u1");
        set_status(&f, pod, "Pending");
        fake_wait_requests(f.fake, 1);
        /* dropped: no longer pending (a failed write stays pending, for the
         * retry) */
        wait_pending(f.store, 0);
        /* and not written again: the next write is p2's */
        cleanup_pod struct pod *p2 = api_pod("p2", "u2");
        set_status(&f, p2, "Pending");
        fake_wait_requests(f.fake, 2);
        assert_request(f.fake, 0, "PATCH /api/v1/namespaces/default/pods/p1/status");
        assert_request(f.fake, 1, "PATCH /api/v1/namespaces/default/pods/p2/status");
        wait_pending(f.store, 0);
        assert_int_equal(fake_wait_requests(f.fake, 2), 2);
        stop(&f);
}

static void test_static_pod_status_waits_for_its_mirror(void **state)
{
        (void)state;
        static const struct answer script[] = {
            {.status = 200, .body = "{}"}, /* p2, the barrier below */
            {.status = 200, .body = "{}"},
        };
        struct fixture f = {0};
        start(&f, script, 2);
        cleanup_pod struct pod *pod = api_pod("s1", "static-uid");
        /* a static pod: no API object until its mirror exists */
        pod->source = POD_SOURCE_FILE;
        set_status(&f, pod, "Running");
        /* an apiserver pod's status set after it is written first: s1's is
         * not written (it comes first in the store's order) */
        cleanup_pod struct pod *p2 = api_pod("p2", "u2");
        set_status(&f, p2, "Pending");
        fake_wait_requests(f.fake, 1);
        assert_request(f.fake, 0, "PATCH /api/v1/namespaces/default/pods/p2/status");
        wait_pending(f.store, 0);
        assert_int_equal(fake_wait_requests(f.fake, 1), 1);
        assert_true(status_store_set_api_uid(f.store, "static-uid", "mirror-uid"));
        status_manager_notify(f.sm);
        fake_wait_requests(f.fake, 2);
        assert_request(f.fake, 1, "PATCH /api/v1/namespaces/default/pods/s1/status");
        /* the fake records a request's body before it counts the request */
        cleanup_json json_t *body = json_loads(f.fake->body[1], 0, NULL);
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(body, "metadata"), "uid")),
            "mirror-uid");
        stop(&f);
}

static void test_delete_and_mirror_writes(void **state)
{
        (void)state;
        static const struct answer script[] = {
            {.status = 503, .body = "{}"}, /* DELETE: retried */
            {.status = 200, .body = "{}"}, /* DELETE again */
            {.status = 200, .body = "{\"metadata\":{\"name\":\"n1\",\"uid\":\"node-uid\"}}"},
            {.status = 201, .body = "{}"}, /* POST mirror */
        };
        struct fixture f = {0};
        start(&f, script, 4);
        status_manager_delete_pod(f.sm, "default", "p1", "u1");
        fake_wait_requests(f.fake, 2);
        assert_string_equal(f.fake->req[1], "DELETE /api/v1/namespaces/default/pods/p1");
        cleanup_json json_t *del = json_loads(f.fake->body[1], 0, NULL);
        assert_int_equal(json_integer_value(json_object_get(del, "gracePeriodSeconds")), 0);
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(del, "preconditions"), "uid")), "u1");

        json_t *mirror = json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", "v1", "kind", "Pod",
                                   "metadata", "name", "s1-n1", "namespace", "kube-system");
        status_manager_create_mirror(f.sm, mirror, NULL);
        fake_wait_requests(f.fake, 4);
        assert_string_equal(f.fake->req[2], "GET /api/v1/nodes/n1");
        assert_string_equal(f.fake->req[3], "POST /api/v1/namespaces/kube-system/pods");
        cleanup_json json_t *posted = json_loads(f.fake->body[3], 0, NULL);
        json_t *owner = json_array_get(
            json_object_get(json_object_get(posted, "metadata"), "ownerReferences"), 0);
        assert_string_equal(json_string_value(json_object_get(owner, "kind")), "Node");
        assert_string_equal(json_string_value(json_object_get(owner, "uid")), "node-uid");
        stop(&f);
}

/* Someone else rewrote the pod's status in the apiserver (the node
 * lifecycle controller sets Ready=False): ours is written again. */
static void test_status_overwritten_in_the_apiserver_is_written_again(void **state)
{
        (void)state;
        struct status_store *st = status_store_new();
        cleanup_pod struct pod *pod = api_pod("p1", "u1");
        status_store_set_pod(st, pod);
        status_store_set_status(st, "u1",
                                json_pack("{s:s, s:[{s:s, s:s}]}", "phase", "Running", "conditions",
                                          "type", "Ready", "status", "True"));
        status_store_mark_synced(st, "u1", status_store_version(st, "u1"), NULL);
        assert_int_equal(pending_count(st), 0);

        /* the same, with conditions the kubelet does not own: nothing to do */
        cleanup_json json_t *same =
            json_pack("{s:s, s:[{s:s, s:s}, {s:s, s:s}]}", "phase", "Running", "conditions", "type",
                      "PodScheduled", "status", "True", "type", "Ready", "status", "True");
        assert_false(status_store_reconcile(st, "u1", same));
        assert_int_equal(pending_count(st), 0);

        cleanup_json json_t *not_ready =
            json_pack("{s:s, s:[{s:s, s:s}]}", "phase", "Running", "conditions", "type", "Ready",
                      "status", "False");
        assert_true(status_store_reconcile(st, "u1", not_ready));
        assert_int_equal(pending_count(st), 1);
        status_store_free(st);
}

int main(void)
{
        log_set_verbosity(-1);
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_terminal_phase_waits_for_the_stop),
            cmocka_unit_test(test_status_patch_retried_until_it_lands),
            cmocka_unit_test(test_equal_status_keeps_the_stored_tree),
            cmocka_unit_test(test_refused_patch_is_built_again_from_the_apiserver),
            cmocka_unit_test(test_status_of_a_pod_gone_from_the_apiserver_is_dropped),
            cmocka_unit_test(test_static_pod_status_waits_for_its_mirror),
            cmocka_unit_test(test_delete_and_mirror_writes),
            cmocka_unit_test(test_status_overwritten_in_the_apiserver_is_written_again),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
