/* SPDX-License-Identifier: Apache-2.0 */
#include "util/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
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
                } else if (c == '\n' || c == '\t' || c == '\r') {
                        buf[off++] = '\\';
                        buf[off++] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
                } else {
                        buf[off++] = c;
                }
        }
        return off;
}

/* Formats the key/value tail.  Like vsnprintf, except that a %s written
 * between double quotes ("%s") is escaped as klog quotes values, so that a
 * message carrying quotes or newlines (a runtime's error text) cannot break
 * the line's format.  Conversions are taken from `ap` by their type. */
static size_t format_tail(char *buf, size_t off, size_t cap, const char *fmt, va_list ap)
{
        const char *p = fmt;
        while (*p && off + 2 < cap) {
                if (*p != '%') {
                        buf[off++] = *p++;
                        continue;
                }
                if (p[1] == '%') {
                        buf[off++] = '%';
                        p += 2;
                        continue;
                }
                /* one conversion: %[flags][width][.precision][length]conv */
                const char *start = p++;
                while (*p && strchr("-+ #0", *p))
                        p++;
                while (*p >= '0' && *p <= '9')
                        p++;
                if (*p == '.')
                        for (p++; *p >= '0' && *p <= '9'; p++)
                                ;
                char len[3] = "";
                if (*p == 'h' || *p == 'l') {
                        len[0] = *p++;
                        if (*p == len[0])
                                len[1] = *p++;
                } else if (*p == 'z' || *p == 'j' || *p == 't' || *p == 'L') {
                        len[0] = *p++;
                }
                char conv = *p ? *p++ : '\0';
                char spec[32];
                size_t sl =
                    (size_t)(p - start) < sizeof(spec) - 1 ? (size_t)(p - start) : sizeof(spec) - 1;
                memcpy(spec, start, sl);
                spec[sl] = '\0';
                size_t room = cap - off - 1;
                int m = 0;
                switch (conv) {
                case 's': {
                        const char *v = va_arg(ap, const char *);
                        if (v == NULL)
                                v = "<nil>";
                        if (off > 0 && buf[off - 1] == '"' && *p == '"')
                                off = quote_into(buf, off, cap - 1, v);
                        else
                                m = snprintf(buf + off, room, spec, v);
                        break;
                }
                case 'd':
                case 'i':
                case 'u':
                case 'x':
                case 'X':
                case 'o':
                case 'c':
                        if (len[0] == 'l' && len[1] == 'l')
                                m = snprintf(buf + off, room, spec, va_arg(ap, long long));
                        else if (len[0] == 'l')
                                m = snprintf(buf + off, room, spec, va_arg(ap, long));
                        else if (len[0] == 'z')
                                m = snprintf(buf + off, room, spec, va_arg(ap, size_t));
                        else if (len[0] == 'j')
                                m = snprintf(buf + off, room, spec, va_arg(ap, intmax_t));
                        else if (len[0] == 't')
                                m = snprintf(buf + off, room, spec, va_arg(ap, ptrdiff_t));
                        else
                                m = snprintf(buf + off, room, spec, va_arg(ap, int));
                        break;
                case 'f':
                case 'e':
                case 'g':
                case 'F':
                case 'E':
                case 'G':
                        if (len[0] == 'L')
                                m = snprintf(buf + off, room, spec, va_arg(ap, long double));
                        else
                                m = snprintf(buf + off, room, spec, va_arg(ap, double));
                        break;
                case 'p':
                        m = snprintf(buf + off, room, spec, va_arg(ap, void *));
                        break;
                default: /* not a conversion we know: stop rather than misread ap */
                        return off;
                }
                if (m > 0)
                        off += (size_t)m < room ? (size_t)m : room - 1;
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
                off = format_tail(buf, off, sizeof(buf) - 1, fmt, ap);
                va_end(ap);
        }
        buf[off++] = '\n';
        ssize_t w;
        do
                w = write(atomic_load(&log_fd), buf, off);
        while (w < 0 && errno == EINTR);
}
