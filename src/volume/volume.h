/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pod directories and volumes (upstream pkg/kubelet/kubelet_pods.go dirs and
 * pkg/volume plugins): emptyDir (disk and medium Memory, a tmpfs), hostPath
 * (with its type checks), and configMap, secret, downwardAPI and projected
 * (configMap, secret, downwardAPI, serviceAccountToken sources) written with
 * upstream's atomic `..data` symlink swap, on a tmpfs for all but configMap.
 * Other kinds fail with a clear "unsupported volume type" error that names
 * the volume.
 *
 *   <root>/pods/<uid>/volumes/kubernetes.io~empty-dir/<name>
 *   <root>/pods/<uid>/volumes/kubernetes.io~configmap/<name>    (also ~secret,
 *                                         ~downward-api, ~projected)
 *   <root>/pods/<uid>/containers/<container>/          (termination logs)
 *   <root>/pods/<uid>/plugins/                  (projected: cached tokens)
 *   <root>/pods/<uid>/etc-hosts
 *
 * Paths are resolved under their directory (no `..` or symlink escape).
 * Threading: functions for one pod are called from that pod's worker only.
 */
#ifndef CK_VOLUME_VOLUME_H
#define CK_VOLUME_VOLUME_H

#include "api/pod.h"
#include "client/objects.h"
#include "util/error.h"

/* Creates the pod's directories. */
int volume_make_pod_dirs(const char *root_dir, const struct pod *pod, ck_error_t *err);

/* Sets up every volume of the pod (idempotent) and returns the host path of
 * each volume by name in *paths (new list, caller frees with kv_list_release).
 * kube (may be NULL: standalone) reads configMaps, secrets and tokens.  Call
 * it on every sync: changed configMaps / secrets / pod fields are rewritten
 * (updates reach running pods) and tokens refreshed.  A volume set up before
 * whose payload cannot be built now (apiserver away, object deleted) keeps
 * its content and is not an error (a warning is logged). */
int volume_mount_pod_volumes(const char *root_dir, const struct pod *pod,
                             const struct kube_objects *kube, struct kv_list *paths,
                             ck_error_t *err);

/* Unmounts tmpfs volumes and removes <root>/pods/<uid> entirely.  Never
 * follows a symlink out of the pod directory; never recurses into a mount
 * point it could not unmount (a clear error instead). */
int volume_cleanup_pod(const char *root_dir, const char *uid, ck_error_t *err);

/* UIDs with a directory under <root>/pods (NULL-terminated, new strings). */
int volume_list_pod_dirs(const char *root_dir, char ***uids, ck_error_t *err);

/* Writes the pod's /etc/hosts, <root>/pods/<uid>/etc-hosts (the pod's
 * directory must exist), as upstream's ensureHostsFile before each container
 * start: for a pod with its own network the managed file (localhost lines,
 * "<ip>\t<hostname>", or with a subdomain
 * "<ip>\t<hostname>.<subdomain>.<namespace>.svc.<cluster_domain>\t<hostname>",
 * then hostAliases); for hostNetwork the node's /etc/hosts under its own
 * header, then hostAliases.  cluster_domain may be NULL or "".  Written
 * atomically (0644); returns its path (new) in *path. */
int volume_write_etc_hosts(const char *root_dir, const struct pod *pod, const char *pod_ip,
                           const char *cluster_domain, char **path, ck_error_t *err);

#endif
