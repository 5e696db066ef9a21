/* collective.c — the all-reduce every data-parallel step ends with (see pipeline.h).
 * All GPUs must join before any proceeds (it is a barrier), then a ring all-reduce moves
 * 2 (n - 1) / n of the buffer over each GPU's link: time = that / per-direction bus bandwidth. */
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
    double bus_bytes_per_ns;
    member *m;
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

sim_collective *sim_collective_create(sim_engine *e, int n_gpus, double bus_gbps)
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
    c->bus_bytes_per_ns = bus_gbps;
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
    double moved = c->n > 1 ? 2.0 * (c->n - 1) / c->n * c->bytes : 0;
    int64_t dur = c->bus_bytes_per_ns > 0 ? (int64_t)(moved / c->bus_bytes_per_ns) : 0;
    c->joined = 0;
    c->bytes = 0;
    sim_engine_after(c->e, dur, c->id, EV_REDUCED, 0);
}
