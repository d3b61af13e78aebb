/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The status thread: registers the Node (upstream registerWithAPIServer /
 * tryRegisterWithAPIServer), then checks its status every
 * nodeStatusUpdateFrequency and patches it when it changed or when
 * nodeStatusReportFrequency passed (upstream syncNodeStatus,
 * updateNodeStatus, tryUpdateNodeStatus).
 */
#include "node/agent_internal.h"

#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define NODE_STATUS_UPDATE_RETRY 5
/* While the node is not Ready the status is checked this often, so that it
 * turns Ready soon after the runtime does (upstream fastStatusUpdateOnce
 * polls every 100 ms; a second is enough and cheaper). */
#define NOT_READY_CHECK_MS 1000
/* What the callbacks say about the runtime, asked once per check. */
struct runtime_facts {
        bool ready;
        char *message;
        char *version;
        struct node_device_resource *devices;
        size_t n_devices;
        char **removed;
        size_t n_removed;
        bool images_known, images_error;
        struct node_image *images;
        size_t n_images;
        unsigned pressure;
        bool shutting_down;
};

static void runtime_facts_read(struct node_agent *a, struct runtime_facts *f)
{
        f->ready = true;
        f->message = NULL;
        f->version = a->runtime_version ? a->runtime_version(a->opaque) : NULL;
        if (a->runtime_ready)
                f->ready = a->runtime_ready(a->opaque, &f->message);
        f->pressure = a->pressure ? a->pressure(a->opaque) : 0;
        f->shutting_down = a->shutting_down ? a->shutting_down(a->opaque) : false;
        f->devices = NULL;
        f->removed = NULL;
        f->n_devices = f->n_removed = 0;
        if (a->device_resources)
                a->device_resources(a->opaque, &f->devices, &f->n_devices, &f->removed,
                                    &f->n_removed);
        f->images = NULL;
        f->n_images = 0;
        f->images_known = a->images != NULL;
        f->images_error = f->images_known && a->images(a->opaque, &f->images, &f->n_images) < 0;
}

static void runtime_facts_clear(struct runtime_facts *f)
{
        free(f->message);
        free(f->version);
        for (size_t i = 0; i < f->n_devices; i++)
                free(f->devices[i].name);
        free(f->devices);
        for (size_t i = 0; i < f->n_removed; i++)
                free(f->removed[i]);
        free(f->removed);
        node_images_free(f->images, f->n_images);
}

static void inputs_for(struct node_agent *a, const struct runtime_facts *f,
                       struct node_status_inputs *in)
{
        *in = (struct node_status_inputs){
            .machine = &a->machine,
            .hostname = a->node_name,
            .node_ip = a->node_ip,
            .max_pods = a->max_pods,
            .port = a->port,
            .reserved_cpu_milli = a->reserved_cpu_milli,
            .reserved_memory = a->reserved_memory,
            .eviction_memory_bytes = a->eviction_memory_bytes,
            .eviction_memory_fraction = a->eviction_memory_fraction,
            .eviction_nodefs_bytes = a->eviction_nodefs_bytes,
            .eviction_nodefs_fraction = a->eviction_nodefs_fraction,
            .runtime_version = f->version,
            .runtime_ready = f->ready,
            .pressure = f->pressure,
            .shutting_down = f->shutting_down,
            .not_ready_message = f->message,
            .now_ns = fs_now_real_ns(),
            .devices = f->devices,
            .n_devices = f->n_devices,
            .removed_devices = f->removed,
            .n_removed_devices = f->n_removed,
            .images_known = f->images_known,
            .images_error = f->images_error,
            .images = f->images,
            .n_images = f->n_images,
            .max_images = a->max_images,
        };
}

static char *node_path(struct node_agent *a, const char *sub)
{
        return xasprintf("/api/v1/nodes/%s%s", a->node_name, sub ? sub : "");
}

/* upstream recordNodeStatusEvent / recordEvent: the node reference's uid
 * is the node name. */
static void record_events(struct node_agent *a, const struct node_status_events *ev)
{
        struct event_object obj = {.kind = "Node", .name = a->node_name, .uid = a->node_name};
        for (size_t i = 0; i < ev->n; i++) {
                LOG_INFO(2, "Recording event message for node", "node=\"%s\" event=\"%s\"",
                         a->node_name, ev->reasons[i]);
                event_emit(a->recorder, &obj, EVENT_NORMAL, ev->reasons[i],
                           "Node %s status is now: %s", a->node_name, ev->reasons[i]);
        }
        if (ev->rebooted) {
                static atomic_bool once;
                if (!atomic_exchange(&once, true))
                        event_emit(a->recorder, &obj, EVENT_WARNING, "NodeRebooted",
                                   "Node %s has been rebooted, boot id: %s", a->node_name,
                                   a->machine.boot_id);
        }
}

/* ---- registration ---- */

/* One attempt (upstream tryRegisterWithAPIServer); true when the Node
 * exists and is reconciled.  On success *out is the Node as the apiserver
 * has it. */
static bool try_register(struct node_agent *a, struct rest_client *c, const json_t *node,
                         json_t **out)
{
        *out = NULL;
        cleanup_error ck_error_t err = NULL;
        json_t *created = NULL;
        if (rest_post(c, "/api/v1/nodes", node, &created, &err) >= 0) {
                *out = created;
                return true;
        }
        if (err->code != 409) {
                LOG_ERROR("Unable to register node with API server", "err=\"%s\" node=\"%s\"",
                          ck_error_msg(err), a->node_name);
                return false;
        }
        ck_error_release(&err);
        cleanup_free char *path = node_path(a, NULL);
        cleanup_json json_t *existing = NULL;
        if (rest_get(c, path, NULL, &existing, &err) < 0) {
                LOG_ERROR("Unable to register node with API server, error getting existing node",
                          "err=\"%s\" node=\"%s\"", ck_error_msg(err), a->node_name);
                return false;
        }
        if (!json_is_object(existing)) {
                LOG_INFO(0, "Unable to register node with API server, no node instance returned",
                         "node=\"%s\"", a->node_name);
                return false;
        }
        LOG_INFO(0, "Node was previously registered", "node=\"%s\"", a->node_name);
        cleanup_json json_t *original = json_deep_copy(existing);
        if (node_reconcile_existing(existing, node)) {
                cleanup_json json_t *patch = node_status_patch(original, existing);
                cleanup_free char *spath = node_path(a, "/status");
                json_t *updated = NULL;
                if (rest_patch(c, spath, NULL, REST_PATCH_STRATEGIC, patch, &updated, &err) < 0) {
                        LOG_ERROR("Unable to reconcile node with API server,error updating node",
                                  "err=\"%s\" node=\"%s\"", ck_error_msg(err), a->node_name);
                        return false;
                }
                *out = updated;
                return true;
        }
        *out = existing;
        existing = NULL;
        return true;
}

/* Upstream registerWithAPIServer: until it works, 100 ms doubling to 7 s
 * between attempts.  False when stopped. */
static bool register_node(struct node_agent *a, struct rest_client *c)
{
        int64_t step = 100;
        for (;;) {
                if (!node_agent__sleep(a, step))
                        return false;
                step = step * 2 >= 7000 ? 7000 : step * 2;

                struct runtime_facts f;
                runtime_facts_read(a, &f);
                struct node_status_inputs in;
                inputs_for(a, &f, &in);
                struct node_status_events ev = {0};
                cleanup_json json_t *node = node_build_initial(a->node_name, &a->labels, &in, &ev);
                runtime_facts_clear(&f);

                LOG_INFO(0, "Attempting to register node", "node=\"%s\"", a->node_name);
                json_t *registered = NULL;
                if (try_register(a, c, node, &registered)) {
                        LOG_INFO(0, "Successfully registered node", "node=\"%s\"", a->node_name);
                        /* upstream records them while building the node; here
                         * once the apiserver can take them */
                        record_events(a, &ev);
                        node_agent__set_node(a, registered);
                        json_decref(registered);
                        return true;
                }
        }
}

/* ---- status ---- */

static bool report_period_expired(struct node_agent *a, int64_t now)
{
        return !a->reported || now - a->last_report_ms >= a->report_ms + a->report_delay_ms;
}

/* One attempt (upstream tryUpdateNodeStatus): the first from the cached
 * Node, the retries from a fresh GET. */
static int try_update_status(struct node_agent *a, struct rest_client *c, int try_number,
                             const struct runtime_facts *f, bool *ready, ck_error_t *err)
{
        cleanup_free char *path = node_path(a, NULL);
        cleanup_json json_t *original = try_number == 0 ? node_agent__copy_node(a) : NULL;
        if (original == NULL) {
                if (rest_get(c, path, NULL, &original, err) < 0)
                        return ck_error_wrap(err, "error getting node \"%s\"", a->node_name);
                if (!json_is_object(original))
                        return ck_error_make(err, 0, "nil \"%s\" node object", a->node_name);
                node_agent__set_node(a, original);
        }

        cleanup_json json_t *node = json_deep_copy(original);
        bool labels_changed = node_ensure_os_arch_labels(node);
        struct node_status_inputs in;
        inputs_for(a, f, &in);
        struct node_status_events ev = {0};
        node_set_status(node, &in, &ev);
        record_events(a, &ev);
        *ready = f->ready;

        bool changed = labels_changed || node_status_changed(json_object_get(original, "status"),
                                                             json_object_get(node, "status"));
        int64_t now = fs_now_mono_ms();
        if (!changed && !report_period_expired(a, now))
                return 0;
        /* upstream: a random delay after a change (or the first report)
         * spreads the periodic reports of many nodes; none after that */
        if (changed || !a->reported)
                a->report_delay_ms =
                    (int64_t)((double)a->report_ms * (node_agent__rand01(&a->rand_state) - 0.5));
        else
                a->report_delay_ms = 0;

        cleanup_json json_t *patch = node_status_patch(original, node);
        cleanup_free char *spath = node_path(a, "/status");
        cleanup_json json_t *updated = NULL;
        if (rest_patch(c, spath, NULL, REST_PATCH_STRATEGIC, patch, &updated, err) < 0) {
                cleanup_free char *body = json_dumps(patch, JSON_COMPACT);
                return ck_error_wrap(err, "failed to patch status \"%s\" for node \"%s\"",
                                     body ? body : "", a->node_name);
        }
        a->reported = true;
        a->last_report_ms = now;
        if (json_is_object(updated))
                node_agent__set_node(a, updated);
        LOG_INFO(4, "Updated node status", "node=\"%s\" changed=%s", a->node_name,
                 changed ? "true" : "false");
        return 0;
}

/* Upstream updateNodeStatus; returns whether the node is Ready. */
static bool update_node_status(struct node_agent *a, struct rest_client *c)
{
        LOG_INFO(5, "Updating node status");
        struct runtime_facts f;
        runtime_facts_read(a, &f);
        bool ready = f.ready;
        for (int i = 0; i < NODE_STATUS_UPDATE_RETRY && !atomic_load(&a->stop); i++) {
                cleanup_error ck_error_t err = NULL;
                if (try_update_status(a, c, i, &f, &ready, &err) == 0) {
                        runtime_facts_clear(&f);
                        return ready;
                }
                LOG_ERROR("Error updating node status, will retry", "err=\"%s\"",
                          ck_error_msg(err));
        }
        runtime_facts_clear(&f);
        if (!atomic_load(&a->stop))
                LOG_ERROR("Unable to update node status",
                          "err=\"update node status exceeds retry count\"");
        return ready;
}

void *node_agent__status_main(void *arg)
{
        struct node_agent *a = arg;
        struct rest_client *c = NULL;
        cleanup_error ck_error_t err = NULL;
        if (rest_client_new(&a->cfg, NULL, &c, &err) < 0) {
                LOG_ERROR("Unable to create the node status client", "err=\"%s\"",
                          ck_error_msg(err));
                return NULL;
        }
        rest_client_set_stop(c, &a->stop);
        /* the heartbeat client's timeout: min(status update, lease duration) */
        int64_t timeout = a->update_ms < a->lease_s * 1000LL ? a->update_ms : a->lease_s * 1000LL;
        rest_client_set_timeout(c, (long)timeout);

        if (a->register_node && !register_node(a, c))
                goto out;
        if (!a->register_node) {
                /* the Node must exist before the lease can name it */
                cleanup_free char *path = node_path(a, NULL);
                for (;;) {
                        json_t *node = NULL;
                        if (rest_get(c, path, NULL, &node, &err) >= 0) {
                                node_agent__set_node(a, node);
                                json_decref(node);
                                break;
                        }
                        LOG_ERROR("Unable to update node status",
                                  "err=\"error getting node "
                                  "\\\"%s\\\": %s\"",
                                  a->node_name, ck_error_msg(err));
                        ck_error_release(&err);
                        if (!node_agent__sleep(a, a->update_ms))
                                goto out;
                }
        }
        atomic_store(&a->registered, true);
        pthread_mutex_lock(&a->lock);
        pthread_cond_broadcast(&a->wake); /* the lease thread waits for the Node */
        pthread_mutex_unlock(&a->lock);
        node_agent__start_watch(a);

        /* upstream wait.JitterUntil(syncNodeStatus, period, 0.04, sliding) */
        do {
                bool ready = update_node_status(a, c);
                int64_t period =
                    ready ? a->update_ms
                          : (a->update_ms < NOT_READY_CHECK_MS ? a->update_ms : NOT_READY_CHECK_MS);
                period += (int64_t)((double)period * 0.04 * node_agent__rand01(&a->rand_state));
                if (!node_agent__sleep_status(a, period))
                        break;
        } while (true);
out:
        rest_client_free(c);
        return NULL;
}
