/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A fake of systemd's D-Bus API for the systemd cgroup driver's unit tests
 * (src/cm/systemd.c): org.freedesktop.systemd1.Manager's Subscribe,
 * StartTransientUnit, SetUnitProperties and StopUnit on a unix socket, in a
 * thread of its own.  It answers as systemd does (a job path, then the
 * JobRemoved signal with "done"; UnitExists for a unit it runs, NoSuchUnit
 * for one it does not), makes a started slice's directory in the fake
 * cgroup tree (systemd makes the cgroup), and records each call as a line
 * ("start kubepods.slice Wants=-.slice CPUWeight=39 ..."; "set ..."; "stop ...").
 */
#ifndef CK_TEST_FAKE_SYSTEMD_H
#define CK_TEST_FAKE_SYSTEMD_H

#include "util/cleanup.h"
#include "util/xalloc.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

struct fake_systemd {
        char *dir;     /* the socket's directory */
        char *address; /* "unix:path=<dir>/private" */
        const char *cgroupfs_root;
        int listen_fd;
        pthread_t thread;
        atomic_bool stop;
        pthread_mutex_t lock;
        char *calls; /* one line per call */
        char *units[64];
        size_t n_units;
        unsigned jobs;
        bool fail_start;  /* answer StartTransientUnit with an error */
        atomic_bool drop; /* close the connection (systemd re-executed) */
};

static void fake_systemd_record(struct fake_systemd *f, const char *line)
{
        pthread_mutex_lock(&f->lock);
        char *old = f->calls;
        f->calls = xasprintf("%s%s\n", old ? old : "", line);
        free(old);
        pthread_mutex_unlock(&f->lock);
}

/* Reads an a(sv) of the properties the driver sends into " Name=value ...". */
static int fake_systemd_props(sd_bus_message *m, char **out)
{
        char *s = xstrdup("");
        int r = sd_bus_message_enter_container(m, 'a', "(sv)");
        while (r >= 0 && (r = sd_bus_message_enter_container(m, 'r', "sv")) > 0) {
                const char *name, *contents;
                char type;
                char value[256] = "";
                r = sd_bus_message_read(m, "s", &name);
                if (r >= 0)
                        r = sd_bus_message_peek_type(m, &type, &contents);
                if (r >= 0)
                        r = sd_bus_message_enter_container(m, 'v', contents);
                if (r >= 0 && strcmp(contents, "t") == 0) {
                        uint64_t v;
                        r = sd_bus_message_read(m, "t", &v);
                        if (v == UINT64_MAX)
                                snprintf(value, sizeof(value), "infinity");
                        else
                                snprintf(value, sizeof(value), "%llu", (unsigned long long)v);
                } else if (r >= 0 && strcmp(contents, "b") == 0) {
                        int v;
                        r = sd_bus_message_read(m, "b", &v);
                        snprintf(value, sizeof(value), "%s", v ? "yes" : "no");
                } else if (r >= 0 && strcmp(contents, "s") == 0) {
                        const char *v;
                        r = sd_bus_message_read(m, "s", &v);
                        snprintf(value, sizeof(value), "\"%s\"", v);
                } else if (r >= 0 && strcmp(contents, "as") == 0) {
                        const char *v;
                        r = sd_bus_message_enter_container(m, 'a', "s");
                        while (r >= 0 && (r = sd_bus_message_read(m, "s", &v)) > 0)
                                snprintf(value + strlen(value), sizeof(value) - strlen(value),
                                         "%s%s", *value ? "," : "", v);
                        if (r >= 0)
                                r = sd_bus_message_exit_container(m);
                } else if (r >= 0) {
                        r = -EINVAL;
                }
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
                if (r >= 0 && strcmp(name, "Description") != 0) {
                        char *old = s;
                        s = xasprintf("%s %s=%s", old, name, value);
                        free(old);
                }
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        if (r < 0) {
                free(s);
                return r;
        }
        *out = s;
        return 0;
}

static ssize_t fake_systemd_find(struct fake_systemd *f, const char *unit)
{
        for (size_t i = 0; i < f->n_units; i++)
                if (strcmp(f->units[i], unit) == 0)
                        return (ssize_t)i;
        return -1;
}

/* Replies with a new job's path and signals its removal with "done". */
static int fake_systemd_job(struct fake_systemd *f, sd_bus_message *m, const char *unit)
{
        unsigned id = ++f->jobs;
        char path[64];
        snprintf(path, sizeof(path), "/org/freedesktop/systemd1/job/%u", id);
        int r = sd_bus_reply_method_return(m, "o", path);
        if (r < 0)
                return r;
        return sd_bus_emit_signal(sd_bus_message_get_bus(m), "/org/freedesktop/systemd1",
                                  "org.freedesktop.systemd1.Manager", "JobRemoved", "uoss", id,
                                  path, unit, "done");
}

/* The slice's directory, as systemd names it: a-b.slice under a.slice. */
static void fake_systemd_mkdir(struct fake_systemd *f, const char *unit)
{
        char path[4096];
        size_t n = (size_t)snprintf(path, sizeof(path), "%s", f->cgroupfs_root);
        const char *stem_end = strstr(unit, ".slice");
        for (const char *p = unit; p <= stem_end; p++) {
                if (*p != '-' && p != stem_end)
                        continue;
                n += (size_t)snprintf(path + n, sizeof(path) - n, "/%.*s.slice", (int)(p - unit),
                                      unit);
                mkdir(path, 0755);
        }
}

static int fake_systemd_start(sd_bus_message *m, void *userdata, sd_bus_error *e)
{
        struct fake_systemd *f = userdata;
        const char *unit, *mode;
        cleanup_free char *props = NULL;
        int r = sd_bus_message_read(m, "ss", &unit, &mode);
        if (r >= 0)
                r = fake_systemd_props(m, &props);
        if (r < 0)
                return r;
        char line[1024];
        snprintf(line, sizeof(line), "start %s%s", unit, props);
        fake_systemd_record(f, line);
        if (f->fail_start)
                return sd_bus_error_set(e, "org.freedesktop.systemd1.Fake", "no slices today");
        if (fake_systemd_find(f, unit) >= 0)
                return sd_bus_error_setf(e, "org.freedesktop.systemd1.UnitExists",
                                         "Unit %s already exists.", unit);
        f->units[f->n_units++] = xstrdup(unit);
        fake_systemd_mkdir(f, unit);
        return fake_systemd_job(f, m, unit);
}

static int fake_systemd_set(sd_bus_message *m, void *userdata, sd_bus_error *e)
{
        (void)e;
        struct fake_systemd *f = userdata;
        const char *unit;
        int runtime;
        cleanup_free char *props = NULL;
        int r = sd_bus_message_read(m, "sb", &unit, &runtime);
        if (r >= 0)
                r = fake_systemd_props(m, &props);
        if (r < 0)
                return r;
        char line[1024];
        snprintf(line, sizeof(line), "set %s%s%s", unit, runtime ? " (runtime)" : "", props);
        fake_systemd_record(f, line);
        return sd_bus_reply_method_return(m, "");
}

static int fake_systemd_stop(sd_bus_message *m, void *userdata, sd_bus_error *e)
{
        struct fake_systemd *f = userdata;
        const char *unit, *mode;
        int r = sd_bus_message_read(m, "ss", &unit, &mode);
        if (r < 0)
                return r;
        char line[512];
        snprintf(line, sizeof(line), "stop %s", unit);
        fake_systemd_record(f, line);
        ssize_t i = fake_systemd_find(f, unit);
        if (i < 0)
                return sd_bus_error_setf(e, "org.freedesktop.systemd1.NoSuchUnit",
                                         "Unit %s not loaded.", unit);
        free(f->units[i]);
        f->units[i] = f->units[--f->n_units];
        return fake_systemd_job(f, m, unit);
}

static int fake_systemd_subscribe(sd_bus_message *m, void *userdata, sd_bus_error *e)
{
        (void)userdata;
        (void)e;
        return sd_bus_reply_method_return(m, "");
}

static const sd_bus_vtable fake_systemd_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD("Subscribe", "", "", fake_systemd_subscribe, 0),
    SD_BUS_METHOD("StartTransientUnit", "ssa(sv)a(sa(sv))", "o", fake_systemd_start, 0),
    SD_BUS_METHOD("SetUnitProperties", "sba(sv)", "", fake_systemd_set, 0),
    SD_BUS_METHOD("StopUnit", "ss", "o", fake_systemd_stop, 0),
    SD_BUS_SIGNAL("JobRemoved", "uoss", 0),
    SD_BUS_VTABLE_END,
};

static void *fake_systemd_run(void *arg)
{
        struct fake_systemd *f = arg;
        while (!atomic_load(&f->stop)) {
                struct timeval tv = {0, 100000};
                fd_set rfds;
                FD_ZERO(&rfds);
                FD_SET(f->listen_fd, &rfds);
                if (select(f->listen_fd + 1, &rfds, NULL, NULL, &tv) <= 0)
                        continue;
                int fd = accept4(f->listen_fd, NULL, NULL, SOCK_CLOEXEC);
                if (fd < 0)
                        continue;
                sd_bus *bus = NULL;
                sd_id128_t id;
                sd_id128_randomize(&id);
                sd_bus_slot *slot = NULL;
                if (sd_bus_new(&bus) < 0 || sd_bus_set_fd(bus, fd, fd) < 0 ||
                    sd_bus_set_server(bus, 1, id) < 0 ||
                    sd_bus_add_object_vtable(bus, &slot, "/org/freedesktop/systemd1",
                                             "org.freedesktop.systemd1.Manager",
                                             fake_systemd_vtable, f) < 0 ||
                    sd_bus_start(bus) < 0) {
                        sd_bus_unref(bus);
                        close(fd);
                        continue;
                }
                while (!atomic_load(&f->stop)) {
                        if (atomic_exchange(&f->drop, false))
                                break;
                        int r = sd_bus_process(bus, NULL);
                        if (r < 0)
                                break;
                        if (r == 0 && sd_bus_wait(bus, 100000) < 0)
                                break;
                }
                sd_bus_slot_unref(slot);
                sd_bus_flush_close_unref(bus);
        }
        return NULL;
}

static struct fake_systemd *fake_systemd_start_server(const char *cgroupfs_root)
{
        struct fake_systemd *f = xcalloc(1, sizeof(*f));
        f->dir = xstrdup("/tmp/ck-fake-systemd-XXXXXX");
        if (mkdtemp(f->dir) == NULL)
                abort();
        f->cgroupfs_root = cgroupfs_root;
        pthread_mutex_init(&f->lock, NULL);
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/private", f->dir);
        f->address = xasprintf("unix:path=%s", sa.sun_path);
        f->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (f->listen_fd < 0 || bind(f->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
            listen(f->listen_fd, 4) < 0)
                abort();
        pthread_create(&f->thread, NULL, fake_systemd_run, f);
        return f;
}

/* The calls recorded so far (new string), and forgets them. */
static char *fake_systemd_take_calls(struct fake_systemd *f)
{
        pthread_mutex_lock(&f->lock);
        char *calls = f->calls ? f->calls : xstrdup("");
        f->calls = NULL;
        pthread_mutex_unlock(&f->lock);
        return calls;
}

static void fake_systemd_free(struct fake_systemd *f)
{
        atomic_store(&f->stop, true);
        pthread_join(f->thread, NULL);
        close(f->listen_fd);
        cleanup_free char *sock = xasprintf("%s/private", f->dir);
        unlink(sock);
        rmdir(f->dir);
        for (size_t i = 0; i < f->n_units; i++)
                free(f->units[i]);
        free(f->calls);
        free(f->address);
        free(f->dir);
        pthread_mutex_destroy(&f->lock);
        free(f);
}

#endif
