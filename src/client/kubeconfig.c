/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kubeconfig: pick the context, its cluster and its user, and turn them
 * into a rest_config.  The material (files, base64, PEM) is read in
 * kubeconfig_material.c.
 */
#include "client/kubeconfig.h"
#include "client/kubeconfig_internal.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/xalloc.h"
#include "util/yamljson.h"

#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Entry `name` of the named list root[list] (clusters, users, contexts): its
 * inner object root[list][i][inner] in *entry (NULL when null or absent) and
 * "<list>[i].<inner>" in where.  Returns 0 when found, 1 when not, -1 on a
 * malformed list (errors name the element). */
static int find_named(const json_t *root, const char *list, const char *inner, const char *name,
                      const json_t **entry, char where[static 64], ck_error_t *err)
{
        const json_t *arr = json_object_get(root, list);
        if (arr == NULL || json_is_null(arr))
                return 1;
        if (!json_is_array(arr))
                return ck_error_make(err, 0, "%s: must be a list", list);
        int found = 1;
        for (size_t i = 0; i < json_array_size(arr); i++) {
                const json_t *el = json_array_get(arr, i);
                char here[32];
                snprintf(here, sizeof(here), "%s[%zu]", list, i);
                const char *n;
                if (!json_is_object(el))
                        return ck_error_make(err, 0, "%s: must be an object", here);
                if (kubeconfig_string(el, here, "name", &n, err) < 0)
                        return -1;
                if (n == NULL || strcmp(n, name) != 0)
                        continue;
                if (found == 0)
                        return ck_error_make(err, 0, "%s.name: duplicate name \"%s\"", here, name);
                const json_t *in = json_object_get(el, inner);
                if (in != NULL && !json_is_null(in) && !json_is_object(in))
                        return ck_error_make(err, 0, "%s.%s: must be an object", here, inner);
                *entry = json_is_object(in) ? in : NULL;
                snprintf(where, 64, "%s.%s", here, inner);
                found = 0;
        }
        return found;
}

/* clientcmd's DefaultServerURL: a bare host:port gets https:// when TLS
 * material is configured, http:// otherwise; no trailing '/'. */
static int normalize_server(const char *server, bool tls, const char *where, char **out,
                            ck_error_t *err)
{
        for (const char *p = server; *p; p++)
                if ((unsigned char)*p <= 0x20 || *p == 0x7f)
                        return ck_error_make(err, 0, "%s.server: `%s` contains blanks", where,
                                             server);
        const char *sep = strstr(server, "://");
        char *url;
        if (sep == NULL)
                url = xasprintf("%s%s", tls ? "https://" : "http://", server);
        else if (strncmp(server, "https://", 8) == 0 || strncmp(server, "http://", 7) == 0)
                url = xstrdup(server);
        else
                return ck_error_make(err, 0, "%s.server: unsupported scheme in `%s`", where,
                                     server);
        /* The scheme is always there by now; trailing slashes go, the
         * scheme's own never do ("https://" has no host). */
        size_t host = (size_t)(strstr(url, "://") - url) + 3;
        size_t n = strlen(url);
        while (n > host && url[n - 1] == '/')
                url[--n] = '\0';
        if (url[host] == '\0' || url[host] == '/') {
                free(url);
                return ck_error_make(err, 0, "%s.server: no host in `%s`", where, server);
        }
        *out = url;
        return 0;
}

static int unsupported(const json_t *obj, const char *where, const char *const *keys,
                       ck_error_t *err)
{
        for (; *keys; keys++) {
                const json_t *v = json_object_get(obj, *keys);
                if (v != NULL && !json_is_null(v) && !(json_is_string(v) && !json_string_length(v)))
                        return ck_error_make(err, 0, "%s.%s: not supported", where, *keys);
        }
        return 0;
}

/* Fills the TLS fields of out; the server URL is returned in *server
 * (borrowed from cl) to be normalized once the user's material is known. */
static int decode_cluster(const json_t *cl, const char *where, const char *base_dir,
                          struct rest_config *out, const char **server, ck_error_t *err)
{
        static const char *const unsupported_keys[] = {"proxy-url", NULL};
        const char *sni;
        if (unsupported(cl, where, unsupported_keys, err) < 0 ||
            kubeconfig_string(cl, where, "server", server, err) < 0 ||
            kubeconfig_string(cl, where, "tls-server-name", &sni, err) < 0)
                return -1;
        if (*server == NULL)
                return ck_error_make(err, 0, "%s.server: required", where);
        const json_t *insecure = json_object_get(cl, "insecure-skip-tls-verify");
        if (insecure != NULL && !json_is_null(insecure) && !json_is_boolean(insecure))
                return ck_error_make(err, 0, "%s.insecure-skip-tls-verify: must be a boolean",
                                     where);
        out->insecure = json_is_true(insecure);
        if (kubeconfig_file_or_data(cl, where, "certificate-authority",
                                    "certificate-authority-data", base_dir, KUBECONFIG_PEM_CERTS,
                                    &out->ca_pem, &out->ca_len, err) < 0)
                return -1;
        if (out->insecure && out->ca_pem)
                return ck_error_make(err, 0,
                                     "%s: a certificate authority with insecure-skip-tls-verify "
                                     "is not allowed",
                                     where);
        out->tls_server_name = xstrdup(sni);
        return 0;
}

static int decode_user(const json_t *u, const char *where, const char *base_dir,
                       struct rest_config *out, ck_error_t *err)
{
        static const char *const unsupported_keys[] = {"exec", "auth-provider", "username",
                                                       "password", NULL};
        if (unsupported(u, where, unsupported_keys, err) < 0 ||
            kubeconfig_file_or_data(u, where, "client-certificate", "client-certificate-data",
                                    base_dir, KUBECONFIG_PEM_CERTS, &out->cert_pem, &out->cert_len,
                                    err) < 0 ||
            kubeconfig_file_or_data(u, where, "client-key", "client-key-data", base_dir,
                                    KUBECONFIG_PEM_KEY, &out->key_pem, &out->key_len, err) < 0 ||
            kubeconfig_token(u, where, base_dir, &out->token, err) < 0)
                return -1;
        if (out->cert_pem && !out->key_pem)
                return ck_error_make(err, 0, "%s: client-certificate without client-key", where);
        if (out->key_pem && !out->cert_pem)
                return ck_error_make(err, 0, "%s: client-key without client-certificate", where);
        if (out->cert_pem &&
            !kubeconfig_cert_matches_key(out->cert_pem, out->cert_len, out->key_pem, out->key_len))
                return ck_error_make(err, 0, "%s: the client certificate does not match its key",
                                     where);
        return 0;
}

static int decode(const json_t *root, const char *base_dir, const char *context,
                  struct rest_config *out, ck_error_t *err)
{
        if (root != NULL && !json_is_object(root))
                return ck_error_make(err, 0, "not a kubeconfig (a mapping is expected)");
        const char *ctx_name = context;
        if (ctx_name == NULL || ctx_name[0] == '\0') {
                if (kubeconfig_string(root, "", "current-context", &ctx_name, err) < 0)
                        return -1;
                if (ctx_name == NULL)
                        return ck_error_make(err, 0, "current-context: not set");
        }
        const json_t *ctx = NULL, *cl = NULL, *user = NULL;
        char ctx_where[64], cl_where[64], user_where[64];
        int rc = find_named(root, "contexts", "context", ctx_name, &ctx, ctx_where, err);
        if (rc < 0)
                return -1;
        if (rc > 0)
                return ck_error_make(err, 0, "contexts: no context named \"%s\"", ctx_name);
        const char *cl_name, *user_name;
        if (kubeconfig_string(ctx, ctx_where, "cluster", &cl_name, err) < 0 ||
            kubeconfig_string(ctx, ctx_where, "user", &user_name, err) < 0)
                return -1;
        if (cl_name == NULL)
                return ck_error_make(err, 0, "%s.cluster: required", ctx_where);
        rc = find_named(root, "clusters", "cluster", cl_name, &cl, cl_where, err);
        if (rc < 0)
                return -1;
        if (rc > 0)
                return ck_error_make(err, 0, "%s.cluster: no cluster named \"%s\" in clusters",
                                     ctx_where, cl_name);
        const char *server = NULL;
        if (decode_cluster(cl, cl_where, base_dir, out, &server, err) < 0)
                return -1;
        if (user_name != NULL) {
                rc = find_named(root, "users", "user", user_name, &user, user_where, err);
                if (rc < 0)
                        return -1;
                if (rc > 0)
                        return ck_error_make(err, 0, "%s.user: no user named \"%s\" in users",
                                             ctx_where, user_name);
                if (decode_user(user, user_where, base_dir, out, err) < 0)
                        return -1;
        }
        bool tls = out->ca_pem || out->cert_pem || out->insecure;
        return normalize_server(server, tls, cl_where, &out->server, err);
}

int kubeconfig_load_buffer(const char *buf, size_t len, const char *name, const char *base_dir,
                           const char *context, struct rest_config *out, ck_error_t *err)
{
        cleanup_json json_t *root = NULL;
        memset(out, 0, sizeof(*out));
        if (yamljson_parse(buf, len, &root, err) < 0)
                return ck_error_wrap(err, "kubeconfig `%s`", name);
        if (decode(root, base_dir, context, out, err) < 0) {
                rest_config_clear(out);
                return ck_error_wrap(err, "kubeconfig `%s`", name);
        }
        return 0;
}

static int load_file_buffer(const char *path, const char *buf, size_t len, const char *context,
                            struct rest_config *out, ck_error_t *err)
{
        /* Relative paths inside resolve against the file's absolute directory. */
        cleanup_free char *copy = xstrdup(path);
        const char *dir = dirname(copy);
        cleanup_free char *abs_dir = NULL;
        if (dir[0] != '/') {
                cleanup_free char *cwd = getcwd(NULL, 0);
                if (cwd == NULL)
                        return ck_error_make(err, errno, "kubeconfig `%s`: getcwd", path);
                abs_dir = strcmp(dir, ".") == 0 ? xstrdup(cwd) : xasprintf("%s/%s", cwd, dir);
                dir = abs_dir;
        }
        return kubeconfig_load_buffer(buf, len, path, dir, context, out, err);
}

int kubeconfig_load(const char *path, const char *context, struct rest_config *out, ck_error_t *err)
{
        char *buf = NULL;
        size_t len = 0;
        memset(out, 0, sizeof(*out));
        if (fs_read_file(path, KUBECONFIG_MAX_FILE, &buf, &len, err) < 0)
                return ck_error_wrap(err, "kubeconfig");
        int rc = load_file_buffer(path, buf, len, context, out, err);
        explicit_bzero(buf, len); /* it may hold inline keys */
        free(buf);
        return rc;
}
