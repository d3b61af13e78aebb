/* SPDX-License-Identifier: Apache-2.0 */
/*
 * configMap, secret, downwardAPI and projected volumes: the payload built
 * from the apiserver's objects and the pod, written with the atomic writer
 * into the volume's directory on every sync, so that updates reach running
 * pods (upstream's SetUpAt, called by the volume manager's reconciler).
 */
#include "util/cleanup.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "volume/plugins.h"

#include <fcntl.h>
#include <unistd.h>

#define DEFAULT_MODE 0644

int volume_build_payload(const struct volume_ctx *vc, const struct volume *v,
                         struct volume_payload *out, ck_error_t *err)
{
        int32_t mode = v->has_default_mode ? v->default_mode : DEFAULT_MODE;
        switch (v->kind) {
        case VOLUME_CONFIG_MAP:
                return volume_config_map_payload(vc, v->source_name, v->items, v->n_items, mode,
                                                 v->optional, out, err);
        case VOLUME_SECRET:
                return volume_secret_payload(vc, v->source_name, v->items, v->n_items, mode,
                                             v->optional, out, err);
        case VOLUME_DOWNWARD_API:
                return volume_downward_api_payload(vc, json_object_get(v->source, "items"), mode,
                                                   out, err);
        case VOLUME_PROJECTED:
                return volume_projected_payload(vc, v, out, err);
        default:
                return ck_error_make(err, 0, "unsupported volume type");
        }
}

/* Whether the volume's directory already holds a payload ("..data"). */
static bool populated(const struct volume_ctx *vc, const char *plugin, const char *name)
{
        cleanup_close int plugin_fd = TEMP_FAILURE_RETRY_INT(
            openat(vc->volumes_fd, plugin, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (plugin_fd < 0)
                return false;
        cleanup_close int fd = TEMP_FAILURE_RETRY_INT(
            openat(plugin_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        char buf[8];
        return fd >= 0 && readlinkat(fd, "..data", buf, sizeof(buf)) > 0;
}

int volume_payload_volume_setup(const struct volume_ctx *vc, const struct volume *v, char **path,
                                ck_error_t *err)
{
        const char *plugin = VOLUME_CONFIG_MAP_PLUGIN;
        bool memory = true; /* upstream wraps a medium Memory emptyDir... */
        switch (v->kind) {
        case VOLUME_CONFIG_MAP:
                memory = false; /* ...except for configMaps (no accounting for it yet) */
                break;
        case VOLUME_SECRET:
                plugin = VOLUME_SECRET_PLUGIN;
                break;
        case VOLUME_DOWNWARD_API:
                plugin = VOLUME_DOWNWARD_API_PLUGIN;
                break;
        case VOLUME_PROJECTED:
                plugin = VOLUME_PROJECTED_PLUGIN;
                break;
        default:
                return ck_error_make(err, 0, "unsupported volume type");
        }
        if (volume_check_component("volume name", v->name, err) < 0)
                return -1;

        struct volume_payload payload = {0};
        if (volume_build_payload(vc, v, &payload, err) < 0) {
                volume_payload_release(&payload);
                if (!populated(vc, plugin, v->name))
                        return -1;
                /* a running pod keeps what it had (the apiserver away, an object
                 * deleted under it), as upstream's failed remount leaves it */
                LOG_WARN("Failed to update a volume, keeping its current content",
                         "pod=\"%s\" volume=\"%s\" err=\"%s\"", pod_full_name(vc->pod), v->name,
                         ck_error_msg(*err));
                ck_error_release(err);
                *path = xasprintf("%s/%s/%s", vc->volumes_path, plugin, v->name);
                return 0;
        }

        cleanup_free char *dir = NULL;
        cleanup_close int fd = volume_wrapped_dir_setup(vc, plugin, v->name, memory, &dir, err);
        if (fd < 0) {
                volume_payload_release(&payload);
                return -1;
        }
        const struct pod_security_context *psc = &vc->pod->security_context;
        bool wrote = false;
        int r = volume_atomic_write(fd, dir, &payload, psc->has_fs_group ? psc->fs_group : -1,
                                    &wrote, err);
        volume_payload_release(&payload);
        if (r < 0)
                return -1;
        if (wrote)
                LOG_INFO(3, "Wrote the payload of a volume", "pod=\"%s\" volume=\"%s\" path=\"%s\"",
                         pod_full_name(vc->pod), v->name, dir);
        *path = dir;
        dir = NULL;
        return 0;
}
