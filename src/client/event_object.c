/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The core/v1 Event the recorder posts (upstream client-go tools/record
 * makeEvent, util.GenerateEventName, and the keys its correlator uses).
 */
#include "client/events_internal.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

static char *dup_nonempty(const char *s)
{
        return s != NULL && s[0] != '\0' ? xstrdup(s) : NULL;
}

/* apimachinery IsDNS1123Subdomain: at most 253 characters, dot-separated
 * labels of [a-z0-9-] that start and end alphanumeric. */
static bool is_dns_subdomain(const char *s)
{
        size_t n = strlen(s);
        if (n == 0 || n > 253)
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];
                bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
                bool label_edge = i == 0 || i == n - 1 || s[i - 1] == '.' || s[i + 1] == '.';
                if (c == '.') {
                        if (i == 0 || i == n - 1 || s[i - 1] == '.')
                                return false;
                } else if (c == '-') {
                        if (label_edge)
                                return false;
                } else if (!alnum) {
                        return false;
                }
        }
        return true;
}

/* A random (version 4) UUID, as github.com/google/uuid New().  New string. */
static char *random_uuid(void)
{
        unsigned char b[16];
        ssize_t got = 0;
        while (got < (ssize_t)sizeof(b)) {
                ssize_t r = getrandom(b + got, sizeof(b) - (size_t)got, 0);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r <= 0)
                        break;
                got += r;
        }
        for (ssize_t i = got < 0 ? 0 : got; i < (ssize_t)sizeof(b); i++)
                b[i] = (unsigned char)rand();
        b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
        b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
        return xasprintf("%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                         b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
                         b[12], b[13], b[14], b[15]);
}

char *event__name(const char *ref_name, int64_t now_ns)
{
        char *name = xasprintf("%s.%" PRIx64, ref_name ? ref_name : "", (uint64_t)now_ns);
        if (!is_dns_subdomain(name)) {
                free(name);
                name = random_uuid();
        }
        return name;
}

void event__format_time(int64_t unix_ns, char *buf, size_t len)
{
        time_t t = (time_t)(unix_ns / 1000000000LL);
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

struct event *event__new(const struct event_object *obj, const char *host, const char *type,
                         const char *reason, const char *message, int64_t now_ns)
{
        struct event *ev = xcalloc(1, sizeof(*ev));
        ev->kind = dup_nonempty(obj->kind);
        ev->api_version = dup_nonempty(obj->api_version);
        ev->obj_namespace = dup_nonempty(obj->namespace);
        ev->obj_name = dup_nonempty(obj->name);
        ev->obj_uid = dup_nonempty(obj->uid);
        ev->obj_resource_version = dup_nonempty(obj->resource_version);
        ev->field_path = dup_nonempty(obj->field_path);
        /* upstream makeEvent: an object without a namespace (the node)
         * has its events in "default" */
        ev->namespace = xstrdup(ev->obj_namespace ? ev->obj_namespace : "default");
        ev->name = event__name(obj->name, now_ns);
        ev->type = xstrdup(type ? type : "");
        ev->reason = xstrdup(reason ? reason : "");
        ev->message = xstrdup(message ? message : "");
        ev->host = xstrdup(host ? host : "");
        ev->first_ns = now_ns;
        ev->last_ns = now_ns;
        ev->count = 1;
        return ev;
}

struct event *event__copy(const struct event *src)
{
        struct event *ev = xcalloc(1, sizeof(*ev));
        *ev = *src;
        ev->name = xstrdup(src->name);
        ev->namespace = xstrdup(src->namespace);
        ev->kind = xstrdup(src->kind);
        ev->api_version = xstrdup(src->api_version);
        ev->obj_namespace = xstrdup(src->obj_namespace);
        ev->obj_name = xstrdup(src->obj_name);
        ev->obj_uid = xstrdup(src->obj_uid);
        ev->obj_resource_version = xstrdup(src->obj_resource_version);
        ev->field_path = xstrdup(src->field_path);
        ev->type = xstrdup(src->type);
        ev->reason = xstrdup(src->reason);
        ev->message = xstrdup(src->message);
        ev->host = xstrdup(src->host);
        ev->resource_version = xstrdup(src->resource_version);
        return ev;
}

void event__free(struct event *ev)
{
        if (ev == NULL)
                return;
        free(ev->name);
        free(ev->namespace);
        free(ev->kind);
        free(ev->api_version);
        free(ev->obj_namespace);
        free(ev->obj_name);
        free(ev->obj_uid);
        free(ev->obj_resource_version);
        free(ev->field_path);
        free(ev->type);
        free(ev->reason);
        free(ev->message);
        free(ev->host);
        free(ev->resource_version);
        free(ev);
}

static void set_str(json_t *o, const char *key, const char *v)
{
        if (v != NULL && v[0] != '\0')
                json_object_set_new(o, key, json_string(v));
}

static void set_time(json_t *o, const char *key, int64_t ns)
{
        char buf[32];
        event__format_time(ns, buf, sizeof(buf));
        json_object_set_new(o, key, json_string(buf));
}

json_t *event__to_json(const struct event *ev)
{
        json_t *o = json_object();
        json_object_set_new(o, "kind", json_string("Event"));
        json_object_set_new(o, "apiVersion", json_string("v1"));
        json_t *meta = json_object();
        set_str(meta, "name", ev->name);
        set_str(meta, "namespace", ev->namespace);
        json_object_set_new(o, "metadata", meta);
        json_t *ref = json_object();
        set_str(ref, "kind", ev->kind);
        set_str(ref, "namespace", ev->obj_namespace);
        set_str(ref, "name", ev->obj_name);
        set_str(ref, "uid", ev->obj_uid);
        set_str(ref, "apiVersion", ev->api_version);
        set_str(ref, "resourceVersion", ev->obj_resource_version);
        set_str(ref, "fieldPath", ev->field_path);
        json_object_set_new(o, "involvedObject", ref);
        set_str(o, "reason", ev->reason);
        set_str(o, "message", ev->message);
        json_t *source = json_object();
        set_str(source, "component", EVENT_COMPONENT);
        set_str(source, "host", ev->host);
        json_object_set_new(o, "source", source);
        set_time(o, "firstTimestamp", ev->first_ns);
        set_time(o, "lastTimestamp", ev->last_ns);
        json_object_set_new(o, "count", json_integer(ev->count));
        set_str(o, "type", ev->type);
        json_object_set_new(o, "eventTime", json_null());
        set_str(o, "reportingComponent", EVENT_COMPONENT);
        set_str(o, "reportingInstance", ev->host);
        return o;
}

json_t *event__patch_json(const struct event *ev)
{
        json_t *o = json_object();
        json_object_set_new(o, "count", json_integer(ev->count));
        set_time(o, "lastTimestamp", ev->last_ns);
        json_object_set_new(o, "message", json_string(ev->message ? ev->message : ""));
        return o;
}

/* strings.Join(parts, ""): NULL parts are empty. */
static char *join(const char *const *parts, size_t n)
{
        size_t len = 1;
        for (size_t i = 0; i < n; i++)
                len += parts[i] ? strlen(parts[i]) : 0;
        char *s = xmalloc(len);
        char *p = s;
        for (size_t i = 0; i < n; i++) {
                if (parts[i] == NULL)
                        continue;
                size_t l = strlen(parts[i]);
                memcpy(p, parts[i], l);
                p += l;
        }
        *p = '\0';
        return s;
}

char *event__key(const struct event *ev)
{
        const char *parts[] = {EVENT_COMPONENT, ev->host,       ev->kind,    ev->obj_namespace,
                               ev->obj_name,    ev->field_path, ev->obj_uid, ev->api_version,
                               ev->type,        ev->reason,     ev->message};
        return join(parts, sizeof(parts) / sizeof(parts[0]));
}

char *event__spam_key(const struct event *ev)
{
        const char *parts[] = {EVENT_COMPONENT, ev->host,    ev->kind,        ev->obj_namespace,
                               ev->obj_name,    ev->obj_uid, ev->api_version, ev->type};
        return join(parts, sizeof(parts) / sizeof(parts[0]));
}

char *event__aggregate_key(const struct event *ev)
{
        /* the last two: reportingController and reportingInstance */
        const char *parts[] = {EVENT_COMPONENT, ev->host,        ev->kind,        ev->obj_namespace,
                               ev->obj_name,    ev->obj_uid,     ev->api_version, ev->type,
                               ev->reason,      EVENT_COMPONENT, ev->host};
        return join(parts, sizeof(parts) / sizeof(parts[0]));
}
