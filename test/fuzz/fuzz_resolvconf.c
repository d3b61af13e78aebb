/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzzes the host resolv.conf parser through the public DNS builder: the
 * input is the host's resolv.conf (served from a memfd), merged into a pod's
 * DNS config for dnsPolicy Default and ClusterFirst.
 */
#include "api/decode.h"
#include "kuberuntime/builders.h"
#include "util/log.h"
#include "util/yamljson.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static struct pod *make_pod(const char *policy)
{
        char yaml[512];
        snprintf(yaml, sizeof(yaml),
                 "apiVersion: v1\nkind: Pod\nmetadata: {name: f, namespace: ns}\n"
                 "spec:\n  dnsPolicy: %s\n  dnsConfig: {searches: [extra.local], options: "
                 "[{name: ndots, value: \"2\"}, {name: edns0}]}\n"
                 "  containers: [{name: c, image: i:1}]\n",
                 policy);
        json_t *obj = NULL;
        struct pod *pod = NULL;
        ck_error_t err = NULL;
        if (yamljson_parse(yaml, strlen(yaml), &obj, &err) < 0 ||
            api_pod_decode(obj, &pod, &err) < 0)
                abort();
        json_decref(obj);
        return pod;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static struct pod *pods[2];
        if (pods[0] == NULL) {
                log_set_fd(-1); /* errors are expected; keep the output quiet */
                pods[0] = make_pod("Default");
                pods[1] = make_pod("ClusterFirst");
        }
        int fd = memfd_create("resolv.conf", MFD_CLOEXEC);
        if (fd < 0)
                return 0;
        if (size > 0 && write(fd, data, size) != (ssize_t)size) {
                close(fd);
                return 0;
        }
        char path[64];
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        const char *cluster_dns[] = {"10.96.0.10", NULL};
        struct kuberuntime_options opts = {
            .root_dir = "/nonexistent",
            .pod_logs_dir = "/nonexistent",
            .node_name = "node",
            .cluster_domain = "cluster.local",
            .cluster_dns = cluster_dns,
            .resolv_conf = path,
        };
        for (int i = 0; i < 2; i++) {
                Runtime__V1__DNSConfig *dns = NULL;
                ck_error_t err = NULL;
                if (kuberuntime_pod_dns_config(&opts, pods[i], &dns, &err) == 0) {
                        /* what reaches the runtime respects upstream's limits */
                        if (dns->n_servers > 3 || dns->n_searches > 32)
                                abort();
                        runtime__v1__dnsconfig__free_unpacked(dns, NULL);
                }
                ck_error_release(&err);
        }
        close(fd);
        return 0;
}
