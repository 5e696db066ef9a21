/* test_gpu.c — one GPU's stream alone (with a real metrics integrator, a PCIe link as a shared
 * server, and a recording main thread): items run in order, one at a time; a waiter hears when
 * items 1..seq are done; a copy costs bytes / link rate plus the fixed per-copy cost, a pageable
 * one pageable_slowdown times the bytes; GPU-Util counts kernel time only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h> /* after the headers it needs */

#include "recorder.h"
#include "sim/core/metrics.h"
#include "sim/core/pipeline.h"

#include <stdlib.h>

#define US 1000
#define LINK_BYTES_PER_NS 20.0 /* 20 GB/s, a PCIe 4.0 x16 pinned copy */
#define COPY_OVERHEAD_NS 5000

/* The link ends a transfer at the first whole ns at or after its exact finish. */
#define TOL_NS 2

typedef struct rig {
    sim_engine *e;
    recorder main_thread;
    sim_ps *link;
    sim_metrics *metrics;
    sim_gpu *gpu;
} rig;

static void rig_up(rig *r)
{
    r->e = sim_engine_create();
    recorder_attach(&r->main_thread, r->e);
    sim_ps_config link = {
        .name = "h2d", .rate = LINK_BYTES_PER_NS, .per_job_max = 1e300, .busy_units = 1};
    r->link = sim_ps_create(r->e, &link);
    r->metrics = sim_metrics_create(r->e, 1, 1000 * US, 0);
    sim_gpu_config c = {.index = 0,
                        .launch_queue_depth = 1024,
                        .copy_overhead_ns = COPY_OVERHEAD_NS,
                        .pageable_slowdown = 2.0,
                        .h2d = r->link,
                        .metrics = r->metrics};
    r->gpu = sim_gpu_create(r->e, &c);
    assert_true(r->link && r->metrics && r->gpu);
}

static void rig_down(rig *r)
{
    sim_gpu_destroy(r->gpu);
    sim_metrics_destroy(r->metrics);
    sim_ps_destroy(r->link);
    sim_engine_destroy(r->e);
}

static void kernels_run_in_order(void **state)
{
    (void)state;
    rig r;
    rig_up(&r);
    sim_gpu_kernel(r.gpu, 10 * US, 1.0f);
    sim_gpu_kernel(r.gpu, 20 * US, 1.0f);
    uint64_t last = sim_gpu_kernel(r.gpu, 30 * US, 1.0f);
    assert_int_equal(last, 3);
    assert_int_equal(sim_gpu_queued(r.gpu), 3);
    sim_gpu_notify(r.gpu, 2, r.main_thread.id, 9);
    assert_int_equal(sim_engine_run(r.e), 0);
    assert_int_equal(r.main_thread.n, 1);          /* one waiter, told once */
    assert_int_equal(r.main_thread.t[0], 30 * US); /* items 1 and 2: 10 + 20 us */
    assert_int_equal(sim_gpu_queued(r.gpu), 0);
    assert_int_equal(sim_engine_now(r.e), 60 * US);
    sim_gpu_totals t = sim_metrics_totals(r.metrics, 0);
    assert_true(t.kernel_ns == 60 * US); /* the stream was busy with kernels throughout */
    rig_down(&r);
}

static void copies_cost_bytes_over_the_link(void **state)
{
    (void)state;
    rig r;
    rig_up(&r);
    sim_gpu_copy(r.gpu, 1e6, true);  /* 1 MB pinned: 50 us + 5 us */
    sim_gpu_copy(r.gpu, 1e6, false); /* pageable: twice the link work, 100 us + 5 us */
    sim_gpu_kernel(r.gpu, 40 * US, 1.0f);
    sim_gpu_notify(r.gpu, 1, r.main_thread.id, 1);
    assert_int_equal(sim_engine_run(r.e), 0);
    assert_true(llabs(r.main_thread.t[0] - 55 * US) <= TOL_NS);
    assert_true(llabs(sim_engine_now(r.e) - (55 + 105 + 40) * US) <= 2 * TOL_NS);
    sim_gpu_totals t = sim_metrics_totals(r.metrics, 0);
    assert_true(t.kernel_ns == 40 * US); /* copies are not kernel time: GPU-Util ignores them */
    rig_down(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kernels_run_in_order),
        cmocka_unit_test(copies_cost_bytes_over_the_link),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
