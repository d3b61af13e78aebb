/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The container log reader behind the kubelet's /containerLogs endpoint
 * (`kubectl logs`): the query decoding of PodLogOptions (server.go
 * getContainerLogs, the v1 parameter codec and ValidatePodLogOptions) and
 * the reader of CRI-format log files (k8s.io/cri-client pkg/logs ReadLogs),
 * which also takes Docker's json-file lines.
 *
 * A CRI log file holds one record per line:
 *
 *   2016-10-06T00:17:09.669794202Z stdout P log content 1
 *   2016-10-06T00:17:09.669794203Z stderr F log content 2
 *
 * (RFC 3339 time, stream, tag: P = partial, the line continues in the next
 * record of the stream; F = full, message ends with its '\n').
 */
#ifndef CK_LOGS_LOGS_H
#define CK_LOGS_LOGS_H

#include "util/error.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* PodLogOptions.stream.  ALL when the parameter is absent (upstream's
 * defaulting with the PodLogsQuerySplitStreams gate on). */
enum logs_stream { LOGS_STREAM_ALL = 0, LOGS_STREAM_STDOUT, LOGS_STREAM_STDERR };

struct logs_options {
        char *container; /* the "container" param (owned) or NULL */
        bool follow, previous, timestamps;
        int64_t tail_lines;    /* -1: all lines */
        int64_t limit_bytes;   /* -1: no limit */
        int64_t since_seconds; /* 0: not set */
        int64_t since_time_ns; /* 0: not set; CLOCK_REALTIME ns (sinceTime is RFC 3339);
                                * times outside the int64 ns range are clamped */
        enum logs_stream stream;
};

/* Sets *o to the options of an empty query: no container, all flags false,
 * tail_lines and limit_bytes -1, no since, all streams. */
void logs_options_init(struct logs_options *o);

/* Decodes the URL query of GET /containerLogs/<ns>/<pod>/<container> (the
 * raw query after '?', len bytes; NULL or empty: defaults) into *out as
 * upstream does:
 *  - the query is split as Go's url.ParseQuery does (pairs on '&', '+' and
 *    %XX decoded; a pair with ';' or a bad escape is dropped; more than
 *    10000 pairs: the whole query is ignored); of a repeated key the first
 *    value counts;
 *  - the legacy "tail" param, when not empty, replaces "tailLines"
 *    ("tail=all": no tailLines at all);
 *  - booleans (follow, previous, timestamps) are false only for "0" and
 *    "false" in any case (an empty value is true), as the parameter codec
 *    decodes them; integers as strconv.ParseInt(v, 10, 64); sinceTime as
 *    RFC 3339 ("" and "null" count as given but zero);
 *  - then ValidatePodLogOptions.
 * On success fills *out (release with logs_options_release) and returns 0.
 * Errors: < 0 with err->code 400 when a value does not decode, 422 when the
 * options fail validation (tailLines < 0, limitBytes < 1, sinceSeconds < 1,
 * both sinceSeconds and sinceTime, a stream other than Stdout, Stderr or
 * All, tailLines with a single stream); the message names the parameter;
 * *out is then left with no allocation.  Unknown params are ignored.  Pure;
 * any thread. */
int logs_options_parse(const char *query, size_t len, struct logs_options *out, ck_error_t *err);

/* Frees what *o owns (the container name) and sets it to NULL. */
void logs_options_release(struct logs_options *o);

/* Where logs_read sends what it reads.  Called only from the logs_read
 * thread. */
struct logs_sink {
        /* Writes bytes to the client (len > 0); < 0: the client went away
         * (logs_read stops and returns 0). */
        int (*write)(void *ctx, const char *buf, size_t len);
        /* follow: is the container still running?  Asked at each end of the
         * file and about once a second while waiting; false: logs_read
         * finishes after reading what is left.  NULL: never running. */
        bool (*running)(void *ctx);
        void *ctx;
        const atomic_bool *stop; /* may be NULL: raised = kubelet shutting down, return */
};

/* Streams the CRI-format log file at path (symlinks resolved first) to sink
 * per *o, as upstream's ReadLogs does:
 *  - stream: only the records of that stream are written; tail_lines >= 0
 *    (without follow) starts at the last tail_lines newline-terminated lines
 *    of the file and stops after that many records, whatever their stream
 *    or time; with follow, tail only picks the starting point;
 *  - since (max of now_ns - since_seconds and since_time_ns): older records
 *    are skipped;
 *  - timestamps: a record that starts a line is prefixed with its time in
 *    the fixed-width RFC 3339 form ("2006-01-02T15:04:05.000000000Z07:00")
 *    and a space; a partial record's continuation is not;
 *  - limit_bytes: stops once that many bytes were written, cutting the last
 *    line;
 *  - the first line read decides the file's format, as upstream's: a CRI
 *    record, or a line of Docker's json-file log driver (a dockershim links
 *    the CRI log path to the engine's log); neither: the read fails
 *    ("unsupported log format"); later lines that do not parse are logged,
 *    skipped and not counted for tail; without follow, an incomplete last
 *    line (no '\n') is written too;
 *  - follow: at the end of the file waits for changes of its directory
 *    (inotify) or a second; when the path is a new file (rotation: renamed
 *    away and created again), the rest of the old file is read and the new
 *    one is then read from its start; returns once running() is false and
 *    the file is read to its end (an incomplete last line is not written),
 *    or when *stop is raised.
 * Returns 0 (also when the sink's write failed), or < 0 with err naming the
 * file and the cause (resolving or opening the file, a read error, an
 * unsupported format, inotify).  Blocks the calling thread; all fds
 * O_CLOEXEC and closed on return. */
int logs_read(const char *path, const struct logs_options *o, int64_t now_ns,
              const struct logs_sink *sink, ck_error_t *err);

#endif
