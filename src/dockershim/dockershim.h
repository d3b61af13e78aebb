/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ckubelet-dockershim: the CRI runtime.v1 services served over Docker
 * Engine, as upstream's dockershim (pkg/kubelet/dockershim, removed in
 * 1.24) and its successor cri-dockerd did: the kubelet (or crictl) calls
 * the shim over gRPC on a unix socket, the shim turns each call into
 * Docker Engine API calls (src/libdocker).
 *
 * What is served so far: Version, Status, RuntimeConfig,
 * UpdateRuntimeConfig (accepted, the pod CIDR logged), the image service,
 * pod sandboxes (with CNI), containers, ExecSync, and Exec, Attach and
 * PortForward through the shim's streaming server (src/streaming); the
 * stats of containers and of pod sandboxes (a pod's CPU, memory and
 * processes the sums of its containers' and its pause container's, its
 * network the pause process's /proc/<pid>/net/dev); ReopenContainerLog
 * answers cri-dockerd's error (UNKNOWN: the engine rotates its own log).
 * Every other method answers UNIMPLEMENTED (docs/dockershim.md).
 */
#ifndef CK_DOCKERSHIM_DOCKERSHIM_H
#define CK_DOCKERSHIM_DOCKERSHIM_H

#include "util/error.h"

#include <stdbool.h>
#include <stdint.h>

struct dockershim_options {
        const char *docker_endpoint;       /* unix:///var/run/docker.sock */
        const char *listen;                /* unix:///run/ckubelet-dockershim.sock */
        const char *pod_infra_image;       /* the sandbox image: pinned, never removed by GC */
        int64_t request_timeout_ms;        /* each Docker call's deadline (not pulls) */
        const char *root_dir;              /* sandbox checkpoints, CNI results */
        const char *cni_conf_dir;          /* /etc/cni/net.d */
        const char *cni_bin_dirs;          /* /opt/cni/bin (',' or ':' separated) */
        bool restrict_oom_score_adj;       /* no container below the shim's own OOM score
                                            * adjustment (containerd's restrict_oom_score_adj) */
        const char *streaming_bind_addr;   /* the streaming server's "host[:port]";
                                            * NULL: 127.0.0.1, an ephemeral port */
        int64_t streaming_idle_timeout_ms; /* a stream session's idle timeout; 0: 4 h */
};

struct dockershim;

/* Connects to the engine (its API version checked), then serves on the
 * socket (a stale socket file is removed first). */
int dockershim_start(const struct dockershim_options *o, struct dockershim **out, ck_error_t *err);
/* Stops serving (calls in progress finish first), closes the engine. */
void dockershim_stop(struct dockershim *s);

#endif
