/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The secure port's routes (see kubelet_server.h).  Each request runs on a
 * connection thread of the secure server; what it reads is the status store
 * (thread-safe) and the runtime, through a CRI client of its own.
 *
 * Container logs follow upstream's GetKubeletContainerLogs: the pod by
 * namespace/name, the container by name in its spec, the container ID from
 * its latest status (validateContainerLogStatus: the running or terminated
 * one, the last terminated one with previous=true, an error naming the
 * waiting reason otherwise), the log path from CRI ContainerStatus, and the
 * file read by logs/logs.h.  Errors before the first byte are answered
 * 400/404 with upstream's words; the stream begins with the first byte.
 */
#include "kubelet/kubelet_server.h"
#include "cri/cri.h"
#include "logs/logs.h"
#include "server/auth.h"
#include "server/secure.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/strquote.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TEXT_PLAIN "text/plain; charset=utf-8"
/* a chunk, its size line and CRLF fit one TLS record (16 KiB) */
#define LOG_CHUNK (16384 - 32)

struct kubelet_server {
        const struct kubelet_config *cfg;
        struct status_store *status;
        struct server_auth *auth;
        struct secure_server *secure;
        atomic_bool stopping;
};

static void respond_text(struct secure_conn *c, int status, const char *text)
{
        secure_respond(c, status, TEXT_PLAIN, text, strlen(text));
}

static void respond_fmt(struct secure_conn *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void respond_fmt(struct secure_conn *c, int status, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        cleanup_free char *text = NULL;
        if (vasprintf(&text, fmt, ap) < 0)
                text = NULL;
        va_end(ap);
        respond_text(c, status, text ? text : "");
}

/* ---- container logs ----------------------------------------------------- */

static bool pod_has_container(const struct pod *pod, const char *name)
{
        for (size_t i = 0; i < pod->n_containers; i++)
                if (strcmp(pod->containers[i].name, name) == 0)
                        return true;
        for (size_t i = 0; i < pod->n_init_containers; i++)
                if (strcmp(pod->init_containers[i].name, name) == 0)
                        return true;
        return false;
}

static const json_t *find_container_status(const json_t *status, const char *name)
{
        static const char *const lists[] = {"containerStatuses", "initContainerStatuses",
                                            "ephemeralContainerStatuses"};
        for (size_t l = 0; l < sizeof(lists) / sizeof(lists[0]); l++) {
                size_t i;
                const json_t *cs;
                json_array_foreach(json_object_get(status, lists[l]), i, cs)
                {
                        const char *n = json_string_value(json_object_get(cs, "name"));
                        if (n && strcmp(n, name) == 0)
                                return cs;
                }
        }
        return NULL;
}

static const char *str_at(const json_t *obj, const char *a, const char *b)
{
        const json_t *v = json_object_get(json_object_get(obj, a), b);
        const char *s = json_string_value(v);
        return s && *s ? s : NULL;
}

const char *kubelet_server_log_container_id(const json_t *status, const char *pod,
                                            const char *container, bool previous, char **why)
{
        const json_t *cs = find_container_status(status, container);
        if (cs == NULL) {
                *why = xasprintf("container \"%s\" in pod \"%s\" is not available", container, pod);
                return NULL;
        }
        const json_t *state = json_object_get(cs, "state");
        const json_t *last = json_object_get(cs, "lastState");
        const json_t *last_term = json_object_get(last, "terminated");
        const char *last_id = str_at(last, "terminated", "containerID");
        if (previous) {
                if (last_id == NULL)
                        *why = xasprintf("previous terminated container \"%s\" in pod \"%s\" not "
                                         "found",
                                         container, pod);
                return last_id;
        }
        if (json_object_get(state, "running")) {
                const char *id = json_string_value(json_object_get(cs, "containerID"));
                if (id && *id)
                        return id;
        } else if (json_object_get(state, "terminated")) {
                const char *id = str_at(state, "terminated", "containerID");
                if (id == NULL)
                        id = last_id;
                if (id == NULL)
                        *why = xasprintf("container \"%s\" in pod \"%s\" is terminated", container,
                                         pod);
                return id;
        } else if (last_term) {
                if (last_id == NULL)
                        *why = xasprintf("container \"%s\" in pod \"%s\" is terminated", container,
                                         pod);
                return last_id;
        } else if (json_object_get(state, "waiting")) {
                const char *reason = str_at(state, "waiting", "reason");
                if (reason && strcmp(reason, "ErrImagePull") == 0)
                        *why = xasprintf("container \"%s\" in pod \"%s\" is waiting to start: "
                                         "image can't be pulled",
                                         container, pod);
                else if (reason && strcmp(reason, "ImagePullBackOff") == 0)
                        *why = xasprintf("container \"%s\" in pod \"%s\" is waiting to start: "
                                         "trying and failing to pull image",
                                         container, pod);
                else
                        *why = xasprintf("container \"%s\" in pod \"%s\" is waiting to start: %s",
                                         container, pod, reason ? reason : "");
                return NULL;
        }
        *why = xasprintf("container \"%s\" in pod \"%s\" is waiting to start - no logs yet",
                         container, pod);
        return NULL;
}

struct log_stream {
        struct kubelet_server *srv;
        struct secure_conn *conn;
        struct cri_client *cri;
        const char *id; /* the runtime's container ID */
        bool begun, gone;
        char *run_error; /* a CRI error while following (owned) */
        /* lines are gathered into chunks of up to LOG_CHUNK bytes (a TLS
         * record and chunk header per line cost 12x the CPU); sent when full,
         * when the reader reaches the end of the file (running() is asked
         * then, before a follower waits) and at the end */
        size_t len;
        char buf[LOG_CHUNK];
};

static int stream_flush(struct log_stream *ls)
{
        if (ls->gone)
                return -1;
        if (!ls->begun) {
                ls->begun = true;
                if (secure_stream_begin(ls->conn, 200, TEXT_PLAIN) < 0) {
                        ls->gone = true;
                        return -1;
                }
        }
        if (ls->len > 0 && secure_stream_write(ls->conn, ls->buf, ls->len) < 0) {
                ls->gone = true;
                return -1;
        }
        ls->len = 0;
        return 0;
}

static int stream_write_cb(void *ctx, const char *buf, size_t len)
{
        struct log_stream *ls = ctx;
        if (ls->gone)
                return -1;
        if (ls->len + len > sizeof(ls->buf) && stream_flush(ls) < 0)
                return -1;
        if (len > sizeof(ls->buf)) { /* a long line: as it is */
                if (secure_stream_write(ls->conn, buf, len) < 0) {
                        ls->gone = true;
                        return -1;
                }
                return 0;
        }
        memcpy(ls->buf + ls->len, buf, len);
        ls->len += len;
        return 0;
}

/* follow: the container still runs and somebody still reads. */
static bool stream_running_cb(void *ctx)
{
        struct log_stream *ls = ctx;
        if (stream_flush(ls) < 0 || secure_conn_closed(ls->conn) || atomic_load(&ls->srv->stopping))
                return false;
        Runtime__V1__ContainerStatusResponse *r = NULL;
        cleanup_error ck_error_t err = NULL;
        if (cri_container_status(ls->cri, ls->id, &r, &err) < 0) {
                /* a runtime being restarted: keep following, as upstream;
                 * another error ends the stream with its text */
                if (err->code == CRI_CODE_UNAVAILABLE)
                        return true;
                free(ls->run_error);
                ls->run_error = xstrdup(ck_error_msg(err));
                return false;
        }
        bool running =
            r->status && r->status->state == RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING;
        runtime__v1__container_status_response__free_unpacked(r, NULL);
        return running;
}

static void serve_logs(struct kubelet_server *srv, const struct secure_request *req,
                       struct secure_conn *c)
{
        /* /containerLogs/<namespace>/<pod>/<container> */
        const char *rest = req->path + strlen("/containerLogs/");
        cleanup_free char *copy = xstrdup(rest);
        char *ns = copy, *name = NULL, *container = NULL;
        char *slash = strchr(ns, '/');
        if (slash) {
                *slash = '\0';
                name = slash + 1;
                slash = strchr(name, '/');
                if (slash) {
                        *slash = '\0';
                        container = slash + 1;
                }
        }
        if (name == NULL || *name == '\0') {
                respond_text(c, 400, "{\"message\": \"Missing podID.\"}");
                return;
        }
        if (container == NULL || *container == '\0' || strchr(container, '/')) {
                respond_text(c, 400, "{\"message\": \"Missing container name.\"}");
                return;
        }
        if (*ns == '\0') {
                respond_text(c, 400, "{\"message\": \"Missing podNamespace.\"}");
                return;
        }

        struct logs_options opt;
        cleanup_error ck_error_t err = NULL;
        if (logs_options_parse(req->query, req->query ? strlen(req->query) : 0, &opt, &err) < 0) {
                respond_text(c, err->code == 422 ? 422 : 400, ck_error_msg(err));
                return;
        }

        if (opt.stream != LOGS_STREAM_ALL) { /* PodLogsQuerySplitStreams: alpha, off */
                respond_fmt(c, 400,
                            "unable to return the given log stream: \"%s\". Please enable "
                            "PodLogsQuerySplitStreams feature gate in kubelet",
                            opt.stream == LOGS_STREAM_STDOUT ? "Stdout" : "Stderr");
                logs_options_release(&opt);
                return;
        }
        cleanup_json json_t *status = NULL;
        struct pod *pod = status_store_find_by_name(srv->status, ns, name, &status);
        if (pod == NULL) {
                logs_options_release(&opt);
                {
                        respond_fmt(c, 404, "pod \"%s\" does not exist", name);
                        return;
                }
        }
        if (!pod_has_container(pod, container)) {
                pod_unref(pod);
                logs_options_release(&opt);
                {
                        respond_fmt(c, 404, "container \"%s\" not found in pod \"%s\"", container,
                                    name);
                        return;
                }
        }
        if (status == NULL) /* not synced yet: what the source says */
                status = json_incref(json_object_get(pod->raw, "status"));
        pod_unref(pod);

        cleanup_free char *why = NULL;
        const char *full_id =
            kubelet_server_log_container_id(status, name, container, opt.previous, &why);
        if (full_id == NULL) {
                logs_options_release(&opt);
                {
                        respond_text(c, 400, why);
                        return;
                }
        }
        const char *sep = strstr(full_id, "://");
        const char *id = sep ? sep + 3 : full_id;

        /* From here on upstream has committed to 200 (a zero-byte write that
         * flushes the headers, so that a follower of a silent container gets
         * its answer at once): a runtime or file error ends the body as text,
         * as its WriteError does once the headers are out. */
        struct cri_client *cri = cri_client_new(srv->cfg->container_runtime_endpoint,
                                                srv->cfg->runtime_request_timeout_ms);
        struct log_stream ls = {.srv = srv, .conn = c, .cri = cri, .id = id};
        struct logs_sink sink = {
            .write = stream_write_cb,
            .running = stream_running_cb,
            .ctx = &ls,
            .stop = &srv->stopping,
        };
        stream_flush(&ls);
        Runtime__V1__ContainerStatusResponse *r = NULL;
        cleanup_free char *path = NULL, *failure = NULL;
        if (cri_container_status(cri, id, &r, &err) < 0 || r->status == NULL ||
            r->status->log_path == NULL || *r->status->log_path == '\0') {
                LOG_INFO(4, "Failed to get container status", "containerID=\"%s\" err=\"%s\"",
                         full_id, err ? ck_error_msg(err) : "no log path");
                failure = xasprintf("unable to retrieve container logs for %s", full_id);
        } else {
                path = xstrdup(r->status->log_path);
        }
        if (r)
                runtime__v1__container_status_response__free_unpacked(r, NULL);
        ck_error_release(&err);
        if (path && logs_read(path, &opt, fs_now_real_ns(), &sink, &err) < 0) {
                LOG_INFO(2, "Container log stream ended by an error",
                         "pod=\"%s/%s\" container=\"%s\" err=\"%s\"", ns, name, container,
                         ck_error_msg(err));
                failure = xstrdup(ck_error_msg(err));
        } else if (ls.run_error) { /* the runtime failed while following */
                failure = ls.run_error;
                ls.run_error = NULL;
        }
        if (failure)
                stream_write_cb(&ls, failure, strlen(failure));
        if (stream_flush(&ls) == 0)
                secure_stream_end(c);
        free(ls.run_error);
        cri_client_free(cri);
        logs_options_release(&opt);
}

/* ---- routing ---------------------------------------------------------- */

static void on_request(void *ctx, const struct secure_request *req, struct secure_conn *c)
{
        struct kubelet_server *srv = ctx;
        struct server_auth_result ar = {0};
        struct server_auth_request areq = {
            .method = req->method,
            .path = req->path,
            .authorization = req->authorization,
            .peer_cn = req->peer_cn,
            .peer_orgs = req->peer_orgs,
            .peer_verify_error = req->peer_verify_error,
        };
        server_auth_check_request(srv->auth, &areq, &ar);
        if (ar.status != 0) {
                if (LOG_V(4)) {
                        cleanup_free char *qpath = str_go_quote(req->path, strlen(req->path));
                        cleanup_free char *quser =
                            str_go_quote(ar.user ? ar.user : "", ar.user ? strlen(ar.user) : 0);
                        LOG_INFO(4, "Request refused", "method=\"%s\" path=%s user=%s status=%d",
                                 req->method, qpath, quser, ar.status);
                }
                respond_text(c, ar.status, ar.message ? ar.message : "");
                server_auth_result_release(&ar);
                return;
        }
        if (LOG_V(6)) {
                cleanup_free char *qpath = str_go_quote(req->path, strlen(req->path));
                cleanup_free char *quser =
                    str_go_quote(ar.user ? ar.user : "", ar.user ? strlen(ar.user) : 0);
                LOG_INFO(6, "Request", "method=\"%s\" path=%s user=%s", req->method, qpath, quser);
        }
        server_auth_result_release(&ar);

        bool get = strcmp(req->method, "GET") == 0;
        if (strcmp(req->path, "/healthz") == 0) {
                if (!get) {
                        respond_text(c, 405, "Method Not Allowed");
                        return;
                }
                {
                        respond_text(c, 200, "ok");
                        return;
                }
        }
        if (strcmp(req->path, "/pods") == 0 || strcmp(req->path, "/pods/") == 0) {
                if (!get) {
                        respond_text(c, 405, "Method Not Allowed");
                        return;
                }
                cleanup_json json_t *list = status_store_pod_list(srv->status);
                cleanup_free char *body = json_dumps(list, JSON_COMPACT);
                if (body == NULL) {
                        respond_text(c, 500, "encode pod list");
                        return;
                }
                {
                        secure_respond(c, 200, "application/json", body, strlen(body));
                        return;
                }
        }
        if (strncmp(req->path, "/containerLogs/", strlen("/containerLogs/")) == 0) {
                if (!get) {
                        respond_text(c, 405, "Method Not Allowed");
                        return;
                }
                {
                        serve_logs(srv, req, c);
                        return;
                }
        }
        respond_text(c, 404, "404 page not found\n");
}

/* ---- lifecycle -------------------------------------------------------- */

int kubelet_server_start(const struct kubelet_server_options *o, struct kubelet_server **out,
                         ck_error_t *err)
{
        const struct kubelet_config *cfg = o->cfg;
        struct kubelet_server *srv = xcalloc(1, sizeof(*srv));
        srv->cfg = cfg;
        srv->status = o->status;
        atomic_init(&srv->stopping, false);
        bool webhook = strcmp(cfg->authorization_mode, "Webhook") == 0;
        struct server_auth_options ao = {
            .node_name = cfg->node_name,
            .x509 = cfg->client_ca_file && *cfg->client_ca_file,
            .anonymous = cfg->anonymous_auth,
            .webhook_authn = cfg->authn_webhook,
            .authn_cache_ttl_ms = cfg->authn_webhook_cache_ttl_ms,
            .authz_mode = webhook ? SERVER_AUTHZ_WEBHOOK : SERVER_AUTHZ_ALWAYS_ALLOW,
            .authz_allowed_ttl_ms = cfg->authz_cache_authorized_ttl_ms,
            .authz_denied_ttl_ms = cfg->authz_cache_unauthorized_ttl_ms,
            .pool = o->pool,
        };
        if (server_auth_new(&ao, &srv->auth, err) < 0) {
                free(srv);
                return ck_error_wrap(err, "kubelet server authentication");
        }
        struct secure_server_options so = {
            .address = cfg->address,
            .port = o->port < 0 ? cfg->port : o->port,
            .cert_file = cfg->tls_cert_file,
            .key_file = cfg->tls_private_key_file,
            .cert_dir = cfg->cert_dir,
            .hostname = cfg->node_name,
            .client_ca_file = cfg->client_ca_file,
            .tls_min_version = cfg->tls_min_version,
            /* standalone: nothing else maps OpenSSL (cluster mode's REST
             * client does), and nobody may ever connect */
            .lazy_tls = o->pool == NULL,
            .tls_cipher_suites = (const char *const *)cfg->tls_cipher_suites,
            .handler = on_request,
            .ctx = srv,
        };
        bool loopback = cfg->address &&
                        (strncmp(cfg->address, "127.", 4) == 0 ||
                         strcmp(cfg->address, "::1") == 0 || strcmp(cfg->address, "[::1]") == 0);
        if (cfg->anonymous_auth && !webhook && !loopback)
                LOG_WARN("The kubelet server lets anyone who reaches it read every pod and "
                         "container log: anonymous requests are allowed and authorization is "
                         "AlwaysAllow (set --anonymous-auth=false and --authorization-mode=Webhook "
                         "with --kubeconfig, or --address=127.0.0.1)",
                         "address=\"%s\" port=%d", cfg->address, so.port);
        if (secure_server_start(&so, &srv->secure, err) < 0) {
                server_auth_free(srv->auth);
                free(srv);
                return -1;
        }
        *out = srv;
        return 0;
}

int kubelet_server_port(const struct kubelet_server *s)
{
        return secure_server_port(s->secure);
}

void kubelet_server_stop(struct kubelet_server *s)
{
        if (s == NULL)
                return;
        atomic_store(&s->stopping, true);
        secure_server_stop(s->secure);
        server_auth_free(s->auth);
        free(s);
}
