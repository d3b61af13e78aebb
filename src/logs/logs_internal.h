/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internals of src/logs shared by its files, the unit tests and the fuzz
 * target: the CRI log line parser, URL query splitting, the tail start finder.  Pure except
 * logs_tail_start (reads a file).
 */
#ifndef CK_LOGS_INTERNAL_H
#define CK_LOGS_INTERNAL_H

#include "logs/logs.h"
#include "util/gotime.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One parsed CRI log record.  msg borrows from the parsed line. */
struct logs_record {
        struct go_time time;
        enum logs_stream stream; /* LOGS_STREAM_STDOUT or LOGS_STREAM_STDERR */
        bool partial;            /* tag P: the trailing '\n' was dropped from msg */
        const char *msg;         /* the message, '\n' included for full records */
        size_t msg_len;
};

/* Parses one line (as read, '\n' included if there is one) as upstream's
 * parseCRILog: "<time> <stdout|stderr> <tags> <msg>", tags split on ':'
 * and the first one "P" meaning partial.  Returns 0, or -1 with *why set to
 * a static description of what is wrong. */
int logs_parse_cri_line(const char *line, size_t len, struct logs_record *out, const char **why);

/* Parses one line as upstream's parseDockerJSONLog: a JSON object of
 * Docker's json-file log driver, {"log": "...", "stream": "stdout" or
 * "stderr", "time": RFC 3339}.  The message is decoded into *owned (the
 * caller frees it; out->msg points into it); a message without its '\n'
 * (the engine cut a long line) is partial.  Returns 0, or -1 with *why. */
int logs_parse_docker_json_line(const char *line, size_t len, struct logs_record *out, char **owned,
                                const char **why);

/* One key=value pair of a URL query, both decoded (they may hold NULs). */
struct logs_query_pair {
        char *key, *value; /* NUL-terminated copies */
        size_t key_len, value_len;
};

/* A URL query as Go's url.ParseQuery decodes it, pairs in their order. */
struct logs_query {
        struct logs_query_pair *pairs;
        size_t n;
};

/* Splits query[0..len) on '&', each pair at its first '=', and decodes
 * "%XX" and '+' (space) in keys and values.  As Go's url.URL.Query(): a pair
 * with a ';' or a bad escape is dropped, an empty pair skipped; more than
 * 10000 pairs: no pair at all.  query may be NULL when len is 0.  Release
 * *out with logs_query_release. */
void logs_query_parse(const char *query, size_t len, struct logs_query *out);

/* The first pair with this key (url.Values.Get), borrowed; NULL if none. */
const struct logs_query_pair *logs_query_get(const struct logs_query *q, const char *key);

void logs_query_release(struct logs_query *q);

/* The offset where the last n newline-terminated lines of the file at fd
 * start (upstream's findTailLineStartIndex): just after the (n+1)-th '\n'
 * counted from the end, 0 when there are not that many; an unterminated
 * last line is not counted but included.  n < 0: 0.  Uses pread only. */
int logs_tail_start(int fd, int64_t n, int64_t *start, ck_error_t *err);

/* Follow mode's wait for a change of the log file: an inotify watch on
 * its directory (as upstream's fsnotify watcher). */
struct logs_watch {
        int fd;           /* inotify fd, -1 when not open */
        const char *path; /* borrowed: the log file */
        const char *base; /* its last component, inside path */
};

/* What logs_watch_wait saw. */
enum logs_wait_result {
        LOGS_WAIT_CHANGED,     /* something in the directory changed, or a second passed */
        LOGS_WAIT_RECREATED,   /* path is now another file than (dev, ino) */
        LOGS_WAIT_NOT_RUNNING, /* sink->running() said false: read the rest and finish */
        LOGS_WAIT_STOPPED,     /* *sink->stop was raised */
};

/* Starts watching the directory of path (IN_CLOEXEC).  Errors: inotify_init1,
 * inotify_add_watch failures. */
int logs_watch_open(struct logs_watch *w, const char *path, ck_error_t *err);

/* Asks sink->running(), then waits up to a second for a change in the
 * directory, checking sink->stop every 100 ms.  (dev, ino): the file being
 * read, to tell a rotation (a new file at path) from a write. */
int logs_watch_wait(struct logs_watch *w, const struct logs_sink *sink, dev_t dev, ino_t ino,
                    enum logs_wait_result *res, ck_error_t *err);

/* Closes the watch (no-op when not open). */
void logs_watch_close(struct logs_watch *w);

#endif
