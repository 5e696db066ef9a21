/* memory.h — GPU memory footprint of a training step, the OOM verdict, and the largest batch.
 * Peak = weights + optimizer state
 *        + max(backward: the largest, over its layers from the last to the first, of AMP
 *                  weight copies + the activations still saved (those only later layers read
 *                  are freed) + the layer's working set + the gradients allocated so far (all
 *                  of them when accumulation, no optimizer or an in-place zero_grad keeps
 *                  them),
 *              optimizer step: gradients + optimizer temporaries)
 *        + cuBLAS/cuDNN workspace + CUDA context + the caching allocator's rounding of each
 *          allocation (memory.c says why reserved-but-free memory is not counted).
 * Sizes are bytes; the "GB" of the verdict are GiB (2^30 B), the unit GPU memory sizes are sold
 * in and nvidia-smi reports. */
#ifndef MDL_MEMORY_H
#define MDL_MEMORY_H

#include "models/expand.h"
#include "models/net.h"
#include "sim/base/err.h"
#include "sim/core/hw.h"

#include <stdbool.h>

/* Fixed parts, with their reasoning in memory.c. */
#define MDL_CUDA_CONTEXT_BYTES (500.0 * 1048576)
#define MDL_CUBLAS_WORKSPACE_BYTES (32.0 * 1048576)
#define MDL_CUDNN_WORKSPACE_BYTES (256.0 * 1048576)

typedef struct mdl_memory {
    int batch;
    double weights_bytes;       /* parameters as stored: fp32, or half in pure fp16/bf16 */
    double weight_copies_bytes; /* AMP: the half copies autocast makes and backward keeps */
    double grads_bytes;
    double optimizer_bytes;      /* SGD momentum: 1 x params; Adam: exp_avg + exp_avg_sq; apex O2:
                                    those in fp32 and the fp32 master weights */
    double activations_bytes;    /* saved for backward, x batch (checkpointing: segment inputs
                                    + the largest segment), + in-batch losses' b x b matrices */
    double transient_bytes;      /* backward working set at the peak (gradients in and out of
                                    that layer; an in-batch loss: two b x b gradients); in
                                    inference the largest layer's input and output */
    double optimizer_temp_bytes; /* foreach temporaries (SGD weight decay list, Adam sqrt list);
                                    apex O2: the fp32 master gradients */
    double workspace_bytes;      /* cuBLAS (+ cuDNN for conv nets) */
    double context_bytes;        /* CUDA context, kernels and library handles */
    double rounding_bytes;       /* caching-allocator rounding of the live allocations */
    double peak_bytes;
    double capacity_bytes; /* 0 = not checked */
    bool oom;              /* peak > capacity */
    int max_batch;         /* largest batch with peak <= capacity; 0 = not even 1;
                              -1 = no capacity given */
} mdl_memory;

/* The figures a report needs (`--json` "memory"). GB = GiB. */
typedef struct mdl_verdict {
    double peak_gb;
    double capacity_gb;
    bool oom;
    int max_batch;
} mdl_verdict;

/* Usable memory of a GPU: mem_gb GiB. */
double mdl_gpu_capacity_bytes(const sim_gpu_desc *gpu);

/* Footprint of net trained under opt (batch = opt->batch). capacity_bytes > 0 also sets oom
 * and searches max_batch. Returns 0 or SIM_EINVAL (bad options). */
int mdl_memory_estimate(const mdl_net *net, const mdl_options *opt, double capacity_bytes,
                        mdl_memory *out, sim_err *err);

void mdl_memory_verdict(const mdl_memory *m, mdl_verdict *v);

#endif
