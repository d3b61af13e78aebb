/* SPDX-License-Identifier: Apache-2.0 */
#include "images/image_gc.h"
#include "util/cleanup.h"
#include "util/goduration.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* upstream imageRecord; last_used_ms NEVER: not seen in use (the zero time
 * upstream, older than anything) */
#define NEVER INT64_MIN

struct record {
        char *id;
        int64_t first_detected_ms;
        int64_t last_used_ms;
        int64_t size;
        bool pinned;
};

struct image_gc {
        struct image_gc_policy policy;
        int64_t began_ms;
        struct record *records;
        size_t n_records, cap_records;
};

bool image_gc_policy_enabled(const struct image_gc_policy *p)
{
        return p->high_threshold_percent < 100 || p->max_age_ms != 0;
}

void image_gc_listing_release(struct image_gc_listing *l)
{
        for (size_t i = 0; i < l->n_images; i++)
                free(l->images[i].id);
        free(l->images);
        for (size_t i = 0; i < l->n_in_use; i++)
                free(l->in_use[i]);
        free(l->in_use);
        *l = (struct image_gc_listing){0};
}

struct image_gc *image_gc_new(const struct image_gc_policy *policy, int64_t began_ms)
{
        struct image_gc *gc = xcalloc(1, sizeof(*gc));
        gc->policy = *policy;
        gc->began_ms = began_ms;
        return gc;
}

void image_gc_free(struct image_gc *gc)
{
        if (gc == NULL)
                return;
        for (size_t i = 0; i < gc->n_records; i++)
                free(gc->records[i].id);
        free(gc->records);
        free(gc);
}

size_t image_gc_records(const struct image_gc *gc)
{
        return gc->n_records;
}

void image_gc_format_size(int64_t bytes, char *buf, size_t size)
{
        static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
        double v = (double)bytes;
        if (v < 1024) {
                snprintf(buf, size, "%" PRId64 " B", bytes);
                return;
        }
        size_t u = 0;
        v /= 1024;
        while (u + 1 < sizeof(units) / sizeof(units[0]) && v >= 1024) {
                v /= 1024;
                u++;
        }
        snprintf(buf, size, "%.1f %s", v, units[u]);
}

static struct record *find_record(struct image_gc *gc, const char *id)
{
        for (size_t i = 0; i < gc->n_records; i++)
                if (strcmp(gc->records[i].id, id) == 0)
                        return &gc->records[i];
        return NULL;
}

static bool listed(char *const *ids, size_t n, const char *id)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(ids[i], id) == 0)
                        return true;
        return false;
}

static void drop_record(struct image_gc *gc, const char *id)
{
        for (size_t i = 0; i < gc->n_records; i++) {
                if (strcmp(gc->records[i].id, id) != 0)
                        continue;
                free(gc->records[i].id);
                gc->records[i] = gc->records[--gc->n_records];
                return;
        }
}

/* upstream detectImages: new images are first detected now, those in use
 * were last used now, and images the runtime no longer has are forgotten. */
static void detect(struct image_gc *gc, const struct image_gc_listing *l, int64_t now_ms)
{
        for (size_t i = 0; i < l->n_images; i++) {
                const struct image_gc_image *im = &l->images[i];
                struct record *r = find_record(gc, im->id);
                if (r == NULL) {
                        if (gc->n_records == gc->cap_records) {
                                gc->cap_records = gc->cap_records ? 2 * gc->cap_records : 16;
                                gc->records = xrealloc(gc->records, gc->cap_records * sizeof(*r));
                        }
                        r = &gc->records[gc->n_records++];
                        *r = (struct record){.id = xstrdup(im->id),
                                             .first_detected_ms = now_ms,
                                             .last_used_ms = NEVER};
                        LOG_INFO(5, "Image ID is new", "imageID=\"%s\"", im->id);
                }
                if (listed(l->in_use, l->n_in_use, im->id))
                        r->last_used_ms = now_ms;
                r->size = im->size;
                r->pinned = im->pinned;
        }
        for (size_t i = 0; i < gc->n_records;) {
                bool present = false;
                for (size_t j = 0; j < l->n_images && !present; j++)
                        present = strcmp(l->images[j].id, gc->records[i].id) == 0;
                if (present) {
                        i++;
                        continue;
                }
                LOG_INFO(5, "Image ID is no longer present; removing from imageRecords",
                         "imageID=\"%s\"", gc->records[i].id);
                free(gc->records[i].id);
                gc->records[i] = gc->records[--gc->n_records];
        }
}

/* A copy of a record, the eviction candidate (upstream evictionInfo). */
struct candidate {
        char *id;
        int64_t first_detected_ms, last_used_ms, size;
};

static int by_last_used_and_detected(const void *a, const void *b)
{
        const struct candidate *x = a, *y = b;
        if (x->last_used_ms != y->last_used_ms)
                return x->last_used_ms < y->last_used_ms ? -1 : 1;
        if (x->first_detected_ms != y->first_detected_ms)
                return x->first_detected_ms < y->first_detected_ms ? -1 : 1;
        return strcmp(x->id, y->id);
}

/* upstream imagesInEvictionOrder: the images neither in use nor pinned,
 * least recently used first. */
static struct candidate *eviction_order(const struct image_gc *gc, const struct image_gc_listing *l,
                                        size_t *n_out)
{
        struct candidate *c = xcalloc(gc->n_records + 1, sizeof(*c));
        size_t n = 0;
        for (size_t i = 0; i < gc->n_records; i++) {
                const struct record *r = &gc->records[i];
                if (listed(l->in_use, l->n_in_use, r->id)) {
                        LOG_INFO(5, "Image ID is being used", "imageID=\"%s\"", r->id);
                        continue;
                }
                if (r->pinned) {
                        LOG_INFO(5, "Image is pinned, skipping garbage collection",
                                 "imageID=\"%s\"", r->id);
                        continue;
                }
                c[n++] = (struct candidate){.id = xstrdup(r->id),
                                            .first_detected_ms = r->first_detected_ms,
                                            .last_used_ms = r->last_used_ms,
                                            .size = r->size};
        }
        qsort(c, n, sizeof(*c), by_last_used_and_detected);
        *n_out = n;
        return c;
}

/* upstream's errors.NewAggregate text: one message alone, several in [a, b] */
struct aggregate {
        char *text;
        size_t n;
};

static void aggregate_add(struct aggregate *a, ck_error_t e)
{
        char *old = a->text;
        a->text = old ? xasprintf("%s, %s", old, ck_error_msg(e)) : xstrdup(ck_error_msg(e));
        free(old);
        a->n++;
}

static char *aggregate_take(struct aggregate *a)
{
        char *s = a->n > 1 ? xasprintf("[%s]", a->text) : a->text;
        if (a->n > 1)
                free(a->text);
        a->text = NULL;
        return s;
}

static int free_image(struct image_gc *gc, const struct image_gc_ops *ops,
                      const struct candidate *c, const char *reason, ck_error_t *err)
{
        LOG_INFO(0, "Removing image to free bytes", "imageID=\"%s\" size=%" PRId64, c->id, c->size);
        if (ops->remove(ops->ctx, c->id, err) < 0)
                return -1;
        drop_record(gc, c->id);
        if (ops->removed)
                ops->removed(ops->ctx, reason);
        return 0;
}

static bool older_than(int64_t now_ms, int64_t then_ms, int64_t age_ms)
{
        return then_ms == NEVER || now_ms - then_ms > age_ms;
}

/* upstream freeOldImages: once max age has passed since collection began,
 * the images unused for longer.  Removed candidates are marked (id NULL). */
static int free_old_images(struct image_gc *gc, const struct image_gc_ops *ops, struct candidate *c,
                           size_t n, int64_t now_ms, ck_error_t *err)
{
        int64_t max_age = gc->policy.max_age_ms;
        if (max_age == 0 || now_ms - gc->began_ms <= max_age)
                return 0;
        struct aggregate agg = {0};
        for (size_t i = 0; i < n; i++) {
                LOG_INFO(5,
                         "Evaluating image ID for possible garbage collection based on image age",
                         "imageID=\"%s\"", c[i].id);
                if (!older_than(now_ms, c[i].last_used_ms, max_age))
                        continue;
                cleanup_error ck_error_t e = NULL;
                if (free_image(gc, ops, &c[i], "age", &e) < 0) {
                        aggregate_add(&agg, e);
                        continue;
                }
                free(c[i].id);
                c[i].id = NULL;
        }
        if (agg.n == 0)
                return 0;
        char max_s[64];
        go_duration_format_ms(max_age, max_s, sizeof(max_s));
        cleanup_free char *why = aggregate_take(&agg);
        return ck_error_make(err, 0,
                             "wanted to free images older than %s, encountered errors in image "
                             "deletion: %s",
                             max_s, why);
}

/* upstream freeSpace: unused images old enough, in eviction order, until
 * bytes_to_free are freed.  *freed: what was. */
static int free_space(struct image_gc *gc, const struct image_gc_ops *ops, struct candidate *c,
                      size_t n, int64_t bytes_to_free, int64_t now_ms, int64_t *freed,
                      ck_error_t *err)
{
        struct aggregate agg = {0};
        *freed = 0;
        for (size_t i = 0; i < n && *freed < bytes_to_free; i++) {
                if (c[i].id == NULL)
                        continue;
                LOG_INFO(5,
                         "Evaluating image ID for possible garbage collection based on disk usage",
                         "imageID=\"%s\"", c[i].id);
                if (now_ms - c[i].first_detected_ms < gc->policy.min_age_ms) {
                        LOG_INFO(5,
                                 "Image ID's age is less than the policy's minAge, not eligible "
                                 "for garbage collection",
                                 "imageID=\"%s\" ageMs=%" PRId64 " minAgeMs=%" PRId64, c[i].id,
                                 now_ms - c[i].first_detected_ms, gc->policy.min_age_ms);
                        continue;
                }
                cleanup_error ck_error_t e = NULL;
                if (free_image(gc, ops, &c[i], "space", &e) < 0) {
                        aggregate_add(&agg, e);
                        continue;
                }
                *freed += c[i].size;
        }
        if (agg.n == 0)
                return 0;
        cleanup_free char *why = aggregate_take(&agg);
        return ck_error_make(err, 0,
                             "wanted to free %" PRId64 " bytes, but freed %" PRId64
                             " bytes space with errors in image deletion: %s",
                             bytes_to_free, *freed, why);
}

static void free_candidates(struct candidate *c, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(c[i].id);
        free(c);
}

/* upstream imagesInEvictionOrder: the runtime listed, the records
 * updated, the candidates in order */
static int images_in_eviction_order(struct image_gc *gc, const struct image_gc_ops *ops,
                                    int64_t now_ms, struct candidate **c, size_t *n,
                                    ck_error_t *err)
{
        struct image_gc_listing l = {0};
        if (ops->list(ops->ctx, &l, err) < 0) {
                image_gc_listing_release(&l);
                return -1;
        }
        detect(gc, &l, now_ms);
        *c = eviction_order(gc, &l, n);
        image_gc_listing_release(&l);
        return 0;
}

int image_gc_collect(struct image_gc *gc, const struct image_gc_ops *ops, int64_t now_ms,
                     ck_error_t *err)
{
        size_t n = 0;
        struct candidate *c = NULL;
        if (images_in_eviction_order(gc, ops, now_ms, &c, &n, err) < 0)
                return -1;
        int ret = free_old_images(gc, ops, c, n, now_ms, err);
        if (ret < 0)
                goto out;

        int64_t capacity = 0, available = 0;
        if ((ret = ops->fs(ops->ctx, &capacity, &available, err)) < 0)
                goto out;
        if (available > capacity) {
                LOG_INFO(0, "Availability is larger than capacity",
                         "available=%" PRId64 " capacity=%" PRId64, available, capacity);
                available = capacity;
        }
        if (capacity <= 0) {
                static const char msg[] = "invalid capacity 0 on image filesystem";
                if (ops->event)
                        ops->event(ops->ctx, "InvalidDiskCapacity", msg);
                ret = ck_error_make(err, 0, "%s", msg);
                goto out;
        }
        int usage = 100 - (int)(available * 100 / capacity);
        if (usage < gc->policy.high_threshold_percent)
                goto out;
        int64_t to_free = capacity * (100 - gc->policy.low_threshold_percent) / 100 - available;
        LOG_INFO(0,
                 "Disk usage on image filesystem is over the high threshold, trying to free "
                 "bytes down to the low threshold",
                 "usage=%d highThreshold=%d amountToFree=%" PRId64 " lowThreshold=%d", usage,
                 gc->policy.high_threshold_percent, to_free, gc->policy.low_threshold_percent);
        int64_t freed = 0;
        if ((ret = free_space(gc, ops, c, n, to_free, now_ms, &freed, err)) < 0)
                goto out;
        if (freed < to_free) {
                char cap_s[32];
                image_gc_format_size(capacity, cap_s, sizeof(cap_s));
                cleanup_free char *msg = xasprintf(
                    "Insufficient free disk space on the node's image filesystem (%d%% of %s "
                    "used). Failed to free sufficient space by deleting unused images (freed "
                    "%" PRId64 " bytes). Investigate disk usage, as it could be used by active "
                    "images, logs, volumes, or other data.",
                    usage, cap_s, freed);
                if (ops->event)
                        ops->event(ops->ctx, "FreeDiskSpaceFailed", msg);
                ret = ck_error_make(err, 0, "%s", msg);
        }
out:
        free_candidates(c, n);
        return ret;
}

int image_gc_delete_unused(struct image_gc *gc, const struct image_gc_ops *ops, int64_t now_ms,
                           ck_error_t *err)
{
        LOG_INFO(0, "Attempting to delete unused images");
        size_t n = 0;
        struct candidate *c = NULL;
        if (images_in_eviction_order(gc, ops, now_ms, &c, &n, err) < 0)
                return -1;
        int64_t freed = 0;
        int ret = free_space(gc, ops, c, n, INT64_MAX, now_ms, &freed, err);
        free_candidates(c, n);
        return ret;
}
