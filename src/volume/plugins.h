/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to src/volume: the volume plugins (emptyDir, hostPath) and the
 * helpers that keep every path under its directory.
 */
#ifndef CK_VOLUME_PLUGINS_H
#define CK_VOLUME_PLUGINS_H

#include "api/pod.h"
#include "util/error.h"

#define VOLUME_EMPTY_DIR_PLUGIN "kubernetes.io~empty-dir"

/* Fails unless name is one path component (not empty, no '/', not "." or
 * ".."); `what` names it in the error ("pod UID", "volume name"). */
int volume_check_component(const char *what, const char *name, ck_error_t *err);

/* mkdirat (an existing directory is fine) and opens it without following a
 * symlink; returns the fd (O_CLOEXEC). */
int volume_mkdir_open(int dirfd, const char *dir_path, const char *name, mode_t mode,
                      ck_error_t *err);

/* Sets up an emptyDir under the pod's volumes directory (fd and path) and
 * returns its host path (new string) in *path.  Idempotent. */
int volume_empty_dir_setup(int volumes_fd, const char *volumes_path, const struct pod *pod,
                           const struct volume *v, char **path, ck_error_t *err);

/* Checks (and for the ...OrCreate types creates) a hostPath; *path is the
 * host path (new string). */
int volume_host_path_setup(const struct volume *v, char **path, ck_error_t *err);

/* Unmounts (MNT_DETACH) every tmpfs mounted below `dir`, deepest first, as
 * /proc/self/mountinfo lists them. */
int volume_unmount_tmpfs_below(const char *dir, ck_error_t *err);

#endif
