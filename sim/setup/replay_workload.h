/* replay_workload.h — a recorded trace as the workload of an experiment (`workload.trace: PATH`),
 * rescaled from the machine it was recorded on to the simulated one: CPU dispatch by single-thread
 * speed, each kernel by its roofline class between source and target GPU (wave-aware), kernel work
 * by batch size through the efficiency curves, side-stream GPU work by its recorded overlap. The
 * rules and the validation against the five real traces are in docs/replay.md. */
#ifndef TRC_REPLAY_H
#define TRC_REPLAY_H

#include "sim/setup/config.h"
#include "sim/base/err.h"
#include "sim/core/hw.h"
#include "sim/core/run.h"
#include "sim/core/workload.h"
#include "traces/trace.h"

#include <stdint.h>

/* What a replay found and did, for reports and tests. Times are ns per step. */
typedef struct trc_replay_info {
    char gpu_name[TRC_STR_MAX];    /* the GPU name the trace records */
    char source_gpu[SIM_NAME_MAX]; /* catalog GPU it was recorded on */
    char source_cpu[SIM_NAME_MAX]; /* catalog CPU it was recorded on */
    const char *source_cpu_why;    /* static text: where source_cpu came from */
    int source_batch;              /* batch the trace ran (0 = unknown) */
    int world_size;
    int64_t step_index;             /* ProfilerStep replayed (the median step) */
    int steps;                      /* steps in the trace */
    int64_t recorded_step_ns;       /* median step over the trace */
    int64_t recorded_busy_ns;       /* GPU busy (union over streams) of the median step */
    int64_t recorded_wait_ns;       /* data wait of the replayed step */
    int64_t recorded_collective_ns; /* NCCL GPU time of the replayed step */
    int64_t input_copy_bytes;       /* H2D bytes before the first kernel (the batch copy) */
    int64_t input_copy_dispatch_ns; /* their CPU time on the reference core */
    int64_t side_stream_ns;         /* recorded GPU time of side-stream ops */
    int64_t side_hidden_ns;         /* the part of it that overlapped other GPU work */
    int64_t kernel_ns;              /* sum of kernel durations of the program, after rescaling */
    int64_t dispatch_ns;            /* sum of dispatch of the program, reference core */
    int main_stream;
} trc_replay_info;

/* Which catalog GPU a recorded GPU name is, by a small alias table and then by normalising the
 * name ("Tesla V100-SXM2-32GB" -> "v100-sxm2-32gb"); writes into out (SIM_NAME_MAX) the
 * candidate to look up. Returns 1 when an alias matched, 0 for a normalised guess. */
int trc_replay_gpu_candidate(const char *gpu_name, char *out);

/* The documented guess of the host CPU for a recorded GPU name, or NULL when there is none;
 * *why receives the reason (static text). */
const char *trc_replay_cpu_guess(const char *gpu_name, const char **why);

/* One kernel's recorded duration rec_ns on GPU src, rescaled to GPU dst and to work_ratio times
 * its work (batch ratio; 1 = same batch). `conv` picks cuDNN's conv rules over cuBLAS's for
 * TENSOR/CUDA units. flops/bytes <= 0 mean unknown: the work is then found from rec_ns on src's
 * roofline. blocks <= 0: unknown (no wave quantization). Same GPU (by name) and work_ratio 1
 * return rec_ns exactly; SIM_UNIT_NONE kernels are returned unchanged. */
int64_t trc_replay_kernel_ns(int64_t rec_ns, sim_unit unit, int conv, double flops, double bytes,
                             int64_t blocks, const sim_gpu_desc *src, const sim_gpu_desc *dst,
                             sim_precision p, double work_ratio);

/* Builds the step program of x->workload.trace for the resolved hardware hw (catalog in
 * catalog_dir) into out (zeroed), and fills info (may be NULL). Errors name the key or file:
 * SIM_ENOENT (missing trace, unknown catalog entry), SIM_EFORMAT (corrupt trace), SIM_EINVAL
 * (unknown source GPU or CPU without workload.trace_gpu / trace_cpu, unusable trace). */
int trc_replay_program(const sim_experiment *x, const sim_hardware *hw, const char *catalog_dir,
                       sim_program *out, trc_replay_info *info, sim_err *err);

/* The scenario hook: fills sc->program from the trace x->workload.trace and settles in sc what
 * a trace decides unless the user gave the key (see docs/replay.md): training.sync_every_step =
 * false (the trace has its own syncs), dataset.input_bytes = the recorded batch copy / batch,
 * the copy's dispatch = the recorded batch copy's (loader.copy_dispatch_us); sc->workload's
 * trace_gpu / trace_cpu / trace_batch say what was used, so reports show them. */
int trc_replay_scenario(const sim_experiment *x, const cfg_experiment_set *set,
                        const char *catalog_dir, sim_scenario *sc, sim_err *err);

#endif
