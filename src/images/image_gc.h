/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Image garbage collection, as upstream's realImageGCManager
 * (pkg/kubelet/images/image_gc_manager.go).
 *
 * The manager keeps a record of every image the runtime has: when it was
 * first seen, when it was last seen in use, its size and whether the runtime
 * pins it.  A collection (image_gc_collect, upstream GarbageCollect):
 *
 *   1. lists the images and those in use, and updates the records;
 *   2. with a maximum age (imageMaximumGCAge), once that age has passed since
 *      the manager began, removes every image unused for longer (reason
 *      "age");
 *   3. reads the image filesystem; when its usage is at or above the high
 *      threshold, removes unused images, least recently used first (then
 *      first seen first), each at least the minimum age old, until usage is
 *      down to the low threshold (reason "space").  When that frees less
 *      than needed, a FreeDiskSpaceFailed warning about the node, and the
 *      collection fails with upstream's message.
 *
 * Never removed: an image in use (by any container, running or not, or as
 * the sandbox image: the caller's list says which) or pinned by the runtime.
 *
 * The runtime, the filesystem and the events are the caller's (struct
 * image_gc_ops): src/kubelet/gc.c wires them to the CRI, the stats provider
 * and the event recorder; the unit tests to fakes.
 *
 * Threading: a manager belongs to one thread.
 */
#ifndef CK_IMAGES_IMAGE_GC_H
#define CK_IMAGES_IMAGE_GC_H

#include "util/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* upstream ImageGCPeriod */
#define IMAGE_GC_PERIOD_MS (5 * 60 * 1000)

struct image_gc_policy {
        int32_t high_threshold_percent; /* imageGCHighThresholdPercent, 85 */
        int32_t low_threshold_percent;  /* imageGCLowThresholdPercent, 80 */
        int64_t min_age_ms;             /* imageMinimumGCAge, 2m */
        int64_t max_age_ms;             /* imageMaximumGCAge, 0: no age limit */
};

/* Whether a policy collects anything: upstream stubs the manager out when
 * the high threshold is 100 and there is no maximum age. */
bool image_gc_policy_enabled(const struct image_gc_policy *p);

/* One image of the runtime (CRI ListImages). */
struct image_gc_image {
        char *id;
        int64_t size;
        bool pinned;
};

/* What the runtime has now.  Filled by ops->list; released by the manager
 * (image_gc_listing_release). */
struct image_gc_listing {
        struct image_gc_image *images;
        size_t n_images;
        char **in_use; /* image IDs in use: containers' images, the sandbox image */
        size_t n_in_use;
};
void image_gc_listing_release(struct image_gc_listing *l);

struct image_gc_ops {
        int (*list)(void *ctx, struct image_gc_listing *out, ck_error_t *err);
        /* removes an image by ID */
        int (*remove)(void *ctx, const char *id, ck_error_t *err);
        /* the image filesystem's capacity and available bytes */
        int (*fs)(void *ctx, int64_t *capacity, int64_t *available, ck_error_t *err);
        /* a Warning event about the node (may be NULL) */
        void (*event)(void *ctx, const char *reason, const char *message);
        /* an image was removed, reason "age" or "space" (may be NULL) */
        void (*removed)(void *ctx, const char *reason);
        void *ctx;
};

struct image_gc;

/* began_ms: when collection began (the maximum age counts from it), on the
 * clock of the now_ms given to image_gc_collect. */
struct image_gc *image_gc_new(const struct image_gc_policy *policy, int64_t began_ms);
/* NULL-safe. */
void image_gc_free(struct image_gc *gc);

/* One collection at now_ms.  Errors: the listing or the filesystem failed
 * (nothing removed by space), "invalid capacity 0 on image filesystem"
 * (with an InvalidDiskCapacity event), removals that failed, or not enough
 * freed (upstream's "Insufficient free disk space on the node's image
 * filesystem (...)"). */
int image_gc_collect(struct image_gc *gc, const struct image_gc_ops *ops, int64_t now_ms,
                     ck_error_t *err);

/* upstream DeleteUnusedImages (the eviction manager's reclaim): every
 * unused, unpinned image at least the minimum age old, whatever the
 * thresholds.  Errors: the listing, or removals that failed. */
int image_gc_delete_unused(struct image_gc *gc, const struct image_gc_ops *ops, int64_t now_ms,
                           ck_error_t *err);

/* Tests: the number of images on record. */
size_t image_gc_records(const struct image_gc *gc);

/* upstream formatSize: "512 B", "1.5 KiB", "2.0 GiB". */
void image_gc_format_size(int64_t bytes, char *buf, size_t size);

#endif
