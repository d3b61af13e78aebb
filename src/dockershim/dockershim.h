/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ckubelet-dockershim: the CRI runtime.v1 services served over Docker
 * Engine, as upstream's dockershim (pkg/kubelet/dockershim, removed in
 * 1.24) and its successor cri-dockerd did: the kubelet (or crictl) calls
 * the shim over gRPC on a unix socket, the shim turns each call into
 * Docker Engine API calls (src/libdocker).
 *
 * What is served so far: Version, Status, RuntimeConfig and the image
 * service (ListImages, ImageStatus, PullImage, RemoveImage, ImageFsInfo).
 * Every other method answers UNIMPLEMENTED (docs/dockershim.md).
 */
#ifndef CK_DOCKERSHIM_DOCKERSHIM_H
#define CK_DOCKERSHIM_DOCKERSHIM_H

#include "util/error.h"

#include <stdint.h>

struct dockershim_options {
        const char *docker_endpoint; /* unix:///var/run/docker.sock */
        const char *listen;          /* unix:///run/ckubelet-dockershim.sock */
        const char *pod_infra_image; /* the sandbox image: pinned, never removed by GC */
        int64_t request_timeout_ms;  /* each Docker call's deadline (not pulls) */
};

struct dockershim;

/* Connects to the engine (its API version checked), then serves on the
 * socket (a stale socket file is removed first). */
int dockershim_start(const struct dockershim_options *o, struct dockershim **out,
                     ck_error_t *err);
/* Stops serving (calls in progress finish first), closes the engine. */
void dockershim_stop(struct dockershim *s);

#endif
