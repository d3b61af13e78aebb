/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Stats (dockershim_internal.h): each running container's, the engine's
 * one-shot stats (cumulative CPU, memory usage and working set), gathered
 * once by shim_container_stats_collect for ListContainerStats,
 * ContainerStats and the sandboxes'.  A sandbox's CPU, memory and process
 * count are the sums over its running containers and its pause container
 * (containerd reads the pod's cgroup instead: the engine has no call for
 * a cgroup that is not a container's); its network, the pause process's
 * /proc/<pid>/net/dev, read in the pod's network namespace.
 */
#include "cri.pb-c.h"
#include "dockershim/dockershim_internal.h"
#include "grpc/grpc.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

static int bad_request(ck_error_t *err, const char *what)
{
        return ck_error_make_code(err, GRPC_INVALID_ARGUMENT, "%s: the request does not decode",
                                  what);
}

/* The working set as cAdvisor counts it: usage less inactive file pages. */
static uint64_t working_set(const struct docker_stats *ds)
{
        return ds->mem_usage > ds->mem_inactive_file ? ds->mem_usage - ds->mem_inactive_file : 0;
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
                c->mem_working_set.value = working_set(ds);
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

/* ---- /proc/<pid>/net/dev ------------------------------------------------- */

/* The counters of one line after its "name:": exactly 16 unsigned
 * decimals (received bytes, packets, errs, drop, fifo, frame, compressed,
 * multicast; then transmitted bytes, packets, errs, drop, fifo, colls,
 * carrier, compressed). */
static bool net_dev_counters(const char *p, const char *end, uint64_t v[16])
{
        for (size_t i = 0; i < 16; i++) {
                while (p < end && (*p == ' ' || *p == '\t'))
                        p++;
                if (p == end || *p < '0' || *p > '9')
                        return false;
                uint64_t x = 0;
                for (; p < end && *p >= '0' && *p <= '9'; p++) {
                        unsigned d = (unsigned)(*p - '0');
                        if (x > (UINT64_MAX - d) / 10)
                                return false;
                        x = x * 10 + d;
                }
                if (p < end && *p != ' ' && *p != '\t')
                        return false;
                v[i] = x;
        }
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
                p++;
        return p == end;
}

void shim_parse_net_dev(const char *text, struct shim_netdev **out, size_t *n)
{
        *out = NULL;
        *n = 0;
        size_t cap = 0;
        for (const char *line = text; *line;) {
                const char *end = strchr(line, '\n');
                if (end == NULL)
                        end = line + strlen(line);
                const char *next = *end ? end + 1 : end;
                /* "  eth0: 1234 ...": the kernel pads the name to 6 and a
                 * counter may touch the ':'; a device name has no ':' and
                 * no space; the two header lines have no ':' */
                const char *colon = memchr(line, ':', (size_t)(end - line));
                const char *name = line;
                while (name < end && (*name == ' ' || *name == '\t'))
                        name++;
                uint64_t v[16];
                bool ok = colon != NULL && colon > name && net_dev_counters(colon + 1, end, v);
                for (const char *c = name; ok && c < colon; c++)
                        ok = *c != ' ' && *c != '\t';
                size_t name_len = ok ? (size_t)(colon - name) : 0;
                if (ok && !(name_len == 2 && memcmp(name, "lo", 2) == 0)) {
                        if (*n == cap) {
                                cap = cap ? 2 * cap : 4;
                                *out = xrealloc(*out, cap * sizeof(**out));
                        }
                        (*out)[(*n)++] = (struct shim_netdev){
                            .name = xstrndup(name, name_len),
                            .rx_bytes = v[0],
                            .rx_errors = v[2],
                            .tx_bytes = v[8],
                            .tx_errors = v[10],
                        };
                }
                line = next;
        }
}

void shim_netdevs_free(struct shim_netdev *v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(v[i].name);
        free(v);
}

/* ---- sandboxes ------------------------------------------------------------ */

/* One sandbox's stats answer and what it is made of. */
struct sandbox_stat {
        Runtime__V1__PodSandboxStats stats;
        Runtime__V1__PodSandboxAttributes attributes;
        Runtime__V1__PodSandboxMetadata metadata;
        Runtime__V1__LinuxPodSandboxStats linux;
        Runtime__V1__CpuUsage cpu;
        Runtime__V1__MemoryUsage memory;
        Runtime__V1__ProcessUsage process;
        Runtime__V1__NetworkUsage network;
        Runtime__V1__UInt64Value cpu_ns, mem_usage, mem_working_set, processes;
        Runtime__V1__NetworkInterfaceUsage *ifaces; /* n_devs each */
        Runtime__V1__NetworkInterfaceUsage **iface_ptrs;
        Runtime__V1__UInt64Value *iface_values; /* 4 per interface */
        struct shim_netdev *devs;
        size_t n_devs;
        bool have_info;
        struct docker_container info;
        struct shim_name name;
        struct shim_map labels, annotations;
        struct shim_container_stats containers;
};

static void sandbox_stat_clear(struct sandbox_stat *b)
{
        if (b->have_info) {
                shim_map_clear(&b->labels);
                shim_map_clear(&b->annotations);
                shim_name_clear(&b->name);
                docker_container_clear(&b->info);
        }
        shim_container_stats_clear(&b->containers);
        shim_netdevs_free(b->devs, b->n_devs);
        free(b->ifaces);
        free(b->iface_ptrs);
        free(b->iface_values);
        *b = (struct sandbox_stat){0};
}

/* The sums of a sandbox's members' engine stats. */
struct usage_sum {
        int64_t newest_ns; /* the newest read time */
        uint64_t cpu_ns, mem_usage, mem_working_set, pids;
        bool has_memory, has_pids;
};

static void usage_add(struct usage_sum *u, const struct docker_stats *ds)
{
        if (ds->read_ns > u->newest_ns)
                u->newest_ns = ds->read_ns;
        u->cpu_ns += ds->cpu_total_ns;
        if (ds->has_memory) {
                u->has_memory = true;
                u->mem_usage += ds->mem_usage;
                u->mem_working_set += working_set(ds);
        }
        if (ds->has_pids) {
                u->has_pids = true;
                u->pids += ds->pids_current;
        }
}

static void set_value(Runtime__V1__UInt64Value *v, uint64_t value)
{
        runtime__v1__uint64_value__init(v);
        v->value = value;
}

/* The pod's interfaces, from its pause process's /proc/<pid>/net/dev:
 * each but lo, the default the one CNI made (eth0).  None (logged) when
 * it cannot be read. */
static void sandbox_network(struct dockershim *s, struct sandbox_stat *b)
{
        const char *proc = s->proc_root ? s->proc_root : "/proc";
        cleanup_free char *path = xasprintf("%s/%d/net/dev", proc, b->info.pid);
        int64_t now = fs_now_real_ns();
        cleanup_free char *text = NULL;
        ck_error_t e = NULL;
        if (b->info.pid <= 0 || fs_read_file(path, 1024 * 1024, &text, NULL, &e) < 0) {
                LOG_INFO(4, "PodSandboxStats: no network usage", "podSandboxID=\"%s\" err=\"%s\"",
                         b->info.id, e ? ck_error_msg(e) : "no pid");
                ck_error_release(&e);
                return;
        }
        shim_parse_net_dev(text, &b->devs, &b->n_devs);
        size_t cap = b->n_devs ? b->n_devs : 1;
        b->ifaces = xcalloc(cap, sizeof(*b->ifaces));
        b->iface_ptrs = xcalloc(cap, sizeof(*b->iface_ptrs));
        b->iface_values = xcalloc(4 * cap, sizeof(*b->iface_values));
        runtime__v1__network_usage__init(&b->network);
        b->network.timestamp = now;
        for (size_t i = 0; i < b->n_devs; i++) {
                const struct shim_netdev *d = &b->devs[i];
                Runtime__V1__NetworkInterfaceUsage *u = &b->ifaces[i];
                Runtime__V1__UInt64Value *v = &b->iface_values[4 * i];
                runtime__v1__network_interface_usage__init(u);
                u->name = d->name;
                set_value(&v[0], d->rx_bytes);
                set_value(&v[1], d->rx_errors);
                set_value(&v[2], d->tx_bytes);
                set_value(&v[3], d->tx_errors);
                u->rx_bytes = &v[0];
                u->rx_errors = &v[1];
                u->tx_bytes = &v[2];
                u->tx_errors = &v[3];
                b->iface_ptrs[i] = u;
                if (strcmp(d->name, SHIM_CNI_IFNAME) == 0)
                        b->network.default_interface = u;
        }
        b->network.n_interfaces = b->n_devs;
        b->network.interfaces = b->iface_ptrs;
        b->linux.network = &b->network;
}

/* The stats of the sandbox id (an ID or a unique prefix of one) into *b
 * (cleared by the caller, also after a failure).  A sandbox that does not
 * run: its attributes only.  -1: NOT_FOUND when it is not one of the
 * shim's sandboxes (or vanished meanwhile), or the engine's failure. */
static int sandbox_stat_collect(struct dockershim *s, const char *id, struct sandbox_stat *b,
                                ck_error_t *err)
{
        *b = (struct sandbox_stat){0};
        if (shim_inspect_own(s, id, SHIM_TYPE_SANDBOX, "pod sandbox", &b->info, &b->name, err) < 0)
                return -1;
        b->have_info = true;
        runtime__v1__pod_sandbox_stats__init(&b->stats);
        runtime__v1__pod_sandbox_attributes__init(&b->attributes);
        runtime__v1__pod_sandbox_metadata__init(&b->metadata);
        b->metadata.name = b->name.pod;
        b->metadata.namespace_ = b->name.ns;
        b->metadata.uid = b->name.uid;
        b->metadata.attempt = b->name.attempt;
        b->attributes.id = b->info.id;
        b->attributes.metadata = &b->metadata;
        shim_split_labels(b->info.labels,
                          &runtime__v1__pod_sandbox_attributes__labels_entry__descriptor,
                          &runtime__v1__pod_sandbox_attributes__annotations_entry__descriptor,
                          &b->labels, &b->annotations);
        b->attributes.n_labels = b->labels.n;
        b->attributes.labels = (Runtime__V1__PodSandboxAttributes__LabelsEntry **)b->labels.entries;
        b->attributes.n_annotations = b->annotations.n;
        b->attributes.annotations =
            (Runtime__V1__PodSandboxAttributes__AnnotationsEntry **)b->annotations.entries;
        b->stats.attributes = &b->attributes;
        if (!b->info.running)
                return 0;

        struct docker_stats pause;
        if (docker_container_stats(s->docker, b->info.id, &pause, err) < 0)
                return dockershim_fail(err);
        if (shim_container_stats_collect(s, NULL, b->info.id, NULL, 0, &b->containers, err) < 0)
                return -1;
        struct usage_sum u = {0};
        usage_add(&u, &pause);
        for (size_t i = 0; i < b->containers.n; i++)
                usage_add(&u, &b->containers.items[i].raw);

        runtime__v1__linux_pod_sandbox_stats__init(&b->linux);
        runtime__v1__cpu_usage__init(&b->cpu);
        b->cpu.timestamp = u.newest_ns;
        set_value(&b->cpu_ns, u.cpu_ns);
        b->cpu.usage_core_nano_seconds = &b->cpu_ns;
        b->linux.cpu = &b->cpu;
        if (u.has_memory) {
                runtime__v1__memory_usage__init(&b->memory);
                b->memory.timestamp = u.newest_ns;
                set_value(&b->mem_usage, u.mem_usage);
                set_value(&b->mem_working_set, u.mem_working_set);
                b->memory.usage_bytes = &b->mem_usage;
                b->memory.working_set_bytes = &b->mem_working_set;
                b->linux.memory = &b->memory;
        }
        if (u.has_pids) {
                runtime__v1__process_usage__init(&b->process);
                b->process.timestamp = u.newest_ns;
                set_value(&b->processes, u.pids);
                b->process.process_count = &b->processes;
                b->linux.process = &b->process;
        }
        /* a pod on the host's network has no interfaces of its own (nor
         * does containerd report any for it) */
        if (b->info.network_mode == NULL || strcmp(b->info.network_mode, "host") != 0)
                sandbox_network(s, b);
        b->linux.n_containers = b->containers.n;
        b->linux.containers = b->containers.stats;
        b->stats.linux = &b->linux;
        return 0;
}

int dockershim_pod_sandbox_stats(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                                 uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        (void)timeout_ms;
        struct dockershim *s = ctx;
        Runtime__V1__PodSandboxStatsRequest *in =
            runtime__v1__pod_sandbox_stats_request__unpack(NULL, len, req);
        if (in == NULL)
                return bad_request(err, "PodSandboxStats");
        cleanup_free char *id = xstrdup(in->pod_sandbox_id ? in->pod_sandbox_id : "");
        runtime__v1__pod_sandbox_stats_request__free_unpacked(in, NULL);
        if (*id == '\0')
                return ck_error_make_code(err, GRPC_INVALID_ARGUMENT,
                                          "PodSandboxStats: no pod sandbox ID");
        struct sandbox_stat b;
        int rc = sandbox_stat_collect(s, id, &b, err);
        if (rc == 0) {
                Runtime__V1__PodSandboxStatsResponse r =
                    RUNTIME__V1__POD_SANDBOX_STATS_RESPONSE__INIT;
                r.stats = &b.stats;
                dockershim_pack(&r.base, resp, resp_len);
        }
        sandbox_stat_clear(&b);
        return rc;
}

int dockershim_list_pod_sandbox_stats(void *ctx, const uint8_t *req, size_t len, int64_t timeout_ms,
                                      uint8_t **resp, size_t *resp_len, ck_error_t *err)
{
        (void)timeout_ms;
        struct dockershim *s = ctx;
        Runtime__V1__ListPodSandboxStatsRequest *in =
            runtime__v1__list_pod_sandbox_stats_request__unpack(NULL, len, req);
        if (in == NULL)
                return bad_request(err, "ListPodSandboxStats");
        /* the running sandboxes ListPodSandbox would list for this filter
         * (containerd's list leaves out those not ready too) */
        const Runtime__V1__PodSandboxStatsFilter *flt = in->filter;
        size_t nsel = flt ? flt->n_label_selector : 0;
        char **keys = xcalloc(nsel + 1, sizeof(char *)), **vals = xcalloc(nsel + 1, sizeof(char *));
        for (size_t i = 0; i < nsel; i++) {
                keys[i] = flt->label_selector[i]->key;
                vals[i] = flt->label_selector[i]->value;
        }
        json_t *filters = shim_filters(SHIM_TYPE_SANDBOX, flt ? flt->id : NULL, nsel, keys, vals);
        free(keys);
        free(vals);
        runtime__v1__list_pod_sandbox_stats_request__free_unpacked(in, NULL);
        struct docker_container_summary *v = NULL;
        size_t n = 0;
        int rc = docker_container_list(s->docker, false, filters, &v, &n, err);
        json_decref(filters);
        if (rc < 0)
                return dockershim_fail(err);
        struct sandbox_stat *items = xcalloc(n ? n : 1, sizeof(*items));
        Runtime__V1__PodSandboxStats **ptrs = xcalloc(n ? n : 1, sizeof(*ptrs));
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
                if (sandbox_stat_collect(s, v[i].id, &items[k], err) == 0) {
                        ptrs[k] = &items[k].stats;
                        k++;
                        continue;
                }
                sandbox_stat_clear(&items[k]);
                if ((*err)->code != GRPC_NOT_FOUND) {
                        rc = -1;
                        break;
                }
                /* removed meanwhile (or not one of ours after all) */
                LOG_INFO(4, "ListPodSandboxStats: sandbox left out",
                         "podSandboxID=\"%s\" err=\"%s\"", v[i].id, ck_error_msg(*err));
                ck_error_release(err);
        }
        if (rc == 0) {
                Runtime__V1__ListPodSandboxStatsResponse r =
                    RUNTIME__V1__LIST_POD_SANDBOX_STATS_RESPONSE__INIT;
                r.n_stats = k;
                r.stats = ptrs;
                dockershim_pack(&r.base, resp, resp_len);
        }
        for (size_t i = 0; i < k; i++)
                sandbox_stat_clear(&items[i]);
        free(items);
        free(ptrs);
        docker_container_summaries_free(v, n);
        return rc;
}
