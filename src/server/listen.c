/* SPDX-License-Identifier: Apache-2.0 */
#include "server/listen.h"
#include "util/cleanup.h"

#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

int server_listen_tcp(const char *address, int port, int backlog, int *fd, int *bound_port,
                      ck_error_t *err)
{
        if (port < 0 || port > 65535)
                return ck_error_make(err, 0, "invalid port %d", port);
        const char *shown = address != NULL && address[0] != '\0' ? address : "0.0.0.0";
        char host[64];
        size_t n = strlen(shown);
        bool bracketed = n > 2 && shown[0] == '[' && shown[n - 1] == ']';
        if (bracketed)
                n -= 2;
        if (n >= sizeof(host))
                return ck_error_make(err, 0, "invalid address `%s`", shown);
        memcpy(host, shown + (bracketed ? 1 : 0), n);
        host[n] = '\0';

        struct addrinfo hints = {.ai_flags = AI_NUMERICHOST | AI_PASSIVE,
                                 .ai_family = AF_UNSPEC,
                                 .ai_socktype = SOCK_STREAM};
        struct addrinfo *ai = NULL;
        if (getaddrinfo(host, NULL, &hints, &ai) != 0 || ai == NULL)
                return ck_error_make(err, 0, "invalid address `%s`: not an IPv4 or IPv6 address",
                                     shown);
        struct sockaddr_storage ss;
        socklen_t ss_len = ai->ai_addrlen;
        memcpy(&ss, ai->ai_addr, ss_len);
        freeaddrinfo(ai);
        if (ss.ss_family == AF_INET6)
                ((struct sockaddr_in6 *)&ss)->sin6_port = htons((uint16_t)port);
        else
                ((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)port);

        cleanup_close int s = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (s < 0)
                return ck_error_make(err, errno, "socket");
        int one = 1, zero = 0;
        if (setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
                return ck_error_make(err, errno, "setsockopt SO_REUSEADDR");
        if (ss.ss_family == AF_INET6 &&
            setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)) < 0)
                return ck_error_make(err, errno, "setsockopt IPV6_V6ONLY");
        if (bind(s, (struct sockaddr *)&ss, ss_len) < 0)
                return ck_error_make(err, errno, "bind %s port %d", shown, port);
        if (listen(s, backlog) < 0)
                return ck_error_make(err, errno, "listen on %s port %d", shown, port);
        socklen_t blen = sizeof(ss);
        if (getsockname(s, (struct sockaddr *)&ss, &blen) < 0)
                return ck_error_make(err, errno, "getsockname");
        *bound_port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                     : ((struct sockaddr_in *)&ss)->sin_port);
        *fd = s;
        s = -1;
        return 0;
}
