/* SPDX-License-Identifier: Apache-2.0 */
#include "envvars/envvars.h"

#include "util/cleanup.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* upstream masterServices */
#define MASTER_SERVICE "kubernetes"
#define MASTER_NAMESPACE "default"

static const char *str_at(const json_t *o, const char *a, const char *b)
{
        return json_string_value(json_object_get(json_object_get(o, a), b));
}

/* upstream makeEnvVariableName: upper case, '-' as '_'.  New string. */
static char *env_name(const char *s)
{
        char *out = xstrdup(s);
        for (char *p = out; *p; p++)
                *p = *p == '-' ? '_' : (char)toupper((unsigned char)*p);
        return out;
}

/* upstream IsServiceIPSet */
static bool has_cluster_ip(const json_t *svc)
{
        const char *ip = str_at(svc, "spec", "clusterIP");
        return ip != NULL && *ip != '\0' && strcmp(ip, "None") != 0;
}

static void add(struct kv_list *out, const char *value, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void add(struct kv_list *out, const char *value, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        char *name = NULL;
        if (vasprintf(&name, fmt, ap) < 0)
                abort();
        va_end(ap);
        kv_list_add(out, name, value);
        free(name);
}

/* upstream FromServices for one Service */
static void service_vars(const json_t *svc, struct kv_list *out)
{
        const char *ip = str_at(svc, "spec", "clusterIP");
        json_t *ports = json_object_get(json_object_get(svc, "spec"), "ports");
        if (json_array_size(ports) == 0)
                return; /* validation requires a port for a cluster IP */
        cleanup_free char *prefix = env_name(str_at(svc, "metadata", "name"));
        /* net.JoinHostPort */
        cleanup_free char *host = strchr(ip, ':') ? xasprintf("[%s]", ip) : xstrdup(ip);
        char port0[24];
        snprintf(port0, sizeof(port0), "%" JSON_INTEGER_FORMAT,
                 json_integer_value(json_object_get(json_array_get(ports, 0), "port")));

        add(out, ip, "%s_SERVICE_HOST", prefix);
        add(out, port0, "%s_SERVICE_PORT", prefix);
        size_t i;
        json_t *sp;
        json_array_foreach(ports, i, sp)
        {
                const char *pname = json_string_value(json_object_get(sp, "name"));
                if (pname == NULL || *pname == '\0')
                        continue;
                char port[24];
                snprintf(port, sizeof(port), "%" JSON_INTEGER_FORMAT,
                         json_integer_value(json_object_get(sp, "port")));
                cleanup_free char *suffix = env_name(pname);
                add(out, port, "%s_SERVICE_PORT_%s", prefix, suffix);
        }
        json_array_foreach(ports, i, sp)
        {
                const char *proto = json_string_value(json_object_get(sp, "protocol"));
                cleanup_free char *upper = env_name(proto && *proto ? proto : "TCP");
                cleanup_free char *lower = xstrdup(upper);
                for (char *p = lower; *p; p++)
                        *p = (char)tolower((unsigned char)*p);
                json_int_t port = json_integer_value(json_object_get(sp, "port"));
                char port_s[24];
                snprintf(port_s, sizeof(port_s), "%" JSON_INTEGER_FORMAT, port);
                cleanup_free char *url = xasprintf("%s://%s:%s", lower, host, port_s);
                if (i == 0) /* docker special-cases the first port */
                        add(out, url, "%s_PORT", prefix);
                cleanup_free char *pp =
                    xasprintf("%s_PORT_%" JSON_INTEGER_FORMAT "_%s", prefix, port, upper);
                add(out, url, "%s", pp);
                add(out, lower, "%s_PROTO", pp);
                add(out, port_s, "%s_PORT", pp);
                add(out, ip, "%s_ADDR", pp);
        }
}

static int by_name(const void *a, const void *b)
{
        return strcmp(str_at(*(json_t *const *)a, "metadata", "name"),
                      str_at(*(json_t *const *)b, "metadata", "name"));
}

void envvars_for_pod(const json_t *services, const char *ns, bool enable_service_links,
                     struct kv_list *out)
{
        size_t n = json_array_size(services), n_chosen = 0;
        json_t **chosen = xcalloc(n ? n : 1, sizeof(*chosen));
        json_t *master = NULL;
        bool local_master = false;
        for (size_t i = 0; i < n; i++) {
                json_t *svc = json_array_get(services, i);
                const char *name = str_at(svc, "metadata", "name");
                const char *sns = str_at(svc, "metadata", "namespace");
                if (name == NULL || *name == '\0' || sns == NULL || !has_cluster_ip(svc))
                        continue;
                bool same_ns = ns != NULL && strcmp(sns, ns) == 0;
                if (strcmp(sns, MASTER_NAMESPACE) == 0 && strcmp(name, MASTER_SERVICE) == 0) {
                        master = svc;
                } else if (same_ns && enable_service_links) {
                        chosen[n_chosen++] = svc;
                        if (strcmp(name, MASTER_SERVICE) == 0)
                                local_master = true;
                }
        }
        if (master != NULL && !local_master)
                chosen[n_chosen++] = master;
        qsort(chosen, n_chosen, sizeof(*chosen), by_name);
        for (size_t i = 0; i < n_chosen; i++)
                service_vars(chosen[i], out);
        free(chosen);
}

json_t *envvars_service_fields(json_t *service)
{
        json_t *md = json_object_get(service, "metadata");
        json_t *spec = json_object_get(service, "spec");
        json_t *ports = json_array();
        size_t i;
        json_t *sp;
        json_array_foreach(json_object_get(spec, "ports"), i, sp)
        {
                json_t *p = json_object();
                static const char *const keep[] = {"name", "port", "protocol"};
                for (size_t k = 0; k < sizeof(keep) / sizeof(keep[0]); k++) {
                        json_t *v = json_object_get(sp, keep[k]);
                        if (v)
                                json_object_set(p, keep[k], v);
                }
                json_array_append_new(ports, p);
        }
        json_t *cluster_ip = json_object_get(spec, "clusterIP");
        return json_pack("{s:{s:O*,s:O*},s:{s:O*,s:o}}", "metadata", "name",
                         json_object_get(md, "name"), "namespace", json_object_get(md, "namespace"),
                         "spec", "clusterIP", cluster_ip, "ports", ports);
}
