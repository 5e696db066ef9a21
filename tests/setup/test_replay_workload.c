/* test_replay_workload.c — trace replay (sim/setup/replay_workload.h): the five real traces
 * replayed on the machine they were recorded on reproduce their step time and GPU busy time within
 * 5 % (issue 4 §3), the kernel rescaling rules, what-if directions, and the error cases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "models/cost.h"
#include "sim/setup/catalog.h"
#include "sim/setup/config.h"
#include "sim/setup/scenario.h"
#include "traces/kineto.h"
#include "sim/setup/replay_workload.h"
#include "traces/stats.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SRC EPOCHSIM_SOURCE_DIR
#define CATALOG SRC "/configs/hardware"
#define EXP SRC "/configs/experiments/"
#define VT SRC "/tests/data/validation-traces/"

/* The bar for same-system replay. */
#define REPLAY_TOL 0.05

typedef struct figures {
    double step_ms; /* median step */
    double busy_ms; /* GPU busy per step */
    double wait_ms; /* data wait per step (simulated: the GPU's data stall per step) */
} figures;

/* Recorded medians over the trace's steps, computed from its records (traces/stats.h), not from
 * the replay path. */
static void recorded(const char *json, figures *f)
{
    char tmp[] = "/tmp/test-replay-XXXXXX";
    int fd = mkstemp(tmp);
    assert_true(fd >= 0);
    close(fd);
    sim_err err;
    assert_int_equal(trc_kineto_import(json, tmp, NULL, NULL, &err), 0);
    trc_reader *r;
    assert_int_equal(trc_reader_open(tmp, &r, &err), 0);
    double step[64], busy[64], wait[64];
    size_t n = 0;
    const trc_step *s;
    while (trc_reader_next_step(r, &s, &err) == 1 && n < 64) {
        trc_step_stat st;
        assert_int_equal(trc_step_stats(s, &st), 0);
        step[n] = (double)st.step_ns / 1e6;
        busy[n] = (double)st.gpu_busy_ns / 1e6;
        wait[n] = (double)st.data_wait_ns / 1e6;
        n++;
    }
    trc_reader_close(r);
    unlink(tmp);
    assert_true(n > 0);
    gsl_sort(step, 1, n);
    gsl_sort(busy, 1, n);
    gsl_sort(wait, 1, n);
    f->step_ms = gsl_stats_median_from_sorted_data(step, 1, n);
    f->busy_ms = gsl_stats_median_from_sorted_data(busy, 1, n);
    f->wait_ms = gsl_stats_median_from_sorted_data(wait, 1, n);
}

/* Runs experiment file `exp` with optional --set assignments (NULL-terminated). */
static int simulate(const char *exp, const char *const *sets, figures *f, sim_scenario *keep,
                    sim_err *err)
{
    sim_experiment x;
    cfg_experiment_set set = {0};
    sim_experiment_defaults(&x);
    int rc = cfg_experiment_load(exp, &x, &set, err);
    for (int i = 0; !rc && sets && sets[i]; i++)
        rc = cfg_experiment_apply(sets[i], &x, &set, err);
    sim_scenario sc;
    memset(&sc, 0, sizeof sc);
    if (!rc) rc = sim_scenario_build(&x, &set, CATALOG, &sc, err);
    sim_result res;
    memset(&res, 0, sizeof res);
    if (!rc) rc = sim_run(&sc, &res, err);
    if (!rc) {
        const sim_epoch_result *m = &res.mean;
        double per_step_ms = res.total_time_s * 1e3 / (double)res.steps;
        f->step_ms = m->step_time_ms_p50;
        /* GPU busy as the recording counts it: kernels (NCCL replayed as kernels included) and
         * copies on the link. */
        f->busy_ms = (m->gpu_util_pct + m->h2d_busy_pct) / 100.0 * per_step_ms;
        double data_pct = m->stall_pct[SIM_STALL_STORAGE] + m->stall_pct[SIM_STALL_DECODE] +
                          m->stall_pct[SIM_STALL_MAIN];
        f->wait_ms = data_pct / 100.0 * per_step_ms;
    }
    sim_result_free(&res);
    if (keep && !rc)
        *keep = sc;
    else
        sim_scenario_free(&sc);
    return rc;
}

static double rel(double sim, double rec)
{
    return fabs(sim - rec) / rec;
}

static void check_replay(const char *exp, const char *json, const char *label)
{
    if (access(json, R_OK) != 0) {
        skip();
        return;
    }
    figures rec, sim;
    recorded(json, &rec);
    sim_err err;
    int rc = simulate(exp, NULL, &sim, NULL, &err);
    if (rc) fprintf(stderr, "%s: %s\n", label, err.msg);
    assert_int_equal(rc, 0);
    printf("replay %-18s step %8.2f ms rec %8.2f sim (%+.1f %%)   busy %8.2f rec %8.2f sim "
           "(%+.1f %%)\n",
           label, rec.step_ms, sim.step_ms, 100 * (sim.step_ms / rec.step_ms - 1), rec.busy_ms,
           sim.busy_ms, 100 * (sim.busy_ms / rec.busy_ms - 1));
    assert_true(rel(sim.step_ms, rec.step_ms) <= REPLAY_TOL);
    assert_true(rel(sim.busy_ms, rec.busy_ms) <= REPLAY_TOL);
}

static void test_replay_resnet50_nw0_same_system(void **state)
{
    (void)state;
    check_replay(EXP "replay-resnet50-nw0.yaml",
                 VT "kineto/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
                 "#1 resnet50 nw0");
}

static void test_replay_resnet50_nw4_same_system(void **state)
{
    (void)state;
    check_replay(EXP "replay-resnet50-nw4.yaml",
                 VT "kineto/resnet50_num_workers_4/worker0.1623212756351.pt.trace.json.gz",
                 "#2 resnet50 nw4");
}

static void test_replay_hta_ns_resolution_same_system(void **state)
{
    (void)state;
    check_replay(EXP "replay-hta-ns-resolution.yaml",
                 VT "hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
                 "#3 hta ns_resol.");
}

static void test_replay_hta_nccl_same_system(void **state)
{
    (void)state;
    check_replay(EXP "replay-hta-nccl.yaml", VT "hta/nccl_parser_config/nccl_data.json.gz",
                 "#4 hta nccl");
}

static void test_replay_hta_recsys_same_system(void **state)
{
    (void)state;
    check_replay(EXP "replay-hta-recsys.yaml", VT "hta/trace_diff/control/control.json.gz",
                 "#5 hta recsys");
}

/* ---- kernel rescaling ---------------------------------------------------------------------- */

static void load_gpu(const char *name, sim_gpu_desc *g)
{
    sim_err err;
    assert_int_equal(cfg_catalog_load(CATALOG, CFG_CAT_GPU, name, g, &err), 0);
}

static void test_replay_kernel_same_gpu_exact(void **state)
{
    (void)state;
    sim_gpu_desc v;
    load_gpu("v100-sxm2-32gb", &v);
    int64_t t[] = {1, 2500, 63700, 1234567};
    for (size_t i = 0; i < 4; i++)
        for (int u = SIM_UNIT_NONE; u <= SIM_UNIT_MEMORY; u++)
            assert_int_equal(trc_replay_kernel_ns(t[i], (sim_unit)u, 1, 1e9, 1e6, 80, &v, &v,
                                                  SIM_PREC_FP32, 1.0),
                             t[i]);
}

static void test_replay_kernel_roofline_ratios(void **state)
{
    (void)state;
    sim_gpu_desc v, a;
    load_gpu("v100-sxm2-32gb", &v);
    load_gpu("a100-sxm4-80gb", &a);
    /* A long memory-bound kernel (efficiency at the top of the curve on both, overhead small):
     * time falls by the bandwidth ratio within the overhead's share (2 us of 5 ms). */
    int64_t rec = 5000000;
    double bw = v.mem_bw_gbps / a.mem_bw_gbps;
    int64_t m = trc_replay_kernel_ns(rec, SIM_UNIT_MEMORY, 0, 0, 0, 0, &v, &a, SIM_PREC_FP32, 1);
    assert_true(fabs((double)m / rec - bw) < 0.01);
    /* fp32 GEMM on CUDA cores: cuBLAS does not use TF32 in fp32 -> the ratio of the fp32 rates
     * at the clocks the two cards hold (the V100 SXM2's power limit keeps it below boost). */
    int64_t g = trc_replay_kernel_ns(rec, SIM_UNIT_CUDA, 0, 0, 0, 0, &v, &a, SIM_PREC_FP32, 1);
    double fp32_ratio = v.fp32_tflops * v.clock_factor / (a.fp32_tflops * a.clock_factor);
    assert_true(fabs((double)g / rec - fp32_ratio) < 0.01);
    /* fp32 conv: cuDNN runs TF32 tensor cores on the A100 (PyTorch default) -> much faster
     * than the fp32 ratio alone. */
    int64_t c = trc_replay_kernel_ns(rec, SIM_UNIT_CUDA, 1, 0, 0, 0, &v, &a, SIM_PREC_FP32, 1);
    assert_true((double)c / rec < 0.5 * v.fp32_tflops / a.fp32_tflops);
    /* A launch-latency kernel (at the GPU's fixed overhead) does not speed up by the roofline:
     * it scales by the overhead ratio only. */
    int64_t tiny = (int64_t)(v.kernel_overhead_us * 1e3);
    int64_t tt = trc_replay_kernel_ns(tiny, SIM_UNIT_MEMORY, 0, 0, 0, 0, &v, &a, SIM_PREC_FP32, 1);
    assert_true(llabs(tt - (int64_t)(a.kernel_overhead_us * 1e3)) <= 1);
    /* Collectives kept as recorded (unit NONE). */
    assert_int_equal(trc_replay_kernel_ns(rec, SIM_UNIT_NONE, 0, 0, 0, 0, &v, &a, SIM_PREC_FP32, 1),
                     rec);
}

static void test_replay_kernel_waves(void **state)
{
    (void)state;
    sim_gpu_desc v, a;
    load_gpu("v100-sxm2-32gb", &v);
    load_gpu("a100-sxm4-80gb", &a);
    /* A compute kernel of exactly one wave on the V100 (80 SMs x 2 blocks = 160) is 0.74 of a
     * wave on the A100 (108 x 2 = 216 slots): the A100's extra SMs idle, so the speed-up is
     * below the full peak ratio that a kernel of many waves gets. */
    int64_t rec = 2000000;
    int64_t one = trc_replay_kernel_ns(rec, SIM_UNIT_CUDA, 0, 0, 0, 160, &v, &a, SIM_PREC_FP32, 1);
    int64_t many = trc_replay_kernel_ns(rec, SIM_UNIT_CUDA, 0, 0, 0, 0, &v, &a, SIM_PREC_FP32, 1);
    assert_true(one > many);
    /* closed form: per-SM rate ratio (fp32 per SM-clock) for a kernel that fits in one wave on
     * both: t_a / t_v = (fp32_v / sms_v) / (fp32_a / sms_a) within the efficiency curve's
     * difference (same work on both, same curve point) */
    double per_sm =
        (v.fp32_tflops * v.clock_factor / v.sms) / (a.fp32_tflops * a.clock_factor / a.sms);
    assert_true(fabs((double)one / rec - per_sm) < 0.02);
}

static void test_replay_kernel_batch_efficiency(void **state)
{
    (void)state;
    sim_gpu_desc v;
    load_gpu("v100-sxm2-32gb", &v);
    /* Doubling the batch doubles a large kernel's work: at the flat top of the efficiency curve
     * the time doubles; a small kernel (low efficiency) less than doubles. */
    int64_t big = 20000000, small = 20000;
    int64_t b2 = trc_replay_kernel_ns(big, SIM_UNIT_CUDA, 0, 0, 0, 0, &v, &v, SIM_PREC_FP32, 2);
    assert_true(fabs((double)b2 / big - 2.0) < 0.02);
    int64_t s2 = trc_replay_kernel_ns(small, SIM_UNIT_MEMORY, 0, 0, 0, 0, &v, &v, SIM_PREC_FP32, 2);
    assert_true(s2 > small && s2 < 2 * small);
}

static void test_replay_gpu_candidates(void **state)
{
    (void)state;
    char c[SIM_NAME_MAX];
    assert_int_equal(trc_replay_gpu_candidate("Tesla V100-DGXS-32GB", c), 1);
    assert_string_equal(c, "v100-sxm2-32gb");
    assert_int_equal(trc_replay_gpu_candidate("NVIDIA A100-PG509-200", c), 1);
    assert_string_equal(c, "a100-sxm4-40gb");
    assert_int_equal(trc_replay_gpu_candidate("Tesla V100-SXM2-32GB", c), 0);
    assert_string_equal(c, "v100-sxm2-32gb");
    trc_replay_gpu_candidate("NVIDIA GeForce RTX 4090", c);
    assert_string_equal(c, "rtx-4090");
    const char *why;
    assert_string_equal(trc_replay_cpu_guess("Tesla V100-DGXS-32GB", &why), "xeon-e5-2698-v4");
    assert_null(trc_replay_cpu_guess("NVIDIA A100-PG509-200", &why));
}

/* ---- what-if directions -------------------------------------------------------------------- */

#define NW0 EXP "replay-resnet50-nw0.yaml"
#define NW0_JSON VT "kineto/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"

static void whatif(const char *exp, const char *const *sets, figures *f)
{
    sim_err err;
    int rc = simulate(exp, sets, f, NULL, &err);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
}

static void test_replay_whatif_gpu(void **state)
{
    (void)state;
    if (access(NW0_JSON, R_OK) != 0) {
        skip();
        return;
    }
    /* Same CPU, other GPU: the V100 trace's kernel time falls on an A100 and more on an H100;
     * the step (dispatch- and loader-bound) falls far less: launch-bound parts do not speed up. */
    figures v, a, h;
    const char *const base[] = {"loader.num_workers=4", NULL};
    const char *const on_a[] = {"loader.num_workers=4", "system.gpu=a100-sxm4-80gb", NULL};
    const char *const on_h[] = {"loader.num_workers=4", "system.gpu=h100-sxm5-80gb", NULL};
    whatif(NW0, base, &v);
    whatif(NW0, on_a, &a);
    whatif(NW0, on_h, &h);
    printf("what-if GPU: busy V100 %.2f A100 %.2f H100 %.2f ms; step %.2f %.2f %.2f ms\n",
           v.busy_ms, a.busy_ms, h.busy_ms, v.step_ms, a.step_ms, h.step_ms);
    assert_true(a.busy_ms < 0.8 * v.busy_ms);
    assert_true(h.busy_ms < a.busy_ms);
    /* the step cannot fall below the (unchanged) CPU dispatch of the V100 run's program */
    assert_true(a.step_ms > 0.8 * v.step_ms);
}

static void test_replay_whatif_cpu(void **state)
{
    (void)state;
    if (access(NW0_JSON, R_OK) != 0) {
        skip();
        return;
    }
    /* A faster core shortens dispatch and decode by its single-thread ratio; with num_workers=0
     * the step is all CPU but the GPU's share, so it shortens by nearly that ratio. */
    figures slow, fast;
    const char *const on_fast[] = {"system.cpu=core-i9-13900k", NULL};
    whatif(NW0, NULL, &slow);
    whatif(NW0, on_fast, &fast);
    sim_err err;
    sim_cpu_desc a, b;
    assert_int_equal(cfg_catalog_load(CATALOG, CFG_CAT_CPU, "xeon-e5-2698-v4", &a, &err), 0);
    assert_int_equal(cfg_catalog_load(CATALOG, CFG_CAT_CPU, "core-i9-13900k", &b, &err), 0);
    printf("what-if CPU: step %.2f -> %.2f ms (single_thread %.2f -> %.2f)\n", slow.step_ms,
           fast.step_ms, a.single_thread, b.single_thread);
    assert_true(fast.step_ms < slow.step_ms);
    /* at least the ratio on the loader+dispatch part, never faster than the pure ratio */
    assert_true(fast.step_ms >= slow.step_ms * a.single_thread / b.single_thread * 0.99);
}

static void test_replay_whatif_batch_and_graphs(void **state)
{
    (void)state;
    if (access(NW0_JSON, R_OK) != 0) {
        skip();
        return;
    }
    figures b32, b64, graphs;
    const char *const s32[] = {"loader.num_workers=4", NULL};
    const char *const s64[] = {"loader.num_workers=4", "loader.batch_size=64", NULL};
    const char *const sg[] = {"loader.num_workers=4", "training.cuda_graphs=true", NULL};
    whatif(NW0, s32, &b32);
    whatif(NW0, s64, &b64);
    whatif(NW0, sg, &graphs);
    printf("what-if batch 64: busy %.2f -> %.2f ms, step %.2f -> %.2f ms; CUDA graphs step "
           "%.2f ms\n",
           b32.busy_ms, b64.busy_ms, b32.step_ms, b64.step_ms, graphs.step_ms);
    /* twice the work per kernel: at most twice the GPU time, more than 1.5x (ResNet-50's
     * kernels at batch 32 are mostly past the knee of the efficiency curves) */
    assert_true(b64.busy_ms <= 2.0 * b32.busy_ms && b64.busy_ms > 1.5 * b32.busy_ms);
    /* CUDA graphs remove per-kernel dispatch: the launch-bound step becomes GPU-bound */
    assert_true(graphs.step_ms < b32.step_ms);
    assert_true(graphs.step_ms >= 0.95 * b32.busy_ms);
}

#define NW4 EXP "replay-resnet50-nw4.yaml"
#define NW4_JSON VT "kineto/resnet50_num_workers_4/worker0.1623212756351.pt.trace.json.gz"

static void test_replay_predict_other_loader(void **state)
{
    (void)state;
    if (access(NW0_JSON, R_OK) != 0 || access(NW4_JSON, R_OK) != 0) {
        skip();
        return;
    }
    figures rec0, rec4, p4, p0;
    recorded(NW0_JSON, &rec0);
    recorded(NW4_JSON, &rec4);
    const char *const w4[] = {"loader.num_workers=4", "training.max_steps=200", NULL};
    const char *const w0[] = {"loader.num_workers=0", "training.max_steps=200", NULL};
    whatif(NW0, w4, &p4);
    whatif(NW4, w0, &p0);
    printf("predict nw4 from trace #1: step %.2f (recorded %.2f, %+.1f %%), data stall %.2f ms "
           "(recorded wait %.2f)\n",
           p4.step_ms, rec4.step_ms, 100 * (p4.step_ms / rec4.step_ms - 1), p4.wait_ms,
           rec4.wait_ms);
    printf("predict nw0 from trace #2: step %.2f (recorded %.2f, %+.1f %%), data stall %.2f ms "
           "(recorded wait %.2f)\n",
           p0.step_ms, rec0.step_ms, 100 * (p0.step_ms / rec0.step_ms - 1), p0.wait_ms,
           rec0.wait_ms);
    /* Bands, not the 5 % of same-system replay: the two recordings' main threads spend 16 %
     * different CPU time on the same ops (105.3 vs 121.9 ms of dispatch, docs/replay.md), which
     * no loader setting explains; the loader part itself is predicted (4 workers keep up). */
    assert_true(rel(p4.step_ms, rec4.step_ms) <= 0.10);
    assert_true(rel(p0.step_ms, rec0.step_ms) <= 0.15);
    assert_true(p4.wait_ms < 5.0); /* recorded 1.25 ms */
    assert_true(p0.wait_ms > 0.7 * rec0.wait_ms && p0.wait_ms < 1.1 * rec0.wait_ms);
}

/* ---- errors -------------------------------------------------------------------------------- */

static void expect_error(const char *const *sets, int code, const char *needle)
{
    sim_err err;
    figures f;
    int rc = simulate(EXP "replay-resnet50-nw0.yaml", sets, &f, NULL, &err);
    assert_int_equal(rc, code);
    if (!strstr(err.msg, needle)) fprintf(stderr, "message: %s\n", err.msg);
    assert_non_null(strstr(err.msg, needle));
}

static void test_replay_errors(void **state)
{
    (void)state;
    const char *const missing[] = {"workload.trace=/nonexistent/x.trace", NULL};
    expect_error(missing, SIM_ENOENT, "workload.trace");
    char bad[] = "/tmp/test-replay-bad-XXXXXX";
    int fd = mkstemp(bad);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "\x82\xa3not a trace", 13), 13);
    close(fd);
    char set_bad[600];
    snprintf(set_bad, sizeof set_bad, "workload.trace=%s", bad);
    const char *const corrupt[] = {set_bad, NULL};
    expect_error(corrupt, SIM_EFORMAT, "workload.trace");
    unlink(bad);
    const char *const bad_gpu[] = {"workload.trace_gpu=no-such-gpu", NULL};
    expect_error(bad_gpu, SIM_ENOENT, "workload.trace_gpu");
    const char *const bad_cpu[] = {"workload.trace_cpu=no-such-cpu", NULL};
    expect_error(bad_cpu, SIM_ENOENT, "workload.trace_cpu");
    /* the A100 trace names no CPU and has no guess: trace_cpu is required */
    const char *const no_cpu[] = {"workload.trace=" VT "hta/nccl_parser_config/nccl_data.json.gz",
                                  NULL};
    if (access(VT "hta/nccl_parser_config/nccl_data.json.gz", R_OK) == 0)
        expect_error(no_cpu, SIM_EINVAL, "workload.trace_cpu");
}

/* An old-schema trace records no CPU; on a GPU with no documented CPU guess (an A100 here, the
 * old_schema.json fixture renamed) the replay takes the experiment's system.cpu. */
static void test_replay_old_schema_uses_system_cpu(void **state)
{
    (void)state;
    FILE *f = fopen(SRC "/tests/data/kineto/old_schema.json", "rb");
    assert_non_null(f);
    static char text[1 << 17];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    char *at = strstr(text, "Tesla V100-DGXS-32GB");
    assert_non_null(at);
    char path[128];
    snprintf(path, sizeof path, "/tmp/epochsim_test_replay_%ld_old_a100.json", (long)getpid());
    f = fopen(path, "wb");
    assert_non_null(f);
    fwrite(text, 1, (size_t)(at - text), f);
    fputs("NVIDIA A100-SXM4-40GB", f);
    fputs(at + strlen("Tesla V100-DGXS-32GB"), f);
    assert_int_equal(fclose(f), 0);
    char set_trace[256];
    snprintf(set_trace, sizeof set_trace, "workload.trace=%s", path);
    const char *const sets[] = {set_trace, NULL};
    sim_err err;
    figures fig;
    sim_scenario sc;
    int rc = simulate(EXP "replay-resnet50-nw0.yaml", sets, &fig, &sc, &err);
    if (rc) fail_msg("%s", err.msg);
    /* replay-resnet50-nw0.yaml sets system.cpu: xeon-e5-2698-v4 */
    assert_string_equal(sc.workload.trace_cpu, "xeon-e5-2698-v4");
    sim_scenario_free(&sc);
    remove(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_resnet50_nw0_same_system),
        cmocka_unit_test(test_replay_resnet50_nw4_same_system),
        cmocka_unit_test(test_replay_hta_ns_resolution_same_system),
        cmocka_unit_test(test_replay_hta_nccl_same_system),
        cmocka_unit_test(test_replay_hta_recsys_same_system),
        cmocka_unit_test(test_replay_kernel_same_gpu_exact),
        cmocka_unit_test(test_replay_kernel_roofline_ratios),
        cmocka_unit_test(test_replay_kernel_waves),
        cmocka_unit_test(test_replay_kernel_batch_efficiency),
        cmocka_unit_test(test_replay_gpu_candidates),
        cmocka_unit_test(test_replay_whatif_gpu),
        cmocka_unit_test(test_replay_whatif_cpu),
        cmocka_unit_test(test_replay_whatif_batch_and_graphs),
        cmocka_unit_test(test_replay_predict_other_loader),
        cmocka_unit_test(test_replay_errors),
        cmocka_unit_test(test_replay_old_schema_uses_system_cpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
