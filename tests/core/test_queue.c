/* test_queue.c — the event queue pops in (time, insertion) order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/core/queue.h"

static void test_queue_orders_by_time_then_insertion(void **state)
{
    (void)state;
    sim_queue q;
    sim_queue_init(&q);
    assert_int_equal(sim_queue_push(&q, 30, 0, 0, 1), 0);
    assert_int_equal(sim_queue_push(&q, 10, 0, 0, 2), 0);
    assert_int_equal(sim_queue_push(&q, 30, 0, 0, 3), 0);
    assert_int_equal(sim_queue_push(&q, 10, 0, 0, 4), 0);
    uint64_t want[] = {2, 4, 1, 3};
    sim_event e;
    for (int i = 0; i < 4; i++) {
        assert_int_equal(sim_queue_pop(&q, &e), 0);
        assert_int_equal(e.a, want[i]);
    }
    assert_int_equal(sim_queue_pop(&q, &e), -1);
    sim_queue_fini(&q);
}

static void test_queue_many_pseudorandom_events_come_out_sorted(void **state)
{
    (void)state;
    sim_queue q;
    sim_queue_init(&q);
    uint64_t x = 12345;
    for (int i = 0; i < 100000; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        assert_int_equal(sim_queue_push(&q, (int64_t)(x >> 50), 0, 0, (uint64_t)i), 0);
    }
    sim_event prev = {0}, e; /* set by the first pop */
    assert_int_equal(sim_queue_pop(&q, &prev), 0);
    int n = 1;
    while (sim_queue_pop(&q, &e) == 0) {
        assert_true(e.t_ns > prev.t_ns || (e.t_ns == prev.t_ns && e.seq > prev.seq));
        prev = e;
        n++;
    }
    assert_int_equal(n, 100000);
    sim_queue_fini(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queue_orders_by_time_then_insertion),
        cmocka_unit_test(test_queue_many_pseudorandom_events_come_out_sorted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
