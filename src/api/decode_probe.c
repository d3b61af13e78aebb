/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Probes and lifecycle handlers: decoding, defaults (SetDefaults_Probe,
 * SetDefaults_HTTPGetAction) and validation (validateHandler,
 * validateProbe, validateLifecycle).
 */
#include "api/api_internal.h"

#include "util/cleanup.h"
#include "util/xalloc.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char NEGATIVE_MSG[] = "must be greater than or equal to 0";

/* intstr.IntOrString: a JSON number or string. */
static bool decode_int_or_string(struct dctx *d, json_t *o, const char *p, const char *key,
                                 struct int_or_string *out)
{
        json_t *v = jget(o, key);
        if (v == NULL)
                return false;
        if (json_is_string(v)) {
                out->is_string = true;
                out->sval = xstrdup(json_string_value(v));
                return true;
        }
        int64_t i;
        if (!get_int(d, o, p, key, 32, &i))
                return false;
        out->ival = (int32_t)i;
        return true;
}

static void validate_port_num_or_name(struct dctx *d, const char *path,
                                      const struct int_or_string *port)
{
        if (port->is_string)
                validate_port_name(d, path, port->sval);
        else if (port->ival < 1 || port->ival > 65535)
                ferr_invalid_int(d, path, port->ival, "must be between 1 and 65535, inclusive");
}

static void decode_exec(struct dctx *d, json_t *o, const char *path, struct handler *h)
{
        get_str_list(d, o, path, "command", &h->exec_command);
        if (h->exec_command.n == 0) {
                cleanup_free char *cp = path_child(path, "command");
                ferr_required(d, cp, "");
        }
}

static void decode_http_get(struct dctx *d, json_t *o, const char *path, struct handler *h)
{
        set_default_string(o, "path", "/");
        set_default_string(o, "scheme", "HTTP");
        get_string(d, o, path, "path", &h->http_path);
        get_string(d, o, path, "host", &h->http_host);
        get_string(d, o, path, "scheme", &h->http_scheme);
        decode_int_or_string(d, o, path, "port", &h->port);

        json_t *headers = get_array(d, o, path, "httpHeaders");
        cleanup_free char *hp = path_child(path, "httpHeaders");
        if (headers) {
                h->http_headers = xcalloc(json_array_size(headers) + 1, sizeof(*h->http_headers));
                size_t i;
                json_t *hdr;
                json_array_foreach(headers, i, hdr)
                {
                        cleanup_free char *ip = path_index(hp, i);
                        if (!json_is_object(hdr)) {
                                ferr_type(d, ip, hdr, "an object");
                                continue;
                        }
                        struct http_header *x = &h->http_headers[h->n_http_headers++];
                        get_string(d, hdr, ip, "name", &x->name);
                        get_string(d, hdr, ip, "value", &x->value);
                        if (x->name == NULL)
                                x->name = xstrdup("");
                        if (x->value == NULL)
                                x->value = xstrdup("");
                }
        }

        cleanup_free char *pp = path_child(path, "port");
        validate_port_num_or_name(d, pp, &h->port);
        if (h->http_scheme && strcmp(h->http_scheme, "HTTP") != 0 &&
            strcmp(h->http_scheme, "HTTPS") != 0) {
                static const char *const schemes[] = {"HTTP", "HTTPS", NULL};
                cleanup_free char *sp = path_child(path, "scheme");
                ferr_not_supported(d, sp, h->http_scheme, schemes);
        }
        for (size_t i = 0; i < h->n_http_headers; i++)
                if (!is_http_header_name(h->http_headers[i].name))
                        ferr_invalid(d, hp, h->http_headers[i].name,
                                     "a valid HTTP header must consist of alphanumeric characters "
                                     "or '-' (e.g. 'X-Header-Name', regex used for validation is "
                                     "'[-A-Za-z0-9]+')");
}

static void decode_tcp_socket(struct dctx *d, json_t *o, const char *path, struct handler *h)
{
        get_string(d, o, path, "host", &h->http_host);
        decode_int_or_string(d, o, path, "port", &h->port);
        cleanup_free char *pp = path_child(path, "port");
        validate_port_num_or_name(d, pp, &h->port);
}

static void decode_grpc(struct dctx *d, json_t *o, const char *path, struct handler *h)
{
        get_int32(d, o, path, "port", &h->port.ival);
        set_default_string(o, "service", ""); /* grpc.service defaults to "" */
        get_string(d, o, path, "service", &h->grpc_service);
        if (h->port.ival < 1 || h->port.ival > 65535) {
                cleanup_free char *pp = path_child(path, "port");
                ferr_invalid_int(d, pp, h->port.ival, "must be between 1 and 65535, inclusive");
        }
}

static void decode_sleep(struct dctx *d, json_t *o, const char *path, struct handler *h)
{
        get_int(d, o, path, "seconds", 64, &h->sleep_seconds);
        /* PodLifecycleSleepActionAllowZero is on by default */
        if (d->has_grace && (h->sleep_seconds < 0 || h->sleep_seconds > d->grace)) {
                cleanup_free char *msg = xasprintf("must be non-negative and less than "
                                                   "terminationGracePeriodSeconds (%" PRId64 ")",
                                                   d->grace);
                ferr_invalid_int(d, path, h->sleep_seconds, msg);
        }
}

/* The action of a probe (exec, httpGet, tcpSocket, grpc) or a lifecycle
 * hook (exec, httpGet, tcpSocket, sleep): exactly one. */
static void decode_handler(struct dctx *d, json_t *o, const char *path, bool lifecycle,
                           struct handler *h)
{
        static const struct {
                const char *key;
                enum handler_kind kind;
                void (*decode)(struct dctx *, json_t *, const char *, struct handler *);
        } kinds[] = {
            {"exec", HANDLER_EXEC, decode_exec},
            {"httpGet", HANDLER_HTTP_GET, decode_http_get},
            {"tcpSocket", HANDLER_TCP_SOCKET, decode_tcp_socket},
            {"grpc", HANDLER_GRPC, decode_grpc},
            {"sleep", HANDLER_SLEEP, decode_sleep},
        };
        for (size_t k = 0; k < ARRAY_SIZE(kinds); k++) {
                if (lifecycle ? kinds[k].kind == HANDLER_GRPC : kinds[k].kind == HANDLER_SLEEP)
                        continue; /* not a field of this type: ignored as unknown */
                json_t *sub = get_object(d, o, path, kinds[k].key);
                if (sub == NULL)
                        continue;
                cleanup_free char *sp = path_child(path, kinds[k].key);
                if (h->kind != HANDLER_NONE) {
                        ferr_forbidden(d, sp, "may not specify more than 1 handler type");
                        continue;
                }
                h->kind = kinds[k].kind;
                kinds[k].decode(d, sub, sp, h);
        }
        if (h->kind == HANDLER_NONE)
                ferr_required(d, path, "must specify a handler type");
}

static void int_field(struct dctx *d, json_t *o, const char *path, const char *key, int32_t *out,
                      int32_t dflt)
{
        get_int32(d, o, path, key, out);
        if (*out == 0 && dflt != 0) { /* SetDefaults_Probe tests for zero */
                *out = dflt;
                json_object_set_new(o, key, json_integer(dflt));
        }
        if (*out < 0) {
                cleanup_free char *fp = path_child(path, key);
                ferr_invalid_int(d, fp, *out, NEGATIVE_MSG);
        }
}

struct probe *decode_probe(struct dctx *d, json_t *o, const char *path, enum probe_type type)
{
        struct probe *p = xcalloc(1, sizeof(*p));
        decode_handler(d, o, path, false, &p->handler);
        int_field(d, o, path, "initialDelaySeconds", &p->initial_delay_seconds, 0);
        int_field(d, o, path, "timeoutSeconds", &p->timeout_seconds, 1);
        int_field(d, o, path, "periodSeconds", &p->period_seconds, 10);
        int_field(d, o, path, "successThreshold", &p->success_threshold, 1);
        int_field(d, o, path, "failureThreshold", &p->failure_threshold, 3);
        p->has_termination_grace_period_seconds = get_int(
            d, o, path, "terminationGracePeriodSeconds", 64, &p->termination_grace_period_seconds);
        cleanup_free char *tp = path_child(path, "terminationGracePeriodSeconds");
        if (p->has_termination_grace_period_seconds && p->termination_grace_period_seconds <= 0)
                ferr_invalid_int(d, tp, p->termination_grace_period_seconds,
                                 "must be greater than 0");
        cleanup_free char *sp = path_child(path, "successThreshold");
        switch (type) {
        case PROBE_LIVENESS:
        case PROBE_STARTUP:
                if (p->success_threshold != 1)
                        ferr_invalid_int(d, sp, p->success_threshold, "must be 1");
                break;
        case PROBE_READINESS:
                if (p->has_termination_grace_period_seconds)
                        ferr_invalid_int(d, tp, p->termination_grace_period_seconds,
                                         "must not be set for readinessProbes");
                break;
        }
        return p;
}

/* The signals of supportedStopSignalsLinux, as core.Signal names them. */
static bool is_linux_stop_signal(const char *s)
{
        static const char *const sigs[] = {
            "SIGABRT",  "SIGALRM", "SIGBUS",    "SIGCHLD",  "SIGCLD",  "SIGCONT",   "SIGFPE",
            "SIGHUP",   "SIGILL",  "SIGINT",    "SIGIO",    "SIGIOT",  "SIGKILL",   "SIGPIPE",
            "SIGPOLL",  "SIGPROF", "SIGPWR",    "SIGQUIT",  "SIGSEGV", "SIGSTKFLT", "SIGSTOP",
            "SIGSYS",   "SIGTERM", "SIGTRAP",   "SIGTSTP",  "SIGTTIN", "SIGTTOU",   "SIGURG",
            "SIGUSR1",  "SIGUSR2", "SIGVTALRM", "SIGWINCH", "SIGXCPU", "SIGXFSZ",   "SIGRTMIN",
            "SIGRTMAX", NULL,
        };
        for (const char *const *p = sigs; *p; p++)
                if (strcmp(s, *p) == 0)
                        return true;
        /* SIGRTMIN+1..15, SIGRTMAX-1..14 */
        const char *rest = NULL;
        int max = 0;
        if (strncmp(s, "SIGRTMIN+", 9) == 0)
                rest = s + 9, max = 15;
        else if (strncmp(s, "SIGRTMAX-", 9) == 0)
                rest = s + 9, max = 14;
        if (rest == NULL || rest[0] < '1' || rest[0] > '9')
                return false;
        char *end;
        long n = strtol(rest, &end, 10);
        return *end == '\0' && n >= 1 && n <= max;
}

void decode_lifecycle(struct dctx *d, json_t *o, const char *path, struct container *c)
{
        json_t *ps = get_object(d, o, path, "postStart");
        if (ps) {
                cleanup_free char *pp = path_child(path, "postStart");
                c->post_start = xcalloc(1, sizeof(*c->post_start));
                decode_handler(d, ps, pp, true, c->post_start);
        }
        json_t *pr = get_object(d, o, path, "preStop");
        if (pr) {
                cleanup_free char *pp = path_child(path, "preStop");
                c->pre_stop = xcalloc(1, sizeof(*c->pre_stop));
                decode_handler(d, pr, pp, true, c->pre_stop);
        }
        if (get_string(d, o, path, "stopSignal", &c->stop_signal)) {
                cleanup_free char *sp = path_child(path, "stopSignal");
                if (d->os_name == NULL || d->os_name[0] == '\0') {
                        ferr_forbidden(d, sp,
                                       "may not be set for containers with empty `spec.os.name`");
                } else if (strcmp(d->os_name, "windows") == 0) {
                        static const char *const win[] = {"SIGKILL", "SIGTERM", NULL};
                        if (strcmp(c->stop_signal, "SIGKILL") != 0 &&
                            strcmp(c->stop_signal, "SIGTERM") != 0)
                                ferr_not_supported(d, sp, c->stop_signal, win);
                } else if (strcmp(d->os_name, "linux") == 0 &&
                           !is_linux_stop_signal(c->stop_signal)) {
                        ferr_invalid(d, sp, c->stop_signal, "not a supported Linux stop signal");
                }
        }
}
