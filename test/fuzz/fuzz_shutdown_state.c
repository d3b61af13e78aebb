/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzzes the node shutdown manager's state file reader
 * (nodeshutdown/periods.c): the file may be anything a crash, a disk or
 * another kubelet left.  Checks: no crash, a refusal leaves both times
 * unset, and what a read accepts, written again, reads again the same.
 */
#include "nodeshutdown/nodeshutdown.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        int64_t start = -1, end = -1;
        if (nodeshutdown_state_parse((const char *)data, size, &start, &end) < 0) {
                if (start != 0 || end != 0)
                        abort();
                return 0;
        }
        char *again = nodeshutdown_state_format(start, end);
        int64_t s2 = -1, e2 = -1;
        if (again == NULL || nodeshutdown_state_parse(again, strlen(again), &s2, &e2) < 0 ||
            s2 != start || e2 != end)
                abort();
        free(again);
        return 0;
}
