/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzzes the kubeconfig decoder from memory (YAML, context selection,
 * base64, PEM checks), with the file's current-context and with an
 * override.  Relative paths resolve under a directory that does not exist.
 */
#include "client/kubeconfig.h"
#include "util/log.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        /* An absolute path may name anything: never read a device (stdin
         * blocks), /proc or /sys from here. */
        static const char *const skip[] = {"/dev", "/proc", "/sys"};
        for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
                if (memmem(data, size, skip[i], strlen(skip[i])))
                        return 0;
        log_set_fd(-1);
        static const char *const contexts[] = {NULL, "a"};
        for (size_t i = 0; i < 2; i++) {
                struct rest_config cfg;
                ck_error_t err = NULL;
                int rc =
                    kubeconfig_load_buffer((const char *)data, size, "fuzz",
                                           "/nonexistent-ckubelet-fuzz", contexts[i], &cfg, &err);
                if (rc == 0) {
                        /* what a client may rely on */
                        if (cfg.server == NULL || strncmp(cfg.server, "http", 4) != 0 ||
                            (cfg.cert_pem == NULL) != (cfg.key_pem == NULL) ||
                            (cfg.insecure && cfg.ca_pem))
                                abort();
                        rest_config_clear(&cfg);
                } else if (err == NULL || cfg.server != NULL) {
                        abort();
                }
                ck_error_release(&err);
        }
        return 0;
}
