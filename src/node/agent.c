/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node agent's life cycle: options, threads, the cached Node (fed by
 * the apiserver's answers and by a watch on the Node, as upstream's node
 * informer) and interruptible sleeps.
 */
#include "node/agent_internal.h"

#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/sleep.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

bool node_agent__sleep(struct node_agent *a, int64_t ms)
{
        return sleep_unless_stopped(&a->lock, &a->wake, &a->stop, ms);
}

bool node_agent__sleep_status(struct node_agent *a, int64_t ms)
{
        return sleep_unless_woken(&a->lock, &a->wake, &a->stop, &a->sync_now, ms);
}

void node_agent_sync_status(struct node_agent *a)
{
        if (a == NULL)
                return;
        pthread_mutex_lock(&a->lock);
        atomic_store(&a->sync_now, true);
        pthread_cond_broadcast(&a->wake);
        pthread_mutex_unlock(&a->lock);
}

double node_agent__rand01(unsigned *state)
{
        return (double)rand_r(state) / ((double)RAND_MAX + 1.0);
}

void node_agent__set_node(struct node_agent *a, const json_t *node)
{
        json_t *copy = node ? json_deep_copy(node) : NULL;
        pthread_mutex_lock(&a->lock);
        json_decref(a->node);
        a->node = copy;
        pthread_mutex_unlock(&a->lock);
}

json_t *node_agent__copy_node(struct node_agent *a)
{
        pthread_mutex_lock(&a->lock);
        json_t *copy = a->node ? json_deep_copy(a->node) : NULL;
        pthread_mutex_unlock(&a->lock);
        return copy;
}

/* ---- the Node's watch ---- */

static void watch_replace(void *opaque, json_t *items, const char *rv)
{
        (void)rv;
        struct node_agent *a = opaque;
        json_t *node = json_array_get(items, 0);
        /* an empty list: the watch cache may lag our own create; keep what we have */
        if (node)
                node_agent__set_node(a, node);
}

static void watch_event(void *opaque, enum watch_event_type type, json_t *object)
{
        struct node_agent *a = opaque;
        if (type == WATCH_DELETED) {
                LOG_WARN("Node was deleted from the API server", "node=\"%s\"", a->node_name);
                node_agent__set_node(a, NULL);
        } else {
                node_agent__set_node(a, object);
        }
}

void node_agent__start_watch(struct node_agent *a)
{
        pthread_mutex_lock(&a->lock);
        bool started = a->watch != NULL;
        pthread_mutex_unlock(&a->lock);
        if (started)
                return;
        cleanup_free char *selector = xasprintf("metadata.name=%s", a->node_name);
        struct reflector_options ro = {
            .name = "nodes",
            .path = "/api/v1/nodes",
            .field_selector = selector,
        };
        struct reflector_callbacks cb = {
            .on_replace = watch_replace,
            .on_event = watch_event,
            .opaque = a,
        };
        struct reflector *r = NULL;
        cleanup_error ck_error_t err = NULL;
        if (reflector_start(&a->cfg, a->rl, &ro, &cb, &r, &err) < 0) {
                /* not fatal: every status update then reads the Node itself */
                LOG_ERROR("Unable to watch the node", "node=\"%s\" err=\"%s\"", a->node_name,
                          ck_error_msg(err));
                return;
        }
        pthread_mutex_lock(&a->lock);
        a->watch = r;
        pthread_mutex_unlock(&a->lock);
}

/* ---- life cycle ---- */

static void free_agent(struct node_agent *a)
{
        rest_config_clear(&a->cfg);
        free(a->node_name);
        free(a->node_ip);
        for (size_t i = 0; i < a->labels.n; i++) {
                free(a->labels.items[i].key);
                free(a->labels.items[i].value);
        }
        free(a->labels.items);
        node_machine_info_clear(&a->machine);
        json_decref(a->node);
        pthread_cond_destroy(&a->wake);
        pthread_mutex_destroy(&a->lock);
        free(a);
}

json_t *node_local(const struct node_agent_options *o)
{
        struct node_machine_info mi = {0};
        node_machine_info_read(o->root_dir, &mi);
        struct node_status_inputs in = {
            .machine = &mi,
            .hostname = o->node_name,
            .node_ip = o->node_ip,
            .max_pods = o->max_pods > 0 ? o->max_pods : 110,
            .port = o->port > 0 ? o->port : 10250,
            .reserved_cpu_milli = o->reserved_cpu_milli,
            .reserved_memory = o->reserved_memory,
            .eviction_memory_bytes = o->eviction_memory_bytes,
            .eviction_memory_fraction = o->eviction_memory_fraction,
            .eviction_nodefs_bytes = o->eviction_nodefs_bytes,
            .eviction_nodefs_fraction = o->eviction_nodefs_fraction,
            .now_ns = fs_now_real_ns(),
        };
        json_t *node = node_build_initial(o->node_name, o->node_labels, &in, NULL);
        node_machine_info_clear(&mi);
        return node;
}

int node_agent_start(const struct node_agent_options *o, struct node_agent **out, ck_error_t *err)
{
        *out = NULL;
        if (o->api == NULL || o->node_name == NULL || *o->node_name == '\0')
                return ck_error_make(err, 0,
                                     "node agent: an apiserver and a node name are "
                                     "required");
        struct node_agent *a = xcalloc(1, sizeof(*a));
        pthread_mutex_init(&a->lock, NULL);
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&a->wake, &ca);
        pthread_condattr_destroy(&ca);

        if (node_ip_resolve(o->node_ip, &a->node_ip, err) < 0) {
                free_agent(a);
                return ck_error_wrap(err, "node %s", o->node_name);
        }
        rest_config_copy(&a->cfg, o->api);
        a->rl = o->rl;
        a->recorder = o->recorder;
        a->node_name = xstrdup(o->node_name);
        if (o->node_labels && o->node_labels->n) {
                a->labels.items = xcalloc(o->node_labels->n, sizeof(*a->labels.items));
                for (size_t i = 0; i < o->node_labels->n; i++) {
                        a->labels.items[i].key = xstrdup(o->node_labels->items[i].key);
                        a->labels.items[i].value = xstrdup(o->node_labels->items[i].value);
                }
                a->labels.n = o->node_labels->n;
        }
        a->register_node = o->register_node;
        a->update_ms = o->status_update_ms > 0 ? o->status_update_ms : 10000;
        a->report_ms = o->status_report_ms > 0 ? o->status_report_ms : 300000;
        a->lease_s = o->lease_duration_s > 0 ? (int32_t)o->lease_duration_s : 40;
        a->max_pods = o->max_pods > 0 ? o->max_pods : 110;
        a->port = o->port > 0 ? o->port : 10250;
        a->reserved_cpu_milli = o->reserved_cpu_milli;
        a->reserved_memory = o->reserved_memory;
        a->eviction_memory_bytes = o->eviction_memory_bytes;
        a->eviction_memory_fraction = o->eviction_memory_fraction;
        a->eviction_nodefs_bytes = o->eviction_nodefs_bytes;
        a->eviction_nodefs_fraction = o->eviction_nodefs_fraction;
        a->runtime_ready = o->runtime_ready;
        a->pressure = o->pressure;
        a->shutting_down = o->shutting_down;
        a->runtime_version = o->runtime_version;
        a->device_resources = o->device_resources;
        a->images = o->images;
        a->max_images = o->max_images;
        a->opaque = o->opaque;
        a->rand_state = (unsigned)fs_now_real_ns() ^ (unsigned)(uintptr_t)a;
        node_machine_info_read(o->root_dir, &a->machine);

        int rc = pthread_create(&a->status_thread, NULL, node_agent__status_main, a);
        if (rc != 0) {
                free_agent(a);
                return ck_error_make(err, rc, "node agent: start the node status thread");
        }
        a->status_started = true;
        rc = pthread_create(&a->lease_thread, NULL, node_agent__lease_main, a);
        if (rc != 0) {
                node_agent_stop(a);
                return ck_error_make(err, rc, "node agent: start the node lease thread");
        }
        a->lease_started = true;
        LOG_INFO(2, "Node agent started", "node=\"%s\" nodeIP=\"%s\"", a->node_name, a->node_ip);
        *out = a;
        return 0;
}

void node_agent_stop(struct node_agent *a)
{
        if (a == NULL)
                return;
        pthread_mutex_lock(&a->lock);
        atomic_store(&a->stop, true);
        pthread_cond_broadcast(&a->wake);
        pthread_mutex_unlock(&a->lock);
        if (a->status_started)
                pthread_join(a->status_thread, NULL);
        if (a->lease_started)
                pthread_join(a->lease_thread, NULL);
        reflector_stop(a->watch); /* no thread starts one any more */
        a->watch = NULL;
        free_agent(a);
}

bool node_agent_registered(struct node_agent *a)
{
        return a && atomic_load(&a->registered);
}

json_t *node_agent_get_node(struct node_agent *a)
{
        return a ? node_agent__copy_node(a) : NULL;
}

const char *node_agent_node_ip(struct node_agent *a)
{
        return a ? a->node_ip : NULL;
}
