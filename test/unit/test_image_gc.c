/* SPDX-License-Identifier: Apache-2.0 */
/* The image garbage collector's decisions (images/image_gc.h) against a
 * fake runtime and filesystem, as upstream's image_gc_manager_test.go:
 * thresholds, eviction order, minimum and maximum age, in-use and pinned
 * images, failures and their messages. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "images/image_gc.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define MAX 16

struct fake {
        struct {
                const char *id;
                int64_t size;
                bool pinned;
        } images[MAX];
        size_t n_images;
        const char *in_use[MAX];
        size_t n_in_use;
        int64_t capacity, available;
        bool list_fails, fs_fails;
        const char *remove_fails; /* this ID's removal fails */
        /* what happened */
        char removed[MAX][32];
        char removed_reason[MAX][8];
        size_t n_removed;
        char event_reason[64];
        char event_message[512];
        size_t n_events;
};

static void fake_image(struct fake *f, const char *id, int64_t size, bool pinned)
{
        f->images[f->n_images].id = id;
        f->images[f->n_images].size = size;
        f->images[f->n_images].pinned = pinned;
        f->n_images++;
}

static int f_list(void *ctx, struct image_gc_listing *out, ck_error_t *err)
{
        struct fake *f = ctx;
        if (f->list_fails)
                return ck_error_make(err, 0, "failed to list images: runtime away");
        out->images = xcalloc(f->n_images + 1, sizeof(*out->images));
        for (size_t i = 0; i < f->n_images; i++)
                out->images[out->n_images++] = (struct image_gc_image){
                    xstrdup(f->images[i].id), f->images[i].size, f->images[i].pinned};
        out->in_use = xcalloc(f->n_in_use + 1, sizeof(char *));
        for (size_t i = 0; i < f->n_in_use; i++)
                out->in_use[out->n_in_use++] = xstrdup(f->in_use[i]);
        return 0;
}

static int f_remove(void *ctx, const char *id, ck_error_t *err)
{
        struct fake *f = ctx;
        if (f->remove_fails && strcmp(id, f->remove_fails) == 0)
                return ck_error_make(err, 0, "remove %s: device busy", id);
        /* the runtime no longer has it: its space is free */
        for (size_t i = 0; i < f->n_images; i++) {
                if (strcmp(f->images[i].id, id) != 0)
                        continue;
                f->available += f->images[i].size;
                f->images[i] = f->images[--f->n_images];
                break;
        }
        strcpy(f->removed[f->n_removed++], id);
        return 0;
}

static int f_fs(void *ctx, int64_t *capacity, int64_t *available, ck_error_t *err)
{
        struct fake *f = ctx;
        if (f->fs_fails)
                return ck_error_make(err, 0, "failed to get imageFs stats: no mountpoint");
        *capacity = f->capacity;
        *available = f->available;
        return 0;
}

static void f_event(void *ctx, const char *reason, const char *message)
{
        struct fake *f = ctx;
        strcpy(f->event_reason, reason);
        strcpy(f->event_message, message);
        f->n_events++;
}

static void f_removed(void *ctx, const char *reason)
{
        struct fake *f = ctx;
        strcpy(f->removed_reason[f->n_removed - 1], reason);
}

static struct image_gc_ops ops_of(struct fake *f)
{
        return (struct image_gc_ops){f_list, f_remove, f_fs, f_event, f_removed, f};
}

static const struct image_gc_policy default_policy = {85, 80, 0, 0};

static int collect(struct image_gc *gc, struct fake *f, int64_t now, char **msg)
{
        struct image_gc_ops ops = ops_of(f);
        ck_error_t err = NULL;
        int rc = image_gc_collect(gc, &ops, now, &err);
        if (msg)
                *msg = err ? xstrdup(ck_error_msg(err)) : NULL;
        ck_error_release(&err);
        return rc;
}

static void below_the_high_threshold_nothing_is_removed(void **state)
{
        (void)state;
        struct fake f = {.capacity = 1000, .available = 200}; /* 80% used */
        fake_image(&f, "sha256:a", 100, false);
        struct image_gc *gc = image_gc_new(&default_policy, 0);
        assert_int_equal(collect(gc, &f, 1000, NULL), 0);
        assert_int_equal(f.n_removed, 0);
        assert_int_equal(image_gc_records(gc), 1);
        image_gc_free(gc);
}

static void over_the_threshold_unused_images_go_down_to_the_low_one(void **state)
{
        (void)state;
        /* 90% used: free 1000 * 20% - 100 = 100 bytes */
        struct fake f = {.capacity = 1000, .available = 100};
        fake_image(&f, "sha256:used", 300, false);
        fake_image(&f, "sha256:pinned", 300, true);
        fake_image(&f, "sha256:a", 60, false);
        fake_image(&f, "sha256:b", 60, false);
        fake_image(&f, "sha256:c", 60, false);
        f.in_use[f.n_in_use++] = "sha256:used";
        struct image_gc *gc = image_gc_new(&default_policy, 0);
        assert_int_equal(collect(gc, &f, 1000, NULL), 0);
        /* never the image in use or the pinned one; two of 60 are enough */
        assert_int_equal(f.n_removed, 2);
        for (size_t i = 0; i < f.n_removed; i++) {
                assert_string_not_equal(f.removed[i], "sha256:used");
                assert_string_not_equal(f.removed[i], "sha256:pinned");
                assert_string_equal(f.removed_reason[i], "space");
        }
        assert_int_equal(f.n_events, 0);
        assert_int_equal(image_gc_records(gc), 3);
        image_gc_free(gc);
}

static void least_recently_used_first_then_first_detected(void **state)
{
        (void)state;
        struct fake f = {.capacity = 1000, .available = 1000};
        fake_image(&f, "sha256:old-user", 50, false);
        fake_image(&f, "sha256:recent-user", 50, false);
        struct image_gc *gc = image_gc_new(&default_policy, 0);
        /* t=10: both in use; t=20: only recent-user */
        f.in_use[0] = "sha256:old-user";
        f.in_use[1] = "sha256:recent-user";
        f.n_in_use = 2;
        assert_int_equal(collect(gc, &f, 10, NULL), 0);
        f.in_use[0] = "sha256:recent-user";
        f.n_in_use = 1;
        assert_int_equal(collect(gc, &f, 20, NULL), 0);
        /* t=30: a never used image appears; nothing in use; the disk fills */
        fake_image(&f, "sha256:never-used", 50, false);
        f.n_in_use = 0;
        f.available = 100; /* to free: 100 bytes, i.e. two images */
        assert_int_equal(collect(gc, &f, 30, NULL), 0);
        assert_int_equal(f.n_removed, 2);
        assert_string_equal(f.removed[0], "sha256:never-used");
        assert_string_equal(f.removed[1], "sha256:old-user");
        image_gc_free(gc);
}

static void images_younger_than_the_minimum_age_stay(void **state)
{
        (void)state;
        struct image_gc_policy p = {85, 80, 120000, 0};
        struct fake f = {.capacity = 1000, .available = 0};
        fake_image(&f, "sha256:a", 100, false);
        struct image_gc *gc = image_gc_new(&p, 0);
        char *msg = NULL;
        /* first seen now: too young, and not enough freed */
        assert_int_equal(collect(gc, &f, 1000, &msg), -1);
        assert_int_equal(f.n_removed, 0);
        assert_string_equal(f.event_reason, "FreeDiskSpaceFailed");
        assert_string_equal(msg, f.event_message);
        free(msg);
        /* two minutes later it is old enough (first detected kept) */
        f.available = 100;
        assert_int_equal(collect(gc, &f, 1000 + 120000, NULL), 0);
        assert_int_equal(f.n_removed, 1);
        image_gc_free(gc);
}

static void not_enough_freed_is_upstreams_warning(void **state)
{
        (void)state;
        int64_t gib = 1024LL * 1024 * 1024;
        struct fake f = {.capacity = 10 * gib, .available = gib}; /* 90% */
        fake_image(&f, "sha256:small", 1000, false);
        fake_image(&f, "sha256:used", gib, false);
        f.in_use[f.n_in_use++] = "sha256:used";
        struct image_gc *gc = image_gc_new(&default_policy, 0);
        char *msg = NULL;
        assert_int_equal(collect(gc, &f, 1000, &msg), -1);
        assert_int_equal(f.n_removed, 1);
        assert_string_equal(f.removed[0], "sha256:small");
        assert_int_equal(f.n_events, 1);
        assert_string_equal(f.event_reason, "FreeDiskSpaceFailed");
        assert_string_equal(
            msg, "Insufficient free disk space on the node's image filesystem (90% of 10.0 GiB "
                 "used). Failed to free sufficient space by deleting unused images (freed 1000 "
                 "bytes). Investigate disk usage, as it could be used by active images, logs, "
                 "volumes, or other data.");
        assert_string_equal(f.event_message, msg);
        free(msg);
        image_gc_free(gc);
}

static void a_capacity_of_zero_is_an_invalid_disk(void **state)
{
        (void)state;
        struct fake f = {.capacity = 0, .available = 0};
        fake_image(&f, "sha256:a", 100, false);
        struct image_gc *gc = image_gc_new(&default_policy, 0);
        char *msg = NULL;
        assert_int_equal(collect(gc, &f, 1000, &msg), -1);
        assert_string_equal(msg, "invalid capacity 0 on image filesystem");
        assert_string_equal(f.event_reason, "InvalidDiskCapacity");
        assert_int_equal(f.n_removed, 0);
        free(msg);
        image_gc_free(gc);
}

static void the_listing_or_the_filesystem_failing_removes_nothing(void **state)
{
        (void)state;
        struct fake f = {.capacity = 1000, .available = 0, .list_fails = true};
        fake_image(&f, "sha256:a", 100, false);
        struct image_gc *gc = image_gc_new(&default_policy, 0);
        char *msg = NULL;
        assert_int_equal(collect(gc, &f, 1000, &msg), -1);
        assert_string_equal(msg, "failed to list images: runtime away");
        free(msg);
        f.list_fails = false;
        f.fs_fails = true;
        assert_int_equal(collect(gc, &f, 1000, &msg), -1);
        assert_string_equal(msg, "failed to get imageFs stats: no mountpoint");
        assert_int_equal(f.n_removed, 0);
        assert_int_equal(f.n_events, 0);
        free(msg);
        image_gc_free(gc);
}

static void a_failed_removal_does_not_stop_the_others(void **state)
{
        (void)state;
        struct fake f = {.capacity = 1000, .available = 0, .remove_fails = "sha256:busy"};
        fake_image(&f, "sha256:busy", 100, false);
        fake_image(&f, "sha256:free", 100, false);
        struct image_gc *gc = image_gc_new(&default_policy, 0);
        char *msg = NULL;
        assert_int_equal(collect(gc, &f, 1000, &msg), -1);
        assert_int_equal(f.n_removed, 1);
        assert_string_equal(f.removed[0], "sha256:free");
        assert_string_equal(msg, "wanted to free 200 bytes, but freed 100 bytes space with "
                                 "errors in image deletion: remove sha256:busy: device busy");
        free(msg);
        /* the failed one is still on record, the removed one is not */
        assert_int_equal(image_gc_records(gc), 1);
        image_gc_free(gc);
}

static void the_maximum_age_counts_from_the_start_and_the_last_use(void **state)
{
        (void)state;
        struct image_gc_policy p = {100, 80, 0, 60000}; /* space off, 1 minute */
        assert_true(image_gc_policy_enabled(&p));
        struct fake f = {.capacity = 1000, .available = 1000};
        fake_image(&f, "sha256:never", 10, false);
        fake_image(&f, "sha256:user", 10, false);
        fake_image(&f, "sha256:running", 10, false);
        f.in_use[0] = "sha256:user";
        f.in_use[1] = "sha256:running";
        f.n_in_use = 2;
        struct image_gc *gc = image_gc_new(&p, 1000);
        assert_int_equal(collect(gc, &f, 2000, NULL), 0);
        /* user stops at t=2000; at t=50000 the collector is too young */
        f.in_use[0] = "sha256:running";
        f.n_in_use = 1;
        assert_int_equal(collect(gc, &f, 50000, NULL), 0);
        assert_int_equal(f.n_removed, 0);
        /* t=61001: a minute since the start: the never used one goes */
        assert_int_equal(collect(gc, &f, 61001, NULL), 0);
        assert_int_equal(f.n_removed, 1);
        assert_string_equal(f.removed[0], "sha256:never");
        assert_string_equal(f.removed_reason[0], "age");
        /* user goes once unused for more than a minute; running never */
        assert_int_equal(collect(gc, &f, 62000, NULL), 0);
        assert_int_equal(f.n_removed, 1);
        assert_int_equal(collect(gc, &f, 62001, NULL), 0);
        assert_int_equal(f.n_removed, 2);
        assert_string_equal(f.removed[1], "sha256:user");
        assert_int_equal(f.n_images, 1);
        image_gc_free(gc);
}

static void records_forget_images_the_runtime_no_longer_has(void **state)
{
        (void)state;
        struct fake f = {.capacity = 1000, .available = 1000};
        fake_image(&f, "sha256:a", 10, false);
        fake_image(&f, "sha256:b", 10, false);
        struct image_gc *gc = image_gc_new(&default_policy, 0);
        assert_int_equal(collect(gc, &f, 1, NULL), 0);
        assert_int_equal(image_gc_records(gc), 2);
        f.n_images = 1;
        assert_int_equal(collect(gc, &f, 2, NULL), 0);
        assert_int_equal(image_gc_records(gc), 1);
        image_gc_free(gc);
}

static void policy_and_sizes(void **state)
{
        (void)state;
        assert_true(image_gc_policy_enabled(&default_policy));
        struct image_gc_policy off = {100, 80, 0, 0};
        assert_false(image_gc_policy_enabled(&off));
        char b[32];
        image_gc_format_size(512, b, sizeof(b));
        assert_string_equal(b, "512 B");
        image_gc_format_size(1536, b, sizeof(b));
        assert_string_equal(b, "1.5 KiB");
        image_gc_format_size(3LL * 1024 * 1024 * 1024, b, sizeof(b));
        assert_string_equal(b, "3.0 GiB");
        image_gc_format_size(2LL * 1024 * 1024 * 1024 * 1024, b, sizeof(b));
        assert_string_equal(b, "2.0 TiB");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(below_the_high_threshold_nothing_is_removed),
            cmocka_unit_test(over_the_threshold_unused_images_go_down_to_the_low_one),
            cmocka_unit_test(least_recently_used_first_then_first_detected),
            cmocka_unit_test(images_younger_than_the_minimum_age_stay),
            cmocka_unit_test(not_enough_freed_is_upstreams_warning),
            cmocka_unit_test(a_capacity_of_zero_is_an_invalid_disk),
            cmocka_unit_test(the_listing_or_the_filesystem_failing_removes_nothing),
            cmocka_unit_test(a_failed_removal_does_not_stop_the_others),
            cmocka_unit_test(the_maximum_age_counts_from_the_start_and_the_last_use),
            cmocka_unit_test(records_forget_images_the_runtime_no_longer_has),
            cmocka_unit_test(policy_and_sizes),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
