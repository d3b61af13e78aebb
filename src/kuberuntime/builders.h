/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pure functions that turn a pod spec into CRI messages, with the upstream
 * kubelet's labels and annotations (pkg/kubelet/kuberuntime/labels.go,
 * kuberuntime_sandbox.go, kuberuntime_container.go, pkg/kubelet/network/dns).
 *
 * Built messages are heap trees owned by the caller: release with the
 * matching *_free() below (never protobuf-c's free_unpacked, which is for
 * unpacked messages).  No I/O except reading the host resolv.conf.
 */
#ifndef CK_KUBERUNTIME_BUILDERS_H
#define CK_KUBERUNTIME_BUILDERS_H

#include "api/pod.h"
#include "cri.pb-c.h"
#include "kuberuntime/runtime.h"
#include "util/error.h"

/* Label and annotation keys, as upstream. */
#define LABEL_POD_NAME "io.kubernetes.pod.name"
#define LABEL_POD_NAMESPACE "io.kubernetes.pod.namespace"
#define LABEL_POD_UID "io.kubernetes.pod.uid"
#define LABEL_CONTAINER_NAME "io.kubernetes.container.name"
#define LABEL_CONTAINER_TYPE "io.kubernetes.container.type" /* unused upstream today */
#define ANNOTATION_CONTAINER_HASH "io.kubernetes.container.hash"
#define ANNOTATION_CONTAINER_RESTART_COUNT "io.kubernetes.container.restartCount"
#define ANNOTATION_TERMINATION_MESSAGE_PATH "io.kubernetes.container.terminationMessagePath"
#define ANNOTATION_TERMINATION_MESSAGE_POLICY "io.kubernetes.container.terminationMessagePolicy"
#define ANNOTATION_PRESTOP_HANDLER "io.kubernetes.container.preStopHandler"
#define ANNOTATION_CONTAINER_PORTS "io.kubernetes.container.ports"
#define ANNOTATION_POD_DELETION_GRACE "io.kubernetes.pod.deletionGracePeriod"
#define ANNOTATION_POD_TERMINATION_GRACE "io.kubernetes.pod.terminationGracePeriod"

/* The pod's DNS settings for the sandbox (upstream dns.go GetPodDNS):
 * policy ClusterFirst with --cluster-dns -> cluster nameservers, searches
 * <ns>.svc.<domain> svc.<domain> <domain> + host searches, options ndots:5;
 * ClusterFirst without cluster DNS, or Default -> the host's resolv.conf;
 * hostNetwork + ClusterFirst -> Default; None -> only dnsConfig; dnsConfig
 * merged last (dedup, limits 3 nameservers / 32 searches). */
int kuberuntime_pod_dns_config(const struct kuberuntime_options *opts, const struct pod *pod,
                               Runtime__V1__DNSConfig **out, ck_error_t *err);

/* The sandbox config for attempt `attempt`: metadata, hostname (pod
 * hostname or name, truncated to 63 as upstream; hostNetwork -> node
 * hostname), log directory /var/log/pods/<ns>_<name>_<uid>, DNS, port
 * mappings (container ports with hostPort), labels/annotations, linux:
 * cgroup parent, namespace options (NODE for host*, POD otherwise,
 * CONTAINER pid unless shareProcessNamespace), sysctls, run_as_user/group,
 * supplemental groups, seccomp unconfined. */
int kuberuntime_sandbox_config(const struct kuberuntime_options *opts, const struct pod *pod,
                               uint32_t attempt, const char *cgroup_parent,
                               Runtime__V1__PodSandboxConfig **out, ck_error_t *err);
void kuberuntime_sandbox_config_free(Runtime__V1__PodSandboxConfig *cfg);

/* The container config (generateContainerConfig): image, command/args with
 * $(VAR) expansion, working dir, env (values, fieldRef for metadata.name,
 * metadata.namespace, metadata.uid, spec.nodeName, spec.serviceAccountName,
 * status.podIP, status.hostIP, metadata.labels['k'], metadata.annotations['k'];
 * resourceFieldRef), mounts (volume host paths from `volume_paths`, subPath
 * under it, the pod's /etc/hosts unless hostNetwork, the termination
 * message file <root>/pods/<uid>/containers/<name>/<random id>),
 * log path <name>/<restart_count>.log relative to the sandbox log dir,
 * LinuxContainerResources from requests/limits (cpu shares/quota/period,
 * memory limit, oom_score_adj by QoS as upstream), security context.
 * pod_ip may be NULL. A config error (e.g. a missing volume) is < 0. */
int kuberuntime_container_config(const struct kuberuntime_options *opts, const struct pod *pod,
                                 const struct container *c, int32_t restart_count,
                                 const char *pod_ip, const struct kv_list *volume_paths,
                                 Runtime__V1__ContainerConfig **out, ck_error_t *err);
/* The same, with the configMaps and secrets that env / envFrom refer to
 * read through kube (NULL: standalone, such a reference is an error). */
int kuberuntime_container_config_with_objects(const struct kuberuntime_options *opts,
                                              const struct pod *pod, const struct container *c,
                                              int32_t restart_count, const char *pod_ip,
                                              const struct kv_list *volume_paths,
                                              const struct kube_objects *kube,
                                              Runtime__V1__ContainerConfig **out, ck_error_t *err);
void kuberuntime_container_config_free(Runtime__V1__ContainerConfig *cfg);

/* Without a runAsUser, runAsNonRoot is checked against the image's user
 * (upstream getImageUser + verifyRunAsNonRoot): whether this container
 * needs it, and the check with the image's ImageStatus (NULL: not known,
 * taken as root, as upstream). */
bool kuberuntime_needs_image_user(const struct pod *pod, const struct container *c);
int kuberuntime_verify_image_user(const struct pod *pod, const struct container *c,
                                  const Runtime__V1__Image *image, ck_error_t *err);

/* upstream's oom_score_adj policy (pkg/kubelet/qos/policy.go). */
int64_t kuberuntime_oom_score_adj(const struct pod *pod, const struct container *c,
                                  int64_t node_memory_capacity);

/* Container and sandbox labels/annotations read back from the runtime. */
uint64_t kuberuntime_label_hash(const char *value); /* hex string -> value, 0 if bad */
int32_t kuberuntime_label_restart_count(const char *value);

#endif
