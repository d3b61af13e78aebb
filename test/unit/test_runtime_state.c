/* SPDX-License-Identifier: Apache-2.0 */
/* The runtime's readiness as CRI Status reports it (kubelet/runtime_state.c),
 * as upstream's runtimeState: its words for each condition, the runtime
 * "down" only after 30 s without a ready answer, a failed call changing
 * nothing, an older answer never over a newer one, the handlers of a ready
 * runtime, one Status call per refresh period whoever asks. */
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

/* Records, as asked at `at`, a Status answer with the n conditions and the
 * handlers (NULL-terminated, may be NULL). */
static void record(struct runtime_state *s, int64_t at, Runtime__V1__RuntimeCondition *conds,
                   size_t n, Runtime__V1__RuntimeHandler **handlers)
{
        Runtime__V1__RuntimeCondition *list[4];
        for (size_t i = 0; i < n; i++)
                list[i] = &conds[i];
        Runtime__V1__RuntimeStatus rs = RUNTIME__V1__RUNTIME_STATUS__INIT;
        rs.conditions = list;
        rs.n_conditions = n;
        Runtime__V1__StatusResponse st = RUNTIME__V1__STATUS_RESPONSE__INIT;
        st.status = &rs;
        while (handlers != NULL && handlers[st.n_runtime_handlers] != NULL)
                st.n_runtime_handlers++;
        st.runtime_handlers = handlers;
        runtime_state__record(s, &st, at);
}

/* The runtime's errors at `now`: "<sync>|<runtime>" ("-" for none). */
static char *errors_at(struct runtime_state *s, int64_t now)
{
        char *sync = NULL;
        char *rt = runtime_state_runtime_error(s, now, &sync);
        char *out = NULL;
        if (asprintf(&out, "%s|%s", sync ? sync : "-", rt ? rt : "-") < 0)
                abort();
        free(sync);
        free(rt);
        return out;
}

static void test_conditions_in_upstream_words(void **state)
{
        (void)state;
        struct runtime_state *s = runtime_state_new(RUNTIME_STATE_REFRESH_MS);
        /* before any answer */
        cleanup_free char *e0 = errors_at(s, 1000);
        cleanup_free char *n0 = runtime_state_network_error(s);
        assert_string_equal(e0, "container runtime status check may not have completed yet|-");
        assert_string_equal(n0, "network state unknown");

        Runtime__V1__RuntimeCondition ready[] = {cond("RuntimeReady", true, "", ""),
                                                 cond("NetworkReady", true, "", "")};
        record(s, 1000, ready, 2, NULL);
        cleanup_free char *e1 = errors_at(s, 1000);
        cleanup_free char *n1 = runtime_state_network_error(s);
        assert_string_equal(e1, "-|-");
        assert_null(n1);

        Runtime__V1__RuntimeCondition no_cni[] = {
            cond("RuntimeReady", true, "", ""),
            cond("NetworkReady", false, "NetworkPluginNotReady",
                 "Network plugin returns error: cni plugin not initialized")};
        record(s, 2000, no_cni, 2, NULL);
        cleanup_free char *n2 = runtime_state_network_error(s);
        assert_string_equal(n2, "container runtime network not ready: NetworkReady=false "
                                "reason:NetworkPluginNotReady message:Network plugin returns "
                                "error: cni plugin not initialized");

        /* conditions the runtime does not report: upstream prints a nil one */
        Runtime__V1__RuntimeCondition rt_bad[] = {cond("RuntimeReady", false, "Why", "broken")};
        record(s, 3000, rt_bad, 1, NULL);
        cleanup_free char *e3 = errors_at(s, 3000);
        cleanup_free char *n3 = runtime_state_network_error(s);
        assert_string_equal(
            e3, "-|container runtime not ready: RuntimeReady=false reason:Why message:broken");
        assert_string_equal(n3, "container runtime network not ready: <nil>");
        record(s, 4000, NULL, 0, NULL);
        cleanup_free char *e4 = errors_at(s, 4000);
        assert_string_equal(e4, "-|container runtime not ready: <nil>");
        /* 30 s after the last ready answer (at 2000): down */
        cleanup_free char *e5 = errors_at(s, 2000 + RUNTIME_STATE_DOWN_AFTER_MS);
        assert_string_equal(e5, "container runtime is down|container runtime not ready: <nil>");

        /* an answer to an older call does not replace a newer one */
        record(s, 3500, ready, 2, NULL);
        cleanup_free char *e6 = errors_at(s, 4000);
        assert_string_equal(e6, "-|container runtime not ready: <nil>");
        runtime_state_free(s);
}

/* A refresh asks the runtime once per period; a call that fails (nothing
 * listens) changes nothing. */
static void test_refresh(void **state)
{
        (void)state;
        struct runtime_state *s = runtime_state_new(60000);
        struct cri_client *cri = cri_client_new("unix:///nonexistent/ck-runtime-state.sock", 2000);
        runtime_state_refresh(s, cri);
        cleanup_free char *e1 = errors_at(s, fs_now_mono_ms());
        cleanup_free char *n1 = runtime_state_network_error(s);
        assert_string_equal(e1, "container runtime status check may not have completed yet|-");
        assert_string_equal(n1, "network state unknown");

        runtime_state_free(s);
        s = runtime_state_new(60000);
        Runtime__V1__RuntimeCondition ready[] = {cond("RuntimeReady", true, "", ""),
                                                 cond("NetworkReady", true, "", "")};
        int64_t now = fs_now_mono_ms();
        record(s, now, ready, 2, NULL);
        runtime_state_refresh(s, cri); /* asks (none asked yet), fails: the state stays */
        runtime_state_refresh(s, cri); /* within the period: not asked */
        cleanup_free char *e2 = errors_at(s, now);
        cleanup_free char *n2 = runtime_state_network_error(s);
        assert_string_equal(e2, "-|-");
        assert_null(n2);
        cri_client_free(cri);
        runtime_state_free(s);
}

/* The handlers a ready runtime lists, and their user namespaces (upstream
 * HandlerSupportsUserNamespaces). */
static void test_handlers_user_namespaces(void **state)
{
        (void)state;
        struct runtime_state *s = runtime_state_new(RUNTIME_STATE_REFRESH_MS);
        char *why = NULL;
        Runtime__V1__RuntimeCondition ready[] = {cond("RuntimeReady", true, "", ""),
                                                 cond("NetworkReady", true, "", "")};
        /* an older runtime lists none: not supported, no error */
        record(s, 1000, ready, 2, NULL);
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
        Runtime__V1__RuntimeHandler *handlers[] = {&def, &kata, NULL};
        record(s, 2000, ready, 2, handlers);
        assert_true(runtime_state_handler_supports_userns(s, "", &why));
        assert_false(runtime_state_handler_supports_userns(s, "kata", &why));
        assert_null(why);
        assert_false(runtime_state_handler_supports_userns(s, "gvisor", &why));
        assert_string_equal(why, "the handler \"gvisor\" is not known");
        free(why);
        why = NULL;
        /* a runtime not ready: its handlers are not taken (upstream) */
        Runtime__V1__RuntimeCondition not_ready[] = {cond("RuntimeReady", false, "R", "M")};
        Runtime__V1__RuntimeHandler *none[] = {&kata, NULL};
        record(s, 3000, not_ready, 1, none);
        assert_true(runtime_state_handler_supports_userns(s, "", &why));
        runtime_state_free(s);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_conditions_in_upstream_words),
            cmocka_unit_test(test_refresh),
            cmocka_unit_test(test_handlers_user_namespaces),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
