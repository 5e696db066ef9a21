/* net.c — the per-sample layer list and its builder (see net.h).
 * Builder calls append and track shapes; the first failure is latched in net->error so model
 * definitions read as straight-line code and are checked once at the end. */
#include "models/net.h"

#include "sim/base/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(mdl_net *net, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail(mdl_net *net, int code, const char *fmt, ...)
{
    if (net->error) return;
    net->error = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(net->error_msg, sizeof net->error_msg, fmt, ap);
    va_end(ap);
}

static int new_tensor(mdl_net *net, double elems, mdl_dtype dt)
{
    if (net->error) return -1;
    if (net->n_tensors == net->cap_tensors) {
        int cap = net->cap_tensors ? 2 * net->cap_tensors : 64;
        mdl_tensor *t = realloc(net->tensors, (size_t)cap * sizeof *t);
        if (!t) {
            fail(net, SIM_ENOMEM, "out of memory building %s", net->name);
            return -1;
        }
        net->tensors = t;
        net->cap_tensors = cap;
    }
    net->tensors[net->n_tensors] = (mdl_tensor){.elems = elems, .dtype = (uint8_t)dt};
    return net->n_tensors++;
}

/* Appends a layer (copied from proto, named NAME) and returns it, or NULL after a failure. */
static mdl_layer *new_layer(mdl_net *net, const char *name, mdl_layer_kind kind)
{
    if (net->error) return NULL;
    if (net->n_layers == net->cap_layers) {
        int cap = net->cap_layers ? 2 * net->cap_layers : 64;
        mdl_layer *l = realloc(net->layers, (size_t)cap * sizeof *l);
        if (!l) {
            fail(net, SIM_ENOMEM, "out of memory building %s", net->name);
            return NULL;
        }
        net->layers = l;
        net->cap_layers = cap;
    }
    mdl_layer *l = &net->layers[net->n_layers++];
    memset(l, 0, sizeof *l);
    snprintf(l->name, sizeof l->name, "%s", name);
    l->kind = (uint8_t)kind;
    l->block = net->cur_block;
    l->in = l->in2 = l->out = -1;
    l->shares = -1;
    l->groups = 1;
    return l;
}

static mdl_val bad(void)
{
    return (mdl_val){.t = -1};
}

static double elems(mdl_val v)
{
    return (double)v.c * v.h * v.w;
}

static bool check_in(mdl_net *net, const char *name, mdl_val x)
{
    if (net->error) return false;
    if (x.t < 0 || x.t >= net->n_tensors || x.c <= 0 || x.h <= 0 || x.w <= 0) {
        fail(net, SIM_EINVAL, "%s: input has an invalid shape %dx%dx%d", name, x.c, x.h, x.w);
        return false;
    }
    return true;
}

/* Output value of layer l with shape c x h x w in a new tensor of type dt. */
static mdl_val out_val(mdl_net *net, mdl_layer *l, int c, int h, int w, mdl_dtype dt)
{
    int t = new_tensor(net, (double)c * h * w, dt);
    if (t < 0) return bad();
    l->out = t;
    return (mdl_val){.t = t, .c = c, .h = h, .w = w};
}

static mdl_dtype dtype_of(const mdl_net *net, mdl_val x)
{
    return (mdl_dtype)net->tensors[x.t].dtype;
}

void mdl_net_init(mdl_net *net, const char *name, int c, int h, int w, mdl_dtype dt, mdl_val *input)
{
    memset(net, 0, sizeof *net);
    snprintf(net->name, sizeof net->name, "%s", name);
    net->cur_block = -1;
    int t = new_tensor(net, (double)c * h * w, dt);
    *input = (mdl_val){.t = t, .c = c, .h = h, .w = w};
}

void mdl_net_free(mdl_net *net)
{
    free(net->layers);
    free(net->tensors);
    memset(net, 0, sizeof *net);
}

/* SDPA runs one fused kernel each way whatever the flags: the flash kernel without an additive
 * mask, the memory-efficient one with it (PyTorch's SDPA backend selection); both keep O(s)
 * state per row instead of the s x s probabilities. expand.c prices both as the flash kernel. */
void mdl_net_set_attention(mdl_net *net, bool sdpa)
{
    for (int i = 0; i < net->n_layers; i++) {
        mdl_layer *l = &net->layers[i];
        if (l->kind != MDL_L_ATTN) continue;
        l->flags = (uint16_t)(sdpa ? l->flags | MDL_F_FLASH : l->flags & ~MDL_F_FLASH);
    }
}

void mdl_net_begin_block(mdl_net *net)
{
    net->cur_block = net->n_blocks++;
}

void mdl_net_end_block(mdl_net *net)
{
    net->cur_block = -1;
}

/* Starts a layer that reads x: checks x, appends the layer and records its input tensor and
 * the rows (spatial positions) it works over. NULL when x is bad or the net is out of memory. */
static mdl_layer *layer_on(mdl_net *net, const char *name, mdl_val x, mdl_layer_kind kind)
{
    if (!check_in(net, name, x)) return NULL;
    mdl_layer *l = new_layer(net, name, kind);
    if (!l) return NULL;
    l->in = x.t;
    l->rows = (double)x.h * x.w;
    return l;
}

mdl_val mdl_conv(mdl_net *net, const char *name, mdl_val x, int c_out, int k, int stride, int pad,
                 int groups, bool bias)
{
    if (!check_in(net, name, x)) return bad();
    if (groups < 1 || x.c % groups || c_out % groups || stride < 1 || k < 1) {
        fail(net, SIM_EINVAL, "%s: bad convolution (c_in %d, c_out %d, groups %d)", name, x.c,
             c_out, groups);
        return bad();
    }
    int ho = (x.h + 2 * pad - k) / stride + 1, wo = (x.w + 2 * pad - k) / stride + 1;
    if (x.h + 2 * pad < k || x.w + 2 * pad < k || ho < 1 || wo < 1) {
        fail(net, SIM_EINVAL, "%s: input %dx%d is too small for a %dx%d window", name, x.h, x.w, k,
             k);
        return bad();
    }
    mdl_layer *l = new_layer(net, name, MDL_L_CONV);
    if (!l) return bad();
    l->in = x.t;
    l->flags = (uint16_t)((bias ? MDL_F_BIAS : 0) | (x.t == 0 ? MDL_F_NO_DGRAD : 0));
    l->m = (double)ho * wo;
    l->n = c_out;
    l->k = (int64_t)(x.c / groups) * k * k;
    l->groups = groups;
    l->kh = l->kw = k;
    l->stride = stride;
    l->in_h = x.h;
    l->in_w = x.w;
    l->rows = l->m;
    l->params = (double)c_out * (x.c / groups) * k * k + (bias ? c_out : 0);
    l->param_tensors = bias ? 2 : 1;
    return out_val(net, l, c_out, ho, wo, MDL_DT_ACT);
}

mdl_val mdl_bn(mdl_net *net, const char *name, mdl_val x)
{
    mdl_layer *l = layer_on(net, name, x, MDL_L_BATCHNORM);
    if (!l) return bad();
    l->n = x.c;
    l->params = 2.0 * x.c;
    l->param_tensors = 2;
    return out_val(net, l, x.c, x.h, x.w, dtype_of(net, x));
}

mdl_val mdl_act_layer(mdl_net *net, const char *name, mdl_val x, mdl_act act, bool inplace)
{
    mdl_layer *l = layer_on(net, name, x, MDL_L_ACT);
    if (!l) return bad();
    l->act = (uint8_t)act;
    if (inplace) {
        l->flags |= MDL_F_INPLACE;
        l->out = x.t;
        return x;
    }
    return out_val(net, l, x.c, x.h, x.w, dtype_of(net, x));
}

/* Output size of a pooling window over n inputs: PyTorch's pooling_output_shape (with ceil_mode,
 * the last window must start inside the input or its left padding). */
static int pool_out(int n, int k, int stride, int pad, bool ceil_mode)
{
    int span = n + 2 * pad - k;
    int out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
    if (ceil_mode && (out - 1) * stride >= n + pad) out--;
    return out;
}

/* A window pooling layer of `kind` reading x; NULL (and the net failed) when x is too small. */
static mdl_layer *pool_layer(mdl_net *net, const char *name, mdl_val x, mdl_layer_kind kind, int k,
                             int stride, int pad, bool ceil_mode, int *ho, int *wo)
{
    if (!check_in(net, name, x)) return NULL;
    if (stride < 1 || k < 1 || x.h + 2 * pad < k || x.w + 2 * pad < k) {
        fail(net, SIM_EINVAL, "%s: input %dx%d is too small for a %dx%d pool", name, x.h, x.w, k,
             k);
        return NULL;
    }
    *ho = pool_out(x.h, k, stride, pad, ceil_mode);
    *wo = pool_out(x.w, k, stride, pad, ceil_mode);
    mdl_layer *l = new_layer(net, name, kind);
    if (!l) return NULL;
    l->in = x.t;
    l->kh = l->kw = k;
    l->stride = stride;
    l->in_h = x.h;
    l->in_w = x.w;
    l->rows = (double)*ho * *wo;
    return l;
}

static mdl_val maxpool(mdl_net *net, const char *name, mdl_val x, int k, int stride, int pad,
                       bool ceil_mode)
{
    int ho, wo;
    mdl_layer *l = pool_layer(net, name, x, MDL_L_MAXPOOL, k, stride, pad, ceil_mode, &ho, &wo);
    if (!l) return bad();
    return out_val(net, l, x.c, ho, wo, dtype_of(net, x));
}

mdl_val mdl_maxpool(mdl_net *net, const char *name, mdl_val x, int k, int stride, int pad)
{
    return maxpool(net, name, x, k, stride, pad, false);
}

mdl_val mdl_maxpool_ceil(mdl_net *net, const char *name, mdl_val x, int k, int stride)
{
    return maxpool(net, name, x, k, stride, 0, true);
}

mdl_val mdl_avgpool_window(mdl_net *net, const char *name, mdl_val x, int k, int stride)
{
    int ho, wo;
    mdl_layer *l = pool_layer(net, name, x, MDL_L_AVGPOOL, k, stride, 0, false, &ho, &wo);
    if (!l) return bad();
    return out_val(net, l, x.c, ho, wo, dtype_of(net, x));
}

mdl_val mdl_cat(mdl_net *net, const char *name, const mdl_val *xs, int n, bool accum)
{
    if (net->error) return bad();
    if (n < 1) {
        fail(net, SIM_EINVAL, "%s: a concatenation of no inputs", name);
        return bad();
    }
    int c = 0;
    for (int i = 0; i < n; i++) {
        if (!check_in(net, name, xs[i])) return bad();
        if (xs[i].h != xs[0].h || xs[i].w != xs[0].w) {
            fail(net, SIM_EINVAL, "%s: input %d is %dx%d, input 0 %dx%d", name, i, xs[i].h, xs[i].w,
                 xs[0].h, xs[0].w);
            return bad();
        }
        c += xs[i].c;
    }
    mdl_layer *l = layer_on(net, name, xs[0], MDL_L_CAT);
    if (!l) return bad();
    l->n = n;
    l->aux = elems(xs[0]);
    if (accum) l->flags |= MDL_F_ACCUM;
    return out_val(net, l, c, xs[0].h, xs[0].w, dtype_of(net, xs[0]));
}

mdl_val mdl_chunk_copy(mdl_net *net, const char *name, mdl_val x, int parts)
{
    if (!check_in(net, name, x)) return bad();
    if (parts < 1 || x.c % parts) {
        fail(net, SIM_EINVAL, "%s: %d channels in %d parts", name, x.c, parts);
        return bad();
    }
    mdl_layer *l = layer_on(net, name, x, MDL_L_SLICE);
    if (!l) return bad();
    return out_val(net, l, x.c / parts, x.h, x.w, dtype_of(net, x));
}

mdl_val mdl_avgpool(mdl_net *net, const char *name, mdl_val x)
{
    mdl_layer *l = layer_on(net, name, x, MDL_L_AVGPOOL);
    if (!l) return bad();
    return out_val(net, l, x.c, 1, 1, dtype_of(net, x));
}

static mdl_dtype wider(mdl_dtype a, mdl_dtype b)
{
    /* fp16 + fp32 promotes to fp32: under AMP a residual stream fed by a LayerNorm is fp32. */
    return (a == MDL_DT_ACT32 || b == MDL_DT_ACT32) ? MDL_DT_ACT32 : a;
}

mdl_val mdl_add(mdl_net *net, const char *name, mdl_val a, mdl_val b, bool inplace)
{
    if (!check_in(net, name, a) || !check_in(net, name, b)) return bad();
    if (elems(a) != elems(b)) {
        fail(net, SIM_EINVAL, "%s: adding %g to %g elements", name, elems(a), elems(b));
        return bad();
    }
    mdl_layer *l = new_layer(net, name, MDL_L_ADD);
    if (!l) return bad();
    l->in = a.t;
    l->in2 = b.t;
    l->rows = (double)a.h * a.w;
    if (inplace) {
        l->flags |= MDL_F_INPLACE;
        l->out = a.t;
        return a;
    }
    return out_val(net, l, a.c, a.h, a.w, wider(dtype_of(net, a), dtype_of(net, b)));
}

mdl_val mdl_mul(mdl_net *net, const char *name, mdl_val a, mdl_val b)
{
    if (!check_in(net, name, a) || !check_in(net, name, b)) return bad();
    bool bcast = elems(b) != elems(a);
    if (bcast && !(b.c == a.c && b.h == 1 && b.w == 1)) {
        fail(net, SIM_EINVAL, "%s: cannot broadcast %dx%dx%d over %dx%dx%d", name, b.c, b.h, b.w,
             a.c, a.h, a.w);
        return bad();
    }
    mdl_layer *l = new_layer(net, name, MDL_L_MUL);
    if (!l) return bad();
    l->in = a.t;
    l->in2 = b.t;
    l->rows = (double)a.h * a.w;
    if (bcast) l->flags |= MDL_F_BROADCAST;
    return out_val(net, l, a.c, a.h, a.w, dtype_of(net, a));
}

mdl_val mdl_addcmul(mdl_net *net, const char *name, mdl_val residual, mdl_val x, mdl_val s)
{
    if (net->error) return bad();
    if (s.c != x.c || s.h != 1 || s.w != 1) {
        fail(net, SIM_EINVAL, "%s: addcmul's scale must be %dx1x1", name, x.c);
        return bad();
    }
    char mul[MDL_LAYER_NAME_MAX + 8];
    snprintf(mul, sizeof mul, "%s.mul", name);
    mdl_val y = mdl_add(net, name, mdl_mul(net, mul, x, s), residual, true);
    if (!net->error) net->layers[net->n_layers - 1].flags |= MDL_F_ADDCMUL;
    return y;
}

static mdl_val linear(mdl_net *net, const char *name, mdl_val x, int out, bool bias, bool split3)
{
    if (!check_in(net, name, x)) return bad();
    if (out < 1) {
        fail(net, SIM_EINVAL, "%s: %d outputs", name, out);
        return bad();
    }
    mdl_layer *l = new_layer(net, name, MDL_L_LINEAR);
    if (!l) return bad();
    int parts = split3 ? 3 : 1;
    l->in = x.t;
    l->flags = (uint16_t)((bias ? MDL_F_BIAS : 0) | (split3 ? MDL_F_SPLIT3 : 0) |
                          (x.t == 0 ? MDL_F_NO_DGRAD : 0));
    l->rows = l->m = (double)x.h * x.w;
    l->n = (int64_t)out * parts;
    l->k = x.c;
    l->params = (double)x.c * out * parts + (bias ? (double)out * parts : 0);
    l->param_tensors = parts * (bias ? 2 : 1);
    return out_val(net, l, out * parts, x.h, x.w, MDL_DT_ACT);
}

mdl_val mdl_linear(mdl_net *net, const char *name, mdl_val x, int out, bool bias)
{
    return linear(net, name, x, out, bias, false);
}

mdl_val mdl_linear_qkv(mdl_net *net, const char *name, mdl_val x, int out_each, bool bias)
{
    return linear(net, name, x, out_each, bias, true);
}

mdl_val mdl_layernorm(mdl_net *net, const char *name, mdl_val x)
{
    mdl_layer *l = layer_on(net, name, x, MDL_L_LAYERNORM);
    if (!l) return bad();
    l->n = x.c;
    l->params = 2.0 * x.c;
    l->param_tensors = 2;
    return out_val(net, l, x.c, x.h, x.w, MDL_DT_ACT32);
}

mdl_val mdl_rmsnorm(mdl_net *net, const char *name, mdl_val x)
{
    mdl_layer *l = layer_on(net, name, x, MDL_L_RMSNORM);
    if (!l) return bad();
    l->n = x.c;
    l->params = x.c;
    l->param_tensors = 1;
    /* HF LlamaRMSNorm returns weight * hidden.to(input_dtype): the input's type. */
    return out_val(net, l, x.c, x.h, x.w, dtype_of(net, x));
}

mdl_val mdl_embed(mdl_net *net, const char *name, mdl_val ids, int vocab, int dim)
{
    mdl_layer *l = layer_on(net, name, ids, MDL_L_EMBED);
    if (!l) return bad();
    l->flags = MDL_F_NO_DGRAD;
    l->rows = elems(ids);
    l->n = dim;
    l->aux = vocab;
    l->params = (double)vocab * dim;
    l->param_tensors = 1;
    return out_val(net, l, dim, (int)elems(ids), 1, MDL_DT_ACT32);
}

mdl_val mdl_attention(mdl_net *net, const char *name, mdl_val qkv, int heads, unsigned flags)
{
    if (!check_in(net, name, qkv)) return bad();
    if (qkv.c % 3 || heads < 1 || (qkv.c / 3) % heads) {
        fail(net, SIM_EINVAL, "%s: %d packed features do not split into q,k,v of %d heads", name,
             qkv.c, heads);
        return bad();
    }
    mdl_layer *l = new_layer(net, name, MDL_L_ATTN);
    if (!l) return bad();
    int dim = qkv.c / 3;
    l->in = qkv.t;
    l->flags = (uint16_t)flags;
    l->heads = heads;
    l->seq = qkv.h * qkv.w;
    l->rows = l->seq;
    l->head_dim = dim / heads;
    return out_val(net, l, dim, qkv.h, qkv.w, MDL_DT_ACT);
}

mdl_val mdl_rope(mdl_net *net, const char *name, mdl_val qkv)
{
    mdl_layer *l = layer_on(net, name, qkv, MDL_L_ROPE);
    if (!l) return bad();
    l->n = qkv.c / 3; /* q and k are rotated, v passes through */
    return out_val(net, l, qkv.c, qkv.h, qkv.w, dtype_of(net, qkv));
}

mdl_val mdl_dropout(mdl_net *net, const char *name, mdl_val x)
{
    mdl_layer *l = layer_on(net, name, x, MDL_L_DROPOUT);
    if (!l) return bad();
    return out_val(net, l, x.c, x.h, x.w, dtype_of(net, x));
}

mdl_val mdl_stochdepth(mdl_net *net, const char *name, mdl_val x)
{
    mdl_layer *l = layer_on(net, name, x, MDL_L_STOCHDEPTH);
    if (!l) return bad();
    return out_val(net, l, x.c, x.h, x.w, dtype_of(net, x));
}

static mdl_val copy_layer(mdl_net *net, const char *name, mdl_val x, int c, int h, int w,
                          uint32_t flags)
{
    mdl_layer *l = layer_on(net, name, x, MDL_L_COPY);
    if (!l) return bad();
    l->rows = (double)h * w;
    l->flags |= flags;
    return out_val(net, l, c, h, w, dtype_of(net, x));
}

mdl_val mdl_copy(mdl_net *net, const char *name, mdl_val x, int c, int h, int w)
{
    return copy_layer(net, name, x, c, h, w, 0);
}

mdl_val mdl_permute(mdl_net *net, const char *name, mdl_val x)
{
    return copy_layer(net, name, x, x.c, x.h, x.w, MDL_F_STRIDED);
}

mdl_val mdl_view(mdl_val x, int c, int h, int w)
{
    return (mdl_val){.t = x.t, .c = c, .h = h, .w = w};
}

mdl_val mdl_loss_ce(mdl_net *net, const char *name, mdl_val logits, int classes)
{
    if (!check_in(net, name, logits)) return bad();
    if (logits.c != classes) {
        fail(net, SIM_EINVAL, "%s: %d logits for %d classes", name, logits.c, classes);
        return bad();
    }
    mdl_layer *l = new_layer(net, name, MDL_L_LOSS_CE);
    if (!l) return bad();
    l->in = logits.t;
    l->rows = (double)logits.h * logits.w;
    l->aux = classes;
    return out_val(net, l, 1, 1, 1, MDL_DT_F32);
}

mdl_val mdl_loss_triplet(mdl_net *net, const char *name, mdl_val anchor, mdl_val pos, mdl_val neg)
{
    if (!check_in(net, name, anchor) || !check_in(net, name, pos) || !check_in(net, name, neg))
        return bad();
    mdl_layer *l = new_layer(net, name, MDL_L_LOSS_TRIPLET);
    if (!l) return bad();
    l->in = anchor.t;
    l->in2 = pos.t;
    l->rows = 1;
    l->aux = anchor.c;
    return out_val(net, l, 1, 1, 1, MDL_DT_F32);
}

mdl_val mdl_loss_inbatch(mdl_net *net, const char *name, mdl_val z1, mdl_val z2, unsigned flags)
{
    if (!check_in(net, name, z1) || !check_in(net, name, z2)) return bad();
    bool two_views = flags & MDL_F_INFONCE;
    if (z1.c != z2.c || (!two_views && z1.t != z2.t)) {
        fail(net, SIM_EINVAL, "%s: %s", name,
             two_views ? "the two views' embeddings differ in size"
                       : "a batch-hard triplet loss compares one batch with itself");
        return bad();
    }
    mdl_layer *l = new_layer(net, name, MDL_L_LOSS_INBATCH);
    if (!l) return bad();
    l->flags = (uint16_t)(flags & MDL_F_INFONCE);
    l->in = z1.t;
    l->in2 = two_views ? z2.t : -1;
    l->rows = 1;
    l->aux = z1.c;
    return out_val(net, l, 1, 1, 1, MDL_DT_F32);
}

void mdl_share_last(mdl_net *net, int owner)
{
    if (net->error || net->n_layers == 0) return;
    mdl_layer *l = &net->layers[net->n_layers - 1];
    if (owner < 0 || owner >= net->n_layers - 1) {
        fail(net, SIM_EINVAL, "%s: shares weights with a layer that does not exist", l->name);
        return;
    }
    l->shares = owner;
    l->params = 0;
    l->param_tensors = 0;
}

void mdl_addmm_last(mdl_net *net)
{
    if (net->error || net->n_layers == 0) return;
    mdl_layer *l = &net->layers[net->n_layers - 1];
    if (l->kind != MDL_L_LINEAR || !(l->flags & MDL_F_BIAS)) {
        fail(net, SIM_EINVAL, "%s: addmm needs a linear with a bias", l->name);
        return;
    }
    l->flags |= MDL_F_ADDMM;
}

void mdl_extra_params(mdl_net *net, double params, int tensors)
{
    if (net->error || net->n_layers == 0) return;
    mdl_layer *l = &net->layers[net->n_layers - 1];
    l->params += params;
    l->param_tensors += tensors;
}

double mdl_net_params(const mdl_net *net)
{
    double p = 0;
    for (int i = 0; i < net->n_layers; i++)
        p += net->layers[i].params;
    return p;
}

int mdl_net_param_tensors(const mdl_net *net)
{
    int n = 0;
    for (int i = 0; i < net->n_layers; i++)
        n += net->layers[i].param_tensors;
    return n;
}

double mdl_net_fwd_macs(const mdl_net *net)
{
    double macs = 0;
    for (int i = 0; i < net->n_layers; i++) {
        const mdl_layer *l = &net->layers[i];
        if (l->kind == MDL_L_CONV || l->kind == MDL_L_LINEAR)
            macs += l->m * (double)l->n * (double)l->k;
        else if (l->kind == MDL_L_ATTN) {
            double s = l->seq, a = 2.0 * l->heads * s * s * l->head_dim;
            if ((l->flags & MDL_F_CAUSAL) && (l->flags & MDL_F_FLASH)) a *= 0.5;
            macs += a;
        }
    }
    return macs;
}
