/* SPDX-License-Identifier: Apache-2.0 */
/* Downward API values (see downward.h). */
#include "volume/downward.h"

#include "api/decode.h"
#include "stats/stats.h"
#include "util/cleanup.h"
#include "util/strquote.h"
#include "util/xalloc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

static int cmp_kv_key(const void *a, const void *b)
{
        return strcmp((*(const struct kv *const *)a)->key, (*(const struct kv *const *)b)->key);
}

char *volume_format_map(const struct kv_list *l)
{
        const struct kv **sorted = xcalloc(l->n + 1, sizeof(*sorted));
        for (size_t i = 0; i < l->n; i++)
                sorted[i] = &l->items[i];
        qsort(sorted, l->n, sizeof(*sorted), cmp_kv_key);
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);
        if (f == NULL)
                abort(); /* out of memory: as xmalloc */
        for (size_t i = 0; i < l->n; i++) {
                const char *v = sorted[i]->value ? sorted[i]->value : "";
                cleanup_free char *quoted = str_go_quote(v, strlen(v));
                fprintf(f, "%s%s=%s", i ? "\n" : "", sorted[i]->key, quoted);
        }
        if (fclose(f) != 0)
                abort();
        free(sorted);
        return out;
}

int volume_pod_field_value(const struct pod *pod, const char *fp, char **out, ck_error_t *err)
{
        const char *v = NULL;
        cleanup_free char *path = NULL;
        cleanup_free char *sub = NULL;
        if (pod_split_field_path(fp, &path, &sub)) {
                if (strcmp(path, "metadata.annotations") == 0)
                        v = kv_list_get(&pod->annotations, sub);
                else if (strcmp(path, "metadata.labels") == 0)
                        v = kv_list_get(&pod->labels, sub);
                else
                        return ck_error_make(err, 0, "fieldPath \"%s\" does not support subscript",
                                             fp);
                *out = xstrdup(v ? v : "");
                return 0;
        }
        if (strcmp(fp, "metadata.annotations") == 0) {
                *out = volume_format_map(&pod->annotations);
                return 0;
        }
        if (strcmp(fp, "metadata.labels") == 0) {
                *out = volume_format_map(&pod->labels);
                return 0;
        }
        if (strcmp(fp, "metadata.name") == 0)
                v = pod->name;
        else if (strcmp(fp, "metadata.namespace") == 0)
                v = pod->namespace;
        else if (strcmp(fp, "metadata.uid") == 0)
                v = pod->uid;
        else
                return ck_error_make(err, 0, "unsupported fieldPath: %s", fp);
        *out = xstrdup(v ? v : "");
        return 0;
}

void volume_node_capacity(const char *root_dir, struct volume_node_resources *out)
{
        const struct stats_machine_info *mi = stats_machine_info(); /* read once */
        out->cpu_milli = mi->num_cores * 1000;
        out->memory = mi->memory_capacity;
        struct stats_fs_info fi;
        cleanup_error ck_error_t err = NULL;
        out->ephemeral_storage =
            stats_fs_info(root_dir ? root_dir : "/", &fi, &err) == 0 ? (int64_t)fi.capacity : 0;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
        if (b <= 0)
                b = 1;
        if (a <= 0)
                return a / b;
        return a / b + (a % b != 0);
}

int volume_container_resource_value(const struct pod *pod, const struct container *self,
                                    const char *container_name, const char *resource,
                                    const char *divisor, const struct volume_node_resources *node,
                                    char **out, ck_error_t *err)
{
        const struct container *c = self;
        if (container_name != NULL && *container_name != '\0')
                c = pod_find_container(pod, container_name);
        if (c == NULL)
                return ck_error_make(err, 0, "container %s not found",
                                     container_name ? container_name : "");
        const char *res = resource ? resource : "";
        bool cpu = false;
        int64_t value;
        const struct resource_list *lim = &c->resources.limits, *req = &c->resources.requests;
        /* MergeContainerResourceLimits: an unset (or zero) limit is the node's */
        if (strcmp(res, "limits.cpu") == 0) {
                cpu = true;
                value = lim->has_cpu && lim->cpu_milli != 0 ? lim->cpu_milli : node->cpu_milli;
        } else if (strcmp(res, "limits.memory") == 0) {
                value = lim->has_memory && lim->memory != 0 ? lim->memory : node->memory;
        } else if (strcmp(res, "limits.ephemeral-storage") == 0) {
                value = lim->has_ephemeral_storage && lim->ephemeral_storage != 0
                            ? lim->ephemeral_storage
                            : node->ephemeral_storage;
        } else if (strcmp(res, "requests.cpu") == 0) {
                cpu = true;
                value = req->has_cpu ? req->cpu_milli : 0;
        } else if (strcmp(res, "requests.memory") == 0) {
                value = req->has_memory ? req->memory : 0;
        } else if (strcmp(res, "requests.ephemeral-storage") == 0) {
                value = req->has_ephemeral_storage ? req->ephemeral_storage : 0;
        } else if (strncmp(res, "requests.", 9) == 0 && resource_hugepage_size(res + 9) > 0) {
                /* huge pages: the container's own amount, never the node's */
                value = resource_list_hugepages(req, res + 9);
        } else if (strncmp(res, "limits.", 7) == 0 && resource_hugepage_size(res + 7) > 0) {
                value = resource_list_hugepages(lim, res + 7);
        } else {
                return ck_error_make(err, 0, "unsupported container resource : %s", res);
        }

        /* a zero or absent divisor means 1 */
        int64_t d = cpu ? 1000 : 1;
        if (divisor != NULL && *divisor != '\0') {
                int64_t parsed;
                if (api_parse_quantity(divisor, cpu, &parsed, err) < 0)
                        return ck_error_wrap(err, "divisor of %s", res);
                if (parsed != 0)
                        d = parsed;
        }
        *out = xasprintf("%" PRId64, ceil_div(value, d));
        return 0;
}
