/* dispatch.h — CPU dispatch time per op class, measured on a native trace's CPU threads.
 * The figure of an op is its start-to-start interval on its thread (its own span plus the Python
 * and profiler time until the next top-level record), so the classes add up to the thread's time;
 * an op whose kernel launch blocked on a full launch queue (a launch call over
 * TRC_DISPATCH_BLOCKED x the step's median) measures the GPU, not the CPU, and is left out. */
#ifndef TRC_DISPATCH_H
#define TRC_DISPATCH_H

#include "sim/base/err.h"
#include "traces/stats.h"
#include "traces/trace.h"

#include <stdint.h>

#define TRC_DISPATCH_BLOCKED 4

/* Op classes, by thread, phase and name (see dispatch.c for the name lists). */
typedef enum trc_dc {
    TRC_DC_FWD_GEMM,    /* forward module call around a conv/linear op (aten::conv2d, ::linear) */
    TRC_DC_FWD_NORM,    /* forward normalisation module op (aten::batch_norm, ::layer_norm) */
    TRC_DC_FWD_ELEM,    /* forward elementwise/pool module op (aten::relu_, ::max_pool2d, ...) */
    TRC_DC_FWD_PY,      /* other forward op written in Python (x + y, bn's counter add_, ...) */
    TRC_DC_FWD_VIEW,    /* forward view op (flatten, view, reshape, ...): no kernel */
    TRC_DC_BWD_GEMM,    /* backward node of a conv/matmul (ConvolutionBackward0, AddmmBackward0) */
    TRC_DC_BWD_NORM,    /* backward node of a normalisation (CudnnBatchNormBackward0, ...) */
    TRC_DC_BWD_NODE,    /* other autograd node on the backward thread (ReluBackward0, ...) */
    TRC_DC_BWD_ACCUM,   /* AccumulateGrad node on the backward thread (one per parameter) */
    TRC_DC_OPT_FOREACH, /* optimizer torch._foreach_* / _fused_* call after backward */
    TRC_DC_OPT_OP,      /* other optimizer op after backward (a for-loop optimizer's ops) */
    TRC_DC_COUNT
} trc_dc;

/* What trc_dispatch_measure found, over all kept steps. Times in ns as recorded (under the
 * profiler, on the trace's CPU). */
typedef struct trc_dispatch {
    int steps;
    trc_dist cls[TRC_DC_COUNT];           /* start-to-start interval per op of each class */
    double per_step[TRC_DC_COUNT];        /* ops of each class per step (median over steps) */
    double launches_per_op[TRC_DC_COUNT]; /* kernel launches inside an op of the class, mean */
    trc_dist launch_ns;                   /* cudaLaunchKernel call (KERNEL record CPU span) */
    trc_dist opt_region_ns;               /* per step: end of backward to the end of the last op */
    trc_dist opt_param_ns; /* per step: optimizer region outside its ops, / parameter */
    double params;         /* parameter tensors: AccumulateGrad nodes per step */
    int64_t blocked;       /* ops left out: a launch inside them blocked */
} trc_dispatch;

/* The class of a top-level op `name` on thread `thread` in phase `phase` (0 forward, 1 between,
 * 2 after backward; see dispatch.c), or -1 for ops outside every class. */
int trc_dispatch_class(const char *name, int thread, int phase);

/* Short name of a class ("fwd_gemm", ...). */
const char *trc_dispatch_class_name(int c);

/* Reads every step of r (opened, at its first step) and fills out. Errors: the reader's, and
 * SIM_ENOMEM. */
int trc_dispatch_measure(trc_reader *r, trc_dispatch *out, sim_err *err);

#endif
