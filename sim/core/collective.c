/* collective.c — the all-reduce every data-parallel step ends with (see pipeline.h).
 * All GPUs must join before any proceeds (it is a barrier), then the reduction takes NCCL's
 * time for that size on the GPUs' ring (sim_topo_allreduce: latency + bytes / ring bandwidth). */
#include "sim/core/pipeline.h"

#include "sim/base/err.h"

#include <stdlib.h>

enum { EV_REDUCED };

typedef struct member {
    uint32_t reply_to, kind;
} member;

struct sim_collective {
    sim_engine *e;
    uint32_t id;
    int n;
    sim_ring ring;
    member *m;
    double busy_ns;
    int joined;
    double bytes;
};

static void handle(sim_engine *e, void *self, const sim_event *ev)
{
    (void)ev;
    sim_collective *c = self;
    for (int i = 0; i < c->n; i++)
        sim_engine_after(e, 0, c->m[i].reply_to, c->m[i].kind, 0);
}

static const sim_component_ops coll_ops = {.name = "collective", .handle = handle};

sim_collective *sim_collective_create(sim_engine *e, int n_gpus, const sim_ring *ring)
{
    sim_collective *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->m = calloc((size_t)n_gpus, sizeof *c->m);
    int id = c->m ? sim_engine_add(e, &coll_ops, c) : -1;
    if (id < 0) {
        free(c->m);
        free(c);
        return NULL;
    }
    c->e = e;
    c->id = (uint32_t)id;
    c->n = n_gpus;
    c->ring = *ring;
    return c;
}

void sim_collective_destroy(sim_collective *c)
{
    if (!c) return;
    free(c->m);
    free(c);
}

void sim_collective_join(sim_collective *c, int gpu, double bytes, uint32_t reply_to, uint32_t kind)
{
    c->m[gpu] = (member){reply_to, kind};
    if (bytes > c->bytes) c->bytes = bytes;
    if (++c->joined < c->n) return;
    sim_allreduce ar;
    sim_topo_allreduce(&c->ring, c->bytes, &ar);
    int64_t dur = (int64_t)(ar.time_us * 1e3);
    c->busy_ns += (double)dur;
    c->joined = 0;
    c->bytes = 0;
    sim_engine_after(c->e, dur, c->id, EV_REDUCED, 0);
}

double sim_collective_busy_ns(const sim_collective *c)
{
    return c->busy_ns;
}
