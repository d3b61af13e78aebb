/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to src/volume: the volume plugins (emptyDir, hostPath, configMap,
 * secret, downwardAPI, projected), the atomic writer of their payloads and
 * the helpers that keep every path under its directory.
 */
#ifndef CK_VOLUME_PLUGINS_H
#define CK_VOLUME_PLUGINS_H

#include "api/pod.h"
#include "client/objects.h"
#include "util/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#define VOLUME_EMPTY_DIR_PLUGIN "kubernetes.io~empty-dir"
#define VOLUME_CONFIG_MAP_PLUGIN "kubernetes.io~configmap"
#define VOLUME_SECRET_PLUGIN "kubernetes.io~secret"
#define VOLUME_DOWNWARD_API_PLUGIN "kubernetes.io~downward-api"
#define VOLUME_PROJECTED_PLUGIN "kubernetes.io~projected"

/* What every plugin of the pod's sync sees (borrowed). */
struct volume_ctx {
        const char *root_dir;
        const char *pod_dir; /* <root>/pods/<uid> */
        int volumes_fd;      /* <root>/pods/<uid>/volumes */
        const char *volumes_path;
        const struct pod *pod;
        const struct kube_objects *kube; /* NULL: standalone */
        bool first_setup;                /* volume_mount_pod_volumes' */
};

/* ---- payloads and the atomic writer (atomic_writer.c) ---- */

/* One file of a volume's payload (upstream FileProjection). */
struct volume_file {
        char *path; /* relative, cleaned */
        char *data;
        size_t len;
        mode_t mode;
        bool has_owner;
        uid_t owner; /* FsUser: the service account token's owner */
};

struct volume_payload {
        struct volume_file *files;
        size_t n;
};

/* Sets path (copied) to a copy of data: a later file of the same path
 * replaces the earlier one, as upstream's payload map does. */
void volume_payload_set(struct volume_payload *p, const char *path, const void *data, size_t len,
                        mode_t mode);
void volume_payload_release(struct volume_payload *p);

/* upstream validatePath: relative, not empty, no ".." component, not
 * starting with "..", components at most 255 bytes, at most 4096 bytes.
 * Returns the cleaned path (filepath.Clean) as a new string in *clean. */
int volume_payload_check_path(const char *path, char **clean, ck_error_t *err);

/* Writes the payload into the volume directory (fd and path) as upstream's
 * AtomicWriter: the files in a new "..<timestamp>.<random>" directory,
 * "..data_tmp" -> it renamed over "..data", a "<name>" -> "..data/<name>"
 * symlink per top-level name, names no longer in the payload removed, the
 * old directory removed.  Nothing is written when every file already has
 * its content and nothing is to be removed (*wrote false).  fs_group >= 0:
 * the whole volume is then group-owned by it (SetVolumeOwnership, read-only
 * volume: g+r, directories g+x and setgid). */
int volume_atomic_write(int dir_fd, const char *dir_path, const struct volume_payload *p,
                        int64_t fs_group, bool *wrote, ck_error_t *err);

/* ---- the plugins over the atomic writer ---- */

/* The volume directory <volumes>/<plugin>/<name> (created 0777 like the
 * emptyDir upstream wraps; a tmpfs mounted on it when memory, once).
 * Returns its fd (O_CLOEXEC) and its path (new string) in *path. */
int volume_wrapped_dir_setup(const struct volume_ctx *vc, const char *plugin, const char *name,
                             bool memory, char **path, ck_error_t *err);

/* configMap / secret payloads (upstream MakePayload) of object ns/name:
 * items (may be empty: every key) with default_mode; a missing object is an
 * empty payload when optional, else 'configmap "x" not found'. */
int volume_config_map_payload(const struct volume_ctx *vc, const char *name,
                              const struct key_to_path *items, size_t n_items, int32_t default_mode,
                              bool optional, struct volume_payload *out, ck_error_t *err);
int volume_secret_payload(const struct volume_ctx *vc, const char *name,
                          const struct key_to_path *items, size_t n_items, int32_t default_mode,
                          bool optional, struct volume_payload *out, ck_error_t *err);

/* KeyToPath items of a JSON array (projected sources); new array in *out. */
int volume_parse_items(json_t *items, struct key_to_path **out, size_t *n, ck_error_t *err);
void volume_items_free(struct key_to_path *items, size_t n);

/* downwardAPI items (upstream CollectData) of a JSON array. */
int volume_downward_api_payload(const struct volume_ctx *vc, json_t *items, int32_t default_mode,
                                struct volume_payload *out, ck_error_t *err);

/* The projected sources (upstream projected collectData). */
int volume_projected_payload(const struct volume_ctx *vc, const struct volume *v,
                             struct volume_payload *out, ck_error_t *err);

/* Whether a token issued for expiration_seconds and expiring at exp must be
 * requested again at now (seconds since the epoch): upstream's token manager
 * refreshes past 80% of its lifetime or 24 h after it was issued. */
bool volume_token_requires_refresh(int64_t now, int64_t exp, int64_t expiration_seconds);

/* A service account token for a projected volume source, cached in
 * <pod>/plugins/kubernetes.io~projected/<volume>/token-<index> (0600) and
 * requested again through kube when volume_token_requires_refresh says so.
 * *token: a new string. */
int volume_service_account_token(const struct volume_ctx *vc, const char *volume, size_t index,
                                 const char *audience, int64_t expiration_seconds, char **token,
                                 ck_error_t *err);

/* The payload of a configMap, secret, downwardAPI or projected volume (the
 * volume's defaultMode, else 0644); other kinds: "unsupported volume type". */
int volume_build_payload(const struct volume_ctx *vc, const struct volume *v,
                         struct volume_payload *out, ck_error_t *err);

/* Sets up a configMap, secret, downwardAPI or projected volume: builds the
 * payload and writes it (every call: updates reach running pods).  When the
 * payload cannot be built but the volume was set up before, the old content
 * stays (a warning is logged), as upstream's remount failure leaves it. */
int volume_payload_volume_setup(const struct volume_ctx *vc, const struct volume *v, char **path,
                                ck_error_t *err);

/* Fails unless name is one path component (not empty, no '/', not "." or
 * ".."); `what` names it in the error ("pod UID", "volume name"). */
int volume_check_component(const char *what, const char *name, ck_error_t *err);

/* mkdirat (an existing directory is fine) and opens it without following a
 * symlink; returns the fd (O_CLOEXEC). */
int volume_mkdir_open(int dirfd, const char *dir_path, const char *name, mode_t mode,
                      ck_error_t *err);

/* ---- fsGroup (ownership.c; upstream SetVolumeOwnership) ---- */

/* The volume's root (open as fd) and everything below it: group gid, the
 * group's (and owner's) read and write bits added (read only: read), and x
 * and setgid on directories; links regrouped, never followed.  A failed
 * chown or chmod below the root is logged and the walk goes on, as
 * upstream; an unreadable directory is an error. */
int volume_set_ownership(int fd, const char *path, gid_t gid, bool read_only, ck_error_t *err);

/* Sets up an emptyDir under the pod's volumes directory and returns its
 * host path (new string) in *path.  Idempotent: the pod's fsGroup is
 * applied once, before upstream's readiness file is written (again only
 * for a Memory volume whose tmpfs is gone). */
int volume_empty_dir_setup(const struct volume_ctx *vc, const struct volume *v, char **path,
                           ck_error_t *err);

/* Checks (and for the ...OrCreate types creates) a hostPath; *path is the
 * host path (new string). */
int volume_host_path_setup(const struct volume *v, char **path, ck_error_t *err);

/* Unmounts (MNT_DETACH) every tmpfs mounted below `dir`, deepest first, as
 * /proc/self/mountinfo lists them. */
int volume_unmount_tmpfs_below(const char *dir, ck_error_t *err);

#endif
