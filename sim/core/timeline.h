/* timeline.h — a recorder of what every thread, link and GPU stream of a run did, as spans on
 * named lanes, for the first N training steps only (so files stay small), and its export as
 * Chrome-trace JSON (Perfetto UI, chrome://tracing). Components get a borrowed pointer that is
 * NULL when nothing is recorded, so the hot path pays one predictable branch per hook. The
 * window: everything that *started* before the main thread of its rank began step N. */
#ifndef SIM_TIMELINE_H
#define SIM_TIMELINE_H

#include "sim/base/err.h"

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

/* One end of a flow arrow: from a launch on the main thread to its kernel on the stream. */
typedef struct sim_tl_flow {
    uint64_t id;
    int64_t ts_ns; /* the start of the span it binds to */
    int32_t lane;
    bool finish;
} sim_tl_flow;

/* What the main thread put on the stream, by sequence number (for names and arguments). */
typedef struct sim_tl_item {
    int64_t step;    /* global step */
    int32_t op;      /* op index in the step's program; -1 = the input batch copy */
    uint8_t op_kind; /* sim_op_kind */
    uint8_t unit;    /* sim_unit of a kernel */
} sim_tl_item;

/* A recorder for the first `steps` steps (>= 1) of each rank. NULL when out of memory. */
sim_timeline *sim_timeline_create(int64_t steps);
void sim_timeline_destroy(sim_timeline *tl);
int64_t sim_timeline_steps(const sim_timeline *tl);

/* Called by the run before it starts: creates the lanes of n_ranks ranks with n_workers workers
 * each (0 = the main thread loads) and a pin-memory thread if `pin`. Returns 0 or SIM_ENOMEM. */
int sim_timeline_attach(sim_timeline *tl, int n_ranks, int n_workers, bool pin);

/* The main thread of `rank` begins global step `step` at now_ns: at step == steps the rank's
 * window closes. */
void sim_timeline_step(sim_timeline *tl, int rank, int64_t step, int64_t now_ns);
/* The rank's window is still open (its main thread has not begun step `steps`). */
bool sim_timeline_on(const sim_timeline *tl, int rank);
/* Something of `rank` (-1: shared, e.g. storage) that started at start_ns is in the window. */
bool sim_timeline_covers(const sim_timeline *tl, int rank, int64_t start_ns);

/* The lane id of (rank, kind, index); storage slots are created on demand (rank ignored).
 * Returns -1 if there is no such lane (e.g. a pin lane without pinning) or out of memory. */
int sim_timeline_lane(sim_timeline *tl, int rank, sim_tl_lane_kind kind, int index);
/* Records a span (out of memory is remembered and reported by the writer). */
void sim_timeline_span(sim_timeline *tl, int lane, sim_tl_what what, int64_t start_ns,
                       int64_t end_ns, int64_t a, int64_t b);
/* Records one end of a flow. */
void sim_timeline_flow(sim_timeline *tl, uint64_t id, int lane, int64_t ts_ns, bool finish);
/* The flow id of stream item `seq` (1, 2, ...) of rank `rank`: never 0. */
uint64_t sim_timeline_flow_id(int rank, uint64_t seq);

/* The main thread of `rank` queued stream item `seq` (in the window). Items must be registered
 * in order 1, 2, ...; the GPU then reports each through sim_timeline_gpu_item. */
void sim_timeline_item(sim_timeline *tl, int rank, uint64_t seq, const sim_tl_item *it);
/* Stream item `seq` was registered (so the GPU records it). */
bool sim_timeline_has_item(const sim_timeline *tl, int rank, uint64_t seq);
/* The GPU ran item `seq` from start_ns to end_ns; a copy moved its bytes on the link until
 * link_end_ns. Records the stream span, the link span and the kernel's flow end. */
void sim_timeline_gpu_item(sim_timeline *tl, int rank, uint64_t seq, int64_t start_ns,
                           int64_t end_ns, int64_t link_end_ns);

/* Read access, for tests and plots. Pointers are borrowed until the next record call. */
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
