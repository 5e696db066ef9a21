/* test_calibrate.c — `epochsim calibrate`'s parts (sim/setup/calibrate.h, overlay.h): it
 * recovers catalog fields from kernels the cost model itself timed, a fit on one real V100 trace
 * improves the model's kernel time of a trace left out of it, and the overlay it writes reads
 * back, is checked like a catalog file, and changes a run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/setup/calibrate.h"
#include "sim/setup/catalog.h"
#include "sim/setup/config.h"
#include "sim/setup/overlay.h"
#include "sim/setup/scenario.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CATALOG EPOCHSIM_SOURCE_DIR "/configs/hardware"
#define TRACES EPOCHSIM_SOURCE_DIR "/tests/data/validation-traces/kineto"

static sim_gpu_desc v100(void)
{
    sim_gpu_desc g;
    sim_err err;
    assert_int_equal(cfg_catalog_load(CATALOG, CFG_CAT_GPU, "v100-sxm2-32gb", &g, &err), 0);
    return g;
}

/* Kernels of every kind over four decades of work, "measured" on `truth`. */
static cal_set synthetic_kernels(const sim_gpu_desc *truth)
{
    cal_set s = {.n = 60, .cap = 60};
    s.obs = calloc(s.n, sizeof *s.obs);
    assert_non_null(s.obs);
    for (size_t i = 0; i < s.n; i++) {
        double w = pow(10, 5 + (double)(i % 20) / 4); /* 1e5 .. 3e9 */
        mdl_kernel k = {.kind = SIM_OP_KERNEL, .blocks = 1e9};
        if (i < 20) {
            k.math = MDL_MATH_SIMT;
            k.bytes = w * 10;
        } else {
            k.math = i < 40 ? MDL_MATH_GEMM : MDL_MATH_CONV;
            k.flops = w * 100;
            k.bytes = w / 10;
        }
        s.obs[i] = (cal_obs){.k = k, .precision = SIM_PREC_FP32};
        mdl_cost c;
        mdl_kernel_cost(&k, truth, SIM_PREC_FP32, &c);
        s.obs[i].measured_ns = fmax(c.compute_ns, c.memory_ns) + c.overhead_ns;
    }
    return s;
}

static void test_calibrate_recovers_fields_the_model_timed(void **state)
{
    (void)state;
    sim_gpu_desc truth = v100();
    truth.kernel_overhead_us = 3.1;
    truth.mem_bw_gbps = 640;
    truth.fp32_tflops = 12.5;
    cal_set data = synthetic_kernels(&truth);
    cal_problem pr = {.gpu = v100(), .data = &data};
    sim_err err;
    assert_int_equal(cal_add_param(&pr, "kernel_overhead_us", &err), 0);
    assert_int_equal(cal_add_param(&pr, "mem_bw_gbps", &err), 0);
    assert_int_equal(cal_add_param(&pr, "fp32_tflops", &err), 0);
    mdl_fit_result f;
    assert_int_equal(cal_fit(&pr, &f, &err), 0);
    /* the data is the model's own: the truth is an exact optimum; 1e-5 relative leaves room for
     * the solver's tolerance (xtol 1e-8) over three coupled parameters */
    assert_true(fabs(f.theta[0] / 3.1 - 1) < 1e-5);
    assert_true(fabs(f.theta[1] / 640 - 1) < 1e-5);
    assert_true(fabs(f.theta[2] / 12.5 - 1) < 1e-5);
    assert_true(fabs(cal_total_error(&pr, &data, f.theta)) < 1e-6);
    cal_set_free(&data);
}

static void test_calibrate_refuses_fields_it_cannot_fit(void **state)
{
    (void)state;
    sim_gpu_desc g = v100();
    cal_set data = synthetic_kernels(&g); /* fp32 only: no tensor-core kernel */
    cal_problem pr = {.gpu = g, .data = &data};
    sim_err err;
    assert_int_equal(cal_add_param(&pr, "fp16_tflops", &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "no measured kernel depends on it"));
    assert_int_equal(cal_add_param(&pr, "sms", &err), SIM_EINVAL); /* an int field */
    assert_int_equal(cal_add_param(&pr, "nonsense", &err), SIM_EINVAL);
    assert_int_equal(cal_add_param(&pr, "tf32_tflops", &err), SIM_EINVAL); /* 0 on a V100 */
    assert_int_equal(pr.p, 0);
    cal_set_free(&data);
}

/* Adds the kernels of a validation trace (a Kineto JSON, imported on the way). */
static void add_trace(const char *json, cal_set *out)
{
    sim_err err;
    assert_int_equal(cal_add_trace(json, out, &err), 0);
}

static void test_calibrate_on_one_trace_improves_a_trace_left_out(void **state)
{
    (void)state;
    cal_set fit_on = {0}, left_out = {0};
    add_trace(TRACES "/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz", &fit_on);
    add_trace(TRACES "/resnet50_num_workers_4/worker0.1623212756351.pt.trace.json.gz", &left_out);
    /* both recorded with record_shapes: most kernels' work is known */
    assert_true(fit_on.n > 5000 && left_out.n > 5000);
    cal_problem pr = {.gpu = v100(), .data = &fit_on};
    sim_err err;
    const char *fields[] = {"kernel_overhead_us", "mem_bw_gbps", "fp32_tflops"};
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(cal_add_param(&pr, fields[i], &err), 0);
    mdl_fit_result f;
    assert_int_equal(cal_fit(&pr, &f, &err), 0);
    double before = cal_total_error(&pr, &left_out, NULL);
    double after = cal_total_error(&pr, &left_out, f.theta);
    print_message("left-out trace kernel time: %+.1f %% -> %+.1f %%\n", 100 * before, 100 * after);
    /* Measured when written: +19.1 % -> +13.0 %; with the default curves read at the kernel's
     * ideal time on the reference A100 and the V100 SXM2's power-limited clock (models/cost.c,
     * sim/setup/catalog.c): +20.4 % -> +12.8 %; with the CUDA-core curve measured on cuBLAS SGEMM
     * and the fit holding the total (calibrate.c): +1.7 % -> +1.0 %. The left-out run is the same
     * model on the same GPU (another loader setting), so the fit must carry over: at least a
     * quarter of the error goes, and the weighted residual of the fitted trace falls. */
    assert_true(fabs(after) < 0.75 * fabs(before));
    assert_true(f.rms_end < f.rms_start);
    cal_set_free(&fit_on);
    cal_set_free(&left_out);
}

/* Creates the empty file `path` names (a mkstemp template, rewritten in place). */
static void make_temp(char *path)
{
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
}

static void write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static void test_overlay_round_trip_and_errors(void **state)
{
    (void)state;
    sim_gpu_desc g = v100();
    cal_set data = synthetic_kernels(&g);
    cal_problem pr = {.gpu = g, .data = &data};
    sim_err err;
    assert_int_equal(cal_add_param(&pr, "kernel_overhead_us", &err), 0);
    mdl_fit_result f = {.theta = {2.75}};
    char path[] = "/tmp/epochsim-test-overlay-XXXXXX";
    make_temp(path);
    assert_int_equal(cal_write_overlay(path, &pr, &f, "a test", &err), 0);
    sim_gpu_desc back = v100();
    assert_int_equal(cfg_overlay_apply(path, CFG_CAT_GPU, back.name, &back, &err), 0);
    assert_true(fabs(back.kernel_overhead_us - 2.75) < 1e-12);
    assert_true(back.mem_bw_gbps == g.mem_bw_gbps); /* fields it does not name stay */
    /* an entry for another GPU is still checked; errors carry file:line:col */
    write_file(path, "gpus:\n  a100-sxm4-80gb:\n    kernel_overhed_us: 3\n");
    assert_int_equal(cfg_overlay_apply(path, CFG_CAT_GPU, back.name, &back, &err), SIM_EINVAL);
    assert_int_equal(err.line, 3);
    assert_int_equal(err.col, 5);
    assert_non_null(strstr(err.msg, "did you mean 'kernel_overhead_us'"));
    write_file(path, "gpu:\n  x: {}\n");
    assert_int_equal(cfg_overlay_apply(path, CFG_CAT_GPU, back.name, &back, &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "unknown section 'gpu'"));
    write_file(path, "gpus:\n  v100-sxm2-32gb:\n    kernel_overhead_us: -1\n");
    assert_int_equal(cfg_overlay_apply(path, CFG_CAT_GPU, back.name, &back, &err), SIM_EINVAL);
    unlink(path);
    cal_set_free(&data);
}

/* Builds the default experiment with one `setting` and system.catalog_overlay = `overlay`
 * ("" = none); returns sim_scenario_build's code. */
static int build_with_overlay(const char *setting, const char *overlay, sim_scenario *sc,
                              sim_err *err)
{
    sim_experiment x;
    sim_experiment_defaults(&x);
    cfg_experiment_set set = {0};
    assert_int_equal(cfg_experiment_apply(setting, &x, &set, err), 0);
    char arg[128];
    snprintf(arg, sizeof arg, "system.catalog_overlay=%s", overlay);
    assert_int_equal(cfg_experiment_apply(arg, &x, &set, err), 0);
    return sim_scenario_build(&x, &set, CATALOG, sc, err);
}

/* A zoo step's time with and without an overlay that makes every kernel 40 us longer. */
static void test_overlay_changes_a_run(void **state)
{
    (void)state;
    char path[] = "/tmp/epochsim-test-overlay-XXXXXX";
    make_temp(path);
    write_file(path, "gpus:\n  a100-sxm4-80gb:\n    kernel_overhead_us: 42\n");
    int64_t gpu_ns[2];
    for (int i = 0; i < 2; i++) {
        sim_scenario sc;
        sim_err err;
        assert_int_equal(build_with_overlay("workload.model=resnet18", i ? path : "", &sc, &err),
                         0);
        gpu_ns[i] = sim_program_gpu_ns(&sc.program);
        if (i) assert_true(fabs(sc.hw.gpu.kernel_overhead_us - 42) < 1e-12);
        size_t kernels = sim_program_kernels(&sc.program);
        if (i) /* 40 us more per kernel, exactly: the overhead adds to every kernel's time */
            assert_true(llabs(gpu_ns[1] - gpu_ns[0] - (int64_t)kernels * 40000) <=
                        (int64_t)kernels);
        sim_scenario_free(&sc);
    }
    unlink(path);
}

/* An overlay that changes a card's measured clocks changes its clock factors: they are derived
 * again after it (scenario.c apply_overlay), and a tensor clock without the SIMT one is refused
 * there as in the catalog. */
static void test_overlay_clocks_are_derived_again(void **state)
{
    (void)state;
    char path[] = "/tmp/epochsim-test-overlay-XXXXXX";
    make_temp(path);
    static const char *const overlays[] = {
        "gpus:\n  t4:\n    sustained_mhz: 1200\n    sustained_tensor_mhz: 1500\n",
        "gpus:\n  t4:\n    sustained_mhz: 0\n"};
    for (int i = 0; i < 2; i++) {
        write_file(path, overlays[i]);
        sim_scenario sc;
        sim_err err;
        int rc = build_with_overlay("system.gpu=t4", path, &sc, &err);
        if (i == 0) {
            assert_int_equal(rc, 0);
            assert_true(fabs(sc.hw.gpu.clock_factor - 1200.0 / 1590) < 1e-12);
            assert_true(fabs(sc.hw.gpu.clock_factor_tensor - 1500.0 / 1590) < 1e-12);
            sim_scenario_free(&sc);
        } else { /* the catalog's tensor clock is left without its SIMT one */
            assert_int_equal(rc, SIM_EINVAL);
            assert_non_null(strstr(err.msg, "sustained_tensor_mhz without sustained_mhz"));
            assert_non_null(strstr(err.where, path));
        }
    }
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_calibrate_recovers_fields_the_model_timed),
        cmocka_unit_test(test_calibrate_refuses_fields_it_cannot_fit),
        cmocka_unit_test(test_calibrate_on_one_trace_improves_a_trace_left_out),
        cmocka_unit_test(test_overlay_round_trip_and_errors),
        cmocka_unit_test(test_overlay_changes_a_run),
        cmocka_unit_test(test_overlay_clocks_are_derived_again),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
