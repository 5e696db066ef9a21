/* test_ddp_scenarios.c — DDP's bucket all-reduces overlapped with backward, whole runs on the
 * made-up devices of tests/data/catalog (two test GPUs behind one PCIe switch, peer-to-peer at
 * 24 GB/s), against closed forms. The step program is built by hand: a forward kernel, four
 * backward kernels each followed by its bucket's all-reduce on the communication stream, and an
 * optimizer kernel that waits for them (what models/expand.c emits for a real net). Kernels take
 * half the SMs, so NCCL's two channels (2 of 100 SMs) never slow them and the closed forms are
 * exact. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/core/topo.h"
#include "sim/setup/config.h"
#include "sim/setup/scenario.h"

#include <string.h>

#define CATALOG EPOCHSIM_SOURCE_DIR "/tests/data/catalog"
#define MS 1000000LL
#define FWD_NS (10 * MS)
#define OPT_NS (1 * MS)
#define BUCKETS 4
/* The batch's copy before the forward kernel (64 kB at 24 GB/s) and the link's fixed cost per
 * copy: what a step has beside the program's kernels and all-reduces, under 50 us. */
#define COPY_SLACK_NS 50000.0

typedef struct ddp_run {
    sim_scenario sc;
    sim_result res;
    double ar_ns; /* one bucket's all-reduce on the two GPUs' ring (NCCL's model) */
} ddp_run;

static void push(sim_program *p, sim_op op)
{
    assert_int_equal(sim_program_push(p, &op), 0);
}

/* Two GPUs, each step: the program above with backward kernels of bwd_ns and buckets of
 * `bytes`; loss.item() every step, so steps do not overlap. */
static void run_ddp(int64_t bwd_ns, double bytes, ddp_run *r)
{
    static const char *const sets[] = {
        "system.gpu=test-gpu", "system.cpu=test-cpu-8c", "system.storage=test-nvme",
        "system.host_memory_gb=64", "system.gpu_count=2", "dataset.samples=2560",
        "dataset.sample_bytes=1000", "dataset.decode_us=10", "dataset.decode_cv=0",
        "dataset.input_bytes=1000", "loader.batch_size=64", "loader.worker_start_ms=0",
        "loader.copy_dispatch_us=0", "workload.step_overhead_us=0",
        /* both GPUs behind one PCIe switch: peer-to-peer whatever NCCL allows across the CPU */
        "system.pcie_switch_gpus=2", NULL};
    sim_experiment x;
    cfg_experiment_set set = {0};
    sim_err err;
    sim_err_clear(&err);
    sim_experiment_defaults(&x);
    for (const char *const *s = sets; *s; s++)
        if (cfg_experiment_apply(*s, &x, &set, &err)) fail_msg("%s: %s", *s, err.msg);
    if (sim_scenario_build(&x, &set, CATALOG, &r->sc, &err)) fail_msg("build: %s", err.msg);
    sim_program *p = &r->sc.program;
    sim_program_free(p);
    push(p, (sim_op){.kind = SIM_OP_KERNEL, .gpu_ns = FWD_NS, .sm_fraction = 0.5f});
    for (int b = 0; b < BUCKETS; b++) {
        push(p, (sim_op){.kind = SIM_OP_KERNEL, .gpu_ns = bwd_ns, .sm_fraction = 0.5f});
        push(p, (sim_op){.kind = SIM_OP_ALLREDUCE, .bytes = bytes, .comm = 1});
    }
    push(p, (sim_op){.kind = SIM_OP_KERNEL, .gpu_ns = OPT_NS, .sm_fraction = 0.5f, .comm = 1});
    if (sim_run(&r->sc, &r->res, &err)) fail_msg("run: %s", err.msg);
    sim_ring ring = sim_topo_ring(&r->sc.hw, NULL, 2);
    sim_allreduce ar;
    sim_topo_allreduce(&ring, bytes, &ar);
    r->ar_ns = ar.time_us * 1e3;
}

static void done(ddp_run *r)
{
    sim_result_free(&r->res);
    sim_scenario_free(&r->sc);
}

/* Closed form: got is want plus at most the batch copy; and the invariant every run keeps. */
static void step_is(const ddp_run *r, double want_ns)
{
    double got = r->res.mean.step_time_ms_p50 * 1e6;
    if (got < want_ns - 1000 || got > want_ns + COPY_SLACK_NS) /* 1 us: ns rounding of the ops */
        fail_msg("step %.0f ns, closed form %.0f ns", got, want_ns);
    const sim_epoch_result *m = &r->res.mean;
    double sum = m->gpu_util_pct - m->comm_kernel_pct;
    for (int k = 0; k < SIM_STALL_COUNT; k++)
        sum += m->stall_pct[k];
    assert_true(sum > 100 - 1e-6 && sum < 100 + 1e-6);
}

/* Backward 4 x 10 ms, each bucket's all-reduce ~1 ms: every all-reduce but the last runs while
 * the next backward kernel does, so the step is forward + backward + the last all-reduce +
 * optimizer, and only that last one is exposed. */
static void test_ddp_backward_hides_all_but_the_last_bucket(void **state)
{
    (void)state;
    ddp_run r;
    run_ddp(10 * MS, 24e6, &r); /* 24 MB at 24 GB/s: ~1 ms */
    assert_true(r.ar_ns > 0.9 * MS && r.ar_ns < 1.1 * MS);
    double step = FWD_NS + BUCKETS * 10 * MS + r.ar_ns + OPT_NS;
    step_is(&r, step);
    /* exposed: the last all-reduce, over the step (the first step's start-up moves the mean of
     * the epoch by under 1 % of it) */
    double want = 100 * r.ar_ns / step;
    assert_true(r.res.mean.comm_pct > 0.99 * want && r.res.mean.comm_pct < 1.01 * want);
    assert_int_equal(r.res.bottleneck, SIM_BN_GPU_COMPUTE);
    done(&r);
}

/* Backward 4 x 1 ms, each all-reduce ~10 ms: the all-reduces queue on the communication stream
 * one after another from the end of the first backward kernel, so the step is forward + that
 * kernel + four all-reduces + optimizer, and the run is communication-bound. */
static void test_ddp_allreduce_bound_step_is_the_sum_of_the_reductions(void **state)
{
    (void)state;
    ddp_run r;
    run_ddp(1 * MS, 240e6, &r); /* 240 MB: ~10 ms */
    assert_true(r.ar_ns > 9.5 * MS && r.ar_ns < 10.5 * MS);
    double step = FWD_NS + 1 * MS + BUCKETS * r.ar_ns + OPT_NS;
    step_is(&r, step);
    /* exposed: from the end of backward to the end of the last all-reduce (1 % as above) */
    double want = 100 * (BUCKETS * r.ar_ns - (BUCKETS - 1) * 1.0 * MS) / step;
    assert_true(r.res.mean.comm_pct > 0.99 * want && r.res.mean.comm_pct < 1.01 * want);
    assert_int_equal(r.res.bottleneck, SIM_BN_COMMUNICATION);
    done(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ddp_backward_hides_all_but_the_last_bucket),
        cmocka_unit_test(test_ddp_allreduce_bound_step_is_the_sum_of_the_reductions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
