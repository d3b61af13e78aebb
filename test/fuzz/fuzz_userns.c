/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzzes the reader of a pod's user namespace file (userns/userns.c): the
 * file may be anything a crash, a disk or another kubelet left.  Checks: no
 * crash, and what a read accepts, written again, reads again the same.
 */
#include "userns/userns.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        uint32_t host = 0, len = 0;
        ck_error_t err = NULL;
        if (userns_parse_mappings((const char *)data, size, &host, &len, &err) < 0) {
                ck_error_release(&err);
                return 0;
        }
        char *again = userns_format_mappings(host, len);
        uint32_t h2 = 0, l2 = 0;
        if (userns_parse_mappings(again, strlen(again), &h2, &l2, &err) < 0 || h2 != host ||
            l2 != len)
                abort();
        free(again);
        return 0;
}
