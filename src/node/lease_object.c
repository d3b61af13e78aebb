/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node Lease object (upstream component-helpers lease controller
 * newLease and kubelet util.SetNodeOwnerFunc) and metav1.MicroTime.
 */
#include "node/node_internal.h"

#include "util/fsutil.h"

#include <stdio.h>
#include <string.h>

char *node_format_micro_time(int64_t real_ns, char *buf)
{
        int64_t ns = real_ns % 1000000000;
        if (ns < 0) /* before 1970: the second is rounded down */
                ns += 1000000000;
        fs_format_rfc3339(real_ns, buf); /* "2024-05-01T10:00:00Z" */
        size_t z = strlen(buf) - 1;
        snprintf(buf + z, 40 - z, ".%06dZ", (int)(ns / 1000));
        return buf;
}

json_t *node_lease_build(const json_t *base, const char *node_name, int32_t duration_s,
                         const char *node_uid, int64_t now_ns)
{
        json_t *lease;
        if (base) {
                lease = json_deep_copy(base);
        } else {
                lease =
                    json_pack("{s:{s:s, s:s}, s:{s:s}}", "metadata", "name", node_name, "namespace",
                              NODE_LEASE_NAMESPACE, "spec", "holderIdentity", node_name);
        }
        json_object_set_new(lease, "apiVersion", json_string("coordination.k8s.io/v1"));
        json_object_set_new(lease, "kind", json_string("Lease"));
        json_t *spec = json_object_get(lease, "spec");
        if (!json_is_object(spec)) {
                spec = json_object();
                json_object_set_new(lease, "spec", spec);
        }
        char now[40];
        json_object_set_new(spec, "leaseDurationSeconds", json_integer(duration_s));
        json_object_set_new(spec, "renewTime", json_string(node_format_micro_time(now_ns, now)));

        json_t *meta = json_object_get(lease, "metadata");
        if (!json_is_object(meta)) {
                meta = json_object();
                json_object_set_new(lease, "metadata", meta);
        }
        if (json_array_size(json_object_get(meta, "ownerReferences")) == 0 && node_uid && *node_uid)
                json_object_set_new(meta, "ownerReferences",
                                    json_pack("[{s:s, s:s, s:s, s:s}]", "apiVersion", "v1", "kind",
                                              "Node", "name", node_name, "uid", node_uid));
        return lease;
}
