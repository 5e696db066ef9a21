/* test_cost.c — the kernel roofline in its limit cases: compute-bound and memory-bound kernels,
 * wave quantization (one block, a partial last wave), efficiency interpolation and clamping,
 * PyTorch's TF32 defaults and TF32's ramp, cuDNN's CUDA-core convolutions against SGEMM, AMP
 * helping tensor-bound kernels only, a convolution's nonfused Winograd alternative taken only when
 * it is faster, and a row kernel's re-reads by L2 size. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "models/cost.h"

#include <math.h>
#include <string.h>

/* A GPU with round numbers and flat efficiency curves, so times have closed forms:
 * 100 SMs x 2 resident blocks, fp32 10 TFLOP/s, tf32 100, fp16/bf16 200, 1000 GB/s. */
static sim_gpu_desc flat_gpu(double eff)
{
    sim_gpu_desc g;
    memset(&g, 0, sizeof g);
    strcpy(g.name, "flat");
    g.sms = 100;
    g.max_blocks_per_sm = 2;
    g.fp32_tflops = 10;
    g.tf32_tflops = 100;
    g.fp16_tflops = 200;
    g.bf16_tflops = 200;
    g.mem_bw_gbps = 1000;
    g.mem_gb = 40;
    sim_curve c = {1, {0}, {eff}};
    g.eff_tensor = g.eff_cuda = g.eff_mem = c;
    return g;
}

static mdl_kernel gemm_kernel(double m, double n, double k, double bytes)
{
    mdl_kernel x = {.op = "gemm",
                    .kind = SIM_OP_KERNEL,
                    .math = MDL_MATH_GEMM,
                    .flops = 2 * m * n * k,
                    .bytes = bytes,
                    .gemm_m = m,
                    .gemm_n = n,
                    .gemm_k = k,
                    .gemm_batch = 1};
    return x;
}

/* 4096^3 fp16 GEMM: 1024 tiles of 128x128 = 5.12 waves of 200 slots -> wave factor 6/5.12.
 * Compute: 2*4096^3 * (6/5.12) / 200e12 = 805.3 us >> memory 100 MB / 1e12 = 100 us, plus the
 * tensor-core GEMM's fixed MDL_GEMM_FIXED_US. */
static void test_cost_compute_bound_gemm(void **state)
{
    (void)state;
    sim_gpu_desc g = flat_gpu(1.0);
    mdl_kernel k = gemm_kernel(4096, 4096, 4096, 100e6);
    mdl_cost c;
    mdl_kernel_cost(&k, &g, SIM_PREC_AMP_FP16, &c);
    assert_true(fabs(c.blocks - 1024) < 1e-9);
    assert_true(fabs(c.wave_factor - 6.0 / 5.12) < 1e-12);
    double expect =
        2.0 * 4096 * 4096 * 4096 * (6.0 / 5.12) / 200e12 * 1e9 + MDL_GEMM_FIXED_US * 1e3;
    assert_true(fabs((double)c.total_ns - expect) <= 1.0); /* rounding to whole ns */
    assert_int_equal(c.unit, SIM_UNIT_TENSOR);
    assert_true(c.sm_fraction == 1.0f);
}

/* A CUDA-core kernel moving `bytes` in `blocks` blocks. */
static mdl_kernel simt_kernel(const char *op, double flops, double bytes, double blocks)
{
    return (mdl_kernel){.op = op,
                        .kind = SIM_OP_KERNEL,
                        .math = MDL_MATH_SIMT,
                        .flops = flops,
                        .bytes = bytes,
                        .blocks = blocks};
}

/* An elementwise kernel over 256 MB: memory-bound, time = bytes / bandwidth + overhead. */
static void test_cost_memory_bound_elementwise(void **state)
{
    (void)state;
    sim_gpu_desc g = flat_gpu(0.5);
    g.kernel_overhead_us = 2;
    mdl_kernel k = simt_kernel("add", 32e6, 256e6, 65536);
    mdl_cost c;
    mdl_kernel_cost(&k, &g, SIM_PREC_FP32, &c);
    double expect = 256e6 / (1000e9 * 0.5) * 1e9 + 2000;
    assert_true(fabs((double)c.total_ns - expect) <= 1.0);
    assert_int_equal(c.unit, SIM_UNIT_MEMORY);
    assert_true(c.wave_factor == 1.0); /* no wave quantization for CUDA-core kernels */
}

/* An NCHW batch-norm kernel streams MDL_NCHW_CHANNEL_ELEMS_PER_CLK elements per clock of each SM
 * its blocks occupy when that is slower than the DRAM: 100 SMs at 1,000 MHz move 171 G
 * elements/s, so 256 M elements (512 MB in fp16) take 1.497 ms where the 1000 GB/s DRAM would
 * take 0.512 ms. With a tenth of the elements over the same bytes, the DRAM is the limit again.
 * With 64 blocks (a block per channel, 64 channels) 64 SMs do the work: 100 / 64 times as long. */
static void test_cost_nchw_channel_limit(void **state)
{
    (void)state;
    sim_gpu_desc g = flat_gpu(1.0);
    g.boost_mhz = 1000;
    mdl_kernel k = simt_kernel("batchnorm_apply", 0, 512e6, 524288);
    k.chan_elems = 256e6;
    mdl_cost c;
    mdl_kernel_cost(&k, &g, SIM_PREC_AMP_FP16, &c);
    double expect = 256e6 / (100 * 1e9 * MDL_NCHW_CHANNEL_ELEMS_PER_CLK) * 1e9;
    assert_true(fabs((double)c.total_ns - expect) <= 1.0);
    assert_int_equal(c.unit, SIM_UNIT_MEMORY);
    k.chan_elems = 25.6e6;
    mdl_kernel_cost(&k, &g, SIM_PREC_AMP_FP16, &c);
    assert_true(fabs((double)c.total_ns - 512e6 / 1000e9 * 1e9) <= 1.0);
    /* a power-limited clock slows the limit with it */
    g.clock_factor = 0.5;
    k.chan_elems = 256e6;
    mdl_kernel_cost(&k, &g, SIM_PREC_AMP_FP16, &c);
    assert_true(fabs((double)c.total_ns - 2 * expect) <= 1.0);
    g.clock_factor = 1.0;
    k.blocks = 64;
    mdl_kernel_cost(&k, &g, SIM_PREC_AMP_FP16, &c);
    assert_true(fabs((double)c.total_ns - expect * 100 / 64) <= 1.0);
}

/* A PyTorch-native depthwise kernel is bound by MDL_DW_NATIVE_CLK_PER_TAP SM clocks per tap when
 * that is slower than the DRAM: 100 SMs at 1,000 MHz give 100 G clocks/s, so 1 G taps take
 * 3.2 ms where the 1000 GB/s DRAM moves its 512 MB in 0.512 ms. Without taps (cuDNN's kernel)
 * the DRAM is the limit; a power-limited clock slows the limit with it. */
static void test_cost_native_depthwise_issue_limit(void **state)
{
    (void)state;
    sim_gpu_desc g = flat_gpu(1.0);
    g.boost_mhz = 1000;
    mdl_kernel k = simt_kernel("conv_depthwise_fwd", 2e9, 512e6, 524288);
    k.native_taps = 1e9;
    mdl_cost c;
    mdl_kernel_cost(&k, &g, SIM_PREC_FP32, &c);
    double expect = 1e9 * MDL_DW_NATIVE_CLK_PER_TAP / (100 * 1e9) * 1e9;
    assert_true(fabs((double)c.total_ns - expect) <= 1.0);
    k.native_taps = 0;
    mdl_kernel_cost(&k, &g, SIM_PREC_FP32, &c);
    assert_true(c.total_ns < expect / 4);
    g.clock_factor = 0.5;
    k.native_taps = 1e9;
    mdl_kernel_cost(&k, &g, SIM_PREC_FP32, &c);
    assert_true(fabs((double)c.total_ns - 2 * expect) <= 1.0);
}

/* Power-limited clocks per unit (catalog.c): a GEMM on the tensor cores runs at
 * clock_factor_tensor, the same GEMM on the CUDA cores (fp32) at clock_factor, and a GPU built
 * without a tensor factor (0) uses clock_factor for both. 4096^3 as in
 * test_cost_compute_bound_gemm: 805.3 us at full clock in fp16. */
static void test_cost_tensor_clock_factor(void **state)
{
    (void)state;
    sim_gpu_desc g = flat_gpu(1.0);
    mdl_kernel k = gemm_kernel(4096, 4096, 4096, 100e6);
    double fixed = MDL_GEMM_FIXED_US * 1e3; /* latency, not clocked work */
    double full = (double)mdl_kernel_time_ns(&k, &g, SIM_PREC_FP16) - fixed;
    double cuda = (double)mdl_kernel_time_ns(&k, &g, SIM_PREC_FP32);
    g.clock_factor = 0.8;
    g.clock_factor_tensor = 0.5;
    assert_true(fabs((double)mdl_kernel_time_ns(&k, &g, SIM_PREC_FP16) - fixed - full / 0.5) <= 2);
    assert_true(fabs((double)mdl_kernel_time_ns(&k, &g, SIM_PREC_FP32) - cuda / 0.8) <= 2);
    g.clock_factor_tensor = 0;
    assert_true(fabs((double)mdl_kernel_time_ns(&k, &g, SIM_PREC_FP16) - fixed - full / 0.8) <= 2);
}

/* A tensor-core GEMM pays MDL_GEMM_FIXED_US beyond its work and the GPU's per-kernel overhead
 * (its first tiles' DRAM round trip, its epilogue's drain); the same GEMM on the CUDA cores
 * (strict fp32, whose curve carries its own ramp), an elementwise kernel and a convolution do
 * not. A 16^3 GEMM's work is a few ns, so its time is the two fixed costs. */
static void test_cost_gemm_fixed_time(void **state)
{
    (void)state;
    sim_gpu_desc g = flat_gpu(1.0);
    g.tf32_tflops = 0;
    g.kernel_overhead_us = 2;
    mdl_kernel k = gemm_kernel(16, 16, 16, 1536);
    mdl_cost c;
    mdl_kernel_cost(&k, &g, SIM_PREC_FP16, &c);
    assert_true(fabs(c.overhead_ns - (2 + MDL_GEMM_FIXED_US) * 1e3) < 1e-9);
    assert_true(c.total_ns >= (int64_t)((2 + MDL_GEMM_FIXED_US) * 1e3));
    assert_true(c.total_ns < (int64_t)((2 + MDL_GEMM_FIXED_US) * 1e3) + 100);
    mdl_kernel_cost(&k, &g, SIM_PREC_FP32, &c);
    assert_true(fabs(c.overhead_ns - 2e3) < 1e-9);
    k.math = MDL_MATH_CONV;
    mdl_kernel_cost(&k, &g, SIM_PREC_FP16, &c);
    assert_true(fabs(c.overhead_ns - 2e3) < 1e-9);
    k.math = MDL_MATH_SIMT;
    mdl_kernel_cost(&k, &g, SIM_PREC_FP16, &c);
    assert_true(fabs(c.overhead_ns - 2e3) < 1e-9);
}

/* Bytes in flight: an elementwise kernel of 819.2 M fp16 elements (read and written, 3.2768 GB)
 * on the flat GPU with 2048 threads per SM and a 1 us loaded latency. With 4 elements per thread
 * the SMs hold 100 x 2048 x 4 = 819,200 elements: 1000 latencies, 1 ms, where the 1000 GB/s
 * DRAM needs 3.28 ms, so the bandwidth is the limit. With the DRAM ten times faster (10 TB/s:
 * 0.328 ms) the 1 ms floor wins; 8 elements per thread halve it on compute capability 9.0 (the
 * 16-byte vectors PyTorch launches there and on 10.0 only); without a latency (0: not known) the
 * kernel is bandwidth-bound again. */
static double memory_ns(const mdl_kernel *k, const sim_gpu_desc *g)
{
    mdl_cost c;
    mdl_kernel_cost(k, g, SIM_PREC_AMP_FP16, &c);
    return c.memory_ns;
}

static void test_cost_bytes_in_flight_limit(void **state)
{
    (void)state;
    sim_gpu_desc g = flat_gpu(1.0);
    g.compute_capability = 9.0;
    g.mem_latency_ns = 1000;
    mdl_kernel k = simt_kernel("add", 0, 3.2768e9, 1600000);
    k.vec_elems = 819.2e6;
    k.vec_width = 4;
    assert_true(fabs(memory_ns(&k, &g) - 3.2768e6) <= 1.0);
    g.mem_bw_gbps = 10000;
    assert_true(fabs(memory_ns(&k, &g) - 1e6) <= 1.0);
    k.vec_width = 8;
    assert_true(fabs(memory_ns(&k, &g) - 0.5e6) <= 1.0);
    g.mem_latency_ns = 0;
    assert_true(fabs(memory_ns(&k, &g) - 0.32768e6) <= 1.0);
    /* 1536 resident threads per SM on compute capability 8.9, where PyTorch launches no 16-byte
     * vectors of a 2-byte type: 8 elements per thread are held as 4 */
    g.mem_latency_ns = 1000;
    g.compute_capability = 8.9;
    assert_int_equal(mdl_threads_per_sm(&g), 1536);
    assert_true(fabs(memory_ns(&k, &g) - 819.2e6 / (100 * 1536 * 4.0) * 1000) <= 1.0);
    /* 2048 threads on 8.0 (A100), still 4 elements; 10.0 (B200) keeps all 8 */
    g.compute_capability = 8.0;
    assert_true(fabs(memory_ns(&k, &g) - 1e6) <= 1.0);
    g.compute_capability = 10.0;
    assert_true(fabs(memory_ns(&k, &g) - 0.5e6) <= 1.0);
}

/* Few blocks: a 128x128x256 GEMM is 4 blocks of 64x64 in 200 slots (K too short to split), so
 * its full-GPU roofline time is multiplied by 50: each block runs at one slot's share of the
 * peak. One block of a fused kernel is multiplied by all 200 slots. */
static void test_cost_wave_quantization_one_block(void **state)
{
    (void)state;
    sim_gpu_desc g = flat_gpu(1.0);
    mdl_kernel k = gemm_kernel(128, 128, 256, 1); /* K = 256: no split-K (max K/256 = 1) */
    mdl_cost c;
    mdl_kernel_cost(&k, &g, SIM_PREC_AMP_FP16, &c);
    assert_true(c.blocks == 4); /* 64x64 tiles when 128x128 leaves the GPU idle */
    assert_true(fabs(c.wave_factor - 50.0) < 1e-12);
    double expect = k.flops * 50.0 / 200e12 * 1e9 + MDL_GEMM_FIXED_US * 1e3;
    assert_true(fabs((double)c.total_ns - expect) <= 1.0);
    assert_true(fabs(c.sm_fraction - 0.04f) < 1e-6);
    /* A non-GEMM tensor kernel (flash attention) with exactly 1 block: factor = slots. */
    mdl_kernel a = {.op = "attn",
                    .kind = SIM_OP_KERNEL,
                    .math = MDL_MATH_ATTN,
                    .flops = 1e9,
                    .bytes = 1,
                    .blocks = 1};
    mdl_kernel_cost(&a, &g, SIM_PREC_AMP_FP16, &c);
    assert_true(fabs(c.wave_factor - 200.0) < 1e-12);
    assert_true(fabs((double)c.total_ns - 1e9 * 200 / 200e12 * 1e9) <= 1.0);
    assert_true(fabs(c.sm_fraction - 0.01f) < 1e-6);
}

/* CUDA-core GEMMs: the default curve is cuBLAS SGEMM measured on an A100 (64 FP32 lanes per SM)
 * and carries its tiling, so a modelled FP32 GEMM takes no wave factor: 2048^3 on an A100 (256
 * tiles on 216 slots, 1.69x if it did) runs at 0.91 of the peak, 4096^3 at 0.976. A GPU with 128
 * lanes per SM (an H100 SXM) gets MDL_WIDE_FP32_EFF of the curve at the same ideal time. */
static void test_cost_cuda_core_gemm_curve_and_lanes(void **state)
{
    (void)state;
    sim_gpu_desc a = flat_gpu(1.0);
    a.eff_cuda.n = 0; /* the default curve */
    a.sms = 108;
    a.boost_mhz = 1410;
    a.fp32_tflops = 19.5;
    assert_true(fabs(mdl_fp32_lanes_per_sm(&a) - 64) < 0.1);
    mdl_cost c;
    mdl_kernel k = gemm_kernel(2048, 2048, 2048, 1);
    mdl_kernel_cost(&k, &a, SIM_PREC_FP32, &c);
    assert_true(c.wave_factor == 1.0);
    double eff = mdl_curve_eval(mdl_default_curve(MDL_CURVE_CUDA), log10(k.flops));
    assert_true(fabs(c.eff_compute - eff) < 1e-12);
    assert_true(eff > 0.89 && eff < 0.92);
    k = gemm_kernel(4096, 4096, 4096, 1);
    mdl_kernel_cost(&k, &a, SIM_PREC_FP32, &c);
    assert_true(fabs(c.eff_compute - 0.976) < 0.002);
    sim_gpu_desc h = a; /* the H100 SXM's 132 SMs at 1.98 GHz, 66.9 TFLOPS: 128 lanes */
    h.sms = 132;
    h.boost_mhz = 1980;
    h.fp32_tflops = 66.9;
    assert_true(fabs(mdl_fp32_lanes_per_sm(&h) - 128) < 0.1);
    k.flops *= 66.9 / 19.5; /* the same ideal time as on the A100: the same curve point */
    mdl_kernel_cost(&k, &h, SIM_PREC_FP32, &c);
    assert_true(fabs(c.eff_compute - MDL_WIDE_FP32_EFF * 0.976) < 0.002);
    /* a GPU's own curve is its measurement: no lane factor */
    h.eff_cuda = (sim_curve){1, {0}, {0.5}};
    mdl_kernel_cost(&k, &h, SIM_PREC_FP32, &c);
    assert_true(fabs(c.eff_compute - 0.5) < 1e-12);
}

/* Exactly full waves cost nothing extra; one block more costs a whole wave. */
static void test_cost_wave_quantization_partial_wave(void **state)
{
    (void)state;
    sim_gpu_desc g = flat_gpu(1.0);
    mdl_kernel full = {.op = "attn",
                       .kind = SIM_OP_KERNEL,
                       .math = MDL_MATH_ATTN,
                       .flops = 4e10,
                       .bytes = 1,
                       .blocks = 400};
    mdl_kernel over = full;
    over.blocks = 401;
    assert_true(fabs(mdl_kernel_time_ns(&full, &g, SIM_PREC_BF16) - 200000.0) <= 1.0);
    double t_over = (double)mdl_kernel_time_ns(&over, &g, SIM_PREC_BF16);
    assert_true(fabs(t_over - 4e10 * (3 / (401.0 / 200)) / 200e12 * 1e9) <= 1.0);
    assert_true(t_over > 1.49 * 200000);
}

/* Split-K fills the GPU for a GEMM with a small output and a long reduction (weight gradients):
 * 64x64 tiles give 4 blocks, split into min(200/4, 65536/256) = 50 slices. A TF32 GEMM keeps its
 * 4 blocks: the wave factor is then 200/4 = 50, so it takes 50x its full-GPU roofline time (plus
 * the fixed GEMM time) where the fp16 one, split, takes 1x. */
static void test_cost_split_k_for_small_outputs(void **state)
{
    (void)state;
    mdl_kernel k = gemm_kernel(128, 128, 65536, 1);
    assert_true(mdl_kernel_blocks(&k, 200, true) == 200);
    assert_true(mdl_kernel_blocks(&k, 200, false) == 4);
    sim_gpu_desc g = flat_gpu(1.0);
    mdl_cost c;
    mdl_kernel_cost(&k, &g, SIM_PREC_FP16, &c);
    assert_true(c.blocks == 200 && fabs(c.wave_factor - 1) < 1e-12);
    mdl_kernel_cost(&k, &g, SIM_PREC_TF32, &c);
    assert_true(c.blocks == 4 && fabs(c.wave_factor - 50) < 1e-12);
    double expect = k.flops * 50 / 100e12 * 1e9 + MDL_GEMM_FIXED_US * 1e3;
    assert_true(fabs((double)c.total_ns - expect) <= 1.0);
}

static void test_cost_curve_interpolates_and_clamps(void **state)
{
    (void)state;
    sim_curve c = {3, {6, 8, 10}, {0.1, 0.5, 0.9}};
    assert_true(fabs(mdl_curve_eval(&c, 7) - 0.3) < 1e-12);
    assert_true(fabs(mdl_curve_eval(&c, 9.5) - 0.8) < 1e-12);
    assert_true(mdl_curve_eval(&c, 2) == 0.1);  /* below the first point */
    assert_true(mdl_curve_eval(&c, 15) == 0.9); /* above the last point */
    sim_curve bad = {3, {6, 6, 10}, {0.1, 0.5, 0.9}};
    assert_true(mdl_curve_eval(&bad, 7) < 0); /* not increasing: rejected, no GSL abort */
    sim_curve empty = {0, {0}, {0}};
    assert_true(mdl_curve_eval(&empty, 7) < 0);
    /* An empty GPU curve falls back to the default; efficiencies stay in [0.001, 1]. */
    const sim_curve *d = mdl_default_curve(MDL_CURVE_MEMORY);
    assert_true(fabs(mdl_efficiency(&empty, MDL_CURVE_MEMORY, 8) - mdl_curve_eval(d, 8)) < 1e-12);
    sim_curve big = {1, {0}, {7}}, zero = {1, {0}, {0}};
    assert_true(mdl_efficiency(&big, MDL_CURVE_TENSOR, 9) == 1.0);
    assert_true(mdl_efficiency(&zero, MDL_CURVE_TENSOR, 9) == 0.001);
}

/* The default curves grow with size and stay below 1: a kernel 10x larger is never less
 * efficient, and tiny kernels are far from peak. The highest point is the CUDA-core curve's 0.98,
 * cuBLAS SGEMM at 8192^3 on an A100 (models/cost.c); tensor and memory stop at 0.78 and 0.90. */
static void test_cost_default_curves_are_monotone(void **state)
{
    (void)state;
    for (int id = 0; id < 3; id++) {
        const sim_curve *c = mdl_default_curve((mdl_curve_id)id);
        assert_true(c->n >= 2);
        for (int i = 1; i < c->n; i++) {
            assert_true(c->x[i] > c->x[i - 1]);
            assert_true(c->y[i] >= c->y[i - 1]);
        }
        assert_true(c->y[0] <= 0.1 && c->y[c->n - 1] <= 0.98);
    }
}

/* The default curves are read where the reference A100 (312 TFLOPS tensor, 19.5 fp32, 1,797 GB/s)
 * would take the same ideal time: on a GPU 3x as fast a kernel sits where a third of its work
 * sits on the A100. A GPU's own curve is read at the plain work. Whether convolutions use tensor
 * cores follows the same peaks. */
static void test_cost_default_curves_scale_with_the_unit(void **state)
{
    (void)state;
    sim_curve none = {0};
    double e = mdl_efficiency_at(&none, MDL_CURVE_TENSOR, 3e9, 3 * 312e12);
    assert_true(fabs(e - mdl_efficiency(NULL, MDL_CURVE_TENSOR, 9)) < 1e-12);
    e = mdl_efficiency_at(&none, MDL_CURVE_MEMORY, 1e8, 1797e9);
    assert_true(fabs(e - mdl_efficiency(NULL, MDL_CURVE_MEMORY, 8)) < 1e-12);
    e = mdl_efficiency_at(&none, MDL_CURVE_CUDA, 1e10, 19.5e12 / 10);
    assert_true(fabs(e - mdl_efficiency(NULL, MDL_CURVE_CUDA, 11)) < 1e-12);
    sim_curve own = {2, {8, 10}, {0.2, 0.6}};
    assert_true(fabs(mdl_efficiency_at(&own, MDL_CURVE_TENSOR, 1e9, 1e15) - 0.4) < 1e-12);
    sim_gpu_desc g = flat_gpu(1.0);
    assert_true(mdl_conv_tensor_cores(&g, SIM_PREC_FP32));
    assert_true(mdl_conv_tensor_cores(&g, SIM_PREC_AMP_FP16));
    g.tf32_tflops = 0;
    assert_false(mdl_conv_tensor_cores(&g, SIM_PREC_FP32));
}

/* A tensor-core GEMM's ramp is read at the half-precision rate in every precision: on the default
 * curve a TF32 GEMM of one shape reaches the fp16 GEMM's efficiency (4096^3: 1024 tiles fill the
 * 200 slots, so both take the same wave factor), not that of twice the work. */
static void test_cost_tf32_ramp_at_the_half_precision_rate(void **state)
{
    (void)state;
    sim_gpu_desc g = flat_gpu(1.0);
    g.eff_tensor = (sim_curve){0};
    mdl_kernel k = gemm_kernel(4096, 4096, 4096, 100e6);
    mdl_cost half, tf32;
    mdl_kernel_cost(&k, &g, SIM_PREC_FP16, &half);
    mdl_kernel_cost(&k, &g, SIM_PREC_TF32, &tf32);
    assert_true(tf32.peak_flops == 100e12 && half.peak_flops == 200e12);
    assert_true(tf32.wave_factor == half.wave_factor);
    double work = k.flops * half.wave_factor;
    double at_half = mdl_efficiency(NULL, MDL_CURVE_TENSOR, log10(work * 312e12 / 200e12));
    assert_true(fabs(half.eff_compute - at_half) < 1e-12);
    assert_true(fabs(tf32.eff_compute - at_half) < 1e-12);
    assert_true(at_half < mdl_efficiency(NULL, MDL_CURVE_TENSOR, log10(work * 312e12 / 100e12)));
}

/* cuDNN's own CUDA-core convolution kernels run at MDL_CUDNN_SIMT_CONV_EFF of the default curve
 * (cuBLAS SGEMM's): the same GEMM-shaped work takes 1/0.737 the compute time as a convolution,
 * the same time when the GPU carries its own curve (its measurement), and a TF32 convolution on
 * the tensor cores is not touched. */
static void test_cost_cudnn_simt_conv_below_sgemm(void **state)
{
    (void)state;
    sim_gpu_desc g = flat_gpu(1.0);
    g.tf32_tflops = 0; /* a V100: fp32 convolutions on the CUDA cores */
    g.eff_cuda = (sim_curve){0};
    mdl_kernel gemm = gemm_kernel(6272, 1024, 256, 1e6);
    mdl_kernel conv = gemm;
    conv.math = MDL_MATH_CONV;
    mdl_cost cg, cc;
    mdl_kernel_cost(&gemm, &g, SIM_PREC_FP32, &cg);
    mdl_kernel_cost(&conv, &g, SIM_PREC_FP32, &cc);
    assert_true(cc.unit == SIM_UNIT_CUDA && cg.unit == SIM_UNIT_CUDA);
    assert_true(fabs(cc.compute_ns * MDL_CUDNN_SIMT_CONV_EFF - cg.compute_ns) <
                1e-6 * cg.compute_ns);
    g.eff_cuda = (sim_curve){1, {0}, {0.5}};
    mdl_kernel_cost(&gemm, &g, SIM_PREC_FP32, &cg);
    mdl_kernel_cost(&conv, &g, SIM_PREC_FP32, &cc);
    assert_true(fabs(cc.compute_ns - cg.compute_ns) < 1e-6 * cg.compute_ns);
    g.tf32_tflops = 100;
    mdl_kernel_cost(&conv, &g, SIM_PREC_FP32, &cc);
    assert_true(cc.unit == SIM_UNIT_TENSOR);
    assert_true(cc.eff_compute == 1.0); /* the flat tensor curve, unscaled */
}

/* PyTorch >= 1.12: fp32 convolutions run on TF32 tensor cores (cudnn.allow_tf32 = True), fp32
 * matmuls do not (cuda.matmul.allow_tf32 = False); precision tf32 turns both on; a GPU without
 * TF32 (V100) runs both on CUDA cores; bf16 on a GPU without bf16 tensor cores too. */
static void test_cost_tf32_follows_pytorch_defaults(void **state)
{
    (void)state;
    sim_gpu_desc g = flat_gpu(1.0);
    int tensor;
    assert_true(mdl_peak_flops(&g, SIM_PREC_FP32, MDL_MATH_CONV, &tensor) == 100e12 && tensor);
    assert_true(mdl_peak_flops(&g, SIM_PREC_FP32, MDL_MATH_GEMM, &tensor) == 10e12 && !tensor);
    assert_true(mdl_peak_flops(&g, SIM_PREC_TF32, MDL_MATH_GEMM, &tensor) == 100e12 && tensor);
    assert_true(mdl_peak_flops(&g, SIM_PREC_AMP_BF16, MDL_MATH_SIMT, &tensor) == 10e12 && !tensor);
    g.tf32_tflops = 0;
    g.bf16_tflops = 0;
    assert_true(mdl_peak_flops(&g, SIM_PREC_FP32, MDL_MATH_CONV, &tensor) == 10e12 && !tensor);
    assert_true(mdl_peak_flops(&g, SIM_PREC_AMP_BF16, MDL_MATH_GEMM, &tensor) == 10e12 && !tensor);
    assert_true(mdl_peak_flops(&g, SIM_PREC_AMP_FP16, MDL_MATH_GEMM, &tensor) == 200e12 && tensor);
}

/* Same kernel, fp32 vs AMP: the tensor-bound GEMM gets 20x faster (CUDA cores 10 -> tensor 200
 * TFLOP/s), less the tensor tiles' last partial wave (4096 tiles on 200 slots: 21/20.48) and the
 * tensor-core GEMM's fixed MDL_GEMM_FIXED_US; the memory-bound elementwise kernel does not change
 * (same bytes). */
static void test_cost_amp_speeds_tensor_bound_not_memory_bound(void **state)
{
    (void)state;
    sim_gpu_desc g = flat_gpu(0.8);
    mdl_kernel mm = gemm_kernel(8192, 8192, 8192, 400e6);
    double t32 = (double)mdl_kernel_time_ns(&mm, &g, SIM_PREC_FP32);
    double t16 = (double)mdl_kernel_time_ns(&mm, &g, SIM_PREC_AMP_FP16);
    assert_true(t16 < t32 / 10);
    assert_true(fabs(t32 / (t16 - MDL_GEMM_FIXED_US * 1e3) - 20 / (21 / 20.48)) < 0.01);
    mdl_kernel ew = {.op = "relu",
                     .kind = SIM_OP_KERNEL,
                     .math = MDL_MATH_SIMT,
                     .flops = 1e8,
                     .bytes = 800e6,
                     .blocks = 200000};
    assert_int_equal(mdl_kernel_time_ns(&ew, &g, SIM_PREC_FP32),
                     mdl_kernel_time_ns(&ew, &g, SIM_PREC_AMP_FP16));
}

/* Records that are not kernels cost no GPU time; every kernel costs at least the overhead. */
/* A forward 3x3 convolution, batch 1, 256 -> 256 channels on a 64x64 image (stride 1, pad 1) as
 * expand.c marks it: 16 x 16 = 256 output tiles of 4x4. */
static mdl_kernel conv3x3_kernel(double ch)
{
    double px = 64 * 64;
    mdl_kernel k = {.op = "conv_fwd",
                    .kind = SIM_OP_KERNEL,
                    .math = MDL_MATH_CONV,
                    .flops = 2 * px * ch * 9 * ch,
                    .bytes = 4 * (2 * ch * px + 9 * ch * ch),
                    .gemm_m = px,
                    .gemm_n = ch,
                    .gemm_k = 9 * ch,
                    .gemm_batch = 1};
    k.wino = (mdl_wino){.pass = MDL_WINO_FWD,
                        .tiles = 256,
                        .cin = ch,
                        .cout = ch,
                        .x_elems = ch * px,
                        .y_elems = ch * px};
    return k;
}

/* Nonfused Winograd F(4x4, 3x3) in closed form on the flat GPU without TF32 (a Volta or Turing
 * part: fp32 convolutions on CUDA cores at 10 TFLOP/s; 1000 GB/s, no per-kernel overhead) and
 * on the same GPU with TF32, where PyTorch's default runs them on tensor cores. The direct
 * convolution's 4.832 GFLOP take 483.2 us; the Winograd kernels take the input transform (1,048,576
 * + 36 x 256 x 256 elements of 4 bytes), the filter transform ((9 + 36) x 256^2), the 36 batched
 * GEMMs (2 x 36 x 256^3 FLOPs, bound by arithmetic: 120.8 us against 28.3 us of operands) and the
 * output transform, 159.9 us in all: the faster is taken. In half precision the tensor cores run
 * the implicit GEMM (4.832 GFLOP at 200 TFLOP/s), and with 4 channels the transforms' traffic
 * outweighs the multiplies saved: direct both times. */
static void test_cost_winograd_when_faster(void **state)
{
    (void)state;
    sim_gpu_desc g = flat_gpu(1.0);
    mdl_kernel k = conv3x3_kernel(256);
    mdl_cost c;
    mdl_kernel_cost(&k, &g, SIM_PREC_FP32, &c);
    assert_int_equal(c.algo, MDL_ALGO_DIRECT); /* TF32 tensor cores */
    g.tf32_tflops = 0;
    mdl_kernel_cost(&k, &g, SIM_PREC_FP32, &c);
    double tile = 36.0 * 256 * 256, x = 256.0 * 4096, filter = 256.0 * 256;
    double in_us = (x + tile) * 4 / 1e6, filter_us = (9 + 36) * filter * 4 / 1e6;
    double gemm_us = 2 * 36.0 * 256 * 256 * 256 / 1e7, out_us = in_us;
    assert_int_equal(c.algo, MDL_ALGO_WINOGRAD);
    assert_true(fabs(c.ns / 1e3 - (in_us + filter_us + gemm_us + out_us)) < 1e-6);
    assert_true(fabs(c.compute_ns / 1e3 - gemm_us) < 1e-6);
    assert_true(fabs(c.memory_ns / 1e3 - (in_us + filter_us + out_us)) < 1e-6);
    assert_int_equal(c.unit, SIM_UNIT_CUDA);
    mdl_kernel_cost(&k, &g, SIM_PREC_AMP_FP16, &c);
    assert_int_equal(c.algo, MDL_ALGO_DIRECT);
    assert_int_equal(c.unit, SIM_UNIT_TENSOR);
    k.wino.pass = MDL_WINO_NONE;
    mdl_kernel_cost(&k, &g, SIM_PREC_FP32, &c);
    assert_int_equal(c.algo, MDL_ALGO_DIRECT);
    assert_true(fabs(c.ns / 1e3 - 2 * 4096.0 * 256 * 9 * 256 / 1e7) < 1e-6);
    mdl_kernel small = conv3x3_kernel(4);
    mdl_kernel_cost(&small, &g, SIM_PREC_FP32, &c);
    assert_int_equal(c.algo, MDL_ALGO_DIRECT);
    assert_int_equal(c.unit, SIM_UNIT_MEMORY);
}

/* Each Winograd kernel pays the GPU's per-kernel overhead: four of them, where the direct
 * convolution pays one. The data- and filter-gradient passes run the same four kernels with
 * their own operands: the data gradient reduces over the output channels, so with 64 in and 256
 * out its GEMM does as many FLOPs as the forward's, and the filter gradient's GEMM reduces over
 * the tiles. */
static void test_cost_winograd_passes_and_overhead(void **state)
{
    (void)state;
    sim_gpu_desc g = flat_gpu(1.0);
    g.tf32_tflops = 0;
    g.kernel_overhead_us = 2;
    mdl_kernel k = conv3x3_kernel(256);
    mdl_cost c;
    mdl_kernel_cost(&k, &g, SIM_PREC_FP32, &c);
    assert_int_equal(c.algo, MDL_ALGO_WINOGRAD);
    assert_true(fabs(c.overhead_ns - 4 * 2000) < 1e-9);
    k.wino.cin = 64;
    k.wino.x_elems = 64 * 4096;
    mdl_cost fwd, dgrad, wgrad;
    mdl_kernel_cost(&k, &g, SIM_PREC_FP32, &fwd);
    k.wino.pass = MDL_WINO_DGRAD;
    mdl_kernel_cost(&k, &g, SIM_PREC_FP32, &dgrad);
    k.wino.pass = MDL_WINO_WGRAD;
    mdl_kernel_cost(&k, &g, SIM_PREC_FP32, &wgrad);
    double gemm_ns = 2 * 36.0 * 256 * 64 * 256 / 1e4;
    assert_true(fabs(fwd.compute_ns - gemm_ns) < 1e-6);
    assert_true(fabs(dgrad.compute_ns - gemm_ns) < 1e-6);
    assert_true(fabs(wgrad.compute_ns - gemm_ns) < 1e-6);
    /* The filter gradient transforms x (64 x 4096 elements into 36 x 256 x 64) and dy (256 x
     * 4096 into 36 x 256 x 256), and its product back into the 9 x 64 x 256 filter. */
    double x = 64 * 4096.0, y = 256 * 4096.0, tx = 36 * 256 * 64.0, ty = 36 * 256 * 256.0;
    double tf = 36 * 64 * 256.0, f = 9 * 64 * 256.0;
    assert_int_equal(wgrad.algo, MDL_ALGO_WINOGRAD);
    assert_true(fabs(wgrad.memory_ns - (x + tx + y + ty + tf + f) * 4 / 1e3) < 1e-6);
}

/* A row kernel's re-reads on the flat GPU (100 SMs, compute capability unset: 2,048 threads per
 * SM) with an 8 MB L2: 128-thread blocks are 16 per SM, 1,600 rows resident. Rows of 1,024 bytes
 * take 1.6 MB (0.19 of the L2, below MDL_ROW_L2_LO): every re-read hits; rows of 4,096 bytes,
 * 6.25 MB (0.78, above MDL_ROW_L2_HI): every re-read goes to DRAM; rows of 2,560 bytes take 0.49
 * of it, (0.49 - LO) / (HI - LO) of them miss. The memory time is the kernel's bytes plus the
 * missed ones at 1,000 GB/s; without an L2 size every re-read misses. */
static void test_cost_row_rereads_by_l2(void **state)
{
    (void)state;
    sim_gpu_desc g = flat_gpu(1.0);
    g.l2_mb = 8;
    mdl_kernel k = {.op = "layernorm_fwd",
                    .kind = SIM_OP_KERNEL,
                    .math = MDL_MATH_SIMT,
                    .bytes = 2e9,
                    .blocks = 1e6,
                    .rows = {.reread_bytes = 1e9, .row_bytes = 1024, .threads = 128}};
    mdl_cost c;
    mdl_kernel_cost(&k, &g, SIM_PREC_FP32, &c);
    assert_true(fabs(mdl_row_miss(&k, &g)) < 1e-12);
    assert_true(fabs(c.memory_ns - 2e6) < 1e-6);
    k.rows.row_bytes = 4096;
    mdl_kernel_cost(&k, &g, SIM_PREC_FP32, &c);
    assert_true(fabs(mdl_row_miss(&k, &g) - 1) < 1e-12);
    assert_true(fabs(c.memory_ns - 3e6) < 1e-6);
    k.rows.row_bytes = 2560;
    double x = 1600 * 2560 / (8 * 1048576.0);
    double miss = (x - MDL_ROW_L2_LO) / (MDL_ROW_L2_HI - MDL_ROW_L2_LO);
    assert_true(miss > 0.4 && miss < 0.6);
    assert_true(fabs(mdl_row_miss(&k, &g) - miss) < 1e-12);
    mdl_kernel_cost(&k, &g, SIM_PREC_FP32, &c);
    assert_true(fabs(c.memory_ns - (2e9 + miss * 1e9) / 1e3) < 1e-6);
    g.l2_mb = 0;
    assert_true(fabs(mdl_row_miss(&k, &g) - 1) < 1e-12);
    k.rows.reread_bytes = 0; /* one pass: nothing to miss */
    assert_true(fabs(mdl_row_miss(&k, &g)) < 1e-12);
}

/* A dropout forward draws a Philox number per element: on a GPU whose DRAM outruns its integer
 * lanes the kernel takes elements x MDL_PHILOX_INT_OPS_PER_ELEM / (SMs x 64 x GHz); below that
 * it stays at the bandwidth term (both exact: the flat GPU's curves are 1). */
static void test_cost_dropout_rng_on_the_integer_lanes(void **state)
{
    (void)state;
    sim_gpu_desc g = flat_gpu(1.0);
    g.boost_mhz = 1000;
    double e = 1e9; /* fp16 in and out, a one-byte mask: 5 bytes an element */
    mdl_kernel k = {.op = "dropout_fwd",
                    .kind = SIM_OP_KERNEL,
                    .math = MDL_MATH_SIMT,
                    .bytes = 5 * e,
                    .blocks = e / 512,
                    .rng_elems = e};
    double rng_ns = e * MDL_PHILOX_INT_OPS_PER_ELEM / (100 * 1.0 * MDL_INT32_LANES_PER_SM);
    mdl_cost c;
    mdl_kernel_cost(&k, &g, SIM_PREC_FP16, &c);
    assert_true(rng_ns < 5e6);
    assert_true(fabs(c.memory_ns - 5e6) < 1e-6); /* 1,000 GB/s: the DRAM is slower */
    g.mem_bw_gbps = 4000;
    mdl_kernel_cost(&k, &g, SIM_PREC_FP16, &c);
    assert_true(rng_ns > 1.25e6);
    assert_true(fabs(c.memory_ns - rng_ns) < 1e-6);
    k.rng_elems = 0; /* its backward (the mask's scale) draws nothing */
    mdl_kernel_cost(&k, &g, SIM_PREC_FP16, &c);
    assert_true(fabs(c.memory_ns - 1.25e6) < 1e-6);
}

static void test_cost_non_kernels_and_overhead(void **state)
{
    (void)state;
    sim_gpu_desc g = flat_gpu(1.0);
    g.kernel_overhead_us = 1.5;
    mdl_kernel cpu = {.op = "zero_grad", .kind = SIM_OP_CPU, .dispatch_ns = 1000};
    assert_int_equal(mdl_kernel_time_ns(&cpu, &g, SIM_PREC_FP32), 0);
    mdl_kernel tiny = {
        .op = "fill", .kind = SIM_OP_KERNEL, .math = MDL_MATH_SIMT, .bytes = 4, .blocks = 1};
    int64_t t = mdl_kernel_time_ns(&tiny, &g, SIM_PREC_FP32);
    assert_true(t >= 1500 && t < 1600);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cost_compute_bound_gemm),
        cmocka_unit_test(test_cost_memory_bound_elementwise),
        cmocka_unit_test(test_cost_nchw_channel_limit),
        cmocka_unit_test(test_cost_native_depthwise_issue_limit),
        cmocka_unit_test(test_cost_tensor_clock_factor),
        cmocka_unit_test(test_cost_gemm_fixed_time),
        cmocka_unit_test(test_cost_bytes_in_flight_limit),
        cmocka_unit_test(test_cost_wave_quantization_one_block),
        cmocka_unit_test(test_cost_wave_quantization_partial_wave),
        cmocka_unit_test(test_cost_cuda_core_gemm_curve_and_lanes),
        cmocka_unit_test(test_cost_split_k_for_small_outputs),
        cmocka_unit_test(test_cost_curve_interpolates_and_clamps),
        cmocka_unit_test(test_cost_default_curves_are_monotone),
        cmocka_unit_test(test_cost_default_curves_scale_with_the_unit),
        cmocka_unit_test(test_cost_tf32_ramp_at_the_half_precision_rate),
        cmocka_unit_test(test_cost_cudnn_simt_conv_below_sgemm),
        cmocka_unit_test(test_cost_tf32_follows_pytorch_defaults),
        cmocka_unit_test(test_cost_amp_speeds_tensor_bound_not_memory_bound),
        cmocka_unit_test(test_cost_winograd_when_faster),
        cmocka_unit_test(test_cost_winograd_passes_and_overhead),
        cmocka_unit_test(test_cost_row_rereads_by_l2),
        cmocka_unit_test(test_cost_dropout_rng_on_the_integer_lanes),
        cmocka_unit_test(test_cost_non_kernels_and_overhead),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
