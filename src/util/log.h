/* SPDX-License-Identifier: Apache-2.0 */
/*
 * klog-compatible structured logging.
 *
 * Text format (klog's, as the upstream kubelet writes it):
 *   I1129 23:18:06.273123    1234 sync.c:42] "SyncLoop ADD" pod="default/web"
 * Severity letters I, W, E, F.  `msg` is quoted by the logger; the optional
 * printf-style tail holds the key="value" pairs:
 *
 *   LOG_INFO(2, "Started container", "pod=\"%s\" container=\"%s\"", pod, c);
 *   LOG_ERROR("Sync failed", "pod=\"%s\" err=\"%s\"", pod, ck_error_msg(e));
 *
 * Info lines are written only when their verbosity is <= the -v level.
 * Thread-safe: one write(2) per line.
 */
#ifndef CK_UTIL_LOG_H
#define CK_UTIL_LOG_H

#include <stdbool.h>

enum log_severity {
        LOG_SEV_INFO = 'I',
        LOG_SEV_WARNING = 'W',
        LOG_SEV_ERROR = 'E',
        LOG_SEV_FATAL = 'F'
};

/* Set the -v level (default 0). */
void log_set_verbosity(int v);
int log_get_verbosity(void);
/* Log to this fd instead of stderr (the fd is borrowed). */
void log_set_fd(int fd);

void log_write(enum log_severity sev, const char *file, int line, const char *msg, const char *fmt,
               ...) __attribute__((format(printf, 5, 6)));

#define LOG_V(v) ((v) <= log_get_verbosity())

/* The `"" __VA_ARGS__` trick makes the key/value tail optional. */
#define LOG_INFO(v, msg, ...)                                                                      \
        do {                                                                                       \
                if (LOG_V(v))                                                                      \
                        log_write(LOG_SEV_INFO, __FILE__, __LINE__, msg, "" __VA_ARGS__);          \
        } while (0)
#define LOG_WARN(msg, ...) log_write(LOG_SEV_WARNING, __FILE__, __LINE__, msg, "" __VA_ARGS__)
#define LOG_ERROR(msg, ...) log_write(LOG_SEV_ERROR, __FILE__, __LINE__, msg, "" __VA_ARGS__)

#endif
