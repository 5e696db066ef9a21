/* test_advice.c — advice is only what simulation confirms: on the made-up devices of
 * tests/data/catalog (8 cores / 16 threads, SMT gain 0.25), each scenario's advice is rerun here
 * on its own and must be faster than the scenario; the change a classroom expects is advised
 * where it helps, and more workers are not advised where the CPU has no thread left for them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/setup/advice.h"
#include "sim/setup/scenario.h"

#include <stdio.h>
#include <string.h>

#define CATALOG EPOCHSIM_SOURCE_DIR "/tests/data/catalog"

typedef struct job {
    sim_experiment x;
    cfg_experiment_set set;
    sim_scenario sc;
    sim_result res;
} job;

/* Builds and runs a small deterministic base, then sets, then `extra` (space-separated). */
static void run(const char *const *sets, const char *extra, job *j)
{
    static const char *const base[] = {
        "system.gpu=test-gpu",         "system.cpu=test-cpu-8c",
        "system.storage=test-nvme",    "system.host_memory_gb=64",
        "dataset.samples=1280",        "dataset.sample_bytes=1000",
        "dataset.decode_us=10",        "dataset.decode_cv=0",
        "dataset.input_bytes=1000",    "loader.batch_size=64",
        "loader.worker_start_ms=0",    "workload.kernels_per_step=10",
        "workload.kernel_us=1000",     "workload.dispatch_us=1",
        "workload.step_overhead_us=0", NULL,
    };
    sim_err err;
    sim_err_clear(&err);
    memset(j, 0, sizeof *j);
    sim_experiment_defaults(&j->x);
    for (const char *const *s = base; *s; s++)
        assert_int_equal(cfg_experiment_apply(*s, &j->x, &j->set, &err), 0);
    for (const char *const *s = sets; *s; s++)
        if (cfg_experiment_apply(*s, &j->x, &j->set, &err)) fail_msg("%s: %s", *s, err.msg);
    char buf[96];
    snprintf(buf, sizeof buf, "%s", extra ? extra : "");
    for (char *save = NULL, *a = strtok_r(buf, " ", &save); a; a = strtok_r(NULL, " ", &save))
        if (cfg_experiment_apply(a, &j->x, &j->set, &err)) fail_msg("%s: %s", a, err.msg);
    if (sim_scenario_build(&j->x, &j->set, CATALOG, &j->sc, &err)) fail_msg("%s", err.msg);
    if (sim_run(&j->sc, &j->res, &err)) fail_msg("%s", err.msg);
}

static void job_free(job *j)
{
    sim_result_free(&j->res);
    sim_scenario_free(&j->sc);
}

/* The advice of sets, a run the verdict calls `want`; each change, run again here, must beat
 * the scenario by what it claims. Returns how many; the changes go to out. */
static int checked_advice(const char *const *sets, sim_bottleneck want,
                          sim_advice out[SIM_ADVICE_MAX])
{
    job j;
    run(sets, NULL, &j);
    assert_int_equal(j.res.bottleneck, want);
    int n = sim_advice_find(&j.x, &j.set, CATALOG, &j.sc, &j.res, out);
    for (int i = 0; i < n; i++) {
        job k;
        run(sets, out[i].change, &k);
        /* The same experiment and seed: the rerun gives the advised figure exactly. */
        assert_true(k.res.mean.samples_per_s == out[i].samples_per_s);
        if (!(k.res.mean.samples_per_s > j.res.mean.samples_per_s * 1.01))
            fail_msg("'%s' does not help: %.1f vs %.1f samples/s", out[i].change,
                     k.res.mean.samples_per_s, j.res.mean.samples_per_s);
        if (i > 0) assert_true(out[i].gain_pct <= out[i - 1].gain_pct);
        job_free(&k);
    }
    job_free(&j);
    return n;
}

static bool advised(const sim_advice *adv, int n, const char *change)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(adv[i].change, change)) return true;
    return false;
}

static void test_advice_more_workers_where_cores_are_free(void **state)
{
    (void)state;
    /* 2 workers decoding 10 ms samples on 8 idle cores: 4 workers are twice as fast. */
    static const char *const s[] = {"loader.num_workers=2",        "dataset.decode_us=10000",
                                    "dataset.samples=160",         "loader.batch_size=10",
                                    "workload.kernels_per_step=1", NULL};
    sim_advice adv[SIM_ADVICE_MAX];
    int n = checked_advice(s, SIM_BN_DATA_LOADING, adv);
    assert_true(advised(adv, n, "loader.num_workers=4"));
    assert_true(advised(adv, n, "loader.num_workers=8"));
}

static void test_advice_no_more_workers_beyond_the_threads(void **state)
{
    (void)state;
    /* 16 workers already fill the 16 hardware threads: 32 get no more CPU, so they are not
     * advised, though the run stays loader-bound. */
    static const char *const s[] = {"loader.num_workers=16",       "dataset.decode_us=10000",
                                    "dataset.samples=640",         "loader.batch_size=10",
                                    "workload.kernels_per_step=1", NULL};
    sim_advice adv[SIM_ADVICE_MAX];
    int n = checked_advice(s, SIM_BN_DATA_LOADING, adv);
    assert_false(advised(adv, n, "loader.num_workers=32"));
}

static void test_advice_workers_for_the_main_process(void **state)
{
    (void)state;
    static const char *const s[] = {"loader.num_workers=0",
                                    "dataset.decode_us=2000",
                                    "loader.batch_size=10",
                                    "dataset.samples=200",
                                    "workload.kernels_per_step=1",
                                    "workload.kernel_us=5000",
                                    NULL};
    sim_advice adv[SIM_ADVICE_MAX];
    int n = checked_advice(s, SIM_BN_MAIN_THREAD, adv);
    assert_true(advised(adv, n, "loader.num_workers=8"));
}

static void test_advice_pinned_copies_and_cuda_graphs(void **state)
{
    (void)state;
    static const char *const copy[] = {"dataset.input_bytes=1000000", "loader.num_workers=2",
                                       "loader.pin_memory=false", NULL};
    sim_advice adv[SIM_ADVICE_MAX];
    int n = checked_advice(copy, SIM_BN_H2D, adv);
    assert_true(advised(adv, n, "loader.pin_memory=true loader.non_blocking=true"));
    static const char *const launch[] = {"workload.kernels_per_step=1000", "workload.kernel_us=10",
                                         "workload.dispatch_us=20", NULL};
    n = checked_advice(launch, SIM_BN_CPU_DISPATCH, adv);
    assert_true(advised(adv, n, "training.cuda_graphs=true"));
}

static void test_advice_none_for_a_gpu_bound_run(void **state)
{
    (void)state;
    static const char *const s[] = {NULL};
    sim_advice adv[SIM_ADVICE_MAX];
    assert_int_equal(checked_advice(s, SIM_BN_GPU_COMPUTE, adv), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_advice_more_workers_where_cores_are_free),
        cmocka_unit_test(test_advice_no_more_workers_beyond_the_threads),
        cmocka_unit_test(test_advice_workers_for_the_main_process),
        cmocka_unit_test(test_advice_pinned_copies_and_cuda_graphs),
        cmocka_unit_test(test_advice_none_for_a_gpu_bound_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
