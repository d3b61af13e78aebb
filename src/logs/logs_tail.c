/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where `--tail N` starts reading (upstream's findTailLineStartIndex): the
 * file is read backwards in blocks until the (N+1)-th '\n' from the end.
 */
#include "logs/logs_internal.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TAIL_BLOCK (64 * 1024)

/* Reads exactly n bytes at off. */
static int pread_full(int fd, char *buf, size_t n, int64_t off, ck_error_t *err)
{
        size_t got = 0;
        while (got < n) {
                ssize_t r = pread(fd, buf + got, n - got, (off_t)(off + (int64_t)got));
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return ck_error_make(err, errno, "read");
                if (r == 0)
                        return ck_error_make(err, 0, "read: file shrank while reading");
                got += (size_t)r;
        }
        return 0;
}

int logs_tail_start(int fd, int64_t n, int64_t *start, ck_error_t *err)
{
        *start = 0;
        if (n < 0)
                return 0;
        struct stat st;
        if (fstat(fd, &st) < 0)
                return ck_error_make(err, errno, "stat");
        cleanup_free char *buf = xmalloc(TAIL_BLOCK);
        int64_t pos = st.st_size, seen = 0;
        while (pos > 0) {
                size_t len = pos < TAIL_BLOCK ? (size_t)pos : TAIL_BLOCK;
                pos -= (int64_t)len;
                if (pread_full(fd, buf, len, pos, err) < 0)
                        return -1;
                for (const char *end = buf + len, *nl;
                     (nl = memrchr(buf, '\n', (size_t)(end - buf))); end = nl) {
                        if (seen++ == n) {
                                *start = pos + (nl - buf) + 1;
                                return 0;
                        }
                }
        }
        return 0;
}
