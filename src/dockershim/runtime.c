/* SPDX-License-Identifier: Apache-2.0 */
/* Version, Status, RuntimeConfig, UpdateRuntimeConfig
 * (dockershim_internal.h). */
#include "cri.pb-c.h"
#include "dockershim/dockershim_internal.h"
#include "grpc/grpc.h"
#include "util/cleanup.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <string.h>

/* The version of the CRI API the shim speaks, as cri-dockerd reports it. */
#define SHIM_RUNTIME_API_VERSION "v1"

int dockershim_version(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                       uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        (void)req;
        (void)len;
        (void)timeout_ms;
        struct dockershim *s = ctx;
        struct docker_version v = {0};
        if (docker_version(s->docker, &v, err) < 0)
                return dockershim_fail(err);
        Runtime__V1__VersionResponse r = RUNTIME__V1__VERSION_RESPONSE__INIT;
        r.version = (char *)"0.1.0"; /* the kubelet's CRI client version it was asked for */
        r.runtime_name = (char *)"docker";
        r.runtime_version = v.version;
        r.runtime_api_version = (char *)SHIM_RUNTIME_API_VERSION;
        dockershim_pack(&r.base, resp, resp_len);
        docker_version_clear(&v);
        return 0;
}

int dockershim_status(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms, uint8_t **resp,
                      size_t *resp_len, ck_error_t *err)
{
        (void)req;
        (void)len;
        (void)timeout_ms;
        (void)err;
        struct dockershim *s = ctx;
        Runtime__V1__RuntimeCondition runtime = RUNTIME__V1__RUNTIME_CONDITION__INIT;
        Runtime__V1__RuntimeCondition network = RUNTIME__V1__RUNTIME_CONDITION__INIT;
        runtime.type = (char *)"RuntimeReady";
        network.type = (char *)"NetworkReady";
        cleanup_free char *runtime_msg = NULL;
        struct docker_version v = {0};
        ck_error_t derr = NULL;
        if (docker_version(s->docker, &v, &derr) < 0) {
                runtime.reason = (char *)"DockerDaemonNotReady";
                runtime_msg =
                    xasprintf("docker: failed to get docker version: %s", ck_error_msg(derr));
                runtime.message = runtime_msg;
                ck_error_release(&derr);
        } else {
                runtime.status = true;
        }
        docker_version_clear(&v);
        /* the network: a usable CNI configuration */
        cleanup_free char *network_msg = NULL;
        struct shim_cni *cni = NULL;
        if (shim_cni_load(s->cni_conf_dir, s->cni_bin_dirs, &cni, &derr) < 0) {
                network.reason = (char *)"NetworkPluginNotReady";
                network_msg = xasprintf("docker: network plugin is not ready: cni config "
                                        "uninitialized: %s",
                                        ck_error_msg(derr));
                network.message = network_msg;
                ck_error_release(&derr);
        } else {
                network.status = true;
        }
        shim_cni_free(cni);
        Runtime__V1__RuntimeCondition *conds[] = {&runtime, &network};
        Runtime__V1__RuntimeStatus st = RUNTIME__V1__RUNTIME_STATUS__INIT;
        st.n_conditions = 2;
        st.conditions = conds;
        Runtime__V1__StatusResponse r = RUNTIME__V1__STATUS_RESPONSE__INIT;
        r.status = &st;
        dockershim_pack(&r.base, resp, resp_len);
        return 0;
}

int dockershim_runtime_config(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                              uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        (void)req;
        (void)len;
        (void)timeout_ms;
        struct dockershim *s = ctx;
        Runtime__V1__LinuxRuntimeConfiguration linux =
            RUNTIME__V1__LINUX_RUNTIME_CONFIGURATION__INIT;
        if (strcmp(s->cgroup_driver, "systemd") == 0)
                linux.cgroup_driver = RUNTIME__V1__CGROUP_DRIVER__SYSTEMD;
        else if (strcmp(s->cgroup_driver, "cgroupfs") == 0)
                linux.cgroup_driver = RUNTIME__V1__CGROUP_DRIVER__CGROUPFS;
        else
                return ck_error_make_code(err, GRPC_UNKNOWN,
                                          "docker reports the cgroup driver \"%s\", neither "
                                          "cgroupfs nor systemd",
                                          s->cgroup_driver);
        Runtime__V1__RuntimeConfigResponse r = RUNTIME__V1__RUNTIME_CONFIG_RESPONSE__INIT;
        r.linux = &linux;
        dockershim_pack(&r.base, resp, resp_len);
        return 0;
}

/* The kubelet's pod CIDR of the node, accepted and logged as cri-dockerd
 * logs it.  cri-dockerd also keeps the first CIDR for the CNI plugins
 * that ask for the ipRanges capability; the shim gives its plugins the
 * portMappings capability only (cni.c), so the CIDR is not used: the
 * network configuration names the pods' addresses. */
int dockershim_update_runtime_config(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                                     uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        (void)ctx;
        (void)timeout_ms;
        Runtime__V1__UpdateRuntimeConfigRequest *in =
            runtime__v1__update_runtime_config_request__unpack(NULL, len, req);
        if (in == NULL)
                return ck_error_make_code(err, GRPC_INVALID_ARGUMENT,
                                          "UpdateRuntimeConfig: the request does not decode");
        const Runtime__V1__RuntimeConfig *c = in->runtime_config;
        if (c != NULL) {
                const char *cidr = c->network_config && c->network_config->pod_cidr
                                       ? c->network_config->pod_cidr
                                       : "";
                LOG_INFO(2, "Docker cri received runtime config", "podCIDR=\"%s\"", cidr);
        }
        runtime__v1__update_runtime_config_request__free_unpacked(in, NULL);
        Runtime__V1__UpdateRuntimeConfigResponse r =
            RUNTIME__V1__UPDATE_RUNTIME_CONFIG_RESPONSE__INIT;
        dockershim_pack(&r.base, resp, resp_len);
        return 0;
}
