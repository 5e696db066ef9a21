/* test_calibrate_runs.c — `epochsim calibrate --runs` (sim/app/calibrate_runs.c): a fit to
 * runs the model itself predicted on an entry with known fields recovers those fields; a
 * held-out run's error falls; the default fields follow the rows' precisions; bad input fails
 * with file:line; the overlay written by -o moves `epochsim run` exactly as far as the fit said.
 * Each test writes its tables to a temp folder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/app/calibrate_runs.h"
#include "tests/app/calibrate_testkit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CATALOG EPOCHSIM_SOURCE_DIR "/configs/hardware"
#define A100 "a100-sxm4-80gb"

/* The catalog's entry with fp16_tflops x 0.8 and mem_bw_gbps x 0.9: the GPU "measured". */
static void truth(const char *gpu, sim_gpu_desc *out)
{
    static const char *const keys[] = {"fp16_tflops", "mem_bw_gbps"};
    static const double factors[] = {0.8, 0.9};
    assert_int_equal(cal_rows_scaled_gpu(CATALOG, gpu, keys, factors, 2, out), 0);
}

/* Fits fp16_tflops and mem_bw_gbps to the runs of table `runs` (held out: `check`, or NULL). */
static void fit_fp16_and_bw(const char *runs, const char *check, sim_cal_runs *c,
                            mdl_fit_result *fit)
{
    static const char *const params[] = {"fp16_tflops", "mem_bw_gbps"};
    sim_cal_runs_args a = {.runs = {runs},
                           .n_runs = 1,
                           .checks = {check},
                           .n_checks = !!check,
                           .params = params,
                           .n_params = 2,
                           .catalog = CATALOG};
    sim_err err;
    sim_err_clear(&err);
    assert_int_equal(sim_cal_runs_load(c, &a, stderr, &err), 0);
    assert_int_equal(sim_cal_runs_fit(c, fit, &err), 0);
}

/* Writes the model's own figures for rows on the A100 at 0.8 x its fp16_tflops (312) and 0.9 x
 * its mem_bw_gbps (2039), fits the two, and checks they come back: the optimum is there, with
 * zero residual; 1 % leaves room for kernel times rounded to whole ns and for the solver
 * stopping once its steps are below 0.07 % (calibrate_runs.c, FIT_K). */
static void recover_fp16_and_bw(const cal_row_spec *rows, size_t n, sim_val_metric metric)
{
    sim_gpu_desc t;
    truth(A100, &t);
    const char *path = cal_dir_path("runs.csv");
    assert_int_equal(cal_rows_write(path, A100, rows, n, &t, CATALOG, metric), 0);
    sim_cal_runs c;
    mdl_fit_result fit;
    fit_fp16_and_bw(path, NULL, &c, &fit);
    assert_true(fabs(fit.theta[0] / (0.8 * cal_param_start(&c.pr, 0)) - 1) < 0.01);
    assert_true(fabs(fit.theta[1] / (0.9 * cal_param_start(&c.pr, 1)) - 1) < 0.01);
    assert_true(fit.rms_end < 0.01 && fit.rms_start > 0.05);
    assert_true(sim_cal_runs_mape(&c.fit, c.after) < 1);
    sim_cal_runs_free(&c);
}

static void test_calibrate_runs_recovers_known_fields(void **state)
{
    (void)state;
    static const cal_row_spec rows[] = {
        {"resnet50", "amp_fp16", 64}, {"resnet50", "amp_fp16", 256}, {"resnet50", "tf32", 128},
        {"resnet50", "tf32", 32},     {"bert-base", "fp16", 16},     {"bert-base", "fp16", 64},
        {"bert-base", "tf32", 32},    {"bert-large", "fp16", 8},     {"bert-large", "fp16", 32},
        {"bert-large", "tf32", 16},   {"resnet50", "amp_fp16", 128}, {"bert-base", "tf32", 8},
    };
    recover_fp16_and_bw(rows, 12, SIM_VAL_SAMPLES_PER_S);
}

/* Inference passes (inference_ms) are runs too: the same two fields come back from six. */
static void test_calibrate_runs_inference_rows(void **state)
{
    (void)state;
    static const cal_row_spec rows[] = {
        {"resnet50", "amp_fp16", 64}, {"resnet50", "amp_fp16", 256}, {"bert-base", "fp16", 16},
        {"bert-base", "fp16", 64},    {"bert-large", "fp16", 8},     {"bert-large", "fp16", 32},
    };
    recover_fp16_and_bw(rows, 6, SIM_VAL_INFERENCE_MS);
}

static void test_calibrate_runs_held_out_row_improves(void **state)
{
    (void)state;
    static const cal_row_spec fit_rows[] = {
        {"resnet50", "amp_fp16", 64},
        {"resnet50", "amp_fp16", 128},
        {"bert-base", "fp16", 16},
        {"bert-base", "fp16", 32},
    };
    static const cal_row_spec held_out[] = {{"bert-large", "fp16", 8}};
    static const char *const gpu = "v100-sxm2-32gb";
    sim_gpu_desc t;
    truth(gpu, &t);
    const char *runs = cal_dir_path("v100.csv"), *check = cal_dir_path("v100-check.csv");
    assert_int_equal(cal_rows_write(runs, gpu, fit_rows, 4, &t, CATALOG, SIM_VAL_STEP_MS), 0);
    assert_int_equal(cal_rows_write(check, gpu, held_out, 1, &t, CATALOG, SIM_VAL_STEP_MS), 0);
    sim_cal_runs c;
    mdl_fit_result fit;
    fit_fp16_and_bw(runs, check, &c, &fit);
    double before = fabs(c.check_before[0] / c.check.rows[0].value - 1);
    double after = fabs(c.check_after[0] / c.check.rows[0].value - 1);
    /* On the catalog entry, BERT-large is off by the 0.8 and 0.9 factors (several %); with the
     * fitted fields it is the model's own prediction at the true ones, up to the fit's 0.1 %. */
    assert_true(before > 0.03);
    assert_true(after < 0.01);
    assert_true(after < before / 5);
    /* a prepared row re-priced on the fitted entry gives validate's own figure, bit for bit */
    sim_gpu_desc g = c.pr.gpu;
    for (size_t i = 0; i < c.pr.p; i++)
        *(double *)((char *)&g + c.pr.param[i]->offset) = fit.theta[i];
    for (size_t i = 0; i < c.fit.n; i++) {
        sim_val_row r = c.fit.rows[i];
        sim_val_predict_row(&r, CATALOG, &g);
        assert_true(r.predicted == c.after[i]);
    }
    sim_cal_runs_free(&c);
}

static void test_calibrate_runs_default_fields(void **state)
{
    (void)state;
    static const cal_row_spec rows[] = {{"resnet50", "amp_fp16", 64},
                                        {"bert-base", "tf32", 16},
                                        {"bert-base", "fp16", 16},
                                        {"resnet50", "tf32", 64}};
    sim_gpu_desc t;
    truth(A100, &t);
    const char *path = cal_dir_path("defaults.csv");
    assert_int_equal(cal_rows_write(path, A100, rows, 4, &t, CATALOG, SIM_VAL_STEP_MS), 0);
    sim_cal_runs_args a = {.runs = {path}, .n_runs = 1, .catalog = CATALOG};
    sim_cal_runs c;
    sim_err err;
    sim_err_clear(&err);
    assert_int_equal(sim_cal_runs_load(&c, &a, NULL, &err), 0);
    /* amp_fp16/fp16 price tensor kernels at fp16_tflops, tf32 at tf32_tflops; fp32_tflops and
     * bf16_tflops are no peak rate of these precisions' GEMMs and convolutions */
    static const char *const want[] = {"kernel_overhead_us", "tf32_tflops", "fp16_tflops",
                                       "mem_bw_gbps"};
    assert_int_equal(c.pr.p, 4);
    for (size_t i = 0; i < 4; i++)
        assert_string_equal(c.pr.param[i]->key, want[i]);
    sim_cal_runs_free(&c);
}

/* ---- the command line ------------------------------------------------------------------- */

#define sh cal_dir_sh
#define slurp cal_dir_slurp

/* Writes a small table (ResNet-50 amp_fp16 b64 and b128, BERT-base fp16 b16) on gpu. */
static void small_table(const char *name, const char *gpu, sim_val_metric m)
{
    static const cal_row_spec rows[] = {
        {"resnet50", "amp_fp16", 64}, {"resnet50", "amp_fp16", 128}, {"bert-base", "fp16", 16}};
    sim_gpu_desc t;
    truth(gpu, &t);
    assert_int_equal(cal_rows_write(cal_dir_path(name), gpu, rows, 3, &t, CATALOG, m), 0);
}

static void test_calibrate_runs_rejects_bad_input(void **state)
{
    (void)state;
    small_table("a.csv", A100, SIM_VAL_SAMPLES_PER_S);
    /* rows on two GPUs: the first row of the second file is named, with the first GPU's row */
    assert_int_equal(
        sh("sed '2,$s/^/v-/; s/a100-sxm4-80gb/v100-sxm2-32gb/' a.csv >v.csv && " EPOCHSIM_BINARY
           " calibrate --runs a.csv --runs v.csv >out.txt 2>err.txt"),
        1);
    assert_string_equal(slurp("out.txt"), "");
    char *e = slurp("err.txt");
    assert_non_null(strstr(e, "v.csv:2: error:"));
    assert_non_null(strstr(e, "a.csv:2 is on a100-sxm4-80gb: calibrate one GPU at a time"));
    /* an unknown field */
    assert_int_equal(sh(EPOCHSIM_BINARY " calibrate --runs a.csv --param fp17_tflops >out.txt "
                                        "2>err.txt"),
                     1);
    assert_non_null(strstr(slurp("err.txt"), "--param fp17_tflops: not a number field"));
    /* fewer rows than fields: one row for two */
    assert_int_equal(sh("head -2 a.csv >one.csv && " EPOCHSIM_BINARY
                        " calibrate --runs one.csv --param fp16_tflops --param mem_bw_gbps "
                        ">out.txt 2>err.txt"),
                     1);
    assert_non_null(strstr(slurp("err.txt"), "one.csv:2: error: 1 measured run(s) for 2 fitted"));
    /* a bad column in the header */
    assert_int_equal(sh("sed '1s/metric/metrik/' a.csv >bad.csv && " EPOCHSIM_BINARY
                        " calibrate --runs bad.csv >out.txt 2>err.txt"),
                     1);
    assert_non_null(strstr(slurp("err.txt"), "bad.csv:1"));
    assert_non_null(strstr(slurp("err.txt"), "column 4 must be 'metric'"));
    /* a row the model cannot predict: a batch the memory model calls out of memory */
    assert_int_equal(sh("sed '3s/,128,/,100000,/' a.csv >oom.csv && " EPOCHSIM_BINARY
                        " calibrate --runs oom.csv >out.txt 2>err.txt"),
                     1);
    e = slurp("err.txt");
    assert_non_null(strstr(e, "oom.csv:3: error: run 'resnet50-amp_fp16-b128' cannot be "
                              "predicted"));
    assert_non_null(strstr(e, "needs"));
    /* a metric that is no training run */
    assert_int_equal(sh("sed '2s/samples_per_s/gpu_util_pct/' a.csv >util.csv && " EPOCHSIM_BINARY
                        " calibrate --runs util.csv >out.txt 2>err.txt"),
                     1);
    assert_non_null(strstr(slurp("err.txt"), "util.csv:2: error: run 'resnet50-amp_fp16-b64' "
                                             "measures gpu_util_pct"));
    /* modes do not mix */
    assert_int_equal(sh(EPOCHSIM_BINARY " calibrate --runs a.csv --check x.trace >out.txt "
                                        "2>err.txt"),
                     2);
    assert_non_null(strstr(slurp("err.txt"), "--check goes with --trace"));
}

/* The number after the first `"key": ` in text at or after `from`. */
static double json_number(const char *text, const char *from, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *at = strstr(from ? strstr(text, from) : text, pat);
    assert_non_null(at);
    return strtod(at + strlen(pat), NULL);
}

#define RUN_ROW                                                                                    \
    EPOCHSIM_BINARY " run --quiet --set dataset.sample_bytes=1 --set dataset.decode_us=0 "         \
                    "--set dataset.decode_cv=0 --set dataset.input_bytes=1 --set "                 \
                    "training.epochs=1 --set training.max_steps=20 --set system.gpu=" A100         \
                    " --set system.gpu_count=1 --set workload.precision=amp_fp16 --set "           \
                    "workload.model=resnet50 --set loader.batch_size=64 --set "                    \
                    "workload.optimizer=sgd --set workload.optimizer_impl=forloop"

static void test_calibrate_runs_overlay_moves_run(void **state)
{
    (void)state;
    small_table("steps.csv", A100, SIM_VAL_STEP_MS);
    assert_int_equal(sh(EPOCHSIM_BINARY " calibrate --runs steps.csv --param fp16_tflops "
                                        "-o fitted.yaml --json fit.json 2>err.txt"),
                     0);
    char fit[65536];
    snprintf(fit, sizeof fit, "%s", slurp("fit.json"));
    double fitted = json_number(fit, NULL, "fitted");
    double before = json_number(fit, "\"fitted\": [", "before");
    double after = json_number(fit, "\"fitted\": [", "after");
    /* the fit moves fp16_tflops to 0.8 x 312 (mem_bw_gbps stays off by 0.9: the rest of the
     * error is left in the residual) */
    assert_true(fitted < 312 * 0.95 && fitted > 312 * 0.6);
    assert_non_null(strstr(slurp("fitted.yaml"), "a100-sxm4-80gb:"));
    assert_non_null(strstr(slurp("fitted.yaml"), "fp16_tflops:"));
    /* `run` as validate builds the first row, without and with the overlay: the p50 step time
     * is the fit's figure before (exactly) and after; after to 1e-4, as the overlay keeps 6
     * digits (%.6g), which may move some of the step's 825 kernels by a rounded ns */
    assert_int_equal(sh(RUN_ROW " --json plain.json 2>/dev/null"), 0);
    assert_true(fabs(json_number(slurp("plain.json"), NULL, "step_time_ms_p50") / before - 1) <
                1e-9);
    assert_int_equal(sh(RUN_ROW " --set system.catalog_overlay=fitted.yaml --json cal.json "
                                "2>/dev/null"),
                     0);
    double p50 = json_number(slurp("cal.json"), NULL, "step_time_ms_p50");
    assert_true(fabs(p50 / after - 1) < 1e-4);
    assert_true(fabs(p50 / before - 1) > 0.01);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_calibrate_runs_recovers_known_fields),
        cmocka_unit_test(test_calibrate_runs_inference_rows),
        cmocka_unit_test(test_calibrate_runs_held_out_row_improves),
        cmocka_unit_test(test_calibrate_runs_default_fields),
        cmocka_unit_test(test_calibrate_runs_rejects_bad_input),
        cmocka_unit_test(test_calibrate_runs_overlay_moves_run),
    };
    return cmocka_run_group_tests(tests, cal_dir_make, cal_dir_remove);
}
