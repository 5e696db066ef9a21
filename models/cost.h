/* cost.h — what one GPU kernel does (mdl_kernel) and how long it takes on a GPU (roofline).
 * Time = max(FLOPs x wave / (unit peak x eff_compute), bytes / (DRAM bandwidth x eff_memory))
 *        + kernel_overhead, where the efficiencies are piecewise-linear in log10 of the work
 * (GSL linear interpolation, clamped at the ends) and the wave factor ceil(w)/w (w = blocks /
 * (SMs x resident blocks per SM)) charges the idle SMs of a kernel's last, partial wave.
 * Pure functions: no state, no allocation that outlives a call. */
#ifndef MDL_COST_H
#define MDL_COST_H

#include "sim/core/hw.h"
#include "sim/core/workload.h"

#include <stdbool.h>
#include <stdint.h>

/* Integer-pipe operations per element of PyTorch's dropout forward, and the INT32 lanes of an
 * SM that issue them. fused_dropout_kernel_vec (aten/src/ATen/native/cuda/Dropout.cu) draws one
 * curand_uniform4 per 4 elements (UNROLL = 4): a Philox4x32-10 block, 10 rounds of two 32x32-bit
 * multiplies kept whole (high and low words: 4 multiplies), two 3-input XORs and, between rounds,
 * the two key additions (Salmon et al., "Parallel Random Numbers: As Easy as 1, 2, 3", SC11;
 * curand_philox4x32_x.h), about 80 operations, or 20 an element; the counter's increment with
 * carry adds 1, and turning each 32-bit word into a float (I2F, a conversion at a quarter of the
 * integer rate) 4 more: 25. Derived, not fitted. The CUDA C++ Programming Guide's throughput table
 * gives 64 results per clock per SM for 32-bit integer add, multiply and logic on compute
 * capability 7.0 to 9.0 (recalled; assumed for 10.x and 12.x, whose SMs keep Hopper's 64 INT32
 * lanes per SM in NVIDIA's Blackwell material, also recalled). The rest of the kernel (compare,
 * scale, fp16 conversions) issues on the FP32 pipe and is not counted. */
#define MDL_PHILOX_INT_OPS_PER_ELEM 25.0
#define MDL_INT32_LANES_PER_SM 64.0

/* Which arithmetic a kernel does; together with the precision it picks the unit and the peak. */
typedef enum mdl_math {
    MDL_MATH_NONE,        /* not a kernel: CPU-only op or a sync */
    MDL_MATH_GEMM,        /* cuBLAS matmul: tensor cores in fp16/bf16 (and tf32 when asked) */
    MDL_MATH_CONV,        /* cuDNN convolution: like GEMM, but fp32 runs as TF32 by default */
    MDL_MATH_CONV_DIRECT, /* cuDNN's grouped direct convolution: CUDA cores at any precision */
    MDL_MATH_ATTN,        /* fused attention (SDPA flash): tensor cores in half precision */
    MDL_MATH_SIMT,        /* CUDA-core arithmetic: elementwise, reductions, depthwise conv */
} mdl_math;

/* Elements per clock of each SM it occupies that cuDNN's NCHW batch-norm kernels
 * (bn_fw_tr_1C11_kernel_NCHW, bn_bw_1C11_kernel_new, reading and writing one element per thread,
 * a 512-thread block per channel) move, whatever the DRAM could give. Fitted to the A100 SXM4
 * FP32 DDP trace in tests/data/validation-traces (hta/nccl_parser_config): there batch norm
 * forward takes 2.39x and backward 2.53x the time of the ReLU forward and backward, where
 * bandwidth alone would give 1.77x and 1.95x, so those kernels ran at 0.755 of the ReLU's
 * modelled 1,223 GB/s: 925 GB/s over 108 SMs at 1,410 MHz = 6.07 B = 1.52 FP32 elements per SM
 * clock on average; ResNet-50's 64-channel layers (18 % of its batch-norm elements) occupy 64 of
 * the 108 SMs, so each occupied SM moves 1.52 x (0.82 + 0.18 x 108 / 64) = 1.71. Checked per
 * layer on the same trace (64-channel kernels at 0.59 of the wider ones' rate, 64 / 108 = 0.59)
 * and on the V100 FP32 trace (kineto/resnet50_num_workers_0), which the fit did not see: the
 * model's batch-norm time per step is within 6 % of the trace's (forward 6.0 vs 5.7 ms,
 * backward 9.8 vs 10.3 ms). The rate is per element: half precision moves half the bytes per
 * clock (an assumption: the kernels load one element per thread in either type). */
#define MDL_NCHW_CHANNEL_ELEMS_PER_CLK 1.71

/* Fraction of the default tensor curve's efficiency a GPU reaches whose FP32-accumulate tensor
 * rate is half its FP16-accumulate one (sim_gpu_desc.fp16_acc16_tflops: the GeForce cards), of
 * its rated-boost FP32-accumulate peak. The curve was set on data-centre parts, whose large
 * GEMMs run at 0.72-0.85 of their rated peaks; the GeForce cards' run at 0.97-1.16 of theirs
 * (torch.mm bursts of zzc0721/torch-performance-test-data): their tensor pipes do half the work
 * per clock on the same operand path, so a tile keeps them busier, and with the power that
 * frees they hold clocks above the rated boost. Fitted: the median of measured over modelled
 * large-GEMM rate over the eleven GeForce fit rows of tests/data/published/microbench.csv
 * (group gemm, ids zzc-*: RTX 2080 1.25, 3070 1.47, 3090 1.37-1.37, 4090 1.26-1.33, 5090
 * 1.48-1.57), 1.37; both causes are in the one figure, applied to tensor-core kernels only
 * (docs/kernel-cost.md). */
#define MDL_HALF_RATE_TENSOR_EFF 1.37

/* SM clocks per multiply-add ("tap": one output or input-gradient element times one filter
 * weight) of PyTorch's own depthwise kernels (aten/src/ATen/native/cuda/DepthwiseConv2d.cu), which
 * PyTorch runs instead of cuDNN's for an NCHW depthwise convolution in any type but fp16
 * (Convolution.cpp, use_cudnn_depthwise: cuDNN for channels_last, or for fp16 inputs; "Cudnn
 * kernels for other cases are not very fast", pytorch/pytorch#15513). Those kernels give each
 * output (or input-gradient, or a warp-strided loop per weight) element one thread that walks
 * the filter with index arithmetic and bounds checks per tap, so they are bound by the SMs'
 * instruction issue, far below the DRAM's rate. Measured once: a 3x3 depthwise forward on
 * (2, 32, 512, 512) fp32 takes 1.02 ms on a Titan Xp (synchronized timing by a PyTorch
 * maintainer, pytorch/pytorch#18631): 16.78 M outputs x 9 taps over 30 SMs at 1,582 MHz =
 * 0.320 clocks per tap. Assumed, not measured: the same rate for the input- and weight-gradient
 * kernels (the same per-tap work: two loads, index arithmetic, a multiply-add) and for 5x5
 * filters (which take the generic, not the 3x3-templated, kernel and may be slower). */
#define MDL_DW_NATIVE_CLK_PER_TAP 0.320

typedef enum mdl_phase {
    MDL_PH_STEP, /* training-loop work outside the model (zero_grad) */
    MDL_PH_FWD,
    MDL_PH_LOSS, /* loss and its scaling */
    MDL_PH_BWD,
    MDL_PH_RECOMPUTE, /* forward re-run inside backward (activation checkpointing) */
    MDL_PH_OPT,       /* unscale, optimizer step, scaler update */
    MDL_PH_COUNT
} mdl_phase;

/* Which pass of a convolution a Winograd geometry describes (mdl_wino.pass). */
enum { MDL_WINO_NONE, MDL_WINO_FWD, MDL_WINO_DGRAD, MDL_WINO_WGRAD };

/* A pass of a 3x3, stride-1, ungrouped fp32 convolution, which cuDNN can also run as nonfused
 * Winograd F(4x4, 3x3) (CUDNN_CONVOLUTION_{FWD,BWD_DATA,BWD_FILTER}_ALGO_WINOGRAD_NONFUSED):
 * transform the operands into 6x6 tiles, 36 batched GEMMs, transform the product back. A 4x4
 * output tile takes 36 multiplies per channel pair where direct convolution takes 144 (Lavin and
 * Gray, "Fast Algorithms for Convolutional Neural Networks", CVPR 2016: F(m x m, r x r) needs
 * (m + r - 1)^2 multiplies per tile), at the price of the transformed tensors' DRAM traffic.
 * mdl_kernel_cost prices both and keeps the faster, as cudnn.benchmark's trial of every
 * algorithm does. */
typedef struct mdl_wino {
    uint8_t pass;            /* MDL_WINO_*; NONE: implicit GEMM only */
    double tiles;            /* 4x4 tiles of the pass's output image over the batch (wgrad:
                                of the output gradient dy) */
    double cin, cout;        /* the convolution's input and output channels */
    double x_elems, y_elems; /* elements of its input x and output y over the batch */
} mdl_wino;

/* A row-wise kernel that reads each row more than once: PyTorch's block softmax (rows over 1,024
 * elements: cunn_SoftMaxForward finds the row's max, sums its exponentials, then writes, three
 * reads of the input) and its LayerNorm forward (vectorized_layer_norm_kernel: Welford statistics,
 * then the normalized write, two reads). The later passes find the row in L2 while the rows
 * resident at once (SMs x blocks per SM x row_bytes) are small beside it, and go back to DRAM
 * when they are not (MDL_ROW_L2_LO/HI). */
typedef struct mdl_rows {
    double reread_bytes; /* bytes the passes after the first read again; 0 = one pass */
    double row_bytes;    /* one row of the input, what a block holds between its passes */
    double threads;      /* threads per block (one block per row) */
} mdl_rows;

/* Where those re-reads leave L2, as a fraction of the L2 that the resident rows take: none of
 * them miss below MDL_ROW_L2_LO, all above MDL_ROW_L2_HI, linearly between. Fitted to NeuSight's
 * fp32 softmax and LayerNorm forward kernels on the A100 PCIe 40GB and the T4 (164 fit rows of
 * tests/data/published/rowwise.csv: 28.3 -> 8.1 % MAPE); the resident rows' outputs, the other
 * blocks' streaming data and set conflicts share the L2 with them, so it holds them well below
 * its size. Checked on the V100 PCIe 32GB, A100 80GB PCIe and L4 rows (docs/kernel-cost.md). */
#define MDL_ROW_L2_LO 0.25
#define MDL_ROW_L2_HI 0.70

/* One record of an expanded step: a kernel (kind SIM_OP_KERNEL) or a CPU-only op / sync. */
typedef struct mdl_kernel {
    const char *op;    /* static name: "conv_fwd", "foreach_add_", ... */
    int layer;         /* index into the net's layers; -1 = optimizer, scaler, loop */
    uint8_t kind;      /* sim_op_kind */
    uint8_t phase;     /* mdl_phase */
    uint8_t math;      /* mdl_math */
    uint16_t micro;    /* micro-batch index under gradient accumulation (< 1024) */
    uint8_t vec_width; /* elements per input each thread of a vectorized elementwise kernel
                          holds in flight (PyTorch: 4, or 8 for 2-byte types from 2.7, which
                          mdl_kernel_cost caps at 4 below compute capability 9.0 and on 12.x) */
    double flops;      /* floating-point operations (a multiply-add counts 2) */
    double bytes;      /* DRAM bytes read + written, each operand once */
    double blocks;     /* thread blocks of a non-GEMM kernel (elementwise: 512 elements each;
                          NCHW batch norm in training: one per channel) */
    double gemm_m, gemm_n, gemm_k, gemm_batch; /* GEMM problem; gemm_m = 0: not a GEMM */
    double native_taps;  /* multiply-adds of a PyTorch-native depthwise kernel, priced at
                            MDL_DW_NATIVE_CLK_PER_TAP SM clocks each as well; 0 = cuDNN runs it */
    double chan_elems;   /* elements an NCHW per-channel kernel (cuDNN batch norm) streams, priced
                            at MDL_NCHW_CHANNEL_ELEMS_PER_CLK per SM as well; 0 = no such limit */
    double vec_elems;    /* elements a PyTorch vectorized elementwise kernel (TensorIterator)
                            writes; on a GPU with mem_latency_ns its resident threads keep
                            vec_width each in flight (mdl_kernel_cost); 0 = no such limit */
    double rng_elems;    /* elements that draw a Philox random number (dropout's forward), priced
                            at MDL_PHILOX_INT_OPS_PER_ELEM on MDL_INT32_LANES_PER_SM as well */
    mdl_wino wino;       /* a convolution cuDNN may run as Winograd instead; pass NONE = not */
    mdl_rows rows;       /* a row-wise kernel's later passes over its rows; zero = one pass */
    int64_t dispatch_ns; /* CPU time on the reference core before the launch (or the CPU op) */
} mdl_kernel;

/* The algorithm a convolution's time is taken from (mdl_cost.algo). */
typedef enum mdl_algo { MDL_ALGO_DIRECT, MDL_ALGO_WINOGRAD } mdl_algo;

/* The cost model's working, for `model show` and the tests. For a convolution run as Winograd
 * (algo) the figures are its kernels' together: its GEMM's peak, blocks and efficiency, the
 * compute time of its parts bound by arithmetic, the memory time of those bound by DRAM, every
 * part's overhead, and total_ns their sum. */
typedef struct mdl_cost {
    double peak_flops;  /* FLOP/s of the unit chosen */
    double blocks;      /* thread blocks (GEMM: from 128x128 / 64x64 tiles and split-K) */
    double wave_factor; /* ceil(w)/w >= 1; 1 for elementwise kernels and modelled CUDA-core GEMMs */
    double eff_compute, eff_memory;
    double compute_ns, memory_ns;
    double overhead_ns;
    double ns; /* the time before rounding (what a fit differentiates) */
    int64_t total_ns;
    sim_unit unit;     /* TENSOR or CUDA when compute-bound, MEMORY when bandwidth-bound */
    uint8_t algo;      /* mdl_algo */
    float sm_fraction; /* min(1, blocks / SMs) */
} mdl_cost;

/* Which default efficiency curve. */
typedef enum mdl_curve_id { MDL_CURVE_TENSOR, MDL_CURVE_CUDA, MDL_CURVE_MEMORY } mdl_curve_id;

/* The built-in efficiency curve used when a GPU's own curve is empty (n = 0); x = log10 of the
 * kernel's FLOPs (tensor, cuda) or bytes (memory). Reasoning and sources are in cost.c. */
const sim_curve *mdl_default_curve(mdl_curve_id id);

/* y(x) of a curve by linear interpolation (GSL), clamped to the first/last point outside the
 * range. A curve with one point is constant; an empty or non-increasing one returns -1. */
double mdl_curve_eval(const sim_curve *c, double x);

/* Efficiency for log10 work x from the GPU's curve, or the default when it is empty or invalid;
 * clamped to [0.001, 1]. */
double mdl_efficiency(const sim_curve *gpu_curve, mdl_curve_id fallback, double x);

/* Efficiency of a kernel doing `work` (FLOPs or bytes) on a unit of `rate` (FLOP/s or B/s): the
 * GPU's own curve at log10(work), or the default curve where the reference GPU (an A100 SXM4,
 * see cost.c) would take the same ideal time, log10(work x its rate / rate). */
double mdl_efficiency_at(const sim_curve *gpu_curve, mdl_curve_id fallback, double work,
                         double rate);

/* Resident blocks per SM used for wave quantization: gpu->max_blocks_per_sm, or 1 if unset. */
int mdl_blocks_per_sm(const sim_gpu_desc *gpu);

/* FP32 lanes per SM, from the catalog's fp32 peak: fp32_tflops / (SMs x boost clock x 2 FLOPs
 * per FMA). 64 on Volta, Turing and GA100; 128 on GA10x, Ada, Hopper and Blackwell, whose second
 * FP32 datapath doubles the peak. 0 when the entry lacks SMs or clock. */
double mdl_fp32_lanes_per_sm(const sim_gpu_desc *gpu);

/* What a CUDA-core GEMM or convolution reaches on an SM with 128 FP32 lanes, as a fraction of the
 * default curve (which is the A100's, 64 lanes): an H100 SXM runs torch.matmul in strict FP32 at
 * 51.9 TFLOPS at 4096^3 and 8192^3 (microbench.csv, zzc79-h100-fp32gemm-*), 0.775 of its 66.9
 * peak, where the A100 reaches 0.976-0.98 at the same sizes: 0.79. Applied to the default curve
 * only; a GPU's own eff_cuda curve is its measurement. */
#define MDL_WIDE_FP32_EFF 0.79

/* What cuDNN's own CUDA-core convolution kernels (implicit_convolve_sgemm, volta_scudnn_*,
 * dgrad_engine, wgrad_alg0_engine: implicit GEMMs that gather their operands through the
 * convolution's index arithmetic) reach, as a fraction of the default CUDA-core curve, which is
 * cuBLAS SGEMM's. Fitted on the V100 FP32 trace's forward direct convolutions (conv.csv, fit
 * rows: 19 shapes, the 1x1s, the strided 3x3s and the 7x7 stem; time-weighted per step); its data
 * and filter gradients are the check rows (docs/kernel-cost.md). Its nonfused Winograd GEMMs are
 * volta_sgemm kernels and do not take it. */
#define MDL_CUDNN_SIMT_CONV_EFF 0.737

/* GPU time a tensor-core GEMM kernel takes beyond the roofline work and the kernel_overhead_us
 * every kernel pays: each CTA waits a DRAM round trip for its first A and B tiles before the
 * first MMA, and the kernel ends only when the epilogue's C stores have drained. Fitted to the
 * 75 fit rows of tests/data/published/xla-matmul.csv (bf16 GEMMs with k = 256, 1,024 and 4,096
 * on an SXM-class H100, XLA's matmul_perf_table_gen): 3.0 us minimises their MAPE (49.9 % ->
 * 10.4 %; 2.5 us gives 11.9 %, 3.5 us 11.7 %), and a 256^3 GEMM, with next to no work, takes
 * 5.2 us there. Check rows: its 50 other bf16 shapes (k = 512 and 2,048) go 50.4 -> 9.3 %, and
 * the same table's 125 bf16 shapes on a B200 72.7 -> 10.9 % (256^3 takes 5.0 us there). Not
 * measured on Volta, Ampere or GDDR parts (assumed the same). Two Blackwell torch.matmul fit rows
 * at 1,024^3 and 2,048^3 (microbench.csv) go 15-18 % slow with it: the default tensor curve is
 * low there (docs/kernel-cost.md). Convolutions do not take it: no row measures them. */
#define MDL_GEMM_FIXED_US 3.0

/* Resident threads per SM by compute capability (CUDA C++ Programming Guide, "Technical
 * Specifications per Compute Capability"): 1024 on 7.5, 1536 on 8.6, 8.7, 8.9 and 12.x, 2048 on
 * 7.0, 8.0, 9.0 and 10.x (and when the capability is not given). */
int mdl_threads_per_sm(const sim_gpu_desc *gpu);

/* Thread blocks of a GEMM kernel on a GPU with `slots` resident blocks: 128x128 output tiles;
 * when those do not fill one wave, 64x64 tiles; when still short and split_k, split-K (up to
 * K / 256 slices), as cuBLAS/cuDNN heuristics do to fill the GPU. Non-GEMM kernels return
 * k->blocks.
 *
 * A TF32 GEMM does not split K (mdl_kernel_cost passes split_k false): an A100 80GB Kineto trace
 * (HTA's nccl_parser_config test data, TF32 on) runs aten::mm 64x2798x4096 and aten::addmm
 * 4096x64x2798 as one 64x64 CTA per output tile, 44 and 64 CTAs on 108 SMs, at 10.7 and 15.9
 * TFLOP/s (docs/accuracy.md, Known gaps); and in XLA's H100 table, whose TF32 rows set nothing
 * here, the model's split-K rate is 16-56 % (mean by k) above what TF32 GEMMs with fewer 128x128
 * output tiles than SMs ran, where it is within 4 % of the bf16 ones. Without the split: the H100
 * TF32 check rows 37.2 -> 29.9 %, the B200's 18.1 -> 12.5 %. */
double mdl_kernel_blocks(const mdl_kernel *k, double slots, bool split_k);

/* The fraction of a row-wise kernel's re-read bytes (mdl_rows) that come from DRAM on this GPU:
 * 0 for a one-pass kernel, 1 where the catalog gives no L2 size. */
double mdl_row_miss(const mdl_kernel *k, const sim_gpu_desc *gpu);

/* "direct" or "winograd". */
const char *mdl_algo_name(mdl_algo a);

/* Full working of a kernel's time on GPU under precision p (see the top of this file); for a
 * convolution with a Winograd geometry on CUDA cores, the faster of it and its Winograd kernels
 * (mdl_wino). */
void mdl_kernel_cost(const mdl_kernel *k, const sim_gpu_desc *gpu, sim_precision p, mdl_cost *out);
/* Just the time, ns (>= 1 for a kernel; 0 for records that are not kernels). */
int64_t mdl_kernel_time_ns(const mdl_kernel *k, const sim_gpu_desc *gpu, sim_precision p);

/* Peak FLOP/s a GEMM-class or SIMT kernel gets under precision p, and whether that is a
 * tensor-core rate: the datasheet rate at the clock the card holds (gpu->clock_factor). Encodes
 * PyTorch's defaults: cuDNN convolutions use TF32 in fp32 (torch.backends.cudnn.allow_tf32 = True),
 * cuBLAS matmuls do not (torch.backends.cuda.matmul. allow_tf32 = False since PyTorch 1.12); tf32
 * precision turns both on. */
double mdl_peak_flops(const sim_gpu_desc *gpu, sim_precision p, mdl_math math, int *tensor);

/* Whether cuDNN runs convolutions on tensor cores on this GPU under precision p (half precision
 * where the part has the unit, TF32 on Ampere and later under PyTorch's default allow_tf32).
 * gpu NULL (no GPU named): in every precision but fp32, whose TF32 depends on the GPU. */
bool mdl_conv_tensor_cores(const sim_gpu_desc *gpu, sim_precision p);

#endif
