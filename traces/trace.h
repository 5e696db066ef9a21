/* trace.h — epochsim's native trace: one recorded training job as a header plus, per step, the
 * ordered CPU-side records of the main thread(s) with the GPU work each one caused.
 * The file is a stream of msgpack objects with one CRC-checked frame per step (traces/FORMAT.md),
 * so the writer and the reader hold one step at a time, never the whole trace. */
#ifndef TRC_TRACE_H
#define TRC_TRACE_H

#include "sim/base/err.h"

#include <stddef.h>
#include <stdint.h>

#define TRC_FORMAT_NAME "epochsim-trace"
#define TRC_FORMAT_VERSION 1
#define TRC_STR_MAX 256
#define TRC_DROPPED_MAX 32

/* Record kinds, in the order FORMAT.md numbers them (the numbers are written to disk). */
typedef enum trc_rec_kind {
    TRC_REC_OP = 0,         /* a top-level CPU op (aten op, autograd node): name, CPU span */
    TRC_REC_KERNEL = 1,     /* a kernel launch and the kernel it caused */
    TRC_REC_MEMCPY = 2,     /* a copy call and the copy it caused */
    TRC_REC_MEMSET = 3,     /* a memset call and the memset it caused */
    TRC_REC_SYNC = 4,       /* the CPU waited for the GPU (stream/device/event synchronize) */
    TRC_REC_WAIT = 5,       /* the main thread waited for the next batch */
    TRC_REC_COLLECTIVE = 6, /* an NCCL collective: CPU enqueue and the NCCL kernel */
    TRC_REC_LOADER = 7,     /* a loader-side span for this step's batch (e.g. `## load_batch ##`) */
    TRC_REC_KIND_COUNT
} trc_rec_kind;

typedef enum trc_memcpy_dir {
    TRC_MEMCPY_H2D = 0,
    TRC_MEMCPY_D2H = 1,
    TRC_MEMCPY_D2D = 2,
    TRC_MEMCPY_OTHER = 3, /* host to host, peer to peer, unknown */
} trc_memcpy_dir;

typedef enum trc_sync_kind {
    TRC_SYNC_STREAM = 0, /* cudaStreamSynchronize */
    TRC_SYNC_DEVICE = 1, /* cudaDeviceSynchronize */
    TRC_SYNC_EVENT = 2,  /* cudaEventSynchronize */
} trc_sync_kind;

typedef enum trc_coll_kind {
    TRC_COLL_ALL_REDUCE = 0,
    TRC_COLL_BROADCAST = 1,
    TRC_COLL_ALL_TO_ALL = 2,
    TRC_COLL_ALL_GATHER = 3,
    TRC_COLL_REDUCE_SCATTER = 4,
    TRC_COLL_REDUCE = 5,
    TRC_COLL_SEND_RECV = 6,
    TRC_COLL_BARRIER = 7,
    TRC_COLL_OTHER = 8,
    TRC_COLL_KIND_COUNT
} trc_coll_kind;

/* Bits of trc_header.recorded: what the source trace held. */
enum {
    TRC_HAS_CPU_OPS = 1u << 0,     /* OP records */
    TRC_HAS_KERNELS = 1u << 1,     /* KERNEL records with GPU durations */
    TRC_HAS_MEMCPY = 1u << 2,      /* MEMCPY/MEMSET records */
    TRC_HAS_SHAPES = 1u << 3,      /* op input shapes were recorded (FLOPs/bytes derived) */
    TRC_HAS_BLOCKS = 1u << 4,      /* kernel grid sizes */
    TRC_HAS_SYNCS = 1u << 5,       /* SYNC records */
    TRC_HAS_DATA_WAITS = 1u << 6,  /* WAIT records */
    TRC_HAS_COLLECTIVES = 1u << 7, /* COLLECTIVE records */
    TRC_HAS_LOADER = 1u << 8,      /* LOADER records */
};

/* Why the importer left a recorded step out of the file. */
typedef enum trc_drop_reason {
    TRC_DROP_GPU_HELD = 0,    /* its GPU work waited for work the profiler did not record */
    TRC_DROP_GPU_MISSING = 1, /* some of its launches have no GPU event (profiler stopped) */
    TRC_DROP_REASON_COUNT
} trc_drop_reason;

typedef struct trc_dropped_step {
    int64_t index; /* ProfilerStep number */
    int reason;    /* trc_drop_reason */
} trc_dropped_step;

/* The header: where the trace comes from and what it holds. Strings are "" when unknown,
 * numbers 0 (or -1 where 0 is meaningful). */
typedef struct trc_header {
    int version;                 /* format version of the file read; the writer writes its own */
    char gpu_name[TRC_STR_MAX];  /* e.g. "Tesla V100-DGXS-32GB" (deviceProperties.name) */
    int gpu_sms;                 /* streaming multiprocessors of the source GPU */
    double gpu_cc;               /* compute capability, e.g. 7.0 */
    int64_t gpu_mem_bytes;       /* total GPU memory */
    char cpu_model[TRC_STR_MAX]; /* source CPU model; Kineto traces do not record it */
    char precision[16];          /* "fp32", "tf32", "fp16", "bf16", "amp_fp16", "amp_bf16",
                                    "unknown" */
    int batch_size;              /* 0 = unknown */
    char batch_size_source[TRC_STR_MAX]; /* how batch_size was found, e.g. "inferred: ..." */
    int world_size;                      /* processes in the job (1 = single GPU) */
    int rank;                            /* this process's rank */
    int steps_recorded;                  /* steps in the file; -1 = not known when written */
    uint32_t recorded;                   /* TRC_HAS_* bits */
    char importer[64];                   /* e.g. "epochsim 0.1.0 kineto" */
    char source[TRC_STR_MAX * 2];        /* source file as given to the importer */
    char source_schema[16];              /* "kineto-old", "kineto-new", "native", ... */
    int n_dropped;
    trc_dropped_step dropped[TRC_DROPPED_MAX]; /* steps the importer left out, and why */
} trc_header;

/* Bounds the reader enforces on a record: its times and counts lie within +-TRC_INT_MAX (far
 * beyond any real trace, yet safe to add), its flops and bytes within [0, TRC_NUM_MAX]. */
#define TRC_INT_MAX (INT64_MAX / 4)
#define TRC_NUM_MAX 1e30

/* One record. A flat value type: the fields a kind does not use are zero / -1 as noted.
 * Times are ns relative to the start of the step (the ProfilerStep annotation); GPU times may
 * lie after the step's end, since the GPU runs behind the CPU. */
typedef struct trc_record {
    uint8_t kind;         /* trc_rec_kind */
    uint8_t thread;       /* 0 = the step's own (main) thread; 1.. = other threads, see steps */
    uint8_t unit;         /* KERNEL: sim_unit (sim/core/workload.h) */
    uint8_t sub;          /* MEMCPY: trc_memcpy_dir; SYNC: trc_sync_kind; COLLECTIVE:
                             trc_coll_kind */
    int8_t pinned;        /* MEMCPY: 1 page-locked host side, 0 pageable, -1 unknown */
    int32_t name;         /* OP/KERNEL/WAIT/LOADER: index into the step's names; -1 = none */
    int32_t stream;       /* GPU stream; -1 = none */
    int32_t group_size;   /* COLLECTIVE: ranks taking part; 0 = unknown */
    int32_t worker;       /* LOADER: loader worker id; -1 = main process */
    int64_t cpu_start_ns; /* start of the CPU span (op, runtime call, wait) */
    int64_t cpu_dur_ns;   /* its duration */
    int64_t gpu_start_ns; /* start of the GPU activity it caused */
    int64_t gpu_dur_ns;   /* its duration; -1 = no GPU activity recorded */
    int64_t blocks;       /* KERNEL: thread blocks in the grid; 0 = unknown */
    double flops;         /* OP/KERNEL: floating-point operations; 0 = unknown */
    double bytes;         /* OP/KERNEL: DRAM bytes moved (estimate); MEMCPY/MEMSET/COLLECTIVE:
                             bytes copied / set / sent per rank; 0 = unknown */
} trc_record;

/* One step: its records in CPU start order, and the names they refer to. */
typedef struct trc_step {
    int64_t index;    /* ProfilerStep number */
    int64_t start_ns; /* step start relative to the start of the recording */
    int64_t dur_ns;   /* CPU duration of the step (the ProfilerStep annotation) */
    char **names;     /* distinct op/kernel names of this step */
    size_t n_names;
    trc_record *recs;
    size_t n_recs;
    size_t cap_names, cap_recs;
} trc_step;

/* Fills h with "unknown" for everything and version = TRC_FORMAT_VERSION. */
void trc_header_init(trc_header *h);

/* Text for enum values, as FORMAT.md and the summaries print them. */
const char *trc_rec_kind_name(int kind);
const char *trc_memcpy_dir_name(int dir);
const char *trc_sync_kind_name(int kind);
const char *trc_coll_kind_name(int kind);
const char *trc_drop_reason_name(int reason);

/* Step building; a step owns its arrays and copies of its names. trc_step_add appends a record.
 * trc_step_add_name appends a copy of `name` and returns its index (the caller de-duplicates);
 * trc_step_intern_name returns the index of an equal name, adding it if new (linear search:
 * for tests and small steps). All return a negative SIM_E* code when out of memory. */
int trc_step_add(trc_step *s, const trc_record *r);
int trc_step_add_name(trc_step *s, const char *name);
int trc_step_intern_name(trc_step *s, const char *name);
/* Empties a step (keeps the arrays for reuse). */
void trc_step_reset(trc_step *s);
/* Frees a step's arrays and zeroes it. */
void trc_step_free(trc_step *s);
/* Name of a record, "" when it has none or the index is out of range. */
const char *trc_step_rec_name(const trc_step *s, const trc_record *r);

/* ---- writer -------------------------------------------------------------------------------- */

typedef struct trc_writer trc_writer;

/* Starts a trace at `path`: writes to a temporary file beside it, which trc_writer_close renames
 * to `path` (so a reader never sees half a file). `h` is copied. On error *out is NULL. */
int trc_writer_open(const char *path, const trc_header *h, trc_writer **out, sim_err *err);
/* Appends one step (copied into the file at once; the caller keeps ownership of s). */
int trc_writer_step(trc_writer *w, const trc_step *s, sim_err *err);
/* Writes the end frame, flushes, renames the temporary file to the path and frees w, also on
 * error (then the temporary file is removed and the path is left as it was). */
int trc_writer_close(trc_writer *w, sim_err *err);
/* Gives up: removes the temporary file and frees w. NULL is allowed. */
void trc_writer_abort(trc_writer *w);

/* ---- reader -------------------------------------------------------------------------------- */

typedef struct trc_reader trc_reader;

/* Opens a native trace and reads its header. A missing file gives SIM_ENOENT; a file that is not
 * an epochsim trace, of another version, truncated or corrupt gives SIM_EFORMAT with the byte
 * offset of the problem in err->offset. */
int trc_reader_open(const char *path, trc_reader **out, sim_err *err);
/* The header (borrowed; valid until trc_reader_close). */
const trc_header *trc_reader_header(const trc_reader *r);
/* Reads the next step. Returns 1 and sets *step (borrowed; valid until the next call or close),
 * 0 at the end of a complete file (after checking the end frame), or a negative SIM_E* code. */
int trc_reader_next_step(trc_reader *r, const trc_step **step, sim_err *err);
/* Closes the file and frees r. NULL is allowed. */
void trc_reader_close(trc_reader *r);

#endif
