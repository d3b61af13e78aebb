/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CRI log file reader (upstream's ReadLogs and its logWriter): lines
 * from the tail start, parsed, filtered by time and stream, prefixed with
 * their time, cut at the byte limit; in follow mode, waiting at the end of
 * the file until the container stops.
 */
#include "logs/logs_internal.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/strquote.h"
#include "util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define READ_CHUNK (64 * 1024)

/* Lines of a file as bufio.Reader.ReadBytes('\n') gives them, except that
 * an unterminated line at the end of the file stays buffered, so that the
 * rest of it is read once it is written (upstream seeks back instead). */
struct line_reader {
        int fd;
        char *buf;
        size_t cap, start, end;
        size_t scanned; /* bytes after start known to hold no '\n' */
};

/* 1: a complete line (consumed); 0: end of file, the unterminated rest is
 * at *line (not consumed; *len may be 0); -1: read error. */
static int reader_next(struct line_reader *r, const char **line, size_t *len, ck_error_t *err)
{
        for (;;) {
                const char *from = r->buf + r->start + r->scanned;
                const char *nl = memchr(from, '\n', r->end - r->start - r->scanned);
                if (nl != NULL) {
                        *line = r->buf + r->start;
                        *len = (size_t)(nl + 1 - *line);
                        r->start += *len;
                        r->scanned = 0;
                        return 1;
                }
                r->scanned = r->end - r->start;
                if (r->start > 0 && (r->end == r->cap || r->start >= r->cap / 2)) {
                        memmove(r->buf, r->buf + r->start, r->end - r->start);
                        r->end -= r->start;
                        r->start = 0;
                }
                if (r->cap - r->end < READ_CHUNK / 4) {
                        r->cap *= 2;
                        r->buf = xrealloc(r->buf, r->cap);
                }
                ssize_t n = read(r->fd, r->buf + r->end, r->cap - r->end);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return ck_error_make(err, errno, "read");
                if (n == 0) {
                        *line = r->buf + r->start;
                        *len = r->end - r->start;
                        return 0;
                }
                r->end += (size_t)n;
        }
}

/* Drops the buffered unterminated line. */
static void reader_skip_rest(struct line_reader *r)
{
        r->start = r->end = r->scanned = 0;
}

/* upstream's logWriter */
struct writer {
        const struct logs_sink *sink;
        const struct logs_options *o;
        struct go_time since;
        int64_t remain;
        char *scratch;
        size_t scratch_cap;
};

enum write_result { WRITE_OK, WRITE_LIMIT, WRITE_GONE };

/* The instant of a realtime ns value. */
static struct go_time time_of_ns(int64_t ns)
{
        struct go_time t = {.sec = ns / 1000000000, .nsec = (int32_t)(ns % 1000000000)};
        if (t.nsec < 0) {
                t.nsec += 1000000000;
                t.sec--;
        }
        return t;
}

/* upstream's NewLogOptions: since is now - sinceSeconds (the Duration
 * product wraps as Go's int64 does), or sinceTime when that is later;
 * neither: Go's zero time, before which a record is still skipped. */
static struct go_time since_of(const struct logs_options *o, int64_t now_ns)
{
        struct go_time since = {.sec = GO_ZERO_TIME_SEC};
        if (o->since_seconds != 0) {
                uint64_t d = (uint64_t)o->since_seconds * 1000000000u;
                int64_t back = (int64_t)(0 - d);
                struct go_time now = time_of_ns(now_ns);
                since.sec = now.sec + back / 1000000000;
                since.nsec = now.nsec + (int32_t)(back % 1000000000);
                if (since.nsec >= 1000000000) {
                        since.nsec -= 1000000000;
                        since.sec++;
                } else if (since.nsec < 0) {
                        since.nsec += 1000000000;
                        since.sec--;
                }
        }
        if (o->since_time_ns != 0) {
                struct go_time t = time_of_ns(o->since_time_ns);
                if (go_time_before(&since, &t))
                        since = t;
        }
        return since;
}

static bool stream_selected(const struct logs_options *o, enum logs_stream s)
{
        return o->stream == LOGS_STREAM_ALL || o->stream == s;
}

static enum write_result writer_write(struct writer *w, const struct logs_record *rec,
                                      bool add_prefix)
{
        if (go_time_before(&rec->time, &w->since) || !stream_selected(w->o, rec->stream))
                return WRITE_OK;
        const char *out = rec->msg;
        size_t len = rec->msg_len;
        if (w->o->timestamps && add_prefix) {
                char ts[GO_TIME_BUF];
                size_t plen = go_time_format(&rec->time, ts);
                if (w->scratch_cap < plen + 1 + len) {
                        w->scratch_cap = plen + 1 + len;
                        free(w->scratch);
                        w->scratch = xmalloc(w->scratch_cap);
                }
                memcpy(w->scratch, ts, plen);
                w->scratch[plen] = ' ';
                memcpy(w->scratch + plen + 1, rec->msg, len);
                out = w->scratch;
                len += plen + 1;
        }
        if ((int64_t)len > w->remain)
                len = (size_t)w->remain;
        if (len > 0 && w->sink->write(w->sink->ctx, out, len) < 0)
                return WRITE_GONE;
        w->remain -= (int64_t)len;
        return w->remain <= 0 ? WRITE_LIMIT : WRITE_OK;
}

/* The state of one logs_read. */
struct reading {
        const char *path; /* symlinks resolved */
        const struct logs_options *o;
        const struct logs_sink *sink;
        struct line_reader reader;
        struct stat st; /* of reader.fd */
        struct logs_watch watch;
        struct writer writer;
        /* the format of the file, as its first line says (upstream's
         * getParseFunc): 0 not known yet, 1 CRI, 2 Docker's json-file */
        int format;
        bool new_line;      /* the last record written ended its line */
        int64_t rotated_ms; /* when a new file at the path was seen (CLOCK_MONOTONIC) */
};

/* How long the old file is still read after a new one appeared at the
 * path.  containerd's ReopenContainerLog creates the new file before the
 * old file's logger has written what it still holds (its part of a line
 * that came through the container's pipe in two reads), so the old file
 * can grow for a moment after the new one exists; read too early, the
 * head of that line would be lost and its tail, the new file's first
 * record, show up as a line of its own. */
#define ROTATE_SETTLE_MS 200

/* Opens r->path in place of the file being read (if any), from its start.
 * Returns 0, an errno value, or NOT_REGULAR (a FIFO, a device: never
 * blocked on, never read). */
#define NOT_REGULAR (-1)
static int open_log(struct reading *r)
{
        int fd =
            TEMP_FAILURE_RETRY_INT(open(r->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
        if (fd < 0)
                return errno;
        struct stat st;
        if (fstat(fd, &st) < 0) {
                int saved = errno;
                close(fd);
                return saved;
        }
        if (!S_ISREG(st.st_mode)) {
                close(fd);
                return NOT_REGULAR;
        }
        if (r->reader.fd >= 0)
                close(r->reader.fd);
        r->reader.fd = fd;
        r->st = st;
        reader_skip_rest(&r->reader);
        return 0;
}

/* Parses and writes one line.  1: go on; 2: go on, the line did not parse
 * (and does not count for tail); 0: done (limit, client gone); -1: the
 * first line is in neither format (a CRI record, Docker's json-file). */
static int handle_line(struct reading *r, const char *line, size_t len, ck_error_t *err)
{
        struct logs_record rec;
        const char *why = NULL;
        cleanup_free char *owned = NULL;
        int rc = -1;
        if (r->format != 2)
                rc = logs_parse_cri_line(line, len, &rec, &why);
        if (rc == 0) {
                r->format = 1;
        } else if (r->format != 1) {
                const char *jwhy = NULL;
                rc = logs_parse_docker_json_line(line, len, &rec, &owned, &jwhy);
                if (rc == 0)
                        r->format = 2;
                else if (r->format == 2)
                        why = jwhy;
        }
        if (rc < 0) {
                cleanup_free char *q = str_go_quote(line, len);
                if (r->format == 0)
                        return ck_error_make(err, 0, "log file `%s`: unsupported log format: %s",
                                             r->path, q);
                LOG_ERROR("Failed when parsing line in log file", "err=\"%s\" path=\"%s\" line=%s",
                          why, r->path, q);
                return 2;
        }
        switch (writer_write(&r->writer, &rec, r->new_line)) {
        case WRITE_LIMIT:
                LOG_INFO(2, "Finished parsing log file, hit bytes limit", "path=\"%s\" limit=%lld",
                         r->path, (long long)r->o->limit_bytes);
                return 0;
        case WRITE_GONE:
                LOG_INFO(2, "Stopped writing log file, the client went away", "path=\"%s\"",
                         r->path);
                return 0;
        case WRITE_OK:
                break;
        }
        r->new_line = rec.msg_len == 0 || rec.msg[rec.msg_len - 1] == '\n';
        return 1;
}

static bool stop_raised(const struct logs_sink *sink)
{
        return sink->stop != NULL && atomic_load(sink->stop);
}

/* At the end of the file in follow mode.  1: read on; 0: finished. */
static int follow_at_eof(struct reading *r, bool *running, bool *rotated, ck_error_t *err)
{
        if (!*running)
                return 0;
        if (r->watch.fd < 0) {
                if (logs_watch_open(&r->watch, r->path, err) < 0)
                        return ck_error_wrap(err, "follow log file `%s`", r->path);
                return 1; /* read again: a write may have come before the watch */
        }
        if (*rotated && fs_now_mono_ms() - r->rotated_ms < ROTATE_SETTLE_MS) {
                /* read the old file again a little later: it may still grow */
                struct timespec ts = {.tv_nsec = 20 * 1000000};
                nanosleep(&ts, NULL);
                return 1;
        }
        if (*rotated) {
                /* the old file is read to its end: go on with the new one */
                int e = open_log(r);
                if (e == 0) {
                        *rotated = false;
                        LOG_INFO(4, "Log file was rotated, reading the new one", "path=\"%s\"",
                                 r->path);
                        return 1;
                }
                if (e == NOT_REGULAR)
                        return ck_error_make(err, 0, "log file `%s` is not a regular file",
                                             r->path);
                if (e != ENOENT) /* ENOENT: not created again yet */
                        return ck_error_make(err, e, "open log file `%s`", r->path);
        }
        enum logs_wait_result res;
        if (logs_watch_wait(&r->watch, r->sink, r->st.st_dev, r->st.st_ino, &res, err) < 0)
                return ck_error_wrap(err, "follow log file `%s`", r->path);
        switch (res) {
        case LOGS_WAIT_STOPPED:
                return 0;
        case LOGS_WAIT_NOT_RUNNING:
                *running = false;
                break;
        case LOGS_WAIT_RECREATED:
                *rotated = true;
                r->rotated_ms = fs_now_mono_ms();
                break;
        case LOGS_WAIT_CHANGED:
                break;
        }
        return 1;
}

static int read_loop(struct reading *r, ck_error_t *err)
{
        const struct logs_options *o = r->o;
        bool limited = o->tail_lines >= 0 && !o->follow, at_end = false;
        bool running = true, rotated = false;
        int64_t left = o->tail_lines;
        for (;;) {
                if (at_end || (limited && left == 0) || stop_raised(r->sink)) {
                        LOG_INFO(2, "Finished parsing log file", "path=\"%s\"", r->path);
                        return 0;
                }
                const char *line = NULL;
                size_t len = 0;
                int got = reader_next(&r->reader, &line, &len, err);
                if (got < 0)
                        return ck_error_wrap(err, "read log file `%s`", r->path);
                if (got == 0 && o->follow) {
                        int f = follow_at_eof(r, &running, &rotated, err);
                        if (f <= 0)
                                return f;
                        continue;
                }
                if (got == 0) {
                        at_end = true;
                        if (len == 0)
                                continue;
                        cleanup_free char *q = str_go_quote(line, len);
                        LOG_INFO(0, "Incomplete line in log file", "path=\"%s\" line=%s", r->path,
                                 q);
                        reader_skip_rest(&r->reader);
                }
                int h = handle_line(r, line, len, err);
                if (h <= 0)
                        return h;
                if (limited && h == 1)
                        left--;
        }
}

int logs_read(const char *path, const struct logs_options *o, int64_t now_ns,
              const struct logs_sink *sink, ck_error_t *err)
{
        cleanup_free char *resolved = realpath(path, NULL);
        if (resolved == NULL)
                return ck_error_make(err, errno, "resolve symlinks in log path `%s`", path);
        struct reading r = {
            .path = resolved,
            .o = o,
            .sink = sink,
            .reader = {.fd = -1, .cap = READ_CHUNK, .buf = xmalloc(READ_CHUNK)},
            .watch = {.fd = -1},
            .writer = {.sink = sink,
                       .o = o,
                       .since = since_of(o, now_ns),
                       .remain = o->limit_bytes >= 0 ? o->limit_bytes : INT64_MAX},
            .new_line = true,
        };
        int64_t start;
        int e = open_log(&r), ret = 0;
        if (e == NOT_REGULAR)
                ret = ck_error_make(err, 0, "log file `%s` is not a regular file", resolved);
        else if (e != 0)
                ret = ck_error_make(err, e, "open log file `%s`", resolved);
        if (ret == 0 && logs_tail_start(r.reader.fd, o->tail_lines, &start, err) < 0)
                ret = ck_error_wrap(err, "tail %lld lines of log file `%s`",
                                    (long long)o->tail_lines, resolved);
        if (ret == 0 && lseek(r.reader.fd, (off_t)start, SEEK_SET) < 0)
                ret = ck_error_make(err, errno, "seek to %lld in log file `%s`", (long long)start,
                                    resolved);
        if (ret == 0)
                ret = read_loop(&r, err);
        if (r.reader.fd >= 0)
                close(r.reader.fd);
        logs_watch_close(&r.watch);
        free(r.reader.buf);
        free(r.writer.scratch);
        return ret < 0 ? -1 : 0;
}
