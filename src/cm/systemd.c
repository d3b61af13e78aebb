/* SPDX-License-Identifier: Apache-2.0 */
/* The systemd driver's D-Bus calls (runc libcontainer/cgroups/systemd:
 * startUnit, stopUnit, setUnitProperties, and the properties genV1/V2
 * ResourcesProperties derive from the resources), over sd-bus. */
#include "cm/systemd.h"
#include "cm/cm.h"
#include "util/sdbus.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

#define SYSTEMD_PRIVATE_ADDRESS "unix:path=/run/systemd/private"
#define SD_DEST "org.freedesktop.systemd1"
#define SD_PATH "/org/freedesktop/systemd1"
#define SD_MANAGER "org.freedesktop.systemd1.Manager"
#define JOB_TIMEOUT_USEC (30ULL * 1000 * 1000)
#define UNLIMITED UINT64_MAX

/* sd-bus, loaded by the first cm_systemd_open */
static const struct sdbus_api *sdb;

struct cm_systemd {
        char *address;
        sd_bus *bus;
        sd_bus_slot *job_removed;
        bool v2;
        /* the job being waited for, and its result once removed */
        const char *wait_job;
        char *result;
};

static int on_job_removed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        (void)ret_error;
        struct cm_systemd *sd = userdata;
        uint32_t id;
        const char *job, *unit, *result;
        if (sdb->message_read(m, "uoss", &id, &job, &unit, &result) < 0)
                return 0;
        if (sd->wait_job && strcmp(job, sd->wait_job) == 0 && sd->result == NULL)
                sd->result = xstrdup(result);
        return 0;
}

static void disconnect(struct cm_systemd *sd)
{
        sd->job_removed = sdb->bus_slot_unref(sd->job_removed);
        sd->bus = sdb->bus_flush_close_unref(sd->bus);
}

/* Connects (again: systemd's daemon-reexec or restart closes the
 * connection; runc reconnects too) and subscribes to the job signals. */
static int connect_bus(struct cm_systemd *sd, ck_error_t *err)
{
        if (sd->bus != NULL) {
                /* what came meanwhile (old job signals; the end of the
                 * connection, which marks the bus closed) */
                while (sdb->bus_process(sd->bus, NULL) > 0)
                        ;
                if (sdb->bus_is_open(sd->bus) > 0)
                        return 0;
                LOG_INFO(2, "Reconnecting to systemd", "address=\"%s\"", sd->address);
        }
        disconnect(sd);
        int r = sdb->bus_new(&sd->bus);
        if (r >= 0)
                r = sdb->bus_set_address(sd->bus, sd->address);
        if (r >= 0)
                r = sdb->bus_start(sd->bus);
        if (r < 0) {
                disconnect(sd);
                return ck_error_make(err, -r,
                                     "connect to systemd at %s (is systemd the init system?): %s",
                                     sd->address, strerror(-r));
        }
        r = sdb->bus_match_signal(sd->bus, &sd->job_removed, NULL, SD_PATH, SD_MANAGER,
                                  "JobRemoved", on_job_removed, sd);
        sd_bus_error e = SD_BUS_ERROR_NULL;
        if (r >= 0)
                r = sdb->bus_call_method(sd->bus, SD_DEST, SD_PATH, SD_MANAGER, "Subscribe", &e,
                                         NULL, "");
        if (r < 0) {
                ck_error_make(err, -r, "subscribe to systemd's job signals: %s",
                              e.message ? e.message : strerror(-r));
                sdb->error_free(&e);
                disconnect(sd);
                return -1;
        }
        return 0;
}

int cm_systemd_open(const char *address, bool v2, struct cm_systemd **out, ck_error_t *err)
{
        if (sdb == NULL && (sdb = sdbus_load(err)) == NULL)
                return ck_error_wrap(err, "cgroup driver systemd");
        struct cm_systemd *sd = xcalloc(1, sizeof(*sd));
        sd->address = xstrdup(address ? address : SYSTEMD_PRIVATE_ADDRESS);
        sd->v2 = v2;
        if (connect_bus(sd, err) < 0) {
                cm_systemd_close(sd);
                return -1;
        }
        *out = sd;
        return 0;
}

void cm_systemd_close(struct cm_systemd *sd)
{
        if (sd == NULL)
                return;
        disconnect(sd);
        free(sd->result);
        free(sd->address);
        free(sd);
}

/* Reads the job path of reply and waits for its JobRemoved signal. */
static int wait_job(struct cm_systemd *sd, sd_bus_message *reply, const char *what,
                    const char *unit, ck_error_t *err)
{
        const char *job;
        int r = sdb->message_read(reply, "o", &job);
        if (r < 0)
                return ck_error_make(err, -r, "%s %s: bad reply: %s", what, unit, strerror(-r));
        sd->wait_job = job;
        free(sd->result);
        sd->result = NULL;
        uint64_t deadline = (uint64_t)fs_now_mono_us() + JOB_TIMEOUT_USEC;
        while (sd->result == NULL) {
                r = sdb->bus_process(sd->bus, NULL);
                if (r < 0)
                        break;
                if (r > 0)
                        continue;
                uint64_t now = (uint64_t)fs_now_mono_us();
                if (now >= deadline) {
                        r = -ETIMEDOUT;
                        break;
                }
                r = sdb->bus_wait(sd->bus, deadline - now);
                if (r < 0)
                        break;
        }
        sd->wait_job = NULL;
        if (sd->result == NULL)
                return ck_error_make(err, -r, "%s %s: waiting for systemd's job: %s", what, unit,
                                     r == -ETIMEDOUT ? "timed out after 30s" : strerror(-r));
        if (strcmp(sd->result, "done") != 0)
                return ck_error_make(err, 0, "%s %s: systemd's job ended \"%s\"", what, unit,
                                     sd->result);
        return 0;
}

/* runc's rounding of the quota: systemd keeps CPUQuotaPerSecUSec in 10 ms
 * steps, so a value between steps is rounded up. */
static uint64_t quota_per_sec(int64_t quota, uint64_t period)
{
        if (quota <= 0 || period == 0)
                return UNLIMITED;
        uint64_t v = (uint64_t)quota * 1000000 / period;
        if (v % 10000 != 0)
                v = (v / 10000 + 1) * 10000;
        return v;
}

static int append_resources(struct cm_systemd *sd, sd_bus_message *m,
                            const struct cgroup_resources *res)
{
        int r = 0;
        if (res->has_cpu_shares)
                r = sd->v2 ? sdb->message_append(m, "(sv)", "CPUWeight", "t",
                                                 cm_cpu_shares_to_weight(res->cpu_shares))
                           : sdb->message_append(m, "(sv)", "CPUShares", "t", res->cpu_shares);
        if (r >= 0 && res->has_cpu_quota) {
                r = sdb->message_append(m, "(sv)", "CPUQuotaPerSecUSec", "t",
                                        quota_per_sec(res->cpu_quota, res->cpu_period));
                if (r >= 0 && res->cpu_period > 0)
                        r = sdb->message_append(m, "(sv)", "CPUQuotaPeriodUSec", "t",
                                                res->cpu_period);
        }
        if (r >= 0 && res->has_memory)
                r = sdb->message_append(m, "(sv)", sd->v2 ? "MemoryMax" : "MemoryLimit", "t",
                                        res->memory > 0 ? (uint64_t)res->memory : UNLIMITED);
        if (r >= 0 && res->has_pids_limit)
                r = sdb->message_append(m, "(sv)", "TasksMax", "t",
                                        res->pids_limit > 0 ? (uint64_t)res->pids_limit
                                                            : UNLIMITED);
        return r;
}

static int call_failed(int r, sd_bus_error *e, const char *what, const char *unit, ck_error_t *err)
{
        ck_error_make(err, -r, "%s %s: %s", what, unit, e->message ? e->message : strerror(-r));
        sdb->error_free(e);
        return -1;
}

int cm_systemd_start_slice(struct cm_systemd *sd, const char *unit, const char *parent,
                           const struct cgroup_resources *res, ck_error_t *err)
{
        if (connect_bus(sd, err) < 0)
                return -1;
        sd_bus_message *m = NULL, *reply = NULL;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int r = sdb->message_new_method_call(sd->bus, &m, SD_DEST, SD_PATH, SD_MANAGER,
                                             "StartTransientUnit");
        if (r >= 0)
                r = sdb->message_append(m, "ss", unit, "replace");
        if (r >= 0)
                r = sdb->message_open_container(m, 'a', "(sv)");
        if (r >= 0)
                r = sdb->message_append(m, "(sv)(sv)(sv)", "Description", "s",
                                        "ckubelet pod or QoS cgroup", "Wants", "as", 1, parent,
                                        "DefaultDependencies", "b", 0);
        if (r >= 0)
                r = sdb->message_append(m, "(sv)(sv)(sv)(sv)", "MemoryAccounting", "b", 1,
                                        "CPUAccounting", "b", 1, "TasksAccounting", "b", 1,
                                        sd->v2 ? "IOAccounting" : "BlockIOAccounting", "b", 1);
        if (r >= 0)
                r = append_resources(sd, m, res);
        if (r >= 0)
                r = sdb->message_close_container(m);
        if (r >= 0)
                r = sdb->message_append(m, "a(sa(sv))", 0);
        if (r < 0) {
                sdb->message_unref(m);
                return ck_error_make(err, -r, "start %s: build the call: %s", unit, strerror(-r));
        }
        r = sdb->bus_call(sd->bus, m, JOB_TIMEOUT_USEC, &e, &reply);
        sdb->message_unref(m);
        if (r < 0 && sdb->error_has_name(&e, "org.freedesktop.systemd1.UnitExists")) {
                /* runc: a unit that exists is fine; it gets the values */
                sdb->error_free(&e);
                return cm_systemd_set(sd, unit, res, err);
        }
        if (r < 0)
                return call_failed(r, &e, "start", unit, err);
        r = wait_job(sd, reply, "start", unit, err);
        sdb->message_unref(reply);
        return r;
}

int cm_systemd_set(struct cm_systemd *sd, const char *unit, const struct cgroup_resources *res,
                   ck_error_t *err)
{
        if (!res->has_cpu_shares && !res->has_cpu_quota && !res->has_memory && !res->has_pids_limit)
                return 0;
        if (connect_bus(sd, err) < 0)
                return -1;
        sd_bus_message *m = NULL;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int r = sdb->message_new_method_call(sd->bus, &m, SD_DEST, SD_PATH, SD_MANAGER,
                                             "SetUnitProperties");
        if (r >= 0)
                r = sdb->message_append(m, "sb", unit, 1);
        if (r >= 0)
                r = sdb->message_open_container(m, 'a', "(sv)");
        if (r >= 0)
                r = append_resources(sd, m, res);
        if (r >= 0)
                r = sdb->message_close_container(m);
        if (r < 0) {
                sdb->message_unref(m);
                return ck_error_make(err, -r, "set properties of %s: build the call: %s", unit,
                                     strerror(-r));
        }
        r = sdb->bus_call(sd->bus, m, JOB_TIMEOUT_USEC, &e, NULL);
        sdb->message_unref(m);
        if (r < 0)
                return call_failed(r, &e, "set properties of", unit, err);
        return 0;
}

int cm_systemd_stop(struct cm_systemd *sd, const char *unit, ck_error_t *err)
{
        if (connect_bus(sd, err) < 0)
                return -1;
        sd_bus_message *reply = NULL;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int r = sdb->bus_call_method(sd->bus, SD_DEST, SD_PATH, SD_MANAGER, "StopUnit", &e, &reply,
                                     "ss", unit, "replace");
        if (r < 0 && sdb->error_has_name(&e, "org.freedesktop.systemd1.NoSuchUnit")) {
                sdb->error_free(&e);
                return 0;
        }
        if (r < 0)
                return call_failed(r, &e, "stop", unit, err);
        r = wait_job(sd, reply, "stop", unit, err);
        sdb->message_unref(reply);
        return r;
}
