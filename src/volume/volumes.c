/* SPDX-License-Identifier: Apache-2.0 */
/* Setting up a pod's volumes: each kind to its plugin (configMap, secret,
 * downwardAPI and projected read the apiserver through `kube`). */
#include "util/cleanup.h"
#include "util/xalloc.h"
#include "volume/plugins.h"
#include "volume/volume.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static int setup_volume(const struct volume_ctx *vc, const struct volume *v, char **path,
                        ck_error_t *err)
{
        if (volume_check_component("volume name", v->name, err) < 0)
                return -1;
        switch (v->kind) {
        case VOLUME_EMPTY_DIR:
                return volume_empty_dir_setup(vc, v, path, err);
        case VOLUME_HOST_PATH:
                return volume_host_path_setup(v, path, err);
        case VOLUME_CONFIG_MAP:
        case VOLUME_SECRET:
        case VOLUME_DOWNWARD_API:
        case VOLUME_PROJECTED:
                return volume_payload_volume_setup(vc, v, path, err);
        case VOLUME_OTHER:
                break;
        }
        return ck_error_make(err, 0, "unsupported volume type");
}

int volume_mount_pod_volumes(const char *root_dir, const struct pod *pod,
                             const struct kube_objects *kube, struct kv_list *paths,
                             ck_error_t *err)
{
        paths->items = NULL;
        paths->n = 0;
        if (volume_make_pod_dirs(root_dir, pod, err) < 0)
                return -1;
        cleanup_free char *volumes_path = xasprintf("%s/pods/%s/volumes", root_dir, pod->uid);
        cleanup_close int volumes_fd = TEMP_FAILURE_RETRY_INT(
            open(volumes_path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (volumes_fd < 0)
                return ck_error_make(err, errno, "open `%s`", volumes_path);
        cleanup_free char *pod_dir = xasprintf("%s/pods/%s", root_dir, pod->uid);
        struct volume_ctx vc = {
            .root_dir = root_dir,
            .pod_dir = pod_dir,
            .volumes_fd = volumes_fd,
            .volumes_path = volumes_path,
            .pod = pod,
            .kube = kube,
        };
        for (size_t i = 0; i < pod->n_volumes; i++) {
                const struct volume *v = &pod->volumes[i];
                cleanup_free char *path = NULL;
                if (setup_volume(&vc, v, &path, err) < 0) {
                        kv_list_release(paths);
                        return ck_error_wrap(err, "volume \"%s\"", v->name ? v->name : "");
                }
                kv_list_add(paths, v->name, path);
        }
        return 0;
}
