/* SPDX-License-Identifier: Apache-2.0 */
/*
 * User namespaces for pods with `hostUsers: false` (upstream
 * pkg/kubelet/userns): each such pod gets a range of idsPerPod host IDs
 * (65536 by default) of the kubelet's, mapped to 0..idsPerPod-1 in the
 * pod, kept in <root>/pods/<uid>/userns (upstream's file, its JSON) so that a
 * restarted kubelet gives the pod the same range and never gives it to
 * another.
 *
 * The kubelet's IDs: those of the user "kubelet" in /etc/subuid and
 * /etc/subgid (what upstream reads through getsubids) when that user
 * exists, else idsPerPod up to 2^32.  Thread-safe.
 */
#ifndef CK_USERNS_USERNS_H
#define CK_USERNS_USERNS_H

#include "util/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* upstream kubeletconfig.DefaultKubeletUserNamespacesIDsPerPod */
#define USERNS_DEFAULT_IDS_PER_POD 65536u

struct userns_config {
        const char *root_dir;
        uint32_t ids_per_pod; /* 0: the default */
        int32_t max_pods;
        /* the subordinate ID files and the user (tests); NULL: /etc/subuid,
         * /etc/subgid, "kubelet" looked up in the user database */
        const char *subuid_path, *subgid_path;
        int kubelet_user; /* -1: looked up; 0 absent; 1 present */
};

/* A pod's userns file (upstream's JSON): its one uid mapping, the same as
 * its one gid mapping, from container ID 0.  -1 with err otherwise. */
int userns_parse_mappings(const char *text, size_t len, uint32_t *host_id, uint32_t *length,
                          ck_error_t *err);
/* The file's text for host_id..+length (a new string). */
char *userns_format_mappings(uint32_t host_id, uint32_t length);

/* The first ID and count of the kubelet's IDs (upstream getKubeletMappings). */
int userns_kubelet_mappings(const struct userns_config *cfg, uint32_t ids_per_pod, uint32_t *first,
                            uint32_t *len, ck_error_t *err);

struct userns_manager;

/* upstream MakeUserNsManager: the ranges checked against idsPerPod and
 * maxPods (its errors), the ranges the pods' files record taken. */
int userns_manager_new(const struct userns_config *cfg, struct userns_manager **out,
                       ck_error_t *err);
void userns_manager_free(struct userns_manager *m);

/* The pod's range (its file's, else a free one, recorded in its file):
 * host IDs [*host_id, *host_id + *length) are its 0.. */
int userns_pod_mappings(struct userns_manager *m, const char *pod_uid, uint32_t *host_id,
                        uint32_t *length, ck_error_t *err);

/* upstream CleanupOrphanedPodUsernsAllocations: the ranges of pods other
 * than keep[0..n) are free again. */
void userns_retain(struct userns_manager *m, const char *const *keep, size_t n);

#endif
