/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The REST client, watch streams and the reflector against a scripted fake
 * apiserver (plain HTTP/1.1 on 127.0.0.1; the real one is in
 * test/e2e/06-client.bats): what goes on the wire, how answers and streams
 * are read, and the reflector's list / watch / relist sequence.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "client/reflector.h"
#include "client/rest.h"
#include "client/watch.h"
#include "server/selfsigned.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fake_apiserver.h"

static struct rest_client *client_for(struct fake *f, const char *token)
{
        cleanup_free char *server = xasprintf("http://127.0.0.1:%d", f->port);
        struct rest_config cfg = {.server = server, .token = (char *)token};
        struct rest_client *c = NULL;
        ck_error_t err = NULL;
        if (rest_client_new(&cfg, NULL, &c, &err) < 0)
                fail_msg("%s", ck_error_msg(err));
        return c;
}

static void test_requests_on_the_wire(void **state)
{
        (void)state;
        static const struct answer script[] = {
            {200, "{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"}}"},
            {200, "{}"},
            {201, ""},
            {200, "{\"kind\":\"Status\",\"status\":\"Success\"}"},
        };
        struct fake *f = fake_start(script, ARRAY_SIZE(script));
        struct rest_client *c = client_for(f, "s3cret-token");
        ck_error_t err = NULL;
        cleanup_json json_t *node = NULL;
        assert_int_equal(rest_get(c, "/api/v1/nodes/n1", "resourceVersion=0", &node, &err), 200);
        assert_string_equal(json_string_value(json_object_get(node, "kind")), "Node");

        cleanup_json json_t *patch = json_pack("{s:{s:[]}}", "status", "conditions");
        assert_int_equal(
            rest_patch(c, "/api/v1/nodes/n1/status", NULL, REST_PATCH_STRATEGIC, patch, NULL, &err),
            200);
        cleanup_json json_t *out = NULL;
        assert_int_equal(rest_post(c, "/api/v1/namespaces/d/events", patch, &out, &err), 201);
        assert_null(out); /* empty body */
        cleanup_json json_t *opts = json_pack("{s:i}", "gracePeriodSeconds", 0);
        assert_int_equal(rest_delete(c, "/api/v1/namespaces/d/pods/p", opts, NULL, &err), 200);
        rest_client_free(c);
        pthread_mutex_lock(&f->lock);
        assert_int_equal(f->n_req, 4);
        assert_int_equal(f->accepts, 1); /* one kept-alive connection */
        assert_string_equal(f->req[0], "GET /api/v1/nodes/n1?resourceVersion=0");
        assert_string_equal(f->req[1], "PATCH /api/v1/nodes/n1/status");
        assert_string_equal(f->req[2], "POST /api/v1/namespaces/d/events");
        assert_string_equal(f->req[3], "DELETE /api/v1/namespaces/d/pods/p");
        for (size_t i = 0; i < 4; i++) {
                assert_non_null(strstr(f->head[i], "\r\nAuthorization: Bearer s3cret-token\r\n"));
                assert_non_null(strstr(f->head[i], "\r\nAccept: application/json\r\n"));
                assert_non_null(strstr(f->head[i], "\r\nUser-Agent: kubelet/v1.35.0 (linux/"));
                assert_non_null(strstr(f->head[i], ") ckubelet\r\n"));
        }
        assert_null(strstr(f->head[0], "Content-Type"));
        assert_non_null(
            strstr(f->head[1], "\r\nContent-Type: application/strategic-merge-patch+json\r\n"));
        assert_string_equal(f->body[1], "{\"status\":{\"conditions\":[]}}");
        assert_non_null(strstr(f->head[2], "\r\nContent-Type: application/json\r\n"));
        assert_string_equal(f->body[3], "{\"gracePeriodSeconds\":0}");
        pthread_mutex_unlock(&f->lock);
        fake_stop(f);
}

static void test_error_answers(void **state)
{
        (void)state;
        static const struct answer script[] = {
            {403, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                  "\"message\":\"nodes \\\"n2\\\" is forbidden: User \\\"system:node:n1\\\" "
                  "cannot get resource \\\"nodes\\\"\",\"reason\":\"Forbidden\",\"code\":403}"},
            {502, "<html>\n<b>bad gateway</b></html>\n"},
            {200, "{\"kind\":"},
            {409, "{\"kind\":\"Status\",\"reason\":\"AlreadyExists\",\"message\":\"exists\","
                  "\"code\":409}"},
        };
        struct fake *f = fake_start(script, ARRAY_SIZE(script));
        struct rest_client *c = client_for(f, NULL);
        ck_error_t err = NULL;
        json_t *out = NULL;
        assert_int_equal(rest_get(c, "/api/v1/nodes/n2", NULL, &out, &err), -1);
        assert_null(out);
        assert_int_equal(err->code, 403);
        assert_string_equal(ck_error_msg(err),
                            "GET /api/v1/nodes/n2: 403 Forbidden: nodes \"n2\" is forbidden: User "
                            "\"system:node:n1\" cannot get resource \"nodes\"");
        ck_error_release(&err);
        assert_int_equal(rest_get(c, "/x", NULL, &out, &err), -1);
        assert_int_equal(err->code, 502);
        assert_string_equal(ck_error_msg(err),
                            "GET /x: 502 Bad Gateway: <html> <b>bad gateway</b></html>");
        ck_error_release(&err);
        assert_int_equal(rest_get(c, "/y", NULL, &out, &err), -1);
        assert_int_equal(err->code, REST_ERR_DECODE);
        ck_error_release(&err);
        assert_int_equal(rest_post(c, "/api/v1/nodes", NULL, &out, &err), -1);
        assert_int_equal(err->code, 409);
        assert_string_equal(ck_error_msg(err), "POST /api/v1/nodes: 409 AlreadyExists: exists");
        ck_error_release(&err);
        rest_client_free(c);
        pthread_mutex_lock(&f->lock);
        assert_null(strstr(f->head[0], "Authorization")); /* no token, no header */
        pthread_mutex_unlock(&f->lock);
        fake_stop(f);

        /* Nobody listening: a connect error, distinguishable from others. */
        int port, fd = listen_loopback(&port);
        close(fd);
        cleanup_free char *server = xasprintf("http://127.0.0.1:%d", port);
        struct rest_config cfg = {.server = server};
        assert_int_equal(rest_client_new(&cfg, NULL, &c, &err), 0);
        assert_int_equal(rest_get(c, "/api", NULL, NULL, &err), -1);
        assert_int_equal(err->code, REST_ERR_CONNECT);
        ck_error_release(&err);
        assert_int_equal(rest_get(c, "relative", NULL, NULL, &err), -1);
        ck_error_release(&err);
        rest_client_free(c);
}

static const char *const WATCH_CHUNKS[] = {
    "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"6\"}}}\n{"
    "\"ty",
    "pe\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"7\"}}}",
    "\n",
    "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"message\":\"too old resource version: "
    "5 (9)\",\"reason\":\"Expired\",\"code\":410}}\n",
    NULL,
};

struct events {
        pthread_mutex_t lock;
        char log[2048];
};

static void log_line(struct events *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void log_line(struct events *e, const char *fmt, ...)
{
        pthread_mutex_lock(&e->lock);
        size_t len = strlen(e->log);
        if (len)
                e->log[len++] = '|';
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->log + len, sizeof(e->log) - len, fmt, ap);
        va_end(ap);
        pthread_mutex_unlock(&e->lock);
}

static const char *name_of(const json_t *o)
{
        const char *n = json_string_value(json_object_get(json_object_get(o, "metadata"), "name"));
        return n ? n : "-";
}

static int on_watch(void *opaque, enum watch_event_type type, json_t *obj, ck_error_t *err)
{
        (void)err;
        log_line(opaque, "%s %s", watch_event_type_name(type), name_of(obj));
        return 0;
}

static const char *const DELETED_CHUNKS[] = {"{\"type\":\"DELETED\",\"object\":{}}\n", NULL};
static const char *const CUT_CHUNKS[] = {"{\"type\":\"ADDED\",\"object\":{}}\n{\"ty", NULL};

static void test_watch_stream(void **state)
{
        (void)state;
        static const struct answer script[] = {
            {200, NULL, WATCH_CHUNKS},
            {200, NULL, DELETED_CHUNKS},
            {410, "{\"kind\":\"Status\",\"reason\":\"Expired\",\"message\":\"too old\","
                  "\"code\":410}"},
            {200, NULL, CUT_CHUNKS},
        };
        struct fake *f = fake_start(script, ARRAY_SIZE(script));
        struct rest_client *c = client_for(f, NULL);
        struct events ev = {.lock = PTHREAD_MUTEX_INITIALIZER};
        struct watch_options opts = {.resource_version = "5",
                                     .field_selector = "spec.nodeName=n1",
                                     .timeout_seconds = 30,
                                     .allow_bookmarks = true};
        ck_error_t err = NULL;
        assert_int_equal(watch_stream(c, "/api/v1/pods", &opts, on_watch, &ev, &err), -1);
        assert_string_equal(ev.log, "ADDED a|MODIFIED a");
        assert_true(watch_is_expired(err));
        assert_string_equal(ck_error_msg(err), "GET /api/v1/pods: ERROR event: 410 Expired: too "
                                               "old resource version: 5 (9)");
        ck_error_release(&err);

        ev.log[0] = '\0';
        struct watch_options plain = {0};
        assert_int_equal(watch_stream(c, "/api/v1/pods", &plain, on_watch, &ev, &err), 0);
        assert_string_equal(ev.log, "DELETED -"); /* the server ended it: clean */

        assert_int_equal(watch_stream(c, "/api/v1/pods", &plain, on_watch, &ev, &err), -1);
        assert_true(watch_is_expired(err)); /* 410 as the answer itself */
        ck_error_release(&err);

        ev.log[0] = '\0';
        assert_int_equal(watch_stream(c, "/api/v1/pods", &plain, on_watch, &ev, &err), -1);
        assert_string_equal(ev.log, "ADDED -");
        assert_string_equal(ck_error_msg(err),
                            "GET /api/v1/pods: watch stream: ended inside an event (4 bytes)");
        ck_error_release(&err);
        rest_client_free(c);

        pthread_mutex_lock(&f->lock);
        assert_string_equal(f->req[0], "GET /api/v1/pods?watch=true&resourceVersion=5&"
                                       "allowWatchBookmarks=true&fieldSelector=spec.nodeName%3Dn1&"
                                       "timeoutSeconds=30");
        assert_string_equal(f->req[1], "GET /api/v1/pods?watch=true");
        pthread_mutex_unlock(&f->lock);
        fake_stop(f);
}

static void on_replace(void *opaque, json_t *items, const char *rv)
{
        char names[256] = "";
        size_t i;
        json_t *it;
        json_array_foreach(items, i, it)
        {
                size_t len = strlen(names);
                snprintf(names + len, sizeof(names) - len, "%s%s %s/%s", i ? "," : "", name_of(it),
                         json_string_value(json_object_get(it, "apiVersion")),
                         json_string_value(json_object_get(it, "kind")));
        }
        log_line(opaque, "REPLACE %s [%s]", rv, names);
}

static void on_event(void *opaque, enum watch_event_type type, json_t *obj)
{
        log_line(opaque, "%s %s", watch_event_type_name(type), name_of(obj));
}

#define POD(name, rv) "{\"metadata\":{\"name\":\"" name "\",\"resourceVersion\":\"" rv "\"}}"
#define LIST(rv, items)                                                                            \
        "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"" rv      \
        "\"},\"items\":[" items "]}"
#define EVENT(type, obj) "{\"type\":\"" type "\",\"object\":" obj "}\n"

static const char *const RELIST_W1[] = {
    EVENT("ADDED", POD("p2", "11")),
    EVENT("BOOKMARK", "{\"metadata\":{\"resourceVersion\":\"12\"}}"),
    NULL,
};
static const char *const RELIST_W2[] = {
    EVENT("ERROR", "{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\","
                   "\"message\":\"too old\"}"),
    NULL,
};
static const char *const RELIST_W3[] = {EVENT("DELETED", POD("p2", "21")), NULL};
static const char *const NO_CHUNKS[] = {NULL};

static void test_reflector_list_watch_relist(void **state)
{
        (void)state;
        static const struct answer script[] = {
            /* 0: first list, from the watch cache */
            {200, LIST("10", POD("p1", "8"))},
            /* 1: watch from 10: an event, a bookmark, then the server ends it */
            {200, NULL, RELIST_W1},
            /* 2: resumed from the bookmark: too old */
            {200, NULL, RELIST_W2},
            /* 3: relist at 12: also too old */
            {410, "{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\",\"message\":\"x\"}"},
            /* 4: consistent list */
            {200, LIST("20", POD("p2", "11"))},
            /* 5: watch from 20, kept open */
            {200, NULL, RELIST_W3, 60000},
        };
        struct fake *f = fake_start(script, ARRAY_SIZE(script));
        cleanup_free char *server = xasprintf("http://127.0.0.1:%d", f->port);
        struct rest_config cfg = {.server = server};
        struct events ev = {.lock = PTHREAD_MUTEX_INITIALIZER};
        struct reflector_options opts = {
            .path = "/api/v1/pods", .field_selector = "spec.nodeName=n1", .name = "test"};
        struct reflector_callbacks cb = {on_replace, on_event, &ev};
        struct reflector *r = NULL;
        ck_error_t err = NULL;
        assert_int_equal(reflector_start(&cfg, NULL, &opts, &cb, &r, &err), 0);

        const char *want = "REPLACE 10 [p1 v1/Pod]|ADDED p2|REPLACE 20 [p2 v1/Pod]|DELETED p2";
        bool done = false;
        for (int i = 0; i < 200 && !done; i++) { /* the two backoffs take 2.4 s at most */
                usleep(50000);
                pthread_mutex_lock(&ev.lock);
                done = strcmp(ev.log, want) == 0;
                pthread_mutex_unlock(&ev.lock);
        }
        assert_true(reflector_has_synced(r));
        int64_t t0 = fs_now_mono_ms();
        reflector_stop(r); /* in the middle of the open watch */
        /* at once, not when the fake ends the watch, 60 s on */
        assert_true(fs_now_mono_ms() - t0 < 15000);
        assert_string_equal(ev.log, want);

        pthread_mutex_lock(&f->lock);
        static const char *const reqs[] = {
            "GET /api/v1/pods?resourceVersion=0&fieldSelector=spec.nodeName%3Dn1",
            "GET /api/v1/pods?watch=true&resourceVersion=10&allowWatchBookmarks=true&"
            "fieldSelector=spec.nodeName%3Dn1&timeoutSeconds=",
            "GET /api/v1/pods?watch=true&resourceVersion=12&allowWatchBookmarks=true&"
            "fieldSelector=spec.nodeName%3Dn1&timeoutSeconds=",
            "GET /api/v1/pods?resourceVersion=12&fieldSelector=spec.nodeName%3Dn1",
            "GET /api/v1/pods?fieldSelector=spec.nodeName%3Dn1",
            "GET /api/v1/pods?watch=true&resourceVersion=20&allowWatchBookmarks=true&"
            "fieldSelector=spec.nodeName%3Dn1&timeoutSeconds=",
        };
        assert_int_equal(f->n_req, ARRAY_SIZE(reqs));
        for (size_t i = 0; i < ARRAY_SIZE(reqs); i++) {
                size_t n = strlen(reqs[i]);
                if (strncmp(f->req[i], reqs[i], n) != 0 ||
                    (reqs[i][n - 1] != '=' && f->req[i][n] != '\0'))
                        fail_msg("request %zu: got %s\nwant %s", i, f->req[i], reqs[i]);
                if (reqs[i][n - 1] == '=') { /* client-go: [min, 2*min) of 5 min */
                        long t = atol(f->req[i] + n);
                        assert_true(t >= 300 && t < 600);
                }
        }
        pthread_mutex_unlock(&f->lock);
        fake_stop(f);
}

static void test_reflector_short_watches_back_off(void **state)
{
        (void)state;
        /* Lists succeed, watches end at once without events: each counts
         * as an error (relist after a backoff), not a busy loop. */
        static const struct answer script[] = {
            {200, LIST("1", "")},   {200, NULL, NO_CHUNKS}, {200, LIST("1", "")},
            {200, NULL, NO_CHUNKS}, {200, LIST("1", "")},   {200, NULL, NO_CHUNKS},
        };
        struct fake *f = fake_start(script, ARRAY_SIZE(script));
        cleanup_free char *server = xasprintf("http://127.0.0.1:%d", f->port);
        struct rest_config cfg = {.server = server};
        struct events ev = {.lock = PTHREAD_MUTEX_INITIALIZER};
        struct reflector_options opts = {.path = "/api/v1/nodes"};
        struct reflector_callbacks cb = {on_replace, on_event, &ev};
        struct reflector *r = NULL;
        ck_error_t err = NULL;
        assert_int_equal(reflector_start(&cfg, NULL, &opts, &cb, &r, &err), 0);
        /* the list and the watch that ends at once ... */
        fake_wait_requests(f, 2);
        usleep(1500000);
        reflector_stop(r);
        /* ... then within 1.5 s at most one more list and watch: 0.8-1.6 s
         * of backoff before each (a busy loop would make hundreds) */
        pthread_mutex_lock(&f->lock);
        assert_true(f->n_req >= 2 && f->n_req <= 4);
        pthread_mutex_unlock(&f->lock);
        fake_stop(f);
}

/* One TLS context for an https config and every copy of it; each client
 * holds its own reference, so the configs may go first (ASan: no leak, no
 * use after free).  Bad material fails once, at the config, naming it. */
static void test_shared_tls_context(void **state)
{
        (void)state;
        ck_error_t err = NULL;
        char *cert = NULL, *key = NULL;
        if (secure_selfsigned_generate("127.0.0.1", &cert, &key, &err) < 0)
                fail_msg("%s", ck_error_msg(err));
        struct rest_config src = {.server = "https://127.0.0.1:6443",
                                  .ca_pem = cert,
                                  .ca_len = strlen(cert),
                                  .cert_pem = cert,
                                  .cert_len = strlen(cert),
                                  .key_pem = key,
                                  .key_len = strlen(key)};
        struct rest_config cfg;
        rest_config_copy(&cfg, &src);
        assert_null(cfg.tls);
        assert_int_equal(rest_config_share_tls(&cfg, &err), 0);
        assert_non_null(cfg.tls);
        struct ssl_ctx_st *made = cfg.tls;
        assert_int_equal(rest_config_share_tls(&cfg, &err), 0); /* once */
        assert_ptr_equal(cfg.tls, made);
        struct rest_config copy;
        rest_config_copy(&copy, &cfg);
        assert_ptr_equal(copy.tls, made);
        struct rest_client *a = NULL, *b = NULL;
        assert_int_equal(rest_client_new(&cfg, NULL, &a, &err), 0);
        rest_config_clear(&cfg);
        assert_int_equal(rest_client_new(&copy, NULL, &b, &err), 0);
        rest_config_clear(&copy);
        rest_client_free(a);
        rest_client_free(b);

        /* plain HTTP: no context */
        struct rest_config plain = {.server = "http://127.0.0.1:8080"};
        assert_int_equal(rest_config_share_tls(&plain, &err), 0);
        assert_null(plain.tls);

        struct rest_config bad = {
            .server = "https://127.0.0.1:6443", .ca_pem = "junk", .ca_len = 4};
        assert_int_equal(rest_config_share_tls(&bad, &err), -1);
        assert_null(bad.tls);
        assert_non_null(strstr(ck_error_msg(err), "REST client for https://127.0.0.1:6443: "));
        ck_error_release(&err);
        free(cert);
        free(key);
}

int main(void)
{
        log_set_fd(-1); /* the reflector's warnings are expected here */
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_requests_on_the_wire),
            cmocka_unit_test(test_error_answers),
            cmocka_unit_test(test_watch_stream),
            cmocka_unit_test(test_reflector_list_watch_relist),
            cmocka_unit_test(test_reflector_short_watches_back_off),
            cmocka_unit_test(test_shared_tls_context),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
