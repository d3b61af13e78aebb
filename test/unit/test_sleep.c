/* SPDX-License-Identifier: Apache-2.0 */
/* The interruptible sleeps (util/sleep.h): a sleep ends at its time, at a
 * stop, or (sleep_unless_woken) at a wake, which it clears; another signal
 * of the condition variable does not end it. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "util/fsutil.h"
#include "util/sleep.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

struct sleeper {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        atomic_bool stop, wake;
};

static void sleeper_init(struct sleeper *s)
{
        pthread_mutex_init(&s->lock, NULL);
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&s->cond, &ca);
        pthread_condattr_destroy(&ca);
        atomic_store(&s->stop, false);
        atomic_store(&s->wake, false);
}

static void sleeper_destroy(struct sleeper *s)
{
        pthread_cond_destroy(&s->cond);
        pthread_mutex_destroy(&s->lock);
}

/* 100 ms later: a plain signal, then 100 ms later *flag set and signalled */
struct poke {
        struct sleeper *s;
        atomic_bool *flag;
};

static void *poker(void *arg)
{
        struct poke *p = arg;
        sleep_ms(100);
        pthread_mutex_lock(&p->s->lock);
        pthread_cond_broadcast(&p->s->cond);
        pthread_mutex_unlock(&p->s->lock);
        sleep_ms(100);
        pthread_mutex_lock(&p->s->lock);
        atomic_store(p->flag, true);
        pthread_cond_broadcast(&p->s->cond);
        pthread_mutex_unlock(&p->s->lock);
        return NULL;
}

static void a_wake_ends_the_sleep_and_is_cleared(void **state)
{
        (void)state;
        struct sleeper s;
        sleeper_init(&s);
        struct poke p = {&s, &s.wake};
        pthread_t t;
        int64_t start = fs_now_mono_ms();
        assert_int_equal(pthread_create(&t, NULL, poker, &p), 0);
        /* not ended by the plain signal at 100 ms; ended by the wake at 200 */
        assert_true(sleep_unless_woken(&s.lock, &s.cond, &s.stop, &s.wake, 10000));
        int64_t took = fs_now_mono_ms() - start;
        pthread_join(t, NULL);
        assert_true(took >= 190 && took < 5000);
        assert_false(atomic_load(&s.wake));
        /* a wake that came before the sleep ends it at once */
        atomic_store(&s.wake, true);
        start = fs_now_mono_ms();
        assert_true(sleep_unless_woken(&s.lock, &s.cond, &s.stop, &s.wake, 10000));
        assert_true(fs_now_mono_ms() - start < 1000);
        /* without one: the whole time */
        start = fs_now_mono_ms();
        assert_true(sleep_unless_woken(&s.lock, &s.cond, &s.stop, &s.wake, 50));
        assert_true(fs_now_mono_ms() - start >= 50);
        sleeper_destroy(&s);
}

static void a_stop_ends_both_sleeps(void **state)
{
        (void)state;
        struct sleeper s;
        sleeper_init(&s);
        struct poke p = {&s, &s.stop};
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, poker, &p), 0);
        assert_false(sleep_unless_stopped(&s.lock, &s.cond, &s.stop, 10000));
        pthread_join(t, NULL);
        assert_false(sleep_unless_woken(&s.lock, &s.cond, &s.stop, &s.wake, 10000));
        sleeper_destroy(&s);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(a_wake_ends_the_sleep_and_is_cleared),
            cmocka_unit_test(a_stop_ends_both_sleeps),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
