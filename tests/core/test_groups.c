/* test_groups.c — each group's part of a shared server's busy time (sim/core/groups.c), against
 * a hand-worked timeline, and through the processor-sharing server (sim/core/ps.c) and the
 * storage device, whose groups' parts add up to their busy figures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/core/groups.h"
#include "sim/core/pipeline.h"
#include "sim/core/ps.h"

#include <math.h>

/* A server of one busy unit: group 0 alone for 10 ns, then groups 0 and 1 for 20 ns (10 each),
 * then group 1 alone for 5 ns. `share` is what the server keeps: the integral of 1 / n. */
static void test_groups_split_the_busy_time_by_active_requests(void **state)
{
    (void)state;
    sim_groups g;
    assert_int_equal(sim_groups_init(&g, 2), 0);
    double share = 0;
    sim_groups_change(&g, 0, +1, share);
    share += 10; /* 10 ns, one active */
    sim_groups_change(&g, 1, +1, share);
    share += 20.0 / 2; /* 20 ns, two active */
    sim_groups_change(&g, 0, -1, share);
    share += 5; /* 5 ns, one active */
    assert_true(sim_groups_integral(&g, 0, share) == 20);
    assert_true(sim_groups_integral(&g, 1, share) == 15);
    sim_groups_change(&g, 1, -1, share);
    share += 0; /* idle: the server's share does not move */
    assert_true(sim_groups_integral(&g, 1, share) == 15);
    sim_groups_free(&g);
}

enum { EV_DONE };

static void ignore(sim_engine *e, void *self, const sim_event *ev)
{
    (void)e, (void)self, (void)ev;
}

static const sim_component_ops sink_ops = {.name = "sink", .handle = ignore};

/* Two CPU threads of group 0 and one of group 1 on a 2-core, 2-thread CPU: while three run,
 * the two busy threads are split 2/3 each; the groups' parts add up to the busy integral. */
static void test_groups_ps_parts_add_up_to_the_busy_integral(void **state)
{
    (void)state;
    sim_engine *e = sim_engine_create();
    sim_cpu_model m = {.cores = 2, .threads = 2, .smt_gain = 0, .single_thread = 1};
    sim_ps *cpu = sim_cpu_create(e, &m);
    int sink = sim_engine_add(e, &sink_ops, NULL);
    assert_int_equal(sim_ps_groups(cpu, 2), 0);
    sim_ps_submit_as(cpu, 0, 300, (uint32_t)sink, EV_DONE, 0);
    sim_ps_submit_as(cpu, 0, 300, (uint32_t)sink, EV_DONE, 0);
    sim_ps_submit_as(cpu, 1, 300, (uint32_t)sink, EV_DONE, 0);
    assert_int_equal(sim_engine_run(e), 0);
    /* each thread gets 2/3 of a core: all three end at 450 ns; 2 x 450 thread-ns busy, 600 of
     * them group 0's and 300 group 1's (1e-9: the server's rate and share in doubles) */
    assert_true(fabs(sim_ps_busy_integral(cpu) - 900) < 1e-9 * 900);
    assert_true(fabs(sim_ps_group_busy_integral(cpu, 0) - 600) < 1e-9 * 600);
    assert_true(fabs(sim_ps_group_busy_integral(cpu, 1) - 300) < 1e-9 * 300);
    sim_ps_destroy(cpu);
    sim_engine_destroy(e);
}

/* A device with one service slot: group 0's read, then group 1's waits for it; each group owns
 * the time its own read was in service, and a group that read nothing owns none. */
static void test_groups_storage_owns_each_read_its_service_time(void **state)
{
    (void)state;
    sim_engine *e = sim_engine_create();
    sim_storage_desc d = {.latency_us = 10, .read_mbps = 1000, .queue_depth = 1};
    sim_storage *s = sim_storage_create(e, &d);
    int sink = sim_engine_add(e, &sink_ops, NULL);
    assert_int_equal(sim_storage_groups(s, 3), 0);
    sim_storage_read_as(s, 0, 1e6, (uint32_t)sink, EV_DONE, 0); /* 10 us + 1 ms */
    sim_storage_read_as(s, 1, 2e6, (uint32_t)sink, EV_DONE, 0); /* 10 us + 2 ms, after it */
    assert_int_equal(sim_engine_run(e), 0);
    double busy = sim_storage_busy_ns(s);
    assert_true(fabs(busy - 3020000) < 2); /* 2 ns: the transfers' ends round up to a ns */
    assert_true(fabs(sim_storage_group_busy_ns(s, 0) - 1010000) < 2);
    assert_true(fabs(sim_storage_group_busy_ns(s, 1) - 2010000) < 2);
    assert_true(sim_storage_group_busy_ns(s, 2) == 0);
    sim_storage_destroy(s);
    sim_engine_destroy(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_groups_split_the_busy_time_by_active_requests),
        cmocka_unit_test(test_groups_ps_parts_add_up_to_the_busy_integral),
        cmocka_unit_test(test_groups_storage_owns_each_read_its_service_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
