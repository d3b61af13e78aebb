/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A test-only driver of src/client for test/e2e/06-client.bats (not part of
 * the product): it reads a kubeconfig, talks to the real apiserver, and
 * prints what it got as lines the suite checks.
 *
 *   client_smoke get KUBECONFIG PATH [FIELD_SELECTOR]
 *       "status=200 kind=PodList items=0"; on error "error code=<c>: <msg>", exit 1
 *   client_smoke watch KUBECONFIG PATH RESOURCE_VERSION
 *       one watch from RESOURCE_VERSION (timeoutSeconds 5): "EVENT <TYPE> <ns>/<name>"
 *       per event, then "end" or "error code=<c>: <msg>" (exit 1)
 *   client_smoke reflect KUBECONFIG PATH FIELD_SELECTOR SECONDS [MIN_WATCH_TIMEOUT]
 *       a reflector until SECONDS pass or SIGTERM/SIGINT: "REPLACE n=<n> rv=<rv>"
 *       (then "ITEM <ns>/<name>" per item) after each list, "EVENT <TYPE> <ns>/<name>
 *       deleting=<true|false>" per event; "stopped" at the end
 */
#include "client/kubeconfig.h"
#include "client/reflector.h"
#include "client/rest.h"
#include "client/watch.h"
#include "util/log.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int fail(ck_error_t err)
{
        printf("error code=%d: %s\n", err ? err->code : 0, ck_error_msg(err));
        ck_error_release(&err);
        return 1;
}

static const char *field(const json_t *obj, const char *key)
{
        const char *v = json_string_value(json_object_get(json_object_get(obj, "metadata"), key));
        return v ? v : "";
}

static int cmd_get(struct rest_client *c, const char *path, const char *field_selector)
{
        char *query = NULL;
        if (field_selector)
                rest_query_add(&query, "fieldSelector", field_selector);
        json_t *out = NULL;
        ck_error_t err = NULL;
        int status = rest_get(c, path, query, &out, &err);
        free(query);
        if (status < 0)
                return fail(err);
        const char *kind = json_string_value(json_object_get(out, "kind"));
        printf("status=%d kind=%s items=%zu\n", status, kind ? kind : "",
               json_array_size(json_object_get(out, "items")));
        json_decref(out);
        return 0;
}

static int print_event(void *opaque, enum watch_event_type type, json_t *obj, ck_error_t *err)
{
        (void)opaque, (void)err;
        printf("EVENT %s %s/%s\n", watch_event_type_name(type), field(obj, "namespace"),
               field(obj, "name"));
        return 0;
}

static int cmd_watch(struct rest_client *c, const char *path, const char *rv)
{
        struct watch_options opts = {.resource_version = rv, .timeout_seconds = 5};
        ck_error_t err = NULL;
        if (watch_stream(c, path, &opts, print_event, NULL, &err) < 0)
                return fail(err);
        printf("end\n");
        return 0;
}

static void on_replace(void *opaque, json_t *items, const char *rv)
{
        (void)opaque;
        printf("REPLACE n=%zu rv=%s\n", json_array_size(items), rv);
        size_t i;
        json_t *item;
        json_array_foreach(items, i, item)
            printf("ITEM %s/%s\n", field(item, "namespace"), field(item, "name"));
}

static void on_event(void *opaque, enum watch_event_type type, json_t *obj)
{
        (void)opaque;
        printf("EVENT %s %s/%s deleting=%s\n", watch_event_type_name(type), field(obj, "namespace"),
               field(obj, "name"), field(obj, "deletionTimestamp")[0] ? "true" : "false");
}

static int cmd_reflect(const struct rest_config *cfg, const char *path, const char *selector,
                       long seconds, long min_watch_timeout)
{
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGINT);
        pthread_sigmask(SIG_BLOCK, &set, NULL); /* the reflector's thread inherits it */
        struct rest_ratelimiter *rl = rest_ratelimiter_new(50, 100);
        struct reflector_options opts = {.name = "smoke",
                                         .path = path,
                                         .field_selector = selector,
                                         .min_watch_timeout_s = min_watch_timeout};
        struct reflector_callbacks cb = {.on_replace = on_replace, .on_event = on_event};
        struct reflector *r = NULL;
        ck_error_t err = NULL;
        if (reflector_start(cfg, rl, &opts, &cb, &r, &err) < 0) {
                rest_ratelimiter_free(rl);
                return fail(err);
        }
        struct timespec t = {.tv_sec = seconds};
        sigtimedwait(&set, NULL, &t);
        reflector_stop(r);
        rest_ratelimiter_free(rl);
        printf("stopped\n");
        return 0;
}

int main(int argc, char **argv)
{
        setvbuf(stdout, NULL, _IOLBF, 0);
        signal(SIGPIPE, SIG_IGN);
        log_set_verbosity(getenv("CK_SMOKE_V") ? atoi(getenv("CK_SMOKE_V")) : 0);
        if (argc < 4 || (strcmp(argv[1], "watch") == 0 && argc < 5) ||
            (strcmp(argv[1], "reflect") == 0 && argc < 6)) {
                fprintf(stderr, "usage: see the comment at the top of client_smoke.c\n");
                return 2;
        }
        struct rest_config cfg;
        ck_error_t err = NULL;
        if (kubeconfig_load(argv[2], NULL, &cfg, &err) < 0)
                return fail(err);
        int rc = 2;
        if (strcmp(argv[1], "reflect") == 0) {
                rc = cmd_reflect(&cfg, argv[3], argv[4], atol(argv[5]),
                                 argc > 6 ? atol(argv[6]) : 0);
        } else {
                struct rest_client *c = NULL;
                if (rest_client_new(&cfg, NULL, &c, &err) < 0) {
                        rest_config_clear(&cfg);
                        return fail(err);
                }
                if (strcmp(argv[1], "get") == 0)
                        rc = cmd_get(c, argv[3], argc > 4 ? argv[4] : NULL);
                else if (strcmp(argv[1], "watch") == 0)
                        rc = cmd_watch(c, argv[3], argv[4]);
                rest_client_free(c);
        }
        rest_config_clear(&cfg);
        return rc;
}
