/* cost.c — the kernel roofline (see cost.h).
 * Wave quantization is applied to the compute term only: a GEMM's tiles each take a fixed time,
 * so a last partial wave costs a full one, but a bandwidth-bound kernel with few blocks gets more
 * bandwidth per block, and its small-size inefficiency is already in the memory curve. */
#include "models/cost.h"

#include <gsl/gsl_interp.h>
#include <math.h>

/* Default efficiency curves (used when the catalog gives none). Engineering estimates, set once
 * from public behaviour and NOT fitted to the checking rows of tests/data/published
 * (docs/accuracy.md); they are set on the A100 SXM4 and read at the kernel's ideal time on
 * other GPUs (mdl_efficiency_at):
 *
 * Tensor cores, x = log10(FLOPs of the kernel's full-wave equivalent, i.e. FLOPs x wave factor):
 *   large cuBLAS half-precision GEMMs (~1e12 FLOPs, e.g. 8192^3) run at ~75-80 % of the dense
 *   peak on A100/H100 (the ceiling NVIDIA's "Matrix Multiplication Background User's Guide"
 *   shows for its GEMM sweeps); a full wave of 128x128 tiles with a short reduction (K <= 64,
 *   ~1e8-1e9 FLOPs on 100+ SMs) is dominated by its prologue/epilogue (first tile loads, C
 *   writes), so a few tens of percent; below 1e7 a kernel is all ramp-up. A tensor-core GEMM
 *   pays MDL_GEMM_FIXED_US (cost.h) beyond this curve, measured on XLA's tables after it was set.
 * CUDA cores, x = log10(FLOPs), no wave factor: cuBLAS 12.4 SGEMM (strict FP32) measured on an
 *   A100-SXM4-80GB at 1410 MHz (tests/data/published/microbench.csv, fit rows sgblas-a100-*,
 *   github.com/AG0708/sgBLAS docs/results-a100-sxm4.md): 256^3 0.14 of the peak, 512^3 0.50,
 *   1024^3 0.85, 2048^3 0.91, 4096^3 0.976, 8192^3 0.98. Those sizes show no wave steps (2048^3
 *   would pay 1.69x with 256 tiles on 216 slots), so cuBLAS's SIMT tiling is in the curve, not
 *   in mdl_kernel_blocks: a modelled CUDA-core GEMM or convolution takes no wave factor. An SM with
 * 64 FP32 lanes (Volta, Turing, GA100) reaches that curve; one with 128 (GA10x, Ada, Hopper,
 * Blackwell) reaches MDL_WIDE_FP32_EFF of it (mdl_kernel_cost). Memory, x = log10(bytes): copy
 * kernels of >= 100 MB reach ~85-90 % of the DRAM peak (the usual bandwidthTest/nvbandwidth
 * device-to-device result); a 1 MB kernel finishes in ~2 us on a 1.5-2 TB/s part (DRAM latency and
 * ramp), i.e. ~30-45 %; 10 kB is latency-only. */
static const sim_curve default_tensor = {
    7, {6, 7, 8, 9, 10, 11, 12}, {0.05, 0.12, 0.30, 0.52, 0.66, 0.74, 0.78}};
static const sim_curve default_cuda = {
    7, {6.5, 7.5, 8.4, 9.3, 10.2, 11.1, 12}, {0.02, 0.14, 0.50, 0.85, 0.91, 0.976, 0.98}};
static const sim_curve default_memory = {
    6, {4, 5, 6, 7, 8, 9}, {0.05, 0.20, 0.45, 0.70, 0.85, 0.90}};

const sim_curve *mdl_default_curve(mdl_curve_id id)
{
    switch (id) {
    case MDL_CURVE_TENSOR:
        return &default_tensor;
    case MDL_CURVE_CUDA:
        return &default_cuda;
    case MDL_CURVE_MEMORY:
        return &default_memory;
    }
    return &default_memory;
}

static int curve_valid(const sim_curve *c)
{
    if (!c || c->n < 1 || c->n > SIM_CURVE_MAX) return 0;
    for (int i = 1; i < c->n; i++)
        if (!(c->x[i] > c->x[i - 1])) return 0;
    for (int i = 0; i < c->n; i++)
        if (!isfinite(c->x[i]) || !isfinite(c->y[i])) return 0;
    return 1;
}

double mdl_curve_eval(const sim_curve *c, double x)
{
    if (!curve_valid(c)) return -1;
    if (c->n == 1 || x <= c->x[0]) return c->y[0];
    if (x >= c->x[c->n - 1]) return c->y[c->n - 1];
    /* Checked above: n >= 2, x strictly increasing and x inside the range, so GSL's error
     * handler (which aborts by default) cannot fire. */
    gsl_interp *in = gsl_interp_alloc(gsl_interp_linear, (size_t)c->n);
    if (!in) { /* out of memory: the nearest point below */
        int i = c->n - 1;
        while (i > 0 && c->x[i] > x)
            i--;
        return c->y[i];
    }
    gsl_interp_init(in, c->x, c->y, (size_t)c->n);
    double y = gsl_interp_eval(in, c->x, c->y, x, NULL);
    gsl_interp_free(in);
    return y;
}

double mdl_efficiency(const sim_curve *gpu_curve, mdl_curve_id fallback, double x)
{
    double e = mdl_curve_eval(gpu_curve, x);
    if (e < 0) e = mdl_curve_eval(mdl_default_curve(fallback), x);
    if (!(e >= 0.001)) /* also catches NaN */
        e = 0.001;
    return e > 1 ? 1 : e;
}

/* The default curves were set on an A100 SXM4 (the cost notes above; dense half-precision tensor
 * peak 312 TFLOPS, FP32 19.5 TFLOPS, DRAM 1,555 GB/s for 40 GB and 2,039 GB/s for 80 GB: Glenn K.
 * Lockwood, "A100", from NVIDIA's A100 datasheet). Their ramp comes from costs fixed in time, not
 * in work: filling the pipeline at DRAM latency, the epilogue, the last partial wave, block
 * launch. So on another GPU (or another unit) a kernel sits where its ideal time would put it on
 * the A100: the same FLOPs on an H100's 989 TFLOPS take a third of the time, and reach only the
 * efficiency a third of the work reaches on the A100. A tensor-core kernel is placed by the GPU's
 * half-precision rate in every precision (tensor_ramp_rate): XLA's H100 table runs TF32 and bf16
 * dots of one shape at the same fraction of their peaks (median ratio 0.99 over its 125 unbatched
 * shapes), where placing TF32 by its own half rate gave it the ramp of twice the work. A GPU's own
 * curve (fitted on that GPU) is read at the kernel's plain work. */
static const double ref_rate[] = {
    [MDL_CURVE_TENSOR] = 312e12, [MDL_CURVE_CUDA] = 19.5e12, [MDL_CURVE_MEMORY] = 1797e9};

double mdl_efficiency_at(const sim_curve *gpu_curve, mdl_curve_id fallback, double work,
                         double rate)
{
    if (curve_valid(gpu_curve) || !(rate > 0))
        return mdl_efficiency(gpu_curve, fallback, log10(work));
    return mdl_efficiency(NULL, fallback, log10(work * ref_rate[fallback] / rate));
}

int mdl_blocks_per_sm(const sim_gpu_desc *gpu)
{
    return gpu->max_blocks_per_sm > 0 ? gpu->max_blocks_per_sm : 1;
}

double mdl_fp32_lanes_per_sm(const sim_gpu_desc *gpu)
{
    double per_sm_ghz = (double)gpu->sms * gpu->boost_mhz * 1e6 * 2;
    return per_sm_ghz > 0 ? gpu->fp32_tflops * 1e12 / per_sm_ghz : 0;
}

/* The compute capability in tenths: 8.9 -> 89, 10.0 -> 100. */
static int cc_tenths(const sim_gpu_desc *gpu)
{
    return (int)lround(gpu->compute_capability * 10);
}

int mdl_threads_per_sm(const sim_gpu_desc *gpu)
{
    int cc = cc_tenths(gpu);
    if (cc == 75) return 1024;
    if (cc == 86 || cc == 87 || cc == 89 || cc / 10 == 12) return 1536;
    return 2048;
}

/* Elements per input a thread of PyTorch's vectorized loop holds in flight on this GPU. The
 * 16-byte vectors of 2-byte types (vec_width 8) are launched on compute capability 9.0 and 10.0
 * only; launch_vectorized_kernel (aten/src/ATen/native/cuda/CUDALoops.cuh, from PyTorch 2.7)
 * caps every other GPU at 4. */
static double vec_in_flight(const mdl_kernel *k, const sim_gpu_desc *gpu)
{
    int cc = cc_tenths(gpu);
    bool sixteen_byte = cc == 90 || cc == 100;
    return k->vec_width > 4 && !sixteen_byte ? 4 : k->vec_width;
}

double mdl_kernel_blocks(const mdl_kernel *k, double slots, bool split_k)
{
    if (!(k->gemm_m > 0)) return k->blocks > 1 ? k->blocks : 1;
    double batch = k->gemm_batch >= 1 ? k->gemm_batch : 1;
    double t128 = ceil(k->gemm_m / 128) * ceil(k->gemm_n / 128) * batch;
    if (t128 >= slots) return t128;
    double blocks = ceil(k->gemm_m / 64) * ceil(k->gemm_n / 64) * batch;
    if (split_k && blocks < slots) {
        double split = floor(slots / blocks), max_split = floor(k->gemm_k / 256);
        if (split > max_split) split = max_split;
        if (split > 1) blocks *= split;
    }
    return blocks;
}

double mdl_peak_flops(const sim_gpu_desc *gpu, sim_precision p, mdl_math math, int *tensor)
{
    double t = 0;
    if (math == MDL_MATH_GEMM || math == MDL_MATH_CONV || math == MDL_MATH_ATTN) {
        switch (p) {
        case SIM_PREC_FP32:
            t = math == MDL_MATH_CONV ? gpu->tf32_tflops : 0;
            break;
        case SIM_PREC_TF32:
            t = gpu->tf32_tflops;
            break;
        case SIM_PREC_FP16:
        case SIM_PREC_AMP_FP16:
            t = gpu->fp16_tflops;
            break;
        case SIM_PREC_BF16:
        case SIM_PREC_AMP_BF16:
            /* No bf16 tensor cores (V100, T4): cuBLAS falls back to CUDA-core math. */
            t = gpu->bf16_tflops;
            break;
        default:
            break;
        }
    }
    if (tensor) *tensor = t > 0;
    /* SM units run at the clock the board's power limit lets them hold (catalog.c), lower while
     * the tensor cores of a full-rate part are busy. */
    double cf =
        t > 0 && gpu->clock_factor_tensor > 0 ? gpu->clock_factor_tensor : gpu->clock_factor;
    double clock = cf > 0 ? cf : 1;
    return (t > 0 ? t : gpu->fp32_tflops) * 1e12 * clock;
}

bool mdl_conv_tensor_cores(const sim_gpu_desc *gpu, sim_precision p)
{
    if (!gpu) /* every GPU since Volta has half-precision tensor cores; TF32 asked for explicitly */
        return p != SIM_PREC_FP32;
    int tensor = 0;
    mdl_peak_flops(gpu, p, MDL_MATH_CONV, &tensor);
    return tensor != 0;
}

double mdl_row_miss(const mdl_kernel *k, const sim_gpu_desc *gpu)
{
    const mdl_rows *r = &k->rows;
    if (!(r->reread_bytes > 0)) return 0;
    if (!(gpu->l2_mb > 0 && r->threads > 0 && gpu->sms > 0)) return 1;
    double per_sm = floor(mdl_threads_per_sm(gpu) / r->threads);
    double resident = gpu->sms * (per_sm > 1 ? per_sm : 1) * r->row_bytes;
    double x = resident / (gpu->l2_mb * 1048576.0);
    double miss = (x - MDL_ROW_L2_LO) / (MDL_ROW_L2_HI - MDL_ROW_L2_LO);
    return miss < 0 ? 0 : miss > 1 ? 1 : miss;
}

/* The rate a tensor-core kernel's ramp is read at: the GPU's half-precision tensor rate, whatever
 * the precision. A TF32 GEMM is a half-precision one with every operand and output byte doubled
 * and the math rate halved, so its whole timeline stretches alike and a shape reaches the same
 * fraction of its peak in both (mdl_efficiency_at's ref_rate comment; docs/kernel-cost.md). */
static double tensor_ramp_rate(const sim_gpu_desc *gpu, mdl_math math)
{
    return mdl_peak_flops(gpu, SIM_PREC_FP16, math, NULL);
}

/* A kernel's compute efficiency at its work: the tensor curve read at the half-precision rate
 * (MDL_HALF_RATE_TENSOR_EFF of it on a GPU with half-rate FP32 accumulation), or the CUDA-core
 * curve. The default CUDA-core curve is cuBLAS SGEMM's on a 64-lane SM, so a 128-lane
 * SM reaches MDL_WIDE_FP32_EFF of it and cuDNN's own convolution kernels MDL_CUDNN_SIMT_CONV_EFF
 * (cost.h); a GPU's own curve is its measurement and is read as it is. */
static double compute_efficiency(const mdl_kernel *k, const sim_gpu_desc *gpu, int tensor,
                                 double work, double peak)
{
    if (tensor) {
        double e = mdl_efficiency_at(&gpu->eff_tensor, MDL_CURVE_TENSOR, work,
                                     tensor_ramp_rate(gpu, (mdl_math)k->math));
        if (gpu->eff_tensor.n == 0 && gpu->fp16_acc16_tflops > 1.5 * gpu->fp16_tflops)
            e *= MDL_HALF_RATE_TENSOR_EFF;
        return e;
    }
    double e = mdl_efficiency_at(&gpu->eff_cuda, MDL_CURVE_CUDA, work, peak);
    if (gpu->eff_cuda.n != 0) return e;
    if (mdl_fp32_lanes_per_sm(gpu) > 96) e *= MDL_WIDE_FP32_EFF;
    if (k->math == MDL_MATH_CONV || k->math == MDL_MATH_CONV_DIRECT) e *= MDL_CUDNN_SIMT_CONV_EFF;
    return e;
}

/* *t raised to ns where ns is larger. */
static void at_least(double *t, double ns)
{
    if (ns > *t) *t = ns;
}

/* One kernel's roofline time (cost.h), the Winograd alternative aside. */
static void roofline(const mdl_kernel *k, const sim_gpu_desc *gpu, sim_precision p, mdl_cost *o)
{
    *o = (mdl_cost){.wave_factor = 1, .unit = SIM_UNIT_NONE};
    if (k->kind != SIM_OP_KERNEL) return;
    int tensor = 0;
    o->peak_flops = mdl_peak_flops(gpu, p, (mdl_math)k->math, &tensor);
    int sms = gpu->sms > 0 ? gpu->sms : 1;
    double slots = (double)sms * mdl_blocks_per_sm(gpu);
    /* cuBLAS splits K to fill the GPU in half precision, not in TF32 (cost.h). */
    bool split_k = !(tensor && p == SIM_PREC_TF32 && k->math == MDL_MATH_GEMM);
    o->blocks = mdl_kernel_blocks(k, slots, split_k);
    /* A recorded grid quantizes on any unit; the tiles mdl_kernel_blocks assumes are
     * tensor-core tiles, and cuBLAS's SIMT tiling is in the CUDA-core curve (default_cuda). */
    if (k->math != MDL_MATH_SIMT && (tensor || !(k->gemm_m > 0))) {
        double w = o->blocks / slots;
        o->wave_factor = ceil(w) / w;
    }
    double work = k->flops * o->wave_factor;
    if (work > 0 && o->peak_flops > 0) {
        o->eff_compute = compute_efficiency(k, gpu, tensor, work, o->peak_flops);
        o->compute_ns = work / (o->peak_flops * o->eff_compute) * 1e9;
    }
    double bw = gpu->mem_bw_gbps * 1e9;
    double bytes = k->bytes + mdl_row_miss(k, gpu) * k->rows.reread_bytes;
    if (bytes > 0 && bw > 0) {
        o->eff_memory = mdl_efficiency_at(&gpu->eff_mem, MDL_CURVE_MEMORY, bytes, bw);
        o->memory_ns = bytes / (bw * o->eff_memory) * 1e9;
    }
    /* Limits of the SMs' issue, whatever the DRAM could give: NCHW batch norm, PyTorch-native
     * depthwise taps, dropout's random numbers (cost.h); a kernel without one adds 0. */
    double ghz = gpu->boost_mhz / 1000 * (gpu->clock_factor > 0 ? gpu->clock_factor : 1);
    if (ghz > 0) {
        double chan_sms = o->blocks < sms ? o->blocks : sms; /* a block per channel */
        at_least(&o->memory_ns, k->chan_elems / (chan_sms * ghz * MDL_NCHW_CHANNEL_ELEMS_PER_CLK));
        at_least(&o->memory_ns, k->native_taps * MDL_DW_NATIVE_CLK_PER_TAP / (sms * ghz));
        at_least(&o->memory_ns,
                 k->rng_elems * MDL_PHILOX_INT_OPS_PER_ELEM / (sms * ghz * MDL_INT32_LANES_PER_SM));
    }
    if (k->vec_elems > 0 && gpu->mem_latency_ns > 0) {
        /* Little's law: each resident thread waits mem_latency_ns for its elements. */
        double in_flight = (double)sms * mdl_threads_per_sm(gpu) * vec_in_flight(k, gpu);
        at_least(&o->memory_ns, k->vec_elems / in_flight * gpu->mem_latency_ns);
    }
    o->overhead_ns = gpu->kernel_overhead_us > 0 ? gpu->kernel_overhead_us * 1e3 : 0;
    if (tensor && k->math == MDL_MATH_GEMM && work > 0) o->overhead_ns += MDL_GEMM_FIXED_US * 1e3;
    double t = (o->compute_ns > o->memory_ns ? o->compute_ns : o->memory_ns) + o->overhead_ns;
    o->ns = t;
    o->total_ns = t < 1 ? 1 : (int64_t)llround(t);
    if (o->compute_ns >= o->memory_ns && o->compute_ns > 0)
        o->unit = tensor ? SIM_UNIT_TENSOR : SIM_UNIT_CUDA;
    else
        o->unit = SIM_UNIT_MEMORY;
    double f = o->blocks / sms;
    o->sm_fraction = (float)(f > 1 ? 1 : f > 0 ? f : 1.0 / sms);
}

/* ---- nonfused Winograd F(4x4, 3x3) (mdl_wino in cost.h) ---- */

/* Elements of a transformed 6x6 tile per 4x4 output tile and channel, and of a 3x3 filter. */
#define WINO_TILE 36.0
#define WINO_FILTER 9.0
/* fp32: the only type whose convolutions take this path (expand.c). */
#define WINO_ELEM_BYTES 4.0

/* A transform kernel of the Winograd pipeline: reads `in` elements, writes `out`; a few adds per
 * element, so bound by DRAM on every GPU here. */
static mdl_kernel wino_transform(double in, double out)
{
    return (mdl_kernel){.kind = SIM_OP_KERNEL,
                        .math = MDL_MATH_SIMT,
                        .bytes = (in + out) * WINO_ELEM_BYTES,
                        .blocks = ceil(out / 512)};
}

/* The 36 batched GEMMs of the transformed operands: cuBLAS-class SGEMM kernels (volta_sgemm_* in
 * the V100 trace), so priced as a GEMM, on the CUDA cores this path runs on. */
static mdl_kernel wino_gemm(double m, double n, double k)
{
    return (mdl_kernel){.kind = SIM_OP_KERNEL,
                        .math = MDL_MATH_GEMM,
                        .flops = 2 * WINO_TILE * m * n * k,
                        .bytes = WINO_TILE * (m * k + k * n + m * n) * WINO_ELEM_BYTES,
                        .gemm_m = m,
                        .gemm_n = n,
                        .gemm_k = k,
                        .gemm_batch = WINO_TILE};
}

/* The kernels of a convolution pass from `in` (in_elems, ci channels) to `out` (out_elems, co
 * channels), in order: the input's transform, the filter's, 36 batched GEMMs reducing over the
 * input channels, and the product's transform back. The data gradient is such a pass from dy
 * to dx. */
static int wino_conv(const mdl_kernel *k, double in_elems, double ci, double co, double out_elems,
                     mdl_kernel part[4])
{
    double t = k->wino.tiles;
    part[0] = wino_transform(in_elems, WINO_TILE * t * ci);
    part[1] = wino_transform(WINO_FILTER * ci * co, WINO_TILE * ci * co);
    part[2] = wino_gemm(t, co, ci);
    part[3] = wino_transform(WINO_TILE * t * co, out_elems);
    return 4;
}

/* The kernels cuDNN's nonfused Winograd runs for a convolution pass: forward and data gradient
 * as wino_conv; the filter gradient transforms the input and the output gradient, reduces over
 * the tiles, and transforms the product back into the filter. */
static int wino_kernels(const mdl_kernel *k, mdl_kernel part[4])
{
    const mdl_wino *w = &k->wino;
    double t = w->tiles, ci = w->cin, co = w->cout;
    switch (w->pass) {
    case MDL_WINO_FWD:
        return wino_conv(k, w->x_elems, ci, co, w->y_elems, part);
    case MDL_WINO_DGRAD:
        return wino_conv(k, w->y_elems, co, ci, w->x_elems, part);
    case MDL_WINO_WGRAD:
        part[0] = wino_transform(w->x_elems, WINO_TILE * t * ci);
        part[1] = wino_transform(w->y_elems, WINO_TILE * t * co);
        part[2] = wino_gemm(ci, co, t);
        part[3] = wino_transform(WINO_TILE * ci * co, WINO_FILTER * ci * co);
        return 4;
    }
    return 0;
}

/* The Winograd kernels' time together (mdl_cost in cost.h says how the figures add up). */
static void winograd(const mdl_kernel *k, const sim_gpu_desc *gpu, sim_precision p, mdl_cost *o)
{
    mdl_kernel part[4];
    int n = wino_kernels(k, part);
    *o = (mdl_cost){.wave_factor = 1, .algo = MDL_ALGO_WINOGRAD};
    for (int i = 0; i < n; i++) {
        mdl_cost c;
        roofline(&part[i], gpu, p, &c);
        if (part[i].gemm_m > 0) {
            o->peak_flops = c.peak_flops;
            o->blocks = c.blocks;
            o->eff_compute = c.eff_compute;
            o->eff_memory = c.eff_memory;
            o->sm_fraction = c.sm_fraction;
        }
        if (c.compute_ns > c.memory_ns)
            o->compute_ns += c.compute_ns;
        else
            o->memory_ns += c.memory_ns;
        o->overhead_ns += c.overhead_ns;
        o->ns += c.ns;
    }
    o->total_ns = o->ns < 1 ? 1 : (int64_t)llround(o->ns);
    o->unit = o->compute_ns >= o->memory_ns ? SIM_UNIT_CUDA : SIM_UNIT_MEMORY;
}

const char *mdl_algo_name(mdl_algo a)
{
    return a == MDL_ALGO_WINOGRAD ? "winograd" : "direct";
}

void mdl_kernel_cost(const mdl_kernel *k, const sim_gpu_desc *gpu, sim_precision p, mdl_cost *o)
{
    roofline(k, gpu, p, o);
    if (k->wino.pass == MDL_WINO_NONE || k->kind != SIM_OP_KERNEL) return;
    /* Only a convolution on CUDA cores is offered the choice (expand.c says which). */
    if (mdl_conv_tensor_cores(gpu, p)) return;
    mdl_cost w;
    winograd(k, gpu, p, &w);
    if (w.ns < o->ns) *o = w;
}

int64_t mdl_kernel_time_ns(const mdl_kernel *k, const sim_gpu_desc *gpu, sim_precision p)
{
    mdl_cost c;
    mdl_kernel_cost(k, gpu, p, &c);
    return c.total_ns;
}
