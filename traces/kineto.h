/* kineto.h — importer of PyTorch profiler (Kineto) Chrome-trace JSON into the native trace.
 * Reads .json or .json.gz with yajl's streaming parser, keeping only a small struct per relevant
 * event (never a document tree), links launches to GPU work by correlation id, cuts steps at
 * ProfilerStep#N, drops warm-up steps (rules in traces/FORMAT.md) and writes traces/trace.h. */
#ifndef TRC_KINETO_H
#define TRC_KINETO_H

#include "sim/err.h"
#include "traces/stats.h"
#include "traces/trace.h"

#include <stdint.h>

typedef struct trc_kineto_options {
    int keep_warmup;          /* 1: keep the steps the warm-up rules would drop */
    int batch_size;           /* > 0: the batch size to record instead of inferring one */
    const char *source_label; /* recorded as the header's source; NULL = the input path */
} trc_kineto_options;

/* What an import found; filled also when the import fails part-way (as far as it got). */
typedef struct trc_kineto_summary {
    char source_schema[16]; /* "kineto-old" (Operator/Runtime/Kernel) or "kineto-new" */
    char gpu_name[TRC_STR_MAX];
    int gpu_sms;
    char precision[16];
    int batch_size;
    char batch_size_source[TRC_STR_MAX];
    int world_size, rank;
    int64_t file_bytes;       /* size of the input file (compressed size for .gz) */
    int64_t json_bytes;       /* bytes of JSON parsed */
    double parse_s;           /* wall time reading and parsing the JSON */
    double total_s;           /* wall time of the whole import */
    int64_t events;           /* entries of traceEvents */
    int64_t kept_events;      /* events stored for linking */
    int64_t gpu_events;       /* kernels, copies, memsets */
    int64_t unlinked_gpu;     /* GPU events whose correlation id matches no runtime call */
    int64_t launches_without_gpu; /* launch/copy calls in kept steps with no GPU event */
    int steps_found;          /* ProfilerStep annotations */
    int steps_kept;
    int n_dropped;
    trc_dropped_step dropped[TRC_DROPPED_MAX];
    int threads;              /* CPU threads whose records were kept (main + autograd ...) */
    int64_t launch_median_ns; /* median cudaLaunchKernel CPU time over the kept steps */
    trc_dist launch_ns;       /* CPU time of kernel launch calls in the kept steps */
    trc_dist op_ns;           /* CPU time of top-level ops in the kept steps */
    trc_step_stat *steps;     /* per kept step; owned, see trc_kineto_summary_free */
    int n_steps;
} trc_kineto_summary;

void trc_kineto_options_init(trc_kineto_options *o);

/* Imports in_path (Kineto JSON, optionally gzip-compressed) into the native trace out_path
 * (written whole or not at all). options may be NULL for the defaults; summary may be NULL.
 * Errors: SIM_ENOENT (no input), SIM_EIO, SIM_EFORMAT (not JSON / truncated / corrupt gzip, with
 * line, column and byte offset of the decompressed JSON), SIM_EINVAL (JSON that is not a usable
 * Kineto trace: no traceEvents, no ProfilerStep#N, no GPU events, every step dropped). */
int trc_kineto_import(const char *in_path, const char *out_path, const trc_kineto_options *opt,
                      trc_kineto_summary *summary, sim_err *err);

/* Frees the per-step array of a summary and zeroes it. */
void trc_kineto_summary_free(trc_kineto_summary *s);

#endif
