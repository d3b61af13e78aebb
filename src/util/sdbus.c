/* SPDX-License-Identifier: Apache-2.0 */
#include "util/sdbus.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define LIBSYSTEMD "libsystemd.so.0"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct sdbus_api api;
static char load_error[512];
static bool loaded;

static void load(void)
{
        void *h = dlopen(LIBSYSTEMD, RTLD_NOW | RTLD_LOCAL);
        if (h == NULL) {
                snprintf(load_error, sizeof(load_error), "%s", dlerror());
                return;
        }
        struct {
                void **slot;
                const char *name;
        } syms[] = {
#define SYM(field, name) {(void **)&api.field, name}
            SYM(bus_new, "sd_bus_new"),
            SYM(bus_set_address, "sd_bus_set_address"),
            SYM(bus_start, "sd_bus_start"),
            SYM(bus_is_open, "sd_bus_is_open"),
            SYM(bus_process, "sd_bus_process"),
            SYM(bus_wait, "sd_bus_wait"),
            SYM(bus_flush_close_unref, "sd_bus_flush_close_unref"),
            SYM(bus_match_signal, "sd_bus_match_signal"),
            SYM(bus_slot_unref, "sd_bus_slot_unref"),
            SYM(bus_call, "sd_bus_call"),
            SYM(bus_call_method, "sd_bus_call_method"),
            SYM(message_new_method_call, "sd_bus_message_new_method_call"),
            SYM(message_append, "sd_bus_message_append"),
            SYM(message_open_container, "sd_bus_message_open_container"),
            SYM(message_close_container, "sd_bus_message_close_container"),
            SYM(message_read, "sd_bus_message_read"),
            SYM(message_unref, "sd_bus_message_unref"),
            SYM(error_free, "sd_bus_error_free"),
            SYM(error_has_name, "sd_bus_error_has_name"),
            SYM(bus_set_bus_client, "sd_bus_set_bus_client"),
            SYM(bus_get_fd, "sd_bus_get_fd"),
            SYM(bus_get_events, "sd_bus_get_events"),
            SYM(bus_get_timeout, "sd_bus_get_timeout"),
            SYM(bus_get_property_trivial, "sd_bus_get_property_trivial"),
#undef SYM
        };
        for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
                *syms[i].slot = dlsym(h, syms[i].name);
                if (*syms[i].slot == NULL) {
                        snprintf(load_error, sizeof(load_error), "%s: no symbol %s", LIBSYSTEMD,
                                 syms[i].name);
                        dlclose(h);
                        memset(&api, 0, sizeof(api));
                        return;
                }
        }
        loaded = true; /* the handle stays open for the life of the process */
}

const struct sdbus_api *sdbus_load(ck_error_t *err)
{
        pthread_once(&once, load);
        if (!loaded) {
                ck_error_make(err, 0, "load sd-bus: %s", load_error);
                return NULL;
        }
        return &api;
}
