/* net.h — layer-level description of a network for ONE sample, and the builder API the zoo uses.
 * A net is a flat list of layers in forward order; each layer reads one or two tensors and writes
 * one, all sized per sample, so the batch size only enters at expansion time (expand.h). Tensors
 * are numbered: activations saved for backward are counted once even when several layers keep
 * the same tensor (a conv's input is the previous in-place ReLU's output), see memory.h. */
#ifndef MDL_NET_H
#define MDL_NET_H

#include <stdbool.h>
#include <stdint.h>

#define MDL_LAYER_NAME_MAX 48
/* Bytes of one element of an in-batch loss's b x b matrices: fp32 under every precision (the
 * loss runs outside the half-precision matmuls; autocast keeps log_softmax and cdist in fp32). */
#define MDL_PAIR_BYTES 4.0

typedef enum mdl_layer_kind {
    MDL_L_CONV,      /* 2-D convolution as implicit GEMM; groups == channels = depthwise */
    MDL_L_LINEAR,    /* y = x W^T (+ b) over the rows of a sample; SPLIT3 = three separate GEMMs */
    MDL_L_BATCHNORM, /* training-mode batch norm (cuDNN: stats + normalize kernels) */
    MDL_L_LAYERNORM, /* one fused kernel */
    MDL_L_RMSNORM,   /* Llama-style RMSNorm written in Python: a chain of elementwise kernels */
    MDL_L_ACT,       /* elementwise activation, see mdl_act */
    MDL_L_MAXPOOL,   /* window max pooling (saves int64 indices) */
    MDL_L_AVGPOOL,   /* average pooling: global to 1x1 (a reduction), or over a kh x kw window */
    MDL_L_ADD,       /* residual add; in backward, the gradient sum at the fork */
    MDL_L_MUL,       /* elementwise product; BROADCAST = SE scale (x * s[c]) */
    MDL_L_EMBED,     /* embedding gather; aux = vocabulary size */
    MDL_L_ATTN,      /* attention core over a packed q|k|v input; FLASH = one SDPA kernel */
    MDL_L_DROPOUT,
    MDL_L_ROPE,         /* rotary embedding of q and k, HF Python: neg/cat/mul/mul/add per tensor */
    MDL_L_COPY,         /* a layout copy: permute().contiguous(), cat of a class token */
    MDL_L_STOCHDEPTH,   /* torchvision stochastic depth: bernoulli_, div_, mul */
    MDL_L_CAT,          /* torch.cat of n (`n`) images along channels: one copy kernel; aux = the
                           first input's elements per sample */
    MDL_L_SLICE,        /* one part of x.chunk(k, dim=1) made contiguous for its consumer */
    MDL_L_LOSS_CE,      /* cross-entropy over aux classes per row (log_softmax + nll_loss) */
    MDL_L_LOSS_TRIPLET, /* triplet margin loss: distance/dot, square, margin compare */
    MDL_L_LOSS_INBATCH, /* in-batch similarity loss over a b x b matrix (batch-hard triplet, or
                           InfoNCE / CLIP-style with MDL_F_INFONCE): O(b^2) time and memory */
    MDL_L_KIND_COUNT
} mdl_layer_kind;

typedef enum mdl_act {
    MDL_ACT_RELU,
    MDL_ACT_GELU,
    MDL_ACT_SILU,
    MDL_ACT_SIGMOID,
    MDL_ACT_TANH,
    MDL_ACT_RELU6, /* nn.ReLU6: hardtanh(0, 6), one elementwise kernel each way as ReLU */
    /* Hugging Face's NewGELUActivation ("gelu_new", GPT-2): the tanh GELU written as eight
     * Python tensor ops, 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))), eight
     * kernels forward and eleven backward where F.gelu runs one each. */
    MDL_ACT_GELU_PY,
} mdl_act;

/* Storage type of a tensor, resolved against the run's precision by mdl_dtype_bytes(). */
typedef enum mdl_dtype {
    MDL_DT_ACT,   /* activation type: 4 B in fp32/tf32, 2 B in fp16/bf16/AMP */
    MDL_DT_ACT32, /* fp32 under AMP (autocast's fp32 ops: layer_norm, softmax, embedding with
                     fp32 weights, images from the loader), else the activation type */
    MDL_DT_F32,
    MDL_DT_I64,
    MDL_DT_BOOL,
} mdl_dtype;

enum {
    MDL_F_BIAS = 1 << 0,      /* CONV/LINEAR: has a bias vector */
    MDL_F_NO_DGRAD = 1 << 1,  /* input needs no gradient (the net's input) */
    MDL_F_INPLACE = 1 << 2,   /* ACT/ADD write their input (no new tensor) */
    MDL_F_CAUSAL = 1 << 3,    /* ATTN: causal mask (flash computes half the scores) */
    MDL_F_FLASH = 1 << 4,     /* ATTN: F.scaled_dot_product_attention, flash kernel */
    MDL_F_MASK = 1 << 5,      /* ATTN (eager): additive attention mask */
    MDL_F_SPLIT3 = 1 << 6,    /* LINEAR: three GEMMs (separate q, k, v projections) */
    MDL_F_BROADCAST = 1 << 7, /* MUL: second operand is per channel (SE) */
    MDL_F_DROPOUT = 1 << 8,   /* ATTN (eager): dropout on the attention probabilities */
    MDL_F_INFONCE = 1 << 9,   /* LOSS_INBATCH: cross-entropy over z1 @ z2.T (else batch-hard
                                 triplet over the pairwise distances of one batch) */
    MDL_F_STRIDED = 1 << 10,  /* COPY: of a permuted view (permute().contiguous()) */
    MDL_F_SEQFIRST = 1 << 11, /* ATTN (eager): torch.bmm on head-split views of (seq, batch,
                                 hidden) tensors, NVIDIA's BERT: no q/k/v copies forward */
    MDL_F_QSCALE = 1 << 12,   /* ATTN (eager): the scaling multiplies q before the product,
                                 not the scores (Hugging Face OPT) */
    MDL_F_CLAMP = 1 << 13,    /* ATTN (eager, with MDL_F_MASK): torch.max(scores, finfo.min)
                                 after the mask add (Hugging Face OPT) */
    MDL_F_ADDMM = 1 << 14,    /* LINEAR: torch.addmm on a 2-D view (Hugging Face's Conv1D): the
                                 bias is added inside the GEMM in any PyTorch release */
    MDL_F_ACCUM = 1 << 15,    /* CAT: each input already has a gradient from a later consumer,
                                 so backward adds into it (DenseNet's growing concatenations) */
    MDL_F_ADDCMUL = 1 << 16,  /* ADD: torch.addcmul(residual, x, s) with the broadcast MUL before
                                 it, one kernel forward and one autograd node (mdl_addcmul) */
};

typedef struct mdl_tensor {
    double elems;  /* per sample */
    uint8_t dtype; /* mdl_dtype */
} mdl_tensor;

typedef struct mdl_layer {
    char name[MDL_LAYER_NAME_MAX]; /* e.g. "layer1.0.conv2" */
    uint8_t kind;                  /* mdl_layer_kind */
    uint8_t act;                   /* ACT: mdl_act */
    uint32_t flags;                /* MDL_F_* */
    int block;                     /* checkpointable block (residual block, transformer layer);
                                      -1 = stem/head, never checkpointed */
    int in, in2, out;              /* tensor ids (in2 = -1 when unused) */
    int shares;                    /* layer whose weights this one reuses; -1 = its own */
    /* GEMM view of CONV/LINEAR per sample: out = m rows x n, reduction k (per group). */
    double m;
    int64_t n, k;
    int groups;
    int kh, kw, stride;       /* CONV/MAXPOOL window */
    int in_h, in_w;           /* CONV/MAXPOOL input spatial size */
    double params;            /* trainable parameters owned by this layer */
    int param_tensors;        /* how many tensors they live in (weight, bias, gamma, beta) */
    int heads, seq, head_dim; /* ATTN */
    double rows;              /* rows of a sample the layer works on (tokens, positions) */
    double aux;               /* EMBED: vocab; LOSS_CE: classes; TRIPLET, INBATCH: embedding
                                 dim */
} mdl_layer;

/* A network for one sample. Builder calls never fail loudly: an allocation failure or a bad
 * shape sets `error` (a SIM_E* code) and `error_msg`, later calls do nothing, and the caller
 * checks `error` once at the end. */
typedef struct mdl_net {
    char name[64];
    mdl_layer *layers;
    int n_layers, cap_layers;
    mdl_tensor *tensors;
    int n_tensors, cap_tensors;
    int n_blocks;  /* checkpointable blocks (ids 0 .. n_blocks-1) */
    int cur_block; /* block the builder assigns to new layers; -1 = none */
    int error;
    char error_msg[160];
} mdl_net;

/* A value flowing through the builder: tensor id and shape. Images: c x h x w. Sequences:
 * c = features, h = rows (tokens), w = 1. Vectors: c features, h = w = 1. */
typedef struct mdl_val {
    int t;
    int c, h, w;
} mdl_val;

/* Starts an empty net whose input is a c x h x w tensor of dtype dt (tensor 0). */
void mdl_net_init(mdl_net *net, const char *name, int c, int h, int w, mdl_dtype dt,
                  mdl_val *input);
/* Releases the arrays and zeroes the net. */
void mdl_net_free(mdl_net *net);
/* Opens a new checkpointable block for the layers that follow; mdl_net_end_block closes it. */
void mdl_net_begin_block(mdl_net *net);
/* Switches every attention layer to F.scaled_dot_product_attention (sdpa true) or to the eager
 * matmul-softmax-matmul chain (false), keeping its causal, mask and dropout flags. */
void mdl_net_set_attention(mdl_net *net, bool sdpa);
void mdl_net_end_block(mdl_net *net);

/* Builder: each call appends one layer and returns its output value. NAME is copied. */
mdl_val mdl_conv(mdl_net *net, const char *name, mdl_val x, int c_out, int k, int stride, int pad,
                 int groups, bool bias);
mdl_val mdl_bn(mdl_net *net, const char *name, mdl_val x);
mdl_val mdl_act_layer(mdl_net *net, const char *name, mdl_val x, mdl_act act, bool inplace);
mdl_val mdl_maxpool(mdl_net *net, const char *name, mdl_val x, int k, int stride, int pad);
mdl_val mdl_avgpool(mdl_net *net, const char *name, mdl_val x); /* to c x 1 x 1 */
/* nn.MaxPool2d(k, stride, 0, ceil_mode=True): a last window may start inside the input and run
 * past it. */
mdl_val mdl_maxpool_ceil(mdl_net *net, const char *name, mdl_val x, int k, int stride);
/* nn.AvgPool2d(k, stride) over windows, no padding. */
mdl_val mdl_avgpool_window(mdl_net *net, const char *name, mdl_val x, int k, int stride);
/* torch.cat(xs[0..n-1], dim=1) of images of one spatial size; accum: see MDL_F_ACCUM. An input
 * may be a channel view of a larger tensor (mdl_view), as x.chunk's first part. */
mdl_val mdl_cat(mdl_net *net, const char *name, const mdl_val *xs, int n, bool accum);
/* One part of x.chunk(parts, dim=1) (all parts cost alike), copied to a contiguous tensor as the
 * convolution that reads it does (cudnn_convolution's input.contiguous()); its backward joins the
 * parts' gradients (SplitBackward's cat), so a chunk takes one such part. */
mdl_val mdl_chunk_copy(mdl_net *net, const char *name, mdl_val x, int parts);
mdl_val mdl_add(mdl_net *net, const char *name, mdl_val a, mdl_val b, bool inplace);
mdl_val mdl_mul(mdl_net *net, const char *name, mdl_val a, mdl_val b); /* b may be c x 1 x 1 */
/* torch.addcmul(residual, x, s): residual + x * s, s per channel (c x 1 x 1), as a broadcast MUL
 * `name`.mul and an in-place ADD `name` flagged MDL_F_ADDCMUL (one kernel, expand.c). */
mdl_val mdl_addcmul(mdl_net *net, const char *name, mdl_val residual, mdl_val x, mdl_val s);
mdl_val mdl_linear(mdl_net *net, const char *name, mdl_val x, int out, bool bias);
mdl_val mdl_linear_qkv(mdl_net *net, const char *name, mdl_val x, int out_each, bool bias);
mdl_val mdl_layernorm(mdl_net *net, const char *name, mdl_val x);
mdl_val mdl_rmsnorm(mdl_net *net, const char *name, mdl_val x);
mdl_val mdl_embed(mdl_net *net, const char *name, mdl_val ids, int vocab, int dim);
/* Attention core: qkv is rows x 3*dim; returns rows x dim. flags: CAUSAL, FLASH, MASK, DROPOUT */
mdl_val mdl_attention(mdl_net *net, const char *name, mdl_val qkv, int heads, unsigned flags);
mdl_val mdl_rope(mdl_net *net, const char *name, mdl_val qkv);
mdl_val mdl_dropout(mdl_net *net, const char *name, mdl_val x);
mdl_val mdl_stochdepth(mdl_net *net, const char *name, mdl_val x);
/* A copy producing a value of the given shape (cat of a class token, permute + contiguous). */
mdl_val mdl_copy(mdl_net *net, const char *name, mdl_val x, int c, int h, int w);
/* permute(...).contiguous() of x (heads back into the hidden dimension): a copy of a strided view,
 * same shape. */
mdl_val mdl_permute(mdl_net *net, const char *name, mdl_val x);
/* Reinterprets a value's shape without a kernel (flatten, view). */
mdl_val mdl_view(mdl_val x, int c, int h, int w);
/* Losses: cross-entropy over `classes` per row; triplet loss over 3 embeddings of dim c. */
mdl_val mdl_loss_ce(mdl_net *net, const char *name, mdl_val logits, int classes);
mdl_val mdl_loss_triplet(mdl_net *net, const char *name, mdl_val anchor, mdl_val pos, mdl_val neg);
/* In-batch similarity loss: every sample's embedding against every other's in the batch. Without
 * MDL_F_INFONCE, a batch-hard triplet loss over the pairwise distances of z1 with itself (z2
 * must be z1); with it, cross-entropy over the logits z1 @ z2.T (two views of each sample). The
 * two embeddings must have the same dimension. */
mdl_val mdl_loss_inbatch(mdl_net *net, const char *name, mdl_val z1, mdl_val z2, unsigned flags);
/* Marks the last layer as reusing the weights of layer `owner` (tied embeddings, shared
 * encoders): its parameters are not counted again, and backward sums the two gradients. */
void mdl_share_last(mdl_net *net, int owner);
/* Marks the last layer, a linear with a bias, as calling torch.addmm on a 2-D view of its input
 * (MDL_F_ADDMM): no release adds that bias in a kernel of its own. */
void mdl_addmm_last(mdl_net *net);
/* Adds parameters that are not a layer's weights to the last layer (ViT's class token and
 * position embedding): counted and updated by the optimizer; backward reduces their gradient
 * over the batch with one kernel. */
void mdl_extra_params(mdl_net *net, double params, int tensors);

/* Trainable parameters of the net, and the number of parameter tensors. */
double mdl_net_params(const mdl_net *net);
int mdl_net_param_tensors(const mdl_net *net);
/* Forward multiply-accumulates of one sample in conv, linear and attention matmuls (the figure
 * model cards quote as "GFLOPs"/"GMACs"); causal flash attention counts the half it computes. */
double mdl_net_fwd_macs(const mdl_net *net);

#endif
