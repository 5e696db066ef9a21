/* gpu.c — one GPU's compute stream (see pipeline.h).
 * Items run strictly in order, as on one CUDA stream: a kernel occupies the GPU for its duration;
 * a copy occupies the stream while the host link moves it (pageable copies go through the
 * driver's staging buffer at the lower pageable rate); an all-reduce waits for every GPU. */
#include "sim/core/pipeline.h"

#include "sim/base/err.h"
#include "sim/core/metrics.h"

#include <stdlib.h>

enum { EV_KERNEL_DONE, EV_COPY_DONE, EV_COLL_DONE };
enum { ITEM_KERNEL, ITEM_COPY, ITEM_COPY_D2H, ITEM_ALLREDUCE };

typedef struct item {
    double amount; /* kernel: ns; copy and all-reduce: bytes */
    float sm_fraction;
    uint8_t type;
    uint8_t pinned;
} item;

struct sim_gpu {
    sim_engine *e;
    const bool *observed; /* sim_engine_observed */
    uint32_t id;
    sim_gpu_config cfg;
    item *ring;
    uint64_t cap; /* power of two */
    uint64_t enqueued, started, finished;
    bool running;
    bool waiting;
    uint64_t wait_seq;
    uint32_t wait_target, wait_kind;
    int64_t run_start_ns, link_end_ns; /* the running item: its start, its bytes off the link */
};

static void check_waiter(sim_gpu *g)
{
    if (g->waiting && g->finished >= g->wait_seq) {
        g->waiting = false;
        sim_engine_after(g->e, 0, g->wait_target, g->wait_kind, g->finished);
    }
}

static void start_next(sim_gpu *g)
{
    if (g->running || g->started == g->enqueued) {
        if (!g->running) sim_metrics_gpu(g->cfg.metrics, g->cfg.index, SIM_GPUST_IDLE, 0);
        return;
    }
    const item *it = &g->ring[g->started & (g->cap - 1)];
    g->started++;
    g->running = true;
    g->run_start_ns = g->link_end_ns = sim_engine_now(g->e);
    switch (it->type) {
    case ITEM_KERNEL:
        if (g->cfg.share) { /* the shared GPU says when it runs (and tells the metrics) */
            sim_gpushare_kernel(g->cfg.share, g->cfg.share_ctx, (int64_t)it->amount,
                                it->sm_fraction, g->id, EV_KERNEL_DONE);
            break;
        }
        sim_metrics_gpu(g->cfg.metrics, g->cfg.index, SIM_GPUST_KERNEL, it->sm_fraction);
        sim_engine_after(g->e, (int64_t)it->amount, g->id, EV_KERNEL_DONE, 0);
        break;
    case ITEM_COPY: {
        sim_metrics_gpu(g->cfg.metrics, g->cfg.index, SIM_GPUST_COPY, 0);
        /* Work on the link is in bytes at the pinned rate: a pageable copy costs more of it. */
        double work = it->amount * (it->pinned ? 1.0 : g->cfg.pageable_slowdown);
        sim_ps_submit(g->cfg.h2d, work + 1e-9, g->id, EV_COPY_DONE, 0);
        break;
    }
    case ITEM_COPY_D2H:
        sim_metrics_gpu(g->cfg.metrics, g->cfg.index, SIM_GPUST_COPY, 0);
        sim_ps_submit(g->cfg.d2h ? g->cfg.d2h : g->cfg.h2d, it->amount + 1e-9, g->id, EV_COPY_DONE,
                      0);
        break;
    case ITEM_ALLREDUCE:
        sim_metrics_gpu(g->cfg.metrics, g->cfg.index, SIM_GPUST_COLLECTIVE, 0);
        sim_collective_join(g->cfg.coll, g->cfg.index, it->amount, g->id, EV_COLL_DONE);
        break;
    }
}

static void handle(sim_engine *e, void *self, const sim_event *ev)
{
    sim_gpu *g = self;
    if (ev->kind == EV_COPY_DONE) g->link_end_ns = sim_engine_now(e);
    if (ev->kind == EV_COPY_DONE && g->cfg.copy_overhead_ns > 0) {
        /* The fixed per-copy cost (DMA setup, completion) follows the transfer. */
        sim_engine_after(e, (int64_t)g->cfg.copy_overhead_ns, g->id, EV_KERNEL_DONE, 0);
        return;
    }
    g->running = false;
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
    int id = g->ring ? sim_engine_add(e, &gpu_ops, g) : -1;
    if (id < 0) {
        free(g->ring);
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
    free(g);
}

static uint64_t push(sim_gpu *g, item it)
{
    if (g->enqueued - g->started == g->cap) {
        /* Grow the ring, keeping the not-yet-started items in order. */
        uint64_t cap = 2 * g->cap;
        item *r = malloc(cap * sizeof *r);
        if (!r) {
            sim_engine_fail(g->e, SIM_ENOMEM);
            return g->enqueued;
        }
        for (uint64_t s = g->started; s < g->enqueued; s++)
            r[s & (cap - 1)] = g->ring[s & (g->cap - 1)];
        free(g->ring);
        g->ring = r;
        g->cap = cap;
    }
    g->ring[g->enqueued & (g->cap - 1)] = it;
    g->enqueued++;
    start_next(g);
    return g->enqueued;
}

uint64_t sim_gpu_kernel(sim_gpu *g, int64_t dur_ns, float sm_fraction)
{
    return push(g, (item){(double)dur_ns, sm_fraction, ITEM_KERNEL, 0});
}

uint64_t sim_gpu_copy(sim_gpu *g, double bytes, bool pinned)
{
    return push(g, (item){bytes, 0, ITEM_COPY, pinned});
}

uint64_t sim_gpu_copy_d2h(sim_gpu *g, double bytes)
{
    return push(g, (item){bytes, 0, ITEM_COPY_D2H, 1});
}

uint64_t sim_gpu_allreduce(sim_gpu *g, double bytes)
{
    return push(g, (item){bytes, 0, ITEM_ALLREDUCE, 0});
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
