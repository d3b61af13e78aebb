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
#include "kuberuntime/runtime.h"
#include "logs/logs.h"
#include "metrics/kubelet_metrics.h"
#include "server/auth.h"
#include "config/configz.h"
#include "server/httpd.h"
#include "server/proxy_stream.h"
#include "server/router.h"
#include "stats/stats.h"
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
        struct stats_provider *stats;      /* /stats/summary, /metrics/resource */
        bool own_stats;                    /* made here (none was given) */
        struct metrics_registry *resource; /* /metrics/resource's registry */
        struct metrics_registry *cadvisor; /* /metrics/cadvisor's registry */
        struct httpd *secure, *readonly, *healthz;
        atomic_bool stopping;
};

/* A route's handler: params are the pattern's {parameters} in order,
 * NULL-terminated (one handler may serve patterns with and without {uid}). */
typedef void (*route_fn)(struct kubelet_server *srv, const struct httpd_request *req,
                         struct httpd_conn *c, char *const *params);

static void respond_text(struct httpd_conn *c, int status, const char *text)
{
        httpd_respond(c, status, TEXT_PLAIN, text, strlen(text));
}

static void respond_fmt(struct httpd_conn *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void respond_fmt(struct httpd_conn *c, int status, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        cleanup_free char *text = NULL;
        if (vasprintf(&text, fmt, ap) < 0)
                text = NULL;
        va_end(ap);
        respond_text(c, status, text ? text : "");
}

/* A query parameter's values (new strings, NULL-terminated; *n their
 * number), percent- and '+'-decoded as Go's url.ParseQuery. */
static char **query_values(const char *query, const char *key, size_t *n)
{
        char **out = xcalloc(1, sizeof(*out));
        *n = 0;
        size_t klen = strlen(key);
        for (const char *p = query; p && *p;) {
                const char *amp = strchrnul(p, '&');
                const char *eq = memchr(p, '=', (size_t)(amp - p));
                if (eq && (size_t)(eq - p) == klen && memcmp(p, key, klen) == 0) {
                        cleanup_free char *raw = xstrndup(eq + 1, (size_t)(amp - eq - 1));
                        for (char *q = raw; *q; q++)
                                if (*q == '+')
                                        *q = ' ';
                        char *v = http_path_unescape(raw, strlen(raw));
                        if (v) {
                                out = xrealloc(out, (*n + 2) * sizeof(*out));
                                out[(*n)++] = v;
                                out[*n] = NULL;
                        }
                }
                p = *amp ? amp + 1 : amp;
        }
        return out;
}

static void strv_free(char **v)
{
        for (size_t i = 0; v && v[i]; i++)
                free(v[i]);
        free(v);
}

/* ---- container logs ----------------------------------------------------- */

static bool pod_has_container(const struct pod *pod, const char *name)
{
        return pod_find_container(pod, name) != NULL;
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
        struct httpd_conn *conn;
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
                if (httpd_stream_begin(ls->conn, 200, TEXT_PLAIN) < 0) {
                        ls->gone = true;
                        return -1;
                }
        }
        if (ls->len > 0 && httpd_stream_write(ls->conn, ls->buf, ls->len) < 0) {
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
                if (httpd_stream_write(ls->conn, buf, len) < 0) {
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
        if (stream_flush(ls) < 0 || httpd_conn_closed(ls->conn) || atomic_load(&ls->srv->stopping))
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

static void serve_logs(struct kubelet_server *srv, const struct httpd_request *req,
                       struct httpd_conn *c, char *const *params)
{
        /* /containerLogs/{podNamespace}/{podID}/{containerName} */
        const char *ns = params[0], *name = params[1], *container = params[2];
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
                httpd_stream_end(c);
        free(ls.run_error);
        cri_client_free(cri);
        logs_options_release(&opt);
}

/* ---- small handlers ---------------------------------------------------- */

static void serve_ok(struct kubelet_server *srv, const struct httpd_request *req,
                     struct httpd_conn *c, char *const *params)
{
        (void)srv, (void)req, (void)params;
        respond_text(c, 200, "ok");
}

static void respond_json(struct httpd_conn *c, json_t *doc, const char *what)
{
        cleanup_free char *body = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
        if (body == NULL) {
                respond_fmt(c, 500, "encode %s", what);
                return;
        }
        httpd_respond(c, 200, "application/json", body, strlen(body));
}

static void serve_pods(struct kubelet_server *srv, const struct httpd_request *req,
                       struct httpd_conn *c, char *const *params)
{
        (void)req, (void)params;
        cleanup_json json_t *list = status_store_pod_list(srv->status);
        respond_json(c, list, "pod list");
}

static void serve_configz(struct kubelet_server *srv, const struct httpd_request *req,
                          struct httpd_conn *c, char *const *params)
{
        (void)req, (void)params;
        cleanup_json json_t *doc = configz_json(srv->cfg);
        respond_json(c, doc, "configz");
}

/* Upstream's getRunningPods: the runtime's running pods (GetPods(false):
 * ready sandboxes, running containers) as a v1 PodList of name, namespace,
 * uid and the containers' names and images (kubecontainer.Pod.ToAPIPod). */
static void serve_running_pods(struct kubelet_server *srv, const struct httpd_request *req,
                               struct httpd_conn *c, char *const *params)
{
        (void)req, (void)params;
        struct cri_client *cri = cri_client_new(srv->cfg->container_runtime_endpoint,
                                                srv->cfg->runtime_request_timeout_ms);
        struct runtime_pod_list *l = NULL;
        cleanup_error ck_error_t err = NULL;
        if (kuberuntime_get_pods(NULL, cri, false, &l, &err) < 0) {
                respond_fmt(c, 500, "%s", ck_error_msg(err));
                cri_client_free(cri);
                return;
        }
        json_t *items = json_array();
        for (size_t i = 0; i < l->n_pods; i++) {
                const struct runtime_pod_entry *p = &l->pods[i];
                json_t *containers = json_array();
                for (size_t j = 0; j < p->n_containers; j++)
                        json_array_append_new(
                            containers, json_pack("{s:s, s:s, s:{}}", "name", p->containers[j].name,
                                                  "image", p->containers[j].image, "resources"));
                json_t *spec = json_object();
                if (json_array_size(containers) > 0)
                        json_object_set(spec, "containers", containers);
                json_decref(containers);
                json_array_append_new(
                    items, json_pack("{s:{s:s?, s:s?, s:s, s:n}, s:o, s:{}}", "metadata", "name",
                                     p->name, "namespace", p->namespace, "uid", p->uid,
                                     "creationTimestamp", "spec", spec, "status"));
        }
        cleanup_json json_t *list = json_pack("{s:s, s:s, s:{}, s:o}", "kind", "PodList",
                                              "apiVersion", "v1", "metadata", "items", items);
        respond_json(c, list, "running pods");
        runtime_pod_list_free(l);
        cri_client_free(cri);
}

static void respond_metrics(struct httpd_conn *c, struct metrics_registry *r)
{
        cleanup_metrics_buf struct metrics_buf buf = {0};
        metrics_render(r, &buf);
        httpd_respond(c, 200, METRICS_CONTENT_TYPE, buf.data ? buf.data : "", buf.len);
}

/* /metrics: upstream's legacyregistry (the kubelet's series, rest client,
 * process). */
static void serve_metrics(struct kubelet_server *srv, const struct httpd_request *req,
                          struct httpd_conn *c, char *const *params)
{
        (void)srv, (void)req, (void)params;
        respond_metrics(c, kmetrics_registry());
}

/* /metrics/resource: what metrics-server scrapes (the stats provider's
 * snapshot, computed at most once per housekeeping interval). */
static void serve_metrics_resource(struct kubelet_server *srv, const struct httpd_request *req,
                                   struct httpd_conn *c, char *const *params)
{
        (void)req, (void)params;
        respond_metrics(c, srv->resource);
}

/* /metrics/cadvisor: the container_* and machine_* series of cAdvisor's
 * collector, from the same snapshot. */
static void serve_metrics_cadvisor(struct kubelet_server *srv, const struct httpd_request *req,
                                   struct httpd_conn *c, char *const *params)
{
        (void)req, (void)params;
        respond_metrics(c, srv->cadvisor);
}

/* upstream's stats handler: only_cpu_and_memory=true, given once */
static bool only_cpu_and_memory(const char *query)
{
        size_t n;
        char **v = query_values(query, "only_cpu_and_memory", &n);
        bool on = n == 1 && strcmp(v[0], "true") == 0;
        strv_free(v);
        return on;
}

/* /stats/summary (GET or POST): the Summary API, stats/v1alpha1. */
static void serve_stats_summary(struct kubelet_server *srv, const struct httpd_request *req,
                                struct httpd_conn *c, char *const *params)
{
        (void)params;
        cleanup_error ck_error_t err = NULL;
        cleanup_json json_t *doc =
            stats_summary_json(srv->stats, only_cpu_and_memory(req->query), &err);
        if (doc == NULL) {
                respond_fmt(c, 500, "Internal Error: %s", ck_error_msg(err));
                return;
        }
        /* go-restful's encoder indents with one space */
        cleanup_free char *body = json_dumps(doc, JSON_INDENT(1) | JSON_REAL_PRECISION(15));
        if (body == NULL) {
                respond_text(c, 500, "encode summary");
                return;
        }
        httpd_respond(c, 200, "application/json", body, strlen(body));
}

/* /metrics/probes: the prober's results and durations. */
static void serve_metrics_probes(struct kubelet_server *srv, const struct httpd_request *req,
                                 struct httpd_conn *c, char *const *params)
{
        (void)srv, (void)req, (void)params;
        respond_metrics(c, kmetrics_probes_registry());
}

/* apiserver's writePlainText: text/plain, nosniff, the text and a newline. */
static void respond_plain_line(struct httpd_conn *c, int status, const char *text)
{
        cleanup_free char *body = xasprintf("%s\n", text);
        httpd_respond_with(c, status, "text/plain", "X-Content-Type-Options: nosniff\r\n", body,
                           strlen(body));
}

/* Upstream's routes.StringFlagPutHandler(logs.GlogSetter): PUT a number
 * (strconv.ParseUint(val, 10, 32): digits only), the verbosity becomes it. */
static void serve_flags_v(struct kubelet_server *srv, const struct httpd_request *req,
                          struct httpd_conn *c, char *const *params)
{
        (void)srv, (void)params;
        if (strcmp(req->method, "PUT") != 0) {
                respond_plain_line(c, 406, "unsupported http method");
                return;
        }
        cleanup_free char *body = NULL;
        size_t len;
        int r = httpd_body_all(c, 4096, &body, &len);
        if (r < 0) {
                respond_plain_line(c, r == -413 ? 413 : 400, "error reading request body");
                return;
        }
        bool digits = len > 0 && strlen(body) == len;
        for (size_t i = 0; digits && i < len; i++)
                digits = body[i] >= '0' && body[i] <= '9';
        errno = 0;
        unsigned long long v = digits ? strtoull(body, NULL, 10) : 0;
        if (!digits || errno != 0 || v > UINT32_MAX || v > INT32_MAX) {
                cleanup_free char *q = str_go_quote(body, len);
                cleanup_free char *msg =
                    xasprintf("strconv.ParseUint: parsing %s: %s", q,
                              digits ? "value out of range" : "invalid syntax");
                respond_plain_line(c, 400, msg);
                return;
        }
        int old = log_get_verbosity();
        log_set_verbosity((int)v);
        LOG_INFO(0, "Set the log verbosity", "old=%d new=%llu", old, v);
        cleanup_free char *msg = xasprintf("successfully set klog.logging.verbosity to %s", body);
        respond_plain_line(c, 200, msg);
}

/* Where debugging handlers are off (the read-only port, or
 * --enable-debugging-handlers=false): upstream's InstallDebuggingDisabledHandlers. */
static void serve_debug_disabled(struct kubelet_server *srv, const struct httpd_request *req,
                                 struct httpd_conn *c, char *const *params)
{
        (void)srv, (void)req, (void)params;
        respond_text(c, 405, "Debug endpoints are disabled.\n");
}

/* ---- exec, attach, port-forward, run ------------------------------------ */

/* remotecommand's NewOptions: a flag is on when its value is "1". */
static bool query_flag(const char *query, const char *key)
{
        size_t n;
        char **v = query_values(query, key, &n);
        bool on = n > 0 && strcmp(v[0], "1") == 0;
        strv_free(v);
        return on;
}

/* The pod of a streaming request (404 "pod does not exist" answered when
 * unknown), and with a {uid} in the path, only that instance. */
static struct pod *stream_pod(struct kubelet_server *srv, struct httpd_conn *c, const char *ns,
                              const char *name)
{
        cleanup_json json_t *status = NULL;
        struct pod *pod = status_store_find_by_name(srv->status, ns, name, &status);
        if (pod == NULL)
                respond_text(c, 404, "pod does not exist");
        return pod;
}

/* The ID of the running container `name` of the pod with uid (a new
 * string), or NULL with *why set (upstream's findContainer). */
static char *running_container(struct cri_client *cri, const char *uid, const char *name,
                               char **why)
{
        Runtime__V1__ContainerFilter__LabelSelectorEntry l1 =
            RUNTIME__V1__CONTAINER_FILTER__LABEL_SELECTOR_ENTRY__INIT;
        Runtime__V1__ContainerFilter__LabelSelectorEntry l2 =
            RUNTIME__V1__CONTAINER_FILTER__LABEL_SELECTOR_ENTRY__INIT;
        l1.key = "io.kubernetes.pod.uid";
        l1.value = (char *)uid;
        l2.key = "io.kubernetes.container.name";
        l2.value = (char *)name;
        Runtime__V1__ContainerFilter__LabelSelectorEntry *ls[] = {&l1, &l2};
        Runtime__V1__ContainerStateValue running = RUNTIME__V1__CONTAINER_STATE_VALUE__INIT;
        running.state = RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING;
        Runtime__V1__ContainerFilter f = RUNTIME__V1__CONTAINER_FILTER__INIT;
        f.state = &running;
        f.n_label_selector = 2;
        f.label_selector = ls;
        Runtime__V1__ListContainersResponse *r = NULL;
        cleanup_error ck_error_t err = NULL;
        if (cri_list_containers(cri, &f, &r, &err) < 0) {
                *why = xstrdup(ck_error_msg(err));
                return NULL;
        }
        char *id = r->n_containers > 0 ? xstrdup(r->containers[0]->id) : NULL;
        runtime__v1__list_containers_response__free_unpacked(r, NULL);
        if (id == NULL)
                *why = xasprintf("container not found (\"%s\")", name);
        return id;
}

/* The ready sandbox of the pod with uid (a new string), or NULL with *why. */
static char *ready_sandbox(struct cri_client *cri, const char *uid, const char *pod, char **why)
{
        Runtime__V1__PodSandboxFilter__LabelSelectorEntry l =
            RUNTIME__V1__POD_SANDBOX_FILTER__LABEL_SELECTOR_ENTRY__INIT;
        l.key = "io.kubernetes.pod.uid";
        l.value = (char *)uid;
        Runtime__V1__PodSandboxFilter__LabelSelectorEntry *ls[] = {&l};
        Runtime__V1__PodSandboxStateValue ready = RUNTIME__V1__POD_SANDBOX_STATE_VALUE__INIT;
        ready.state = RUNTIME__V1__POD_SANDBOX_STATE__SANDBOX_READY;
        Runtime__V1__PodSandboxFilter f = RUNTIME__V1__POD_SANDBOX_FILTER__INIT;
        f.state = &ready;
        f.n_label_selector = 1;
        f.label_selector = ls;
        Runtime__V1__ListPodSandboxResponse *r = NULL;
        cleanup_error ck_error_t err = NULL;
        if (cri_list_pod_sandbox(cri, &f, &r, &err) < 0) {
                *why = xstrdup(ck_error_msg(err));
                return NULL;
        }
        /* the newest, as upstream's GetPods sorts sandboxes */
        const Runtime__V1__PodSandbox *best = NULL;
        for (size_t i = 0; i < r->n_items; i++)
                if (best == NULL || r->items[i]->created_at > best->created_at)
                        best = r->items[i];
        char *id = best ? xstrdup(best->id) : NULL;
        runtime__v1__list_pod_sandbox_response__free_unpacked(r, NULL);
        if (id == NULL)
                *why = xasprintf("pod not found (\"%s\")", pod);
        return id;
}

static size_t count_params(char *const *params)
{
        size_t n = 0;
        while (params[n] != NULL)
                n++;
        return n;
}

/* streaming.WriteError: the runtime's NotFound is a 404, the rest 500. */
static void respond_stream_error(struct httpd_conn *c, const char *why, int code)
{
        respond_text(c, code == CRI_CODE_NOT_FOUND ? 404 : 500, why);
}

enum stream_kind { STREAM_EXEC, STREAM_ATTACH };

/* /exec and /attach: {podNamespace}/{podID}[/{uid}]/{containerName}. */
static void serve_exec_attach(struct kubelet_server *srv, const struct httpd_request *req,
                              struct httpd_conn *c, char *const *params, enum stream_kind kind)
{
        size_t n_params = count_params(params);
        const char *ns = params[0], *name = params[1];
        const char *uid = n_params == 4 ? params[2] : NULL;
        const char *container = params[n_params - 1];
        /* remotecommand's parameter names (api.ExecStdinParam, ...) */
        bool in = query_flag(req->query, "input");
        bool out = query_flag(req->query, "output");
        bool errs = query_flag(req->query, "error");
        bool tty = query_flag(req->query, "tty");
        if (tty && errs) /* NewOptions: a TTY has no separate stderr */
                errs = false;
        if (!in && !out && !errs) {
                respond_text(c, 400, "you must specify at least 1 of stdin, stdout, stderr");
                return;
        }
        size_t n_cmd = 0;
        char **cmd = query_values(req->query, "command", &n_cmd);
        struct pod *pod = stream_pod(srv, c, ns, name);
        if (pod == NULL) {
                strv_free(cmd);
                return;
        }
        struct cri_client *cri = cri_client_new(srv->cfg->container_runtime_endpoint,
                                                srv->cfg->runtime_request_timeout_ms);
        cleanup_free char *why = NULL, *id = NULL, *url = NULL;
        cleanup_error ck_error_t err = NULL;
        if (uid && strcmp(uid, pod->uid) != 0)
                why = xasprintf("container not found (\"%s\")", container);
        else
                id = running_container(cri, pod->uid, container, &why);
        int rc = -1;
        if (id != NULL)
                rc = kind == STREAM_EXEC ? cri_exec(cri, id, cmd, tty, in, out, errs, &url, &err)
                                         : cri_attach(cri, id, tty, in, out, errs, &url, &err);
        if (id == NULL) {
                respond_stream_error(c, why, 0);
        } else if (rc < 0) {
                respond_stream_error(c, ck_error_msg(err), err->code);
        } else if (proxy_stream(c, req, url, &err) < 0) {
                LOG_WARN("Cannot reach the runtime's streaming server",
                         "pod=\"%s/%s\" container=\"%s\" err=\"%s\"", ns, name, container,
                         ck_error_msg(err));
                respond_text(c, 500, ck_error_msg(err));
        }
        cri_client_free(cri);
        pod_unref(pod);
        strv_free(cmd);
}

static void serve_exec(struct kubelet_server *srv, const struct httpd_request *req,
                       struct httpd_conn *c, char *const *params)
{
        serve_exec_attach(srv, req, c, params, STREAM_EXEC);
}

static void serve_attach(struct kubelet_server *srv, const struct httpd_request *req,
                         struct httpd_conn *c, char *const *params)
{
        serve_exec_attach(srv, req, c, params, STREAM_ATTACH);
}

/* /portForward/{podNamespace}/{podID}[/{uid}]: the ports travel in the
 * SPDY streams' headers, or (WebSocket) in "port" parameters. */
static void serve_port_forward(struct kubelet_server *srv, const struct httpd_request *req,
                               struct httpd_conn *c, char *const *params)
{
        const char *ns = params[0], *name = params[1];
        const char *uid = count_params(params) == 3 ? params[2] : NULL;
        struct pod *pod = stream_pod(srv, c, ns, name);
        if (pod == NULL)
                return;
        if (uid && strcmp(uid, pod->uid) != 0) {
                pod_unref(pod);
                respond_text(c, 404, "pod not found");
                return;
        }
        size_t n_ports = 0;
        char **pv = query_values(req->query, "port", &n_ports);
        int32_t *ports = xcalloc(n_ports + 1, sizeof(*ports));
        for (size_t i = 0; i < n_ports; i++) {
                char *end;
                long p = strtol(pv[i], &end, 10);
                if (*end != '\0' || p <= 0 || p > 65535) {
                        respond_fmt(c, 400, "unable to parse \"%s\" as a port: invalid port",
                                    pv[i]);
                        goto out;
                }
                ports[i] = (int32_t)p;
        }
        {
                struct cri_client *cri = cri_client_new(srv->cfg->container_runtime_endpoint,
                                                        srv->cfg->runtime_request_timeout_ms);
                cleanup_free char *why = NULL, *url = NULL;
                cleanup_error ck_error_t err = NULL;
                cleanup_free char *sandbox = ready_sandbox(cri, pod->uid, name, &why);
                if (sandbox == NULL)
                        respond_stream_error(c, why, 0);
                else if (cri_port_forward(cri, sandbox, ports, n_ports, &url, &err) < 0)
                        respond_stream_error(c, ck_error_msg(err), err->code);
                else if (proxy_stream(c, req, url, &err) < 0)
                        respond_text(c, 500, ck_error_msg(err));
                cri_client_free(cri);
        }
out:
        free(ports);
        strv_free(pv);
        pod_unref(pod);
}

/* /run/{podNamespace}/{podID}[/{uid}]/{containerName}?cmd=...: the
 * command's combined output (upstream's RunInContainer). */
static void serve_run(struct kubelet_server *srv, const struct httpd_request *req,
                      struct httpd_conn *c, char *const *params)
{
        size_t n_params = count_params(params);
        const char *ns = params[0], *name = params[1];
        const char *uid = n_params == 4 ? params[2] : NULL;
        const char *container = params[n_params - 1];
        size_t n;
        char **cmdv = query_values(req->query, "cmd", &n);
        /* strings.Fields of the one cmd parameter */
        char **argv = xcalloc(1, sizeof(*argv));
        size_t argc = 0;
        for (char *save = NULL, *t = n ? strtok_r(cmdv[0], " \t\n", &save) : NULL; t;
             t = strtok_r(NULL, " \t\n", &save)) {
                argv = xrealloc(argv, (argc + 2) * sizeof(*argv));
                argv[argc++] = xstrdup(t);
                argv[argc] = NULL;
        }
        strv_free(cmdv);
        struct pod *pod = stream_pod(srv, c, ns, name);
        if (pod == NULL) {
                strv_free(argv);
                return;
        }
        struct cri_client *cri = cri_client_new(srv->cfg->container_runtime_endpoint,
                                                srv->cfg->runtime_request_timeout_ms);
        cleanup_free char *why = NULL, *id = NULL;
        cleanup_error ck_error_t err = NULL;
        if (uid && strcmp(uid, pod->uid) != 0)
                why = xasprintf("container not found (\"%s\")", container);
        else
                id = running_container(cri, pod->uid, container, &why);
        Runtime__V1__ExecSyncResponse *r = NULL;
        if (id == NULL) {
                respond_text(c, 500, why);
        } else if (argc == 0) {
                respond_text(c, 500, "no command");
        } else if (cri_exec_sync(cri, id, argv, 0, &r, &err) < 0) {
                respond_text(c, 500, ck_error_msg(err));
        } else {
                /* stdout then stderr, as upstream's RunInContainer appends them */
                size_t len = r->stdout.len + r->stderr.len;
                char *body = xmalloc(len + 1);
                memcpy(body, r->stdout.data, r->stdout.len);
                memcpy(body + r->stdout.len, r->stderr.data, r->stderr.len);
                httpd_respond(c, 200, TEXT_PLAIN, body, len);
                free(body);
        }
        if (r)
                runtime__v1__exec_sync_response__free_unpacked(r, NULL);
        cri_client_free(cri);
        pod_unref(pod);
        strv_free(argv);
}

/* ---- routing ---------------------------------------------------------- */

enum {
        ROUTE_READONLY = 1, /* served on the read-only port too */
        ROUTE_DEBUG = 2,    /* a debugging handler (enableDebuggingHandlers) */
        ROUTE_FLAGS = 4,    /* the debug flags handler (enableDebugFlagsHandler) */
};

#define ROUTE(m, p, fn, fl)                                                                        \
        {                                                                                          \
                .method = m, .pattern = p, .handler = (void *)(fn), .flags = fl                    \
        }

/* As upstream's server.go lays them out (NewServer and its Install*). */
static const struct router_route routes[] = {
    ROUTE(NULL, "/healthz", serve_ok, ROUTE_READONLY),
    ROUTE(NULL, "/healthz/ping", serve_ok, ROUTE_READONLY),
    ROUTE(NULL, "/healthz/log", serve_ok, ROUTE_READONLY),
    ROUTE("GET", "/pods", serve_pods, ROUTE_READONLY),
    ROUTE("GET", "/pods/", serve_pods, ROUTE_READONLY),
    ROUTE(NULL, "/metrics", serve_metrics, ROUTE_READONLY),
    ROUTE(NULL, "/metrics/probes", serve_metrics_probes, ROUTE_READONLY),
    ROUTE(NULL, "/metrics/resource", serve_metrics_resource, ROUTE_READONLY),
    ROUTE(NULL, "/metrics/cadvisor", serve_metrics_cadvisor, ROUTE_READONLY),
    ROUTE("GET", "/stats/summary", serve_stats_summary, ROUTE_READONLY),
    ROUTE("POST", "/stats/summary", serve_stats_summary, ROUTE_READONLY),
    ROUTE("GET", "/containerLogs/{podNamespace}/{podID}/{containerName}", serve_logs, ROUTE_DEBUG),
    ROUTE("POST", "/run/{podNamespace}/{podID}/{containerName}", serve_run, ROUTE_DEBUG),
    ROUTE("POST", "/run/{podNamespace}/{podID}/{uid}/{containerName}", serve_run, ROUTE_DEBUG),
    ROUTE("GET", "/exec/{podNamespace}/{podID}/{containerName}", serve_exec, ROUTE_DEBUG),
    ROUTE("POST", "/exec/{podNamespace}/{podID}/{containerName}", serve_exec, ROUTE_DEBUG),
    ROUTE("GET", "/exec/{podNamespace}/{podID}/{uid}/{containerName}", serve_exec, ROUTE_DEBUG),
    ROUTE("POST", "/exec/{podNamespace}/{podID}/{uid}/{containerName}", serve_exec, ROUTE_DEBUG),
    ROUTE("GET", "/attach/{podNamespace}/{podID}/{containerName}", serve_attach, ROUTE_DEBUG),
    ROUTE("POST", "/attach/{podNamespace}/{podID}/{containerName}", serve_attach, ROUTE_DEBUG),
    ROUTE("GET", "/attach/{podNamespace}/{podID}/{uid}/{containerName}", serve_attach, ROUTE_DEBUG),
    ROUTE("POST", "/attach/{podNamespace}/{podID}/{uid}/{containerName}", serve_attach,
          ROUTE_DEBUG),
    ROUTE("GET", "/portForward/{podNamespace}/{podID}", serve_port_forward, ROUTE_DEBUG),
    ROUTE("POST", "/portForward/{podNamespace}/{podID}", serve_port_forward, ROUTE_DEBUG),
    ROUTE("GET", "/portForward/{podNamespace}/{podID}/{uid}", serve_port_forward, ROUTE_DEBUG),
    ROUTE("POST", "/portForward/{podNamespace}/{podID}/{uid}", serve_port_forward, ROUTE_DEBUG),
    ROUTE(NULL, "/configz", serve_configz, ROUTE_DEBUG),
    ROUTE("GET", "/runningpods/", serve_running_pods, ROUTE_DEBUG),
    ROUTE(NULL, "/debug/flags/v", serve_flags_v, ROUTE_DEBUG | ROUTE_FLAGS),
};

/* Where the debugging handlers are off, these prefixes answer 405. */
static const char *const debug_prefixes[] = {
    "/run/",           "/exec/",        "/attach/",      "/portForward/",
    "/containerLogs/", "/runningpods/", "/debug/pprof/", "/logs/",
};

static bool has_prefix(const char *s, const char *prefix)
{
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Routes req among the routes this port serves. */
static void route(struct kubelet_server *srv, bool readonly, const struct httpd_request *req,
                  struct httpd_conn *c)
{
        bool debug = !readonly && srv->cfg->enable_debugging_handlers;
        if (debug && !srv->cfg->enable_debug_flags_handler &&
            strcmp(req->path, "/debug/flags/v") == 0) {
                respond_text(c, 405, "flags endpoint is disabled.\n");
                return;
        }
        if (!debug)
                for (size_t i = 0; i < sizeof(debug_prefixes) / sizeof(debug_prefixes[0]); i++)
                        if (has_prefix(req->path, debug_prefixes[i])) {
                                serve_debug_disabled(srv, req, c, NULL);
                                return;
                        }
        struct router_route table[sizeof(routes) / sizeof(routes[0])];
        size_t n = 0;
        for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
                unsigned f = routes[i].flags;
                if (readonly && !(f & ROUTE_READONLY))
                        continue;
                if (!readonly && (f & ROUTE_DEBUG) && !debug)
                        continue;
                if ((f & ROUTE_FLAGS) && !srv->cfg->enable_debug_flags_handler)
                        continue;
                table[n++] = routes[i];
        }
        struct router_match m;
        int code = router_match(table, n, req->method, req->path, &m);
        if (code == 404) {
                respond_text(c, 404, "404 page not found\n");
                return;
        }
        if (code == 405) { /* go-restful's answer */
                char allow[64], extra[96];
                router_allowed(table, n, req->path, allow, sizeof(allow));
                snprintf(extra, sizeof(extra), "Allow: %s\r\n", allow);
                static const char msg[] = "405: Method Not Allowed";
                httpd_respond_with(c, 405, TEXT_PLAIN, extra, msg, sizeof(msg) - 1);
                return;
        }
        ((route_fn)m.route->handler)(srv, req, c, m.params);
        router_match_release(&m);
}

static void on_secure_request(void *ctx, const struct httpd_request *req, struct httpd_conn *c)
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
        route(srv, false, req, c);
}

static void on_readonly_request(void *ctx, const struct httpd_request *req, struct httpd_conn *c)
{
        route(ctx, true, req, c);
}

/* The healthz port: /healthz and /healthz/ping (upstream's
 * healthz.InstallHandler on a mux of its own, with no other check). */
static void on_healthz_request(void *ctx, const struct httpd_request *req, struct httpd_conn *c)
{
        (void)ctx;
        if (strcmp(req->path, "/healthz") != 0 && strcmp(req->path, "/healthz/ping") != 0) {
                respond_text(c, 404, "404 page not found\n");
                return;
        }
        respond_text(c, 200, "ok");
}

/* ---- lifecycle -------------------------------------------------------- */

/* A port from the options: -1 takes cfg's (0 there: off). */
static int port_of(int opt, int cfg_port, bool on)
{
        if (opt >= 0)
                return opt;
        return on ? cfg_port : -1;
}

static int start_plain(struct kubelet_server *srv, const char *name, const char *address, int port,
                       httpd_handler_fn fn, struct httpd **out, ck_error_t *err)
{
        struct httpd_options ho = {
            .name = name, .address = address, .port = port, .handler = fn, .ctx = srv};
        if (httpd_start(&ho, out, err) < 0)
                return -1;
        return 0;
}

int kubelet_stats_provider_new(const struct kubelet_config *cfg, struct stats_provider **out,
                               ck_error_t *err)
{
        struct stats_options sto = {
            .node_name = cfg->node_name,
            .root_dir = cfg->root_dir,
            .pod_logs_dir = cfg->pod_logs_dir,
            .runtime_endpoint = cfg->container_runtime_endpoint,
            .image_endpoint = cfg->image_service_endpoint,
            .runtime_timeout_ms = cfg->runtime_request_timeout_ms,
            .cgroup_root = cfg->cgroup_root,
            .cgroups_per_qos = cfg->cgroups_per_qos,
            .systemd_cgroups = cfg->cgroup_driver && strcmp(cfg->cgroup_driver, "systemd") == 0,
            /* the provider's 0 is its default; a negative one: none */
            .volume_stats_period_ms = cfg->volume_stats_agg_period_ms,
            /* an alpha gate: AllAlpha is its default */
            .pod_stats_from_cri = kubelet_config_feature_enabled(
                cfg, "PodAndContainerStatsFromCRI",
                kubelet_config_feature_enabled(cfg, "AllAlpha", false)),
        };
        if (stats_provider_new(&sto, out, err) < 0)
                return ck_error_wrap(err, "stats provider");
        return 0;
}

int kubelet_server_start(const struct kubelet_server_options *o, struct kubelet_server **out,
                         ck_error_t *err)
{
        const struct kubelet_config *cfg = o->cfg;
        struct kubelet_server *srv = xcalloc(1, sizeof(*srv));
        srv->cfg = cfg;
        srv->status = o->status;
        atomic_init(&srv->stopping, false);
        srv->stats = o->stats;
        if (srv->stats == NULL) {
                if (kubelet_stats_provider_new(cfg, &srv->stats, err) < 0)
                        goto fail;
                srv->own_stats = true;
        }
        srv->resource = metrics_registry_new();
        if (stats_register_resource_metrics(srv->resource, srv->stats, err) < 0) {
                ck_error_wrap(err, "resource metrics");
                goto fail;
        }
        srv->cadvisor = metrics_registry_new();
        if (stats_register_cadvisor_metrics(srv->cadvisor, srv->stats, err) < 0) {
                ck_error_wrap(err, "cadvisor metrics");
                goto fail;
        }
        int port = port_of(o->port, cfg->port, cfg->enable_server);
        int ro_port = port_of(o->read_only_port, cfg->read_only_port, cfg->read_only_port > 0);
        int hz_port = port_of(o->healthz_port, cfg->healthz_port, cfg->healthz_port > 0);

        if (ro_port >= 0) {
                if (start_plain(srv, "read-only server", cfg->address, ro_port, on_readonly_request,
                                &srv->readonly, err) < 0)
                        goto fail;
                LOG_INFO(0, "Starting to listen read-only", "address=\"%s\" port=%d", cfg->address,
                         httpd_port(srv->readonly));
        }
        if (hz_port >= 0 && start_plain(srv, "healthz server", cfg->healthz_bind_address, hz_port,
                                        on_healthz_request, &srv->healthz, err) < 0)
                goto fail;
        if (port < 0) {
                *out = srv;
                return 0;
        }
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
                ck_error_wrap(err, "kubelet server authentication");
                goto fail;
        }
        struct httpd_options so = {
            .name = "kubelet server",
            .address = cfg->address,
            .port = port,
            .tls = true,
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
            .handler = on_secure_request,
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
        if (httpd_start(&so, &srv->secure, err) < 0)
                goto fail;
        LOG_INFO(0, "Starting to listen", "address=\"%s\" port=%d", cfg->address,
                 httpd_port(srv->secure));
        *out = srv;
        return 0;
fail:
        kubelet_server_stop(srv);
        return -1;
}

int kubelet_server_port(const struct kubelet_server *s)
{
        return s->secure ? httpd_port(s->secure) : 0;
}

int kubelet_server_read_only_port(const struct kubelet_server *s)
{
        return s->readonly ? httpd_port(s->readonly) : 0;
}

int kubelet_server_healthz_port(const struct kubelet_server *s)
{
        return s->healthz ? httpd_port(s->healthz) : 0;
}

void kubelet_server_stop(struct kubelet_server *s)
{
        if (s == NULL)
                return;
        atomic_store(&s->stopping, true);
        httpd_stop(s->secure);
        httpd_stop(s->readonly);
        httpd_stop(s->healthz);
        /* no handler runs any more: the registry's collectors use the provider */
        metrics_registry_free(s->resource);
        metrics_registry_free(s->cadvisor);
        if (s->own_stats)
                stats_provider_free(s->stats);
        server_auth_free(s->auth);
        free(s);
}
