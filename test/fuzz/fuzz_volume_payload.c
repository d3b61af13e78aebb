/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzzes the payloads of configMap, secret, downwardAPI and projected
 * volumes (volume/object_payload.c, object_data.c, downward_api.c,
 * projected.c, upstream MakePayload and collectData) built from a pod's
 * items and from objects whose keys and values their authors choose, then
 * written by the atomic writer into a private temporary directory.  The
 * input is a JSON array: a Pod, then ConfigMaps and Secrets (by kind and
 * metadata.name) that a fake `struct kube_objects` serves; it answers a
 * TokenRequest with a token naming the audience.
 *
 * Each volume of the pod is built as payload_volume.c does (the volume
 * name checked as one component, the directory without its tmpfs) and
 * written twice.  Checks, beyond memory safety: nothing is created outside
 * <tmp>/a/b (the root directory); no symlink is absolute or has a ".."
 * component; a payload whose paths all validate is written, and the same
 * payload written again writes nothing.
 */
#include "fuzz_fs.h"

#include "api/decode.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "volume/plugins.h"
#include "volume/volume.h"

#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char tmp[64]; /* /tmp/fuzz_volume_payload.XXXXXX */

static void remove_tmp(void)
{
        ck_error_t err = NULL;
        fs_remove_all(tmp, &err);
        ck_error_release(&err);
}

/* ---- the fake apiserver ---- */

static int fake_get(void *opaque, const char *resource, const char *ns, const char *name,
                    const char *pod_uid, json_t **out, ck_error_t *err)
{
        (void)ns;
        (void)pod_uid;
        json_t *list = opaque;
        const char *kind = strcmp(resource, "secrets") == 0      ? "Secret"
                           : strcmp(resource, "configmaps") == 0 ? "ConfigMap"
                                                                 : NULL;
        if (kind == NULL)
                abort();
        size_t i;
        json_t *o;
        json_array_foreach(list, i, o)
        {
                const char *k = json_string_value(json_object_get(o, "kind"));
                const char *n =
                    json_string_value(json_object_get(json_object_get(o, "metadata"), "name"));
                if (i > 0 && k && n && strcmp(k, kind) == 0 && strcmp(n, name) == 0) {
                        *out = json_incref(o);
                        return 0;
                }
        }
        if (strcmp(name, "forbidden") == 0)
                return ck_error_make_code(err, 403, "%s \"%s\" is forbidden", resource, name);
        return ck_error_make_code(err, 404, "%s \"%s\" not found", resource, name);
}

static int fake_token(void *opaque, const struct kube_token_request *req, char **token,
                      int64_t *expiration_unix, ck_error_t *err)
{
        (void)opaque;
        if (req->audience != NULL && strcmp(req->audience, "fail") == 0)
                return ck_error_make_code(err, 500, "token request failed");
        *token = xasprintf("token-for-%s", req->audience ? req->audience : "");
        *expiration_unix = (int64_t)time(NULL) + 3600;
        return 0;
}

/* ---- checks on the file system ---- */

static void check_only(const char *dir, const char *only)
{
        DIR *d = opendir(dir);
        if (d == NULL)
                abort();
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
                    strcmp(de->d_name, only) == 0)
                        continue;
                fprintf(stderr, "fuzz_volume_payload: `%s/%s` created outside the root\n", dir,
                        de->d_name);
                abort();
        }
        closedir(d);
}

/* ---- one volume ---- */

static bool paths_valid(const struct volume_payload *p)
{
        char **clean = xcalloc(p->n + 1, sizeof(*clean));
        bool ok = true;
        for (size_t i = 0; i < p->n && ok; i++) {
                ck_error_t err = NULL;
                if (volume_payload_check_path(p->files[i].path, &clean[i], &err) < 0) {
                        ck_error_release(&err);
                        ok = false;
                }
        }
        /* one file's path a directory of another's: cannot be written */
        for (size_t i = 0; i < p->n && ok; i++)
                for (size_t j = 0; j < p->n && ok; j++) {
                        size_t l = strlen(clean[i]);
                        if (i != j && strncmp(clean[j], clean[i], l) == 0 && clean[j][l] == '/')
                                ok = false;
                }
        for (size_t i = 0; i < p->n; i++)
                free(clean[i]);
        free(clean);
        return ok;
}

static void setup_volume(const struct volume_ctx *vc, const struct volume *v)
{
        static const char *const plugins[] = {
            [VOLUME_CONFIG_MAP] = VOLUME_CONFIG_MAP_PLUGIN,
            [VOLUME_SECRET] = VOLUME_SECRET_PLUGIN,
            [VOLUME_DOWNWARD_API] = VOLUME_DOWNWARD_API_PLUGIN,
            [VOLUME_PROJECTED] = VOLUME_PROJECTED_PLUGIN,
        };
        if (v->kind != VOLUME_CONFIG_MAP && v->kind != VOLUME_SECRET &&
            v->kind != VOLUME_DOWNWARD_API && v->kind != VOLUME_PROJECTED)
                return;
        cleanup_error ck_error_t err = NULL;
        if (volume_check_component("volume name", v->name, &err) < 0)
                return;
        struct volume_payload p = {0};
        if (volume_build_payload(vc, v, &p, &err) < 0) {
                if (err == NULL)
                        abort();
                volume_payload_release(&p);
                return;
        }
        cleanup_free char *dir = NULL;
        /* without the tmpfs of a memory-backed volume: the fuzzer mounts nothing */
        cleanup_close int fd =
            volume_wrapped_dir_setup(vc, plugins[v->kind], v->name, false, &dir, &err);
        if (fd < 0)
                abort();
        const struct pod_security_context *psc = &vc->pod->security_context;
        int64_t fs_group = psc->has_fs_group ? psc->fs_group : -1;
        bool wrote = false;
        int r = volume_atomic_write(fd, dir, &p, fs_group, &wrote, &err);
        if ((r < 0) != (err != NULL) || (r == 0) != paths_valid(&p))
                abort();
        if (r == 0) {
                if (volume_atomic_write(fd, dir, &p, fs_group, &wrote, &err) < 0 || wrote)
                        abort();
        }
        volume_payload_release(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (tmp[0] == '\0') {
                log_set_fd(open("/dev/null", O_WRONLY | O_CLOEXEC));
                snprintf(tmp, sizeof(tmp), "/tmp/fuzz_volume_payload.XXXXXX");
                if (mkdtemp(tmp) == NULL)
                        abort();
                atexit(remove_tmp);
        }
        cleanup_json json_t *list = json_loadb((const char *)data, size, 0, NULL);
        if (!json_is_array(list) || !json_is_object(json_array_get(list, 0)))
                return 0;
        cleanup_pod struct pod *pod = NULL;
        cleanup_error ck_error_t err = NULL;
        if (api_pod_decode(json_array_get(list, 0), &pod, &err) < 0)
                return 0;

        cleanup_free char *a = xasprintf("%s/a", tmp);
        cleanup_free char *root = xasprintf("%s/a/b", tmp);
        if (fs_remove_all(a, &err) < 0 || fs_mkdir_p(root, 0755, &err) < 0)
                abort();
        if (volume_make_pod_dirs(root, pod, &err) < 0) {
                check_only(tmp, "a");
                return 0; /* a pod UID that is no path component */
        }
        cleanup_free char *pod_dir = xasprintf("%s/pods/%s", root, pod->uid);
        cleanup_free char *volumes = xasprintf("%s/volumes", pod_dir);
        cleanup_close int volumes_fd = open(volumes, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (volumes_fd < 0)
                abort();
        struct kube_objects kube = {.get = fake_get, .request_token = fake_token, .opaque = list};
        struct volume_ctx vc = {
            .root_dir = root,
            .pod_dir = pod_dir,
            .volumes_fd = volumes_fd,
            .volumes_path = volumes,
            .pod = pod,
            .kube = &kube,
        };
        for (size_t i = 0; i < pod->n_volumes; i++)
                setup_volume(&vc, &pod->volumes[i]);

        check_only(tmp, "a");
        check_only(a, "b");
        cleanup_close int root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0)
                abort();
        fuzz_check_tree(root_fd, "root");
        return 0;
}
