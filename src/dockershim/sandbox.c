/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pod sandboxes (dockershim_internal.h): a pause container of the engine,
 * created as cri-dockerd creates it (IpcMode shareable, NetworkMode none
 * unless the pod is on the host's network, the CRI hostname, sysctls,
 * cgroup parent, OOM score -998, CPU shares 2, no-new-privileges), its
 * checkpoint written before it starts, its DNS file written after, then
 * its network namespace given the pod network by the CNI plugins.  The
 * CNI result is kept in <root>/network/<id>: the pod's IP for its status
 * and the DEL's prevResult, across restarts of the shim.
 */
#include "cri.pb-c.h"
#include "dockershim/dockershim_internal.h"
#include "grpc/grpc.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* cri-dockerd's: the sandbox's stop timeout, the CNI calls' deadline */
#define SANDBOX_STOP_TIMEOUT_S 10
#define CNI_TIMEOUT_MS (220 * 1000)
#define SANDBOX_OOM_SCORE_ADJ (-998)
#define SANDBOX_CPU_SHARES 2
#define SHM_SIZE (64 * 1024 * 1024)

static char *checkpoint_dir(const struct dockershim *s)
{
        return xasprintf("%s/sandbox", s->root_dir);
}

/* <root>/network/<id>, or NULL when id is not a plain name. */
static char *network_file(const struct dockershim *s, const char *id)
{
        if (*id == '\0' || id[0] == '.' || strchr(id, '/') != NULL)
                return NULL;
        return xasprintf("%s/network/%s", s->root_dir, id);
}

int shim_oom_score_adj(const struct dockershim *s, int64_t asked)
{
        if (asked < -1000)
                asked = -1000;
        if (asked > 1000)
                asked = 1000;
        if (s->restrict_oom_score_adj && asked < s->own_oom_score_adj)
                return s->own_oom_score_adj;
        return (int)asked;
}

/* The cgroup parent as the engine's driver wants it: systemd takes the
 * slice's name alone. */
static const char *cgroup_parent(const struct dockershim *s, const char *p)
{
        if (p == NULL || *p == '\0')
                return NULL;
        if (strcmp(s->cgroup_driver, "systemd") == 0) {
                const char *slash = strrchr(p, '/');
                return slash ? slash + 1 : p;
        }
        return p;
}

static const char *protocol_name(Runtime__V1__Protocol p)
{
        return p == RUNTIME__V1__PROTOCOL__UDP    ? "udp"
               : p == RUNTIME__V1__PROTOCOL__SCTP ? "sctp"
                                                  : "tcp";
}

/* The engine's create request of a sandbox. */
static json_t *sandbox_create_config(const struct dockershim *s,
                                     const Runtime__V1__PodSandboxConfig *c, bool host_network,
                                     ck_error_t *err)
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
        json_object_set_new(l, SHIM_LABEL_TYPE, json_string(SHIM_TYPE_SANDBOX));
        json_object_set_new(l, SHIM_LABEL_CONTAINER_NAME, json_string("POD"));

        /* (json_pack would free l and host when a string is not UTF-8) */
        json_t *host = json_object();
        json_t *cfg = json_object();
        json_object_set_new(cfg, "Image", json_string(s->pod_infra_image));
        json_object_set_new(cfg, "Labels", l);
        json_object_set_new(cfg, "HostConfig", host);
        if (c->hostname && *c->hostname)
                json_object_set_new(cfg, "Hostname", json_string(c->hostname));
        const Runtime__V1__LinuxPodSandboxConfig *lx = c->linux;
        const Runtime__V1__LinuxSandboxSecurityContext *sc = lx ? lx->security_context : NULL;
        const Runtime__V1__NamespaceOption *ns = sc ? sc->namespace_options : NULL;
        json_object_set_new(
            host, "IpcMode",
            json_string(ns && ns->ipc == RUNTIME__V1__NAMESPACE_MODE__NODE ? "host" : "shareable"));
        json_object_set_new(host, "NetworkMode", json_string(host_network ? "host" : "none"));
        if (ns && ns->pid == RUNTIME__V1__NAMESPACE_MODE__NODE)
                json_object_set_new(host, "PidMode", json_string("host"));
        json_t *secopt = json_array();
        if (sc) {
                if (sc->run_as_user) {
                        char user[48];
                        if (sc->run_as_group)
                                snprintf(user, sizeof(user), "%lld:%lld",
                                         (long long)sc->run_as_user->value,
                                         (long long)sc->run_as_group->value);
                        else
                                snprintf(user, sizeof(user), "%lld",
                                         (long long)sc->run_as_user->value);
                        json_object_set_new(cfg, "User", json_string(user));
                } else if (sc->run_as_group) {
                        json_decref(cfg);
                        json_decref(secopt);
                        return ck_error_make_code(err, GRPC_INVALID_ARGUMENT,
                                                  "runAsGroup is specified without a runAsUser"),
                               NULL;
                }
                if (sc->n_supplemental_groups > 0) {
                        json_t *g = json_array();
                        for (size_t i = 0; i < sc->n_supplemental_groups; i++) {
                                char v[24];
                                snprintf(v, sizeof(v), "%lld",
                                         (long long)sc->supplemental_groups[i]);
                                json_array_append_new(g, json_string(v));
                        }
                        json_object_set_new(host, "GroupAdd", g);
                }
                if (sc->privileged)
                        json_object_set_new(host, "Privileged", json_true());
                if (sc->readonly_rootfs)
                        json_object_set_new(host, "ReadonlyRootfs", json_true());
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
        }
        json_array_append_new(secopt, json_string("no-new-privileges"));
        json_object_set_new(host, "SecurityOpt", secopt);
        if (lx && lx->n_sysctls > 0) {
                json_t *sys = json_object();
                for (size_t i = 0; i < lx->n_sysctls; i++)
                        json_object_set_new(sys, lx->sysctls[i]->key,
                                            json_string(lx->sysctls[i]->value));
                json_object_set_new(host, "Sysctls", sys);
        }
        json_object_set_new(host, "OomScoreAdj",
                            json_integer(shim_oom_score_adj(s, SANDBOX_OOM_SCORE_ADJ)));
        json_object_set_new(host, "CpuShares", json_integer(SANDBOX_CPU_SHARES));
        json_object_set_new(host, "ShmSize", json_integer(SHM_SIZE));
        const char *parent = cgroup_parent(s, lx ? lx->cgroup_parent : NULL);
        if (parent)
                json_object_set_new(host, "CgroupParent", json_string(parent));
        return cfg;
}

/* The pod's resolv.conf: the engine's file of the sandbox, rewritten
 * (its containers share it through container:<sandbox> networking). */
static int write_dns(const char *path, const Runtime__V1__DNSConfig *d, ck_error_t *err)
{
        if (d == NULL || (d->n_servers == 0 && d->n_searches == 0 && d->n_options == 0))
                return 0;
        if (path == NULL || *path == '\0')
                return 0;
        size_t cap = 256, len = 0;
        char *buf = xmalloc(cap);
#define ADD(str)                                                                                   \
        do {                                                                                       \
                size_t l_ = strlen(str);                                                           \
                if (len + l_ + 2 > cap) {                                                          \
                        cap = 2 * (len + l_ + 2);                                                  \
                        buf = xrealloc(buf, cap);                                                  \
                }                                                                                  \
                memcpy(buf + len, str, l_);                                                        \
                len += l_;                                                                         \
        } while (0)
        for (size_t i = 0; i < d->n_servers; i++) {
                ADD("nameserver ");
                ADD(d->servers[i]);
                ADD("\n");
        }
        const char *kw[] = {"search", "options"};
        size_t n[] = {d->n_searches, d->n_options};
        char **v[] = {d->searches, d->options};
        for (size_t k = 0; k < 2; k++) {
                if (n[k] == 0)
                        continue;
                ADD(kw[k]);
                for (size_t i = 0; i < n[k]; i++) {
                        ADD(" ");
                        ADD(v[k][i]);
                }
                ADD("\n");
        }
#undef ADD
        int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0) {
                int e = errno;
                free(buf);
                return ck_error_make(err, e, "write the DNS file `%s`", path);
        }
        ssize_t w = write(fd, buf, len);
        int e = errno;
        close(fd);
        free(buf);
        if (w != (ssize_t)len)
                return ck_error_make(err, w < 0 ? e : EIO, "write the DNS file `%s`", path);
        return 0;
}

/* Pulls the sandbox image when the engine lacks it. */
static int ensure_pause_image(struct dockershim *s, ck_error_t *err)
{
        struct docker_image img;
        ck_error_t e = NULL;
        if (docker_image_inspect(s->docker, s->pod_infra_image, &img, &e) == 0) {
                docker_image_clear(&img);
                return 0;
        }
        if (e->code != DOCKER_ERR_NOT_FOUND) {
                *err = e;
                return -1;
        }
        ck_error_release(&e);
        cleanup_free char *auth = dockershim_registry_auth(NULL, NULL, NULL, NULL, NULL, NULL, err);
        return docker_image_pull(s->docker, s->pod_infra_image, auth, -1, err);
}

static void ports_of(const Runtime__V1__PodSandboxConfig *c, struct shim_checkpoint *cp)
{
        cp->ports_present = c->n_port_mappings > 0;
        cp->ports = xcalloc(c->n_port_mappings ? c->n_port_mappings : 1, sizeof(*cp->ports));
        for (size_t i = 0; i < c->n_port_mappings; i++) {
                const Runtime__V1__PortMapping *p = c->port_mappings[i];
                cp->ports[i] =
                    (struct shim_port){xstrdup(protocol_name(p->protocol)), p->container_port,
                                       p->host_port, xstrdup(p->host_ip ? p->host_ip : "")};
        }
        cp->n_ports = c->n_port_mappings;
}

/* CNI ADD for sandbox id on netns; the result kept for status and DEL. */
static int network_up(struct dockershim *s, const char *id, const char *netns,
                      const struct shim_checkpoint *cp, ck_error_t *err)
{
        struct shim_cni *cni = NULL;
        if (shim_cni_load(s->cni_conf_dir, s->cni_bin_dirs, &cni, err) < 0)
                return -1;
        struct shim_cni_args a = {.container_id = id,
                                  .netns = netns,
                                  .pod_name = cp->name,
                                  .pod_ns = cp->ns,
                                  .ports = cp->ports,
                                  .n_ports = cp->n_ports};
        cleanup_free char *ip = NULL, *result = NULL;
        int rc = shim_cni_add(cni, &a, CNI_TIMEOUT_MS, &ip, &result, err);
        if (rc < 0) {
                /* what the plugins did before the failure (an address
                 * taken, a veth) goes again */
                ck_error_t ignored = NULL;
                shim_cni_del(cni, &a, NULL, CNI_TIMEOUT_MS, &ignored);
                ck_error_release(&ignored);
        }
        if (rc == 0) {
                json_t *rec = json_pack("{s:s,s:s,s:s}", "network", shim_cni_name(cni), "ip", ip,
                                        "result", result);
                cleanup_free char *text = json_dumps(rec, JSON_COMPACT);
                json_decref(rec);
                cleanup_free char *dir = xasprintf("%s/network", s->root_dir);
                cleanup_free char *file = network_file(s, id);
                if (file == NULL)
                        rc = ck_error_make(err, EINVAL, "sandbox `%s`", id);
                else if (fs_mkdir_p(dir, 0700, err) < 0 ||
                         fs_write_file_atomic(file, text, strlen(text), 0600, err) < 0) {
                        ck_error_t ignored = NULL;
                        shim_cni_del(cni, &a, result, CNI_TIMEOUT_MS, &ignored);
                        ck_error_release(&ignored);
                        rc = -1;
                }
        }
        shim_cni_free(cni);
        return rc;
}

/* The kept CNI record of a sandbox, or NULL. */
static json_t *network_record(const struct dockershim *s, const char *id)
{
        cleanup_free char *file = network_file(s, id);
        if (file == NULL)
                return NULL;
        cleanup_free char *buf = NULL;
        size_t len = 0;
        ck_error_t e = NULL;
        if (fs_read_file(file, 1024 * 1024, &buf, &len, &e) < 0) {
                ck_error_release(&e);
                return NULL;
        }
        return json_loadb(buf, len, 0, NULL);
}

/* CNI DEL when the sandbox has a network up: its record says so, or (the
 * record lost: the shim stopped between the ADD and writing it) its
 * container still runs, as cri-dockerd tears down a running sandbox's
 * network whatever it knows; then without the ADD's result.  The record
 * removed once done. */
static int network_down(struct dockershim *s, const char *id, const char *netns, const char *name,
                        const char *ns, const struct shim_checkpoint *cp, bool running,
                        ck_error_t *err)
{
        json_t *rec = network_record(s, id);
        if (rec == NULL && !running)
                return 0;
        struct shim_cni *cni = NULL;
        int rc = shim_cni_load(s->cni_conf_dir, s->cni_bin_dirs, &cni, err);
        if (rc == 0) {
                struct shim_cni_args a = {.container_id = id,
                                          .netns = netns ? netns : "",
                                          .pod_name = name ? name : "",
                                          .pod_ns = ns ? ns : "",
                                          .ports = cp ? cp->ports : NULL,
                                          .n_ports = cp ? cp->n_ports : 0};
                rc = shim_cni_del(cni, &a,
                                  rec ? json_string_value(json_object_get(rec, "result")) : NULL,
                                  CNI_TIMEOUT_MS, err);
        }
        shim_cni_free(cni);
        cleanup_free char *file = network_file(s, id);
        if (rc == 0 && file) {
                unlink(file);
        } else if (rc < 0 && rec == NULL && file) {
                /* a DEL is still owed: an empty record says so to the next
                 * stop (the container no longer runs then) and the removal */
                ck_error_t ignored = NULL;
                cleanup_free char *dir = xasprintf("%s/network", s->root_dir);
                if (fs_mkdir_p(dir, 0700, &ignored) < 0 ||
                    fs_write_file_atomic(file, "{}", 2, 0600, &ignored) < 0)
                        ck_error_release(&ignored);
        }
        json_decref(rec);
        return rc;
}

static int bad_request(ck_error_t *err, const char *what)
{
        return ck_error_make_code(err, GRPC_INVALID_ARGUMENT, "%s: the request does not decode",
                                  what);
}

int dockershim_run_pod_sandbox(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                               uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        (void)timeout_ms;
        struct dockershim *s = ctx;
        Runtime__V1__RunPodSandboxRequest *in =
            runtime__v1__run_pod_sandbox_request__unpack(NULL, len, req);
        if (in == NULL)
                return bad_request(err, "RunPodSandbox");
        int rc = -1;
        bool started = false;
        const Runtime__V1__PodSandboxConfig *c = in->config;
        const Runtime__V1__PodSandboxMetadata *m = c ? c->metadata : NULL;
        cleanup_free char *id = NULL, *name = NULL, *dir = checkpoint_dir(s);
        struct shim_checkpoint cp = {0};
        json_t *cfg = NULL;
        if (m == NULL) {
                ck_error_make_code(err, GRPC_INVALID_ARGUMENT, "RunPodSandbox: no config metadata");
                goto out;
        }
        if (in->runtime_handler && *in->runtime_handler &&
            strcmp(in->runtime_handler, "docker") != 0 &&
            strcmp(in->runtime_handler, "runc") != 0) {
                ck_error_make_code(err, GRPC_INVALID_ARGUMENT,
                                   "no runtime for \"%s\" is configured", in->runtime_handler);
                goto out;
        }
        const Runtime__V1__LinuxSandboxSecurityContext *sc =
            c->linux ? c->linux->security_context : NULL;
        bool host_network = sc && sc->namespace_options &&
                            sc->namespace_options->network == RUNTIME__V1__NAMESPACE_MODE__NODE;
        if (ensure_pause_image(s, err) < 0) {
                dockershim_fail(err);
                ck_error_wrap(err, "sandbox image `%s`", s->pod_infra_image);
                goto out;
        }
        cfg = sandbox_create_config(s, c, host_network, err);
        if (cfg == NULL)
                goto out;
        name = shim_sandbox_name(m->name, m->namespace_, m->uid, m->attempt);
        if (shim_container_create(s, name, cfg, &id, err) < 0) {
                dockershim_fail(err);
                goto out;
        }
        cp.name = xstrdup(m->name);
        cp.ns = xstrdup(m->namespace_);
        cp.host_network = host_network;
        ports_of(c, &cp);
        if (shim_checkpoint_write(dir, id, &cp, err) < 0)
                goto out;
        if (docker_container_start(s->docker, id, err) < 0) {
                dockershim_fail(err);
                ck_error_wrap(err, "start sandbox container for pod \"%s\"", m->name);
                goto out;
        }
        started = true; /* from here a failure stops it again (no pod without its network) */
        struct docker_container info;
        if (docker_container_inspect(s->docker, id, &info, err) < 0) {
                dockershim_fail(err);
                goto out;
        }
        if (write_dns(info.resolv_conf_path, c->dns_config, err) < 0) {
                docker_container_clear(&info);
                goto out;
        }
        if (!host_network) {
                if (info.sandbox_key == NULL || *info.sandbox_key == '\0') {
                        docker_container_clear(&info);
                        ck_error_make_code(err, GRPC_UNKNOWN,
                                           "sandbox container `%s` has no network namespace", id);
                        goto out;
                }
                if (network_up(s, id, info.sandbox_key, &cp, err) < 0) {
                        ck_error_wrap(err,
                                      "failed to set up sandbox container \"%s\" network for "
                                      "pod \"%s\"",
                                      id, m->name);
                        docker_container_clear(&info);
                        goto out;
                }
        }
        docker_container_clear(&info);
        Runtime__V1__RunPodSandboxResponse r = RUNTIME__V1__RUN_POD_SANDBOX_RESPONSE__INIT;
        r.pod_sandbox_id = id;
        dockershim_pack(&r.base, resp, resp_len);
        rc = 0;
out:
        if (rc < 0 && started) {
                ck_error_t ignored = NULL;
                docker_container_stop(s->docker, id, SANDBOX_STOP_TIMEOUT_S, &ignored);
                ck_error_release(&ignored);
        }
        json_decref(cfg);
        shim_checkpoint_clear(&cp);
        runtime__v1__run_pod_sandbox_request__free_unpacked(in, NULL);
        return rc;
}

int dockershim_stop_pod_sandbox(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                                uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        (void)timeout_ms;
        struct dockershim *s = ctx;
        Runtime__V1__StopPodSandboxRequest *in =
            runtime__v1__stop_pod_sandbox_request__unpack(NULL, len, req);
        if (in == NULL)
                return bad_request(err, "StopPodSandbox");
        /* the engine's full ID when it knows the container (a prefix is
         * resolved): the checkpoint and the network record are by it */
        cleanup_free char *id = xstrdup(in->pod_sandbox_id);
        runtime__v1__stop_pod_sandbox_request__free_unpacked(in, NULL);
        cleanup_free char *dir = checkpoint_dir(s);
        struct docker_container info;
        struct shim_checkpoint cp = {0};
        struct shim_name nm = {0};
        bool have_info = false, host_network = false;
        ck_error_t e = NULL;
        if (docker_container_inspect(s->docker, id, &info, &e) == 0) {
                have_info = true;
                free(id);
                id = xstrdup(info.id);
                host_network = info.network_mode && strcmp(info.network_mode, "host") == 0;
                shim_parse_name(info.name, &nm);
        } else if (e->code != DOCKER_ERR_NOT_FOUND) {
                *err = e;
                return dockershim_fail(err);
        } else {
                ck_error_release(&e);
        }
        if (shim_checkpoint_read(dir, id, &cp, &e) < 0) {
                ck_error_release(&e);
        } else if (!have_info) {
                host_network = cp.host_network;
        }
        /* both steps are tried, their errors joined (cri-dockerd's) */
        ck_error_t net_err = NULL, stop_err = NULL;
        if (!host_network &&
            network_down(s, id, have_info ? info.sandbox_key : NULL, nm.pod ? nm.pod : cp.name,
                         nm.ns ? nm.ns : cp.ns, &cp, have_info && info.running, &net_err) < 0)
                ck_error_wrap(&net_err, "tear down sandbox `%s`'s network", id);
        if (have_info &&
            docker_container_stop(s->docker, id, SANDBOX_STOP_TIMEOUT_S, &stop_err) < 0) {
                if (stop_err->code == DOCKER_ERR_NOT_FOUND) {
                        ck_error_release(&stop_err);
                } else {
                        dockershim_fail(&stop_err);
                }
        }
        if (have_info)
                docker_container_clear(&info);
        shim_checkpoint_clear(&cp);
        shim_name_clear(&nm);
        if (net_err && stop_err) {
                ck_error_make_code(err, stop_err->code, "%s; %s", ck_error_msg(net_err),
                                   ck_error_msg(stop_err));
                ck_error_release(&net_err);
                ck_error_release(&stop_err);
                return -1;
        }
        if (net_err || stop_err) {
                *err = net_err ? net_err : stop_err;
                if (net_err)
                        (*err)->code = GRPC_UNKNOWN;
                return -1;
        }
        Runtime__V1__StopPodSandboxResponse r = RUNTIME__V1__STOP_POD_SANDBOX_RESPONSE__INIT;
        dockershim_pack(&r.base, resp, resp_len);
        return 0;
}

int dockershim_remove_pod_sandbox(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                                  uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        (void)timeout_ms;
        struct dockershim *s = ctx;
        Runtime__V1__RemovePodSandboxRequest *in =
            runtime__v1__remove_pod_sandbox_request__unpack(NULL, len, req);
        if (in == NULL)
                return bad_request(err, "RemovePodSandbox");
        cleanup_free char *id = xstrdup(in->pod_sandbox_id);
        runtime__v1__remove_pod_sandbox_request__free_unpacked(in, NULL);
        struct docker_container info;
        ck_error_t e = NULL;
        if (docker_container_inspect(s->docker, id, &info, &e) == 0) {
                free(id);
                id = xstrdup(info.id);
                docker_container_clear(&info);
        } else if (e->code != DOCKER_ERR_NOT_FOUND) {
                *err = e;
                return dockershim_fail(err);
        } else {
                ck_error_release(&e);
        }
        /* its containers first, their log links with them */
        cleanup_free char *sel = xasprintf(SHIM_LABEL_SANDBOX_ID "=%s", id);
        json_t *filters = json_pack("{s:[s]}", "label", sel);
        if (filters == NULL) /* never list (and remove) every container */
                return ck_error_make_code(err, GRPC_INVALID_ARGUMENT,
                                          "RemovePodSandbox: the sandbox ID is not valid UTF-8");
        struct docker_container_summary *v = NULL;
        size_t n = 0;
        int rc = docker_container_list(s->docker, true, filters, &v, &n, err);
        json_decref(filters);
        if (rc < 0)
                return dockershim_fail(err);
        for (size_t i = 0; rc == 0 && i < n; i++)
                rc = shim_remove_container(s, v[i].id, err);
        docker_container_summaries_free(v, n);
        if (rc < 0)
                return -1;
        if (docker_container_remove(s->docker, id, true, &e) < 0) {
                if (e->code != DOCKER_ERR_NOT_FOUND) {
                        *err = e;
                        return dockershim_fail(err);
                }
                ck_error_release(&e);
        }
        cleanup_free char *dir = checkpoint_dir(s);
        /* a network record left (its DEL failed at the stop): one more DEL,
         * which gives the address back to the pool; the record goes anyway */
        struct shim_checkpoint cp = {0};
        if (shim_checkpoint_read(dir, id, &cp, &e) < 0)
                ck_error_release(&e);
        if (network_down(s, id, NULL, cp.name, cp.ns, &cp, false, &e) < 0) {
                LOG_WARN("RemovePodSandbox: tearing down the network failed, removing anyway",
                         "podSandboxID=\"%s\" err=\"%s\"", id, ck_error_msg(e));
                ck_error_release(&e);
        }
        shim_checkpoint_clear(&cp);
        if (shim_checkpoint_remove(dir, id, err) < 0)
                return -1;
        cleanup_free char *net = network_file(s, id);
        if (net)
                unlink(net);
        Runtime__V1__RemovePodSandboxResponse r = RUNTIME__V1__REMOVE_POD_SANDBOX_RESPONSE__INIT;
        dockershim_pack(&r.base, resp, resp_len);
        return 0;
}

static Runtime__V1__NamespaceMode mode_of(const char *m, Runtime__V1__NamespaceMode otherwise)
{
        return m && strcmp(m, "host") == 0 ? RUNTIME__V1__NAMESPACE_MODE__NODE : otherwise;
}

int dockershim_pod_sandbox_status(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                                  uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        (void)timeout_ms;
        struct dockershim *s = ctx;
        Runtime__V1__PodSandboxStatusRequest *in =
            runtime__v1__pod_sandbox_status_request__unpack(NULL, len, req);
        if (in == NULL)
                return bad_request(err, "PodSandboxStatus");
        cleanup_free char *id = xstrdup(in->pod_sandbox_id);
        runtime__v1__pod_sandbox_status_request__free_unpacked(in, NULL);
        struct docker_container info;
        struct shim_name nm;
        if (shim_inspect_own(s, id, SHIM_TYPE_SANDBOX, "pod sandbox", &info, &nm, err) < 0)
                return -1;
        Runtime__V1__PodSandboxMetadata md = RUNTIME__V1__POD_SANDBOX_METADATA__INIT;
        md.name = nm.pod;
        md.namespace_ = nm.ns;
        md.uid = nm.uid;
        md.attempt = nm.attempt;
        Runtime__V1__NamespaceOption nso = RUNTIME__V1__NAMESPACE_OPTION__INIT;
        nso.network = mode_of(info.network_mode, RUNTIME__V1__NAMESPACE_MODE__POD);
        nso.pid = mode_of(info.pid_mode, RUNTIME__V1__NAMESPACE_MODE__CONTAINER);
        nso.ipc = mode_of(info.ipc_mode, RUNTIME__V1__NAMESPACE_MODE__POD);
        Runtime__V1__Namespace nsp = RUNTIME__V1__NAMESPACE__INIT;
        nsp.options = &nso;
        Runtime__V1__LinuxPodSandboxStatus lx = RUNTIME__V1__LINUX_POD_SANDBOX_STATUS__INIT;
        lx.namespaces = &nsp;
        Runtime__V1__PodSandboxNetworkStatus net = RUNTIME__V1__POD_SANDBOX_NETWORK_STATUS__INIT;
        json_t *rec =
            nso.network == RUNTIME__V1__NAMESPACE_MODE__NODE ? NULL : network_record(s, info.id);
        const char *ip = json_string_value(json_object_get(rec, "ip"));
        if (ip)
                net.ip = (char *)ip;
        struct shim_map labels, ann;
        shim_split_labels(info.labels, &runtime__v1__pod_sandbox_status__labels_entry__descriptor,
                          &runtime__v1__pod_sandbox_status__annotations_entry__descriptor, &labels,
                          &ann);
        Runtime__V1__PodSandboxStatus st = RUNTIME__V1__POD_SANDBOX_STATUS__INIT;
        st.id = info.id;
        st.metadata = &md;
        st.state = info.running ? RUNTIME__V1__POD_SANDBOX_STATE__SANDBOX_READY
                                : RUNTIME__V1__POD_SANDBOX_STATE__SANDBOX_NOTREADY;
        st.created_at = info.created_ns;
        st.network = &net;
        st.linux = &lx;
        st.n_labels = labels.n;
        st.labels = (Runtime__V1__PodSandboxStatus__LabelsEntry **)labels.entries;
        st.n_annotations = ann.n;
        st.annotations = (Runtime__V1__PodSandboxStatus__AnnotationsEntry **)ann.entries;
        Runtime__V1__PodSandboxStatusResponse r = RUNTIME__V1__POD_SANDBOX_STATUS_RESPONSE__INIT;
        r.status = &st;
        dockershim_pack(&r.base, resp, resp_len);
        shim_map_clear(&labels);
        shim_map_clear(&ann);
        json_decref(rec);
        shim_name_clear(&nm);
        docker_container_clear(&info);
        return 0;
}

/* The engine's filters of a CRI label selector and type. */
json_t *shim_filters(const char *type, const char *id, size_t n_sel, char **keys, char **values)
{
        json_t *f = json_object();
        json_t *labels = json_array();
        cleanup_free char *t = xasprintf(SHIM_LABEL_TYPE "=%s", type);
        json_array_append_new(labels, json_string(t));
        for (size_t i = 0; i < n_sel; i++) {
                cleanup_free char *kv = xasprintf("%s=%s", keys[i], values[i]);
                json_array_append_new(labels, json_string(kv));
        }
        json_object_set_new(f, "label", labels);
        if (id && *id)
                json_object_set_new(f, "id", json_pack("[s]", id));
        return f;
}

int dockershim_list_pod_sandbox(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                                uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        (void)timeout_ms;
        struct dockershim *s = ctx;
        Runtime__V1__ListPodSandboxRequest *in =
            runtime__v1__list_pod_sandbox_request__unpack(NULL, len, req);
        if (in == NULL)
                return bad_request(err, "ListPodSandbox");
        const Runtime__V1__PodSandboxFilter *flt = in->filter;
        size_t nsel = flt ? flt->n_label_selector : 0;
        char **keys = xcalloc(nsel + 1, sizeof(char *)), **vals = xcalloc(nsel + 1, sizeof(char *));
        for (size_t i = 0; i < nsel; i++) {
                keys[i] = flt->label_selector[i]->key;
                vals[i] = flt->label_selector[i]->value;
        }
        /* checkpoints whose container is gone: listed NotReady when the
         * request filters nothing (read before the engine's list, so a
         * sandbox being made is not one of them) */
        char **ckpts = NULL;
        size_t n_ckpts = 0;
        cleanup_free char *dir = checkpoint_dir(s);
        ck_error_t e = NULL;
        if (flt == NULL && shim_checkpoint_list(dir, &ckpts, &n_ckpts, &e) < 0)
                ck_error_release(&e);
        json_t *filters = shim_filters(SHIM_TYPE_SANDBOX, flt ? flt->id : NULL, nsel, keys, vals);
        bool want_state = flt && flt->state;
        Runtime__V1__PodSandboxState want = want_state ? flt->state->state : 0;
        struct docker_container_summary *v = NULL;
        size_t n = 0;
        int rc = docker_container_list(
            s->docker, !(want_state && want == RUNTIME__V1__POD_SANDBOX_STATE__SANDBOX_READY),
            filters, &v, &n, err);
        json_decref(filters);
        free(keys);
        free(vals);
        runtime__v1__list_pod_sandbox_request__free_unpacked(in, NULL);
        if (rc < 0) {
                for (size_t i = 0; i < n_ckpts; i++)
                        free(ckpts[i]);
                free(ckpts);
                return dockershim_fail(err);
        }
        size_t cap = n + n_ckpts;
        Runtime__V1__PodSandbox *items = xcalloc(cap ? cap : 1, sizeof(*items));
        Runtime__V1__PodSandbox **ptrs = xcalloc(cap ? cap : 1, sizeof(*ptrs));
        Runtime__V1__PodSandboxMetadata *mds = xcalloc(cap ? cap : 1, sizeof(*mds));
        struct shim_name *names = xcalloc(cap ? cap : 1, sizeof(*names));
        struct shim_map *maps = xcalloc(2 * (cap ? cap : 1), sizeof(*maps));
        struct shim_checkpoint *cps = xcalloc(n_ckpts ? n_ckpts : 1, sizeof(*cps));
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
                if (v[i].name == NULL || shim_parse_name(v[i].name, &names[k]) < 0)
                        continue;
                bool ready = v[i].state && strcmp(v[i].state, "running") == 0;
                if (want_state &&
                    (want == RUNTIME__V1__POD_SANDBOX_STATE__SANDBOX_READY) != ready) {
                        shim_name_clear(&names[k]);
                        continue;
                }
                Runtime__V1__PodSandbox *p = &items[k];
                runtime__v1__pod_sandbox__init(p);
                runtime__v1__pod_sandbox_metadata__init(&mds[k]);
                mds[k].name = names[k].pod;
                mds[k].namespace_ = names[k].ns;
                mds[k].uid = names[k].uid;
                mds[k].attempt = names[k].attempt;
                p->id = v[i].id;
                p->metadata = &mds[k];
                p->state = ready ? RUNTIME__V1__POD_SANDBOX_STATE__SANDBOX_READY
                                 : RUNTIME__V1__POD_SANDBOX_STATE__SANDBOX_NOTREADY;
                p->created_at = v[i].created_s * 1000000000;
                shim_split_labels(v[i].labels, &runtime__v1__pod_sandbox__labels_entry__descriptor,
                                  &runtime__v1__pod_sandbox__annotations_entry__descriptor,
                                  &maps[2 * k], &maps[2 * k + 1]);
                p->n_labels = maps[2 * k].n;
                p->labels = (Runtime__V1__PodSandbox__LabelsEntry **)maps[2 * k].entries;
                p->n_annotations = maps[2 * k + 1].n;
                p->annotations =
                    (Runtime__V1__PodSandbox__AnnotationsEntry **)maps[2 * k + 1].entries;
                ptrs[k] = p;
                k++;
        }
        for (size_t c = 0; c < n_ckpts; c++) {
                bool listed = false;
                for (size_t i = 0; i < n && !listed; i++)
                        listed = strcmp(v[i].id, ckpts[c]) == 0;
                if (listed || shim_checkpoint_read(dir, ckpts[c], &cps[c], &e) < 0) {
                        ck_error_release(&e);
                        continue;
                }
                Runtime__V1__PodSandbox *p = &items[k];
                runtime__v1__pod_sandbox__init(p);
                runtime__v1__pod_sandbox_metadata__init(&mds[k]);
                mds[k].name = cps[c].name;
                mds[k].namespace_ = cps[c].ns;
                p->id = ckpts[c];
                p->metadata = &mds[k];
                p->state = RUNTIME__V1__POD_SANDBOX_STATE__SANDBOX_NOTREADY;
                ptrs[k] = p;
                k++;
        }
        Runtime__V1__ListPodSandboxResponse r = RUNTIME__V1__LIST_POD_SANDBOX_RESPONSE__INIT;
        r.n_items = k;
        r.items = ptrs;
        dockershim_pack(&r.base, resp, resp_len);
        for (size_t i = 0; i < 2 * (cap ? cap : 1); i++)
                shim_map_clear(&maps[i]);
        for (size_t i = 0; i < cap; i++)
                shim_name_clear(&names[i]);
        for (size_t c = 0; c < n_ckpts; c++) {
                shim_checkpoint_clear(&cps[c]);
                free(ckpts[c]);
        }
        free(ckpts);
        free(cps);
        free(maps);
        free(names);
        free(mds);
        free(ptrs);
        free(items);
        docker_container_summaries_free(v, n);
        return 0;
}
