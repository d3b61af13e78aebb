/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The event recorder: the Event it builds (name, JSON, patch), upstream's
 * correlator (keys, aggregation, repeats, spam filter) on a fake clock, and
 * the recorder against a scripted fake apiserver on 127.0.0.1 (what it
 * POSTs and PATCHes).  The real apiserver: by hand (see the report) and
 * the e2e suite.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fake_apiserver.h"

#include "client/events_internal.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SEC 1000000000LL
/* 2024-05-01T10:00:00Z */
#define T0 (1714557600LL * SEC)

static const struct event_object pod_web = {.kind = "Pod",
                                            .api_version = "v1",
                                            .namespace = "default",
                                            .name = "web",
                                            .uid = "u-1",
                                            .resource_version = "42",
                                            .field_path = "spec.containers{app}"};
static const struct event_object node_n1 = {
    .kind = "Node", .api_version = "v1", .name = "n1", .uid = "n1"};

static struct event *started(const char *message, int64_t now)
{
        return event__new(&pod_web, "n1", EVENT_NORMAL, "Started", message, now);
}

/* ---- the Event ---- */

static void test_name_is_object_dot_hex_nanos(void **state)
{
        (void)state;
        char *name = event__name("web", T0 + 5);
        char want[64];
        snprintf(want, sizeof(want), "web.%llx", (unsigned long long)(T0 + 5));
        assert_string_equal(name, want);
        assert_int_equal(strlen(name), strlen("web.") + 16);
        free(name);
}

static void test_name_falls_back_to_uuid(void **state)
{
        (void)state;
        char longname[300];
        memset(longname, 'a', sizeof(longname) - 1);
        longname[sizeof(longname) - 1] = '\0';
        const char *bad[] = {"Web", longname, "web_1", ""};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                char *name = event__name(bad[i], T0);
                assert_int_equal(strlen(name), 36);
                assert_int_equal(name[8], '-');
                assert_int_equal(name[14], '4');
                free(name);
        }
}

static void test_pod_event_json(void **state)
{
        (void)state;
        struct event *ev = event__new(&pod_web, "n1", EVENT_WARNING, "BackOff", "Back-off", T0);
        json_t *j = event__to_json(ev);
        assert_string_equal(json_string_value(json_object_get(j, "kind")), "Event");
        json_t *meta = json_object_get(j, "metadata");
        assert_string_equal(json_string_value(json_object_get(meta, "namespace")), "default");
        assert_string_equal(json_string_value(json_object_get(meta, "name")), ev->name);
        json_t *ref = json_object_get(j, "involvedObject");
        assert_string_equal(json_string_value(json_object_get(ref, "kind")), "Pod");
        assert_string_equal(json_string_value(json_object_get(ref, "namespace")), "default");
        assert_string_equal(json_string_value(json_object_get(ref, "name")), "web");
        assert_string_equal(json_string_value(json_object_get(ref, "uid")), "u-1");
        assert_string_equal(json_string_value(json_object_get(ref, "apiVersion")), "v1");
        assert_string_equal(json_string_value(json_object_get(ref, "resourceVersion")), "42");
        assert_string_equal(json_string_value(json_object_get(ref, "fieldPath")),
                            "spec.containers{app}");
        assert_string_equal(json_string_value(json_object_get(j, "reason")), "BackOff");
        assert_string_equal(json_string_value(json_object_get(j, "message")), "Back-off");
        assert_string_equal(json_string_value(json_object_get(j, "type")), "Warning");
        json_t *src = json_object_get(j, "source");
        assert_string_equal(json_string_value(json_object_get(src, "component")), "kubelet");
        assert_string_equal(json_string_value(json_object_get(src, "host")), "n1");
        assert_string_equal(json_string_value(json_object_get(j, "firstTimestamp")),
                            "2024-05-01T10:00:00Z");
        assert_string_equal(json_string_value(json_object_get(j, "lastTimestamp")),
                            "2024-05-01T10:00:00Z");
        assert_int_equal(json_integer_value(json_object_get(j, "count")), 1);
        assert_string_equal(json_string_value(json_object_get(j, "reportingComponent")), "kubelet");
        assert_string_equal(json_string_value(json_object_get(j, "reportingInstance")), "n1");
        json_decref(j);
        event__free(ev);
}

static void test_node_event_goes_to_default(void **state)
{
        (void)state;
        struct event *ev = event__new(&node_n1, "n1", EVENT_NORMAL, "Starting", "x", T0);
        json_t *j = event__to_json(ev);
        json_t *meta = json_object_get(j, "metadata");
        assert_string_equal(json_string_value(json_object_get(meta, "namespace")), "default");
        json_t *ref = json_object_get(j, "involvedObject");
        assert_null(json_object_get(ref, "namespace"));
        assert_null(json_object_get(ref, "fieldPath"));
        assert_string_equal(json_string_value(json_object_get(ref, "kind")), "Node");
        json_decref(j);
        event__free(ev);
}

static void test_patch_carries_count_time_message(void **state)
{
        (void)state;
        struct event *ev = started("Container started", T0 + 90 * SEC);
        ev->count = 3;
        json_t *p = event__patch_json(ev);
        assert_int_equal(json_object_size(p), 3);
        assert_int_equal(json_integer_value(json_object_get(p, "count")), 3);
        assert_string_equal(json_string_value(json_object_get(p, "lastTimestamp")),
                            "2024-05-01T10:01:30Z");
        assert_string_equal(json_string_value(json_object_get(p, "message")), "Container started");
        json_decref(p);
        event__free(ev);
}

static void test_keys(void **state)
{
        (void)state;
        struct event *a = started("one", T0);
        struct event *b = started("two", T0 + SEC);
        struct event *c = event__new(&pod_web, "n1", EVENT_NORMAL, "Killing", "one", T0);
        char *ka = event__key(a), *kb = event__key(b);
        char *aa = event__aggregate_key(a), *ab = event__aggregate_key(b);
        char *ac = event__aggregate_key(c);
        char *sa = event__spam_key(a), *sc = event__spam_key(c);
        assert_string_not_equal(ka, kb); /* the message counts */
        assert_string_equal(aa, ab);     /* not for aggregation */
        assert_string_not_equal(aa, ac); /* the reason does */
        assert_string_equal(sa, sc);     /* not for the spam filter */
        assert_string_equal(ka, "kubeletn1Poddefaultwebspec.containers{app}u-1v1NormalStartedone");
        free(ka), free(kb), free(aa), free(ab), free(ac), free(sa), free(sc);
        event__free(a), event__free(b), event__free(c);
}

/* ---- the correlator ---- */

static void test_bucket_burst_and_refill(void **state)
{
        (void)state;
        struct event_bucket b = {0};
        for (int i = 0; i < 25; i++)
                assert_true(event__bucket_take(&b, T0, 25, 1.0 / 300));
        assert_false(event__bucket_take(&b, T0 + 299 * SEC, 25, 1.0 / 300));
        assert_true(event__bucket_take(&b, T0 + 300 * SEC, 25, 1.0 / 300));
        assert_false(event__bucket_take(&b, T0 + 301 * SEC, 25, 1.0 / 300));
        /* a long quiet time refills up to the burst only */
        int n = 0;
        while (event__bucket_take(&b, T0 + 100000 * SEC, 25, 1.0 / 300))
                n++;
        assert_int_equal(n, 25);
}

static void test_repeat_is_patched(void **state)
{
        (void)state;
        struct event_correlator *c = event__correlator_new();
        struct event *e1 = started("Container started", T0);
        assert_int_equal(event__correlate(c, &e1, T0), EVENT_ACTION_CREATE);
        assert_int_equal(e1->count, 1);
        e1->resource_version = xstrdup("100");
        event__correlator_update(c, e1);

        struct event *e2 = started("Container started", T0 + 30 * SEC);
        assert_int_equal(event__correlate(c, &e2, T0 + 30 * SEC), EVENT_ACTION_PATCH);
        assert_string_equal(e2->name, e1->name);
        assert_int_equal(e2->count, 2);
        assert_true(e2->first_ns == T0);
        assert_true(e2->last_ns == T0 + 30 * SEC);
        assert_string_equal(e2->resource_version, "100");

        struct event *e3 = started("Container started", T0 + 60 * SEC);
        assert_int_equal(event__correlate(c, &e3, T0 + 60 * SEC), EVENT_ACTION_PATCH);
        assert_int_equal(e3->count, 3);

        /* another message is another Event */
        struct event *e4 = started("Container started again", T0 + 61 * SEC);
        assert_int_equal(event__correlate(c, &e4, T0 + 61 * SEC), EVENT_ACTION_CREATE);
        assert_string_not_equal(e4->name, e1->name);
        event__free(e1), event__free(e2), event__free(e3), event__free(e4);
        event__correlator_free(c);
}

/* The correlator remembers EVENT_CACHE_ENTRIES events (upstream's
 * maxLruCacheEntries), its store grown as they come: a repeat within them
 * is patched; the least recently seen goes first. */
static void test_cache_holds_its_entries_then_forgets_the_oldest(void **state)
{
        (void)state;
        struct event_correlator *c = event__correlator_new();
        struct event *web = started("Container started", T0);
        assert_int_equal(event__correlate(c, &web, T0), EVENT_ACTION_CREATE);
        event__free(web);
        for (int i = 1; i <= EVENT_CACHE_ENTRIES; i++) {
                char name[32];
                snprintf(name, sizeof(name), "p-%d", i);
                struct event_object o = pod_web;
                o.name = name;
                int64_t now = T0 + i * 1000000LL;
                struct event *e =
                    event__new(&o, "n1", EVENT_NORMAL, "Started", "Container started", now);
                assert_int_equal(event__correlate(c, &e, now), EVENT_ACTION_CREATE);
                event__free(e);
                if (i == EVENT_CACHE_ENTRIES - 1) {
                        /* full now: web is still known */
                        struct event *again = started("Container started", now);
                        assert_int_equal(event__correlate(c, &again, now), EVENT_ACTION_PATCH);
                        assert_int_equal(again->count, 2);
                        event__free(again);
                }
        }
        /* the last one pushed out p-1, the least recently seen, not web */
        int64_t now = T0 + 10 * SEC;
        struct event *again = started("Container started", now);
        assert_int_equal(event__correlate(c, &again, now), EVENT_ACTION_PATCH);
        assert_int_equal(again->count, 3);
        event__free(again);
        struct event_object o = pod_web;
        o.name = "p-1";
        struct event *p1 = event__new(&o, "n1", EVENT_NORMAL, "Started", "Container started", now);
        assert_int_equal(event__correlate(c, &p1, now), EVENT_ACTION_CREATE);
        event__free(p1);
        event__correlator_free(c);
}

static void test_ten_messages_are_combined(void **state)
{
        (void)state;
        struct event_correlator *c = event__correlator_new();
        char msg[32];
        for (int i = 0; i < 9; i++) {
                snprintf(msg, sizeof(msg), "probe failed: %d", i);
                struct event *e =
                    event__new(&pod_web, "n1", EVENT_WARNING, "Unhealthy", msg, T0 + i * SEC);
                assert_int_equal(event__correlate(c, &e, T0 + i * SEC), EVENT_ACTION_CREATE);
                assert_string_equal(e->message, msg);
                event__free(e);
        }
        struct event *e =
            event__new(&pod_web, "n1", EVENT_WARNING, "Unhealthy", "probe failed: 9", T0 + 9 * SEC);
        assert_int_equal(event__correlate(c, &e, T0 + 9 * SEC), EVENT_ACTION_CREATE);
        assert_string_equal(e->message, "(combined from similar events): probe failed: 9");
        assert_int_equal(e->count, 1);
        event__correlator_update(c, e);
        event__free(e);
        /* the next distinct one updates the combined Event */
        e = event__new(&pod_web, "n1", EVENT_WARNING, "Unhealthy", "probe failed: 10",
                       T0 + 10 * SEC);
        assert_int_equal(event__correlate(c, &e, T0 + 10 * SEC), EVENT_ACTION_PATCH);
        assert_string_equal(e->message, "(combined from similar events): probe failed: 10");
        assert_int_equal(e->count, 2);
        event__free(e);
        event__correlator_free(c);
}

static void test_aggregation_window_is_ten_minutes(void **state)
{
        (void)state;
        struct event_correlator *c = event__correlator_new();
        char msg[32];
        for (int i = 0; i < 9; i++) {
                snprintf(msg, sizeof(msg), "m%d", i);
                struct event *e = event__new(&pod_web, "n1", EVENT_WARNING, "Failed", msg, T0);
                event__correlate(c, &e, T0);
                event__free(e);
        }
        int64_t later = T0 + 601 * SEC;
        struct event *e = event__new(&pod_web, "n1", EVENT_WARNING, "Failed", "m9", later);
        assert_int_equal(event__correlate(c, &e, later), EVENT_ACTION_CREATE);
        assert_string_equal(e->message, "m9");
        event__free(e);
        event__correlator_free(c);
}

static void test_spam_filter_per_object(void **state)
{
        (void)state;
        struct event_correlator *c = event__correlator_new();
        char reason[32];
        for (int i = 0; i < 25; i++) {
                snprintf(reason, sizeof(reason), "R%d", i);
                struct event *e = event__new(&pod_web, "n1", EVENT_NORMAL, reason, "m", T0);
                assert_int_not_equal(event__correlate(c, &e, T0), EVENT_ACTION_SKIP);
                event__free(e);
        }
        struct event *e = event__new(&pod_web, "n1", EVENT_NORMAL, "R25", "m", T0 + SEC);
        assert_int_equal(event__correlate(c, &e, T0 + SEC), EVENT_ACTION_SKIP);
        event__free(e);
        /* another object, or another type, has its own bucket */
        e = event__new(&node_n1, "n1", EVENT_NORMAL, "R25", "m", T0 + SEC);
        assert_int_equal(event__correlate(c, &e, T0 + SEC), EVENT_ACTION_CREATE);
        event__free(e);
        e = event__new(&pod_web, "n1", EVENT_WARNING, "R25", "m", T0 + SEC);
        assert_int_equal(event__correlate(c, &e, T0 + SEC), EVENT_ACTION_CREATE);
        event__free(e);
        /* five minutes later, one more */
        e = event__new(&pod_web, "n1", EVENT_NORMAL, "R26", "m", T0 + 301 * SEC);
        assert_int_not_equal(event__correlate(c, &e, T0 + 301 * SEC), EVENT_ACTION_SKIP);
        event__free(e);
        e = event__new(&pod_web, "n1", EVENT_NORMAL, "R27", "m", T0 + 302 * SEC);
        assert_int_equal(event__correlate(c, &e, T0 + 302 * SEC), EVENT_ACTION_SKIP);
        event__free(e);
        event__correlator_free(c);
}

/* ---- the recorder against a fake apiserver ---- */

/* What the apiserver answers to a POST or PATCH of an Event. */
#define EVENT_BODY "{\"kind\":\"Event\",\"metadata\":{\"resourceVersion\":\"7\"}}"

static struct event_recorder *recorder_for(int port)
{
        char server[64];
        snprintf(server, sizeof(server), "http://127.0.0.1:%d", port);
        struct rest_config cfg = {.server = server};
        struct event_recorder *r = NULL;
        ck_error_t err = NULL;
        assert_int_equal(event_recorder_new(&cfg, NULL, "n1", &r, &err), 0);
        assert_non_null(r);
        return r;
}

static struct pod *test_pod(void)
{
        static struct container containers[1] = {{.name = "app"}};
        static struct container init[1] = {{.name = "setup"}};
        struct pod *p = xcalloc(1, sizeof(*p));
        p->name = "web";
        p->namespace = "team";
        p->uid = "u-1";
        p->resource_version = "42";
        p->containers = containers;
        p->n_containers = 1;
        p->init_containers = init;
        p->n_init_containers = 1;
        return p;
}

static void test_recorder_posts_then_patches(void **state)
{
        (void)state;
        static const struct answer script[] = {{.status = 201, .body = EVENT_BODY},
                                               {.status = 201, .body = EVENT_BODY},
                                               {.status = 201, .body = EVENT_BODY},
                                               {.status = 201, .body = EVENT_BODY}};
        struct fake *f = fake_start(script, 4);
        struct event_recorder *r = recorder_for(f->port);
        struct pod *pod = test_pod();
        event_emit_pod(r, pod, "app", EVENT_NORMAL, "Started", "Container started");
        assert_int_equal(fake_wait_requests(f, 1), 1);
        event_emit_pod(r, pod, "app", EVENT_NORMAL, "Started", "Container started");
        assert_int_equal(fake_wait_requests(f, 2), 2);
        event_emit_pod(r, pod, "setup", EVENT_WARNING, "Failed", "Error: %s", "ErrImagePull");
        event_emit_pod(r, pod, NULL, EVENT_NORMAL, "Scheduled", "x");
        event_emit_pod(r, pod, "nosuch", EVENT_NORMAL, "Started", "dropped: no such container");
        event_emit(r, &node_n1, "Bogus", "Starting", "dropped: no such type");
        event_recorder_free(r);

        assert_int_equal(f->n_req, 4);
        assert_string_equal(f->req[0], "POST /api/v1/namespaces/team/events");
        json_t *ev = json_loads(f->body[0], 0, NULL);
        assert_non_null(ev);
        const char *name =
            json_string_value(json_object_get(json_object_get(ev, "metadata"), "name"));
        assert_non_null(name);
        assert_true(strncmp(name, "web.", 4) == 0);
        json_t *ref = json_object_get(ev, "involvedObject");
        assert_string_equal(json_string_value(json_object_get(ref, "fieldPath")),
                            "spec.containers{app}");
        assert_string_equal(json_string_value(json_object_get(ev, "message")), "Container started");

        char want[256];
        snprintf(want, sizeof(want), "PATCH /api/v1/namespaces/team/events/%s", name);
        assert_string_equal(f->req[1], want);
        json_t *patch = json_loads(f->body[1], 0, NULL);
        assert_int_equal(json_integer_value(json_object_get(patch, "count")), 2);

        json_t *init = json_loads(f->body[2], 0, NULL);
        assert_string_equal(json_string_value(json_object_get(
                                json_object_get(init, "involvedObject"), "fieldPath")),
                            "spec.initContainers{setup}");
        assert_string_equal(json_string_value(json_object_get(init, "message")),
                            "Error: ErrImagePull");
        json_t *podev = json_loads(f->body[3], 0, NULL);
        assert_null(json_object_get(json_object_get(podev, "involvedObject"), "fieldPath"));
        json_decref(ev), json_decref(patch), json_decref(init), json_decref(podev);
        free(pod);
        fake_stop(f);
}

static void test_expired_event_is_created_again(void **state)
{
        (void)state;
        /* the PATCH finds the Event gone */
        static const struct answer script[] = {{.status = 201, .body = EVENT_BODY},
                                               {.status = 404, .body = EVENT_BODY},
                                               {.status = 201, .body = EVENT_BODY}};
        struct fake *f = fake_start(script, 3);
        struct event_recorder *r = recorder_for(f->port);
        event_emit(r, &node_n1, EVENT_NORMAL, "NodeReady", "Node n1 status is now: NodeReady");
        assert_int_equal(fake_wait_requests(f, 1), 1);
        event_emit(r, &node_n1, EVENT_NORMAL, "NodeReady", "Node n1 status is now: NodeReady");
        assert_int_equal(fake_wait_requests(f, 3), 3);
        event_recorder_free(r);
        assert_true(strncmp(f->req[0], "POST ", 5) == 0);
        assert_true(strncmp(f->req[1], "PATCH /api/v1/namespaces/default/events/n1.", 43) == 0);
        assert_string_equal(f->req[2], "POST /api/v1/namespaces/default/events");
        json_t *ev = json_loads(f->body[2], 0, NULL);
        assert_int_equal(json_integer_value(json_object_get(ev, "count")), 2);
        json_decref(ev);
        fake_stop(f);
}

static void test_rejected_event_is_not_retried(void **state)
{
        (void)state;
        static const struct answer script[] = {{.status = 403, .body = EVENT_BODY}};
        struct fake *f = fake_start(script, 1);
        struct event_recorder *r = recorder_for(f->port);
        event_emit(r, &node_n1, EVENT_NORMAL, "Starting", "Starting kubelet.");
        assert_int_equal(fake_wait_requests(f, 1), 1);
        usleep(300000);
        event_recorder_free(r);
        assert_int_equal(f->n_req, 1);
        fake_stop(f);
}

static void test_no_apiserver_never_blocks(void **state)
{
        (void)state;
        /* a port that takes connections and never answers: a request waits
         * for its 10 s timeout (EVENT_REQUEST_TIMEOUT_MS) */
        int port;
        int fd = listen_loopback(&port);
        assert_int_equal(listen(fd, 8), 0);
        struct event_recorder *r = recorder_for(port);
        /* a thousand and fifty lines about dropped events: not here */
        int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
        log_set_fd(devnull);
        int64_t t0 = fs_now_mono_ms();
        for (int i = 0; i < EVENT_QUEUE_MAX + 50; i++)
                event_emit(r, &node_n1, EVENT_NORMAL, "Starting", "attempt %d", i);
        int64_t emitted = fs_now_mono_ms();
        event_recorder_free(r);
        int64_t freed = fs_now_mono_ms();
        log_set_fd(2);
        close(devnull);
        close(fd);
        /* no emit waited for a request (each would take 10 s); the free
         * drained for a second (EVENT_DRAIN_MS), then cut the request short */
        assert_true(emitted - t0 < 5000);
        assert_true(freed - emitted < 8000);
}

static void test_null_recorder_is_fine(void **state)
{
        (void)state;
        struct pod *pod = test_pod();
        event_emit_pod(NULL, pod, "app", EVENT_NORMAL, "Killing", "Stopping container app");
        event_emit(NULL, &node_n1, EVENT_NORMAL, "Starting", "Starting kubelet.");
        event_recorder_free(NULL);
        free(pod);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_name_is_object_dot_hex_nanos),
            cmocka_unit_test(test_name_falls_back_to_uuid),
            cmocka_unit_test(test_pod_event_json),
            cmocka_unit_test(test_node_event_goes_to_default),
            cmocka_unit_test(test_patch_carries_count_time_message),
            cmocka_unit_test(test_keys),
            cmocka_unit_test(test_bucket_burst_and_refill),
            cmocka_unit_test(test_repeat_is_patched),
            cmocka_unit_test(test_cache_holds_its_entries_then_forgets_the_oldest),
            cmocka_unit_test(test_ten_messages_are_combined),
            cmocka_unit_test(test_aggregation_window_is_ten_minutes),
            cmocka_unit_test(test_spam_filter_per_object),
            cmocka_unit_test(test_recorder_posts_then_patches),
            cmocka_unit_test(test_expired_event_is_created_again),
            cmocka_unit_test(test_rejected_event_is_not_retried),
            cmocka_unit_test(test_no_apiserver_never_blocks),
            cmocka_unit_test(test_null_recorder_is_fine),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
