/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Service environment variables (src/envvars, upstream envvars_test.go and
 * TestMakeEnvironmentVariables' service cases) and the informer store that
 * holds the Services (src/client/informer).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "client/informer.h"
#include "envvars/envvars.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A Service; ports_json is the JSON array of spec.ports. */
static json_t *service(const char *ns, const char *name, const char *ip, const char *ports_json)
{
        cleanup_free char *text =
            xasprintf("{\"metadata\": {\"namespace\": \"%s\", \"name\": \"%s\","
                      " \"uid\": \"u-%s\", \"labels\": {\"a\": \"b\"}},"
                      " \"spec\": {\"clusterIP\": \"%s\", \"ports\": %s,"
                      " \"selector\": {\"app\": \"x\"}},"
                      " \"status\": {}}",
                      ns, name, name, ip, ports_json);
        json_error_t jerr;
        json_t *o = json_loads(text, 0, &jerr);
        if (o == NULL)
                fail_msg("bad JSON %s: %s", text, jerr.text);
        return o;
}

/* "K=V\n" lines of l, in order.  New string. */
static char *render(const struct kv_list *l)
{
        char *out = xstrdup("");
        for (size_t i = 0; i < l->n; i++) {
                char *next = xasprintf("%s%s=%s\n", out, l->items[i].key, l->items[i].value);
                free(out);
                out = next;
        }
        return out;
}

static char *vars_for(json_t *services, const char *ns, bool links)
{
        struct kv_list l = {0};
        envvars_for_pod(services, ns, links, &l);
        char *s = render(&l);
        kv_list_release(&l);
        return s;
}

static json_t *cluster(void)
{
        json_t *a = json_array();
        json_array_append_new(a, service("default", "kubernetes", "10.96.0.1",
                                         "[{\"name\": \"https\", \"port\": 443, "
                                         "\"protocol\": \"TCP\", \"targetPort\": 6443}]"));
        json_array_append_new(a, service("shop", "web-front", "10.96.0.20",
                                         "[{\"port\": 80}, {\"name\": \"metrics\", "
                                         "\"port\": 9090, \"protocol\": \"TCP\"}]"));
        json_array_append_new(a, service("shop", "dns", "10.96.0.10",
                                         "[{\"name\": \"dns\", \"port\": 53, \"protocol\": "
                                         "\"UDP\"}]"));
        /* headless and clusterIP-less Services give nothing */
        json_array_append_new(a, service("shop", "headless", "None", "[{\"port\": 80}]"));
        json_array_append_new(a, service("shop", "external", "", "[]"));
        /* another namespace's Services are not visible */
        json_array_append_new(a, service("other", "db", "10.96.0.30", "[{\"port\": 5432}]"));
        return a;
}

static void test_links(void **state)
{
        (void)state;
        cleanup_json json_t *svcs = cluster();
        cleanup_free char *got = vars_for(svcs, "shop", true);
        /* by Service name; upstream FromServices' order within each */
        assert_string_equal(got, "DNS_SERVICE_HOST=10.96.0.10\n"
                                 "DNS_SERVICE_PORT=53\n"
                                 "DNS_SERVICE_PORT_DNS=53\n"
                                 "DNS_PORT=udp://10.96.0.10:53\n"
                                 "DNS_PORT_53_UDP=udp://10.96.0.10:53\n"
                                 "DNS_PORT_53_UDP_PROTO=udp\n"
                                 "DNS_PORT_53_UDP_PORT=53\n"
                                 "DNS_PORT_53_UDP_ADDR=10.96.0.10\n"
                                 "KUBERNETES_SERVICE_HOST=10.96.0.1\n"
                                 "KUBERNETES_SERVICE_PORT=443\n"
                                 "KUBERNETES_SERVICE_PORT_HTTPS=443\n"
                                 "KUBERNETES_PORT=tcp://10.96.0.1:443\n"
                                 "KUBERNETES_PORT_443_TCP=tcp://10.96.0.1:443\n"
                                 "KUBERNETES_PORT_443_TCP_PROTO=tcp\n"
                                 "KUBERNETES_PORT_443_TCP_PORT=443\n"
                                 "KUBERNETES_PORT_443_TCP_ADDR=10.96.0.1\n"
                                 "WEB_FRONT_SERVICE_HOST=10.96.0.20\n"
                                 "WEB_FRONT_SERVICE_PORT=80\n"
                                 "WEB_FRONT_SERVICE_PORT_METRICS=9090\n"
                                 "WEB_FRONT_PORT=tcp://10.96.0.20:80\n"
                                 "WEB_FRONT_PORT_80_TCP=tcp://10.96.0.20:80\n"
                                 "WEB_FRONT_PORT_80_TCP_PROTO=tcp\n"
                                 "WEB_FRONT_PORT_80_TCP_PORT=80\n"
                                 "WEB_FRONT_PORT_80_TCP_ADDR=10.96.0.20\n"
                                 "WEB_FRONT_PORT_9090_TCP=tcp://10.96.0.20:9090\n"
                                 "WEB_FRONT_PORT_9090_TCP_PROTO=tcp\n"
                                 "WEB_FRONT_PORT_9090_TCP_PORT=9090\n"
                                 "WEB_FRONT_PORT_9090_TCP_ADDR=10.96.0.20\n");
}

static void test_links_disabled_keep_the_apiserver(void **state)
{
        (void)state;
        cleanup_json json_t *svcs = cluster();
        cleanup_free char *got = vars_for(svcs, "shop", false);
        assert_string_equal(got, "KUBERNETES_SERVICE_HOST=10.96.0.1\n"
                                 "KUBERNETES_SERVICE_PORT=443\n"
                                 "KUBERNETES_SERVICE_PORT_HTTPS=443\n"
                                 "KUBERNETES_PORT=tcp://10.96.0.1:443\n"
                                 "KUBERNETES_PORT_443_TCP=tcp://10.96.0.1:443\n"
                                 "KUBERNETES_PORT_443_TCP_PROTO=tcp\n"
                                 "KUBERNETES_PORT_443_TCP_PORT=443\n"
                                 "KUBERNETES_PORT_443_TCP_ADDR=10.96.0.1\n");
        /* a pod of the default namespace sees it once */
        cleanup_free char *def = vars_for(svcs, "default", true);
        assert_string_equal(def, got);
}

static void test_local_kubernetes_service_wins(void **state)
{
        (void)state;
        cleanup_json json_t *svcs = cluster();
        json_array_append_new(svcs,
                              service("shop", "kubernetes", "10.96.0.99", "[{\"port\": 8443}]"));
        cleanup_free char *got = vars_for(svcs, "shop", true);
        assert_non_null(strstr(got, "KUBERNETES_SERVICE_HOST=10.96.0.99\n"));
        assert_null(strstr(got, "10.96.0.1\n"));
        /* with links off, the pod's namespace does not count */
        cleanup_free char *off = vars_for(svcs, "shop", false);
        assert_non_null(strstr(off, "KUBERNETES_SERVICE_HOST=10.96.0.1\n"));
}

static void test_ipv6_and_odd_input(void **state)
{
        (void)state;
        cleanup_json json_t *svcs = json_array();
        json_array_append_new(
            svcs, service("ns", "v6", "fd00::10", "[{\"port\": 80, \"protocol\": \"SCTP\"}]"));
        json_array_append_new(svcs, json_string("not an object"));
        json_array_append_new(svcs, json_pack("{s:{s:s}}", "metadata", "name", "no-namespace"));
        cleanup_free char *got = vars_for(svcs, "ns", true);
        assert_string_equal(got, "V6_SERVICE_HOST=fd00::10\n"
                                 "V6_SERVICE_PORT=80\n"
                                 "V6_PORT=sctp://[fd00::10]:80\n"
                                 "V6_PORT_80_SCTP=sctp://[fd00::10]:80\n"
                                 "V6_PORT_80_SCTP_PROTO=sctp\n"
                                 "V6_PORT_80_SCTP_PORT=80\n"
                                 "V6_PORT_80_SCTP_ADDR=fd00::10\n");
        cleanup_free char *none = vars_for(NULL, "ns", true);
        assert_string_equal(none, "");
}

static void test_service_fields(void **state)
{
        (void)state;
        cleanup_json json_t *svc = service("shop", "web", "10.96.0.20",
                                           "[{\"name\": \"http\", \"port\": 80, \"protocol\": "
                                           "\"TCP\", \"targetPort\": 8080, \"nodePort\": 30080}]");
        cleanup_json json_t *kept = envvars_service_fields(svc);
        cleanup_free char *text = json_dumps(kept, JSON_SORT_KEYS | JSON_COMPACT);
        assert_string_equal(text, "{\"metadata\":{\"name\":\"web\",\"namespace\":\"shop\"},"
                                  "\"spec\":{\"clusterIP\":\"10.96.0.20\",\"ports\":[{\"name\":"
                                  "\"http\",\"port\":80,\"protocol\":\"TCP\"}]}}");
        /* what is kept gives the same variables */
        cleanup_json json_t *a = json_pack("[O]", svc);
        cleanup_json json_t *b = json_pack("[O]", kept);
        cleanup_free char *va = vars_for(a, "shop", true);
        cleanup_free char *vb = vars_for(b, "shop", true);
        assert_string_equal(va, vb);
        /* a Service without a spec still makes an object */
        cleanup_json json_t *bare = json_pack("{s:{s:s}}", "metadata", "name", "x");
        cleanup_json json_t *kb = envvars_service_fields(bare);
        assert_non_null(kb);
}

/* ---- the informer's store ---- */

static char *names(struct informer *inf)
{
        cleanup_json json_t *l = informer_list(inf);
        char *out = xstrdup("");
        size_t i;
        json_t *o;
        json_array_foreach(l, i, o)
        {
                json_t *md = json_object_get(o, "metadata");
                char *next =
                    xasprintf("%s%s/%s ", out, json_string_value(json_object_get(md, "namespace")),
                              json_string_value(json_object_get(md, "name")));
                free(out);
                out = next;
        }
        return out;
}

static void test_informer_store(void **state)
{
        (void)state;
        struct informer *inf = informer_new("services", "/api/v1/services", envvars_service_fields);
        assert_false(informer_has_synced(inf));
        cleanup_free char *empty = names(inf);
        assert_string_equal(empty, "");

        /* a list replaces everything, in key order */
        cleanup_json json_t *items = cluster();
        informer__replace(inf, items);
        assert_true(informer_has_synced(inf));
        cleanup_free char *all = names(inf);
        assert_string_equal(all, "default/kubernetes other/db shop/dns shop/external "
                                 "shop/headless shop/web-front ");
        /* stored trimmed */
        cleanup_json json_t *l = informer_list(inf);
        assert_null(json_object_get(json_object_get(json_array_get(l, 0), "metadata"), "uid"));

        /* events: modified, deleted, added */
        cleanup_json json_t *moved = service("shop", "dns", "10.96.0.11", "[{\"port\": 53}]");
        informer__event(inf, WATCH_MODIFIED, moved);
        cleanup_json json_t *gone = service("other", "db", "10.96.0.30", "[]");
        informer__event(inf, WATCH_DELETED, gone);
        cleanup_json json_t *added = service("a", "first", "10.96.0.40", "[{\"port\": 1}]");
        informer__event(inf, WATCH_ADDED, added);
        cleanup_free char *after = names(inf);
        assert_string_equal(after, "a/first default/kubernetes shop/dns shop/external "
                                   "shop/headless shop/web-front ");
        cleanup_json json_t *l2 = informer_list(inf);
        cleanup_free char *vars = vars_for(l2, "shop", true);
        assert_non_null(strstr(vars, "DNS_SERVICE_HOST=10.96.0.11\n"));

        /* a list taken before keeps its objects while the store moves on */
        cleanup_json json_t *before = informer_list(inf);
        cleanup_json json_t *none = json_array();
        informer__replace(inf, none);
        cleanup_free char *cleared = names(inf);
        assert_string_equal(cleared, "");
        assert_int_equal(json_array_size(before), 6);
        cleanup_free char *still = vars_for(before, "shop", false);
        assert_non_null(strstr(still, "KUBERNETES_SERVICE_HOST=10.96.0.1\n"));
        informer_free(inf);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_links),
            cmocka_unit_test(test_links_disabled_keep_the_apiserver),
            cmocka_unit_test(test_local_kubernetes_service_wins),
            cmocka_unit_test(test_ipv6_and_odd_input),
            cmocka_unit_test(test_service_fields),
            cmocka_unit_test(test_informer_store),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
