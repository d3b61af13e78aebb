/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Filesystem helpers: every fd O_CLOEXEC, EINTR retried, paths resolved
 * under a directory (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS where
 * it matters), and atomic writes (temp file, fsync, rename, fsync dir).
 */
#ifndef CK_UTIL_FSUTIL_H
#define CK_UTIL_FSUTIL_H

#include "util/error.h"

#include <dirent.h>

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* mkdir -p with mode for the directories it creates. */
int fs_mkdir_p(const char *path, mode_t mode, ck_error_t *err);

/* Reads a whole file (at most max bytes; larger is an error). *buf is NUL
 * terminated; *len excludes the NUL. */
int fs_read_file(const char *path, size_t max, char **buf, size_t *len, ck_error_t *err);

/* Atomically replaces path with data (mode applied before the rename). */
int fs_write_file_atomic(const char *path, const void *data, size_t len, mode_t mode,
                         ck_error_t *err);

/* Opens `rel` under the directory fd dirfd without leaving it (no `..`, no
 * absolute path, no symlink component).  Returns the fd (O_CLOEXEC). */
int fs_open_beneath(int dirfd, const char *rel, int flags, mode_t mode, ck_error_t *err);

/* Opens `path` as if dirfd were the root (Go's securejoin.SecureJoin, the
 * kernel's RESOLVE_IN_ROOT): a leading '/', `..` and symlinks, absolute
 * ones included, resolve inside dirfd, never out of it.  Kernels without
 * openat2: `path` without its leading slashes through fs_open_beneath
 * (stricter: no symlink, no `..`).  Returns the fd (O_CLOEXEC). */
int fs_open_in_root(int dirfd, const char *path, int flags, ck_error_t *err);

/* The fallback fs_open_beneath uses on kernels without openat2 (ENOSYS):
 * walks `rel` one component at a time with O_NOFOLLOW.  Same contract;
 * exposed so that tests exercise it on any kernel. */
int fs_open_beneath_walk(int dirfd, const char *rel, int flags, mode_t mode, ck_error_t *err);

/* Opens the directory path for reading (O_CLOEXEC); *out is NULL, and 0
 * returned, when it does not exist.  dirfd(*out) gives its descriptor for
 * the *at calls.  Errors: "open `<path>`: <errno>", "read `<path>`: ...". */
int fs_opendir_if_exists(const char *path, DIR **out, ck_error_t *err);

/* rm -rf of path, not crossing into other filesystems (a mount point left
 * under it is an error), not following symlinks. */
int fs_remove_all(const char *path, ck_error_t *err);

/* CLOCK_MONOTONIC and CLOCK_REALTIME in milliseconds / nanoseconds. */
int64_t fs_now_mono_ms(void);
int64_t fs_now_mono_us(void);
int64_t fs_now_real_ns(void);

/* RFC 3339 timestamp "2026-11-29T23:18:06Z" for a realtime ns value
 * (written into buf of at least 32 bytes); returns buf. */
char *fs_format_rfc3339(int64_t real_ns, char *buf);

#endif
