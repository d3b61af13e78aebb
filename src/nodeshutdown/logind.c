/* SPDX-License-Identifier: Apache-2.0 */
/* The node shutdown manager's logind client (upstream
 * nodeshutdown/systemd/inhibit_linux.go), over sd-bus on the system bus. */
#include "nodeshutdown/nodeshutdown.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/sdbus.h"
#include "util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SYSTEM_BUS_ADDRESS "unix:path=/run/dbus/system_bus_socket"
#define LOGIND_DEST "org.freedesktop.login1"
#define LOGIND_PATH "/org/freedesktop/login1"
#define LOGIND_MANAGER "org.freedesktop.login1.Manager"

static const struct sdbus_api *sdb;

struct logind {
        sd_bus *bus;
        sd_bus_slot *watch;
        /* the signals received, oldest first (a shutdown then its
         * cancellation may come in one read) */
        bool events[8];
        size_t n_events;
};

int logind_open(const char *address, struct logind **out, ck_error_t *err)
{
        *out = NULL;
        if (sdb == NULL && (sdb = sdbus_load(err)) == NULL)
                return ck_error_wrap(err, "node shutdown manager");
        if (address == NULL)
                address = getenv("DBUS_SYSTEM_BUS_ADDRESS");
        if (address == NULL || *address == '\0')
                address = SYSTEM_BUS_ADDRESS;
        struct logind *l = xcalloc(1, sizeof(*l));
        int r = sdb->bus_new(&l->bus);
        if (r >= 0)
                r = sdb->bus_set_address(l->bus, address);
        if (r >= 0)
                r = sdb->bus_set_bus_client(l->bus, 1);
        if (r >= 0)
                r = sdb->bus_start(l->bus);
        if (r < 0) {
                logind_close(l);
                return ck_error_make(err, -r, "connect to the system bus at %s", address);
        }
        *out = l;
        return 0;
}

void logind_close(struct logind *l)
{
        if (l == NULL)
                return;
        sdb->bus_slot_unref(l->watch);
        sdb->bus_flush_close_unref(l->bus);
        free(l);
}

static int call_error(int r, sd_bus_error *e, const char *what, ck_error_t *err)
{
        ck_error_make(err, e->message ? 0 : -r, "%s%s%s", what, e->message ? ": " : "",
                      e->message ? e->message : "");
        sdb->error_free(e);
        return -1;
}

int logind_inhibit_delay_max(struct logind *l, uint64_t *usec, ck_error_t *err)
{
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int r = sdb->bus_get_property_trivial(l->bus, LOGIND_DEST, LOGIND_PATH, LOGIND_MANAGER,
                                              "InhibitDelayMaxUSec", &e, 't', usec);
        if (r < 0)
                return call_error(r, &e, "failed reading InhibitDelayMaxUSec property from logind",
                                  err);
        return 0;
}

int logind_inhibit(struct logind *l, int *fd, ck_error_t *err)
{
        *fd = -1;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        int r = sdb->bus_call_method(l->bus, LOGIND_DEST, LOGIND_PATH, LOGIND_MANAGER, "Inhibit",
                                     &e, &reply, "ssss", "shutdown", "kubelet",
                                     "Kubelet needs time to handle node shutdown", "delay");
        if (r < 0)
                return call_error(r, &e, "failed creating systemd inhibitor", err);
        int lock = -1;
        r = sdb->message_read(reply, "h", &lock);
        /* the message owns its fd: the lock is a copy, closed by the caller */
        int own = r >= 0 ? fcntl(lock, F_DUPFD_CLOEXEC, 3) : -1;
        int saved = errno;
        sdb->message_unref(reply);
        if (r < 0)
                return ck_error_make(err, -r, "failed storing inhibit lock file descriptor");
        if (own < 0)
                return ck_error_make(err, saved, "failed storing inhibit lock file descriptor");
        *fd = own;
        return 0;
}

int logind_reload(struct logind *l, ck_error_t *err)
{
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int r =
            sdb->bus_call_method(l->bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                 "org.freedesktop.systemd1.Manager", "KillUnit", &e, NULL, "ssi",
                                 "systemd-logind.service", "all", (int32_t)SIGHUP);
        if (r < 0)
                return call_error(r, &e, "unable to reload logind conf", err);
        return 0;
}

static int on_prepare(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        (void)ret_error;
        struct logind *l = userdata;
        int active = 0;
        if (sdb->message_read(m, "b", &active) < 0) {
                LOG_ERROR("Failed obtaining shutdown event, PrepareForShutdown event was not bool "
                          "type as expected");
                return 0;
        }
        if (l->n_events == sizeof(l->events) / sizeof(l->events[0])) {
                /* only the last ones matter: drop the oldest */
                memmove(l->events, l->events + 1, (l->n_events - 1) * sizeof(l->events[0]));
                l->n_events--;
        }
        l->events[l->n_events++] = active != 0;
        return 0;
}

int logind_watch(struct logind *l, ck_error_t *err)
{
        /* upstream matches interface, member and path, not the sender */
        int r = sdb->bus_match_signal(l->bus, &l->watch, NULL, LOGIND_PATH, LOGIND_MANAGER,
                                      "PrepareForShutdown", on_prepare, l);
        if (r < 0)
                return ck_error_make(err, -r, "failed to monitor shutdown");
        return 0;
}

int logind_next(struct logind *l, int wake_fd, int64_t timeout_ms, bool *active, ck_error_t *err)
{
        int64_t deadline = timeout_ms < 0 ? -1 : fs_now_mono_ms() + timeout_ms;
        for (;;) {
                if (l->n_events > 0) {
                        *active = l->events[0];
                        memmove(l->events, l->events + 1, (l->n_events - 1) * sizeof(l->events[0]));
                        l->n_events--;
                        return 1;
                }
                int r = sdb->bus_process(l->bus, NULL);
                if (r < 0)
                        return ck_error_make(err, -r, "the system bus connection ended");
                if (r > 0)
                        continue;
                struct pollfd p[2] = {{.fd = sdb->bus_get_fd(l->bus)}, {.fd = wake_fd}};
                int events = sdb->bus_get_events(l->bus);
                if (p[0].fd < 0 || events < 0)
                        return ck_error_make(err, p[0].fd < 0 ? -p[0].fd : -events,
                                             "the system bus connection ended");
                p[0].events = (short)events;
                p[1].events = POLLIN;
                int64_t wait = deadline < 0 ? -1 : deadline - fs_now_mono_ms();
                if (deadline >= 0 && wait <= 0)
                        return 0;
                uint64_t bus_usec;
                if (sdb->bus_get_timeout(l->bus, &bus_usec) > 0 && bus_usec != UINT64_MAX) {
                        uint64_t now = (uint64_t)fs_now_mono_us();
                        int64_t bus_ms =
                            bus_usec > now ? (int64_t)((bus_usec - now + 999) / 1000) : 0;
                        if (wait < 0 || bus_ms < wait)
                                wait = bus_ms;
                }
                int n = poll(p, wake_fd >= 0 ? 2 : 1, wait > INT32_MAX ? INT32_MAX : (int)wait);
                if (n < 0 && errno != EINTR)
                        return ck_error_make(err, errno, "poll the system bus");
                if (n > 0 && wake_fd >= 0 && (p[1].revents & POLLIN))
                        return 0;
        }
}
