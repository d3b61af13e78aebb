/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CRI calls behind the Summary API and /metrics/resource:
 * ListContainerStats, ListPodSandboxStats (RuntimeService) and ImageFsInfo
 * (ImageService).
 *
 * As the upstream client (k8s.io/cri-client remote_runtime.go,
 * remote_image.go): each call has the client's timeout and the response is
 * handed back as the runtime sent it (no field is required).
 */
#include "cri/cri.h"
#include "cri/cri_internal.h"

static const char runtime_service[] = "RuntimeService";
static const char image_service[] = "ImageService";

int cri_list_container_stats(struct cri_client *c, const Runtime__V1__ContainerStatsFilter *filter,
                             Runtime__V1__ListContainerStatsResponse **out, ck_error_t *err)
{
        Runtime__V1__ListContainerStatsRequest req =
            RUNTIME__V1__LIST_CONTAINER_STATS_REQUEST__INIT;
        req.filter = (Runtime__V1__ContainerStatsFilter *)filter;
        return CALL(c, runtime_service, "ListContainerStats", req, list_container_stats_response, 0,
                    out, err);
}

int cri_list_pod_sandbox_stats(struct cri_client *c,
                               const Runtime__V1__PodSandboxStatsFilter *filter,
                               Runtime__V1__ListPodSandboxStatsResponse **out, ck_error_t *err)
{
        Runtime__V1__ListPodSandboxStatsRequest req =
            RUNTIME__V1__LIST_POD_SANDBOX_STATS_REQUEST__INIT;
        req.filter = (Runtime__V1__PodSandboxStatsFilter *)filter;
        return CALL(c, runtime_service, "ListPodSandboxStats", req, list_pod_sandbox_stats_response,
                    0, out, err);
}

int cri_image_fs_info(struct cri_client *c, Runtime__V1__ImageFsInfoResponse **out, ck_error_t *err)
{
        Runtime__V1__ImageFsInfoRequest req = RUNTIME__V1__IMAGE_FS_INFO_REQUEST__INIT;
        return CALL(c, image_service, "ImageFsInfo", req, image_fs_info_response, 0, out, err);
}
