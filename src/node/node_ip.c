/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node's InternalIP: --node-ip checked against this host's interfaces
 * (upstream validateNodeIP), or chosen as upstream's ResolveBindAddress does
 * (the IPv4 address of the default route's interface).  No DNS lookup of
 * the node name: tests may reach nothing but loopback.
 */
#include "node/node_internal.h"

#include "util/cleanup.h"
#include "util/xalloc.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

static bool same_addr(const struct sockaddr *sa, int family, const void *addr)
{
        if (sa == NULL || sa->sa_family != family)
                return false;
        if (family == AF_INET)
                return memcmp(&((const struct sockaddr_in *)(const void *)sa)->sin_addr, addr, 4) ==
                       0;
        return memcmp(&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, addr, 16) == 0;
}

static int validate_node_ip(const char *ip, ck_error_t *err)
{
        unsigned char buf[16];
        int family = AF_INET;
        if (inet_pton(AF_INET, ip, buf) != 1) {
                family = AF_INET6;
                if (inet_pton(AF_INET6, ip, buf) != 1)
                        return ck_error_make(err, 0, "nodeIP must be a valid IP address");
        }
        if (family == AF_INET) {
                if (buf[0] >= 224 && buf[0] <= 239)
                        return ck_error_make(err, 0, "nodeIP can't be a multicast address");
                if (buf[0] == 169 && buf[1] == 254)
                        return ck_error_make(err, 0,
                                             "nodeIP can't be a link-local unicast address");
                if (memcmp(buf, "\0\0\0\0", 4) == 0)
                        return ck_error_make(err, 0, "nodeIP can't be an all zeros address");
        } else {
                struct in6_addr a;
                memcpy(&a, buf, 16);
                if (IN6_IS_ADDR_MULTICAST(&a))
                        return ck_error_make(err, 0, "nodeIP can't be a multicast address");
                if (IN6_IS_ADDR_LINKLOCAL(&a))
                        return ck_error_make(err, 0,
                                             "nodeIP can't be a link-local unicast address");
                if (IN6_IS_ADDR_UNSPECIFIED(&a))
                        return ck_error_make(err, 0, "nodeIP can't be an all zeros address");
        }
        struct ifaddrs *ifs = NULL;
        if (getifaddrs(&ifs) < 0)
                return ck_error_make(err, errno, "list the host's network interfaces");
        bool found = false;
        for (struct ifaddrs *i = ifs; i && !found; i = i->ifa_next)
                found = same_addr(i->ifa_addr, family, buf);
        freeifaddrs(ifs);
        if (!found)
                return ck_error_make(err, 0,
                                     "node IP: \"%s\" not found in the host's network "
                                     "interfaces",
                                     ip);
        return 0;
}

/* The interface of the IPv4 default route (/proc/net/route), or "". */
static void default_route_iface(char name[IF_NAMESIZE + 1])
{
        name[0] = '\0';
        cleanup_fclose FILE *f = fopen("/proc/net/route", "re");
        if (f == NULL)
                return;
        char line[512];
        if (fgets(line, sizeof(line), f) == NULL) /* header */
                return;
        while (fgets(line, sizeof(line), f)) {
                char iface[IF_NAMESIZE + 1];
                unsigned long dest, mask;
                if (sscanf(line, "%16s %lx %*x %*x %*d %*d %*d %lx", iface, &dest, &mask) == 3 &&
                    dest == 0 && mask == 0) {
                        snprintf(name, IF_NAMESIZE + 1, "%s", iface);
                        return;
                }
        }
}

static char *choose_host_ip(void)
{
        char route_if[IF_NAMESIZE + 1];
        default_route_iface(route_if);
        struct ifaddrs *ifs = NULL;
        if (getifaddrs(&ifs) < 0)
                return NULL;
        char *best = NULL;
        for (int pass = 0; pass < 2 && best == NULL; pass++) {
                for (struct ifaddrs *i = ifs; i && best == NULL; i = i->ifa_next) {
                        if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET ||
                            !(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK))
                                continue;
                        if (pass == 0 && strcmp(i->ifa_name, route_if) != 0)
                                continue;
                        const struct in_addr *a =
                            &((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr;
                        const unsigned char *b = (const unsigned char *)a;
                        if (b[0] == 169 && b[1] == 254)
                                continue;
                        char txt[INET_ADDRSTRLEN];
                        if (inet_ntop(AF_INET, a, txt, sizeof(txt)))
                                best = xstrdup(txt);
                }
        }
        freeifaddrs(ifs);
        return best;
}

int node_ip_resolve(const char *node_ip, char **out, ck_error_t *err)
{
        *out = NULL;
        if (node_ip && *node_ip && strcmp(node_ip, "0.0.0.0") != 0 && strcmp(node_ip, "::") != 0) {
                if (validate_node_ip(node_ip, err) < 0)
                        return ck_error_wrap(err, "failed to validate nodeIP");
                *out = xstrdup(node_ip);
                return 0;
        }
        *out = choose_host_ip();
        if (*out == NULL)
                return ck_error_make(err, 0,
                                     "can't get ip address of node: no non-loopback IPv4 "
                                     "address on an interface that is up");
        return 0;
}
