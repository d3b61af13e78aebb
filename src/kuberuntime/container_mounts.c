/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A container's mounts (upstream kubelet_pods.go makeMounts and
 * kuberuntime_container.go makeMounts):
 *   each volumeMount  -> the volume's host path (subPath / subPathExpr
 *                        below it), read-only when asked or when the volume
 *                        kind is always read-only (configMap, secret,
 *                        downwardAPI, projected), propagation translated;
 *   /etc/hosts        -> <root>/pods/<uid>/etc-hosts, written before each
 *                        container start (upstream ensureHostsFile), for
 *                        pods with an IP or with hostNetwork (upstream
 *                        shouldMountHostsFile), unless the container mounts
 *                        /etc/hosts itself;
 *   termination log   -> a new empty file
 *                        <root>/pods/<uid>/containers/<name>/<8 hex digits>
 *                        (mode 0666) at terminationMessagePath.
 * On an SELinux host the runtime relabels the kubelet's volumes (all kinds
 * but hostPath), /etc/hosts and the termination log (upstream's
 * selinux_relabel: SELinuxRelabel && selinux.GetEnabled()).
 *
 * A subPath must be relative without "..", and must resolve inside its
 * volume after symlinks; missing directories are created with the mode of
 * the volume's directory (upstream SafeMakeDir).  Upstream additionally
 * bind-mounts the resolved path to pin it against later symlink swaps;
 * here the resolved path itself is handed to the runtime.
 */
#include "kuberuntime/builders.h"
#include "kuberuntime/builders_internal.h"

#include "expansion/expansion.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "volume/volume.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define ETC_HOSTS_PATH "/etc/hosts"

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_mount(Runtime__V1__ContainerConfig *cfg, const char *container_path,
                      const char *host_path, bool readonly, Runtime__V1__MountPropagation prop,
                      bool relabel)
{
        Runtime__V1__Mount *m = xmalloc(sizeof(*m));
        runtime__v1__mount__init(m);
        /* Linux MakeAbsolutePath: a relative container path is taken from / */
        m->container_path =
            container_path[0] == '/' ? xstrdup(container_path) : xasprintf("/%s", container_path);
        m->host_path = xstrdup(host_path);
        m->readonly = readonly;
        m->propagation = prop;
        m->selinux_relabel = relabel;
        cfg->mounts = xrealloc(cfg->mounts, (cfg->n_mounts + 1) * sizeof(*cfg->mounts));
        cfg->mounts[cfg->n_mounts++] = m;
}

static int translate_propagation(const char *mode, Runtime__V1__MountPropagation *out,
                                 ck_error_t *err)
{
        if (mode == NULL || *mode == '\0' || strcmp(mode, "None") == 0)
                *out = RUNTIME__V1__MOUNT_PROPAGATION__PROPAGATION_PRIVATE;
        else if (strcmp(mode, "HostToContainer") == 0)
                *out = RUNTIME__V1__MOUNT_PROPAGATION__PROPAGATION_HOST_TO_CONTAINER;
        else if (strcmp(mode, "Bidirectional") == 0)
                *out = RUNTIME__V1__MOUNT_PROPAGATION__PROPAGATION_BIDIRECTIONAL;
        else
                return ck_error_make(err, 0, "invalid MountPropagation mode: \"%s\"", mode);
        return 0;
}

static const struct volume *find_volume(const struct pod *pod, const char *name)
{
        for (size_t i = 0; i < pod->n_volumes; i++)
                if (strcmp(pod->volumes[i].name, name) == 0)
                        return &pod->volumes[i];
        return NULL;
}

/* The volume plugins whose mounter reports ReadOnly upstream. */
static bool volume_always_read_only(const struct volume *v)
{
        if (v == NULL)
                return false;
        switch (v->kind) {
        case VOLUME_CONFIG_MAP:
        case VOLUME_SECRET:
        case VOLUME_DOWNWARD_API:
        case VOLUME_PROJECTED:
                return true;
        default:
                return false;
        }
}

/* The volume plugins whose mounter asks for an SELinux relabel upstream
 * (Managed and SELinuxRelabel: all but hostPath here). */
static bool volume_relabels(const struct volume *v)
{
        return v != NULL && v->kind != VOLUME_HOST_PATH;
}

/* upstream ValidatePathNoBacksteps: no ".." path element. */
static bool has_backsteps(const char *p)
{
        const char *s = p;
        while (*s) {
                const char *e = strchr(s, '/');
                size_t n = e ? (size_t)(e - s) : strlen(s);
                if (n == 2 && s[0] == '.' && s[1] == '.')
                        return true;
                if (e == NULL)
                        break;
                s = e + 1;
        }
        return false;
}

/* Creates the missing directories of `sub` below the directory fd `dirfd`
 * without following symlinks, with mode `mode` (umask not applied). */
static int make_dirs_beneath(int dirfd, const char *sub, mode_t mode)
{
        cleanup_free char *copy = xstrdup(sub);
        int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
        if (fd < 0)
                return -1;
        char *save = NULL;
        for (char *comp = strtok_r(copy, "/", &save); comp; comp = strtok_r(NULL, "/", &save)) {
                if (strcmp(comp, ".") == 0)
                        continue;
                int next = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (next < 0 && errno == ENOENT) {
                        if (mkdirat(fd, comp, mode) < 0 && errno != EEXIST)
                                goto fail;
                        next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (next >= 0 && fchmod(next, mode) < 0) {
                                close(next);
                                goto fail;
                        }
                }
                if (next < 0)
                        goto fail;
                close(fd);
                fd = next;
        }
        close(fd);
        return 0;
fail:
        close(fd);
        return -1;
}

/* The host path of a subPath below volume_path: created when missing, and
 * required to stay inside the volume once symlinks are resolved. */
static int subpath_host_path(const struct container *c, const struct volume_mount *vm,
                             const char *volume_path, const char *sub, char **out, ck_error_t *err)
{
        if (sub[0] == '/')
                return ck_error_make(err, 0, "error SubPath `%s` must not be an absolute path",
                                     sub);
        if (has_backsteps(sub))
                return ck_error_make(
                    err, 0, "unable to provision SubPath `%s`: must not contain '..'", sub);

        cleanup_free char *joined = xasprintf("%s/%s", volume_path, sub);
        struct stat st;
        if (lstat(joined, &st) < 0) {
                cleanup_close int vfd = open(volume_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                struct stat vst;
                if (vfd < 0 || fstat(vfd, &vst) < 0 ||
                    make_dirs_beneath(vfd, sub, vst.st_mode & 07777) < 0) {
                        LOG_ERROR(
                            "Failed to create subPath directory for volumeMount of the container",
                            "containerName=\"%s\" volumeMountName=\"%s\" err=\"%s\"", c->name,
                            vm->name, strerror(errno));
                        return ck_error_make(err, 0,
                                             "failed to create subPath directory for volumeMount "
                                             "\"%s\" of container \"%s\"",
                                             vm->name, c->name);
                }
        }

        cleanup_free char *vol_real = realpath(volume_path, NULL);
        cleanup_free char *real = realpath(joined, NULL);
        size_t vl = vol_real ? strlen(vol_real) : 0;
        if (vol_real == NULL || real == NULL || strncmp(real, vol_real, vl) != 0 ||
            (real[vl] != '/' && real[vl] != '\0' && strcmp(vol_real, "/") != 0)) {
                LOG_ERROR("Failed to prepare subPath for volumeMount of the container",
                          "containerName=\"%s\" volumeMountName=\"%s\" path=\"%s\"", c->name,
                          vm->name, joined);
                return ck_error_make(
                    err, 0,
                    "failed to prepare subPath for volumeMount \"%s\" of container "
                    "\"%s\"",
                    vm->name, c->name);
        }
        *out = real;
        real = NULL;
        return 0;
}

/* subPathExpr of the raw volumeMount (not in the typed pod), expanded with
 * the container's environment; every referenced variable must be set and
 * non-empty (upstream ExpandContainerVolumeMounts).  NULL when absent. */
static const char *raw_subpath_expr(const struct pod *pod, const struct container *c, size_t idx)
{
        json_t *rc = kuberuntime__raw_container(pod, c->name);
        json_t *vm = json_array_get(json_object_get(rc, "volumeMounts"), idx);
        const char *e = json_string_value(json_object_get(vm, "subPathExpr"));
        return e && *e ? e : NULL;
}

struct subpath_lookup {
        const struct kv_list *env;
        char **missing; /* names without a non-empty value, new */
        size_t n_missing;
};

static const char *subpath_lookup(void *ctx, const char *name, size_t n)
{
        struct subpath_lookup *l = ctx;
        for (size_t i = l->env->n; i-- > 0;) {
                const struct kv *e = &l->env->items[i];
                if (strlen(e->key) == n && memcmp(e->key, name, n) == 0) {
                        if (e->value != NULL && *e->value != '\0')
                                return e->value;
                        break;
                }
        }
        for (size_t i = 0; i < l->n_missing; i++)
                if (strlen(l->missing[i]) == n && memcmp(l->missing[i], name, n) == 0)
                        return "";
        l->missing = xrealloc(l->missing, (l->n_missing + 1) * sizeof(*l->missing));
        l->missing[l->n_missing++] = xstrndup(name, n);
        return "";
}

/* upstream ExpandContainerVolumeMounts: every referenced variable must
 * have a non-empty value; the error lists the others in sorted order. */
static int expand_subpath_expr(const char *expr, const struct kv_list *env, char **out,
                               ck_error_t *err)
{
        struct subpath_lookup l = {.env = env};
        char *v = expansion_expand_with(expr, subpath_lookup, &l);
        if (l.n_missing == 0) {
                *out = v;
                return 0;
        }
        free(v);
        qsort(l.missing, l.n_missing, sizeof(*l.missing), cmp_str);
        char *list = xstrdup("");
        for (size_t i = 0; i < l.n_missing; i++) {
                char *m = xasprintf("%s%s%s", list, i ? ", " : "", l.missing[i]);
                free(list);
                free(l.missing[i]);
                list = m;
        }
        free(l.missing);
        ck_error_make(err, 0, "missing value for %s", list);
        free(list);
        return -1;
}

static bool safe_path_element(const char *s)
{
        return s != NULL && *s != '\0' && strchr(s, '/') == NULL && strcmp(s, ".") != 0 &&
               strcmp(s, "..") != 0;
}

/* upstream makeMounts' termination-log file: a fresh empty 0666 file per
 * container instance.  Failure is logged and the mount skipped, as upstream. */
static void add_termination_log(const struct kuberuntime_options *opts, const struct pod *pod,
                                const struct container *c, Runtime__V1__ContainerConfig *cfg)
{
        cleanup_error ck_error_t err = NULL;
        cleanup_free char *dir =
            xasprintf("%s/pods/%s/containers/%s", opts->root_dir, pod->uid, c->name);
        if (fs_mkdir_p(dir, 0750, &err) < 0) {
                LOG_ERROR("Error on creating termination-log file", "path=\"%s\" err=\"%s\"", dir,
                          ck_error_msg(err));
                return;
        }
        uint32_t r;
        if (getrandom(&r, sizeof(r), 0) != sizeof(r))
                r = (uint32_t)rand();
        cleanup_free char *path = xasprintf("%s/%08x", dir, r);
        cleanup_close int fd = TEMP_FAILURE_RETRY_INT(
            open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666));
        if (fd < 0) {
                LOG_ERROR("Error on creating termination-log file", "path=\"%s\" err=\"%s\"", path,
                          strerror(errno));
                return;
        }
        /* the umask must not narrow it: the container may run as any user */
        if (fchmod(fd, 0666) < 0)
                LOG_ERROR("Unable to set termination-log file permissions",
                          "path=\"%s\" err=\"%s\"", path, strerror(errno));
        add_mount(cfg, c->termination_message_path, path, false,
                  RUNTIME__V1__MOUNT_PROPAGATION__PROPAGATION_PRIVATE, opts->selinux_enabled);
}

int kuberuntime__container_mounts(const struct kuberuntime_options *opts, const struct pod *pod,
                                  const struct container *c, const char *pod_ip,
                                  const struct kv_list *env, const struct kv_list *volume_paths,
                                  Runtime__V1__ContainerConfig *cfg, ck_error_t *err)
{
        if (!safe_path_element(pod->uid) || !safe_path_element(c->name))
                return ck_error_make(err, 0, "invalid pod uid \"%s\" or container name \"%s\"",
                                     pod->uid ? pod->uid : "", c->name ? c->name : "");

        bool mount_etc_hosts = pod->host_network || (pod_ip != NULL && *pod_ip != '\0');
        for (size_t i = 0; i < c->n_volume_mounts; i++) {
                const struct volume_mount *vm = &c->volume_mounts[i];
                if (strcmp(vm->mount_path, ETC_HOSTS_PATH) == 0)
                        mount_etc_hosts = false;
                const char *vol_path = volume_paths ? kv_list_get(volume_paths, vm->name) : NULL;
                if (vol_path == NULL)
                        return ck_error_make(
                            err, 0, "cannot find volume \"%s\" to mount into container \"%s\"",
                            vm->name, c->name);

                cleanup_free char *expanded = NULL;
                const char *sub = vm->sub_path;
                const char *expr = raw_subpath_expr(pod, c, i);
                if (expr != NULL) {
                        if (expand_subpath_expr(expr, env, &expanded, err) < 0)
                                return -1;
                        sub = expanded;
                }
                cleanup_free char *host_path = NULL;
                if (sub != NULL && *sub != '\0') {
                        if (subpath_host_path(c, vm, vol_path, sub, &host_path, err) < 0)
                                return -1;
                } else {
                        host_path = xstrdup(vol_path);
                }

                /* upstream resolveRecursiveReadOnly, with a runtime that
                 * makes no recursive read-only mounts: ckubelet asks for none
                 * (IfPossible is Disabled, as the status says) */
                if (vm->recursive_read_only && strcmp(vm->recursive_read_only, "Enabled") == 0)
                        return ck_error_make(err, 0,
                                             "failed to resolve recursive read-only mode: volume "
                                             "\"%s\" requested recursive read-only mode, but it "
                                             "is not supported by the runtime",
                                             vm->name);
                Runtime__V1__MountPropagation prop =
                    RUNTIME__V1__MOUNT_PROPAGATION__PROPAGATION_PRIVATE;
                if (translate_propagation(vm->mount_propagation, &prop, err) < 0)
                        return -1;
                const struct volume *v = find_volume(pod, vm->name);
                bool ro = vm->read_only || volume_always_read_only(v);
                add_mount(cfg, vm->mount_path, host_path, ro, prop,
                          opts->selinux_enabled && volume_relabels(v));
        }

        if (mount_etc_hosts) {
                cleanup_free char *hosts = NULL;
                if (volume_write_etc_hosts(opts->root_dir, pod, pod_ip, opts->cluster_domain,
                                           &hosts, err) < 0)
                        return -1;
                add_mount(cfg, ETC_HOSTS_PATH, hosts, false,
                          RUNTIME__V1__MOUNT_PROPAGATION__PROPAGATION_PRIVATE,
                          opts->selinux_enabled);
        }

        if (c->termination_message_path != NULL && *c->termination_message_path != '\0')
                add_termination_log(opts, pod, c, cfg);
        return 0;
}
