/* SPDX-License-Identifier: Apache-2.0 */
/* Per-key exponential backoff (util/backoff.h), against upstream
 * flowcontrol.Backoff's behaviour with a fake clock. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "util/backoff.h"

#include <pthread.h>
#include <stdio.h>

#define S 1000 /* one second in ms */

static void test_unknown_key_is_not_in_backoff(void **state)
{
        (void)state;
        struct backoff *b = backoff_new(10 * S, 300 * S);
        assert_false(backoff_is_in_backoff_since(b, "pod/c", 0, 1));
        assert_false(backoff_is_in_backoff_since_update(b, "pod/c", 1));
        assert_int_equal(backoff_get(b, "pod/c"), 0);
        backoff_free(b);
}

static void test_delay_doubles_to_the_maximum(void **state)
{
        (void)state;
        struct backoff *b = backoff_new(10 * S, 300 * S);
        const int64_t want[] = {10, 20, 40, 80, 160, 300, 300};
        int64_t now = 1000 * S;
        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
                backoff_next(b, "k", now);
                assert_int_equal(backoff_get(b, "k"), want[i] * S);
                now += want[i] * S; /* the next failure comes right after the delay */
        }
        backoff_free(b);
}

static void test_in_backoff_since_event(void **state)
{
        (void)state;
        struct backoff *b = backoff_new(10 * S, 300 * S);
        int64_t finished = 500 * S;
        backoff_next(b, "k", finished);
        /* 10 s from the container's finish time */
        assert_true(backoff_is_in_backoff_since(b, "k", finished, finished + 1));
        assert_true(backoff_is_in_backoff_since(b, "k", finished, finished + 10 * S - 1));
        assert_false(backoff_is_in_backoff_since(b, "k", finished, finished + 10 * S));
        /* another key is independent */
        assert_false(backoff_is_in_backoff_since(b, "other", finished, finished + 1));
        backoff_free(b);
}

static void test_in_backoff_since_update(void **state)
{
        (void)state;
        struct backoff *b = backoff_new(10 * S, 300 * S);
        backoff_next(b, "uid/busybox:1", 100 * S);
        assert_true(backoff_is_in_backoff_since_update(b, "uid/busybox:1", 109 * S));
        assert_false(backoff_is_in_backoff_since_update(b, "uid/busybox:1", 110 * S));
        backoff_next(b, "uid/busybox:1", 110 * S);
        assert_true(backoff_is_in_backoff_since_update(b, "uid/busybox:1", 129 * S));
        assert_false(backoff_is_in_backoff_since_update(b, "uid/busybox:1", 130 * S));
        backoff_free(b);
}

/* The kubelet's "10 minutes of clean running" resets the crash loop delay. */
static void test_entry_resets_after_twice_the_maximum(void **state)
{
        (void)state;
        struct backoff *b = backoff_new(10 * S, 300 * S);
        int64_t now = 0;
        for (int i = 0; i < 4; i++)
                backoff_next(b, "k", now += S);
        assert_int_equal(backoff_get(b, "k"), 80 * S);
        /* an event 600 s after the last update is still in the same series */
        assert_true(backoff_is_in_backoff_since(b, "k", now + 599 * S, now + 600 * S));
        /* past 2 * max the entry is stale: not in backoff, and next starts over */
        assert_false(backoff_is_in_backoff_since(b, "k", now + 601 * S, now + 602 * S));
        backoff_next(b, "k", now + 601 * S);
        assert_int_equal(backoff_get(b, "k"), 10 * S);
        backoff_free(b);
}

static void test_reset_and_gc_forget_keys(void **state)
{
        (void)state;
        struct backoff *b = backoff_new(10 * S, 300 * S);
        backoff_next(b, "old", 0);
        backoff_next(b, "fresh", 500 * S);
        backoff_next(b, "gone", 500 * S);
        backoff_reset(b, "gone");
        assert_int_equal(backoff_get(b, "gone"), 0);
        backoff_gc(b, 601 * S);
        assert_int_equal(backoff_get(b, "old"), 0);
        assert_int_equal(backoff_get(b, "fresh"), 10 * S);
        backoff_free(b);
}

/* Many keys, inserted out of order, each found again (the sorted table). */
static void test_many_keys(void **state)
{
        (void)state;
        struct backoff *b = backoff_new(10, 1000);
        char key[32];
        for (int i = 0; i < 500; i++) {
                snprintf(key, sizeof(key), "k%d", (i * 7919) % 500);
                backoff_next(b, key, 0);
                if (i % 3 == 0)
                        backoff_next(b, key, 1);
        }
        for (int i = 0; i < 500; i++) {
                snprintf(key, sizeof(key), "k%d", (i * 7919) % 500);
                assert_int_equal(backoff_get(b, key), i % 3 == 0 ? 20 : 10);
        }
        for (int i = 0; i < 500; i += 2) {
                snprintf(key, sizeof(key), "k%d", (i * 7919) % 500);
                backoff_reset(b, key);
        }
        for (int i = 0; i < 500; i++) {
                snprintf(key, sizeof(key), "k%d", (i * 7919) % 500);
                assert_int_equal(backoff_get(b, key), i % 2 == 0 ? 0 : (i % 3 == 0 ? 20 : 10));
        }
        backoff_free(b);
}

struct thread_arg {
        struct backoff *b;
        int id;
};

static void *hammer(void *p)
{
        struct thread_arg *a = p;
        char key[32];
        for (int i = 0; i < 2000; i++) {
                snprintf(key, sizeof(key), "t%d-%d", a->id, i % 50);
                backoff_next(a->b, key, i);
                (void)backoff_is_in_backoff_since(a->b, key, i, i + 1);
                if (i % 100 == 0)
                        backoff_gc(a->b, i);
        }
        return NULL;
}

static void test_concurrent_use(void **state)
{
        (void)state;
        struct backoff *b = backoff_new(10, 1 << 30);
        pthread_t t[4];
        struct thread_arg args[4];
        for (int i = 0; i < 4; i++) {
                args[i] = (struct thread_arg){b, i};
                pthread_create(&t[i], NULL, hammer, &args[i]);
        }
        for (int i = 0; i < 4; i++)
                pthread_join(t[i], NULL);
        /* each key saw 40 failures: the delay is capped at the maximum */
        assert_int_equal(backoff_get(b, "t3-7"), 1 << 30);
        backoff_free(b);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_unknown_key_is_not_in_backoff),
            cmocka_unit_test(test_delay_doubles_to_the_maximum),
            cmocka_unit_test(test_in_backoff_since_event),
            cmocka_unit_test(test_in_backoff_since_update),
            cmocka_unit_test(test_entry_resets_after_twice_the_maximum),
            cmocka_unit_test(test_reset_and_gc_forget_keys),
            cmocka_unit_test(test_many_keys),
            cmocka_unit_test(test_concurrent_use),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
