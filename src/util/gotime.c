/* SPDX-License-Identifier: Apache-2.0 */
/*
 * RFC 3339 times as Go's time package reads and writes them (gotime.h).
 *
 * Go's general parser is more lenient than RFC 3339 and it is what decides
 * (its RFC 3339 fast path accepts a subset): a one-digit hour, ',' before
 * the fraction, more than nine fraction digits (cut to nanoseconds), zone
 * offsets up to 24 hours and 60 minutes.
 */
#include "util/gotime.h"

#include <stdio.h>

static bool is_digit(char c)
{
        return c >= '0' && c <= '9';
}

/* Two digits at s[i], s[i+1] (i + 1 < len checked by the caller or here). */
static bool two_digits(const char *s, size_t len, size_t i, int *v)
{
        if (i + 1 >= len || !is_digit(s[i]) || !is_digit(s[i + 1]))
                return false;
        *v = (s[i] - '0') * 10 + (s[i + 1] - '0');
        return true;
}

static bool is_leap(int64_t y)
{
        return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
}

static int days_in_month(int m, int64_t y)
{
        static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        return m == 2 && is_leap(y) ? 29 : days[m - 1];
}

/* Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar, counted
 * in 400-year eras of 146097 days whose years start on March 1st (so that
 * the leap day is the last day of a year). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
        if (m <= 2)
                y--;
        int64_t era = (y >= 0 ? y : y - 399) / 400;
        int64_t year_of_era = y - era * 400;
        int64_t day_of_year = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
        int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
        return era * 146097 + day_of_era - 719468;
}

/* The inverse of days_from_civil. */
static void civil_from_days(int64_t days, int64_t *y, int *m, int *d)
{
        days += 719468;
        int64_t era = (days >= 0 ? days : days - 146096) / 146097;
        int64_t day_of_era = days - era * 146097;
        int64_t year_of_era =
            (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
        int64_t day_of_year =
            day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
        int64_t month_from_march = (5 * day_of_year + 2) / 153;
        *d = (int)(day_of_year - (153 * month_from_march + 2) / 5 + 1);
        *m = (int)(month_from_march < 10 ? month_from_march + 3 : month_from_march - 9);
        *y = year_of_era + era * 400 + (*m <= 2);
}

bool go_time_parse(const char *s, size_t len, struct go_time *out)
{
        int year = 0, month, day, hour, min, sec;
        if (len < 4)
                return false;
        for (size_t k = 0; k < 4; k++) {
                if (!is_digit(s[k]))
                        return false;
                year = year * 10 + (s[k] - '0');
        }
        size_t i = 4;
        if (i >= len || s[i++] != '-' || !two_digits(s, len, i, &month) || month < 1 || month > 12)
                return false;
        i += 2;
        if (i >= len || s[i++] != '-' || !two_digits(s, len, i, &day))
                return false;
        i += 2;
        if (i >= len || s[i++] != 'T' || i >= len || !is_digit(s[i]))
                return false;
        /* the hour ("15" in the layout) takes one or two digits */
        hour = s[i++] - '0';
        if (i < len && is_digit(s[i]))
                hour = hour * 10 + (s[i++] - '0');
        if (hour >= 24)
                return false;
        if (i >= len || s[i++] != ':' || !two_digits(s, len, i, &min) || min >= 60)
                return false;
        i += 2;
        if (i >= len || s[i++] != ':' || !two_digits(s, len, i, &sec) || sec >= 60)
                return false;
        i += 2;

        int32_t nsec = 0;
        if (len - i >= 2 && (s[i] == '.' || s[i] == ',') && is_digit(s[i + 1])) {
                size_t n = 0;
                for (i++; i < len && is_digit(s[i]); i++, n++)
                        if (n < 9)
                                nsec = nsec * 10 + (s[i] - '0');
                for (; n < 9; n++)
                        nsec *= 10;
        }

        int offset = 0;
        if (i < len && s[i] == 'Z') {
                i++;
        } else {
                int zh, zm;
                if (len - i < 6 || s[i + 3] != ':' || !two_digits(s, len, i + 1, &zh) ||
                    !two_digits(s, len, i + 4, &zm) || zh > 24 || zm > 60 ||
                    (s[i] != '+' && s[i] != '-'))
                        return false;
                offset = (zh * 60 + zm) * 60;
                if (s[i] == '-')
                        offset = -offset;
                i += 6;
        }
        if (i != len || day < 1 || day > days_in_month(month, year))
                return false;

        out->sec =
            days_from_civil(year, month, day) * 86400 + hour * 3600 + min * 60 + sec - offset;
        out->nsec = nsec;
        out->offset = offset;
        return true;
}

size_t go_time_format(const struct go_time *t, char buf[GO_TIME_BUF])
{
        int64_t wall = t->sec + t->offset;
        int64_t days = wall / 86400, rem = wall % 86400;
        if (rem < 0) {
                rem += 86400;
                days--;
        }
        int64_t y;
        int m, d;
        civil_from_days(days, &y, &m, &d);
        int n = snprintf(buf, GO_TIME_BUF, "%04lld-%02d-%02dT%02d:%02d:%02d.%09d", (long long)y, m,
                         d, (int)(rem / 3600), (int)(rem / 60 % 60), (int)(rem % 60), (int)t->nsec);
        if (n < 0 || n >= GO_TIME_BUF - 7)
                return 0;
        if (t->offset == 0) {
                buf[n++] = 'Z';
                buf[n] = '\0';
                return (size_t)n;
        }
        int zone = t->offset / 60; /* minutes, as Go truncates */
        char sign = '+';
        if (zone < 0) {
                sign = '-';
                zone = -zone;
        }
        int z =
            snprintf(buf + n, GO_TIME_BUF - (size_t)n, "%c%02d:%02d", sign, zone / 60, zone % 60);
        return z < 0 ? 0 : (size_t)(n + z);
}

bool go_time_before(const struct go_time *a, const struct go_time *b)
{
        return a->sec < b->sec || (a->sec == b->sec && a->nsec < b->nsec);
}
