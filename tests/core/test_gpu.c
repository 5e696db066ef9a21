/* test_gpu.c — one GPU's streams alone (with a real metrics integrator, a PCIe link as a shared
 * server, a one-GPU collective and a recording main thread): compute items run in order, one at
 * a time; a waiter hears when items 1..seq are done; a copy costs bytes / link rate plus the
 * fixed per-copy cost, a pageable one pageable_slowdown times the bytes; GPU-Util counts kernel
 * time only. An overlapped all-reduce runs on the communication stream beside later kernels,
 * which lose its SM share meanwhile, and a kernel after it waits for it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h> /* after the headers it needs */

#include "recorder.h"
#include "sim/core/metrics.h"
#include "sim/core/pipeline.h"

#include <math.h>
#include <stdlib.h>

#define US 1000
#define LINK_BYTES_PER_NS 20.0 /* 20 GB/s, a PCIe 4.0 x16 pinned copy */
#define COPY_OVERHEAD_NS 5000
#define COMM_SM_SHARE 0.2 /* what the NCCL kernel takes of the SMs while it runs */

/* The link ends a transfer at the first whole ns at or after its exact finish. */
#define TOL_NS 2

typedef struct rig {
    sim_engine *e;
    recorder main_thread;
    sim_ps *link;
    sim_metrics *metrics;
    sim_collective *coll;
    sim_gpu *gpu;
} rig;

/* The all-reduce's ring: two GPUs over PCIe at 10 GB/s (the collective has one member, so it
 * reduces as soon as this GPU joins, in NCCL's time for two). */
static const sim_ring RING = {.n = 2, .bw_gbps = 10, .path = SIM_PATH_PCIE};

static void rig_up(rig *r)
{
    r->e = sim_engine_create();
    recorder_attach(&r->main_thread, r->e);
    sim_ps_config link = {
        .name = "h2d", .rate = LINK_BYTES_PER_NS, .per_job_max = 1e300, .busy_units = 1};
    r->link = sim_ps_create(r->e, &link);
    r->metrics = sim_metrics_create(r->e, 1, 1000 * US, 0);
    r->coll = sim_collective_create(r->e, 1, &RING);
    sim_gpu_config c = {.index = 0,
                        .launch_queue_depth = 1024,
                        .copy_overhead_ns = COPY_OVERHEAD_NS,
                        .pageable_slowdown = 2.0,
                        .h2d = r->link,
                        .coll = r->coll,
                        .metrics = r->metrics,
                        .comm_sm_share = COMM_SM_SHARE};
    r->gpu = sim_gpu_create(r->e, &c);
    assert_true(r->link && r->metrics && r->coll && r->gpu);
}

static void rig_down(rig *r)
{
    sim_gpu_destroy(r->gpu);
    sim_collective_destroy(r->coll);
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

/* NCCL's time for `bytes` on RING, ns, as the collective rounds it. */
static double allreduce_ns(double bytes)
{
    sim_allreduce ar;
    sim_topo_allreduce(&RING, bytes, &ar);
    return (double)(int64_t)(ar.time_us * 1e3);
}

/* Kernel A (10 us), the all-reduce, kernel C (30 us, every SM), kernel D (5 us, after the
 * communication stream). Closed form: the all-reduce (T ~ 30 us) starts when A ends; C starts
 * with it at 0.8 of its speed (the NCCL kernel holds 20 % of the SMs) until it ends, then at full
 * speed: C ends at 10 + T + (30 - 0.8 T) us. D's wait for the reduction is over by then. */
static void overlapped_allreduce_runs_beside_later_kernels(void **state)
{
    (void)state;
    rig r;
    rig_up(&r);
    double t = allreduce_ns(1e5);
    assert_true(t > 20 * US && t < 37.5 * US); /* C is still running when it ends */
    sim_gpu_kernel(r.gpu, 10 * US, 1.0f);
    sim_gpu_allreduce_overlapped(r.gpu, 1e5);
    sim_gpu_kernel(r.gpu, 30 * US, 1.0f);
    uint64_t d = sim_gpu_kernel_after_comm(r.gpu, 5 * US, 0.5f);
    sim_gpu_notify(r.gpu, d, r.main_thread.id, 9);
    assert_int_equal(sim_engine_run(r.e), 0);
    double c_end = 10 * US + t + (30 * US - (1 - COMM_SM_SHARE) * t);
    /* 2 ns: the kernel's end is rounded to whole ns when its speed changes, twice */
    assert_true(fabs((double)r.main_thread.t[0] - (c_end + 5 * US)) <= TOL_NS);
    sim_gpu_totals m = sim_metrics_totals(r.metrics, 0);
    assert_true(m.comm_kernel_ns == 0); /* a compute kernel ran all along */
    assert_true(fabs(m.kernel_ns - (c_end + 5 * US)) <= TOL_NS);
    rig_down(&r);
}

/* Kernel A (10 us), the all-reduce, kernel D (5 us) after the communication stream: D starts
 * when the reduction ends. Its wait is the communication stall, and NVML counts the NCCL kernel
 * busy meanwhile (comm_kernel_ns). */
static void kernel_after_comm_waits_for_the_reduction(void **state)
{
    (void)state;
    rig r;
    rig_up(&r);
    double t = allreduce_ns(1e5);
    sim_gpu_kernel(r.gpu, 10 * US, 1.0f);
    sim_gpu_allreduce_overlapped(r.gpu, 1e5);
    uint64_t d = sim_gpu_kernel_after_comm(r.gpu, 5 * US, 1.0f);
    sim_gpu_notify(r.gpu, d, r.main_thread.id, 9);
    assert_int_equal(sim_engine_run(r.e), 0);
    assert_true(r.main_thread.t[0] == 15 * US + t);
    sim_gpu_totals m = sim_metrics_totals(r.metrics, 0);
    assert_true(m.kernel_ns == 15 * US);
    assert_true(m.comm_kernel_ns == t);
    assert_true(m.stall_ns[SIM_STALL_COMM] == t);
    rig_down(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kernels_run_in_order),
        cmocka_unit_test(copies_cost_bytes_over_the_link),
        cmocka_unit_test(overlapped_allreduce_runs_beside_later_kernels),
        cmocka_unit_test(kernel_after_comm_waits_for_the_reduction),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
