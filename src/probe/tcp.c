/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The tcpSocket action (upstream pkg/probe/tcp): success when a TCP
 * connection to host:port opens within the timeout; it is closed at once.
 * Like upstream's probe dialer, SO_LINGER {on, 1 s}.  Messages follow Go's
 * dial errors ("dial tcp 10.1.2.3:80: connect: connection refused").
 */
#include "probe/probe_internal.h"

#include "util/fsutil.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

/* strerror as Go's syscall errors read: lower case. New string. */
static char *go_strerror(int errnum)
{
        char *s = xstrdup(strerror(errnum));
        if (s[0] != '\0')
                s[0] = (char)tolower((unsigned char)s[0]);
        return s;
}

/* Connects to one address before the deadline.  0, or an errno value. */
static int connect_addr(const struct addrinfo *ai, int64_t deadline_ms)
{
        cleanup_close int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return errno;
        struct linger lg = {.l_onoff = 1, .l_linger = 1};
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
        if (TEMP_FAILURE_RETRY_INT(connect(fd, ai->ai_addr, ai->ai_addrlen)) == 0)
                return 0;
        if (errno != EINPROGRESS)
                return errno;
        for (;;) {
                int64_t left = deadline_ms - fs_now_mono_ms();
                if (left <= 0)
                        return ETIMEDOUT;
                struct pollfd pfd = {.fd = fd, .events = POLLOUT};
                int n = poll(&pfd, 1, left > INT32_MAX ? INT32_MAX : (int)left);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return errno;
                if (n > 0)
                        break;
        }
        int soerr = 0;
        socklen_t len = sizeof(soerr);
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0)
                return errno;
        return soerr;
}

enum probe_outcome probe__tcp(const char *host, int port, int64_t timeout_ms, char **message)
{
        int64_t deadline = fs_now_mono_ms() + (timeout_ms > 0 ? timeout_ms : 1000);
        cleanup_free char *addr = probe__join_host_port(host, port);
        char service[16];
        snprintf(service, sizeof(service), "%d", port);
        struct addrinfo hints = {
            .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
        struct addrinfo *res = NULL;
        int rv = getaddrinfo(host, service, &hints, &res);
        if (rv != 0) {
                *message = xasprintf("dial tcp: lookup %s: %s", host,
                                     rv == EAI_SYSTEM ? strerror(errno) : gai_strerror(rv));
                return PROBE_OUTCOME_FAILURE;
        }
        int errnum = EADDRNOTAVAIL;
        for (const struct addrinfo *ai = res; ai != NULL; ai = ai->ai_next) {
                errnum = connect_addr(ai, deadline);
                if (errnum == 0 || errnum == ETIMEDOUT)
                        break;
        }
        freeaddrinfo(res);
        if (errnum == 0)
                return PROBE_OUTCOME_SUCCESS;
        if (errnum == ETIMEDOUT) {
                *message = xasprintf("dial tcp %s: i/o timeout", addr);
        } else {
                cleanup_free char *why = go_strerror(errnum);
                *message = xasprintf("dial tcp %s: connect: %s", addr, why);
        }
        return PROBE_OUTCOME_FAILURE;
}
