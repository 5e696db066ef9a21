/* program.h — a recorded step of a native trace as the engine's step program (sim/core/workload.h),
 * for replay and what-if. Every main-thread action that reaches the GPU becomes one sim_op whose
 * dispatch_ns is the CPU time the thread spent since the previous action, as recorded on the
 * source CPU: no CPU-speed scaling happens here (the caller scales by the CPU ratio). Waits for
 * the next batch, syncs and time a launch spent blocked are left out of dispatch_ns because the
 * engine simulates them; trc_program_info reports them so the caller can check or configure. */
#ifndef TRC_PROGRAM_H
#define TRC_PROGRAM_H

#include "sim/base/err.h"
#include "sim/core/workload.h"
#include "traces/trace.h"

#include <stdint.h>

typedef enum trc_pick {
    TRC_PICK_MEDIAN = 0, /* the step whose CPU duration is the median (lower middle for an even
                            count), used as recorded */
    TRC_PICK_MEAN = 1,   /* every op averaged over all steps; needs steps of one structure */
    TRC_PICK_INDEX = 2,  /* the step with ProfilerStep number `step_index` */
} trc_pick;

/* What sim_op does not carry but a what-if needs, one per op of the program (same index):
 * FLOPs to rescale a kernel by its roofline on another GPU, the recorded duration of a
 * collective, the stream, and where the op came from. */
typedef struct trc_op_extra {
    double flops;            /* KERNEL: FLOPs derived from shapes; 0 = unknown */
    int64_t blocks;          /* KERNEL: thread blocks; 0 = unknown */
    int64_t recorded_gpu_ns; /* GPU time recorded for it (kernels, copies, collectives); -1 none */
    int32_t stream;          /* CUDA stream it ran on; -1 none */
    int32_t record;          /* index of its record in the step; -1 for the closing SIM_OP_CPU */
} trc_op_extra;

/* Called by trc_trace_to_program for each step it converts, while the step's records are at hand
 * (the reader reuses them for the next step), with the step's program and its extras (NULL
 * without opts.extras): a caller derives there what else it needs from the records, so that the
 * trace is read once. It may set *note to one malloc'd block; the picked step's block ends in
 * trc_program_info.note (freed too when info is NULL), the others are freed. Returns 0 or a
 * negative SIM_E* code (filling err), which ends the conversion with that code. */
typedef int (*trc_step_note_fn)(void *ctx, const trc_step *s, const sim_program *prog,
                                const trc_op_extra *extra, void **note, sim_err *err);

typedef struct trc_program_opts {
    int pick;              /* trc_pick */
    int64_t step_index;    /* TRC_PICK_INDEX */
    int extras;            /* 1: also fill trc_program_info.extra */
    trc_step_note_fn note; /* NULL: none; not called for TRC_PICK_MEAN (no step is used as
                              recorded) */
    void *note_ctx;        /* passed to note */
} trc_program_opts;

/* What the engine needs beside the program, and what was left out of it. Times are ns on the
 * source machine; "the step" is the step picked (means over steps for TRC_PICK_MEAN). */
typedef struct trc_program_info {
    char gpu_name[TRC_STR_MAX]; /* source GPU (deviceProperties name) */
    int gpu_sms;
    char precision[16];
    char source_schema[16]; /* the header's: "kineto-old", "kineto-new", ... */
    int batch_size;         /* 0 = unknown */
    int world_size;
    int pick;                  /* trc_pick used */
    int64_t step_index;        /* ProfilerStep number used; -1 for TRC_PICK_MEAN */
    int steps;                 /* steps in the trace */
    int64_t step_ns;           /* recorded CPU duration of the step */
    int64_t step_ns_median;    /* median step duration over the trace */
    int64_t step_ns_mean;      /* mean step duration over the trace */
    int64_t gpu_busy_ns;       /* recorded GPU busy time of the step (union over streams) */
    int64_t kernel_ns;         /* sum of recorded kernel durations of the step */
    int64_t data_wait_ns;      /* waiting for the next batch (left out of the program) */
    int64_t sync_ns;           /* blocked in syncs (left out) */
    int64_t blocked_ns;        /* launch and copy calls beyond launch_cap_ns (left out) */
    int64_t launch_ns;         /* median CPU time of a kernel launch call in the step */
    int64_t launch_cap_ns;     /* longer launch/copy calls count as blocked beyond this */
    int64_t dispatch_ns;       /* sum of dispatch_ns of the program */
    int64_t h2d_bytes;         /* host-to-device bytes copied in the step */
    int collectives;           /* collectives in the step (SIM_OP_ALLREDUCE ops) */
    int64_t collective_gpu_ns; /* their recorded GPU time (the program does not carry it) */
    size_t kernels;            /* SIM_OP_KERNEL ops (kernels, memsets, device copies) */
    trc_op_extra *extra;       /* with opts.extras: one per op; owned, see trc_program_info_free */
    void *note;                /* with opts.note: the picked step's block; owned, as extra */
} trc_program_info;

void trc_program_opts_init(trc_program_opts *o);

/* Frees info->extra and info->note (the rest of info is plain values). */
void trc_program_info_free(trc_program_info *info);

/* Reads the remaining steps of an open reader (opened with trc_reader_open, no step read yet)
 * and fills `out` (which must be zeroed or freshly sim_program_free'd; the caller owns its ops)
 * with the picked step, and `info` (may be NULL). Errors: those of the reader and of opts->note;
 * SIM_EINVAL when the trace has no steps, the step index is not in it, or TRC_PICK_MEAN meets
 * steps of different structure (the message names the first difference). */
int trc_trace_to_program(trc_reader *r, const trc_program_opts *opts, sim_program *out,
                         trc_program_info *info, sim_err *err);

/* The same for a trace file: opens, converts, closes. */
int trc_trace_file_to_program(const char *path, const trc_program_opts *opts, sim_program *out,
                              trc_program_info *info, sim_err *err);

/* Converts one step (the core of the above): appends the program of `s` to `out` and puts its
 * figures in `info` (may be NULL; its header fields are left alone). `launch_cap_ns` <= 0 derives
 * the cap from the step's own launches (FORMAT.md, "Replay"). With `extra` not NULL, *extra
 * receives a malloc'd array parallel to out->ops (the caller frees it). */
int trc_step_to_program(const trc_step *s, int gpu_sms, int64_t launch_cap_ns, sim_program *out,
                        trc_program_info *info, trc_op_extra **extra);

#endif
