/* SPDX-License-Identifier: Apache-2.0 */
#include "kubelet/sysctl.h"

#include "util/xalloc.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum sysctl_ns { NS_UNKNOWN = 0, NS_IPC, NS_NET };

struct entry {
        char *name; /* a sysctl, or a prefix when `prefix` */
        bool prefix;
        enum sysctl_ns ns;
};

struct sysctl_allowlist {
        struct entry *entries;
        size_t n;
};

/* safe_sysctls.go: the namespaced sysctls that cannot harm the node or
 * other pods, with the kernel that namespaced each (pkg/util/kernel). */
static const struct {
        const char *name;
        int major, minor; /* 0, 0: any kernel */
} safe_sysctls[] = {
    {"kernel.shm_rmid_forced", 0, 0},
    {"net.ipv4.ip_local_port_range", 0, 0},
    {"net.ipv4.tcp_syncookies", 0, 0},
    {"net.ipv4.ping_group_range", 0, 0},
    {"net.ipv4.ip_unprivileged_port_start", 0, 0},
    {"net.ipv4.ip_local_reserved_ports", 3, 16},
    {"net.ipv4.tcp_keepalive_time", 4, 5},
    {"net.ipv4.tcp_fin_timeout", 4, 6},
    {"net.ipv4.tcp_keepalive_intvl", 4, 5},
    {"net.ipv4.tcp_keepalive_probes", 4, 5},
    {"net.ipv4.tcp_rmem", 4, 15},
    {"net.ipv4.tcp_wmem", 4, 15},
};

char *sysctl_normalize_name(const char *name)
{
        char *out = xstrdup(name);
        size_t first = strcspn(out, "./");
        if (out[first] != '/')
                return out;
        for (char *p = out; *p; p++)
                *p = *p == '.' ? '/' : *p == '/' ? '.' : *p;
        return out;
}

/* component-helpers' namespaceOf ("kernel.shm" and "kernel.msg" are there
 * for the patterns kernel.shm* and kernel.msg*) */
static enum sysctl_ns namespace_of(const char *s)
{
        static const char *const ipc[] = {
            "kernel.sem",    "kernel.shmall",          "kernel.shmmax",
            "kernel.shmmni", "kernel.shm_rmid_forced", "kernel.shm",
            "kernel.msgmax", "kernel.msgmnb",          "kernel.msgmni",
            "kernel.msg"};
        for (size_t i = 0; i < sizeof(ipc) / sizeof(ipc[0]); i++)
                if (strcmp(s, ipc[i]) == 0)
                        return NS_IPC;
        if (strncmp(s, "net.", 4) == 0)
                return NS_NET;
        if (strncmp(s, "fs.mqueue.", 10) == 0)
                return NS_IPC;
        return NS_UNKNOWN;
}

static const char *ns_name(enum sysctl_ns ns)
{
        return ns == NS_IPC ? "IPC" : "Net";
}

/* policy validation IsValidSysctlPattern */
static bool valid_pattern(const char *s)
{
        if (strlen(s) > 253)
                return false;
        regex_t re;
        if (regcomp(&re, "^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*([a-z0-9][-_a-z0-9]*)?[a-z0-9*]$",
                    REG_EXTENDED | REG_NOSUB) != 0)
                return false;
        bool ok = regexec(&re, s, 0, NULL, 0) == 0;
        regfree(&re);
        return ok;
}

static bool kernel_at_least(const char *release, int major, int minor)
{
        int ma = 0, mi = 0;
        if (major == 0 && minor == 0)
                return true;
        if (release == NULL || sscanf(release, "%d.%d", &ma, &mi) != 2)
                return false;
        return ma > major || (ma == major && mi >= minor);
}

static int add(struct sysctl_allowlist *al, const char *pattern, ck_error_t *err)
{
        if (!valid_pattern(pattern))
                return ck_error_make(
                    err, 0,
                    "sysctl \"%s\" must have at most 253 characters and match regex "
                    "([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*([a-z0-9][-_a-z0-9]*)?[a-z0-9*]",
                    pattern);
        char *name = sysctl_normalize_name(pattern);
        char *star = strchr(name, '*');
        bool prefix = star != NULL;
        if (star)
                *star = '\0';
        enum sysctl_ns ns = namespace_of(name);
        if (ns == NS_UNKNOWN) {
                ck_error_make(err, 0, "the sysctls \"%s\" are not known to be namespaced", name);
                free(name);
                return -1;
        }
        al->entries = xrealloc(al->entries, (al->n + 1) * sizeof(*al->entries));
        al->entries[al->n++] = (struct entry){.name = name, .prefix = prefix, .ns = ns};
        return 0;
}

int sysctl_allowlist_new(const char *const *unsafe, const char *release,
                         struct sysctl_allowlist **out, ck_error_t *err)
{
        struct sysctl_allowlist *al = xcalloc(1, sizeof(*al));
        for (size_t i = 0; i < sizeof(safe_sysctls) / sizeof(safe_sysctls[0]); i++)
                if (kernel_at_least(release, safe_sysctls[i].major, safe_sysctls[i].minor) &&
                    add(al, safe_sysctls[i].name, err) < 0)
                        goto fail;
        for (size_t i = 0; unsafe != NULL && unsafe[i] != NULL; i++)
                if (add(al, unsafe[i], err) < 0)
                        goto fail;
        *out = al;
        return 0;
fail:
        sysctl_allowlist_free(al);
        *out = NULL;
        return -1;
}

void sysctl_allowlist_free(struct sysctl_allowlist *al)
{
        if (al == NULL)
                return;
        for (size_t i = 0; i < al->n; i++)
                free(al->entries[i].name);
        free(al->entries);
        free(al);
}

/* allowlist.go validateSysctl: exact names first, then prefixes. */
static bool validate(const struct sysctl_allowlist *al, const char *raw, bool host_net,
                     bool host_ipc, char *message, size_t len)
{
        char *s = sysctl_normalize_name(raw);
        const struct entry *hit = NULL;
        for (size_t i = 0; i < al->n && hit == NULL; i++)
                if (!al->entries[i].prefix && strcmp(al->entries[i].name, s) == 0)
                        hit = &al->entries[i];
        for (size_t i = 0; i < al->n && hit == NULL; i++)
                if (al->entries[i].prefix &&
                    strncmp(s, al->entries[i].name, strlen(al->entries[i].name)) == 0)
                        hit = &al->entries[i];
        bool ok = true;
        if (hit == NULL) {
                snprintf(message, len, "forbidden sysctl: \"%s\" not allowlisted", s);
                ok = false;
        } else if ((hit->ns == NS_IPC && host_ipc) || (hit->ns == NS_NET && host_net)) {
                snprintf(message, len, "forbidden sysctl: \"%s\" not allowed with host %s enabled",
                         s, ns_name(hit->ns));
                ok = false;
        }
        free(s);
        return ok;
}

bool sysctl_allowlist_admit(const struct sysctl_allowlist *al, const struct pod *pod, char *message,
                            size_t len)
{
        const struct kv_list *l = &pod->security_context.sysctls;
        for (size_t i = 0; i < l->n; i++)
                if (!validate(al, l->items[i].key, pod->host_network, pod->host_ipc, message, len))
                        return false;
        return true;
}
