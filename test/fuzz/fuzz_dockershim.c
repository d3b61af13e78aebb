/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzzes what the dockershim makes of its callers' input (src/dockershim):
 * each CRI method's request as it arrives from the gRPC server, with an
 * engine that is away (every engine call fails at once), and the pure
 * parsers behind them: a container name, a sandbox checkpoint file.  The
 * input is
 *
 *   <selector byte> <bytes>
 *
 * Checks, beyond memory safety: a method either answers (a message) or
 * fails with a gRPC status (1..16) and a message; a name that parses
 * makes the same name again; a checkpoint that decodes encodes to a file
 * that decodes to the same data.
 */
#include "dockershim/dockershim_internal.h"
#include "grpc/grpc.h"
#include "grpc/grpc_server.h"
#include "util/xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const grpc_method_fn methods[] = {
    dockershim_version,
    dockershim_status,
    dockershim_runtime_config,
    dockershim_run_pod_sandbox,
    dockershim_stop_pod_sandbox,
    dockershim_remove_pod_sandbox,
    dockershim_pod_sandbox_status,
    dockershim_list_pod_sandbox,
    dockershim_create_container,
    dockershim_start_container,
    dockershim_stop_container,
    dockershim_remove_container,
    dockershim_container_status,
    dockershim_list_containers,
    dockershim_update_container_resources,
    dockershim_exec_sync,
    dockershim_list_container_stats,
    dockershim_list_images,
    dockershim_image_status,
    dockershim_pull_image,
    dockershim_remove_image,
    dockershim_image_fs_info,
};
#define N_METHODS (sizeof(methods) / sizeof(methods[0]))

static struct dockershim *shim;

static void make_shim(void)
{
        shim = xcalloc(1, sizeof(*shim));
        ck_error_t err = NULL;
        if (docker_client_new("unix:///nonexistent/ckubelet-fuzz/docker.sock", 1000, &shim->docker,
                              &err) < 0)
                abort();
        shim->pod_infra_image = xstrdup("localhost/pause:3.10");
        shim->cgroup_driver = xstrdup("cgroupfs");
        shim->docker_root_dir = xstrdup("/nonexistent/ckubelet-fuzz");
        shim->root_dir = xstrdup("/nonexistent/ckubelet-fuzz");
        shim->cni_conf_dir = xstrdup("/nonexistent/ckubelet-fuzz");
        shim->cni_bin_dirs = xstrdup("/nonexistent/ckubelet-fuzz");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 1)
                return 0;
        if (shim == NULL)
                make_shim();
        unsigned sel = data[0] % (N_METHODS + 2);
        const uint8_t *in = data + 1;
        size_t len = size - 1;
        ck_error_t err = NULL;
        if (sel < N_METHODS) {
                uint8_t *resp = NULL;
                size_t resp_len = 0;
                int rc = methods[sel](shim, in, len, 100, &resp, &resp_len, &err);
                if (rc == 0) {
                        if (err != NULL)
                                abort();
                        free(resp);
                } else {
                        if (err == NULL || err->code < 1 || err->code > GRPC_UNAUTHENTICATED ||
                            ck_error_msg(err)[0] == '\0')
                                abort();
                        ck_error_release(&err);
                }
                return 0;
        }
        char *text = xstrndup((const char *)in, len);
        if (sel == N_METHODS) {
                struct shim_name n;
                if (shim_parse_name(text, &n) == 0) {
                        char *again =
                            shim_container_name(n.container, n.pod, n.ns, n.uid, n.attempt);
                        struct shim_name m;
                        if (shim_parse_name(again, &m) < 0 || strcmp(m.pod, n.pod) != 0 ||
                            strcmp(m.uid, n.uid) != 0 || m.attempt != n.attempt)
                                abort();
                        shim_name_clear(&m);
                        free(again);
                        shim_name_clear(&n);
                }
        } else {
                struct shim_checkpoint c;
                if (shim_checkpoint_decode(text, len, &c, &err) == 0) {
                        char *again = shim_checkpoint_encode(&c);
                        struct shim_checkpoint d;
                        if (again == NULL ||
                            shim_checkpoint_decode(again, strlen(again), &d, &err) < 0 ||
                            shim_checkpoint_checksum(&d) != shim_checkpoint_checksum(&c))
                                abort();
                        shim_checkpoint_clear(&d);
                        free(again);
                        shim_checkpoint_clear(&c);
                } else {
                        ck_error_release(&err);
                }
        }
        free(text);
        return 0;
}
