/* SPDX-License-Identifier: Apache-2.0 */
/* The pod's /etc/hosts, as upstream's kubelet_pods.go managedHostsFileContent
 * / nodeHostsFileContent write it. */
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/xalloc.h"
#include "volume/plugins.h"
#include "volume/volume.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NODE_HOSTS_FILE "/etc/hosts"
#define HOSTS_FILE_MAX (1 << 20)
/* upstream truncatePodHostnameIfNeeded */
#define HOSTNAME_MAX 63

/* A value that goes into the file must not start a new line or field. */
static int check_field(const char *what, const char *value, ck_error_t *err)
{
        for (const char *p = value; *p; p++)
                if ((unsigned char)*p <= ' ' || *p == 0x7f)
                        return ck_error_make(err, 0, "invalid %s \"%s\" for /etc/hosts", what,
                                             value);
        return 0;
}

static void append(char **buf, size_t *len, size_t *cap, const char *s)
{
        size_t n = strlen(s);
        if (*len + n + 1 > *cap) {
                while (*len + n + 1 > *cap)
                        *cap *= 2;
                *buf = xrealloc(*buf, *cap);
        }
        memcpy(*buf + *len, s, n + 1);
        *len += n;
}

/* "\n# Entries added by HostAliases.\n<ip>\t<name>\t<name>\n" */
static int append_host_aliases(const struct pod *pod, char **buf, size_t *len, size_t *cap,
                               ck_error_t *err)
{
        if (pod->n_host_aliases == 0)
                return 0;
        append(buf, len, cap, "\n# Entries added by HostAliases.\n");
        for (size_t i = 0; i < pod->n_host_aliases; i++) {
                const struct host_alias *a = &pod->host_aliases[i];
                if (check_field("hostAliases IP", a->ip ? a->ip : "", err) < 0)
                        return -1;
                append(buf, len, cap, a->ip ? a->ip : "");
                append(buf, len, cap, "\t");
                for (size_t j = 0; j < a->hostnames.n; j++) {
                        if (check_field("hostAliases hostname", a->hostnames.items[j], err) < 0)
                                return -1;
                        if (j > 0)
                                append(buf, len, cap, "\t");
                        append(buf, len, cap, a->hostnames.items[j]);
                }
                append(buf, len, cap, "\n");
        }
        return 0;
}

/* The pod's hostname: spec.hostnameOverride, spec.hostname or its name,
 * cut to 63 characters without a trailing '-' or '.'. */
static char *pod_hostname(const struct pod *pod)
{
        const char *h = pod->hostname_override            ? pod->hostname_override
                        : pod->hostname && *pod->hostname ? pod->hostname
                                                          : pod->name;
        char *s = xstrndup(h ? h : "", HOSTNAME_MAX);
        size_t n = strlen(s);
        if (strlen(h ? h : "") > HOSTNAME_MAX)
                while (n > 0 && (s[n - 1] == '-' || s[n - 1] == '.'))
                        s[--n] = '\0';
        return s;
}

int volume_write_etc_hosts(const char *root_dir, const struct pod *pod, const char *pod_ip,
                           const char *cluster_domain, char **path, ck_error_t *err)
{
        if (volume_check_component("pod UID", pod->uid, err) < 0)
                return ck_error_wrap(err, "write /etc/hosts");
        size_t len = 0, cap = 512;
        cleanup_free char *buf = xmalloc(cap);
        buf[0] = '\0';
        if (pod->host_network) {
                cleanup_free char *node = NULL;
                if (fs_read_file(NODE_HOSTS_FILE, HOSTS_FILE_MAX, &node, NULL, err) < 0)
                        return ck_error_wrap(err, "write /etc/hosts");
                append(&buf, &len, &cap, "# Kubernetes-managed hosts file (host network).\n");
                append(&buf, &len, &cap, node);
        } else {
                append(&buf, &len, &cap,
                       "# Kubernetes-managed hosts file.\n"
                       "127.0.0.1\tlocalhost\n"
                       "::1\tlocalhost ip6-localhost ip6-loopback\n"
                       "fe00::0\tip6-localnet\n"
                       "fe00::0\tip6-mcastprefix\n"
                       "fe00::1\tip6-allnodes\n"
                       "fe00::2\tip6-allrouters\n");
                if (pod_ip != NULL && *pod_ip != '\0') {
                        cleanup_free char *host = pod_hostname(pod);
                        if (check_field("pod IP", pod_ip, err) < 0 ||
                            check_field("hostname", host, err) < 0)
                                return ck_error_wrap(err, "write /etc/hosts");
                        cleanup_free char *line = NULL;
                        /* an override has no domain (upstream
                         * GeneratePodHostNameAndDomain) */
                        if (pod->hostname_override == NULL && pod->subdomain != NULL &&
                            *pod->subdomain != '\0') {
                                if (check_field("subdomain", pod->subdomain, err) < 0)
                                        return ck_error_wrap(err, "write /etc/hosts");
                                line = xasprintf("%s\t%s.%s.%s.svc.%s\t%s\n", pod_ip, host,
                                                 pod->subdomain, pod->namespace,
                                                 cluster_domain ? cluster_domain : "", host);
                        } else {
                                line = xasprintf("%s\t%s\n", pod_ip, host);
                        }
                        append(&buf, &len, &cap, line);
                }
        }
        if (append_host_aliases(pod, &buf, &len, &cap, err) < 0)
                return ck_error_wrap(err, "write /etc/hosts");
        cleanup_free char *file = xasprintf("%s/pods/%s/etc-hosts", root_dir, pod->uid);
        if (fs_write_file_atomic(file, buf, len, 0644, err) < 0)
                return ck_error_wrap(err, "write /etc/hosts");
        *path = file;
        file = NULL;
        return 0;
}
