/* SPDX-License-Identifier: Apache-2.0 */
/* The shutdown periods and groups (upstream nodeshutdown_manager.go:
 * newPodManager, migrateConfig, groupByPriority, periodRequested) and the
 * manager's files (systemd/inhibit_linux.go OverrideInhibitDelay,
 * storage.go). */
#include "nodeshutdown/nodeshutdown.h"
#include "api/pod.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/gotime.h"
#include "util/xalloc.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* upstream scheduling.SystemCriticalPriority */

static int by_priority(const void *a, const void *b)
{
        const struct shutdown_period *x = a, *y = b;
        return (x->priority > y->priority) - (x->priority < y->priority);
}

size_t nodeshutdown_periods(int64_t grace_ms, int64_t critical_ms,
                            const struct shutdown_period *by_priority_list, size_t n_by_priority,
                            struct shutdown_period **out)
{
        *out = NULL;
        size_t n = n_by_priority;
        struct shutdown_period *p;
        if (n > 0) {
                p = xcalloc(n, sizeof(*p));
                memcpy(p, by_priority_list, n * sizeof(*p));
        } else {
                if (grace_ms == 0 || grace_ms < critical_ms)
                        return 0;
                n = 2;
                p = xcalloc(n, sizeof(*p));
                /* Go's int64(duration / time.Second): truncated */
                p[0] = (struct shutdown_period){0, (grace_ms - critical_ms) / 1000};
                p[1] = (struct shutdown_period){POD_SYSTEM_CRITICAL_PRIORITY, critical_ms / 1000};
        }
        qsort(p, n, sizeof(*p), by_priority);
        *out = p;
        return n;
}

int64_t nodeshutdown_period_requested(const struct shutdown_period *p, size_t n)
{
        int64_t sum = 0;
        for (size_t i = 0; i < n; i++)
                sum += p[i].grace_s;
        return sum;
}

size_t nodeshutdown_group_of(const struct shutdown_period *p, size_t n, int32_t priority)
{
        /* upstream: sort.Search for the first period not below the
         * priority; the last when none is; the one before when it is above
         * (equal priorities: the first of them) */
        size_t i = 0;
        while (i < n && p[i].priority < priority)
                i++;
        if (i == n)
                return n - 1;
        if (i > 0 && p[i].priority > priority)
                i--;
        return i;
}

int64_t nodeshutdown_pod_grace(int64_t group_grace_s, int64_t pod_grace_s)
{
        return pod_grace_s >= 0 && pod_grace_s <= group_grace_s ? pod_grace_s : group_grace_s;
}

int nodeshutdown_write_logind_dropin(const char *dir, int64_t seconds, ck_error_t *err)
{
        if (fs_mkdir_p(dir, 0755, err) < 0)
                return ck_error_wrap(err, "failed creating %s directory", dir);
        cleanup_free char *text = xasprintf("# Kubelet logind override\n[Login]\n"
                                            "InhibitDelayMaxSec=%lld\n",
                                            (long long)seconds);
        cleanup_free char *path = xasprintf("%s/%s", dir, NODESHUTDOWN_LOGIND_DROPIN);
        if (fs_write_file_atomic(path, text, strlen(text), 0644, err) < 0)
                return ck_error_wrap(err, "failed writing logind shutdown inhibit override file %s",
                                     path);
        return 0;
}

/* Go's time.Time JSON (RFC3339Nano, UTC here); 0: the zero time */
static json_t *time_json(int64_t ns)
{
        if (ns == 0)
                return json_string("0001-01-01T00:00:00Z");
        struct go_time t = {.sec = ns / 1000000000, .nsec = (int32_t)(ns % 1000000000)};
        char buf[GO_TIME_BUF];
        size_t len = go_time_format(&t, buf);
        /* RFC3339Nano drops the fraction's trailing zeros (and an all-zero
         * fraction with its dot) */
        char *dot = strchr(buf, '.');
        char *z = buf + len - 1; /* 'Z' */
        if (dot != NULL && *z == 'Z') {
                char *end = z;
                while (end > dot + 1 && end[-1] == '0')
                        end--;
                if (end == dot + 1)
                        end = dot;
                memmove(end, z, 2);
        }
        return json_string(buf);
}

char *nodeshutdown_state_format(int64_t start_ns, int64_t end_ns)
{
        json_t *doc =
            json_pack("{s:o, s:o}", "startTime", time_json(start_ns), "endTime", time_json(end_ns));
        char *text = json_dumps(doc, JSON_COMPACT);
        json_decref(doc);
        return text;
}

int nodeshutdown_state_store(const char *path, int64_t start_ns, int64_t end_ns, ck_error_t *err)
{
        cleanup_free char *text = nodeshutdown_state_format(start_ns, end_ns);
        if (fs_write_file_atomic(path, text, strlen(text), 0644, err) < 0)
                return ck_error_wrap(err, "failed to store graceful shutdown state");
        return 0;
}

static bool time_of(json_t *v, int64_t *ns)
{
        const char *s = json_string_value(v);
        struct go_time t;
        if (s == NULL || !go_time_parse(s, strlen(s), &t))
                return false;
        if (t.sec <= GO_ZERO_TIME_SEC) {
                *ns = 0; /* Go's zero time: unset */
                return true;
        }
        /* what ns since the epoch hold (1970 .. 2262), 0 itself excepted */
        if (t.sec < 0 || t.sec > INT64_MAX / 1000000000 - 1 || (t.sec == 0 && t.nsec == 0))
                return false;
        *ns = t.sec * 1000000000 + t.nsec;
        return true;
}

int nodeshutdown_state_parse(const char *text, size_t len, int64_t *start_ns, int64_t *end_ns)
{
        *start_ns = *end_ns = 0;
        json_error_t je;
        json_t *doc = json_loadb(text, len, 0, &je);
        bool ok = json_is_object(doc);
        json_t *start = json_object_get(doc, "startTime"), *end = json_object_get(doc, "endTime");
        ok = ok && (start == NULL || time_of(start, start_ns)) &&
             (end == NULL || time_of(end, end_ns));
        json_decref(doc);
        if (!ok)
                *start_ns = *end_ns = 0;
        return ok ? 0 : -1;
}

int nodeshutdown_state_load(const char *path, int64_t *start_ns, int64_t *end_ns, ck_error_t *err)
{
        *start_ns = *end_ns = 0;
        cleanup_free char *text = NULL;
        size_t len = 0;
        cleanup_error ck_error_t rerr = NULL;
        if (fs_read_file(path, 1 << 16, &text, &len, &rerr) < 0) {
                if (rerr->status == ENOENT)
                        return 0;
                return ck_error_make(err, 0, "failed to load graceful shutdown state: %s",
                                     ck_error_msg(rerr));
        }
        if (nodeshutdown_state_parse(text, len, start_ns, end_ns) < 0)
                return ck_error_make(err, 0,
                                     "failed to load graceful shutdown state: %s: not a state "
                                     "({\"startTime\":...,\"endTime\":...})",
                                     path);
        return 0;
}
