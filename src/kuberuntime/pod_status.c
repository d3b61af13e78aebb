/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The runtime's view of pods (runtime.h): releasing and searching it.  No
 * I/O, so that pure consumers (compute, status generation, their tests)
 * link without the CRI client.
 */
#include "kuberuntime/runtime.h"

#include <stdlib.h>
#include <string.h>

static void container_status_release(struct runtime_container_status *c)
{
        free(c->id);
        free(c->name);
        free(c->image);
        free(c->image_ref);
        free(c->reason);
        free(c->message);
        free(c->log_path);
        free(c->sandbox_id);
}

static void sandbox_status_release(struct runtime_sandbox_status *s)
{
        free(s->id);
        free(s->ip);
        for (size_t i = 0; i < s->n_additional_ips; i++)
                free(s->additional_ips[i]);
        free(s->additional_ips);
}

void runtime_pod_status_free(struct runtime_pod_status *s)
{
        if (s == NULL)
                return;
        for (size_t i = 0; i < s->n_sandboxes; i++)
                sandbox_status_release(&s->sandboxes[i]);
        free(s->sandboxes);
        for (size_t i = 0; i < s->n_containers; i++)
                container_status_release(&s->containers[i]);
        free(s->containers);
        free(s->uid);
        free(s->name);
        free(s->namespace);
        free(s->ip);
        free(s);
}

const struct runtime_container_status *runtime_pod_status_find(const struct runtime_pod_status *s,
                                                               const char *container_name)
{
        if (s == NULL || container_name == NULL)
                return NULL;
        for (size_t i = 0; i < s->n_containers; i++)
                if (s->containers[i].name != NULL &&
                    strcmp(s->containers[i].name, container_name) == 0)
                        return &s->containers[i];
        return NULL;
}

void runtime_pod_list_free(struct runtime_pod_list *l)
{
        if (l == NULL)
                return;
        for (size_t i = 0; i < l->n_pods; i++) {
                struct runtime_pod_entry *p = &l->pods[i];
                free(p->uid);
                free(p->name);
                free(p->namespace);
                for (size_t j = 0; j < p->n_sandboxes; j++)
                        free(p->sandboxes[j].id);
                free(p->sandboxes);
                for (size_t j = 0; j < p->n_containers; j++) {
                        free(p->containers[j].id);
                        free(p->containers[j].name);
                        free(p->containers[j].image);
                        free(p->containers[j].sandbox_id);
                }
                free(p->containers);
        }
        free(l->pods);
        free(l);
}

void kuberuntime_sync_result_clear(struct kuberuntime_sync_result *r)
{
        if (r == NULL)
                return;
        for (size_t i = 0; i < r->n_waiting; i++) {
                free(r->waiting[i].container_name);
                free(r->waiting[i].reason);
                free(r->waiting[i].message);
        }
        free(r->waiting);
        free(r->resize_error);
        memset(r, 0, sizeof(*r));
}
