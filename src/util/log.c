/* SPDX-License-Identifier: Apache-2.0 */
#include "util/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static atomic_int log_verbosity;
static atomic_int log_fd = 2;

void log_set_verbosity(int v)
{
        atomic_store(&log_verbosity, v);
}

int log_get_verbosity(void)
{
        return atomic_load(&log_verbosity);
}

void log_set_fd(int fd)
{
        atomic_store(&log_fd, fd);
}

/* Appends s to buf as a Go-style quoted string body (klog quotes messages). */
static size_t quote_into(char *buf, size_t off, size_t cap, const char *s)
{
        for (; *s && off + 2 < cap; s++) {
                char c = *s;
                if (c == '"' || c == '\\') {
                        buf[off++] = '\\';
                        buf[off++] = c;
                } else if (c == '\n') {
                        buf[off++] = '\\';
                        buf[off++] = 'n';
                } else {
                        buf[off++] = c;
                }
        }
        return off;
}

void log_write(enum log_severity sev, const char *file, int line, const char *msg, const char *fmt,
               ...)
{
        char buf[8192];
        struct timeval tv;
        struct tm tm;
        gettimeofday(&tv, NULL);
        localtime_r(&tv.tv_sec, &tm);
        const char *base = strrchr(file, '/');
        base = base ? base + 1 : file;

        int n = snprintf(buf, sizeof(buf), "%c%02d%02d %02d:%02d:%02d.%06ld %7d %s:%d] \"",
                         (char)sev, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                         (long)tv.tv_usec, (int)getpid(), base, line);
        size_t off = n > 0 ? (size_t)n : 0;
        off = quote_into(buf, off, sizeof(buf) - 4, msg);
        buf[off++] = '"';
        if (fmt[0] != '\0' && off < sizeof(buf) - 2) {
                buf[off++] = ' ';
                va_list ap;
                va_start(ap, fmt);
                int m = vsnprintf(buf + off, sizeof(buf) - off - 1, fmt, ap);
                va_end(ap);
                if (m > 0)
                        off +=
                            (size_t)m < sizeof(buf) - off - 1 ? (size_t)m : sizeof(buf) - off - 2;
        }
        buf[off++] = '\n';
        ssize_t w;
        do
                w = write(atomic_load(&log_fd), buf, off);
        while (w < 0 && errno == EINTR);
}
