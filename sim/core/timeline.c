/* timeline.c — the span recorder and its Chrome-trace JSON export (see timeline.h).
 * Spans are plain records named only when written, so recording costs an append. The export
 * follows the Trace Event Format: "X" complete events (ts/dur in microseconds with nanosecond
 * decimals), "M" metadata naming processes (the host, one per rank) and threads (lanes), and
 * "s"/"f" flow events that share cat, pid, tid and ts with the slices they bind to. */
#include "sim/core/timeline.h"

#include "sim/base/json.h"
#include "sim/base/outfile.h"
#include "sim/core/pipeline.h"
#include "sim/core/workload.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>

#define OPEN INT64_MAX
#define CAT "epochsim"
/* Chrome-trace pid of the host (shared storage) and of rank r: RANK_PID + r. */
#define HOST_PID 1
#define RANK_PID 10

/* One end of a flow arrow: from a launch on the main thread to its kernel on the stream. */
typedef struct flow {
    uint64_t id;
    int64_t ts_ns; /* the start of the span it binds to */
    int32_t lane;
    bool finish;
} flow;

/* What the main thread put on the stream, by sequence number (for names and arguments). */
typedef struct stream_item {
    int64_t step;    /* global step */
    int32_t op;      /* op index in the step's program; -1 = the input batch copy */
    uint8_t op_kind; /* sim_op_kind */
    uint8_t unit;    /* sim_unit of a kernel */
} stream_item;

/* A storage read in service: when it started and its slot lane (-1 = not recorded). */
typedef struct read_slot {
    int64_t start_ns;
    int32_t slot;
} read_slot;

typedef struct lane {
    char name[48];
    int rank;
    int index;
    sim_tl_lane_kind kind;
} lane;

typedef struct rank_state {
    int64_t begin_ns; /* OPEN until the main thread begins step `first` (INT64_MIN for 0) */
    int64_t end_ns;   /* OPEN until the main thread begins step `first + steps` */
    stream_item *items;
    uint64_t item_base; /* seq of items[0]: the first item queued in the window */
    uint64_t n_items, cap_items;
    int lane[SIM_TL_LANE_KINDS]; /* lanes of kinds with one per rank (-1 = none) */
    int *worker_lane;
    int n_workers;
} rank_state;

struct sim_timeline {
    int64_t first, steps;
    int n_ranks;
    rank_state *r;
    lane *lanes;
    int n_lanes, cap_lanes;
    sim_tl_span *spans;
    size_t n_spans, cap_spans;
    flow *flows;
    size_t n_flows, cap_flows;
    /* Storage reads by request id, and which slots are taken, so that concurrent reads sit on
     * separate lanes. */
    read_slot *reads;
    size_t cap_reads;
    uint8_t *slot_busy;
    int n_slots;
    bool oom;
};

sim_timeline *sim_timeline_create(int64_t steps)
{
    return sim_timeline_create_from(0, steps);
}

sim_timeline *sim_timeline_create_from(int64_t first, int64_t steps)
{
    if (steps < 1 || first < 0) return NULL;
    sim_timeline *tl = calloc(1, sizeof *tl);
    if (!tl) return NULL;
    tl->first = first;
    tl->steps = steps;
    return tl;
}

int64_t sim_timeline_first_step(const sim_timeline *tl)
{
    return tl->first;
}

int64_t sim_timeline_begin_ns(const sim_timeline *tl)
{
    if (tl->first == 0) return 0;
    int64_t begin = OPEN;
    for (int i = 0; i < tl->n_ranks; i++)
        if (tl->r[i].begin_ns < begin) begin = tl->r[i].begin_ns;
    return begin == OPEN ? 0 : begin;
}

void sim_timeline_destroy(sim_timeline *tl)
{
    if (!tl) return;
    for (int i = 0; i < tl->n_ranks; i++) {
        free(tl->r[i].items);
        free(tl->r[i].worker_lane);
    }
    free(tl->r);
    free(tl->lanes);
    free(tl->spans);
    free(tl->flows);
    free(tl->reads);
    free(tl->slot_busy);
    free(tl);
}

int64_t sim_timeline_steps(const sim_timeline *tl)
{
    return tl->steps;
}

/* Grows *p (of *cap elements of `size`) to hold n + 1. */
static int grow(void **p, size_t *cap, size_t n, size_t size)
{
    if (n < *cap) return 0;
    size_t c = *cap ? 2 * *cap : 256;
    void *q = realloc(*p, c * size);
    if (!q) return SIM_ENOMEM;
    *p = q;
    *cap = c;
    return 0;
}

static int add_lane(sim_timeline *tl, int rank, sim_tl_lane_kind kind, int index)
{
    size_t cap = (size_t)tl->cap_lanes;
    if (grow((void **)&tl->lanes, &cap, (size_t)tl->n_lanes, sizeof *tl->lanes)) {
        tl->oom = true;
        return -1;
    }
    tl->cap_lanes = (int)cap;
    lane *l = &tl->lanes[tl->n_lanes];
    l->rank = rank;
    l->index = index;
    l->kind = kind;
    const char *sfx = "";
    char gpu[24] = "";
    if (tl->n_ranks > 1 && rank >= 0) snprintf(gpu, sizeof gpu, " (rank %d)", rank);
    sfx = gpu;
    switch (kind) {
    case SIM_TL_LANE_WORKER:
        snprintf(l->name, sizeof l->name, "DataLoader worker %d%s", index, sfx);
        break;
    case SIM_TL_LANE_PIN:
        snprintf(l->name, sizeof l->name, "pin-memory thread%s", sfx);
        break;
    case SIM_TL_LANE_MAIN:
        snprintf(l->name, sizeof l->name, "main thread%s", sfx);
        break;
    case SIM_TL_LANE_H2D:
        snprintf(l->name, sizeof l->name, "PCIe H2D (GPU %d)", rank);
        break;
    case SIM_TL_LANE_D2H:
        snprintf(l->name, sizeof l->name, "PCIe D2H (GPU %d)", rank);
        break;
    case SIM_TL_LANE_STREAM:
        snprintf(l->name, sizeof l->name, "GPU %d compute stream", rank);
        break;
    case SIM_TL_LANE_STORAGE:
        snprintf(l->name, sizeof l->name, "storage slot %d", index);
        break;
    case SIM_TL_LANE_KINDS:
        break;
    }
    return tl->n_lanes++;
}

static int lane_of(sim_timeline *tl, int rank, sim_tl_lane_kind kind, int index);

int sim_timeline_attach(sim_timeline *tl, int n_ranks, int n_workers, bool pin)
{
    if (tl->r || n_ranks < 1) return SIM_EINVAL;
    tl->r = calloc((size_t)n_ranks, sizeof *tl->r);
    if (!tl->r) return SIM_ENOMEM;
    tl->n_ranks = n_ranks;
    for (int i = 0; i < n_ranks; i++) {
        rank_state *r = &tl->r[i];
        r->begin_ns = tl->first == 0 ? INT64_MIN : OPEN;
        r->end_ns = OPEN;
        for (int k = 0; k < SIM_TL_LANE_KINDS; k++)
            r->lane[k] = -1;
        r->n_workers = n_workers;
        if (n_workers > 0) {
            r->worker_lane = malloc((size_t)n_workers * sizeof *r->worker_lane);
            if (!r->worker_lane) return SIM_ENOMEM;
            for (int w = 0; w < n_workers; w++)
                r->worker_lane[w] = add_lane(tl, i, SIM_TL_LANE_WORKER, w);
            if (pin) r->lane[SIM_TL_LANE_PIN] = add_lane(tl, i, SIM_TL_LANE_PIN, 0);
        }
        r->lane[SIM_TL_LANE_MAIN] = add_lane(tl, i, SIM_TL_LANE_MAIN, 0);
        r->lane[SIM_TL_LANE_H2D] = add_lane(tl, i, SIM_TL_LANE_H2D, 0);
        r->lane[SIM_TL_LANE_D2H] = add_lane(tl, i, SIM_TL_LANE_D2H, 0);
        r->lane[SIM_TL_LANE_STREAM] = add_lane(tl, i, SIM_TL_LANE_STREAM, 0);
    }
    /* Storage slot 0 always exists, so the lane is named even before the first read. */
    lane_of(tl, -1, SIM_TL_LANE_STORAGE, 0);
    return tl->oom ? SIM_ENOMEM : SIM_OK;
}

/* The main thread of `rank` begins global step `step` at now_ns: at step == first the rank's
 * window opens, at first + steps it closes. */
static void window_step(sim_timeline *tl, int rank, int64_t step, int64_t now_ns)
{
    rank_state *r = &tl->r[rank];
    if (step >= tl->first && r->begin_ns == OPEN) r->begin_ns = now_ns;
    if (step >= tl->first + tl->steps && r->end_ns == OPEN) r->end_ns = now_ns;
}

/* The rank's window is open (its main thread has begun step `first`, not `first + steps`). */
static bool window_open(const sim_timeline *tl, int rank)
{
    return tl->r[rank].begin_ns != OPEN && tl->r[rank].end_ns == OPEN;
}

/* Something of `rank` (-1: shared, e.g. storage) that started at start_ns is in the window. */
static bool covers(const sim_timeline *tl, int rank, int64_t start_ns)
{
    if (rank >= 0) return start_ns >= tl->r[rank].begin_ns && start_ns < tl->r[rank].end_ns;
    for (int i = 0; i < tl->n_ranks; i++)
        if (start_ns >= tl->r[i].begin_ns && start_ns < tl->r[i].end_ns) return true;
    return false;
}

/* The lane id of (rank, kind, index); storage slots are created on demand (rank ignored).
 * Returns -1 if there is no such lane (e.g. a pin lane without pinning) or out of memory. */
static int lane_of(sim_timeline *tl, int rank, sim_tl_lane_kind kind, int index)
{
    if (kind == SIM_TL_LANE_STORAGE) {
        for (int i = 0; i < tl->n_lanes; i++)
            if (tl->lanes[i].kind == kind && tl->lanes[i].index == index) return i;
        return add_lane(tl, -1, kind, index);
    }
    if (rank < 0 || rank >= tl->n_ranks || (unsigned)kind >= SIM_TL_LANE_KINDS) return -1;
    const rank_state *r = &tl->r[rank];
    if (kind == SIM_TL_LANE_WORKER)
        return index >= 0 && index < r->n_workers ? r->worker_lane[index] : -1;
    return r->lane[kind];
}

static void add_span(sim_timeline *tl, int lane_id, sim_tl_what what, int64_t start_ns,
                     int64_t end_ns, int64_t a, int64_t b)
{
    if (lane_id < 0) return;
    if (grow((void **)&tl->spans, &tl->cap_spans, tl->n_spans, sizeof *tl->spans)) {
        tl->oom = true;
        return;
    }
    tl->spans[tl->n_spans++] = (sim_tl_span){start_ns, end_ns, a, b, lane_id, (uint16_t)what};
}

static void add_flow(sim_timeline *tl, uint64_t id, int lane_id, int64_t ts_ns, bool finish)
{
    if (lane_id < 0) return;
    if (grow((void **)&tl->flows, &tl->cap_flows, tl->n_flows, sizeof *tl->flows)) {
        tl->oom = true;
        return;
    }
    tl->flows[tl->n_flows++] = (flow){id, ts_ns, lane_id, finish};
}

/* The flow id of stream item `seq` (1, 2, ...) of rank `rank`: never 0. */
static uint64_t flow_id(int rank, uint64_t seq)
{
    return ((uint64_t)rank << 40) | seq;
}

/* The main thread of `rank` queued stream item `seq`; the GPU reports each through gpu_item. */
static void add_item(sim_timeline *tl, int rank, uint64_t seq, const stream_item *it)
{
    rank_state *r = &tl->r[rank];
    if (r->n_items == 0) r->item_base = seq;
    if (seq != r->item_base + r->n_items) return; /* only a gap-free run of items is recorded */
    size_t cap = (size_t)r->cap_items;
    if (grow((void **)&r->items, &cap, (size_t)r->n_items, sizeof *r->items)) {
        tl->oom = true;
        return;
    }
    r->cap_items = cap;
    r->items[r->n_items++] = *it;
}

static bool has_item(const sim_timeline *tl, int rank, uint64_t seq)
{
    const rank_state *r = &tl->r[rank];
    return r->n_items > 0 && seq >= r->item_base && seq < r->item_base + r->n_items;
}

/* The GPU ran item `seq` from start_ns to end_ns; a copy moved its bytes on the link until
 * link_end_ns. Records the stream span, the link span and the kernel's flow end. */
static void gpu_item(sim_timeline *tl, int rank, uint64_t seq, int64_t start_ns, int64_t end_ns,
                     int64_t link_end_ns)
{
    if (!has_item(tl, rank, seq)) return;
    const rank_state *r = &tl->r[rank];
    const stream_item *it = &r->items[seq - r->item_base];
    int stream = r->lane[SIM_TL_LANE_STREAM];
    switch ((sim_op_kind)it->op_kind) {
    case SIM_OP_KERNEL:
        add_span(tl, stream, SIM_TL_KERNEL, start_ns, end_ns, (int64_t)seq, 0);
        add_flow(tl, flow_id(rank, seq), stream, start_ns, true);
        break;
    case SIM_OP_MEMCPY_H2D:
    case SIM_OP_MEMCPY_D2H: {
        add_span(tl, stream, SIM_TL_MEMCPY, start_ns, end_ns, (int64_t)seq, 0);
        int link = r->lane[it->op_kind == SIM_OP_MEMCPY_D2H ? SIM_TL_LANE_D2H : SIM_TL_LANE_H2D];
        add_span(tl, link, SIM_TL_TRANSFER, start_ns, link_end_ns > start_ns ? link_end_ns : end_ns,
                 (int64_t)seq, 0);
        break;
    }
    case SIM_OP_ALLREDUCE:
        add_span(tl, stream, SIM_TL_ALLREDUCE, start_ns, end_ns, (int64_t)seq, 0);
        break;
    case SIM_OP_CPU:
    case SIM_OP_SYNC:
    case SIM_OP_NEXT_BATCH:
        break;
    }
}

/* Storage request `req` enters service at now_ns: it takes the first free slot lane if it is in
 * the window. */
static void read_begin(sim_timeline *tl, int req, int64_t now_ns)
{
    size_t cap = tl->cap_reads;
    while ((size_t)req >= tl->cap_reads) {
        if (grow((void **)&tl->reads, &cap, tl->cap_reads, sizeof *tl->reads)) {
            tl->oom = true;
            return;
        }
        tl->cap_reads = cap;
    }
    read_slot *rs = &tl->reads[req];
    rs->slot = -1;
    rs->start_ns = now_ns;
    if (!covers(tl, -1, now_ns)) return;
    int k = 0;
    while (k < tl->n_slots && tl->slot_busy[k])
        k++;
    if (k == tl->n_slots) {
        uint8_t *b = realloc(tl->slot_busy, (size_t)k + 1);
        if (!b) return;
        tl->slot_busy = b;
        tl->n_slots++;
    }
    tl->slot_busy[k] = 1;
    rs->slot = k;
}

static void read_end(sim_timeline *tl, int req, int64_t bytes, int64_t now_ns)
{
    if ((size_t)req >= tl->cap_reads || tl->reads[req].slot < 0) return;
    int k = tl->reads[req].slot;
    tl->slot_busy[k] = 0;
    add_span(tl, lane_of(tl, -1, SIM_TL_LANE_STORAGE, k), SIM_TL_STORAGE_READ,
             tl->reads[req].start_ns, now_ns, bytes, 0);
}

static void observe(void *ctx, int64_t now_ns, const sim_observation *o)
{
    sim_timeline *tl = ctx;
    switch (o->kind) {
    case SIM_OBS_STEP:
        window_step(tl, o->rank, o->a, now_ns);
        break;
    case SIM_OBS_SPAN:
        if (covers(tl, o->rank, o->start_ns))
            add_span(tl, lane_of(tl, o->rank, (sim_tl_lane_kind)o->thread, o->index),
                     (sim_tl_what)o->what, o->start_ns, now_ns, o->a, o->b);
        break;
    case SIM_OBS_ITEM:
        if (window_open(tl, o->rank))
            add_item(tl, o->rank, o->seq,
                     &(stream_item){o->a, o->index, (uint8_t)o->what, (uint8_t)o->unit});
        break;
    case SIM_OBS_LAUNCH:
        if (window_open(tl, o->rank))
            add_flow(tl, flow_id(o->rank, o->seq), lane_of(tl, o->rank, SIM_TL_LANE_MAIN, 0),
                     o->start_ns, false);
        break;
    case SIM_OBS_GPU_DONE:
        gpu_item(tl, o->rank, o->seq, o->start_ns, now_ns, o->a);
        break;
    case SIM_OBS_READ_BEGIN:
        read_begin(tl, o->index, now_ns);
        break;
    case SIM_OBS_READ_END:
        read_end(tl, o->index, o->a, now_ns);
        break;
    }
}

const sim_observer_ops sim_timeline_observer = {.name = "timeline", .observe = observe};

const sim_tl_span *sim_timeline_spans(const sim_timeline *tl, size_t *n)
{
    *n = tl->n_spans;
    return tl->spans;
}

int sim_timeline_lanes(const sim_timeline *tl)
{
    return tl->n_lanes;
}

const char *sim_timeline_lane_name(const sim_timeline *tl, int lane_id)
{
    return tl->lanes[lane_id].name;
}

sim_tl_lane_kind sim_timeline_lane_kind(const sim_timeline *tl, int lane_id)
{
    return tl->lanes[lane_id].kind;
}

int sim_timeline_lane_rank(const sim_timeline *tl, int lane_id)
{
    return tl->lanes[lane_id].rank;
}

int sim_timeline_lane_order(const sim_timeline *tl, int lane_id)
{
    const lane *l = &tl->lanes[lane_id];
    if (l->kind == SIM_TL_LANE_STORAGE)
        return 1000000 + l->index; /* the shared device below the ranks */
    return l->rank * 100000 + (int)l->kind * 10000 + l->index;
}

static const char *op_kind_name(int64_t kind)
{
    switch ((sim_op_kind)kind) {
    case SIM_OP_KERNEL:
        return "kernel launch";
    case SIM_OP_CPU:
        return "cpu";
    case SIM_OP_SYNC:
        return "sync";
    case SIM_OP_MEMCPY_H2D:
        return "memcpy H2D";
    case SIM_OP_MEMCPY_D2H:
        return "memcpy D2H";
    case SIM_OP_ALLREDUCE:
        return "all-reduce";
    case SIM_OP_NEXT_BATCH:
        return "next batch";
    }
    return "?";
}

static const stream_item *item_of(const sim_timeline *tl, const sim_tl_span *s)
{
    int rank = tl->lanes[s->lane].rank;
    if (rank < 0 || !has_item(tl, rank, (uint64_t)s->a)) return NULL;
    return &tl->r[rank].items[(uint64_t)s->a - tl->r[rank].item_base];
}

/* The name of a span of the GPU stream or a link: what its item was. */
static void item_span_name(const sim_timeline *tl, const sim_tl_span *s, char *buf, size_t size)
{
    const stream_item *it = item_of(tl, s);
    if (s->what == SIM_TL_KERNEL) {
        if (it)
            snprintf(buf, size, "op %d kernel (%s)", it->op, sim_unit_name(it->unit));
        else
            snprintf(buf, size, "kernel");
    } else if (s->what == SIM_TL_ALLREDUCE) {
        snprintf(buf, size, "op %d all-reduce", it ? it->op : -1);
    } else if (it && it->op < 0) {
        snprintf(buf, size, "input batch H2D");
    } else if (it) {
        snprintf(buf, size, "op %d %s", it->op, op_kind_name(it->op_kind));
    } else {
        snprintf(buf, size, "memcpy");
    }
}

/* The names of the spans whose name carries no figure. */
static const char *const plain_names[SIM_TL_WHAT_COUNT] = {
    [SIM_TL_DATA_WAIT] = "wait for batch",
    [SIM_TL_COPY_ISSUE] = "input .to(cuda)",
    [SIM_TL_COPY_WAIT] = "wait for input copy",
    [SIM_TL_LAUNCH_WAIT] = "launch queue full",
    [SIM_TL_GRAPH_LAUNCH] = "CUDA graph launch",
    [SIM_TL_STEP_TAIL] = "python step overhead",
    [SIM_TL_WORKER_START] = "worker start",
    [SIM_TL_DECODE] = "decode",
    [SIM_TL_COLLATE] = "collate",
};

void sim_timeline_span_name(const sim_timeline *tl, const sim_tl_span *s, char *buf, size_t size)
{
    switch ((sim_tl_what)s->what) {
    case SIM_TL_STEP:
        snprintf(buf, size, "step %" PRId64, s->a);
        return;
    case SIM_TL_DISPATCH:
        snprintf(buf, size, "op %" PRId64 " %s", s->a, op_kind_name(s->b));
        return;
    case SIM_TL_SYNC:
        if (s->a >= 0)
            snprintf(buf, size, "op %" PRId64 " wait for GPU (%s)", s->a, op_kind_name(s->b));
        else
            snprintf(buf, size, "synchronize");
        return;
    case SIM_TL_BATCH:
        snprintf(buf, size, "batch %" PRId64, s->a);
        return;
    case SIM_TL_READ:
        snprintf(buf, size, s->b ? "read (page cache)" : "read (storage)");
        return;
    case SIM_TL_PIN_BATCH:
        snprintf(buf, size, "pin batch %" PRId64, s->a);
        return;
    case SIM_TL_STORAGE_READ:
        snprintf(buf, size, "read %.0f kB", (double)s->a / 1e3);
        return;
    case SIM_TL_KERNEL:
    case SIM_TL_MEMCPY:
    case SIM_TL_TRANSFER:
    case SIM_TL_ALLREDUCE:
        item_span_name(tl, s, buf, size);
        return;
    default:
        break;
    }
    const char *name = s->what < SIM_TL_WHAT_COUNT ? plain_names[s->what] : NULL;
    snprintf(buf, size, "%s", name ? name : "?");
}

const char *sim_timeline_category(sim_tl_what what)
{
    switch (what) {
    case SIM_TL_STEP:
        return "step";
    case SIM_TL_COPY_ISSUE:
    case SIM_TL_DISPATCH:
    case SIM_TL_GRAPH_LAUNCH:
    case SIM_TL_STEP_TAIL:
        return "dispatch";
    case SIM_TL_DATA_WAIT:
    case SIM_TL_COPY_WAIT:
    case SIM_TL_LAUNCH_WAIT:
    case SIM_TL_SYNC:
        return "wait";
    case SIM_TL_WORKER_START:
    case SIM_TL_BATCH:
    case SIM_TL_READ:
    case SIM_TL_DECODE:
    case SIM_TL_COLLATE:
    case SIM_TL_PIN_BATCH:
        return "loader";
    case SIM_TL_STORAGE_READ:
        return "storage";
    case SIM_TL_KERNEL:
        return "kernel";
    case SIM_TL_MEMCPY:
    case SIM_TL_TRANSFER:
        return "copy";
    case SIM_TL_ALLREDUCE:
        return "collective";
    case SIM_TL_WHAT_COUNT:
        break;
    }
    return "other";
}

/* ---- JSON ------------------------------------------------------------------------------- */

/* Microseconds with three decimals: exact nanoseconds, no binary-fraction noise. */
static void kus(yajl_gen g, const char *k, int64_t ns)
{
    char buf[32];
    int64_t a = ns < 0 ? -ns : ns;
    int n = snprintf(buf, sizeof buf, "%s%" PRId64 ".%03" PRId64, ns < 0 ? "-" : "", a / 1000,
                     a % 1000);
    sim_json_key(g, k);
    yajl_gen_number(g, buf, (size_t)n);
}

static int pid_of(const sim_timeline *tl, int lane_id)
{
    int rank = tl->lanes[lane_id].rank;
    return rank < 0 ? HOST_PID : RANK_PID + rank;
}

static void meta(yajl_gen g, const char *name, int pid, int tid, const char *k, const char *v,
                 long long num)
{
    yajl_gen_map_open(g);
    sim_json_str(g, "ph", "M");
    sim_json_str(g, "name", name);
    sim_json_int(g, "pid", pid);
    sim_json_int(g, "tid", tid);
    sim_json_key(g, "args");
    yajl_gen_map_open(g);
    if (v)
        sim_json_str(g, k, v);
    else
        sim_json_int(g, k, num);
    yajl_gen_map_close(g);
    yajl_gen_map_close(g);
}

static int cmp_span(const void *pa, const void *pb)
{
    const sim_tl_span *a = pa, *b = pb;
    if (a->start_ns != b->start_ns) return a->start_ns < b->start_ns ? -1 : 1;
    int64_t da = a->end_ns - a->start_ns, db = b->end_ns - b->start_ns;
    if (da != db) return da > db ? -1 : 1; /* an enclosing slice before the slices it holds */
    return (a->lane > b->lane) - (a->lane < b->lane);
}

static void span_args(yajl_gen g, const sim_timeline *tl, const sim_tl_span *s)
{
    sim_json_key(g, "args");
    yajl_gen_map_open(g);
    sim_json_str(g, "kind", sim_timeline_category((sim_tl_what)s->what));
    switch ((sim_tl_what)s->what) {
    case SIM_TL_STEP:
    case SIM_TL_DATA_WAIT:
        sim_json_int(g, "step", s->a);
        break;
    case SIM_TL_DISPATCH:
    case SIM_TL_LAUNCH_WAIT:
        sim_json_int(g, "op", s->a);
        break;
    case SIM_TL_BATCH:
    case SIM_TL_READ:
    case SIM_TL_DECODE:
    case SIM_TL_COLLATE:
    case SIM_TL_PIN_BATCH:
        sim_json_int(g, "batch", s->a);
        break;
    case SIM_TL_STORAGE_READ:
        sim_json_int(g, "bytes", s->a);
        break;
    case SIM_TL_KERNEL:
    case SIM_TL_MEMCPY:
    case SIM_TL_TRANSFER:
    case SIM_TL_ALLREDUCE: {
        const stream_item *it = item_of(tl, s);
        sim_json_int(g, "seq", s->a);
        if (it) {
            sim_json_int(g, "step", it->step);
            sim_json_int(g, "op", it->op);
            if (s->what == SIM_TL_KERNEL) sim_json_str(g, "unit", sim_unit_name(it->unit));
        }
        break;
    }
    default:
        break;
    }
    yajl_gen_map_close(g);
}

static void write_cb(void *ctx, const char *str, size_t len)
{
    fwrite(str, 1, len, (FILE *)ctx);
}

/* Names the processes (the host, one per rank) and threads (lanes), in display order. */
static void write_metadata(yajl_gen g, const sim_timeline *tl)
{
    meta(g, "process_name", HOST_PID, 0, "name", "host (shared storage)", 0);
    meta(g, "process_sort_index", HOST_PID, 0, "sort_index", NULL, 1000);
    for (int r = 0; r < tl->n_ranks; r++) {
        char name[48];
        snprintf(name, sizeof name, "rank %d (GPU %d)", r, r);
        meta(g, "process_name", RANK_PID + r, 0, "name", name, 0);
        meta(g, "process_sort_index", RANK_PID + r, 0, "sort_index", NULL, r);
    }
    for (int i = 0; i < tl->n_lanes; i++) {
        meta(g, "thread_name", pid_of(tl, i), i + 1, "name", tl->lanes[i].name, 0);
        meta(g, "thread_sort_index", pid_of(tl, i), i + 1, "sort_index", NULL,
             sim_timeline_lane_order(tl, i));
    }
}

/* The spans as "X" complete events, in the order given. */
static void write_spans(yajl_gen g, const sim_timeline *tl, const sim_tl_span *order)
{
    char name[96];
    for (size_t k = 0; k < tl->n_spans; k++) {
        const sim_tl_span *s = &order[k];
        sim_timeline_span_name(tl, s, name, sizeof name);
        yajl_gen_map_open(g);
        sim_json_str(g, "ph", "X");
        sim_json_str(g, "cat", CAT);
        sim_json_str(g, "name", name);
        sim_json_int(g, "pid", pid_of(tl, s->lane));
        sim_json_int(g, "tid", s->lane + 1);
        kus(g, "ts", s->start_ns);
        kus(g, "dur", s->end_ns - s->start_ns);
        span_args(g, tl, s);
        yajl_gen_map_close(g);
    }
}

/* The launch arrows as "s"/"f" flow events. */
static void write_flows(yajl_gen g, const sim_timeline *tl)
{
    for (size_t k = 0; k < tl->n_flows; k++) {
        const flow *f = &tl->flows[k];
        yajl_gen_map_open(g);
        sim_json_str(g, "ph", f->finish ? "f" : "s");
        if (f->finish)
            sim_json_str(g, "bp",
                         "e"); /* bind to the enclosing slice (the kernel), not the next one */
        sim_json_str(g, "cat", CAT);
        sim_json_str(g, "name", "launch");
        sim_json_int(g, "id", (long long)f->id);
        sim_json_int(g, "pid", pid_of(tl, f->lane));
        sim_json_int(g, "tid", f->lane + 1);
        kus(g, "ts", f->ts_ns);
        yajl_gen_map_close(g);
    }
}

int sim_timeline_write_json(const sim_timeline *tl, const char *path, sim_err *err)
{
    if (tl->oom) return sim_err_set(err, SIM_ENOMEM, path, 0, 0, "out of memory while recording");
    /* Sorted by start (longest first on ties) so that viewers see parents before children. */
    sim_tl_span *order = malloc((tl->n_spans ? tl->n_spans : 1) * sizeof *order);
    if (!order) return sim_err_set(err, SIM_ENOMEM, path, 0, 0, "out of memory");
    if (tl->n_spans) memcpy(order, tl->spans, tl->n_spans * sizeof *order);
    qsort(order, tl->n_spans, sizeof *order, cmp_span);

    sim_outfile o;
    int rc = sim_outfile_open(&o, path, err);
    if (rc) {
        free(order);
        return rc;
    }
    yajl_gen g = yajl_gen_alloc(NULL);
    if (!g) {
        sim_outfile_abort(&o);
        free(order);
        return sim_err_set(err, SIM_ENOMEM, path, 0, 0, "out of memory");
    }
    yajl_gen_config(g, yajl_gen_print_callback, write_cb, (void *)o.fp);
    yajl_gen_map_open(g);
    sim_json_str(g, "displayTimeUnit", "ns");
    sim_json_key(g, "otherData");
    yajl_gen_map_open(g);
    sim_json_str(g, "generator", "epochsim " EPOCHSIM_VERSION);
    sim_json_int(g, "timeline_steps", tl->steps);
    yajl_gen_map_close(g);
    sim_json_key(g, "traceEvents");
    yajl_gen_array_open(g);
    write_metadata(g, tl);
    write_spans(g, tl, order);
    write_flows(g, tl);
    yajl_gen_array_close(g);
    yajl_gen_status st = yajl_gen_map_close(g);
    yajl_gen_free(g);
    free(order);
    if (st != yajl_gen_status_ok) {
        sim_outfile_abort(&o);
        return sim_err_set(err, SIM_EIO, path, 0, 0, "JSON generation failed (%d)", (int)st);
    }
    fputc('\n', o.fp);
    return sim_outfile_commit(&o, err);
}
