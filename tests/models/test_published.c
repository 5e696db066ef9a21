/* test_published.c — predicted ResNet-50 and BERT-large training throughput against published
 * single-GPU figures (NVIDIA DeepLearningExamples, Lambda's benchmark of the same code), with
 * GPU descriptions written out from the vendors' datasheet figures (the same numbers, with their
 * sources, as the entries of configs/hardware/gpus/) and the model's default
 * efficiency curves: no per-GPU factor. Prints the table of docs/published-throughput.md. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "models/expand.h"
#include "models/memory.h"
#include "models/zoo.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Datasheet numbers, as in configs/hardware/gpus/ (dense tensor rates; GeForce fp16 at the
 * fp32-accumulate rate). Efficiency curves empty: the model's defaults. kernel_overhead_us 1:
 * NVIDIA's "Getting Started with CUDA Graphs" blog measured ~3.8 us per back-to-back kernel for
 * kernels of ~2.9 us, i.e. ~1 us of GPU-side gap per kernel (recalled). max_blocks_per_sm 2: a
 * 128x128 cuBLAS/CUTLASS tile of 256 threads and ~64-100 KB shared memory fits 1-2 per SM; the
 * lead's test catalog uses 2. */
static sim_gpu_desc gpu(const char *name, int sms, double fp32, double fp16, double bf16,
                        double tf32, double bw, double mem)
{
    sim_gpu_desc g;
    memset(&g, 0, sizeof g);
    snprintf(g.name, sizeof g.name, "%s", name);
    g.sms = sms;
    g.fp32_tflops = fp32;
    g.fp16_tflops = fp16;
    g.bf16_tflops = bf16;
    g.tf32_tflops = tf32;
    g.mem_bw_gbps = bw;
    g.mem_gb = mem;
    g.kernel_overhead_us = 1.0;
    g.max_blocks_per_sm = 2;
    return g;
}

enum { A100, V100_16, V100_32, RTX3090, RTX4090, A6000, NGPU };

static sim_gpu_desc gpus[NGPU];

static void init_gpus(void)
{
    gpus[A100] = gpu("A100 80GB SXM4", 108, 19.5, 312, 312, 156, 2039, 80);
    gpus[V100_16] = gpu("V100 SXM2 16GB", 80, 15.7, 125, 0, 0, 900, 16);
    gpus[V100_32] = gpu("V100 SXM2 32GB", 80, 15.7, 125, 0, 0, 900, 32);
    gpus[RTX3090] = gpu("RTX 3090", 82, 35.6, 71, 71, 35.6, 936, 24);
    gpus[RTX4090] = gpu("RTX 4090", 128, 82.6, 165.2, 165.2, 82.6, 1008, 24);
    gpus[A6000] = gpu("RTX A6000", 84, 38.7, 154.8, 154.8, 77.4, 768, 48);
}

typedef struct row {
    const char *model;
    int seq; /* 0 = image model at 224 */
    int gpu;
    sim_precision prec;
    int batch;
    mdl_optimizer opt;
    mdl_opt_impl impl;
    double published; /* samples/s, one GPU */
    int source;       /* 0 = DLE, 1 = Lambda */
} row;

/* Sources (see docs/published-throughput.md):
 * DLE-RN50: DeepLearningExamples PyTorch/Classification/ConvNets/resnet50v1.5/README.md,
 *   "Training performance results", 1 GPU, pytorch-21.03 NGC; batch sizes from configs.yml
 *   (AMP 256 NHWC, TF32 256, V100 FP32 112). Optimizer torch.optim.SGD (for-loop in 1.9).
 * DLE-BERT: PyTorch/LanguageModeling/BERT/README.md, fine-tuning SQuAD v1.1 (BERT-large,
 *   seq 384), 1 GPU, pytorch-21.11 NGC; apex FusedAdam. Its "mixed precision" is apex AMP O2
 *   (run_squad.py: amp.initialize(..., opt_level="O2", keep_batchnorm_fp32=False)): the model
 *   itself is cast to fp16, activations and softmax included, so these rows run as precision
 *   fp16 (with loss scaling), not as torch.autocast (amp_fp16).
 * Lambda: lambdal/deeplearning-benchmark pytorch/pytorch-train-throughput-{fp16,fp32}.csv and
 *   pytorch-train-bs-*.csv (DLE code, NGC 22.09, fp16 = AMP; fp32 = TF32 on Ampere/Ada since
 *   cuDNN and the NGC container enable it). */
static const row rows[] = {
    {"resnet50", 0, A100, SIM_PREC_AMP_FP16, 256, MDL_OPT_SGD, MDL_IMPL_FORLOOP, 2470, 0},
    {"resnet50", 0, A100, SIM_PREC_TF32, 256, MDL_OPT_SGD, MDL_IMPL_FORLOOP, 938, 0},
    {"resnet50", 0, V100_16, SIM_PREC_AMP_FP16, 256, MDL_OPT_SGD, MDL_IMPL_FORLOOP, 1200, 0},
    {"resnet50", 0, V100_16, SIM_PREC_FP32, 112, MDL_OPT_SGD, MDL_IMPL_FORLOOP, 367, 0},
    {"resnet50", 0, V100_32, SIM_PREC_AMP_FP16, 256, MDL_OPT_SGD, MDL_IMPL_FORLOOP, 1156, 0},
    {"resnet50", 0, V100_32, SIM_PREC_FP32, 112, MDL_OPT_SGD, MDL_IMPL_FORLOOP, 356, 0},
    {"bert-large", 384, A100, SIM_PREC_FP16, 32, MDL_OPT_ADAMW, MDL_IMPL_FUSED, 110.5, 0},
    {"bert-large", 384, A100, SIM_PREC_TF32, 32, MDL_OPT_ADAMW, MDL_IMPL_FUSED, 61.5, 0},
    {"bert-large", 384, V100_32, SIM_PREC_FP16, 16, MDL_OPT_ADAMW, MDL_IMPL_FUSED, 52, 0},
    {"bert-large", 384, V100_32, SIM_PREC_FP32, 8, MDL_OPT_ADAMW, MDL_IMPL_FUSED, 12, 0},
    {"resnet50", 0, V100_16, SIM_PREC_AMP_FP16, 256, MDL_OPT_SGD, MDL_IMPL_FORLOOP, 833, 1},
    {"resnet50", 0, RTX3090, SIM_PREC_AMP_FP16, 448, MDL_OPT_SGD, MDL_IMPL_FORLOOP, 905, 1},
    {"resnet50", 0, RTX4090, SIM_PREC_AMP_FP16, 448, MDL_OPT_SGD, MDL_IMPL_FORLOOP, 1301, 1},
    {"resnet50", 0, A6000, SIM_PREC_AMP_FP16, 928, MDL_OPT_SGD, MDL_IMPL_FORLOOP, 916, 1},
    {"resnet50", 0, A100, SIM_PREC_AMP_FP16, 1280, MDL_OPT_SGD, MDL_IMPL_FORLOOP, 1582, 1},
    {"resnet50", 0, V100_16, SIM_PREC_FP32, 128, MDL_OPT_SGD, MDL_IMPL_FORLOOP, 369, 1},
    {"resnet50", 0, RTX3090, SIM_PREC_TF32, 224, MDL_OPT_SGD, MDL_IMPL_FORLOOP, 513, 1},
    {"resnet50", 0, RTX4090, SIM_PREC_TF32, 224, MDL_OPT_SGD, MDL_IMPL_FORLOOP, 721, 1},
    {"resnet50", 0, A6000, SIM_PREC_TF32, 496, MDL_OPT_SGD, MDL_IMPL_FORLOOP, 514, 1},
    {"resnet50", 0, A100, SIM_PREC_TF32, 640, MDL_OPT_SGD, MDL_IMPL_FORLOOP, 1066, 1},
    {"bert-large", 384, V100_16, SIM_PREC_FP16, 16, MDL_OPT_ADAMW, MDL_IMPL_FUSED, 57, 1},
    {"bert-large", 384, RTX3090, SIM_PREC_FP16, 28, MDL_OPT_ADAMW, MDL_IMPL_FUSED, 52, 1},
    {"bert-large", 384, RTX4090, SIM_PREC_FP16, 28, MDL_OPT_ADAMW, MDL_IMPL_FUSED, 93, 1},
    {"bert-large", 384, A6000, SIM_PREC_FP16, 64, MDL_OPT_ADAMW, MDL_IMPL_FUSED, 68, 1},
    {"bert-large", 384, A100, SIM_PREC_FP16, 112, MDL_OPT_ADAMW, MDL_IMPL_FUSED, 152, 1},
    {"bert-large", 384, V100_16, SIM_PREC_FP32, 8, MDL_OPT_ADAMW, MDL_IMPL_FUSED, 12, 1},
    {"bert-large", 384, RTX3090, SIM_PREC_TF32, 16, MDL_OPT_ADAMW, MDL_IMPL_FUSED, 24, 1},
    {"bert-large", 384, RTX4090, SIM_PREC_TF32, 16, MDL_OPT_ADAMW, MDL_IMPL_FUSED, 44, 1},
    {"bert-large", 384, A6000, SIM_PREC_TF32, 32, MDL_OPT_ADAMW, MDL_IMPL_FUSED, 33, 1},
    {"bert-large", 384, A100, SIM_PREC_TF32, 64, MDL_OPT_ADAMW, MDL_IMPL_FUSED, 75, 1},
};
#define NROWS (sizeof rows / sizeof rows[0])

typedef struct result {
    double predicted, ratio, peak_gib;
    bool oom;
} result;

static result predict(const row *r)
{
    mdl_options o;
    mdl_options_defaults(&o);
    o.batch = r->batch;
    o.precision = r->prec;
    o.optimizer = r->opt;
    o.opt_impl = r->impl;
    o.shape.seq = r->seq;
    mdl_net net;
    mdl_step step;
    sim_err err;
    if (mdl_zoo_build(r->model, &o.shape, &net, &err) || mdl_expand(&net, &o, NULL, &step, &err))
        fail_msg("%s: %s", r->model, err.msg);
    const sim_gpu_desc *g = &gpus[r->gpu];
    double ns = (double)mdl_step_gpu_ns(&step, g);
    mdl_memory m;
    if (mdl_memory_estimate(&net, &o, mdl_gpu_capacity_bytes(g), &m, &err))
        fail_msg("%s", err.msg);
    result res = {.predicted = r->batch / (ns / 1e9)};
    res.ratio = res.predicted / r->published;
    res.peak_gib = m.peak_bytes / 1073741824.0;
    res.oom = m.oom;
    mdl_step_free(&step);
    mdl_net_free(&net);
    return res;
}

/* Bounds. NVIDIA DLE rows (the controlled setup: the code, container and batch of the model):
 * each within a factor 1.7 and a geometric-mean error below 30 % (24.5 % when written; the
 * margin is for re-tuned defaults, a lost factor 2 on any unit still breaks it). Lambda rows (the same code on
 * other cards, NGC 22.09): each within a factor 2.2 - Lambda's own A100 ResNet-50 AMP figure is
 * 36 % below NVIDIA's for the same code and GPU (1582 vs 2470 img/s), so that source carries a
 * spread the model cannot be asked to beat. The model omits layout transposes (NCHW TF32),
 * DLE's fused kernels and clock throttling; a regression in the cost model (a wrong unit, a lost
 * factor 2) breaks these bounds. */
static void test_published_throughput_within_bounds(void **state)
{
    (void)state;
    init_gpus();
    double log_sum = 0;
    int dle = 0, bad = 0;
    printf("| model | GPU | precision | batch | predicted /s | published /s | source | error | "
           "peak GiB (fits?) |\n|---|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < NROWS; i++) {
        const row *r = &rows[i];
        result res = predict(r);
        printf("| %s%s | %s | %s | %d | %.1f | %.1f | %s | %+.0f %% | %.1f (%s) |\n", r->model,
               r->seq ? " seq 384" : "", gpus[r->gpu].name, sim_precision_name(r->prec),
               r->batch, res.predicted, r->published, r->source ? "Lambda" : "NVIDIA DLE",
               (res.ratio - 1) * 100, res.peak_gib, res.oom ? "OOM" : "fits");
        double bound = r->source ? 2.2 : 1.7;
        if (res.ratio > bound || res.ratio < 1 / bound) {
            printf("  ^ outside the factor %.1f bound\n", bound);
            bad++;
        }
        if (r->source == 0) {
            log_sum += fabs(log(res.ratio));
            dle++;
        }
    }
    double gm = exp(log_sum / dle) - 1;
    printf("\ngeometric-mean |error| of the NVIDIA DLE rows: %.1f %%\n", gm * 100);
    assert_int_equal(bad, 0);
    assert_true(gm < 0.30);
}

/* The published configurations ran, so the memory model must not call them out of memory
 * (batch sizes chosen by NVIDIA and Lambda to fill each card; the 16 GB V100 rows are the
 * tightest). */
static void test_published_batches_fit_memory(void **state)
{
    (void)state;
    init_gpus();
    for (size_t i = 0; i < NROWS; i++) {
        result res = predict(&rows[i]);
        if (res.oom)
            fail_msg("%s batch %d on %s: predicted OOM (%.1f GiB)", rows[i].model, rows[i].batch,
                     gpus[rows[i].gpu].name, res.peak_gib);
    }
}

/* Orderings the table implies regardless of absolute error: AMP beats TF32/FP32 on the same
 * GPU, and a newer GPU beats an older one on the same job. */
static void test_published_orderings(void **state)
{
    (void)state;
    init_gpus();
    const row amp = rows[0], tf32 = rows[1], v100 = rows[2];
    assert_true(predict(&amp).predicted > 1.5 * predict(&tf32).predicted);
    assert_true(predict(&amp).predicted > 1.5 * predict(&v100).predicted);
    row r4090 = rows[12], r3090 = rows[11];
    assert_true(predict(&r4090).predicted > predict(&r3090).predicted);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_published_throughput_within_bounds),
        cmocka_unit_test(test_published_batches_fit_memory),
        cmocka_unit_test(test_published_orderings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
