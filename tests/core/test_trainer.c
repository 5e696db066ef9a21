/* test_trainer.c — the main thread's training loop alone, against neighbours made simple enough
 * for closed forms: a one-core CPU at reference speed of its own (a dispatch of D ns takes D ns),
 * a GPU stream whose input copies carry no bytes, and a DataLoader on a CPU, storage and memory bus
 * of its own whose batches cost nothing (every batch is ready when the main thread asks). With
 * C = the input copy's dispatch, D per op, G per kernel, O = Python work per step, K kernels:
 * launch-bound steps take C + K D + O; sync_every_step makes a GPU-bound step C + D + K G;
 * CUDA graphs cost the CPU one launch per step (per micro-batch under gradient accumulation);
 * gradient accumulation takes its batches. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h> /* after the headers it needs */

#include "sim/core/metrics.h"
#include "sim/core/pipeline.h"

#include <stdlib.h>

#define US 1000LL
#define K 4 /* kernels per step */
#define STEPS 5

/* An empty copy still occupies the stream for the link's first whole ns (sim_ps rounds a
 * finish up), so a GPU-bound run carries 1 ns per queued copy; CPU work is whole ns at rate 1
 * and is exact. */
#define COPY_NS 1

typedef struct rig {
    sim_engine *e;
    sim_ps *cpu, *loader_cpu, *mem, *link;
    sim_storage *storage;
    sim_metrics *metrics;
    sim_gpu *gpu;
    sim_loader *loader;
    sim_trainer *trainer;
    sim_program program;
} rig;

/* The step: K kernels of gpu_ns, each dispatched in dispatch_ns; a NEXT_BATCH op after the first
 * `accum - 1` kernels (gradient accumulation over `accum` batches, one kernel each). */
static void program(rig *r, int kernels, int64_t dispatch_ns, int64_t gpu_ns, int accum)
{
    for (int i = 0; i < kernels; i++) {
        sim_op k = {.dispatch_ns = dispatch_ns,
                    .gpu_ns = gpu_ns,
                    .sm_fraction = 1.0f,
                    .kind = SIM_OP_KERNEL,
                    .unit = SIM_UNIT_TENSOR};
        assert_int_equal(sim_program_push(&r->program, &k), 0);
        if (i + 1 < accum) {
            sim_op next = {.kind = SIM_OP_NEXT_BATCH};
            assert_int_equal(sim_program_push(&r->program, &next), 0);
        }
    }
}

/* Builds the rig around r->program for `batches` loader batches and runs it to the end. */
static void run(rig *r, int64_t batches, const sim_trainer_config *opts)
{
    r->e = sim_engine_create();
    /* borrowed by the servers for their life */
    static const sim_cpu_model one_core = {
        .cores = 1, .threads = 1, .smt_gain = 0, .single_thread = 1.0};
    static const sim_cpu_model loader_box = {
        .cores = 8, .threads = 8, .smt_gain = 0, .single_thread = 1.0};
    r->cpu = sim_cpu_create(r->e, &one_core);
    r->loader_cpu = sim_cpu_create(r->e, &loader_box);
    sim_ps_config fast = {.name = "fast", .rate = 1e6, .per_job_max = 1e6, .busy_units = 1};
    r->mem = sim_ps_create(r->e, &fast);
    r->link = sim_ps_create(r->e, &fast);
    sim_storage_desc ram = {.read_mbps = 1e9, .latency_us = 0, .queue_depth = 64};
    r->storage = sim_storage_create(r->e, &ram);
    r->metrics = sim_metrics_create(r->e, 1, 1000 * US, 0);
    sim_gpu_config gc = {.index = 0,
                         .launch_queue_depth = 1024,
                         .pageable_slowdown = 1.0,
                         .h2d = r->link,
                         .metrics = r->metrics};
    r->gpu = sim_gpu_create(r->e, &gc);
    sim_loader_config lc = {.batch_size = 1,
                            .num_workers = 1,
                            .prefetch_factor = 2,
                            .pin_memory = true,
                            .samples = batches,
                            .dataset_samples = batches,
                            .seed = 1,
                            .cpu = r->loader_cpu,
                            .mem = r->mem,
                            .storage = r->storage};
    int rc;
    r->loader = sim_loader_create(r->e, &lc, &rc);
    sim_trainer_config tc = *opts;
    tc.program = &r->program;
    tc.epochs = 1;
    tc.non_blocking = tc.pin_memory = true;
    tc.cpu = r->cpu;
    tc.gpu = r->gpu;
    tc.loader = r->loader;
    tc.metrics = r->metrics;
    r->trainer = sim_trainer_create(r->e, &tc);
    assert_true(r->cpu && r->loader_cpu && r->mem && r->link && r->storage && r->metrics &&
                r->gpu && r->loader && r->trainer);
    sim_trainer_start(r->trainer);
    assert_int_equal(sim_engine_run(r->e), 0);
    assert_true(sim_trainer_done(r->trainer));
}

static void rig_down(rig *r)
{
    sim_trainer_destroy(r->trainer);
    sim_loader_destroy(r->loader);
    sim_gpu_destroy(r->gpu);
    sim_metrics_destroy(r->metrics);
    sim_storage_destroy(r->storage);
    sim_ps_destroy(r->link);
    sim_ps_destroy(r->mem);
    sim_ps_destroy(r->loader_cpu);
    sim_ps_destroy(r->cpu);
    sim_program_free(&r->program);
    sim_engine_destroy(r->e);
}

/* Checks the step times the trainer reported against `want` (n of them) within tol_ns. */
static void steps_are(rig *r, const int64_t *want, int64_t n, int64_t tol_ns)
{
    int64_t got_n;
    const int64_t *got = sim_metrics_take_steps(r->metrics, &got_n);
    assert_int_equal(got_n, n);
    for (int64_t i = 0; i < n; i++)
        if (llabs(got[i] - want[i]) > tol_ns)
            fail_msg("step %lld: %lld ns, want %lld +- %lld", (long long)i, (long long)got[i],
                     (long long)want[i], (long long)tol_ns);
}

/* Launch-bound (D = 20 us > G = 5 us): the kernels are paced by their dispatch, the GPU waits
 * for each, and a step is C + K D + O. O = 7 us > G, so the epoch's last kernel is done before
 * the last step's Python work ends and the run ends at STEPS (C + K D + O). */
static void test_trainer_dispatch_paces_kernels(void **state)
{
    (void)state;
    rig r = {0};
    const int64_t c = 10 * US, d = 20 * US, g = 5 * US, o = 7 * US;
    program(&r, K, d, g, 1);
    r.program.step_overhead_ns = o;
    run(&r, STEPS, &(sim_trainer_config){.copy_dispatch_ref_ns = c});
    int64_t want[STEPS];
    for (int i = 0; i < STEPS; i++)
        want[i] = c + K * d + o;
    steps_are(&r, want, STEPS, 0); /* every CPU job is whole ns at rate 1: exact */
    assert_int_equal(sim_engine_now(r.e), STEPS * (c + K * d + o));
    /* every kernel ran once, whole */
    assert_true(sim_metrics_totals(r.metrics, 0).kernel_ns == (double)(STEPS * K * g));
    rig_down(&r);
}

/* GPU-bound (G = 20 us > D = 5 us). Without a sync the main thread runs ahead and the GPU runs
 * every kernel back to back after the first dispatch: C + D + STEPS K G. With sync_every_step
 * each step waits for the GPU to drain, so each costs C + D + K G and the run STEPS times that:
 * the sync exposes the CPU's C + D of every step. */
static void test_trainer_sync_every_step_waits_for_the_gpu(void **state)
{
    (void)state;
    const int64_t c = 2 * US, d = 5 * US, g = 20 * US, o = 1 * US;
    rig free_run = {0}, synced = {0};
    program(&free_run, K, d, g, 1);
    free_run.program.step_overhead_ns = o;
    run(&free_run, STEPS, &(sim_trainer_config){.copy_dispatch_ref_ns = c});
    /* the input copies of steps 2.. queue between kernels on the stream: COPY_NS each */
    assert_true(llabs(sim_engine_now(free_run.e) - (c + d + STEPS * K * g)) <=
                (STEPS - 1) * COPY_NS);

    program(&synced, K, d, g, 1);
    synced.program.step_overhead_ns = o;
    run(&synced, STEPS, &(sim_trainer_config){.copy_dispatch_ref_ns = c, .sync_every_step = true});
    int64_t want[STEPS];
    for (int i = 0; i < STEPS; i++)
        want[i] = c + d + K * g;
    /* each step's copy runs before its first kernel is dispatched (1 ns < D): exact */
    steps_are(&synced, want, STEPS, 0);
    assert_int_equal(sim_engine_now(synced.e), STEPS * (c + d + K * g));
    rig_down(&free_run);
    rig_down(&synced);
}

/* Launch-bound ops under CUDA graphs: the CPU pays one graph launch L per step instead of K
 * dispatches, so its busy time is STEPS (C + L + O) (per-op: STEPS (C + K D + O)). A step is
 * C + L + O = 24 us, longer than the graph's K G = 20 us on the GPU, so steps stay CPU-paced. */
static void test_trainer_cuda_graphs_one_launch_per_step(void **state)
{
    (void)state;
    const int64_t c = 2 * US, d = 20 * US, g = 5 * US, o = 7 * US, l = 15 * US;
    rig per_op = {0}, graphs = {0};
    program(&per_op, K, d, g, 1);
    per_op.program.step_overhead_ns = o;
    per_op.program.graph_launch_ns = l;
    run(&per_op, STEPS, &(sim_trainer_config){.copy_dispatch_ref_ns = c});
    assert_true(sim_ps_busy_integral(per_op.cpu) == (double)(STEPS * (c + K * d + o)));

    program(&graphs, K, d, g, 1);
    graphs.program.step_overhead_ns = o;
    graphs.program.graph_launch_ns = l;
    run(&graphs, STEPS, &(sim_trainer_config){.copy_dispatch_ref_ns = c, .cuda_graphs = true});
    assert_true(sim_ps_busy_integral(graphs.cpu) == (double)(STEPS * (c + l + o)));
    int64_t want[STEPS];
    for (int i = 0; i < STEPS - 1; i++)
        want[i] = c + l + o;
    /* the last step ends when the GPU drains: its graph, K G after the launch, outlasts O */
    want[STEPS - 1] = c + l + K * g;
    steps_are(&graphs, want, STEPS, 0); /* whole-ns CPU jobs; each copy ends before its graph */
    assert_true(sim_metrics_totals(graphs.metrics, 0).kernel_ns == (double)(STEPS * K * g));
    rig_down(&per_op);
    rig_down(&graphs);
}

/* Gradient accumulation over 3 batches (one kernel each, NEXT_BATCH between them) with 7 loader
 * batches: optimizer steps ceil(7 / 3) = 3; a full step copies and dispatches 3 times,
 * 3 (C + D) + O; the last takes the one batch left, C + D + O, and skips the rest. G = 1 us < O,
 * so no step waits for the GPU. */
static void test_trainer_accumulation_takes_its_batches(void **state)
{
    (void)state;
    const int64_t c = 2 * US, d = 10 * US, g = 1 * US, o = 5 * US;
    rig r = {0};
    program(&r, 3, d, g, 3);
    r.program.step_overhead_ns = o;
    assert_int_equal(sim_program_batches_per_step(&r.program), 3);
    run(&r, 7, &(sim_trainer_config){.copy_dispatch_ref_ns = c});
    const int64_t want[3] = {3 * (c + d) + o, 3 * (c + d) + o, c + d + o};
    steps_are(&r, want, 3, 0); /* whole-ns CPU jobs, GPU never in the way: exact */
    assert_int_equal(sim_loader_decodes(r.loader), 7); /* every batch taken, each once */
    /* one kernel per batch taken: 7, not 3 steps x 3 */
    assert_true(sim_metrics_totals(r.metrics, 0).kernel_ns == (double)(7 * g));
    rig_down(&r);
}

/* The same accumulation under CUDA graphs: each micro-batch is one graph launch L, taken after
 * its batch, so a full step is 3 (C + L) + O and the last C + L + O; every batch's kernel runs. */
static void test_trainer_cuda_graphs_launch_each_micro_batch(void **state)
{
    (void)state;
    const int64_t c = 2 * US, d = 10 * US, g = 1 * US, o = 5 * US, l = 4 * US;
    rig r = {0};
    program(&r, 3, d, g, 3);
    r.program.step_overhead_ns = o;
    r.program.graph_launch_ns = l;
    run(&r, 7, &(sim_trainer_config){.copy_dispatch_ref_ns = c, .cuda_graphs = true});
    const int64_t want[3] = {3 * (c + l) + o, 3 * (c + l) + o, c + l + o};
    steps_are(&r, want, 3, 0); /* whole-ns CPU jobs, G = 1 us < O: exact */
    assert_int_equal(sim_loader_decodes(r.loader), 7);
    assert_true(sim_metrics_totals(r.metrics, 0).kernel_ns == (double)(7 * g));
    rig_down(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trainer_dispatch_paces_kernels),
        cmocka_unit_test(test_trainer_sync_every_step_waits_for_the_gpu),
        cmocka_unit_test(test_trainer_cuda_graphs_one_launch_per_step),
        cmocka_unit_test(test_trainer_accumulation_takes_its_batches),
        cmocka_unit_test(test_trainer_cuda_graphs_launch_each_micro_batch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
