/* SPDX-License-Identifier: Apache-2.0 */
/*
 * configMap and secret reads for pods (client/objects.h) against a scripted
 * fake apiserver: pods share a recent read, a pod's first read is fresh (a
 * pod started right after an edit sees the edit), errors are not kept.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fake_apiserver.h"

#include "client/objects.h"
#include "util/cleanup.h"
#include "util/log.h"

static const char *value_of(json_t *cm)
{
        return json_string_value(json_object_get(json_object_get(cm, "data"), "k"));
}

static void test_reads_shared_but_fresh_for_a_new_pod(void **state)
{
        (void)state;
        static const struct answer script[] = {
            {.status = 200, .body = "{\"data\":{\"k\":\"v1\"}}"}, /* pod a */
            {.status = 200, .body = "{\"data\":{\"k\":\"v2\"}}"}, /* pod b: fresh */
            {.status = 404, .body = "{\"kind\":\"Status\",\"code\":404}"},
            {.status = 200, .body = "{\"data\":{\"k\":\"made\"}}"},
        };
        struct fake *f = fake_start(script, 4);
        struct rest_pool *pool = fake_rest_pool(f);
        ck_error_t err = NULL;
        struct kube_objects *o = kube_objects_rest_new(pool, NULL);

        json_t *cm = NULL;
        assert_int_equal(o->get(o->opaque, "configmaps", "ns", "cfg", "pod-a", &cm, &err), 0);
        assert_string_equal(value_of(cm), "v1");
        json_decref(cm);
        assert_string_equal(f->req[0], "GET /api/v1/namespaces/ns/configmaps/cfg");
        /* pod a again: the recent read */
        assert_int_equal(o->get(o->opaque, "configmaps", "ns", "cfg", "pod-a", &cm, &err), 0);
        assert_string_equal(value_of(cm), "v1");
        json_decref(cm);
        assert_int_equal(f->n_req, 1);
        /* pod b's first read goes to the apiserver, and a's next one shares it */
        assert_int_equal(o->get(o->opaque, "configmaps", "ns", "cfg", "pod-b", &cm, &err), 0);
        assert_string_equal(value_of(cm), "v2");
        json_decref(cm);
        assert_int_equal(o->get(o->opaque, "configmaps", "ns", "cfg", "pod-a", &cm, &err), 0);
        assert_string_equal(value_of(cm), "v2");
        json_decref(cm);
        assert_int_equal(f->n_req, 2);
        /* not found is not remembered */
        assert_int_equal(o->get(o->opaque, "configmaps", "ns", "later", "pod-a", &cm, &err), -1);
        assert_int_equal(err->code, 404);
        ck_error_release(&err);
        assert_int_equal(o->get(o->opaque, "configmaps", "ns", "later", "pod-a", &cm, &err), 0);
        assert_string_equal(value_of(cm), "made");
        json_decref(cm);
        assert_int_equal(f->n_req, 4);

        kube_objects_rest_free(o);
        rest_pool_free(pool);
        fake_stop(f);
}

int main(void)
{
        log_set_verbosity(-1);
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_reads_shared_but_fresh_for_a_new_pod),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
