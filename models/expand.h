/* expand.h — a net + training options -> the kernels and CPU ops of one optimizer step.
 * The expansion follows PyTorch eager semantics (autograd, autocast, GradScaler, foreach/fused
 * optimizers, torch.utils.checkpoint) so that kernel counts and CPU dispatch costs match what a
 * profiler shows for the same model; each record carries FLOPs, bytes and the CPU cost on the
 * reference core. mdl_step_program then prices every kernel on a GPU (cost.h). */
#ifndef MDL_EXPAND_H
#define MDL_EXPAND_H

#include "models/cost.h"
#include "models/net.h"
#include "models/seqmix.h"
#include "models/zoo.h"
#include "sim/base/err.h"
#include "sim/core/hw.h"
#include "sim/core/workload.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* SGD with momentum; Adam/AdamW (torch.optim); BertAdam, the per-parameter Python loop of
 * NVIDIA DeepLearningExamples' BERT (PyTorch/LanguageModeling/BERT/optimization.py, from
 * pytorch-pretrained-bert): it clips each gradient on its own, decays weights but not biases and
 * norm parameters, and is always a loop (opt_impl does not apply); or none: forward and backward
 * only, as a profiler times them (`out = model(x); loss.backward()` in a loop): no zero_grad
 * and no step, so every backward adds into the gradients the last one left. */
typedef enum mdl_optimizer {
    MDL_OPT_SGD,
    MDL_OPT_ADAMW,
    MDL_OPT_BERTADAM,
    MDL_OPT_NONE,
    MDL_OPT_COUNT
} mdl_optimizer;

/* Gradient clipping before the optimizer step (workload.grad_clip): none;
 * torch.nn.utils.clip_grad_norm_ over all parameters (one global norm); or apex's multi-tensor
 * norm, read on the host with .item(), and scale (NVIDIA BERT's GradientClipper). */
enum { MDL_CLIP_NONE, MDL_CLIP_GLOBAL, MDL_CLIP_APEX };
extern const char *const mdl_grad_clip_names[];

/* What zero_grad() does before each step (workload.zero_grad): auto, the release's default; none
 * (never called: gradients add up); set_to_none (.grad = None, no kernel: the default of
 * torch.optim and nn.Module from PyTorch 2.0, and of apex's fused optimizers); or zero (before 2.0
 * the default of both: a Python loop that detaches each .grad and calls zero_() on it, one fill
 * kernel per parameter tensor, after which backward adds into the zeroed gradient). */
enum { MDL_ZG_AUTO, MDL_ZG_NONE, MDL_ZG_SET_TO_NONE, MDL_ZG_ZERO };
extern const char *const mdl_zero_grad_names[];

/* How the optimizer runs: torch.optim's default on CUDA since 2.0 is foreach (multi-tensor
 * kernels); fused=True is one kernel family for the whole update; foreach=False loops in Python. */
typedef enum mdl_opt_impl {
    MDL_IMPL_FOREACH,
    MDL_IMPL_FUSED,
    MDL_IMPL_FORLOOP,
    MDL_IMPL_COUNT
} mdl_opt_impl;

/* Which attention implementation a transformer runs (workload.attention). */
enum { MDL_ATTN_MODEL, MDL_ATTN_EAGER, MDL_ATTN_SDPA };
/* Kernel fusion of the model's elementwise chains (workload.fuser): none (eager PyTorch, one
 * kernel per op), or nvfuser (the model under torch.jit.script with NVFuser, as NVIDIA's BERT
 * pre-training runs it): an eager attention's scale, mask add, softmax and dropout run as one
 * kernel forward and one backward, and a dropout feeding a residual add runs with the add. */
enum { MDL_FUSER_NONE, MDL_FUSER_NVFUSER };
extern const char *const mdl_fuser_names[];
/* The names users give, NULL-terminated: attention in MDL_ATTN_* order ("default", "eager",
 * "sdpa"); memory format false / true for channels_last ("contiguous", "channels_last"). The
 * experiment keys and `model show` both read these. */
extern const char *const mdl_attention_names[];
extern const char *const mdl_memory_format_names[];
/* PyTorch releases the model knows ("1.6" ... "2.9", NULL-terminated; the last is the default),
 * and the release at index i as 100 x major + minor (2.7 -> 207). */
extern const char *const mdl_pytorch_names[];
int mdl_pytorch_version(int index);
/* Index of s in a NULL-terminated name list, or -1. */
int mdl_name_index(const char *const *names, const char *s);

typedef struct mdl_options {
    int batch; /* samples per micro-batch, >= 1 */
    sim_precision precision;
    mdl_shape shape;         /* input shape; zeros = the model's default */
    mdl_optimizer optimizer; /* SGD with momentum, Adam/AdamW or BertAdam */
    mdl_opt_impl opt_impl;
    bool weight_decay;      /* adds the weight-decay op of the optimizer */
    int grad_clip;          /* MDL_CLIP_*: clip_grad_norm_ over all gradients before the step */
    int zero_grad;          /* MDL_ZG_*: what zero_grad() does before each step */
    int accum_steps;        /* micro-batches per optimizer step (gradient accumulation), >= 1 */
    bool checkpointing;     /* activation checkpointing over the net's blocks */
    int ckpt_segments;      /* checkpoint segments; 0 = ceil(sqrt(blocks)) */
    bool cuda_graphs;       /* the step is replayed as one CUDA graph (dispatch only) */
    bool channels_last;     /* activations in torch.channels_last (NHWC); false = contiguous NCHW */
    int attention;          /* MDL_ATTN_*: the model's own attention, eager, or SDPA */
    int fuser;              /* MDL_FUSER_*: elementwise chains one kernel per op, or fused */
    bool conv_tensor_cores; /* convolutions run on tensor cores (set from the GPU and precision by
                               mdl_build_program; see mdl_conv_tensor_cores in cost.h) */
    int grad_scaler;        /* GradScaler: -1 = auto (on for amp_fp16 and fp16), 0 off, 1 on */
    int world_size;         /* data-parallel GPUs (DDP); 0 or 1 = one GPU, no all-reduce */
    double ddp_bucket_mb;   /* DDP's bucket_cap_mb: gradient bucket cap, MiB, > 0 (default 25) */
    int pytorch;            /* PyTorch release, 100 x major + minor: before 1.12 a linear with a
                               bias on 3-D input adds its bias in a kernel of its own
                               (pytorch#72728); elementwise kernels load 16-byte vectors of 2-byte
                               types from 2.7 (pytorch#145746) */
    bool inference;         /* model.eval() under torch.no_grad(): the forward alone, without the
                               loss; dropout and stochastic depth pass their input through, batch
                               norm applies its running statistics; nothing is kept for backward */
    mdl_seq_mix seq_mix;    /* the padded length of each micro-batch when batches are padded to
                               their longest sequence (seqmix.h); n = 0: all at shape.seq */
} mdl_options;

/* DDP's defaults (torch/csrc/distributed/c10d/reducer.hpp): kDefaultBucketBytesCap = 25 MiB
 * (bucket_cap_mb), kDefaultFirstBucketBytes = 1 MiB (dist._DEFAULT_FIRST_BUCKET_BYTES). */
#define MDL_DDP_BUCKET_MB 25.0
#define MDL_DDP_FIRST_BUCKET_BYTES (1024.0 * 1024.0)
/* The largest bucket cap taken, MiB: 64 GiB, more than any model's gradients here. */
#define MDL_DDP_BUCKET_MB_MAX 65536.0

/* Defaults: batch 32, fp32, default shape, SGD momentum foreach with weight decay, no
 * accumulation, no checkpointing, no CUDA graphs, scaler auto, DDP buckets of 25 MiB, training. */
void mdl_options_defaults(mdl_options *o);
/* Checks ranges; returns 0 or SIM_EINVAL with a sentence naming the bad field. */
int mdl_options_check(const mdl_options *o, sim_err *err);
const char *mdl_optimizer_name(mdl_optimizer o);
/* The zero_grad mode o runs (MDL_ZG_NONE, _SET_TO_NONE or _ZERO): auto resolves to none for
 * inference and for optimizer none (nothing calls it), to zero under fp32 master weights (apex
 * AMP O2 patches optimizer.zero_grad to zero each half gradient) and before PyTorch 2.0 unless
 * the optimizer is fused (apex's set .grad to None), and to set_to_none otherwise. */
int mdl_zero_grad_mode(const mdl_options *o);
/* Whether o trains a half model against fp32 master weights: fp16 with an optimizer, which is
 * apex AMP O2 (opt_level O2: the model cast to fp16, the optimizer stepping fp32 copies of its
 * weights), the way such a model is trained: PyTorch's GradScaler refuses fp16 gradients
 * ("Attempting to unscale FP16 gradients"). bf16 models train without masters. */
bool mdl_master_weights(const mdl_options *o);
/* Bytes of a stored parameter or gradient element: half in pure fp16 and bf16, else fp32. */
double mdl_param_bytes(const mdl_options *o);
/* Bytes of an element the optimizer steps (its state, and the weights and gradients it reads):
 * fp32 behind master weights (mdl_master_weights), else mdl_param_bytes. */
double mdl_optimizer_elem_bytes(const mdl_options *o);
int mdl_optimizer_parse(const char *s, mdl_optimizer *out);
const char *mdl_opt_impl_name(mdl_opt_impl i);
int mdl_opt_impl_parse(const char *s, mdl_opt_impl *out);

/* CPU costs on the reference core (ns) of what PyTorch eager does per op, one figure per op class.
 * A class figure is the whole CPU time of one op of the class (Python, dispatcher, autograd
 * bookkeeping and its first cudaLaunchKernel); each further kernel the model emits for the same op
 * adds extra_launch_ns. See expand.c for the fit to real traces (traces/dispatch.h measures them);
 * tests and sweeps may pass their own. */
typedef struct mdl_dispatch {
    int64_t gemm_module_ns;     /* nn.Conv2d / nn.Linear call: aten::conv2d, aten::linear */
    int64_t norm_module_ns;     /* nn.BatchNorm2d / nn.LayerNorm call: the norm op itself */
    int64_t elem_module_ns;     /* activation, pool, dropout, embedding, loss module: one op */
    int64_t py_op_ns;           /* a tensor op written in Python inside forward (x + y, softmax,
                                   batch norm's num_batches_tracked.add_(1)) */
    int64_t aten_op_ns;         /* an aten op dispatched from C++ (nll_loss, a slice copy) */
    int64_t autocast_cast_ns;   /* autocast's cast of one tensor (Tensor.to: alloc + copy kernel) */
    int64_t extra_launch_ns;    /* each further kernel launched by the same op */
    int64_t bwd_gemm_ns;        /* autograd node of a conv/matmul (ConvolutionBackward0, ...) */
    int64_t bwd_norm_ns;        /* autograd node of a normalisation (CudnnBatchNormBackward0) */
    int64_t bwd_op_ns;          /* any other autograd node (ReluBackward0, AddBackward0, ...) */
    int64_t accumulate_grad_ns; /* AccumulateGrad node, one per parameter tensor per backward */
    int64_t view_op_ns;         /* a view/permute/reshape from Python (no kernel) */
    int64_t foreach_op_ns;      /* one torch._foreach_* / _fused_* call from the optimizer */
    int64_t opt_loop_op_ns;     /* one tensor op of a for-loop (foreach=False) optimizer */
    int64_t opt_param_sgd_ns;   /* optimizer Python bookkeeping per parameter tensor, SGD */
    int64_t opt_param_adam_ns;  /* ... Adam (state lookups, step counters, bias-correction lists) */
    int64_t zero_grad_param_ns; /* zero_grad(set_to_none=True) per parameter tensor */
    int64_t ckpt_segment_ns;    /* torch.utils.checkpoint wrapper per segment (forward+backward) */
    int64_t step_overhead_ns;   /* Python training loop per step outside the ops */
    int64_t graph_launch_ns;    /* g.replay(): Python call + cudaGraphLaunch */
    int64_t sync_ns;            /* .item() call before it waits */
} mdl_dispatch;

/* The built-in reference-core costs (what mdl_expand uses for d = NULL); borrowed, static. */
const mdl_dispatch *mdl_dispatch_default(void);

/* One DDP gradient bucket: the all-reduce DDP launches once every gradient in it is ready. */
typedef struct mdl_bucket {
    double bytes; /* gradient bytes */
    int tensors;  /* parameter tensors */
    int layer;    /* the layer whose backward produces its last gradient: it follows that */
} mdl_bucket;

/* One expanded optimizer step: zero_grad, accum_steps x (forward, loss, backward), optimizer. */
typedef struct mdl_step {
    mdl_kernel *k;
    size_t n, cap;
    int batch, accum_steps, ckpt_segments;
    sim_precision precision;
    bool cuda_graphs;
    double params;
    int param_tensors;
    int world_size;      /* > 1: DDP all-reduces the gradients in buckets */
    double grad_bytes;   /* gradient bytes all-reduced per GPU */
    mdl_bucket *buckets; /* world_size > 1: DDP's buckets in the order their gradients become
                            ready (the reverse of the model's parameters); owned */
    int n_buckets;
    int64_t step_overhead_ns, graph_launch_ns;
} mdl_step;

/* Expands net under opt into *step (initialised here; free with mdl_step_free, also after a
 * failure). d = NULL uses the built-in reference-core costs (expand.c). Returns 0, SIM_EINVAL (bad
 * options) or SIM_ENOMEM. */
int mdl_expand(const mdl_net *net, const mdl_options *opt, const mdl_dispatch *d, mdl_step *step,
               sim_err *err);
/* mdl_expand for a step whose micro-batches run at opt->seq_mix's lengths: nets[g] is the model
 * built at opt->seq_mix.seq[g] (the same layers and parameters at another sequence length), and
 * the micro-batches of group g run on it, groups in order. opt->seq_mix.n = 0: nets[0] for all. */
int mdl_expand_mix(const mdl_net *const *nets, const mdl_options *opt, const mdl_dispatch *d,
                   mdl_step *step, sim_err *err);
void mdl_step_free(mdl_step *step);

/* PyTorch's forward row kernels as expand.c emits them (validate prices the same records):
 * softmax or log_softmax over `rows` rows of `cols` elements of `elt` bytes (one pass in
 * registers up to 1,024 elements, else the three-pass block kernel, mdl_rows), and LayerNorm,
 * `in` bytes per element read, `out` written, with its fp32 mean and rstd per row (two passes).
 * Name, layer, phase and dispatch cost are the caller's. */
mdl_kernel mdl_softmax_fwd_kernel(double rows, double cols, double elt);
mdl_kernel mdl_layernorm_fwd_kernel(double rows, double cols, double in, double out);

/* Bytes of one element of a tensor type under precision p. */
double mdl_dtype_bytes(mdl_dtype dt, sim_precision p);

/* Sums over a step. */
typedef struct mdl_step_totals {
    double flops[MDL_PH_COUNT]; /* per phase */
    double bytes;
    size_t kernels;
    size_t kernels_phase[MDL_PH_COUNT];
    size_t cpu_ops, syncs;
    int64_t dispatch_ns; /* CPU cost of all records on the reference core */
} mdl_step_totals;
void mdl_step_totals_get(const mdl_step *step, mdl_step_totals *t);

/* Turns a step into the engine's program with every kernel priced on gpu (gpu_ns, unit,
 * sm_fraction). With world_size > 1 each bucket's all-reduce (on the communication stream, see
 * sim_op.comm) follows the last-micro-batch backward record of its layer (no_sync() before the
 * last micro-batch), and the first kernel after backward waits for them all. prog is initialised
 * here; free with sim_program_free. Returns 0 or SIM_ENOMEM. */
int mdl_step_program(const mdl_step *step, const sim_gpu_desc *gpu, sim_program *prog,
                     sim_err *err);

/* Sum of the step's kernel times on gpu, ns (what mdl_step_program would give as
 * sim_program_gpu_ns, without building the program). */
int64_t mdl_step_gpu_ns(const mdl_step *step, const sim_gpu_desc *gpu);

const char *mdl_phase_name(mdl_phase p);

#endif
