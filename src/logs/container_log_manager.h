/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Container log rotation, as upstream's containerLogManager
 * (pkg/kubelet/logs/container_log_manager.go):
 *
 * every containerLogMonitorInterval a monitor thread lists the runtime's
 * containers (CRI ListContainers) and queues the RUNNING ones; each of
 * containerLogMaxWorkers workers takes a container from the queue, asks its
 * log path (CRI ContainerStatus .log_path) and, when the file is at least
 * containerLogMaxSize bytes, rotates it:
 *
 *   1. cleanupUnusedLogs: removes `<log>.*.tmp` (a compression that did not
 *      finish) and every `<log>.X` whose `<log>.X.gz` exists (compressed,
 *      the original not yet removed);
 *   2. removeExcessLogs: keeps the newest containerLogMaxFiles-2 rotated
 *      files (names sorted as strings, which is by time), removing the
 *      oldest first;
 *   3. compressLog: gzips each remaining uncompressed rotated file to
 *      `<name>.gz` (written as `<name>.tmp`, then renamed), then removes
 *      the original;
 *   4. rotateLatestLog: renames `<log>` to `<log>.<YYYYMMDD-hhmmss>` (local
 *      time, Go's "20060102-150405"), then CRI ReopenContainerLog makes the
 *      runtime create `<log>` again; when the reopen fails the file is
 *      renamed back and the error reported.
 *
 * So a container has at most containerLogMaxFiles files: the current log,
 * the newest rotated one (uncompressed, so that a reader still at its end
 * finishes it), and containerLogMaxFiles-2 compressed ones.  A file missing
 * at the log path is reopened (upstream does so too).  A max size < 0
 * disables rotation; 0 rotates every running container's log at every
 * interval (upstream's comparison: rotated when size >= max size).
 *
 * Safety, beyond upstream: a log path must be a clean absolute path under
 * podLogsDir, and the container's directory is opened beneath it without
 * following symlinks; every file operation is then relative to that
 * directory (no symlink followed, O_CLOEXEC); entries that are not regular
 * files are left alone; a compressed file is fsynced before its rename, and
 * an error or a stop never leaves a partial `.gz`.
 *
 * Threads: the monitor and the workers, each with its own runtime
 * connection (struct clm_runtime's connect).  The pure functions below are
 * for any thread.
 */
#ifndef CK_LOGS_CONTAINER_LOG_MANAGER_H
#define CK_LOGS_CONTAINER_LOG_MANAGER_H

#include "util/error.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* upstream's timestampFormat, compressSuffix, tmpSuffix */
#define CLM_TIMESTAMP_LEN 15 /* "20060102-150405" */
#define CLM_COMPRESS_SUFFIX ".gz"
#define CLM_TMP_SUFFIX ".tmp"

/* The runtime calls the manager makes, behind a vtable so that tests need no
 * runtime.  A connection belongs to one thread. */
struct clm_runtime {
        /* A new connection for the calling thread (never NULL). */
        void *(*connect)(void *ctx);
        void (*disconnect)(void *conn);
        /* The IDs of the running containers: *ids a new NULL-terminated
         * vector (free each, then the vector). */
        int (*list_running)(void *conn, char ***ids, ck_error_t *err);
        /* ContainerStatus .log_path: *path a new string ("" if none). */
        int (*log_path)(void *conn, const char *id, char **path, ck_error_t *err);
        /* ReopenContainerLog. */
        int (*reopen)(void *conn, const char *id, ck_error_t *err);
        void *ctx;
};

/* The CRI implementation: ctx is a struct clm_cri (borrowed for the
 * manager's life); a connection is a cri_client. */
struct clm_cri {
        const char *endpoint;
        int64_t timeout_ms;
};
extern const struct clm_runtime clm_cri_runtime_template; /* copy, then set .ctx */

/* upstream's LogRotatePolicy */
struct clm_policy {
        int64_t max_size; /* bytes; < 0: no rotation */
        int max_files;    /* >= 2 */
};

struct clm_options {
        const char *pod_logs_dir; /* only logs under it are rotated (copied) */
        const char *max_size;     /* containerLogMaxSize, a quantity */
        int32_t max_files;        /* containerLogMaxFiles */
        int32_t max_workers;      /* containerLogMaxWorkers */
        int64_t monitor_interval_ms;
        struct clm_runtime runtime; /* copied */
};

struct clm;

/* upstream parseMaxSize: a resource quantity, its value in bytes rounded up
 * (Quantity.AsInt64).  Errors in upstream's words: `quantities must match
 * the regular expression ...`, "invalid max log size" (too large). */
int clm_parse_max_size(const char *s, int64_t *out, ck_error_t *err);

/* upstream NewContainerLogManager + Start: checks the options (max_files
 * > 1: "invalid MaxFiles 1, must be > 1"; the max size parses: "failed to
 * parse container log max size \"x\": ..."; at least one worker, a positive
 * interval), then starts the monitor and the workers.  A negative max size
 * disables rotation: *out is then NULL and nothing runs (upstream's stub).
 * The first listing is at once, the next ones an interval after the end of
 * the previous one (wait.Forever). */
int clm_start(const struct clm_options *o, struct clm **out, ck_error_t *err);

/* upstream Clean, for when a container is removed: removes its log and
 * every rotated file (the regular files named "<log>*" in its directory),
 * with the path checks of clm_process_container.  Any thread. */
int clm_clean(const char *pod_logs_dir, const char *log_path, ck_error_t *err);

/* Stops and joins the threads (a compression in progress is abandoned, its
 * temp file removed) and frees m.  NULL is fine. */
void clm_stop(struct clm *m);

/* ---- the steps, exposed for the unit tests ---- */

/* Go's time.Unix(t, 0).Format("20060102-150405") in the local time zone
 * (time.Now() is local). */
void clm_timestamp(time_t t, char buf[CLM_TIMESTAMP_LEN + 1]);

/* Checks that path is a log file strictly under pod_logs_dir: absolute,
 * clean (no "//", ".", ".." components, no trailing '/'), below
 * pod_logs_dir with a directory of its own.  On success *dir is the
 * directory relative to pod_logs_dir ("ns_pod_uid/container") and *base
 * the file name ("0.log"), new strings. */
int clm_split_log_path(const char *pod_logs_dir, const char *path, char **dir, char **base,
                       ck_error_t *err);

/* What one rotation does to the directory of a log named `base`, decided
 * from the names of the regular files in that directory (any order; names
 * that do not start with "<base>." are not looked at).  Every vector is
 * NULL-terminated and owned by the plan. */
struct clm_plan {
        char **unused;   /* cleanupUnusedLogs: removed first, in name order */
        char **excess;   /* removeExcessLogs: then removed, oldest first */
        char **compress; /* compressLog: then compressed, in name order */
        char *rotated;   /* rotateLatestLog: "<base>.<timestamp>" */
};
void clm_plan_make(const char *base, char *const *names, size_t n, int max_files,
                   const char *timestamp, struct clm_plan *out);
void clm_plan_release(struct clm_plan *p);

/* compressLog, in the directory dirfd: `name` gzipped to `name.gz` through
 * `name.tmp` (created with name's permission bits, written, fsynced,
 * renamed), then `name` removed.  On an error, or when *stop (may be NULL)
 * is raised between two chunks, the temp file is removed and `name` left. */
int clm_compress_at(int dirfd, const char *name, const atomic_bool *stop, ck_error_t *err);

/* Reopens the log of the container being rotated (the runtime's
 * ReopenContainerLog). */
typedef int (*clm_reopen_fn)(void *ctx, ck_error_t *err);

/* upstream rotateLog for the log `base` in the directory dirfd: lists the
 * directory, makes the plan (timestamp from now) and carries it out, stopping
 * at the first error, which names the step as upstream's does ("failed to
 * cleanup logs: ...", "failed to remove excess logs: ...", "failed to
 * compress log ...", "failed to rotate log ..."). */
int clm_rotate_at(int dirfd, const char *base, int max_files, time_t now, clm_reopen_fn reopen,
                  void *reopen_ctx, const atomic_bool *stop, ck_error_t *err);

/* What clm_process_container did. */
enum clm_outcome {
        CLM_SKIPPED = 0, /* below the max size (or no log path to look at) */
        CLM_ROTATED,
};

/* upstream processContainer for one container, on the calling thread:
 * ContainerStatus, the path check, the stat (a missing file: reopen, stat
 * again), the size check, clm_rotate_at.  `conn` is a connection of
 * `runtime`.  On an error *what is upstream's log message for the step that
 * failed ("Failed to get container status", "Failed to stat container log",
 * "Container log doesn't exist, reopen container log failed", "Failed to
 * stat container log after reopen", "Failed to rotate log for container")
 * or ckubelet's for its own checks. */
int clm_process_container(const char *pod_logs_dir, const struct clm_policy *policy,
                          const struct clm_runtime *runtime, void *conn, const char *id, time_t now,
                          const atomic_bool *stop, enum clm_outcome *outcome, const char **what,
                          ck_error_t *err);

/* upstream's rate-limited workqueue as the manager uses it (never rate
 * limited): a FIFO of container IDs without duplicates; an ID added while it
 * is being processed is queued again when clm_queue_done is called for it.
 * No locking inside. */
struct clm_queue {
        char **items; /* FIFO */
        size_t n, cap;
        char **dirty; /* queued, or to be queued again once done */
        size_t n_dirty, cap_dirty;
        char **processing;
        size_t n_processing, cap_processing;
};
void clm_queue_add(struct clm_queue *q, const char *id);
/* The oldest ID (a new string, now "processing"), or NULL when empty. */
char *clm_queue_get(struct clm_queue *q);
void clm_queue_done(struct clm_queue *q, const char *id);
void clm_queue_release(struct clm_queue *q);

#endif
