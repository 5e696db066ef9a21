/* test_ps.c — the shared server against closed-form processor-sharing results. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/core/pipeline.h"
#include "sim/core/ps.h"

/* A sink component that records when each job (payload = job number) finished. */
typedef struct sink {
    sim_engine *e;
    int64_t done_ns[16];
} sink;

static void sink_handle(sim_engine *e, void *self, const sim_event *ev)
{
    sink *s = self;
    s->done_ns[ev->a] = sim_engine_now(e);
}

static const sim_component_ops sink_ops = {.name = "sink", .handle = sink_handle};

typedef struct delayed {
    sim_ps *ps;
    double work;
    uint32_t sink_id;
} delayed;

static void submit_handle(sim_engine *e, void *self, const sim_event *ev)
{
    (void)e;
    delayed *d = self;
    sim_ps_submit(d->ps, d->work, d->sink_id, 0, ev->a);
}

static const sim_component_ops submit_ops = {.name = "submit", .handle = submit_handle};

static void test_ps_two_equal_jobs_share_the_rate(void **state)
{
    (void)state;
    sim_engine *e = sim_engine_create();
    sink s = {.e = e};
    uint32_t id = (uint32_t)sim_engine_add(e, &sink_ops, &s);
    sim_ps_config cfg = {.name = "t", .rate = 2.0, .busy_units = 1};
    sim_ps *ps = sim_ps_create(e, &cfg);
    sim_ps_submit(ps, 1000, id, 0, 0);
    sim_ps_submit(ps, 1000, id, 0, 1);
    assert_int_equal(sim_engine_run(e), 0);
    /* Together they get 2 units/ns, 1 each: 1000 units take 1000 ns. */
    assert_int_equal(s.done_ns[0], 1000);
    assert_int_equal(s.done_ns[1], 1000);
    assert_true(sim_ps_busy_time(ps) == 1000.0);
    sim_ps_destroy(ps);
    sim_engine_destroy(e);
}

static void test_ps_staggered_arrival_matches_closed_form(void **state)
{
    (void)state;
    /* Rate 1. A (work 10) at t=0 runs alone to t=5 (5 done); then A and B share: A needs 5 more
     * at 0.5/ns -> t=15; B has 5 done then, alone again -> t=20. */
    sim_engine *e = sim_engine_create();
    sink s = {.e = e};
    uint32_t id = (uint32_t)sim_engine_add(e, &sink_ops, &s);
    sim_ps_config cfg = {.name = "t", .rate = 1.0, .busy_units = 1};
    sim_ps *ps = sim_ps_create(e, &cfg);
    delayed d = {ps, 10, id};
    uint32_t sub = (uint32_t)sim_engine_add(e, &submit_ops, &d);
    sim_ps_submit(ps, 10, id, 0, 0);
    sim_engine_at(e, 5, sub, 0, 1);
    assert_int_equal(sim_engine_run(e), 0);
    assert_int_equal(s.done_ns[0], 15);
    assert_int_equal(s.done_ns[1], 20);
    sim_ps_destroy(ps);
    sim_engine_destroy(e);
}

static void test_ps_per_job_cap_limits_a_lone_job(void **state)
{
    (void)state;
    sim_engine *e = sim_engine_create();
    sink s = {.e = e};
    uint32_t id = (uint32_t)sim_engine_add(e, &sink_ops, &s);
    /* 4 units/ns in total but a job may use 1: a lone job of 100 takes 100 ns, four take 100. */
    sim_ps_config cfg = {.name = "t", .rate = 4.0, .per_job_max = 1.0, .busy_units = 4};
    sim_ps *ps = sim_ps_create(e, &cfg);
    for (int i = 0; i < 4; i++)
        sim_ps_submit(ps, 100, id, 0, (uint64_t)i);
    assert_int_equal(sim_engine_run(e), 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(s.done_ns[i], 100);
    assert_true(sim_ps_busy_integral(ps) == 400.0);
    sim_ps_destroy(ps);
    sim_engine_destroy(e);
}

static void test_cpu_capacity_counts_smt_as_a_fraction(void **state)
{
    (void)state;
    sim_cpu_model m = {.cores = 8, .threads = 16, .smt_gain = 0.25, .single_thread = 1.0};
    assert_true(sim_cpu_capacity(&m, 4) == 4.0);
    assert_true(sim_cpu_capacity(&m, 8) == 8.0);
    assert_true(sim_cpu_capacity(&m, 12) == 9.0);
    assert_true(sim_cpu_capacity(&m, 16) == 10.0);
    assert_true(sim_cpu_capacity(&m, 64) == 10.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ps_two_equal_jobs_share_the_rate),
        cmocka_unit_test(test_ps_staggered_arrival_matches_closed_form),
        cmocka_unit_test(test_ps_per_job_cap_limits_a_lone_job),
        cmocka_unit_test(test_cpu_capacity_counts_smt_as_a_fraction),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
