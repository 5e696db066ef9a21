/* stats.h — figures of a native trace step (step time, GPU busy, kernels, data wait, ...) and
 * distributions of recorded durations. The importer's summary and `epochsim trace show` both
 * compute them from the records as written, so the two always agree. */
#ifndef TRC_STATS_H
#define TRC_STATS_H

#include "traces/trace.h"

#include <stddef.h>
#include <stdint.h>

typedef struct trc_step_stat {
    int64_t index;            /* ProfilerStep number */
    int64_t step_ns;          /* CPU duration of the step */
    int64_t gpu_busy_ns;      /* union of the GPU intervals the step's records caused */
    int64_t kernel_ns;        /* sum of kernel durations (without copies, memsets, NCCL) */
    int64_t kernels;          /* KERNEL records */
    int64_t tensor_kernel_ns; /* kernel time on tensor cores */
    int64_t cuda_kernel_ns;   /* kernel time of GEMM/conv families on CUDA cores */
    int64_t memcpys;          /* MEMCPY records */
    int64_t memcpy_ns;        /* their GPU time */
    int64_t h2d_bytes;        /* bytes copied host to device */
    int64_t memsets;
    int64_t syncs;
    int64_t sync_ns;      /* CPU time blocked in syncs */
    int64_t data_wait_ns; /* CPU time waiting for the next batch (outermost WAITs) */
    int64_t collectives;
    int64_t collective_gpu_ns; /* GPU time of the NCCL kernels */
    int64_t collective_bytes;
    int64_t ops;           /* OP records */
    int64_t op_cpu_ns;     /* their CPU time */
    int64_t launch_cpu_ns; /* CPU time inside kernel launch calls */
    int64_t gpu_first_ns;  /* start of the first GPU interval, from the step start */
    int64_t gpu_last_ns;   /* end of the last GPU interval, from the step start */
    double flops;          /* sum of kernel FLOPs where known */
    int64_t kernels_with_flops;
} trc_step_stat;

/* Computes the figures of one step. Returns 0 or SIM_ENOMEM. */
int trc_step_stats(const trc_step *s, trc_step_stat *out);

/* A growing sample of values, and its distribution. */
typedef struct trc_sample {
    double *v;
    size_t n, cap;
} trc_sample;

typedef struct trc_dist {
    int64_t n;
    double mean, p50, p90, p99, max;
} trc_dist;

int trc_sample_add(trc_sample *s, double v);
/* Sorts the sample and fills d (all zero for an empty sample). */
void trc_sample_dist(trc_sample *s, trc_dist *d);
void trc_sample_free(trc_sample *s);

/* Adds the launch-call CPU durations (KERNEL records) and top-level op CPU durations (OP records)
 * of a step to two samples (either may be NULL). Returns 0 or SIM_ENOMEM. */
int trc_step_sample_cpu(const trc_step *s, trc_sample *launch_ns, trc_sample *op_ns);

#endif
