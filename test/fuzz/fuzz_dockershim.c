/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzzes what the dockershim makes of its callers' input (src/dockershim):
 * each CRI method's request as it arrives from the gRPC server, with an
 * engine that is away (every engine call fails at once), and the pure
 * parsers behind them: a container name (and the engine's name-conflict
 * message, the same bytes), a sandbox checkpoint file, a pod's
 * /proc/<pid>/net/dev.  The input is
 *
 *   <selector byte> <bytes>
 *
 * selector % (methods + 3): a method by its index in the server's table
 * (dockershim_methods), then the name, the checkpoint, the net/dev text.
 * The seed corpus names them by those numbers: re-point it when the
 * table changes.
 *
 * Checks, beyond memory safety: a method either answers (a message) or
 * fails with a gRPC status (1..16) and a message; a name that parses
 * makes the same name again; a conflict's container ID is a non-empty run
 * of [0-9a-z] taken from the message; a checkpoint that decodes encodes to a file
 * that decodes to the same data; each interface parsed has a name (no
 * blank, no ':', not lo), one per line at most.
 */
#include "dockershim/dockershim_internal.h"
#include "grpc/grpc.h"
#include "grpc/grpc_server.h"
#include "util/xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* the server's table: each CRI method behind its dispatcher */
static struct grpc_method *methods;
static size_t n_methods;

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
        methods = dockershim_methods(shim, &n_methods);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 1)
                return 0;
        if (shim == NULL)
                make_shim();
        unsigned sel = data[0] % (n_methods + 3);
        const uint8_t *in = data + 1;
        size_t len = size - 1;
        ck_error_t err = NULL;
        if (sel < n_methods) {
                uint8_t *resp = NULL;
                size_t resp_len = 0;
                int rc = methods[sel].fn(methods[sel].ctx, in, len, 100, &resp, &resp_len, &err);
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
        if (sel == n_methods) {
                /* the same text as the engine's name-conflict message */
                char *holder = shim_conflicting_id(text);
                if (holder && (holder[0] == '\0' ||
                               holder[strspn(holder, "0123456789abcdefghijklmnopqrstuvwxyz")] ||
                               strstr(text, holder) == NULL))
                        abort();
                free(holder);
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
        } else if (sel == n_methods + 1) {
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
        } else {
                struct shim_netdev *v = NULL;
                size_t n = 0;
                shim_parse_net_dev(text, &v, &n);
                size_t lines = 1;
                for (const char *p = text; *p; p++)
                        lines += *p == '\n';
                if (n > lines)
                        abort();
                for (size_t i = 0; i < n; i++)
                        if (v[i].name[0] == '\0' || strpbrk(v[i].name, " \t:\n") != NULL ||
                            strcmp(v[i].name, "lo") == 0)
                                abort();
                shim_netdevs_free(v, n);
        }
        free(text);
        return 0;
}
