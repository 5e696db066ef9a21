/* expand.c — forward, backward and optimizer kernels of a training step (see expand.h).
 * One emitter per layer kind and direction; a context carries the batch, the byte sizes of the
 * run's types and the dispatch costs, so every kernel is one push() with FLOPs, bytes, blocks
 * and the CPU cost that precedes its launch. */
#include "models/expand.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CPU dispatch costs on the reference core, one figure per op class, fitted to the PyTorch 2.x
 * DDP ResNet-50 trace on a V100-SXM2 (tests/data/validation-traces, #3 hta/ns_resolution_trace:
 * no shapes, no stacks, the lightest profiler settings of the five) with `epochsim trace dispatch`
 * (traces/dispatch.c): the median start-to-start interval of the class's ops on their thread,
 * ops whose launch blocked on a full launch queue left out.
 *   class             trace #3 p50   - profiler   = figure    check on #5 (recsys, A100)
 *   gemm module          61.2 us      3.5 us       57.7 us     63.0 us measured, -3 %
 *   norm module          67.2         3.5          63.7        52.0 (layer_norm), +29 %
 *   elem module          29.8         3.5          26.3        27.5, +8 %
 *   Python tensor op     23.6         3.5          20.1        24.5, -4 %
 *   bwd gemm node        92.5         3.5          89.0       133.0 (AddmmBackward0), -30 %
 *   bwd norm node        55.2         3.5          51.7        74.0 (LayerNorm), -25 %
 *   other bwd node       23.1         3.5          19.6        16.0, +44 %
 *   AccumulateGrad       22.1         3.5          18.6        25.0, -12 %
 *   cudaLaunchKernel      5.2         -             5.2         6.0, -13 %
 *   foreach call        134.8         3.5         131.3        (no other foreach trace)
 *   SGD per parameter    15.6         -            15.6        (#5 runs FusedAdam: 15.3 us,
 *                                                              fitted there as Adam's figure)
 * Checks compare figure + 3.5 us with #5's p50; per step the classes add up to forward +2 % and
 * backward -14 % of #5's (tests/traces/test_dispatch.c). The profiler adds ~0.5 us per
 * recorded CPU event (the gap between back-to-back C++ copy_ ops in #3's DDP buffer broadcast)
 * and #3 records ~7.4 CPU events per top-level op: 3.5 us. The host CPUs of #3 and #5 are not
 * recorded (Meta hosts); both are taken at the reference core's speed, a +-15 % uncertainty.
 * autocast_cast_ns, one autocast cast (Tensor.to in C++: an allocation, a copy kernel, the cast
 * cache's entry; no trace here runs AMP), is fitted on DeepLearningExamples' V100 16GB inference
 * latencies at batch 1 (ResNet-50 v1.5 README at 291f0d02, NGC 21.03, DGX-1 Xeon E5-2698 v4 at
 * 0.98 of the reference core; fit rows dle-rn50-inf-v100-16g-{ampfp16,fp32}-b1), both runs bound
 * by the forward's dispatch: AMP 12.78 ms against FP32 10.37 ms, 2.41 ms for ResNet-50's 56 casts
 * (53 convolution weights, the fc weight and bias, the input) where a 12.25 us cast gave 0.70 ms:
 * 12.25 + (2.41 - 0.70) / 56 x 0.98 = 42.2 us. Checked on the same tables' ResNeXt-101 and
 * SE-ResNeXt-101 pairs (tests/models/test_expand.c) and, for its size, by sglang-omni#2262: 3,220
 * casts per call cost 73 ms on an RTX 4090 D host under PyTorch 2.x, 22.7 us each on a faster core.
 * Not measured in any trace and kept as estimates: aten_op_ns (nll_loss, a slice copy), view_op_ns,
 * opt_loop_op_ns (no trace runs a for-loop optimizer under a modern profiler; #1/#2's SGD loop,
 * 37-44 us per op under the 2021 profiler with stacks that puts their forward Python ops at
 * 87-93 us, suggests ~10 us), zero_grad, checkpointing, step overhead, sync. graph_launch_ns:
 * cudaGraphLaunch of a straight-line graph ~2.5 us (NVIDIA, CUDA 12.6 notes) plus the Python
 * replay call; the eager/graph crossover it gives is checked against the PyTorch blog's Mask
 * R-CNN backbone measurement in tests/models/test_expand.c. docs/accuracy.md has the table. */
static const mdl_dispatch dispatch_default = {
    .gemm_module_ns = 57700,
    .norm_module_ns = 63700,
    .elem_module_ns = 26300,
    .py_op_ns = 20100,
    .aten_op_ns = 12250,
    .autocast_cast_ns = 42200,
    .extra_launch_ns = 5200,
    .bwd_gemm_ns = 89000,
    .bwd_norm_ns = 51700,
    .bwd_op_ns = 19600,
    .accumulate_grad_ns = 18600,
    .view_op_ns = 7350,
    .foreach_op_ns = 131300,
    .opt_loop_op_ns = 24500,
    .opt_param_sgd_ns = 15600,
    .opt_param_adam_ns = 15300,
    .zero_grad_param_ns = 980,
    .ckpt_segment_ns = 98000,
    .step_overhead_ns = 98000,
    .graph_launch_ns = 19600,
    .sync_ns = 24500,
};

const mdl_dispatch *mdl_dispatch_default(void)
{
    return &dispatch_default;
}

/* PyTorch's multi_tensor_apply (aten/src/ATen/native/cuda/MultiTensorApply.cuh): chunks of
 * 65536 elements, one block per chunk, a launch when 320 blocks or depth_to_max_tensors tensors
 * are queued. */
#define MTA_CHUNK 65536.0
#define MTA_MAX_BLOCKS 320
static const int mta_max_tensors[5] = {110, 64, 48, 36, 30};

/* PyTorch's vectorized elementwise kernels: 128 threads x 4 elements per block. */
#define ELEMS_PER_BLOCK 512.0
/* Layers from a squeeze-and-excitation's pool to its scale: pool, two 1x1 convolutions with
 * their activations, the multiply (mdl_addcmul's and EfficientNet's SE blocks take six). */
#define SE_MAX_LAYERS 8

static const char *const phase_names[MDL_PH_COUNT] = {
    [MDL_PH_STEP] = "step",    [MDL_PH_FWD] = "forward",         [MDL_PH_LOSS] = "loss",
    [MDL_PH_BWD] = "backward", [MDL_PH_RECOMPUTE] = "recompute", [MDL_PH_OPT] = "optimizer",
};

const char *mdl_phase_name(mdl_phase p)
{
    return (unsigned)p < MDL_PH_COUNT ? phase_names[p] : "?";
}

const char *const mdl_attention_names[] = {"default", "eager", "sdpa", NULL};
const char *const mdl_memory_format_names[] = {"contiguous", "channels_last", NULL};
const char *const mdl_grad_clip_names[] = {"none", "global", "apex", NULL};
const char *const mdl_zero_grad_names[] = {"auto", "none", "set_to_none", "zero", NULL};
const char *const mdl_fuser_names[] = {"none", "nvfuser", NULL};
const char *const mdl_pytorch_names[] = {"1.6",  "1.7", "1.8", "1.9", "1.10", "1.11", "1.12",
                                         "1.13", "2.0", "2.1", "2.2", "2.3",  "2.4",  "2.5",
                                         "2.6",  "2.7", "2.8", "2.9", NULL};

int mdl_pytorch_version(int index)
{
    int major = 0, minor = 0, n = 0;
    while (mdl_pytorch_names[n])
        n++;
    if (index < 0 || index >= n) index = n - 1;
    sscanf(mdl_pytorch_names[index], "%d.%d", &major, &minor);
    return 100 * major + minor;
}

int mdl_name_index(const char *const *names, const char *s)
{
    for (int i = 0; names[i]; i++)
        if (!strcmp(names[i], s)) return i;
    return -1;
}

static const char *const opt_names[MDL_OPT_COUNT] = {"sgd", "adam", "bertadam", "none"};
static const char *const impl_names[MDL_IMPL_COUNT] = {"foreach", "fused", "forloop"};

const char *mdl_optimizer_name(mdl_optimizer o)
{
    return (unsigned)o < MDL_OPT_COUNT ? opt_names[o] : NULL;
}

int mdl_optimizer_parse(const char *s, mdl_optimizer *out)
{
    for (int i = 0; i < MDL_OPT_COUNT; i++)
        if (!strcmp(s, opt_names[i])) {
            *out = (mdl_optimizer)i;
            return SIM_OK;
        }
    if (!strcmp(s, "adamw")) {
        *out = MDL_OPT_ADAMW;
        return SIM_OK;
    }
    return SIM_EINVAL;
}

const char *mdl_opt_impl_name(mdl_opt_impl i)
{
    return (unsigned)i < MDL_IMPL_COUNT ? impl_names[i] : NULL;
}

int mdl_opt_impl_parse(const char *s, mdl_opt_impl *out)
{
    for (int i = 0; i < MDL_IMPL_COUNT; i++)
        if (!strcmp(s, impl_names[i])) {
            *out = (mdl_opt_impl)i;
            return SIM_OK;
        }
    return SIM_EINVAL;
}

void mdl_options_defaults(mdl_options *o)
{
    memset(o, 0, sizeof *o);
    o->batch = 32;
    o->precision = SIM_PREC_FP32;
    o->optimizer = MDL_OPT_SGD;
    o->opt_impl = MDL_IMPL_FOREACH;
    o->weight_decay = true;
    o->accum_steps = 1;
    o->grad_scaler = -1;
    o->pytorch = mdl_pytorch_version(-1);
    o->ddp_bucket_mb = MDL_DDP_BUCKET_MB;
}

int mdl_zero_grad_mode(const mdl_options *o)
{
    if (o->inference) return MDL_ZG_NONE;
    if (o->zero_grad != MDL_ZG_AUTO) return o->zero_grad;
    if (o->optimizer == MDL_OPT_NONE) return MDL_ZG_NONE;
    if (mdl_master_weights(o)) return MDL_ZG_ZERO;
    return o->pytorch < 200 && o->opt_impl != MDL_IMPL_FUSED ? MDL_ZG_ZERO : MDL_ZG_SET_TO_NONE;
}

bool mdl_master_weights(const mdl_options *o)
{
    return o->precision == SIM_PREC_FP16 && o->optimizer != MDL_OPT_NONE && !o->inference;
}

double mdl_param_bytes(const mdl_options *o)
{
    return o->precision == SIM_PREC_FP16 || o->precision == SIM_PREC_BF16 ? 2 : 4;
}

double mdl_optimizer_elem_bytes(const mdl_options *o)
{
    return mdl_master_weights(o) ? 4 : mdl_param_bytes(o);
}

int mdl_options_check(const mdl_options *o, sim_err *err)
{
    if (o->batch < 1 || o->batch > 1 << 24)
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0, "batch size %d is out of range (1..%d)",
                           o->batch, 1 << 24);
    if ((unsigned)o->precision >= SIM_PREC_COUNT)
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0, "invalid precision %d", o->precision);
    if ((unsigned)o->optimizer >= MDL_OPT_COUNT || (unsigned)o->opt_impl >= MDL_IMPL_COUNT ||
        (unsigned)o->grad_clip > MDL_CLIP_APEX)
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0, "invalid optimizer");
    if ((unsigned)o->fuser > MDL_FUSER_NVFUSER)
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0, "invalid fuser %d", o->fuser);
    if ((unsigned)o->zero_grad > MDL_ZG_ZERO)
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0, "invalid zero_grad mode %d", o->zero_grad);
    if (o->accum_steps < 1 || o->accum_steps > 1024)
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                           "gradient accumulation steps %d out of range (1..1024)", o->accum_steps);
    if (o->ckpt_segments < 0 || o->ckpt_segments > 100000)
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0, "checkpoint segments %d out of range",
                           o->ckpt_segments);
    if (o->grad_scaler < -1 || o->grad_scaler > 1)
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0, "grad_scaler must be -1, 0 or 1");
    if (o->inference && (o->accum_steps > 1 || o->checkpointing || o->grad_clip != MDL_CLIP_NONE))
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                           "inference runs no backward: gradient accumulation, checkpointing and "
                           "clipping do not apply");
    if (o->optimizer == MDL_OPT_NONE && o->grad_clip != MDL_CLIP_NONE)
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                           "gradient clipping needs an optimizer step (optimizer none has none)");
    if (o->seq_mix.n < 0 || o->seq_mix.n > MDL_SEQ_MIX_MAX)
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0, "sequence mix of %d lengths", o->seq_mix.n);
    int micro = 0;
    for (int g = 0; g < o->seq_mix.n; g++) {
        if (o->seq_mix.seq[g] < 1 || o->seq_mix.micro[g] < 1)
            return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                               "sequence mix: group %d has length %d and %d micro-batches", g,
                               o->seq_mix.seq[g], o->seq_mix.micro[g]);
        micro += o->seq_mix.micro[g];
    }
    if (o->seq_mix.n && micro != o->accum_steps)
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                           "sequence mix: %d micro-batches for a step of %d", micro,
                           o->accum_steps);
    if (!(o->ddp_bucket_mb > 0 && o->ddp_bucket_mb <= MDL_DDP_BUCKET_MB_MAX))
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                           "DDP bucket size %g MiB out of range (0..%g]", o->ddp_bucket_mb,
                           MDL_DDP_BUCKET_MB_MAX);
    return SIM_OK;
}

double mdl_dtype_bytes(mdl_dtype dt, sim_precision p)
{
    bool full = p == SIM_PREC_FP32 || p == SIM_PREC_TF32;
    bool amp = p == SIM_PREC_AMP_FP16 || p == SIM_PREC_AMP_BF16;
    switch (dt) {
    case MDL_DT_ACT:
        return full ? 4 : 2;
    case MDL_DT_ACT32:
        return full || amp ? 4 : 2;
    case MDL_DT_F32:
        return 4;
    case MDL_DT_I64:
        return 8;
    case MDL_DT_BOOL:
        return 1;
    }
    return 4;
}

/* ---- emission context ---- */

typedef struct ctx {
    const mdl_net *net;
    const mdl_options *o;
    const mdl_dispatch *d;
    mdl_step *s;
    double B;     /* batch */
    double act;   /* bytes of an activation element */
    double act32; /* bytes of an ACT32 element */
    double wb;    /* bytes of a stored parameter / gradient element */
    double ob;    /* bytes of an element the optimizer steps: its state, weights and gradients
                     (4 behind fp32 master weights, else wb) */
    double cb;    /* bytes of a weight as the GEMM reads it (AMP: the half copy) */
    uint8_t vec;  /* elements per input a thread of an elementwise kernel holds in flight */
    bool amp, scaler;
    bool master;   /* mdl_master_weights: apex AMP O2 */
    int zero_grad; /* mdl_zero_grad_mode: MDL_ZG_NONE, _SET_TO_NONE or _ZERO */
    uint8_t phase;
    uint16_t micro;
    int layer;
    int oom;
} ctx;

static mdl_kernel *push(ctx *c, const char *op, uint8_t kind, uint8_t math, double flops,
                        double bytes, double blocks, int64_t dispatch_ns)
{
    mdl_step *s = c->s;
    if (c->oom) return NULL;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 256;
        mdl_kernel *k = realloc(s->k, cap * sizeof *k);
        if (!k) {
            c->oom = 1;
            return NULL;
        }
        s->k = k;
        s->cap = cap;
    }
    mdl_kernel *k = &s->k[s->n++];
    *k = (mdl_kernel){.op = op,
                      .layer = c->layer,
                      .kind = kind,
                      .phase = c->phase,
                      .math = math,
                      .micro = c->micro,
                      .flops = flops,
                      .bytes = bytes,
                      .blocks = blocks,
                      .dispatch_ns = dispatch_ns};
    return k;
}

/* A bandwidth-bound kernel writing `out` elements (block count from the output). */
static mdl_kernel *elem(ctx *c, const char *op, double out, double bytes, double flops, int64_t ns)
{
    mdl_kernel *k =
        push(c, op, SIM_OP_KERNEL, MDL_MATH_SIMT, flops, bytes, ceil(out / ELEMS_PER_BLOCK), ns);
    if (k) {
        k->vec_elems = out;
        k->vec_width = c->vec;
    }
    return k;
}

/* An elementwise kernel over a non-contiguous operand (a permuted view, a broadcast one):
 * TensorIterator cannot vectorize it and launches its legacy loop (gpu_kernel_impl in
 * aten/src/ATen/native/cuda/CUDALoops.cuh: launch_legacy_kernel<128, 2 or 4>), where each thread
 * loads one element, computes and stores it before its next element: the store may alias the
 * next load, so the loads are not hoisted. One element per operand in flight per thread, where
 * the vectorized loop holds 4 or 8 (mdl_kernel_cost's bytes-in-flight limit). */
static mdl_kernel *elem_strided(ctx *c, const char *op, double out, double bytes, double flops,
                                int64_t ns)
{
    mdl_kernel *k = elem(c, op, out, bytes, flops, ns);
    if (k) k->vec_width = 1;
    return k;
}

/* A row-wise kernel (norms, softmax, reductions): one block per row. */
static mdl_kernel *rowk(ctx *c, const char *op, double rows, double bytes, double flops, int64_t ns)
{
    return push(c, op, SIM_OP_KERNEL, MDL_MATH_SIMT, flops, bytes, rows, ns);
}

/* A row kernel built by mdl_softmax_fwd_kernel or mdl_layernorm_fwd_kernel, pushed as `op`. */
static void rowk_of(ctx *c, const char *op, const mdl_kernel *proto, int64_t ns)
{
    mdl_kernel *k = rowk(c, op, proto->blocks, proto->bytes, proto->flops, ns);
    if (k) k->rows = proto->rows;
}

/* PyTorch's softmax forward (aten/src/ATen/native/cuda/SoftMax.cu, host_softmax): rows of up to
 * 1,024 elements (and 4 KiB) go to softmax_warp_forward, which holds a row in registers and reads
 * it once; longer ones to cunn_SoftMaxForward, one block per row of the smallest power of two
 * threads at least half of min(cols / ILP, 1,024) (SoftMax_getBlockSize; ILP = 16 bytes / elt),
 * which reads the row for its max, again for the sum of exponentials, and again to write. The
 * block sizes are those NeuSight's profiles of PyTorch 2.1 record (rowwise.csv). */
mdl_kernel mdl_softmax_fwd_kernel(double rows, double cols, double elt)
{
    double n = rows * cols;
    mdl_kernel k = {.kind = SIM_OP_KERNEL,
                    .math = MDL_MATH_SIMT,
                    .flops = 5 * n,
                    .bytes = 2 * n * elt,
                    .blocks = rows};
    if (cols <= 1024 && cols * elt <= 4096) return k;
    double ilp = elt > 0 && elt < 16 ? 16 / elt : 1, half = fmin(floor(cols / ilp), 1024) / 2;
    double threads = 1;
    while (threads < half)
        threads *= 2;
    k.rows = (mdl_rows){
        .reread_bytes = 2 * n * elt, .row_bytes = cols * elt, .threads = fmax(threads, 32)};
    return k;
}

/* PyTorch's LayerNorm forward (layer_norm_kernel.cu): vectorized_layer_norm_kernel, one block of
 * 32 x 4 threads per row, computes the row's Welford statistics and then reads it again to write
 * the normalized row (the unvectorized path, RowwiseMomentsCUDAKernel then
 * LayerNormForwardCUDAKernel, reads it twice as well). */
mdl_kernel mdl_layernorm_fwd_kernel(double rows, double cols, double in, double out)
{
    double n = rows * cols;
    return (mdl_kernel){.kind = SIM_OP_KERNEL,
                        .math = MDL_MATH_SIMT,
                        .flops = 8 * n,
                        .bytes = n * (in + out) + 8 * rows,
                        .blocks = rows,
                        .rows = {.reread_bytes = n * in, .row_bytes = cols * in, .threads = 128}};
}

/* cuDNN batch norm on contiguous (NCHW) images runs its per-channel NCHW kernels, which stream
 * at most MDL_NCHW_CHANNEL_ELEMS_PER_CLK elements per clock of each SM they occupy (cost.h). In
 * training they launch one block of 512 threads per channel (grid = channels in every
 * bn_fw_tr_1C11_* and bn_bw_1C11_* launch of both shared traces), so fewer channels than SMs
 * leave SMs idle; the inference kernel's grid is in no trace here and keeps the elementwise
 * count. On channels_last tensors PyTorch picks the NHWC persistent kernels, and a 1-D batch
 * norm has no spatial layout to speak of, so neither gets the limit. */
static void nchw_channel_kernel(const ctx *c, const mdl_layer *l, mdl_kernel *k)
{
    double spatial = l->n > 0 ? c->net->tensors[l->in].elems / l->n : 0; /* per sample */
    if (!k || c->o->channels_last || !(spatial > 1)) return;
    k->chan_elems = k->bytes / c->act;
    if (!c->o->inference) k->blocks = l->n;
}

static mdl_kernel *gemm(ctx *c, const char *op, uint8_t math, double m, double n, double k,
                        double batch, double bytes, int64_t ns)
{
    mdl_kernel *g = push(c, op, SIM_OP_KERNEL, math, 2.0 * m * n * k * batch, bytes, 0, ns);
    if (g) {
        g->gemm_m = m;
        g->gemm_n = n;
        g->gemm_k = k;
        g->gemm_batch = batch;
    }
    return g;
}

static void cpu(ctx *c, const char *op, int64_t ns)
{
    if (ns > 0) push(c, op, SIM_OP_CPU, MDL_MATH_NONE, 0, 0, 0, ns);
}

static double tbytes(const ctx *c, int t)
{
    const mdl_tensor *x = &c->net->tensors[t];
    return mdl_dtype_bytes((mdl_dtype)x->dtype, c->o->precision);
}

static double telems(const ctx *c, int t)
{
    return c->net->tensors[t].elems;
}

/* Bytes of tensor t over the batch. */
static double batch_bytes(const ctx *c, int t)
{
    return c->B * telems(c, t) * tbytes(c, t);
}

/* autocast casts n elements of an input, reading and writing bytes_per_elem between them. */
static void input_cast(ctx *c, double n, double bytes_per_elem)
{
    elem(c, "autocast_input_cast", n, n * bytes_per_elem, 0, c->d->autocast_cast_ns);
}

/* Under autocast a GEMM casts an fp32 (ACT32) input to half precision. */
static bool casts_input(const ctx *c, const mdl_layer *l)
{
    return c->amp && c->net->tensors[l->in].dtype == MDL_DT_ACT32;
}

/* Under autocast each weight tensor of a GEMM layer is cast once per forward (the cast cache
 * serves later uses of the same leaf within the autocast region). */
static bool casts_weights(const ctx *c, const mdl_layer *l)
{
    if (!c->amp) return false;
    if (l->shares < 0) return true;
    int kind = c->net->layers[l->shares].kind;
    return kind != MDL_L_CONV && kind != MDL_L_LINEAR;
}

static int conv_cin(const mdl_layer *l)
{
    return (int)(l->k / ((int64_t)l->kh * l->kw)) * l->groups;
}

static bool depthwise(const mdl_layer *l)
{
    return l->groups > 1 && l->groups == conv_cin(l) && l->n == conv_cin(l);
}

/* How cuDNN runs a convolution's passes. A grouped one that is not depthwise (ResNeXt's 3x3s:
 * 32 or 64 groups of 4 to 64 channels) goes to cuDNN's grouped direct kernel,
 * cudnn::cnn::conv2d_grouped_direct_kernel, on the CUDA cores at any precision: an nsys profile
 * of a ResNeXt grouped 3x3 in fp16 on an H200 (PyTorch 2.9) shows that kernel and the bias add,
 * no tensor-core implicit GEMM (tile-ai/TileOPs#1568, 0.72 TFLOP/s there). It is priced like
 * cuDNN's other CUDA-core convolution kernels (cost.h, MDL_CUDNN_SIMT_CONV_EFF); its FLOPs are
 * the grouped ones. The NCHW layout transposes stay (nchw_transposes): that profile does not say
 * the layout, and without them timm's NCHW ResNeXt rows run faster than measured. Every other
 * convolution is an implicit GEMM, on tensor cores where the precision has them. */
static uint8_t conv_math(const mdl_layer *l)
{
    return l->groups > 1 && !depthwise(l) ? MDL_MATH_CONV_DIRECT : MDL_MATH_CONV;
}

/* PyTorch's check_cudnn_depthwise_workload (aten/src/ATen/native/Convolution.cpp, from
 * pytorch#22302, PyTorch 1.2; kept for cuDNN before 8.2): the shapes of a 3x3 or 1x1 fp16 NCHW
 * depthwise convolution whose cuDNN kernels beat PyTorch's own on a V100, by batch bs, channels
 * ch and input width w. */
static bool cudnn_dw_workload(double bs, int ch, int w, int stride)
{
    if (w < 7) return false;
    if (stride == 1) {
        if (w >= 112 || (ch >= 1024 && (w >= 56 || bs >= 32))) return true;
        if (bs >= 128) return ch >= 512 || (ch >= 64 && w >= 14) || (ch >= 32 && w >= 28);
        if (bs >= 64) return (ch >= 256 && w >= 14) || (ch >= 32 && w >= 28);
        if (bs >= 32)
            return (ch >= 256 && w >= 14) || (ch >= 128 && w >= 28) || (ch >= 32 && w >= 56);
        if (bs >= 16)
            return (ch >= 1024 && w >= 14) || (ch >= 256 && w >= 28) || (ch >= 32 && w >= 56);
        if (bs >= 8) return (ch >= 512 && w >= 28) || (ch >= 64 && w >= 56);
        return false;
    }
    if (stride != 2 || ch < 256) return false;
    if (bs >= 128) return ch >= 1024 || (ch >= 512 && w >= 14) || w >= 28;
    if (bs >= 64) return (ch >= 512 && w >= 14) || w >= 28;
    if (bs >= 32) return (ch >= 1024 && w >= 14) || w >= 28;
    if (bs >= 16) return (ch >= 512 && w >= 28) || w >= 56;
    if (bs >= 8) return (ch >= 1024 && w >= 28) || w >= 56;
    return ch >= 512 && w >= 112;
}

/* check_cudnn_depthwise_workload_with_filter, its simplified form for cuDNN 8.2 and later
 * (pytorch#58749, PyTorch 1.11): 1x1, 3x3 and 5x5 filters, every stride-1 convolution, stride 2
 * only where cuDNN's kernels won its benchmark. */
static bool cudnn_dw_workload_82(double bs, int ch, int w, int k, int stride)
{
    if ((k != 1 && k != 3 && k != 5) || w < 7) return false;
    if (stride == 1) return true;
    if (stride != 2) return false;
    if (bs == 1) return k != 1 || w <= 28;
    if (k == 1) return bs <= 16 && ch >= 128 && w <= 7;
    return ch >= 512 || (ch >= 256 && w >= 28);
}

/* Whether PyTorch runs a depthwise convolution (forward and both gradients alike) on cuDNN or on
 * its own kernels (use_cudnn_depthwise): cuDNN for channels_last, and for fp16 NCHW (the
 * autocast type under AMP; not bf16) of at least 32 channels with square filters where the
 * workload check of its release passes (cuDNN 7.6 or later, as every supported release ships:
 * 3x3 and 1x1 filters only before 1.11). */
static bool cudnn_depthwise(const ctx *c, const mdl_layer *l)
{
    if (c->o->channels_last) return true;
    sim_precision p = c->o->precision;
    int ch = conv_cin(l);
    if (!(p == SIM_PREC_FP16 || p == SIM_PREC_AMP_FP16) || ch < 32 || l->kh != l->kw) return false;
    if (c->o->pytorch >= 111) return cudnn_dw_workload_82(c->B, ch, l->in_w, l->kw, l->stride);
    return (l->kw == 3 || l->kw == 1) && cudnn_dw_workload(c->B, ch, l->in_w, l->stride);
}

/* A depthwise kernel of `taps` multiply-adds: cuDNN's, or PyTorch's own, bound by its per-tap
 * instruction issue (cost.h), as cudnn_depthwise chooses for layer l. */
static void depthwise_kernel(ctx *c, const mdl_layer *l, const char *op, double taps, double flops,
                             double bytes, double out, int64_t ns)
{
    mdl_kernel *k =
        push(c, op, SIM_OP_KERNEL, MDL_MATH_SIMT, flops, bytes, ceil(out / ELEMS_PER_BLOCK), ns);
    if (k && !cudnn_depthwise(c, l)) k->native_taps = taps;
}

/* Output rows of a stride-1 3x3 convolution: the padding (0 to 2) whose output has the layer's
 * l->m pixels; 0 when none does. */
static int conv3x3_out_h(const mdl_layer *l)
{
    for (int pad = 0; pad <= 2; pad++) {
        int oh = l->in_h + 2 * pad - 2, ow = l->in_w + 2 * pad - 2;
        if (oh > 0 && ow > 0 && (double)oh * ow == l->m) return oh;
    }
    return 0;
}

/* Marks a convolution pass that cuDNN may run as nonfused Winograd F(4x4, 3x3) (mdl_wino in
 * cost.h; mdl_kernel_cost keeps the faster): a 3x3, stride-1, ungrouped convolution on fp32 NCHW
 * tensors that runs on CUDA cores. cuDNN's nonfused Winograd takes 3x3 and 5x5 filters at
 * stride 1 (cuDNN API reference, cudnnConvolutionFwdAlgo_t); in half precision and TF32 the
 * tensor-core implicit GEMM is 4-16x the CUDA-core rate and is not offered the choice. */
static void winograd_pass(const ctx *c, const mdl_layer *l, mdl_kernel *k, int pass)
{
    int oh = conv3x3_out_h(l);
    if (!k || l->kh != 3 || l->kw != 3 || l->stride != 1 || l->groups != 1 || oh == 0 ||
        c->act != 4 || c->o->conv_tensor_cores || c->o->channels_last)
        return;
    int ow = (int)(l->m / oh), th = pass == MDL_WINO_DGRAD ? l->in_h : oh;
    int tw = pass == MDL_WINO_DGRAD ? l->in_w : ow;
    int cin = conv_cin(l);
    k->wino = (mdl_wino){.pass = (uint8_t)pass,
                         .tiles = c->B * ceil(th / 4.0) * ceil(tw / 4.0),
                         .cin = cin,
                         .cout = (double)l->n,
                         .x_elems = c->B * cin * (double)l->in_h * l->in_w,
                         .y_elems = c->B * l->m * (double)l->n};
}

/* Sizes of a layer's parameter tensors (weights and biases of CONV/LINEAR; equal shares for the
 * rest, and for a layer whose weights are another's, which holds only its extra parameters).
 * Writes up to max entries, returns how many. */
static int param_sizes(const mdl_layer *l, double *out, int max)
{
    int n = 0;
    if (l->param_tensors <= 0) return 0;
    if ((l->kind == MDL_L_CONV || l->kind == MDL_L_LINEAR) && l->shares < 0) {
        int parts = (l->flags & MDL_F_SPLIT3) ? 3 : 1;
        double bias = (l->flags & MDL_F_BIAS) ? (double)l->n / parts : 0;
        double w = l->params / parts - bias;
        for (int p = 0; p < parts && n < max; p++) {
            out[n++] = w;
            if (bias > 0 && n < max) out[n++] = bias;
        }
        return n;
    }
    for (int i = 0; i < l->param_tensors && n < max; i++)
        out[n++] = l->params / l->param_tensors;
    return n;
}

/* ---- forward ---- */

static void fwd_weight_casts(ctx *c, const mdl_layer *l, double params, int tensors)
{
    if (!casts_weights(c, l)) return;
    for (int i = 0; i < tensors; i++)
        elem(c, "autocast_weight_cast", params / tensors, params / tensors * (4 + 2), 0,
             c->d->autocast_cast_ns);
}

/* cuDNN's tensor-core convolution kernels work on NHWC data. Given contiguous (NCHW) tensors, a
 * convolution that is not a plain GEMM (anything but 1x1 stride 1, which runs as a GEMM on NCHW)
 * transposes what it reads into NHWC first (nchwToNhwcKernel: the activation and the filter) and
 * what it writes back to NCHW after (nhwcToNchwKernel). Seen in the A100 TF32 DDP trace in
 * tests/data/validation-traces (hta/nccl_parser_config): every 3x3 or strided fprop, dgrad and
 * wgrad kernel follows two nchwToNhwc kernels and most precede one nhwcToNchw, 1x1 convolutions
 * run as cutlass GEMMs without them, and the transposes take 37 % of the convolutions' own GPU
 * time per step. The CUDA-core (FP32 on Volta) kernels read NCHW directly: the two V100 FP32
 * traces have no activation transposes. torch.channels_last hands cuDNN NHWC tensors and so
 * removes them. */
static bool nchw_transposes(const ctx *c, const mdl_layer *l)
{
    return !c->o->channels_last && c->o->conv_tensor_cores && !depthwise(l) &&
           (l->kh * l->kw > 1 || l->stride > 1);
}

/* One layout transpose of `elems` elements of `bytes_per` bytes inside the cuDNN call, after CPU
 * work ns (the op's own dispatch when it is the call's first kernel). */
static void transpose(ctx *c, const char *op, double elems, double bytes_per, int64_t ns)
{
    elem(c, op, elems, 2 * elems * bytes_per, 0, ns);
}

/* The two transposes before a convolution kernel: its activation operand (act_elems) and the
 * second operand op2 (the filter, or the output gradient of a weight gradient). The first
 * carries ns, the op's dispatch when it starts the call; returns what the kernel after them
 * carries. */
static int64_t transposes_in(ctx *c, double act_elems, const char *op2, double elems2,
                             double bytes2, int64_t ns)
{
    transpose(c, "nchw_to_nhwc", act_elems, c->act, ns);
    transpose(c, op2, elems2, bytes2, c->d->extra_launch_ns);
    return c->d->extra_launch_ns;
}

static void fwd_conv(ctx *c, const mdl_layer *l)
{
    int cin = conv_cin(l);
    double in = (double)cin * l->in_h * l->in_w, out = l->m * (double)l->n, B = c->B;
    bool tr = nchw_transposes(c, l);
    if (casts_input(c, l)) input_cast(c, B * in, 4 + 2);
    fwd_weight_casts(c, l, l->params, l->param_tensors);
    double bytes = c->act * B * (in + out) + c->cb * l->params;
    double flops = 2.0 * B * l->m * (double)l->n * (double)l->k;
    int64_t ns = c->d->gemm_module_ns;
    if (tr) ns = transposes_in(c, B * in, "nchw_to_nhwc_filter", l->params, c->cb, ns);
    if (depthwise(l))
        depthwise_kernel(c, l, "conv_depthwise_fwd", flops / 2, flops, bytes, B * out, ns);
    else
        winograd_pass(
            c, l,
            gemm(c, "conv_fwd", conv_math(l), B * l->m, (double)l->n, (double)l->k, 1, bytes, ns),
            MDL_WINO_FWD);
    if (tr) transpose(c, "nhwc_to_nchw", B * out, c->act, c->d->extra_launch_ns);
    if (l->flags & MDL_F_BIAS)
        elem(c, "conv_bias_add", B * out, c->act * B * out * 2, B * out, c->d->extra_launch_ns);
}

/* Whether a linear adds its bias in a kernel of its own. aten::linear folds the bias into the
 * GEMM (addmm) for 2-D input, and for contiguous 3-D input only from PyTorch 1.12 (pytorch#72728,
 * "Add fused addmm path in linear for contiguous 3D input"); before, (batch, rows, features)
 * input ran matmul and then output.add_(bias), whose broadcast bias takes the legacy loop. A layer
 * with more than one row per sample is the 3-D case (tokens of a sequence); one row per sample is
 * 2-D (a pooled vector, a classifier). NVFuser takes linear apart into the GEMM and an elementwise
 * bias add that joins the elementwise ops after it (torch/csrc/jit/codegen/cuda/parser.cpp: "During
 * fusion pass, We decompose linear into gemm + elementwise"), in any release: the q, k and v
 * projections, read next by the attention's matmuls, keep it as a kernel of their own. Hugging
 * Face's Conv1D (GPT-2) calls addmm on a 2-D view itself (MDL_F_ADDMM). */
static bool unfused_bias(const ctx *c, const mdl_layer *l)
{
    if (!(l->flags & MDL_F_BIAS) || (l->flags & MDL_F_ADDMM) || l->m <= 1) return false;
    if (c->o->fuser == MDL_FUSER_NVFUSER) return l->flags & MDL_F_SPLIT3;
    return c->o->pytorch < 112;
}

static void fwd_linear(ctx *c, const mdl_layer *l)
{
    int parts = (l->flags & MDL_F_SPLIT3) ? 3 : 1;
    double n = (double)l->n / parts, B = c->B, rows = l->m, k = (double)l->k;
    for (int p = 0; p < parts; p++) {
        if (casts_input(c, l)) input_cast(c, B * rows * k, 4 + 2);
        fwd_weight_casts(c, l, l->params / parts, l->param_tensors / parts);
        double bytes = c->act * B * rows * (k + n) + c->cb * l->params / parts;
        gemm(c, "linear_fwd", MDL_MATH_GEMM, B * rows, n, k, 1, bytes, c->d->gemm_module_ns);
        if (unfused_bias(c, l)) /* the legacy loop, unless NVFuser generates the add */
            (c->o->fuser == MDL_FUSER_NVFUSER ? elem : elem_strided)(
                c, "linear_bias_add", B * rows * n, c->act * B * rows * n * 2, B * rows * n,
                c->d->extra_launch_ns);
    }
}

/* Eager attention's torch.matmul on head-split tensors: aten's matmul folds (batch, heads) into
 * bmm's batch with expand(...).reshape(...), and the permuted (batch, heads, seq, head_dim)
 * views of the projections cannot fold, so each operand is copied to a contiguous tensor inside
 * the op (one more launch, no Python). In backward the gradients reach the projections as
 * permuted views and each linear's reshape copies them again, as does bmm's for the context's
 * gradient. NVIDIA's BERT (MDL_F_SEQFIRST) keeps activations as (seq, batch, hidden) and calls
 * torch.bmm on (batch x heads, seq, head_dim) views of them, whose matrices cuBLAS reads in place
 * (a leading dimension and a batch stride): no copies forward nor of the context's gradient,
 * but the q, k, v gradients are still copied on their reshape back to (seq, batch, hidden).
 * FlashAttention (SDPA) reads the strided views and copies nothing. */
static void head_split_copy(ctx *c, const char *op, const mdl_layer *l, int64_t dispatch_ns)
{
    double n = c->B * l->seq * l->heads * l->head_dim;
    elem_strided(c, op, n, c->act * n * 2, 0, dispatch_ns);
}

/* A dropout forward draws a random number for each of its `elems` elements
 * (MDL_PHILOX_INT_OPS_PER_ELEM in cost.h). */
static void draws_random(mdl_kernel *k, double elems)
{
    if (k) k->rng_elems = elems;
}

/* Whether a layer with these flags drops out: not in eval mode (F.dropout returns its input). */
static bool dropping(const ctx *c, unsigned flags)
{
    return (flags & MDL_F_DROPOUT) && !c->o->inference;
}

/* The bytes of the softmax's output as autograd keeps it for backward: fp32 under autocast or
 * once an fp32 mask has promoted the scores, else the activation type. */
static double score_bytes(const ctx *c, const mdl_layer *l)
{
    return (c->amp || (l->flags & MDL_F_MASK)) ? c->act32 : c->act;
}

/* Eager attention scores, one kernel per op: scale, mask add, softmax, dropout, autocast's cast
 * to the matmul's half type. */
static void eager_score_chain_fwd(ctx *c, const mdl_layer *l)
{
    double B = c->B, s = l->seq, Bh = B * l->heads, ss = Bh * s * s;
    const mdl_dispatch *D = c->d;
    if (!(l->flags & MDL_F_QSCALE))
        elem(c, "attention_scale", ss, c->act * ss * 2, ss, D->py_op_ns);
    if (l->flags & MDL_F_MASK) /* the (batch, 1, 1, seq) mask, broadcast over heads and query
                                  rows; fp16 scores + its fp32 promote to fp32 */
        elem_strided(c, "attention_mask_add", ss, ss * (c->act + c->act32) + 4 * B * s, ss,
                     D->py_op_ns);
    if (l->flags & MDL_F_CLAMP) /* torch.max with a 0-dim tensor: a broadcast operand */
        elem_strided(c, "attention_mask_clamp", ss, ss * 2 * c->act32, ss, D->py_op_ns);
    double sm = score_bytes(c, l); /* the scores from here on (autocast runs softmax in fp32) */
    mdl_kernel softmax = mdl_softmax_fwd_kernel(Bh * s, s, sm);
    rowk_of(c, "softmax_fwd", &softmax, D->py_op_ns);
    if (dropping(c, l->flags))
        draws_random(
            elem(c, "attention_dropout_fwd", ss, ss * (2 * sm + 1), 2 * ss, D->elem_module_ns), ss);
    if (c->amp) input_cast(c, ss, sm + c->act);
}

/* The same chain as one NVFuser kernel per row of scores: it reads the scores (and the mask,
 * broadcast from batch x seq), writes the probabilities in the matmul's type, and writes what
 * backward needs, the softmax output (score_bytes) and, with dropout, its one-byte mask. The
 * intermediate tensors of the eager chain never reach DRAM. */
static void fused_score_chain_fwd(ctx *c, const mdl_layer *l)
{
    double B = c->B, s = l->seq, ss = B * l->heads * s * s, keep = score_bytes(c, l);
    bool drop = dropping(c, l->flags);
    double bytes = ss * 2 * c->act + ((l->flags & MDL_F_MASK) ? 4 * B * s : 0);
    if (drop || (keep != c->act && !c->o->inference))
        bytes += ss * keep; /* else the probabilities are the output and nothing is kept */
    if (drop) bytes += ss;
    /* the eager chain's arithmetic: scale 1, mask 1, softmax 5, dropout 2 per score */
    double flops = ss * (6 + ((l->flags & MDL_F_MASK) ? 1 : 0) + (drop ? 2 : 0));
    mdl_kernel *k =
        rowk(c, "fused_attention_softmax_fwd", B * l->heads * s, bytes, flops, c->d->py_op_ns);
    if (drop) draws_random(k, ss); /* NVFuser's dropout draws Philox numbers too */
}

static void fwd_attention(ctx *c, const mdl_layer *l)
{
    double B = c->B, h = l->heads, s = l->seq, d = l->head_dim, Bh = B * h, ss = Bh * s * s;
    const mdl_dispatch *D = c->d;
    if (l->flags & MDL_F_FLASH) {
        cpu(c, "attention_views", 4 * D->view_op_ns);
        double f = (l->flags & MDL_F_CAUSAL) ? 0.5 : 1.0;
        double bytes = c->act * B * s * h * d * 4 + 4.0 * Bh * s;
        push(c, "sdpa_flash_fwd", SIM_OP_KERNEL, MDL_MATH_ATTN, 4.0 * ss * d * f, bytes,
             Bh * ceil(s / 128), D->py_op_ns);
        return;
    }
    cpu(c, "attention_views", 4 * D->view_op_ns);
    bool copies = !(l->flags & MDL_F_SEQFIRST);
    if (l->flags & MDL_F_QSCALE) /* q_proj(x) * scaling, on the (batch, seq, hidden) q */
        elem(c, "attention_q_scale", B * s * h * d, c->act * B * s * h * d * 2, B * s * h * d,
             D->py_op_ns);
    if (copies) {
        head_split_copy(c, "attention_q_contiguous", l, D->extra_launch_ns);
        head_split_copy(c, "attention_k_contiguous", l, D->extra_launch_ns);
    }
    gemm(c, "bmm_qk", MDL_MATH_GEMM, s, s, d, Bh, c->act * Bh * (2 * s * d + s * s), D->py_op_ns);
    if (c->o->fuser == MDL_FUSER_NVFUSER) {
        fused_score_chain_fwd(c, l);
    } else {
        eager_score_chain_fwd(c, l);
    }
    if (copies) head_split_copy(c, "attention_v_contiguous", l, D->extra_launch_ns);
    gemm(c, "bmm_pv", MDL_MATH_GEMM, s, d, s, Bh, c->act * Bh * (s * s + 2 * s * d), D->py_op_ns);
}

static void fwd_rmsnorm(ctx *c, const mdl_layer *l)
{
    double n = c->B * telems(c, l->out), rows = c->B * l->rows, in_b = tbytes(c, l->in);
    const mdl_dispatch *D = c->d;
    int64_t first = D->elem_module_ns;
    if (in_b != 4) {
        elem(c, "rmsnorm_to_fp32", n, n * (in_b + 4), 0, first);
        first = D->py_op_ns;
    }
    elem(c, "rmsnorm_pow", n, n * 8, n, first);
    rowk(c, "rmsnorm_mean", rows, n * 4 + rows * 4, n, D->py_op_ns);
    elem(c, "rmsnorm_add_eps", rows, rows * 8, rows, D->py_op_ns);
    elem(c, "rmsnorm_rsqrt", rows, rows * 8, rows, D->py_op_ns);
    elem(c, "rmsnorm_mul", n, n * 8 + rows * 4, n, D->py_op_ns);
    if (in_b != 4) elem(c, "rmsnorm_to_input_dtype", n, n * (4 + in_b), 0, D->py_op_ns);
    elem(c, "rmsnorm_weight_mul", n, n * 2 * in_b + l->params * c->wb, n, D->py_op_ns);
}

/* NewGELUActivation's eight ops on n elements of b bytes, in its order: a = 0.5 * x, p = x^3,
 * q = 0.044715 * p, r = x + q, t = 0.7978846 * r, u = tanh(t), v = 1 + u, y = a * v; one kernel
 * each, one operand (or two for r and y) read, one written. */
static void fwd_gelu_py(ctx *c, double n, double b)
{
    const mdl_dispatch *D = c->d;
    static const char *const ops[] = {"gelu_py_half",    "gelu_py_cube",  "gelu_py_scale_cube",
                                      "gelu_py_add",     "gelu_py_scale", "gelu_py_tanh",
                                      "gelu_py_add_one", "gelu_py_mul"};
    for (int i = 0; i < 8; i++) {
        int operands = i == 3 || i == 7 ? 2 : 1;
        elem(c, ops[i], n, n * b * (operands + 1), i == 5 ? 8 * n : n,
             i == 0 ? D->elem_module_ns : D->py_op_ns);
    }
}

/* Autograd of that chain: y = a * v gives both its factors a gradient (two kernels), tanh one
 * (tanh_backward: grad and u in), the three scalings one each, x^3 three (pow_backward: x^2, times
 * 3, times the gradient), the adds none; x's three gradients (from a, p and r) sum in two adds. */
static void bwd_gelu_py(ctx *c, double n, double b)
{
    const mdl_dispatch *D = c->d;
    static const char *const ops[] = {
        "gelu_py_mul_bwd_a",       "gelu_py_mul_bwd_v",      "gelu_py_tanh_bwd",
        "gelu_py_scale_bwd",       "gelu_py_scale_cube_bwd", "gelu_py_cube_bwd_square",
        "gelu_py_cube_bwd_times3", "gelu_py_cube_bwd_grad",  "gelu_py_half_bwd",
        "gelu_py_grad_sum",        "gelu_py_grad_sum"};
    static const int operands[] = {2, 2, 2, 1, 1, 1, 1, 2, 1, 2, 2};
    for (int i = 0; i < 11; i++)
        elem(c, ops[i], n, n * b * (operands[i] + 1), n, D->bwd_op_ns);
}

/* A layer's input and output as the emitters use them: elements over the batch, bytes each. */
typedef struct layer_io {
    double in, out, ib, ob;
} layer_io;

static layer_io io_of(const ctx *c, const mdl_layer *l)
{
    layer_io x = {0};
    if (l->in >= 0) {
        x.in = c->B * telems(c, l->in);
        x.ib = tbytes(c, l->in);
    }
    if (l->out >= 0) {
        x.out = c->B * telems(c, l->out);
        x.ob = tbytes(c, l->out);
    }
    return x;
}

static void fwd_layernorm(ctx *c, const mdl_layer *l, layer_io x)
{
    const mdl_dispatch *D = c->d;
    if (c->amp && x.ib != 4) {
        input_cast(c, x.in, x.ib + 4);
        x.ib = 4;
    }
    double rows = c->B * l->rows;
    mdl_kernel norm = mdl_layernorm_fwd_kernel(rows, x.in / rows, x.ib, x.ob);
    rowk_of(c, "layernorm_fwd", &norm, D->norm_module_ns);
}

/* Rotary embedding in Python: five elementwise ops for each of q and k. */
static void fwd_rope(ctx *c, const mdl_layer *l, layer_io x)
{
    double qk = 2 * c->B * l->rows * (double)l->n; /* q and k elements */
    static const char *const ops[5] = {"rope_neg", "rope_cat", "rope_mul_cos", "rope_mul_sin",
                                       "rope_add"};
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < 5; i++)
            elem(c, ops[i], qk / 2, qk / 2 * x.ib * 3, qk / 2, c->d->py_op_ns);
}

static void fwd_stochdepth(ctx *c, layer_io x)
{
    double B = c->B;
    elem(c, "stochastic_depth_bernoulli", B, B * 4, B, c->d->py_op_ns);
    elem(c, "stochastic_depth_div", B, B * 8, B, c->d->py_op_ns);
    /* input * noise, the (batch, 1, 1, 1) noise broadcast over each sample */
    elem_strided(c, "stochastic_depth_mul", x.out, x.in * x.ib + x.out * x.ob + B * 4, x.out,
                 c->d->py_op_ns);
}

static void fwd_loss_ce(ctx *c, const mdl_layer *l, layer_io x)
{
    const mdl_dispatch *D = c->d;
    double rows = c->B * l->rows, n = rows * l->aux;
    if (c->amp) {
        input_cast(c, n, x.ib + 4);
        x.ib = 4;
    }
    mdl_kernel log_softmax = mdl_softmax_fwd_kernel(rows, l->aux, x.ib);
    rowk_of(c, "log_softmax_fwd", &log_softmax, D->elem_module_ns);
    rowk(c, "nll_loss_fwd", 1, rows * (x.ib + 8), rows, D->aten_op_ns);
}

/* The three kernels of MISSION.md seed 003. */
static void fwd_loss_triplet(ctx *c, const mdl_layer *l, layer_io x)
{
    double B = c->B, n = B * l->aux;
    rowk(c, "triplet_distance", B, 3 * n * x.ib + 2 * B * 4, 6 * n, c->d->py_op_ns);
    elem(c, "triplet_square", 2 * B, 2 * B * 8, 2 * B, c->d->py_op_ns);
    rowk(c, "triplet_margin_compare", 1, 2 * B * 4 + 4, 3 * B, c->d->py_op_ns);
}

/* In-batch similarity losses (MDL_L_LOSS_INBATCH) compare every sample of the batch with every
 * other, so their GEMM is b x b x d and every matrix after it b x b: O(b^2) in time and memory,
 * with a kernel count that does not depend on b. The b x b matrices are MDL_PAIR_BYTES each. */
/* Batch-hard triplet loss over a batch's pairwise squared distances, as PyTorch code writes it
 * (Hermans et al. 2017, "In Defense of the Triplet Loss"; pytorch-metric-learning's
 * BatchHardMiner + TripletMarginLoss): dot = z @ z.T (torch.mm; the squared norms are its
 * diagonal, a view), dist = sq.unsqueeze(0) - 2 * dot + sq.unsqueeze(1), then per anchor row the
 * hardest positive (max over the label mask) and hardest negative (min), and
 * relu(d_ap - d_an + margin).mean(). Seed 003's three kernels: distance/dot, square, margin
 * compare (the masks and the mean fused into the last, as the seed counted them). */
static void fwd_inbatch_triplet(ctx *c, const mdl_layer *l, layer_io x)
{
    double B = c->B, d = l->aux, bb = B * B, pb = MDL_PAIR_BYTES;
    gemm(c, "pairwise_dot", MDL_MATH_GEMM, B, B, d, 1, 2 * B * d * x.ib + bb * pb, c->d->py_op_ns);
    elem(c, "pairwise_square", bb, 2 * bb * pb + 2 * B * pb, 3 * bb, c->d->py_op_ns);
    rowk(c, "margin_compare", B, bb * pb + 2 * B * 8 + B * pb, 2 * bb + 3 * B, c->d->py_op_ns);
}

/* InfoNCE / CLIP-style: F.cross_entropy(z1 @ z2.T / temperature, torch.arange(b)) (SimCLR's
 * NT-Xent and one direction of CLIP's symmetric loss; the arange labels cached as open_clip
 * does): the similarity GEMM, the temperature scale, then log_softmax + nll_loss over b rows of
 * b logits. */
static void fwd_inbatch_infonce(ctx *c, const mdl_layer *l, layer_io x)
{
    double B = c->B, d = l->aux, bb = B * B, pb = MDL_PAIR_BYTES;
    const mdl_dispatch *D = c->d;
    gemm(c, "similarity_logits", MDL_MATH_GEMM, B, B, d, 1, 2 * B * d * x.ib + bb * pb,
         D->py_op_ns);
    elem(c, "temperature_scale", bb, 2 * bb * pb, bb, D->py_op_ns);
    mdl_kernel log_softmax = mdl_softmax_fwd_kernel(B, B, pb);
    rowk_of(c, "log_softmax_fwd", &log_softmax, D->elem_module_ns);
    rowk(c, "nll_loss_fwd", 1, B * (pb + 8), B, D->aten_op_ns);
}

/* NVFuser runs a dropout whose output feeds the next layer's residual add as one kernel: x and
 * the residual in, the sum and the dropout mask out (backward is unchanged: the add passes its
 * gradient through, the dropout's is one kernel either way). */
static bool fused_dropout_add(const ctx *c, const mdl_layer *l)
{
    if (c->o->fuser != MDL_FUSER_NVFUSER || l->kind != MDL_L_DROPOUT || c->o->inference)
        return false;
    if (l + 1 >= c->net->layers + c->net->n_layers) return false;
    const mdl_layer *next = l + 1;
    return next->kind == MDL_L_ADD && next->in == l->out && next->in2 >= 0;
}

/* A global average pool that squeezes its input for a squeeze-and-excitation whose broadcast
 * multiply (within the next few layers) scales that same input: the input then has two
 * consumers, and in backward autograd adds their gradients in one more kernel. */
static bool squeezes_for_scale(const ctx *c, const mdl_layer *l)
{
    if (l->kind != MDL_L_AVGPOOL || l->kh > 0) return false;
    const mdl_layer *end = c->net->layers + c->net->n_layers;
    for (const mdl_layer *n = l + 1; n < end && n <= l + SE_MAX_LAYERS; n++)
        if (n->kind == MDL_L_MUL && (n->flags & MDL_F_BROADCAST) && n->in == l->in) return true;
    return false;
}

/* The broadcast multiply whose product the next layer, a torch.addcmul, adds to its residual in
 * the same kernel (mdl_addcmul). */
static const mdl_layer *addcmul_of(const ctx *c, const mdl_layer *l)
{
    if (l->kind != MDL_L_MUL || l + 1 >= c->net->layers + c->net->n_layers) return NULL;
    const mdl_layer *next = l + 1;
    return (next->flags & MDL_F_ADDCMUL) && next->in == l->out ? next : NULL;
}

/* The add that fused_dropout_add folded into the dropout before it. */
static bool fused_into_dropout(const ctx *c, const mdl_layer *l)
{
    return l > c->net->layers && fused_dropout_add(c, l - 1);
}

static void fwd_layer(ctx *c, const mdl_layer *l)
{
    const mdl_dispatch *D = c->d;
    layer_io x = io_of(c, l);
    double in = x.in, out = x.out, ib = x.ib, ob = x.ob;
    switch ((mdl_layer_kind)l->kind) {
    case MDL_L_CONV:
        fwd_conv(c, l);
        break;
    case MDL_L_LINEAR:
        fwd_linear(c, l);
        break;
    case MDL_L_BATCHNORM:
        if (c->o->inference) { /* the running statistics: one pass, in and out */
            nchw_channel_kernel(c, l,
                                elem(c, "batchnorm_inference", out, in * ib + out * ob, 2 * out,
                                     D->norm_module_ns));
            break;
        }
        /* BatchNorm2d.forward's num_batches_tracked.add_(1) in Python; its one-element kernel
         * is left out. */
        cpu(c, "batchnorm_num_batches_tracked", D->py_op_ns);
        nchw_channel_kernel(c, l,
                            rowk(c, "batchnorm_stats", ceil(in / ELEMS_PER_BLOCK), in * ib, 2 * in,
                                 D->norm_module_ns));
        nchw_channel_kernel(
            c, l, elem(c, "batchnorm_apply", out, in * ib + out * ob, 2 * out, D->extra_launch_ns));
        break;
    case MDL_L_LAYERNORM:
        fwd_layernorm(c, l, x);
        break;
    case MDL_L_RMSNORM:
        fwd_rmsnorm(c, l);
        break;
    case MDL_L_ACT:
        if (l->act == MDL_ACT_GELU_PY)
            fwd_gelu_py(c, in, ib);
        else
            elem(c, "activation_fwd", in, in * ib * 2, 8 * in, D->elem_module_ns);
        break;
    case MDL_L_MAXPOOL:
        elem(c, "maxpool_fwd", out, in * ib + out * (ob + 8), out * l->kh * l->kw,
             D->elem_module_ns);
        break;
    case MDL_L_AVGPOOL:
        if (l->kh > 0) { /* nn.AvgPool2d over windows: avg_pool2d_out_cuda_frame */
            elem(c, "avgpool_window_fwd", out, in * ib + out * ob, out * l->kh * l->kw,
                 D->elem_module_ns);
            break;
        }
        rowk(c, "avgpool_fwd", out, in * ib + out * ob, in, D->elem_module_ns);
        cpu(c, "flatten_view", D->view_op_ns);
        break;
    case MDL_L_ADD:
        if (!fused_into_dropout(c, l) && !(l->flags & MDL_F_ADDCMUL))
            elem(c, "add", out, in * (ib + tbytes(c, l->in2)) + out * ob, out, D->py_op_ns);
        break;
    case MDL_L_MUL: {
        double n2 = c->B * telems(c, l->in2), b2 = tbytes(c, l->in2);
        const mdl_layer *addc = addcmul_of(c, l);
        if (addc) /* residual + x * s[c] in one legacy-loop kernel (s is broadcast) */
            elem_strided(c, "addcmul", out,
                         in * ib + n2 * b2 + batch_bytes(c, addc->in2) + out * ob, 2 * out,
                         D->py_op_ns);
        else if (l->flags & MDL_F_BROADCAST) /* x * s[c]: s is broadcast over the image */
            elem_strided(c, "mul", out, in * ib + n2 * b2 + out * ob, out, D->py_op_ns);
        else
            elem(c, "mul", out, in * ib + n2 * b2 + out * ob, out, D->py_op_ns);
        break;
    }
    case MDL_L_EMBED:
        elem(c, "embedding_fwd", out, out * ob * 2 + in * 8, 0, D->elem_module_ns);
        break;
    case MDL_L_ATTN:
        fwd_attention(c, l);
        break;
    case MDL_L_DROPOUT:
        if (c->o->inference) { /* nn.Dropout in eval returns its input */
            cpu(c, "dropout_eval", D->view_op_ns);
            break;
        }
        if (fused_dropout_add(c, l)) {
            const mdl_layer *add = l + 1;
            double res = batch_bytes(c, add->in2);
            draws_random(elem(c, "fused_dropout_add_fwd", out,
                              in * ib + res + out * (tbytes(c, add->out) + 1), 3 * out,
                              D->elem_module_ns),
                         out);
        } else {
            draws_random(
                elem(c, "dropout_fwd", out, in * ib + out * (ob + 1), 2 * out, D->elem_module_ns),
                out);
        }
        break;
    case MDL_L_ROPE:
        fwd_rope(c, l, x);
        break;
    case MDL_L_COPY:
        if (l->flags & MDL_F_STRIDED)
            elem_strided(c, "copy", out, in * ib + out * ob, 0, D->py_op_ns);
        else
            elem(c, "copy", out, in * ib + out * ob, 0, D->py_op_ns);
        break;
    case MDL_L_CAT: /* CatArrayBatchedCopy: reads every input once, writes the output */
        elem(c, "cat", out, out * (ib + ob), 0, D->py_op_ns);
        break;
    case MDL_L_SLICE: /* a channel slice of NCHW is strided across the batch */
        elem_strided(c, "slice_contiguous", out, out * (ib + ob), 0, D->aten_op_ns);
        break;
    case MDL_L_STOCHDEPTH:
        if (c->o->inference) /* StochasticDepth in eval returns its input */
            cpu(c, "stochastic_depth_eval", D->view_op_ns);
        else
            fwd_stochdepth(c, x);
        break;
    case MDL_L_LOSS_CE:
        fwd_loss_ce(c, l, x);
        break;
    case MDL_L_LOSS_TRIPLET:
        fwd_loss_triplet(c, l, x);
        break;
    case MDL_L_LOSS_INBATCH:
        if (l->flags & MDL_F_INFONCE)
            fwd_inbatch_infonce(c, l, x);
        else
            fwd_inbatch_triplet(c, l, x);
        break;
    case MDL_L_KIND_COUNT:
        break;
    }
}

/* ---- backward ---- */

static void accumulate(ctx *c, const mdl_layer *l)
{
    const mdl_dispatch *D = c->d;
    /* Gradient of a second use of shared weights: autograd sums it into the first. */
    if (l->shares >= 0) {
        const mdl_layer *o = &c->net->layers[l->shares];
        double sz[8];
        int n = param_sizes(o, sz, 8);
        for (int i = 0; i < n; i++)
            elem(c, "grad_sum_shared", sz[i], sz[i] * 3 * c->wb, sz[i], D->bwd_op_ns);
    }
    /* AccumulateGrad: after zero_grad(set_to_none) the first micro-batch steals the gradient,
     * later ones add; a zeroed .grad, or one nothing clears, is added into by every backward.
     * apex O2 sets each half .grad to None before every backward (apex_prepare_backward), so
     * each one steals; micro-batches add up in the fp32 master gradients. */
    bool adds = !c->master && (c->micro > 0 || c->zero_grad != MDL_ZG_SET_TO_NONE);
    if (adds && l->params > 0) {
        double sz[8];
        int n = param_sizes(l, sz, 8);
        for (int i = 0; i < n; i++)
            elem(c, "accumulate_grad", sz[i], sz[i] * 3 * c->wb, sz[i], D->accumulate_grad_ns);
    } else if (l->params > 0) {
        /* The node still runs when it only steals the gradient; its copy kernel, when DDP or a
         * kept .grad makes one, is left out. */
        cpu(c, "accumulate_grad_steal", (int64_t)l->param_tensors * D->accumulate_grad_ns);
    }
}

static void bwd_weight_casts(ctx *c, const mdl_layer *l, double params, int tensors)
{
    if (!casts_weights(c, l)) return;
    for (int i = 0; i < tensors; i++)
        elem(c, "weight_grad_cast", params / tensors, params / tensors * (2 + 4), 0,
             c->d->bwd_op_ns);
}

static void bwd_conv(ctx *c, const mdl_layer *l)
{
    const mdl_dispatch *D = c->d;
    int cin = conv_cin(l);
    double B = c->B, in = (double)cin * l->in_h * l->in_w, out = l->m * (double)l->n;
    double flops = 2.0 * B * l->m * (double)l->n * (double)l->k;
    int64_t ns = D->bwd_gemm_ns;
    if (l->flags & MDL_F_BIAS) {
        rowk(c, "conv_bias_grad", (double)l->n, c->act * B * out + 4 * (double)l->n, B * out, ns);
        ns = D->extra_launch_ns;
    }
    double bytes = c->act * B * (in + out) + c->cb * l->params;
    if (depthwise(l)) {
        if (!(l->flags & MDL_F_NO_DGRAD)) {
            depthwise_kernel(c, l, "conv_depthwise_dgrad", flops / 2, flops, bytes, B * in, ns);
            ns = D->extra_launch_ns;
        }
        depthwise_kernel(c, l, "conv_depthwise_wgrad", flops / 2, flops, bytes, B * out, ns);
    } else {
        bool tr = nchw_transposes(c, l);
        if (!(l->flags & MDL_F_NO_DGRAD)) {
            double M = B * l->in_h * l->in_w;
            if (tr) ns = transposes_in(c, B * out, "nchw_to_nhwc_filter", l->params, c->cb, ns);
            winograd_pass(
                c, l,
                gemm(c, "conv_dgrad", conv_math(l), M, cin, flops / (2 * M * cin), 1, bytes, ns),
                MDL_WINO_DGRAD);
            ns = D->extra_launch_ns;
            if (tr) transpose(c, "nhwc_to_nchw", B * in, c->act, ns);
        }
        if (tr) ns = transposes_in(c, B * in, "nchw_to_nhwc", B * out, c->act, ns);
        winograd_pass(
            c, l,
            gemm(c, "conv_wgrad", conv_math(l), (double)l->n, (double)l->k, B * l->m, 1, bytes, ns),
            MDL_WINO_WGRAD);
        if (tr) transpose(c, "nhwc_to_nchw_filter", l->params, c->cb, D->extra_launch_ns);
    }
    if (casts_input(c, l)) elem(c, "input_grad_cast", B * in, B * in * (2 + 4), 0, D->bwd_op_ns);
    bwd_weight_casts(c, l, l->params, l->param_tensors);
}

static void bwd_linear(ctx *c, const mdl_layer *l)
{
    const mdl_dispatch *D = c->d;
    int parts = (l->flags & MDL_F_SPLIT3) ? 3 : 1;
    double n = (double)l->n / parts, B = c->B, rows = l->m, k = (double)l->k;
    for (int p = parts - 1; p >= 0; p--) {
        int64_t ns = D->bwd_gemm_ns;
        double w = c->cb * l->params / parts;
        if (!(l->flags & MDL_F_NO_DGRAD)) {
            gemm(c, "linear_dgrad", MDL_MATH_GEMM, B * rows, k, n, 1,
                 c->act * B * rows * (n + k) + w, ns);
            ns = D->extra_launch_ns;
        }
        gemm(c, "linear_wgrad", MDL_MATH_GEMM, n, k, B * rows, 1, c->act * B * rows * (n + k) + w,
             ns);
        if (l->flags & MDL_F_BIAS)
            rowk(c, "linear_bias_grad", n, c->act * B * rows * n + 4 * n, B * rows * n,
                 D->extra_launch_ns);
        if (casts_input(c, l))
            elem(c, "input_grad_cast", B * rows * k, B * rows * k * (2 + 4), 0, D->bwd_op_ns);
        bwd_weight_casts(c, l, l->params / parts, l->param_tensors / parts);
        /* q, k and v read one input: autograd's InputBuffer adds each later gradient of it to the
         * first, in the input's type (fp32 where autocast cast it for the GEMMs). */
        if (p < parts - 1 && !(l->flags & MDL_F_NO_DGRAD)) {
            double g = B * rows * k, gb = casts_input(c, l) ? 4 : c->act;
            elem(c, "qkv_grad_sum", g, 3 * g * gb, g, D->extra_launch_ns);
        }
    }
}

/* torch.maximum's gradient for its first operand (derivatives.yaml: where(self == other,
 * grad / 2, grad).masked_fill_(self < other, 0)) on n scores of b bytes: the two comparisons
 * with the 0-dim tensor take the legacy loop and write one byte each; the halving, the where
 * and the in-place fill are vectorized. */
static void bwd_clamp(ctx *c, double n, double b)
{
    const mdl_dispatch *D = c->d;
    elem_strided(c, "attention_clamp_bwd_eq", n, n * (b + 1), n, D->bwd_op_ns);
    elem(c, "attention_clamp_bwd_half", n, n * 2 * b, n, D->extra_launch_ns);
    elem(c, "attention_clamp_bwd_where", n, n * (1 + 3 * b), n, D->extra_launch_ns);
    elem_strided(c, "attention_clamp_bwd_lt", n, n * (b + 1), n, D->extra_launch_ns);
    elem(c, "attention_clamp_bwd_masked_fill", n, n * (1 + 2 * b), n, D->extra_launch_ns);
}

static void bwd_attention(ctx *c, const mdl_layer *l)
{
    const mdl_dispatch *D = c->d;
    double B = c->B, h = l->heads, s = l->seq, d = l->head_dim, Bh = B * h, ss = Bh * s * s;
    if (l->flags & MDL_F_FLASH) {
        double f = (l->flags & MDL_F_CAUSAL) ? 0.5 : 1.0;
        double io = c->act * B * s * h * d;
        rowk(c, "sdpa_flash_bwd_preprocess", Bh * s, 2 * io + 4 * Bh * s, 2 * Bh * s * d,
             D->bwd_op_ns);
        /* FlashAttention backward recomputes the scores: 5 matmuls vs 2 forward = 2.5x. */
        push(c, "sdpa_flash_bwd", SIM_OP_KERNEL, MDL_MATH_ATTN, 2.5 * 4.0 * ss * d * f,
             io * 8 + 4 * Bh * s * d + 8 * Bh * s, Bh * ceil(s / 128), D->extra_launch_ns);
        elem(c, "sdpa_flash_bwd_convert_dq", B * s * h * d, B * s * h * d * (4 + c->act), 0,
             D->extra_launch_ns);
        return;
    }
    /* the context's gradient, reshaped by bmm's backward (its own autograd node); torch.bmm on
     * seq-first views reads the transposed gradient in place */
    if (!(l->flags & MDL_F_SEQFIRST))
        head_split_copy(c, "attention_context_grad_contiguous", l, D->bwd_op_ns);
    gemm(c, "bmm_pv_dgrad_p", MDL_MATH_GEMM, s, s, d, Bh, c->act * Bh * (2 * s * d + s * s),
         D->bwd_gemm_ns);
    gemm(c, "bmm_pv_dgrad_v", MDL_MATH_GEMM, s, d, s, Bh, c->act * Bh * (s * s + 2 * s * d),
         D->extra_launch_ns);
    double sm = score_bytes(c, l);
    bool drop = (l->flags & MDL_F_DROPOUT) != 0;
    if (c->o->fuser == MDL_FUSER_NVFUSER) {
        /* one kernel: the probabilities' gradient, the kept softmax output and dropout mask in,
         * the scores' gradient out */
        rowk(c, "fused_attention_softmax_bwd", Bh * s, ss * (2 * c->act + sm + (drop ? 1 : 0)),
             (drop ? 5 : 4) * ss, D->bwd_op_ns);
    } else {
        if (c->amp) elem(c, "input_grad_cast", ss, ss * (c->act + sm), 0, D->bwd_op_ns);
        if (drop) elem(c, "attention_dropout_bwd", ss, ss * (2 * sm + 1), ss, D->bwd_op_ns);
        rowk(c, "softmax_bwd", Bh * s, ss * 3 * sm, 3 * ss, D->bwd_op_ns);
        if (l->flags & MDL_F_CLAMP) bwd_clamp(c, ss, sm);
        if (!(l->flags & MDL_F_QSCALE))
            elem(c, "attention_scale_bwd", ss, ss * (sm + c->act), ss, D->bwd_op_ns);
    }
    gemm(c, "bmm_qk_dgrad_q", MDL_MATH_GEMM, s, d, s, Bh, c->act * Bh * (s * s + 2 * s * d),
         D->bwd_gemm_ns);
    gemm(c, "bmm_qk_dgrad_k", MDL_MATH_GEMM, s, d, s, Bh, c->act * Bh * (s * s + 2 * s * d),
         D->extra_launch_ns);
    head_split_copy(c, "attention_q_grad_contiguous", l, D->extra_launch_ns);
    head_split_copy(c, "attention_k_grad_contiguous", l, D->extra_launch_ns);
    head_split_copy(c, "attention_v_grad_contiguous", l, D->extra_launch_ns);
    if (l->flags & MDL_F_QSCALE)
        elem(c, "attention_q_scale_bwd", B * s * h * d, c->act * B * s * h * d * 2, B * s * h * d,
             D->bwd_op_ns);
}

/* The gradient sums of a concatenation whose inputs a later one read too: one add per input, the
 * first of l->aux elements per sample, the others splitting the rest alike (DenseNet's layers
 * each add growth-rate channels). */
static void bwd_cat_accumulate(ctx *c, const mdl_layer *l, double out, double ob)
{
    double first = c->B * l->aux, rest = l->n > 1 ? (out - first) / (double)(l->n - 1) : 0;
    for (int64_t i = 0; i < l->n; i++) {
        double e = i == 0 ? first : rest;
        elem_strided(c, "grad_accumulate", e, 3 * e * ob, e, c->d->aten_op_ns);
    }
}

static void bwd_layernorm(ctx *c, const mdl_layer *l, layer_io x)
{
    const mdl_dispatch *D = c->d;
    double rows = c->B * l->rows;
    bool cast = c->amp && x.ib != 4;
    double lb = cast ? 4 : x.ib;
    rowk(c, "layernorm_bwd_input", rows, x.in * (lb + 2 * x.ob) + 8 * rows, 8 * x.in,
         D->bwd_norm_ns);
    rowk(c, "layernorm_bwd_params", ceil(x.in / ELEMS_PER_BLOCK), x.in * (lb + x.ob), 4 * x.in,
         D->extra_launch_ns);
    if (cast) elem(c, "input_grad_cast", x.in, x.in * (4 + x.ib), 0, D->bwd_op_ns);
}

/* RMSNorm written in Python: autograd runs one node per elementwise op of its forward. */
static void bwd_rmsnorm(ctx *c, layer_io x)
{
    static const char *const ops[8] = {"rmsnorm_bwd_weight_mul", "rmsnorm_bwd_weight_grad",
                                       "rmsnorm_bwd_mul_x",      "rmsnorm_bwd_mul_rstd",
                                       "rmsnorm_bwd_rsqrt",      "rmsnorm_bwd_mean",
                                       "rmsnorm_bwd_pow",        "rmsnorm_bwd_sum"};
    for (int i = 0; i < 8; i++)
        elem(c, ops[i], x.in, x.in * 3 * 4, 2 * x.in, c->d->bwd_op_ns);
}

static void bwd_mul(ctx *c, const mdl_layer *l, layer_io x)
{
    const mdl_dispatch *D = c->d;
    double n2 = c->B * telems(c, l->in2), b2 = tbytes(c, l->in2);
    double in = x.in, out = x.out, ib = x.ib, ob = x.ob;
    if (l->flags & MDL_F_BROADCAST) {
        elem_strided(c, "mul_bwd_a", in, out * ob + n2 * b2 + in * ib, in, D->bwd_op_ns);
        elem(c, "mul_bwd_b", out, out * ob + in * ib + out * 4, out, D->extra_launch_ns);
        rowk(c, "mul_bwd_b_reduce", n2, out * 4 + n2 * b2, out, D->extra_launch_ns);
    } else {
        elem(c, "mul_bwd_a", in, out * ob + n2 * b2 + in * ib, in, D->bwd_op_ns);
        elem(c, "mul_bwd_b", n2, out * ob + in * ib + n2 * b2, n2, D->extra_launch_ns);
    }
}

static void bwd_embed(ctx *c, const mdl_layer *l, layer_io x)
{
    const mdl_dispatch *D = c->d;
    double vocab = l->aux, dim = (double)l->n, rows = c->B * l->rows;
    elem(c, "embedding_bwd_zero", vocab * dim, vocab * dim * c->wb, 0, D->bwd_op_ns);
    elem(c, "embedding_bwd_sort_keys", rows, rows * 8 * 4, 0, D->extra_launch_ns);
    elem(c, "embedding_bwd_sort_values", rows, rows * 8 * 4, 0, D->extra_launch_ns);
    elem(c, "embedding_bwd_segments", rows, rows * 8 * 3, 0, D->extra_launch_ns);
    elem(c, "embedding_bwd_accumulate", rows * dim, rows * dim * (x.ob + c->wb), rows * dim,
         D->extra_launch_ns);
}

/* Gradients of parameters a layer owns beside its input (a learned scale, a class token). */
static void param_grad_reduce(ctx *c, const mdl_layer *l, layer_io x, int64_t ns)
{
    if (l->params > 0)
        rowk(c, "param_grad_reduce", ceil(l->params / ELEMS_PER_BLOCK),
             x.out * x.ob + l->params * c->wb, x.out, ns);
}

static void bwd_loss_ce(ctx *c, const mdl_layer *l, layer_io x)
{
    const mdl_dispatch *D = c->d;
    double rows = c->B * l->rows, n = rows * l->aux;
    double lb = c->amp ? 4 : x.ib;
    elem(c, "nll_loss_bwd_zero", n, n * lb, 0, D->bwd_op_ns);
    elem(c, "nll_loss_bwd_scatter", rows, rows * (8 + lb), 0, D->extra_launch_ns);
    rowk(c, "log_softmax_bwd", rows, n * 3 * lb, 3 * n, D->bwd_op_ns);
    if (c->amp) elem(c, "input_grad_cast", n, n * (4 + x.ib), 0, D->bwd_op_ns);
}

static void bwd_loss_triplet(ctx *c, const mdl_layer *l, layer_io x)
{
    const mdl_dispatch *D = c->d;
    double B = c->B, n = B * l->aux, ib = x.ib;
    elem(c, "triplet_margin_bwd", B, B * 12, B, D->bwd_op_ns);
    elem(c, "triplet_square_bwd", 2 * B, 2 * B * 12, 2 * B, D->bwd_op_ns);
    elem(c, "triplet_distance_bwd_ap", 2 * n, 2 * n * ib * 2 + 2 * B * 4, 4 * n, D->bwd_op_ns);
    elem(c, "triplet_distance_bwd_an", 2 * n, 2 * n * ib * 2 + 2 * B * 4, 4 * n, D->bwd_op_ns);
}

/* Autograd of the batch-hard triplet loss: the margin's gradient scattered into a b x b matrix
 * at the hardest pairs (relu, max/min and mean backward), the square's (-2 x, and the row and
 * column sums into the diagonal the norms came from), then mm backward: grad @ z and
 * grad.T @ z, summed because both operands are z. */
static void bwd_inbatch_triplet(ctx *c, const mdl_layer *l, layer_io x)
{
    const mdl_dispatch *D = c->d;
    double B = c->B, d = l->aux, bb = B * B, pb = MDL_PAIR_BYTES, n = B * d;
    elem(c, "margin_compare_bwd", bb, bb * pb + 2 * B * 8, bb, D->bwd_op_ns);
    elem(c, "pairwise_square_bwd", bb, 2 * bb * pb, bb, D->bwd_op_ns);
    rowk(c, "pairwise_norm_bwd", B, 2 * bb * pb + B * pb, 2 * bb, D->extra_launch_ns);
    gemm(c, "pairwise_dot_dgrad", MDL_MATH_GEMM, B, d, B, 1, bb * pb + 2 * n * x.ib,
         D->bwd_gemm_ns);
    gemm(c, "pairwise_dot_dgrad_t", MDL_MATH_GEMM, B, d, B, 1, bb * pb + 2 * n * x.ib,
         D->extra_launch_ns);
    elem(c, "grad_sum_fork", n, 3 * n * x.ib, n, D->bwd_op_ns);
}

/* Autograd of InfoNCE: nll_loss backward (zero + scatter), log_softmax backward, the
 * temperature's, then mm backward: grad @ z2 for z1 and grad.T @ z1 for z2. */
static void bwd_inbatch_infonce(ctx *c, const mdl_layer *l, layer_io x)
{
    const mdl_dispatch *D = c->d;
    double B = c->B, d = l->aux, bb = B * B, pb = MDL_PAIR_BYTES, n = B * d;
    elem(c, "nll_loss_bwd_zero", bb, bb * pb, 0, D->bwd_op_ns);
    elem(c, "nll_loss_bwd_scatter", B, B * (8 + pb), 0, D->extra_launch_ns);
    rowk(c, "log_softmax_bwd", B, 3 * bb * pb, 3 * bb, D->bwd_op_ns);
    elem(c, "temperature_scale_bwd", bb, 2 * bb * pb, bb, D->bwd_op_ns);
    gemm(c, "similarity_dgrad_z1", MDL_MATH_GEMM, B, d, B, 1, bb * pb + 2 * n * x.ib,
         D->bwd_gemm_ns);
    gemm(c, "similarity_dgrad_z2", MDL_MATH_GEMM, B, d, B, 1, bb * pb + 2 * n * x.ib,
         D->extra_launch_ns);
}

static void bwd_layer(ctx *c, const mdl_layer *l)
{
    const mdl_dispatch *D = c->d;
    layer_io x = io_of(c, l);
    double in = x.in, out = x.out, ib = x.ib, ob = x.ob;
    switch ((mdl_layer_kind)l->kind) {
    case MDL_L_CONV:
        bwd_conv(c, l);
        break;
    case MDL_L_LINEAR:
        bwd_linear(c, l);
        break;
    case MDL_L_BATCHNORM:
        nchw_channel_kernel(c, l,
                            rowk(c, "batchnorm_bwd_reduce", ceil(in / ELEMS_PER_BLOCK),
                                 in * (ib + ob), 3 * in, D->bwd_norm_ns));
        nchw_channel_kernel(
            c, l,
            elem(c, "batchnorm_bwd_apply", in, in * ib + out * ob * 2, 4 * in, D->extra_launch_ns));
        break;
    case MDL_L_LAYERNORM:
        bwd_layernorm(c, l, x);
        break;
    case MDL_L_RMSNORM:
        bwd_rmsnorm(c, x);
        break;
    case MDL_L_ACT:
        if (l->act == MDL_ACT_GELU_PY)
            bwd_gelu_py(c, in, ib);
        else
            elem(c, "activation_bwd", in, in * (ib * 2 + ob), 8 * in, D->bwd_op_ns);
        break;
    case MDL_L_MAXPOOL:
        elem(c, "maxpool_bwd_zero", in, in * ib, 0, D->bwd_op_ns);
        elem(c, "maxpool_bwd_scatter", out, out * (ob + 8) + out * ib, out, D->extra_launch_ns);
        break;
    case MDL_L_AVGPOOL:
        elem(c, l->kh > 0 ? "avgpool_window_bwd" : "avgpool_bwd", in, in * ib + out * ob, in,
             D->bwd_op_ns);
        if (squeezes_for_scale(c, l)) /* autograd's InputBuffer adds the scale's gradient */
            elem(c, "grad_sum_fork", in, 3 * in * ib, in, D->extra_launch_ns);
        break;
    case MDL_L_ADD:
        /* The two gradients of the forked input meet here; under addcmul the autograd node is
         * the multiply's (AddcmulBackward0), which passes the residual its gradient as it is. */
        elem(c, "grad_sum_fork", out, out * ob * 3, out,
             (l->flags & MDL_F_ADDCMUL) ? D->extra_launch_ns : D->bwd_op_ns);
        param_grad_reduce(c, l, x, D->extra_launch_ns);
        break;
    case MDL_L_MUL:
        bwd_mul(c, l, x);
        break;
    case MDL_L_EMBED:
        bwd_embed(c, l, x);
        break;
    case MDL_L_ATTN:
        bwd_attention(c, l);
        break;
    case MDL_L_DROPOUT:
        elem(c, "dropout_bwd", in, out * (ob + 1) + in * ib, in, D->bwd_op_ns);
        break;
    case MDL_L_ROPE: {
        double qk = c->B * l->rows * (double)l->n;
        for (int i = 0; i < 10; i++)
            elem(c, "rope_bwd", qk, qk * ib * 3, qk, D->bwd_op_ns);
        break;
    }
    case MDL_L_COPY:
        /* cat/permute backward are views of the gradient; only extra parameters cost. */
        param_grad_reduce(c, l, x, D->bwd_op_ns);
        break;
    case MDL_L_CAT:
        /* CatBackward hands each input a narrowed view of the gradient; an input that already
         * holds a gradient adds the view into it (autograd's InputBuffer), through the legacy
         * loop since the view is strided across the batch. */
        if (l->flags & MDL_F_ACCUM) bwd_cat_accumulate(c, l, out, ob);
        break;
    case MDL_L_SLICE: /* SplitBackward: torch.cat of the parts' gradients */
        elem(c, "split_bwd_cat", in, 2 * in * ib, 0, D->bwd_op_ns);
        break;
    case MDL_L_STOCHDEPTH:
        elem_strided(c, "stochastic_depth_bwd", in, in * 2 * ib + c->B * 4, in, D->bwd_op_ns);
        break;
    case MDL_L_LOSS_CE:
        bwd_loss_ce(c, l, x);
        break;
    case MDL_L_LOSS_TRIPLET:
        bwd_loss_triplet(c, l, x);
        break;
    case MDL_L_LOSS_INBATCH:
        if (l->flags & MDL_F_INFONCE)
            bwd_inbatch_infonce(c, l, x);
        else
            bwd_inbatch_triplet(c, l, x);
        break;
    case MDL_L_KIND_COUNT:
        break;
    }
    accumulate(c, l);
}

/* ---- checkpoint segments ---- */

/* Segment of each block (consecutive blocks, ceil(nb / segments) per segment). */
static int segment_of(int block, int n_blocks, int segments)
{
    int per = (n_blocks + segments - 1) / segments;
    return block / per;
}

static int resolve_segments(const mdl_net *net, const mdl_options *o)
{
    if (!o->checkpointing || net->n_blocks == 0) return 0;
    int seg = o->ckpt_segments > 0 ? o->ckpt_segments : (int)ceil(sqrt((double)net->n_blocks));
    return seg > net->n_blocks ? net->n_blocks : seg;
}

static void micro_step(ctx *c, int segments)
{
    const mdl_net *net = c->net;
    const mdl_dispatch *D = c->d;
    c->phase = MDL_PH_FWD;
    int last_seg = -1;
    for (int i = 0; i < net->n_layers; i++) {
        const mdl_layer *l = &net->layers[i];
        c->layer = i;
        bool loss = l->kind == MDL_L_LOSS_CE || l->kind == MDL_L_LOSS_TRIPLET ||
                    l->kind == MDL_L_LOSS_INBATCH;
        if (loss && c->o->inference) continue; /* the model's output is the logits */
        if (loss) c->phase = MDL_PH_LOSS;
        if (segments && l->block >= 0) {
            int sg = segment_of(l->block, net->n_blocks, segments);
            if (sg != last_seg) cpu(c, "checkpoint_enter", D->ckpt_segment_ns / 2);
            last_seg = sg;
        }
        fwd_layer(c, l);
    }
    c->layer = -1;
    if (c->o->inference) return; /* no backward under torch.no_grad() */
    c->phase = MDL_PH_LOSS;
    if (c->scaler) elem(c, "grad_scaler_scale_loss", 1, 8, 1, D->py_op_ns);
    if (c->o->accum_steps > 1) elem(c, "loss_div_accum_steps", 1, 8, 1, D->py_op_ns);
    /* apex's scale_loss enters with _prepare_amp_backward: a Python loop setting each half
     * parameter's .grad to None */
    if (c->master)
        cpu(c, "apex_prepare_backward", (int64_t)c->s->param_tensors * D->zero_grad_param_ns);
    c->phase = MDL_PH_BWD;
    elem(c, "backward_seed_ones", 1, 4, 0, D->py_op_ns);
    int cur_seg = -1;
    for (int i = net->n_layers - 1; i >= 0; i--) {
        const mdl_layer *l = &net->layers[i];
        if (segments && l->block >= 0) {
            int sg = segment_of(l->block, net->n_blocks, segments);
            if (sg != cur_seg) { /* entering a checkpointed segment from its end: re-run it */
                cur_seg = sg;
                c->phase = MDL_PH_RECOMPUTE;
                cpu(c, "checkpoint_recompute", D->ckpt_segment_ns / 2);
                int first = i;
                while (first > 0 && net->layers[first - 1].block >= 0 &&
                       segment_of(net->layers[first - 1].block, net->n_blocks, segments) == sg)
                    first--;
                for (int j = first; j <= i; j++) {
                    c->layer = j;
                    fwd_layer(c, &net->layers[j]);
                }
                c->phase = MDL_PH_BWD;
            }
        }
        c->layer = i;
        bwd_layer(c, l);
    }
    c->layer = -1;
}

/* ---- optimizer ---- */

typedef struct plist {
    double *size;
    bool *decays; /* BertAdam's groups: weights decay; biases and norm parameters do not */
    int n;
    double total;
} plist;

/* zero_grad() before the step: set_to_none is a Python loop that only drops references; zero
 * (PyTorch before 2.0) detaches each .grad (requires_grad_(False), a call without a kernel) and
 * calls zero_() on it, one fill kernel per parameter tensor. */
static void zero_grad(ctx *c, const plist *p, int tensors)
{
    if (c->zero_grad == MDL_ZG_SET_TO_NONE) {
        cpu(c, "zero_grad", (int64_t)tensors * c->d->zero_grad_param_ns);
        return;
    }
    if (c->zero_grad != MDL_ZG_ZERO) return;
    for (int i = 0; i < p->n; i++)
        elem(c, "zero_grad_fill", p->size[i], p->size[i] * c->wb, 0,
             c->d->view_op_ns + c->d->py_op_ns);
}

/* Whether parameter tensor j of layer l is in BertAdam's decay group: run_squad.py and
 * run_pretraining.py put every name holding 'bias', 'LayerNorm.bias' or 'LayerNorm.weight' in
 * the no-decay group, so a convolution's or linear layer's weight and an embedding table decay,
 * its bias and a normalisation layer's scale and shift do not. param_sizes lists a weight before
 * its bias. */
static bool param_decays(const mdl_layer *l, int j)
{
    switch (l->kind) {
    case MDL_L_CONV:
    case MDL_L_LINEAR:
        return !(l->flags & MDL_F_BIAS) || j % 2 == 0;
    case MDL_L_BATCHNORM:
    case MDL_L_LAYERNORM:
    case MDL_L_RMSNORM:
        return false;
    default:
        return true;
    }
}

static int param_list(const mdl_net *net, plist *p)
{
    int cap = mdl_net_param_tensors(net) + 8;
    p->size = malloc((size_t)cap * sizeof *p->size);
    p->decays = malloc((size_t)cap * sizeof *p->decays);
    p->n = 0;
    p->total = 0;
    if (!p->size || !p->decays) {
        free(p->size);
        free(p->decays);
        return SIM_ENOMEM;
    }
    for (int i = 0; i < net->n_layers; i++) {
        double sz[8];
        int n = param_sizes(&net->layers[i], sz, 8);
        for (int j = 0; j < n && p->n < cap; j++) {
            p->decays[p->n] = param_decays(&net->layers[i], j);
            p->size[p->n++] = sz[j];
            p->total += sz[j];
        }
    }
    return SIM_OK;
}

/* One torch._foreach_* / _fused_* call: multi_tensor_apply queues one block per 64 Ki-element
 * chunk and launches when 320 blocks or depth_to_max_tensors[depth-1] tensors are queued (or at
 * the end). Each launch is a kernel; `rw` element accesses per parameter element. */
static void foreach_op(ctx *c, const plist *p, const char *op, int depth, double rw,
                       double flops_per_elem, double elem_bytes)
{
    double total_chunks = 0;
    for (int t = 0; t < p->n; t++)
        total_chunks += fmax(1, ceil(p->size[t] / MTA_CHUNK));
    int tensors = 0, blocks = 0, launches = 0;
    for (int t = 0; t < p->n; t++) {
        double chunks = fmax(1, ceil(p->size[t] / MTA_CHUNK));
        tensors++;
        for (double ch = 0; ch < chunks; ch++) {
            blocks++;
            bool last_chunk = ch == chunks - 1;
            if ((tensors == mta_max_tensors[depth - 1] && last_chunk) || blocks == MTA_MAX_BLOCKS ||
                (t == p->n - 1 && last_chunk)) {
                double n = p->total * blocks / total_chunks;
                push(c, op, SIM_OP_KERNEL, MDL_MATH_SIMT, n * flops_per_elem, n * rw * elem_bytes,
                     blocks, launches++ ? c->d->extra_launch_ns : c->d->foreach_op_ns);
                blocks = 0;
                tensors = last_chunk ? 0 : 1;
            }
        }
    }
}

/* apex O2's _post_amp_backward after each micro-batch's backward (apex/amp/_process_optimizer.py,
 * post_backward_with_master_weights; apex/amp/scaler.py). After the first micro-batch,
 * torch.empty_like gives each fp32 master parameter a gradient (a Python call per tensor, no
 * kernel) and multi_tensor_scale writes the half gradients into them divided by the loss scale
 * (2 bytes in, 4 out); a later micro-batch's gradients are added to them (multi_tensor_axpby:
 * 2 + 4 in, 4 out), counted as 3 and 5 half elements (wb). Then update_scale reads the
 * overflow flag with .item(). */
static void apex_post_backward(ctx *c, const plist *p, int tensors)
{
    if (c->micro == 0) {
        cpu(c, "apex_master_grads_empty_like", (int64_t)tensors * c->d->view_op_ns);
        foreach_op(c, p, "multi_tensor_scale (unscale to fp32)", 2, 3, 1, c->wb);
    } else {
        foreach_op(c, p, "multi_tensor_axpby (unscale with stash)", 3, 5, 2, c->wb);
    }
    push(c, "apex_overflow_item", SIM_OP_MEMCPY_D2H, MDL_MATH_NONE, 0, 4, 0, c->d->sync_ns);
}

/* The kernels of torch.nn.utils.clip_grad_norm_ after the norms (torch/nn/utils/clip_grad.py):
 * torch.stack of the per-tensor norms, their vector_norm, + 1e-6, max_norm / that, clamp(max=1);
 * one-element kernels, each a Python op. */
static void clip_coefficient(ctx *c, int tensors, int64_t ns)
{
    static const char *const ops[] = {"clip_stack_norms", "clip_total_norm", "clip_add_eps",
                                      "clip_coef_div", "clip_coef_clamp"};
    elem(c, ops[0], tensors, tensors * 8.0, 0, ns);
    for (size_t i = 1; i < sizeof ops / sizeof ops[0]; i++)
        elem(c, ops[i], 1, 8, 1, ns);
}

/* clip_grad_norm_'s own kernels on one gradient of n elements: its norm (a read) and its scaling
 * by the clip coefficient (a read and a write), each a Python op costing ns. */
static void clip_norm(ctx *c, double n, int64_t ns)
{
    elem(c, "vector_norm (clip)", n, n * c->ob, 2 * n, ns);
}

static void clip_scale(ctx *c, double n, int64_t ns)
{
    elem(c, "mul_ (clip)", n, 2 * n * c->ob, n, ns);
}

/* clip_grad_norm_(model.parameters(), max_norm) over every gradient before the step. From
 * PyTorch 2.0 (foreach=None picks the foreach path on CUDA) the norms are one _foreach_norm
 * (multi_tensor_apply, then its lpnorm cleanup kernel) and the scaling one _foreach_mul_; before
 * 2.0 a Python loop runs one vector_norm and one mul_ per tensor. */
static void clip_global(ctx *c, const plist *p)
{
    const mdl_dispatch *D = c->d;
    double ob = c->ob;
    bool foreach = c->o->pytorch >= 200;
    if (foreach) {
        foreach_op(c, p, "foreach_norm (clip)", 1, 1, 2, ob);
        elem(c, "foreach_norm_cleanup", p->n, p->n * 8.0, p->n, D->extra_launch_ns);
    } else {
        for (int t = 0; t < p->n; t++)
            clip_norm(c, p->size[t], D->py_op_ns);
    }
    clip_coefficient(c, p->n, D->py_op_ns);
    if (foreach) {
        foreach_op(c, p, "foreach_mul_ (clip)", 1, 2, 1, ob);
    } else {
        for (int t = 0; t < p->n; t++)
            clip_scale(c, p->size[t], D->py_op_ns);
    }
}

/* GradientClipper of NVIDIA's BERT (run_squad.py): apex's multi_tensor_l2norm over every gradient
 * (per-chunk partial norms, then its cleanup kernel over at most MTA_MAX_BLOCKS partials),
 * total_norm.item() on the host, then multi_tensor_scale in place when max_norm / norm < 1. The
 * scale is counted: fine-tuning from a pre-trained checkpoint starts with a gradient norm above
 * its max_norm of 1. apex's multi_tensor_apply chunks and launches as PyTorch's (foreach_op). */
static void clip_apex(ctx *c, const plist *p)
{
    foreach_op(c, p, "multi_tensor_l2norm (clip)", 1, 1, 2, c->ob);
    elem(c, "multi_tensor_l2norm_cleanup", MTA_MAX_BLOCKS, MTA_MAX_BLOCKS * 4.0, MTA_MAX_BLOCKS,
         c->d->extra_launch_ns);
    push(c, "clip_total_norm_item", SIM_OP_MEMCPY_D2H, MDL_MATH_NONE, 0, 4, 0, c->d->sync_ns);
    foreach_op(c, p, "multi_tensor_scale (clip)", 2, 2, 1, c->ob);
}

/* BertAdam.step (DLE PyTorch/LanguageModeling/BERT/optimization.py), one Python iteration per
 * parameter tensor: clip_grad_norm_(p, max_grad_norm) on that tensor alone (a norm over it, the
 * five one-element kernels, a mul_ of it), then next_m.mul_(b1).add_(1 - b1, grad),
 * next_v.mul_(b2).addcmul_(1 - b2, grad, grad), update = next_m / (next_v.sqrt() + e), in the
 * decay group update += weight_decay * p, then p.add_(-(lr * update)): 9 or 11 kernels with a
 * temporary each, every op at the loop's per-op cost. rw: element accesses per parameter element
 * (an addcmul_ reads the gradient once). */
static void bertadam(ctx *c, const plist *p)
{
    static const char *const ops[] = {
        "mul_ (next_m)", "add_ (next_m)", "mul_ (next_v)",      "addcmul_ (next_v)",   "sqrt",
        "add (eps)",     "div (update)",  "mul (weight decay)", "add_ (weight decay)", "mul (lr)",
        "add_ (update)"};
    static const double rw[] = {2, 3, 2, 3, 2, 2, 3, 2, 3, 2, 3};
    enum { DECAY_MUL = 7, DECAY_ADD = 8 };
    const mdl_dispatch *D = c->d;
    double ob = c->ob;
    for (int t = 0; t < p->n; t++) {
        double n = p->size[t];
        bool decay = c->o->weight_decay && p->decays[t];
        clip_norm(c, n, D->opt_loop_op_ns);
        clip_coefficient(c, 1, D->opt_loop_op_ns);
        clip_scale(c, n, D->opt_loop_op_ns);
        for (int k = 0; k < (int)(sizeof ops / sizeof ops[0]); k++) {
            if ((k == DECAY_MUL || k == DECAY_ADD) && !decay) continue;
            elem(c, ops[k], n, n * rw[k] * ob, n, D->opt_loop_op_ns);
        }
    }
}

/* A torch.optim SGD or Adam/AdamW step in its implementation (opt_impl). */
static void torch_optim(ctx *c, const plist *p, bool adam)
{
    const mdl_options *o = c->o;
    const mdl_dispatch *D = c->d;
    double ob = c->ob;
    switch (o->opt_impl) {
    case MDL_IMPL_FUSED:
        if (adam)
            foreach_op(c, p, "fused_adamw_", 4, 7, 12, ob);
        else
            foreach_op(c, p, "fused_sgd_", 3, 5, 4, ob);
        break;
    case MDL_IMPL_FOREACH:
        if (adam) {
            if (o->weight_decay)
                foreach_op(c, p, "foreach_mul_ (decoupled weight decay)", 1, 2, 1, ob);
            foreach_op(c, p, "foreach_lerp_ (exp_avg)", 2, 3, 3, ob);
            foreach_op(c, p, "foreach_mul_ (exp_avg_sq)", 1, 2, 1, ob);
            foreach_op(c, p, "foreach_addcmul_ (exp_avg_sq)", 3, 3, 3, ob);
            foreach_op(c, p, "foreach_sqrt", 2, 2, 1, ob);
            foreach_op(c, p, "foreach_div_ (bias correction)", 1, 2, 1, ob);
            foreach_op(c, p, "foreach_add_ (eps)", 1, 2, 1, ob);
            foreach_op(c, p, "foreach_addcdiv_ (update)", 3, 4, 3, ob);
        } else {
            if (o->weight_decay) foreach_op(c, p, "foreach_add (weight decay)", 3, 3, 2, ob);
            foreach_op(c, p, "foreach_mul_ (momentum)", 1, 2, 1, ob);
            foreach_op(c, p, "foreach_add_ (momentum buffer)", 2, 3, 2, ob);
            foreach_op(c, p, "foreach_add_ (update)", 2, 3, 2, ob);
        }
        break;
    case MDL_IMPL_FORLOOP:
        for (int t = 0; t < p->n; t++) {
            double n = p->size[t];
            int k = 0;
            static const char *const adam_ops[8] = {"mul_ (decoupled weight decay)",
                                                    "lerp_ (exp_avg)",
                                                    "mul_ (exp_avg_sq)",
                                                    "addcmul_ (exp_avg_sq)",
                                                    "sqrt",
                                                    "div",
                                                    "add_ (eps)",
                                                    "addcdiv_ (update)"};
            static const double adam_rw[8] = {2, 3, 2, 3, 2, 2, 2, 4};
            static const char *const sgd_ops[4] = {"add (weight decay)", "mul_ (momentum)",
                                                   "add_ (momentum buffer)", "add_ (update)"};
            static const double sgd_rw[4] = {3, 2, 3, 3};
            if (adam)
                for (k = o->weight_decay ? 0 : 1; k < 8; k++)
                    elem(c, adam_ops[k], n, n * adam_rw[k] * ob, 2 * n, D->opt_loop_op_ns);
            else
                for (k = o->weight_decay ? 0 : 1; k < 4; k++)
                    elem(c, sgd_ops[k], n, n * sgd_rw[k] * ob, 2 * n, D->opt_loop_op_ns);
        }
        break;
    case MDL_IMPL_COUNT:
        break;
    }
}

static void optimizer(ctx *c, const plist *p, int tensors)
{
    const mdl_options *o = c->o;
    const mdl_dispatch *D = c->d;
    double ob = c->ob;
    c->phase = MDL_PH_OPT;
    c->layer = -1;
    bool grad_scaler = c->scaler && !c->master; /* apex unscaled after backward */
    if (grad_scaler) {
        elem(c, "grad_scaler_found_inf_fill", 1, 4, 0, D->py_op_ns);
        foreach_op(c, p, "amp_foreach_non_finite_check_and_unscale_", 1, 2, 2, ob);
        /* GradScaler.step: found_inf.item() before deciding to step. */
        push(c, "grad_scaler_found_inf_item", SIM_OP_MEMCPY_D2H, MDL_MATH_NONE, 0, 4, 0,
             D->sync_ns);
    }
    if (o->grad_clip == MDL_CLIP_GLOBAL) clip_global(c, p);
    if (o->grad_clip == MDL_CLIP_APEX) clip_apex(c, p);
    bool adam = o->optimizer != MDL_OPT_SGD;
    cpu(c, "optimizer_param_bookkeeping",
        (int64_t)tensors * (adam ? D->opt_param_adam_ns : D->opt_param_sgd_ns));
    if (o->optimizer == MDL_OPT_BERTADAM)
        bertadam(c, p);
    else
        torch_optim(c, p, adam);
    if (c->master) {
        /* apex's patched step: _master_params_to_model_params (multi_tensor_scale of the fp32
         * masters into the half weights: 4 bytes in, 2 out, 3 half elements), then a Python
         * loop setting each master's .grad to None */
        foreach_op(c, p, "multi_tensor_scale (master to model)", 2, 3, 1, c->wb);
        cpu(c, "apex_clear_master_grads", (int64_t)tensors * D->zero_grad_param_ns);
    }
    if (grad_scaler) elem(c, "grad_scaler_update_scale", 1, 16, 1, D->py_op_ns);
}

/* DDP's buckets (torch/nn/parallel/distributed.py; reducer.cpp, compute_bucket_assignment_by_size
 * and rebuild_buckets): after the first step DDP rebuilds them over the parameters in the order
 * their gradients became ready, the reverse of the model's here, and closes a bucket once it
 * holds at least its limit, 1 MiB for the first and bucket_cap_mb for every later one. A bucket is
 * ready after the backward of the layer of its last tensor (backward runs the layers in reverse).
 * wb: bytes of one gradient element. Returns 0 or SIM_ENOMEM. */
static int ddp_buckets(const mdl_net *net, double wb, double cap_bytes, mdl_step *s)
{
    /* at most one bucket per tensor, and param_sizes gives at most 8 per layer */
    s->buckets = calloc((size_t)net->n_layers * 8 + 1, sizeof *s->buckets);
    if (!s->buckets) return SIM_ENOMEM;
    mdl_bucket *b = NULL;
    for (int i = net->n_layers - 1; i >= 0; i--) {
        double sz[8];
        int n = param_sizes(&net->layers[i], sz, 8);
        for (int j = n - 1; j >= 0; j--) {
            if (!b) b = &s->buckets[s->n_buckets++];
            b->bytes += sz[j] * wb;
            b->tensors++;
            b->layer = i;
            if (b->bytes >= (s->n_buckets == 1 ? MDL_DDP_FIRST_BUCKET_BYTES : cap_bytes)) b = NULL;
        }
    }
    return SIM_OK;
}

int mdl_expand(const mdl_net *net, const mdl_options *opt, const mdl_dispatch *d, mdl_step *step,
               sim_err *err)
{
    if (opt->seq_mix.n) {
        memset(step, 0, sizeof *step);
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                           "a step of several sequence lengths needs one net per length "
                           "(mdl_expand_mix)");
    }
    return mdl_expand_mix(&net, opt, d, step, err);
}

/* The net micro-batch m runs on: its group's under opt->seq_mix, else the one net. */
static const mdl_net *micro_net(const mdl_net *const *nets, const mdl_options *opt, int m)
{
    for (int g = 0, end = 0; g < opt->seq_mix.n; g++)
        if (m < (end += opt->seq_mix.micro[g])) return nets[g];
    return nets[0];
}

int mdl_expand_mix(const mdl_net *const *nets, const mdl_options *opt, const mdl_dispatch *d,
                   mdl_step *step, sim_err *err)
{
    memset(step, 0, sizeof *step);
    int rc = mdl_options_check(opt, err);
    if (rc) return rc;
    const mdl_net *net = nets[0];
    for (int g = 0; g < (opt->seq_mix.n ? opt->seq_mix.n : 1); g++)
        if (!nets[g] || nets[g]->error || nets[g]->n_layers == 0 ||
            nets[g]->n_layers != net->n_layers)
            return sim_err_set(err, SIM_EINVAL, NULL, 0, 0, "expanding an empty or broken net");
    sim_precision p = opt->precision;
    ctx c = {.net = net,
             .o = opt,
             .d = d ? d : &dispatch_default,
             .s = step,
             .B = opt->batch,
             .layer = -1};
    c.amp = p == SIM_PREC_AMP_FP16 || p == SIM_PREC_AMP_BF16;
    c.act = mdl_dtype_bytes(MDL_DT_ACT, p);
    c.act32 = mdl_dtype_bytes(MDL_DT_ACT32, p);
    c.wb = mdl_param_bytes(opt);
    c.master = mdl_master_weights(opt);
    c.ob = mdl_optimizer_elem_bytes(opt);
    c.cb = c.act;
    /* PyTorch's vectorized elementwise loop: 4 elements per thread, 8 (16 bytes) for 2-byte
     * types from 2.7 (pytorch#145746, "Implement 128 bit vectorization") on the GPUs that launch
     * them, which mdl_kernel_cost checks. */
    c.vec = opt->pytorch >= 207 && c.act == 2 ? 8 : 4;
    c.zero_grad = mdl_zero_grad_mode(opt);
    c.scaler = !opt->inference &&
               (opt->grad_scaler == 1 ||
                (opt->grad_scaler == -1 && (p == SIM_PREC_AMP_FP16 || p == SIM_PREC_FP16)));
    step->batch = opt->batch;
    step->accum_steps = opt->accum_steps;
    step->precision = p;
    step->cuda_graphs = opt->cuda_graphs;
    step->params = mdl_net_params(net);
    step->param_tensors = mdl_net_param_tensors(net);
    step->world_size = opt->world_size > 1 ? opt->world_size : 1;
    step->grad_bytes = step->params * c.wb;
    if (step->world_size > 1 && !opt->inference &&
        ddp_buckets(net, c.wb, opt->ddp_bucket_mb * 1024 * 1024, step)) {
        mdl_step_free(step);
        return sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory expanding %s", net->name);
    }
    step->step_overhead_ns = c.d->step_overhead_ns;
    step->graph_launch_ns = c.d->graph_launch_ns;
    int segments = resolve_segments(net, opt);
    step->ckpt_segments = segments;

    plist pl;
    if (param_list(net, &pl))
        return sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory expanding %s", net->name);
    bool steps = opt->optimizer != MDL_OPT_NONE && !opt->inference;
    c.phase = MDL_PH_STEP;
    zero_grad(&c, &pl, step->param_tensors);
    for (int m = 0; m < opt->accum_steps; m++) {
        c.micro = (uint16_t)m;
        c.net = micro_net(nets, opt, m);
        micro_step(&c, segments);
        if (c.master) apex_post_backward(&c, &pl, step->param_tensors);
    }
    c.net = net;
    c.micro = (uint16_t)(opt->accum_steps - 1);
    if (steps) optimizer(&c, &pl, step->param_tensors);
    free(pl.size);
    free(pl.decays);
    if (c.oom) {
        mdl_step_free(step);
        return sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory expanding %s", net->name);
    }
    return SIM_OK;
}

void mdl_step_free(mdl_step *step)
{
    free(step->k);
    free(step->buckets);
    memset(step, 0, sizeof *step);
}

void mdl_step_totals_get(const mdl_step *s, mdl_step_totals *t)
{
    memset(t, 0, sizeof *t);
    for (size_t i = 0; i < s->n; i++) {
        const mdl_kernel *k = &s->k[i];
        t->dispatch_ns += k->dispatch_ns;
        if (k->kind == SIM_OP_KERNEL) {
            t->kernels++;
            t->kernels_phase[k->phase]++;
            t->flops[k->phase] += k->flops;
            t->bytes += k->bytes;
        } else if (k->kind == SIM_OP_CPU) {
            t->cpu_ops++;
        } else {
            t->syncs++;
        }
    }
}

static int push_op(sim_program *prog, const sim_op *op, sim_err *err)
{
    if (!sim_program_push(prog, op)) return SIM_OK;
    sim_program_free(prog);
    return sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory building the program");
}

/* Record i of the last micro-batch's backward ends its layer's backward: DDP's hooks have
 * seen every gradient of that layer. */
static bool ends_layer_backward(const mdl_step *s, size_t i)
{
    const mdl_kernel *k = &s->k[i];
    if (k->phase != MDL_PH_BWD || k->micro != s->accum_steps - 1 || k->layer < 0) return false;
    if (i + 1 == s->n) return true;
    const mdl_kernel *next = &s->k[i + 1];
    return next->phase != MDL_PH_BWD || next->layer != k->layer || next->micro != k->micro;
}

/* Appends the all-reduces of the buckets from *next on that are ready once the backward of
 * `layer` is done (every bucket when layer < 0): backward runs the layers in reverse, so those
 * whose last layer is at or above it. */
static int reduce_ready(const mdl_step *s, int layer, int *next, sim_program *prog, sim_err *err)
{
    for (; *next < s->n_buckets && (layer < 0 || s->buckets[*next].layer >= layer); ++*next) {
        sim_op ar = {.kind = SIM_OP_ALLREDUCE, .bytes = s->buckets[*next].bytes, .comm = 1};
        if (push_op(prog, &ar, err)) return SIM_ENOMEM;
    }
    return SIM_OK;
}

int mdl_step_program(const mdl_step *s, const sim_gpu_desc *gpu, sim_program *prog, sim_err *err)
{
    memset(prog, 0, sizeof *prog);
    prog->graph_launch_ns = s->graph_launch_ns;
    prog->step_overhead_ns = s->step_overhead_ns;
    int micro = 0, bucket = 0;
    bool opt = false;  /* the optimizer step has begun */
    bool wait = false; /* the next kernel waits for the buckets' all-reduces */
    for (size_t i = 0; i < s->n; i++) {
        const mdl_kernel *k = &s->k[i];
        /* Each further micro-batch starts by taking its batch from the loader (the loop's
         * `for x, y in loader` with the optimizer step every accum_steps batches). */
        for (; micro < k->micro; micro++) {
            sim_op next = {.kind = SIM_OP_NEXT_BATCH};
            if (push_op(prog, &next, err)) return SIM_ENOMEM;
        }
        /* Backward is over: DDP's last hook reduces what is left and makes the stream wait for
         * every bucket (finalize_backward), so the optimizer's first kernel waits. */
        if (k->phase == MDL_PH_OPT && !opt) {
            opt = true;
            wait = s->n_buckets > 0;
            if (reduce_ready(s, -1, &bucket, prog, err)) return SIM_ENOMEM;
        }
        sim_op op = {.dispatch_ns = k->dispatch_ns, .kind = k->kind};
        if (k->kind == SIM_OP_KERNEL) {
            mdl_cost cost;
            mdl_kernel_cost(k, gpu, s->precision, &cost);
            op.gpu_ns = cost.total_ns;
            op.unit = (uint8_t)cost.unit;
            op.sm_fraction = cost.sm_fraction;
            op.comm = wait; /* DDP's end of backward: the stream waits for every bucket */
            wait = false;
        } else if (k->kind == SIM_OP_MEMCPY_D2H || k->kind == SIM_OP_MEMCPY_H2D) {
            op.bytes = k->bytes;
        }
        if (push_op(prog, &op, err)) return SIM_ENOMEM;
        if (ends_layer_backward(s, i) && reduce_ready(s, k->layer, &bucket, prog, err))
            return SIM_ENOMEM;
    }
    return SIM_OK;
}

int64_t mdl_step_gpu_ns(const mdl_step *s, const sim_gpu_desc *gpu)
{
    int64_t sum = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->k[i].kind == SIM_OP_KERNEL) sum += mdl_kernel_time_ns(&s->k[i], gpu, s->precision);
    return sum;
}
