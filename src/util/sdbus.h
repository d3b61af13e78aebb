/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The part of sd-bus the agent calls (the systemd cgroup driver,
 * cm/systemd.c; the node shutdown manager's logind client,
 * nodeshutdown/logind.c), from libsystemd.so.0 loaded at its first use
 * (dlopen), not linked: a node on the cgroupfs driver without a shutdown
 * grace period, the default, then never maps libsystemd and what it
 * needs (libgcrypt, libgpg-error, liblz4, liblzma, libzstd, libcap: about
 * 0.8 MB of RSS in every agent, bench/README.md).  The headers are
 * libsystemd-dev's; the ABI is libsystemd0's, stable for these functions.
 */
#ifndef CK_UTIL_SDBUS_H
#define CK_UTIL_SDBUS_H

#include "util/error.h"

#include <systemd/sd-bus.h>

struct sdbus_api {
        int (*bus_new)(sd_bus **ret);
        int (*bus_set_address)(sd_bus *bus, const char *address);
        int (*bus_start)(sd_bus *bus);
        int (*bus_is_open)(sd_bus *bus);
        int (*bus_process)(sd_bus *bus, sd_bus_message **r);
        int (*bus_wait)(sd_bus *bus, uint64_t timeout_usec);
        sd_bus *(*bus_flush_close_unref)(sd_bus *bus);
        int (*bus_match_signal)(sd_bus *bus, sd_bus_slot **ret, const char *sender,
                                const char *path, const char *interface, const char *member,
                                sd_bus_message_handler_t callback, void *userdata);
        sd_bus_slot *(*bus_slot_unref)(sd_bus_slot *slot);
        int (*bus_call)(sd_bus *bus, sd_bus_message *m, uint64_t usec, sd_bus_error *ret_error,
                        sd_bus_message **reply);
        int (*bus_call_method)(sd_bus *bus, const char *destination, const char *path,
                               const char *interface, const char *member, sd_bus_error *ret_error,
                               sd_bus_message **reply, const char *types, ...);
        int (*message_new_method_call)(sd_bus *bus, sd_bus_message **m, const char *destination,
                                       const char *path, const char *interface, const char *member);
        int (*message_append)(sd_bus_message *m, const char *types, ...);
        int (*message_open_container)(sd_bus_message *m, char type, const char *contents);
        int (*message_close_container)(sd_bus_message *m);
        int (*message_read)(sd_bus_message *m, const char *types, ...);
        sd_bus_message *(*message_unref)(sd_bus_message *m);
        void (*error_free)(sd_bus_error *e);
        int (*error_has_name)(const sd_bus_error *e, const char *name);
        int (*bus_set_bus_client)(sd_bus *bus, int b);
        int (*bus_get_fd)(sd_bus *bus);
        int (*bus_get_events)(sd_bus *bus);
        int (*bus_get_timeout)(sd_bus *bus, uint64_t *timeout_usec);
        int (*bus_get_property_trivial)(sd_bus *bus, const char *destination, const char *path,
                                        const char *interface, const char *member,
                                        sd_bus_error *ret_error, char type, void *ret_ptr);
};

/* The functions, loaded once (any thread); NULL with err when
 * libsystemd.so.0 or one of them cannot be loaded. */
const struct sdbus_api *sdbus_load(ck_error_t *err);

#endif
