/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Helpers shared by the pod-spec-to-CRI builders (labels.c, dns.c,
 * sandbox_config.c, container_*.c).  Not part of the module's API: the
 * double-underscore prefix marks them internal (the libuv habit).
 *
 * Every string a builder puts into a message is a heap copy, so that the
 * whole tree can be released by protobuf-c's walker with the system
 * allocator (see kuberuntime__message_free).
 */
#ifndef CK_KUBERUNTIME_BUILDERS_INTERNAL_H
#define CK_KUBERUNTIME_BUILDERS_INTERNAL_H

#include "api/pod.h"
#include "cri.pb-c.h"
#include "kuberuntime/runtime.h"
#include "util/error.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* ---- message trees (message_util.c) ---- */

/* Releases a message tree built by the builders: every string and
 * sub-message heap allocated with malloc, strings left at their default
 * point at protobuf-c's static empty string (which the walker skips). */
void kuberuntime__message_free(ProtobufCMessage *m);

/* Appends a copy of s (NULL -> "") to a repeated string field. */
void kuberuntime__strv_push(size_t *n, char ***arr, const char *s);

/* Sets key -> value in a map field (a repeated XxxEntry message whose
 * descriptor is `entry`): an existing key gets the new value, as a Go map
 * assignment would. */
void kuberuntime__map_set(const ProtobufCMessageDescriptor *entry, size_t *n, void ***arr,
                          const char *key, const char *value);
#define KR_MAP_SET(msg, field, entry_desc, k, v)                                                   \
        kuberuntime__map_set(&(entry_desc), &(msg)->n_##field, (void ***)&(msg)->field, (k), (v))

/* A new Int64Value. */
Runtime__V1__Int64Value *kuberuntime__int64_value(int64_t v);

/* A new SecurityProfile of the given type (localhost_ref may be NULL). */
Runtime__V1__SecurityProfile *
kuberuntime__security_profile(Runtime__V1__SecurityProfile__ProfileType type,
                              const char *localhost_ref);

/* The pod's raw JSON (borrowed, may be NULL): spec.<key>, and the raw
 * container object of the app or init container named `name`. */
json_t *kuberuntime__raw_spec(const struct pod *pod, const char *key);
json_t *kuberuntime__raw_container(const struct pod *pod, const char *name);

/* "name_namespace(uid)", upstream's format.Pod. New string. */
char *kuberuntime__format_pod(const struct pod *pod);

/* ---- labels.c ---- */
void kuberuntime__sandbox_labels(const struct pod *pod, Runtime__V1__PodSandboxConfig *cfg);
void kuberuntime__container_labels(const struct pod *pod, const struct container *c,
                                   int32_t restart_count, Runtime__V1__ContainerConfig *cfg);
/* JSON of a lifecycle handler / of container ports, as Go's json.Marshal of
 * v1.LifecycleHandler / []v1.ContainerPort writes them. New strings. */
char *kuberuntime__handler_json(const struct handler *h);
char *kuberuntime__ports_json(const struct container_port *ports, size_t n);

/* ---- namespaces and node facts (node_info.c) ---- */

/* NamespaceOption for the pod (upstream NamespacesForPod). New message. */
Runtime__V1__NamespaceOption *kuberuntime__namespace_options(const struct pod *pod);

/* MemTotal of /proc/meminfo in bytes (read once, cached; 0 if unknown). */
int64_t kuberuntime__node_memory_capacity(void);
/* Online CPUs in millicores (cached). */
int64_t kuberuntime__node_cpu_capacity_milli(void);
/* Whether /sys/fs/cgroup is the cgroup v2 unified hierarchy (cached). */
bool kuberuntime__cgroup2_unified(void);
/* upstream securitycontext's default masked paths (with the per-CPU
 * thermal_throttle entries that exist on this node) and readonly paths.
 * Borrowed, NULL-terminated, computed once. */
const char *const *kuberuntime__default_masked_paths(void);
const char *const *kuberuntime__default_readonly_paths(void);

/* ---- linux resources (resources.c) ---- */

/* upstream cm.QuotaPeriod (the CFS arithmetic is src/cm's). */
#define KR_QUOTA_PERIOD 100000

/* upstream calculateLinuxResources. has_cpu_request false = no request. */
/* The user namespace of the pod's sandbox and containers (upstream
 * GetOrCreateUserNamespaceMappings, UserNamespacesSupport on as upstream's
 * default): the node's (mode NODE) unless spec.hostUsers is false; then,
 * when the pod's runtime handler supports user namespaces, mode POD with the
 * pod's range (opts->userns_mappings), else upstream's error. */
int kuberuntime__userns_options(const struct kuberuntime_options *opts, const struct pod *pod,
                                Runtime__V1__UserNamespace **out, ck_error_t *err);
/* A CRI SELinuxOption of a seLinuxOptions object (NULL when o is not an
 * object). */
Runtime__V1__SELinuxOption *kuberuntime__selinux_option(const json_t *o);
/* A container that limits huge pages: a limit for every page size of the
 * machine, 0 but for the sizes it asks for (upstream
 * GetHugepageLimitsFromResources).  Nothing for the others. */
void kuberuntime__hugepage_limits(Runtime__V1__LinuxContainerResources *r,
                                  const struct resource_list *limits);
Runtime__V1__LinuxContainerResources *kuberuntime__linux_resources(bool has_cpu_request,
                                                                   int64_t cpu_request_milli,
                                                                   int64_t cpu_limit_milli,
                                                                   int64_t memory_limit);

/* The sandbox's resources (upstream calculateSandboxResources): the pod's
 * aggregated requests/limits, init containers and sidecars included. */
Runtime__V1__LinuxContainerResources *kuberuntime__sandbox_resources(const struct pod *pod);

/* ---- container parts ---- */

/* The container's environment (upstream makeEnvironmentVariables): envFrom,
 * then env in order; a later name replaces an earlier value in place.
 * kube (NULL: standalone) reads configMaps and secrets; volume_paths (the
 * host path of each pod volume by name, may be NULL) the env files of
 * fileKeyRef.  Fills *env (caller releases with kv_list_release). */
int kuberuntime__container_env(const struct kuberuntime_options *opts, const struct pod *pod,
                               const struct container *c, const char *pod_ip,
                               const struct kube_objects *kube, const struct kv_list *volume_paths,
                               struct kv_list *env, ck_error_t *err);

/* The container's mounts (upstream makeMounts + the termination message
 * file).  Appends to cfg->mounts. */
int kuberuntime__container_mounts(const struct kuberuntime_options *opts, const struct pod *pod,
                                  const struct container *c, const char *pod_ip,
                                  const struct kv_list *env, const struct kv_list *volume_paths,
                                  Runtime__V1__ContainerConfig *cfg, ck_error_t *err);

/* The container's LinuxContainerSecurityContext (upstream
 * determineEffectiveSecurityContext).  < 0 on an invalid profile. */
int kuberuntime__container_security_context(const struct kuberuntime_options *opts,
                                            const struct pod *pod, const struct container *c,
                                            Runtime__V1__LinuxContainerSecurityContext **out,
                                            ck_error_t *err);

/* upstream verifyRunAsNonRoot, for what is known without the image: a
 * runAsNonRoot container whose runAsUser is 0 is refused. */
int kuberuntime__verify_run_as_non_root(const struct pod *pod, const struct container *c,
                                        ck_error_t *err);

/* The seccomp profile for a container (name) or, with name NULL, for the
 * pod level only; from spec.securityContext.seccompProfile fields in the
 * raw pod.  `fallback` is the profile type when nothing is set. */
int kuberuntime__seccomp_profile(const struct kuberuntime_options *opts, const struct pod *pod,
                                 const char *container_name,
                                 Runtime__V1__SecurityProfile__ProfileType fallback,
                                 Runtime__V1__SecurityProfile **out, ck_error_t *err);

#endif
