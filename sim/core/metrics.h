/* metrics.h — what the run observes: GPU kernel-busy time in NVML sample windows, SM activity,
 * and the attribution of every idle GPU nanosecond to what its main thread was doing then.
 * Components report state changes; the metrics integrate them over time. */
#ifndef SIM_METRICS_H
#define SIM_METRICS_H

#include "sim/core/engine.h"

#include <stdint.h>

/* Where the GPU's idle time went: what the main thread was doing while no kernel ran, and when
 * it was waiting for a batch, what that batch was waiting on (the loader says, see
 * sim_metrics_data_cause). */
typedef enum sim_stall {
    SIM_STALL_STORAGE,  /* the awaited batch's worker was reading from the storage device */
    SIM_STALL_DECODE,   /* ... was decoding or collating it, or the pin thread was copying it */
    SIM_STALL_MAIN,     /* the main thread was loading the batch itself (num_workers = 0) */
    SIM_STALL_H2D,      /* the input copy was running or blocking the main thread */
    SIM_STALL_DISPATCH, /* the main thread was dispatching ops slower than the GPU ran them */
    SIM_STALL_COMM,     /* a collective (all-reduce) occupied the compute stream, or the stream
                         * waited for the communication stream (exposed DDP all-reduce) */
    SIM_STALL_SYNC,     /* the main thread waited for the GPU (sync, .item()) */
    SIM_STALL_OTHER,    /* anything else: worker start-up, Python step overhead */
    SIM_STALL_SHARED,   /* a kernel was ready but another job held the GPU (time-slicing) */
    SIM_STALL_COUNT
} sim_stall;

typedef struct sim_metrics sim_metrics;

typedef enum sim_main_state {
    SIM_MAIN_DATA,     /* waiting for the next batch (or loading it itself, num_workers = 0) */
    SIM_MAIN_H2D,      /* blocked in a host-to-device copy */
    SIM_MAIN_DISPATCH, /* running ops: framework dispatch and kernel launches */
    SIM_MAIN_SYNC,     /* waiting for the GPU (sync, .item(), a full launch queue) */
    SIM_MAIN_OTHER,    /* other Python work, between epochs */
} sim_main_state;

typedef enum sim_gpu_state {
    SIM_GPUST_IDLE,
    SIM_GPUST_KERNEL,
    SIM_GPUST_COPY,
    SIM_GPUST_COLLECTIVE, /* an all-reduce holds the compute stream, or it waits for the
                           * communication stream's */
    SIM_GPUST_SHARED,     /* a kernel waits for the GPU another job holds (sim_gpushare) */
} sim_gpu_state;

typedef struct sim_gpu_totals {
    double kernel_ns;      /* time with a kernel running on the compute stream */
    double comm_kernel_ns; /* time with an NCCL kernel on the communication stream and none on
                            * the compute stream (busy for NVML; the stalls also count it) */
    double sm_active_ns;   /* busy time weighted by the share of SMs in use */
    double stall_ns[SIM_STALL_COUNT];
    double main_busy_ns; /* the main thread working: dispatching, Python step work, or loading
                          * a batch itself (num_workers = 0); not waiting on workers or GPU */
} sim_gpu_totals;

/* max_windows bounds the GPU-Util windows kept (0 = no bound): past it the engine fails with
 * SIM_EBUDGET. */
sim_metrics *sim_metrics_create(sim_engine *e, int n_gpus, int64_t window_ns, int64_t max_windows);
void sim_metrics_destroy(sim_metrics *m);
void sim_metrics_main(sim_metrics *m, int gpu, sim_main_state s);
/* What the batch GPU `gpu`'s main thread waits for (or would wait for) is held up by now: one of
 * SIM_STALL_STORAGE, SIM_STALL_DECODE, SIM_STALL_MAIN or SIM_STALL_OTHER (worker start-up). The
 * loader reports it; until it does, SIM_STALL_DECODE. */
void sim_metrics_data_cause(sim_metrics *m, int gpu, sim_stall cause);
void sim_metrics_gpu(sim_metrics *m, int gpu, sim_gpu_state s, float sm_fraction);
/* An NCCL kernel holding sm_share of the SMs starts on GPU `gpu`'s communication stream (0: the
 * one running ends). */
void sim_metrics_comm(sim_metrics *m, int gpu, float sm_share);
void sim_metrics_step(sim_metrics *m, int gpu, int64_t dur_ns);
/* Totals of GPU `gpu` up to now. */
sim_gpu_totals sim_metrics_totals(sim_metrics *m, int gpu);
/* Step durations of GPU 0 recorded since the last call; the array is borrowed until the next
 * call. */
const int64_t *sim_metrics_take_steps(sim_metrics *m, int64_t *n);
/* The NVML utilization series of GPU 0 up to now: integer percent per window (malloc'd). */
uint8_t *sim_metrics_util_series(sim_metrics *m, int64_t *n);

#endif
