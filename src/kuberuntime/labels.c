/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Labels and annotations on sandboxes and containers, as upstream's
 * pkg/kubelet/kuberuntime/labels.go writes and reads them, so that crictl,
 * log collectors and an upstream kubelet taking over the node see the same
 * objects.
 */
#include "kuberuntime/builders_internal.h"
#include "kuberuntime/builders.h"

#include "util/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kuberuntime__sandbox_labels(const struct pod *pod, Runtime__V1__PodSandboxConfig *cfg)
{
        const ProtobufCMessageDescriptor *ld =
            &runtime__v1__pod_sandbox_config__labels_entry__descriptor;
        const ProtobufCMessageDescriptor *ad =
            &runtime__v1__pod_sandbox_config__annotations_entry__descriptor;
        for (size_t i = 0; i < pod->labels.n; i++)
                KR_MAP_SET(cfg, labels, *ld, pod->labels.items[i].key, pod->labels.items[i].value);
        KR_MAP_SET(cfg, labels, *ld, LABEL_POD_NAME, pod->name);
        KR_MAP_SET(cfg, labels, *ld, LABEL_POD_NAMESPACE, pod->namespace);
        KR_MAP_SET(cfg, labels, *ld, LABEL_POD_UID, pod->uid);
        for (size_t i = 0; i < pod->annotations.n; i++)
                KR_MAP_SET(cfg, annotations, *ad, pod->annotations.items[i].key,
                           pod->annotations.items[i].value);
}

void kuberuntime__container_labels(const struct pod *pod, const struct container *c,
                                   int32_t restart_count, Runtime__V1__ContainerConfig *cfg)
{
        const ProtobufCMessageDescriptor *ld =
            &runtime__v1__container_config__labels_entry__descriptor;
        const ProtobufCMessageDescriptor *ad =
            &runtime__v1__container_config__annotations_entry__descriptor;
        char num[32];

        KR_MAP_SET(cfg, labels, *ld, LABEL_POD_NAME, pod->name);
        KR_MAP_SET(cfg, labels, *ld, LABEL_POD_NAMESPACE, pod->namespace);
        KR_MAP_SET(cfg, labels, *ld, LABEL_POD_UID, pod->uid);
        KR_MAP_SET(cfg, labels, *ld, LABEL_CONTAINER_NAME, c->name);

        /* strconv.FormatUint(hash, 16): lower-case hex, no padding */
        snprintf(num, sizeof(num), "%" PRIx64, c->hash);
        KR_MAP_SET(cfg, annotations, *ad, ANNOTATION_CONTAINER_HASH, num);
        snprintf(num, sizeof(num), "%" PRId32, restart_count);
        KR_MAP_SET(cfg, annotations, *ad, ANNOTATION_CONTAINER_RESTART_COUNT, num);
        KR_MAP_SET(cfg, annotations, *ad, ANNOTATION_TERMINATION_MESSAGE_PATH,
                   c->termination_message_path);
        KR_MAP_SET(cfg, annotations, *ad, ANNOTATION_TERMINATION_MESSAGE_POLICY,
                   c->termination_message_policy);
        if (pod->has_deletion_grace_period_seconds) {
                snprintf(num, sizeof(num), "%" PRId64, pod->deletion_grace_period_seconds);
                KR_MAP_SET(cfg, annotations, *ad, ANNOTATION_POD_DELETION_GRACE, num);
        }
        /* always set upstream: the apiserver defaults it to 30 */
        snprintf(num, sizeof(num), "%" PRId64, pod->termination_grace_period_seconds);
        KR_MAP_SET(cfg, annotations, *ad, ANNOTATION_POD_TERMINATION_GRACE, num);
        if (c->pre_stop != NULL && c->pre_stop->kind != HANDLER_NONE) {
                char *json = kuberuntime__handler_json(c->pre_stop);
                KR_MAP_SET(cfg, annotations, *ad, ANNOTATION_PRESTOP_HANDLER, json);
                free(json);
        }
        if (c->n_ports > 0) {
                char *json = kuberuntime__ports_json(c->ports, c->n_ports);
                KR_MAP_SET(cfg, annotations, *ad, ANNOTATION_CONTAINER_PORTS, json);
                free(json);
        }
}

uint64_t kuberuntime_label_hash(const char *value)
{
        /* strconv.ParseUint(v, 16, 64); anything else is 0 as upstream */
        if (value == NULL || !isxdigit((unsigned char)value[0]))
                return 0;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(value, &end, 16);
        if (errno != 0 || *end != '\0' || (value[0] == '0' && (value[1] == 'x' || value[1] == 'X')))
                return 0;
        return (uint64_t)v;
}

int32_t kuberuntime_label_restart_count(const char *value)
{
        /* strconv.Atoi; an invalid value counts as 0 as upstream */
        if (value == NULL || *value == '\0' || isspace((unsigned char)*value))
                return 0;
        char *end;
        errno = 0;
        long long v = strtoll(value, &end, 10);
        if (errno != 0 || *end != '\0' || v < INT32_MIN || v > INT32_MAX)
                return 0;
        return (int32_t)v;
}

/* ---- JSON as Go's encoding/json writes it (compact, fields in struct
 * order, omitempty honoured, <>& and U+2028/9 escaped) ---- */

struct jbuf {
        char *p;
        size_t len, cap;
};

static void jb_add(struct jbuf *b, const char *s, size_t n)
{
        if (b->len + n + 1 > b->cap) {
                b->cap = (b->len + n + 1) * 2 + 64;
                b->p = xrealloc(b->p, b->cap);
        }
        memcpy(b->p + b->len, s, n);
        b->len += n;
        b->p[b->len] = '\0';
}

static void jb_puts(struct jbuf *b, const char *s)
{
        jb_add(b, s, strlen(s));
}

static void jb_printf(struct jbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void jb_printf(struct jbuf *b, const char *fmt, ...)
{
        char tmp[64];
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
        va_end(ap);
        if (n > 0)
                jb_add(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* Length of the valid UTF-8 sequence at s (0 if invalid). */
static size_t utf8_len(const unsigned char *s)
{
        if (s[0] < 0x80)
                return 1;
        size_t n;
        uint32_t cp;
        if ((s[0] & 0xe0) == 0xc0) {
                n = 2;
                cp = s[0] & 0x1f;
        } else if ((s[0] & 0xf0) == 0xe0) {
                n = 3;
                cp = s[0] & 0x0f;
        } else if ((s[0] & 0xf8) == 0xf0) {
                n = 4;
                cp = s[0] & 0x07;
        } else {
                return 0;
        }
        for (size_t i = 1; i < n; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                cp = (cp << 6) | (s[i] & 0x3f);
        }
        if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
            cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        return n;
}

static void jb_string(struct jbuf *b, const char *str)
{
        const unsigned char *s = (const unsigned char *)(str ? str : "");
        jb_add(b, "\"", 1);
        while (*s) {
                unsigned char ch = *s;
                switch (ch) {
                case '"':
                        jb_puts(b, "\\\"");
                        break;
                case '\\':
                        jb_puts(b, "\\\\");
                        break;
                case '\b':
                        jb_puts(b, "\\b");
                        break;
                case '\f':
                        jb_puts(b, "\\f");
                        break;
                case '\n':
                        jb_puts(b, "\\n");
                        break;
                case '\r':
                        jb_puts(b, "\\r");
                        break;
                case '\t':
                        jb_puts(b, "\\t");
                        break;
                case '<':
                case '>':
                case '&':
                        jb_printf(b, "\\u%04x", ch);
                        break;
                default:
                        if (ch < 0x20) {
                                jb_printf(b, "\\u%04x", ch);
                                break;
                        }
                        size_t n = utf8_len(s);
                        if (n == 0) {
                                jb_puts(b, "\\ufffd");
                                s++;
                                continue;
                        }
                        if (n == 3 && s[0] == 0xe2 && s[1] == 0x80 &&
                            (s[2] == 0xa8 || s[2] == 0xa9))
                                jb_printf(b, "\\u%s", s[2] == 0xa8 ? "2028" : "2029");
                        else
                                jb_add(b, (const char *)s, n);
                        s += n;
                        continue;
                }
                s++;
        }
        jb_add(b, "\"", 1);
}

static void jb_int_or_string(struct jbuf *b, const struct int_or_string *v)
{
        if (v->is_string)
                jb_string(b, v->sval);
        else
                jb_printf(b, "%" PRId32, v->ival);
}

char *kuberuntime__handler_json(const struct handler *h)
{
        struct jbuf b = {0};
        jb_puts(&b, "{");
        switch (h->kind) {
        case HANDLER_EXEC:
                jb_puts(&b, "\"exec\":{");
                if (h->exec_command.n > 0) {
                        jb_puts(&b, "\"command\":[");
                        for (size_t i = 0; i < h->exec_command.n; i++) {
                                if (i)
                                        jb_puts(&b, ",");
                                jb_string(&b, h->exec_command.items[i]);
                        }
                        jb_puts(&b, "]");
                }
                jb_puts(&b, "}");
                break;
        case HANDLER_HTTP_GET: {
                bool comma = false;
                jb_puts(&b, "\"httpGet\":{");
                if (h->http_path && *h->http_path) {
                        jb_puts(&b, "\"path\":");
                        jb_string(&b, h->http_path);
                        comma = true;
                }
                jb_puts(&b, comma ? ",\"port\":" : "\"port\":");
                jb_int_or_string(&b, &h->port);
                if (h->http_host && *h->http_host) {
                        jb_puts(&b, ",\"host\":");
                        jb_string(&b, h->http_host);
                }
                if (h->http_scheme && *h->http_scheme) {
                        jb_puts(&b, ",\"scheme\":");
                        jb_string(&b, h->http_scheme);
                }
                if (h->n_http_headers > 0) {
                        jb_puts(&b, ",\"httpHeaders\":[");
                        for (size_t i = 0; i < h->n_http_headers; i++) {
                                jb_puts(&b, i ? ",{\"name\":" : "{\"name\":");
                                jb_string(&b, h->http_headers[i].name);
                                jb_puts(&b, ",\"value\":");
                                jb_string(&b, h->http_headers[i].value);
                                jb_puts(&b, "}");
                        }
                        jb_puts(&b, "]");
                }
                jb_puts(&b, "}");
                break;
        }
        case HANDLER_TCP_SOCKET:
                jb_puts(&b, "\"tcpSocket\":{\"port\":");
                jb_int_or_string(&b, &h->port);
                jb_puts(&b, "}");
                break;
        case HANDLER_SLEEP:
                jb_printf(&b, "\"sleep\":{\"seconds\":%" PRId64 "}", h->sleep_seconds);
                break;
        case HANDLER_GRPC:
        case HANDLER_NONE:
                /* not a lifecycle handler kind */
                break;
        }
        jb_puts(&b, "}");
        return b.p;
}

char *kuberuntime__ports_json(const struct container_port *ports, size_t n)
{
        struct jbuf b = {0};
        jb_puts(&b, "[");
        for (size_t i = 0; i < n; i++) {
                const struct container_port *p = &ports[i];
                jb_puts(&b, i ? ",{" : "{");
                if (p->name && *p->name) {
                        jb_puts(&b, "\"name\":");
                        jb_string(&b, p->name);
                        jb_puts(&b, ",");
                }
                if (p->host_port != 0)
                        jb_printf(&b, "\"hostPort\":%" PRId32 ",", p->host_port);
                jb_printf(&b, "\"containerPort\":%" PRId32, p->container_port);
                if (p->protocol && *p->protocol) {
                        jb_puts(&b, ",\"protocol\":");
                        jb_string(&b, p->protocol);
                }
                if (p->host_ip && *p->host_ip) {
                        jb_puts(&b, ",\"hostIP\":");
                        jb_string(&b, p->host_ip);
                }
                jb_puts(&b, "}");
        }
        jb_puts(&b, "]");
        return b.p;
}
