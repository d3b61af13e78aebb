/* SPDX-License-Identifier: Apache-2.0 */
/* DRA: a pod's ResourceClaims read and checked as upstream's manager does,
 * then refused for the driver, which this kubelet never has registered. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "dra/dra.h"
#include "util/yamljson.h"

#include "test_pods.h"

#include <stdio.h>
#include <string.h>

/* The apiserver's claims, by name (YAML); the path of the last GET. */
static const char *claim_yaml[4][2];
static char last_resource[64];
static int gets;

static int fake_get(void *opaque, const char *resource, const char *ns, const char *name,
                    const char *pod_uid, json_t **out, ck_error_t *err)
{
        (void)opaque;
        (void)ns;
        (void)pod_uid;
        gets++;
        snprintf(last_resource, sizeof(last_resource), "%s", resource);
        for (size_t i = 0; i < 4 && claim_yaml[i][0] != NULL; i++)
                if (strcmp(claim_yaml[i][0], name) == 0) {
                        return yamljson_parse(claim_yaml[i][1], strlen(claim_yaml[i][1]), out, err);
                }
        ck_error_make(err, 0, "resourceclaims.resource.k8s.io \"%s\" not found", name);
        return -1;
}

static const struct kube_objects kube = {.get = fake_get};

static struct pod *pod_claiming(const char *claims, const char *status)
{
        char buf[2048];
        snprintf(buf, sizeof(buf),
                 "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns, uid: pod-uid}\n"
                 "spec:\n  resourceClaims: %s\n"
                 "  containers: [{name: c, image: b:1, resources: {claims: [{name: gpu}]}}]\n"
                 "%s",
                 claims, status ? status : "");
        return test_pod_yaml(buf);
}

static void expect(const struct kube_objects *k, struct pod *p, const char *want)
{
        ck_error_t err = NULL;
        int r = dra_prepare_resources(k, p, &err);
        if (want == NULL) {
                if (r != 0)
                        fail_msg("want success, got: %s", ck_error_msg(err));
        } else {
                assert_int_equal(r, -1);
                assert_string_equal(ck_error_msg(err), want);
                ck_error_release(&err);
        }
        pod_unref(p);
}

static void test_prepare(void **state)
{
        (void)state;
        claim_yaml[0][0] = "unreserved";
        claim_yaml[0][1] = "metadata: {name: unreserved, namespace: ns, uid: c1}\nstatus: {}\n";
        claim_yaml[1][0] = "reserved";
        claim_yaml[1][1] =
            "metadata: {name: reserved, namespace: ns, uid: c2}\n"
            "status:\n  reservedFor: [{resource: pods, name: p, uid: pod-uid}]\n"
            "  allocation:\n    devices:\n      results:\n"
            "      - {request: gpu, driver: gpu.example.com, pool: node1, device: gpu-0}\n";
        claim_yaml[2][0] = "other-owner";
        claim_yaml[2][1] = "metadata:\n  name: other-owner\n  namespace: ns\n  uid: c3\n"
                           "  ownerReferences: [{apiVersion: v1, kind: Pod, name: q, uid: q-uid, "
                           "controller: true}]\n";
        claim_yaml[3][0] = "unallocated";
        claim_yaml[3][1] = "metadata: {name: unallocated, namespace: ns, uid: c4}\n"
                           "status: {reservedFor: [{resource: pods, name: p, uid: pod-uid}]}\n";

        /* none: nothing is read */
        struct pod *p = test_pod_yaml("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
                                      "  containers: [{name: c, image: b:1}]\n");
        assert_false(dra_pod_has_claims(p));
        gets = 0;
        expect(&kube, p, NULL);
        assert_int_equal(gets, 0);

        p = pod_claiming("[{name: gpu, resourceClaimName: reserved}]", NULL);
        assert_true(dra_pod_has_claims(p));
        expect(&kube, p, "prepare dynamic resources: DRA driver gpu.example.com is not registered");
        assert_string_equal(last_resource, "resourceclaims");

        expect(&kube, pod_claiming("[{name: gpu, resourceClaimName: unreserved}]", NULL),
               "prepare dynamic resources: pod p (pod-uid) is not allowed to use ResourceClaim "
               "unreserved (c1)");
        expect(&kube, pod_claiming("[{name: gpu, resourceClaimName: unallocated}]", NULL),
               "prepare dynamic resources: ResourceClaim unallocated: not allocated");
        expect(&kube, pod_claiming("[{name: gpu, resourceClaimName: missing}]", NULL),
               "prepare dynamic resources: fetch ResourceClaim missing: "
               "resourceclaims.resource.k8s.io \"missing\" not found");
        expect(NULL, pod_claiming("[{name: gpu, resourceClaimName: reserved}]", NULL),
               "prepare dynamic resources: fetch ResourceClaim reserved: no apiserver to read it "
               "from (standalone)");

        /* from a template: the name in the pod's status, the pod its owner */
        expect(&kube, pod_claiming("[{name: gpu, resourceClaimTemplateName: t}]", NULL),
               "prepare dynamic resources: pod \"ns/p\": ResourceClaim not created yet");
        expect(&kube,
               pod_claiming("[{name: gpu, resourceClaimTemplateName: t}]",
                            "status: {resourceClaimStatuses: [{name: gpu, resourceClaimName: "
                            "other-owner}]}\n"),
               "prepare dynamic resources: ResourceClaim ns/other-owner was not created for pod "
               "ns/p (pod is not owner)");
        /* a status without a name: nothing generated, nothing to prepare */
        gets = 0;
        expect(&kube,
               pod_claiming("[{name: gpu, resourceClaimTemplateName: t}]",
                            "status: {resourceClaimStatuses: [{name: gpu}]}\n"),
               NULL);
        assert_int_equal(gets, 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_prepare),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
