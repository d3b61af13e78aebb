/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ContainerConfig for one container of a pod (upstream
 * kuberuntime_container.go generateContainerConfig and
 * kuberuntime_container_linux.go generateLinuxContainerConfig).
 *
 * image.image is the image as the spec names it; upstream puts the pulled
 * image's reference there (user_specified_image keeps the spec's name), so
 * a caller that has the reference replaces image->image.  The container's
 * log directory (<sandbox log dir>/<name>) is the caller's to create, as
 * upstream creates it next to this step.
 */
#include "kuberuntime/builders.h"
#include "devicemanager/devicemanager.h"
#include "expansion/expansion.h"
#include "kuberuntime/builders_internal.h"

#include "util/xalloc.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static Runtime__V1__LinuxContainerResources *container_resources(const struct pod *pod,
                                                                 const struct container *c)
{
        const struct resource_list *req = &c->resources.requests, *lim = &c->resources.limits;
        Runtime__V1__LinuxContainerResources *r = kuberuntime__linux_resources(
            req->has_cpu, req->cpu_milli, lim->has_cpu ? lim->cpu_milli : 0,
            lim->has_memory ? lim->memory : 0);
        r->oom_score_adj = kuberuntime_oom_score_adj(pod, c, kuberuntime__node_memory_capacity());
        kuberuntime__hugepage_limits(r, lim);
        return r;
}

static void add_envs(Runtime__V1__ContainerConfig *cfg, const struct kv_list *env)
{
        if (env->n == 0)
                return;
        cfg->envs = xrealloc(cfg->envs, (cfg->n_envs + env->n) * sizeof(*cfg->envs));
        for (size_t i = 0; i < env->n; i++) {
                Runtime__V1__KeyValue *kv = xmalloc(sizeof(*kv));
                runtime__v1__key_value__init(kv);
                kv->key = xstrdup(env->items[i].key);
                kv->value = xstrdup(env->items[i].value ? env->items[i].value : "");
                cfg->envs[cfg->n_envs++] = kv;
        }
}

static void add_expanded(size_t *n, char ***arr, const struct str_list *in,
                         const struct kv_list *env)
{
        for (size_t i = 0; i < in->n; i++) {
                char *v = expansion_expand(in->items[i], env);
                kuberuntime__strv_push(n, arr, v);
                free(v);
        }
}

/* lifecycle.stopSignal as the CRI enum (upstream signalNameToRuntimeEnum:
 * "SIGRTMIN+1" is SIGRTMINPLUS1, "SIGRTMAX-1" SIGRTMAXMINUS1); the decoder
 * admitted only known names; RUNTIME_DEFAULT (the image's) otherwise. */
static Runtime__V1__Signal stop_signal(const char *name)
{
        char buf[32];
        size_t o = 0;
        for (const char *p = name; *p != '\0' && o + 6 < sizeof(buf); p++) {
                const char *w = *p == '+' ? "PLUS" : *p == '-' ? "MINUS" : NULL;
                if (w != NULL) {
                        memcpy(buf + o, w, strlen(w));
                        o += strlen(w);
                } else {
                        buf[o++] = *p;
                }
        }
        buf[o] = '\0';
        const ProtobufCEnumValue *v =
            protobuf_c_enum_descriptor_get_value_by_name(&runtime__v1__signal__descriptor, buf);
        return v != NULL ? (Runtime__V1__Signal)v->value : RUNTIME__V1__SIGNAL__RUNTIME_DEFAULT;
}

int kuberuntime_container_config(const struct kuberuntime_options *opts, const struct pod *pod,
                                 const struct container *c, int32_t restart_count,
                                 const char *pod_ip, const struct kv_list *volume_paths,
                                 Runtime__V1__ContainerConfig **out, ck_error_t *err)
{
        return kuberuntime_container_config_with_objects(opts, pod, c, restart_count, pod_ip,
                                                         volume_paths, NULL, out, err);
}

/* The device plugins' share of the config (upstream: the container
 * manager's run options come first): their environment before the
 * container's, their mounts before the volumes' (the mounts are prepended
 * once those are made), their devices, annotations the kubelet's own keys
 * then override, CDI devices. */
static void add_device_options(Runtime__V1__ContainerConfig *cfg,
                               const struct devicemanager_container_options *d)
{
        add_envs(cfg, &d->envs);
        for (size_t i = 0; i < d->n_devices; i++) {
                Runtime__V1__Device *dv = xmalloc(sizeof(*dv));
                runtime__v1__device__init(dv);
                dv->container_path = xstrdup(d->devices[i].container_path);
                dv->host_path = xstrdup(d->devices[i].host_path);
                dv->permissions = xstrdup(d->devices[i].permissions);
                cfg->devices = xrealloc(cfg->devices, (cfg->n_devices + 1) * sizeof(*cfg->devices));
                cfg->devices[cfg->n_devices++] = dv;
        }
        const ProtobufCMessageDescriptor *ad =
            &runtime__v1__container_config__annotations_entry__descriptor;
        for (size_t i = 0; i < d->annotations.n; i++)
                KR_MAP_SET(cfg, annotations, *ad, d->annotations.items[i].key,
                           d->annotations.items[i].value);
        for (size_t i = 0; i < d->n_cdi_devices; i++) {
                Runtime__V1__CDIDevice *cd = xmalloc(sizeof(*cd));
                runtime__v1__cdidevice__init(cd);
                cd->name = xstrdup(d->cdi_devices[i]);
                cfg->cdi_devices = xrealloc(cfg->cdi_devices,
                                            (cfg->n_cdi_devices + 1) * sizeof(*cfg->cdi_devices));
                cfg->cdi_devices[cfg->n_cdi_devices++] = cd;
        }
}

/* The device plugins' mounts, first of the list. */
static void prepend_device_mounts(Runtime__V1__ContainerConfig *cfg,
                                  const struct devicemanager_container_options *d)
{
        if (d->n_mounts == 0)
                return;
        Runtime__V1__Mount **all = xcalloc(d->n_mounts + cfg->n_mounts + 1, sizeof(*all));
        for (size_t i = 0; i < d->n_mounts; i++) {
                Runtime__V1__Mount *mt = xmalloc(sizeof(*mt));
                runtime__v1__mount__init(mt);
                mt->container_path = xstrdup(d->mounts[i].container_path);
                mt->host_path = xstrdup(d->mounts[i].host_path);
                mt->readonly = d->mounts[i].read_only;
                all[i] = mt;
        }
        for (size_t i = 0; i < cfg->n_mounts; i++)
                all[d->n_mounts + i] = cfg->mounts[i];
        free(cfg->mounts);
        cfg->mounts = all;
        cfg->n_mounts += d->n_mounts;
}

int kuberuntime_container_config_with_objects(const struct kuberuntime_options *opts,
                                              const struct pod *pod, const struct container *c,
                                              int32_t restart_count, const char *pod_ip,
                                              const struct kv_list *volume_paths,
                                              const struct kube_objects *kube,
                                              Runtime__V1__ContainerConfig **out, ck_error_t *err)
{
        struct kv_list env = {0};
        struct devicemanager_container_options dev = {0};
        Runtime__V1__ContainerConfig *cfg = xmalloc(sizeof(*cfg));
        runtime__v1__container_config__init(cfg);

        /* upstream GenerateRunContainerOptions: the devices first
         * (PreStartContainer), then the environment */
        if (devicemanager_container_options(opts->devices, pod, c, &dev, err) < 0)
                goto fail;
        if (kuberuntime__container_env(opts, pod, c, pod_ip, kube, volume_paths, &env, err) < 0)
                goto fail;
        if (kuberuntime__verify_run_as_non_root(pod, c, err) < 0)
                goto fail;

        Runtime__V1__ContainerMetadata *md = xmalloc(sizeof(*md));
        runtime__v1__container_metadata__init(md);
        md->name = xstrdup(c->name);
        md->attempt = (uint32_t)restart_count;
        cfg->metadata = md;

        Runtime__V1__ImageSpec *image = xmalloc(sizeof(*image));
        runtime__v1__image_spec__init(image);
        image->image = xstrdup(c->image ? c->image : "");
        image->user_specified_image = xstrdup(c->image ? c->image : "");
        cfg->image = image;

        /* $(VAR) in command and args sees the devices' variables too */
        struct kv_list all_env = {0};
        for (size_t i = 0; i < dev.envs.n; i++)
                kv_list_add(&all_env, dev.envs.items[i].key, dev.envs.items[i].value);
        for (size_t i = 0; i < env.n; i++)
                kv_list_add(&all_env, env.items[i].key, env.items[i].value);
        add_expanded(&cfg->n_command, &cfg->command, &c->command, &all_env);
        add_expanded(&cfg->n_args, &cfg->args, &c->args, &all_env);
        kv_list_release(&all_env);
        add_device_options(cfg, &dev);
        if (c->working_dir != NULL)
                cfg->working_dir = xstrdup(c->working_dir);
        kuberuntime__container_labels(pod, c, restart_count, cfg);
        cfg->log_path = xasprintf("%s/%" PRId32 ".log", c->name, restart_count);
        cfg->stdin = c->stdin_open;
        cfg->stdin_once = c->stdin_once;
        cfg->tty = c->tty;
        if (c->stop_signal != NULL)
                cfg->stop_signal = stop_signal(c->stop_signal);

        Runtime__V1__LinuxContainerConfig *lc = xmalloc(sizeof(*lc));
        runtime__v1__linux_container_config__init(lc);
        cfg->linux = lc;
        lc->resources = container_resources(pod, c);
        if (kuberuntime__container_security_context(opts, pod, c, &lc->security_context, err) < 0)
                goto fail;

        /* last: creates the termination-log file */
        if (kuberuntime__container_mounts(opts, pod, c, pod_ip, &env, volume_paths, cfg, err) < 0)
                goto fail;
        prepend_device_mounts(cfg, &dev);

        add_envs(cfg, &env);
        kv_list_release(&env);
        devicemanager_container_options_release(&dev);
        *out = cfg;
        return 0;
fail:
        kv_list_release(&env);
        devicemanager_container_options_release(&dev);
        kuberuntime_container_config_free(cfg);
        /* unwrapped: the container's waiting message and its event show
         * the cause alone, as upstream's */
        return -1;
}

void kuberuntime_container_config_free(Runtime__V1__ContainerConfig *cfg)
{
        kuberuntime__message_free((ProtobufCMessage *)cfg);
}
