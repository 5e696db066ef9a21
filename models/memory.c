/* memory.c — footprint and OOM (see memory.h).
 * Activations are counted per tensor id, so a tensor several layers keep for backward (a conv's
 * input that is also the previous ReLU's output) counts once; what each layer keeps follows the
 * saved tensors of its PyTorch backward formula.
 *
 * Fixed parts (memory.h):
 * - CUDA context 500 MiB: the context, PyTorch's kernels and cuBLAS/cuDNN handles take a few
 *   hundred MB of device memory before the first tensor (less since CUDA lazy loading, default
 *   on Linux from CUDA 12.2, per NVIDIA's forum answer on CUDA_MODULE_LOADING); estimate.
 * - cuBLAS workspace 32 MiB: PyTorch's CUBLAS_WORKSPACE_CONFIG default is a few 4 MiB buffers
 *   per handle and stream (":4096:8" = 32 MiB on recent GPUs); cuBLASLt adds a few MiB.
 * - cuDNN workspace 256 MiB for nets with convolutions: the fastest algorithms (implicit-
 *   precomputed GEMM, FFT, Winograd) ask for workspace comparable to a layer's activations;
 *   estimate.
 * - Allocator rounding, computed per allocation as PyTorch's caching allocator rounds it
 *   (c10/cuda/CUDACachingAllocator.cpp: every request to a multiple of 512 B; one over 10 MiB
 *   gets a block rounded up to 2 MiB, kRoundLarge; smaller ones are split out of shared 2 MiB
 *   and 20 MiB segments). Memory the allocator reserved but does not use is not counted: when
 *   cudaMalloc fails, the allocator frees its cached unused segments and retries before it
 *   raises the OOM (release_cached_blocks), so reserved-but-free memory, what nvidia-smi shows
 *   above the allocated peak, does not make a run fail. What stays unusable is the slack of
 *   split blocks in segments that still hold live tensors; no measurement of it was found, and
 *   the Lambda batches that ran bound it at a few per cent of the dynamic part
 *   (docs/accuracy.md), so it is not added. */
#include "models/memory.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double mdl_gpu_capacity_bytes(const sim_gpu_desc *gpu)
{
    return gpu->mem_gb > 0 ? gpu->mem_gb * 1073741824.0 : 0;
}

typedef struct saved {
    int ids[3];
    int n;
    double aux_bytes; /* per sample, outside the tensor table (masks, indices, stats, casts) */
} saved;

/* An allocation kept for backward: its size per sample, rounded at a given batch, and the layer
 * whose backward is the last to read it, after which it is freed. */
typedef struct alloc {
    double bytes;
    int layer;
} alloc;

/* The saved allocations in the order they are added, which is by layer, never decreasing
 * (saved_bytes): backward_peak reads them in one pass. */
typedef struct alloc_list {
    alloc *a;
    int n, cap;
    int err;
} alloc_list;

static void alloc_add(alloc_list *a, double bytes, int layer)
{
    if (!a || bytes <= 0 || a->err) return;
    SIM_ASSERT(a->n == 0 || layer >= a->a[a->n - 1].layer);
    if (a->n == a->cap) {
        int cap = a->cap ? 2 * a->cap : 64;
        alloc *b = realloc(a->a, (size_t)cap * sizeof *b);
        if (!b) {
            a->err = SIM_ENOMEM;
            return;
        }
        a->a = b;
        a->cap = cap;
    }
    a->a[a->n++] = (alloc){bytes, layer};
}

/* Bytes the caching allocator adds to a request of `bytes` (see the file comment). */
static double rounding_of(double bytes)
{
    const double small = 512, large = 2.0 * 1048576, split_limit = 10.0 * 1048576;
    double unit = bytes > split_limit ? large : small;
    return ceil(bytes / unit) * unit - bytes;
}

static void add_id(saved *s, int id)
{
    if (id >= 0 && s->n < 3) s->ids[s->n++] = id;
}

/* What backward of layer l keeps, per sample. */
/* A convolution or linear layer keeps its input for the weight gradient; under autocast an fp32
 * input is cast, and the half copy is what backward keeps, per GEMM. */
static void gemm_saved(const mdl_net *net, const mdl_layer *l, bool amp, double act, saved *s)
{
    if (amp && net->tensors[l->in].dtype == MDL_DT_ACT32) {
        int parts = (l->flags & MDL_F_SPLIT3) ? 3 : 1;
        double in = l->kind == MDL_L_LINEAR ? l->m * (double)l->k : net->tensors[l->in].elems;
        s->aux_bytes += parts * in * act;
    } else {
        add_id(s, l->in);
    }
}

/* Attention keeps q, k, v; flash attention its output and the logsumexp, eager attention the
 * softmax output (and its dropout mask and the PV matmul's left operand). */
static void attention_saved(const mdl_layer *l, bool amp, double act, double act32, saved *s)
{
    double hs = (double)l->heads * l->seq;
    add_id(s, l->in);
    if (l->flags & MDL_F_FLASH) {
        add_id(s, l->out);
        s->aux_bytes += 4 * hs; /* logsumexp */
        return;
    }
    double ss = hs * l->seq, sm = (amp || (l->flags & MDL_F_MASK)) ? act32 : act;
    s->aux_bytes += ss * sm;                             /* softmax output, for softmax backward */
    if (l->flags & MDL_F_CLAMP) s->aux_bytes += ss * sm; /* torch.max keeps its input */
    if (l->flags & MDL_F_DROPOUT) s->aux_bytes += ss;    /* bool mask */
    /* The PV matmul keeps its left operand: under autocast the half copy it made, otherwise
     * the dropped probabilities (the softmax output itself without dropout). */
    if (amp)
        s->aux_bytes += ss * act;
    else if (l->flags & MDL_F_DROPOUT)
        s->aux_bytes += ss * sm;
}

static void layer_saved(const mdl_net *net, const mdl_layer *l, sim_precision p, saved *s)
{
    memset(s, 0, sizeof *s);
    bool amp = p == SIM_PREC_AMP_FP16 || p == SIM_PREC_AMP_BF16;
    double act = mdl_dtype_bytes(MDL_DT_ACT, p), act32 = mdl_dtype_bytes(MDL_DT_ACT32, p);
    double out = l->out >= 0 ? net->tensors[l->out].elems : 0;
    switch ((mdl_layer_kind)l->kind) {
    case MDL_L_CONV:
    case MDL_L_LINEAR:
        gemm_saved(net, l, amp, act, s);
        break;
    case MDL_L_BATCHNORM:
        add_id(s, l->in);
        break;
    case MDL_L_LAYERNORM:
        add_id(s, l->in);
        s->aux_bytes += 8 * l->rows; /* mean, rstd */
        break;
    case MDL_L_RMSNORM:
        add_id(s, l->in);
        s->aux_bytes += 2 * 4 * out + 4 * l->rows; /* fp32 intermediates of the Python chain */
        break;
    case MDL_L_ACT:
        if (l->act == MDL_ACT_GELU || l->act == MDL_ACT_SILU) {
            add_id(s, l->in);
        } else if (l->act == MDL_ACT_GELU_PY) {
            /* autograd keeps x (for x^3), a and v (for a * v) and u (for tanh's gradient) */
            add_id(s, l->in);
            s->aux_bytes += 3 * out * act;
        } else {
            add_id(s, l->out);
        }
        break;
    case MDL_L_MAXPOOL:
        add_id(s, l->in);
        s->aux_bytes += 8 * out; /* int64 indices */
        break;
    case MDL_L_MUL:
        add_id(s, l->in);
        add_id(s, l->in2);
        break;
    case MDL_L_EMBED:
        add_id(s, l->in);
        break;
    case MDL_L_ATTN:
        attention_saved(l, amp, act, act32, s);
        break;
    case MDL_L_DROPOUT:
        s->aux_bytes += out; /* bool mask */
        break;
    case MDL_L_STOCHDEPTH:
        s->aux_bytes += 4;
        break;
    case MDL_L_LOSS_CE:
        s->aux_bytes += l->rows * l->aux * (amp ? 4 : act32); /* log_softmax output */
        break;
    case MDL_L_LOSS_TRIPLET:
        add_id(s, l->in);
        add_id(s, l->in2);
        s->aux_bytes += 3 * l->aux * act; /* differences */
        break;
    case MDL_L_LOSS_INBATCH: /* mm saves its operands; the b x b matrices: pair_matrices() */
        add_id(s, l->in);
        if (l->in2 >= 0) add_id(s, l->in2);
        s->aux_bytes += (l->flags & MDL_F_INFONCE) ? 8 : 16; /* labels; hardest-pair indices */
        break;
    case MDL_L_AVGPOOL:
    case MDL_L_ADD:
    case MDL_L_ROPE:
    case MDL_L_COPY:
    case MDL_L_CAT:   /* CatBackward keeps the sizes only */
    case MDL_L_SLICE: /* as does SplitBackward */
    case MDL_L_KIND_COUNT:
        break;
    }
}

static int segment_of(int block, int n_blocks, int segments)
{
    int per = (n_blocks + segments - 1) / segments;
    return block / per;
}

/* Saved bytes per sample of the layers in checkpoint segment `seg` (-1: layers outside any
 * checkpointed segment, i.e. all of them without checkpointing), counting each tensor once;
 * tensors already marked in `seen` are skipped, and newly counted ones are marked. Layers run
 * in forward order, so a tensor is counted at the first layer that keeps it, the last whose
 * backward reads it; with checkpointing every allocation is taken as live through the whole of
 * backward (layer 0), as the recomputed segments make their lifetimes no simpler to follow. */
static double saved_bytes(const mdl_net *net, sim_precision p, unsigned char *seen, int seg,
                          int segments, alloc_list *allocs)
{
    double sum = 0;
    for (int i = 0; i < net->n_layers; i++) {
        const mdl_layer *l = &net->layers[i];
        int my = (segments && l->block >= 0) ? segment_of(l->block, net->n_blocks, segments) : -1;
        if (my != seg) continue;
        saved s;
        layer_saved(net, l, p, &s);
        int freed_after = segments ? 0 : i;
        sum += s.aux_bytes;
        alloc_add(allocs, s.aux_bytes, freed_after); /* a layer's extras: one allocation */
        for (int j = 0; j < s.n; j++)
            if (!seen[s.ids[j]]) {
                seen[s.ids[j]] = 1;
                const mdl_tensor *t = &net->tensors[s.ids[j]];
                double b = t->elems * mdl_dtype_bytes((mdl_dtype)t->dtype, p);
                sum += b;
                alloc_add(allocs, b, freed_after);
            }
    }
    return sum;
}

/* Activation bytes per sample kept for backward; each allocation's per-sample size goes to
 * allocs. */
static double activations_per_sample(const mdl_net *net, const mdl_options *o, alloc_list *allocs,
                                     int *err)
{
    unsigned char *seen = calloc((size_t)net->n_tensors + 1, 1);
    unsigned char *tmp = malloc((size_t)net->n_tensors + 1);
    if (!seen || !tmp) {
        free(seen);
        free(tmp);
        *err = SIM_ENOMEM;
        return 0;
    }
    sim_precision p = o->precision;
    int segments = 0;
    if (o->checkpointing && net->n_blocks > 0) {
        segments = o->ckpt_segments > 0 ? o->ckpt_segments : (int)ceil(sqrt((double)net->n_blocks));
        if (segments > net->n_blocks) segments = net->n_blocks;
    }
    /* stem and head, or everything */
    double sum = saved_bytes(net, p, seen, -1, segments, allocs);
    if (segments) {
        /* Each checkpointed segment keeps only its input ... */
        int last = -1;
        for (int i = 0; i < net->n_layers; i++) {
            const mdl_layer *l = &net->layers[i];
            if (l->block < 0) continue;
            int sg = segment_of(l->block, net->n_blocks, segments);
            if (sg != last && !seen[l->in]) {
                seen[l->in] = 1;
                const mdl_tensor *t = &net->tensors[l->in];
                double b = t->elems * mdl_dtype_bytes((mdl_dtype)t->dtype, p);
                sum += b;
                alloc_add(allocs, b, 0);
            }
            last = sg;
        }
        /* ... and one segment at a time holds its full activations during its backward. */
        double worst = 0;
        int worst_sg = 0;
        for (int sg = 0; sg < segments; sg++) {
            memcpy(tmp, seen, (size_t)net->n_tensors + 1);
            double b = saved_bytes(net, p, tmp, sg, segments, NULL);
            if (b > worst) {
                worst = b;
                worst_sg = sg;
            }
        }
        sum += saved_bytes(net, p, seen, worst_sg, segments, allocs);
    }
    free(seen);
    free(tmp);
    return sum;
}

/* Per-sample working set of each layer in backward, into per_layer[i] (when not NULL):
 * gradients of its input and output (eager attention: of the score matrix); returns the
 * largest. */
static double transient_per_sample(const mdl_net *net, sim_precision p, double *per_layer)
{
    double worst = 0;
    for (int i = 0; i < net->n_layers; i++) {
        const mdl_layer *l = &net->layers[i];
        double b = 0;
        if (l->in >= 0)
            b += net->tensors[l->in].elems *
                 mdl_dtype_bytes((mdl_dtype)net->tensors[l->in].dtype, p);
        if (l->out >= 0)
            b += net->tensors[l->out].elems *
                 mdl_dtype_bytes((mdl_dtype)net->tensors[l->out].dtype, p);
        if (l->kind == MDL_L_ATTN && !(l->flags & MDL_F_FLASH))
            b = 2.0 * l->heads * l->seq * l->seq * 4;
        if (l->kind == MDL_L_LOSS_CE) b = 2.0 * l->rows * l->aux * 4;
        if (per_layer) per_layer[i] = b;
        if (b > worst) worst = b;
    }
    return worst;
}

/* b x b matrices the net's in-batch losses keep for backward: InfoNCE's log_softmax output;
 * the batch-hard triplet's distance matrix (clamp and max/min backward) and its float label mask
 * (the masked product saves it). Their backward working set is two b x b gradients. */
static int pair_matrices(const mdl_net *net, int *transient)
{
    int kept = 0;
    *transient = 0;
    for (int i = 0; i < net->n_layers; i++) {
        const mdl_layer *l = &net->layers[i];
        if (l->kind != MDL_L_LOSS_INBATCH) continue;
        kept += (l->flags & MDL_F_INFONCE) ? 1 : 2;
        *transient = 2;
    }
    return kept;
}

static bool has_conv(const mdl_net *net)
{
    for (int i = 0; i < net->n_layers; i++)
        if (net->layers[i].kind == MDL_L_CONV) return true;
    return false;
}

static double largest_param_tensor(const mdl_net *net)
{
    double m = 0;
    for (int i = 0; i < net->n_layers; i++) {
        const mdl_layer *l = &net->layers[i];
        if (l->param_tensors > 0 && l->params / l->param_tensors > m)
            m = l->params / l->param_tensors;
    }
    return m;
}

/* Everything but the batch-dependent part, and the per-sample part, so that peak(b) is cheap. */
typedef struct fixed {
    double per_sample_act, per_sample_transient;
    int pair_saved, pair_transient; /* b x b matrices of MDL_PAIR_BYTES (pair_matrices) */
    alloc_list act_allocs;          /* per-sample sizes of the saved allocations */
    double param_rounding; /* of every parameter-shaped tensor: weights, grads, states, copies */
    bool grads_kept;       /* gradients live through forward and backward */
    /* Per layer, training only (backward_peak): the working set per sample, and the gradient
     * bytes backward has allocated once it reaches the layer (its parameters' and the later
     * layers'). */
    int n_layers;
    double *transient, *grads_from;
    mdl_memory base;
} fixed;

static void fixed_free(fixed *f)
{
    free(f->act_allocs.a);
    free(f->transient);
    free(f->grads_from);
}

/* Per-layer arrays of a training step's backward (fixed's comment); grads_bytes is the total. */
static int layer_arrays(const mdl_net *net, sim_precision p, double grads_bytes, fixed *f)
{
    int n = net->n_layers;
    f->n_layers = n;
    f->transient = calloc((size_t)n, sizeof *f->transient);
    f->grads_from = calloc((size_t)n, sizeof *f->grads_from);
    if (!f->transient || !f->grads_from) return SIM_ENOMEM;
    transient_per_sample(net, p, f->transient);
    double params = mdl_net_params(net), after = 0;
    for (int i = n - 1; i >= 0; i--) {
        after += net->layers[i].params;
        f->grads_from[i] = params > 0 ? grads_bytes * after / params : 0;
    }
    return SIM_OK;
}

/* Rounding of the parameter-shaped tensors: each layer's parameters taken as equal tensors,
 * each stored `copies` times at `bytes` per element (and AMP's half copies). */
static double param_rounding(const mdl_net *net, double copies, double bytes, bool amp)
{
    double sum = 0;
    for (int i = 0; i < net->n_layers; i++) {
        const mdl_layer *l = &net->layers[i];
        if (l->param_tensors <= 0) continue;
        double each = l->params / l->param_tensors;
        double r = copies * rounding_of(each * bytes) + (amp ? rounding_of(each * 2) : 0);
        sum += l->param_tensors * r;
    }
    return sum;
}

/* The optimizer's state (m->optimizer_bytes) and its temporaries at the step; returns the state
 * tensors per parameter: none without a step, SGD's momentum, Adam's two moments. wb: bytes of
 * an element the optimizer steps. Behind fp32 master weights (master: apex O2) the optimizer owns
 * the masters too, and their gradients live from the end of backward through the step. */
static double optimizer_state(const mdl_net *net, const mdl_options *o, double wb, bool master,
                              mdl_memory *m)
{
    double params = mdl_net_params(net);
    double states = o->optimizer == MDL_OPT_NONE ? 0 : o->optimizer == MDL_OPT_SGD ? 1 : 2;
    m->optimizer_bytes = params * wb * (states + master);
    if (o->optimizer == MDL_OPT_NONE) /* no step: no temporaries */
        m->optimizer_temp_bytes = 0;
    else if (o->optimizer == MDL_OPT_BERTADAM) /* two live temporaries: sqrt + e, then update */
        m->optimizer_temp_bytes = 2 * largest_param_tensor(net) * wb;
    else if (o->opt_impl == MDL_IMPL_FOREACH && (states == 2 || o->weight_decay))
        m->optimizer_temp_bytes = params * wb;
    else if (o->opt_impl == MDL_IMPL_FORLOOP)
        m->optimizer_temp_bytes = largest_param_tensor(net) * wb;
    if (master) m->optimizer_temp_bytes += params * wb;
    return states;
}

static int compute_fixed(const mdl_net *net, const mdl_options *o, fixed *f)
{
    memset(f, 0, sizeof *f);
    /* accumulation keeps the earlier micro-batches' gradients; without an optimizer nothing
     * clears them between steps */
    f->grads_kept =
        o->accum_steps > 1 || o->optimizer == MDL_OPT_NONE || mdl_zero_grad_mode(o) == MDL_ZG_ZERO;
    sim_precision p = o->precision;
    bool amp = p == SIM_PREC_AMP_FP16 || p == SIM_PREC_AMP_BF16;
    double wb = mdl_param_bytes(o), params = mdl_net_params(net);
    mdl_memory *m = &f->base;
    m->weights_bytes = params * wb;
    m->weight_copies_bytes = amp ? params * 2 : 0;
    m->workspace_bytes =
        MDL_CUBLAS_WORKSPACE_BYTES + (has_conv(net) ? MDL_CUDNN_WORKSPACE_BYTES : 0);
    m->context_bytes = MDL_CUDA_CONTEXT_BYTES;
    f->per_sample_transient = transient_per_sample(net, p, NULL);
    if (o->inference) { /* no_grad: no gradients, no optimizer, nothing kept for backward */
        f->param_rounding = param_rounding(net, 1, wb, amp);
        return SIM_OK;
    }
    m->grads_bytes = params * wb;
    /* weights, grads and states at wb; apex O2: half weights and grads, fp32 masters and states */
    bool master = mdl_master_weights(o);
    double ob = mdl_optimizer_elem_bytes(o);
    double states = optimizer_state(net, o, ob, master, m);
    f->param_rounding =
        master ? param_rounding(net, 2, wb, amp) + param_rounding(net, 1 + states, ob, false)
               : param_rounding(net, 2 + states, wb, amp);
    int err = 0;
    f->per_sample_act = activations_per_sample(net, o, &f->act_allocs, &err);
    f->pair_saved = pair_matrices(net, &f->pair_transient);
    if (err || f->act_allocs.err) return err ? err : f->act_allocs.err;
    return layer_arrays(net, p, m->grads_bytes, f);
}

/* The peak of backward at this batch, walking it from the last layer to the first: at layer i
 * the saved allocations of layers 0..i are live (those only later layers read are freed), with
 * layer i's working set and the gradients allocated so far (all of them when they are kept:
 * accumulation, no optimizer, or zero_grad() that zeroes them in place instead of freeing
 * them). *rounding gets the allocator's rounding of what is live there, *transient the
 * working set. Returns the bytes, rounding apart. */
static double backward_peak(const fixed *f, int batch, double base, double grads, double *rounding,
                            double *transient)
{
    double pair = MDL_PAIR_BYTES * batch * batch, pair_transient = f->pair_transient * pair;
    double live = base + f->pair_saved * pair, live_rounding = f->pair_saved * rounding_of(pair);
    double best = -1, best_total = -1;
    const alloc_list *s = &f->act_allocs;
    int j = 0;
    for (int i = 0; i < f->n_layers; i++) {
        for (; j < s->n && s->a[j].layer <= i; j++) { /* live from layer i down */
            double b = s->a[j].bytes * batch;
            live += b;
            live_rounding += rounding_of(b);
        }
        double t = f->transient[i] * batch;
        if (pair_transient > t) t = pair_transient;
        double bytes = live + t + (f->grads_kept ? grads : f->grads_from[i]);
        if (bytes + live_rounding > best_total) {
            best_total = bytes + live_rounding;
            best = bytes;
            *rounding = live_rounding;
            *transient = t;
        }
    }
    return best;
}

static void fill(const fixed *f, int batch, mdl_memory *m)
{
    *m = f->base;
    m->batch = batch;
    double pair = MDL_PAIR_BYTES * batch * batch, pair_transient = f->pair_transient * pair;
    m->activations_bytes = f->per_sample_act * batch + f->pair_saved * pair;
    m->transient_bytes = f->per_sample_transient * batch;
    if (pair_transient > m->transient_bytes) m->transient_bytes = pair_transient;
    m->rounding_bytes = f->param_rounding;
    double bwd = m->weight_copies_bytes + m->transient_bytes, bwd_rounding = 0;
    if (f->n_layers > 0) /* training: else the forward alone, its largest layer */
        bwd = backward_peak(f, batch, m->weight_copies_bytes, m->grads_bytes, &bwd_rounding,
                            &m->transient_bytes);
    double opt = m->grads_bytes + m->optimizer_temp_bytes;
    if (bwd + bwd_rounding >= opt) { /* the peak is in backward, with what is live there */
        m->peak_bytes = bwd;
        m->rounding_bytes += bwd_rounding;
    } else {
        m->peak_bytes = opt;
    }
    m->peak_bytes += m->weights_bytes + m->optimizer_bytes + m->workspace_bytes + m->context_bytes +
                     m->rounding_bytes;
}

static int search_max_batch(const fixed *f, double cap)
{
    mdl_memory m;
    fill(f, 1, &m);
    if (m.peak_bytes > cap) return 0;
    long lo = 1, hi = 2;
    const long limit = 1L << 24;
    for (;;) {
        fill(f, (int)hi, &m);
        if (m.peak_bytes > cap) break;
        lo = hi;
        if (hi >= limit) return (int)limit;
        hi *= 2;
    }
    while (hi - lo > 1) { /* peak(lo) fits, peak(hi) does not */
        long mid = lo + (hi - lo) / 2;
        fill(f, (int)mid, &m);
        if (m.peak_bytes > cap)
            hi = mid;
        else
            lo = mid;
    }
    return (int)lo;
}

int mdl_memory_estimate(const mdl_net *net, const mdl_options *opt, double capacity_bytes,
                        mdl_memory *out, sim_err *err)
{
    memset(out, 0, sizeof *out);
    int rc = mdl_options_check(opt, err);
    if (rc) return rc;
    if (!net || net->error || net->n_layers == 0)
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0, "memory of an empty or broken net");
    fixed f;
    if (compute_fixed(net, opt, &f)) {
        fixed_free(&f);
        return sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    fill(&f, opt->batch, out);
    out->max_batch = -1;
    if (capacity_bytes > 0) {
        out->capacity_bytes = capacity_bytes;
        out->oom = out->peak_bytes > capacity_bytes;
        out->max_batch = search_max_batch(&f, capacity_bytes);
    }
    fixed_free(&f);
    return SIM_OK;
}

void mdl_memory_verdict(const mdl_memory *m, mdl_verdict *v)
{
    v->peak_gb = m->peak_bytes / 1073741824.0;
    v->capacity_gb = m->capacity_bytes / 1073741824.0;
    v->oom = m->oom;
    v->max_batch = m->max_batch;
}
