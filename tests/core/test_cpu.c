/* test_cpu.c — the host CPU alone: its capacity with n runnable threads (cores first, then SMT
 * siblings at smt_gain of a core, nothing past the hardware threads, all at single_thread
 * speed) and, against a recording neighbour, the finish time of threads sharing it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h> /* after the headers it needs */

#include "recorder.h"
#include "sim/core/pipeline.h"

#include <stdlib.h>

/* 4 cores, 8 threads, an SMT sibling worth a quarter core. */
static const sim_cpu_model box = {.cores = 4, .threads = 8, .smt_gain = 0.25, .single_thread = 1.0};

static void capacity_cores_then_siblings(void **state)
{
    (void)state;
    assert_true(sim_cpu_capacity(&box, 0) == 0);
    assert_true(sim_cpu_capacity(&box, 2) == 2); /* fewer threads than cores */
    assert_true(sim_cpu_capacity(&box, 4) == 4);
    assert_true(sim_cpu_capacity(&box, 6) == 4.5); /* 4 + 2 siblings x 0.25 */
    assert_true(sim_cpu_capacity(&box, 8) == 5);   /* every hardware thread busy */
    assert_true(sim_cpu_capacity(&box, 100) == 5); /* more threads add nothing */
}

/* Threads of 1 ms of reference-core work each; returns when the last finished. */
static int64_t run_threads(const sim_cpu_model *m, int threads, recorder *r)
{
    sim_engine *e = sim_engine_create();
    recorder_attach(r, e);
    sim_ps *cpu = sim_cpu_create(e, m);
    assert_non_null(cpu);
    for (int i = 0; i < threads; i++)
        assert_int_equal(sim_ps_submit(cpu, 1e6, r->id, 0, (uint64_t)i), 0);
    assert_int_equal(sim_engine_run(e), 0);
    int64_t last = r->t[r->n - 1];
    sim_ps_destroy(cpu);
    sim_engine_destroy(e);
    return last;
}

/* The shared server ends work at the first whole ns at or after its exact finish. */
#define TOL_NS 2

static void threads_share_the_cores(void **state)
{
    (void)state;
    recorder r;
    /* 2 threads on 4 cores: each runs alone on a core, 1 ms */
    assert_true(llabs(run_threads(&box, 2, &r) - 1000000) <= TOL_NS);
    /* 8 threads: 5 cores' worth shared by 8, 5/8 of a core each: 1.6 ms */
    assert_true(llabs(run_threads(&box, 8, &r) - 1600000) <= TOL_NS);
    assert_int_equal(r.n, 8);
    /* a core 1.5x the reference: 2 threads take 1 ms / 1.5 */
    sim_cpu_model fast = box;
    fast.single_thread = 1.5;
    assert_true(llabs(run_threads(&fast, 2, &r) - 666667) <= TOL_NS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(capacity_cores_then_siblings),
        cmocka_unit_test(threads_share_the_cores),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
