/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node agent's state, shared by its threads (agent.c), registration
 * and status (status_sync.c) and the lease (lease_sync.c).  Not for other
 * modules.
 */
#ifndef CK_NODE_AGENT_INTERNAL_H
#define CK_NODE_AGENT_INTERNAL_H

#include "client/reflector.h"
#include "client/rest.h"
#include "node/node.h"
#include "node/node_internal.h"

#include <pthread.h>
#include <stdatomic.h>

struct node_agent {
        /* configuration: read-only once started */
        struct rest_config cfg;
        struct rest_ratelimiter *rl;
        struct event_recorder *recorder;
        char *node_name;
        char *node_ip;
        struct kv_list labels;
        bool register_node;
        int64_t update_ms, report_ms;
        int32_t lease_s, max_pods, port;
        int64_t reserved_cpu_milli, reserved_memory;
        int64_t eviction_memory_bytes, eviction_nodefs_bytes;
        float eviction_memory_fraction, eviction_nodefs_fraction;
        bool (*runtime_ready)(void *opaque, char **message);
        unsigned (*pressure)(void *opaque);
        bool (*shutting_down)(void *opaque);
        char *(*runtime_version)(void *opaque);
        void (*device_resources)(void *opaque, struct node_device_resource **res, size_t *n,
                                 char ***removed, size_t *n_removed);
        int (*images)(void *opaque, struct node_image **images, size_t *n);
        int32_t max_images;
        void *opaque;
        struct node_machine_info machine;

        pthread_t status_thread, lease_thread;
        bool status_started, lease_started;
        atomic_bool stop;
        atomic_bool sync_now; /* node_agent_sync_status: the status thread wakes */
        atomic_bool registered;

        pthread_mutex_t lock; /* node, watch; with wake: interruptible sleeps */
        pthread_cond_t wake;
        json_t *node;            /* the Node as last read from the apiserver, or NULL */
        struct reflector *watch; /* the Node's watch, once registered */

        /* the status thread's own */
        unsigned rand_state;
        bool reported;          /* a status was patched since start */
        int64_t last_report_ms; /* monotonic */
        int64_t report_delay_ms;
};

/* Sleeps ms unless stopped first; false when stopped. */
bool node_agent__sleep(struct node_agent *a, int64_t ms);
/* The same, ended early by node_agent_sync_status too (the status thread). */
bool node_agent__sleep_status(struct node_agent *a, int64_t ms);
/* A random number in [0, 1) (the calling thread's state). */
double node_agent__rand01(unsigned *state);
/* Replaces the cached Node with a copy of node (NULL: forget it); wakes the lease thread. */
void node_agent__set_node(struct node_agent *a, const json_t *node);
/* A copy of the cached Node, or NULL. */
json_t *node_agent__copy_node(struct node_agent *a);
/* Starts the Node's watch (once). */
void node_agent__start_watch(struct node_agent *a);

/* The status thread: registration, then the status loop (status_sync.c). */
void *node_agent__status_main(void *arg);
/* The lease thread (lease_sync.c). */
void *node_agent__lease_main(void *arg);

#endif
