/* SPDX-License-Identifier: Apache-2.0 */
/* What a pod from the apiserver costs ckubelet's heap once decoded: the
 * pod as a jansson tree, the same without metadata.managedFields, and the
 * decoded struct pod that the apiserver source and the status store keep
 * for each pod (its raw tree included).  Heap in use (mallinfo2) before
 * and after N copies, divided by N.
 *
 * A measurement, not part of `make test` (bench/README.md):
 *   make build/bench/pod_memory && build/bench/pod_memory bench/pod_memory.json
 * bench/pod_memory.json is a pod of bench/cluster as the apiserver serves
 * it (managedFields of kubectl and of the node's status writes, the
 * service account's projected volume, a running status). */
#include "api/decode.h"
#include "api/pod.h"
#include "util/cleanup.h"

#include <jansson.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 200

static size_t heap_in_use(void)
{
        struct mallinfo2 m = mallinfo2();
        return m.uordblks + m.hblkhd;
}

/* Heap bytes per copy of obj held at once. */
static size_t tree_bytes(const json_t *obj)
{
        json_t *copies[N];
        size_t before = heap_in_use();
        for (size_t i = 0; i < N; i++)
                copies[i] = json_deep_copy(obj);
        size_t after = heap_in_use();
        for (size_t i = 0; i < N; i++)
                json_decref(copies[i]);
        return (after - before) / N;
}

int main(int argc, char **argv)
{
        if (argc != 2) {
                fprintf(stderr, "usage: %s POD.json\n", argv[0]);
                return 2;
        }
        json_error_t je;
        cleanup_json json_t *obj = json_load_file(argv[1], 0, &je);
        if (obj == NULL) {
                fprintf(stderr, "%s: %s (line %d)\n", argv[1], je.text, je.line);
                return 1;
        }
        cleanup_json json_t *slim = json_deep_copy(obj);
        json_object_del(json_object_get(slim, "metadata"), "managedFields");

        struct pod *pods[N];
        size_t before = heap_in_use();
        for (size_t i = 0; i < N; i++) {
                cleanup_error ck_error_t err = NULL;
                if (api_pod_decode(obj, &pods[i], &err) < 0) {
                        fprintf(stderr, "%s: %s\n", argv[1], ck_error_msg(err));
                        return 1;
                }
        }
        size_t decoded = (heap_in_use() - before) / N;
        for (size_t i = 0; i < N; i++)
                pod_unref(pods[i]);

        char *text = json_dumps(obj, JSON_COMPACT);
        printf("pod JSON (compact):                      %zu bytes\n", text ? strlen(text) : 0);
        free(text);
        printf("as a jansson tree:                       %zu bytes\n", tree_bytes(obj));
        printf("as a jansson tree without managedFields: %zu bytes\n", tree_bytes(slim));
        printf("decoded struct pod, raw tree included:   %zu bytes\n", decoded);
        return 0;
}
