/* test_sampled.c — the sampled mode (run.sampled_pct, `--sampled`) on every shipped experiment
 * and the built-in default, each run both ways: where it cuts an epoch, the epoch time stays
 * within 1 % of the full simulation's (the bound docs/sampled.md promises); where it does not,
 * it says why and its figures are the full run's. Also its determinism and its command line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/app/run_cmd.h"
#include "sim/app/sweep_cmd.h"
#include "sim/setup/config.h"
#include "sim/setup/jobs.h"
#include "sim/setup/scenario.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CATALOG EPOCHSIM_SOURCE_DIR "/configs/hardware"
#define EXPERIMENTS EPOCHSIM_SOURCE_DIR "/configs/experiments"
/* The promise: within 1 % of the full run's epoch time on every shipped experiment. */
#define MAX_ERR_PCT 1.0
/* GPU-Util of a cut run: the simulated steps' plus the steady windows' rate over the rest, so
 * only what the extrapolated steps would have done differently moves it; 1 point allows that. */
#define MAX_UTIL_DIFF 1.0

/* Runs `file` (NULL: the default) with at most 2 epochs and the `--set` assignments of sets
 * (NULL-terminated; NULL = none), sampled at pct (0 = full). Returns 0, SIM_EOOM for an
 * experiment that does not fit (it is not simulated either way), or SIM_EUSAGE for a `jobs:`
 * list, which the sampled mode refuses (tests/app/test_bad_input, tests/core/test_gpushare). */
static int run_with(const char *file, const char *const *sets, double pct, sim_scenario *sc,
                    sim_result *res)
{
    sim_experiment x;
    sim_experiment_defaults(&x);
    cfg_experiment_set set = {0};
    sim_err err;
    sim_err_clear(&err);
    static const char *const extra[] = {"jobs", NULL};
    cfg_jobs jobs = {0};
    if (file && (cfg_experiment_load_with(file, extra, &x, &set, &err) ||
                 cfg_jobs_load(file, &x, &set, &jobs, &err)))
        fail_msg("%s: %s", file, err.msg);
    int n_jobs = jobs.n;
    cfg_jobs_free(&jobs);
    if (n_jobs) return SIM_EUSAGE;
    if (x.training.epochs > 2) x.training.epochs = 2; /* a short epoch count */
    for (int i = 0; sets && sets[i]; i++)
        if (cfg_experiment_apply(sets[i], &x, &set, &err)) fail_msg("%s: %s", sets[i], err.msg);
    x.run.sampled_pct = pct;
    int rc = sim_scenario_build(&x, &set, CATALOG, sc, &err);
    if (rc == SIM_EOOM) return rc;
    if (rc || sim_run(sc, res, &err)) fail_msg("%s: %s", file ? file : "default", err.msg);
    return SIM_OK;
}

static int run(const char *file, double pct, sim_scenario *sc, sim_result *res)
{
    return run_with(file, NULL, pct, sc, res);
}

/* One experiment both ways; returns whether the sampled mode cut an epoch. */
static bool check_one(const char *file, const char *const *sets)
{
    sim_scenario sc, sc2;
    sim_result full, samp;
    int rc = run_with(file, sets, 0, &sc, &full);
    int rc2 = run_with(file, sets, 0.5, &sc2, &samp);
    assert_int_equal(rc, rc2);
    const char *name = file ? strrchr(file, '/') + 1 : "(default)";
    if (rc == SIM_EUSAGE) {
        printf("%-40s a jobs: list: the sampled mode refuses it\n", name);
        return false;
    }
    if (rc == SIM_EOOM) {
        printf("%-40s does not fit: not simulated either way\n", name);
        sim_scenario_free(&sc);
        sim_scenario_free(&sc2);
        return false;
    }
    double err = 100 * (samp.mean.time_s / full.mean.time_s - 1);
    printf("%-40s full %9.3f s, sampled %9.3f s +- %.3f %%: %+.3f %%, %lld of %lld steps%s%s\n",
           name, full.mean.time_s, samp.mean.time_s, samp.time_half_pct, err,
           (long long)samp.steps_simulated, (long long)samp.steps,
           samp.first_full >= 0 ? "; in full: " : "",
           samp.first_full >= 0 ? sim_sampled_why_text(samp.why_full) : "");
    assert_int_equal(samp.window_steps > 0, 1);
    bool earlier_cut = false;
    for (int i = 0; i < full.n_epochs; i++) {
        const sim_epoch_result *a = &full.epochs[i], *b = &samp.epochs[i];
        assert_int_equal(a->steps, b->steps);
        /* every epoch within the bound; an uncut one after uncut ones is the same run */
        assert_true(fabs(100 * (b->time_s / a->time_s - 1)) <= MAX_ERR_PCT);
        if (b->steps_simulated == b->steps) {
            if (!earlier_cut) assert_true(a->time_s == b->time_s); /* the same clock, to the ns */
            assert_true(b->time_half_pct == 0);
        } else {
            earlier_cut = true;
            assert_true(b->time_half_pct <= 0.5); /* it cut only once the interval was narrow */
            assert_true(fabs(a->gpu_util_pct - b->gpu_util_pct) <= MAX_UTIL_DIFF);
            assert_int_equal(a->samples, b->samples);
            /* the page cache after a cut is as a whole epoch leaves it (sim_loader_cut): the
             * next epoch's hits match; 1 point for the samples at the cut, whose order of
             * reading differs */
            assert_true(fabs(a->cache_hit_pct - b->cache_hit_pct) <= 1.0);
        }
    }
    assert_true(fabs(err) <= MAX_ERR_PCT);
    /* An epoch simulated to its end is named with the reason. */
    assert_int_equal(samp.first_full >= 0, samp.epochs_cut < samp.n_epochs);
    bool cut = samp.epochs_cut > 0;
    sim_result_free(&full);
    sim_result_free(&samp);
    sim_scenario_free(&sc);
    sim_scenario_free(&sc2);
    return cut;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_sampled_within_1pct_of_every_shipped_experiment(void **state)
{
    (void)state;
    DIR *d = opendir(EXPERIMENTS);
    assert_non_null(d);
    char *files[256];
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < 256;) {
        size_t len = strlen(e->d_name);
        if (len > 5 && !strcmp(e->d_name + len - 5, ".yaml")) {
            files[n] = malloc(sizeof EXPERIMENTS + len + 1);
            sprintf(files[n++], "%s/%s", EXPERIMENTS, e->d_name);
        }
    }
    closedir(d);
    qsort(files, (size_t)n, sizeof *files, by_name);
    assert_true(n >= 18);
    int cut = check_one(NULL, NULL);
    for (int i = 0; i < n; i++) {
        cut += check_one(files[i], NULL);
        free(files[i]);
    }
    assert_true(cut >= 5); /* the mode does cut: the default and the long experiments */
}

/* Cuts the shipped experiments do not reach: four GPUs meeting at each all-reduce (every rank's
 * loader cut after the same batches), a page cache that fills over several epochs, gradient
 * accumulation (cut at whole optimizer steps) and the main thread loading batches itself. */
static void test_sampled_cuts_keep_the_pipeline_consistent(void **state)
{
    (void)state;
    static const char *const four_gpus[] = {"dataset.samples=60000", NULL};
    static const char *const cache[] = {"system.page_cache_gb=5", "training.epochs=3",
                                        "training.max_steps=300", NULL};
    static const char *const accum[] = {"workload.model=resnet50", "workload.accum_steps=3",
                                        "training.max_steps=600", NULL};
    static const char *const main_thread[] = {"loader.num_workers=0", "training.max_steps=1000",
                                              NULL};
    assert_true(check_one(EXPERIMENTS "/s5-nvlink-vs-pcie.yaml", four_gpus));
    assert_true(check_one(EXPERIMENTS "/hdd-bound.yaml", cache));
    assert_true(check_one(NULL, accum));
    assert_true(check_one(NULL, main_thread));
}

/* Same inputs, same cut, same figures. */
static void test_sampled_is_deterministic(void **state)
{
    (void)state;
    sim_scenario sc;
    sim_result a, b;
    assert_int_equal(run(EXPERIMENTS "/decode-bound.yaml", 0.5, &sc, &a), 0);
    sim_scenario_free(&sc);
    assert_int_equal(run(EXPERIMENTS "/decode-bound.yaml", 0.5, &sc, &b), 0);
    sim_scenario_free(&sc);
    assert_int_equal(a.epochs_cut, 1);
    assert_true(a.mean.time_s == b.mean.time_s);
    assert_true(a.time_half_pct == b.time_half_pct);
    assert_int_equal(a.events, b.events);
    assert_int_equal(a.steps_simulated, b.steps_simulated);
    sim_result_free(&a);
    sim_result_free(&b);
}

static int cmd(int (*fn)(int, char **), char *a, char *b, char *c, char *d)
{
    char *argv[] = {"cmd", a, b, c, d, NULL};
    int argc = 1;
    while (argv[argc])
        argc++;
    return fn(argc, argv);
}

static void test_sampled_command_line(void **state)
{
    (void)state;
    assert_int_equal(cmd(sim_run_cmd, "--sampled", "--quiet", "--no-advice", NULL), 0);
    assert_int_equal(cmd(sim_run_cmd, "--sampled=0.2", "--quiet", "--no-advice", NULL), 0);
    assert_int_equal(cmd(sim_run_cmd, "--sampled=abc", "--quiet", NULL, NULL), 1); /* a number */
    assert_int_equal(cmd(sim_run_cmd, "--sampled=50", "--quiet", NULL, NULL), 1);  /* 0 .. 10 */
    /* every-step outputs are refused, as a usage error */
    assert_int_equal(cmd(sim_run_cmd, "--sampled", "--util-csv", "/dev/null", NULL), 2);
    assert_int_equal(cmd(sim_run_cmd, "--sampled", "--timeline", "/dev/null", NULL), 2);
    /* a sweep cannot vary the mode: its rows would not share columns */
    assert_int_equal(cmd(sim_sweep_cmd, "--sweep", "run.sampled_pct=0,1", "-o", "/dev/null"), 1);
}

int main(void)
{
    setenv("EPOCHSIM_CATALOG", CATALOG, 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sampled_within_1pct_of_every_shipped_experiment),
        cmocka_unit_test(test_sampled_cuts_keep_the_pipeline_consistent),
        cmocka_unit_test(test_sampled_is_deterministic),
        cmocka_unit_test(test_sampled_command_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
