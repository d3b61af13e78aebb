/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Stats (dockershim_internal.h): each running container's, the engine's
 * one-shot stats (cumulative CPU, memory usage and working set), gathered
 * once by shim_container_stats_collect for ListContainerStats and
 * ContainerStats.
 */
#include "cri.pb-c.h"
#include "dockershim/dockershim_internal.h"
#include "grpc/grpc.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

#include <string.h>

static int bad_request(ck_error_t *err, const char *what)
{
        return ck_error_make_code(err, GRPC_INVALID_ARGUMENT, "%s: the request does not decode",
                                  what);
}

/* Fills c's messages from the engine's list entry v and its stats. */
static void container_stat_fill(struct shim_container_stat *c,
                                const struct docker_container_summary *v)
{
        runtime__v1__container_stats__init(&c->stats);
        runtime__v1__container_attributes__init(&c->attributes);
        runtime__v1__container_metadata__init(&c->metadata);
        runtime__v1__cpu_usage__init(&c->cpu);
        runtime__v1__memory_usage__init(&c->memory);
        runtime__v1__uint64_value__init(&c->cpu_ns);
        runtime__v1__uint64_value__init(&c->mem_usage);
        runtime__v1__uint64_value__init(&c->mem_working_set);
        c->metadata.name = c->name.container;
        c->metadata.attempt = c->name.attempt;
        c->attributes.id = v->id;
        c->attributes.metadata = &c->metadata;
        shim_split_labels(v->labels, &runtime__v1__container_attributes__labels_entry__descriptor,
                          &runtime__v1__container_attributes__annotations_entry__descriptor,
                          &c->labels, &c->annotations);
        c->attributes.n_labels = c->labels.n;
        c->attributes.labels = (Runtime__V1__ContainerAttributes__LabelsEntry **)c->labels.entries;
        c->attributes.n_annotations = c->annotations.n;
        c->attributes.annotations =
            (Runtime__V1__ContainerAttributes__AnnotationsEntry **)c->annotations.entries;
        const struct docker_stats *ds = &c->raw;
        c->cpu.timestamp = ds->read_ns;
        c->cpu_ns.value = ds->cpu_total_ns;
        c->cpu.usage_core_nano_seconds = &c->cpu_ns;
        c->stats.attributes = &c->attributes;
        c->stats.cpu = &c->cpu;
        if (ds->has_memory) {
                c->memory.timestamp = ds->read_ns;
                c->mem_usage.value = ds->mem_usage;
                c->mem_working_set.value = ds->mem_usage > ds->mem_inactive_file
                                               ? ds->mem_usage - ds->mem_inactive_file
                                               : 0;
                c->memory.usage_bytes = &c->mem_usage;
                c->memory.working_set_bytes = &c->mem_working_set;
                c->stats.memory = &c->memory;
        }
}

int shim_container_stats_collect(struct dockershim *s, const char *id, const char *sandbox_id,
                                 void *const *sel, size_t n_sel, struct shim_container_stats *out,
                                 ck_error_t *err)
{
        *out = (struct shim_container_stats){0};
        json_t *filters = shim_container_filters(id, sandbox_id, sel, n_sel);
        /* the running ones: a stopped container has no usage to report */
        int rc = docker_container_list(s->docker, false, filters, &out->list, &out->n_list, err);
        json_decref(filters);
        if (rc < 0)
                return dockershim_fail(err);
        size_t cap = out->n_list ? out->n_list : 1;
        /* (never grown: the messages point into the items) */
        out->items = xcalloc(cap, sizeof(*out->items));
        out->stats = xcalloc(cap, sizeof(*out->stats));
        for (size_t i = 0; i < out->n_list; i++) {
                const struct docker_container_summary *v = &out->list[i];
                struct shim_container_stat *c = &out->items[out->n];
                ck_error_t e = NULL;
                if (v->name == NULL || shim_parse_name(v->name, &c->name) < 0)
                        continue;
                if (docker_container_stats(s->docker, v->id, &c->raw, &e) < 0) {
                        /* gone meanwhile, or the engine failed it: left out */
                        ck_error_release(&e);
                        shim_name_clear(&c->name);
                        continue;
                }
                container_stat_fill(c, v);
                out->stats[out->n++] = &c->stats;
        }
        return 0;
}

void shim_container_stats_clear(struct shim_container_stats *c)
{
        for (size_t i = 0; i < c->n; i++) {
                shim_map_clear(&c->items[i].labels);
                shim_map_clear(&c->items[i].annotations);
                shim_name_clear(&c->items[i].name);
        }
        free(c->items);
        free(c->stats);
        docker_container_summaries_free(c->list, c->n_list);
        *c = (struct shim_container_stats){0};
}

int dockershim_list_container_stats(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                                    uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        (void)timeout_ms;
        struct dockershim *s = ctx;
        Runtime__V1__ListContainerStatsRequest *in =
            runtime__v1__list_container_stats_request__unpack(NULL, len, req);
        if (in == NULL)
                return bad_request(err, "ListContainerStats");
        const Runtime__V1__ContainerStatsFilter *flt = in->filter;
        struct shim_container_stats cs;
        int rc = flt ? shim_container_stats_collect(s, flt->id, flt->pod_sandbox_id,
                                                    (void *const *)flt->label_selector,
                                                    flt->n_label_selector, &cs, err)
                     : shim_container_stats_collect(s, NULL, NULL, NULL, 0, &cs, err);
        runtime__v1__list_container_stats_request__free_unpacked(in, NULL);
        if (rc < 0)
                return -1;
        Runtime__V1__ListContainerStatsResponse r =
            RUNTIME__V1__LIST_CONTAINER_STATS_RESPONSE__INIT;
        r.n_stats = cs.n;
        r.stats = cs.stats;
        dockershim_pack(&r.base, resp, resp_len);
        shim_container_stats_clear(&cs);
        return 0;
}

/* One container's stats: the running containers filtered by its ID (a
 * stopped one has no usage, and answers NotFound). */
int dockershim_container_stats(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                               uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        (void)timeout_ms;
        struct dockershim *s = ctx;
        Runtime__V1__ContainerStatsRequest *in =
            runtime__v1__container_stats_request__unpack(NULL, len, req);
        if (in == NULL)
                return bad_request(err, "ContainerStats");
        cleanup_free char *id = xstrdup(in->container_id ? in->container_id : "");
        runtime__v1__container_stats_request__free_unpacked(in, NULL);
        if (*id == '\0')
                return ck_error_make_code(err, GRPC_INVALID_ARGUMENT,
                                          "ContainerStats: no container ID");
        struct shim_container_stats cs;
        if (shim_container_stats_collect(s, id, NULL, NULL, 0, &cs, err) < 0)
                return -1;
        /* the container itself, among what the engine's filter matched */
        Runtime__V1__ContainerStats *found = NULL;
        for (size_t i = 0; i < cs.n; i++)
                if (strcmp(cs.stats[i]->attributes->id, id) == 0)
                        found = cs.stats[i];
        /* asked by a unique prefix (the engine's filter is a regular
         * expression: only a prefix is taken) */
        if (found == NULL && cs.n == 1 && strncmp(cs.stats[0]->attributes->id, id, strlen(id)) == 0)
                found = cs.stats[0];
        int rc = 0;
        if (found == NULL) {
                rc = ck_error_make_code(err, GRPC_NOT_FOUND, "no running container %s", id);
        } else {
                Runtime__V1__ContainerStatsResponse r = RUNTIME__V1__CONTAINER_STATS_RESPONSE__INIT;
                r.stats = found;
                dockershim_pack(&r.base, resp, resp_len);
        }
        shim_container_stats_clear(&cs);
        return rc;
}
