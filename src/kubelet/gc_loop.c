/* SPDX-License-Identifier: Apache-2.0 */
#include "kubelet/gc_loop.h"
#include "client/events.h"
#include "config/kubeletconfig.h"
#include "cri/cri.h"
#include "kuberuntime/runtime.h"
#include "metrics/kubelet_metrics.h"
#include "stats/stats.h"
#include "util/cleanup.h"
#include "util/fsutil.h"
#include "util/goduration.h"
#include "util/log.h"
#include "util/sleep.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* upstream ContainerGCPeriod */
#define CONTAINER_GC_PERIOD_MS 60000

struct gc_loop {
        struct kuberuntime *rt;
        bool containers; /* a node-wide limit to keep */
        bool images;     /* periodic image GC (the records exist anyway: reclaim) */
        /* held by a collection or a reclaim: the CRI clients and the image
         * records are used by one of them at a time */
        pthread_mutex_t work_lock;
        bool container_failed_before;
        struct image_gc *gc;                /* NULL: image GC off */
        struct cri_client *runtime, *image; /* image == runtime with one endpoint */
        char *pod_infra_image;
        char *node_name;
        struct event_recorder *recorder;
        int64_t image_period_ms, container_period_ms;
        bool failed_before; /* upstream prevImageGCFailed */

        pthread_t thread;
        pthread_mutex_t lock;
        pthread_cond_t cond;
        atomic_bool stop;
};

static void add_in_use(struct image_gc_listing *l, size_t *cap, const char *id)
{
        if (id == NULL || *id == '\0')
                return;
        if (l->n_in_use == *cap) {
                *cap = *cap ? 2 * *cap : 16;
                l->in_use = xrealloc(l->in_use, *cap * sizeof(*l->in_use));
        }
        l->in_use[l->n_in_use++] = xstrdup(id);
}

/* The ID of an image named name, or NULL when the runtime has none. */
static char *image_id_of(struct gc_loop *g, const char *name)
{
        Runtime__V1__ImageStatusResponse *r = NULL;
        cleanup_error ck_error_t e = NULL;
        if (cri_image_status(g->image, name, &r, &e) < 0) {
                LOG_INFO(2, "Cannot resolve the sandbox image", "image=\"%s\" err=\"%s\"", name,
                         ck_error_msg(e));
                return NULL;
        }
        char *id = r->image ? xstrdup(r->image->id) : NULL;
        runtime__v1__image_status_response__free_unpacked(r, NULL);
        return id;
}

/* containerd's verbose Status: info["config"] is its CRI configuration,
 * whose sandboxImage names the pause image.  NULL when the runtime says
 * nothing of it. */
static char *runtime_sandbox_image(struct gc_loop *g)
{
        Runtime__V1__StatusResponse *r = NULL;
        cleanup_error ck_error_t e = NULL;
        if (cri_status_verbose(g->runtime, &r, &e) < 0) {
                LOG_INFO(2, "Cannot read the runtime's sandbox image", "err=\"%s\"",
                         ck_error_msg(e));
                return NULL;
        }
        char *name = NULL;
        for (size_t i = 0; i < r->n_info && name == NULL; i++) {
                if (r->info[i]->key == NULL || strcmp(r->info[i]->key, "config") != 0 ||
                    r->info[i]->value == NULL)
                        continue;
                json_t *cfg = json_loads(r->info[i]->value, 0, NULL);
                const char *s = json_string_value(json_object_get(cfg, "sandboxImage"));
                if (s && *s)
                        name = xstrdup(s);
                json_decref(cfg);
        }
        runtime__v1__status_response__free_unpacked(r, NULL);
        return name;
}

static void add_sandbox_images(struct gc_loop *g, struct image_gc_listing *l, size_t *cap)
{
        cleanup_free char *name = runtime_sandbox_image(g);
        const char *names[] = {name, g->pod_infra_image};
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                if (names[i] == NULL)
                        continue;
                cleanup_free char *id = image_id_of(g, names[i]);
                add_in_use(l, cap, id);
        }
}

static int gc_list(void *ctx, struct image_gc_listing *out, ck_error_t *err)
{
        struct gc_loop *g = ctx;
        Runtime__V1__ListImagesResponse *li = NULL;
        if (cri_list_images(g->image, &li, err) < 0)
                return ck_error_wrap(err, "failed to list images");
        out->images = xcalloc(li->n_images + 1, sizeof(*out->images));
        for (size_t i = 0; i < li->n_images; i++) {
                const Runtime__V1__Image *im = li->images[i];
                if (im->id == NULL || *im->id == '\0')
                        continue;
                out->images[out->n_images++] = (struct image_gc_image){
                    .id = xstrdup(im->id), .size = (int64_t)im->size, .pinned = im->pinned};
        }
        runtime__v1__list_images_response__free_unpacked(li, NULL);

        Runtime__V1__ListContainersResponse *lc = NULL;
        if (cri_list_containers(g->runtime, NULL, &lc, err) < 0)
                return ck_error_wrap(err, "failed to list containers");
        size_t cap = 0;
        for (size_t i = 0; i < lc->n_containers; i++) {
                const Runtime__V1__Container *c = lc->containers[i];
                /* upstream's container.ImageID: the CRI image_ref */
                const char *ref = c->image_ref;
                if ((ref == NULL || *ref == '\0') && c->image)
                        ref = c->image->image;
                LOG_INFO(5, "Container uses image", "containerID=\"%s\" imageID=\"%s\"", c->id,
                         ref ? ref : "");
                add_in_use(out, &cap, ref);
        }
        runtime__v1__list_containers_response__free_unpacked(lc, NULL);
        add_sandbox_images(g, out, &cap);
        return 0;
}

static int gc_remove(void *ctx, const char *id, ck_error_t *err)
{
        struct gc_loop *g = ctx;
        return cri_remove_image(g->image, id, err);
}

static int gc_fs(void *ctx, int64_t *capacity, int64_t *available, ck_error_t *err)
{
        struct gc_loop *g = ctx;
        struct stats_image_fs fs;
        if (stats_image_fs(g->image, &fs, err) < 0)
                return -1;
        if (!fs.fs_ok)
                return ck_error_make(err, 0,
                                     "failed to get imageFs stats: the image filesystem's "
                                     "capacity is unknown");
        *capacity = (int64_t)fs.fs.capacity;
        *available = (int64_t)fs.fs.available;
        return 0;
}

static void emit_node_warning(struct gc_loop *g, const char *reason, const char *message)
{
        /* upstream's nodeRef: the node name as uid */
        struct event_object obj = {.kind = "Node", .name = g->node_name, .uid = g->node_name};
        event_emit(g->recorder, &obj, EVENT_WARNING, reason, "%s", message);
}

static void gc_event(void *ctx, const char *reason, const char *message)
{
        emit_node_warning(ctx, reason, message);
}

static void gc_removed(void *ctx, const char *reason)
{
        (void)ctx;
        kmetrics_image_garbage_collected(reason);
}

/* One image collection, and upstream's reporting of its outcome. */
static void collect_images(struct gc_loop *g)
{
        const struct image_gc_ops ops = {.list = gc_list,
                                         .remove = gc_remove,
                                         .fs = gc_fs,
                                         .event = gc_event,
                                         .removed = gc_removed,
                                         .ctx = g};
        cleanup_error ck_error_t err = NULL;
        pthread_mutex_lock(&g->work_lock);
        int rc = image_gc_collect(g->gc, &ops, fs_now_mono_ms(), &err);
        pthread_mutex_unlock(&g->work_lock);
        if (rc < 0) {
                if (g->failed_before) {
                        LOG_ERROR("Image garbage collection failed multiple times in a row",
                                  "err=\"%s\"", ck_error_msg(err));
                        emit_node_warning(g, "ImageGCFailed", ck_error_msg(err));
                } else {
                        LOG_ERROR("Image garbage collection failed once. Stats initialization "
                                  "may not have completed yet",
                                  "err=\"%s\"", ck_error_msg(err));
                }
                g->failed_before = true;
                return;
        }
        LOG_INFO(g->failed_before ? 1 : 4, "Image garbage collection succeeded");
        g->failed_before = false;
}

/* One container collection (upstream's containerGC.GarbageCollect and its
 * reporting). */
static void collect_containers(struct gc_loop *g)
{
        cleanup_error ck_error_t err = NULL;
        pthread_mutex_lock(&g->work_lock);
        int rc = kuberuntime_gc_containers(g->rt, g->runtime, NULL, fs_now_real_ns(), &err);
        pthread_mutex_unlock(&g->work_lock);
        if (rc < 0) {
                LOG_ERROR("Container garbage collection failed", "err=\"%s\"", ck_error_msg(err));
                emit_node_warning(g, "ContainerGCFailed", ck_error_msg(err));
                g->container_failed_before = true;
                return;
        }
        LOG_INFO(g->container_failed_before ? 1 : 4, "Container garbage collection succeeded");
        g->container_failed_before = false;
}

static void *gc_thread(void *arg)
{
        struct gc_loop *g = arg;
        int64_t now = fs_now_mono_ms();
        int64_t next_containers = g->containers ? now : INT64_MAX;
        int64_t next_images = g->images ? now : INT64_MAX;
        for (;;) {
                now = fs_now_mono_ms();
                if (now >= next_containers) {
                        collect_containers(g);
                        next_containers = fs_now_mono_ms() + g->container_period_ms;
                }
                if (now >= next_images) {
                        collect_images(g);
                        next_images = fs_now_mono_ms() + g->image_period_ms;
                }
                int64_t next = next_containers < next_images ? next_containers : next_images;
                int64_t wait = next - fs_now_mono_ms();
                if (!sleep_unless_stopped(&g->lock, &g->cond, &g->stop, wait > 0 ? wait : 0))
                        return NULL;
        }
}

/* CKUBELET_GC_PERIOD: both periods (tests); 0 when unset. */
static int period_of_environment(int64_t *ms, ck_error_t *err)
{
        const char *v = getenv("CKUBELET_GC_PERIOD");
        *ms = 0;
        if (v == NULL || *v == '\0')
                return 0;
        if (config_parse_duration(v, ms, err) < 0)
                return ck_error_wrap(err, "CKUBELET_GC_PERIOD");
        if (*ms <= 0)
                return ck_error_make(err, 0, "CKUBELET_GC_PERIOD %s must be positive", v);
        LOG_INFO(0, "Garbage collection periods from the environment", "CKUBELET_GC_PERIOD=\"%s\"",
                 v);
        return 0;
}

int gc_loop_start(const struct gc_loop_options *o, struct gc_loop **out, ck_error_t *err)
{
        *out = NULL;
        bool images = image_gc_policy_enabled(&o->policy);
        if (!images)
                LOG_INFO(2, "ImageGCHighThresholdPercent is set 100 and ImageMaximumGCAge is 0, "
                            "Disable image GC");
        int64_t period = 0;
        if (period_of_environment(&period, err) < 0)
                return -1;
        struct gc_loop *g = xcalloc(1, sizeof(*g));
        g->rt = o->rt;
        g->containers = o->container_limit;
        g->images = images;
        g->image_period_ms = period ? period : IMAGE_GC_PERIOD_MS;
        g->container_period_ms = period ? period : CONTAINER_GC_PERIOD_MS;
        g->gc = image_gc_new(&o->policy, fs_now_mono_ms());
        g->runtime = cri_client_new(o->runtime_endpoint, o->runtime_timeout_ms);
        g->image = o->image_endpoint && *o->image_endpoint &&
                           strcmp(o->image_endpoint, o->runtime_endpoint) != 0
                       ? cri_client_new(o->image_endpoint, o->runtime_timeout_ms)
                       : g->runtime;
        g->pod_infra_image =
            o->pod_infra_image && *o->pod_infra_image ? xstrdup(o->pod_infra_image) : NULL;
        g->node_name = xstrdup(o->node_name);
        g->recorder = o->recorder;
        pthread_mutex_init(&g->lock, NULL);
        pthread_mutex_init(&g->work_lock, NULL);
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&g->cond, &ca);
        pthread_condattr_destroy(&ca);
        int rc = g->images || g->containers ? pthread_create(&g->thread, NULL, gc_thread, g) : 0;
        if (rc != 0) {
                g->thread = 0;
                gc_loop_stop(g);
                return ck_error_make(err, rc, "garbage collection thread");
        }
        *out = g;
        return 0;
}

void gc_loop_stop(struct gc_loop *g)
{
        if (g == NULL)
                return;
        if (g->thread) {
                pthread_mutex_lock(&g->lock);
                atomic_store(&g->stop, true);
                pthread_cond_broadcast(&g->cond);
                pthread_mutex_unlock(&g->lock);
                pthread_join(g->thread, NULL);
        }
        if (g->image != g->runtime)
                cri_client_free(g->image);
        cri_client_free(g->runtime);
        image_gc_free(g->gc);
        free(g->pod_infra_image);
        free(g->node_name);
        pthread_mutex_destroy(&g->lock);
        pthread_mutex_destroy(&g->work_lock);
        pthread_cond_destroy(&g->cond);
        free(g);
}

int gc_loop_reclaim(struct gc_loop *g, ck_error_t *err)
{
        const struct image_gc_ops ops = {.list = gc_list,
                                         .remove = gc_remove,
                                         .fs = gc_fs,
                                         .event = gc_event,
                                         .removed = gc_removed,
                                         .ctx = g};
        /* upstream DeleteAllUnusedContainers: the dead containers the policy
         * does not keep (at least the newest of each: its restart count and
         * last state), then DeleteUnusedImages */
        struct container_gc_policy all = *kuberuntime_options_gc(g->rt);
        if (all.max_per_pod_container == 0)
                all.max_per_pod_container = 1;
        pthread_mutex_lock(&g->work_lock);
        int rc = kuberuntime_gc_containers(g->rt, g->runtime, &all, fs_now_real_ns(), err);
        if (rc < 0)
                ck_error_wrap(err, "failed to garbage collect containers");
        cleanup_error ck_error_t e = NULL;
        if (image_gc_delete_unused(g->gc, &ops, fs_now_mono_ms(), &e) < 0 && rc == 0) {
                rc = -1;
                *err = e;
                e = NULL;
                ck_error_wrap(err, "failed to delete unused images");
        }
        pthread_mutex_unlock(&g->work_lock);
        return rc;
}
