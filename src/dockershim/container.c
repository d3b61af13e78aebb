/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Containers (dockershim_internal.h), as cri-dockerd makes them: created
 * in their sandbox's namespaces (container:<sandbox> network and IPC, the
 * PID namespace as the CRI asks), command and args as Entrypoint and Cmd,
 * binds with their options, resources, devices, the security context; the
 * CRI log path a symlink to the engine's json-file log, made at start.
 */
#include "cri.pb-c.h"
#include "dockershim/dockershim_internal.h"
#include "grpc/grpc.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SHM_SIZE (64 * 1024 * 1024)
/* each of ExecSync's stdout and stderr (cri-dockerd's) */
#define EXEC_SYNC_MAX (16 * 1024 * 1024)

static int bad_request(ck_error_t *err, const char *what)
{
        return ck_error_make_code(err, GRPC_INVALID_ARGUMENT, "%s: the request does not decode",
                                  what);
}

static json_t *strv(char **v, size_t n)
{
        json_t *a = json_array();
        for (size_t i = 0; i < n; i++)
                json_array_append_new(a, json_string(v[i]));
        return a;
}

/* host:container[:opts] of a CRI mount. */
static char *bind_of(const Runtime__V1__Mount *m)
{
        const char *opts[3];
        size_t n = 0;
        if (m->readonly)
                opts[n++] = "ro";
        if (m->selinux_relabel)
                opts[n++] = "Z";
        if (m->propagation == RUNTIME__V1__MOUNT_PROPAGATION__PROPAGATION_BIDIRECTIONAL)
                opts[n++] = "rshared";
        else if (m->propagation == RUNTIME__V1__MOUNT_PROPAGATION__PROPAGATION_HOST_TO_CONTAINER)
                opts[n++] = "rslave";
        if (n == 0)
                return xasprintf("%s:%s", m->host_path, m->container_path);
        return xasprintf("%s:%s:%s%s%s%s%s", m->host_path, m->container_path, opts[0],
                         n > 1 ? "," : "", n > 1 ? opts[1] : "", n > 2 ? "," : "",
                         n > 2 ? opts[2] : "");
}

static void set_resources(const struct dockershim *s, json_t *host,
                          const Runtime__V1__LinuxContainerResources *r)
{
        if (r == NULL)
                return;
        json_object_set_new(host, "Memory", json_integer(r->memory_limit_in_bytes));
        /* no swap: as much as the memory limit */
        json_object_set_new(host, "MemorySwap", json_integer(r->memory_limit_in_bytes));
        json_object_set_new(host, "CpuShares", json_integer(r->cpu_shares));
        json_object_set_new(host, "CpuQuota", json_integer(r->cpu_quota));
        json_object_set_new(host, "CpuPeriod", json_integer(r->cpu_period));
        json_object_set_new(host, "CpusetCpus", json_string(r->cpuset_cpus ? r->cpuset_cpus : ""));
        json_object_set_new(host, "CpusetMems", json_string(r->cpuset_mems ? r->cpuset_mems : ""));
        if (s)
                json_object_set_new(host, "OomScoreAdj",
                                    json_integer(shim_oom_score_adj(s, r->oom_score_adj)));
}

/* The engine's seccomp option of a CRI profile; "" for none (the
 * engine's default profile), NULL with err when it cannot be. */
static char *seccomp_opt(const Runtime__V1__SecurityProfile *p, ck_error_t *err)
{
        if (p == NULL || p->profile_type == RUNTIME__V1__SECURITY_PROFILE__PROFILE_TYPE__Unconfined)
                return xstrdup("seccomp=unconfined");
        if (p->profile_type == RUNTIME__V1__SECURITY_PROFILE__PROFILE_TYPE__RuntimeDefault)
                return xstrdup("");
        const char *ref = p->localhost_ref ? p->localhost_ref : "";
        if (ref[0] != '/')
                return ck_error_make_code(err, GRPC_INVALID_ARGUMENT,
                                          "seccomp profile `%s`: not an absolute path", ref),
                       NULL;
        cleanup_free char *buf = NULL;
        size_t len = 0;
        if (fs_read_file(ref, 1024 * 1024, &buf, &len, err) < 0)
                return ck_error_wrap(err, "seccomp profile"), NULL;
        json_t *j = json_loadb(buf, len, 0, NULL);
        if (j == NULL)
                return ck_error_make_code(err, GRPC_INVALID_ARGUMENT,
                                          "seccomp profile `%s`: not JSON", ref),
                       NULL;
        cleanup_free char *compact = json_dumps(j, JSON_COMPACT);
        json_decref(j);
        return xasprintf("seccomp=%s", compact);
}

static char *apparmor_opt(const Runtime__V1__SecurityProfile *p)
{
        if (p == NULL ||
            p->profile_type == RUNTIME__V1__SECURITY_PROFILE__PROFILE_TYPE__RuntimeDefault)
                return xstrdup("");
        if (p->profile_type == RUNTIME__V1__SECURITY_PROFILE__PROFILE_TYPE__Unconfined)
                return xstrdup("apparmor=unconfined");
        return xasprintf("apparmor=%s", p->localhost_ref ? p->localhost_ref : "");
}

/* The engine's create request of a container in sandbox sb. */
static json_t *container_create_config(const struct dockershim *s, const char *sb,
                                       const Runtime__V1__ContainerConfig *c,
                                       const Runtime__V1__PodSandboxConfig *sc_cfg,
                                       const char *log_path, ck_error_t *err)
{
        struct shim_kv *labels = xcalloc(c->n_labels + 1, sizeof(*labels));
        struct shim_kv *ann = xcalloc(c->n_annotations + 1, sizeof(*ann));
        for (size_t i = 0; i < c->n_labels; i++)
                labels[i] = (struct shim_kv){c->labels[i]->key, c->labels[i]->value};
        for (size_t i = 0; i < c->n_annotations; i++)
                ann[i] = (struct shim_kv){c->annotations[i]->key, c->annotations[i]->value};
        json_t *l = shim_make_labels(labels, c->n_labels, ann, c->n_annotations);
        free(labels);
        free(ann);
        json_object_set_new(l, SHIM_LABEL_TYPE, json_string(SHIM_TYPE_CONTAINER));
        json_object_set_new(l, SHIM_LABEL_LOGPATH, json_string(log_path));
        json_object_set_new(l, SHIM_LABEL_SANDBOX_ID, json_string(sb));

        /* (json_pack would free l and host when a string is not UTF-8) */
        json_t *host = json_object();
        json_t *cfg = json_object();
        json_object_set_new(cfg, "Image", json_string(c->image->image));
        json_object_set_new(cfg, "Labels", l);
        json_object_set_new(cfg, "HostConfig", host);
        json_object_set_new(cfg, "OpenStdin", json_boolean(c->stdin));
        json_object_set_new(cfg, "StdinOnce", json_boolean(c->stdin_once));
        json_object_set_new(cfg, "Tty", json_boolean(c->tty));
        json_object_set_new(cfg, "Healthcheck", json_pack("{s:[s]}", "Test", "NONE"));
        if (c->n_command > 0)
                json_object_set_new(cfg, "Entrypoint", strv(c->command, c->n_command));
        if (c->n_args > 0)
                json_object_set_new(cfg, "Cmd", strv(c->args, c->n_args));
        if (c->working_dir && *c->working_dir)
                json_object_set_new(cfg, "WorkingDir", json_string(c->working_dir));
        json_t *env = json_array();
        for (size_t i = 0; i < c->n_envs; i++) {
                cleanup_free char *kv = xasprintf("%s=%s", c->envs[i]->key, c->envs[i]->value);
                json_array_append_new(env, json_string(kv));
        }
        json_object_set_new(cfg, "Env", env);

        json_object_set_new(host, "RestartPolicy", json_pack("{s:s}", "Name", "no"));
        json_object_set_new(host, "ShmSize", json_integer(SHM_SIZE));
        cleanup_free char *in_sb = xasprintf("container:%s", sb);
        json_object_set_new(host, "NetworkMode", json_string(in_sb));
        json_object_set_new(host, "IpcMode", json_string(in_sb));
        json_t *binds = json_array();
        for (size_t i = 0; i < c->n_mounts; i++) {
                cleanup_free char *b = bind_of(c->mounts[i]);
                json_array_append_new(binds, json_string(b));
        }
        json_object_set_new(host, "Binds", binds);
        json_t *devs = json_array();
        for (size_t i = 0; i < c->n_devices; i++)
                json_array_append_new(
                    devs, json_pack("{s:s,s:s,s:s}", "PathOnHost", c->devices[i]->host_path,
                                    "PathInContainer", c->devices[i]->container_path,
                                    "CgroupPermissions", c->devices[i]->permissions));
        json_object_set_new(host, "Devices", devs);
        const Runtime__V1__LinuxPodSandboxConfig *slx = sc_cfg ? sc_cfg->linux : NULL;
        const char *parent =
            slx && slx->cgroup_parent && *slx->cgroup_parent ? slx->cgroup_parent : NULL;
        if (parent && strcmp(s->cgroup_driver, "systemd") == 0 && strrchr(parent, '/'))
                parent = strrchr(parent, '/') + 1;
        if (parent)
                json_object_set_new(host, "CgroupParent", json_string(parent));
        const Runtime__V1__LinuxSandboxSecurityContext *ssc = slx ? slx->security_context : NULL;
        if (ssc && ssc->namespace_options &&
            ssc->namespace_options->network == RUNTIME__V1__NAMESPACE_MODE__NODE)
                json_object_set_new(host, "UTSMode", json_string("host"));

        const Runtime__V1__LinuxContainerConfig *lx = c->linux;
        set_resources(s, host, lx ? lx->resources : NULL);
        const Runtime__V1__LinuxContainerSecurityContext *sc = lx ? lx->security_context : NULL;
        json_t *secopt = json_array();
        json_object_set_new(host, "SecurityOpt", secopt);
        if (sc == NULL)
                return cfg;
        const Runtime__V1__NamespaceOption *ns = sc->namespace_options;
        if (ns) {
                if (ns->pid == RUNTIME__V1__NAMESPACE_MODE__NODE) {
                        json_object_set_new(host, "PidMode", json_string("host"));
                } else if (ns->pid == RUNTIME__V1__NAMESPACE_MODE__POD) {
                        json_object_set_new(host, "PidMode", json_string(in_sb));
                } else if (ns->pid == RUNTIME__V1__NAMESPACE_MODE__TARGET) {
                        cleanup_free char *t = xasprintf("container:%s", ns->target_id);
                        json_object_set_new(host, "PidMode", json_string(t));
                }
        }
        char user[64] = "";
        if (sc->run_as_user)
                snprintf(user, sizeof(user), "%lld", (long long)sc->run_as_user->value);
        if (sc->run_as_username && *sc->run_as_username)
                snprintf(user, sizeof(user), "%s", sc->run_as_username);
        if (sc->run_as_group) {
                if (user[0] == '\0') {
                        json_decref(cfg);
                        return ck_error_make_code(err, GRPC_INVALID_ARGUMENT,
                                                  "runAsGroup is specified without a runAsUser"),
                               NULL;
                }
                size_t l0 = strlen(user);
                snprintf(user + l0, sizeof(user) - l0, ":%lld", (long long)sc->run_as_group->value);
        }
        if (user[0])
                json_object_set_new(cfg, "User", json_string(user));
        if (sc->n_supplemental_groups > 0) {
                json_t *g = json_array();
                for (size_t i = 0; i < sc->n_supplemental_groups; i++) {
                        char v[24];
                        snprintf(v, sizeof(v), "%lld", (long long)sc->supplemental_groups[i]);
                        json_array_append_new(g, json_string(v));
                }
                json_object_set_new(host, "GroupAdd", g);
        }
        if (sc->privileged)
                json_object_set_new(host, "Privileged", json_true());
        if (sc->readonly_rootfs)
                json_object_set_new(host, "ReadonlyRootfs", json_true());
        if (sc->capabilities) {
                json_object_set_new(
                    host, "CapAdd",
                    strv(sc->capabilities->add_capabilities, sc->capabilities->n_add_capabilities));
                json_object_set_new(host, "CapDrop",
                                    strv(sc->capabilities->drop_capabilities,
                                         sc->capabilities->n_drop_capabilities));
        }
        if (!sc->privileged) {
                if (sc->n_masked_paths > 0)
                        json_object_set_new(host, "MaskedPaths",
                                            strv(sc->masked_paths, sc->n_masked_paths));
                if (sc->n_readonly_paths > 0)
                        json_object_set_new(host, "ReadonlyPaths",
                                            strv(sc->readonly_paths, sc->n_readonly_paths));
        }
        const Runtime__V1__SELinuxOption *se = sc->selinux_options;
        if (se) {
                const char *k[] = {"user", "role", "type", "level"};
                const char *v[] = {se->user, se->role, se->type, se->level};
                for (size_t i = 0; i < 4; i++)
                        if (v[i] && *v[i]) {
                                cleanup_free char *o = xasprintf("label=%s:%s", k[i], v[i]);
                                json_array_append_new(secopt, json_string(o));
                        }
        }
        cleanup_free char *aa = apparmor_opt(sc->apparmor);
        if (*aa)
                json_array_append_new(secopt, json_string(aa));
        if (sc->no_new_privs)
                json_array_append_new(secopt, json_string("no-new-privileges"));
        cleanup_free char *sec = seccomp_opt(sc->seccomp, err);
        if (sec == NULL) {
                json_decref(cfg);
                return NULL;
        }
        if (*sec)
                json_array_append_new(secopt, json_string(sec));
        return cfg;
}

/* dir/rel, as Go's filepath.Join: "" when both are empty. */
static char *join_log_path(const char *dir, const char *rel)
{
        if ((dir == NULL || *dir == '\0') && (rel == NULL || *rel == '\0'))
                return xstrdup("");
        if (dir == NULL || *dir == '\0')
                return xstrdup(rel);
        if (rel == NULL || *rel == '\0')
                return xstrdup(dir);
        size_t dl = strlen(dir);
        return xasprintf("%s%s%s", dir, dir[dl - 1] == '/' ? "" : "/", rel);
}

int dockershim_create_container(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                                uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        (void)timeout_ms;
        struct dockershim *s = ctx;
        Runtime__V1__CreateContainerRequest *in =
            runtime__v1__create_container_request__unpack(NULL, len, req);
        if (in == NULL)
                return bad_request(err, "CreateContainer");
        int rc = -1;
        const Runtime__V1__ContainerConfig *c = in->config;
        const Runtime__V1__PodSandboxConfig *sbc = in->sandbox_config;
        json_t *cfg = NULL;
        cleanup_free char *id = NULL, *name = NULL, *log_path = NULL;
        if (c == NULL || c->metadata == NULL || c->image == NULL || sbc == NULL ||
            sbc->metadata == NULL) {
                ck_error_make_code(err, GRPC_INVALID_ARGUMENT,
                                   "CreateContainer: config, its metadata and image, and the "
                                   "sandbox config are required");
                goto out;
        }
        log_path = join_log_path(sbc->log_directory, c->log_path);
        cfg = container_create_config(s, in->pod_sandbox_id, c, sbc, log_path, err);
        if (cfg == NULL)
                goto out;
        name =
            shim_container_name(c->metadata->name, sbc->metadata->name, sbc->metadata->namespace_,
                                sbc->metadata->uid, c->metadata->attempt);
        if (shim_container_create(s, name, cfg, &id, err) < 0) {
                dockershim_fail(err);
                goto out;
        }
        Runtime__V1__CreateContainerResponse r = RUNTIME__V1__CREATE_CONTAINER_RESPONSE__INIT;
        r.container_id = id;
        dockershim_pack(&r.base, resp, resp_len);
        rc = 0;
out:
        json_decref(cfg);
        runtime__v1__create_container_request__free_unpacked(in, NULL);
        return rc;
}

/* The CRI log path: a symlink to the engine's json-file log. */
static int link_log(struct dockershim *s, const char *id, ck_error_t *err)
{
        struct docker_container info;
        if (docker_container_inspect(s->docker, id, &info, err) < 0)
                return dockershim_fail(err);
        const char *cri = json_string_value(json_object_get(info.labels, SHIM_LABEL_LOGPATH));
        int rc = 0;
        if (cri && *cri && info.log_path && *info.log_path) {
                if (unlink(cri) < 0 && errno != ENOENT)
                        rc = ck_error_make_code(err, GRPC_UNKNOWN,
                                                "remove the old log link `%s`: %s", cri,
                                                strerror(errno));
                else if (symlink(info.log_path, cri) < 0)
                        rc =
                            ck_error_make_code(err, GRPC_UNKNOWN,
                                               "failed to create symbolic link %s to the container "
                                               "log file %s for container %s: %s",
                                               cri, info.log_path, id, strerror(errno));
        }
        docker_container_clear(&info);
        return rc;
}

int dockershim_start_container(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                               uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        (void)timeout_ms;
        struct dockershim *s = ctx;
        Runtime__V1__StartContainerRequest *in =
            runtime__v1__start_container_request__unpack(NULL, len, req);
        if (in == NULL)
                return bad_request(err, "StartContainer");
        cleanup_free char *id = xstrdup(in->container_id);
        runtime__v1__start_container_request__free_unpacked(in, NULL);
        ck_error_t start_err = NULL;
        docker_container_start(s->docker, id, &start_err);
        /* the link even when the start failed: the kubelet reads the
         * container's output from it */
        if (link_log(s, id, err) < 0) {
                ck_error_release(&start_err);
                return -1;
        }
        if (start_err) {
                *err = start_err;
                dockershim_fail(err);
                return ck_error_wrap(err, "failed to start container \"%s\"", id);
        }
        Runtime__V1__StartContainerResponse r = RUNTIME__V1__START_CONTAINER_RESPONSE__INIT;
        dockershim_pack(&r.base, resp, resp_len);
        return 0;
}

int shim_container_create(struct dockershim *s, const char *name, json_t *cfg, char **id,
                          ck_error_t *err)
{
        if (docker_container_create(s->docker, name, cfg, id, err) == 0)
                return 0;
        if ((*err)->code != DOCKER_ERR_CONFLICT)
                return -1;
        cleanup_free char *holder = shim_conflicting_id(ck_error_msg(*err));
        if (holder == NULL)
                return -1;
        LOG_INFO(1, "Unable to create due to a name conflict; removing the container that holds it",
                 "name=\"%s\" container=\"%s\"", name, holder);
        ck_error_t e = NULL;
        if (docker_container_remove(s->docker, holder, false, &e) == 0) {
                LOG_INFO(1, "Removed the conflicting container", "container=\"%s\"", holder);
                return -1; /* the kubelet's next try takes the name */
        }
        bool gone = e->code == DOCKER_ERR_NOT_FOUND;
        LOG_ERROR("Failed to remove the conflicting container", "container=\"%s\" err=\"%s\"",
                  holder, ck_error_msg(e));
        ck_error_release(&e);
        if (!gone)
                return -1;
        /* the engine keeps a name for a container it does not know */
        ck_error_release(err);
        cleanup_free char *other = shim_name_randomized(name);
        LOG_INFO(2, "Creating the container under a randomized name", "name=\"%s\"", other);
        return docker_container_create(s->docker, other, cfg, id, err);
}

int dockershim_stop_container(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                              uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        (void)timeout_ms;
        struct dockershim *s = ctx;
        Runtime__V1__StopContainerRequest *in =
            runtime__v1__stop_container_request__unpack(NULL, len, req);
        if (in == NULL)
                return bad_request(err, "StopContainer");
        cleanup_free char *id = xstrdup(in->container_id);
        int64_t t = in->timeout;
        runtime__v1__stop_container_request__free_unpacked(in, NULL);
        /* idempotent: a container that is gone is stopped (critest's
         * Idempotence spec, containerd 2's answer; cri-dockerd and
         * containerd 1.7 answer NotFound) */
        ck_error_t e = NULL;
        if (docker_container_stop(s->docker, id, t, &e) < 0) {
                if (e->code != DOCKER_ERR_NOT_FOUND) {
                        *err = e;
                        return dockershim_fail(err);
                }
                ck_error_release(&e);
        }
        Runtime__V1__StopContainerResponse r = RUNTIME__V1__STOP_CONTAINER_RESPONSE__INIT;
        dockershim_pack(&r.base, resp, resp_len);
        return 0;
}

int shim_remove_container(struct dockershim *s, const char *id, ck_error_t *err)
{
        struct docker_container info;
        ck_error_t e = NULL;
        if (docker_container_inspect(s->docker, id, &info, &e) < 0) {
                if (e->code == DOCKER_ERR_NOT_FOUND) {
                        ck_error_release(&e);
                        return 0;
                }
                *err = e;
                return dockershim_fail(err);
        }
        const char *cri = json_string_value(json_object_get(info.labels, SHIM_LABEL_LOGPATH));
        if (cri && *cri && unlink(cri) < 0 && errno != ENOENT) {
                ck_error_make_code(err, GRPC_UNKNOWN, "remove the log link `%s`: %s", cri,
                                   strerror(errno));
                docker_container_clear(&info);
                return -1;
        }
        docker_container_clear(&info);
        if (docker_container_remove(s->docker, id, true, &e) < 0) {
                if (e->code == DOCKER_ERR_NOT_FOUND) {
                        ck_error_release(&e);
                        return 0;
                }
                *err = e;
                return dockershim_fail(err);
        }
        return 0;
}

int dockershim_remove_container(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                                uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        (void)timeout_ms;
        struct dockershim *s = ctx;
        Runtime__V1__RemoveContainerRequest *in =
            runtime__v1__remove_container_request__unpack(NULL, len, req);
        if (in == NULL)
                return bad_request(err, "RemoveContainer");
        cleanup_free char *id = xstrdup(in->container_id);
        runtime__v1__remove_container_request__free_unpacked(in, NULL);
        if (shim_remove_container(s, id, err) < 0)
                return -1;
        Runtime__V1__RemoveContainerResponse r = RUNTIME__V1__REMOVE_CONTAINER_RESPONSE__INIT;
        dockershim_pack(&r.base, resp, resp_len);
        return 0;
}

/* cri-dockerd's answer, word for word (its fmt.Errorf reaches the client
 * as UNKNOWN): the CRI log path is a link to the engine's own log file,
 * which the engine writes and rotates (its log-opts); the shim holds no
 * file to reopen. */
int dockershim_reopen_container_log(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                                    uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        (void)ctx;
        (void)timeout_ms;
        (void)resp;
        (void)resp_len;
        Runtime__V1__ReopenContainerLogRequest *in =
            runtime__v1__reopen_container_log_request__unpack(NULL, len, req);
        if (in == NULL)
                return bad_request(err, "ReopenContainerLog");
        runtime__v1__reopen_container_log_request__free_unpacked(in, NULL);
        return ck_error_make_code(err, GRPC_UNKNOWN,
                                  "docker does not support reopening container log files");
}

/* The image reference of a container's image: its repo digest
 * (docker-pullable://) when it has one, else its ID (docker://). */
static char *image_ref(struct dockershim *s, const char *image_id, char **tag)
{
        *tag = NULL;
        struct docker_image img;
        ck_error_t e = NULL;
        if (image_id == NULL || docker_image_inspect(s->docker, image_id, &img, &e) < 0) {
                ck_error_release(&e);
                return xasprintf("docker://%s", image_id ? image_id : "");
        }
        char *ref = img.n_repo_digests > 0 ? xasprintf("docker-pullable://%s", img.repo_digests[0])
                                           : xasprintf("docker://%s", image_id);
        if (img.n_repo_tags > 0)
                *tag = xstrdup(img.repo_tags[0]);
        docker_image_clear(&img);
        return ref;
}

int dockershim_container_status(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                                uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        (void)timeout_ms;
        struct dockershim *s = ctx;
        Runtime__V1__ContainerStatusRequest *in =
            runtime__v1__container_status_request__unpack(NULL, len, req);
        if (in == NULL)
                return bad_request(err, "ContainerStatus");
        cleanup_free char *id = xstrdup(in->container_id);
        runtime__v1__container_status_request__free_unpacked(in, NULL);
        struct docker_container info;
        struct shim_name nm;
        if (shim_inspect_own(s, id, SHIM_TYPE_CONTAINER, "container", &info, &nm, err) < 0)
                return -1;
        Runtime__V1__ContainerStatus st = RUNTIME__V1__CONTAINER_STATUS__INIT;
        Runtime__V1__ContainerMetadata md = RUNTIME__V1__CONTAINER_METADATA__INIT;
        md.name = nm.container;
        md.attempt = nm.attempt;
        st.id = info.id;
        st.metadata = &md;
        st.created_at = info.created_ns;
        st.started_at = info.started_ns;
        st.finished_at = info.finished_ns;
        st.exit_code = info.exit_code;
        if (info.running) {
                st.state = RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING;
        } else if (info.finished_ns != 0) {
                st.state = RUNTIME__V1__CONTAINER_STATE__CONTAINER_EXITED;
                st.reason = info.oom_killed       ? (char *)"OOMKilled"
                            : info.exit_code == 0 ? (char *)"Completed"
                                                  : (char *)"Error";
        } else if (info.exit_code != 0) {
                /* it never ran: the engine could not start it */
                st.state = RUNTIME__V1__CONTAINER_STATE__CONTAINER_EXITED;
                st.reason = (char *)"ContainerCannotRun";
                st.started_at = st.finished_at = info.created_ns;
        } else {
                st.state = RUNTIME__V1__CONTAINER_STATE__CONTAINER_CREATED;
        }
        if (!info.running && info.error && *info.error)
                st.message = info.error;
        cleanup_free char *tag = NULL;
        cleanup_free char *ref = image_ref(s, info.image_id, &tag);
        Runtime__V1__ImageSpec spec = RUNTIME__V1__IMAGE_SPEC__INIT;
        spec.image = tag ? tag : info.image ? info.image : (char *)"";
        st.image = &spec;
        st.image_ref = ref;
        const char *logp = json_string_value(json_object_get(info.labels, SHIM_LABEL_LOGPATH));
        st.log_path = (char *)(logp ? logp : "");
        Runtime__V1__Mount *mounts = xcalloc(info.n_mounts ? info.n_mounts : 1, sizeof(*mounts));
        Runtime__V1__Mount **mptr = xcalloc(info.n_mounts ? info.n_mounts : 1, sizeof(*mptr));
        for (size_t i = 0; i < info.n_mounts; i++) {
                runtime__v1__mount__init(&mounts[i]);
                mounts[i].host_path = info.mounts[i].source ? info.mounts[i].source : (char *)"";
                mounts[i].container_path = info.mounts[i].destination;
                mounts[i].readonly = !info.mounts[i].rw;
                mptr[i] = &mounts[i];
        }
        st.n_mounts = info.n_mounts;
        st.mounts = mptr;
        struct shim_map labels, ann;
        shim_split_labels(info.labels, &runtime__v1__container_status__labels_entry__descriptor,
                          &runtime__v1__container_status__annotations_entry__descriptor, &labels,
                          &ann);
        st.n_labels = labels.n;
        st.labels = (Runtime__V1__ContainerStatus__LabelsEntry **)labels.entries;
        st.n_annotations = ann.n;
        st.annotations = (Runtime__V1__ContainerStatus__AnnotationsEntry **)ann.entries;
        Runtime__V1__ContainerStatusResponse r = RUNTIME__V1__CONTAINER_STATUS_RESPONSE__INIT;
        r.status = &st;
        dockershim_pack(&r.base, resp, resp_len);
        shim_map_clear(&labels);
        shim_map_clear(&ann);
        free(mounts);
        free(mptr);
        shim_name_clear(&nm);
        docker_container_clear(&info);
        return 0;
}

static Runtime__V1__ContainerState list_state(const char *s)
{
        if (s == NULL)
                return RUNTIME__V1__CONTAINER_STATE__CONTAINER_UNKNOWN;
        if (strcmp(s, "running") == 0)
                return RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING;
        if (strcmp(s, "exited") == 0)
                return RUNTIME__V1__CONTAINER_STATE__CONTAINER_EXITED;
        if (strcmp(s, "created") == 0)
                return RUNTIME__V1__CONTAINER_STATE__CONTAINER_CREATED;
        return RUNTIME__V1__CONTAINER_STATE__CONTAINER_UNKNOWN;
}

/* The layout of every protobuf-c map entry (a label selector's). */
struct pb_map_entry {
        ProtobufCMessage base;
        char *key, *value;
};
#define SAME_LAYOUT(T)                                                                             \
        (offsetof(T, key) == offsetof(struct pb_map_entry, key) &&                                 \
         offsetof(T, value) == offsetof(struct pb_map_entry, value))
_Static_assert(SAME_LAYOUT(Runtime__V1__ContainerFilter__LabelSelectorEntry) &&
                   SAME_LAYOUT(Runtime__V1__ContainerStatsFilter__LabelSelectorEntry),
               "a label selector entry is a map entry");
#undef SAME_LAYOUT

json_t *shim_container_filters(const char *id, const char *sandbox_id, void *const *sel,
                               size_t n_sel)
{
        char **keys = xcalloc(n_sel + 1, sizeof(char *)),
             **vals = xcalloc(n_sel + 1, sizeof(char *));
        for (size_t i = 0; i < n_sel; i++) {
                const struct pb_map_entry *e = sel[i];
                keys[i] = e->key;
                vals[i] = e->value;
        }
        size_t n = n_sel;
        if (sandbox_id && *sandbox_id) {
                keys[n] = (char *)SHIM_LABEL_SANDBOX_ID;
                vals[n] = (char *)sandbox_id;
                n++;
        }
        json_t *filters = shim_filters(SHIM_TYPE_CONTAINER, id, n, keys, vals);
        free(keys);
        free(vals);
        return filters;
}

int dockershim_list_containers(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                               uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        (void)timeout_ms;
        struct dockershim *s = ctx;
        Runtime__V1__ListContainersRequest *in =
            runtime__v1__list_containers_request__unpack(NULL, len, req);
        if (in == NULL)
                return bad_request(err, "ListContainers");
        const Runtime__V1__ContainerFilter *flt = in->filter;
        json_t *filters =
            flt ? shim_container_filters(flt->id, flt->pod_sandbox_id,
                                         (void *const *)flt->label_selector, flt->n_label_selector)
                : shim_container_filters(NULL, NULL, NULL, 0);
        bool want_state = flt && flt->state;
        Runtime__V1__ContainerState want = want_state ? flt->state->state : 0;
        struct docker_container_summary *v = NULL;
        size_t n = 0;
        int rc = docker_container_list(s->docker, true, filters, &v, &n, err);
        json_decref(filters);
        runtime__v1__list_containers_request__free_unpacked(in, NULL);
        if (rc < 0)
                return dockershim_fail(err);
        Runtime__V1__Container *items = xcalloc(n ? n : 1, sizeof(*items));
        Runtime__V1__Container **ptrs = xcalloc(n ? n : 1, sizeof(*ptrs));
        Runtime__V1__ContainerMetadata *mds = xcalloc(n ? n : 1, sizeof(*mds));
        Runtime__V1__ImageSpec *specs = xcalloc(n ? n : 1, sizeof(*specs));
        struct shim_name *names = xcalloc(n ? n : 1, sizeof(*names));
        struct shim_map *maps = xcalloc(2 * (n ? n : 1), sizeof(*maps));
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
                Runtime__V1__ContainerState state = list_state(v[i].state);
                if ((want_state && state != want) || v[i].name == NULL ||
                    shim_parse_name(v[i].name, &names[k]) < 0)
                        continue;
                Runtime__V1__Container *c = &items[k];
                runtime__v1__container__init(c);
                runtime__v1__container_metadata__init(&mds[k]);
                runtime__v1__image_spec__init(&specs[k]);
                mds[k].name = names[k].container;
                mds[k].attempt = names[k].attempt;
                specs[k].image = v[i].image ? v[i].image : (char *)"";
                c->id = v[i].id;
                const char *sb =
                    json_string_value(json_object_get(v[i].labels, SHIM_LABEL_SANDBOX_ID));
                c->pod_sandbox_id = (char *)(sb ? sb : "");
                c->metadata = &mds[k];
                c->image = &specs[k];
                c->image_ref = v[i].image_id ? v[i].image_id : (char *)"";
                c->image_id = c->image_ref;
                c->state = state;
                c->created_at = v[i].created_s * 1000000000;
                shim_split_labels(v[i].labels, &runtime__v1__container__labels_entry__descriptor,
                                  &runtime__v1__container__annotations_entry__descriptor,
                                  &maps[2 * k], &maps[2 * k + 1]);
                c->n_labels = maps[2 * k].n;
                c->labels = (Runtime__V1__Container__LabelsEntry **)maps[2 * k].entries;
                c->n_annotations = maps[2 * k + 1].n;
                c->annotations =
                    (Runtime__V1__Container__AnnotationsEntry **)maps[2 * k + 1].entries;
                ptrs[k] = c;
                k++;
        }
        Runtime__V1__ListContainersResponse r = RUNTIME__V1__LIST_CONTAINERS_RESPONSE__INIT;
        r.n_containers = k;
        r.containers = ptrs;
        dockershim_pack(&r.base, resp, resp_len);
        for (size_t i = 0; i < 2 * (n ? n : 1); i++)
                shim_map_clear(&maps[i]);
        for (size_t i = 0; i < n; i++)
                shim_name_clear(&names[i]);
        free(maps);
        free(names);
        free(specs);
        free(mds);
        free(ptrs);
        free(items);
        docker_container_summaries_free(v, n);
        return 0;
}

int dockershim_update_container_resources(void *ctx, const uint8_t *req, size_t len,
                                          int64_t timeout_ms, uint8_t **resp, size_t *resp_len,
                                          ck_error_t *err)
{
        (void)timeout_ms;
        struct dockershim *s = ctx;
        Runtime__V1__UpdateContainerResourcesRequest *in =
            runtime__v1__update_container_resources_request__unpack(NULL, len, req);
        if (in == NULL)
                return bad_request(err, "UpdateContainerResources");
        json_t *res = json_object();
        set_resources(NULL, res, in->linux);
        cleanup_free char *id = xstrdup(in->container_id);
        runtime__v1__update_container_resources_request__free_unpacked(in, NULL);
        int rc = docker_container_update(s->docker, id, res, err);
        json_decref(res);
        if (rc < 0) {
                dockershim_fail(err);
                return ck_error_wrap(err, "failed to update container");
        }
        Runtime__V1__UpdateContainerResourcesResponse r =
            RUNTIME__V1__UPDATE_CONTAINER_RESOURCES_RESPONSE__INIT;
        dockershim_pack(&r.base, resp, resp_len);
        return 0;
}

int shim_running_container(struct dockershim *s, const char *id, bool *tty, ck_error_t *err)
{
        struct docker_container info;
        if (docker_container_inspect(s->docker, id, &info, err) < 0)
                return dockershim_fail(err);
        bool running = info.running;
        if (tty)
                *tty = info.tty;
        docker_container_clear(&info);
        if (!running)
                return ck_error_make_code(err, GRPC_UNKNOWN, "container not running (%s)", id);
        return 0;
}

int shim_exec_wait_exit(struct dockershim *s, const char *exec_id, struct docker_exec_state *st,
                        ck_error_t *err)
{
        /* the engine may report the exec running a moment after its stream
         * ended */
        *st = (struct docker_exec_state){0};
        for (int i = 0; i < 10; i++) {
                if (docker_exec_inspect(s->docker, exec_id, st, err) < 0)
                        return dockershim_fail(err);
                if (!st->running)
                        return 0;
                usleep(100 * 1000);
        }
        return ck_error_make_code(err, GRPC_UNKNOWN,
                                  "exec `%s`: the output ended, the command still runs", exec_id);
}

int dockershim_exec_sync(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                         uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        struct dockershim *s = ctx;
        Runtime__V1__ExecSyncRequest *in = runtime__v1__exec_sync_request__unpack(NULL, len, req);
        if (in == NULL)
                return bad_request(err, "ExecSync");
        int rc = -1;
        cleanup_free char *exec_id = NULL;
        struct docker_exec_output o = {.cap = EXEC_SYNC_MAX};
        if (shim_running_container(s, in->container_id, NULL, err) < 0)
                goto out;
        const char **cmd = xcalloc(in->n_cmd + 1, sizeof(char *));
        for (size_t i = 0; i < in->n_cmd; i++)
                cmd[i] = in->cmd[i];
        struct docker_exec_config ec = {.cmd = cmd, .attach_stdout = true, .attach_stderr = true};
        int crc = docker_exec_create(s->docker, in->container_id, &ec, &exec_id, err);
        free(cmd);
        if (crc < 0) {
                dockershim_fail(err);
                goto out;
        }
        /* the CRI timeout (s), else the caller's deadline, else none */
        int64_t t = in->timeout > 0 ? in->timeout * 1000 : timeout_ms;
        if (docker_exec_run(s->docker, exec_id, t > 0 ? t : 24 * 3600 * 1000LL, &o, err) < 0) {
                if ((*err)->code == DOCKER_ERR_TIMEOUT) {
                        ck_error_release(err);
                        ck_error_make_code(err, GRPC_DEADLINE_EXCEEDED,
                                           "command timed out after %llds", (long long)(t / 1000));
                } else {
                        dockershim_fail(err);
                }
                goto out;
        }
        if (o.truncated) {
                ck_error_make_code(err, GRPC_UNKNOWN, "exec output over %d bytes", EXEC_SYNC_MAX);
                goto out;
        }
        struct docker_exec_state st;
        if (shim_exec_wait_exit(s, exec_id, &st, err) < 0)
                goto out;
        Runtime__V1__ExecSyncResponse r = RUNTIME__V1__EXEC_SYNC_RESPONSE__INIT;
        r.stdout.data = (uint8_t *)o.out;
        r.stdout.len = o.out_len;
        r.stderr.data = (uint8_t *)o.err;
        r.stderr.len = o.err_len;
        r.exit_code = st.exit_code;
        dockershim_pack(&r.base, resp, resp_len);
        rc = 0;
out:
        docker_exec_output_clear(&o);
        runtime__v1__exec_sync_request__free_unpacked(in, NULL);
        return rc;
}
