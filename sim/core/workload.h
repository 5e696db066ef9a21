/* workload.h — the plain description of one training step that the engine replays.
 * A step is an ordered list of main-thread records: ops that cost CPU dispatch time and may launch
 * a kernel, copies, syncs and collectives. The model zoo (models/), the trace importer (traces/)
 * and the synthetic generator (sim_synthetic_program, sim/scenario.c) all produce this; the engine
 * only consumes it. */
#ifndef SIM_WORKLOAD_H
#define SIM_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

typedef enum sim_op_kind {
    SIM_OP_KERNEL,     /* dispatch on the CPU, then a kernel on the compute stream */
    SIM_OP_CPU,        /* CPU work on the main thread only (Python, optimizer bookkeeping) */
    SIM_OP_SYNC,       /* the main thread waits until the GPU stream has drained */
    SIM_OP_MEMCPY_H2D, /* a host-to-device copy issued on the compute stream */
    SIM_OP_MEMCPY_D2H, /* a device-to-host copy; the CPU waits for it (like .item()) */
    SIM_OP_ALLREDUCE,  /* a collective over all GPUs of the job: on the compute stream, or (comm
                          set) a DDP bucket's on the communication stream */
    SIM_OP_NEXT_BATCH, /* gradient accumulation: the main thread takes the next loader batch and
                          copies it to the GPU, as at the start of the step */
} sim_op_kind;

/* Which GPU unit a kernel mostly uses: for the stall and SM-activity reports and for rescaling
 * a recorded kernel to another GPU. */
typedef enum sim_unit {
    SIM_UNIT_NONE,
    SIM_UNIT_TENSOR, /* matmul/conv on tensor cores */
    SIM_UNIT_CUDA,   /* arithmetic on CUDA cores */
    SIM_UNIT_MEMORY, /* bandwidth-bound elementwise, reductions, normalization */
} sim_unit;

/* "tensor", "cuda", "memory" or "none" (also for a value outside the enum). */
const char *sim_unit_name(int unit);

typedef struct sim_op {
    int64_t dispatch_ns; /* CPU time on the reference core before the launch/copy is issued */
    int64_t gpu_ns;      /* kernel duration on the simulated GPU (KERNEL); 0 for other kinds */
    double bytes;        /* MEMCPY_*: bytes copied; ALLREDUCE: bytes reduced per GPU */
    float sm_fraction;   /* KERNEL: share of SMs its blocks occupy, (0, 1] */
    uint8_t kind;        /* sim_op_kind */
    uint8_t unit;        /* sim_unit */
    uint8_t pinned;      /* MEMCPY_H2D: 1 = from page-locked memory */
    uint8_t comm;        /* ALLREDUCE: 1 = a DDP bucket's, run on the communication stream beside
                            later kernels (sim_gpu_allreduce_overlapped); KERNEL: 1 = it waits
                            until the communication stream has drained (the optimizer step
                            waiting for every bucket) */
} sim_op;

/* One step of the job. `ops` is owned by whoever built the program (see sim_program_free). */
typedef struct sim_program {
    sim_op *ops;
    size_t n_ops;
    size_t cap_ops;
    int64_t graph_launch_ns;  /* CPU cost of one CUDA-graph launch (reference core) */
    int64_t step_overhead_ns; /* per-step main-thread CPU work outside the ops (Python loop) */
} sim_program;

/* Appends an op, growing the array; returns 0 or SIM_ENOMEM. */
int sim_program_push(sim_program *p, const sim_op *op);
/* Releases the op array and zeroes p. */
void sim_program_free(sim_program *p);
/* Sum of kernel durations of one step, ns. */
int64_t sim_program_gpu_ns(const sim_program *p);
/* Sum of dispatch costs of one step on the reference core, ns. */
int64_t sim_program_dispatch_ns(const sim_program *p);
/* Number of kernels in one step. */
size_t sim_program_kernels(const sim_program *p);
/* Loader batches one step consumes: 1 + its SIM_OP_NEXT_BATCH ops (gradient accumulation). */
int sim_program_batches_per_step(const sim_program *p);

#endif
