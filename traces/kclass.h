/* kclass.h — what a recorded kernel or op is, from its name and recorded shapes: the GPU unit a
 * kernel runs on (tensor cores, CUDA cores, memory-bound), the FLOPs and bytes of conv and matmul
 * ops, the collective behind an NCCL name. Pure functions of their inputs, used by the Kineto
 * importer and testable alone. */
#ifndef TRC_KCLASS_H
#define TRC_KCLASS_H

#include "sim/core/workload.h"

#include <stdint.h>

#define TRC_MAXDIM 8

/* One recorded op input ("Input Dims"/"Input type" entry). */
typedef struct trc_tensor {
    int ndim;                /* -1 = not a tensor (int, list of ints, None, ...) */
    int64_t dim[TRC_MAXDIM]; /* the first TRC_MAXDIM sizes */
    int64_t numel;           /* product of all sizes (1 for a 0-d tensor) */
    int elem_bytes;          /* from the dtype; 0 = unknown dtype */
} trc_tensor;

/* How an op's cost was found. */
typedef enum trc_cost_kind {
    TRC_COST_NONE = 0,     /* nothing known: no tensor inputs recorded */
    TRC_COST_MEMORY = 1,   /* bytes only: inputs read + one output the size of the largest */
    TRC_COST_COMPUTE = 2,  /* a conv/matmul formula gave flops and bytes */
    TRC_COST_CONV_OUT = 3, /* a forward conv whose output size is not recorded: flops and bytes
                              are per output pixel (multiply by P*Q, see trc_conv_finish) */
} trc_cost_kind;

typedef struct trc_cost {
    int kind;           /* trc_cost_kind */
    double flops;       /* multiply-add = 2 FLOPs */
    double bytes;       /* DRAM bytes read + written, estimate */
    double fixed_bytes; /* TRC_COST_CONV_OUT: bytes of input and weight (not per pixel) */
    int64_t n, k;       /* TRC_COST_CONV_OUT: batch and output channels, to find the output */
} trc_cost;

/* The unit a kernel mostly uses, from its name: SIM_UNIT_TENSOR for GEMM/conv kernels whose
 * name shows tensor-core instructions (h884, s1688, 16816, tensorop, xmma, hmma, tf32 ...),
 * SIM_UNIT_CUDA for GEMM/conv families on CUDA cores (sgemm, scudnn, implicit_convolve, wgrad,
 * dgrad, cutlass simt ...), SIM_UNIT_MEMORY for everything else (elementwise, norms, reductions,
 * copies, GEMV, split-K reductions, layout transforms). */
sim_unit trc_kernel_unit(const char *name);

/* 1 if the kernel is a convolution (cuDNN's rules rather than cuBLAS's): its name shows conv,
 * cudnn, wgrad, dgrad, fprop, winograd or implicit (any case). */
int trc_kernel_is_conv(const char *name);

/* 1 if the kernel is an NCCL communication kernel. */
int trc_kernel_is_nccl(const char *name);

/* Precision a tensor-core or GEMM kernel name shows: "tf32", "fp16", "bf16", "int8", "fp32" for
 * CUDA-core sgemm/scudnn, or NULL when the name does not say. */
const char *trc_kernel_precision(const char *name);

/* Collective kind (trc_coll_kind) from "nccl:all_reduce", "allreduce", "all_to_all", ... */
int trc_coll_kind_from_name(const char *name);

/* Bytes per element of a recorded dtype ("float" 4, "c10::Half" 2, "long int" 8, ...); 0 when
 * the text is not a tensor dtype ("Int", "GenericList", "Scalar", ""). */
int trc_dtype_bytes(const char *type);

/* The cost of an op from its name and recorded inputs (see trc_cost_kind). */
trc_cost trc_op_cost(const char *name, const trc_tensor *in, int n_in);

/* Completes a TRC_COST_CONV_OUT cost once the output's spatial size p x q is known. */
trc_cost trc_conv_finish(trc_cost c, int64_t p, int64_t q);

#endif
