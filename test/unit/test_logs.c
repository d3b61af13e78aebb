/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The container log reader (src/logs): what `kubectl logs` gets for a query
 * and a CRI log file, as upstream's getContainerLogs and ReadLogs give it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "logs/logs.h"
#include "logs/logs_internal.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* 2024-05-01T10:00:00Z */
#define T0_NS (1714557600LL * 1000000000LL)

/* ---- query decoding ---- */

static struct logs_options parse_ok(const char *query)
{
        struct logs_options o;
        ck_error_t err = NULL;
        int r = logs_options_parse(query, query != NULL ? strlen(query) : 0, &o, &err);
        if (r < 0)
                fail_msg("query %s: %s", query, ck_error_msg(err));
        return o;
}

/* The error code of a query that must fail; its message must name `param`. */
static void parse_fails(const char *query, int code, const char *param)
{
        struct logs_options o;
        ck_error_t err = NULL;
        assert_int_equal(logs_options_parse(query, strlen(query), &o, &err), -1);
        assert_non_null(err);
        if (err->code != code || strstr(err->msg, param) == NULL)
                fail_msg("query %s: code %d message %s", query, err->code, err->msg);
        assert_null(o.container);
        ck_error_release(&err);
}

static void test_options_defaults(void **state)
{
        (void)state;
        struct logs_options o = parse_ok(NULL);
        assert_null(o.container);
        assert_false(o.follow || o.previous || o.timestamps);
        assert_int_equal(o.tail_lines, -1);
        assert_int_equal(o.limit_bytes, -1);
        assert_int_equal(o.since_seconds, 0);
        assert_int_equal(o.since_time_ns, 0);
        assert_int_equal(o.stream, LOGS_STREAM_ALL);
        o = parse_ok("");
        assert_int_equal(o.tail_lines, -1);
        o = parse_ok("unknown=1&&x");
        assert_int_equal(o.limit_bytes, -1);
}

static void test_options_what_kubectl_sends(void **state)
{
        (void)state;
        struct logs_options o = parse_ok("container=web&follow=true&limitBytes=500&previous=true&"
                                         "sinceSeconds=3600&tailLines=10&timestamps=true");
        assert_string_equal(o.container, "web");
        assert_true(o.follow && o.previous && o.timestamps);
        assert_int_equal(o.tail_lines, 10);
        assert_int_equal(o.limit_bytes, 500);
        assert_int_equal(o.since_seconds, 3600);
        logs_options_release(&o);
        assert_null(o.container);

        o = parse_ok("sinceTime=2024-05-01T10%3A00%3A00Z");
        assert_int_equal(o.since_time_ns, T0_NS);
        o = parse_ok("sinceTime=2024-05-01T12:00:00.5%2B02:00");
        assert_int_equal(o.since_time_ns, T0_NS + 500000000);
        o = parse_ok("stream=Stderr");
        assert_int_equal(o.stream, LOGS_STREAM_STDERR);
        o = parse_ok("stream=Stdout&limitBytes=1");
        assert_int_equal(o.stream, LOGS_STREAM_STDOUT);
        o = parse_ok("stream=All&tailLines=0");
        assert_int_equal(o.stream, LOGS_STREAM_ALL);
        assert_int_equal(o.tail_lines, 0);
}

/* The parameter codec's booleans: only "0" and "false" in any case are false. */
static void test_options_booleans(void **state)
{
        (void)state;
        static const struct {
                const char *q;
                bool want;
        } cases[] = {
            {"follow=true", true},   {"follow=1", true},        {"follow=", true},
            {"follow", true},        {"follow=no", true},       {"follow=0", false},
            {"follow=FaLsE", false}, {"follow=false", false},   {"follow=fal%C5%BFe", false},
            {"follow=00", true},     {"follow=false%00", true},
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                struct logs_options o = parse_ok(cases[i].q);
                if (o.follow != cases[i].want)
                        fail_msg("%s: follow %d", cases[i].q, o.follow);
        }
}

/* url.ParseQuery: the first value wins, %XX and '+' decoded, a pair with a bad
 * escape or a ';' dropped. */
static void test_options_query_syntax(void **state)
{
        (void)state;
        struct logs_options o = parse_ok("tailLines=3&tailLines=5&container=a%2Bb+c%2f");
        assert_int_equal(o.tail_lines, 3);
        assert_string_equal(o.container, "a+b c/");
        logs_options_release(&o);
        o = parse_ok("tailLines=%zz&limitBytes=5&tail%4=1");
        assert_int_equal(o.tail_lines, -1);
        assert_int_equal(o.limit_bytes, 5);
        o = parse_ok("tailLines=4;x&limitBytes=%2B7&%74ailLines=9");
        assert_int_equal(o.tail_lines, 9);
        assert_int_equal(o.limit_bytes, 7);
        /* more than 10000 pairs: net/url decodes nothing */
        size_t pairs = 10001, len = strlen("tailLines=2");
        cleanup_free char *big = xmalloc(len + 2 * pairs);
        memcpy(big, "tailLines=2", len);
        for (size_t i = 1; i < pairs; i++, len += 2)
                memcpy(big + len, "&x", 2);
        big[len] = '\0';
        o = parse_ok(big);
        assert_int_equal(o.tail_lines, -1);
        big[strlen(big) - 2] = '\0'; /* 10000 pairs */
        o = parse_ok(big);
        assert_int_equal(o.tail_lines, 2);
}

/* server.go: a non-empty "tail" replaces tailLines; "all" removes it. */
static void test_options_legacy_tail(void **state)
{
        (void)state;
        struct logs_options o = parse_ok("tail=7&tailLines=5");
        assert_int_equal(o.tail_lines, 7);
        o = parse_ok("tail=all&tailLines=5");
        assert_int_equal(o.tail_lines, -1);
        o = parse_ok("tail=&tailLines=5");
        assert_int_equal(o.tail_lines, 5);
        parse_fails("tail=last", 400, "tail");
        /* "tail=all" with a single stream is valid: tailLines is gone */
        o = parse_ok("tail=all&tailLines=5&stream=Stdout");
        assert_int_equal(o.tail_lines, -1);
}

static void test_options_decode_errors(void **state)
{
        (void)state;
        parse_fails("tailLines=abc", 400, "tailLines");
        parse_fails("tailLines=", 400, "tailLines");
        parse_fails("tailLines=1.5", 400, "tailLines");
        parse_fails("limitBytes=9223372036854775808", 400, "limitBytes");
        parse_fails("sinceSeconds=99999999999999999999", 400, "sinceSeconds");
        parse_fails("sinceTime=yesterday", 400, "sinceTime");
        /* '+' in a query is a space: an unescaped offset does not parse */
        parse_fails("sinceTime=2024-05-01T12:00:00+02:00", 400, "sinceTime");
        parse_fails("container=x&tailLines=-", 400, "tailLines");
        struct logs_options o = parse_ok("limitBytes=9223372036854775807&tailLines=-0");
        assert_int_equal(o.limit_bytes, INT64_MAX);
        assert_int_equal(o.tail_lines, 0);
}

static void test_options_validation(void **state)
{
        (void)state;
        parse_fails("tailLines=-1", 422, "tailLines");
        parse_fails("limitBytes=0", 422, "limitBytes");
        parse_fails("sinceSeconds=0", 422, "sinceSeconds");
        parse_fails("sinceSeconds=-5", 422, "sinceSeconds");
        parse_fails("sinceSeconds=5&sinceTime=2024-05-01T10:00:00Z", 422, "sinceTime");
        /* an empty sinceTime counts as given */
        parse_fails("sinceSeconds=5&sinceTime=", 422, "sinceSeconds");
        parse_fails("stream=stdout", 422, "stream");
        parse_fails("stream=", 422, "stream");
        parse_fails("stream=Stdout&tailLines=1", 422, "tailLines");
        parse_fails("tailLines=-1&limitBytes=0", 422, "limitBytes");
        parse_fails("sinceTime=null&sinceSeconds=1", 422, "sinceSeconds");
        struct logs_options o = parse_ok("sinceTime=");
        assert_int_equal(o.since_time_ns, 0);
}

/* ---- times and records ---- */

static void check_time(const char *in, bool ok, const char *out)
{
        struct go_time t;
        bool got = go_time_parse(in, strlen(in), &t);
        if (got != ok)
                fail_msg("%s: parsed %d", in, got);
        if (!ok)
                return;
        char buf[GO_TIME_BUF];
        assert_int_equal(go_time_format(&t, buf), strlen(out));
        assert_string_equal(buf, out);
}

/* Go's time.Parse(RFC3339Nano) and Format(RFC3339NanoFixed). */
static void test_time_parse_format(void **state)
{
        (void)state;
        check_time("2016-10-06T00:17:09.669794202Z", true, "2016-10-06T00:17:09.669794202Z");
        check_time("2016-10-06T00:17:09Z", true, "2016-10-06T00:17:09.000000000Z");
        check_time("2016-10-06T02:17:09.5+02:00", true, "2016-10-06T02:17:09.500000000+02:00");
        check_time("2016-10-06T00:17:09-07:30", true, "2016-10-06T00:17:09.000000000-07:30");
        check_time("2016-10-06T00:17:09-00:00", true, "2016-10-06T00:17:09.000000000Z");
        check_time("2016-10-06T00:17:09+24:60", true, "2016-10-06T00:17:09.000000000+25:00");
        check_time("2016-10-06T1:02:03Z", true, "2016-10-06T01:02:03.000000000Z");
        check_time("2016-10-06T00:17:09,25Z", true, "2016-10-06T00:17:09.250000000Z");
        check_time("2016-10-06T00:17:09.1234567899999Z", true, "2016-10-06T00:17:09.123456789Z");
        check_time("2024-02-29T23:59:59Z", true, "2024-02-29T23:59:59.000000000Z");
        check_time("0000-01-01T00:00:00+01:00", true, "0000-01-01T00:00:00.000000000+01:00");
        check_time("9999-12-31T23:59:59.999999999Z", true, "9999-12-31T23:59:59.999999999Z");
        const char *bad[] = {"2023-02-29T00:00:00Z",     "2016-13-01T00:00:00Z",
                             "2016-10-06 00:17:09Z",     "2016-10-06T00:17:09",
                             "2016-10-06T00:17:09z",     "2016-10-06T00:17:09Zx",
                             "2016-10-06T24:00:00Z",     "2016-10-06T00:60:00Z",
                             "2016-10-06T00:17:60Z",     "2016-10-06T00:17:09+25:00",
                             "2016-10-06T00:17:09+0200", "2016-10-06T00:17:09.Z",
                             "16-10-06T00:17:09Z",       "2016-1-06T00:17:09Z",
                             "2016-10-06T123:17:09Z",    ""};
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
                check_time(bad[i], false, NULL);

        struct go_time a, b;
        assert_true(go_time_parse("2016-10-06T02:17:09.5+02:00", 27, &a));
        assert_true(go_time_parse("2016-10-06T00:17:09.5Z", 22, &b));
        assert_true(a.sec == b.sec && a.nsec == b.nsec);
        assert_int_equal(a.sec, 1475713029);
        assert_true(go_time_parse("0001-01-01T00:00:00Z", 20, &a));
        assert_int_equal(a.sec, GO_ZERO_TIME_SEC);
}

static void test_cri_line(void **state)
{
        (void)state;
        struct logs_record r;
        const char *why;
        const char *l = "2016-10-06T00:17:09.669794202Z stdout F log content 1\n";
        assert_int_equal(logs_parse_cri_line(l, strlen(l), &r, &why), 0);
        assert_int_equal(r.stream, LOGS_STREAM_STDOUT);
        assert_false(r.partial);
        assert_int_equal(r.msg_len, strlen("log content 1\n"));
        assert_memory_equal(r.msg, "log content 1\n", r.msg_len);

        l = "2016-10-06T00:17:09.669794202Z stderr P:x part\n";
        assert_int_equal(logs_parse_cri_line(l, strlen(l), &r, &why), 0);
        assert_int_equal(r.stream, LOGS_STREAM_STDERR);
        assert_true(r.partial);
        assert_int_equal(r.msg_len, 4); /* the '\n' of a partial record is dropped */

        l = "2016-10-06T00:17:09Z stdout  empty tag\n"; /* not "P": a full record */
        assert_int_equal(logs_parse_cri_line(l, strlen(l), &r, &why), 0);
        assert_false(r.partial);
        assert_int_equal(r.msg_len, strlen("empty tag\n"));
        l = "2016-10-06T00:17:09Z stdout P ";
        assert_int_equal(logs_parse_cri_line(l, strlen(l), &r, &why), 0);
        assert_int_equal(r.msg_len, 0);

        const char *bad[] = {"garbage\n",
                             "2016-10-06T00:17:09Z\n",
                             "2016-10-06T00:17:09Z stdout\n",
                             "2016-10-06T00:17:09Z stdin F x\n",
                             "2016-10-06T00:17:09Z stdout F\n",
                             "2016-10-06 stdout F x\n"};
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
                if (logs_parse_cri_line(bad[i], strlen(bad[i]), &r, &why) == 0)
                        fail_msg("parsed %s", bad[i]);
}

/* ---- reading files ---- */

struct capture {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        char *buf;
        size_t len, cap;
        int writes;
        int fail_at; /* the write that returns -1 (1-based), 0: none */
        atomic_bool running;
        atomic_bool stop;
        bool gate;    /* running() blocks while set ... */
        bool in_gate; /* ... and says so here */
};

/* Changes the file's times: an inotify event that wakes a waiting reader. */
static void touch(const char *path)
{
        assert_int_equal(utimensat(AT_FDCWD, path, NULL, 0), 0);
}

static int capture_write(void *ctx, const char *buf, size_t len)
{
        struct capture *c = ctx;
        assert_true(len > 0);
        pthread_mutex_lock(&c->lock);
        int r = 0;
        if (++c->writes == c->fail_at) {
                r = -1;
        } else {
                if (c->len + len + 1 > c->cap) {
                        c->cap = (c->len + len + 1) * 2;
                        c->buf = xrealloc(c->buf, c->cap);
                }
                memcpy(c->buf + c->len, buf, len);
                c->len += len;
                c->buf[c->len] = '\0';
        }
        pthread_cond_broadcast(&c->cond);
        pthread_mutex_unlock(&c->lock);
        return r;
}

static bool capture_running(void *ctx)
{
        struct capture *c = ctx;
        pthread_mutex_lock(&c->lock);
        c->in_gate = c->gate;
        pthread_cond_broadcast(&c->cond);
        while (c->gate)
                pthread_cond_wait(&c->cond, &c->lock);
        c->in_gate = false;
        pthread_mutex_unlock(&c->lock);
        return atomic_load(&c->running);
}

/* Holds the reader in its next running() call; returns once it is there. */
static void hold_reader(struct capture *c, const char *path)
{
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 5;
        pthread_mutex_lock(&c->lock);
        c->gate = true;
        pthread_mutex_unlock(&c->lock);
        touch(path); /* wakes the reader: it reads, meets the end, asks running() */
        pthread_mutex_lock(&c->lock);
        while (!c->in_gate)
                if (pthread_cond_timedwait(&c->cond, &c->lock, &until) != 0)
                        break;
        bool held = c->in_gate;
        pthread_mutex_unlock(&c->lock);
        if (!held)
                fail_msg("the reader did not reach running()");
}

static void release_reader(struct capture *c)
{
        pthread_mutex_lock(&c->lock);
        c->gate = false;
        pthread_cond_broadcast(&c->cond);
        pthread_mutex_unlock(&c->lock);
}

static void capture_init(struct capture *c)
{
        memset(c, 0, sizeof(*c));
        pthread_mutex_init(&c->lock, NULL);
        pthread_cond_init(&c->cond, NULL);
        c->buf = xstrdup("");
        c->cap = 1;
}

static void capture_release(struct capture *c)
{
        free(c->buf);
        pthread_mutex_destroy(&c->lock);
        pthread_cond_destroy(&c->cond);
}

static struct logs_sink sink_of(struct capture *c)
{
        return (struct logs_sink){
            .write = capture_write, .running = capture_running, .ctx = c, .stop = &c->stop};
}

/* Waits (at most 5 s) until the output contains want. */
static void wait_for_output(struct capture *c, const char *want)
{
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 5;
        pthread_mutex_lock(&c->lock);
        while (strstr(c->buf, want) == NULL)
                if (pthread_cond_timedwait(&c->cond, &c->lock, &until) != 0)
                        break;
        bool found = strstr(c->buf, want) != NULL;
        pthread_mutex_unlock(&c->lock);
        if (!found)
                fail_msg("no %s in the output", want);
}

static char *make_dir(void)
{
        char *dir = xstrdup("/tmp/ck-logs-XXXXXX");
        assert_non_null(mkdtemp(dir));
        return dir;
}

static void remove_dir(char *dir)
{
        ck_error_t err = NULL;
        assert_int_equal(fs_remove_all(dir, &err), 0);
        free(dir);
}

static void append(const char *path, const char *content)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
        close(fd);
}

/* Both streams, a partial record, an unparsable line. */
static const char SAMPLE[] = "2024-05-01T10:00:00.000000001Z stdout F out1\n"
                             "2024-05-01T10:00:01Z stderr F err1\n"
                             "2024-05-01T10:00:02Z stdout P part-a\n"
                             "2024-05-01T10:00:03Z stdout F part-b\n"
                             "garbage line\n"
                             "2024-05-01T10:00:04Z stderr F err2\n"
                             "2024-05-01T12:00:05+02:00 stdout F out3\n";

/* logs_read of content with o; returns the output (a new string) and the
 * return value in *ret; the error message in *msg when one is given. */
static char *read_with(const char *content, const struct logs_options *o, int64_t now_ns,
                       int fail_at, int *ret, char **msg)
{
        char *dir = make_dir();
        cleanup_free char *path = xasprintf("%s/0.log", dir);
        append(path, content);
        struct capture c;
        capture_init(&c);
        c.fail_at = fail_at;
        struct logs_sink sink = sink_of(&c);
        ck_error_t err = NULL;
        *ret = logs_read(path, o, now_ns, &sink, &err);
        assert_true((*ret < 0) == (err != NULL));
        if (msg != NULL)
                *msg = err != NULL ? xstrdup(err->msg) : NULL;
        ck_error_release(&err);
        char *out = xstrdup(c.buf);
        capture_release(&c);
        remove_dir(dir);
        return out;
}

static void expect_read(const char *content, const struct logs_options *o, const char *want)
{
        int ret;
        cleanup_free char *msg = NULL;
        cleanup_free char *got = read_with(content, o, T0_NS, 0, &ret, &msg);
        if (ret != 0)
                fail_msg("logs_read: %s", msg);
        assert_string_equal(got, want);
}

static struct logs_options opts(void)
{
        struct logs_options o;
        logs_options_init(&o);
        return o;
}

static void test_read_all_and_streams(void **state)
{
        (void)state;
        struct logs_options o = opts();
        expect_read(SAMPLE, &o, "out1\nerr1\npart-apart-b\nerr2\nout3\n");
        o.stream = LOGS_STREAM_STDOUT;
        expect_read(SAMPLE, &o, "out1\npart-apart-b\nout3\n");
        o.stream = LOGS_STREAM_STDERR;
        expect_read(SAMPLE, &o, "err1\nerr2\n");
        o = opts();
        expect_read("", &o, "");
}

static void test_read_timestamps(void **state)
{
        (void)state;
        struct logs_options o = opts();
        o.timestamps = true;
        /* the continuation of a partial record gets no prefix; times keep
         * the offset they were written with */
        expect_read(SAMPLE, &o,
                    "2024-05-01T10:00:00.000000001Z out1\n"
                    "2024-05-01T10:00:01.000000000Z err1\n"
                    "2024-05-01T10:00:02.000000000Z part-apart-b\n"
                    "2024-05-01T10:00:04.000000000Z err2\n"
                    "2024-05-01T12:00:05.000000000+02:00 out3\n");
}

/* upstream's tail counts newline-terminated lines of the file, and then
 * stops after that many records, whatever their stream. */
static void test_read_tail(void **state)
{
        (void)state;
        struct logs_options o = opts();
        o.tail_lines = 2;
        expect_read(SAMPLE, &o, "err2\nout3\n");
        o.tail_lines = 4;
        expect_read(SAMPLE, &o, "part-b\nerr2\nout3\n");
        o.tail_lines = 0;
        expect_read(SAMPLE, &o, "");
        o.tail_lines = 100;
        expect_read(SAMPLE, &o, "out1\nerr1\npart-apart-b\nerr2\nout3\n");
        o.tail_lines = 1;
        o.stream = LOGS_STREAM_STDERR;
        expect_read(SAMPLE, &o, ""); /* the last line is stdout's */
        /* the partial record is a line of its own */
        o = opts();
        o.tail_lines = 5;
        expect_read(SAMPLE, &o, "part-apart-b\nerr2\nout3\n");
        /* an unparsable line does not count: the unterminated last record
         * is still within tail 2 */
        o.tail_lines = 2;
        expect_read("2024-05-01T10:00:00Z stdout F a\n2024-05-01T10:00:00Z stdout F b\n"
                    "garbage\n2024-05-01T10:00:00Z stdout F c",
                    &o, "b\nc");
        /* an unterminated last line is not counted but read */
        o.tail_lines = 1;
        expect_read("2024-05-01T10:00:00Z stdout F a\n2024-05-01T10:00:00Z stdout F b\n"
                    "2024-05-01T10:00:00Z stdout F c",
                    &o, "b\n");
        o.tail_lines = 2;
        expect_read("2024-05-01T10:00:00Z stdout F a\n2024-05-01T10:00:00Z stdout F b", &o, "a\nb");
}

/* Docker's json-file log (a dockershim's CRI log path links to it), as
 * upstream's reader takes it: the first line decides the format; a long
 * line the engine cut is partial; a line that does not parse is skipped. */
static const char DOCKER_SAMPLE[] =
    "{\"log\":\"out1\\n\",\"stream\":\"stdout\",\"time\":\"2024-05-01T10:00:00.000000001Z\"}\n"
    "{\"log\":\"err \\\"1\\\"\\n\",\"stream\":\"stderr\",\"time\":\"2024-05-01T10:00:01Z\"}\n"
    "{\"log\":\"part-a\",\"stream\":\"stdout\",\"time\":\"2024-05-01T10:00:02Z\"}\n"
    "{\"log\":\"part-b\\n\",\"stream\":\"stdout\",\"time\":\"2024-05-01T10:00:03Z\"}\n"
    "2024-05-01T10:00:03Z stdout F a CRI line among them\n"
    "{\"log\":\"\\u00e9t\u00e9\\n\",\"stream\":\"stdout\",\"time\":\"2024-05-01T12:00:05+02:00\"}"
    "\n";

static void test_read_docker_json_log(void **state)
{
        (void)state;
        struct logs_options o = opts();
        expect_read(DOCKER_SAMPLE, &o, "out1\nerr \"1\"\npart-apart-b\n\u00e9t\u00e9\n");
        o.stream = LOGS_STREAM_STDERR;
        expect_read(DOCKER_SAMPLE, &o, "err \"1\"\n");
        o = opts();
        o.timestamps = true;
        o.tail_lines = 1;
        expect_read(DOCKER_SAMPLE, &o, "2024-05-01T12:00:05.000000000+02:00 \u00e9t\u00e9\n");
        /* from the CRI line on: that line decides, the JSON one is skipped */
        o.tail_lines = 2;
        expect_read(DOCKER_SAMPLE, &o, "2024-05-01T10:00:03.000000000Z a CRI line among them\n");

        struct logs_record r;
        const char *why = NULL;
        char *owned = NULL;
        static const char *const bad[] = {
            "[]", "{\"log\":1,\"stream\":\"stdout\",\"time\":\"2024-05-01T10:00:00Z\"}",
            "{\"log\":\"x\",\"stream\":\"stdin\",\"time\":\"2024-05-01T10:00:00Z\"}",
            "{\"log\":\"x\",\"stream\":\"stdout\",\"time\":\"yesterday\"}", "{\"log\":"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                if (logs_parse_docker_json_line(bad[i], strlen(bad[i]), &r, &owned, &why) == 0)
                        fail_msg("%s parsed", bad[i]);
                assert_null(owned);
                assert_non_null(why);
        }
}

/* The first line read decides the format: a non-CRI one fails the read. */
static void test_read_unsupported_format(void **state)
{
        (void)state;
        struct logs_options o = opts();
        o.tail_lines = 3; /* starts at "garbage line" */
        int ret;
        char *msg;
        cleanup_free char *got = read_with(SAMPLE, &o, T0_NS, 0, &ret, &msg);
        assert_int_equal(ret, -1);
        assert_string_equal(got, "");
        assert_non_null(strstr(msg, "unsupported log format: \"garbage line\\n\""));
        assert_non_null(strstr(msg, "0.log"));
        free(msg);
}

static void test_read_since(void **state)
{
        (void)state;
        struct logs_options o = opts();
        o.since_time_ns = T0_NS + 2000000000LL;
        expect_read(SAMPLE, &o, "part-apart-b\nerr2\nout3\n");
        o.since_time_ns = T0_NS + 1; /* 10:00:00.000000001 itself is kept */
        expect_read(SAMPLE, &o, "out1\nerr1\npart-apart-b\nerr2\nout3\n");
        o = opts();
        o.since_seconds = 2; /* now is T0 + 5 s */
        int ret;
        cleanup_free char *got = read_with(SAMPLE, &o, T0_NS + 5000000000LL, 0, &ret, NULL);
        assert_int_equal(ret, 0);
        assert_string_equal(got, "part-b\nerr2\nout3\n");
        /* Go's zero time: a record from before year 1 is skipped even without since */
        o = opts();
        expect_read("0000-06-01T00:00:00Z stdout F old\n2024-05-01T10:00:00Z stdout F new\n", &o,
                    "new\n");
}

static void test_read_limit_bytes(void **state)
{
        (void)state;
        struct logs_options o = opts();
        o.limit_bytes = 7;
        expect_read(SAMPLE, &o, "out1\ner");
        o.limit_bytes = 5;
        expect_read(SAMPLE, &o, "out1\n");
        o.limit_bytes = 10;
        o.timestamps = true;
        expect_read(SAMPLE, &o, "2024-05-01");
        o = opts();
        o.limit_bytes = 3;
        o.stream = LOGS_STREAM_STDERR; /* other streams do not count */
        expect_read(SAMPLE, &o, "err");
}

/* Without follow, an unterminated last line is written as it is. */
static void test_read_incomplete_last_line(void **state)
{
        (void)state;
        struct logs_options o = opts();
        expect_read("2024-05-01T10:00:00Z stdout F a\n2024-05-01T10:00:01Z stdout F no newline", &o,
                    "a\nno newline");
}

static void test_read_long_line(void **state)
{
        (void)state;
        size_t n = 300 * 1024;
        cleanup_free char *content = xmalloc(n + 128);
        int off = sprintf(content, "2024-05-01T10:00:00Z stdout F ");
        memset(content + off, 'x', n);
        strcpy(content + off + n, "\n2024-05-01T10:00:00Z stdout F end\n");
        struct logs_options o = opts();
        int ret;
        cleanup_free char *got = read_with(content, &o, T0_NS, 0, &ret, NULL);
        assert_int_equal(ret, 0);
        assert_int_equal(strlen(got), n + 5);
        assert_int_equal(strspn(got, "x"), n);
        assert_string_equal(got + n, "\nend\n");
}

static void test_read_client_gone(void **state)
{
        (void)state;
        struct logs_options o = opts();
        int ret;
        cleanup_free char *got = read_with(SAMPLE, &o, T0_NS, 2, &ret, NULL);
        assert_int_equal(ret, 0);
        assert_string_equal(got, "out1\n"); /* nothing after the failed write */
}

static void test_read_errors_and_symlink(void **state)
{
        (void)state;
        char *dir = make_dir();
        cleanup_free char *path = xasprintf("%s/0.log", dir);
        cleanup_free char *link = xasprintf("%s/link.log", dir);
        struct capture c;
        capture_init(&c);
        struct logs_sink sink = sink_of(&c);
        struct logs_options o = opts();
        ck_error_t err = NULL;
        assert_int_equal(logs_read(path, &o, T0_NS, &sink, &err), -1);
        assert_non_null(strstr(err->msg, path));
        assert_non_null(strstr(err->msg, "No such file"));
        ck_error_release(&err);

        append(path, "2024-05-01T10:00:00Z stdout F via link\n");
        assert_int_equal(symlink(path, link), 0);
        assert_int_equal(logs_read(link, &o, T0_NS, &sink, &err), 0);
        assert_string_equal(c.buf, "via link\n");

        /* a FIFO (or a device) at the path: refused, never blocked on */
        cleanup_free char *fifo = xasprintf("%s/fifo.log", dir);
        assert_int_equal(mkfifo(fifo, 0600), 0);
        assert_int_equal(logs_read(fifo, &o, T0_NS, &sink, &err), -1);
        cleanup_free char *want = xasprintf("log file `%s` is not a regular file", fifo);
        assert_string_equal(err->msg, want);
        ck_error_release(&err);
        unlink(fifo);
        capture_release(&c);
        remove_dir(dir);
}

/* logs_tail_start against a forward count, across the 64 KiB blocks. */
static void test_tail_start_blocks(void **state)
{
        (void)state;
        char *dir = make_dir();
        cleanup_free char *path = xasprintf("%s/big.log", dir);
        size_t size = 300 * 1024, nl = 0;
        cleanup_free char *data = xmalloc(size);
        cleanup_free size_t *ends = xmalloc(size * sizeof(*ends)); /* offsets after each '\n' */
        unsigned seed = 7;
        for (size_t i = 0; i < size; i++) {
                seed = seed * 1103515245 + 12345;
                data[i] = (seed >> 16) % 97 == 0 ? '\n' : 'a';
                if (data[i] == '\n')
                        ends[nl++] = i + 1;
        }
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, data, size), (ssize_t)size);
        assert_true(nl > 1000);
        const int64_t ns[] = {0, 1, 2, 10, 500, (int64_t)nl - 1, (int64_t)nl, (int64_t)nl + 5};
        for (size_t k = 0; k < ARRAY_SIZE(ns); k++) {
                int64_t start, want = ns[k] < (int64_t)nl ? (int64_t)ends[nl - ns[k] - 1] : 0;
                assert_int_equal(logs_tail_start(fd, ns[k], &start, NULL), 0);
                if (start != want)
                        fail_msg("tail %lld: %lld, want %lld", (long long)ns[k], (long long)start,
                                 (long long)want);
        }
        int64_t start;
        assert_int_equal(logs_tail_start(fd, -1, &start, NULL), 0);
        assert_int_equal(start, 0);
        close(fd);
        remove_dir(dir);
}

/* ---- follow ---- */

struct follow_case {
        char *dir, *path;
        struct capture c;
        struct logs_options o;
        pthread_t reader;
        int ret;
        char *msg;
};

static void *follow_reader(void *arg)
{
        struct follow_case *f = arg;
        struct logs_sink sink = sink_of(&f->c);
        ck_error_t err = NULL;
        f->ret = logs_read(f->path, &f->o, T0_NS, &sink, &err);
        f->msg = err != NULL ? xstrdup(err->msg) : NULL;
        ck_error_release(&err);
        return NULL;
}

static void follow_start(struct follow_case *f, const char *initial)
{
        f->dir = make_dir();
        f->path = xasprintf("%s/0.log", f->dir);
        append(f->path, initial);
        capture_init(&f->c);
        atomic_store(&f->c.running, true);
        f->o = opts();
        f->o.follow = true;
        f->msg = NULL;
}

static void follow_run(struct follow_case *f)
{
        assert_int_equal(pthread_create(&f->reader, NULL, follow_reader, f), 0);
}

/* Joins the reader and returns its output (borrowed until follow_end). */
static const char *follow_join(struct follow_case *f)
{
        assert_int_equal(pthread_join(f->reader, NULL), 0);
        if (f->ret != 0)
                fail_msg("logs_read: %s", f->msg);
        return f->c.buf;
}

static void follow_end(struct follow_case *f)
{
        capture_release(&f->c);
        free(f->msg);
        free(f->path);
        remove_dir(f->dir);
}

/* Lines appended while following are delivered; a record written in two
 * pieces comes out whole; when the container stops, what is left is read
 * and logs_read returns. */
static void test_follow_appends_until_not_running(void **state)
{
        (void)state;
        struct follow_case f;
        follow_start(&f, "2024-05-01T10:00:00Z stdout F first\n");
        follow_run(&f);
        wait_for_output(&f.c, "first\n");
        append(f.path, "2024-05-01T10:00:01Z stderr F second\n");
        wait_for_output(&f.c, "second\n");
        append(f.path, "2024-05-01T10:00:02Z stdout F thi");
        usleep(20 * 1000); /* let the reader meet the unterminated record */
        append(f.path, "rd\n");
        wait_for_output(&f.c, "third\n");
        /* stopped: the last line is read, an unterminated one is not written */
        append(f.path, "2024-05-01T10:00:03Z stdout F last\n2024-05-01T10:00:04Z stdout F cut");
        atomic_store(&f.c.running, false);
        touch(f.path);
        assert_string_equal(follow_join(&f), "first\nsecond\nthird\nlast\n");
        follow_end(&f);
}

/* With follow, tail picks the start and does not end the read. */
static void test_follow_with_tail(void **state)
{
        (void)state;
        struct follow_case f;
        follow_start(&f, "2024-05-01T10:00:00Z stdout F a\n2024-05-01T10:00:00Z stdout F b\n");
        f.o.tail_lines = 1;
        follow_run(&f);
        wait_for_output(&f.c, "b\n");
        append(f.path, "2024-05-01T10:00:00Z stdout F c\n");
        wait_for_output(&f.c, "c\n");
        atomic_store(&f.c.running, false);
        touch(f.path);
        assert_string_equal(follow_join(&f), "b\nc\n");
        follow_end(&f);
}

/* A rotation (rename, the runtime still writing the old file, then a new
 * file at the path), all seen at once by the reader: the rest of the old
 * file, then the new one. */
static void test_follow_rotation(void **state)
{
        (void)state;
        struct follow_case f;
        follow_start(&f, "2024-05-01T10:00:00Z stdout F old1\n");
        follow_run(&f);
        wait_for_output(&f.c, "old1\n");
        hold_reader(&f.c, f.path);
        int old = open(f.path, O_WRONLY | O_APPEND | O_CLOEXEC);
        assert_true(old >= 0);
        cleanup_free char *rotated = xasprintf("%s.20240501-100000", f.path);
        assert_int_equal(rename(f.path, rotated), 0);
        const char *late = "2024-05-01T10:00:01Z stdout F old2\n";
        assert_int_equal(write(old, late, strlen(late)), (ssize_t)strlen(late));
        close(old);
        append(f.path, "2024-05-01T10:00:02Z stderr F new1\n");
        release_reader(&f.c);
        wait_for_output(&f.c, "new1\n");
        append(f.path, "2024-05-01T10:00:03Z stdout F new2\n");
        wait_for_output(&f.c, "new2\n");
        atomic_store(&f.c.running, false);
        touch(f.path);
        assert_string_equal(follow_join(&f), "old1\nold2\nnew1\nnew2\n");
        follow_end(&f);
}

/* containerd's ReopenContainerLog: the new file first, then the old
 * file's logger writes what it still held: the reader, woken by the new
 * file, reads the old one a little longer before it goes on. */
static void test_follow_rotation_old_file_written_after(void **state)
{
        (void)state;
        struct follow_case f;
        follow_start(&f, "2024-05-01T10:00:00Z stdout F old1\n");
        follow_run(&f);
        wait_for_output(&f.c, "old1\n");
        int old = open(f.path, O_WRONLY | O_APPEND | O_CLOEXEC);
        assert_true(old >= 0);
        cleanup_free char *rotated = xasprintf("%s.20240501-100000", f.path);
        assert_int_equal(rename(f.path, rotated), 0);
        append(f.path, "2024-05-01T10:00:02Z stdout F new1\n");
        usleep(40 * 1000); /* the reader has seen the new file by now */
        const char *late = "2024-05-01T10:00:01Z stdout F old2\n";
        assert_int_equal(write(old, late, strlen(late)), (ssize_t)strlen(late));
        close(old);
        wait_for_output(&f.c, "new1\n");
        atomic_store(&f.c.running, false);
        touch(f.path);
        assert_string_equal(follow_join(&f), "old1\nold2\nnew1\n");
        follow_end(&f);
}

/* The log renamed away and, a while later, created again. */
static void test_follow_rotation_new_file_later(void **state)
{
        (void)state;
        struct follow_case f;
        follow_start(&f, "2024-05-01T10:00:00Z stdout F old1\n");
        follow_run(&f);
        wait_for_output(&f.c, "old1\n");
        cleanup_free char *rotated = xasprintf("%s.1", f.path);
        assert_int_equal(rename(f.path, rotated), 0);
        for (int i = 0; i < 2; i++) { /* the reader waits with no file at the path */
                hold_reader(&f.c, rotated);
                release_reader(&f.c);
        }
        append(f.path, "2024-05-01T10:00:02Z stdout F new1\n");
        wait_for_output(&f.c, "new1\n");
        atomic_store(&f.c.running, false);
        touch(f.path);
        assert_string_equal(follow_join(&f), "old1\nnew1\n");
        follow_end(&f);
}

static void test_follow_stop_flag(void **state)
{
        (void)state;
        struct follow_case f;
        follow_start(&f, "2024-05-01T10:00:00Z stdout F a\n");
        follow_run(&f);
        wait_for_output(&f.c, "a\n");
        atomic_store(&f.c.stop, true); /* running stays true */
        assert_string_equal(follow_join(&f), "a\n");
        follow_end(&f);
}

static void test_follow_client_gone(void **state)
{
        (void)state;
        struct follow_case f;
        follow_start(&f, "2024-05-01T10:00:00Z stdout F a\n");
        f.c.fail_at = 2;
        follow_run(&f);
        wait_for_output(&f.c, "a\n");
        append(f.path, "2024-05-01T10:00:00Z stdout F b\n"); /* its write fails */
        assert_string_equal(follow_join(&f), "a\n");
        assert_int_equal(f.c.writes, 2);
        follow_end(&f);
}

/* The byte limit also ends a follow. */
static void test_follow_limit_bytes(void **state)
{
        (void)state;
        struct follow_case f;
        follow_start(&f, "2024-05-01T10:00:00Z stdout F abc\n");
        f.o.limit_bytes = 6;
        follow_run(&f);
        wait_for_output(&f.c, "abc\n");
        append(f.path, "2024-05-01T10:00:00Z stdout F def\n");
        assert_string_equal(follow_join(&f), "abc\nde");
        follow_end(&f);
}

static int quiet_logs(void **state)
{
        (void)state;
        static int devnull = -1;
        if (devnull < 0)
                devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
        log_set_fd(devnull);
        return 0;
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_options_defaults),
            cmocka_unit_test(test_options_what_kubectl_sends),
            cmocka_unit_test(test_options_booleans),
            cmocka_unit_test(test_options_query_syntax),
            cmocka_unit_test(test_options_legacy_tail),
            cmocka_unit_test(test_options_decode_errors),
            cmocka_unit_test(test_options_validation),
            cmocka_unit_test(test_time_parse_format),
            cmocka_unit_test(test_cri_line),
            cmocka_unit_test(test_read_all_and_streams),
            cmocka_unit_test(test_read_timestamps),
            cmocka_unit_test(test_read_tail),
            cmocka_unit_test(test_read_unsupported_format),
            cmocka_unit_test(test_read_docker_json_log),
            cmocka_unit_test(test_read_since),
            cmocka_unit_test(test_read_limit_bytes),
            cmocka_unit_test(test_read_incomplete_last_line),
            cmocka_unit_test(test_read_long_line),
            cmocka_unit_test(test_read_client_gone),
            cmocka_unit_test(test_read_errors_and_symlink),
            cmocka_unit_test(test_tail_start_blocks),
            cmocka_unit_test(test_follow_appends_until_not_running),
            cmocka_unit_test(test_follow_with_tail),
            cmocka_unit_test(test_follow_rotation),
            cmocka_unit_test(test_follow_rotation_new_file_later),
            cmocka_unit_test(test_follow_rotation_old_file_written_after),
            cmocka_unit_test(test_follow_stop_flag),
            cmocka_unit_test(test_follow_client_gone),
            cmocka_unit_test(test_follow_limit_bytes),
        };
        return cmocka_run_group_tests(tests, quiet_logs, NULL);
}
