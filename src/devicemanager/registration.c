/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Registration service (upstream devicemanager/plugin/v1beta1/
 * server.go): kubelet.sock in the device plugin directory, made afresh at
 * start (the sockets a previous run left are removed: plugins watch for
 * kubelet.sock and register again).  Register checks the API version and
 * the resource name, then reaches the plugin before it answers: a plugin
 * whose options cannot be had is refused, and ListAndWatch starts for one
 * that is accepted.
 */
#include "devicemanager/devicemanager_internal.h"
#include "metrics/kubelet_metrics.h"
#include "util/cleanup.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PATH_REGISTER "/v1beta1.Registration/Register"

/* ---- names ---- */

/* A DNS-1123 subdomain (at most 253 characters). */
static bool dns1123_subdomain(const char *s, size_t n)
{
        if (n == 0 || n > 253)
                return false;
        size_t label = 0;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];
                if (c == '.') {
                        if (label == 0 || s[i - 1] == '-')
                                return false;
                        label = 0;
                        continue;
                }
                bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
                if (!alnum && c != '-')
                        return false;
                if (label == 0 && c == '-')
                        return false;
                label++;
        }
        return label > 0 && s[n - 1] != '-';
}

/* A qualified name's name part: 1-63 of [-A-Za-z0-9_.], alphanumeric at
 * both ends. */
static bool qualified_name_part(const char *s)
{
        size_t n = strlen(s);
        if (n == 0 || n > 63 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
                        return false;
        return true;
}

bool dm_is_extended_resource_name(const char *name)
{
        /* IsNativeResource: no '/', or kubernetes.io/ in it */
        if (strchr(name, '/') == NULL || strstr(name, "kubernetes.io/") != NULL)
                return false;
        if (strncmp(name, "requests.", 9) == 0)
                return false;
        /* "requests." + name is a qualified name: prefix/name */
        cleanup_free char *q = xasprintf("requests.%s", name);
        char *slash = strchr(q, '/');
        if (strchr(slash + 1, '/') != NULL)
                return false;
        return dns1123_subdomain(q, (size_t)(slash - q)) && qualified_name_part(slash + 1);
}

/* ---- Register ---- */

static int do_register(void *ctx, const uint8_t *req, size_t req_len, int64_t timeout_ms,
                       uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        struct devicemanager *m = ctx;
        V1beta1__RegisterRequest *r = v1beta1__register_request__unpack(NULL, req_len, req);
        if (r == NULL)
                return ck_error_make_code(err, GRPC_INTERNAL, "grpc: error unmarshalling request");
        const char *version = r->version ? r->version : "";
        const char *name = r->resource_name ? r->resource_name : "";
        const char *endpoint = r->endpoint ? r->endpoint : "";
        kmetrics_device_plugin_registration(name);
        LOG_INFO(2, "Got registration request from device plugin with resource",
                 "resourceName=\"%s\" version=\"%s\" endpoint=\"%s\"", name, version, endpoint);
        int rc = 0;
        if (strcmp(version, DM_API_VERSION) != 0) {
                rc = ck_error_make(err, 0,
                                   "requested API version \"%s\" is not supported by kubelet. "
                                   "Supported version is [\"" DM_API_VERSION "\"]",
                                   version);
        } else if (!dm_is_extended_resource_name(name)) {
                rc = ck_error_make(err, 0, "the ResourceName \"%s\" is invalid", name);
        } else {
                /* the plugin's socket is in the device plugin directory (no
                 * '..': never out of it) */
                const char *rel = endpoint;
                while (*rel == '/')
                        rel++;
                bool escapes = *rel == '\0' || strcmp(rel, "..") == 0 ||
                               strncmp(rel, "../", 3) == 0 || strstr(rel, "/../") != NULL ||
                               (strlen(rel) >= 3 && strcmp(rel + strlen(rel) - 3, "/..") == 0);
                if (escapes) {
                        rc = ck_error_make(err, 0,
                                           "invalid endpoint \"%s\": a socket in the device "
                                           "plugin directory",
                                           endpoint);
                } else {
                        cleanup_free char *socket = xasprintf("%s/%s", m->dir, rel);
                        rc =
                            dm_endpoint_connect(m, name, socket,
                                                timeout_ms > 0 && timeout_ms < DM_OPTIONS_TIMEOUT_MS
                                                    ? timeout_ms
                                                    : DM_OPTIONS_TIMEOUT_MS,
                                                err);
                }
        }
        if (rc < 0)
                LOG_ERROR("Device plugin registration failed", "resourceName=\"%s\" err=\"%s\"",
                          name, ck_error_msg(*err));
        v1beta1__register_request__free_unpacked(r, NULL);
        if (rc < 0)
                return -1;
        *resp = NULL;
        *resp_len = 0; /* Empty */
        return 0;
}

/* ---- the socket ---- */

/* upstream CleanupPluginDirectory: every unix socket goes (the
 * checkpoint and anything else stay). */
static int cleanup_dir(struct devicemanager *m, ck_error_t *err)
{
        int dfd = open(m->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return ck_error_make(err, errno, "open `%s`", m->dir);
        DIR *d = fdopendir(dfd);
        if (d == NULL) {
                int e = errno;
                close(dfd);
                return ck_error_make(err, e, "read `%s`", m->dir);
        }
        int rc = 0;
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
                if (strcmp(de->d_name, DM_CHECKPOINT_NAME) == 0)
                        continue;
                struct stat st;
                if (fstatat(dfd, de->d_name, &st, 0) < 0) {
                        LOG_INFO(4, "Cannot stat a file of the device plugin directory",
                                 "path=\"%s/%s\" err=\"%s\"", m->dir, de->d_name, strerror(errno));
                        continue;
                }
                if (!S_ISSOCK(st.st_mode))
                        continue;
                if (unlinkat(dfd, de->d_name, 0) < 0 && errno != ENOENT && rc == 0)
                        rc = ck_error_make(err, errno, "remove `%s/%s`", m->dir, de->d_name);
                else
                        LOG_INFO(4, "Removed a socket of a previous run", "path=\"%s/%s\"", m->dir,
                                 de->d_name);
        }
        closedir(d);
        return rc;
}

int dm_registration_start(struct devicemanager *m, ck_error_t *err)
{
        if (cleanup_dir(m, err) < 0)
                return -1;
        m->register_method =
            (struct grpc_method){.path = PATH_REGISTER, .fn = do_register, .ctx = m};
        if (grpc_server_start(m->socket_path, &m->register_method, 1, &m->server, err) < 0)
                return ck_error_wrap(err, "serve device plugin registration");
        LOG_INFO(2, "Serving device plugin registration", "socket=\"%s\"", m->socket_path);
        return 0;
}

void dm_registration_stop(struct devicemanager *m)
{
        grpc_server_stop(m->server);
        m->server = NULL;
}
