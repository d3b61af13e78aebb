/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Manifest bytes -> yamljson_parse -> api_pod_decode -> the pod's queries
 * -> pod_unref.  Must never crash, hang or leak, whatever the bytes.
 */
#include "api/decode.h"
#include "api/pod.h"
#include "util/yamljson.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        json_t *obj = NULL;
        ck_error_t err = NULL;
        if (yamljson_parse((const char *)data, size, &obj, &err) < 0) {
                ck_error_release(&err);
                return 0;
        }
        struct pod *pod = NULL;
        if (api_pod_decode(obj, &pod, &err) == 0) {
                (void)pod_full_name(pod);
                (void)qos_class_name(pod_qos_class(pod));
                (void)pod_is_static(pod);
                for (size_t i = 0; i < pod->n_containers; i++)
                        (void)pod_find_container(pod, pod->containers[i].name);
                char *s = json_dumps(pod->raw, JSON_COMPACT);
                free(s);
                pod_unref(pod);
        }
        ck_error_release(&err);
        json_decref(obj);
        return 0;
}
