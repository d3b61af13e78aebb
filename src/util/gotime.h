/* SPDX-License-Identifier: Apache-2.0 */
/*
 * RFC 3339 times as Go's time package reads and writes them: time.Parse
 * with the RFC3339 / RFC3339Nano layouts (upstream's log reader, metav1.Time
 * in queries, the Docker Engine API's timestamps) and Format with the
 * fixed-width RFC3339NanoFixed layout (upstream's log timeFormatOut).
 */
#ifndef CK_UTIL_GOTIME_H
#define CK_UTIL_GOTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An instant and the UTC offset it was written with (what a Go time.Time
 * parsed from RFC 3339 keeps). */
struct go_time {
        int64_t sec;    /* seconds since 1970-01-01T00:00:00Z */
        int32_t nsec;   /* 0 .. 999999999 */
        int32_t offset; /* seconds east of UTC */
};

/* Go's zero time.Time (0001-01-01T00:00:00Z) in seconds since the epoch. */
#define GO_ZERO_TIME_SEC (-62135596800LL)

/* Parses s[0..len) as Go's time.Parse(time.RFC3339Nano or RFC3339, s)
 * does (both accept the same inputs): YYYY-MM-DDTH[H]:MM:SS, an optional
 * fraction after '.' or ',' (any number of digits, nanoseconds kept), then
 * 'Z' or +hh:mm / -hh:mm (hh <= 24, mm <= 60).  False when it does not. */
bool go_time_parse(const char *s, size_t len, struct go_time *out);

/* Longest output of go_time_format, NUL included. */
#define GO_TIME_BUF 40

/* Writes t as Go's Format("2006-01-02T15:04:05.000000000Z07:00") in its own
 * offset ("Z" for 0) into buf; returns the length (NUL not counted). */
size_t go_time_format(const struct go_time *t, char buf[GO_TIME_BUF]);

/* a < b */
bool go_time_before(const struct go_time *a, const struct go_time *b);

#endif
