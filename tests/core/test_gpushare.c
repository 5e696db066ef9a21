/* test_gpushare.c — several jobs on one GPU (sim/core/gpushare.c through sim_run_jobs) against
 * closed-form limits, on the made-up devices of tests/data/catalog (test-gpu; 8 cores / 16
 * threads at reference speed). Each tolerance is written beside its check with the reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/setup/scenario.h"

#include <math.h>
#include <string.h>

#define CATALOG EPOCHSIM_SOURCE_DIR "/tests/data/catalog"
#define MAX_JOBS 4

/* A GPU-bound job: 40 steps of 10 x 1 ms kernels; the loader makes a batch in ~0.1 ms. */
static const char *const gpu_bound[] = {
    "system.gpu=test-gpu",
    "system.cpu=test-cpu-8c",
    "system.storage=test-nvme",
    "system.host_memory_gb=64",
    "dataset.samples=2560",
    "dataset.sample_bytes=1000",
    "dataset.decode_us=10",
    "dataset.decode_cv=0",
    "dataset.input_bytes=1000",
    "loader.batch_size=64",
    "loader.worker_start_ms=0",
    "loader.num_workers=2",
    "workload.kernels_per_step=10",
    "workload.kernel_us=1000",
    "workload.dispatch_us=1",
    "workload.step_overhead_us=0",
    NULL,
};

/* The same job made light: 2 ms of kernels per step, and 2 workers that need ~10 ms per batch
 * (64 x 312 us / 2), so the GPU is busy ~20 % of the time. */
static const char *const light[] = {"workload.kernels_per_step=2", "dataset.decode_us=312", NULL};

static void apply(sim_experiment *x, cfg_experiment_set *set, const char *const *sets)
{
    sim_err err;
    for (const char *const *s = sets; s && *s; s++)
        if (cfg_experiment_apply(*s, x, set, &err)) fail_msg("%s: %s", *s, err.msg);
}

static void build(const char *const *extra, const char *const *more, sim_scenario *sc)
{
    sim_experiment x;
    cfg_experiment_set set = {0};
    sim_err err;
    sim_experiment_defaults(&x);
    apply(&x, &set, gpu_bound);
    apply(&x, &set, extra);
    apply(&x, &set, more);
    if (sim_scenario_build(&x, &set, CATALOG, sc, &err)) fail_msg("build: %s", err.msg);
}

/* n copies of the job on GPU 0 of a one-GPU system, sharing it as `mode` says. */
static void run_jobs(int n, const char *const *extra, sim_gpu_sharing mode, sim_jobs_result *res)
{
    sim_scenario system, sc[MAX_JOBS];
    sim_job_slot slot[MAX_JOBS];
    static const int gpu0[] = {0};
    build(NULL, NULL, &system);
    for (int j = 0; j < n; j++) {
        build(extra, NULL, &sc[j]);
        slot[j] = (sim_job_slot){.sc = &sc[j], .gpus = gpu0};
    }
    /* the defaults of system.gpu_timeslice_us and system.gpu_switch_us */
    sim_gpushare_config share = {mode, 2000000, 50000};
    sim_err err;
    if (sim_run_jobs(&system, slot, n, &share, res, &err)) fail_msg("run: %s", err.msg);
    for (int j = 0; j < n; j++)
        sim_scenario_free(&sc[j]);
    sim_scenario_free(&system);
}

static double solo_samples_per_s(const char *const *extra)
{
    sim_scenario sc;
    sim_result r;
    sim_err err;
    build(extra, NULL, &sc);
    if (sim_run(&sc, &r, &err)) fail_msg("run: %s", err.msg);
    double s = r.mean.samples_per_s;
    assert_true(r.mean.stall_pct[SIM_STALL_SHARED] == 0); /* nobody to wait for alone */
    sim_result_free(&r);
    sim_scenario_free(&sc);
    return s;
}

static void near(double got, double want, double rel_tol, const char *what)
{
    if (fabs(got - want) > rel_tol * fabs(want))
        fail_msg("%s: got %.6g, want %.6g +- %.1f%%", what, got, want, rel_tol * 100);
}

static void test_gpushare_time_slice_gives_each_of_n_jobs_1_over_n(void **state)
{
    (void)state;
    double solo = solo_samples_per_s(NULL);
    /* A context keeps the GPU for its 2 ms slice, then a 50 us switch: each of N GPU-bound jobs
     * gets 1/N of the GPU less the switches, solo / N x 2000 / 2050. */
    for (int n = 2; n <= MAX_JOBS; n++) {
        sim_jobs_result res;
        run_jobs(n, NULL, SIM_SHARE_TIME_SLICE, &res);
        for (int j = 0; j < n; j++) {
            /* 3 %: the first batch and the last step, which run with fewer jobs in the way */
            near(res.job[j].mean.samples_per_s, solo / n * 2000 / 2050, 0.03, "samples/s");
            assert_int_equal(res.job[j].bottleneck, SIM_BN_SHARED_GPU);
            assert_true(res.job[j].mean.stall_pct[SIM_STALL_SHARED] > 40);
        }
        /* the physical GPU is busy but for the switches: 100 x 2000 / 2050 % */
        near(res.gpu[0].gpu_util_pct, 100.0 * 2000 / 2050, 0.02, "GPU-Util of GPU 0");
        assert_int_equal(res.gpu[0].jobs, n);
        sim_jobs_result_free(&res);
    }
}

static void test_gpushare_light_jobs_run_as_fast_as_alone(void **state)
{
    (void)state;
    double solo = solo_samples_per_s(light);
    sim_jobs_result res;
    run_jobs(2, light, SIM_SHARE_TIME_SLICE, &res);
    for (int j = 0; j < 2; j++) {
        /* Each job waits on its loader 80 % of the time; the other job's 2 ms of kernels per
         * step fit in that wait, and 4 workers leave 4 of 8 cores free. 2 %: a step whose
         * kernels meet the other job's is late by at most 2 ms of 10, and the next batch is
         * already waiting then. */
        near(res.job[j].mean.samples_per_s, solo, 0.02, "samples/s beside a light job");
        assert_int_equal(res.job[j].bottleneck, SIM_BN_DATA_LOADING);
    }
    /* Two jobs' kernels, ~20 % each (5 %: the kernels are 2 ms of each ~10.0-10.3 ms step) */
    near(res.gpu[0].gpu_util_pct, 2 * res.job[0].mean.gpu_util_pct, 0.05, "GPU-Util of GPU 0");
    sim_jobs_result_free(&res);
}

static void test_gpushare_mps_never_beats_the_sms(void **state)
{
    (void)state;
    double solo = solo_samples_per_s(NULL);
    sim_jobs_result res;
    run_jobs(2, NULL, SIM_SHARE_MPS, &res);
    /* The synthetic kernels fill every SM (sm_fraction 1): under MPS both run at once at half
     * speed, so the SM time they use together, 10 ms per batch of 64 each, never passes the
     * wall time. 1e-9: the last digits of the rates. */
    double sm_s = 0;
    for (int j = 0; j < 2; j++)
        sm_s += res.job[j].mean.samples_per_s * 0.010 / 64;
    assert_true(sm_s <= 1 + 1e-9);
    /* and each gets about half: 4 %, as with time-slicing, and one job's kernels run at full
     * speed while the other copies its batch in */
    near(res.job[0].mean.samples_per_s, solo / 2, 0.04, "samples/s under MPS");
    assert_true(res.gpu[0].sm_active_pct <= 100 + 1e-9);
    /* no context switch under MPS: nobody waits for another job's context */
    assert_true(res.job[0].mean.stall_pct[SIM_STALL_SHARED] == 0);
    sim_jobs_result_free(&res);
}

static void test_gpushare_cpu_oversubscribed_by_two_jobs(void **state)
{
    (void)state;
    /* 8 workers decoding 2 ms per sample: alone they fill the 8 cores and the job waits on
     * them (loader-bound); two such jobs keep ~16 threads runnable on 8 cores. */
    static const char *const heavy[] = {"loader.num_workers=8", "dataset.decode_us=2000",
                                        "workload.kernels_per_step=2", NULL};
    sim_scenario sc;
    sim_result r;
    sim_err err;
    build(heavy, NULL, &sc);
    if (sim_run(&sc, &r, &err)) fail_msg("run: %s", err.msg);
    assert_int_equal(r.bottleneck, SIM_BN_DATA_LOADING); /* alone: its own workers, not others */
    double solo = r.mean.samples_per_s;
    sim_result_free(&r);
    sim_scenario_free(&sc);
    sim_jobs_result res;
    run_jobs(2, heavy, SIM_SHARE_TIME_SLICE, &res);
    for (int j = 0; j < 2; j++) {
        assert_int_equal(res.job[j].bottleneck, SIM_BN_HOST_CPU);
        assert_true(res.job[j].mean.cpu_runnable > 8);
        /* the cores' throughput is split: each job gets at most ~its solo rate x (8 + 0.25 x 8)
         * / 2 / 8 of what 16 threads on SMT share (10 %: the main threads and the copies) */
        assert_true(res.job[j].mean.samples_per_s < solo * 0.65);
    }
    sim_jobs_result_free(&res);
}

static void test_gpushare_contention_is_deterministic(void **state)
{
    (void)state;
    sim_jobs_result a, b;
    run_jobs(3, NULL, SIM_SHARE_TIME_SLICE, &a);
    run_jobs(3, NULL, SIM_SHARE_TIME_SLICE, &b);
    assert_int_equal(a.events, b.events);
    assert_true(a.total_time_s == b.total_time_s);
    for (int j = 0; j < 3; j++) {
        assert_true(a.job[j].mean.samples_per_s == b.job[j].mean.samples_per_s);
        assert_true(a.job[j].mean.step_time_ms_p50 == b.job[j].mean.step_time_ms_p50);
    }
    assert_true(a.gpu[0].gpu_util_pct == b.gpu[0].gpu_util_pct);
    sim_jobs_result_free(&a);
    sim_jobs_result_free(&b);
}

/* Each job's cpu_util_pct, storage_busy_pct and h2d_busy_pct are its own part of the host's
 * CPU, storage device and GPU link (sim_ps_group_busy_integral, sim_storage_group_busy_ns), over
 * its own wall time; the parts add up to the host's figures over the run. */
static void test_gpushare_each_job_has_its_own_part_of_the_host(void **state)
{
    (void)state;
    static const char *const in_memory[] = {"dataset.location=memory", NULL};
    static const int gpu0[] = {0};
    sim_scenario system, sc[2];
    build(NULL, NULL, &system);
    build(NULL, NULL, &sc[0]);
    build(in_memory, NULL, &sc[1]);
    sim_job_slot slot[2] = {{.sc = &sc[0], .gpus = gpu0}, {.sc = &sc[1], .gpus = gpu0}};
    sim_gpushare_config share = {SIM_SHARE_TIME_SLICE, 2000000, 50000};
    sim_jobs_result res;
    sim_err err;
    if (sim_run_jobs(&system, slot, 2, &share, &res, &err)) fail_msg("run: %s", err.msg);
    const sim_epoch_result *a = &res.job[0].mean, *b = &res.job[1].mean;
    double ta = res.job[0].total_time_s, tb = res.job[1].total_time_s, t = res.total_time_s;
    /* the job whose dataset is in RAM reads nothing: none of the device's busy time is its */
    assert_true(b->storage_busy_pct == 0);
    assert_true(a->storage_busy_pct > 0);
    /* Shares of wall time x wall time = busy time: the parts add up to the whole. 1e-9: each
     * part is its own running sum of the same increments, so they differ from the whole by
     * floating-point rounding only (~1e-16 per event over ~1e5 events). */
    near(a->cpu_util_pct * ta + b->cpu_util_pct * tb, res.host.cpu_util_pct * t, 1e-9,
         "the jobs' CPU parts against the host's CPU");
    near(a->storage_busy_pct * ta, res.host.storage_busy_pct * t, 1e-9,
         "the reading job's storage part against the device's busy time");
    near(a->h2d_busy_pct * ta + b->h2d_busy_pct * tb, res.gpu[0].h2d_busy_pct * t, 1e-9,
         "the jobs' copies against GPU 0's link");
    /* both do the same work on the CPU but B's reads (page copies) are not there: each has a
     * real part of it, neither the whole */
    assert_true(a->cpu_util_pct > 0 && b->cpu_util_pct > 0);
    assert_true(a->cpu_util_pct * ta < res.host.cpu_util_pct * t);
    sim_jobs_result_free(&res);
    for (int j = 0; j < 2; j++)
        sim_scenario_free(&sc[j]);
    sim_scenario_free(&system);
}

/* The sampled mode cuts epochs, skipping simulated time: a sampled job beside another is
 * refused rather than run with the other job's steps timed without it. */
static void test_gpushare_refuses_a_sampled_job(void **state)
{
    (void)state;
    static const char *const sampled[] = {"run.sampled_pct=0.5", NULL};
    static const int gpu0[] = {0};
    sim_scenario system, sc[2];
    build(NULL, NULL, &system);
    build(NULL, NULL, &sc[0]);
    build(sampled, NULL, &sc[1]);
    sim_job_slot slot[2] = {{.sc = &sc[0], .gpus = gpu0}, {.sc = &sc[1], .gpus = gpu0}};
    sim_gpushare_config share = {SIM_SHARE_TIME_SLICE, 2000000, 50000};
    sim_jobs_result res;
    sim_err err;
    assert_int_equal(sim_run_jobs(&system, slot, 2, &share, &res, &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "does not support several jobs yet: job 2"));
    for (int j = 0; j < 2; j++)
        sim_scenario_free(&sc[j]);
    sim_scenario_free(&system);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpushare_time_slice_gives_each_of_n_jobs_1_over_n),
        cmocka_unit_test(test_gpushare_light_jobs_run_as_fast_as_alone),
        cmocka_unit_test(test_gpushare_mps_never_beats_the_sms),
        cmocka_unit_test(test_gpushare_cpu_oversubscribed_by_two_jobs),
        cmocka_unit_test(test_gpushare_contention_is_deterministic),
        cmocka_unit_test(test_gpushare_refuses_a_sampled_job),
        cmocka_unit_test(test_gpushare_each_job_has_its_own_part_of_the_host),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
