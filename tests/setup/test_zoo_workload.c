/* test_zoo_workload.c — zoo models as the workload of whole runs, on the real catalog
 * (configs/hardware): the evidence of issue 3 §5 (a bigger GPU helps a large batch but not a
 * launch-bound small one; AMP helps a tensor-core-bound job but not a loader-bound one; a 7B
 * model's fp16 weights are ~14 GB and its full Adam fine-tuning does not fit in 24 GB), plus
 * gradient accumulation, the data defaults that follow the model's kind of data, seed 003's
 * contrastive epochs on a 3060 Ti and a PRO 6000, and the out-of-memory path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/app/report.h"
#include "sim/setup/scenario.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define CATALOG EPOCHSIM_SOURCE_DIR "/configs/hardware"

/* Builds defaults + a short ResNet-50 job with a loader fast enough not to matter + the test's
 * own settings. Returns sim_scenario_build's code; runs when it is 0 and res is not NULL. */
static int build(const char *const *sets, sim_scenario *sc, sim_result *res)
{
    static const char *const base[] = {
        "workload.model=resnet50", "training.max_steps=20",    "dataset.decode_us=100",
        "loader.num_workers=16",   "loader.worker_start_ms=0", NULL,
    };
    sim_experiment x;
    cfg_experiment_set set = {0};
    sim_err err;
    sim_err_clear(&err);
    sim_experiment_defaults(&x);
    for (const char *const *s = base; *s; s++)
        assert_int_equal(cfg_experiment_apply(*s, &x, &set, &err), 0);
    for (const char *const *s = sets; *s; s++)
        if (cfg_experiment_apply(*s, &x, &set, &err)) fail_msg("%s: %s", *s, err.msg);
    int rc = sim_scenario_build(&x, &set, CATALOG, sc, &err);
    if (rc || !res) return rc;
    if (sim_run(sc, res, &err)) fail_msg("run: %s", err.msg);
    return 0;
}

static double step_ms(const char *const *sets, sim_bottleneck *bn)
{
    sim_scenario sc;
    sim_result res;
    assert_int_equal(build(sets, &sc, &res), 0);
    double ms = res.mean.step_time_ms_p50;
    if (bn) *bn = res.bottleneck;
    sim_result_free(&res);
    sim_scenario_free(&sc);
    return ms;
}

static void test_zoo_workload_bigger_gpu_helps_large_batch_not_launch_bound(void **state)
{
    (void)state;
    sim_bottleneck bn_small, bn_big;
    /* Batch 256 in fp32 is GPU-bound on both: the H100 SXM5 has 2x the A100's memory bandwidth
     * and ~3.4x its TF32 tensor rate, so the step must shrink by well over a third. */
    double a100 = step_ms((const char *[]){"system.gpu=a100-sxm4-80gb", "loader.batch_size=256",
                                           "workload.precision=fp32", NULL},
                          &bn_big);
    double h100 = step_ms((const char *[]){"system.gpu=h100-sxm5-80gb", "loader.batch_size=256",
                                           "workload.precision=fp32", NULL},
                          NULL);
    assert_int_equal(bn_big, SIM_BN_GPU_COMPUTE);
    assert_true(h100 < 0.67 * a100);
    /* Batch 2: ~13 ms of eager dispatch per step against a few ms of kernels: the step is the
     * main thread's, and the bigger GPU changes it by less than 5 % (it only shortens the
     * kernels that still run behind the launches). */
    double a100_small = step_ms((const char *[]){"system.gpu=a100-sxm4-80gb", "loader.batch_size=2",
                                                 "workload.precision=fp32", NULL},
                                &bn_small);
    double h100_small = step_ms((const char *[]){"system.gpu=h100-sxm5-80gb", "loader.batch_size=2",
                                                 "workload.precision=fp32", NULL},
                                NULL);
    assert_int_equal(bn_small, SIM_BN_CPU_DISPATCH);
    assert_true(fabs(h100_small - a100_small) / a100_small < 0.05);
}

static void test_zoo_workload_amp_helps_tensor_bound_not_loader_bound(void **state)
{
    (void)state;
    sim_scenario sc;
    sim_result fp32, amp;
    /* GPU-bound: AMP moves convolutions from TF32 to fp16 tensor cores (2x the rate on the
     * A100) and halves activation traffic, but in NCHW the batch norms run at their per-SM
     * element rate whatever the type (models/cost.h). Lambda's NCHW ResNet-50 runs gain 1.48x
     * (A100 SXM4 80 GB) to 1.58x (A100 PCIe 40 GB) from AMP over TF32; at least 1.3x here. */
    assert_int_equal(
        build((const char *[]){"loader.batch_size=256", "workload.precision=fp32", NULL}, &sc,
              &fp32),
        0);
    sim_scenario_free(&sc);
    assert_int_equal(
        build((const char *[]){"loader.batch_size=256", "workload.precision=amp_fp16", NULL}, &sc,
              &amp),
        0);
    sim_scenario_free(&sc);
    print_message("AMP speed-up over TF32: %.2fx\n", fp32.mean.time_s / amp.mean.time_s);
    assert_true(amp.mean.time_s < fp32.mean.time_s / 1.3);
    sim_result_free(&fp32);
    sim_result_free(&amp);
    /* Loader-bound: 4 workers x 20 ms per image deliver a batch of 256 every ~1.3 s while the GPU
     * needs < 0.2 s for it, so AMP changes the epoch by less than 2 % (what remains is the
     * last step's GPU work and the pipeline fill). */
    const char *loader_bound[] = {"loader.batch_size=256", "dataset.decode_us=20000",
                                  "loader.num_workers=4", NULL, NULL};
    loader_bound[3] = "workload.precision=fp32";
    assert_int_equal(build(loader_bound, &sc, &fp32), 0);
    assert_int_equal(fp32.bottleneck, SIM_BN_DATA_LOADING);
    sim_scenario_free(&sc);
    loader_bound[3] = "workload.precision=amp_fp16";
    assert_int_equal(build(loader_bound, &sc, &amp), 0);
    sim_scenario_free(&sc);
    assert_true(fabs(amp.mean.time_s - fp32.mean.time_s) / fp32.mean.time_s < 0.02);
    sim_result_free(&fp32);
    sim_result_free(&amp);
}

static double part_gb(const sim_memory_info *m, const char *name)
{
    for (int i = 0; i < m->n_parts; i++)
        if (!strcmp(m->parts[i].name, name)) return m->parts[i].gb;
    fail_msg("no memory part %s", name);
    return 0;
}

static void test_zoo_workload_llama_7b_weights_and_adam_oom_in_24_gb(void **state)
{
    (void)state;
    sim_scenario sc;
    /* Seed 004's table: 7B parameters x 2 bytes = ~14 GB (13.5e9 B = 12.6 GiB for Llama's
     * 6.74e9 parameters); within 3 % of that count. Forward and backward alone (no optimizer:
     * with one, an fp16 model trains against fp32 master weights, 16 bytes a parameter more)
     * fit an 80 GB card. */
    assert_int_equal(build((const char *[]){"workload.model=llama-7b", "loader.batch_size=1",
                                            "workload.precision=fp16", "workload.seq_len=512",
                                            "workload.optimizer=none", "system.gpu=h100-sxm5-80gb",
                                            "workload.checkpointing=true", NULL},
                           &sc, NULL),
                     0);
    assert_true(sc.memory.known);
    double weights_bytes = part_gb(&sc.memory, "weights") * 1073741824.0;
    assert_true(fabs(weights_bytes - 2 * 6.74e9) / (2 * 6.74e9) < 0.03);
    sim_scenario_free(&sc);
    /* Full fine-tuning with Adam on a 24 GB RTX 4090: fp32 master weights, gradients and two
     * Adam moments alone are 16 bytes x 6.7e9 = 108 GB: OOM even at batch 1, with
     * checkpointing; the scenario is not runnable and says so with every part. */
    int rc = build((const char *[]){"workload.model=llama-7b", "loader.batch_size=1",
                                    "workload.precision=amp_bf16", "workload.optimizer=adamw",
                                    "workload.checkpointing=true", "workload.seq_len=512",
                                    "system.gpu=rtx-4090", NULL},
                   &sc, NULL);
    assert_int_equal(rc, SIM_EOOM);
    assert_true(sc.memory.known && sc.memory.oom);
    assert_int_equal(sc.memory.max_batch, 0);
    assert_true(fabs(sc.memory.capacity_gb - 24.0) < 1e-9);
    assert_true(sc.memory.peak_gb > 100);
    assert_true(part_gb(&sc.memory, "optimizer_state") > 45);
    sim_scenario_free(&sc);
}

static void test_zoo_workload_oom_report_names_parts_and_max_batch(void **state)
{
    (void)state;
    sim_scenario sc;
    /* ResNet-50 fp32 at batch 256 needs ~25 GiB: a 16 GB T4 runs out, and the largest batch
     * that fits is reported (below 256, above 0). */
    int rc = build(
        (const char *[]){"system.gpu=t4", "loader.batch_size=256", "workload.precision=fp32", NULL},
        &sc, NULL);
    assert_int_equal(rc, SIM_EOOM);
    assert_true(sc.memory.max_batch > 0 && sc.memory.max_batch < 256);
    char buf[4096] = {0};
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    sim_report_memory_text(f, &sc);
    fclose(f);
    assert_non_null(strstr(buf, "activations"));
    assert_non_null(strstr(buf, "capacity"));
    char expect[64];
    snprintf(expect, sizeof expect, "largest batch that fits: %d", sc.memory.max_batch);
    assert_non_null(strstr(buf, expect));
    sim_scenario_free(&sc);
    /* The largest batch really fits. */
    char batch[64];
    snprintf(batch, sizeof batch, "loader.batch_size=%d", sc.memory.max_batch);
    assert_int_equal(
        build((const char *[]){"system.gpu=t4", batch, "workload.precision=fp32", NULL}, &sc, NULL),
        0);
    assert_false(sc.memory.oom);
    sim_scenario_free(&sc);
}

static void test_zoo_workload_gradient_accumulation_takes_batches_per_step(void **state)
{
    (void)state;
    sim_scenario sc;
    sim_result res;
    /* 4 micro-batches of 64 per optimizer step: 10 steps read 10 x 4 x 64 samples, and the
     * program holds 3 NEXT_BATCH ops. */
    assert_int_equal(build((const char *[]){"loader.batch_size=64", "workload.accum_steps=4",
                                            "training.max_steps=10", NULL},
                           &sc, &res),
                     0);
    assert_int_equal(sim_program_batches_per_step(&sc.program), 4);
    int next = 0;
    for (size_t i = 0; i < sc.program.n_ops; i++)
        next += sc.program.ops[i].kind == SIM_OP_NEXT_BATCH;
    assert_int_equal(next, 3);
    assert_int_equal(res.steps, 10);
    assert_int_equal(res.mean.samples, 10 * 4 * 64);
    sim_result_free(&res);
    sim_scenario_free(&sc);
    /* An epoch of 1000 samples at 64 x 4 ends inside the fourth step: 16 batches (the last of
     * 40), ceil(16 / 4) = 4 steps, every sample read once. */
    assert_int_equal(build((const char *[]){"loader.batch_size=64", "workload.accum_steps=4",
                                            "training.max_steps=0", "dataset.samples=1000", NULL},
                           &sc, &res),
                     0);
    assert_int_equal(res.steps, 4);
    assert_int_equal(res.mean.samples, 1000);
    sim_result_free(&res);
    sim_scenario_free(&sc);
    /* With CUDA graphs each micro-batch is one graph launch; the run completes the same way. */
    assert_int_equal(
        build((const char *[]){"loader.batch_size=64", "workload.accum_steps=3",
                               "training.cuda_graphs=true", "training.max_steps=5", NULL},
              &sc, &res),
        0);
    assert_int_equal(res.steps, 5);
    assert_int_equal(res.mean.samples, 5 * 3 * 64);
    sim_result_free(&res);
    sim_scenario_free(&sc);
}

static void test_zoo_workload_input_bytes_follow_the_model(void **state)
{
    (void)state;
    sim_scenario sc;
    /* BERT at 128 tokens: input_ids + attention_mask, int64: 2 x 128 x 8 B. */
    assert_int_equal(
        build((const char *[]){"workload.model=bert-base", "workload.seq_len=128", NULL}, &sc,
              NULL),
        0);
    assert_true(fabs(sc.dataset.input_bytes - 2048) < 1e-9);
    sim_scenario_free(&sc);
    /* ResNet-50 at 160 px: 3 x 160 x 160 float32. */
    assert_int_equal(build((const char *[]){"workload.image_size=160", NULL}, &sc, NULL), 0);
    assert_true(fabs(sc.dataset.input_bytes - 3 * 160 * 160 * 4.0) < 1e-9);
    sim_scenario_free(&sc);
    /* A value the user gives wins. */
    assert_int_equal(build((const char *[]){"dataset.input_bytes=1234", NULL}, &sc, NULL), 0);
    assert_true(fabs(sc.dataset.input_bytes - 1234) < 1e-9);
    sim_scenario_free(&sc);
}

/* Memory format (docs/kernel-cost.md): in NCHW, cuDNN's tensor-core convolutions transpose
 * around every non-1x1 convolution and batch norm runs the per-channel NCHW kernels at their
 * per-SM rate; channels_last removes both. ResNet-50 AMP on an A100: the transposes are ~11 % of
 * the GPU time and the NCHW batch norms about as much again as the rest of the step, so
 * channels_last is 1.2x to 2.2x faster. Published speed-ups run from 1.22x (PyTorch's tutorial,
 * V100) to 1.56x (NVIDIA's channels_last against Lambda's NCHW runs, A100, at batches 256 and
 * 1280); the model's ~1.9x at batch 256 is above them (docs/accuracy.md). FP32 on a V100 runs
 * CUDA-core convolutions that read NCHW, and at its sustained clock the SMs' limit on batch
 * norm about equals its DRAM's; its NCHW 3x3 stride-1 convolutions may run as Winograd, which
 * the model does not offer channels_last tensors (docs/kernel-cost.md): there channels_last is
 * slower, by less than a fifth. */
static void test_zoo_workload_channels_last_removes_nchw_transposes(void **state)
{
    (void)state;
    const char *nchw[] = {"system.gpu=a100-sxm4-80gb", "workload.precision=amp_fp16",
                          "loader.batch_size=256", NULL};
    const char *nhwc[] = {"system.gpu=a100-sxm4-80gb", "workload.precision=amp_fp16",
                          "loader.batch_size=256", "workload.memory_format=channels_last", NULL};
    double a = step_ms(nchw, NULL), b = step_ms(nhwc, NULL);
    print_message("A100 AMP b256: contiguous %.1f ms, channels_last %.1f ms\n", a, b);
    assert_true(b < a / 1.2 && b > a / 2.2);
    const char *v_nchw[] = {"system.gpu=v100-sxm2-16gb", "workload.precision=fp32",
                            "loader.batch_size=64", NULL};
    const char *v_nhwc[] = {"system.gpu=v100-sxm2-16gb", "workload.precision=fp32",
                            "loader.batch_size=64", "workload.memory_format=channels_last", NULL};
    double c = step_ms(v_nchw, NULL), d = step_ms(v_nhwc, NULL);
    print_message("V100 FP32 b64: contiguous %.1f ms, channels_last %.1f ms\n", c, d);
    assert_true(d > c && d < c * 1.2);
}

/* workload.attention: BERT-large at sequence 512 keeps batch x heads x 512 x 512 probabilities
 * per layer in eager attention; SDPA keeps O(s) per row and fuses scale, mask, softmax and
 * dropout. On an A100 (AMP, batch 8) SDPA must be faster and need less memory; "default" is
 * the model's own (eager for BERT, as Hugging Face's BertModel). */
static void test_zoo_workload_attention_sdpa_vs_eager(void **state)
{
    (void)state;
    const char *base[] = {"workload.model=bert-large",
                          "workload.seq_len=512",
                          "loader.batch_size=8",
                          "workload.precision=amp_fp16",
                          "system.gpu=a100-sxm4-80gb",
                          NULL,
                          NULL};
    double ms[3], gb[3];
    const char *modes[3] = {"workload.attention=default", "workload.attention=eager",
                            "workload.attention=sdpa"};
    for (int i = 0; i < 3; i++) {
        base[5] = modes[i];
        sim_scenario sc;
        sim_result res;
        assert_int_equal(build(base, &sc, &res), 0);
        ms[i] = res.mean.step_time_ms_p50;
        gb[i] = sc.memory.peak_gb;
        sim_result_free(&res);
        sim_scenario_free(&sc);
    }
    print_message("BERT-large s512 b8: eager %.1f ms %.1f GiB, sdpa %.1f ms %.1f GiB\n", ms[1],
                  gb[1], ms[2], gb[2]);
    assert_true(ms[0] == ms[1] && gb[0] == gb[1]);
    assert_true(ms[2] < 0.9 * ms[1]);
    assert_true(gb[2] < 0.8 * gb[1]);
}

/* system.gpu_ecc: a GDDR part keeps ECC check bits in its own memory, 1/16 of it (catalog
 * ecc_reserve); a data-centre A10 ships with ECC on (22.5 of its 24 GB usable), a workstation
 * RTX A6000 with it off (48 GB), and an H100's HBM carries the bits aside (80 GB either way). */
static void test_zoo_workload_gpu_ecc_key(void **state)
{
    (void)state;
    static const struct {
        const char *gpu, *mode;
        double gb;
    } cases[] = {{"a10", NULL, 22.5},          {"a10", "off", 24},
                 {"rtx-a6000", NULL, 48},      {"rtx-a6000", "on", 45},
                 {"h100-sxm5-80gb", "on", 80}, {"h100-sxm5-80gb", "off", 80}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char gpu[64], ecc[64];
        snprintf(gpu, sizeof gpu, "system.gpu=%s", cases[i].gpu);
        snprintf(ecc, sizeof ecc, "system.gpu_ecc=%s", cases[i].mode ? cases[i].mode : "default");
        const char *sets[] = {"workload.model=resnet18", gpu, ecc, NULL};
        sim_scenario sc;
        assert_int_equal(build(sets, &sc, NULL), 0);
        if (fabs(sc.memory.capacity_gb - cases[i].gb) > 1e-9)
            fail_msg("%s %s: %g GB", cases[i].gpu, ecc, sc.memory.capacity_gb);
        sim_scenario_free(&sc);
    }
}

/* workload.fuser reaches the expanded step: NVIDIA's BERT pre-training at sequence 128 (AMP,
 * batch 64, A100) runs faster with the score chain and dropout+add fused (test_expand counts the
 * kernels), and none is the eager default. */
static void test_zoo_workload_fuser_key(void **state)
{
    (void)state;
    const char *sets[] = {"workload.model=bert-large-nvidia",
                          "workload.seq_len=128",
                          "loader.batch_size=64",
                          "workload.precision=amp_fp16",
                          "system.gpu=a100-sxm4-80gb",
                          NULL,
                          NULL};
    const char *modes[3] = {"workload.fuser=none", "workload.fuser=nvfuser",
                            NULL}; /* NULL: unset */
    double ms[3];
    for (int i = 0; i < 3; i++) {
        sets[5] = modes[i];
        ms[i] = step_ms(sets, NULL);
    }
    print_message("BERT-large s128 b64 AMP: eager %.1f ms, nvfuser %.1f ms\n", ms[0], ms[1]);
    assert_true(ms[1] < 0.97 * ms[0]);
    assert_true(ms[2] == ms[0]);
}

/* workload.optimizer=bertadam and workload.grad_clip=global reach the expanded step: ResNet-50's
 * 161 tensors, Adam foreach (a few dozen launches) against BertAdam's loop (16 to 18 kernels per
 * tensor, test_expand), and clipping adds kernels to either. */
static void test_zoo_workload_bertadam_and_grad_clip_keys(void **state)
{
    (void)state;
    const char *const cases[][3] = {
        {"workload.optimizer=adamw", "workload.grad_clip=none", NULL},
        {"workload.optimizer=adamw", "workload.grad_clip=global", NULL},
        {"workload.optimizer=bertadam", "workload.grad_clip=none", NULL},
    };
    size_t kernels[3];
    for (size_t i = 0; i < 3; i++) {
        sim_scenario sc;
        assert_int_equal(build(cases[i], &sc, NULL), 0);
        kernels[i] = sim_program_kernels(&sc.program);
        sim_scenario_free(&sc);
    }
    assert_true(kernels[1] > kernels[0]);
    assert_true(kernels[2] > kernels[0] + 161 * 15);
}

static void test_zoo_workload_bad_names_are_errors(void **state)
{
    (void)state;
    sim_experiment x;
    cfg_experiment_set set = {0};
    sim_err err;
    sim_experiment_defaults(&x);
    assert_int_equal(cfg_experiment_apply("workload.optimizer=lamb", &x, &set, &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "sgd, adam, adamw, bertadam, none"));
    assert_int_equal(cfg_experiment_apply("workload.grad_clip=norm", &x, &set, &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "none, global, apex"));
    assert_int_equal(cfg_experiment_apply("workload.accum_steps=0", &x, &set, &err), SIM_EINVAL);
    assert_int_equal(cfg_experiment_apply("workload.fuser=inductor", &x, &set, &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "none, nvfuser"));
    sim_scenario sc;
    assert_int_equal(cfg_experiment_apply("workload.model=resnet5", &x, &set, &err), 0);
    assert_int_equal(sim_scenario_build(&x, &set, CATALOG, &sc, &err), SIM_ENOENT);
    assert_non_null(strstr(err.msg, "workload.model"));
    assert_non_null(strstr(err.msg, "resnet50"));
    sim_scenario_free(&sc);
}

/* Builds the defaults + experiment file PATH (NULL: none) + sets, without the test base. */
static void build_plain(const char *path, const char *const *sets, sim_scenario *sc)
{
    sim_experiment x;
    cfg_experiment_set set = {0};
    sim_err err;
    sim_err_clear(&err);
    sim_experiment_defaults(&x);
    if (path && cfg_experiment_load(path, &x, &set, &err)) fail_msg("%s", err.msg);
    for (const char *const *s = sets; *s; s++)
        if (cfg_experiment_apply(*s, &x, &set, &err)) fail_msg("%s: %s", *s, err.msg);
    if (sim_scenario_build(&x, &set, CATALOG, sc, &err)) fail_msg("build: %s", err.msg);
}

/* The loader's per-sample defaults follow the model's kind of data (zoo_workload.c): vectors are
 * float32 rows with 3 us of CPU and no variation, tokens 2-byte ids with 5 us, images keep
 * ImageNet's JPEG figures (config.c: 110,000 B, 4 ms, cv 0.3); a value the user gives wins. */
static void test_zoo_workload_data_defaults_follow_the_kind_of_data(void **state)
{
    (void)state;
    sim_scenario sc;
    build_plain(NULL, (const char *[]){"workload.model=mlp", NULL}, &sc);
    assert_true(fabs(sc.dataset.sample_bytes - 784 * 4.0) < 1e-9);
    assert_true(fabs(sc.dataset.input_bytes - 784 * 4.0) < 1e-9);
    assert_true(fabs(sc.dataset.decode_us - 3) < 1e-9);
    assert_true(sc.dataset.decode_cv == 0);
    sim_scenario_free(&sc);
    /* A triplet per sample: three vectors of 1024 features. */
    build_plain(NULL, (const char *[]){"workload.model=contrastive-triplet", NULL}, &sc);
    assert_true(fabs(sc.dataset.sample_bytes - 3 * 1024 * 4.0) < 1e-9);
    sim_scenario_free(&sc);
    build_plain(NULL,
                (const char *[]){"workload.model=gpt2", "workload.seq_len=512",
                                 "loader.batch_size=8", NULL},
                &sc);
    assert_true(fabs(sc.dataset.sample_bytes - 512 * 2.0) < 1e-9);
    assert_true(fabs(sc.dataset.decode_us - 5) < 1e-9);
    assert_true(sc.dataset.decode_cv == 0);
    sim_scenario_free(&sc);
    build_plain(NULL, (const char *[]){"workload.model=resnet50", NULL}, &sc);
    assert_true(fabs(sc.dataset.sample_bytes - 110000) < 1e-9);
    assert_true(fabs(sc.dataset.decode_us - 4000) < 1e-9);
    assert_true(fabs(sc.dataset.decode_cv - 0.3) < 1e-9);
    sim_scenario_free(&sc);
    build_plain(NULL,
                (const char *[]){"workload.model=mlp", "dataset.sample_bytes=5000",
                                 "dataset.decode_us=50", "dataset.decode_cv=0.2", NULL},
                &sc);
    assert_true(fabs(sc.dataset.sample_bytes - 5000) < 1e-9);
    assert_true(fabs(sc.dataset.decode_us - 50) < 1e-9);
    assert_true(fabs(sc.dataset.decode_cv - 0.2) < 1e-9);
    sim_scenario_free(&sc);
}

/* Epoch time of the seed-003 demo file on system SYS at batch B, seconds. */
static double seed003_epoch_s(const char *sys, const char *batch)
{
    sim_scenario sc;
    sim_result res;
    sim_err err;
    build_plain(EPOCHSIM_SOURCE_DIR "/configs/experiments/s1-contrastive-3060ti-vs-pro6000.yaml",
                (const char *[]){sys, batch, NULL}, &sc);
    if (sim_run(&sc, &res, &err)) fail_msg("run: %s", err.msg);
    double t = res.mean.time_s;
    sim_result_free(&res);
    sim_scenario_free(&sc);
    return t;
}

/* Seed 003 (MISSION.md), epochs measured: batch 1024 0.8-0.9 s on both boxes; batch 10240
 * 2.2 s on the 3060 Ti, 1.55 s on the PRO 6000. The demo file fits one number, the dataset
 * size, to the batch-1024 epoch; the rest follows from the O(b^2) loss. Checked:
 * - batch 1024 about equal: within 15 % of each other (the post's own 0.8-0.9 s range is
 *   +-6 % around its middle; 15 % leaves room for the two boxes' CPUs, both assumed);
 * - each batch-1024 epoch within 30 % of 0.85 s (the fitted dataset size puts them near it);
 * - batch 10240: the PRO 6000 faster by 1.42x +- 25 % (the loader workers are assumed; 8
 *   instead of 4 moves the ratio from ~1.5 to ~2);
 * - each batch-10240 epoch within 45 % of the measured one: the textbook batch-hard loss does
 *   fewer b x b passes than the post's own loss, whose code is not given (the model's epochs
 *   come out 34 % (PRO 6000) and 42 % (3060 Ti) short since its CUDA-core GEMMs run at the rate
 *   measured for cuBLAS SGEMM, models/cost.c; ~1/3 short before), so only the rough size is
 *   claimed. */
static void test_zoo_workload_seed003_contrastive_3060ti_vs_pro6000(void **state)
{
    (void)state;
    const char *ti = "system.name=desktop-3060ti", *pro = "system.name=rtx-pro-6000-workstation";
    const char *small = "loader.batch_size=1024", *big = "loader.batch_size=10240";
    double ti_small = seed003_epoch_s(ti, small), pro_small = seed003_epoch_s(pro, small);
    double ti_big = seed003_epoch_s(ti, big), pro_big = seed003_epoch_s(pro, big);
    assert_true(fabs(pro_small / ti_small - 1) < 0.15);
    assert_true(fabs(ti_small / 0.85 - 1) < 0.30);
    assert_true(fabs(pro_small / 0.85 - 1) < 0.30);
    assert_true(fabs((ti_big / pro_big) / (2.2 / 1.55) - 1) < 0.25);
    assert_true(fabs(ti_big / 2.2 - 1) < 0.45);
    assert_true(fabs(pro_big / 1.55 - 1) < 0.45);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zoo_workload_bigger_gpu_helps_large_batch_not_launch_bound),
        cmocka_unit_test(test_zoo_workload_amp_helps_tensor_bound_not_loader_bound),
        cmocka_unit_test(test_zoo_workload_llama_7b_weights_and_adam_oom_in_24_gb),
        cmocka_unit_test(test_zoo_workload_oom_report_names_parts_and_max_batch),
        cmocka_unit_test(test_zoo_workload_gradient_accumulation_takes_batches_per_step),
        cmocka_unit_test(test_zoo_workload_input_bytes_follow_the_model),
        cmocka_unit_test(test_zoo_workload_data_defaults_follow_the_kind_of_data),
        cmocka_unit_test(test_zoo_workload_seed003_contrastive_3060ti_vs_pro6000),
        cmocka_unit_test(test_zoo_workload_channels_last_removes_nchw_transposes),
        cmocka_unit_test(test_zoo_workload_attention_sdpa_vs_eager),
        cmocka_unit_test(test_zoo_workload_fuser_key),
        cmocka_unit_test(test_zoo_workload_gpu_ecc_key),
        cmocka_unit_test(test_zoo_workload_bertadam_and_grad_clip_keys),
        cmocka_unit_test(test_zoo_workload_bad_names_are_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
