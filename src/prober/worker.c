/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One probe worker's state (upstream pkg/kubelet/prober/worker.go, doProbe):
 * the initial result of a new container instance, the success/failure
 * thresholds, the hold after a liveness or startup verdict, and the gating
 * of liveness and readiness behind a startup probe.  Called under the
 * prober's lock; no I/O.
 */
#include "prober/prober_internal.h"

#include "util/fsutil.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *prober__type_name(enum probe_type t)
{
        switch (t) {
        case PROBE_LIVENESS:
                return "Liveness";
        case PROBE_READINESS:
                return "Readiness";
        case PROBE_STARTUP:
                return "Startup";
        }
        return "UNKNOWN";
}

struct prober_worker *prober__worker_new(struct prober_pod *pp, const struct container *c,
                                         const struct probe *spec, enum probe_type type)
{
        struct prober_worker *w = xcalloc(1, sizeof(*w));
        w->pp = pp;
        w->type = type;
        w->container_name = xstrdup(c->name);
        w->c = c;
        w->spec = spec;
        w->heap_index = SIZE_MAX;
        w->result = PROBE_RESULT_UNKNOWN;
        return w;
}

void prober__worker_free(struct prober_worker *w)
{
        if (w == NULL)
                return;
        free(w->container_name);
        free(w->container_id);
        free(w);
}

static enum probe_result initial_result(enum probe_type t)
{
        switch (t) {
        case PROBE_READINESS:
                return PROBE_RESULT_FAILURE;
        case PROBE_LIVENESS:
                return PROBE_RESULT_SUCCESS;
        case PROBE_STARTUP:
                break;
        }
        return PROBE_RESULT_UNKNOWN;
}

void prober__worker_reset(struct prober_worker *w, const char *container_id, int64_t started_at_ns)
{
        free(w->container_id);
        w->container_id = xstrdup(container_id);
        w->started_at_ns = started_at_ns;
        w->result = initial_result(w->type);
        w->last = PROBE_RESULT_UNKNOWN;
        w->run = 0;
        w->on_hold = false;
        /* upstream skips probing until startedAt + initialDelaySeconds */
        int64_t delay_ms = 0;
        if (started_at_ns > 0 && w->spec->initial_delay_seconds > 0) {
                int64_t ready_ns =
                    started_at_ns + (int64_t)w->spec->initial_delay_seconds * 1000000000;
                delay_ms = (ready_ns - fs_now_real_ns()) / 1000000;
                if (delay_ms < 0)
                        delay_ms = 0;
        }
        w->due_ms = fs_now_mono_ms() + delay_ms;
}

bool prober__worker_record(struct prober_worker *w, enum probe_outcome outcome)
{
        if (outcome == PROBE_OUTCOME_ERROR)
                return false; /* upstream: a prober error throws the result away */
        enum probe_result r =
            outcome == PROBE_OUTCOME_FAILURE ? PROBE_RESULT_FAILURE : PROBE_RESULT_SUCCESS;
        if (w->last == r) {
                w->run++;
        } else {
                w->last = r;
                w->run = 1;
        }
        int32_t failure_threshold = w->spec->failure_threshold > 0 ? w->spec->failure_threshold : 1;
        int32_t success_threshold = w->spec->success_threshold > 0 ? w->spec->success_threshold : 1;
        if ((r == PROBE_RESULT_FAILURE && w->run < failure_threshold) ||
            (r == PROBE_RESULT_SUCCESS && w->run < success_threshold))
                return false; /* below the threshold: the result stands */

        bool changed = w->result != r;
        w->result = r;
        if ((w->type == PROBE_LIVENESS && r == PROBE_RESULT_FAILURE) || w->type == PROBE_STARTUP) {
                /* A restart is due (or the container started): stop probing
                 * until a new container ID. */
                w->on_hold = true;
                w->run = 0;
        }
        return changed;
}

/* The startup worker of the same container, or NULL. */
static const struct prober_worker *startup_worker(const struct prober_worker *w)
{
        for (size_t i = 0; w->pp != NULL && i < w->pp->n_workers; i++) {
                const struct prober_worker *o = w->pp->workers[i];
                if (o->type == PROBE_STARTUP && strcmp(o->container_name, w->container_name) == 0)
                        return o;
        }
        return NULL;
}

bool prober__worker_wants_run(const struct prober_worker *w)
{
        if (w->removed || w->on_hold || w->container_id == NULL)
                return false;
        if (w->type == PROBE_STARTUP || w->c->startup_probe == NULL)
                return true;
        /* liveness and readiness wait for the container to have started */
        const struct prober_worker *s = startup_worker(w);
        return s != NULL && s->container_id != NULL &&
               strcmp(s->container_id, w->container_id) == 0 && s->result == PROBE_RESULT_SUCCESS;
}
