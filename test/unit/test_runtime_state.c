/* SPDX-License-Identifier: Apache-2.0 */
/* The runtime's readiness as CRI Status reports it (kubelet/runtime_state.c):
 * upstream's words for each condition, a runtime that does not answer, and
 * one Status call per refresh period whoever asks, against a fake CRI. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "kubelet/runtime_state.h"
#include "util/cleanup.h"
#include "util/fsutil.h"

#include <stdlib.h>
#include <string.h>

static Runtime__V1__RuntimeCondition cond(const char *type, bool status, const char *reason,
                                          const char *message)
{
        Runtime__V1__RuntimeCondition c = RUNTIME__V1__RUNTIME_CONDITION__INIT;
        c.type = (char *)type;
        c.status = status;
        c.reason = (char *)reason;
        c.message = (char *)message;
        return c;
}

/* Records a Status answer with the n conditions. */
static void record(struct runtime_state *s, Runtime__V1__RuntimeCondition *conds, size_t n)
{
        Runtime__V1__RuntimeCondition *list[4];
        for (size_t i = 0; i < n; i++)
                list[i] = &conds[i];
        Runtime__V1__RuntimeStatus rs = RUNTIME__V1__RUNTIME_STATUS__INIT;
        rs.conditions = list;
        rs.n_conditions = n;
        Runtime__V1__StatusResponse st = RUNTIME__V1__STATUS_RESPONSE__INIT;
        st.status = &rs;
        runtime_state__record(s, &st, NULL, 1000);
}

static void test_ready_and_not_ready(void **state)
{
        (void)state;
        struct runtime_state *s = runtime_state_new(RUNTIME_STATE_REFRESH_MS);
        bool down = true;

        Runtime__V1__RuntimeCondition ready[] = {cond("RuntimeReady", true, "", ""),
                                                 cond("NetworkReady", true, "", "")};
        record(s, ready, 2);
        cleanup_free char *rt = runtime_state_runtime_error(s, &down);
        cleanup_free char *net = runtime_state_network_error(s);
        assert_null(rt);
        assert_null(net);
        assert_false(down);

        Runtime__V1__RuntimeCondition no_cni[] = {
            cond("RuntimeReady", true, "", ""),
            cond("NetworkReady", false, "NetworkPluginNotReady",
                 "Network plugin returns error: cni plugin not initialized")};
        record(s, no_cni, 2);
        cleanup_free char *rt2 = runtime_state_runtime_error(s, &down);
        cleanup_free char *net2 = runtime_state_network_error(s);
        assert_null(rt2);
        assert_string_equal(net2, "container runtime network not ready: NetworkReady=false "
                                  "reason:NetworkPluginNotReady message:Network plugin returns "
                                  "error: cni plugin not initialized");

        /* conditions the runtime does not report: upstream prints a nil one */
        Runtime__V1__RuntimeCondition rt_down[] = {cond("RuntimeReady", false, "Why", "broken")};
        record(s, rt_down, 1);
        cleanup_free char *rt3 = runtime_state_runtime_error(s, &down);
        cleanup_free char *net3 = runtime_state_network_error(s);
        assert_string_equal(
            rt3, "container runtime not ready: RuntimeReady=false reason:Why message:broken");
        assert_string_equal(net3, "container runtime network not ready: <nil>");
        record(s, NULL, 0);
        cleanup_free char *rt4 = runtime_state_runtime_error(s, &down);
        assert_string_equal(rt4, "container runtime not ready: <nil>");
        assert_false(down);

        /* no answer: the runtime is down, the network's error is the call's */
        runtime_state__record(s, NULL, "rpc error: code = Unavailable desc = connection refused",
                              2000);
        cleanup_free char *rt5 = runtime_state_runtime_error(s, &down);
        cleanup_free char *net5 = runtime_state_network_error(s);
        assert_true(down);
        assert_string_equal(rt5, "container runtime is down");
        assert_string_equal(net5, "rpc error: code = Unavailable desc = connection refused");
        runtime_state_free(s);
}

/* A refresh asks the runtime: with nothing listening, it is down; a second
 * refresh within the period asks nothing (the answer recorded by hand
 * stays). */
static void test_refresh_period(void **state)
{
        (void)state;
        struct runtime_state *s = runtime_state_new(60000);
        struct cri_client *cri = cri_client_new("unix:///nonexistent/ck-runtime-state.sock", 2000);
        bool down = false;
        runtime_state_refresh(s, cri);
        cleanup_free char *rt = runtime_state_runtime_error(s, &down);
        cleanup_free char *net = runtime_state_network_error(s);
        assert_true(down);
        assert_string_equal(rt, "container runtime is down");
        assert_non_null(net);
        assert_non_null(strstr(net, "ck-runtime-state.sock"));

        Runtime__V1__RuntimeCondition ready[] = {cond("RuntimeReady", true, "", ""),
                                                 cond("NetworkReady", true, "", "")};
        Runtime__V1__RuntimeCondition *list[] = {&ready[0], &ready[1]};
        Runtime__V1__RuntimeStatus rs = RUNTIME__V1__RUNTIME_STATUS__INIT;
        rs.conditions = list;
        rs.n_conditions = 2;
        Runtime__V1__StatusResponse st = RUNTIME__V1__STATUS_RESPONSE__INIT;
        st.status = &rs;
        runtime_state__record(s, &st, NULL, fs_now_mono_ms());
        runtime_state_refresh(s, cri); /* fresh: not asked */
        cleanup_free char *rt2 = runtime_state_runtime_error(s, &down);
        assert_false(down);
        assert_null(rt2);
        cri_client_free(cri);
        runtime_state_free(s);
}

/* The runtime handlers Status lists, and their user namespaces (upstream
 * HandlerSupportsUserNamespaces). */
static void test_handlers_user_namespaces(void **state)
{
        (void)state;
        struct runtime_state *s = runtime_state_new(RUNTIME_STATE_REFRESH_MS);
        char *why = NULL;
        /* an older runtime lists none: not supported, no error */
        record(s, NULL, 0);
        assert_false(runtime_state_handler_supports_userns(s, "", &why));
        assert_null(why);

        Runtime__V1__RuntimeHandlerFeatures with = RUNTIME__V1__RUNTIME_HANDLER_FEATURES__INIT;
        with.user_namespaces = true;
        Runtime__V1__RuntimeHandlerFeatures without = RUNTIME__V1__RUNTIME_HANDLER_FEATURES__INIT;
        Runtime__V1__RuntimeHandler def = RUNTIME__V1__RUNTIME_HANDLER__INIT;
        def.name = "";
        def.features = &with;
        Runtime__V1__RuntimeHandler kata = RUNTIME__V1__RUNTIME_HANDLER__INIT;
        kata.name = "kata";
        kata.features = &without;
        Runtime__V1__RuntimeHandler *handlers[] = {&def, &kata};
        Runtime__V1__StatusResponse st = RUNTIME__V1__STATUS_RESPONSE__INIT;
        st.runtime_handlers = handlers;
        st.n_runtime_handlers = 2;
        runtime_state__record(s, &st, NULL, 1000);
        assert_true(runtime_state_handler_supports_userns(s, "", &why));
        assert_false(runtime_state_handler_supports_userns(s, "kata", &why));
        assert_null(why);
        assert_false(runtime_state_handler_supports_userns(s, "gvisor", &why));
        assert_string_equal(why, "the handler \"gvisor\" is not known");
        free(why);
        why = NULL;
        /* a failed Status keeps what was listed */
        runtime_state__record(s, NULL, "connection refused", 2000);
        assert_true(runtime_state_handler_supports_userns(s, "", &why));
        runtime_state_free(s);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_ready_and_not_ready),
            cmocka_unit_test(test_refresh_period),
            cmocka_unit_test(test_handlers_user_namespaces),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
