/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Eviction thresholds: their configuration (upstream ParseThresholdConfig),
 * the signals' names and resources, and the state of what is met
 * (upstream synchronize, up to the ranking).
 */
#include "eviction/eviction.h"
#include "api/decode.h"
#include "config/kubeletconfig.h"
#include "util/cleanup.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct {
        const char *name, *resource;
        unsigned condition;
} signals[EVICTION_N_SIGNALS] = {
    [EVICTION_MEMORY_AVAILABLE] = {"memory.available", "memory", EVICTION_MEMORY_PRESSURE},
    [EVICTION_ALLOCATABLE_MEMORY_AVAILABLE] = {"allocatableMemory.available", "memory",
                                               EVICTION_MEMORY_PRESSURE},
    [EVICTION_NODEFS_AVAILABLE] = {"nodefs.available", "ephemeral-storage", EVICTION_DISK_PRESSURE},
    [EVICTION_NODEFS_INODES_FREE] = {"nodefs.inodesFree", "inodes", EVICTION_DISK_PRESSURE},
    [EVICTION_IMAGEFS_AVAILABLE] = {"imagefs.available", "ephemeral-storage",
                                    EVICTION_DISK_PRESSURE},
    [EVICTION_IMAGEFS_INODES_FREE] = {"imagefs.inodesFree", "inodes", EVICTION_DISK_PRESSURE},
    [EVICTION_CONTAINERFS_AVAILABLE] = {"containerfs.available", "ephemeral-storage",
                                        EVICTION_DISK_PRESSURE},
    [EVICTION_CONTAINERFS_INODES_FREE] = {"containerfs.inodesFree", "inodes",
                                          EVICTION_DISK_PRESSURE},
    [EVICTION_PID_AVAILABLE] = {"pid.available", "pids", EVICTION_PID_PRESSURE},
};

const char *eviction_signal_name(enum eviction_signal s)
{
        return (unsigned)s < EVICTION_N_SIGNALS ? signals[s].name : NULL;
}

const char *eviction_signal_resource(enum eviction_signal s)
{
        return (unsigned)s < EVICTION_N_SIGNALS ? signals[s].resource : NULL;
}

static int signal_of(const char *name, enum eviction_signal *out, ck_error_t *err)
{
        for (int i = 0; i < EVICTION_N_SIGNALS; i++)
                if (strcmp(signals[i].name, name) == 0) {
                        *out = (enum eviction_signal)i;
                        return 0;
                }
        return ck_error_make(err, 0, "unsupported eviction signal %s", name);
}

/* upstream parsePercentage: a float32 of the number before '%', over 100 */
static int parse_percentage(const char *val, float *out, ck_error_t *err)
{
        size_t n = strlen(val);
        cleanup_free char *num = xstrndup(val, n - 1);
        char *end = NULL;
        errno = 0;
        float f = strtof(num, &end);
        if (*num == '\0' || end == NULL || *end != '\0' || errno != 0 || isnan(f))
                return ck_error_make(err, 0, "strconv.ParseFloat: parsing \"%s\": invalid syntax",
                                     num);
        *out = f / 100.0f;
        return 0;
}

/* upstream parseThresholdStatement; *skip when "0%" or "100%" */
static int parse_statement(enum eviction_signal sig, const char *val, struct eviction_value *out,
                           bool *skip, ck_error_t *err)
{
        const char *name = signals[sig].name;
        *skip = false;
        *out = (struct eviction_value){0};
        size_t n = strlen(val);
        if (n > 0 && val[n - 1] == '%') {
                if (strcmp(val, "0%") == 0 || strcmp(val, "100%") == 0) {
                        *skip = true;
                        return 0;
                }
                float p = 0;
                if (parse_percentage(val, &p, err) < 0)
                        return -1;
                if (p < 0)
                        return ck_error_make(err, 0,
                                             "eviction percentage threshold %s must be >= 0%%: %s",
                                             name, val);
                if (p > 1)
                        return ck_error_make(
                            err, 0, "eviction percentage threshold %s must be <= 100%%: %s", name,
                            val);
                out->percentage = p;
                return 0;
        }
        int64_t q = 0;
        if (api_parse_quantity(val, false, &q, err) < 0)
                return -1;
        if (q <= 0)
                return ck_error_make(err, 0, "eviction threshold %s must be positive: %s", name,
                                     val);
        out->quantity = q;
        return 0;
}

static int parse_min_reclaim(enum eviction_signal sig, const char *val, struct eviction_value *out,
                             ck_error_t *err)
{
        const char *name = signals[sig].name;
        *out = (struct eviction_value){0};
        size_t n = strlen(val);
        if (n > 0 && val[n - 1] == '%') {
                float p = 0;
                if (parse_percentage(val, &p, err) < 0)
                        return -1;
                if (p <= 0)
                        return ck_error_make(
                            err, 0, "eviction percentage minimum reclaim %s must be positive: %s",
                            name, val);
                out->percentage = p;
                return 0;
        }
        int64_t q = 0;
        if (api_parse_quantity(val, false, &q, err) < 0)
                return -1;
        if (q < 0)
                return ck_error_make(err, 0, "negative eviction minimum reclaim specified for %s",
                                     name);
        out->quantity = q;
        return 0;
}

static void add(struct eviction_config *c, const struct eviction_threshold *t)
{
        c->thresholds = xrealloc(c->thresholds, (c->n + 1) * sizeof(*c->thresholds));
        c->thresholds[c->n++] = *t;
}

static int parse_map(const struct eviction_kv *kv, size_t n, bool soft, struct eviction_config *c,
                     ck_error_t *err)
{
        for (size_t i = 0; i < n; i++) {
                struct eviction_threshold t = {.grace_period_ms = soft ? -1 : 0};
                bool skip = false;
                if (signal_of(kv[i].key, &t.signal, err) < 0 ||
                    parse_statement(t.signal, kv[i].value, &t.value, &skip, err) < 0)
                        return -1;
                if (!skip)
                        add(c, &t);
        }
        return 0;
}

int eviction_config_parse(const struct eviction_kv *hard, size_t n_hard,
                          const struct eviction_kv *soft, size_t n_soft,
                          const struct eviction_kv *grace, size_t n_grace,
                          const struct eviction_kv *min_reclaim, size_t n_min_reclaim,
                          bool allocatable_pods, struct eviction_config *out, ck_error_t *err)
{
        struct eviction_config c = {0};
        if (parse_map(hard, n_hard, false, &c, err) < 0 ||
            parse_map(soft, n_soft, true, &c, err) < 0)
                goto fail;
        for (size_t i = 0; i < n_grace; i++) {
                enum eviction_signal sig = EVICTION_MEMORY_AVAILABLE;
                int64_t ms = 0;
                if (signal_of(grace[i].key, &sig, err) < 0 ||
                    config_parse_duration(grace[i].value, &ms, err) < 0)
                        goto fail;
                if (ms < 0) {
                        ck_error_make(err, 0,
                                      "invalid eviction grace period specified: %s, must be a "
                                      "positive value",
                                      grace[i].value);
                        goto fail;
                }
                for (size_t j = 0; j < c.n; j++)
                        if (c.thresholds[j].signal == sig && c.thresholds[j].grace_period_ms < 0)
                                c.thresholds[j].grace_period_ms = ms;
        }
        for (size_t j = 0; j < c.n; j++)
                if (c.thresholds[j].grace_period_ms < 0) {
                        ck_error_make(err, 0,
                                      "grace period must be specified for the soft eviction "
                                      "threshold %s",
                                      signals[c.thresholds[j].signal].name);
                        goto fail;
                }
        for (size_t i = 0; i < n_min_reclaim; i++) {
                enum eviction_signal sig = EVICTION_MEMORY_AVAILABLE;
                struct eviction_value v;
                if (signal_of(min_reclaim[i].key, &sig, err) < 0 ||
                    parse_min_reclaim(sig, min_reclaim[i].value, &v, err) < 0)
                        goto fail;
                for (size_t j = 0; j < c.n; j++)
                        if (c.thresholds[j].signal == sig)
                                c.thresholds[j].min_reclaim = v;
        }
        /* upstream addAllocatableThresholds */
        size_t n = c.n;
        for (size_t j = 0; allocatable_pods && j < n; j++) {
                if (c.thresholds[j].signal != EVICTION_MEMORY_AVAILABLE ||
                    c.thresholds[j].grace_period_ms != 0)
                        continue;
                struct eviction_threshold t = c.thresholds[j];
                t.signal = EVICTION_ALLOCATABLE_MEMORY_AVAILABLE;
                add(&c, &t);
        }
        *out = c;
        return 0;
fail:
        eviction_config_release(&c);
        return -1;
}

void eviction_config_release(struct eviction_config *c)
{
        free(c->thresholds);
        c->thresholds = NULL;
        c->n = 0;
}

int64_t eviction_value_quantity(const struct eviction_value *v, int64_t capacity)
{
        if (v->quantity != 0)
                return v->quantity;
        /* upstream: int64(float64(capacity) * float64(percentage)) */
        return (int64_t)((double)capacity * (double)v->percentage);
}

/* ---- state ---- */

#define NEVER INT64_MIN

struct eviction_state {
        struct eviction_config cfg;
        int64_t *first_observed_ms; /* per threshold; NEVER: not met */
        bool *met_before;           /* upstream m.thresholdsMet (actionable ones) */
        int64_t cond_last_ms[3];    /* per condition bit; NEVER */
        int64_t last_obs_ns[EVICTION_N_SIGNALS];
};

struct eviction_state *eviction_state_new(const struct eviction_config *cfg)
{
        struct eviction_state *s = xcalloc(1, sizeof(*s));
        s->cfg = *cfg;
        s->cfg.thresholds = xcalloc(cfg->n + 1, sizeof(*cfg->thresholds));
        if (cfg->n)
                memcpy(s->cfg.thresholds, cfg->thresholds, cfg->n * sizeof(*cfg->thresholds));
        s->first_observed_ms = xcalloc(cfg->n + 1, sizeof(int64_t));
        s->met_before = xcalloc(cfg->n + 1, sizeof(bool));
        for (size_t i = 0; i < cfg->n; i++)
                s->first_observed_ms[i] = NEVER;
        for (int i = 0; i < 3; i++)
                s->cond_last_ms[i] = NEVER;
        return s;
}

void eviction_state_free(struct eviction_state *s)
{
        if (s == NULL)
                return;
        free(s->cfg.thresholds);
        free(s->first_observed_ms);
        free(s->met_before);
        free(s);
}

const struct eviction_threshold *eviction_state_threshold(const struct eviction_state *s, int i)
{
        return i >= 0 && (size_t)i < s->cfg.n ? &s->cfg.thresholds[i] : NULL;
}

/* upstream thresholdsMet for one threshold */
static bool met(const struct eviction_threshold *t, const struct eviction_observation *obs,
                bool min_reclaim)
{
        const struct eviction_observation *o = &obs[t->signal];
        if (!o->ok)
                return false;
        int64_t q = eviction_value_quantity(&t->value, o->capacity);
        if (min_reclaim)
                q += eviction_value_quantity(&t->min_reclaim, o->capacity);
        return q > o->available;
}

bool eviction_still_met(const struct eviction_state *s, const struct eviction_observation *obs)
{
        for (size_t i = 0; i < s->cfg.n; i++)
                if (met(&s->cfg.thresholds[i], obs, true))
                        return true;
        return false;
}

static int cond_index(unsigned bit)
{
        return bit == EVICTION_MEMORY_PRESSURE ? 0 : bit == EVICTION_DISK_PRESSURE ? 1 : 2;
}

static bool is_memory(enum eviction_signal s)
{
        return s == EVICTION_MEMORY_AVAILABLE || s == EVICTION_ALLOCATABLE_MEMORY_AVAILABLE;
}

void eviction_observe(struct eviction_state *s, const struct eviction_observation *obs,
                      int64_t now_ms, struct eviction_decision *out)
{
        size_t n = s->cfg.n;
        bool *now_met = xcalloc(n + 1, sizeof(bool));
        unsigned raised = 0;
        for (size_t i = 0; i < n; i++) {
                const struct eviction_threshold *t = &s->cfg.thresholds[i];
                if (!obs[t->signal].ok)
                        LOG_INFO(4, "Eviction manager: no observation found for eviction signal",
                                 "signal=\"%s\"", signals[t->signal].name);
                /* met now, or met before and not yet reclaimed to the
                 * threshold plus its minimum reclaim */
                now_met[i] = met(t, obs, false) || (s->met_before[i] && met(t, obs, true));
                if (!now_met[i]) {
                        s->first_observed_ms[i] = NEVER;
                        continue;
                }
                if (s->first_observed_ms[i] == NEVER)
                        s->first_observed_ms[i] = now_ms;
                raised |= signals[t->signal].condition;
        }
        /* conditions: raised now, or within the transition period */
        unsigned reported = 0;
        for (unsigned bit = 1; bit <= EVICTION_PID_PRESSURE; bit <<= 1) {
                int c = cond_index(bit);
                if (raised & bit)
                        s->cond_last_ms[c] = now_ms;
                if (s->cond_last_ms[c] != NEVER &&
                    now_ms - s->cond_last_ms[c] < s->cfg.pressure_transition_ms)
                        reported |= bit;
        }
        /* actionable: met for their grace period; then only those whose
         * stats are new (upstream thresholdsUpdatedStats) */
        out->conditions = reported;
        out->threshold = -1;
        out->hard = false;
        for (size_t i = 0; i < n; i++) {
                const struct eviction_threshold *t = &s->cfg.thresholds[i];
                bool actionable =
                    now_met[i] && now_ms - s->first_observed_ms[i] >= t->grace_period_ms;
                s->met_before[i] = actionable;
                if (!actionable)
                        continue;
                const struct eviction_observation *o = &obs[t->signal];
                bool fresh = s->last_obs_ns[t->signal] == 0 || o->time_ns == 0 ||
                             o->time_ns > s->last_obs_ns[t->signal];
                if (!fresh)
                        continue;
                /* memory signals first, then the configuration's order */
                if (out->threshold < 0 || (is_memory(t->signal) &&
                                           !is_memory(s->cfg.thresholds[out->threshold].signal))) {
                        out->threshold = (int)i;
                        out->hard = t->grace_period_ms == 0;
                }
        }
        for (int i = 0; i < EVICTION_N_SIGNALS; i++)
                if (obs[i].ok)
                        s->last_obs_ns[i] = obs[i].time_ns;
        free(now_met);
}
