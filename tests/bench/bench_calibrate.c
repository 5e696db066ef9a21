/* bench_calibrate.c — wall time of `calibrate --runs` on 50 measured runs with 3 fitted fields:
 * ResNet-50, BERT-base and BERT-large rows on the A100 SXM4 80GB at several batches, in
 * amp_fp16/fp16 and tf32, whose values the model itself predicts with kernel_overhead_us x 1.5,
 * fp16_tflops x 0.8 and mem_bw_gbps x 0.9; the fit starts from the catalog's entry. Uses the
 * real catalog (the validate rows need its CPUs and systems), so the figure moves with it.
 * Usage: bench_calibrate [THREADS] (0 = one per CPU). */
#include "sim/app/calibrate_runs.h"
#include "tests/app/calibrate_testkit.h"

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    static const char *const keys[] = {"kernel_overhead_us", "fp16_tflops", "mem_bw_gbps"};
    static const double factors[] = {1.5, 0.8, 0.9};
    static const int batches[] = {16, 24, 32, 48, 64, 80, 96, 112, 120};
    cal_row_spec rows[64];
    size_t n = 0;
    for (size_t b = 0; b < sizeof batches / sizeof *batches; b++) {
        rows[n++] = (cal_row_spec){"resnet50", "amp_fp16", batches[b] * 2};
        rows[n++] = (cal_row_spec){"resnet50", "tf32", batches[b] * 2};
        rows[n++] = (cal_row_spec){"bert-base", "fp16", batches[b]};
        rows[n++] = (cal_row_spec){"bert-base", "tf32", batches[b]};
        rows[n++] = (cal_row_spec){"bert-large", "fp16", batches[b] / 2 + 2};
        rows[n++] = (cal_row_spec){"bert-large", "tf32", batches[b] / 2 + 2};
    }
    n = 50;
    char path[] = "/tmp/bench-calibrate-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return perror("mkstemp"), 1;
    close(fd);
    sim_gpu_desc truth;
    if (cal_rows_scaled_gpu(EPOCHSIM_CATALOG_DIR, "a100-sxm4-80gb", keys, factors, 3, &truth) ||
        cal_rows_write(path, "a100-sxm4-80gb", rows, n, &truth, EPOCHSIM_CATALOG_DIR,
                       SIM_VAL_SAMPLES_PER_S))
        return fprintf(stderr, "cannot write the rows\n"), 1;
    sim_cal_runs_args a = {.runs = {path},
                           .n_runs = 1,
                           .params = keys,
                           .n_params = 3,
                           .catalog = EPOCHSIM_CATALOG_DIR,
                           .threads = argc > 1 ? atoi(argv[1]) : 0};
    sim_cal_runs c;
    mdl_fit_result fit;
    sim_err err;
    sim_err_clear(&err);
    double t0 = now_s();
    int rc = sim_cal_runs_load(&c, &a, stderr, &err);
    double t1 = now_s();
    if (!rc) rc = sim_cal_runs_fit(&c, &fit, &err);
    double t2 = now_s();
    unlink(path);
    if (rc) return sim_err_print(&err, stderr), 1;
    for (size_t i = 0; i < c.pr.p; i++)
        printf("%-20s start %10.4g fitted %10.4g (true x%.2f: %10.4g, fit off by %+.4f %%)\n",
               c.pr.param[i]->key, cal_param_start(&c.pr, i), fit.theta[i], factors[i],
               cal_param_start(&c.pr, i) * factors[i],
               100 * (fit.theta[i] / (cal_param_start(&c.pr, i) * factors[i]) - 1));
    printf("%zu rows, %zu fields, %d threads: load + predict %.2f s, fit %.2f s (%d iterations, "
           "%ld runs simulated), total %.2f s\n",
           c.fit.n, c.pr.p, c.threads, t1 - t0, t2 - t1, fit.iterations, c.evaluations, t2 - t0);
    sim_cal_runs_free(&c);
    return 0;
}
