/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The runtime's readiness, from CRI Status (see runtime_state.h).
 */
#include "kubelet/runtime_state.h"

#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct runtime_state {
        pthread_mutex_t lock;
        int64_t refresh_ms;
        int64_t asked_ms;    /* the last Status call (0: none) */
        int64_t recorded_ms; /* when the answer recorded was asked */
        int64_t ready_ms;    /* the last answer with RuntimeReady (0: none) */
        char *runtime_error; /* NULL: RuntimeReady */
        char *network_error; /* NULL: NetworkReady */
        /* the runtime handlers a ready runtime listed last, and whether
         * each supports user namespaces */
        char **handlers;
        bool *handler_userns;
        size_t n_handlers;
};

struct runtime_state *runtime_state_new(int64_t refresh_ms)
{
        struct runtime_state *s = xcalloc(1, sizeof(*s));
        pthread_mutex_init(&s->lock, NULL);
        s->refresh_ms = refresh_ms;
        s->network_error = xstrdup("network state unknown"); /* upstream ErrNetworkUnknown */
        return s;
}

static void free_handlers(char **names, bool *userns, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
        free(userns);
}

void runtime_state_free(struct runtime_state *s)
{
        if (s == NULL)
                return;
        free_handlers(s->handlers, s->handler_userns, s->n_handlers);
        free(s->runtime_error);
        free(s->network_error);
        pthread_mutex_destroy(&s->lock);
        free(s);
}

/* upstream RuntimeCondition.String(), behind its error's words; "<nil>"
 * when the runtime reports no such condition.  NULL: the condition holds. */
static char *condition_error(const Runtime__V1__StatusResponse *st, const char *type,
                             const char *words)
{
        for (size_t i = 0; st->status && i < st->status->n_conditions; i++) {
                const Runtime__V1__RuntimeCondition *c = st->status->conditions[i];
                if (strcmp(c->type, type) != 0)
                        continue;
                if (c->status)
                        return NULL;
                return xasprintf("%s: %s=false reason:%s message:%s", words, c->type, c->reason,
                                 c->message);
        }
        return xasprintf("%s: <nil>", words);
}

void runtime_state__record(struct runtime_state *s, const Runtime__V1__StatusResponse *st,
                           int64_t asked_ms)
{
        char *rt = condition_error(st, "RuntimeReady", "container runtime not ready");
        char *net = condition_error(st, "NetworkReady", "container runtime network not ready");
        char **handlers = NULL;
        bool *userns = NULL;
        size_t n = 0;
        if (rt == NULL) {
                n = st->n_runtime_handlers;
                handlers = xcalloc(n + 1, sizeof(*handlers));
                userns = xcalloc(n + 1, sizeof(*userns));
                for (size_t i = 0; i < n; i++) {
                        const Runtime__V1__RuntimeHandler *h = st->runtime_handlers[i];
                        handlers[i] = xstrdup(h->name ? h->name : "");
                        userns[i] = h->features != NULL && h->features->user_namespaces;
                }
        }
        pthread_mutex_lock(&s->lock);
        if (asked_ms < s->recorded_ms) {
                /* a slower, older call answered after a newer one */
                pthread_mutex_unlock(&s->lock);
                free(rt);
                free(net);
                free_handlers(handlers, userns, n);
                return;
        }
        s->recorded_ms = asked_ms;
        free(s->network_error);
        s->network_error = net;
        free(s->runtime_error);
        s->runtime_error = rt;
        if (rt == NULL) {
                /* upstream: the handlers and the sync time of a ready runtime */
                free_handlers(s->handlers, s->handler_userns, s->n_handlers);
                s->handlers = handlers;
                s->handler_userns = userns;
                s->n_handlers = n;
                s->ready_ms = asked_ms > 0 ? asked_ms : 1;
        }
        pthread_mutex_unlock(&s->lock);
}

void runtime_state_refresh(struct runtime_state *s, struct cri_client *cri)
{
        int64_t now = fs_now_mono_ms();
        pthread_mutex_lock(&s->lock);
        bool fresh = s->asked_ms != 0 && now - s->asked_ms < s->refresh_ms;
        if (!fresh)
                s->asked_ms = now;
        pthread_mutex_unlock(&s->lock);
        if (fresh)
                return;
        Runtime__V1__StatusResponse *st = NULL;
        cleanup_error ck_error_t err = NULL;
        if (cri_status(cri, &st, &err) < 0) {
                /* upstream updateRuntimeUp: logged, the state kept */
                LOG_ERROR("Container runtime sanity check failed", "err=\"%s\"", ck_error_msg(err));
                return;
        }
        runtime_state__record(s, st, now);
        runtime__v1__status_response__free_unpacked(st, NULL);
}

char *runtime_state_runtime_error(struct runtime_state *s, int64_t now_ms, char **sync_error)
{
        pthread_mutex_lock(&s->lock);
        *sync_error = NULL;
        if (s->ready_ms == 0)
                *sync_error = xstrdup("container runtime status check may not have completed yet");
        else if (now_ms - s->ready_ms >= RUNTIME_STATE_DOWN_AFTER_MS)
                *sync_error = xstrdup("container runtime is down");
        char *e = xstrdup(s->runtime_error);
        pthread_mutex_unlock(&s->lock);
        return e;
}

bool runtime_state_handler_supports_userns(struct runtime_state *s, const char *handler,
                                           char **error)
{
        pthread_mutex_lock(&s->lock);
        bool listed = false, supported = false;
        for (size_t i = 0; i < s->n_handlers && !listed; i++)
                if (strcmp(s->handlers[i], handler) == 0) {
                        listed = true;
                        supported = s->handler_userns[i];
                }
        if (!listed && s->n_handlers > 0)
                *error = xasprintf("the handler \"%s\" is not known", handler);
        pthread_mutex_unlock(&s->lock);
        return supported;
}

char *runtime_state_network_error(struct runtime_state *s)
{
        pthread_mutex_lock(&s->lock);
        char *e = xstrdup(s->network_error);
        pthread_mutex_unlock(&s->lock);
        return e;
}
