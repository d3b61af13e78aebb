/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzzes the container log reader (src/logs) on what a client or a
 * container controls: the input is decoded as a /containerLogs query, its
 * lines as CRI records, Docker json-file lines and RFC 3339 times, and the
 * whole of it is read
 * as a log file.  Checks: a decoded query satisfies the validation, a
 * parsed time formats to a string that parses back to the same time, a
 * record's message lies inside its line, logs_read never writes more than
 * limit_bytes and fails only before writing anything.
 */
#include "logs/logs_internal.h"
#include "util/log.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* 2024-05-01T10:00:00Z */
#define T0_NS (1714557600LL * 1000000000LL)

static void check_query(const char *in, size_t size)
{
        struct logs_options o;
        ck_error_t err = NULL;
        int r = logs_options_parse(in, size, &o, &err);
        if ((r < 0) != (err != NULL))
                abort();
        if (r < 0) {
                if ((err->code != 400 && err->code != 422) || o.container != NULL)
                        abort();
                ck_error_release(&err);
                return;
        }
        if (o.tail_lines < -1 || (o.limit_bytes != -1 && o.limit_bytes < 1) ||
            o.since_seconds < 0 || (o.since_seconds != 0 && o.since_time_ns != 0) ||
            (o.stream != LOGS_STREAM_ALL && o.tail_lines != -1))
                abort();
        logs_options_release(&o);
}

static void check_time(const char *s, size_t len)
{
        struct go_time t, back;
        if (!go_time_parse(s, len, &t))
                return;
        char buf[GO_TIME_BUF];
        size_t n = go_time_format(&t, buf);
        if (n < 30 || n >= GO_TIME_BUF || t.nsec < 0 || t.nsec > 999999999)
                abort();
        /* "+24:60" is written "+25:00", which Go does not read back either */
        bool readable = t.offset < 25 * 3600 && t.offset > -25 * 3600;
        if (go_time_parse(buf, n, &back) != readable ||
            (readable && (back.sec != t.sec || back.nsec != t.nsec || back.offset != t.offset)))
                abort();
}

/* A Docker json-file line: a message of at most the line's length, its
 * partial flag as its last byte says. */
static void check_json_line(const char *line, size_t len)
{
        struct logs_record rec;
        const char *why = NULL;
        char *owned = NULL;
        if (logs_parse_docker_json_line(line, len, &rec, &owned, &why) < 0) {
                if (why == NULL || owned != NULL)
                        abort();
                return;
        }
        if (owned == NULL || rec.msg != owned || rec.msg_len > len ||
            rec.partial != (rec.msg_len == 0 || rec.msg[rec.msg_len - 1] != '\n') ||
            (rec.stream != LOGS_STREAM_STDOUT && rec.stream != LOGS_STREAM_STDERR))
                abort();
        free(owned);
}

static void check_line(const char *line, size_t len)
{
        check_json_line(line, len);
        struct logs_record rec;
        const char *why = NULL;
        if (logs_parse_cri_line(line, len, &rec, &why) < 0) {
                if (why == NULL)
                        abort();
                return;
        }
        if (rec.msg < line || rec.msg + rec.msg_len > line + len ||
            (rec.stream != LOGS_STREAM_STDOUT && rec.stream != LOGS_STREAM_STDERR))
                abort();
        const char *sp = memchr(line, ' ', len); /* the record's time round-trips */
        if (sp == NULL || rec.msg <= sp)
                abort();
        check_time(line, (size_t)(sp - line));
}

struct counter {
        int64_t bytes;
};

static int count_write(void *ctx, const char *buf, size_t len)
{
        struct counter *c = ctx;
        if (len == 0 || buf == NULL)
                abort();
        c->bytes += (int64_t)len;
        return 0;
}

static char path[64];

static void remove_file(void)
{
        unlink(path);
}

/* The input as a log file, read with options taken from its first bytes. */
static void check_read(const uint8_t *data, size_t size)
{
        static int fd = -1;
        if (fd < 0) {
                int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
                log_set_fd(devnull); /* unparsable lines are logged */
                snprintf(path, sizeof(path), "/tmp/fuzz_logs.%d.log", (int)getpid());
                fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
                if (fd < 0)
                        abort();
                atexit(remove_file);
        }
        if (ftruncate(fd, 0) < 0 || (size > 0 && pwrite(fd, data, size, 0) != (ssize_t)size))
                abort();
        struct logs_options o;
        logs_options_init(&o);
        if (size > 0) {
                o.timestamps = data[0] & 1;
                o.stream = (enum logs_stream)((data[0] >> 1) % 3);
                o.since_time_ns = data[0] & 8 ? T0_NS : 0;
        }
        if (size > 1)
                o.tail_lines = data[1] == 0xff ? -1 : data[1] % 16;
        if (size > 2)
                o.limit_bytes = data[2] == 0 ? -1 : data[2];
        struct counter c = {0};
        struct logs_sink sink = {.write = count_write, .ctx = &c};
        ck_error_t err = NULL;
        int r = logs_read(path, &o, T0_NS, &sink, &err);
        if ((r < 0) != (err != NULL) || (r < 0 && c.bytes != 0))
                abort();
        if (o.limit_bytes >= 0 && c.bytes > o.limit_bytes)
                abort();
        ck_error_release(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *in = (const char *)data;
        check_query(in, size);
        for (size_t i = 0; i < size;) {
                const char *nl = memchr(in + i, '\n', size - i);
                size_t end = nl != NULL ? (size_t)(nl - in) + 1 : size;
                check_line(in + i, end - i);
                check_time(in + i, end - i - (nl != NULL));
                i = end;
        }
        check_read(data, size);
        return 0;
}
