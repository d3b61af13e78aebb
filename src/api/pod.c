/* SPDX-License-Identifier: Apache-2.0 */
/*
 * struct pod: references, release, small queries (QoS class, static pod,
 * container lookup).
 */
#include "api/api_internal.h"
#include "api/decode.h"
#include "api/pod.h"

#include "util/gohash.h"
#include "util/intmath.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pod *pod_ref(struct pod *pod)
{
        if (pod)
                atomic_fetch_add_explicit(&pod->refcount, 1, memory_order_relaxed);
        return pod;
}

void kv_list_release(struct kv_list *l)
{
        for (size_t i = 0; i < l->n; i++) {
                free(l->items[i].key);
                free(l->items[i].value);
        }
        free(l->items);
        l->items = NULL;
        l->n = 0;
}

void str_list_release(struct str_list *l)
{
        for (size_t i = 0; i < l->n; i++)
                free(l->items[i]);
        free(l->items);
        l->items = NULL;
        l->n = 0;
}

void kv_list_add(struct kv_list *l, const char *key, const char *value)
{
        l->items = xrealloc(l->items, (l->n + 1) * sizeof(*l->items));
        l->items[l->n].key = xstrdup(key);
        l->items[l->n].value = xstrdup(value);
        l->n++;
}

const char *kv_list_get(const struct kv_list *l, const char *key)
{
        for (size_t i = 0; i < l->n; i++)
                if (strcmp(l->items[i].key, key) == 0)
                        return l->items[i].value;
        return NULL;
}

static void handler_release(struct handler *h)
{
        if (h == NULL)
                return;
        str_list_release(&h->exec_command);
        free(h->http_path);
        free(h->http_host);
        free(h->http_scheme);
        for (size_t i = 0; i < h->n_http_headers; i++) {
                free(h->http_headers[i].name);
                free(h->http_headers[i].value);
        }
        free(h->http_headers);
        free(h->port.sval);
        free(h->grpc_service);
}

static void probe_free(struct probe *p)
{
        if (p == NULL)
                return;
        handler_release(&p->handler);
        free(p);
}

static void handler_free(struct handler *h)
{
        handler_release(h);
        free(h);
}

static void security_context_free(struct security_context *sc)
{
        if (sc == NULL)
                return;
        str_list_release(&sc->capabilities.add);
        str_list_release(&sc->capabilities.drop);
        free(sc);
}

static void counts_release(struct resource_count **items, size_t *n)
{
        for (size_t i = 0; i < *n; i++)
                free((*items)[i].name);
        free(*items);
        *items = NULL;
        *n = 0;
}

static void resource_list_release(struct resource_list *l)
{
        counts_release(&l->extended, &l->n_extended);
        counts_release(&l->hugepages, &l->n_hugepages);
}

static int64_t count_of(const struct resource_count *items, size_t n, const char *name)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(items[i].name, name) == 0)
                        return items[i].value;
        return 0;
}

int64_t resource_list_extended(const struct resource_list *l, const char *name)
{
        return count_of(l->extended, l->n_extended, name);
}

int64_t resource_list_hugepages(const struct resource_list *l, const char *name)
{
        return count_of(l->hugepages, l->n_hugepages, name);
}

int64_t pod_resource_effective(const struct pod *pod, bool limits,
                               int64_t (*of)(const struct resource_list *l, const char *name),
                               const char *name)
{
        int64_t sum = 0, side = 0, init = 0;
        for (size_t i = 0; i < pod->n_containers; i++) {
                const struct resource_requirements *rr = &pod->containers[i].resources;
                sum = ck_add_sat(sum, of(limits ? &rr->limits : &rr->requests, name));
        }
        for (size_t i = 0; i < pod->n_init_containers; i++) {
                const struct container *c = &pod->init_containers[i];
                const struct resource_requirements *rr = &c->resources;
                int64_t r = of(limits ? &rr->limits : &rr->requests, name), need;
                if (container_is_sidecar(c)) {
                        sum = ck_add_sat(sum, r);
                        side = ck_add_sat(side, r);
                        need = side;
                } else {
                        need = ck_add_sat(r, side);
                }
                init = need > init ? need : init;
        }
        return init > sum ? init : sum;
}

size_t pod_hugepage_names(const struct pod *pod, const char **names, size_t room)
{
        size_t n = 0;
        size_t n_lists = pod->n_containers + pod->n_init_containers + 1;
        for (size_t k = 0; k < n_lists; k++) {
                const struct resource_list *l =
                    k < pod->n_containers ? &pod->containers[k].resources.requests
                    : k < pod->n_containers + pod->n_init_containers
                        ? &pod->init_containers[k - pod->n_containers].resources.requests
                        : &pod->overhead;
                for (size_t h = 0; h < l->n_hugepages; h++) {
                        bool seen = false;
                        for (size_t i = 0; i < n && !seen; i++)
                                seen = strcmp(names[i], l->hugepages[h].name) == 0;
                        if (!seen && n < room)
                                names[n++] = l->hugepages[h].name;
                }
        }
        return n;
}

int64_t resource_hugepage_size(const char *name)
{
        static const char prefix[] = "hugepages-";
        if (strncmp(name, prefix, sizeof(prefix) - 1) != 0)
                return -1;
        int64_t size = 0;
        cleanup_error ck_error_t err = NULL;
        if (api_parse_quantity(name + sizeof(prefix) - 1, false, &size, &err) < 0 || size <= 0)
                return -1;
        return size;
}

void container_release(struct container *c)
{
        resource_list_release(&c->resources.limits);
        resource_list_release(&c->resources.requests);
        free(c->name);
        free(c->image);
        str_list_release(&c->command);
        str_list_release(&c->args);
        free(c->working_dir);
        for (size_t i = 0; i < c->n_ports; i++) {
                free(c->ports[i].name);
                free(c->ports[i].protocol);
                free(c->ports[i].host_ip);
        }
        free(c->ports);
        for (size_t i = 0; i < c->n_env; i++) {
                struct env_var *e = &c->env[i];
                free(e->name);
                free(e->value);
                free(e->field_path);
                free(e->resource);
                free(e->container_name);
                free(e->divisor);
                free(e->ref_name);
                free(e->ref_key);
                free(e->file_path);
        }
        free(c->env);
        for (size_t i = 0; i < c->n_env_from; i++) {
                free(c->env_from[i].prefix);
                free(c->env_from[i].name);
        }
        free(c->env_from);
        for (size_t i = 0; i < c->n_volume_mounts; i++) {
                free(c->volume_mounts[i].name);
                free(c->volume_mounts[i].mount_path);
                free(c->volume_mounts[i].sub_path);
                free(c->volume_mounts[i].mount_propagation);
                free(c->volume_mounts[i].recursive_read_only);
        }
        free(c->volume_mounts);
        probe_free(c->liveness_probe);
        probe_free(c->readiness_probe);
        probe_free(c->startup_probe);
        handler_free(c->post_start);
        handler_free(c->pre_stop);
        free(c->stop_signal);
        free(c->termination_message_path);
        free(c->termination_message_policy);
        security_context_free(c->security_context);
        free(c->restart_policy);
        for (size_t i = 0; i < c->n_restart_rules; i++)
                free(c->restart_rules[i].exit_codes);
        free(c->restart_rules);
        free(c->target_container_name);
        memset(c, 0, sizeof(*c));
}

void volume_release(struct volume *v)
{
        free(v->name);
        free(v->medium);
        free(v->host_path);
        free(v->host_path_type);
        free(v->source_name);
        for (size_t i = 0; i < v->n_items; i++) {
                free(v->items[i].key);
                free(v->items[i].path);
        }
        free(v->items);
        memset(v, 0, sizeof(*v)); /* source is borrowed from raw */
}

static void pod_free(struct pod *pod)
{
        free(pod->name);
        free(pod->namespace);
        free(pod->uid);
        free(pod->resource_version);
        kv_list_release(&pod->labels);
        kv_list_release(&pod->annotations);
        free(pod->deletion_timestamp);
        free(pod->creation_timestamp);
        for (size_t i = 0; i < pod->n_containers; i++)
                container_release(&pod->containers[i]);
        free(pod->containers);
        for (size_t i = 0; i < pod->n_init_containers; i++)
                container_release(&pod->init_containers[i]);
        free(pod->init_containers);
        for (size_t i = 0; i < pod->n_ephemeral_containers; i++)
                container_release(&pod->ephemeral_containers[i]);
        free(pod->ephemeral_containers);
        for (size_t i = 0; i < pod->n_volumes; i++)
                volume_release(&pod->volumes[i]);
        free(pod->volumes);
        if (pod->dns_config) {
                str_list_release(&pod->dns_config->nameservers);
                str_list_release(&pod->dns_config->searches);
                kv_list_release(&pod->dns_config->options);
                free(pod->dns_config);
        }
        free(pod->hostname);
        free(pod->hostname_override);
        free(pod->subdomain);
        free(pod->node_name);
        free(pod->service_account_name);
        str_list_release(&pod->image_pull_secrets);
        for (size_t i = 0; i < pod->n_host_aliases; i++) {
                free(pod->host_aliases[i].ip);
                str_list_release(&pod->host_aliases[i].hostnames);
        }
        free(pod->host_aliases);
        free(pod->security_context.supplemental_groups);
        kv_list_release(&pod->security_context.sysctls);
        free(pod->priority_class_name);
        free(pod->runtime_class_name);
        resource_list_release(&pod->overhead);
        free(pod->os_name);
        free(pod->source_path);
        free(pod->full_name_);
        json_decref(pod->raw);
        free(pod->managed_fields);
        free(pod);
}

void pod_unref(struct pod *pod)
{
        if (pod == NULL)
                return;
        if (atomic_fetch_sub_explicit(&pod->refcount, 1, memory_order_acq_rel) == 1)
                pod_free(pod);
}

void pod_unrefp(struct pod **pod)
{
        pod_unref(*pod);
        *pod = NULL;
}

const char *pod_full_name(const struct pod *pod)
{
        if (pod->full_name_)
                return pod->full_name_;
        /* A pod built by hand (tests): valid until this thread's next call. */
        static _Thread_local char buf[512];
        snprintf(buf, sizeof(buf), "%s/%s", pod->namespace ? pod->namespace : "",
                 pod->name ? pod->name : "");
        return buf;
}

bool pod_is_static(const struct pod *pod)
{
        /* kubetypes.IsStaticPod: the config source annotation, when set */
        const char *src = kv_list_get(&pod->annotations, "kubernetes.io/config.source");
        if (src)
                return strcmp(src, "api") != 0;
        return pod->source != POD_SOURCE_API;
}

bool pod_is_critical(const struct pod *pod)
{
        return pod_is_static(pod) ||
               kv_list_get(&pod->annotations, "kubernetes.io/config.mirror") != NULL ||
               pod->priority >= POD_SYSTEM_CRITICAL_PRIORITY;
}

struct qos_sum {
        bool has_cpu, has_memory;
        int64_t cpu, memory;
};

static void qos_add(struct qos_sum *s, const struct resource_list *l, bool *cpu, bool *memory)
{
        *cpu = l->has_cpu && l->cpu_milli > 0;
        *memory = l->has_memory && l->memory > 0;
        /* saturating: absurd sums still compare, never overflow */
        if (*cpu) {
                s->has_cpu = true;
                if (__builtin_add_overflow(s->cpu, l->cpu_milli, &s->cpu))
                        s->cpu = INT64_MAX;
        }
        if (*memory) {
                s->has_memory = true;
                if (__builtin_add_overflow(s->memory, l->memory, &s->memory))
                        s->memory = INT64_MAX;
        }
}

enum qos_class pod_qos_class(const struct pod *pod)
{
        /* ComputePodQOS: sums over app and init containers; only cpu and
         * memory count, and only positive quantities. */
        struct qos_sum req = {0}, lim = {0};
        bool guaranteed = true;
        size_t n = pod->n_containers + pod->n_init_containers;
        for (size_t i = 0; i < n; i++) {
                const struct container *c = i < pod->n_containers
                                                ? &pod->containers[i]
                                                : &pod->init_containers[i - pod->n_containers];
                bool cpu, memory;
                qos_add(&req, &c->resources.requests, &cpu, &memory);
                qos_add(&lim, &c->resources.limits, &cpu, &memory);
                if (!cpu || !memory)
                        guaranteed = false;
        }
        if (!req.has_cpu && !req.has_memory && !lim.has_cpu && !lim.has_memory)
                return QOS_BEST_EFFORT;
        if (guaranteed) {
                if (req.has_cpu && (!lim.has_cpu || lim.cpu != req.cpu))
                        guaranteed = false;
                if (req.has_memory && (!lim.has_memory || lim.memory != req.memory))
                        guaranteed = false;
        }
        /* len(requests) == len(limits) */
        if (guaranteed && req.has_cpu == lim.has_cpu && req.has_memory == lim.has_memory)
                return QOS_GUARANTEED;
        return QOS_BURSTABLE;
}

const char *qos_class_name(enum qos_class q)
{
        switch (q) {
        case QOS_GUARANTEED:
                return "Guaranteed";
        case QOS_BURSTABLE:
                return "Burstable";
        default:
                return "BestEffort";
        }
}

const struct container *pod_find_container(const struct pod *pod, const char *name)
{
        for (size_t i = 0; i < pod->n_containers; i++)
                if (strcmp(pod->containers[i].name, name) == 0)
                        return &pod->containers[i];
        for (size_t i = 0; i < pod->n_init_containers; i++)
                if (strcmp(pod->init_containers[i].name, name) == 0)
                        return &pod->init_containers[i];
        return pod_find_ephemeral_container(pod, name);
}

const struct container *pod_find_ephemeral_container(const struct pod *pod, const char *name)
{
        for (size_t i = 0; i < pod->n_ephemeral_containers; i++)
                if (strcmp(pod->ephemeral_containers[i].name, name) == 0)
                        return &pod->ephemeral_containers[i];
        return NULL;
}

bool pod_split_field_path(const char *fp, char **path, char **subscript)
{
        size_t n = strlen(fp);
        if (n < 2 || strcmp(fp + n - 2, "']") != 0)
                return false;
        const char *open = strstr(fp, "['");
        if (open == NULL || open == fp || open + 2 > fp + n - 2)
                return false;
        *path = xstrndup(fp, (size_t)(open - fp));
        *subscript = xstrndup(open + 2, (size_t)(fp + n - 2 - (open + 2)));
        return true;
}

uint64_t api_container_hash(const char *name, const char *image)
{
        char *n = go_json_string(name ? name : "");
        char *i = go_json_string(image ? image : "");
        char *json = xasprintf("{\"image\":%s,\"name\":%s}", i, n);
        uint32_t h = go_deep_hash_bytes(json, strlen(json));
        free(json);
        free(i);
        free(n);
        return h;
}

bool container_is_sidecar(const struct container *c)
{
        return c->restart_policy != NULL && strcmp(c->restart_policy, "Always") == 0;
}

static bool rule_matches(const struct container_restart_rule *r, int32_t exit_code)
{
        bool listed = false;
        for (size_t i = 0; i < r->n_exit_codes && !listed; i++)
                listed = r->exit_codes[i] == exit_code;
        return r->exit_codes_in ? listed : !listed;
}

bool container_should_restart(const struct container *c, const struct pod *pod, int32_t exit_code)
{
        if (c->restart_policy != NULL) {
                for (size_t i = 0; i < c->n_restart_rules; i++)
                        if (rule_matches(&c->restart_rules[i], exit_code))
                                return true; /* action Restart */
                if (strcmp(c->restart_policy, "Always") == 0)
                        return true;
                if (strcmp(c->restart_policy, "OnFailure") == 0)
                        return exit_code != 0;
                if (strcmp(c->restart_policy, "Never") == 0)
                        return false;
        }
        switch (pod->restart_policy) {
        case RESTART_ON_FAILURE:
                return exit_code != 0;
        case RESTART_NEVER:
                return false;
        case RESTART_ALWAYS:
        default:
                return true;
        }
}

json_t *pod_raw_copy(const struct pod *pod)
{
        json_t *obj = json_deep_copy(pod->raw);
        json_t *meta = json_object_get(obj, "metadata");
        if (pod->managed_fields && json_is_object(meta)) {
                /* our own dump: it parses; managedFields is ObjectMeta's
                 * last field, so appending keeps the apiserver's order */
                json_t *mf = json_loads(pod->managed_fields, 0, NULL);
                if (mf)
                        json_object_set_new(meta, "managedFields", mf);
        }
        return obj;
}
