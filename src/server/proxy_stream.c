/* SPDX-License-Identifier: Apache-2.0 */
#include "server/proxy_stream.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/netutil.h"
#include "util/xalloc.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define PROXY_CONNECT_TIMEOUT_MS 10000
#define PROXY_HEAD_MAX 16384
#define PROXY_BUF 65536

/* "http://host:port/path?query": host and port (new strings), path (a
 * pointer into url, "/" when absent). */
static int split_url(const char *url, char **host, char **port, const char **path, ck_error_t *err)
{
        *path = "/";
        if (strncmp(url, "http://", 7) != 0)
                return ck_error_make(err, 0, "streaming URL `%s`: only http:// is supported", url);
        const char *h = url + 7;
        const char *slash = strchr(h, '/');
        const char *end = slash ? slash : h + strlen(h);
        *path = slash ? slash : "/";
        const char *colon = NULL;
        if (*h == '[') { /* [v6]:port */
                const char *rb = memchr(h, ']', (size_t)(end - h));
                if (rb == NULL)
                        return ck_error_make(err, 0, "streaming URL `%s`: bad host", url);
                *host = xstrndup(h + 1, (size_t)(rb - h - 1));
                colon = rb + 1 < end && rb[1] == ':' ? rb + 1 : NULL;
        } else {
                colon = memchr(h, ':', (size_t)(end - h));
                *host = xstrndup(h, (size_t)((colon ? colon : end) - h));
        }
        *port = colon ? xstrndup(colon + 1, (size_t)(end - colon - 1)) : xstrdup("80");
        return 0;
}

static int send_all(int fd, const char *buf, size_t len)
{
        while (len > 0) {
                ssize_t w = send(fd, buf, len, MSG_NOSIGNAL);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0)
                        return -1;
                buf += w;
                len -= (size_t)w;
        }
        return 0;
}

/* The head for the runtime: its path, its host, the client's fields but
 * Host and Authorization. */
static char *backend_head(const struct httpd_request *req, const char *host, const char *port,
                          const char *path)
{
        const char *h = req->head;
        const char *end = h + req->parsed->head_len;
        const char *line = memchr(h, '\n', (size_t)(end - h)); /* past the request line */
        size_t cap = req->parsed->head_len + strlen(path) + strlen(host) + 64;
        char *out = xmalloc(cap + 1);
        int n =
            snprintf(out, cap, "%s %s HTTP/1.1\r\nHost: %s:%s\r\n", req->method, path, host, port);
        size_t o = (size_t)n;
        for (const char *p = line ? line + 1 : end; p < end;) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                const char *next = nl ? nl + 1 : end;
                size_t len = (size_t)((nl ? nl : end) - p);
                if (len > 0 && p[len - 1] == '\r')
                        len--;
                if (len == 0)
                        break;
                if (strncasecmp(p, "host:", 5) != 0 && strncasecmp(p, "authorization:", 14) != 0) {
                        memcpy(out + o, p, len);
                        o += len;
                        out[o++] = '\r';
                        out[o++] = '\n';
                }
                p = next;
        }
        memcpy(out + o, "\r\n", 3);
        return out;
}

/* Reads the runtime's response head (into buf, which may then hold more);
 * its status, or < 0. */
static int read_response_head(int fd, char *buf, size_t cap, size_t *len, size_t *head_len)
{
        *len = 0;
        for (;;) {
                struct pollfd p = {.fd = fd, .events = POLLIN};
                int r = poll(&p, 1, PROXY_CONNECT_TIMEOUT_MS);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r <= 0)
                        return -1;
                ssize_t n = recv(fd, buf + *len, cap - *len, 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return -1;
                *len += (size_t)n;
                buf[*len] = '\0';
                const char *e = strstr(buf, "\r\n\r\n");
                if (e) {
                        *head_len = (size_t)(e + 4 - buf);
                        int status;
                        if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1)
                                return -1;
                        return status;
                }
                if (*len == cap)
                        return -1;
        }
}

/* Copies both ways until either side ends (upstream closes both then). */
static void pump(struct httpd_conn *c, int backend)
{
        char *buf = xmalloc(PROXY_BUF);
        int cfd = httpd_raw_fd(c);
        for (;;) {
                if (httpd_stopping(c))
                        break;
                bool client_ready = httpd_raw_pending(c) > 0;
                struct pollfd p[2] = {{.fd = cfd, .events = POLLIN},
                                      {.fd = backend, .events = POLLIN}};
                int r = poll(p, 2, client_ready ? 0 : 1000);
                if (r < 0 && errno != EINTR)
                        break;
                if (r <= 0 && !client_ready)
                        continue;
                if (client_ready || p[0].revents) {
                        ssize_t n = httpd_raw_read(c, buf, PROXY_BUF);
                        if (n == 0 || (n < 0 && n != -EAGAIN))
                                break;
                        if (n > 0 && send_all(backend, buf, (size_t)n) < 0)
                                break;
                }
                if (p[1].revents) {
                        ssize_t n = recv(backend, buf, PROXY_BUF, MSG_DONTWAIT);
                        if (n < 0 && (errno == EINTR || errno == EAGAIN))
                                continue;
                        if (n <= 0)
                                break;
                        if (httpd_raw_write(c, buf, (size_t)n) < 0)
                                break;
                }
        }
        free(buf);
        httpd_raw_shutdown_write(c);
}

int proxy_stream(struct httpd_conn *c, const struct httpd_request *req, const char *url,
                 ck_error_t *err)
{
        if (!req->upgrade) {
                static const char msg[] = "Upgrade request required";
                httpd_respond(c, 400, NULL, msg, sizeof(msg) - 1);
                return 0;
        }
        cleanup_free char *host = NULL, *port = NULL;
        const char *path;
        if (split_url(url, &host, &port, &path, err) < 0)
                return -1;
        cleanup_close int fd =
            net_tcp_dial(host, port, fs_now_mono_ms() + PROXY_CONNECT_TIMEOUT_MS, false, err);
        if (fd < 0)
                return ck_error_wrap(err, "streaming server");
        /* a runtime that stops reading does not hold the stream forever */
        struct timeval tv = {.tv_sec = PROXY_CONNECT_TIMEOUT_MS / 1000};
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
        cleanup_free char *head = backend_head(req, host, port, path);
        if (send_all(fd, head, strlen(head)) < 0)
                return ck_error_make(err, errno, "streaming server: send the request");
        char *resp = xmalloc(PROXY_HEAD_MAX + 1);
        size_t len = 0, head_len = 0;
        int status = read_response_head(fd, resp, PROXY_HEAD_MAX, &len, &head_len);
        if (status < 0) {
                free(resp);
                return ck_error_make(err, 0, "streaming server: no response to the upgrade");
        }
        const char *pending;
        size_t pending_len;
        httpd_hijack(c, &pending, &pending_len);
        /* the runtime's answer as it came, what followed it included */
        int rc = httpd_raw_write(c, resp, len);
        free(resp);
        if (rc < 0)
                return 0;
        if (status != 101) { /* an error: relay its body until the runtime closes */
                char buf[4096];
                ssize_t n;
                struct pollfd p = {.fd = fd, .events = POLLIN};
                while (poll(&p, 1, PROXY_CONNECT_TIMEOUT_MS) > 0 &&
                       (n = recv(fd, buf, sizeof(buf), 0)) > 0)
                        if (httpd_raw_write(c, buf, (size_t)n) < 0)
                                break;
                httpd_raw_shutdown_write(c);
                return 0;
        }
        if (pending_len > 0 && send_all(fd, pending, pending_len) < 0)
                return 0;
        pump(c, fd);
        return 0;
}
