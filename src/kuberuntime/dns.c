/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pod's DNS configuration for its sandbox, as upstream's
 * pkg/kubelet/network/dns (GetPodDNS) computes it:
 *   None                          -> only spec.dnsConfig
 *   ClusterFirst (not hostNetwork), ClusterFirstWithHostNet
 *     with --cluster-dns          -> the cluster nameservers, searches
 *                                    <ns>.svc.<domain> svc.<domain> <domain>
 *                                    + the host's, options ndots:5
 *     without                     -> as Default (upstream also emits a
 *                                    MissingClusterDNS event; we log)
 *   Default, ClusterFirst + hostNetwork
 *                                 -> the host's resolv.conf; with
 *                                    --resolv-conf="" nameserver 127.0.0.1
 *                                    and search "."
 * then spec.dnsConfig is merged (duplicates dropped, its options replace
 * same-named ones) and the result cut to the resolver's limits (3
 * nameservers, 32 search domains of at most 253 characters, 2048
 * characters in the search line).
 *
 * Where upstream iterates a Go map (option merging), the order here is the
 * first appearance of each option name: deterministic, same set.
 */
#include "kuberuntime/builders.h"
#include "kuberuntime/builders_internal.h"

#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define MAX_RESOLV_CONF_LENGTH (10 << 20) /* upstream maxResolvConfLength */
#define MAX_DNS_NAMESERVERS 3
#define MAX_DNS_SEARCH_PATHS 32
#define MAX_DNS_SEARCH_LIST_CHARS 2048
#define DNS1123_SUBDOMAIN_MAX_LENGTH 253

struct strv {
        char **items;
        size_t n;
};

static void strv_clear(struct strv *v)
{
        for (size_t i = 0; i < v->n; i++)
                free(v->items[i]);
        free(v->items);
        v->items = NULL;
        v->n = 0;
}

static bool strv_contains(const struct strv *v, const char *s)
{
        for (size_t i = 0; i < v->n; i++)
                if (strcmp(v->items[i], s) == 0)
                        return true;
        return false;
}

static void strv_push(struct strv *v, const char *s)
{
        v->items = xrealloc(v->items, (v->n + 1) * sizeof(*v->items));
        v->items[v->n++] = xstrdup(s);
}

/* Appends s unless already present (upstream omitDuplicates over the
 * concatenation keeps the first occurrence). */
static void strv_push_unique(struct strv *v, const char *s)
{
        if (!strv_contains(v, s))
                strv_push(v, s);
}

/* The option's name: up to the first ':' */
static size_t option_name_len(const char *opt)
{
        const char *c = strchr(opt, ':');
        return c ? (size_t)(c - opt) : strlen(opt);
}

/* Sets an option, replacing one of the same name (upstream appendOptions /
 * mergeDNSOptions). */
static void options_set(struct strv *opts, const char *opt)
{
        size_t n = option_name_len(opt);
        for (size_t i = 0; i < opts->n; i++) {
                if (option_name_len(opts->items[i]) == n && strncmp(opts->items[i], opt, n) == 0) {
                        free(opts->items[i]);
                        opts->items[i] = xstrdup(opt);
                        return;
                }
        }
        strv_push(opts, opt);
}

struct dns {
        struct strv servers, searches, options;
};

static void dns_clear(struct dns *d)
{
        strv_clear(&d->servers);
        strv_clear(&d->searches);
        strv_clear(&d->options);
}

/* upstream parseResolvConf */
static int parse_resolv_conf(char *text, struct dns *d, ck_error_t *err)
{
        bool empty_nameserver = false;
        char *save = NULL;
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char *fields[512];
                size_t nf = 0;
                char *fsave = NULL;
                for (char *f = strtok_r(line, " \t\r\v\f", &fsave); f && nf < ARRAY_SIZE(fields);
                     f = strtok_r(NULL, " \t\r\v\f", &fsave))
                        fields[nf++] = f;
                if (nf == 0 || fields[0][0] == '#')
                        continue;
                if (strcmp(fields[0], "nameserver") == 0) {
                        if (nf >= 2)
                                strv_push(&d->servers, fields[1]);
                        else
                                empty_nameserver = true;
                } else if (strcmp(fields[0], "search") == 0) {
                        /* the last search line wins; "x." and "x" count once */
                        strv_clear(&d->searches);
                        for (size_t i = 1; i < nf; i++) {
                                if (strcmp(fields[i], ".") == 0)
                                        continue;
                                size_t l = strlen(fields[i]);
                                if (l > 0 && fields[i][l - 1] == '.')
                                        fields[i][l - 1] = '\0';
                                strv_push(&d->searches, fields[i]);
                        }
                } else if (strcmp(fields[0], "options") == 0) {
                        for (size_t i = 1; i < nf; i++)
                                options_set(&d->options, fields[i]);
                }
        }
        if (empty_nameserver)
                return ck_error_make(err, 0, "nameserver list is empty ");
        return 0;
}

/* Reads the host's DNS settings (upstream getDNSConfig); "" -> none. */
static int host_dns_config(const char *path, struct dns *d, ck_error_t *err)
{
        if (path == NULL || *path == '\0')
                return 0;
        cleanup_free char *text = NULL;
        size_t len;
        if (fs_read_file(path, MAX_RESOLV_CONF_LENGTH, &text, &len, err) < 0)
                return ck_error_wrap(err, "could not open resolv conf file");
        if (parse_resolv_conf(text, d, err) < 0)
                return ck_error_wrap(err,
                                     "Encountered error while parsing resolv conf file. Error");
        return 0;
}

enum dns_type { DNS_TYPE_CLUSTER, DNS_TYPE_HOST, DNS_TYPE_NONE };

static enum dns_type pod_dns_type(const struct pod *pod)
{
        switch (pod->dns_policy) {
        case DNS_NONE:
                return DNS_TYPE_NONE;
        case DNS_CLUSTER_FIRST_WITH_HOST_NET:
                return DNS_TYPE_CLUSTER;
        case DNS_CLUSTER_FIRST:
                return pod->host_network ? DNS_TYPE_HOST : DNS_TYPE_CLUSTER;
        case DNS_DEFAULT:
                return DNS_TYPE_HOST;
        }
        return DNS_TYPE_CLUSTER;
}

static void cluster_searches(const struct kuberuntime_options *opts, const struct pod *pod,
                             struct dns *d)
{
        const char *domain = opts->cluster_domain;
        if (domain == NULL || *domain == '\0')
                return; /* the host's searches only */
        struct strv s = {0};
        char *ns_svc = xasprintf("%s.svc.%s", pod->namespace, domain);
        char *svc = xasprintf("svc.%s", domain);
        strv_push_unique(&s, ns_svc);
        strv_push_unique(&s, svc);
        strv_push_unique(&s, domain);
        for (size_t i = 0; i < d->searches.n; i++)
                strv_push_unique(&s, d->searches.items[i]);
        free(ns_svc);
        free(svc);
        strv_clear(&d->searches);
        d->searches = s;
}

/* upstream formDNSSearchFitsLimits / formDNSNameserversFitsLimits */
static void fit_limits(const struct pod *pod, struct dns *d)
{
        if (d->servers.n > MAX_DNS_NAMESERVERS) {
                for (size_t i = MAX_DNS_NAMESERVERS; i < d->servers.n; i++)
                        free(d->servers.items[i]);
                d->servers.n = MAX_DNS_NAMESERVERS;
                LOG_ERROR("Nameserver limits exceeded", "pod=\"%s\"", pod_full_name(pod));
        }

        bool exceeded = false;
        if (d->searches.n > MAX_DNS_SEARCH_PATHS) {
                for (size_t i = MAX_DNS_SEARCH_PATHS; i < d->searches.n; i++)
                        free(d->searches.items[i]);
                d->searches.n = MAX_DNS_SEARCH_PATHS;
                exceeded = true;
        }
        /* glibc may abort() on a search domain longer than 255: drop them */
        size_t kept = 0, line_len = 0;
        for (size_t i = 0; i < d->searches.n; i++) {
                char *s = d->searches.items[i];
                if (strlen(s) > DNS1123_SUBDOMAIN_MAX_LENGTH) {
                        free(s);
                        exceeded = true;
                        continue;
                }
                line_len += strlen(s) + (kept ? 1 : 0);
                d->searches.items[kept++] = s;
        }
        d->searches.n = kept;
        /* cut whole domains from the end until the line fits */
        while (line_len > MAX_DNS_SEARCH_LIST_CHARS && d->searches.n > 0) {
                char *last = d->searches.items[--d->searches.n];
                size_t cut = strlen(last) + 1;
                line_len = line_len > cut ? line_len - cut : 0;
                free(last);
                exceeded = true;
        }
        if (exceeded)
                LOG_ERROR("Search Line limits exceeded", "pod=\"%s\"", pod_full_name(pod));
}

/* upstream omitDuplicates(append(v, more...)): the first occurrence of
 * each string over the concatenation. */
static void append_unique(struct strv *v, const struct str_list *more)
{
        struct strv out = {0};
        for (size_t i = 0; i < v->n; i++)
                strv_push_unique(&out, v->items[i]);
        for (size_t i = 0; i < more->n; i++)
                strv_push_unique(&out, more->items[i]);
        strv_clear(v);
        *v = out;
}

static void move_strv(struct strv *from, size_t *n, char ***arr)
{
        *arr = from->items;
        *n = from->n;
        from->items = NULL;
        from->n = 0;
}

int kuberuntime_pod_dns_config(const struct kuberuntime_options *opts, const struct pod *pod,
                               Runtime__V1__DNSConfig **out, ck_error_t *err)
{
        struct dns d = {0};
        if (host_dns_config(opts->resolv_conf, &d, err) < 0) {
                dns_clear(&d);
                return -1;
        }

        enum dns_type type = pod_dns_type(pod);
        bool has_cluster_dns = opts->cluster_dns != NULL && opts->cluster_dns[0] != NULL;
        if (type == DNS_TYPE_NONE) {
                dns_clear(&d);
        } else if (type == DNS_TYPE_CLUSTER && has_cluster_dns) {
                strv_clear(&d.servers);
                for (const char *const *ip = opts->cluster_dns; *ip; ip++)
                        strv_push(&d.servers, *ip);
                cluster_searches(opts, pod, &d);
                strv_clear(&d.options);
                strv_push(&d.options, "ndots:5");
        } else {
                if (type == DNS_TYPE_CLUSTER)
                        LOG_WARN("kubelet does not have ClusterDNS IP configured and cannot create "
                                 "Pod using \"ClusterFirst\" policy. Falling back to \"Default\" "
                                 "policy.",
                                 "pod=\"%s\"", pod_full_name(pod));
                if (opts->resolv_conf == NULL || *opts->resolv_conf == '\0') {
                        /* no host DNS: the resolver library's "use the local
                         * machine", and no search domains */
                        strv_push(&d.servers, "127.0.0.1");
                        strv_clear(&d.searches);
                        strv_push(&d.searches, ".");
                }
        }

        if (pod->dns_config != NULL) {
                const struct pod_dns_config *pc = pod->dns_config;
                append_unique(&d.servers, &pc->nameservers);
                append_unique(&d.searches, &pc->searches);
                for (size_t i = 0; i < pc->options.n; i++) {
                        const struct kv *o = &pc->options.items[i];
                        cleanup_free char *opt = NULL;
                        if (o->value != NULL && *o->value != '\0')
                                opt = xasprintf("%s:%s", o->key, o->value);
                        else
                                opt = xstrdup(o->key ? o->key : "");
                        options_set(&d.options, opt);
                }
        }
        fit_limits(pod, &d);

        Runtime__V1__DNSConfig *cfg = xmalloc(sizeof(*cfg));
        runtime__v1__dnsconfig__init(cfg);
        move_strv(&d.servers, &cfg->n_servers, &cfg->servers);
        move_strv(&d.searches, &cfg->n_searches, &cfg->searches);
        move_strv(&d.options, &cfg->n_options, &cfg->options);
        *out = cfg;
        return 0;
}
