/* kclass.c — kernel unit and precision from names, op FLOPs/bytes from shapes (see kclass.h).
 * Kernel names follow the vendors' conventions: cuBLAS/cuDNN encode the instruction shape
 * (h884 = fp16 HMMA 8x8x4 on Volta, s1688 = tf32/fp32-accumulate 16x8x8 on Ampere, 16816 = fp16 or
 * bf16 16x8x16), CUTLASS says `tensorop` or `simt`, cuDNN's xmma kernels always use tensor cores,
 * and `sgemm`/`scudnn` without those marks run fp32 on CUDA cores. */
#include "traces/kclass.h"

#include "traces/trace.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

/* Lower-cased copy of at most cap-1 bytes of s, with "fbgemm" (Facebook's embedding library,
 * whose kernels are gathers and scatters) masked so that it does not read as a GEMM. */
static void lower(const char *s, char *buf, size_t cap)
{
    size_t i = 0;
    for (; s[i] && i + 1 < cap; i++)
        buf[i] = (char)tolower((unsigned char)s[i]);
    buf[i] = 0;
    for (char *p = strstr(buf, "fbgemm"); p; p = strstr(p, "fbgemm"))
        memcpy(p, "fb_g_m", 6);
}

static int has(const char *s, const char *needle)
{
    return strstr(s, needle) != NULL;
}

/* An MMA instruction shape such as "884", "1688", "16816", "8816" right after a letter
 * (h884gemm, s1688gemm, i8816, bf16816): digits alone could be template arguments. */
static int has_mma_shape(const char *s)
{
    static const char *const shapes[] = {"884", "1688", "16816", "8816", "16832"};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        for (const char *p = strstr(s, shapes[i]); p; p = strstr(p + 1, shapes[i])) {
            if (p > s && isalpha((unsigned char)p[-1])) return 1;
        }
    }
    return 0;
}

/* Kernels from GEMM/conv libraries that are bandwidth-bound helpers, not matrix math. */
static int is_gemm_helper(const char *s)
{
    return has(s, "gemv") || has(s, "splitkreduce") || has(s, "splitk_reduce") ||
           has(s, "reducesplitk") || has(s, "reduction::") || has(s, "im2col") ||
           has(s, "reduce_wgrad") || has(s, "offsetskernel") || has(s, "winograd_nonfused") ||
           has(s, "nchwtonhwc") || has(s, "nhwctonchw") || has(s, "scalepackedtensor") ||
           has(s, "converttensor") || has(s, "transpose");
}

static int is_tensor_core(const char *s)
{
    return has(s, "tensorop") || has(s, "xmma") || has(s, "hmma") || has(s, "wmma") ||
           has(s, "imma") || has(s, "tensor16x8") || has(s, "tf32") || has(s, "flash_fwd") ||
           has(s, "flash_bwd") || has(s, "fmha") || has_mma_shape(s);
}

static int is_gemm_family(const char *s)
{
    return has(s, "gemm") || has(s, "scudnn") || has(s, "dcudnn") || has(s, "hcudnn") ||
           has(s, "implicit_convolve") || has(s, "explicit_convolve") || has(s, "convolve") ||
           has(s, "wgrad") || has(s, "dgrad") || has(s, "fprop") || has(s, "cutlass") ||
           has(s, "conv2d");
}

int trc_kernel_is_conv(const char *name)
{
    static const char *const conv[] = {"conv",  "cudnn",    "wgrad",   "dgrad",
                                       "fprop", "winograd", "implicit"};
    for (const char *s = name; *s; s++) {
        int c = tolower((unsigned char)*s); /* the patterns' first letters: few full compares */
        for (size_t i = 0; i < sizeof conv / sizeof conv[0]; i++)
            if (c == conv[i][0] && !strncasecmp(s, conv[i], strlen(conv[i]))) return 1;
    }
    return 0;
}

int trc_kernel_is_nccl(const char *name)
{
    return !strncmp(name, "nccl", 4) || strstr(name, " nccl") || strstr(name, "ncclKernel") ||
           strstr(name, "ncclDevKernel");
}

sim_unit trc_kernel_unit(const char *name)
{
    char s[1024];
    lower(name, s, sizeof s);
    if (trc_kernel_is_nccl(name) || is_gemm_helper(s)) return SIM_UNIT_MEMORY;
    if (is_tensor_core(s) &&
        (is_gemm_family(s) || has(s, "xmma") || has(s, "hmma") || has(s, "wmma") ||
         has(s, "imma") || has(s, "flash") || has(s, "fmha") || has_mma_shape(s)))
        return SIM_UNIT_TENSOR;
    if (is_gemm_family(s)) return SIM_UNIT_CUDA;
    return SIM_UNIT_MEMORY;
}

const char *trc_kernel_precision(const char *name)
{
    char s[1024];
    lower(name, s, sizeof s);
    if (is_gemm_helper(s) || !(is_gemm_family(s) || is_tensor_core(s))) return NULL;
    if (has(s, "bf16")) return "bf16";
    if (has(s, "tf32") || has(s, "tfloat32") || has(s, "s1688") || has(s, "s16816")) return "tf32";
    if (has(s, "i8816") || has(s, "int8") || has(s, "imma")) return "int8";
    if (has(s, "h884") || has(s, "h1688") || has(s, "h16816") || has(s, "s884") || has(s, "f16") ||
        has(s, "fp16") || has(s, "hgemm") || has(s, "hmma"))
        return "fp16";
    if (has(s, "sgemm") || has(s, "scudnn") || has(s, "simt") || has(s, "implicit_convolve") ||
        has(s, "wgrad_alg") || has(s, "dgrad_engine"))
        return "fp32";
    return NULL;
}

int trc_coll_kind_from_name(const char *name)
{
    char s[128];
    lower(name, s, sizeof s);
    /* drop separators so "all_reduce", "allreduce" and "AllReduce" compare alike */
    char t[128];
    size_t j = 0;
    for (size_t i = 0; s[i] && j + 1 < sizeof t; i++)
        if (s[i] != '_' && s[i] != '-' && s[i] != ' ') t[j++] = s[i];
    t[j] = 0;
    const char *p = strncmp(t, "nccl:", 5) == 0 ? t + 5 : t;
    if (has(p, "allreduce") || has(p, "allreduce_coalesced")) return TRC_COLL_ALL_REDUCE;
    if (has(p, "reducescatter") || has(p, "reducescatterbase")) return TRC_COLL_REDUCE_SCATTER;
    if (has(p, "allgather")) return TRC_COLL_ALL_GATHER;
    if (has(p, "alltoall")) return TRC_COLL_ALL_TO_ALL;
    if (has(p, "broadcast")) return TRC_COLL_BROADCAST;
    if (has(p, "barrier")) return TRC_COLL_BARRIER;
    if (has(p, "sendrecv") || !strcmp(p, "send") || !strcmp(p, "recv") || has(p, "p2p"))
        return TRC_COLL_SEND_RECV;
    if (has(p, "reduce")) return TRC_COLL_REDUCE;
    return TRC_COLL_OTHER;
}

int trc_dtype_bytes(const char *type)
{
    static const struct {
        const char *name;
        int bytes;
    } types[] = {
        {"float", 4},
        {"double", 8},
        {"c10::Half", 2},
        {"c10::BFloat16", 2},
        {"Half", 2},
        {"BFloat16", 2},
        {"long int", 8},
        {"long", 8},
        {"int", 4},
        {"short int", 2},
        {"short", 2},
        {"signed char", 1},
        {"unsigned char", 1},
        {"bool", 1},
        {"c10::complex<float>", 8},
        {"c10::complex<double>", 16},
        {"c10::Float8_e4m3fn", 1},
        {"c10::Float8_e5m2", 1},
        {"float16", 2},
        {"bfloat16", 2},
        {"float32", 4},
        {"int64", 8},
        {"int32", 4},
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) /* first letters: few strcmps */
        if (type[0] == types[i].name[0] && !strcmp(type, types[i].name)) return types[i].bytes;
    return 0;
}

static double tbytes(const trc_tensor *t)
{
    return t->ndim >= 0 ? (double)t->numel * (t->elem_bytes ? t->elem_bytes : 4) : 0.0;
}

static int is_t(const trc_tensor *in, int n_in, int i, int ndim)
{
    return i < n_in && in[i].ndim == ndim;
}

static int name_in(const char *name, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(name, list[i])) return 1;
    return 0;
}

static const char *const conv_fwd[] = {
    "aten::conv2d",
    "aten::convolution",
    "aten::_convolution",
    "aten::cudnn_convolution",
    "aten::_convolution_nogroup",
    "aten::thnn_conv2d",
    "aten::mkldnn_convolution",
    "aten::miopen_convolution",
    "aten::cudnn_convolution_relu",
    "aten::cudnn_convolution_add_relu",
    "aten::_nnpack_spatial_convolution",
};

/* Memory-bound estimate: every tensor input read once, one output as large as the largest. */
static trc_cost memory_cost(const trc_tensor *in, int n_in)
{
    trc_cost c = {0};
    double sum = 0, big = 0;
    int tensors = 0;
    for (int i = 0; i < n_in; i++) {
        if (in[i].ndim < 0 || !in[i].elem_bytes) continue;
        double b = tbytes(&in[i]);
        sum += b;
        if (b > big) big = b;
        tensors++;
    }
    if (tensors) {
        c.kind = TRC_COST_MEMORY;
        c.bytes = sum + big;
    }
    return c;
}

/* Convolution with input [N,C,H,W], weight [K,C/g,R,S], output [N,K,P,Q]:
 * 2*N*K*(C/g)*R*S*P*Q FLOPs per pass (forward, input gradient and weight gradient alike). */
static double conv_flops_per_pixel(const trc_tensor *x, const trc_tensor *w)
{
    return 2.0 * (double)x->dim[0] * (double)w->dim[0] * (double)w->dim[1] * (double)w->dim[2] *
           (double)w->dim[3];
}

/* Convolution forward and backward into *out; returns 0 when name is not one. */
static int conv_cost(const char *name, const trc_tensor *in, int n_in, trc_cost *out)
{
    trc_cost c = {0};
    if (name_in(name, conv_fwd, sizeof conv_fwd / sizeof conv_fwd[0])) {
        if (is_t(in, n_in, 0, 4) && is_t(in, n_in, 1, 4)) {
            const trc_tensor *x = &in[0], *w = &in[1];
            c.kind = TRC_COST_CONV_OUT;
            c.flops = conv_flops_per_pixel(x, w);
            c.fixed_bytes = tbytes(x) + tbytes(w);
            c.bytes = (double)x->dim[0] * (double)w->dim[0] * (x->elem_bytes ? x->elem_bytes : 4);
            c.n = x->dim[0];
            c.k = w->dim[0];
            *out = c;
            return 1;
        }
        *out = memory_cost(in, n_in);
        return 1;
    }
    /* Backward of a conv: input gradient and weight gradient, each as many FLOPs as forward.
     * aten::convolution_backward(grad_output, input, weight, ...) is PyTorch >= 1.11;
     * aten::cudnn_convolution_backward(input, grad_output, weight, ...) before it. The
     * _input/_weight halves of the old op do not record all sizes, so their kernels take the
     * cost of the enclosing op. */
    int bwd_new = !strcmp(name, "aten::convolution_backward");
    int bwd_old = !strcmp(name, "aten::cudnn_convolution_backward") ||
                  !strcmp(name, "aten::miopen_convolution_backward") ||
                  !strcmp(name, "aten::mkldnn_convolution_backward");
    if ((bwd_new || bwd_old) && is_t(in, n_in, 0, 4) && is_t(in, n_in, 1, 4) &&
        is_t(in, n_in, 2, 4)) {
        const trc_tensor *go = bwd_new ? &in[0] : &in[1];
        const trc_tensor *x = bwd_new ? &in[1] : &in[0];
        const trc_tensor *w = &in[2];
        c.kind = TRC_COST_COMPUTE;
        c.flops = 2.0 * conv_flops_per_pixel(x, w) * (double)go->dim[2] * (double)go->dim[3];
        /* reads grad_output, input, weight; writes grad_input, grad_weight */
        c.bytes = tbytes(go) + 2.0 * tbytes(x) + 2.0 * tbytes(w);
        *out = c;
        return 1;
    }
    return 0;
}

/* Matrix products into *out; returns 0 when name is not one (or its shapes do not fit). */
static int matmul_cost(const char *name, const trc_tensor *in, int n_in, trc_cost *cost)
{
    trc_cost c = {0};
    if (!strcmp(name, "aten::mm") && is_t(in, n_in, 0, 2) && is_t(in, n_in, 1, 2)) {
        double m = (double)in[0].dim[0], k = (double)in[0].dim[1], n = (double)in[1].dim[1];
        c.kind = TRC_COST_COMPUTE;
        c.flops = 2.0 * m * k * n;
        c.bytes =
            tbytes(&in[0]) + tbytes(&in[1]) + m * n * (in[0].elem_bytes ? in[0].elem_bytes : 4);
        *cost = c;
        return 1;
    }
    if (!strcmp(name, "aten::addmm") && is_t(in, n_in, 1, 2) && is_t(in, n_in, 2, 2)) {
        double m = (double)in[1].dim[0], k = (double)in[1].dim[1], n = (double)in[2].dim[1];
        c.kind = TRC_COST_COMPUTE;
        c.flops = 2.0 * m * k * n + m * n;
        c.bytes = tbytes(&in[0]) + tbytes(&in[1]) + tbytes(&in[2]) +
                  m * n * (in[1].elem_bytes ? in[1].elem_bytes : 4);
        *cost = c;
        return 1;
    }
    if ((!strcmp(name, "aten::bmm") && is_t(in, n_in, 0, 3) && is_t(in, n_in, 1, 3)) ||
        (!strcmp(name, "aten::baddbmm") && is_t(in, n_in, 1, 3) && is_t(in, n_in, 2, 3))) {
        const trc_tensor *a = name[6] == 'b' && name[7] == 'a' ? &in[1] : &in[0];
        const trc_tensor *b = a + 1;
        double bt = (double)a->dim[0], m = (double)a->dim[1], k = (double)a->dim[2],
               n = (double)b->dim[2];
        c.kind = TRC_COST_COMPUTE;
        c.flops = 2.0 * bt * m * k * n;
        c.bytes = tbytes(a) + tbytes(b) + bt * m * n * (a->elem_bytes ? a->elem_bytes : 4);
        *cost = c;
        return 1;
    }
    if (!strcmp(name, "aten::matmul") && n_in >= 2 && in[0].ndim >= 2 && in[0].ndim <= TRC_MAXDIM &&
        in[1].ndim == 2) {
        /* [..., m, k] x [k, n]: the leading dims fold into m */
        double k = (double)in[0].dim[in[0].ndim - 1], n = (double)in[1].dim[1];
        double rows = (double)in[0].numel / (k > 0 ? k : 1);
        c.kind = TRC_COST_COMPUTE;
        c.flops = 2.0 * rows * k * n;
        c.bytes =
            tbytes(&in[0]) + tbytes(&in[1]) + rows * n * (in[0].elem_bytes ? in[0].elem_bytes : 4);
        *cost = c;
        return 1;
    }
    if (!strcmp(name, "aten::linear") && n_in >= 2 && in[0].ndim >= 1 && in[1].ndim == 2) {
        /* x [..., in] times W^T, W = [out, in] */
        double kin = (double)in[1].dim[1], out = (double)in[1].dim[0];
        double rows = (double)in[0].numel / (kin > 0 ? kin : 1);
        c.kind = TRC_COST_COMPUTE;
        c.flops = 2.0 * rows * kin * out + (n_in >= 3 && in[2].ndim == 1 ? rows * out : 0);
        c.bytes = tbytes(&in[0]) + tbytes(&in[1]) + (n_in >= 3 ? tbytes(&in[2]) : 0) +
                  rows * out * (in[0].elem_bytes ? in[0].elem_bytes : 4);
        *cost = c;
        return 1;
    }
    return 0;
}

trc_cost trc_op_cost(const char *name, const trc_tensor *in, int n_in)
{
    trc_cost c;
    if (conv_cost(name, in, n_in, &c) || matmul_cost(name, in, n_in, &c)) return c;
    return memory_cost(in, n_in);
}

trc_cost trc_conv_finish(trc_cost c, int64_t p, int64_t q)
{
    if (c.kind != TRC_COST_CONV_OUT) return c;
    double pixels = (double)p * (double)q;
    c.kind = TRC_COST_COMPUTE;
    c.flops *= pixels;
    c.bytes = c.fixed_bytes + c.bytes * pixels;
    return c;
}
