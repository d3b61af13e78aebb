/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Node object the kubelet registers and the status setters (upstream
 * kubelet_node_status.go initialNode and pkg/kubelet/nodestatus), on the
 * Node as JSON: the setters run on a copy of the Node read from the
 * apiserver, so that the fields the kubelet does not own are kept.
 */
#include "node/node_internal.h"

#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <math.h>
#include <string.h>

/* The child object `key` of obj, created when absent or not an object. */
static json_t *child_object(json_t *obj, const char *key)
{
        json_t *c = json_object_get(obj, key);
        if (!json_is_object(c)) {
                c = json_object();
                json_object_set_new(obj, key, c);
        }
        return c;
}

static void set_str(json_t *obj, const char *key, const char *value)
{
        json_object_set_new(obj, key, json_string(value ? value : ""));
}

static void set_owned_str(json_t *obj, const char *key, char *value)
{
        json_object_set_new(obj, key, json_string(value));
        free(value);
}

static void add_event(struct node_status_events *ev, const char *reason)
{
        if (ev && ev->n < ARRAY_SIZE(ev->reasons))
                ev->reasons[ev->n++] = reason;
}

/* The default labels, then `labels` over them (logged when one replaces a
 * default, when log_overwrite). */
static void set_labels(json_t *l, const char *hostname, const struct kv_list *labels,
                       bool log_overwrite)
{
        set_str(l, "kubernetes.io/hostname", hostname);
        set_str(l, "kubernetes.io/os", "linux");
        set_str(l, "kubernetes.io/arch", NODE_GOARCH);
        set_str(l, "beta.kubernetes.io/os", "linux");
        set_str(l, "beta.kubernetes.io/arch", NODE_GOARCH);
        for (size_t i = 0; labels && i < labels->n; i++) {
                const char *k = labels->items[i].key, *v = labels->items[i].value;
                json_t *cv = json_object_get(l, k);
                if (cv && log_overwrite)
                        LOG_INFO(0, "the node label will overwrite default setting",
                                 "labelKey=\"%s\" labelValue=\"%s\" default=\"%s\"", k, v ? v : "",
                                 json_string_value(cv));
                set_str(l, k, v);
        }
}

json_t *node_default_labels(const char *hostname, const struct kv_list *labels)
{
        json_t *l = json_object();
        set_labels(l, hostname, labels, false);
        return l;
}

json_t *node_build_initial(const char *node_name, const struct kv_list *labels,
                           const struct node_status_inputs *in, struct node_status_events *events)
{
        json_t *node = json_pack("{s:s, s:s, s:{s:s}, s:{}, s:{}}", "apiVersion", "v1", "kind",
                                 "Node", "metadata", "name", node_name, "spec", "status");
        json_t *meta = json_object_get(node, "metadata");
        set_labels(child_object(meta, "labels"), in->hostname, labels, true);

        LOG_INFO(2, "Setting node annotation to enable volume controller attach/detach");
        set_str(child_object(meta, "annotations"), NODE_CMAD_ANNOTATION, "true");

        node_set_status(node, in, events);
        return node;
}

/* ---- setters ---- */

static void set_addresses(json_t *status, const struct node_status_inputs *in)
{
        json_t *a = json_array();
        if (in->node_ip && *in->node_ip)
                json_array_append_new(
                    a, json_pack("{s:s, s:s}", "type", "InternalIP", "address", in->node_ip));
        json_array_append_new(a,
                              json_pack("{s:s, s:s}", "type", "Hostname", "address", in->hostname));
        json_object_set_new(status, "addresses", a);
}

static char *hugepage_resource_name(int64_t page_size)
{
        cleanup_free char *q = node_quantity_binary(page_size);
        return xasprintf("hugepages-%s", q);
}

static void set_machine_info(json_t *status, const struct node_status_inputs *in,
                             struct node_status_events *ev)
{
        const struct node_machine_info *mi = in->machine;
        json_t *cap = child_object(status, "capacity");
        json_t *info = child_object(status, "nodeInfo");

        set_str(info, "machineID", mi->machine_id);
        set_str(info, "systemUUID", mi->system_uuid);
        set_owned_str(cap, "cpu", node_quantity_decimal_milli(mi->num_cores * 1000));
        set_owned_str(cap, "memory", node_quantity_binary(mi->memory));
        set_owned_str(cap, "pods", node_quantity_decimal_milli((int64_t)in->max_pods * 1000));

        int64_t huge_total = 0;
        for (size_t i = 0; i < mi->n_hugepages; i++) {
                cleanup_free char *name = hugepage_resource_name(mi->hugepages[i].page_size);
                int64_t bytes = mi->hugepages[i].page_size * mi->hugepages[i].pages;
                huge_total += bytes;
                set_owned_str(cap, name, node_quantity_binary(bytes));
        }

        const char *old_boot = json_string_value(json_object_get(info, "bootID"));
        if (old_boot && *old_boot && mi->boot_id && strcmp(old_boot, mi->boot_id) != 0 && ev)
                ev->rebooted = true;
        set_str(info, "bootID", mi->boot_id);

        if (mi->ephemeral_storage >= 0)
                set_owned_str(cap, "ephemeral-storage",
                              node_quantity_binary(mi->ephemeral_storage));

        /* the device plugins' resources; a removed one stays, at 0 (upstream
         * keeps the key: the resource is a device plugin's) */
        for (size_t i = 0; i < in->n_devices; i++)
                set_owned_str(cap, in->devices[i].name,
                              node_quantity_decimal_milli(in->devices[i].capacity * 1000));
        for (size_t i = 0; i < in->n_removed_devices; i++)
                set_str(cap, in->removed_devices[i], "0");

        /* Allocatable: capacity minus the reservation (system + kube reserved
         * + the hard eviction thresholds), never negative; memory also minus
         * the huge pages (upstream MachineInfo setter). */
        json_t *alloc = child_object(status, "allocatable");
        const char *key;
        json_t *v;
        void *tmp;
        /* an extended resource no longer in capacity leaves allocatable */
        json_object_foreach_safe(alloc, tmp, key, v)
        {
                if (strchr(key, '/') != NULL && strstr(key, "kubernetes.io/") == NULL &&
                    json_object_get(cap, key) == NULL)
                        json_object_del(alloc, key);
        }
        json_object_foreach(cap, key, v)
        {
                if (strcmp(key, "cpu") == 0) {
                        int64_t m = mi->num_cores * 1000 - in->reserved_cpu_milli;
                        set_owned_str(alloc, key, node_quantity_decimal_milli(m < 0 ? 0 : m));
                } else if (strcmp(key, "memory") == 0) {
                        int64_t e = in->eviction_memory_bytes
                                        ? in->eviction_memory_bytes
                                        : (int64_t)((double)mi->memory *
                                                    (double)in->eviction_memory_fraction);
                        int64_t m = mi->memory - in->reserved_memory - e;
                        m = (m < 0 ? 0 : m) - huge_total;
                        set_owned_str(alloc, key, node_quantity_binary(m < 0 ? 0 : m));
                } else if (strcmp(key, "ephemeral-storage") == 0 && mi->ephemeral_storage >= 0) {
                        /* GetThresholdQuantity: int64(float64(capacity) * float64(percentage)) */
                        int64_t r = in->eviction_nodefs_bytes
                                        ? in->eviction_nodefs_bytes
                                        : (int64_t)((double)mi->ephemeral_storage *
                                                    (double)in->eviction_nodefs_fraction);
                        int64_t s = mi->ephemeral_storage - r;
                        set_owned_str(alloc, key, node_quantity_binary(s < 0 ? 0 : s));
                } else {
                        json_object_set(alloc, key, v);
                }
        }
        /* the healthy devices (a resource whose devices are all unhealthy
         * from the start keeps allocatable = capacity, as upstream) */
        for (size_t i = 0; i < in->n_devices; i++)
                if (in->devices[i].allocatable >= 0)
                        set_owned_str(
                            alloc, in->devices[i].name,
                            node_quantity_decimal_milli(in->devices[i].allocatable * 1000));
}

static void set_version_info(json_t *status, const struct node_status_inputs *in)
{
        json_t *info = child_object(status, "nodeInfo");
        set_str(info, "kernelVersion", in->machine->kernel_version);
        set_str(info, "osImage", in->machine->os_image);
        set_str(info, "containerRuntimeVersion",
                in->runtime_version ? in->runtime_version : "Unknown");
        set_str(info, "kubeletVersion", NODE_KUBELET_VERSION);
        /* DisableNodeKubeProxyVersion is locked on since 1.34: cleared */
        set_str(info, "kubeProxyVersion", "");
        set_str(info, "operatingSystem", "linux");
        set_str(info, "architecture", NODE_GOARCH);
}

static void set_daemon_endpoints(json_t *status, const struct node_status_inputs *in)
{
        json_object_set_new(
            status, "daemonEndpoints",
            json_pack("{s:{s:i}}", "kubeletEndpoint", "Port", (int)(in->port ? in->port : 10250)));
}

static json_t *find_condition(json_t *conds, const char *type)
{
        size_t i;
        json_t *c, *found = NULL;
        json_array_foreach(conds, i, c)
        {
                if (json_is_string(json_object_get(c, "type")) &&
                    strcmp(json_string_value(json_object_get(c, "type")), type) == 0)
                        found = c; /* the last one, as upstream's loop */
        }
        return found;
}

/* Upstream Memory/Disk/PIDPressureCondition: the heartbeat always moves,
 * status, reason, message and transition time only on a transition (a new
 * condition starts Unknown). */
static void set_pressure(json_t *conds, const char *type, bool pressure, const char *reason,
                         const char *message, const char *event, const char *now,
                         struct node_status_events *ev)
{
        const char *want = pressure ? "True" : "False";
        json_t *c = find_condition(conds, type);
        if (c == NULL) {
                c = json_pack("{s:s, s:s}", "type", type, "status", "Unknown");
                json_array_append_new(conds, c);
        }
        set_str(c, "lastHeartbeatTime", now);
        const char *st = json_string_value(json_object_get(c, "status"));
        if (st == NULL || strcmp(st, want) != 0) {
                set_str(c, "status", want);
                set_str(c, "reason", reason);
                set_str(c, "message", message);
                set_str(c, "lastTransitionTime", now);
                add_event(ev, event);
        }
}

static void set_ready(json_t *node, json_t *status, json_t *conds,
                      const struct node_status_inputs *in, const char *now,
                      struct node_status_events *ev)
{
        /* errors.NewAggregate: one error is its message, several "[a, b]" */
        const char *errs[3];
        size_t n = 0;
        if (!in->runtime_ready)
                errs[n++] = in->not_ready_message && *in->not_ready_message
                                ? in->not_ready_message
                                : "container runtime is down";
        /* upstream's nodeShutdownManagerErrorsFunc, after the runtime's */
        if (in->shutting_down)
                errs[n++] = "node is shutting down";
        char missing[128] = "";
        json_t *cap = json_object_get(status, "capacity");
        static const char *const required[] = {"cpu", "memory", "pods", "ephemeral-storage"};
        for (size_t i = 0; i < ARRAY_SIZE(required); i++)
                if (json_object_get(cap, required[i]) == NULL)
                        snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing),
                                 "%s%s", *missing ? ", " : "", required[i]);
        cleanup_free char *missing_msg = NULL;
        if (*missing) {
                missing_msg = xasprintf("missing node capacity for resources: %s", missing);
                errs[n++] = missing_msg;
        }
        cleanup_free char *message = NULL;
        if (n == 1)
                message = xstrdup(errs[0]);
        else if (n == 2)
                message = xasprintf("[%s, %s]", errs[0], errs[1]);
        else if (n == 3)
                message = xasprintf("[%s, %s, %s]", errs[0], errs[1], errs[2]);

        const char *want = n == 0 ? "True" : "False";
        json_t *c = json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", "Ready", "status", want,
                              "lastHeartbeatTime", now, "reason",
                              n == 0 ? "KubeletReady" : "KubeletNotReady", "message",
                              n == 0 ? "kubelet is posting ready status" : message);
        json_t *old = find_condition(conds, "Ready");
        if (old == NULL) {
                set_str(c, "lastTransitionTime", now);
                json_array_append_new(conds, c);
                return;
        }
        const char *old_status = json_string_value(json_object_get(old, "status"));
        bool transition = old_status == NULL || strcmp(old_status, want) != 0;
        if (transition) {
                set_str(c, "lastTransitionTime", now);
        } else {
                json_t *t = json_object_get(old, "lastTransitionTime");
                if (t)
                        json_object_set(c, "lastTransitionTime", t);
        }
        /* replaced in place: it keeps its position in the list */
        json_object_clear(old);
        json_object_update(old, c);
        json_decref(c);
        if (transition) {
                add_event(ev, n == 0 ? "NodeReady" : "NodeNotReady");
                if (n != 0)
                        LOG_INFO(0, "Node became not ready",
                                 "node=\"%s\" condition={\"type\":\"Ready\",\"status\":\"False\","
                                 "\"reason\":\"KubeletNotReady\",\"message\":\"%s\"}",
                                 json_string_value(
                                     json_object_get(json_object_get(node, "metadata"), "name")),
                                 message);
        }
}

void node_images_free(struct node_image *images, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(images[i].id);
                for (size_t j = 0; j < images[i].n_names; j++)
                        free(images[i].names[j]);
                free(images[i].names);
        }
        free(images);
}

struct node_image *node_images_copy(const struct node_image *images, size_t n)
{
        struct node_image *out = xcalloc(n + 1, sizeof(*out));
        for (size_t i = 0; i < n; i++) {
                out[i].id = xstrdup(images[i].id);
                out[i].size = images[i].size;
                out[i].n_names = images[i].n_names;
                out[i].names = xcalloc(images[i].n_names + 1, sizeof(char *));
                for (size_t j = 0; j < images[i].n_names; j++)
                        out[i].names[j] = xstrdup(images[i].names[j]);
        }
        return out;
}

/* upstream sliceutils.ByImageSize */
static int by_image_size(const void *pa, const void *pb)
{
        const struct node_image *a = pa, *b = pb;
        if (a->size != b->size)
                return a->size > b->size ? -1 : 1;
        return -strcmp(a->id ? a->id : "", b->id ? b->id : "");
}

json_t *node_images_json(const struct node_status_inputs *in)
{
        json_t *list = json_array();
        if (in->images_error || in->n_images == 0)
                return list;
        qsort(in->images, in->n_images, sizeof(*in->images), by_image_size);
        size_t n = in->n_images;
        if (in->max_images > -1 && (size_t)in->max_images < n)
                n = (size_t)in->max_images;
        for (size_t i = 0; i < n; i++) {
                const struct node_image *im = &in->images[i];
                json_t *names = json_array();
                for (size_t j = 0; j < im->n_names && j < NODE_MAX_NAMES_PER_IMAGE; j++)
                        json_array_append_new(names, json_string(im->names[j]));
                /* v1.ContainerImage: names always, sizeBytes omitempty */
                json_t *ci = json_object();
                json_object_set_new(ci, "names", names);
                if (im->size != 0)
                        json_object_set_new(ci, "sizeBytes", json_integer(im->size));
                json_array_append_new(list, ci);
        }
        return list;
}

/* upstream's Images setter: an empty list is no field (omitempty) */
static void set_images(json_t *status, const struct node_status_inputs *in)
{
        if (!in->images_known)
                return;
        json_t *list = node_images_json(in);
        if (json_array_size(list) > 0)
                json_object_set_new(status, "images", list);
        else {
                json_decref(list);
                json_object_del(status, "images");
        }
}

void node_set_status(json_t *node, const struct node_status_inputs *in,
                     struct node_status_events *ev)
{
        json_t *status = child_object(node, "status");
        char now[40];
        fs_format_rfc3339(in->now_ns, now);

        set_addresses(status, in);
        set_machine_info(status, in, ev);
        set_version_info(status, in);
        set_daemon_endpoints(status, in);
        set_images(status, in);

        json_t *conds = json_object_get(status, "conditions");
        if (!json_is_array(conds)) {
                conds = json_array();
                json_object_set_new(status, "conditions", conds);
        }
        bool mem = in->pressure & 1u, disk = in->pressure & 2u, pid = in->pressure & 4u;
        set_pressure(conds, "MemoryPressure", mem,
                     mem ? "KubeletHasInsufficientMemory" : "KubeletHasSufficientMemory",
                     mem ? "kubelet has insufficient memory available"
                         : "kubelet has sufficient memory available",
                     mem ? "NodeHasInsufficientMemory" : "NodeHasSufficientMemory", now, ev);
        set_pressure(conds, "DiskPressure", disk,
                     disk ? "KubeletHasDiskPressure" : "KubeletHasNoDiskPressure",
                     disk ? "kubelet has disk pressure" : "kubelet has no disk pressure",
                     disk ? "NodeHasDiskPressure" : "NodeHasNoDiskPressure", now, ev);
        set_pressure(conds, "PIDPressure", pid,
                     pid ? "KubeletHasInsufficientPID" : "KubeletHasSufficientPID",
                     pid ? "kubelet has insufficient PID available"
                         : "kubelet has sufficient PID available",
                     pid ? "NodeHasInsufficientPID" : "NodeHasSufficientPID", now, ev);
        set_ready(node, status, conds, in, now, ev);
}

bool node_ensure_os_arch_labels(json_t *node)
{
        json_t *labels = child_object(child_object(node, "metadata"), "labels");
        bool changed = false;
        const char *want[][2] = {{"kubernetes.io/os", "linux"},
                                 {"kubernetes.io/arch", NODE_GOARCH}};
        for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
                const char *v = json_string_value(json_object_get(labels, want[i][0]));
                if (v == NULL || strcmp(v, want[i][1]) != 0) {
                        set_str(labels, want[i][0], want[i][1]);
                        changed = true;
                }
        }
        return changed;
}
