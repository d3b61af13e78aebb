/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The data of a configMap or secret read through `struct kube_objects`:
 * what configMap / secret volumes, projected sources and the container
 * environment (valueFrom, envFrom) consume.  configMap data and binaryData
 * (base64), secret data (base64) decoded; keys in sorted order.
 *
 * Thread: any (no shared state).
 */
#ifndef CK_VOLUME_OBJECT_DATA_H
#define CK_VOLUME_OBJECT_DATA_H

#include "client/objects.h"
#include "util/error.h"

#include <stdbool.h>
#include <stddef.h>

enum volume_object_kind { VOLUME_OBJECT_CONFIG_MAP, VOLUME_OBJECT_SECRET };

struct volume_object_entry {
        char *key;
        char *value; /* NUL terminated (secret values may hold NULs: use len) */
        size_t len;
        bool binary; /* configMap binaryData */
};

struct volume_object_data {
        struct volume_object_entry *items;
        size_t n;
};

/* Reads configMap / secret ns/name.  *found false (and 0 returned) when the
 * apiserver says 404; the caller decides what a missing object means.
 * kube NULL: upstream's standalone error ("couldn't get configMap ns/name,
 * no kubeClient defined").  Fills *out (release with
 * volume_object_data_release). */
int volume_object_get(const struct kube_objects *kube, enum volume_object_kind kind, const char *ns,
                      const char *name, const char *pod_uid, struct volume_object_data *out,
                      bool *found, ck_error_t *err);

/* upstream's NotFound error: 'configmap "x" not found', 'secret "x" not found'. */
int volume_object_not_found(enum volume_object_kind kind, const char *name, ck_error_t *err);

/* The entry of key; NULL if absent.  Borrowed. */
const struct volume_object_entry *volume_object_find(const struct volume_object_data *d,
                                                     const char *key);

void volume_object_data_release(struct volume_object_data *d);

#endif
