/* timeline.h — a recorder of what every thread, link and GPU stream of a run did, as spans on
 * named lanes, for the first N training steps only (so files stay small), and its export as
 * Chrome-trace JSON (Perfetto UI, chrome://tracing). It is the engine's observer: components
 * report what they do (pipeline.h, sim_observation) and know nothing of it. The window:
 * everything that *started* before the main thread of its rank began step FIRST + N (and, from a
 * later first step, after it began step FIRST). */
#ifndef SIM_TIMELINE_H
#define SIM_TIMELINE_H

#include "sim/base/err.h"
#include "sim/core/engine.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sim_timeline sim_timeline;

/* What a lane is; lanes of one rank (GPU) are shown in this order. Storage is shared. */
typedef enum sim_tl_lane_kind {
    SIM_TL_LANE_WORKER,  /* a DataLoader worker process; index = worker */
    SIM_TL_LANE_PIN,     /* the pin-memory thread */
    SIM_TL_LANE_MAIN,    /* the main (Python) thread: steps, dispatch, waits */
    SIM_TL_LANE_H2D,     /* PCIe host-to-device direction of this GPU's link */
    SIM_TL_LANE_D2H,     /* PCIe device-to-host direction */
    SIM_TL_LANE_STREAM,  /* the GPU's compute stream (in order) */
    SIM_TL_LANE_STORAGE, /* one storage service slot; index = slot (rank is -1) */
    SIM_TL_LANE_KINDS
} sim_tl_lane_kind;

/* What a span is. a and b carry the figures named beside each kind. */
typedef enum sim_tl_what {
    SIM_TL_STEP,         /* main: one training step; a = global step */
    SIM_TL_DATA_WAIT,    /* main: waiting for the next batch; a = global step */
    SIM_TL_COPY_ISSUE,   /* main: x.to("cuda") dispatch */
    SIM_TL_COPY_WAIT,    /* main: blocked until the input copy is done */
    SIM_TL_DISPATCH,     /* main: one op's dispatch; a = op index, b = sim_op_kind */
    SIM_TL_LAUNCH_WAIT,  /* main: cudaLaunchKernel blocked on a full launch queue; a = op */
    SIM_TL_SYNC,         /* main: waiting for the GPU; a = op index or -1, b = sim_op_kind/-1 */
    SIM_TL_GRAPH_LAUNCH, /* main: one CUDA-graph launch */
    SIM_TL_STEP_TAIL,    /* main: Python work after the ops */
    SIM_TL_WORKER_START, /* worker: process start-up */
    SIM_TL_BATCH,        /* worker (or main with num_workers = 0): a = global batch */
    SIM_TL_READ,         /* worker: reading one sample; a = global batch, b = 1 if page cache */
    SIM_TL_DECODE,       /* worker: decoding one sample; a = global batch */
    SIM_TL_COLLATE,      /* worker: default_collate; a = global batch */
    SIM_TL_PIN_BATCH,    /* pin thread: copy into page-locked memory; a = global batch */
    SIM_TL_STORAGE_READ, /* storage slot: one read in service; a = bytes */
    SIM_TL_KERNEL,       /* stream: a = seq on the stream */
    SIM_TL_MEMCPY,       /* stream: a copy occupying the stream; a = seq */
    SIM_TL_ALLREDUCE,    /* stream: an all-reduce (with its barrier wait); a = seq */
    SIM_TL_TRANSFER,     /* H2D / D2H lane: bytes moving on the link; a = seq */
    SIM_TL_WHAT_COUNT
} sim_tl_what;

typedef struct sim_tl_span {
    int64_t start_ns, end_ns;
    int64_t a, b;
    int32_t lane;
    uint16_t what; /* sim_tl_what */
} sim_tl_span;

/* A recorder for the first `steps` steps (>= 1) of each rank. NULL when out of memory. */
sim_timeline *sim_timeline_create(int64_t steps);
/* A recorder for `steps` steps from global step `first` (>= 0; skip the warm-up): what started
 * after the main thread of its rank began step `first` and before it began `first + steps`.
 * sim_timeline_create(n) is sim_timeline_create_from(0, n). NULL on bad arguments or no memory. */
sim_timeline *sim_timeline_create_from(int64_t first, int64_t steps);
void sim_timeline_destroy(sim_timeline *tl);
int64_t sim_timeline_steps(const sim_timeline *tl);
int64_t sim_timeline_first_step(const sim_timeline *tl);
/* When the earliest rank's window began, ns (0 when it starts at step 0 or never began). */
int64_t sim_timeline_begin_ns(const sim_timeline *tl);

/* Called by the run before it starts: creates the lanes of n_ranks ranks with n_workers workers
 * each (0 = the main thread loads) and a pin-memory thread if `pin`. Returns 0 or SIM_ENOMEM. */
int sim_timeline_attach(sim_timeline *tl, int n_ranks, int n_workers, bool pin);

/* The observer ops (the context: the timeline, attached). run.c sets them on its engine when asked
 * for a timeline; a recording that runs out of memory is reported by the writer. */
extern const sim_observer_ops sim_timeline_observer;

/* Read access, for tests and plots. Pointers are borrowed until the next observation. */
const sim_tl_span *sim_timeline_spans(const sim_timeline *tl, size_t *n);
int sim_timeline_lanes(const sim_timeline *tl);
/* The lane's name ("DataLoader worker 2", "GPU 0 stream", ...), its kind and rank (-1 shared),
 * and a key that sorts lanes in display order. */
const char *sim_timeline_lane_name(const sim_timeline *tl, int lane);
sim_tl_lane_kind sim_timeline_lane_kind(const sim_timeline *tl, int lane);
int sim_timeline_lane_rank(const sim_timeline *tl, int lane);
int sim_timeline_lane_order(const sim_timeline *tl, int lane);
/* A span's display name, e.g. "op 17 kernel (tensor)", written into buf. */
void sim_timeline_span_name(const sim_timeline *tl, const sim_tl_span *s, char *buf, size_t size);
/* Short category of a span kind: "step", "dispatch", "wait", "loader", "storage", "kernel",
 * "copy", "collective". */
const char *sim_timeline_category(sim_tl_what what);

/* Writes the recording as Chrome-trace JSON (whole or not at all; "-" = stdout). Returns 0,
 * SIM_EIO, or SIM_ENOMEM when the recording ran out of memory. */
int sim_timeline_write_json(const sim_timeline *tl, const char *path, sim_err *err);

#endif
