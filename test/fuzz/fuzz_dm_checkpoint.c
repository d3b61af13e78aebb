/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzzes the device manager's checkpoint reader (devicemanager/
 * checkpoint.c): the file may be anything a crash, a disk or another
 * kubelet left.  Checks: no crash, an error says why, and what a read
 * accepts, written again, reads again to the same allocations.
 */
#include "devicemanager/devicemanager_internal.h"

#include <stdlib.h>
#include <string.h>

static void release(struct dm_alloc *a, size_t n, char **reg, size_t n_reg)
{
        for (size_t i = 0; i < n; i++)
                dm_alloc_clear(&a[i]);
        free(a);
        for (size_t i = 0; i < n_reg; i++)
                free(reg[i]);
        free(reg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *text = malloc(size + 1);
        if (text == NULL)
                abort();
        memcpy(text, data, size);
        text[size] = '\0';
        struct dm_alloc *a = NULL;
        size_t n = 0, n_reg = 0;
        char **reg = NULL;
        ck_error_t err = NULL;
        if (dm_checkpoint_parse(text, &a, &n, &reg, &n_reg, &err) < 0) {
                if (err == NULL || ck_error_msg(err)[0] == '\0')
                        abort();
                ck_error_release(&err);
                free(text);
                return 0;
        }
        /* written again (as registered resources with no device), read again */
        struct dm_resource *res = calloc(n_reg + 1, sizeof(*res));
        for (size_t i = 0; i < n_reg; i++)
                res[i] = (struct dm_resource){.name = reg[i], .has_healthy = true};
        json_t *doc = dm_checkpoint_build(a, n, res, n_reg);
        char *again = json_dumps(doc, JSON_COMPACT);
        json_decref(doc);
        struct dm_alloc *b = NULL;
        size_t nb = 0, nb_reg = 0;
        char **breg = NULL;
        if (again == NULL || dm_checkpoint_parse(again, &b, &nb, &breg, &nb_reg, &err) < 0)
                abort();
        if (nb != n || nb_reg != n_reg)
                abort();
        for (size_t i = 0; i < n; i++)
                if (strcmp(a[i].pod_uid, b[i].pod_uid) != 0 || a[i].resp_len != b[i].resp_len ||
                    (a[i].resp_len && memcmp(a[i].resp, b[i].resp, a[i].resp_len) != 0))
                        abort();
        free(again);
        free(res);
        release(b, nb, breg, nb_reg);
        release(a, n, reg, n_reg);
        free(text);
        return 0;
}
