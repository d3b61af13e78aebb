/* SPDX-License-Identifier: Apache-2.0 */
#include "util/netutil.h"
#include "util/cleanup.h"
#include "util/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

void net_set_nodelay(int fd)
{
        int one = 1;
        /* fails with EOPNOTSUPP on a Unix socket: nothing to do there */
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int net_send_all_watch(int fd, const void *buf, size_t len, int watch)
{
        const char *p = buf;
        while (len > 0) {
                ssize_t w = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (w > 0) {
                        p += w;
                        len -= (size_t)w;
                        continue;
                }
                if (w < 0 && errno == EINTR)
                        continue;
                if (w == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
                        return -1;
                struct pollfd pf[2] = {{.fd = fd, .events = POLLOUT},
                                       {.fd = watch, .events = POLLRDHUP}};
                if (poll(pf, 2, -1) < 0 && errno != EINTR)
                        return -1;
                if (pf[1].revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) {
                        errno = ECONNRESET;
                        return -1;
                }
        }
        return 0;
}

/* One address: a non-blocking connect, waited for until the deadline.  A
 * descriptor, or -1 with errno set. */
static int dial_addr(const struct addrinfo *ai, int64_t deadline)
{
        cleanup_close int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -1;
        int r;
        do
                r = connect(fd, ai->ai_addr, ai->ai_addrlen);
        while (r < 0 && errno == EINTR);
        if (r < 0) {
                if (errno != EINPROGRESS)
                        return -1;
                for (;;) {
                        int timeout = -1;
                        if (deadline > 0) {
                                int64_t left = deadline - fs_now_mono_ms();
                                if (left <= 0) {
                                        errno = ETIMEDOUT;
                                        return -1;
                                }
                                timeout = left > INT32_MAX ? INT32_MAX : (int)left;
                        }
                        struct pollfd pfd = {.fd = fd, .events = POLLOUT};
                        int n = poll(&pfd, 1, timeout);
                        if (n < 0 && errno == EINTR)
                                continue;
                        if (n < 0)
                                return -1;
                        if (n > 0)
                                break;
                }
                int soerr = 0;
                socklen_t len = sizeof(soerr);
                if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0)
                        return -1;
                if (soerr != 0) {
                        errno = soerr;
                        return -1;
                }
        }
        net_set_nodelay(fd);
        int ret = fd;
        fd = -1;
        return ret;
}

int net_tcp_dial(const char *host, const char *port, int64_t deadline_ms, bool nonblock,
                 ck_error_t *err)
{
        struct addrinfo hints = {
            .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
        struct addrinfo *res = NULL;
        int rv = getaddrinfo(host, port, &hints, &res);
        if (rv == EAI_SYSTEM && errno != 0)
                return ck_error_make(err, errno, "resolve `%s`", host);
        if (rv != 0)
                return ck_error_make(err, 0, "resolve `%s`: %s", host, gai_strerror(rv));
        int fd = -1, errnum = EADDRNOTAVAIL;
        for (const struct addrinfo *ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
                fd = dial_addr(ai, deadline_ms);
                if (fd < 0)
                        errnum = errno;
                if (errnum == ETIMEDOUT)
                        break;
        }
        freeaddrinfo(res);
        if (fd < 0)
                return ck_error_make(err, errnum, "connect `%s:%s`", host, port);
        if (!nonblock) {
                int fl = fcntl(fd, F_GETFL);
                if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
                        int e = errno;
                        close(fd);
                        return ck_error_make(err, e, "connect `%s:%s`: make it blocking", host,
                                             port);
                }
        }
        return fd;
}

int net_unix_dial(const char *path, int64_t deadline_ms, ck_error_t *err)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        if (strlen(path) >= sizeof(sa.sun_path))
                return ck_error_make(err, ENAMETOOLONG, "connect `%s`", path);
        memcpy(sa.sun_path, path, strlen(path) + 1);

        cleanup_close int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return ck_error_make(err, errno, "socket");
        for (;;) {
                if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
                        break;
                if (errno == EINTR)
                        continue;
                if (errno != EAGAIN && errno != EINPROGRESS)
                        return ck_error_make(err, errno, "connect `%s`", path);
                /* the listen backlog is full: again shortly, within the deadline */
                if (deadline_ms > 0 && fs_now_mono_ms() >= deadline_ms)
                        return ck_error_make(err, ETIMEDOUT, "connect `%s`", path);
                poll(NULL, 0, 10);
        }
        int ret = fd;
        fd = -1;
        return ret;
}
