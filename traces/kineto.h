/* kineto.h — importer of PyTorch profiler (Kineto) Chrome-trace JSON into the native trace.
 * Reads .json or .json.gz with yajl's streaming parser, keeping only a small struct per relevant
 * event (never a document tree), links launches to GPU work by correlation id, cuts steps at
 * ProfilerStep#N (without them: by the repeating kernel sequence, or one step; docs/replay.md),
 * drops warm-up steps (rules in traces/FORMAT.md) and writes traces/trace.h. The event tables
 * move into temporary files in $TMPDIR past 1 MiB (a third of the JSON's size, half while the
 * largest is sorted), so the resident set stays under 32 MiB whatever the trace's size. */
#ifndef TRC_KINETO_H
#define TRC_KINETO_H

#include "sim/base/err.h"
#include "traces/stats.h"
#include "traces/trace.h"

#include <stdint.h>

typedef struct trc_kineto_options {
    int keep_warmup;          /* 1: keep the steps the warm-up rules would drop */
    int batch_size;           /* > 0: the batch size to record instead of inferring one */
    const char *source_label; /* recorded as the header's source; NULL = the input path */
} trc_kineto_options;

/* Why an event was dropped for its times. CPU ops, annotations, runtime calls and GPU activities
 * whose times are unusable are left out and counted. The import fails when one of them lies
 * inside a kept step (that step would replay without it), or when more than 1 % of the GPU
 * activities are dropped (a recording broken that widely is not one to trust in any step). */
typedef enum trc_bad_time {
    TRC_BAD_DUR_MISSING,    /* no 'dur' */
    TRC_BAD_DUR_NOT_NUMBER, /* 'dur' is a string, null, true or false */
    TRC_BAD_DUR_NEGATIVE,   /* 'dur' below zero */
    TRC_BAD_TIME_RANGE,     /* 'ts' or 'dur' too large to be a time (see kineto.c) */
    TRC_BAD_TIME_COUNT
} trc_bad_time;

/* How the steps were found. */
typedef enum trc_step_source {
    TRC_STEPS_PROFILER, /* ProfilerStep#N annotations */
    TRC_STEPS_PERIOD,   /* none: the GPU kernel sequence repeats, one step per repetition */
    TRC_STEPS_WHOLE     /* none and no repetition: the whole trace is one step */
} trc_step_source;

/* What an import found; filled also when the import fails part-way (as far as it got). */
typedef struct trc_kineto_summary {
    char source_schema[16]; /* "kineto-old" (Operator/Runtime/Kernel) or "kineto-new" */
    char gpu_name[TRC_STR_MAX];
    int gpu_sms;
    char precision[16];
    int batch_size;
    char batch_size_source[TRC_STR_MAX];
    int world_size, rank;
    int64_t file_bytes;           /* size of the input file (compressed size for .gz) */
    int64_t json_bytes;           /* bytes of JSON parsed */
    double parse_s;               /* wall time reading and parsing the JSON */
    double total_s;               /* wall time of the whole import */
    int64_t events;               /* entries of traceEvents */
    int64_t kept_events;          /* events stored for linking */
    int64_t gpu_events;           /* kernels, copies, memsets */
    int64_t unlinked_gpu;         /* GPU events whose correlation id matches no runtime call */
    int64_t launches_without_gpu; /* launch/copy calls in kept steps with no GPU event */
    int64_t bad_time[TRC_BAD_TIME_COUNT]; /* events dropped for their times, per reason */
    int64_t bad_gpu;                      /* of those, GPU activities */
    int64_t first_bad;  /* traceEvents index of the first dropped event; -1 none */
    int step_source;    /* trc_step_source */
    int period_kernels; /* TRC_STEPS_PERIOD: kernels in one repetition */
    int steps_found;    /* ProfilerStep annotations (or steps made without them) */
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

/* Short text for a trc_bad_time ("no dur", ...). */
const char *trc_kineto_bad_time_name(int reason);

/* Short text for a trc_step_source. */
const char *trc_kineto_step_source_name(int source);

/* Imports in_path (Kineto JSON, optionally gzip-compressed) into the native trace out_path
 * (written whole or not at all). options may be NULL for the defaults; summary may be NULL.
 * Errors: SIM_ENOENT (no input), SIM_EIO, SIM_ENOMEM (also: no room for the temporary tables),
 * SIM_EFORMAT (not JSON / truncated / corrupt gzip, with line, column and byte offset of the
 * decompressed JSON), SIM_EINVAL (JSON that is not a usable Kineto trace: no traceEvents, no GPU
 * events, an AMD GPU, every step dropped, events with unusable times past the rule of
 * trc_bad_time). */
int trc_kineto_import(const char *in_path, const char *out_path, const trc_kineto_options *opt,
                      trc_kineto_summary *summary, sim_err *err);

/* Frees the per-step array of a summary and zeroes it. */
void trc_kineto_summary_free(trc_kineto_summary *s);

/* For readers that take either kind of trace: a Kineto .json/.json.gz at `path` is imported into
 * a temporary native trace (~0.1-0.2 s for the validation traces) whose path goes to tmp; any
 * other path is left to the native reader and tmp gets "". The temporary file lives in $TMPDIR
 * (else /tmp) under a unique name `epochsim-<tag>-XXXXXX` and is registered with
 * sim_outfile_track, so an interrupt removes it too; remove it with trc_import_temp_drop.
 * Errors: SIM_ENOENT (unreadable path), SIM_EIO (no temporary file), the importer's. */
int trc_import_temp(const char *path, const char *tag, char *tmp, size_t tmp_size, sim_err *err);
void trc_import_temp_drop(char *tmp);

#endif
