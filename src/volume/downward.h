/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Downward API values shared by downwardAPI volumes and the container
 * environment (upstream pkg/fieldpath and pkg/api/v1/resource helpers).
 * Pure functions; thread: any.
 */
#ifndef CK_VOLUME_DOWNWARD_H
#define CK_VOLUME_DOWNWARD_H

#include "api/pod.h"
#include "util/error.h"

#include <stdint.h>

/* upstream fieldpath.FormatMap: `key="value"` lines (Go-quoted) in key
 * order, no trailing newline.  New string. */
char *volume_format_map(const struct kv_list *l);

/* upstream fieldpath.ExtractFieldPathAsString for a pod: metadata.name,
 * metadata.namespace, metadata.uid, metadata.labels, metadata.annotations and
 * metadata.labels['k'] / metadata.annotations['k'] (absent: "").  Anything
 * else: "unsupported fieldPath: <path>".  *out: new string. */
int volume_pod_field_value(const struct pod *pod, const char *field_path, char **out,
                           ck_error_t *err);

/* What a limit defaults to when the container has none (upstream: the
 * node's allocatable). */
struct volume_node_resources {
        int64_t cpu_milli;
        int64_t memory;
        int64_t ephemeral_storage;
};

/* The node's capacity: online CPUs, MemTotal, size of root_dir's filesystem. */
void volume_node_capacity(const char *root_dir, struct volume_node_resources *out);

/* upstream ExtractResourceValueByContainerNameAndNodeAllocatable: resource
 * (limits.cpu, requests.memory, ...) of container container_name (NULL or
 * "": self) in units of divisor (a quantity, NULL/"0": 1), rounded up.
 * *out: new string. */
int volume_container_resource_value(const struct pod *pod, const struct container *self,
                                    const char *container_name, const char *resource,
                                    const char *divisor, const struct volume_node_resources *node,
                                    char **out, ck_error_t *err);

#endif
