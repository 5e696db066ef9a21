/* gpu.c — one GPU's compute stream and its communication stream (see pipeline.h).
 * Compute items run strictly in order, as on one CUDA stream: a kernel occupies the GPU for its
 * duration; a copy occupies the stream while the host link moves it (pageable copies go through
 * the driver's staging buffer at the lower pageable rate); an all-reduce queued on the compute
 * stream (a replayed trace's) holds it until every GPU has joined and the reduction is done.
 * A DDP bucket's all-reduce is handed to the communication stream (NCCL's own) when the compute
 * stream reaches it, that is once the kernel that made its bucket ready is done, and the compute
 * stream goes on. While an NCCL kernel runs it holds cfg.comm_sm_share of the SMs (NCCL's thread
 * blocks never share an SM with other kernels: NVIDIA/nccl#689), so a compute kernel that wants
 * a share f of the SMs runs at min(1, (1 - comm_sm_share) / f) of its speed; memory-bandwidth
 * contention between the two is not modelled. A kernel marked to wait for the communication
 * stream (DDP's optimizer step) starts once that stream has drained. */
#include "sim/core/pipeline.h"

#include "sim/base/err.h"
#include "sim/core/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { EV_KERNEL_DONE, EV_COPY_DONE, EV_COLL_DONE, EV_COMM_DONE };
enum { ITEM_KERNEL, ITEM_COPY, ITEM_COPY_D2H, ITEM_ALLREDUCE };

typedef struct item {
    double amount; /* kernel: ns; copy and all-reduce: bytes */
    float sm_fraction;
    uint8_t type;
    uint8_t pinned;
    uint8_t comm; /* ALLREDUCE: on the communication stream; KERNEL: waits for it to drain */
} item;

typedef struct comm_item {
    double bytes;
    uint64_t seq; /* its sequence number on the compute stream */
} comm_item;

struct sim_gpu {
    sim_engine *e;
    const bool *observed; /* sim_engine_observed */
    uint32_t id;
    int timer; /* the running kernel's end */
    sim_gpu_config cfg;
    item *ring;
    uint64_t cap; /* power of two */
    uint64_t enqueued, started, finished;
    bool running;
    bool blocked; /* the next kernel waits for the communication stream */
    bool waiting;
    uint64_t wait_seq;
    uint32_t wait_target, wait_kind;
    int64_t run_start_ns, link_end_ns; /* the running item: its start, its bytes off the link */
    /* the running kernel, when this GPU times it (not on a shared GPU) */
    bool timed;
    float run_sm;
    double left_ns, rate; /* its work left at full speed as of rate_t_ns, and its speed now */
    int64_t rate_t_ns;
    /* the communication stream: all-reduces in hand-over order, [comm_head, comm_tail) */
    comm_item *comm;
    uint64_t comm_cap, comm_head, comm_tail; /* comm_cap: a power of two */
    bool comm_running;
    int64_t comm_start_ns;
};

static bool comm_pending(const sim_gpu *g)
{
    return g->comm_head != g->comm_tail;
}

static void check_waiter(sim_gpu *g)
{
    if (!g->waiting || g->finished < g->wait_seq) return;
    g->waiting = false;
    sim_engine_after(g->e, 0, g->wait_target, g->wait_kind, g->finished);
}

/* The running kernel's speed beside the NCCL kernel running now, if any. */
static double kernel_rate(const sim_gpu *g)
{
    if (!g->comm_running || g->run_sm <= 0) return 1;
    double r = (1 - g->cfg.comm_sm_share) / g->run_sm;
    return r < 1 ? r : 1;
}

/* llround of a time 0 <= x < 2^63 ns, without the library call it compiles to: the whole part,
 * plus one from a half up (x less its whole part is exact, so the test is too). */
static int64_t round_ns(double x)
{
    SIM_ASSERT(x >= 0 && x < 0x1p63);
    int64_t whole = (int64_t)x;
    return whole + (x - (double)whole >= 0.5);
}

/* The communication stream started or ended a kernel: the timed compute kernel, if one runs,
 * keeps the work it has done and goes on at its new speed. */
static void rerate(sim_gpu *g)
{
    if (!g->running || !g->timed) return;
    int64_t now = sim_engine_now(g->e);
    g->left_ns -= (double)(now - g->rate_t_ns) * g->rate;
    g->rate_t_ns = now;
    g->rate = kernel_rate(g);
    double left = g->left_ns > 0 ? g->left_ns : 0;
    /* At full speed (no NCCL kernel beside it) the time left is the work left: x / 1 is x. */
    double dur_ns = g->rate == 1 ? left : left / g->rate;
    sim_engine_timer_set(g->e, g->timer, now + round_ns(dur_ns));
}

static void start_kernel(sim_gpu *g, const item *it)
{
    if (g->cfg.share) { /* the shared GPU says when it runs (and tells the metrics) */
        sim_gpushare_kernel(g->cfg.share, g->cfg.share_ctx, (int64_t)it->amount, it->sm_fraction,
                            g->id, EV_KERNEL_DONE);
        return;
    }
    sim_metrics_gpu(g->cfg.metrics, g->cfg.index, SIM_GPUST_KERNEL, it->sm_fraction);
    g->timed = true;
    g->run_sm = it->sm_fraction;
    g->left_ns = it->amount;
    g->rate = 0; /* rerate sets it; no work is done at rate 0 */
    g->rate_t_ns = sim_engine_now(g->e);
    rerate(g);
}

static void start_item(sim_gpu *g, const item *it)
{
    g->started++;
    g->running = true;
    g->timed = false;
    g->run_start_ns = g->link_end_ns = sim_engine_now(g->e);
    switch (it->type) {
    case ITEM_KERNEL:
        start_kernel(g, it);
        break;
    case ITEM_COPY: {
        sim_metrics_gpu(g->cfg.metrics, g->cfg.index, SIM_GPUST_COPY, 0);
        /* Work on the link is in bytes at the pinned rate: a pageable copy costs more of it. */
        double work = it->amount * (it->pinned ? 1.0 : g->cfg.pageable_slowdown);
        sim_ps_submit_as(g->cfg.h2d, g->cfg.group, work + 1e-9, g->id, EV_COPY_DONE, 0);
        break;
    }
    case ITEM_COPY_D2H:
        sim_metrics_gpu(g->cfg.metrics, g->cfg.index, SIM_GPUST_COPY, 0);
        sim_ps_submit_as(g->cfg.d2h ? g->cfg.d2h : g->cfg.h2d, g->cfg.group, it->amount + 1e-9,
                         g->id, EV_COPY_DONE, 0);
        break;
    case ITEM_ALLREDUCE:
        sim_metrics_gpu(g->cfg.metrics, g->cfg.index, SIM_GPUST_COLLECTIVE, 0);
        sim_collective_join(g->cfg.coll, g->cfg.index, it->amount, g->id, EV_COLL_DONE);
        break;
    }
}

/* Makes room for one more element in a ring of `size`-byte elements holding [head, tail): a
 * full ring doubles, each element keeping its sequence position. Returns 0 or SIM_ENOMEM. */
static int ring_room(void **ring, size_t size, uint64_t *cap, uint64_t head, uint64_t tail)
{
    if (tail - head < *cap) return SIM_OK;
    uint64_t cap2 = 2 * *cap;
    char *r = malloc(cap2 * size);
    if (!r) return SIM_ENOMEM;
    for (uint64_t s = head; s < tail; s++)
        memcpy(r + (s & (cap2 - 1)) * size, (char *)*ring + (s & (*cap - 1)) * size, size);
    free(*ring);
    *ring = r;
    *cap = cap2;
    return SIM_OK;
}

static void comm_start(sim_gpu *g)
{
    if (g->comm_running || !comm_pending(g)) return;
    const comm_item *c = &g->comm[g->comm_head & (g->comm_cap - 1)];
    g->comm_running = true;
    g->comm_start_ns = sim_engine_now(g->e);
    sim_metrics_comm(g->cfg.metrics, g->cfg.index, (float)g->cfg.comm_sm_share);
    rerate(g);
    sim_collective_join(g->cfg.coll, g->cfg.index, c->bytes, g->id, EV_COMM_DONE);
}

/* The compute stream reached the all-reduce `it`: the communication stream takes it, and for
 * the compute stream it is done. */
static void hand_over(sim_gpu *g, const item *it)
{
    if (ring_room((void **)&g->comm, sizeof *g->comm, &g->comm_cap, g->comm_head, g->comm_tail)) {
        sim_engine_fail(g->e, SIM_ENOMEM);
        return;
    }
    g->started++;
    g->finished++;
    g->comm[g->comm_tail++ & (g->comm_cap - 1)] = (comm_item){it->amount, g->started};
    comm_start(g);
}

static void start_next(sim_gpu *g)
{
    while (!g->running && g->started < g->enqueued) {
        const item *it = &g->ring[g->started & (g->cap - 1)];
        if (it->type == ITEM_ALLREDUCE && it->comm) {
            hand_over(g, it);
            continue;
        }
        if (it->type == ITEM_KERNEL && it->comm && comm_pending(g)) {
            /* DDP's optimizer step waits for every bucket: exposed communication */
            if (!g->blocked) sim_metrics_gpu(g->cfg.metrics, g->cfg.index, SIM_GPUST_COLLECTIVE, 0);
            g->blocked = true;
            return;
        }
        g->blocked = false;
        start_item(g, it);
        return;
    }
    if (!g->running) sim_metrics_gpu(g->cfg.metrics, g->cfg.index, SIM_GPUST_IDLE, 0);
}

static void comm_done(sim_gpu *g)
{
    uint64_t seq = g->comm[g->comm_head++ & (g->comm_cap - 1)].seq;
    g->comm_running = false;
    sim_metrics_comm(g->cfg.metrics, g->cfg.index, 0);
    rerate(g);
    if (*g->observed)
        sim_engine_observe(g->e, &(sim_observation){.kind = SIM_OBS_GPU_DONE,
                                                    .rank = g->cfg.index,
                                                    .seq = seq,
                                                    .start_ns = g->comm_start_ns,
                                                    .a = sim_engine_now(g->e)});
    comm_start(g);
    if (g->blocked && !comm_pending(g)) start_next(g);
    check_waiter(g);
}

static void handle(sim_engine *e, void *self, const sim_event *ev)
{
    sim_gpu *g = self;
    if (ev->kind == EV_COMM_DONE) {
        comm_done(g);
        return;
    }
    if (ev->kind == EV_COPY_DONE) g->link_end_ns = sim_engine_now(e);
    if (ev->kind == EV_COPY_DONE && g->cfg.copy_overhead_ns > 0) {
        /* The fixed per-copy cost (DMA setup, completion) follows the transfer. */
        sim_engine_after(e, (int64_t)g->cfg.copy_overhead_ns, g->id, EV_KERNEL_DONE, 0);
        return;
    }
    g->running = false;
    g->timed = false;
    g->finished++;
    if (*g->observed)
        sim_engine_observe(e, &(sim_observation){.kind = SIM_OBS_GPU_DONE,
                                                 .rank = g->cfg.index,
                                                 .seq = g->finished,
                                                 .start_ns = g->run_start_ns,
                                                 .a = g->link_end_ns});
    start_next(g);
    check_waiter(g);
}

static const sim_component_ops gpu_ops = {.name = "gpu", .handle = handle};

sim_gpu *sim_gpu_create(sim_engine *e, const sim_gpu_config *cfg)
{
    sim_gpu *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->e = e;
    g->observed = sim_engine_observed(e);
    g->cfg = *cfg;
    g->cap = 1024;
    g->ring = malloc(g->cap * sizeof *g->ring);
    g->comm_cap = 16;
    g->comm = malloc(g->comm_cap * sizeof *g->comm);
    int id = g->ring && g->comm ? sim_engine_add(e, &gpu_ops, g) : -1;
    g->timer = id >= 0 ? sim_engine_timer_add(e, (uint32_t)id, EV_KERNEL_DONE) : -1;
    if (id < 0 || g->timer < 0) {
        free(g->ring);
        free(g->comm);
        free(g);
        return NULL;
    }
    g->id = (uint32_t)id;
    return g;
}

void sim_gpu_destroy(sim_gpu *g)
{
    if (!g) return;
    free(g->ring);
    free(g->comm);
    free(g);
}

static uint64_t push(sim_gpu *g, item it)
{
    if (ring_room((void **)&g->ring, sizeof *g->ring, &g->cap, g->started, g->enqueued)) {
        sim_engine_fail(g->e, SIM_ENOMEM);
        return g->enqueued;
    }
    g->ring[g->enqueued & (g->cap - 1)] = it;
    g->enqueued++;
    start_next(g);
    return g->enqueued;
}

uint64_t sim_gpu_kernel(sim_gpu *g, int64_t dur_ns, float sm_fraction)
{
    return push(g, (item){(double)dur_ns, sm_fraction, ITEM_KERNEL, 0, 0});
}

uint64_t sim_gpu_kernel_after_comm(sim_gpu *g, int64_t dur_ns, float sm_fraction)
{
    return push(g, (item){(double)dur_ns, sm_fraction, ITEM_KERNEL, 0, 1});
}

uint64_t sim_gpu_copy(sim_gpu *g, double bytes, bool pinned)
{
    return push(g, (item){bytes, 0, ITEM_COPY, pinned, 0});
}

uint64_t sim_gpu_copy_d2h(sim_gpu *g, double bytes)
{
    return push(g, (item){bytes, 0, ITEM_COPY_D2H, 1, 0});
}

uint64_t sim_gpu_allreduce(sim_gpu *g, double bytes)
{
    return push(g, (item){bytes, 0, ITEM_ALLREDUCE, 0, 0});
}

uint64_t sim_gpu_allreduce_overlapped(sim_gpu *g, double bytes)
{
    return push(g, (item){bytes, 0, ITEM_ALLREDUCE, 0, 1});
}

uint64_t sim_gpu_queued(const sim_gpu *g)
{
    return g->enqueued - g->finished;
}

int sim_gpu_queue_depth(const sim_gpu *g)
{
    return g->cfg.launch_queue_depth;
}

uint64_t sim_gpu_enqueued(const sim_gpu *g)
{
    return g->enqueued;
}

void sim_gpu_notify(sim_gpu *g, uint64_t seq, uint32_t target, uint32_t kind)
{
    g->waiting = true;
    g->wait_seq = seq;
    g->wait_target = target;
    g->wait_kind = kind;
    check_waiter(g);
}
