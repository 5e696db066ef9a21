/* engine.c — the event loop: pop the earliest event, hand it to its component; pass what the
 * components report on to the observer. */
#include "sim/core/engine.h"

#include "sim/base/err.h"

#include <stdlib.h>

typedef struct slot {
    const sim_component_ops *ops;
    void *self;
} slot;

struct sim_engine {
    sim_queue q;
    int64_t now_ns;
    slot *comps;
    uint32_t n_comps, cap_comps;
    uint64_t events;
    bool stopped;
    int error;
    const sim_observer_ops *obs;
    void *obs_ctx;
    bool observed; /* obs != NULL, read by components through sim_engine_observed */
};

sim_engine *sim_engine_create(void)
{
    sim_engine *e = calloc(1, sizeof *e);
    if (e) sim_queue_init(&e->q);
    return e;
}

void sim_engine_destroy(sim_engine *e)
{
    if (!e) return;
    sim_queue_fini(&e->q);
    free(e->comps);
    free(e);
}

int sim_engine_add(sim_engine *e, const sim_component_ops *ops, void *self)
{
    if (e->n_comps == e->cap_comps) {
        uint32_t cap = e->cap_comps ? 2 * e->cap_comps : 16;
        slot *c = realloc(e->comps, cap * sizeof *c);
        if (!c) return SIM_ENOMEM;
        e->comps = c;
        e->cap_comps = cap;
    }
    e->comps[e->n_comps] = (slot){ops, self};
    return (int)e->n_comps++;
}

int sim_engine_at(sim_engine *e, int64_t t_ns, uint32_t target, uint32_t kind, uint64_t a)
{
    SIM_ASSERT(t_ns >= e->now_ns);
    SIM_ASSERT(target < e->n_comps);
    int rc = sim_queue_push(&e->q, t_ns, target, kind, a);
    if (rc) sim_engine_fail(e, rc);
    return rc;
}

int sim_engine_after(sim_engine *e, int64_t delay_ns, uint32_t target, uint32_t kind, uint64_t a)
{
    SIM_ASSERT(delay_ns >= 0);
    return sim_engine_at(e, e->now_ns + delay_ns, target, kind, a);
}

int64_t sim_engine_now(const sim_engine *e)
{
    return e->now_ns;
}

int sim_engine_run_some(sim_engine *e, uint64_t max_events, bool *finished)
{
    sim_event ev;
    uint64_t end = max_events > UINT64_MAX - e->events ? UINT64_MAX : e->events + max_events;
    *finished = false;
    while (e->events < end) {
        if (e->stopped || sim_queue_pop(&e->q, &ev) != 0) {
            *finished = true;
            break;
        }
        e->now_ns = ev.t_ns;
        e->events++;
        const slot *s = &e->comps[ev.target];
        s->ops->handle(e, s->self, &ev);
    }
    return e->error;
}

int sim_engine_run(sim_engine *e)
{
    bool finished;
    return sim_engine_run_some(e, UINT64_MAX, &finished);
}

void sim_engine_stop(sim_engine *e)
{
    e->stopped = true;
}

void sim_engine_fail(sim_engine *e, int code)
{
    if (!e->error) e->error = code;
    e->stopped = true;
}

void sim_engine_set_observer(sim_engine *e, const sim_observer_ops *ops, void *ctx)
{
    e->obs = ops;
    e->obs_ctx = ctx;
    e->observed = ops != NULL;
}

const bool *sim_engine_observed(const sim_engine *e)
{
    return &e->observed;
}

void sim_engine_observe(const sim_engine *e, const sim_observation *o)
{
    if (e->obs) e->obs->observe(e->obs_ctx, e->now_ns, o);
}

uint64_t sim_engine_events(const sim_engine *e)
{
    return e->events;
}
